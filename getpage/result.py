"""FetchResult: what GetPage hands back for one URL.

Expected failures (timeouts, refused connections, robots denials, bodies
that are too large, blocked addresses, binary garbage) are values in
``error``, never exceptions, so the Controller's loop needs no ladder of
try/except.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FetchResult:
    url: str                       # the URL that was asked for
    final_url: str                 # after redirects ("" when nothing was fetched)
    status: int = 0                # HTTP status of the final response; 0 = no response
    headers: dict[str, str] = field(default_factory=dict)  # final response headers, lower-case names
    body: bytes = b""              # body after transfer/content decoding, at most max_bytes
    content_type: str = ""         # media type only, lower case, e.g. "text/html"
    encoding: str = ""             # charset used to decode ``text`` ("" when not decoded)
    text: str | None = None        # decoded body for HTML pages, None otherwise
    elapsed_ms: float = 0.0        # wall time of the fetch, including redirects
    error: str = ""                # "" on success; else "kind: detail", e.g. "timeout: read 10s"
    redirects: tuple[str, ...] = ()  # every URL visited before final_url, in order
    attempts: int = 1              # requests made for final_url (1 = no retry; also 1 when none was sent)
    # One per response received for this URL, redirect hops included, in
    # order; empty unless FetchConfig.record_exchanges (see Exchange).
    exchanges: tuple[Exchange, ...] = ()
    # The crawl stopped while this fetch waited for its host: no request
    # was sent for it (any redirect hops before are forgotten).
    cancelled: bool = False
    # A scheduled fetch (Fetcher.fetch(reserved=True)) that is not finished:
    # where it goes on, and not before when. Nothing else in it is final.
    pending: Continuation | None = None
    # The final response's X-Robots-Tag values, one per header line, in
    # order: a crawler's name at the start of a line ("otherbot: nofollow")
    # holds to the end of that line only, which one value per name cannot say.
    robots_tags: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.error and 200 <= self.status < 300

    @property
    def is_html(self) -> bool:
        return self.ok and self.text is not None


@dataclass(frozen=True)
class Ask:
    """What one fetch asks for beyond a page: a conditional GET of ``url``
    (``If-None-Match`` with ``etag``, ``If-Modified-Since`` with
    ``last_modified``, sent on the request for that URL only: validators
    belong to one resource, not to a redirect on the way to it), and the
    body of any of ``document_types`` (media types; an unlabelled body too)
    kept as bytes up to ``max_bytes`` (0: FetchConfig.max_bytes), not
    decoded as HTML.

    ``sink``: such a body is not kept but handed to ``sink`` chunk by chunk
    as it arrives (decoded from its Content-Encoding, at most 64 KiB each),
    so the caller can parse a large document in bounded memory; the result
    then has no body. The sink may raise ValueError to refuse the body: the
    fetch stops reading at once and comes back with the error "refused:
    <its message>". Once the sink has had a chunk, a failure is not retried
    (it could not take the chunks back).

    ``check_redirects=False``: the document is not a page of the crawl (a
    sitemap), so neither are its redirect targets: the Fetcher's
    ``redirect_check`` is not asked about them (the redirect limits and
    robots.txt still apply)."""

    url: str = ""
    etag: str = ""
    last_modified: str = ""
    document_types: frozenset[str] = frozenset()
    max_bytes: int = 0
    sink: Callable[[bytes], None] | None = None
    check_redirects: bool = True

    def headers_for(self, url: str) -> dict[str, str] | None:
        if url != self.url or not (self.etag or self.last_modified):
            return None
        headers = {"If-None-Match": self.etag} if self.etag else {}
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass(frozen=True)
class SentRequest:
    """A request head as it went on the wire (recorded only when asked:
    ``FetchConfig.record_exchanges``)."""

    method: str                           # "GET"
    target: str                           # request target as sent, e.g. "/a/b?c=1"
    version: str                          # "HTTP/1.1"
    headers: tuple[tuple[str, str], ...]  # (name, value) in the order sent, Host included
    ip_address: str = ""                  # the address connected to; "" if unknown
    sent_at: str = ""                     # UTC, ISO 8601 with microseconds, e.g. "2024-05-01T12:00:00.000001Z"


@dataclass(frozen=True)
class Exchange:
    """One HTTP request and the response it got, as they were on the wire:
    what a WARC request and response record hold.

    ``payload`` is the body as received after de-chunking and before content
    decoding (a gzip body stays gzip). When the response had no content
    coding, ``payload`` is the very bytes object that is ``FetchResult.body``.
    ``truncated`` says why ``payload`` is not the whole body, in the words of
    WARC-Truncated: "length" (the decoded body passed max_bytes; the payload
    holds what was read until then), "time" (the deadline passed),
    "disconnect" (the connection failed mid-body), "unspecified" (not read
    to the end because it was not wanted: a body that is not HTML, or a
    redirect or error body over the drain limit); "" when it is complete.
    """

    url: str                              # the URL requested
    request: SentRequest
    version: str                          # response's HTTP version, "HTTP/1.1" or "HTTP/1.0"
    status: int
    reason: str                           # reason phrase as sent by the server
    headers: tuple[tuple[str, str], ...]  # as received: raw names, order and duplicates kept
    payload: bytes = b""
    truncated: str = ""


@dataclass(frozen=True)
class Continuation:
    """Where an unfinished scheduled fetch goes on (see Fetcher.fetch).

    ``url`` is its next request: the page itself (after its robots.txt, or
    to retry it), or a redirect target, whose host the scheduler must
    reserve next. ``not_before`` is on the politeness gate's clock (None: as
    soon as that host is ready). The rest is the chain so far, carried back
    in on resume: opaque to the scheduler."""

    url: str
    not_before: float | None = None
    visited: tuple[str, ...] = ()
    exchanges: tuple[Exchange, ...] = ()
    attempts: int = 1               # the number of the next request for ``url``
    last_hop: object = None         # the redirect response that led to ``url``
    elapsed_ms: float = 0.0         # time spent in the fetch so far
    unchecked: bool = False         # a redirect to url not yet checked (a speculative fetch's)

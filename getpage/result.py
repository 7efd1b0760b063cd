"""FetchResult: what GetPage hands back for one URL.

Expected failures (timeouts, refused connections, robots denials, bodies
that are too large, blocked addresses, binary garbage) are values in
``error``, never exceptions, so the Controller's loop needs no ladder of
try/except.
"""
from __future__ import annotations

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

    @property
    def ok(self) -> bool:
        return not self.error and 200 <= self.status < 300

    @property
    def is_html(self) -> bool:
        return self.ok and self.text is not None

"""Extra request headers (``--header "Name: value"``) and which headers
carry secrets.

Owns the syntax a header line must have (RFC 9110: a token, a colon, a
value of visible characters, spaces and tabs), the headers that cannot be
given this way, and the one rule that says which header values are
secrets: those are sent only to the seeds' origins (as curl sends a
custom Authorization or Cookie header to the first host only) and are
written to no file (settings, stats, WARC records).
"""
from __future__ import annotations

import re

# RFC 9110 §5.1: field-name = token.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch
# RFC 9110 §5.5: visible characters, spaces and tabs (obs-text too).
_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*").fullmatch
# Headers that frame the message or name its target: a crawl of many hosts
# cannot send one fixed value of them, and urllib3 sets them itself.
REFUSED = frozenset({"host", "content-length", "transfer-encoding", "connection", "te",
                     "upgrade", "trailer"})
# Headers whose value is a credential by definition ...
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
# ... and words that mark a header name as holding one (X-Api-Key,
# X-Auth-Token, X-Session-Id, X-CSRF-Token ...).
_SECRET_WORDS = re.compile(r"auth|token|secret|key|passw|session|cookie|credential|signature",
                           re.IGNORECASE).search
REDACTED = "[redacted]"


def parse_header(line: str) -> tuple[str, str]:
    """(name, value) of a ``Name: value`` line, surrounding spaces of the value
    removed. Raises ValueError with a one-line reason for a malformed line."""
    name, colon, value = line.partition(":")
    if not colon:
        raise ValueError(f"--header {line!r} has no colon; write it as \"Name: value\", "
                         f"e.g. --header \"Accept-Language: de\"")
    if not _TOKEN(name):
        raise ValueError(f"--header {line!r}: {name!r} is not a header name (letters, digits "
                         f"and !#$%&'*+-.^_`|~, no spaces before the colon)")
    value = value.strip(" \t")
    if not _VALUE(value):
        raise ValueError(f"--header {line!r}: the value holds a line break or another control "
                         f"character; a header is one line")
    if name.lower() in REFUSED:
        raise ValueError(f"--header {name}: the crawler sets {name} itself for each request; "
                         f"it cannot be given")
    return name, value


def is_secret_header(name: str) -> bool:
    """True for a header whose value is a secret: Authorization,
    Proxy-Authorization, Cookie, and any name with auth, token, secret, key,
    passw(ord), session, cookie, credential or signature in it."""
    return name.lower() in CREDENTIAL_HEADERS or _SECRET_WORDS(name) is not None


def redacted_request(headers) -> list[tuple[str, str]]:
    """Request ``headers`` ((name, value) pairs) with every secret value
    replaced by REDACTED."""
    return [(name, REDACTED if is_secret_header(name) else value) for name, value in headers]


def redacted_response(headers) -> list[tuple[str, str]]:
    """Response ``headers`` with the values of Set-Cookie (the cookies a
    server hands out, a login's session among them) replaced by REDACTED;
    the other response headers are the server's own and stay as they are."""
    return [(name, REDACTED if name.lower() in _SET_COOKIE else value) for name, value in headers]


_SET_COOKIE = frozenset({"set-cookie", "set-cookie2"})

"""When a failed request is worth another try, and how long to wait first.

Owns the list of transient failures, the exponential backoff with full
jitter, and the reading of a server's Retry-After header (RFC 9110
§10.2.3). Pure: the random source and the current time are arguments.

Transient: a connection that was refused, reset or closed early, a
timeout, HTTP 429 and every 5xx. Not transient: a host name that does not
resolve, a TLS failure (a certificate that cannot be verified among them) or a body in a broken content encoding (trying
again gives the same answer), every other 4xx, and every refusal made on
this side (robots, redirects, size caps, blocked addresses, garbage).
"""
from __future__ import annotations

import email.utils
import random
from datetime import timezone

# Connection failures that a second try would only repeat. The texts are
# the ones ``Fetcher._describe`` gives these failures.
NOT_TRANSIENT = frozenset({
    "connection: host name not resolved",
    "connection: TLS failure",
    "connection: bad content encoding",
})
# ... and those that say why after this start.
NOT_TRANSIENT_STARTS = ("connection: certificate verify failed",)
# Statuses whose Retry-After says when to come back (RFC 9110 §10.2.3).
RETRY_AFTER_STATUSES = frozenset({429, 503})


def is_transient(error: str, status: int) -> bool:
    """Is the failure ``error`` ("kind: detail") of a response with
    ``status`` (0 = none) worth another try?"""
    kind = error.partition(":")[0]
    if kind == "timeout":
        return True
    if kind == "connection":
        return error not in NOT_TRANSIENT and not error.startswith(NOT_TRANSIENT_STARTS)
    if kind == "http":
        return status == 429 or status >= 500
    return False


def backoff_wait(attempt: int, base: float, rng: random.Random) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1, 2, ...):
    uniform in [0, base * 2**(attempt - 1)] ("full jitter"), so that
    workers that failed together do not all come back together."""
    return rng.uniform(0, base * 2 ** (attempt - 1))


def retry_after(status: int, headers: dict[str, str], now: float) -> float | None:
    """Seconds the server asked us to wait, or None if it did not ask.

    Only 429 and 503 carry the header with that meaning. The value is
    delta-seconds or an HTTP-date; a date in the past means 0, and an
    unreadable value counts as no value. ``headers`` has lower-case names;
    ``now`` is the current time as a Unix timestamp.
    """
    value = headers.get("retry-after", "").strip()
    if status not in RETRY_AFTER_STATUSES or not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" zones come back naive; HTTP dates are UTC
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now)

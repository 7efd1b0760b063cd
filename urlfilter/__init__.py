"""URL_Filter: turns links into canonical URLs and decides which may be enqueued.

Owns URL normalization (``normalize``), the scope and filter rules
(``UrlRules``) and the URL-seen structures (``make_seen`` and the
``SEEN_ALGORITHMS`` registry), where the design paper puts dedup.  Pure: no
sockets, no imports from the other crawler packages, and no files but the
sieve's own (``sieve.py``: the default URL-seen set, which spills to a
directory it is given).
"""
from urlfilter.normalize import check_drop_param, document_base, normalize
from urlfilter.rules import DEFAULT_DENY_EXTENSIONS, SCOPES, UrlRules
from urlfilter.seen import SEEN_ALGORITHMS, UrlSeen, make_seen
from urlfilter.seencache import SeenCache
from urlfilter.traps import TrapGuard

__all__ = ["document_base", "DEFAULT_DENY_EXTENSIONS", "SCOPES", "SEEN_ALGORITHMS", "SeenCache", "TrapGuard", "UrlRules", "UrlSeen",
           "check_drop_param", "make_seen", "normalize"]

"""GetPage: the only package that touches the network.

``Fetcher.fetch(url) -> FetchResult`` checks robots.txt, waits for the
host's politeness gate, GETs the page (connecting only to allowed
addresses, retrying transient failures), follows redirects, reads and
decodes HTML bodies within size and time limits, refuses binary garbage,
and reports every expected failure as a value in ``FetchResult.error``.
When asked (``FetchConfig.record_exchanges``), it also keeps every HTTP
exchange as it was on the wire (``Exchange``), for WARC output.
"""
from .addresses import ADDRESS_CATEGORIES, address_categories, address_category, resolve_host
from .charset import decode_html
from .fetch import FetchConfig, Fetcher
from .politeness import PolitenessGate, host_key
from .result import Ask, Continuation, Exchange, FetchResult, SentRequest
from .robots import RobotsCache, RobotsRules, parse_robots, product_token

__all__ = [
    "ADDRESS_CATEGORIES",
    "Ask",
    "Continuation",
    "Exchange",
    "FetchConfig",
    "FetchResult",
    "Fetcher",
    "PolitenessGate",
    "RobotsCache",
    "RobotsRules",
    "SentRequest",
    "address_categories",
    "address_category",
    "decode_html",
    "host_key",
    "parse_robots",
    "product_token",
    "resolve_host",
]

"""GetPage: the only package that touches the network.

``Fetcher.fetch(url) -> FetchResult`` checks robots.txt, waits for the
host's politeness gate, GETs the page, follows redirects, reads and
decodes HTML bodies within size and time limits, and reports every
expected failure as a value in ``FetchResult.error``.
"""
from .charset import decode_html
from .fetch import FetchConfig, Fetcher
from .politeness import PolitenessGate, host_key
from .result import FetchResult
from .robots import RobotsCache, RobotsRules, parse_robots, product_token

__all__ = [
    "FetchConfig",
    "FetchResult",
    "Fetcher",
    "PolitenessGate",
    "RobotsCache",
    "RobotsRules",
    "decode_html",
    "host_key",
    "parse_robots",
    "product_token",
]

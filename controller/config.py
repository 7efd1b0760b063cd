"""CrawlConfig: every setting of one crawl, validated once, passed explicitly."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

VERSION = "0.1.0"
PRODUCT = "bfs-crawler"
ABOUT_URL = "https://pypi.org/project/bfs-crawler/"
DEFAULT_USER_AGENT = f"{PRODUCT}/{VERSION} (+{ABOUT_URL})"


def default_processes() -> int:
    """One parser process per core but one: the Controller process (fetch threads,
    frontier, seen-set, files) keeps a core busy itself. Measured on 2 cores:
    1 parser process beat 2 in both pages/s and CPU per page."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass(frozen=True)
class CrawlConfig:
    seeds: tuple[str, ...]            # normalized http(s) URLs, level 0
    out: Path                         # output directory
    max_depth: int = 3                # deepest level fetched; 0 = no limit
    max_pages: int = 1000             # URLs fetched at most; 0 = no limit
    max_seconds: float = 0            # wall-clock budget; 0 = no limit
    workers: int = 8                  # fetching threads
    processes: int = field(default_factory=lambda: default_processes())  # parser processes; 0 = parse in the fetch threads
    per_host: int = 1                 # requests in flight per host
    delay: float = 1.0                # seconds between two requests to one host
    timeout: float = 10.0             # seconds per request (connect and whole body)
    max_bytes: int = 10_000_000       # decoded body cap per page, bytes
    max_redirects: int = 10
    user_agent: str = DEFAULT_USER_AGENT
    obey_robots: bool = True
    scope: str = "host"               # host | domain | any
    include: tuple[str, ...] = ()     # regexes; a URL must match one (if any given)
    exclude: tuple[str, ...] = ()     # regexes; a URL matching one is skipped
    max_url_length: int = 2048        # characters; longer URLs are skipped (traps); 0 = no limit
    max_path_repeats: int = 2         # a run of path segments repeated back to back more often is a trap; 0 = no limit
    max_pages_per_host: int = 0       # URLs queued per host at most; 0 = no limit
    max_query_variants: int = 100     # distinct query strings per path at most; 0 = no limit
    dedup: str = "stringhash"         # URL-seen algorithm, see urlfilter.SEEN_ALGORITHMS
    seen_cache: int = 16_384          # recently seen URLs answered before the dedup structure; 0 = off
    bloom_capacity: int = 1_000_000   # expected URLs, for --dedup bloom
    bloom_error: float = 1e-3         # target false-positive rate, for --dedup bloom
    extractor: str = "lxml"           # page reader: lxml (fast), bs4 (reference), regex (paper's links)
    fold_www: bool = False            # treat www.host and host as one
    drop_query: bool = False          # drop every query string before dedup
    drop_params: tuple[str, ...] = () # query parameter names (globs) dropped before dedup, e.g. utm_*
    retries: int = 2                  # extra attempts after connection errors, timeouts, 429 and 5xx
    retry_backoff: float = 0.5        # seconds; attempt n waits up to backoff * 2**n (full jitter)
    max_retry_after: float = 30.0     # seconds; a longer Retry-After gives up instead of waiting
    allow_private: bool = False       # follow links to private/loopback addresses even from public seeds
    content_dedup: str = "exact"      # off | exact | near: which duplicate pages are recognised
    simhash_distance: int = 5         # Hamming distance at most this = near duplicate (see experiments/README.md)
    text_mode: str = "plain"          # plain: all visible text; main: the main content block only
    extract: tuple[str, ...] = ()     # NAME=css:SELECTOR or NAME=xpath:EXPR, see textfilter.extract
    extract_from: str = ""            # regex; extract only from pages whose URL matches ("" = all)
    extract_exclude: tuple[str, ...] = ()  # css:/xpath: selectors of sub-nodes dropped before extracting
    extract_jsonl: bool = False       # also write extracted.jsonl (exact lists of matches)
    warc: bool = False                # also write crawl.warc.gz (request/response records)
    progress: bool = True             # print level summaries to stderr while crawling

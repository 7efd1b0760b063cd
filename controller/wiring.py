"""Wiring: each crawl component built from CrawlConfig, in one place.

The Controller asks here for its URL_Filter rules, URL-seen structure, trap
guard, politeness state, GetPage, frontier, digester and content memory,
so which setting goes to which module is written down once (and a new
frontier, a Redis one, is chosen here, not in the loop). The crawl's mode
is chosen here too: which admission and which commit the loop is given.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.admission import Admission, SharedAdmission
from controller.commit import Commit, OrderedCommit, SharedCommit

from controller.config import AUTO_DELAY, CrawlConfig, fixed_delay, order_params, request_headers
from controller.resume import finished_crawl
from controller.digest import Digester
from controller.resume import STATE_DIR
from getpage import (ADDRESS_CATEGORIES, FetchConfig, Fetcher, PolitenessGate, address_categories,
                     host_key, product_token)
from getpage.pacing import AdaptivePolicy, FixedPolicy
from getpage.politeness import Cancelled
from getpage.robots import origin_of
from textfilter.duplicates import ContentSeen
from urlfilter import SeenCache, TrapGuard, UrlRules, make_seen
from urllist import HostFrontier
from urllist.diskqueues import DiskQueues
from urllist.ordered import OrderedFrontier
from urllist.orders import make_order

if TYPE_CHECKING:
    from textfilter.extract import Extraction
    from textfilter.relevance import Topic

# A shared crawl's worker: its committed rows on their way to index.csv
# (urllist.redisqueue.WriteAhead).
AHEAD_FILE = "rows-ahead.log"
# Pages of the next level fetched while the open one is still being
# processed (parked until it closes), per fetch thread, at most: enough
# for 150 hosts at one page per 0.5 s to cross a level barrier unstalled
# (tests/test_host_frontier.py), and a bounded memory (a parked page holds
# its body until it is recorded).
AHEAD_PER_WORKER = 32
# URLs fetched before they are queued (controller/speculation.py), per fetch
# thread, at most: 8 (64 for the default 8 threads) took the simulated
# 40-site crawl of tests/test_host_frontier.py from 0.74 to 0.99 of what
# politeness allows; each holds one response in memory until it is queued.
SPECULATE_PER_WORKER = 8
# Seconds before its time a host is handed out, its request then held at
# the socket until the time (getpage.PolitenessGate): the loop waking, the
# thread taking the URL and the request being built (~1 ms a request here,
# more on a busy machine) then come before the send instead of being added
# to every interval. A fetch thread waits at most this long.
HAND_OUT_LEAD = 0.003


@dataclass(frozen=True)
class Mode:
    """What makes one kind of crawl differ from another, for the loop: its
    admission and its commit, each built with the crawl (``admission(crawl)``),
    what resuming it gives once it is finished (``finished(config)``:
    its stats, so that nothing is done; None: it goes on), and the ids of
    rows a stopped run left that may still be committed (``pending(config)``:
    their pages' files are kept until the commit knows)."""
    admission: Callable
    commit: Callable
    finished: Callable = finished_crawl
    pending: Callable = lambda config: frozenset()   # one machine's rows are all in index.csv


def rows_ahead(config: CrawlConfig) -> frozenset:
    """A shared crawl's worker: the rows in its write-ahead file, which Redis
    may have committed (the worker writes those when it joins)."""
    from urllist.redisqueue import WriteAhead
    return frozenset(WriteAhead(config.out / STATE_DIR / AHEAD_FILE).read())


def goes_on(config: CrawlConfig) -> None:
    """A shared crawl's worker asks Redis, not its files, whether the crawl
    is finished; a recrawl revisits a finished crawl."""
    return None


def mode(config: CrawlConfig, shared=None) -> Mode:
    """One machine breadth-first, one machine in another --order, or one
    worker of a crawl in Redis. A recrawl pass brings its own
    (controller/revisits.py)."""
    if shared is not None:
        return Mode(SharedAdmission, SharedCommit, finished=goes_on, pending=rows_ahead)
    if config.order != "bfs":
        return Mode(Admission, OrderedCommit)
    return Mode(Admission, Commit)


def url_rules(config: CrawlConfig) -> UrlRules:
    return UrlRules.from_seeds(config.seeds, config.scope, config.include, config.exclude,
                               config.max_url_length, config.max_path_repeats)


def trap_guard(config: CrawlConfig) -> TrapGuard:
    return TrapGuard(config.max_pages_per_host, config.max_query_variants, host_of=host_key,
                     max_pattern_depth=config.max_pattern_depth)


def url_seen(config: CrawlConfig, shared=None):
    if shared is not None:
        from controller.shared import RedisSeen
        return RedisSeen()
    # The sieve's file is rebuilt, not resumed: a new one starts empty and
    # the engine adds the journaled URLs again (urlfilter/sieve.py).
    seen = make_seen(config.dedup, capacity=config.bloom_capacity, error_rate=config.bloom_error,
                     directory=config.out / STATE_DIR / "seen")
    return SeenCache(seen, config.seen_cache) if config.seen_cache else seen


def politeness(config: CrawlConfig, shared=None):
    """The one politeness state: the frontier asks it who is ready, GetPage
    obeys it. In a shared crawl it is in Redis, one for every worker."""
    if shared is not None:
        from urllist.redisqueue import RedisGate
        return RedisGate(shared.crawl, shared.worker, Cancelled, pacing_policy(config))
    return PolitenessGate(fixed_delay(config), config.per_host, policy=pacing_policy(config),
                          lead=HAND_OUT_LEAD)


def pacing_policy(config: CrawlConfig) -> FixedPolicy:
    """What sets each host's interval: the fixed --delay, or --delay auto's policy."""
    if config.delay == AUTO_DELAY:
        return AdaptivePolicy(config.min_delay, config.max_delay, config.per_host)
    return FixedPolicy(config.delay, config.per_host)


def fetcher(config: CrawlConfig, gate: PolitenessGate,
            redirect_check: Callable[[str], str | None], shared=None) -> Fetcher:
    store = None
    if shared is not None:
        from urllist.redisqueue import RobotsStore
        store = RobotsStore(shared.crawl, shared.worker)
    return Fetcher(fetch_config(config), redirect_check=redirect_check, gate=gate,
                   robots_store=store)


def frontier(config: CrawlConfig, gate: PolitenessGate, shared=None, sync_rows=None,
             wake=None, speculation=None):
    """``wake``: what a shared crawl's frontier calls, from its own thread,
    when Redis says a URL may be there for it (the loop then pops again);
    ``speculation``: what it calls, on the loop's thread, with the URLs
    given to this worker because it claimed them (the ids the crawl's
    speculation takes over), and with the URLs whose claim Redis refused."""
    if shared is not None:
        from urllist.redisqueue import RedisFrontier
        queue = RedisFrontier(shared.crawl, gate, config.workers, sync_rows, wake=wake,
                              ahead_path=config.out / STATE_DIR / AHEAD_FILE,
                              max_ahead=AHEAD_PER_WORKER * config.workers, delay=fixed_delay(config))
        if speculation is not None:
            queue.adopt, queue.refused = speculation
        return queue
    if config.order != "bfs":
        order = make_order(config.order, order_params(config))
        # Under a page budget the order decides what is in it, so every fetch
        # is among the --workers best; without one every page is fetched
        # anyway, and a free host never waits (what the window costs in time:
        # benchmarks/RESULTS.md, "Crawl orders: the window").
        window = config.workers if config.max_pages else 0
        frontier = OrderedFrontier(host_key, gate, order, config.max_depth, window)
        order.bind(frontier)
        return frontier
    storage = DiskQueues(config.out / STATE_DIR, ram_bytes=config.frontier_ram << 20)
    return HostFrontier(host_key, gate, max_ahead=AHEAD_PER_WORKER * config.workers,
                        storage=storage)


def digester(config: CrawlConfig, rules: UrlRules) -> Digester:
    return Digester(config.out, rules, config.extractor, config.fold_www, config.drop_query,
                    config.drop_params, config.text_mode, near=config.content_dedup == "near",
                    extraction=extraction(config), topic=topic(config),
                    robots_token=product_token(config.user_agent) if config.obey_robots else "")


def topic(config: CrawlConfig) -> Topic | None:
    """What the focused orders score pages and anchors against (TF-IDF)."""
    if not config.topic.strip():
        return None
    from textfilter.relevance import Topic   # loaded only for --topic
    return Topic.from_text(config.topic)


def content_seen(config: CrawlConfig) -> ContentSeen | None:
    if config.content_dedup == "off":
        return None
    return ContentSeen(config.content_dedup == "near", config.simhash_distance)


def extraction(config: CrawlConfig) -> Extraction | None:
    if not config.extract:
        return None
    from textfilter.extract import Extraction   # lxml.html, cssselect: loaded only for --extract
    return Extraction.from_specs(config.extract, config.extract_exclude, config.extract_from)


def fetch_config(config: CrawlConfig) -> FetchConfig:
    return FetchConfig(user_agent=config.user_agent, timeout=config.timeout,
                       max_redirects=config.max_redirects, max_bytes=config.max_bytes,
                       delay=fixed_delay(config), per_host=config.per_host,
                       obey_robots=config.obey_robots, retries=config.retries,
                       retry_backoff=config.retry_backoff, max_retry_after=config.max_retry_after,
                       allowed_addresses=allowed_addresses(config), record_exchanges=config.warc,
                       **identity_settings(config), **proxy_and_tls(config))


def identity_settings(config: CrawlConfig) -> dict:
    """The FetchConfig fields of --header, the cookies and the login. Secret
    headers and credentials go to the seeds' origins only."""
    return {"headers": request_headers(config), "cookies": config.cookies,
            "cookie_file": config.load_cookies, "http_user": config.http_user,
            "http_password": config.http_password, "auth_no_challenge": config.auth_no_challenge,
            "credential_origins": frozenset(origin_of(seed) for seed in config.seeds)}


def proxy_and_tls(config: CrawlConfig) -> dict:
    """The FetchConfig settings of --proxy, --no-proxy, --ca-certificate and
    --no-check-certificate (the environment is read by the Fetcher)."""
    return {"proxy": config.proxy, "no_proxy": config.no_proxy,
            "ca_certificate": config.ca_certificate,
            "check_certificate": not config.no_check_certificate}


def allowed_addresses(config: CrawlConfig) -> frozenset[str]:
    """Public addresses, plus the kinds the seeds themselves are on: a crawl of a
    site on 127.0.0.1 must reach loopback, but a crawl of a public site must
    never be steered into the user's LAN or a cloud metadata endpoint."""
    if config.allow_private:
        return frozenset(ADDRESS_CATEGORIES)
    return frozenset({"public"}) | address_categories(config.seeds)

"""A crawl shared by many workers through Redis: creating it, joining it.

``crawler crawl SEED... --redis URL --crawl-id NAME`` checks the settings
(CrawlConfig, as for any crawl), stores them and the seeds in Redis, and
works on the crawl as its first worker; ``crawler worker`` joins it from
any machine with the settings found there, so no worker can crawl by
rules of its own. Each worker writes its own output directory (global ids,
its own pages); ``crawler merge`` makes one directory of them.
"""
from __future__ import annotations

import secrets
import socket
from dataclasses import dataclass, fields, replace
from pathlib import Path

from controller.admission import trap_keys
from controller.config import CrawlConfig, fixed_delay, order_params
from controller.resume import STATE_DIR, settings_of

# Settings that say how one worker runs, not which URLs the crawl has. The
# network ones too: each worker reaches the web from its own machine, with
# its own proxy environment (a proxy's password never goes to Redis).
WORKER_OWN = ("out", "workers", "processes", "progress",
              "proxy", "no_proxy", "ca_certificate", "no_check_certificate")

# Settings of a crawl on one machine that a shared crawl has no use for, and
# what does their job there: `crawl --redis` refuses them given explicitly,
# and a worker's stats.json names them (settings_not_used).
SEEN_IN_REDIS = "its URL-seen set is the 64-bit fingerprint set in Redis, shared by every worker"
SINGLE_NODE_ONLY = {
    "dedup": SEEN_IN_REDIS, "bloom_capacity": SEEN_IN_REDIS, "bloom_error": SEEN_IN_REDIS,
    "seen_cache": "a link is looked up in Redis's seen-set with its page's acknowledgement, "
                  "unless the worker saw Redis judge it (its own cache of the last 16,384, "
                  "not this option)",
    "frontier_ram": "its queue is in Redis (bounded by Redis's memory, not this option)",
}


class RedisSeen:
    """A shared crawl's URL-seen set as stats.json names it. Redis answers
    a page's links in its acknowledgement (the frontier keeps only the
    fingerprints it has seen Redis judge), and nothing asks this one."""

    def stats(self) -> dict:
        return {"algorithm": "redis", "fingerprint_bits": 64}


@dataclass(frozen=True)
class Shared:
    """What a worker needs to take part: the crawl's keys and its own id."""
    crawl: object        # urllist.redisqueue.SharedCrawl
    worker: str


def shared_crawl(redis_urls: str | tuple[str, ...], crawl_id: str):
    """The SharedCrawl for ``crawl_id`` over this server or these (or the
    cluster of one node's URL); RedisStateError if Redis will not do."""
    from urllist.redisqueue import shared_over
    return shared_over((redis_urls,) if isinstance(redis_urls, str) else redis_urls, crawl_id)


def create(crawl, config: CrawlConfig, lease_seconds: float | None = None) -> bool:
    """Store a new crawl; False if one with this id exists."""
    from urllist.redisqueue import LEASE_SECONDS
    seeds = [(seed, *trap_keys(seed)) for seed in config.seeds]
    return crawl.create(settings_of(config), seeds,
                        delay=fixed_delay(config), per_host=config.per_host, max_pages=config.max_pages,
                        host_cap=config.max_pages_per_host, query_cap=config.max_query_variants,
                        lease_seconds=lease_seconds or LEASE_SECONDS,
                        pattern_cap=config.max_pattern_depth, order=order_constants(config))


def order_constants(config: CrawlConfig) -> tuple[int, float, float, int, float, int] | None:
    """Another --order than bfs: what its Redis needs of it (2: with
    --max-depth, which keeps each page's links for the closure, else 1;
    Order.shared_constants, Order.shared_draws)."""
    if config.order == "bfs":
        return None
    from urllist.orders import make_order
    order = make_order(config.order, order_params(config))
    return (2 if config.max_depth else 1, *order.shared_constants(), *order.shared_draws())


def worker_config(settings: dict, out: Path, **own) -> CrawlConfig:
    """The crawl's settings from Redis, with this worker's own out, threads,
    processes and display."""
    known = {f.name for f in fields(CrawlConfig)}
    values = {name: tuple(value) if isinstance(value, list) else value
              for name, value in settings.items() if name in known and name not in WORKER_OWN}
    config = CrawlConfig(out=out, **values)
    return replace(config, **{name: value for name, value in own.items() if value is not None})


WORKER_ID_FILE = "worker-id"   # in the worker's state/ directory


def default_worker_id(out: Path) -> str:
    """The id this output directory's worker had (kept in state/worker-id),
    so a restarted worker gives back what it held at once; else a new one,
    the host name and random digits (two machines may share a host name
    and a path)."""
    try:
        return (Path(out) / STATE_DIR / WORKER_ID_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return f"{socket.gethostname()}-{secrets.token_hex(4)}"


def announce(shared: Shared, out: Path) -> None:
    """Record in Redis where this worker writes (its host name and absolute
    output directory), for `crawler status` and whoever merges the crawl."""
    shared.crawl.record_place(shared.worker, socket.gethostname(), str(Path(out).resolve()))


def worker_stats(shared: Shared) -> dict:
    """stats.json's "shared": whose counts these are, and the settings a
    worker does not use."""
    return {"crawl_id": shared.crawl.crawl_id, "worker": shared.worker,
            "counts": "this worker's share of the crawl",
            "settings_not_used": sorted(SINGLE_NODE_ONLY)}


def in_force_shared(shared: Shared, config: CrawlConfig) -> str:
    """The start line of a shared crawl's worker: what runs differently
    from a crawl of one machine."""
    parts = ["URL-seen set: 64-bit fingerprints in Redis (no --dedup)"]
    if shared.crawl.count > 1:
        parts.append(f"partitioned by host over {shared.crawl.count} partitions")
    if config.max_pages:
        parts.append(f"--max-pages {config.max_pages} for all workers together")
    if config.max_seconds:
        parts.append(f"--max-seconds {config.max_seconds:g} for this worker")
    if config.content_dedup == "near":
        parts.append("near duplicates among this worker's pages only")
    return (f"worker {shared.worker} of shared crawl {shared.crawl.crawl_id} at "
            f"{shared.crawl.address()}: " + ", ".join(parts))

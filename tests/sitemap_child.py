"""Run by test_sitemap_hostile.py in a process of its own, so that nothing
else blurs its peak memory: gathers the sitemaps named in argv[1] (JSON:
"sitemaps", "warmup", "scope_seed", and "ballast_mb" to hold that much
meanwhile) through a real Fetcher, and prints as
JSON what came of it and how far the peak resident set grew past what it
was just before (kB).

The peak is reset right before (Linux: "5" to /proc/self/clear_refs resets
VmHWM to the current resident set), after one warm-up gathering has loaded
every module and opened the connection pool.
"""
from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from getpage_stub import local_config  # noqa: E402

from controller.sitemaps import gather  # noqa: E402
from getpage import Fetcher  # noqa: E402
from urlfilter.rules import UrlRules  # noqa: E402


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak() -> int:
    """The resident set now, kB, with the peak reset to it if the kernel allows."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # the peak so far stands
    return _status("VmRSS")


def peak() -> int:
    try:
        return _status("VmHWM")
    except (OSError, KeyError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    job = json.loads(sys.argv[1])
    scope = UrlRules.from_seeds([job["scope_seed"]], exclude=["/private/"]).reject_reason
    config = local_config("BfsBot/0.1", delay=0, timeout=60, record_exchanges=job.get("record", False))
    with Fetcher(config) as fetcher:
        gather(fetcher, [], [job["warmup"]], scope)
        before = reset_peak()
        ballast = b"x" * (job.get("ballast_mb", 0) << 20)   # the instrument's own check: memory it must see
        gathered = gather(fetcher, [], job["sitemaps"], scope)
        growth = peak() - before
        del ballast
    print(json.dumps({"urls": len(gathered.urls), "problems": list(gathered.problems),
                      "dropped": gathered.dropped, "growth_kb": growth}))


if __name__ == "__main__":
    main()

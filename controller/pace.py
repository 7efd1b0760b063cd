"""What set the pace: per host, which rule governed its interval and how
often, summed up for stats.json ("pace"), the progress lines, the end
summary and `crawler report`.

The gate counts, per host, the requests started under each governor
(getpage/pacing.py GOVERNORS: the fixed delay, robots.txt's Crawl-delay,
a backoff after overload answers, --min-delay, --max-delay, the adaptive
interval). Here those counts become a few words: a crawl of one host
names its interval; one of thousands names how many hosts each rule
governed and the range of their intervals, and stats.json keeps the
TOP_HOSTS busiest hosts' own lines.
"""
from __future__ import annotations

TOP_HOSTS = 20

_WORDS = {
    "delay": "the fixed delay",
    "crawl-delay": "robots.txt's Crawl-delay",
    "backoff": "backoff after overload answers (429/503/timeouts)",
    "min-delay": "--min-delay",
    "max-delay": "--max-delay",
    "adaptive": "adaptive",
}


def summary(paces: dict[str, dict], policy: str) -> dict:
    """stats.json's "pace": ``paces`` is the gate's (host -> its record)."""
    governors: dict[str, dict] = {}
    for record in paces.values():
        for governor, count in record["paced"].items():
            entry = governors.setdefault(governor, {"hosts": 0, "requests": 0, "intervals": []})
            entry["requests"] += count
        main = _main_governor(record)
        if main:
            entry = governors[main]
            entry["hosts"] += 1
            entry["intervals"].append(record["crawl_delay"] if main == "crawl-delay"
                                      else record["interval"])
    for entry in governors.values():
        intervals = entry.pop("intervals")
        entry["interval_range"] = [min(intervals), max(intervals)] if intervals else []
    busiest = sorted(paces.items(), key=lambda item: -sum(item[1]["paced"].values()))[:TOP_HOSTS]
    return {"policy": policy, "hosts": len(paces),
            "governors": dict(sorted(governors.items(), key=lambda item: -item[1]["requests"])),
            "busiest": [{"host": host, "governed_by": _main_governor(record), **record}
                        for host, record in busiest],
            "held_off": sum(record["held_off"] for record in paces.values())}


def _main_governor(record: dict) -> str:
    paced = record["paced"]
    return max(paced, key=paced.get) if paced else ""


def text(pace: dict) -> str:
    """The pace in one line: what governed how many requests on how many
    hosts, at which intervals; "" before any request."""
    parts = []
    for governor, entry in pace["governors"].items():
        hosts = entry["hosts"]
        where = f" on {hosts} host{'s' if hosts != 1 else ''}" if hosts else ""
        requests = entry["requests"]
        parts.append(f"{_WORDS.get(governor, governor)}{_interval(entry['interval_range'])} "
                     f"for {requests} request{'s' if requests != 1 else ''}{where}")
    if not parts:
        return ""
    held = pace.get("held_off", 0)
    tail = f"; Retry-After held a host off {held} times" if held else ""
    return f"pace ({pace['policy']}): " + ", ".join(parts) + tail


def _interval(bounds: list) -> str:
    if not bounds:
        return ""
    low, high = bounds
    if high - low < 0.0005:
        return f" ({low:.3g} s)"
    return f" ({low:.3g}-{high:.3g} s)"


def crawl_delay_note(paces: dict[str, dict], said: set[str]) -> list[str]:
    """Lines for the hosts whose robots.txt Crawl-delay governs their pace
    and that were not yet named in ``said`` (named now), as soon as it is
    known: a crawl slowed by a site's own rule says so at once."""
    lines = []
    for host, record in paces.items():
        if host not in said and record["crawl_delay"] and record["crawl_delay"] >= record["interval"]:
            said.add(host)
            delay = record["crawl_delay"]
            lines.append(f"pace: robots.txt of {host} asks Crawl-delay {delay:g} s: "
                         f"at most {1 / delay:.3g} requests/s to it")
    return lines


def merged(paces: list[dict]) -> dict:
    """Several workers' "pace" (a shared crawl's, `crawler merge`) as one:
    requests and hold-offs added up, interval ranges joined, a host's lines
    added up; the workers share their hosts, so a count of hosts is the
    largest worker's (a host is counted once, not once a worker)."""
    if not paces:
        return {}
    governors: dict[str, dict] = {}
    for pace in paces:
        for governor, entry in pace["governors"].items():
            into = governors.setdefault(governor, {"hosts": 0, "requests": 0, "interval_range": []})
            into["hosts"] = max(into["hosts"], entry["hosts"])
            into["requests"] += entry["requests"]
            into["interval_range"] = _joined(into["interval_range"], entry["interval_range"])
    hosts: dict[str, dict] = {}
    for pace in paces:
        for line in pace["busiest"]:
            into = hosts.setdefault(line["host"], {**line, "paced": {}, "held_off": 0})
            for governor, count in line["paced"].items():
                into["paced"][governor] = into["paced"].get(governor, 0) + count
            into["held_off"] += line["held_off"]
    busiest = sorted(hosts.values(), key=lambda line: -sum(line["paced"].values()))[:TOP_HOSTS]
    return {"policy": paces[0]["policy"], "hosts": max(pace["hosts"] for pace in paces),
            "governors": dict(sorted(governors.items(), key=lambda item: -item[1]["requests"])),
            "busiest": [{**line, "governed_by": _main_governor(line)} for line in busiest],
            "held_off": sum(pace.get("held_off", 0) for pace in paces)}


def _joined(one: list, other: list) -> list:
    if not one or not other:
        return one or other
    return [min(one[0], other[0]), max(one[1], other[1])]

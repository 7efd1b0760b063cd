"""Crawl orders compared on generated, labelled webs, crawled for real on loopback (issue 15).

Every web comes from experiments/webgen.py (topic clusters, link locality,
anchor quality, tunnels, power-law in-degree, exact PageRank) and is served
by experiments/webserve.py on 127.0.0.60... . Each (web, order) is one real
``crawler crawl`` process with ``--delay 0 --max-depth 0 --scope any`` and a
page budget (BUDGET x the largest checkpoint: a breadth-first crawl stopped
by --max-pages leaves the next level's pages it fetched ahead without a
row); the fetch order is index.csv's rows sorted by fetched_at (row order
breaks ties), and every number is read off its prefix of n pages:

- importance orders: the share of the top-1 % and the top-10 % PageRank
  pages fetched, and the PageRank mass fetched;
- focused orders: harvest rate (relevant pages among the n fetched) and
  target recall (relevant pages fetched among all relevant pages of the
  web); the relevance labels are the generator's, not the crawler's score;
- every run: the ordering CPU per fetch (stats.json's ``order.cpu_seconds``,
  when the crawler reports it), the fetched pages whose index.csv level
  differs from a breadth-first walk over the crawl's own edges.csv, and on
  a web with tunnels the page count at which it first fetched a relevant
  page beyond one (``crossed_at``);
- every focused web with tunnels: the tunnel arithmetic (tunnel_arithmetic:
  the harvest ceiling of a crawl that never crosses, and what crossing the
  first tunnel costs an order that cannot tell its pages from others).

Parts (``--part``, repeatable):
1. tune: each order's parameter grid (TUNING) on webs whose seeds are never
   scored (TUNING_SEEDS); the best setting per order (top-10 % coverage at
   10 % of the site for importance orders, harvest rate at 10 % for the
   focused ones) is what the other parts run;
2. importance: --webs webs of --importance-pages pages;
3. focused: the sweep of p_local x anchor noise x tunnels (FOCUSED_SWEEP),
   --focused-webs webs per setting;
4. paper: the ant-colony paper's figures: precision and recall against
   pages fetched, 2,000 to 14,000, on a web with 14,000 relevant pages.

Outputs in --out: tuning.csv, results.csv (one row per crawl and checkpoint),
tunnels.csv (one row per focused web with tunnels), results.md (the tables,
also printed), run.json, and with matplotlib
importance.png, focused_harvest.png, focused_recall.png and paper.png.

    python experiments/compare_orders.py                       # everything (~40 min)
    python experiments/compare_orders.py --part importance --orders bfs,opic --webs 3
    python experiments/compare_orders.py --quick               # tiny webs, seconds

``--workers 1`` fetches one page at a time; with the crawler's 8 workers
every fetch is among the 8 best URLs not yet recorded (the orders' default
window under a page budget; aco's exploring draws aside),
and ``--order-param best-first:window=0`` lets a free host take its own
best whatever it scores (the work-conserving frontier);
``--order-param aco:rho=0.02`` keeps a value in all of an order's settings.
"""
from __future__ import annotations

import csv
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from statistics import mean

import click
import numpy as np

from report import Column, markdown_table, plotting_available, run_info, write_csv, write_json, write_markdown
from webgen import Web, WebSpec, generate
from webserve import ServedWeb, serve_web

CRAWLER = str(Path(sys.executable).with_name("crawler"))
CRAWLER_PACKAGES = ("controller", "getpage", "textfilter", "urlfilter", "urllist")
IMPORTANCE_ORDERS = ("bfs", "importance", "opic")
FOCUSED_ORDERS = ("bfs", "best-first", "best-n-first", "shark", "aco")
PAPER_ORDERS = ("bfs", "best-first", "aco")
FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3)          # checkpoints: share of the web fetched
BUDGET = 1.3                                            # --max-pages: this x the largest checkpoint
BAR = 0.1                                               # the "at 10 % of the site"
TUNING_SEEDS = (901, 902)
FOCUSED_SWEEP = {"p_local": (0.5, 0.7, 0.9), "anchor_quality": (0.9, 0.5), "tunnel_length": (0, 2, 4)}
TUNING_SPEC = WebSpec(pages=2000, p_local=0.7, anchor_quality=0.7, tunnel_length=2)
PAPER_SPEC = WebSpec(pages=28000, topics=2, clusters=4, p_local=0.9, anchor_quality=0.9)
PAPER_POINTS = tuple(range(2000, 14001, 2000))
# Shark's "relevant parent": with the crawler's default 0, an irrelevant page whose text shares one topic
# word counts as relevant; 0.1 lies between the two kinds' scores (experiments/README.md), so chains decay.
SHARK_THRESHOLDS = (0, 0.1)
TUNING: dict[str, list[tuple[str, ...]]] = {
    "bfs": [()],
    "opic": [()],
    "importance": [("a=1", "b=0", "c=0"), ("a=1", "b=1", "c=1"), ("a=1", "b=0", "c=1"),
                   ("a=1", "b=0", "c=0", "pagerank_every=100")],
    "best-first": [(f"h1={h1}", f"h2={1 - h1:g}", f"resolution={r}") for h1 in (1, 0.7, 0.5, 0.3, 0)
                   for r in (0, 0.01, 0.05)],
    "best-n-first": [(f"h1={h1}", f"h2={1 - h1:g}", f"n={n}", f"resolution={r}") for h1 in (0.7, 0.3)
                     for n in (64, 256) for r in (0, 0.01)],
    "shark": [(f"delta={d}", f"gamma={g}", f"threshold={t}") for d in (0.5, 0.8) for g in (0.3, 0.5, 0.8)
              for t in SHARK_THRESHOLDS],
    "aco": [(f"beta={b}", f"rho={r}", f"q0={q}", "seed=1") for b in (1, 2) for r in (0, 0.05, 0.2) for q in (0.7, 0.9)],
}
QUICK = {"webs": 2, "importance_pages": 300, "focused_pages": 300, "paper": WebSpec(pages=600, topics=2),
         "paper_points": (100, 200, 300), "sweep": {"p_local": (0.9,), "anchor_quality": (0.9,), "tunnel_length": (0, 2)}}


@dataclass(frozen=True)
class Run:
    """One crawl of one web in one order: the page ids in fetch order, and what stats.json said."""
    web: Web
    order: str
    params: tuple[str, ...]
    fetched: tuple[int, ...]
    levels: tuple[int, ...]                  # index.csv's level of each fetched page
    stats: dict
    seconds: float
    cpu_seconds: float                       # the crawler process's and its parser processes', user + system
    level_mismatches: int

    @property
    def cpu_ms_per_fetch(self) -> float | None:
        cpu = self.order_stats.get("cpu_seconds")
        return None if cpu is None or not self.fetched else 1000 * cpu / len(self.fetched)

    @property
    def order_stats(self) -> dict:
        """stats.json's "order" (cpu_seconds, level_corrections ...); empty for bfs."""
        return self.stats.get("order") or {}


# -- crawling ----------------------------------------------------------------------------

def crawl(served: ServedWeb, order: str, params: Sequence[str], budget: int, work: Path,
          workers: int = 8) -> Run:
    """One real crawl of the served web; its directory is removed once read."""
    out, topic = work / "crawl", work / "topic.txt"
    topic.write_text(served.web.topic_text + "\n", encoding="utf-8")
    started, cpu = time.perf_counter(), _children_cpu()
    result = subprocess.run(_command(served.seed_url, out, order, params, budget, topic, workers),
                            capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if result.returncode != 0:
        raise click.ClickException(f"crawl {order} {' '.join(params)} exited {result.returncode}: "
                                   f"{result.stderr.strip()[-800:]}")
    rows = sorted(_read_csv(out / "index.csv"), key=lambda row: row["fetched_at"])   # stable: ties keep row order
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    run = Run(served.web, order, tuple(params), tuple(served.ids[row["url"]] for row in rows),
              tuple(int(row["level"]) for row in rows), stats, seconds, cpu,
              level_mismatches(rows, _read_csv(out / "edges.csv")))
    shutil.rmtree(out)
    return run


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(seed_url: str, out: Path, order: str, params: Sequence[str], budget: int, topic: Path,
             workers: int) -> list[str]:
    command = [CRAWLER, "crawl", seed_url, "--out", str(out), "--overwrite", "--quiet",
               "--max-pages", str(budget), "--max-depth", "0", "--delay", "0", "--scope", "any",
               "--content-dedup", "off", "--workers", str(workers)]
    if _has_orders():
        command += ["--order", order, "--topic-file", str(topic)]
        command += [arg for param in params for arg in ("--order-param", param)]
    elif order != "bfs":
        raise click.ClickException(f"this crawler has no --order option, so only bfs can run, not {order}")
    return command


def _has_orders() -> bool:
    if not hasattr(_has_orders, "answer"):
        help_text = subprocess.run([CRAWLER, "crawl", "--help"], capture_output=True, text=True).stdout
        _has_orders.answer = "--order " in help_text and "--topic-file" in help_text
    return _has_orders.answer


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def level_mismatches(rows: list[dict[str, str]], edges: list[dict[str, str]]) -> int:
    """Fetched pages whose level differs from their distance to a seed over the crawl's own edges."""
    links: dict[str, list[str]] = {}
    for edge in edges:
        links.setdefault(edge["from_url"], []).append(edge["to_url"])
    distance = {row["url"]: 0 for row in rows if row["level"] == "0"}
    todo = deque(distance)
    while todo:
        url = todo.popleft()
        for target in links.get(url, ()):
            if target not in distance:
                distance[target] = distance[url] + 1
                todo.append(target)
    return sum(distance.get(row["url"]) != int(row["level"]) for row in rows)


# -- measures ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Truth:
    """What the generator knows about a web, as arrays by page id."""
    relevant: np.ndarray       # bool
    top1: np.ndarray           # bool: among the top 1 % by PageRank
    top10: np.ndarray
    pagerank: np.ndarray

    @classmethod
    def of(cls, web: Web) -> "Truth":
        rank = np.array(web.pagerank)
        order = np.argsort(-rank, kind="stable")
        return cls(np.array([page.relevant for page in web.pages]), _top(order, 0.01), _top(order, 0.1), rank)


def _top(order: np.ndarray, share: float) -> np.ndarray:
    chosen = np.zeros(len(order), dtype=bool)
    chosen[order[:max(1, round(share * len(order)))]] = True
    return chosen


def measures(run: Run, truth: Truth, points: Iterable[int]) -> list[dict]:
    """The run's numbers after n pages, for each n (a crawl that stopped earlier counts what it fetched)."""
    ids = np.array(run.fetched, dtype=np.int64)
    cumulative = {name: np.cumsum(values[ids]) for name, values in
                  (("relevant", truth.relevant), ("top1", truth.top1), ("top10", truth.top10),
                   ("mass", truth.pagerank))}
    rows = []
    for n in points:
        k = min(n, len(ids))
        at = {name: float(values[k - 1]) if k else 0.0 for name, values in cumulative.items()}
        rows.append({"n": n, "fetched": k, "harvest": at["relevant"] / k if k else 0.0,
                     "recall": at["relevant"] / truth.relevant.sum(), "top1": at["top1"] / truth.top1.sum(),
                     "top10": at["top10"] / truth.top10.sum(), "pagerank_mass": at["mass"]})
    return rows


# -- tunnel arithmetic -------------------------------------------------------------------
#
# A tunnel page carries no signal a focused order reads: its text is drawn from its own (irrelevant)
# topic, the anchor into it from that topic or the noise words, like every irrelevant page's; only its
# single in-link and its id (the web's last ones) set it apart, and no focused order uses either.

def link_distances(web: Web, sources: Iterable[int], enters) -> dict[int, int]:
    """Breadth-first link distance from the nearest source, over links into pages where enters(page)."""
    distance = {page: 0 for page in sources}
    todo = deque(distance)
    while todo:
        page = todo.popleft()
        for target, _ in web.pages[page].links:
            if target not in distance and enters(target):
                distance[target] = distance[page] + 1
                todo.append(target)
    return distance


def beyond_tunnels(web: Web) -> frozenset[int]:
    """The relevant pages a crawl from the seed reaches only through a tunnel."""
    tunnel = {page for chain in web.tunnels for page in chain}
    reachable = link_distances(web, [web.seed], lambda page: page not in tunnel)
    return frozenset(web.relevant - reachable.keys())


def tunnel_arithmetic(web: Web, budget: int, bfs_harvest: float | None) -> dict:
    """What the first tunnel (out of the seed's cluster) costs within budget pages.

    ceiling: the harvest of a crawl that never crosses, at best (every relevant page it can reach).
    layers: H_1..H_L, the irrelevant pages at link distance 1..L from that cluster's relevant pages
    over irrelevant pages; the tunnel's j-th page is one of H_j. A search in order of that distance
    fetches H_1 + ... + H_(L-1) of them, then the tunnel's end at a uniformly random place among H_L
    when it cannot tell it from the others. Any order that picks among H_1 without knowing which one
    starts the tunnel fetches (H_1 + 1) / 2 + L - 1 irrelevant pages before the tunnel's end, in
    expectation, and beats the ceiling only if the head comes among its first budget - R_0 - L picks
    of H_1 (R_0 relevant pages, plus one beyond), with probability at most (budget - R_0 - L) / H_1.
    """
    length = web.spec.tunnel_length
    reachable = len(web.relevant - beyond_tunnels(web))
    cluster = [page.id for page in web.pages if page.relevant and page.cluster == 0]
    distance = link_distances(web, cluster, lambda page: not web.pages[page].relevant)
    layers = [sum(d == j for d in distance.values()) for j in range(1, length + 1)]
    before = sum(layers[:-1])
    left = budget - reachable
    return {"pages": web.spec.pages, "budget": budget, "relevant_reachable": reachable,
            "ceiling": reachable / budget, "two_bfs": 2 * bfs_harvest if bfs_harvest is not None else None,
            "layers": " ".join(map(str, layers)), "h1": layers[0],
            "distance_first": before + 1, "distance_expected": before + (layers[-1] + 1) / 2,
            "budget_left": left, "exchangeable_expected": (layers[0] + 1) / 2 + length - 1,
            "crossing_chance": min(1.0, max(0.0, (left - length) / layers[0]))}


def crossed_at(run: Run) -> int | None:
    """How many pages the run had fetched when it first fetched a relevant page beyond a tunnel."""
    beyond = beyond_tunnels(run.web) if run.web.tunnels else frozenset()
    return next((n for n, page in enumerate(run.fetched, 1) if page in beyond), None)


def run_rows(part: str, run: Run, points: Iterable[int]) -> list[dict]:
    spec = run.web.spec
    head = {"part": part, "web_seed": spec.seed, "pages": spec.pages, "relevant": len(run.web.relevant),
            "p_local": spec.p_local, "anchor_quality": spec.anchor_quality, "tunnel_length": spec.tunnel_length,
            "order": run.order, "params": " ".join(run.params), "crawled": len(run.fetched),
            "seconds": round(run.seconds, 2),
            "crawler_cpu_ms_per_page": 1000 * run.cpu_seconds / len(run.fetched) if run.fetched else None,
            "order_cpu_ms_per_fetch": run.cpu_ms_per_fetch,
            "level_corrections": run.order_stats.get("level_corrections"), "level_mismatches": run.level_mismatches,
            "crossed_at": crossed_at(run)}
    return [{**head, **row, "fraction": row["n"] / spec.pages} for row in measures(run, Truth.of(run.web), points)]


def _budget(points: Sequence[int]) -> int:
    return round(BUDGET * max(points))


def checkpoints(pages: int) -> list[int]:
    return [max(1, round(fraction * pages)) for fraction in FRACTIONS]


# -- parts -------------------------------------------------------------------------------

@dataclass
class Session:
    """Where crawls run, which settings the tuning chose, and every row measured."""
    work: Path
    orders: tuple[str, ...]
    chosen: dict[str, tuple[str, ...]]
    rows: list[dict]
    tuning: list[dict]
    workers: int = 8
    fixed: dict[str, tuple[str, ...]] = field(default_factory=dict)   # order -> KEY=VALUE kept in every setting
    tunnels: list[dict] = field(default_factory=list)                # tunnel_arithmetic of each focused web

    def params(self, order: str, params: Sequence[str]) -> tuple[str, ...]:
        """params with the fixed values of the order's keys in place of the grid's."""
        fixed = self.fixed.get(order, ())
        keys = {item.split("=")[0] for item in fixed}
        return tuple(item for item in params if item.split("=")[0] not in keys) + fixed

    def run_web(self, part: str, web: Web, orders: Sequence[str], budget: int,
                points: Sequence[int]) -> list[dict]:
        rows = []
        with serve_web(web) as served:
            for order in orders:
                run = crawl(served, order, self.params(order, self.chosen.get(order, ())), budget, self.work,
                            self.workers)
                rows += run_rows(part, run, points)
                _progress(part, run)
        self.rows += rows
        return rows


def _progress(part: str, run: Run) -> None:
    spec = run.web.spec
    print(f"  {part}: web seed {spec.seed} ({spec.pages} pages, p_local {spec.p_local}, anchors "
          f"{spec.anchor_quality}, tunnels {spec.tunnel_length}) {run.order} {' '.join(run.params)}: "
          f"{len(run.fetched)} pages in {run.seconds:.1f} s", file=sys.stderr)


def tune(session: Session, importance_spec: WebSpec, focused_spec: WebSpec) -> None:
    """Each order's grid on tuning webs of its part's shape; the best mean score at 10 % is kept."""
    for order in session.orders:
        spec = importance_spec if order in IMPORTANCE_ORDERS else focused_spec
        budget = round(BAR * spec.pages)
        grid = list(dict.fromkeys(session.params(order, params) for params in TUNING.get(order, [()])))
        if len(grid) == 1:                   # nothing to choose (bfs, opic): no tuning crawls
            session.chosen[order] = grid[0]
            continue
        scores = {params: [] for params in grid}
        for seed in TUNING_SEEDS:
            web = generate(replace(spec, seed=seed))
            with serve_web(web) as served:
                for params in grid:
                    run = crawl(served, order, params, _budget([budget]), session.work, session.workers)
                    row = measures(run, Truth.of(web), [budget])[0]
                    scores[params].append(row["top10"] if order in ("importance", "opic") else row["harvest"])
        for params, values in scores.items():
            session.tuning.append({"order": order, "params": " ".join(params), "score": mean(values),
                                   "objective": "top10" if order in ("importance", "opic") else "harvest"})
        session.chosen[order] = max(grid, key=lambda params: mean(scores[params]))
        print(f"  tune: {order} -> {' '.join(session.chosen[order]) or 'defaults'}", file=sys.stderr)


def importance(session: Session, webs: int, pages: int) -> None:
    orders = [order for order in session.orders if order in IMPORTANCE_ORDERS]
    for seed in range(1, webs + 1):
        session.run_web("importance", generate(WebSpec(pages=pages, seed=seed)), orders,
                        _budget(checkpoints(pages)), checkpoints(pages))


def focused(session: Session, webs: int, pages: int, sweep: dict[str, Sequence] = FOCUSED_SWEEP) -> None:
    orders = [order for order in session.orders if order in FOCUSED_ORDERS]
    for p_local, anchor_quality, tunnels in product(*sweep.values()):
        for seed in range(1, webs + 1):
            web = generate(WebSpec(pages=pages, p_local=p_local, anchor_quality=anchor_quality,
                                   tunnel_length=tunnels, seed=seed))
            rows = session.run_web("focused", web, orders, _budget(checkpoints(pages)), checkpoints(pages))
            if web.tunnels:
                session.tunnels.append(_tunnel_row(web, rows))


def _tunnel_row(web: Web, rows: list[dict]) -> dict:
    spec = web.spec
    bfs = next((row["harvest"] for row in at_bar(rows, "focused") if row["order"] == "bfs"), None)
    return {"web_seed": spec.seed, "p_local": spec.p_local, "anchor_quality": spec.anchor_quality,
            "tunnel_length": spec.tunnel_length, "bfs_harvest": bfs,
            **tunnel_arithmetic(web, round(BAR * spec.pages), bfs)}


def paper(session: Session, spec: WebSpec, points: Sequence[int], webs: int) -> None:
    orders = [order for order in session.orders if order in PAPER_ORDERS]
    for seed in range(1, webs + 1):
        session.run_web("paper", generate(replace(spec, seed=seed)), orders, _budget(points), points)


# -- tables ------------------------------------------------------------------------------

def _pct(value: object) -> str:
    return f"{100 * float(value):.1f} %"


def _num(digits: int):
    return lambda value: f"{float(value):.{digits}f}"


def _mean_by(rows: list[dict], keys: Sequence[str], values: Sequence[str]) -> list[dict]:
    return [{**dict(zip(keys, group)), "webs": len(members),
             **{value: _mean_or_none([m[value] for m in members]) for value in values}}
            for group, members in _groups(rows, keys).items()]


def _mean_or_none(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return mean(present) if present else None


def at_bar(rows: list[dict], part: str) -> list[dict]:
    return [row for row in rows if row["part"] == part and abs(row["fraction"] - BAR) < 1e-9]


CRAWL_COLUMNS = (Column("crawler_cpu_ms_per_page", "crawler CPU ms/page", _num(2)),
                 Column("order_cpu_ms_per_fetch", "ordering CPU ms/fetch (stats.json)", _num(3)),
                 Column("level_corrections", "level corrections a crawl", _num(1)),
                 Column("level_mismatches", "levels ≠ BFS of edges.csv", _num(1)))
CRAWL_VALUES = [column.key for column in CRAWL_COLUMNS]


def importance_tables(rows: list[dict]) -> str:
    bar = at_bar(rows, "importance")
    if not bar:
        return ""
    means = _mean_by(bar, ["order", "params"], ["top1", "top10", "pagerank_mass", *CRAWL_VALUES])
    table = markdown_table([Column("order", "order"), Column("params", "parameters"), Column("webs", "webs"),
                            Column("top1", "top-1 % PageRank pages", _pct),
                            Column("top10", "top-10 % PageRank pages", _pct),
                            Column("pagerank_mass", "PageRank mass", _pct),
                            *CRAWL_COLUMNS], means)
    return (f"### Importance: after {100 * BAR:.0f} % of the site (mean over webs)\n\n{table}\n\n"
            f"{_head_to_head(bar, 'opic', 'bfs', 'top10')}\n{_head_to_head(bar, 'importance', 'bfs', 'top10')}")


def _head_to_head(rows: list[dict], challenger: str, baseline: str, value: str) -> str:
    """How often, and by how much, one order's value beats another's on the same webs."""
    by_web = {}
    for row in rows:
        by_web.setdefault(_web_key(row), {})[row["order"]] = row[value]
    pairs = [(orders[challenger], orders[baseline]) for orders in by_web.values()
             if challenger in orders and baseline in orders]
    if not pairs:
        return ""
    wins, ties = sum(c > b for c, b in pairs), sum(c == b for c, b in pairs)
    margins = [c - b for c, b in pairs]
    return (f"- {challenger} against {baseline} on {value}, {len(pairs)} webs: {wins} wins, {ties} ties, "
            f"{len(pairs) - wins - ties} losses; difference "
            f"{100 * mean(margins):+.1f} points on average (from {100 * min(margins):+.1f} to "
            f"{100 * max(margins):+.1f})\n")


def _web_key(row: dict) -> tuple:
    return tuple(row[key] for key in ("pages", "p_local", "anchor_quality", "tunnel_length", "web_seed"))


def focused_tables(rows: list[dict]) -> str:
    bar = at_bar(rows, "focused")
    if not bar:
        return ""
    keys = ["p_local", "anchor_quality", "tunnel_length"]
    means = _mean_by(bar, keys + ["order"], ["harvest", "recall", "order_cpu_ms_per_fetch", "level_mismatches"])
    wide = _wide(means, keys, "order", ("harvest", "recall"))
    orders = [o for o in FOCUSED_ORDERS if any(row["order"] == o for row in means)]
    columns = ([Column("p_local", "p_local"), Column("anchor_quality", "anchor quality"),
                Column("tunnel_length", "tunnel"), Column("webs", "webs")]
               + [Column(f"harvest {o}", f"harvest {o}", _pct) for o in orders]
               + [Column(f"recall {o}", f"recall {o}", _pct) for o in orders]
               + [Column("ratio", "best-first ÷ bfs harvest", _num(2))])
    for row in wide:
        row["ratio"] = (row.get("harvest best-first") / row["harvest bfs"]
                        if row.get("harvest best-first") is not None and row.get("harvest bfs") else None)
    cpu = markdown_table([Column("order", "order"), *CRAWL_COLUMNS],
                         _mean_by(bar, ["order"], CRAWL_VALUES))
    return (f"### Focused: harvest rate and target recall after {100 * BAR:.0f} % of the site (mean over webs)\n\n"
            f"{markdown_table(columns, wide)}\n\n{_head_to_head(bar, 'aco', 'best-first', 'harvest')}"
            f"{_head_to_head(bar, 'aco', 'best-first', 'recall')}"
            f"{_head_to_head(bar, 'shark', 'best-first', 'harvest')}"
            f"{_head_to_head(bar, 'best-n-first', 'best-first', 'harvest')}\n{cpu}\n\n"
            f"{bar_table(bar)}\n\n{crossing_table(bar)}")


def bar_table(bar: list[dict]) -> str:
    """The issue's bar per tunnel length: webs with p_local >= 0.7 where best-first's harvest at 10 %
    is at least twice BFS's."""
    by_web: dict[tuple, dict] = {}
    for row in bar:
        if row["p_local"] >= 0.7:
            by_web.setdefault(_web_key(row), {})[row["order"]] = row["harvest"]
    ratios: dict[int, list[float]] = {}
    for key, orders in by_web.items():
        if orders.get("bfs") and "best-first" in orders:
            ratios.setdefault(key[3], []).append(orders["best-first"] / orders["bfs"])
    rows = [{"tunnel_length": length, "webs": len(values), "held": sum(r >= 2 for r in values),
             "low": min(values), "mean": mean(values), "high": max(values)}
            for length, values in sorted(ratios.items())]
    columns = [Column("tunnel_length", "tunnel"), Column("webs", "webs (p_local ≥ 0.7)"),
               Column("held", "best-first ≥ 2× bfs"), Column("low", "ratio, lowest", _num(2)),
               Column("mean", "mean", _num(2)), Column("high", "highest", _num(2))]
    return (f"### The bar: best-first ≥ 2× BFS's harvest at {100 * BAR:.0f} % of the site, p_local ≥ 0.7\n\n"
            f"{markdown_table(columns, rows)}") if rows else ""


def crossing_table(bar: list[dict]) -> str:
    """Per tunnel length and order: on how many webs the crawl fetched a relevant page beyond a tunnel."""
    groups: dict[tuple, list[dict]] = {}
    for row in bar:
        if row["tunnel_length"]:
            groups.setdefault((row["tunnel_length"], row["order"]), []).append(row)
    rows = []
    for (length, order), members in sorted(groups.items(), key=lambda item: (item[0][0], _rank(item[0][1]))):
        crossed = [row["crossed_at"] for row in members if row["crossed_at"] is not None]
        rows.append({"tunnel_length": length, "order": order, "webs": len(members),
                     "by_bar": sum(row["crossed_at"] is not None and row["crossed_at"] <= row["n"] for row in members),
                     "by_end": len(crossed), "first": min(crossed) if crossed else None,
                     "median": float(np.median(crossed)) if crossed else None})
    columns = [Column("tunnel_length", "tunnel"), Column("order", "order"), Column("webs", "webs"),
               Column("by_bar", f"crossed by {100 * BAR:.0f} %"), Column("by_end", "crossed in the crawl"),
               Column("first", "earliest crossing (pages)"), Column("median", "median crossing", _num(0))]
    return (f"### Crossing: a relevant page beyond a tunnel fetched (the crawl's budget: "
            f"{100 * BUDGET * max(FRACTIONS):.0f} % of the site)\n\n{markdown_table(columns, rows)}") if rows else ""


def _rank(order: str) -> int:
    return FOCUSED_ORDERS.index(order) if order in FOCUSED_ORDERS else len(FOCUSED_ORDERS)


def tunnel_tables(tunnels: list[dict]) -> str:
    """The tunnel arithmetic per p_local and tunnel length, mean over the webs."""
    if not tunnels:
        return ""
    rows = []
    for key, members in sorted(_groups(tunnels, ("p_local", "tunnel_length")).items()):
        layers = np.array([[int(h) for h in row["layers"].split()] for row in members])
        two_bfs = [row["two_bfs"] for row in members if row["two_bfs"] is not None]
        rows.append({"p_local": key[0], "tunnel_length": key[1], "webs": len(members),
                     **{name: mean(row[name] for row in members) for name in
                        ("relevant_reachable", "ceiling", "distance_expected", "budget_left",
                         "exchangeable_expected")},
                     "two_bfs": mean(two_bfs) if two_bfs else None,
                     "below": sum(row["two_bfs"] is not None and row["ceiling"] < row["two_bfs"] for row in members),
                     "layers": " / ".join(f"{h:.0f}" for h in layers.mean(axis=0)),
                     "reaches": sum(row["distance_expected"] < row["budget_left"] for row in members),
                     "chance": max(row["crossing_chance"] for row in members)})
    columns = [Column("p_local", "p_local"), Column("tunnel_length", "tunnel"), Column("webs", "webs"),
               Column("relevant_reachable", "relevant without crossing R₀", _num(1)),
               Column("ceiling", "ceiling R₀ ÷ budget", _pct), Column("two_bfs", "2× bfs harvest", _pct),
               Column("below", "webs: ceiling < 2× bfs"), Column("layers", "H₁ / … / H_L"),
               Column("distance_expected", "distance order: irrelevant before the end", _num(1)),
               Column("budget_left", "budget − R₀", _num(1)),
               Column("reaches", "webs: distance order in budget"),
               Column("exchangeable_expected", "any blind order ≥ (expected)", _num(1)),
               Column("chance", "P(beat ceiling) ≤ (highest)", _num(2))]
    return (f"### Tunnel arithmetic: the first tunnel, budget {100 * BAR:.0f} % of the site (mean over webs)\n\n"
            f"{markdown_table(columns, rows)}")


def _groups(rows: list[dict], keys: Sequence[str]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[key] for key in keys), []).append(row)
    return groups


def _wide(rows: list[dict], keys: Sequence[str], pivot: str, values: Sequence[str]) -> list[dict]:
    """One row per keys, a column per (value, pivot)."""
    out: dict[tuple, dict] = {}
    for row in rows:
        target = out.setdefault(tuple(row[k] for k in keys), {**{k: row[k] for k in keys}, "webs": row["webs"]})
        target.update({f"{value} {row[pivot]}": row[value] for value in values})
    for target in out.values():
        target.update({key: None for value in values for key in
                       (f"{value} {o}" for o in FOCUSED_ORDERS) if key not in target})
    return list(out.values())


def paper_tables(rows: list[dict]) -> str:
    chosen = [row for row in rows if row["part"] == "paper"]
    if not chosen:
        return ""
    means = _mean_by(chosen, ["order", "n"], ["harvest", "recall"])
    columns = [Column("order", "order"), Column("n", "pages fetched"), Column("webs", "webs"),
               Column("harvest", "precision (harvest)", _pct), Column("recall", "recall", _pct)]
    return f"### The ant-colony paper's figures: precision and recall against pages fetched\n\n" \
           f"{markdown_table(columns, means)}"


def tuning_table(tuning: list[dict]) -> str:
    if not tuning:
        return ""
    columns = [Column("order", "order"), Column("params", "parameters"), Column("objective", "objective"),
               Column("score", f"mean at {100 * BAR:.0f} %", _pct)]
    return f"### Tuning (webs {', '.join(map(str, TUNING_SEEDS))}, never scored)\n\n{markdown_table(columns, tuning)}"


# -- plots -------------------------------------------------------------------------------

def plot_curves(path: Path, rows: list[dict], part: str, values: Sequence[tuple[str, str]],
                panels: Sequence[str] = ()) -> None:
    """Mean value against the share of the site fetched, one line per order; one panel per
    value, or per combination of `panels` keys with the one value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chosen = [row for row in rows if row["part"] == part]
    groups = sorted({tuple(row[k] for k in panels) for row in chosen}) if panels else [()]
    cells = [(group, value) for group in groups for value in values]
    columns = min(3, len(cells))
    figure, axes = plt.subplots(-(-len(cells) // columns), columns, squeeze=False,
                                figsize=(4.2 * columns, 3.2 * -(-len(cells) // columns)))
    for axis, (group, (value, label)) in zip(axes.flat, cells):
        _plot_panel(axis, [row for row in chosen if tuple(row[k] for k in panels) == group], value)
        axis.set_title(", ".join(f"{k} {v}" for k, v in zip(panels, group)) or label, fontsize=9)
        axis.set_ylabel(label, fontsize=8)
    for axis in axes.flat[len(cells):]:
        axis.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def _plot_panel(axis, rows: list[dict], value: str, x: str = "fraction") -> None:
    for order in dict.fromkeys(row["order"] for row in rows):
        means = _mean_by([row for row in rows if row["order"] == order], [x], [value])
        axis.plot([m[x] for m in means], [m[value] for m in means], marker="o", markersize=3, label=order)
    axis.axvline(BAR, color="grey", linewidth=0.5) if x == "fraction" else axis.axhline(0.95, color="grey",
                                                                                         linewidth=0.5)
    axis.set_xlabel("share of the site fetched" if x == "fraction" else "pages fetched", fontsize=8)
    axis.set_ylim(0, 1.02)
    axis.tick_params(labelsize=7)


def plot_paper(path: Path, rows: list[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chosen = [row for row in rows if row["part"] == "paper"]
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for axis, (value, label) in zip(axes, (("harvest", "precision (harvest rate)"), ("recall", "recall"))):
        _plot_panel(axis, chosen, value, x="n")
        axis.set_title(label, fontsize=9)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def plot_all(out: Path, rows: list[dict]) -> None:
    parts = {row["part"] for row in rows}
    if "importance" in parts:
        plot_curves(out / "importance.png", rows, "importance",
                    [("top1", "top-1 % PageRank pages"), ("top10", "top-10 % PageRank pages"),
                     ("pagerank_mass", "PageRank mass")])
    if "focused" in parts:
        for value in ("harvest", "recall"):
            plot_curves(out / f"focused_{value}.png", rows, "focused", [(value, value)],
                        panels=("tunnel_length", "anchor_quality", "p_local"))
    if "paper" in parts:
        plot_paper(out / "paper.png", rows)


# -- command line ------------------------------------------------------------------------

RUN_COLUMNS = ["part", "web_seed", "pages", "relevant", "p_local", "anchor_quality", "tunnel_length", "order",
               "params", "crawled", "seconds", "crawler_cpu_ms_per_page", "order_cpu_ms_per_fetch", "level_corrections",
               "level_mismatches", "crossed_at", "n", "fraction",
               "fetched", "harvest", "recall", "top1", "top10", "pagerank_mass"]

TUNNEL_COLUMNS = ["web_seed", "pages", "p_local", "anchor_quality", "tunnel_length", "budget", "relevant_reachable",
                  "ceiling", "bfs_harvest", "two_bfs", "layers", "h1", "distance_first", "distance_expected",
                  "budget_left", "exchangeable_expected", "crossing_chance"]


@click.command()
@click.option("--part", "parts", multiple=True, default=("tune", "importance", "focused", "paper"),
              type=click.Choice(["tune", "importance", "focused", "paper"]), show_default=True,
              help="What to run (repeatable).")
@click.option("--orders", default=",".join(dict.fromkeys(IMPORTANCE_ORDERS + FOCUSED_ORDERS)), show_default=True,
              help="Orders to crawl with, comma-separated; each part runs those of its kind.")
@click.option("--webs", default=10, show_default=True, help="Importance part: generated webs (seeds 1..N).")
@click.option("--importance-pages", default=5000, show_default=True, help="Pages of each importance web.")
@click.option("--focused-webs", default=3, show_default=True, help="Focused part: webs per sweep setting.")
@click.option("--focused-pages", default=2000, show_default=True, help="Pages of each focused web.")
@click.option("--paper-webs", default=2, show_default=True, help="Paper part: webs of PAPER_SPEC's shape.")
@click.option("--workers", default=8, show_default=True,
              help="The crawler's --workers (8, its default: each fetch among the 8 best URLs not yet recorded; "
                   "1: one page at a time).")
@click.option("--order-param", "fixed", multiple=True, metavar="ORDER:KEY=VALUE",
              help="Keep KEY=VALUE in every setting of ORDER, tuned or scored, in place of the grid's (repeatable).")
@click.option("--quick", is_flag=True, help="Tiny webs and one sweep setting: a smoke run in seconds.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("experiments/results/orders"),
              show_default=True)
def main(parts, orders, webs, importance_pages, focused_webs, focused_pages, paper_webs, workers, fixed, quick,
         out) -> None:
    """Crawl orders on generated labelled webs, crawled for real on loopback."""
    started = time.perf_counter()
    plots = plotting_available()
    paper_spec, points, sweep = PAPER_SPEC, PAPER_POINTS, FOCUSED_SWEEP
    if quick:
        webs, importance_pages, focused_pages, focused_webs = (QUICK["webs"], QUICK["importance_pages"],
                                                                QUICK["focused_pages"], 1)
        paper_spec, points, paper_webs, sweep = QUICK["paper"], QUICK["paper_points"], 1, QUICK["sweep"]
    with tempfile.TemporaryDirectory(prefix="orders-") as work:
        session = Session(Path(work), tuple(o.strip() for o in orders.split(",") if o.strip()), {}, [], [], workers,
                          _fixed(fixed))
        if "tune" in parts:
            tune(session, WebSpec(pages=importance_pages), replace(TUNING_SPEC, pages=focused_pages))
        if "importance" in parts:
            importance(session, webs, importance_pages)
        if "focused" in parts:
            focused(session, focused_webs, focused_pages, sweep)
        if "paper" in parts:
            paper(session, paper_spec, points, paper_webs)
    _write(out, session, parts, plots, started)


def _fixed(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    fixed: dict[str, tuple[str, ...]] = {}
    for value in values:
        order, sep, param = value.partition(":")
        if not sep or "=" not in param:
            raise click.BadParameter(f"{value!r} is not ORDER:KEY=VALUE", param_hint="--order-param")
        fixed[order] = fixed.get(order, ()) + (param,)
    return fixed


def crawler_version() -> str:
    """The commit of the tree the crawler's packages are imported from (the work tree, or the one
    PYTHONPATH puts first) and which of them differ from it there."""
    trees = sorted(set(map(_package_tree, CRAWLER_PACKAGES)), key=str)
    return "; ".join(_tree_version(tree) for tree in trees)


def _package_tree(package: str) -> Path | None:
    """The git work tree holding the package the crawler imports, as a crawl process would find it."""
    found = subprocess.run([sys.executable, "-c", f"import {package}; print({package}.__file__)"],
                           capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout.strip()
    if not found:
        return None
    top = subprocess.run(["git", "-C", str(Path(found).parent), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True).stdout.strip()
    return Path(top) if top else Path(found).resolve().parent.parent


def _tree_version(tree: Path | None) -> str:
    if tree is None:
        return "unknown packages"
    git = ["git", "-C", str(tree)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run([*git, "status", "--porcelain", "--", *CRAWLER_PACKAGES],
                             capture_output=True, text=True).stdout.split("\n")
    files = sorted(line[3:] for line in changed if line.strip())
    where = "" if tree == Path(__file__).resolve().parent.parent else f" (the tree at {tree})"
    return (f"{commit or 'unknown commit'}{where}"
            + (f" with uncommitted changes to {', '.join(files)}" if files else ", no uncommitted changes"))


def _write(out: Path, session: Session, parts: Sequence[str], plots: bool, started: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    info = run_info("compare_orders", "generated webs (experiments/webgen.py), served on 127.0.0.60+ and crawled "
                    f"with --delay 0 --workers {session.workers} by the crawler at {crawler_version()}; parts: "
                    + ", ".join(parts), None)
    write_csv(out / "results.csv", RUN_COLUMNS, session.rows)
    if session.tuning:
        write_csv(out / "tuning.csv", ["order", "params", "objective", "score"], session.tuning)
    if session.tunnels:
        write_csv(out / "tunnels.csv", TUNNEL_COLUMNS, session.tunnels)
    body = "\n\n".join(t for t in (tuning_table(session.tuning), importance_tables(session.rows),
                                   focused_tables(session.rows), tunnel_tables(session.tunnels),
                                   paper_tables(session.rows)) if t)
    write_markdown(out / "results.md", "Crawl orders on generated webs", info, body)
    write_json(out / "run.json", info, {"seconds": round(time.perf_counter() - started, 1),
                                        "orders": list(session.orders), "workers": session.workers,
                                        "chosen": {k: list(v) for k, v in session.chosen.items()},
                                        "fixed": {k: list(v) for k, v in session.fixed.items()}})
    if plots:
        plot_all(out, session.rows)
    click.echo(f"{body}\n\nwritten to {out}/ in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

"""``crawler recrawl DIR``: one revisit pass over a crawl, then the crawl goes on.

A pass, in four steps, each safe to kill:

1. Choose the pages to ask again (``urllist.revisit``: the policy and the
   budget) and write the choice to state/recrawl.json before any request,
   so a killed pass goes on with the same pages.
2. Ask them again with conditional GETs (the stored ETag / Last-Modified)
   through the crawl's own loop, politeness gate and host-aware scheduler:
   ``Revisits`` runs ``controller.engine.Crawl`` with the revisit mode's
   admission and commit (``RevisitAdmission``, ``RevisitCommit``), whose
   frontier holds the revisits. Each visit's row in visits.csv is its
   commit mark (controller/visits.py); a changed page's new links go to
   edges.csv before it, its new files replace the old ones (rename) right
   after it, and every answer goes into the WARC (a 304 as a ``server-not-modified`` revisit record, the same
   bytes as ``identical-payload-digest``, new bytes in full).
3. Fold the visits into index.csv (write-then-rename): the latest version's
   fields, ``etag``, ``last_modified``, ``visits``, ``changes``.
4. Queue the links that changed pages added, at their exact level (the
   changed page's level + 1, the smallest over the pages linking to it: no
   unchanged page links to a URL the crawl has not seen), and go on as a
   resumed crawl. Only when the crawl's queue was empty: a crawl stopped
   with URLs still queued (--max-pages) holds deeper levels already, and
   appending shallower URLs behind them would break the levels (the total
   queue is in level order); those links stay in edges.csv, counted.

A page is revisited only if it was saved (an HTML page with a 2xx answer).
What the pass found is in visits.csv, trace.log (RECRAWL, VISIT lines) and
state/recrawl.json (the passes' summaries).
"""
from __future__ import annotations

import csv
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from functools import cached_property, partial
from datetime import datetime, timezone
from pathlib import Path

from controller import wiring
from controller.admission import Admission
from controller.commit import NO_VERDICT, Commit, Page, Visit, index_row, validators
from controller.config import CrawlConfig
from controller.digest import Digest, DigestJob
from controller.engine import Crawl
from controller.store import INDEX_COLUMNS, index_rows
from controller.visits import ANSWERED, VisitLog, apply_visits, read_visits, recrawl_state, save_state
from getpage import Ask
from textfilter.duplicates import ContentVerdict
from textfilter.fingerprint import body_md5
from urllist import QueuedUrl
from urllist.revisit import Budget, PageHistory, plan

OUTCOMES = ("not-modified", "unchanged", "changed", "failed")
NEW = ".new"   # a new version's files wait under this suffix until its visit commits


@dataclass(frozen=True)
class RevisitPlan:
    """How to choose the pages of a pass (urllist.revisit.plan's arguments)."""
    policy: str = "uniform"
    budget: Budget | None = None       # None: every page this pass
    min_interval: float = 0.0
    max_interval: float = float("inf")
    max_rate: float | None = None


def current_rows(out: Path) -> tuple[list[dict], dict[int, list[dict]]]:
    """index.csv's rows brought up to date by every visit so far, and the visits by id."""
    rows = list(index_rows(out))
    by_id: dict[int, list[dict]] = defaultdict(list)
    for visit in read_visits(out):
        by_id[int(visit["id"])].append(visit)
    return [apply_visits(row, by_id[int(row["id"])]) if int(row["id"]) in by_id else row
            for row in rows], by_id


def choose(rows: list[dict], visits: dict[int, list[dict]], how: RevisitPlan, now: float,
           lastmods: dict[str, float] | None = None) -> list[int]:
    """The ids to revisit this pass, most urgent first; ``lastmods`` (a
    sitemap's <lastmod> by URL) hints at how often a page changes before it
    has been visited twice."""
    lastmods = lastmods or {}
    histories = [_history(row, visits.get(int(row["id"]), []), lastmods.get(row["url"]))
                 for row in rows if _revisitable(row)]
    if how.budget is None:   # every page, the longest unvisited first
        return [history.id for history in sorted(histories, key=lambda h: (h.visits[-1], h.id))]
    return plan(histories, now, how.policy, how.budget, min_interval=how.min_interval,
                max_interval=how.max_interval, max_rate=how.max_rate,
                fill=how.budget.per_pass is not None)


def _revisitable(row: dict) -> bool:
    return bool(row["html_path"]) and not row["error"] and row["status"].startswith("2")


def sitemap_lastmods(out: Path) -> dict[str, float]:
    """url -> <lastmod> (epoch seconds) from sitemaps.csv, where given."""
    path = out / "sitemaps.csv"
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {row["url"]: float(row["lastmod"]) for row in csv.DictReader(f) if row["lastmod"]}


def _history(row: dict, visits: list[dict], lastmod: float | None = None) -> PageHistory:
    answered = [visit for visit in visits if visit["outcome"] in ANSWERED]
    return PageHistory(
        lastmod=lastmod,
        id=int(row["id"]),
        visits=(_epoch(row["fetched_at"]), *(_epoch(visit["visited_at"]) for visit in answered)),
        changed=tuple(visit["outcome"] == "changed" for visit in answered),
        modified=(_http_date(row["last_modified"]) if not answered else None,
                  *(_http_date(visit["last_modified"]) for visit in answered)))


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _http_date(value: str) -> float | None:
    from email.utils import parsedate_to_datetime
    try:
        return parsedate_to_datetime(value).timestamp() if value else None
    except (TypeError, ValueError):
        return None


class Revisits:
    """One pass's revisits: the crawl loop (controller.engine.Crawl) with the
    revisit mode's admission and commit. The loop's frontier holds the pages
    to ask again (local ids 0..n-1, all of one level, so none waits for
    another); the crawl's own frontier, seen-set and content memory are
    restored as for --resume, for the links changed pages add."""

    def __init__(self, config: CrawlConfig, how: RevisitPlan, **kwargs) -> None:
        mode = wiring.Mode(RevisitAdmission, partial(RevisitCommit, how=how),
                           finished=wiring.goes_on)
        self.crawl = Crawl(replace(config, max_seconds=0), resume=True, mode=mode, **kwargs)
        self.lock = self.crawl.lock
        self.open_pass, self.pass_no = self.crawl.commit.open_pass, self.crawl.commit.pass_no

    def run(self) -> dict:
        return self.crawl.run()

    def request_stop(self, reason: str) -> None:
        self.crawl.request_stop(reason)


class RevisitAdmission(Admission):
    """A pass queues nothing while it runs: its pages are chosen before it.
    Once it is over, the links changed pages added are queued (``enqueue``)
    into the crawl's own frontier, as a crawl would queue them."""

    local_budget = False    # the pass's size is its budget; --max-pages counts URLs
    fetches_ahead = False   # every page of a pass is of one level: none is parked

    def begin(self) -> None:
        commit = self.crawl.commit
        self.crawl.trace.recrawl(commit.pass_no, len(commit.targets))

    def redirect_check(self, url: str) -> str | None:
        """A revisit follows its page's redirects again: the crawl marked the
        target seen (by this very page); a new target must be within the rules."""
        return self.judged(url)[1]


class RevisitCommit(Commit):
    """A revisit's commit: its row in visits.csv is the commit mark. A
    changed page's new links go to edges.csv and its new bytes to the WARC
    before the row; its new files (saved under NEW) go in place after."""

    STEPS = ("verdict", "children", "archive", "row", "files", "done")

    def __init__(self, crawl, how: RevisitPlan) -> None:
        super().__init__(crawl)
        self.how = how

    # -- the pass -------------------------------------------------------------
    def restore(self, previous) -> None:
        """The crawl as --resume finds it, then this pass over it."""
        super().restore(previous)
        crawl, out = self.crawl, self.crawl.config.out
        self._open_pass(out, self.how)
        self.main = crawl.frontier
        crawl.frontier = wiring.frontier(replace(crawl.config, order="bfs"), crawl.gate, None,
                                         lambda: None)
        crawl.frontier.push([QueuedUrl(k, row["url"], 0, None) for k, row in enumerate(self.targets)])
        self.visits = VisitLog(out)

    def _open_pass(self, out: Path, how: RevisitPlan) -> None:
        """The open pass (state/recrawl.json), or a new one chosen now; the
        pages of it not visited yet are this run's targets."""
        self.state = recrawl_state(out)
        rows, visits = current_rows(out)
        _settle_new_versions(out, visits)
        passes = self.state["passes"]
        if not passes or passes[-1]["state"] == "done":
            passes.append({"pass": len(passes) + 1, "state": "revisiting", "policy": how.policy,
                           "started_at": now_utc(),
                           "chosen": choose(rows, visits, how, now_utc(), sitemap_lastmods(out))})
            save_state(out, self.state)
        self.open_pass = passes[-1]
        self.pass_no = self.open_pass["pass"]
        by_id = {int(row["id"]): row for row in rows}
        chosen = [by_id[page_id] for page_id in self.open_pass["chosen"]]
        visited = {int(visit["id"]) for entries in visits.values() for visit in entries
                   if int(visit["pass"]) == self.pass_no}
        self.targets = [row for row in chosen if int(row["id"]) not in visited]
        self._levels = {int(row["id"]): int(row["level"]) for row in chosen}
        self._links_before = _links_of(out, set(self._levels))

    # -- what a revisit needs before its commit -------------------------------------
    def ask(self, item: QueuedUrl) -> Ask:
        row = self.targets[item.id]
        return Ask(url=row["final_url"] or row["url"], etag=row["etag"],
                   last_modified=row["last_modified"])

    def wants_digest(self, item: QueuedUrl, visit: Visit) -> bool:
        """Only new bytes are digested (and saved, under NEW)."""
        return visit.needs_digest and _new_bytes(self.targets[item.id], visit)

    def job(self, item: QueuedUrl, visit: Visit) -> DigestJob:
        page_id = int(self.targets[item.id]["id"])
        return DigestJob(page_id, visit.result.final_url, visit.result.body, visit.result.text,
                         suffix=NEW)

    # -- the steps ------------------------------------------------------------------
    def verdict(self, page: Page) -> None:
        """The outcome: not-modified, unchanged, changed or failed; the visit's row."""
        row, result, visit = self.targets[page.item.id], page.visit.result, page.visit
        page.outcome = _outcome(row, visit)
        error = result.error or (visit.digest.error if visit.digest else "")
        page.entry = {"pass": self.pass_no, "id": row["id"], "url": row["url"],
                      "visited_at": visit.fetched_at, "outcome": page.outcome,
                      "status": result.status or "", **validators(result.headers),
                      "final_url": result.final_url, "elapsed_ms": round(result.elapsed_ms, 1),
                      "error": error}

    def children(self, page: Page) -> None:
        """A changed page's new version: its fields (its files go in place once
        its row is written: a kill before leaves the stored version whole),
        its new links to edges.csv."""
        if page.outcome != "changed":
            return
        row, digest = self.targets[page.item.id], page.visit.digest
        page_id = int(row["id"])
        html_path, text_path = (path.removesuffix(NEW) for path in (digest.html_path, digest.text_path))
        digest = replace(digest, html_path=html_path, text_path=text_path)
        before = self._links_before.setdefault(page_id, set())
        added = [url for url in digest.links if url not in before]
        before.update(added)
        self.crawl.store.add_edges(page_id, row["url"], added)
        item = QueuedUrl(page_id, row["url"], int(row["level"]), None)
        page.entry.update(index_row(item, page.visit, digest, 0, self._verdict(page_id, digest)))

    def _verdict(self, page_id: int, digest: Digest) -> ContentVerdict:
        """Against every other page: a page is never a copy of its own earlier version."""
        verdict = self.judge_content(page_id, digest)
        if verdict.duplicate_of == page_id or verdict.near_duplicate_of == page_id:
            return NO_VERDICT
        return verdict

    def archive(self, page: Page) -> None:
        warc, result = self.crawl.warc, page.visit.result
        if warc is None or not result.exchanges:
            return
        page_id = int(self.targets[page.item.id]["id"])
        warc.write_page(result.exchanges, page_id=page_id, revisit_of=warc.response_of(page_id))

    def row(self, page: Page) -> None:
        self.visits.add(page.entry)

    def files(self, page: Page) -> None:
        digest, out = page.visit.digest, self.crawl.config.out
        if digest is not None and digest.html_path:
            _put_in_place((out / digest.html_path, out / digest.text_path),
                          keep=page.outcome == "changed")

    def done(self, page: Page) -> None:
        row, result = self.targets[page.item.id], page.visit.result
        self.crawl.trace.visit(self.pass_no, int(row["id"]), result.status, page.outcome,
                               result.elapsed_ms, row["url"], page.entry["error"])
        self.crawl.frontier.done(page.item)

    # -- the end of the pass ----------------------------------------------------------
    def finish(self) -> dict:
        crawl = self.crawl
        self.visits.close()
        crawl.store.close()
        if crawl.warc is not None:
            crawl.warc.close()
        fold_visits(crawl.config.out)
        crawl.store.fill_in_links(lambda url: crawl.digester.normalize(url, None))
        crawl.frontier = self.main
        queued = left = 0
        if not crawl.stop_reason:
            queued, left = (self._queue_new_links()
                            if "queue_levels" in self.open_pass or self.main.exhausted()
                            else (0, len(self._new_links())))
        crawl.journal.close()
        crawl.fetcher.close()
        crawl.trace.close()
        counts = Counter(visit["outcome"] for visit in self._pass_visits)
        crawl_step = bool(self.open_pass.get("queue_levels"))
        summary = {"asked": len(self.open_pass["chosen"]), **{k: counts[k] for k in OUTCOMES},
                   "new_links_queued": queued, "new_links_not_queued": left,
                   "crawl_step": crawl_step, "stopped": crawl.stop_reason}
        if not crawl.stop_reason:
            self.open_pass.update(state="crawling" if crawl_step else "done", summary=summary)
            save_state(crawl.config.out, self.state)
        return {"pass": self.pass_no, **summary}

    @cached_property
    def _pass_visits(self) -> list[dict]:
        """This pass's visit rows (read once the pass is over)."""
        return [visit for visit in read_visits(self.crawl.config.out)
                if int(visit["pass"]) == self.pass_no]

    def _changed_pages(self) -> set[int]:
        return {int(visit["id"]) for visit in self._pass_visits if visit["outcome"] == "changed"}

    def _new_links(self) -> list[tuple[int, str, int]]:
        """(level, url, parent id) of the links changed pages hold that the
        crawl has not seen, each once at its smallest level, in level order."""
        best: dict[str, tuple[int, int]] = {}
        seen = self.crawl.seen
        for page_id in sorted(self._changed_pages()):
            level = self._levels[page_id] + 1
            for url in sorted(self._links_before.get(page_id, ())):
                if url not in seen and (url not in best or level < best[url][0]):
                    best[url] = (level, page_id)
        return sorted(((level, url, parent) for url, (level, parent) in best.items()),
                      key=lambda entry: entry[0])

    def _queue_new_links(self) -> tuple[int, int]:
        """Queue them as a crawl would (URL_Filter, trap limits, --max-depth),
        the levels from the shallowest on without a gap only: the total queue
        is in level order, and a level with no URL would never open for the
        one after it. Which levels is saved first, so a kill while queueing
        goes on with the same ones (those queued are seen by then)."""
        crawl = self.crawl
        links = self._new_links()
        levels = self.open_pass.get("queue_levels")
        if levels is None:
            depth = crawl.config.max_depth
            levels = _gapless({level for level, _, _ in links if not depth or level <= depth})
            self.open_pass["queue_levels"] = levels
            save_state(crawl.config.out, self.state)
        queued = left = 0
        for level, url, parent in links:
            if level in levels:
                queued += len(crawl.admission.enqueue([url], level, parent))
            else:
                left += 1
        crawl.journal.sync()
        return queued, left


def _gapless(levels: set[int]) -> list[int]:
    """The shallowest level and those right after it, up to the first missing one."""
    run = []
    for level in sorted(levels):
        if run and level != run[-1] + 1:
            break
        run.append(level)
    return run


def fold_visits(out: Path) -> None:
    """index.csv's rows with their visits applied (write-then-rename)."""
    rows, _ = current_rows(out)
    tmp = out / "index.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, INDEX_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out / "index.csv")


def _outcome(row: dict, visit: Visit) -> str:
    result = visit.result
    if result.status == 304 and not result.error:
        return "not-modified"
    if not result.is_html:
        return "failed"
    if not _new_bytes(row, visit):
        return "unchanged"
    return "failed" if visit.digest is None or visit.digest.error else "changed"


def _new_bytes(row: dict, visit: Visit) -> bool:
    return body_md5(visit.result.body) != row["body_md5"]


def _put_in_place(paths, keep: bool) -> None:
    """A new version's files from NEW to their names once its row is written,
    or dropped (same bytes after all, or a visit a kill left uncommitted)."""
    for path in paths:
        if keep and path.exists():
            os.replace(path, path.with_name(path.name.removesuffix(NEW)))
        else:
            path.unlink(missing_ok=True)


def _settle_new_versions(out: Path, visits: dict[int, list[dict]]) -> None:
    """NEW files a kill left: put in place those whose visit row was written
    (the latest changed visit of the page has their bytes), drop the others."""
    for new_html in (out / "pages").glob(f"*.html{NEW}"):
        page_id = int(new_html.name.split(".")[0])
        new_text = out / "text" / f"{page_id}.txt{NEW}"
        changed = [v for v in visits.get(page_id, []) if v["outcome"] == "changed"]
        committed = bool(changed) and changed[-1]["body_md5"] == body_md5(new_html.read_bytes())
        _put_in_place((new_html, new_text), keep=committed)
    for orphan in (out / "text").glob(f"*{NEW}"):
        orphan.unlink()


def _links_of(out: Path, ids: set[int]) -> dict[int, set[str]]:
    """The links edges.csv holds for these pages (every version's)."""
    links: dict[int, set[str]] = defaultdict(set)
    with open(out / "edges.csv", newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            if len(row) == 3 and row[0].isdigit() and int(row[0]) in ids:
                links[int(row[0])].add(row[2])
    return links


def now_utc() -> float:
    return datetime.now(timezone.utc).timestamp()

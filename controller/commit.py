"""Commit: a processed page made durable, in its mode's order of steps.

The loop (controller/engine.py) hands each page whose level is open to its
crawl's *commit*, one object chosen by the wiring for the crawl's mode. A
commit runs its ``STEPS`` in order, each a method named after what it
makes durable; the index row is the commit mark, so whatever a page
leaves on disk before its row is dropped or redone by --resume, and what
comes after it (tallies, the frontier's "done") is rebuilt from the rows.
Tests aim a kill at a step by its name (tests/killpoint.py).

- ``Commit``: one machine, breadth-first (the paper's crawl). verdict (is
  the text a copy of an earlier page's?), children (the links queued
  through admission, edges.csv, what was not queued and why, journaled),
  trace, archive (extraction rows, WARC records), row (index.csv), done
  (tallies; the frontier may close a level).
- ``OrderedCommit``: another --order: every new link is queued (one beyond
  --max-depth waits for a shorter path), the order hears of the page, and
  levels are final only at the end (urllist/ordered.py).
- ``SharedCommit``: one worker of a crawl in Redis: files first, then the
  content verdict and children in one Redis script that is the commit
  (a lost lease drops the page: its new owner records it), then the row.
- ``RevisitCommit`` (controller/revisits.py): one recrawl pass's visit.

Besides its steps a commit says what a page needs before it (``ask``:
what the fetch asks for; ``wants_digest`` and ``job``: whether and how a
parser reads it), how a resumed crawl is rebuilt (``restore``) and how the
crawl ends (``finish``: files closed, stats.json).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, replace

from controller.admission import trap_keys
from controller.config import order_params
from controller.digest import Digest, DigestJob
from controller.localfailure import LocalFailure
from controller.resume import JOURNAL_FILE, STATE_DIR, PreviousCrawl, beyond_depth, remove_files_of
from controller.shared import WORKER_ID_FILE, announce, worker_stats
from controller.stats import build_stats
from controller.store import OutputError
from getpage import Ask, FetchResult
from textfilter.duplicates import ContentVerdict, exact_key
from textfilter.fingerprint import body_md5
from urllist import QueuedUrl
from urllist.orders import make_order
from urllist.journal import PATTERNS_KEY, ScoredPage, SeenMark, Skipped, in_level_order, replay

NO_VERDICT = ContentVerdict(None, None, None)


@dataclass(frozen=True)
class Visit:
    """One URL on its way through the loop: fetched, then (HTML only) digested."""
    result: FetchResult
    fetched_at: str
    digest: Digest | None = None

    @property
    def needs_digest(self) -> bool:
        return self.result.is_html and self.digest is None


@dataclass
class Page:
    """What the steps of one commit know of the page, filled in step by step."""
    item: QueuedUrl
    visit: Visit
    digest: Digest
    verdict: ContentVerdict = NO_VERDICT
    new_count: int = 0            # links queued for the first time by this page
    outcome: str = ""             # a revisit's: not-modified, unchanged, changed, failed
    entry: dict | None = None     # a revisit's row in visits.csv
    dropped: bool = False         # not this process's to record after all (a lost lease)


class Commit:
    """One machine, breadth-first: children through admission, then the row."""

    STEPS = ("verdict", "children", "trace", "archive", "row", "done")
    hand_out_first = True   # a fetch's thread takes its next URL before its page is recorded

    def __init__(self, crawl) -> None:
        self.crawl = crawl
        self.children_before: Counter[int] = Counter()   # queued by a page fetched again after a kill

    def __call__(self, item: QueuedUrl, visit: Visit) -> None:
        page = Page(item, visit, visit.digest or Digest())
        for step in self.STEPS:
            getattr(self, step)(page)
            if page.dropped:
                return

    # -- what a page needs before its commit --------------------------------
    def ask(self, item: QueuedUrl) -> Ask | None:
        """What the fetch of item asks for beyond a page (a recrawl's validators)."""
        return None

    def wants_digest(self, item: QueuedUrl, visit: Visit) -> bool:
        return visit.needs_digest

    def job(self, item: QueuedUrl, visit: Visit) -> DigestJob:
        result = visit.result
        return DigestJob(item.id, result.final_url, result.body, result.text,
                         robots_tags=result.robots_tags, refresh=result.headers.get("refresh"))

    # -- the steps ----------------------------------------------------------
    def verdict(self, page: Page) -> None:
        """Content dedup from this process's own memory; a copy gives up its files."""
        page.verdict = self.judge_content(page.item.id, page.digest)
        if page.verdict.duplicate_of is not None:
            page.digest = self.as_duplicate(page.digest, page.verdict.duplicate_of)

    def children(self, page: Page) -> None:
        """Links queued (none for a copy), edges.csv, and what this page did
        not queue by reason: journaled before its row, so that a resumed
        crawl counts it as if never interrupted."""
        crawl, item = self.crawl, page.item
        skipped_before, cuts_before = Counter(crawl.tally.skipped), Counter(crawl.trap_cuts)
        new = self.queue_links(page)
        crawl.store.add_edges(item.id, item.url, page.digest.links)
        queued_before = self.children_before.pop(item.id, 0)
        # Fetched again after a stop: the children it had journaled then were
        # new to the crawl, not links seen before.
        crawl.tally.skipped["seen"] -= queued_before
        page.new_count = len(new) + queued_before
        crawl.journal.skipped(item.id, dict((crawl.tally.skipped - skipped_before)
                                            + Counter(page.digest.skipped)),
                              dict(crawl.trap_cuts - cuts_before))

    def queue_links(self, page: Page) -> list[QueuedUrl]:
        """Breadth-first: a page's links one level down, up to --max-depth."""
        if page.verdict.duplicate_of is not None:
            return []
        self.count_nofollow(page.digest)
        links = page.digest.followed
        if self.expands(page.item):
            return self.crawl.admission.enqueue(links, page.item.level + 1, page.item.id)
        self.crawl.admission.beyond_depth(links)
        return []

    def trace(self, page: Page) -> None:
        crawl, item, result = self.crawl, page.item, page.visit.result
        error = result.error or page.digest.error
        if error and item.level == 0:
            crawl.seeds_failed.append({"url": item.url, "error": error})
        crawl.trace.fetch(item.level, item.id, result.status, len(result.body),
                          result.elapsed_ms, item.url, error)

    def archive(self, page: Page) -> None:
        """Extraction rows and WARC records go out before the index row (the
        commit mark), so a resumed crawl can drop those of uncommitted pages."""
        crawl, item, result, digest = self.crawl, page.item, page.visit.result, page.digest
        if crawl.extracted is not None and digest.extracted is not None:
            crawl.extracted.add(item.id, result.final_url or item.url, digest.extracted)
            crawl.extraction_tally.count(digest.extracted)
        if crawl.warc is not None and result.exchanges:
            original = page.verdict.duplicate_of
            revisit = crawl.warc.response_of(original) if original is not None else None
            crawl.warc.write_page(result.exchanges, page_id=item.id, revisit_of=revisit)

    def row(self, page: Page) -> None:
        self.crawl.store.add_row(self.index_row(page))

    def index_row(self, page: Page) -> dict:
        return index_row(page.item, page.visit, page.digest, page.new_count, page.verdict)

    def done(self, page: Page) -> None:
        crawl, item, result, digest = self.crawl, page.item, page.visit.result, page.digest
        crawl.tally.count_page(item.level, result.error or digest.error, digest, page.new_count,
                               len(result.body))
        crawl.tally.count_content(item.level, page.verdict.duplicate_of is not None,
                                  page.verdict.near_duplicate_of is not None)
        crawl.frontier.done(item)
        crawl.close_levels()

    # -- what the steps share -------------------------------------------------
    def expands(self, item: QueuedUrl) -> bool:
        return not self.crawl.config.max_depth or item.level < self.crawl.config.max_depth

    def count_nofollow(self, digest: Digest) -> None:
        """A nofollow page's links are not queued (Digest.followed), but
        counted, and still in edges.csv: the page does link to them."""
        if kept_out := len(digest.links) - len(digest.followed):
            self.crawl.tally.skipped["nofollow"] += kept_out

    def judge_content(self, page_id: int, digest: Digest) -> ContentVerdict:
        """The page's text against every page's before it (content memory)."""
        contents = self.crawl.contents
        if contents is None or not digest.content_md5:
            return NO_VERDICT
        return contents.check(page_id, digest.content_md5, digest.simhash)

    def as_duplicate(self, digest: Digest, original: int) -> Digest:
        """A duplicate shares its original's text file, and its html file only
        when the bytes are equal too: a row's html_path always holds the bytes
        its own URL served (the same article in another encoding or markup is
        text-equal but not byte-equal). The parser process saved both files
        before the Controller, which holds the content memory, could judge."""
        out = self.crawl.config.out
        (out / digest.text_path).unlink(missing_ok=True)
        html_path = digest.html_path
        original_html = f"pages/{original}.html"
        original_file = out / original_html
        if original_file.is_file() and body_md5(original_file.read_bytes()) == digest.body_md5:
            (out / html_path).unlink(missing_ok=True)
            html_path = original_html
        return replace(digest, html_path=html_path, text_path=f"text/{original}.txt",
                       extracted=None)

    # -- a resumed crawl --------------------------------------------------------
    def restore(self, previous: PreviousCrawl) -> None:
        """The frontier rebuilds itself from the journal (an order replays
        what it heard of each page, and cuts an uncommitted page's children),
        then the rest is read from the journal as the frontier left it."""
        path = self.crawl.config.out / STATE_DIR / JOURNAL_FILE
        try:
            self.crawl.frontier.resume(path, previous.done_ids)
        except ValueError as exc:
            raise OutputError(f"--resume: {path}: {exc} (a journal written before orders "
                              f"were resumable?); start the crawl again with --overwrite") from None
        self._restore(previous, path)

    def _restore(self, previous: PreviousCrawl, path) -> None:
        """Seen-set, trap counters and tallies from the disk, streaming the
        journal (never held whole): what the committed pages left, then the
        seen-set in level order."""
        crawl = self.crawl
        done = previous.done_ids
        marks, levels = self._restore_committed(path, done)
        # In level order, as they were first queued: the trap guard's pattern
        # rule remembers the level each pattern first appeared at.
        for level, url in in_level_order(path, marks, levels):
            crawl.seen.add(url)
            crawl.traps.admit(url, level)
        # As Admission.beyond_depth marked them.
        for url in beyond_depth(crawl.config.out, previous.deepest):
            crawl.seen.add(url)
        crawl.handed_out = len(done)
        flags = crawl.frontier.level_flags
        for k in range(crawl.frontier.finished_levels):
            crawl.tally.level(k).m = flags[k + 1] if k + 1 < len(flags) else len(crawl.frontier)
        crawl.levels_closed = crawl.frontier.finished_levels

    def _restore_committed(self, path, done: set[int]) -> tuple[list, set[int] | None]:
        """One pass over the journal: the skipped-link counts and redirect marks
        (level, url) of committed pages, the children journaled by pages not
        committed, and the queue's levels when they do not ascend in id order
        (None when they do: see in_level_order)."""
        crawl = self.crawl
        level_of: dict[int, int] = {}   # committed pages only: RAM per page, not per URL
        marks, levels, ascending, last = [], set(), True, 0
        for record in replay(path):
            if isinstance(record, QueuedUrl):
                if record.id in done:
                    level_of[record.id] = record.level
                if record.parent_id is not None and record.parent_id not in done:
                    self.children_before[record.parent_id] += 1
                ascending, last = ascending and record.level >= last, record.level
                levels.add(record.level)
            elif isinstance(record, SeenMark):
                if record.source_id in done:
                    marks.append((level_of[record.source_id], record.url))
            elif isinstance(record, Skipped) and (record.source_id is None
                                                  or record.source_id in done):
                counts = dict(record.counts)
                crawl.trap_cuts.update(counts.pop(PATTERNS_KEY, {}))
                crawl.tally.skipped.update(counts)
        return marks, None if ascending else levels

    # -- the end ----------------------------------------------------------------
    def finish(self) -> dict:
        crawl = self.crawl
        self.ending()
        # Every file whole on disk before END and stats.json say how the
        # crawl ended: a local failure on the way is the end's reason.
        self.locally(crawl.store.close)
        for writer in (crawl.extracted, crawl.warc):
            if writer is not None:
                self.locally(writer.close)
        self.locally(crawl.journal.close)
        if not crawl.local_failure:   # in_links first: END and stats.json say the crawl is complete
            self.locally(crawl.store.fill_in_links, lambda url: crawl.digester.normalize(url, None),
                         levels=self.final_levels())
        reason = crawl.stop_reason or ("max-depth" if crawl.tally.skipped["depth"] else "queue-empty")
        if not crawl.local_failure:
            self.files_closed()
        elapsed = time.monotonic() - crawl.started   # as END says: the files are closed by now
        stats = self.stats(reason, elapsed)
        self.locally(crawl.trace.end, stats["stop_reason"], crawl.tally.urls, elapsed)
        self.locally(crawl.store.write_stats, stats)
        self.locally(crawl.trace.close)
        crawl.fetcher.close()
        if crawl.local_failure:   # stats.json itself may be what could not be written
            stats["local_failure"] = crawl.local_failure.line()
        return stats

    def ending(self) -> None:
        """The mode's last word before the files close."""

    def final_levels(self):
        """Each id's final level, where it is not the level it was queued at."""
        return None

    def files_closed(self) -> None:
        """The mode's work once every file is whole."""

    def stats(self, reason: str, elapsed: float) -> dict:
        crawl = self.crawl
        if crawl.local_failure:
            crawl.stop_reason = reason = "local-failure"
        stats = build_stats(crawl, reason, elapsed)
        if crawl.sitemap_stats is not None:
            stats["sitemaps"] = crawl.sitemap_stats
        stats.update(self.mode_stats())
        if crawl.local_failure:
            stats["local_failure"] = crawl.local_failure.line()
        return stats

    def mode_stats(self) -> dict:
        return {}

    def locally(self, step, *args, **kwargs) -> None:
        """One step of the end; a local failure in it is remembered (the
        first one is the crawl's) and the other steps still run."""
        crawl = self.crawl
        try:
            step(*args, **kwargs)
        except OSError as exc:
            crawl.local_failure = crawl.local_failure or LocalFailure.of(exc, crawl.config.out)


class OrderedCommit(Commit):
    """Another order than bfs: levels are corrected as shorter paths turn up,
    so a row says the level at its fetch and the end writes the final ones."""

    def queue_links(self, page: Page) -> list[QueuedUrl]:
        """Every new link is queued (one beyond --max-depth waits in the
        frontier for a shorter path), known ones may lower levels, and the
        order hears of the page."""
        crawl, item, digest = self.crawl, page.item, page.digest
        frontier, order = crawl.frontier, crawl.frontier.order
        duplicate = page.verdict.duplicate_of is not None
        if not duplicate:
            self.count_nofollow(digest)
        followed = digest.followed
        links = list(zip(followed, digest.link_relevance or (0.0,) * len(followed)))
        wanted = [url for url, score in links if order.admits(score, digest.relevance)]
        new = [] if duplicate else crawl.admission.enqueue(wanted, frontier.levels[item.id] + 1,
                                                           item.id)
        known = [(frontier.id_of(url), score) for url, score in links]
        targets, anchors = [t for t, _ in known if t is not None], [s for t, s in known if t is not None]
        started = time.thread_time()
        frontier.linked(item.id, targets)
        if not duplicate:
            order.page(item, targets, anchors, digest.relevance)
        order.cpu_seconds += time.thread_time() - started   # what ordering costs
        crawl.journal.scored(ScoredPage(item.id, duplicate, digest.relevance, targets, anchors))
        return new

    def index_row(self, page: Page) -> dict:
        row = super().index_row(page)
        # The level now; the final one is filled in at the end.
        row["level"] = row["level_at_fetch"] = self.crawl.frontier.levels[page.item.id]
        return row

    def ending(self) -> None:
        # Found only beyond --max-depth, by every path.
        self.crawl.tally.skipped["depth"] += self.crawl.frontier.deferred

    def final_levels(self):
        return self.crawl.frontier.levels

    def files_closed(self) -> None:
        # The table by final level, not the level a URL was queued at.
        self.crawl.tally.recount_levels(self.crawl.store.rows())

    def mode_stats(self) -> dict:
        frontier = self.crawl.frontier
        return {"order": {**frontier.order.stats(), "level_corrections": frontier.corrections,
                          "deferred_beyond_depth": frontier.deferred}}


class SharedCommit(Commit):
    """One worker of a crawl in Redis: the page's files first, then its
    content verdict and children in one Redis script (the commit); the row
    as it stands before the verdict goes with it, so that a worker killed
    right after can write it when it comes back (``join``)."""

    # Files are written before the commit, and ignored unless a row follows:
    # a worker killed just after the commit still has all of the page but its
    # row, which Redis keeps for it.
    STEPS = ("archive", "children", "verdict", "trace", "row", "done")
    # The commit's one Redis call gives the page's request slot back and
    # leases the URLs for the thread it frees: handing out first would cost
    # a call of its own.
    hand_out_first = False

    def __init__(self, crawl) -> None:
        super().__init__(crawl)
        self.local_ids: set[int] = set()   # ids of the rows this directory holds already
        self.pending: frozenset = frozenset()   # rows of the write-ahead, committed or not
        config = crawl.config
        # another --order: each link goes with its terms (urllist/orders.py, "Shared")
        self.order = None if config.order == "bfs" else make_order(config.order,
                                                                    order_params(config))

    def archive(self, page: Page) -> None:
        """edges.csv, extraction rows and WARC records. (No WARC revisit
        records: the original may be in another worker's archive.)"""
        self.crawl.store.add_edges(page.item.id, page.item.url, page.digest.links)
        super().archive(page)

    def __call__(self, item: QueuedUrl, visit: Visit) -> None:
        """The steps up to the commit; the rest once Redis has answered
        (``judged``), which may be after later pages' steps: the frontier holds
        an acknowledgement back while its chain's next page is being fetched."""
        page = Page(item, visit, visit.digest or Digest())
        for step in self.STEPS[:self.STEPS.index("children") + 1]:
            getattr(self, step)(page)

    def children(self, page: Page) -> None:
        """The commit: Redis judges the content, queues the children and takes
        the row."""
        crawl, item, digest = self.crawl, page.item, page.digest
        links = [(url, *trap_keys(url)) for url in digest.followed]
        if self.order is not None:
            links = self.scored(links, digest, crawl.frontier.terms_of(item.id), item.level)
        judged = exact_key(digest.content_md5) if crawl.config.content_dedup != "off" else ""
        crawl.frontier.commit(item, judged, links, self.expands(item),
                              index_row(item, page.visit, digest, 0, NO_VERDICT),
                              then=lambda commit: self.judged(page, commit))

    def scored(self, links: list[tuple], digest: Digest, held: tuple[float, ...],
               level: int) -> list[tuple]:
        """The links the order admits, each with its terms (Order.shared_terms)."""
        order = self.order
        anchor = digest.link_relevance or (0.0,) * len(links)
        kept = [(link, a) for link, a in zip(links, anchor) if order.admits(a, digest.relevance)]
        terms = order.shared_terms([link[0] for link, _ in kept], [a for _, a in kept],
                                   digest.relevance, held, level)
        return [(*link, *term) for (link, _), term in zip(kept, terms)]

    def judged(self, page: Page, commit) -> None:
        """Redis's answer, and the steps after it. Dropped if the lease was
        lost: another worker fetches the page again."""
        crawl, item = self.crawl, page.item
        if not commit.accepted:
            crawl.tally.skipped["lease-lost"] += 1
            return
        for reason, count in commit.skipped.items():
            crawl.tally.skipped[reason] += count
        if commit.duplicate_of is None:   # a duplicate's links are not queued anyway
            self.count_nofollow(page.digest)
        crawl.admission.trap_cut(commit.cut, item.level + 1)
        page.verdict = ContentVerdict(commit.duplicate_of, None, None)
        page.new_count = commit.new_count
        for step in self.STEPS[self.STEPS.index("children") + 1:]:
            getattr(self, step)(page)
            if page.dropped:
                return

    def verdict(self, page: Page) -> None:
        """Exact duplicates across all workers (Redis said, in ``children``);
        near ones among this worker's own pages only (a SimHash index is not
        shared). Dropped if this worker, reclaimed while alive and given the
        page again, has its row already."""
        original = page.verdict.duplicate_of
        if original is not None:
            page.digest = self.as_duplicate(page.digest, original)
        else:
            near = self.judge_content(page.item.id, page.digest)
            page.verdict = ContentVerdict(None, near.near_duplicate_of, near.hamming)
        page.dropped = page.item.id in self.local_ids

    def row(self, page: Page) -> None:
        super().row(page)
        self.local_ids.add(page.item.id)
        self.crawl.frontier.written(page.item.id)

    def restore(self, previous: PreviousCrawl) -> None:
        """Redis holds the queue and the seen-set: only which rows are here,
        and which may be committed without being here yet (``join``)."""
        self.local_ids = previous.done_ids
        self.pending = previous.pending

    def join(self) -> None:
        """Join the shared crawl: whatever this worker id held before (it was
        killed) goes back to the queue at once, and rows it committed but
        did not write are written now."""
        crawl = self.crawl
        freed, rows = crawl.frontier.join()
        announce(crawl.shared, crawl.config.out)
        (crawl.config.out / STATE_DIR / WORKER_ID_FILE).write_text(crawl.shared.worker + "\n",
                                                                  encoding="utf-8")
        if crawl.resumed:
            crawl.trace.resume(crawl.tally.urls, len(crawl.frontier))
        else:
            crawl.trace.start(crawl.config.seeds)
        for item_id in sorted(set(rows) - self.local_ids):
            self._recover_row(*rows[item_id])
        remove_files_of(crawl.config.out, self.pending - set(rows) - self.local_ids)
        for item_id in rows:
            crawl.frontier.written(item_id)
        crawl.tally.skipped["released-on-join"] += freed

    def _recover_row(self, new: int, original: int | None, row_json: str) -> None:
        crawl = self.crawl
        row = json.loads(row_json)
        row["new_links"] = new
        if original is not None:
            row["duplicate_of"] = original
            digest = self.as_duplicate(Digest(html_path=row["html_path"], text_path=row["text_path"],
                                              body_md5=row["body_md5"]), original)
            row["html_path"], row["text_path"] = digest.html_path, digest.text_path
        crawl.trace.fetch(row["level"], row["id"], row["status"] or 0, row["bytes"],
                          row["elapsed_ms"], row["url"], row["error"])
        crawl.store.add_row(row)
        crawl.tally.count_row({key: "" if value is None else str(value) for key, value in row.items()})

    def ending(self) -> None:
        crawl = self.crawl
        if not crawl.local_failure:   # pages fetched and held back are recorded
            crawl.frontier.flush()
        crawl.frontier.leave()   # what it still holds goes to the others now
        if not crawl.stop_reason and crawl.frontier.limit_reached:
            crawl.stop_reason = "max-pages"

    def mode_stats(self) -> dict:
        return {"shared": worker_stats(self.crawl.shared)}


def index_row(item: QueuedUrl, visit: Visit, digest: Digest, new_links: int,
              verdict: ContentVerdict) -> dict:
    result, saved = visit.result, bool(digest.html_path)
    return {
        "id": item.id, "url": item.url, "final_url": result.final_url, "level": item.level,
        "parent_id": item.parent_id, "status": result.status or "",
        "content_type": result.content_type, "encoding": result.encoding,
        "bytes": len(result.body), "text_chars": digest.text_chars if saved else "",
        "filtered_ratio": digest.filtered_ratio if saved else "",
        "out_links": len(digest.links), "new_links": new_links, "fetched_at": visit.fetched_at,
        "elapsed_ms": round(result.elapsed_ms, 1), "html_path": digest.html_path,
        "text_path": digest.text_path, "error": result.error or digest.error,
        "title": digest.title, "content_md5": digest.content_md5, "body_md5": digest.body_md5,
        "simhash": "" if digest.simhash is None else f"{digest.simhash:016x}",
        "duplicate_of": verdict.duplicate_of, "near_duplicate_of": verdict.near_duplicate_of,
        "hamming": verdict.hamming, "level_at_fetch": item.level,
        "relevance": digest.relevance, **validators(result.headers), "visits": 1, "changes": 0,
        "via": _via(item), "robots_directives": digest.robots,
    }


def _via(item: QueuedUrl) -> str:
    """How the crawl came to the URL: only seeds and sitemap URLs have no parent."""
    if item.parent_id is not None:
        return "link"
    return "seed" if item.level == 0 else "sitemap"


def validators(headers: dict[str, str]) -> dict[str, str]:
    """The final response's ETag and Last-Modified: what a revisit sends back."""
    return {"etag": headers.get("etag", ""), "last_modified": headers.get("last-modified", "")}

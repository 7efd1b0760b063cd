"""The CPU-heavy half of handling a page, so it can run in worker processes.

A *digest* of a fetched HTML page is: one parse (TextFilter + GetURLs), the
stateless half of URL_Filter (normalize each link, apply the rules), the
page's content fingerprints (MD5 of its text and body, SimHash of its text),
the extraction patterns, given a topic the relevance of the page's text and
of each link's anchor texts (textfilter.relevance), and writing
``pages/<id>.html`` and ``text/<id>.txt``. What needs crawl state (the
URL-seen set, the content-seen memory, trap counters, frontier, index)
stays with the Controller, so dedup stays global and levels stay exact.

What a page asks of robots is decided here, where its files are written:
the directives of ``<meta name="robots">``, of ``<meta name=TOKEN>`` (the
product token of --user-agent) and of the X-Robots-Tag header lines that
apply to TOKEN. ``noindex`` (or ``none``): the page's files are not
written and its row keeps no title or fingerprints; ``nofollow`` (or
``none``): its links are still listed (edges.csv: the page does link to
them) but the Controller queues none of them (``Digest.followed``). A
``<meta http-equiv="refresh">`` (or a Refresh header) to another URL,
sooner than REFRESH_DELAY_LIMIT, is one more link of the page, its first:
queued at the next level like any link (through URL_Filter and the
URL-seen set), so levels stay exact.

Why processes: one CPython process runs Python on one core at a time (the
GIL); with threads alone, parsing starves the fetch threads and the loop.
Fetching stays in the Controller's threads, where robots.txt and the
per-host politeness clocks live in one place and stay exact.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections import Counter
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textfilter import parse
from textfilter.parse import filtered_ratio
from textfilter.parsed import Parsed
from textfilter.robotsmeta import Refresh, header_directives, parse_refresh
from textfilter.fingerprint import body_md5, simhash, text_md5
from textfilter.maintext import main_text
from urlfilter import UrlRules, document_base, normalize

if TYPE_CHECKING:
    from textfilter.relevance import Topic

# A refresh is followed only if it comes sooner than this (seconds): a page
# that reloads or logs out after minutes is not redirecting anyone (Scrapy's
# rule, with its METAREFRESH_MAXDELAY default).
REFRESH_DELAY_LIMIT = 100
NOINDEX, NOFOLLOW = "noindex", "nofollow"


@dataclass(frozen=True)
class DigestJob:
    page_id: int
    final_url: str      # base for relative links (before <base href>)
    body: bytes         # saved byte for byte
    text: str           # decoded HTML
    suffix: str = ""    # after the files' names: a revisit's new version waits as <id>.html.new
    robots_tags: tuple[str, ...] = ()   # the response's X-Robots-Tag header lines
    refresh: str | None = None          # the response's Refresh header, if it had one


@dataclass(frozen=True)
class Digest:
    title: str = ""
    text_chars: int = 0
    source_chars: int = 0
    filtered_ratio: float = 0.0
    links: tuple[str, ...] = ()                          # distinct, normalized, in-rules, document order
    skipped: dict[str, int] = field(default_factory=dict)  # links dropped, by reason
    html_path: str = ""
    text_path: str = ""
    error: str = ""                                      # "parse: ..." when the page could not be parsed
    content_md5: str = ""                                # of the normalized text (textfilter.fingerprint)
    body_md5: str = ""                                   # of the body bytes as saved
    simhash: int | None = None                           # 64-bit SimHash of the text (near mode only)
    extracted: dict[str, list[str]] | None = None        # --extract results; None: not a page to extract from
    relevance: float | None = None                       # of the text to the topic, 0-1; None: no topic
    link_relevance: tuple[float, ...] = ()               # per link in links: its best anchor text's relevance
    robots: str = ""                                     # obeyed: "noindex", "nofollow", "noindex,nofollow"

    @property
    def followed(self) -> tuple[str, ...]:
        """The links the page lets a crawler follow: none under nofollow."""
        return () if NOFOLLOW in self.robots.split(",") else self.links


@dataclass(frozen=True)
class Digester:
    out: Path
    rules: UrlRules
    extractor: str = "bs4"
    fold_www: bool = False
    drop_query: bool = False
    drop_params: tuple[str, ...] = ()
    text_mode: str = "plain"          # plain | main (textfilter.maintext)
    near: bool = False                # compute SimHash (only --content-dedup near uses it)
    extraction: object = None         # a textfilter.extract.Extraction, or None
    topic: Topic | None = None        # score the text and the anchors against it (focused orders)
    robots_token: str = ""            # obey robots meta and X-Robots-Tag for this token; "": ignore them

    def __call__(self, job: DigestJob) -> Digest:
        try:
            parsed = parse(job.text, job.final_url, self.extractor, self._robots_names)
            text = main_text(job.text) if self.text_mode == "main" else parsed.text
            extracted = self._extract(job)
        except Exception as exc:  # one odd page must not end a long crawl
            return Digest(error=f"parse: {type(exc).__name__}: {exc}")
        base = document_base(job.final_url, parsed.base_href)
        links, skipped = self.filter_links(self._refresh_link(parsed, job, base) + parsed.links, base)
        relevance, link_relevance = self._relevance(job.text, text, links, base)
        robots = self._robots(parsed, job)
        if job.page_id < 0:   # fetched before it was queued: only its links, no files yet
            return Digest(links=links, relevance=relevance, link_relevance=link_relevance,
                          robots=robots)
        if NOINDEX in robots:
            return Digest(links=links, skipped=skipped, relevance=relevance,
                          link_relevance=link_relevance, robots=robots)
        html_path, text_path = f"pages/{job.page_id}.html{job.suffix}", f"text/{job.page_id}.txt{job.suffix}"
        self._save(html_path, job.body, text_path, text.encode("utf-8"))
        return Digest(parsed.title, len(text), parsed.source_chars,
                      filtered_ratio(len(text), parsed.source_chars), links, skipped,
                      html_path, text_path, content_md5=text_md5(text), body_md5=body_md5(job.body),
                      simhash=simhash(text) if self.near else None, extracted=extracted,
                      relevance=relevance, link_relevance=link_relevance, robots=robots)

    @property
    def _robots_names(self) -> tuple[str, ...]:
        return ("robots", self.robots_token) if self.robots_token else ()

    def _robots(self, parsed: Parsed, job: DigestJob) -> str:
        """The directives this page's meta and header give the crawler, as
        index.csv's robots_directives says them ("none" is both)."""
        if not self.robots_token:
            return ""
        said = parsed.robots | header_directives(job.robots_tags, self.robots_token)
        if "none" in said:
            said = said | {NOINDEX, NOFOLLOW}
        return ",".join(word for word in (NOINDEX, NOFOLLOW) if word in said)

    def _refresh_link(self, parsed: Parsed, job: DigestJob, base: str | None) -> tuple[str, ...]:
        """The refresh target as a link, unless it is late or the page itself."""
        refresh = _header_refresh(job) or parsed.refresh
        if refresh is None or refresh.url is None or refresh.delay >= REFRESH_DELAY_LIMIT:
            return ()
        target = self.normalize(refresh.url, base)
        return () if target is not None and target == self.normalize(job.final_url, None) \
            else (refresh.url,)

    def _save(self, *paths_and_bytes) -> None:
        """Write the page's files. A file this machine cannot write (a full
        disk) is no fault of the page: OSError goes to the Controller, which
        stops the crawl without recording the page, and no part of its files
        is left to take space."""
        pairs = list(zip(paths_and_bytes[::2], paths_and_bytes[1::2]))
        try:
            for path, data in pairs:
                (self.out / path).write_bytes(data)
        except OSError as exc:
            for written, _ in pairs:
                with suppress(OSError):
                    (self.out / written).unlink(missing_ok=True)
            raise OSError(exc.errno, exc.strerror, path) from None

    def _extract(self, job: DigestJob) -> dict[str, list[str]] | None:
        if self.extraction is None or not self.extraction.applies_to(job.final_url):
            return None
        return self.extraction.extract(job.text, job.final_url)

    def _relevance(self, html: str, text: str, links: tuple[str, ...],
                   base: str | None) -> tuple[float | None, tuple[float, ...]]:
        """The text's relevance to the topic, and each link's: the best over
        the anchors that lead to it (0.0 for a link only frames lead to)."""
        if self.topic is None:
            return None, ()
        from textfilter.relevance import anchors   # loaded only for --topic
        best = dict.fromkeys(links, 0.0)
        urls: dict[str, str | None] = {}      # menus repeat hrefs and anchor texts:
        scores: dict[str, float] = {}         # normalize and score each once
        for href, anchor in anchors(html):
            if href not in urls:
                urls[href] = self.normalize(href, base)
            if (url := urls[href]) in best:
                if anchor not in scores:
                    scores[anchor] = self.topic.relevance(anchor)
                best[url] = max(best[url], scores[anchor])
        return self.topic.relevance(text), tuple(best.values())

    def filter_links(self, hrefs, base: str | None) -> tuple[tuple[str, ...], dict[str, int]]:
        """Distinct normalized links that pass the rules, and counts of the rest."""
        accepted: dict[str, None] = {}
        skipped: Counter[str] = Counter()
        for href in hrefs:
            url = self.normalize(href, base)
            reason = "not-http" if url is None else self.rules.reject_reason(url)
            if reason:
                skipped[reason] += 1
            else:
                accepted[url] = None
        return tuple(accepted), dict(skipped)

    def normalize(self, href: str, base: str | None) -> str | None:
        return normalize(href, base, fold_www=self.fold_www, drop_query=self.drop_query,
                         drop_params=self.drop_params)


def _header_refresh(job: DigestJob) -> Refresh | None:
    """A Refresh header, read as the meta's content is: browsers obey it, and
    it comes before any <meta> (the HTML Standard runs the same steps on it
    when the document is created)."""
    return None if job.refresh is None else parse_refresh(job.refresh)


class DigestPool:
    """Digests in ``processes`` worker processes.

    "spawn", not "fork": forking a process that runs threads (fetchers, a demo
    server) can copy a lock in its locked state. Not "forkserver" either: its
    workers are not our children, so their CPU time would be missing from the
    crawl's own accounting (``/usr/bin/time``, getrusage). A worker imports
    only textfilter and urlfilter, about 0.1 s.

    Workers ignore the stop signals (STOP_SIGNALS): a signal to the process
    group reaches them too, and only the Controller decides how to stop.
    They are spawned with those signals blocked, and ignore them before
    they unblock them (``_start_worker``): a Ctrl-C while a worker starts
    Python and its imports waits, and is then dropped, instead of ending the
    worker with a KeyboardInterrupt traceback. The Controller gets the
    signal it too was sent as soon as the workers are started.
    """

    def __init__(self, digester: Digester, processes: int) -> None:
        # Loaded here, at the loop's first quiet moment, not before the first requests.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        context = multiprocessing.get_context("spawn")
        self._manager: threading.Thread | None = None   # the pool's, once stop() let it go
        with _stop_signals_blocked():
            self._pool = ProcessPoolExecutor(processes, mp_context=context,
                                             initializer=_start_worker, initargs=(digester,))
            # Start every worker now (each submit that finds no idle worker spawns
            # one), while the main module is hidden: a spawned worker would import
            # the user's script again, and a script without an
            # `if __name__ == "__main__":` guard would start a crawl in each worker.
            # Blocked again: starting multiprocessing's resource tracker above
            # unblocks SIGINT and SIGTERM for its own reasons.
            with _stop_signals_blocked(), _main_module_hidden():
                self._starting = [self._pool.submit(int) for _ in range(processes)]

    @property
    def started(self) -> bool:
        """Whether a worker has started: until then (its interpreter and
        imports, a few tenths of a second) a page sent to the pool waits."""
        return any(future.done() for future in self._starting)

    def submit(self, job: DigestJob) -> Future:
        return self._pool.submit(_digest_in_worker, job)

    def stop(self) -> None:
        """Tell the workers to end (what is queued is dropped), without waiting for them."""
        # shutdown(wait=False) forgets the pool's manager thread, and a later
        # shutdown(wait=True) then returns without waiting for it: kept for close().
        self._manager = getattr(self._pool, "_executor_manager_thread", None) or self._manager
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers and wait until they, and the pool's manager
        thread, have ended. An exit while that thread still closes its pipe
        races the pool module's own exit handler, which may write to the
        pipe as it closes (EBADF, a traceback and exit status 1)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._manager is not None:
            self._manager.join()


# Sent to a whole process group by a terminal (Ctrl-C, a hang-up), timeout,
# kill -- -PGID, systemd, docker stop, Slurm.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _stop_signals_blocked():
    """STOP_SIGNALS held back in this thread, and in the processes it starts
    (a child inherits the signal mask across fork and exec). The process
    still gets them: the kernel hands them to a thread that does not block them."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _main_module_hidden():
    main = sys.modules["__main__"]
    saved = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


_digester: Digester | None = None   # one per worker process, set by _start_worker


def _start_worker(digester: Digester) -> None:
    global _digester
    _digester = digester
    # Only the Controller decides how to stop, and it ends this process when
    # it closes the pool. Ignoring a signal drops it if it is pending.
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _die_with_parent()
    # Once the pool lets it go, multiprocessing has done its own cleanup and
    # the interpreter would free every module the digest loaded (~20 ms
    # that the crawl's end waits for); this process holds no open file. (The
    # status is then 0 whatever it was: the pool tells a dead worker by its
    # process handle, not by its status.)
    atexit.register(os._exit, 0)


def _digest_in_worker(job: DigestJob) -> Digest:
    return _digester(job)


def _die_with_parent() -> None:
    """On Linux, ask the kernel to kill this worker when its parent dies
    (a SIGKILLed crawl must not leave parser processes behind)."""
    if sys.platform.startswith("linux"):
        import ctypes   # only a parser process needs it
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)   # 1 = PR_SET_PDEATHSIG
        except OSError:
            pass
    # A parent that died while this worker started (the crawl reads its
    # first pages itself meanwhile, so it may be killed by then) sent no
    # signal: the worker would wait for work forever.
    import multiprocessing
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)

"""Live progress: a redrawn line on a terminal, plain lines anywhere else,
rates over a sliding window, at most a few redraws a second, and the two
callbacks wired into a real crawl."""
import io
import re

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.progress import DRAW_SECONDS, LOG_SECONDS, Progress, RateWindow
from controller.tally import LevelTally, Snapshot
from demosite import Response

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def snapshot(elapsed, urls, level=0, level_done=None, level_size=100, pages=None, errors=0,
             kb=None, ahead=0):
    return Snapshot(elapsed=elapsed, level=level,
                    level_done=urls if level_done is None else level_done,
                    level_size=level_size, urls=urls, pages=urls if pages is None else pages,
                    errors=errors, bytes=(urls * 4 if kb is None else kb) * 1024,
                    queue_total=level_size, ahead=ahead)


def feed(progress, seconds, step=0.2, rate=10):
    """Snapshots of a crawl fetching `rate` URLs a second, one every `step` s."""
    for k in range(1, round(seconds / step) + 1):
        t = k * step
        progress.on_progress(snapshot(t, int(t * rate)))


# -- off a terminal ----------------------------------------------------------
def test_off_a_terminal_only_plain_lines_every_ten_seconds():
    stream = io.StringIO()
    progress = Progress(stream)
    feed(progress, 25)
    progress.on_level(0, LevelTally(urls=250, pages=249, errors=1, new_urls=80, m=331))
    progress.close()
    out = stream.getvalue()
    assert "\r" not in out and not ESCAPE.search(out)
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["progress 0", "progress 0", "level 0 done"]
    assert lines[0] == ("progress 0:10: level 0 100/100, 100 URLs, 100 pages, 0 errors, "
                        "10.0 URLs/s, 40 KB/s")
    assert lines[1].startswith("progress 0:20: level 0 200/100")
    assert lines[2] == ("level 0 done: 250 URLs fetched (249 pages, 1 errors), "
                        "80 new URLs queued, queue total 331")
    assert len(lines) == 25 // LOG_SECONDS + 1


def test_a_stream_without_isatty_counts_as_not_a_terminal():
    class Bare:
        def __init__(self):
            self.text = []

        def write(self, text):
            self.text.append(text)

        def flush(self):
            pass

    stream = Bare()
    progress = Progress(stream)
    feed(progress, 11)
    assert not progress.live and "".join(stream.text).startswith("progress 0:10:")


# -- on a terminal -------------------------------------------------------------
def test_on_a_terminal_one_line_is_redrawn_in_place():
    stream = Terminal()
    progress = Progress(stream)
    progress.on_progress(snapshot(0.2, 30, level=2, level_done=12, level_size=40, errors=1))
    out = ESCAPE.sub("", stream.getvalue())
    assert out.startswith("\r") and "\n" not in out
    assert re.fullmatch(r"\rlevel 2  \[#{7}-{17}\]  12/40  30 URLs  30 pages  1 errors  "
                        r"0\.0 URLs/s  0 KB/s  0:00", out)


def test_on_a_terminal_a_finished_level_replaces_the_live_line_and_stays():
    stream = Terminal()
    progress = Progress(stream)
    feed(progress, 2)
    progress.on_level(0, LevelTally(urls=20, pages=20, errors=0, new_urls=5, m=25))
    progress.on_progress(snapshot(2.4, 22, level=1, level_done=2, level_size=5))
    progress.close()
    screen = terminal_screen(stream.getvalue())
    assert screen == [
        "level 0 done: 20 URLs fetched (20 pages, 0 errors), 5 new URLs queued, queue total 25",
        # 20 URLs (80 KB) between the first snapshot (0.2 s) and the last (2.4 s)
        "level 1  [#########---------------]  2/5  22 URLs  22 pages  0 errors  9.1 URLs/s  "
        "36 KB/s  0:02"]
    assert stream.getvalue().endswith("\n")


def test_the_live_rate_is_over_the_last_seconds_not_since_the_start():
    stream = Terminal()
    progress = Progress(stream)
    for k in range(1, 101):            # 10 s at 10 URLs/s, then 6 s at 50 URLs/s
        progress.on_progress(snapshot(k * 0.1, k))
    for k in range(1, 61):
        progress.on_progress(snapshot(10 + k * 0.1, 100 + 5 * k, kb=(100 + 5 * k) * 2))
    progress.close()
    last = terminal_screen(stream.getvalue())[-1]
    assert "50.0 URLs/s" in last and "100 KB/s" in last and last.endswith("0:16")


def test_the_line_is_redrawn_at_most_five_times_a_second():
    stream = Terminal()
    progress = Progress(stream)
    feed(progress, 3, step=0.01)        # 300 snapshots in 3 s
    draws = stream.getvalue().count("\r")
    assert draws <= 3 / DRAW_SECONDS + 1
    assert draws >= 3 / DRAW_SECONDS - 1   # and it does keep moving


def terminal_screen(output):
    """The lines a terminal would show: \\r moves back to column 0, escapes are invisible."""
    lines, column = [""], 0
    for piece in re.split(r"(\r|\n)", ESCAPE.sub("", output)):
        if piece == "\n":
            lines.append("")
            column = 0
        elif piece == "\r":
            column = 0
        else:
            line = lines[-1]
            lines[-1] = line[:column] + piece + line[column + len(piece):]
            column += len(piece)
    return [line.rstrip() for line in lines if line.strip()]


# -- the rate window ------------------------------------------------------------
def test_rate_window_measures_the_last_seconds():
    window = RateWindow(seconds=5)
    assert window.rates().urls_per_second == 0.0
    window.add(0.0, 0, 0)
    assert window.rates().urls_per_second == 0.0      # one sample: no span yet
    for t in range(1, 11):                             # 10 URLs/s, 10 KB/s
        window.add(float(t), 10 * t, 10 * 1024 * t)
    for t in range(11, 17):                            # then 40 URLs/s, 80 KB/s
        window.add(float(t), 100 + 40 * (t - 10), 102400 + 80 * 1024 * (t - 10))
    rates = window.rates()
    assert rates.urls_per_second == pytest.approx(40.0)
    assert rates.kb_per_second == pytest.approx(80.0)


# -- wired into real crawls --------------------------------------------------------
def crawl_with(progress, seeds, out, depth):
    config = CrawlConfig(seeds=seeds, out=out, max_depth=depth, max_pages=0, workers=4,
                         per_host=4, delay=0, retries=0, processes=0, progress=True)
    crawl = Crawl(config, on_progress=progress.on_progress, on_level=progress.on_level)
    try:
        return crawl.run()
    finally:
        progress.close()


def test_a_real_crawl_off_a_terminal_prints_one_line_per_level(demo_server, tmp_path):
    stream = io.StringIO()
    stats = crawl_with(Progress(stream), (demo_server.url,), tmp_path / "out", depth=3)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert [line for line in lines if not line.startswith("progress ")] == [
        f"level {row['level']} done: {row['urls']} URLs fetched ({row['pages']} pages, "
        f"{row['errors']} errors), {row['new_urls']} new URLs queued, queue total {row['m']}"
        for row in stats["levels"]]


def test_a_real_crawl_on_a_terminal_draws_the_live_line(serve, tmp_path):
    import time

    def handler(request):
        if request.path == "/":
            body = b'<a href="/slow">slow</a> <a href="/fast">fast</a>'
        elif request.path == "/slow":
            time.sleep(0.7)   # the page under test is slow: the display must keep moving
            body = b"<p>slow</p>"
        elif request.path == "/fast":
            body = b"<p>fast</p>"
        else:
            return Response(404, {"Content-Type": "text/plain"}, b"no")
        return Response(200, {"Content-Type": "text/html"}, body)

    stream = Terminal()
    with serve(handler) as (base_url, log):
        stats = crawl_with(Progress(stream), (base_url,), tmp_path / "out", depth=1)
    screen = terminal_screen(stream.getvalue())
    assert stats["urls"] == 3
    assert screen[0].startswith("level 0 done: 1 URLs fetched")
    assert screen[1].startswith("level 1 done: 2 URLs fetched")
    # While /slow was pending the live line was drawn: level 1, /fast done, /slow not yet.
    assert re.search(r"\rlevel 1  \[#+-+\]  1/2  2 URLs", ESCAPE.sub("", stream.getvalue()))


def test_a_message_during_the_crawl_gets_its_own_line_and_the_live_line_comes_back():
    stream = Terminal()
    progress = Progress(stream)
    progress.on_progress(snapshot(0.2, 5, level_done=5, level_size=10))
    progress.echo("stopping: finishing the requests in flight")
    progress.on_progress(snapshot(0.4, 6, level_done=6, level_size=10))
    progress.close()
    screen = terminal_screen(stream.getvalue())
    assert screen[0] == "stopping: finishing the requests in flight"
    assert screen[1].startswith("level 0  [") and "6/10  6 URLs" in screen[1]
    assert len(screen) == 2
    plain = io.StringIO()
    Progress(plain).echo("stopping: finishing the requests in flight")
    assert plain.getvalue() == "stopping: finishing the requests in flight\n"


def test_pages_fetched_ahead_of_their_level_are_counted_in_the_status_line():
    progress = Progress(io.StringIO())
    line = progress.status_line(snapshot(12.0, 40, ahead=17))
    assert ", 40 URLs, 40 pages, 0 errors, 17 ahead, " in line
    assert "ahead" not in progress.status_line(snapshot(12.0, 40))

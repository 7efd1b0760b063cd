"""One picture of a crawl: `crawler report DIR --plot OUT.png`.

Owns the figure: pages fetched over crawl time (cumulative, and the rate
per time bucket on a second axis), pages per level as bars, and the HTTP
status split as bars, in one PNG a person can read at a glance.

matplotlib is an optional dependency (the ``plot`` extra): it is imported
only when a plot is asked for, and its absence is a one-line ReportError
saying how to install it. Only the Agg renderer is used, through
``matplotlib.figure.Figure`` without pyplot, so no display is needed and
no global backend state of the calling process is changed.
"""
from __future__ import annotations

import importlib.util

from itertools import accumulate
from pathlib import Path

from controller.readers.files import ReportError
from controller.readers.report import Report, build_report, duration_text

INSTALL_HINT = "from the repository: .venv/bin/pip install -e '.[plot]' (or: pip install matplotlib)"
FIGURE_INCHES = (11, 8)
DPI = 100
HEADROOM = 1.3    # bar charts reach 1/1.3 of their height: room for labels and the legend
# First character of a status (as in Count.value; "n" for "none") -> legend label, colour.
STATUS_CLASSES = (("2", "2xx success", "#2e7d32"), ("3", "3xx redirect", "#1565c0"),
                  ("4", "4xx client error", "#ef6c00"), ("5", "5xx server error", "#c62828"),
                  ("n", "no response (robots, network)", "#757575"))
STATUS_CLASS = {key: (label, colour) for key, label, colour in STATUS_CLASSES}


def check_plotting() -> None:
    """ReportError, with how to install it, when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ReportError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")


def write_plot(report_or_dir: Report | Path | str, out_png: Path) -> Path:
    """Draw the crawl (a Report, or a crawl directory to build one from) into out_png.

    Raises ReportError when matplotlib is missing, the directory holds no
    crawl, or the PNG cannot be written.
    """
    report = report_or_dir if isinstance(report_or_dir, Report) else build_report(Path(report_or_dir))
    figure = _new_figure()
    grid = figure.add_gridspec(2, 2, height_ratios=(1.1, 1))
    _draw_timeline(figure.add_subplot(grid[0, :]), report)
    _draw_levels(figure.add_subplot(grid[1, 0]), report)
    _draw_statuses(figure.add_subplot(grid[1, 1]), report)
    figure.suptitle(_title(report), fontsize=13, fontweight="bold")
    out_png = Path(out_png)
    try:
        figure.savefig(out_png, format="png")
    except OSError as exc:
        raise ReportError(f"cannot write {out_png}: {exc.strerror or exc}") from None
    return out_png


def _new_figure():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReportError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}") from None
    figure = Figure(figsize=FIGURE_INCHES, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)   # attaches itself: the figure renders with Agg, no display
    return figure


def _title(report: Report) -> str:
    state = "finished" if report.finished else "PARTIAL (running or killed)"
    seeds = ", ".join(report.seeds) or report.crawl_dir
    return f"Crawl of {seeds}: {report.urls} URLs in {duration_text(report.speed.crawl_seconds)}, {state}"


def _draw_timeline(axes, report: Report) -> None:
    timeline = report.timeline
    width = timeline.bucket_seconds
    scale, unit = (60.0, "min") if len(timeline.fetches) * width > 600 else (1.0, "s")
    ends = [(k + 1) * width / scale for k in range(len(timeline.fetches))]
    axes.plot([0.0, *ends], [0, *accumulate(timeline.fetches)], color="#1565c0", linewidth=2,
              label="pages fetched (cumulative)")
    axes.set_xlabel(f"crawl time ({unit})")
    axes.set_ylabel("pages fetched (cumulative)", color="#1565c0")
    axes.set_ylim(bottom=0)
    axes.set_xlim(left=0)
    rate_axes = axes.twinx()
    starts = [k * width / scale for k in range(len(timeline.fetches))]
    rate_axes.bar(starts, [n / width for n in timeline.fetches], width=width / scale, align="edge",
                  color="#ef6c00", alpha=0.35, label=f"URLs/s (per {width:g} s bucket)")
    rate_axes.set_ylabel("URLs/s", color="#ef6c00")
    # The cumulative line in front of the rate bars, which live on the twin axes.
    axes.set_zorder(rate_axes.get_zorder() + 1)
    axes.patch.set_visible(False)
    _mark_levels_and_resumes(axes, timeline, scale)
    handles = axes.get_legend_handles_labels()[0] + rate_axes.get_legend_handles_labels()[0]
    axes.legend(handles=handles, loc="upper left")
    axes.set_title("Pages fetched over time (every fetched URL, errors included)")
    if not timeline.fetches:
        axes.text(0.5, 0.5, "no fetches in trace.log", transform=axes.transAxes, ha="center")


def _mark_levels_and_resumes(axes, timeline, scale: float) -> None:
    """Vertical lines where a level finished (labelled Lk) and where a --resume began."""
    for k, (level, at) in enumerate(timeline.level_ends):
        axes.axvline(at / scale, color="#9e9e9e", linestyle=":", linewidth=1,
                     label="level k finished (Lk)" if k == 0 else None)
        axes.annotate(f"L{level}", (at / scale, 0), xycoords=("data", "axes fraction"),
                      xytext=(2, 3), textcoords="offset points", fontsize=8, color="#424242")
    for k, at in enumerate(timeline.resumed_at):
        axes.axvline(at / scale, color="grey", linestyle="--", label="resumed" if k == 0 else None)


def _draw_levels(axes, report: Report) -> None:
    levels = [row.level for row in report.levels]
    saved = [row.pages for row in report.levels]
    others = [row.urls - row.pages for row in report.levels]
    axes.bar(levels, saved, color="#2e7d32", label="HTML pages saved")
    axes.bar(levels, others, bottom=saved, color="#c62828", alpha=0.7,
             label="not saved (errors, non-HTML)")
    for row in report.levels:
        suffix = "" if row.m is not None else " (running)"
        axes.annotate(f"{row.urls}{suffix}", (row.level, row.urls), ha="center", va="bottom",
                      xytext=(0, 2), textcoords="offset points", fontsize=9)
    axes.set_xticks(levels)
    axes.set_xlabel("level (link distance from the seeds)")
    axes.set_ylabel("URLs fetched")
    axes.set_title("Pages per level (breadth-first)")
    axes.set_ylim(0, HEADROOM * max([row.urls for row in report.levels], default=1))
    axes.legend(loc="best", fontsize=9)


def _draw_statuses(axes, report: Report) -> None:
    labelled = set()
    for count in report.status_codes:
        key = "n" if count.value == "none" else count.value[0]
        label, colour = STATUS_CLASS.get(key, STATUS_CLASS["n"])
        name = "no response" if count.value == "none" else count.value
        # One legend entry per class of status, however many codes it has.
        bars = axes.bar(name, count.count, color=colour, label=None if key in labelled else label)
        labelled.add(key)
        axes.bar_label(bars, labels=[f"{count.count} ({100 * count.count / report.urls:.1f} %)"],
                       fontsize=9, padding=2)
    axes.set_xlabel("HTTP status (after redirects)")
    axes.set_ylabel("URLs")
    axes.set_title("Status codes")
    axes.set_ylim(0, HEADROOM * max([c.count for c in report.status_codes], default=1))
    if labelled:
        axes.legend(loc="upper right", fontsize=9)

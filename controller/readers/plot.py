"""Pictures of a crawl: `crawler report DIR --plot OUT.png`, and the figures
of `crawler report DIR --format html`.

Owns the figures: pages fetched over crawl time (cumulative, and the rate
per time bucket on a second axis), pages per level as bars (saved, duplicates
not saved again, the rest), exact and near duplicates per level, and the
HTTP status split. ``write_plot`` draws them all into one PNG a person can
read at a glance; ``figures_svg`` draws each alone, as SVG text, for the
HTML report. Every legend sits below its plot, outside it, so it never
covers a bar, however the bars fall.

matplotlib is an optional dependency (the ``plot`` extra): it is imported
only when a figure is asked for, and its absence is a one-line ReportError
saying how to install it. Only the Agg and SVG renderers are used, through
``matplotlib.figure.Figure`` without pyplot, so no display is needed and
no global backend state of the calling process is changed.
"""
from __future__ import annotations

import importlib.util
import io
from itertools import accumulate
from pathlib import Path

from controller.readers.export import written_whole
from controller.readers.files import ReportError
from controller.readers.report import Report, build_report, duration_text, grouped_levels
from controller.readers.summary import LEVELS_ALONE, level_ranges

INSTALL_HINT = "from the repository: .venv/bin/pip install -e '.[plot]' (or: pip install matplotlib)"
FIGURE_INCHES = (13, 8.5)     # the PNG: the timeline above, three panels below
PANEL_INCHES = {"timeline": (10, 3.8), "levels": (5.6, 3.8), "duplicates": (5.6, 3.8),
                "statuses": (5.6, 3.8)}   # each figure of the HTML report
DPI = 100
MARK_GAP = 0.03   # of the timeline's span: the least room between two level marks, past LEVELS_ALONE
HEADROOM = 1.15   # bar charts reach 1/1.15 of their height: room for the count above each bar
# First character of a status (as in Count.value; "n" for "none") -> legend label, colour.
STATUS_CLASSES = (("2", "2xx success", "#2e7d32"), ("3", "3xx redirect", "#1565c0"),
                  ("4", "4xx client error", "#ef6c00"), ("5", "5xx server error", "#c62828"),
                  ("n", "no response (robots, network)", "#757575"))
STATUS_CLASS = {key: (label, colour) for key, label, colour in STATUS_CLASSES}


def can_plot() -> bool:
    """Whether matplotlib is installed (without importing it)."""
    return importlib.util.find_spec("matplotlib") is not None


def check_plotting() -> None:
    """ReportError, with how to install it, when matplotlib is missing."""
    if not can_plot():
        raise ReportError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")


def write_plot(report_or_dir: Report | Path | str, out_png: Path) -> Path:
    """Draw the crawl (a Report, or a crawl directory to build one from) into out_png.

    Raises ReportError when matplotlib is missing, the directory holds no
    crawl, or the PNG cannot be written.
    """
    report = report_or_dir if isinstance(report_or_dir, Report) else build_report(Path(report_or_dir))
    figure = draw(report)
    out_png = Path(out_png)
    with written_whole(out_png) as f:   # ReportError, and no half PNG, if it cannot be written
        figure.savefig(f, format="png")
    return out_png


def draw(report: Report):
    """The whole picture as one matplotlib Figure: each panel in a subfigure of its own."""
    figure = _new_figure(FIGURE_INCHES)
    top, bottom = figure.subfigures(2, 1, height_ratios=(1.1, 1))
    _draw_timeline(top, report)
    for subfigure, panel in zip(bottom.subfigures(1, 3), ("levels", "duplicates", "statuses")):
        PANELS[panel](subfigure, report)
    figure.suptitle(_title(report), fontsize=13, fontweight="bold")
    return figure


def figures_svg(report: Report) -> dict[str, str]:
    """Panel name -> that panel alone, as the text of an SVG file (text drawn
    as paths: the file needs no fonts)."""
    svgs = {}
    for name, draw_panel in PANELS.items():
        figure = _new_figure(PANEL_INCHES[name])
        draw_panel(figure, report)
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
        svgs[name] = out.getvalue()
    return svgs


def _new_figure(inches: tuple[float, float]):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReportError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}") from None
    figure = Figure(figsize=inches, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)   # attaches itself: the figure renders with Agg, no display
    return figure


def _title(report: Report) -> str:
    state = "finished" if report.finished else "PARTIAL (running or killed)"
    seeds = ", ".join(report.seeds) or report.crawl_dir
    return f"Crawl of {seeds}: {report.urls} URLs in {duration_text(report.speed.crawl_seconds)}, {state}"


def _legend_below(figure, handles, ncols: int) -> None:
    """Below the plot, outside it (constrained layout makes the room), so no bar
    is ever under it."""
    figure.legend(handles=handles, loc="outside lower center", ncols=ncols, fontsize=9,
                  frameon=False)


def _draw_timeline(figure, report: Report) -> None:
    axes = figure.add_subplot()
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
    _legend_below(figure, handles, ncols=len(handles))
    axes.set_title("Pages fetched over time (every fetched URL, errors included)")
    if not timeline.fetches:
        axes.text(0.5, 0.5, "no fetches in trace.log", transform=axes.transAxes, ha="center")


def _mark_levels_and_resumes(axes, timeline, scale: float) -> None:
    """Vertical lines where a level finished (labelled Lk) and where a --resume
    began; past a few dozen levels only where a range of the levels table ends."""
    deepest = max((level for level, _ in timeline.level_ends), default=0)
    range_ends = {last for _, last in level_ranges(deepest)}
    ends = [(level, at) for level, at in timeline.level_ends if level in range_ends]
    # Levels that end close together (a trap's, a level of one page each)
    # would draw one grey smear and unreadable labels: past LEVELS_ALONE
    # levels, a line is drawn only a little apart from the last one drawn.
    gap = MARK_GAP * max((at for _, at in ends), default=0.0) if deepest >= LEVELS_ALONE else 0.0
    drawn = -float("inf")
    for level, at in ends:
        if at - drawn < gap:
            continue
        axes.axvline(at / scale, color="#9e9e9e", linestyle=":", linewidth=1,
                     label="level k finished (Lk)" if drawn < 0 else None)
        axes.annotate(f"L{level}", (at / scale, 0), xycoords=("data", "axes fraction"),
                      xytext=(2, 3), textcoords="offset points", fontsize=8, color="#424242")
        drawn = at
    for k, at in enumerate(timeline.resumed_at):
        axes.axvline(at / scale, color="grey", linestyle="--", label="resumed" if k == 0 else None)


def _draw_levels(figure, report: Report) -> None:
    """Stacked per level: pages saved, duplicates whose HTML was not saved again
    (their rows name the original's file), and URLs that are no HTML page."""
    axes = figure.add_subplot()
    labels, rows = _level_groups(report)
    levels = list(range(len(rows)))
    stacks = (([row.saved for row in rows], "#2e7d32", "HTML pages saved"),
              ([row.pages - row.saved for row in rows], "#a5d6a7",
               "duplicates, HTML not saved again"),
              ([row.urls - row.pages for row in rows], "#c62828", "no HTML page (errors, non-HTML)"))
    bottom = [0] * len(rows)
    for heights, colour, label in stacks:
        axes.bar(levels, heights, bottom=bottom, color=colour, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    for x, row in zip(levels, rows):
        suffix = "" if row.m is not None else " (running)"
        axes.annotate(f"{row.urls}{suffix}", (x, row.urls), ha="center", va="bottom",
                      xytext=(0, 2), textcoords="offset points", fontsize=_bar_font(rows),
                      rotation=90 if len(rows) > 12 else 0)
    _level_ticks(axes, labels)
    axes.set_xlabel("level (link distance from the seeds)")
    axes.set_ylabel("URLs fetched")
    axes.set_title("Pages per level (breadth-first)")
    axes.set_ylim(0, HEADROOM * max([row.urls for row in rows], default=1))
    _legend_below(figure, axes.get_legend_handles_labels()[0], ncols=1)


def _draw_duplicates(figure, report: Report) -> None:
    """Exact and near duplicates per level, side by side."""
    axes = figure.add_subplot()
    labels, rows = _level_groups(report)
    levels = list(range(len(rows)))
    for offset, counts, colour, label in (
            (-0.2, [row.duplicates for row in rows], "#6a1b9a", "exact: same text (duplicate_of)"),
            (0.2, [row.near_duplicates for row in rows], "#00838f",
             "near: SimHash (near_duplicate_of)")):
        bars = axes.bar([k + offset for k in levels], counts, width=0.4, color=colour, label=label)
        axes.bar_label(bars, labels=[str(n) if n else "" for n in counts],
                       fontsize=min(8, _bar_font(rows)), padding=1)
    _level_ticks(axes, labels)
    axes.set_xlabel("level")
    axes.set_ylabel("pages")
    axes.set_title("Duplicate pages per level")
    tallest = max([max(row.duplicates, row.near_duplicates) for row in rows], default=0)
    axes.set_ylim(0, HEADROOM * max(tallest, 1))
    if (report.content or {}).get("mode") == "off":
        axes.text(0.5, 0.5, "content dedup was off (--content-dedup)", transform=axes.transAxes,
                  ha="center")
    _legend_below(figure, axes.get_legend_handles_labels()[0], ncols=1)


def _level_groups(report: Report) -> tuple[list[str], list]:
    """The bars of the level panels: one a level, or a range of levels past
    a few dozen (summary.level_ranges), as in the levels table."""
    groups = grouped_levels(report.levels)
    return [label for label, _ in groups], [row for _, row in groups]


def _level_ticks(axes, labels: list[str]) -> None:
    axes.set_xticks(range(len(labels)), labels)
    if len(labels) > 12:   # ranges and dozens of levels: upright labels would overlap
        axes.tick_params(axis="x", labelrotation=90, labelsize=7)


def _bar_font(rows) -> int:
    return 9 if len(rows) <= 12 else 6


def _draw_statuses(figure, report: Report) -> None:
    axes = figure.add_subplot()
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
        _legend_below(figure, axes.get_legend_handles_labels()[0], ncols=2)


PANELS = {"timeline": _draw_timeline, "levels": _draw_levels, "duplicates": _draw_duplicates,
          "statuses": _draw_statuses}

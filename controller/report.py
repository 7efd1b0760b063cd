"""Plain-text summaries of a crawl for the terminal (the level table)."""
from __future__ import annotations

from pathlib import Path


def level_table(stats: dict, expected: list[tuple[int, int]] | None = None) -> str:
    """The per-level table; with ``expected`` (urls, pages) per level, a check column."""
    head = f"{'level':>5} {'urls':>7} {'pages':>7} {'errors':>7} {'new urls':>9} {'queue m':>8}"
    if expected is not None:
        head += f"  {'expected':>15}"
    lines = [head]
    for row in stats["levels"]:
        m = "" if row["m"] is None else row["m"]
        line = (f"{row['level']:>5} {row['urls']:>7} {row['pages']:>7} {row['errors']:>7} "
                f"{row['new_urls']:>9} {m:>8}")
        if expected is not None:
            line += "  " + _expected_cell(row, expected)
        lines.append(line)
    lines.append(f"{'total':>5} {stats['urls']:>7} {stats['pages']:>7} {stats['errors']:>7}")
    return "\n".join(lines)


def _expected_cell(row: dict, expected: list[tuple[int, int]]) -> str:
    k = row["level"]
    if k >= len(expected):
        return f"{'(none) MISMATCH':>15}"
    urls, pages = expected[k]
    verdict = "ok" if (row["urls"], row["pages"]) == (urls, pages) else "MISMATCH"
    return f"{urls:>4} / {pages:>4} {verdict}"


def summary_lines(stats: dict, out: Path) -> list[str]:
    return [
        f"stopped: {stats['stop_reason']} after {stats['elapsed_seconds']:.1f} s — "
        f"{stats['urls']} URLs, {stats['pages']} pages saved, {stats['errors']} errors "
        f"({stats['pages_per_second']:.1f} URLs/s, {stats['kb_per_second']:.0f} KB/s)",
        f"output:  {out}/  pages/ text/ index.csv edges.csv trace.log stats.json",
    ]

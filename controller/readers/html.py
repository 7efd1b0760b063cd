"""`crawler report DIR --format html`: the report as one page to open in a browser.

Owns the HTML rendering of the report's sections (the same Tables as the
text and Markdown reports, from controller/readers/report.py, plus the
crawl's settings) and of the figures (controller/readers/plot.py, one SVG
per panel). The page is one self-contained file: its style and script are
inline, its figures are data: URLs, it loads nothing (its Content Security
Policy forbids every fetch and every script but its own), so it can be
mailed or put on a course page as it is.

Everything from the crawl (URLs, titles, error texts, settings) is
untrusted: every cell is escaped, and the policy keeps an injected script
from running even if one got through. A table with a header row sorts
when a header is clicked (numbers as numbers); without JavaScript the
tables read in the report's order.
"""
from __future__ import annotations

import base64
import hashlib
import re
from html import escape

from controller.readers.plot import INSTALL_HINT, can_plot, figures_svg
from controller.readers.report import PARTIAL_TITLE, Report, sections, settings_section
from controller.readers.tables import Table

# Which figures stand under which section.
FIGURES_OF = {"Levels": ("levels", "duplicates"), "Speed": ("timeline",),
              "Status codes": ("statuses",)}
FIGURE_TEXT = {
    "timeline": "Pages fetched over crawl time: cumulative, and URLs/s per time bucket; "
                "dotted lines where each level finished",
    "levels": "URLs per level: HTML pages saved, duplicates not saved again, no HTML page",
    "duplicates": "Exact and near duplicate pages per level",
    "statuses": "URLs per HTTP status, coloured by class",
}

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #212121; margin: 0 auto; max-width: 76em;
       padding: 1em 2em 3em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin: 1.8em 0 .5em; border-bottom: 1px solid #ddd; }
nav a { margin-right: 1em; white-space: nowrap; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { padding: .2em .7em; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
thead th { border-bottom: 2px solid #9e9e9e; }
tbody tr:nth-child(even) { background: #f5f5f5; }
tfoot td { border-top: 1px solid #9e9e9e; font-weight: bold; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { font-weight: normal; color: #616161; white-space: nowrap; }
table.js-sortable thead th { cursor: pointer; user-select: none; }
table.js-sortable thead th::after { content: " \\2195"; color: #bdbdbd; }
table.js-sortable thead th[aria-sort=ascending]::after { content: " \\2191"; color: #212121; }
table.js-sortable thead th[aria-sort=descending]::after { content: " \\2193"; color: #212121; }
p.note { color: #616161; font-size: .9em; margin: .2em 0; }
p.warning { background: #fff3e0; border-left: 4px solid #ef6c00; padding: .4em .8em; }
figure { margin: 1em 0; display: inline-block; max-width: 100%; }
figure img { max-width: 100%; height: auto; }
figcaption { color: #616161; font-size: .9em; }
pre { white-space: pre; margin: 0; }
"""

# Click (or Enter on) a header: sort the body rows by that column, numbers as
# numbers with empty or placeholder cells last, again to reverse; text
# compares the digits in it as numbers too.
SCRIPT = """
"use strict";
function sortTable(table, th, column) {
  var ascending = th.getAttribute("aria-sort") !== "ascending";
  var numeric = th.classList.contains("num");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  function key(row) {
    var text = row.cells[column] ? row.cells[column].textContent : "";
    return numeric ? parseFloat(text) : text;
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (numeric) {
      if (isNaN(x) || isNaN(y)) { return isNaN(x) - isNaN(y); }
      return ascending ? x - y : y - x;
    }
    var order = x.localeCompare(y, undefined, {numeric: true});   /* story-9 before story-10 */
    return ascending ? order : -order;
  });
  table.querySelectorAll("thead th").forEach(function (other) { other.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  rows.forEach(function (row) { body.appendChild(row); });
}
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.classList.add("js-sortable");
  table.querySelectorAll("thead th").forEach(function (th, column) {
    th.tabIndex = 0;
    th.addEventListener("click", function () { sortTable(table, th, column); });
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sortTable(table, th, column);
      }
    });
  });
});
"""


def render_html(report: Report) -> str:
    """The whole report as one HTML document; its figures when matplotlib is installed."""
    figures = figures_svg(report) if can_plot() else None
    tables = [*sections(report), settings_section(report)]
    title = f"Crawl report: {report.crawl_dir}"
    body = [f"<h1>{_text(title)}</h1>", _contents(tables)]
    if figures is None:
        body.append(f'<p class="warning">The figures need matplotlib, which is not installed: '
                    f'{_text(INSTALL_HINT)}</p>')
    for table in tables:
        body.append(_section(table, figures))
    return _page(title, "\n".join(body))


def _page(title: str, body: str) -> str:
    policy = (f"default-src 'none'; img-src data:; style-src '{_sha256(STYLE)}'; "
              f"script-src '{_sha256(SCRIPT)}'; base-uri 'none'; form-action 'none'")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>{_text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n'
            f'{body}\n<script>{SCRIPT}</script>\n</body>\n</html>\n')


def _sha256(source: str) -> str:
    """A CSP source that allows exactly this inline style or script."""
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


def _contents(tables: list[Table]) -> str:
    links = " ".join(f'<a href="#{_anchor(t.title)}">{_text(t.title)}</a>' for t in tables)
    return f"<nav>{links}</nav>"


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _section(table: Table, figures: dict[str, str] | None) -> str:
    parts = [f'<section id="{_anchor(table.title)}">', f"<h2>{_text(table.title)}</h2>"]
    if table.rows:
        parts.append(_table(table))
    note_class = "warning" if table.title == PARTIAL_TITLE else "note"
    parts += [f'<p class="{note_class}">{_text(note)}</p>' for note in table.notes]
    if figures:
        parts += [_figure(name, figures[name]) for name in FIGURES_OF.get(table.title, ())]
    parts.append("</section>")
    return "\n".join(parts)


def _table(table: Table) -> str:
    numeric = table.right_aligned()
    if not any(table.headers):   # a key/value list
        rows = "".join(f"<tr><th>{_text(key)}</th>{_cells(rest, numeric[1:])}</tr>"
                       for key, *rest in table.rows)
        return f'<table class="kv"><tbody>{rows}</tbody></table>'
    split = len(table.rows) - table.totals
    opening = '<table class="sortable">' if table.sortable and split > 2 else "<table>"
    head = "".join(f"<th{_num(right)}>{_text(h)}</th>" for h, right in zip(table.headers, numeric))
    body = "".join(f"<tr>{_cells(row, numeric)}</tr>" for row in table.rows[:split])
    foot = "".join(f"<tr>{_cells(row, numeric)}</tr>" for row in table.rows[split:])
    return (f"{opening}<thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            + (f"<tfoot>{foot}</tfoot>" if foot else "") + "</table>")


def _cells(row, numeric) -> str:
    return "".join(f"<td{_num(right)}>{_text(cell)}</td>" for cell, right in zip(row, numeric))


def _num(right: bool) -> str:
    return ' class="num"' if right else ""


def _figure(name: str, svg: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    text = _text(FIGURE_TEXT[name])
    return (f'<figure id="figure-{name}"><img src="data:image/svg+xml;base64,{data}" alt="{text}">'
            f"<figcaption>{text}</figcaption></figure>")


def _text(value: str) -> str:
    """Crawl data as text: nothing in it is markup."""
    return escape(value, quote=True)

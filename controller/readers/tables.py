"""Tables for people: one titled table, rendered as aligned text or as Markdown
(controller/readers/html.py renders the same Table as HTML).

Owns the layout of the report's sections (controller/readers/report.py), so the
report decides only what goes in a table, never how columns line up.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

TEXT_WIDTH = 100        # notes are wrapped to this many columns in text
PLACEHOLDERS = ("—", "…")  # cells that stand for a missing number, aligned like one


@dataclass(frozen=True)
class Table:
    """A title, a table (may be empty), and notes printed under it."""
    title: str
    headers: tuple[str, ...]                 # all "" = a key/value list without a header row
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    align: str = ""                          # "l"/"r" per column; "" = numbers right, text left
    totals: int = 0                          # the last rows sum up the others: they stay last
    sortable: bool = True                    # False: the rows' order carries meaning (groups)

    def to_text(self) -> str:
        lines = [self.title]
        if self.rows:
            lines += self._text_rows()
        for note in self.notes:
            lines += textwrap.wrap(note, TEXT_WIDTH,
                                   initial_indent="  note: " if self.rows else "  ",
                                   subsequent_indent="        " if self.rows else "  ")
        return "\n".join(lines)

    def to_markdown(self) -> str:
        lines = [f"## {self.title}"]
        if self.rows:
            lines += ["", "| " + " | ".join(h or " " for h in self.headers) + " |",
                      "|" + "|".join("---:" if r else "---" for r in self.right_aligned()) + "|"]
            lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines)

    def right_aligned(self) -> list[bool]:
        """Per column: True when it is right-aligned (given, or every cell a number)."""
        if self.align:
            return [a == "r" for a in self.align]
        columns = list(zip(*self.rows))
        return [any(column) and all(_is_number(c) for c in column if c) for column in columns]

    def _text_rows(self) -> list[str]:
        table = [self.headers, *self.rows] if any(self.headers) else list(self.rows)
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines = []
        for row in table:
            cells = [c.rjust(w) if right else c.ljust(w)
                     for c, w, right in zip(row, widths, self.right_aligned())]
            lines.append(("  " + "  ".join(cells)).rstrip())
        return lines


def _is_number(cell: str) -> bool:
    if cell in PLACEHOLDERS:
        return True
    try:
        float(cell.removesuffix(" %"))
    except ValueError:
        return False
    return True


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")

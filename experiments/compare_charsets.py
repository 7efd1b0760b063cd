"""Charsets: the crawler's decoder against charset-normalizer and chardet alone, on pages with known text.

The matrix (``charset_corpus.py``): 39 languages, each in its legacy code
pages (windows-1250..1258, KOI8-R/U, ISO-8859-2/7, windows-874 and TIS-620,
GBK, GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR) and in UTF-8, ten of them
also in UTF-8 with a BOM and UTF-16 (LE and BE) with a BOM; three short
pages (150-600 characters of prose) and one long page per language and
encoding; each page with its charset declared in the HTTP header, in a
``<meta charset>``, in a ``<meta http-equiv>``, in a ``<meta charset>`` after
more than 1 KiB of ``<head>`` ("meta-late"), or nowhere ("none").  Beside
the matrix, one-sentence pages (60-130 characters, undeclared, legacy code
pages) stress detection; they are reported apart and are not in the bar.

Decoders, each given the same bytes:

- ours: ``getpage.charset.decode_html(body, content_type)``, what the
  crawler runs (BOM, header, <meta>, detection);
- before (with ``--baseline REV``): ``decode_html`` of getpage/charset.py
  at git revision REV;
- charset-normalizer and chardet alone: ``from_bytes(body).best()`` and
  ``chardet.detect(body)``, defaults, on the bytes only -- they never see
  the header, so for declared pages they still detect.

A decoding is right when the text equals the page's text (a leading BOM
character removed): scoring the text, not the codec's name, makes any
codec that gives the same text right (ISO-8859-7 and windows-1253 agree on
most Greek text).  Each call is timed (perf_counter, the decode included).

Outputs in --out: results.csv (one row per page), results.md (tables by
declaration, by encoding, the stress pages, the cost, every wrong case of
ours), run.json.

    python experiments/compare_charsets.py
    python experiments/compare_charsets.py --baseline 28556cb --out experiments/results/charsets
"""
from __future__ import annotations

import statistics
import subprocess
import time
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import chardet
import click
from charset_normalizer import from_bytes

from charset_corpus import BOMS, DECLARATIONS, LABELS, LANGUAGES, Language, encodings, long_excerpt, page, \
    short_excerpts
from getpage.charset import WESTERN_MARGIN, decode_html, detect_codec
from report import Column, fix_hash_seed, markdown_table, run_info, write_csv, write_json, write_markdown

ROOT = Path(__file__).resolve().parent.parent
BAR_DECLARED, BAR_UNDECLARED = 1.0, 0.95   # the bar: share of pages right
MARGINS = (0.0, 0.5, 0.8, 0.9, 0.95, float("inf"))


@dataclass(frozen=True)
class Case:
    language: str
    codec: str          # Python codec the page was written in ("utf-8-sig" etc.: with a BOM)
    declaration: str    # one of DECLARATIONS
    size: str           # "short", "long", or "sentence" (stress pages, not in the bar)
    text: str           # the page as written
    body: bytes         # the page as served
    content_type: str

    @property
    def declared(self) -> bool:
        return self.declaration != "none"


def cases(languages: Iterable[Language], stress: bool = True) -> list[Case]:
    """Every page of the matrix for these languages (and, if ``stress``, the one-sentence pages)."""
    found = []
    for language in languages:
        for codec in encodings(language):
            sentences = language.sentences_in(codec)
            excerpts = [(excerpt, "short") for excerpt in short_excerpts(sentences)]
            excerpts.append((long_excerpt(sentences), "long"))
            for declaration in DECLARATIONS:
                found += [_case(language, codec, declaration, size, excerpt) for excerpt, size in excerpts]
            if stress and codec in language.legacy:
                found += [_case(language, codec, "none", "sentence", s) for s in sentences]
    return found


def _case(language: Language, codec: str, declaration: str, size: str, excerpt: str) -> Case:
    label = LABELS[codec]
    text = f"<p>{excerpt}</p>" if size == "sentence" else page(excerpt, declaration, label, size == "long")
    body = BOMS.get(codec, b"") + text.encode(codec.removesuffix("-sig"))
    content_type = f"text/html; charset={label}" if declaration == "header" else "text/html"
    return Case(language.code, codec, declaration, size, text, body, content_type)


# A decoder takes (body, Content-Type) and returns (text, codec name or "").
Decoder = Callable[[bytes, str], tuple[str, str]]


def ours(body: bytes, content_type: str) -> tuple[str, str]:
    return decode_html(body, content_type)


def charset_normalizer_alone(body: bytes, content_type: str) -> tuple[str, str]:
    best = from_bytes(body).best()
    return _decoded(body, best.encoding if best else "")


def chardet_alone(body: bytes, content_type: str) -> tuple[str, str]:
    return _decoded(body, chardet.detect(body)["encoding"] or "")


def _decoded(body: bytes, codec: str) -> tuple[str, str]:
    try:
        return body.decode(codec, errors="replace").removeprefix("\ufeff"), codec
    except LookupError:   # no answer, or a name Python does not know
        return "", codec


def baseline(revision: str) -> Decoder:
    """decode_html as getpage/charset.py was at a git revision."""
    source = subprocess.run(["git", "show", f"{revision}:getpage/charset.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("charset_before")
    exec(compile(source, f"{revision}:getpage/charset.py", "exec"), module.__dict__)
    return module.decode_html


def measure(all_cases: list[Case], decoders: dict[str, Decoder]) -> list[dict]:
    """One row per case: what each decoder chose, whether its text is right, and its time."""
    rows = []
    for case in all_cases:
        row = {"language": case.language, "codec": case.codec, "declaration": case.declaration,
               "size": case.size, "bytes": len(case.body)}
        for name, decoder in decoders.items():
            started = time.perf_counter()
            text, codec = decoder(case.body, case.content_type)
            row[f"{name}_ms"] = (time.perf_counter() - started) * 1000
            row[f"{name}_codec"], row[f"{name}_right"] = codec, text == case.text
        row["ours_codec_reproduces"] = _reproduces(case.body, row["ours_codec"], case.text)
        rows.append(row)
    return rows


def _reproduces(body: bytes, codec: str, text: str) -> bool:
    """Whether the codec named by decode_html, applied to the body after any BOM, gives the text: what
    the index.csv encoding column promises (for right decodings)."""
    bom = next((mark for mark in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff") if body.startswith(mark)), b"")
    return body[len(bom):].decode(codec, errors="replace") == text


def shares(rows: list[dict], key: str, decoders: Iterable[str]) -> list[dict]:
    """Per value of ``key``: cases and the share each decoder got right."""
    table = []
    for value in dict.fromkeys(row[key] for row in rows):
        group = [row for row in rows if row[key] == value]
        table.append({key: value, "cases": len(group),
                      **{name: _share(group, name) for name in decoders}})
    return table


def _share(rows: list[dict], name: str) -> float:
    return sum(row[f"{name}_right"] for row in rows) / len(rows) if rows else 1.0


def bar(rows: list[dict]) -> dict:
    """The issue's bar over the matrix (not the stress pages), for ours."""
    matrix = [row for row in rows if row["size"] != "sentence"]
    declared = [row for row in matrix if row["declaration"] != "none"]
    undeclared = [row for row in matrix if row["declaration"] == "none"]
    western = [row for row in undeclared if row["codec"] == "cp1252"]
    result = {"declared": _share(declared, "ours"), "undeclared": _share(undeclared, "ours"),
              "undeclared_windows_1252": _share(western, "ours")}
    result["holds"] = (result["declared"] >= BAR_DECLARED and result["undeclared"] >= BAR_UNDECLARED
                       and result["undeclared_windows_1252"] == 1.0)
    return result


def margins(all_cases: list[Case], values: Iterable[float]) -> list[dict]:
    """Undeclared legacy pages ours gets wrong for each windows-1252 margin (inf: the rule never applies)."""
    legacy = [case for case in all_cases if not case.declared and not case.codec.startswith("utf")]
    table = []
    for margin in values:
        wrong = [case for case in legacy
                 if case.body.decode(detect_codec(case.body, margin), errors="replace") != case.text]
        table.append({"margin": margin, "pages": len(legacy),
                      "wrong_matrix": sum(case.size != "sentence" for case in wrong),
                      "wrong_sentence": sum(case.size == "sentence" for case in wrong),
                      "wrong_cases": ", ".join(f"{c.language} {c.codec} {c.size}" for c in wrong[:6])
                      + (" ..." if len(wrong) > 6 else "")})
    return table


def costs(rows: list[dict], decoders: Iterable[str]) -> list[dict]:
    """ms per page for each decoder: all matrix pages, and undeclared legacy pages (where detection runs)."""
    matrix = [row for row in rows if row["size"] != "sentence"]
    legacy = [row for row in matrix if row["declaration"] == "none" and not row["codec"].startswith("utf")]
    table = []
    for name in decoders:
        table.append({"decoder": NAMES[name],
                      **{f"{label}_{stat}": function([row[f"{name}_ms"] for row in group])
                         for label, group in (("all", matrix), ("legacy", legacy))
                         for stat, function in (("mean", statistics.fmean), ("median", statistics.median))}})
    return table


NAMES = {"ours": "ours", "before": "before", "normalizer": "charset-normalizer alone", "chardet": "chardet alone"}


def _share_columns(key: str, header: str, decoders: Iterable[str]) -> list[Column]:
    return [Column(key, header), Column("cases", "pages"),
            *(Column(name, NAMES[name], "{:.1%}".format) for name in decoders)]


COST = [Column("decoder", "decoder"),
        Column("all_mean", "ms/page, every page (mean)", "{:.3f}".format),
        Column("all_median", "median", "{:.3f}".format),
        Column("legacy_mean", "ms/page, undeclared legacy pages (mean)", "{:.3f}".format),
        Column("legacy_median", "median", "{:.3f}".format)]
MARGIN = [Column("margin", "windows-1252 margin", "{:g}".format), Column("pages", "undeclared legacy pages"),
          Column("wrong_matrix", "wrong, matrix"), Column("wrong_sentence", "wrong, one sentence"),
          Column("wrong_cases", "wrong pages")]
WRONG = [Column("language", "language"), Column("codec", "written in"), Column("declaration", "declared"),
         Column("size", "size"), Column("ours_codec", "ours chose"), Column("chardet_codec", "chardet alone"),
         Column("normalizer_codec", "charset-normalizer alone")]


def report(rows: list[dict], decoders: list[str], margin_table: list[dict]) -> str:
    matrix = [row for row in rows if row["size"] != "sentence"]
    undeclared = [row for row in matrix if row["declaration"] == "none"]
    stress = [row for row in rows if row["size"] == "sentence"]
    result = bar(rows)
    wrong = [row for row in rows if not row["ours_right"]]
    reproduces = sum(row["ours_codec_reproduces"] for row in rows)
    return "\n\n".join([
        f"{len(matrix)} matrix pages ({len(undeclared)} undeclared) and {len(stress)} one-sentence pages. "
        f"Bar (ours, matrix): declared {result['declared']:.1%}, undeclared {result['undeclared']:.1%}, "
        f"undeclared windows-1252 {result['undeclared_windows_1252']:.1%}: "
        f"{'holds' if result['holds'] else 'NOT MET'}. The codec ours names decodes the body to ours' text "
        f"on {reproduces} of {len(rows)} pages.",
        "## By declaration (matrix)", markdown_table(_share_columns("declaration", "declared in", decoders),
                                                      shares(matrix, "declaration", decoders)),
        "## By size, undeclared", markdown_table(_share_columns("size", "size", decoders),
                                                 shares([*undeclared, *stress], "size", decoders)),
        "## By encoding, undeclared (matrix)",
        markdown_table(_share_columns("codec", "written in", decoders), shares(undeclared, "codec", decoders)),
        "## By encoding, one-sentence pages (undeclared)",
        markdown_table(_share_columns("codec", "written in", decoders), shares(stress, "codec", decoders)),
        f"## The windows-1252 rule: pages wrong by margin (default {WESTERN_MARGIN:g})",
        markdown_table(MARGIN, margin_table),
        "## Cost", markdown_table(COST, costs(rows, decoders)),
        f"## Pages ours got wrong ({len(wrong)})", markdown_table(WRONG, wrong) if wrong else "none"])


@click.command()
@click.option("--languages", default="", help="comma-separated language codes (default: all 39)")
@click.option("--baseline", "revision", default="", help="git revision whose decode_html is measured as 'before'")
@click.option("--out", default="charset-results", show_default=True, type=click.Path(path_type=Path))
def main(languages: str, revision: str, out: Path) -> None:
    """How often each decoder gets a page's text right, by declaration style, size and encoding."""
    started = time.perf_counter()
    chosen = [language for language in LANGUAGES if not languages or language.code in languages.split(",")]
    decoders: dict[str, Decoder] = {"ours": ours}
    if revision:
        decoders["before"] = baseline(revision)
    decoders |= {"normalizer": charset_normalizer_alone, "chardet": chardet_alone}
    all_cases = cases(chosen)
    _warm_up(decoders, all_cases[0])
    rows = measure(all_cases, decoders)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", list(rows[0]), rows)
    body = report(rows, list(decoders), margins(all_cases, MARGINS))
    info = run_info("compare_charsets", f"{len(all_cases)} pages in {len(chosen)} languages "
                    f"(experiments/charset_corpus.py)", None)
    write_markdown(out / "results.md", "Charsets: decoding pages with known text", info, body)
    write_json(out / "run.json", info, {"baseline": revision, "bar": bar(rows),
                                        "seconds": round(time.perf_counter() - started, 1)})
    click.echo(body)


def _warm_up(decoders: dict[str, Decoder], case: Case) -> None:
    """One call each on a page that needs detection, so that no timing includes loading a detector's
    models."""
    body = "<p>Le coût de la vie a beaucoup augmenté.</p>".encode("cp1252")
    for decoder in decoders.values():
        decoder(body, "")
        decoder(case.body, case.content_type)


if __name__ == "__main__":
    fix_hash_seed()
    warnings.simplefilter("ignore", DeprecationWarning)
    main()

"""`crawler export DIR`: the saved pages as one file for text pipelines.

JSON Lines: one object per saved page and line, UTF-8 (ensure_ascii off,
so text stays readable), the keys of controller/readers/pages.py in their
order. Parquet (the ``parquet`` extra, pyarrow): one row per page with a
fixed schema, written in row groups of ROW_GROUP_ROWS pages (fewer when
their text and html pass ROW_GROUP_BYTES), so memory holds one group, not
the crawl. With ``html=True`` the raw bytes come along: base64 text in
JSON (a string that survives any JSON reader), binary in Parquet.

A file is written beside its final name and renamed onto it when it is
whole, so an export that fails leaves no half file under that name (an
existing file there is replaced, as `report --plot` replaces its PNG).
Every check (format, pyarrow, the crawl directory) comes first: a refused
export creates nothing.
"""
from __future__ import annotations

import base64
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from controller.localfailure import CAUSES
from controller.readers import EXPORT_FORMATS
from controller.readers.files import ReportError
from controller.readers.pages import RECORD_KEYS, extracted_names, page_records

INSTALL_HINT = "from the repository: .venv/bin/pip install -e '.[parquet]' (or: pip install pyarrow)"
ROW_GROUP_ROWS = 1000
ROW_GROUP_BYTES = 64 * 2**20
# Parquet column types (pyarrow factory names), one per record key.
PARQUET_TYPES = {
    "id": "int64", "url": "string", "final_url": "string", "level": "int32",
    "status": "int32", "content_type": "string", "encoding": "string", "title": "string",
    "text": "string", "fetched_at": "string", "content_md5": "string", "body_md5": "string",
    "duplicate_of": "int64", "near_duplicate_of": "int64", "bytes": "int64",
}


def export_pages(crawl_dir: Path, fmt: str, out: Path | None, *, html: bool = False,
                 stdout: BinaryIO | None = None, notes: list[str] | None = None) -> int:
    """Write the saved pages of ``crawl_dir`` as ``fmt`` into ``out`` (None:
    ``stdout``, JSON Lines only); the number of pages. ReportError, before
    anything is written, for an export that cannot be made."""
    _check_request(fmt, out)
    records = page_records(crawl_dir, html=html, notes=notes)
    if out is None:
        return write_jsonl(records, stdout)
    with written_whole(Path(out)) as f:
        if fmt == "jsonl":
            return write_jsonl(records, f)
        return write_parquet(records, f, html=html, names=extracted_names(crawl_dir))


def _check_request(fmt: str, out: Path | None) -> None:
    if fmt not in EXPORT_FORMATS:
        raise ReportError(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "parquet":
        if out is None:
            raise ReportError("--format parquet writes a file: give it with --out FILE.parquet")
        _pyarrow()


# -- JSON Lines ------------------------------------------------------------
def write_jsonl(records: Iterable[dict], f: BinaryIO) -> int:
    count = 0
    for record in records:
        if "html" in record:
            record["html"] = base64.b64encode(record["html"]).decode("ascii")
        f.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
        count += 1
    f.flush()
    return count


# -- Parquet ---------------------------------------------------------------
def write_parquet(records: Iterable[dict], f: BinaryIO, *, html: bool,
                  names: tuple[str, ...] | None) -> int:
    pa, pq = _pyarrow()
    schema = parquet_schema(pa, html, names)
    count = 0
    with pq.ParquetWriter(f, schema) as writer:
        for group in _row_groups(records):
            writer.write_table(pa.Table.from_pylist(group, schema=schema),
                               row_group_size=len(group))
            count += len(group)
    return count


def parquet_schema(pa, html: bool, names: tuple[str, ...] | None):
    """The columns of a page record; ``html`` binary, ``extracted`` a struct of strings."""
    fields = [pa.field(key, getattr(pa, PARQUET_TYPES[key])()) for key in RECORD_KEYS]
    if html:
        fields.append(pa.field("html", pa.binary()))
    if names is not None:
        fields.append(pa.field("extracted", pa.struct([(name, pa.string()) for name in names])))
    return pa.schema(fields)


def _row_groups(records: Iterable[dict]) -> Iterator[list[dict]]:
    group, size = [], 0
    for record in records:
        group.append(record)
        size += len(record["text"]) + len(record.get("html", b""))
        if len(group) >= ROW_GROUP_ROWS or size >= ROW_GROUP_BYTES:
            yield group
            group, size = [], 0
    if group:
        yield group


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ReportError(f"--format parquet needs pyarrow, which is not installed: "
                          f"{INSTALL_HINT}") from None
    return pyarrow, pyarrow.parquet


# -- the output file -------------------------------------------------------
@contextmanager
def written_whole(out: Path) -> Iterator[BinaryIO]:
    """A new file beside ``out``, renamed onto it when the block ends without
    error. A file that cannot be written (a full disk, a read-only place)
    is ReportError with one line, and leaves no part of itself behind."""
    if out.is_dir():
        raise ReportError(f"{out} is a directory: give --out a file name")
    part = out.with_name(f".{out.name}.{secrets.token_hex(4)}.part")
    try:
        with open(part, "xb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, out)
    except OSError as exc:
        cause, remedy = CAUSES.get(exc.errno, (exc.strerror or str(exc), "fix it"))
        raise ReportError(f"cannot write {out}: {cause.lower()}; {remedy} or write it "
                          f"elsewhere") from None
    finally:
        with suppress(OSError):   # a read-only place refuses even to remove nothing
            part.unlink(missing_ok=True)

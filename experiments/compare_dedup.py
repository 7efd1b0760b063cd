"""Compare the URL-seen algorithms on a stream of URLs: time, work, memory and mistakes.

Reproduces (and extends) the design paper's dedup comparison.  Every
algorithm of ``urlfilter.SEEN_ALGORITHMS`` -- the same code ``crawler crawl
--dedup NAME`` runs -- is fed the same URL stream through ``add`` (the one
call the crawler makes), and for each algorithm and stream length n it
reports:

- ns_per_op: wall time of the whole stream / n, median of --repeat runs,
  each on a fresh structure (garbage collection left on, as in a crawl; a
  stream shorter than 50 ms is fed to fresh structures until a run lasts 50 ms);
- probes_per_op: comparisons the structure made per add (URLs compared for
  ascii and intstring, check pairs for stringhash, bits for bloom, one per
  add for the C-level sets);
- bytes_per_url: the structure's own memory account / unique URLs, and
  traced_bytes_per_url, what tracemalloc saw it allocate (small n only);
- max_chain, mean_chain, distinct_keys: the shape of the table;
- false_positives / false_negatives: adds answered "seen" for a new URL /
  "new" for a seen one, against the exact answers of a Python set;
- heldout_*: lookups of URLs never added, at the end: the false-positive
  rate of a full structure and the comparisons an unseen URL costs then.

Outputs in --out: results.csv, results.md (also printed), run.json and the
plots time_per_op.png, bytes_per_url.png, probes_per_op.png, ascii_chains.png
(plus ascii_chains.csv, the data of the last).  The plots need matplotlib
(the ``experiments`` extra); without it they are skipped, and the run says so
in one line before it starts measuring.

    python experiments/compare_dedup.py
    python experiments/compare_dedup.py --sizes 1e3,1e4,1e5,1e6 --out experiments/results/dedup
    python experiments/compare_dedup.py --corpus crawl:crawl-out --algorithms ascii,stringhash
"""
from __future__ import annotations

import gc
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from corpora import DEFAULT_DUPLICATE_RATIO, DEFAULT_SEED, DEFAULT_TRAP_RATIO, generate_urls, load_corpus
from report import (Column, fix_hash_seed, markdown_table, peak_memory_mb, plotting_available, run_info,
                    write_csv, write_json, write_markdown)
from urlfilter import SEEN_ALGORITHMS, make_seen

CSV_KEYS = (
    "algorithm", "n", "unique", "ns_per_op", "probes_per_op", "bytes_per_url", "max_chain",
    "mean_chain", "distinct_keys", "false_positives", "false_negatives", "ns_per_op_min",
    "ns_per_op_max", "heldout_lookups", "heldout_false_positives", "heldout_probes_per_lookup",
    "traced_bytes_per_url", "bytes",
)


@dataclass(frozen=True)
class Measurement:
    """One algorithm on one stream length; None where a quantity does not apply."""
    algorithm: str
    n: int                                 # adds (URLs in the stream, duplicates included)
    unique: int                            # distinct URLs in the stream
    ns_per_op: float                       # median over repeats
    probes_per_op: float
    bytes_per_url: float                   # reported bytes / unique
    max_chain: int | None                  # longest chain or probe run; None: not observable
    mean_chain: float | None
    distinct_keys: int | None             # None: the structure keeps no keys (bloom)
    false_positives: int
    false_negatives: int
    ns_per_op_min: float
    ns_per_op_max: float
    heldout_lookups: int
    heldout_false_positives: int
    heldout_probes_per_lookup: float | None
    traced_bytes_per_url: float | None     # None above --trace-memory-up-to
    bytes: int


@dataclass(frozen=True)
class Settings:
    repeat: int
    bloom_error: float
    trace_memory_up_to: int


# -- measuring ---------------------------------------------------------------------------

def exact_answers(stream: tuple[str, ...]) -> list[bool]:
    """For each add of the stream, True if the URL is new: the exact answers every structure owes."""
    seen: set[str] = set()
    answers = []
    for url in stream:
        answers.append(url not in seen)
        seen.add(url)
    return answers


def mistakes(answers: list[bool], expected: list[bool]) -> tuple[int, int]:
    """(false positives, false negatives): "seen" for a new URL, "new" for a seen one."""
    wrong = Counter(zip(expected, answers))
    return wrong[(True, False)], wrong[(False, True)]


MIN_RUN_NS = 50_000_000   # a timed run repeats a short stream until it has taken 50 ms


def timed_run(name: str, stream: tuple[str, ...], unique: int, bloom_error: float):
    """(ns per add, answers, structure): fresh structures fed the whole stream.

    A short stream is fed to several fresh structures in a row until the
    run has lasted MIN_RUN_NS, so that a 1,000-URL stream is not timed by a
    single millisecond-long pass that any interruption would swamp.
    """
    elapsed = passes = 0
    gc.collect()   # garbage of the previous run is not this run's cost
    while elapsed < MIN_RUN_NS:
        seen = make_seen(name, capacity=max(unique, 1), error_rate=bloom_error)
        started = time.perf_counter_ns()
        answers = list(map(seen.add, stream))
        elapsed += time.perf_counter_ns() - started
        passes += 1
    return elapsed / passes / len(stream), answers, seen


def traced_bytes(name: str, stream: tuple[str, ...], unique: int, bloom_error: float) -> int:
    """Bytes tracemalloc sees a fresh structure holding after the stream.

    Each URL is fed as a fresh copy made while tracing, so the strings a
    structure keeps count as its allocations (as they would in a crawler,
    where each link is a new string) and those it drops are freed again.
    """
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        seen = make_seen(name, capacity=max(unique, 1), error_rate=bloom_error)
        for url in stream:
            seen.add(url.encode().decode())
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def measure_stream(names: list[str], stream: tuple[str, ...], expected: list[bool],
                   heldout: list[str], settings: Settings) -> tuple[list[Measurement], dict | None]:
    """Measure every named algorithm on one stream; also the ASCII-sum chain lengths, if ascii ran.

    The repeats are interleaved (round 1 of every algorithm, then round 2 ...),
    so a busy spell of a shared machine slows every algorithm a little rather
    than one of them a lot.  The structure of the last round is the one
    whose counters are reported and which the held-out URLs are looked up in.
    """
    n, unique = len(stream), sum(expected)
    times: dict[str, list[float]] = {name: [] for name in names}
    wrong: dict[str, set[tuple[int, int]]] = {name: set() for name in names}
    measurements, chains = [], None
    for round_number in range(1, settings.repeat + 1):
        for name in names:
            _progress(f"n={n:,} {name} run {round_number}/{settings.repeat}")
            per_add, answers, seen = timed_run(name, stream, unique, settings.bloom_error)
            times[name].append(per_add)
            wrong[name].add(mistakes(answers, expected))
            if round_number == settings.repeat:
                measurements.append(summarize(seen, stream, unique, times[name], wrong[name],
                                              heldout, settings))
                if name == "ascii":
                    chains = seen.chain_lengths()
            del seen, answers
    return measurements, chains


def summarize(seen, stream: tuple[str, ...], unique: int, times: list[float],
              wrong: set[tuple[int, int]], heldout: list[str], settings: Settings) -> Measurement:
    """The Measurement of one algorithm from its last structure and the times of all its runs."""
    name, n = seen.name, len(stream)
    if len(wrong) != 1:   # the structures are deterministic; anything else is a bug
        raise RuntimeError(f"{name} answered differently in repeated runs: {sorted(wrong)}")
    stats = seen.stats()
    heldout_hits = sum(url in seen for url in heldout)
    heldout_probes = seen.stats()["probes"] - stats["probes"]
    traced = (traced_bytes(name, stream, unique, settings.bloom_error)
              if n <= settings.trace_memory_up_to else None)
    chained = "mean_chain" in stats
    keyless = stats["distinct_keys"] == 0 and stats["new"] > 0   # holds URLs but no keys: bloom
    false_positives, false_negatives = next(iter(wrong))
    return Measurement(
        algorithm=name, n=n, unique=unique,
        ns_per_op=statistics.median(times), ns_per_op_min=min(times), ns_per_op_max=max(times),
        probes_per_op=stats["probes"] / n,
        bytes_per_url=stats["bytes"] / unique, bytes=stats["bytes"],
        max_chain=stats["max_chain"] if chained else None,
        mean_chain=stats["mean_chain"] if chained else None,
        distinct_keys=None if keyless else stats["distinct_keys"],
        false_positives=false_positives, false_negatives=false_negatives,
        heldout_lookups=len(heldout), heldout_false_positives=heldout_hits,
        heldout_probes_per_lookup=heldout_probes / len(heldout) if heldout else None,
        traced_bytes_per_url=None if traced is None else traced / unique,
    )


def heldout_urls(count: int, seed: int, corpus: set[str]) -> list[str]:
    """Up to count generated URLs that are not in the corpus (another seed, no duplicates)."""
    if count <= 0:
        return []
    return [url for url in generate_urls(count, seed=seed + 1, duplicate_ratio=0.0)
            if url not in corpus]


# -- tables --------------------------------------------------------------------------------

def _int(value) -> str:
    return f"{value:,}"


def _float(digits: int):
    return lambda value: f"{value:,.{digits}f}"


def _rate(row: dict) -> float | None:
    lookups = row["heldout_lookups"]
    return row["heldout_false_positives"] / lookups if lookups else None


TABLE = (
    Column("algorithm", "algorithm"), Column("n", "n", _int), Column("unique", "unique", _int),
    Column("ns_per_op", "ns/op", _float(0)), Column("probes_per_op", "probes/op", _float(2)),
    Column("bytes_per_url", "bytes/URL", _float(1)),
    Column("traced_bytes_per_url", "traced bytes/URL", _float(1)),
    Column("max_chain", "max chain", _int), Column("mean_chain", "mean chain", _float(2)),
    Column("distinct_keys", "distinct keys", _int),
    Column("false_positives", "FP", _int), Column("false_negatives", "FN", _int),
    Column("heldout_fp_rate", "held-out FP rate", lambda value: f"{value:.2e}"),
    Column("heldout_probes_per_lookup", "held-out probes", _float(2)),
)


def table_rows(measurements: list[Measurement]) -> list[dict]:
    return [{**asdict(m), "heldout_fp_rate": _rate(asdict(m))} for m in measurements]


# -- plots ------------------------------------------------------------------------------------

def plot_all(out: Path, measurements: list[Measurement], chains: dict[int, int] | None,
             subtitle: str, url_object_bytes: float) -> list[Path]:
    """Write the PNGs; returns their paths.  url_object_bytes: mean size of one URL str object."""
    import matplotlib
    matplotlib.use("Agg")   # files only: no display needed, same output everywhere
    import matplotlib.pyplot as plt
    paths = []

    axes = _metric_axes(measurements, "ns_per_op", spread=("ns_per_op_min", "ns_per_op_max"))
    axes.set(ylabel="time per add (ns), median; band: min..max of repeats",
             title="Time per operation vs stream length (log-log)")
    paths.append(_save(axes.figure, out / "time_per_op.png", subtitle))

    # The legend sits in the empty band between the Bloom filter and everything else.
    axes = _metric_axes(measurements, "bytes_per_url",
                        legend={"loc": "lower right", "bbox_to_anchor": (1, 0.1)})
    axes.axhline(url_object_bytes, color="0.5", linestyle=":", linewidth=1)
    axes.annotate(f"one URL str object: {url_object_bytes:.0f} B", (0.01, url_object_bytes),
                  xycoords=("axes fraction", "data"), va="bottom", fontsize=8, color="0.4")
    axes.set(ylabel="bytes per unique URL", title="Memory per URL vs stream length")
    paths.append(_save(axes.figure, out / "bytes_per_url.png", subtitle))

    axes = _metric_axes(measurements, "probes_per_op", heldout="heldout_probes_per_lookup",
                        legend={"loc": "upper left"})
    # A held-out lookup into intstring compares a string only on a rare hashCode collision;
    # a floor under the stream's own values keeps those near-zero points from squashing the plot.
    positive = [m.probes_per_op for m in measurements if m.probes_per_op > 0]
    if positive:   # with no duplicates intstring compares nothing: 0 has no place on a log axis
        axes.set_ylim(bottom=min(positive) / 3)
    axes.set(ylabel="comparisons per operation",
             title="Comparisons per operation vs stream length")
    axes.text(0.99, 0.02, "set, md5: one per add by definition (their probing runs in C)\n"
              "bloom: bits examined (k)    dotted: lookup of an unseen URL at the end",
              transform=axes.transAxes, ha="right", va="bottom", fontsize=7.5, color="0.3")
    paths.append(_save(axes.figure, out / "probes_per_op.png", subtitle))

    if chains:
        paths.append(_plot_chains(out / "ascii_chains.png", chains, subtitle))
    plt.close("all")
    return paths


_BASELINES = ("set", "md5", "bloom")   # drawn dashed: the practitioner's tools, not the paper's
_MARKERS = "osD^vP*X"


def _metric_axes(measurements: list[Measurement], key: str, spread: tuple[str, str] | None = None,
                 heldout: str | None = None, legend: dict | None = None):
    """Log-log axes with one line per algorithm of measurement attribute ``key`` against n."""
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=100)
    for index, name in enumerate(dict.fromkeys(m.algorithm for m in measurements)):
        points = [m for m in measurements if m.algorithm == name]
        xs = [m.n for m in points]
        line, = axes.plot(xs, [getattr(m, key) for m in points], label=name,
                          marker=_MARKERS[index % len(_MARKERS)],
                          linestyle="--" if name in _BASELINES else "-")
        if spread:
            axes.fill_between(xs, [getattr(m, spread[0]) for m in points],
                              [getattr(m, spread[1]) for m in points],
                              color=line.get_color(), alpha=0.2, linewidth=0)
        if heldout and name not in _BASELINES:
            pairs = [(m.n, getattr(m, heldout)) for m in points if getattr(m, heldout)]
            if pairs:
                axes.plot(*zip(*pairs), color=line.get_color(), linestyle=":", linewidth=1.2)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("n (adds in the stream, duplicates included)")
    axes.grid(True, which="major", alpha=0.4)
    axes.legend(fontsize=8, ncol=2, **(legend or {"loc": "best"}))
    axes.title.set_fontsize(11)
    return axes


def _plot_chains(path: Path, chains: dict[int, int], subtitle: str) -> Path:
    import matplotlib.pyplot as plt
    lengths = list(chains.values())
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    longest = max(lengths)
    bins = range(1, longest + 2) if longest <= 80 else 80   # one bar per length while they fit
    left.hist(lengths, bins=bins, color="tab:red", align="left" if longest <= 80 else "mid")
    left.set_xlabel("chain length (URLs sharing one byte sum)")
    left.set_ylabel("rows (distinct sums)")
    left.set_title(f"{len(lengths):,} rows, mean {statistics.mean(lengths):.1f}, "
                   f"max {longest:,}", fontsize=10)
    sums = list(chains)
    right.scatter(sums, lengths, s=1.5, color="tab:red", linewidths=0)
    right.set_xlabel("byte sum of the URL (the row index)")
    right.set_ylabel("chain length")
    right.set_title(f"all URLs fall in sums {min(sums):,}..{max(sums):,}", fontsize=10)
    figure.suptitle("ASCII-sum table at the largest n", fontsize=11)
    return _save(figure, path, subtitle)


def _save(figure, path: Path, subtitle: str) -> Path:
    figure.text(0.99, 0.005, subtitle, ha="right", va="bottom", fontsize=7, color="0.4")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path)
    import matplotlib.pyplot as plt
    plt.close(figure)
    return path


# -- the command ----------------------------------------------------------------------------

def parse_sizes(_context, _parameter, value: str) -> list[int]:
    """"1e3,1e4,5000" -> [1000, 10000, 5000]; sorted, distinct, each at least 1."""
    try:
        sizes = sorted({int(float(part)) for part in value.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"{value!r}: give comma-separated numbers such as 1e3,1e4") from None
    if not sizes or sizes[0] < 1:
        raise click.BadParameter(f"{value!r}: sizes must be at least 1")
    return sizes


def parse_count(_context, parameter, value) -> int:
    """A whole number >= 0, also written as 1e5."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if number < 0 or number != int(number):
        raise click.BadParameter(f"{value!r}: give a whole number >= 0, such as 100000 or 1e5")
    return int(number)


def parse_algorithms(_context, _parameter, value: str) -> list[str]:
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in SEEN_ALGORITHMS]
    if unknown or not names:
        raise click.BadParameter(f"unknown {', '.join(unknown) or 'empty list'}; "
                                 f"choose from {','.join(SEEN_ALGORITHMS)}")
    return list(dict.fromkeys(names))


@click.command()
@click.option("--sizes", default="1e3,1e4,1e5", show_default=True, callback=parse_sizes,
              help="Stream lengths n (adds, duplicates included), comma-separated.")
@click.option("--algorithms", default=",".join(SEEN_ALGORITHMS), show_default=True,
              callback=parse_algorithms, help="Registry names, comma-separated.")
@click.option("--corpus", default="generated", show_default=True,
              help="generated, crawl:DIR (a crawler output directory) or file:PATH (one URL a line).")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="Timed runs per algorithm and size; the median is reported.")
@click.option("--out", default="dedup-results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--seed", default=DEFAULT_SEED, show_default=True, help="Seed of the generated corpus.")
@click.option("--duplicate-ratio", default=DEFAULT_DUPLICATE_RATIO, show_default=True,
              type=click.FloatRange(0, 1, max_open=True),
              help="Generated corpus: share of adds that repeat a URL.")
@click.option("--trap-ratio", default=DEFAULT_TRAP_RATIO, show_default=True,
              type=click.FloatRange(0, 1),
              help="Generated corpus: share of new URLs that permute an earlier URL's bytes.")
@click.option("--bloom-error", default=1e-3, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Target false-positive rate of the Bloom filter (sized for the stream's unique URLs).")
@click.option("--heldout", default="1e5", show_default=True, callback=parse_count,
              help="URLs never added, looked up after each stream.")
@click.option("--trace-memory-up-to", default="1e4", show_default=True, callback=parse_count,
              help="Check the memory account with tracemalloc for n up to this (tracing is slow).")
def main(sizes, algorithms, corpus, repeat, out, seed, duplicate_ratio, trap_ratio, bloom_error,
         heldout, trace_memory_up_to):
    """Compare the URL-seen algorithms: time, comparisons, memory, false positives and negatives.

    Example: python experiments/compare_dedup.py --sizes 1e3,1e4,1e5,1e6 --out results/dedup
    """
    started = time.perf_counter()
    plots = plotting_available()
    try:
        source = load_corpus(corpus, sizes[-1], seed=seed, duplicate_ratio=duplicate_ratio,
                             trap_ratio=trap_ratio)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    lengths = sorted({min(size, len(source.urls)) for size in sizes} - {0})
    if not lengths:
        raise click.ClickException(f"corpus {corpus} holds no URLs")
    info = run_info("compare_dedup", source.description, source.seed)   # date and load at the start
    expected = exact_answers(source.urls)
    held = heldout_urls(heldout, seed, set(source.urls))
    settings = Settings(repeat, bloom_error, trace_memory_up_to)
    measurements = []
    for n in lengths:
        found, chains = measure_stream(algorithms, source.urls[:n], expected[:n], held, settings)
        measurements += found
    out.mkdir(parents=True, exist_ok=True)
    url_object_bytes = statistics.mean(map(sys.getsizeof, dict.fromkeys(source.urls)))
    _write_outputs(out, info, measurements, chains, settings, time.perf_counter() - started,
                   url_object_bytes, plots)


def _write_outputs(out: Path, info, measurements: list[Measurement], chains, settings: Settings,
                   seconds: float, url_object_bytes: float, plots: bool) -> None:
    rows = [asdict(m) for m in measurements]
    write_csv(out / "results.csv", CSV_KEYS, rows)
    if chains:
        write_csv(out / "ascii_chains.csv", ("sum", "chain_length"),
                  ({"sum": key, "chain_length": length} for key, length in chains.items()))
    table = markdown_table(TABLE, table_rows(measurements))
    extra = {"seconds": round(seconds, 1), "peak_memory_mb": _round(peak_memory_mb()),
             "repeat": settings.repeat, "bloom_error": settings.bloom_error,
             "heldout": measurements[0].heldout_lookups,
             "trace_memory_up_to": settings.trace_memory_up_to,
             "mean_url_str_bytes": round(url_object_bytes, 1)}
    if chains:
        extra["ascii_sum_range"] = [min(chains), max(chains)]
    notes = (f"{settings.repeat} timed runs per cell (median shown); Bloom filter sized for each "
             f"stream's unique URLs at p = {settings.bloom_error:g}; total {seconds:.0f} s, "
             f"peak memory {extra['peak_memory_mb']} MB.")
    write_markdown(out / "results.md", "URL-seen comparison", info, f"{notes}\n\n{table}")
    write_json(out / "run.json", info, extra)
    subtitle = f"{info.corpus} · {info.python.split(' (')[0]} · {info.date[:10]}"
    if plots:
        plot_all(out, measurements, chains, subtitle, url_object_bytes)
    click.echo(f"{info.markdown()}\n\n{notes}\n\n{table}\n\nwritten to {out}/")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _progress(message: str) -> None:
    click.echo(message, err=True)


if __name__ == "__main__":
    fix_hash_seed()
    main()

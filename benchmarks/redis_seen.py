"""The distributed crawl's URL-seen set in Redis (issue 14): three ways to keep it,
measured as the acknowledgement script uses them.

    .venv/bin/python -m benchmarks.redis_seen                       # 10^5 and 10^6 URLs, 3 rounds
    .venv/bin/python -m benchmarks.redis_seen --sizes 20000 --rounds 1 --no-save   # a quick look

Each variant is a Lua script that takes a batch of K 64-bit URL fingerprints
(the first 8 bytes of BLAKE2b of the normalized URL, computed in Python) and
answers, for each, "added; was it new?" (1) or "already seen" (0):

- ``set``: one SET of the 8-byte fingerprints as binary strings (SADD);
- ``buckets``: B SETs; the fingerprint's top bits pick the bucket and the
  member is the fingerprint as a signed 64-bit integer, so a bucket stays in
  Redis's compact intset encoding while it holds at most
  ``set-max-intset-entries`` members (512 in Redis 7.0) and silently becomes a
  hashtable past that; measured with the server's default and with the limit
  raised by CONFIG SET;
- ``bloom``: a Bloom filter in one string used as a bitfield (GETBIT and
  SETBIT), k positions per URL by double hashing in Lua, sized for n URLs at
  the target false-positive rate.

For every size n, round and variant, interleaved (A B C ... A B C), a fresh
redis-server (tests/redisserver.py: 127.0.0.1, an ephemeral port, its own data
directory; AOF on with appendfsync everysec and no automatic rewrite, or off
with --no-aof) is filled with n URLs in batches of 40; then n fresh URLs (at
most --queries) are looked up read-only (false positives), and batches of
K = 1, 10, 40 new and already seen URLs are added (per-operation cost).
Measured: bytes per URL (INFO used_memory before and after the fill, and
MEMORY USAGE of the keys), AOF bytes per URL, Redis CPU per URL (INFO
used_cpu_user + used_cpu_sys), EVALSHA usec_per_call (INFO commandstats), the
client's wall time per batch, and false positives.

Stored: benchmarks/results/redis/seen.json (every run and the medians),
benchmarks/results/redis-seen.md (the section, which report.render_results
copies into RESULTS.md) and the same section in benchmarks/RESULTS.md.
"""
from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from hashlib import blake2b
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO / "tests"))   # tests/redisserver.py starts the server

from benchmarks.report import git_commit, machine  # noqa: E402
from redisserver import REDIS_SERVER, RedisServer  # noqa: E402
from urlfilter.bloom import bloom_size  # noqa: E402

CONCLUSION = BENCH_DIR / "results" / "redis" / "conclusion.md"
SECTION_TITLE = "## URL-seen set in Redis: SET, intset buckets, Bloom bitfield (issue 14)"
FILL_BATCH = 40           # links per acknowledged page while filling
PROBE_BATCHES = (1, 10, 40)
PROBE_URLS = 6000         # URLs per probe (kind, K), by default
SIGN = 1 << 63

# -- the Lua scripts ---------------------------------------------------------------
SET_ADD = """
-- KEYS[1]: the seen set; ARGV: 8-byte fingerprints. 1 = new (added), 0 = seen.
local new = {}
for i, fp in ipairs(ARGV) do
  new[i] = redis.call('SADD', KEYS[1], fp)
end
return new
"""
SET_CHECK = """#!lua flags=no-writes
local seen = {}
for i, fp in ipairs(ARGV) do
  seen[i] = redis.call('SISMEMBER', KEYS[1], fp)
end
return seen
"""
BUCKETS_ADD = """
-- KEYS[i]: the bucket of fingerprint i; ARGV[i]: fingerprint i as a signed
-- 64-bit decimal (an intset member). 1 = new (added), 0 = seen.
local new = {}
for i, bucket in ipairs(KEYS) do
  new[i] = redis.call('SADD', bucket, ARGV[i])
end
return new
"""
BUCKETS_CHECK = """#!lua flags=no-writes
local seen = {}
for i, bucket in ipairs(KEYS) do
  seen[i] = redis.call('SISMEMBER', bucket, ARGV[i])
end
return seen
"""
BLOOM_POSITIONS = """
local m, k = tonumber(ARGV[1]), tonumber(ARGV[2])
-- positions (h1 + j*h2) mod m from the fingerprint's two 32-bit halves: exact in
-- Lua's doubles while m < 2^32; h2 odd so that it is never 0
local function positions(fp)
  local h1, h2 = struct.unpack('>I4I4', fp)
  if h2 % 2 == 0 then h2 = h2 + 1 end
  local out = {}
  for j = 0, k - 1 do out[j + 1] = (h1 + j * h2) % m end
  return out
end
"""
BLOOM_ADD = BLOOM_POSITIONS + """
-- KEYS[1]: the filter; ARGV: m bits, k, then 8-byte fingerprints. 1 = new, 0 = seen
-- (or a false positive). Only bits that change are written, so a seen URL
-- writes nothing to the AOF or the replicas.
local new = {}
for i = 3, #ARGV do
  local added = 0
  for _, bit in ipairs(positions(ARGV[i])) do
    if redis.call('GETBIT', KEYS[1], bit) == 0 then
      redis.call('SETBIT', KEYS[1], bit, 1)
      added = 1
    end
  end
  new[i - 2] = added
end
return new
"""
BLOOM_CHECK = "#!lua flags=no-writes\n" + BLOOM_POSITIONS + """
local seen = {}
for i = 3, #ARGV do
  local all = 1
  for _, bit in ipairs(positions(ARGV[i])) do
    if redis.call('GETBIT', KEYS[1], bit) == 0 then all = 0; break end
  end
  seen[i - 2] = all
end
return seen
"""


# -- the variants --------------------------------------------------------------------
class SetOfFingerprints:
    """One SET of 8-byte binary fingerprints."""
    add_lua, check_lua, exact = SET_ADD, SET_CHECK, True
    key = "{crawl}:seen"

    def __init__(self) -> None:
        self.name = "set"

    def prepare(self, client, n: int) -> None:
        pass

    def call(self, fps: list[bytes]) -> tuple[list, list]:
        return [self.key], fps

    def keys(self) -> list[str]:
        return [self.key]

    def expected_false_positive_rate(self, client, n: int) -> float:
        return n / 2**64   # a fresh fingerprint equal to a stored one


class IntsetBuckets:
    """``buckets`` SETs of signed 64-bit integers, picked by the fingerprint's top bits;
    ``intset_entries`` (0: the server's default) is set by CONFIG SET before the fill."""
    add_lua, check_lua, exact = BUCKETS_ADD, BUCKETS_CHECK, True

    def __init__(self, buckets: int, intset_entries: int = 0) -> None:
        assert buckets & (buckets - 1) == 0, "a power of two: the bucket is the top bits"
        self.buckets, self.intset_entries = buckets, intset_entries
        self.shift = 64 - buckets.bit_length() + 1
        self.name = f"buckets {buckets:,}" + (f", intset ≤ {intset_entries:,}" if intset_entries
                                              else ", default limit")

    def prepare(self, client, n: int) -> None:
        if self.intset_entries:
            client.config_set("set-max-intset-entries", self.intset_entries)

    def call(self, fps: list[bytes]) -> tuple[list, list]:
        values = [int.from_bytes(fp, "big") for fp in fps]
        return ([f"{{crawl}}:seen:{v >> self.shift}" for v in values],
                [v - (v >= SIGN) * (SIGN << 1) for v in values])

    def keys(self) -> list[str]:
        return [f"{{crawl}}:seen:{b}" for b in range(self.buckets)]

    def expected_false_positive_rate(self, client, n: int) -> float:
        return n / 2**64   # a fresh fingerprint equal to a stored one


class BloomBitfield:
    """A Bloom filter in one Redis string, sized for the run's n at ``error``."""
    add_lua, check_lua, exact = BLOOM_ADD, BLOOM_CHECK, False
    key = "{crawl}:seen:bloom"

    def __init__(self, error: float) -> None:
        self.error = error
        self.bits = self.hashes = 0
        self.name = f"bloom p = {error:g}"

    def prepare(self, client, n: int) -> None:
        self.bits, self.hashes = bloom_size(n, self.error)
        if self.bits >= 1 << 32:
            raise click.UsageError("a filter of 2^32 bits or more needs wider positions than "
                                   "the fingerprint's 32-bit halves")
        client.setbit(self.key, self.bits - 1, 0)   # allocate it whole: memory known up front

    def call(self, fps: list[bytes]) -> tuple[list, list]:
        return [self.key], [self.bits, self.hashes, *fps]

    def keys(self) -> list[str]:
        return [self.key]

    def expected_false_positive_rate(self, client, n: int) -> float:
        """(bits set / m)^k: the rate a fresh URL would meet if its k positions were
        independent, a second opinion on the measured rate that needs no look-ups."""
        return (client.bitcount(self.key) / self.bits) ** self.hashes


def all_variants(raised: int) -> list:
    return [SetOfFingerprints(), IntsetBuckets(1024), IntsetBuckets(1024, raised),
            IntsetBuckets(4096), IntsetBuckets(4096, raised), IntsetBuckets(65536),
            BloomBitfield(1e-3), BloomBitfield(1e-6)]


# -- the URLs ------------------------------------------------------------------------
def url_of(i: int) -> str:
    """The i-th URL of a synthetic crawl: 10,007 hosts, normalized form."""
    return f"https://host{i % 10007}.example.org/section/{i // 10007 % 97}/page-{i}.html"


def fingerprints(start: int, count: int) -> list[bytes]:
    return [blake2b(url_of(i).encode(), digest_size=8).digest() for i in range(start, start + count)]


@dataclass(frozen=True)
class Workload:
    """What one size n adds and asks: the fill, fresh look-ups, and the probes."""
    fill: list[bytes]
    fresh: list[bytes]
    probe_new: dict[int, list[bytes]]
    probe_seen: dict[int, list[bytes]]


def workload(n: int, queries: int, probe_urls: int = PROBE_URLS) -> Workload:
    fill, fresh = fingerprints(0, n), fingerprints(n, min(n, queries))
    start, probe_new = n + len(fresh), {}
    for k in PROBE_BATCHES:
        probe_new[k] = fingerprints(start, probe_urls)
        start += probe_urls
    stride = max(1, n // probe_urls)
    probe_seen = {k: fill[j::stride][:probe_urls] for j, k in enumerate(PROBE_BATCHES)}
    return Workload(fill, fresh, probe_new, probe_seen)


# -- one run -------------------------------------------------------------------------
def server_cpu(client) -> float:
    info = client.info("cpu")
    return info["used_cpu_user"] + info["used_cpu_sys"]


def phase(client, script, variant, fps: list[bytes], k: int) -> dict:
    """Send ``fps`` in batches of ``k``, one EVALSHA each: answers, Redis CPU, wall times."""
    calls = [variant.call(fps[i:i + k]) for i in range(0, len(fps), k)]
    client.config_resetstat()
    cpu, answers, walls = server_cpu(client), 0, []
    for keys, args in calls:
        started = time.perf_counter()
        answers += sum(script(keys=keys, args=args, client=client))
        walls.append(time.perf_counter() - started)
    cpu = server_cpu(client) - cpu
    stat = client.info("commandstats").get("cmdstat_evalsha", {})
    return {"urls": len(fps), "batch": k, "answers": answers, "cpu_us_per_url": cpu / len(fps) * 1e6,
            "evalsha_us_per_call": stat.get("usec_per_call", 0.0),
            "wall_us_per_batch": statistics.median(walls) * 1e6}


def stored(client, variant) -> dict:
    """MEMORY USAGE of the variant's keys (exact: SAMPLES 0) and their encodings."""
    pipe = client.pipeline(transaction=False)
    for key in variant.keys():
        pipe.memory_usage(key, samples=0)
        pipe.object("encoding", key)
    replies = pipe.execute()
    encodings: dict[str, int] = {}
    for encoding in replies[1::2]:   # None: a bucket no fingerprint fell in
        name = encoding.decode() if encoding else "empty"
        encodings[name] = encodings.get(name, 0) + 1
    return {"memory_usage": sum(r or 0 for r in replies[0::2]), "encodings": encodings}


def memory_now(client) -> tuple[int, int]:
    """used_memory and the AOF's size now (0 without AOF)."""
    persistence = client.info("persistence")
    return client.info("memory")["used_memory"], persistence.get("aof_current_size", 0)


def run_once(variant, n: int, load: Workload, round_no: int, aof: bool, data_dir: Path) -> dict:
    extra = ("--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "0")
    with RedisServer(data_dir, appendonly=aof, extra=extra) as server:
        client = server.client()
        add, check = client.register_script(variant.add_lua), client.register_script(variant.check_lua)
        client.script_load(variant.add_lua), client.script_load(variant.check_lua)
        memory, aof_size = memory_now(client)
        variant.prepare(client, n)
        fill = phase(client, add, variant, load.fill, FILL_BATCH)
        memory_after, aof_after = memory_now(client)
        row = {"variant": variant.name, "n": n, "round": round_no, "fill": fill,
               "bytes_per_url": (memory_after - memory) / n, "aof_bytes_per_url": (aof_after - aof_size) / n,
               **stored(client, variant),
               "expected_false_positive_rate": variant.expected_false_positive_rate(client, n),
               "false_positives": phase(client, check, variant, load.fresh, FILL_BATCH)["answers"],
               "queries": len(load.fresh), "probes": probes(client, add, variant, load)}
    return check_answers(variant, row)


def probes(client, add, variant, load: Workload) -> list[dict]:
    out = []
    for kind, batches in (("new", load.probe_new), ("seen", load.probe_seen)):
        for k, fps in batches.items():
            out.append({"kind": kind, **phase(client, add, variant, fps, k)})
    return out


def check_answers(variant, row: dict) -> dict:
    """An exact variant answers new for every new URL and seen for every seen one; a Bloom
    filter never answers new for a seen URL.  Anything else is a bug in a script."""
    new_wrong = [p for p in row["probes"] if p["kind"] == "new" and p["answers"] != p["urls"]]
    seen_wrong = [p for p in row["probes"] if p["kind"] == "seen" and p["answers"] != 0]
    if seen_wrong or (variant.exact and (new_wrong or row["fill"]["answers"] != row["n"]
                                         or row["false_positives"])):
        raise RuntimeError(f"{variant.name} at n = {row['n']:,} answered wrongly: {row}")
    return row


# -- medians and tables --------------------------------------------------------------
def summarize(runs: list[dict]) -> list[dict]:
    """One row per (n, variant): medians over rounds, in the order the variants ran."""
    rows = []
    for n in sorted({r["n"] for r in runs}):
        for name in dict.fromkeys(r["variant"] for r in runs if r["n"] == n):
            mine = [r for r in runs if r["n"] == n and r["variant"] == name]
            rows.append(summary_row(n, name, mine))
    return rows


def summary_row(n: int, name: str, mine: list[dict]) -> dict:
    med = lambda get: statistics.median(get(r) for r in mine)
    row = {"n": n, "variant": name, "rounds": len(mine),
           "bytes_per_url": med(lambda r: r["bytes_per_url"]),
           "memory_usage_per_url": med(lambda r: r["memory_usage"] / n),
           "aof_bytes_per_url": med(lambda r: r["aof_bytes_per_url"]),
           "encodings": mine[0]["encodings"],
           "false_positive_rate": med(lambda r: r["false_positives"] / r["queries"]),
           "expected_false_positive_rate": med(lambda r: r["expected_false_positive_rate"]),
           "false_positives": [r["false_positives"] for r in mine], "queries": mine[0]["queries"],
           "fill_false_positives": med(lambda r: n - r["fill"]["answers"])}
    for field in ("cpu_us_per_url", "evalsha_us_per_call", "wall_us_per_batch"):
        row[f"fill_{field}"] = med(lambda r: r["fill"][field])
        for j, probe in enumerate(mine[0]["probes"]):
            label = f"{probe['kind']}_k{probe['batch']}_{field}"
            row[label] = med(lambda r: r["probes"][j][field])
    return row


def encoding_text(encodings: dict[str, int]) -> str:
    if len(encodings) == 1:
        return next(iter(encodings))
    return ", ".join(f"{count:,} {name}" for name, count in sorted(encodings.items()))


def fp_text(row: dict) -> str:
    rate, expected = row["false_positive_rate"], row["expected_false_positive_rate"]
    counts = "/".join(str(c) for c in row["false_positives"])
    text = f"{rate:.1e} ({counts} of {row['queries']:,})" if rate else f"0 of {row['queries']:,}"
    return f"{text}; expected {expected:.1e}"


def memory_table(rows: list[dict]) -> str:
    lines = ["| URLs | variant | B/URL used_memory | B/URL MEMORY USAGE | encoding | AOF B/URL "
             "| false positives among fresh URLs (each round); expected rate |",
             "|---:|:---|---:|---:|:---|---:|:---|"]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['variant']} | {r['bytes_per_url']:.1f} "
                     f"| {r['memory_usage_per_url']:.1f} | {encoding_text(r['encodings'])} "
                     f"| {r['aof_bytes_per_url']:.0f} | {fp_text(r)} |")
    return "\n".join(lines)


def cpu_table(rows: list[dict]) -> str:
    lines = ["| URLs | variant | Redis CPU µs/URL: fill K=40 | new K=1 | new K=10 | new K=40 "
             "| seen K=40 | EVALSHA µs/call K=1 / 40 | client µs/batch K=1 / 10 / 40 |",
             "|---:|:---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cpu = [r[f"new_k{k}_cpu_us_per_url"] for k in PROBE_BATCHES]
        wall = " / ".join(f"{r[f'new_k{k}_wall_us_per_batch']:.0f}" for k in PROBE_BATCHES)
        lines.append(f"| {r['n']:,} | {r['variant']} | {r['fill_cpu_us_per_url']:.2f} "
                     f"| {cpu[0]:.1f} | {cpu[1]:.2f} | {cpu[2]:.2f} "
                     f"| {r['seen_k40_cpu_us_per_url']:.2f} "
                     f"| {r['new_k1_evalsha_us_per_call']:.1f} / {r['new_k40_evalsha_us_per_call']:.0f} "
                     f"| {wall} |")
    return "\n".join(lines)


# -- storing -------------------------------------------------------------------------
def heading(title: str, module: str, raw: str, result: dict, aof: str) -> list[str]:
    """A Redis benchmark section's first lines: the command that wrote it,
    where its raw numbers are, and what it ran on."""
    m, source = result["machine"], result["source"]
    dirty = " (working tree with uncommitted changes)" if source["dirty"] else ""
    return [title, "",
            f"Written by `.venv/bin/python -m benchmarks.{module} {result['settings']['command']}` "
            f"(raw numbers: `{raw}`).", "",
            f"{m['date']}, commit `{source['commit']}`{dirty}; {m['cpu']}, {m['cores']} cores, "
            f"Python {m['python']}, {result['redis']}; load average at start "
            f"{' '.join(m['load_average'])}; AOF {aof}.", ""]


def section(result: dict) -> str:
    s = result["settings"]
    return "\n".join([
        *heading(SECTION_TITLE, "redis_seen", "benchmarks/results/redis/seen.json", result,
                 "on (appendfsync everysec, no automatic rewrite)" if s["aof"] else "off"),
        f"A fresh redis-server per run; variants interleaved, {s['rounds']} rounds, medians. "
        f"Fill: n URLs, one EVALSHA per {FILL_BATCH}. False positives: n fresh URLs "
        f"(at most {s['queries']:,}) looked up read-only after the fill; the expected rate is "
        f"n/2^64 for the exact sets (a fingerprint collision) and (bits set / m)^k for a Bloom "
        f"filter. Probes: {s['probe_urls']:,} "
        f"new (or already seen) URLs in batches of K after the fill. Redis CPU is the server "
        f"process's user + system time (protocol and script); EVALSHA µs/call is INFO "
        f"commandstats (time inside the call).", "",
        memory_table(result["rows"]), "", cpu_table(result["rows"]), "",
        result.get("conclusion", "").strip(), ""])


def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    return store_as("seen", result, section(result), SECTION_TITLE, results_dir, results_md)


def store_as(name: str, result: dict, text: str, title: str, results_dir: Path,
             results_md: Path) -> Path:
    """A Redis benchmark's raw numbers in results/redis/NAME.json, its section
    in results/redis-NAME.md and in RESULTS.md; the raw file's path."""
    raw = results_dir / "redis" / f"{name}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (results_dir / f"redis-{name}.md").write_text(text, encoding="utf-8")
    put_section(results_md, title, text)
    return raw


def put_section(results_md: Path, title: str, text: str) -> None:
    """``text`` in place of the section headed ``title`` (appended when there is none);
    the rest of the file untouched."""
    old = results_md.read_text(encoding="utf-8") if results_md.exists() else ""
    head, found, tail = old.partition(title)
    if not found:
        results_md.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")
        return
    rest = tail.find("\n## ")
    results_md.write_text(head + text + ("" if rest < 0 else tail[rest:]), encoding="utf-8")


def redis_version() -> str:
    out = subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True).stdout
    return " ".join(out.split()[:3])


@click.command()
@click.option("--sizes", default="100000,1000000", show_default=True, help="Comma-separated URL counts.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--variants", "only", default="",
              help="Run only the variants whose name starts with this ('set', 'buckets 4,096', 'bloom').")
@click.option("--raised-intset", type=click.IntRange(min=1), default=8192, show_default=True,
              help="set-max-intset-entries for the raised-limit bucket variants.")
@click.option("--queries", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="Fresh URLs looked up for false positives, at most.")
@click.option("--probe-urls", type=click.IntRange(min=1), default=PROBE_URLS, show_default=True,
              help="URLs per probe (new or seen, batches of K) after the fill.")
@click.option("--aof/--no-aof", default=True, show_default=True)
@click.option("--conclusion", type=click.Path(path_type=Path), default=CONCLUSION, show_default=True,
              help="The reading of the numbers (Markdown), put under the tables when the file exists.")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Store the result and put its section into RESULTS.md.")
@click.option("--render-only", is_flag=True,
              help="Measure nothing: write the section again from the stored JSON and --conclusion.")
@click.option("--results-dir", type=click.Path(path_type=Path), default=BENCH_DIR / "results",
              show_default=True)
@click.option("--results-md", type=click.Path(path_type=Path), default=BENCH_DIR / "RESULTS.md",
              show_default=True)
def main(sizes, rounds, only, raised_intset, queries, probe_urls, aof, conclusion, save, render_only,
         results_dir, results_md):
    """Bytes, Redis CPU and false positives per URL of three Redis URL-seen sets."""
    reading = conclusion.read_text(encoding="utf-8") if conclusion.exists() else ""
    if render_only:
        result = json.loads((results_dir / "redis" / "seen.json").read_text(encoding="utf-8"))
    else:
        sizes = sorted({int(s) for s in sizes.split(",") if s.strip()})
        variants = [v for v in all_variants(raised_intset) if v.name.startswith(only)]
        if not variants:
            raise click.UsageError(f"no variant's name starts with {only!r}")
        settings = {"sizes": sizes, "rounds": rounds, "raised_intset": raised_intset, "queries": queries,
                    "probe_urls": probe_urls, "aof": aof,
                    "command": command_line(sizes, rounds, only, raised_intset, queries, probe_urls, aof)}
        result = measured(variants, settings)
        click.echo(memory_table(result["rows"]) + "\n\n" + cpu_table(result["rows"]))
    if save or render_only:
        raw = store({**result, "conclusion": reading}, results_dir, results_md)
        click.echo(f"stored {raw} and its section in {results_md}", err=True)


def measured(variants: list, settings: dict) -> dict:
    """The whole result: where and how, every run, the medians."""
    started, where, source = datetime.now(timezone.utc), machine(), git_commit(REPO)
    runs = measure(settings["sizes"], settings["rounds"], variants,
                   (settings["queries"], settings["probe_urls"]), settings["aof"])
    return {"started": started.isoformat(),
            "elapsed_s": (datetime.now(timezone.utc) - started).total_seconds(),
            "machine": where, "source": source, "redis": redis_version(),
            "settings": settings, "runs": runs, "rows": summarize(runs)}


def measure(sizes, rounds, variants, asked: tuple[int, int], aof) -> list[dict]:
    """Every run, interleaved: for each size and round, each variant once.  ``asked`` is
    (fresh look-ups at most, URLs per probe)."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="redis-seen-") as tmp:
        for n in sizes:
            load = workload(n, *asked)
            for round_no in range(1, rounds + 1):
                for variant in variants:
                    data_dir = Path(tmp) / f"run-{len(runs)}"   # a fresh server: no earlier AOF
                    runs.append(run_once(variant, n, load, round_no, aof, data_dir))
                    shutil.rmtree(data_dir)
                    r = runs[-1]
                    click.echo(f"n {n:,} round {round_no} {variant.name}: {r['bytes_per_url']:.1f} B/URL, "
                               f"{r['fill']['cpu_us_per_url']:.2f} µs CPU/URL, "
                               f"{r['false_positives']} false positives", err=True)
    return runs


def command_line(sizes, rounds, only, raised, queries, probe_urls, aof) -> str:
    parts = [f"--sizes {','.join(str(n) for n in sizes)}", f"--rounds {rounds}"]
    parts += [f"--variants '{only}'"] if only else []
    parts += [f"--raised-intset {raised}"] if raised != 8192 else []
    parts += [f"--queries {queries}"] if queries != 1_000_000 else []
    parts += [f"--probe-urls {probe_urls}"] if probe_urls != PROBE_URLS else []
    return " ".join(parts + ([] if aof else ["--no-aof"]))


if __name__ == "__main__":
    main()

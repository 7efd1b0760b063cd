"""Near-duplicate detection: SimHash precision and recall on generated pages with known pairs.

Each generated page is what the crawler's TextFilter would give for a page
of a news site: the site's header, navigation menu and footer (the same
hundreds of words on every page of the site) around one article of 300-900
words (English) or 500-1,500 characters (Chinese, no spaces); words follow
Zipf's law (function words ~45% of English tokens, "the" ~7%).  Every base
article has exactly one near-duplicate twin, made by one of these edits:

- date:   the "Published ..." line shows another date and time;
- ad:     an advertisement of one or two sentences inserted between paragraphs;
- byline: another author name in the byline;

and every other pair of pages is distinct -- including all the pairs of
different articles from the same site on the same topic, which share the
site's boilerplate and the topic's vocabulary.

For each seed, scope (the full page text, or the article alone as a
main-content extractor would give it), SimHash variant (VARIANTS: shingles
alone, 2-shingles, shingles plus token features of several weights) and
distance k = 0..6 it reports:

- pairs: precision and recall over all pairs of pages -- a pair is "found"
  when its SimHash distance is <= k (what the permuted-block index finds,
  tests/test_content_duplicates.py proves it finds exactly these);
- stream: the pages run through ContentSeen in a shuffled order, a verdict
  near_duplicate_of=j is right when j is the page's twin; recall is the
  share of second-seen twins whose verdict names the first;
- recall per edit kind, and the mean distance of twins and of distinct
  same-site same-topic pairs.

It also measures the permuted-block index's own candidate counter with
--index-pages random fingerprints for k = 3..6 (the cost of a larger k).

Outputs in --out: results.csv (every row), results.md (the key tables), run.json.

    python experiments/compare_near_dup.py
    python experiments/compare_near_dup.py --articles 1000 --seeds 7,8
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path

import click
import numpy as np

from report import Column, fix_hash_seed, markdown_table, run_info, write_csv, write_json, write_markdown
from textfilter.duplicates import ContentSeen, NearIndex
from textfilter.fingerprint import UNIGRAM_WEIGHT, simhash, text_md5

EDITS = ("date", "ad", "byline")
DISTANCES = range(7)
SCOPES = ("page", "article")

FUNCTION_WORDS = ("the of and to a in is that for it as was with be by on not he this are or his from "
                  "at which but have an they you were her she there been one all we their has would when "
                  "will more if no out so said what up its about into than them can only other new some "
                  "could time these two may then do first any my now such like our over man me even most "
                  "made after also did many before must through back years where much your way well down "
                  "should because each just those people how too little state good very make world still "
                  "own see men work long get here between both life being under never day same another "
                  "know while last might us great old year off come since against go came right used take "
                  "three").split()
# Common Chinese function words and characters, most frequent first (the, is, in, and ...).
ZH_FUNCTION_WORDS = ("的 了 是 在 和 有 也 就 不 人 我 他 这 中 大 为 上 个 国 说 们 到 以 地 要 时 出 会 可 对 "
                     "生 能 而 子 那 得 于 着 下 自 之 年 过 发 后 作 里 用 道 行 所 然 家 种 事 成 方 多 经 "
                     "么 去 法 学 如 都 同 现 当 没 动 面 起 看 定 天 分 还 进 好 小 部 其 些 主 样 理 心 她 "
                     "本 前 开 但 因 只 从 想 实 一个 我们 他们 没有 这个 可以 因为 所以 已经 如果").split()
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
FIRST_NAMES = "Alice Bruno Chen Dana Emeka Farah Goran Hana Ivan Julia Kofi Lena Marco Nadia Omar Priya".split()
LAST_NAMES = "Smith Okafor Larsen Ito Moreau Silva Novak Haddad Kumar Walsh Berg Rossi Tanaka Diaz".split()
SYLLABLES = ("ka ri to mon sel var en dor li pra ste qua min bel tor ca ne sim ad vo lu gan pe ris "
             "tem ul fa co der bri nal hu os pet ra zen mi gol tur sa bo vel").split()
# A slice of common Han characters, in code-point order; Chinese "words" are 1-3 of them.
HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


@dataclass(frozen=True)
class Page:
    page_id: int
    language: str      # "en" or "zh"
    site: int
    topic: int
    cluster: int       # the base article's number: twins share it
    edit: str          # "" for a base article, else the edit that made this twin
    article: str       # the article alone (title, byline, date, body)
    text: str          # the full page text: boilerplate around the article


class Language:
    """Random words, sentences and page furniture in one language."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name, self.rng = name, rng
        self.content = [self._word() for _ in range(6000)]
        self.topics = [rng.sample(self.content, 250) for _ in range(8)]
        self.content_weights = list(itertools.accumulate(1 / rank for rank in range(1, len(self.content) + 1)))
        self.function_words = ZH_FUNCTION_WORDS if name == "zh" else FUNCTION_WORDS
        self.function_share = 0.35 if name == "zh" else 0.45
        self.function_weights = list(itertools.accumulate(1 / rank for rank in range(1, len(self.function_words) + 1)))

    def _word(self) -> str:
        if self.name == "zh":
            return "".join(self.rng.choices(HAN, k=self.rng.choice((1, 2, 2, 2, 3))))
        return "".join(self.rng.choices(SYLLABLES, k=self.rng.choice((1, 2, 2, 3, 3, 4))))

    def word(self, topic: int) -> str:
        roll = self.rng.random()
        if roll < self.function_share:
            # Zipf's law (frequency ~ 1/rank): "the" is ~7% of English running text, "的" ~4% of Chinese.
            return self.rng.choices(self.function_words, cum_weights=self.function_weights)[0]
        if roll < 0.75:
            return self.rng.choice(self.topics[topic])
        return self.rng.choices(self.content, cum_weights=self.content_weights)[0]

    def sentence(self, topic: int, low: int = 6, high: int = 24) -> str:
        words = [self.word(topic) for _ in range(self.rng.randint(low, high))]
        if self.name == "zh":
            return "".join(words) + self.rng.choice("。。，！？")
        return " ".join(words).capitalize() + self.rng.choice("....!?,")

    def paragraphs(self, topic: int, size: int) -> list[str]:
        """Paragraphs of about `size` words (en) or characters (zh)."""
        paragraphs, total = [], 0
        while total < size:
            paragraph = " ".join(self.sentence(topic) for _ in range(self.rng.randint(2, 5)))
            if self.name == "zh":
                paragraph = paragraph.replace(" ", "")
            paragraphs.append(paragraph)
            total += len(paragraph) if self.name == "zh" else len(paragraph.split())
        return paragraphs

    def date_line(self) -> str:
        year, month, day = self.rng.randint(2015, 2025), self.rng.randint(1, 12), self.rng.randint(1, 28)
        hour, minute = self.rng.randint(0, 23), self.rng.randint(0, 59)
        if self.name == "zh":
            return f"发布时间：{year}年{month}月{day}日 {hour:02d}:{minute:02d}"
        return (f"Published {self.rng.choice(WEEKDAYS)}, {day} {MONTHS[month - 1]} {year}, "
                f"{hour:02d}:{minute:02d}")

    def byline(self) -> str:
        if self.name == "zh":
            return "记者 " + "".join(self.rng.choices(HAN[:400], k=self.rng.choice((2, 3))))
        return f"By {self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"

    def ad(self) -> str:
        body = " ".join(self.sentence(self.rng.randrange(8), 6, 18) for _ in range(self.rng.randint(1, 2)))
        return ("广告：" + body.replace(" ", "")) if self.name == "zh" else "Advertisement. " + body

    def boilerplate(self, site: int) -> tuple[str, str]:
        """The header + navigation and the footer of one site, a few hundred words together."""
        menu = [" ".join(self.rng.choice(self.content) for _ in range(self.rng.randint(1, 3)))
                for _ in range(self.rng.randint(40, 70))]
        header = "\n".join([f"Site {site}", "Home", *menu, "Search", "Subscribe"])
        footer = "\n".join(self.sentence(self.rng.randrange(8), 8, 20) for _ in range(self.rng.randint(6, 12)))
        if self.name == "zh":
            header, footer = header.replace(" ", ""), footer.replace(" ", "")
        return header, footer


def generate_pages(articles: int, seed: int) -> list[Page]:
    """`articles` base articles (two thirds English, one third Chinese) and one twin of each."""
    rng = random.Random(seed)
    pages: list[Page] = []
    for language, share, article_size, sites in (("en", 2 / 3, (300, 900), 4), ("zh", 1 / 3, (500, 1500), 2)):
        words = Language(language, rng)
        furniture = [words.boilerplate(site) for site in range(sites)]
        for _ in range(round(articles * share)):
            cluster = len(pages) // 2
            site, topic = rng.randrange(sites), rng.randrange(3)   # few topics: many same-topic pairs
            base = _article(words, topic, rng.randint(*article_size))
            twin = _edited(words, base, EDITS[cluster % len(EDITS)])
            for edit, parts in (("", base), (EDITS[cluster % len(EDITS)], twin)):
                article = "\n".join([parts["title"], parts["byline"], parts["date"], *parts["body"]])
                header, footer = furniture[site]
                pages.append(Page(len(pages), language, site, topic, cluster, edit, article,
                                  "\n".join([header, article, footer])))
    return pages


def _article(words: Language, topic: int, size: int) -> dict:
    return {"title": words.sentence(topic, 4, 10), "byline": words.byline(), "date": words.date_line(),
            "body": words.paragraphs(topic, size)}


def _edited(words: Language, base: dict, edit: str) -> dict:
    if edit == "date":
        return {**base, "date": words.date_line()}
    if edit == "byline":
        return {**base, "byline": words.byline()}
    body = list(base["body"])
    body.insert(words.rng.randint(1, len(body)), words.ad())
    return {**base, "body": body}


# SimHash feature sets compared: keyword arguments of textfilter.fingerprint.simhash.
VARIANTS = {
    "shingles": {"unigram_weight": 0},                        # 3-word / 3-character shingles alone
    "shingles2": {"word_shingle": 2, "cjk_ngram": 2, "unigram_weight": 0},
    "shingles+uni1": {"unigram_weight": 1},                   # + each distinct token, weight w * (1 + ln tf)
    "shingles+uni2": {"unigram_weight": 2},
    "shingles+uni4": {"unigram_weight": 4},
    "shingles+uni8": {"unigram_weight": 8},
}
DEFAULT_VARIANT = "shingles+uni" + f"{UNIGRAM_WEIGHT:g}"
BAR = 0.95   # the bar for precision and recall


@dataclass(frozen=True)
class Row:
    seed: int
    scope: str
    variant: str
    k: int
    language: str
    known_pairs: int
    found_pairs: int
    true_pairs: int
    precision: float
    recall: float
    stream_precision: float
    stream_recall: float
    recall_date: float
    recall_ad: float
    recall_byline: float
    twin_distance_mean: float
    distinct_same_topic_distance_mean: float
    distinct_same_topic_distance_min: int


def measure(pages: list[Page], scope: str, variant: str, seed: int) -> list[Row]:
    """Rows for every k and language for one scope and SimHash variant; the stream order comes from seed."""
    texts = [page.text if scope == "page" else page.article for page in pages]
    hashes = [simhash(text, **VARIANTS[variant]) for text in texts]
    md5s = [text_md5(text) for text in texts]
    distances = _pair_distances(hashes)
    order = list(range(len(pages)))
    random.Random(seed + 1).shuffle(order)
    rows = []
    for language in ("all", "en", "zh"):
        chosen = np.array([language in ("all", page.language) for page in pages])
        for k in DISTANCES:
            stream = _stream(pages, order, md5s, hashes, k, chosen)
            rows.append(_row(pages, distances, chosen, (seed, scope, variant, k, language), stream))
    return rows


def _pair_distances(hashes: list[int]) -> np.ndarray:
    """Matrix of Hamming distances between all fingerprints."""
    values = np.array(hashes, dtype=np.uint64)
    bits = np.unpackbits(values.view(np.uint8)).reshape(len(values), 64).astype(np.float32)
    # Hamming distance = ones(a) + ones(b) - 2 * common ones (float32 is exact for these small counts).
    ones = bits.sum(axis=1)
    return (ones[:, None] + ones[None, :] - 2 * (bits @ bits.T)).round().astype(np.int16)


def _stream(pages, order, md5s, hashes, k, chosen) -> tuple[int, int, int]:
    """(verdicts, right verdicts, twins seen second) for the chosen pages streamed through ContentSeen."""
    seen = ContentSeen(near=True, distance=k)
    verdicts = right = expected = 0
    first_of_cluster: set[int] = set()
    for index in order:
        if not chosen[index]:
            continue
        page = pages[index]
        verdict = seen.check(page.page_id, md5s[index], hashes[index])
        twin_seen = page.cluster in first_of_cluster
        first_of_cluster.add(page.cluster)
        expected += twin_seen
        match = verdict.duplicate_of if verdict.duplicate_of is not None else verdict.near_duplicate_of
        if match is not None:
            verdicts += 1
            right += pages[match].cluster == page.cluster
    return verdicts, right, expected


def _row(pages, distances, chosen, key, stream) -> Row:
    clusters = np.array([page.cluster for page in pages])
    upper = np.triu(np.ones_like(distances, dtype=bool), 1) & chosen[:, None] & chosen[None, :]
    twins = upper & (clusters[:, None] == clusters[None, :])
    found = upper & (distances <= key[3])
    same_topic = upper & ~twins & _same(pages, "site") & _same(pages, "topic")
    kinds = np.array([page.edit for page in pages])
    # The twin is the later page of its pair, so its edit names the pair's kind.
    of_kind = [twins & (kinds == edit)[None, :] for edit in EDITS]
    verdicts, right, expected = stream
    return Row(*key, int(twins.sum()), int(found.sum()), int((found & twins).sum()),
               _ratio((found & twins).sum(), found.sum()), _ratio((found & twins).sum(), twins.sum()),
               _ratio(right, verdicts), _ratio(right, expected),
               *(_ratio((found & kind).sum(), kind.sum()) for kind in of_kind),
               float(distances[twins].mean()), float(distances[same_topic].mean()),
               int(distances[same_topic].min()))


def _same(pages, field: str) -> np.ndarray:
    values = np.array([getattr(page, field) * 10 + (page.language == "zh") for page in pages])
    return values[:, None] == values[None, :]


def _ratio(part, whole) -> float:
    return float(part) / float(whole) if whole else 1.0


COLUMNS = (Column("seed", "seed"), Column("scope", "scope"), Column("variant", "variant"), Column("k", "k"),
           Column("language", "lang"), Column("precision", "precision", "{:.3f}".format),
           Column("recall", "recall", "{:.3f}".format),
           Column("stream_precision", "stream precision", "{:.3f}".format),
           Column("stream_recall", "stream recall", "{:.3f}".format),
           Column("recall_date", "recall date", "{:.2f}".format), Column("recall_ad", "recall ad", "{:.2f}".format),
           Column("recall_byline", "recall byline", "{:.2f}".format),
           Column("twin_distance_mean", "twin dist", "{:.1f}".format),
           Column("distinct_same_topic_distance_mean", "same-topic dist", "{:.1f}".format),
           Column("distinct_same_topic_distance_min", "same-topic min", "{}".format))
SUMMARY = (Column("scope", "scope"), Column("variant", "variant"),
           Column("p3", "precision k=3 (min over seeds)", "{:.3f}".format),
           Column("r3", "recall k=3 (min)", "{:.3f}".format), Column("r3_mean", "recall k=3 (mean)", "{:.3f}".format),
           Column("k_bar", "smallest k with both >= 0.95 on every seed"),
           Column("p_bar", "precision there (min)", "{:.3f}".format), Column("r_bar", "recall there (min)", "{:.3f}".format))
COST = (Column("k", "k"), Column("tables", "tables"), Column("slots", "slots per table"),
        Column("per_lookup", "candidates per lookup", "{:.1f}".format),
        Column("expected", "about tables * n / slots", "{:.1f}".format))


@click.command()
@click.option("--articles", default=600, show_default=True, help="base articles per seed (each gets one twin)")
@click.option("--seeds", default="2026,7,21", show_default=True, help="comma-separated seeds of generated sets")
@click.option("--index-pages", default=100_000, show_default=True,
              help="random fingerprints in the candidate-cost measurement of the near index")
@click.option("--out", default="near-dup-results", show_default=True, type=click.Path(path_type=Path))
def main(articles: int, seeds: str, index_pages: int, out: Path) -> None:
    """Precision and recall of SimHash near-duplicate detection on generated pages with known pairs."""
    started = time.perf_counter()
    seed_list = [int(seed) for seed in seeds.split(",")]
    rows = []
    for seed in seed_list:
        pages = generate_pages(articles, seed)
        rows += [row for scope in SCOPES for variant in VARIANTS for row in measure(pages, scope, variant, seed)]
    costs = candidate_costs(index_pages, (3, 4, 5, 6))
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", list(Row.__dataclass_fields__), (row.__dict__ for row in rows))
    body = _report(rows, pages, costs, index_pages)
    info = run_info("compare_near_dup", f"{len(pages)} generated pages ({articles} articles + twins) per seed",
                    seed_list[0])
    write_markdown(out / "results.md", "Near-duplicate detection", info, body)
    write_json(out / "run.json", info, {"seeds": seed_list, "seconds": round(time.perf_counter() - started, 1)})
    click.echo(body)


def candidate_costs(pages: int, distances) -> list[dict]:
    """Fingerprints examined per lookup by NearIndex holding `pages` random fingerprints (its own counter)."""
    rng = random.Random(1)
    fingerprints = [rng.getrandbits(64) for _ in range(pages)]
    probes = [rng.getrandbits(64) for _ in range(2000)]
    costs = []
    for k in distances:
        index = NearIndex(k)
        for page_id, fingerprint in enumerate(fingerprints):
            index.add(page_id, fingerprint)
        index.candidates_examined = 0
        for probe in probes:
            index.closest(probe)
        costs.append({"k": k, "tables": index.tables, "slots": index.slots,
                      "per_lookup": index.candidates_examined / len(probes),
                      "expected": index.tables * pages / index.slots})
    return costs


def summary(rows: list[Row]) -> list[dict]:
    """Per scope and variant (all languages): k=3 precision/recall over the seeds, and the smallest k
    at which both reach the bar on every seed."""
    table = []
    for scope in SCOPES:
        for variant in VARIANTS:
            by_k = {k: [r for r in rows if (r.scope, r.variant, r.k, r.language) == (scope, variant, k, "all")]
                    for k in DISTANCES}
            passing = [k for k in DISTANCES if all(r.precision >= BAR and r.recall >= BAR for r in by_k[k])]
            k_bar = passing[0] if passing else None
            table.append({"scope": scope, "variant": variant, "p3": min(r.precision for r in by_k[3]),
                          "r3": min(r.recall for r in by_k[3]),
                          "r3_mean": sum(r.recall for r in by_k[3]) / len(by_k[3]),
                          "k_bar": "none" if k_bar is None else k_bar,
                          "p_bar": min(r.precision for r in by_k[k_bar]) if passing else float("nan"),
                          "r_bar": min(r.recall for r in by_k[k_bar]) if passing else float("nan")})
    return table


def _report(rows: list[Row], pages: list[Page], costs: list[dict], index_pages: int) -> str:
    words = [len(page.text.split()) for page in pages if page.language == "en"]
    default = [r for r in rows if r.scope == "page" and r.variant == DEFAULT_VARIANT and r.language == "all"
               and 2 <= r.k <= 6]
    languages = [r for r in rows if r.scope == "page" and r.variant == DEFAULT_VARIANT and r.language != "all"
                 and r.k in (3, 4)]
    return "\n\n".join([
        f"{len(pages)} pages per seed; English pages {min(words)}-{max(words)} words with boilerplate "
        f"(last seed).",
        "## Every variant and scope, all languages", markdown_table(SUMMARY, summary(rows)),
        f"## Default ({DEFAULT_VARIANT}), full page text, k = 2..6, every seed",
        markdown_table(COLUMNS, [r.__dict__ for r in default]),
        "## Default, by language, k = 3 and 4", markdown_table(COLUMNS, [r.__dict__ for r in languages]),
        f"## Near-index cost: candidates examined per lookup, {index_pages:,} random fingerprints",
        markdown_table(COST, costs)])


if __name__ == "__main__":
    fix_hash_seed()
    main()

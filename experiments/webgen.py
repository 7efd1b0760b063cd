"""Labelled test webs for the crawl-order experiment: topic clusters, link locality, tunnels, known PageRank.

`generate(WebSpec(pages=2000, p_local=0.7, seed=3))` returns a `Web`: every
page's host, topic, cluster, relevance label, title, text and out-links with
their anchor texts, the seed page, and the exact PageRank of the link graph.
`render(web, bases)` turns it into HTML bytes once the hosts' base URLs are
known (experiments/webserve.py binds them on loopback first). Pure: no
sockets, no files; the same spec gives the same web, byte for byte.

The model, each knob a field of WebSpec:
- Topics and clusters. Topic 0 is the target topic; its pages form
  `clusters` clusters, every other topic one cluster. Topics share the pages
  equally (so `1 / topics` of the web is relevant). A page's text draws
  `topic_words` of its words from its topic's vocabulary and the rest from
  a vocabulary of noise words every topic shares, both Zipf-distributed;
  a share `ambiguity` of each topic's vocabulary comes from a pool of words
  any topic may use, so pages of other topics share some of the target's
  words and a page's TF-IDF relevance is informative, not a perfect label.
- Link locality. Each link stays within its page's cluster with probability
  `p_local`; otherwise it goes to a page of another cluster.
- Power-law in-degree. Pages are created in a random order, and each page
  links to pages created before it, chosen with probability proportional to
  in-degree + 1 (preferential attachment: the Barabasi-Albert process, whose
  in-degree follows a power law). A page has `links_min`..`links_max` such
  links.
- Reachability. A second random order, starting at the seed, grows a
  spanning tree: each page gets one in-link from a page already in the tree
  (from its own cluster with probability `p_local`), so every page is
  reachable from the seed and the budgets are fractions of what a crawl can
  find.
- Anchor quality. A link's anchor holds words of its target's topic with
  probability `anchor_quality`, else generic words ("read more" style).
- Tunnels. With `tunnel_length` L > 0 the target topic's clusters form a
  chain: cluster k >= 1 is reachable only through a chain of L irrelevant
  pages that starts on a page of cluster k-1; nothing else links into it.
  Tunnel pages belong to irrelevant topics and are never link targets
  except from their predecessor, so the chain is exactly L pages long.
- Hosts. Each cluster has a home host; a page lives there with probability
  `host_locality`, else on a random host.
"""
from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

DAMPING = 0.85
PAGERANK_TOLERANCE = 1e-13      # L1 change between iterations at which the power iteration stops
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"
NOISE_VOCABULARY = 400          # words every topic shares
TOPIC_VOCABULARY = 80           # words of one topic
AMBIGUOUS_POOL = 100            # words any topic may use (the `ambiguity` share of its vocabulary)
TOPIC_KEYWORDS = 25             # the target topic's most frequent words: the crawl's --topic-file
ANCHOR_WORDS = 2


@dataclass(frozen=True)
class WebSpec:
    pages: int = 2000              # pages in the web, tunnels included
    hosts: int = 8                 # web servers (loopback addresses when served)
    topics: int = 10               # topic 0 is the target; 1 / topics of the pages are relevant
    clusters: int = 3              # clusters the target topic's pages form (the others: one each)
    p_local: float = 0.7           # probability a link stays within its page's cluster
    anchor_quality: float = 0.7    # probability an anchor holds words of its target's topic
    tunnel_length: int = 0         # irrelevant pages between consecutive target clusters; 0 = no tunnels
    links_min: int = 3             # preferential-attachment out-links per page, drawn uniformly
    links_max: int = 10
    host_locality: float = 0.8     # probability a page lives on its cluster's home host
    words: int = 120               # words of a page's text
    topic_words: float = 0.25      # share of them from the page's topic vocabulary
    ambiguity: float = 0.2         # share of a topic's vocabulary taken from words all topics share
    seed: int = 1

    def __post_init__(self):
        tunnels = (self.clusters - 1) * self.tunnel_length
        if not (self.topics >= 2 and self.clusters >= 1 and self.hosts >= 1
                and self.pages >= self.topics + self.clusters + tunnels
                and 0 <= self.p_local <= 1 and 0 <= self.anchor_quality <= 1 and 0 <= self.host_locality <= 1
                and 0 <= self.topic_words <= 1 and 0 <= self.ambiguity <= 1 and 1 <= self.links_min <= self.links_max
                and self.words >= 1 and self.tunnel_length >= 0):
            raise ValueError(f"invalid web spec: {self}")


@dataclass(frozen=True)
class Page:
    id: int
    host: int                                # index into the served bases
    topic: int
    cluster: int
    relevant: bool                           # topic == 0
    title: str
    text: str
    links: tuple[tuple[int, str], ...]       # (target id, anchor text), distinct targets, no self-links

    @property
    def path(self) -> str:
        return f"/p/{self.id}.html"


@dataclass(frozen=True)
class Web:
    spec: WebSpec
    pages: tuple[Page, ...]
    seed: int                                # the page the crawl starts from (relevant, cluster 0)
    pagerank: tuple[float, ...]              # by page id; sums to 1
    topic_text: str                          # the target topic's keywords, for --topic-file
    vocabularies: tuple[tuple[str, ...], ...]    # noise words, then topic 0's, 1's ...: most frequent first

    @property
    def relevant(self) -> frozenset[int]:
        return frozenset(page.id for page in self.pages if page.relevant)

    def edges(self) -> list[tuple[int, int]]:
        return _edges(self.pages)

    @property
    def tunnels(self) -> tuple[tuple[int, ...], ...]:
        """tunnels[k - 1]: the chain of page ids into target cluster k, in link order."""
        return tuple(map(tuple, _tunnel_chains(self.spec)))


@dataclass(frozen=True)
class _Shape:
    """Who is where: each page's cluster, topic and host, and the tunnels' pages."""
    cluster: list[int]
    topic: list[int]                         # by cluster
    host: list[int]
    tunnels: list[list[int]]                 # tunnels[k - 1]: the chain into target cluster k


def generate(spec: WebSpec) -> Web:
    """The web of this spec (deterministic: one random.Random(spec.seed) drives every choice)."""
    rng = random.Random(spec.seed)
    vocabularies = _vocabularies(spec, rng)
    shape = _shape(spec, rng)
    seed = rng.choice([page for page in range(spec.pages) if shape.cluster[page] == 0])
    targets = _link_targets(spec, shape, seed, rng)
    pages = tuple(_page(spec, shape, vocabularies, page, targets[page], rng) for page in range(spec.pages))
    keywords = " ".join(vocabularies[1][:TOPIC_KEYWORDS])
    words = tuple(map(tuple, vocabularies))
    return Web(spec, pages, seed, tuple(pagerank(spec.pages, _edges(pages))), keywords, words)


def _edges(pages: Sequence[Page]) -> list[tuple[int, int]]:
    return [(page.id, target) for page in pages for target, _ in page.links]


def render(web: Web, bases: Sequence[str]) -> dict[str, bytes]:
    """Page URL -> HTML bytes, each host's base URL (ending in "/") at its index in bases."""
    def url(page: Page) -> str:
        return bases[page.host] + page.path[1:]
    return {url(page): _html(page, [(url(web.pages[t]), anchor) for t, anchor in page.links])
            for page in web.pages}


def pagerank(nodes: int, edges: Sequence[tuple[int, int]], damping: float = DAMPING) -> list[float]:
    """PageRank by power iteration: a dangling page's rank is spread over every page.

    x' = (1 - d) / n + d * (sum over in-links of x[source] / outdegree[source] + dangling mass / n)
    """
    sources = np.array([s for s, _ in edges], dtype=np.int64)
    targets = np.array([t for _, t in edges], dtype=np.int64)
    out_degree = np.bincount(sources, minlength=nodes).astype(float)
    dangling = out_degree == 0
    rank = np.full(nodes, 1.0 / nodes)
    while True:
        share = np.divide(rank, out_degree, out=np.zeros(nodes), where=~dangling)
        new = (1 - damping) / nodes + damping * (np.bincount(targets, weights=share[sources], minlength=nodes)
                                                 + rank[dangling].sum() / nodes)
        if np.abs(new - rank).sum() < PAGERANK_TOLERANCE:
            return (new / new.sum()).tolist()
        rank = new


# -- words -------------------------------------------------------------------------------

def _vocabularies(spec: WebSpec, rng: random.Random) -> list[list[str]]:
    """[noise words, topic 0's words, topic 1's ...], most frequent first: made-up words, where a
    share `ambiguity` of each topic's ranks holds words of a pool every topic draws from."""
    words = _words(NOISE_VOCABULARY + AMBIGUOUS_POOL + TOPIC_VOCABULARY * spec.topics, rng)
    noise, pool = words[:NOISE_VOCABULARY], words[NOISE_VOCABULARY:NOISE_VOCABULARY + AMBIGUOUS_POOL]
    own = iter(words[NOISE_VOCABULARY + AMBIGUOUS_POOL:])
    vocabularies = [noise]
    for _ in range(spec.topics):
        shared = iter(rng.sample(pool, TOPIC_VOCABULARY))
        vocabularies.append([next(shared) if rng.random() < spec.ambiguity else next(own)
                             for _ in range(TOPIC_VOCABULARY)])
    return vocabularies


def _words(count: int, rng: random.Random) -> list[str]:
    """count distinct made-up words of two or three syllables."""
    words: dict[str, None] = {}
    while len(words) < count:
        words["".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(rng.randint(2, 3)))] = None
    return list(words)


def _zipf_words(vocabulary: list[str], count: int, rng: random.Random) -> list[str]:
    return rng.choices(vocabulary, cum_weights=_zipf_cumulative(len(vocabulary)), k=count)


@functools.cache
def _zipf_cumulative(size: int) -> tuple[float, ...]:
    return tuple(itertools.accumulate(1 / rank for rank in range(1, size + 1)))


# -- structure ---------------------------------------------------------------------------

def _shape(spec: WebSpec, rng: random.Random) -> _Shape:
    """Clusters 0..clusters-1 are the target topic's; then one cluster per other topic.
    Regular pages are dealt to topics equally; tunnel pages come last."""
    tunnel_pages = (spec.clusters - 1) * spec.tunnel_length
    regular = spec.pages - tunnel_pages
    topic = [0] * spec.clusters + list(range(1, spec.topics))
    per_topic = [regular // spec.topics + (1 if t < regular % spec.topics else 0) for t in range(spec.topics)]
    cluster = []
    for t, count in enumerate(per_topic):
        own = [c for c, ct in enumerate(topic) if ct == t]
        cluster += [own[i % len(own)] for i in range(count)]
    rng.shuffle(cluster)
    cluster += [rng.randrange(spec.clusters, len(topic)) for _ in range(tunnel_pages)]
    home = [rng.randrange(spec.hosts) for _ in topic]
    host = [home[c] if rng.random() < spec.host_locality else rng.randrange(spec.hosts) for c in cluster]
    return _Shape(cluster, topic, host, _tunnel_chains(spec))


def _tunnel_chains(spec: WebSpec) -> list[list[int]]:
    """The tunnel pages are the web's last ids, chain after chain."""
    first = spec.pages - (spec.clusters - 1) * spec.tunnel_length
    return [list(range(first + k * spec.tunnel_length, first + (k + 1) * spec.tunnel_length))
            for k in range(spec.clusters - 1)] if spec.tunnel_length else []


def _link_targets(spec: WebSpec, shape: _Shape, seed: int, rng: random.Random) -> list[list[int]]:
    """Every page's out-link targets: its spanning-tree children, its tunnel successor, and its
    preferential-attachment links, in that order, distinct and never itself."""
    links: list[list[int]] = [[] for _ in range(spec.pages)]
    for parent, child in _tree_edges(spec, shape, seed, rng) + _tunnel_edges(shape, rng):
        links[parent].append(child)
    for source, target in _attachment_edges(spec, shape, rng):
        links[source].append(target)
    return [list(dict.fromkeys(t for t in targets if t != page)) for page, targets in enumerate(links)]


def _isolated(spec: WebSpec, shape: _Shape, page: int) -> bool:
    """Pages that only their own cluster (and its tunnel) may link to: target clusters >= 1 when
    there are tunnels, and the tunnels' pages."""
    return bool(shape.tunnels) and (shape.cluster[page] in range(1, spec.clusters) or _in_tunnel(shape, page))


def _in_tunnel(shape: _Shape, page: int) -> bool:
    return bool(shape.tunnels) and page >= shape.tunnels[0][0]


def _tree_edges(spec: WebSpec, shape: _Shape, seed: int, rng: random.Random) -> list[tuple[int, int]]:
    """A spanning tree from the seed over the regular pages: each one's parent is a page already in
    the tree, from its own cluster with probability p_local (always, for an isolated cluster;
    its first page hangs from the end of its tunnel)."""
    order = [page for page in range(spec.pages) if page != seed and not _in_tunnel(shape, page)]
    rng.shuffle(order)
    in_tree: dict[int, list[int]] = {shape.cluster[seed]: [seed]}
    open_pages = [seed]                          # in the tree, and any page may link to them
    edges = []
    for page in order:
        own = in_tree.setdefault(shape.cluster[page], [])
        if _isolated(spec, shape, page):
            parent = rng.choice(own) if own else shape.tunnels[shape.cluster[page] - 1][-1]
        elif own and rng.random() < spec.p_local:
            parent = rng.choice(own)
        else:
            parent = rng.choice(open_pages)
        if not _isolated(spec, shape, page):
            open_pages.append(page)
        own.append(page)
        edges.append((parent, page))
    return edges


def _tunnel_edges(shape: _Shape, rng: random.Random) -> list[tuple[int, int]]:
    """Each tunnel's chain, starting from a random page of the cluster before it."""
    edges = []
    for k, chain in enumerate(shape.tunnels):
        before = [page for page, c in enumerate(shape.cluster) if c == k and not _in_tunnel(shape, page)]
        edges += zip([rng.choice(before)] + chain[:-1], chain)
    return edges


def _attachment_edges(spec: WebSpec, shape: _Shape, rng: random.Random) -> list[tuple[int, int]]:
    """Preferential attachment in a random creation order: each page links to pages created before
    it, each chosen with probability (in-degree + 1) / total, drawn from an urn holding every
    page once plus once per in-link. Tunnel pages are never drawn."""
    order = list(range(spec.pages))
    rng.shuffle(order)
    urns: dict[int, list[int]] = {}              # by cluster
    everyone: list[int] = []
    edges = []
    for page in order:
        for _ in range(rng.randint(spec.links_min, spec.links_max)):
            target = _attachment_target(spec, shape, page, urns, everyone, rng)
            if target is not None:
                edges.append((page, target))
                urns[shape.cluster[target]].append(target)
                everyone.append(target)
        if not _in_tunnel(shape, page):
            urns.setdefault(shape.cluster[page], []).append(page)
            everyone.append(page)
    return edges


def _attachment_target(spec: WebSpec, shape: _Shape, page: int, urns: dict[int, list[int]],
                       everyone: list[int], rng: random.Random, attempts: int = 50) -> int | None:
    own_cluster = shape.cluster[page]
    own = urns.get(own_cluster)
    if own and rng.random() < spec.p_local:
        return rng.choice(own)
    for _ in range(attempts if everyone else 0):
        target = rng.choice(everyone)
        if shape.cluster[target] != own_cluster and not _isolated(spec, shape, target):
            return target
    return None


# -- pages -------------------------------------------------------------------------------

def _page(spec: WebSpec, shape: _Shape, vocabularies: list[list[str]], page: int, targets: list[int],
          rng: random.Random) -> Page:
    topic = shape.topic[shape.cluster[page]]
    own, noise = vocabularies[1 + topic], vocabularies[0]
    topical = sum(rng.random() < spec.topic_words for _ in range(spec.words))
    words = _zipf_words(own, topical, rng) + _zipf_words(noise, spec.words - topical, rng)
    rng.shuffle(words)
    title = " ".join(_zipf_words(own, 2, rng) + _zipf_words(noise, 1, rng))
    links = tuple((t, _anchor(spec, vocabularies, shape.topic[shape.cluster[t]], rng)) for t in targets)
    return Page(page, shape.host[page], topic, shape.cluster[page], topic == 0, title, " ".join(words), links)


def _anchor(spec: WebSpec, vocabularies: list[list[str]], target_topic: int, rng: random.Random) -> str:
    source = vocabularies[1 + target_topic] if rng.random() < spec.anchor_quality else vocabularies[0]
    return " ".join(_zipf_words(source, ANCHOR_WORDS, rng))


def _html(page: Page, links: list[tuple[str, str]]) -> bytes:
    items = "".join(f'<li><a href="{escape(url)}">{escape(anchor)}</a></li>\n' for url, anchor in links)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{escape(page.title)}</title></head>\n"
            f"<body><h1>{escape(page.title)}</h1>\n<p>{escape(page.text)}</p>\n<ul>\n{items}</ul></body></html>\n"
            ).encode()

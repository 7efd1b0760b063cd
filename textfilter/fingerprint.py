"""Content fingerprints of a page's text: exact (MD5) and near-duplicate (SimHash).

Pure functions, run in the parser worker processes.  Every value here is the
same in every process and every run: tokens are hashed with BLAKE2b, never
with Python's per-process salted hash().

    normalized_text(text) -> str      what "the same text" means
    text_md5(text) -> str             hex MD5 of normalized_text(text) as UTF-8
    body_md5(body) -> str             hex MD5 of the raw response body
    tokens(text) -> list[str]         the words and CJK characters SimHash reads
    simhash(text, word_shingle=, cjk_ngram=, unigram_weight=) -> int   64-bit Charikar SimHash
    hamming(a, b) -> int              differing bits of two fingerprints

Exact sameness (normalized_text): Unicode NFKC (full-width and compatibility
forms fold to their plain equivalents), every run of white space -- line
breaks included -- becomes one space, and the ends are stripped.  Case is
kept: two pages differing only in case say something different to a reader
(code, names, acronyms), and the near-duplicate fingerprint, which folds case,
reports them at distance 0 anyway.

SimHash features (Charikar 2002; Manku, Jain & Das Sarma 2007):
- tokens: the text is NFKC-normalised and case-folded; a token is a maximal
  run of word characters other than digits (Python's \\w without \\d:
  letters, marks, underscore), except that each CJK character (Han, Hiragana,
  Katakana, Hangul) is a token of its own, since those scripts do not
  separate words with spaces.  Digits separate tokens and are not features:
  dates, times, counters and view counts are what most often differ between
  two copies of a page (measured: the date-line twins' recall at k=3 rose
  from 0.69 to 0.89, English pages); the exact MD5 still tells such pages apart;
- features: shingles of ``word_shingle`` consecutive non-CJK tokens, and
  n-grams of ``cjk_ngram`` consecutive CJK characters (the two streams are
  shingled separately, so a mixed page gets both kinds), each of weight 1 per
  occurrence; plus one feature per distinct token (word or CJK character) of
  weight ``unigram_weight * (1 + ln tf)``.  Why unigrams: an inserted ad or a
  changed line brings new shingles, but mostly words already on the page, so
  the token features hold the fingerprint still while the shingles keep
  different articles apart.  Measured (experiments/compare_near_dup.py, three
  seeds; experiments/README.md): weight 1 raises recall at k=3 from 0.80-0.83
  to 0.87-0.90 at precision 1.000.  More weight finds more twins on that set
  (0.91-0.93 at weight 4) but brings distinct pages of one small-vocabulary
  site together: on the demo site weight 4 puts 39 distinct pairs within 3
  bits, weight 1 none (closest 8 bits; shingles alone 14);
- a stream shorter than its shingle size contributes one feature, the whole
  stream, so short texts still get a fingerprint; a text with no tokens at
  all hashes to 0.  Short texts have few features, so one changed word moves
  many bits: they are rarely called near duplicates of anything, which errs
  on the side of keeping pages.
- bit i of the fingerprint is 1 when the features whose 64-bit hash has bit i
  set weigh more than half of all the features' weight.  Weights are whole
  multiples of 1/64, so the sums are exact and the same on every machine.

Speed: token hashes are cached per process (bounded), shingle hashes are
combined, mixed and counted in numpy uint64 arrays; an all-ASCII text is
tokenised on bytes, which gives the same tokens as the general path three
times faster (0.19 ms against 0.53 ms for 10 KB).  benchmarks/test_bench_simhash.py measures it.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import cache

# numpy is imported by _load_numpy on the first SimHash: exact-only crawls
# (the default) never need it, and it costs every process ~15 MB.
np = None

__all__ = ["CJK_NGRAM", "UNIGRAM_WEIGHT", "WORD_SHINGLE", "body_md5", "hamming", "normalized_text", "simhash",
           "text_md5", "tokens"]

WORD_SHINGLE = 3   # words per shingle for space-separated scripts (measured: compare_near_dup.py)
CJK_NGRAM = 3      # characters per n-gram in CJK runs (measured: compare_near_dup.py)
UNIGRAM_WEIGHT = 1.0   # weight of a distinct token, times 1 + ln(its count) (measured: compare_near_dup.py, demo site)
BITS = 64
_WEIGHT_UNIT = 64      # weights are integers in units of 1/64 of a shingle's
_MAX_UNIGRAM_WEIGHT = 1000.0

_CJK = ("\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
        "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
_CJK_CHAR = f"[{_CJK}]"
_WORD = f"[^\\W\\d{_CJK}]+"
_TOKEN = f"[{_CJK}]|{_WORD}"
# On bytes of ASCII text: letters and "_" stay, everything else separates.
_ASCII_SEPARATORS = bytes(c if c < 128 and (chr(c).isalpha() or c == 0x5F) else 0x20 for c in range(256))
_CACHE_LIMIT = 200_000   # token hashes kept per process (~30 MB at most)

_MASK = (1 << 64) - 1
# Odd multipliers that make a shingle's hash depend on token order.
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x27D4EB2F165667C5, 0x94D049BB133111EB)


def normalized_text(text: str) -> str:
    """text as compared for exact duplicates: NFKC, white-space runs as one space, stripped."""
    # str.split() splits where \s+ matches (the same isspace() rule), four times faster.
    return " ".join(unicodedata.normalize("NFKC", text).split())


def text_md5(text: str) -> str:
    """Hex MD5 of normalized_text(text) encoded as UTF-8."""
    return hashlib.md5(normalized_text(text).encode("utf-8")).hexdigest()


def body_md5(body: bytes) -> str:
    """Hex MD5 of the raw body bytes, as received."""
    return hashlib.md5(body).hexdigest()


def hamming(a: int, b: int) -> int:
    """Number of bit positions in which two 64-bit fingerprints differ."""
    return ((a ^ b) & _MASK).bit_count()


def tokens(text: str) -> list[str]:
    """The case-folded words and single CJK characters of text, in order (see module docstring)."""
    return _compiled(_TOKEN).findall(unicodedata.normalize("NFKC", text).casefold())


def simhash(text: str, word_shingle: int = WORD_SHINGLE, cjk_ngram: int = CJK_NGRAM,
            unigram_weight: float = UNIGRAM_WEIGHT) -> int:
    """64-bit Charikar SimHash of text's shingles and weighted tokens; 0 for a text without tokens.

    unigram_weight=0 hashes the shingles alone (every feature weight 1).
    """
    if word_shingle < 1 or cjk_ngram < 1 or max(word_shingle, cjk_ngram) > len(_MULTIPLIERS):
        raise ValueError(f"shingle sizes must be 1..{len(_MULTIPLIERS)}")
    if not 0 <= unigram_weight <= _MAX_UNIGRAM_WEIGHT:
        raise ValueError(f"unigram_weight must be 0..{_MAX_UNIGRAM_WEIGHT}, got {unigram_weight}")
    if np is None:
        _load_numpy()
    words, cjk = _token_hashes(text)
    features = [f for f in (_shingles(words, word_shingle), _shingles(cjk, cjk_ngram)) if f.size]
    if not features:
        return 0
    weights = [np.full(sum(f.size for f in features), float(_WEIGHT_UNIT))]
    if unigram_weight:
        unigrams, unigram_weights = _unigrams(np.concatenate((words, cjk)), unigram_weight)
        features.append(unigrams)
        weights.append(unigram_weights)
    return _weighted_majority(np.concatenate(features), np.concatenate(weights))


def _token_hashes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of the non-CJK tokens and of the CJK characters of text, each in order."""
    _TOKEN_HASHES.bound()
    if text.isascii():
        # NFKC leaves ASCII alone and ASCII has no CJK: same tokens as tokens(text), on bytes.
        words = text.encode("ascii").lower().translate(_ASCII_SEPARATORS).split()
        return _as_array(map(_TOKEN_HASHES.__getitem__, words), len(words)), _EMPTY
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = _compiled(_WORD).findall(folded)
    cjk = _compiled(_CJK_CHAR).findall(folded)
    lookup = _TOKEN_HASHES.__getitem__
    return _as_array(map(lookup, words), len(words)), _as_array(map(lookup, cjk), len(cjk))


@cache
def _compiled(pattern: str) -> re.Pattern:
    """pattern compiled at its first use: exact-only crawls (the default) never
    tokenize, and these classes of tens of thousands of code points take
    ~7 ms of every start-up to compile."""
    return re.compile(pattern)


def _as_array(values, count: int) -> np.ndarray:
    return np.fromiter(values, dtype=np.uint64, count=count)


def _shingles(hashes: np.ndarray, size: int) -> np.ndarray:
    """One mixed 64-bit hash per run of `size` consecutive token hashes (one for a shorter stream)."""
    if hashes.size == 0:
        return hashes
    size = min(size, hashes.size)
    count = hashes.size - size + 1
    combined = hashes[:count] * _POSITION_MULTIPLIERS[0]
    for offset in range(1, size):
        combined += hashes[offset:offset + count] * _POSITION_MULTIPLIERS[offset]
    return _mix(combined)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: every input bit reaches every output bit (uint64 arithmetic wraps)."""
    x = x ^ (x >> np.uint64(30))
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _unigrams(hashes: np.ndarray, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """One feature per distinct token, weighing weight * (1 + ln tf) shingle weights, rounded to 1/_WEIGHT_UNIT."""
    distinct, counts = np.unique(hashes, return_counts=True)
    weights = np.rint(weight * _WEIGHT_UNIT * (1.0 + np.log(counts)))
    return _mix(distinct ^ _UNIGRAM_SALT), weights


def _weighted_majority(features: np.ndarray, weights: np.ndarray) -> int:
    """Bit i set when the features having bit i set weigh more than half of all the features."""
    # Little-endian bytes, little-endian bits: column i of the bit matrix is bit i of the hash.
    bits = np.unpackbits(features.astype("<u8", copy=False).view(np.uint8), bitorder="little")
    # The weights are whole numbers and every sum stays far below 2**53, so float64 (BLAS) sums them
    # exactly in any order: the result is the same on every machine and in every process.
    ones = weights @ bits.reshape(-1, BITS).astype(np.float64)
    majority = (ones * 2 > weights.sum()).astype(np.uint8)
    return int(np.packbits(majority, bitorder="little").view("<u8")[0])


class _TokenHashCache(dict):
    """token -> 64-bit BLAKE2b of its UTF-8 bytes; a per-process memo.

    Keys are ASCII bytes (the fast path) or str (the general path); both hash
    the same UTF-8 bytes, so a token has one value whichever path read it.
    """

    def __missing__(self, token: bytes | str) -> int:
        data = token.encode("utf-8") if isinstance(token, str) else token
        value = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
        self[token] = value
        return value

    def bound(self) -> None:
        """Forget everything once the memo is full: a crawl's vocabulary grows without end."""
        if len(self) > _CACHE_LIMIT:
            self.clear()


_TOKEN_HASHES = _TokenHashCache()


def _load_numpy() -> None:
    """Import numpy and make the constants that need it. ``np`` is set last: a
    second thread (--processes 0 digests in fetch threads) that sees it set
    also sees the constants; two threads loading at once do the same work twice."""
    global np, _POSITION_MULTIPLIERS, _EMPTY, _UNIGRAM_SALT
    import numpy
    _POSITION_MULTIPLIERS = numpy.array(_MULTIPLIERS, dtype=numpy.uint64)
    _EMPTY = numpy.zeros(0, dtype=numpy.uint64)
    # Keeps a token's unigram feature apart from the 1-token shingle of a one-word text.
    _UNIGRAM_SALT = numpy.uint64(0x5555_5555_5555_5555)
    np = numpy

"""Byte-level BPE in plain Python: the readable definition of what tokenmill computes.

Read this module top to bottom to learn BPE; the Rust trainer and encoder are tested equal to
it. Nothing here is fast, but training counts each distinct chunk once (weighted by how often
it occurs) and updates pair counts only in the chunks a merge touches, so small corpora train
in seconds.

The rules (DESIGN.md §2):

1. Cut the text into chunks with the split pattern; merges never cross a chunk boundary.
2. Each chunk is a sequence of byte ids 0..255.
3. The most frequent adjacent pair becomes token ``256 + k``. Ties go to the pair that occurs
   first in the training text *as it stands now*: scan the chunks in text order, then left to
   right inside each chunk.
4. Every occurrence of the pair is replaced, left to right, without overlap.
5. Stop when the vocabulary is full or no pair is seen ``min_frequency`` times.

The worked example of DESIGN.md: ``(a,b)``, ``( ,c)`` and ``(c,d)`` are each seen twice,
``(a,b)`` comes first; then ``( ,c)`` comes before ``(c,d)`` inside `` cd``.

>>> merges = train(["ab cd ab cd"], 256 + 10, pattern="gpt2")
>>> [(left, right, count) for left, right, count in merges]
[(97, 98, 2), (32, 99, 2), (257, 100, 2)]
>>> tokens = vocab(merges)
>>> tokens[256], tokens[257], tokens[258]
(b'ab', b' c', b' cd')
>>> encode("ab cd abcd", merges, pattern="gpt2")
[256, 258, 32, 256, 99, 100]
>>> decode([256, 258], merges)
'ab cd'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import regex  # type: ignore[import-untyped]

from tokenmill.patterns import name_of, resolve
from tokenmill.unicode_data import for_regex

Pair = tuple[int, int]
MergeRule = tuple[int, int, int]  # (left id, right id, how often the pair was seen)


def split(text: str, pattern: str) -> list[str]:
    """Cut ``text`` into chunks: ``regex.findall`` of the pattern (a name or a regex).

    Text the pattern does not match becomes a chunk of its own, so no byte is lost (the named
    patterns match everything anyway). A named pattern's classes hold the code points that
    tiktoken's engine puts in them (``tokenmill.unicode_data``), not those of ``regex``'s newer
    Unicode data.

    >>> split("Hello world!!", "gpt2")
    ['Hello', ' world', '!!']
    """
    chunks = []
    end = 0
    named = name_of(pattern) is not None
    for m in regex.finditer(for_regex(resolve(pattern)) if named else pattern, text):
        if m.end() == m.start():
            continue  # an empty match cuts nothing
        if m.start() > end:
            chunks.append(text[end : m.start()])
        chunks.append(m.group())
        end = m.end()
    if end < len(text):
        chunks.append(text[end:])
    return chunks


def merge_word(word: list[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``word``, left to right, without overlap.

    >>> merge_word([97, 97, 97], (97, 97), 256)
    [256, 97]
    """
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def pairs_of(word: list[int]) -> list[Pair]:
    """The adjacent pairs of ``word``, left to right (with repeats).

    >>> pairs_of([1, 2, 3])
    [(1, 2), (2, 3)]
    """
    return list(itertools.pairwise(word))


def count_chunks(texts: Iterable[str], pattern: str) -> dict[str, int]:
    """How often each distinct chunk occurs. A dict keeps insertion order, so the chunks are
    in order of their first occurrence in the text, which is what the tie-break needs."""
    counts: dict[str, int] = {}
    for text in texts:
        for chunk in split(text, pattern):
            counts[chunk] = counts.get(chunk, 0) + 1
    return counts


# What a distinct chunk counts for against a bounded table, besides its UTF-8 bytes.
CHUNK_COST = 64


def count_chunks_bounded(
    batches: Iterable[Iterable[str]], pattern: str, limit: int
) -> tuple[dict[str, int], int]:
    """:func:`count_chunks` in a table of bounded size, as training counts a corpus too large
    to hold every distinct chunk; returns the counts and the occurrences dropped.

    Each distinct chunk counts for its UTF-8 bytes plus ``CHUNK_COST``. After each batch of
    texts, if the table holds more than ``limit``, every chunk seen at most ``t`` times so far
    is dropped, ``t`` the smallest count that leaves at most ``limit // 2``. A chunk seen again
    later starts from 0 and takes its place in the order there. Nothing is dropped while the
    table fits, and then the counts are exactly :func:`count_chunks`'s.

    >>> count_chunks_bounded([["a a a b"], ["c"]], "gpt2", 2 * (2 + CHUNK_COST) + 1)
    ({' a': 2, 'c': 1}, 2)
    """
    counts: dict[str, int] = {}
    dropped = 0
    for batch in batches:
        for text in batch:
            for chunk in split(text, pattern):
                counts[chunk] = counts.get(chunk, 0) + 1
        sizes: dict[int, int] = {}  # count -> size of the chunks seen that many times
        for chunk, n in counts.items():
            sizes[n] = sizes.get(n, 0) + len(chunk.encode("utf-8")) + CHUNK_COST
        kept = sum(sizes.values())
        if kept <= limit:
            continue
        most = 0
        while kept > limit // 2 and most < max(sizes):
            most += 1
            kept -= sizes.get(most, 0)
        dropped += sum(n for n in counts.values() if n <= most)
        counts = {chunk: n for chunk, n in counts.items() if n > most}
    return counts, dropped


def train(
    texts: Iterable[str],
    vocab_size: int,
    *,
    pattern: str = "cl100k",
    min_frequency: int = 2,
) -> list[MergeRule]:
    """Learn ``vocab_size - 256`` merges (fewer if no pair is seen ``min_frequency`` times).

    ``texts`` are one corpus in order; no chunk spans two of them. Returns the merges in
    order: merge ``k`` makes token ``256 + k``.

    >>> train(["aaa aaa"], 258, pattern="gpt2")
    [(97, 97, 4), (256, 97, 2)]
    """
    return train_counts(count_chunks(texts, pattern), vocab_size, min_frequency=min_frequency)


def train_counts(
    chunk_counts: dict[str, int], vocab_size: int, *, min_frequency: int = 2
) -> list[MergeRule]:
    """:func:`train` from the distinct chunks with their counts, in order of first occurrence
    (what :func:`count_chunks` or :func:`count_chunks_bounded` returns)."""
    # words[i]: the current ids of distinct chunk i; freq[i]: how often it occurs.
    words = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
    freq = list(chunk_counts.values())

    # counts[pair]: how often the pair is seen, over all chunks (weighted by frequency).
    # where[pair]: the chunks that hold it, so a merge only visits those.
    counts: dict[Pair, int] = {}
    where: dict[Pair, set[int]] = {}
    for i, word in enumerate(words):
        for pair in pairs_of(word):
            counts[pair] = counts.get(pair, 0) + freq[i]
            where.setdefault(pair, set()).add(i)

    merges: list[MergeRule] = []
    while 256 + len(merges) < vocab_size and counts:
        best_count = max(counts.values())
        if best_count < min_frequency:
            break
        pair = first_in_text({p for p, c in counts.items() if c == best_count}, words, where)
        new_id = 256 + len(merges)
        merges.append((pair[0], pair[1], best_count))

        # Merge in every chunk that holds the pair; move its pair counts from old to new.
        for i in sorted(where.pop(pair)):
            old = words[i]
            new = merge_word(old, pair, new_id)
            for p in pairs_of(old):
                counts[p] -= freq[i]
                if counts[p] == 0:
                    del counts[p]
            for p in pairs_of(new):
                counts[p] = counts.get(p, 0) + freq[i]
            new_pairs = set(pairs_of(new))
            for p in set(pairs_of(old)) - new_pairs:
                if p in where:
                    where[p].discard(i)
            for p in new_pairs:
                where.setdefault(p, set()).add(i)
            words[i] = new
        counts.pop(pair, None)
    return merges


def first_in_text(
    candidates: set[Pair], words: list[list[int]], where: dict[Pair, set[int]]
) -> Pair:
    """The candidate pair that occurs first in the text as it stands now.

    Chunks are numbered by first occurrence, so the first chunk (lowest number) holding any
    candidate is where the text first shows one; inside it, the leftmost candidate wins.
    """
    if len(candidates) == 1:
        return next(iter(candidates))
    first_chunk = min(min(where[p]) for p in candidates)
    for pair in pairs_of(words[first_chunk]):
        if pair in candidates:
            return pair
    raise AssertionError("a candidate pair is in no chunk")  # unreachable: counts say it is


def vocab(merges: Iterable[MergeRule]) -> list[bytes]:
    """The bytes of every token: the 256 single bytes, then one token per merge.

    >>> vocab([(104, 105, 3)])[256]
    b'hi'
    """
    tokens = [bytes([b]) for b in range(256)]
    for left, right, _count in merges:
        tokens.append(tokens[left] + tokens[right])
    return tokens


def encode(text: str, merges: list[MergeRule], *, pattern: str = "cl100k") -> list[int]:
    """Encode ``text``: split it, then apply the merges to each chunk, earliest merge first.

    >>> encode("abab", [(97, 98, 2)], pattern="gpt2")
    [256, 256]
    """
    rank = {(left, right): 256 + k for k, (left, right, _count) in enumerate(merges)}
    ids: list[int] = []
    for chunk in split(text, pattern):
        word = list(chunk.encode("utf-8"))
        while len(word) > 1:
            # The pair with the earliest merge is applied first, everywhere in the chunk.
            pair = min(pairs_of(word), key=lambda p: rank.get(p, float("inf")))
            if pair not in rank:
                break
            word = merge_word(word, pair, rank[pair])
        ids.extend(word)
    return ids


class SplitMix64:
    """The random numbers BPE-dropout draws: splitmix64, seeded with a 64-bit integer.

    >>> rng = SplitMix64(0)
    >>> hex(rng.next()), hex(rng.next())
    ('0xe220a8397b1dcdaf', '0x6e789e6aa1b965f4')
    """

    MASK = 2**64 - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def drops(self, p: float) -> bool:
        """True with probability ``p``: the top 53 bits of the next number, as a fraction of
        2**53, are below it."""
        return (self.next() >> 11) < int(p * 2**53)


def encode_dropout(
    text: str, merges: list[MergeRule], p: float, seed: int, *, pattern: str = "cl100k"
) -> list[int]:
    """Encode ``text`` with BPE-dropout (Provilkov et al., 2020), the draws from
    ``SplitMix64(seed)``: split it, then in each chunk, from single bytes, take the adjacent
    pairs that join into a token, lowest id first (leftmost of equal ones), and draw for each
    in turn, skipping it with probability ``p``, until one is kept: merge it and start over.
    When every pair is skipped, or none joins, the chunk is done. ``p`` = 0 merges as
    :func:`encode` does (whole words included); ``p`` = 1 gives the bytes.

    >>> merges = [(97, 98, 2), (256, 99, 1)]  # ab, abc
    >>> encode_dropout("abc", merges, 0.0, 1, pattern="gpt2")
    [257]
    >>> encode_dropout("abc", merges, 1.0, 1, pattern="gpt2")
    [97, 98, 99]
    """
    rank = {token: i for i, token in enumerate(vocab(merges))}
    rng = SplitMix64(seed)
    ids: list[int] = []
    for chunk in split(text, pattern):
        parts = [bytes([b]) for b in chunk.encode("utf-8")]
        while True:
            pairs = sorted(
                (rank[parts[i] + parts[i + 1]], i)
                for i in range(len(parts) - 1)
                if parts[i] + parts[i + 1] in rank
            )
            kept = next((i for _, i in pairs if not rng.drops(p)), None)
            if kept is None:
                break
            parts[kept : kept + 2] = [parts[kept] + parts[kept + 1]]
        ids.extend(rank[part] for part in parts)
    return ids


def decode(ids: Iterable[int], merges: list[MergeRule]) -> str:
    """Concatenate the bytes of the tokens; invalid UTF-8 becomes U+FFFD.

    >>> decode([104, 105], [])
    'hi'
    """
    tokens = vocab(merges)
    return b"".join(tokens[i] for i in ids).decode("utf-8", errors="replace")


def merge_by_rank(piece: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """tiktoken's rule on one chunk, with no whole-chunk shortcut: join the adjacent pair whose
    joined bytes are the token of lowest rank, until no adjacent pair is a token.

    >>> merge_by_rank(b"abc", {b"bc": 0, b"ab": 1})
    [b'a', b'bc']
    """
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        joined = [ranks.get(a + b) for a, b in itertools.pairwise(parts)]
        found = [(r, i) for i, r in enumerate(joined) if r is not None]
        if not found:
            break
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def encode_by_rank(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """tiktoken's encoding of one chunk: its id when the chunk is a token, else the ids of
    :func:`merge_by_rank`'s parts.

    >>> encode_by_rank(b"abc", {bytes([b]): b for b in range(256)} | {b"bc": 256})
    [97, 256]
    """
    if piece in ranks:
        return [ranks[piece]]
    return [ranks[part] for part in merge_by_rank(piece, ranks)]


def extend(
    texts: Iterable[str],
    tokens: list[bytes],
    n_merges: int,
    *,
    pattern: str = "cl100k",
    min_frequency: int = 2,
) -> list[MergeRule]:
    """Continue training from the vocabulary ``tokens`` (by id, ``b""`` for an id no ordinary
    token has): learn up to ``n_merges`` merges, merge ``k`` making token ``len(tokens) + k``.

    Every chunk is always what :func:`encode_by_rank` makes of it with the vocabulary so far;
    the pair of adjacent tokens seen most often, ties to the first in the text, becomes the
    next token. From bytes alone this is :func:`train`; from a vocabulary not learned on this
    text, one new token can make others reachable: with ``abcd`` in the vocabulary and
    ``abcde`` encoded ``a|bc|d|e``, learning ``abc`` makes it ``abcd|e``, not ``abc|d|e``.

    >>> tokens = [bytes([b]) for b in range(256)] + [b"bc", b"abcd"]
    >>> extend(["abcde abcde"], tokens, 5, pattern="gpt2")
    [(97, 256, 2), (257, 101, 2)]
    """
    chunk_counts = count_chunks(texts, pattern)
    tokens = list(tokens)
    ranks = {token: i for i, token in enumerate(tokens) if token}
    merges: list[MergeRule] = []
    while len(merges) < n_merges:
        counts: dict[Pair, int] = {}  # in order of first occurrence in the text
        for chunk, freq in chunk_counts.items():
            for pair in pairs_of(encode_by_rank(chunk.encode("utf-8"), ranks)):
                counts[pair] = counts.get(pair, 0) + freq
        if not counts or max(counts.values()) < min_frequency:
            break
        pair = max(counts, key=lambda p: counts[p])  # the first of the most frequent
        merges.append((pair[0], pair[1], counts[pair]))
        ranks[tokens[pair[0]] + tokens[pair[1]]] = len(tokens)
        tokens.append(tokens[pair[0]] + tokens[pair[1]])
    return merges


def remove(tokens: list[bytes], removed: Iterable[int]) -> tuple[list[bytes], list[int | None]]:
    """The vocabulary (tokens by rank) without the tokens ``removed``, and without every token
    that ``merge_by_rank`` made from its own bytes before and cannot make after (it would only
    ever be a whole chunk); the tokens left keep their order, numbered again without holes.
    Returns those tokens and each old id's new id (None for a token that went).

    >>> tokens = [bytes([b]) for b in range(256)] + [b"al", b"ale", b" m", b" male", b"ma"]
    >>> left, new_id = remove(tokens, [257])
    >>> left[256:], new_id[256:]
    ([b'al', b' m', b'ma'], [256, None, 257, None, 258])
    """
    gone = set(removed)
    before = {t: i for i, t in enumerate(tokens)}
    kept = [t for i, t in enumerate(tokens) if i not in gone]
    after = {t: i for i, t in enumerate(kept)}
    for i, token in enumerate(tokens):
        if i not in gone and merge_by_rank(token, before) == [token] != merge_by_rank(token, after):
            gone.add(i)
    left = [t for i, t in enumerate(tokens) if i not in gone]
    numbers = iter(range(len(left)))
    return left, [None if i in gone else next(numbers) for i in range(len(tokens))]

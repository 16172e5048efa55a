"""The report as a terminal summary: per section, one row per measure, one column per
tokenizer (the HTML page has the details and the charts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

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
    for label, cells in rows:
        out.append(
            "  "
            + label.ljust(label_w)
            + "".join("  " + c.rjust(w) for c, w in zip(cells, widths, strict=True))
        )
    return out


def _pieces(p: list[str]) -> str:
    return " ".join(repr(x) for x in p)


def render(r: Report) -> str:
    """The summary text."""
    names = r.names
    s = r.sections

    def row(label: str, section: str, f: Callable[..., str]) -> tuple[str, list[str]]:
        return label, [f(s[section][n]) for n in names]

    out = [
        f"tokenmill report: {', '.join(names)}",
        f"corpus: {r.corpus['source']}" + "".join(f"; {n}" for n in r.corpus["notes"]),
        "",
        "1. Spelling: what a token hides from the model",
    ]
    first = s["spelling"][names[0]]
    out += _table(
        names,
        [
            row("mean token length (bytes)", "spelling", lambda d: f"{d['mean_bytes']:.2f}"),
            row("tokens of 10+ characters", "spelling", lambda d: f"{d['tokens_10_plus_chars']:,}"),
            row("longest token (characters)", "spelling", lambda d: f"{d['longest'][0]['chars']}"),
            *[
                row(
                    f"tokens in {p['text']!r}"[:44],
                    "spelling",
                    lambda d, i=i: str(d["probes"][i]["tokens"]),
                )
                for i, p in enumerate(first["probes"][:4])
            ],
        ],
    )
    lang = s["languages"][names[0]]["rows"]
    out += ["", f"2. Non-English cost: tokens for the same {len(lang)} texts, relative to English"]
    out += _table(
        names,
        [
            row(
                f"{x['name']} ({x['language']})",
                "languages",
                lambda d, i=i: (
                    f"{d['rows'][i]['vs_english']:.2f}x"
                    if d["rows"][i]["vs_english"] is not None
                    else f"{d['rows'][i]['tokens']:,}"
                ),
            )
            for i, x in enumerate(lang)
        ],
    )
    lim = s["numbers"][names[0]]["limit"]
    out += ["", f"3. Numbers: every integer 0..{lim - 1:,}, alone and after a space"]
    out += _table(
        names,
        [
            row("digits per token", "numbers", lambda d: f"{d['digits_per_token']:.2f}"),
            row("single-token numbers", "numbers", lambda d: f"{d['single_token_numbers']:,}"),
            row("all single tokens below", "numbers", lambda d: f"{d['all_single_below']:,}"),
            row(
                "split unlike their digit count's usual",
                "numbers",
                lambda d: f"{d['inconsistent']:,}",
            ),
            row(
                "after a space: digits per token",
                "numbers",
                lambda d: f"{d['after_space']['digits_per_token']:.2f}",
            ),
            row(
                "after a space: single-token numbers",
                "numbers",
                lambda d: f"{d['after_space']['single_token_numbers']:,}",
            ),
            row(
                "after a space: space is a token alone",
                "numbers",
                lambda d: f"{d['after_space']['space_alone']:,}",
            ),
            *[
                row(
                    f"groupings of {b['digits']}-digit numbers",
                    "numbers",
                    lambda d, i=i: str(d["by_digits"][i]["groupings"]),
                )
                for i, b in enumerate(s["numbers"][names[0]]["by_digits"])
            ],
        ],
    )
    ws = s["whitespace"][names[0]]
    out += ["", f"4. Code and whitespace ({ws['files']} code files)"]
    out += _table(
        names,
        [
            row("pure-whitespace tokens", "whitespace", lambda d: f"{d['whitespace_share']:.1%}"),
            *[
                row(
                    f"tokens, indented with {x['style']}",
                    "whitespace",
                    lambda d, i=i: f"{d['indentation'][i]['tokens']:,}",
                )
                for i, x in enumerate(ws["indentation"])
            ],
        ],
    )
    out += ["", "5. Trailing space: prompt + word vs prompt + ' ' then the word"]
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
    out += ["", "7. Glitch-token candidates"]
    g = [
        row("no merge path from own bytes", "glitch", lambda d: f"{d['no_merge_path']['count']:,}"),
        row("split by the pattern", "glitch", lambda d: f"{d['split_by_pattern']['count']:,}"),
        row("partial UTF-8", "glitch", lambda d: f"{d['partial_utf8']['count']:,}"),
        row("never seen in the corpus", "glitch", lambda d: f"{d['never_seen']['count']:,}"),
        row("seen 1-2 times", "glitch", lambda d: f"{d['rarely_seen']['count']:,}"),
    ]
    if any("merge_residue" in s["glitch"][n] for n in names):
        g.append(
            row(
                "merge residue",
                "glitch",
                lambda d: f"{d['merge_residue']['count']:,}" if "merge_residue" in d else "-",
            )
        )
    out += _table(names, g)
    out += ["", "8. The same records as JSON, YAML, CSV, XML (tokens)"]
    fmts = s["structured"][names[0]]["rows"]
    out += _table(
        names,
        [
            row(x["format"], "structured", lambda d, i=i: f"{d['rows'][i]['tokens']:,}")
            for i, x in enumerate(fmts)
        ],
    )
    out += ["", "9. Compression (bytes per token) and vocabulary cost"]
    texts = s["compression"][names[0]]["rows"]
    emb = s["compression"][names[0]]["embedding"]
    out += _table(
        names,
        [
            *[
                row(
                    x["text"][-40:],
                    "compression",
                    lambda d, i=i: f"{d['rows'][i]['bytes_per_token']:.2f}",
                )
                for i, x in enumerate(texts)
            ],
            row("all texts", "compression", lambda d: f"{d['bytes_per_token']:.2f}"),
            *[
                row(
                    f"embedding + output MB, d={e['d_model']}, bf16",
                    "compression",
                    lambda d, i=i: f"{d['embedding'][i]['mb']['bf16']:,.0f}",
                )
                for i, e in enumerate(emb)
                if e["d_model"] in (768, 4096)
            ],
        ],
    )
    return "\n".join(out) + "\n"

"""The report as one self-contained HTML page: inline CSS, inline SVG charts, no scripts and
no external resources, so it can be mailed, attached to an issue or opened offline."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from tokenmill.analysis.failures import measures, svg
from tokenmill.analysis.failures.measures import SECTIONS, Data, Row

if TYPE_CHECKING:
    from tokenmill.analysis.failures import Report

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222;
       line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
td:has(.tok), td:has(.err), td.l { text-align: left; }
thead th { background: #f3f3f3; }
code, .tok { font-family: ui-monospace, monospace; }
.tok { background: #e8f0fe; border: 1px solid #b6c8ef; border-radius: 3px; padding: 0 2px;
       margin: 1px; white-space: pre; display: inline-block; line-height: 1.3; }
.wide { overflow-x: auto; }
.note { color: #555; font-size: 0.92em; }
.err { color: #a00; }
svg.chart { display: block; margin: 1em 0; max-width: 100%; height: auto; }
"""


def _h2(key: str) -> str:
    return f'<h2 id="{key}">{_e(SECTIONS[key])}</h2>'


def _e(x: Any) -> str:
    return escape(str(x))


def _tok(text: str) -> str:
    shown = text.replace("\n", "↵").replace("\t", "→")
    return f'<span class="tok">{_e(shown)}</span>'


def _toks(pieces: list[str]) -> str:
    return "".join(_tok(p) for p in pieces)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    # Inline-block tokens let a cell wrap between them; the rare table still too wide for the
    # page scrolls on its own instead of widening the page.
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="wide">{table}</div>'


def _by_tok(names: list[str], label: str, rows: list[tuple[str, list[str]]]) -> str:
    return _table([label, *names], [[_e(a), *cells] for a, cells in rows])


def _measures(
    names: list[str],
    label: str,
    rows: Callable[[list[Data]], list[Row]],
    sec: dict[str, Any],
    extra: list[tuple[str, list[str]]] | None = None,
) -> str:
    """A section's side-by-side measures (``measures.py``), then any HTML-only rows."""
    secs = [sec[n] for n in names]
    shown = [(a, [_e(c) for c in cs]) for a, cs in measures.cells(rows(secs), secs)]
    return _by_tok(names, label, shown + (extra or []))


def render(r: Report) -> str:
    """The page."""
    names = r.names
    s = r.sections
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>tokenmill report: {_e(', '.join(names))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>tokenmill report: {_e(', '.join(names))}</h1>",
        _table(
            ["tokenizer", "ids", "pattern", "special tokens", "trained by tokenmill"],
            [
                [
                    _e(t["name"]),
                    f"{t['n_vocab']:,}",
                    _e(t["pattern"]),
                    str(t["special_tokens"]),
                    "yes" if t["trained_by_tokenmill"] else "no",
                ]
                for t in r.tokenizers
            ],
        ),
        f'<p class="note">Corpus: {_e(r.corpus["source"])}'
        + "".join(f"; {_e(n)}" for n in r.corpus["notes"])
        + ".</p>",
    ]
    parts.append(
        '<nav><p class="note">'
        + " · ".join(f'<a href="#{key}">{_e(title)}</a>' for key, title in SECTIONS.items())
        + "</p></nav>"
    )
    sections = {
        "spelling": _spelling,
        "languages": _languages,
        "numbers": _numbers,
        "whitespace": _whitespace,
        "trailing": _trailing,
        "specials": _specials,
        "glitch": _glitch,
        "structured": _structured,
        "compression": _compression,
    }
    skipped = r.corpus.get("not_measured", {})
    for key, section in sections.items():
        if key in skipped:
            parts += [_h2(key), f'<p class="note">not measured: {_e(skipped[key])}.</p>']
        else:
            parts += section(names, s[key])
    parts.append('<p class="note">Made by tokenmill (<code>tokenmill report</code>).</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _spelling(names: list[str], sec: dict[str, Any]) -> list[str]:
    first = sec[names[0]]
    bins = list(first["length_histogram"])
    series = {
        n: [
            100 * sec[n]["length_histogram"][b] / sum(sec[n]["length_histogram"].values())
            for b in bins
        ]
        for n in names
    }
    out = [
        _h2("spelling"),
        "<p>A model sees token ids, not letters. Every character inside a token is hidden from "
        "it: to spell, count letters or reverse a word it must have memorised what each token "
        "spells.</p>",
        svg.bar_chart(
            "Token length (bytes), % of the vocabulary", bins, series, unit="%", horizontal=False
        ),
        _measures(names, "", measures.spelling, sec),
        "<p>Probe strings, as each tokenizer splits them:</p>",
        _by_tok(
            names,
            "text",
            [
                (repr(p["text"]), [_toks(sec[n]["probes"][i]["pieces"]) for n in names])
                for i, p in enumerate(first["probes"])
            ],
        ),
        "<p>The longest tokens (characters one id hides):</p>",
    ]
    for n in names:
        rows = [
            [
                str(t["id"]),
                str(t["chars"]),
                f"{_tok(t['text'][:80])}{'…' if len(t['text']) > 80 else ''}",
            ]
            for t in sec[n]["longest"]
        ]
        out.append(f"<h3>{_e(n)}</h3>" + _table(["id", "characters", "token"], rows))
    return out


def _languages(names: list[str], sec: dict[str, Any]) -> list[str]:
    rows0 = sec[names[0]]["rows"]
    cats = [f"{x['name']} ({x['language']})" for x in rows0]
    has_en = rows0[0]["vs_english"] is not None
    key = "vs_english" if has_en else "tokens"
    series = {n: [x[key] for x in sec[n]["rows"]] for n in names}
    out = [
        _h2("languages"),
        "<p>The same sentences, translated: tokens relative to English. A ratio of 3 means a "
        "speaker of that language gets a third of the context window, pays three times as much "
        "and waits three times as long for the same content.</p>",
        svg.bar_chart(
            "Tokens relative to English (same meaning)" if has_en else "Tokens",
            cats,
            series,
            unit="x English" if has_en else " tokens",
            reference=1.0 if has_en else None,
        ),
        _measures(names, "language", measures.languages, sec),
    ]
    return out


def _numbers(names: list[str], sec: dict[str, Any]) -> list[str]:
    first = sec[names[0]]
    cats = [str(b["digits"]) for b in first["by_digits"]]
    out = [
        _h2("numbers"),
        f"<p>Every integer from 0 to {first['limit'] - 1:,}, encoded on its own. When numbers with "
        "the same number of digits split into different groupings, the same token position "
        "means hundreds in one number and tens in the next: arithmetic gets harder.</p>",
        svg.bar_chart(
            "Distinct groupings, by number of digits (1 = always split the same way)",
            cats,
            {n: [b["groupings"] for b in sec[n]["by_digits"]] for n in names},
            horizontal=False,
        ),
        _measures(names, "", measures.numbers, sec),
    ]
    for n in names:
        rows = []
        for b in sec[n]["by_digits"]:
            ex = " ".join(_toks(e["pieces"]) for e in b["examples"])
            rows.append(
                [
                    str(b["digits"]),
                    f"{b['numbers']:,}",
                    str(b["groupings"]),
                    _e(b["most_common"]),
                    f"{b['most_common_share']:.1%}",
                    f"{b['inconsistent']:,}",
                    f"{b['mean_tokens']:.2f}",
                    ex,
                ]
            )
        out.append(
            f"<h3>{_e(n)}</h3>"
            + _table(
                [
                    "digits",
                    "numbers",
                    "groupings",
                    "usual",
                    "share",
                    "other",
                    "tokens/number",
                    "other groupings, e.g.",
                ],
                rows,
            )
        )
    return out


def _whitespace(names: list[str], sec: dict[str, Any]) -> list[str]:
    first = sec[names[0]]
    styles = [x["style"] for x in first["indentation"]]
    out = [
        _h2("whitespace"),
        f"<p>{first['files']} code file{'' if first['files'] == 1 else 's'}. "
        "Tokens that are nothing but spaces, tabs and newlines "
        "carry no meaning but take context; indentation multiplies them unless the vocabulary "
        "has tokens for long runs of spaces.</p>",
        svg.bar_chart(
            "Tokens for the same code, re-indented",
            styles,
            {n: [x["tokens"] for x in sec[n]["indentation"]] for n in names},
            unit=" tokens",
        ),
        _measures(
            names,
            "",
            measures.whitespace,
            sec,
            [
                (
                    "most common whitespace tokens",
                    [
                        " ".join(_tok(x["text"]) for x in sec[n]["common_whitespace_tokens"])
                        for n in names
                    ],
                )
            ],
        ),
    ]
    return out


def _trailing(names: list[str], sec: dict[str, Any]) -> list[str]:
    out = [
        _h2("trailing"),
        "<p>Words carry their leading space, so a prompt that ends with a space leaves a lone "
        "space token the model rarely saw in training, and the natural next token (with its "
        "space) can no longer follow. Same text, different tokens:</p>",
    ]
    for n in names:
        rows = []
        for ex in sec[n]["examples"]:
            rows.append(
                [
                    _e(repr(ex["prompt"] + ex["word"])),
                    _toks(ex["natural"]),
                    _toks(ex["trailing_space"]),
                    "same" if ex["same_ids"] else "different",
                ]
            )
        note = ""
        if "lone_space_share" in sec[n]:
            counts = ", ".join(
                f"{_e(repr(w['word']))} {_count(w['with_space'])} vs "
                f"{_e(repr(w['word'][1:]))} {_count(w['without_space'])}"
                for w in sec[n]["word_counts"]
            )
            share, lone = sec[n]["lone_space_share"], sec[n]["lone_space_tokens"]
            note = (
                f'<p class="note">In the corpus a lone space token is {share:.3%} of all tokens '
                f"({lone:,}); times each word occurs with vs without its space: {counts}.</p>"
            )
        out.append(
            f"<h3>{_e(n)}</h3>"
            + _table(["text", "typed whole", "prompt ended with ' '", "ids"], rows)
            + note
        )
    return out


def _result(x: dict[str, Any] | None) -> str:
    if x is None:
        return "— (not a special token of this tokenizer)"
    if "error" in x:
        return f'<span class="err">{_e(x["error_type"])}: {_e(x["error"])}</span>'
    return f"{x['tokens']} tokens: {_toks(x['pieces'])}"


def _specials(names: list[str], sec: dict[str, Any]) -> list[str]:
    out = [
        _h2("specials"),
        "<p>What happens when user text contains a special token's string. Under the defaults "
        "tokenmill (like tiktoken) refuses; <code>encode_ordinary</code> makes it plain text; "
        "<code>allowed_special</code> turns it into the control token — which lets user text "
        "end a document or fake a chat turn.</p>",
    ]
    for n in names:
        rows = []
        for x in sec[n]["rows"]:
            rows.append(
                [
                    _tok(x["special"]) + (f" = {x['id']}" if x["id"] is not None else ""),
                    _result(x["default"]),
                    _result(x["ordinary"]),
                    _result(x["allowed"]),
                ]
            )
        more = (
            f'<p class="note">{sec[n]["more"]} more special tokens not shown.</p>'
            if sec[n]["more"]
            else ""
        )
        out.append(
            f"<h3>{_e(n)}</h3>"
            + _table(
                ["special", "encode (default)", "encode_ordinary", "allowed_special='all'"], rows
            )
            + more
        )
    return out


def _examples(xs: list[dict[str, Any]], k: int = 12) -> str:
    return " ".join(
        _tok(_clip(x["text"])) + (f"<sub>{x['count']}</sub>" if "count" in x else "")
        for x in xs[:k]
    )


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _glitch(names: list[str], sec: dict[str, Any]) -> list[str]:
    out = [
        _h2("glitch"),
        "<p>An embedding row is only trained when its token occurs. Tokens the encoder cannot "
        "produce from their own text, tokens that are fragments of characters, and tokens a "
        "corpus (almost) never produces keep near-random embeddings: the rows behind "
        "“SolidGoldMagikarp”. Merge residue: tokens frequent when merged, then absorbed by "
        "longer merges (meaningful when the corpus is the tokenizer's training text).</p>",
        _measures(names, "candidates", measures.glitch, sec),
    ]
    for n in names:
        d = sec[n]
        items = [
            f"<li>{label}: {_examples(d[key]['examples'])}</li>"
            for label, key in measures.GLITCH_KINDS
            if key in d and d[key]["examples"]
        ]
        known = ", ".join(
            f"{_tok(k['text'])} "
            + (
                f"= {k['id']}" + (f", seen {k['count']:,}x" if "count" in k else "")
                if k["id"] is not None
                else "not a token"
            )
            for k in d["known"]
        )
        items.append(f"<li>known GPT-2/GPT-3 glitch tokens: {known}</li>")
        out.append(f"<h3>{_e(n)}</h3><ul>" + "".join(items) + "</ul>")
    return out


def _structured(names: list[str], sec: dict[str, Any]) -> list[str]:
    fmts = [x["format"] for x in sec[names[0]]["rows"]]
    return [
        _h2("structured"),
        "<p>The same records in each format: what the format alone costs in tokens.</p>",
        svg.bar_chart(
            "Tokens for the same records",
            fmts,
            {n: [x["tokens"] for x in sec[n]["rows"]] for n in names},
            unit=" tokens",
        ),
        _measures(names, "format", measures.structured, sec),
    ]


def _count(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def _compression(names: list[str], sec: dict[str, Any]) -> list[str]:
    texts = [x["text"] for x in sec[names[0]]["rows"]]
    out = [
        _h2("compression"),
        "<p>Bytes per token: more means more text per model step. The price is the vocabulary: "
        "an input embedding and an (untied) output layer of <code>n_vocab × d_model</code> "
        "parameters each.</p>",
        svg.bar_chart(
            "Bytes per token",
            texts,
            {n: [x["bytes_per_token"] for x in sec[n]["rows"]] for n in names},
            unit=" bytes/token",
        ),
        _measures(names, "text: tokens (bytes per token)", measures.compression, sec),
        _measures(names, "embedding + output layer", measures.embedding, sec),
    ]
    return out

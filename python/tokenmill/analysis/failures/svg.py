"""Charts as inline SVG: no plotting library, no external file, readable in any browser.

>>> svg = bar_chart("Tokens", ["en", "de"], {"gpt2": [10, 15]})
>>> svg.startswith("<svg") and svg.count("<rect") >= 2
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

# Colour-blind-safe palette (Okabe & Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _num(v: float) -> str:
    if v == int(v) and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:.2f}"


def _legend(series: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, name in enumerate(series):
        yy = y + 16 * i
        out.append(f'<rect x="{x}" y="{yy}" width="10" height="10" fill="{PALETTE[i % 8]}"/>')
        out.append(f'<text x="{x + 14}" y="{yy + 9}" {FONT}>{escape(name)}</text>')
    return out


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    unit: str = "",
    horizontal: bool = True,
    reference: float | None = None,
) -> str:
    """Grouped bars: one group per category, one bar per series. ``horizontal`` puts the
    categories down the left (long labels), otherwise along the bottom (histograms).
    ``reference`` draws a dashed line at that value (e.g. 1.0 for "same as English")."""
    names = list(series)
    peak = max([*(v for vals in series.values() for v in vals), reference or 0, 1e-9])
    legend_w = 30 + 7 * max((len(n) for n in names), default=0)
    if horizontal:
        label_w = 12 + 7 * max((len(c) for c in categories), default=0)
        bar_h, gap = 12, 8
        group_h = bar_h * len(names) + gap
        plot_w = 520
        width = max(label_w + plot_w + 60 + legend_w, 8 * len(title))
        height = 40 + group_h * len(categories) + 30
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
            f"<title>{escape(title)}</title>",
            f'<text x="0" y="16" {FONT} font-weight="bold">{escape(title)}</text>',
        ]
        for ci, cat in enumerate(categories):
            y0 = 34 + ci * group_h
            out.append(
                f'<text x="{label_w - 6}" y="{y0 + group_h / 2}" text-anchor="end" '
                f'dominant-baseline="middle" {FONT}>{escape(cat)}</text>'
            )
            for si, name in enumerate(names):
                v = series[name][ci]
                w = max(1.0, plot_w * v / peak)
                y = y0 + si * bar_h
                out.append(
                    f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 1}" '
                    f'fill="{PALETTE[si % 8]}"><title>{escape(name)}, {escape(cat)}: '
                    f"{_num(v)}{escape(unit)}</title></rect>"
                )
                out.append(
                    f'<text x="{label_w + w + 3:.1f}" y="{y + bar_h - 2}" {FONT} '
                    f'font-size="10">{_num(v)}</text>'
                )
        if reference is not None:
            x = label_w + plot_w * reference / peak
            out.append(
                f'<line x1="{x:.1f}" y1="30" x2="{x:.1f}" y2="{height - 26}" stroke="#444" '
                'stroke-dasharray="4 3"/>'
            )
        out.extend(_legend(names, label_w + plot_w + 60, 34))
        if unit:
            out.append(f'<text x="{label_w}" y="{height - 8}" {FONT}>{escape(unit)}</text>')
    else:
        bar_w, gap = 10, 8
        label_w = 7 * max((len(c) for c in categories), default=0) + 4
        group_w = max(bar_w * len(names) + gap, label_w)
        plot_h = 220
        width = max(60 + group_w * len(categories) + 20 + legend_w, 8 * len(title))
        height = 34 + plot_h + 50
        base = 34 + plot_h
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
            f"<title>{escape(title)}</title>",
            f'<text x="0" y="16" {FONT} font-weight="bold">{escape(title)}</text>',
            f'<line x1="56" y1="{base}" x2="{60 + group_w * len(categories)}" y2="{base}" '
            'stroke="#444"/>',
            f'<text x="52" y="40" text-anchor="end" {FONT} font-size="10">{_num(peak)}</text>',
            f'<text x="52" y="{base}" text-anchor="end" {FONT} font-size="10">0</text>',
        ]
        for ci, cat in enumerate(categories):
            x0: float = 60 + ci * group_w
            x0 += (group_w - bar_w * len(names) - gap) / 2
            for si, name in enumerate(names):
                v = series[name][ci]
                h = plot_h * v / peak
                out.append(
                    f'<rect x="{x0 + si * bar_w}" y="{base - h:.1f}" width="{bar_w - 1}" '
                    f'height="{max(h, 0.5):.1f}" fill="{PALETTE[si % 8]}"><title>{escape(name)}, '
                    f"{escape(cat)}: {_num(v)}{escape(unit)}</title></rect>"
                )
            out.append(
                f'<text x="{x0 + bar_w * len(names) / 2}" y="{base + 14}" text-anchor="middle" '
                f'{FONT} font-size="10">{escape(cat)}</text>'
            )
        out.extend(_legend(names, 60 + group_w * len(categories) + 20, 40))
        if unit:
            out.append(f'<text x="60" y="{height - 8}" {FONT}>{escape(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out)

"""How quickly the playground (``tokenmill serve``) shows a paste: time from putting the text
in the box to the coloured tokens being drawn, in headless Chromium driven by Playwright.

For each text size and set of tokenizers, the text is pasted into an empty box (an ``input``
event, as a paste makes) and the clock stops two animation frames after the page has drawn
every panel, so layout and paint are in. ``paste->drawn`` includes the page's 120 ms typing
debounce. ``request`` is the encode request as the page sees it (server encoding, JSON,
transfer, parsing); ``render`` is building the DOM, which the page does in slices of 4,000
tokens, yielding to the browser between slices; ``stall`` is the longest slice, i.e. the
longest the page stops answering keys and scrolling while it draws. Best of ``--repeat`` runs
per cell. There is no peer: no other tokenizer library ships a local playground, so the
numbers are absolute.

    python benchmarks/bench_playground.py [--sizes 10000 100000 1000000] [--repeat 3]
        [--text FILE] [--json out.json]

The text is the bundled Sherlock Holmes (English prose) unless ``--text`` names a UTF-8 file.
Needs Chromium (``chromium`` on PATH) and Playwright, as the browser tests do.

Measured 2026-12-03 on the 2-core build machine while other jobs ran (so +-50%), ms:

    tokenizers      chars    spans  paste->drawn  request  render  stall  JSON KB
    gpt2           10,000    3,696           187       13      12     12       71
    gpt2          100,000   29,849           399       91     153     17      654
    gpt2        1,000,000   60,000         2,388      777     773     41    7,029
    3 panels       10,000    7,924           358       15      79     45      164
    3 panels      100,000   76,632           749      172     435     38    1,740
    3 panels    1,000,000  180,000         4,374    1,854   2,107    117   18,970

(1,000,000 characters are about 250,000 tokens per panel; the page draws the first 60,000 of
each and says so, the counts stay exact.) What changed the numbers, 100 KB into three panels:
drawn as 76,000 inline spans in one fragment, 1,637 ms to drawn with the page frozen for the
whole DOM build (427 ms); spans grouped into blocks with ``content-visibility: auto`` (the
browser lays out only blocks in view), 519-855 ms, frozen 229-380 ms; blocks drawn in slices
with a yield between them, 749 ms, frozen at most 38 ms at a time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
from pathlib import Path

import tokenmill
from tokenmill.serve.api import Playground
from tokenmill.serve.server import PlaygroundServer
from tokenmill.sources import bundled_corpus

SETS = {"gpt2": ["gpt2"], "3 panels": ["gpt2", "cl100k_base", "o200k_base"]}

PASTE = """async (text) => {
  const panels = document.querySelector('#panels');
  const box = document.querySelector('#input');
  const shown = (n) => new Promise((resolve) => {
    const check = () => panels.dataset.chars === String(n) && !('busy' in panels.dataset)
      ? resolve() : setTimeout(check, 2);
    check();
  });
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  box.value = ''; box.dispatchEvent(new Event('input'));
  await shown(0); await frames();
  performance.clearMeasures(); performance.clearResourceTimings();
  const n = [...text].length;
  const t0 = performance.now();
  box.value = text; box.dispatchEvent(new Event('input'));
  await shown(n); await frames();
  const total = performance.now() - t0;
  const last = (name) => performance.getEntriesByName(name).at(-1).duration;
  const res = performance.getEntriesByType('resource')
    .filter((e) => e.name.endsWith('api/encode')).at(-1);
  return {total, request: last('tokenmill:request'), render: last('tokenmill:render'),
          stall: last('tokenmill:stall'),
          response_bytes: res ? res.encodedBodySize : null,
          spans: document.querySelectorAll('#panels .tok').length};
}"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--text", metavar="FILE", help="UTF-8 text to paste (default: Holmes)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("chromium is not installed")
    from playwright.sync_api import sync_playwright

    source = Path(args.text).read_text("utf-8") if args.text else bundled_corpus("holmes")
    names = sorted({n for s in SETS.values() for n in s})
    server = PlaygroundServer(Playground({n: tokenmill.load(n) for n in names}), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server.url)
        page.wait_for_selector("body[data-ready]")
        for label, chosen in SETS.items():
            for box in page.query_selector_all("#choose input"):
                if box.is_checked() != (box.get_attribute("value") in chosen):
                    box.click()
            for size in args.sizes:
                text = (source * (size // len(source) + 1))[:size]
                runs = [page.evaluate(PASTE, text) for _ in range(args.repeat)]
                best = min(runs, key=lambda r: r["total"])
                rows.append(
                    {
                        "tokenizers": label,
                        "chars": size,
                        "bytes": len(text.encode()),
                        "paste_to_drawn_ms": round(best["total"], 1),
                        "request_ms": round(best["request"], 1),
                        "render_ms": round(best["render"], 1),
                        "longest_stall_ms": round(best["stall"], 1),
                        "response_bytes": best["response_bytes"],
                        "spans": best["spans"],
                    }
                )
        browser.close()
    server.shutdown()

    head = [
        "tokenizers",
        "chars",
        "spans",
        "paste->drawn ms",
        "request ms",
        "render ms",
        "stall ms",
        "JSON KB",
    ]
    table = [
        [
            r["tokenizers"],
            f"{r['chars']:,}",
            f"{r['spans']:,}",
            f"{r['paste_to_drawn_ms']:,.0f}",
            f"{r['request_ms']:,.0f}",
            f"{r['render_ms']:,.0f}",
            f"{r['longest_stall_ms']:,.0f}",
            f"{(r['response_bytes'] or 0) / 1024:,.0f}",
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *table, strict=True)]
    for line in [head, ["-" * w for w in widths], *table]:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()

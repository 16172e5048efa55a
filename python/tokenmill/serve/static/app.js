// The tokenmill playground. No framework, no build step, no request to another origin.
// Every piece of user text (and every token, which is user text too) reaches the DOM
// through textContent / createTextNode, never parsed as HTML.
"use strict";

const SAMPLE =
  "Tokenizers split text into pieces: naïve café, Привет мир, 1234567 and\n" +
  "\tdef tokenize(text):  return text.split()\n";
const DEBOUNCE_MS = 120;
// Spans drawn per panel; the counts above them are always exact. 100 KB of English is
// about 25,000 tokens, so a 100 KB paste is drawn whole.
const MAX_RENDER = 60000;
const COLOURS = 6;

const $ = (sel) => document.querySelector(sel);
const state = {
  tokenizers: [], // from /api/tokenizers
  maxBody: 2 * 1024 * 1024,
  results: new Map(), // tokenizer name -> last encode result
  text: "",
  seq: 0,
  controller: null,
  timer: 0,
  tokenCache: new Map(), // "name\u0000id" -> /api/token answer
  active: null, // the span outlined in a panel
  inspected: 0, // calls of inspect() so far: only the latest one's answer is shown
  longestStall: 0, // ms, of the last drawing
};

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("data-")) node.setAttribute(k, v);
      else node[k] = v;
    }
  }
  for (const c of children) node.append(c); // strings become text nodes
  return node;
}

// Whitespace made visible: the marker, then the real character so lines still break.
const MARKS = { " ": "·", "\t": "→\t", "\r": "␍", "\n": "↵\n" };

function visible(text) {
  return text.replace(/[ \t\r\n]/g, (c) => MARKS[c]);
}

function fmt(n) {
  return n == null ? "–" : n.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

async function api(path, options) {
  const response = await fetch(path, options);
  let body;
  try {
    body = await response.json();
  } catch (e) {
    throw new Error(`HTTP ${response.status}`);
  }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function selectedNames() {
  return [...document.querySelectorAll("#choose input:checked")].map((i) => i.value);
}

// ------------------------------------------------------------------------------- panels

function buildPanels() {
  const names = selectedNames();
  const panels = $("#panels");
  const keep = new Map([...panels.children].map((p) => [p.dataset.tokenizer, p]));
  const list = [];
  for (const name of names) {
    let panel = keep.get(name);
    if (!panel) {
      const info = state.tokenizers.find((t) => t.name === name);
      panel = el(
        "section",
        { class: "panel", "data-tokenizer": name },
        el(
          "div",
          { class: "panel-head" },
          el("div", { class: "panel-name" }, name, el("small", { text: `${fmt(info.n_vocab)} ids` })),
          el(
            "div",
            { class: "stats" },
            el("span", {}, el("b", { class: "count", text: "–" }), " tokens"),
            el("span", {}, el("b", { class: "cpt", text: "–" }), " chars/token"),
            el("span", {}, el("b", { class: "bpt", text: "–" }), " bytes/token"),
          ),
        ),
        el("div", { class: "tokens" }),
        el("div", { class: "note" }),
      );
    }
    list.push(panel);
  }
  panels.replaceChildren(...list);
}

// Tokens are drawn in blocks of about CHUNK tokens, each cut after a token that ends a line
// (so the blocks flow exactly as one text would); the CSS gives blocks
// `content-visibility: auto`, so the browser lays out only the blocks in view: without blocks,
// layout dominates drawing a long paste (docs/performance.md, benchmarks/bench_playground.py).
// Titles (the id on hover) are set when the pointer first reaches a token rather than on
// every span up front.
//
// A panel is drawn in slices of SLICE tokens, yielding to the browser between slices, so
// typing and scrolling stay live while a long paste is drawn (the longest stall is one
// slice, not the whole text).
const CHUNK = 300;
const SLICE = 4000;
const spansOf = new WeakMap(); // panel -> its token spans, by token index
function* renderPanel(panel, result) {
  panel.querySelector(".count").textContent = fmt(result.count);
  panel.querySelector(".cpt").textContent = fmt(result.chars_per_token);
  panel.querySelector(".bpt").textContent = fmt(result.bytes_per_token);
  const partial = new Set(result.partial);
  const special = new Set(result.special);
  const n = Math.min(result.count, MAX_RENDER);
  const spans = new Array(n);
  spansOf.set(panel, spans);
  const box = panel.querySelector(".tokens");
  box.replaceChildren();
  box.classList.toggle("show-ids", $("#show-ids").checked);
  panel.querySelector(".note").textContent =
    n < result.count ? `showing the first ${fmt(n)} of ${fmt(result.count)} tokens` : "";
  let block = el("div", { class: "chunk" });
  let inBlock = 0;
  let frag = document.createDocumentFragment();
  for (let i = 0; i < n; i++) {
    const text = result.texts[i];
    const span = document.createElement("span");
    let cls = `tok c${i % COLOURS}`;
    if (partial.has(i)) cls += " partial";
    if (special.has(i)) cls += " special";
    span.className = cls;
    span.dataset.id = result.ids[i];
    span.textContent = partial.has(i) ? text : visible(text);
    spans[i] = span;
    block.append(span);
    inBlock++;
    if (inBlock >= CHUNK && text.endsWith("\n")) {
      frag.append(block);
      block = el("div", { class: "chunk" });
      inBlock = 0;
    }
    if ((i + 1) % SLICE === 0 && i + 1 < n) {
      box.append(frag); // one insertion per slice
      frag = document.createDocumentFragment();
      yield;
    }
  }
  frag.append(block);
  box.append(frag);
}

// Draws every panel's answer, one slice at a time, round robin, yielding to the browser
// after each; false if a newer text came first.
async function renderAll(seq) {
  let jobs = [...$("#panels").children].map((panel) =>
    renderPanel(panel, state.results.get(panel.dataset.tokenizer)),
  );
  let stall = 0;
  while (jobs.length) {
    const next = [];
    for (const job of jobs) {
      const t = performance.now();
      const done = job.next().done;
      stall = Math.max(stall, performance.now() - t);
      if (done) continue;
      next.push(job);
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (seq !== state.seq) return false;
    }
    jobs = next;
  }
  state.longestStall = stall;
  return true;
}

function renderError(panel, message) {
  for (const sel of [".count", ".cpt", ".bpt"]) panel.querySelector(sel).textContent = "–";
  panel.querySelector(".tokens").replaceChildren(el("div", { class: "error", text: message }));
  panel.querySelector(".note").textContent = "";
}

// ------------------------------------------------------------------------------ encoding

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(update, DEBOUNCE_MS);
}

async function update() {
  clearTimeout(state.timer); // this run covers any typing still waiting for its debounce
  const text = $("#input").value;
  const names = selectedNames();
  const special = $("#special").value;
  const seq = ++state.seq;
  if (state.controller) state.controller.abort(); // a newer text makes the old answer stale
  buildPanels();
  $("#panels").dataset.busy = "1"; // until this text is drawn (or a newer one replaces it)
  const nBytes = new TextEncoder().encode(text).length;
  const status = $("#status");
  status.classList.remove("error");
  status.textContent = `${fmt(text.length)} characters, ${fmt(nBytes)} bytes`;
  if (!names.length) {
    status.textContent += " — choose a tokenizer above";
    finish(seq, text);
    return;
  }
  const body = JSON.stringify({ text, tokenizers: names, special });
  if (new TextEncoder().encode(body).length > state.maxBody) {
    // The server would refuse it (413): say so here rather than send it.
    status.classList.add("error");
    status.textContent = `the text is too long for this server (${fmt(nBytes)} bytes; ` +
      `it takes requests up to ${fmt(state.maxBody)} bytes: tokenmill serve --max-body)`;
    for (const panel of $("#panels").children) renderError(panel, "text too long");
    finish(seq, text);
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  const t0 = performance.now();
  let answer;
  try {
    answer = await api("api/encode", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
      signal: controller.signal,
    });
  } catch (e) {
    if (e.name === "AbortError" || seq !== state.seq) return;
    for (const panel of $("#panels").children) renderError(panel, e.message);
    finish(seq, text);
    return;
  }
  if (seq !== state.seq) return;
  const t1 = performance.now();
  state.text = text;
  state.results = new Map(answer.results.map((r) => [r.tokenizer, r]));
  state.active = null;
  if (!(await renderAll(seq))) return;
  // For benchmarks/bench_playground.py: the request (server + transfer + JSON parse), the
  // DOM build, and the longest the page's main thread was busy drawing, as performance
  // entries.
  const t2 = performance.now();
  performance.measure("tokenmill:request", { start: t0, end: t1 });
  performance.measure("tokenmill:render", { start: t1, end: t2 });
  performance.measure("tokenmill:stall", { start: t2 - state.longestStall, end: t2 });
  finish(seq, text);
  followCaret();
}

// Marks the page as showing `text`, with its length in code points (tests wait for it).
function finish(seq, text) {
  const panels = $("#panels");
  panels.dataset.seq = seq;
  panels.dataset.chars = [...text].length;
  delete panels.dataset.busy;
}

// ----------------------------------------------------------------------------- inspector

async function tokenInfo(name, id) {
  const key = `${name}\u0000${id}`;
  if (!state.tokenCache.has(key)) {
    const q = new URLSearchParams({ tokenizer: name, id: String(id) });
    state.tokenCache.set(key, await api(`api/token?${q}`));
  }
  return state.tokenCache.get(key);
}

async function inspect(name, id, index) {
  const box = $("#token-info");
  // Answers can come back out of order (a click on the text, then an arrow key): an older
  // one must not replace the token asked for last.
  const call = ++state.inspected;
  let info;
  try {
    info = await tokenInfo(name, id);
  } catch (e) {
    if (call === state.inspected) box.replaceChildren(el("p", { class: "error", text: e.message }));
    return;
  }
  if (call !== state.inspected) return;
  const result = state.results.get(name);
  const shown = el("span", { class: "tok c0" });
  shown.textContent = info.special ? info.text : visible(info.text);
  const rows = [
    ["id", String(info.id)],
    ["tokenizer", name],
    ["bytes", `${info.length}: ${info.hex}`],
  ];
  if (index != null && result && index < result.count) {
    rows.push(["position", `token ${fmt(index + 1)} of ${fmt(result.count)}, ` +
      `bytes ${fmt(result.byte_offsets[index])}–${fmt(result.byte_offsets[index + 1])}`]);
  }
  if (info.special) rows.push(["kind", "special token"]);
  const dl = el("dl");
  for (const [k, v] of rows) dl.append(el("dt", { text: k }), el("dd", { text: v }));
  const parts = [el("div", { class: "big" }, shown), dl];
  if (info.parents.length) {
    const how = info.parents[0].source === "training"
      ? "merges learned in training"
      : "merges by rank (tiktoken's rule)";
    parts.push(el("h2", { text: how }));
    for (const m of info.parents) {
      const line = el("p", { class: "merge" });
      line.append(
        `${m.id} = `,
        parentButton(name, m.left, m.left_text),
        " + ",
        parentButton(name, m.right, m.right_text),
      );
      if (m.count != null) line.append(el("span", { class: "count", text: `  seen ${fmt(m.count)}×` }));
      parts.push(line);
    }
  } else if (!info.special) {
    parts.push(el("p", { class: "hint", text: info.length === 1 ? "a single byte: no parents" : "no merge makes this token" }));
  }
  box.replaceChildren(...parts);
}

function parentButton(name, id, text) {
  const b = el("button", { type: "button", title: `id ${id}` });
  b.textContent = visible(text);
  b.addEventListener("click", () => inspect(name, id, null));
  return b;
}

function onHover(event) {
  const span = event.target.closest(".tok");
  if (!span || span === state.active) return;
  const panel = span.closest(".panel");
  if (!panel) return;
  if (!span.title) span.title = `id ${span.dataset.id}`;
  if (state.active) state.active.classList.remove("active");
  span.classList.add("active");
  state.active = span;
  const index = (spansOf.get(panel) || []).indexOf(span);
  inspect(panel.dataset.tokenizer, Number(span.dataset.id), index < 0 ? null : index);
}

// The token under the text cursor, in every panel; the first panel's goes to the inspector.
function followCaret() {
  const input = $("#input");
  if (document.activeElement !== input || input.value !== state.text) return;
  // selectionStart counts UTF-16 units; char_offsets count code points.
  const chars = [...input.value.slice(0, input.selectionStart)].length;
  let first = null;
  for (const panel of $("#panels").children) {
    const result = state.results.get(panel.dataset.tokenizer);
    if (!result || !result.count) continue;
    const offs = result.char_offsets;
    let lo = 0;
    let hi = result.count - 1;
    while (lo < hi) { // the last token starting at or before the caret
      const mid = (lo + hi + 1) >> 1;
      if (offs[mid] <= chars - (chars > 0 ? 1 : 0)) lo = mid;
      else hi = mid - 1;
    }
    const old = panel.querySelector(".tok.caret");
    if (old) old.classList.remove("caret");
    const span = (spansOf.get(panel) || [])[lo];
    if (span) {
      span.classList.add("caret");
      if (!first) first = [panel.dataset.tokenizer, result.ids[lo], lo];
    }
  }
  if (first) inspect(...first);
}

// ---------------------------------------------------------------------------------- start

async function start() {
  const box = $("#choose");
  let info;
  try {
    info = await api("api/tokenizers");
  } catch (e) {
    $("#status").textContent = `cannot reach the server: ${e.message}`;
    $("#status").classList.add("error");
    return;
  }
  state.tokenizers = info.tokenizers;
  state.maxBody = info.max_body;
  info.tokenizers.forEach((t, i) => {
    const input = el("input", { type: "checkbox", value: t.name, checked: i < 3 });
    input.addEventListener("change", update);
    const label = el("label", { class: "chip", title: `pattern: ${t.pattern}` }, input, t.name);
    if (t.merges_known) label.append(el("small", { text: "trained" }));
    box.append(label);
  });
  const input = $("#input");
  input.value = SAMPLE;
  input.addEventListener("input", schedule);
  for (const ev of ["keyup", "click", "select"]) input.addEventListener(ev, followCaret);
  $("#special").addEventListener("change", update);
  $("#show-ids").addEventListener("change", () => {
    for (const t of document.querySelectorAll(".tokens")) {
      t.classList.toggle("show-ids", $("#show-ids").checked);
    }
  });
  $("#panels").addEventListener("mouseover", onHover);
  document.body.dataset.ready = "1"; // the controls work from here on
  update();
}

start();

// LevelDB's bloom filter, computed by the page itself: the hash (util/hash.cc, seed
// 0xbc9f1d34, tail bytes read unsigned as LevelDB >= 1.18 reads them), the double
// hashing of the probes and the building of a filter (util/bloom.cc). The tests
// (cli/tests/suite/show.rs) check in a browser that these give the library's bytes and
// answers.
"use strict";

const SEED = 0xbc9f1d34;
const PAGE_BITS = 4096;

function hexToBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/// The key as text when its bytes are UTF-8 without control characters, else null.
function asText(bytes) {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    return null;
  }
  return /[\u0000-\u001f\u007f-\u009f]/.test(text) ? null : text;
}

/// A key as text (quoted) when it is UTF-8 text, else as hex.
function shown(bytes) {
  const text = asText(bytes);
  return text === null ? "hex " + bytesToHex(bytes) : JSON.stringify(text);
}

function hash(bytes) {
  const m = 0xc6a4a793;
  let h = (SEED ^ Math.imul(bytes.length, m)) >>> 0;
  let i = 0;
  for (; i + 4 <= bytes.length; i += 4) {
    const w = (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)) >>> 0;
    h = (h + w) >>> 0;
    h = Math.imul(h, m) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    if (rest === 3) h = (h + (bytes[i + 2] << 16)) >>> 0;
    if (rest >= 2) h = (h + (bytes[i + 1] << 8)) >>> 0;
    h = (h + bytes[i]) >>> 0;
    h = Math.imul(h, m) >>> 0;
    h = (h ^ (h >>> 24)) >>> 0;
  }
  return h;
}

/// The bits the key of hash `h` probes: h, h + δ, h + 2δ... (mod 2^32), each modulo
/// the bit count, δ being h rotated right by 17 bits.
function probes(h, k, bits) {
  const delta = ((h >>> 17) | (h << 15)) >>> 0;
  const out = [];
  for (let j = 0; j < k; j++) {
    out.push(h % bits);
    h = (h + delta) >>> 0;
  }
  return out;
}

function bitSet(filter, bit) {
  return ((filter[bit >> 3] >> (bit & 7)) & 1) === 1;
}

/// LevelDB's KeyMayMatch: its answer, why when by rule, and the probes.
function ask(filter, key) {
  if (filter.length < 2) return { mayMatch: false, rule: "a filter shorter than 2 bytes matches nothing", probes: [] };
  const k = filter[filter.length - 1];
  if (k > 30) return { mayMatch: true, rule: "k above 30 is reserved: may match", probes: [] };
  const bits = (filter.length - 1) * 8;
  const probed = probes(hash(key), k, bits).map((bit) => ({ bit, set: bitSet(filter, bit) }));
  return { mayMatch: probed.every((p) => p.set), rule: null, probes: probed };
}

/// LevelDB's CreateFilter for `keys` at `bitsPerKey` bits per key.
function build(keys, bitsPerKey) {
  const k = Math.min(30, Math.max(1, Math.floor(bitsPerKey * 0.69)));
  let bits = keys.length * bitsPerKey;
  if (bits < 64) bits = 64;
  const bytes = Math.ceil(bits / 8);
  bits = bytes * 8;
  const filter = new Uint8Array(bytes + 1);
  for (const key of keys) {
    for (const bit of probes(hash(key), k, bits)) filter[bit >> 3] |= 1 << (bit & 7);
  }
  filter[bytes] = k;
  return filter;
}

// The page's state: the filter shown, its keys, the key asked about.
const state = { index: 0, filter: new Uint8Array(0), keys: [], setters: new Map(), page: 0, asked: null };

const $ = (id) => document.getElementById(id);

function choose(index) {
  const f = PAGE.filters.find((x) => x.index === index);
  state.index = index;
  state.filter = f.hex === null ? new Uint8Array(0) : hexToBytes(f.hex);
  state.rule = f.rule;
  state.keys = (f.keys || []).map(hexToBytes);
  state.keysEmbedded = f.keys !== null;
  state.page = 0;
  refresh();
}

/// Which keys set each bit.
function computeSetters() {
  state.setters = new Map();
  if (state.filter.length < 2 || state.filter[state.filter.length - 1] > 30) return;
  const k = state.filter[state.filter.length - 1];
  const bits = (state.filter.length - 1) * 8;
  state.keys.forEach((key, i) => {
    for (const bit of probes(hash(key), k, bits)) {
      if (!state.setters.has(bit)) state.setters.set(bit, []);
      const list = state.setters.get(bit);
      if (list[list.length - 1] !== i) list.push(i);
    }
  });
}

function refresh() {
  if (PAGE.mode === "playground") {
    // The title follows the keys as they are added.
    $("title").textContent = `${state.keys.length} keys, ${PAGE.bits_per_key} bits per key`;
    document.title = `leveldb-bloom show: ${$("title").textContent}`;
  }
  computeSetters();
  drawInfo();
  drawGrid();
  drawKeys();
  drawFilters();
  if (state.asked !== null) query(state.asked);
  if (PAGE.mode === "playground") drawFalsePositives();
}

function drawInfo() {
  const f = state.filter;
  const info = $("filter-info");
  if (state.rule) {
    info.textContent = `Filter ${state.index}: LevelDB consults no bits here (${state.rule} for every key).`;
    return;
  }
  info.innerHTML = "";
  const b = document.createElement("b");
  b.textContent = PAGE.mode === "table" ? `Filter ${state.index}` : "The filter";
  drawBytes(f);
  if (f.length < 2) {
    // LevelDB writes an empty filter for a stretch of the file where no data block
    // starts: no Get ever consults it.
    const note = document.createElement("div");
    note.className = "empty-note";
    note.id = "empty-filter";
    note.textContent = `${f.length} bytes: an empty filter. LevelDB writes one for each 2 KiB stretch ` +
      "of the table's data in which no data block starts (a block larger than 2 KiB spans several), " +
      "so no Get ever consults it; asked, a filter shorter than 2 bytes answers \"absent\" for every key. " +
      "It has no bits to draw.";
    info.append(b, note);
    return;
  }
  const k = f[f.length - 1];
  const bits = (f.length - 1) * 8;
  info.append(b, ` — ${f.length} bytes (${bits} bits and the k byte), k = ${k}, ${state.keys.length} keys` +
    (state.keys.length ? `, ${(bits / state.keys.length).toFixed(1)} bits per key` : "") +
    `, ${countSet(f)} bits set`);
}

/// The filter's bytes in hex, folded away unless the filter is small.
function drawBytes(f) {
  const place = $("filter-bytes");
  place.innerHTML = "";
  if (f.length === 0) return;
  const details = document.createElement("details");
  details.open = f.length <= 64;
  const summary = document.createElement("summary");
  summary.textContent = `the filter's ${f.length} bytes in hex`;
  const code = document.createElement("code");
  code.id = "filter-hex";
  code.textContent = bytesToHex(f);
  details.append(summary, code);
  place.append(details);
}

function countSet(f) {
  let n = 0;
  for (let i = 0; i + 1 < f.length; i++) for (let b = f[i]; b; b &= b - 1) n++;
  return n;
}

function drawGrid() {
  const grid = $("grid");
  grid.innerHTML = "";
  const bits = Math.max(0, state.filter.length - 1) * 8;
  const pages = Math.max(1, Math.ceil(bits / PAGE_BITS));
  const pager = $("pager");
  pager.innerHTML = "";
  if (pages > 1) {
    for (let p = 0; p < pages; p++) {
      const button = document.createElement("button");
      button.textContent = `bits ${p * PAGE_BITS}–${Math.min(bits, (p + 1) * PAGE_BITS) - 1}`;
      button.disabled = p === state.page;
      button.onclick = () => { state.page = p; drawGrid(); if (state.asked) query(state.asked); };
      pager.append(button);
    }
  }
  if (bits === 0) return;
  // Small filters in large cells; larger ones denser, so that a page of 4,096 bits,
  // the key box above it, fits in one screen.
  const columns = bits <= 512 ? 32 : bits <= 2048 ? 64 : 128;
  grid.className = bits <= 512 ? "" : bits <= 2048 ? "dense" : "denser";
  grid.style.gridTemplateColumns = `4.5em repeat(${columns}, var(--cell))`;
  const first = state.page * PAGE_BITS;
  const last = Math.min(bits, first + PAGE_BITS);
  // The ruler: bit offsets within a row every 8 bits (a byte) along the top, and each
  // row's first bit down the side.
  grid.append(ruler("bit", ""));
  for (let c = 0; c < columns; c += 8) {
    const mark = ruler(`+${c}`, "");
    mark.style.gridColumn = `span ${Math.min(8, columns - c)}`;
    grid.append(mark);
  }
  for (let bit = first; bit < last; bit++) {
    if ((bit - first) % columns === 0) grid.append(ruler(String(bit), "row"));
    const cell = document.createElement("div");
    cell.className = bitSet(state.filter, bit) ? "bit on" : "bit";
    cell.dataset.bit = bit;
    cell.title = `bit ${bit} (byte ${bit >> 3}, bit ${bit & 7})`;
    cell.onmouseenter = cell.onclick = () => showSetters(bit);
    grid.append(cell);
  }
}

function ruler(text, kind) {
  const mark = document.createElement("div");
  mark.className = kind ? `ruler ${kind}` : "ruler";
  mark.textContent = text;
  return mark;
}

function showSetters(bit) {
  const setters = state.setters.get(bit) || [];
  const names = setters.slice(0, 20).map((i) => shown(state.keys[i]));
  $("bit-info").textContent = `bit ${bit}: ${bitSet(state.filter, bit) ? "set" : "clear"}` +
    (setters.length ? `, set by ${setters.length} key${setters.length > 1 ? "s" : ""}: ${names.join(", ")}${setters.length > 20 ? "…" : ""}` : "");
  document.querySelectorAll("#keys div").forEach((div) => div.classList.toggle("hit", setters.includes(Number(div.dataset.i))));
  const k = state.filter[state.filter.length - 1];
  const bits = (state.filter.length - 1) * 8;
  const lit = new Set();
  for (const i of setters) for (const b of probes(hash(state.keys[i]), k, bits)) lit.add(b);
  document.querySelectorAll("#grid .bit").forEach((cell) => cell.classList.toggle("setter", lit.has(Number(cell.dataset.bit))));
}

function drawKeys() {
  const list = $("keys");
  list.innerHTML = "";
  $("key-count").textContent = state.keysEmbedded ? `(${state.keys.length})` : "(not embedded: too many keys in this table)";
  state.keys.slice(0, 5000).forEach((key, i) => {
    const div = document.createElement("div");
    div.dataset.i = i;
    div.textContent = shown(key);
    list.append(div);
  });
}

function drawFilters() {
  if (PAGE.mode !== "table") return;
  $("filters-panel").hidden = false;
  const first = PAGE.filters[0];
  $("base").textContent = Math.round(Math.log2(first.data_end - first.data_start));
  const table = $("filters");
  if (table.rows.length === 0) {
    const head = table.insertRow();
    for (const h of ["filter", "data blocks at", "keys", "bytes", "k"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.append(th);
    }
    for (const f of PAGE.filters) {
      const row = table.insertRow();
      row.className = "filter-row";
      row.dataset.index = f.index;
      const bytes = f.hex === null ? 0 : f.hex.length / 2;
      const k = f.hex === null || bytes === 0 ? "–" : parseInt(f.hex.slice(-2), 16);
      for (const v of [f.index, `${f.data_start}–${f.data_end - 1}`, f.key_count, f.rule || bytes, k]) row.insertCell().textContent = v;
      row.onclick = () => choose(f.index);
    }
  }
  for (const row of table.rows) row.classList.toggle("chosen", Number(row.dataset.index) === state.index);
}

function keyFromInput(input, hexBox) {
  const text = $(input).value;
  return $(hexBox).checked ? hexToBytes(text.replace(/[^0-9a-fA-F]/g, "")) : new TextEncoder().encode(text);
}

/// Asks the filter about `key`: the verdict, and its probes marked on the grid.
function query(key) {
  state.asked = key;
  const verdict = $("verdict");
  const answer = state.rule ? { mayMatch: state.rule === "may match", rule: state.rule, probes: [] } : ask(state.filter, key);
  const member = state.keys.some((k) => k.length === key.length && k.every((b, i) => b === key[i]));
  verdict.className = "verdict " + (!answer.mayMatch ? "absent" : member ? "maybe" : "fp");
  verdict.textContent = !answer.mayMatch
    ? "absent for sure"
    : member ? "may be present (it is one of the filter's keys)" : "may be present: a false positive (not one of the filter's keys)";
  verdict.dataset.answer = answer.mayMatch ? "1" : "0";
  verdict.dataset.member = member ? "1" : "0";
  $("probe-info").textContent = answer.rule
    ? answer.rule
    : `${shown(key)}: hash ${hash(key).toString(16).padStart(8, "0")}, probes ` +
      answer.probes.map((p) => `${p.bit}${p.set ? "" : " (clear)"}`).join(", ");
  const marks = new Map(answer.probes.map((p) => [p.bit, p.set]));
  document.querySelectorAll("#grid .bit").forEach((cell) => {
    const bit = Number(cell.dataset.bit);
    cell.classList.toggle("probe", marks.get(bit) === true);
    cell.classList.toggle("clear-probe", marks.get(bit) === false);
  });
  return answer.mayMatch;
}

/// Adds `key` to the playground's keys and rebuilds the filter as LevelDB would.
function addKey(key) {
  state.keys.push(key);
  state.filter = build(state.keys, PAGE.bits_per_key);
  refresh();
  return bytesToHex(state.filter);
}

function drawFalsePositives() {
  const f = state.filter;
  const k = f[f.length - 1];
  const m = (f.length - 1) * 8;
  let seed = 0x2545f491;
  let positives = 0;
  const trials = 10000;
  for (let t = 0; t < trials; t++) {
    const key = new Uint8Array(16);
    for (let i = 0; i < 16; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      key[i] = seed >>> 24;
    }
    key[0] = 0xfe; // a prefix none of the typed keys is likely to have
    if (ask(f, key).mayMatch) positives++;
  }
  const theory = Math.pow(1 - Math.exp((-k * state.keys.length) / m), k);
  $("fp-info").textContent = `False positives: ${(100 * positives / trials).toFixed(2)}% measured on ${trials} random absent keys; ` +
    `${(100 * theory).toFixed(2)}% by (1 − e^(−kn/m))^k with k = ${k}, n = ${state.keys.length}, m = ${m}`;
}

/// The tests' driver: `#test=HEX.HEX…&add=HEX.HEX…` asks about each key as typed in
/// the box, then adds each key as the button does, and writes what the page found.
function selfTest() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("test") && !params.has("add")) return;
  // Keys in hex, separated by dots ("" is the empty key).
  const list = (name) => (params.has(name) ? params.get(name).split(".").map(hexToBytes) : []);
  const results = { filter: bytesToHex(state.filter), asked: [], added: [] };
  for (const key of list("test")) {
    $("query-hex").checked = true;
    $("query").value = bytesToHex(key);
    $("query").dispatchEvent(new Event("input"));
    results.asked.push($("verdict").dataset.answer === "1");
  }
  for (const key of list("add")) {
    $("add-hex").checked = true;
    $("add").value = bytesToHex(key);
    $("add-button").click();
    results.added.push(bytesToHex(state.filter));
  }
  // What a reader sees: the title and counts, where the key box and the grid end on
  // the first screen, the ruler, the keys as listed, the bytes folded or not.
  const bottom = (el) => Math.round(el.getBoundingClientRect().bottom);
  results.title = $("title").textContent;
  results.keyCount = $("key-count").textContent;
  results.screen = { height: window.innerHeight, keyBox: bottom($("query")), grid: bottom($("grid")) };
  results.rulers = Array.from(document.querySelectorAll("#grid .ruler"), (r) => r.textContent);
  results.keysListed = Array.from(document.querySelectorAll("#keys div"), (d) => d.textContent).slice(0, 5);
  results.emptyNote = $("empty-filter") ? $("empty-filter").textContent : null;
  results.bytesFolded = $("filter-bytes").querySelector("details") ? !$("filter-bytes").querySelector("details").open : null;
  results.failedLoads = window.failedLoads;
  results.resources = performance.getEntriesByType("resource").map((r) => r.name);
  const out = $("test-results");
  out.textContent = JSON.stringify(results);
  out.hidden = false;
}

$("title").textContent = PAGE.title;
$("subtitle").textContent = PAGE.mode === "table"
  ? `Filter block ${PAGE.filter_name}: ${PAGE.filters.length} filters. The bits are LevelDB's, read from the table.`
  : `The filter LevelDB's ${PAGE.filter_name} builds for these keys at ${PAGE.bits_per_key} bits per key. Add keys to see it rebuilt.`;
$("playground").hidden = PAGE.mode !== "playground";
$("query").addEventListener("input", () => query(keyFromInput("query", "query-hex")));
$("query-hex").addEventListener("change", () => query(keyFromInput("query", "query-hex")));
$("add-button").addEventListener("click", () => { addKey(keyFromInput("add", "add-hex")); $("add").value = ""; });
choose(PAGE.chosen);
if (PAGE.key !== null) {
  const key = hexToBytes(PAGE.key);
  const text = asText(key);
  $("query-hex").checked = text === null;
  $("query").value = text === null ? PAGE.key : text;
  query(key);
}
selfTest();

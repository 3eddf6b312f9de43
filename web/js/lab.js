// Look before you change (issue 9): preview of a change with a ghost on the
// ring, algorithms compared side by side, theory beside measurement, the
// server's scenario files run step by step or at once, and exports.
//
// Everything here goes through the same HTTP API as the controls; nothing a
// preview, a comparison or the theory asks is recorded. Text goes in through
// el()/textContent only; charts are SVG built with DOM APIs.

import { api, ApiError } from './api.js';
import { $, el, setError } from './dom.js';
import { cssColours } from './palette.js';
import { catalogueEntry, layoutOf, tableSize, wordsFor } from './traits.js';
import { setupTheoryViews, theoryViewsShown } from './theory_requests.js';
import {
  RING_SIZE, cutText, displayName, formatInt, formatNumber, formatPercent, groupCounts, humanMessage, nodeColour, unavailableSentence, visibleText,
} from './format.js';

/** The server's exact from → to pairs (API.md v4) as a small table. */
function pairsTable(pairs, total) {
  const who = (n) => (n === null || n === undefined ? 'no live replica' : displayName(n));
  return el('table', { className: 'data compact pairs', id: 'preview-pairs' }, [
    el('caption', { className: 'visually-hidden' }, `Moves between nodes, ${formatInt(total)} pairs`),
    el('thead', null, el('tr', null, [el('th', { scope: 'col' }, 'From'), el('th', { scope: 'col' }, 'To'), el('th', { scope: 'col', className: 'num' }, 'Keys'), el('th', { scope: 'col', className: 'num' }, 'Requests')])),
    el('tbody', null, pairs.map((p) => el('tr', null, [
      el('td', null, who(p.from)), el('td', null, who(p.to)), el('td', { className: 'num' }, formatInt(p.keys)),
      el('td', { className: 'num' }, formatPercent(p.requests_share || 0, 2)),
    ]))),
  ]);
}

const nodeColourLight = (name) => nodeColour(name, 1, false);

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const num = (x, d = 3) => (typeof x === 'number' && Number.isFinite(x) ? formatNumber(x, d) : '—');

function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

/** Bytes as a person reads them: 812 bytes, 3.4 MB. */
function formatBytes(n) {
  if (n < 1024) return `${formatInt(n)} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The body of one answer as text, the bytes so far shown under the export
 * buttons while it streams in (every key of a million is tens of megabytes).
 */
async function fetchText(path, what) {
  const status = $('export-status');
  try {
    return await api.text(path, { onProgress: (bytes) => { status.textContent = `${what}: ${formatBytes(bytes)} received…`; } });
  } catch (err) {
    throw new ApiError(err.status, err.code, `${what}: ${err.message}`, err.body);
  }
}

async function download(path, filename, type, what = filename) {
  const text = await fetchText(path, what);
  saveBlob(new Blob([text], { type }), filename);
  $('export-status').textContent = `${filename}: ${formatBytes(new Blob([text]).size)} saved.`;
}

/**
 * A list the server answers in pages (the operation log by `after`, an
 * operation's moves by `offset`), read to its end and saved whole: JSON as
 * one document, CSV with one header row.
 */
async function downloadPaged({ first, next, field, filename, csv, what }) {
  const PAGE = 1000;
  if (csv) {
    let out = '';
    let url = first(true);
    for (let read = 0; url; ) {
      const text = await fetchText(url, what);
      const lines = text.split('\r\n');
      if (lines[lines.length - 1] === '') lines.pop();
      const rows = lines.length - 1;
      out += read === 0 ? (lines.length ? `${lines.join('\r\n')}\r\n` : '') : (rows > 0 ? `${lines.slice(1).join('\r\n')}\r\n` : '');
      read += rows;
      $('export-status').textContent = `${what}: ${formatInt(read)} rows…`;
      url = rows >= PAGE ? next(true, read, lines[lines.length - 1]) : null;
    }
    saveBlob(new Blob([out], { type: 'text/csv' }), filename);
    $('export-status').textContent = `${filename}: saved.`;
    return;
  }
  let doc = null;
  const all = [];
  for (let url = first(false); url; ) {
    const page = JSON.parse(await fetchText(url, what));
    if (!doc) doc = page;
    const list = page[field] || [];
    all.push(...list);
    $('export-status').textContent = `${what}: ${formatInt(all.length)} read…`;
    url = list.length >= PAGE ? next(false, all.length, list[list.length - 1]) : null;
  }
  const whole = { ...doc, [field]: all };
  saveBlob(new Blob([JSON.stringify(whole, null, 2)], { type: 'application/json' }), filename);
  $('export-status').textContent = `${filename}: ${formatInt(all.length)} ${field} saved.`;
}

// ---- preview -------------------------------------------------------------------

function countsList(entries) {
  if (!entries || !entries.length) return el('span', { className: 'muted' }, 'none');
  return el('ul', { className: 'plain' }, entries.map((e) => el('li', null, `${displayName(e.node)}: ${formatInt(e.keys)}`)));
}

function statsTable(before, after) {
  const rows = [
    ['Nodes', 'nodes', 0], ['Keys', 'keys', 0], ['Mean', 'mean', 2], ['Max', 'max', 0],
    ['Max / mean', 'max_over_mean', 3], ['CV', 'cv', 3],
  ];
  return el('table', { className: 'data compact', id: 'preview-stats' }, [
    el('caption', { className: 'visually-hidden' }, 'Statistics before and after'),
    el('thead', null, el('tr', null, [el('th', { scope: 'col' }, 'Statistic'), el('th', { scope: 'col', className: 'num' }, 'Before'), el('th', { scope: 'col', className: 'num' }, 'After')])),
    el('tbody', null, rows.map(([label, k, d]) => el('tr', { dataset: { stat: k } }, [
      el('th', { scope: 'row' }, label),
      el('td', { className: 'num' }, num(before && before[k], d)),
      el('td', { className: 'num' }, num(after && after[k], d)),
    ]))),
  ]);
}

class Preview {
  constructor({ ring, placement }) {
    this.ring = ring;
    this.placement = placement;
    this.pending = null;
    $('preview-add').addEventListener('click', () => this.ask('add_node'));
    $('preview-remove').addEventListener('click', () => this.ask('remove_node'));
    $('preview-config').addEventListener('click', () => this.ask('configure'));
    $('preview-apply').addEventListener('click', () => this.apply());
    $('preview-cancel').addEventListener('click', () => this.clear());
  }

  body(op) {
    if (op === 'configure') {
      const b = this.placement.readBody();
      return b ? { op, ...b } : null;
    }
    const name = $('node-name').value;
    const b = { op, name };
    if (op === 'add_node') {
      const w = $('node-weight');
      if (w.value.trim() !== '' && Number.isFinite(w.valueAsNumber)) b.weight = w.valueAsNumber;
    }
    return b;
  }

  /** A node down or up, previewed before it is done (issue 25 item 11). */
  askState(name, down, done) {
    this.onDone = done || null;
    return this.ask('set_state', { op: 'set_state', name, state: down ? 'down' : 'up' });
  }

  /** Every node of the failure domain TYPE=NAME down or up, previewed first. */
  askDomainState(type, name, down, done) {
    this.onDone = done || null;
    return this.ask('set_state', { op: 'set_state', domain: [type, name], state: down ? 'down' : 'up' });
  }

  async ask(op, given) {
    if (!given) this.onDone = null;
    const body = given || this.body(op);
    if (!body) return;
    setError('preview-error', '');
    $('preview-panel').hidden = false;
    $('preview-summary').textContent = 'Working out what would happen…';
    $('preview-body').replaceChildren();
    $('preview-apply').disabled = true;
    if (this.asking) this.asking.abort();
    const asking = new AbortController();
    this.asking = asking;
    $('preview-panel').dataset.asking = body.op;
    try {
      const answer = await api.preview(body, { signal: asking.signal });
      if (this.asking !== asking) return; // cancelled, or a newer preview asked
      this.asking = null;
      delete $('preview-panel').dataset.asking;
      this.pending = body;
      this.show(body, answer);
    } catch (err) {
      if (this.asking !== asking) return;
      this.asking = null;
      delete $('preview-panel').dataset.asking;
      this.pending = null;
      $('preview-summary').textContent = '';
      $('preview-body').replaceChildren();
      $('preview-apply').disabled = true;
      setError('preview-error', err.message);
    }
    $('preview-heading').scrollIntoView({ block: 'nearest' });
  }

  describe(body) {
    if (body.op === 'add_node') return `add node ${displayName(body.name)}${body.weight !== undefined ? ` (weight ${body.weight})` : ''}`;
    if (body.op === 'remove_node') return `remove node ${displayName(body.name)}`;
    if (body.op === 'set_state' && body.domain) return `mark ${displayName(body.domain[0])}=${displayName(body.domain[1])} ${body.state}`;
    if (body.op === 'set_state') return `mark ${displayName(body.name)} ${body.state}`;
    const parts = [`algorithm ${body.algorithm}`];
    if (body.params) for (const [k, v] of Object.entries(body.params)) parts.push(`${k} ${v}`);
    if (body.replicas !== undefined) parts.push(`replicas ${body.replicas}`);
    return `configure ${parts.join(', ')}`;
  }

  show(body, a) {
    const what = this.describe(body);
    const unserved = unavailableSentence(a.unavailable_after);
    $('preview-summary').textContent = `If you ${what}: ${formatInt(a.keys_moved)} keys would move, ${formatInt(a.replica_moves)} replica moves.${unserved ? ` ${unserved.replace('have no live replica', 'would have no live replica').replace('has no live replica', 'would have no live replica').replace('nobody serves them', 'nobody would serve them')}` : ''} Nothing has changed yet.`;
    $('preview-summary').dataset.unavailable = String(a.unavailable_after ? a.unavailable_after.keys : 0);
    $('preview-summary').dataset.keysMoved = String(a.keys_moved);
    $('preview-summary').dataset.replicaMoves = String(a.replica_moves);
    const sample = (a.sample || []).slice(0, 20);
    $('preview-body').replaceChildren(
      el('div', { className: 'preview-flows' }, [
        el('div', null, [el('h3', null, 'Would move from'), countsList(a.moved_from)]),
        el('div', null, [el('h3', null, 'Would move to'), countsList(a.moved_to)]),
      ]),
      Array.isArray(a.pairs) && a.pairs.length ? el('h3', null, 'From → to, every move counted') : null,
      Array.isArray(a.pairs) && a.pairs.length ? pairsTable(a.pairs.slice(0, 12), a.pairs.length) : null,
      statsTable(a.before, a.after),
      el('h3', null, `Sample of moved keys (${formatInt(sample.length)} of ${formatInt(a.keys_moved)})`),
      sample.length
        ? el('ul', { className: 'plain sample', id: 'preview-sample', tabIndex: 0, 'aria-label': 'Sample of moved keys' }, sample.map((s) => el('li', null, `${displayName(s.key)}: ${displayName(s.from)} → ${displayName(s.to)}`)))
        : el('p', { className: 'muted small' }, 'No key would move.'),
    );
    $('preview-apply').disabled = false;
    $('preview-apply').textContent = `Apply: ${what}`;
    // The ghost: a marked banner over the ring and the flows of the sample.
    const ghost = $('ring-ghost');
    ghost.hidden = false;
    const from = (a.moved_from || []).map((e) => `${displayName(e.node)} (${formatInt(e.keys)})`).join(', ');
    const to = (a.moved_to || []).map((e) => `${displayName(e.node)} (${formatInt(e.keys)})`).join(', ');
    ghost.textContent = `Preview, not applied — ${what}: ${formatInt(a.keys_moved)} keys would move${from ? ` from ${from}` : ''}${to ? ` to ${to}` : ''}.`;
    const pairs = new Map();
    // The exact pairs when the server gives them; else the sample's.
    if (Array.isArray(a.pairs)) for (const p of a.pairs) if (p.from && p.to) pairs.set(`${p.from}\u0000${p.to}`, p);
    else {
      for (const s of a.sample || []) {
        if (!s.from || !s.to) continue;
        const k = `${s.from}\u0000${s.to}`;
        pairs.set(k, { from: s.from, to: s.to, keys: (pairs.get(k)?.keys || 0) + 1 });
      }
    }
    try {
      this.ring.showFlow([...pairs.values()]);
    } catch { /* a node the ring does not have yet has no place to flow to */ }
  }

  async apply() {
    const body = this.pending;
    if (!body) return;
    const button = $('preview-apply');
    button.disabled = true;
    setError('preview-error', '');
    try {
      if (body.op === 'add_node') {
        await api.addNode(body.name, body.weight);
      } else if (body.op === 'remove_node') {
        await api.removeNode(body.name);
      } else if (body.op === 'set_state' && body.domain) {
        await api.setDomainState(body.domain[0], body.domain[1], body.state);
      } else if (body.op === 'set_state') {
        await api.setState(body.name, body.state);
      } else {
        const config = { ...body };
        delete config.op;
        await api.setConfig(config);
        // The form's choice is now the configuration in force.
        this.placement.applied();
      }
      const done = this.onDone;
      this.clear();
      if (done) done();
    } catch (err) {
      button.disabled = false;
      setError('preview-error', err.message);
    }
  }

  clear() {
    // A preview still being worked out is dropped: its late answer is not
    // shown, and "Cancel the running operation" (which its progress may
    // have shown; the server cannot cancel a read) goes with it.
    if (this.asking) {
      this.asking.abort();
      this.asking = null;
    }
    delete $('preview-panel').dataset.asking;
    $('cancel-op').hidden = true;
    this.pending = null;
    $('preview-panel').hidden = true;
    $('preview-body').replaceChildren();
    $('preview-summary').textContent = '';
    setError('preview-error', '');
    $('ring-ghost').hidden = true;
    $('ring-ghost').textContent = '';
    try { this.ring.clearHighlights(); } catch { /* nothing shown */ }
  }
}

// ---- compare -------------------------------------------------------------------

function barChart(results, field, label, id) {
  const w = 420;
  const rowH = 18;
  const left = 110;
  const values = results.map((r) => (typeof r[field] === 'number' ? r[field] : 0));
  const max = Math.max(1e-9, ...values);
  const h = rowH * results.length + 40;
  const chart = svg('svg', { viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', 'aria-label': label, id, class: 'bar-chart' });
  chart.appendChild(svg('title', {}, label));
  chart.appendChild(svg('text', { x: 0, y: 12, class: 'chart-title' }, label));
  results.forEach((r, i) => {
    const y = 20 + i * rowH;
    const bw = ((w - left - 60) * values[i]) / max;
    chart.appendChild(svg('text', { x: left - 6, y: y + 12, 'text-anchor': 'end', class: 'chart-label' }, r.algorithm));
    chart.appendChild(svg('rect', { x: left, y: y + 2, width: Math.max(1, bw), height: rowH - 5, class: r.current ? 'bar current' : 'bar' }));
    chart.appendChild(svg('text', { x: left + bw + 4, y: y + 12, class: 'chart-label' }, field.startsWith('moves') ? formatInt(values[i]) : formatNumber(values[i], 3)));
  });
  // The axes named: algorithms down the side, the measure along the bars.
  chart.appendChild(svg('line', { x1: left, y1: h - 18, x2: w - 60, y2: h - 18, class: 'axis' }));
  chart.appendChild(svg('text', { x: left, y: h - 4, class: 'chart-label axis-label' }, `${label} →`));
  chart.appendChild(svg('text', { x: left - 6, y: h - 4, 'text-anchor': 'end', class: 'chart-label axis-label' }, 'algorithm')); 
  return chart;
}

class Compare {
  constructor() {
    $('compare-run').addEventListener('click', () => this.run());
    $('compare-cancel').addEventListener('click', () => { if (this.abort) this.abort.abort(); });
    $('compare-pick').addEventListener('toggle', () => this.fillChoices());
  }

  fillChoices() {
    const box = $('compare-choices');
    if (box.childElementCount) return;
    for (const opt of $('algorithm').options) {
      const id = `compare-alg-${opt.value}`;
      box.appendChild(el('label', { className: 'inline check' }, [
        el('input', { type: 'checkbox', id, value: opt.value, checked: true }),
        ` ${opt.value}`,
      ]));
    }
  }

  chosen() {
    const boxes = [...$('compare-choices').querySelectorAll('input[type=checkbox]')];
    if (!boxes.length || boxes.every((b) => b.checked)) return '';
    return boxes.filter((b) => b.checked).map((b) => b.value).join(',');
  }

  async run() {
    const button = $('compare-run');
    const status = $('compare-status');
    button.disabled = true;
    $('compare-progress').hidden = false;
    status.textContent = 'Comparing… each algorithm places the keys in turn.';
    setError('compare-error', '');
    const algorithms = this.chosen();
    this.abort = new AbortController();
    $('compare-cancel').hidden = false;
    try {
      const answer = await api.compare(algorithms, { signal: this.abort.signal });
      this.show(answer);
      status.textContent = `${formatInt(answer.nodes)} nodes, ${formatInt(answer.keys)} keys.`;
    } catch (err) {
      status.textContent = err.name === 'AbortError' ? 'Comparison cancelled.' : '';
      if (err.name !== 'AbortError') setError('compare-error', err.message);
    } finally {
      this.abort = null;
      $('compare-cancel').hidden = true;
      button.disabled = false;
      $('compare-progress').hidden = true;
    }
  }

  show(answer) {
    const s = answer.sample || {};
    $('compare-sample').textContent = s.sampled
      ? `Sampled: ${formatInt(s.keys)} of ${formatInt(answer.keys)} keys (every ${formatInt(s.every)}th key) were placed.`
      : `All ${formatInt(answer.keys)} keys were placed (no sample).`;
    const results = answer.results || [];
    // An algorithm that refuses the current nodes (ketama and a weight of
    // 2.5) has no numbers: its row says why, in the server's words, and it
    // stays out of the charts and of "best".
    const usable = results.filter((r) => !r.error && r.stats);
    const body = $('compare-body');
    body.replaceChildren(...results.map((r) => {
      const name = el('th', { scope: 'row' }, [r.algorithm, r.current ? el('strong', { className: 'tag' }, ' (current)') : null]);
      if (r.error || !r.stats) {
        const why = r.error && r.error.message ? r.error.message : 'no result';
        return el('tr', { className: `refused${r.current ? ' current' : ''}`, dataset: { algorithm: r.algorithm } }, [
          name,
          el('td', { colSpan: 8, className: 'refusal' }, [el('strong', null, 'Refuses the current nodes: '), visibleText(humanMessage(why))]),
        ]);
      }
      const st = r.stats;
      const switchButton = r.current
        ? el('span', { className: 'muted small' }, 'in use')
        : el('button', { type: 'button', className: 'mutating secondary small', 'aria-label': `Switch to ${r.algorithm}` }, 'Switch');
      if (!r.current) {
        switchButton.addEventListener('click', async () => {
          switchButton.disabled = true;
          try {
            await api.setConfig({ algorithm: r.algorithm });
            await this.run();
          } catch (err) {
            switchButton.disabled = false;
            setError('compare-error', err.message);
          }
        });
      }
      return el('tr', { className: r.current ? 'current' : '', dataset: { algorithm: r.algorithm } }, [
        name,
        el('td', { className: 'num' }, num(st.max_over_mean)),
        el('td', { className: 'num' }, num(st.cv)),
        el('td', { className: 'num' }, num(r.structural_max_over_mean)),
        el('td', { className: 'num' }, num(r.lookup_ns, 0)),
        el('td', { className: 'num' }, typeof r.memory_bytes === 'number' ? formatInt(r.memory_bytes) : '—'),
        el('td', { className: 'num' }, typeof r.moves_if_added === 'number' ? formatInt(r.moves_if_added) : '—'),
        el('td', { className: 'num' }, typeof r.moves_if_removed === 'number' ? formatInt(Math.round(r.moves_if_removed)) : '—'),
        el('td', null, switchButton),
      ]);
    }));
    $('compare-table').hidden = false;
    const refused = results.filter((r) => !usable.includes(r)).map((r) => r.algorithm);
    $('compare-best').replaceChildren(...bestLine(usable, refused));
    $('compare-charts').replaceChildren(
      barChart(usable, 'structural_max_over_mean', 'Structural max / mean (1 is perfect)', 'compare-chart-balance'),
      barChart(usable.map((r) => ({ ...r, max_over_mean: r.stats.max_over_mean })), 'max_over_mean', 'Measured max / mean of the keys', 'compare-chart-keys'),
      barChart(usable, 'moves_if_added', 'Keys moved if a node joined', 'compare-chart-moves'),
    );
  }
}

/** The best of the algorithms that placed the keys, for each measure. */
function bestLine(usable, refused) {
  const best = (value) => {
    let top = null;
    for (const r of usable) {
      const v = value(r);
      if (typeof v === 'number' && Number.isFinite(v) && (!top || v < top.v)) top = { r, v };
    }
    return top;
  };
  const parts = [];
  const add = (label, top, digits) => {
    if (!top) return;
    if (parts.length) parts.push(' · ');
    parts.push(`${label}: `, el('strong', { dataset: { best: top.r.algorithm } }, top.r.algorithm), ` (${digits === 0 ? formatInt(top.v) : formatNumber(top.v, digits)})`);
  };
  add('Most even keys', best((r) => r.stats.max_over_mean), 3);
  add('most even space', best((r) => r.structural_max_over_mean), 3);
  add('fewest moves when a node joins', best((r) => r.moves_if_added), 0);
  if (refused.length) parts.push(`. Left out: ${refused.join(', ')} (${refused.length === 1 ? 'it refuses' : 'they refuse'} the current nodes).`);
  return parts;
}

// ---- theory --------------------------------------------------------------------

function theoryChart(answer, width = 560) {
  const pts = answer.points || [];
  const algs = answer.algorithms || [];
  // As wide as its panel (issue 25 item 10): drawn at its own width, so the
  // text keeps its size.
  const w = Math.max(560, Math.round(width));
  // Tall enough for every algorithm's name at the right edge.
  const h = Math.max(280, algs.length * 14 + 60);
  const m = { l: 62, r: 130, t: 14, b: 34 };
  const ys = [1];
  for (const p of pts) ys.push(p.expected_max_over_mean, p.ring_max_over_mean);
  for (const a of algs) ys.push(a.structural_max_over_mean);
  const ymax = Math.max(...ys.filter(Number.isFinite)) * 1.05;
  const x = (v) => m.l + ((Math.log10(v)) / 3) * (w - m.l - m.r);
  const y = (v) => m.t + (1 - (v - 1) / Math.max(1e-9, ymax - 1)) * (h - m.t - m.b);
  const chart = svg('svg', { viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', id: 'theory-chart', class: 'theory-chart',
    'aria-label': 'Max / mean against points per node: expected curve, measured ring, and each algorithm' });
  chart.appendChild(svg('title', {}, 'Max / mean against points per node (log scale)'));
  chart.appendChild(svg('line', { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, class: 'axis' }));
  chart.appendChild(svg('line', { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, class: 'axis' }));
  for (const v of [1, 10, 100, 1000]) {
    chart.appendChild(svg('text', { x: x(v), y: h - m.b + 14, 'text-anchor': 'middle', class: 'chart-label' }, String(v)));
  }
  chart.appendChild(svg('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label axis-label' }, 'points per node (log scale)'));
  chart.appendChild(svg('text', { x: 12, y: (m.t + h - m.b) / 2, 'text-anchor': 'middle', class: 'chart-label axis-label', transform: `rotate(-90 12 ${(m.t + h - m.b) / 2})` }, 'busiest node ÷ its share'));
  const ticks = 4;
  for (let i = 0; i <= ticks; i++) {
    const v = 1 + ((ymax - 1) * i) / ticks;
    chart.appendChild(svg('text', { x: m.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'chart-label' }, formatNumber(v, 2)));
  }
  const line = (field, cls) => {
    const d = pts.filter((p) => Number.isFinite(p[field]))
      .map((p, i) => `${i ? 'L' : 'M'}${x(p.points_per_node).toFixed(1)},${y(p[field]).toFixed(1)}`).join(' ');
    chart.appendChild(svg('path', { d, class: `curve ${cls}` }));
    for (const p of pts) if (Number.isFinite(p[field])) chart.appendChild(svg('circle', { cx: x(p.points_per_node), cy: y(p[field]), r: 2.5, class: `dot ${cls}` }));
  };
  line('expected_max_over_mean', 'expected');
  line('ring_max_over_mean', 'measured');
  // Each algorithm's structural value: a short mark at the right edge and
  // its name beside it. Names whose values are close are spread apart (at
  // least LABEL_GAP between them, all inside the chart) with a leader line
  // to their mark, so that every algorithm is named and none overlap.
  const LABEL_GAP = 13;
  const marks = algs.filter((a) => Number.isFinite(a.structural_max_over_mean))
    .map((a) => ({ a, yy: y(a.structural_max_over_mean) }))
    .sort((p, q) => p.yy - q.yy || (p.a.algorithm < q.a.algorithm ? -1 : 1));
  const top = 8;
  const bottom = h - 6;
  let prev = -Infinity;
  for (const mk of marks) {
    mk.ty = Math.max(mk.yy + 4, prev + LABEL_GAP, top + 4);
    prev = mk.ty;
  }
  let next = Infinity;
  for (let i = marks.length - 1; i >= 0; i--) {
    marks[i].ty = Math.min(marks[i].ty, next - LABEL_GAP, bottom);
    next = marks[i].ty;
  }
  const lx = w - m.r + 18;
  for (const mk of marks) {
    chart.appendChild(svg('line', { x1: w - m.r - 8, x2: w - m.r, y1: mk.yy, y2: mk.yy, class: 'alg-mark' }));
    chart.appendChild(svg('line', { x1: w - m.r, x2: lx - 2, y1: mk.yy, y2: mk.ty - 4, class: 'alg-leader' }));
    chart.appendChild(svg('text', { x: lx, y: mk.ty, class: 'chart-label alg-label', 'data-algorithm': mk.a.algorithm },
      `${mk.a.algorithm} ${formatNumber(mk.a.structural_max_over_mean, 2)}`));
  }
  return chart;
}

/**
 * The theory sentence for the algorithm in use (issue 25 item 12): its own
 * structure (Cassandra's tokens, Maglev's table, Redis's slots, a ring's
 * points counted from the nodes), the expected busiest node for that many
 * points, and what the server measured for it. Built from the catalogue's
 * traits and the theory answer; null when nothing is known.
 */
function theorySentence(answer, view) {
  const config = view && view.config;
  if (!config) return null;
  const algo = catalogueEntry(config);
  if (!algo) return null;
  const words = wordsFor(algo.name);
  const n = answer.nodes;
  const mine = (answer.algorithms || []).find((a) => a.algorithm === algo.name);
  const measured = mine && !mine.error
    ? ` ringsim measures ${formatNumber(mine.structural_max_over_mean, 2)}× for ${algo.name} here, and a join moves ${formatPercent(mine.join_moved)}.`
    : (mine && mine.error ? ` ${algo.name} cannot place these nodes: ${mine.error.message}` : '');
  const join = `a join should move 1/${formatInt(n + 1)} = ${formatPercent(1 / (n + 1))} of the keys`;
  const title = algo.title || algo.name;
  const nodes = (view.nodes || []).filter((x) => x.weight > 0);
  const layout = layoutOf(algo);
  if (layout === 'points') {
    // Points per weight unit, counted from the nodes as placed.
    const counted = nodes.filter((x) => Number.isFinite(x.points));
    const weight = counted.reduce((t, x) => t + (algo.weights ? x.weight : 1), 0);
    const pts = counted.reduce((t, x) => t + x.points, 0);
    const param = (algo.params || []).find((p) => /points|tokens/.test(p.name));
    let v = weight > 0 ? pts / weight : (param ? Number((config.params || {})[param.name] ?? param.default) : NaN);
    if (!Number.isFinite(v) || v <= 0) v = 1;
    // A variant (ketama's unweighted continuum) counts its points its own way.
    const [one, many, how] = words.unit ? [words.unit[0], words.unit[1], algo.when ? '' : words.unit[2]] : ['point', 'points', ''];
    const vr = Math.round(v);
    const expected = n > 1 ? 1 + Math.sqrt((2 * Math.log(n)) / v) : 1;
    const per = algo.weights && nodes.some((x) => x.weight !== 1) ? ' per weight unit' : ' per node';
    return `${title}: ${formatInt(vr)} ${vr === 1 ? one : many}${per}${how ? ` (${how})` : ''}`
      + `${algo.point_rule === 'nearest' ? ', a key going to the nearest one' : ''}. With ${formatInt(n)} nodes of ${formatInt(vr)} ${vr === 1 ? one : many},`
      + ` expect the busiest to hold about ${formatNumber(expected, 2)}× its fair share (1 + √(2 ln N / V)); ${join}.${measured}`;
  }
  let structure;
  if (layout === 'table') {
    const size = formatInt(tableSize(algo, config));
    const [, cells] = words.cells || ['entry', 'entries'];
    structure = words.table ? words.table.replace('{n}', size) : `a table of ${size} ${cells}, each held by one node`;
  } else if (words.structure && !algo.when) {
    structure = words.structure;
  } else {
    structure = algo.space === 'none'
      ? `no ring: each key placed by its own hash (${algo.key_hash})${algo.minimal === false ? ', so a change of nodes moves most keys' : ''}`
      : `a space of ${algo.space} positions, keys hashed by ${algo.key_hash}`;
  }
  return `${title}: ${structure}; ${join}.${measured}`;
}

// The sentence is written again from the last theory answer whenever the
// view changes (another algorithm, other nodes), so it never speaks of the
// algorithm that was in use when the button was pressed.
function writeTheorySentence(theory, getView) {
  if (!theory.answer) return;
  const view = getView ? getView() : null;
  $('theory-sentence').textContent = theorySentence(theory.answer, view) || theory.answer.sentence || '';
}

async function runTheory(theory, getView) {
  const nodes = $('theory-nodes').value.trim();
  setError('theory-error', '');
  $('theory-status').textContent = 'Measuring… (a few seconds)';
  $('theory-run').disabled = true;
  try {
    const answer = await api.theory(nodes);
    // Never silently another N than the one asked for.
    const asked = nodes === '' ? null : Number(nodes);
    const other = asked !== null && asked !== answer.nodes ? ` — not the ${formatInt(asked)} asked for: the server measured ${formatInt(answer.nodes)}` : '';
    $('theory-status').textContent = `${formatInt(answer.nodes)} ${answer.nodes === 1 ? 'node' : 'nodes'}, measured over ${formatInt(answer.sample_keys)} keys${other}.`;
    $('theory-chart-box').replaceChildren(
      theoryChart(answer, $('theory-chart-box').clientWidth),
      el('p', { className: 'legend muted small' }, [
        el('span', { className: 'swatch swatch-expected' }), ' expected 1 + √(2 ln N / V) ',
        el('span', { className: 'swatch swatch-measured' }), ' measured ring ',
        el('span', { className: 'swatch swatch-alg' }), ' each algorithm (right edge)',
      ]),
    );
    // The server's sentence speaks of a generic ring of 160 points; the
    // page's speaks of the algorithm in use.
    theory.answer = answer;
    writeTheorySentence(theory, getView);
    const ideal = answer.ideal_join_moved;
    $('theory-moves').replaceChildren(
      el('caption', null, `Keys a join moves: each algorithm against the ideal 1/(N+1) = ${formatPercent(ideal)}`),
      el('thead', null, el('tr', null, [el('th', { scope: 'col' }, 'Algorithm'), el('th', { scope: 'col', className: 'num' }, 'Join moved'), el('th', { scope: 'col', className: 'num' }, 'Ideal'), el('th', { scope: 'col', className: 'num' }, '× ideal')])),
      el('tbody', null, (answer.algorithms || []).map((a) => el('tr', null, [
        el('th', { scope: 'row' }, a.algorithm),
        el('td', { className: 'num' }, formatPercent(a.join_moved)),
        el('td', { className: 'num' }, formatPercent(ideal)),
        el('td', { className: 'num' }, ideal ? formatNumber(a.join_moved / ideal, 2) : '—'),
      ]))),
    );
    $('theory-moves').hidden = false;
    theoryViewsShown();
  } catch (err) {
    $('theory-status').textContent = '';
    setError('theory-error', err.message);
  } finally {
    $('theory-run').disabled = false;
  }
}

// ---- scenario files ------------------------------------------------------------

/** The lines that do something: [{line, text}] (comments and blanks left out). */
function scenarioLines(text) {
  const out = [];
  text.split(/\r?\n/).forEach((t, i) => {
    const s = t.trim();
    if (s && !s.startsWith('#')) out.push({ line: i + 1, text: t });
  });
  return out;
}

/** "line 2: unknown command" → "unknown command" (the page names the line itself). */
function withoutLine(message) {
  return String(message).replace(/^line \d+:\s*/i, '');
}

/** Whether a scenario line empties the simulation (a reset, or a revert to the empty start). */
function wipes(text) {
  return /^\s*(reset|revert\s+0)\s*$/.test(text);
}

class ScenarioFiles {
  constructor({ confirmInPage }) {
    this.confirmInPage = confirmInPage;
    this.steps = null;
    this.next = 0;
    $('scenario-load').addEventListener('click', () => this.loadBuiltin());
    $('scenario-file').addEventListener('change', () => this.loadFile());
    $('scenario-run-all').addEventListener('click', () => this.runAll());
    $('scenario-step').addEventListener('click', () => this.step());
    $('scenario-text').addEventListener('input', () => { this.steps = null; });
    this.list();
  }

  async list() {
    try {
      const answer = await api.scenarios();
      const select = $('scenario-list');
      // The short name fits the box; the title is said under it.
      this.titles = new Map((answer.scenarios || []).map((s) => [s.name, s.title]));
      select.replaceChildren(...(answer.scenarios || []).map((s) => el('option', { value: s.name, title: s.title }, s.name)));
      const about = () => { $('scenario-about').textContent = this.titles.get(select.value) || ''; };
      select.addEventListener('change', about);
      about();
    } catch (err) {
      setError('scenario-file-error', err.message);
    }
  }

  async loadBuiltin() {
    const name = $('scenario-list').value;
    if (!name) return;
    try {
      const answer = await api.scenario(name);
      this.setText(answer.text, `${name}.ringsim`);
    } catch (err) {
      setError('scenario-file-error', err.message);
    }
  }

  async loadFile() {
    const file = $('scenario-file').files[0];
    if (!file) return;
    this.setText(await file.text(), file.name);
  }

  setText(text, name) {
    $('scenario-text').value = text;
    this.name = name;
    this.steps = null;
    $('scenario-results').replaceChildren();
    $('scenario-status').textContent = `Loaded ${name}: ${scenarioLines(text).length} lines to run.`;
    setError('scenario-file-error', '');
  }

  resultItem(step) {
    const ok = step.kind === 'expect' ? step.ok : true;
    let detail = '';
    if (step.kind === 'expect') detail = ok ? `holds (${groupCounts(step.actual)})` : `FAILED: ${step.stat} is ${groupCounts(step.actual)}, expected ${step.op} ${groupCounts(step.value)}`;
    else if (step.operation) {
      const op = step.operation;
      const replicas = op.replica_moves ? `, ${formatInt(op.replica_moves)} replica ${op.replica_moves === 1 ? 'copy' : 'copies'} added` : '';
      detail = `operation ${op.id}: ${formatInt(op.keys_moved)} ${op.keys_moved === 1 ? 'key' : 'keys'} moved${replicas}`;
    }
    return el('li', { className: ok ? 'ok' : 'failed', dataset: { line: String(step.line) } },
      [el('code', null, `${step.line}: ${step.text.trim()}`), ' — ', detail]);
  }

  failItem(line, text, message) {
    return el('li', { className: 'failed', dataset: { line: String(line) } }, [el('code', null, `${line}: ${String(text).trim()}`), ' — FAILED: ', message]);
  }

  /**
   * A scenario that resets asks first, as the guided scenarios do, when
   * there is something to lose; false when the user keeps the ring.
   */
  async mayReset(lines) {
    if (!lines.some((l) => wipes(l.text))) return true;
    const stats = await api.stats();
    if (stats.nodes === 0 && stats.keys === 0) return true;
    const yes = await this.confirmInPage('Start from an empty ring?',
      `This scenario resets the simulation: the ${formatInt(stats.nodes)} ${stats.nodes === 1 ? 'node' : 'nodes'} and ${formatInt(stats.keys)} ${stats.keys === 1 ? 'key' : 'keys'} now stored will be removed (the history keeps them; you can revert later).`);
    if (!yes) {
      $('scenario-status').textContent = 'Scenario not run: the ring was left as it was.';
      return false;
    }
    return true;
  }

  async runAll() {
    const text = $('scenario-text').value;
    setError('scenario-file-error', '');
    if (!(await this.mayReset(scenarioLines(text)))) return;
    $('scenario-results').replaceChildren();
    $('scenario-status').textContent = 'Running…';
    try {
      const report = await api.runScenario({ text, name: this.name || 'pasted.ringsim' });
      $('scenario-results').replaceChildren(...(report.steps || []).map((s) => this.resultItem(s)));
      this.finish(report);
    } catch (err) {
      this.error(err);
    }
    this.steps = null;
  }

  finish(report) {
    if (report.ok) {
      $('scenario-status').textContent = `Done: ${report.operations} operations, ${report.expectations} expectations met.`;
    } else if (report.failed) {
      const f = report.failed;
      if (!$('scenario-results').querySelector(`li.failed[data-line="${f.line}"]`)) {
        $('scenario-results').appendChild(this.failItem(f.line, f.text, withoutLine(f.message)));
      }
      $('scenario-status').textContent = '';
      setError('scenario-file-error', `Stopped at line ${f.line} (${String(f.text).trim()}): ${withoutLine(f.message)}`);
    }
  }

  error(err) {
    $('scenario-status').textContent = '';
    const line = err.body && err.body.error && err.body.error.line;
    setError('scenario-file-error', line ? `Line ${line}: ${withoutLine(err.message)}` : err.message);
  }

  async step() {
    const text = $('scenario-text').value;
    setError('scenario-file-error', '');
    if (!this.steps) {
      // Every line is checked before the first step runs.
      try {
        await api.runScenario({ text, check: true });
      } catch (err) {
        this.error(err);
        return;
      }
      const lines = scenarioLines(text);
      if (!(await this.mayReset(lines))) return;
      this.steps = lines;
      this.next = 0;
      $('scenario-results').replaceChildren();
    }
    if (this.next >= this.steps.length) {
      $('scenario-status').textContent = 'All steps done. Step again to start over.';
      this.steps = null;
      return;
    }
    const { line, text: lineText } = this.steps[this.next];
    $('scenario-step').disabled = true;
    try {
      const report = await api.runScenario({ text: lineText, name: this.name || 'pasted.ringsim' });
      for (const s of report.steps || []) {
        s.line = line;
        $('scenario-results').appendChild(this.resultItem(s));
      }
      if (!report.ok && report.failed) {
        report.failed.line = line;
        this.finish(report);
        this.steps = null;
        return;
      }
      this.next += 1;
      $('scenario-status').textContent = this.next < this.steps.length
        ? `Step ${this.next} of ${this.steps.length} done; next: line ${this.steps[this.next].line}.`
        : `All ${this.steps.length} steps done.`;
    } catch (err) {
      this.error(err);
      this.steps = null;
    } finally {
      $('scenario-step').disabled = false;
    }
  }
}

// ---- exports -------------------------------------------------------------------

const EXPORT_LEGEND_ROWS = 40; // nodes named in the legend; the rest are counted
const EXPORT_LABELS = 60;      // nodes labelled around the ring, as on screen

/** A name cut to `max` characters for a picture (the full name goes in <title>). */
const cut = cutText;

/**
 * The ring on show as a standalone SVG document: the same runs as the
 * canvas (ring arcs, table runs, or each node's share as a sector for
 * algorithms without a ring), point marks, each node labelled at its
 * anchor, and a legend naming every node (the largest ones when there are
 * many) with its colour and shares. Built with DOM calls and serialised by
 * XMLSerializer, so names with <, & or quotes come out escaped.
 */
function ringSvgDocument(ring, view) {
  const R = 230;
  const band = 24;
  const c = 320;
  const nodes = [...ring.nodes].sort((a, b) => b.keys - a.keys || (a.name < b.name ? -1 : 1));
  const legendRows = Math.min(nodes.length, EXPORT_LEGEND_ROWS) + (nodes.length > EXPORT_LEGEND_ROWS ? 1 : 0);
  const width = 1000;
  const height = Math.max(660, 96 + legendRows * 20);
  const colour = (name) => nodeColourLight(name);
  // The page's light palette, whatever the theme on screen: a picture to share.
  const ink = cssColours(['--panel', '--line', '--text', '--muted', '--mark'], 'light');
  const doc = svg('svg', { xmlns: SVG, width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'DejaVu Sans, Arial, sans-serif' });
  const algorithm = view && view.config ? view.config.algorithm : '';
  const when = view && view.at !== null && view.at !== undefined ? `, as after operation ${view.at}` : '';
  doc.appendChild(svg('title', {}, `ringsim: ${algorithm} ring, ${ring.nodes.length} nodes, ${ring.totalKeys} keys${when}`));
  doc.appendChild(svg('rect', { x: 0, y: 0, width, height, fill: ink['--panel'] }));
  doc.appendChild(svg('circle', { cx: c, cy: c, r: R, fill: 'none', stroke: ink['--line'], 'stroke-width': band }));
  const TAU = Math.PI * 2;
  const angle = (pos) => (pos / RING_SIZE) * TAU - Math.PI / 2;
  const at = (pos, r) => [c + r * Math.cos(angle(pos)), c + r * Math.sin(angle(pos))];
  const f = (x) => x.toFixed(2);
  const arcs = svg('g', { class: 'arcs', fill: 'none', 'stroke-width': band });
  for (const run of ring.drawRuns({ R })) {
    const span = run.a1 - run.a0;
    if (span >= RING_SIZE - 1) {
      arcs.appendChild(svg('circle', { cx: c, cy: c, r: R, stroke: colour(run.node), 'data-node': run.node ?? '' }));
      continue;
    }
    if (span <= 0) continue; // an empty arc owns nothing
    const shown = span;
    const [x1, y1] = at(run.a0, R);
    const [x2, y2] = at(run.a0 + shown, R);
    const large = shown > RING_SIZE / 2 ? 1 : 0;
    arcs.appendChild(svg('path', {
      d: `M${f(x1)},${f(y1)} A${R},${R} 0 ${large} 1 ${f(x2)},${f(y2)}`, stroke: colour(run.node), 'data-node': run.node ?? '',
    }));
  }
  doc.appendChild(arcs);
  if (ring.points.length && ring.points.length <= 2000) {
    const marks = svg('g', { class: 'points', stroke: ink['--mark'], 'stroke-width': ring.points.length > 400 ? 0.6 : 1.2 });
    for (const p of ring.points) {
      const [x1, y1] = at(p.position, R - band / 2);
      const [x2, y2] = at(p.position, R + band / 2 + 3);
      marks.appendChild(svg('line', { x1: f(x1), y1: f(y1), x2: f(x2), y2: f(y2) }));
    }
    doc.appendChild(marks);
  }
  if (ring.keys && ring.keys.length) {
    const dots = svg('g', { class: 'keys' });
    for (const k of ring.keys) {
      if (k.pos === null) continue;
      const [x, y] = at(k.pos, R - band / 2 - 10 - (Math.floor(k.pos) & 3) * 4);
      dots.appendChild(svg('circle', { cx: f(x), cy: f(y), r: 2, fill: colour(k.node) }));
    }
    doc.appendChild(dots);
  }
  // Labels at each node's anchor, as on screen (up to EXPORT_LABELS nodes).
  const anchors = ring.nodeAnchors();
  if (anchors.size && anchors.size <= EXPORT_LABELS) {
    const labels = svg('g', { class: 'labels', 'font-size': 12, fill: ink['--text'] });
    const sorted = [...anchors].sort((a, b) => a[1] - b[1]);
    let lastAngle = -Infinity;
    let level = 0;
    for (const [name, pos] of sorted) {
      const a = angle(pos);
      level = (a - lastAngle) * (R + 40) < 16 ? (level + 1) % 3 : 0;
      lastAngle = a;
      const r = R + band / 2 + 14 + level * 16;
      const [x, y] = at(pos, r);
      const cos = Math.cos(a);
      const text = svg('text', {
        x: f(x), y: f(y), 'dominant-baseline': 'middle', class: 'node-label',
        'text-anchor': Math.abs(cos) < 0.25 ? 'middle' : (cos > 0 ? 'start' : 'end'),
      }, cut(displayName(name), 16));
      text.appendChild(svg('title', {}, displayName(name)));
      labels.appendChild(text);
    }
    doc.appendChild(labels);
  }
  doc.appendChild(svg('text', { x: c, y: c - 6, 'text-anchor': 'middle', 'font-size': 18, 'font-weight': 700, fill: ink['--text'] }, algorithm));
  doc.appendChild(svg('text', { x: c, y: c + 16, 'text-anchor': 'middle', 'font-size': 13, fill: ink['--muted'] },
    `${formatInt(ring.nodes.length)} ${ring.nodes.length === 1 ? 'node' : 'nodes'} · ${formatInt(ring.totalKeys)} ${ring.totalKeys === 1 ? 'key' : 'keys'}${when ? ` · after #${view.at}` : ''}`));
  // The legend: every node (or the largest), its colour, keys and shares.
  const legend = svg('g', { class: 'legend', 'font-size': 12, fill: ink['--text'] });
  const lx = 640;
  legend.appendChild(svg('text', { x: lx, y: 40, 'font-size': 14, 'font-weight': 700 }, 'Nodes'));
  legend.appendChild(svg('text', { x: lx, y: 60, fill: ink['--muted'] }, 'keys · key share · share of the space'));
  nodes.slice(0, EXPORT_LEGEND_ROWS).forEach((n, i) => {
    const y = 86 + i * 20;
    legend.appendChild(svg('rect', { x: lx, y: y - 9, width: 14, height: 12, rx: 2, fill: colour(n.name) }));
    const name = svg('text', { x: lx + 22, y, class: 'legend-name', 'data-node': n.name }, cut(displayName(n.name), 24));
    name.appendChild(svg('title', {}, displayName(n.name)));
    legend.appendChild(name);
    legend.appendChild(svg('text', { x: width - 16, y, 'text-anchor': 'end', fill: ink['--muted'] },
      `${formatInt(n.keys)} · ${formatPercent(n.key_share)} · ${formatPercent(n.arc_share)}`));
  });
  if (nodes.length > EXPORT_LEGEND_ROWS) {
    legend.appendChild(svg('text', { x: lx, y: 86 + EXPORT_LEGEND_ROWS * 20, fill: ink['--muted'] },
      `and ${formatInt(nodes.length - EXPORT_LEGEND_ROWS)} more nodes with fewer keys`));
  }
  if (!nodes.length) legend.appendChild(svg('text', { x: lx, y: 86, fill: ink['--muted'] }, 'no nodes'));
  doc.appendChild(legend);
  return { doc, width, height };
}

/** The export as SVG text. */
function ringSvgText(ring, view) {
  return new XMLSerializer().serializeToString(ringSvgDocument(ring, view).doc);
}

/** The same picture as PNG, twice the size: the SVG drawn on a canvas. */
async function ringPngBlob(ring, view) {
  const { doc, width, height } = ringSvgDocument(ring, view);
  const text = new XMLSerializer().serializeToString(doc);
  const img = new Image();
  // A data: address (the page's policy allows images from data:, not blob:).
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await img.decode();
  const scale = 2;
  const out = document.createElement('canvas');
  out.width = width * scale;
  out.height = height * scale;
  const g = out.getContext('2d');
  g.drawImage(img, 0, 0, out.width, out.height);
  const blob = await new Promise((resolve) => out.toBlob(resolve, 'image/png'));
  if (!blob) throw new Error('The ring could not be drawn as PNG.');
  return blob;
}

/** The file each `export --config` format is saved as. */
const CONFIG_FILES = {
  nginx: 'nginx-upstream.conf',
  haproxy: 'haproxy-backend.cfg',
  libmemcached: 'memcached-servers.txt',
  twemproxy: 'nutcracker.yml',
  envoy: 'envoy-cluster.json',
  cassandra: 'cassandra-initial-tokens.txt',
  'nodetool-ring': 'nodetool-ring.txt',
  'redis-nodes': 'cluster-nodes.txt',
  redis: 'redis-reshard.sh',
};

let configFormatPicked = false;

/**
 * Fills "Config for" from the server's list of export formats (GET
 * /api/config's "export_formats", the writers' own table), keeping the
 * choice; nothing to do while the list is the one shown.
 */
export function showConfigFormats(formats) {
  const select = $('export-config-format');
  if (!select || !Array.isArray(formats)) return;
  const now = [...select.options].map((o) => o.value).join('\n');
  if (now === formats.map((f) => f.format).join('\n')) return;
  const chosen = select.value;
  select.replaceChildren(...formats.map((f) => el('option', { value: f.format }, f.title)));
  if (formats.some((f) => f.format === chosen)) select.value = chosen;
}

/** Follows the algorithm in use with the "Config for" choice (not once the user chose). */
export function suggestConfigFormat(algorithm) {
  const select = $('export-config-format');
  const format = wordsFor(algorithm).config;
  if (!select || configFormatPicked || !format) return;
  select.value = format;
}

function setupExports(ring, getView) {
  const fail = (err) => setError('export-error', err.message);
  const bind = (id, fn) => $(id).addEventListener('click', () => {
    setError('export-error', '');
    $('export-status').textContent = '';
    Promise.resolve().then(fn).catch((err) => {
      $('export-status').textContent = '';
      fail(err);
    });
  });
  bind('export-nodes-csv', () => download('/api/nodes?format=csv', 'nodes.csv', 'text/csv', 'Nodes'));
  bind('export-nodes-json', () => download('/api/nodes', 'nodes.json', 'application/json', 'Nodes'));
  // Every key in one streamed answer (API.md version 3), however many.
  bind('export-keys-csv', () => download('/api/keys?format=csv', 'keys.csv', 'text/csv', 'Keys'));
  bind('export-keys-json', () => download('/api/export/keys?format=json', 'keys.json', 'application/json', 'Keys'));
  // The log and an operation's moves come in pages of 1,000: all of them are read.
  const logExport = (csv) => downloadPaged({
    csv,
    what: 'Operation log',
    field: 'operations',
    filename: csv ? 'operations.csv' : 'operations.json',
    first: (c) => `/api/operations?limit=1000${c ? '&format=csv' : ''}`,
    next: (c, _read, last) => {
      const id = c ? Number(String(last).split(',')[0]) : last.id;
      return `/api/operations?limit=1000&after=${id}${c ? '&format=csv' : ''}`;
    },
  });
  bind('export-log-csv', () => logExport(true));
  bind('export-log-json', () => logExport(false));
  const opPath = () => {
    const id = $('export-op-id').value.trim();
    if (!/^\d+$/.test(id)) throw new Error('Give the number of an operation (see History).');
    return `/api/operations/${id}`;
  };
  const movesExport = async (csv) => {
    const p = opPath();
    await downloadPaged({
      csv,
      what: `Moves of #${p.split('/').pop()}`,
      field: 'moves',
      filename: `moves-${p.split('/').pop()}.${csv ? 'csv' : 'json'}`,
      first: (c) => (c ? `${p}?format=csv` : p),
      next: (c, read) => `${p}?offset=${read}${c ? '&format=csv' : ''}`,
    });
  };
  bind('export-moves-csv', () => movesExport(true));
  bind('export-moves-json', () => movesExport(false));
  bind('export-scenario', () => download('/api/export/scenario', 'history.ringsim', 'text/plain'));
  // The nodes as the real system takes them (API.md version 3, `export
  // --config`): the server says why when a format cannot hold them.
  $('export-config-format').addEventListener('change', () => { configFormatPicked = true; });
  bind('export-config', () => {
    const format = $('export-config-format').value;
    return download(`/api/export/config?format=${encodeURIComponent(format)}`, CONFIG_FILES[format] || `${format}.txt`, 'text/plain', `Config for ${format}`);
  });
  bind('export-svg', async () => {
    saveBlob(new Blob([ringSvgText(ring, getView())], { type: 'image/svg+xml' }), 'ring.svg');
  });
  bind('export-png', async () => {
    saveBlob(await ringPngBlob(ring, getView()), 'ring.png');
  });
}

/** Wires the issue-9 panels to the page. */
export function setupLab({
  ring, placement, getView, confirmInPage,
}) {
  const preview = new Preview({ ring, placement });
  new Compare();
  const theory = { answer: null }; // the last answer of /api/theory
  $('theory-run').addEventListener('click', () => runTheory(theory, getView));
  setupTheoryViews();
  new ScenarioFiles({ confirmInPage });
  setupExports(ring, getView);
  return { preview, viewChanged: () => writeTheorySentence(theory, getView) };
}

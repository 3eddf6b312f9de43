// Look before you change (issue 9): preview of a change with a ghost on the
// ring, algorithms compared side by side, theory beside measurement, the
// server's scenario files run step by step or at once, and exports.
//
// Everything here goes through the same HTTP API as the controls; nothing a
// preview, a comparison or the theory asks is recorded. Text goes in through
// el()/textContent only; charts are SVG built with DOM APIs.

import { $, el, setError } from './dom.js';
import { formatInt, formatNumber, formatPercent } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const num = (x, d = 3) => (typeof x === 'number' && Number.isFinite(x) ? formatNumber(x, d) : '—');

/** Requests with the page's token; answers text (for downloads) or JSON. */
function tokenHeader() {
  try {
    const t = sessionStorage.getItem('ringsim-token');
    return t ? { Authorization: `Bearer ${t}` } : {};
  } catch {
    return {};
  }
}

async function rawJson(method, path, body, signal) {
  const init = { method, signal, headers: { Accept: 'application/json', ...tokenHeader() } };
  if (method !== 'GET') init.headers['Content-Type'] = 'application/json';
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!r.ok) {
    const message = data && data.error && data.error.message ? data.error.message : `${r.status} ${r.statusText}`;
    const err = new Error(message);
    err.status = r.status;
    err.body = data;
    throw err;
  }
  return data;
}

function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

/**
 * The text of a text answer (CSV, a scenario). The HTTP server of this
 * version sends such answers wrapped as JSON {"content_type", "text"}; the
 * page takes the text out, and takes a plain answer as it is.
 */
function unwrapText(response, text) {
  if (!/json/.test(response.headers.get('Content-Type') || '')) return text;
  try {
    const data = JSON.parse(text);
    if (data && typeof data.text === 'string' && typeof data.content_type === 'string') return data.text;
  } catch { /* not JSON after all */ }
  return text;
}

async function download(path, filename, type) {
  const r = await fetch(path, { headers: tokenHeader() });
  const text = await r.text();
  if (!r.ok) throw new Error(`${r.status}: ${text.slice(0, 200)}`);
  saveBlob(new Blob([unwrapText(r, text)], { type }), filename);
}

// ---- preview -------------------------------------------------------------------

function countsList(entries) {
  if (!entries || !entries.length) return el('span', { className: 'muted' }, 'none');
  return el('ul', { className: 'plain' }, entries.map((e) => el('li', null, `${e.node}: ${formatInt(e.keys)}`)));
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

  async ask(op) {
    const body = this.body(op);
    if (!body) return;
    setError('preview-error', '');
    $('preview-panel').hidden = false;
    $('preview-summary').textContent = 'Working out what would happen…';
    try {
      const answer = await rawJson('POST', '/api/preview', body);
      this.pending = body;
      this.show(body, answer);
    } catch (err) {
      this.pending = null;
      $('preview-summary').textContent = '';
      $('preview-body').replaceChildren();
      $('preview-apply').disabled = true;
      setError('preview-error', err.message);
    }
    $('preview-heading').scrollIntoView({ block: 'nearest' });
  }

  describe(body) {
    if (body.op === 'add_node') return `add node ${body.name}${body.weight !== undefined ? ` (weight ${body.weight})` : ''}`;
    if (body.op === 'remove_node') return `remove node ${body.name}`;
    const parts = [`algorithm ${body.algorithm}`];
    if (body.params) for (const [k, v] of Object.entries(body.params)) parts.push(`${k} ${v}`);
    if (body.replicas !== undefined) parts.push(`replicas ${body.replicas}`);
    return `configure ${parts.join(', ')}`;
  }

  show(body, a) {
    const what = this.describe(body);
    $('preview-summary').textContent = `If you ${what}: ${formatInt(a.keys_moved)} keys would move, ${formatInt(a.replica_moves)} replica moves. Nothing has changed yet.`;
    $('preview-summary').dataset.keysMoved = String(a.keys_moved);
    $('preview-summary').dataset.replicaMoves = String(a.replica_moves);
    const sample = (a.sample || []).slice(0, 20);
    $('preview-body').replaceChildren(
      el('div', { className: 'preview-flows' }, [
        el('div', null, [el('h3', null, 'Would move from'), countsList(a.moved_from)]),
        el('div', null, [el('h3', null, 'Would move to'), countsList(a.moved_to)]),
      ]),
      statsTable(a.before, a.after),
      el('h3', null, `Sample of moved keys (${formatInt(sample.length)} of ${formatInt(a.keys_moved)})`),
      sample.length
        ? el('ul', { className: 'plain sample', id: 'preview-sample', tabIndex: 0, 'aria-label': 'Sample of moved keys' }, sample.map((s) => el('li', null, `${s.key}: ${s.from ?? 'none'} → ${s.to ?? 'none'}`)))
        : el('p', { className: 'muted small' }, 'No key would move.'),
    );
    $('preview-apply').disabled = false;
    $('preview-apply').textContent = `Apply: ${what}`;
    // The ghost: a marked banner over the ring and the flows of the sample.
    const ghost = $('ring-ghost');
    ghost.hidden = false;
    const from = (a.moved_from || []).map((e) => `${e.node} (${formatInt(e.keys)})`).join(', ');
    const to = (a.moved_to || []).map((e) => `${e.node} (${formatInt(e.keys)})`).join(', ');
    ghost.textContent = `Preview, not applied — ${what}: ${formatInt(a.keys_moved)} keys would move${from ? ` from ${from}` : ''}${to ? ` to ${to}` : ''}.`;
    const pairs = new Map();
    for (const s of a.sample || []) {
      if (!s.from || !s.to) continue;
      const k = `${s.from}\u0000${s.to}`;
      pairs.set(k, { from: s.from, to: s.to, keys: (pairs.get(k)?.keys || 0) + 1 });
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
        await rawJson('POST', '/api/nodes', body.weight === undefined ? { name: body.name } : { name: body.name, weight: body.weight });
      } else if (body.op === 'remove_node') {
        await rawJson('DELETE', `/api/nodes/${encodeURIComponent(body.name)}`);
      } else {
        const config = { ...body };
        delete config.op;
        await rawJson('PUT', '/api/config', config);
      }
      this.clear();
    } catch (err) {
      button.disabled = false;
      setError('preview-error', err.message);
    }
  }

  clear() {
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
  const h = rowH * results.length + 24;
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
      const answer = await rawJson('GET', algorithms ? `/api/compare?algorithms=${encodeURIComponent(algorithms)}` : '/api/compare', undefined, this.abort.signal);
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
    const body = $('compare-body');
    body.replaceChildren(...results.map((r) => {
      const st = r.stats || {};
      const switchButton = r.current
        ? el('span', { className: 'muted small' }, 'in use')
        : el('button', { type: 'button', className: 'mutating secondary small', 'aria-label': `Switch to ${r.algorithm}` }, 'Switch');
      if (!r.current) {
        switchButton.addEventListener('click', async () => {
          switchButton.disabled = true;
          try {
            await rawJson('PUT', '/api/config', { algorithm: r.algorithm });
            await this.run();
          } catch (err) {
            switchButton.disabled = false;
            setError('compare-error', err.message);
          }
        });
      }
      return el('tr', { className: r.current ? 'current' : '', dataset: { algorithm: r.algorithm } }, [
        el('th', { scope: 'row' }, [r.algorithm, r.current ? el('strong', { className: 'tag' }, ' (current)') : null]),
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
    $('compare-charts').replaceChildren(
      barChart(results, 'structural_max_over_mean', 'Structural max / mean (1 is perfect)', 'compare-chart-balance'),
      barChart(results.map((r) => ({ ...r, max_over_mean: r.stats ? r.stats.max_over_mean : 0 })), 'max_over_mean', 'Measured max / mean of the keys', 'compare-chart-keys'),
      barChart(results, 'moves_if_added', 'Keys moved if a node joined', 'compare-chart-moves'),
    );
  }
}

// ---- theory --------------------------------------------------------------------

function theoryChart(answer) {
  const w = 520;
  const h = 280;
  const m = { l: 46, r: 110, t: 14, b: 34 };
  const pts = answer.points || [];
  const algs = answer.algorithms || [];
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
  chart.appendChild(svg('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label' }, 'points per node (log scale)'));
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
  // Each algorithm's structural value: a short mark at the right edge.
  const seen = [];
  for (const a of algs) {
    if (!Number.isFinite(a.structural_max_over_mean)) continue;
    const yy = y(a.structural_max_over_mean);
    chart.appendChild(svg('line', { x1: w - m.r - 8, x2: w - m.r, y1: yy, y2: yy, class: 'alg-mark' }));
    let ty = yy + 4;
    while (seen.some((s) => Math.abs(s - ty) < 10)) ty += 10;
    seen.push(ty);
    chart.appendChild(svg('text', { x: w - m.r + 4, y: ty, class: 'chart-label' }, `${a.algorithm} ${formatNumber(a.structural_max_over_mean, 2)}`));
  }
  return chart;
}

async function runTheory() {
  const nodes = $('theory-nodes').value.trim();
  setError('theory-error', '');
  $('theory-status').textContent = 'Measuring… (a few seconds)';
  $('theory-run').disabled = true;
  try {
    const answer = await rawJson('GET', nodes ? `/api/theory?nodes=${encodeURIComponent(nodes)}` : '/api/theory');
    $('theory-status').textContent = `${formatInt(answer.nodes)} nodes, measured over ${formatInt(answer.sample_keys)} keys.`;
    $('theory-chart-box').replaceChildren(
      theoryChart(answer),
      el('p', { className: 'legend muted small' }, [
        el('span', { className: 'swatch swatch-expected' }), ' expected 1 + √(2 ln N / V) ',
        el('span', { className: 'swatch swatch-measured' }), ' measured ring ',
        el('span', { className: 'swatch swatch-alg' }), ' each algorithm (right edge)',
      ]),
    );
    $('theory-sentence').textContent = answer.sentence || '';
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

class ScenarioFiles {
  constructor() {
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
      const answer = await rawJson('GET', '/api/scenarios');
      const select = $('scenario-list');
      select.replaceChildren(...(answer.scenarios || []).map((s) => el('option', { value: s.name }, `${s.title} (${s.name})`)));
    } catch (err) {
      setError('scenario-file-error', err.message);
    }
  }

  async loadBuiltin() {
    const name = $('scenario-list').value;
    if (!name) return;
    try {
      const answer = await rawJson('GET', `/api/scenarios/${encodeURIComponent(name)}`);
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
    if (step.kind === 'expect') detail = ok ? `holds (${step.actual})` : `FAILED: ${step.stat} is ${step.actual}, expected ${step.op} ${step.value}`;
    else if (step.operation) detail = `operation ${step.operation.id}: ${step.operation.keys_moved} keys moved`;
    return el('li', { className: ok ? 'ok' : 'failed', dataset: { line: String(step.line) } },
      [el('code', null, `${step.line}: ${step.text.trim()}`), ' — ', detail]);
  }

  failItem(line, text, message) {
    return el('li', { className: 'failed', dataset: { line: String(line) } }, [el('code', null, `${line}: ${String(text).trim()}`), ' — FAILED: ', message]);
  }

  async runAll() {
    const text = $('scenario-text').value;
    setError('scenario-file-error', '');
    $('scenario-results').replaceChildren();
    $('scenario-status').textContent = 'Running…';
    try {
      const report = await rawJson('POST', '/api/scenarios/run', { text, name: this.name || 'pasted.ringsim' });
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
        $('scenario-results').appendChild(this.failItem(f.line, f.text, f.message));
      }
      $('scenario-status').textContent = '';
      setError('scenario-file-error', `Stopped at line ${f.line} (${String(f.text).trim()}): ${f.message}`);
    }
  }

  error(err) {
    $('scenario-status').textContent = '';
    const line = err.body && err.body.error && err.body.error.line;
    setError('scenario-file-error', line ? `Line ${line}: ${err.message}` : err.message);
  }

  async step() {
    const text = $('scenario-text').value;
    setError('scenario-file-error', '');
    if (!this.steps) {
      // Every line is checked before the first step runs.
      try {
        await rawJson('POST', '/api/scenarios/run', { text, check: true });
      } catch (err) {
        this.error(err);
        return;
      }
      this.steps = scenarioLines(text);
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
      const report = await rawJson('POST', '/api/scenarios/run', { text: lineText, name: this.name || 'pasted.ringsim' });
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

function ringSvgFrom(ring, nodeColour) {
  const size = 600;
  const c = size / 2;
  const R = 240;
  const doc = svg('svg', { xmlns: SVG, width: size, height: size, viewBox: `0 0 ${size} ${size}` });
  doc.appendChild(svg('rect', { x: 0, y: 0, width: size, height: size, fill: '#ffffff' }));
  doc.appendChild(svg('circle', { cx: c, cy: c, r: R, fill: 'none', stroke: '#cccccc', 'stroke-width': 2 }));
  const space = Number(ring.space) || 2 ** 32;
  const pt = (pos, r) => {
    const a = (pos / space) * 2 * Math.PI - Math.PI / 2;
    return [c + r * Math.cos(a), c + r * Math.sin(a)];
  };
  const arc = (from, to, node) => {
    let span = to - from;
    if (span <= 0) span += space;
    const [x1, y1] = pt(from, R);
    const [x2, y2] = pt(from + span, R);
    const large = span > space / 2 ? 1 : 0;
    doc.appendChild(svg('path', { d: `M${x1.toFixed(2)},${y1.toFixed(2)} A${R},${R} 0 ${large} 1 ${x2.toFixed(2)},${y2.toFixed(2)}`, fill: 'none', stroke: nodeColour(node), 'stroke-width': 16 }));
  };
  const points = ring.points || [];
  if (points.length) {
    for (let i = 0; i < points.length; i++) {
      const prev = points[(i + points.length - 1) % points.length];
      if (points.length === 1) {
        doc.appendChild(svg('circle', { cx: c, cy: c, r: R, fill: 'none', stroke: nodeColour(points[0].node), 'stroke-width': 16 }));
      } else {
        arc(Number(prev.position), Number(points[i].position), points[i].node);
      }
    }
    for (const p of points) {
      const [x1, y1] = pt(Number(p.position), R - 14);
      const [x2, y2] = pt(Number(p.position), R + 14);
      doc.appendChild(svg('line', { x1, y1, x2, y2, stroke: '#222222', 'stroke-width': 1 }));
    }
  } else {
    for (const run of ring.runs || ring.slots || ring.ranges || []) {
      arc(Number(run.first), Number(run.last) + 1, run.node);
    }
  }
  doc.appendChild(svg('text', { x: c, y: c, 'text-anchor': 'middle', 'font-family': 'sans-serif', 'font-size': 16 }, `${ring.algorithm || ''}`));
  return new XMLSerializer().serializeToString(doc);
}

function setupExports(nodeColour) {
  const fail = (err) => setError('export-error', err.message);
  const bind = (id, fn) => $(id).addEventListener('click', () => { setError('export-error', ''); fn().catch(fail); });
  for (const [id, path, name] of [
    ['export-nodes', '/api/nodes', 'nodes'],
    ['export-keys', '/api/keys?limit=100000', 'keys'],
    ['export-log', '/api/operations?limit=1000', 'operations'],
  ]) {
    bind(`${id}-csv`, () => download(`${path}${path.includes('?') ? '&' : '?'}format=csv`, `${name}.csv`, 'text/csv'));
    bind(`${id}-json`, () => download(path, `${name}.json`, 'application/json'));
  }
  const opPath = () => {
    const id = $('export-op-id').value.trim();
    if (!/^\d+$/.test(id)) throw new Error('Give the number of an operation (see History).');
    return `/api/operations/${id}`;
  };
  bind('export-moves-csv', async () => { const p = opPath(); await download(`${p}?format=csv`, `moves-${p.split('/').pop()}.csv`, 'text/csv'); });
  bind('export-moves-json', async () => { const p = opPath(); await download(p, `moves-${p.split('/').pop()}.json`, 'application/json'); });
  bind('export-scenario', () => download('/api/export/scenario', 'history.ringsim', 'text/plain'));
  bind('export-svg', async () => {
    const ring = await rawJson('GET', '/api/ring');
    saveBlob(new Blob([ringSvgFrom(ring, (n) => nodeColour(n))], { type: 'image/svg+xml' }), 'ring.svg');
  });
  bind('export-png', async () => {
    const base = $('ring-base');
    const out = document.createElement('canvas');
    out.width = base.width;
    out.height = base.height;
    const g = out.getContext('2d');
    g.fillStyle = getComputedStyle(document.body).backgroundColor || '#ffffff';
    g.fillRect(0, 0, out.width, out.height);
    g.drawImage(base, 0, 0);
    g.drawImage($('ring-overlay'), 0, 0);
    const blob = await new Promise((resolve) => out.toBlob(resolve, 'image/png'));
    if (!blob) throw new Error('The ring could not be drawn as PNG.');
    saveBlob(blob, 'ring.png');
  });
}

/** Wires the issue-9 panels to the page. */
export function setupLab({ ring, placement, nodeColour }) {
  const preview = new Preview({ ring, placement });
  new Compare();
  $('theory-run').addEventListener('click', runTheory);
  new ScenarioFiles();
  setupExports(nodeColour);
  return { preview };
}

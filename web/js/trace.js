// Your own traffic (issue 29): a request log uploaded to POST /api/trace and
// replayed through the current placement, recorded nowhere. The panel shows
// the upload's progress, then a table of each node's requests, load against
// its fair share and hit ratio, and a chart of the series -- requests per
// interval and, with a cache, the hit ratio -- with the change marked where
// it came; the report downloads as CSV (one row a node) or JSON (the whole
// answer). Names go in through textContent only; the chart is SVG built
// with DOM APIs.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { cutText, formatInt, formatNumber, formatPercent } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

const num = (x, d = 3) => (typeof x === 'number' && Number.isFinite(x) ? formatNumber(x, d) : '—');
const pct = (x) => (typeof x === 'number' && Number.isFinite(x) ? formatPercent(x, 1) : '—');

/** A time of the log's clock in words (UTC), or a request number. */
function clockWords(x, byTime) {
  if (!byTime) return `request ${formatInt(x)}`;
  const d = new Date(x * 1000);
  return Number.isNaN(d.getTime()) ? String(x) : d.toISOString().replace('.000Z', 'Z');
}

/** One RFC 4180 field. */
function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  const quote = ['"', ',', '\r', '\n'].some((c) => s.includes(c));
  return quote ? `"${s.split('"').join('""')}"` : s;
}

export function traceCsv(answer) {
  const cols = ['name', 'state', 'added', 'requests', 'bytes', 'unique_keys', 'peak_rate', 'fair_share', 'load_over_fair', 'hits', 'hit_ratio'];
  const rows = [cols.join(',')];
  for (const n of answer.nodes || []) rows.push(cols.map((c) => csvField(n[c])).join(','));
  return `${rows.join('\r\n')}\r\n`;
}

/** The series chart: requests per interval, hit ratio, the changes marked. */
function seriesChart(answer) {
  const series = answer.series || { points: [] };
  const pts = series.points || [];
  const w = 640;
  const h = 240;
  const m = { l: 58, r: 48, t: 24, b: 34 };
  const n = Math.max(1, pts.length);
  const x = (i) => m.l + (i / n) * (w - m.l - m.r);
  const maxReq = Math.max(1, ...pts.map((p) => p.requests));
  const yReq = (v) => m.t + (1 - v / maxReq) * (h - m.t - m.b);
  const yHit = (v) => m.t + (1 - v) * (h - m.t - m.b);
  const byTime = series.by === 'time';
  const chart = svg('svg', {
    viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', id: 'trace-series', class: 'trace-chart',
    'aria-label': `Requests per interval${answer.cache ? ' and hit ratio' : ''} over the log, changes marked`,
  });
  chart.appendChild(svg('title', {}, 'Requests per interval over the log'));
  chart.appendChild(svg('text', { x: m.l, y: 15, class: 'chart-title' }, `Per ${Number((series.interval || 0).toPrecision(6))} ${byTime ? 's' : 'requests'}`));
  chart.appendChild(svg('line', { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, class: 'axis' }));
  chart.appendChild(svg('line', { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, class: 'axis' }));
  for (let i = 0; i <= 4; i++) {
    const v = (maxReq * i) / 4;
    chart.appendChild(svg('text', { x: m.l - 4, y: yReq(v) + 4, 'text-anchor': 'end', class: 'chart-label' }, formatInt(Math.round(v))));
    if (answer.cache) chart.appendChild(svg('text', { x: w - m.r + 4, y: yHit(i / 4) + 4, class: 'chart-label hit-label' }, `${i * 25}%`));
  }
  if (pts.length) {
    chart.appendChild(svg('text', { x: m.l, y: h - m.b + 14, class: 'chart-label' }, clockWords(pts[0].start, byTime)));
    chart.appendChild(svg('text', { x: w - m.r, y: h - m.b + 14, 'text-anchor': 'end', class: 'chart-label' }, clockWords(pts[pts.length - 1].start, byTime)));
  }
  const line = (values, cls, y) => {
    const d = values.map((v, i) => (v === null ? '' : `${i && values[i - 1] !== null ? 'L' : 'M'}${x(i + 0.5).toFixed(1)},${y(v).toFixed(1)}`)).join(' ');
    chart.appendChild(svg('path', { d, class: cls }));
  };
  line(pts.map((p) => p.requests), 'series requests', yReq);
  if (answer.cache) line(pts.map((p) => (typeof p.hit_ratio === 'number' ? p.hit_ratio : null)), 'series hits', yHit);
  const interval = series.interval || 1;
  for (const c of answer.changes || []) {
    if (!c.applied) continue;
    const at = byTime ? c.time : c.request;
    if (typeof at !== 'number' || !pts.length) continue;
    const i = (at - series.start) / interval;
    const cx = x(Math.max(0, Math.min(n, i)));
    const mark = svg('g', { class: 'change-mark' });
    mark.appendChild(svg('line', { x1: cx, y1: m.t, x2: cx, y2: h - m.b }));
    mark.appendChild(svg('text', { x: cx + 4, y: m.t + 10, class: 'chart-label' }, cutText(c.op, 40)));
    mark.appendChild(svg('title', {}, `${c.op}: before request ${formatInt(c.request)}`));
    chart.appendChild(mark);
  }
  return chart;
}

function nodesTable(answer) {
  const table = $('trace-nodes');
  table.replaceChildren();
  const cache = Boolean(answer.cache);
  const head = ['Node', 'Requests', 'Share', 'Load / fair', 'Distinct keys', 'Peak / s'];
  if (cache) head.push('Hit ratio');
  table.appendChild(el('thead', null, [el('tr', null, head.map((t) => el('th', { scope: 'col' }, t)))]));
  const body = el('tbody');
  const total = answer.requests || 0;
  for (const n of answer.nodes || []) {
    const cells = [
      el('th', { scope: 'row' }, `${cutText(n.name, 40)}${n.added ? ' (added)' : ''}${n.state !== 'up' ? ` (${n.state})` : ''}`),
      el('td', { className: 'num' }, formatInt(n.requests)),
      el('td', { className: 'num' }, pct(total ? n.requests / total : null)),
      el('td', { className: 'num', dataset: { field: 'load_over_fair' } }, num(n.load_over_fair)),
      el('td', { className: 'num' }, formatInt(n.unique_keys)),
      el('td', { className: 'num' }, n.peak_rate === null ? '—' : formatInt(n.peak_rate)),
    ];
    if (cache) cells.push(el('td', { className: 'num', dataset: { field: 'hit_ratio' } }, pct(n.hit_ratio)));
    body.appendChild(el('tr', { dataset: { node: n.name } }, cells));
  }
  table.appendChild(body);
}

function summaryWords(answer) {
  const parts = [`${answer.format}${answer.compression !== 'none' ? ` (${answer.compression})` : ''}`,
    `${formatInt(answer.requests)} requests`, `${formatInt(answer.unique_keys)} distinct keys${answer.unique_keys_estimated ? ' (estimated)' : ''}`,
    `max / mean ${num(answer.max_over_mean)} against fair shares`];
  if (answer.cache) parts.push(`hit ratio ${pct(answer.hit_ratio)} with ${formatInt(answer.cache.size)} ${answer.cache.unit} a node`);
  if (answer.unserved) parts.push(`${formatInt(answer.unserved)} unserved (no node could serve their keys)`);
  if (answer.bad_lines) parts.push(`${formatInt(answer.bad_lines)} bad lines skipped (the first is line ${formatInt(answer.first_bad_line)})`);
  let s = `${parts.join(' · ')}. Nothing was recorded.`;
  if (answer.note) s += ` ${answer.note}.`;
  return s;
}

class Trace {
  constructor() {
    this.answer = null;
    $('trace-run').addEventListener('click', () => this.run());
    $('trace-cancel').addEventListener('click', () => { if (this.abort) this.abort.abort(); });
    $('trace-export-json').addEventListener('click', () => {
      if (this.answer) saveBlob(new Blob([`${JSON.stringify(this.answer, null, 2)}\n`], { type: 'application/json' }), 'ringsim-trace.json');
    });
    $('trace-export-csv').addEventListener('click', () => {
      if (this.answer) saveBlob(new Blob([traceCsv(this.answer)], { type: 'text/csv' }), 'ringsim-trace.csv');
    });
  }

  params() {
    const p = {};
    const format = $('trace-format').value;
    if (format !== 'auto') p.trace_format = format;
    const col = $('trace-key-col').value.trim();
    if (col) p.key_col = col;
    const cache = $('trace-cache').value.trim();
    if (cache) p.cache = cache;
    const at = $('trace-change-at').value.trim();
    const op = $('trace-change-op').value.trim();
    if (at || op) p.change = `${at} ${op}`;
    return p;
  }

  async run() {
    const file = $('trace-file').files[0];
    setError('trace-error', '');
    if (!file) {
      setError('trace-error', 'Choose a request log first.', $('trace-file'));
      return;
    }
    const button = $('trace-run');
    const status = $('trace-status');
    const bar = $('trace-progress');
    button.disabled = true;
    bar.hidden = false;
    bar.max = Math.max(1, file.size);
    bar.value = 0;
    $('trace-cancel').hidden = false;
    this.abort = new AbortController();
    status.textContent = `Sending ${formatInt(file.size)} bytes…`;
    const t0 = performance.now();
    try {
      const answer = await api.trace(file, this.params(), {
        signal: this.abort.signal,
        onProgress: (sent, total, done) => {
          if (done) {
            bar.removeAttribute('value'); // the replay: indeterminate
            status.textContent = 'Replaying…';
          } else {
            bar.value = sent;
            const s = (performance.now() - t0) / 1000;
            status.textContent = `Sent ${formatPercent(total ? sent / total : 0, 0)} (${formatInt(sent)} of ${formatInt(total)} bytes${s > 0.5 ? `, ${formatInt(Math.round(sent / s))} bytes/s` : ''})`;
          }
        },
      });
      this.show(answer);
      status.textContent = `Replayed ${formatInt(answer.requests)} requests in ${formatNumber((performance.now() - t0) / 1000, 2)} s.`;
    } catch (err) {
      if (err && err.name === 'AbortError') status.textContent = 'Stopped.';
      else {
        status.textContent = '';
        setError('trace-error', err.message || String(err));
      }
    } finally {
      button.disabled = false;
      bar.hidden = true;
      $('trace-cancel').hidden = true;
      this.abort = null;
    }
  }

  show(answer) {
    this.answer = answer;
    $('trace-result').hidden = false;
    $('trace-summary').textContent = summaryWords(answer);
    nodesTable(answer);
    const legend = el('p', { className: 'muted small' }, answer.cache
      ? 'Solid: requests per interval (left scale). Dashed: the hit ratio of the caches (right scale). Red: a change.'
      : 'Requests per interval. Red: a change. Give a cache to see the hit ratio and the miss spike.');
    $('trace-chart').replaceChildren(seriesChart(answer), legend);
  }
}

export function setupTrace() {
  return new Trace();
}

// load.js - requests beside keys (docs/api.md "Version 3: traffic"): the
// load view (each node's share of requests, their max/mean and cv, the
// bound no placement can beat, the hottest keys), the workload form, the
// ring shaded by requests, and an operation's requests_moved in words.
//
// Hooks: main.js calls renderLoad() after the statistics, requestsSentence()
// for "What moved", and setupLoad() once; ring.js reads ring.loadBy.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { displayName, formatNumber, formatPercent, nodeColour, shareDigits } from './format.js';

const BAR_LIMIT = 40;

/** "adding cache-4 sends 23.4% of requests to a cold server", from the operation. */
export function requestsSentence(op) {
  if (!op || typeof op.requests_moved !== 'number' || !op.keys_moved) return '';
  const share = formatPercent(op.requests_moved, 1);
  const name = displayName(op.subject);
  if (op.type === 'add_node') return `Adding ${name} sends ${share} of requests to a cold server.`;
  if (op.type === 'remove_node') return `Removing ${name} sends ${share} of requests to servers that do not hold their keys.`;
  return `This change sends ${share} of requests to a server that does not hold their keys (a cache misses them once).`;
}

function describeWorkload(w) {
  if (!w) return '';
  const sizes = w.sizes && w.sizes.kind !== 'fixed' ? `, sizes ${w.sizes.kind}` : w.sizes && w.sizes.bytes !== 1 ? `, ${w.sizes.bytes} bytes a key` : '';
  if (w.kind === 'zipf') return `Zipf s = ${w.s}, ${w.order} order${sizes}`;
  if (w.kind === 'hotspot') return `hotspot: ${formatPercent(w.hot_fraction, 1)} of keys take ${formatPercent(w.hot_share, 1)} of requests (${w.order} order)${sizes}`;
  if (w.kind === 'keys') return `${w.keys.length} listed ${w.keys.length === 1 ? 'key' : 'keys'}, the rest equal${sizes}`;
  return `uniform: every key the same share${sizes}`;
}

/**
 * Each key's share of requests by rank (1 = hottest) for a workload over n
 * keys, as API.md version 3 defines the kinds: a function r -> share and
 * the sum of the k hottest. Exact (no sampling).
 */
function rankShares(w, n) {
  if (!w || n <= 0) return null;
  if (w.kind === 'zipf') {
    const s = Number(w.s);
    let h = 0;
    const prefix = new Float64Array(n + 1);
    for (let r = 1; r <= n; r++) { h += r ** -s; prefix[r] = h; }
    return { at: (r) => (r ** -s) / h, top: (k) => prefix[Math.min(n, k)] / h };
  }
  if (w.kind === 'hotspot') {
    const hot = Math.max(1, Math.floor(w.hot_fraction * n));
    const a = hot ? w.hot_share / hot : 0;
    const b = n > hot ? (1 - w.hot_share) / (n - hot) : 0;
    const [hi, lo, nh] = a >= b ? [a, b, hot] : [b, a, n - hot];
    return { at: (r) => (r <= nh ? hi : lo), top: (k) => Math.min(k, nh) * hi + Math.max(0, k - nh) * lo };
  }
  if (w.kind === 'keys' && Array.isArray(w.keys)) {
    const listed = w.keys.map((k) => k.share);
    const rest = n > listed.length ? (1 - listed.reduce((t, x) => t + x, 0)) / (n - listed.length) : 0;
    const all = [...listed];
    const sorted = all.sort((x, y) => y - x);
    const at = (r) => { const restRank = sorted.findIndex((x) => x < rest); const cut = restRank < 0 ? sorted.length : restRank; return r <= cut ? sorted[r - 1] : (r <= cut + n - sorted.length ? rest : sorted[r - 1 - (n - sorted.length)]); };
    return { at, top: (k) => { let t = 0; for (let r = 1; r <= Math.min(k, n); r++) t += at(r); return t; } };
  }
  return { at: () => 1 / n, top: (k) => Math.min(k, n) / n };
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svgEl(name, attrs, text) {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Rank against share on log-log axes: how skewed the workload is. */
function rankChart(shares, n) {
  const w = 420;
  const h = 200;
  const m = { l: 60, r: 12, t: 10, b: 36 };
  const ranks = [];
  for (let r = 1; r <= n; r = Math.max(r + 1, Math.ceil(r * 1.25))) ranks.push(r);
  if (ranks[ranks.length - 1] !== n) ranks.push(n);
  const vals = ranks.map((r) => shares.at(r)).filter((v) => v > 0);
  const ymax = Math.log10(Math.max(...vals));
  const ymin = Math.min(ymax - 1, Math.log10(Math.min(...vals)));
  const xmax = Math.max(1, Math.log10(n));
  const x = (r) => m.l + (Math.log10(r) / xmax) * (w - m.l - m.r);
  const y = (v) => m.t + ((ymax - Math.log10(v)) / (ymax - ymin)) * (h - m.t - m.b);
  const chart = svgEl('svg', { viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', id: 'workload-rank-chart', class: 'theory-chart rank-chart', 'aria-label': 'Each key’s share of requests against its rank, log-log' });
  chart.appendChild(svgEl('line', { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, class: 'axis' }));
  chart.appendChild(svgEl('line', { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, class: 'axis' }));
  chart.appendChild(svgEl('path', { d: ranks.filter((r) => shares.at(r) > 0).map((r, i) => `${i ? 'L' : 'M'}${x(r).toFixed(1)},${y(shares.at(r)).toFixed(1)}`).join(' '), class: 'curve measured' }));
  chart.appendChild(svgEl('text', { x: m.l, y: h - m.b + 14, 'text-anchor': 'middle', class: 'chart-label' }, '1'));
  chart.appendChild(svgEl('text', { x: w - m.r, y: h - m.b + 14, 'text-anchor': 'end', class: 'chart-label' }, n.toLocaleString('en-US')));
  chart.appendChild(svgEl('text', { x: m.l - 4, y: m.t + 8, 'text-anchor': 'end', class: 'chart-label' }, formatPercent(10 ** ymax, 2)));
  chart.appendChild(svgEl('text', { x: m.l - 4, y: h - m.b, 'text-anchor': 'end', class: 'chart-label' }, formatPercent(10 ** ymin, 4)));
  chart.appendChild(svgEl('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label axis-label' }, 'key rank, hottest first (log)'));
  chart.appendChild(svgEl('text', { x: 11, y: (m.t + h - m.b) / 2, 'text-anchor': 'middle', class: 'chart-label axis-label', transform: `rotate(-90 11 ${(m.t + h - m.b) / 2})` }, 'share (log)'));
  return chart;
}

let hotGeneration = 0;

/** Who serves a key: its node, "no live replica", and the owner when it is down. */
function servedText(node, served) {
  if (served === null) return `no live replica${node ? ` (owner ${displayName(node)} is down)` : ''}`;
  return `${displayName(served)}${node && served !== node ? ` (owner ${displayName(node)} is down)` : ''}`;
}

/** The answer's hottest keys (requests.hottest_keys) as a small table. */
function hottestTable(list) {
  const name = (x) => el('span', { className: 'name', title: x }, x);
  return el('table', { className: 'data compact', id: 'workload-hottest-keys' }, [
    el('caption', { className: 'visually-hidden' }, `The ${list.length} hottest keys and the nodes that serve them`),
    el('thead', null, el('tr', null, [
      el('th', { scope: 'col', className: 'num' }, '#'), el('th', { scope: 'col' }, 'Hottest keys'),
      el('th', { scope: 'col', className: 'num' }, 'Requests'), el('th', { scope: 'col' }, 'Served by'),
    ])),
    el('tbody', null, list.map((h, i) => el('tr', { dataset: { key: h.key } }, [
      el('td', { className: 'num' }, String(i + 1)),
      el('td', { dataset: { col: 'key' } }, name(displayName(h.key))),
      el('td', { className: 'num' }, formatPercent(h.share, 2)),
      el('td', { dataset: { col: 'node' }, className: h.served_by === null ? 'no-replica' : null }, name(servedText(h.node, h.served_by))),
    ]))),
  ]);
}

/** The workload view: rank against share, the hottest 1%, the hottest keys and their nodes. */
async function renderWorkloadView(w, stats, at) {
  const box = $('load-workload-view');
  if (!box) return;
  const n = stats.keys || 0;
  const shares = rankShares(w, n);
  if (!shares) { box.replaceChildren(); return; }
  const k = Math.max(1, Math.floor(n / 100));
  const hot = stats.requests && stats.requests.hottest_key;
  const list = stats.requests && Array.isArray(stats.requests.hottest_keys) ? stats.requests.hottest_keys : null;
  const line = el('p', { className: 'small', id: 'workload-top' }, `The hottest 1% of keys (${k.toLocaleString('en-US')} of ${n.toLocaleString('en-US')}) take ${formatPercent(shares.top(k), 1)} of requests; the hottest 10% take ${formatPercent(shares.top(Math.max(1, Math.floor(n / 10))), 1)}.`);
  const hotText = (node, served) => `Hottest key: ${displayName(hot.key)} · ${formatPercent(hot.share, 2)} of requests${served === undefined ? '' : `, on ${servedText(node, served)}`}.`;
  // the answer names each key's nodes: no lookup when it lists the hottest
  const first = list && list.length && hot && list[0].key === hot.key ? list[0] : null;
  const hotLine = el('p', { className: 'small', id: 'workload-hottest' }, hot ? hotText(first && first.node, first ? first.served_by : undefined) : '');
  box.replaceChildren(line, rankChart(shares, n), hotLine, list && list.length ? hottestTable(list) : '');
  if (!hot || first) return;
  const mine = ++hotGeneration;
  try {
    const l = await api.lookup(hot.key, at);
    if (mine !== hotGeneration) return;
    hotLine.textContent = hotText(l.node, l.served_by === undefined ? l.node : l.served_by);
  } catch { /* the line stays without its node */ }
}

/** The load view from GET /api/stats (and the workload of the same moment). */
export async function renderLoad(stats, at, dark) {
  const rq = stats.requests;
  if (!rq) return;
  $('load-set').disabled = at !== undefined; // the past is read-only
  let w = null;
  try {
    w = await api.workload(at);
  } catch {
    w = null;
  }
  $('load-workload').textContent = w ? describeWorkload(w) : '';
  renderWorkloadView(w, stats, at);
  if (w && !$('load-form').contains(document.activeElement)) fillForm(w);
  const hot = rq.hottest_key;
  const numbers = [
    ['Max / mean', formatNumber(rq.max_over_mean, 3), 'the busiest node’s requests against its fair share'],
    ['CV', formatNumber(rq.cv, 3), 'std dev ÷ mean of the nodes’ requests'],
    ['Bound', formatNumber(rq.bound, 3), 'max(1, the hottest key’s share ÷ the largest fair share): no placement does better while a key lives on one node'],
    ['Hottest key', hot ? `${displayName(hot.key)} · ${formatPercent(hot.share, 2)}` : '—', 'the key with the largest share of requests'],
  ];
  const un = stats.unavailable;
  if (un && un.keys > 0) numbers.push(['Unserved', `${formatPercent(un.requests_share ?? 0, 1)} of requests`, 'requests for keys with no live replica']);
  $('load-numbers').replaceChildren(...numbers.map(([k, v, help]) => el('div', { title: help }, [el('dt', null, k), el('dd', null, v)])));
  let per = stats.per_node || [];
  const ideal = per.length ? 1 / per.length : 0;
  const fair = (p) => (p.fair_share === undefined ? ideal : (p.fair_share ?? 0));
  const digits = shareDigits(per.length);
  if (per.length > BAR_LIMIT) per = [...per].sort((a, b) => (b.requests || 0) - (a.requests || 0)).slice(0, BAR_LIMIT);
  let scale = Math.max(ideal, ...per.map(fair));
  for (const p of per) scale = Math.max(scale, p.requests || 0, p.key_share);
  scale = scale || 1;
  $('load-bars').replaceChildren(...per.map((p) => {
    const req = el('div', { className: 'bar-keys' });
    req.style.width = `${((p.requests || 0) / scale) * 100}%`;
    req.style.background = nodeColour(p.name, 1, dark);
    const keys = el('div', { className: 'bar-ring' });
    keys.style.width = `${(p.key_share / scale) * 100}%`;
    const mark = el('div', { className: 'bar-ideal', title: `fair share ${formatPercent(fair(p), digits)}`, dataset: { fair: String(fair(p)) } });
    mark.style.left = `${(fair(p) / scale) * 100}%`;
    return el('div', { className: 'bar-row', role: 'listitem', title: `${displayName(p.name)}: requests ${formatPercent(p.requests || 0, digits)}, keys ${formatPercent(p.key_share, digits)}, ${p.bytes ?? 0} bytes` }, [
      el('span', { className: 'bar-name' }, displayName(p.name)),
      el('div', { className: 'bar-track' }, [req, keys, mark]),
      el('span', { className: 'bar-value' }, [
        el('span', { className: 'v-keys' }, `requests ${formatPercent(p.requests || 0, digits)}`),
        el('span', { className: 'v-space' }, `keys ${formatPercent(p.key_share, digits)}`),
      ]),
    ]);
  }));
}

function fillForm(w) {
  $('load-kind').value = w.kind === 'keys' ? 'uniform' : w.kind;
  if (w.kind === 'zipf') $('load-s').value = String(w.s);
  if (w.kind === 'hotspot') {
    $('load-hot-fraction').value = String(w.hot_fraction);
    $('load-hot-share').value = String(w.hot_share);
  }
  if (w.order) $('load-order').value = w.order;
  showFields();
}

function showFields() {
  const kind = $('load-kind').value;
  $('load-zipf').hidden = kind !== 'zipf';
  $('load-hotspot').hidden = kind !== 'hotspot';
  $('load-order-field').hidden = kind === 'uniform';
}

/** Wire the form and the ring's shading; ring: the RingView. */
export function setupLoad({ ring }) {
  $('load-kind').addEventListener('change', showFields);
  $('load-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    setError('load-error', '');
    const kind = $('load-kind').value;
    const body = { kind };
    if (kind === 'zipf') body.s = Number($('load-s').value);
    if (kind === 'hotspot') {
      body.hot_fraction = Number($('load-hot-fraction').value);
      body.hot_share = Number($('load-hot-share').value);
    }
    if (kind !== 'uniform') body.order = $('load-order').value;
    try {
      const w = await api.workload(undefined);
      if (w && w.sizes) body.sizes = w.sizes; // the sizes stay
      await api.setWorkload(body);
    } catch (err) {
      setError('load-error', err.message, $('load-kind'));
    }
  });
  $('load-shade').addEventListener('change', () => {
    ring.loadBy = $('load-shade').checked ? 'requests' : 'keys';
    $('ring-legend-text').textContent = ring.loadBy === 'requests'
      ? 'inner band: each node’s requests against the mean, ½× (blue) … 1× (grey) … 2× (red)'
      : 'inner band: each node’s keys against the mean, ½× (blue) … 1× (grey) … 2× (red)';
    ring.draw();
  });
  showFields();
}

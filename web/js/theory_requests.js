// theory_requests.js - the theory panel's requests view (issue 17): beside
// the keys' max/mean against points per node, each current node's share of
// requests under the workload in force against the ideal 1/N, and the floor
// no placement goes below while a key lives on one node: the busiest node
// carries at least max(1/N, the largest key share) = bound / N
// (docs/api.md "Version 3: traffic", GET /api/stats).
//
// Hooks: lab.js calls setupTheoryViews() once and theoryViewsShown() after
// each theory answer; the data is GET /api/stats, read when the view opens.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { displayName, formatInt, formatNumber, formatPercent, shareDigits, shortName } from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const BAR_LIMIT = 60; // the busiest nodes drawn; the sentence counts them all

function node(tag, attrs, text) {
  const n = document.createElementNS(NS, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => n.setAttribute(k, String(v)));
  if (text !== undefined) n.textContent = text;
  return n;
}

/** The chart: a bar per node (busiest first), the ideal and the floor as lines. */
function requestsChart(stats) {
  const all = stats.per_node || [];
  const n = all.length;
  const per = [...all].sort((a, b) => (b.requests || 0) - (a.requests || 0) || (a.name < b.name ? -1 : 1)).slice(0, BAR_LIMIT);
  const rq = stats.requests || {};
  const ideal = n ? 1 / n : 0;
  const floor = n ? (rq.bound || 1) / n : 0;
  const w = 560;
  const h = 260;
  const m = { l: 66, r: 120, t: 14, b: 44 };
  const top = Math.max(ideal, floor, ...per.map((p) => Math.max(p.requests || 0, p.key_share || 0))) * 1.08 || 1;
  const y = (v) => m.t + (1 - v / top) * (h - m.t - m.b);
  const band = (w - m.l - m.r) / Math.max(1, per.length);
  const chart = node('svg', { viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', id: 'theory-requests-chart', class: 'theory-chart',
    'aria-label': 'Each node’s share of requests against the ideal 1/N and the floor no placement goes below' });
  chart.appendChild(node('title', {}, 'Requests per node against the ideal'));
  chart.appendChild(node('line', { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, class: 'axis' }));
  chart.appendChild(node('line', { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, class: 'axis' }));
  chart.appendChild(node('text', { x: 11, y: (m.t + h - m.b) / 2, 'text-anchor': 'middle', class: 'chart-label axis-label', transform: `rotate(-90 11 ${(m.t + h - m.b) / 2})` }, 'share of requests'));
  chart.appendChild(node('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label axis-label' }, 'nodes (bar: requests, tick: keys)'));
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    chart.appendChild(node('text', { x: m.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'chart-label' }, formatPercent(v, 1)));
  }
  const digits = shareDigits(n);
  per.forEach((p, i) => {
    const x0 = m.l + i * band;
    const bw = Math.max(1, band * 0.7);
    const bar = node('rect', { x: x0 + band * 0.15, y: y(p.requests || 0), width: bw, height: Math.max(0, y(0) - y(p.requests || 0)),
      class: 'req-bar', 'data-node': p.name });
    bar.appendChild(node('title', {}, `${displayName(p.name)}: requests ${formatPercent(p.requests || 0, digits)}, keys ${formatPercent(p.key_share || 0, digits)}`));
    chart.appendChild(bar);
    // the node's share of keys, a tick across its bar
    chart.appendChild(node('line', { x1: x0 + band * 0.1, x2: x0 + band * 0.9, y1: y(p.key_share || 0), y2: y(p.key_share || 0), class: 'key-tick' }));
    if (per.length <= 16) { // room for the names under the bars
      chart.appendChild(node('text', { x: x0 + band / 2, y: h - m.b + 13, 'text-anchor': 'middle', class: 'chart-label node-label' },
        shortName(p.name, Math.max(3, Math.floor(band / 7)))));
    }
  });
  const level = (v, cls, label) => {
    chart.appendChild(node('line', { x1: m.l, x2: w - m.r, y1: y(v), y2: y(v), class: `level ${cls}` }));
    chart.appendChild(node('text', { x: w - m.r + 6, y: y(v) + 4, class: `chart-label level-label ${cls}` }, label));
  };
  level(ideal, 'ideal', `ideal 1/N ${formatPercent(ideal, digits)}`);
  if (floor > ideal * (1 + 1e-9)) level(floor, 'floor', `floor ${formatPercent(floor, digits)}`);
  chart.appendChild(node('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label' },
    per.length < n ? `the ${formatInt(per.length)} busiest of ${formatInt(n)} nodes` : 'nodes, busiest first'));
  return chart;
}

/** The sentence under the chart, from the same answer. */
function theoryRequestsSentence(stats) {
  const per = stats.per_node || [];
  const rq = stats.requests;
  if (!per.length || !rq) return 'No node: nothing to share.';
  const busiest = per.reduce((a, b) => ((b.requests || 0) > (a.requests || 0) ? b : a));
  const n = per.length;
  const hot = rq.hottest_key ? ` (the hottest key, ${displayName(rq.hottest_key.key)}, alone takes ${formatPercent(rq.hottest_key.share, 2)})` : '';
  return `${displayName(busiest.name)} serves ${formatPercent(busiest.requests || 0, 2)} of requests: ${formatNumber(rq.max_over_mean, 3)}× the ideal 1/${formatInt(n)}. `
    + `No placement does better than ${formatNumber(rq.bound, 3)}× while a key lives on one node${hot}.`;
}

async function showRequests() {
  setError('theory-error', '');
  try {
    const stats = await api.stats(undefined);
    $('theory-requests-box').replaceChildren(
      requestsChart(stats),
      el('p', { className: 'legend muted small' }, [
        el('span', { className: 'swatch swatch-req' }), ' requests of each current node ',
        el('span', { className: 'swatch swatch-ring' }), ' its keys ',
        el('span', { className: 'swatch swatch-ideal' }), ' ideal 1/N ',
        el('span', { className: 'swatch swatch-floor' }), ' floor: bound ÷ N',
      ]),
      el('p', { className: 'theory-sentence', id: 'theory-requests-sentence' }, theoryRequestsSentence(stats)),
    );
  } catch (err) {
    setError('theory-error', err.message);
  }
}

function select(view) {
  const requests = view === 'requests';
  $('theory-view-keys').setAttribute('aria-pressed', String(!requests));
  $('theory-view-requests').setAttribute('aria-pressed', String(requests));
  $('theory-keys-view').hidden = requests;
  $('theory-requests-box').hidden = !requests;
  if (requests) showRequests();
}

/** Whether the requests view is the one shown (lab.js redraws it with a new answer). */
export function theoryViewsShown() {
  $('theory-views').hidden = false;
  if ($('theory-view-requests').getAttribute('aria-pressed') === 'true') showRequests();
}

export function setupTheoryViews() {
  $('theory-view-keys').addEventListener('click', () => select('keys'));
  $('theory-view-requests').addEventListener('click', () => select('requests'));
}

// Traffic replay (issue 17): POST /api/traffic/run twice -- without the
// bounded-load factor and with it -- and a chart of each node's requests in
// flight over the replay, side by side on one scale, with what each replay
// answered (max/mean, share sent away from the key's node, probes).
//
// Nothing is recorded. The algorithm's rule comes from the catalogue
// ("bounded_loads" in GET /api/config); its factor is the configuration's
// when it is set, else the one typed here (125 by default). Names go in
// through textContent only; the charts are SVG built with DOM APIs.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { cutText, formatInt, formatNumber, formatPercent, nodeColour } from './format.js';
import { catalogueEntry } from './traits.js';

const SVG = 'http://www.w3.org/2000/svg';
const SAMPLES = 120;
const LINES = 16; // nodes drawn one line each; beyond, the busiest, the mean and the least busy

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const RULES = {
  haproxy: { param: 'hash_balance_factor', words: "HAProxy's chash_server_is_eligible: below its share of ceil((in flight + 1) × f / 100) slots, else clockwise" },
  envoy: { param: 'hash_balance_factor', words: "Envoy's BoundedLoadHashingLoadBalancer: at most its slots, else hosts in a shuffle seeded by the request's hash" },
  mtz: { param: 'balance_factor', words: 'Mirrokni–Thorup–Zadimoghaddam: at most ceil(c × in flight / nodes), c = factor / 100, else clockwise' },
};

/** "a, b and c". */
function listWords(names) {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** One chart: in flight per node (x: requests replayed). */
function flightChart(answer, ymax, id, title) {
  const w = 420;
  const h = 230;
  const m = { l: 54, r: 10, t: 22, b: 32 };
  const tl = answer.timeline || { at: [], in_flight: [] };
  const at = tl.at || [];
  const rows = tl.in_flight || [];
  const nodes = answer.nodes || [];
  const last = at.length ? at[at.length - 1] : 1;
  const x = (v) => m.l + (v / last) * (w - m.l - m.r);
  const y = (v) => m.t + (1 - v / ymax) * (h - m.t - m.b);
  const chart = svg('svg', {
    viewBox: `0 0 ${w} ${h}`, width: '100%', role: 'img', id, class: 'traffic-chart',
    'aria-label': `${title}: requests in flight per node over the replay`,
  });
  chart.appendChild(svg('title', {}, `${title}: requests in flight per node`));
  chart.appendChild(svg('text', { x: m.l, y: 14, class: 'chart-title' }, title));
  chart.appendChild(svg('line', { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, class: 'axis' }));
  chart.appendChild(svg('line', { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, class: 'axis' }));
  for (let i = 0; i <= 4; i++) {
    const v = (ymax * i) / 4;
    chart.appendChild(svg('text', { x: m.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'chart-label' }, formatInt(v)));
  }
  chart.appendChild(svg('text', { x: w - m.r, y: h - m.b + 14, 'text-anchor': 'end', class: 'chart-label' }, formatInt(last)));
  chart.appendChild(svg('text', { x: (m.l + w - m.r) / 2, y: h - 4, 'text-anchor': 'middle', class: 'chart-label axis-label' }, 'requests replayed'));
  chart.appendChild(svg('text', { x: 11, y: (m.t + h - m.b) / 2, 'text-anchor': 'middle', class: 'chart-label axis-label', transform: `rotate(-90 11 ${(m.t + h - m.b) / 2})` }, 'in flight per node'));
  const path = (values, cls, colour, name) => {
    const d = values.map((v, i) => `${i ? 'L' : 'M'}${x(at[i]).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const p = svg('path', { d, class: `flight ${cls}`, stroke: colour });
    if (name !== undefined) {
      p.dataset.node = name;
      p.appendChild(svg('title', {}, name));
    }
    chart.appendChild(p);
  };
  if (nodes.length <= LINES) {
    nodes.forEach((n, k) => path(rows.map((r) => r[k]), 'node', nodeColour(n.name), n.name));
  } else {
    path(rows.map((r) => Math.max(...r)), 'busiest', 'var(--text)');
    path(rows.map((r) => r.reduce((a, b) => a + b, 0) / r.length), 'mean', 'var(--accent)');
    path(rows.map((r) => Math.min(...r)), 'least', 'var(--muted)');
  }
  return chart;
}

function summary(answer) {
  return el('dl', { className: 'traffic-numbers' }, [
    el('dt', null, 'Requests max / mean'), el('dd', { dataset: { field: 'requests_max_over_mean' } }, formatNumber(answer.requests_max_over_mean, 3)),
    el('dt', null, 'Peak in flight max / mean'), el('dd', { dataset: { field: 'peak_in_flight_max_over_mean' } }, formatNumber(answer.peak_in_flight_max_over_mean, 3)),
    el('dt', null, "Sent away from the key's node"), el('dd', { dataset: { field: 'sent_away' } }, formatPercent(answer.sent_away, 2)),
    el('dt', null, 'Nodes probed per request'), el('dd', { dataset: { field: 'probes_per_request' } }, formatNumber(answer.probes_per_request, 3)),
  ]);
}

function legend(answer) {
  const nodes = answer.nodes || [];
  if (nodes.length > LINES) {
    return el('p', { className: 'muted small' }, `${formatInt(nodes.length)} nodes: the busiest (dark), the mean (accent) and the least busy (grey) at each moment.`);
  }
  return el('ul', { className: 'legend plain' }, nodes.map((n) => {
    const swatch = el('span', { className: 'swatch' });
    swatch.style.background = nodeColour(n.name); // CSSOM: the CSP allows it
    return el('li', { dataset: { node: n.name } }, [
      swatch,
      ` ${cutText(n.name, 28)}: handled ${formatInt(n.handled)}, peak ${formatInt(n.peak_in_flight)}, sent away ${formatPercent(n.sent_away, 1)}`,
    ]);
  }));
}

class Traffic {
  constructor() {
    $('traffic-run').addEventListener('click', () => this.run());
    $('traffic-cancel').addEventListener('click', () => { if (this.abort) this.abort.abort(); });
  }

  values() {
    const requests = Number($('traffic-requests').value);
    const concurrency = Number($('traffic-concurrency').value);
    const seedText = $('traffic-seed').value.trim();
    const body = { requests, concurrency };
    if (seedText !== '') body.seed = Number(seedText);
    return body;
  }

  async run() {
    const button = $('traffic-run');
    const status = $('traffic-status');
    setError('traffic-error', '');
    button.disabled = true;
    $('traffic-progress').hidden = false;
    $('traffic-progress').removeAttribute('value'); // indeterminate until the server reports
    $('traffic-cancel').hidden = false;
    this.abort = new AbortController();
    try {
      const config = await api.config(undefined, { signal: this.abort.signal });
      const alg = catalogueEntry(config) || {};
      const rule = RULES[alg.bounded_loads];
      // The algorithms that have a rule, for the words when this one has none.
      const bounded = (config.algorithms || []).filter((a) => RULES[a.bounded_loads]).map((a) => a.name);
      const body = { ...this.values(), samples: SAMPLES };
      let factor = null;
      if (rule) {
        const configured = config.params ? config.params[rule.param] : 0;
        const typed = $('traffic-factor').value.trim();
        factor = typed !== '' ? Number(typed) : configured > 0 ? configured : 125;
      }
      status.textContent = 'Replaying without the factor…';
      const without = await api.trafficRun({ ...body, factor: rule ? 0 : undefined }, { signal: this.abort.signal });
      let withIt = null;
      if (rule) {
        status.textContent = `Replaying with ${rule.param} ${formatInt(factor)}…`;
        withIt = await api.trafficRun({ ...body, factor }, { signal: this.abort.signal });
      }
      this.show(config.algorithm, rule, factor, without, withIt, bounded);
      status.textContent = `${formatInt(without.requests)} requests, ${without.concurrency.toLocaleString('en-US')} in flight on average, seed ${without.seed}. Nothing was recorded.`;
    } catch (err) {
      status.textContent = err.name === 'AbortError' ? 'Replay stopped.' : '';
      if (err.name !== 'AbortError') setError('traffic-error', err.message);
    } finally {
      this.abort = null;
      button.disabled = false;
      $('traffic-progress').hidden = true;
      $('traffic-cancel').hidden = true;
    }
  }

  show(algorithm, rule, factor, without, withIt, bounded) {
    const all = [without, withIt].filter(Boolean);
    let ymax = 1;
    for (const a of all) for (const r of (a.timeline && a.timeline.in_flight) || []) ymax = Math.max(ymax, ...r);
    ymax = Math.ceil((ymax * 1.05) / 4) * 4; // whole ticks: in flight is a count
    const box = (answer, id, title) => el('figure', { className: 'traffic-figure', dataset: { rule: answer.rule } }, [
      flightChart(answer, ymax, id, title),
      el('figcaption', null, [summary(answer), legend(answer)]),
    ]);
    const figures = [box(without, 'traffic-chart-without', rule ? 'Without the factor: every request to its key\'s node' : `${algorithm}: every request to its key's node`)];
    if (withIt) figures.push(box(withIt, 'traffic-chart-with', `With ${rule.param} ${formatInt(factor)}`));
    $('traffic-charts').replaceChildren(...figures);
    $('traffic-rule').textContent = rule
      ? `${algorithm}: ${rule.words}. With the factor, ${formatPercent(withIt.sent_away, 1)} of requests leave their key's node (lost cache locality) and the peak in flight max/mean goes from ${formatNumber(without.peak_in_flight_max_over_mean, 2)} to ${formatNumber(withIt.peak_in_flight_max_over_mean, 2)}.`
      : `${algorithm} has no bounded loads: every request goes to its key's node${bounded.length ? ` (${listWords(bounded)} ${bounded.length === 1 ? 'has them' : 'have them'})` : ''}.`;
  }
}

/** The server's progress of a replay (SSE "progress", type "traffic"). */
export function showTrafficProgress(p) {
  const bar = $('traffic-progress');
  if (bar.hidden || !(p.total > 0)) return; // another page's replay
  bar.max = p.total;
  bar.value = p.done;
}

export function setupTraffic() {
  return new Traffic();
}

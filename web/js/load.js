// load.js - requests beside keys (docs/api.md "Version 3: traffic"): the
// load view (each node's share of requests, their max/mean and cv, the
// bound no placement can beat, the hottest key), the workload form, the
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

// Lookup trace: every step from a key to its owner, as the contract defines
// it (SHA-256 → first 4 bytes big-endian → first point at or after it,
// wrapping past the largest point).

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import {
  angleOf, formatHex32, formatInt, nodeLabel, successorIndex,
} from './format.js';
import { sha256Hex } from './sha256.js';

function step(title, content) {
  return el('li', null, [el('span', { className: 'step-title' }, title), el('span', null, content)]);
}

/**
 * Runs the trace for `key` and shows it; `ring` is the RingView, `points`
 * the live ring points (used when the server does not send the point).
 */
export async function traceKey(key, { ring, points }) {
  const input = $('lookup-key');
  const list = $('lookup-steps');
  if (key === '') {
    setError('lookup-error', 'Type a key to look up.', input);
    return;
  }
  let answer;
  try {
    answer = await api.lookup(key);
  } catch (err) {
    setError('lookup-error', err.message, input);
    list.replaceChildren();
    ring.setPath(null);
    return;
  }
  setError('lookup-error', '', input);
  const hex = typeof answer.sha256 === 'string' && answer.sha256.length === 64 ? answer.sha256 : sha256Hex(key);
  const first8 = hex.slice(0, 8);
  const position = answer.position;
  let point = answer.point;
  let wrapped = answer.wrapped;
  if (point === undefined && points.length) {
    const i = successorIndex(points, position);
    point = { position: points[i].position, node: points[i].node, index: points[i].index };
    wrapped = points[points.length - 1].position < position;
  }

  const steps = [
    step(`SHA-256 of the UTF-8 bytes of “${key}”`, el('code', null, [el('span', { className: 'hl' }, first8), hex.slice(8)])),
    step('First 8 hex digits (4 bytes)', el('code', null, first8)),
    step('Position: those bytes as a big-endian 32-bit number', el('span', null, [
      el('strong', null, formatInt(position)), ' ', el('code', null, `(${formatHex32(position)})`),
    ])),
    step('Angle on the ring: position ÷ 2³² × 360°', `${angleOf(position).toFixed(3)}°`),
  ];
  if (!point) {
    steps.push(step('Successor point', 'none: the ring has no node'));
    steps.push(step('Owner', 'none — the key waits unassigned until a node exists'));
  } else {
    const idx = point.index === undefined || point.index === null ? '' : `, point #${point.index}${point.index === 0 ? ' (the name itself)' : ''}`;
    const how = wrapped
      ? `no point is at or after ${formatInt(position)}, so it wraps past 2³²−1 to the first point: position ${formatInt(point.position)} (${angleOf(point.position).toFixed(3)}°), node ${point.node}${idx}`
      : `first point at or after it: position ${formatInt(point.position)} (${angleOf(point.position).toFixed(3)}°), node ${point.node}${idx}`;
    steps.push(step('Successor point (clockwise)', how));
    steps.push(step('Owner', el('span', null, [
      el('strong', null, nodeLabel(answer.node)),
      wrapped ? ' — wrapped around the top of the ring' : '',
      answer.stored ? ' · the key is stored' : ' · the key is not stored (this is where it would go)',
    ])));
  }
  list.replaceChildren(...steps);
  list.dataset.key = key;
  ring.setPath(point ? { position, pointPosition: point.position, node: point.node, wrapped: !!wrapped } : null);
}

// Coordinate spaces as the page draws them.
//
// Every algorithm has its own space (API.md version 2): a 32-bit ring
// (ring, ketama, nginx), a 64-bit ring (envoy-ring; Cassandra's signed
// tokens), a lookup table of N entries (maglev) or N slots (redis), or no
// layout at all (jump buckets, rendezvous scores). The server answers every
// ring point with a `position` already scaled to one drawing circle of 2^32;
// this module only labels that circle in the algorithm's own units and puts
// a key's coordinate on it. It decides nothing about owners.

import { RING_SIZE, formatBig, formatInt } from './format.js';
import { wordsFor } from './traits.js';

const TWO32 = 2n ** 32n;
const TWO63 = 2n ** 63n;
const TWO64 = 2n ** 64n;

const SUP = { 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹', '-': '⁻' };
const sup = (n) => String(n).split('').map((c) => SUP[c]).join('');

/** k · 2^e in short mathematical form: 2⁶¹, 3·2⁶¹, −2⁶², 0. */
function powerLabel(k, e) {
  if (k === 0) return '0';
  const sign = k < 0 ? '−' : '';
  let a = Math.abs(k);
  let p = e;
  while (a % 2 === 0) { a /= 2; p++; }
  return `${sign}${a === 1 ? '' : `${a}·`}2${sup(p)}`;
}

function toBig(s) {
  try {
    return BigInt(s);
  } catch {
    return null;
  }
}

/**
 * Describes the space of one /api/ring answer. `algorithm` is the catalogue
 * entry of the algorithm in use (title and words), may be null.
 */
export function describeSpace(ringAnswer, algorithm) {
  const name = ringAnswer && ringAnswer.algorithm;
  const size = toBig(ringAnswer && ringAnswer.space) ?? TWO32;
  const runs = ringAnswer && Array.isArray(ringAnswer.runs) ? ringAnswer.runs : null;
  const points = ringAnswer && Array.isArray(ringAnswer.points) ? ringAnswer.points : [];
  let kind;
  if (runs) kind = 'table';
  else if (size === TWO32) kind = 'ring32';
  else if (size === TWO64) kind = 'ring64';
  else kind = 'ring';
  // A 64-bit ring of signed tokens (Cassandra) draws -2^63 at the top. The
  // server's positions say which: a point whose coordinate read unsigned
  // lands half a turn away from where it is drawn is a signed one.
  let signed = false;
  if (kind === 'ring64') {
    for (const p of points.slice(0, 8)) {
      if (typeof p.coordinate !== 'string') continue;
      if (p.coordinate.startsWith('-')) { signed = true; break; }
      const c = toBig(p.coordinate);
      if (c === null) continue;
      const unsignedPos = Number(c >> 32n);
      if (Math.abs(unsignedPos - p.position) > RING_SIZE / 4) { signed = true; break; }
    }
  }
  // What a table's cells are called (cosmetic; traits.js).
  const [cell, cells] = wordsFor(name).cells || ['entry', 'entries'];
  const space = { kind, size, signed, cell, cells, algorithm: name, hasLayout: !!runs || points.length > 0 };
  space.title = spaceTitle(space, algorithm);
  return space;
}

function spaceTitle(space, algorithm) {
  const n = Number(space.size);
  switch (space.kind) {
    case 'table': return `a table of ${formatInt(n)} ${space.cells}, drawn as a circle from ${space.cell} 0 at the top`;
    case 'ring32': return '32-bit ring: 0 … 2³²−1, clockwise from the top';
    case 'ring64': return space.signed
      ? '64-bit signed token ring: −2⁶³ … 2⁶³−1, clockwise from the top'
      : '64-bit ring: 0 … 2⁶⁴−1, clockwise from the top';
    default: return `${algorithm && algorithm.title ? algorithm.title : 'space'}: 0 … ${formatBig(space.size - 1n)}`;
  }
}

/**
 * Drawing position (0 .. 2^32) of a key's coordinate, the same scaling the
 * server uses for ring points: ((c + 0.5) / size) × 2^32, with 32-bit
 * coordinates as they are. null when the key has no coordinate.
 */
function drawPosition(space, coordinate) {
  if (coordinate === null || coordinate === undefined) return null;
  let c = toBig(coordinate);
  if (c === null) return null;
  if (space.signed) c += TWO63;
  if (space.kind === 'ring32') return Number(c);
  return ((Number(c) + 0.5) / Number(space.size)) * RING_SIZE;
}

/** Where a key is drawn: the server's ring_position if it sends one. */
export function keyDrawPosition(space, key) {
  if (key && Number.isFinite(key.ring_position)) return key.ring_position;
  return drawPosition(space, key ? key.coordinate : null);
}

/**
 * Tick marks of the space: [{position, label, major}], eight of them, and
 * the label at the top (where the space starts and wraps).
 */
export function ticks(space) {
  const out = [];
  if (space.kind === 'table') {
    const n = Number(space.size);
    for (let t = 1; t < 8; t++) {
      const entry = Math.round((t * n) / 8);
      out.push({ position: ((entry + 0.5) / n) * RING_SIZE, label: formatInt(entry), title: `${space.cell} ${formatInt(entry)}`, major: t % 2 === 0 });
    }
    return { top: `0 ↺ ${formatInt(n - 1)}`, topTitle: `${space.cell} 0, after ${space.cell} ${formatInt(n - 1)}`, ticks: out };
  }
  if (space.kind === 'ring32' || space.kind === 'ring64') {
    const e = space.kind === 'ring32' ? 29 : 61;
    for (let t = 1; t < 8; t++) {
      const k = space.signed ? t - 4 : t;
      const label = powerLabel(k, e);
      out.push({ position: (t / 8) * RING_SIZE, label, title: `coordinate ${label}`, major: t % 2 === 0 });
    }
    const top = space.kind === 'ring32' ? '0 ↺ 2³²−1' : (space.signed ? '−2⁶³ ↺ 2⁶³−1' : '0 ↺ 2⁶⁴−1');
    return { top, topTitle: 'where the space starts and wraps', ticks: out };
  }
  for (let t = 1; t < 8; t++) out.push({ position: (t / 8) * RING_SIZE, label: `${t}/8`, title: `${t}/8 of the space`, major: t % 2 === 0 });
  return { top: '0 ↺', topTitle: 'where the space starts and wraps', ticks: out };
}

/** A drawing position back in the space's units, for tooltips ("≈ 3·2⁶¹"). */
export function spaceAt(space, position) {
  const f = position / RING_SIZE;
  if (space.kind === 'table') return `${space.cell} ${formatInt(Math.min(Number(space.size) - 1, Math.floor(f * Number(space.size))))}`;
  if (space.kind === 'ring32') return `position ${formatInt(Math.floor(position))}`;
  if (space.kind === 'ring64') {
    const v = f * 2 ** 64 - (space.signed ? 2 ** 63 : 0);
    return `coordinate ≈ ${v.toExponential(3).replace('e+', ' × 10^')}`;
  }
  return `${(f * 100).toFixed(2)}% of the space`;
}

// Pure helpers: number formatting, node colours, ring geometry, move summaries.
// Nothing here touches the DOM, so the rules are easy to read and test.

export const RING_SIZE = 4294967296; // 2^32 positions, 0 .. 2^32 - 1

const intFormat = new Intl.NumberFormat('en-US');

export function formatInt(n) {
  return intFormat.format(n);
}

export function formatPercent(fraction, digits = 1) {
  if (!Number.isFinite(fraction)) return '–';
  return `${(fraction * 100).toFixed(digits)}%`;
}

export function formatNumber(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  if (Number.isInteger(x)) return formatInt(x);
  return x.toFixed(digits);
}

/** Angle of a ring position in degrees, 0 at the top, clockwise. */
export function angleOf(position) {
  return (position / RING_SIZE) * 360;
}

export function formatHex32(position) {
  return `0x${position.toString(16).padStart(8, '0')}`;
}

/**
 * A colour per node, the same in every tab. Nodes are numbered in the order
 * they were added (the add_node operations of the shared history) and the
 * hue steps by the golden angle, 137.5°, per number: any run of consecutive
 * additions gets well separated hues, even with hundreds of nodes, and three
 * lightness levels separate the hues that come round again. A node the
 * history does not explain falls back to a hash of its name.
 */
const GOLDEN_ANGLE = 137.50776;
let nodeOrder = new Map();

export function setNodeOrder(order) {
  nodeOrder = order;
}

function hashName(name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

export function nodeColour(name, alpha = 1, dark = false) {
  if (name === null || name === undefined) return dark ? `hsla(0, 0%, 60%, ${alpha})` : `hsla(0, 0%, 55%, ${alpha})`;
  let rank = nodeOrder.get(name);
  if (rank === undefined) rank = hashName(name) % 4096;
  const hue = (rank * GOLDEN_ANGLE + 200) % 360;
  const level = Math.floor(rank / 8) % 3;
  const light = dark ? 62 - level * 8 : 42 + level * 8;
  const sat = 70 - level * 8;
  return `hsla(${hue.toFixed(1)}, ${sat}%, ${light}%, ${alpha})`;
}

export function nodeLabel(name) {
  return name === null || name === undefined ? '(none)' : name;
}

/**
 * Groups moves [{from, to}] by from→to pair, largest first, into the summary
 * "12 keys moved: alpha → delta 9, bravo → delta 3" (plain digits, so that
 * scripts can read the numbers back). `moves` may also be
 * given as ready counts [{from, to, keys}]. `total` is the number of moved
 * keys (it can exceed what the pairs count when only a sample was read).
 */
export function groupMoves(moves) {
  const counts = new Map();
  for (const m of moves) {
    const k = JSON.stringify([m.from ?? null, m.to ?? null]);
    counts.set(k, (counts.get(k) || 0) + (m.keys ?? 1));
  }
  const pairs = [];
  for (const [k, keys] of counts) {
    const [from, to] = JSON.parse(k);
    pairs.push({ from, to, keys });
  }
  pairs.sort((a, b) => b.keys - a.keys
    || nodeLabel(a.from).localeCompare(nodeLabel(b.from))
    || nodeLabel(a.to).localeCompare(nodeLabel(b.to)));
  return pairs;
}

export const SUMMARY_PAIRS = 20; // pairs written out; the rest end in "…"

export function movedSummary(total, pairs, partial = false) {
  const head = `${total} ${total === 1 ? 'key' : 'keys'} moved`;
  if (total === 0 || pairs.length === 0) return head;
  const shown = pairs.slice(0, SUMMARY_PAIRS);
  const body = shown.map((p) => `${nodeLabel(p.from)} → ${nodeLabel(p.to)} ${p.keys}`).join(', ');
  const more = pairs.length > shown.length ? `, … ${pairs.length - shown.length} more pairs` : (partial ? ', …' : '');
  return `${head}: ${body}${more}`;
}

/** Digits for shares, so that 1000 nodes of 0.1% each stay distinguishable. */
export function shareDigits(nodeCount) {
  if (nodeCount > 200) return 3;
  if (nodeCount > 20) return 2;
  return 1;
}

/** Index of the first point with position >= pos, wrapping to 0. */
export function successorIndex(points, pos) {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].position < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo === points.length ? 0 : lo;
}

/** Relative time such as "3 min ago" for an RFC 3339 stamp. */
export function formatTime(at) {
  const t = Date.parse(at);
  if (!Number.isFinite(t)) return at || '';
  const d = new Date(t);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

const typeWords = {
  add_node: 'Added node',
  remove_node: 'Removed node',
  insert_keys: 'Inserted',
  delete_keys: 'Deleted',
  configure: 'Configured',
  reset: 'Reset',
  revert: 'Reverted',
};

export function describeOperation(op) {
  const word = typeWords[op.type] || op.type;
  if (op.type === 'reset') return 'Reset: every node and key removed';
  if (op.type === 'insert_keys' || op.type === 'delete_keys') return `${word} ${op.subject}`;
  return op.subject ? `${word} ${op.subject}` : word;
}

// Pure helpers: number formatting, names as people see them, node colours,
// load colours, move summaries. Nothing here touches the DOM, so the rules
// are easy to read and test.

export const RING_SIZE = 4294967296; // the drawing circle: 2^32 positions

const intFormat = new Intl.NumberFormat('en-US');

export function formatInt(n) {
  return intFormat.format(n);
}

export function formatPercent(fraction, digits = 1) {
  if (!Number.isFinite(fraction)) return '–';
  return `${(fraction * 100).toFixed(digits)}%`;
}

/** A statistic with a fixed number of digits: 2.000 beside 2.232, never 2. */
export function formatNumber(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A decimal string of any length with thousands separators ("-9,223,…"). */
export function formatBig(s) {
  const str = String(s);
  const m = /^(-?)(\d+)$/.exec(str);
  if (!m) return str;
  return m[1] + m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Angle of a drawing position in degrees, 0 at the top, clockwise. */
export function angleOf(position) {
  return (position / RING_SIZE) * 360;
}

/**
 * Characters a reader cannot see or cannot tell from others: the C1
 * controls U+0080–U+009F (names may hold them), format
 * characters (U+200B zero width space, U+202E and the other bidirectional
 * controls, U+FEFF, U+00AD soft hyphen, …), every space but the plain one
 * (U+00A0, U+2000–U+200A, U+3000, …), line and paragraph separators, and
 * the Hangul fillers that render as nothing.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u115F\u1160\u3164\uFFA0]|\u034F/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');
const MARK_ALL = /\p{M}/gu;

const codePoint = (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`;

/**
 * A text with what cannot be seen shown as escapes: "a⟨U+200B⟩b". A text
 * that is not in Unicode NFC form (an "é" written as "e" + U+0301) also
 * shows its combining marks, which is what tells it from its NFC twin.
 */
export function visibleText(text) {
  let s = String(text);
  if (s.normalize('NFC') !== s) s = s.replace(MARK_ALL, codePoint);
  if (!INVISIBLE.test(s)) return s;
  // A zero width joiner between two pictographs is part of an emoji
  // (👩‍💻): it stays.
  return s.replace(INVISIBLE_ALL, (c, at) => (c === '\u200D' && PICTOGRAPH_BEFORE.test(s.slice(0, at)) && PICTOGRAPH_AFTER.test(s.slice(at + 1))
    ? c : codePoint(c)));
}
const PICTOGRAPH_BEFORE = /\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?$/u;
const PICTOGRAPH_AFTER = /^\p{Extended_Pictographic}/u;

/**
 * A name (or a key) as a person can see it. Names are 1..255 bytes and may
 * be spaces only or start and end with spaces: those are quoted with the
 * outer spaces shown as ␣, so that no row or title reads as blank; what
 * cannot be seen is escaped (visibleText).
 */
export function displayName(name) {
  if (name === null || name === undefined) return '(none)';
  const s = visibleText(name);
  if (s.trim() === s && s !== '') return s;
  const lead = /^ */.exec(s)[0].length;
  const trail = s.trim() === '' ? 0 : /[ ]*$/.exec(s)[0].length;
  const core = s.slice(lead, s.length - trail);
  return `“${'␣'.repeat(lead)}${core}${'␣'.repeat(trail)}”`;
}

/** Names in a list that look the same (equal in NFC) as another: name -> [others]. */
export function lookAlikes(names) {
  const byForm = new Map();
  for (const n of names) {
    const k = String(n).normalize('NFC');
    if (!byForm.has(k)) byForm.set(k, []);
    byForm.get(k).push(n);
  }
  const out = new Map();
  for (const group of byForm.values()) {
    if (group.length < 2) continue;
    for (const n of group) out.set(n, group.filter((o) => o !== n));
  }
  return out;
}

/** A name cut to `max` characters with an ellipsis (the full name goes in a title). */
export function shortName(name, max = 24) {
  const s = displayName(name);
  return cutText(s, max);
}

/** A text cut to `max` characters with an ellipsis, never inside an escape ⟨U+…⟩. */
export function cutText(s, max) {
  const chars = [...s];
  if (chars.length <= max) return s;
  let head = chars.slice(0, max - 1).join('');
  const open = head.lastIndexOf('⟨');
  if (open >= 0 && open > head.lastIndexOf('⟩')) head = head.slice(0, open);
  return `${head}…`;
}

// ---- colours -----------------------------------------------------------------

/**
 * A colour per node, the same in every tab. Nodes are numbered in the order
 * they were added (the add_node operations of the shared history) and take
 * the colours of a published categorical palette in that order, so that 20
 * nodes get 20 distinguishable colours, the first ones safe for colour-blind
 * readers:
 *   1–7   Okabe & Ito (2008), "Color Universal Design" (black left out: it is
 *         the text colour), made for protanopia, deuteranopia, tritanopia;
 *   8–20  from Paul Tol's qualitative schemes ("Colour Schemes", SRON/EPS/
 *         TN/09-002, 2021: dark, muted, bright, light, high-contrast), each
 *         the one farthest (CIELAB ΔE) from those before it for normal
 *         vision and under simulated deuteranopia and protanopia (Machado
 *         et al. 2009): every pair of the 20 is ΔE ≥ 10 in all three, the
 *         first 12 ≥ 17.
 * Past 20 the list comes round again, darker or lighter by turns; a node
 * the history does not explain falls back to a hash of its name. The ring
 * draws a separator between neighbouring arcs whose colours are near
 * (coloursClose). These are the data's colours, the same in both themes
 * but for the darkest, lifted on the dark panel; the page's own colours
 * are style.css's variables (palette.js).
 */
const PALETTE = [
  '#E69F00', '#56B4E9', '#009E73', '#F0E442', '#0072B2', '#D55E00', '#CC79A7', // Okabe–Ito
  '#663333', '#332288', '#DDCC77', '#666633', '#222255', '#AA3377', '#FFAABB', // Paul Tol
  '#EE6677', '#999933', '#225555', '#004488', '#99DDFF', '#EE8866',
];
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

function rankOf(name) {
  const rank = nodeOrder.get(name);
  return rank === undefined ? hashName(name) % 4096 : rank;
}

/** The node's colour as [r, g, b] (0..255) for the theme. */
function nodeRgb(name, dark) {
  const rank = rankOf(name);
  const hex = PALETTE[rank % PALETTE.length];
  let rgb = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  // Past the palette: darker, then lighter, by turns.
  const round = Math.floor(rank / PALETTE.length) % 3;
  const mix = (c, to, t) => c.map((v) => Math.round(v + (to - v) * t));
  if (round === 1) rgb = mix(rgb, 0, 0.3);
  if (round === 2) rgb = mix(rgb, 255, 0.35);
  // On the dark panel the darkest colours (indigo, wine) are lifted.
  const lum = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
  if (dark && lum < 0.3) rgb = mix(rgb, 255, 0.35);
  return rgb;
}

export function nodeColour(name, alpha = 1, dark = false) {
  if (name === null || name === undefined) return dark ? `hsla(0, 0%, 60%, ${alpha})` : `hsla(0, 0%, 55%, ${alpha})`;
  const [r, g, b] = nodeRgb(name, dark);
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** Whether two nodes' colours are hard to tell apart side by side. */
export function coloursClose(a, b) {
  if (a === b || a === null || b === null || a === undefined || b === undefined) return false;
  const x = nodeRgb(a, false);
  const y = nodeRgb(b, false);
  const d = Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]);
  return d < 90;
}

/**
 * A load against the ideal as a colour: blue below, neutral at the ideal,
 * red above, saturating at half and at twice the ideal (a log scale, so
 * ×0.5 and ×2 are equally strong).
 */
export function loadColour(ratio, dark = false) {
  if (!Number.isFinite(ratio) || ratio <= 0) return dark ? 'hsl(215, 60%, 62%)' : 'hsl(215, 75%, 42%)';
  const t = Math.max(-1, Math.min(1, Math.log2(ratio)));
  const hue = t < 0 ? 215 : 5;
  const strength = Math.abs(t);
  const sat = Math.round(10 + strength * 70);
  const light = dark ? Math.round(46 + strength * 16) : Math.round(80 - strength * 38);
  return `hsl(${hue}, ${sat}%, ${light}%)`;
}

// ---- moves --------------------------------------------------------------------

/**
 * Groups moves [{from, to}] by from→to pair, largest first. `moves` may
 * also be given as ready counts [{from, to, keys}].
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
    || displayName(a.from).localeCompare(displayName(b.from))
    || displayName(a.to).localeCompare(displayName(b.to)));
  return pairs;
}

/** "2,781 keys moved" */
export function movedCount(total) {
  return `${formatInt(total)} ${total === 1 ? 'key' : 'keys'} moved`;
}

/** One line for scenario outcomes: "12 keys moved: alpha → delta 9, …". */
export function movedSummary(total, pairs, partial = false, limit = 6) {
  const head = movedCount(total);
  if (total === 0 || pairs.length === 0) return head;
  const shown = pairs.slice(0, limit);
  const body = shown.map((p) => `${displayName(p.from)} → ${displayName(p.to)} ${formatInt(p.keys)}`).join(', ');
  const more = pairs.length > shown.length ? `, and ${formatInt(pairs.length - shown.length)} more pairs` : (partial ? ', …' : '');
  return `${head}: ${body}${more}`;
}

/** Digits for shares, so that 1000 nodes of 0.1% each stay distinguishable. */
export function shareDigits(nodeCount) {
  if (nodeCount > 200) return 3;
  if (nodeCount > 20) return 2;
  return 1;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });

/** Local date and time of an RFC 3339 stamp. */
export function formatTime(at) {
  const t = Date.parse(at);
  if (!Number.isFinite(t)) return at || '';
  return timeFormat.format(new Date(t));
}

const typeWords = {
  add_node: 'Added node',
  remove_node: 'Removed node',
  insert_keys: 'Inserted',
  delete_keys: 'Deleted',
  configure: 'Configured',
  reset: 'Reset',
  revert: 'Reverted',
  set_weight: 'Changed the weight of',
  set_state: 'Marked',
};

export function describeOperation(op) {
  const word = typeWords[op.type] || op.type;
  if (op.type === 'reset') return 'Reset: every node and key removed';
  if (op.type === 'revert') {
    const m = /(\d+)/.exec(op.subject || '');
    return m ? (m[1] === '0' ? 'Reverted to the empty start' : `Reverted to the state after #${m[1]}`) : word;
  }
  if (op.type === 'add_node' || op.type === 'remove_node' || op.type === 'set_weight') return `${word} ${displayName(op.subject)}`;
  if (op.type === 'set_state') return `${word} ${displayName(op.subject)} ${op.state === 'up' ? 'up' : 'down'}`;
  if (op.type === 'insert_keys' || op.type === 'delete_keys') {
    // "12000 keys key-0 … key-11999": the count grouped, the key names as they are.
    const m = /^(\d+)( keys?\b.*)$/s.exec(op.subject || '');
    return m ? `${word} ${formatInt(Number(m[1]))}${visibleText(m[2])}` : `${word} ${displayName(op.subject)}`;
  }
  return op.subject ? `${word} ${groupCounts(visibleText(op.subject))}` : word;
}

/** Numbers of four digits or more standing as words get separators: "1000 points" → "1,000 points". */
export function groupCounts(text) {
  return String(text).replace(/(^|[\s(,])(\d{4,})(?=$|[\s),.;:])/g, (_all, pre, digits) => pre + formatInt(Number(digits)));
}

/**
 * A server message with the API's field names put as the page labels them,
 * and long numbers with separators ("count must be … 10000000" reads
 * "Number of keys must be … 10,000,000").
 */
const FIELD_LABELS = {
  points_per_node: 'Points per node',
  count: 'Number of keys',
  table_size: 'Table size',
  min_ring_size: 'Minimum ring size',
  max_ring_size: 'Maximum ring size',
  num_tokens: 'Tokens per node',
  probes: 'Probes',
  replicas: 'Replicas',
  weight: 'Weight',
};

export function paramLabel(name) {
  if (FIELD_LABELS[name]) return FIELD_LABELS[name];
  const words = String(name).replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function humanMessage(message) {
  // Quoted parts are names and keys: they stay exactly as they are.
  const parts = String(message).split(/("(?:[^"\\]|\\.)*")/);
  const out = parts.map((part, i) => {
    if (i % 2 === 1) return part;
    let m = part.replace(/\b[a-z]+(?:_[a-z]+)*\b/g, (w, offset) => {
      if (!FIELD_LABELS[w] || !/_|^count$|^weight$/.test(w)) return w;
      const label = FIELD_LABELS[w];
      return i === 0 && offset === 0 ? label : label.charAt(0).toLowerCase() + label.slice(1);
    });
    m = m.replace(/(^|[^\w.,-])(\d{5,})(?![\w.,])/g, (_all, pre, digits) => pre + formatInt(Number(digits)));
    return m;
  }).join('');
  return out;
}

/**
 * Keys and requests nobody serves (API.md v4 "unavailable"): a sentence,
 * or '' when every key is served.
 */
export function unavailableSentence(u) {
  if (!u || !u.keys) return '';
  const req = typeof u.requests_share === 'number' ? `, ${formatPercent(u.requests_share, 1)} of requests` : '';
  return `${formatInt(u.keys)} ${u.keys === 1 ? 'key has' : 'keys have'} no live replica (${formatPercent(u.key_share, 1)} of keys${req}): nobody serves them.`;
}

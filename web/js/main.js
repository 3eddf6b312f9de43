// ringsim page: loads the state, keeps it live through server-sent events,
// wires the controls and the timeline.
//
// One refresh() reads everything the page shows (config with the algorithm
// catalogue, nodes, the layout to draw, statistics, the keys drawn on the
// ring, the current keys page), either live or "as it was after operation
// N" (?at=N), and shows it all at once. While the state of another moment
// is on its way, every view shows a loading state: nothing of the previous
// moment stays on screen under the wrong banner. Answers that arrive after
// the view moved on are dropped (a generation counter).
//
// Operation events from any tab or the command line schedule a debounced
// refresh. "What moved" shows the newest operation at once from the
// operation itself (count and sources), then the details it must ask for:
// who received the keys, the statistics before and after, the flow drawn
// on the ring.

import { api, ApiError } from './api.js';
import { $, el, setError, debounce } from './dom.js';
import {
  describeOperation, displayName, visibleText, formatInt, formatTime, groupMoves, humanMessage, movedCount, setNodeOrder, unavailableSentence,
} from './format.js';
import { RingView } from './ring.js';
import { describeSpace, keyDrawPosition } from './space.js';
import {
  NodesTable, KeysTable, fillNodeFilter, renderStats, statsLoading, renderCompare, renderPairs, nameSpan,
} from './views.js';
import { traceKey, cancelTrace, clearTrace } from './lookup.js';
import { PlacementForm } from './algorithms.js';
import { catalogueEntry } from './traits.js';
import { TableStrip } from './strip.js';
import { setupScenarios } from './scenarios.js';
import { setupLab, showConfigFormats, suggestConfigFormat } from './lab.js';
import { setupDiff } from './diff.js';
import { renderLoad, requestsSentence, setupLoad } from './load.js';
import { setupTraffic, showTrafficProgress } from './traffic.js';
import { setupImport, showImportFormats } from './import.js';
import { setupTrace } from './trace.js';
import { DomainsPanel } from './domains.js';

const DOT_LIMIT = 1500;     // up to this many keys are drawn one by one
const KEYS_PAGE = 50;
const MAX_PAIR_MOVES = 10000; // moves read to group a general change into pairs
const HISTORY_STEP = 100;   // history rows shown per "Older operations"

const diffPicks = setupDiff(); // "Between two points" under the history

const state = {
  at: null,               // null: live; a number: read-only view after that operation
  lastId: 0,              // newest operation known
  ops: new Map(),         // id -> operation
  historyShown: HISTORY_STEP,
  live: { keys: 0 },
  // What the views show now; view.at is undefined until the first load.
  view: { at: undefined, config: null, nodes: [], ring: null, stats: null, space: null },
  keysQuery: { prefix: '', node: '', order: '', offset: 0, limit: KEYS_PAGE },
  explainedId: 0,
  nodeOrder: new Map(), // node name -> colour number
  generation: 0,
  keysGeneration: 0,
  dark: false,
};

// ---- theme -----------------------------------------------------------------

const themeButton = $('theme-toggle');
const systemDark = window.matchMedia('(prefers-color-scheme: dark)');

function isDark() {
  const chosen = document.documentElement.dataset.theme;
  return chosen ? chosen === 'dark' : systemDark.matches;
}

function applyTheme() {
  state.dark = isDark();
  themeButton.textContent = state.dark ? 'Light theme' : 'Dark theme';
  themeButton.setAttribute('aria-pressed', String(state.dark));
  ring.setTheme(state.dark);
  strip.setTheme(state.dark);
  if (state.view.stats) {
    nodesTable.set(state.view.nodes, { dark: state.dark });
    renderStats(state.view.stats, state.dark);
    keysTable.dark = state.dark;
    keysTable.render();
  }
}

try {
  const saved = localStorage.getItem('ringsim-theme');
  if (saved === 'dark' || saved === 'light') document.documentElement.dataset.theme = saved;
} catch { /* storage may be disabled */ }

themeButton.addEventListener('click', () => {
  const next = isDark() ? 'light' : 'dark';
  document.documentElement.dataset.theme = next;
  try { localStorage.setItem('ringsim-theme', next); } catch { /* ignore */ }
  applyTheme();
});
systemDark.addEventListener('change', applyTheme);

// ---- views -----------------------------------------------------------------

const ring = new RingView({
  wrap: $('ring-wrap'),
  base: $('ring-base'),
  overlay: $('ring-overlay'),
  svg: $('ring-svg'),
  tooltip: $('ring-tooltip'),
  onSelect: showSelection,
});

const strip = new TableStrip({ box: $('table-strip'), canvas: $('strip-canvas'), caption: $('strip-caption') });

let lab = null; // the preview, the compare and the exports (lab.js)
const nodesTable = new NodesTable({
  onPick: (name) => {
    state.keysQuery.node = name;
    state.keysQuery.offset = 0;
    $('keys-node').value = name;
    loadKeysPage();
    $('keys-heading').scrollIntoView({ behavior: 'smooth', block: 'start' });
  },
  onRemove: (name, button) => mutate(button, 'node-error', null, () => api.removeNode(name)),
  // A node marked down or up again (one set_state operation).
  // Previewed first (issue 25 item 11): what would move and what nobody
  // would serve, then "Apply"; resolved once applied.
  onState: (name, down, button) => (lab
    ? new Promise((resolve) => { lab.preview.askState(name, down, resolve); })
    : mutate(button, 'node-error', null, () => api.setState(name, down ? 'down' : 'up'))),
  // A weight changed in place: null when done, else the refusal in words.
  onWeight: async (name, weight, button) => {
    let refusal = null;
    await mutate(button, null, null, () => api.setWeight(name, weight), ({ message }) => { refusal = humanMessage(message); });
    return refusal;
  },
});

// The failure-domain tree: a domain's Down toggle previews, then sets every
// node of it in one operation, as a node's toggle does.
const domainsPanel = new DomainsPanel({
  onState: (type, name, down, button) => (lab
    ? new Promise((resolve) => { lab.preview.askDomainState(type, name, down, resolve); })
    : mutate(button, 'domains-error', null, () => api.setDomainState(type, name, down ? 'down' : 'up'))),
});

const keysTable = new KeysTable({
  onPick: (key) => pickKey(key),
  onRemove: (key, button) => mutate(button, 'key-error', null, () => api.deleteKey(key)),
  onOrder: (order) => {
    state.keysQuery.order = order;
    state.keysQuery.offset = 0;
    loadKeysPage();
  },
});

const placement = new PlacementForm({
  onApply: (body) => mutate($('apply-config'), 'config-error', null, () => api.setConfig(body), (err) => placement.showError(err.message)),
});

state.dark = isDark();
themeButton.textContent = state.dark ? 'Light theme' : 'Dark theme';
themeButton.setAttribute('aria-pressed', String(state.dark));

const atQuery = (at) => (at === null ? undefined : at);

// ---- loading ---------------------------------------------------------------

/**
 * The keys drawn on the ring: each key as a dot up to DOT_LIMIT, past that
 * the density band, when the server bins keys in the space that is drawn
 * (its `by` field; the original ring's positions are its coordinates).
 */
const KEY_SET_OPS = new Set(['insert_keys', 'delete_keys', 'reset', 'revert']);
let densityCache = { key: null, answer: null };

/**
 * What the density depends on: the set of keys (the last operation that
 * changed it, up to the moment on show) and, through the coordinates, the
 * configuration; never the nodes. A node added at a million keys then
 * reuses the band instead of scanning every key again.
 */
function densityKey(at, config, bins) {
  const upTo = at ?? state.lastId;
  let last = 0;
  for (const [id, op] of state.ops) if (id <= upTo && id > last && KEY_SET_OPS.has(op.type)) last = id;
  return JSON.stringify([last, config.algorithm, config.params, bins]);
}

async function loadRingKeys(total, at, config, space) {
  if (total === 0) return { keys: [], density: null };
  if (total <= DOT_LIMIT) {
    const keys = [];
    for (let offset = 0; offset < total && offset < DOT_LIMIT; offset += 1000) {
      const page = await api.keys({ offset, limit: 1000, at });
      for (const k of page.keys) keys.push({ key: k.key, node: k.node, replicas: k.replicas, pos: keyDrawPosition(space, k) });
      if (page.keys.length < 1000) break;
    }
    return { keys, density: null };
  }
  const bins = Math.max(90, Math.min(1440, Math.round(ring.size * 1.2) || 720));
  try {
    const key = densityKey(at, config, bins);
    const density = densityCache.key === key ? densityCache.answer : await api.density(bins, at);
    if (density.total === total) densityCache = { key, answer: density };
    // Binned by coordinate, the band lies over the layout; jump's and
    // rendezvous's keys ("by": "position") have no place on their sectors.
    return density.by === 'coordinate' ? { keys: null, density } : { keys: null, density: null, note: 'keys not drawn one by one: the load band shows where they are' };
  } catch (err) {
    return { keys: null, density: null, error: err.message };
  }
}

/** The server cannot write its database: say why (the config answer has
 * read_only and read_only_reason only then). */
function showReadOnly(config) {
  const ro = config.read_only === true;
  $('read-only-banner').hidden = !ro;
  $('read-only-text').textContent = ro ? String(config.read_only_reason || 'the database cannot be written') : '';
}

/** Every view in its loading state, so that no other moment's data stays. */
function showLoading(at) {
  const text = at === null ? 'Loading the live state…' : `Loading the state after #${at}…`;
  state.view = { at: undefined, config: null, nodes: [], ring: null, stats: null, space: null };
  ring.setLoading(text);
  nodesTable.loading(text);
  keysTable.loading(text);
  statsLoading(text);
  $('ring-mode').textContent = text;
  $('ring-space').textContent = '';
  $('ring-legend').hidden = true;
  $('ring-empty').hidden = true;
  strip.setData(null, null, state.dark);
  $('ring-selection').replaceChildren();
  const pl = $('past-loading');
  pl.hidden = at === null;
  pl.textContent = text;
  if ($('lookup-steps').dataset.key) {
    cancelTrace();
    $('lookup-result').textContent = '';
    $('lookup-steps').replaceChildren(el('li', { className: 'muted' }, text));
  }
}

async function loadView() {
  const generation = ++state.generation;
  const at = state.at;
  const q = atQuery(at);
  if (state.view.at !== at) showLoading(at);
  try {
    const [config, nodesAnswer, ringAnswer, stats, locations] = await Promise.all([
      api.config(q), api.nodes(q), api.ring(q), api.stats(q),
      // The domain tree is one panel among many: its failure is said there.
      api.locations(q).catch((err) => ({ error: err.message })),
    ]);
    if (generation !== state.generation) return;
    const space = describeSpace(ringAnswer, catalogueEntry(config));
    const [ringKeys, keysPage] = await Promise.all([
      loadRingKeys(stats.keys, q, config, space),
      fetchKeysPage(q),
    ]);
    if (generation !== state.generation) return;
    state.view = { at, config, nodes: nodesAnswer.nodes, ring: ringAnswer, stats, space, locations };
    if (at === null) {
      state.live = { keys: stats.keys };
      showReadOnly(config);
    }
    await renderView(ringKeys, keysPage, generation);
    if (lab && generation === state.generation) lab.viewChanged();
    setConnectionError(null);
  } catch (err) {
    if (generation !== state.generation) return;
    setConnectionError(err);
  }
}

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/**
 * Shows the loaded view in three steps with a frame between them (the ring
 * and its captions; the tables; the statistics), so that at a thousand
 * nodes no single task holds the page for long. A newer load stops it.
 */
async function renderView(ringKeys, keysPage, generation) {
  const { at, config, nodes, ring: layout, stats, space, locations } = state.view;
  const readOnly = at !== null;
  const algo = catalogueEntry(config);
  placement.setConfig(config, { readOnly });
  showConfigFormats(config.export_formats);
  showImportFormats(config.import_formats);
  suggestConfigFormat(config.algorithm);
  $('weight-help').textContent = placement.weightHelp();

  ring.setData({
    space,
    points: layout.points,
    runs: layout.runs,
    nodes,
    keys: ringKeys.keys,
    density: ringKeys.density,
    mean: stats.mean,
    totalKeys: stats.keys,
    dark: state.dark,
    caption: at === null ? '' : `after #${at}`,
    // The empty live ring shows an invitation in its centre instead of "0 nodes".
    invitation: !readOnly && nodes.length === 0,
  });
  let mode;
  if (ringKeys.keys) mode = `${formatInt(stats.keys)} ${stats.keys === 1 ? 'key' : 'keys'} drawn as dots`;
  else if (ringKeys.density) mode = `${formatInt(stats.keys)} keys drawn as a density band`;
  else if (ringKeys.note) mode = `${formatInt(stats.keys)} keys: ${ringKeys.note}`;
  else mode = ringKeys.error ? `Key density unavailable: ${ringKeys.error}` : '';
  const params = Object.entries(config.params || {}).map(([k, v]) => `${k.replace(/_/g, ' ')} ${formatInt(v)}`).join(', ');
  $('ring-mode').textContent = [
    config.algorithm + (params ? ` (${params})` : ''),
    (config.replicas || 1) > 1 ? `${config.replicas} replicas` : '',
    mode,
  ].filter(Boolean).join(' · ');
  $('ring-space').textContent = (space.hasLayout || !nodes.length
    ? `Drawn: ${space.title}.`
    : `${algo ? algo.name : config.algorithm} has no ring: each node is drawn as a sector of its share of the space, keys at their hash.`)
    + (nodes.length > 60 ? ' Node names: hover the ring, or focus it and use the arrow keys.' : '');
  $('ring-legend').hidden = !(stats.keys > 0 && nodes.length > 0);
  $('ring-legend-density').hidden = !ringKeys.density;
  if (ringKeys.density) $('ring-legend-density').textContent = `Key band: keys per slice (${ringKeys.density.bins} slices) against the mean, the dashed circle; a slice twice as full reaches the inner edge.`;
  strip.setData(layout.runs || null, space, state.dark);
  $('ring-empty').hidden = readOnly || nodes.length > 0;

  $('past-loading').hidden = true;

  await nextFrame();
  if (generation !== state.generation) return;
  nodesTable.set(nodes, { dark: state.dark, readOnly, replicas: config.replicas });
  fillNodeFilter(nodes, state.keysQuery.node);
  domainsPanel.set(locations, { readOnly, located: nodes.some((n) => Array.isArray(n.location) && n.location.length > 0) });
  if (keysPage && !keysPage.error) keysTable.set(keysPage, state.keysQuery, { dark: state.dark, readOnly, replicas: config.replicas });
  else if (keysPage) $('keys-body').replaceChildren(el('tr', null, el('td', { colSpan: 5, className: 'error' }, keysPage.error)));

  await nextFrame();
  if (generation !== state.generation) return;
  renderStats(stats, state.dark);
  renderLoad(stats, at === null ? undefined : at, state.dark);

  // The trace follows what is shown: the same moment, the same layout.
  if ($('lookup-steps').dataset.key !== undefined && $('lookup-key').value !== '') runTrace();
}

/** One page of the keys table for `at`; null (and a message) on failure. */
async function fetchKeysPage(at) {
  const q = state.keysQuery;
  try {
    let data = await api.keys({ prefix: q.prefix, node: q.node, order: q.order, offset: q.offset, limit: q.limit, at });
    if (data.keys.length === 0 && q.offset > 0 && data.total > 0) {
      q.offset = Math.max(0, Math.floor((data.total - 1) / q.limit) * q.limit);
      data = await api.keys({ prefix: q.prefix, node: q.node, order: q.order, offset: q.offset, limit: q.limit, at });
    }
    return data;
  } catch (err) {
    return { error: err.message };
  }
}

/** Reloads only the keys table (paging, filters), for the moment on show. */
async function loadKeysPage() {
  if (state.view.at === undefined) return; // a full load is under way and brings its page
  const generation = ++state.keysGeneration;
  const viewGeneration = state.generation;
  const data = await fetchKeysPage(atQuery(state.view.at));
  if (generation !== state.keysGeneration || viewGeneration !== state.generation) return;
  if (data.error) {
    $('keys-body').replaceChildren(el('tr', null, el('td', { colSpan: 5, className: 'error' }, data.error)));
    return;
  }
  keysTable.set(data, state.keysQuery, { dark: state.dark, readOnly: state.view.at !== null, replicas: state.view.config ? state.view.config.replicas : 1 });
}

/**
 * At most one refresh in flight; a request made meanwhile runs once after it.
 * A steady stream of operations (a script adding 1000 nodes) then costs one
 * reload at a time instead of a pile of overlapping ones.
 */
let refreshing = null;
let refreshAgain = false;
function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      await loadView();
    } while (refreshAgain);
    refreshing = null;
  })();
  return refreshing;
}

const scheduleRefresh = debounce(() => refresh(), 100, 600);

function setConnectionError(err) {
  const c = $('connection');
  if (err) {
    c.dataset.state = 'down';
    c.textContent = `Server unreachable: ${err.message}`;
  } else if (c.dataset.state === 'down') {
    c.dataset.state = sse && sse.readyState === sse.OPEN ? 'live' : 'connecting';
    c.textContent = c.dataset.state === 'live' ? 'Live' : 'Connecting…';
  }
}

// ---- operations, history, what moved ----------------------------------------

async function loadHistory() {
  let after = 0;
  for (let page = 0; page < 200; page++) {
    const { operations } = await api.operations(after, 1000);
    for (const op of operations) addOperation(op);
    if (operations.length < 1000) break;
    after = operations[operations.length - 1].id;
  }
  renderHistory();
  renderTimeline();
}

function addOperation(op) {
  if (state.ops.has(op.id)) return false;
  state.ops.set(op.id, op);
  if (op.id > state.lastId) state.lastId = op.id;
  if (op.type === 'add_node') {
    // Colour numbers follow the order of additions (see format.js); a name
    // added again keeps its first number.
    if (!state.nodeOrder.has(op.subject)) state.nodeOrder.set(op.subject, state.nodeOrder.size);
  }
  return true;
}

/** Called for each operation from SSE, from our own requests and catch-ups. */
function onOperation(op) {
  if (!op || typeof op.id !== 'number') return;
  if (!addOperation(op)) return;
  scheduleHistory();
  if (state.at === null) {
    if (op.id === state.lastId) showOperation(op);
    scheduleRefresh();
    scheduleExplain();
  }
  if (op.type === 'insert_keys') showProgress(null);
}

const scheduleHistory = debounce(() => { renderHistory(); renderTimeline(); }, 100, 800);

/**
 * "What moved", at once, from the operation alone: its title, how many
 * keys moved and, for an added node, from where (that is every pair). The
 * rest is marked as loading until explain() brings it.
 */
function showOperation(op) {
  state.explainedId = op.id;
  state.detailedId = 0;
  $('moved-operation').textContent = `After #${op.id} · ${describeOperation(op)} · ${formatTime(op.at)}`;
  $('moved-operation').title = $('moved-operation').textContent;
  const replicaMoves = op.replica_moves ? ` · ${formatInt(op.replica_moves)} replica ${op.replica_moves === 1 ? 'copy' : 'copies'} added` : '';
  $('moved-summary').textContent = movedCount(op.keys_moved) + replicaMoves;
  $('moved-requests').textContent = [requestsSentence(op), unavailableSentence(op.unavailable_after)].filter(Boolean).join(' ');
  const known = op.type === 'add_node' && Array.isArray(op.moved_from);
  if (Array.isArray(op.pairs)) renderPairs(op.pairs, op.keys_moved, false);
  else renderPairs(known ? groupMoves(op.moved_from.map((m) => ({ from: m.node, to: op.subject, keys: m.keys }))) : [], op.keys_moved, false);
  renderMovedKeys([], 0);
  renderCompare(null, null);
  ring.clearHighlights();
  $('moved-loading').hidden = false;
  $('moved-loading').textContent = op.keys_moved > 0 ? 'Working out where the keys went and the statistics before and after…' : 'Reading the statistics before and after…';
}

function showNoOperation() {
  state.explainedId = 0;
  $('moved-operation').textContent = state.lastId ? 'The empty start, before any operation.' : 'No change yet.';
  $('moved-operation').title = '';
  $('moved-summary').textContent = '';
  $('moved-requests').textContent = '';
  $('moved-loading').hidden = true;
  renderPairs([], 0, false);
  renderMovedKeys([], 0);
  renderCompare(null, null);
  ring.clearHighlights();
}

// Details read the state before and after an operation (?at=), which costs
// the server more than a live read: wait for a pause in a burst and keep
// one explanation in flight, always for the operation on show.
let explaining = false;
async function explainLatest() {
  if (explaining) return;
  explaining = true;
  try {
    let id;
    while ((id = state.at === null ? state.lastId : state.at) && id !== state.detailedId) {
      await explain(id);
    }
  } finally {
    explaining = false;
  }
}
const scheduleExplain = debounce(explainLatest, 250, 2000);

async function catchUp() {
  try {
    let after = state.lastId;
    for (let page = 0; page < 50; page++) {
      const { operations } = await api.operations(after, 1000);
      for (const op of operations) onOperation(op);
      if (operations.length < 1000) break;
      after = operations[operations.length - 1].id;
    }
  } catch { /* the next event or reconnect tries again */ }
}

const EMPTY_STATS = { nodes: 0, keys: 0, mean: 0, stddev: 0, cv: 0, min: 0, max: 0, max_over_mean: 0, per_node: [] };

async function statsAt(id) {
  if (id <= 0) return EMPTY_STATS;
  return api.stats(id === state.lastId ? undefined : id);
}

/** Works out the from→to pairs of one operation's moves, exactly when it can. */
async function movePairs(op, detail, before, after) {
  const total = detail.moves_total ?? op.keys_moved;
  // The server's exact pairs over every move (API.md v4), largest first:
  // never a sample of the first pages of moves (issue 25 item 2).
  if (Array.isArray(op.pairs)) return { pairs: op.pairs, partial: false };
  if (Array.isArray(detail.pairs)) return { pairs: detail.pairs, partial: false };
  if (detail.moves.length >= total) return { pairs: groupMoves(detail.moves), partial: false };
  if (op.type === 'add_node' && Array.isArray(op.moved_from)) {
    return { pairs: groupMoves(op.moved_from.map((m) => ({ from: m.node, to: op.subject, keys: m.keys }))), partial: false };
  }
  if (op.type === 'remove_node') {
    const was = new Map(before.per_node.map((p) => [p.name, p.keys]));
    const moves = [];
    for (const p of after.per_node) {
      const gained = p.keys - (was.get(p.name) || 0);
      if (gained > 0) moves.push({ from: op.subject, to: p.name, keys: gained });
    }
    const counted = moves.reduce((s, m) => s + m.keys, 0);
    if (counted === total) return { pairs: groupMoves(moves), partial: false };
  }
  // General case: read the move list page by page, up to a bound.
  const all = [...detail.moves];
  while (all.length < total && all.length < MAX_PAIR_MOVES) {
    const more = await api.operation(op.id, all.length);
    if (!more.moves.length) break;
    all.push(...more.moves);
  }
  return { pairs: groupMoves(all), partial: all.length < total };
}

/** The details of operation `id` for "What moved"; dropped if the view moved on. */
async function explain(id) {
  const op = state.ops.get(id);
  if (!op) {
    state.detailedId = id;
    return;
  }
  if (state.explainedId !== id) showOperation(op);
  state.detailedId = id;
  const current = () => state.explainedId === id;
  try {
    const detail = op.keys_moved > 0 ? await api.operation(op.id) : { moves: [], moves_total: 0 };
    if (!current()) return;
    const [before, after] = await Promise.all([statsAt(op.id - 1), statsAt(op.id)]);
    if (!current()) return;
    const total = detail.moves_total ?? op.keys_moved;
    const { pairs, partial } = total > 0 ? await movePairs(op, detail, before, after) : { pairs: [], partial: false };
    if (!current()) return;
    renderPairs(pairs, total, partial);
    renderMovedKeys(detail.moves.slice(0, 200), total);
    renderCompare(before, after);
    $('moved-loading').hidden = true;
    if (total > 0 && (state.at ?? state.lastId) === id) ring.showFlow(pairs);
  } catch (err) {
    if (!current()) return;
    $('moved-loading').hidden = false;
    $('moved-loading').textContent = `Details unavailable: ${err.message}`;
  }
}

function renderMovedKeys(moves, total) {
  const box = $('moved-keys');
  if (!moves.length) {
    box.replaceChildren();
    return;
  }
  const more = total > moves.length ? ` (the first ${formatInt(moves.length)} of ${formatInt(total)})` : '';
  const items = moves.map((m) => el('li', null, [
    el('span', { className: 'mono' }, displayName(m.key)), ` ${displayName(m.from)} → ${displayName(m.to)}`,
  ]));
  box.replaceChildren(el('details', null, [
    el('summary', null, `List the moved keys${more}`),
    el('ul', null, items),
  ]));
}

function movedFromText(op) {
  const copies = op.replica_moves ? `${formatInt(op.replica_moves)} replica ${op.replica_moves === 1 ? 'copy' : 'copies'} added` : '';
  if (!op.keys_moved) return copies ? `${copies}; no owner changed` : 'nothing moved';
  if (copies) return `${formatInt(op.keys_moved)} moved, ${copies}`;
  const from = (op.moved_from || []).slice(0, 4).map((m) => `${displayName(m.node)} ${formatInt(m.keys)}`).join(', ');
  const more = (op.moved_from || []).length > 4 ? ', …' : '';
  return `${formatInt(op.keys_moved)} moved${from ? ` (from ${from}${more})` : ''}`;
}

function renderHistory() {
  const list = $('history-list');
  const ids = [...state.ops.keys()].sort((a, b) => b - a);
  const shown = ids.slice(0, state.historyShown);
  const openIds = new Set([...list.querySelectorAll('li[data-open="true"]')].map((li) => Number(li.dataset.id)));
  const items = shown.map((id) => {
    const op = state.ops.get(id);
    const li = el('li', { dataset: { id: String(id) } });
    if (state.at === id) li.classList.add('current');
    const whatText = describeOperation(op);
    const line = el('div', { className: 'op-line' }, [
      el('span', { className: 'op-id' }, `#${id}`),
      el('span', { className: 'op-what', title: whatText }, whatText),
    ]);
    const movesButton = el('button', {
      type: 'button', className: 'linklike op-moves', 'aria-expanded': 'false',
    }, movedFromText(op));
    if (!op.keys_moved) movesButton.disabled = true;
    const view = el('button', { type: 'button', className: 'linklike op-moves' }, `see state after #${id}`);
    view.addEventListener('click', () => setAt(id === state.lastId ? null : id));
    const detail = el('div', { className: 'op-detail', hidden: true });
    movesButton.addEventListener('click', () => toggleMoves(li, op, movesButton, detail));
    const time = el('time', { className: 'op-time', dateTime: op.at }, formatTime(op.at));
    li.append(line, el('div', { className: 'op-line' }, [movesButton, view, time]), detail);
    diffPicks.decorate(li, id);
    if (openIds.has(id) && op.keys_moved) toggleMoves(li, op, movesButton, detail);
    return li;
  });
  if (!items.length) items.push(el('li', { className: 'muted' }, 'No operations yet.'));
  list.replaceChildren(...items);
  $('history-count').textContent = `${formatInt(ids.length)} ${ids.length === 1 ? 'operation' : 'operations'}`;
  $('history-more').hidden = ids.length <= state.historyShown;
}

async function toggleMoves(li, op, button, detail, offset = 0) {
  if (offset === 0 && li.dataset.open === 'true') {
    li.dataset.open = 'false';
    detail.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    return;
  }
  li.dataset.open = 'true';
  button.setAttribute('aria-expanded', 'true');
  detail.hidden = false;
  if (offset === 0) detail.replaceChildren(el('p', { className: 'muted' }, 'Loading moves…'));
  try {
    const d = await api.operation(op.id, offset || undefined);
    const items = d.moves.map((m) => el('li', null, [
      el('span', { className: 'mono' }, displayName(m.key)), ` : ${displayName(m.from)} → ${displayName(m.to)}`,
    ]));
    let ul = detail.querySelector('ul');
    if (offset === 0 || !ul) {
      ul = el('ul');
      detail.replaceChildren(ul);
    }
    ul.append(...items);
    detail.querySelector('.more-moves')?.remove();
    const shownCount = offset + d.moves.length;
    const total = d.moves_total ?? op.keys_moved;
    if (shownCount < total && d.moves.length) {
      const more = el('button', { type: 'button', className: 'ghost more-moves' }, `Next moves (${formatInt(shownCount)} of ${formatInt(total)} shown)`);
      more.addEventListener('click', () => toggleMoves(li, op, button, detail, shownCount));
      detail.appendChild(more);
    }
  } catch (err) {
    detail.replaceChildren(el('p', { className: 'error' }, err.message));
  }
}

$('history-more').addEventListener('click', () => {
  state.historyShown += HISTORY_STEP;
  renderHistory();
});

// ---- timeline ----------------------------------------------------------------

const timeline = $('timeline');

function renderTimeline() {
  timeline.max = String(state.lastId);
  if (document.activeElement !== timeline || state.at === null) timeline.value = String(state.at === null ? state.lastId : state.at);
  timeline.setAttribute('aria-valuetext', state.at === null ? `live, after operation ${state.lastId}` : `after operation ${state.at}`);
  const where = $('timeline-where');
  const past = state.at !== null;
  document.body.classList.toggle('past', past);
  $('past-banner').hidden = !past;
  $('back-live').hidden = !past;
  $('revert-here').hidden = !past;
  if (past) {
    const op = state.ops.get(state.at);
    const what = state.at === 0 ? 'the empty start' : op ? `#${state.at} · ${describeOperation(op)}` : `#${state.at}`;
    where.textContent = `Past: after ${what}`;
    where.title = where.textContent;
    $('past-text').textContent = state.at === 0
      ? `the ring before any operation (now at #${state.lastId})`
      : `as it was after operation #${state.at} of ${state.lastId}${op ? ` (${describeOperation(op)}, ${formatTime(op.at)})` : ''}`;
  } else {
    where.textContent = state.lastId ? `Live · after #${state.lastId}` : 'Live · no operations yet';
    where.title = '';
  }
  for (const c of document.querySelectorAll('.mutating')) {
    if (past) c.setAttribute('disabled', '');
    else if (!c.dataset.busy && !c.dataset.locked) c.removeAttribute('disabled');
  }
}

function setAt(at) {
  const next = at === null || at >= state.lastId ? null : Math.max(0, at);
  if (next === state.at) return;
  state.at = next;
  setError('revert-error', '');
  renderTimeline();
  renderHistory();
  ring.clearHighlights();
  ring.setPath(null);
  refresh();
  // "What moved" follows the state on show: the change that led to it.
  const id = next === null ? state.lastId : next;
  const op = state.ops.get(id);
  if (op) {
    showOperation(op);
    scheduleExplain();
  } else {
    showNoOperation();
  }
}

const timelineInput = debounce(() => setAt(Number(timeline.value)), 120, 500);
timeline.addEventListener('input', timelineInput);
timeline.addEventListener('change', () => setAt(Number(timeline.value)));
$('back-live').addEventListener('click', () => setAt(null));
$('revert-here').addEventListener('click', async () => {
  const to = state.at;
  if (to === null) return;
  const button = $('revert-here');
  button.disabled = true;
  $('past-loading').hidden = false;
  $('past-loading').textContent = `Reverting to the state after #${to}…`;
  try {
    const answer = await api.revert(to);
    setError('revert-error', '');
    // The revert may already be known from the event stream (it came while
    // the past was on show): show it now, whatever came first.
    addOperation(answer.operation);
    state.at = null;
    renderTimeline();
    renderHistory();
    showOperation(state.ops.get(state.lastId));
    refresh();
    scheduleExplain();
  } catch (err) {
    setError('revert-error', err.message);
  } finally {
    button.disabled = false;
    if (state.at !== null) $('past-loading').hidden = true;
  }
});

// ---- controls ----------------------------------------------------------------

/**
 * Runs one change request with its button busy and its error slot cleared.
 * A refusal goes to `errorId` (next to `input`), or to onError if given.
 */
async function mutate(button, errorId, input, run, onError) {
  if (errorId) setError(errorId, '', input);
  button.dataset.busy = '1';
  button.disabled = true;
  try {
    const answer = await run();
    if (answer && answer.operation) onOperation(answer.operation);
    return answer;
  } catch (err) {
    const message = err instanceof ApiError ? err.message : String(err.message || err);
    if (onError) onError({ message });
    else setError(errorId, humanMessage(message), input);
    return null;
  } finally {
    delete button.dataset.busy;
    button.disabled = state.at !== null;
  }
}

/**
 * The value of a number box as the API expects it. Anything that is not a
 * number is sent as typed, so that the server's own message explains it.
 */
function numberValue(input) {
  const n = input.valueAsNumber;
  return Number.isFinite(n) ? n : input.value;
}

const nodeInput = $('node-name');
const weightInput = $('node-weight');
$('node-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = nodeInput.value;
  setError('weight-error', '', weightInput);
  // A number box reports "1e" as empty; it is not the default weight.
  if (weightInput.validity.badInput) {
    setError('node-error', '', nodeInput);
    setError('weight-error', 'Weight must be a number, such as 1, 2 or 0.5.', weightInput);
    weightInput.focus();
    return;
  }
  setError('node-error', '', nodeInput);
  const weight = weightInput.value.trim() === '' ? undefined : numberValue(weightInput);
  const ok = await mutate($('add-node'), null, null, () => api.addNode(name, weight), ({ message }) => {
    if (/weight/i.test(message) && !/already exists/.test(message)) {
      setError('node-error', '', nodeInput);
      setError('weight-error', humanMessage(message), weightInput);
    } else {
      setError('node-error', humanMessage(message), nodeInput);
    }
  });
  if (ok) {
    setError('node-error', '', nodeInput);
    nodeInput.select();
  }
  showNameWarning(ok);
});

/**
 * The server's warning about a node it added ("looks the same as …", a
 * name equal to another in NFC form), beside the node form; a string or
 * {message}. Cleared by the next add.
 */
function showNameWarning(answer) {
  const w = answer && answer.warning;
  const text = !w ? '' : (typeof w === 'string' ? w : String(w.message || ''));
  $('node-warning').textContent = text ? `${displayName(answer.node.name)}: ${visibleText(text)}` : '';
}
$('remove-node').addEventListener('click', async () => {
  const name = nodeInput.value;
  setError('weight-error', '', weightInput);
  await mutate($('remove-node'), 'node-error', nodeInput, () => api.removeNode(name));
});

const keyInput = $('key-name');
$('key-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const key = keyInput.value;
  const ok = await mutate($('insert-key'), 'key-error', keyInput, () => api.insertKey(key));
  if (ok) keyInput.select();
});
const pasteInput = $('keys-paste');
$('keys-paste-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  // One key a line, exactly as written (a key may hold spaces); empty
  // lines are left out.
  const keys = pasteInput.value.split(/\r?\n/).filter((k) => k !== '');
  $('keys-paste-result').textContent = '';
  if (!keys.length) {
    setError('keys-paste-error', 'Paste one key a line first.', pasteInput);
    return;
  }
  const answer = await mutate($('keys-paste-insert'), 'keys-paste-error', pasteInput, () => api.insertKeys(keys));
  if (answer) {
    $('keys-paste-result').textContent = `Inserted ${formatInt(answer.inserted)} of ${formatInt(keys.length)} ${keys.length === 1 ? 'key' : 'keys'}${answer.skipped ? `; ${formatInt(answer.skipped)} skipped as already stored or repeated` : ''}.`;
  }
});
// A file of keys, one a line (issue 25 item 13): one POST /api/keys
// {"keys"}, one operation. A body over the server's 16 MiB is refused by
// it (413): the page says so before sending, with the way out.
const BODY_LIMIT = 16 * 1024 * 1024;
const fileInput = $('keys-file');
let fileKeys = null;
function keysOfText(text) {
  return text.replace(/^\uFEFF/, '').split(/\r?\n/).filter((k) => k !== '');
}
fileInput.addEventListener('change', async () => {
  const file = fileInput.files && fileInput.files[0];
  const button = $('keys-file-insert');
  setError('keys-paste-error', '', fileInput);
  $('keys-paste-result').textContent = '';
  fileKeys = null;
  button.hidden = true;
  if (!file) return;
  const keys = keysOfText(await file.text());
  if (fileInput.files[0] !== file) return; /* another file was picked meanwhile */
  if (!keys.length) {
    setError('keys-paste-error', `${file.name} holds no key (one a line, empty lines left out).`, fileInput);
    return;
  }
  const size = new Blob([JSON.stringify({ keys })]).size;
  if (size > BODY_LIMIT) {
    setError('keys-paste-error', `${file.name}: ${formatInt(keys.length)} keys make a request of ${(size / 1048576).toFixed(1)} MiB, over the server's 16 MiB. Split the file, or use ringsim key add --file ${file.name}, which streams it.`, fileInput);
    return;
  }
  fileKeys = { keys, name: file.name };
  button.textContent = `Insert ${formatInt(keys.length)} ${keys.length === 1 ? 'key' : 'keys'} from ${file.name}`;
  button.hidden = false;
});
$('keys-file-insert').addEventListener('click', async () => {
  if (!fileKeys) return;
  const { keys, name } = fileKeys;
  $('keys-paste-result').textContent = '';
  const answer = await mutate($('keys-file-insert'), 'keys-paste-error', fileInput, () => api.insertKeys(keys));
  if (answer) {
    $('keys-paste-result').textContent = `${name}: inserted ${formatInt(answer.inserted)} of ${formatInt(keys.length)} ${keys.length === 1 ? 'key' : 'keys'}${answer.skipped ? `; ${formatInt(answer.skipped)} skipped as already stored or repeated` : ''}, one operation.`;
    fileKeys = null;
    fileInput.value = '';
    $('keys-file-insert').hidden = true;
  }
});
pasteInput.addEventListener('input', () => {
  const n = pasteInput.value.split(/\r?\n/).filter((k) => k !== '').length;
  $('keys-paste-insert').textContent = n ? `Insert ${formatInt(n)} ${n === 1 ? 'key' : 'keys'}` : 'Insert these keys';
});

$('delete-key').addEventListener('click', async () => {
  const key = keyInput.value;
  await mutate($('delete-key'), 'key-error', keyInput, () => api.deleteKey(key));
});

const countInput = $('key-count');
$('generate-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  if (countInput.validity.badInput) {
    setError('generate-error', 'Number of keys must be a whole number, such as 1000.', countInput);
    return;
  }
  const count = numberValue(countInput);
  // Continue numbering after the keys already stored, so that a second
  // "Generate keys" adds new keys instead of skipping duplicates.
  const start = state.live.keys;
  $('generate-result').textContent = '';
  if (typeof count === 'number' && count >= 20000) showProgress({ type: 'insert_keys', done: 0, total: count });
  const answer = await mutate($('generate-keys'), 'generate-error', countInput, () => api.generateKeys(count, 'key-', start));
  showProgress(null);
  if (answer) {
    const last = start + answer.inserted + answer.skipped - 1;
    $('generate-result').textContent = `Inserted ${formatInt(answer.inserted)} keys (key-${start} … key-${last})${answer.skipped ? `, ${formatInt(answer.skipped)} skipped as already stored` : ''}.`;
  }
});

// In-page confirmation (window.confirm is blocked in some embeddings and is
// not styleable); resolves true when the confirming button is pressed.
const dialog = $('confirm-dialog');
export function confirmInPage(title, text) {
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
  });
}

$('reset').addEventListener('click', async () => {
  const yes = await confirmInPage('Reset the ring?',
    'Every node and key will be removed. The configuration and the history stay, so you can revert to an earlier state afterwards.');
  if (!yes) return;
  await mutate($('reset'), 'reset-error', null, () => api.reset());
});

// ---- keys table controls ----------------------------------------------------------

function pickKey(key) {
  $('lookup-key').value = key;
  runTrace();
}

$('keys-prefix').addEventListener('input', debounce(() => {
  state.keysQuery.prefix = $('keys-prefix').value;
  state.keysQuery.offset = 0;
  loadKeysPage();
}, 200));
$('keys-node').addEventListener('change', () => {
  state.keysQuery.node = $('keys-node').value;
  state.keysQuery.offset = 0;
  loadKeysPage();
});
$('keys-prev').addEventListener('click', () => {
  state.keysQuery.offset = Math.max(0, state.keysQuery.offset - KEYS_PAGE);
  loadKeysPage();
});
$('keys-next').addEventListener('click', () => {
  state.keysQuery.offset += KEYS_PAGE;
  loadKeysPage();
});
$('keys-jump').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('keys-page-input');
  const max = Number(input.max) || 1;
  const page = Math.min(max, Math.max(1, Math.round(input.valueAsNumber) || 1));
  input.value = String(page);
  state.keysQuery.offset = (page - 1) * KEYS_PAGE;
  loadKeysPage();
});

// ---- lookup and ring selection ----------------------------------------------------------

function runTrace() {
  const key = $('lookup-key').value;
  // Only against a view that is loaded: a trace while the state of another
  // moment is on its way would mix the two. The load re-runs it.
  if (state.view.at === undefined || state.view.at !== state.at) {
    $('lookup-steps').dataset.key = key;
    return null;
  }
  const space = state.view.space;
  const algo = catalogueEntry(state.view.config);
  return traceKey(key, { ring, at: state.view.at, space, keyHash: algo ? algo.key_hash : '', nearest: !!algo && algo.point_rule === 'nearest' }).then((answer) => {
    if (answer && space.kind === 'table' && answer.coordinate !== null) strip.setFocus(Number(answer.coordinate), key);
    return answer;
  });
}

$('lookup-form').addEventListener('submit', (e) => {
  e.preventDefault();
  runTrace();
});
$('lookup-key').addEventListener('input', debounce(() => {
  if ($('lookup-key').value !== '') runTrace();
  else {
    delete $('lookup-steps').dataset.key;
    clearTrace(ring);
    strip.setFocus(null);
  }
}, 350));

function showSelection(hit) {
  const box = $('ring-selection');
  if (!hit) {
    box.replaceChildren();
    return;
  }
  if (hit.kind === 'key') {
    pickKey(hit.key);
    box.replaceChildren(el('p', null, ['Key ', el('strong', null, displayName(hit.key)), ' — its trace is under “Lookup trace”.']));
    return;
  }
  if (hit.kind === 'bin') {
    box.replaceChildren(el('dl', null, [
      el('dt', null, 'Slice'), el('dd', null, `${formatInt(hit.count)} keys`),
      el('dt', null, 'Owner at the middle'), el('dd', null, nameSpan(hit.node)),
    ]));
    return;
  }
  const rows = [];
  const add = (k, v) => rows.push(el('dt', null, k), el('dd', null, v));
  const lines = hit.lines || [['', `Point of ${displayName(hit.node)}`]];
  for (const [k, v] of lines) add(k || 'What', v);
  const node = state.view.nodes.find((n) => n.name === hit.node);
  if (node) {
    add('Node', nameSpan(node.name));
    add('Node’s share', `${(node.key_share * 100).toFixed(1)}% of keys, ${(node.arc_share * 100).toFixed(1)}% of the space${node.owns !== undefined && state.view.config.replicas > 1 ? `, owns ${(node.owns * 100).toFixed(1)}% with replicas` : ''}`);
    if (Array.isArray(node.tokens)) {
      const first = node.tokens.slice(0, 6).join(', ');
      add(`Tokens (${formatInt(node.tokens.length)})`, node.tokens.length > 6 ? `${first}, … ${formatInt(node.tokens.length - 6)} more` : first);
    } else if (Array.isArray(node.slots)) {
      const first = node.slots.slice(0, 6).map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
      add(`Slot ranges (${formatInt(node.slots.length)})`, node.slots.length > 6 ? `${first}, …` : first);
    } else {
      add('Points', formatInt(node.points));
    }
  }
  box.replaceChildren(el('dl', null, rows));
}

/** What the server's progress events are about, by their type. */
const PROGRESS_LABELS = {
  insert_keys: 'Inserting keys',
  delete_keys: 'Deleting keys',
  revert: 'Reverting',
  replay: 'Replaying the log',
  check: 'Checking',
};

/**
 * Progress of a long operation (from any tab or the CLI); null hides it.
 * Key insertion shows under "Generate keys"; replays of the log (time
 * travel) in the past-state banner, or beside "What moved" whose details
 * they serve.
 */
function showProgress(p) {
  if (p && p.type === 'traffic') { // a replay: a read, shown in its panel
    showTrafficProgress(p);
    return;
  }
  const bar = $('generate-progress');
  const text = $('generate-progress-text');
  const running = p && p.total > 0 && p.done < p.total;
  const what = p ? PROGRESS_LABELS[p.type] ?? 'Working' : '';
  const words = running ? `${what}: ${formatInt(p.done)} of ${formatInt(p.total)}…` : '';
  // While this page asks a preview, the server's progress of that kind of
  // change is the preview's (a read: nothing to cancel); it shows there.
  const asking = $('preview-panel').dataset.asking;
  if (p && asking && ['add_node', 'remove_node', 'configure', 'import'].includes(p.type)) {
    if (running) $('preview-summary').textContent = `Working out what would happen: ${formatInt(p.done)} of ${formatInt(p.total)}…`;
    return;
  }
  // Any long operation can be cancelled: the server rolls it back whole.
  $('cancel-op').hidden = !running || p.type === 'replay' || p.type === 'check';
  if (!p || p.type === 'insert_keys' || p.type === 'delete_keys') {
    bar.hidden = !running;
    text.hidden = !running;
    if (running) {
      bar.max = p.total;
      bar.value = p.done;
      text.textContent = words;
    }
    return;
  }
  if (!running) return;
  if (state.at !== null && state.view.at !== state.at) {
    $('past-loading').hidden = false;
    $('past-loading').textContent = `Loading the state after #${state.at}: ${words}`;
  } else if (!$('moved-loading').hidden) {
    $('moved-loading').textContent = words;
  }
}

// ---- live updates ----------------------------------------------------------------

let sse = null;
// "Live" means connected and showing the current state: the connection line
// says so only once the first view (controls, ring, tables) is drawn.
let markLoaded;
const firstLoad = new Promise((resolve) => { markLoaded = resolve; });

function connect() {
  const c = $('connection');
  $('cancel-op').onclick = () => {
    $('cancel-op').hidden = true;
    api.cancel().catch(() => { /* the operation may have ended meanwhile */ });
  };
  sse = api.events();
  sse.addEventListener('open', async () => {
    catchUp();
    await firstLoad;
    // A first load that failed keeps its "Server unreachable" line until a
    // load succeeds (setConnectionError turns it to Live then).
    if (sse.readyState !== sse.OPEN || c.dataset.state === 'down') return;
    c.dataset.state = 'live';
    c.textContent = 'Live';
  });
  sse.addEventListener('error', () => {
    c.dataset.state = sse.readyState === sse.CLOSED ? 'down' : 'connecting';
    c.textContent = sse.readyState === sse.CLOSED ? 'Disconnected — reload to retry' : 'Reconnecting…';
    if (sse.readyState === sse.CLOSED) setTimeout(connect, 3000);
  });
  sse.addEventListener('operation', (e) => {
    try {
      onOperation(JSON.parse(e.data));
    } catch { /* a malformed event is ignored */ }
  });
  // The server says this page is too far behind to catch up event by event
  // (more than 1,000 operations, say after a restart while the command line
  // worked): read the log and the state again, then go on live.
  sse.addEventListener('reload', async () => {
    try {
      await loadHistory();
    } catch (err) {
      setConnectionError(err);
    }
    refresh();
  });
  sse.addEventListener('progress', (e) => {
    try {
      showProgress(JSON.parse(e.data));
    } catch { /* ignore */ }
  });
}

// ---- start -------------------------------------------------------------------------

setNodeOrder(state.nodeOrder);
setupScenarios({ api, confirmInPage, getState: () => state, onOperation, refresh });
setupImport({ api, onOperation, refresh });
lab = setupLab({
  ring, placement, getView: () => state.view, confirmInPage,
});
setupLoad({ ring });
setupTraffic();
setupTrace();

async function start() {
  connect();
  try {
    await loadHistory();
  } catch (err) {
    setConnectionError(err);
  }
  await refresh();
  markLoaded();
  const op = state.ops.get(state.lastId);
  if (op) {
    showOperation(op);
    explainLatest();
  }
}

start();

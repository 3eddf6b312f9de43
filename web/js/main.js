// ringsim page: loads the state, keeps it live through server-sent events,
// wires the controls and the timeline.
//
// One refresh() reads everything the page shows (config, nodes, ring points,
// statistics, the keys drawn on the ring, the current keys page), either live
// or "as it was after operation N" (?at=N). Operation events from any tab or
// the command line schedule a debounced refresh, so a burst of changes costs
// one reload. The newest operation is then explained: which keys moved from
// where to where, animated on the ring for at most MAX_ANIMATED keys.

import { api, ApiError, eventsUrl } from './api.js';
import { $, el, setError, debounce } from './dom.js';
import {
  describeOperation, formatInt, formatTime, groupMoves, movedSummary, nodeLabel, setNodeOrder, successorIndex,
} from './format.js';
import { RingView } from './ring.js';
import { positionOf } from './sha256.js';
import {
  NodesTable, renderKeys, fillNodeFilter, renderStats, renderCompare,
} from './views.js';
import { traceKey } from './lookup.js';
import { setupScenarios } from './scenarios.js';

const DOT_LIMIT = 1500;     // up to this many keys are drawn one by one
const MAX_ANIMATED = 200;   // moved keys animated per change
const KEYS_PAGE = 50;
const MAX_PAIR_MOVES = 10000; // moves read to group a general change into pairs
const HISTORY_STEP = 100;   // history rows shown per "Older operations"

const state = {
  at: null,               // null: live; a number: read-only view after that operation
  lastId: 0,              // newest operation known
  ops: new Map(),         // id -> operation
  historyShown: HISTORY_STEP,
  live: { keys: 0, nodes: [] },
  view: { config: null, nodes: [], points: [], stats: null },
  keysQuery: { prefix: '', node: '', offset: 0, limit: KEYS_PAGE },
  explainedId: 0,
  nodeOrder: new Map(), // node name -> colour number
  generation: 0,
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
  nodesTable.set(state.view.nodes, state.dark);
  if (state.view.stats) renderStats(state.view.stats, state.dark);
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

const nodesTable = new NodesTable({
  onPick: (name) => {
    state.keysQuery.node = name;
    state.keysQuery.offset = 0;
    $('keys-node').value = name;
    loadKeysPage();
    $('keys-heading').scrollIntoView({ behavior: 'smooth', block: 'start' });
  },
});

state.dark = isDark();
themeButton.textContent = state.dark ? 'Light theme' : 'Dark theme';
themeButton.setAttribute('aria-pressed', String(state.dark));

function atParam() {
  return state.at === null ? undefined : state.at;
}

// ---- loading ---------------------------------------------------------------

async function loadRingKeys(total, at) {
  if (total === 0) return { keys: [], density: null };
  if (total <= DOT_LIMIT) {
    const keys = [];
    for (let offset = 0; offset < total && offset < DOT_LIMIT; offset += 1000) {
      const page = await api.keys({ offset, limit: 1000, at });
      keys.push(...page.keys);
      if (page.keys.length < 1000) break;
    }
    return { keys, density: null };
  }
  const bins = Math.max(90, Math.min(1440, Math.round(ring.size * 1.2) || 720));
  try {
    return { keys: null, density: await api.density(bins, at) };
  } catch (err) {
    return { keys: null, density: null, error: err.message };
  }
}

async function loadView() {
  const generation = ++state.generation;
  const at = atParam();
  try {
    const [config, nodesAnswer, ringAnswer, stats] = await Promise.all([
      api.config(at), api.nodes(at), api.ring(at), api.stats(at),
    ]);
    const ringKeys = await loadRingKeys(stats.keys, at);
    if (generation !== state.generation) return;
    state.view = { config, nodes: nodesAnswer.nodes, points: ringAnswer.points, stats };
    if (at === undefined) state.live = { keys: stats.keys, nodes: nodesAnswer.nodes };

    if (document.activeElement !== $('points-per-node') || state.at !== null) {
      $('points-per-node').value = config.points_per_node;
    }
    const caption = state.at === null ? '' : `after #${state.at}`;
    ring.setData({
      points: ringAnswer.points,
      nodes: nodesAnswer.nodes,
      keys: ringKeys.keys,
      density: ringKeys.density,
      totalKeys: stats.keys,
      dark: state.dark,
      caption,
    });
    let mode;
    if (ringKeys.keys) mode = `${formatInt(stats.keys)} keys drawn as dots`;
    else if (ringKeys.density) mode = `${formatInt(stats.keys)} keys drawn as a density band (${ringKeys.density.bins} slices)`;
    else mode = ringKeys.error ? `Key density unavailable: ${ringKeys.error}` : '';
    if (nodesAnswer.nodes.length > 60) mode += ' · hover the ring for node names';
    $('ring-mode').textContent = `${config.algorithm} · ${config.points_per_node} ${config.points_per_node === 1 ? 'point' : 'points'} per node${mode ? ` · ${mode}` : ''}`;
    nodesTable.set(nodesAnswer.nodes, state.dark);
    renderStats(stats, state.dark);
    fillNodeFilter(nodesAnswer.nodes, state.keysQuery.node);
    await loadKeysPage(generation);
    setConnectionError(null);
  } catch (err) {
    if (generation !== state.generation) return;
    setConnectionError(err);
  }
}

async function loadKeysPage(generation) {
  const q = state.keysQuery;
  try {
    const data = await api.keys({
      prefix: q.prefix, node: q.node, offset: q.offset, limit: q.limit, at: atParam(),
    });
    if (generation !== undefined && generation !== state.generation) return;
    if (data.keys.length === 0 && q.offset > 0 && data.total > 0) {
      q.offset = Math.max(0, Math.floor((data.total - 1) / q.limit) * q.limit);
      await loadKeysPage(generation);
      return;
    }
    renderKeys(data, q, state.dark, pickKey);
  } catch (err) {
    $('keys-body').replaceChildren(el('tr', null, el('td', { colSpan: 3, className: 'error' }, err.message)));
  }
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

const scheduleRefresh = debounce(() => refresh(), 120, 1000);

function setConnectionError(err) {
  const c = $('connection');
  if (err) {
    c.dataset.state = 'down';
    c.textContent = `Server unreachable: ${err.message}`;
  } else if (c.dataset.state === 'down') {
    c.dataset.state = sse && sse.readyState === EventSource.OPEN ? 'live' : 'connecting';
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
    scheduleRefresh();
    scheduleExplain();
  }
  if (op.type === 'insert_keys') showProgress(null);
}

const scheduleHistory = debounce(() => { renderHistory(); renderTimeline(); }, 100, 800);
// Explaining a change reads the state before and after it (?at=), which
// costs the server more than a live read: wait for a pause in a burst and
// keep one explanation in flight, always for the newest operation.
let explaining = false;
async function explainLatest() {
  if (explaining) return;
  explaining = true;
  try {
    while (state.explainedId !== state.lastId && state.at === null) await explain(state.lastId);
  } finally {
    explaining = false;
  }
}
const scheduleExplain = debounce(explainLatest, 300, 3000);

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

async function statsAt(id) {
  if (id <= 0) return { nodes: 0, keys: 0, mean: 0, stddev: 0, cv: 0, min: 0, max: 0, max_over_mean: 0, per_node: [] };
  return api.stats(id);
}

async function ringAt(id) {
  if (id <= 0) return { points: [] };
  return api.ring(id);
}

/** Works out the from→to pairs of one operation's moves, exactly when it can. */
async function movePairs(op, detail) {
  const total = detail.moves_total ?? op.keys_moved;
  if (detail.moves.length >= total) return { pairs: groupMoves(detail.moves), partial: false };
  if (op.type === 'add_node' && Array.isArray(op.moved_from)) {
    return { pairs: groupMoves(op.moved_from.map((m) => ({ from: m.node, to: op.subject, keys: m.keys }))), partial: false };
  }
  if (op.type === 'remove_node') {
    const [before, after] = await Promise.all([statsAt(op.id - 1), statsAt(op.id)]);
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

async function explain(id) {
  if (!id || id === state.explainedId) return;
  state.explainedId = id;
  const op = state.ops.get(id);
  if (!op) return;
  $('moved-operation').textContent = `After #${op.id} · ${describeOperation(op)} · ${formatTime(op.at)}`;
  try {
    const detail = op.keys_moved > 0 ? await api.operation(op.id) : { moves: [], moves_total: 0 };
    const total = detail.moves_total ?? op.keys_moved;
    const { pairs, partial } = total > 0 ? await movePairs(op, detail) : { pairs: [], partial: false };
    if (state.explainedId !== id) return;
    $('moved-summary').textContent = movedSummary(total, pairs, partial);
    if (partial) $('moved-operation').textContent += ` · pairs counted over the first ${formatInt(MAX_PAIR_MOVES)} moves`;

    const [before, after, oldRing, newRing] = await Promise.all([
      statsAt(op.id - 1), statsAt(op.id),
      total > 0 ? ringAt(op.id - 1) : null, total > 0 ? ringAt(op.id) : null,
    ]);
    if (state.explainedId !== id) return;
    renderCompare(before, after);
    renderMovedKeys(detail.moves.slice(0, MAX_ANIMATED), total);
    if (total > 0) {
      const shown = detail.moves.slice(0, MAX_ANIMATED).map((m) => {
        const position = positionOf(m.key);
        const oldPts = oldRing.points;
        const newPts = newRing.points;
        return {
          key: m.key,
          position,
          from: m.from,
          to: m.to,
          fromPoint: m.from === null || !oldPts.length ? null : oldPts[successorIndex(oldPts, position)].position,
          toPoint: m.to === null || !newPts.length ? null : newPts[successorIndex(newPts, position)].position,
        };
      });
      if ((state.at ?? state.lastId) === id) ring.animateMoves(shown);
      const rest = total - shown.length;
      if (rest > 0) {
        $('moved-operation').textContent += ` · ${formatInt(shown.length)} animated on the ring, ${formatInt(rest)} more not drawn`;
      }
    } else {
      ring.clearHighlights();
    }
  } catch (err) {
    renderMovedKeys([], 0);
    $('moved-summary').textContent = movedSummary(op.keys_moved, []);
    $('moved-operation').textContent += ` (details unavailable: ${err.message})`;
  }
}

function renderMovedKeys(moves, total) {
  const box = $('moved-keys');
  if (!moves.length) {
    box.replaceChildren();
    return;
  }
  const more = total > moves.length ? ` (the first ${moves.length} of ${formatInt(total)})` : '';
  const items = moves.map((m) => el('li', null, [
    el('span', { className: 'mono' }, m.key), ` ${nodeLabel(m.from)} → ${nodeLabel(m.to)}`,
  ]));
  box.replaceChildren(el('details', null, [
    el('summary', null, `List the moved keys${more}`),
    el('ul', null, items),
  ]));
}

function movedFromText(op) {
  if (!op.keys_moved) return 'nothing moved';
  const from = (op.moved_from || []).map((m) => `${nodeLabel(m.node)} ${formatInt(m.keys)}`).join(', ');
  return `${formatInt(op.keys_moved)} moved${from ? ` (from ${from})` : ''}`;
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
    const what = el('span', { className: 'op-what' }, describeOperation(op));
    const line = el('div', { className: 'op-line' }, [
      el('span', { className: 'op-id' }, `#${id}`),
      what,
      el('time', { className: 'op-time', dateTime: op.at }, formatTime(op.at)),
    ]);
    const movesButton = el('button', {
      type: 'button', className: 'linklike op-moves', 'aria-expanded': 'false',
    }, movedFromText(op));
    if (!op.keys_moved) movesButton.disabled = true;
    const view = el('button', { type: 'button', className: 'linklike op-moves' }, `see state after #${id}`);
    view.addEventListener('click', () => setAt(id === state.lastId ? null : id));
    const detail = el('div', { className: 'op-detail', hidden: true });
    movesButton.addEventListener('click', () => toggleMoves(li, op, movesButton, detail));
    li.append(line, el('div', { className: 'op-line' }, [movesButton, view]), detail);
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
      el('span', { className: 'mono' }, m.key), ` : ${nodeLabel(m.from)} → ${nodeLabel(m.to)}`,
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
  timeline.value = String(state.at === null ? state.lastId : state.at);
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
    $('past-text').textContent = state.at === 0
      ? `the ring before any operation (now at #${state.lastId})`
      : `as it was after operation #${state.at} of ${state.lastId}${op ? ` (${describeOperation(op)}, ${formatTime(op.at)})` : ''}`;
  } else {
    where.textContent = state.lastId ? `Live · after #${state.lastId}` : 'Live · no operations yet';
  }
  for (const c of document.querySelectorAll('.mutating')) {
    if (past) c.setAttribute('disabled', '');
    else if (!c.dataset.busy) c.removeAttribute('disabled');
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
  if (next === null) explainLatest();
  else if (next > 0) explain(next);
  else {
    state.explainedId = 0;
    $('moved-operation').textContent = 'The empty start, before any operation.';
    $('moved-summary').textContent = '';
    renderMovedKeys([], 0);
    renderCompare(null, null);
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
  try {
    const answer = await api.revert(to);
    setError('revert-error', '');
    state.at = null;
    renderTimeline();
    onOperation(answer.operation);
    refresh();
  } catch (err) {
    setError('revert-error', err.message);
  } finally {
    button.disabled = false;
  }
});

// ---- controls ----------------------------------------------------------------

/** Runs one change request with its button busy and its error slot cleared. */
async function mutate(button, errorId, input, run) {
  setError(errorId, '', input);
  button.dataset.busy = '1';
  button.disabled = true;
  try {
    const answer = await run();
    if (answer && answer.operation) onOperation(answer.operation);
    return answer;
  } catch (err) {
    const message = err instanceof ApiError ? err.message : String(err.message || err);
    setError(errorId, message, input);
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
  // An empty box means the default weight; anything else goes to the server as typed.
  const weight = weightInput.value.trim() === '' ? undefined : numberValue(weightInput);
  const ok = await mutate($('add-node'), 'node-error', nodeInput, () => api.addNode(name, weight));
  if (ok) nodeInput.select();
});
$('remove-node').addEventListener('click', async () => {
  const name = nodeInput.value;
  await mutate($('remove-node'), 'node-error', nodeInput, () => api.removeNode(name));
});

const keyInput = $('key-name');
$('key-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const key = keyInput.value;
  const ok = await mutate($('insert-key'), 'key-error', keyInput, () => api.insertKey(key));
  if (ok) keyInput.select();
});
$('delete-key').addEventListener('click', async () => {
  const key = keyInput.value;
  await mutate($('delete-key'), 'key-error', keyInput, () => api.deleteKey(key));
});

const countInput = $('key-count');
$('generate-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const count = numberValue(countInput);
  // Continue numbering after the keys already stored, so that a second
  // "Generate keys" adds new keys instead of skipping duplicates.
  const start = state.live.keys;
  $('generate-result').textContent = '';
  if (typeof count === 'number' && count >= 20000) showProgress({ done: 0, total: count });
  const answer = await mutate($('generate-keys'), 'generate-error', countInput, () => api.generateKeys(count, 'key-', start));
  showProgress(null);
  if (answer) {
    const last = start + answer.inserted + answer.skipped - 1;
    $('generate-result').textContent = `Inserted ${formatInt(answer.inserted)} keys (key-${start} … key-${last})${answer.skipped ? `, ${formatInt(answer.skipped)} skipped as already stored` : ''}.`;
  }
});

const pointsInput = $('points-per-node');
$('config-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const n = numberValue(pointsInput);
  await mutate($('apply-config'), 'config-error', pointsInput, () => api.setConfig({ points_per_node: n }));
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

// ---- lookup and ring selection ----------------------------------------------------------

function runTrace() {
  return traceKey($('lookup-key').value, { ring, points: state.view.points });
}

$('lookup-form').addEventListener('submit', (e) => {
  e.preventDefault();
  runTrace();
});
$('lookup-key').addEventListener('input', debounce(() => {
  if ($('lookup-key').value !== '') runTrace();
}, 350));

function showSelection(hit) {
  const box = $('ring-selection');
  if (!hit) {
    box.replaceChildren();
    ring.setPath(null);
    return;
  }
  const rows = [];
  const add = (k, v) => rows.push(el('dt', null, k), el('dd', null, v));
  if (hit.kind === 'key') {
    add('Key', hit.key);
    add('Position', formatInt(hit.position));
    add('Owner', nodeLabel(hit.node));
    const pts = state.view.points;
    if (pts.length) {
      const i = successorIndex(pts, hit.position);
      const wrapped = pts[pts.length - 1].position < hit.position;
      add('Path', `clockwise to the point at ${formatInt(pts[i].position)}${wrapped ? ', wrapping past 2³²−1' : ''}`);
      ring.setPath({ position: hit.position, pointPosition: pts[i].position, node: pts[i].node, wrapped });
    }
  } else if (hit.kind === 'point' || hit.kind === 'arc') {
    const node = state.view.nodes.find((n) => n.name === hit.node);
    add('Node', hit.node);
    add(hit.kind === 'point' ? 'Point position' : 'Arc', hit.kind === 'point' ? formatInt(hit.position) : `${formatInt(hit.from)} → ${formatInt(hit.to)}`);
    if (node) {
      add('Keys', `${formatInt(node.keys)} (${(node.key_share * 100).toFixed(1)}% of keys, ${(node.arc_share * 100).toFixed(1)}% of the ring)`);
      add('Points', formatInt(node.points));
    }
    ring.setPath(null);
  } else if (hit.kind === 'bin') {
    add('Slice', `${formatInt(hit.from)} – ${formatInt(hit.to)}`);
    add('Keys', formatInt(hit.count));
    add('Owner at the middle', nodeLabel(hit.node));
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

/** Progress of a long operation (from any tab or the CLI); null hides it. */
function showProgress(p) {
  const bar = $('generate-progress');
  const text = $('generate-progress-text');
  if (p && p.total > 0 && p.done < p.total) {
    bar.hidden = false;
    text.hidden = false;
    bar.max = p.total;
    bar.value = p.done;
    const what = PROGRESS_LABELS[p.type] ?? 'Working';
    text.textContent = `${what}: ${formatInt(p.done)} of ${formatInt(p.total)}…`;
  } else {
    bar.hidden = true;
    text.hidden = true;
  }
}

// ---- live updates ----------------------------------------------------------------

let sse = null;

function connect() {
  const c = $('connection');
  sse = new EventSource(eventsUrl());
  sse.addEventListener('open', () => {
    c.dataset.state = 'live';
    c.textContent = 'Live';
    catchUp();
  });
  sse.addEventListener('error', () => {
    c.dataset.state = sse.readyState === EventSource.CLOSED ? 'down' : 'connecting';
    c.textContent = sse.readyState === EventSource.CLOSED ? 'Disconnected — reload to retry' : 'Reconnecting…';
    if (sse.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  });
  sse.addEventListener('operation', (e) => {
    try {
      onOperation(JSON.parse(e.data));
    } catch { /* a malformed event is ignored */ }
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

async function start() {
  connect();
  try {
    await loadHistory();
  } catch (err) {
    setConnectionError(err);
  }
  await refresh();
  if (state.lastId) explainLatest();
  applyTheme();
}

start();

// Renders the nodes table, the keys table, the statistics and the pieces of
// "What moved" from the data main.js loads. Each function replaces what it
// owns; none keeps an element per stored key (the keys table shows one
// server page at a time) and the nodes table shows at most NODE_PAGE rows.
// Names go in as text, cut with an ellipsis, the full name in a title.

import { $, el } from './dom.js';
import {
  displayName, formatBig, formatInt, formatNumber, formatPercent, lookAlikes, nodeColour, shareDigits,
} from './format.js';

/** A weight as typed: 1, 2.5, 0.125 (not 2.500). */
function formatWeight(w) {
  return Number.isFinite(w) ? String(Number(w.toPrecision(6))) : '–';
}

const NODE_PAGE = 100;

function dot(name, dark) {
  const d = el('span', { className: 'dot', 'aria-hidden': 'true' });
  d.style.background = nodeColour(name, 1, dark);
  return d;
}

/** A name as a cut-able span with the full name as its title. */
export function nameSpan(name) {
  const shown = displayName(name);
  return el('span', { className: 'name', title: shown }, shown);
}

function sortButtons(table, getSort, setSort) {
  for (const th of document.querySelectorAll(`#${table} th[data-sort]`)) {
    th.querySelector('button').addEventListener('click', () => {
      const key = th.dataset.sort;
      const sort = getSort();
      if (sort.key === key) setSort({ key, dir: -sort.dir });
      else setSort({ key, dir: ['name', 'position', 'key', 'coordinate', 'node'].includes(key) ? 1 : -1 });
    });
  }
}

function markSort(table, sort) {
  for (const th of document.querySelectorAll(`#${table} th[data-sort]`)) {
    const active = th.dataset.sort === sort.key;
    th.setAttribute('aria-sort', active ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none');
  }
}

function compareValues(x, y) {
  if (typeof x === 'string' && typeof y === 'string') {
    if (/^-?\d+$/.test(x) && /^-?\d+$/.test(y)) {
      const a = BigInt(x);
      const b = BigInt(y);
      return a < b ? -1 : a > b ? 1 : 0;
    }
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (x === null || x === undefined) return y === null || y === undefined ? 0 : -1;
  if (y === null || y === undefined) return 1;
  return x - y;
}

// ---- nodes table ----------------------------------------------------------

/**
 * Who serves a key while its owner is down (docs/api.md "Node states"):
 * nothing when it is its owner.
 */
function servedBy(k) {
  if (k.served_by === undefined || k.served_by === k.node) return null;
  if (k.served_by === null) return el('span', { className: 'served-by unserved' }, ' · no live replica: nobody serves it (its owner is down)');
  return el('span', { className: 'served-by' }, [' · served by ', nameSpan(k.served_by)]);
}

export class NodesTable {
  constructor({ onPick, onRemove, onWeight, onState }) {
    this.nodes = [];
    this.onWeight = onWeight;
    this.onState = onState;
    // The weight being edited in place: {name, value, error}; it survives
    // the re-renders that live updates cause.
    this.editing = null;
    this.sort = { key: 'position', dir: 1 };
    this.page = 0;
    this.dark = false;
    this.readOnly = false;
    this.columns = { position: true, owns: false };
    this.onPick = onPick;
    this.onRemove = onRemove;
    sortButtons('nodes-table', () => this.sort, (s) => { this.sort = s; this.page = 0; this.render(); });
    $('nodes-prev').addEventListener('click', () => { this.page--; this.render(); });
    $('nodes-next').addEventListener('click', () => { this.page++; this.render(); });
  }

  /**
   * nodes from /api/nodes; options: dark, readOnly (past state), replicas.
   * Position is shown while every node has one point (then it is the
   * node's place on the ring); Owns % when keys have several replicas.
   */
  set(nodes, { dark, readOnly, replicas } = {}) {
    this.nodes = nodes;
    if (dark !== undefined) this.dark = dark;
    if (readOnly !== undefined) this.readOnly = readOnly;
    this.columns = {
      position: nodes.length > 0 && nodes.every((n) => n.points === 1 && (!n.tokens || n.tokens.length === 1)),
      owns: (replicas || 1) > 1,
    };
    if (!this.columns.position && this.sort.key === 'position') this.sort = { key: 'name', dir: 1 };
    this.render();
  }

  sorted() {
    const { key, dir } = this.sort;
    const list = [...this.nodes];
    list.sort((a, b) => {
      let c = compareValues(a[key], b[key]);
      if (c === 0) c = a.position - b.position || (a.name < b.name ? -1 : 1);
      return c * dir;
    });
    return list;
  }

  render() {
    markSort('nodes-table', this.sort);
    for (const [col, shown] of Object.entries(this.columns)) {
      const th = document.querySelector(`#nodes-table th[data-col="${col}"]`);
      if (th) th.hidden = !shown;
    }
    const list = this.sorted();
    const pages = Math.max(1, Math.ceil(list.length / NODE_PAGE));
    this.page = Math.min(Math.max(0, this.page), pages - 1);
    const slice = list.slice(this.page * NODE_PAGE, (this.page + 1) * NODE_PAGE);
    const digits = shareDigits(list.length);
    const twins = lookAlikes(this.nodes.map((n) => n.name));
    const rows = slice.map((n) => {
      const remove = el('button', {
        type: 'button', className: 'ghost row-remove mutating', 'aria-label': `Remove node ${displayName(n.name)}`, title: `Remove node ${displayName(n.name)}`,
      }, 'Remove');
      remove.disabled = this.readOnly;
      remove.addEventListener('click', (e) => { e.stopPropagation(); this.onRemove(n.name, remove); });
      const cells = [
        el('td', { dataset: { col: 'name' } }, [
          dot(n.name, this.dark), nameSpan(n.name),
          twins.has(n.name) ? el('span', { className: 'look-alike' }, `looks the same as ${twins.get(n.name).map(displayName).join(', ')}`) : null,
        ]),
        this.columns.position ? el('td', { className: 'num', dataset: { col: 'position' } }, formatBig(n.tokens ? n.tokens[0] : n.position)) : null,
        el('td', { className: 'num', dataset: { col: 'weight' } }, this.weightCell(n)),
        el('td', { className: 'num', dataset: { col: 'points' } }, formatInt(n.points)),
        el('td', { className: 'num', dataset: { col: 'keys' } }, formatInt(n.keys)),
        el('td', { className: 'num', dataset: { col: 'key_share' } }, formatPercent(n.key_share, digits)),
        el('td', { className: 'num', dataset: { col: 'arc_share' } }, formatPercent(n.arc_share, digits)),
        this.columns.owns ? el('td', { className: 'num', dataset: { col: 'owns' } }, formatPercent(n.owns, digits)) : null,
        el('td', { dataset: { col: 'state' } }, this.stateCell(n)),
        el('td', null, remove),
      ];
      const tr = el('tr', { tabIndex: 0, dataset: { node: n.name }, className: n.state === 'down' ? 'node-down' : '' }, cells);
      tr.title = `Show the keys of ${displayName(n.name)}`;
      tr.addEventListener('click', () => this.onPick(n.name));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === tr) this.onPick(n.name); });
      return tr;
    });
    if (!rows.length) {
      rows.push(el('tr', null, el('td', { colSpan: 10, className: 'muted' }, 'No nodes yet. Add one with “Add node”.')));
    }
    // A live update re-renders the rows: the focus stays where it was
    // (the same node's row, or its Change or Remove button).
    const active = document.activeElement;
    const body = $('nodes-body');
    let keep = null;
    if (active && body.contains(active) && !active.closest('.weight-edit')) {
      const tr = active.closest('tr');
      const cls = ['row-edit', 'row-state'].find((c) => active.classList.contains(c)) || 'row-remove';
      keep = tr && { node: tr.dataset.node, cls: active === tr ? null : cls };
    }
    body.replaceChildren(...rows);
    if (keep && keep.node !== undefined) {
      const tr = [...body.rows].find((r) => r.dataset.node === keep.node);
      const target = tr && (keep.cls ? tr.querySelector(`button.${keep.cls}`) : tr);
      if (target) target.focus();
    }
    $('nodes-count').textContent = `${formatInt(this.nodes.length)} ${this.nodes.length === 1 ? 'node' : 'nodes'}`;
    $('nodes-pager').hidden = pages <= 1;
    $('nodes-page').textContent = `${formatInt(this.page * NODE_PAGE + 1)}–${formatInt(this.page * NODE_PAGE + slice.length)} of ${formatInt(list.length)}`;
    $('nodes-prev').disabled = this.page === 0;
    $('nodes-next').disabled = this.page >= pages - 1;
  }

  /**
   * A node's state with a toggle (PUT /api/nodes/{name}/state): a button
   * "Down", pressed while the node is down; backups are said so.
   */
  stateCell(n) {
    const label = displayName(n.name);
    const down = n.state === 'down';
    const toggle = el('button', {
      type: 'button', className: `ghost row-state mutating${down ? ' is-down' : ''}`, 'aria-pressed': String(down),
      'aria-label': `Down: ${label}`, title: down ? `${label} is down: press to bring it up` : `Mark ${label} down (failed, still configured)`,
    }, 'Down'); // a toggle: its name stays, aria-pressed (and its colour) says the state
    toggle.disabled = this.readOnly;
    toggle.addEventListener('click', async (e) => {
      e.stopPropagation();
      await this.onState(n.name, !down, toggle);
      this.focusButton(n.name, 'row-state'); // the row may have been drawn again meanwhile
    });
    return el('span', { className: 'state-view' }, [toggle, n.backup ? el('span', { className: 'muted backup' }, ' backup') : null]);
  }

  /**
   * A node's weight with a button to change it in place (PATCH
   * /api/nodes/{name}); while it is edited, a number box with Save and
   * Cancel (Enter and Escape), the server's refusal under it.
   */
  weightCell(n) {
    const label = displayName(n.name);
    const stop = (e) => e.stopPropagation();
    if (!this.editing || this.editing.name !== n.name || this.readOnly) {
      const edit = el('button', {
        type: 'button', className: 'ghost row-edit mutating', 'aria-label': `Change the weight of ${label}`, title: `Change the weight of ${label}`,
      }, 'Change');
      edit.disabled = this.readOnly;
      edit.addEventListener('click', (e) => {
        stop(e);
        this.editing = { name: n.name, value: formatWeight(n.weight), error: '', focus: true };
        this.render();
      });
      return el('span', { className: 'weight-view' }, [el('span', { className: 'weight-value' }, formatWeight(n.weight)), edit]);
    }
    const ed = this.editing;
    const errorId = `weight-edit-error-${this.nodes.indexOf(n)}`;
    const input = el('input', {
      type: 'number', min: '0', step: 'any', value: ed.value, className: 'small-number mutating weight-input',
      'aria-label': `Weight of ${label}`, 'aria-describedby': errorId,
    });
    if (ed.error) input.setAttribute('aria-invalid', 'true');
    const save = el('button', { type: 'submit', className: 'mutating row-edit' }, 'Save');
    const cancel = el('button', { type: 'button', className: 'ghost row-edit' }, 'Cancel');
    const form = el('form', { className: 'weight-edit', noValidate: true }, [
      input, save, cancel, el('p', { id: errorId, className: 'error', role: 'alert' }, ed.error || ''),
    ]);
    for (const type of ['click', 'keydown']) form.addEventListener(type, stop);
    input.addEventListener('input', () => { ed.value = input.value; });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        this.editing = null;
        this.render();
        this.focusEdit(n.name);
      }
    });
    cancel.addEventListener('click', () => {
      this.editing = null;
      this.render();
      this.focusEdit(n.name);
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (input.validity.badInput || input.value.trim() === '') {
        ed.error = 'Weight must be a number, such as 1, 2 or 0.5.';
        ed.focus = true;
        this.render();
        return;
      }
      ed.value = input.value;
      const error = await this.onWeight(n.name, input.valueAsNumber, save);
      if (this.editing !== ed) return;
      if (error) {
        ed.error = error;
        ed.focus = true;
        this.render();
        return;
      }
      this.editing = null;
      this.render();
      this.focusEdit(n.name);
    });
    if (ed.focus) {
      ed.focus = false;
      requestAnimationFrame(() => { input.focus(); input.select(); });
    }
    return form;
  }

  /** Puts the focus back on a node's "Change" button. */
  focusEdit(name) {
    this.focusButton(name, 'row-edit');
  }

  focusButton(name, cls) {
    const row = [...$('nodes-body').rows].find((r) => r.dataset.node === name);
    const button = row && row.querySelector(`button.${cls}`);
    if (button) button.focus();
  }

  /** Shown while the state to show is on its way (time travel). */
  loading(text) {
    $('nodes-body').replaceChildren(el('tr', null, el('td', { colSpan: 10, className: 'muted' }, text)));
    $('nodes-count').textContent = '';
    $('nodes-pager').hidden = true;
  }
}

// ---- keys table -------------------------------------------------------------

/** Columns the server sorts every key by (GET /api/keys?order=). */
const SERVER_ORDERS = { key: 'key', coordinate: 'coordinate' };

/**
 * One server page of keys. Key and Coordinate sort all keys on the server
 * (onOrder asks for page 1 in that order); Owner sorts the page on show
 * (the note says so).
 */
export class KeysTable {
  constructor({ onPick, onRemove, onOrder }) {
    this.onPick = onPick;
    this.onRemove = onRemove;
    this.sort = { key: null, dir: 1 };
    this.data = null;
    this.query = null;
    this.dark = false;
    this.readOnly = false;
    this.replicas = 1;
    sortButtons('keys-table', () => this.sort, (s) => {
      this.sort = s;
      const server = SERVER_ORDERS[s.key];
      onOrder(server ? `${s.dir < 0 ? '-' : ''}${server}` : '');
    });
  }

  set(data, query, { dark, readOnly, replicas }) {
    this.data = data;
    this.query = query;
    this.dark = dark;
    this.readOnly = readOnly;
    this.replicas = replicas || 1;
    this.render();
  }

  render() {
    const { data, query } = this;
    if (!data) return;
    // Unsorted, the page is in the server's order (SHA-256 position, then key).
    markSort('keys-table', this.sort);
    const showReplicas = this.replicas > 1;
    document.querySelector('#keys-table th[data-col="replicas"]').hidden = !showReplicas;
    let keys = data.keys;
    const local = this.sort.key && !SERVER_ORDERS[this.sort.key];
    if (local) {
      const { key, dir } = this.sort;
      keys = [...keys].sort((a, b) => (compareValues(a[key], b[key]) || compareValues(a.key, b.key)) * dir);
    }
    $('keys-sort-note').hidden = !local || data.total <= keys.length;
    $('keys-sort-note').textContent = 'Sorted by owner within this page; pages follow the server’s order (by position, then key). Key and Coordinate sort every key.';
    const rows = keys.map((k) => {
      const remove = el('button', {
        type: 'button', className: 'ghost row-remove mutating', 'aria-label': `Remove key ${displayName(k.key)}`, title: `Remove key ${displayName(k.key)}`,
      }, 'Remove');
      remove.disabled = this.readOnly;
      remove.addEventListener('click', (e) => { e.stopPropagation(); this.onRemove(k.key, remove); });
      const coordinate = k.coordinate === undefined ? formatInt(k.position) : (k.coordinate === null ? '—' : formatBig(k.coordinate));
      const tr = el('tr', { tabIndex: 0, dataset: { key: k.key } }, [
        el('td', { dataset: { col: 'key' } }, nameSpan(k.key)),
        el('td', { className: 'num', dataset: { col: 'coordinate' } }, coordinate),
        el('td', { dataset: { col: 'node' } }, [dot(k.node, this.dark), nameSpan(k.node), servedBy(k)]),
        showReplicas ? el('td', { dataset: { col: 'replicas' } }, el('span', { className: 'name', title: (k.replicas || []).map(displayName).join(', ') }, (k.replicas || []).map(displayName).join(', '))) : null,
        el('td', null, remove),
      ]);
      tr.title = 'Trace this key';
      tr.addEventListener('click', () => this.onPick(k.key));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === tr) this.onPick(k.key); });
      return tr;
    });
    if (!rows.length) {
      const why = query.prefix || query.node ? 'No key matches.' : 'No keys yet. Insert one or generate many.';
      rows.push(el('tr', null, el('td', { colSpan: 5, className: 'muted' }, why)));
    }
    $('keys-body').replaceChildren(...rows);
    const filtered = query.prefix || query.node;
    $('keys-count').textContent = `${formatInt(data.total)} ${data.total === 1 ? 'key' : 'keys'}${filtered ? ' match' : ''}`;
    const pages = Math.max(1, Math.ceil(data.total / query.limit));
    const page = Math.floor(query.offset / query.limit) + 1;
    $('keys-pager').hidden = data.total <= query.limit && query.offset === 0;
    $('keys-page').textContent = `${formatInt(query.offset + 1)}–${formatInt(query.offset + data.keys.length)} of ${formatInt(data.total)}`;
    const input = $('keys-page-input');
    input.max = String(pages);
    if (document.activeElement !== input) input.value = String(page);
    input.setAttribute('aria-label', `Page, 1 to ${formatInt(pages)}`);
    $('keys-prev').disabled = query.offset === 0;
    $('keys-next').disabled = query.offset + data.keys.length >= data.total;
  }

  loading(text) {
    this.data = null;
    $('keys-body').replaceChildren(el('tr', null, el('td', { colSpan: 5, className: 'muted' }, text)));
    $('keys-count').textContent = '';
    $('keys-pager').hidden = true;
  }
}

let filterNames = '';

export function fillNodeFilter(nodes, selected) {
  const select = $('keys-node');
  const names = nodes.map((n) => n.name).sort();
  if (selected && !names.includes(selected)) names.unshift(selected);
  // Rebuilt only when the names change: a thousand options cost a layout.
  const key = JSON.stringify(names);
  if (key === filterNames) {
    select.value = selected || '';
    return;
  }
  filterNames = key;
  const options = [el('option', { value: '' }, 'All nodes')];
  for (const name of names.slice(0, 2000)) options.push(el('option', { value: name }, displayName(name)));
  select.replaceChildren(...options);
  select.value = selected || '';
}

// ---- statistics -------------------------------------------------------------

const BAR_LIMIT = 200;

export function renderStats(stats, dark) {
  const numbers = [
    ['Nodes', formatInt(stats.nodes), ''],
    ['Keys', formatInt(stats.keys), ''],
    ['Mean keys', formatNumber(stats.mean, 1), 'keys per node on average'],
    ['Std dev', formatNumber(stats.stddev, 1), 'population standard deviation of keys per node'],
    ['CV', formatNumber(stats.cv, 3), 'coefficient of variation: std dev ÷ mean'],
    ['Min', formatInt(stats.min ?? 0), 'fewest keys on one node'],
    ['Max', formatInt(stats.max ?? 0), 'most keys on one node'],
    ['Max / mean', formatNumber(stats.max_over_mean, 3), 'the busiest node’s keys against its fair share (its weight over the weights of the nodes that can take keys)'],
  ];
  // Keys nobody serves (API.md v4): counted, never dropped.
  const un = stats.unavailable;
  if (un && un.keys > 0) numbers.push(['No live replica', `${formatInt(un.keys)} keys · ${formatPercent(un.key_share, 1)}`, 'keys whose every replica is down: nobody serves them']);
  $('stats-numbers').replaceChildren(...numbers.map(([k, v, help]) => el('div', { title: help || null }, [el('dt', null, k), el('dd', null, v)])));

  let per = stats.per_node || [];
  // Each node's ideal is its fair share (API.md v4): weight over the total
  // weight of the nodes that can take keys; 0 for a node down.
  const ideal = per.length ? 1 / per.length : 0;
  const fair = (p) => (p.fair_share === undefined ? ideal : (p.fair_share ?? 0));
  const digits = shareDigits(per.length);
  let note = null;
  if (per.length > BAR_LIMIT) {
    const byDistance = [...per].sort((a, b) => Math.abs(b.key_share - fair(b)) - Math.abs(a.key_share - fair(a)));
    const keep = new Set(byDistance.slice(0, BAR_LIMIT).map((p) => p.name));
    per = per.filter((p) => keep.has(p.name));
    note = el('p', { className: 'muted small' }, `Showing the ${BAR_LIMIT} of ${formatInt(stats.per_node.length)} nodes furthest from their fair share.`);
  }
  let scale = ideal;
  for (const p of per) scale = Math.max(scale, p.key_share, p.arc_share, fair(p));
  scale = scale || 1;
  const rows = per.map((p) => {
    const keys = el('div', { className: 'bar-keys' });
    keys.style.width = `${(p.key_share / scale) * 100}%`;
    keys.style.background = nodeColour(p.name, 1, dark);
    const ring = el('div', { className: 'bar-ring' });
    ring.style.width = `${(p.arc_share / scale) * 100}%`;
    const mark = el('div', { className: 'bar-ideal', title: `fair share ${formatPercent(fair(p), digits)}`, dataset: { fair: String(fair(p)) } });
    mark.style.left = `${(fair(p) / scale) * 100}%`;
    const lof = typeof p.load_over_fair === 'number' ? `, ${formatNumber(p.load_over_fair, 2)}× its fair share ${formatPercent(fair(p), digits)}` : (p.fair_share === null ? ', takes no keys (down)' : '');
    return el('div', { className: 'bar-row', role: 'listitem', dataset: { node: p.name }, title: `${displayName(p.name)}: ${formatInt(p.keys)} keys, key share ${formatPercent(p.key_share, digits)}, share of the space ${formatPercent(p.arc_share, digits)}${lof}` }, [
      el('span', { className: 'bar-name' }, displayName(p.name)),
      el('div', { className: 'bar-track' }, [keys, ring, mark]),
      // Which percentage is which, in words (the two bars, top and bottom).
      el('span', { className: 'bar-value' }, [
        el('span', { className: 'v-keys' }, `keys ${formatPercent(p.key_share, digits)}${typeof p.load_over_fair === 'number' ? ` · ${formatNumber(p.load_over_fair, 2)}× fair` : ''}`),
        el('span', { className: 'v-space' }, `space ${formatPercent(p.arc_share, digits)}`),
      ]),
    ]);
  });
  if (!rows.length) rows.push(el('p', { className: 'muted', role: 'listitem' }, 'No nodes.'));
  if (note) rows.unshift(el('div', { role: 'listitem' }, note));
  $('stats-bars').replaceChildren(...rows);
}

export function statsLoading(text) {
  $('stats-numbers').replaceChildren(el('div', null, [el('dt', null, 'Statistics'), el('dd', null, text)]));
  $('stats-bars').replaceChildren();
}

/** Before/after table of the statistics around one operation. */
export function renderCompare(before, after) {
  const box = $('moved-compare');
  if (!before || !after) {
    box.replaceChildren();
    return;
  }
  const line = (label, a, b, title) => el('tr', null, [
    el('th', { scope: 'row', title: title || null }, label), el('td', { className: 'num' }, a), el('td', { className: 'num' }, b),
  ]);
  const rows = [
    line('Nodes', formatInt(before.nodes), formatInt(after.nodes)),
    line('Keys', formatInt(before.keys), formatInt(after.keys)),
    line('Mean keys', formatNumber(before.mean, 1), formatNumber(after.mean, 1)),
    line('Std dev', formatNumber(before.stddev, 1), formatNumber(after.stddev, 1)),
    line('CV', formatNumber(before.cv, 3), formatNumber(after.cv, 3)),
    line('Max / mean', formatNumber(before.max_over_mean, 3), formatNumber(after.max_over_mean, 3), 'the busiest node against its fair share'),
  ];
  const unb = before.unavailable;
  const una = after.unavailable;
  if ((unb && unb.keys) || (una && una.keys)) {
    const u = (x) => (x ? `${formatInt(x.keys)} (${formatPercent(x.key_share, 1)})` : '0');
    rows.push(line('No live replica', u(unb), u(una), 'keys nobody serves'));
  }
  const was = new Map((before.per_node || []).map((p) => [p.name, p]));
  const now = new Map((after.per_node || []).map((p) => [p.name, p]));
  const names = new Set([...was.keys(), ...now.keys()]);
  const changed = [];
  for (const name of names) {
    const a = was.get(name);
    const b = now.get(name);
    if (!a || !b || a.keys !== b.keys) changed.push({ name, a, b, d: Math.abs((b ? b.keys : 0) - (a ? a.keys : 0)) });
  }
  changed.sort((x, y) => y.d - x.d);
  for (const c of changed.slice(0, 8)) {
    rows.push(el('tr', null, [
      el('th', { scope: 'row' }, [nameSpan(c.name), ' keys']),
      el('td', { className: 'num' }, c.a ? formatInt(c.a.keys) : '—'),
      el('td', { className: 'num' }, c.b ? formatInt(c.b.keys) : '—'),
    ]));
  }
  const table = el('table', { className: 'data' }, [
    el('thead', null, el('tr', null, [el('th', { scope: 'col' }, 'Statistic'), el('th', { scope: 'col', className: 'num' }, 'Before'), el('th', { scope: 'col', className: 'num' }, 'After')])),
    el('tbody', null, rows),
  ]);
  const title = el('h3', { className: 'compare-title', id: 'compare-title' }, 'Statistics before and after this change');
  table.setAttribute('aria-labelledby', 'compare-title');
  box.replaceChildren(title, table);
  if (changed.length > 8) box.appendChild(el('p', { className: 'muted small' }, `and ${formatInt(changed.length - 8)} more nodes changed`));
}

const PAIRS_SHOWN = 6;

/**
 * Where the moved keys went: the largest from → to pairs as a table, the
 * rest behind "all N pairs". `partial` when only a sample of moves was read.
 */
export function renderPairs(pairs, total, partial) {
  const box = $('moved-pairs');
  if (!pairs || !pairs.length) {
    box.replaceChildren();
    return;
  }
  // The server's exact pairs (API.md v4) carry each pair's share of the
  // requests (and bytes, when the workload gives sizes).
  const requests = pairs.some((p) => typeof p.requests_share === 'number');
  const bytes = pairs.some((p) => typeof p.bytes === 'number' && p.bytes !== p.keys);
  const who = (name) => (name === null || name === undefined ? el('span', { className: 'muted nobody' }, 'no live replica') : nameSpan(name));
  const table = (list, caption) => el('table', { className: 'data pairs' }, [
    el('caption', { className: 'visually-hidden' }, caption),
    el('thead', null, el('tr', null, [
      el('th', { scope: 'col' }, 'From'), el('th', { scope: 'col' }, 'To'), el('th', { scope: 'col', className: 'num' }, 'Keys'),
      requests ? el('th', { scope: 'col', className: 'num' }, 'Requests') : null,
      bytes ? el('th', { scope: 'col', className: 'num' }, 'Bytes') : null,
    ])),
    el('tbody', null, list.map((p) => el('tr', { dataset: { from: p.from ?? '', to: p.to ?? '' } }, [
      el('td', null, who(p.from)), el('td', null, who(p.to)), el('td', { className: 'num', dataset: { col: 'keys' } }, formatInt(p.keys)),
      requests ? el('td', { className: 'num', dataset: { col: 'requests' } }, formatPercent(p.requests_share || 0, 2)) : null,
      bytes ? el('td', { className: 'num', dataset: { col: 'bytes' } }, formatInt(p.bytes || 0)) : null,
    ]))),
  ]);
  const parts = [table(pairs.slice(0, PAIRS_SHOWN), 'Largest moves between nodes')];
  if (pairs.length > PAIRS_SHOWN) {
    parts.push(el('details', null, [
      el('summary', null, `All ${formatInt(pairs.length)} from → to pairs, largest first`),
      table(pairs.slice(0, 500), 'All moves between nodes'),
      pairs.length > 500 ? el('p', { className: 'muted small' }, `and ${formatInt(pairs.length - 500)} smaller pairs`) : null,
    ]));
  }
  if (partial) parts.push(el('p', { className: 'muted small' }, `Pairs counted over a sample of the ${formatInt(total)} moves.`));
  box.replaceChildren(...parts);
}

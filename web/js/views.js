// Renders the nodes table, the keys table and the statistics from the data
// main.js loads. Each function replaces what it owns; none keeps an element
// per stored key (the keys table shows one server page at a time) and the
// nodes table shows at most PAGE rows at once.

import { $, el } from './dom.js';
import {
  formatInt, formatNumber, formatPercent, nodeColour, nodeLabel, shareDigits,
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

// ---- nodes table ----------------------------------------------------------

export class NodesTable {
  constructor({ onPick }) {
    this.nodes = [];
    this.sort = { key: 'position', dir: 1 };
    this.page = 0;
    this.dark = false;
    this.onPick = onPick;
    for (const th of document.querySelectorAll('#nodes-table th[data-sort]')) {
      th.querySelector('button').addEventListener('click', () => {
        const key = th.dataset.sort;
        if (this.sort.key === key) this.sort.dir = -this.sort.dir;
        else this.sort = { key, dir: key === 'name' || key === 'position' ? 1 : -1 };
        this.page = 0;
        this.render();
      });
    }
    $('nodes-prev').addEventListener('click', () => { this.page--; this.render(); });
    $('nodes-next').addEventListener('click', () => { this.page++; this.render(); });
  }

  set(nodes, dark) {
    this.nodes = nodes;
    this.dark = dark;
    this.render();
  }

  sorted() {
    const { key, dir } = this.sort;
    const list = [...this.nodes];
    list.sort((a, b) => {
      const x = a[key];
      const y = b[key];
      let c;
      if (typeof x === 'string') c = x < y ? -1 : x > y ? 1 : 0;
      else c = x - y;
      if (c === 0) c = a.position - b.position || (a.name < b.name ? -1 : 1);
      return c * dir;
    });
    return list;
  }

  render() {
    for (const th of document.querySelectorAll('#nodes-table th[data-sort]')) {
      const active = th.dataset.sort === this.sort.key;
      th.setAttribute('aria-sort', active ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
    const list = this.sorted();
    const pages = Math.max(1, Math.ceil(list.length / NODE_PAGE));
    this.page = Math.min(Math.max(0, this.page), pages - 1);
    const slice = list.slice(this.page * NODE_PAGE, (this.page + 1) * NODE_PAGE);
    const digits = shareDigits(list.length);
    const rows = slice.map((n) => {
      const tr = el('tr', { tabIndex: 0, dataset: { node: n.name } }, [
        el('td', null, [dot(n.name, this.dark), n.name]),
        el('td', { className: 'num' }, formatInt(n.position)),
        el('td', { className: 'num' }, formatWeight(n.weight)),
        el('td', { className: 'num' }, formatInt(n.points)),
        el('td', { className: 'num' }, formatInt(n.keys)),
        el('td', { className: 'num' }, formatPercent(n.key_share, digits)),
        el('td', { className: 'num' }, formatPercent(n.arc_share, digits)),
      ]);
      tr.title = `Show the keys of ${n.name}`;
      tr.addEventListener('click', () => this.onPick(n.name));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') this.onPick(n.name); });
      return tr;
    });
    if (!rows.length) {
      rows.push(el('tr', null, el('td', { colSpan: 7, className: 'muted' }, 'No nodes yet. Add one with “Add node”.')));
    }
    $('nodes-body').replaceChildren(...rows);
    $('nodes-count').textContent = `${formatInt(this.nodes.length)} ${this.nodes.length === 1 ? 'node' : 'nodes'}`;
    $('nodes-pager').hidden = pages <= 1;
    $('nodes-page').textContent = `${formatInt(this.page * NODE_PAGE + 1)}–${formatInt(this.page * NODE_PAGE + slice.length)} of ${formatInt(list.length)}`;
    $('nodes-prev').disabled = this.page === 0;
    $('nodes-next').disabled = this.page >= pages - 1;
  }
}

// ---- keys table -------------------------------------------------------------

export function renderKeys(data, query, dark, onPick) {
  const rows = data.keys.map((k) => {
    const tr = el('tr', { tabIndex: 0 }, [
      el('td', null, k.key),
      el('td', { className: 'num' }, formatInt(k.position)),
      el('td', null, [dot(k.node, dark), nodeLabel(k.node)]),
    ]);
    tr.title = 'Trace this key';
    tr.addEventListener('click', () => onPick(k.key));
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') onPick(k.key); });
    return tr;
  });
  if (!rows.length) {
    const why = query.prefix || query.node ? 'No key matches.' : 'No keys yet. Insert one or generate many.';
    rows.push(el('tr', null, el('td', { colSpan: 3, className: 'muted' }, why)));
  }
  $('keys-body').replaceChildren(...rows);
  const filtered = query.prefix || query.node;
  $('keys-count').textContent = `${formatInt(data.total)} ${data.total === 1 ? 'key' : 'keys'}${filtered ? ' match' : ''}`;
  const first = data.total ? query.offset + 1 : 0;
  $('keys-page').textContent = `${formatInt(first)}–${formatInt(query.offset + data.keys.length)} of ${formatInt(data.total)}`;
  $('keys-prev').disabled = query.offset === 0;
  $('keys-next').disabled = query.offset + data.keys.length >= data.total;
}

export function fillNodeFilter(nodes, selected) {
  const select = $('keys-node');
  const names = nodes.map((n) => n.name).sort();
  if (selected && !names.includes(selected)) names.unshift(selected);
  const options = [el('option', { value: '' }, 'All nodes')];
  for (const name of names) options.push(el('option', { value: name }, name));
  select.replaceChildren(...options);
  select.value = selected || '';
}

// ---- statistics -------------------------------------------------------------

const BAR_LIMIT = 200;

export function renderStats(stats, dark) {
  const numbers = [
    ['Nodes', formatInt(stats.nodes)],
    ['Keys', formatInt(stats.keys)],
    ['Mean keys', formatNumber(stats.mean, 1)],
    ['Std dev', formatNumber(stats.stddev, 1)],
    ['CV', formatNumber(stats.cv, 3)],
    ['Min', formatInt(stats.min ?? 0)],
    ['Max', formatInt(stats.max ?? 0)],
    ['Max / mean', formatNumber(stats.max_over_mean, 3)],
  ];
  $('stats-numbers').replaceChildren(...numbers.map(([k, v]) => el('div', null, [el('dt', null, k), el('dd', null, v)])));

  let per = stats.per_node || [];
  const ideal = per.length ? 1 / per.length : 0;
  const digits = shareDigits(per.length);
  let note = null;
  if (per.length > BAR_LIMIT) {
    const byDistance = [...per].sort((a, b) => Math.abs(b.key_share - ideal) - Math.abs(a.key_share - ideal));
    const keep = new Set(byDistance.slice(0, BAR_LIMIT).map((p) => p.name));
    per = per.filter((p) => keep.has(p.name));
    note = el('p', { className: 'muted small' }, `Showing the ${BAR_LIMIT} of ${formatInt(stats.per_node.length)} nodes furthest from the ideal share.`);
  }
  let scale = ideal;
  for (const p of per) scale = Math.max(scale, p.key_share, p.arc_share);
  scale = scale || 1;
  const rows = per.map((p) => {
    const keys = el('div', { className: 'bar-keys' });
    keys.style.width = `${(p.key_share / scale) * 100}%`;
    keys.style.background = nodeColour(p.name, 1, dark);
    const ring = el('div', { className: 'bar-ring' });
    ring.style.width = `${(p.arc_share / scale) * 100}%`;
    const mark = el('div', { className: 'bar-ideal', title: `ideal ${formatPercent(ideal, digits)}` });
    mark.style.left = `${(ideal / scale) * 100}%`;
    return el('div', { className: 'bar-row', role: 'listitem', title: `${p.name}: ${formatInt(p.keys)} keys, key share ${formatPercent(p.key_share, digits)}, ring share ${formatPercent(p.arc_share, digits)}` }, [
      el('span', { className: 'bar-name' }, p.name),
      el('div', { className: 'bar-track' }, [keys, ring, mark]),
      el('span', { className: 'bar-value' }, `${formatPercent(p.key_share, digits)} / ${formatPercent(p.arc_share, digits)}`),
    ]);
  });
  if (!rows.length) rows.push(el('p', { className: 'muted' }, 'No nodes.'));
  if (note) rows.unshift(note);
  $('stats-bars').replaceChildren(...rows);
}

/** Before/after table of the statistics around one operation. */
export function renderCompare(before, after) {
  const box = $('moved-compare');
  if (!before || !after) {
    box.replaceChildren();
    return;
  }
  const line = (label, a, b) => el('tr', null, [
    el('th', { scope: 'row' }, label), el('td', { className: 'num' }, a), el('td', { className: 'num' }, b),
  ]);
  const rows = [
    line('Nodes', formatInt(before.nodes), formatInt(after.nodes)),
    line('Keys', formatInt(before.keys), formatInt(after.keys)),
    line('Mean keys', formatNumber(before.mean, 1), formatNumber(after.mean, 1)),
    line('Std dev', formatNumber(before.stddev, 1), formatNumber(after.stddev, 1)),
    line('CV', formatNumber(before.cv, 3), formatNumber(after.cv, 3)),
    line('Max / mean', formatNumber(before.max_over_mean, 3), formatNumber(after.max_over_mean, 3)),
  ];
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
    rows.push(line(`${c.name} keys`, c.a ? formatInt(c.a.keys) : '—', c.b ? formatInt(c.b.keys) : '—'));
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

// The "Failure domains" panel (issue 28 item 4): the tree of GET
// /api/locations beside the ring, each domain a native <details> with its
// nodes, keys, load against its fair share and up/down counts, and a
// Down/Up toggle that previews, then sets the whole domain in one set_state
// operation (PUT /api/locations/{type}/{name}/state). Shown only when some
// node has a location. Names come from the network: text, never HTML.

import { $, el } from './dom.js';
import { displayName, formatInt } from './format.js';

/** "1.12× fair", or what a domain without a fair share is. */
export function fairText(loadOverFair) {
  return typeof loadOverFair === 'number' && Number.isFinite(loadOverFair)
    ? `${loadOverFair.toFixed(2)}× fair`
    : 'no fair share';
}

/** The figures of one domain, as the panel writes them. */
export function domainFigures(d) {
  return `${formatInt(d.nodes)} ${d.nodes === 1 ? 'node' : 'nodes'} · ${formatInt(d.keys)} keys · ${fairText(d.load_over_fair)} · ${formatInt(d.up)} up, ${formatInt(d.down)} down`;
}

const pathKey = (path) => path.map(([t, n]) => `${t}\u0000${n}`).join('\u0001');

export class DomainsPanel {
  /** onState(type, name, down, button): a promise settled once done or dropped. */
  constructor({ onState }) {
    this.onState = onState;
    this.closed = new Set(); // domains the reader collapsed, kept across refreshes
    this.toggles = new Map(); // path key -> the Down toggle drawn for it now
    this.seen = new Map(); // "type\u0000name" -> how many places of the tree hold it
  }

  /**
   * answer: GET /api/locations, or {error} when it failed; located: some
   * node has a location (the panel shows then); readOnly in the past.
   */
  set(answer, { readOnly, located }) {
    const roots = answer && Array.isArray(answer.locations) ? answer.locations : [];
    $('domains-panel').hidden = !located && roots.length === 0;
    $('domains-error').textContent = answer && answer.error ? `The failure domains could not be read: ${answer.error}` : '';
    if (!roots.length) {
      $('domains-tree').replaceChildren();
      $('domains-unlocated').replaceChildren();
      return;
    }
    // A pair such as rack=r1 may sit in two datacenters: the API's domain is
    // the pair wherever it sits, and the toggle says so.
    this.seen = new Map();
    const count = (list) => {
      for (const d of list) {
        const k = `${d.type}\u0000${d.name}`;
        this.seen.set(k, (this.seen.get(k) || 0) + 1);
        count(d.children || []);
      }
    };
    count(roots);
    // A toggle that has the focus keeps it when the tree is drawn again.
    let focused = null;
    for (const [k, t] of this.toggles) if (t === document.activeElement) focused = k;
    this.toggles = new Map();
    $('domains-tree').replaceChildren(...roots.map((d) => this.domain(d, [], readOnly)));
    if (focused !== null && this.toggles.has(focused)) this.toggles.get(focused).focus();
    const unlocated = answer.unlocated || [];
    $('domains-unlocated').replaceChildren(...(unlocated.length
      ? [
        el('h3', null, `Without a location (${formatInt(unlocated.length)})`),
        el('ul', { className: 'plain domains-unlocated-list' }, unlocated.map((n) => el('li', null, displayName(n)))),
      ]
      : []));
  }

  domain(d, parent, readOnly) {
    const path = [...parent, [d.type, d.name]];
    const key = pathKey(path);
    const label = `${displayName(d.type)} ${displayName(d.name)}`;
    const allDown = d.nodes > 0 && d.down === d.nodes;
    const toggle = el('button', {
      type: 'button',
      className: `ghost row-state domain-state${allDown ? ' is-down' : ''}`,
      'aria-pressed': String(allDown),
      'aria-label': `Down: ${label}`,
      title: allDown ? `Every node of ${label} is down: press to bring them up` : `Mark every node of ${label} down`,
      disabled: readOnly,
    }, 'Down'); // a toggle: its name stays, aria-pressed (and its colour) says the state
    this.toggles.set(key, toggle);
    toggle.addEventListener('click', async () => {
      await this.onState(d.type, d.name, !allDown, toggle);
      // The tree may have been drawn again meanwhile: the focus stays on this domain's toggle.
      const now = this.toggles.get(key);
      if (now && now.isConnected && document.activeElement !== now) now.focus();
    });
    const places = this.seen.get(`${d.type}\u0000${d.name}`) || 1;
    const details = el('details', { open: !this.closed.has(key) }, [
      el('summary', null, [
        el('span', { className: 'domain-name' }, label),
        ' ',
        el('span', { className: 'domain-figures muted small' }, domainFigures(d)),
      ]),
      el('div', { className: 'domain-body' }, [
        el('div', { className: 'domain-line' }, [
          toggle,
          places > 1
            ? el('span', { className: 'muted small domain-shared' }, `acts on every ${displayName(d.type)}=${displayName(d.name)} (${places} places)`)
            : null,
          d.members && d.members.length
            ? el('ul', { className: 'plain domain-members small', 'aria-label': `Nodes of ${label}` }, d.members.map((n) => el('li', null, displayName(n))))
            : null,
        ]),
        d.children && d.children.length
          ? el('ul', { className: 'plain domain-children' }, d.children.map((c) => this.domain(c, path, readOnly)))
          : null,
      ]),
    ]);
    details.addEventListener('toggle', () => {
      if (details.open) this.closed.delete(key);
      else this.closed.add(key);
    });
    return el('li', { className: 'domain', dataset: { type: d.type, name: d.name } }, details);
  }
}

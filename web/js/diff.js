// "Between two points": pick two operations in the history and see what
// changed from the state after the first to the state after the second
// (GET /api/diff, API.md version 3): keys moved with where from and where
// to, keys and nodes added and removed, whether the configuration changed,
// and the moves themselves, a page at a time.
//
// The page's hook is small: setupDiff() once, and decorate(li, id) on every
// history row (a "compare" toggle). The empty start (#0) has a button of its
// own. Names go in through textContent (el), shown as displayName shows them.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { displayName, formatInt } from './format.js';

const PAGE = 200; // moves asked for at a time

export function setupDiff() {
  let picks = []; // operation ids, in the order picked (at most two)
  let generation = 0; // answers that arrive after the picks changed are dropped

  const panel = $('diff-panel');
  const picked = $('diff-picked');
  const result = $('diff-result');
  const clear = $('diff-clear');

  function renderPicks() {
    for (const b of document.querySelectorAll('#history-list .op-pick')) label(b, Number(b.dataset.id));
    $('diff-start').setAttribute('aria-pressed', picks.includes(0) ? 'true' : 'false');
    picked.textContent = !picks.length ? 'Nothing picked yet.'
      : picks.length === 1 ? `From #${picks[0]}: pick a second point.`
        : `From #${picks[0]} to #${picks[1]}`;
    clear.hidden = !picks.length;
  }

  function hideResult() {
    generation++;
    result.hidden = true;
    $('diff-status').textContent = '';
    setError('diff-error', '');
  }

  function pick(id) {
    const at = picks.indexOf(id);
    if (at >= 0) picks.splice(at, 1);
    else if (picks.length === 2) picks = [picks[1], id];
    else picks.push(id);
    renderPicks();
    if (picks.length === 2) show(picks[0], picks[1]);
    else hideResult();
  }

  function label(b, id) {
    const at = picks.indexOf(id);
    b.setAttribute('aria-pressed', at >= 0 ? 'true' : 'false');
    b.textContent = at < 0 ? 'compare' : `compare: ${at === 0 ? 'from' : 'to'}`;
  }

  function tallyText(list) {
    return list.map((m) => `${displayName(m.node)} ${formatInt(m.keys)}`).join(', ') || 'none';
  }

  function moveItems(moves) {
    return moves.map((m) => el('li', null, [
      el('span', { className: 'mono' }, displayName(m.key)), ` : ${displayName(m.from)} → ${displayName(m.to)}`,
    ]));
  }

  async function show(from, to) {
    const g = ++generation;
    $('diff-status').textContent = `Comparing #${from} and #${to}…`;
    setError('diff-error', '');
    try {
      const d = await api.diff(from, to);
      if (g !== generation) return;
      const row = (name, value) => [el('dt', null, name), el('dd', { dataset: { field: name } }, value)];
      const names = (l) => (l.length ? l.map(displayName).join(', ') : 'none');
      $('diff-counts').replaceChildren(
        ...row('keys moved', formatInt(d.keys_moved)),
        ...row('keys added', formatInt(d.keys_added)),
        ...row('keys removed', formatInt(d.keys_removed)),
        ...row('nodes added', names(d.nodes_added)),
        ...row('nodes removed', names(d.nodes_removed)),
        ...row('configuration', d.config_changed ? 'changed' : 'unchanged'),
        ...row('moved from', tallyText(d.moved_from)),
        ...row('moved to', tallyText(d.moved_to)),
      );
      $('diff-moves').replaceChildren(...moveItems(d.moves));
      more(from, to, d.moves.length, d.moves_total, g);
      $('diff-status').textContent = `From #${from} to #${to}: ${d.how === 'log' ? 'composed from the log' : 'the two states compared'}.`;
      result.hidden = false;
    } catch (err) {
      if (g !== generation) return;
      $('diff-status').textContent = '';
      result.hidden = true;
      setError('diff-error', err.message);
    }
  }

  function more(from, to, shown, total, g) {
    const button = $('diff-more');
    button.hidden = shown >= total;
    button.textContent = `Next moves (${formatInt(shown)} of ${formatInt(total)} shown)`;
    button.onclick = async () => {
      button.disabled = true;
      try {
        const d = await api.diff(from, to, shown, PAGE);
        if (g !== generation) return;
        $('diff-moves').append(...moveItems(d.moves));
        more(from, to, shown + d.moves.length, d.moves_total, g);
      } catch (err) {
        setError('diff-error', err.message);
      } finally {
        button.disabled = false;
      }
    };
  }

  $('diff-start').addEventListener('click', () => pick(0));
  clear.addEventListener('click', () => {
    picks = [];
    renderPicks();
    hideResult();
  });
  panel.hidden = false;
  renderPicks();

  return {
    /** A history row: its "compare" toggle. */
    decorate(li, id) {
      const b = el('button', {
        type: 'button', className: 'linklike op-pick',
        'aria-label': `Compare from or to the state after #${id}`, dataset: { id: String(id) },
      });
      label(b, id);
      b.addEventListener('click', () => pick(id));
      (li.querySelectorAll('.op-line')[1] || li).append(b);
    },
  };
}

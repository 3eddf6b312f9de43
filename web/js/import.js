// "Paste your cluster": a real system's configuration or status text
// (nginx.conf, haproxy.cfg, a memcached server list, a twemproxy pool, an
// Envoy cluster, `nodetool ring`, `CLUSTER NODES`) becomes the simulation
// (docs/api.md, "Version 3: import a real cluster"). The dialog first shows
// what the import would do -- the nodes read from the text, the keys that
// would move and from where, the notes -- through POST /api/preview
// {"op": "import"}; "Apply import" then makes it one import operation
// (POST /api/import). A text the real program would refuse is refused with
// its line: the message says it and the line is selected in the text.

import { $, el, setError } from './dom.js';
import { displayName, formatInt } from './format.js';

/**
 * Fills the format list from the server's (GET /api/config's
 * "import_formats", the importers' own table), "Recognise it" first,
 * keeping the choice; nothing to do while the list is the one shown.
 */
export function showImportFormats(formats) {
  const select = $('import-format');
  if (!select || !Array.isArray(formats)) return;
  const values = ['auto', ...formats.map((f) => f.format)];
  if ([...select.options].map((o) => o.value).join('\n') === values.join('\n')) return;
  const chosen = select.value || 'auto';
  select.replaceChildren(
    el('option', { value: 'auto' }, 'Recognise it'),
    ...formats.map((f) => el('option', { value: f.format }, f.title)),
  );
  select.value = values.includes(chosen) ? chosen : 'auto';
}

function lineRange(text, line) {
  let start = 0;
  for (let i = 1; i < line; i++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) return null;
    start = nl + 1;
  }
  const end = text.indexOf('\n', start);
  return [start, end < 0 ? text.length : end];
}

function tally(list) {
  return (list || []).map((m) => `${m.node === null ? '(no node)' : displayName(m.node)} ${formatInt(m.keys)}`).join(', ');
}

export function setupImport({ api, onOperation, refresh }) {
  const dialog = $('import-dialog');
  const format = $('import-format');
  const name = $('import-name');
  const text = $('import-text');
  const result = $('import-result');
  const applyButton = $('import-apply');
  const previewButton = $('import-preview');
  let previewed = null; // the request the shown preview is for


  function request() {
    const body = { format: format.value, text: text.value };
    if (name.value.trim() !== '') body.name = name.value;
    return body;
  }
  const same = (a, b) => a && b && a.format === b.format && a.text === b.text && a.name === b.name;

  function invalidate() {
    if (previewed && same(previewed, request())) return;
    previewed = null;
    applyButton.disabled = true;
    result.replaceChildren();
  }
  for (const input of [format, name, text]) input.addEventListener('input', invalidate);

  function showError(err) {
    setError('import-error', err.message, text);
    // A text of several pools, upstreams or backends: the server lists them
    // ("the text has 2 pools ("alpha", "beta"): choose one with name");
    // each is offered as a choice that previews it (issue 25 item 11).
    const many = err.message.match(/has \d+ (\w+) \((.*)\): choose one/);
    if (many) {
      const names = [...many[2].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
      if (names.length) {
        const kind = many[1].replace(/s$/, '');
        result.replaceChildren(el('div', { className: 'import-choices', role: 'group', 'aria-label': `Choose a ${kind}` }, [
          el('span', { className: 'small' }, `Choose a ${kind}: `),
          ...names.map((n) => {
            const b = el('button', { type: 'button', className: 'secondary small', dataset: { section: n } }, n);
            b.addEventListener('click', () => {
              name.value = n;
              invalidate();
              previewButton.click();
            });
            return b;
          }),
        ]));
      }
    }
    const line = err.line || (err.message.match(/^line (\d+):/) || [])[1];
    if (line) {
      const r = lineRange(text.value, Number(line));
      if (r) {
        text.focus();
        text.setSelectionRange(r[0], r[1]);
      }
    }
  }

  function nodesList(nodes) {
    const list = el('ul', { className: 'import-nodes' });
    for (const n of nodes) {
      const bits = [`weight ${n.weight}`];
      if (n.state === 'down') bits.push('down');
      if (n.backup) bits.push('backup');
      if (n.id) bits.push(`id ${n.id}`);
      if (n.replicas && n.replicas.length) bits.push(`replicas ${n.replicas.join(', ')}`);
      if (n.line) bits.push(`line ${n.line}`);
      list.append(el('li', {}, `${displayName(n.name)} · ${bits.join(' · ')}`));
    }
    return list;
  }

  function showPreview(p) {
    const imp = p.import;
    const section = imp.name ? ` “${imp.name}”` : '';
    const parts = [
      el('p', { className: 'import-summary' },
        `${imp.format}${section}: ${formatInt(imp.nodes.length)} node${imp.nodes.length === 1 ? '' : 's'}, algorithm ${imp.algorithm}. `
        + `Importing would move ${formatInt(p.keys_moved)} key${p.keys_moved === 1 ? '' : 's'}`
        + (p.keys_moved ? ` — from ${tally(p.moved_from)}; to ${tally(p.moved_to)}.` : '.')),
      nodesList(imp.nodes),
    ];
    if (imp.notes.length) {
      const notes = el('ul', { className: 'import-notes muted small' });
      for (const n of imp.notes) notes.append(el('li', {}, n.line ? `line ${n.line}: ${n.message}` : n.message));
      parts.push(el('p', { className: 'muted small' }, 'Notes:'), notes);
    }
    result.replaceChildren(...parts);
  }

  $('import-open').addEventListener('click', () => {
    setError('import-error', '', text);
    dialog.showModal();
    text.focus();
  });
  $('import-close').addEventListener('click', () => dialog.close());

  previewButton.addEventListener('click', async () => {
    const body = request();
    setError('import-error', '', text);
    result.replaceChildren(el('p', { className: 'muted small' }, 'Reading the text…'));
    previewButton.disabled = true;
    try {
      const p = await api.previewImport(body);
      previewed = body;
      showPreview(p);
      applyButton.disabled = false;
    } catch (err) {
      result.replaceChildren();
      showError(err);
    } finally {
      previewButton.disabled = false;
    }
  });

  $('import-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!previewed) return;
    applyButton.disabled = true;
    try {
      const answer = await api.importCluster(previewed);
      if (answer && answer.operation) onOperation(answer.operation);
      dialog.close();
      previewed = null;
      result.replaceChildren();
      refresh();
    } catch (err) {
      showError(err);
      applyButton.disabled = false;
    }
  });
}

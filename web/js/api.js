// The page's one HTTP client for the ringsim API (see shared/API.md): every
// request the page makes, JSON calls, text downloads and the event stream,
// goes through this module (eslint.config.mjs refuses fetch, EventSource and
// XMLHttpRequest anywhere else in web/js, and a browser test checks it).
//
// Every call returns the parsed JSON answer or throws an ApiError carrying
// the server's own words ({"error": {"code", "message"}}), so the page can
// show them next to the control that caused them. A call given an
// AbortSignal ({signal}) that is aborted rejects with the browser's own
// AbortError, untouched, so that callers can tell "cancelled" from "failed".
// Names and keys are always percent-encoded: they are arbitrary UTF-8 and
// may hold "/", "%", "#", "?".

export class ApiError extends Error {
  /** body: the parsed error answer, when there is one (a scenario's names its line). */
  constructor(status, code, message, body = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

// The access token of a server that listens beyond this machine: it prints
// http://HOST:PORT/?token=T. The page takes the token from its address once,
// keeps it for the session (sessionStorage: this tab, until it closes), takes
// it out of the address bar (history.replaceState) so that it is not
// bookmarked or shared, and sends it with every request. EventSource cannot
// send headers, so the event stream carries it as ?token=.
const TOKEN_KEY = 'ringsim-token';

function takeToken() {
  try {
    const url = new URL(window.location.href);
    const given = url.searchParams.get('token');
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given);
      url.searchParams.delete('token');
      history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null; // no window or no storage: no token
  }
}

const token = typeof window === 'undefined' ? null : takeToken();

/**
 * The event stream's address, with the token when the server needs one. A
 * page more than 1,000 operations behind (left open across a restart) is
 * told to reload its state rather than sent every operation it missed.
 */
function eventsUrl() {
  return `/api/events?reload_after=1000${token ? `&token=${encodeURIComponent(token)}` : ''}`;
}

/** fetch(), with a failure to connect said in words; an abort stays an AbortError. */
async function send(path, init) {
  try {
    return await fetch(path, init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', `The server cannot be reached (${err.message}).`);
  }
}

/** The ApiError of an answer that is not 2xx, from its text. */
function refusal(response, text) {
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  const error = data && data.error;
  const message = error && typeof error.message === 'string' && error.message
    ? error.message
    : `${response.status} ${response.statusText || 'error'}`;
  return new ApiError(response.status, error && error.code ? error.code : 'http', message, data);
}

async function request(method, path, body, { signal } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (signal) init.signal = signal;
  // Every mutation is labelled JSON, also without a body: the server refuses
  // a POST, PUT or DELETE that is not (a cross-site form cannot send it).
  if (method !== 'GET') init.headers['Content-Type'] = 'application/json';
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await send(path, init);
  const text = await response.text();
  if (!response.ok) throw refusal(response, text);
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(response.status, 'invalid_answer', 'The server sent an answer that is not JSON.');
  }
}

/**
 * The text of a text answer (CSV, a scenario). The HTTP server of this
 * version sends such answers wrapped as JSON {"content_type", "text"}; the
 * text is taken out, and a plain answer taken as it is.
 */
function unwrapText(response, text) {
  if (!/json/.test(response.headers.get('Content-Type') || '')) return text;
  try {
    const data = JSON.parse(text);
    if (data && typeof data.text === 'string' && typeof data.content_type === 'string') return data.text;
  } catch { /* not JSON after all */ }
  return text;
}

/**
 * The body of one GET answer as text, read as it streams in (every key of
 * a million is tens of megabytes): onProgress(bytes so far) after each chunk.
 */
async function requestText(path, { onProgress, signal } = {}) {
  const init = { headers: token ? { Authorization: `Bearer ${token}` } : {} };
  if (signal) init.signal = signal;
  const response = await send(path, init);
  if (!response.ok) throw refusal(response, await response.text());
  const chunks = [];
  let bytes = 0;
  if (response.body && response.body.getReader) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      if (onProgress) onProgress(bytes);
    }
  } else {
    chunks.push(new Uint8Array(await response.arrayBuffer()));
  }
  const text = new TextDecoder().decode(await new Blob(chunks).arrayBuffer());
  return unwrapText(response, text);
}

/** Builds "path?a=1&b=2" leaving out empty or undefined values. */
function withQuery(path, params) {
  const parts = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

const enc = encodeURIComponent;

/**
 * POST /api/trace: a request log uploaded as the body (raw bytes, any
 * size up to 1 GiB; the server spools it to a file). XMLHttpRequest, the
 * one browser API that reports upload progress: onProgress(sent, total)
 * while it goes up, then onProgress(total, total, true) while the server
 * replays it. An aborted signal aborts the upload and the replay (the
 * server stops when its client leaves).
 */
function uploadTrace(file, params, { onProgress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', withQuery('/api/trace', params));
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.setRequestHeader('Accept', 'application/json');
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => { if (onProgress) onProgress(e.loaded, e.total || file.size, false); };
    xhr.upload.onload = () => { if (onProgress) onProgress(file.size, file.size, true); };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The server cannot be reached (the upload failed).'));
    xhr.onabort = () => reject(new DOMException('The replay was stopped.', 'AbortError'));
    xhr.onload = () => {
      const response = { status: xhr.status, statusText: xhr.statusText };
      if (xhr.status < 200 || xhr.status >= 300) {
        reject(refusal(response, xhr.responseText));
        return;
      }
      try {
        resolve(JSON.parse(xhr.responseText));
      } catch {
        reject(new ApiError(xhr.status, 'invalid_answer', 'The server sent an answer that is not JSON.'));
      }
    };
    if (signal) {
      if (signal.aborted) {
        reject(new DOMException('The replay was stopped.', 'AbortError'));
        return;
      }
      signal.addEventListener('abort', () => xhr.abort(), { once: true });
    }
    xhr.send(file);
  });
}

export const api = {
  // The configuration and the algorithm catalogue ("algorithms").
  config: (at, options) => request('GET', withQuery('/api/config', { at }), undefined, options),
  setConfig: (changes) => request('PUT', '/api/config', changes),

  // Nodes: added, removed, reweighted in place, marked down or up.
  nodes: (at) => request('GET', withQuery('/api/nodes', { at })),
  addNode: (name, weight) => request('POST', '/api/nodes', weight === undefined ? { name } : { name, weight }),
  removeNode: (name) => request('DELETE', `/api/nodes/${enc(name)}`),
  setWeight: (name, weight) => request('PATCH', `/api/nodes/${enc(name)}`, { weight }),
  // Node states (docs/api.md "Node states"): "up" or "down".
  setState: (name, state) => request('PUT', `/api/nodes/${enc(name)}/state`, { state }),

  // Failure domains (docs/api.md "Failure domains (version 4)").
  /** The location tree: {"locations": [domain…], "unlocated": [name…]}. */
  locations: (at) => request('GET', withQuery('/api/locations', { at })),
  /** Every node of the domain TYPE=NAME down or up, in one set_state operation. */
  setDomainState: (type, name, state) => request('PUT', `/api/locations/${enc(type)}/${enc(name)}/state`, { state }),

  // What is drawn and counted, live or as it was right after operation `at`.
  ring: (at) => request('GET', withQuery('/api/ring', { at })),
  stats: (at) => request('GET', withQuery('/api/stats', { at })),
  density: (bins, at) => request('GET', withQuery('/api/density', { bins, at })),

  // Keys.
  keys: ({ node, prefix, order, offset, limit, at } = {}) =>
    request('GET', withQuery('/api/keys', { node, prefix, order, offset, limit, at })),
  insertKey: (key) => request('POST', '/api/keys', { key }),
  insertKeys: (keys) => request('POST', '/api/keys', { keys }),
  generateKeys: (count, prefix, start) => {
    const generate = { count };
    if (prefix !== undefined) generate.prefix = prefix;
    if (start !== undefined) generate.start = start;
    return request('POST', '/api/keys', { generate });
  },
  deleteKey: (key) => request('DELETE', `/api/keys/${enc(key)}`),
  /** Where K goes, live or as it was right after operation `at`. */
  lookup: (key, at) => request('GET', withQuery('/api/lookup', { key, at })),

  // The log, time travel, and the difference between two states (API.md v3).
  operations: (after, limit) => request('GET', withQuery('/api/operations', { after, limit })),
  operation: (id, offset) => request('GET', withQuery(`/api/operations/${enc(id)}`, { offset })),
  reset: () => request('POST', '/api/reset'),
  cancel: () => request('POST', '/api/cancel'),
  revert: (to) => request('POST', '/api/revert', { to }),
  /** What changed from the state after `from` to the state after `to`; moves from `offset`. */
  diff: (from, to, offset, limit) => request('GET', withQuery('/api/diff', { from, to, offset, limit })),

  // Looking before changing (lab.js): nothing these ask is recorded.
  /** What an operation ({"op", …its body}) would do. */
  preview: (body, options) => request('POST', '/api/preview', body, options),
  /** The current nodes and keys placed by each algorithm ("a,b"; '' for all). */
  compare: (algorithms, options) => request('GET', withQuery('/api/compare', { algorithms }), undefined, options),
  /** Max/mean against points per node for `nodes` nodes ('' for the current ones). */
  theory: (nodes) => request('GET', withQuery('/api/theory', { nodes })),
  /** A request log replayed (trace.js): file a File or Blob; params the query. */
  trace: (file, params, options) => uploadTrace(file, params, options),

  // Scenario files (lab.js).
  scenarios: () => request('GET', '/api/scenarios'),
  scenario: (name) => request('GET', `/api/scenarios/${enc(name)}`),
  /** {"text", "name"?, "check"?}: the report of its steps. */
  runScenario: (body) => request('POST', '/api/scenarios/run', body),

  // Workloads and the traffic replay (docs/api.md "Version 3: traffic").
  workload: (at) => request('GET', withQuery('/api/workload', { at })),
  setWorkload: (body) => request('PUT', '/api/workload', body),
  trafficRun: (body, options) => request('POST', '/api/traffic/run', body, options),

  // Import a real cluster (docs/api.md v3): the paste dialog (import.js).
  /** What importing would do: {"keys_moved", "moved_from", "moved_to", "import"…}. */
  previewImport: (body) => request('POST', '/api/preview', { op: 'import', ...body }),
  /** One import operation: {"operation", "import"}. */
  importCluster: (body) => request('POST', '/api/import', body),

  /** A text answer (CSV, JSON to save, a scenario, a config): {onProgress(bytes), signal}. */
  text: (path, options) => requestText(path, options),

  /** The live event stream (server-sent events: operation, progress, reload). */
  events: () => new EventSource(eventsUrl()),
};

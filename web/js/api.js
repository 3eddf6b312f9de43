// HTTP client for the ringsim API (see shared/API.md).
//
// Every call returns the parsed JSON answer or throws an ApiError carrying
// the server's own words ({"error": {"code", "message"}}), so the page can
// show them next to the control that caused them. Names and keys are always
// percent-encoded: they are arbitrary UTF-8 and may hold "/", "%", "#", "?".

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
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
export function eventsUrl() {
  return `/api/events?reload_after=1000${token ? `&token=${encodeURIComponent(token)}` : ''}`;
}

async function request(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' } };
  // Every mutation is labelled JSON, also without a body: the server refuses
  // a POST, PUT or DELETE that is not (a cross-site form cannot send it).
  if (method !== 'GET') init.headers['Content-Type'] = 'application/json';
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, 'network', `The server cannot be reached (${err.message}).`);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      if (response.ok) throw new ApiError(response.status, 'invalid_answer', 'The server sent an answer that is not JSON.');
    }
  }
  if (!response.ok) {
    const error = data && data.error;
    const message = error && typeof error.message === 'string'
      ? error.message
      : `${response.status} ${response.statusText || 'error'}`;
    throw new ApiError(response.status, error && error.code ? error.code : 'http', message);
  }
  return data;
}

/** Builds "path?a=1&b=2" leaving out empty or undefined values. */
export function withQuery(path, params) {
  const parts = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

const enc = encodeURIComponent;

export const api = {
  config: (at) => request('GET', withQuery('/api/config', { at })),
  setConfig: (changes) => request('PUT', '/api/config', changes),
  nodes: (at) => request('GET', withQuery('/api/nodes', { at })),
  addNode: (name, weight) => request('POST', '/api/nodes', weight === undefined ? { name } : { name, weight }),
  removeNode: (name) => request('DELETE', `/api/nodes/${enc(name)}`),
  ring: (at) => request('GET', withQuery('/api/ring', { at })),
  stats: (at) => request('GET', withQuery('/api/stats', { at })),
  density: (bins, at) => request('GET', withQuery('/api/density', { bins, at })),
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
  lookup: (key) => request('GET', withQuery('/api/lookup', { key })),
  operations: (after, limit) => request('GET', withQuery('/api/operations', { after, limit })),
  operation: (id, offset) => request('GET', withQuery(`/api/operations/${enc(id)}`, { offset })),
  reset: () => request('POST', '/api/reset'),
  cancel: () => request('POST', '/api/cancel'),
  revert: (to) => request('POST', '/api/revert', { to }),
};

// Additions of the page for placement algorithms and time travel (issues 7
// and 8); the calls above are unchanged.
Object.assign(api, {
  /** Where K goes, live or as it was right after operation `at`. */
  lookupAt: (key, at) => request('GET', withQuery('/api/lookup', { key, at })),
  /** A node's weight changed in place (one set_weight operation). */
  setWeight: (name, weight) => request('PATCH', `/api/nodes/${enc(name)}`, { weight }),
  // Node states (docs/api.md "Node states"): "up" or "down".
  setState: (name, state) => request('PUT', `/api/nodes/${enc(name)}/state`, { state }),
});

// The difference between two states (API.md version 3): web/js/diff.js.
Object.assign(api, {
  /** What changed from the state after `from` to the state after `to`; moves from `offset`. */
  diff: (from, to, offset, limit) => request('GET', withQuery('/api/diff', { from, to, offset, limit })),
});

// Workloads (docs/api.md "Version 3: traffic"): web/js/load.js.
Object.assign(api, {
  /** The workload, live or as it was right after operation `at`. */
  workload: (at) => request('GET', withQuery('/api/workload', { at })),
  /** One workload operation. */
  setWorkload: (body) => request('PUT', '/api/workload', body),
});

// Import a real cluster (docs/api.md v3): the paste dialog (import.js).
Object.assign(api, {
  /** What importing would do: {"keys_moved", "moved_from", "moved_to", "import"…}. */
  previewImport: (body) => request('POST', '/api/preview', { op: 'import', ...body }),
  /** One import operation: {"operation", "import"}. */
  importCluster: (body) => request('POST', '/api/import', body),
});

// Lookup trace: the server's own steps from a key to its owner
// (GET /api/lookup?key=K[&at=N]), in the system's words — SHA-256
// position, MD5 point, CRC-32, xxHash64 ring entry, jump bucket, table
// entry — with the preference list when keys have replicas. The page
// computes nothing here: it shows the answer and marks it on the ring.
//
// The trace follows the timeline: in a past state it is asked "as it was
// after operation N", and an answer that arrives after the view moved on is
// dropped.

import { api } from './api.js';
import { $, el, setError } from './dom.js';
import { displayName, formatBig } from './format.js';

/** A key in quotes, with what cannot be seen escaped (“a⟨U+200B⟩b”). */
function shown(key) {
  const d = displayName(key);
  return d.startsWith('“') ? d : `“${d}”`;
}
import { keyDrawPosition } from './space.js';

function step(title, content) {
  return el('li', null, [el('span', { className: 'step-title' }, title), el('span', null, content)]);
}

const STEP_TITLES = {
  hash: 'Key hash',
  ring: 'The ring',
  points: 'The points',
  continuum: 'The continuum',
  point: 'The point',
  successor: 'Successor (clockwise)',
  owner: 'Owner',
  jump: 'Jump hash',
  entry: 'Table entry',
  slot: 'Hash slot',
  replicas: 'Replicas',
};

function stepTitle(name) {
  return STEP_TITLES[name] || name.charAt(0).toUpperCase() + name.slice(1).replace(/_/g, ' ');
}

let generation = 0;

/** Forgets any trace in flight (the view it was for is gone). */
export function cancelTrace() {
  generation++;
}

/**
 * Runs the trace for `key` and shows it. ctx: {ring, at (null = live),
 * space (space.js), keyHash (the catalogue's words for the algorithm's key
 * hash)}.
 */
export async function traceKey(key, { ring, at, space, keyHash, nearest = false }) {
  const input = $('lookup-key');
  const list = $('lookup-steps');
  const result = $('lookup-result');
  if (key === '') {
    setError('lookup-error', 'Type a key to look up.', input);
    return null;
  }
  const mine = ++generation;
  let answer;
  try {
    answer = await api.lookup(key, at === null ? undefined : at);
  } catch (err) {
    if (mine !== generation) return null;
    setError('lookup-error', err.message, input);
    list.replaceChildren();
    result.textContent = '';
    ring.setPath(null);
    return null;
  }
  if (mine !== generation) return null;
  setError('lookup-error', '', input);

  const when = at === null ? '' : ` (as it was after #${at})`;
  const replicas = Array.isArray(answer.replicas) ? answer.replicas : (answer.node === null ? [] : [answer.node]);
  // The headline names the node that answers for the key now (served_by);
  // the owner by placement stands beside it when a down node made them differ.
  const served = answer.served_by === undefined ? answer.node : answer.served_by;
  const stored = answer.stored ? ' · stored' : ' · not stored (this is where it would go)';
  const others = replicas.length > 1 ? `, replicas ${replicas.slice(1).map(displayName).join(', ')}` : '';
  result.dataset.served = served === null ? '' : served;
  if (answer.node === null) {
    result.textContent = `${shown(key)} has no owner: there is no node${when}.`;
  } else if (served === null) {
    result.textContent = `${shown(key)} → no live replica: nobody serves it (owner ${displayName(answer.node)} is down${others})${stored}${when}`;
  } else if (served !== answer.node) {
    result.textContent = `${shown(key)} → served by ${displayName(served)} (owner ${displayName(answer.node)} is down${others})${stored}${when}`;
  } else {
    result.textContent = `${shown(key)} → ${displayName(served)}${others}${stored}${when}`;
  }

  const items = [];
  // The key's whole SHA-256, where the algorithm hashes with it (the ring,
  // multiprobe, jump, rendezvous): the bytes it reads are in bold.
  // Whether the algorithm hashes with SHA-256 is read from the answer's own
  // steps, not from the view: a live lookup answers the server's state now,
  // which may be newer than the view (a switch to ketama in flight), and a
  // SHA-256 digest beside MD5 steps would mix two states (issue 25 item 20).
  const said = Array.isArray(answer.trace) ? answer.trace.map((t) => t.detail).join(' ') : '';
  const digest = typeof answer.sha256 === 'string' && /sha-?256/i.test(said || keyHash || '') ? answer.sha256 : null;
  const digestStep = () => {
    const used = /first 32 bits/i.test(keyHash) && !/next 32/i.test(keyHash) ? 8 : 16;
    return step('SHA-256 of the key (32 bytes; the ones read in bold)', el('code', { className: 'digest' }, [
      el('strong', null, digest.slice(0, used)), digest.slice(used),
    ]));
  };
  if (Array.isArray(answer.trace) && answer.trace.length) {
    // The server's steps first, in its words and order; the page's after.
    for (const s of answer.trace) items.push(step(stepTitle(s.step), s.detail));
    if (digest) items.push(digestStep());
  } else {
    items.push(step('Owner', displayName(answer.node)));
  }
  if (answer.coordinate !== undefined) {
    items.push(step('Coordinate in the algorithm’s space', el('code', null, answer.coordinate === null ? 'none (this algorithm has no coordinate)' : formatBig(answer.coordinate))));
  }
  if (replicas.length > 1) {
    items.push(step('Preference list (owner first)', el('ol', { className: 'replicas' }, replicas.map((r) => el('li', null, displayName(r))))));
  }
  list.replaceChildren(...items);
  list.dataset.key = key;
  list.dataset.at = at === null ? 'live' : String(at);

  const pos = keyDrawPosition(space, answer);
  ring.setPath({ pos, point: answer.point || null, replicas, node: answer.node, nearest });
  return answer;
}

/** Clears the trace (the key box was emptied, or there is no view). */
export function clearTrace(ring) {
  generation++;
  $('lookup-steps').replaceChildren();
  $('lookup-result').textContent = '';
  ring.setPath(null);
}

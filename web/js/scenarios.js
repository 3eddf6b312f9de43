// Guided scenarios from the original simulator. Each one is a list of steps
// run in order through the public API (the same calls as the controls), with
// a short explanation and, at the end, an outcome checked against the rule it
// illustrates. Positions and owners are the server's answers.

import { $, el } from './dom.js';
import {
  angleOf, displayName, formatInt, formatPercent, groupMoves, movedSummary,
} from './format.js';
import { ORIGINAL_ALGORITHM, catalogueEntry } from './traits.js';

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

const SPARE_NAMES = ['foxtrot', 'golf', 'hotel', 'india', 'juliett', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec'];

export function setupScenarios({ api, confirmInPage, getState, onOperation, refresh }) {
  let running = false;

  async function apply(promise) {
    const answer = await promise;
    if (answer && answer.operation) onOperation(answer.operation);
    return answer;
  }

  async function ensureEmpty() {
    const stats = await api.stats();
    if (stats.nodes === 0 && stats.keys === 0) return 'the ring is already empty';
    const yes = await confirmInPage('Start from an empty ring?',
      `This scenario starts from an empty ring: the ${formatInt(stats.nodes)} nodes and ${formatInt(stats.keys)} keys now stored will be removed (the history keeps them; you can revert later).`);
    if (!yes) throw new Error('Scenario cancelled: the ring was left as it was.');
    await apply(api.reset());
    return 'reset the ring';
  }

  /** The original simulator's ring: one point per node, one copy. */
  async function ensureOriginalRing() {
    const c = await api.config();
    if (c.algorithm === ORIGINAL_ALGORITHM && c.points_per_node === 1 && (c.replicas ?? 1) === 1) return 'already the original ring';
    await apply(api.setConfig({ algorithm: ORIGINAL_ALGORITHM, params: { points_per_node: 1 }, replicas: 1 }));
    return 'switched to the original ring, 1 point per node';
  }

  /** Whether the algorithm in use moves only what must move. */
  async function algorithmInUse() {
    const c = await api.config();
    const entry = catalogueEntry(c);
    return { name: c.algorithm, minimal: entry ? entry.minimal !== false : true };
  }

  async function ensureLoaded() {
    const stats = await api.stats();
    const done = [];
    if (stats.nodes < 3) {
      const { nodes } = await api.nodes();
      const have = new Set(nodes.map((n) => n.name));
      for (const name of ['alpha', 'bravo', 'charlie', 'delta']) {
        if (have.has(name)) continue;
        await apply(api.addNode(name));
        done.push(name);
        if (stats.nodes + done.length >= 4) break;
      }
    }
    let added = 0;
    if (stats.keys < 1000) {
      const answer = await apply(api.generateKeys(5000, 'key-', stats.keys));
      added = answer.inserted;
    }
    if (!done.length && !added) return `the ring is already loaded: ${formatInt(stats.nodes)} nodes, ${formatInt(stats.keys)} keys`;
    return [done.length ? `added ${done.join(', ')}` : '', added ? `inserted ${formatInt(added)} keys` : ''].filter(Boolean).join(' and ');
  }

  async function allMoves(id) {
    const first = await api.operation(id);
    const moves = [...first.moves];
    const total = first.moves_total ?? moves.length;
    while (moves.length < total && moves.length < 100000) {
      const more = await api.operation(id, moves.length);
      if (!more.moves.length) break;
      moves.push(...more.moves);
    }
    return { moves, total };
  }

  const scenarios = {
    fill: {
      title: 'Nodes, then many keys',
      intro: 'Five nodes join an empty ring one by one, then 10,000 keys arrive. Each key goes to the first node clockwise from its position. With one point per node the arcs are very unequal, so the loads are too — compare key share with ring share, then try Points per node = 100.',
      steps: [
        { text: 'Start from an empty ring', run: ensureEmpty },
        { text: 'Use the original ring: 1 point per node', run: ensureOriginalRing },
        ...['alpha', 'bravo', 'charlie', 'delta', 'echo'].map((name) => ({
          text: `Add node ${name}`,
          run: async () => {
            const a = await apply(api.addNode(name));
            return `${name} lands at position ${formatInt(a.node.position)}`;
          },
        })),
        {
          text: 'Insert 10,000 keys (key-0 … key-9999)',
          run: async () => {
            const a = await apply(api.generateKeys(10000, 'key-', 0));
            return `${formatInt(a.inserted)} inserted`;
          },
        },
      ],
      outcome: async () => {
        const s = await api.stats();
        const top = [...s.per_node].sort((a, b) => b.keys - a.keys)[0];
        return `The busiest node, ${top.name}, holds ${formatPercent(top.key_share)} of the keys where the ideal is ${formatPercent(1 / s.nodes)}; its ring share is ${formatPercent(top.arc_share)}. Key share follows ring share (cv ${s.cv.toFixed(3)}, max/mean ${s.max_over_mean.toFixed(2)}).`;
      },
    },
    remove: {
      title: 'Take a node away',
      intro: 'On a loaded ring, the node holding the most keys is removed. Consistent hashing promises that only that node\'s keys change owner: each goes to the next node clockwise, and every other key stays where it was.',
      steps: [
        { text: 'Make sure the ring has nodes and keys', run: ensureLoaded },
        {
          text: 'Remove the node with the most keys',
          run: async (ctx) => {
            ctx.algorithm = await algorithmInUse();
            const { nodes } = await api.nodes();
            const victim = [...nodes].sort((a, b) => b.keys - a.keys)[0];
            ctx.victim = victim;
            const a = await apply(api.removeNode(victim.name));
            ctx.op = a.operation;
            return `removed ${victim.name}, which held ${formatInt(victim.keys)} keys`;
          },
        },
      ],
      outcome: async (ctx) => {
        const { moves, total } = await allMoves(ctx.op.id);
        const foreign = moves.filter((m) => m.from !== ctx.victim.name).length;
        const summary = movedSummary(total, groupMoves(moves), moves.length < total);
        const victim = displayName(ctx.victim.name);
        if (foreign === 0 && total === ctx.victim.keys) {
          return `✓ Every one of the ${formatInt(total)} moves came from ${victim}, and no other key changed owner. ${summary.replace(' moved', ' relocated')}.`;
        }
        if (!ctx.algorithm.minimal) {
          return `${ctx.algorithm.name} does not promise minimal moves, and it shows: besides the ${formatInt(ctx.victim.keys)} keys of ${victim}, ${formatInt(foreign)} keys moved between nodes that stayed, as the real system would move them.`;
        }
        return `✗ Unexpected: ${formatInt(foreign)} moves did not come from ${victim} (${formatInt(total)} in all, it held ${formatInt(ctx.victim.keys)}).`;
      },
    },
    grow: {
      title: 'Grow a loaded ring',
      intro: 'A new node joins a ring that already holds keys. It takes over only the keys between its points and the preceding points; on average about 1 / (nodes + 1) of all keys move, all of them to the newcomer.',
      steps: [
        { text: 'Make sure the ring has nodes and keys', run: ensureLoaded },
        {
          text: 'Add a new node',
          run: async (ctx) => {
            const { nodes } = await api.nodes();
            const have = new Set(nodes.map((n) => n.name));
            let name = SPARE_NAMES.find((n) => !have.has(n));
            for (let i = 1; !name; i++) if (!have.has(`node-${i}`)) name = `node-${i}`;
            const stats = await api.stats();
            ctx.algorithm = await algorithmInUse();
            ctx.name = name;
            ctx.keys = stats.keys;
            ctx.nodes = stats.nodes;
            const a = await apply(api.addNode(name));
            ctx.op = a.operation;
            return `added ${name}`;
          },
        },
      ],
      outcome: async (ctx) => {
        const { moves, total } = await allMoves(ctx.op.id);
        const wrong = moves.filter((m) => m.to !== ctx.name).length;
        const share = ctx.keys ? total / ctx.keys : 0;
        const head = `${formatInt(total)} of ${formatInt(ctx.keys)} keys changed owner (${formatPercent(share)}; about ${formatPercent(1 / (ctx.nodes + 1))} is the average expectation with ${ctx.nodes + 1} nodes)`;
        if (wrong === 0) return `${head} — ✓ all went to ${ctx.name}; all other keys stayed.`;
        if (!ctx.algorithm.minimal) return `${head} — ${formatInt(wrong)} of them moved between nodes that stayed: ${ctx.algorithm.name} does not promise minimal moves, and the real system moves them too.`;
        return `${head} — ✗ ${formatInt(wrong)} went elsewhere.`;
      },
    },
    names: {
      title: 'Similar names, far apart',
      intro: 'node-1, node-2 and node-3 differ in one character, yet SHA-256 sends them to unrelated places on the ring: a good hash scatters similar inputs. Scattered is not even, though: three points cut the ring into three arcs of random length.',
      steps: [
        { text: 'Start from an empty ring', run: ensureEmpty },
        { text: 'Use the original ring: 1 point per node', run: ensureOriginalRing },
        ...['node-1', 'node-2', 'node-3'].map((name) => ({
          text: `Add node ${name}`,
          run: async () => {
            const a = await apply(api.addNode(name));
            const p = a.node.position;
            return `position ${formatInt(p)}, ${angleOf(p).toFixed(1)}°`;
          },
        })),
        {
          text: 'Insert 3,000 keys to see the resulting shares',
          run: async () => {
            const a = await apply(api.generateKeys(3000, 'key-', 0));
            return `${formatInt(a.inserted)} inserted`;
          },
        },
      ],
      outcome: async () => {
        const { nodes } = await api.nodes();
        const ps = nodes.map((n) => ({ n: n.name, p: n.position, share: n.key_share })).sort((a, b) => a.p - b.p);
        const gaps = ps.map((x, i) => {
          const prev = ps[(i - 1 + ps.length) % ps.length].p;
          return ((x.p - prev + 2 ** 32) % 2 ** 32) / 2 ** 32 * 360;
        });
        const shares = ps.map((x) => `${x.n} ${formatPercent(x.share, 0)}`).join(', ');
        const spread = Math.max(...ps.map((x) => x.share)) / Math.max(1e-9, Math.min(...ps.map((x) => x.share)));
        return `Angles: ${ps.map((x) => `${x.n} ${angleOf(x.p).toFixed(1)}°`).join(', ')} — nothing like the one-character difference of the names. But the arcs they own are ${gaps.map((g) => `${g.toFixed(0)}°`).join(', ')}, so the keys split ${shares}, far from a third each${spread > 1.5 ? ` (the busiest holds ${spread.toFixed(1)}× the least loaded)` : ''}. Scattering is not balance: set Points per node to 100 and Apply, and each node's many points average out to close to a third.`;
      },
    },
  };

  async function run(id) {
    if (running) return;
    if (getState().at !== null) return;
    const sc = scenarios[id];
    running = true;
    const buttons = document.querySelectorAll('button.scenario');
    for (const b of buttons) b.dataset.busy = '1';
    for (const b of buttons) b.disabled = true;
    $('scenario-box').hidden = false;
    $('scenario-title').textContent = sc.title;
    $('scenario-intro').textContent = sc.intro;
    $('scenario-outcome').textContent = '';
    $('scenario-error').textContent = '';
    const items = sc.steps.map((s) => el('li', null, [el('span', null, s.text), el('span', { className: 'muted small' })]));
    $('scenario-steps').replaceChildren(...items);
    const ctx = {};
    try {
      for (let i = 0; i < sc.steps.length; i++) {
        items[i].classList.add('running');
        const note = await sc.steps[i].run(ctx);
        items[i].classList.remove('running');
        items[i].classList.add('done');
        if (note) items[i].lastChild.textContent = ` — ${note}`;
        await pause(450);
      }
      await refresh();
      $('scenario-outcome').textContent = await sc.outcome(ctx);
    } catch (err) {
      $('scenario-error').textContent = err.message;
      for (const li of items) li.classList.remove('running');
    } finally {
      running = false;
      for (const b of buttons) {
        delete b.dataset.busy;
        b.disabled = getState().at !== null;
      }
    }
  }

  for (const b of document.querySelectorAll('button.scenario')) {
    b.addEventListener('click', () => run(b.dataset.scenario));
  }
}

// What the page knows of a placement algorithm comes from the server's
// catalogue (GET /api/config "algorithms", docs/api.md "Configuration"),
// read by its traits -- point_rule, space, weights, replicas, minimal,
// bounded_loads, moves -- never by testing its name. catalogueEntry() is the
// entry of the configuration in force, its variant's traits (ketama's
// unweighted continuum, nginx without `consistent`, HAProxy's map) put over
// the algorithm's own.
//
// What the catalogue does not say yet is kept here, in one place, by name
// (WORDS): a system's own word for its points and cells, one phrase for how
// a layout without points shares the space, the `export --config` format
// that writes the system's configuration, and which algorithm is the
// original simulator. These are the traits missing from the catalogue; each
// is a word or a choice the page shows, none decides a placement.

/**
 * The catalogue entry of the configuration in force (null when unknown),
 * with the traits of the variant its parameters select.
 */
export function catalogueEntry(config) {
  if (!config) return null;
  const entry = (config.algorithms || []).find((a) => a.name === config.algorithm);
  if (!entry) return null;
  const params = config.params || {};
  const variant = (entry.variants || []).find((v) => Object.entries(v.when || {}).every(([name, value]) => {
    const p = (entry.params || []).find((x) => x.name === name);
    const set = params[name] ?? (p ? p.default : undefined);
    return String(set) === String(value);
  }));
  return variant ? { ...entry, ...variant, params: entry.params, variants: entry.variants } : entry;
}

/**
 * How the algorithm lays out its space: 'points' (a ring of points, which
 * point_rule names), 'table' (a table of cells that change hands in runs:
 * Maglev's entries, Redis's slots) or 'none' (every key placed on its own:
 * jump buckets, rendezvous scores, a modulo).
 */
export function layoutOf(entry) {
  if (!entry) return 'none';
  if (entry.point_rule) return 'points';
  return entry.moves === 'regions' ? 'table' : 'none';
}

/**
 * The number of cells of a table: the catalogue's space is either the size
 * or the name of the parameter that sets it (Maglev's table_size).
 */
export function tableSize(entry, config) {
  if (/^\d+$/.test(String(entry.space))) return Number(entry.space);
  const p = (entry.params || []).find((x) => x.name === entry.space);
  const set = config && config.params ? config.params[entry.space] : undefined;
  return Number(set ?? (p ? p.default : NaN));
}

/** The algorithm of the original simulator (API.md: the default configuration). */
export const ORIGINAL_ALGORITHM = 'ring';

/*
 * Per algorithm: unit [one, many, how many per node] of a layout of
 * points; cells [one, many] of a table; table, a phrase of the table with
 * {n} for its size; structure, a phrase for a layout without points;
 * config, the `export --config` format of the real system.
 */
const WORDS = {
  ring: { unit: ['point', 'points', 'points_per_node'] },
  multiprobe: { unit: ['point', 'points', 'one per node, several probes per key'] },
  ketama: { unit: ['continuum point', 'continuum points', '160 per weight unit, as libmemcached'], config: 'libmemcached' },
  twemproxy: { unit: ['continuum point', 'continuum points', '160 per weight unit, as nutcracker'], config: 'twemproxy' },
  nginx: { unit: ['virtual node', 'virtual nodes', '160 per weight unit, as nginx'], config: 'nginx' },
  haproxy: { unit: ['tree point', 'tree points', '16 per weight unit, as HAProxy'], config: 'haproxy' },
  'envoy-ring': { unit: ['ring entry', 'ring entries', 'min_ring_size and max_ring_size shared by weight, as Envoy'], config: 'envoy' },
  cassandra: { unit: ['token', 'tokens', 'num_tokens'], config: 'cassandra' },
  maglev: {
    cells: ['entry', 'entries'],
    table: 'a lookup table of {n} entries filled by per-host permutations, each host within an entry of its share',
    config: 'envoy',
  },
  redis: { cells: ['slot', 'slots'], table: '{n} hash slots held by the masters, whole slots each', config: 'redis-nodes' },
  jump: { structure: 'no ring: each key jumps to a bucket by its own hash, so shares differ only by the keys drawn' },
  rendezvous: { structure: 'no ring: every node is scored for each key and the highest wins, so shares follow the weights up to the keys drawn' },
};

/** The words kept for an algorithm (see WORDS); {} for one the page has none for. */
export function wordsFor(name) {
  return WORDS[name] || {};
}

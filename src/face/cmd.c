/*
 * cmd.c - the command table, the parser and cmd_run (see cmd.h): the one
 * file that knows every command, as git's git.c holds commands[] while
 * builtin/ holds what each does.
 *
 * The idea: a command is one row of cmd_table -- its words, arguments,
 * options, flags, help and handler -- and five readers take it from there
 * (the command line, scenario files, `ringsim help`, the manual's checks
 * and completion).  The parser checks every value before anything runs;
 * the handlers live in files by group (cmd_node.c, cmd_key.c, cmd_log.c,
 * cmd_read.c, cmd_config.c, cmd_preview.c, cmd_workload.c; import's in
 * import_face.c) and are reached only through the table's `run`, so none of
 * them calls back up here.  What both the parser and a handler read (plain
 * numbers, the configuration's options) is cmd_value.c's, a floor below
 * (cmd_int.h draws the floors).  Costs: finding a command is a scan of the
 * table; parsing is linear in the words.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_int.h"
#include "export_config.h"
#include "import_face.h"
#include "names.h"
#include "trace_read.h"

const cmd_option cmd_options[CMD_O_COUNT] = {
    [CMD_O_DB] = {"db", "PATH", "the database (default $RINGSIM_DB, or ./ringsim.db)"},
    [CMD_O_JSON] = {"json", NULL, "print the API's JSON answer"},
    [CMD_O_CSV] = {"csv", NULL, "print the list as CSV (RFC 4180, a header row of the JSON fields)"},
    [CMD_O_WEIGHT] = {"weight", "W",
                      "the node's weight, a number above 0, or 0 under haproxy (default 1)"},
    [CMD_O_TOKENS] = {"tokens", "T,T,...",
                      "explicit signed 64-bit tokens (Cassandra's initial_token)"},
    [CMD_O_ID] = {"id", "N", "the server's id, 1 to 2147483647 (HAProxy's `id`; default: assigned)"},
    [CMD_O_BACKUP] = {"backup", NULL,
                      "a backup server (HAProxy's `backup`): it serves only when no active server "
                      "is up"},
    [CMD_O_DOWN] = {"down", NULL, "the node starts down (configured, not serving)"},
    [CMD_O_NODE] = {"node", "N", "only the keys of node N"},
    [CMD_O_PREFIX] = {"prefix", "P", "the keys' prefix (default key-)"},
    [CMD_O_START] = {"start", "S", "the first number (default: after the last generated)"},
    [CMD_O_POINTS] = {"points", "N", "points per node of the ring algorithm"},
    [CMD_O_ALGORITHM] = {"algorithm", "A", "the placement algorithm (see ringsim algorithms)"},
    [CMD_O_PARAM] = {"param", "NAME=VALUE", "an algorithm's parameter (may repeat)"},
    [CMD_O_REPLICAS] = {"replicas", "R", "copies of each key, 1 to 16"},
    [CMD_O_ALGORITHMS] = {"algorithms", "a,b,...", "the algorithms to compare (default all)"},
    [CMD_O_HOST] = {"host", "ADDR", "the address to listen on (default 127.0.0.1)"},
    [CMD_O_PORT] = {"port", "PORT", "the port (default 3000; 0 picks a free one)"},
    [CMD_O_WEB] = {"web", "DIR", "serve the page from DIR instead of the one built in"},
    [CMD_O_TOKEN] =
        {"token",
         "T", "the access token (default $RINGSIM_TOKEN, which other users cannot see; made up beyond loopback)"},
    [CMD_O_SCENARIO] = {"scenario", NULL, "write the history as a scenario file"},
    [CMD_O_BUILTIN] = {"builtin", NULL, "NAME is one of the scenarios built into ringsim"},
    [CMD_O_YCSB] = {"ycsb", NULL, "YCSB's key names: user + Math.abs(fnvhash64(n)), n from S"},
    [CMD_O_REQUESTS] = {"requests", "N", "requests to replay, 1 to 100,000,000 (default 100,000)"},
    [CMD_O_CONCURRENCY] = {"concurrency",
                           "C", "requests in flight on average, above 0, at most 1,000,000 (default 100)"},
    [CMD_O_SEED] = {"seed", "S", "the replay's seed, a whole number (default 0)"},
    [CMD_O_FACTOR] = {"factor", "F",
                      "the bounded-load factor for this replay only (default the "
                      "configuration's; 0: off)"},
    [CMD_O_FORMAT] = {"format", "F",
                      "the text's format: auto (default), nginx, haproxy, libmemcached, "
                      "twemproxy, envoy, nodetool-ring, redis-nodes"},
    [CMD_O_NAME] = {"name", "N", "the upstream, backend, pool or cluster, when the text has several"},
    [CMD_O_CONFIG] = {"config", "F",
                      "write the nodes as a real system's configuration: " EXPORT_CONFIG_FORMATS},
    [CMD_O_FILE] = {"file", "F", "read the keys from file F, one a line (- for standard input)"},
    [CMD_O_LOCATION] = {"location", "TYPE=NAME,...",
                        "where the node sits, widest domain first (dc=dc1,rack=r1,host=h1; '' "
                        "for none)"},
    [CMD_O_KEY] = {"key", "FIELD", "an access log's key: uri (default), host_uri or remote_addr"},
    [CMD_O_CACHE] = {"cache", "SIZE",
                     "an LRU cache per node: bytes (64MiB, 2GB, 1000) or objects (10000obj)"},
    [CMD_O_CHANGE] = {"change", "AT OP",
                      "before request AT (from 0) or at @TIME (epoch or RFC 3339), apply OP: "
                      "\"node add|rm|down|up NAME\", \"node weight NAME W\" (may repeat)"},
    [CMD_O_INTERVAL] = {"interval", "N",
                        "the series' interval: seconds of the log's clock, or requests without "
                        "one (default about 1/100 of the log)"},
    [CMD_O_KEY_COL] = {"key-col", "C", "csv: the key's column, by header name or number from 1"},
    [CMD_O_SIZE_COL] = {"size-col", "C", "csv: the size's column"},
    [CMD_O_TIME_COL] = {"time-col", "C", "csv: the time's column (epoch seconds or RFC 3339)"},
    [CMD_O_OP_COL] = {"op-col", "C", "csv: the operation's column"},
    [CMD_O_MAX_LOAD] = {"max-load", "L",
                        "the busiest node's load against its fair share to stay at or under "
                        "(at least 1)"},
    [CMD_O_LOG] = {"log", "FILE",
                   "plan for a request log's keys and counts (as ringsim trace reads it) instead "
                   "of the stored workload"},
    [CMD_O_STEPS] = {"steps", "N", "nodes to add at most, 1 to 256 (default 64)"},
};

#define CONFIG_OPTS                                                                                \
    (CMD_BIT(CMD_O_POINTS) | CMD_BIT(CMD_O_ALGORITHM) | CMD_BIT(CMD_O_PARAM) |                     \
     CMD_BIT(CMD_O_REPLICAS))

/* ---- failures and values only the parser reads ---- */

static int fail_usage(rs_error *err, const char *fmt, const char *arg)
{
    err->code = RINGSIM_EPARAM;
    snprintf(err->msg, sizeof err->msg, fmt, arg);
    return CMD_EXIT_USAGE;
}

static int fail_value(rs_error *err, int code)
{
    err->code = code;
    return CMD_EXIT_REFUSED;
}

/* A node's weight, as --weight W and `node weight NAME W` take it. */
static int parse_weight(const char *w, double *out, rs_error *err)
{
    if (cmd_parse_number(w, out) || *out < 0)
        return rs_fail(err, RINGSIM_EPARAM,
                       "weight must be a number of at least 0 in decimal digits (2, 0.5, 1e2; "
                       "0 under haproxy only), not \"%.64s\"",
                       w);
    return 0;
}

/* --tokens T,T,...: signed 64-bit decimal tokens (Cassandra's initial_token). */
static int parse_tokens(const char *text, int64_t **out, size_t *n, rs_error *err)
{
    int rc = *text ? names_parse_tokens(text, strlen(text), SIZE_MAX, out, n) : RINGSIM_EPARAM;
    if (rc == RINGSIM_ENOMEM)
        return rs_fail(err, rc, "out of memory");
    if (rc)
        return rs_fail(err, rc,
                       "--tokens takes signed 64-bit whole numbers separated by commas, "
                       "not \"%.200s\"",
                       text);
    return 0;
}

/* ---- the table ---- */

#define O(x) CMD_BIT(CMD_O_##x)

const cmd_def cmd_table[] = {
    {
        .name = "serve",
        .args = "",
        .options = O(HOST) | O(PORT) | O(WEB) | O(TOKEN),
        .flags = CMD_F_NO_DB,
        .summary = "start the web simulator",
        .help = "Serves the page and the HTTP API (docs/api.md) on the database until interrupted "
                "(Ctrl-C or SIGTERM). A change made by another ringsim process on the same "
                "database reaches every open page within a second. On an address other than "
                "loopback every request needs the access token: --token, $RINGSIM_TOKEN, or one "
                "made up and printed in the URL.",
    },
    {
        .name = "node add",
        .args = "NAME",
        .min_args = 1,
        .max_args = 1,
        .options = O(WEIGHT) | O(TOKENS) | O(ID) | O(BACKUP) | O(DOWN) | O(LOCATION),
        .flags = CMD_F_CHANGE,
        .summary = "add a node",
        .help = "Adds the node NAME; the keys of the arcs it takes over move to it. A node with a "
                "weight holds a proportional number of points (or slots, or table entries). "
                "--location dc=dc1,rack=r1,host=h1 says where it sits, widest domain first: "
                "each type and name follows the rules for names without = or , and a type "
                "appears once.",
        .run = cmd__node_add,
    },
    {
        .name = "node move",
        .args = "NAME",
        .min_args = 1,
        .max_args = 1,
        .options = O(LOCATION),
        .required = O(LOCATION),
        .flags = CMD_F_CHANGE,
        .summary = "give a node another location",
        .help = "Gives the node NAME the location of --location TYPE=NAME,... (widest first; '' "
                "for none); replicas placed across domains follow it. One set_location "
                "operation; the location it already has changes nothing and records nothing.",
        .run = cmd__node_move,
    },
    {
        .name = "node rm",
        .args = "NAME",
        .min_args = 1,
        .max_args = 1,
        .flags = CMD_F_CHANGE,
        .summary = "remove a node",
        .help = "Removes the node NAME; its keys move to the nodes that now own their positions.",
        .run = cmd__node_rm,
    },
    {
        .name = "node weight",
        .args = "NAME W",
        .min_args = 2,
        .max_args = 2,
        .flags = CMD_F_CHANGE,
        .summary = "change a node's weight in place",
        .help = "Gives the node NAME the weight W (a number above 0, in decimal digits); the keys "
                "move as the placement says. One set_weight operation; the weight it already has "
                "changes nothing and records nothing.",
        .run = cmd__node_weight,
    },
    {
        .name = "node down",
        .args = "[NAME]",
        .max_args = 1,
        .options = O(LOCATION),
        .flags = CMD_F_CHANGE,
        .summary = "mark a node down (failed, still configured)",
        .help = "Marks the node NAME down: it stays in the configuration and its keys are served "
                "as the algorithm's real system serves them when that server fails (docs/api.md, "
                "Node states). One set_state operation; a node already down changes nothing and "
                "records nothing. With --location TYPE=NAME instead of NAME, every node of that "
                "failure domain (rack=r1, dc=dc2) goes down in one set_state operation.",
        .run = cmd__node_state,
    },
    {
        .name = "node up",
        .args = "[NAME]",
        .max_args = 1,
        .options = O(LOCATION),
        .flags = CMD_F_CHANGE,
        .summary = "mark a node up again",
        .help = "Marks the node NAME up: the keys it owns come back to it. One set_state "
                "operation; a node already up changes nothing and records nothing. With "
                "--location TYPE=NAME instead of NAME, every node of that failure domain.",
        .run = cmd__node_state,
    },
    {
        .name = "node reweight",
        .args = "NAME R",
        .min_args = 2,
        .max_args = 2,
        .flags = CMD_F_CHANGE,
        .summary = "set an OSD's reweight, 0 to 1 (ceph)",
        .help = "Gives the OSD NAME the reweight R (0 to 1), as `ceph osd reweight`: CRUSH "
                "keeps that share of the PGs that would map to it and maps the others around "
                "it. One set_reweight operation; the reweight it already has changes nothing "
                "and records nothing. Under another algorithm: refused.",
        .run = cmd__node_reweight,
    },
    {
        .name = "node out",
        .args = "NAME",
        .min_args = 1,
        .max_args = 1,
        .flags = CMD_F_CHANGE,
        .summary = "mark an OSD out: reweight 0 (ceph)",
        .help = "Marks the OSD NAME out, as `ceph osd out`: its reweight becomes 0 and CRUSH "
                "maps around it. The same set_reweight operation as `node reweight NAME 0`.",
        .run = cmd__node_reweight,
    },
    {
        .name = "node in",
        .args = "NAME",
        .min_args = 1,
        .max_args = 1,
        .flags = CMD_F_CHANGE,
        .summary = "mark an OSD in: reweight 1 (ceph)",
        .help = "Marks the OSD NAME in, as `ceph osd in`: its reweight becomes 1. The same "
                "set_reweight operation as `node reweight NAME 1`.",
        .run = cmd__node_reweight,
    },
    {
        .name = "node ls",
        .args = "",
        .options = O(CSV),
        .summary = "list nodes (like nodetool status)",
        .help = "Lists the nodes in the configuration's order (as they were added or imported): "
                "position, weight, points, keys (those it serves), key share, ring share and "
                "state (up or down). --json and --csv list them by position, as GET /api/nodes.",
        .run = cmd__node_ls,
    },
    {
        .name = "locations",
        .args = "",
        .summary = "the failure-domain tree (dc, rack, host...)",
        .help = "The nodes' locations as a tree, widest domain first: each domain's nodes (up, "
                "down), keys served and their share, fair share and load over fair share; the "
                "nodes whose location ends there beneath it. --json as GET /api/locations.",
        .run = cmd__locations,
    },
    {
        .name = "key add",
        .args = "KEY... | -",
        .max_args = -1,
        .options = O(FILE),
        .flags = CMD_F_CHANGE,
        .summary = "insert keys, or the keys of a file",
        .help = "Inserts the keys. One key must be new; in a list, keys that exist or repeat are "
                "skipped and counted. With --file F, or - alone for standard input, the keys are "
                "the file's lines, one a line: a trailing carriage return and a byte order mark "
                "are dropped, empty lines skipped, anything else is the key byte for byte (spaces "
                "kept, no comments). Every line is checked before anything changes, a refusal "
                "names the line; the file is streamed, never held in memory, into one insert_keys "
                "operation (scenario files cannot read files). A key named - stands after --.",
        .run = cmd__key_add,
    },
    {
        .name = "key rm",
        .args = "KEY...",
        .min_args = 1,
        .max_args = -1,
        .flags = CMD_F_CHANGE,
        .summary = "delete keys",
        .help = "Deletes the keys; every one of them must exist.",
        .run = cmd__key_rm,
    },
    {
        .name = "key ls",
        .args = "",
        .options = O(NODE) | O(CSV),
        .summary = "list keys by position",
        .help = "Lists every stored key ordered by (position, key): its position, its coordinate "
                "under the current algorithm named in the system's words (a Redis slot, a "
                "Cassandra token...; none where the position is the coordinate) and its node. "
                "Keys longer than 24 columns and names longer than 32 are cut with an ellipsis; "
                "--json and --csv give them whole.",
        .run = cmd__key_ls,
    },
    {
        .name = "key gen",
        .args = "COUNT",
        .min_args = 1,
        .max_args = 1,
        .options = O(PREFIX) | O(START) | O(YCSB),
        .flags = CMD_F_CHANGE,
        .summary = "insert generated keys",
        .help = "Inserts the keys P+S ... P+(S+COUNT-1): COUNT from 1 to 10,000,000, prefix P "
                "(default key-), start S (default 0). Keys that exist are skipped. With --ycsb, "
                "YCSB's own key names for the record numbers S ... S+COUNT-1 (S default 0): user "
                "followed by Math.abs(Utils.fnvhash64(n)), as CoreWorkload's buildKeyName makes "
                "them with insertorder=hashed.",
        .run = cmd__key_gen,
    },
    {
        .name = "workload",
        .args = "[KIND]",
        .max_args = 1,
        .options = O(PARAM),
        .flags = CMD_F_CHANGE_ARGS,
        .summary = "show or set the workload: each key's share of requests",
        .help = "Without KIND, shows the workload. With KIND (uniform, zipf, hotspot, keys) and "
                "its parameters (--param s=1.1, --param seed=7, --param order=insert, --param "
                "hot_fraction=0.2 --param hot_share=0.8, --param 'keys=[{\"key\": \"k\", "
                "\"share\": 0.3}]'; value sizes as --param sizes.kind=uniform --param "
                "sizes.min=100 --param sizes.max=1000), sets it: one workload operation. --param "
                "alone changes the current workload's parameters. Nodes then answer requests and "
                "bytes, operations requests_moved and bytes_moved.",
        .run = cmd__workload,
    },
    {
        .name = "lookup",
        .args = "KEY",
        .min_args = 1,
        .max_args = 1,
        .summary = "where a key goes, stored or not",
        .help = "Shows where KEY goes: its position, hash, coordinate, owner, replicas and the "
                "steps from key to owner.",
        .run = cmd__lookup,
    },
    {
        .name = "stats",
        .args = "",
        .summary = "balance statistics",
        .help = "Keys per node: mean, population standard deviation, cv, min, max, max/mean.",
        .run = cmd__stats,
    },
    {
        .name = "log",
        .args = "[ID]",
        .max_args = 1,
        .options = O(CSV),
        .summary = "the operation log, or one operation's moves",
        .help = "Lists every operation; with ID, that operation and every key it moved (from, to).",
        .run = cmd__log,
    },
    {
        .name = "diff",
        .args = "A B",
        .min_args = 2,
        .max_args = 2,
        .summary = "what changed between the states after two operations",
        .help = "What changed from the state after operation A to the state after operation B (0: "
                "the empty start; either may be the later): keys moved (from, to; every one "
                "listed), keys and nodes added and removed, whether the configuration changed. "
                "Composed from the log's records of the operations in between (through resets and "
                "reverts), so it costs what they changed. Nothing is recorded.",
        .run = cmd__diff,
    },
    {
        .name = "ring",
        .args = "",
        .summary = "the ring's points in order",
        .help = "Lists the points (or slot ranges, or table runs) of the current placement.",
        .run = cmd__ring,
    },
    {
        .name = "config",
        .args = "",
        .options = CONFIG_OPTS,
        .flags = CMD_F_CHANGE_OPTS,
        .summary = "show or change the configuration",
        .help = "Without options, shows the configuration. With options, switches the algorithm, "
                "its parameters or the number of replicas: one configure operation, and keys move "
                "as the new placement says.",
        .run = cmd__config,
    },
    {
        .name = "algorithms",
        .args = "",
        .flags = CMD_F_NO_DB,
        .summary = "the placement algorithms and their parameters",
        .help = "Lists the placement algorithms: what each reproduces, its parameters and "
                "defaults, whether it honours weights and replicas.",
        .run = cmd__algorithms,
    },
    {
        .name = "compare",
        .args = "",
        .options = O(ALGORITHMS) | O(PARAM),
        .summary = "the nodes and keys placed by each algorithm",
        .help = "Places the current nodes and keys with each algorithm side by side: max/mean, "
                "cv, structural balance, lookup time, memory, keys moved if a node joined or "
                "left. Nothing is recorded.",
        .run = cmd__compare,
    },
    {
        .name = "traffic run",
        .args = "",
        .options = O(REQUESTS) | O(CONCURRENCY) | O(SEED) | O(FACTOR),
        .summary = "replay requests through the placement and its bounded loads",
        .help = "Replays N requests drawn from the workload's shares, C in flight on average "
                "(Poisson arrivals, exponential durations, from the seed S), through the current "
                "algorithm: with hash_balance_factor (haproxy, envoy-ring, maglev) or "
                "balance_factor (ring) above 0, each request goes where that balancer's "
                "bounded-load rule sends it. Per node: requests handled, peak in flight, share of "
                "its own keys' requests served elsewhere. Nothing is recorded.",
        .run = cmd__traffic,
    },
    {
        .name = "trace",
        .args = "FILE|-",
        .min_args = 1,
        .max_args = 1,
        .options = O(FORMAT) | O(KEY) | O(CACHE) | O(CHANGE) | O(INTERVAL) | O(KEY_COL) |
                   O(SIZE_COL) | O(TIME_COL) | O(OP_COL),
        .summary = "replay your own request log through the placement",
        .help = "Replays a request log (formats: " TRACE_FORMATS
                "; gzip and zstd recognised) through the current placement, streaming: per node "
                "requests, bytes, distinct keys, peak requests in one second of the log's clock, "
                "load against the fair share; with --cache, each node's LRU hits; with --change, "
                "the topology changes mid-log and the keys that move miss. A time series per "
                "interval. A bad line is counted and skipped; a file not of its format is "
                "refused. Progress on stderr when it is a terminal. Nothing is recorded.",
        .run = cmd__trace,
    },
    {
        .name = "plan",
        .args = "",
        .options = O(MAX_LOAD) | O(LOG) | O(STEPS) | O(ALGORITHM) | O(POINTS) | O(PARAM) |
                   O(FORMAT) | O(KEY) | O(KEY_COL) | O(SIZE_COL) | O(TIME_COL) | O(OP_COL),
        .required = O(MAX_LOAD),
        .summary = "how many nodes keep the busiest under a load",
        .help = "Adds nodes of weight 1 one at a time to the current ones (under the "
                "configuration, or --algorithm, --points, --param) until the busiest node's "
                "requests are at most --max-load times its fair share, for the stored workload "
                "or a request log (--log, read as ringsim trace reads it): each step's max/mean, "
                "busiest node, keys and requests moved. Stops when no number of nodes can do it "
                "(the hottest key alone is too much). Nothing is recorded.",
        .run = cmd__plan,
    },
    {
        .name = "preview node",
        .args = "add|rm|down|up|out|in [NAME]",
        .min_args = 1,
        .max_args = 2,
        .options = O(WEIGHT) | O(TOKENS) | O(ID) | O(LOCATION),
        .summary = "what adding, removing or failing a node would do",
        .help = "What `node add NAME`, `node rm NAME`, `node down NAME`, `node up NAME`, `node "
                "out NAME` or `node in NAME` (ceph) would do: keys moved by source and "
                "destination, replica copies, statistics before and after (under ceph the PGs "
                "remapped and shards moved). `down --location TYPE=NAME` (or up) previews a whole "
                "failure domain. Nothing is recorded.",
        .run = cmd__preview_node,
    },
    {
        .name = "preview config",
        .args = "",
        .options = CONFIG_OPTS,
        .summary = "what a configuration change would do",
        .help = "What `config` with these options would do. Nothing is recorded.",
        .run = cmd__preview_config,
    },
    {
        .name = "preview import",
        .args = "FILE|-",
        .min_args = 1,
        .max_args = 1,
        .options = O(FORMAT) | O(NAME),
        .summary = "what importing a cluster would do",
        .help = "What `import` of this text would do: keys moved by source and destination, "
                "statistics before and after, the nodes and notes read from the text. Nothing is "
                "recorded.",
        .run = import_face_run_preview,
    },
    /* Not CMD_F_CHANGE: a scenario (POST /api/scenarios/run too) must not
     * read the server's files. */
    {
        .name = "import",
        .args = "FILE|-",
        .min_args = 1,
        .max_args = 1,
        .options = O(FORMAT) | O(NAME),
        .summary = "make the simulation a real cluster (nginx.conf, haproxy.cfg, ...)",
        .help = "Reads a real system's configuration or status text (FILE, or - for standard "
                "input): an nginx upstream, a HAProxy backend, a libmemcached server list or "
                "configuration string, a twemproxy pool, an Envoy cluster, `nodetool ring` or "
                "`CLUSTER NODES` output (--format, default auto). One import operation sets the "
                "algorithm and its parameters and replaces the nodes with the text's, in its "
                "order, with weights, tokens, ids, states and slots; stored keys move as the new "
                "placement says. A text the real program would refuse is refused with its line; "
                "--name picks one section when the text has several.",
        .run = import_face_run,
    },
    {
        .name = "revert",
        .args = "ID",
        .min_args = 1,
        .max_args = 1,
        .flags = CMD_F_CHANGE,
        .summary = "make the state what it was after operation ID",
        .help = "The nodes, keys and configuration become what they were right after operation ID "
                "(0: empty). The history is kept: the revert is one more operation.",
        .run = cmd__revert,
    },
    {
        .name = "reset",
        .args = "",
        .flags = CMD_F_CHANGE,
        .summary = "remove every node and key",
        .help = "Removes every node and key and keeps the configuration; one operation.",
        .run = cmd__reset,
    },
    {
        .name = "check",
        .args = "",
        .summary = "verify placement and replay the log",
        .help = "Verifies the database: every key is on the node the placement says, and "
                "replaying the operation log gives the stored state. Exit 1 when something is "
                "wrong.",
        .run = cmd__check,
    },
    {
        .name = "run",
        .args = "FILE | --builtin NAME",
        .max_args = 1,
        .options = O(BUILTIN),
        .summary = "run a scenario file",
        .help = "Runs a scenario: one command a line, the words of this command line without "
                "`ringsim` (blank lines and lines starting with # are ignored), each change one "
                "operation, and `expect STAT OP VALUE` lines that check the state (STAT: nodes, "
                "keys, max_over_mean, cv, keys_moved, replica_moves, requests_max_over_mean, "
                "requests_cv, requests_bound, hottest_share, requests_moved, bytes_moved, "
                "owner(KEY); OP: == != < <= > >=). Prints a report. Exit 1 at the first failing "
                "line, exit 2 on a syntax error; both name the file and line. FILE - reads "
                "standard input.",
    },
    {
        .name = "export",
        .args = "--scenario | --config F",
        .options = O(SCENARIO) | O(CONFIG),
        .summary = "write the history as a scenario file, or the nodes as a real system's "
                   "configuration",
        .help = "With --scenario, writes a scenario file of the operations that rebuild the "
                "current state: run it on any database (`ringsim run FILE`) to get the same "
                "nodes, keys and configuration. With --config F, writes the current nodes as the "
                "real system F takes them: nginx, haproxy, libmemcached, twemproxy and envoy "
                "configuration that imports back to the same owners; cassandra's initial_token "
                "lines; redis's redis-cli --cluster commands from the imported slot layout to the "
                "current one; nodetool-ring and redis-nodes status text; crushmap, the CRUSH map "
                "of the ceph algorithm as crushtool -d writes it (crushtool -c compiles it to the "
                "same mappings).",
    },
    {
        .name = "scenarios",
        .args = "[NAME]",
        .max_args = 1,
        .flags = CMD_F_NO_DB,
        .summary = "the built-in scenarios, or one's text",
        .help = "Lists the scenarios built into ringsim; with NAME, prints that scenario's file.",
    },
    {
        .name = "help",
        .args = "[COMMAND]",
        .max_args = -1,
        .flags = CMD_F_NO_DB,
        .summary = "this list, or one command's usage",
        .help = "Without COMMAND, lists the commands; with COMMAND (\"node add\", \"run\"...), "
                "its usage and options; with a command group (\"node\", \"key\", \"preview\"), "
                "the group's commands.",
    },
    {
        .name = "complete",
        .args = "WORD...",
        .max_args = -1,
        .flags = CMD_F_NO_DB | CMD_F_HIDDEN,
        .summary = "completion candidates for the shell",
        .help = "Used by the bash completion script.",
    },
    {.name = NULL},
};

#undef O

/* ---- parsing ---- */

static int word_count(const char *name)
{
    int n = 1;
    for (const char *p = name; *p; p++)
        n += *p == ' ';
    return n;
}

/* Whether words[0..k) spell name. */
static bool words_are(const char *name, char **words, int k)
{
    const char *p = name;
    for (int i = 0; i < k; i++) {
        size_t n = strlen(words[i]);
        if (strncmp(p, words[i], n) != 0 || (p[n] != ' ' && p[n] != '\0'))
            return false;
        p += n;
        if (*p == ' ')
            p++;
    }
    return *p == '\0';
}

const cmd_def *cmd_find(char **words, int n, int *used, bool *group)
{
    *group = false;
    *used = 0;
    if (n < 1)
        return NULL;
    for (const cmd_def *d = cmd_table; d->name; d++) {
        int k = word_count(d->name);
        if (k <= n && words_are(d->name, words, k)) {
            *used = k;
            return d;
        }
        if (k > 1 && words_are(d->name, words, 1) == false) {
            size_t l = strlen(words[0]);
            if (strncmp(d->name, words[0], l) == 0 && d->name[l] == ' ')
                *group = true;
        }
    }
    return NULL;
}

static int find_option(const char *name)
{
    for (int i = 0; i < CMD_O_COUNT; i++)
        if (strcmp(cmd_options[i].name, name) == 0)
            return i;
    return -1;
}

/* Values of the positionals, by command. */
static int check_args(cmd_line *l, rs_error *err)
{
    const char *n = l->def->name;
    uint64_t v;
    if (!strcmp(n, "key gen")) {
        if (cmd__parse_u64(l->args[0], &l->count) || l->count < 1 || l->count > SIM_MAX_GENERATE)
            return rs_fail(err, RINGSIM_EPARAM,
                           "COUNT must be a whole number from 1 to %u, not \"%.64s\"",
                           SIM_MAX_GENERATE, l->args[0]);
    } else if (!strcmp(n, "revert") || (!strcmp(n, "log") && l->nargs)) {
        if (cmd__parse_u64(l->args[0], &v) || v > INT64_MAX || (n[0] == 'l' && v < 1))
            return rs_fail(err, RINGSIM_EPARAM,
                           "operation ID must be a whole number, not \"%.64s\"", l->args[0]);
        l->id = (int64_t)v;
    } else if (!strcmp(n, "diff")) {
        for (int i = 0; i < 2; i++)
            if (cmd__parse_u64(l->args[i], &v) || v > INT64_MAX)
                return rs_fail(err, RINGSIM_EPARAM,
                               "operation ID must be a whole number, not \"%.64s\"", l->args[i]);
    } else if (!strcmp(n, "key add")) {
        /* KEY..., a lone "-" (standard input) or --file F; a key named "-"
         * stands after "--" */
        for (int i = 0; l->nargs > 1 && i < l->nargs && i < l->literal_from; i++)
            if (!strcmp(l->args[i], "-")) {
                rs_fail(err, RINGSIM_EPARAM,
                        "- reads the keys from standard input and stands alone; a key named - "
                        "stands after --");
                return CMD_EXIT_USAGE; /* the message is kept */
            }
        if (l->opt[CMD_O_FILE] ? l->nargs > 0 : l->nargs == 0)
            return CMD_EXIT_USAGE; /* keys and a file, or neither */
    } else if (!strcmp(n, "node weight")) {
        return parse_weight(l->args[1], &l->weight, err);
    } else if (!strcmp(n, "node reweight")) {
        if (cmd_parse_number(l->args[1], &l->weight) || !(l->weight >= 0 && l->weight <= 1))
            return rs_fail(err, RINGSIM_EPARAM,
                           "reweight must be a number from 0 to 1 in decimal digits, not \"%.64s\"",
                           l->args[1]);
    } else if (!strcmp(n, "preview node")) {
        if (strcmp(l->args[0], "add") && strcmp(l->args[0], "rm") && strcmp(l->args[0], "down") &&
            strcmp(l->args[0], "up") && strcmp(l->args[0], "out") && strcmp(l->args[0], "in"))
            return CMD_EXIT_USAGE;
        if (strcmp(l->args[0], "add") != 0 &&
            (l->opt[CMD_O_WEIGHT] || l->opt[CMD_O_TOKENS] || l->opt[CMD_O_ID]))
            return CMD_EXIT_USAGE;
        bool state = !strcmp(l->args[0], "down") || !strcmp(l->args[0], "up");
        /* down/up: NAME or --location (a domain); add: NAME; rm: NAME alone */
        if (state ? (l->nargs == 2) == (l->opt[CMD_O_LOCATION] != NULL)
                  : l->nargs != 2 || (!strcmp(l->args[0], "rm") && l->opt[CMD_O_LOCATION]))
            return CMD_EXIT_USAGE;
    } else if (!strcmp(n, "node down") || !strcmp(n, "node up")) {
        if ((l->nargs == 1) == (l->opt[CMD_O_LOCATION] != NULL))
            return CMD_EXIT_USAGE; /* NAME or --location TYPE=NAME, one of them */
    }
    return 0;
}

/* Values of the options. */
static int check_options(cmd_line *l, rs_error *err)
{
    const char *w = l->opt[CMD_O_WEIGHT];
    int rc;
    if (w && (rc = parse_weight(w, &l->weight, err)))
        return rc;
    if (l->opt[CMD_O_TOKENS] &&
        (rc = parse_tokens(l->opt[CMD_O_TOKENS], &l->tokens, &l->ntokens, err)))
        return rc;
    if (l->opt[CMD_O_LOCATION]) {
        if (!(l->loc_text = strdup(l->opt[CMD_O_LOCATION])))
            return rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        if ((rc = place_loc_parse(l->loc_text, l->loc, &l->nloc, err)))
            return rc;
    }
    uint64_t id;
    if (l->opt[CMD_O_ID]) {
        if (cmd__parse_u64(l->opt[CMD_O_ID], &id) || id < 1 || id > 2147483647)
            return rs_fail(err, RINGSIM_EPARAM,
                           "--id must be a whole number from 1 to 2147483647, not \"%.64s\"",
                           l->opt[CMD_O_ID]);
        l->srv_id = (int64_t)id;
    }
    if (l->opt[CMD_O_START] && cmd__parse_u64(l->opt[CMD_O_START], &l->start))
        return rs_fail(err, RINGSIM_EPARAM, "--start must be a whole number, not \"%.64s\"",
                       l->opt[CMD_O_START]);
    l->port = 3000;
    if (l->opt[CMD_O_PORT] && (cmd__parse_u64(l->opt[CMD_O_PORT], &l->port) || l->port > 65535))
        return rs_fail(err, RINGSIM_EPARAM, "--port must be 0 to 65535, not \"%.64s\"",
                       l->opt[CMD_O_PORT]);
    /* The configuration's values, on a scratch copy: the algorithm must be
     * one of the catalogue, every parameter in its range.  Without
     * --algorithm the parameters are the current algorithm's, which only
     * the run knows (cmd__config checks them there). */
    if (cmd__has_config_opts(l) && !(l->def->flags & CMD_F_CHANGE_ARGS) &&
        (l->opt[CMD_O_ALGORITHM] || !l->nparams)) {
        place_config cfg;
        place_config_default(&cfg);
        if ((rc = cmd_config_apply(l, &cfg, err)))
            return rc;
        if (l->opt[CMD_O_ALGORITHM]) {
            place_config probe;
            place_config_default(&probe);
            strcpy(probe.algorithm, cfg.algorithm);
            if ((rc = place_config_check(&probe, err)))
                return rc;
        }
    }
    return 0;
}

int cmd_parse(cmd_line *l, int argc, char **argv, rs_error *err)
{
    memset(l, 0, sizeof *l);
    err->code = 0;
    err->msg[0] = '\0';
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    l->params = calloc((size_t)argc + 1, sizeof *l->params);
    l->changes = calloc((size_t)argc + 1, sizeof *l->changes);
    int given[CMD_O_COUNT] = {0}, npos = 0;
    if (!pos || !l->params || !l->changes) {
        free(pos);
        rs_fail(err, RINGSIM_ENOMEM, "out of memory");
        return CMD_EXIT_REFUSED;
    }
    l->args = pos;
    bool dashdash = false;
    int literal_from = argc; /* the positionals from here on came after "--" */
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == '\0' || (a[1] != '-' && a[1] != 'h') ||
            (a[1] == '-' && a[2] == '\0')) {
            if (!dashdash && strcmp(a, "--") == 0) {
                dashdash = true;
                literal_from = npos;
                continue;
            }
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            l->help = true;
            continue;
        }
        if (a[1] != '-') {
            pos[npos++] = a; /* "-hx": a word */
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            l->version = true;
            continue;
        }
        char *name = a + 2, *val = strchr(name, '=');
        if (val)
            *val++ = '\0';
        int o = find_option(name);
        if (o < 0)
            return fail_usage(err, "unknown option --%.64s", name);
        if (!cmd_options[o].arg) {
            if (val)
                return fail_usage(err, "option --%.64s takes no value", name);
            val = "";
        } else if (!val) {
            if (i + 1 >= argc)
                return fail_usage(err, "option --%.64s needs a value", name);
            val = argv[++i];
        }
        if (o == CMD_O_PARAM)
            l->params[l->nparams++] = val;
        if (o == CMD_O_CHANGE) { /* AT, then OP as the next word */
            if (i + 1 >= argc)
                return fail_usage(err, "option --change needs AT and OP (\"node add NAME\")%s", "");
            l->changes[2 * l->nchanges] = val;
            l->changes[2 * l->nchanges + 1] = argv[++i];
            l->nchanges++;
        }
        l->opt[o] = val;
        given[o] = 1;
    }
    l->nargs = npos;
    if (npos == 0)
        return CMD_EXIT_OK;
    int used;
    bool group;
    const cmd_def *d = cmd_find(pos, npos, &used, &group);
    if (!d && group && npos < 2)
        return fail_usage(err, "%.64s needs a subcommand", pos[0]);
    if (!d) {
        char words[160];
        snprintf(words, sizeof words, "%.64s%s%.64s", pos[0], group ? " " : "", group ? pos[1] : "");
        return fail_usage(err, "unknown command: %s", words);
    }
    l->def = d;
    l->args = pos + used;
    l->nargs = npos - used;
    l->literal_from = literal_from < npos ? literal_from - used : l->nargs;
    if (l->help) /* `ringsim node add --help`: the caller shows the usage */
        return CMD_EXIT_OK;
    for (int o = 0; o < CMD_O_COUNT; o++) {
        if (!given[o] || o == CMD_O_DB || o == CMD_O_JSON || (d->options & CMD_BIT(o)))
            continue;
        return fail_usage(err, "option --%s does not apply to this command", cmd_options[o].name);
    }
    for (int i = 0; i < l->nparams; i++) {
        const char *eq = strchr(l->params[i], '=');
        if (!eq || eq == l->params[i])
            return fail_usage(err, "--param takes NAME=VALUE, not \"%.64s\"", l->params[i]);
    }
    if (l->opt[CMD_O_CSV] && l->opt[CMD_O_JSON])
        return fail_usage(err, "--csv and --json: choose one%s", "");
    for (int o = 0; o < CMD_O_COUNT; o++)
        if ((d->required & CMD_BIT(o)) && !l->opt[o]) {
            char syn[256];
            err->code = RINGSIM_EPARAM;
            snprintf(err->msg, sizeof err->msg, "--%s is needed: usage: %s", cmd_options[o].name,
                     cmd_synopsis(d, syn, sizeof syn));
            return CMD_EXIT_USAGE;
        }
    if (l->nargs < d->min_args || (d->max_args >= 0 && l->nargs > d->max_args)) {
        char syn[256];
        err->code = RINGSIM_EPARAM;
        snprintf(err->msg, sizeof err->msg, "usage: %s", cmd_synopsis(d, syn, sizeof syn));
        return CMD_EXIT_USAGE;
    }
    l->weight = 1;
    int rc = check_args(l, err);
    if (rc == CMD_EXIT_USAGE && err->msg[0]) {
        err->code = RINGSIM_EPARAM;
        return CMD_EXIT_USAGE;
    }
    if (rc == CMD_EXIT_USAGE) {
        char syn[256];
        err->code = RINGSIM_EPARAM;
        snprintf(err->msg, sizeof err->msg, "usage: %s", cmd_synopsis(d, syn, sizeof syn));
        return CMD_EXIT_USAGE;
    }
    if (rc || (rc = check_options(l, err)))
        return fail_value(err, rc < 0 ? rc : RINGSIM_EPARAM);
    return CMD_EXIT_OK;
}

void cmd_line_clear(cmd_line *l)
{
    /* args points into the positional array, which starts at or before it */
    if (l->def && l->args)
        free(l->args - word_count(l->def->name));
    else
        free(l->args);
    free(l->params);
    free(l->changes);
    free(l->tokens);
    free(l->loc_text);
    memset(l, 0, sizeof *l);
}

bool cmd_changes(const cmd_line *l)
{
    return l->def && ((l->def->flags & CMD_F_CHANGE) ||
                      ((l->def->flags & CMD_F_CHANGE_OPTS) && cmd__has_config_opts(l)) ||
                      ((l->def->flags & CMD_F_CHANGE_ARGS) && (l->nargs > 0 || l->nparams > 0)));
}

char *cmd_synopsis(const cmd_def *d, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s%s%s", d->name, *d->args ? " " : "", d->args);
    for (int o = 0; o < CMD_O_COUNT && n < size; o++) {
        if (!(d->options & CMD_BIT(o)) || o == CMD_O_BUILTIN || o == CMD_O_SCENARIO)
            continue;
        const cmd_option *op = &cmd_options[o];
        char named[48]; /* an option the positionals already show ("--config F") */
        snprintf(named, sizeof named, "--%s", op->name);
        if (strstr(d->args, named))
            continue;
        bool req = d->required & CMD_BIT(o);
        n += (size_t)snprintf(buf + n, size - n, " %s--%s%s%s%s%s", req ? "" : "[", op->name,
                              op->arg ? " " : "", op->arg ? op->arg : "", req ? "" : "]",
                              o == CMD_O_PARAM || o == CMD_O_CHANGE ? "..." : "");
    }
    return buf;
}

/* ---- running ---- */

int cmd_run(cmd_ctx *c, sim *s, const cmd_line *l, FILE *out)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->l = l;
    c->out = out;
    if (!l->def || !l->def->run)
        return rs_fail(&c->err, RINGSIM_EINTERNAL, "this command does not run here");
    int rc = l->def->run(c);
    if (rc && !c->err.msg[0])
        rs_fail(&c->err, rc, "%s", ringsim_strerror(rc));
    return rc;
}

void cmd_ctx_clear(cmd_ctx *c)
{
    json_decref(c->extra);
    c->extra = NULL;
}

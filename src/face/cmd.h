/*
 * cmd.h - ringsim's commands: one table of words, options, arity and
 * handlers that the command line, scenario files, `ringsim help`, the
 * manual's checks and shell completion all read.
 *
 * A command line is parsed in one step (cmd_parse): the words pick the
 * command, the options and arguments are checked against its entry, and
 * every value (a weight, a count, a configuration) is converted and checked
 * there, before anything runs -- so a scenario file's mistakes are all found
 * before its first line changes anything.  Running (cmd_run) then only meets
 * the engine's refusals.
 *
 * Commands that change the state are one operation each (CMD_F_CHANGE):
 * they are the ones a scenario may use.  Commands that need more than the
 * engine -- `serve`, `run`, `export`, `help` -- have no handler here; the
 * command line runs them (cli.c), so this module depends only on the engine,
 * its views and the faces of import.
 *
 * The table and the parser are cmd.c's; the handlers live in files by group
 * (cmd_node.c, cmd_key.c...; cmd_int.h lists them), and the tables for
 * people declared at the end of this header in cmd_out.c, below them.
 */
#ifndef RINGSIM_CMD_H
#define RINGSIM_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* Exit statuses of docs/api.md's command line. */
#define CMD_EXIT_OK 0
#define CMD_EXIT_REFUSED 1 /* a refused request, or a value that is not valid */
#define CMD_EXIT_USAGE 2   /* wrong usage */

/* Options by index.  --db and --json are accepted by every command. */
typedef enum {
    CMD_O_DB,
    CMD_O_JSON,
    CMD_O_CSV,
    CMD_O_WEIGHT,
    CMD_O_TOKENS,
    CMD_O_NODE,
    CMD_O_PREFIX,
    CMD_O_START,
    CMD_O_POINTS,
    CMD_O_ALGORITHM,
    CMD_O_PARAM, /* may repeat */
    CMD_O_REPLICAS,
    CMD_O_ALGORITHMS,
    CMD_O_HOST,
    CMD_O_PORT,
    CMD_O_WEB,
    CMD_O_TOKEN,
    CMD_O_SCENARIO,
    CMD_O_BUILTIN,
    CMD_O_ID,
    CMD_O_YCSB,
    CMD_O_BACKUP, /* node add: HAProxy's backup server */
    CMD_O_DOWN,   /* node add: the node starts down */
    CMD_O_REQUESTS,
    CMD_O_CONCURRENCY,
    CMD_O_SEED,
    CMD_O_FACTOR,
    CMD_O_FORMAT,   /* import --format F */
    CMD_O_NAME,     /* import --name N */
    CMD_O_CONFIG,   /* export --config F */
    CMD_O_FILE,     /* key add --file F */
    CMD_O_LOCATION, /* node add, node move: --location TYPE=NAME,… */
    /* trace (docs/api.md v4, "replay your own traffic") */
    CMD_O_KEY,      /* access-log key field */
    CMD_O_CACHE,    /* per node, bytes or Nobj */
    CMD_O_CHANGE,   /* --change AT OP: two values, may repeat */
    CMD_O_INTERVAL, /* of the series */
    CMD_O_KEY_COL,  /* csv columns */
    CMD_O_SIZE_COL,
    CMD_O_TIME_COL,
    CMD_O_OP_COL,
    CMD_O_MAX_LOAD, /* plan */
    CMD_O_LOG,
    CMD_O_STEPS,
    CMD_O_COUNT
} cmd_opt;

typedef struct cmd_option {
    const char *name; /* without "--" */
    const char *arg;  /* the value's name in usage ("W"), NULL for a flag */
    const char *help; /* one line */
} cmd_option;
extern const cmd_option cmd_options[CMD_O_COUNT];

#define CMD_BIT(o) (UINT64_C(1) << (o))
_Static_assert(CMD_O_COUNT <= 64, "options are bits of a uint64_t");

enum {
    CMD_F_CHANGE = 1,       /* one operation: allowed in scenario files */
    CMD_F_CHANGE_OPTS = 2,  /* a change when given options (config) */
    CMD_F_NO_DB = 4,        /* runs without opening the database */
    CMD_F_HIDDEN = 8,       /* not listed by help (completion's helper) */
    CMD_F_CHANGE_ARGS = 16, /* a change when given arguments or --param (workload) */
};

typedef struct cmd_ctx cmd_ctx;

typedef struct cmd_def {
    const char *name;       /* its words: "node add" */
    const char *args;       /* the positionals in the synopsis: "NAME", "KEY..." */
    int min_args, max_args; /* max_args < 0: any number */
    uint64_t options;       /* CMD_BIT()s it accepts beside --db and --json */
    unsigned flags;         /* CMD_F_* */
    const char *summary;    /* one line for the list of commands */
    const char *help;       /* what `ringsim help COMMAND` says beside the synopsis */
    /* The handler: 0, or a negative RINGSIM_E code with c->err filled.
     * NULL when the command line runs the command itself. */
    int (*run)(cmd_ctx *c);
    uint64_t required; /* CMD_BIT()s of the options it cannot run without */
} cmd_def;

/* The table, in the order help lists it; ends with a NULL name. */
extern const cmd_def cmd_table[];

/* A parsed command line.  Strings point into the argv given to cmd_parse,
 * which must outlive it; free with cmd_line_clear. */
typedef struct cmd_line {
    const cmd_def *def;
    const char *opt[CMD_O_COUNT]; /* each option's value ("" for a flag), NULL if absent */
    const char **params;          /* every --param NAME=VALUE, in order */
    int nparams;
    const char **changes; /* every --change AT OP: AT, OP, AT, OP... */
    int nchanges;         /* pairs */
    char **args;          /* the positionals after the command's words */
    int nargs;
    int literal_from; /* args from this index on came after "--" (nargs when none) */
    bool help;        /* --help or -h was given */
    bool version;     /* --version was given */
    /* Values checked by cmd_parse: */
    double weight;   /* --weight (1 when absent) */
    int64_t *tokens; /* --tokens (malloc'd), ntokens of them */
    size_t ntokens;
    int64_t srv_id; /* --id: HAProxy's server id, 0 when absent */
    char *loc_text; /* --location's value, split (malloc'd); loc points into it */
    place_loc loc[PLACE_MAX_LOC];
    size_t nloc;
    uint64_t count, start; /* key gen COUNT --start S */
    int64_t id;            /* revert ID, log ID (0 when absent) */
    uint64_t port;         /* serve --port (3000) */
} cmd_line;

/* Parse argv[0..argc) -- the words after the program's name; options may
 * stand anywhere, "--" ends them.  argv's strings may be modified (an
 * "--opt=value" is split in place).  Returns CMD_EXIT_OK, or
 * CMD_EXIT_USAGE / CMD_EXIT_REFUSED with a message for a person in err.
 * With no words at all, l->def is NULL and the result is CMD_EXIT_OK
 * (the caller decides: usage, --version, help). */
int cmd_parse(cmd_line *l, int argc, char **argv, rs_error *err);
/* Accepts a line that was never parsed (zeroed). */
void cmd_line_clear(cmd_line *l);

/* The entry for words[0..n) ("node", "add"); *used says how many words
 * named it.  NULL when none; *group is set when words[0] names a group
 * ("node", "key", "preview") whose next word is missing or unknown. */
const cmd_def *cmd_find(char **words, int n, int *used, bool *group);

/* Whether this line makes an operation (a scenario may use it). */
bool cmd_changes(const cmd_line *l);
/* Whether this line reads a file or standard input of the machine it runs
 * on (`key add --file F`, `key add -`): a scenario may not, since the
 * server runs scenarios too. */
bool cmd_reads_input(const cmd_line *l);

struct cmd_ctx {
    sim *s;
    const cmd_line *l;
    FILE *out;     /* where the command prints; NULL: print nothing */
    int64_t op;    /* the operation a change made, 0 when none */
    json_t *extra; /* what its answer carries beside "operation" ({"inserted",
                       "skipped"}, {"node"}, ...): owned, may be NULL */
    rs_error err;
};

/* Run a parsed line on s; output goes to out (may be NULL).  Returns 0 or a
 * negative RINGSIM_E code with c->err filled; c->op and c->extra tell what
 * a change did (cmd_ctx_clear frees them). */
int cmd_run(cmd_ctx *c, sim *s, const cmd_line *l, FILE *out);
void cmd_ctx_clear(cmd_ctx *c);

/* The synopsis of a command: "node add NAME [--weight W] [--tokens T,T,...]"
 * into buf (always NUL-terminated).  Returns buf. */
char *cmd_synopsis(const cmd_def *d, char *buf, size_t size);

/* A number written in plain decimal ("2", "0.5", "-3", "1e2"), finite:
 * 0 with *out, else -1 (no hex, inf, nan, leading "+" or space, trailing
 * bytes).  Every number the command line and scenario files read, beyond
 * whole numbers, goes through here. */
int cmd_parse_number(const char *t, double *out);

/* The configuration options of a line (--algorithm, --points, --param,
 * --replicas) applied on top of *cfg. */
int cmd_config_apply(const cmd_line *l, place_config *cfg, rs_error *err);

/* Tables for people.  Every column of names or keys the command line prints
 * is written by cmd_print_padded: s (NULL as "") as names_escape() shows it
 * (invisible characters as "⟨U+200B⟩"), then spaces up to `width` columns
 * as a terminal counts them (names_width: a wide character 2, a combining
 * mark 0), never bytes; a text wider than `width` (when not 0) is cut to
 * width - 1 columns, whole characters, and "…" (--json and --csv show every
 * name whole).  cmd_text_width is the columns s takes so printed;
 * cmd_column_width the widest of rows[i][member] (strings), at least
 * at_least, at most CMD_NAME_COLUMNS (or at_least when it is more).  None
 * of them fails: out of memory, s is measured unescaped. */
#define CMD_NAME_COLUMNS 32
void cmd_print_padded(FILE *out, const char *s, size_t width);
/* The same cut, without the padding: the last column of a line. */
void cmd_print_cut(FILE *out, const char *s, size_t width);
size_t cmd_text_width(const char *s);
size_t cmd_column_width(const json_t *rows, const char *member, size_t at_least);

#endif

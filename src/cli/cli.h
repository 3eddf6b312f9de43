/*
 * cli.h - the `ringsim` command line (docs/api.md, "Command line").
 *
 * Parses the arguments, runs one command on the engine and prints the
 * result for people, or with --json exactly the JSON of the matching API
 * answer (both come from view.c).  Exit status: 0 success, 1 refused
 * request (one line on stderr), 2 wrong usage.
 */
#ifndef RINGSIM_CLI_H
#define RINGSIM_CLI_H

int cli_main(int argc, char **argv);

#endif

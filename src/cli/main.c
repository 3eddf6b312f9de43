/*
 * main.c - the ringsim binary: everything is a command (cli.c); `serve` is
 * the command that starts the web simulator (api.c).
 */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }

/* opt.h: one option parser for every htam tool. A tool describes its
 * options once, in a table; the table drives both the parsing (through
 * getopt_long) and --help, so the two never disagree, and a test holds the
 * table's options against the man page's (tests/cli/manuals.bats).
 *
 * Every mistake reads the same in every tool, and exits 2:
 *   kbench: --seeds 0: too small (1 to 1000)
 *   kbench: --frob: not an option (kbench --help lists them)
 *   kbench: --seeds: needs a value */
#ifndef HTAM_OPT_H
#define HTAM_OPT_H

#include <stdint.h>
#include <stdio.h>

/* One option. key is what opt_next returns for it: its short letter when
 * it has one, else any value from 256. An option with arg takes a value
 * (the name shown in --help: "N", "FILE"). help NULL hides the option
 * (kbench's --worker). */
struct opt {
	int key;
	char short_name;         /* 0: none */
	const char *long_name;   /* NULL: none */
	const char *arg;         /* NULL: a flag */
	const char *help;        /* one line; "\n" starts a continuation */
};

/* A tool's command line: its usage line(s) ("usage: %s ..." with the
 * tool's name for %s, once per line), what it does (may be NULL), the
 * options (ended by an entry of key 0; -h/--help is added), and text
 * after the options (may be NULL). */
struct opts {
	const char *usage;
	const char *about;
	const struct opt *opts;
	const char *epilog;
};

/* Returns the key of the next option, with its value in *arg, or -1 after
 * the last (then *next is the index of the first operand). Prints the help
 * and exits 0 for -h or --help; exits 2 for anything it cannot parse. */
int opt_next(int argc, char **argv, const struct opts *o, const char **arg, int *next);
/* Prints the help: usage, options, epilog. */
void opt_help(FILE *f, const struct opts *o);
/* Prints the usage lines and "(TOOL --help says more)" on stderr, exits 2. */
_Noreturn void opt_usage(const struct opts *o);

/* Values of options, each bounded; anything else exits 2 naming the option
 * as written ("--seeds") and what is wrong. */
int64_t opt_int(const char *name, const char *arg, int64_t min, int64_t max);
double opt_num(const char *name, const char *arg, double min, double max);
/* Seconds from min to max, as milliseconds. */
int64_t opt_ms(const char *name, const char *arg, double min, double max);

#endif

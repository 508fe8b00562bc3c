/* opt.c: the option parser of every tool (opt.h), over getopt_long. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "opt.h"
#include "util.h"

#define OPT_MAX 64

static const struct opt help_opt = { 'h', 'h', "help", NULL, "this help" };

/* The option named by the long name, or by the short letter. */
static const struct opt *
find(const struct opts *o, int key)
{
	for (const struct opt *p = o->opts; p->key; p++)
		if (p->key == key)
			return p;
	return key == 'h' ? &help_opt : NULL;
}

/* "-k, --candidates" as written in messages: the long name if any. */
static const char *
shown(const struct opt *p, char *buf, size_t n)
{
	if (p->long_name)
		snprintf(buf, n, "--%s", p->long_name);
	else
		snprintf(buf, n, "-%c", p->short_name);
	return buf;
}

/* Prints the usage lines, the tool's name for each %s. */
static void
put_usage(FILE *f, const char *u)
{
	while (*u) {
		const char *nl = strchr(u, '\n');
		size_t len = nl ? (size_t)(nl - u) : strlen(u);
		char *line = xasprintf("%.*s", (int)len, u);
		char *s = strstr(line, "%s");
		if (s)
			fprintf(f, "%.*s%s%s\n", (int)(s - line), line, argv0, s + 2);
		else
			fprintf(f, "%s\n", line);
		free(line);
		u += len + (nl != NULL);
	}
}

_Noreturn void
opt_usage(const struct opts *o)
{
	put_usage(stderr, o->usage);
	fprintf(stderr, "(%s --help says more)\n", argv0);
	exit(EXIT_USAGE);
}

void
opt_help(FILE *f, const struct opts *o)
{
	put_usage(f, o->usage);
	if (o->about)
		fprintf(f, "%s", o->about);
	fprintf(f, "\n");
	for (int i = 0;; i++) {
		const struct opt *p = o->opts[i].key ? &o->opts[i] : &help_opt;
		char names[96];
		if (p->help) {
			snprintf(names, sizeof names, "%s%c%s%s%s%s%s",
				p->short_name ? "-" : "", p->short_name ? p->short_name : ' ',
				p->short_name && p->long_name ? ", " : p->short_name ? "" : "   ",
				p->long_name ? "--" : "", p->long_name ? p->long_name : "",
				p->arg ? " " : "", p->arg ? p->arg : "");
			const char *h = p->help;
			int first = 1;
			while (*h) {
				const char *nl = strchr(h, '\n');
				size_t len = nl ? (size_t)(nl - h) : strlen(h);
				if (first && strlen(names) > 24)
					fprintf(f, "  %s\n  %-24s %.*s\n", names, "", (int)len, h);
				else
					fprintf(f, "  %-24s %.*s\n", first ? names : "", (int)len, h);
				first = 0;
				h += len + (nl != NULL);
			}
		}
		if (!o->opts[i].key)
			break;
	}
	if (o->epilog)
		fprintf(f, "\n%s", o->epilog);
}

int
opt_next(int argc, char **argv, const struct opts *o, const char **arg, int *next)
{
	static struct option longs[OPT_MAX + 2];
	static char shorts[3 * OPT_MAX + 4];
	static const struct opts *built;
	int n = 0, c;

	if (built != o) {
		char *s = shorts;
		*s++ = ':';   /* a missing value is ':', not a message of getopt's */
		for (const struct opt *p = o->opts; p->key && n < OPT_MAX; p++) {
			if (p->long_name)
				longs[n++] = (struct option){ p->long_name, p->arg ? required_argument
					: no_argument, NULL, p->key };
			if (p->short_name) {
				*s++ = p->short_name;
				if (p->arg)
					*s++ = ':';
			}
		}
		longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
		longs[n] = (struct option){ 0 };
		*s++ = 'h';
		*s = '\0';
		built = o;
		opterr = 0;
		optind = 1;
	}
	c = getopt_long(argc, argv, shorts, longs, NULL);
	*arg = optarg;
	*next = optind;
	if (c == -1)
		return -1;
	if (c == 'h') {
		opt_help(stdout, o);
		exit(EXIT_OK);
	}
	if (c == '?' || c == ':') {
		const char *bad = argv[optind - 1];
		const struct opt *p = optopt ? find(o, optopt) : NULL;
		char buf[96];
		if (c == ':' && p)
			warnf("%s: needs a value", shown(p, buf, sizeof buf));
		else if (c == ':')
			warnf("%s: needs a value", bad);
		else if (optopt && !p)
			warnf("-%c: not an option (%s --help lists them)", optopt, argv0);
		else
			warnf("%s: not an option (%s --help lists them)", bad, argv0);
		exit(EXIT_USAGE);
	}
	return c;
}

int64_t
opt_int(const char *name, const char *arg, int64_t min, int64_t max)
{
	const char *errstr;
	int64_t v;

	if (parse_i64(arg, min, max, &v, &errstr) < 0)
		die(EXIT_USAGE, "%s %s: %s (%lld to %lld)", name, arg,
			strcmp(errstr, "invalid") ? errstr : "not a whole number",
			(long long)min, (long long)max);
	return v;
}

double
opt_num(const char *name, const char *arg, double min, double max)
{
	double v;

	if (parse_double(arg, &v) < 0)
		die(EXIT_USAGE, "%s %s: not a number (%g to %g)", name, arg, min, max);
	if (v < min || v > max)
		die(EXIT_USAGE, "%s %s: too %s (%g to %g)", name, arg,
			v < min ? "small" : "large", min, max);
	return v;
}

int64_t
opt_ms(const char *name, const char *arg, double min, double max)
{
	return (int64_t)(opt_num(name, arg, min, max) * 1000 + 0.5);
}

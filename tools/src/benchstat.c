// SPDX-License-Identifier: GPL-2.0
/*
 * benchstat: the figures of tools/bench, from a guest's console to medians.
 *
 *   benchstat parse CONSOLE_LOG
 *	The guest benchmark's figures in a console log (the lines of
 *	guest-image/bench/bench.c: "kstack-bench: metric NAME VALUE UNIT"
 *	between its begin and "end errors=N" lines; a kernel message that
 *	ends up in front of one on the same line is skipped over) as
 *	"NAME<TAB>VALUE<TAB>UNIT" lines. Exit 1, saying why on stderr, when
 *	the benchmark did not end, reported errors, or gave no figure: a boot
 *	whose figures are not whole is not a result.
 *
 *   benchstat summary RAW_TSV [--ratio NAME=NUM/DEN]...
 *	RAW_TSV: one row per figure of one boot, its header naming at least
 *	the columns round, arch, label, metric, value and unit ("#" lines
 *	are comments: the run's host, QEMU and accelerator). Prints a TSV,
 *	header "kind arch name metric unit n median min max": a "figure" row
 *	per arch, label and metric over its rounds, then a "ratio" row per
 *	--ratio, arch and metric, NUM's figure over DEN's (labels) computed
 *	round by round, each pair from the same round, and then the median
 *	of those ratios: never a ratio of medians.
 *
 *   benchstat table SUMMARY_TSV
 *	The summary as Markdown: per arch, a table of figures (a row per
 *	metric, a column per label, "median (min-max)") and one of ratios.
 *
 *   benchstat compare SUMMARY_TSV BASELINE_SUMMARY_TSV
 *	A Markdown table of every median in both summaries, the baseline's
 *	beside this one's with the change in per cent (make report
 *	BASELINE=). Exit 1 when the two have no row in common.
 *
 *   benchstat samples CONSOLE_LOG
 *	A soak's sample lines ("kstack-bench: sample T NAME VALUE UNIT") as
 *	"T<TAB>NAME<TAB>VALUE<TAB>UNIT". Exit 1 when there is none, or one
 *	it cannot read.
 *
 *   benchstat timeplot SAMPLES_TSV --metrics M,.. --title T --ylabel Y --out FILE.png
 *	A gnuplot script drawing samples (columns config, t, metric, value)
 *	over time, a line per config and metric. Exit 1 when none is there.
 *
 *   benchstat brief SUMMARY_TSV
 *	The figures a cover letter quotes, as plain text: a row per figure
 *	(KernelStack per thread, small/stock creation, the check's and the
 *	stack tracer's cost per workload), a column per arch. Exit 1 when
 *	the summary has none of them.
 *
 *   benchstat plot SUMMARY_TSV --kind figure|ratio --metrics M,.. --names N,..
 *		    --title T --ylabel Y --out FILE.png [--arch A] [--hline V]
 *	A gnuplot script (data inline) drawing the medians of those metrics
 *	and names as bars with min-max error bars: a cluster per arch and
 *	metric, a bar per name; --hline draws a dashed line at V (1 for a
 *	ratio). A metric NAME* stands for every metric that starts with
 *	NAME. Exit 1 when none of them is in the summary.
 *
 *   benchstat stepsplot RESULTS_TSV --column NAME --title T --ylabel Y --out FILE.png
 *	A gnuplot script drawing a bisect-boot results.tsv column against the
 *	step, a line per config. Exit 1 when no step has a number there.
 *
 * Exit status: 0 done, 1 a console whose figures are not whole, 2 bad
 * usage or input that cannot be read (with what to do on stderr).
 * Built by tools/bench with the system gcc; tested on fixtures in
 * tests/fixtures/bench/ (tests/benchstat.bats).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "benchstat"
#include "kstack_util.h"

#define MAX_FIELDS 32





/* Strip the serial console's \r and the line's end */
static void chomp(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++)
		if (*r != '\r' && *r != '\n')
			*w++ = *r;
	*w = '\0';
}

/* Split a TSV line in place; returns the number of fields */
static int split_tabs(char *line, char **field)
{
	int n = 0;

	field[n++] = line;
	for (char *p = line; *p && n < MAX_FIELDS; p++)
		if (*p == '\t') {
			*p = '\0';
			field[n++] = p + 1;
		}
	return n;
}

static bool parse_number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno;
}

/* --- parse ------------------------------------------------------------- */

static int cmd_parse(const char *path)
{
	FILE *f = open_input(path);
	char *line = NULL, **names = NULL;
	size_t cap = 0, nnames = 0;
	bool begun = false, ended = false;
	long errors = -1;
	int bad = 0;

	while (getline(&line, &cap, f) >= 0) {
		char name[128], value[64], unit[32], rest[2];
		const char *p;
		double v;

		chomp(line);
		p = strstr(line, "kstack-bench: ");
		if (!p)
			continue;
		p += strlen("kstack-bench: ");
		if (!strncmp(p, "begin ", 6)) {
			begun = true;
		} else if (!strncmp(p, "end ", 4)) {
			if (sscanf(p, "end errors=%ld%1s", &errors, rest) != 1) {
				fprintf(stderr, "benchstat: %s: an end line it cannot read: %s\n", path, p);
				bad = 1;
			}
			ended = true;
		} else if (!strncmp(p, "error ", 6)) {
			fprintf(stderr, "benchstat: %s: the benchmark reported: %s\n", path, p + 6);
		} else if (!strncmp(p, "metric ", 7)) {
			if (sscanf(p, "metric %127s %63s %31s%1s", name, value, unit, rest) != 3 ||
			    !parse_number(value, &v)) {
				fprintf(stderr, "benchstat: %s: a figure line it cannot read (cut by a kernel message?): %s\n",
					path, p);
				bad = 1;
				continue;
			}
			for (size_t i = 0; i < nnames; i++)
				if (!strcmp(names[i], name)) {
					fprintf(stderr, "benchstat: %s: the figure %s is there twice\n", path, name);
					bad = 1;
				}
			names = xrealloc(names, (nnames + 1) * sizeof(*names));
			names[nnames++] = xstrdup(name);
			printf("%s\t%s\t%s\n", name, value, unit);
		}
	}
	if (ferror(f))
		fail("cannot read %s", path);
	free(line);
	fclose(f);
	if (!begun) {
		fprintf(stderr, "benchstat: %s: the benchmark never began (no \"kstack-bench: begin\" line)\n", path);
		bad = 1;
	} else if (!ended) {
		fprintf(stderr, "benchstat: %s: the benchmark did not end (no \"kstack-bench: end\" line)\n", path);
		bad = 1;
	} else if (errors != 0) {
		fprintf(stderr, "benchstat: %s: the benchmark ended with %ld errors\n", path, errors);
		bad = 1;
	}
	if (!nnames) {
		fprintf(stderr, "benchstat: %s: no figures\n", path);
		bad = 1;
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	return bad;
}

/* --- summary ------------------------------------------------------------ */

struct row {
	char *round, *arch, *label, *metric, *unit;
	double value;
};

struct rows {
	struct row *v;
	size_t n;
};

/*
 * The next row of a TSV file (blank and "#" lines skipped), split into
 * field; its number of fields, or -1 at the end of the file.
 */
static int next_row(FILE *f, char **line, size_t *cap, long *lineno, char **field)
{
	while (getline(line, cap, f) >= 0) {
		(*lineno)++;
		chomp(*line);
		if ((*line)[0] && (*line)[0] != '#')
			return split_tabs(*line, field);
	}
	return -1;
}

static struct rows read_raw(const char *path)
{
	static const char *const want[] = { "round", "arch", "label", "metric", "value", "unit" };
	int col[6] = { -1, -1, -1, -1, -1, -1 };
	struct rows r = { NULL, 0 };
	FILE *f = open_input(path);
	char *line = NULL, *field[MAX_FIELDS];
	size_t cap = 0;
	bool header = false;
	long lineno = 0;

	for (int n; (n = next_row(f, &line, &cap, &lineno, field)) >= 0;) {
		if (!header) {
			for (int k = 0; k < 6; k++) {
				for (int i = 0; i < n; i++)
					if (!strcmp(field[i], want[k]))
						col[k] = i;
				if (col[k] < 0)
					fail("%s: its header has no column '%s' (it needs round, arch, label, metric, value and unit)",
					     path, want[k]);
			}
			header = true;
			continue;
		}
		for (int k = 0; k < 6; k++)
			if (col[k] >= n)
				fail("%s:%ld: %d fields, fewer than the header's", path, lineno, n);
		r.v = xrealloc(r.v, (r.n + 1) * sizeof(*r.v));
		r.v[r.n].round = xstrdup(field[col[0]]);
		r.v[r.n].arch = xstrdup(field[col[1]]);
		r.v[r.n].label = xstrdup(field[col[2]]);
		r.v[r.n].metric = xstrdup(field[col[3]]);
		if (!parse_number(field[col[4]], &r.v[r.n].value))
			fail("%s:%ld: the value '%s' is not a number", path, lineno, field[col[4]]);
		r.v[r.n].unit = xstrdup(field[col[5]]);
		r.n++;
	}
	if (ferror(f))
		fail("cannot read %s", path);
	if (!header)
		fail("%s: no header line: not a raw bench file", path);
	free(line);
	fclose(f);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of v[0..n) (sorts v); n > 0 */
static void stats(double *v, size_t n, double *median, double *min, double *max)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Distinct values of one field, in order of first appearance */
struct names {
	const char **v;
	size_t n;
};

static void add_name(struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return;
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n++] = name;
}

static const struct row *find(const struct rows *r, const char *round, const char *arch,
			      const char *label, const char *metric)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].round, round) && !strcmp(r->v[i].arch, arch) &&
		    !strcmp(r->v[i].label, label) && !strcmp(r->v[i].metric, metric))
			return &r->v[i];
	return NULL;
}

struct ratio {
	const char *name, *num, *den;
};

static void print_stats(const char *kind, const char *arch, const char *name, const char *metric,
			const char *unit, double *v, size_t n)
{
	double median, min, max;

	stats(v, n, &median, &min, &max);
	printf("%s\t%s\t%s\t%s\t%s\t%zu\t%.6g\t%.6g\t%.6g\n", kind, arch, name, metric, unit, n,
	       median, min, max);
}

static int cmd_summary(int argc, char **argv)
{
	struct ratio *ratios = NULL;
	size_t nratios = 0;
	struct names arches = { 0 }, labels = { 0 }, metrics = { 0 }, rounds = { 0 };
	struct rows r;
	double *v;

	for (int i = 1; i < argc; i++) {
		char *spec, *eq, *slash;

		if (strcmp(argv[i], "--ratio") || i + 1 >= argc)
			fail("summary: unknown argument '%s' (usage: benchstat summary RAW_TSV [--ratio NAME=NUM/DEN]...)",
			     argv[i]);
		spec = xstrdup(argv[++i]);
		eq = strchr(spec, '=');
		slash = eq ? strrchr(eq, '/') : NULL;
		if (!eq || !slash || eq == spec || slash == eq + 1 || !slash[1])
			fail("summary: --ratio '%s' is not NAME=NUM/DEN (two labels of the raw file, e.g. check_on=stock-on/stock-off)",
			     argv[i]);
		*eq = *slash = '\0';
		ratios = xrealloc(ratios, (nratios + 1) * sizeof(*ratios));
		ratios[nratios++] = (struct ratio){ spec, eq + 1, slash + 1 };
	}
	r = read_raw(argv[0]);
	for (size_t i = 0; i < r.n; i++) {
		add_name(&arches, r.v[i].arch);
		add_name(&labels, r.v[i].label);
		add_name(&metrics, r.v[i].metric);
		add_name(&rounds, r.v[i].round);
	}
	for (size_t k = 0; k < nratios; k++) {
		bool num = false, den = false;

		for (size_t i = 0; i < labels.n; i++) {
			num |= !strcmp(labels.v[i], ratios[k].num);
			den |= !strcmp(labels.v[i], ratios[k].den);
		}
		if (!num || !den)
			fail("summary: the ratio %s needs the label '%s', which %s has no figure of",
			     ratios[k].name, num ? ratios[k].den : ratios[k].num, argv[0]);
	}
	v = xrealloc(NULL, (rounds.n + 1) * sizeof(*v));
	printf("kind\tarch\tname\tmetric\tunit\tn\tmedian\tmin\tmax\n");
	for (size_t a = 0; a < arches.n; a++)
		for (size_t l = 0; l < labels.n; l++)
			for (size_t m = 0; m < metrics.n; m++) {
				const char *unit = NULL;
				size_t n = 0;

				for (size_t i = 0; i < r.n; i++)
					if (!strcmp(r.v[i].arch, arches.v[a]) &&
					    !strcmp(r.v[i].label, labels.v[l]) &&
					    !strcmp(r.v[i].metric, metrics.v[m])) {
						if (unit && strcmp(unit, r.v[i].unit))
							fail("%s: %s of %s %s is in %s and in %s", argv[0],
							     metrics.v[m], arches.v[a], labels.v[l], unit,
							     r.v[i].unit);
						unit = r.v[i].unit;
						v = xrealloc(v, (n + 1) * sizeof(*v));
						v[n++] = r.v[i].value;
					}
				if (n)
					print_stats("figure", arches.v[a], labels.v[l], metrics.v[m], unit, v, n);
			}
	for (size_t k = 0; k < nratios; k++)
		for (size_t a = 0; a < arches.n; a++)
			for (size_t m = 0; m < metrics.n; m++) {
				size_t n = 0;

				for (size_t o = 0; o < rounds.n; o++) {
					const struct row *x, *y;

					x = find(&r, rounds.v[o], arches.v[a], ratios[k].num, metrics.v[m]);
					y = find(&r, rounds.v[o], arches.v[a], ratios[k].den, metrics.v[m]);
					if (!x || !y || y->value == 0)
						continue;
					v = xrealloc(v, (n + 1) * sizeof(*v));
					v[n++] = x->value / y->value;
				}
				if (n)
					print_stats("ratio", arches.v[a], ratios[k].name, metrics.v[m], "x", v, n);
			}
	free(v);
	return 0;
}

/* --- a summary file ----------------------------------------------------- */

struct srow {
	char *kind, *arch, *name, *metric, *unit, *n, *median, *min, *max;
};

struct summary {
	struct srow *v;
	size_t n;
	struct names arches;
};

static struct summary read_summary(const char *path)
{
	static const char *const want[] = { "kind", "arch", "name", "metric", "unit", "n",
					    "median", "min", "max" };
	FILE *f = open_input(path);
	char *line = NULL, *field[MAX_FIELDS];
	size_t cap = 0;
	struct summary s = { NULL, 0, { 0 } };
	bool header = false;
	long lineno = 0;

	for (int n; (n = next_row(f, &line, &cap, &lineno, field)) >= 0;) {
		if (!header) {
			for (int k = 0; k < 9; k++)
				if (k >= n || strcmp(field[k], want[k]))
					fail("%s: not a bench summary (its header is not \"kind arch name metric unit n median min max\")",
					     path);
			header = true;
			continue;
		}
		if (n != 9)
			fail("%s:%ld: %d fields, not 9", path, lineno, n);
		for (int k = 6; k < 9; k++) {
			double v;

			if (!parse_number(field[k], &v))
				fail("%s:%ld: the %s '%s' is not a number", path, lineno, want[k], field[k]);
		}
		s.v = xrealloc(s.v, (s.n + 1) * sizeof(*s.v));
		s.v[s.n] = (struct srow){ xstrdup(field[0]), xstrdup(field[1]), xstrdup(field[2]),
					  xstrdup(field[3]), xstrdup(field[4]), xstrdup(field[5]),
					  xstrdup(field[6]), xstrdup(field[7]), xstrdup(field[8]) };
		add_name(&s.arches, s.v[s.n].arch);
		s.n++;
	}
	if (!header)
		fail("%s: empty: not a bench summary", path);
	free(line);
	fclose(f);
	return s;
}

static const struct srow *find_srow(const struct summary *s, const char *kind, const char *arch,
				    const char *name, const char *metric)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].kind, kind) && !strcmp(s->v[i].arch, arch) &&
		    !strcmp(s->v[i].name, name) && !strcmp(s->v[i].metric, metric))
			return &s->v[i];
	return NULL;
}

/* --- table -------------------------------------------------------------- */

static int cmd_table(const char *path)
{
	struct summary s = read_summary(path);

	for (size_t a = 0; a < s.arches.n; a++) {
		for (int pass = 0; pass < 2; pass++) {
			const char *kind = pass ? "ratio" : "figure";
			struct names cols = { 0 }, mets = { 0 };

			for (size_t i = 0; i < s.n; i++)
				if (!strcmp(s.v[i].arch, s.arches.v[a]) && !strcmp(s.v[i].kind, kind)) {
					add_name(&cols, s.v[i].name);
					add_name(&mets, s.v[i].metric);
				}
			if (!cols.n)
				continue;
			printf("\n%s, %s: median (min-max)%s\n\n| %s |", s.arches.v[a],
			       pass ? "ratios, pair by pair in the same round" : "figures",
			       pass ? "" : ", over the rounds", pass ? "figure" : "figure (unit)");
			for (size_t c = 0; c < cols.n; c++)
				printf(" %s |", cols.v[c]);
			printf("\n|---|");
			for (size_t c = 0; c < cols.n; c++)
				printf("---|");
			printf("\n");
			for (size_t m = 0; m < mets.n; m++) {
				const char *unit = "";

				for (size_t i = 0; i < s.n; i++)
					if (!strcmp(s.v[i].arch, s.arches.v[a]) &&
					    !strcmp(s.v[i].kind, kind) && !strcmp(s.v[i].metric, mets.v[m]))
						unit = s.v[i].unit;
				if (pass)
					printf("| %s |", mets.v[m]);
				else
					printf("| %s (%s) |", mets.v[m], unit);
				for (size_t c = 0; c < cols.n; c++) {
					const struct srow *r = find_srow(&s, kind, s.arches.v[a],
									 cols.v[c], mets.v[m]);

					if (!r)
						printf(" - |");
					else if (!strcmp(r->n, "1"))
						printf(" %s (n=1) |", r->median);
					else
						printf(" %s (%s-%s) |", r->median, r->min, r->max);
				}
				printf("\n");
			}
			free(cols.v);
			free(mets.v);
		}
	}
	return 0;
}

/* --- compare ------------------------------------------------------------ */

/* Each median of SUMMARY beside the same row's in BASELINE, as a change. */
static int cmd_compare(const char *path, const char *base_path)
{
	struct summary s = read_summary(path), b = read_summary(base_path);
	size_t shown = 0, only_here = 0, only_base = 0;

	printf("| arch | kind | name | metric | unit | baseline | this run | change |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < s.n; i++) {
		const struct srow *r = &s.v[i];
		const struct srow *o = find_srow(&b, r->kind, r->arch, r->name, r->metric);
		double now, then;

		if (!o) {
			only_here++;
			continue;
		}
		parse_number(r->median, &now);
		parse_number(o->median, &then);
		printf("| %s | %s | %s | %s | %s | %s (%s-%s) | %s (%s-%s) | ", r->arch, r->kind,
		       r->name, r->metric, r->unit, o->median, o->min, o->max, r->median, r->min,
		       r->max);
		if (then == 0)
			printf("- |\n");
		else
			printf("%+.1f %% |\n", (now - then) / then * 100);
		shown++;
	}
	for (size_t i = 0; i < b.n; i++)
		if (!find_srow(&s, b.v[i].kind, b.v[i].arch, b.v[i].name, b.v[i].metric))
			only_base++;
	printf("\n%zu rows in both runs; %zu only in this run, %zu only in the baseline (left out).\n",
	       shown, only_here, only_base);
	if (!shown) {
		fprintf(stderr, "benchstat: %s and %s have no figure in common: nothing to compare\n",
			path, base_path);
		return 1;
	}
	return 0;
}

/* --- plot --------------------------------------------------------------- */

/* Split a comma-separated list in place */
static struct names split_list(char *list)
{
	struct names s = { 0 };

	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		add_name(&s, t);
	return s;
}

/* A string for a gnuplot double-quoted string: no quotes or backslashes */
static const char *gp_text(const char *s)
{
	if (strpbrk(s, "\"\\\n"))
		fail("plot: '%s' has a quote, a backslash or a newline, which gnuplot would read as code", s);
	return s;
}

/*
 * A metrics list with each NAME* entry replaced by the summary's metrics
 * that start with NAME, in the summary's order (quick runs name their
 * counts: kernel_stack_bytes_per_thread_50 where a full run has _1000).
 */
static struct names expand_metrics(const struct summary *s, struct names want)
{
	struct names out = { 0 };

	for (size_t m = 0; m < want.n; m++) {
		size_t len = strlen(want.v[m]);

		if (!len || want.v[m][len - 1] != '*') {
			add_name(&out, want.v[m]);
			continue;
		}
		for (size_t i = 0; i < s->n; i++)
			if (!strncmp(s->v[i].metric, want.v[m], len - 1))
				add_name(&out, s->v[i].metric);
	}
	free(want.v);
	return out;
}

static const char *const plot_usage =
	"usage: benchstat plot SUMMARY_TSV --kind figure|ratio --metrics M1,M2.. --names N1,N2.. "
	"--title T --ylabel Y --out FILE.png [--arch A] [--hline V]";

/*
 * A gnuplot script, on stdout, drawing the medians of SUMMARY_TSV with
 * min-max error bars: a cluster per arch and metric (x axis), a bar per
 * name (the legend). Its data is inline, so the script alone redraws it.
 */
static int cmd_plot(int argc, char **argv)
{
	const char *kind = NULL, *title = NULL, *ylabel = NULL, *out = NULL, *arch = NULL;
	const char *hline = NULL;
	char *metrics_arg = NULL, *names_arg = NULL;
	struct names metrics, names, arches = { 0 };
	struct summary s;
	size_t rows = 0;

	for (int i = 1; i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			fail("plot: %s needs a value\n%s", opt, plot_usage);
		if (!strcmp(opt, "--kind"))
			kind = val;
		else if (!strcmp(opt, "--metrics"))
			metrics_arg = xstrdup(val);
		else if (!strcmp(opt, "--names"))
			names_arg = xstrdup(val);
		else if (!strcmp(opt, "--title"))
			title = gp_text(val);
		else if (!strcmp(opt, "--ylabel"))
			ylabel = gp_text(val);
		else if (!strcmp(opt, "--out"))
			out = gp_text(val);
		else if (!strcmp(opt, "--arch"))
			arch = val;
		else if (!strcmp(opt, "--hline"))
			hline = val;
		else
			fail("plot: unknown option '%s'\n%s", opt, plot_usage);
	}
	if (!kind || !metrics_arg || !names_arg || !title || !ylabel || !out)
		fail("plot: --kind, --metrics, --names, --title, --ylabel and --out are needed\n%s",
		     plot_usage);
	if (strcmp(kind, "figure") && strcmp(kind, "ratio"))
		fail("plot: --kind is figure or ratio, not '%s'", kind);
	if (hline) {
		double v;

		if (!parse_number(hline, &v))
			fail("plot: --hline '%s' is not a number", hline);
	}
	s = read_summary(argv[0]);
	metrics = expand_metrics(&s, split_list(metrics_arg));
	names = split_list(names_arg);
	for (size_t a = 0; a < s.arches.n; a++)
		if (!arch || !strcmp(arch, s.arches.v[a]))
			add_name(&arches, s.arches.v[a]);

	printf("# gnuplot script written by tools/benchstat plot from %s\n", argv[0]);
	printf("$data << EOD\n");
	for (size_t a = 0; a < arches.n; a++)
		for (size_t m = 0; m < metrics.n; m++) {
			bool any = false;

			for (size_t n = 0; n < names.n; n++)
				any |= !!find_srow(&s, kind, arches.v[a], names.v[n], metrics.v[m]);
			if (!any)
				continue;
			if (arch)
				printf("\"%s\"", gp_text(metrics.v[m]));
			else
				printf("\"%s %s\"", gp_text(arches.v[a]), gp_text(metrics.v[m]));
			for (size_t n = 0; n < names.n; n++) {
				const struct srow *r = find_srow(&s, kind, arches.v[a], names.v[n],
								 metrics.v[m]);

				if (r)
					printf(" %s %s %s", r->median, r->min, r->max);
				else
					printf(" ? ? ?");
			}
			printf("\n");
			rows++;
		}
	printf("EOD\n");
	if (!rows) {
		fprintf(stderr, "benchstat: %s has no %s of %s for %s: nothing to plot\n", argv[0],
			kind, metrics_arg ? "the metrics asked for" : "", names_arg);
		return 1;
	}
	printf("set terminal pngcairo size 1024,640 noenhanced font \",10\"\n");
	printf("set output \"%s\"\n", out);
	printf("set title \"%s\"\n", title);
	printf("set ylabel \"%s\"\n", ylabel);
	printf("set datafile missing \"?\"\n");
	printf("set style data histograms\n");
	printf("set style histogram errorbars gap 2 lw 1\n");
	printf("set style fill solid 0.6 border -1\n");
	printf("set boxwidth 0.9\n");
	printf("set yrange [0:*]\n");
	printf("set grid ytics\n");
	printf("set key outside right top title \"median, min-max\"\n");
	printf("set offsets 0, 0, graph 0.1, 0\n");
	printf("set xtics rotate by -35 left nomirror\n");
	printf("set bmargin 12\n");
	printf("set rmargin 24\n");
	if (hline)
		printf("set arrow from graph 0, first %s to graph 1, first %s nohead dashtype 2 lw 1.5\n",
		       hline, hline);
	printf("plot");
	for (size_t n = 0; n < names.n; n++)
		printf("%s $data using %zu:%zu:%zu%s title \"%s\"", n ? ", \\\n    " : " ",
		       2 + 3 * n, 3 + 3 * n, 4 + 3 * n, n ? "" : ":xtic(1)", gp_text(names.v[n]));
	printf("\n");
	return 0;
}

/*
 * The options of a line plot: --title, --ylabel, --out and one of its own
 * (@extra, "--column" or "--metrics"); all four are needed.
 */
struct line_opts {
	const char *title, *ylabel, *out, *extra;
};

static struct line_opts line_options(int argc, char **argv, const char *extra, const char *usage)
{
	struct line_opts o = { NULL, NULL, NULL, NULL };

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], extra))
			o.extra = argv[i + 1];
		else if (!strcmp(argv[i], "--title"))
			o.title = gp_text(argv[i + 1]);
		else if (!strcmp(argv[i], "--ylabel"))
			o.ylabel = gp_text(argv[i + 1]);
		else if (!strcmp(argv[i], "--out"))
			o.out = gp_text(argv[i + 1]);
		else
			fail("unknown option '%s'\n%s", argv[i], usage);
	}
	if (!o.extra || !o.title || !o.ylabel || !o.out || argc % 2 != 1)
		fail("%s", usage);
	return o;
}

/*
 * A gnuplot script drawing one numeric column of a bisect-boot
 * results.tsv (one row per step and config) against the step: a line per
 * config. Rows without a number in it (a step that did not boot) are gaps.
 */
static int cmd_stepsplot(int argc, char **argv)
{
	const char *column = NULL, *title = NULL, *ylabel = NULL, *out = NULL;
	FILE *f;
	char *line = NULL, *field[MAX_FIELDS];
	size_t cap = 0, npoints = 0;
	int col_step = -1, col_config = -1, col_value = -1, nfields = 0;
	struct names configs = { 0 }, steps = { 0 };
	struct point {
		char *step, *config, *value;
	} *pts = NULL;
	long lineno = 0;

	struct line_opts o = line_options(argc, argv, "--column",
		"usage: benchstat stepsplot RESULTS_TSV --column NAME --title T --ylabel Y --out FILE.png");

	column = o.extra, title = o.title, ylabel = o.ylabel, out = o.out;
	f = open_input(argv[0]);
	for (int n; (n = next_row(f, &line, &cap, &lineno, field)) >= 0;) {
		double v;

		if (col_step < 0) {
			for (int i = 0; i < n; i++) {
				if (!strcmp(field[i], "step"))
					col_step = i;
				if (!strcmp(field[i], "config"))
					col_config = i;
				if (!strcmp(field[i], column))
					col_value = i;
			}
			if (col_step < 0 || col_config < 0 || col_value < 0)
				fail("%s: its header has no column 'step', 'config' or '%s': not a bisect-boot results.tsv with that figure",
				     argv[0], column);
			nfields = n;
			continue;
		}
		if (n != nfields)
			fail("%s:%ld: %d fields, not the header's %d", argv[0], lineno, n, nfields);
		add_name(&configs, xstrdup(field[col_config]));
		add_name(&steps, xstrdup(field[col_step]));
		if (!parse_number(field[col_value], &v))
			continue;
		pts = xrealloc(pts, (npoints + 1) * sizeof(*pts));
		pts[npoints++] = (struct point){ xstrdup(field[col_step]), xstrdup(field[col_config]),
						 xstrdup(field[col_value]) };
	}
	fclose(f);
	free(line);
	if (col_step < 0)
		fail("%s: empty: not a bisect-boot results.tsv", argv[0]);
	if (!npoints) {
		fprintf(stderr, "benchstat: %s has no step with a number in '%s': nothing to plot\n",
			argv[0], column);
		return 1;
	}
	printf("# gnuplot script written by tools/benchstat stepsplot from %s\n", argv[0]);
	printf("$data << EOD\n");
	for (size_t t = 0; t < steps.n; t++) {
		printf("%s", steps.v[t]);
		for (size_t c = 0; c < configs.n; c++) {
			const char *v = "?";

			for (size_t i = 0; i < npoints; i++)
				if (!strcmp(pts[i].step, steps.v[t]) && !strcmp(pts[i].config, configs.v[c]))
					v = pts[i].value;
			printf(" %s", v);
		}
		printf("\n");
	}
	printf("EOD\n");
	printf("set terminal pngcairo size 960,540 noenhanced font \",10\"\n");
	printf("set output \"%s\"\n", out);
	printf("set title \"%s\"\n", title);
	printf("set xlabel \"step of the series (0: the base)\"\n");
	printf("set ylabel \"%s\"\n", ylabel);
	printf("set datafile missing \"?\"\n");
	printf("set xtics 1\n");
	printf("set yrange [0:*]\n");
	printf("set grid\n");
	printf("set key outside right top title \"config\"\n");
	printf("plot");
	for (size_t c = 0; c < configs.n; c++)
		printf("%s $data using 1:%zu with linespoints lw 2 title \"%s\"", c ? ", \\\n    " : " ",
		       2 + c, gp_text(configs.v[c]));
	printf("\n");
	return 0;
}

/* --- soak samples --------------------------------------------------------- */

/*
 * The sample lines of a soak's console ("kstack-bench: sample T NAME
 * VALUE UNIT") as "T<TAB>NAME<TAB>VALUE<TAB>UNIT". Exit 1 when there is
 * none, or one it cannot read.
 */
static int cmd_samples(const char *path)
{
	FILE *f = open_input(path);
	char *line = NULL;
	size_t cap = 0, n = 0;
	int bad = 0;

	while (getline(&line, &cap, f) >= 0) {
		char t[32], name[128], value[64], unit[32], rest[2];
		const char *p;
		double v, tv;

		chomp(line);
		p = strstr(line, "kstack-bench: sample ");
		if (!p)
			continue;
		p += strlen("kstack-bench: ");
		if (sscanf(p, "sample %31s %127s %63s %31s%1s", t, name, value, unit, rest) != 4 ||
		    !parse_number(t, &tv) || !parse_number(value, &v)) {
			fprintf(stderr, "benchstat: %s: a sample line it cannot read (cut by a kernel message?): %s\n",
				path, p);
			bad = 1;
			continue;
		}
		printf("%s\t%s\t%s\t%s\n", t, name, value, unit);
		n++;
	}
	free(line);
	fclose(f);
	if (!n) {
		fprintf(stderr, "benchstat: %s: no samples\n", path);
		bad = 1;
	}
	return bad;
}

/*
 * A gnuplot script drawing soak samples (a TSV with the columns config,
 * t, metric and value) over time: a line per config and metric of
 * METRICS. Exit 1 when none of them is there.
 */
static int cmd_timeplot(int argc, char **argv)
{
	const char *title = NULL, *ylabel = NULL, *out = NULL;
	char *metrics_arg = NULL, *line = NULL, *field[MAX_FIELDS];
	struct names metrics, series = { 0 };
	struct sample {
		char *series, *t, *value;
	} *v = NULL;
	size_t cap = 0, n = 0;
	int ct = -1, cm = -1, cv = -1, cc = -1;
	long lineno = 0;
	FILE *f;

	struct line_opts o = line_options(argc, argv, "--metrics",
		"usage: benchstat timeplot SAMPLES_TSV --metrics M1,M2.. --title T --ylabel Y --out FILE.png");

	metrics_arg = xstrdup(o.extra), title = o.title, ylabel = o.ylabel, out = o.out;
	metrics = split_list(metrics_arg);
	f = open_input(argv[0]);
	for (int nf; (nf = next_row(f, &line, &cap, &lineno, field)) >= 0;) {
		char key[256];
		bool want = false;

		if (ct < 0) {
			for (int i = 0; i < nf; i++) {
				if (!strcmp(field[i], "t"))
					ct = i;
				if (!strcmp(field[i], "metric"))
					cm = i;
				if (!strcmp(field[i], "value"))
					cv = i;
				if (!strcmp(field[i], "config"))
					cc = i;
			}
			if (ct < 0 || cm < 0 || cv < 0 || cc < 0)
				fail("%s: its header has no column config, t, metric or value: not a soak's samples",
				     argv[0]);
			continue;
		}
		if (nf <= ct || nf <= cm || nf <= cv || nf <= cc)
			fail("%s:%ld: %d fields, fewer than the header's", argv[0], lineno, nf);
		for (size_t m = 0; m < metrics.n; m++)
			want |= !strcmp(metrics.v[m], field[cm]);
		if (!want)
			continue;
		snprintf(key, sizeof(key), "%s %s", field[cc], field[cm]);
		add_name(&series, xstrdup(key));
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = (struct sample){ xstrdup(key), xstrdup(field[ct]), xstrdup(field[cv]) };
	}
	fclose(f);
	free(line);
	if (!n) {
		fprintf(stderr, "benchstat: %s has none of the samples %s: nothing to plot\n", argv[0],
			metrics_arg);
		return 1;
	}
	printf("# gnuplot script written by tools/benchstat timeplot from %s\n", argv[0]);
	for (size_t k = 0; k < series.n; k++) {
		printf("$s%zu << EOD\n", k);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(v[i].series, series.v[k]))
				printf("%s %s\n", v[i].t, v[i].value);
		printf("EOD\n");
	}
	printf("set terminal pngcairo size 1024,640 noenhanced font \",10\"\n");
	printf("set output \"%s\"\n", out);
	printf("set title \"%s\"\n", title);
	printf("set xlabel \"seconds into the soak\"\n");
	printf("set ylabel \"%s\"\n", ylabel);
	printf("set yrange [0:*]\n");
	printf("set grid\n");
	printf("set key outside right top title \"config, figure\"\n");
	printf("plot");
	for (size_t k = 0; k < series.n; k++)
		printf("%s $s%zu using 1:2 with linespoints lw 2 title \"%s\"", k ? ", \\\n    " : " ", k,
		       gp_text(series.v[k]));
	printf("\n");
	return 0;
}

/* --- brief ------------------------------------------------------------- */

/* The figures a cover letter quotes, a row each, a column per arch */
static const struct brief_row {
	const char *label, *kind, *name, *metric, *unit;
} brief_rows[] = {
	{ "bytes/thread, stock", "figure", "stock-off", "kernel_stack_bytes_per_thread_*", "" },
	{ "bytes/thread, small", "figure", "small-off", "kernel_stack_bytes_per_thread_*", "" },
	{ "threads, stock", "figure", "stock-off", "threads_fit_*", "" },
	{ "threads, small", "figure", "small-off", "threads_fit_*", "" },
	{ "pthread create, small/stock", "ratio", "small_vs_stock", "pthread_create_join_us", "" },
	{ "fork+wait, small/stock", "ratio", "small_vs_stock", "fork_exit_wait_us", "" },
	{ "off/base: getppid", "ratio", "check_off_vs_base", "getppid_ns", "" },
	{ "off/base: read /dev/zero", "ratio", "check_off_vs_base", "read_dev_zero_ns", "" },
	{ "off/base: pipe ping-pong", "ratio", "check_off_vs_base", "pipe_pingpong_us", "" },
	{ "off/base: file cycle", "ratio", "check_off_vs_base", "file_cycle_us", "" },
	{ "check on/off: getppid", "ratio", "check_on_vs_off", "getppid_ns", "" },
	{ "check on/off: read /dev/zero", "ratio", "check_on_vs_off", "read_dev_zero_ns", "" },
	{ "check on/off: pipe ping-pong", "ratio", "check_on_vs_off", "pipe_pingpong_us", "" },
	{ "check on/off: file cycle", "ratio", "check_on_vs_off", "file_cycle_us", "" },
	{ "check on/off: fork+wait", "ratio", "check_on_vs_off", "fork_exit_wait_us", "" },
	{ "tracer/off: getppid", "ratio", "tracer_vs_off", "getppid_ns", "" },
	{ "tracer/off: read /dev/zero", "ratio", "tracer_vs_off", "read_dev_zero_ns", "" },
	{ "tracer/off: pipe ping-pong", "ratio", "tracer_vs_off", "pipe_pingpong_us", "" },
	{ "tracer/off: file cycle", "ratio", "tracer_vs_off", "file_cycle_us", "" },
};

/*
 * Plain text for a cover letter (72 columns for two arches): a row per
 * brief_rows entry the summary has, a column per arch, "median
 * (min-max)"; ratios with two decimals, counts and bytes whole.
 */
/* Print a line built with line_add, without its trailing blanks */
static void line_end(char *line, size_t *len)
{
	while (*len && line[*len - 1] == ' ')
		line[--*len] = '\0';
	printf("%s\n", line);
	*len = 0;
	line[0] = '\0';
}

static void line_add(char *line, size_t *len, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/*
 * The metric a brief row names: itself, or for NAME* the last metric of
 * the summary that starts with NAME (the largest count: _5000 of a full
 * run, _100 of a quick one); NULL when there is none.
 */
static const char *brief_metric(const struct summary *s, const char *want)
{
	size_t len = strlen(want);
	const char *found = NULL;

	if (want[len - 1] != '*')
		return want;
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].metric, want, len - 1))
			found = s->v[i].metric;
	return found;
}

static int cmd_brief(const char *path)
{
	struct summary s = read_summary(path);
	size_t shown = 0, len = 0;
	char line[1024] = "";

	line_add(line, &len, sizeof(line), "  %-30s", "");
	for (size_t a = 0; a < s.arches.n; a++)
		line_add(line, &len, sizeof(line), " %-19s", s.arches.v[a]);
	line_end(line, &len);
	for (size_t k = 0; k < sizeof(brief_rows) / sizeof(brief_rows[0]); k++) {
		const struct brief_row *b = &brief_rows[k];
		const char *metric = brief_metric(&s, b->metric);
		char label[96];
		bool any = false;

		for (size_t a = 0; metric && a < s.arches.n; a++)
			any |= !!find_srow(&s, b->kind, s.arches.v[a], b->name, metric);
		if (!any)
			continue;
		/* a row by prefix names its count: "(5000)", "(256mib)" */
		if (metric != b->metric)
			snprintf(label, sizeof(label), "%s (%s)", b->label,
				 metric + strlen(b->metric) - 1);
		else
			snprintf(label, sizeof(label), "%s", b->label);
		line_add(line, &len, sizeof(line), "  %-30s", label);
		for (size_t a = 0; a < s.arches.n; a++) {
			const struct srow *r = find_srow(&s, b->kind, s.arches.v[a], b->name, metric);
			char cell[64];
			double med, min, max;

			if (!r) {
				line_add(line, &len, sizeof(line), " %-19s", "-");
				continue;
			}
			parse_number(r->median, &med);
			parse_number(r->min, &min);
			parse_number(r->max, &max);
			if (!strcmp(b->kind, "ratio") && min == max)
				snprintf(cell, sizeof(cell), "%.2f", med);
			else if (!strcmp(b->kind, "ratio"))
				snprintf(cell, sizeof(cell), "%.2f (%.2f-%.2f)", med, min, max);
			else if (min == max)
				snprintf(cell, sizeof(cell), "%.0f%s", med, b->unit);
			else
				snprintf(cell, sizeof(cell), "%.0f%s (%.0f-%.0f)", med, b->unit, min, max);
			line_add(line, &len, sizeof(line), " %-19s", cell);
		}
		line_end(line, &len);
		shown++;
	}
	if (!shown) {
		fprintf(stderr, "benchstat: %s has none of the figures a cover letter quotes\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "parse"))
		return cmd_parse(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "summary"))
		return cmd_summary(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "table"))
		return cmd_table(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "samples"))
		return cmd_samples(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "timeplot"))
		return cmd_timeplot(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "brief"))
		return cmd_brief(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "compare"))
		return cmd_compare(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "plot"))
		return cmd_plot(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "stepsplot"))
		return cmd_stepsplot(argc - 2, argv + 2);
	fprintf(stderr, "usage: benchstat parse CONSOLE_LOG\n"
			"       benchstat summary RAW_TSV [--ratio NAME=NUM/DEN]...\n"
			"       benchstat table SUMMARY_TSV\n"
			"       benchstat compare SUMMARY_TSV BASELINE_SUMMARY_TSV\n"
			"       benchstat brief SUMMARY_TSV\n"
			"       benchstat samples CONSOLE_LOG\n"
			"       benchstat timeplot SAMPLES_TSV --metrics M1,M2.. --title T --ylabel Y --out FILE.png\n"
			"       %s\n"
			"       benchstat stepsplot RESULTS_TSV --column NAME --title T --ylabel Y --out FILE.png\n",
		plot_usage + strlen("usage: "));
	return 2;
}

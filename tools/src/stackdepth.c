// SPDX-License-Identifier: GPL-2.0
/*
 * stackdepth: the worst-case stack depth of a built kernel, from the call
 * graphs GCC writes with -fcallgraph-info=su (one VCG ".ci" file per
 * translation unit: a node per function with its frame in bytes, static
 * or dynamic, and an edge per direct call site; an indirect call is an
 * edge to "__indirect_call").
 *
 *   stackdepth analyse --conf FILE... [--add KIND=BYTES]... [--stack-bytes N]
 *		       [--indirect-bytes N] [--top N] [--md OUT] [--tsv OUT]
 *		       [--paths OUT] LIST
 *	LIST names one input per line: a ".ci" file, or an object ".o"
 *	whose ".ci" must be beside it when it was built from C (its kbuild
 *	".NAME.o.cmd" says "source_... := FILE.c"; objects built from
 *	assembly have none). An object built from C without its ".ci" is an
 *	error, not a hole in the graph: ccache restores an object without
 *	one.
 *
 *	Per function: its frame, the worst-case depth from its entry down
 *	(its frame plus the deepest callee's depth) and that path. Then, per
 *	entry kind of the configuration, the deepest entries, and each depth
 *	twice: over every path, and over the paths that stay out of the
 *	reporting functions (printk, backtraces: the error-report paths),
 *	with how much each reporting function adds to the deepest entry.
 *
 *	- A call to a function no input defines (assembly, or not built)
 *	  counts 0 bytes below the call; they are counted.
 *	- A recursion (a strongly connected part of the graph) is named and
 *	  followed once round: a path visits each function at most once, so a
 *	  recursion's further levels are not counted (each cycle's frames per
 *	  round are listed). Within a cycle the longest simple path is
 *	  searched exactly, up to a budget; past it the cycle's bound is the
 *	  deepest path found within it, a lower bound (said so in the
 *	  summary).
 *	- An indirect call adds --indirect-bytes (default 0) below the
 *	  calling function, unless the configuration names its candidate
 *	  targets ("indirect" lines): then it is an edge to each.
 *	- A dynamic frame (alloca, VLA) counts its static part; it is
 *	  flagged. gcc's "dynamic,bounded" (on i386 the pushes of a call's
 *	  arguments) counts its bound, as a static frame.
 *	- A tail call is counted as a call (the caller's return address, 8
 *	  or 4 bytes, is counted once too many).
 *
 *	The configuration (configs/stack-depth.conf and the arch's
 *	configs/ARCH.stack-depth, each a --conf; --add KIND=BYTES adds to a
 *	kind's base): "#" comments and lines of
 *	  entry KIND BASE GLOB...	functions that start a stack, of
 *					KIND, with BASE bytes already used
 *					below them: numbers and names of
 *					functions (their frames) joined by
 *					"+", as "168+do_syscall_64"; the
 *					kind "any" (every function, "*")
 *					is left out of the reporting table
 *	  report GLOB...		functions that mark a reporting path
 *	  indirect CALLER_GLOB TARGET_GLOB...
 *					candidate targets of CALLER's
 *					indirect calls
 *	A GLOB (fnmatch) is matched against the function's name without its
 *	GCC clone suffix (".constprop.0", ".isra.0", ".part.0").
 *
 *	--strip PREFIX: left out of the definitions' file names (the source
 *	tree's path, which gcc gives them whole).
 *
 *	--md: a Markdown summary (the graph's size, what bounds the answer,
 *	the deepest entries per kind against --stack-bytes, their paths, the
 *	reporting functions, the cycles, the dynamic frames). --tsv: a row
 *	per function ("name file frame dynamic depth depth_normal
 *	indirect_sites cycle"). --paths: a row per entry listed in the
 *	summary ("kind rank entry base depth depth_normal path_normal
 *	path_all", paths as "f1>f2>..."). Without --md, the summary goes to
 *	stdout.
 *
 *	--checkpoints OUT [--budget BYTES]: the functions a stack check need
 *	run at (LIST must then name objects: their relocations are read),
 *	each with its margin, a row "name margin why definition": every
 *	function entered other than by a direct call of the graph (its
 *	address is taken: a reference from data or a non-call instruction,
 *	outside the sections that only list code, as __mcount_loc; or
 *	assembly calls it), every function without a caller in the graph,
 *	in a cycle or with a dynamic frame, if ftrace can trace it (it is in
 *	__mcount_loc; an object without one counts as traceable when no
 *	object has one); then, callees first, where the
 *	segment below a checkpoint (its frame and the deepest chain of
 *	non-checkpoints below it) passes BUDGET bytes (default 512), its
 *	deepest traceable callee. --allowance BYTES (default 0): a function
 *	whose address is taken is no checkpoint while its segment fits in
 *	BYTES, and each indirect call adds BYTES to its caller's segment
 *	instead. A checkpoint's margin is its segment: how far the
 *	stack can grow past its entry before the check runs again.
 *
 * Exit status: 0 done, 2 bad usage, an input that cannot be read or is not
 * a call graph, or an object without its ".ci" (what to do on stderr).
 * Tested on hand-made inputs in tests/fixtures/stackdepth/
 * (tests/stackdepth.bats).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "stackdepth"
#include "kstack_util.h"

#define INDIRECT_TITLE "__indirect_call"
#define CYCLE_BUDGET 20000L	/* DFS steps per member of a cycle */
#define NO_NODE (-1)
#define VIA_INDIRECT (-2)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		fail("out of memory");
	return p;
}


static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		fail("out of memory");
	return s;
}

/* A growing array of ints */
struct ivec {
	int *v;
	int n, cap;
};

static void ivec_push(struct ivec *a, int x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 4;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = x;
}

static bool ivec_has(const struct ivec *a, int x)
{
	for (int i = 0; i < a->n; i++)
		if (a->v[i] == x)
			return true;
	return false;
}

/* String to int map (open addressing) */
struct map {
	char **key;
	int *val;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int *map_slot(struct map *m, const char *key, bool add)
{
	size_t i;

	if (add && 2 * (m->n + 1) > m->cap) {
		struct map g = { 0 };

		g.cap = m->cap ? 2 * m->cap : 1024;
		g.key = xcalloc(g.cap, sizeof(*g.key));
		g.val = xcalloc(g.cap, sizeof(*g.val));
		for (size_t j = 0; j < m->cap; j++)
			if (m->key[j])
				*map_slot(&g, m->key[j], true) = m->val[j];
		free(m->key);
		free(m->val);
		g.n = m->n;
		*m = g;
	}
	if (!m->cap)
		return NULL;
	for (i = hash_str(key) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->key[i], key))
			return &m->val[i];
	if (!add)
		return NULL;
	m->key[i] = xstrdup(key);
	m->n++;
	m->val[i] = NO_NODE;
	return &m->val[i];
}

/* A function defined by one of the inputs */
struct fn {
	char *name;		/* as in the source, clone suffix kept */
	char *base;		/* without the clone suffix: what globs match */
	char *file;		/* file:line of its definition */
	int frame;
	bool dynamic, bounded;
	bool is_report;
	int nindirect;		/* indirect call sites */
	struct ivec succ;	/* direct callees, once each */
	bool self_call;
};

struct scc {
	struct ivec members;
	bool cyclic;
	bool searched;		/* a search hit its budget: a lower bound */
	long frames;		/* per round: the sum of its frames */
};

struct entry_kind {
	char *kind;
	char *base_terms;	/* "168+do_syscall_64": bytes and functions' frames */
	char *missing;		/* terms no function of the graph matched */
	int base;
	struct ivec globs;	/* indexes into conf_globs */
};

struct indirect_rule {
	char *caller;
	struct ivec targets;	/* indexes into conf_globs */
};

static struct fn *fns;
static int nfns, capfns;
static struct map globals;	/* global name -> first node; more in dups */
static struct ivec *dup_defs;	/* per node, other definitions of its name */
static long n_units, n_direct_edges, n_indirect_sites, n_undefined_calls;
static long n_dup_names;
static struct map undefined;	/* names called but defined nowhere */

static char **conf_globs;
static int nconf_globs;
static struct entry_kind *kinds;
static int nkinds;
static struct ivec report_globs;
static struct indirect_rule *rules;
static int nrules;

/* The strongly connected parts of a graph, callees first (Tarjan's order) */
struct sccset {
	struct scc *v;
	int n;
	int *of;	/* per function: its part, -1 when cut off */
};

/* The whole graph's, reporting functions in: the checkpoints' and the TSV's */
static struct sccset full;

static char *base_name(const char *name)
{
	char *b = xstrdup(name), *dot = strchr(b, '.');

	if (dot)
		*dot = '\0';
	return b;
}

/* dup_defs grows with fns; make sure it covers every node */
static void grow_dups(void)
{
	static int have;

	if (have < capfns) {
		dup_defs = xrealloc(dup_defs, capfns * sizeof(*dup_defs));
		memset(dup_defs + have, 0, (capfns - have) * sizeof(*dup_defs));
		have = capfns;
	}
}

/* --strip: a prefix left out of the definitions' file names (the source tree) */
static const char *strip_prefix;

static int new_fn(const char *name, const char *file, int frame, bool dynamic, bool bounded)
{
	struct fn *f;

	if (strip_prefix && !strncmp(file, strip_prefix, strlen(strip_prefix)))
		file += strlen(strip_prefix);

	if (nfns == capfns) {
		capfns = capfns ? 2 * capfns : 1024;
		fns = xrealloc(fns, capfns * sizeof(*fns));
	}
	f = &fns[nfns];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->base = base_name(name);
	f->file = xstrdup(file);
	f->frame = frame;
	f->dynamic = dynamic;
	f->bounded = bounded;
	nfns++;
	grow_dups();
	return nfns - 1;
}

/*
 * One parsed .ci unit: its nodes by title (those it defines) and its
 * edges by title, resolved once every unit is read.
 */
struct pending_edge {
	int unit;
	char *src, *dst;
};

static struct pending_edge *pend;
static long npend, cappend;
static struct map *unit_locals;	/* per unit: "file:name" title -> node */
static char **unit_title;	/* per unit: its main file, as its titles start */
static int cap_units;

/* The value of KEY: "..." in a VCG line, unescaped, or NULL */
static char *vcg_field(const char *line, const char *key)
{
	char pat[32];
	const char *p;
	char *out, *w;

	snprintf(pat, sizeof(pat), "%s: \"", key);
	p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	out = w = xcalloc(strlen(p) + 1, 1);
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			*w++ = *p == 'n' ? '\n' : *p;
		} else {
			*w++ = *p;
		}
	}
	if (*p != '"') {
		free(out);
		return NULL;
	}
	*w = '\0';
	return out;
}

static void read_ci(const char *path)
{
	FILE *f = open_input(path);
	char *line = NULL;
	size_t cap = 0;
	int unit = (int)n_units, lineno = 0;
	bool seen_graph = false, ended = false;

	if (unit == cap_units) {
		cap_units = cap_units ? 2 * cap_units : 256;
		unit_locals = xrealloc(unit_locals, cap_units * sizeof(*unit_locals));
		unit_title = xrealloc(unit_title, cap_units * sizeof(*unit_title));
	}
	memset(&unit_locals[unit], 0, sizeof(unit_locals[unit]));
	unit_title[unit] = NULL;
	n_units++;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (!strncmp(line, "graph:", 6)) {
			seen_graph = true;
			unit_title[unit] = vcg_field(line, "title");
		} else if (!strncmp(line, "node:", 5)) {
			char *title = vcg_field(line, "title");
			char *label = vcg_field(line, "label");
			char *l1, *l2, *l3;
			int frame = 0, id;

			if (!title || !label || !seen_graph)
				fail("%s:%d: not a call graph node line", path, lineno);
			l1 = label;
			l2 = strchr(l1, '\n');
			l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
			if (l2)
				*l2++ = '\0';
			if (l3)
				*l3++ = '\0';
			/* An ellipse without a size: declared here, defined elsewhere */
			if (l3 && strcmp(title, INDIRECT_TITLE)) {
				char kind[32] = "";

				if (sscanf(l3, "%d bytes (%31[a-z,])", &frame, kind) != 2 || frame < 0)
					fail("%s:%d: cannot read the frame size \"%s\"", path, lineno, l3);
				/* "file:name" titles are local to their unit */
				id = new_fn(strchr(title, ':') ? strchr(title, ':') + 1 : title,
					    l2 ? l2 : "", frame,
					    strstr(kind, "dynamic") && !strstr(kind, "bounded"),
					    strstr(kind, "bounded") != NULL);
				if (strchr(title, ':')) {
					*map_slot(&unit_locals[unit], title, true) = id;
				} else {
					int *slot = map_slot(&globals, title, true);

					if (*slot == NO_NODE) {
						*slot = id;
					} else {
						if (!dup_defs[*slot].n)
							n_dup_names++;
						ivec_push(&dup_defs[*slot], id);
					}
				}
			}
			free(title);
			free(label);
		} else if (!strncmp(line, "edge:", 5)) {
			char *src = vcg_field(line, "sourcename");
			char *dst = vcg_field(line, "targetname");

			if (!src || !dst || !seen_graph)
				fail("%s:%d: not a call graph edge line", path, lineno);
			if (npend == cappend) {
				cappend = cappend ? 2 * cappend : 4096;
				pend = xrealloc(pend, cappend * sizeof(*pend));
			}
			pend[npend++] = (struct pending_edge){ unit, src, dst };
		} else if (line[0] == '}') {
			ended = true;
		} else if (line[0] != '\n') {
			fail("%s:%d: not a call graph line (a .ci file of gcc -fcallgraph-info=su?)",
			     path, lineno);
		}
	}
	free(line);
	fclose(f);
	if (!seen_graph || !ended)
		fail("%s: not a whole call graph (no \"graph:\" line or no closing \"}\")", path);
}

static void add_edge(int from, int to)
{
	if (!ivec_has(&fns[from].succ, to))
		ivec_push(&fns[from].succ, to);
}

/* Every definition a title names, from UNIT */
static void resolve(int unit, const char *title, struct ivec *out)
{
	int *slot;

	out->n = 0;
	if (strchr(title, ':')) {
		slot = map_slot(&unit_locals[unit], title, false);
		if (slot)
			ivec_push(out, *slot);
		return;
	}
	slot = map_slot(&globals, title, false);
	if (!slot)
		return;
	ivec_push(out, *slot);
	for (int i = 0; i < dup_defs[*slot].n; i++)
		ivec_push(out, dup_defs[*slot].v[i]);
}

static void link_edges(void)
{
	struct ivec from = { 0 }, to = { 0 };

	for (long i = 0; i < npend; i++) {
		struct pending_edge *e = &pend[i];

		resolve(e->unit, e->src, &from);
		if (!from.n)
			fail("unit %d: an edge from \"%s\", which it does not define", e->unit, e->src);
		if (!strcmp(e->dst, INDIRECT_TITLE)) {
			fns[from.v[0]].nindirect++;
			n_indirect_sites++;
			continue;
		}
		resolve(e->unit, e->dst, &to);
		if (!to.n) {
			n_undefined_calls++;
			map_slot(&undefined, e->dst, true);
			continue;
		}
		for (int j = 0; j < to.n; j++) {
			if (to.v[j] == from.v[0])
				fns[from.v[0]].self_call = true;
			if (!ivec_has(&fns[from.v[0]].succ, to.v[j]))
				n_direct_edges++;
			add_edge(from.v[0], to.v[j]);
		}
	}
	free(from.v);
	free(to.v);
}

/* ---- configuration ---- */

static int add_glob(const char *g)
{
	conf_globs = xrealloc(conf_globs, (nconf_globs + 1) * sizeof(*conf_globs));
	conf_globs[nconf_globs] = xstrdup(g);
	return nconf_globs++;
}

static bool glob_match(int g, const struct fn *f)
{
	return !fnmatch(conf_globs[g], f->base, 0);
}

static bool any_match(const struct ivec *globs, const struct fn *f)
{
	for (int i = 0; i < globs->n; i++)
		if (glob_match(globs->v[i], f))
			return true;
	return false;
}

static void read_conf(const char *path)
{
	FILE *f = open_input(path);
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;

	while (getline(&line, &cap, f) > 0) {
		char *tok[256], *save = NULL, *t;
		int n = 0;

		lineno++;
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		for (t = strtok_r(line, " \t\n", &save); t && n < 256; t = strtok_r(NULL, " \t\n", &save))
			tok[n++] = t;
		if (!n)
			continue;
		if (!strcmp(tok[0], "entry")) {
			struct entry_kind *k;
			if (n < 4)
				fail("%s:%d: \"entry KIND BASE GLOB...\" expected", path, lineno);
			for (char *c = tok[2]; *c; c++)
				if (*c == '+' && (c == tok[2] || c[1] == '+' || !c[1]))
					fail("%s:%d: BASE \"%s\": bytes and function names joined by +",
					     path, lineno, tok[2]);
			kinds = xrealloc(kinds, (nkinds + 1) * sizeof(*kinds));
			k = &kinds[nkinds++];
			memset(k, 0, sizeof(*k));
			k->kind = xstrdup(tok[1]);
			k->base_terms = xstrdup(tok[2]);
			for (int i = 3; i < n; i++)
				ivec_push(&k->globs, add_glob(tok[i]));
		} else if (!strcmp(tok[0], "report")) {
			if (n < 2)
				fail("%s:%d: \"report GLOB...\" expected", path, lineno);
			for (int i = 1; i < n; i++)
				ivec_push(&report_globs, add_glob(tok[i]));
		} else if (!strcmp(tok[0], "indirect")) {
			struct indirect_rule *r;

			if (n < 3)
				fail("%s:%d: \"indirect CALLER_GLOB TARGET_GLOB...\" expected", path, lineno);
			rules = xrealloc(rules, (nrules + 1) * sizeof(*rules));
			r = &rules[nrules++];
			memset(r, 0, sizeof(*r));
			r->caller = xstrdup(tok[1]);
			for (int i = 2; i < n; i++)
				ivec_push(&r->targets, add_glob(tok[i]));
		} else {
			fail("%s:%d: unknown directive \"%s\" (entry, report or indirect)", path, lineno, tok[0]);
		}
	}
	free(line);
	fclose(f);
}

/* Apply the configuration: bases, reporting functions, resolved indirect calls */
static long n_resolved_sites;

static void resolve_bases(void)
{
	for (int k = 0; k < nkinds; k++) {
		char *terms = xstrdup(kinds[k].base_terms), *save = NULL;
		long base = 0;

		for (char *t = strtok_r(terms, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
			char *end;
			long v = strtol(t, &end, 10);
			int frame = -1;

			if (!*end && end != t) {
				base += v;
				continue;
			}
			for (int i = 0; i < nfns; i++)
				if (!strcmp(fns[i].base, t) && fns[i].frame > frame)
					frame = fns[i].frame;
			if (frame >= 0) {
				base += frame;
				continue;
			}
			kinds[k].missing = kinds[k].missing ? xprintf("%s, %s", kinds[k].missing, t)
							    : xstrdup(t);
		}
		kinds[k].base = (int)base;
		free(terms);
	}
}

static void apply_conf(void)
{
	resolve_bases();
	for (int i = 0; i < nfns; i++)
		fns[i].is_report = any_match(&report_globs, &fns[i]);
	for (int r = 0; r < nrules; r++) {
		for (int i = 0; i < nfns; i++) {
			if (!fns[i].nindirect || fnmatch(rules[r].caller, fns[i].base, 0))
				continue;
			for (int j = 0; j < nfns; j++)
				if (j != i && any_match(&rules[r].targets, &fns[j]))
					add_edge(i, j);
			n_resolved_sites += fns[i].nindirect;
			fns[i].nindirect = 0;
		}
	}
}

/* ---- strongly connected parts (Tarjan, iterative) ---- */

static struct sccset find_sccs(const bool *excluded)
{
	struct sccset ss = { .of = xcalloc(nfns, sizeof(int)) };
	int *index = xcalloc(nfns, sizeof(int)), *low = xcalloc(nfns, sizeof(int));
	bool *on = xcalloc(nfns, sizeof(bool));
	int *stack = xcalloc(nfns, sizeof(int)), sp = 0;
	int *cs_node = xcalloc(nfns, sizeof(int)), *cs_edge = xcalloc(nfns, sizeof(int));
	int next = 1;

	for (int root = 0; root < nfns; root++) {
		int csp = 0;

		if (index[root] || (excluded && excluded[root])) {
			if (excluded && excluded[root])
				ss.of[root] = -1;
			continue;
		}
		cs_node[csp] = root;
		cs_edge[csp++] = 0;
		index[root] = low[root] = next++;
		stack[sp++] = root;
		on[root] = true;
		while (csp) {
			int v = cs_node[csp - 1];

			if (cs_edge[csp - 1] < fns[v].succ.n) {
				int w = fns[v].succ.v[cs_edge[csp - 1]++];

				if (excluded && excluded[w])
					continue;
				if (!index[w]) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					on[w] = true;
					cs_node[csp] = w;
					cs_edge[csp++] = 0;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			if (low[v] == index[v]) {
				struct scc *s;
				int w;

				ss.v = xrealloc(ss.v, (ss.n + 1) * sizeof(*ss.v));
				s = &ss.v[ss.n];
				memset(s, 0, sizeof(*s));
				do {
					w = stack[--sp];
					on[w] = false;
					ss.of[w] = ss.n;
					ivec_push(&s->members, w);
					s->frames += fns[w].frame;
				} while (w != v);
				s->cyclic = s->members.n > 1 || fns[v].self_call;
				ss.n++;
			}
			csp--;
			if (csp) {
				int u = cs_node[csp - 1];

				if (low[v] < low[u])
					low[u] = low[v];
			}
		}
	}
	free(index);
	free(low);
	free(on);
	free(stack);
	free(cs_node);
	free(cs_edge);
	return ss;
}

static void free_sccs(struct sccset *ss)
{
	for (int i = 0; i < ss->n; i++)
		free(ss->v[i].members.v);
	free(ss->v);
	free(ss->of);
}

/* ---- depths ---- */

/*
 * One evaluation of the graph: the depth of every function, with the
 * functions "excluded" (reporting ones) cut off, and how each got it:
 * for a function outside a cycle, the callee below it (or VIA_INDIRECT, or
 * NO_NODE); for one in a cycle, its path through the cycle and the callee
 * that path leaves it for.
 */
struct eval {
	long *depth;
	int *next;
	struct ivec *cycle_path;	/* members after this one, in order */
	int indirect_bytes;
	const bool *excluded;
	struct sccset ss;	/* of this graph: the excluded cut off */
};

static long exit_depth(const struct eval *e, int v, int *via)
{
	long best = fns[v].nindirect ? e->indirect_bytes : 0;

	*via = fns[v].nindirect && e->indirect_bytes ? VIA_INDIRECT : NO_NODE;
	for (int i = 0; i < fns[v].succ.n; i++) {
		int w = fns[v].succ.v[i];

		if ((e->excluded && e->excluded[w]) || e->ss.of[w] == e->ss.of[v])
			continue;
		if (e->depth[w] > best || (*via == NO_NODE && e->depth[w] == best && best > 0)) {
			best = e->depth[w];
			*via = w;
		}
	}
	return best;
}

/* Exact longest simple path within a cycle, from START; false over budget */
struct cycle_search {
	const struct eval *e;
	int scc;
	bool *on_path;
	const long *exit;	/* per function: exit_depth(), computed once */
	const int *exit_via;
	int *path, len;
	int *best_path, best_len;
	long best, steps;
	int best_exit;
};

/*
 * The longest simple path within a cycle from @v, each member at most
 * once, then its deepest way out; false when it ran out of its budget
 * (the best path found so far is kept: a lower bound, said so)
 */
static bool cycle_dfs(struct cycle_search *cs, int v, long sum)
{
	long here;

	if (++cs->steps > CYCLE_BUDGET)
		return false;
	sum += fns[v].frame;
	cs->path[cs->len++] = v;
	cs->on_path[v] = true;
	here = sum + cs->exit[v];
	if (here > cs->best) {
		cs->best = here;
		cs->best_len = cs->len;
		memcpy(cs->best_path, cs->path, cs->len * sizeof(int));
		cs->best_exit = cs->exit_via[v];
	}
	for (int i = 0; i < fns[v].succ.n; i++) {
		int w = fns[v].succ.v[i];

		if (cs->e->ss.of[w] != cs->scc || cs->on_path[w] ||
		    (cs->e->excluded && cs->e->excluded[w]))
			continue;
		if (!cycle_dfs(cs, w, sum))
			return false;
	}
	cs->on_path[v] = false;
	cs->len--;
	return true;
}

/* The normal path of @v stands in @e where it is deeper (evaluate's floor) */
static void raise_to(struct eval *e, const struct eval *floor, int v)
{
	if (!floor || floor->ss.of[v] < 0 || floor->depth[v] <= e->depth[v])
		return;
	e->depth[v] = floor->depth[v];
	e->next[v] = floor->next[v];
	e->cycle_path[v].n = 0;
	for (int j = 0; j < floor->cycle_path[v].n; j++)
		ivec_push(&e->cycle_path[v], floor->cycle_path[v].v[j]);
}

/*
 * Every function's depth, callees first, without the @excluded; with a
 * @floor (an evaluation of a part of this graph), never less than there.
 */
static void evaluate(struct eval *e, int indirect_bytes, const bool *excluded,
		     const struct eval *floor)
{
	bool *on_path;
	int *path, *best_path, *exit_via;
	long *exits;

	e->depth = xcalloc(nfns, sizeof(long));
	e->next = xcalloc(nfns, sizeof(int));
	e->cycle_path = xcalloc(nfns, sizeof(struct ivec));
	e->indirect_bytes = indirect_bytes;
	e->excluded = excluded;
	on_path = xcalloc(nfns, sizeof(bool));
	path = xcalloc(nfns, sizeof(int));
	best_path = xcalloc(nfns, sizeof(int));
	exits = xcalloc(nfns, sizeof(long));
	exit_via = xcalloc(nfns, sizeof(int));
	e->ss = find_sccs(excluded);
	/* Tarjan numbers the parts callees first */
	for (int s = 0; s < e->ss.n; s++) {
		struct scc *p = &e->ss.v[s];

		if (!p->cyclic) {
			int v = p->members.v[0], via;

			if (excluded && excluded[v])
				continue;
			e->depth[v] = fns[v].frame + exit_depth(e, v, &via);
			e->next[v] = via;
			raise_to(e, floor, v);
			continue;
		}
		for (int m = 0; m < p->members.n; m++) {
			int v = p->members.v[m];

			exits[v] = exit_depth(e, v, &exit_via[v]);
		}
		for (int m = 0; m < p->members.n; m++) {
			int v = p->members.v[m];
			struct cycle_search cs = { .e = e, .scc = s, .on_path = on_path,
						   .exit = exits, .exit_via = exit_via,
						   .path = path, .best_path = best_path, .best = -1 };

			if (excluded && excluded[v])
				continue;
			if (!cycle_dfs(&cs, v, 0)) {
				p->searched = true;
				for (int i = 0; i < p->members.n; i++)
					on_path[p->members.v[i]] = false;
			}
			e->depth[v] = cs.best;
			e->next[v] = cs.best_exit;
			for (int i = 1; i < cs.best_len; i++)
				ivec_push(&e->cycle_path[v], cs.best_path[i]);
			raise_to(e, floor, v);
		}
	}
	free(on_path);
	free(path);
	free(best_path);
	free(exits);
	free(exit_via);
}

static void free_eval(struct eval *e)
{
	for (int i = 0; i < nfns; i++)
		free(e->cycle_path[i].v);
	free(e->cycle_path);
	free(e->depth);
	free(e->next);
	free_sccs(&e->ss);
}

/* The path from V, as "f1>f2>..." or, with FRAMES, one "frame name" per line */
struct path_flags {
	int indirect;	/* unresolved indirect call sites of its functions */
	bool dynamic;	/* a dynamic frame on it */
	bool lower;	/* through a cycle searched within a budget: a lower bound */
};

static char *path_string(const struct eval *e, int v, bool frames, struct path_flags *pf)
{
	size_t cap = 256, len = 0;
	char *s = xcalloc(cap, 1);
	int guard = 0;

	memset(pf, 0, sizeof(*pf));
	while (v >= 0 && guard++ < nfns) {
		struct ivec *cp = &e->cycle_path[v];
		int seq[1 + cp->n], nseq = 0, last;

		seq[nseq++] = v;
		for (int i = 0; i < cp->n; i++)
			seq[nseq++] = cp->v[i];
		for (int i = 0; i < nseq; i++) {
			struct fn *f = &fns[seq[i]];
			char *item;

			if (f->dynamic)
				pf->dynamic = true;
			if (e->ss.of[seq[i]] >= 0 && e->ss.v[e->ss.of[seq[i]]].searched)
				pf->lower = true;
			pf->indirect += f->nindirect;
			if (frames)
				item = xprintf("%6d  %s%s%s  %s\n", f->frame, f->name,
					       f->dynamic ? " (dynamic frame)" : "",
					       e->ss.of[seq[i]] >= 0 && e->ss.v[e->ss.of[seq[i]]].cyclic ?
					       " (in a cycle)" : "", f->file);
			else
				item = xprintf("%s%s", len ? ">" : "", f->name);
			if (len + strlen(item) + 1 > cap) {
				cap = 2 * (len + strlen(item) + 1);
				s = xrealloc(s, cap);
			}
			strcpy(s + len, item);
			len += strlen(item);
			free(item);
		}
		last = seq[nseq - 1];
		v = e->next[v];
		if (v == VIA_INDIRECT) {
			char *item = frames ? xprintf("%6d  (an indirect call of %s, assumed)\n",
						      e->indirect_bytes, fns[last].name)
					    : xstrdup(">(indirect)");

			if (len + strlen(item) + 1 > cap) {
				cap = 2 * (len + strlen(item) + 1);
				s = xrealloc(s, cap);
			}
			strcpy(s + len, item);
			len += strlen(item);
			free(item);
			break;
		}
	}
	return s;
}


/* ---- references in the objects: what gcc's graph does not show ---- */

/*
 * A function that some code may enter without a direct call from C the
 * graph has: its address is taken (a function pointer in data, an
 * initcall, an export, a "mov $fn"), or assembly calls it. Each is a
 * checkpoint: an indirect call may reach it from anywhere.
 */
enum forced { NOT_FORCED, FORCED_ADDRESS, FORCED_ASM, FORCED_ROOT, FORCED_CYCLE, FORCED_DYNAMIC };

static const char *const forced_name[] = {
	"", "address taken", "called from assembly", "no caller in the graph", "in a cycle",
	"dynamic frame",
};

static unsigned char *forced;	/* per function: enum forced */
static bool *traceable;		/* per function: in __mcount_loc */
static long n_elf_objects, n_address_refs, n_asm_calls, n_mcount;

/* Sections whose references to code are not calls or function pointers */
static bool metadata_section(const char *name)
{
	static const char *const prefixes[] = {
		"__mcount_loc", "__patchable_function_entries", ".discard", ".smp_locks",
		"__ex_table", "__bug_table", ".orc_unwind", ".debug", ".eh_frame", "__jump_table",
		".altinstr", ".parainstructions", ".static_call_sites", ".retpoline_sites",
		".return_sites", ".ibt_endbr_seal", ".call_sites", ".note", ".comment",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The graph's node of symbol NAME of unit UNIT (-1: an asm object), or NO_NODE */
static int node_of_symbol(int unit, const char *name, bool local)
{
	int *slot;

	if (local) {
		char *title;

		if (unit < 0 || !unit_title[unit])
			return NO_NODE;
		title = xprintf("%s:%s", unit_title[unit], name);
		slot = map_slot(&unit_locals[unit], title, false);
		free(title);
		/* gcc titles a local function "file:name" only when it is not public */
		if (slot)
			return *slot;
	}
	slot = map_slot(&globals, name, false);
	return slot ? *slot : NO_NODE;
}

static void force(int node, enum forced why)
{
	if (node != NO_NODE && !forced[node])
		forced[node] = why;
}

/* One ELF relocatable object, 32- or 64-bit: its sections, symbols, relocations */
struct elf_obj {
	const unsigned char *data;
	size_t size;
	bool is64;
	const char *path;
};

#define ELF_FIELD(o, t32, t64, p, f) ((o)->is64 ? ((const t64 *)(p))->f : ((const t32 *)(p))->f)

static const void *elf_at(const struct elf_obj *o, unsigned long off, unsigned long len)
{
	if (off > o->size || len > o->size - off)
		fail("%s: not a whole ELF object (a table past its end)", o->path);
	return o->data + off;
}

/* A function symbol of an object by its section and offset */
struct func_at {
	unsigned long shndx;
	long value;
	unsigned long sym;
};

static int cmp_func_at(const void *a, const void *b)
{
	const struct func_at *x = a, *y = b;

	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

static void scan_object(const char *path, int unit)
{
	struct func_at *funcs;
	size_t nfuncs;
	struct elf_obj o = { .path = path };
	FILE *f = open_input(path);
	unsigned long shoff, shnum, shentsize, shstrndx, symtab = 0, nsyms = 0, symsize = 0;
	const char *strtab = NULL;
	unsigned long strtab_size = 0;
	const void *sh;
	const char *shstr;
	unsigned char *buf;
	long size;

	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		fail("cannot read %s", path);
	buf = xrealloc(NULL, size ? size : 1);
	if (size && fread(buf, 1, size, f) != (size_t)size)
		fail("cannot read %s", path);
	fclose(f);
	o.data = buf;
	o.size = size;
	if (o.size < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		fail("%s: not an ELF object", path);
	o.is64 = buf[EI_CLASS] == ELFCLASS64;
	elf_at(&o, 0, o.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
	if (ELF_FIELD(&o, Elf32_Ehdr, Elf64_Ehdr, buf, e_type) != ET_REL)
		fail("%s: not a relocatable object", path);
	shoff = ELF_FIELD(&o, Elf32_Ehdr, Elf64_Ehdr, buf, e_shoff);
	shnum = ELF_FIELD(&o, Elf32_Ehdr, Elf64_Ehdr, buf, e_shnum);
	shentsize = ELF_FIELD(&o, Elf32_Ehdr, Elf64_Ehdr, buf, e_shentsize);
	shstrndx = ELF_FIELD(&o, Elf32_Ehdr, Elf64_Ehdr, buf, e_shstrndx);
	if (shentsize != (o.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) || shstrndx >= shnum)
		fail("%s: an ELF object this program cannot read (section headers)", path);
	sh = elf_at(&o, shoff, shnum * shentsize);
#define SEC(i) ((const unsigned char *)sh + (i) * shentsize)
#define SH(i, f) ELF_FIELD(&o, Elf32_Shdr, Elf64_Shdr, SEC(i), f)
	shstr = elf_at(&o, SH(shstrndx, sh_offset), SH(shstrndx, sh_size));
	for (unsigned long i = 0; i < shnum; i++)
		if (SH(i, sh_type) == SHT_SYMTAB) {
			symtab = SH(i, sh_offset);
			symsize = SH(i, sh_entsize);
			nsyms = SH(i, sh_size) / (symsize ? symsize : 1);
			elf_at(&o, symtab, nsyms * symsize);
			strtab = elf_at(&o, SH(SH(i, sh_link), sh_offset), SH(SH(i, sh_link), sh_size));
			strtab_size = SH(SH(i, sh_link), sh_size);
		}
	if (!strtab)
		fail("%s: no symbol table", path);
	n_elf_objects++;
#define SYM(k) (o.data + symtab + (k) * symsize)
#define ST(k, f) ELF_FIELD(&o, Elf32_Sym, Elf64_Sym, SYM(k), f)
#define SYMNAME(k) (ST(k, st_name) < strtab_size ? strtab + ST(k, st_name) : "")
	funcs = xrealloc(NULL, (nsyms ? nsyms : 1) * sizeof(*funcs));
	nfuncs = 0;
	for (unsigned long k = 0; k < nsyms; k++)
		if ((ELF_FIELD(&o, Elf32_Sym, Elf64_Sym, SYM(k), st_info) & 0xf) == STT_FUNC)
			funcs[nfuncs++] = (struct func_at){ ST(k, st_shndx), (long)ST(k, st_value), k };
	qsort(funcs, nfuncs, sizeof(*funcs), cmp_func_at);
	for (unsigned long r = 0; r < shnum; r++) {
		unsigned long type = SH(r, sh_type), target, n, entsize, roff;
		const char *tname;
		bool rela, exec, mcount;

		if (type != SHT_RELA && type != SHT_REL)
			continue;
		target = SH(r, sh_info);
		if (target >= shnum)
			continue;
		tname = shstr + SH(target, sh_name);
		mcount = !strcmp(tname, "__mcount_loc");
		if (!(SH(target, sh_flags) & SHF_ALLOC) || (!mcount && metadata_section(tname)))
			continue;
		exec = SH(target, sh_flags) & SHF_EXECINSTR;
		rela = type == SHT_RELA;
		entsize = SH(r, sh_entsize);
		n = SH(r, sh_size) / (entsize ? entsize : 1);
		roff = SH(r, sh_offset);
		elf_at(&o, roff, n * entsize);
		for (unsigned long k = 0; k < n; k++) {
			const unsigned char *rel = o.data + roff + k * entsize;
			unsigned long info, off, symi, rtype;
			long addend;
			bool pcrel, call = false;
			int node = NO_NODE;

			if (o.is64) {
				info = ((const Elf64_Rela *)rel)->r_info;
				off = ((const Elf64_Rela *)rel)->r_offset;
				symi = ELF64_R_SYM(info);
				rtype = ELF64_R_TYPE(info);
				addend = rela ? ((const Elf64_Rela *)rel)->r_addend : 0;
				pcrel = rtype == R_X86_64_PC32 || rtype == R_X86_64_PLT32;
			} else {
				info = ((const Elf32_Rel *)rel)->r_info;
				off = ((const Elf32_Rel *)rel)->r_offset;
				symi = ELF32_R_SYM(info);
				rtype = ELF32_R_TYPE(info);
				addend = 0;
				pcrel = rtype == R_386_PC32 || rtype == R_386_PLT32;
			}
			if (symi >= nsyms)
				continue;
			if (!rela && SH(target, sh_type) != SHT_NOBITS && off + 4 <= SH(target, sh_size)) {
				int32_t v;

				memcpy(&v, elf_at(&o, SH(target, sh_offset) + off, 4), 4);
				addend = v;
			}
			if (exec && pcrel && off >= 1 && SH(target, sh_type) != SHT_NOBITS) {
				const unsigned char *code = elf_at(&o, SH(target, sh_offset), SH(target, sh_size));

				/* call rel32, jmp rel32, or jcc rel32 (0f 8x): a direct transfer */
				call = code[off - 1] == 0xe8 || code[off - 1] == 0xe9 ||
				       (off >= 2 && code[off - 2] == 0x0f && (code[off - 1] & 0xf0) == 0x80);
			}
			/*
			 * An instruction's rel32 counts from the end of its
			 * field (addend -4); a place-relative reference in data
			 * (PREL32: the exports, initcalls) from its start
			 */
			if (pcrel && exec)
				addend += 4;
			switch (ELF_FIELD(&o, Elf32_Sym, Elf64_Sym, SYM(symi), st_info) & 0xf) {
			case STT_FUNC:
			case STT_NOTYPE:
				if (addend != 0)
					break;
				node = node_of_symbol(unit, SYMNAME(symi),
						      (ELF_FIELD(&o, Elf32_Sym, Elf64_Sym, SYM(symi), st_info) >> 4) == STB_LOCAL);
				break;
			case STT_SECTION: {
				/* a local function, named by its section and offset */
				struct func_at key = { ST(symi, st_shndx), addend, 0 }, *hit;

				hit = bsearch(&key, funcs, nfuncs, sizeof(*funcs), cmp_func_at);
				if (hit)
					node = node_of_symbol(unit, SYMNAME(hit->sym),
							      (ELF_FIELD(&o, Elf32_Sym, Elf64_Sym, SYM(hit->sym), st_info) >> 4) == STB_LOCAL);
				break;
			}
			default:
				break;
			}
			if (node == NO_NODE)
				continue;
			if (mcount) {
				/* its fentry call: ftrace can trace it */
				n_mcount++;
				traceable[node] = true;
				continue;
			}
			if (call && unit >= 0)
				continue;	/* C calling C: an edge of the graph */
			if (call) {
				n_asm_calls++;
				force(node, FORCED_ASM);
			} else {
				n_address_refs++;
				force(node, FORCED_ADDRESS);
			}
		}
	}
#undef SYMNAME
#undef ST
#undef SYM
#undef SH
#undef SEC
	free(funcs);
	free(buf);
}

/* ---- checkpoints ---- */

/*
 * The functions the check needs to run at, and the margin at each: with
 * a checkpoint at every function entered other than by a direct call the
 * graph has (forced), in every cycle and at every dynamic frame, the
 * segment of a checkpoint is its frame and, below it, the deepest chain
 * of functions that are not checkpoints (at a checkpoint the check runs
 * again). Callees first, a segment longer than BUDGET bytes makes its
 * deepest callee a checkpoint until it fits. The margin is the segment:
 * how much the stack can grow past the checkpoint's entry before the
 * check runs again. Indirect calls end a segment (their targets are
 * checkpoints: address taken).
 */
static bool *checkpoint;
static long *segment;

static void choose_checkpoints(long budget, long allowance)
{
	checkpoint = xcalloc(nfns, sizeof(bool));
	segment = xcalloc(nfns, sizeof(long));
	for (int i = 0; i < nfns; i++) {
		if (fns[i].dynamic)
			force(i, FORCED_DYNAMIC);
		if (full.v[full.of[i]].cyclic)
			force(i, FORCED_CYCLE);
	}
	{
		bool *called = xcalloc(nfns, sizeof(bool));

		for (int i = 0; i < nfns; i++)
			for (int j = 0; j < fns[i].succ.n; j++)
				if (fns[i].succ.v[j] != i)
					called[fns[i].succ.v[j]] = true;
		for (int i = 0; i < nfns; i++)
			if (!called[i])
				force(i, FORCED_ROOT);
		free(called);
	}
	/* without any __mcount_loc (objects built without -pg) all count as traceable */
	if (!n_mcount)
		for (int i = 0; i < nfns; i++)
			traceable[i] = true;
	/*
	 * With an allowance for indirect calls, a function whose address is
	 * taken need not be a checkpoint while its segment fits the
	 * allowance: every indirect call adds the allowance to its caller's
	 * segment instead
	 */
	for (int i = 0; i < nfns; i++)
		checkpoint[i] = forced[i] != NOT_FORCED && traceable[i] &&
				!(allowance > 0 && forced[i] == FORCED_ADDRESS);
	/* callees first (Tarjan's order); cycles are all checkpoints */
	for (int s = 0; s < full.n; s++) {
		for (int m = 0; m < full.v[s].members.n; m++) {
			int v = full.v[s].members.v[m];

			for (;;) {
				long deepest = 0;
				int which = NO_NODE;

				long cut_at = 0;
				int cut = NO_NODE;

				for (int j = 0; j < fns[v].succ.n; j++) {
					int w = fns[v].succ.v[j];

					if (w == v || checkpoint[w])
						continue;
					if (segment[w] > deepest) {
						deepest = segment[w];
						which = w;
					}
					/* the deepest callee that can be one: ftrace traces it */
					if (traceable[w] && segment[w] > cut_at) {
						cut_at = segment[w];
						cut = w;
					}
				}
				if (fns[v].nindirect && allowance > deepest)
					deepest = allowance;
				segment[v] = fns[v].frame + deepest;
				if (segment[v] <= budget || which == NO_NODE || cut == NO_NODE)
					break;
				checkpoint[cut] = true;
			}
			if (allowance > 0 && forced[v] == FORCED_ADDRESS && segment[v] > allowance &&
			    traceable[v])
				checkpoint[v] = true;
		}
	}
}

static void write_checkpoints(const char *path, long budget, long allowance)
{
	FILE *o = strcmp(path, "-") ? fopen(path, "w") : stdout;
	long n = 0, most = 0, by[FORCED_DYNAMIC + 1] = { 0 }, unchecked = 0, ntrace = 0, within = 0;

	if (!o)
		fail("cannot write %s: %s", path, strerror(errno));
	fprintf(o, "# stack check checkpoints: name, margin (bytes the stack may grow past the entry "
		   "before the next checkpoint), why, definition; budget %ld\n", budget);
	for (int i = 0; i < nfns; i++) {
		ntrace += traceable[i];
		unchecked += forced[i] && !traceable[i] && !(allowance > 0 && forced[i] == FORCED_ADDRESS &&
							    segment[i] <= allowance);
		within += allowance > 0 && forced[i] == FORCED_ADDRESS && segment[i] <= allowance;
		if (!checkpoint[i])
			continue;
		n++;
		by[forced[i]]++;
		if (segment[i] > most)
			most = segment[i];
		fprintf(o, "%s\t%ld\t%s\t%s\n", fns[i].name, segment[i],
			forced[i] ? forced_name[forced[i]] : "segment budget", fns[i].file);
	}
	if (o != stdout && (ferror(o) | fclose(o)))
		fail("writing %s failed", path);
	fprintf(stderr, "stackdepth: %ld checkpoints of %ld traceable functions (%.1f%%; %d in the "
			"graph): %ld address taken, %ld called from assembly, %ld without a caller, %ld "
			"in cycles, %ld dynamic frames, %ld for the budget of %ld bytes; the largest "
			"margin %ld bytes; %ld address-taken functions within the allowance of %ld "
			"bytes per indirect call; %ld entries ftrace cannot trace (not checkpoints) "
			"(%ld objects read, %ld references, %ld calls from assembly)\n",
		n, ntrace, ntrace ? 100.0 * n / ntrace : 0, nfns, by[FORCED_ADDRESS], by[FORCED_ASM],
		by[FORCED_ROOT], by[FORCED_CYCLE], by[FORCED_DYNAMIC], by[NOT_FORCED], budget, most,
		within, allowance, unchecked, n_elf_objects, n_address_refs, n_asm_calls);
}

/* ---- output ---- */

struct opts {
	const char *md, *tsv, *paths, *list, *checkpoints;
	long budget, allowance;
	int nconf;
	long stack_bytes, indirect_bytes, top;
};

static const long *sort_depths;

/* Deepest first by sort_depths, then by name */
static int cmp_sort(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (sort_depths[x] != sort_depths[y])
		return sort_depths[x] < sort_depths[y] ? 1 : -1;
	return strcmp(fns[x].name, fns[y].name);
}

static char *pct(long bytes, long stack)
{
	if (stack <= 0)
		return xstrdup("-");
	return xprintf("%ld%%", (bytes * 100 + stack / 2) / stack);
}

/* The functions of entry kind K, deepest (by the normal depth) first */
static int *kind_entries(int k, const long *depth, int *n)
{
	int *v = xcalloc(nfns, sizeof(int));

	*n = 0;
	for (int i = 0; i < nfns; i++)
		if (any_match(&kinds[k].globs, &fns[i]))
			v[(*n)++] = i;
	sort_depths = depth;
	qsort(v, *n, sizeof(int), cmp_sort);
	return v;
}

/* The deepest entry of a kind that starts a stack (not the kind "any") */
static long max_entry_depth(const struct eval *e, int *which_kind, int *which_fn)
{
	long best = -1;

	for (int k = 0; k < nkinds; k++) {
		if (!strcmp(kinds[k].kind, "any"))
			continue;
		for (int i = 0; i < nfns; i++) {
			if (!any_match(&kinds[k].globs, &fns[i]) || (e->excluded && e->excluded[i]))
				continue;
			if (kinds[k].base + e->depth[i] > best) {
				best = kinds[k].base + e->depth[i];
				*which_kind = k;
				*which_fn = i;
			}
		}
	}
	return best;
}

static void write_summary(FILE *o, const struct opts *op, const struct eval *all,
			  const struct eval *normal, const bool *excluded)
{
	long n_cycle_fns = 0, n_cycles = 0, n_dynamic = 0, n_bounded = 0;
	int nrep = 0, bk = 0, bf = 0;
	long worst_normal;

	const struct sccset *ns = &normal->ss;
	long full_cycle_fns = 0, full_cycles = 0, full_largest = 0;

	for (int s = 0; s < ns->n; s++)
		if (ns->v[s].cyclic) {
			n_cycles++;
			n_cycle_fns += ns->v[s].members.n;
			n_bounded += ns->v[s].searched || all->ss.v[all->ss.of[ns->v[s].members.v[0]]].searched;
		}
	for (int s = 0; s < full.n; s++)
		if (full.v[s].cyclic) {
			full_cycles++;
			full_cycle_fns += full.v[s].members.n;
			if (full.v[s].members.n > full_largest)
				full_largest = full.v[s].members.n;
		}
	for (int i = 0; i < nfns; i++) {
		n_dynamic += fns[i].dynamic;
		nrep += fns[i].is_report;
	}
	fprintf(o, "# Static stack depth\n\n");
	fprintf(o, "From gcc `-fcallgraph-info=su`: %ld units, %d functions, %ld direct call edges, "
		   "%ld indirect call sites (%ld more resolved by the configuration's candidate "
		   "targets), %ld functions in %ld cycles (%ld in %ld, the largest of %ld, with "
		   "the reporting functions in), %ld dynamic frames, %ld calls to "
		   "%zu functions no unit defines (assembly, or not built: 0 bytes below them)",
		n_units, nfns, n_direct_edges, n_indirect_sites - n_resolved_sites,
		n_resolved_sites, n_cycle_fns, n_cycles, full_cycle_fns, full_cycles, full_largest,
		n_dynamic, n_undefined_calls, undefined.n);
	if (n_dup_names)
		fprintf(o, ", %ld names defined more than once (every definition followed)", n_dup_names);
	fprintf(o, ".\n\n");
	fprintf(o, "What bounds the answer:\n\n");
	fprintf(o, "- depth below an unresolved indirect call assumes %ld bytes per indirect call;\n",
		op->indirect_bytes);
	fprintf(o, "- a recursion is followed once round (a path visits each function at most "
		   "once): its further levels are not counted;\n");
	if (n_bounded)
		fprintf(o, "- %ld cycles too large to search exactly (marked below) give the deepest "
			   "path found within %ld steps per member: a lower bound for paths through "
			   "them;\n", n_bounded, CYCLE_BUDGET);
	fprintf(o, "- a dynamic frame (alloca, VLA) counts its static part only;\n");
	fprintf(o, "- calls from inline assembly (static calls, alternatives) are not in the graph, "
		   "and a tail call counts the caller's return address once too many.\n\n");
	if (op->stack_bytes > 0)
		fprintf(o, "Shares are of a %ld-byte stack. ", op->stack_bytes);
	fprintf(o, "\"All paths\" includes the %d reporting functions of the configuration "
		   "(printk, backtraces: error reports); \"normal\" leaves them out. The base is "
		   "what is on the stack below the entry (entry code, pt_regs).\n\n", nrep);

	for (int k = 0; k < nkinds; k++) {
		int n, *v = kind_entries(k, normal->depth, &n);
		int shown = n < op->top ? n : (int)op->top;

		fprintf(o, "## %s (%d functions, base %d bytes: %s)\n\n", kinds[k].kind, n,
			kinds[k].base, kinds[k].base_terms);
		if (kinds[k].missing)
			fprintf(o, "Not in the graph, counted 0 in the base (inlined, or not "
				   "built): %s.\n\n", kinds[k].missing);
		if (!n) {
			fprintf(o, "No function of this kind in the graph.\n\n");
			free(v);
			continue;
		}
		fprintf(o, "| # | entry | normal | share | all paths | share | "
			   "indirect calls on the normal path |\n");
		fprintf(o, "|---|---|---|---|---|---|---|\n");
		for (int r = 0; r < shown; r++) {
			int f = v[r];
			long dn = kinds[k].base + normal->depth[f], da = kinds[k].base + all->depth[f];
			struct path_flags pf;
			char *p = path_string(normal, f, false, &pf);
			char *s1 = pct(dn, op->stack_bytes), *s2 = pct(da, op->stack_bytes);

			fprintf(o, "| %d | `%s`%s%s | %ld%s | %s | %ld | %s | %d |\n", r + 1, fns[f].name,
				pf.dynamic ? " (a dynamic frame below)" : "",
				pf.lower ? " (through a cycle searched within a budget)" : "",
				dn, pf.lower ? " or more" : "", s1, da, s2, pf.indirect);
			free(p);
			free(s1);
			free(s2);
		}
		fprintf(o, "\nThe deepest normal path (frame, function, definition):\n\n```\n");
		{
			struct path_flags pf;
			char *p = path_string(normal, v[0], true, &pf);

			fprintf(o, "%6d  (base)\n%s```\n\n", kinds[k].base, p);
			free(p);
		}
		{
			int best = v[0];
			struct path_flags pf;
			char *p;

			for (int i = 0; i < n; i++)
				if (all->depth[v[i]] > all->depth[best])
					best = v[i];
			p = path_string(all, best, true, &pf);
			fprintf(o, "The deepest path of all (`%s`, through the reporting functions):\n\n"
				   "```\n%6d  (base)\n%s```\n\n", fns[best].name, kinds[k].base, p);
			free(p);
		}
		free(v);
	}

	worst_normal = max_entry_depth(normal, &bk, &bf);
	fprintf(o, "## Reporting functions\n\n");
	fprintf(o, "The deepest entry of any kind stays within %ld bytes (`%s`, %s) on the normal "
		   "paths. What each reporting function adds to that when it is let in (with the "
		   "reporting functions it calls), and its own depth:\n\n",
		worst_normal, fns[bf].name, kinds[bk].kind);
	fprintf(o, "| function | its depth | deepest entry with it | adds |\n|---|---|---|---|\n");
	{
		int *rep = xcalloc(nfns, sizeof(int)), nr = 0;
		long *adds = xcalloc(nfns, sizeof(long));
		int *via = xcalloc(nfns, sizeof(int));
		bool *ex = xcalloc(nfns, sizeof(bool));
		int *queue = xcalloc(nfns, sizeof(int));

		for (int i = 0; i < nfns; i++) {
			struct eval one;
			int k2 = 0, f2 = 0, qh = 0, qt = 0;

			if (!fns[i].is_report)
				continue;
			memcpy(ex, excluded, nfns * sizeof(bool));
			ex[i] = false;
			queue[qt++] = i;
			while (qh < qt) {
				int v = queue[qh++];

				for (int j = 0; j < fns[v].succ.n; j++) {
					int w = fns[v].succ.v[j];

					if (ex[w]) {
						ex[w] = false;
						queue[qt++] = w;
					}
				}
			}
			evaluate(&one, (int)op->indirect_bytes, ex, normal);
			adds[i] = max_entry_depth(&one, &k2, &f2);
			via[i] = f2;
			free_eval(&one);
			rep[nr++] = i;
		}
		sort_depths = adds;
		qsort(rep, nr, sizeof(int), cmp_sort);
		for (int r = 0; r < nr; r++)
			fprintf(o, "| `%s` | %ld | %ld (`%s`) | %+ld |\n", fns[rep[r]].name,
				all->depth[rep[r]], adds[rep[r]], fns[via[rep[r]]].name,
				adds[rep[r]] - worst_normal);
		if (!nr)
			fprintf(o, "| (none in the graph) | | | |\n");
		free(rep);
		free(adds);
		free(via);
		free(ex);
		free(queue);
	}

	fprintf(o, "\n## Cycles\n\nOf the normal paths' graph (the reporting functions left out).\n\n");
	if (!n_cycles) {
		fprintf(o, "None.\n");
	} else {
		fprintf(o, "| functions | frames per round | members |\n|---|---|---|\n");
		for (int s = 0; s < ns->n; s++) {
			if (!ns->v[s].cyclic)
				continue;
			fprintf(o, "| %d | %ld%s | ", ns->v[s].members.n, ns->v[s].frames,
				ns->v[s].searched ? " (searched within a budget)" : "");
			for (int m = 0; m < ns->v[s].members.n && m < 8; m++)
				fprintf(o, "%s`%s`", m ? ", " : "", fns[ns->v[s].members.v[m]].name);
			fprintf(o, "%s |\n", ns->v[s].members.n > 8 ? ", ..." : "");
		}
	}
	fprintf(o, "\n## Dynamic frames\n\n");
	if (!n_dynamic)
		fprintf(o, "None.\n");
	for (int i = 0; i < nfns; i++)
		if (fns[i].dynamic)
			fprintf(o, "- `%s` (%s): %d bytes static%s\n", fns[i].name, fns[i].file,
				fns[i].frame, fns[i].bounded ? ", bounded" : "");
}

static void write_tsv(FILE *o, const struct eval *all, const struct eval *normal)
{
	fprintf(o, "name\tfile\tframe\tdynamic\tdepth\tdepth_normal\tindirect_sites\tcycle\n");
	for (int i = 0; i < nfns; i++)
		fprintf(o, "%s\t%s\t%d\t%d\t%ld\t%ld\t%d\t%d\n", fns[i].name, fns[i].file,
			fns[i].frame, fns[i].dynamic, all->depth[i],
			fns[i].is_report ? -1 : normal->depth[i], fns[i].nindirect,
			full.v[full.of[i]].cyclic ? full.of[i] : -1);
}

static void write_paths(FILE *o, const struct opts *op, const struct eval *all,
			const struct eval *normal)
{
	fprintf(o, "kind\trank\tentry\tbase\tdepth\tdepth_normal\tpath_normal\tpath_all\n");
	for (int k = 0; k < nkinds; k++) {
		int n, *v = kind_entries(k, normal->depth, &n);

		for (int r = 0; r < n && r < op->top; r++) {
			int f = v[r];
			struct path_flags pf;
			char *pn = path_string(normal, f, false, &pf);
			char *pa = path_string(all, f, false, &pf);

			fprintf(o, "%s\t%d\t%s\t%d\t%ld\t%ld\t%s\t%s\n", kinds[k].kind, r + 1,
				fns[f].name, kinds[k].base, kinds[k].base + all->depth[f],
				kinds[k].base + normal->depth[f], pn, pa);
			free(pn);
			free(pa);
		}
		free(v);
	}
}

/* The .ci of one LIST line: itself, or the one beside an object from C */
static char *input_ci(const char *item, long *n_asm)
{
	size_t len = strlen(item);
	char *dir, *base, *cmd, *ci, *line = NULL, *src = NULL;
	const char *slash;
	size_t cap = 0;
	FILE *f;

	if (len > 3 && !strcmp(item + len - 3, ".ci"))
		return xstrdup(item);
	if (len < 3 || strcmp(item + len - 2, ".o"))
		fail("%s: neither a .ci file nor an object (.o)", item);
	slash = strrchr(item, '/');
	dir = slash ? xprintf("%.*s", (int)(slash - item), item) : xstrdup(".");
	base = xstrdup(slash ? slash + 1 : item);
	cmd = xprintf("%s/.%s.cmd", dir, base);
	f = fopen(cmd, "r");
	if (!f)
		fail("%s: no kbuild command file %s beside it: cannot tell what it was built from",
		     item, cmd);
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "source_", 7) && strstr(line, " := ")) {
			src = xstrdup(strstr(line, " := ") + 4);
			src[strcspn(src, "\n")] = '\0';
			break;
		}
	}
	free(line);
	fclose(f);
	free(cmd);
	if (!src || strlen(src) < 2 || strcmp(src + strlen(src) - 2, ".c")) {
		/* assembly, or a link of other objects: no graph of its own */
		(*n_asm)++;
		free(src);
		free(dir);
		free(base);
		return NULL;
	}
	ci = xprintf("%.*s.ci", (int)(len - 2), item);
	f = fopen(ci, "r");
	if (!f)
		fail("%s was built from %s but has no %s beside it: build it without ccache "
		     "(CCACHE_DISABLE=1) and with KCFLAGS=-fcallgraph-info=su (make stack-depth does)",
		     item, src, ci);
	fclose(f);
	free(src);
	free(dir);
	free(base);
	return ci;
}

static long parse_long(const char *opt, const char *s, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min)
		fail("%s \"%s\": a whole number of at least %ld expected", opt, s, min);
	return v;
}

static FILE *open_output(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail("cannot write %s: %s", path, strerror(errno));
	return f;
}

static void close_output(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		fail("writing %s failed", path);
}

struct add {
	const char *kind, *bytes;
};

static struct add *adds;
static int n_adds;

static int analyse(int argc, char **argv)
{
	struct opts op = { .top = 10, .budget = 512 };
	char **objects = NULL;
	int *object_unit = NULL;
	long nobjects = 0;
	struct eval all, normal;
	bool *excluded;
	FILE *list;
	char *line = NULL;
	size_t cap = 0;
	long n_asm = 0, n_items = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (i + 1 < argc && !strcmp(a, "--conf")) {
			read_conf(argv[++i]);
			op.nconf++;
		} else if (i + 1 < argc && !strcmp(a, "--add")) {
			char *eq = strchr(argv[++i], '=');

			if (!eq || eq == argv[i])
				fail("--add \"%s\": KIND=BYTES expected", argv[i]);
			*eq = '\0';
			parse_long("--add", eq + 1, 0);
			n_adds++;
			adds = xrealloc(adds, n_adds * sizeof(*adds));
			adds[n_adds - 1] = (struct add){ argv[i], eq + 1 };
		}
		else if (i + 1 < argc && !strcmp(a, "--md"))
			op.md = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--tsv"))
			op.tsv = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--paths"))
			op.paths = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--stack-bytes"))
			op.stack_bytes = parse_long(a, argv[++i], 1);
		else if (i + 1 < argc && !strcmp(a, "--indirect-bytes"))
			op.indirect_bytes = parse_long(a, argv[++i], 0);
		else if (i + 1 < argc && !strcmp(a, "--strip"))
			strip_prefix = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--checkpoints"))
			op.checkpoints = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--budget"))
			op.budget = parse_long(a, argv[++i], 1);
		else if (i + 1 < argc && !strcmp(a, "--allowance"))
			op.allowance = parse_long(a, argv[++i], 0);
		else if (i + 1 < argc && !strcmp(a, "--top"))
			op.top = parse_long(a, argv[++i], 1);
		else if (a[0] == '-' && a[1])
			fail("unknown option or option without its value: %s", a);
		else if (op.list)
			fail("one LIST expected, got %s and %s", op.list, a);
		else
			op.list = a;
	}
	if (!op.nconf || !op.list)
		fail("usage: stackdepth analyse --conf FILE... [--add KIND=BYTES]... [--stack-bytes N] "
		     "[--indirect-bytes N] [--top N] [--md OUT] [--tsv OUT] [--paths OUT] "
		     "[--checkpoints OUT [--budget BYTES] [--allowance BYTES]] [--strip PREFIX] LIST");
	if (!nkinds)
		fail("no \"entry\" line in the configuration: which functions start a stack?");
	for (int a = 0; a < n_adds; a++) {
		int k;

		for (k = 0; k < nkinds && strcmp(kinds[k].kind, adds[a].kind); k++)
			;
		if (k == nkinds)
			fail("--add %s=%s: no entry kind %s in the configuration", adds[a].kind,
			     adds[a].bytes, adds[a].kind);
		kinds[k].base_terms = xprintf("%s+%s", kinds[k].base_terms, adds[a].bytes);
	}
	list = strcmp(op.list, "-") ? fopen(op.list, "r") : stdin;
	if (!list)
		fail("cannot read the list %s: %s", op.list, strerror(errno));
	while (getline(&line, &cap, list) > 0) {
		char *ci;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		n_items++;
		ci = input_ci(line, &n_asm);
		if (strlen(line) > 2 && !strcmp(line + strlen(line) - 2, ".o")) {
			objects = xrealloc(objects, (nobjects + 1) * sizeof(*objects));
			object_unit = xrealloc(object_unit, (nobjects + 1) * sizeof(*object_unit));
			objects[nobjects] = xstrdup(line);
			object_unit[nobjects++] = ci ? (int)n_units : -1;
		} else if (op.checkpoints) {
			fail("%s: --checkpoints reads the objects themselves: give a LIST of .o files", line);
		}
		if (ci) {
			read_ci(ci);
			free(ci);
		}
	}
	free(line);
	if (list != stdin)
		fclose(list);
	if (!n_units)
		fail("%s: no call graph among its %ld inputs", op.list, n_items);
	grow_dups();
	link_edges();
	apply_conf();
	full = find_sccs(NULL);
	excluded = xcalloc(nfns, sizeof(bool));
	for (int i = 0; i < nfns; i++)
		excluded[i] = fns[i].is_report;
	if (op.checkpoints) {
		forced = xcalloc(nfns, 1);
		traceable = xcalloc(nfns, sizeof(bool));
		for (long i = 0; i < nobjects; i++)
			scan_object(objects[i], object_unit[i]);
		choose_checkpoints(op.budget, op.allowance);
		write_checkpoints(op.checkpoints, op.budget, op.allowance);
	}
	evaluate(&normal, (int)op.indirect_bytes, excluded, NULL);
	/*
	 * Every normal path is a path of the whole graph: where a cycle's
	 * search within its budget finds less there, the normal path stands
	 */
	evaluate(&all, (int)op.indirect_bytes, NULL, &normal);
	{
		FILE *o = op.md ? open_output(op.md) : stdout;

		write_summary(o, &op, &all, &normal, excluded);
		if (op.md)
			close_output(o, op.md);
	}
	if (op.tsv) {
		FILE *o = open_output(op.tsv);

		write_tsv(o, &all, &normal);
		close_output(o, op.tsv);
	}
	if (op.paths) {
		FILE *o = open_output(op.paths);

		write_paths(o, &op, &all, &normal);
		close_output(o, op.paths);
	}
	fprintf(stderr, "stackdepth: %ld units (%ld objects without a graph of their own: "
			"assembly or links), %d functions, %ld direct edges, %ld indirect call sites\n",
		n_units, n_asm, nfns, n_direct_edges, n_indirect_sites);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "analyse"))
		return analyse(argc - 2, argv + 2);
	fail("usage: stackdepth analyse --conf FILE [options] LIST (see tools/src/stackdepth.c)");
	return 2;
}

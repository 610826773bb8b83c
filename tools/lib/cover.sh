# shellcheck shell=bash
# tools/lib/cover.sh: The cover letter of a version: commits/cover-letter.txt,
# the base (so anyone with the distro package can reproduce it), how each
# commit was tested (the last make bisect-boot run of exactly these trees),
# the series' figures from that run and from the last make report of a
# bench of its tip, and the changelog of a reroll.

# tree_ids BASE TIP: the tree id of every commit base..TIP, one a line. The
# sender's sign-off changes commit ids, not trees: results match by tree.
tree_ids() {
	local commit
	while read -r commit; do
		git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}"
	done < <(series_commits "$1" "$2")
}

# tsv_column TSV NAME...: the named columns of a results.tsv, tab-separated,
# one row a line (the header left out).
tsv_column() {
	local tsv=$1
	shift
	awk -F '\t' -v want="$*" '
		NR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? "\t" : "") (w[k] in col ? $(col[w[k]]) : "-"); print line }' "$tsv"
}

# tested_run TREES: the newest bisect-boot run (its folder) whose steps
# 1..M are exactly TREES (one a line), in order; empty when there is none.
tested_run() {
	local trees=$1 run got
	[ -d "$RESULTS/runs" ] || return 0
	while read -r run; do
		[ -f "$run/results.tsv" ] || continue
		got=$(tsv_column "$run/results.tsv" step tree | awk -F '\t' '$1 > 0 && !seen[$1]++ { print $2 }')
		if [ "$got" = "$trees" ]; then
			printf '%s\n' "$run"
			return 0
		fi
	done < <(find "$RESULTS/runs" -mindepth 1 -maxdepth 1 -type d -name 'bisect-boot-[0-9]*' 2>/dev/null | sort -r)
}

# test_matrix RUN: each step's verdict per config in RUN, as cover-letter
# text; sets TESTED_ALL_GOOD=yes when every step built and booted GOOD.
test_matrix() {
	local tsv=$1/results.tsv configs
	TESTED_ALL_GOOD=yes
	configs=$(tsv_column "$tsv" config | awk '!seen[$0]++' | paste -sd' ')
	! tsv_column "$tsv" step status boot | awk -F '\t' '$1 > 0 && ($2 != "OK" || $3 != "GOOD") { bad = 1 } END { exit !bad }' ||
		TESTED_ALL_GOOD=no
	{
		printf 'How it was tested: make bisect-boot (kstack) built every step, booted '
		printf 'it in QEMU on a Debian 12 debootstrap guest and ran the guest tests '
		printf '(run %s). Per step and config: the boot verdict, ' "$(basename "$1")"
		printf 'guest tests passed/failed. The guest tests: %s.\n' \
			"$(find "$GUEST_DIR/tests" -maxdepth 1 -name '*.c' -printf '%f\n' 2>/dev/null | sed 's/\.c$//' | sort | paste -sd, | sed 's/,/, /g')"
	} | fmt -w 72
	printf '\n'
	tsv_column "$tsv" step subject config status boot tests_passed tests_failed | awk -F '\t' -v configs="$configs" '
		BEGIN { nc = split(configs, c, " ") }
		$1 == 0 { next }
		{ subj[$1] = $2; if ($4 != "OK") v = "build " $4; else v = $5 " " $6 "/" $7; cell[$1, $3] = v; if ($1 > last) last = $1 }
		END {
			printf "  %-4s %-44s", "", ""
			for (k = 1; k <= nc; k++) printf " %-14s", c[k]
			printf "\n"
			for (s = 1; s <= last; s++) {
				t = subj[s]; if (length(t) > 44) t = substr(t, 1, 41) "..."
				printf "  %-4s %-44s", s "/" last, t
				for (k = 1; k <= nc; k++) printf " %-14s", ((s, c[k]) in cell ? cell[s, c[k]] : "-")
				printf "\n"
			}
		}'
}

# bench_cover_figures TIP: the bench figures of make report
# (RESULTS/report/cover-figures.txt), after a blank line, when the bench it
# reports ran this tip's tree; nothing otherwise (figures of another tree
# would not be about this series).
bench_cover_figures() {
	local tree
	tree=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$1^{tree}")
	if [ ! -f "$RESULTS/report/cover-figures.txt" ] ||
		! grep -qsx "$tree" "$RESULTS/report/bench-trees"; then
		return 0
	fi
	printf '\n'
	cat "$RESULTS/report/cover-figures.txt"
}

# cover_text N BASE TIP PREV: the cover letter of version N (its first line
# the subject): commits/cover-letter.txt, the changelog (N > 1; from a
# "Changes in vN:" paragraph of cover-letter.txt), the test matrix and the
# series' figures, the base. Sets COVER_PROBLEMS (what SEND=1 refuses).
# PREV: the version it is compared with ("" for none).
cover_text() {
	local n=$1 base=$2 tip=$3 prev=$4 letter=$COMMITS/cover-letter.txt run
	COVER_PROBLEMS=()
	[ -s "$letter" ] || die "no cover letter at $letter" \
		"Write one: its first line is the subject, then a blank line and the text."
	# The text, without the changelog paragraphs of other versions.
	awk -v want="Changes in v$n:" '
		/^Changes in v[0-9]+:$/ { skip = ($0 != want) }
		skip && /^$/ { skip = 0; next }
		!skip' "$letter"
	if [ "$n" -gt 1 ] && ! grep -qx "Changes in v$n:" "$letter"; then
		printf '\nChanges in v%s:\n- (not written yet: add a "Changes in v%s:" paragraph to\n  commits/cover-letter.txt; the range-diff to v%s is below)\n' \
			"$n" "$n" "${prev:-?}"
		COVER_PROBLEMS+=("v$n has no changelog: add a 'Changes in v$n:' paragraph to $letter")
	fi
	printf '\n'
	run=$(tested_run "$(tree_ids "$base" "$tip")")
	if [ -z "$run" ]; then
		printf 'How it was tested: NOT YET: no make bisect-boot run has these exact\n'
		printf 'trees.\n'
		COVER_PROBLEMS+=("no make bisect-boot results for these trees (run: make bisect-boot)")
	else
		test_matrix "$run"
		[ "$TESTED_ALL_GOOD" = yes ] ||
			COVER_PROBLEMS+=("not every step was OK and GOOD in $run")
		printf '\n'
		series_cover_figures "$run/results.tsv"
	fi
	bench_cover_figures "$tip"
	printf '\nThe base is a distro kernel, not mainline: Debian %s %s,\n' \
		"$(base_field package)" "$(base_field version)"
	printf 'imported as one commit (base-commit below; kstack'"'"'s tools/import gives\n'
	printf 'the same commit id from the package). For merging, the series would be\n'
	printf 'rebased onto the x86 tree; it is sent for review (RFC) on this base.\n'
}

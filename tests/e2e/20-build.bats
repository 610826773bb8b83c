#!/usr/bin/env bats
# End to end: make bisect-build on the real source with the series in
# commits/, each arch's main config, in make test's own work folder, from
# FROM=KSTACK_E2E_FROM on (tools/test: the last two commits unless told).
# Then a rerun that finds every step cached, and a test series with a
# broken commit, which must be the failing step, named with its error line.

load ../helpers

setup_file() { setup_e2e_series; }


@test "bisect-build builds every step on every arch and writes the table as Markdown and TSV" {
	run "$TOOLS/bisect-build"
	echo "$output" >"$WORK/bisect-build.out"
	ran_ok
	tsv=$WORK/results/bisect-build/results.tsv
	[ -f "$tsv" ] && [ -f "$WORK/results/bisect-build/results.md" ]
	# one row per step and config, every one OK, with a bzImage and a size
	[ "$(tail -n +2 "$tsv" | wc -l)" -eq $(($(e2e_steps) * 2)) ]
	[ "$(tsv_cols "$tsv" status | sort -u)" = OK ]
	[ -z "$(tsv_cols "$tsv" bzimage_bytes text_bytes | awk -F '\t' '$1 < 1000000 || $2 < 1000000')" ]
	# progress lines and the table's header
	[[ "$output" == *"[1/$(($(e2e_steps) * 2))] i386"* ]]
	[[ "$output" == *"| step | commit"*"| i386-small "*"| x86_64-small "* ]]
	# checkpatch ran on every commit but the base
	[ -z "$(tsv_cols "$tsv" step checkpatch | awk -F '\t' '$1 != 0 && $2 !~ /^[0-9]+\/[0-9]+\/[0-9]+$/')" ]
}

@test "a rerun with nothing changed builds nothing: every step is cached" {
	run "$TOOLS/bisect-build"
	ran_ok
	tsv=$WORK/results/bisect-build/results.tsv
	[ "$(tsv_cols "$tsv" cached | sort -u)" = yes ]
	[[ "$output" == *"OK (cached)"* ]]
}

@test "a broken commit is the failing step, named with its error line and log; the next step builds" {
	sed -i '0,/^#include/s//int kstack_broken(void) { return }\n#include/' "$WORKTREE/kernel/fork.c"
	git -C "$WORKTREE" commit -q -a -m "kernel/fork: break the build on purpose"
	git -C "$WORKTREE" revert --no-edit HEAD >/dev/null
	# the broken commit and its revert (the tip's tree again: cached)
	FROM=HEAD~1 ARCHES=x86_64 run "$TOOLS/bisect-build"
	FORCE=1 "$TOOLS/worktree" 2>/dev/null
	[ "$status" -eq 1 ]
	tsv=$WORK/results/bisect-build/results.tsv
	broken=$(tsv_cols "$tsv" subject status first_error result_dir | awk -F '\t' '$1 == "kernel/fork: break the build on purpose"')
	[ "$(cut -f2 <<<"$broken")" = FAIL ]
	[[ "$(cut -f3 <<<"$broken")" == *"kernel/fork.c:"*"error:"* ]]
	[ "$(tsv_cols "$tsv" subject status | awk -F '\t' '$1 ~ /^Revert "kernel\/fork: break/ { print $2 }')" = OK ]
	[[ "$output" == *"Failures:"* ]]
	[[ "$output" == *"$(cut -f4 <<<"$broken")/build.log"* ]]
	[[ "$output" == *"1 of "*" steps failed"* ]]
}

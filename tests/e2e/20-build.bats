#!/usr/bin/env bats
# End to end: make bisect-build on the real source with the series in
# commits/, each arch's main config, in make test's own work folder. Then a
# rerun that finds every step cached, and a test series with a broken
# commit, which must be the failing step, named with its error line.

load ../helpers

setup_file() { setup_e2e_series; }

steps() { echo $(($(git -C "$WORKTREE" rev-list --count kstack-base..HEAD) + 1)); }

@test "bisect-build builds every step on every arch and writes the table as Markdown and TSV" {
	run "$TOOLS/bisect-build"
	echo "$output" >"$WORK/bisect-build.out"
	[ "$status" -eq 0 ]
	tsv=$WORK/results/bisect-build/results.tsv
	[ -f "$tsv" ] && [ -f "$WORK/results/bisect-build/results.md" ]
	# one row per step and config, every one OK, with a bzImage and a size
	[ "$(tail -n +2 "$tsv" | wc -l)" -eq $(($(steps) * 2)) ]
	[ "$(tail -n +2 "$tsv" | cut -f5 | sort -u)" = OK ]
	[ -z "$(tail -n +2 "$tsv" | awk -F '\t' '$10 < 1000000 || $11 < 1000000')" ]
	# progress lines and the table's header
	[[ "$output" == *"[1/$(($(steps) * 2))] i386"* ]]
	[[ "$output" == *"| step | commit"*"| i386-small "*"| x86_64-small "* ]]
	# checkpatch ran on every commit but the base
	[ -z "$(awk -F '\t' 'NR > 1 && $1 != 0 && $13 !~ /^[0-9]+\/[0-9]+\/[0-9]+$/' "$tsv")" ]
}

@test "a rerun with nothing changed builds nothing: every step is cached" {
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	tsv=$WORK/results/bisect-build/results.tsv
	[ "$(tail -n +2 "$tsv" | cut -f6 | sort -u)" = yes ]
	[[ "$output" == *"OK (cached)"* ]]
}

@test "a broken commit is the failing step, named with its error line and log; the next step builds" {
	sed -i '0,/^#include/s//int kstack_broken(void) { return }\n#include/' "$WORKTREE/kernel/fork.c"
	git -C "$WORKTREE" commit -q -a -m "kernel/fork: break the build on purpose"
	git -C "$WORKTREE" revert --no-edit HEAD >/dev/null
	ARCHES=x86_64 run "$TOOLS/bisect-build"
	FORCE=1 "$TOOLS/worktree" 2>/dev/null
	[ "$status" -eq 1 ]
	tsv=$WORK/results/bisect-build/results.tsv
	broken=$(awk -F '\t' '$3 == "kernel/fork: break the build on purpose"' "$tsv")
	[ "$(cut -f5 <<<"$broken")" = FAIL ]
	[[ "$(cut -f15 <<<"$broken")" == *"kernel/fork.c:"*"error:"* ]]
	[ "$(awk -F '\t' '$3 ~ /^Revert "kernel\/fork: break/ { print $5 }' "$tsv")" = OK ]
	[[ "$output" == *"Failures:"* ]]
	[[ "$output" == *"$(cut -f14 <<<"$broken")/build.log"* ]]
	[[ "$output" == *"1 of "*" steps failed"* ]]
}

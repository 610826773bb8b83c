#!/usr/bin/env bats
# End to end on the real linux-source-6.1: import (shared with the user's
# work folder, which this only reads or adds to), make worktree, am of the
# series in commits/, export, and the round trip through a second worktree.
# The worktrees are the test's own, under KSTACK_TEST_WORK, on branches of
# their own: a user's worktree is never touched.

load ../helpers

setup_file() { setup_e2e_work; }

@test "real base: import verifies the tarball and gives the commit in upstream-base.txt" {
	run "$TOOLS/import"
	[ "$status" -eq 0 ]
	[ "$(git --git-dir="$BASE_REPO" rev-parse kstack-base)" = "$(sed -n 's/^base_commit=//p' "$KSTACK_ROOT/upstream-base.txt")" ]
}

@test "real base: worktree and am apply the series" {
	FORCE=1 run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	run "$TOOLS/am"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq "$(count_patches)" ]
	run "$TOOLS/status"
	[[ "$output" == *"series:    same"* ]]
}

@test "real base: export of the unchanged series changes no file" {
	run "$TOOLS/export"
	[ "$status" -eq 0 ]
	diff -r <(cd "$KSTACK_ROOT/commits" && cat ./*.patch) <(cd "$COMMITS" && cat ./*.patch)
}

@test "real base: round trip through a second worktree gives the same tree at every step" {
	step_trees "$WORKTREE" >"$WORK/trees.before"
	WORKTREE=$WORK/roundtrip BRANCH=kstack-test-roundtrip FORCE=1 "$TOOLS/worktree"
	WORKTREE=$WORK/roundtrip "$TOOLS/am"
	step_trees "$WORK/roundtrip" >"$WORK/trees.after"
	[ -s "$WORK/trees.before" ]
	diff "$WORK/trees.before" "$WORK/trees.after"
}

#!/usr/bin/env bats
# import, worktree, am, export, status on a small fake kernel: the round trip
# and every bad input of workflow.md, each with the message checked.

load helpers
bats_require_minimum_version 1.5.0

setup_file() { setup_fake_kernel_file; }
setup() { setup_test_work; }

@test "import gives the same base commit id on every run, from nothing" {
	expected=$(sed -n 's/^base_commit=//p' "$BASE_FILE")
	[ "${#expected}" -eq 40 ]
	export BASE_REPO=$WORK/fresh.git
	run "$TOOLS/import"
	[ "$status" -eq 0 ]
	[ "$(git --git-dir="$BASE_REPO" rev-parse kstack-base)" = "$expected" ]
	# files hidden by the tree's .gitignore, CRLF files and symlinks are kept as is
	git --git-dir="$BASE_REPO" cat-file -e kstack-base:kernel/kept.o
	git --git-dir="$BASE_REPO" cat-file -p kstack-base:Documentation/crlf.txt | grep -q $'\r$'
	[ "$(git --git-dir="$BASE_REPO" ls-tree kstack-base Documentation/README.link | cut -c1-6)" = 120000 ]
	# packed: no loose objects for the first git am's gc --auto
	[ "$(git --git-dir="$BASE_REPO" count-objects -v | sed -n 's/^count: //p')" -eq 0 ]
}

@test "a new file in the worktree shows up in git status: Debian's '/*' ignore rule is dropped" {
	git --git-dir="$BASE_REPO" show kstack-base:.gitignore >"$WORK/gitignore"
	grep -qx '\*\.o' "$WORK/gitignore"
	run grep -x -e '/\*' -e '!/debian/' "$WORK/gitignore"
	[ "$status" -eq 1 ]
	git --git-dir="$BASE_REPO" log -1 --format=%B kstack-base | grep -q "Dropped from .gitignore"
	run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	printf 'new\n' >"$WORKTREE/kernel/new_file.c"
	[ "$(git -C "$WORKTREE" status --porcelain -- kernel/new_file.c)" = "?? kernel/new_file.c" ]
}

@test "importing again is a no-op" {
	run "$TOOLS/import"
	[ "$status" -eq 0 ]
	[[ "$output" == *"already imported"* ]]
}

@test "a tarball that does not match upstream-base.txt is refused, with both checksums" {
	export BASE_REPO=$WORK/fresh.git
	sed 's/^sha256=.*/sha256=0000000000000000000000000000000000000000000000000000000000000000/' \
		"$BASE_FILE" >"$WORK/base.txt"
	BASE_FILE=$WORK/base.txt run "$TOOLS/import"
	[ "$status" -eq 1 ]
	[[ "$output" == *"does not match"* ]]
	[[ "$output" == *"expected sha256 0000000000000000"* ]]
	[[ "$output" == *"found    sha256 $(sha256sum "$FIXTURE/linux-fake.tar.xz" | cut -c1-16)"* ]]
	[[ "$output" == *"tools/import --update-base"* ]]
	[ ! -e "$BASE_REPO" ]
}

@test "a different commit id than upstream-base.txt expects is refused and nothing is kept" {
	sed 's/^base_commit=.*/base_commit=1111111111111111111111111111111111111111/' \
		"$BASE_FILE" >"$WORK/base.txt"
	BASE_FILE=$WORK/base.txt BASE_REPO=$WORK/fresh.git run "$TOOLS/import"
	[ "$status" -eq 1 ]
	[[ "$output" == *"expects 1111111111111111111111111111111111111111"* ]]
	[ ! -e "$WORK/fresh.git" ]
	[ -z "$(ls -d "$WORK"/fresh.git.import-* 2>/dev/null)" ]
}

@test "an interrupted import leaves nothing a rerun trusts, and the rerun completes" {
	export BASE_REPO=$WORK/fresh.git
	stubs=$(stub_dir)
	# tar that dies half-way, as Ctrl-C would leave it
	printf '#!/bin/sh\n/bin/tar "$@" & sleep 0.05; kill -9 $!; kill -INT $PPID; exit 130\n' >"$stubs/tar"
	chmod +x "$stubs/tar"
	PATH=$stubs:$PATH run "$TOOLS/import"
	[ "$status" -ne 0 ]
	[ ! -e "$BASE_REPO" ]
	run "$TOOLS/import"
	[ "$status" -eq 0 ]
	[ "$(git --git-dir="$BASE_REPO" rev-parse kstack-base)" = "$(sed -n 's/^base_commit=//p' "$BASE_FILE")" ]
	[ -z "$(ls -d "$BASE_REPO".import-* 2>/dev/null)" ]
}

@test "worktree, am, export: an unchanged series exports byte for byte" {
	make_series
	[ "$(count_patches)" -eq 3 ]
	grep -q '^From 0000000000000000000000000000000000000000 ' "$COMMITS/0001-kernel-make-step-3-return-33.patch"
	run ! grep -q '^-- $' "$COMMITS"/*.patch # no version signature
	grep -q '^Subject: \[PATCH\] x86/mm: halve the task stack' "$COMMITS"/0002-*.patch
	cp -a "$COMMITS" "$WORK/before"
	touch -d '2000-01-01' "$COMMITS"/*.patch
	run "$TOOLS/export"
	[ "$status" -eq 0 ]
	diff -r "$WORK/before" "$COMMITS"
	# no file was even rewritten
	[ -z "$(find "$COMMITS" -name '*.patch' -newermt '2001-01-01')" ]
}

@test "round trip: export -> fresh worktree -> am gives the same tree at every step" {
	make_series
	step_trees "$WORKTREE" >"$WORK/trees.before"
	[ "$(wc -l <"$WORK/trees.before")" -eq 3 ]
	export WORKTREE=$WORK/second BRANCH=kstack-second
	run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	run "$TOOLS/am"
	[ "$status" -eq 0 ]
	step_trees "$WORKTREE" >"$WORK/trees.after"
	diff "$WORK/trees.before" "$WORK/trees.after"
	cp -a "$COMMITS" "$WORK/before"
	"$TOOLS/export"
	diff -r "$WORK/before" "$COMMITS"
}

@test "export removes the patch of a dropped commit and renames on a new subject" {
	make_series
	git -C "$WORKTREE" rebase -q --onto HEAD~2 HEAD~1 # drop the middle commit
	git -C "$WORKTREE" commit -q --amend -m "kernel: step 30 returns 300 now"
	run "$TOOLS/export"
	[ "$status" -eq 0 ]
	[ "$(cd "$COMMITS" && echo *)" = "0001-kernel-make-step-3-return-33.patch 0002-kernel-step-30-returns-300-now.patch" ]
}

@test "a gc that a tool's git starts runs before the tool exits: the next tool is not refused" {
	make_series
	"$TOOLS/worktree" 2>/dev/null
	# loose objects past gc.auto: git am's gc --auto packs them, and by
	# default does it in the background, holding the tool's lock fd
	git --git-dir="$BASE_REPO" config gc.auto 100
	seq 3000 | sed 's/^/loose object /' | split -l 1 - "$BATS_TEST_TMPDIR/blob."
	find "$BATS_TEST_TMPDIR" -name 'blob.*' | git --git-dir="$BASE_REPO" hash-object -w --stdin-paths |
		awk '{ printf "100644 blob %s\tf%d\n", $1, NR }' | git --git-dir="$BASE_REPO" mktree >"$BATS_TEST_TMPDIR/tree"
	# reachable, so that gc packs them rather than keeping them loose
	git --git-dir="$BASE_REPO" update-ref refs/test/loose \
		"$(git --git-dir="$BASE_REPO" commit-tree -m loose "$(cat "$BATS_TEST_TMPDIR/tree")")"
	"$TOOLS/am" 2>/dev/null
	loose=$(git --git-dir="$BASE_REPO" count-objects -v | sed -n 's/^count: //p')
	[ "$loose" -lt 100 ]
	run "$TOOLS/build"
	[[ "$output" != *"another kstack tool is writing"* ]]
}

@test "make am then status says same, and clean" {
	make_series
	"$TOOLS/worktree" 2>/dev/null
	run "$TOOLS/status"
	[[ "$output" == *"series:    behind"* ]]
	"$TOOLS/am"
	run "$TOOLS/status"
	[ "$status" -eq 0 ]
	[[ "$output" == *"base:      $(git --git-dir="$BASE_REPO" rev-parse kstack-base)"* ]]
	[[ "$output" == *"worktree:  $WORKTREE (branch kstack-test)"* ]]
	[[ "$output" == *"series:    same"* ]]
	[[ "$output" == *"state:     clean"* ]]
}

@test "status: ahead, behind, diverged, dirty" {
	make_series
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	run "$TOOLS/status"
	[[ "$output" == *"series:    ahead"* ]]
	git -C "$WORKTREE" reset -q --hard HEAD~1
	sed -i 's/make step 3 return 33/make step three return 33/' "$COMMITS"/0001-*.patch
	run "$TOOLS/status"
	[[ "$output" == *"series:    behind"* ]]
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	run "$TOOLS/status"
	[[ "$output" == *"series:    diverged"* ]]
	echo dirt >>"$WORKTREE/README"
	run "$TOOLS/status"
	[[ "$output" == *"state:     dirty (1 files changed)"* ]]
}

@test "a worktree checked out at a step of the series says so, and export refuses to cut commits/ there" {
	make_series
	before=$(lib series_manifest "$COMMITS")
	[ "$(grep -c "\.patch$" <<<"$before")" -eq 3 ]
	git -C "$WORKTREE" checkout -q HEAD~1
	run "$TOOLS/status"
	[ "$status" -eq 0 ]
	[[ "$output" == *"series:    the worktree is at step 2 of the 3 commits in commits/"*"checkout kstack-test goes back"* ]]
	run "$TOOLS/export"
	[ "$status" -ne 0 ]
	[[ "$output" == *"refusing to export: the worktree is at step 2 of the 3"*"would drop the last 1 patches from commits/"* ]]
	[ "$(lib series_manifest "$COMMITS")" = "$before" ]
	git -C "$WORKTREE" checkout -q kstack-test
	run "$TOOLS/status"
	[[ "$output" == *"series:    same"* ]]
	git -C "$WORKTREE" checkout -q HEAD~1
	FORCE=1 "$TOOLS/export" 2>/dev/null
	[ "$(count_patches)" -eq 2 ]
}

@test "am of a patch that does not apply names the patch, the file and the hunk; --abort resolves it" {
	make_series
	sed -i 's/^-int fork_step_30(void) { return 30; }/-int fork_step_30(void) { return 31; }/' "$COMMITS"/0003-*.patch
	"$TOOLS/worktree" 2>/dev/null
	run "$TOOLS/am"
	[ "$status" -eq 1 ]
	[[ "$output" == *"0003-kernel-make-step-30-return-300.patch does not apply (patch 3 of 3; 2 applied before it)"* ]]
	[[ "$output" == *"does not apply to kernel/fork.c, hunk at line 27"* ]]
	[[ "$output" == *"am --abort"* ]]
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq 2 ]
	git -C "$WORKTREE" am --abort
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$(git -C "$WORKTREE" rev-parse kstack-base)" ]
}

@test "am of a patch whose parent patch is gone stops on a conflict that --continue resolves" {
	make_series
	commit_change kernel/fork.c 's/return 33;/return 333;/' "kernel: make step 3 return 333"
	"$TOOLS/export" 2>/dev/null
	rm "$COMMITS"/0001-*.patch # 0004 now lacks the commit it was made on
	"$TOOLS/worktree" 2>/dev/null
	run "$TOOLS/am"
	[ "$status" -eq 1 ]
	[[ "$output" == *"0004-kernel-make-step-3-return-333.patch does not apply (patch 3 of 3"* ]]
	[[ "$output" == *"conflict in kernel/fork.c, hunk at line 3"* ]]
	git -C "$WORKTREE" show kstack-base:kernel/fork.c |
		sed 's/return 3;/return 333;/; s/return 30;/return 300;/' >"$WORKTREE/kernel/fork.c"
	git -C "$WORKTREE" add kernel/fork.c
	GIT_EDITOR=true git -C "$WORKTREE" am --continue
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq 3 ]
}

@test "am refuses a worktree that already holds other commits, and does nothing on the same series" {
	make_series
	run "$TOOLS/am"
	[ "$status" -eq 0 ]
	[[ "$output" == *"already holds the series"* ]]
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	run "$TOOLS/am"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not at the base: it holds 4 commits"* ]]
}

@test "export refuses a dirty worktree and lists what would not be exported" {
	make_series
	echo dirt >>"$WORKTREE/README"
	cp -a "$COMMITS" "$WORK/before"
	run "$TOOLS/export"
	[ "$status" -eq 1 ]
	[[ "$output" == *"has uncommitted changes"* ]]
	[[ "$output" == *" M README"* ]]
	diff -r "$WORK/before" "$COMMITS"
}

@test "export refuses when commits/ holds edits the worktree lacks, and shows them" {
	make_series
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	sed -i 's/Why: the test series/Why, edited by hand: the test series/' "$COMMITS"/0002-*.patch
	cp -a "$COMMITS" "$WORK/before"
	run "$TOOLS/export"
	[ "$status" -eq 1 ]
	[[ "$output" == *"holds edits that the worktree lacks"* ]]
	[[ "$output" == *"edited in commits/:    0002-x86-mm-halve-the-task-stack.patch"* ]]
	[[ "$output" == *"-Why, edited by hand: the test series"* ]]
	diff -r "$WORK/before" "$COMMITS"
	FORCE=1 run "$TOOLS/export"
	[ "$status" -eq 0 ]
	[ "$(count_patches)" -eq 4 ]
	run ! grep -q 'edited by hand' "$COMMITS"/*.patch
}

@test "export refuses when a patch was added to commits/ by hand" {
	make_series
	cp "$COMMITS/0003-kernel-make-step-30-return-300.patch" "$COMMITS/0004-extra.patch"
	run "$TOOLS/export"
	[ "$status" -eq 1 ]
	[[ "$output" == *"added to commits/:     0004-extra.patch"* ]]
	[ -e "$COMMITS/0004-extra.patch" ]
}

@test "recreating a worktree with unexported commits is refused and lists them; FORCE=1 does it" {
	make_series
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5 returns 55"
	echo dirt >>"$WORKTREE/README"
	run "$TOOLS/worktree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to recreate $WORKTREE"* ]]
	[[ "$output" == *"kernel: step 5 returns 55"* ]]
	[[ "$output" != *"kernel: make step 3 return 33"* ]] # that one is exported
	[[ "$output" == *" M README"* ]]
	[[ "$output" == *"FORCE=1"* ]]
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq 4 ]
	FORCE=1 run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$(git -C "$WORKTREE" rev-parse kstack-base)" ]
	[ -z "$(git -C "$WORKTREE" status --porcelain)" ]
}

@test "recreating a worktree: behind commits/ loses nothing and goes; diverged is refused and says so" {
	make_series
	# commits/ changed since the worktree took it (here: a patch dropped).
	rm "$COMMITS/0003-kernel-make-step-30-return-300.patch"
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5 returns 55"
	run "$TOOLS/worktree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the worktree and commits/ diverged"* ]]
	[[ "$output" == *"kernel: step 5 returns 55"* ]]
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq 4 ]
	git -C "$WORKTREE" reset -q --hard HEAD~1
	run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$(git -C "$WORKTREE" rev-parse kstack-base)" ]
}

@test "recreating a worktree whose commits are all exported resets it to the base" {
	make_series
	run "$TOOLS/worktree"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$(git -C "$WORKTREE" rev-parse kstack-base)" ]
}

@test "a second worktree on a branch already checked out elsewhere is refused" {
	"$TOOLS/worktree" 2>/dev/null
	WORKTREE=$WORK/other run "$TOOLS/worktree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"branch kstack-test is checked out in another worktree: $WORKTREE"* ]]
	[[ "$output" == *"BRANCH="* ]]
}

@test "a WORKTREE path that holds something else is left alone" {
	mkdir -p "$WORK/stuff" && echo precious >"$WORK/stuff/file"
	WORKTREE=$WORK/stuff run "$TOOLS/worktree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WORK/stuff exists and is not a kstack worktree"* ]]
	[ "$(cat "$WORK/stuff/file")" = precious ]
}

@test "tools without a worktree or base say what to run" {
	run "$TOOLS/am"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no worktree at $WORKTREE"* ]]
	[[ "$output" == *"make worktree"* ]]
	BASE_REPO=$WORK/none.git run "$TOOLS/export"
	[[ "$output" == *"not imported"* ]]
}

@test "every tool has a usage line and refuses unknown arguments" {
	for tool in deps import worktree am export status build; do
		[ -x "$TOOLS/$tool" ] || continue
		run "$TOOLS/$tool" --help
		[ "$status" -eq 0 ]
		[[ "$output" == "usage: tools/$tool"* ]]
		run "$TOOLS/$tool" --bogus
		[ "$status" -ne 0 ]
		[[ "$output" == *"usage: tools/$tool"* ]]
	done
}

@test "ran_ok (the e2e tests' exit check) passes on 0, and on a failure shows the output's tail and the verdicts it names" {
	status=0 output=anything
	ran_ok >"$BATS_TEST_TMPDIR/ok.out"
	[ ! -s "$BATS_TEST_TMPDIR/ok.out" ]
	printf 'verdict=BAD\nmetric boot_seconds=3\nkernel trouble:\n  Kernel panic - not syncing: x\n' >"$BATS_TEST_TMPDIR/verdict.txt"
	status=1 output=$(printf 'step 9 i386-small: boot BAD\n  verdict: %s\n  verdict: /nonexistent/verdict.txt\nerror: 1 of 20 steps failed\n' "$BATS_TEST_TMPDIR/verdict.txt")
	if ran_ok >"$BATS_TEST_TMPDIR/bad.out"; then false; fi
	grep -qx 'exit status 1; the last lines of its output:' "$BATS_TEST_TMPDIR/bad.out"
	grep -qx 'error: 1 of 20 steps failed' "$BATS_TEST_TMPDIR/bad.out"
	grep -qx "== $BATS_TEST_TMPDIR/verdict.txt (without its metrics):" "$BATS_TEST_TMPDIR/bad.out"
	grep -qx '  Kernel panic - not syncing: x' "$BATS_TEST_TMPDIR/bad.out"
	! grep -q 'metric boot_seconds' "$BATS_TEST_TMPDIR/bad.out" || false
	! grep -q '^== /nonexistent' "$BATS_TEST_TMPDIR/bad.out" || false
}

#!/usr/bin/env bats
# tools/bisect-build on the fake kernel, whose "kbuild" compiles one C file
# with the real compiler: per-step results, caching by tree, failing steps,
# new warnings, checkpatch counts, and an interrupted run.

load helpers
bats_require_minimum_version 1.5.0

setup_file() { setup_fake_kernel_file; }

setup() {
	setup_test_work
	export CCACHE_DISABLE=1 ARCHES=x86_64 CONFIGS=x86_64
	"$TOOLS/worktree" 2>/dev/null
	commit_change kernel/fork.c 's/return 3;/return 33;/' "kernel: make step 3 return 33"
	commit_change kernel/fork.c 's/return 4;/return 44;/' "kernel: make step 4 return 44"
}

# col NAME: a column of the last run's results, one row a line; field STEP
# NAME: the one of step STEP.
col() { tsv_cols "$WORK/results/bisect-build/results.tsv" "$1"; }
field() { tsv_cols "$WORK/results/bisect-build/results.tsv" step "$2" | awk -F '\t' -v s="$1" '$1 == s { print $2 }'; }

@test "every step builds, base first, with a row per step and the table" {
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col step | wc -l)" -eq 3 ]
	[ "$(col status | sort -u)" = OK ]
	[ "$(field 0 subject)" = "base: Import kstack-fake-kernel unknown" ]
	[ "$(field 2 subject)" = "kernel: make step 4 return 44" ]
	[[ "$output" == *"[1/3] x86_64 "*"base: Import"* ]]
	[[ "$output" == *"[3/3] x86_64 "*"kernel: make step 4 return 44"* ]]
	grep -q '^| step | commit' "$WORK/results/bisect-build/results.md"
	# the user's worktree was not touched: still on its branch, clean
	[ "$(git -C "$WORKTREE" symbolic-ref --short HEAD)" = kstack-test ]
	[ -z "$(git -C "$WORKTREE" status --porcelain)" ]
}

@test "FROM= runs the steps from that commit on, numbered as in a full run; the deltas come from the cache or say '-'" {
	FROM=HEAD~1 run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col step | tr '\n' ' ')" = "1 2 " ]
	[ "$(field 1 subject)" = "kernel: make step 3 return 33" ]
	[[ "$output" == *"FROM=HEAD~1: steps 1 to 2 of 0 to 2"* ]]
	[[ "$output" == *"[1/2] x86_64 "*"make step 3 return 33"* ]]
	# nothing of the base was built: no delta, no new-warnings count for step 1
	[ "$(field 1 new_warnings)" = - ]
	[ "$(field 1 text_delta)" = - ]
	[ "$(field 2 new_warnings)" = 0 ]
	"$TOOLS/bisect-build" 2>/dev/null
	FROM=HEAD run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col step)" = 2 ]
	[ "$(field 2 new_warnings)" = 0 ] # against step 1's cached build
	[ "$(field 2 text_delta)" = 0 ]
	FROM=kstack-base run "$TOOLS/bisect-build"
	[ "$(col step | wc -l)" -eq 3 ]
}

@test "FROM= that is not a step of the run is an error that lists the steps" {
	FROM=no-such-ref run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[[ "$output" == *"FROM=no-such-ref is not a commit"* ]]
	[[ "$output" == *"make step 3 return 33"* ]]
	TIP=HEAD~1 FROM=HEAD run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not a step of this run"* ]]
	[ ! -e "$WORK/results/bisect-build/results.tsv" ]
}

@test "a rerun builds nothing; a changed tip rebuilds only the tip; FORCE=1 rebuilds all" {
	"$TOOLS/bisect-build" 2>/dev/null
	run "$TOOLS/bisect-build"
	[ "$(col cached | sort -u)" = yes ]
	git -C "$WORKTREE" commit -q --amend -a -m "kernel: make step 4 return 44, reworded"
	run "$TOOLS/bisect-build"
	[ "$(col cached | tr '\n' ' ')" = "yes yes yes " ] # same tree: still cached
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	git -C "$WORKTREE" reset -q --soft HEAD~2 && git -C "$WORKTREE" commit -q -m "kernel: steps 4 and 5"
	run "$TOOLS/bisect-build"
	[ "$(col cached | tr '\n' ' ')" = "yes yes no " ]
	FORCE=1 run "$TOOLS/bisect-build"
	[ "$(col cached | sort -u)" = no ]
}

@test "a step that does not compile is FAIL with its error line and log; later steps still build" {
	commit_change kernel/fork.c 's/return 7;/return 7 +;/' "kernel: break step 7"
	commit_change kernel/fork.c 's/return 7 +;/return 7;/' "kernel: fix step 7"
	run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[ "$(field 3 status)" = FAIL ]
	[[ "$(field 3 first_error)" == *"kernel/fork.c:7:"*"error: expected expression before"* ]]
	[ "$(field 4 status)" = OK ]
	[[ "$output" == *"step 3 x86_64 "*": build FAIL: "*"kernel/fork.c:7"* ]]
	[[ "$output" == *"log: $(field 3 result_dir)/build.log"* ]]
	[[ "$output" == *"1 of 5 steps failed"* ]]
}

@test "a new warning is counted on the step that adds it, not on the steps after" {
	commit_change kernel/fork.c 's/int fork_step_9(void) { return 9; }/int fork_step_9(void) { int unused; return 9; }/' \
		"kernel: an unused variable"
	commit_change kernel/fork.c '1i /* moved down one line */' "kernel: move the code"
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(field 3 new_warnings)" = 1 ]
	[ "$(field 4 new_warnings)" = 0 ] # the same warning on another line is not new
	[ "$(field 4 warnings)" = 1 ]
}

@test "warnings do not depend on the user's locale: gcc's quotes are plain" {
	commit_change kernel/fork.c 's/int fork_step_9(void) { return 9; }/int fork_step_9(void) { int unused; return 9; }/' \
		"kernel: an unused variable"
	LANG=C.UTF-8 LC_ALL=C.UTF-8 run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	grep -q "unused variable 'unused'" "$(field 3 result_dir)/warnings.txt"
}

@test "checkpatch counts are per commit, none for the base" {
	commit_change kernel/fork.c 's/return 8;/return 8; \/* FIXME *\//' "kernel: leave a FIXME"
	run "$TOOLS/bisect-build"
	[ "$(field 0 checkpatch)" = - ]
	[ "$(field 1 checkpatch)" = 0/0/0 ]
	[ "$(field 3 checkpatch)" = 0/0/1 ]
}

# interruptible COMMAND...: run COMMAND in a process group of its own with
# SIGINT at its default (a background job of a script starts with it ignored),
# as Ctrl-C in a terminal would find it.
interruptible() { exec setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$@"; }

@test "an interrupted run leaves nothing trusted: the next run builds the interrupted step" {
	FAKE_BUILD_SLEEP=30 interruptible "$TOOLS/bisect-build" >"$WORK/first.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		compgen -G "$WORK/results/build/*.tmp.*" >/dev/null && break
		sleep 0.1
	done
	kill -INT -- "-$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 130 ]
	[[ "$(cat "$WORK/first.log")" == *"interrupted"* ]]
	[ -z "$(compgen -G "$WORK/results/build/*/result")" ] # nothing finished, nothing trusted
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col cached | sort -u)" = no ]
	[ -z "$(compgen -G "$WORK/results/build/*.tmp.*")" ]
}

# killed_run SIGNAL VAR SECONDS: bisect-build with VAR=SECONDS (the fake
# kbuild sleeps that long), its sleep killed with SIGNAL; then the run must
# be an error that recorded nothing, and a rerun builds every step.
killed_run() {
	env "$2=$3" "$TOOLS/bisect-build" >"$WORK/first.log" 2>&1 &
	local pid=$! rc=0
	for _ in $(seq 1 200); do
		pkill "-$1" -f "^sleep $3\$" && break
		sleep 0.1
	done
	wait "$pid" || rc=$?
	[ "$rc" -ne 0 ]
	[[ "$(cat "$WORK/first.log")" == *"Nothing was recorded; run again."* ]]
	[[ "$(cat "$WORK/first.log")" != *"build FAIL"* ]]
	[ -z "$(compgen -G "$WORK/results/build/*/result")" ]
	[ -z "$(compgen -G "$WORK/results/build/*.tmp.*")" ]
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col status | sort -u)" = OK ]
}

@test "a build whose job was killed (the OOM killer, a kill from outside) is an error, not FAIL, and not recorded" {
	killed_run KILL FAKE_BUILD_SLEEP 31.5
	[[ "$(cat "$WORK/first.log")" == *"was stopped by a signal (make exited 2), not by an error in the kernel"* ]]
}

@test "a config step stopped by a signal is an error, not FAIL, and not recorded" {
	killed_run TERM FAKE_CONFIG_SLEEP 32.5
	[[ "$(cat "$WORK/first.log")" == *"was stopped by a signal"*"not by an error in the kernel's config"* ]]
}

@test "a cached FAIL that an older kstack recorded for an interrupted config step is built again" {
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	local r
	r=$(compgen -G "$WORK/results/build/*/result" | head -n 1)
	sed -i -e 's/^status=.*/status=FAIL/' \
		-e 's/^first_error=.*/first_error=config: check-config: interrupted: nothing half-done is kept; run again to go on/' "$r"
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[[ "$output" == *"is an interrupted run's, not the kernel's: building again"* ]]
	[ "$(col status | sort -u)" = OK ]
	[ "$(col cached | sort | uniq -c | awk '$2 == "no" { print $1 }')" = 1 ]
}

@test "a second run while one is going is refused" {
	FAKE_BUILD_SLEEP=30 interruptible "$TOOLS/bisect-build" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		compgen -G "$WORK/results/build/*.tmp.*" >/dev/null && break
		sleep 0.1
	done
	run "$TOOLS/bisect-build"
	kill -INT -- "-$pid"
	wait "$pid" || true
	[ "$status" -eq 1 ]
	[[ "$output" == *"another kstack tool is writing $WORK"* ]]
}

@test "each step has one record, read by name; KEEP= bounds the runs; clean-results drops what no run names" {
	KEEP=1 "$TOOLS/bisect-build" 2>/dev/null
	recs=("$WORK"/results/bisect-build/steps/*.rec)
	[ "${#recs[@]}" -eq 3 ]
	grep -qx 'status=OK' "${recs[2]}" && grep -qx 'subject=kernel: make step 4 return 44' "${recs[2]}"
	commit_change kernel/fork.c 's/return 5;/return 55;/' "kernel: step 5"
	git -C "$WORKTREE" reset -q --soft HEAD~2 && git -C "$WORKTREE" commit -q -m "kernel: steps 4 and 5"
	KEEP=1 "$TOOLS/bisect-build" 2>/dev/null
	[ "$(find "$WORK/results/runs" -mindepth 1 -maxdepth 1 -name 'bisect-build-*' | wc -l)" -eq 1 ]
	[ "$(find "$WORK/results/build" -mindepth 1 -maxdepth 1 | wc -l)" -eq 4 ]
	KEEP=1 run "$TOOLS/clean-results"
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed 2 cached results that no kept run names"* ]] # the old tip's build and modules
	[ "$(find "$WORK/results/build" -mindepth 1 -maxdepth 1 | wc -l)" -eq 3 ]
	run "$TOOLS/bisect-build"
	[ "$(col cached | sort -u)" = yes ]
	KEEP=x run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[[ "$output" == *"KEEP=x is not a number of runs to keep"* ]]
}

@test "both arches: a column per config in the table" {
	ARCHES="x86_64 i386" CONFIGS="x86_64 i386" run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(col step | wc -l)" -eq 6 ]
	[[ "$(sed -n 3p "$WORK/results/bisect-build/results.md")" == *"| x86_64 | i386 |"* ]]
}

@test "make build: a clean worktree is its HEAD step (cached), edits are built in place" {
	"$TOOLS/bisect-build" 2>/dev/null
	run "$TOOLS/build"
	[ "$status" -eq 0 ]
	[[ "$output" == *"x86_64     OK (cached)"* ]]
	sed -i 's/return 6;/return 66;/' "$WORKTREE/kernel/fork.c"
	run "$TOOLS/build"
	[ "$status" -eq 0 ]
	[[ "$output" == *"building the worktree with its uncommitted edits"* ]]
	[[ "$output" == *"kernel: $WORK/results/tip/x86_64/bzImage"* ]]
}

@test "make boot: a worktree that does not build exits 125, as git bisect run wants" {
	sed -i 's/return 6;/return 6 +;/' "$WORKTREE/kernel/fork.c"
	run "$TOOLS/boot"
	[ "$status" -eq 125 ]
	[[ "$output" == *"== x86_64: did not build: "*"kernel/fork.c:6:"*"error:"* ]]
	[[ "$output" == *"log: $WORK/results/tip/x86_64/build.log"* ]]
}

@test "the test modules are built against each step, kept apart from its kernel" {
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(find "$WORK/results/modules" -name kstack_irqstack.ko | wc -l)" -eq 3 ]
	for dir in $(col result_dir); do
		[ -f "$dir/module-kit.tar.gz" ] && [ ! -e "$dir/modules" ]
	done
}

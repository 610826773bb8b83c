#!/usr/bin/env bats
# The guest benchmark (guest-image/bench/bench.c), built with the guest
# tests' flags and run on the host with --quick: every figure it promises
# is printed as a number with its unit, and a figure it cannot measure is
# an error line and a non-zero exit, never a number.

load helpers
bats_require_minimum_version 1.5.0

BENCH_SRC=$BATS_TEST_DIRNAME/../guest-image/bench/bench.c

setup() {
	BIN=$BATS_TEST_TMPDIR/bench
	gcc -static -O2 -Wall -Werror -pthread -I"$BATS_TEST_DIRNAME/../guest-image/include" -o "$BIN" "$BENCH_SRC"
}

@test "bench --quick: each figure once, a positive number with its unit, between begin and end" {
	run timeout 120 "$BIN" --quick
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^kstack-bench:\ begin\ uptime=[0-9]+\.[0-9]+$ ]]
	[ "${lines[-1]}" = "kstack-bench: end errors=0" ]
	local name unit out=$output
	for name in kernel_stack_bytes_per_thread_50:bytes kernel_stack_bytes_per_thread_100:bytes \
		pthread_create_join_us:us fork_exit_wait_us:us getppid_ns:ns read_dev_zero_ns:ns \
		pipe_pingpong_us:us file_cycle_us:us threads_fit_4mib:threads; do
		unit=${name#*:}
		name=${name%%:*}
		[ "$(grep -c "^kstack-bench: metric $name " <<<"$out")" -eq 1 ]
		grep -Eq "^kstack-bench: metric $name [0-9]+\.[0-9]{3} $unit\$" <<<"$out"
		run ! grep -Eq "^kstack-bench: metric $name 0\.000 " <<<"$out"
	done
	run ! grep -q "kstack-bench: error" <<<"$out"
}

@test "bench: a figure it cannot measure is an error line and exit 1, not a number" {
	# no folder to cycle files in: file_cycle_us cannot be measured
	KSTACK_BENCH_DIR=$BATS_TEST_TMPDIR/none run "$BIN" --quick
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "kstack-bench: end errors=1" ]
	local out=$output
	grep -q "^kstack-bench: error file_cycle_us create, write, close or unlink of $BATS_TEST_TMPDIR/none/kstack-bench.0: No such file or directory" <<<"$out"
	run ! grep -q '^kstack-bench: metric file_cycle_us' <<<"$out"
}

@test "bench: a bad argument is refused with its usage" {
	run "$BIN" --slow
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: bench [--quick | --soak SECONDS]"* ]]
	run "$BIN" --soak 10m
	[ "$status" -eq 2 ]
	[[ "$output" == *"--soak needs a number of seconds, not '10m'"* ]]
}

@test "bench --soak: the workload for that long, samples from the start to the end, then its figures" {
	KSTACK_BENCH_DIR=$BATS_TEST_TMPDIR run "$BIN" --soak 2
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^kstack-bench:\ begin ]]
	[ "${lines[-1]}" = "kstack-bench: end errors=0" ]
	local out=$output
	grep -Eq '^kstack-bench: metric soak_seconds (2|3)\.[0-9]{3} s$' <<<"$out"
	grep -Eq '^kstack-bench: metric soak_rounds [1-9][0-9]*\.000 rounds$' <<<"$out"
	# the figures' own lines are quiet during a soak
	run ! grep -q '^kstack-bench: metric getppid_ns' <<<"$out"
	# on a host there is no stack check: no samples of it, and no made-up numbers
	run ! grep -q -- ' -1' <<<"$out"
	# the depth suite (its 8th kind of round) mounts, swaps and fills
	# memory: never on a host, so it neither ran nor failed here
	local rounds
	rounds=$(sed -n 's/^kstack-bench: metric soak_rounds \([0-9]*\)\..*/\1/p' <<<"$out")
	[ "$rounds" -ge 8 ]
	run ! grep -q 'depth_suite' <<<"$out"
	[ ! -e "$BATS_TEST_TMPDIR/kstack-depth-loop.img" ]
}

@test "make bench: a SOAK=, ROUNDS= or QUICK= that means nothing is refused before anything runs" {
	export WORK=$BATS_TEST_TMPDIR/work
	for soak in 10x m 1m5 0 -5; do
		SOAK=$soak run "$TOOLS/bench"
		[ "$status" -ne 0 ]
		[[ "$output" == *"SOAK=$soak is not a duration: give seconds, or a number with s, m or h (SOAK=30m)"* ]]
	done
	ROUNDS=0 run "$TOOLS/bench"
	[ "$status" -ne 0 ]
	[[ "$output" == *"ROUNDS=0 is not a number of rounds"* ]]
	QUICK=yes run "$TOOLS/bench"
	[ "$status" -ne 0 ]
	[[ "$output" == *"QUICK=yes: give QUICK=1"* ]]
	[ ! -e "$WORK/results" ]
}

@test "make bench: CONFIGS= is refused, not ignored: it benches each arch's stock and main config" {
	export WORK=$BATS_TEST_TMPDIR/work
	CONFIGS=x86_64-distro run "$TOOLS/bench"
	[ "$status" -ne 0 ]
	[[ "$output" == *"make bench takes no CONFIGS=x86_64-distro"*"ARCHES= selects the arches"* ]]
	[ ! -e "$WORK/results" ]
}

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
	[[ "$output" == *"usage: bench [--quick]"* ]]
}

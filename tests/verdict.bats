#!/usr/bin/env bats
# The console parser (tools/verdict) on fixture logs, and its exit codes as
# git bisect run reads them: 0 good, 1 bad.

load helpers

FIX=$BATS_TEST_DIRNAME/fixtures/console

@test "a clean boot is GOOD, with userspace, the tests and the metrics" {
	run "$TOOLS/verdict" "$FIX/clean-x86_64.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict=GOOD"* ]]
	[[ "$output" == *"userspace=yes"* ]]
	[[ "$output" == *"uptime_at_userspace=2.32"* ]]
	[[ "$output" == *"tests_passed=5"* ]]
	[[ "$output" == *"tests_failed=0"* ]]
	[[ "$output" == *"metric kernel_stack_bytes_per_thread=16404"* ]]
	[[ "$output" == *"finished=yes"* ]]
	[[ "$output" == *"least_stack_bytes_left=13488"* ]]
}

@test "an i386 boot reads the same way" {
	run "$TOOLS/verdict" "$FIX/clean-i386.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"metric kernel_stack_bytes_per_thread=8192"* ]]
	[[ "$output" == *"least_stack_bytes_left=5888"* ]]
}

@test "what the console says after power-off does not count" {
	{ cat "$FIX/clean-x86_64.log"; echo 'Kernel panic - not syncing: Attempted to kill init!'; } >"$BATS_TEST_TMPDIR/late.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/late.log"
	[ "$status" -eq 0 ]
}

@test "a panic before userspace is BAD, with the message and the call trace" {
	run "$TOOLS/verdict" "$FIX/panic-no-root.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"verdict=BAD"* ]]
	[[ "$output" == *"userspace=no"* ]]
	[[ "$output" == *"Kernel panic - not syncing: VFS: Unable to mount root fs"* ]]
	[[ "$output" == *"mount_block_root+0x1d4/0x1e0"* ]]
}

@test "an oops in a test is BAD, reported from its first line, and the killed test fails" {
	run "$TOOLS/verdict" "$FIX/oops-in-test.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"kernel trouble:
  BUG: kernel NULL pointer dereference, address: 0000000000000008"* ]]
	[[ "$output" == *"Oops: 0000 [#1] SMP NOPTI"* ]]
	[[ "$output" == *"failed test: kernel_stack exited 137"* ]]
	[[ "$output" == *"finished=yes"* ]]
}

@test "a hang is TIMEOUT with the last 20 console lines, and the test that never ended" {
	run "$TOOLS/verdict" "$FIX/hang-in-test.log" --timed-out
	[ "$status" -eq 1 ]
	[[ "$output" == *"verdict=TIMEOUT"* ]]
	[[ "$output" == *"failed test: kernel_stack did not finish"* ]]
	[[ "$output" == *"last console lines:"* ]]
	[ "$(sed -n '/^last console lines:/,$p' <<<"$output" | tail -n +2 | wc -l)" -eq 20 ]
	[[ "$output" == *"    # Starting 1 tests from 1 test cases."* ]]
	[[ "$output" == *"failed test: 1 test binaries never started"* ]]
}

@test "a log that stops without the end marker is BAD even without a timeout" {
	run "$TOOLS/verdict" "$FIX/hang-in-test.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"verdict=BAD"* ]]
	[[ "$output" == *"finished=no"* ]]
}

@test "TAP failures make it BAD and are named" {
	run "$TOOLS/verdict" "$FIX/tap-failure.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tests_failed=1"* ]]
	[[ "$output" == *"failed test: kernel_stack: global.kernel_stack_bytes_per_thread"* ]]
	[[ "$output" == *"kernel_trouble=0"* ]]
}

@test "a stack guard page hit is BAD, reported with its first lines" {
	run "$TOOLS/verdict" "$FIX/stack-guard-page.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"BUG: TASK stack guard page was hit at ffffc90000383ff8"* ]]
	[[ "$output" == *"recursive_loop+0x3b/0x60"* ]]
}

@test "a missing log is an error, not a verdict" {
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/none.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no console log at"* ]]
	[[ "$output" != *"verdict="* ]]
}

@test "the series' boot line about stack sizes becomes metrics" {
	sed 's/^Run \/sbin\/kstack-init as init process$/x86: 8 KiB task stacks, 16 KiB IRQ stacks\n&/' \
		"$FIX/clean-x86_64.log" >"$BATS_TEST_TMPDIR/sizes.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/sizes.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"metric task_stack_kib=8"* ]]
	[[ "$output" == *"metric irq_stack_kib=16"* ]]
}

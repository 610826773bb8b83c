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

@test "a check's line printed into the middle of a guest's metric line is read as two lines" {
	sed 's|^# kstack: kernel_stack_bytes_per_thread=16404$|&stack-check: warning: task stack 928 of 4096 bytes used (22%, warning at 21%) entering f+0x0/0x10 from g+0x4/0x10|' \
		"$FIX/clean-x86_64.log" >"$BATS_TEST_TMPDIR/mixed.log"
	grep -q '=16404stack-check: warning' "$BATS_TEST_TMPDIR/mixed.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/mixed.log"
	[[ "$output" == *$'metric kernel_stack_bytes_per_thread=16404\n'* ]]
	[[ "$output" == *"stack_check_warnings=1"* ]]
	[[ "$output" == *"task stack 928 of 4096 bytes used (22%, warning at 21%) entering f+0x0/0x10"* ]]
}

@test "a clean console that timed out (QEMU hung after the guest finished) is TIMEOUT, with the last lines" {
	run "$TOOLS/verdict" "$FIX/clean-x86_64.log" --timed-out
	[ "$status" -eq 1 ]
	[[ "$output" == *"verdict=TIMEOUT"* ]]
	[[ "$output" == *"last console lines:"*"kstack-init: done"* ]]
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

@test "the console reader is built from tools/src/verdict.c once; one that does not build is an error (2)" {
	export WORK=$BATS_TEST_TMPDIR/work
	run "$TOOLS/verdict" "$FIX/clean-x86_64.log"
	[ "$status" -eq 0 ]
	[ "$(find "$WORK/bin" -name 'verdict-*' | wc -l)" -eq 1 ]
	run "$TOOLS/verdict" "$FIX/panic-no-root.log"
	[ "$status" -eq 1 ]
	[ "$(find "$WORK/bin" -name 'verdict-*' | wc -l)" -eq 1 ]
	root=$BATS_TEST_TMPDIR/root
	mkdir -p "$root" && cp -a "$KSTACK_ROOT/tools" "$root/"
	echo 'int broken(void) { return }' >>"$root/tools/src/verdict.c"
	run "$root/tools/verdict" "$FIX/clean-x86_64.log"
	[ "$status" -eq 2 ]
	[[ "$output" == *"tools/src/verdict.c does not build with gcc"* ]]
	[[ "$output" != *"verdict="* ]]
}

@test "a missing log is an error, not a verdict" {
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/none.log"
	[ "$status" -eq 2 ] # 1 is BAD
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

@test "stack-check warnings are listed with their chains, and are not trouble" {
	awk '/^kstack-init: done/ {
		print "stack-check: warning: task stack 4120 of 8192 bytes used (50%, warning at 50%) entering kstack_deep_recurse+0x0/0x4b [kstack_deep] from kstack_deep_recurse+0x38/0x4b [kstack_deep]"
		print "stack-check: CPU: 0 PID: 254 Comm: stack_check; call chain:"
		print "stack-check:  kstack_deep_recurse+0x5/0x4b [kstack_deep]"
		print "stack-check:  kstack_deep_write+0xc5/0x14e [kstack_deep]"
		print "stack-check:  vfs_write+0xa3/0x186"
	} { print }' "$FIX/clean-x86_64.log" >"$BATS_TEST_TMPDIR/warned.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/warned.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict=GOOD"* ]]
	[[ "$output" == *"kernel_trouble=0"* ]]
	[[ "$output" == *"stack_check_warnings=1"* ]]
	[[ "$output" == *"  task stack 4120 of 8192 bytes used (50%, warning at 50%) entering kstack_deep_recurse+0x0/0x4b"* ]]
	[[ "$output" == *$'\n      kstack_deep_write+0xc5/0x14e [kstack_deep]\n      vfs_write+0xa3/0x186'* ]]
}

@test "the memory-pressure workload's chain and figures are listed apart from the first workload's" {
	awk '/^kstack-init: done/ {
		print "# kstack: stack_max_size=2208"
		print "# stack_trace:         Depth    Size   Location    (40 entries)"
		print "# stack_trace:   0)     2208      32   ext4_map_blocks+0x5/0x4f0"
		print "# kstack: stack_max_size_pressure=2304"
		print "# kstack: pressure_swapped_kb=71472"
		print "# stack_trace_pressure:         Depth    Size   Location    (44 entries)"
		print "# stack_trace_pressure:   0)     2336       8   check_new_pages+0x5/0x8f"
		print "# stack_trace_pressure:   1)     2328      60   get_page_from_freelist+0x2e1/0x9ba"
	} { print }' "$FIX/clean-i386.log" >"$BATS_TEST_TMPDIR/pressure.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/pressure.log"
	[ "$status" -eq 0 ]
	[[ "$output" == *"metric stack_max_size_pressure=2304"* ]]
	[[ "$output" == *"metric pressure_swapped_kb=71472"* ]]
	[[ "$output" == *$'deepest stack chain (ftrace stack tracer):\n'*'ext4_map_blocks+0x5/0x4f0'*$'\ndeepest stack chain under memory pressure (ftrace stack tracer):\n'*'  0)     2336       8   check_new_pages+0x5/0x8f'$'\n'*'get_page_from_freelist+0x2e1/0x9ba'* ]]
}

@test "a stack-check overflow in an ordinary boot is trouble" {
	sed '/^kstack-init: done/i stack-check: overflow: task stack 7056 of 8192 bytes used, less than 2048 left, entering recursive_loop+0x0/0x6d from recursive_loop+0x50/0x6d' \
		"$FIX/clean-x86_64.log" >"$BATS_TEST_TMPDIR/overflow.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/overflow.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"kernel_trouble=1"* ]]
	[[ "$output" == *"stack-check: overflow: task stack 7056 of 8192"* ]]
}

@test "an overflow boot is GOOD when the check warned, reported and panicked (x86_64, i386)" {
	for arch in x86_64 i386; do
		run "$TOOLS/verdict" "$FIX/overflow-caught-$arch.log" --expect-overflow
		[ "$status" -eq 0 ]
		[[ "$output" == *"verdict=GOOD"* ]]
		[[ "$output" == *"overflow_caught=yes"* ]]
		[[ "$output" == *"stack-check overflow report:"*"entering recursive_loop+0x0/"*"Kernel panic - not syncing: stack-check: task stack overflow"* ]]
		[[ "$output" == *$'\n      recursive_loop+0x0/'* ]]
		[[ "$output" == *"overflow_panic_trace=unwound"* ]]
	done
}

@test "an overflow boot whose panic trace does not unwind from the check stack to the chain is BAD (x86_64, i386)" {
	for arch in x86_64 i386; do
		# as before the unwinder knew the check stack: "Call Trace:", nothing below
		awk '/^Kernel panic - not syncing/ { print; skip = 1; next }
			skip && /^Call Trace:/ { print; next }
			skip && /^Kernel Offset/ { skip = 0 }
			!skip || /^CPU: / { print }' \
			"$FIX/overflow-caught-$arch.log" >"$BATS_TEST_TMPDIR/empty.log"
		grep -q '^Call Trace:' "$BATS_TEST_TMPDIR/empty.log"
		! grep -q 'STACK_CHECK>' "$BATS_TEST_TMPDIR/empty.log" || false
		run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/empty.log" --expect-overflow
		[ "$status" -eq 1 ]
		[[ "$output" == *"verdict=BAD"* ]]
		[[ "$output" == *"overflow_caught=no"* ]]
		[[ "$output" == *"overflow_panic_trace=none"* ]]
		[[ "$output" == *"overflow boot: the panic's call trace does not show the check stack (no <STACK_CHECK>)"* ]]
		# the check stack, then only guesses ("? fn"): not an unwind
		awk '/<\/STACK_CHECK>/ { print; cut = 1; next }
			cut && /^Kernel Offset/ { cut = 0 }
			cut && /^ [A-Za-z0-9_.]+\+0x/ { sub(/^ /, " ? ") }
			{ print }' "$FIX/overflow-caught-$arch.log" >"$BATS_TEST_TMPDIR/guess.log"
		run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/guess.log" --expect-overflow
		[ "$status" -eq 1 ]
		[[ "$output" == *"overflow_panic_trace=check-stack-only"* ]]
		[[ "$output" == *"overflow boot: the panic's call trace never left the check stack for recursive_loop"* ]]
	done
}

@test "an overflow boot without the check's report is BAD: guard page (x86_64), silent corruption (i386)" {
	run "$TOOLS/verdict" "$FIX/overflow-guard-page-x86_64.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow_caught=no"* ]]
	[[ "$output" == *"overflow boot: no stack-check overflow report"* ]]
	[[ "$output" == *"BUG: TASK stack guard page was hit"* ]]
	run "$TOOLS/verdict" "$FIX/overflow-missed-i386.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow boot: the kernel survived the provocation"* ]]
	[[ "$output" == *"Kernel panic - not syncing: corrupted stack end detected inside scheduler"* ]]
}

@test "an overflow boot whose overflow came without a warning for that function first is BAD" {
	grep -v '^stack-check: warning: .* entering recursive_loop' "$FIX/overflow-caught-x86_64.log" >"$BATS_TEST_TMPDIR/nowarn.log"
	grep -q '^stack-check: overflow: .* entering recursive_loop' "$BATS_TEST_TMPDIR/nowarn.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/nowarn.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow boot: no stack-check warning for recursive_loop before its overflow report"* ]]
}

@test "an overflow boot of a check that says it only panics needs no warning first; one that does not say is held to it" {
	grep -v '^stack-check: warning: .* entering recursive_loop' "$FIX/overflow-caught-x86_64.log" |
		sed 's/^\(stack-check: checking kernel stacks at every function entry: \)warning at 50%, /\1/' >"$BATS_TEST_TMPDIR/panic-only.log"
	grep -q '^stack-check: checking kernel stacks at every function entry: panic with less than' "$BATS_TEST_TMPDIR/panic-only.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/panic-only.log" --expect-overflow
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict=GOOD"* ]]
	[[ "$output" == *"overflow_caught=yes"* ]]
	grep -v '^stack-check: checking kernel stacks' "$BATS_TEST_TMPDIR/panic-only.log" >"$BATS_TEST_TMPDIR/unsaid.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/unsaid.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow_caught=no"* ]]
	[[ "$output" == *"overflow boot: no stack-check warning for recursive_loop before its overflow report"* ]]
}

@test "an overflow boot whose limit an interrupt on top of the warned chain crossed is GOOD, and says so" {
	awk '/^stack-check: overflow: / {
		sub(/entering recursive_loop\+0x0\/0x79 from recursive_loop\+0x58\/0x79/, "entering ksoftirqd_running+0x0/0x36 from __irq_exit_rcu+0x2f/0x55")
		print; getline; print
		print "stack-check:  ksoftirqd_running+0x0/0x36"
		print "stack-check:  irq_exit_rcu+0xd/0xf"
		print "stack-check:  run_sysvec_on_irqstack_32+0x4d/0x51"
		print "stack-check:  sysvec_apic_timer_interrupt+0x1b/0x29"
		print "stack-check:  handle_exception_return+0x0/0xad"
		print "stack-check:  stack_check_slow.constprop.0+0x1c8/0x1d0"
		print "stack-check:  stack_check_call+0x21b/0x23a"
		print "stack-check:  ftrace_call+0x5/0x15"
		next
	} { print }' "$FIX/overflow-caught-i386.log" >"$BATS_TEST_TMPDIR/irq.log"
	grep -q '^stack-check: overflow: .* entering ksoftirqd_running' "$BATS_TEST_TMPDIR/irq.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/irq.log" --expect-overflow
	[ "$status" -eq 0 ]
	[[ "$output" == *"overflow_caught=yes"* ]]
	[[ "$output" == *"overflow_warned_below=recursive_loop"* ]]
	# without the warned chain below it, the same report is BAD
	grep -v '^stack-check:  recursive_loop' "$BATS_TEST_TMPDIR/irq.log" >"$BATS_TEST_TMPDIR/irq-alone.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/irq-alone.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow boot: no stack-check warning for ksoftirqd_running before its overflow report"* ]]
}

@test "an overflow boot with other trouble before the overflow is BAD" {
	sed '/^# kstack-provoke: EXHAUST_STACK/a BUG: unable to handle page fault for address: 0000000000000010' \
		"$FIX/overflow-caught-x86_64.log" >"$BATS_TEST_TMPDIR/other.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/other.log" --expect-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"kernel_trouble=1"* ]]
	[[ "$output" == *"BUG: unable to handle page fault"* ]]
}

@test "a stack_check= boot parameter that the kernel refused becomes a metric" {
	sed '0,/^kstack-init: userspace reached/s//stack-check: stack_check=150 refused: give off, on or a whole percent from 1 to 99; warning at 50%\n&/' \
		"$FIX/overflow-caught-x86_64.log" >"$BATS_TEST_TMPDIR/param.log"
	grep -q 'stack_check=150 refused' "$BATS_TEST_TMPDIR/param.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/param.log" --expect-overflow
	[ "$status" -eq 0 ]
	[[ "$output" == *"metric stack_check_boot_param_refused=150"* ]]
}

@test "a memory-pressure boot is GOOD when the workload finished, or when the check stopped it cleanly (i386 at 4 KiB)" {
	run "$TOOLS/verdict" "$FIX/clean-i386.log" --may-overflow
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict=GOOD"* ]]
	[[ "$output" == *"overflow_caught=none"* ]]
	[[ "$output" != *"overflow_panic_trace="* ]]
	# a real one: reclaim in the flusher past the check's limit (the log
	# of a boot with every test, cut to the workload binary)
	run "$TOOLS/verdict" "$FIX/pressure-check-panic-i386.log" --may-overflow
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict=GOOD"* ]]
	[[ "$output" == *"overflow_caught=yes"* ]]
	[[ "$output" == *"overflow_panic_trace=unwound"* ]]
	[[ "$output" == *"stack-check: overflow: task stack 2444 of 4096 bytes used"*"entering switch_mm_irqs_off+0x0/"* ]]
	# the same log read as a boot with the tests is BAD: the panic is trouble
	run "$TOOLS/verdict" "$FIX/pressure-check-panic-i386.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"kernel_trouble=2"* ]]
}

@test "a memory-pressure boot is BAD when the stack had overflowed first, the trace does not unwind, or a test failed without a panic" {
	sed 's/stack end canary intact/stack end canary overwritten/' "$FIX/pressure-check-panic-i386.log" >"$BATS_TEST_TMPDIR/canary.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/canary.log" --may-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow_caught=no"* ]]
	[[ "$output" == *"overflow boot: the stack end canary was overwritten when the check reported"* ]]
	awk '/^Kernel panic - not syncing/ { print; skip = 1; next }
		skip && /^Call Trace:/ { print; next }
		skip && /^Kernel Offset/ { skip = 0 }
		!skip || /^CPU: / { print }' \
		"$FIX/pressure-check-panic-i386.log" >"$BATS_TEST_TMPDIR/empty.log"
	run "$TOOLS/verdict" "$BATS_TEST_TMPDIR/empty.log" --may-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow_panic_trace=none"* ]]
	[[ "$output" == *"overflow boot: the panic's call trace does not show the check stack"* ]]
	run "$TOOLS/verdict" "$FIX/tap-failure.log" --may-overflow
	[ "$status" -eq 1 ]
	[[ "$output" == *"overflow_caught=none"* ]]
	run "$TOOLS/verdict" "$FIX/oops-in-test.log" --may-overflow
	[ "$status" -eq 1 ]
	run "$TOOLS/verdict" "$FIX/clean-i386.log" --may-overflow --expect-overflow
	[ "$status" -eq 2 ]
	[[ "$output" == *"usage: verdict CONSOLE_LOG [--timed-out] [--expect-overflow | --may-overflow]"* ]]
}

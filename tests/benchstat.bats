#!/usr/bin/env bats
# The bench's figures (tools/benchstat) on fixtures: a console's figures are
# read only when the benchmark ended without errors; medians, min and max
# per figure; ratios computed round by round, never as a ratio of medians.

load helpers
bats_require_minimum_version 1.5.0

FIX=$BATS_TEST_DIRNAME/fixtures/bench

setup() {
	export WORK=$BATS_TEST_TMPDIR/work
}

@test "parse: every figure of a whole run, also behind a kernel message on its line" {
	run "$TOOLS/benchstat" parse "$FIX/good.log"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = "kernel_stack_bytes_per_thread_1000	8192.000	bytes" ]
	[ "${lines[3]}" = "fork_exit_wait_us	1137.500	us" ]
	[ "${lines[4]}" = "getppid_ns	1085.000	ns" ]
}

@test "parse: a run with errors, one cut short, or a cut figure is not a result (exit 1, says why)" {
	run "$TOOLS/benchstat" parse "$FIX/errors.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the benchmark reported: fork_exit_wait_us fork: Resource temporarily unavailable"* ]]
	[[ "$output" == *"ended with 1 errors"* ]]
	run "$TOOLS/benchstat" parse "$FIX/cut.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *'did not end (no "kstack-bench: end" line)'* ]]
	run "$TOOLS/benchstat" parse "$FIX/garbled.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"a figure line it cannot read"*"54.2[    9.1] random"* ]]
	run "$TOOLS/benchstat" parse "$BATS_TEST_TMPDIR/none.log"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot read $BATS_TEST_TMPDIR/none.log"* ]]
}

@test "summary: median (even and odd counts), min, max, n per arch, label and figure" {
	run "$TOOLS/benchstat" summary "$FIX/raw.tsv"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "kind	arch	name	metric	unit	n	median	min	max" ]
	local out=$output
	grep -qxF "figure	x86_64	stock-off	getppid_ns	ns	4	105	90	200" <<<"$out"
	grep -qxF "figure	x86_64	stock-on	getppid_ns	ns	3	150	135	220" <<<"$out"
	grep -qxF "figure	x86_64	small-off	kernel_stack_bytes_per_thread_1000	bytes	2	8191	8190	8192" <<<"$out"
	grep -qxF "figure	i386	stock-on	getppid_ns	ns	1	600	600	600" <<<"$out"
	run ! grep -q "^ratio" <<<"$out"
}

@test "summary: a ratio pairs the two labels round by round, only rounds that have both" {
	run "$TOOLS/benchstat" summary "$FIX/raw.tsv" --ratio check_on=stock-on/stock-off \
		--ratio small=small-off/stock-off
	[ "$status" -eq 0 ]
	local out=$output
	# rounds 1-3: 1.5, 2, 1.5 (round 4 has no stock-on); the ratio of the
	# medians would be 150/105 = 1.43
	grep -qxF "ratio	x86_64	check_on	getppid_ns	x	3	1.5	1.5	2" <<<"$out"
	grep -qxF "ratio	i386	check_on	getppid_ns	x	1	2	2	2" <<<"$out"
	grep -qxF "ratio	x86_64	small	kernel_stack_bytes_per_thread_1000	x	2	0.5	0.5	0.5" <<<"$out"
	run ! grep -q "ratio	i386	small" <<<"$out"
}

@test "summary: a bad ratio, a label with no figures or a file that is not raw bench output is an error" {
	run "$TOOLS/benchstat" summary "$FIX/raw.tsv" --ratio check_on
	[ "$status" -eq 2 ]
	[[ "$output" == *"--ratio 'check_on' is not NAME=NUM/DEN"* ]]
	run "$TOOLS/benchstat" summary "$FIX/raw.tsv" --ratio x=stock-on/base
	[ "$status" -eq 2 ]
	[[ "$output" == *"the ratio x needs the label 'base'"* ]]
	run "$TOOLS/benchstat" summary "$FIX/good.log"
	[ "$status" -eq 2 ]
	[[ "$output" == *"its header has no column"* ]]
	printf 'round\tarch\tlabel\tmetric\tvalue\tunit\n1\tx86_64\toff\tgetppid_ns\tfast\tns\n' >"$BATS_TEST_TMPDIR/bad.tsv"
	run "$TOOLS/benchstat" summary "$BATS_TEST_TMPDIR/bad.tsv"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.tsv:2: the value 'fast' is not a number"* ]]
}

@test "table: figures and ratios as Markdown, median (min-max), n=1 said so" {
	"$TOOLS/benchstat" summary "$FIX/raw.tsv" --ratio check_on=stock-on/stock-off >"$BATS_TEST_TMPDIR/s.tsv"
	run "$TOOLS/benchstat" table "$BATS_TEST_TMPDIR/s.tsv"
	[ "$status" -eq 0 ]
	local out=$output
	grep -qxF "| figure (unit) | stock-off | stock-on | small-off |" <<<"$out"
	grep -qxF "| getppid_ns (ns) | 105 (90-200) | 150 (135-220) | - |" <<<"$out"
	grep -qxF "| getppid_ns | 1.5 (1.5-2) |" <<<"$out"
	grep -qxF "| getppid_ns (ns) | 300 (n=1) | 600 (n=1) |" <<<"$out"
	run "$TOOLS/benchstat" table "$FIX/raw.tsv"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not a bench summary"* ]]
}

#!/usr/bin/env bats
# make report on fixture results: the Markdown page, its plots (drawn by
# gnuplot from scripts written by tools/benchstat), the change against a
# baseline run, and the errors that stop it without touching the last
# report. The figures of the fixture are made up.

load helpers
bats_require_minimum_version 1.5.0

FIX=$BATS_TEST_DIRNAME/fixtures/bench
RATIOS=(--ratio check_off_vs_base=stock-off/base --ratio check_on_vs_off=stock-on/stock-off
	--ratio tracer_vs_off=stock-tracer/stock-off --ratio small_check_on_vs_off=small-on/small-off
	--ratio small_vs_stock=small-off/stock-off)

setup() {
	export WORK=$BATS_TEST_TMPDIR/work
	R=$WORK/results
	mkdir -p "$R/runs"
}

# fake_run NAME [METRIC FACTOR]: a bench run folder from the fixture's
# raw.tsv (with METRIC's values times FACTOR), summarised by benchstat as
# tools/bench does
fake_run() {
	mkdir -p "$R/runs/$1"
	awk -F '\t' -v OFS='\t' -v m="${2:-}" -v f="${3:-1}" '!/^#/ && $8 == m { $9 = $9 * f } { print }' \
		"$FIX/run/raw.tsv" >"$R/runs/$1/raw.tsv"
	"$TOOLS/benchstat" summary "$R/runs/$1/raw.tsv" "${RATIOS[@]}" >"$R/runs/$1/summary.tsv"
}

is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

@test "report: a page with the memory, creation and cost plots of the last bench, named with its accelerator" {
	fake_run bench-1
	ln -s "$R/runs/bench-1" "$R/bench"
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	[[ "$output" == *"wrote $R/report/report.md (5 plots in $R/report/plots)"* ]]
	page=$R/report/report.md
	grep -qF 'Bench run `bench-1`' "$page"
	grep -qF 'accelerator: TCG.' "$page"
	for plot in bytes threads create cost-x86_64 cost-i386; do
		grep -qF "![$plot](plots/$plot.png)" "$page"
		is_png "$R/report/plots/$plot.png"
		# the script redraws it where the report is, not where it was made
		grep -qF "set output \"$R/report/plots/$plot.png\"" "$R/report/plots/$plot.gp"
		grep -qF "TCG" "$R/report/plots/$plot.gp"
		grep -q '^set ylabel "[^"]' "$R/report/plots/$plot.gp"
	done
	# the cost plot: a bar per ratio with its min-max, a cluster per workload, a line at 1
	gp=$R/report/plots/cost-x86_64.gp
	grep -qF 'title "check_off_vs_base"' "$gp"
	grep -qF 'title "tracer_vs_off"' "$gp"
	grep -qF 'set style histogram errorbars' "$gp"
	grep -q '^"getppid_ns" [0-9.]* [0-9.]* [0-9.]* ' "$gp"
	grep -qF 'set arrow from graph 0, first 1 to graph 1, first 1' "$gp"
	# the tables: every figure, the ratios
	grep -qF '| getppid_ns (ns) |' "$page"
	grep -qF 'i386, ratios, pair by pair in the same round' "$page"
	grep -qF 'No bisect-boot run yet' "$page"
	# the cover letter's figures: a row per figure, a column per arch,
	# and the trees of the tip they were measured on (not the base's)
	c=$R/report/cover-figures.txt
	grep -qE '^ +x86_64 +i386$' "$c"
	grep -qE '^  bytes/thread, small \(5000\) +8196 \(8192-8196\) +4096$' "$c"
	grep -qE '^  check on/off: getppid +1\.[0-9]{2} \(1\.[0-9]{2}-1\.[0-9]{2}\) +1\.[0-9]{2} \(' "$c"
	grep -qE '^  threads, small \(256mib\) +1[0-9]{4} \([0-9]+-[0-9]+\) +2[0-9]{4} ' "$c"
	grep -qF 'TCG under QEMU on' "$c"
	grep -qF 'TCG under QEMU on 2 x fixture, 3 round(s), QUICK=1 counts:' "$c"
	# 72 columns, for mail
	[ -z "$(awk 'length > 72' "$c")" ]
	[ "$(cat "$R/report/bench-trees")" = "$(printf 'treestock\ntreesmall')" ]
	grep -qF '    Figures from make bench (kstack, run bench-1)' "$page"
}

@test "report: the last bisect-boot's least stack left per step, as a plot and its table" {
	fake_run bench-1
	ln -s "$R/runs/bench-1" "$R/bench"
	mkdir -p "$R/runs/bisect-boot-1"
	printf 'step\tconfig\tboot_dir\tleast_stack_bytes_left\n0\tx86_64-small\t-\t-\n1\tx86_64-small\t-\t12100\n1\ti386-small\t-\t5600\n2\ti386-small\t-\t5500\n' \
		>"$R/runs/bisect-boot-1/results.tsv"
	printf '| step | table of the run |\n' >"$R/runs/bisect-boot-1/results.md"
	ln -s "$R/runs/bisect-boot-1" "$R/bisect-boot"
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	grep -qF '![steps](plots/steps.png)' "$R/report/report.md"
	grep -qF '| step | table of the run |' "$R/report/report.md"
	is_png "$R/report/plots/steps.png"
	gp=$R/report/plots/steps.gp
	# a line per config, a gap where a step has no figure
	grep -qF 'title "x86_64-small"' "$gp"
	grep -qF 'title "i386-small"' "$gp"
	grep -qx '0 ? ?' "$gp"
	grep -qx '1 12100 5600' "$gp"
	grep -qx '2 ? 5500' "$gp"
}

@test "report BASELINE=: each median beside the baseline's, with the change" {
	fake_run bench-old
	# this run: getppid twice as slow everywhere
	fake_run bench-new getppid_ns 2
	ln -s "$R/runs/bench-new" "$R/bench"
	BASELINE=bench-old run "$TOOLS/report"
	[ "$status" -eq 0 ]
	page=$R/report/report.md
	grep -qF '## Against the baseline `bench-old`' "$page"
	grep -q '^| x86_64 | figure | base | getppid_ns | ns | .* | +100.0 % |$' "$page"
	grep -q '^| i386 | figure | stock-on | file_cycle_us | us | .* | +0.0 % |$' "$page"
	grep -q '^| x86_64 | ratio | check_on_vs_off | getppid_ns | x | .* | +0.0 % |$' "$page"
	grep -qF 'rows in both runs; 0 only in this run, 0 only in the baseline' "$page"
}

@test "report: no bench run, a bad BASELINE, an unfinished run: an error, and the last report stays" {
	run "$TOOLS/report"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no bench run yet"*"make bench"* ]]
	fake_run bench-1
	ln -s "$R/runs/bench-1" "$R/bench"
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	before=$(cat "$R/report/report.md")
	BASELINE=bench-nope run "$TOOLS/report"
	[ "$status" -ne 0 ]
	[[ "$output" == *"BASELINE=: no bench run at $R/runs/bench-nope"* ]]
	mkdir -p "$R/runs/bench-cut"
	BENCH=bench-cut run "$TOOLS/report"
	[ "$status" -ne 0 ]
	[[ "$output" == *"not a finished bench run"* ]]
	[ "$(cat "$R/report/report.md")" = "$before" ]
}

@test "benchstat plot and compare: exit 1 with nothing to draw or compare, 2 on bad usage" {
	fake_run bench-1
	s=$R/runs/bench-1/summary.tsv
	# NAME* stands for every metric that starts with NAME (quick runs: _50, _100)
	run "$TOOLS/benchstat" plot "$s" --kind figure --metrics 'kernel_stack_bytes_per_thread_*' --names base \
		--title t --ylabel y --out "$BATS_TEST_TMPDIR/p.png"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"x86_64 kernel_stack_bytes_per_thread_1000" '* ]]
	[[ "$output" == *'"i386 kernel_stack_bytes_per_thread_5000" '* ]]
	run "$TOOLS/benchstat" plot "$s" --kind ratio --metrics no_such --names check_on_vs_off \
		--title t --ylabel y --out "$BATS_TEST_TMPDIR/p.png"
	[ "$status" -eq 1 ]
	[[ "$output" == *"nothing to plot"* ]]
	run "$TOOLS/benchstat" plot "$s" --kind median --metrics getppid_ns --names base \
		--title t --ylabel y --out "$BATS_TEST_TMPDIR/p.png"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kind is figure or ratio"* ]]
	run "$TOOLS/benchstat" plot "$s" --kind figure --metrics getppid_ns --names base \
		--title 'a "quoted" title' --ylabel y --out "$BATS_TEST_TMPDIR/p.png"
	[ "$status" -eq 2 ]
	[[ "$output" == *"which gnuplot would read as code"* ]]
	printf 'kind\tarch\tname\tmetric\tunit\tn\tmedian\tmin\tmax\nfigure\tarm\tx\ty\tns\t1\t1\t1\t1\n' >"$BATS_TEST_TMPDIR/other.tsv"
	run "$TOOLS/benchstat" compare "$s" "$BATS_TEST_TMPDIR/other.tsv"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no figure in common"* ]]
	run "$TOOLS/benchstat" compare "$s" "$FIX/good.log"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not a bench summary"* ]]
}

@test "soak: the samples of a console, and make report's plots of them over time" {
	run "$TOOLS/benchstat" samples "$FIX/soak.log"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 11 ]
	[ "${lines[3]}" = "60	depth_task_bytes	3120	bytes" ]
	[ "${lines[10]}" = "120	warnings_dropped	0	warnings" ]
	# the soak's figures are read as any bench boot's
	run "$TOOLS/benchstat" parse "$FIX/soak.log"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "soak_seconds	120.400	s" ]
	# a sample cut by a kernel message is not read as a number
	sed 's/^kstack-bench: sample 60 depth_task_bytes 3120 bytes$/kstack-bench: sample 60 depth_task_by[   60.1] x/' "$FIX/soak.log" >"$BATS_TEST_TMPDIR/cut.log"
	run "$TOOLS/benchstat" samples "$BATS_TEST_TMPDIR/cut.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"a sample line it cannot read"* ]]
	run "$TOOLS/benchstat" samples "$FIX/good.log"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no samples"* ]]

	fake_run bench-1
	ln -s "$R/runs/bench-1" "$R/bench"
	mkdir -p "$R/runs/soak-1"
	{
		printf 'arch\tconfig\tcommit\taccel\tt\tmetric\tvalue\tunit\n'
		"$TOOLS/benchstat" samples "$FIX/soak.log" | awk -v OFS='\t' '{ print "x86_64", "x86_64-small", "abc", "tcg", $0 }'
	} >"$R/runs/soak-1/samples.tsv"
	{
		printf 'arch\tconfig\tcommit\taccel\tmetric\tvalue\tunit\n'
		"$TOOLS/benchstat" parse "$FIX/soak.log" | awk -v OFS='\t' '{ print "x86_64", "x86_64-small", "abc", "tcg", $0 }'
	} >"$R/runs/soak-1/figures.tsv"
	ln -s "$R/runs/soak-1" "$R/soak"
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	page=$R/report/report.md
	grep -qF '![soak-depth](plots/soak-depth.png)' "$page"
	grep -qF '![soak-warnings](plots/soak-warnings.png)' "$page"
	is_png "$R/report/plots/soak-depth.png"
	gp=$R/report/plots/soak-depth.gp
	grep -qF 'title "x86_64-small depth_task_bytes"' "$gp"
	grep -qF 'title "x86_64-small depth_hardirq_bytes"' "$gp"
	grep -qx '120 4200' "$gp"
	grep -qF 'soak: depth over time (TCG)' "$gp"
	grep -qF '| x86_64 | x86_64-small | abc | TCG | warnings_printed | 2.000 | warnings |' "$page"
}

# fake_stack_depth CONFIG TREE BYTES: a make stack-depth result for CONFIG
fake_stack_depth() {
	local dir=$R/stack-depth/$1-$2
	mkdir -p "$dir"
	printf 'config=%s\ntree=%s\nstack_bytes=%s\n' "$1" "$2" "$3" >"$dir/info"
	{
		printf 'kind\trank\tentry\tbase\tdepth\tdepth_normal\tpath_normal\tpath_all\n'
		printf 'syscall\t1\t__x64_sys_rename\t192\t9300\t6000\t__x64_sys_rename>a\t__x64_sys_rename>_printk\n'
		printf 'syscall\t2\t__x64_sys_open\t192\t5000\t4000\t__x64_sys_open>b\t__x64_sys_open>b\n'
		printf 'irq\t1\t__sysvec_apic_timer_interrupt\t16\t3000\t2000\t__sysvec_apic_timer_interrupt\t__sysvec_apic_timer_interrupt\n'
		printf 'softirq\t1\t__do_softirq\t16\t2500\t2500\t__do_softirq\t__do_softirq\n'
	} >"$dir/paths.tsv"
	printf '# Static stack depth\n' >"$dir/summary.md"
	ln -sfn "$(basename "$dir")" "$R/stack-depth/$1"
}

@test "report: the static worst case per entry kind beside the deepest chain the bench's check kept for that tree" {
	fake_run bench-1
	# the check's chains under the bench: task 3000 and 1500 bytes, hardirq 1000
	for round in 1 2; do
		printf '%s\tx86_64\tsmall-on\tx86_64-small\t222222222222\ttreesmall\ttcg\tdepth_task_bytes\t%s\tbytes\n' \
			"$round" "$((1500 * round))" >>"$R/runs/bench-1/raw.tsv"
	done
	printf '1\tx86_64\tsmall-on\tx86_64-small\t222222222222\ttreesmall\ttcg\tdepth_hardirq_bytes\t1000\tbytes\n' \
		>>"$R/runs/bench-1/raw.tsv"
	"$TOOLS/benchstat" summary "$R/runs/bench-1/raw.tsv" "${RATIOS[@]}" >"$R/runs/bench-1/summary.tsv"
	ln -s "$R/runs/bench-1" "$R/bench"
	fake_stack_depth x86_64-small treesmall 8192
	fake_stack_depth i386-small othertree 4096
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	page=$R/report/report.md
	grep -qF '## Static worst case against what ran (make stack-depth)' "$page"
	grep -qF '### x86_64-small (tree treesmall, 8192-byte task stack)' "$page"
	# the deepest syscall: 6000 normal (73 % of 8 KiB), 9300 in all; the
	# task chain's deepest over the rounds, 3000, is 50 % of 6000
	grep -qF '| syscall | `__x64_sys_rename` | 6000 | 73% | 9300 | 3000 (task) | 50% |' "$page"
	grep -qF '| irq | `__sysvec_apic_timer_interrupt` | 2000 | 24% | 3000 | 1000 (hardirq) | 50% |' "$page"
	grep -qF '| softirq | `__do_softirq` | 2500 | 31% | 2500 | - | - |' "$page"
	run ! grep -qF '__x64_sys_open' "$page"
	# a tree the bench did not run: the static figures alone
	grep -qF '### i386-small (tree othertree, 4096-byte task stack)' "$page"
	grep -qF 'This bench did not run this tree (its small-on ran treesmall): the static figures alone.' "$page"
	grep -qF '| syscall | `__x64_sys_rename` | 6000 | 146% | 9300 | - | - |' "$page"
}

@test "report: without make stack-depth, the static section says so" {
	fake_run bench-1
	ln -s "$R/runs/bench-1" "$R/bench"
	run "$TOOLS/report"
	[ "$status" -eq 0 ]
	grep -qF 'No static analysis yet (make stack-depth).' "$R/report/report.md"
}

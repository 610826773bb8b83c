#!/usr/bin/env bats
# End to end: make bisect-boot on the real source with the series in
# commits/ (each arch's main config), from FROM=KSTACK_E2E_FROM on
# (tools/test: the last two commits unless told), then a rerun that boots
# nothing, then make bisect on a test series with a commit that panics at
# boot, from the series' tip.

load ../helpers

setup_file() { setup_e2e_series; }

column() { tsv_cols "$WORK/results/bisect-boot/results.tsv" "$@" | sort -u; }

@test "bisect-boot builds and boots every step on every arch; the guest tests pass" {
	run "$TOOLS/bisect-boot"
	echo "$output" >"$WORK/bisect-boot.out"
	ran_ok
	[ "$(column step config | wc -l)" -eq $(($(e2e_steps) * 2)) ]
	[ "$(column boot)" = GOOD ]
	[ "$(column tests_failed)" = 0 ]                        # tests failed
	[ -z "$(column tests_passed | awk '$1 < 5')" ] # at least 5 tests passed per boot
	[ "$(column kernel_trouble)" = 0 ]                        # no kernel trouble
	[[ "$output" == *"| boots "* ]]
	# the guest measured the kernel stack per thread for each arch
	for dir in $(column boot_dir); do
		grep -q '^metric kernel_stack_bytes_per_thread=' "$dir/verdict.txt"
	done
	# from the stack check's commit on, every boot had an overflow boot
	# (LKDTM EXHAUST_STACK) that the check caught: warning, report, panic
	local checked=0 build_dir boot_dir
	while IFS=$'\t' read -r build_dir boot_dir; do
		lib has_stack_check "$build_dir" 2>/dev/null || continue
		grep -qx 'overflow_caught=yes' "$boot_dir/overflow/result"
		grep -qx 'verdict=GOOD' "$boot_dir/overflow/verdict.txt"
		# ... booted with stack_check=150, which the kernel refused, keeping 50%
		grep -qx 'metric stack_check_boot_param_refused=150' "$boot_dir/overflow/verdict.txt"
		# ... warned first, at 50% or a frame before the panic if sooner
		grep -Eq '\(.*warning at ([1-4][0-9]|50|[0-9])%\) entering recursive_loop' "$boot_dir/overflow/verdict.txt"
		grep -q '^metric stack_check_task_warning_percent=' "$boot_dir/verdict.txt"
		checked=$((checked + 1))
	done < <(column result_dir boot_dir)
	[ "$checked" -ge 2 ]
	# on a 4 KiB task stack (i386-small from the size choice on) the
	# memory-pressure workload ran in a boot of its own: GOOD, finished or
	# stopped by the check's clean panic
	local pressure=0 config
	while IFS=$'\t' read -r config build_dir boot_dir; do
		lib pressure_boot_here "$build_dir" "${config%%-*}" || continue
		grep -qx 'verdict=GOOD' "$boot_dir/pressure/verdict.txt"
		grep -Eqx 'overflow_caught=(none|yes)' "$boot_dir/pressure/verdict.txt"
		pressure=$((pressure + 1))
	done < <(column config result_dir boot_dir)
	[ "$pressure" -ge 2 ]
	[[ "$output" == *", memory-pressure boot: "* ]]
	[[ "$output" == *"EXHAUST_STACK overflow caught by the stack check: yes"* ]]
	# at the check's first commit (when the run has it) and at the tip
	# (make test), the overflow boots with FRAME_WARN-sized frames too,
	# caught with the canary intact (a warm cache may hold them at other
	# steps too: those are not counted)
	local last commit want=0 framewarn=0 step
	last=$(column step | sort -n | tail -n 1)
	while IFS=$'\t' read -r step commit build_dir boot_dir; do
		lib has_stack_check "$build_dir" 2>/dev/null || continue
		[ "$step" = "$last" ] ||
			! git -C "$WORKTREE" cat-file -e "$commit^:arch/x86/kernel/stack_check.c" 2>/dev/null ||
			continue
		want=$((want + 1))
		grep -qx 'overflow_caught=yes' "$boot_dir/overflow-frame-warn/result"
		grep -qx 'overflow_caught=yes' "$boot_dir/overflow-frame-warn-8/result"
		grep -q 'stack end canary intact' "$boot_dir/overflow-frame-warn/console.log"
		framewarn=$((framewarn + 1))
	done < <(column step commit result_dir boot_dir)
	[ "$want" -ge 2 ] # the tip, both arches
	[ "$framewarn" -eq "$want" ]
}

@test "a rerun with nothing changed boots nothing: every verdict is cached" {
	run "$TOOLS/bisect-boot"
	ran_ok
	[ "$(column boot_cached)" = yes ]
	[ "$(column cached)" = yes ]
}

@test "make boot on the clean worktree gives the tip's verdict from the cache, exit 0" {
	run "$TOOLS/boot"
	ran_ok
	[[ "$output" == *"== i386-small: GOOD (cached)"* ]]
	[[ "$output" == *"== x86_64-small: GOOD (cached)"* ]]
}

@test "bisect finds the commit that panics at boot" {
	sed -i '/^void __init console_on_rootfs/,/^}/ s/^\tfput(file);$/\tpanic("kstack test: a commit that panics at boot");\n&/' \
		"$WORKTREE/init/main.c"
	grep -q 'kstack test: a commit that panics' "$WORKTREE/init/main.c"
	git -C "$WORKTREE" commit -q -a -m "init: panic at boot, for the bisect test"
	echo '# kstack bisect test' >>"$WORKTREE/README"
	git -C "$WORKTREE" commit -q -a -m "README: a harmless change after the bad commit"
	# from the series' tip, booted GOOD above
	GOOD=HEAD~2 ARCHES=x86_64 run "$TOOLS/bisect"
	FORCE=1 "$TOOLS/worktree" 2>/dev/null
	echo "$output" >"$WORK/bisect.out"
	ran_ok
	[[ "$output" == *"first bad commit: "*" init: panic at boot, for the bisect test"* ]]
	[ -z "$(git -C "$WORK/steps" bisect log 2>/dev/null)" ] # bisect was reset
}

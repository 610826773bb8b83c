# shellcheck shell=bash
# tools/lib/kstack-tests.sh: What belongs to this series' tests, behind the
# series hooks that qemu.sh and steps.sh call (series_boot_args,
# series_extra_boots, series_outcome, series_boot_key, series_verdict_flags):
# the task stack size the build has, whether it has the stack check, the
# overflow boots and, on a 4 KiB task stack, the memory-pressure boot. Another series gives its own file with the same functions
# (SERIES_TESTS=).

# task_stack_bytes_of BUILD_DIR ARCH: the task stack size a build has: from
# its .config's CONFIG_X86_TASK_STACK_ORDER (plus KASAN's order on x86_64)
# where the tree has the option, else the arch's stock size.
task_stack_bytes_of() {
	local config=$1/config order
	load_arch "$2"
	order=$(sed -n 's/^CONFIG_X86_TASK_STACK_ORDER=//p' "$config" 2>/dev/null)
	if [ -z "$order" ]; then
		printf '%s\n' "$task_stack_bytes"
		return
	fi
	if [ "$kernel_arch" = x86_64 ] && grep -q '^CONFIG_KASAN=y' "$config"; then
		order=$((order + 1))
	fi
	printf '%s\n' "$((4096 << order))"
}

# has_stack_check BUILD_DIR: the build has the series' stack check.
has_stack_check() {
	grep -q '^CONFIG_X86_STACK_CHECK=y' "$1/config" 2>/dev/null
}

# --- the hooks ---------------------------------------------------------------

# series_boot_args BUILD_DIR ARCH: kernel parameters of every boot, which
# guest-image/run-tests and the guest tests read: the task stack the build
# has, the arch's stock one, whether the build has the stack check, and on
# a 4 KiB task stack that the memory-pressure workload runs in a boot of
# its own (kstack_pressure=own-boot; that boot adds kstack_pressure=only,
# which comes later on the command line and wins).
series_boot_args() {
	local check=0 size
	! has_stack_check "$1" || check=1
	size=$(task_stack_bytes_of "$1" "$2")
	load_arch "$2"
	printf 'kstack_thread_size=%s kstack_stock_thread_size=%s kstack_stack_check=%s%s\n' \
		"$size" "$task_stack_bytes" "$check" \
		"$(! pressure_boot_here "$1" "$2" || echo ' kstack_pressure=own-boot')"
}

# series_verdict_flags KIND: how tools/verdict reads a boot of KIND.
series_verdict_flags() {
	case "$1" in
	overflow) echo --expect-overflow ;;
	pressure) echo --may-overflow ;;
	esac
}

# PRESSURE_MAX_BYTES: on a task stack this small or smaller the
# memory-pressure workload (writeback on a loop file system into swap) runs
# in a boot of its own, which the stack check may stop with a clean panic:
# on i386 at 4 KiB it went past the check's limit (2444 bytes in use, 2400
# allowed) in reclaim under writeback, as the 4 KiB help text says. That
# boot is GOOD if the workload finished, or if the check stopped it with
# its report (the stack end canary intact) and its panic, and nothing else
# went wrong first; BAD otherwise. Larger stacks run it with the tests.
PRESSURE_MAX_BYTES=4096

# pressure_boot_here BUILD_DIR ARCH: this build's memory-pressure workload
# runs in a boot of its own.
pressure_boot_here() {
	[ "$(task_stack_bytes_of "$1" "$2")" -le "$PRESSURE_MAX_BYTES" ]
}

# OVERFLOW_CRASH: what the overflow boot provokes (LKDTM's deep recursion).
# OVERFLOW_ARGS: the provocation, and a threshold the kernel must refuse at
# boot, keeping 50% (the verdict's metric stack_check_boot_param_refused).
OVERFLOW_CRASH=EXHAUST_STACK
OVERFLOW_ARGS="kstack_provoke=$OVERFLOW_CRASH stack_check=150"
# FRAME_WARN_BOOTS: the overflow boots with the largest frames a build
# allows (the series' LKDTM commit): BOOT_DIR/<name>:<crash type>. Each must
# be caught by the check's panic with the stack end canary intact.
FRAME_WARN_BOOTS="overflow-frame-warn:EXHAUST_STACK_FRAME_WARN overflow-frame-warn-8:EXHAUST_STACK_FRAME_WARN_8"
# Checked when a tool starts, not when the first step with the check has
# been built: a typo must not cost a build.
case "${KSTACK_FRAME_WARN_BOOTS:-every}" in
every | ends) ;;
*) die "KSTACK_FRAME_WARN_BOOTS=${KSTACK_FRAME_WARN_BOOTS} is not known: give every or ends" ;;
esac

# frame_warn_boots_here TREE: the FRAME_WARN overflow boots run at this step:
# at every step with the check (KSTACK_FRAME_WARN_BOOTS=every, the default),
# or (=ends, as make test runs them) only at the first commit with the check
# and at the worktree's tip. STEP_COMMIT is the step's commit (steps.sh).
frame_warn_boots_here() {
	local tree=$1 commit=${STEP_COMMIT:-}
	git --git-dir="$BASE_REPO" grep -q EXHAUST_STACK_FRAME_WARN "$tree" -- drivers/misc/lkdtm/bugs.c 2>/dev/null ||
		return 1
	case "${KSTACK_FRAME_WARN_BOOTS:-every}" in
	every) return 0 ;;
	ends)
		[ -n "$commit" ] || return 0
		[ "$commit" != "$(wt_git rev-parse HEAD 2>/dev/null)" ] || return 0
		! git --git-dir="$BASE_REPO" cat-file -e "$commit^:arch/x86/kernel/stack_check.c" 2>/dev/null
		;;
	*) die "KSTACK_FRAME_WARN_BOOTS=${KSTACK_FRAME_WARN_BOOTS} is not known: give every or ends" ;;
	esac
}

# extra_boot NAME KIND ARGS ARCH BUILD_DIR MODULES PAYLOAD TREE BOOT_DIR:
# one boot besides the one with the tests, in BOOT_DIR/NAME, read as KIND
# (series_verdict_flags), cached like the boot with the tests (FORCE=1
# boots again).
extra_boot() {
	local name=$1 kind=$2 args=$3
	shift 3
	if [ ! -f "$6/$name/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		boot_kernel "$1" "$2" "$3" "$4" "$5" "$6/$name" "$kind" "$args"
	else
		boot_verdict "$6/$name"
	fi
}

# series_extra_boots ARCH BUILD_DIR MODULES PAYLOAD TREE BOOT_DIR: after the
# boot with the tests, on a small task stack the memory-pressure boot
# (BOOT_DIR/pressure), then for a build with the stack check, boots that
# provoke a stack overflow (BOOT_DIR/overflow, and the FRAME_WARN ones where
# frame_warn_boots_here says), which the check must catch: warn, report,
# then panic.
series_extra_boots() {
	local arch=$1 build_dir=$2 tree=$5 kind name crash
	if pressure_boot_here "$build_dir" "$arch"; then
		extra_boot pressure pressure kstack_pressure=only "$@"
	fi
	has_stack_check "$build_dir" || return 0
	extra_boot overflow overflow "$OVERFLOW_ARGS" "$@"
	frame_warn_boots_here "$tree" || return 0
	for kind in $FRAME_WARN_BOOTS; do
		name=${kind%%:*} crash=${kind#*:}
		extra_boot "$name" overflow "kstack_provoke=$crash" "$@"
	done
}

# series_boot_key: what decides the series' boots, for the boot cache key.
series_boot_key() {
	declare -f series_boot_args series_verdict_flags series_extra_boots task_stack_bytes_of has_stack_check \
		extra_boot pressure_boot_here
	printf '%s\n' "$OVERFLOW_ARGS" "$FRAME_WARN_BOOTS" "$PRESSURE_MAX_BYTES"
}

# pressure_outcome DIR: what the memory-pressure boot in DIR came to, in
# words: "finished", or how the stack check stopped it.
pressure_outcome() {
	local report
	case "$(result_field "$1" overflow_caught)" in
	none) echo finished ;;
	yes)
		report=$(sed -n 's/^ *stack-check: overflow: \(.* stack [0-9]* of [0-9]* bytes used\).* entering \([^+ ]*\).*/\1 entering \2/p' "$1/verdict.txt" | head -n 1)
		echo "stopped by the stack check's panic (${report:-its report}, canary intact)"
		;;
	*) result_field "$1" status ;;
	esac
}

# series_outcome BOOT_DIR: join the extra boots to the step's verdict
# (BOOT_STATUS, set from the boot with the tests): BAD when an overflow boot
# did not catch its overflow. Sets OVERFLOW_CAUGHT (yes, no, or - without
# one: yes only if every overflow boot there is caught it) and
# SERIES_NOTE_TEXT for the progress line. Reads; writes nothing.
series_outcome() {
	local dir=$1 kind name crash caught crashes=$OVERFLOW_CRASH pressure=''
	OVERFLOW_CAUGHT=- SERIES_NOTE_TEXT=''
	if [ -f "$dir/pressure/boot.info" ]; then
		[ "$(result_field "$dir/pressure" status)" = GOOD ] || BOOT_STATUS=BAD
		pressure=", memory-pressure boot: $(pressure_outcome "$dir/pressure")"
	fi
	SERIES_NOTE_TEXT=$pressure
	[ -f "$dir/overflow/result" ] || return 0
	OVERFLOW_CAUGHT=yes
	for kind in "overflow:$OVERFLOW_CRASH" $FRAME_WARN_BOOTS; do
		name=${kind%%:*} crash=${kind#*:}
		[ -f "$dir/$name/boot.info" ] || continue
		[ "$name" = overflow ] || crashes+=", $crash"
		caught=$(result_field "$dir/$name" overflow_caught)
		[ "$(result_field "$dir/$name" status)" = GOOD ] || caught=no
		[ "$caught" = yes ] || OVERFLOW_CAUGHT=no
	done
	if [ "$OVERFLOW_CAUGHT" != yes ] && [ "$BOOT_STATUS" = GOOD ]; then
		BOOT_STATUS=BAD
	fi
	SERIES_NOTE_TEXT="$pressure, $crashes overflow caught by the stack check: $OVERFLOW_CAUGHT"
}

# series_show_boots BOOT_DIR: the extra boots' verdicts, for tools/boot.
series_show_boots() {
	local kind name crash
	if [ -f "$1/pressure/verdict.txt" ]; then
		printf '   memory-pressure boot (on a small task stack, which the stack check may stop): %s, %s (console: %s/pressure/console.log)\n' \
			"$(result_field "$1/pressure" status)" "$(pressure_outcome "$1/pressure")" "$1"
		sed 's/^/      /' "$1/pressure/verdict.txt"
	fi
	for kind in "overflow:$OVERFLOW_CRASH" $FRAME_WARN_BOOTS; do
		name=${kind%%:*} crash=${kind#*:}
		[ -f "$1/$name/verdict.txt" ] || continue
		printf '   overflow boot (%s, which the stack check must catch): %s (console: %s/%s/console.log)\n' \
			"$crash" "$(result_field "$1/$name" status)" "$1" "$name"
		sed 's/^/      /' "$1/$name/verdict.txt"
	done
}

# series_cover_figures TSV: the figures a cover letter gives, from the tip's
# boots in a bisect-boot run: the task stack per thread as KernelStack in
# /proc/meminfo measured it (the kernel_stack guest test), the least stack
# left, and whether the overflow boot's overflow was caught by the check.
series_cover_figures() {
	local tsv=$1 last config boot_dir left line per caught
	last=$(tsv_column "$tsv" step | sort -n | tail -n 1)
	printf 'Measured at the tip (step %s), per config:\n' "$last"
	while IFS=$'\t' read -r config boot_dir left; do
		per=- caught=-
		if [ -f "$boot_dir/console.log" ]; then
			line=$(grep -o 'KernelStack: [0-9]* kB before, [0-9]* kB after [0-9]* threads' "$boot_dir/console.log" | tail -n 1 || true)
			[ -z "$line" ] || per=$(awk '{ printf "%d", ($5 - $2) * 1024 / $8 }' <<<"$line")
		fi
		# what the step's verdict read: series_outcome decides it
		BOOT_STATUS=GOOD
		series_outcome "$boot_dir"
		caught=$OVERFLOW_CAUGHT
		printf '  %-14s KernelStack %s bytes per thread; least stack left %s bytes;\n' "$config" "$per" "$left"
		[ "$caught" = - ] ||
			printf '  %-14s %s\n' "" "${SERIES_NOTE_TEXT#, }"
	done < <(tsv_column "$tsv" step config boot_dir least_stack_bytes_left | awk -F '\t' -v s="$last" '$1 == s { print $2 "\t" $3 "\t" $4 }')
}

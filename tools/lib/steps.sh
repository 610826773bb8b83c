# shellcheck shell=bash
# tools/lib/steps.sh: One step of a series: the steps worktree, checkpatch,
# the cache keys, build (cached) then boot (cached); the user's worktree as a
# step.

# prepare_steps_worktree: the detached worktree in which steps are checked
# out and built (WORK/steps), made on first use; prints its path.
prepare_steps_worktree() {
	local dir=$WORK/steps
	git --git-dir="$BASE_REPO" worktree prune
	if ! [ -e "$dir/.git" ]; then
		rm -rf "$dir"
		git --git-dir="$BASE_REPO" worktree add -q --detach "$dir" "$(require_base)" >&2
	fi
	printf '%s\n' "$dir"
}

# checkout_step DIR COMMIT: check COMMIT out in the steps worktree, dropping
# anything a stopped run left there. Only files that differ are rewritten, so
# make rebuilds only what the step changed.
checkout_step() {
	git -C "$1" checkout -q -f --detach "$2"
	git -C "$1" clean -q -ffdx
}

# checkpatch_step COMMIT SRC: "errors/warnings/checks" of checkpatch.pl
# --strict on the commit's patch, cached by the patch and the script.
checkpatch_step() {
	local commit=$1 src=$2 patch key dir
	patch=$(git --git-dir="$BASE_REPO" format-patch -1 --stdout --no-signature "$commit")
	key=$( {
		printf '%s\n' "$patch"
		sha256sum "$src/scripts/checkpatch.pl"
	} | sha256sum | cut -c1-16)
	dir=$RESULTS/checkpatch/$key
	if [ ! -f "$dir/counts" ]; then
		mkdir -p "$dir.tmp.$$"
		(cd "$src" && printf '%s\n' "$patch" | perl scripts/checkpatch.pl --strict --no-summary-file - \
			>"$dir.tmp.$$/checkpatch.txt" 2>&1) || true
		sed -n -E 's#^total: ([0-9]+) errors, ([0-9]+) warnings, ([0-9]+) checks.*#\1/\2/\3#p' \
			"$dir.tmp.$$/checkpatch.txt" >"$dir.tmp.$$/counts"
		[ -s "$dir.tmp.$$/counts" ] || echo "?" >"$dir.tmp.$$/counts"
		rm -rf "$dir" && mv "$dir.tmp.$$" "$dir"
	fi
	cat "$dir/counts"
}

# ccache_hit_rate STATSLOG: "H of N compilations from the cache (P %)".
ccache_hit_rate() {
	[ -f "$1" ] || {
		echo "no compilations"
		return
	}
	CCACHE_STATSLOG=$1 ccache --show-log-stats -v 2>/dev/null | awk '
		/^ *Hits:/ && !h { h = $2 } /^ *Misses:/ && !m { m = $2 }
		END { n = h + m; if (n == 0) print "no compilations"; else printf "%d of %d compilations from the cache (%.0f %%)\n", h, n, 100 * h / n }'
}

# build_key TREE CONFIG: the cache key of building TREE in CONFIG.
build_key() {
	local identity
	identity=$(config_identity "$2")
	printf 'tree %s\n%s\n' "$1" "$identity" | sha256sum | cut -c1-16
}

# boot_key BUILD_KEY MODULES_KEY ARCH PAYLOAD: the cache key of booting a
# build: the kernel, its test modules, the image recipe, the test payload,
# and how QEMU is run (the arch's settings and the code of boot_kernel).
boot_key() {
	load_arch "$3"
	{
		printf '%s\n' "$1" "$2" "$(image_recipe_hash "$3")" "$(basename "$4")" "$qemu_binary" \
			"${qemu_args[*]}" "$console" "$task_stack_bytes" "$BOOT_TIMEOUT" "${ACCEL:-auto}"
		declare -f boot_kernel
		series_boot_key
	} | sha256sum | cut -c1-16
}

# The steps worktree checked out at this commit (empty: not yet).
STEP_CHECKED_OUT=''

# step_checkout COMMIT: the steps worktree at COMMIT (once per commit).
step_checkout() {
	local steps_worktree
	steps_worktree=$(prepare_steps_worktree)
	if [ "$STEP_CHECKED_OUT" != "$1" ]; then
		checkout_step "$steps_worktree" "$1"
		STEP_CHECKED_OUT=$1
	fi
	STEPS_WORKTREE=$steps_worktree
}

# step_build COMMIT CONFIG: build COMMIT in CONFIG (in the steps worktree)
# unless cached, then its test modules unless cached. Sets STEP_RESULT (the
# kernel's result folder), STEP_CACHED (yes when the kernel was not built
# now), STEP_MODULES (the folder of .ko files, empty without them),
# STEP_BUILD (OK, or FAIL when the kernel or its test modules did not
# build) and STEP_ERROR (the line that says why).
step_build() {
	local commit=$1 config=$2 tree result_dir modules
	tree=$(git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}")
	result_dir=$RESULTS/build/$(build_key "$tree" "$config")
	STEP_CACHED=yes
	# kstack before 2026-12 recorded a config step stopped by a signal
	# as FAIL: such a record is not a verdict on the kernel
	if [ -f "$result_dir/result" ] &&
		grep -q '^first_error=config: .*interrupted: nothing half-done' "$result_dir/result"; then
		say "      the cached FAIL of $config at ${commit:0:12} is an interrupted run's, not the kernel's: building again"
		rm -rf "$result_dir"
	fi
	if [ ! -f "$result_dir/result" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_CACHED=no
		step_checkout "$commit"
		build_step "$STEPS_WORKTREE" "$WORK/build/steps/$config" "$config" "$result_dir" >&2
	fi
	STEP_RESULT=$result_dir
	touch "$result_dir" # last used: what prune_results goes by
	STEP_MODULES='' STEP_BUILD=$(result_field "$result_dir" status) STEP_ERROR=$(result_field "$result_dir" first_error)
	[ "$STEP_BUILD" = OK ] || return 0
	modules=$RESULTS/modules/$(module_key "$result_dir")
	if [ ! -f "$modules/result" ] || [ "${FORCE:-0}" = 1 ]; then
		step_checkout "$commit"
		build_modules "$result_dir" "$STEPS_WORKTREE" "$config" "$modules"
	fi
	touch "$modules"
	step_modules_outcome "$modules"
}

# step_modules_outcome DIR: STEP_MODULES, STEP_BUILD and STEP_ERROR from a
# result of build_modules.
step_modules_outcome() {
	STEP_MODULES=$1/modules
	if [ "$(result_field "$1" status)" != OK ]; then
		STEP_BUILD=FAIL
		STEP_ERROR=$(result_field "$1" first_error)
	fi
}

# step_boot COMMIT CONFIG: boot the step step_build just built unless
# cached, then the series' extra boots; sets STEP_BOOT_DIR,
# STEP_BOOT_CACHED, and (boot_outcome) BOOT_STATUS and SERIES_NOTE_TEXT.
step_boot() {
	local commit=$1 config=$2 build_dir=$STEP_RESULT arch boot_dir tree
	arch=$(arch_of "$config")
	ensure_image "$arch"
	ensure_payload "$arch"
	boot_dir=$RESULTS/boot/$(boot_key "$(basename "$build_dir")" "$(basename "$(dirname "$STEP_MODULES")")" "$arch" "$PAYLOAD")
	tree=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$commit^{tree}")
	STEP_COMMIT=$commit	# for the series' hooks
	STEP_BOOT_CACHED=yes
	if [ ! -f "$boot_dir/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_BOOT_CACHED=no
		boot_kernel "$arch" "$build_dir" "$STEP_MODULES" "$PAYLOAD" "$tree" "$boot_dir"
	else
		boot_verdict "$boot_dir"
	fi
	series_extra_boots "$arch" "$build_dir" "$STEP_MODULES" "$PAYLOAD" "$tree" "$boot_dir"
	STEP_BOOT_DIR=$boot_dir
	touch "$boot_dir"
	boot_outcome "$boot_dir"
}

# open_worktree_run: for make build and make boot: the configs selected,
# the lock, set-up on a first run, and which series the worktree holds.
open_worktree_run() {
	select_configs
	lock_work
	ensure_setup
	series_state "$(require_base)"
	say "series: the worktree's HEAD $(wt_git rev-parse --short=12 HEAD), $SERIES_NOTE"
}

# worktree_build CONFIG: build the user's worktree for CONFIG, as
# step_build does (same variables). A clean worktree is built as its HEAD
# commit (cached by tree, in the steps worktree); one with uncommitted edits
# is built as it is, in build/tip, and never cached.
worktree_build() {
	if [ -z "$(worktree_dirt)" ]; then
		step_build "$(wt_git rev-parse HEAD)" "$1"
		return 0
	fi
	STEP_CACHED=no
	STEP_RESULT=$RESULTS/tip/$1
	build_step "$WORKTREE" "$WORK/build/tip/$1" "$1" "$STEP_RESULT" >&2
	STEP_MODULES='' STEP_BUILD=$(result_field "$STEP_RESULT" status) STEP_ERROR=$(result_field "$STEP_RESULT" first_error)
	[ "$STEP_BUILD" = OK ] || return 0
	build_modules "$STEP_RESULT" "$WORKTREE" "$1" "$STEP_RESULT/test-modules"
	step_modules_outcome "$STEP_RESULT/test-modules"
}

# worktree_boot CONFIG: boot what worktree_build gave, as step_boot does
# (cached when the worktree is clean).
worktree_boot() {
	local config=$1 arch tree
	if [ -z "$(worktree_dirt)" ]; then
		step_boot "$(wt_git rev-parse HEAD)" "$config"
		return 0
	fi
	arch=$(arch_of "$config")
	ensure_image "$arch"
	ensure_payload "$arch"
	STEP_BOOT_CACHED=no
	STEP_BOOT_DIR=$STEP_RESULT/boot
	tree=$(wt_git rev-parse --short=12 'HEAD^{tree}')
	STEP_COMMIT=$(wt_git rev-parse HEAD)
	boot_kernel "$arch" "$STEP_RESULT" "$STEP_MODULES" "$PAYLOAD" "$tree" "$STEP_BOOT_DIR"
	FORCE=1 series_extra_boots "$arch" "$STEP_RESULT" "$STEP_MODULES" "$PAYLOAD" "$tree" "$STEP_BOOT_DIR"
	boot_outcome "$STEP_BOOT_DIR"
}

# boot_outcome BOOT_DIR: the step's boot verdict: the boot's own, joined by
# the series' hook with its extra boots (series_outcome). Sets BOOT_STATUS
# (GOOD, BAD, TIMEOUT) and SERIES_NOTE_TEXT. Reads the results; writes
# nothing.
boot_outcome() {
	BOOT_STATUS=$(result_field "$1" status)
	series_outcome "$1"
}

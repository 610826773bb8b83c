#!/usr/bin/env bats
# The boot path on the fake kernel and the fake QEMU (tests/fakes/qemu), which
# replays console fixtures, hangs or dies: a fresh machine sets itself up;
# the series tested is named; bad arguments are errors that list the valid
# values; only the kernel's outcome is a verdict, and only it is cached;
# make bisect; the cache keys redo exactly what an input decides.

load helpers
bats_require_minimum_version 1.5.0

setup_file() { setup_fake_kernel_file; }

setup() {
	setup_test_work
	setup_fake_boot
	export CCACHE_DISABLE=1 ARCHES=x86_64 CONFIGS=x86_64 BOOT_TIMEOUT=30
	make_series
}

col() { tsv_cols "$WORK/results/bisect-boot/results.tsv" "$1" | tr '\n' ' '; }
boots() { grep -c . "$FAKE_QEMU_LOG" 2>/dev/null || echo 0; }
recorded_boots() { find "$WORK/results/boot" -name boot.info 2>/dev/null | wc -l; }

@test "fresh machine: bisect-boot imports, makes the worktree, applies the series, then runs" {
	export WORK=$BATS_TEST_TMPDIR/fresh
	export BASE_REPO=$WORK/base.git WORKTREE=$WORK/worktree
	run "$TOOLS/bisect-boot"
	[ "$status" -eq 0 ]
	[[ "$output" == *"setting up: the distro base is not imported in $BASE_REPO; importing it"* ]]
	[[ "$output" == *"setting up: no worktree at $WORKTREE; making one at the base (make worktree)"* ]]
	[[ "$output" == *"setting up: applying the series in $COMMITS (make am)"* ]]
	[[ "$output" == *"series: the worktree's HEAD "*", same as commits/ (3 commits)"* ]]
	[ "$(col step | wc -w)" -eq 4 ]
	[ "$(col boot)" = "GOOD GOOD GOOD GOOD " ]
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq 3 ]
	[[ "$(head -n 1 "$WORK/results/bisect-boot/results.md")" == "series: "*"same as commits/ (3 commits)" ]]
}

@test "an existing worktree is not touched; a series that is not commits/ is named so" {
	commit_change kernel/fork.c 's/return 12;/return 120;/' "kernel: a commit not exported"
	head=$(git -C "$WORKTREE" rev-parse HEAD)
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$head" ]
	[[ "$output" != *"setting up"* ]]
	[[ "$output" == *"series: "*"NOT the series in commits/: the worktree is ahead"* ]]
	[[ "$(head -n 1 "$WORK/results/bisect-build/results.md")" == *"NOT the series in commits/: the worktree is ahead"* ]]
	TIP=HEAD~2 run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[[ "$output" == *"series: TIP=HEAD~2 "*"NOT the series in commits/: TIP's 2 commits differ from it"* ]]
	git -C "$WORKTREE" reset -q --hard HEAD~1
	run "$TOOLS/build"
	[[ "$output" == *"series: the worktree's HEAD "*", same as commits/ (3 commits)"* ]]
}

@test "an unknown config or arch is an error listing the valid ones, for every tool" {
	for tool in bisect-build bisect-boot build boot bisect; do
		CONFIGS=x86_64-typo run "$TOOLS/$tool"
		[ "$status" -ne 0 ] && [ "$status" -ne 125 ]
		[[ "$output" == *"unknown config 'x86_64-typo' in CONFIGS="* ]]
		[[ "$output" == *"Valid configs: x86_64 x86_64-small x86_64-debug (or CONFIGS=all)"* ]]
		ARCHES=sparc64 run "$TOOLS/$tool"
		[ "$status" -ne 0 ] && [ "$status" -ne 125 ]
		[[ "$output" == *"unknown arch 'sparc64' in ARCHES="* ]]
		[[ "$output" == *"Known arches (configs/*.arch): i386 x86_64"* ]]
	done
	# tools/boot's status is a verdict: an error is not 1 (bad) but 255
	CONFIGS=x86_64-typo run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	CONFIGS=x86_64-typo run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[ ! -e "$WORK/results/build" ] && [ "$(boots)" -eq 0 ]
}

@test "an unknown KSTACK_FRAME_WARN_BOOTS is an error before anything is built, for every tool" {
	for tool in bisect-build bisect-boot build boot bisect; do
		KSTACK_FRAME_WARN_BOOTS=both run "$TOOLS/$tool"
		[ "$status" -ne 0 ] && [ "$status" -ne 125 ]
		[[ "$output" == *"KSTACK_FRAME_WARN_BOOTS=both is not known: give every or ends"* ]]
	done
	[ ! -e "$WORK/results/build" ] && [ "$(boots)" -eq 0 ]
}

@test "TIP=, GOOD= and BAD= that name no commit after the base are errors listing the series" {
	TIP=nosuch run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[[ "$output" == *"TIP=nosuch is not a commit in $BASE_REPO"* ]]
	[[ "$output" == *"kstack-base (the base)"* ]]
	[[ "$output" == *" kernel: make step 30 return 300"* ]]
	GOOD=nosuch run "$TOOLS/bisect"
	[ "$status" -eq 1 ]
	[[ "$output" == *"GOOD=nosuch is not a commit"* ]]
	BAD=nosuch run "$TOOLS/bisect"
	[ "$status" -eq 1 ]
	[[ "$output" == *"BAD=nosuch is not a commit"* ]]
	[ "$(boots)" -eq 0 ]
}

@test "boot: GOOD from the replayed console, with the overflow boot; a rerun is cached" {
	run "$TOOLS/boot"
	[ "$status" -eq 0 ]
	[[ "$output" == *"== x86_64: GOOD in "* ]]
	[[ "$output" == *"overflow boot (EXHAUST_STACK, which the stack check must catch): GOOD"* ]]
	[ "$(boots)" -eq 2 ]
	grep -q 'kstack_provoke=EXHAUST_STACK stack_check=150' "$FAKE_QEMU_LOG"
	run "$TOOLS/boot"
	[ "$status" -eq 0 ]
	[[ "$output" == *"== x86_64: GOOD (cached)"* ]]
	[ "$(boots)" -eq 2 ]
}

@test "an overflow boot that did not catch the overflow makes the step BAD, without editing the cache" {
	FAKE_QEMU_OVERFLOW=$KSTACK_ROOT/tests/fixtures/console/overflow-guard-page-x86_64.log run "$TOOLS/boot"
	[ "$status" -eq 1 ]
	[[ "$output" == *"== x86_64: BAD in "* ]]
	result=$(find "$WORK/results/boot" -maxdepth 2 -name result | head -n 1)
	grep -qx 'status=GOOD' "$result" # the boot itself was good; the step is not
}

@test "a hang is the kernel's TIMEOUT: exit 1, with the last console lines, and cached" {
	FAKE_QEMU=hang BOOT_TIMEOUT=2 run "$TOOLS/boot"
	[ "$status" -eq 1 ]
	[[ "$output" == *"== x86_64: TIMEOUT in "* ]]
	[[ "$output" == *"last console lines:"* ]]
	[ "$(recorded_boots)" -eq 2 ] # the boot and its overflow boot
}

@test "QEMU stopped or killed from outside, or unable to start: an error (255), nothing recorded" {
	FAKE_QEMU=term run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	[[ "$output" == *"QEMU was stopped from outside after "*"terminating on signal 15 from pid 4242"* ]]
	[[ "$output" == *"cannot test (exit 255)"* ]]
	FAKE_QEMU=die run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	[[ "$output" == *"QEMU exited 137 after "* ]]
	FAKE_QEMU=fail run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	[[ "$output" == *"QEMU exited 1 after "*"Could not open '/nonexistent'"* ]]
	[ "$(recorded_boots)" -eq 0 ]
	[[ "$output" != *"== x86_64: "* ]]
	run "$TOOLS/boot" # the next run boots: nothing was cached
	[ "$status" -eq 0 ]
	[[ "$output" == *"== x86_64: GOOD in "* ]]
}

@test "a payload disk that cannot be made is an error, never a BAD, and nothing is recorded" {
	cat >"$(stub_dir)/mkfs.ext4" <<'STUB'
#!/bin/sh
case " $* " in *" kstack-payload "*) echo "mkfs.ext4: No space left on device" >&2; exit 1 ;; esac
exec /sbin/mkfs.ext4 "$@"
STUB
	chmod +x "$(stub_dir)/mkfs.ext4"
	run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	[[ "$output" == *"could not make the payload disk"*"No space left on device"* ]]
	[ "$(boots)" -eq 0 ] && [ "$(recorded_boots)" -eq 0 ]
}

@test "a kernel image that cannot be copied is an error, never OK, and nothing is recorded" {
	cat >"$(stub_dir)/cp" <<'STUB'
#!/bin/sh
for last; do :; done
case "$last" in */results/build/*/bzImage) echo "cp: error writing '$last': No space left on device" >&2; exit 1 ;; esac
exec /bin/cp "$@"
STUB
	chmod +x "$(stub_dir)/cp"
	run "$TOOLS/bisect-build"
	[ "$status" -eq 1 ]
	[[ "$output" == *"could not copy the kernel image"* ]]
	[ -z "$(compgen -G "$WORK/results/build/*/result")" ]
	run "$TOOLS/boot"
	[ "$status" -eq 255 ]
	rm "$(stub_dir)/cp"
	run "$TOOLS/bisect-build"
	[ "$status" -eq 0 ]
	[ "$(tsv_cols "$WORK/results/bisect-build/results.tsv" cached | sort -u)" = no ]
}

@test "bisect: the first commit whose console is bad, from the replayed consoles" {
	tree2=$(git -C "$WORKTREE" rev-parse --short=12 'HEAD~1^{tree}')
	tree3=$(git -C "$WORKTREE" rev-parse --short=12 'HEAD^{tree}')
	FAKE_QEMU_BAD_TREES="$tree2 $tree3" run "$TOOLS/bisect"
	[ "$status" -eq 0 ]
	[[ "$output" == *"first bad commit: "*" x86/mm: halve the task stack"* ]]
	[ -z "$(git -C "$WORK/steps" bisect log 2>/dev/null)" ]
}

@test "bisect: a step that cannot be tested stops the bisection; no commit is marked" {
	FAKE_QEMU=fail run "$TOOLS/bisect"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the bisection stopped: a step could not be tested, for a reason that is not the kernel's"* ]]
	[[ "$output" != *"first bad commit"* ]]
	run ! grep -q 'is the first bad commit' "$WORK/results/bisect/bisect.log"
	run ! grep -q '^git bisect \(good\|bad\)' "$WORK/results/bisect/bisect-log.txt"
	[ "$(recorded_boots)" -eq 0 ]
}

@test "bisect --step: 0 good, 1 bad, 125 did not build, 255 cannot test" {
	steps=$(lib prepare_steps_worktree)
	lib checkout_step "$steps" "$(git -C "$WORKTREE" rev-parse HEAD)"
	run "$TOOLS/bisect" --step
	[ "$status" -eq 0 ]
	FAKE_QEMU_BAD_TREES=$(git -C "$WORKTREE" rev-parse --short=12 'HEAD^{tree}') FORCE=1 run "$TOOLS/bisect" --step
	[ "$status" -eq 1 ]
	FAKE_QEMU=die FORCE=1 run "$TOOLS/bisect" --step
	[ "$status" -eq 255 ]
	CONFIGS=nope run "$TOOLS/bisect" --step
	[ "$status" -eq 255 ]
	sed -i 's/return 5;/return 5 +;/' "$steps/kernel/fork.c"
	git -C "$steps" commit -q -a -m "kernel: break the build"
	run "$TOOLS/bisect" --step
	[ "$status" -eq 125 ]
}

@test "editing a test module builds the modules and boots again, not the kernels" {
	"$TOOLS/bisect-boot" 2>/dev/null
	before=$(boots)
	echo '/* edited */' >>"$GUEST_DIR/modules/kstack_deep.c"
	run "$TOOLS/bisect-boot"
	[ "$status" -eq 0 ]
	[ "$(col cached)" = "yes yes yes yes " ]  # kernels cached
	[ "$(col boot_cached)" = "no no no no " ]     # boots redone
	[ "$(boots)" -eq $((before * 2)) ]
	[ "$(find "$WORK/results/modules" -mindepth 1 -maxdepth 1 | wc -l)" -eq 8 ]
}

@test "editing a guest test rebuilds the payload and boots again; nothing else" {
	"$TOOLS/bisect-boot" 2>/dev/null
	modules=$(find "$WORK/results/modules" -mindepth 1 -maxdepth 1 | wc -l)
	echo '/* edited */' >>"$GUEST_DIR/tests/ok.c"
	run "$TOOLS/bisect-boot"
	[ "$status" -eq 0 ]
	[ "$(col cached)" = "yes yes yes yes " ]
	[ "$(col boot_cached)" = "no no no no " ]
	[ "$(find "$WORK/results/modules" -mindepth 1 -maxdepth 1 | wc -l)" -eq "$modules" ]
	[ "$(find "$WORK/payload/x86_64" -mindepth 1 -maxdepth 1 -name 'payload-*' | wc -l)" -eq 2 ]
	[ "$(grep -c . "$STUB_LOG")" -eq 1 ] # the image was made once
}

@test "cache keys: the payload's flags and the image's code count; tools/image does not" {
	payload=$(lib payload_hash x86_64)
	[ "$(lib eval 'GUEST_TEST_CFLAGS+=(-g); payload_hash x86_64')" != "$payload" ]
	image=$(lib image_recipe_hash x86_64)
	[ "$(lib eval 'eval "$(declare -f ensure_image | sed "s/debootstrap --variant/debootstrap --foreign --variant/")"; image_recipe_hash x86_64')" != "$image" ]
	root=$BATS_TEST_TMPDIR/root
	cp -a "$KSTACK_ROOT" "$root"
	echo '# a comment' >>"$root/tools/image"
	[ "$(bash -c '. "$0/tools/lib.sh"; image_recipe_hash x86_64' "$root")" = "$image" ]
	# the build's key does not hold the test modules
	build=$(lib build_key 0123 x86_64)
	echo '/* edited */' >>"$GUEST_DIR/modules/kstack_deep.c"
	[ "$(lib build_key 0123 x86_64)" = "$build" ]
}

@test "a build with a 4 KiB task stack runs the memory-pressure workload in a boot of its own, whose BAD makes the step BAD" {
	local b=$BATS_TEST_TMPDIR/build
	mkdir -p "$b"
	printf 'CONFIG_X86_TASK_STACK_ORDER=0\nCONFIG_X86_STACK_CHECK=y\n' >"$b/config"
	run lib series_boot_args "$b" i386
	ran_ok
	[ "$output" = "kstack_thread_size=4096 kstack_stock_thread_size=8192 kstack_stack_check=1 kstack_pressure=own-boot" ]
	lib pressure_boot_here "$b" i386
	# 8 KiB (i386's stock size, x86_64's small one) keeps it with the tests
	printf 'CONFIG_X86_TASK_STACK_ORDER=1\nCONFIG_X86_STACK_CHECK=y\n' >"$b/config"
	run lib series_boot_args "$b" i386
	[ "$output" = "kstack_thread_size=8192 kstack_stock_thread_size=8192 kstack_stack_check=1" ]
	! lib pressure_boot_here "$b" x86_64 || false
	# the pressure boot's verdict joins the step's, in words
	local d=$BATS_TEST_TMPDIR/boot
	mkdir -p "$d/pressure"
	touch "$d/pressure/boot.info"
	printf 'status=GOOD\noverflow_caught=yes\n' >"$d/pressure/result"
	printf '  stack-check: overflow: task stack 2444 of 4096 bytes used, less than 1696 left, entering switch_mm_irqs_off+0x0/0x3aa from flush_tlb_func+0x9a/0x19b\n' >"$d/pressure/verdict.txt"
	run bash -c '. "$0/tools/lib.sh"; BOOT_STATUS=GOOD; series_outcome "$1"; echo "$BOOT_STATUS$SERIES_NOTE_TEXT"' "$KSTACK_ROOT" "$d"
	[ "$output" = "GOOD, memory-pressure boot: stopped by the stack check's panic (task stack 2444 of 4096 bytes used entering switch_mm_irqs_off, canary intact)" ]
	printf 'status=GOOD\noverflow_caught=none\n' >"$d/pressure/result"
	run bash -c '. "$0/tools/lib.sh"; BOOT_STATUS=GOOD; series_outcome "$1"; echo "$BOOT_STATUS$SERIES_NOTE_TEXT"' "$KSTACK_ROOT" "$d"
	[ "$output" = "GOOD, memory-pressure boot: finished" ]
	printf 'status=BAD\noverflow_caught=no\n' >"$d/pressure/result"
	run bash -c '. "$0/tools/lib.sh"; BOOT_STATUS=GOOD; series_outcome "$1"; echo "$BOOT_STATUS$SERIES_NOTE_TEXT"' "$KSTACK_ROOT" "$d"
	[ "$output" = "BAD, memory-pressure boot: BAD" ]
}

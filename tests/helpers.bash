# shellcheck shell=bash
# Shared set-up for the tools' tests: a small fake "kernel" tarball, its
# base description, and a work folder of the test's own. Nothing here reads
# or writes the user's work folder.

KSTACK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=$KSTACK_ROOT/tools

# make_fake_kernel DIR: write DIR/linux-fake.tar.xz and DIR/upstream-base.txt
# (with the tarball's checksum; base_commit filled in by tools/import).
make_fake_kernel() {
	local dir=$1 src=$1/src/linux-fake
	mkdir -p "$src/arch/x86/include/asm" "$src/kernel" "$src/scripts" "$src/Documentation" \
		"$src/tools/testing/selftests"
	# The guest tests' harness comes from the base (tools/lib/payload.sh).
	printf '/* fake kselftest_harness.h */\n' >"$src/tools/testing/selftests/kselftest_harness.h"
	printf '/* fake kselftest.h */\n' >"$src/tools/testing/selftests/kselftest.h"
	printf 'Linux kernel, a fake one for the kstack tests.\n' >"$src/README"
	cat >"$src/arch/x86/include/asm/page_64_types.h" <<'EOF'
#ifndef _ASM_X86_PAGE_64_DEFS_H
#define _ASM_X86_PAGE_64_DEFS_H

#define THREAD_SIZE_ORDER	2
#define THREAD_SIZE  (PAGE_SIZE << THREAD_SIZE_ORDER)

#define IRQ_STACK_ORDER (2 + KASAN_STACK_ORDER)
#define IRQ_STACK_SIZE (PAGE_SIZE << IRQ_STACK_ORDER)

#endif /* _ASM_X86_PAGE_64_DEFS_H */
EOF
	local i
	for i in $(seq 1 40); do
		printf 'int fork_step_%d(void) { return %d; }\n' "$i" "$i"
	done >"$src/kernel/fork.c"
	printf 'config X86\n\tdef_bool y\n' >"$src/arch/x86/Kconfig"
	# Just enough of kbuild for tools/bisect-build: tinyconfig, the fragment
	# merge, olddefconfig, and an "all" that compiles kernel/fork.c with
	# $(CC) (so compiler errors and warnings are real) into vmlinux/bzImage.
	mkdir -p "$src/scripts/kconfig"
	cat >"$src/Makefile" <<'MAKEFILE'
VERSION = 6
PATCHLEVEL = 1
O ?= .
tinyconfig:
	mkdir -p $(O) && printf 'CONFIG_X86=y\n' >$(O)/.config
olddefconfig:
	@if [ -n "$$FAKE_CONFIG_SLEEP" ]; then sleep $$FAKE_CONFIG_SLEEP; fi
all:
	mkdir -p $(O)/arch/x86/boot
	@if [ -n "$$FAKE_BUILD_SLEEP" ]; then sleep $$FAKE_BUILD_SLEEP; fi
	$(CC) -Wall -c -o $(O)/fork.o kernel/fork.c
	cp $(O)/fork.o $(O)/vmlinux
	cp $(O)/vmlinux $(O)/arch/x86/boot/bzImage
modules:
	for f in $(M)/*.c; do cp $$f $${f%.c}.ko; done
MAKEFILE
	cat >"$src/scripts/kconfig/merge_config.sh" <<'SCRIPT'
#!/bin/sh
# fake: merge_config.sh -m -O DIR BASE FRAGMENT...: append the fragments
shift 3
base=$1
shift
cat "$@" >>"$base"
SCRIPT
	cat >"$src/scripts/checkpatch.pl" <<'SCRIPT'
#!/usr/bin/perl
# fake: one CHECK per "FIXME" the patch adds, one WARNING per "WARNME";
# with --terse (make review) one line each, else the summary line.
my $terse = grep { $_ eq '--terse' } @ARGV;
my @files = grep { !/^-/ } @ARGV;
my $name = @files ? $files[0] : '-';
my ($lines, $checks, $warnings) = (0, 0, 0);
my $in = \*STDIN;
if (@files && $files[0] ne '-') { open($in, '<', $files[0]) or die "$files[0]: $!"; }
while (<$in>) {
	$lines++;
	if (/^\+.*FIXME/) { $checks++; print "$name:$lines: CHECK: FIXME added\n" if $terse; }
	if (/^\+.*WARNME/) { $warnings++; print "$name:$lines: WARNING: WARNME added\n" if $terse; }
	# a finding in the commit message: checkpatch names no file
	if (/^Subject: .*MSGWARN/) { $warnings++; print ":$lines: WARNING: MSGWARN in the message\n" if $terse; }
}
print "total: 0 errors, $warnings warnings, $checks checks, $lines lines checked\n" unless $terse;
exit($warnings ? 1 : 0);
SCRIPT
	chmod +x "$src/scripts/checkpatch.pl" "$src/scripts/kconfig/merge_config.sh"
	# A file that the tree's own .gitignore hides: the import must keep it.
	# ... and Debian's packaging rule, which the import drops.
	printf '*.o\n#\n# Debian packaging\n/*\n!/debian/\n' >"$src/.gitignore"
	printf 'a tracked file that matches .gitignore\n' >"$src/kernel/kept.o"
	printf 'line one\r\nline two\r\n' >"$src/Documentation/crlf.txt"
	ln -s ../README "$src/Documentation/README.link"
	# More of a kernel tree for a test file that needs it (mail.bats).
	[ -z "${FAKE_KERNEL_EXTRA:-}" ] || cp -a "$FAKE_KERNEL_EXTRA"/. "$src"/
	tar -C "$dir/src" -cJf "$dir/linux-fake.tar.xz" linux-fake
	rm -rf "$dir/src"
	cat >"$dir/upstream-base.txt" <<EOF
# fake base for the kstack tests
package=kstack-fake-kernel
version=1.0-1
tarball=$dir/linux-fake.tar.xz
top_dir=linux-fake
sha256=$(sha256sum "$dir/linux-fake.tar.xz" | cut -d' ' -f1)
base_commit=unknown
EOF
}

# One fake kernel per test file, imported once: $FIXTURE holds the tarball,
# the base file and a base repo that tests copy rather than re-import.
setup_fake_kernel_file() {
	export FIXTURE=$BATS_FILE_TMPDIR/fixture
	mkdir -p "$FIXTURE"
	make_fake_kernel "$FIXTURE"
	BASE_FILE=$FIXTURE/upstream-base.txt BASE_REPO=$FIXTURE/base.git \
		WORK=$FIXTURE "$TOOLS/import" --update-base 2>/dev/null
}

# Per test: a work folder, a copy of the imported base repo, a commits/ dir,
# and a worktree path. Git identity is fixed so runs compare.
setup_test_work() {
	export WORK=$BATS_TEST_TMPDIR/work
	mkdir -p "$WORK"
	cp -a "$FIXTURE/base.git" "$WORK/base.git"
	export BASE_REPO=$WORK/base.git
	export BASE_FILE=$FIXTURE/upstream-base.txt
	export WORKTREE=$WORK/worktree
	export COMMITS=$WORK/commits
	export BRANCH=kstack-test
	mkdir -p "$COMMITS"
	export GIT_CONFIG_GLOBAL=$BATS_TEST_TMPDIR/gitconfig
	git config --global user.name "Test Author"
	git config --global user.email "test@example.org"
	unset FORCE
}

# commit_change FILE SED_EXPR SUBJECT: edit a worktree file and commit it.
commit_change() {
	sed -i "$2" "$WORKTREE/$1"
	git -C "$WORKTREE" commit -q -a -s -m "$3" -m "Why: the test series needs a commit here."
}

# A three-commit series in the worktree, exported to commits/.
make_series() {
	"$TOOLS/worktree" 2>/dev/null
	commit_change kernel/fork.c 's/return 3;/return 33;/' "kernel: make step 3 return 33"
	commit_change arch/x86/include/asm/page_64_types.h \
		's/THREAD_SIZE_ORDER\t2/THREAD_SIZE_ORDER\t1/' "x86/mm: halve the task stack"
	commit_change kernel/fork.c 's/return 30;/return 300;/' "kernel: make step 30 return 300"
	"$TOOLS/export" 2>/dev/null
}

# The tree id of every commit base..HEAD in a worktree, one a line.
step_trees() {
	local base
	base=$(git --git-dir="$BASE_REPO" rev-parse kstack-base)
	git -C "$1" rev-list --reverse "$base..HEAD" |
		while read -r c; do git -C "$1" rev-parse "$c^{tree}"; done
}

count_patches() { find "$COMMITS" -name '*.patch' | wc -l; }

# A folder of stub commands put first on PATH for one test.
stub_dir() {
	local dir=$BATS_TEST_TMPDIR/stubs
	mkdir -p "$dir"
	printf '%s\n' "$dir"
}

# write_debootstrap_stub DIR: a debootstrap that makes a tiny root (and logs
# its arguments to STUB_LOG), or fails like an unreachable mirror when
# DEBOOTSTRAP_FAIL is set.
write_debootstrap_stub() {
	cat >"$1/debootstrap" <<'EOF'
#!/bin/sh
echo "debootstrap $*" >>"${STUB_LOG:-/dev/null}"
if [ -n "$DEBOOTSTRAP_FAIL" ]; then
	echo "E: Failed getting release file $6/dists/bookworm/Release"
	exit 1
fi
root=$(eval echo "\${$(($# - 1))}")
mkdir -p "$root/sbin" "$root/etc" "$root/var/cache/apt/archives" "$root/var/lib/apt/lists"
echo bookworm >"$root/etc/debian_version"
EOF
	chmod +x "$1/debootstrap"
}

# For boots of the fake kernel: the fake QEMU (tests/fakes/qemu) first on
# PATH under both arches' names, replaying the clean x86_64 console (and the
# caught overflow for an overflow boot); a stub debootstrap; a copy of
# guest-image/ whose one guest test is trivial; TCG.
setup_fake_boot() {
	local stubs fixtures=$KSTACK_ROOT/tests/fixtures/console
	stubs=$(stub_dir)
	ln -sf "$KSTACK_ROOT/tests/fakes/qemu" "$stubs/qemu-system-x86_64"
	ln -sf "$KSTACK_ROOT/tests/fakes/qemu" "$stubs/qemu-system-i386"
	write_debootstrap_stub "$stubs"
	export PATH=$stubs:$PATH MIRROR=http://mirror.invalid/debian ACCEL=tcg
	export STUB_LOG=$BATS_TEST_TMPDIR/stub.log
	export GUEST_DIR=$BATS_TEST_TMPDIR/guest-image
	rm -rf "$GUEST_DIR" && cp -a "$KSTACK_ROOT/guest-image" "$GUEST_DIR"
	rm "$GUEST_DIR"/tests/*.c
	printf '#include <stdio.h>\nint main(void) { return puts("ok 1 fake") < 0; }\n' >"$GUEST_DIR/tests/ok.c"
	export FAKE_QEMU_CONSOLE=$fixtures/clean-x86_64.log
	export FAKE_QEMU_OVERFLOW=$fixtures/overflow-caught-x86_64.log
	export FAKE_QEMU_BAD_CONSOLE=$fixtures/panic-no-root.log
	export FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log
	unset FAKE_QEMU FAKE_QEMU_BAD_TREES
}

# tsv_cols TSV NAME...: the named columns of every row of a results.tsv,
# tab-separated, found by the header's names (an unknown name fails).
tsv_cols() {
	local tsv=$1
	shift
	awk -F '\t' -v names="$*" '
		NR == 1 { n = split(names, want, " "); for (i = 1; i <= NF; i++) at[$i] = i
			for (k = 1; k <= n; k++) if (!(want[k] in at)) { print "no column " want[k] >"/dev/stderr"; exit 2 }
			next }
		{ line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? "\t" : "") $(at[want[k]]); print line }' "$tsv"
}

# ran_ok: after `run`, succeed if the command exited 0; else print why (the
# tail of its output and the verdict of each boot it names, what CI shows
# of a failed test) and fail.
# shellcheck disable=SC2154 # status and output: set by bats' run
ran_ok() {
	[ "$status" -eq 0 ] && return 0
	echo "exit status $status; the last lines of its output:"
	tail -n 25 <<<"$output"
	local verdict
	while read -r verdict; do
		[ -f "$verdict" ] || continue
		echo "== $verdict (without its metrics):"
		grep -v '^metric ' "$verdict" | head -n 60
	done < <(sed -n 's/^ *verdict: //p' <<<"$output" | sort -u)
	return 1
}

# lib FUNCTION ARGS...: call a tools/lib.sh function in a shell of its own.
lib() {
	bash -c '. "$0/tools/lib.sh"; "$@"' "$KSTACK_ROOT" "$@"
}

# For tests/e2e: make test's own work folder (KSTACK_TEST_WORK), the base
# import shared with the user's work folder, a copy of commits/, and the
# test's own worktree on a branch of its own.
setup_e2e_work() {
	: "${KSTACK_TEST_WORK:?run through tools/test}"
	export WORK=$KSTACK_TEST_WORK
	export BASE_REPO=${KSTACK_USER_WORK:?}/base.git
	export COMMITS=$WORK/commits
	export BRANCH=kstack-test WORKTREE=$WORK/worktree
	rm -rf "$COMMITS" && mkdir -p "$COMMITS"
	cp "$KSTACK_ROOT"/commits/*.patch "$COMMITS"/
}

# ... with the series applied in that worktree; the bisect runs from
# FROM=KSTACK_E2E_FROM (tools/test) on. e2e_steps: how many steps they run.
setup_e2e_series() {
	setup_e2e_work
	FORCE=1 "$TOOLS/worktree" 2>/dev/null
	"$TOOLS/am" 2>/dev/null
	export FROM=${KSTACK_E2E_FROM-HEAD~1}
}
e2e_steps() {
	local from=${FROM:-kstack-base}
	echo $(($(git -C "$WORKTREE" rev-list --count "$from..HEAD") + 1))
}

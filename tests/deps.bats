#!/usr/bin/env bats
# make deps and the package check every tool runs first: stubs stand in for
# dpkg-query, id and apt-get, so nothing is installed by the test.

load helpers

setup() {
	stubs=$(stub_dir)
	# Everything is installed except the packages named in $MISSING.
	cat >"$stubs/dpkg-query" <<'EOF'
#!/bin/sh
pkg=$(eval echo "\${$#}")
for m in $MISSING; do
	[ "$m" = "$pkg" ] && { echo "dpkg-query: no packages found matching $pkg" >&2; exit 1; }
done
printf 'ii '
EOF
	printf '#!/bin/sh\necho "${FAKE_UID:-0}"\n' >"$stubs/id"
	printf '#!/bin/sh\necho "apt-get $*" >>"%s/apt.log"\nexit "${APT_STATUS:-0}"\n' \
		"$BATS_TEST_TMPDIR" >"$stubs/apt-get"
	chmod +x "$stubs"/*
	export PATH=$stubs:$PATH
}

@test "nothing missing: deps installs nothing" {
	run "$TOOLS/deps"
	[ "$status" -eq 0 ]
	[[ "$output" == *"packages present"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/apt.log" ]
}

@test "not root: a missing package stops with the exact apt-get line" {
	MISSING="ccache b4" FAKE_UID=1000 run "$TOOLS/deps"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing Debian packages: ccache b4"* ]]
	[[ "$output" == *"apt-get install -y --no-install-recommends ccache b4"* ]]
	[[ "$output" == *"as root"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/apt.log" ]
}

@test "root: only the missing packages are installed" {
	MISSING="qemu-system-x86 debootstrap" run "$TOOLS/deps"
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/apt.log")" = "apt-get install -y --no-install-recommends qemu-system-x86 debootstrap" ]
}

@test "root, install fails: apt-get update once, then a clear error" {
	MISSING="b4" APT_STATUS=100 run "$TOOLS/deps"
	[ "$status" -eq 1 ]
	[[ "$output" == *"apt-get update failed"* ]]
	grep -qx 'apt-get update' "$BATS_TEST_TMPDIR/apt.log"
}

@test "a tool that needs a missing package checks before it does anything" {
	setup_fake_kernel_file
	setup_test_work
	MISSING="git" FAKE_UID=1000 run "$TOOLS/worktree"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing Debian packages: git"* ]]
	[ ! -e "$WORKTREE" ]
}

@test "import installs the package that brings a missing tarball, then says if it is still missing" {
	setup_fake_kernel_file
	setup_test_work
	sed "s|^tarball=.*|tarball=$WORK/nowhere.tar.xz|" "$BASE_FILE" >"$WORK/base.txt"
	MISSING="kstack-fake-kernel" BASE_FILE=$WORK/base.txt BASE_REPO=$WORK/fresh.git \
		run "$TOOLS/import"
	[ "$status" -eq 1 ]
	[ "$(cat "$BATS_TEST_TMPDIR/apt.log")" = "apt-get install -y --no-install-recommends kstack-fake-kernel" ]
	[[ "$output" == *"$WORK/nowhere.tar.xz is missing"* ]]
	[[ "$output" == *"apt-get install --reinstall kstack-fake-kernel"* ]]
	[ ! -e "$WORK/fresh.git" ]
}

@test "import with the package installed but its tarball gone installs nothing and says to reinstall" {
	setup_fake_kernel_file
	setup_test_work
	sed "s|^tarball=.*|tarball=$WORK/nowhere.tar.xz|" "$BASE_FILE" >"$WORK/base.txt"
	BASE_FILE=$WORK/base.txt BASE_REPO=$WORK/fresh.git run "$TOOLS/import"
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/apt.log" ]
	[[ "$output" == *"Debian package kstack-fake-kernel"* ]]
	[[ "$output" == *"apt-get install --reinstall kstack-fake-kernel"* ]]
}

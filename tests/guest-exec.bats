#!/usr/bin/env bats
# The image build on a host whose kernel does not run the guest's i386
# binaries (32-bit emulation off): qemu-i386-static is registered with
# binfmt_misc, exactly once, and a host that still cannot run them is an
# error. Stubs stand in for gcc (its probe "runs" once the handler is
# registered), dpkg-query and dpkg; BINFMT_DIR is a folder of the test.

load helpers

setup() {
	stubs=$(stub_dir)
	export BINFMT_DIR=$BATS_TEST_TMPDIR/binfmt
	mkdir -p "$BINFMT_DIR"
	: >"$BINFMT_DIR/register"
	# every package is installed
	printf '#!/bin/sh\nprintf "ii "\n' >"$stubs/dpkg-query"
	printf '#!/bin/sh\necho amd64\n' >"$stubs/dpkg"
	# the probe runs once the handler is in the register file, unless NEVER_RUNS
	cat >"$stubs/gcc" <<'EOS'
#!/bin/sh
while [ "$#" -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '#!/bin/sh\necho probe >>"%s/probes"\n[ -z "$NEVER_RUNS" ] && grep -q "^:kstack-qemu-i386:M::" "%s/register"\n' \
	"$BINFMT_DIR" "$BINFMT_DIR" >"$out"
chmod +x "$out"
EOS
	chmod +x "$stubs"/*
	export PATH=$stubs:$PATH
}

guest_exec() {
	bash -c '. "$0/tools/lib.sh"; load_arch i386; ensure_guest_exec' "$KSTACK_ROOT"
}

@test "a host that cannot run i386 binaries gets qemu-i386-static registered, with i386's ELF magic and flag F" {
	run guest_exec
	[ "$status" -eq 0 ]
	[[ "$output" == *"does not run i386 binaries"* ]]
	[[ "$output" == *"registering qemu-i386-static"* ]]
	[ "$(cat "$BINFMT_DIR/register")" = ':kstack-qemu-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-i386-static:F' ]
	[ "$(grep -c . "$BINFMT_DIR/probes")" -eq 2 ] # before and after
}

@test "a host that runs them registers nothing" {
	printf '%s' ':kstack-qemu-i386:M::' >"$BINFMT_DIR/register"
	cp "$BINFMT_DIR/register" "$BATS_TEST_TMPDIR/before"
	run guest_exec
	[ "$status" -eq 0 ]
	[[ "$output" != *"registering"* ]]
	cmp "$BINFMT_DIR/register" "$BATS_TEST_TMPDIR/before"
	[ "$(grep -c . "$BINFMT_DIR/probes")" -eq 1 ]
}

@test "a host that still cannot run them is an error that says what to do" {
	NEVER_RUNS=1 run guest_exec
	[ "$status" -eq 1 ]
	[[ "$output" == *"still cannot run i386 binaries"* ]]
	[[ "$output" == *"ia32_emulation=on"* ]]
}

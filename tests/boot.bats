#!/usr/bin/env bats
# The guest image and payload checks, with stubs for debootstrap: the image
# is rebuilt when its recipe changes and only then, a mirror that cannot be
# reached is a clear error, a payload for the wrong arch is refused.

load helpers


setup() {
	export WORK=$BATS_TEST_TMPDIR/work
	mkdir -p "$WORK"
	export GUEST_DIR=$BATS_TEST_TMPDIR/guest-image
	cp -a "$KSTACK_ROOT/guest-image" "$GUEST_DIR"
	stubs=$(stub_dir)
	write_debootstrap_stub "$stubs"
	export PATH=$stubs:$PATH STUB_LOG=$BATS_TEST_TMPDIR/stub.log
	export MIRROR=http://mirror.invalid/debian
}

@test "the image is built from the recipe with debootstrap and mkfs.ext4 -d, and the init is in it" {
	run lib ensure_image x86_64
	[ "$status" -eq 0 ]
	img=$WORK/image/x86_64/root.img
	[ -f "$img" ] && [ -f "$img.recipe" ]
	grep -q -- '--variant=minbase --arch=amd64 --include=kmod,stress-ng bookworm' "$STUB_LOG"
	grep -q 'http://mirror.invalid/debian' "$STUB_LOG"
	debugfs -R 'stat /sbin/kstack-init' "$img" 2>/dev/null | grep -q 'Mode:  0755'
	[ -z "$(ls -d "$WORK"/image/x86_64/tmp.* 2>/dev/null)" ]
}

@test "an up-to-date image is not rebuilt; a changed recipe rebuilds it" {
	lib ensure_image x86_64
	run lib ensure_image x86_64
	[ "$(grep -c . "$STUB_LOG")" -eq 1 ]
	sed -i 's/^packages=.*/packages=kmod stress-ng strace/' "$GUEST_DIR/recipe"
	lib ensure_image x86_64
	[ "$(grep -c . "$STUB_LOG")" -eq 2 ]
	grep -q -- '--include=kmod,stress-ng,strace' "$STUB_LOG"
}

@test "an image whose recipe hash is missing (an interrupted build) is not trusted" {
	lib ensure_image x86_64
	rm "$WORK/image/x86_64/root.img.recipe"
	lib ensure_image x86_64
	[ "$(grep -c . "$STUB_LOG")" -eq 2 ]
}

@test "a mirror that cannot be reached is a clear error, and no image is left" {
	DEBOOTSTRAP_FAIL=1 run lib ensure_image i386
	[ "$status" -eq 1 ]
	[[ "$output" == *"debootstrap of bookworm for i386 from http://mirror.invalid/debian failed"* ]]
	[[ "$output" == *"E: Failed getting release file"* ]]
	[[ "$output" == *"MIRROR="* ]]
	[ ! -e "$WORK/image/i386/root.img" ]
}

@test "the mirror comes from apt's own configuration" {
	unset MIRROR
	run lib apt_mirror bookworm
	[ "$status" -eq 0 ]
	[[ "$output" == http* ]]
}

@test "a test payload for the wrong arch is refused before boot" {
	mkdir -p "$WORK/payload/tests"
	cp /bin/true "$WORK/payload/tests/true64"
	run lib check_payload_arch "$WORK/payload" i386
	[ "$status" -eq 1 ]
	[[ "$output" == *"test payload for the wrong arch: true64"* ]]
	[[ "$output" == *"are not i386 binaries"* ]]
	run lib check_payload_arch "$WORK/payload" x86_64
	[ "$status" -eq 0 ]
}

# shellcheck shell=bash
# tools/lib/payload.sh: The guest tests, built static per arch, that go on the
# payload disk.

# The flags every guest test is built with, besides the arch's guest_cflags.
GUEST_TEST_CFLAGS=(-static -O2 -Wall -Werror -pthread)

# payload_hash ARCH: what decides the payload of ARCH (sources, harness
# from the base, flags, compiler, the code that builds it).
payload_hash() {
	load_arch "$1"
	{
		printf 'cflags %s %s\n' "${guest_cflags[*]}" "${GUEST_TEST_CFLAGS[*]}"
		declare -f ensure_payload check_payload_arch
		cat "$GUEST_DIR"/tests/*.c "$GUEST_DIR/run-tests"
		git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest_harness.h" \
			"$BASE_TAG:tools/testing/selftests/kselftest.h"
		gcc --version | sed -n 1p
	} | sha256sum | cut -c1-16
}

# elf_matches FILE CLASS MACHINE: true when FILE is an ELF of that kind.
elf_matches() {
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ] &&
		[ "$(od -An -t u1 -j 4 -N 1 "$1" | tr -d ' ')" = "$2" ] &&
		[ "$(od -An -t u2 -j 18 -N 2 "$1" | tr -d ' ')" = "$3" ]
}

# check_payload_arch DIR ARCH: refuse test binaries built for another arch.
check_payload_arch() {
	local dir=$1 arch=$2 file wrong=()
	load_arch "$arch"
	for file in "$dir"/tests/*; do
		elf_matches "$file" "$guest_elf_class" "$guest_elf_machine" || wrong+=("$(basename "$file")")
	done
	[ "${#wrong[@]}" -eq 0 ] || die "test payload for the wrong arch: ${wrong[*]} in $dir/tests" \
		"are not $arch binaries (ELF class $guest_elf_class, machine $guest_elf_machine)." \
		"Refusing to boot; check guest_cflags in configs/$arch.arch."
}

# ensure_payload ARCH: build the guest tests of ARCH (static, with the
# kernel's kselftest_harness.h from the base) into a folder with the guest's
# runner; sets PAYLOAD to its path. Cached by payload_hash. boot_kernel puts it, with
# the test modules of the kernel booted, on the guest's second disk.
ensure_payload() {
	local arch=$1 hash dir payload stage
	hash=$(payload_hash "$arch")
	load_arch "$arch"
	dir=$WORK/payload/$arch
	payload=$dir/payload-$hash
	PAYLOAD=$payload
	[ ! -d "$payload" ] || return 0
	stage=$dir/stage.$$
	rm -rf "$dir"/stage.* && mkdir -p "$stage/tests" "$stage/include"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest_harness.h" >"$stage/include/kselftest_harness.h"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest.h" >"$stage/include/kselftest.h"
	local src
	for src in "$GUEST_DIR"/tests/*.c; do
		gcc "${guest_cflags[@]}" "${GUEST_TEST_CFLAGS[@]}" -I"$stage/include" \
			-o "$stage/tests/$(basename "$src" .c)" "$src" >&2 ||
			die "the guest test $src does not build for $arch" \
				"(gcc ${guest_cflags[*]} ${GUEST_TEST_CFLAGS[*]}; i386 needs gcc-multilib)"
	done
	rm -rf "$stage/include"
	install -m 0755 "$GUEST_DIR/run-tests" "$stage/run"
	check_payload_arch "$stage" "$arch"
	mv "$stage" "$payload"
}

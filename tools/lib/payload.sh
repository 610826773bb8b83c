# shellcheck shell=bash
# tools/lib/payload.sh: What goes on the payload disk, built static per arch:
# the guest tests (guest-image/tests/), or for a bench boot the guest
# benchmark (guest-image/bench/), with the guest's runner.

# The flags every guest binary is built with, besides the arch's guest_cflags
# (and -I for the kselftest headers and guest-image/include/).
GUEST_TEST_CFLAGS=(-static -O2 -Wall -Werror -pthread)

# PAYLOAD_KINDS: tests (every boot of a step) and bench (tools/bench): the
# folder of guest-image/ whose C files each become one binary.
PAYLOAD_KINDS=(tests bench)

# payload_hash ARCH [KIND]: what decides the payload of ARCH (sources, the
# shared header, harness from the base, flags, compiler, the code that
# builds it). KIND: tests (default) or bench.
payload_hash() {
	local kind=${2:-tests}
	load_arch "$1"
	{
		printf 'cflags %s %s\n' "${guest_cflags[*]}" "${GUEST_TEST_CFLAGS[*]}"
		declare -f ensure_payload check_payload_arch
		printf 'kind %s\n' "$kind"
		cat "$GUEST_DIR/$kind"/*.c "$GUEST_DIR"/include/*.h "$GUEST_DIR/run-tests"
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

# check_payload_arch DIR ARCH: refuse guest binaries built for another arch.
check_payload_arch() {
	local dir=$1 arch=$2 file wrong=()
	load_arch "$arch"
	for file in "$dir"/tests/* "$dir"/bench/*; do
		[ -e "$file" ] || continue
		elf_matches "$file" "$guest_elf_class" "$guest_elf_machine" || wrong+=("$(basename "$file")")
	done
	[ "${#wrong[@]}" -eq 0 ] || die "test payload for the wrong arch: ${wrong[*]} in $dir" \
		"are not $arch binaries (ELF class $guest_elf_class, machine $guest_elf_machine)." \
		"Refusing to boot; check guest_cflags in configs/$arch.arch."
}

# ensure_payload ARCH [KIND]: build the guest binaries of KIND (tests, the
# default, or bench) for ARCH (static, with the kernel's
# kselftest_harness.h from the base and guest-image/include/) into
# KIND/ of a folder with the guest's runner; sets PAYLOAD to its path.
# Cached by payload_hash. boot_kernel puts it, with the test modules of the
# kernel booted, on the guest's second disk.
ensure_payload() {
	local arch=$1 kind=${2:-tests} hash dir payload stage
	in_list "$kind" "${PAYLOAD_KINDS[@]}" || die "no payload kind '$kind' (known: ${PAYLOAD_KINDS[*]})"
	hash=$(payload_hash "$arch" "$kind")
	load_arch "$arch"
	dir=$WORK/payload/$arch
	payload=$dir/$([ "$kind" = tests ] && echo payload || echo "$kind")-$hash
	PAYLOAD=$payload
	[ ! -d "$payload" ] || return 0
	stage=$dir/stage.$$
	rm -rf "$dir"/stage.* && mkdir -p "$stage/$kind" "$stage/include"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest_harness.h" >"$stage/include/kselftest_harness.h"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest.h" >"$stage/include/kselftest.h"
	local src
	for src in "$GUEST_DIR/$kind"/*.c; do
		gcc "${guest_cflags[@]}" "${GUEST_TEST_CFLAGS[@]}" -I"$stage/include" -I"$GUEST_DIR/include" \
			-o "$stage/$kind/$(basename "$src" .c)" "$src" >&2 ||
			die "the guest $([ "$kind" = tests ] && echo test || echo benchmark) $src does not build for $arch" \
				"(gcc ${guest_cflags[*]} ${GUEST_TEST_CFLAGS[*]}; i386 needs gcc-multilib)"
	done
	rm -rf "$stage/include"
	install -m 0755 "$GUEST_DIR/run-tests" "$stage/run"
	check_payload_arch "$stage" "$arch"
	mv "$stage" "$payload"
}

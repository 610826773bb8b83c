# shellcheck shell=bash
# tools/lib/image.sh: The guest root image: debootstrap of guest-image/recipe,
# mkfs.ext4 -d.

# recipe_field KEY: a value of guest-image/recipe.
recipe_field() { sed -n "s/^$1=//p" "$GUEST_DIR/recipe" | tail -n 1; }

# apt_mirror SUITE: the Debian mirror this machine's apt uses for SUITE,
# from deb822 .sources files or one-line sources.list entries.
apt_mirror() {
	local suite=$1 found
	found=$({
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$suite" '
			/^$/ { if (deb && has) { print uri; exit } deb = has = 0; uri = ""; next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
			END { if (deb && has) print uri }'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk -v suite="$suite" '$1 == "deb" { u = ($2 ~ /^\[/) ? $3 : $2; s = ($2 ~ /^\[/) ? $4 : $3; if (s == suite) print u }'
	} || true)
	printf '%s\n' "${found%%$'\n'*}"
}

# image_recipe_hash ARCH: what decides the image of ARCH: the Debian arch,
# the recipe, the guest's init and the code that makes the image (not the
# mirror it came from).
image_recipe_hash() {
	load_arch "$1"
	{
		printf 'debian_arch=%s\n' "$debian_arch"
		cat "$GUEST_DIR/recipe" "$GUEST_DIR/kstack-init"
		declare -f ensure_image recipe_field
	} | sha256sum | cut -c1-16
}

image_path() { printf '%s/image/%s/root.img\n' "$WORK" "$1"; }

# The name the i386 handler is registered under in binfmt_misc, and where.
I386_BINFMT=kstack-qemu-i386
BINFMT_DIR=${BINFMT_DIR:-/proc/sys/fs/binfmt_misc}

# can_run_guest_binaries: does this host run the i386 image's binaries? A
# tiny static i386 program (guest_cflags), which only exits, is the probe.
can_run_guest_binaries() {
	local probe
	probe=$(mktemp -d)
	printf '%s\n' 'void _start(void) { __asm__ volatile("movl $1, %eax; xorl %ebx, %ebx; int $0x80"); }' \
		>"$probe/probe.c"
	if ! gcc "${guest_cflags[@]}" -nostdlib -static -o "$probe/probe" "$probe/probe.c" 2>"$probe/gcc.log"; then
		cat "$probe/gcc.log" >&2
		rm -rf "$probe"
		die "gcc could not build a $debian_arch probe program (${guest_cflags[*]})" \
			"Install gcc-multilib (make deps), then run this again."
	fi
	local ok=0
	"$probe/probe" 2>/dev/null || ok=$?
	rm -rf "$probe"
	[ "$ok" -eq 0 ]
}

# ensure_guest_exec: debootstrap's second stage runs the image's own
# binaries in a chroot. An x86_64 host runs i386 ones natively unless its
# kernel has 32-bit emulation off (ia32_emulation=off, or a kernel built so):
# then register qemu-i386-static with binfmt_misc (flag F: it is opened
# now, so it works inside the chroot), once per host boot, and say so.
ensure_guest_exec() {
	[ "$debian_arch" != "$(dpkg --print-architecture)" ] || return 0
	# the probe and the handler below are i386's (ELF machine 3)
	[ "$guest_elf_machine" = 3 ] || return 0
	can_run_guest_binaries && return 0
	say "this host's kernel does not run $debian_arch binaries (32-bit emulation off):" \
		"registering qemu-i386-static with binfmt_misc as $I386_BINFMT for debootstrap"
	ensure_packages qemu-user-static
	if [ ! -e "$BINFMT_DIR/register" ]; then
		mount -t binfmt_misc binfmt_misc "$BINFMT_DIR" ||
			die "could not mount binfmt_misc on $BINFMT_DIR to run $debian_arch binaries" \
				"Boot the host with ia32_emulation=on, or build the image on another host."
	fi
	if [ ! -e "$BINFMT_DIR/$I386_BINFMT" ]; then
		printf '%s' ":$I386_BINFMT:M::"'\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-i386-static:F' \
			>"$BINFMT_DIR/register" ||
			die "could not register qemu-i386-static in $BINFMT_DIR" \
				"Boot the host with ia32_emulation=on, or build the image on another host."
	fi
	can_run_guest_binaries || die "this host still cannot run $debian_arch binaries with qemu-i386-static registered" \
		"See $BINFMT_DIR/$I386_BINFMT; boot the host with ia32_emulation=on, or build the image on another host."
}

# ensure_image ARCH: build the root image of ARCH unless it is up to date.
ensure_image() {
	local arch=$1 img hash
	img=$(image_path "$arch")
	hash=$(image_recipe_hash "$arch")
	load_arch "$arch"
	if [ -f "$img" ] && [ "$(cat "$img.recipe" 2>/dev/null)" = "$hash" ] && [ "${FORCE_IMAGE:-0}" != 1 ]; then
		return 0
	fi
	ensure_packages "${IMAGE_PACKAGES[@]}"
	[ "$(id -u)" -eq 0 ] || die "building the guest image needs root (debootstrap)" \
		"Run 'make image' as root once; the image is then reused by everybody."
	ensure_guest_exec
	local suite mirror packages dir tmp start
	suite=$(recipe_field suite)
	mirror=${MIRROR:-$(apt_mirror "$suite")}
	[ -n "$mirror" ] || die "no Debian mirror for $suite in this machine's apt configuration" \
		"Name one with MIRROR=<url of a Debian mirror>."
	packages=$(recipe_field packages)
	dir=$(dirname "$img")
	tmp=$dir/tmp.$$
	rm -rf "$dir"/tmp.*
	mkdir -p "$tmp"
	start=$(now)
	say "debootstrap $suite ($debian_arch, $(recipe_field variant), +${packages// /,}) from $mirror"
	if ! debootstrap --variant="$(recipe_field variant)" --arch="$debian_arch" \
		--include="${packages// /,}" "$suite" "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
		cp "$tmp/debootstrap.log" "$dir/debootstrap-failed.log"
		rm -rf "$tmp"
		die "debootstrap of $suite for $debian_arch from $mirror failed" \
			"$(grep -m3 -E '^[EW]:' "$dir/debootstrap-failed.log" || true)" \
			"Full log: $dir/debootstrap-failed.log. Is the mirror reachable? Another" \
			"one can be named with MIRROR=."
	fi
	install -m 0755 "$GUEST_DIR/kstack-init" "$tmp/root/sbin/kstack-init"
	rm -rf "$tmp"/root/var/cache/apt/archives/*.deb "$tmp"/root/var/lib/apt/lists/*
	mkfs.ext4 -q -F -L kstack-root -d "$tmp/root" "$tmp/root.img" "$(recipe_field size)" >/dev/null
	rm -f "$img.recipe"
	mv "$tmp/root.img" "$img"
	printf '%s\n' "$hash" >"$img.recipe"
	rm -rf "$tmp"
	say "image for $arch: $img ($(du -h --apparent-size "$img" | cut -f1)) in $(elapsed_since "$start") s"
}

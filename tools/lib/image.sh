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

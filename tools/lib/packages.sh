# shellcheck shell=bash
# tools/lib/packages.sh: The Debian packages the project needs, and installing
# the missing ones.

# --- Debian packages ---------------------------------------------------------

# Every package the project needs on the host. tools/deps installs them all;
# each tool asks for the ones it uses with ensure_packages.
# shellcheck disable=SC2034 # used by tools/deps
ALL_PACKAGES=(git xz-utils linux-source-6.1 gcc make flex bison bc libelf-dev
	libssl-dev cpio ccache b4 qemu-system-x86 debootstrap e2fsprogs bats
	shellcheck gcc-multilib libc6-dev perl python3-ply python3-git codespell git-email gnuplot-nox
	linux-config-6.1 binutils)

missing_packages() {
	local pkg status
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
		case "$status" in
		ii*) ;;
		*) printf '%s\n' "$pkg" ;;
		esac
	done
}

# ensure_packages PKG...: install those that are missing (as root), or stop
# with the exact apt-get line to run.
ensure_packages() {
	local missing
	mapfile -t missing < <(missing_packages "$@")
	[ "${#missing[@]}" -eq 0 ] && return 0
	local line="apt-get install -y --no-install-recommends ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		die "missing Debian packages: ${missing[*]}" \
			"kstack installs them itself only when run as root. Run, as root:" \
			"  $line" \
			"then run this command again."
	fi
	say "installing missing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# A fresh machine may have no package lists yet: update once and retry.
	if ! apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
		apt-get update >&2 ||
			die "apt-get update failed; the package mirror may be unreachable" \
				"run: apt-get update && $line"
		apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "apt-get could not install: ${missing[*]}" "run: $line" \
				"and read apt-get's message above."
	fi
}

# shellcheck disable=SC2034 # used by the tools
BOOT_PACKAGES=(qemu-system-x86 gcc libc6-dev gcc-multilib e2fsprogs)

# shellcheck disable=SC2034 # used by the tools
BUILD_PACKAGES=(gcc make flex bison bc libelf-dev libssl-dev cpio ccache perl)
# shellcheck disable=SC2034 # used by the tools
IMAGE_PACKAGES=(debootstrap e2fsprogs gcc gcc-multilib)

# make review: checkpatch runs scripts/spdxcheck.py (python3-ply, python3-git);
# codespell is used when present. git-email: SEND= only.
# shellcheck disable=SC2034 # used by the tools
REVIEW_PACKAGES=(git perl python3-ply python3-git codespell)

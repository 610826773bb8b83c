# shellcheck shell=bash
# Shared helpers for the kstack tools: paths, messages, packages, the base
# description and the series stamp. Sourced by every script in tools/.

set -euo pipefail

KSTACK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOL_NAME=$(basename "$0")

# Everything big lives in one work folder outside the checkout.
WORK=${WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/kstack}
BASE_REPO=${BASE_REPO:-$WORK/base.git}
WORKTREE=${WORKTREE:-$WORK/worktree}
BRANCH=${BRANCH:-kstack}
COMMITS=${COMMITS:-$KSTACK_ROOT/commits}
BASE_FILE=${BASE_FILE:-$KSTACK_ROOT/upstream-base.txt}
# The tag in BASE_REPO that names the imported base commit.
BASE_TAG=kstack-base

say() { printf '%s: %s\n' "$TOOL_NAME" "$*" >&2; }

# die MESSAGE...: print a paragraph (each argument one line) and exit 1.
die() {
	local first=$1
	shift
	printf '%s: error: %s\n' "$TOOL_NAME" "$first" >&2
	local line
	for line in "$@"; do
		printf '  %s\n' "$line" >&2
	done
	exit 1
}

usage_error() { die "$1" "usage: $USAGE"; }

# Each tool sets USAGE and calls this with its arguments first.
handle_help() {
	case "${1:-}" in
	-h | --help)
		printf 'usage: %s\n' "$USAGE"
		exit 0
		;;
	esac
}

# Seconds since the epoch, with a fraction, for "took N s" lines.
now() { date +%s.%N; }
elapsed_since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# --- Debian packages ---------------------------------------------------------

# Every package the project needs on the host. tools/deps installs them all;
# each tool asks for the ones it uses with ensure_packages.
# shellcheck disable=SC2034 # used by tools/deps
ALL_PACKAGES=(git xz-utils linux-source-6.1 gcc make flex bison bc libelf-dev
	libssl-dev cpio ccache b4 qemu-system-x86 debootstrap e2fsprogs bats
	shellcheck)

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

# --- the base: upstream-base.txt ---------------------------------------------

# base_field KEY: the value of KEY=VALUE in the base file.
base_field() {
	[ -f "$BASE_FILE" ] || die "no base description at $BASE_FILE" \
		"It names the distro source the series applies to (see README.md)."
	local value
	value=$(sed -n "s/^$1=//p" "$BASE_FILE" | tail -n 1)
	[ -n "$value" ] || die "$BASE_FILE has no '$1=' line" \
		"Expected keys: package, version, tarball, sha256, top_dir, base_commit."
	printf '%s\n' "$value"
}

# The base commit as recorded in BASE_REPO (empty when not imported).
imported_base() {
	git --git-dir="$BASE_REPO" rev-parse -q --verify "refs/tags/$BASE_TAG^{commit}" 2>/dev/null || true
}

# The base commit, or stop: the base must have been imported.
require_base() {
	local base
	base=$(imported_base)
	[ -n "$base" ] || die "the distro base is not imported in $BASE_REPO" \
		"Run: make worktree"
	printf '%s\n' "$base"
}

# --- the worktree -------------------------------------------------------------

# wt_git ARGS...: git in the worktree.
wt_git() { git -C "$WORKTREE" "$@"; }

worktree_exists() {
	[ -e "$WORKTREE/.git" ] && wt_git rev-parse --git-dir >/dev/null 2>&1
}

require_worktree() {
	worktree_exists || die "no worktree at $WORKTREE" "Run: make worktree"
}

# True while git am (or a rebase) is stopped in the worktree.
worktree_in_am() {
	local gitdir
	gitdir=$(wt_git rev-parse --absolute-git-dir)
	[ -d "$gitdir/rebase-apply" ] || [ -d "$gitdir/rebase-merge" ]
}

# Uncommitted changes in the worktree, as 'git status --short' lines.
worktree_dirt() { wt_git status --porcelain --untracked-files=normal; }

# --- the series as files ------------------------------------------------------

# format-patch options that make the export byte-stable: no version
# signature, a zero commit id in the From line, "[PATCH]" with no n/m (so
# adding a patch does not rewrite the others), full blob ids (stable as the
# repo grows, and what git am -3 needs), and no user or system config.
export_series_to() {
	local out=$1 base=$2
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git -C "$WORKTREE" format-patch --quiet --no-signature --zero-commit \
		--no-numbered --full-index --find-renames --no-cover-letter \
		--no-thread --no-notes -o "$out" "$base..HEAD" >/dev/null
}

# series_manifest DIR: "sha256  name" per patch file, sorted by name.
series_manifest() {
	local dir=$1
	(
		cd "$dir"
		shopt -s nullglob
		local files=(*.patch)
		[ "${#files[@]}" -eq 0 ] || sha256sum -- "${files[@]}"
	)
}

# The stamp records the series as it was when the worktree and commits/ last
# agreed (after am or export): status and export compare against it.
stamp_file() { printf '%s/kstack-synced\n' "$(wt_git rev-parse --absolute-git-dir)"; }

write_stamp() {
	local stamp
	stamp=$(stamp_file)
	series_manifest "$COMMITS" >"$stamp.tmp"
	mv "$stamp.tmp" "$stamp"
}

# Patch file names in DIR, one a line, in order.
patch_names() { series_manifest "$1" | sed 's/^[0-9a-f]*  //'; }

# commits_patches: the patch files of the series, in name order.
commits_patches() {
	shopt -s nullglob
	local files=("$COMMITS"/*.patch)
	shopt -u nullglob
	[ "${#files[@]}" -eq 0 ] || printf '%s\n' "${files[@]}"
}

# make_temp_dir: set TEMP_DIR to a new folder, removed when the tool exits.
# (Not in $(...): the trap would fire when that subshell ends.)
make_temp_dir() {
	TEMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kstack.XXXXXX")
	trap 'rm -rf "$TEMP_DIR"' EXIT
}

# Committer identity for git am when the user has none configured.
default_identity() {
	if ! git config user.email >/dev/null 2>&1; then
		export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-kstack}
		export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-kstack@localhost}
	fi
}

# unexported_commits BASE EXPORT_DIR: the worktree's commits (short id and
# subject, one a line) whose patch, as export writes it into EXPORT_DIR, is
# neither in commits/ nor was there when the two last agreed (the stamp): the
# work that would be lost without an export.
unexported_commits() {
	local base=$1 dir=$2
	export_series_to "$dir" "$base"
	local known commits files i hash
	known=$({
		series_manifest "$COMMITS"
		cat "$(stamp_file)" 2>/dev/null || true
	} | cut -d' ' -f1)
	mapfile -t commits < <(wt_git rev-list --reverse "$base..HEAD")
	mapfile -t files < <(patch_names "$dir")
	for i in "${!commits[@]}"; do
		hash=$(sha256sum <"$dir/${files[$i]}" | cut -d' ' -f1)
		if ! grep -qxF "$hash" <<<"$known"; then
			wt_git log -1 --format='%h %s' "${commits[$i]}"
		fi
	done
}

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
	shellcheck gcc-multilib libc6-dev)

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

# --- arches, configs and kernel builds ---------------------------------------

CONFIGS_DIR=${CONFIGS_DIR:-$KSTACK_ROOT/configs}
RESULTS=${RESULTS:-$WORK/results}
JOBS=${JOBS:-$(nproc)}
# ccache in the user's cache folder, bounded; paths relative to the parent of
# the work folder, so the same layout elsewhere (make test's) hits too.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$WORK")}
# shellcheck disable=SC2034 # used by the tools
BUILD_PACKAGES=(gcc make flex bison bc libelf-dev libssl-dev cpio ccache perl)

known_arches() {
	local file
	for file in "$CONFIGS_DIR"/*.arch; do
		[ -e "$file" ] && basename "$file" .arch
	done
}

# load_arch NAME: set kernel_arch, base_config, fragments, configs,
# main_config, kernel_image from configs/NAME.arch.
load_arch() {
	local file=$CONFIGS_DIR/$1.arch
	[ -f "$file" ] || die "unknown arch '$1'" \
		"Known arches (configs/*.arch): $(known_arches | tr '\n' ' ')"
	kernel_arch='' base_config='' main_config='' kernel_image='' debian_arch=''
	fragments=() configs=() qemu_args=() guest_cflags=()
	qemu_binary='' console='' task_stack_bytes='' guest_elf_class='' guest_elf_machine=''
	# shellcheck source=/dev/null
	. "$file"
}

# arch_of CONFIG: the arch a config belongs to (the part before the first -).
arch_of() { printf '%s\n' "${1%%-*}"; }

# selected_configs: the configs to work on, one a line, from ARCHES= (default:
# every arch) and CONFIGS= (default: each arch's main config; "all": every
# config of those arches; else a list separated by spaces or commas).
selected_configs() {
	local arches=() arch config wanted=() all=()
	read -r -a arches <<<"${ARCHES:-$(known_arches | tr '\n' ' ')}"
	[ "${#arches[@]}" -gt 0 ] || die "no arches: configs/*.arch is empty"
	for arch in "${arches[@]//,/ }"; do
		load_arch "$arch"
		all+=("${configs[@]}")
		case "${CONFIGS:-}" in
		"") wanted+=("$main_config") ;;
		all) wanted+=("${configs[@]}") ;;
		esac
	done
	if [ -n "${CONFIGS:-}" ] && [ "$CONFIGS" != all ]; then
		for config in ${CONFIGS//,/ }; do
			grep -qxF "$config" < <(printf '%s\n' "${all[@]}") ||
				die "unknown config '$config' for ARCHES='${arches[*]}'" \
					"Known configs: ${all[*]} (or CONFIGS=all)"
			wanted+=("$config")
		done
	fi
	printf '%s\n' "${wanted[@]}"
}

# config_fragments CONFIG: the fragment files of a config, in merge order:
# the arch's, then for a config ARCH-VARIANT its own, ARCH-VARIANT.config.
config_fragments() {
	local config=$1 name
	load_arch "$(arch_of "$config")"
	local names=("${fragments[@]}")
	[ "$config" = "$(arch_of "$config")" ] || names+=("$config.config")
	for name in "${names[@]}"; do
		[ -f "$CONFIGS_DIR/$name" ] || die "config $config needs the fragment configs/$name, which is missing" \
			"Fragments there: $(cd "$CONFIGS_DIR" && printf '%s ' ./*.config | sed 's#\./##g')"
		printf '%s\n' "$CONFIGS_DIR/$name"
	done
}

# config_identity CONFIG: everything besides the source tree that decides
# what a build of CONFIG gives: the kernel arch, the base config, the
# fragments, the toolchain (not the arch's boot settings). Part of the key of
# a cached result.
config_identity() {
	local config=$1
	load_arch "$(arch_of "$config")"
	printf 'config %s\nkernel_arch %s\nbase_config %s\n' "$config" "$kernel_arch" "$base_config"
	local fragment
	while read -r fragment; do
		printf '== %s\n' "$(basename "$fragment")"
		cat "$fragment"
	done < <(config_fragments "$config")
	printf '== test modules\n'
	cat "$GUEST_DIR"/modules/* 2>/dev/null || true
	gcc --version | head -n 1
	ld --version | head -n 1
	make --version | head -n 1
}

# kernel_make SRC O CONFIG TARGET...: make in SRC, out of tree in O, with
# ccache and fixed build user, host and timestamp (a reproducible version
# string that names the source tree instead of a date).
kernel_make() {
	local src=$1 o=$2 config=$3
	shift 3
	load_arch "$(arch_of "$config")"
	local stamp
	stamp="kstack $(git -C "$src" rev-parse --short=12 'HEAD^{tree}' 2>/dev/null || echo unknown)"
	make -C "$src" O="$o" ARCH="$kernel_arch" CC="ccache gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_USER=kstack KBUILD_BUILD_HOST=kstack \
		KBUILD_BUILD_TIMESTAMP="$stamp" -j"$JOBS" "$@"
}

# merge_kernel_config SRC O CONFIG: base config, then the fragments with the
# kernel's merge_config.sh, then olddefconfig; then check that nothing a
# fragment asked for was dropped (tools/check-config), the check's report
# in O/kstack-config-check.txt.
merge_kernel_config() {
	local src=$1 o=$2 config=$3 frags
	mapfile -t frags < <(config_fragments "$config")
	load_arch "$(arch_of "$config")"
	mkdir -p "$o"
	kernel_make "$src" "$o" "$config" "$base_config" &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$o" "$o/.config" "${frags[@]}" &&
		kernel_make "$src" "$o" "$config" olddefconfig &&
		"$KSTACK_ROOT/tools/check-config" "$src" "$o/.config" "${frags[@]}" \
			>"$o/kstack-config-check.txt"
}

# warning_keys LOG SRC O: the compiler and linker warnings of a build log,
# one a line, sorted, keyed by file and message without line and column
# numbers (and without the tree's path), so moved code is not "new".
warning_keys() {
	sed -n -E -e "s#$2/##g; s#$3/##g" \
		-e '/(warning|WARNING):/ { s/^([^ :]+):[0-9]+(:[0-9]+)?: /\1: /; s/^[[:space:]]+//; p; }' "$1" |
		sort -u
}

# first_error_line LOG: the line that best names why a build failed.
first_error_line() {
	grep -m1 -E ': (fatal )?error: |undefined reference to|Error [0-9]+' "$1" ||
		grep -m1 -E 'error|\*\*\*' "$1" || tail -n 1 "$1"
}

# text_size VMLINUX: the text section size in bytes.
text_size() { size "$1" | awk 'NR == 2 { print $1 }'; }

# build_step SRC O CONFIG RESULT_DIR: merge CONFIG and build SRC in O; write
# the result into RESULT_DIR atomically (a half-written result is never
# seen): result (key=value: status OK/FAIL, seconds, warnings, bzimage_bytes,
# text_bytes, first_error), warnings.txt, config.log, build.log (the
# config log when merging failed), config-check.txt, config, bzImage.
# Returns 0 when the build passed.
build_step() {
	local src=$1 o=$2 config=$3 result_dir=$4
	local tmp=$result_dir.tmp.$$ start status=OK first_error='' seconds
	rm -rf "$tmp" && mkdir -p "$tmp" "$o"
	start=$(now)
	rm -f "$o/kstack-config-check.txt"
	if ! merge_kernel_config "$src" "$o" "$config" >"$tmp/config.log" 2>&1; then
		status=FAIL
		cp "$tmp/config.log" "$tmp/build.log"
		if [ -s "$o/kstack-config-check.txt" ] && grep -q '^dropped: ' "$o/kstack-config-check.txt"; then
			first_error="config: $(grep -m1 '^dropped: ' "$o/kstack-config-check.txt") ($(grep -c '^dropped: ' "$o/kstack-config-check.txt") dropped in all)"
		else
			first_error="config: $(first_error_line "$tmp/config.log")"
		fi
	elif ! kernel_make "$src" "$o" "$config" all >"$tmp/build.log" 2>&1; then
		status=FAIL
		first_error=$(first_error_line "$tmp/build.log")
	elif ! build_test_modules "$src" "$o" "$config" "$tmp" >>"$tmp/build.log" 2>&1; then
		status=FAIL
		first_error="test modules: $(first_error_line "$tmp/build.log")"
	fi
	seconds=$(elapsed_since "$start")
	[ -f "$o/kstack-config-check.txt" ] && cp "$o/kstack-config-check.txt" "$tmp/config-check.txt"
	[ -f "$o/.config" ] && cp "$o/.config" "$tmp/config"
	warning_keys "$tmp/build.log" "$src" "$o" >"$tmp/warnings.txt"
	load_arch "$(arch_of "$config")"
	local bzimage_bytes=0 text_bytes=0
	if [ "$status" = OK ]; then
		bzimage_bytes=$(stat -c %s "$o/$kernel_image")
		text_bytes=$(text_size "$o/vmlinux")
		cp "$o/$kernel_image" "$tmp/bzImage"
	fi
	{
		printf 'status=%s\nseconds=%s\n' "$status" "$seconds"
		printf 'warnings=%s\n' "$(grep -c . "$tmp/warnings.txt" || true)"
		printf 'bzimage_bytes=%s\ntext_bytes=%s\n' "$bzimage_bytes" "$text_bytes"
		printf 'first_error=%s\n' "$(printf '%s' "$first_error" | tr '\t\n' '  ' | cut -c1-300)"
	} >"$tmp/result"
	rm -rf "$result_dir"
	mv "$tmp" "$result_dir"
	[ "$status" = OK ]
}

# build_test_modules SRC O CONFIG RESULT_TMP: build guest-image/modules
# against the kernel just built in O (a copy: kbuild writes into M=) and
# keep the .ko files in RESULT_TMP/modules, for the guest to insmod.
build_test_modules() {
	local src=$1 o=$2 config=$3 tmp=$4
	mkdir -p "$tmp/modules"
	compgen -G "$GUEST_DIR/modules/*.c" >/dev/null || return 0
	rm -rf "$tmp/modules-src"
	cp -r "$GUEST_DIR/modules" "$tmp/modules-src"
	kernel_make "$src" "$o" "$config" M="$tmp/modules-src" modules || return 1
	cp "$tmp"/modules-src/*.ko "$tmp/modules/"
	rm -rf "$tmp/modules-src"
}

# result_field DIR KEY: a field of a result written by build_step.
result_field() { sed -n "s/^$2=//p" "$1/result"; }

# --- runs of many steps -------------------------------------------------------

# The columns of a run's results.tsv, one row per step and config. The boot
# columns are "-" in a run that only builds.
RESULTS_TSV_HEADER=$(printf '%s\t' step commit subject config status cached seconds \
	warnings new_warnings bzimage_bytes text_bytes text_delta checkpatch result_dir \
	first_error boot boot_cached boot_seconds tests_passed tests_failed \
	kernel_trouble new_kernel_trouble boot_dir least_stack_bytes_left | sed 's/\t$//')

# prepare_run_dir NAME: a new folder for this run's results and logs.
prepare_run_dir() {
	local dir
	dir=$RESULTS/runs/$1-$(date +%Y%m%d-%H%M%S)-$$
	mkdir -p "$dir"
	printf '%s\n' "$dir"
}

# publish_run_dir DIR NAME: point RESULTS/NAME at DIR (atomically).
publish_run_dir() {
	ln -sfn "$1" "$RESULTS/.$2.new"
	mv -T "$RESULTS/.$2.new" "$RESULTS/$2"
}

# prepare_steps_worktree: the detached worktree in which steps are checked
# out and built (WORK/steps), made on first use; prints its path.
prepare_steps_worktree() {
	local dir=$WORK/steps
	git --git-dir="$BASE_REPO" worktree prune
	if ! [ -e "$dir/.git" ]; then
		rm -rf "$dir"
		git --git-dir="$BASE_REPO" worktree add -q --detach "$dir" "$(require_base)" >&2
	fi
	printf '%s\n' "$dir"
}

# checkout_step DIR COMMIT: check COMMIT out in the steps worktree, dropping
# anything a stopped run left there. Only files that differ are rewritten, so
# make rebuilds only what the step changed.
checkout_step() {
	git -C "$1" checkout -q -f --detach "$2"
	git -C "$1" clean -q -ffdx
}

# checkpatch_step COMMIT SRC: "errors/warnings/checks" of checkpatch.pl
# --strict on the commit's patch, cached by the patch and the script.
checkpatch_step() {
	local commit=$1 src=$2 patch key dir
	patch=$(git --git-dir="$BASE_REPO" format-patch -1 --stdout --no-signature "$commit")
	key=$( {
		printf '%s\n' "$patch"
		sha256sum "$src/scripts/checkpatch.pl"
	} | sha256sum | cut -c1-16)
	dir=$RESULTS/checkpatch/$key
	if [ ! -f "$dir/counts" ]; then
		mkdir -p "$dir.tmp.$$"
		(cd "$src" && printf '%s\n' "$patch" | perl scripts/checkpatch.pl --strict --no-summary-file - \
			>"$dir.tmp.$$/checkpatch.txt" 2>&1) || true
		sed -n -E 's#^total: ([0-9]+) errors, ([0-9]+) warnings, ([0-9]+) checks.*#\1/\2/\3#p' \
			"$dir.tmp.$$/checkpatch.txt" >"$dir.tmp.$$/counts"
		[ -s "$dir.tmp.$$/counts" ] || echo "?" >"$dir.tmp.$$/counts"
		rm -rf "$dir" && mv "$dir.tmp.$$" "$dir"
	fi
	cat "$dir/counts"
}

# ccache_hit_rate STATSLOG: "H of N compilations from the cache (P %)".
ccache_hit_rate() {
	[ -f "$1" ] || {
		echo "no compilations"
		return
	}
	CCACHE_STATSLOG=$1 ccache --show-log-stats -v 2>/dev/null | awk '
		/^ *Hits:/ && !h { h = $2 } /^ *Misses:/ && !m { m = $2 }
		END { n = h + m; if (n == 0) print "no compilations"; else printf "%d of %d compilations from the cache (%.0f %%)\n", h, n, 100 * h / n }'
}

# --- the guest image ------------------------------------------------------------

GUEST_DIR=${GUEST_DIR:-$KSTACK_ROOT/guest-image}
# shellcheck disable=SC2034 # used by the tools
IMAGE_PACKAGES=(debootstrap e2fsprogs)

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

# image_recipe_hash ARCH: what decides the image of ARCH.
image_recipe_hash() {
	load_arch "$1"
	{
		printf 'debian_arch=%s\n' "$debian_arch"
		cat "$GUEST_DIR/recipe" "$GUEST_DIR/kstack-init" "$KSTACK_ROOT/tools/image"
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
			"$(grep -E '^[EW]:' "$dir/debootstrap-failed.log" | head -n 3)" \
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

# --- the test payload and booting -------------------------------------------------

# shellcheck disable=SC2034 # used by the tools
BOOT_PACKAGES=(qemu-system-x86 gcc libc6-dev gcc-multilib e2fsprogs)
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}

# payload_hash ARCH: what decides the payload of ARCH (sources, harness
# from the base, flags, compiler).
payload_hash() {
	load_arch "$1"
	{
		printf 'cflags %s\n' "${guest_cflags[*]}"
		cat "$GUEST_DIR"/tests/*.c "$GUEST_DIR/run-tests"
		git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest_harness.h" \
			"$BASE_TAG:tools/testing/selftests/kselftest.h"
		gcc --version | head -n 1
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
# runner; prints its path. Cached by payload_hash. boot_kernel puts it, with
# the test modules of the kernel booted, on the guest's second disk.
ensure_payload() {
	local arch=$1 hash dir payload stage
	hash=$(payload_hash "$arch")
	load_arch "$arch"
	dir=$WORK/payload/$arch
	payload=$dir/payload-$hash
	if [ -d "$payload" ]; then
		printf '%s\n' "$payload"
		return 0
	fi
	stage=$dir/stage.$$
	rm -rf "$dir"/stage.* && mkdir -p "$stage/tests" "$stage/include"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest_harness.h" >"$stage/include/kselftest_harness.h"
	git --git-dir="$BASE_REPO" show "$BASE_TAG:tools/testing/selftests/kselftest.h" >"$stage/include/kselftest.h"
	local src
	for src in "$GUEST_DIR"/tests/*.c; do
		gcc "${guest_cflags[@]}" -static -O2 -Wall -Werror -pthread -I"$stage/include" \
			-o "$stage/tests/$(basename "$src" .c)" "$src" >&2 ||
			die "the guest test $src does not build for $arch" \
				"(gcc ${guest_cflags[*]} -static; i386 needs gcc-multilib)"
	done
	rm -rf "$stage/include"
	install -m 0755 "$GUEST_DIR/run-tests" "$stage/run"
	check_payload_arch "$stage" "$arch"
	mv "$stage" "$payload"
	printf '%s\n' "$payload"
}

# detect_accel ARCH KERNEL: kvm when a quick probe boots KERNEL under KVM
# here, else tcg (KVM guests hang on some machines). ACCEL= forces one. The
# probe's answer is kept per host kernel and QEMU version.
detect_accel() {
	local arch=$1 kernel=$2
	if [ -n "${ACCEL:-}" ]; then
		printf '%s\n' "$ACCEL"
		return
	fi
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		echo tcg
		return
	fi
	load_arch "$arch"
	local probe_file key answer=tcg
	key="$(uname -r) $($qemu_binary --version | head -n 1)"
	probe_file=$WORK/accel-probe
	if [ -f "$probe_file" ] && [ "$(sed -n 1p "$probe_file")" = "$key" ]; then
		sed -n 2p "$probe_file"
		return
	fi
	if timeout 20 "$qemu_binary" -accel kvm "${qemu_args[@]}" -nographic -no-reboot \
		-kernel "$kernel" -append "console=$console panic=-1" </dev/null 2>&1 |
		grep -q -m1 'Linux version'; then
		answer=kvm
	fi
	mkdir -p "$WORK"
	printf '%s\n%s\n' "$key" "$answer" >"$probe_file"
	say "KVM probe: guests $([ "$answer" = kvm ] && echo run || echo hang or fail) under KVM here; using $answer"
	printf '%s\n' "$answer"
}

# task_stack_bytes_of BUILD_DIR ARCH: the task stack size a build has: from
# its .config's CONFIG_X86_TASK_STACK_ORDER (plus KASAN's order on x86_64)
# where the tree has the option, else the arch's stock size.
task_stack_bytes_of() {
	local config=$1/config order
	load_arch "$2"
	order=$(sed -n 's/^CONFIG_X86_TASK_STACK_ORDER=//p' "$config" 2>/dev/null)
	if [ -z "$order" ]; then
		printf '%s\n' "$task_stack_bytes"
		return
	fi
	if [ "$kernel_arch" = x86_64 ] && grep -q '^CONFIG_KASAN=y' "$config"; then
		order=$((order + 1))
	fi
	printf '%s\n' "$((4096 << order))"
}

# has_stack_check BUILD_DIR: the build has the series' stack check.
has_stack_check() {
	grep -q '^CONFIG_X86_STACK_CHECK=y' "$1/config" 2>/dev/null
}

# boot_kernel ARCH KERNEL PAYLOAD TREE RESULT_DIR [PROVOKE [ARGS]]: boot
# KERNEL on the root image with the payload disk, console to
# RESULT_DIR/console.log, killed at BOOT_TIMEOUT, how it ran in boot.info
# (written atomically with the log); then its verdict (boot_verdict).
# Returns 0 when GOOD. With PROVOKE (an LKDTM crash type), the guest
# provokes that crash instead of running the tests, and the verdict expects
# the stack check to catch it. ARGS: more kernel parameters.
boot_kernel() {
	local arch=$1 kernel=$2 payload=$3 tree=$4 result_dir=$5 provoke=${6:-} args=${7:-}
	local tmp=$result_dir.tmp.$$ accel start rc=0 check=0
	load_arch "$arch"
	rm -rf "$tmp" && mkdir -p "$tmp"
	accel=$(detect_accel "$arch" "$kernel")
	! has_stack_check "$(dirname "$kernel")" || check=1
	local cmdline="console=$console root=/dev/vda rw init=/sbin/kstack-init panic=-1"
	cmdline+=" kstack_tree=$tree kstack_thread_size=$(task_stack_bytes_of "$(dirname "$kernel")" "$arch")"
	cmdline+=" kstack_stock_thread_size=$task_stack_bytes kstack_stack_check=$check"
	[ -z "$provoke" ] || cmdline+=" kstack_provoke=$provoke"
	[ -z "$args" ] || cmdline+=" $args"
	printf '%s -accel %s %s -kernel %s -append "%s"\n' "$qemu_binary" "$accel" \
		"${qemu_args[*]}" "$kernel" "$cmdline" >"$tmp/qemu-command"
	# The second disk: the payload, and the test modules of this kernel.
	cp -r "$payload" "$tmp/payload"
	if [ -d "$(dirname "$kernel")/modules" ]; then
		cp -r "$(dirname "$kernel")/modules" "$tmp/payload/modules"
	fi
	mkfs.ext4 -q -F -L kstack-payload -d "$tmp/payload" "$tmp/payload.img" 64M >/dev/null
	rm -rf "$tmp/payload"
	start=$(now)
	timeout --kill-after=5 "$BOOT_TIMEOUT" "$qemu_binary" -accel "$accel" "${qemu_args[@]}" \
		-nographic -no-reboot -kernel "$kernel" -append "$cmdline" \
		-drive "file=$(image_path "$arch"),if=virtio,format=raw,snapshot=on" \
		-drive "file=$tmp/payload.img,if=virtio,format=raw,readonly=on" \
		</dev/null >"$tmp/console.log" 2>&1 || rc=$?
	rm -f "$tmp/payload.img"
	printf 'seconds=%s\naccel=%s\nqemu_exit=%s\nprovoke=%s\n' "$(elapsed_since "$start")" "$accel" "$rc" \
		"${provoke:--}" >"$tmp/boot.info"
	rm -rf "$result_dir"
	mv "$tmp" "$result_dir"
	boot_verdict "$result_dir"
}

# boot_verdict DIR: (re)read DIR/console.log with tools/verdict into
# verdict.txt and result (status GOOD/BAD/TIMEOUT, seconds, tests, trouble).
# Cheap, so a cached boot is read again by the current parser. Returns 0
# when GOOD.
boot_verdict() {
	local dir=$1 flags=() vstatus=0 rc provoke
	rc=$(sed -n 's/^qemu_exit=//p' "$dir/boot.info")
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || flags+=(--timed-out)
	provoke=$(sed -n 's/^provoke=//p' "$dir/boot.info")
	[ -z "$provoke" ] || [ "$provoke" = - ] || flags+=(--expect-overflow)
	"$KSTACK_ROOT/tools/verdict" "$dir/console.log" "${flags[@]}" >"$dir/verdict.txt.tmp" 2>&1 || vstatus=$?
	{
		sed -n 's/^verdict=/status=/p' "$dir/verdict.txt.tmp"
		cat "$dir/boot.info"
		grep -E '^(tests_passed|tests_failed|kernel_trouble|uptime_at_userspace|least_stack_bytes_left|stack_check_warnings|overflow_caught)=' \
			"$dir/verdict.txt.tmp"
	} >"$dir/result.tmp"
	grep -q '^status=' "$dir/result.tmp" || printf 'status=BAD\n' >>"$dir/result.tmp"
	mv "$dir/verdict.txt.tmp" "$dir/verdict.txt"
	mv "$dir/result.tmp" "$dir/result"
	[ "$vstatus" -eq 0 ]
}

# OVERFLOW_CRASH: what the overflow boot provokes (LKDTM's deep recursion).
# OVERFLOW_ARGS: a threshold the kernel must refuse at boot, keeping 50%
# (the verdict's metric stack_check_boot_param_refused).
OVERFLOW_CRASH=EXHAUST_STACK
OVERFLOW_ARGS=stack_check=150

# overflow_boot ARCH BUILD_DIR PAYLOAD TREE BOOT_DIR: for a build with the
# stack check, a second boot (BOOT_DIR/overflow, cached like the first) that
# provokes a stack overflow, which the check must catch: warn, report, then
# panic. Its outcome joins BOOT_DIR/result (overflow_caught=, and status BAD
# when it was not caught).
overflow_boot() {
	local arch=$1 build_dir=$2 payload=$3 tree=$4 boot_dir=$5 dir caught
	has_stack_check "$build_dir" || return 0
	dir=$boot_dir/overflow
	if [ ! -f "$dir/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		boot_kernel "$arch" "$build_dir/bzImage" "$payload" "$tree" "$dir" "$OVERFLOW_CRASH" "$OVERFLOW_ARGS" || true
	else
		boot_verdict "$dir" || true
	fi
	caught=$(result_field "$dir" overflow_caught)
	[ "$(result_field "$dir" status)" = GOOD ] || caught=no
	sed -i '/^overflow_caught=/d' "$boot_dir/result"
	printf 'overflow_caught=%s\n' "${caught:-no}" >>"$boot_dir/result"
	if [ "$caught" != yes ] && [ "$(result_field "$boot_dir" status)" = GOOD ]; then
		sed -i 's/^status=GOOD$/status=BAD/' "$boot_dir/result"
	fi
}

# overflow_note BOOT_DIR: ", EXHAUST_STACK overflow caught by the stack
# check: yes|no" when the boot had an overflow boot.
overflow_note() {
	local caught
	caught=$(result_field "$1" overflow_caught)
	[ -z "$caught" ] || [ "$caught" = - ] || printf ', %s overflow caught by the stack check: %s' "$OVERFLOW_CRASH" "$caught"
}

# --- one step: build (cached), then boot (cached) -----------------------------

# build_key TREE CONFIG: the cache key of building TREE in CONFIG.
build_key() {
	printf 'tree %s\n%s\n' "$1" "$(config_identity "$2")" | sha256sum | cut -c1-16
}

# boot_key BUILD_KEY ARCH PAYLOAD: the cache key of booting a build: the
# kernel, the image recipe, the test payload, and how QEMU is run (the
# arch's settings and the code of boot_kernel itself).
boot_key() {
	load_arch "$2"
	{
		printf '%s\n' "$1" "$(image_recipe_hash "$2")" "$(basename "$3")" "$qemu_binary" \
			"${qemu_args[*]}" "$console" "$task_stack_bytes" "$BOOT_TIMEOUT" "${ACCEL:-auto}"
		declare -f boot_kernel task_stack_bytes_of has_stack_check overflow_boot
		printf '%s\n' "$OVERFLOW_CRASH" "$OVERFLOW_ARGS"
	} | sha256sum | cut -c1-16
}

# trouble_keys VERDICT: the kernel trouble of a boot, one a line, keyed by
# its first line with addresses and numbers masked, so that the same warning
# at another address is not new.
trouble_keys() {
	sed -n '/^kernel trouble:$/{n;p}' "$1" |
		sed -E 's/^ +//; s/0x[0-9a-f]+/0x_/g; s/\b[0-9a-f]{8,}\b/_/g; s/[0-9]+/N/g' | sort -u
}

# The steps worktree checked out at this commit (empty: not yet).
STEP_CHECKED_OUT=''

# step_build COMMIT CONFIG: print the result folder of building COMMIT in
# CONFIG, building it (in the steps worktree) unless cached. STEP_CACHED
# says which.
step_build() {
	local commit=$1 config=$2 tree result_dir
	tree=$(git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}")
	result_dir=$RESULTS/build/$(build_key "$tree" "$config")
	STEP_CACHED=yes
	if [ ! -f "$result_dir/result" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_CACHED=no
		local steps_worktree
		steps_worktree=$(prepare_steps_worktree)
		if [ "$STEP_CHECKED_OUT" != "$commit" ]; then
			checkout_step "$steps_worktree" "$commit"
			STEP_CHECKED_OUT=$commit
		fi
		build_step "$steps_worktree" "$WORK/build/steps/$config" "$config" "$result_dir" >&2 || true
	fi
	STEP_RESULT=$result_dir
}

# step_boot COMMIT CONFIG BUILD_DIR: boot a built step unless cached; sets
# STEP_RESULT to the boot folder and STEP_CACHED.
step_boot() {
	local commit=$1 config=$2 build_dir=$3 arch payload boot_dir tree
	arch=$(arch_of "$config")
	ensure_image "$arch"
	payload=$(ensure_payload "$arch")
	boot_dir=$RESULTS/boot/$(boot_key "$(basename "$build_dir")" "$arch" "$payload")
	tree=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$commit^{tree}")
	STEP_CACHED=yes
	if [ ! -f "$boot_dir/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_CACHED=no
		boot_kernel "$arch" "$build_dir/bzImage" "$payload" "$tree" "$boot_dir" || true
	else
		boot_verdict "$boot_dir" || true
	fi
	overflow_boot "$arch" "$build_dir" "$payload" "$tree" "$boot_dir"
	STEP_RESULT=$boot_dir
}

# --- a run over every step -----------------------------------------------------

# bisect_steps build|boot: build (and boot) every step base..tip for each
# selected config, print progress and the table, write results.tsv and
# results.md in a run folder published as RESULTS/bisect-MODE. Returns 0
# when every step built (and booted GOOD).
bisect_steps() {
	local mode=$1 base tip
	base=$(require_base)
	if [ -n "${TIP:-}" ]; then
		tip=$(git --git-dir="$BASE_REPO" rev-parse --verify -q "$TIP^{commit}") ||
			die "TIP=$TIP is not a commit in $BASE_REPO"
	else
		require_worktree
		tip=$(wt_git rev-parse HEAD)
		[ -z "$(worktree_dirt)" ] ||
			say "note: uncommitted changes in $WORKTREE are not built (commit them, or use make build)"
	fi
	git --git-dir="$BASE_REPO" merge-base --is-ancestor "$base" "$tip" ||
		die "the tip $tip does not descend from the base $base"
	lock_work
	local selected steps
	mapfile -t selected < <(selected_configs)
	mapfile -t steps < <(
		echo "$base"
		git --git-dir="$BASE_REPO" rev-list --reverse "$base..$tip"
	)
	local run_dir tsv
	run_dir=$(prepare_run_dir "bisect-$mode")
	tsv=$run_dir/results.tsv
	export CCACHE_STATSLOG=$run_dir/ccache-stats.log
	printf '%s\n' "$RESULTS_TSV_HEADER" >"$tsv"
	local total=$((${#steps[@]} * ${#selected[@]})) n=0 failed=0 start
	start=$(now)
	local -A prev_warnings prev_trouble base_text
	local k commit subject short checkpatch config build_dir build_cached status new text delta
	local boot boot_cached boot_dir boot_fields new_trouble least_left
	for k in "${!steps[@]}"; do
		commit=${steps[$k]}
		subject=$(git --git-dir="$BASE_REPO" log -1 --format=%s "$commit")
		short=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$commit")
		[ "$k" -gt 0 ] || subject="base: $subject"
		checkpatch=-
		[ "$k" -eq 0 ] || checkpatch=$(checkpatch_step "$commit" "$(prepare_steps_worktree)")
		for config in "${selected[@]}"; do
			n=$((n + 1))
			say "[$n/$total] $config $short $subject (elapsed $(elapsed_since "$start") s)"
			step_build "$commit" "$config"
			build_dir=$STEP_RESULT build_cached=$STEP_CACHED
			status=$(result_field "$build_dir" status)
			say "      build $status$([ "$build_cached" = yes ] && echo ' (cached)' || echo " in $(result_field "$build_dir" seconds) s")"
			new=0
			if [ -n "${prev_warnings[$config]:-}" ]; then
				new=$(comm -13 "${prev_warnings[$config]}" "$build_dir/warnings.txt" | grep -c . || true)
			fi
			prev_warnings[$config]=$build_dir/warnings.txt
			text=$(result_field "$build_dir" text_bytes)
			[ "$k" -gt 0 ] || base_text[$config]=$text
			delta=-
			if [ "$status" = OK ] && [ "${base_text[$config]:-0}" -gt 0 ]; then
				delta=$((text - base_text[$config]))
			fi
			boot=- boot_cached=- boot_dir=- boot_fields=(- - - - -) least_left=-
			if [ "$mode" = boot ] && [ "$status" = OK ]; then
				step_boot "$commit" "$config" "$build_dir"
				boot_dir=$STEP_RESULT boot_cached=$STEP_CACHED
				boot=$(result_field "$boot_dir" status)
				new_trouble=0
				trouble_keys "$boot_dir/verdict.txt" >"$run_dir/trouble.$n"
				if [ -n "${prev_trouble[$config]:-}" ]; then
					new_trouble=$(comm -13 "${prev_trouble[$config]}" "$run_dir/trouble.$n" | grep -c . || true)
				else
					new_trouble=$(grep -c . "$run_dir/trouble.$n" || true)
				fi
				prev_trouble[$config]=$run_dir/trouble.$n
				least_left=$(result_field "$boot_dir" least_stack_bytes_left)
				boot_fields=("$(result_field "$boot_dir" seconds)" "$(result_field "$boot_dir" tests_passed)"
					"$(result_field "$boot_dir" tests_failed)" "$(result_field "$boot_dir" kernel_trouble)" "$new_trouble")
				say "      boot $boot$([ "$boot_cached" = yes ] && echo ' (cached)' || echo " in ${boot_fields[0]} s"): ${boot_fields[1]} tests passed, ${boot_fields[2]} failed$(overflow_note "$boot_dir")"
			elif [ "$mode" = boot ]; then
				boot=SKIP
			fi
			[ "$status" = OK ] || failed=$((failed + 1))
			[ "$mode" != boot ] || [ "$boot" = GOOD ] || [ "$status" != OK ] || failed=$((failed + 1))
			printf '%s\n' "$k" "$short" "$subject" "$config" "$status" "$build_cached" \
				"$(result_field "$build_dir" seconds)" "$(result_field "$build_dir" warnings)" \
				"$new" "$(result_field "$build_dir" bzimage_bytes)" "$text" "$delta" \
				"$checkpatch" "$build_dir" "$(result_field "$build_dir" first_error)" \
				"$boot" "$boot_cached" "${boot_fields[@]}" "$boot_dir" "${least_left:--}" |
				paste -s -d '\t' >>"$tsv"
		done
	done
	"$KSTACK_ROOT/tools/report" "$tsv" "$run_dir/results.md"
	say "${#steps[@]} steps x ${#selected[@]} configs in $(elapsed_since "$start") s; ccache: $(ccache_hit_rate "$CCACHE_STATSLOG")"
	publish_run_dir "$run_dir" "bisect-$mode"
	say "results: $RESULTS/bisect-$mode/results.md and results.tsv"
	[ "$failed" -eq 0 ] || die "$failed of $total steps failed (the rows marked FAIL, BAD or TIMEOUT above)"
}

# lock_work: one build-or-boot run at a time per work folder (2 cores).
lock_work() {
	mkdir -p "$WORK"
	exec 9>"$WORK/.run.lock"
	flock -n 9 || die "another kstack build or boot is running on $WORK" \
		"Wait for it to finish (or stop it), then run this again."
	# Results are written to a .tmp folder and renamed when complete, so a
	# stop in the middle leaves nothing that the next run would trust.
	# (fd 8: the stderr of the run, not of the step being logged when it stops)
	exec 8>&2
	trap 'say "interrupted: nothing half-done is kept; run again to go on" 2>&8; exit 130' INT TERM
	rm -rf "$RESULTS"/build/*.tmp.* "$RESULTS"/boot/*.tmp.* "$RESULTS"/checkpatch/*.tmp.*
}

# worktree_build CONFIG: build the user's worktree for CONFIG; STEP_RESULT
# is the result folder, STEP_CACHED says whether it was built now. A clean
# worktree is built as its HEAD commit (cached by tree, in the steps
# worktree); one with uncommitted edits is built as it is, in build/tip.
worktree_build() {
	if [ -z "$(worktree_dirt)" ]; then
		step_build "$(wt_git rev-parse HEAD)" "$1"
	else
		STEP_CACHED=no
		STEP_RESULT=$RESULTS/tip/$1
		build_step "$WORKTREE" "$WORK/build/tip/$1" "$1" "$STEP_RESULT" >&2 || true
	fi
}

# worktree_boot CONFIG BUILD_DIR: boot what worktree_build gave (cached
# when the worktree is clean); STEP_RESULT is the boot folder.
worktree_boot() {
	local config=$1 build_dir=$2 arch
	if [ -z "$(worktree_dirt)" ]; then
		step_boot "$(wt_git rev-parse HEAD)" "$config" "$build_dir"
	else
		arch=$(arch_of "$config")
		ensure_image "$arch"
		STEP_CACHED=no
		STEP_RESULT=$build_dir/boot
		local payload tree
		payload=$(ensure_payload "$arch")
		tree=$(wt_git rev-parse --short=12 'HEAD^{tree}')
		boot_kernel "$arch" "$build_dir/bzImage" "$payload" "$tree" "$STEP_RESULT" || true
		FORCE=1 overflow_boot "$arch" "$build_dir" "$payload" "$tree" "$STEP_RESULT"
	fi
}

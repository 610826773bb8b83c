# shellcheck shell=bash
# Shared helpers for the kstack tools: paths, messages, packages, the base
# description and the series stamp. Sourced by every script in tools/.

set -eEuo pipefail
# Command substitutions stop at their first failure too.
shopt -s inherit_errexit

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

# DIE_STATUS: the exit status of die (a tool whose 1 means something else,
# a verdict, sets its own).
DIE_STATUS=${DIE_STATUS:-1}

# die MESSAGE...: print a paragraph (each argument one line) and exit.
die() {
	local first=$1
	shift
	printf '%s: error: %s\n' "$TOOL_NAME" "$first" >&2
	local line
	for line in "$@"; do
		printf '  %s\n' "$line" >&2
	done
	exit "$DIE_STATUS"
}

# One trap list: on_exit CMD adds CMD to what runs when the tool exits, in
# the order added. Every tool's clean-up goes through it.
EXIT_HOOKS=()
on_exit() { EXIT_HOOKS+=("$1"); }
run_exit_hooks() {
	local rc=$? hook
	trap - ERR
	for hook in "${EXIT_HOOKS[@]}"; do
		eval "$hook" || true
	done
	verdict_exit_status "$rc"
}
trap run_exit_hooks EXIT
trap 'say "interrupted: nothing half-done is kept; run again to go on" 2>&8; exit 130' INT TERM
exec 8>&2

# A command that fails where set -e stops the tool: say which, and where,
# so that an infrastructure failure is never silent.
trap 'say "error: command failed (exit $?): $BASH_COMMAND (${FUNCNAME[0]:-main}, ${BASH_SOURCE[0]##*/}:$LINENO)"' ERR

# The tools whose exit status is a verdict (tools/boot, the predicate of
# tools/bisect) say "good", "bad" or "skip" only with exit_verdict; any other
# exit (an error, a failed command, a bad argument) becomes CANNOT_TEST,
# above 127, which stops git bisect run instead of marking a commit.
CANNOT_TEST=255
VERDICT_MODE=0
VERDICT_GIVEN=0
verdict_mode() { VERDICT_MODE=1; }
exit_verdict() {
	VERDICT_GIVEN=1
	exit "$1"
}
verdict_exit_status() {
	local rc=$1
	if [ "$VERDICT_MODE" = 1 ] && [ "$VERDICT_GIVEN" = 0 ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
		say "cannot test (exit $CANNOT_TEST): the failure above is not the kernel's" 2>&8
		exit "$CANNOT_TEST"
	fi
	exit "$rc"
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
# export_series_to OUT BASE [TIP]: base..TIP (default: the worktree's HEAD).
export_series_to() {
	local out=$1 base=$2 tip=${3:-}
	[ -n "$tip" ] || tip=$(wt_git rev-parse HEAD)
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git --git-dir="$BASE_REPO" format-patch --quiet --no-signature --zero-commit \
		--no-numbered --full-index --find-renames --no-cover-letter \
		--no-thread --no-notes -o "$out" "$base..$tip" >/dev/null
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
	on_exit "rm -rf $(printf %q "$TEMP_DIR")"
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

# series_state BASE [TIP]: how the series base..TIP (default: the worktree's
# HEAD) compares with commits/: sets SERIES_STATE to same, ahead (the
# worktree has commits not exported), behind (commits/ changed since the
# worktree took it), diverged (both), differs (a TIP that is not the
# worktree's HEAD and is not commits/), am-stopped or not-from-base, and
# SERIES_NOTE to a line that says it with what to do. The one place that
# decides it: status, am, export, worktree and the runs all ask here.
# shellcheck disable=SC2034 # SERIES_STATE is read by the tools
series_state() {
	local base=$1 tip=${2:-} head='' dir exported current synced count
	worktree_exists && head=$(wt_git rev-parse HEAD)
	[ -n "$tip" ] || tip=$head
	if [ "$tip" = "$head" ] && worktree_in_am; then
		SERIES_STATE=am-stopped
		SERIES_NOTE="a git am or rebase is stopped in the worktree (--continue or --abort)"
		return 0
	fi
	if ! git --git-dir="$BASE_REPO" merge-base --is-ancestor "$base" "$tip"; then
		SERIES_STATE=not-from-base
		SERIES_NOTE="$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$tip") does not descend from the base"
		return 0
	fi
	count=$(git --git-dir="$BASE_REPO" rev-list --count "$base..$tip")
	dir=$(mktemp -d "${TMPDIR:-/tmp}/kstack-series.XXXXXX")
	export_series_to "$dir" "$base" "$tip"
	exported=$(series_manifest "$dir")
	rm -rf "$dir"
	current=$(series_manifest "$COMMITS")
	synced=''
	[ "$tip" != "$head" ] || synced=$(cat "$(stamp_file)" 2>/dev/null || true)
	if [ "$exported" = "$current" ]; then
		SERIES_STATE=same
		SERIES_NOTE="same as commits/ ($count commits)"
	elif [ "$tip" != "$head" ]; then
		SERIES_STATE=differs
		SERIES_NOTE="NOT the series in commits/: TIP's $count commits differ from it"
	elif [ "$current" = "$synced" ]; then
		SERIES_STATE=ahead
		SERIES_NOTE="NOT the series in commits/: the worktree is ahead, with changes not exported (make export)"
	elif [ "$exported" = "$synced" ]; then
		SERIES_STATE=behind
		SERIES_NOTE="NOT the series in commits/: the worktree is behind, commits/ changed since it took it (make worktree && make am)"
	else
		SERIES_STATE=diverged
		SERIES_NOTE="NOT the series in commits/: the worktree and commits/ diverged, both changed since they last agreed"
	fi
}

# ensure_setup [--base-only]: a first run on a fresh machine sets itself up:
# the distro base imported, a worktree made, the series in commits/ applied;
# each said in one line. An existing worktree is never touched.
ensure_setup() {
	if [ -z "$(imported_base)" ]; then
		say "setting up: the distro base is not imported in $BASE_REPO; importing it (make import, about a minute)"
		"$KSTACK_ROOT/tools/import"
	fi
	[ "${1:-}" != --base-only ] || return 0
	worktree_exists && return 0
	say "setting up: no worktree at $WORKTREE; making one at the base (make worktree)"
	"$KSTACK_ROOT/tools/worktree"
	say "setting up: applying the series in $COMMITS (make am)"
	"$KSTACK_ROOT/tools/am"
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

# select_arches: set ARCHES_SELECTED from ARCHES= (default: every arch), a
# list separated by spaces or commas; an unknown arch is an error that lists
# the known ones. (Called directly, never in $(...) or < <(...): there, die
# would only end the subshell.)
select_arches() {
	local arch known list=${ARCHES:-}
	known=$(known_arches | tr '\n' ' ')
	ARCHES_SELECTED=()
	for arch in ${list//,/ }; do
		[ -f "$CONFIGS_DIR/$arch.arch" ] || die "unknown arch '$arch' in ARCHES=" \
			"Known arches (configs/*.arch): ${known% }"
		ARCHES_SELECTED+=("$arch")
	done
	[ -n "${ARCHES:-}" ] || read -r -a ARCHES_SELECTED <<<"$known"
	[ "${#ARCHES_SELECTED[@]}" -gt 0 ] || die "no arch selected (ARCHES='${ARCHES:-}')" \
		"Known arches (configs/*.arch): ${known% }"
}

# select_configs: set SELECTED to the configs to work on, from ARCHES= and
# CONFIGS= (default: each arch's main config; "all": every config of those
# arches; else a list separated by spaces or commas). An unknown config is
# an error that lists the valid ones.
select_configs() {
	local arch config all=() wanted=()
	select_arches
	for arch in "${ARCHES_SELECTED[@]}"; do
		load_arch "$arch"
		all+=("${configs[@]}")
		case "${CONFIGS:-}" in
		"") wanted+=("$main_config") ;;
		all) wanted+=("${configs[@]}") ;;
		esac
	done
	if [ -n "${CONFIGS:-}" ] && [ "$CONFIGS" != all ]; then
		for config in ${CONFIGS//,/ }; do
			printf '%s\n' "${all[@]}" | grep -qxF -- "$config" ||
				die "unknown config '$config' in CONFIGS= (ARCHES: ${ARCHES_SELECTED[*]})" \
					"Valid configs: ${all[*]} (or CONFIGS=all)"
			wanted+=("$config")
		done
	fi
	[ "${#wanted[@]}" -gt 0 ] || die "no config selected (CONFIGS='${CONFIGS:-}')" \
		"Valid configs: ${all[*]} (or CONFIGS=all)"
	SELECTED=("${wanted[@]}")
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
# fragments, the toolchain and the code that runs the kernel's make (not the
# arch's boot settings, not the test modules, which are keyed apart). Part
# of the key of a cached result.
config_identity() {
	local config=$1
	load_arch "$(arch_of "$config")"
	printf 'config %s\nkernel_arch %s\nbase_config %s\n' "$config" "$kernel_arch" "$base_config"
	local fragment
	while read -r fragment; do
		printf '== %s\n' "$(basename "$fragment")"
		cat "$fragment"
	done < <(config_fragments "$config")
	printf '== build code\n'
	declare -f kernel_make merge_kernel_config save_module_kit warning_keys
	printf '%s\n' "${MODULE_KIT[@]}"
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
	# The locale is pinned: gcc's quotes and messages, the warning keys and
	# ccache's hash (which includes LANG and LC_*) do not depend on the user's.
	LANG=C LC_ALL=C LC_CTYPE=C LC_MESSAGES=C \
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
# config log when merging failed), config-check.txt, config, bzImage and
# module-kit.tar.gz (what building modules against this kernel needs).
# Returns 0 once the result is written, whatever the kernel did (status=
# says that); a failure that is not the kernel's (a copy, the disk, a tool)
# stops the tool with an error and writes no result.
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
	fi
	seconds=$(elapsed_since "$start")
	if [ -f "$o/kstack-config-check.txt" ]; then cp "$o/kstack-config-check.txt" "$tmp/config-check.txt"; fi
	if [ -f "$o/.config" ]; then cp "$o/.config" "$tmp/config"; fi
	warning_keys "$tmp/build.log" "$src" "$o" >"$tmp/warnings.txt"
	load_arch "$(arch_of "$config")"
	local bzimage_bytes=0 text_bytes=0
	if [ "$status" = OK ]; then
		bzimage_bytes=$(stat -c %s "$o/$kernel_image") ||
			die "the build of $config passed, but its kernel image $o/$kernel_image cannot be read" \
				"Nothing was recorded; check the disk and run again."
		text_bytes=$(text_size "$o/vmlinux") ||
			die "the build of $config passed, but 'size $o/vmlinux' failed" "Nothing was recorded."
		cp "$o/$kernel_image" "$tmp/bzImage" ||
			die "could not copy the kernel image $o/$kernel_image into $tmp (disk full?)" \
				"Nothing was recorded; free some space and run again."
		save_module_kit "$o" "$tmp/module-kit.tar.gz" ||
			die "could not save what building modules against $o needs, into $tmp (disk full?)" \
				"Nothing was recorded; free some space and run again."
	fi
	{
		printf 'status=%s\nseconds=%s\n' "$status" "$seconds"
		printf 'warnings=%s\n' "$(grep -c . "$tmp/warnings.txt" || true)"
		printf 'bzimage_bytes=%s\ntext_bytes=%s\n' "$bzimage_bytes" "$text_bytes"
		printf 'first_error=%s\n' "$(printf '%s' "$first_error" | tr '\t\n' '  ' | cut -c1-300)"
	} >"$tmp/result"
	rm -rf "$result_dir"
	mv "$tmp" "$result_dir"
}

# What external modules are built with, from a kernel's build folder: its
# config, generated headers, the host programs of kbuild (fixdep, modpost,
# objtool) and the symbol versions. With the source tree the kernel was
# built from, it builds test modules against that kernel without its
# objects, so that a module can change without the kernel being rebuilt.
MODULE_KIT=(.config Module.symvers include arch/x86/include/generated scripts tools/objtool/objtool)

# save_module_kit O TARBALL: the MODULE_KIT parts that O has, as a tarball.
save_module_kit() {
	local o=$1 tarball=$2 part parts=()
	for part in "${MODULE_KIT[@]}"; do
		[ ! -e "$o/$part" ] || parts+=("$part")
	done
	tar -C "$o" -czf "$tarball" "${parts[@]}"
}

# module_key BUILD_DIR: the cache key of the test modules built against the
# kernel of BUILD_DIR: that kernel (its build key), the modules' sources, and
# the code that builds them.
module_key() {
	{
		basename "$1"
		cat "$GUEST_DIR"/modules/* 2>/dev/null || true
		declare -f build_modules kernel_make
		printf '%s\n' "${MODULE_KIT[@]}"
	} | sha256sum | cut -c1-16
}

# build_modules BUILD_DIR SRC CONFIG OUT: build guest-image/modules (a copy:
# kbuild writes into M=) against the kernel of BUILD_DIR, from its module
# kit and SRC, the tree it was built from; write OUT atomically: result
# (status OK/FAIL, first_error), build.log, modules/*.ko. Returns 0 once
# written; a failure that is not the modules' stops the tool.
build_modules() {
	local build_dir=$1 src=$2 config=$3 out=$4 tmp status=OK first_error=''
	tmp=$out.tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp/modules" "$tmp/o"
	if compgen -G "$GUEST_DIR/modules/*.c" >/dev/null; then
		tar -C "$tmp/o" -xzf "$build_dir/module-kit.tar.gz" ||
			die "could not unpack the module kit of $build_dir into $tmp (disk full?)"
		cp -r "$GUEST_DIR/modules" "$tmp/src" || die "could not copy $GUEST_DIR/modules into $tmp"
		if kernel_make "$src" "$tmp/o" "$config" M="$tmp/src" modules >"$tmp/build.log" 2>&1; then
			cp "$tmp"/src/*.ko "$tmp/modules/" || die "could not copy the test modules built in $tmp/src"
		else
			status=FAIL
			first_error="test modules: $(first_error_line "$tmp/build.log")"
		fi
		rm -rf "$tmp/src"
	fi
	rm -rf "$tmp/o"
	printf 'status=%s\nfirst_error=%s\n' "$status" "$(printf '%s' "$first_error" | tr '\t\n' '  ' | cut -c1-300)" >"$tmp/result"
	rm -rf "$out"
	mv "$tmp" "$out"
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

# boot_kernel ARCH BUILD_DIR MODULES PAYLOAD TREE RESULT_DIR [PROVOKE [ARGS]]:
# boot the kernel of BUILD_DIR on the root image with a disk of the payload
# and the test modules (a folder of .ko files), console to
# RESULT_DIR/console.log, killed at BOOT_TIMEOUT, how it ran in boot.info
# (written atomically with the log); then its verdict (boot_verdict).
# With PROVOKE (an LKDTM crash type), the guest provokes that crash instead
# of running the tests, and the verdict expects the stack check to catch
# it. ARGS: more kernel parameters. Returns 0 once the boot is recorded,
# whatever the kernel did; a failure that is not the kernel's (the payload
# disk not made, QEMU that cannot start or is killed from outside) stops
# the tool with an error and records nothing.
boot_kernel() {
	local arch=$1 build_dir=$2 modules=$3 payload=$4 tree=$5 result_dir=$6 provoke=${7:-} args=${8:-}
	local tmp=$result_dir.tmp.$$ accel start rc=0 check=0 kernel=$2/bzImage seconds timed_out=no
	load_arch "$arch"
	rm -rf "$tmp" && mkdir -p "$tmp"
	accel=$(detect_accel "$arch" "$kernel")
	! has_stack_check "$build_dir" || check=1
	local cmdline="console=$console root=/dev/vda rw init=/sbin/kstack-init panic=-1"
	cmdline+=" kstack_tree=$tree kstack_thread_size=$(task_stack_bytes_of "$build_dir" "$arch")"
	cmdline+=" kstack_stock_thread_size=$task_stack_bytes kstack_stack_check=$check"
	[ -z "$provoke" ] || cmdline+=" kstack_provoke=$provoke"
	[ -z "$args" ] || cmdline+=" $args"
	printf '%s -accel %s %s -kernel %s -append "%s"\n' "$qemu_binary" "$accel" \
		"${qemu_args[*]}" "$kernel" "$cmdline" >"$tmp/qemu-command"
	# The second disk: the payload, and the test modules of this kernel.
	cp -r "$payload" "$tmp/payload" || die "could not copy the test payload $payload into $tmp (disk full?)" \
		"Nothing was recorded for this kernel; run again."
	if [ -n "$modules" ]; then
		cp -r "$modules" "$tmp/payload/modules" ||
			die "could not copy the test modules $modules into $tmp (disk full?)" \
				"Nothing was recorded for this kernel; run again."
	fi
	mkfs.ext4 -q -F -L kstack-payload -d "$tmp/payload" "$tmp/payload.img" 64M >"$tmp/mkfs.log" 2>&1 ||
		die "could not make the payload disk $tmp/payload.img: mkfs.ext4 failed" \
			"$(head -n 3 "$tmp/mkfs.log")" \
			"Nothing was recorded for this kernel (no boot without its tests); check the disk and run again."
	rm -rf "$tmp/payload"
	start=$(now)
	timeout --kill-after=5 "$BOOT_TIMEOUT" "$qemu_binary" -accel "$accel" "${qemu_args[@]}" \
		-nographic -no-reboot -kernel "$kernel" -append "$cmdline" \
		-drive "file=$(image_path "$arch"),if=virtio,format=raw,snapshot=on" \
		-drive "file=$tmp/payload.img,if=virtio,format=raw,readonly=on" \
		</dev/null >"$tmp/console.log" 2>&1 || rc=$?
	seconds=$(elapsed_since "$start")
	rm -f "$tmp/payload.img"
	# timeout(1) exits 124 when it stopped QEMU at BOOT_TIMEOUT (QEMU ends
	# on SIGTERM), 137 when QEMU needed SIGKILL after that. QEMU stopped by
	# anyone else says "terminating on signal" and exits 0, or dies (137
	# before the timeout); QEMU that cannot start exits 1. None of those is
	# about the kernel.
	if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && awk -v s="$seconds" -v t="$BOOT_TIMEOUT" 'BEGIN { exit !(s >= t) }'; }; then
		timed_out=yes
	elif grep -q -m1 'qemu-system-[a-z0-9_]*: terminating on signal' "$tmp/console.log"; then
		die "QEMU was stopped from outside after $seconds s: $(grep -m1 'terminating on signal' "$tmp/console.log" | tr -d '\r')" \
			"Nothing was recorded for this kernel; run again. (Console until the next run: $tmp/console.log)"
	elif [ "$rc" -ne 0 ]; then
		die "QEMU exited $rc after $seconds s: it did not run this boot to its end (killed from outside, or could not start)" \
			"$(grep -v '^\s*$' "$tmp/console.log" | tail -n 3 | tr -d '\r')" \
			"Nothing was recorded for this kernel. Command: $tmp/qemu-command"
	fi
	printf 'seconds=%s\naccel=%s\nqemu_exit=%s\ntimed_out=%s\nprovoke=%s\n' "$seconds" "$accel" "$rc" \
		"$timed_out" "${provoke:--}" >"$tmp/boot.info"
	rm -rf "$result_dir"
	mv "$tmp" "$result_dir"
	boot_verdict "$result_dir"
}

# boot_verdict DIR: (re)read DIR/console.log with tools/verdict into
# verdict.txt and result (status GOOD/BAD/TIMEOUT, seconds, tests, trouble).
# Cheap, so a cached boot is read again by the current parser. Returns 0
# once read; a console reader that fails is an error, not a verdict.
boot_verdict() {
	local dir=$1 flags=() vstatus=0 provoke
	[ "$(sed -n 's/^timed_out=//p' "$dir/boot.info")" != yes ] || flags+=(--timed-out)
	provoke=$(sed -n 's/^provoke=//p' "$dir/boot.info")
	[ -z "$provoke" ] || [ "$provoke" = - ] || flags+=(--expect-overflow)
	"$KSTACK_ROOT/tools/verdict" "$dir/console.log" "${flags[@]}" >"$dir/verdict.txt.tmp" 2>&1 || vstatus=$?
	if [ "$vstatus" -gt 1 ] || ! grep -q '^verdict=' "$dir/verdict.txt.tmp"; then
		die "the console reader (tools/verdict) failed on $dir/console.log (exit $vstatus)" \
			"$(head -n 3 "$dir/verdict.txt.tmp")"
	fi
	{
		sed -n 's/^verdict=/status=/p' "$dir/verdict.txt.tmp"
		cat "$dir/boot.info"
		grep -E '^(tests_passed|tests_failed|kernel_trouble|uptime_at_userspace|least_stack_bytes_left|stack_check_warnings|overflow_caught)=' \
			"$dir/verdict.txt.tmp" || true
	} >"$dir/result.tmp"
	mv "$dir/verdict.txt.tmp" "$dir/verdict.txt"
	mv "$dir/result.tmp" "$dir/result"
}

# OVERFLOW_CRASH: what the overflow boot provokes (LKDTM's deep recursion).
# OVERFLOW_ARGS: a threshold the kernel must refuse at boot, keeping 50%
# (the verdict's metric stack_check_boot_param_refused).
OVERFLOW_CRASH=EXHAUST_STACK
OVERFLOW_ARGS=stack_check=150

# overflow_boot ARCH BUILD_DIR MODULES PAYLOAD TREE BOOT_DIR: for a build
# with the stack check, a second boot (BOOT_DIR/overflow, cached like the
# first) that provokes a stack overflow, which the check must catch: warn,
# report, then panic. boot_outcome joins the two.
overflow_boot() {
	local arch=$1 build_dir=$2 modules=$3 payload=$4 tree=$5 boot_dir=$6
	has_stack_check "$build_dir" || return 0
	if [ ! -f "$boot_dir/overflow/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		boot_kernel "$arch" "$build_dir" "$modules" "$payload" "$tree" "$boot_dir/overflow" \
			"$OVERFLOW_CRASH" "$OVERFLOW_ARGS"
	else
		boot_verdict "$boot_dir/overflow"
	fi
}

# boot_outcome BOOT_DIR: the boot's verdict with its overflow boot joined:
# sets BOOT_STATUS (GOOD, BAD, TIMEOUT; BAD when an overflow boot did not
# catch its overflow) and OVERFLOW_CAUGHT (yes, no, or - without one). Reads
# the results; writes nothing.
boot_outcome() {
	local dir=$1
	BOOT_STATUS=$(result_field "$dir" status)
	OVERFLOW_CAUGHT=-
	[ -f "$dir/overflow/result" ] || return 0
	OVERFLOW_CAUGHT=$(result_field "$dir/overflow" overflow_caught)
	[ "$(result_field "$dir/overflow" status)" = GOOD ] || OVERFLOW_CAUGHT=no
	[ -n "$OVERFLOW_CAUGHT" ] || OVERFLOW_CAUGHT=no
	if [ "$OVERFLOW_CAUGHT" != yes ] && [ "$BOOT_STATUS" = GOOD ]; then
		BOOT_STATUS=BAD
	fi
}

# overflow_note: ", EXHAUST_STACK overflow caught by the stack check:
# yes|no" after boot_outcome, when the boot had an overflow boot.
overflow_note() {
	[ "$OVERFLOW_CAUGHT" = - ] || printf ', %s overflow caught by the stack check: %s' "$OVERFLOW_CRASH" "$OVERFLOW_CAUGHT"
}

# --- one step: build (cached), then boot (cached) -----------------------------

# build_key TREE CONFIG: the cache key of building TREE in CONFIG.
build_key() {
	printf 'tree %s\n%s\n' "$1" "$(config_identity "$2")" | sha256sum | cut -c1-16
}

# boot_key BUILD_KEY MODULES_KEY ARCH PAYLOAD: the cache key of booting a
# build: the kernel, its test modules, the image recipe, the test payload,
# and how QEMU is run (the arch's settings and the code of boot_kernel).
boot_key() {
	load_arch "$3"
	{
		printf '%s\n' "$1" "$2" "$(image_recipe_hash "$3")" "$(basename "$4")" "$qemu_binary" \
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

# step_checkout COMMIT: the steps worktree at COMMIT (once per commit).
step_checkout() {
	local steps_worktree
	steps_worktree=$(prepare_steps_worktree)
	if [ "$STEP_CHECKED_OUT" != "$1" ]; then
		checkout_step "$steps_worktree" "$1"
		STEP_CHECKED_OUT=$1
	fi
	STEPS_WORKTREE=$steps_worktree
}

# step_build COMMIT CONFIG: build COMMIT in CONFIG (in the steps worktree)
# unless cached, then its test modules unless cached. Sets STEP_RESULT (the
# kernel's result folder), STEP_CACHED (yes when the kernel was not built
# now), STEP_MODULES (the folder of .ko files, empty without them),
# STEP_BUILD (OK, or FAIL when the kernel or its test modules did not
# build) and STEP_ERROR (the line that says why).
step_build() {
	local commit=$1 config=$2 tree result_dir modules
	tree=$(git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}")
	result_dir=$RESULTS/build/$(build_key "$tree" "$config")
	STEP_CACHED=yes
	if [ ! -f "$result_dir/result" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_CACHED=no
		step_checkout "$commit"
		build_step "$STEPS_WORKTREE" "$WORK/build/steps/$config" "$config" "$result_dir" >&2
	fi
	STEP_RESULT=$result_dir
	STEP_MODULES='' STEP_BUILD=$(result_field "$result_dir" status) STEP_ERROR=$(result_field "$result_dir" first_error)
	[ "$STEP_BUILD" = OK ] || return 0
	modules=$RESULTS/modules/$(module_key "$result_dir")
	if [ ! -f "$modules/result" ] || [ "${FORCE:-0}" = 1 ]; then
		step_checkout "$commit"
		build_modules "$result_dir" "$STEPS_WORKTREE" "$config" "$modules"
	fi
	step_modules_outcome "$modules"
}

# step_modules_outcome DIR: STEP_MODULES, STEP_BUILD and STEP_ERROR from a
# result of build_modules.
step_modules_outcome() {
	STEP_MODULES=$1/modules
	if [ "$(result_field "$1" status)" != OK ]; then
		STEP_BUILD=FAIL
		STEP_ERROR=$(result_field "$1" first_error)
	fi
}

# step_boot COMMIT CONFIG: boot the step step_build just built unless
# cached; sets STEP_BOOT_DIR, STEP_BOOT_CACHED, and (boot_outcome)
# BOOT_STATUS and OVERFLOW_CAUGHT.
step_boot() {
	local commit=$1 config=$2 build_dir=$STEP_RESULT arch boot_dir tree
	arch=$(arch_of "$config")
	ensure_image "$arch"
	ensure_payload "$arch"
	boot_dir=$RESULTS/boot/$(boot_key "$(basename "$build_dir")" "$(basename "$(dirname "$STEP_MODULES")")" "$arch" "$PAYLOAD")
	tree=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$commit^{tree}")
	STEP_BOOT_CACHED=yes
	if [ ! -f "$boot_dir/boot.info" ] || [ "${FORCE:-0}" = 1 ]; then
		STEP_BOOT_CACHED=no
		boot_kernel "$arch" "$build_dir" "$STEP_MODULES" "$PAYLOAD" "$tree" "$boot_dir"
	else
		boot_verdict "$boot_dir"
	fi
	overflow_boot "$arch" "$build_dir" "$STEP_MODULES" "$PAYLOAD" "$tree" "$boot_dir"
	STEP_BOOT_DIR=$boot_dir
	boot_outcome "$boot_dir"
}

# --- a run over every step -----------------------------------------------------

# resolve_commit NAME VALUE: set RESOLVED to the commit VALUE (of the
# variable NAME: TIP, GOOD, BAD) names in the base repo, the base or one
# after it; anything else is an error that lists the valid values.
resolve_commit() {
	local name=$1 value=$2 base id valid=()
	base=$(require_base)
	# Names are the worktree's (HEAD~2 is its HEAD's), when there is one.
	if worktree_exists; then
		id=$(wt_git rev-parse --verify -q "$value^{commit}" || true)
	else
		id=$(git --git-dir="$BASE_REPO" rev-parse --verify -q "$value^{commit}" || true)
	fi
	if [ -n "$id" ] && git --git-dir="$BASE_REPO" merge-base --is-ancestor "$base" "$id"; then
		RESOLVED=$id
		return 0
	fi
	valid=("$BASE_TAG (the base)")
	if worktree_exists; then
		mapfile -t -O 1 valid < <(wt_git log --reverse --format='%h %s' "$base..HEAD")
	fi
	die "$name=$value $([ -n "$id" ] && echo "does not descend from the base" || echo "is not a commit in $BASE_REPO")" \
		"Valid: a commit id or ref of the base or a commit after it; the worktree's series is:" \
		"${valid[@]/#/  }"
}

# run_tip: set RUN_TIP to the commit a run tests (TIP=, else the worktree's
# HEAD, setting it up on a first run) and RUN_SERIES to the line that says
# which series that is against commits/.
run_tip() {
	local base
	base=$(require_base)
	if [ -n "${TIP:-}" ]; then
		resolve_commit TIP "$TIP"
		RUN_TIP=$RESOLVED
	else
		require_worktree
		RUN_TIP=$(wt_git rev-parse HEAD)
		[ -z "$(worktree_dirt)" ] ||
			say "note: uncommitted changes in $WORKTREE are not built (commit them, or use make build)"
	fi
	series_state "$base" "$RUN_TIP"
	RUN_SERIES="series: $([ -n "${TIP:-}" ] && echo "TIP=$TIP" || echo "the worktree's HEAD") $(git --git-dir="$BASE_REPO" rev-parse --short=12 "$RUN_TIP"), $SERIES_NOTE"
}

# bisect_steps build|boot: build (and boot) every step base..tip for each
# selected config, print progress and the table, write results.tsv and
# results.md in a run folder published as RESULTS/bisect-MODE. Returns 0
# when every step built (and booted GOOD).
bisect_steps() {
	local mode=$1 base tip
	select_configs
	lock_work
	ensure_setup "$([ -z "${TIP:-}" ] || echo --base-only)"
	base=$(require_base)
	run_tip
	tip=$RUN_TIP
	say "$RUN_SERIES"
	local selected steps
	selected=("${SELECTED[@]}")
	mapfile -t steps < <(
		echo "$base"
		git --git-dir="$BASE_REPO" rev-list --reverse "$base..$tip"
	)
	local run_dir tsv
	run_dir=$(prepare_run_dir "bisect-$mode")
	tsv=$run_dir/results.tsv
	printf '%s\n' "$RUN_SERIES" >"$run_dir/series.txt"
	export CCACHE_STATSLOG=$run_dir/ccache-stats.log
	printf '%s\n' "$RESULTS_TSV_HEADER" >"$tsv"
	local total=$((${#steps[@]} * ${#selected[@]})) n=0 failed=0 start
	start=$(now)
	local -A prev_warnings prev_trouble base_text
	local k commit subject short checkpatch config build_dir status new text delta
	local boot boot_dir boot_fields new_trouble least_left
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
			build_dir=$STEP_RESULT status=$STEP_BUILD
			say "      build $status$([ "$STEP_CACHED" = yes ] && echo ' (cached)' || echo " in $(result_field "$build_dir" seconds) s")"
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
			boot=- STEP_BOOT_CACHED=- boot_dir=- boot_fields=(- - - - -) least_left=-
			if [ "$mode" = boot ] && [ "$status" = OK ]; then
				step_boot "$commit" "$config"
				boot_dir=$STEP_BOOT_DIR boot=$BOOT_STATUS
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
				say "      boot $boot$([ "$STEP_BOOT_CACHED" = yes ] && echo ' (cached)' || echo " in ${boot_fields[0]} s"): ${boot_fields[1]} tests passed, ${boot_fields[2]} failed$(overflow_note)"
			elif [ "$mode" = boot ]; then
				boot=SKIP
			fi
			[ "$status" = OK ] || failed=$((failed + 1))
			[ "$mode" != boot ] || [ "$boot" = GOOD ] || [ "$status" != OK ] || failed=$((failed + 1))
			printf '%s\n' "$k" "$short" "$subject" "$config" "$status" "$STEP_CACHED" \
				"$(result_field "$build_dir" seconds)" "$(result_field "$build_dir" warnings)" \
				"$new" "$(result_field "$build_dir" bzimage_bytes)" "$text" "$delta" \
				"$checkpatch" "$build_dir" "$STEP_ERROR" \
				"$boot" "$STEP_BOOT_CACHED" "${boot_fields[@]}" "$boot_dir" "${least_left:--}" |
				paste -s -d '\t' >>"$tsv"
		done
	done
	"$KSTACK_ROOT/tools/report" "$tsv" "$run_dir/results.md"
	say "${#steps[@]} steps x ${#selected[@]} configs in $(elapsed_since "$start") s; ccache: $(ccache_hit_rate "$CCACHE_STATSLOG")"
	publish_run_dir "$run_dir" "bisect-$mode"
	say "$RUN_SERIES"
	say "results: $RESULTS/bisect-$mode/results.md and results.tsv"
	[ "$failed" -eq 0 ] || die "$failed of $total steps failed (the rows marked FAIL, BAD or TIMEOUT above)"
}

# lock_work: one tool at a time writes a work folder (and one build or boot
# at a time runs on 2 cores). A tool that another one started while holding
# the lock (make boot setting up its worktree) shares it.
lock_work() {
	mkdir -p "$WORK"
	local here
	here=$(cd "$WORK" && pwd -P)
	[ "${KSTACK_LOCK_HELD:-}" != "$here" ] || return 0
	exec 9>"$WORK/.run.lock"
	flock -n 9 || die "another kstack tool is writing $WORK (a build, boot, import or worktree)" \
		"Wait for it to finish (or stop it), then run this again."
	export KSTACK_LOCK_HELD=$here
	# Results are written to a .tmp folder and renamed when complete, so a
	# stop in the middle leaves nothing that the next run would trust.
	sweep_temp
}

# sweep_temp: remove what stopped runs left half-made (only under the lock).
sweep_temp() {
	rm -rf "$RESULTS"/build/*.tmp.* "$RESULTS"/boot/*.tmp.* "$RESULTS"/checkpatch/*.tmp.* \
		"$RESULTS"/modules/*.tmp.* "$RESULTS"/tip/*.tmp.* "$WORK"/payload/*/stage.* \
		"$WORK"/image/*/tmp.* "$RESULTS"/runs/.*.new 2>/dev/null || true
}

# worktree_build CONFIG: build the user's worktree for CONFIG, as
# step_build does (same variables). A clean worktree is built as its HEAD
# commit (cached by tree, in the steps worktree); one with uncommitted edits
# is built as it is, in build/tip, and never cached.
worktree_build() {
	if [ -z "$(worktree_dirt)" ]; then
		step_build "$(wt_git rev-parse HEAD)" "$1"
		return 0
	fi
	STEP_CACHED=no
	STEP_RESULT=$RESULTS/tip/$1
	build_step "$WORKTREE" "$WORK/build/tip/$1" "$1" "$STEP_RESULT" >&2
	STEP_MODULES='' STEP_BUILD=$(result_field "$STEP_RESULT" status) STEP_ERROR=$(result_field "$STEP_RESULT" first_error)
	[ "$STEP_BUILD" = OK ] || return 0
	build_modules "$STEP_RESULT" "$WORKTREE" "$1" "$STEP_RESULT/test-modules"
	step_modules_outcome "$STEP_RESULT/test-modules"
}

# worktree_boot CONFIG: boot what worktree_build gave, as step_boot does
# (cached when the worktree is clean).
worktree_boot() {
	local config=$1 arch tree
	if [ -z "$(worktree_dirt)" ]; then
		step_boot "$(wt_git rev-parse HEAD)" "$config"
		return 0
	fi
	arch=$(arch_of "$config")
	ensure_image "$arch"
	ensure_payload "$arch"
	STEP_BOOT_CACHED=no
	STEP_BOOT_DIR=$STEP_RESULT/boot
	tree=$(wt_git rev-parse --short=12 'HEAD^{tree}')
	boot_kernel "$arch" "$STEP_RESULT" "$STEP_MODULES" "$PAYLOAD" "$tree" "$STEP_BOOT_DIR"
	FORCE=1 overflow_boot "$arch" "$STEP_RESULT" "$STEP_MODULES" "$PAYLOAD" "$tree" "$STEP_BOOT_DIR"
	boot_outcome "$STEP_BOOT_DIR"
}

# shellcheck shell=bash
# tools/lib/core.sh: Messages (say, die), the one trap list, the exit status
# of verdict tools, the work folder's lock, temp folders, timing.

set -eEuo pipefail
# Command substitutions stop at their first failure too.
shopt -s inherit_errexit

TOOL_NAME=$(basename "$0")

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

# no_arguments "$@": for a tool that takes none (its variables come from
# the environment): --help, or an error for anything else.
no_arguments() {
	handle_help "${1:-}"
	[ $# -eq 0 ] || usage_error "no arguments expected"
}

# Seconds since the epoch, with a fraction, for "took N s" lines.
now() { date +%s.%N; }
elapsed_since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# make_temp_dir: set TEMP_DIR to a new folder, removed when the tool exits.
# (Not in $(...): the trap would fire when that subshell ends.)
make_temp_dir() {
	TEMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kstack.XXXXXX")
	on_exit "rm -rf $(printf %q "$TEMP_DIR")"
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
	# A gc --auto that git starts (git am after an import's loose objects)
	# runs in the foreground: in the background it would hold fd 9, the
	# lock, after the tool exits, and the next tool would be refused.
	local n=${GIT_CONFIG_COUNT:-0}
	export "GIT_CONFIG_KEY_$n=gc.autoDetach" "GIT_CONFIG_VALUE_$n=false" GIT_CONFIG_COUNT=$((n + 1))
	# Results are written to a .tmp folder and renamed when complete, so a
	# stop in the middle leaves nothing that the next run would trust.
	sweep_temp
}

# sweep_temp: remove what stopped runs left half-made (only under the lock).
sweep_temp() {
	rm -rf "$RESULTS"/build/*.tmp.* "$RESULTS"/boot/*.tmp.* "$RESULTS"/checkpatch/*.tmp.* \
		"$RESULTS"/modules/*.tmp.* "$RESULTS"/tip/*.tmp.* "$WORK"/payload/*/stage.* \
		"$WORK"/image/*/tmp.* "$WORK"/bin/*.tmp.* "$RESULTS"/runs/.*.new 2>/dev/null || true
}

# The project's C programs (tools/src/NAME.c), built with the system gcc.
C_TOOL_CFLAGS=(-O2 -Wall -Wextra -Werror)

# ensure_c_tool NAME: build tools/src/NAME.c unless built already (keyed by
# the source, the headers of tools/src/, the flags and the compiler) into
# WORK/bin; sets C_TOOL to it.
ensure_c_tool() {
	local src=$KSTACK_ROOT/tools/src/$1.c key bin
	key=$({
		cat "$src" "$KSTACK_ROOT"/tools/src/*.h
		printf '%s\n' "${C_TOOL_CFLAGS[*]}"
		gcc --version | sed -n 1p
	} | sha256sum | cut -c1-16)
	bin=$WORK/bin/$1-$key
	C_TOOL=$bin
	[ ! -x "$bin" ] || return 0
	mkdir -p "$WORK/bin"
	gcc "${C_TOOL_CFLAGS[@]}" -o "$bin.tmp.$$" "$src" >"$WORK/bin/$1.log" 2>&1 ||
		die "tools/src/$1.c does not build with gcc ${C_TOOL_CFLAGS[*]}" "$(head -n 5 "$WORK/bin/$1.log")"
	mv "$bin.tmp.$$" "$bin"
}

# shellcheck shell=bash
# tools/lib/series.sh: The base (upstream-base.txt), the worktree, the series
# as files in commits/, where the two stand (series_state), the first-run set-
# up, and commit names given on the command line.

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

# open_worktree: for a tool that changes the worktree or commits/: the
# work folder's lock, BASE set to the base commit, and the worktree there.
open_worktree() {
	lock_work
	BASE=$(require_base)
	require_worktree
}

# series_state BASE [TIP]: how the series base..TIP (default: the worktree's
# HEAD) compares with commits/: sets SERIES_STATE to same, ahead (the
# worktree has commits not exported), at-step (the worktree's HEAD is one of
# the series' commits, not its tip), behind (commits/ changed since the
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
	on_exit "rm -rf $(printf %q "$dir")"
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
	elif [ "$current" = "$synced" ] && [ "$(head -n "$(grep -c . <<<"$exported")" <<<"$current")" = "$exported" ]; then
		# HEAD is one of the series' own commits (or the base): a step
		SERIES_STATE=at-step
		SERIES_NOTE="the worktree is at step $count of the $(grep -c . <<<"$current") commits in commits/ (its HEAD is a commit of the series, not its tip: git -C $WORKTREE checkout $BRANCH goes back)"
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

# resolve_tip NAME VALUE: RESOLVED as resolve_commit sets it, or the
# worktree's HEAD when VALUE is empty.
resolve_tip() {
	if [ -n "$2" ]; then
		resolve_commit "$1" "$2"
	else
		require_worktree
		RESOLVED=$(wt_git rev-parse HEAD)
	fi
}

# run_tip: set RUN_TIP to the commit a run tests (TIP=, else the worktree's
# HEAD, setting it up on a first run) and RUN_SERIES to the line that says
# which series that is against commits/.
run_tip() {
	local base
	base=$(require_base)
	resolve_tip TIP "${TIP:-}"
	RUN_TIP=$RESOLVED
	if [ -z "${TIP:-}" ]; then
		[ -z "$(worktree_dirt)" ] ||
			say "note: uncommitted changes in $WORKTREE are not built (commit them, or use make build)"
	fi
	series_state "$base" "$RUN_TIP"
	RUN_SERIES="series: $([ -n "${TIP:-}" ] && echo "TIP=$TIP" || echo "the worktree's HEAD") $(git --git-dir="$BASE_REPO" rev-parse --short=12 "$RUN_TIP"), $SERIES_NOTE"
}

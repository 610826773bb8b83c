# shellcheck shell=bash
# tools/lib/mail.sh: The series as mail for a list: the review of each commit
# (checkpatch, recipients), the sender's identity, the versions produced
# (tags series-vN in the repository that holds commits/), and the send branch
# that carries the sender's sign-off.

# --- review: checkpatch and recipients ----------------------------------------

# The flags b4 0.14's "prep --check" gives checkpatch (0.12 has no --check).
CHECKPATCH_FLAGS=(--strict -q --terse --no-summary --mailback --showfile)
# b4's default recipients commands: maintainers and reviewers To, lists Cc;
# --nogit*: offline, from MAINTAINERS only.
MAINTAINER_FLAGS=(--nogit --nogit-fallback --nogit-chief-penguins --norolestats)

# series_commits BASE TIP: the commits base..TIP, oldest first.
series_commits() { git --git-dir="$BASE_REPO" rev-list --reverse "$1..$2"; }

# commit_patch COMMIT OUT: the commit as a mail file (what review reads).
commit_patch() {
	git --git-dir="$BASE_REPO" format-patch -1 --stdout --no-signature "$1" >"$2"
}

# review_view SRC TIP: a folder (WORK/review-view) that shows the tree SRC
# through one symlink per top-level entry, with a .git of its own that is
# not bare (HEAD at TIP, objects from BASE_REPO): checkpatch runs
# scripts/spdxcheck.py, whose GitPython refuses a worktree of a bare repo
# ("assert not repo.bare"), and checks commit ids with git. Prints its path.
review_view() {
	local src=$1 tip=$2 view=$WORK/review-view entry
	rm -rf "$view" && mkdir -p "$view"
	git init -q "$view"
	printf '%s\n' "$(cd "$BASE_REPO" && pwd -P)/objects" >"$view/.git/objects/info/alternates"
	git -C "$view" update-ref --no-deref HEAD "$tip"
	for entry in "$src"/* "$src"/.[!.]*; do
		[ -e "$entry" ] || continue
		[ "$(basename "$entry")" != .git ] || continue
		ln -s "$entry" "$view/$(basename "$entry")"
	done
	printf '%s\n' "$view"
}

# checkpatch_terse SRC PATCH OUT: checkpatch.pl of the tree SRC on PATCH,
# its terse lines into OUT; prints "errors warnings checks". An output that
# is not checkpatch's (the script missing, perl failing) is an error.
checkpatch_terse() {
	local src=$1 patch=$2 out=$3 rc=0 line='^[^:]*:[0-9]+: (ERROR|WARNING|CHECK):'
	[ -f "$src/scripts/checkpatch.pl" ] || die "no scripts/checkpatch.pl in $src" \
		"The tree at $src is not a kernel tree; check WORKTREE=."
	# Debian's python3 first: checkpatch runs scripts/spdxcheck.py with the
	# python3 on PATH, which needs python3-ply (a pyenv one may lack it).
	(cd "$src" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl "${CHECKPATCH_FLAGS[@]}" "$patch") \
		>"$out" 2>&1 || rc=$?
	# 0: clean, 1: it found something; anything else, or lines that are not
	# its findings, means it did not run.
	if [ "$rc" -gt 1 ] || grep -qv -E "$line" "$out"; then
		die "checkpatch.pl did not run on $(basename "$patch") (exit $rc)" "$(grep -v -E "$line" "$out" | head -n 3)"
	fi
	printf '%s %s %s\n' "$(grep -c ': ERROR:' "$out" || true)" \
		"$(grep -c ': WARNING:' "$out" || true)" "$(grep -c ': CHECK:' "$out" || true)"
}

# spelling PATCH OUT: codespell on the commit message and the added lines of
# PATCH, its findings into OUT; prints their count, or "-" without codespell.
spelling() {
	local patch=$1 out=$2
	if ! command -v codespell >/dev/null 2>&1; then
		: >"$out"
		echo -
		return 0
	fi
	awk '/^diff --git /{d=1} !d && NR>1 || (d && /^\+/ && !/^\+\+\+ /) { sub(/^\+/, ""); print }' "$patch" |
		codespell - >"$out" 2>&1 || true
	grep -c '==>' "$out" || true
}

# recipients SRC PATCH to|cc: the addresses get_maintainer.pl of the tree SRC
# names for PATCH, one a line: "to" the maintainers and reviewers, "cc" the
# lists.
recipients() {
	local src=$1 patch=$2 kind=$3 flags=("${MAINTAINER_FLAGS[@]}") out rc=0
	[ -f "$src/scripts/get_maintainer.pl" ] || die "no scripts/get_maintainer.pl in $src" \
		"The tree at $src is not a kernel tree; check WORKTREE=."
	case "$kind" in
	to) flags+=(--nol) ;;
	cc) flags+=(--nom --nor) ;;
	esac
	out=$(cd "$src" && perl scripts/get_maintainer.pl "${flags[@]}" "$patch" 2>"$patch.gm-err") || rc=$?
	[ "$rc" -eq 0 ] || die "get_maintainer.pl failed on $(basename "$patch") (exit $rc)" "$(head -n 3 "$patch.gm-err")"
	rm -f "$patch.gm-err"
	# Addresses only (a warning on stdout is not a recipient).
	out=$(grep -E '^[^ ].*@[^ ]+\.[^ ]+>?$' <<<"$out" || true)
	# The series' own MAINTAINERS entry names the project's placeholder: not
	# an address to mail (the sender signs the series).
	[ -z "$out" ] || grep -v -E '@(example\.(org|com|net)|localhost)>?$' <<<"$out" || true
}

# --- the sender ----------------------------------------------------------------

# sender_identity: SENDER ("Name <email>") from the user's git config, and
# SENDER_PROBLEM, empty when it can sign mail: unset, or the placeholder the
# patches in commits/ carry (PROJECT_AUTHOR), or an example address, is not.
# shellcheck disable=SC2034 # read by the tools
sender_identity() {
	local name email
	name=$(git -C "$KSTACK_ROOT" config user.name || true)
	email=$(git -C "$KSTACK_ROOT" config user.email || true)
	PROJECT_AUTHOR=$(sed -n 's/^From: //p' "$(commits_patches | head -n 1)" 2>/dev/null | head -n 1 || true)
	SENDER="$name <$email>"
	SENDER_PROBLEM=''
	if [ -z "$name" ] || [ -z "$email" ]; then
		SENDER_PROBLEM="git has no user.name or user.email"
	elif [ "$SENDER" = "$PROJECT_AUTHOR" ]; then
		SENDER_PROBLEM="the identity is the project's placeholder $PROJECT_AUTHOR, which the patches in commits/ carry"
	else
		case "$email" in
		*@example.org | *@example.com | *@example.net | *@localhost | *@localhost.* | *.example | *.invalid)
			SENDER_PROBLEM="$email is not an address a list can reach"
			;;
		esac
	fi
}

# require_sender: stop unless the identity can sign mail.
require_sender() {
	sender_identity
	[ -z "$SENDER_PROBLEM" ] || die "refusing to send: $SENDER_PROBLEM" \
		"Mail is signed by the person who sends it. Set yours:" \
		"  git config --global user.name \"Your Name\"" \
		"  git config --global user.email you@example.net   # the address you send from" \
		"then run this command again."
}

# send_branch BASE TIP OUT_REF: the commits base..TIP re-made on the base
# with the sender as author and the placeholder's Signed-off-by replaced by
# the sender's (git interpret-trailers; trees, dates and all other trailers
# kept). Without a usable identity (a dry run), the commits are as they are.
send_branch() {
	local base=$1 tip=$2 ref=$3 parent=$1 commit msg tree last_sob new
	sender_identity
	if [ -n "$SENDER_PROBLEM" ]; then
		git --git-dir="$BASE_REPO" update-ref "$ref" "$tip"
		return 0
	fi
	local sname=${SENDER% <*} semail=${SENDER##*<}
	semail=${semail%>}
	local author author_env
	while read -r commit; do
		tree=$(git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}")
		author=$(git --git-dir="$BASE_REPO" log -1 --format='%an <%ae>' "$commit")
		# A commit by someone else keeps its author (format-patch then
		# writes an in-body From:); the sender only adds a sign-off.
		author_env=(GIT_AUTHOR_NAME="${author% <*}" GIT_AUTHOR_EMAIL="$(sed 's/.*<//; s/>$//' <<<"$author")")
		[ "$author" != "$PROJECT_AUTHOR" ] || author_env=(GIT_AUTHOR_NAME="$sname" GIT_AUTHOR_EMAIL="$semail")
		msg=$(git --git-dir="$BASE_REPO" log -1 --format=%B "$commit")
		last_sob=$(git interpret-trailers --parse <<<"$msg" | sed -n 's/^Signed-off-by: //p' | tail -n 1)
		if [ "$author" = "$PROJECT_AUTHOR" ] && [ "$last_sob" = "$PROJECT_AUTHOR" ]; then
			# replace: the closest Signed-off-by (the last) is the placeholder's.
			msg=$(git interpret-trailers --where end --if-exists replace \
				--trailer "Signed-off-by: $SENDER" <<<"$msg")
		else
			msg=$(git interpret-trailers --where end --if-exists addIfDifferent \
				--trailer "Signed-off-by: $SENDER" <<<"$msg")
		fi
		new=$(env "${author_env[@]}" \
			GIT_AUTHOR_DATE="$(git --git-dir="$BASE_REPO" log -1 --format=%aD "$commit")" \
			GIT_COMMITTER_NAME="$sname" GIT_COMMITTER_EMAIL="$semail" \
			git --git-dir="$BASE_REPO" commit-tree "$tree" -p "$parent" <<<"$msg")
		parent=$new
	done < <(series_commits "$base" "$tip")
	git --git-dir="$BASE_REPO" update-ref "$ref" "$parent"
}

# --- versions: tags series-vN where commits/ lives ---------------------------

# SERIES_REPO: the git repository holding commits/, and COMMITS_PATH, the
# folder's path inside it; versions are recorded there, so that they travel
# with the project (git clone, git push --tags), not with the work folder.
series_repo() {
	SERIES_REPO=$(git -C "$COMMITS" rev-parse --show-toplevel 2>/dev/null) ||
		die "$COMMITS is not in a git repository" \
			"make send records each version as a tag series-vN on the commit" \
			"that holds commits/; commit the series in a git repository first."
	COMMITS_PATH=$(git -C "$COMMITS" rev-parse --show-prefix)
	COMMITS_PATH=${COMMITS_PATH%/}
	[ -n "$COMMITS_PATH" ] || die "$COMMITS is the top of its git repository" \
		"Keep the series in a folder of the repository (commits/, as this project does)."

}

# The series' patches as committed at REV ("sha256  name" per patch).
version_manifest() {
	local rev=$1 name
	git -C "$SERIES_REPO" ls-tree --name-only "$rev:$COMMITS_PATH" | grep '\.patch$' | sort |
		while read -r name; do
			printf '%s  %s\n' "$(git -C "$SERIES_REPO" show "$rev:$COMMITS_PATH/$name" | sha256sum | cut -d' ' -f1)" "$name"
		done
}

# The versions recorded, one number a line, ascending.
recorded_versions() {
	git -C "$SERIES_REPO" tag -l 'series-v*' | sed -n 's/^series-v\([0-9][0-9]*\)$/\1/p' | sort -n
}

# version_commits N BASE OUT_REF: version N's patches (from its tag) applied
# to BASE with git plumbing (apply --cached on a private index, commit-tree),
# so no checkout of the kernel tree is needed; OUT_REF names the result.
# Returns 1 (with a line said) when they no longer apply to BASE.
version_commits() {
	local n=$1 base=$2 ref=$3 parent=$2 name dir info tree new
	dir=$(mktemp -d "${TMPDIR:-/tmp}/kstack-vN.XXXXXX")
	on_exit "rm -rf $(printf %q "$dir")"
	local names
	names=$(git -C "$SERIES_REPO" ls-tree --name-only "series-v$n:$COMMITS_PATH" | grep '\.patch$' | sort) ||
		die "the tag series-v$n has no patches in $COMMITS_PATH" \
			"It was recorded for another folder; give V= or FORCE=1 to produce without a range-diff."
	export GIT_INDEX_FILE=$dir/index
	git --git-dir="$BASE_REPO" read-tree "$base"
	while read -r name; do
		git -C "$SERIES_REPO" show "series-v$n:$COMMITS_PATH/$name" >"$dir/patch"
		# (the subject's [PATCH] dropped, as git am does)
		git mailinfo "$dir/msg" "$dir/diff" <"$dir/patch" >"$dir/info"
		if ! git --git-dir="$BASE_REPO" apply --cached "$dir/diff" 2>"$dir/err"; then
			say "v$n's $name no longer applies to the base: $(head -n 1 "$dir/err")"
			unset GIT_INDEX_FILE
			return 1
		fi
		tree=$(git --git-dir="$BASE_REPO" write-tree)
		info=$(cat "$dir/info")
		new=$(GIT_AUTHOR_NAME=$(sed -n 's/^Author: //p' <<<"$info") \
			GIT_AUTHOR_EMAIL=$(sed -n 's/^Email: //p' <<<"$info") \
			GIT_AUTHOR_DATE=$(sed -n 's/^Date: //p' <<<"$info") \
			git --git-dir="$BASE_REPO" commit-tree "$tree" -p "$parent" \
			-m "$(sed -n 's/^Subject: //p' <<<"$info")" -F "$dir/msg")
		parent=$new
	done <<<"$names"
	unset GIT_INDEX_FILE
	git --git-dir="$BASE_REPO" update-ref "$ref" "$parent"
}

# record_version N SUMMARY: tag series-vN (annotated) on the repository's
# HEAD, whose commits/ is the series produced; FORCE=1 moves an existing one.
record_version() {
	local n=$1 summary=$2
	git -C "$SERIES_REPO" tag -a -f -m "kstack series v$n" -m "$summary" "series-v$n" HEAD >/dev/null
}

# require_b4 WHAT: b4 on PATH and at least 0.12 (Debian 12's: --offline-mode,
# "prep -e", "trailers -u -m"), or stop saying what to install.
require_b4() {
	local version
	command -v b4 >/dev/null 2>&1 || die "b4 is not installed; $1 needs it" \
		"Install it: apt-get install b4 (or make deps)."
	version=$(b4 --version 2>/dev/null | head -n 1)
	if ! printf '%s\n0.12.0\n' "$version" | sort -V -C -r 2>/dev/null ||
		! [[ "$version" =~ ^[0-9]+\.[0-9]+ ]]; then
		die "b4 ${version:-(no version)} is too old for $1: it needs b4 0.12 or newer" \
			"(--offline-mode, prep -e, trailers -u -m). Debian 12 has 0.12.0: apt-get install b4."
	fi
}

#!/usr/bin/env bats
# End to end on the real linux-source-6.1: import (shared with the user's
# work folder, which this only reads or adds to), make worktree, am of the
# series in commits/, export, and the round trip through a second worktree.
# The worktrees are the test's own, under KSTACK_TEST_WORK, on branches of
# their own: a user's worktree is never touched.

load ../helpers

setup_file() { setup_e2e_work; }

@test "real base: import verifies the tarball and gives the commit in upstream-base.txt" {
	run "$TOOLS/import"
	ran_ok
	[ "$(git --git-dir="$BASE_REPO" rev-parse kstack-base)" = "$(sed -n 's/^base_commit=//p' "$KSTACK_ROOT/upstream-base.txt")" ]
}

@test "real base: worktree and am apply the series" {
	FORCE=1 run "$TOOLS/worktree"
	ran_ok
	run "$TOOLS/am"
	ran_ok
	[ "$(git -C "$WORKTREE" rev-list --count kstack-base..HEAD)" -eq "$(count_patches)" ]
	run "$TOOLS/status"
	[[ "$output" == *"series:    same"* ]]
}

@test "real base: export of the unchanged series changes no file" {
	run "$TOOLS/export"
	ran_ok
	diff -r <(cd "$KSTACK_ROOT/commits" && cat ./*.patch) <(cd "$COMMITS" && cat ./*.patch)
}

@test "real base: round trip through a second worktree gives the same tree at every step" {
	step_trees "$WORKTREE" >"$WORK/trees.before"
	WORKTREE=$WORK/roundtrip BRANCH=kstack-test-roundtrip FORCE=1 "$TOOLS/worktree"
	WORKTREE=$WORK/roundtrip "$TOOLS/am"
	step_trees "$WORK/roundtrip" >"$WORK/trees.after"
	[ -s "$WORK/trees.before" ]
	diff "$WORK/trees.before" "$WORK/trees.after"
}

@test "real series: review is clean; the outbox applies with git am and b4 am to the tip's tree" {
	# commits/ in a git repository of the test's own (versions are tags
	# there), and a sender who is not the placeholder.
	local proj=$WORK/mail-project apply=$WORK/apply
	rm -rf "$proj" && mkdir -p "$proj/commits"
	cp "$KSTACK_ROOT"/commits/* "$proj/commits/"
	export GIT_CONFIG_GLOBAL=$WORK/gitconfig
	git config --global user.name "Sam Sender"
	git config --global user.email "sam@kernel.test"
	git init -q "$proj" && git -C "$proj" add -A && git -C "$proj" commit -q -m series
	COMMITS=$proj/commits run "$TOOLS/review"
	ran_ok
	[[ "$output" == *"x86@kernel.org"* ]]
	COMMITS=$proj/commits run "$TOOLS/send"
	ran_ok
	local n
	n=$(count_patches)
	[ "$(find "$WORK/outbox/v1/mail" -name '*.patch' | wc -l)" -eq $((n + 1)) ]
	# git format-patch pads the cover's number to the count's width: 00/11
	grep -q "^Subject: \[RFC PATCH $(printf '%0*d' ${#n} 0)/$n\] " "$WORK/outbox/v1/mail/0000-cover-letter.patch"
	grep -q "^base-commit: $(git --git-dir="$BASE_REPO" rev-parse kstack-base)$" "$WORK/outbox/v1/mail/0000-cover-letter.patch"
	git -C "$proj" rev-parse -q --verify refs/tags/series-v1
	# git am of the mbox onto the base
	rm -rf "$apply"
	git --git-dir="$BASE_REPO" worktree prune
	git --git-dir="$BASE_REPO" worktree add -q --detach "$apply" kstack-base
	git -C "$apply" am -q "$WORK/outbox/v1/series.mbox"
	[ "$(git -C "$apply" rev-parse "HEAD^{tree}")" = "$(git -C "$WORKTREE" rev-parse "HEAD^{tree}")" ]
	step_trees "$WORKTREE" >"$WORK/trees.sent"
	step_trees "$apply" >"$WORK/trees.am"
	diff "$WORK/trees.sent" "$WORK/trees.am"
	# the same messages, apart from the sender's sign-off for the placeholder's
	local placeholder
	placeholder=$(sed -n 's/^From: //p' "$KSTACK_ROOT"/commits/0001-*.patch | head -n 1)
	diff <(git -C "$WORKTREE" log --format='%B' kstack-base..HEAD) \
		<(git -C "$apply" log --format='%B' kstack-base..HEAD |
			sed "s/^Signed-off-by: Sam Sender <sam@kernel.test>\$/Signed-off-by: $placeholder/")
	# b4 am of the whole thread, onto the base again
	git -C "$apply" checkout -q --detach kstack-base
	rm -rf "$WORK/b4am" && mkdir -p "$WORK/b4am"
	# (on stdin: b4 0.12's "-m FILE" fails on a folded Subject:)
	(cd "$apply" && b4 -q --offline-mode am -m - -o "$WORK/b4am" <"$WORK/outbox/v1/thread.mbox")
	git -C "$apply" am -q "$WORK"/b4am/*.mbx
	[ "$(git -C "$apply" rev-parse "HEAD^{tree}")" = "$(git -C "$WORKTREE" rev-parse "HEAD^{tree}")" ]
	git --git-dir="$BASE_REPO" worktree remove --force "$apply"
	# a reply with a Reviewed-by for patch 2 ends up in commits/0002-*
	local p2 id
	p2=$(find "$WORK/outbox/v1/mail" -name '0002-*.patch')
	id=$(sed -n 's/^Message-I[dD]: //p' "$p2" | head -n 1)
	{
		printf 'From rita Thu Dec  3 12:00:00 2026\nFrom: Rita Reviewer <rita@kernel.test>\n'
		printf 'Subject: Re: %s\n' "$(awk '/^Subject: /{s=$0; f=1; next} f && /^[ \t]/{s=s $0; next} {f=0} END{sub(/^Subject: /, "", s); print s}' "$p2")"
		printf 'Message-ID: <rita-1@kernel.test>\nIn-Reply-To: %s\n\nReviewed-by: Rita Reviewer <rita@kernel.test>\n\n' "$id"
	} >"$WORK/replies.mbox"
	COMMITS=$proj/commits MBOX=$WORK/replies.mbox run "$TOOLS/trailers"
	echo "$output" >&3
	ran_ok
	COMMITS=$proj/commits run "$TOOLS/export"
	ran_ok
	grep -q '^Reviewed-by: Rita Reviewer <rita@kernel.test>$' "$proj"/commits/0002-*.patch
	[ "$(grep -l 'Reviewed-by: Rita' "$proj"/commits/*.patch | wc -l)" -eq 1 ]
}

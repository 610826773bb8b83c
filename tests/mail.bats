#!/usr/bin/env bats
# make review, make send, make trailers on the fake kernel: recipients from
# a fixture MAINTAINERS (with the kernel's real get_maintainer.pl), the
# sender's identity, versions and the range-diff, TO=/CC=, sending only when
# asked (a fake git-send-email records what it was given), trailers from a
# reply mbox, and the refusals.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	local extra=$BATS_FILE_TMPDIR/extra
	mkdir -p "$extra/scripts" "$extra/include" "$extra/drivers" "$extra/fs" "$extra/init" \
		"$extra/ipc" "$extra/lib"
	# get_maintainer.pl is the kernel's own, from the distro source package.
	tar -xJf /usr/src/linux-source-6.1.tar.xz -O linux-source-6.1/scripts/get_maintainer.pl \
		>"$extra/scripts/get_maintainer.pl"
	for f in COPYING CREDITS Kbuild include/README drivers/README fs/README init/README \
		ipc/README lib/README; do echo "fake $f" >"$extra/$f"; done
	cat >"$extra/MAINTAINERS" <<'EOF'
List of maintainers (a fixture for the kstack tests)

Descriptions of section entries and preferred order
-----------------------------------------------------

THE REST
M:	Linus Torvalds <torvalds@kernel.test>
S:	Buried alive in reporters

X86 ARCHITECTURE (32-BIT AND 64-BIT)
M:	Thomas Tester <tglx@kernel.test>
R:	Rhea Reviewer <rhea@kernel.test>
L:	x86-list@lists.kernel.test
S:	Maintained
F:	arch/x86/

KERNEL CORE
M:	Kay Core <kay@kernel.test>
L:	core-list@lists.kernel.test
S:	Maintained
F:	kernel/
EOF
	FAKE_KERNEL_EXTRA=$extra setup_fake_kernel_file
}

setup() {
	setup_test_work
	# commits/ lives in a git repository of its own, where versions are tags.
	export COMMITS=$WORK/project/commits
	mkdir -p "$COMMITS"
	git init -q "$WORK/project"
	make_series
	printf 'fake: a test series\n\nThree commits for the tests.\n' >"$COMMITS/cover-letter.txt"
	commit_project "the series"
	git config --global user.name "Sam Sender"
	git config --global user.email "sam@kernel.test"
	# A fake git send-email on PATH, which only records its arguments.
	mkdir -p "$WORK/bin"
	cat >"$WORK/bin/git-send-email" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" >>"$SENT_LOG"
EOF
	chmod +x "$WORK/bin/git-send-email"
	export PATH=$WORK/bin:$PATH SENT_LOG=$WORK/sent.log
}

commit_project() { git -C "$WORK/project" add -A && git -C "$WORK/project" commit -q -m "$1"; }
outbox() { printf '%s/outbox/v%s/mail\n' "$WORK" "$1"; }

@test "review: checkpatch per commit and recipients from MAINTAINERS, merged; a warning fails it" {
	run "$TOOLS/review"
	[ "$status" -eq 0 ]
	grep -qE '^\| 1 \| [0-9a-f]{12} \| kernel: make step 3 return 33 \| 0/0/0 \| [0-9-]+ \| Kay Core <kay@kernel.test> \| core-list@lists.kernel.test \|$' <<<"$output"
	grep -qE '^\| 2 \| .* x86/mm: halve the task stack \| 0/0/0 \| .* Thomas Tester <tglx@kernel.test>; Rhea Reviewer <rhea@kernel.test> \| x86-list@lists.kernel.test \|$' <<<"$output"
	[ "$(sed -n '/^To:$/,/^$/p' <<<"$output" | grep -c '^- ')" -eq 3 ]
	[ "$(sed -n '/^Cc:$/,$p' <<<"$output" | grep -c '^- .*lists.kernel.test')" -eq 2 ]
	[ -f "$WORK/review/review.md" ]
	commit_change kernel/fork.c 's/return 7;/return 7; \/* WARNME FIXME *\//' "kernel: step 7 warns"
	run "$TOOLS/review"
	[ "$status" -eq 1 ]
	grep -qE '^\| 4 \| .* kernel: step 7 warns \| 0/1/1 \|' <<<"$output"
	[[ "$output" == *"1 of 4 commits have checkpatch errors or warnings"* ]]
}

@test "send: a dry run writes v1, signed by the sender, records series-v1, sends nothing" {
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	[[ "$output" == *"a dry run: nothing was sent"* ]]
	[ "$(find "$(outbox 1)" -name '*.patch' | wc -l)" -eq 4 ]
	grep -q '^Subject: \[RFC PATCH 0/3\] fake: a test series$' "$(outbox 1)/0000-cover-letter.patch"
	grep -q '^base-commit: ' "$(outbox 1)/0000-cover-letter.patch"
	grep -q "Debian kstack-fake-kernel $(sed -n 's/^version=//p' "$BASE_FILE" | tail -n 1)," "$(outbox 1)/0000-cover-letter.patch"
	grep -q 'NOT YET: no make bisect-boot run' "$(outbox 1)/0000-cover-letter.patch"
	run ! grep -q 'Range-diff' "$(outbox 1)/0000-cover-letter.patch"
	local p2
	p2=$(outbox 1)/0002-x86-mm-halve-the-task-stack.patch
	grep -q '^Subject: \[RFC PATCH 2/3\] x86/mm: halve the task stack$' "$p2"
	grep -q '^From: Sam Sender <sam@kernel.test>$' "$p2"
	grep -q '^In-Reply-To: <cover\.' "$p2"
	# the placeholder's sign-off (the patches' author) replaced, nothing else
	[ "$(grep -c '^Signed-off-by: ' "$p2")" -eq 1 ]
	grep -q '^Signed-off-by: Sam Sender <sam@kernel.test>$' "$p2"
	# the series' recipients, merged, on every mail
	sed -n '/^To:/,/^Cc:/p' "$p2" | grep -q 'Thomas Tester <tglx@kernel.test>'
	sed -n '/^To:/,/^Cc:/p' "$p2" | grep -q 'Kay Core <kay@kernel.test>'
	git -C "$WORK/project" rev-parse -q --verify refs/tags/series-v1
	[ ! -e "$SENT_LOG" ]
	# commits/ keeps the project identity
	grep -q '^From: Test Author <test@example.org>$' "$COMMITS"/0002-*.patch
	# the mbox applies to the base and gives the tip's tree
	git --git-dir="$BASE_REPO" worktree add -q --detach "$WORK/apply" kstack-base
	git -C "$WORK/apply" am -q "$WORK/outbox/v1/series.mbox"
	[ "$(git -C "$WORK/apply" rev-parse "HEAD^{tree}")" = "$(git -C "$WORKTREE" rev-parse "HEAD^{tree}")" ]
	[ "$(git -C "$WORK/apply" log -1 --format=%an)" = "Sam Sender" ]
}

@test "send: v2 after a change carries a range-diff to v1; an old V= is refused" {
	"$TOOLS/send" 2>/dev/null
	commit_change kernel/fork.c 's/return 9;/return 99;/' "kernel: make step 9 return 99"
	"$TOOLS/export" 2>/dev/null
	commit_project "v2"
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	local cover
	cover=$(outbox 2)/v2-0000-cover-letter.patch
	grep -q '^Subject: \[RFC PATCH v2 0/4\] fake: a test series$' "$cover"
	grep -q '^Range-diff against v1:$' "$cover"
	grep -qE '^-:  -+ > 4:  [0-9a-f]+ kernel: make step 9 return 99$' "$cover"
	# the unchanged commits are equal: same sign-off on both sides
	grep -qE '^1:  [0-9a-f]+ = 1:  [0-9a-f]+ kernel: make step 3 return 33$' "$cover"
	grep -qE '^3:  [0-9a-f]+ = 3:  [0-9a-f]+ kernel: make step 30 return 300$' "$cover"
	[[ "$output" == *"[RFC PATCH v2 0/4] fake: a test series"* ]]
	[[ "$output" != *"error"* ]]
	grep -q 'not written yet: add a "Changes in v2:" paragraph' "$cover"
	git -C "$WORK/project" rev-parse -q --verify refs/tags/series-v2
	V=1 run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing v1: it is not greater than the last version produced, v2"* ]]
	[[ "$output" == *"V=3"* ]]
	# the same series again is v2 again, not v3
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	[[ "$output" == *"producing v2"* ]]
	run ! git -C "$WORK/project" rev-parse -q --verify refs/tags/series-v3
}

@test "send: TO= and CC= replace the recipients get_maintainer.pl gives" {
	TO="a@kernel.test,b@kernel.test" CC="c@lists.kernel.test" run "$TOOLS/send"
	[ "$status" -eq 0 ]
	local p1
	p1=$(outbox 1)/0001-kernel-make-step-3-return-33.patch
	[ "$(sed -n '/^To:/,/^Cc:/p' "$p1" | tr -d ' \n')" = "To:a@kernel.test,b@kernel.testCc:c@lists.kernel.test" ]
	run ! grep -q 'kay@kernel.test' "$p1"
}

@test "send: SEND=1 refuses the placeholder identity and missing results; FORCE=1, reflect" {
	git config --global user.email test@example.org
	git config --global user.name "Test Author"
	SEND=1 run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to send: the identity is the project's placeholder Test Author <test@example.org>"* ]]
	[[ "$output" == *'git config --global user.name "Your Name"'* ]]
	git config --global user.name "Sam Sender"
	git config --global user.email "sam@kernel.test"
	SEND=1 run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no make bisect-boot results for these trees"* ]]
	[ ! -e "$SENT_LOG" ]
	SEND=1 FORCE=1 run "$TOOLS/send"
	[ "$status" -eq 0 ]
	[ "$(grep -c '\.patch$' "$SENT_LOG")" -eq 4 ]
	run ! grep -q -- '--suppress-cc' "$SENT_LOG"
	rm "$SENT_LOG"
	SEND=reflect FORCE=1 run "$TOOLS/send"
	[ "$status" -eq 0 ]
	grep -qx -- '--to=Sam Sender <sam@kernel.test>' "$SENT_LOG"
	grep -qx -- '--suppress-cc=all' "$SENT_LOG"
	run ! grep -h '^To:' "$WORK"/outbox/v1/reflect/*.patch
	[ "$(find "$WORK/outbox/v1/reflect" -name '*.patch' | wc -l)" -eq 4 ]
	SEND=yes run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"SEND=yes: give SEND=1"* ]]
}

@test "send: refuses a dirty worktree, commits/ out of date, or commits/ not committed" {
	echo dirt >>"$WORKTREE/README"
	run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the worktree $WORKTREE has uncommitted changes"* ]]
	git -C "$WORKTREE" checkout -q README
	commit_change kernel/fork.c 's/return 9;/return 99;/' "kernel: make step 9 return 99"
	run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"commits/ is out of date with the worktree"* ]]
	[[ "$output" == *"make export"* ]]
	"$TOOLS/export" 2>/dev/null
	run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"commits/ has changes not committed"* ]]
	[ ! -d "$WORK/outbox" ]
	[ -z "$(git -C "$WORK/project" tag -l)" ]
}

# reply TO_FILE FROM TRAILER: a reply mbox entry to one outbox mail.
reply() {
	local to=$1 from=$2 trailer=$3 id subject
	id=$(sed -n 's/^Message-I[dD]: //p' "$to" | head -n 1)
	subject=$(sed -n 's/^Subject: //p' "$to" | head -n 1)
	cat <<EOF
From reviewer Thu Dec  3 12:00:00 2026
From: $from
To: Sam Sender <sam@kernel.test>
Subject: Re: $subject
Date: Thu, 3 Dec 2026 12:00:00 +0000
Message-ID: <reply-$RANDOM@kernel.test>
In-Reply-To: $id
References: $id

> quoted text

$trailer

EOF
}

# v1 sent (a dry run), and a reply to its patch 2 with a Reviewed-by in
# WORK/replies.mbox.
send_and_review_patch2() {
	"$TOOLS/send" 2>/dev/null
	reply "$(outbox 1)"/0002-*.patch "Rhea Reviewer <rhea@kernel.test>" \
		"Reviewed-by: Rhea Reviewer <rhea@kernel.test>" >"$WORK/replies.mbox"
}

@test "trailers: a Reviewed-by for patch 2 lands in its commit, then in commits/ by export" {
	send_and_review_patch2
	MBOX=$WORK/replies.mbox run "$TOOLS/trailers"
	[ "$status" -eq 0 ]
	[[ "$output" == *"x86/mm: halve the task stack: Reviewed-by: Rhea Reviewer <rhea@kernel.test>"* ]]
	[ "$(git -C "$WORKTREE" log -1 --format=%B HEAD~1 | git interpret-trailers --parse | grep -c Reviewed-by)" -eq 1 ]
	[ "$(git -C "$WORKTREE" log -1 --format=%B HEAD | grep -c Reviewed-by)" -eq 0 ]
	[ "$(git -C "$WORKTREE" log -1 --format=%B HEAD~2 | grep -c Reviewed-by)" -eq 0 ]
	"$TOOLS/export" 2>/dev/null
	grep -q '^Reviewed-by: Rhea Reviewer <rhea@kernel.test>$' "$COMMITS"/0002-*.patch
	run ! grep -q 'Reviewed-by' "$COMMITS"/0001-*.patch "$COMMITS"/0003-*.patch
	# the same replies again: nothing new
	MBOX=$WORK/replies.mbox run "$TOOLS/trailers"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing new"* ]]
}

@test "trailers: a reply to a patch that changed since is reported, not applied" {
	send_and_review_patch2
	# patch 2 changes (same subject), then the reply comes in
	third=$(git -C "$WORKTREE" rev-parse HEAD)
	git -C "$WORKTREE" reset -q --hard HEAD~1
	sed -i 's/THREAD_SIZE_ORDER\t1/THREAD_SIZE_ORDER\t0/' "$WORKTREE/arch/x86/include/asm/page_64_types.h"
	git -C "$WORKTREE" commit -q -a --amend --no-edit
	git -C "$WORKTREE" cherry-pick "$third" >/dev/null
	head=$(git -C "$WORKTREE" rev-parse HEAD)
	MBOX=$WORK/replies.mbox run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not taken, the patch changed since it was reviewed ('x86/mm: halve the task stack')"* ]]
	[[ "$output" == *"The series is untouched."* ]]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$head" ]
}

@test "trailers: not an mbox, no replies, no MBOX=: errors, the series untouched" {
	head=$(git -C "$WORKTREE" rev-parse HEAD)
	echo "just text" >"$WORK/notes.txt"
	MBOX=$WORK/notes.txt run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not an mbox"* ]]
	"$TOOLS/send" 2>/dev/null
	cp "$WORK/outbox/v1/thread.mbox" "$WORK/thread.mbox"
	MBOX=$WORK/thread.mbox run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no reply in MBOX gives a trailer this series can take"* ]]
	run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"make trailers MBOX=FILE"* ]]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$head" ]
}

@test "trailers: a b4 too old for its options is an error saying what to install" {
	send_and_review_patch2
	printf '#!/bin/sh\necho 0.10.1\n' >"$WORK/bin/b4" && chmod +x "$WORK/bin/b4"
	head=$(git -C "$WORKTREE" rev-parse HEAD)
	MBOX=$WORK/replies.mbox run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"b4 0.10.1 is too old for make trailers: it needs b4 0.12 or newer"* ]]
	[[ "$output" == *"apt-get install b4"* ]]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$head" ]
}

@test "send: the cover letter's test matrix and figures come from the bisect-boot run of these trees" {
	setup_fake_boot
	export CCACHE_DISABLE=1 ARCHES=x86_64 CONFIGS=x86_64 BOOT_TIMEOUT=30
	"$TOOLS/bisect-boot" 2>/dev/null
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	local cover
	cover=$(outbox 1)/0000-cover-letter.patch
	grep -qE '^  1/3  kernel: make step 3 return 33 +GOOD 5/0 *$' "$cover"
	grep -qE '^  3/3  kernel: make step 30 return 300 +GOOD 5/0 *$' "$cover"
	# the fixture console's KernelStack line: (3712 - 508) kB / 200 threads
	grep -q 'x86_64         KernelStack 16404 bytes per thread' "$cover"
	run ! grep -q 'NOT YET' "$cover"
	SEND=1 run "$TOOLS/send"
	[ "$status" -eq 0 ]
	[ "$(grep -c '\.patch$' "$SENT_LOG")" -eq 4 ]
	# a commit changed since the run: its tree has no results any more
	commit_change kernel/fork.c 's/return 9;/return 99;/' "kernel: make step 9 return 99"
	"$TOOLS/export" 2>/dev/null
	commit_project "step 9"
	printf '\nChanges in v2:\n- step 9 returns 99.\n' >>"$COMMITS/cover-letter.txt"
	commit_project "changelog"
	SEND=1 run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no make bisect-boot results for these trees"* ]]
	run ! grep -q 'not written yet' "$(outbox 2)/v2-0000-cover-letter.patch"
	grep -q '^- step 9 returns 99.$' "$(outbox 2)/v2-0000-cover-letter.patch"
}

@test "send: SEND=1 with a checkpatch warning is refused, even with FORCE=1" {
	commit_change kernel/fork.c 's/return 7;/return 7; \/* WARNME *\//' "kernel: step 7 warns"
	"$TOOLS/export" 2>/dev/null
	commit_project "a warning"
	SEND=1 FORCE=1 run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"refusing to send: make review fails (checkpatch errors or warnings)"* ]]
	[ ! -e "$SENT_LOG" ]
	# FORCE=1 produces an old version again
	V=1 FORCE=1 run "$TOOLS/send"
	[ "$status" -eq 0 ]
	[[ "$output" == *"producing v1"* ]]
}

@test "review: a finding in the commit message (no file name) is counted, not 'did not run'" {
	commit_change kernel/fork.c 's/return 7;/return 70;/' "kernel: step 7 MSGWARN in the message"
	run "$TOOLS/review"
	[ "$status" -eq 1 ]
	grep -qE '^\| 4 \| .* kernel: step 7 MSGWARN in the message \| 0/1/0 \|' <<<"$output"
	[[ "$output" != *"did not run"* ]]
}

@test "send: a commit by someone else keeps its author and sign-off; the sender adds one" {
	sed -i 's/return 11;/return 111;/' "$WORKTREE/kernel/fork.c"
	git -C "$WORKTREE" -c user.name="Alice Other" -c user.email=alice@kernel.test \
		commit -q -a -s -m "kernel: a note from Alice" -m "Why: a commit by another author."
	"$TOOLS/export" 2>/dev/null
	commit_project "Alice's commit"
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	local p4
	p4=$(outbox 1)/0004-kernel-a-note-from-Alice.patch
	grep -q '^From: Sam Sender <sam@kernel.test>$' "$p4"
	# the in-body From: names the author; both sign-offs are there
	[ "$(sed '1,/^$/d' "$p4" | head -n 1)" = "From: Alice Other <alice@kernel.test>" ]
	grep -q '^Signed-off-by: Alice Other <alice@kernel.test>$' "$p4"
	grep -q '^Signed-off-by: Sam Sender <sam@kernel.test>$' "$p4"
}

@test "send: a version that was sent keeps its outbox; reflect takes no address from config" {
	git config --global sendemail.tocmd "echo list@lists.kernel.test"
	SEND=reflect FORCE=1 run "$TOOLS/send"
	[ "$status" -eq 0 ]
	grep -qx -- '--to-cmd=true' "$SENT_LOG"
	grep -qx -- '--no-to' "$SENT_LOG"
	run "$TOOLS/send"
	[ "$status" -eq 1 ]
	[[ "$output" == *"v1 was sent already (sent-reflect); its outbox is kept as sent"* ]]
}

@test "trailers: a Reviewed-by to the cover letter goes to every commit, unless the series changed" {
	"$TOOLS/send" 2>/dev/null
	reply "$(outbox 1)"/0000-cover-letter.patch "Rhea Reviewer <rhea@kernel.test>" \
		"Reviewed-by: Rhea Reviewer <rhea@kernel.test>" >"$WORK/cover-reply.mbox"
	commit_change kernel/fork.c 's/return 9;/return 99;/' "kernel: make step 9 return 99"
	head=$(git -C "$WORKTREE" rev-parse HEAD)
	MBOX=$WORK/cover-reply.mbox run "$TOOLS/trailers"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not taken, a reply to the cover letter, and the series changed since"* ]]
	[ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$head" ]
	git -C "$WORKTREE" reset -q --hard HEAD~1
	MBOX=$WORK/cover-reply.mbox run "$TOOLS/trailers"
	[ "$status" -eq 0 ]
	[ "$(git -C "$WORKTREE" log --format=%B kstack-base..HEAD | grep -c '^Reviewed-by: Rhea Reviewer')" -eq 3 ]
}

@test "review on a fresh work folder sets itself up first, like bisect-boot" {
	export WORK=$BATS_TEST_TMPDIR/fresh
	export BASE_REPO=$WORK/base.git WORKTREE=$WORK/worktree
	run "$TOOLS/review"
	[ "$status" -eq 0 ]
	[[ "$output" == *"setting up: the distro base is not imported in $BASE_REPO; importing it"* ]]
	[[ "$output" == *"setting up: applying the series in $COMMITS (make am)"* ]]
	grep -qE '^\| 3 \| .* kernel: make step 30 return 300 \| 0/0/0 \|' <<<"$output"
}

@test "send: the cover letter quotes make report's bench figures only when they are of this tip" {
	local cover tree
	mkdir -p "$WORK/results/report"
	printf 'Figures from make bench (a fixture)\n\n  check on/off: getppid 1.23 (1.20-1.30)\n' \
		>"$WORK/results/report/cover-figures.txt"
	# a bench of another tree: not quoted
	printf '0123456789ab\n' >"$WORK/results/report/bench-trees"
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	cover=$(outbox 1)/0000-cover-letter.patch
	run ! grep -q 'Figures from make bench' "$cover"
	# a bench of the tip's tree: quoted as make report wrote it
	tree=$(git -C "$WORKTREE" rev-parse --short=12 'HEAD^{tree}')
	printf 'fedcba987654\n%s\n' "$tree" >"$WORK/results/report/bench-trees"
	run "$TOOLS/send"
	[ "$status" -eq 0 ]
	grep -qx 'Figures from make bench (a fixture)' "$cover"
	grep -qx '  check on/off: getppid 1.23 (1.20-1.30)' "$cover"
}

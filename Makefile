# kstack: a kernel series kept as files, applied to a distro kernel in a
# throwaway worktree. Every target is one line that calls one tool; the
# variables (WORK=, WORKTREE=, BRANCH=, FORCE=1, ...) pass through to it.
# See README.md and CONTRIBUTING.md.

.DEFAULT_GOAL := help
.PHONY: help deps import worktree am export status build bisect-build image boot \
	bisect-boot bisect bench report stack-depth clean-results test shellcheck review send trailers

help: ## list the targets
	@awk -F ':.*## ' '/^[a-z-]+:.*## / { printf "  make %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

deps: ## install the Debian packages the project needs (only the missing ones)
	@tools/deps

import: ## import the distro kernel source into the base repo (once; cached)
	@tools/import

worktree: ## make or reset the throwaway worktree at the base (FORCE=1 drops unexported work)
	@tools/worktree

am: ## git am the patches in commits/ onto the worktree
	@tools/am

export: ## write the worktree's commits back into commits/ (byte-stable)
	@tools/export

status: ## base, worktree, and how its series compares with commits/
	@tools/status

build: ## build the worktree as it is, per config (ARCHES=, CONFIGS=)
	@tools/build

bisect-build: ## build every step base..tip per config, cached; table + results (FORCE=1 rebuilds)
	@tools/bisect-build

image: ## build the debootstrap ext4 guest image per arch (rebuilt when its recipe changes)
	@tools/image

boot: ## build the worktree and boot it in QEMU, guest tests, verdict (0 good, 1 bad, 125 no build)
	@tools/boot

bisect-boot: ## the main job: build and boot every step base..tip per config, table + results
	@tools/bisect-boot

bench: ## benchmarks in QEMU: base vs tip, stock vs small stack, check off/on/stack tracer (ROUNDS=5, QUICK=1)
	@tools/bench

report: ## the last bench and bisect-boot as Markdown with plots (BENCH=<run>, BASELINE=<run>)
	@tools/report

stack-depth: ## static worst-case stack depth per config from gcc's call graphs (TIP=, STEP=, TOP=)
	@tools/stack-depth

bisect: ## git bisect run with build+boot+tests between the base (GOOD=) and tip (BAD=)
	@tools/bisect

review: ## checkpatch --strict and get_maintainer.pl per commit, offline; exit 1 on an error or warning
	@tools/review

send: ## the series as mail vN in WORK/outbox (a dry run); SEND=1 sends, SEND=reflect to yourself
	@tools/send

trailers: ## take Reviewed-by/Acked-by/Tested-by from a reply mbox (MBOX=) into the worktree's commits
	@tools/trailers

clean-results: ## remove runs beyond KEEP= (10) per kind, and cached results no kept run names
	@tools/clean-results

shellcheck: ## shellcheck every script in tools/, tests/, ci/ and .ci/
	@tools/shellcheck

test: ## the project's tests: shellcheck, the tools' tests, the end-to-end run
	@tools/test

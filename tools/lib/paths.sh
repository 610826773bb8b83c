# shellcheck shell=bash
# tools/lib/paths.sh: Where everything lives: the checkout, the work folder
# and what is in it, ccache.

KSTACK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Everything big lives in one work folder outside the checkout.
WORK=${WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/kstack}
BASE_REPO=${BASE_REPO:-$WORK/base.git}
WORKTREE=${WORKTREE:-$WORK/worktree}
BRANCH=${BRANCH:-kstack}
COMMITS=${COMMITS:-$KSTACK_ROOT/commits}
BASE_FILE=${BASE_FILE:-$KSTACK_ROOT/upstream-base.txt}
# The tag in BASE_REPO that names the imported base commit.
BASE_TAG=kstack-base

CONFIGS_DIR=${CONFIGS_DIR:-$KSTACK_ROOT/configs}
RESULTS=${RESULTS:-$WORK/results}
JOBS=${JOBS:-$(nproc)}
# ccache in the user's cache folder, bounded; paths relative to the parent of
# the work folder, so the same layout elsewhere (make test's) hits too.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$WORK")}

GUEST_DIR=${GUEST_DIR:-$KSTACK_ROOT/guest-image}

# shellcheck shell=bash
# What the kstack tools share, one concern per file in tools/lib/ (the file
# names say what is inside). Sourced by every script in tools/; it loads:
#   core      messages (say, die), one trap list, verdict exit codes, the lock
#   paths     the work folder and what lives in it
#   packages  the Debian packages, installed when missing
#   series    the base, the worktree, commits/, series_state, the first-run set-up
#   arch      configs/*.arch (checked when loaded), the configs a run selects
#   build     a kernel built out of tree; the test modules built against it
#   image     the guest root image
#   payload   the guest tests on the payload disk
#   qemu      a boot in QEMU and its verdict
#   steps     one step: build then boot, each cached by what decides it
#   run       a run over every step: records, the table
#   mail      review (checkpatch, recipients), the sender, versions (tags)
#   cover     a version's cover letter: base, test matrix, figures, changelog
# and then the series' own tests, behind the hooks qemu and steps call
# (SERIES_TESTS=, default tools/lib/kstack-tests.sh).

KSTACK_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd)
# shellcheck source=lib/core.sh
. "$KSTACK_LIB/core.sh"
# shellcheck source=lib/paths.sh
. "$KSTACK_LIB/paths.sh"
# shellcheck source=lib/packages.sh
. "$KSTACK_LIB/packages.sh"
# shellcheck source=lib/series.sh
. "$KSTACK_LIB/series.sh"
# shellcheck source=lib/arch.sh
. "$KSTACK_LIB/arch.sh"
# shellcheck source=lib/build.sh
. "$KSTACK_LIB/build.sh"
# shellcheck source=lib/image.sh
. "$KSTACK_LIB/image.sh"
# shellcheck source=lib/payload.sh
. "$KSTACK_LIB/payload.sh"
# shellcheck source=lib/qemu.sh
. "$KSTACK_LIB/qemu.sh"
# shellcheck source=lib/steps.sh
. "$KSTACK_LIB/steps.sh"
# shellcheck source=lib/run.sh
. "$KSTACK_LIB/run.sh"
# shellcheck source=lib/mail.sh
. "$KSTACK_LIB/mail.sh"
# shellcheck source=lib/cover.sh
. "$KSTACK_LIB/cover.sh"
SERIES_TESTS=${SERIES_TESTS:-$KSTACK_LIB/kstack-tests.sh}
# shellcheck source=lib/kstack-tests.sh
. "$SERIES_TESTS"

# shellcheck shell=bash
# tools/lib/qemu.sh: Booting a kernel in QEMU (KVM probe, TCG fallback), and
# reading its console into a verdict.

# A boot still running after BOOT_TIMEOUT seconds is stopped: TIMEOUT. Under
# TCG the x86_64 test boot with the check and the memory-pressure workload
# took 139-157 s at 8 KiB and went past 180 s at 16 KiB (all its tests but
# the last had passed), so 180 called a slow boot a hang; a boot ends when
# its tests do, so only a hung kernel waits the whole time.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}

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
	key="$(uname -r) $($qemu_binary --version | sed -n 1p)"
	probe_file=$WORK/accel-probe
	if [ -f "$probe_file" ] && [ "$(sed -n 1p "$probe_file")" = "$key" ]; then
		sed -n 2p "$probe_file"
		return
	fi
	# Into a file, not a pipe into grep -q: QEMU killed by SIGPIPE would make
	# the pipeline fail (pipefail) and a working KVM read as hanging.
	mkdir -p "$WORK"
	timeout 20 "$qemu_binary" -accel kvm "${qemu_args[@]}" -nographic -no-reboot \
		-kernel "$kernel" -append "console=$console panic=-1" </dev/null >"$probe_file.log" 2>&1 || true
	if grep -q -m1 'Linux version' "$probe_file.log"; then
		answer=kvm
	fi
	printf '%s\n%s\n' "$key" "$answer" >"$probe_file"
	say "KVM probe: guests $([ "$answer" = kvm ] && echo run || echo hang or fail) under KVM here; using $answer"
	printf '%s\n' "$answer"
}

# boot_kernel ARCH BUILD_DIR MODULES PAYLOAD TREE RESULT_DIR [KIND [ARGS]]:
# boot the kernel of BUILD_DIR on the root image with a disk of the payload
# and the test modules (a folder of .ko files), console to
# RESULT_DIR/console.log, killed at BOOT_TIMEOUT, how it ran in boot.info
# (written atomically with the log); then its verdict (boot_verdict).
# KIND names the boot (default "tests"; the series' hooks add others, such
# as an overflow boot, and say how its verdict is read); ARGS: more kernel
# parameters, after the series' own (series_boot_args). Returns 0 once the boot is recorded,
# whatever the kernel did; a failure that is not the kernel's (the payload
# disk not made, QEMU that cannot start or is killed from outside) stops
# the tool with an error and records nothing.
boot_kernel() {
	local arch=$1 build_dir=$2 modules=$3 payload=$4 tree=$5 result_dir=$6 kind=${7:-tests} args=${8:-}
	local tmp=$result_dir.tmp.$$ accel start rc=0 kernel=$2/bzImage seconds timed_out=no series_args
	rm -rf "$tmp" && mkdir -p "$tmp"
	accel=$(detect_accel "$arch" "$kernel")
	series_args=$(series_boot_args "$build_dir" "$arch")
	load_arch "$arch"
	local cmdline="console=$console root=/dev/vda rw init=/sbin/kstack-init panic=-1 kstack_tree=$tree"
	[ -z "$series_args" ] || cmdline+=" $series_args"
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
	printf 'seconds=%s\naccel=%s\nqemu_exit=%s\ntimed_out=%s\nkind=%s\n' "$seconds" "$accel" "$rc" \
		"$timed_out" "$kind" >"$tmp/boot.info"
	rm -rf "$result_dir"
	mv "$tmp" "$result_dir"
	boot_verdict "$result_dir"
}

# boot_verdict DIR: (re)read DIR/console.log with tools/verdict into
# verdict.txt and result (status GOOD/BAD/TIMEOUT, seconds, tests, trouble).
# Cheap, so a cached boot is read again by the current parser. Returns 0
# once read; a console reader that fails is an error, not a verdict.
boot_verdict() {
	local dir=$1 flags=() more=() vstatus=0 kind
	[ "$(sed -n 's/^timed_out=//p' "$dir/boot.info")" != yes ] || flags+=(--timed-out)
	kind=$(sed -n 's/^kind=//p' "$dir/boot.info")
	read -r -a more <<<"$(series_verdict_flags "${kind:-tests}")"
	flags+=("${more[@]}")
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

# shellcheck shell=bash
# tools/lib/build.sh: Building a kernel out of tree (config merge, make,
# warnings, result), and the test modules built against it from its module
# kit.

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
	local list
	list=$(config_fragments "$config") || return 1
	mapfile -t frags <<<"$list"
	load_arch "$(arch_of "$config")"
	mkdir -p "$o"
	kernel_make "$src" "$o" "$config" "$base_config" &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$o" "$o/.config" "${frags[@]}" &&
		kernel_make "$src" "$o" "$config" olddefconfig &&
		"$KSTACK_ROOT/tools/check-config" "$src" "$o/.config" "${frags[@]}" \
			>"$o/kstack-config-check.txt"
}

# merge_distro_kernel_config SRC O CONFIG: as merge_kernel_config, for a
# config whose base is one of Debian's (config_base debian:FILE): that
# config without its modules, the built-in part, what a distro kernel runs
# before it loads any (its =m drivers would be hours of building that no
# guest uses), then the fragments, olddefconfig and the check.
merge_distro_kernel_config() {
	local src=$1 o=$2 config=$3 frags list base file
	list=$(config_fragments "$config") || return 1
	mapfile -t frags <<<"$list"
	base=$(config_base "$config")
	file=$(base_config_file "${base#debian:}") || return 1
	mkdir -p "$o"
	xz -dc "$file" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' >"$o/.config" &&
		kernel_make "$src" "$o" "$config" olddefconfig &&
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

# A compiler's or linker's error line in a build log.
BUILD_ERROR_RE=': (fatal )?error: |undefined reference to'

# build_was_killed RC LOG: did make (exit RC) stop because it, or a job of
# it, was killed by a signal (SIGTERM from outside, the OOM killer's
# SIGKILL, ^C) rather than because the kernel does not build? Then there
# is no compiler or linker error in LOG, and make says a job was killed.
build_was_killed() {
	[ "$1" -ge 128 ] && return 0
	grep -q 'Killed signal terminated program' "$2" && return 0
	grep -q -E "$BUILD_ERROR_RE" "$2" && return 1
	# make names the signal that killed a job it ran; a job's shell killed
	# under it exits 128 + the signal (HUP, INT, KILL, TERM)
	grep -q -E '^make(\[[0-9]+\])?: \*\*\* \[.*\] (Terminated|Killed|Interrupt|Hangup|Error (129|130|137|143))$' "$2"
}

# first_error_line LOG: the line that best names why a build failed.
first_error_line() {
	grep -m1 -E "$BUILD_ERROR_RE|Error [0-9]+" "$1" ||
		grep -m1 -E 'error|\*\*\*' "$1" || tail -n 1 "$1"
}

# text_size VMLINUX: the text section size in bytes.
text_size() { size "$1" | awk 'NR == 2 { print $1 }'; }

# stack_frames VMLINUX: each function's stack frame in VMLINUX, as the
# largest single "sub $N,%rsp" (or %esp) in its code in objdump -d (its
# prologue's; scripts/checkstack.pl instead sums every sub of a function,
# on i386 the space for each call's arguments too), as "name<TAB>bytes"
# sorted by name, gcc's clone suffixes (.constprop.0) stripped, the largest
# frame of each name; functions without a sub are not listed.
stack_frames() {
	objdump -d --no-show-raw-insn "$1" |
		awk '/^[0-9a-f]+ <[^>]+>:$/ { name = $2; gsub(/[<>:]/, "", name); sub(/\..*/, "", name); next }
			/\tsub +\$0x[0-9a-f]+,%[er]sp$/ {
				imm = $0; sub(/.*\$0x/, "", imm); sub(/,.*/, "", imm)
				if (length(imm) > 6) next # a negative one: the stack given back
				v = 0
				for (i = 1; i <= length(imm); i++) v = v * 16 + index("0123456789abcdef", substr(imm, i, 1)) - 1
				if (name != "" && v > max[name]) max[name] = v }
			END { for (n in max) printf "%s\t%d\n", n, max[n] }' | LC_ALL=C sort
}

# stack_growth OLD NEW: the functions whose frame (stack_frames files) grew
# by more than 64 bytes from OLD to NEW, or that are new with 256 bytes or
# more, as scripts/stackdelta shows them: "name +delta" or "name new
# bytes", largest first, at most 3 and how many more; "none", or "-" when
# either file is missing (a build cached before frames were kept).
stack_growth() {
	if ! [ -f "$1" ] || ! [ -f "$2" ]; then
		echo -
		return 0
	fi
	LC_ALL=C join -t "$(printf '\t')" -a 2 -e '' -o 0,1.2,2.2 "$1" "$2" |
		awk -F '\t' '($2 != "" && $3 - $2 > 64) { printf "%d\t%s +%d\n", $3 - $2, $1, $3 - $2 }
			($2 == "" && $3 >= 256) { printf "%d\t%s new %d\n", $3, $1, $3 }' |
		sort -t "$(printf '\t')" -k1,1nr -k2,2 | cut -f2 |
		awk '{ if (NR <= 3) out = out (NR > 1 ? ", " : "") $0 }
			END { if (NR > 3) out = out sprintf(" (%d more)", NR - 3); print (NR ? out : "none") }'
}

# build_step SRC O CONFIG RESULT_DIR: merge CONFIG and build SRC in O; write
# the result into RESULT_DIR atomically (a half-written result is never
# seen): result (key=value: status OK/FAIL, seconds, warnings, bzimage_bytes,
# text_bytes, first_error), warnings.txt, config.log, build.log (the
# config log when merging failed), config-check.txt, config, bzImage,
# entry-frames.tsv (each function's frame, stack_frames) and
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
	local crc=0
	local merge=merge_kernel_config
	case "$(config_base "$config")" in debian:*) merge=merge_distro_kernel_config ;; esac
	"$merge" "$src" "$o" "$config" >"$tmp/config.log" 2>&1 || crc=$?
	if [ "$crc" -ne 0 ] && { grep -q 'interrupted: nothing half-done' "$tmp/config.log" ||
		build_was_killed "$crc" "$tmp/config.log"; }; then
		local last
		mapfile -t last < <(tail -n 3 "$tmp/config.log")
		rm -rf "$tmp"
		die "configuring $config was stopped by a signal (exit $crc), not by an error in the kernel's config" \
			"Nothing was recorded; run again. The end of its log:" "${last[@]}"
	fi
	if [ "$crc" -ne 0 ]; then
		status=FAIL
		cp "$tmp/config.log" "$tmp/build.log"
		if [ -s "$o/kstack-config-check.txt" ] && grep -q '^dropped: ' "$o/kstack-config-check.txt"; then
			first_error="config: $(grep -m1 '^dropped: ' "$o/kstack-config-check.txt") ($(grep -c '^dropped: ' "$o/kstack-config-check.txt") dropped in all)"
		else
			first_error="config: $(first_error_line "$tmp/config.log")"
		fi
	else
		local rc=0
		kernel_make "$src" "$o" "$config" all >"$tmp/build.log" 2>&1 || rc=$?
		if [ "$rc" -ne 0 ] && build_was_killed "$rc" "$tmp/build.log"; then
			local last
			mapfile -t last < <(grep -v '^  [A-Z]' "$tmp/build.log" | tail -n 3)
			rm -rf "$tmp"
			die "the build of $config was stopped by a signal (make exited $rc), not by an error in the kernel" \
				"Nothing was recorded; run again. The end of its log:" "${last[@]}"
		fi
		if [ "$rc" -ne 0 ]; then
			status=FAIL
			first_error=$(first_error_line "$tmp/build.log")
		fi
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
		stack_frames "$o/vmlinux" >"$tmp/entry-frames.tsv" ||
			die "the build of $config passed, but reading its stack frames (objdump -d) failed" \
				"Nothing was recorded; run again."
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

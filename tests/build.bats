#!/usr/bin/env bats
# The build machinery on small fixtures: config merging checks, arch and
# config selection, warning keys, the summary table.

load helpers
bats_require_minimum_version 1.5.0


setup() {
	export WORK=$BATS_TEST_TMPDIR/work
	mkdir -p "$WORK"
}

# A source tree whose Kconfig defines A, B and D (not C), and a .config.
make_kconfig_fixture() {
	mkdir -p "$WORK/src/arch/x86"
	printf 'config A\n\tbool "a"\nmenuconfig B\n\tbool "b"\n' >"$WORK/src/Kconfig"
	printf 'config D\n\tbool "d"\n' >"$WORK/src/arch/x86/Kconfig.debug"
	printf 'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_D=y\n' >"$WORK/dotconfig"
}

@test "check-config: an option that a dependency dropped fails, with the list" {
	make_kconfig_fixture
	printf 'CONFIG_A=y\nCONFIG_B=y\n# CONFIG_D is not set\n' >"$WORK/guest.config"
	run "$TOOLS/check-config" "$WORK/src" "$WORK/dotconfig" "$WORK/guest.config"
	[ "$status" -eq 1 ]
	[[ "$output" == *"dropped: CONFIG_B: guest.config asks for y, .config has n"* ]]
	[[ "$output" == *"dropped: CONFIG_D: guest.config asks for n, .config has y"* ]]
	[[ "$output" == *"2 option(s) dropped"* ]]
	[[ "$output" != *"CONFIG_A"* ]]
}

@test "check-config: an option no Kconfig defines yet is 'not yet present', not a failure" {
	make_kconfig_fixture
	printf 'CONFIG_A=y\nCONFIG_C=y\n' >"$WORK/small.config"
	run "$TOOLS/check-config" "$WORK/src" "$WORK/dotconfig" "$WORK/small.config"
	[ "$status" -eq 0 ]
	[ "$output" = "not yet present: CONFIG_C (no Kconfig defines it in this tree; small.config)" ]
}

@test "check-config: every fragment is checked, and values other than y compare too" {
	make_kconfig_fixture
	printf 'CONFIG_A=y\n' >"$WORK/one.config"
	printf 'CONFIG_D=m\n' >"$WORK/two.config"
	run "$TOOLS/check-config" "$WORK/src" "$WORK/dotconfig" "$WORK/one.config" "$WORK/two.config"
	[ "$status" -eq 1 ]
	[[ "$output" == *"dropped: CONFIG_D: two.config asks for m, .config has y"* ]]
}

@test "every line of the project's fragments is a comment or a CONFIG_ setting" {
	# The fragments are data: each option in them must be a CONFIG_ line.
	for fragment in "$KSTACK_ROOT"/configs/*.config; do
		run grep -v -E '^(#.*|CONFIG_[A-Za-z0-9_]+=.+|# CONFIG_[A-Za-z0-9_]+ is not set|)$' "$fragment"
		[ "$status" -eq 1 ]
	done
}

# The configs select_configs picks, one a line.
selected() { lib eval 'select_configs; printf "%s\n" "${SELECTED[@]}"'; }

@test "an unknown arch is refused, naming the known ones" {
	ARCHES=sparc64 run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown arch 'sparc64'"* ]]
	[[ "$output" == *"i386"* && "$output" == *"x86_64"* ]]
}

@test "configs: main config per arch by default, all, a list, an unknown one" {
	run selected
	[ "$status" -eq 0 ]
	[ "$output" = "$(for a in i386 x86_64; do sed -n 's/^main_config=//p' "$KSTACK_ROOT/configs/$a.arch"; done)" ]
	ARCHES=x86_64 CONFIGS=all run selected
	[ "$status" -eq 0 ]
	[[ "$output" == *x86_64* && "$output" != *i386* ]]
	ARCHES=x86_64,i386 CONFIGS=x86_64,i386-small run selected
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'x86_64\ni386-small')" ]
	ARCHES=x86_64 CONFIGS=x86_64-nosuch run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown config 'x86_64-nosuch' in CONFIGS="* ]]
	[[ "$output" == *"Valid configs: x86_64 x86_64-small x86_64-debug (or CONFIGS=all)"* ]]
	CONFIGS=" , " run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"no config selected"* ]]
}

@test "an arch description with an unknown or a missing key is refused, naming the file" {
	mkdir -p "$WORK/configs"
	cp "$KSTACK_ROOT"/configs/* "$WORK/configs/"
	echo 'qemu_flags=(-x)' >>"$WORK/configs/x86_64.arch"
	CONFIGS_DIR=$WORK/configs ARCHES=x86_64 run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WORK/configs/x86_64.arch: unknown key(s): qemu_flags"* ]]
	sed -i '/^console=/d' "$WORK/configs/i386.arch"
	CONFIGS_DIR=$WORK/configs ARCHES=i386 run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WORK/configs/i386.arch: missing or empty key(s): console"* ]]
	sed -i 's/^main_config=.*/main_config=i386-huge/; $a console=ttyS0' "$WORK/configs/i386.arch"
	CONFIGS_DIR=$WORK/configs ARCHES=i386 run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"main_config=i386-huge is not one of its configs (i386 i386-small i386-debug)"* ]]
}

@test "a config whose fragment is missing is refused, naming it" {
	mkdir -p "$WORK/configs"
	cp "$KSTACK_ROOT"/configs/x86_64.arch "$KSTACK_ROOT"/configs/*.config "$WORK/configs/"
	sed -i 's/^configs=.*/configs=(x86_64 x86_64-tiny)/; s/^main_config=.*/main_config=x86_64/' "$WORK/configs/x86_64.arch"
	CONFIGS_DIR=$WORK/configs run lib config_fragments x86_64-tiny
	[ "$status" -eq 1 ]
	[[ "$output" == *"config x86_64-tiny needs the fragment configs/x86_64-tiny.config, which is missing"* ]]
	# ... before anything is built: selecting it is the error
	CONFIGS_DIR=$WORK/configs ARCHES=x86_64 CONFIGS=x86_64-tiny run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"config x86_64-tiny needs the fragment configs/x86_64-tiny.config, which is missing"* ]]
	CONFIGS_DIR=$WORK/configs run lib config_fragments x86_64
	[ "$status" -eq 0 ]
	[ "$output" = "$WORK/configs/guest.config
$WORK/configs/x86_64.config" ]
}

@test "warning keys drop line and column numbers and the tree's path" {
	cat >"$WORK/a.log" <<'EOF'
  CC      kernel/fork.o
/src/tree/kernel/fork.c:120:7: warning: unused variable 'x' [-Wunused-variable]
/src/tree/kernel/fork.c:120:7: warning: unused variable 'x' [-Wunused-variable]
/src/tree/mm/slub.c:9: warning: "FOO" redefined
vmlinux.o: warning: objtool: foo()+0x12: call without frame pointer save/setup
EOF
	sed 's/120:7/131:9/; s/slub.c:9/slub.c:44/' "$WORK/a.log" >"$WORK/b.log"
	a=$(lib warning_keys "$WORK/a.log" /src/tree /out)
	b=$(lib warning_keys "$WORK/b.log" /src/tree /out)
	[ "$a" = "$b" ]
	[ "$(grep -c . <<<"$a")" -eq 3 ]
	grep -qxF "kernel/fork.c: warning: unused variable 'x' [-Wunused-variable]" <<<"$a"
	grep -qxF 'vmlinux.o: warning: objtool: foo()+0x12: call without frame pointer save/setup' <<<"$a"
}

@test "the first error line of a failed build is the compiler's error" {
	printf '  CC kernel/fork.o\n/t/kernel/fork.c:3:1: error: expected ; before }\nmake[2]: *** [scripts/Makefile.build:250: kernel/fork.o] Error 1\n' >"$WORK/fail.log"
	run lib first_error_line "$WORK/fail.log"
	[ "$output" = "/t/kernel/fork.c:3:1: error: expected ; before }" ]
}

@test "the summary table: one row per commit, a column per config, failures with their log" {
	# tools/steps-table reads the columns by these names (the fields of a record)
	header=$(printf '%s\t' step commit subject config status cached seconds warnings new_warnings \
		bzimage_bytes text_bytes text_delta checkpatch result_dir first_error boot boot_cached \
		boot_seconds tests_passed tests_failed kernel_trouble new_kernel_trouble boot_dir \
		least_stack_bytes_left | sed 's/\t$//')
	{
		printf '%s\tstack_growth\n' "$header"
		printf '0\taaa\tbase: Import\tx86_64\tOK\tyes\t300.4\t2\t0\t2400000\t9000000\t0\t-\t/r/1\t\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n'
		printf '0\taaa\tbase: Import\ti386\tOK\tno\t240\t1\t0\t2000000\t8000000\t0\t-\t/r/2\t\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n'
		printf '1\tbbb\tx86/mm: halve\tx86_64\tOK\tno\t60\t3\t1\t2400100\t9000128\t128\t0/0/1\t/r/3\t\t-\t-\t-\t-\t-\t-\t-\t-\t-\tdo_fork +72\n'
		printf '1\tbbb\tx86/mm: halve\ti386\tFAIL\tno\t12\t1\t0\t0\t0\t-\t0/0/1\t/r/4\tfork.c:3:1: error: boom\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n'
	} >"$WORK/results.tsv"
	run "$TOOLS/steps-table" "$WORK/results.tsv" "$WORK/results.md"
	[ "$status" -eq 0 ]
	[ "$(head -n 1 <<<"$output" | tr -s ' ')" = "| step | commit | subject | x86_64 | i386 | new warnings | checkpatch E/W/C | build s | text delta (bytes) | frames grown (>64 B, new >=256 B) |" ]
	grep -qE '^\| 0 +\| aaa +\| base: Import +\| OK \(cached\) +\| OK +\| 0/0 +\| - +\| 300/240 +\| 0/0 +\| - / - +\|$' <<<"$output"
	grep -qE '^\| 1 +\| bbb +\| x86/mm: halve +\| OK +\| FAIL +\| 1/0 +\| 0/0/1 +\| 60/12 +\| \+128/- +\| do_fork \+72 / - +\|$' <<<"$output"
	[[ "$output" == *"step 1 i386 bbb: build FAIL: fork.c:3:1: error: boom"* ]]
	[[ "$output" == *"log: /r/4/build.log"* ]]
	[ "$(cat "$WORK/results.md")" = "$output" ]
}

@test "stack frames per step: each function's largest sub from the stack pointer, and what grew from one step to the next" {
	mkdir -p "$WORK"
	cat >"$WORK/m.c" <<'C'
extern void use(volatile char *p);
__attribute__((noinline)) void big_frame(void) { volatile char b[600]; use(b); }
/* a clone's name, as gcc gives it: its suffix is stripped */
__attribute__((noinline)) void helper(void) __asm__("helper.constprop.0");
__attribute__((noinline)) void helper(void) { volatile char b[300]; use(b); }
void use(volatile char *p) { p[0] = 1; }
int main(void) { big_frame(); helper(); return 0; }
C
	gcc -O2 -mno-red-zone -o "$WORK/m" "$WORK/m.c"
	run lib stack_frames "$WORK/m"
	[ "$status" -eq 0 ]
	local big helper
	big=$(awk -F '\t' '$1 == "big_frame" { print $2 }' <<<"$output")
	helper=$(awk -F '\t' '$1 == "helper" { print $2 }' <<<"$output")
	[ "$big" -ge 600 ] && [ "$big" -le 640 ]
	[ "$helper" -ge 300 ] && [ "$helper" -le 340 ]
	run ! grep -q constprop <<<"$output"
	printf 'a\t100\nb\t50\nc\t300\nz\t10\n' >"$WORK/old.tsv"
	printf 'a\t165\nb\t114\nc\t300\nd\t256\ne\t255\nf\t900\ng\t400\n' >"$WORK/new.tsv"
	# a grew by 65, b by 64 (not more); d, f, g are new at 256 or more, e is not
	run lib stack_growth "$WORK/old.tsv" "$WORK/new.tsv"
	[ "$output" = "f new 900, g new 400, d new 256 (1 more)" ]
	printf 'a\t165\nc\t300\n' >"$WORK/new.tsv"
	run lib stack_growth "$WORK/old.tsv" "$WORK/new.tsv"
	[ "$output" = "a +65" ]
	run lib stack_growth "$WORK/old.tsv" "$WORK/old.tsv"
	[ "$output" = none ]
	run lib stack_growth "$WORK/missing.tsv" "$WORK/old.tsv"
	[ "$output" = - ]
}

@test "the summary table of a boot run: boots, tests, kernel trouble, and the console of a bad boot" {
	# tools/steps-table reads the columns by these names (the fields of a record)
	header=$(printf '%s\t' step commit subject config status cached seconds warnings new_warnings \
		bzimage_bytes text_bytes text_delta checkpatch result_dir first_error boot boot_cached \
		boot_seconds tests_passed tests_failed kernel_trouble new_kernel_trouble boot_dir \
		least_stack_bytes_left | sed 's/\t$//')
	{
		printf '%s\n' "$header"
		printf '0\taaa\tbase: Import\tx86_64\tOK\tyes\t300\t2\t0\t2400000\t9000000\t0\t-\t/r/1\t\tGOOD\tyes\t5.2\t5\t0\t0\t0\t/b/1\t13000\n'
		printf '1\tbbb\tx86/mm: halve\tx86_64\tOK\tno\t60\t3\t1\t2400100\t9000128\t128\t0/0/0\t/r/3\t\tBAD\tno\t4.8\t4\t1\t1\t1\t/b/2\t12500\n'
		printf '2\tccc\tx86: broken\tx86_64\tFAIL\tno\t12\t1\t0\t0\t0\t-\t0/0/0\t/r/4\terror: boom\tSKIP\t-\t-\t-\t-\t-\t-\t-\n'
	} >"$WORK/results.tsv"
	run "$TOOLS/steps-table" "$WORK/results.tsv"
	[ "$status" -eq 0 ]
	[[ "$(head -n 1 <<<"$output" | tr -s ' ')" == *"| boots | tests passed+ failed- | kernel trouble | least stack left (bytes) | boot s |" ]]
	grep -qE '^\| 1 +\| bbb .*\| BAD +\| 4\+1- +\| 1\(1 new\) +\| 12500 +\| 4.8 +\|$' <<<"$output"
	grep -qE '^\| 2 +\| ccc .*\| SKIP +\| - +\| - +\| - +\| - +\|$' <<<"$output"
	[[ "$output" == *"step 1 x86_64 bbb: boot BAD"* ]]
	[[ "$output" == *"console: /b/2/console.log"* ]]
	[[ "$output" == *"step 2 x86_64 ccc: build FAIL: error: boom"* ]]
}

@test "opt-in configs: only by name, never in CONFIGS=all; a variant of a variant merges both fragments" {
	ARCHES=x86_64 CONFIGS=all run selected
	[ "$status" -eq 0 ]
	[[ "$output" != *distro* ]]
	ARCHES=x86_64 CONFIGS=x86_64-distro,x86_64-distro-small run selected
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'x86_64-distro\nx86_64-distro-small')" ]
	ARCHES=x86_64 CONFIGS=x86_64-nosuch run selected
	[[ "$output" == *"by name only, never in all: x86_64-distro x86_64-distro-small"* ]]
	run lib config_fragments x86_64-distro-small
	[ "$status" -eq 0 ]
	[ "$output" = "$KSTACK_ROOT/configs/guest.config
$KSTACK_ROOT/configs/x86_64.config
$KSTACK_ROOT/configs/x86_64-distro.config
$KSTACK_ROOT/configs/x86_64-distro-small.config" ]
	# the distro base is Debian's config, for the variant too; others keep tinyconfig
	[ "$(lib config_base x86_64-distro-small)" = debian:config.amd64_none_cloud-amd64 ]
	[ "$(lib config_base x86_64-debug)" = tinyconfig ]
	lib config_identity x86_64-distro | grep -qx 'base_config debian:config.amd64_none_cloud-amd64'
	lib config_identity x86_64-distro | grep -q '^merge_distro_kernel_config ()'
	run ! lib eval 'config_identity x86_64-small | grep -q merge_distro_kernel_config'
}

@test "a base config that names no config, or a Debian config that is not there, is an error" {
	mkdir -p "$WORK/configs" "$WORK/debian"
	cp "$KSTACK_ROOT"/configs/* "$WORK/configs/"
	sed -i 's/^base_configs=.*/base_configs=(x86_64-nosuch=debian:x)/' "$WORK/configs/x86_64.arch"
	CONFIGS_DIR=$WORK/configs ARCHES=x86_64 run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"base_configs entry 'x86_64-nosuch=debian:x' names no config of the arch"* ]]
	cp "$KSTACK_ROOT"/configs/x86_64.arch "$WORK/configs/"
	# linux-config-6.1 present, but not the file the arch names
	printf 'CONFIG_X=y\n' | xz >"$WORK/debian/config.other.xz"
	DEBIAN_CONFIG_DIR=$WORK/debian CONFIGS_DIR=$WORK/configs ARCHES=x86_64 CONFIGS=x86_64-distro run selected
	[ "$status" -eq 1 ]
	[[ "$output" == *"no Debian kernel config $WORK/debian/config.amd64_none_cloud-amd64.xz"*"config.other"* ]]
	[[ "$output" == *"config x86_64-distro: configs/x86_64.arch names the base debian:config.amd64_none_cloud-amd64"* ]]
}

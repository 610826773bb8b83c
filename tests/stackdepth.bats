#!/usr/bin/env bats
# The static stack depth analyser (tools/stackdepth, tools/src/stackdepth.c)
# on hand-made call graphs in gcc's -fcallgraph-info=su format
# (tests/fixtures/stackdepth/): depths and paths along direct calls, static
# functions kept apart per unit, cycles named and followed once, indirect
# calls counted or resolved, dynamic frames flagged, reporting paths apart,
# and an object without its .ci refused.

load helpers
bats_require_minimum_version 1.5.0

FIX=$BATS_TEST_DIRNAME/fixtures/stackdepth

setup() {
	export WORK=$BATS_TEST_TMPDIR/work
	cd "$FIX" || return 1
	printf '%s\n' chain.ci leaf.ci printk.ci cycle.ci indirect.ci >"$BATS_TEST_TMPDIR/list"
}

analyse() {
	"$TOOLS/stackdepth" analyse --conf test.conf --tsv "$BATS_TEST_TMPDIR/f.tsv" \
		--paths "$BATS_TEST_TMPDIR/p.tsv" "$@"
}

# fn_field NAME FILE_PREFIX COLUMN: a column of functions.tsv
fn_field() {
	awk -F '\t' -v n="$1" -v f="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == n && index($2, f) == 1 { print $col[c] }' "$BATS_TEST_TMPDIR/f.tsv"
}

@test "a chain: each function's depth is its frame plus its deepest callee's, across units" {
	run analyse --stack-bytes 8192 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	# dyn 48; leaf 300+48; chain.c's static middle 200+348 (not leaf.c's
	# static middle of 5000); the syscall 100+548
	[ "$(fn_field dyn lib/leaf.c depth)" = 48 ]
	[ "$(fn_field leaf lib/leaf.c depth)" = 348 ]
	[ "$(fn_field middle fs/chain.c depth)" = 548 ]
	[ "$(fn_field middle lib/leaf.c depth)" = 5000 ]
	[ "$(fn_field __x64_sys_deep fs/chain.c depth)" = 648 ]
	# the syscall kind's base: 168 + do_syscall_64's frame (24)
	grep -qxF "syscall	1	__x64_sys_deep	192	840	840	__x64_sys_deep>middle>leaf>dyn	__x64_sys_deep>middle>leaf>dyn" \
		"$BATS_TEST_TMPDIR/p.tsv"
	[[ "$output" == *"## syscall (4 functions, base 192 bytes: 168+do_syscall_64)"* ]]
	[[ "$output" == *'| 1 | `__x64_sys_deep` (a dynamic frame below) | 840 | 10% | 840 | 10% | 0 |'* ]]
	# the undefined asm_helper: counted, 0 bytes below
	[[ "$output" == *"1 calls to 1 functions no unit defines"* ]]
	[[ "$output" == *"Shares are of a 8192-byte stack."* ]]
}

@test "the deepest path is printed with each frame and where it is defined" {
	run analyse "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[[ "$output" == *'   192  (base)
   100  __x64_sys_deep  fs/chain.c:10:1
   200  middle  fs/chain.c:5:13
   300  leaf  lib/leaf.c:3:6
    48  dyn (dynamic frame)  lib/leaf.c:9:6
```'* ]]
	[[ "$output" == *'- `dyn` (lib/leaf.c:9:6): 48 bytes static'* ]]
	# --strip: the source tree's prefix left out of the definitions
	run analyse --strip lib/ "$BATS_TEST_TMPDIR/list"
	[[ "$output" == *"   300  leaf  leaf.c:3:6"* ]]
	[[ "$output" == *"   100  __x64_sys_deep  fs/chain.c:10:1"* ]]
}

@test "a cycle is named and followed once round; a self-recursion too" {
	run analyse "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	# ping: 100 + leaf's 348 (its deepest way out); pong: 50 + ping's 448;
	# the syscall: 10 + ping's 448 (ping -> pong -> self is 180, less)
	[ "$(fn_field ping fs/cycle.c depth)" = 448 ]
	[ "$(fn_field pong fs/cycle.c depth)" = 498 ]
	[ "$(fn_field self fs/cycle.c depth)" = 30 ]
	[ "$(fn_field __x64_sys_rec fs/cycle.c depth)" = 458 ]
	[ "$(fn_field ping fs/cycle.c cycle)" = "$(fn_field pong fs/cycle.c cycle)" ]
	[ "$(fn_field ping fs/cycle.c cycle)" != -1 ]
	[ "$(fn_field leaf lib/leaf.c cycle)" = -1 ]
	[[ "$output" == *"3 functions in 2 cycles"* ]]
	[[ "$output" == *'| 2 | 150 | `pong`, `ping` |'* || "$output" == *'| 2 | 150 | `ping`, `pong` |'* ]]
	[[ "$output" == *'| 1 | 30 | `self` |'* ]]
}

@test "a path through a cycle lists the cycle's members in order, then leaves it" {
	cat >"$BATS_TEST_TMPDIR/ring.ci" <<'CI'
graph: { title: "ring.c"
node: { title: "__x64_sys_ring" label: "__x64_sys_ring\nring.c:1:1\n8 bytes (static)" }
node: { title: "a" label: "a\nring.c:2:1\n10 bytes (static)" }
node: { title: "b" label: "b\nring.c:3:1\n20 bytes (static)" }
node: { title: "c" label: "c\nring.c:4:1\n30 bytes (static)" }
node: { title: "out" label: "out\nring.c:5:1\n1000 bytes (static)" }
edge: { sourcename: "__x64_sys_ring" targetname: "a" label: "ring.c:1:2" }
edge: { sourcename: "a" targetname: "b" label: "ring.c:2:2" }
edge: { sourcename: "b" targetname: "c" label: "ring.c:3:2" }
edge: { sourcename: "c" targetname: "a" label: "ring.c:4:2" }
edge: { sourcename: "c" targetname: "out" label: "ring.c:4:3" }
}
CI
	echo "$BATS_TEST_TMPDIR/ring.ci" >"$BATS_TEST_TMPDIR/ring.list"
	run analyse "$BATS_TEST_TMPDIR/ring.list"
	[ "$status" -eq 0 ]
	# a -> b -> c -> out: 10+20+30+1000, the ring once
	[ "$(fn_field a ring.c depth)" = 1060 ]
	[ "$(fn_field b ring.c depth)" = 1050 ]
	[ "$(fn_field __x64_sys_ring ring.c depth)" = 1068 ]
	grep -q "	__x64_sys_ring>a>b>c>out	" "$BATS_TEST_TMPDIR/p.tsv"
}

@test "indirect calls: counted, assumed --indirect-bytes each, or resolved by the configuration" {
	run analyse "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	# __common_interrupt's two and do_syscall_64's one stay; handle_edge's
	# one is resolved to both *_interrupt functions
	[[ "$output" == *"3 indirect call sites (1 more resolved by the configuration's candidate targets)"* ]]
	[[ "$output" == *"assumes 0 bytes per indirect call"* ]]
	[ "$(fn_field __common_interrupt kernel/irq.c indirect_sites)" = 2 ]
	[ "$(fn_field __common_interrupt kernel/irq.c depth)" = 64 ]
	[ "$(fn_field handle_edge kernel/irq.c depth)" = 932 ]
	[ "$(fn_field handle_edge kernel/irq.c indirect_sites)" = 0 ]
	[[ "$output" == *'| 2 | `__common_interrupt` | 264 | - | 264 | - | 2 |'* ]]
	run analyse --indirect-bytes 500 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[ "$(fn_field __common_interrupt kernel/irq.c depth)" = 564 ]
	[[ "$output" == *"assumes 500 bytes per indirect call"* ]]
	grep -qxF "irq	2	__common_interrupt	200	764	764	__common_interrupt>(indirect)	__common_interrupt>(indirect)" \
		"$BATS_TEST_TMPDIR/p.tsv"
	# with 2000 bytes per indirect call, __common_interrupt is the deepest
	# interrupt entry, and its path ends in the assumed call
	run analyse --indirect-bytes 2000 "$BATS_TEST_TMPDIR/list"
	[[ "$output" == *"    64  __common_interrupt  kernel/irq.c:1:1
  2000  (an indirect call of __common_interrupt, assumed)"* ]]
}

@test "reporting paths apart: the normal depth leaves them out, and what each adds is shown" {
	run analyse "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	# __x64_sys_noisy: 16 + leaf 348 normally, 16 + _printk 3000 in all
	[ "$(fn_field __x64_sys_noisy fs/chain.c depth_normal)" = 364 ]
	[ "$(fn_field __x64_sys_noisy fs/chain.c depth)" = 3016 ]
	[ "$(fn_field _printk kernel/printk.c depth_normal)" = -1 ]
	grep -qxF "syscall	4	__x64_sys_noisy	192	3208	556	__x64_sys_noisy>leaf>dyn	__x64_sys_noisy>_printk>vprintk" \
		"$BATS_TEST_TMPDIR/p.tsv"
	# the deepest normal entry: handle_edge 200+932; with _printk (and the
	# vprintk it calls) let in, __x64_sys_noisy's 3208; vprintk alone is
	# reached by no entry
	[[ "$output" == *"stays within 1132 bytes (\`handle_edge\`, irq)"* ]]
	[[ "$output" == *'| `_printk` | 3000 | 3208 (`__x64_sys_noisy`) | +2076 |'* ]]
	[[ "$output" == *'| `vprintk` | 2000 | 1132 (`handle_edge`) | +0 |'* ]]
	[[ "$output" == *'The deepest path of all (`__x64_sys_noisy`, through the reporting functions)'* ]]
}

@test "a name defined twice: both definitions are followed (the deeper counts)" {
	printf '%s\n' dup.ci >>"$BATS_TEST_TMPDIR/list"
	run analyse "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[ "$(fn_field leaf lib/leaf.c depth)" = 380 ]
	[[ "$output" == *"1 names defined more than once (every definition followed)"* ]]
}

@test "base terms: bytes, frames of named functions, --add; a term not in the graph is said" {
	run analyse --add syscall=1023 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[[ "$output" == *"## syscall (4 functions, base 1215 bytes: 168+do_syscall_64+1023)"* ]]
	grep "entry irq" test.conf >"$BATS_TEST_TMPDIR/c.conf"
	echo "entry syscall 168+no_such_fn __x64_sys_*" >>"$BATS_TEST_TMPDIR/c.conf"
	run "$TOOLS/stackdepth" analyse --conf "$BATS_TEST_TMPDIR/c.conf" "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[[ "$output" == *"## syscall (4 functions, base 168 bytes: 168+no_such_fn)"* ]]
	[[ "$output" == *"Not in the graph, counted 0 in the base (inlined, or not built): no_such_fn."* ]]
	run "$TOOLS/stackdepth" analyse --conf test.conf --add nokind=5 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no entry kind nokind in the configuration"* ]]
}

@test "objects: one built from C needs its .ci beside it, one from assembly has none" {
	local obj=$BATS_TEST_TMPDIR/obj
	mkdir -p "$obj/fs" "$obj/arch"
	cp chain.ci "$obj/fs/chain.ci"
	touch "$obj/fs/chain.o" "$obj/arch/entry.o" "$obj/fs/lost.o"
	printf 'source_fs/chain.o := /src/fs/chain.c\n' >"$obj/fs/.chain.o.cmd"
	printf 'source_arch/entry.o := /src/arch/entry.S\n' >"$obj/arch/.entry.o.cmd"
	printf '%s\n' "$obj/fs/chain.o" "$obj/arch/entry.o" >"$BATS_TEST_TMPDIR/objs"
	run analyse "$BATS_TEST_TMPDIR/objs"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 units (1 objects without a graph of their own"* ]]
	[ "$(fn_field middle fs/chain.c frame)" = 200 ]
	printf 'source_fs/lost.o := /src/fs/lost.c\n' >"$obj/fs/.lost.o.cmd"
	echo "$obj/fs/lost.o" >>"$BATS_TEST_TMPDIR/objs"
	run analyse "$BATS_TEST_TMPDIR/objs"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$obj/fs/lost.o was built from /src/fs/lost.c but has no $obj/fs/lost.ci beside it: build it without ccache (CCACHE_DISABLE=1)"* ]]
	touch "$obj/nocmd.o"
	echo "$obj/nocmd.o" >"$BATS_TEST_TMPDIR/objs"
	run analyse "$BATS_TEST_TMPDIR/objs"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no kbuild command file"* ]]
}

@test "bad input: not a call graph, a cut one, a bad configuration, bad options" {
	printf 'hello\n' >"$BATS_TEST_TMPDIR/bad.ci"
	echo "$BATS_TEST_TMPDIR/bad.ci" >"$BATS_TEST_TMPDIR/bad.list"
	run analyse "$BATS_TEST_TMPDIR/bad.list"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.ci:1: not a call graph line"* ]]
	head -n 3 chain.ci >"$BATS_TEST_TMPDIR/bad.ci"
	run analyse "$BATS_TEST_TMPDIR/bad.list"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not a whole call graph"* ]]
	sed 's/100 bytes (static)/many bytes/' chain.ci >"$BATS_TEST_TMPDIR/bad.ci"
	run analyse "$BATS_TEST_TMPDIR/bad.list"
	[ "$status" -eq 2 ]
	[[ "$output" == *'bad.ci:2: cannot read the frame size "many bytes"'* ]]
	printf 'entry syscall\n' >"$BATS_TEST_TMPDIR/c.conf"
	run "$TOOLS/stackdepth" analyse --conf "$BATS_TEST_TMPDIR/c.conf" "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *'c.conf:1: "entry KIND BASE GLOB..." expected'* ]]
	printf 'frobnicate x\n' >"$BATS_TEST_TMPDIR/c.conf"
	run "$TOOLS/stackdepth" analyse --conf "$BATS_TEST_TMPDIR/c.conf" "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *'unknown directive "frobnicate"'* ]]
	printf 'report x\n' >"$BATS_TEST_TMPDIR/c.conf"
	run "$TOOLS/stackdepth" analyse --conf "$BATS_TEST_TMPDIR/c.conf" "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *'no "entry" line'* ]]
	run analyse --top 0 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *'--top "0": a whole number of at least 1 expected'* ]]
	run analyse "$BATS_TEST_TMPDIR/nolist"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot read the list"* ]]
}

# checkpoint_objects DIR BITS [CFLAGS...]: a C object with its .ci and an
# assembly one calling into it, built for -mBITS, with the kbuild .cmd
# files that say which is which, and DIR/list naming both
checkpoint_objects() {
	local dir=$1 bits=$2
	shift 2
	mkdir -p "$dir"
	cat >"$dir/a.c" <<'C'
extern void sink(volatile char *p);
/* static, and called only through the_ops: its address is taken */
static __attribute__((noinline)) int cb(int x) { volatile char b[200]; sink(b); return x + b[0]; }
static __attribute__((noinline)) int leaf3(int x) { volatile char b[300]; sink(b); return b[1] + x; }
static __attribute__((noinline)) int mid2(int x) { volatile char b[300]; sink(b); return leaf3(x) + b[2]; }
static __attribute__((noinline)) int top1(int x) { volatile char b[300]; sink(b); return mid2(x) + b[3]; }
struct ops { int (*f)(int); };
struct ops the_ops = { cb };
int run(struct ops *o) { return o->f(1); }
/* called only from e.S */
int direct(int x) { return top1(x); }
void sink(volatile char *p) { p[0] = 1; }
/* address taken too, but notrace: not in __mcount_loc when built with -pg */
static __attribute__((noinline, no_instrument_function)) int quiet(int x) { return x + 1; }
struct ops the_quiet_ops = { quiet };
C
	printf '.text\n.globl entry\nentry:\n\tcall direct\n\tret\n' >"$dir/e.S"
	(cd "$dir" && gcc "-m$bits" -O2 -mno-red-zone -fno-optimize-sibling-calls "$@" \
		-fcallgraph-info=su -c a.c -o a.o && gcc "-m$bits" -c e.S -o e.o)
	printf 'source_%s/a.o := %s/a.c\n' "$dir" "$dir" >"$dir/.a.o.cmd"
	printf 'source_%s/e.o := %s/e.S\n' "$dir" "$dir" >"$dir/.e.o.cmd"
	printf '%s\n' "$dir/a.o" "$dir/e.o" >"$dir/list"
	printf 'entry any 0 *\n' >"$dir/c.conf"
}

# cp_field NAME COLUMN: a checkpoint's margin (2) or why (3)
cp_field() {
	awk -F '\t' -v n="$1" -v c="$2" '!/^#/ && $1 == n { print $c }' "$BATS_TEST_TMPDIR/cp.txt"
}

@test "checkpoints: address taken, called from assembly, no caller; then where a segment passes the budget (x86_64 and i386)" {
	local bits dir
	for bits in 64 32; do
		dir=$BATS_TEST_TMPDIR/o$bits
		checkpoint_objects "$dir" "$bits"
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --tsv "$BATS_TEST_TMPDIR/f.tsv" \
			--checkpoints "$BATS_TEST_TMPDIR/cp.txt" --budget 400 "$dir/list"
		[ "$status" -eq 0 ]
		[[ "$output" == *"2 objects read"* ]]
		[ "$(cp_field cb 3)" = "address taken" ]
		[ "$(cp_field direct 3)" = "called from assembly" ]
		[ "$(cp_field run 3)" = "no caller in the graph" ]
		# leaf3 (300+) alone fits 400; mid2 + leaf3 does not: leaf3 is
		# cut; top1 + mid2 does not: mid2 is cut; direct + top1 fits
		[ "$(cp_field leaf3 3)" = "segment budget" ]
		[ "$(cp_field mid2 3)" = "segment budget" ]
		[ -z "$(cp_field top1 3)" ]
		[ "$(cp_field direct 2)" -eq "$(($(fn_field direct a.c frame) + $(fn_field top1 a.c frame)))" ]
		[ "$(cp_field mid2 2)" -eq "$(fn_field mid2 a.c frame)" ]
		# with a budget that fits every chain, only the forced ones
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --tsv "$BATS_TEST_TMPDIR/f.tsv" \
			--checkpoints "$BATS_TEST_TMPDIR/cp.txt" --budget 2000 "$dir/list"
		[ "$status" -eq 0 ]
		[ -z "$(cp_field mid2 3)" ]
		[ "$(cp_field direct 2)" -eq "$(fn_field direct a.c depth)" ]
		# an allowance for indirect calls: cb (its address taken) fits in
		# 300 bytes and is no checkpoint; run's indirect call adds 300
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --tsv "$BATS_TEST_TMPDIR/f.tsv" \
			--checkpoints "$BATS_TEST_TMPDIR/cp.txt" --budget 2000 --allowance 300 "$dir/list"
		[ "$status" -eq 0 ]
		[ -z "$(cp_field cb 3)" ]
		[ "$(cp_field run 2)" -eq "$(($(fn_field run a.c frame) + 300))" ]
		[[ "$output" == *"2 address-taken functions within the allowance of 300 bytes per indirect call"* ]]
		# one that does not fit stays a checkpoint
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --tsv "$BATS_TEST_TMPDIR/f.tsv" \
			--checkpoints "$BATS_TEST_TMPDIR/cp.txt" --budget 2000 --allowance 100 "$dir/list"
		[ "$(cp_field cb 3)" = "address taken" ]
	done
}

@test "checkpoints: a function ftrace cannot trace (not in __mcount_loc) is never one, and is counted" {
	local bits dir
	for bits in 64 32; do
		dir=$BATS_TEST_TMPDIR/p$bits
		# without -pg no object has __mcount_loc: every function counts as traceable
		checkpoint_objects "$dir" "$bits"
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --checkpoints "$BATS_TEST_TMPDIR/cp.txt" "$dir/list"
		[ "$status" -eq 0 ]
		[ "$(cp_field quiet 3)" = "address taken" ]
		[[ "$output" == *"0 entries ftrace cannot trace"* ]]
		rm -rf "$dir"
		checkpoint_objects "$dir" "$bits" -fno-pic -pg -mfentry -mrecord-mcount
		run "$TOOLS/stackdepth" analyse --conf "$dir/c.conf" --checkpoints "$BATS_TEST_TMPDIR/cp.txt" "$dir/list"
		[ "$status" -eq 0 ]
		[ -z "$(cp_field quiet 3)" ]
		[ "$(cp_field cb 3)" = "address taken" ]
		[ "$(cp_field direct 3)" = "called from assembly" ]
		[[ "$output" == *"1 entries ftrace cannot trace"* ]]
	done
}

@test "checkpoints need the objects: a LIST of .ci files is refused" {
	run "$TOOLS/stackdepth" analyse --conf test.conf --checkpoints "$BATS_TEST_TMPDIR/cp.txt" \
		"$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--checkpoints reads the objects themselves: give a LIST of .o files"* ]]
}

# shellcheck shell=bash
# tools/lib/run.sh: A run over every step of a series: the run folder, the
# per-step records, the table.

# --- run folders and records -------------------------------------------------

# The fields of a step's record, one per step and config: the build, the
# test modules, the boot. In a run that only builds, the boot fields are
# "-". results.tsv has them as its columns, by name.
RECORD_FIELDS=(step commit tree subject config status cached seconds warnings new_warnings
	bzimage_bytes text_bytes text_delta checkpatch result_dir first_error modules_dir
	boot boot_cached boot_seconds tests_passed tests_failed kernel_trouble
	new_kernel_trouble boot_dir least_stack_bytes_left boot_note stack_growth)
declare -A REC=()

# record_start: a new record, every field "-".
record_start() {
	local field
	REC=()
	for field in "${RECORD_FIELDS[@]}"; do REC[$field]=-; done
}

# record_write FILE: the record as name=value lines, written once and
# atomically (tabs and newlines in a value become spaces).
record_write() {
	local field value
	for field in "${RECORD_FIELDS[@]}"; do
		value=${REC[$field]:--}
		value=${value//$'\t'/ }
		printf '%s=%s\n' "$field" "${value//$'\n'/ }"
	done >"$1.tmp"
	mv "$1.tmp" "$1"
}

# records_tsv DIR OUT: the records in DIR (name order) as a TSV whose header
# names the fields.
records_tsv() {
	local dir=$1 out=$2
	{
		local IFS=$'\t'
		printf '%s\n' "${RECORD_FIELDS[*]}"
	} >"$out.tmp"
	local file
	for file in "$dir"/*.rec; do
		[ -e "$file" ] || continue
		awk -v fields="${RECORD_FIELDS[*]}" '
			{ i = index($0, "="); v[substr($0, 1, i - 1)] = substr($0, i + 1) }
			END { n = split(fields, f, " "); for (k = 1; k <= n; k++) printf "%s%s", v[f[k]], (k < n ? "\t" : "\n") }' "$file"
	done >>"$out.tmp"
	mv "$out.tmp" "$out"
}

# prepare_run_dir NAME: a new folder for this run's results and logs.
prepare_run_dir() {
	local dir
	case "$KEEP" in '' | *[!0-9]* | 0) die "KEEP=$KEEP is not a number of runs to keep" "Give KEEP=<runs>, e.g. KEEP=10." ;; esac
	dir=$RESULTS/runs/$1-$(date +%Y%m%d-%H%M%S)-$$
	mkdir -p "$dir/steps"
	printf '%s\n' "$dir"
}

# KEEP: how many runs of each kind (bisect-boot, bisect-build, bisect) are
# kept in RESULTS/runs; the published one always is.
KEEP=${KEEP:-10}

# prune_runs NAME: remove the runs of NAME beyond the newest KEEP.
prune_runs() {
	local old published
	case "$KEEP" in '' | *[!0-9]* | 0) die "KEEP=$KEEP is not a number of runs to keep" "Give KEEP=<runs>, e.g. KEEP=10." ;; esac
	published=$(readlink "$RESULTS/$1" 2>/dev/null || true)
	while read -r old; do
		[ -n "$old" ] && [ "$old" != "$published" ] || continue
		rm -rf "$old"
	done < <(find "$RESULTS/runs" -mindepth 1 -maxdepth 1 -type d -name "$1-[0-9]*" 2>/dev/null |
		sort -r | tail -n +"$((KEEP + 1))")
}

# KEEP_DAYS: cached results that no kept run names are removed once unused
# for this many days (make clean-results removes them at once).
KEEP_DAYS=${KEEP_DAYS:-14}

# prune_results [DAYS]: remove the cached builds, modules and boots that no
# record of a kept run names and that were last used DAYS ago or more
# (default KEEP_DAYS; 0: all of them). Under the lock.
prune_results() {
	local days=${1:-$KEEP_DAYS} dir kept
	case "$days" in '' | *[!0-9]*) die "KEEP_DAYS=$days is not a number of days" ;; esac
	kept=$(cat "$RESULTS"/runs/*/steps/*.rec 2>/dev/null |
		sed -n -E 's/^(result_dir|modules_dir|boot_dir)=//p' | sed 's#/modules$##' | sort -u)
	PRUNED=0
	for dir in "$RESULTS"/build/* "$RESULTS"/modules/* "$RESULTS"/boot/*; do
		[ -d "$dir" ] || continue
		! grep -qxF -- "$dir" <<<"$kept" || continue
		[ "$days" -eq 0 ] || [ -n "$(find "$dir" -maxdepth 0 -mtime +"$((days - 1))")" ] || continue
		rm -rf "$dir"
		PRUNED=$((PRUNED + 1))
	done
}

# publish_run_dir DIR NAME: point RESULTS/NAME at DIR (atomically); then
# only the newest KEEP runs of NAME are kept.
publish_run_dir() {
	ln -sfn "$1" "$RESULTS/.$2.new"
	mv -T "$RESULTS/.$2.new" "$RESULTS/$2"
	prune_runs "$2"
}

# trouble_keys VERDICT: the kernel trouble of a boot, one a line, keyed by
# its first line with addresses and numbers masked, so that the same warning
# at another address is not new.
trouble_keys() {
	sed -n '/^kernel trouble:$/{n;p}' "$1" |
		sed -E 's/^ +//; s/0x[0-9a-f]+/0x_/g; s/\b[0-9a-f]{8,}\b/_/g; s/[0-9]+/N/g' | sort -u
}

# --- a run over every step -----------------------------------------------------

# record_boot BOOT_DIR TROUBLE PREV_TROUBLE: the boot fields of REC from a
# step_boot; the boot's kernel trouble keys into TROUBLE, counted new
# against PREV_TROUBLE (the config's step before).
record_boot() {
	local dir=$1 key
	REC[boot]=$BOOT_STATUS REC[boot_cached]=$STEP_BOOT_CACHED REC[boot_dir]=$dir
	REC[boot_note]=${SERIES_NOTE_TEXT#, }
	REC[boot_seconds]=$(result_field "$dir" seconds)
	for key in tests_passed tests_failed kernel_trouble least_stack_bytes_left; do
		REC[$key]=$(result_field "$dir" "$key")
	done
	trouble_keys "$dir/verdict.txt" >"$2"
	if [ -n "$3" ]; then
		REC[new_kernel_trouble]=$(comm -13 "$3" "$2" | grep -c . || true)
	else
		REC[new_kernel_trouble]=$(grep -c . "$2" || true)
	fi
}

# cached_ok_build COMMIT CONFIG: the folder of COMMIT's cached OK build in
# CONFIG, or nothing (nothing is built).
cached_ok_build() {
	local tree dir
	tree=$(git --git-dir="$BASE_REPO" rev-parse "$1^{tree}")
	dir=$RESULTS/build/$(build_key "$tree" "$2")
	[ -f "$dir/result" ] && [ "$(result_field "$dir" status)" = OK ] && echo "$dir"
	return 0
}

# from_step STEPS...: the index of FROM= among the steps (0 without FROM).
from_step() {
	[ -n "${FROM:-}" ] || { echo 0; return 0; }
	resolve_commit FROM "$FROM"
	local k
	for k in $(seq 1 $#); do
		[ "${!k}" != "$RESOLVED" ] || { echo $((k - 1)); return 0; }
	done
	die "FROM=$FROM ($(git --git-dir="$BASE_REPO" rev-parse --short=12 "$RESOLVED")) is not a step of this run: it is not on the path from the base to the tip" \
		"Valid: $BASE_TAG or a commit of base..tip (with TIP=, the tip it names); 'git log --oneline' in the worktree lists them."
}

# bisect_steps build|boot: build (and boot) every step base..tip (from
# FROM= on, when given) for each selected config, print progress and the
# table, write results.tsv and results.md in a run folder published as
# RESULTS/bisect-MODE. Returns 0 when every step built (and booted GOOD).
# Steps keep their numbers with FROM=; the new warnings and the text delta
# of its first step come from the cached builds of the step before and of
# the base when there are any ('-' when not).
bisect_steps() {
	local mode=$1 base tip
	select_configs
	lock_work
	ensure_setup "$([ -z "${TIP:-}" ] || echo --base-only)"
	base=$(require_base)
	run_tip
	tip=$RUN_TIP
	say "$RUN_SERIES"
	local selected steps
	selected=("${SELECTED[@]}")
	mapfile -t steps < <(
		echo "$base"
		git --git-dir="$BASE_REPO" rev-list --reverse "$base..$tip"
	)
	local from
	from=$(from_step "${steps[@]}")
	local run_dir tsv
	run_dir=$(prepare_run_dir "bisect-$mode")
	tsv=$run_dir/results.tsv
	printf '%s\n' "$RUN_SERIES" >"$run_dir/series.txt"
	export CCACHE_STATSLOG=$run_dir/ccache-stats.log
	local total=$(((${#steps[@]} - from) * ${#selected[@]})) n=0 failed=0 start
	start=$(now)
	local -A prev_warnings prev_trouble base_text prev_frames
	local k commit subject short tree checkpatch config build_dir new
	if [ "$from" -gt 0 ]; then
		say "FROM=$FROM: steps $from to $((${#steps[@]} - 1)) of 0 to $((${#steps[@]} - 1))"
		for config in "${selected[@]}"; do
			build_dir=$(cached_ok_build "${steps[0]}" "$config")
			[ -z "$build_dir" ] || base_text[$config]=$(result_field "$build_dir" text_bytes)
			build_dir=$(cached_ok_build "${steps[$((from - 1))]}" "$config")
			[ -z "$build_dir" ] || prev_warnings[$config]=$build_dir/warnings.txt
			[ -z "$build_dir" ] || prev_frames[$config]=$build_dir/entry-frames.tsv
		done
	fi
	for k in "${!steps[@]}"; do
		[ "$k" -ge "$from" ] || continue
		commit=${steps[$k]}
		subject=$(git --git-dir="$BASE_REPO" log -1 --format=%s "$commit")
		short=$(git --git-dir="$BASE_REPO" rev-parse --short=12 "$commit")
		tree=$(git --git-dir="$BASE_REPO" rev-parse "$commit^{tree}")
		[ "$k" -gt 0 ] || subject="base: $subject"
		checkpatch=-
		[ "$k" -eq 0 ] || checkpatch=$(checkpatch_step "$commit" "$(prepare_steps_worktree)")
		for config in "${selected[@]}"; do
			n=$((n + 1))
			say "[$n/$total] $config $short $subject (elapsed $(elapsed_since "$start") s)"
			record_start
			REC[step]=$k REC[commit]=$short REC[tree]=$tree REC[subject]=$subject REC[config]=$config REC[checkpatch]=$checkpatch
			step_build "$commit" "$config"
			build_dir=$STEP_RESULT
			REC[status]=$STEP_BUILD REC[cached]=$STEP_CACHED REC[result_dir]=$build_dir
			REC[first_error]=${STEP_ERROR:--} REC[modules_dir]=${STEP_MODULES:--}
			local key
			for key in seconds warnings bzimage_bytes text_bytes; do
				REC[$key]=$(result_field "$build_dir" "$key")
			done
			say "      build ${REC[status]}$([ "$STEP_CACHED" = yes ] && echo ' (cached)' || echo " in ${REC[seconds]} s")"
			new=0
			[ "$k" -eq 0 ] || [ -n "${prev_warnings[$config]:-}" ] || new=-
			if [ -n "${prev_warnings[$config]:-}" ]; then
				new=$(comm -13 "${prev_warnings[$config]}" "$build_dir/warnings.txt" | grep -c . || true)
			fi
			REC[new_warnings]=$new
			prev_warnings[$config]=$build_dir/warnings.txt
			[ "$k" -eq 0 ] || [ "${REC[status]}" != OK ] ||
				REC[stack_growth]=$(stack_growth "${prev_frames[$config]:-}" "$build_dir/entry-frames.tsv")
			[ "${REC[status]}" != OK ] || prev_frames[$config]=$build_dir/entry-frames.tsv
			[ "$k" -gt 0 ] || base_text[$config]=${REC[text_bytes]}
			if [ "${REC[status]}" = OK ] && [ "${base_text[$config]:-0}" -gt 0 ]; then
				REC[text_delta]=$((REC[text_bytes] - base_text[$config]))
			fi
			if [ "$mode" = boot ] && [ "${REC[status]}" = OK ]; then
				step_boot "$commit" "$config"
				record_boot "$STEP_BOOT_DIR" "$run_dir/steps/$n.trouble" "${prev_trouble[$config]:-}"
				# the first step of a FROM= run: the step before was not booted here
				[ "$k" -eq 0 ] || [ -n "${prev_trouble[$config]:-}" ] || REC[new_kernel_trouble]=-
				prev_trouble[$config]=$run_dir/steps/$n.trouble
				say "      boot ${REC[boot]}$([ "$STEP_BOOT_CACHED" = yes ] && echo ' (cached)' || echo " in ${REC[boot_seconds]} s"): ${REC[tests_passed]} tests passed, ${REC[tests_failed]} failed$SERIES_NOTE_TEXT"
			elif [ "$mode" = boot ]; then
				REC[boot]=SKIP
			fi
			[ "${REC[status]}" = OK ] || failed=$((failed + 1))
			[ "$mode" != boot ] || [ "${REC[boot]}" = GOOD ] || [ "${REC[status]}" != OK ] || failed=$((failed + 1))
			record_write "$(printf '%s/steps/%04d.rec' "$run_dir" "$n")"
		done
	done
	records_tsv "$run_dir/steps" "$tsv"
	"$KSTACK_ROOT/tools/steps-table" "$tsv" "$run_dir/results.md"
	say "$((${#steps[@]} - from)) steps x ${#selected[@]} configs in $(elapsed_since "$start") s; ccache: $(ccache_hit_rate "$CCACHE_STATSLOG")"
	publish_run_dir "$run_dir" "bisect-$mode"
	prune_results
	say "$RUN_SERIES"
	say "results: $RESULTS/bisect-$mode/results.md and results.tsv"
	[ "$failed" -eq 0 ] || die "$failed of $total steps failed (the rows marked FAIL, BAD or TIMEOUT above)"
}

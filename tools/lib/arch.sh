# shellcheck shell=bash
# tools/lib/arch.sh: Arch descriptions (configs/*.arch), the configs a run
# selects, and what besides the tree decides a build.

known_arches() {
	local file
	for file in "$CONFIGS_DIR"/*.arch; do
		[ -e "$file" ] && basename "$file" .arch
	done
}

# in_list WORD ITEM...: true when WORD is one of the ITEMs.
in_list() {
	local word=$1 item
	shift
	for item in "$@"; do
		[ "$item" != "$word" ] || return 0
	done
	return 1
}

# The keys of an arch description: every one must be set (guest_cflags may
# be an empty list); any other key is an error.
ARCH_KEYS=(kernel_arch base_config fragments configs main_config kernel_image debian_arch
	qemu_binary qemu_args console task_stack_bytes guest_cflags guest_elf_class guest_elf_machine
	optin_configs base_configs)
# Keys that may be left out or empty: guest_cflags; optin_configs, configs
# built only when CONFIGS= names them (never in CONFIGS=all); base_configs,
# CONFIG=BASE entries naming another base than base_config for a config and
# its variants (BASE: a make target, or debian:FILE, Debian's
# /usr/src/linux-config-6.1/FILE.xz from the package linux-config-6.1).
ARCH_OPTIONAL_KEYS=(guest_cflags optin_configs base_configs)
declare -A ARCH_CHECKED=()

# load_arch NAME: set the ARCH_KEYS from configs/NAME.arch, checked the
# first time it is loaded: an unknown or missing key, or a main config that
# is not one of its configs, is an error naming the file.
load_arch() {
	local file=$CONFIGS_DIR/$1.arch
	[ -f "$file" ] || die "unknown arch '$1'" \
		"Known arches (configs/*.arch): $(known_arches | tr '\n' ' ')"
	kernel_arch='' base_config='' main_config='' kernel_image='' debian_arch=''
	fragments=() configs=() qemu_args=() guest_cflags=() optin_configs=() base_configs=()
	qemu_binary='' console='' task_stack_bytes='' guest_elf_class='' guest_elf_machine=''
	# shellcheck source=/dev/null
	. "$file"
	[ -z "${ARCH_CHECKED[$file]:-}" ] || return 0
	local key unknown=() missing=()
	while read -r key; do
		in_list "$key" "${ARCH_KEYS[@]}" || unknown+=("$key")
	done < <(sed -n -E 's/^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)(\+?=).*/\1/p' "$file" | sort -u)
	for key in "${ARCH_KEYS[@]}"; do
		! in_list "$key" "${ARCH_OPTIONAL_KEYS[@]}" || continue
		local -n value=$key
		[ -n "${value[*]}" ] || missing+=("$key")
		unset -n value
	done
	[ "${#unknown[@]}" -eq 0 ] || die "$file: unknown key(s): ${unknown[*]}" \
		"An arch description sets exactly these: ${ARCH_KEYS[*]}."
	[ "${#missing[@]}" -eq 0 ] || die "$file: missing or empty key(s): ${missing[*]}" \
		"An arch description sets exactly these: ${ARCH_KEYS[*]} (${ARCH_OPTIONAL_KEYS[*]} may be empty)."
	in_list "$main_config" "${configs[@]}" ||
		die "$file: main_config=$main_config is not one of its configs (${configs[*]})"
	local entry
	for entry in "${base_configs[@]}"; do
		case "$entry" in
		?*=?*) in_list "${entry%%=*}" "${configs[@]}" "${optin_configs[@]}" ||
			die "$file: base_configs entry '$entry' names no config of the arch (${configs[*]} ${optin_configs[*]})" ;;
		*) die "$file: base_configs entry '$entry' is not CONFIG=BASE" ;;
		esac
	done
	ARCH_CHECKED[$file]=1
}

# arch_of CONFIG: the arch a config belongs to (the part before the first -).
arch_of() { printf '%s\n' "${1%%-*}"; }

# select_arches: set ARCHES_SELECTED from ARCHES= (default: every arch), a
# list separated by spaces or commas; an unknown arch is an error that lists
# the known ones. (Called directly, never in $(...) or < <(...): there, die
# would only end the subshell.)
select_arches() {
	local arch known list=${ARCHES:-}
	known=$(known_arches | tr '\n' ' ')
	ARCHES_SELECTED=()
	for arch in ${list//,/ }; do
		[ -f "$CONFIGS_DIR/$arch.arch" ] || die "unknown arch '$arch' in ARCHES=" \
			"Known arches (configs/*.arch): ${known% }"
		ARCHES_SELECTED+=("$arch")
	done
	[ -n "${ARCHES:-}" ] || read -r -a ARCHES_SELECTED <<<"$known"
	[ "${#ARCHES_SELECTED[@]}" -gt 0 ] || die "no arch selected (ARCHES='${ARCHES:-}')" \
		"Known arches (configs/*.arch): ${known% }"
}

# select_configs: set SELECTED to the configs to work on, from ARCHES= and
# CONFIGS= (default: each arch's main config; "all": every config of those
# arches but the opt-in ones; else a list separated by spaces or commas). An unknown config is
# an error that lists the valid ones.
select_configs() {
	local arch config all=() optin=() wanted=() valid
	select_arches
	for arch in "${ARCHES_SELECTED[@]}"; do
		load_arch "$arch"
		all+=("${configs[@]}")
		optin+=("${optin_configs[@]}")
		case "${CONFIGS:-}" in
		"") wanted+=("$main_config") ;;
		all) wanted+=("${configs[@]}") ;;
		esac
	done
	valid="Valid configs: ${all[*]} (or CONFIGS=all)"
	[ "${#optin[@]}" -eq 0 ] || valid+="; by name only, never in all: ${optin[*]}"
	if [ -n "${CONFIGS:-}" ] && [ "$CONFIGS" != all ]; then
		for config in ${CONFIGS//,/ }; do
			in_list "$config" "${all[@]}" "${optin[@]}" ||
				die "unknown config '$config' in CONFIGS= (ARCHES: ${ARCHES_SELECTED[*]})" "$valid"
			wanted+=("$config")
		done
	fi
	[ "${#wanted[@]}" -gt 0 ] || die "no config selected (CONFIGS='${CONFIGS:-}')" "$valid"
	# every fragment of every selected config is there (die names a missing
	# one), and the package of a Debian base config is installed
	for config in "${wanted[@]}"; do
		config_fragments "$config" >/dev/null
		local base
		base=$(config_base "$config")
		case "$base" in
		debian:*)
			ensure_packages linux-config-6.1 xz-utils
			base_config_file "${base#debian:}" >/dev/null ||
				die "config $config: configs/$(arch_of "$config").arch names the base $base, which Debian's linux-config-6.1 does not have"
			;;
		esac
	done
	SELECTED=("${wanted[@]}")
}

# config_fragments CONFIG: the fragment files of a config, in merge order:
# the arch's, then for a config ARCH-VARIANT its own, ARCH-VARIANT.config;
# for ARCH-V1-V2, ARCH-V1.config and then ARCH-V1-V2.config.
config_fragments() {
	local config=$1 name prefix rest
	load_arch "$(arch_of "$config")"
	local names=("${fragments[@]}")
	prefix=$(arch_of "$config") rest=${config#"$(arch_of "$config")"}
	while [ -n "$rest" ]; do
		rest=${rest#-}
		prefix=$prefix-${rest%%-*}
		case "$rest" in *-*) rest=${rest#*-} rest=-$rest ;; *) rest= ;; esac
		names+=("$prefix.config")
	done
	for name in "${names[@]}"; do
		[ -f "$CONFIGS_DIR/$name" ] || die "config $config needs the fragment configs/$name, which is missing" \
			"Fragments there: $(cd "$CONFIGS_DIR" && printf '%s ' ./*.config | sed 's#\./##g')"
		printf '%s\n' "$CONFIGS_DIR/$name"
	done
}

# config_base CONFIG: what a build of CONFIG starts from: the base_configs
# entry of CONFIG or of the config it is a variant of (x86_64-distro for
# x86_64-distro-small), else the arch's base_config.
config_base() {
	local config=$1 entry name
	load_arch "$(arch_of "$config")"
	for entry in "${base_configs[@]}"; do
		name=${entry%%=*}
		case "$config" in
		"$name" | "$name"-*)
			printf '%s\n' "${entry#*=}"
			return 0
			;;
		esac
	done
	printf '%s\n' "$base_config"
}

# DEBIAN_CONFIG_DIR: where the package linux-config-6.1 puts Debian's
# kernel configs.
DEBIAN_CONFIG_DIR=${DEBIAN_CONFIG_DIR:-/usr/src/linux-config-6.1}

# base_config_file FILE: the path of Debian's config FILE (xz), or an error
# on stderr naming what to install (return 1).
base_config_file() {
	local path=$DEBIAN_CONFIG_DIR/$1.xz
	if [ ! -f "$path" ]; then
		printf 'error: no Debian kernel config %s: install the package linux-config-6.1 (apt-get install linux-config-6.1), or name one of: %s\n' \
			"$path" "$(cd "$DEBIAN_CONFIG_DIR" 2>/dev/null && printf '%s ' *.xz | sed 's/\.xz//g')" >&2
		return 1
	fi
	printf '%s\n' "$path"
}

# config_identity CONFIG: everything besides the source tree that decides
# what a build of CONFIG gives: the kernel arch, the base config, the
# fragments, the toolchain and the code that runs the kernel's make (not the
# arch's boot settings, not the test modules, which are keyed apart). Part
# of the key of a cached result.
config_identity() {
	local config=$1
	load_arch "$(arch_of "$config")"
	local base file
	base=$(config_base "$config")
	printf 'config %s\nkernel_arch %s\nbase_config %s\n' "$config" "$kernel_arch" "$base"
	case "$base" in
	debian:*)
		file=$(base_config_file "${base#debian:}") && sha256sum <"$file" | cut -d' ' -f1
		declare -f merge_distro_kernel_config
		;;
	esac
	local fragment list
	list=$(config_fragments "$config")
	while read -r fragment; do
		printf '== %s\n' "$(basename "$fragment")"
		cat "$fragment"
	done <<<"$list"
	printf '== build code\n'
	declare -f kernel_make merge_kernel_config save_module_kit warning_keys
	printf '%s\n' "${MODULE_KIT[@]}"
	gcc --version | sed -n 1p
	ld --version | sed -n 1p
	make --version | sed -n 1p
}

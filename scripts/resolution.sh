#!/usr/bin/env bash
# resolution.sh: the same options at two resolutions, compared at their
# shared vertices (README, "The same landscape at every resolution").
#
#   scripts/resolution.sh                    513 against 2049, seed 1234
#   scripts/resolution.sh 257 1025 -- --seed 7 --sea-level 0.3
#   scripts/resolution.sh -- --seed 7        513 against 2049, seed 7
#   scripts/resolution.sh --help             this text
#
# Everything after '--' goes to both runs (not --size, --region, the maps
# or other outputs: exit 2; worldgen judges the rest first, on a world of
# 2: one it refuses is exit 2 too, before any run).  Uses worldgen's --mesh auto unless given (the
# fields are the same on every backend).  SMALL and BIG are checked before any run:
# sides from 2 to 65536 whose vertices meet (BIG - 1 a multiple of SMALL - 1,
# BIG at least SMALL), else exit 2.  Exit 1 when a run or the comparison
# fails (resolution.c says why: options under which erosion changes nothing
# leave no share to give).
set -euo pipefail
# The tree this script is in, not a folder of that name under an exported
# CDPATH: cd scripts/.. had gone there, printed its path on standard
# output, and run its worldgen.
unset CDPATH
cd "$(dirname "$0")/.."
usage() {
    echo "resolution.sh: $*" >&2
    echo "usage: scripts/resolution.sh [SMALL [BIG]] [-- WORLDGEN OPTIONS]" >&2
    exit 2
}
# -h, --help: the comment above, on standard output.
case ${1:-} in -h | --help)
    sed -n '2,/^[^#]/s/^# \{0,1\}//p' scripts/resolution.sh
    exit 0 ;;
esac
small=513 big=2049
[ $# -gt 0 ] && [ "$1" != -- ] && { small=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { big=$1; shift; }
after=0 # whether '--' came
[ "${1:-}" = -- ] && { shift; after=1; }
# The options after --: not those the script sets, outputs (each run would
# write them again), or what only prints; a prefix worldgen would take for
# one is refused too (--height is the picture's own option).
sets=(--size --region --heightmap --heightmap-format --watermap)
outs=(--sedimentmap --normalmap --albedo --json --out --obj --gltf --show
      --list-devices --help --version)
for a in "$@"; do
    [[ $a =~ ^-[A-Za-z]*[hV] ]] && usage "worldgen option '$a': the script runs worldgen itself"
    [[ $a == --?* ]] || continue
    name=${a%%=*}
    [[ $name == --height ]] && continue
    for f in "${sets[@]}"; do
        [[ $f == "$name"* ]] &&
            usage "worldgen option '$a' ($f): the script compares whole worlds of SMALL and BIG, through maps of its own"
    done
    for f in "${outs[@]}"; do
        [[ $f == "$name"* ]] &&
            usage "worldgen option '$a': the script makes no output but its comparison ($f)"
    done
done
for side in "SMALL $small" "BIG $big"; do
    name=${side% *} value=${side#* }
    [[ $value =~ ^[1-9][0-9]{0,5}$ ]] && (( value >= 2 && value <= 65536 )) ||
        usage "$name '$value' is not a size from 2 to 65536"
done
(( big >= small && (big - 1) % (small - 1) == 0 )) ||
    usage "sizes $small and $big share no vertices (valid: BIG - 1 a multiple" \
          "of SMALL - 1, BIG at least SMALL, such as 513 and 2049)"
# Anything else before '--' had gone to worldgen, which refused it as its
# own usage error ("worldgen: unexpected argument", "Try 'worldgen --help'").
[ $# -eq 0 ] || [ "$after" = 1 ] ||
    usage "'$1': an argument this script does not take (worldgen's options go after --)"
[ -x ./worldgen ] || make -s worldgen
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The project's compiler, as make and bench.sh take it; without one, a
# message and exit 1 (a bare cc had ended the script with 127, "cc: command
# not found").
${CC:-cc} -O2 -o "$dir/resolution" scripts/resolution.c -lm ||
    { echo "resolution.sh: cannot build scripts/resolution.c with '${CC:-cc}'" \
           "(make deps installs a compiler)" >&2; exit 1; }
# worldgen's default --mesh is auto: given here too, a user's --mesh had
# been warned of as given twice, in each run.  It runs in the background,
# waited for, so that a signal to this script alone (kill PID) stops it
# too before the folder goes: it had run on, writing into a folder
# already removed.  (Ctrl-C, to the whole process group, reaches both.)
# Each line a run says (a warning of the options) is said once: the
# three runs had said each three times.
wg=
: > "$dir/said"
run() {
    local st=0
    ./worldgen -q --no-image "$@" 2> "$dir/err" & wg=$!
    wait "$wg" || st=$?
    wg=
    grep -vxF -f "$dir/said" "$dir/err" >&2 || :
    cat "$dir/err" >> "$dir/said"
    return "$st"
}
stop_wg() { [ -z "$wg" ] || { kill -TERM "$wg" 2>/dev/null; wait "$wg" 2>/dev/null; wg=; }; }
trap 'stop_wg; exit 129' HUP
trap 'stop_wg; exit 130' INT
trap 'stop_wg; exit 143' TERM
# The terrain alone: the options without the counts given (--erosion N,
# --er=N, --hydraulic N, ...), which would undo its 0s.
terrain=() skip=0
for a in "$@"; do
    if (( skip )); then skip=0; continue; fi
    name=${a%%=*}
    if [[ ${#name} -ge 4 && ( --erosion == "$name"* || --hydraulic == "$name"* ) ]]; then
        [[ $a == *=* ]] || skip=1
        continue
    fi
    terrain+=("$a")
done
# The options as worldgen judges them, on a world of 2 (milliseconds),
# before any run: one it refuses (--hyd with no value) had been found by
# the second run, after the first's, and said with worldgen's usage line.
st=0
run --size 2 "$@" || st=$?
[ "$st" != 2 ] ||
    usage "worldgen refused the options after -- (its message above)"
[ "$st" = 0 ] || exit 1
run --size "$small" --erosion 0 --hydraulic 0 --heightmap "$dir/t1.pfm" ${terrain[@]+"${terrain[@]}"}
run --size "$small" --heightmap "$dir/h1.pfm" --watermap "$dir/w1.pfm" "$@"
run --size "$big" --heightmap "$dir/h2.pfm" --watermap "$dir/w2.pfm" "$@"
echo "$small against $big, the default passes and steps of each size (unless given) ${*:+with $*}"
"$dir/resolution" "$dir/t1.pfm" "$dir/h1.pfm" "$dir/w1.pfm" "$dir/h2.pfm" "$dir/w2.pfm"

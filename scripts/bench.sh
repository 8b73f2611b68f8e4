#!/usr/bin/env bash
# bench.sh: the crossover table of the reference chapter, measured here.
#
# For each grid size and each backend, runs ./worldgen several times and
# prints the median of the field stages' time (terrain + erosion + hydraulic
# + normals + readback, the table's 'total' column; setup such as GPU
# pipeline creation is reported by worldgen but not counted) as an aligned
# table; with -c FILE also as CSV ('-c -': on standard output, after the
# table).  With -t it adds the per-stage medians and the hydraulic stage's
# nanoseconds per cell and step.  A benchmark prints figures; it passes or
# fails nothing, but a backend worldgen does not know is an error (exit 2)
# and so is having none that can run here (exit 1).  So is a bad option
# value (exit 2, before anything is measured: -r takes 1..1000 runs, in
# 0x hex too; -s, -o, -e and -H take what worldgen's --size, --octaves,
# --erosion and --hydraulic take, which worldgen judges), an argument that
# is not an option (exit 2), a -c file that cannot be written (exit 1,
# checked first; a relative name is from where the script was started)
# and a run of
# worldgen that fails (exit 1, naming the size, the backend and worldgen's
# reason: its cell says "failed", with no figure).  The CSV appears whole or not at
# all (a link's target too: the link stays a link).  No temporary is left
# behind, on a signal either.  The figures have a decimal point in every locale.
#
#   scripts/bench.sh                       every backend at the default
#                                          sizes, 32 64 96 128 192 512
#                                          1024 2048, 5 runs each, with
#                                          6 octaves, 12 passes, 100 steps
#   scripts/bench.sh -s "512 2048" -r 9    chosen sizes, 9 runs each
#   scripts/bench.sh -b scalar -o 6 -e 12  one backend, chosen octaves/erosion
#   scripts/bench.sh -H 400                400 hydraulic steps (default 100)
#   scripts/bench.sh -d                    worldgen's own defaults instead:
#                                          passes and steps scale with size
#   scripts/bench.sh -t                    also the per-stage medians
#   scripts/bench.sh -R -t                 each run also draws the picture
#   scripts/bench.sh -c bench.csv          also the medians as CSV
#   scripts/bench.sh -l                    also each stage against this
#                                          machine's limit (-L: measure the
#                                          machine again)
#   scripts/bench.sh -h                    this text (or --help)
#
# The whole run's wall time (worldgen's JSON "wall": start to the JSON,
# setup and everything) is shown beside the stages' total with -t and -l
# and is the CSV's last column.  Without -R the runs draw no picture, so
# that the stages alone are measured; with -R each run also draws the
# default picture (800x600, --aa 2) into a temporary PNG, as a user's run
# does, so the wall is what that user waits for, and -t, -l and the CSV
# add the render's medians: rasterise, shade, and writing the PNG.
#
# Limits (-l).  scripts/limits.c, built into build/limits with the
# project's compiler ($CC), measures this machine: the bandwidth of a triad
# (two read streams, one write stream) in L2, in L3 and far beyond the
# caches (288 MiB), and the issue rates of 8-lane AVX2 binary32 add, mul,
# min, max, compare (and a mix of them side by side), divide and square
# root, of 8-lane gathers from a 256 KiB table (the lattice) and of the
# terrain's quad fetches (limits.c says how), on one thread and on every
# core; where the CPU has AVX-512F, also the same rates 16 lanes wide (the
# OpenMP kernels' AVX-512 builds run there, so a stage's limit takes the
# better of the two widths' rates: on such a CPU the AVX2 rates alone would
# set limits the kernels can beat); it is cached in build/limits.txt with
# the CPU, the count of CPUs and the load average it was measured at, and
# measured again on another CPU or count (taskset, a cpuset).  The work of
# each stage is counted from backends/SPEC.md, per cell, in lane-operations
# (one lane of one vector instruction; a select, an |x| and a compare are
# one each; ftz(x) is three: |x|, compare, select; rcp(m) is ten):
#   terrain, per cell-octave: 46 ops + 1 quad fetch.  px, py: 2 + 2 (the
#     x-dependent products ux * COS, ux * SIN and the row's uy * SIN,
#     uy * COS are tabulated once, not per cell), floor 2, to int 2,
#     fractions 2, fades 4 + 4, the three lerps 9, the fold 4, the sum 3
#     (34 float ops) and the lattice indices 12 (integer: +1, & 255, << 8
#     and the four index sums); the four corners are one quad fetch (a
#     16-byte load and a share of a 4 x 4 transpose, as the OpenMP backend
#     fetches them; four gathered lanes cost this machine more), timed by
#     limits.c on a table in L1 (a row's fetches stay within a few lattice
#     lines) and added to the ops' time, not overlapped: the transposes'
#     shuffles take the vector pipes the ops need.  Bytes: the height
#     written, 4 a cell.
#   erosion, per cell-pass: 73 ops: each of 8 neighbours d 1, e 6 (two
#     compares, d - T, d + T, two selects), moved 2; then h - moved 1.
#     The OpenMP kernels' AVX-512 builds issue 57: each compare writes a
#     mask, under which d - T (zeroing the other lanes) and d + T (keeping
#     them) are the selects, so e is 4 (objdump of openmp_erode_row.avx512f:
#     17 subtractions, 16 sums, 8 products, 16 compares and 2 blends a
#     row's vector); measured against 73, erosion ran at 0.7-0.8x of its
#     limit on the AMD EPYC VM.
#     Bytes: 8 (src read, dst written; neighbours come from cache).
#   hydraulic, per cell-step: 319 ops, as the OpenMP kernels compute the
#     SPEC's step (each cell's eight shares made once, in pass 1, not again
#     by each neighbour in pass 2; SPEC form: about 765), counted from their
#     AVX2 loops: the surface b + w 1; pass 1 149 (d 3 x 8: subtract,
#     compare, and; dmax 12: 4 corner products, 8 max; P 13: compare,
#     select, rcp 10, select; the weights 5 x 8: x P, t^2, t^4 and one
#     flush, compare and and (openmp_hydraulic.c says why one flush gives
#     the SPEC's bits); their sum 8; F 14; Q 14; the shares 3 x 8); pass 2 169 (the
#     cell's own shares summed, 'out', 8; per neighbour 11 x 8: win and sin
#     4, e 4, drop 1, creep 2; 4 corner products; then the discharge, the
#     state, erode/deposit and the running mean 69).  Bytes: 32 (b, w, s, a read, b, w, s, a
#     written; the shares stay in a ring of three rows in the cache).
#   normals, per cell: 10 ops (dx 2, dz 2, l's products and sums 4, two
#     negations) + 3 divides + 1 square root.  Bytes: 16 (h read, nx, ny,
#     nz written).
# The limit of a stage is max(ops / issue rate (+ quad fetches / their
# rate), divides and roots / their rate, bytes / bandwidth) for the run's cells
# and counts: the issue rate of the mix, the bandwidth of the level its
# fields fit in (terrain 1 field, erosion 2, hydraulic 8, normals 4), on
# one thread for scalar, on openmp's threads for openmp (with
# OMP_NUM_THREADS under the count of cores, one thread's rates times it),
# and on every core otherwise (vulkan: lavapipe's threads, on this CPU).  'ratio' is measured / limit, how far from it
# the stage runs.  A stage should not beat its limit; one that writes its
# output with streaming stores (openmp's terrain and normals beyond the
# caches) skips the read that the triad's ordinary stores pay for, so
# there a ratio a little under 1 is possible.  The machine is measured at
# its best (the best of 15 repetitions, each thread timing itself), so a
# loaded machine shows as large ratios, not as lower limits.
set -euo pipefail
# Numbers are read and written with a decimal point, whatever the caller's
# locale: under de_DE.UTF-8, sort -g and awk read worldgen's 0.00123 as 0
# and bash's printf refused it, so the table showed 0,00000s and the CSV
# had commas inside its fields.
export LC_ALL=C
here=$PWD
# The tree this script is in, not a folder of that name under an exported
# CDPATH: cd scripts/.. had gone there, printed its path on standard
# output, and run its worldgen.
unset CDPATH
cd "$(dirname "$0")/.."

sizes="32 64 96 128 192 512 1024 2048"
runs=5
octaves=6
erosion=12
steps=100
defaults=0
counts_given=""
backends=""
b_set=0 # -b given (even empty)
b_all=0
stages=0
limits=0
remeasure=0
render=0
csv=""
runs_max=1000
usage() {
    echo "usage: $0 [-s sizes] [-r runs] [-b backends] [-o octaves] [-e passes] [-H steps] [-d] [-t] [-R] [-l|-L] [-c file.csv]" >&2
    exit 2
}
# -h, --help: the comment at the top of this file, on standard output.
case ${1:-} in -h | --help)
    sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
    exit 0 ;;
esac
while getopts "s:r:b:o:e:H:dtRlLc:" opt; do
    case $opt in
    s) sizes=$OPTARG ;;
    r) runs=$OPTARG ;;
    b) backends=$OPTARG b_given=$OPTARG b_set=1 ;;
    o) octaves=$OPTARG ;;
    e) erosion=$OPTARG counts_given+=" -e" ;;
    H) steps=$OPTARG counts_given+=" -H" ;;
    d) defaults=1 ;;
    t) stages=1 ;;
    R) render=1 ;;
    l) limits=1 ;;
    L) limits=1 remeasure=1 ;;
    c) csv=$OPTARG
       # An empty name had been no CSV at all, and exit 0.
       [ -n "$csv" ] ||
           { echo "bench.sh: -c: '' names no file (valid: a file name, or - for standard output)" >&2; exit 2; } ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || { echo "bench.sh: '$1': an argument this script does not take" >&2; usage; }
# -d runs worldgen's own counts: an -e or -H beside it had been dropped
# without a word, and the table's heading named the defaults.
[ "$defaults" = 0 ] || [ -z "$counts_given" ] ||
    { echo "bench.sh: -d and${counts_given}: -d runs worldgen's default passes and steps of each size (valid: -d, or -e and -H)" >&2; exit 2; }
[ -x ./worldgen ] || make -s worldgen

# The options' values, checked before anything is measured: a bad one is
# a usage error (exit 2) that names the option, the value and the valid
# range.  worldgen judges its own options' values ('worldgen OPTIONS
# --version' checks a command line without running it), so the ranges
# are its own; a value it takes in 0x hex is made decimal here for awk.
wg_value() { # this script's option, worldgen's option, the value
    local why st=0
    why=$(./worldgen "--$2" "$3" --version 2>&1 >/dev/null) || st=$?
    if [ "$st" = 2 ]; then
        # "worldgen: --size: '1' is out of range (valid: 2..65536; up to
        # 1048577 with --region)": this script runs no regions.
        echo "bench.sh: -$1: $(echo "$why" | head -n 1 |
            sed -e "s/^worldgen: --$2: //" -e 's/; up to [0-9]* with --region//')" >&2
        exit 2
    elif [ "$st" != 0 ]; then
        echo "bench.sh: ./worldgen --$2 $3 --version failed (status $st): $why" >&2
        exit 1
    fi
    case $3 in
    0[xX]*) echo $((16#${3:2})) ;;
    *) echo $((10#$3)) ;;
    esac
}
# No globbing: -s '*' is no list of files.  A newline separates sizes as
# a space does: read had stopped at the first, and -s "$(seq 16 8 32)"
# measured 16 alone, without a word.
read -ra size_list <<< "${sizes//$'\n'/ }"
[ ${#size_list[@]} -gt 0 ] ||
    { echo "bench.sh: -s: '$sizes' names no size (valid: grid sizes 2..65536, separated by spaces)" >&2; exit 2; }
# A size named twice (16 and 0x10 too) is one row, as a backend named
# twice is one column: each had been measured and printed in the table,
# but the medians are kept by size, so -t, -l and the CSV had shown the
# last one's figures in both rows, not the first row's.
sizes=""
for s in "${size_list[@]}"; do
    v=$(wg_value s size "$s") || exit $?
    case " $sizes " in *" $v "*) ;; *) sizes+="${sizes:+ }$v" ;; esac
done
octaves=$(wg_value o octaves "$octaves") || exit $?
erosion=$(wg_value e erosion "$erosion") || exit $?
steps=$(wg_value H hydraulic "$steps") || exit $?
# In 0x hex too, as every whole number worldgen and the options above take.
runs_given=$runs
if [[ $runs =~ ^0[xX]0*([0-9a-fA-F]{1,4})$ ]]; then
    runs=$((16#${BASH_REMATCH[1]}))
elif [[ $runs =~ ^0[xX]0*[0-9a-fA-F]+$ ]]; then
    runs=99999 # too many digits to be in range
fi
if ! [[ $runs =~ ^[0-9]+$ ]]; then
    echo "bench.sh: -r: '$runs_given' is not a whole number (valid: 1..$runs_max)" >&2
    exit 2
fi
r=${runs#"${runs%%[!0]*}"} # no leading zeros, no overflow below
if [ ${#r} -gt 4 ] || [ $((10#0$r)) -lt 1 ] || [ $((10#0$r)) -gt $runs_max ]; then
    echo "bench.sh: -r: '$runs_given' is out of range (valid: 1..$runs_max)" >&2
    exit 2
fi
runs=$((10#$r))
# -b: backends by name, separated by commas or spaces (no globbing: -b '*'
# is no list of files), each once; 'all' is every one (as no -b), and
# 'auto' is none in particular, so not a column of the table.  An empty
# -b names none, as an empty -s: it had measured every backend, as no -b.
# The names beside 'all' are checked too (-b all,vulcan had measured all
# without a word on the misspelt one).
if [ "$b_set" = 1 ]; then
    read -ra b_list <<< "$(printf %s "$backends" | tr ",\n\t" "   ")"
    backends=""
    for b in "${b_list[@]}"; do
        case $b in
        all) b_all=1; continue ;;
        auto) echo "bench.sh: -b: 'auto' is not one backend to measure (valid: scalar, openmp, vulkan or all, separated by commas)" >&2
              exit 2 ;;
        *[!A-Za-z0-9_-]*) echo "bench.sh: -b: '$b' is not a backend's name (valid: scalar, openmp, vulkan or all, separated by commas)" >&2
              exit 2 ;;
        esac
        case " $backends " in *" $b "*) ;; *) backends+="${backends:+ }$b" ;; esac
    done
    [ -n "$backends" ] || [ "$b_all" = 1 ] ||
        { echo "bench.sh: -b: '$b_given' names no backend (valid: scalar, openmp, vulkan or all, separated by commas)" >&2; exit 2; }
    # Each name worldgen knows, asked now: a misspelt one (-b vulcan) had
    # been found at its first run, after the table's header.
    for b in $backends; do
        why=$(./worldgen --mesh "$b" --version 2>&1 >/dev/null) ||
            { echo "bench.sh: -b $b: $why" | head -n 1 >&2; exit 2; }
    done
    [ "$b_all" = 1 ] && backends=""
fi

# Every temporary goes, however the script ends: the CSV's, the JSON's,
# the limits' (a signal too: each of sigs ends the script through exit,
# with 128 and the signal's number, which runs the EXIT trap; QUIT, USR1,
# ALRM and the others had killed it outright, its temporaries left and
# its worldgen running on).
sigs=(HUP INT QUIT PIPE ALRM TERM USR1 USR2 VTALRM PROF XCPU XFSZ)
# Each of sigs's trap: $1 with %d for the status the signal ends with.
on_signals() {
    local s
    for s in "${sigs[@]}"; do
        # shellcheck disable=SC2059,SC2064 # the status is put in now
        trap "$(printf "$1" $((128 + $(kill -l "$s"))))" "$s"
    done
}
json="" png="" csv_tmp=""
cleanup() {
    # A second signal (timeout sends its own to the script and then to the
    # group) had killed the rm: the temporaries stayed.
    trap '' "${sigs[@]}"
    rm -f ${json:+"$json"} ${png:+"$png"} ${csv_tmp:+"$csv_tmp"} build/limits.tmp.$$ \
        build/limits.txt.tmp.$$ build/limits.sum.$$
}
trap cleanup EXIT
on_signals 'exit %d'

# A new file beside the CSV for it, by mktemp (a name no one can have
# made first, nor linked elsewhere: '$csv_dst.tmp.$$' had been followed
# through a link someone put there, and written over the file it named),
# with the mode a new file gets (umask) or the CSV's own; in $csv_tmp,
# signals held off while it is made (as the JSON's, below).
csv_temp() {
    sig=""
    on_signals 'sig=%d'
    csv_tmp=$(trap '' "${sigs[@]}"; mktemp -- "$csv_dst.XXXXXX" 2>&1) || {
        local why=$csv_tmp
        csv_tmp=""
        echo "bench.sh: -c: cannot write '$csv': ${why##*: }" >&2
        exit 1
    }
    on_signals 'exit %d'
    [ -z "$sig" ] || exit "$sig"
    if [ -f "$csv_dst" ]; then
        chmod --reference="$csv_dst" -- "$csv_tmp" 2>/dev/null || :
    else
        chmod -- "$(printf %o $((0666 & ~$(umask))))" "$csv_tmp" 2>/dev/null || :
    fi
}

# Where the links of the name $1 end, hop by hop (its folder's links
# resolved at each), in csv_dst; empty when a hop is a descriptor's name
# (/dev/stdout, /dev/fd/N, /proc/*/fd/N: a link into /proc), whose file is
# whoever opened it's, to be written through as it is.  A link to a file
# had been written through too: a write that failed (a full disk) had left
# the file cut short, its old content gone.  Another user's link in a
# sticky folder anyone may write in (/tmp) is not followed: csv_guard
# names it (fs.protected_symlinks refuses it to open, not to readlink, and
# the CSV had replaced the file such a link, planted there, named).
csv_guard=""
csv_resolve() {
    local p=$1 d t hops=0
    while :; do
        # (x: a folder's name may end in a newline, which $(...) drops)
        d=$(readlink -m -- "${p%/*}/" && echo x) || { csv_dst=""; return; }
        d=${d%$'\nx'}
        [[ $d == /proc || $d == /proc/* ]] && { csv_dst=""; return; }
        [ -L "$p" ] && (( hops++ < 40 )) || break
        if [ -k "$d" ] && (( 0$(stat -c %a -- "$d") & 2 )) &&
            [ "$(stat -c %u -- "$p")" != "$(id -u)" ] &&
            [ "$(stat -c %u -- "$p")" != "$(stat -c %u -- "$d")" ]; then
            csv_guard=$p csv_dst=""
            return
        fi
        t=$(readlink -- "$p" && echo x) || { csv_dst=""; return; }
        t=${t%$'\nx'}
        case $t in /*) p=$t ;; *) p=${d%/}/$t ;; esac
    done
    # (a loop: written as given, where the write says so)
    [ ! -L "$p" ] && csv_dst=${d%/}/${p##*/} || csv_dst=""
}
# The CSV's file (-c), relative to where the script was started, is
# checked now, not after all the measuring: a folder, or a place that
# cannot be written, fails here (exit 1, as worldgen's outputs do).  It is
# written to a temporary beside it and renamed into place (a link's
# target: the link stays a link), unless it is a descriptor's name, a
# device or a pipe, which is written through as it is: renamed over,
# /dev/stdout (a link) would have been replaced by a file.
csv_direct=0
if [ -n "$csv" ] && [ "$csv" != - ]; then
    case $csv in /*) ;; *) csv=$here/$csv ;; esac
    csv_resolve "$csv"
    if [ -n "$csv_guard" ]; then
        echo "bench.sh: -c: cannot write '$csv': Permission denied (the symbolic link '$csv_guard' is another user's, in a sticky folder anyone may write in: not followed, as fs.protected_symlinks has it)" >&2
        exit 1
    elif [ -d "$csv" ]; then
        echo "bench.sh: -c: cannot write '$csv': it is a directory" >&2
        exit 1
    elif [ -z "$csv_dst" ] || { [ -e "$csv" ] && [ ! -f "$csv" ]; }; then
        csv_direct=1
        why=$({ : >> "$csv"; } 2>&1) ||
            { echo "bench.sh: -c: cannot write '$csv': ${why##*: }" >&2; exit 1; }
    else
        # A folder that takes new names but lets none be renamed or
        # removed (chattr +a): the temporary had been made, its rename
        # failed after the measuring, and it stayed.
        # (The first line's first field: a name with a newline goes on,
        # and its second line had been read as the flags, 'x\nai' as a
        # and i.)
        case $(lsattr -d -- "${csv_dst%/*}/" 2>/dev/null | sed -n '1s/ .*//p') in
        *[ai]*) echo "bench.sh: -c: cannot write '$csv': its folder is append-only or immutable (lsattr -d; chattr -a -i)" >&2
                exit 1 ;;
        esac
        # Whether a file can be made there, found now: the CSV's own is
        # made when it is written (a temporary kept through the measuring
        # had stayed behind a SIGKILL).  A file replaced keeps its mode,
        # as one written through had.
        csv_temp
        rm -f -- "$csv_tmp"
        csv_tmp=""
    fi
fi
# OpenMP's idle threads wait passively: worldgen's own default
# (openmp_team.c says why); set OMP_WAIT_POLICY to measure another policy.
command -v jq >/dev/null || { echo "bench.sh needs jq (make deps installs it)" >&2; exit 1; }
# The field stages only, no picture, unless -R: then the default picture,
# into a temporary PNG (made below, with the JSON's).
picture=(--no-image)
# Every backend available here, in worldgen's order, unless -b chose; the
# ones that are not available say why.
if [ -z "$backends" ]; then
    probe=$(./worldgen --size 2 --mesh all --no-image -q --json -)
    backends=$(echo "$probe" | jq -r '.backends[].name' | tr '\n' ' ')
    echo "$probe" | jq -r '.skipped[] | "skip     \(.name): \(.reason)"'
fi

# The middle figure, or the mean of the middle two, as many digits as
# worldgen's JSON gives (%.9g): with an even count of runs, %.6f had cut
# the small stages' seconds to one digit or none (a readback of 5e-08 read
# 0.000000) and written the steps as 100.000000 in the CSV.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.9g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The counts of the runs: fixed, or worldgen's defaults for each size.
counts=(--erosion "$erosion" --hydraulic "$steps")
[ "$defaults" = 1 ] && counts=()

# One run's row for backend $1 at size $2: "setup terrain erosion hydraulic
# normals readback total steps passes wall rasterise shade png" (the last
# three 0 without -R), full precision from worldgen's JSON.  The JSON goes to a file and jq reads it after worldgen exits: piped,
# jq's start (about 27 ms of CPU) ran on the same 2 cores as the first
# stages, which take a few ms at 512 (terrain 5.8 ms piped, 3.3 ms not).
# A run that fails, or whose JSON has no timing for the backend, fails
# the benchmark (exit 1; $failed says why, after the row's line ends): the JSON is emptied before each run,
# so no figure of an earlier run can stand in for it.  The row is added to
# $rows, not printed: in a $(...) around the runs, a signal would wait for
# them all to end.
# The JSON's file is made with the signals held off (sigs): mktemp ignores
# them, and the script notes one and exits once $json names the file (for
# cleanup).  A signal to the process group (Ctrl-C, timeout) after mktemp
# had made the file and before it printed the name had killed it: $json
# was empty and the file was left in $TMPDIR.
sig=""
on_signals 'sig=%d'
json=$(trap '' "${sigs[@]}"; mktemp)
[ "$render" = 1 ] && [ -n "$json" ] && png=$(trap '' "${sigs[@]}"; mktemp --suffix=.png)
on_signals 'exit %d'
[ -z "$sig" ] || exit "$sig"
[ -n "$json" ] && { [ "$render" = 0 ] || [ -n "$png" ]; } ||
    { echo "bench.sh: mktemp failed" >&2; exit 1; }
[ "$render" = 1 ] && picture=(--out "$png")
row() {
    local st=0 why r
    : > "$json"
    why=$(./worldgen --size "$2" --octaves "$octaves" "${counts[@]}" --mesh "$1" \
        --json "$json" -q "${picture[@]}" 2>&1 >/dev/null) || st=$?
    if [ "$st" != 0 ]; then
        failed="bench.sh: size $2, $1: worldgen failed (status $st): ${why:-no message}"
        return 1
    fi
    [ -z "$why" ] || echo "$why" >&2 # its warnings
    r=$(jq -r --arg b "$1" '.world.steps as $st | .world.passes as $pa | .wall as $wall |
            (.render.rasterise // 0) as $ra | (.render.shade // 0) as $sh |
            ([.writers[]? | select(.format == "png") | .seconds] | add // 0) as $png |
            .backends[] | select(.name == $b) |
            "\(.setup) \(.terrain) \(.erosion) \(.hydraulic) \(.normals) \(.readback) \(.total) \($st) \($pa) \($wall) \($ra) \($sh) \($png)"' "$json") &&
        [ -n "$r" ] ||
        { failed="bench.sh: size $2, $1: worldgen's JSON has no timing for $1"; return 1; }
    rows+="$r"$'\n'
}

declare -A med
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
if [ "$defaults" = 1 ]; then
    what="the default erosion passes and hydraulic steps of each size"
else
    what="$erosion erosion passes, $steps hydraulic steps"
fi
echo "worldgen $(./worldgen --version | cut -d' ' -f2), $octaves octaves, $what, median of $runs runs"
ncpu=$(nproc)
echo "machine  $cpu, $ncpu CPU$( ((ncpu == 1)) || echo s), OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive, the worldgen default}"
for b in $backends; do
    st=0
    why=$(./worldgen --size 2 --mesh "$b" -q --no-image 2>&1) || st=$?
    if [ "$st" = 2 ]; then # not a backend worldgen knows: a usage error
        echo "bench.sh: -b $b: $why" | head -n 1 >&2
        exit 2
    elif [ "$st" != 0 ]; then
        echo "skip     $b: $why"
        backends=$(echo " $backends " | sed "s/ $b / /")
    fi
done
if [ -z "$(echo $backends)" ]; then
    echo "bench.sh: no backend can run here" >&2
    exit 1
fi
echo
printf "| %6s |" grid
for b in $backends; do printf " %10s |" "$b"; done
echo
printf "|%8s|" "--------"
for b in $backends; do printf "%12s|" "------------"; done
echo
for s in $sizes; do
    printf "| %6s |" "$s"
    for b in $backends; do
        rows=""
        # A run that fails ends the row's line first, then says why: its
        # message had followed the row's first cell on the same line.
        for ((r = 0; r < runs; r++)); do
            row "$b" "$s" || { printf " %10s |\n" failed; echo "$failed" >&2; exit 1; }
        done
        for k in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
            med[$b,$s,$k]=$(printf "%s" "$rows" | awk -v k=$k '{ print $k }' | median)
        done
        printf " %9.5fs |" "${med[$b,$s,7]}"
    done
    echo
done
if [ "$stages" = 1 ]; then
    echo
    echo "per stage (medians, seconds): setup terrain erosion hydraulic normals readback total, wall;"
    echo "and the hydraulic stage in nanoseconds per cell and step"
    [ "$render" = 1 ] &&
        echo "(-R: the wall with the picture, then the render's medians: rasterise, shade, writing the PNG)"
    for s in $sizes; do
        for b in $backends; do
            ns=$(awk -v t="${med[$b,$s,4]}" -v n="$s" -v st="${med[$b,$s,8]}" \
                 'BEGIN { if (st > 0) printf "%.2f", t * 1e9 / (n * n * st); else print "-" }')
            printf "  %6s %-8s %s %s %s %s %s %s %s, wall %s   %s ns/cell-step\n" "$s" "$b" \
                "${med[$b,$s,1]}" "${med[$b,$s,2]}" "${med[$b,$s,3]}" "${med[$b,$s,4]}" \
                "${med[$b,$s,5]}" "${med[$b,$s,6]}" "${med[$b,$s,7]}" "${med[$b,$s,10]}" "$ns"
            [ "$render" = 0 ] ||
                printf "  %6s %-8s render: rasterise %s shade %s png %s\n" "" "" \
                    "${med[$b,$s,11]}" "${med[$b,$s,12]}" "${med[$b,$s,13]}"
        done
    done
fi
if [ "$limits" = 1 ]; then
    echo
    lim=build/limits.txt
    if ! grep -qw avx2 /proc/cpuinfo; then
        echo "limits: not measured: this CPU has no AVX2 (scripts/limits.c measures AVX2)"
    else
        mkdir -p build
        if [ ! -x build/limits ] || [ scripts/limits.c -nt build/limits ] ||
            [ backends/cache.h -nt build/limits ] || [ scripts/out.h -nt build/limits ]; then
            ${CC:-cc} -std=c11 -O3 -mavx2 -fopenmp -ffp-contract=off -o build/limits.tmp.$$ \
                scripts/limits.c && mv build/limits.tmp.$$ build/limits ||
                { rm -f build/limits.tmp.$$; echo "bench.sh: cannot build scripts/limits.c" >&2; exit 1; }
            remeasure=1
        fi
        # The cache holds the CPU it was measured on, its count of CPUs
        # (limits.c's, this process's affinity: taskset, a cpuset) and the
        # load average then.  A cache of another CPU or another count is
        # measured again: taskset -c 0 had set openmp's one thread against
        # the two cores' limits of the cache, with nothing said.  (nproc
        # without OMP_NUM_THREADS, which it honours and limits.c does not.)
        # Said also when limits.c was just built, which measures again
        # anyway: a fresh tree's first -l had not said it.
        cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
        declare -A m
        stale=""
        if [ -s "$lim" ]; then
            while read -r k v; do m[$k]=$v; done < "$lim"
            [ "${m[cpu]-}" = "$cpu" ] && [ "${m[cores]-}" = "$cpus" ] ||
                stale="; the cache was of ${m[cores]:-?} CPUs, ${m[cpu]:-of no recorded model}, this run has $cpus, $cpu"
        fi
        if [ "$remeasure" = 1 ] || [ ! -s "$lim" ] || [ -n "$stale" ]; then
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            { build/limits && printf 'cpu %s\nload %s\n' "$cpu" "$load"; } > "$lim.tmp.$$" &&
                mv "$lim.tmp.$$" "$lim" ||
                { rm -f "$lim.tmp.$$"; echo "bench.sh: build/limits failed" >&2; exit 1; }
            when="measured now, load average $load$stale"
        else
            when="measured $(date -r "$lim" '+%F %T') at load average ${m[load]}, cached in $lim (-L measures again)"
        fi
        unset m
        declare -A m
        while read -r k v; do m[$k]=$v; done < "$lim"
        echo "limits of this machine ($when), one thread / all ${m[cores]} cores:"
        printf "  triad bandwidth GB/s: L2 %s / %s, L3 %s / %s, memory (288 MiB) %s / %s\n" \
            "${m[bw_l2_1]}" "${m[bw_l2_all]}" "${m[bw_l3_1]}" "${m[bw_l3_all]}" \
            "${m[bw_dram_1]}" "${m[bw_dram_all]}"
        printf "  AVX2 G lane-ops/s: add %s / %s, mul %s / %s, min %s / %s, max %s / %s, compare %s / %s,\n" \
            "${m[add_1]}" "${m[add_all]}" "${m[mul_1]}" "${m[mul_all]}" "${m[min_1]}" "${m[min_all]}" \
            "${m[max_1]}" "${m[max_all]}" "${m[cmp_1]}" "${m[cmp_all]}"
        printf "    the mix %s / %s, divide %s / %s, square root %s / %s; gathers %s / %s G lanes/s, quad fetches %s / %s G lanes/s\n" \
            "${m[mix_1]}" "${m[mix_all]}" "${m[div_1]}" "${m[div_all]}" "${m[sqrt_1]}" "${m[sqrt_all]}" \
            "${m[gather_1]}" "${m[gather_all]}" "${m[quad_1]}" "${m[quad_all]}"
        # A CPU with AVX-512 runs the OpenMP kernels' 16-lane builds: its
        # limits are the better of the two widths' rates; but not those of
        # a build without them (make AVX512=0: worldgen's host.vector is
        # then avx2), whose limits are AVX2's.
        wide=""
        vector=$(./worldgen --size 2 --mesh openmp -q --no-image --json - 2>/dev/null |
            jq -r '.host.vector // empty' 2>/dev/null) || vector=""
        if [ -n "${m[avx512_mix_all]:-}" ] && [ "$vector" != avx512 ]; then
            echo "  (AVX-512 is here, but this worldgen's openmp kernels run ${vector:-an unknown width}: the limits are AVX2's)"
        elif [ -n "${m[avx512_mix_all]:-}" ]; then
            printf "  AVX-512 G lane-ops/s: add %s / %s, mul %s / %s, min %s / %s, max %s / %s, compare and select %s / %s,\n" \
                "${m[avx512_add_1]}" "${m[avx512_add_all]}" "${m[avx512_mul_1]}" "${m[avx512_mul_all]}" \
                "${m[avx512_min_1]}" "${m[avx512_min_all]}" "${m[avx512_max_1]}" "${m[avx512_max_all]}" \
                "${m[avx512_cmp_1]}" "${m[avx512_cmp_all]}"
            printf "    the mix %s / %s, divide %s / %s, square root %s / %s\n" \
                "${m[avx512_mix_1]}" "${m[avx512_mix_all]}" "${m[avx512_div_1]}" "${m[avx512_div_all]}" \
                "${m[avx512_sqrt_1]}" "${m[avx512_sqrt_all]}"
            wide=avx512_
        fi
        # The threads openmp runs: worldgen's host.threads (OMP_NUM_THREADS,
        # at most the CPUs it may run on).  With fewer than every core its
        # limits are that many threads': one thread's rate times the count,
        # at most every core's (suffix _t; _1 for one thread).  Every
        # core's limits for a run of OMP_NUM_THREADS=1 had made its ratio
        # look twice as far from the limit as it was.
        omp_threads=$(./worldgen --size 2 --mesh openmp -q --no-image --json - 2>/dev/null |
            jq -r '.host.threads // empty' 2>/dev/null) || omp_threads=""
        case "$omp_threads" in ''|*[!0-9]*) omp_threads="${m[cores]}" ;; esac
        if [ "$omp_threads" -gt 1 ] && [ "$omp_threads" -lt "${m[cores]}" ]; then
            for k in "${!m[@]}"; do
                case "$k" in *_1)
                    [ -n "${m[${k%_1}_all]:-}" ] &&
                        m[${k%_1}_t]=$(awk -v a="${m[$k]}" -v b="${m[${k%_1}_all]}" -v t="$omp_threads" \
                            'BEGIN { r = a * t; print (r < b ? r : b) }') ;;
                esac
            done
        fi
        if [ "$omp_threads" = 1 ]; then
            echo "openmp runs 1 of the ${m[cores]} CPUs (OMP_NUM_THREADS): its limits are one thread's"
        elif [ "$omp_threads" -lt "${m[cores]}" ]; then
            echo "openmp runs $omp_threads of the ${m[cores]} CPUs (OMP_NUM_THREADS): its limits are $omp_threads threads' (one thread's rates times $omp_threads, at most every core's)"
        fi
        # The better of the AVX2 and (where measured) AVX-512 rate of $1.
        best_rate() {
            awk -v a="${m[$1]}" -v b="${m[$wide$1]:-0}" 'BEGIN { print (b > a ? b : a) }'
        }
        echo "work counted from backends/SPEC.md (lane-ops; the reasoning is in scripts/bench.sh):"
        echo "  terrain:   46 ops + 1 quad fetch per cell-octave (the fetch's time added to the ops'), 4 bytes per cell"
        # The erosion's selects: AVX2 blends the compare's result (a
        # select each), AVX-512 writes the compare to a mask under which
        # the subtraction or the sum itself selects: 57 ops, not 73.
        eops=73
        [ -n "$wide" ] && eops=57
        echo "  erosion:   73 ops per cell-pass${wide:+ (on openmp, whose AVX-512 builds fold each select into a masked operation: 57)}, 8 bytes per cell-pass"
        echo "  hydraulic: 319 ops per cell-step, 32 bytes per cell-step"
        echo "  normals:   10 ops + 3 divides + 1 square root per cell, 16 bytes per cell"
        echo "limit = max(ops / mix rate (+ quad fetches / their rate), (divides, roots) / their rates, bytes / bandwidth)${wide:+,
  each rate the better of AVX2's and AVX-512's}"
        for s in $sizes; do
            for b in $backends; do
                sfx=all thr="${m[cores]}"
                [ "$b" = scalar ] && sfx=1 thr=1
                if [ "$b" = openmp ] && [ "$omp_threads" -lt "${m[cores]}" ]; then
                    thr=$omp_threads
                    if [ "$omp_threads" -le 1 ]; then sfx=1; else sfx=t; fi
                fi
                echo
                printf "  %6s %-8s %-9s %11s %11s %8s   %s\n" "$s" "$b" stage measured limit ratio "bound by"
                eop=73
                [ "$b" = openmp ] && eop=$eops
                # stage name, field index, count (octaves, passes, steps, 1),
                # ops, quad fetches, divides, roots, bytes a unit, bytes a
                # cell, fields of the working set
                for st in "terrain 2 $octaves 46 1 0 0 0 4 1" \
                          "erosion 3 ${med[$b,$s,9]} $eop 0 0 0 8 0 2" \
                          "hydraulic 4 ${med[$b,$s,8]} 319 0 0 0 32 0 8" \
                          "normals 5 1 10 0 3 1 0 16 4"; do
                    set -- $st
                    awk -v name="$1" -v t="${med[$b,$s,$2]}" -v cnt="$3" -v ops="$4" -v ga="$5" \
                        -v dv="$6" -v sq="$7" -v bu="$8" -v bc="$9" -v fields="${10}" -v n="$s" \
                        -v mix="$(best_rate mix_$sfx)" -v qr="${m[quad_$sfx]}" -v dr="$(best_rate div_$sfx)" \
                        -v sr="$(best_rate sqrt_$sfx)" -v bl2="${m[bw_l2_$sfx]}" -v bl3="${m[bw_l3_$sfx]}" \
                        -v bdr="${m[bw_dram_$sfx]}" -v l2="${m[l2_bytes]}" -v l3="${m[l3_bytes]}" \
                        -v thr="$thr" '
                    BEGIN {
                        cells = n * n; units = cells * cnt
                        ws = fields * cells * 4
                        if (ws <= l2 * thr) { bw = bl2; lvl = "L2" }
                        else if (ws <= l3) { bw = bl3; lvl = "L3" }
                        else { bw = bdr; lvl = "memory" }
                        to = units * ops / (mix * 1e9); by = "issue"; lim = to
                        if (ga) { lim += units * ga / (qr * 1e9); by = "issue + fetch" }
                        td = units * (dv / (dr * 1e9) + sq / (sr * 1e9))
                        if (td > lim) { lim = td; by = "divide/sqrt" }
                        tb = (units * bu + cells * bc) / (bw * 1e9)
                        if (tb > lim) { lim = tb; by = lvl " bandwidth" }
                        tot_m = 0
                        if (lim > 0)
                            printf "  %6s %-8s %-9s %10.6fs %10.6fs %7.1fx   %s\n", "", "", name, t, lim, t / lim, by
                        else
                            printf "  %6s %-8s %-9s %10.6fs %11s %8s   (no work)\n", "", "", name, t, "0", "-"
                        print lim > "/dev/stderr"
                    }' 2>>"build/limits.sum.$$"
                done
                awk -v t="${med[$b,$s,7]}" -v wall="${med[$b,$s,10]}" -v render="$render" \
                    -v ra="${med[$b,$s,11]}" -v sh="${med[$b,$s,12]}" -v png="${med[$b,$s,13]}" '{ l += $1 }
                    END { printf "  %6s %-8s %-9s %10.6fs %10.6fs %8s   (the stages and the readback)\n", "", "", "total", t, l, (l > 0 ? sprintf("%.1fx", t / l) : "-")
                          if (render) {
                              printf "  %6s %-8s %-9s %10.6fs %11s %8s   (the render: no limit derived)\n", "", "", "rasterise", ra, "", ""
                              printf "  %6s %-8s %-9s %10.6fs %11s %8s\n", "", "", "shade", sh, "", ""
                              printf "  %6s %-8s %-9s %10.6fs %11s %8s   (writing the picture)\n", "", "", "png", png, "", ""
                          }
                          printf "  %6s %-8s %-9s %10.6fs %11s %8s   (the whole run%s: start to the JSON)\n", "", "", "wall", wall, "", "", (render ? " with the picture" : "") }' \
                    "build/limits.sum.$$"
                rm -f "build/limits.sum.$$"
            done
        done
    fi
fi
# The medians as CSV, only when asked for (-c).
# With -R, three columns more: the render's.
write_csv() {
    printf "size,backend,setup,terrain,erosion,hydraulic,normals,readback,total,steps,wall%s\n" \
        "$([ "$render" = 1 ] && echo ,rasterise,shade,png)"
    for s in $sizes; do
        for b in $backends; do
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s" "$s" "$b" "${med[$b,$s,1]}" "${med[$b,$s,2]}" \
                "${med[$b,$s,3]}" "${med[$b,$s,4]}" "${med[$b,$s,5]}" "${med[$b,$s,6]}" \
                "${med[$b,$s,7]}" "${med[$b,$s,8]}" "${med[$b,$s,10]}"
            [ "$render" = 0 ] || printf ",%s,%s,%s" "${med[$b,$s,11]}" "${med[$b,$s,12]}" "${med[$b,$s,13]}"
            printf "\n"
        done
    done
}
# A write that fails (a full disk) says why once, not a printf error a
# line.
csv_failed() {
    echo "bench.sh: -c: cannot write '$csv': $(echo "$1" | head -n 1 | sed 's/.*: //')" >&2
    exit 1
}
if [ "$csv" = - ]; then
    echo
    write_csv
elif [ "$csv_direct" = 1 ]; then
    # Opened here, outside the $(...) that takes the errors: inside it,
    # /dev/stdout (/dev/fd/1, /dev/stderr) had named its pipe, and the CSV
    # had been taken for the error ("cannot write '/dev/stdout': size,...").
    why=''
    { why=$(write_csv 2>&1 >&3) && [ -z "$why" ]; } 3>"$csv" || csv_failed "${why:-write error}"
elif [ -n "$csv" ]; then
    csv_temp
    why=$(write_csv 2>&1 > "$csv_tmp") && [ -z "$why" ] || csv_failed "${why:-write error}"
    why=$(mv -T "$csv_tmp" "$csv_dst" 2>&1) || csv_failed "$why"
    csv_tmp=""
fi

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
# and so is having none that can run here (exit 1).
#
#   scripts/bench.sh                       the default sizes, every backend
#   scripts/bench.sh -s "512 2048" -r 9    chosen sizes, 9 runs each
#   scripts/bench.sh -b scalar -o 6 -e 12  one backend, chosen octaves/erosion
#   scripts/bench.sh -H 400                400 hydraulic steps (default 100)
#   scripts/bench.sh -d                    worldgen's own defaults instead:
#                                          passes and steps scale with size
#   scripts/bench.sh -t                    also the per-stage medians
#   scripts/bench.sh -c bench.csv          also the medians as CSV
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="32 64 96 128 192 512 1024 2048"
runs=5
octaves=6
erosion=12
steps=100
defaults=0
backends=""
stages=0
csv=""
while getopts "s:r:b:o:e:H:dtc:" opt; do
    case $opt in
    s) sizes=$OPTARG ;;
    r) runs=$OPTARG ;;
    b) backends=$OPTARG ;;
    o) octaves=$OPTARG ;;
    e) erosion=$OPTARG ;;
    H) steps=$OPTARG ;;
    d) defaults=1 ;;
    t) stages=1 ;;
    c) csv=$OPTARG ;;
    *) echo "usage: $0 [-s sizes] [-r runs] [-b backends] [-o octaves] [-e passes] [-H steps] [-d] [-t] [-c file.csv]" >&2
       exit 2 ;;
    esac
done
[ -x ./worldgen ] || make -s worldgen
# OpenMP's idle threads wait passively: worldgen's own default (openmp.c says
# why); set OMP_WAIT_POLICY to measure another policy.
command -v jq >/dev/null || { echo "bench.sh needs jq (make deps installs it)" >&2; exit 1; }
# The field stages only: no picture, when this worldgen draws one.
render_off=--no-image
# Every backend available here, in worldgen's order, unless -b chose; the
# ones that are not available say why.
if [ -z "$backends" ]; then
    probe=$(./worldgen --size 2 --mesh all --no-image -q --json -)
    backends=$(echo "$probe" | jq -r '.backends[].name' | tr '\n' ' ')
    echo "$probe" | jq -r '.skipped[] | "skip     \(.name): \(.reason)"'
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The counts of the runs: fixed, or worldgen's defaults for each size.
counts=(--erosion "$erosion" --hydraulic "$steps")
[ "$defaults" = 1 ] && counts=()

# One run's row for backend $1 at size $2: "setup terrain erosion hydraulic
# normals readback total steps", full precision from worldgen's JSON.
row() {
    ./worldgen --size "$2" --octaves "$octaves" "${counts[@]}" --mesh "$1" \
        --json - -q $render_off |
        jq -r --arg b "$1" '.world.steps as $st | .backends[] | select(.name == $b) |
            "\(.setup) \(.terrain) \(.erosion) \(.hydraulic) \(.normals) \(.readback) \(.total) \($st)"'
}

declare -A med
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
if [ "$defaults" = 1 ]; then
    what="the default erosion passes and hydraulic steps of each size"
else
    what="$erosion erosion passes, $steps hydraulic steps"
fi
echo "worldgen $(./worldgen --version | cut -d' ' -f2), $octaves octaves, $what, median of $runs runs"
echo "machine  $cpu, $(nproc) cores, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive, the worldgen default}"
backends=$(echo "$backends" | tr ',' ' ')
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
        rows=$(for ((r = 0; r < runs; r++)); do row "$b" "$s"; done)
        for k in 1 2 3 4 5 6 7 8; do
            med[$b,$s,$k]=$(echo "$rows" | awk -v k=$k '{ print $k }' | median)
        done
        printf " %9.5fs |" "${med[$b,$s,7]}"
    done
    echo
done
if [ "$stages" = 1 ]; then
    echo
    echo "per stage (medians, seconds): setup terrain erosion hydraulic normals readback total;"
    echo "and the hydraulic stage in nanoseconds per cell and step"
    for s in $sizes; do
        for b in $backends; do
            ns=$(awk -v t="${med[$b,$s,4]}" -v n="$s" -v st="${med[$b,$s,8]}" \
                 'BEGIN { if (st > 0) printf "%.2f", t * 1e9 / (n * n * st); else print "-" }')
            printf "  %6s %-8s %s %s %s %s %s %s %s   %s ns/cell-step\n" "$s" "$b" "${med[$b,$s,1]}" \
                "${med[$b,$s,2]}" "${med[$b,$s,3]}" "${med[$b,$s,4]}" "${med[$b,$s,5]}" \
                "${med[$b,$s,6]}" "${med[$b,$s,7]}" "$ns"
        done
    done
fi
# The medians as CSV, only when asked for (-c).
write_csv() {
    printf "size,backend,setup,terrain,erosion,hydraulic,normals,readback,total,steps\n"
    for s in $sizes; do
        for b in $backends; do
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" "$s" "$b" "${med[$b,$s,1]}" "${med[$b,$s,2]}" \
                "${med[$b,$s,3]}" "${med[$b,$s,4]}" "${med[$b,$s,5]}" "${med[$b,$s,6]}" \
                "${med[$b,$s,7]}" "${med[$b,$s,8]}"
        done
    done
}
if [ "$csv" = - ]; then
    echo
    write_csv
elif [ -n "$csv" ]; then
    write_csv > "$csv.tmp.$$" && mv "$csv.tmp.$$" "$csv" || { rm -f "$csv.tmp.$$"; exit 1; }
fi

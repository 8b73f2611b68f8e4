#!/usr/bin/env bash
# resolution.sh: the same options at two resolutions, compared at their
# shared vertices (README, "The same landscape at every resolution").
#
#   scripts/resolution.sh                    513 against 2049, seed 1234
#   scripts/resolution.sh 257 1025 -- --seed 7 --sea-level 0.3
#
# Everything after '--' goes to both runs.  Uses --mesh auto (the fields
# are the same on every backend).
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-513}
big=${2:-2049}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
[ -x ./worldgen ] || make -s worldgen
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/resolution" scripts/resolution.c -lm
run() { ./worldgen --mesh auto -q --no-image "$@"; }
run --size "$small" --erosion 0 --hydraulic 0 --heightmap "$dir/t1.pfm" "$@"
run --size "$small" --heightmap "$dir/h1.pfm" --watermap "$dir/w1.pfm" "$@"
run --size "$big" --heightmap "$dir/h2.pfm" --watermap "$dir/w2.pfm" "$@"
echo "$small against $big, the default passes and steps of each size ${*:+with $*}"
"$dir/resolution" "$dir/t1.pfm" "$dir/h1.pfm" "$dir/w1.pfm" "$dir/h2.pfm" "$dir/w2.pfm"

#!/usr/bin/env bash
# Instructions executed by two vdb builds on each kernel of the benchmark suite
# (sample-kernels/bench/), counted by cachegrind: `vdb run -j 1` (or `vdb run --record -j 1`
# with RECORD=1), A then B, and B's change. A count, unlike a wall time, is the same from one
# run to the next, so a change of a few percent shows on a machine whose timings vary by
# more than that; it is not a speed (memory and branches are not in it): the suite's speed
# is scripts/bench_suite.sh's, side by side with Oclgrind.
#
# Needs valgrind (apt-get install -y valgrind). Valgrind runs no AVX-512 code, and the
# project builds for the CPU it runs on (.cargo/config.toml): build both for AVX2, e.g.
#   RUSTFLAGS="-C target-cpu=x86-64-v3" CARGO_TARGET_DIR=/tmp/v3 cargo build --release
# Usage: [RECORD=1] scripts/bench_instructions.sh VDB_A VDB_B [KERNEL...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 2 ]; then
  echo "usage: [RECORD=1] $0 VDB_A VDB_B [KERNEL...]" >&2
  exit 2
fi
command -v valgrind > /dev/null || { echo "$0: needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
A="$(realpath "$1")"
B="$(realpath "$2")"
shift 2
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
  for d in "$ROOT"/sample-kernels/bench/*/; do
    [ -f "$d/skl.launch.json" ] && kernels+=("$(basename "$d")")
  done
fi
mode=()
[ "${RECORD:-0}" = 1 ] && mode=(--record)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Instructions of `$1 run ... skl.launch.json` in kernel directory $2.
count() {
  local log="$TMP/cachegrind.txt"
  if ! (cd "$2" && valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$1" run "${mode[@]}" skl.launch.json -j 1 --out "$TMP/out" > /dev/null 2> "$log"); then
    echo "$0: $1 failed on $2:" >&2
    tail -5 "$log" >&2
    exit 1
  fi
  grep -E "I +refs:" "$log" | tr -d ',' | awk '{print $NF}'
}

printf '%-16s %12s %12s %8s\n' kernel "A (M instr)" "B (M instr)" change
for k in "${kernels[@]}"; do
  dir="$ROOT/sample-kernels/bench/$k"
  a=$(count "$A" "$dir")
  b=$(count "$B" "$dir")
  awk -v k="$k" -v a="$a" -v b="$b" \
    'BEGIN { printf "%-16s %12.1f %12.1f %+7.1f%%\n", k, a / 1e6, b / 1e6, 100 * (b - a) / a }'
done

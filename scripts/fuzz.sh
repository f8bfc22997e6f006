#!/usr/bin/env bash
# A longer fuzz campaign of the parser and the launch loader (tests/fuzz.rs) in a release build.
#
#   scripts/fuzz.sh [ITERS [SEED [RUNS [TEST_FILTER]]]]
#
# Runs RUNS campaigns (default 1) of ITERS cases per target (default 100000) with seeds SEED,
# SEED+1, ... (default SEED: the current time), both targets in parallel, and stops at the first
# failure: its input is in target/fuzz-failures/ and the panic message gives the replay command.
# TEST_FILTER picks one target: `parser` or `launch_loader`.
#
# Examples: scripts/fuzz.sh                      # 100,000 cases per target, a new seed
#           scripts/fuzz.sh 20000 1 10           # seeds 1..10, 20,000 cases each
#           scripts/fuzz.sh 100000 7 1 parser    # the parser only
# VDB_FUZZ_TIMEOUT_MS (default 2000 in release) sets the per-case time limit. The build keeps
# overflow checks on (as debug builds have them), so an offset that would wrap is a panic here too.
# The campaign's address space is capped at VDB_FUZZ_MEM_GB GiB (default 8): a case that maps
# gigabytes then aborts ("memory allocation of N bytes failed"; the case it was on is in
# target/fuzz-failures/*.cur.*) instead of sending the machine into the OOM killer.
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-100000}
seed=${2:-$(date +%s)}
runs=${3:-1}
filter=${4:-}
build=(--release --config profile.release.overflow-checks=true --test fuzz)
cargo test "${build[@]}" --no-run
for ((i = 0; i < runs; i++)); do
    s=$((seed + i))
    echo "fuzz: seed $s, $iters cases per target"
    (
        ulimit -v $((${VDB_FUZZ_MEM_GB:-8} * 1024 * 1024))
        VDB_FUZZ_ITERS=$iters VDB_FUZZ_SEED=$s cargo test "${build[@]}" -- --nocapture $filter
    )
done

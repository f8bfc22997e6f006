#!/usr/bin/env bash
# The benchmark suite: twelve kernels of the project's own (sample-kernels/bench/, each 5 M
# vISA steps or more on skl) covering float arithmetic and transcendentals, conversions,
# min/max/mad, 64-bit integers, SLM with barriers, atomics, indirect addressing, sub-group
# shuffles, divergent loops, a tiled matrix multiply and double precision. Each is timed side
# by side in one run against Oclgrind running the same OpenCL C on the same inputs: `vdb run`
# (plain), `vdb run --record --stats` (recording, with its bytes per step) and Oclgrind, RUNS
# times each, interleaved; times are whole-process wall times, medians and fastest runs. The outputs of
# vdb and Oclgrind are checked to agree: byte for byte, except fp_transcend and fp_nbody
# (float results of sin/exp/log/pow/rsqrt..., whose precision OpenCL leaves to the
# implementation), which must agree within 1e-4 relative (the table shows the largest
# difference). Prints one table and a PASS/FAIL line per target (issue 29): plain vdb at
# least 25x Oclgrind, recording at least 12x, at most 64 bytes per step, on every kernel.
#
# Needs: cargo, python3, gcc, ocl-icd-opencl-dev, oclgrind
#   apt-get install -y oclgrind ocl-icd-opencl-dev gcc
# Usage: [RUNS=N] [VDB=path] [DEVICE=skl|acm-g10] scripts/bench_suite.sh [KERNEL...]
#   (RUNS: default 3; DEVICE: whose build of the kernels is timed, default skl; acm-g10's has
#   LSC messages and emulated 64-bit multiplies, and no fp64)
# The kernels and their inputs are built by scripts/bench/make_bench_kernels.py (needs ocloc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${RUNS:-3}"

missing=()
command -v oclgrind > /dev/null || missing+=("oclgrind (apt-get install -y oclgrind)")
command -v gcc > /dev/null || missing+=("gcc (apt-get install -y gcc)")
command -v python3 > /dev/null || missing+=("python3")
[ -f /usr/include/CL/cl.h ] || missing+=("OpenCL headers (apt-get install -y ocl-icd-opencl-dev)")
if [ -z "${VDB:-}" ]; then command -v cargo > /dev/null || missing+=("cargo (or set VDB=path/to/vdb)"); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench_suite.sh: missing tools:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 2
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
if ! gcc -O2 -o "$TMP/clrun" "$ROOT/scripts/clrun.c" -lOpenCL 2> "$TMP/gcc.txt"; then
  cat "$TMP/gcc.txt" >&2
  echo "bench_suite.sh: cannot build scripts/clrun.c (needs ocl-icd-opencl-dev: libOpenCL.so and CL/cl.h)" >&2
  exit 2
fi

if [ -z "${VDB:-}" ]; then
  VDB="$ROOT/target/release/vdb"
  # Build only when the binary is missing or older than a source of the workspace.
  if [ ! -x "$VDB" ] || [ -n "$(find "$ROOT/src" "$ROOT/ui" "$ROOT/icd" "$ROOT/compile" "$ROOT/Cargo.toml" "$ROOT/Cargo.lock" \
      -newer "$VDB" -type f \( -name '*.rs' -o -name 'Cargo.*' \) -print -quit)" ]; then
    echo "building vdb (release)..." >&2
    (cd "$ROOT" && cargo build --release -q -p vdb-ui)
  fi
fi

start=$(date +%s)
echo "vdb benchmark suite: $(date -u '+%Y-%m-%d %H:%M UTC'), nproc=$(nproc), runs=$RUNS (each tool; interleaved)"
echo "vdb: $VDB (commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$( [ -n "$(git -C "$ROOT" status --porcelain -- src ui 2>/dev/null)" ] && echo ', with uncommitted changes in src/ or ui/'); built $(date -u -r "$VDB" '+%H:%M UTC'))"
echo "oclgrind: $(oclgrind --version 2>/dev/null | grep -m1 -i oclgrind || echo '?'); device: ${DEVICE:-skl}; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "times: whole-process wall time in ms; x plain / x rec: oclgrind median / vdb median;"
echo "ocl krn: Oclgrind's kernel alone (enqueue to finish, median), for scale: its build and setup are the rest"
set +e
python3 "$ROOT/scripts/bench/suite.py" "$VDB" "$TMP/clrun" "$TMP" "$RUNS" "$@"
status=$?
set -e
echo "total time of the suite: $(( $(date +%s) - start )) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status

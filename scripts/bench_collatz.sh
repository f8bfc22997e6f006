#!/usr/bin/env bash
# Collatz trip counts over 65,536 work-items: vdb (plain and recording) against Oclgrind on the
# same OpenCL kernel and inputs, side by side, with pocl as the native floor. Prints the
# figures and the speed ratios, and checks that all three agree on the output bytes.
#
# Needs: cargo, python3, gcc, ocl-icd-opencl-dev, oclgrind, pocl-opencl-icd
#   apt-get install -y oclgrind pocl-opencl-icd ocl-icd-opencl-dev gcc
# Usage: [RUNS=N] scripts/bench_collatz.sh [DEVICE]   (DEVICE: skl (default), tgllp or acm-g10;
#        RUNS: runs of each tool, default 3)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEVICE="${1:-skl}"
N=65536
LOCAL=64
SRC="$ROOT/sample-kernels/opencl/collatz"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'; }

mkdir -p "$TMP/in" "$TMP/$DEVICE"
python3 - "$TMP/in/in.bin" "$N" <<'PY'
import random, struct, sys
rng = random.Random(65536)
n = int(sys.argv[2])
open(sys.argv[1], "wb").write(struct.pack("<%dI" % n, *[rng.randint(1, 100000) for _ in range(n)]))
PY
cp "$SRC/$DEVICE/"* "$TMP/$DEVICE/"
KERNEL=$(cd "$TMP" && ls "$DEVICE"/*.visaasm)
cat > "$TMP/launch.json" <<JSON
{ "kernel": "$KERNEL", "zebin": "$DEVICE/collatz.zebin",
  "global_size": [$N, 1, 1], "local_size": [$LOCAL, 1, 1], "global_offset": [0, 0, 0],
  "args": [ { "index": 0, "buffer": "in/in.bin" },
            { "index": 1, "size": $((N * 4)), "output": "out/steps.bin" } ] }
JSON

(cd "$ROOT" && cargo build --release -q -p vdb-ui)
VDB="$ROOT/target/release/vdb"
gcc -O2 -o "$TMP/clrun" "$ROOT/scripts/clrun.c" -lOpenCL

CLARGS=("$SRC/../src/collatz.cl" collatz --global "$N" --local "$LOCAL" --options "-cl-std=CL1.2"
        --buf "$TMP/in/in.bin")
run_vdb() { "$VDB" run "$TMP/launch.json" --out "$TMP/vdb" --stats | tail -1 > "$TMP/vdb.stats"; }
run_rec() { "$VDB" run "$TMP/launch.json" --out "$TMP/vdbrec" --stats --record | tail -1 > "$TMP/vdbrec.stats"; }
run_oclgrind() { oclgrind "$TMP/clrun" "${CLARGS[@]}" --zero "$((N * 4)):$TMP/oclgrind.bin" > /dev/null; }
run_pocl() { CLRUN_PLATFORM=Portable "$TMP/clrun" "${CLARGS[@]}" --zero "$((N * 4)):$TMP/pocl.bin" > /dev/null; }

# Each tool runs RUNS times, the four interleaved so that a slow spell of the machine hits
# them alike; the figures are the median and the fastest run of each, in wall time and in
# CPU time (user + system, all threads: steadier than wall time on a shared machine).
RUNS="${RUNS:-3}"
declare -A TIMES CPU
TIMEFORMAT='%3U %3S'
for _ in $(seq "$RUNS"); do
  for tool in vdb rec oclgrind pocl; do
    t0=$(ms); { time "run_$tool" 2> "$TMP/stderr.txt"; } 2> "$TMP/time.txt"; t1=$(ms)
    TIMES[$tool]+="$(python3 -c "print(round($t1 - $t0, 1))") "
    read -r user sys < <(tail -1 "$TMP/time.txt")
    CPU[$tool]+="$(python3 -c "print(round(($user + $sys) * 1000, 1))") "
  done
done
cat "$TMP/vdb.stats" "$TMP/vdbrec.stats"

cmp "$TMP/vdb/out/steps.bin" "$TMP/pocl.bin" && cmp "$TMP/vdbrec/out/steps.bin" "$TMP/pocl.bin" \
  && cmp "$TMP/oclgrind.bin" "$TMP/pocl.bin" && echo "outputs: vdb, vdb --record, oclgrind and pocl agree"
echo
echo "work-items=$N device=$DEVICE runs=$RUNS (each whole process: median, fastest)"
python3 - "${TIMES[vdb]}" "${TIMES[rec]}" "${TIMES[oclgrind]}" "${TIMES[pocl]}" \
  "${CPU[vdb]}" "${CPU[rec]}" "${CPU[oclgrind]}" "${CPU[pocl]}" <<'PY'
import statistics, sys
names = ["vdb", "vdb_record", "oclgrind", "pocl"]
for what, args in (("wall", sys.argv[1:5]), ("cpu", sys.argv[5:9])):
    runs = {n: [float(x) for x in a.split()] for n, a in zip(names, args)}
    med = {n: statistics.median(v) for n, v in runs.items()}
    low = {n: min(v) for n, v in runs.items()}
    print("%s time, ms:" % what)
    for n in names:
        print("  %-10s median %8.1f  fastest %8.1f  all %s" % (n, med[n], low[n], runs[n]))
    for n in ["vdb", "vdb_record"]:
        print("  speedup vs oclgrind (%s): %-10s %.1fx (medians), %.1fx (fastest runs)"
              % (what, n, med["oclgrind"] / med[n], low["oclgrind"] / low[n]))
PY

#!/usr/bin/env bash
# Collatz trip counts over 65,536 work-items: vdb (plain and recording) against Oclgrind on the
# same OpenCL kernel and inputs, side by side, with pocl as the native floor. Prints the
# figures and the speed ratios, and checks that all three agree on the output bytes.
#
# Needs: cargo, python3, gcc, ocl-icd-opencl-dev, oclgrind, pocl-opencl-icd
#   apt-get install -y oclgrind pocl-opencl-icd ocl-icd-opencl-dev gcc
# Usage: scripts/bench_collatz.sh [DEVICE]   (DEVICE: skl (default), tgllp or acm-g10)
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

echo "== vdb run (no recording)"
t0=$(ms); "$VDB" run "$TMP/launch.json" --out "$TMP/vdb" --stats | tail -1 | tee "$TMP/vdb.stats"; t1=$(ms)
VDB_MS=$(python3 -c "print(round($t1 - $t0, 1))")
echo "== vdb run --record (recording every write)"
t0=$(ms); "$VDB" run "$TMP/launch.json" --out "$TMP/vdbrec" --stats --record | tail -1 | tee "$TMP/vdbrec.stats"; t1=$(ms)
REC_MS=$(python3 -c "print(round($t1 - $t0, 1))")

CLARGS=("$SRC/../src/collatz.cl" collatz --global "$N" --local "$LOCAL" --options "-cl-std=CL1.2"
        --buf "$TMP/in/in.bin" --zero "$((N * 4))")
echo "== oclgrind"
t0=$(ms); oclgrind "$TMP/clrun" "${CLARGS[@]:0:8}" --buf "$TMP/in/in.bin" --zero "$((N * 4)):$TMP/oclgrind.bin"; t1=$(ms)
OCLGRIND_MS=$(python3 -c "print(round($t1 - $t0, 1))")
echo "== pocl"
t0=$(ms); CLRUN_PLATFORM=Portable "$TMP/clrun" "${CLARGS[@]:0:8}" --buf "$TMP/in/in.bin" --zero "$((N * 4)):$TMP/pocl.bin"; t1=$(ms)
POCL_MS=$(python3 -c "print(round($t1 - $t0, 1))")

cmp "$TMP/vdb/out/steps.bin" "$TMP/pocl.bin" && cmp "$TMP/vdbrec/out/steps.bin" "$TMP/pocl.bin" \
  && cmp "$TMP/oclgrind.bin" "$TMP/pocl.bin" && echo "outputs: vdb, vdb --record, oclgrind and pocl agree"
echo
echo "work-items=$N device=$DEVICE (wall time of each whole process, ms)"
echo "vdb=$VDB_MS vdb_record=$REC_MS oclgrind=$OCLGRIND_MS pocl=$POCL_MS"
python3 -c "print('speedup vs oclgrind: vdb %.1fx, vdb recording %.1fx' % ($OCLGRIND_MS / $VDB_MS, $OCLGRIND_MS / $REC_MS))"

#!/usr/bin/env bash
# Time travel on a large recording: records the 65,536-work-item Collatz launch (about ten
# million steps), then times goto to random steps, single reverse steps (from the end, and
# the first one after each of many gotos) and last-write
# queries (vdb bench-record), and key presses with a full-screen render (vdb bench-render).
# Prints one JSON line each. Needs cargo and python3.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
N=65536
python3 - "$TMP/in.bin" "$N" <<'PY'
import random, struct, sys
rng = random.Random(65536)
n = int(sys.argv[2])
open(sys.argv[1], "wb").write(struct.pack("<%dI" % n, *[rng.randint(1, 100000) for _ in range(n)]))
PY
mkdir -p "$TMP/skl" && cp "$ROOT/sample-kernels/opencl/collatz/skl/"* "$TMP/skl/"
cat > "$TMP/launch.json" <<JSON
{ "kernel": "skl/collatz.simd16.visaasm", "zebin": "skl/collatz.zebin",
  "global_size": [$N, 1, 1], "local_size": [64, 1, 1],
  "args": [ { "index": 0, "buffer": "in.bin" }, { "index": 1, "size": $((N * 4)), "output": "out/steps.bin" } ] }
JSON
(cd "$ROOT" && cargo build --release -q -p vdb-ui)
echo "== recording, goto, reverse step, last-write"
"$ROOT/target/release/vdb" bench-record "$TMP/launch.json"
echo "== key press (update + full render, 160x50) on the same recording"
"$ROOT/target/release/vdb" bench-render "$TMP/launch.json"

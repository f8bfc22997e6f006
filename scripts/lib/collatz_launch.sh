# Sourced by the benchmarks: make_collatz_launch DIR N writes DIR/launch.json, the Collatz
# sample (skl, SIMD16) over N work-items in groups of 64, with N random starts from 1 to
# 100000 (the same for the same N) in DIR/in.bin and its output in DIR/out/steps.bin.
make_collatz_launch() {
  local dir="$1" n="$2" root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  python3 - "$dir/in.bin" "$n" <<'PY'
import random, struct, sys
n = int(sys.argv[2])
rng = random.Random(n)
open(sys.argv[1], "wb").write(struct.pack("<%dI" % n, *[rng.randint(1, 100000) for _ in range(n)]))
PY
  mkdir -p "$dir/skl" && cp "$root/sample-kernels/opencl/collatz/skl/"* "$dir/skl/"
  cat > "$dir/launch.json" <<JSON
{ "kernel": "skl/collatz.simd16.visaasm", "zebin": "skl/collatz.zebin",
  "global_size": [$n, 1, 1], "local_size": [64, 1, 1],
  "args": [ { "index": 0, "buffer": "in.bin" }, { "index": 1, "size": $((n * 4)), "output": "out/steps.bin" } ] }
JSON
}

#!/usr/bin/env bash
# What stops cost: on the 65,536-work-item Collatz launch (about ten million steps), `continue`
# from step 0 to the end in `vdb batch` plain, past a watchpoint on the last output word whose
# value condition never holds, and past a breakpoint in the loop whose condition never holds
# (issue 29: at most 1.3x plain); and the race check (`vdb run --check races`) against the
# recording (`vdb run --record`) of the same launch (issue 30: at most 2x). Each command runs
# RUNS times, the commands interleaved; figures are whole-process wall times (median, fastest).
# Needs cargo and python3. Usage: [RUNS=N] scripts/bench_stops.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${RUNS:-5}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
N=65536
. "$ROOT/scripts/lib/collatz_launch.sh"
make_collatz_launch "$TMP" "$N"
printf 'continue\n' > "$TMP/plain.vdb"
# The last output word is written once, by the last work-item; its value is never 123456789.
printf 'watch arg1+%d 4 if == 123456789\ncontinue\n' $((N * 4 - 4)) > "$TMP/watch.vdb"
# `$22` is in the loop (every iteration of every thread); V0060 never holds 123456789.
printf 'break $22 if V0060 == 123456789\ncontinue\n' > "$TMP/break.vdb"
(cd "$ROOT" && cargo build --release -q -p vdb-ui)
VDB="$ROOT/target/release/vdb"
echo "vdb stops benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), nproc=$(nproc), runs=$RUNS, commit $(git -C "$ROOT" rev-parse --short HEAD)"
python3 - "$VDB" "$TMP" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
vdb, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
launch = tmp + "/launch.json"
cmds = {
    "continue": [vdb, "batch", "--script", tmp + "/plain.vdb", launch],
    "continue, watchpoint": [vdb, "batch", "--script", tmp + "/watch.vdb", launch],
    "continue, conditional break": [vdb, "batch", "--script", tmp + "/break.vdb", launch],
    "run --record": [vdb, "run", "--record", "--out", tmp + "/o", launch],
    "run --check races": [vdb, "run", "--check", "races", launch],
}
times = {k: [] for k in cmds}
for _ in range(runs):
    for name, cmd in cmds.items():
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        times[name].append((time.perf_counter() - t) * 1000)
        if out.returncode != 0 or ("continue" in name and "end of the run" not in out.stdout):
            sys.exit("%s failed (%d):\n%s%s" % (name, out.returncode, out.stdout, out.stderr))
med = {k: statistics.median(v) for k, v in times.items()}
for name in cmds:
    print("%-30s %8.0f ms median (fastest %6.0f)" % (name, med[name], min(times[name])))
def ratio(a, b, target, what):
    r = med[a] / med[b]
    print("%-5s %s: %.2fx (target at most %.1fx)" % ("PASS" if r <= target else "FAIL", what, r, target))
ratio("continue, watchpoint", "continue", 1.3, "continue past a watchpoint / plain continue")
ratio("continue, conditional break", "continue", 1.3, "continue past a conditional breakpoint / plain continue")
ratio("run --check races", "run --record", 2.0, "race check / recording")
PY

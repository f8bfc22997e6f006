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
. "$ROOT/scripts/lib/collatz_launch.sh"
make_collatz_launch "$TMP" "$N"
(cd "$ROOT" && cargo build --release -q -p vdb-ui)
echo "== recording, goto, reverse step, last-write"
"$ROOT/target/release/vdb" bench-record "$TMP/launch.json"
echo "== key press (update + full render, 160x50) on the same recording"
"$ROOT/target/release/vdb" bench-render "$TMP/launch.json"

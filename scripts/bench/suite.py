#!/usr/bin/env python3
"""The timing loop of scripts/bench_suite.sh (run that, not this).

For each kernel of sample-kernels/bench/ it runs, RUNS times and interleaved so that a slow
spell of the machine hits all three alike: (a) `vdb run LAUNCH` (plain), (b) `vdb run LAUNCH
--record --stats` (recording; steps and bytes per step from the stats line), (c) Oclgrind
running the same OpenCL C on the same inputs through scripts/clrun.c. Each figure is the wall
time of the whole process. It then checks that the outputs of both vdb runs and of Oclgrind
agree (by the kernel's bench.json rule) and prints the table and the verdicts.

Usage: suite.py VDB CLRUN TMPDIR RUNS [NAME...]
"""
import json, os, resource, statistics, struct, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "sample-kernels", "bench")
# The device whose build is timed (each kernel's DEVICE.launch.json): skl, or acm-g10.
DEVICE = os.environ.get("DEVICE", "skl")
TARGET_PLAIN, TARGET_RECORD, TARGET_BYTES = 25.0, 12.0, 64.0


def timed(cmd, stdout_path):
    """Runs cmd to the end; returns (wall ms, CPU ms of the child: user + system, its stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(stdout_path, "w") as out:
        r = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("failed (exit %d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-4000:]))
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return wall, cpu, r.stderr


def dims(v):
    return ",".join(str(x) for x in v)


def clrun_args(name, kdir, launch, ocl_out):
    """The clrun command line for the launch: same source, sizes, inputs; outputs to ocl_out."""
    bench = json.load(open(os.path.join(kdir, "bench.json")))
    args = [os.path.join(kdir, name + ".cl"), name, "--global", dims(launch["global_size"]),
            "--local", dims(launch["local_size"]), "--offset", dims(launch["global_offset"]),
            "--options", bench["oclgrind_options"]]
    outputs = {}
    for i, a in enumerate(sorted(launch["args"], key=lambda a: a["index"])):
        if a["index"] != i:
            sys.exit("%s: launch arguments must be numbered 0.. without gaps" % name)
        out = None
        if "output" in a:
            out = os.path.join(ocl_out, a["output"])
            outputs[a["output"]] = out
        if "buffer" in a:
            spec = os.path.join(kdir, a["buffer"])
            args += ["--buf", spec + (":" + out if out else "")]
        elif "scalar" in a:
            args += ["--scalar", os.path.join(kdir, a["scalar"])]
        elif "size" in a:
            args += ["--zero", str(a["size"]) + (":" + out if out else "")]
        else:
            sys.exit("%s: argument %d: not supported by the suite: %s" % (name, i, a))
    return args, outputs, bench["compare"]


def compare(rule, a, b):
    """(agree, note) for two output files under rule."""
    if len(a) != len(b):
        return False, "sizes %d and %d" % (len(a), len(b))
    if rule == "exact":
        if a == b:
            return True, "exact"
        words = [i for i in range(0, len(a), 4) if a[i:i + 4] != b[i:i + 4]]
        return False, "%d of %d words differ, first at byte %d" % (len(words), len(a) // 4, words[0])
    n = len(a) // 4
    fa, fb = struct.unpack("<%df" % n, a), struct.unpack("<%df" % n, b)
    used, worst, same, bad, first = 0.0, 0.0, 0, 0, None
    for i, (x, y) in enumerate(zip(fa, fb)):
        if x != x or y != y:
            ok = x != x and y != y
        else:
            diff = abs(x - y)
            tolerance = rule["f32_abs"] + rule["f32_rel"] * max(abs(x), abs(y))
            ok = diff <= tolerance
            used = max(used, diff / tolerance)
            if diff > 0 and max(abs(x), abs(y)) >= 1e-3:
                worst = max(worst, diff / max(abs(x), abs(y)))
        same += a[4 * i:4 * i + 4] == b[4 * i:4 * i + 4]
        if not ok:
            bad += 1
            first = i if first is None else first
    if bad:
        return False, "%d of %d floats outside the tolerance, first [%d]: %r vs %r" % (bad, n, first, fa[first], fb[first])
    if same == n:
        return True, "all %d floats bit-equal" % n
    return True, ("%d of %d floats bit-equal, the others within %g + %g*|x| (largest difference: %.2g%% of that; "
                  "largest relative difference where |x| >= 1e-3: %.1e)" % (same, n, rule["f32_abs"], rule["f32_rel"], 100 * used, worst))


def main():
    vdb, clrun, tmp, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    names = sys.argv[5:] or sorted(d for d in os.listdir(BENCH) if os.path.isfile(os.path.join(BENCH, d, "bench.json")))
    built = [n for n in names if os.path.isfile(os.path.join(BENCH, n, DEVICE + ".launch.json"))]
    if not built:
        sys.exit("no kernel is built for %s (scripts/bench/make_bench_kernels.py builds them)" % DEVICE)
    for n in names:
        if n not in built:
            print("  %s: not built for %s, left out" % (n, DEVICE), flush=True)
    names = built
    rows, problems, said = [], [], set()
    for name in names:
        kdir = os.path.join(BENCH, name)
        launch_path = os.path.join(kdir, DEVICE + ".launch.json")
        launch = json.load(open(launch_path))
        work = os.path.join(tmp, name)
        ocl_out = os.path.join(work, "oclgrind")
        for sub in ("out",):
            os.makedirs(os.path.join(ocl_out, sub), exist_ok=True)
        cl_args, outputs, rules = clrun_args(name, kdir, launch, ocl_out)
        cmds = {
            "plain": [vdb, "run", launch_path, "--out", os.path.join(work, "plain")],
            "record": [vdb, "run", launch_path, "--out", os.path.join(work, "record"), "--record", "--stats"],
            "oclgrind": ["oclgrind", clrun] + cl_args,
        }
        wall = {k: [] for k in cmds}
        cpu = {k: [] for k in cmds}
        ocl_kernel = []  # Oclgrind's enqueue-to-finish time, as clrun prints it (no build, no setup)
        for _ in range(runs):
            for tool, cmd in cmds.items():
                w, c, err = timed(cmd, os.path.join(work, tool + ".stdout"))
                if err.strip() and (tool, err) not in said:
                    said.add((tool, err))
                    print("  %s: %s wrote to stderr:\n%s" % (name, tool, err.rstrip()[-2000:]), file=sys.stderr, flush=True)
                wall[tool].append(w)
                cpu[tool].append(c)
                if tool == "oclgrind":
                    ocl_kernel.extend(float(l.split("=")[1]) for l in open(os.path.join(work, tool + ".stdout"))
                                      if l.startswith("kernel_ms="))
        stats = json.loads(open(os.path.join(work, "record.stdout")).read().strip().splitlines()[-1])
        agree, notes = True, []
        for output, ocl_file in outputs.items():
            aname = os.path.splitext(os.path.basename(output))[0]
            ref = open(ocl_file, "rb").read()
            for tool in ("plain", "record"):
                ok, note = compare(rules[aname], open(os.path.join(work, tool, output), "rb").read(), ref)
                agree &= ok
                if not ok:
                    problems.append("%s: %s (vdb %s) and Oclgrind differ: %s" % (name, aname, tool, note))
                elif tool == "plain" and note != "exact":
                    notes.append("%s %s" % (aname, note))
        med = {k: statistics.median(v) for k, v in wall.items()}
        low = {k: min(v) for k, v in wall.items()}
        rows.append({"name": name, "steps": stats["steps"], "med": med, "low": low, "bps": stats["bytes_per_step"],
                     "cpu": {k: statistics.median(v) for k, v in cpu.items()}, "notes": notes,
                     "ocl_kernel": statistics.median(ocl_kernel),
                     "agree": ("NO" if not agree else "yes, within tolerance" if notes else "yes, byte-equal")})
        print("  %-15s done: plain %.0f ms, record %.0f ms, oclgrind %.0f ms" % (name, med["plain"], med["record"], med["oclgrind"]),
              file=sys.stderr, flush=True)

    print()
    print("%-15s %6s  %15s  %15s  %17s  %7s  %7s  %6s  %7s  %s" % (
        "kernel", "Msteps", "vdb plain ms", "vdb record ms", "oclgrind ms", "x plain", "x rec", "B/step", "ocl krn", "outputs agree"))
    print("%-15s %6s  %15s  %15s  %17s  %7s  %7s  %6s  %7s" % ("", "", "median (min)", "median (min)", "median (min)", "(med)", "(med)", "", "ms"))
    for r in rows:
        m, l = r["med"], r["low"]
        r["x_plain"] = m["oclgrind"] / m["plain"]
        r["x_rec"] = m["oclgrind"] / m["record"]
        r["x_plain_min"] = l["oclgrind"] / l["plain"]
        r["x_rec_min"] = l["oclgrind"] / l["record"]
        print("%-15s %6.2f  %6.0f (%6.0f)  %6.0f (%6.0f)  %7.0f (%7.0f)  %6.1fx  %6.1fx  %6.1f  %7.0f  %s" % (
            r["name"], r["steps"] / 1e6, m["plain"], l["plain"], m["record"], l["record"], m["oclgrind"], l["oclgrind"],
            r["x_plain"], r["x_rec"], r["bps"], r["ocl_kernel"], r["agree"]))
    for r in rows:
        for note in r["notes"]:
            print("  %s: %s" % (r["name"], note))
    print()
    xp = [r["x_plain"] for r in rows]
    xr = [r["x_rec"] for r in rows]
    bps = [r["bps"] for r in rows]
    worst = lambda key: min(rows, key=lambda r: r[key])
    print("oclgrind/vdb plain : worst %.1fx (%s), median %.1fx; from fastest runs: worst %.1fx, median %.1fx" % (
        min(xp), worst("x_plain")["name"], statistics.median(xp), min(r["x_plain_min"] for r in rows),
        statistics.median(r["x_plain_min"] for r in rows)))
    print("oclgrind/vdb record: worst %.1fx (%s), median %.1fx; from fastest runs: worst %.1fx, median %.1fx" % (
        min(xr), worst("x_rec")["name"], statistics.median(xr), min(r["x_rec_min"] for r in rows),
        statistics.median(r["x_rec_min"] for r in rows)))
    print("bytes/step         : worst %.1f (%s), median %.1f" % (max(bps), max(rows, key=lambda r: r["bps"])["name"], statistics.median(bps)))
    print("CPU time (user+sys, median) oclgrind/vdb: plain worst %.1fx median %.1fx; record worst %.1fx median %.1fx" % (
        min(r["cpu"]["oclgrind"] / r["cpu"]["plain"] for r in rows), statistics.median(r["cpu"]["oclgrind"] / r["cpu"]["plain"] for r in rows),
        min(r["cpu"]["oclgrind"] / r["cpu"]["record"] for r in rows), statistics.median(r["cpu"]["oclgrind"] / r["cpu"]["record"] for r in rows)))
    print()
    everything = sorted(d for d in os.listdir(BENCH) if os.path.isfile(os.path.join(BENCH, d, DEVICE + ".launch.json")))
    if len(rows) < len(everything):
        print("partial run: %d of the %d kernels built for %s; the targets are for the whole suite" % (len(rows), len(everything), DEVICE))
    verdict = lambda ok: "PASS" if ok else "FAIL"
    print("%s  plain vdb run >= %.0fx Oclgrind on every kernel (worst %.1fx, median wall times)" % (verdict(min(xp) >= TARGET_PLAIN), TARGET_PLAIN, min(xp)))
    print("%s  recording >= %.0fx Oclgrind on every kernel (worst %.1fx, median wall times)" % (verdict(min(xr) >= TARGET_RECORD), TARGET_RECORD, min(xr)))
    print("%s  <= %.0f bytes per step on every kernel (worst %.1f)" % (verdict(max(bps) <= TARGET_BYTES), TARGET_BYTES, max(bps)))
    print("%s  >= 5 M steps on every kernel (fewest %.2f M)" % (verdict(min(r["steps"] for r in rows) >= 5e6), min(r["steps"] for r in rows) / 1e6))
    print("%s  vdb and Oclgrind outputs agree on every kernel" % verdict(not problems))
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

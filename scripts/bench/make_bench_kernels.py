#!/usr/bin/env python3
"""Builds sample-kernels/bench/: the benchmark suite of scripts/bench_suite.sh.

For each kernel sample-kernels/bench/NAME/NAME.cl this compiles the OpenCL C with Intel's
ocloc for skl and acm-g10 (vISA text + zebin, into NAME/DEVICE/), writes its inputs (from a
fixed seed) under NAME/in/, its launch files NAME/DEVICE.launch.json, and NAME/bench.json:
how Oclgrind builds the same source (options) and how the outputs of vdb and Oclgrind are
compared ("exact": byte for byte; {"f32_rel": R, "f32_abs": A}: float32 values each within
A + R * |value|).

Needs ocloc (intel-opencl-icd, libigc-tools). The outputs are committed, so running the
suite needs only vdb, Oclgrind, gcc and ocl-icd-opencl-dev.
Usage: scripts/bench/make_bench_kernels.py [NAME...]
"""
import json, os, random, shutil, struct, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from ocloc_dump import compile_device, write_launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "sample-kernels", "bench")
# skl is what the suite times by default; acm-g10 (DG2) compiles the same sources to other code
# (LSC messages, 64-bit integer multiplies emulated with addc and madw): `DEVICE=acm-g10
# scripts/bench_suite.sh`. It has no double precision, so fp64 is built for skl alone.
DEVICES = ("skl", "acm-g10")
NO_FP64 = ("acm-g10",)
NEEDS_FP64 = ("fp64",)
OCLOC_OPTS = "-cl-std=CL2.0 -cl-intel-greater-than-4GB-buffer-required"
OCLGRIND_OPTS = "-cl-std=CL1.2"

def pack(fmt, values):
    return struct.pack("<%d%s" % (len(values), fmt), *values)

def kernels(rng):
    """Per kernel: (global, local, args, oclgrind options). An arg is (kind, name, data, compare):
    kind "buffer" (data: initial bytes), "size" (data: byte size, zero-filled) or "scalar"
    (data: the bytes); compare None for inputs, else the rule for that output."""
    close = {"f32_rel": 1e-4, "f32_abs": 1e-5}
    i32 = lambda v: pack("i", [v])
    # Sizes: each kernel 5.5-7 M vISA steps on skl.
    n_tr, n_body, n_conv, n_col, n_hash = 2048, 2304, 4096, 12288, 4096
    n_slm, n_hist, per_item, n_ind, n_sg, chunks, n_div, n_mm = 8192, 4096, 16, 4096, 4096, 224, 2048, 272
    n_f64 = 4096
    bodies = []
    for _ in range(n_body):
        bodies += [rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(0.5, 2.0)]
    return {
        "fp_transcend": (n_tr, 64, [("buffer", "start", pack("f", [rng.uniform(0, 4) for _ in range(n_tr)]), None),
                                    ("size", "out", 12 * n_tr, close), ("scalar", "iters", i32(144), None)], OCLGRIND_OPTS),
        "fp_nbody": (n_body, 64, [("buffer", "pos", pack("f", bodies), None),
                                  ("buffer", "vel", pack("f", [rng.uniform(-1, 1) for _ in range(3 * n_body)]), None),
                                  ("size", "out", 24 * n_body, close), ("scalar", "n", i32(n_body), None)], OCLGRIND_OPTS),
        "convert": (n_conv, 64, [("buffer", "seeds", pack("I", [rng.getrandbits(32) for _ in range(n_conv)]), None),
                                 ("size", "out", 16 * n_conv, "exact"), ("scalar", "iters", i32(320), None)], OCLGRIND_OPTS),
        "minmax_collatz": (n_col, 64, [("buffer", "starts", pack("I", [rng.randint(1, 100000) for _ in range(n_col)]), None),
                                       ("size", "out", 20 * n_col, "exact"), ("size", "outf", 12 * n_col, "exact")], OCLGRIND_OPTS),
        "hash64": (n_hash, 64, [("buffer", "keys", pack("Q", [rng.getrandbits(64) for _ in range(n_hash)]), None),
                                ("size", "out", 24 * n_hash, "exact"), ("scalar", "rounds", i32(192), None)], OCLGRIND_OPTS),
        "slm_reduce": (n_slm, 128, [("buffer", "in", pack("i", [rng.randint(-2**31, 2**31 - 1) for _ in range(n_slm)]), None),
                                    ("size", "out", 12 * (n_slm // 128), "exact"), ("scalar", "rounds", i32(224), None)], OCLGRIND_OPTS),
        "histogram": (n_hist, 64, [("buffer", "data", pack("I", [rng.getrandbits(32) for _ in range(n_hist * per_item)]), None),
                                   ("size", "hist", 1024, "exact"),
                                   ("buffer", "stats", pack("I", [0, 0xffffffff, 0, 0]), "exact"),
                                   ("scalar", "per_item", i32(per_item), None), ("scalar", "passes", i32(64), None)], OCLGRIND_OPTS),
        "indirect": (n_ind, 64, [("buffer", "in", pack("I", [rng.getrandbits(32) for _ in range(n_ind)]), None),
                                 ("size", "out", 68 * n_ind, "exact"), ("scalar", "rounds", i32(240), None)], OCLGRIND_OPTS),
        "sg_shuffle": (n_sg, 16, [("buffer", "in", pack("i", [rng.randint(-10**6, 10**6) for _ in range(n_sg * 32)]), None),
                                  ("size", "out", 8 * n_sg, "exact"), ("scalar", "chunks", i32(chunks), None)],
                       OCLGRIND_OPTS + " -DNO_SUBGROUPS"),
        "divergent": (n_div, 64, [("buffer", "in", pack("I", [rng.getrandbits(32) for _ in range(n_div)]), None),
                                  ("size", "out", 12 * n_div, "exact")], OCLGRIND_OPTS),
        "matmul_tiled": ((n_mm, n_mm), (16, 16), [("buffer", "a", pack("i", [rng.randint(-100, 100) for _ in range(n_mm * n_mm)]), None),
                                                  ("buffer", "b", pack("i", [rng.randint(-100, 100) for _ in range(n_mm * n_mm)]), None),
                                                  ("size", "c", 4 * n_mm * n_mm, "exact"), ("scalar", "n", i32(n_mm), None)], OCLGRIND_OPTS),
        "fp64": (n_f64, 64, [("buffer", "in", pack("d", [rng.uniform(0, 2) for _ in range(n_f64)]), None),
                             ("size", "out", 32 * n_f64, "exact"), ("scalar", "rounds", i32(1300), None)], OCLGRIND_OPTS),
    }

def main():
    rng = random.Random(29005)
    tmp = tempfile.mkdtemp(prefix="vdb-bench-")
    only = set(sys.argv[1:])
    for name, (gsize, lsize, args, cl_opts) in kernels(rng).items():
        if only and name not in only:
            continue
        kdir = os.path.join(OUT, name)
        shutil.rmtree(os.path.join(kdir, "in"), ignore_errors=True)
        os.makedirs(os.path.join(kdir, "in"))
        launch_args, compare = [], {}
        for index, (kind, aname, data, rule) in enumerate(args):
            if kind in ("buffer", "scalar"):
                open(os.path.join(kdir, "in", aname + ".bin"), "wb").write(data)
                entry = {"index": index, kind: "in/%s.bin" % aname}
            else:
                entry = {"index": index, "size": data}
            if rule:
                entry["output"] = "out/%s.bin" % aname
                compare[aname] = rule
            launch_args.append(entry)
        for device in DEVICES:
            if device in NO_FP64 and name in NEEDS_FP64:
                continue
            kernel, zebin = compile_device(name, os.path.join(OUT, name, name + ".cl"), device, OCLOC_OPTS, tmp, OUT)
            write_launch(os.path.join(kdir, device + ".launch.json"), kernel, zebin, gsize, lsize, launch_args)
        with open(os.path.join(kdir, "bench.json"), "w") as f:
            json.dump({"oclgrind_options": cl_opts, "compare": compare}, f, indent=2)
            f.write("\n")
        print("built", name)
    shutil.rmtree(tmp)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds sample-kernels/opencl/: compiles each OpenCL kernel with Intel's ocloc for skl,
tgllp and acm-g10 (vISA text + zebin), generates inputs, computes reference outputs with pocl
through scripts/clrun.c, and writes one launch file per device.

Needs ocloc (intel-opencl-icd, libigc-tools), pocl-opencl-icd, gcc and ocl-icd-opencl-dev.
The outputs are committed so that `cargo test` needs none of these tools.
"""
import json, os, random, shutil, struct, sys, tempfile

from ocloc_dump import compile_device, run, write_launch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "sample-kernels", "opencl")
SRC = os.path.join(OUT, "src")
DEVICES = ["skl", "tgllp", "acm-g10"]
OCLOC_OPTS = "-cl-std=CL2.0 -cl-intel-greater-than-4GB-buffer-required"

def pack(fmt, values):
    return struct.pack("<%d%s" % (len(values), fmt), *values)

def gen_inputs(rng):
    """Per kernel: (global, local, args). An arg is (kind, name, bytes_or_size, compare)."""
    n = 256
    nodes = []
    for k in range(128):
        nxt = rng.randrange(-1, 128) if rng.random() < 0.9 else -1
        nodes += [nxt, rng.randint(-50, 50)]
    return {
        "collatz": (1024, 64, [("buffer", "in", pack("I", [rng.randint(1, 100000) for _ in range(1024)]), None),
                               ("size", "steps", 4096, "exact")]),
        "slm_reduce": (256, 64, [("buffer", "in", pack("i", [rng.randint(-1000, 1000) for _ in range(n)]), None),
                                 ("size", "sums", 16, "exact"), ("size", "scan", 4 * n, "exact")]),
        "atomics": (200, 40, [("buffer", "in", pack("I", [rng.randint(0, 1 << 30) for _ in range(200)]), None),
                              ("buffer", "counters", pack("i", [0, 0, -1, 1 << 30, 0, 0, 0, 0, 0]), "exact"),
                              ("size", "hist", 64, "exact")]),
        "long_math": (64, 32, [("buffer", "a", pack("Q", [rng.getrandbits(64) for _ in range(64)]), None),
                               ("buffer", "b", pack("Q", [rng.getrandbits(rng.choice([8, 33, 64])) for _ in range(64)]), None),
                               ("size", "out", 64 * 64, "exact")]),
        "half_conv": (64, 32, [("buffer", "in", pack("f", [rng.uniform(-60, 60) for _ in range(64)]), None),
                               ("size", "rte", 128, "exact"), ("size", "rtz", 128, "exact"), ("size", "back", 256, "exact")]),
        "pointer_chase": (64, 16, [("buffer", "nodes", pack("i", nodes), None),
                                   ("buffer", "starts", pack("i", [rng.randrange(-1, 128) for _ in range(64)]), None),
                                   ("size", "out", 512, "exact")]),
        "divergence": (96, 32, [("buffer", "in", pack("i", [rng.randint(-200, 200) for _ in range(96)]), None),
                                ("size", "out", 384, "exact")]),
        "subgroups": (64, 16, [("buffer", "in", pack("i", [rng.randint(-1000, 1000) for _ in range(64)]), None),
                               ("size", "out", 1024, "exact")]),
        "int_bits": (64, 32, [("buffer", "in", pack("I", [rng.getrandbits(32) >> rng.randrange(32) for _ in range(64)]), None),
                              ("size", "out", 64 * 40, "exact")]),
        "divmod": (64, 32, [("buffer", "a", pack("i", [rng.randint(-2**31, 2**31 - 1) >> rng.randrange(31) for _ in range(64)]), None),
                            ("buffer", "b", pack("i", [rng.choice([0, 1, -1, 3, -7, 1000, -65536, 2**31 - 1, rng.randint(-300, 300)]) for _ in range(64)]), None),
                            ("size", "out", 64 * 16, "exact"), ("size", "out64", 64 * 16, "exact")]),
        "float_math": (64, 32, [("buffer", "in", pack("f", [rng.uniform(-100, 100) for _ in range(64)]), None),
                                ("size", "exact", 64 * 24, "exact"), ("size", "approx", 64 * 24, {"f32_ulp": 8}),
                                ("size", "conv", 64 * 12, "exact")]),
        "vectors": (48, 16, [("buffer", "a", pack("i", [rng.randint(-10**6, 10**6) for _ in range(48 * 4)]), None),
                             ("buffer", "b", pack("f", [rng.uniform(-9, 9) for _ in range(48 * 2)]), None),
                             ("buffer", "c", bytes(rng.getrandbits(8) for _ in range(48 * 4)), None),
                             ("size", "out", 48 * 16, "exact"), ("size", "outf", 48 * 8, "exact"), ("size", "outc", 48 * 4, "exact")]),
        "private_array": (64, 32, [("buffer", "in", pack("i", [rng.randint(-500, 500) for _ in range(64)]), None),
                                   ("size", "out", 256, "exact")]),
        "local_scan": (128, 64, [("buffer", "in", pack("I", [rng.getrandbits(32) for _ in range(128)]), None),
                                 ("size", "scan", 512, "exact"), ("size", "hist", 128, "exact")]),
        "sg_shuffle": (48, 16, [("buffer", "in", pack("i", [rng.randint(-1000, 1000) for _ in range(48)]), None),
                             ("size", "out", 48 * 12, "exact")]),
        "ids3d": ((6, 4, 2), (3, 2, 2), [("size", "out", 6 * 4 * 2 * 16, "exact")]),
        "fp64": (32, 16, [("buffer", "a", pack("d", [rng.uniform(-1e6, 1e6) for _ in range(32)]), None),
                          ("buffer", "b", pack("d", [rng.uniform(-50, 50) for _ in range(32)]), None),
                          ("size", "out", 32 * 40, "exact")]),
        "half_arith": (64, 32, [("buffer", "a", pack("e", [rng.uniform(-30, 30) for _ in range(64)]), None),
                                ("buffer", "b", pack("e", [rng.uniform(-30, 30) for _ in range(64)]), None),
                                ("size", "out", 64 * 6, "exact")]),
        "small_types": (64, 32, [("buffer", "c", pack("b", [rng.randint(-128, 127) for _ in range(64)]), None),
                                 ("buffer", "s", pack("h", [rng.randint(-32768, 32767) for _ in range(64)]), None),
                                 ("buffer", "u", pack("B", [rng.randint(0, 255) for _ in range(64)]), None),
                                 ("size", "oc", 128, "exact"), ("size", "os", 256, "exact"), ("size", "oi", 512, "exact")]),
        # No +0/-0 neighbours: fmin/fmax of zeros of both signs may return either (pocl and
        # Intel hardware differ), so the pairs compared here avoid it.
        "nan_inf": (32, 16, [("buffer", "in", pack("f", [float("nan"), float("inf"), -float("inf"), 0.0, 1.5, -0.0, -2.5, 3e38,
                                                           -3e38, 1e-40, -1e-40, float("nan"), 7.0, -0.0, 42.0, 0.0] * 2), None),
                             ("size", "flags", 32 * 24, "exact"), ("size", "vals", 32 * 12, "exact")]),
        "group_only": (256, 64, [("size", "out", 16, "exact")]),
        "partial_atomics": (100, 20, [("buffer", "in", pack("i", [rng.randint(-100, 100) for _ in range(100)]), None),
                                      ("size", "counts", 17 * 4, "exact"), ("size", "sums", 64, "exact")]),
        "block_atomics": (64, 16, [("buffer", "in", pack("I", [rng.getrandbits(32) for _ in range(64)]), None),
                                   ("size", "out", 256, "exact"), ("buffer", "c64", pack("Q", [2**32 - 5]), "exact"),
                                   ("buffer", "c32", pack("I", [0xffffffff, 0, 0xffffffff, 0x12345678]), "exact")]),
        "subgroup32": (96, 32, [("buffer", "in", pack("i", [rng.randint(-1000, 1000) for _ in range(96)]), None),
                                ("size", "out", 96 * 16, "exact")]),
        "native_math": (64, 32, [("buffer", "in", pack("f", [rng.uniform(-6, 6) for _ in range(64)]), None),
                                 ("size", "out", 64 * 28, {"f32_ulp": 64})]),
        "matmul": ((16, 16), (8, 2), [("buffer", "a", pack("i", [rng.randint(-50, 50) for _ in range(256)]), None),
                                      ("buffer", "b", pack("i", [rng.randint(-50, 50) for _ in range(256)]), None),
                                      ("size", "c", 1024, "exact")]),
        "early_return": (96, 32, [("buffer", "in", pack("i", [rng.randint(-300, 300) for _ in range(96)]), None),
                                  ("size", "out", 384, "exact"), ("size", "trail", 384, "exact")]),
        # A 40x24 matrix in 16x16 tiles: the launch covers 48x32, so edge tiles are partial.
        "transpose": ((48, 32), (16, 4), [("buffer", "in", pack("f", [rng.uniform(-100, 100) for _ in range(40 * 24)]), None),
                                          ("size", "out", 40 * 24 * 4, "exact"),
                                          ("scalar", "width", pack("i", [40]), None), ("scalar", "height", pack("i", [24]), None)]),
        "nested_loops": (64, 32, [("buffer", "n", pack("i", [rng.randint(0, 1000) for _ in range(64)]), None),
                                  ("buffer", "w", pack("f", [rng.uniform(-4, 4) for _ in range(64)]), None),
                                  ("size", "outi", 256, "exact"), ("size", "outf", 256, "exact")]),
        "udivmod": (64, 32, [("buffer", "a", pack("I", [2**31, 2**31, 7, 2**32 - 1, 3 * 10**9, 2**31 + 1]
                                                         + [rng.getrandbits(32) >> rng.choice([0, 0, 1, 16]) for _ in range(58)]), None),
                             ("buffer", "b", pack("I", [3, 2**32 - 3, 2**32 - 2, 2, 2**31, 2**32 - 1]
                                                         + [max(1, rng.getrandbits(32) >> rng.choice([0, 0, 1, 20, 28])) for _ in range(58)]), None),
                             ("size", "out", 64 * 24, "exact"), ("scalar", "s", pack("I", [2**31 + 12345]), None)]),
        "wide_reads": (32, 16, [("buffer", "c", pack("f", [1.5, -2.25, 3.0, 0.5]), None),
                                ("buffer", "v3", pack("f", [2.0, 3.0, -4.0]), None),
                                ("size", "out", 32 * 16, "exact")]),
    }

def main():
    rng = random.Random(2026)
    tmp = tempfile.mkdtemp(prefix="vdb-samples-")
    clrun = os.path.join(tmp, "clrun")
    run(["gcc", "-O2", "-o", clrun, os.path.join(ROOT, "scripts", "clrun.c"), "-lOpenCL"])
    only = set(sys.argv[1:])
    for name, (gsize, lsize, args) in gen_inputs(rng).items():
        if only and name not in only:
            continue
        kdir = os.path.join(OUT, name)
        for sub in ["in", "expected"]:
            os.makedirs(os.path.join(kdir, sub), exist_ok=True)
        cl_args, launch_args, compare = [], [], {}
        for index, (kind, aname, data, rule) in enumerate(args):
            if kind == "buffer":
                path = os.path.join(kdir, "in", aname + ".bin")
                open(path, "wb").write(data)
                exp = os.path.join(kdir, "expected", aname + ".bin")
                cl_args += ["--buf", "%s:%s" % (path, exp) if rule else path]
                entry = {"index": index, "buffer": "in/%s.bin" % aname}
            elif kind == "scalar":
                path = os.path.join(kdir, "in", aname + ".bin")
                open(path, "wb").write(data)
                cl_args += ["--scalar", path]
                entry = {"index": index, "scalar": "in/%s.bin" % aname}
            else:
                exp = os.path.join(kdir, "expected", aname + ".bin")
                cl_args += ["--zero", "%d:%s" % (data, exp)]
                entry = {"index": index, "size": data}
            if rule:
                entry["output"] = "out/%s.bin" % aname
                compare[aname] = rule
            launch_args.append(entry)
        # pocl rejects vload_half/vstore_half under CL2.0; everything else needs 2.0 (work_group_*).
        std = "-cl-std=CL1.2" if name in ("half_conv", "half_arith", "fp64") else "-cl-std=CL2.0"
        dims = lambda v: ",".join(map(str, v)) if isinstance(v, tuple) else str(v)
        run([clrun, os.path.join(SRC, name + ".cl"), name, "--global", dims(gsize), "--local", dims(lsize),
             "--options", std + " -DREF_HOST"] + cl_args, env=dict(os.environ, CLRUN_PLATFORM="Portable"))
        for device in DEVICES:
            try:
                kernel, zebin = compile_device(name, os.path.join(SRC, name + ".cl"), device, OCLOC_OPTS, tmp, OUT)
            except SystemExit as e:
                if name == "fp64" and device != "skl":
                    print("  (no fp64 on", device + ")")
                    continue
                raise
            write_launch(os.path.join(kdir, device + ".launch.json"), kernel, zebin, gsize, lsize, launch_args)
        with open(os.path.join(kdir, "compare.json"), "w") as f:
            json.dump(compare, f, indent=2)
            f.write("\n")
        print("built", name)
    shutil.rmtree(tmp)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds sample-kernels/source-level/: OpenCL kernels compiled with `-g`, so that their vISA
carries FILE and LOC (source-level stepping and `break FILE.cl:LINE`). Each kernel gets the
.visaasm and zebin for skl and acm-g10, its inputs, its expected outputs (computed here, in
Python, from the kernel's meaning) and one launch file per device.

The kernels are compiled from a copy in a temporary folder that is deleted afterwards, so the
FILE path in the dumps names no file: vdb finds the source by its name next to the launch
file, as it would on any other machine. Needs ocloc (intel-opencl-icd, libigc-tools).
"""
import json, os, shutil, struct, tempfile

from ocloc_dump import compile_device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "sample-kernels", "source-level")
DEVICES = ["skl", "acm-g10"]
OCLOC_OPTS = "-g -cl-intel-greater-than-4GB-buffer-required"

def loop_call(values):
    """What loop_call.cl computes for each work-item."""
    out = []
    for i, v in enumerate(values):
        acc = 0
        for j in range(v):
            w = j * 3
            acc += w - 7 if w > 20 else w
        out.append(acc // 2 if acc > 50 else (acc ^ i) + 1)
    return out

KERNELS = {
    # name: (global size, local size, input values)
    "loop_call": (16, 8, [3, 7, 0, 5, 9, 1, 6, 8, 2, 4, 7, 0, 5, 3, 9, 6]),
}

def main():
    tmp = tempfile.mkdtemp(prefix="vdb-source-level-")
    for name, (gsize, lsize, values) in KERNELS.items():
        kdir = os.path.join(OUT, name)
        src = os.path.join(tmp, name + ".cl")
        shutil.copy(os.path.join(kdir, name + ".cl"), src)
        for sub in ["in", "expected"]:
            os.makedirs(os.path.join(kdir, sub), exist_ok=True)
        pack = lambda v: struct.pack("<%di" % len(v), *v)
        open(os.path.join(kdir, "in", "in.bin"), "wb").write(pack(values))
        open(os.path.join(kdir, "expected", "out.bin"), "wb").write(pack(loop_call(values)))
        args = [{"index": 0, "buffer": "in/in.bin"},
                {"index": 1, "size": 4 * gsize, "output": "out/out.bin"}]
        for device in DEVICES:
            kernel, zebin = compile_device(name, src, device, OCLOC_OPTS, tmp, OUT)
            launch = {"kernel": kernel, "zebin": zebin, "global_size": [gsize, 1, 1],
                      "local_size": [lsize, 1, 1], "global_offset": [0, 0, 0], "args": args}
            with open(os.path.join(kdir, device + ".launch.json"), "w") as f:
                json.dump(launch, f, indent=2)
                f.write("\n")
        with open(os.path.join(kdir, "compare.json"), "w") as f:
            json.dump({"out": "exact"}, f, indent=2)
            f.write("\n")
        print("built", name)
    shutil.rmtree(tmp)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reference model for the hand-written sample kernels: writes in.bin, the launch files and
expected/<kernel>.out.bin, computed from each kernel's stated C semantics (not by vdb)."""
import json, struct

X = [-100, -51, -3, 0, 1, 2, 3, 6, 7, 10, 11, 27, 50, 51, 97, 1000]

def s32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v

def divergent_if(x):
    return [s32(v * 3 + 1) if v > 10 else s32(v - 7) for v in x]

def nested_divergence(x):
    out = []
    for v in x:
        if v & 1:
            out.append(s32(3 * v - 7) if v > 50 else s32(v ^ 0x55))
        else:
            out.append(v >> 1 if (v & 6) == 2 else s32(v * v))
    return out

def loop_exit(x):
    out = []
    for v in x:
        r = 0
        while v > 1 and r < 200:
            v = s32(3 * v + 1) if v & 1 else v >> 1
            r += 1
        out.append(r)
    return out

def subroutine(x):
    return [(-v if v < 0 else 2 * v + 1) if i & 1 else v for i, v in enumerate(x)]

def indirect(x):
    return [s32(x[15 - i] + x[3]) for i in range(16)]

def pack(vals):
    return b"".join(struct.pack("<i", v) for v in vals)

def scatter(x):
    out = bytearray(128)
    for i, v in enumerate(x):
        out[4 * (15 - i)] = v & 0xff
    for i in range(8):
        out[64 + 8 * i:72 + 8 * i] = struct.pack("<ii", x[i], s32(-x[i]))
    return bytes(out)

KERNELS = {
    "divergent_if": lambda x: pack(divergent_if(x)),
    "nested_divergence": lambda x: pack(nested_divergence(x)),
    "loop_exit": lambda x: pack(loop_exit(x)),
    "subroutine": lambda x: pack(subroutine(x)),
    "indirect": lambda x: pack(indirect(x)),
    "scatter": scatter,
}

def main():
    with open("in.bin", "wb") as f:
        f.write(pack(X))
    for name, fn in KERNELS.items():
        expected = fn(X)
        with open(f"expected/{name}.out.bin", "wb") as f:
            f.write(expected)
        launch = {
            "kernel": f"{name}.visaasm",
            "inputs": {
                "IN": {"type": "uq", "values": ["0x100000000"]},
                "OUT": {"type": "uq", "values": ["0x100010000"]},
            },
            "svm": [
                {"name": "in", "address": "0x100000000", "file": "in.bin"},
                {"name": "out", "address": "0x100010000", "size": len(expected),
                 "output": f"out/{name}.out.bin"},
            ],
        }
        with open(f"{name}.launch.json", "w") as f:
            json.dump(launch, f, indent=2)
            f.write("\n")

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Copies the project's reference kernels (../shared/kernels: IGC-compiled for skl, tgllp and
acm-g10, with inputs and pocl reference outputs) into sample-kernels/shared/ and writes one
launch file per device from each manifest, so `cargo test` can check them without ../shared."""
import json, os, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "kernels")
OUT = os.path.join(ROOT, "sample-kernels", "shared")

for name in sorted(os.listdir(SRC)):
    manifest_path = os.path.join(SRC, name, "manifest.json")
    if not os.path.exists(manifest_path):
        continue
    m = json.load(open(manifest_path))
    kdir = os.path.join(OUT, name)
    shutil.rmtree(kdir, ignore_errors=True)
    os.makedirs(kdir)
    shutil.copytree(os.path.join(SRC, name, "in"), os.path.join(kdir, "in"))
    shutil.copytree(os.path.join(SRC, name, "out"), os.path.join(kdir, "expected"))
    shutil.copy(os.path.join(SRC, name, m["source"]), kdir)
    compare = {}
    args = []
    for a in m["args"]:
        entry = {"index": a["index"]}
        if a["kind"] == "buffer":
            entry["buffer"] = a["input"]
            if a.get("output"):
                entry["output"] = a["output"]
                compare[os.path.basename(a["output"])] = a.get("compare", "exact")
        elif a["kind"] == "local":
            entry["local"] = a["size"]
        elif a["kind"] == "scalar":
            entry["scalar"] = a["input"]
        args.append(entry)
    for device, v in m["visa"].items():
        ddir = os.path.join(kdir, device)
        os.makedirs(ddir)
        shutil.copy(os.path.join(SRC, name, v["visaasm"]), ddir)
        shutil.copy(os.path.join(SRC, name, v["zebin"]), ddir)
        launch = {"kernel": v["visaasm"], "zebin": v["zebin"], "global_size": m["global_size"],
                  "local_size": m["local_size"], "global_offset": m["global_offset"], "args": args}
        with open(os.path.join(kdir, device + ".launch.json"), "w") as f:
            json.dump(launch, f, indent=2)
            f.write("\n")
    with open(os.path.join(kdir, "compare.json"), "w") as f:
        json.dump(compare, f, indent=2)
        f.write("\n")
    print("imported", name, sorted(m["visa"]))

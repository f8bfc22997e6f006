"""What the sample generators share: compiling one OpenCL kernel with ocloc with IGC's dumps
on, and copying the kernel's .visaasm and zebin next to its launch files."""
import glob, json, os, re, shutil, subprocess, sys


def run(cmd, **kw):
    """Runs `cmd`; its stdout, or the script stops with its output."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def compile_device(name, src, device, options, tmp, dest_root):
    """Compiles `src` for `device` and copies the kernel's vISA and zebin into
    `dest_root/name/device/`. Returns the launch file's `kernel` and `zebin` paths, relative
    to `dest_root/name`."""
    dump = os.path.join(tmp, "dump_%s_%s" % (name, device))
    outdir = os.path.join(tmp, "out_%s_%s" % (name, device))
    opts = "%s -igc_opts 'ShaderDumpEnable=1,DumpToCustomDir=%s'" % (options, dump)
    run(["ocloc", "compile", "-file", src, "-device", device, "--format", "zebin",
         "-output_no_suffix", "-out_dir", outdir, "-options", opts])
    # IGC may try more than one SIMD width; the zebin's .ze_info says which one it kept.
    zebin = open(os.path.join(outdir, name), "rb").read()
    simd = re.search(rb"simd_size:\s*(\d+)", zebin).group(1).decode()
    visa = glob.glob(os.path.join(dump, "*_simd%s_entry_*.visaasm" % simd))
    if len(visa) != 1:
        sys.exit("%s/%s: expected one SIMD%s kernel .visaasm, got %s" % (name, device, simd, visa))
    dest = os.path.join(dest_root, name, device)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    kfile = "%s.simd%s.visaasm" % (name, simd)
    shutil.copy(visa[0], os.path.join(dest, kfile))
    shutil.copy(os.path.join(outdir, name), os.path.join(dest, name + ".zebin"))
    return "%s/%s" % (device, kfile), "%s/%s.zebin" % (device, name)


def write_launch(path, kernel, zebin, gsize, lsize, args):
    """Writes a launch file at `path`: the kernel and zebin paths `compile_device` gave, the
    global and local sizes (a number or a tuple of up to three), no offset, and `args`."""
    dims = lambda size: (list(size) + [1, 1])[:3] if isinstance(size, tuple) else [size, 1, 1]
    launch = {"kernel": kernel, "zebin": zebin, "global_size": dims(gsize), "local_size": dims(lsize),
              "global_offset": [0, 0, 0], "args": args}
    with open(path, "w") as f:
        json.dump(launch, f, indent=2)
        f.write("\n")

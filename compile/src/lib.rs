//! Compiles OpenCL C with Intel's `ocloc` (with `-g` and IGC's shader dumps) into a cache
//! under the user's cache folder, keyed by a hash of the source (and the files it includes),
//! the build options, the device and the compiler's files, and picks a kernel's `.visaasm`
//! whose SIMD width is the one the zebin runs. The engine never spawns processes: this is the
//! `vdb` binary's part of a source launch, and of `vdb record`'s OpenCL ICD.

use std::path::{Path, PathBuf};
use std::process::Command;

use vdb::launch::raw::read_text;
use vdb::launch::{ZeInfo, Zebin};

/// Options every build gets (as `scripts/make_opencl_samples.py` compiles the samples):
/// stateless 64-bit buffers, the payload vdb builds.
const BASE_OPTIONS: &str = "-g -cl-intel-greater-than-4GB-buffer-required";
/// The OpenCL C version, unless the build options choose one.
const DEFAULT_STD: &str = "-cl-std=CL2.0";
/// Bumped when what the cache holds changes shape.
const CACHE_FORMAT: &str = "vdb-ocloc-cache-2";

/// What to build.
pub struct Request<'a> {
    pub source: &'a Path,
    pub device: &'a str,
    pub options: &'a str,
}

/// A build in the cache: the zebin, its `.ze_info`, the dumped `.visaasm` files.
pub struct Compiled {
    pub dir: PathBuf,
    pub zebin: PathBuf,
    pub info: ZeInfo,
    /// The compiler's messages (warnings), as it printed them.
    pub log: String,
}

/// One kernel of a build: its `.visaasm`, stack-call function files, SIMD width.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub visaasm: PathBuf,
    pub functions: Vec<PathBuf>,
    pub simd: u32,
}

pub enum CompileError {
    /// `ocloc` is not on PATH.
    NoCompiler,
    /// The compiler refused the source: its messages (`file:line:col: error: ...`).
    Failed(String),
    Other(String),
}

impl CompileError {
    /// The message to print, for `source` built for `device`.
    pub fn render(&self, source: &Path, device: &str) -> String {
        match self {
            CompileError::NoCompiler => format!(
                "{}: compiling OpenCL C needs Intel's compiler `ocloc`, which is not on PATH; \
                 install it (Debian/Ubuntu: sudo apt-get install intel-opencl-icd), or run a \
                 launch file of compiled kernels",
                source.display()
            ),
            CompileError::Failed(log) => {
                format!("{}: ocloc could not compile it for {device}:\n{}", source.display(), log.trim_end())
            }
            CompileError::Other(m) => format!("{}: {m}", source.display()),
        }
    }
}

/// `ocloc` on PATH, if there is one.
pub fn find_ocloc() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("ocloc")).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    p.is_file()
}

/// Builds `req` or takes it from the cache.
pub fn compile(req: &Request) -> Result<Compiled, CompileError> {
    let ocloc = find_ocloc().ok_or(CompileError::NoCompiler)?;
    let text = read_text(req.source).map_err(|e| CompileError::Other(format!("cannot read: {e}")))?;
    let options = full_options(req.options);
    let root = cache_root().join("ocloc");
    let dir = root.join(cache_key(req, &text, &options, &ocloc));
    if !dir.join("program.zebin").is_file() {
        build_into(&ocloc, req, &options, &root, &dir)?;
    }
    load(&dir)
}

/// The options ocloc gets: ours, then the user's (which may choose another `-cl-std`).
fn full_options(user: &str) -> String {
    let std = if user.contains("-cl-std=") { "" } else { DEFAULT_STD };
    [BASE_OPTIONS, std, user.trim()].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ")
}

/// `$XDG_CACHE_HOME/vdb`, else `~/.cache/vdb`, else a folder in the temporary directory.
pub fn cache_root() -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return xdg.join("vdb");
    }
    if let Some(home) = std::env::var_os("HOME").and_then(absolute) {
        return home.join(".cache").join("vdb");
    }
    std::env::temp_dir().join("vdb-cache")
}

/// 128-bit FNV-1a: a stable hash (std's hasher may change between Rust releases, which
/// would only cost a rebuild, but a fixed one keeps the cache shared between vdb builds).
struct Fnv(u128);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0x6c62272e07bb014262b821756295c58d)
    }

    /// Adds a field, length first, so that fields cannot run into each other.
    fn add(&mut self, bytes: &[u8]) {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= *b as u128;
            self.0 = self.0.wrapping_mul(0x0000000001000000000000000000013B);
        }
    }
}

/// The cache entry's name: a hash of everything the build depends on. The source's path
/// counts too: `-g` writes it into the `.visaasm` (`FILE`), where source stepping reads it.
fn cache_key(req: &Request, text: &str, options: &str, ocloc: &Path) -> String {
    let mut h = Fnv::new();
    h.add(CACHE_FORMAT.as_bytes());
    let full = std::fs::canonicalize(req.source).unwrap_or_else(|_| req.source.to_path_buf());
    h.add(full.to_string_lossy().as_bytes());
    h.add(text.as_bytes());
    for (path, bytes) in included_files(&full, text) {
        h.add(path.to_string_lossy().as_bytes());
        h.add(&bytes);
    }
    h.add(req.device.as_bytes());
    h.add(options.as_bytes());
    h.add(compiler_fingerprint(ocloc).as_bytes());
    format!("{:032x}", h.0)
}

/// Files reached through `#include "..."` from `source` (recursively, each once; at most
/// 256), with their bytes (empty when missing: the compiler will say so).
fn included_files(source: &Path, text: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut seen: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut todo: Vec<(PathBuf, String)> = vec![(source.to_path_buf(), text.to_string())];
    while let Some((file, text)) = todo.pop() {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for name in text.lines().filter_map(quoted_include) {
            let path = dir.join(name);
            if seen.len() >= 256 || seen.iter().any(|(p, _)| *p == path) {
                continue;
            }
            let bytes =
                vdb::launch::raw::read_file(&path, vdb::launch::raw::MAX_TEXT_FILE).unwrap_or_default();
            todo.push((path.clone(), String::from_utf8_lossy(&bytes).into_owned()));
            seen.push((path, bytes));
        }
    }
    seen
}

/// `#include "name"` → `name`.
fn quoted_include(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?;
    let rest = rest.trim_start().strip_prefix('"')?;
    rest.split_once('"').map(|(name, _)| name)
}

/// Path, size and modification time of `ocloc` and of the compiler libraries it loads: a
/// new compiler makes new cache entries.
fn compiler_fingerprint(ocloc: &Path) -> String {
    let mut parts = vec![describe(ocloc)];
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("LD_LIBRARY_PATH").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    dirs.extend(["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"].map(PathBuf::from));
    const LIBS: [&str; 4] = ["libocloc", "libigc.so", "libigdfcl.so", "libopencl-clang.so"];
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().is_some_and(|n| LIBS.iter().any(|l| n.to_string_lossy().starts_with(l)))
            })
            .collect();
        found.sort();
        parts.extend(found.iter().map(|p| describe(p)));
    }
    parts.join("\n")
}

fn describe(p: &Path) -> String {
    let meta = std::fs::metadata(p);
    let modified = meta.as_ref().ok().and_then(|m| m.modified().ok());
    let since = modified.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!("{} {} {}", p.display(), meta.map_or(0, |m| m.len()), since.map_or(0, |d| d.as_nanos()))
}

/// Runs ocloc into a fresh folder next to `dir`, keeps the zebin, the `.visaasm` dumps and
/// the log, and renames the folder to `dir` (another vdb may have got there first: then its
/// build is kept).
fn build_into(
    ocloc: &Path,
    req: &Request,
    options: &str,
    root: &Path,
    dir: &Path,
) -> Result<(), CompileError> {
    let stamp =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let tmp = root.join(format!("tmp-{}-{stamp}", std::process::id()));
    let result = run_ocloc(ocloc, req, options, &tmp);
    let result = result.and_then(|()| {
        // A folder left incomplete by a crash (the rename below is what makes one whole).
        if dir.exists() && !dir.join("program.zebin").is_file() {
            let _ = std::fs::remove_dir_all(dir);
        }
        std::fs::rename(&tmp, dir)
            .or_else(|e| if dir.join("program.zebin").is_file() { Ok(()) } else { Err(e) })
            .map_err(|e| CompileError::Other(format!("cannot store the build in {}: {e}", dir.display())))
    });
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn run_ocloc(ocloc: &Path, req: &Request, options: &str, tmp: &Path) -> Result<(), CompileError> {
    let (dump, out) = (tmp.join("dump"), tmp.join("out"));
    let cannot = |e: std::io::Error| CompileError::Other(format!("cannot create {}: {e}", tmp.display()));
    std::fs::create_dir_all(&dump).map_err(cannot)?;
    std::fs::create_dir_all(&out).map_err(cannot)?;
    // With the separator: IGC joins some dump names (the `.cl` copy) to it without one.
    let dump_text = format!("{}/", dump.to_string_lossy());
    // IGC splits its options at commas and the option string at quotes.
    if dump_text.contains(['\'', ',', '"']) {
        return Err(CompileError::Other(format!(
            "the cache folder {} has a quote or a comma in its path, which IGC cannot take; set XDG_CACHE_HOME",
            tmp.display()
        )));
    }
    let options = with_igc_opts(options, &format!("ShaderDumpEnable=1,DumpToCustomDir={dump_text}"));
    let output = Command::new(ocloc)
        .args(["compile", "-file"])
        .arg(req.source)
        .args(["-device", req.device, "--format", "zebin", "-output_no_suffix", "-out_dir"])
        .arg(&out)
        .args(["-options", &options])
        .output()
        .map_err(|e| CompileError::Other(format!("cannot run {}: {e}", ocloc.display())))?;
    let log = [output.stdout, output.stderr].concat();
    let log = compiler_messages(&String::from_utf8_lossy(&log));
    if !output.status.success() {
        return Err(CompileError::Failed(log));
    }
    keep_results(req, tmp, &log)
}

/// `options` with `ours` added to IGC's own options. IGC takes one `-igc_opts` (a second
/// replaces the first), so a user's `-igc_opts 'A=1,B=2'` (quoted with ' or ", or one word)
/// is taken out and joined to ours: `-igc_opts 'A=1,B=2,ours'`.
fn with_igc_opts(options: &str, ours: &str) -> String {
    const FLAG: &str = "-igc_opts";
    let mut rest = String::new();
    let mut theirs = Vec::new();
    let mut text = options;
    while let Some(at) = text.find(FLAG) {
        let after = &text[at + FLAG.len()..];
        // Only the flag itself, not a longer word that starts with it.
        if !after.is_empty() && !after.starts_with(char::is_whitespace) {
            rest.push_str(&text[..at + FLAG.len()]);
            text = after;
            continue;
        }
        rest.push_str(&text[..at]);
        let value = after.trim_start();
        let (item, tail) = match value.chars().next() {
            Some(q @ ('\'' | '"')) => match value[1..].find(q) {
                Some(end) => (&value[1..1 + end], &value[end + 2..]),
                None => (&value[1..], ""),
            },
            _ => value.split_at(value.find(char::is_whitespace).unwrap_or(value.len())),
        };
        theirs.extend(item.split(',').map(str::trim).filter(|s| !s.is_empty()));
        text = tail;
    }
    rest.push_str(text);
    theirs.push(ours);
    let flag = format!("{FLAG} '{}'", theirs.join(","));
    rest.split_whitespace().chain([flag.as_str()]).collect::<Vec<_>>().join(" ")
}

/// ocloc's output without its own chatter (`Build succeeded.`, `Command was: ...`, which
/// names vdb's temporary folders): the compiler's messages.
fn compiler_messages(log: &str) -> String {
    let chatter = |l: &str| l.starts_with("Build succeeded") || l.starts_with("Command was:");
    log.lines().filter(|l| !chatter(l)).map(|l| format!("{l}\n")).collect()
}

/// Moves the zebin to `program.zebin`, drops every dump but the `.visaasm` files, writes
/// the log.
fn keep_results(req: &Request, tmp: &Path, log: &str) -> Result<(), CompileError> {
    let stem = req.source.file_stem().map(|s| s.to_os_string()).unwrap_or_default();
    let other = |what: &str, e: std::io::Error| CompileError::Other(format!("{what}: {e}"));
    std::fs::rename(tmp.join("out").join(&stem), tmp.join("program.zebin"))
        .map_err(|e| other("ocloc wrote no zebin", e))?;
    let entries = std::fs::read_dir(tmp.join("dump")).map_err(|e| other("ocloc wrote no dumps", e))?;
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.extension().is_none_or(|x| x != "visaasm") {
            let _ = std::fs::remove_file(&path);
        }
    }
    let _ = std::fs::remove_dir_all(tmp.join("out"));
    if let Ok(entries) = std::fs::read_dir(tmp) {
        let files = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file());
        let stray = files.filter(|p| p.file_name().is_some_and(|n| n != "program.zebin"));
        stray.for_each(|p| drop(std::fs::remove_file(p)));
    }
    std::fs::write(tmp.join("build.log"), log).map_err(|e| other("cannot write the build log", e))
}

/// A build already in the cache.
fn load(dir: &Path) -> Result<Compiled, CompileError> {
    let zebin = dir.join("program.zebin");
    let bad = |e: String| CompileError::Other(format!("{}: {e}", zebin.display()));
    let bytes = vdb::launch::raw::read_file(&zebin, 1 << 30).map_err(&bad)?;
    let elf = Zebin::parse(&bytes).map_err(|e| bad(e.to_string()))?;
    let text = elf.ze_info_text().map_err(|e| bad(e.to_string()))?;
    let info = ZeInfo::parse(text).map_err(|e| bad(e.to_string()))?;
    let log = std::fs::read_to_string(dir.join("build.log")).unwrap_or_default();
    Ok(Compiled { dir: dir.to_path_buf(), zebin, info, log })
}

impl Compiled {
    /// The kernel `name` (or the only one), with the `.visaasm` of the SIMD width the zebin
    /// runs it at. IGC names dumps `OCL_asm<hash>_simd<N>_entry_<NNNN>.visaasm` (stack-call
    /// functions `..._f<K>.visaasm`); the kernel is found by its `.kernel "name"` line.
    pub fn kernel(&self, name: Option<&str>) -> Result<Kernel, String> {
        let names: Vec<&str> = self.info.source_kernels().map(|k| k.name.as_str()).collect();
        let name = match name {
            Some(n) if names.contains(&n) => n,
            Some(n) => return Err(format!("no kernel `{n}` (the source has {})", names.join(", "))),
            None if names.len() == 1 => names[0],
            None => return Err(format!("the source has kernels {}: choose one", names.join(", "))),
        };
        let simd = self.info.kernel(name).map_or(0, |k| k.execution_env.simd_size);
        let dump = self.dir.join("dump");
        let entries = std::fs::read_dir(&dump).map_err(|e| format!("{}: {e}", dump.display()))?;
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        let visaasm = files
            .iter()
            .filter(|p| dump_simd(p) == Some((simd, None)))
            .find(|p| kernel_name(p).as_deref() == Some(name))
            .ok_or_else(|| format!("ocloc dumped no SIMD{simd} .visaasm of kernel `{name}`"))?;
        let stem = visaasm.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut functions: Vec<(u32, PathBuf)> = files
            .iter()
            .filter_map(|p| {
                let rest = p.file_stem()?.to_str()?.strip_prefix(stem.as_str())?;
                Some((rest.strip_prefix("_f")?.parse().ok()?, p.clone()))
            })
            .collect();
        functions.sort();
        let functions = functions.into_iter().map(|(_, p)| p).collect();
        Ok(Kernel { name: name.to_string(), visaasm: visaasm.clone(), functions, simd })
    }
}

/// `..._simd16_entry_0002.visaasm` → (16, None); `..._simd16_entry_0002_f0.visaasm` →
/// (16, Some(0)).
fn dump_simd(p: &Path) -> Option<(u32, Option<u32>)> {
    if p.extension()? != "visaasm" {
        return None;
    }
    let stem = p.file_stem()?.to_str()?;
    let (_, after) = stem.rsplit_once("_simd")?;
    let (simd, rest) = after.split_once("_entry_")?;
    let function = match rest.split_once("_f") {
        Some((_, k)) => Some(k.parse().ok()?),
        None => None,
    };
    Some((simd.parse().ok()?, function))
}

/// The name in a `.visaasm` file's `.kernel "name"` line.
fn kernel_name(p: &Path) -> Option<String> {
    let text = read_text(p).ok()?;
    let line = text.lines().find(|l| l.trim_start().starts_with(".kernel "))?;
    let quoted = line.trim_start().strip_prefix(".kernel")?.trim();
    Some(quoted.trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_names_give_simd_and_function() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(dump_simd(&p("OCL_asmab12_simd16_entry_0002.visaasm")), Some((16, None)));
        assert_eq!(dump_simd(&p("OCL_asmab12_simd8_entry_0001_f1.visaasm")), Some((8, Some(1))));
        assert_eq!(dump_simd(&p("OCL_asmab12_simd8_entry_0001.asm")), None);
        assert_eq!(dump_simd(&p("OCL_asmab12_simd8_Intel_Symbol_Table_Void_Program.visaasm")), None);
    }

    #[test]
    fn includes_are_found_in_quotes_only() {
        assert_eq!(quoted_include("#include \"a.h\""), Some("a.h"));
        assert_eq!(quoted_include("  #  include   \"dir/b.h\" // x"), Some("dir/b.h"));
        assert_eq!(quoted_include("#include <c.h>"), None);
        assert_eq!(quoted_include("int x; // #include \"no.h\""), None);
    }

    #[test]
    fn user_options_may_choose_the_language_version() {
        assert!(full_options("-DN=4").ends_with("-cl-std=CL2.0 -DN=4"));
        assert!(!full_options("-cl-std=CL1.2").contains("CL2.0"));
        assert!(full_options("").starts_with("-g "));
    }

    #[test]
    fn a_users_igc_options_join_the_dump_options() {
        let ours = "ShaderDumpEnable=1";
        assert_eq!(with_igc_opts("-g -DN=4", ours), "-g -DN=4 -igc_opts 'ShaderDumpEnable=1'");
        assert_eq!(
            with_igc_opts("-g -igc_opts 'FunctionControl=3, X=0' -DN=4", ours),
            "-g -DN=4 -igc_opts 'FunctionControl=3,X=0,ShaderDumpEnable=1'"
        );
        assert_eq!(
            with_igc_opts("-igc_opts \"A=1\" -igc_opts B=2", ours),
            "-igc_opts 'A=1,B=2,ShaderDumpEnable=1'"
        );
        // A longer flag that begins the same way is not IGC's.
        assert_eq!(with_igc_opts("-igc_optsX", ours), "-igc_optsX -igc_opts 'ShaderDumpEnable=1'");
        // An unclosed quote takes the rest.
        assert_eq!(with_igc_opts("-igc_opts 'A=1", ours), "-igc_opts 'A=1,ShaderDumpEnable=1'");
    }

    #[test]
    fn the_hash_separates_fields() {
        let hash = |parts: &[&[u8]]| {
            let mut h = Fnv::new();
            parts.iter().for_each(|p| h.add(p));
            h.0
        };
        assert_ne!(hash(&[b"ab", b"c"]), hash(&[b"a", b"bc"]));
        assert_eq!(hash(&[b"x"]), hash(&[b"x"]));
    }
}

//! Typed view of the zebin `.ze_info` section: per-kernel execution environment, payload
//! argument layout and argument metadata. Built on the small YAML reader in [`super::yaml`];
//! keys we do not model are kept as text so nothing the compiler says is lost.

use std::collections::BTreeMap;
use std::fmt;

use super::yaml::{self, Node, YamlError};

/// A `.ze_info` problem, with the 1-based line it was found on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZeInfoError {
    pub line: u32,
    pub kind: ZeInfoErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZeInfoErrorKind {
    /// The text is not valid in our YAML subset.
    Syntax(String),
    /// A map was expected (`what` names the place).
    ExpectedMap(&'static str),
    ExpectedList(&'static str),
    ExpectedScalar(String),
    /// A number field does not parse as an unsigned integer.
    BadNumber {
        key: String,
        value: String,
    },
    BadBool {
        key: String,
        value: String,
    },
    /// A required key is absent.
    MissingKey(&'static str),
}

impl fmt::Display for ZeInfoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".ze_info line {}: ", self.line)?;
        match &self.kind {
            ZeInfoErrorKind::Syntax(m) => write!(f, "{m}"),
            ZeInfoErrorKind::ExpectedMap(w) => write!(f, "expected a map for {w}"),
            ZeInfoErrorKind::ExpectedList(w) => write!(f, "expected a list for {w}"),
            ZeInfoErrorKind::ExpectedScalar(k) => write!(f, "expected a plain value for `{k}`"),
            ZeInfoErrorKind::BadNumber { key, value } => {
                write!(f, "`{key}`: `{value}` is not an unsigned number")
            }
            ZeInfoErrorKind::BadBool { key, value } => {
                write!(f, "`{key}`: `{value}` is not true/false")
            }
            ZeInfoErrorKind::MissingKey(k) => write!(f, "missing key `{k}`"),
        }
    }
}

impl std::error::Error for ZeInfoError {}

impl From<YamlError> for ZeInfoError {
    fn from(e: YamlError) -> Self {
        ZeInfoError { line: e.line, kind: ZeInfoErrorKind::Syntax(e.message) }
    }
}

fn fail<T>(line: u32, kind: ZeInfoErrorKind) -> Result<T, ZeInfoError> {
    Err(ZeInfoError { line, kind })
}

/// The name of the kernel IGC adds to a program with a symbol table.
const SYMBOL_TABLE_KERNEL: &str = "Intel_Symbol_Table_Void_Program";

/// The whole `.ze_info` document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZeInfo {
    pub version: Option<String>,
    pub kernels: Vec<ZeKernel>,
    pub kernels_misc_info: Vec<KernelMiscInfo>,
}

/// One entry of `kernels:`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZeKernel {
    pub name: String,
    pub execution_env: ExecutionEnv,
    pub payload_arguments: Vec<PayloadArg>,
    pub per_thread_payload_arguments: Vec<PerThreadArg>,
    pub binding_table_indices: Vec<BindingTableIndex>,
    /// Bytes of scratch space each hardware thread gets (`per_thread_memory_buffers` of
    /// type `scratch`: the `%scratch` surface private arrays and spills go to); 0 for none.
    pub scratch_size: u32,
    /// Bytes of stateless private memory (`per_thread_memory_buffers` of usage
    /// `private_space`: the stack of stack calls, at `private_base_stateless`) each hardware
    /// thread gets; 0 for none. A size given per work-item (`is_simt_thread`) is counted
    /// `simd_size` times.
    pub private_size: u32,
}

/// `execution_env:`. Absent numbers are 0 (what the runtime assumes), except `grf_count`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecutionEnv {
    pub simd_size: u32,
    /// Static SLM bytes (`__local` arrays declared in the kernel body).
    pub slm_size: u32,
    pub grf_count: Option<u32>,
    pub barrier_count: u32,
    pub has_4gb_buffers: bool,
    /// acm-g10 only: bytes of cross-thread data delivered as inline data.
    pub inline_data_payload_size: u32,
    pub offset_to_skip_per_thread_data_load: u32,
    /// Every other key, as written.
    pub other: BTreeMap<String, String>,
}

/// The `arg_type` of a payload argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgType {
    GlobalIdOffset,
    LocalSize,
    EnqueuedLocalSize,
    GroupCount,
    GlobalSize,
    WorkDimensions,
    PrivateBaseStateless,
    /// Address of the zebin's constant / global data section.
    ConstBase,
    GlobalBase,
    ArgByPointer,
    ArgByValue,
    /// Anything else, as written.
    Other(String),
}

impl ArgType {
    fn parse(s: &str) -> ArgType {
        match s {
            "global_id_offset" => ArgType::GlobalIdOffset,
            "local_size" => ArgType::LocalSize,
            "enqueued_local_size" => ArgType::EnqueuedLocalSize,
            "group_count" => ArgType::GroupCount,
            "global_size" => ArgType::GlobalSize,
            "work_dimensions" => ArgType::WorkDimensions,
            "private_base_stateless" => ArgType::PrivateBaseStateless,
            "const_base" => ArgType::ConstBase,
            "global_base" => ArgType::GlobalBase,
            "arg_bypointer" => ArgType::ArgByPointer,
            "arg_byvalue" => ArgType::ArgByValue,
            other => ArgType::Other(other.to_string()),
        }
    }
}

/// One `payload_arguments:` entry; `offset` is relative to the cross-thread data start.
#[derive(Clone, Debug, PartialEq)]
pub struct PayloadArg {
    pub arg_type: ArgType,
    pub offset: u32,
    pub size: u32,
    pub arg_index: Option<u32>,
    /// `stateless`, `stateful`, `slm`, …
    pub addrmode: Option<String>,
    pub addrspace: Option<String>,
    pub access_type: Option<String>,
    pub slm_alignment: Option<u32>,
    /// For by-value struct pieces: where this piece starts inside the argument's bytes.
    pub source_offset: Option<u32>,
    pub other: BTreeMap<String, String>,
    /// Line of the entry in the `.ze_info` text.
    pub line: u32,
}

/// One `per_thread_payload_arguments:` entry (offset relative to GRF byte 32).
#[derive(Clone, Debug, PartialEq)]
pub struct PerThreadArg {
    pub arg_type: String,
    pub offset: u32,
    pub size: u32,
    /// Line of the entry in the `.ze_info` text.
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BindingTableIndex {
    pub bti_value: u32,
    pub arg_index: u32,
}

/// One `kernels_misc_info:` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelMiscInfo {
    pub name: String,
    pub args_info: Vec<ArgInfo>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgInfo {
    pub index: u32,
    pub name: String,
    pub address_qualifier: String,
    pub access_qualifier: String,
    pub type_name: String,
    pub type_qualifiers: String,
}

/// Read access to one YAML map, tracking the keys consumed so the rest can be kept.
struct Fields<'a> {
    entries: &'a [(String, Node)],
    line: u32,
}

impl<'a> Fields<'a> {
    fn of(node: &'a Node, what: &'static str) -> Result<Fields<'a>, ZeInfoError> {
        match node {
            Node::Map { entries, line } => Ok(Fields { entries, line: *line }),
            other => fail(other.line(), ZeInfoErrorKind::ExpectedMap(what)),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn text(&self, key: &str) -> Result<Option<&'a str>, ZeInfoError> {
        match self.get(key) {
            None => Ok(None),
            Some(Node::Scalar { value, .. }) => Ok(Some(value)),
            Some(n) => fail(n.line(), ZeInfoErrorKind::ExpectedScalar(key.to_string())),
        }
    }

    fn string(&self, key: &str) -> Result<String, ZeInfoError> {
        Ok(self.text(key)?.unwrap_or_default().to_string())
    }

    fn required(&self, key: &'static str) -> Result<&'a str, ZeInfoError> {
        self.text(key)?.map_or(fail(self.line, ZeInfoErrorKind::MissingKey(key)), Ok)
    }

    fn number(&self, key: &str) -> Result<Option<u32>, ZeInfoError> {
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        let line = self.get(key).map_or(self.line, Node::line);
        parse_u32(text).map(Some).ok_or_else(|| ZeInfoError {
            line,
            kind: ZeInfoErrorKind::BadNumber { key: key.to_string(), value: text.to_string() },
        })
    }

    fn flag(&self, key: &str) -> Result<bool, ZeInfoError> {
        match self.text(key)? {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(v) => {
                let line = self.get(key).map_or(self.line, Node::line);
                let kind = ZeInfoErrorKind::BadBool { key: key.to_string(), value: v.to_string() };
                fail(line, kind)
            }
        }
    }

    fn list(&self, key: &'static str) -> Result<&'a [Node], ZeInfoError> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Node::List { items, .. }) => Ok(items),
            // `key:` with nothing after it is an empty list.
            Some(Node::Scalar { value, .. }) if value.is_empty() => Ok(&[]),
            Some(n) => fail(n.line(), ZeInfoErrorKind::ExpectedList(key)),
        }
    }

    /// Scalar entries whose key is not in `known`, rendered as text.
    fn rest(&self, known: &[&str]) -> BTreeMap<String, String> {
        let unknown = self.entries.iter().filter(|(k, _)| !known.contains(&k.as_str()));
        unknown.map(|(k, v)| (k.clone(), render(v))).collect()
    }
}

/// Decimal or `0x` hexadecimal.
fn parse_u32(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Text form of a node kept in an `other` map (lists as `[a, b]`, maps as `{k: v}`).
fn render(node: &Node) -> String {
    match node {
        Node::Scalar { value, .. } => value.clone(),
        Node::List { items, .. } => {
            let parts: Vec<String> = items.iter().map(render).collect();
            format!("[{}]", parts.join(", "))
        }
        Node::Map { entries, .. } => {
            let parts: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {}", render(v))).collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

const ENV_KEYS: &[&str] = &[
    "simd_size",
    "slm_size",
    "grf_count",
    "barrier_count",
    "has_4gb_buffers",
    "inline_data_payload_size",
    "offset_to_skip_per_thread_data_load",
];

fn execution_env(node: Option<&Node>) -> Result<ExecutionEnv, ZeInfoError> {
    let Some(node) = node else {
        return Ok(ExecutionEnv::default());
    };
    let f = Fields::of(node, "execution_env")?;
    Ok(ExecutionEnv {
        simd_size: f.number("simd_size")?.unwrap_or(0),
        slm_size: f.number("slm_size")?.unwrap_or(0),
        grf_count: f.number("grf_count")?,
        barrier_count: f.number("barrier_count")?.unwrap_or(0),
        has_4gb_buffers: f.flag("has_4gb_buffers")?,
        inline_data_payload_size: f.number("inline_data_payload_size")?.unwrap_or(0),
        offset_to_skip_per_thread_data_load: f.number("offset_to_skip_per_thread_data_load")?.unwrap_or(0),
        other: f.rest(ENV_KEYS),
    })
}

const ARG_KEYS: &[&str] = &[
    "arg_type",
    "offset",
    "size",
    "arg_index",
    "addrmode",
    "addrspace",
    "access_type",
    "slm_alignment",
    "source_offset",
];

fn payload_arg(node: &Node) -> Result<PayloadArg, ZeInfoError> {
    let f = Fields::of(node, "a payload argument")?;
    Ok(PayloadArg {
        arg_type: ArgType::parse(f.required("arg_type")?),
        offset: f.number("offset")?.unwrap_or(0),
        size: f.number("size")?.unwrap_or(0),
        arg_index: f.number("arg_index")?,
        addrmode: f.text("addrmode")?.map(str::to_string),
        addrspace: f.text("addrspace")?.map(str::to_string),
        access_type: f.text("access_type")?.map(str::to_string),
        slm_alignment: f.number("slm_alignment")?,
        source_offset: f.number("source_offset")?,
        other: f.rest(ARG_KEYS),
        line: f.line,
    })
}

fn per_thread_arg(node: &Node) -> Result<PerThreadArg, ZeInfoError> {
    let f = Fields::of(node, "a per-thread payload argument")?;
    Ok(PerThreadArg {
        arg_type: f.required("arg_type")?.to_string(),
        offset: f.number("offset")?.unwrap_or(0),
        size: f.number("size")?.unwrap_or(0),
        line: f.line,
    })
}

fn binding_table_index(node: &Node) -> Result<BindingTableIndex, ZeInfoError> {
    let f = Fields::of(node, "a binding table index")?;
    let missing = |k| ZeInfoError { line: f.line, kind: ZeInfoErrorKind::MissingKey(k) };
    Ok(BindingTableIndex {
        bti_value: f.number("bti_value")?.ok_or_else(|| missing("bti_value"))?,
        arg_index: f.number("arg_index")?.ok_or_else(|| missing("arg_index"))?,
    })
}

fn kernel(node: &Node) -> Result<ZeKernel, ZeInfoError> {
    let f = Fields::of(node, "a kernel")?;
    let execution_env = execution_env(f.get("execution_env"))?;
    let simd = execution_env.simd_size;
    Ok(ZeKernel {
        name: f.required("name")?.to_string(),
        execution_env,
        payload_arguments: map_list(f.list("payload_arguments")?, payload_arg)?,
        per_thread_payload_arguments: map_list(f.list("per_thread_payload_arguments")?, per_thread_arg)?,
        binding_table_indices: map_list(f.list("binding_table_indices")?, binding_table_index)?,
        scratch_size: buffer_size(f.list("per_thread_memory_buffers")?, ("type", "scratch"), 1)?,
        private_size: buffer_size(f.list("per_thread_memory_buffers")?, ("usage", "private_space"), simd)?,
    })
}

/// The bytes a hardware thread gets of the `per_thread_memory_buffers` whose `key` is
/// `value` (`type: scratch`, `usage: private_space`), an entry given per work-item
/// (`is_simt_thread: true`) counted `simd` times.
fn buffer_size(buffers: &[Node], (key, value): (&str, &str), simd: u32) -> Result<u32, ZeInfoError> {
    let mut total = 0u32;
    for node in buffers {
        let f = Fields::of(node, "a per-thread memory buffer")?;
        if f.text(key)? == Some(value) {
            let per_item = f.text("is_simt_thread")? == Some("true");
            let size: u32 = f.number("size")?.unwrap_or(0);
            let per_thread = if per_item { size.checked_mul(simd.max(1)) } else { Some(size) };
            total = per_thread.and_then(|s| total.checked_add(s)).ok_or_else(|| ZeInfoError {
                line: f.line,
                kind: ZeInfoErrorKind::BadNumber { key: "size".into(), value: size.to_string() },
            })?;
        }
    }
    Ok(total)
}

fn arg_info(node: &Node) -> Result<ArgInfo, ZeInfoError> {
    let f = Fields::of(node, "an args_info entry")?;
    let index = f.number("index")?;
    Ok(ArgInfo {
        index: index.map_or(fail(f.line, ZeInfoErrorKind::MissingKey("index")), Ok)?,
        name: f.string("name")?,
        address_qualifier: f.string("address_qualifier")?,
        access_qualifier: f.string("access_qualifier")?,
        type_name: f.string("type_name")?,
        type_qualifiers: f.string("type_qualifiers")?,
    })
}

fn misc_info(node: &Node) -> Result<KernelMiscInfo, ZeInfoError> {
    let f = Fields::of(node, "a kernels_misc_info entry")?;
    Ok(KernelMiscInfo {
        name: f.required("name")?.to_string(),
        args_info: map_list(f.list("args_info")?, arg_info)?,
    })
}

fn map_list<T>(
    items: &[Node],
    each: impl Fn(&Node) -> Result<T, ZeInfoError>,
) -> Result<Vec<T>, ZeInfoError> {
    items.iter().map(each).collect()
}

impl ZeInfo {
    /// Parses `.ze_info` text.
    pub fn parse(text: &str) -> Result<ZeInfo, ZeInfoError> {
        let root = yaml::parse(text)?;
        let f = Fields::of(&root, "the document")?;
        Ok(ZeInfo {
            version: f.text("version")?.map(str::to_string),
            kernels: map_list(f.list("kernels")?, kernel)?,
            kernels_misc_info: map_list(f.list("kernels_misc_info")?, misc_info)?,
        })
    }

    /// The source's kernels: all but the one IGC adds to carry the program's symbol table
    /// (its `__constant` and global variables, functions called by address): nothing to
    /// launch, and not a kernel of the source (pocl, built from the same source, lists only
    /// those).
    pub fn source_kernels(&self) -> impl Iterator<Item = &ZeKernel> {
        self.kernels.iter().filter(|k| k.name != SYMBOL_TABLE_KERNEL)
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&ZeKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The argument metadata of kernel `name`.
    pub fn misc_info(&self, name: &str) -> Option<&KernelMiscInfo> {
        self.kernels_misc_info.iter().find(|k| k.name == name)
    }
}

impl ZeKernel {
    /// PT: bytes of per-thread data (the local ids), 0 when the kernel uses none.
    pub fn per_thread_size(&self) -> u32 {
        self.per_thread_payload_arguments.iter().map(|a| a.offset.saturating_add(a.size)).max().unwrap_or(0)
    }

    /// Bytes of cross-thread data: the end of the furthest payload argument.
    pub fn cross_thread_size(&self) -> u32 {
        self.payload_arguments.iter().map(|a| a.offset.saturating_add(a.size)).max().unwrap_or(0)
    }
}

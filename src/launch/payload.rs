//! Builds the GRF payload image of one hardware thread of an OpenCL launch, following
//! `abi.md`: r0 (group ids) at byte 0, per-thread local ids at byte 32, cross-thread data
//! at CT, where the `.ze_info` payload-argument offsets are relative to CT. Also computes
//! the thread's dispatch mask and the dynamic SLM layout of `__local` pointer arguments.
//!
//! The platform is an explicit [`Platform`] parameter rather than a guess: the only
//! platform-dependent rule (the blank r1) cannot be seen from `.ze_info` alone, and callers
//! can get it from the zebin with [`Platform::of_zebin`].

use std::collections::BTreeMap;
use std::fmt;

use super::platform::Platform;
use super::zeinfo::{ArgType, PayloadArg, ZeKernel};
use crate::program::Unit;

/// The value bound to one explicit kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    /// A `__global`/`__constant` buffer: its 64-bit virtual address.
    Pointer(u64),
    /// A `__local` pointer: its slot, relative to the end of static SLM (see [`slm_layout`]).
    Local { slot: u32 },
    /// A by-value argument: exactly `sizeof(T)` bytes (a whole struct for struct arguments).
    Bytes(Vec<u8>),
}

/// The NDRange of a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdRange {
    pub work_dim: u32,
    pub global_size: [u32; 3],
    /// The enqueued (requested) work-group size.
    pub local_size: [u32; 3],
    pub global_offset: [u32; 3],
}

/// Everything that is the same for all threads of a launch.
#[derive(Clone, Debug)]
pub struct Launch<'a> {
    pub kernel: &'a ZeKernel,
    /// The vISA kernel unit; its `.input`s decide how large the image must be.
    pub unit: &'a Unit,
    pub platform: Platform,
    pub simd: u32,
    pub range: NdRange,
    /// Explicit arguments by `arg_index`.
    pub args: &'a BTreeMap<u32, ArgValue>,
}

/// The initial state of one hardware thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPayload {
    /// GRF bytes from r0 on, a whole number of registers.
    pub image: Vec<u8>,
    /// Bit i set = lane i starts enabled.
    pub dispatch_mask: u32,
}

/// Why a payload could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PayloadError {
    /// SIMD width other than 8, 16 or 32.
    BadSimd(u32),
    /// The SIMD width differs from `execution_env.simd_size` or the unit's `SimdSize`.
    SimdMismatch {
        given: u32,
        compiled: u32,
    },
    /// A local size of 0, or a global size of 0.
    EmptyRange,
    GroupOutOfRange {
        dim: usize,
        group: u32,
        count: u32,
    },
    ThreadOutOfRange {
        thread: u32,
        threads: u32,
    },
    MissingArg(u32),
    /// The argument value has the wrong kind (`expected` says which).
    ArgKind {
        index: u32,
        expected: &'static str,
    },
    /// A by-value argument has fewer bytes than its payload pieces read.
    ArgTooShort {
        index: u32,
        need: u32,
        have: usize,
    },
    /// A scalar argument has more bytes than its payload slot.
    ArgTooLong {
        index: u32,
        slot: u32,
        have: usize,
    },
    /// A payload argument kind we do not know how to fill (line of the `.ze_info` entry).
    UnsupportedArg {
        arg_type: String,
        line: u32,
    },
    /// Per-thread data too small for three dimensions of local ids at this SIMD width.
    PerThreadLayout {
        size: u32,
        simd: u32,
    },
    /// Sizes overflowed 32 bits.
    Overflow,
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PayloadError as E;
        match self {
            E::BadSimd(s) => write!(f, "SIMD width {s} is not 8, 16 or 32"),
            E::SimdMismatch { given, compiled } => {
                write!(f, "SIMD width {given} but the kernel was compiled for SIMD{compiled}")
            }
            E::EmptyRange => write!(f, "empty NDRange (a global or local size is 0)"),
            E::GroupOutOfRange { dim, group, count } => {
                write!(f, "group id {group} in dimension {dim} is outside 0..{count}")
            }
            E::ThreadOutOfRange { thread, threads } => {
                write!(f, "thread {thread} is outside the group's {threads} threads")
            }
            E::MissingArg(i) => write!(f, "no value for kernel argument {i}"),
            E::ArgKind { index, expected } => {
                write!(f, "kernel argument {index} must be {expected}")
            }
            E::ArgTooShort { index, need, have } => {
                write!(f, "kernel argument {index} has {have} bytes, needs at least {need}")
            }
            E::ArgTooLong { index, slot, have } => {
                write!(f, "kernel argument {index} has {have} bytes, its slot holds {slot}")
            }
            E::UnsupportedArg { arg_type, line } => {
                write!(f, "payload argument `{arg_type}` (.ze_info line {line}) is not supported")
            }
            E::PerThreadLayout { size, simd } => {
                write!(f, "{size} bytes of per-thread data cannot hold SIMD{simd} local ids")
            }
            E::Overflow => write!(f, "payload size overflow"),
        }
    }
}

impl std::error::Error for PayloadError {}

/// Hardware threads needed for one work-group: `ceil(Lx*Ly*Lz / simd)`.
pub fn threads_per_group(local_size: [u32; 3], simd: u32) -> u32 {
    if simd == 0 {
        return 0;
    }
    let items: u64 = local_size.iter().map(|&n| u64::from(n)).product();
    u32::try_from(items.div_ceil(u64::from(simd))).unwrap_or(u32::MAX)
}

/// Lanes of thread `thread` that hold a work-item: `l = thread*simd + i < Lx*Ly*Lz`.
pub fn dispatch_mask(local_size: [u32; 3], simd: u32, thread: u32) -> u32 {
    let items: u64 = local_size.iter().map(|&n| u64::from(n)).product();
    let first = u64::from(thread) * u64::from(simd);
    let live = items.saturating_sub(first).min(u64::from(simd));
    if live >= 32 {
        u32::MAX
    } else {
        (1u32 << live) - 1
    }
}

/// Dynamic SLM layout: the slot of every `__local` pointer argument (relative to the end of
/// static SLM) and the total SLM bytes of a work-group. `local_sizes` maps the arg index of
/// each `__local` argument to the bytes the host asked for. Slots follow argument order:
/// the first is 0, each next is the previous end aligned up to its own `slm_alignment`
/// (NEO `Kernel::setArgLocal`).
pub fn slm_layout(
    kernel: &ZeKernel,
    local_sizes: &BTreeMap<u32, u32>,
) -> Result<(u32, BTreeMap<u32, u32>), PayloadError> {
    let mut locals: BTreeMap<u32, u32> = BTreeMap::new();
    for arg in kernel.payload_arguments.iter().filter(|a| is_slm_pointer(a)) {
        if let Some(index) = arg.arg_index {
            locals.insert(index, arg.slm_alignment.unwrap_or(1).max(1));
        }
    }
    let mut slots = BTreeMap::new();
    let mut end = 0u32;
    for (&index, &align) in &locals {
        let size = *local_sizes.get(&index).ok_or(PayloadError::MissingArg(index))?;
        let slot = end.div_ceil(align).checked_mul(align).ok_or(PayloadError::Overflow)?;
        end = slot.checked_add(size).ok_or(PayloadError::Overflow)?;
        slots.insert(index, slot);
    }
    let total = kernel.execution_env.slm_size.checked_add(end).ok_or(PayloadError::Overflow)?;
    Ok((total, slots))
}

fn is_slm_pointer(arg: &PayloadArg) -> bool {
    arg.arg_type == ArgType::ArgByPointer && arg.addrmode.as_deref() == Some("slm")
}

/// GRF byte where cross-thread data starts (abi.md §1).
pub fn cross_thread_start(kernel: &ZeKernel, platform: Platform) -> u32 {
    let grf = platform.grf_size();
    // Per-thread data starts after r0.
    let pt = kernel.per_thread_size();
    if pt == 0 && platform.blank_r1_without_local_ids() {
        grf + grf
    } else {
        grf.saturating_add(pt)
    }
}

/// Where cross-thread byte `offset` lies past the cross-thread start: the first
/// `inline_data_payload_size` bytes come inline in a GRF of their own (IGC 2.x on 64-byte
/// GRFs: 32 bytes in a 64-byte register), the rest from the next register on.
fn cross_thread_at(kernel: &ZeKernel, grf: u32, offset: u32) -> u32 {
    let inline = kernel.execution_env.inline_data_payload_size;
    if inline == 0 || offset < inline {
        offset
    } else {
        inline.div_ceil(grf) * grf + (offset - inline)
    }
}

/// Work-group geometry of one group, derived from the NDRange.
struct Geometry {
    group_count: [u32; 3],
    /// Actual size of this group (smaller than enqueued for a non-uniform edge group).
    local: [u32; 3],
}

fn geometry(range: &NdRange, group: [u32; 3]) -> Result<Geometry, PayloadError> {
    let mut g = Geometry { group_count: [0; 3], local: [0; 3] };
    for (d, &id) in group.iter().enumerate() {
        let (global, local) = (range.global_size[d], range.local_size[d]);
        if global == 0 || local == 0 {
            return Err(PayloadError::EmptyRange);
        }
        let count = global.div_ceil(local);
        if id >= count {
            return Err(PayloadError::GroupOutOfRange { dim: d, group: id, count });
        }
        g.group_count[d] = count;
        // CL2.0 non-uniform groups: the last group only covers what is left.
        g.local[d] = local.min(global - id * local);
    }
    Ok(g)
}

fn check_simd(launch: &Launch<'_>) -> Result<(), PayloadError> {
    let simd = launch.simd;
    if !matches!(simd, 8 | 16 | 32) {
        return Err(PayloadError::BadSimd(simd));
    }
    let compiled = [Some(launch.kernel.execution_env.simd_size), launch.unit.simd_size()];
    for c in compiled.into_iter().flatten().filter(|&c| c != 0) {
        if c != simd {
            return Err(PayloadError::SimdMismatch { given: simd, compiled: c });
        }
    }
    Ok(())
}

/// Bytes the image needs: all cross-thread data and every `.input`, rounded to a GRF.
fn image_size(launch: &Launch<'_>, ct: u32) -> Result<usize, PayloadError> {
    let cross = ct.checked_add(launch.kernel.cross_thread_size()).ok_or(PayloadError::Overflow)?;
    let inputs = launch.unit.inputs.iter().map(|i| i.offset.saturating_add(i.size)).max();
    let end = cross.max(inputs.unwrap_or(0)).max(ct);
    let grf = launch.platform.grf_size();
    let rounded = end.div_ceil(grf).checked_mul(grf).ok_or(PayloadError::Overflow)?;
    usize::try_from(rounded).map_err(|_| PayloadError::Overflow)
}

/// Builds the payload image and dispatch mask of hardware thread `thread` of work-group
/// `group`.
pub fn build_payload(
    launch: &Launch<'_>,
    group: [u32; 3],
    thread: u32,
) -> Result<ThreadPayload, PayloadError> {
    check_simd(launch)?;
    let geo = geometry(&launch.range, group)?;
    let threads = threads_per_group(geo.local, launch.simd);
    if thread >= threads {
        return Err(PayloadError::ThreadOutOfRange { thread, threads });
    }
    let ct = cross_thread_start(launch.kernel, launch.platform);
    let mut image = vec![0u8; image_size(launch, ct)?];
    write_r0(&mut image, group)?;
    write_local_ids(&mut image, launch, geo.local, thread)?;
    let ctx = CrossThread { launch, geo: &geo, pieces: piece_counts(launch.kernel) };
    for arg in &launch.kernel.payload_arguments {
        ctx.write_arg(&mut image, ct, arg)?;
    }
    Ok(ThreadPayload { image, dispatch_mask: dispatch_mask(geo.local, launch.simd, thread) })
}

/// Writes little-endian u32 values at `at`, keeping only the first `size` bytes.
fn put_u32s(image: &mut [u8], at: u32, size: u32, values: &[u32]) -> Result<(), PayloadError> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    put(image, at, &bytes[..bytes.len().min(size as usize)])
}

fn put(image: &mut [u8], at: u32, bytes: &[u8]) -> Result<(), PayloadError> {
    let start = at as usize;
    let end = start.checked_add(bytes.len()).ok_or(PayloadError::Overflow)?;
    let dst = image.get_mut(start..end).ok_or(PayloadError::Overflow)?;
    dst.copy_from_slice(bytes);
    Ok(())
}

/// r0: group id x in dword 1, y in dword 6, z in dword 7; the rest stays 0.
fn write_r0(image: &mut [u8], group: [u32; 3]) -> Result<(), PayloadError> {
    put_u32s(image, 4, 4, &[group[0]])?;
    put_u32s(image, 24, 8, &[group[1], group[2]])
}

/// Local ids: one uint16 per lane, dimensions x, y, z, each in its own GRF-aligned block
/// (SIMD8 uses half a GRF). Disabled lanes get 0.
fn write_local_ids(
    image: &mut [u8],
    launch: &Launch<'_>,
    local: [u32; 3],
    thread: u32,
) -> Result<(), PayloadError> {
    let kernel = launch.kernel;
    for arg in &kernel.per_thread_payload_arguments {
        if arg.arg_type != "local_id" && arg.size > 0 {
            let arg_type = arg.arg_type.clone();
            return Err(PayloadError::UnsupportedArg { arg_type, line: arg.line });
        }
    }
    let pt = kernel.per_thread_size();
    if pt == 0 {
        return Ok(());
    }
    let simd = launch.simd;
    let grf = launch.platform.grf_size();
    let block = (simd * 2).div_ceil(grf) * grf;
    if pt < 3 * block {
        return Err(PayloadError::PerThreadLayout { size: pt, simd });
    }
    let items = u64::from(local[0]) * u64::from(local[1]) * u64::from(local[2]);
    for lane in 0..simd {
        let l = u64::from(thread) * u64::from(simd) + u64::from(lane);
        if l >= items {
            break;
        }
        let lx = u64::from(local[0]);
        let ly = u64::from(local[1]);
        let ids = [l % lx, (l / lx) % ly, l / (lx * ly)];
        for (d, id) in ids.into_iter().enumerate() {
            let at = grf + d as u32 * block + 2 * lane;
            let id = u16::try_from(id).map_err(|_| PayloadError::Overflow)?;
            put(image, at, &id.to_le_bytes())?;
        }
    }
    Ok(())
}

/// Number of payload pieces per explicit argument (more than one = struct by value).
fn piece_counts(kernel: &ZeKernel) -> BTreeMap<u32, u32> {
    let mut counts = BTreeMap::new();
    let byvalue = kernel.payload_arguments.iter().filter(|a| a.arg_type == ArgType::ArgByValue);
    for index in byvalue.filter_map(|a| a.arg_index) {
        *counts.entry(index).or_insert(0) += 1;
    }
    counts
}

/// What cross-thread arguments are filled from.
struct CrossThread<'a> {
    launch: &'a Launch<'a>,
    geo: &'a Geometry,
    pieces: BTreeMap<u32, u32>,
}

impl CrossThread<'_> {
    fn write_arg(&self, image: &mut [u8], ct: u32, arg: &PayloadArg) -> Result<(), PayloadError> {
        if arg.size == 0 {
            // Stateful twins of stateless pointers (offset 0, size 0) carry nothing.
            return Ok(());
        }
        let grf = self.launch.platform.grf_size();
        let at = ct
            .checked_add(cross_thread_at(self.launch.kernel, grf, arg.offset))
            .ok_or(PayloadError::Overflow)?;
        let range = &self.launch.range;
        let size = arg.size;
        match &arg.arg_type {
            ArgType::GlobalIdOffset => put_u32s(image, at, size, &range.global_offset),
            ArgType::LocalSize => put_u32s(image, at, size, &self.geo.local),
            ArgType::EnqueuedLocalSize => put_u32s(image, at, size, &range.local_size),
            ArgType::GroupCount => put_u32s(image, at, size, &self.geo.group_count),
            ArgType::GlobalSize => put_u32s(image, at, size, &range.global_size),
            ArgType::WorkDimensions => put_u32s(image, at, size, &[range.work_dim]),
            // The stack of stack calls: the kernel finds each thread's slot from its thread
            // number (`%hw_id`, or `%sr0` and `%msg0`: `Platform::hw_thread_regs`).
            ArgType::PrivateBaseStateless if self.launch.kernel.private_size > 0 => {
                put(image, at, &super::opencl::PRIVATE_BASE.to_le_bytes()[..size.min(8) as usize])
            }
            // Kernels without stateless private memory never read it (abi.md §4): 0.
            ArgType::PrivateBaseStateless => Ok(()),
            ArgType::ConstBase => {
                put(image, at, &super::opencl::DATA_SECTIONS[0].1.to_le_bytes()[..size.min(8) as usize])
            }
            ArgType::GlobalBase => {
                put(image, at, &super::opencl::DATA_SECTIONS[1].1.to_le_bytes()[..size.min(8) as usize])
            }
            ArgType::ArgByPointer => self.write_pointer(image, at, arg),
            ArgType::ArgByValue => self.write_value(image, at, arg),
            ArgType::Other(name) => {
                Err(PayloadError::UnsupportedArg { arg_type: name.clone(), line: arg.line })
            }
        }
    }

    fn value(&self, arg: &PayloadArg) -> Result<(u32, &ArgValue), PayloadError> {
        let line = arg.line;
        let index = arg
            .arg_index
            .ok_or_else(|| PayloadError::UnsupportedArg { arg_type: "no arg_index".into(), line })?;
        let value = self.launch.args.get(&index).ok_or(PayloadError::MissingArg(index))?;
        Ok((index, value))
    }

    /// Global pointers hold the 64-bit address; `__local` pointers hold the 32-bit slot in
    /// the low bytes of their slot (the rest stays 0).
    fn write_pointer(&self, image: &mut [u8], at: u32, arg: &PayloadArg) -> Result<(), PayloadError> {
        let (index, value) = self.value(arg)?;
        let keep = arg.size.min(8) as usize;
        match (is_slm_pointer(arg), value) {
            (true, ArgValue::Local { slot }) => {
                let bytes = slot.to_le_bytes();
                put(image, at, &bytes[..keep.min(4)])
            }
            (false, ArgValue::Pointer(addr)) => put(image, at, &addr.to_le_bytes()[..keep]),
            (true, _) => Err(PayloadError::ArgKind { index, expected: "a local slot" }),
            (false, _) => Err(PayloadError::ArgKind { index, expected: "a pointer" }),
        }
    }

    /// By-value bytes: this piece is `[source_offset, source_offset+size)` of the argument;
    /// a short scalar (char, short) fills only the low bytes of its zeroed slot.
    fn write_value(&self, image: &mut [u8], at: u32, arg: &PayloadArg) -> Result<(), PayloadError> {
        let (index, value) = self.value(arg)?;
        let ArgValue::Bytes(bytes) = value else {
            return Err(PayloadError::ArgKind { index, expected: "bytes" });
        };
        let from = arg.source_offset.unwrap_or(0);
        let single = self.pieces.get(&index).copied().unwrap_or(1) <= 1 && from == 0;
        if single && bytes.len() > arg.size as usize {
            return Err(PayloadError::ArgTooLong { index, slot: arg.size, have: bytes.len() });
        }
        let start = from as usize;
        // A struct piece must be fully present; a lone scalar may be shorter than its slot.
        let need = if single { from.saturating_add(1) } else { from.saturating_add(arg.size) };
        if bytes.len() < need as usize {
            return Err(PayloadError::ArgTooShort { index, need, have: bytes.len() });
        }
        let end = bytes.len().min(start + arg.size as usize);
        put(image, at, &bytes[start..end])
    }
}

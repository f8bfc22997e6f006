//! The OpenCL launch file: a kernel compiled by `ocloc`, its zebin (or `.ze_info`), the
//! NDRange and the arguments. Builds every hardware thread of every work-group with the
//! payload IGC's ABI expects, buffers at non-overlapping SVM addresses with unmapped guard
//! pages between them, and one SLM per work-group.
//!
//! ```json
//! { "kernel": "skl/k24_local_arg.simd32.visaasm", "zebin": "skl/k24_local_arg.zebin",
//!   "global_size": [96, 1, 1], "local_size": [24, 1, 1], "global_offset": [0, 0, 0],
//!   "args": [ {"index": 0, "buffer": "in/in.bin", "output": "out/in.bin"},
//!             {"index": 1, "size": 384, "output": "out/out.bin"},
//!             {"index": 2, "local": 96}, {"index": 4, "scalar": "in/n.bin"},
//!             {"index": 5, "bytes": "00006040"} ] }
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::payload::{self, build_payload, slm_layout, threads_per_group, ArgValue, NdRange};
use super::raw::{
    load_program, read_relative, KernelArg, KernelArgValue, Launch, LaunchError, Number, Output, OutputSource,
};
use super::zeinfo::{ZeInfo, ZeKernel};
use super::{NdGeometry, Platform, Zebin};
use crate::exec::Scheduler;
use crate::isa::{Opcode, Operand};
use crate::machine::{Machine, Scratch, Shared, Slm, ThreadState};
use crate::program::Program;

/// Where the first buffer goes: above 4 GiB, as `-cl-intel-greater-than-4GB-buffer-required`
/// code expects.
pub const BUFFER_BASE: u64 = 0x1_0000_0000;
/// Where the threads' private memory (the `%scratch` surface) goes: far above the buffers.
pub const SCRATCH_BASE: u64 = 0x7000_0000_0000;
/// Where the threads' stateless private memory (`private_base_stateless`: the stack of stack
/// calls) goes: above the scratch surface, which is at most 4 GiB.
pub const PRIVATE_BASE: u64 = 0x7800_0000_0000;
/// Most hardware threads one launch may have (each holds its own register file).
pub const MAX_THREADS: u64 = 1 << 20;

/// Most shared local memory a work-group may have (twice the largest real device's, so any
/// real launch fits; a hostile one would copy gigabytes per group).
pub const MAX_SLM: u32 = 256 << 10;

/// Largest buffer or SVM region a launch may declare (1 GiB): memory is mapped page by page
/// as it is touched, but outputs are read back whole.
pub const MAX_BUFFER: u64 = 1 << 30;

/// A buffer or SVM region of `size` bytes, refused above [`MAX_BUFFER`] with `field` named.
pub(super) fn check_buffer_size(file: &str, field: &str, size: u64) -> Result<(), LaunchError> {
    if size > MAX_BUFFER {
        return Err(LaunchError::new(
            file,
            Some(field),
            format!("{size} bytes is more than vdb maps for one buffer or region ({MAX_BUFFER})"),
        ));
    }
    Ok(())
}

/// Where zebin data sections (`.data.const`, `.data.global`) go.
pub const DATA_BASE: u64 = 0x8000_0000;

/// Room for one zebin data section.
const DATA_SECTION_ROOM: u64 = 0x1000_0000;

/// Where each zebin data section is mapped.
pub const DATA_SECTIONS: [(&str, u64); 3] = [
    (".data.const", DATA_BASE),
    (".data.global", DATA_BASE + DATA_SECTION_ROOM),
    (".data.constString", DATA_BASE + 2 * DATA_SECTION_ROOM),
];

/// One `args` entry: the argument by `index` or `name`, and its value in one of the forms.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArgSpec {
    pub(super) index: Option<u32>,
    pub(super) name: Option<String>,
    /// The declared type, as a check (`vdb new` writes it): `__global float*`, `int4`.
    #[serde(rename = "type")]
    pub(super) ty: Option<String>,
    pub(super) buffer: Option<String>,
    pub(super) file: Option<String>,
    pub(super) values: Option<Vec<serde_json::Value>>,
    pub(super) fill: Option<serde_json::Value>,
    pub(super) count: Option<Number>,
    pub(super) size: Option<Number>,
    pub(super) output: Option<String>,
    pub(super) local: Option<Number>,
    pub(super) scalar: Option<String>,
    pub(super) bytes: Option<String>,
    pub(super) value: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenClLaunchFile {
    kernel: String,
    #[serde(default)]
    functions: Vec<String>,
    zebin: Option<String>,
    zeinfo: Option<String>,
    /// `skl`, `tgllp`, `acm-g10` (needed with `zeinfo`; taken from the zebin otherwise).
    device: Option<String>,
    global_size: Vec<u64>,
    local_size: Option<Vec<u64>>,
    global_offset: Option<Vec<u64>>,
    #[serde(default)]
    args: Vec<ArgSpec>,
    step_limit: Option<u64>,
}

fn dims(v: &[u64], field: &str, file: &str, default: u64) -> Result<[u32; 3], LaunchError> {
    if v.is_empty() || v.len() > 3 {
        return Err(LaunchError::new(file, Some(field), "give 1 to 3 sizes"));
    }
    let mut out = [default as u32; 3];
    for (i, &x) in v.iter().enumerate() {
        out[i] = u32::try_from(x)
            .map_err(|_| LaunchError::new(file, Some(&format!("{field}[{i}]")), "too large"))?;
    }
    Ok(out)
}

/// The kernel's `.ze_info` and platform, from the zebin or a YAML file.
fn kernel_info(
    spec: &OpenClLaunchFile,
    base: &Path,
    file: &str,
) -> Result<(ZeInfo, Platform, Option<Zebin>), LaunchError> {
    let (text, zebin) = match (&spec.zebin, &spec.zeinfo) {
        (Some(path), _) => {
            let bytes = read_relative(base, path, file, "zebin")?;
            let zebin =
                Zebin::parse(&bytes).map_err(|e| LaunchError::new(file, Some("zebin"), e.to_string()))?;
            let text = zebin
                .ze_info_text()
                .map_err(|e| LaunchError::new(file, Some("zebin"), e.to_string()))?
                .to_string();
            (text, Some(zebin))
        }
        (None, Some(path)) => {
            let bytes = read_relative(base, path, file, "zeinfo")?;
            (String::from_utf8_lossy(&bytes).into_owned(), None)
        }
        (None, None) => return Err(LaunchError::new(file, Some("zebin"), "give `zebin` (or `zeinfo`)")),
    };
    let info = ZeInfo::parse(&text).map_err(|e| LaunchError::new(file, Some("zeinfo"), e.to_string()))?;
    let platform = match (&spec.device, &zebin) {
        (Some(d), _) => Platform::from_device_name(d)
            .ok_or_else(|| LaunchError::new(file, Some("device"), Platform::unknown_device(d)))?,
        (None, Some(z)) => Platform::of_zebin(z).ok_or_else(|| {
            LaunchError::new(file, Some("zebin"), "the zebin names no known platform; add `device`")
        })?,
        (None, None) => return Err(LaunchError::new(file, Some("device"), "with `zeinfo`, give `device`")),
    };
    Ok((info, platform, zebin))
}

/// A global buffer argument placed in SVM.
pub(super) struct BufferArg {
    pub(super) index: u32,
    pub(super) address: u64,
    pub(super) size: u64,
    pub(super) init: Option<Vec<u8>>,
    pub(super) output: Option<String>,
}

/// The arguments bound by `super::bind`: by-value bytes and buffer addresses by index, the
/// bytes asked for each `__local` pointer, the buffers to map.
pub(super) struct Bound {
    pub(super) values: BTreeMap<u32, ArgValue>,
    pub(super) local_sizes: BTreeMap<u32, u32>,
    pub(super) buffers: Vec<BufferArg>,
}

/// The bound arguments in index order, named and typed from the zebin's `args_info`.
fn kernel_args(bound: &Bound, info: &[super::zeinfo::ArgInfo]) -> Vec<KernelArg> {
    let mut indices: Vec<u32> = bound.values.keys().chain(bound.local_sizes.keys()).copied().collect();
    indices.sort_unstable();
    indices.dedup();
    indices
        .into_iter()
        .filter_map(|index| {
            let value = match (bound.values.get(&index), bound.local_sizes.get(&index)) {
                (_, Some(&bytes)) => KernelArgValue::Local { bytes },
                (Some(ArgValue::Bytes(b)), _) => KernelArgValue::Bytes(b.clone()),
                (Some(ArgValue::Pointer(_)), _) => {
                    let b = bound.buffers.iter().find(|b| b.index == index)?;
                    KernelArgValue::Buffer { address: b.address, size: b.size }
                }
                _ => return None,
            };
            let info = info.iter().find(|a| a.index == index);
            Some(KernelArg {
                index,
                name: info.map_or(String::new(), |a| a.name.clone()),
                // The zebin writes `uint*;8`: the type, then its size.
                type_name: info
                    .map_or(String::new(), |a| a.type_name.split(';').next().unwrap_or("").to_string()),
                address_qualifier: info.map_or(String::new(), |a| a.address_qualifier.clone()),
                value,
            })
        })
        .collect()
}

/// Maps zebin data sections and resolves the data symbols `faddr` instructions name.
fn load_data_sections(machine: &mut Machine, zebin: &Zebin, program: &Program) {
    let mut bases: BTreeMap<u16, u64> = BTreeMap::new();
    // Each section at a fixed address (`DATA_SECTIONS`), so that the payload's const_base and
    // global_base need no lookup.
    for (name, at) in DATA_SECTIONS {
        if let Some((index, section)) = zebin.section(name) {
            if section.data.is_empty() || section.data.len() as u64 > DATA_SECTION_ROOM {
                continue;
            }
            machine.svm.map(at, section.data.len() as u64, name);
            let _ = machine.svm.write(at, &section.data);
            bases.insert(index, at);
        }
    }
    machine.relocations = program
        .insts
        .iter()
        .map(|inst| match (inst.op, inst.operands.first()) {
            (Opcode::Faddr, Some(Operand::Function(name))) => {
                let sym = zebin.symbol(name)?;
                Some(bases.get(&sym.section)? + sym.value)
            }
            _ => None,
        })
        .collect();
}

/// What builds a launch's threads lazily (see `machine::Threads::lazy`): the payload plan,
/// owned.
struct LaunchThreads {
    program: Arc<Program>,
    kernel: ZeKernel,
    platform: Platform,
    simd: u32,
    range: NdRange,
    args: BTreeMap<u32, ArgValue>,
    groups: [u32; 3],
    per_group: u32,
    /// Private memory, and the GRF offset of r0 whose dword 5 gives each thread its slot.
    scratch: Option<(Scratch, usize)>,
    /// Stateless private memory, and the GRF offsets of `%hw_id`, `%sr0` and `%msg0`, from
    /// which the kernel computes each thread's slot.
    stack: Option<(Scratch, [Option<usize>; 3])>,
}

impl LaunchThreads {
    /// Thread `i`'s payload (groups in x-fastest order, `per_group` threads each).
    fn payload(&self, i: usize) -> Result<payload::ThreadPayload, payload::PayloadError> {
        let plan = payload::Launch {
            kernel: &self.kernel,
            unit: self.program.kernel(),
            platform: self.platform,
            simd: self.simd,
            range: self.range.clone(),
            args: &self.args,
        };
        let g = (i / self.per_group as usize) as u32;
        let [gx, gy] = [self.groups[0], self.groups[1]];
        build_payload(&plan, [g % gx, g / gx % gy, g / (gx * gy)], (i % self.per_group as usize) as u32)
    }
}

impl crate::machine::ThreadMaker for LaunchThreads {
    fn make(&self, i: usize) -> ThreadState {
        let g = (i / self.per_group as usize) as u32;
        // The load built the first and the last payload: building one cannot fail for a
        // reason that holds for some threads only (a thread with no payload would stay empty).
        let payload =
            self.payload(i).unwrap_or(payload::ThreadPayload { image: Vec::new(), dispatch_mask: 0 });
        let mut thread = ThreadState::new(&self.program, self.simd, payload.dispatch_mask);
        super::raw::apply_payload(&self.program, &mut thread, &payload.image);
        // r0.5 bits 31:10: the offset of the thread's slot in the scratch surface.
        if let Some((s, r0)) = self.scratch {
            if let Some(r0_5) = thread.grf.get_mut(r0 + 20..r0 + 24) {
                r0_5.copy_from_slice(&(((i as u64 % s.slots) * s.per_thread) as u32).to_le_bytes());
            }
        }
        if let Some((s, regs)) = self.stack {
            let id = (i as u64 % s.slots) as u32;
            let (sr0, msg0) = self.platform.hw_thread_regs(id);
            for (at, value) in regs.into_iter().zip([id, sr0, msg0]) {
                if let Some(reg) = at.and_then(|at| thread.grf.get_mut(at..at + 4)) {
                    reg.copy_from_slice(&value.to_le_bytes());
                }
            }
        }
        thread.group = g;
        thread.index_in_group = (i % self.per_group as usize) as u32;
        thread
    }
}

pub(super) fn build(
    spec: OpenClLaunchFile,
    base: &Path,
    file: &str,
    reuse: Option<&Arc<Program>>,
) -> Result<Launch, LaunchError> {
    let (info, platform, zebin) = kernel_info(&spec, base, file)?;
    let program = match reuse {
        Some(p) => p.clone(),
        None => Arc::new(load_program(base, &spec.kernel, &spec.functions, platform.grf_size(), file)?),
    };
    let name = program.kernel().name.clone();
    let kernel = info.kernel(&name).ok_or_else(|| {
        LaunchError::new(file, Some("zebin"), format!("the .ze_info has no kernel `{name}`"))
    })?;
    let global = dims(&spec.global_size, "global_size", file, 1)?;
    let local = dims(spec.local_size.as_deref().unwrap_or(&[1]), "local_size", file, 1)?;
    let offset = dims(spec.global_offset.as_deref().unwrap_or(&[0]), "global_offset", file, 0)?;
    for d in 0..3 {
        if local[d] == 0 || global[d] == 0 || global[d] % local[d] != 0 {
            return Err(LaunchError::new(
                file,
                Some(&format!("global_size[{d}]")),
                format!("{} is not a positive multiple of local_size[{d}] = {}", global[d], local[d]),
            ));
        }
    }
    let simd = kernel.execution_env.simd_size;
    if !matches!(simd, 1 | 8 | 16 | 32) {
        let msg = format!("the kernel's ze_info gives simd_size {simd}: kernels run at SIMD 1, 8, 16 or 32");
        let field = if spec.zebin.is_some() { "zebin" } else { "zeinfo" };
        return Err(LaunchError::new(file, Some(field), msg));
    }
    let arg_names = info.misc_info(&name).map(|m| m.args_info.clone()).unwrap_or_default();
    let bound = super::bind::bind_args(&spec.args, kernel, &arg_names, base, file)?;
    let (slm_dynamic, slots) = slm_layout(kernel, &bound.local_sizes)
        .map_err(|e| LaunchError::new(file, Some("args"), e.to_string()))?;
    let mut values = bound.values.clone();
    for (index, slot) in slots {
        values.insert(index, ArgValue::Local { slot });
    }
    let range = NdRange {
        work_dim: spec.global_size.len() as u32,
        global_size: global,
        local_size: local,
        global_offset: offset,
    };
    let mut machine = Machine::default();
    if let Some(z) = &zebin {
        load_data_sections(&mut machine, z, &program);
    }
    let mut outputs = Vec::new();
    let mut buffers = Vec::new();
    for BufferArg { index, address: addr, size, init, output } in &bound.buffers {
        let label = format!("arg{index}");
        if *size > 0 {
            machine.svm.map_buffer(*addr, *size, &label);
        }
        if let Some(bytes) = init {
            machine
                .svm
                .write(*addr, bytes)
                .map_err(|e| LaunchError::new(file, Some("args"), e.to_string()))?;
        }
        if let Some(out) = output {
            outputs.push(Output {
                source: OutputSource::Svm { address: *addr, size: *size },
                path: out.clone(),
                field: format!("args[index {index}].output"),
            });
        }
        buffers.push((label, *addr, *size));
        if let Some(info) = arg_names.iter().find(|a| a.index == *index && !a.name.is_empty()) {
            buffers.push((info.name.clone(), *addr, *size));
        }
    }
    let args = kernel_args(&bound, &arg_names);
    // `slm_layout`'s total holds the static SLM and every `__local` argument's slot.
    let slm_total = slm_dynamic;
    if slm_total > MAX_SLM {
        let msg = format!(
            "{slm_total} bytes of shared local memory a work-group; devices have at most {MAX_SLM} (64-128 KiB on today's)"
        );
        return Err(LaunchError::new(file, Some("args"), msg));
    }
    let groups = [global[0] / local[0], global[1] / local[1], global[2] / local[2]];
    let per_group = threads_per_group(local, simd);
    let total_threads = groups.iter().map(|&g| g as u64).product::<u64>() * per_group as u64;
    if total_threads > MAX_THREADS {
        let msg = format!("{total_threads} hardware threads; vdb runs at most {MAX_THREADS} per launch");
        return Err(LaunchError::new(file, Some("global_size"), msg));
    }
    // Named barriers keep their counts past the kernel's own SLM (only where the kernel has
    // one: elsewhere an access past the SLM stays a fault).
    let nbar = program.insts.iter().any(|i| i.op == Opcode::Nbarrier);
    let extra = if nbar { crate::exec::NBAR_BYTES } else { 0 };
    let shared_slm = Shared::new(Slm::new(slm_total as usize + extra));
    let n_groups = groups.iter().product::<u32>();
    // A region of per-thread slots at `base`, at most `numbers` of them (and 4 GiB in all),
    // mapped under `name`: zeros until written (the race check reports reads of bytes nothing
    // wrote).
    let mut private = |name: &str, base: u64, per_thread: u64, numbers: u64| {
        let slots = total_threads.min(numbers).min((1 << 32) / per_thread).max(1);
        let region = Scratch { base, per_thread, slots };
        machine.svm.map_buffer(base, per_thread * slots, name);
        buffers.push((name.to_string(), base, per_thread * slots));
        region
    };
    // Private memory: a slot of the scratch surface per thread (slots reused only past the
    // 4 GiB r0.5 can address).
    let scratch = (kernel.scratch_size > 0).then(|| {
        private("private", SCRATCH_BASE, u64::from(kernel.scratch_size).next_multiple_of(1024), u64::MAX)
    });
    // Stateless private memory: a slot per thread, its index the thread number the kernel
    // computes from `%hw_id` or `%sr0` and `%msg0` (each thread its own while the platform's
    // numbers last: real hardware numbers the threads that run at once).
    let stack = (kernel.private_size > 0)
        .then(|| private("stack", PRIVATE_BASE, u64::from(kernel.private_size), platform.hw_thread_ids()));
    if let Some(s) = scratch {
        if let Some(id) = program.states.iter().position(|st| st.name == "%scratch") {
            if machine.surfaces.len() <= id {
                machine.surfaces.resize(id + 1, None);
            }
            machine.surfaces[id] = Some((s.base, s.per_thread * s.slots));
        }
    }
    (machine.scratch, machine.stack) = (scratch, stack);
    // Threads are built as a run first reaches them (a launch of a million threads would
    // otherwise build gigabytes of registers before its first step); the first and the last
    // are built here, so that a payload that cannot be built is a launch error.
    let maker = LaunchThreads {
        program: program.clone(),
        kernel: kernel.clone(),
        platform,
        simd,
        range: range.clone(),
        args: values.clone(),
        groups,
        per_group,
        scratch: scratch
            .zip(program.var_id(crate::isa::UnitId(0), "%r0").map(|v| program.var(v).offset as usize)),
        stack: stack.map(|s| {
            let at =
                |name| program.var_id(crate::isa::UnitId(0), name).map(|v| program.var(v).offset as usize);
            (s, [at("%hw_id"), at("%sr0"), at("%msg0")])
        }),
    };
    for i in [0, total_threads.saturating_sub(1) as usize] {
        maker.payload(i).map_err(|e| LaunchError::new(file, Some("args"), e.to_string()))?;
    }
    machine.threads = crate::machine::Threads::lazy(total_threads as usize, Arc::new(maker));
    let mut ranges = Vec::with_capacity(n_groups as usize);
    let mut labels = Vec::with_capacity(total_threads as usize);
    for group_index in 0..n_groups {
        let g = group_index;
        let group = [g % groups[0], g / groups[0] % groups[1], g / (groups[0] * groups[1])];
        let first = group_index * per_group;
        labels.extend((0..per_group).map(|t| (group, t)));
        machine.slms.push(shared_slm.clone());
        ranges.push(first..first + per_group);
    }
    let mut scheduler = Scheduler::new(ranges);
    scheduler.step_limit = spec.step_limit.unwrap_or(1_000_000_000);
    Ok(Launch {
        program,
        machine,
        scheduler,
        outputs,
        base_dir: base.to_path_buf(),
        thread_labels: labels,
        buffers,
        geometry: Some(NdGeometry { range, simd }),
        args,
    })
}

/// Whether a launch file's JSON is the OpenCL form.
pub(super) fn is_opencl(value: &serde_json::Value) -> bool {
    value.get("zebin").is_some() || value.get("zeinfo").is_some() || value.get("global_size").is_some()
}

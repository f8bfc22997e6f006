//! clEnqueueNDRangeKernel: each launch is written as a source launch file (the program's
//! source, the arguments as they are at the enqueue: buffers' bytes in `in/`, scalars as
//! hex, `__local` sizes; names and sizes) under the record folder, `NNNN-KERNEL/launch.json`,
//! then run in vdb's engine (a plain run) from the compiled form of the same launch; the
//! buffers' bytes afterwards go back to the program and to `recorded/` (what replaying the
//! launch must give). `VDB_RECORD_DIR` names the folder (default `./vdb-record`);
//! `VDB_RECORD_ONLY` saves only that kernel's launches (the others run all the same).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use vdb::exec::{run_to_end_on, Interpreter};
use vdb::launch::raw::{self, KernelArgValue};

use crate::events::{complete, wait_list};
use crate::ffi::*;
use crate::handles;
use crate::objects::{lock, now_ns, ArgValue, Kernel, Mem};

/// Launches so far in this process (the number of the next).
static LAUNCHES: AtomicU32 = AtomicU32::new(0);

pub fn record_dir() -> PathBuf {
    std::env::var_os("VDB_RECORD_DIR").map_or_else(|| PathBuf::from("vdb-record"), PathBuf::from)
}

/// An argument's file name: its source name, or `argN`.
fn arg_name(kernel: &Kernel, index: usize) -> String {
    let name = kernel.args_info.get(index).map(|a| a.name.as_str()).unwrap_or("");
    let safe = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if safe {
        name.to_string()
    } else {
        format!("arg{index}")
    }
}

/// The NDRange: sizes padded to three dimensions, the work-group size chosen as a driver
/// would when the program gives none (per dimension, the largest divisor that keeps the
/// group within the device's limit).
pub struct Range {
    pub global: Vec<u64>,
    pub local: Vec<u64>,
    pub offset: Vec<u64>,
}

fn range(dims: u32, offset: *const usize, global: *const usize, local: *const usize) -> Result<Range, i32> {
    if !(1..=3).contains(&dims) {
        return Err(CL_INVALID_WORK_DIMENSION);
    }
    let n = dims as usize;
    let g: Vec<u64> = read_array(global, n).iter().map(|x| *x as u64).collect();
    if g.len() != n || g.contains(&0) {
        return Err(CL_INVALID_GLOBAL_WORK_SIZE);
    }
    let max = crate::device::spec().max_work_group as u64;
    let l: Vec<u64> = if local.is_null() {
        let mut room = max;
        g.iter()
            .map(|&x| {
                let d = (1..=room.min(x)).rev().find(|d| x % d == 0).unwrap_or(1);
                room /= d;
                d
            })
            .collect()
    } else {
        read_array(local, n).iter().map(|x| *x as u64).collect()
    };
    if l.contains(&0) || g.iter().zip(&l).any(|(g, l)| g % l != 0) || l.iter().product::<u64>() > max {
        return Err(CL_INVALID_WORK_GROUP_SIZE);
    }
    let o: Vec<u64> =
        if offset.is_null() { vec![0; n] } else { read_array(offset, n).iter().map(|x| *x as u64).collect() };
    Ok(Range { global: g, local: l, offset: o })
}

/// One launch's arguments as files and JSON entries, and the buffers to copy back.
struct Written {
    args: Vec<Value>,
    /// (argument index, file name, buffer) of every buffer argument.
    buffers: Vec<(u32, String, Arc<Mem>)>,
}

fn write_args(kernel: &Kernel, dir: &Path) -> Result<Written, i32> {
    let set = lock(&kernel.args).clone();
    let mut written = Written { args: Vec::new(), buffers: Vec::new() };
    let io = |e: std::io::Error| {
        crate::log::warn(&format!("cannot write the launch under {}: {e}", dir.display()));
        CL_OUT_OF_RESOURCES
    };
    std::fs::create_dir_all(dir.join("in")).map_err(io)?;
    for (i, arg) in set.iter().enumerate() {
        let name = arg_name(kernel, i);
        let mut entry = Map::new();
        entry.insert("index".into(), json!(i));
        if kernel.args_info.get(i).is_some_and(|a| !a.name.is_empty()) {
            entry.insert("name".into(), json!(kernel.args_info[i].name));
        }
        match arg.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)? {
            ArgValue::Bytes(b) => {
                entry.insert("bytes".into(), json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>()));
            }
            ArgValue::Local(n) => {
                entry.insert("local".into(), json!(n));
            }
            ArgValue::Mem(None) => {
                crate::log::unsupported("a NULL buffer argument");
                return Err(CL_INVALID_KERNEL_ARGS);
            }
            ArgValue::Mem(Some((_, mem))) => {
                let file = format!("{name}.bin");
                std::fs::write(dir.join("in").join(&file), mem.bytes()).map_err(io)?;
                entry.insert("buffer".into(), json!(format!("in/{file}")));
                entry.insert("output".into(), json!(format!("out/{file}")));
                written.buffers.push((i as u32, file, mem.clone()));
            }
        }
        written.args.push(Value::Object(entry));
    }
    Ok(written)
}

/// The launch file as saved: a source launch (`vdb replay` compiles it as vdb does any).
fn saved_launch(kernel: &Kernel, r: &Range, args: &[Value]) -> Value {
    let st = lock(&kernel.program.state);
    json!({
        "source": "program.cl",
        "kernel": kernel.compiled.name,
        "device": crate::device::spec().name,
        "build_options": st.options,
        "global_size": r.global,
        "local_size": r.local,
        "global_offset": r.offset,
        "args": args,
    })
}

/// The same launch in the compiled form the engine loads: the build's files, no outputs
/// (the buffers are read back from the machine).
fn compiled_launch(kernel: &Kernel, saved: &Value) -> Value {
    let mut v = saved.clone();
    if let Value::Object(obj) = &mut v {
        obj.remove("source");
        obj.remove("build_options");
        let text = |p: &Path| Value::String(p.to_string_lossy().into_owned());
        obj.insert("kernel".into(), text(&kernel.compiled.visaasm));
        obj.insert("zebin".into(), text(&kernel.build.zebin));
        obj.insert("functions".into(), kernel.compiled.functions.iter().map(|p| text(p)).collect());
        if let Some(Value::Array(args)) = obj.get_mut("args") {
            args.iter_mut().filter_map(Value::as_object_mut).for_each(|a| drop(a.remove("output")));
        }
    }
    v
}

/// The result of one run: the faulting message, if it faulted.
fn run(kernel: &Kernel, value: &Value, dir: &Path, label: &str, w: &Written) -> Result<Option<String>, i32> {
    let reuse = lock(&kernel.parsed).clone();
    let mut launch = raw::load_value(value, dir, label, reuse.as_ref()).map_err(|e| {
        crate::log::warn(&format!("{label}: {e}"));
        CL_INVALID_KERNEL_ARGS
    })?;
    *lock(&kernel.parsed) = Some(launch.program.clone());
    let interp = Interpreter::new(launch.program.clone());
    // The work-groups shared out over the machine's cores, as `vdb run` does.
    let jobs = std::thread::available_parallelism().unwrap_or(std::num::NonZeroUsize::MIN);
    let result = run_to_end_on(&interp, &mut launch.machine, &mut launch.scheduler, jobs);
    let fault = result.err().map(|f| f.render_in(&launch.program, launch.geometry.as_ref()));
    for (index, _, mem) in &w.buffers {
        let arg = launch.args.iter().find(|a| a.index == *index);
        if let Some(KernelArgValue::Buffer { address, size }) = arg.map(|a| &a.value) {
            let mut bytes = vec![0u8; *size as usize];
            if launch.machine.svm.read(*address, &mut bytes).is_ok() {
                mem.store.write(mem.offset, &bytes[..mem.size.min(bytes.len())]);
            }
        }
    }
    Ok(fault)
}

/// Writes `recorded/` (the buffers as the program got them) and the launch's source.
fn save_results(kernel: &Kernel, dir: &Path, w: &Written) {
    let _ = std::fs::create_dir_all(dir.join("recorded"));
    for (_, file, mem) in &w.buffers {
        let _ = std::fs::write(dir.join("recorded").join(file), mem.bytes());
    }
    let _ = std::fs::write(dir.join("program.cl"), &kernel.program.source);
}

fn launch(kernel: &Kernel, r: &Range) -> Result<Option<String>, i32> {
    let number = LAUNCHES.fetch_add(1, Ordering::SeqCst);
    let name = &kernel.compiled.name;
    let only = std::env::var("VDB_RECORD_ONLY").ok().filter(|s| !s.is_empty());
    let keep = only.as_deref().is_none_or(|k| k == name);
    let root = record_dir();
    let dir = if keep {
        root.join(format!("{number:04}-{name}"))
    } else {
        std::env::temp_dir().join(format!("vdb-launch-{}-{number}", std::process::id()))
    };
    let label = format!("launch {number} ({name})");
    let w = write_args(kernel, &dir)?;
    let saved = saved_launch(kernel, r, &w.args);
    if keep {
        let text = serde_json::to_string_pretty(&saved).unwrap_or_default();
        let _ = std::fs::write(dir.join("launch.json"), text + "\n");
    }
    let result = run(kernel, &compiled_launch(kernel, &saved), &dir, &label, &w);
    if keep {
        save_results(kernel, &dir, &w);
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let fault = result?;
    if let Some(f) = &fault {
        crate::log::warn(&format!(
            "{label} faulted (`vdb replay {} {number}` to debug it):\n{f}",
            root.display()
        ));
    }
    Ok(fault)
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_nd_range_kernel(
    q: Handle,
    k: Handle,
    dims: u32,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let queue = handles::queue(q)?;
        let kernel = handles::kernel(k)?;
        wait_list(num_events, events)?;
        let r = range(dims, offset, global, local)?;
        let start = now_ns();
        let status = match launch(&kernel, &r)? {
            None => CL_SUCCESS,
            Some(_) => {
                *lock(&queue.failed) = Some(CL_OUT_OF_RESOURCES);
                CL_OUT_OF_RESOURCES
            }
        };
        complete(q, 0x11F0, start, event, status)
    })
}

pub extern "C" fn enqueue_task(
    q: Handle,
    k: Handle,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    let one = [1usize];
    enqueue_nd_range_kernel(q, k, 1, std::ptr::null(), one.as_ptr(), one.as_ptr(), num_events, events, event)
}

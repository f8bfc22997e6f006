//! A tiny harness: wrap instructions in a kernel, parse it, run one thread, read variables;
//! and debugging sessions over the sample launches, driven by command lines.

use std::sync::Arc;

use vdb::asm::{parse_files, ParseOptions};
use vdb::exec::{run_to_end, Fault, Interpreter, NullObserver, Observer, Scheduler};
use vdb::isa::UnitId;
use vdb::machine::{Machine, Shared, Slm, ThreadState};
use vdb::program::{Program, SourceFile};

/// The generated tests' random numbers: a 64-bit LCG step, its state's high bits folded in.
pub fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state ^ (*state >> 29)
}

/// Hears the memory reads of a run: space, address and length, in order.
#[derive(Default)]
pub struct MemReads(pub Vec<(vdb::machine::MemSpace, u64, u64)>);

impl Observer for MemReads {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: vdb::machine::ThreadId, _: u32, _: &[u8], _: &[u8]) {}
    fn pred(&mut self, _: vdb::machine::ThreadId, _: vdb::isa::PredId, _: u32, _: u32) {}
    fn addr(&mut self, _: vdb::machine::ThreadId, _: u32, _: u32, _: u32) {}
    fn mem(&mut self, _: vdb::machine::ThreadId, _: vdb::machine::MemSpace, _: u64, _: &[u8], _: &[u8]) {}
    fn control(&mut self, _: vdb::machine::ThreadId, _: &vdb::machine::Control, _: &vdb::machine::Control) {}
    fn mem_read(&mut self, _: vdb::machine::ThreadId, space: vdb::machine::MemSpace, addr: u64, len: u64) {
        self.0.push((space, addr, len));
    }
}

/// A finished (or faulted) single-thread run.
pub struct Run {
    pub program: Arc<Program>,
    pub machine: Machine,
    pub result: Result<u64, Fault>,
}

/// Builds a kernel from declarations and body lines (SIMD `simd`).
pub fn kernel_text(decls: &str, body: &str, simd: u32) -> String {
    format!(
        ".version 4.1\n.kernel \"t\"\n{decls}\n.kernel_attr Target=\"3d\"\n.kernel_attr SimdSize={simd}\n.function \"_main_0\"\n\n_main_0:\n{body}\n    ret (M1, 1)\n"
    )
}

pub fn parse(text: &str) -> Program {
    let file = SourceFile { path: "t.visaasm".into(), text: text.into() };
    match parse_files(vec![file], &ParseOptions::default()) {
        Ok(p) => p,
        Err(d) => panic!("does not parse:\n{}\n{text}", d.render()),
    }
}

/// Runs `body` on one SIMD-`simd` thread with all lanes dispatched (or `mask`).
pub fn run_with(
    decls: &str,
    body: &str,
    simd: u32,
    mask: u32,
    setup: impl FnOnce(&Program, &mut Machine),
) -> Run {
    run_text(&kernel_text(decls, body, simd), simd, mask, setup)
}

/// Runs a whole kernel text on one thread.
pub fn run_text(text: &str, simd: u32, mask: u32, setup: impl FnOnce(&Program, &mut Machine)) -> Run {
    run_observed(text, simd, mask, setup, &mut NullObserver)
}

/// [`run_text`] with `obs` hearing every change.
pub fn run_observed<O: Observer>(
    text: &str,
    simd: u32,
    mask: u32,
    setup: impl FnOnce(&Program, &mut Machine),
    obs: &mut O,
) -> Run {
    let program = Arc::new(parse(text));
    let thread = ThreadState::new(&program, simd, mask);
    let mut machine = Machine {
        threads: vec![Shared::new(thread)].into(),
        slms: vec![Shared::new(Slm::new(4096))].into(),
        ..Machine::default()
    };
    setup(&program, &mut machine);
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(1);
    sched.step_limit = 1_000_000;
    let result = run_to_end(&interp, &mut machine, &mut sched, obs).map(|s| s.steps);
    Run { program, machine, result }
}

pub fn run(decls: &str, body: &str, simd: u32) -> Run {
    let mask = if simd >= 32 { u32::MAX } else { (1u32 << simd) - 1 };
    run_with(decls, body, simd, mask, |_, _| {})
}

impl Run {
    pub fn ok(self) -> Run {
        if let Err(f) = &self.result {
            panic!("faulted: {}", f.render(&self.program));
        }
        self
    }

    /// Raw bytes of a variable in thread 0.
    pub fn bytes(&self, name: &str) -> Vec<u8> {
        let v = self.program.var(self.program.var_id(UnitId(0), name).unwrap_or_else(|| panic!("no {name}")));
        self.machine.threads[0].grf[v.offset as usize..(v.offset + v.size) as usize].to_vec()
    }

    pub fn u32s(&self, name: &str) -> Vec<u32> {
        self.bytes(name).chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    pub fn i32s(&self, name: &str) -> Vec<i32> {
        self.u32s(name).into_iter().map(|v| v as i32).collect()
    }

    pub fn u64s(&self, name: &str) -> Vec<u64> {
        self.bytes(name).chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
    }

    pub fn f32s(&self, name: &str) -> Vec<f32> {
        self.u32s(name).into_iter().map(f32::from_bits).collect()
    }

    pub fn pred(&self, name: &str) -> u32 {
        let idx = self.program.preds.iter().position(|p| p.name == name).expect("predicate");
        self.machine.threads[0].preds[idx]
    }
}

/// Writes bytes into a variable of thread 0 before the run.
pub fn set_var(program: &Program, machine: &mut Machine, name: &str, bytes: &[u8]) {
    let v = program.var(program.var_id(UnitId(0), name).expect("variable"));
    let t = machine.thread_mut(vdb::machine::ThreadId(0));
    t.grf[v.offset as usize..v.offset as usize + bytes.len()].copy_from_slice(bytes);
}

pub fn le32(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A launch file under `sample-kernels/`.
pub fn launch(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels").join(rel)
}

/// A debugging session over a launch file.
pub fn session(path: &std::path::Path) -> vdb::session::Session {
    vdb::session::Session::new(vdb::launch::raw::load(path).unwrap_or_else(|e| panic!("{e}")))
}

/// A debugging session on kernel text that needs no inputs, as `vdb KERNEL.visaasm` opens
/// one (the text goes through a scratch file named after `name`).
pub fn session_on_text(name: &str, text: &str) -> vdb::session::Session {
    let path = crate::golden::scratch(name).join(format!("{name}.visaasm"));
    std::fs::write(&path, text).expect("kernel written");
    vdb::session::Session::new(vdb::launch::raw::from_kernel(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// Runs one command line, which must succeed.
pub fn cmd(s: &mut vdb::session::Session, line: &str) -> vdb::session::Reply {
    let parsed = vdb::session::parse(line).expect("parses").expect("a command");
    s.execute(&parsed).unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// Field `key` of each object in the JSON array `list`, as numbers (a reply's `writes`,
/// `results`, `lines`…).
pub fn numbers(list: &serde_json::Value, key: &str) -> Vec<u64> {
    list.as_array().expect("an array").iter().filter_map(|item| item[key].as_u64()).collect()
}

/// Runs the session to the end; then the global index and pc of each of thread `t`'s steps.
pub fn thread_steps(s: &mut vdb::session::Session, t: u32) -> (Vec<u64>, Vec<u32>) {
    s.run_to_end();
    let steps: Vec<u64> = (0..s.recorder.len()).filter(|&x| s.recorder.trace.thread(x) == t).collect();
    let pcs = steps.iter().map(|&x| s.recorder.trace.at(x).pc).collect();
    (steps, pcs)
}

/// Every `.visaasm` file under `dir` (recursively, in name order) onto `out`; a missing
/// directory adds none.
pub fn visaasm_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            visaasm_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "visaasm") {
            out.push(p);
        }
    }
}

//! One step of one thread: channel enables, the flat dispatch over opcode families, and the
//! pc / reconvergence bookkeeping after the instruction.

use std::sync::Arc;

use super::alu::{self, AluOut, SrcLanes};
use super::control::{self, size_mask};
use super::ctx::Ctx;
use super::fault::{Fault, FaultKind};
use super::observer::{Observer, StepHooks};
use super::tables::Tables;
use crate::isa::{
    DataType, ExecMask, Family, InstIdx, Opcode, Operand, PredCombine, PredId, Predicate, Region, SrcMod,
    SubOp,
};
use crate::machine::{Control, Machine, ThreadId, ThreadState, ThreadStatus};
use crate::program::{Inst, Program};

/// What a step did, beyond its writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StepEvent {
    /// The instruction ran; the thread continues.
    Executed,
    /// The thread reached a `barrier` and waits for its work-group.
    Barrier,
    /// The thread finished (its final `ret`).
    Finished,
    /// The thread was not runnable; nothing happened.
    Idle,
}

/// The outcome of one step.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StepInfo {
    pub pc: InstIdx,
    /// Channel enables of the instruction (bit n = lane n of the instruction).
    pub chen: u32,
    pub event: StepEvent,
}

/// A test made where a thread is about to run an instruction of a stop set: whether it
/// stops there (a breakpoint's condition on the thread's own state).
pub type StopTest<'a> = dyn FnMut(&ThreadState, ThreadId, InstIdx) -> bool + Send + 'a;

/// Where a burst stops: before the instructions of `pcs`, where `holds` (if given) holds.
pub struct Stops<'s, 't> {
    pub pcs: &'s PcSet,
    pub holds: Option<&'s mut StopTest<'t>>,
}

/// A set of instruction indices (a bitmap): the instructions a burst stops before, so that
/// a recording can test a breakpoint's condition on the thread's state there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcSet(Vec<u64>);

impl PcSet {
    pub fn new(pcs: impl IntoIterator<Item = u32>) -> PcSet {
        let mut set = PcSet::default();
        for pc in pcs {
            set.insert(pc);
        }
        set
    }

    #[inline(always)]
    pub fn contains(&self, pc: u32) -> bool {
        self.0.get(pc as usize / 64).is_some_and(|w| w >> (pc % 64) & 1 != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    #[inline(always)]
    pub fn insert(&mut self, pc: u32) {
        let w = pc as usize / 64;
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (pc % 64);
    }

    /// Inserts instructions `first..end`.
    pub fn insert_range(&mut self, first: u32, end: u32) {
        if first >= end {
            return;
        }
        let last = end - 1;
        let (w0, w1) = (first as usize / 64, last as usize / 64);
        if self.0.len() <= w1 {
            self.0.resize(w1 + 1, 0);
        }
        for w in w0..=w1 {
            // The bits of word w from `first` (or 0) to `last` (or 63).
            let lo = if w == w0 { first % 64 } else { 0 };
            let hi = if w == w1 { last % 64 } else { 63 };
            self.0[w] |= (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
        }
    }

    /// Adds every instruction of `other`.
    pub fn union_with(&mut self, other: &PcSet) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine |= theirs;
        }
    }

    /// Whether the two hold an instruction in common.
    pub fn intersects(&self, other: &PcSet) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// The empty [`PcSet`]: plain runs stop their bursts at no instruction of their own.
pub static NO_STOPS: PcSet = PcSet(Vec::new());

/// A decoded program ready to run.
#[derive(Clone, Debug)]
pub struct Interpreter {
    pub program: Arc<Program>,
    pub tables: Tables,
    /// How each instruction runs (same index as `program.insts`), decided once.
    plans: Vec<Plan>,
    /// Whether to use the fast forms (tests turn them off to compare both paths).
    pub use_fast_paths: bool,
    /// For each instruction, how many instructions from it on run in place one after
    /// another (no control flow, nothing other threads see): a burst runs such a stretch
    /// without looking again at the thread's status or the instruction kind's visibility.
    straight: Vec<u32>,
}

/// Channel enables per `EvaluateChEn` (5_operands.md): relative bits, lane n = channel
/// n + offset. Returns (ChEn, the EM part alone, the predicate mask alone).
#[inline]
pub fn channel_enables(inst: &Inst, em: u32, preds: &[u32]) -> (u32, u32, u32) {
    Enables::new(inst.exec, inst.pred).of(em, preds)
}

/// An instruction's exec mask and predicate in the form a step's channel enables are made
/// from: the lanes of its exec size, its channel offset and NoMask worked out once, when
/// its plan is made, rather than at every step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enables {
    /// The lanes of the exec size (bit i: lane i).
    lanes: u32,
    /// The channel offset (at most 31).
    off: u32,
    /// Every bit under NoMask (the execution mask is ignored), else none.
    forced: u32,
    guard: Option<Predicate>,
}

impl Enables {
    pub(super) fn new(exec: ExecMask, guard: Option<Predicate>) -> Enables {
        let forced = if exec.no_mask { u32::MAX } else { 0 };
        Enables { lanes: size_mask(exec.size), off: exec.offset.min(31), forced, guard }
    }

    /// (ChEn, the EM part alone, the predicate mask alone) under execution mask `em` and
    /// predicates `preds`.
    #[inline(always)]
    pub(super) fn of(&self, em: u32, preds: &[u32]) -> (u32, u32, u32) {
        let (lanes, off) = (self.lanes, self.off);
        let em_part = ((em >> off) | self.forced) & lanes;
        let Some(pred) = self.guard else {
            return (em_part, em_part, lanes);
        };
        let bits = (preds.get(pred.pred.0 as usize).copied().unwrap_or(0) >> off) & lanes;
        let combined = match pred.combine {
            PredCombine::None => bits,
            PredCombine::Any => {
                if bits != 0 {
                    lanes
                } else {
                    0
                }
            }
            PredCombine::All => {
                if bits == lanes {
                    lanes
                } else {
                    0
                }
            }
        };
        let pmask = if pred.invert { !combined & lanes } else { combined };
        (em_part & pmask, em_part, pmask)
    }

    /// The channel offset: lane i is channel `off + i`.
    pub(super) fn offset(&self) -> u32 {
        self.off
    }

    /// The exec size, for exec sizes of at most 32 lanes (every in-place form's).
    pub(super) fn size(&self) -> u32 {
        self.lanes.count_ones()
    }
}

impl Interpreter {
    pub fn new(program: Arc<Program>) -> Interpreter {
        let tables = Tables::new(&program);
        let plans: Vec<Plan> = program.insts.iter().map(|inst| Plan::new(inst, &program)).collect();
        let mut straight = vec![0u32; plans.len() + 1];
        for pc in (0..plans.len()).rev() {
            if plans[pc].in_place() {
                straight[pc] = straight[pc + 1] + 1;
            }
        }
        Interpreter { program, tables, plans, use_fast_paths: true, straight }
    }

    /// Which path instruction `idx` takes when fast paths are on (tests use it to know they
    /// compared a fast form, not the general path against itself).
    pub fn tier(&self, idx: usize) -> Tier {
        self.plans.get(idx).map_or(Tier::General, Plan::tier)
    }

    /// Executes the instruction at thread `tid`'s pc.
    pub fn step<O: Observer>(
        &self,
        machine: &mut Machine,
        tid: ThreadId,
        obs: &mut O,
    ) -> Result<StepInfo, Fault> {
        let pc = machine.threads.get(tid.0 as usize).map_or(InstIdx(0), |t| t.control.pc);
        let Some(mut ctx) = self.runnable_ctx(machine, tid, obs) else {
            return Ok(StepInfo { pc, chen: 0, event: StepEvent::Idle });
        };
        let chen = self.step_in(&mut ctx, pc)?;
        let event = match ctx.thread.control.status {
            ThreadStatus::Done => StepEvent::Finished,
            ThreadStatus::AtBarrier | ThreadStatus::AtNamedBarrier(_) => StepEvent::Barrier,
            _ => StepEvent::Executed,
        };
        Ok(StepInfo { pc, chen, event })
    }

    /// The step of [`Interpreter::step`] on a context already made: the instruction at `pc`
    /// and the report of its control change. Returns the channel enables.
    fn step_in<O: Observer>(&self, ctx: &mut Ctx<'_, O>, pc: InstIdx) -> Result<u32, Fault> {
        // A recorder needs the old control state only when more than the pc can change:
        // control flow, barriers and reconvergence at the next instruction. Otherwise the
        // step moves the pc to the next instruction, or faults (pc kept, status `Faulted`).
        let may_change_control = |control: &Control| {
            matches!(
                self.plans.get(pc.0 as usize),
                Some(Plan::Control | Plan::Branch(_) | Plan::Barrier | Plan::Nbarrier)
            ) || reconverges_at(control, pc.0 + 1)
        };
        reporting_control(ctx, pc, may_change_control, |ctx| self.execute_at(ctx, pc))
    }

    /// The step of a compiled `goto` or `jmp` at `pc`, as [`Interpreter::step_in`] runs
    /// it (its control change reported the same way), without the general step.
    #[inline(always)]
    fn branch_in<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        branch: &BranchOp,
        pc: InstIdx,
    ) -> Result<u32, Fault> {
        reporting_control(
            ctx,
            pc,
            |_| true,
            |ctx| {
                let thread = &mut *ctx.thread;
                let result = branch.run(&mut thread.control, &thread.preds, pc);
                settle(&mut thread.control, ctx.tid, pc, result, || branch.en.offset())
            },
        )
    }

    /// Runs the instruction at `pc`: channel enables, the instruction, then reconvergence at
    /// the new pc. A fault leaves the pc on the instruction and the thread `Faulted`.
    /// Returns the channel enables.
    #[inline]
    fn execute_at<O: Observer>(&self, ctx: &mut Ctx<'_, O>, pc: InstIdx) -> Result<u32, Fault> {
        let at = pc.0 as usize;
        let result = match (self.program.insts.get(at), self.plans.get(at)) {
            (Some(inst), Some(plan)) => self.execute(ctx, inst, plan, pc),
            _ => Err(FaultKind::FellOffEnd),
        };
        let offset = || self.program.insts.get(at).map_or(0, |i| i.exec.offset);
        settle(&mut ctx.thread.control, ctx.tid, pc, result, offset)
    }

    /// A context for running thread `tid`, if it exists and is runnable (the thread is copied
    /// on its first write after a checkpoint shared it).
    fn runnable_ctx<'a, O: Observer>(
        &'a self,
        machine: &'a mut Machine,
        tid: ThreadId,
        obs: &'a mut O,
    ) -> Option<Ctx<'a, O>> {
        let Machine { threads, svm, slms, relocations, surfaces, .. } = machine;
        let shared = threads.get_mut(tid.0 as usize).filter(|t| t.is_runnable())?;
        let thread = crate::machine::Shared::make_mut(shared);
        let group = thread.group as usize;
        let (program, tables) = (&self.program, &self.tables);
        Some(Ctx {
            program,
            tables,
            tid,
            thread,
            svm,
            slms,
            group,
            relocations,
            surfaces,
            obs,
            scratch: Vec::new(),
            last_root: std::cell::Cell::new((0, 0)),
        })
    }

    /// Runs thread `tid` until its next instruction is visible to other threads
    /// (`Plan::visible_to_others`) or in `stops` (and `holds`, if given, holds for the thread
    /// there: a conditional breakpoint's test, made in place), it stops running, or `budget`
    /// steps have run. Returns
    /// (steps, lane operations). `obs` hears every write, and where each step starts and ends,
    /// exactly as [`Interpreter::step`] reports them ([`super::NullObserver`] for plain runs).
    /// With `visible_first`, the instruction the thread waits at runs first whatever it is
    /// (its turn has come). Used by the burst runs, plain and recorded: one thread borrow and
    /// one scratch buffer for the whole burst instead of one per step.
    pub fn run_local<O: StepHooks>(
        &self,
        machine: &mut Machine,
        tid: ThreadId,
        budget: u64,
        stops: Stops<'_, '_>,
        obs: &mut O,
        visible_first: bool,
    ) -> Result<(u64, u64), Fault> {
        let Some(mut ctx) = self.runnable_ctx(machine, tid, obs) else { return Ok((0, 0)) };
        // Whether the thread stops before instruction `at` (its pc is set there first: a
        // stretch run in place sets it only when it ends).
        let Stops { pcs: stops, mut holds } = stops;
        let mut stops_at = |thread: &mut ThreadState, at: u32| {
            stops.contains(at) && {
                thread.control.pc = InstIdx(at);
                holds.as_mut().is_none_or(|test| test(thread, tid, InstIdx(at)))
            }
        };
        let (mut steps, mut lane_ops) = (0u64, 0u64);
        // Whether the instruction at the pc runs whatever it is (a visible one, so not in place).
        let mut turn = visible_first;
        while steps < budget {
            let pc = ctx.thread.control.pc;
            // A stretch of in-place instructions runs as one: it ends before the first
            // instruction after which waiting lanes reconverge (that one takes the general
            // step, which reconverges them), at a stop, or when the budget is spent.
            let run =
                if self.use_fast_paths { self.straight.get(pc.0 as usize).copied().unwrap_or(0) } else { 0 };
            if run > 0 {
                let mut end = pc.0 + run.min((budget - steps).min(u32::MAX as u64) as u32);
                for w in ctx.thread.control.waiting.iter() {
                    if w.at.0 > pc.0 && w.at.0 <= end {
                        end = w.at.0 - 1;
                    }
                }
                let mut at = pc.0;
                // A stop whose turn has come runs in place too.
                let mut first = turn;
                // The stretch's plans (`straight` keeps it inside the program). The thread's
                // pc moves once, at the end: a fault sets its own.
                for plan in self.plans.get(pc.0 as usize..end as usize).unwrap_or_default() {
                    if !first && stops_at(ctx.thread, at) {
                        break;
                    }
                    first = false;
                    ctx.obs.begin_step();
                    let chen = match self.run_in_place(&mut ctx, plan, InstIdx(at)) {
                        Ok(chen) => chen,
                        Err(fault) => {
                            ctx.obs.ran_stretch(pc.0, at);
                            return Err(fault);
                        }
                    };
                    ctx.obs.end_step_in_stretch(at, chen);
                    lane_ops += chen.count_ones() as u64;
                    at += 1;
                }
                ctx.obs.ran_stretch(pc.0, at);
                ctx.thread.control.pc = InstIdx(at);
                steps += (at - pc.0) as u64;
                if at > pc.0 {
                    turn = false;
                    continue;
                }
            }
            match self.plans.get(pc.0 as usize) {
                Some(plan) if turn || !plan.visible_to_others() && !stops_at(&mut *ctx.thread, pc.0) => {
                    turn = false
                }
                _ => break,
            }
            // Any other instruction, and an in-place one after which lanes reconverge or
            // with the fast forms off.
            ctx.obs.begin_step();
            let chen = match self.plans.get(pc.0 as usize) {
                Some(Plan::Branch(b)) if self.use_fast_paths => self.branch_in(&mut ctx, b, pc)?,
                _ => self.step_in(&mut ctx, pc)?,
            };
            ctx.obs.end_step(pc.0, chen);
            steps += 1;
            lane_ops += chen.count_ones() as u64;
            if ctx.thread.control.status != ThreadStatus::Running {
                break;
            }
        }
        Ok((steps, lane_ops))
    }

    /// Runs `plan`, the in-place form at `pc` (see [`Plan::in_place`]), leaving the pc to
    /// the caller: its channel enables. The f32 form may hand its instruction to the
    /// general path, which then runs it as any step (and moves the pc).
    #[inline(always)]
    fn run_in_place<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        plan: &Plan,
        pc: InstIdx,
    ) -> Result<u32, Fault> {
        match plan {
            // The common case, kept tight: the dword kernel (no control state changes, so
            // nothing to report beyond the writes).
            Plan::Dword(op) => {
                in_place(ctx, pc, &op.en, |ctx, chen, em_part, pmask| ctx.run_dword(op, chen, em_part, pmask))
            }
            Plan::Qword(op) => {
                in_place(ctx, pc, &op.en, |ctx, chen, em_part, pmask| ctx.run_qword(op, chen, em_part, pmask))
            }
            Plan::Carry(op) => in_place(ctx, pc, &op.en, |ctx, chen, _, _| ctx.run_carry(op, chen)),
            Plan::AddrAdd(op) => in_place(ctx, pc, &op.en, |ctx, chen, _, _| ctx.run_addr_add(op, chen)),
            Plan::Nop(en) => in_place(ctx, pc, en, |_, _, _, _| Ok(())),
            Plan::SetPred(op) => in_place(ctx, pc, &op.en, |ctx, _, _, _| {
                ctx.write_pred(op.pred, op.mask, op.bits);
                Ok(())
            }),
            // The packed f32 form with its enables made at load; any other f32 form below.
            Plan::Float(op) => {
                let (chen, em_part, pmask) = op.en.of(ctx.thread.control.em, &ctx.thread.preds);
                if ctx.run_float_in_place(op, chen, em_part, pmask) {
                    return Ok(chen);
                }
                self.run_other_in_place(ctx, plan, pc)
            }
            // The native hf/df form likewise.
            Plan::FloatLanes(op) => {
                let (chen, em_part, pmask) = op.en.of(ctx.thread.control.em, &ctx.thread.preds);
                if ctx.run_lanes_in_place(op, chen, em_part, pmask) {
                    return Ok(chen);
                }
                self.run_other_in_place(ctx, plan, pc)
            }
            plan => self.run_other_in_place(ctx, plan, pc),
        }
    }

    /// [`Interpreter::run_in_place`] of the in-place forms without enables of their own.
    #[inline(always)]
    fn run_other_in_place<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        plan: &Plan,
        pc: InstIdx,
    ) -> Result<u32, Fault> {
        let inst = &self.program.insts[pc.0 as usize];
        let (chen, em_part, pmask) = channel_enables(inst, ctx.thread.control.em, &ctx.thread.preds);
        match run_fast(ctx, inst, plan, chen, em_part, pmask) {
            Ok(true) => Ok(chen),
            Ok(false) => {
                // The general step starts from the thread's pc.
                ctx.thread.control.pc = pc;
                self.step_in(ctx, pc)
            }
            Err(kind) => {
                let kind = kind.in_thread_channels(inst.exec.offset);
                Err(faulted(&mut ctx.thread.control, ctx.tid, pc, kind))
            }
        }
    }

    /// The instruction itself, under its channel enables (returned).
    fn execute<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        inst: &Inst,
        plan: &Plan,
        pc: InstIdx,
    ) -> Result<u32, FaultKind> {
        let (chen, em_part, pmask) = channel_enables(inst, ctx.thread.control.em, &ctx.thread.preds);
        let next = InstIdx(pc.0 + 1);
        let off = inst.exec.offset.min(31);
        match plan {
            // Control flow, messages and the general ALU have no in-place form: not asked.
            _ if self.use_fast_paths
                && plan.in_place()
                && run_fast(ctx, inst, plan, chen, em_part, pmask)? => {}
            Plan::Dword(_)
            | Plan::Qword(_)
            | Plan::Carry(_)
            | Plan::Float(_)
            | Plan::FloatLanes(_)
            | Plan::SetPred(..)
            | Plan::Setp(_)
            | Plan::PredLogic(..)
            | Plan::MovPred(_)
            | Plan::Alu => self.alu(ctx, inst, chen, em_part, pmask)?,
            Plan::Address | Plan::AddrAdd(_) => self.addr_add(ctx, inst, chen)?,
            Plan::Branch(b) if self.use_fast_paths => {
                return b.run(&mut ctx.thread.control, &ctx.thread.preds, pc)
            }
            Plan::Control | Plan::Branch(_) => {
                let pred_true = pmask & 1 != 0;
                return control::execute(ctx, inst, pc, chen << off, pred_true).map(|()| chen);
            }
            Plan::Message(m) if self.use_fast_paths && ctx.run_message(m, chen)? => {}
            Plan::Block(b) if self.use_fast_paths && ctx.run_block(b)? => {}
            Plan::Memory | Plan::Message(_) | Plan::Block(_) => super::message::execute(ctx, inst, chen)?,
            Plan::Barrier => {
                // Lanes parked at a later reconvergence point are work-items that have not
                // reached this barrier, and will reach it (if at all) after it was released.
                let parked = ctx.thread.control.waiting.iter().fold(0u32, |m, w| m | w.lanes);
                if parked != 0 {
                    return Err(FaultKind::BarrierDivergence(format!(
                        "lanes {parked:#x} of this thread wait in divergent control flow while lanes {:#x} reach the barrier",
                        ctx.thread.control.em
                    )));
                }
                ctx.thread.control.status = ThreadStatus::AtBarrier
            }
            // A wait that cannot go on yet stays on its instruction.
            Plan::Nbarrier if !super::nbarrier::nbarrier(ctx, inst)? => return Ok(chen),
            Plan::Nbarrier => ctx.thread.control.status = ThreadStatus::Running,
            Plan::Nop(_) => {}
            Plan::Dpas(op) => super::dpas::dpas(ctx, inst, op)?,
            Plan::Unsupported => return Err(FaultKind::NotImplemented(mnemonic_text(inst))),
            Plan::StaticFault => {
                return Err(FaultKind::Static(inst.static_fault.clone().unwrap_or_default()));
            }
        }
        ctx.thread.control.pc = next;
        Ok(chen)
    }

    fn addr_add<O: Observer>(&self, ctx: &mut Ctx<'_, O>, inst: &Inst, chen: u32) -> Result<(), FaultKind> {
        let n = inst.exec.size;
        let a = ctx.read_src(&inst.operands[1], 1, n)?;
        let b = ctx.read_src(&inst.operands[2], 2, n)?;
        let mut values = [0u64; 32];
        for (lane, value) in values.iter_mut().enumerate().take(n as usize) {
            let offset = alu_int(&b, lane);
            *value = (a.bits[lane] as i64).wrapping_add(offset) as u64 & 0xffff_ffff;
        }
        ctx.write_dst(&inst.operands[0], 0, n, chen, &values)
    }

    fn alu<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        inst: &Inst,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<(), FaultKind> {
        let n = inst.exec.size;
        let off = inst.exec.offset.min(31);
        let operands = &inst.operands;
        match (inst.op, operands.first(), operands.get(1)) {
            (Opcode::Setp, Some(Operand::Pred(p)), Some(src)) => {
                let lanes = ctx.read_src(src, 1, n)?;
                let scalar = is_scalar(src);
                let mut bits = 0u32;
                for lane in 0..n {
                    let bit = if scalar { lanes.bits[0] >> lane } else { lanes.bits[lane as usize] };
                    bits |= ((bit & 1) as u32) << lane;
                }
                let mask = if scalar { size_mask(n) } else { chen };
                ctx.write_pred(*p, mask << off, bits << off);
                return Ok(());
            }
            (Opcode::Mov, Some(dst), Some(Operand::Pred(p))) => {
                let mut values = [0u64; 32];
                values[0] = ctx.pred(*p) as u64;
                return ctx.write_dst(dst, 0, 1, chen & 1, &values);
            }
            (Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not, Some(Operand::Pred(dst)), _) => {
                return pred_logic(ctx, inst, *dst, chen);
            }
            _ => {}
        }
        let (n_dsts, is_cmp) = match inst.op {
            Opcode::Addc | Opcode::Subb | Opcode::Invm | Opcode::Rsqtm => (2, false),
            Opcode::Cmp => (1, true),
            _ => (1, false),
        };
        // A predicate the instruction writes besides its destination: invm/rsqtm's early-out
        // bits (their second operand) and add3.o's overflow bits (its last operand).
        let add3o = inst.op == Opcode::Add3 && matches!(&inst.sub, SubOp::Word(w) if w == "o");
        let pred_out = match (inst.op, add3o) {
            (Opcode::Invm | Opcode::Rsqtm, _) => operands.get(1),
            (_, true) => operands.last(),
            _ => None,
        };
        let pred_out = match pred_out {
            Some(Operand::Pred(p)) => Some(*p),
            Some(other) => return Err(FaultKind::Alu(format!("predicate destination {other:?}"))),
            None => None,
        };
        let dst = operands.first().ok_or_else(|| FaultKind::Alu("missing destination".into()))?;
        let dst_ty = match dst {
            Operand::Pred(_) => DataType::Bool,
            other => super::operand::operand_type(other).unwrap_or(DataType::Ud),
        };
        let src_end = operands.len() - usize::from(add3o);
        let src_ops = operands.get(n_dsts..src_end).unwrap_or(&[]);
        if src_ops.len() > 4 {
            return Err(FaultKind::Alu(format!("{} sources", src_ops.len())));
        }
        let mut srcs: [SrcLanes; 4] =
            std::array::from_fn(|_| SrcLanes { ty: DataType::Ud, modifier: SrcMod::None, bits: [0; 32] });
        for (i, op) in src_ops.iter().enumerate() {
            srcs[i] = ctx.read_src(op, i + n_dsts, n)?;
        }
        let (enabled, select) = if inst.op == Opcode::Sel { (em_part, pmask) } else { (chen, u32::MAX) };
        let mut out = AluOut { values: [0; 32], second: [0; 32], flags: 0 };
        alu::eval(
            inst.op,
            &inst.sub,
            inst.sat,
            dst_ty,
            &srcs[..src_ops.len()],
            n as usize,
            enabled,
            select,
            ctx.cr0(),
            &mut out,
        )
        // An operation or type combination vdb has no semantics for: the message starts with
        // the mnemonic (`not implemented: fcvt with dst ...`).
        .map_err(|alu::AluError::Unsupported(m)| FaultKind::NotImplemented(m))?;
        if is_cmp {
            if let Operand::Pred(p) = dst {
                ctx.write_pred(*p, enabled << off, out.flags << off);
                return Ok(());
            }
        }
        ctx.write_dst(dst, 0, n, enabled, &out.values)?;
        if let Some(p) = pred_out {
            ctx.write_pred(p, enabled << off, out.flags << off);
            return Ok(());
        }
        if n_dsts == 2 {
            ctx.write_dst(&operands[1], 1, n, enabled, &out.second)?;
        }
        if inst.op == Opcode::Madw {
            let high = shifted_by_registers(dst, n, ctx.tables.grf_size)?;
            ctx.write_dst(&high, 0, n, enabled, &out.second)?;
        }
        Ok(())
    }
}

/// The path an instruction runs on: the in-place dword kernels, the kernels on 64-bit
/// lanes, the float ones, the predicate forms, a compiled message, or everything else (the
/// general ALU, control, the other memory instructions).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tier {
    Dword,
    /// The in-place tier on 64-bit lanes (`qword.rs`).
    Qword,
    /// The f32 tier (`fast_float.rs`) and the hf/df one (`float_lanes.rs`).
    Float,
    /// `setp` from an immediate, predicate logic.
    Pred,
    General,
    /// A message with its payload compiled (`payload.rs`): not in place, as it touches memory.
    Message,
    /// `goto` and `jmp` with their labels resolved: not in place, as they change control.
    Branch,
    /// Fences, waits, `loc`, `file` and `lifetime`: in place, nothing to run.
    Nop,
}

/// How an instruction runs, decided once when the interpreter is built (one match per step
/// instead of an opcode-family lookup, a fault check and two table probes).
#[derive(Clone, Debug)]
enum Plan {
    /// In-place packed dword form.
    Dword(super::fast::DwordOp),
    /// In-place form on 64-bit lanes (`qword.rs`).
    Qword(super::qword::QwordOp),
    /// `addc`/`subb` in place (`qword.rs`).
    Carry(Box<super::qword::CarryOp>),
    /// `addr_add` in place (`qword.rs`).
    AddrAdd(Box<super::qword::AddrAddOp>),
    /// f32 form (`fast_float.rs`).
    Float(Box<super::fast_float::FloatOp>),
    /// hf and df forms (`float_lanes.rs`).
    FloatLanes(Box<super::float_lanes::LanesOp>),
    /// `setp` from an immediate.
    SetPred(SetPredOp),
    /// `setp` from a register or a vector immediate (`qword.rs`).
    Setp(Box<super::qword::SetpOp>),
    /// `and`/`or`/`xor`/`not` of predicates: the opcode, the destination, the sources (`not`
    /// reads the first only).
    PredLogic(Opcode, PredId, PredId, PredId),
    /// `mov` from a predicate: its bits into the destination's first element.
    MovPred(PredId),
    Alu,
    Address,
    /// `goto` and `jmp` with their labels resolved.
    Branch(BranchOp),
    Control,
    /// A gather, scatter or atomic with its payload compiled (`payload.rs`).
    Message(Box<super::payload::MessageOp>),
    /// An SVM or OWord block message with its operands compiled (`payload.rs`).
    Block(Box<super::payload::BlockOp>),
    /// Any other memory instruction (`message.rs`).
    Memory,
    Barrier,
    /// `nbarrier.signal` / `nbarrier.wait` (`nbarrier.rs`).
    Nbarrier,
    /// `dpas` with its precisions decoded (`dpas.rs`).
    Dpas(super::dpas::DpasOp),
    /// Fences, waits and instructions that change nothing (`loc`, `file`, `lifetime`):
    /// in place, a step that runs nothing (a `-g` build has a `loc` before each source
    /// line's instructions).
    Nop(Enables),
    Unsupported,
    /// The parser's static checks found undefined behaviour: it faults when reached.
    StaticFault,
}

/// `goto` or `jmp` with its label resolved and its channel enables' form made: the branches
/// of every loop and `if`, kept off the general step.
#[derive(Clone, Copy, Debug)]
struct BranchOp {
    target: InstIdx,
    en: Enables,
    /// `jmp`: the thread goes where its predicate's first bit says, every lane with it.
    jmp: bool,
    /// A `goto` of exec size 1: every active lane goes, or none, by the predicate's first bit.
    scalar: bool,
}

impl BranchOp {
    fn compile(inst: &Inst) -> Option<BranchOp> {
        let jmp = match inst.op {
            Opcode::Goto => false,
            Opcode::Jmp => true,
            _ => return None,
        };
        let target = control::label_target(inst, 0).ok()?;
        Some(BranchOp { target, en: Enables::new(inst.exec, inst.pred), jmp, scalar: inst.exec.size == 1 })
    }

    /// Runs the branch at `pc` on `control` as `control::execute` does: its channel enables.
    #[inline(always)]
    fn run(&self, control: &mut Control, preds: &[u32], pc: InstIdx) -> Result<u32, FaultKind> {
        let (chen, _, pmask) = self.en.of(control.em, preds);
        let pred_true = pmask & 1 != 0;
        if self.jmp {
            control.pc = if pred_true { self.target } else { InstIdx(pc.0 + 1) };
            return Ok(chen);
        }
        let taken = match (self.scalar, pred_true) {
            (true, true) => u32::MAX,
            (true, false) => 0,
            (false, _) => chen << self.en.off,
        };
        control::goto_to(control, self.target, pc, taken)?;
        Ok(chen)
    }
}

/// `setp` from an immediate: the predicate bits it sets under their mask (at the channel
/// offset), the same every time (predication does not change them; the exec mask and
/// predicate give the channel enables a step reports).
#[derive(Clone, Debug)]
struct SetPredOp {
    pred: PredId,
    mask: u32,
    bits: u32,
    en: Enables,
}

impl Plan {
    /// The plan of `inst`. An instruction the parser found undefined faults when reached,
    /// so the compilers of the fast forms only see the others.
    fn new(inst: &Inst, program: &Program) -> Plan {
        if inst.static_fault.is_some() {
            return Plan::StaticFault;
        }
        match inst.op.family() {
            Family::Alu if inst.op == Opcode::Setp => match inst.operands.as_slice() {
                [Operand::Pred(p), Operand::Imm(imm)] if !imm.ty.is_packed_vector() => {
                    let (lanes, off) = (size_mask(inst.exec.size), inst.exec.offset.min(31));
                    Plan::SetPred(SetPredOp {
                        pred: *p,
                        mask: lanes << off,
                        bits: (imm.bits as u32 & lanes) << off,
                        en: Enables::new(inst.exec, inst.pred),
                    })
                }
                _ => super::qword::compile_setp(inst).map_or(Plan::Alu, |s| Plan::Setp(Box::new(s))),
            },
            Family::Alu
                if inst.op == Opcode::Mov && matches!(inst.operands.get(1), Some(Operand::Pred(_))) =>
            {
                match inst.operands.as_slice() {
                    [Operand::Direct(_) | Operand::Indirect(_), Operand::Pred(p)] if !inst.sat => {
                        Plan::MovPred(*p)
                    }
                    _ => Plan::Alu,
                }
            }
            Family::Alu if matches!(inst.op, Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not) => {
                match inst.operands.as_slice() {
                    [Operand::Pred(d), Operand::Pred(a)] if inst.op == Opcode::Not => {
                        Plan::PredLogic(inst.op, *d, *a, *a)
                    }
                    [Operand::Pred(d), Operand::Pred(a), Operand::Pred(b)] if inst.op != Opcode::Not => {
                        Plan::PredLogic(inst.op, *d, *a, *b)
                    }
                    _ => Self::alu_plan(inst, program),
                }
            }
            Family::Alu if matches!(inst.op, Opcode::Addc | Opcode::Subb | Opcode::Madw) => {
                super::qword::compile_carry(inst, program).map_or(Plan::Alu, |c| Plan::Carry(Box::new(c)))
            }
            Family::Alu => Self::alu_plan(inst, program),
            Family::Address => super::qword::compile_addr_add(inst, program)
                .map_or(Plan::Address, |a| Plan::AddrAdd(Box::new(a))),
            Family::Control => BranchOp::compile(inst).map_or(Plan::Control, Plan::Branch),
            Family::Memory => match super::payload::MessageOp::compile(inst, program) {
                Some(m) => Plan::Message(Box::new(m)),
                None => super::payload::BlockOp::compile(inst, program)
                    .map_or(Plan::Memory, |b| Plan::Block(Box::new(b))),
            },
            Family::Sync if inst.op == Opcode::Barrier => Plan::Barrier,
            Family::Sync if inst.op == Opcode::Nbarrier => Plan::Nbarrier,
            Family::Sync | Family::Nop => Plan::Nop(Enables::new(inst.exec, inst.pred)),
            // dpas works on whole registers, whatever the channel enables (DPAS.md); the
            // forms `dpas.rs` does not run (fp8, e2m1) fault as not implemented.
            Family::Unsupported if inst.op == Opcode::Dpas => {
                super::dpas::compile(inst).map_or(Plan::Unsupported, Plan::Dpas)
            }
            Family::Unsupported => Plan::Unsupported,
        }
    }

    /// The plan of an ALU instruction on registers: an in-place integer form, the f32 form,
    /// or the general ALU.
    fn alu_plan(inst: &Inst, program: &Program) -> Plan {
        let float = || match super::fast_float::compile(inst) {
            Some(f) => Plan::Float(Box::new(f)),
            None => super::float_lanes::compile(inst).map_or(Plan::Alu, |f| Plan::FloatLanes(Box::new(f))),
        };
        // A float move that changes no bits is an integer move of its width (the float tiers
        // take it where the integer ones do not).
        let raw = super::fast::raw_float_move(inst);
        let int_inst = raw.as_ref().unwrap_or(inst);
        match super::fast::compile(int_inst) {
            Some(f) => match super::fast::compile_dword(int_inst, &f) {
                Some(d) => Plan::Dword(d),
                None => match super::qword::compile_qword(int_inst, &f, program) {
                    Some(q) => Plan::Qword(q),
                    None if raw.is_some() => float(),
                    None => Plan::Alu,
                },
            },
            None => float(),
        }
    }

    /// Whether the instruction can see or change what other threads see: memory messages,
    /// atomics and barriers. Everything else touches only the thread's own registers and
    /// control state (a fence orders nothing in an interpreter that runs one instruction at
    /// a time; a fault stops the burst run, which then reruns under the exact scheduler).
    fn visible_to_others(&self) -> bool {
        matches!(self, Plan::Memory | Plan::Message(_) | Plan::Block(_) | Plan::Barrier | Plan::Nbarrier)
    }

    /// The path the instruction takes when fast paths are on.
    fn tier(&self) -> Tier {
        match self {
            Plan::Dword(_) => Tier::Dword,
            Plan::Qword(_) | Plan::Carry(_) | Plan::AddrAdd(_) => Tier::Qword,
            Plan::SetPred(..) | Plan::Setp(_) | Plan::PredLogic(..) | Plan::MovPred(_) => Tier::Pred,
            Plan::Float(_) | Plan::FloatLanes(_) => Tier::Float,
            Plan::Message(_) | Plan::Block(_) => Tier::Message,
            Plan::Branch(_) => Tier::Branch,
            Plan::Nop(_) => Tier::Nop,
            _ => Tier::General,
        }
    }

    /// Whether the instruction has an in-place form (an ALU tier but the general one, or
    /// nothing to run): it changes registers only, never control state, and runs without the
    /// general step (an f32 form may still hand its instruction to it).
    fn in_place(&self) -> bool {
        !matches!(self.tier(), Tier::General | Tier::Message | Tier::Branch)
    }
}

/// The mnemonic as written, suffixes included (`lfsr.b32`, `dpas.s8.s8.8.8`), for faults.
fn mnemonic_text(inst: &Inst) -> String {
    match &inst.sub {
        SubOp::Word(w) if !w.is_empty() => format!("{}.{w}", inst.op.mnemonic()),
        _ => inst.op.mnemonic().to_string(),
    }
}

/// Runs the in-place form of `plan` (any tier but the general one) under its channel
/// enables, the pc left to the caller: whether it ran. False, with nothing changed, for
/// every other plan and where the f32 or hf/df form hands its instruction to the general
/// path.
fn run_fast<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    plan: &Plan,
    chen: u32,
    em_part: u32,
    pmask: u32,
) -> Result<bool, FaultKind> {
    match plan {
        Plan::Dword(op) => ctx.run_dword(op, chen, em_part, pmask)?,
        Plan::Qword(op) => ctx.run_qword(op, chen, em_part, pmask)?,
        Plan::Carry(op) => ctx.run_carry(op, chen)?,
        Plan::AddrAdd(op) => ctx.run_addr_add(op, chen)?,
        Plan::Float(f) => return ctx.run_float(inst, f, chen, em_part, pmask),
        Plan::FloatLanes(f) => return ctx.run_lanes(inst, f, chen, em_part, pmask),
        Plan::SetPred(op) => ctx.write_pred(op.pred, op.mask, op.bits),
        Plan::Nop(_) => {}
        Plan::Setp(op) => return ctx.run_setp(op, chen),
        Plan::PredLogic(op, d, a, b) => {
            let (a, b) = (ctx.pred(*a), ctx.pred(*b));
            pred_apply(ctx, *op, *d, a, b, chen << inst.exec.offset.min(31));
        }
        Plan::MovPred(p) => {
            let mut values = [0u64; 32];
            values[0] = ctx.pred(*p) as u64;
            ctx.write_dst(&inst.operands[0], 0, 1, chen & 1, &values)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// One step of an in-place form in a burst: its channel enables from `en`, `run` under
/// them (an in-place form changes no control state; the caller moves the pc). Returns the
/// channel enables.
#[inline(always)]
fn in_place<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    pc: InstIdx,
    en: &Enables,
    run: impl FnOnce(&mut Ctx<'_, O>, u32, u32, u32) -> Result<(), FaultKind>,
) -> Result<u32, Fault> {
    let (chen, em_part, pmask) = en.of(ctx.thread.control.em, &ctx.thread.preds);
    if let Err(kind) = run(ctx, chen, em_part, pmask) {
        let kind = kind.in_thread_channels(en.offset());
        return Err(faulted(&mut ctx.thread.control, ctx.tid, pc, kind));
    }
    Ok(chen)
}

/// Runs a step by `run`, reporting its control change to the observer: the control state
/// before it is kept only where `may_change` says more than the pc can change (a fault
/// changes the status, and is reported in any case).
#[inline(always)]
fn reporting_control<'a, O: Observer>(
    ctx: &mut Ctx<'a, O>,
    pc: InstIdx,
    may_change: impl FnOnce(&Control) -> bool,
    run: impl FnOnce(&mut Ctx<'a, O>) -> Result<u32, Fault>,
) -> Result<u32, Fault> {
    let old_control = (O::ACTIVE && may_change(&ctx.thread.control)).then(|| ctx.thread.control.clone());
    let result = run(ctx);
    if O::ACTIVE {
        let tid = ctx.tid;
        let new = &ctx.thread.control;
        match old_control {
            Some(old) if old != *new || new.pc == pc => ctx.obs.control(tid, &old, new),
            Some(_) => {}
            // A fault: only the status changed, and the pc stayed.
            None if new.pc.0 != pc.0 + 1 => {
                let old = Control { pc, status: ThreadStatus::Running, ..new.clone() };
                ctx.obs.control(tid, &old, new)
            }
            None => {}
        }
    }
    result
}

/// Whether lanes waiting in `control` reconverge at instruction `at`.
#[inline]
fn reconverges_at(control: &Control, at: u32) -> bool {
    control.waiting.iter().any(|w| w.at.0 == at)
}

/// Ends the step of thread `tid` at `pc` with `result`: lanes waiting at the new pc rejoin,
/// or a fault (in the channels of the instruction's mask `offset`) leaves the thread faulted
/// on the instruction.
#[inline(always)]
fn settle(
    control: &mut Control,
    tid: ThreadId,
    pc: InstIdx,
    result: Result<u32, FaultKind>,
    offset: impl FnOnce() -> u32,
) -> Result<u32, Fault> {
    match result {
        Ok(chen) => {
            control::arrive(control);
            Ok(chen)
        }
        Err(kind) => Err(faulted(control, tid, pc, kind.in_thread_channels(offset()))),
    }
}

/// Leaves thread `tid` faulted on the instruction at `pc`.
fn faulted(control: &mut Control, tid: ThreadId, pc: InstIdx, kind: FaultKind) -> Fault {
    control.pc = pc;
    control.status = ThreadStatus::Faulted;
    Fault { kind, thread: tid, pc }
}

/// Sign-aware integer value of a source lane (for address arithmetic).
fn alu_int(lanes: &SrcLanes, lane: usize) -> i64 {
    let bits = lanes.bits[lane];
    match lanes.ty {
        DataType::W => bits as u16 as i16 as i64,
        DataType::B => bits as u8 as i8 as i64,
        DataType::D => bits as u32 as i32 as i64,
        _ => bits as i64,
    }
}

fn is_scalar(op: &Operand) -> bool {
    match op {
        Operand::Imm(_) => true,
        Operand::Direct(d) => d.region == Region::scalar(),
        Operand::Indirect(i) => i.region == Region::scalar(),
        _ => false,
    }
}

/// The destination moved past the low half's registers (where `madw` puts the high half).
fn shifted_by_registers(dst: &Operand, n: u32, grf_size: u32) -> Result<Operand, FaultKind> {
    match dst {
        Operand::Direct(d) => {
            let mut high = d.clone();
            high.base += madw_high_offset(n, d.ty.size(), grf_size);
            Ok(Operand::Direct(high))
        }
        _ => Err(FaultKind::NotImplemented("madw with an indirect destination".into())),
    }
}

/// How far past its low halves `madw` writes the high halves: the whole registers `n`
/// elements of `size` bytes take.
pub(super) fn madw_high_offset(n: u32, size: u32, grf_size: u32) -> u32 {
    (n * size).div_ceil(grf_size.max(1)) * grf_size.max(1)
}

/// The GRF byte ranges `[start, end)` channel `channel` of `inst` writes through direct
/// destinations, as `execute` writes them: the destination's element, the second
/// destination of `addc`/`subb`, and `madw`'s high half.
pub fn direct_dst_bytes(inst: &Inst, channel: u32, grf_size: u32) -> Vec<(u32, u32)> {
    // Only ALU instructions have destinations first (a message's first operand may be its
    // address, `svm_block_ld (4) A(0,0)<0;1,0> D.0`).
    if inst.op.family() != Family::Alu {
        return Vec::new();
    }
    let n_dsts = if matches!(inst.op, Opcode::Addc | Opcode::Subb) { 2 } else { 1 };
    let mut out = Vec::new();
    for op in inst.operands.iter().take(n_dsts) {
        let Operand::Direct(d) = op else { continue };
        let size = d.ty.size();
        let at = d.base + d.region.element(channel) * size;
        out.push((at, at + size));
        if inst.op == Opcode::Madw {
            let high = at + madw_high_offset(inst.exec.size, size, grf_size);
            out.push((high, high + size));
        }
    }
    out
}

/// Whether channel `channel` of `inst` writes GRF byte `byte` through a direct destination
/// ([`direct_dst_bytes`]).
pub fn dst_holds_byte(inst: &Inst, channel: u32, grf_size: u32, byte: u64) -> bool {
    direct_dst_bytes(inst, channel, grf_size)
        .iter()
        .any(|&(a, e)| (u64::from(a)..u64::from(e)).contains(&byte))
}

/// `and/or/xor/not` on predicate operands.
fn pred_logic<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    dst: PredId,
    chen: u32,
) -> Result<(), FaultKind> {
    let off = inst.exec.offset.min(31);
    let value = |op: Option<&Operand>| match op {
        Some(Operand::Pred(p)) => Ok(ctx.pred(*p)),
        other => Err(FaultKind::Alu(format!("predicate logic operand {other:?}"))),
    };
    let a = value(inst.operands.get(1))?;
    let b = if inst.op == Opcode::Not { 0 } else { value(inst.operands.get(2))? };
    pred_apply(ctx, inst.op, dst, a, b, chen << off);
    Ok(())
}

/// Predicate logic on the values `a` and `b` (`not` takes `a` only), into `dst` under `mask`.
fn pred_apply<O: Observer>(ctx: &mut Ctx<'_, O>, op: Opcode, dst: PredId, a: u32, b: u32, mask: u32) {
    let result = match op {
        Opcode::Not => !a,
        Opcode::And => a & b,
        Opcode::Or => a | b,
        _ => a ^ b,
    };
    ctx.write_pred(dst, mask, result);
}

//! `Program`: a parsed and decoded kernel (plus its stack-call functions), immutable after
//! parsing. Variables are laid out in one per-thread GRF byte space here, once.

use crate::isa::{
    AddrId, DataType, ExecMask, InstIdx, Opcode, Operand, PredId, Predicate, StateId, SubOp, UnitId, VarId,
};

/// Index of a source file in [`Program::files`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileId(pub u32);

/// A place in a source file (1-based line and column, byte range).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub file: FileId,
    pub line: u32,
    pub col: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    /// The text of 1-based line `line` (without the newline), or "" past the end.
    pub fn line_text(&self, line: u32) -> &str {
        self.text.lines().nth(line.saturating_sub(1) as usize).unwrap_or("")
    }
}

/// A general (G) variable, declared or predefined.
#[derive(Clone, Debug)]
pub struct GenVar {
    pub name: String,
    pub ty: DataType,
    pub num_elts: u32,
    /// Alignment in bytes requested by `align=` (1 when absent).
    pub align: u32,
    /// `alias=<BASE, OFF>`.
    pub alias: Option<(VarId, u32)>,
    /// Absolute byte offset in the thread GRF file (for aliases: base offset + OFF).
    pub offset: u32,
    /// Size in bytes (`num_elts * ty.size()`).
    pub size: u32,
    /// The root (non-alias) variable whose storage this one views.
    pub root: VarId,
    pub predefined: bool,
    /// Where it was declared (None for predefined variables).
    pub span: Option<Span>,
    /// The unit whose name space declared it (None for predefined variables).
    pub unit: Option<UnitId>,
}

#[derive(Clone, Debug)]
pub struct PredVar {
    pub name: String,
    /// Number of bits (1..=32).
    pub num_elts: u32,
    pub span: Option<Span>,
}

#[derive(Clone, Debug)]
pub struct AddrVar {
    pub name: String,
    pub num_elts: u32,
    /// First slot of this variable in the thread's address-register array.
    pub slot: u32,
    pub span: Option<Span>,
}

/// What a surface or sampler variable refers to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StateKind {
    /// `%slm` (T0): the work-group's shared local memory.
    Slm,
    /// A binding-table surface (T1…); the number is its index in declaration order.
    Surface(u32),
    Sampler(u32),
}

#[derive(Clone, Debug)]
pub struct StateVar {
    pub name: String,
    pub kind: StateKind,
    pub num_elts: u32,
}

/// `.input NAME offset=O size=S`: bytes `[O, O+S)` of the thread payload initialise NAME.
#[derive(Clone, Debug)]
pub struct Input {
    pub var: InputVar,
    pub offset: u32,
    pub size: u32,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum InputVar {
    Gen(VarId),
    State(StateId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Flag,
    Int(i64),
    Str(String),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// `.kernel "name"`.
    Kernel,
    /// `.global_function "name"` (a stack-call function, its own file).
    Function,
}

/// A label or subroutine name bound to an instruction index.
#[derive(Clone, Debug)]
pub struct Label {
    pub name: String,
    pub target: InstIdx,
    pub span: Span,
}

/// One file's code: a kernel or a stack-call function, with its own name space.
#[derive(Clone, Debug)]
pub struct Unit {
    pub name: String,
    pub kind: UnitKind,
    pub file: FileId,
    /// First instruction.
    pub entry: InstIdx,
    /// One past the last instruction (the `EndOfCode` sentinel is the last one inside).
    pub end: InstIdx,
    pub inputs: Vec<Input>,
    pub attrs: Vec<(String, AttrValue)>,
    pub labels: Vec<Label>,
    /// `.function` sections (the first one is the unit's body).
    pub subroutines: Vec<Label>,
    pub funcdecls: Vec<String>,
}

impl Unit {
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// `.kernel_attr SimdSize=N`, if present.
    pub fn simd_size(&self) -> Option<u32> {
        match self.attr("SimdSize") {
            Some(AttrValue::Int(n)) if *n > 0 => Some(*n as u32),
            _ => None,
        }
    }
}

/// One decoded instruction.
#[derive(Clone, Debug)]
pub struct Inst {
    pub op: Opcode,
    pub sub: SubOp,
    pub pred: Option<Predicate>,
    pub exec: ExecMask,
    pub sat: bool,
    /// Operands in text order.
    pub operands: Vec<Operand>,
    /// The vISA instruction id (`$N`).
    pub id: u32,
    /// Span of the whole instruction text (without trailing comment).
    pub span: Span,
    pub unit: UnitId,
    /// A problem found while decoding that the real verifier reports (out-of-bounds region,
    /// bad mask for the size…). Executing the instruction faults with this message.
    pub static_fault: Option<String>,
}

/// Predefined general variables, in this order, at fixed GRF offsets (see [`predefined_vars`]).
pub const PREDEFINED: &[(&str, DataType, u32)] = &[
    ("%null", DataType::Ud, 1),
    ("%thread_x", DataType::Uw, 1),
    ("%thread_y", DataType::Uw, 1),
    ("%group_id_x", DataType::Ud, 1),
    ("%group_id_y", DataType::Ud, 1),
    ("%group_id_z", DataType::Ud, 1),
    ("%tsc", DataType::Ud, 5),
    ("%r0", DataType::Ud, 8),
    ("%arg", DataType::Ud, 256),
    ("%retval", DataType::Ud, 96),
    ("%sp", DataType::Uq, 1),
    ("%fp", DataType::Uq, 1),
    ("%hw_id", DataType::Ud, 1),
    ("%sr0", DataType::Ud, 4),
    ("%cr0", DataType::Ud, 1),
    ("%ce0", DataType::Ud, 1),
    ("%dbg0", DataType::Ud, 2),
    ("%color", DataType::Uw, 1),
    ("%impl_arg_buf_ptr", DataType::Uq, 1),
    ("%local_id_buf_ptr", DataType::Uq, 1),
    ("%msg0", DataType::Ud, 3),
    ("%local_id_x", DataType::Ud, 1),
    ("%local_id_y", DataType::Ud, 1),
    ("%local_size_x", DataType::Ud, 1),
    ("%local_size_y", DataType::Ud, 1),
    ("%group_count_x", DataType::Ud, 1),
    ("%group_count_y", DataType::Ud, 1),
];

/// `%group_id_x/y/z` are views of r0 dwords 1, 6 and 7 (what the finalizer declares).
const R0_VIEWS: &[(&str, u32)] = &[("%group_id_x", 4), ("%group_id_y", 24), ("%group_id_z", 28)];

/// Predefined surfaces (T0…T5) with their text names.
pub const PREDEFINED_SURFACES: &[&str] = &["%slm", "T1", "T2", "TSS", "%bss", "%scratch"];

/// Rounds `value` up to a multiple of `align` (a power of two).
pub const fn align_up(value: u32, align: u32) -> u32 {
    (value + align - 1) & !(align - 1)
}

/// Builds the predefined variables, each in its own GRF-aligned slot starting at byte 0
/// (`%null` first), except the r0 views. Returns the variables and the next free offset.
pub fn predefined_vars(grf_size: u32) -> (Vec<GenVar>, u32) {
    let mut vars: Vec<GenVar> = Vec::new();
    let mut next = 0u32;
    for &(name, ty, num_elts) in PREDEFINED {
        // %r0 is one GRF: 8 dwords on 32-byte platforms, 16 on 64-byte ones.
        let num_elts = if name == "%r0" { grf_size / 4 } else { num_elts };
        let size = ty.size() * num_elts;
        vars.push(GenVar {
            name: name.to_string(),
            ty,
            num_elts,
            align: grf_size,
            alias: None,
            offset: next,
            size,
            root: VarId(vars.len() as u32),
            predefined: true,
            span: None,
            unit: None,
        });
        next = align_up(next + size, grf_size);
    }
    let r0 = vars.iter().position(|v| v.name == "%r0").unwrap_or(0);
    let r0_offset = vars[r0].offset;
    for &(name, byte) in R0_VIEWS {
        if let Some(v) = vars.iter_mut().find(|v| v.name == name) {
            v.alias = Some((VarId(r0 as u32), byte));
            v.offset = r0_offset + byte;
            v.root = VarId(r0 as u32);
        }
    }
    (vars, next)
}

/// A whole program: the kernel unit first, then stack-call function units.
#[derive(Clone, Debug)]
pub struct Program {
    pub files: Vec<SourceFile>,
    pub units: Vec<Unit>,
    pub insts: Vec<Inst>,
    pub vars: Vec<GenVar>,
    pub preds: Vec<PredVar>,
    pub addrs: Vec<AddrVar>,
    pub states: Vec<StateVar>,
    /// Bytes per GRF register (32, or 64 on platforms that have it).
    pub grf_size: u32,
    /// Total bytes of one thread's GRF file (all variables of all units).
    pub grf_bytes: u32,
    /// Total address-register slots per thread.
    pub addr_slots: u32,
    /// The OpenCL source line of every instruction, from `FILE` and `LOC` (empty without).
    pub lines: crate::lines::LineTable,
}

impl Program {
    pub fn var_id(&self, unit: UnitId, name: &str) -> Option<VarId> {
        self.vars
            .iter()
            .position(|v| v.name == name && (v.unit == Some(unit) || v.unit.is_none()))
            .map(|i| VarId(i as u32))
    }

    pub fn var(&self, id: VarId) -> &GenVar {
        &self.vars[id.0 as usize]
    }

    pub fn pred(&self, id: PredId) -> &PredVar {
        &self.preds[id.0 as usize]
    }

    pub fn addr(&self, id: AddrId) -> &AddrVar {
        &self.addrs[id.0 as usize]
    }

    pub fn inst(&self, idx: InstIdx) -> &Inst {
        &self.insts[idx.0 as usize]
    }

    pub fn kernel(&self) -> &Unit {
        &self.units[0]
    }

    pub fn unit(&self, id: UnitId) -> &Unit {
        &self.units[id.0 as usize]
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// `path:line:col` of a span.
    pub fn location(&self, span: Span) -> String {
        format!("{}:{}:{}", self.file(span.file).path, span.line, span.col)
    }

    /// The instruction's source text as written.
    pub fn inst_text(&self, idx: InstIdx) -> &str {
        let inst = self.inst(idx);
        let text = &self.file(inst.span.file).text;
        text.get(inst.span.start as usize..inst.span.end as usize).unwrap_or("").trim()
    }

    /// The `.function` section (subroutine) that instruction `pc` lies in, or its unit's name
    /// when it lies before every section.
    pub fn function_at(&self, pc: InstIdx) -> &str {
        let Some(inst) = self.insts.get(pc.0 as usize) else { return "" };
        let unit = self.unit(inst.unit);
        unit.subroutines
            .iter()
            .filter(|l| l.target <= pc)
            .max_by_key(|l| l.target.0)
            .map_or(&unit.name, |l| &l.name)
    }

    /// The stack-call function unit named `name`.
    pub fn function_unit(&self, name: &str) -> Option<UnitId> {
        self.units
            .iter()
            .position(|u| u.kind == UnitKind::Function && u.name == name)
            .map(|i| UnitId(i as u32))
    }

    /// Finds the instruction whose id is `$id` in `unit`.
    pub fn inst_by_id(&self, unit: UnitId, id: u32) -> Option<InstIdx> {
        let u = self.unit(unit);
        (u.entry.0..u.end.0).map(InstIdx).find(|&i| self.inst(i).id == id)
    }

    /// The first instruction at or after 1-based `line` of `file`.
    pub fn inst_at_line(&self, file: FileId, line: u32) -> Option<InstIdx> {
        self.insts
            .iter()
            .enumerate()
            .filter(|(_, i)| i.span.file == file && i.span.line >= line && i.op != Opcode::EndOfCode)
            .min_by_key(|(_, i)| i.span.line)
            .map(|(n, _)| InstIdx(n as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_layout_is_grf_aligned_and_r0_views_alias_r0() {
        let (vars, end) = predefined_vars(32);
        assert_eq!(end % 32, 0);
        let r0 = vars.iter().find(|v| v.name == "%r0").expect("r0");
        let gx = vars.iter().find(|v| v.name == "%group_id_x").expect("gx");
        assert_eq!(gx.offset, r0.offset + 4);
        let arg = vars.iter().find(|v| v.name == "%arg").expect("arg");
        assert_eq!(arg.size, 1024);
        assert_eq!(arg.offset % 32, 0);
    }
}

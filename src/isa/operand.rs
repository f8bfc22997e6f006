//! Decoded operands: every name already resolved to an index, every direct region to an
//! absolute byte offset in the thread's GRF file, so execution does no lookups.

use super::DataType;

/// Index of a general (G) variable in [`crate::program::Program::vars`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);
/// Index of a predicate (P) variable in [`crate::program::Program::preds`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PredId(pub u32);
/// Index of an address (A) variable in [`crate::program::Program::addrs`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AddrId(pub u32);
/// Index of a surface (T) or sampler (S) variable in [`crate::program::Program::states`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateId(pub u32);
/// Index of an instruction in [`crate::program::Program::insts`] (the pc).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstIdx(pub u32);
/// Index of a code unit (a kernel or a stack-call function file).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitId(pub u32);

/// A source region `<vstride; width, hstride>`, or for a destination `<hstride>` (then
/// `vstride == hstride * width` is not meaningful; use [`Region::dst`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub vstride: u8,
    pub width: u8,
    pub hstride: u8,
}

impl Region {
    /// The destination region `<hstride>`: element i is at i * hstride.
    pub const fn dst(hstride: u8) -> Region {
        Region { vstride: hstride, width: 1, hstride: 0 }
    }

    pub const fn scalar() -> Region {
        Region { vstride: 0, width: 1, hstride: 0 }
    }

    /// Element index (relative to the region origin) of lane `lane`, per the spec's
    /// pseudo-code: row `lane / width`, column `lane % width`.
    #[inline]
    pub fn element(self, lane: u32) -> u32 {
        let (row, column) = row_column(lane, self.width);
        row * self.vstride as u32 + column * self.hstride as u32
    }
}

/// Lane `lane`'s row and column in rows of `width` lanes (at least 1): a shift and a mask for
/// the power-of-two widths vISA allows, a division otherwise.
#[inline(always)]
pub fn row_column(lane: u32, width: u8) -> (u32, u32) {
    let width = width.max(1) as u32;
    if width.is_power_of_two() {
        (lane >> width.trailing_zeros(), lane & (width - 1))
    } else {
        (lane / width, lane % width)
    }
}

/// Source modifier written as a prefix: `(-)`, `(abs)`, `(-abs)`, `(~)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SrcMod {
    #[default]
    None,
    Neg,
    Abs,
    NegAbs,
    Not,
}

/// `V(r,c)<region>` on a general variable.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectOperand {
    pub var: VarId,
    /// Type of the access: the variable's declared type.
    pub ty: DataType,
    pub row: u32,
    pub col: u32,
    /// Absolute byte offset in the thread's GRF file of element (row, col).
    pub base: u32,
    pub region: Region,
    pub is_dst: bool,
    pub modifier: SrcMod,
    /// `%null`: writes are discarded, reads give zero.
    pub is_null: bool,
}

/// `r[A(k), off]<region>:T` — through an address variable element.
#[derive(Clone, Debug, PartialEq)]
pub struct IndirectOperand {
    pub addr: AddrId,
    /// Element k of the address variable.
    pub addr_elem: u32,
    /// Byte offset added to the address.
    pub imm_offset: i32,
    pub ty: DataType,
    pub region: Region,
    /// Multi-address form `<width, hstride>` (no vertical stride): one address per row.
    pub multi: bool,
    pub is_dst: bool,
    pub modifier: SrcMod,
}

/// An immediate `VALUE:T`. For `:v`/`:uv`/`:vf`, `bits` holds the packed 32-bit word.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Immediate {
    pub ty: DataType,
    /// The value's bits, truncated to the type's width (zero-extended into u64).
    pub bits: u64,
}

/// `A(k)<width>` address operand.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AddrOperand {
    pub addr: AddrId,
    pub elem: u32,
    pub width: u32,
}

/// `&V` or `&V[off]`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AddrOfOperand {
    pub var: VarId,
    /// Absolute GRF byte address: the variable's offset plus `off`.
    pub address: u32,
}

/// Raw message operand `V.off` (a contiguous byte range starting at `base`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RawOperand {
    pub var: VarId,
    /// Absolute GRF byte offset of `V.off`.
    pub base: u32,
    /// `%null.0`: no operand.
    pub is_null: bool,
}

/// LSC element data size (`d8`, `d16`, `d32`, `d64`, `d8c32`, `d16c32`, `d16c32h`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LscDataSize {
    D8,
    D16,
    D32,
    D64,
    /// 8-bit in memory, zero-extended to 32 bits in registers.
    D8U32,
    /// 16-bit in memory, zero-extended to 32 bits in registers.
    D16U32,
    /// 16-bit in memory, in the high half of 32 bits in registers.
    D16U32H,
}

impl LscDataSize {
    /// Bytes per element in memory.
    pub const fn mem_bytes(self) -> u32 {
        match self {
            LscDataSize::D8 | LscDataSize::D8U32 => 1,
            LscDataSize::D16 | LscDataSize::D16U32 | LscDataSize::D16U32H => 2,
            LscDataSize::D32 => 4,
            LscDataSize::D64 => 8,
        }
    }
    /// Bytes per element in registers (d8/d16 are widened to 32 bits per lane; d64 is 8).
    pub const fn reg_bytes(self) -> u32 {
        match self {
            LscDataSize::D64 => 8,
            _ => 4,
        }
    }
}

/// LSC data operand `V[.off]:d32x4t`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LscDataOperand {
    pub raw: RawOperand,
    pub data_size: LscDataSize,
    /// Vector length: 1, 2, 3, 4, 8, 16, 32 or 64.
    pub vector: u32,
    pub transpose: bool,
}

/// LSC 2D block data operand `V:d16.2x16x16nt`: element size, blocks (the array length),
/// block width and height in elements, transposed, VNNI-transformed (LSC_UNTYPED.md).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LscBlock2dData {
    pub raw: RawOperand,
    pub data_size: LscDataSize,
    pub blocks: u32,
    pub width: u32,
    pub height: u32,
    pub transpose: bool,
    pub vnni: bool,
}

/// LSC 2D block address: the surface and the block's top-left element, given one by one
/// (`flat[BASE,WIDTH,HEIGHT,PITCH,X,Y]`: width and height in bytes minus 1, pitch in bytes)
/// or as a payload register IGC 2.x built (`flat[V + (X,Y)]`: the same fields in dwords 0-6
/// of V, plus the immediate offsets).
#[derive(Clone, Debug, PartialEq)]
pub enum LscBlock2dAddr {
    Fields(Box<[Operand; 6]>),
    Payload { payload: RawOperand, x: i64, y: i64 },
}

/// LSC address model.
#[derive(Clone, Debug, PartialEq)]
pub enum LscAddrModel {
    Flat,
    Bti(Box<Operand>),
    Ss(Box<Operand>),
    Bss(Box<Operand>),
    Arg,
}

/// LSC address size `:a16`, `:a32`, `:a64`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LscAddrSize {
    A16,
    A32,
    A64,
}

impl LscAddrSize {
    /// Bytes per address element in registers.
    pub const fn bytes(self) -> u32 {
        match self {
            LscAddrSize::A16 => 2,
            LscAddrSize::A32 => 4,
            LscAddrSize::A64 => 8,
        }
    }
}

/// LSC address operand `MODEL[[SCALE*]V[+OFF]]:aNN`.
#[derive(Clone, Debug, PartialEq)]
pub struct LscAddrOperand {
    pub model: LscAddrModel,
    pub scale: u32,
    pub addr: RawOperand,
    pub offset: i64,
    pub size: LscAddrSize,
}

/// One decoded operand, in the order it appears in the text.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Direct(DirectOperand),
    Indirect(IndirectOperand),
    Imm(Immediate),
    /// A bare predicate variable (logic ops on predicates, `cmp`/`setp` destination, `mov` source).
    Pred(PredId),
    Addr(AddrOperand),
    AddrOf(AddrOfOperand),
    Raw(RawOperand),
    /// A bare surface or sampler name (`T6`, `%slm`, `S0`).
    State(StateId),
    /// `T7(0)` state operand of `movs`.
    StateElem(StateId, u32),
    /// A code label (goto, jmp target), resolved to the instruction it marks.
    Label(InstIdx),
    /// `switchjmp` targets.
    Labels(Vec<InstIdx>),
    /// A subroutine (`call NAME`) resolved to its first instruction.
    Subroutine(InstIdx),
    /// A stack-call function or symbol name (`fcall NAME`, `faddr NAME`).
    Function(String),
    LscData(LscDataOperand),
    LscAddr(LscAddrOperand),
    LscBlock2dData(LscBlock2dData),
    LscBlock2dAddr(LscBlock2dAddr),
    /// An integer literal that is not a typed immediate (counts in `fcall`, exdesc…).
    Int(i64),
}

/// `cmp` relation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CondMod {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// Atomic operation (svm_atomic, dword_atomic and the LSC `lsc_atomic_*` names).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Inc,
    Dec,
    /// Unsigned minimum.
    Min,
    /// Unsigned maximum.
    Max,
    Xchg,
    Cmpxchg,
    And,
    Or,
    Xor,
    /// Signed minimum.
    MinSint,
    /// Signed maximum.
    MaxSint,
    Fmax,
    Fmin,
    Fcmpwr,
    Fadd,
    Fsub,
    /// LSC `load` through the atomic unit.
    Load,
    /// LSC `store` through the atomic unit.
    Store,
    /// LSC `predec`.
    Predec,
}

/// Predicate control of an instruction: `(P)`, `(!P)`, `(P.any)`, `(!P.all)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    pub pred: PredId,
    pub invert: bool,
    pub combine: PredCombine,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PredCombine {
    None,
    Any,
    All,
}

/// Execution size and mask control `(M5_NM, 16)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExecMask {
    /// 1, 2, 4, 8, 16 or 32 (or a block count for oword/svm_block ops).
    pub size: u32,
    /// Channel offset selected by Mn: 4·(n−1).
    pub offset: u32,
    pub no_mask: bool,
}

/// The mnemonic's suffixes, decoded.
#[derive(Clone, Debug, PartialEq)]
pub enum SubOp {
    None,
    Cond(CondMod),
    /// `svm_gather.B.N` (block bytes, blocks per address), `gather_scaled.N`, `gather.N`.
    Blocks {
        block_size: u32,
        num_blocks: u32,
    },
    /// Channel mask of `*4scaled`/`*4_typed`: bit 0 = R … bit 3 = A.
    Channels(u8),
    /// `svm_atomic.OP.W` / `dword_atomic.OP[.16]`: operation and bit width (16, 32 or 64).
    Atomic {
        op: AtomicOp,
        bits: u32,
    },
    /// `bfn.xHH`: the truth table.
    Bfn(u8),
    /// `lsc_*.SFID.L1.L3` (and the atomic op for lsc_atomic_*).
    Lsc {
        sfid: LscSfid,
        l1: String,
        l3: String,
        atomic: Option<AtomicOp>,
    },
    /// `lsc_fence.SFID.OP.SCOPE`.
    LscFence {
        sfid: LscSfid,
        op: String,
        scope: String,
    },
    /// `fence_global.EISCRL1` options as written.
    Fence(String),
    /// `sbarrier.signal`/`.wait`, `nbarrier.signal`/`.wait`, `lifetime.start`/`.end`, and the
    /// `oword_ld`/`media_*` modifiers: the suffix text.
    Word(String),
}

/// LSC shared function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LscSfid {
    Ugm,
    Ugml,
    Slm,
    Tgm,
}

//! The vISA opcodes vdb knows, as one table: mnemonic text (12504 spelling) and family.

/// How the interpreter dispatches an opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// Per-lane arithmetic, logic, shift, math, compare, select, move.
    Alu,
    /// Address arithmetic (`addr_add`).
    Address,
    /// Control flow (goto, jmp, call, ret, fcall, …).
    Control,
    /// Memory messages (SVM, surface, LSC) and atomics.
    Memory,
    /// Barriers, fences, wait, yield.
    Sync,
    /// Instructions that change no architectural state (lifetime, .loc, .file).
    Nop,
    /// Parsed but not executable by vdb (sampler, media, 3D, raw send), and `dpas`, whose
    /// forms `exec/dpas.rs` runs get a plan of their own (the others fault).
    Unsupported,
}

macro_rules! opcodes {
    ($( $variant:ident => $text:literal, $family:ident; )*) => {
        /// A vISA opcode. Sub-operations (`cmp.eq`, `svm_gather.4.1`, `bfn.xHH`) live in
        /// [`crate::isa::SubOp`].
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Opcode { $( $variant, )* }

        impl Opcode {
            /// Every opcode in table order.
            pub const ALL: &'static [Opcode] = &[ $( Opcode::$variant, )* ];

            /// The lower-case mnemonic as the 12504 parser reads it (before any `.suffix`).
            pub const fn mnemonic(self) -> &'static str {
                match self { $( Opcode::$variant => $text, )* }
            }

            #[inline]
            pub const fn family(self) -> Family {
                match self { $( Opcode::$variant => Family::$family, )* }
            }

            /// Looks up a mnemonic exactly (the real parser is case-sensitive).
            pub fn from_mnemonic(text: &str) -> Option<Opcode> {
                match text { $( $text => Some(Opcode::$variant), )* _ => None }
            }
        }
    };
}

opcodes! {
    // Data movement and selection.
    Mov => "mov", Alu;
    Movs => "movs", Alu;
    Sel => "sel", Alu;
    Setp => "setp", Alu;
    Cmp => "cmp", Alu;
    Min => "min", Alu;
    Max => "max", Alu;
    Fcvt => "fcvt", Alu;
    // Integer and float arithmetic.
    Add => "add", Alu;
    Add3 => "add3", Alu;
    Avg => "avg", Alu;
    Mul => "mul", Alu;
    Mulh => "mulh", Alu;
    Mad => "mad", Alu;
    Madw => "madw", Alu;
    Addc => "addc", Alu;
    Subb => "subb", Alu;
    Sad2 => "sad2", Alu;
    Sad2add => "sad2add", Alu;
    Dp2 => "dp2", Alu;
    Dp3 => "dp3", Alu;
    Dp4 => "dp4", Alu;
    Dph => "dph", Alu;
    Dp4a => "dp4a", Alu;
    Line => "line", Alu;
    Plane => "plane", Alu;
    Lrp => "lrp", Alu;
    Srnd => "srnd", Alu;
    Div => "div", Alu;
    Mod => "mod", Alu;
    Divm => "divm", Alu;
    Pow => "pow", Alu;
    Inv => "inv", Alu;
    Log => "log", Alu;
    Exp => "exp", Alu;
    Sqrt => "sqrt", Alu;
    Rsqrt => "rsqrt", Alu;
    Sqrtm => "sqrtm", Alu;
    Sin => "sin", Alu;
    Cos => "cos", Alu;
    Frc => "frc", Alu;
    Rndd => "rndd", Alu;
    Rndu => "rndu", Alu;
    Rnde => "rnde", Alu;
    Rndz => "rndz", Alu;
    // vISA 4.2 math (IGC 2.x): `invm`/`rsqtm` also write an early-out predicate.
    Invm => "invm", Alu;
    Rsqtm => "rsqtm", Alu;
    Tanh => "tanh", Alu;
    Sigm => "sigm", Alu;
    // Logic, shift and bit manipulation.
    And => "and", Alu;
    Or => "or", Alu;
    Xor => "xor", Alu;
    Not => "not", Alu;
    Shl => "shl", Alu;
    Shr => "shr", Alu;
    Asr => "asr", Alu;
    Rol => "rol", Alu;
    Ror => "ror", Alu;
    Cbit => "cbit", Alu;
    Fbh => "fbh", Alu;
    Fbl => "fbl", Alu;
    Bfrev => "bfrev", Alu;
    Bfe => "bfe", Alu;
    Bfi => "bfi", Alu;
    Bfn => "bfn", Alu;
    Lzd => "lzd", Alu;
    // Address.
    AddrAdd => "addr_add", Address;
    // Control flow.
    Goto => "goto", Control;
    Jmp => "jmp", Control;
    Call => "call", Control;
    Fccall => "fccall", Control;
    Ret => "ret", Control;
    Fcall => "fcall", Control;
    Ifcall => "ifcall", Control;
    Fret => "fret", Control;
    Faddr => "faddr", Control;
    Switchjmp => "switchjmp", Control;
    // SVM (stateless A64).
    SvmBlockLd => "svm_block_ld", Memory;
    SvmBlockSt => "svm_block_st", Memory;
    SvmGather => "svm_gather", Memory;
    SvmScatter => "svm_scatter", Memory;
    SvmGather4Scaled => "svm_gather4scaled", Memory;
    SvmScatter4Scaled => "svm_scatter4scaled", Memory;
    SvmAtomic => "svm_atomic", Memory;
    // Surface (binding table or SLM).
    GatherScaled => "gather_scaled", Memory;
    ScatterScaled => "scatter_scaled", Memory;
    Gather4Scaled => "gather4_scaled", Memory;
    Scatter4Scaled => "scatter4_scaled", Memory;
    Gather => "gather", Memory;
    Scatter => "scatter", Memory;
    OwordLd => "oword_ld", Memory;
    OwordLdUnaligned => "oword_ld_unaligned", Memory;
    OwordSt => "oword_st", Memory;
    DwordAtomic => "dword_atomic", Memory;
    TypedAtomic => "typed_atomic", Unsupported;
    Gather4Typed => "gather4_typed", Unsupported;
    Scatter4Typed => "scatter4_typed", Unsupported;
    MediaLd => "media_ld", Unsupported;
    MediaSt => "media_st", Unsupported;
    QwGather => "qw_gather", Memory;
    QwScatter => "qw_scatter", Memory;
    // LSC (DG2 and newer).
    LscLoad => "lsc_load", Memory;
    LscStore => "lsc_store", Memory;
    LscAtomic => "lsc_atomic", Memory;
    LscLoadBlock2d => "lsc_load_block2d", Memory;
    LscStoreBlock2d => "lsc_store_block2d", Memory;
    LscLoadStatus => "lsc_load_status", Unsupported;
    LscFence => "lsc_fence", Sync;
    // Raw messages and matrix ops: parsed, not executed.
    RawSend => "raw_send", Unsupported;
    RawSendc => "raw_sendc", Unsupported;
    RawSends => "raw_sends", Unsupported;
    RawSendsc => "raw_sendsc", Unsupported;
    RawSendsEot => "raw_sends_eot", Unsupported;
    RawSendscEot => "raw_sendsc_eot", Unsupported;
    Dpas => "dpas", Unsupported;
    Dpasw => "dpasw", Unsupported;
    // vISA 4.2 (IGC 2.x): parsed; the vISA documentation gives no semantics for them.
    Bdpas => "bdpas", Unsupported;
    Lfsr => "lfsr", Unsupported;
    Dnscl => "dnscl", Unsupported;
    ShflIdx4 => "shfl_idx4", Unsupported;
    // Synchronisation.
    Barrier => "barrier", Sync;
    Sbarrier => "sbarrier", Sync;
    Nbarrier => "nbarrier", Sync;
    FenceGlobal => "fence_global", Sync;
    FenceLocal => "fence_local", Sync;
    FenceSw => "fence_sw", Sync;
    Wait => "wait", Sync;
    Yield => "yield", Sync;
    SamplerCacheFlush => "sampler_cache_flush", Sync;
    // No architectural effect.
    Lifetime => "lifetime", Nop;
    Loc => "loc", Nop;
    File => "file", Nop;
    // Sentinel the parser appends after each function's code: running into it is a fault.
    EndOfCode => "<end of code>", Control;
}

impl Opcode {
    /// Read-modify-write messages: the memory's new value combines its old one.
    pub const fn is_atomic(self) -> bool {
        matches!(self, Opcode::SvmAtomic | Opcode::DwordAtomic | Opcode::TypedAtomic | Opcode::LscAtomic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_are_unique_and_round_trip() {
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_mnemonic(op.mnemonic()), Some(op), "{op:?}");
        }
        assert_eq!(Opcode::from_mnemonic("ADD"), None);
    }
}

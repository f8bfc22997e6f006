//! Mnemonics: the opcode word plus its `.suffix` parts decoded into a [`SubOp`], and each
//! opcode's operand signature (which operand forms, in text order), whether it takes an
//! execution size and whether it may be predicated.

use super::operand::Slot;
use crate::isa::{AtomicOp, CondMod, LscSfid, Opcode, SubOp};

/// How an instruction's `(…)` after the mnemonic is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ExecKind {
    /// `(N)` or `(MASK, N)`, mandatory.
    Simd,
    /// `(N)` is a block count (oword and svm_block ops).
    Block,
    /// No execution size at all.
    None,
}

/// Operand signature and properties of one opcode.
pub(crate) struct Sig {
    pub slots: &'static [Slot],
    pub exec: ExecKind,
    pub can_pred: bool,
    pub can_sat: bool,
}

use Slot::*;

const D_S: &[Slot] = &[Dst, Src];
const D_S_S: &[Slot] = &[Dst, Src, Src];
const D_S_S_S: &[Slot] = &[Dst, Src, Src, Src];

pub(crate) fn signature(op: Opcode, sub: &SubOp) -> Sig {
    use Opcode as O;
    let simd = |slots: &'static [Slot]| Sig { slots, exec: ExecKind::Simd, can_pred: true, can_sat: false };
    let alu = |slots: &'static [Slot]| Sig { slots, exec: ExecKind::Simd, can_pred: true, can_sat: true };
    let nopred = |slots: &'static [Slot], exec| Sig { slots, exec, can_pred: false, can_sat: false };
    match op {
        O::Mov
        | O::Not
        | O::Cbit
        | O::Fbh
        | O::Fbl
        | O::Bfrev
        | O::Inv
        | O::Log
        | O::Exp
        | O::Sqrt
        | O::Rsqrt
        | O::Sin
        | O::Cos
        | O::Sqrtm
        | O::Frc
        | O::Lzd
        | O::Rndd
        | O::Rndu
        | O::Rnde
        | O::Rndz
        | O::Tanh
        | O::Sigm => alu(D_S),
        O::Add
        | O::Avg
        | O::Mul
        | O::Mulh
        | O::Sad2
        | O::Dp2
        | O::Dp3
        | O::Dp4
        | O::Dph
        | O::Line
        | O::Plane
        | O::Srnd
        | O::Div
        | O::Mod
        | O::Pow
        | O::Divm
        | O::And
        | O::Or
        | O::Xor
        | O::Shl
        | O::Shr
        | O::Asr
        | O::Rol
        | O::Ror
        | O::Sel
        | O::Min
        | O::Max => alu(D_S_S),
        O::Mad | O::Lrp | O::Sad2add | O::Madw | O::Add3 | O::Dp4a | O::Bfe | O::Bfn => alu(D_S_S_S),
        O::Bfi => alu(&[Dst, Src, Src, Src, Src]),
        O::Addc | O::Subb => simd(&[Dst, Dst, Src, Src]),
        // `[(P)] invm (N) DST PREDDST SRC0 SRC1`, `rsqtm` without SRC1 (CISA.y ARITH5_OP2).
        O::Invm => simd(&[Dst, Dst, Src, Src]),
        O::Rsqtm => simd(&[Dst, Dst, Src]),
        // `[(P)] lfsr.FC (N) DST SRC0 SRC1` and `[(P)] shfl_idx4 (N) RAW SRC0 SRC1` (no .sat).
        O::Lfsr => simd(D_S_S),
        O::ShflIdx4 => simd(&[Raw, Src, Src]),
        O::Dnscl => simd(&[Raw, Raw, Raw, Raw]),
        // `bdpas.A.B.8.8 (M1, 16) DST SRC0 SRC1 SRC2 SCALE1 SCALE2`: the scales are `V(r,c)`.
        O::Bdpas => nopred(&[Raw, Raw, Raw, Raw, SrcLoose, SrcLoose], ExecKind::Simd),
        O::Cmp => nopred(D_S_S, ExecKind::Simd),
        O::Setp => nopred(D_S, ExecKind::Simd),
        O::Fcvt => Sig { can_sat: true, ..nopred(D_S, ExecKind::Simd) },
        O::Movs => nopred(&[StateDst, StateSrc], ExecKind::Simd),
        O::AddrAdd => nopred(D_S_S, ExecKind::Simd),
        O::Goto | O::Jmp => simd(&[Label]),
        O::Call | O::Fccall => simd(&[Subroutine]),
        O::Ret | O::Fret => simd(&[]),
        O::Fcall => simd(&[Function, Int, Int]),
        O::Ifcall => simd(&[Src, Int, Int]),
        O::Faddr => nopred(&[Function, Dst], ExecKind::None),
        O::Switchjmp => nopred(&[Src, Labels], ExecKind::Simd),
        O::SvmBlockLd | O::SvmBlockSt => nopred(&[Src, Raw], ExecKind::Block),
        O::SvmGather | O::SvmScatter => simd(&[Raw, Raw]),
        O::SvmGather4Scaled | O::SvmScatter4Scaled => simd(&[Src, Raw, Raw]),
        O::SvmAtomic => simd(&[Raw, Raw, Raw, Raw]),
        O::GatherScaled | O::ScatterScaled | O::Gather4Scaled | O::Scatter4Scaled => {
            simd(&[Surf, Src, Raw, Raw])
        }
        O::Gather | O::Scatter => nopred(&[Surf, Src, Raw, Raw], ExecKind::Simd),
        O::OwordLd | O::OwordLdUnaligned | O::OwordSt => nopred(&[Surf, Src, Raw], ExecKind::Block),
        O::DwordAtomic => simd(&[Surf, Raw, Raw, Raw, Raw]),
        O::TypedAtomic => simd(&[Surf, Raw, Raw, Raw, Raw, Raw, Raw, Raw]),
        O::Gather4Typed | O::Scatter4Typed => simd(&[Surf, Raw, Raw, Raw, Raw, Raw]),
        O::MediaLd | O::MediaSt => nopred(&[Surf, Src, Src, Src, Src, Src, Raw], ExecKind::None),
        O::QwGather | O::QwScatter => simd(&[Surf, Raw, Raw]),
        O::LscLoad => simd(&[LscData, LscAddr]),
        O::LscStore => simd(&[LscAddr, LscData]),
        O::LscAtomic => simd(&[LscData, LscAddr, RawBare, RawBare]),
        O::LscLoadBlock2d => simd(&[LscBlock2dData, LscBlock2dAddr]),
        O::LscStoreBlock2d => simd(&[LscBlock2dAddr, LscBlock2dData]),
        O::LscLoadStatus => simd(&[Raw, LscAddr]),
        O::LscFence => nopred(&[], ExecKind::None),
        O::RawSend | O::RawSendc => simd(&[Int, Int, Int, Src, Raw, Raw]),
        O::RawSends | O::RawSendsc | O::RawSendsEot | O::RawSendscEot => simd(&[Src, Src, Raw, Raw, Raw]),
        O::Dpas | O::Dpasw => nopred(&[Raw, Raw, Raw, SrcLoose], ExecKind::Simd),
        O::Nbarrier => match sub {
            SubOp::Word(w) if w == "signal" => nopred(&[Src, Src], ExecKind::None),
            _ => nopred(&[Src], ExecKind::None),
        },
        O::Wait => nopred(&[Src], ExecKind::None),
        O::Barrier
        | O::Sbarrier
        | O::FenceGlobal
        | O::FenceLocal
        | O::FenceSw
        | O::Yield
        | O::SamplerCacheFlush => nopred(&[], ExecKind::None),
        O::Lifetime => nopred(&[Var], ExecKind::None),
        O::Loc | O::File | O::EndOfCode => nopred(&[], ExecKind::None),
    }
}

fn atomic_op(name: &str) -> Option<AtomicOp> {
    use AtomicOp as A;
    Some(match name {
        "add" => A::Add,
        "sub" => A::Sub,
        "inc" => A::Inc,
        "dec" => A::Dec,
        "min" => A::Min,
        "max" => A::Max,
        "xchg" => A::Xchg,
        "cmpxchg" => A::Cmpxchg,
        "and" => A::And,
        "or" => A::Or,
        "xor" => A::Xor,
        "minsint" => A::MinSint,
        "maxsint" => A::MaxSint,
        "fmax" => A::Fmax,
        "fmin" => A::Fmin,
        "fcmpwr" => A::Fcmpwr,
        "fadd" => A::Fadd,
        "fsub" => A::Fsub,
        _ => return None,
    })
}

fn lsc_atomic_op(name: &str) -> Option<AtomicOp> {
    use AtomicOp as A;
    Some(match name {
        "iadd" => A::Add,
        "isub" => A::Sub,
        "iinc" => A::Inc,
        "idec" => A::Dec,
        "umin" => A::Min,
        "umax" => A::Max,
        "smin" => A::MinSint,
        "smax" => A::MaxSint,
        "xchg" => A::Xchg,
        "icas" => A::Cmpxchg,
        "and" => A::And,
        "or" => A::Or,
        "xor" => A::Xor,
        "fadd" => A::Fadd,
        "fsub" => A::Fsub,
        "fmin" => A::Fmin,
        "fmax" => A::Fmax,
        "fcas" => A::Fcmpwr,
        "load" => A::Load,
        "store" => A::Store,
        "predec" => A::Predec,
        _ => return None,
    })
}

fn sfid(name: &str) -> Option<LscSfid> {
    Some(match name {
        "ugm" => LscSfid::Ugm,
        "ugml" => LscSfid::Ugml,
        "slm" => LscSfid::Slm,
        "tgm" => LscSfid::Tgm,
        _ => return None,
    })
}

/// `R`, `RG`, `GA`, `RGBA`…: letters in RGBA order, either case.
fn channels(text: &str) -> Option<u8> {
    let mut mask = 0u8;
    let mut last = 0u8;
    for c in text.chars() {
        let bit = match c.to_ascii_uppercase() {
            'R' => 1,
            'G' => 2,
            'B' => 4,
            'A' => 8,
            _ => return None,
        };
        if bit <= last {
            return None;
        }
        last = bit;
        mask |= bit;
    }
    (mask != 0).then_some(mask)
}

const CACHE_OPTS: &[&str] = &["df", "uc", "ca", "wb", "wt", "st", "ri", "cc"];

/// Decodes the mnemonic word and its suffix parts. Returns the opcode, sub-op and `.sat`,
/// or an error message (reported at the mnemonic).
pub(crate) fn decode(word: &str, parts: &[String]) -> Result<(Opcode, SubOp, bool), String> {
    let (op, mut parts) = if let Some(name) = word.strip_prefix("lsc_atomic_") {
        let a = lsc_atomic_op(name).ok_or_else(|| format!("unknown LSC atomic operation '{name}'"))?;
        let mut p = parts.to_vec();
        p.insert(0, format!("\u{1}{name}"));
        let _ = a;
        (Opcode::LscAtomic, p)
    } else {
        match Opcode::from_mnemonic(word) {
            Some(Opcode::EndOfCode) | None => {
                if Opcode::from_mnemonic(&word.to_ascii_lowercase()).is_some() {
                    return Err(format!("syntax error, unexpected '{word}' (mnemonics are lower case)"));
                }
                return Err(format!("syntax error, unknown mnemonic '{word}'"));
            }
            Some(op) => (op, parts.to_vec()),
        }
    };
    let sig = signature(op, &SubOp::None);
    let mut sat = false;
    if sig.can_sat && parts.last().is_some_and(|p| p == "sat") {
        parts.pop();
        sat = true;
    }
    let bad = |p: &str| format!("syntax error, unexpected suffix '.{p}' on '{word}'");
    let count = |n: std::ops::RangeInclusive<usize>, parts: &[String]| -> Result<(), String> {
        if n.contains(&parts.len()) {
            Ok(())
        } else {
            Err(match parts.get(*n.end()) {
                Some(p) => bad(p),
                None => format!("syntax error, '{word}' needs a suffix"),
            })
        }
    };
    let num = |p: &String, allowed: &[u32]| -> Result<u32, String> {
        p.parse::<u32>().ok().filter(|n| allowed.contains(n)).ok_or_else(|| bad(p))
    };
    use Opcode as O;
    let sub = match op {
        O::Cmp => {
            count(1..=1, &parts)?;
            let rel = match parts[0].as_str() {
                "eq" => CondMod::Eq,
                "ne" => CondMod::Ne,
                "gt" => CondMod::Gt,
                "ge" => CondMod::Ge,
                "lt" => CondMod::Lt,
                "le" => CondMod::Le,
                p => return Err(bad(p)),
            };
            SubOp::Cond(rel)
        }
        O::SvmGather | O::SvmScatter => {
            count(2..=2, &parts)?;
            SubOp::Blocks {
                block_size: num(&parts[0], &[1, 4, 8])?,
                num_blocks: num(&parts[1], &[1, 2, 4, 8])?,
            }
        }
        O::SvmAtomic | O::DwordAtomic | O::TypedAtomic => {
            count(1..=2, &parts)?;
            let a = atomic_op(&parts[0]).ok_or_else(|| bad(&parts[0]))?;
            let widths: &[u32] = if op == O::SvmAtomic { &[16, 32, 64] } else { &[16] };
            let bits = match parts.get(1) {
                Some(p) => num(p, widths)?,
                None => 32,
            };
            SubOp::Atomic { op: a, bits }
        }
        O::GatherScaled | O::ScatterScaled => {
            count(1..=1, &parts)?;
            SubOp::Blocks { block_size: 1, num_blocks: num(&parts[0], &[1, 2, 4])? }
        }
        O::Gather | O::Scatter => {
            count(1..=1, &parts)?;
            SubOp::Blocks { block_size: num(&parts[0], &[1, 2, 4])?, num_blocks: 1 }
        }
        O::QwGather | O::QwScatter => {
            count(1..=1, &parts)?;
            SubOp::Blocks { block_size: 8, num_blocks: num(&parts[0], &[1, 2, 4])? }
        }
        O::SvmGather4Scaled
        | O::SvmScatter4Scaled
        | O::Gather4Scaled
        | O::Scatter4Scaled
        | O::Gather4Typed
        | O::Scatter4Typed => {
            count(1..=1, &parts)?;
            SubOp::Channels(channels(&parts[0]).ok_or_else(|| bad(&parts[0]))?)
        }
        O::Bfn => {
            count(1..=1, &parts)?;
            let hex = parts[0].strip_prefix('x').ok_or_else(|| bad(&parts[0]))?;
            SubOp::Bfn(u8::from_str_radix(hex, 16).map_err(|_| bad(&parts[0]))?)
        }
        // `.aligned` / `.unaligned` (vISA 4.2; IGC 1.0.12504 prints the unaligned read with no
        // suffix). The suffix text is kept: the interpreter reads it for the alignment rule.
        O::SvmBlockLd if !parts.is_empty() => {
            count(1..=1, &parts)?;
            if parts[0] != "aligned" && parts[0] != "unaligned" {
                return Err(bad(&parts[0]));
            }
            SubOp::Word(parts[0].clone())
        }
        O::Add3 if !parts.is_empty() => {
            count(1..=1, &parts)?;
            if parts[0] != "o" {
                return Err(bad(&parts[0]));
            }
            SubOp::Word("o".into())
        }
        O::LscLoad
        | O::LscStore
        | O::LscAtomic
        | O::LscLoadBlock2d
        | O::LscStoreBlock2d
        | O::LscLoadStatus => {
            let atomic = match parts.first().and_then(|p| p.strip_prefix('\u{1}')) {
                Some(name) => {
                    let a = lsc_atomic_op(name);
                    parts.remove(0);
                    a
                }
                None => None,
            };
            count(1..=3, &parts)?;
            let s = sfid(&parts[0]).ok_or_else(|| bad(&parts[0]))?;
            for p in &parts[1..] {
                if !CACHE_OPTS.contains(&p.as_str()) {
                    return Err(bad(p));
                }
            }
            let l1 = parts.get(1).cloned().unwrap_or_else(|| "df".into());
            let l3 = parts.get(2).cloned().unwrap_or_else(|| "df".into());
            SubOp::Lsc { sfid: s, l1, l3, atomic }
        }
        O::LscFence => {
            count(3..=3, &parts)?;
            let s = sfid(&parts[0]).ok_or_else(|| bad(&parts[0]))?;
            const OPS: &[&str] = &["none", "evict", "invalidate", "discard", "clean", "flushl3", "type6"];
            const SCOPES: &[&str] = &["group", "local", "tile", "gpu", "gpus", "sysrel", "sysacq"];
            if !OPS.contains(&parts[1].as_str()) {
                return Err(bad(&parts[1]));
            }
            if !SCOPES.contains(&parts[2].as_str()) {
                return Err(bad(&parts[2]));
            }
            SubOp::LscFence { sfid: s, op: parts[1].clone(), scope: parts[2].clone() }
        }
        O::FenceGlobal | O::FenceLocal => {
            count(0..=1, &parts)?;
            match parts.first() {
                Some(p) if fence_opts_ok(p) => SubOp::Fence(p.clone()),
                Some(p) => return Err(bad(p)),
                None => SubOp::Fence(String::new()),
            }
        }
        O::Sbarrier | O::Nbarrier => {
            count(1..=1, &parts)?;
            if parts[0] != "signal" && parts[0] != "wait" {
                return Err(bad(&parts[0]));
            }
            SubOp::Word(parts[0].clone())
        }
        O::Lifetime => {
            count(1..=1, &parts)?;
            if parts[0] != "start" && parts[0] != "end" {
                return Err(bad(&parts[0]));
            }
            SubOp::Word(parts[0].clone())
        }
        O::MediaLd | O::MediaSt => {
            count(1..=1, &parts)?;
            const MODES: &[&str] = &["nomod", "modified", "top", "bottom", "top_mod", "bottom_mod"];
            if !MODES.contains(&parts[0].as_str()) {
                return Err(bad(&parts[0]));
            }
            SubOp::Word(parts[0].clone())
        }
        O::OwordLd | O::OwordLdUnaligned if !parts.is_empty() => {
            count(1..=1, &parts)?;
            SubOp::Word(parts[0].clone())
        }
        O::RawSends | O::RawSendsc | O::RawSendsEot | O::RawSendscEot => {
            count(0..=4, &parts)?;
            SubOp::Word(parts.join("."))
        }
        // The suffix text is kept whole; `dpas_suffix` checks it against IGC's lexer patterns.
        O::Dpas | O::Dpasw | O::Bdpas => {
            count(4..=4, &parts)?;
            dpas_suffix(op, &parts).map_err(|p| bad(p))?;
            SubOp::Word(parts.join("."))
        }
        O::Lfsr => {
            count(1..=1, &parts)?;
            if !["b32", "b16v2", "b8v4"].contains(&parts[0].as_str()) {
                return Err(bad(&parts[0]));
            }
            SubOp::Word(parts[0].clone())
        }
        // `dnscl.TYPE.modeN.RND`.
        O::Dnscl => {
            count(3..=3, &parts)?;
            const TYPES: &[&str] = &["bftoe2m1", "bftoint4", "hftoe2m1", "hftoint4"];
            const MODES: &[&str] = &["mode0", "mode1", "mode2", "mode3"];
            for (p, allowed) in parts.iter().zip([TYPES, MODES, &["srnd", "rne"]]) {
                if !allowed.contains(&p.as_str()) {
                    return Err(bad(p));
                }
            }
            SubOp::Word(parts.join("."))
        }
        _ => {
            count(0..=0, &parts)?;
            SubOp::None
        }
    };
    Ok((op, sub, sat))
}

/// Checks `dpas`/`dpasw`/`bdpas` suffixes `.A.B.DEPTH.COUNT` as IGC 2.x's lexer spells them
/// (precisions s1..s8/u1..u8/bf/hf, or pairs of tf32, of bf8/hf8 and of e2m1; bdpas takes
/// bf, hf, bf8/hf8 or e2m1 pairs and only `.8.8`). Returns the offending part.
fn dpas_suffix(op: Opcode, parts: &[String]) -> Result<(), &String> {
    let lower = |p: &String| p.to_ascii_lowercase();
    let (a, b) = (lower(&parts[0]), lower(&parts[1]));
    let short = |p: &str| {
        let c: Vec<char> = p.chars().collect();
        c.len() == 2
            && ((matches!(c[0], 's' | 'u') && matches!(c[1], '1' | '2' | '4' | '8'))
                || (matches!(c[0], 'b' | 'h') && c[1] == 'f'))
    };
    let fp8 = |p: &str| p == "bf8" || p == "hf8";
    let pair_ok = match op {
        Opcode::Bdpas => {
            (a == "bf" && b == "bf")
                || (a == "hf" && b == "hf")
                || (fp8(&a) && fp8(&b))
                || (a == "e2m1" && b == "e2m1")
        }
        Opcode::Dpasw => short(&a) && short(&b),
        _ => {
            (short(&a) && short(&b))
                || (a == "tf32" && b == "tf32")
                || (fp8(&a) && fp8(&b))
                || (a == "e2m1" && b == "e2m1")
        }
    };
    if !pair_ok {
        return Err(if short(&a) || fp8(&a) || a == "tf32" || a == "e2m1" { &parts[1] } else { &parts[0] });
    }
    let depths: &[&str] = if op == Opcode::Bdpas { &["8"] } else { &["1", "2", "4", "8"] };
    if !depths.contains(&parts[2].as_str()) {
        return Err(&parts[2]);
    }
    let counts: &[&str] =
        if op == Opcode::Bdpas { &["8"] } else { &["1", "2", "3", "4", "5", "6", "7", "8"] };
    if !counts.contains(&parts[3].as_str()) {
        return Err(&parts[3]);
    }
    Ok(())
}

/// `fence_global` options: a subsequence of E, I, S, C, R, L1 in that order.
fn fence_opts_ok(text: &str) -> bool {
    let mut rest = text;
    for opt in ["E", "I", "S", "C", "R", "L1"] {
        if let Some(r) = rest.strip_prefix(opt) {
            rest = r;
        }
    }
    rest.is_empty() && !text.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(word: &str, parts: &[&str]) -> Result<(Opcode, SubOp, bool), String> {
        let parts: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
        decode(word, &parts)
    }

    #[test]
    fn suffixes() {
        assert_eq!(d("cmp", &["ge"]).ok(), Some((Opcode::Cmp, SubOp::Cond(CondMod::Ge), false)));
        assert!(d("CMP", &["GE"]).is_err());
        assert_eq!(d("add", &["sat"]).ok(), Some((Opcode::Add, SubOp::None, true)));
        assert_eq!(
            d("svm_atomic", &["add", "64"]).ok().map(|x| x.1),
            Some(SubOp::Atomic { op: AtomicOp::Add, bits: 64 })
        );
        assert_eq!(
            d("svm_atomic", &["or"]).ok().map(|x| x.1),
            Some(SubOp::Atomic { op: AtomicOp::Or, bits: 32 })
        );
        assert_eq!(d("gather4_scaled", &["RB"]).ok().map(|x| x.1), Some(SubOp::Channels(5)));
        assert!(d("gather4_scaled", &["BR"]).is_err());
        assert_eq!(d("bfn", &["xd8"]).ok().map(|x| x.1), Some(SubOp::Bfn(0xd8)));
        assert_eq!(
            d("svm_block_ld", &["unaligned"]).ok().map(|x| x.1),
            Some(SubOp::Word("unaligned".into()))
        );
        assert_eq!(d("svm_block_ld", &["aligned"]).ok().map(|x| x.1), Some(SubOp::Word("aligned".into())));
        assert!(d("svm_block_ld", &["sideways"]).is_err());
        assert!(d("svm_block_st", &["unaligned"]).is_err());
        let lsc = d("lsc_atomic_icas", &["ugm"]).ok().map(|x| x.1);
        assert!(matches!(lsc, Some(SubOp::Lsc { atomic: Some(AtomicOp::Cmpxchg), .. })));
        assert!(fence_opts_ok("ERL1") && !fence_opts_ok("RE"));
    }
}

//! Operand parsing. Each instruction's signature says which operand form a position takes
//! ([`Slot`]); this module parses that form and resolves names to ids and GRF offsets.

use super::lexer::Tok;
use super::parser::{describe, Binding, Fixup, PErr, PResult, UnitParser};
use crate::isa::{
    AddrOfOperand, AddrOperand, DataType, DirectOperand, IndirectOperand, InstIdx, Operand, RawOperand,
    Region, SrcMod, VarId,
};
use crate::program::Span;

/// What one operand position of an instruction accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// General destination: `V(r,c)<h>`, `V<h>`, indirect, predicate, `A0(k)<w>`.
    Dst,
    /// General source: region, indirect, immediate, predicate, address, `&V`.
    Src,
    /// Like `Src` but `V(r,c)` may omit the region (dpas).
    SrcLoose,
    /// Raw `V.off` / `%null.0`.
    Raw,
    /// Raw, or a bare variable meaning offset 0 (LSC atomic sources).
    RawBare,
    /// Bare surface or sampler.
    Surf,
    /// `movs` destination: `T7(0)` or a general destination.
    StateDst,
    /// `movs` source: `T7(0)` or a general source.
    StateSrc,
    Label,
    Labels,
    Subroutine,
    Function,
    Int,
    /// Any declared variable, bare (lifetime).
    Var,
    LscData,
    LscAddr,
    LscBlock2dData,
    LscBlock2dAddr,
}

impl Slot {
    fn describe(self) -> &'static str {
        match self {
            Slot::Dst | Slot::StateDst => "a destination operand",
            Slot::Src | Slot::SrcLoose | Slot::StateSrc => "a source operand",
            Slot::Raw | Slot::RawBare => "a raw operand like V.0",
            Slot::Surf => "a surface or sampler",
            Slot::Label => "a label",
            Slot::Labels => "a label list",
            Slot::Subroutine => "a subroutine name",
            Slot::Function => "a function name",
            Slot::Int => "an integer",
            Slot::Var => "a variable",
            Slot::LscData => "an LSC data operand like V:d32",
            Slot::LscAddr => "an LSC address like flat[V]:a64",
            Slot::LscBlock2dData => "a 2D block data operand like V:d16.2x16x16nn",
            Slot::LscBlock2dAddr => "a 2D block address like flat[V + (0,0)] or flat[B,W,H,P,X,Y]",
        }
    }
}

/// Index placeholder for a label resolved after the unit is read.
const UNRESOLVED: InstIdx = InstIdx(u32::MAX);

impl UnitParser<'_> {
    /// Parses operand number `index` of the instruction that will be `insts[inst]`.
    pub fn operand(&mut self, slot: Slot, inst: usize, index: usize) -> PResult<Operand> {
        if self.at_eol() {
            return self.unexpected(slot.describe());
        }
        match slot {
            Slot::Dst => self.general(true, false),
            Slot::Src => self.general(false, false),
            Slot::SrcLoose => self.general(false, true),
            Slot::Raw => self.raw(false),
            Slot::RawBare => self.raw(true),
            Slot::Surf => {
                let (name, span) = self.var_name()?;
                match self.resolve(&name, span)? {
                    Binding::State(s) => Ok(Operand::State(s)),
                    _ => Err(PErr { span, msg: format!("{name}: not a surface or sampler variable") }),
                }
            }
            Slot::StateDst | Slot::StateSrc => {
                if let Tok::Ident(name) = &self.peek().tok {
                    if let Some(Binding::State(s)) = self.lookup(name) {
                        self.pos += 1;
                        self.expect_p("(")?;
                        let k = self.expr(false)?;
                        self.expect_p(")")?;
                        let k = u32::try_from(k)
                            .map_err(|_| PErr { span: self.peek().span, msg: "negative element".into() })?;
                        return Ok(Operand::StateElem(s, k));
                    }
                }
                self.general(slot == Slot::StateDst, false)
            }
            Slot::Label => {
                let (name, span) = self.label_name()?;
                self.fixups.push(Fixup { name, span, inst, operand: index, slot: None, subroutine: false });
                Ok(Operand::Label(UNRESOLVED))
            }
            Slot::Subroutine => {
                let (name, span) = self.label_name()?;
                self.fixups.push(Fixup { name, span, inst, operand: index, slot: None, subroutine: true });
                Ok(Operand::Subroutine(UNRESOLVED))
            }
            Slot::Labels => {
                self.expect_p("(")?;
                let mut list = Vec::new();
                loop {
                    let (name, span) = self.label_name()?;
                    self.fixups.push(Fixup {
                        name,
                        span,
                        inst,
                        operand: index,
                        slot: Some(list.len()),
                        subroutine: false,
                    });
                    list.push(UNRESOLVED);
                    if self.eat_p(")") {
                        return Ok(Operand::Labels(list));
                    }
                    self.expect_p(",")?;
                }
            }
            Slot::Function => Ok(Operand::Function(self.expect_name("a function name")?.0)),
            Slot::Int => {
                let neg = self.eat_p("-");
                let v = match self.peek().tok {
                    Tok::Int { .. } | Tok::P("(") => self.expr_primary()?,
                    _ => return self.unexpected("an integer"),
                };
                Ok(Operand::Int(if neg { v.wrapping_neg() } else { v }))
            }
            Slot::Var => {
                let (name, span) = self.var_name()?;
                Ok(match self.resolve(&name, span)? {
                    Binding::Gen(v) => Operand::Raw(self.raw_at(v, 0, span)?),
                    Binding::Pred(p) => Operand::Pred(p),
                    Binding::Addr(a) => Operand::Addr(AddrOperand { addr: a, elem: 0, width: 1 }),
                    Binding::State(s) => Operand::State(s),
                })
            }
            Slot::LscData => self.lsc_data(),
            Slot::LscAddr => self.lsc_addr(),
            Slot::LscBlock2dData => self.lsc_block2d_data(),
            Slot::LscBlock2dAddr => self.lsc_block2d_addr(),
        }
    }

    /// One primary of an integer expression (a literal or a parenthesised expression).
    pub(crate) fn expr_primary(&mut self) -> PResult<i64> {
        if self.eat_p("(") {
            let v = self.expr(false)?;
            self.expect_p(")")?;
            return Ok(v);
        }
        match self.next().tok {
            Tok::Int { value, hex } => Ok(super::expr::int_literal_value(value, hex)),
            _ => Err(PErr { span: self.peek().span, msg: "expected an integer".into() }),
        }
    }

    fn var_name(&mut self) -> PResult<(String, Span)> {
        self.expect_ident("a variable name")
    }

    fn label_name(&mut self) -> PResult<(String, Span)> {
        match self.take_word(true) {
            Some(word) => Ok(word),
            None => self.unexpected("a label name"),
        }
    }

    fn gen_var(&self, name: &str, span: Span) -> PResult<VarId> {
        match self.resolve(name, span)? {
            Binding::Gen(v) => Ok(v),
            _ => Err(PErr { span, msg: format!("{name}: not a general variable") }),
        }
    }

    pub(crate) fn non_negative(&self, v: i64, span: Span, what: &str) -> PResult<u32> {
        u32::try_from(v)
            .map_err(|_| PErr { span, msg: format!("{what} must be a non-negative 32-bit value, got {v}") })
    }

    fn raw_at(&self, var: VarId, off: u32, span: Span) -> PResult<RawOperand> {
        let v = &self.ctx.vars[var.0 as usize];
        let base = v.offset.checked_add(off).ok_or_else(|| PErr { span, msg: "offset too large".into() })?;
        Ok(RawOperand { var, base, is_null: v.name == "%null" })
    }

    /// `V.off`, `V.(expr)`, `%null.0`; with `bare`, also `V` alone.
    pub(crate) fn raw(&mut self, bare: bool) -> PResult<Operand> {
        let (name, span) = self.var_name()?;
        let var = self.gen_var(&name, span)?;
        let off = if self.at_p(".") {
            self.pos += 1;
            let s = self.peek().span;
            let v = self.expr_primary()?;
            self.non_negative(v, s, "raw operand offset")?
        } else if bare {
            0
        } else {
            return self.unexpected("'.' and a byte offset");
        };
        Ok(Operand::Raw(self.raw_at(var, off, span)?))
    }

    /// `(-)`, `(abs)`, `(-abs)`, `(~)` prefix, if present.
    fn modifier(&mut self) -> PResult<SrcMod> {
        if !self.at_p("(") {
            return Ok(SrcMod::None);
        }
        let m = match (&self.peek_n(1).tok, &self.peek_n(2).tok, &self.peek_n(3).tok) {
            (Tok::P("-"), Tok::P(")"), _) => (SrcMod::Neg, 3),
            (Tok::P("~"), Tok::P(")"), _) => (SrcMod::Not, 3),
            (Tok::Ident(a), Tok::P(")"), _) if a == "abs" => (SrcMod::Abs, 3),
            (Tok::P("-"), Tok::Ident(a), Tok::P(")")) if a == "abs" => (SrcMod::NegAbs, 4),
            _ => return Ok(SrcMod::None),
        };
        self.pos += m.1;
        Ok(m.0)
    }

    /// General source or destination operand.
    pub(crate) fn general(&mut self, is_dst: bool, loose: bool) -> PResult<Operand> {
        let modifier = if is_dst { SrcMod::None } else { self.modifier()? };
        let t = self.peek().clone();
        match &t.tok {
            Tok::P("-") | Tok::Int { .. } | Tok::Float(_) | Tok::P("(") => {
                if is_dst || modifier != SrcMod::None {
                    return self.unexpected(if is_dst {
                        "a destination operand"
                    } else {
                        "a variable after a modifier"
                    });
                }
                Ok(Operand::Imm(self.immediate()?))
            }
            Tok::P("&") if !is_dst => {
                self.pos += 1;
                let (name, span) = self.var_name()?;
                let var = self.gen_var(&name, span)?;
                let mut off = 0;
                if self.eat_p("[") {
                    let s = self.peek().span;
                    let v = self.expr(false)?;
                    off = self.non_negative(v, s, "address-of offset")?;
                    self.expect_p("]")?;
                }
                let address = self.ctx.vars[var.0 as usize].offset.saturating_add(off);
                Ok(Operand::AddrOf(AddrOfOperand { var, address }))
            }
            Tok::Ident(r) if r == "r" && self.at_p_n(1, "[") => self.indirect(is_dst, modifier),
            Tok::Ident(w) if !is_dst && (w == "%sizeof" || w == "%DispatchSimd") => {
                Ok(Operand::Imm(self.immediate()?))
            }
            Tok::Ident(name) => {
                let name = name.clone();
                self.pos += 1;
                match self.resolve(&name, t.span)? {
                    Binding::Gen(v) => self.direct(v, &name, t.span, is_dst, loose, modifier),
                    Binding::Pred(p) if modifier == SrcMod::None => Ok(Operand::Pred(p)),
                    Binding::Addr(a) => {
                        self.expect_p("(")?;
                        let s = self.peek().span;
                        let k = self.expr(false)?;
                        let elem = self.non_negative(k, s, "address element")?;
                        self.expect_p(")")?;
                        self.expect_p("<")?;
                        let s = self.peek().span;
                        let w = self.expr(true)?;
                        let width = self.non_negative(w, s, "address width")?;
                        self.expect_p(">")?;
                        if elem >= self.ctx.addrs[a.0 as usize].num_elts {
                            return Err(PErr {
                                span: t.span,
                                msg: format!("{name}({elem}) is past the end of {name}"),
                            });
                        }
                        Ok(Operand::Addr(AddrOperand { addr: a, elem, width }))
                    }
                    _ => Err(PErr { span: t.span, msg: format!("{name}: not a predicate variable") }),
                }
            }
            other => {
                let msg = format!("syntax error, unexpected {}, expecting an operand", describe(other));
                Err(PErr { span: t.span, msg })
            }
        }
    }

    fn direct(
        &mut self,
        var: VarId,
        name: &str,
        span: Span,
        is_dst: bool,
        loose: bool,
        modifier: SrcMod,
    ) -> PResult<Operand> {
        let (row, col) = if self.at_p("(") {
            self.pos += 1;
            let s = self.peek().span;
            let r = self.expr(false)?;
            self.expect_p(",")?;
            let s2 = self.peek().span;
            let c = self.expr(false)?;
            self.expect_p(")")?;
            (self.non_negative(r, s, "row")?, self.non_negative(c, s2, "column")?)
        } else if is_dst && self.at_p("<") {
            (0, 0)
        } else {
            // A bare name in a general operand position is read as a predicate.
            return Err(PErr { span, msg: format!("{name}: not a predicate variable") });
        };
        let region = if is_dst {
            self.expect_p("<")?;
            let s = self.peek().span;
            let h = self.expr(true)?;
            self.expect_p(">")?;
            dst_region(h, s)?
        } else if loose && !self.at_p("<") {
            Region::scalar()
        } else {
            self.expect_p("<")?;
            match self.src_region()? {
                (r, 3) => r,
                (_, _) => {
                    return Err(PErr {
                        span: self.peek().span,
                        msg: "a source region needs <vstride;width,hstride>".into(),
                    })
                }
            }
        };
        let v = &self.ctx.vars[var.0 as usize];
        let base = u64::from(v.offset)
            + u64::from(row) * u64::from(self.ctx.grf_size)
            + u64::from(col) * u64::from(v.ty.size());
        let base = u32::try_from(base).map_err(|_| PErr { span, msg: "operand offset too large".into() })?;
        Ok(Operand::Direct(DirectOperand {
            var,
            ty: v.ty,
            row,
            col,
            base,
            region,
            is_dst,
            modifier,
            is_null: v.name == "%null",
        }))
    }

    /// After `<`: `vs;w,hs>` (3 values), `w,hs>` (2) or `hs>` (1). Returns the region and form.
    fn src_region(&mut self) -> PResult<(Region, u8)> {
        let s1 = self.peek().span;
        let a = self.expr(true)?;
        if self.eat_p(">") {
            let r = src_check(0, s1, 1, s1, a, s1)?;
            return Ok((Region { vstride: 0, width: 1, hstride: r.hstride }, 1));
        }
        if self.eat_p(",") {
            let s2 = self.peek().span;
            let h = self.expr(true)?;
            self.expect_p(">")?;
            let r = src_check(0, s1, a, s1, h, s2)?;
            return Ok((Region { vstride: 0, ..r }, 2));
        }
        self.expect_p(";")?;
        let s2 = self.peek().span;
        let w = self.expr(true)?;
        self.expect_p(",")?;
        let s3 = self.peek().span;
        let h = self.expr(true)?;
        self.expect_p(">")?;
        Ok((src_check(a, s1, w, s2, h, s3)?, 3))
    }

    /// `r[A(k)[,off]]<region>:T`.
    fn indirect(&mut self, is_dst: bool, modifier: SrcMod) -> PResult<Operand> {
        self.pos += 2;
        let (aname, aspan) = self.var_name()?;
        let addr = match self.resolve(&aname, aspan)? {
            Binding::Addr(a) => a,
            _ => return Err(PErr { span: aspan, msg: format!("{aname}: not an address variable") }),
        };
        self.expect_p("(")?;
        let s = self.peek().span;
        let k = self.expr(false)?;
        let addr_elem = self.non_negative(k, s, "address element")?;
        self.expect_p(")")?;
        let mut imm_offset = 0i32;
        if self.eat_p(",") {
            let s = self.peek().span;
            let off = self.expr(false)?;
            imm_offset = i32::try_from(off)
                .map_err(|_| PErr { span: s, msg: "indirect offset out of range".into() })?;
        }
        self.expect_p("]")?;
        self.expect_p("<")?;
        let (region, multi) = if is_dst {
            let s = self.peek().span;
            let h = self.expr(true)?;
            self.expect_p(">")?;
            (dst_region(h, s)?, false)
        } else {
            let (r, form) = self.src_region()?;
            (r, form == 2)
        };
        self.expect_p(":")?;
        let (tname, tspan) = self.expect_ident("an indirect operand type")?;
        // IGC 2.x lexes `:bf` here; the other vISA 4.2 types are declaration-only.
        let ty = match DataType::from_name(&tname) {
            Some(t) if !t.is_convert_only() => t,
            _ => return Err(PErr { span: tspan, msg: format!("unknown type '{tname}'") }),
        };
        Ok(Operand::Indirect(IndirectOperand {
            addr,
            addr_elem,
            imm_offset,
            ty,
            region,
            multi,
            is_dst,
            modifier,
        }))
    }
}

/// Checks a destination `<hstride>` like the real parser.
pub(crate) fn dst_region(h: i64, span: Span) -> PResult<Region> {
    match h {
        0 | 1 | 2 | 4 => Ok(Region::dst(h as u8)),
        _ => Err(PErr { span, msg: "Dst HorzStride must be 0, 1, 2, or 4".into() }),
    }
}

/// Checks a source `<vstride;width,hstride>` like the real parser.
pub(crate) fn src_check(v: i64, vs: Span, w: i64, ws: Span, h: i64, hs: Span) -> PResult<Region> {
    if !matches!(v, 0 | 1 | 2 | 4 | 8 | 16 | 32) {
        return Err(PErr { span: vs, msg: "VertStride must be 0, 1, 2, 4, 8, 16, or 32".into() });
    }
    if !matches!(w, 0 | 1 | 2 | 4 | 8 | 16) {
        return Err(PErr { span: ws, msg: "Width must be 0, 1, 2, 4, 8, or 16".into() });
    }
    if !matches!(h, 0 | 1 | 2 | 4) {
        return Err(PErr { span: hs, msg: "HorzStride must be 0, 1, 2, or 4".into() });
    }
    Ok(Region { vstride: v as u8, width: w as u8, hstride: h as u8 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::FileId;

    fn sp() -> Span {
        Span { file: FileId(0), line: 1, col: 1, start: 0, end: 0 }
    }

    #[test]
    fn region_checks() {
        assert!(src_check(3, sp(), 1, sp(), 0, sp()).is_err());
        assert!(src_check(32, sp(), 16, sp(), 4, sp()).is_ok());
        assert!(src_check(1, sp(), 3, sp(), 0, sp()).is_err());
        assert!(dst_region(3, sp()).is_err());
        assert_eq!(dst_region(2, sp()).ok(), Some(Region::dst(2)));
    }
}

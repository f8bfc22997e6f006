//! Instruction statements: predicate, mnemonic with suffixes, execution size, operands by
//! signature, and the static checks that become `Inst::static_fault`.

use super::lexer::Tok;
use super::mnemonic::{decode, signature, ExecKind};
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::isa::{ExecMask, Opcode, Operand, PredCombine, Predicate, SubOp};
use crate::program::{Inst, Span};

impl UnitParser<'_> {
    pub fn instruction(&mut self) -> PResult<()> {
        let start = self.peek().span;
        let pred = if self.at_p("(") { Some(self.predicate()?) } else { None };
        let (word, word_span) = self.expect_ident("a mnemonic")?;
        let mut parts = Vec::new();
        // Suffixes are glued to the mnemonic: `cmp.ge`, `svm_gather.4.1` (lexed as a float).
        while self.at_p(".") && !self.peek().ws_before && !self.peek_n(1).ws_before {
            match &self.peek_n(1).tok {
                Tok::Ident(s) => parts.push(s.clone()),
                Tok::Int { value, hex: false } => parts.push(value.to_string()),
                Tok::Float(f) => parts.extend(f.split('.').map(str::to_string)),
                _ => break,
            }
            self.pos += 2;
        }
        let (op, sub, sat) =
            decode(&word, &parts).map_err(|msg| PErr { span: self.span_from(word_span), msg })?;
        let sig = signature(op, &sub);
        if let (Some((_, pspan)), false) = (pred, sig.can_pred) {
            return Err(PErr {
                span: pspan,
                msg: format!("syntax error, '{}' cannot be predicated", op.mnemonic()),
            });
        }
        let exec = self.exec(sig.exec)?;
        let index = self.ctx.insts.len();
        let mut operands = Vec::with_capacity(sig.slots.len());
        for (i, &slot) in sig.slots.iter().enumerate() {
            operands.push(self.operand(slot, index, i)?);
        }
        // NBARRIER.md's general signal: `ID TYPE PRODUCERS CONSUMERS` beside the baseline
        // `ID THREADS`.
        let more = !matches!(self.peek().tok, super::lexer::Tok::Newline | super::lexer::Tok::Eof);
        if op == Opcode::Nbarrier && sub == SubOp::Word("signal".into()) && more {
            for i in 2..4 {
                operands.push(self.operand(super::operand::Slot::Src, index, i)?);
            }
        }
        let span = self.span_from(start);
        let mut pred = pred.map(|p| p.0);
        if op == Opcode::Add3 && sub == SubOp::Word("o".into()) {
            // ADD3O.md: in `(P) add3.o` the predicate receives the overflow bits; it guards
            // nothing. It goes last among the operands.
            match pred.take() {
                Some(p) if !p.invert && p.combine == PredCombine::None => {
                    operands.push(Operand::Pred(p.pred))
                }
                _ => {
                    return Err(PErr {
                        span: self.span_from(word_span),
                        msg: "syntax error, 'add3.o' needs a plain predicate for its overflow bits, as (P1)"
                            .into(),
                    })
                }
            }
        }
        if matches!(op, Opcode::Invm | Opcode::Rsqtm) && !matches!(operands.get(1), Some(Operand::Pred(_))) {
            return Err(PErr {
                span,
                msg: format!("syntax error, '{}' needs a predicate as its second destination", op.mnemonic()),
            });
        }
        let mut inst = Inst {
            op,
            sub,
            pred,
            exec,
            sat,
            operands,
            id: self.next_id,
            span,
            unit: self.unit,
            static_fault: None,
        };
        inst.static_fault = self.static_fault(&inst, sig.exec);
        if let Some(f) = &inst.static_fault {
            let msg = format!("{f} (the instruction faults if executed)");
            self.warn(span, msg);
        }
        self.next_id += 1;
        self.ctx.insts.push(inst);
        Ok(())
    }

    /// `(P)`, `(!P)`, `(P.any)`, `(!P.all)`.
    fn predicate(&mut self) -> PResult<(Predicate, Span)> {
        let start = self.expect_p("(")?;
        let invert = self.eat_p("!");
        let (name, span) = self.expect_ident("a predicate variable")?;
        let pred = match self.resolve(&name, span)? {
            Binding::Pred(p) => p,
            _ => return Err(PErr { span, msg: format!("{name}: not a predicate variable") }),
        };
        let mut combine = PredCombine::None;
        if self.eat_p(".") {
            let (c, cspan) = self.expect_ident("any or all")?;
            combine = match c.as_str() {
                "any" => PredCombine::Any,
                "all" => PredCombine::All,
                _ => {
                    return Err(PErr {
                        span: cspan,
                        msg: format!("syntax error, unexpected '{c}', expecting any or all"),
                    })
                }
            };
        }
        self.expect_p(")")?;
        Ok((Predicate { pred, invert, combine }, self.span_from(start)))
    }

    fn exec(&mut self, kind: ExecKind) -> PResult<ExecMask> {
        let none = ExecMask { size: 1, offset: 0, no_mask: true };
        if kind == ExecKind::None {
            return Ok(none);
        }
        self.expect_p("(")?;
        let mut offset = 0;
        let mut no_mask = false;
        if let Tok::Ident(mask) = &self.peek().tok {
            let span = self.peek().span;
            if kind == ExecKind::Block {
                return self.unexpected("a block count");
            }
            (offset, no_mask) =
                mask_info(mask).ok_or_else(|| PErr { span, msg: "invalid execution offset info".into() })?;
            self.pos += 1;
            self.expect_p(",")?;
        }
        let span = self.peek().span;
        let size = match self.next().tok {
            Tok::Int { value, hex: false } => value,
            _ => return Err(PErr { span, msg: "invalid execution size".into() }),
        };
        self.expect_p(")")?;
        if kind == ExecKind::Block {
            if !matches!(size, 1 | 2 | 4 | 8 | 16) {
                return Err(PErr { span, msg: format!("invalid block count {size}") });
            }
            return Ok(ExecMask { size: size as u32, offset: 0, no_mask: true });
        }
        if !matches!(size, 1 | 2 | 4 | 8 | 16 | 32) {
            return Err(PErr { span, msg: "invalid execution size".into() });
        }
        Ok(ExecMask { size: size as u32, offset, no_mask })
    }

    /// `.loc N` / `LOC N` and `.file "x"` / `FILE "x"` (the file name goes in `SubOp::Word`).
    pub fn loc_or_file(&mut self, word: &str, start: Span) -> PResult<()> {
        let (op, sub, operands) = if word == "loc" {
            let v = self.expr(false)?;
            (Opcode::Loc, SubOp::None, vec![Operand::Int(v)])
        } else {
            let (name, _) = match &self.peek().tok {
                Tok::Str(s) => (s.clone(), self.next().span),
                _ => return self.unexpected("a file name string"),
            };
            (Opcode::File, SubOp::Word(name), Vec::new())
        };
        let span = self.span_from(start);
        self.ctx.insts.push(Inst {
            op,
            sub,
            pred: None,
            exec: ExecMask { size: 1, offset: 0, no_mask: true },
            sat: false,
            operands,
            id: self.next_id,
            span,
            unit: self.unit,
            static_fault: None,
        });
        self.next_id += 1;
        Ok(())
    }

    /// What the real verifier would reject: a bad mask for the size, `mulh` of 64-bit sources,
    /// or a region past the end of its variable. (Regions spanning more than two GRFs are not flagged: IGC's own SIMD16
    /// 64-bit operations span four and GenX_IR accepts them; the finalizer splits them.)
    fn static_fault(&self, inst: &Inst, kind: ExecKind) -> Option<String> {
        let e = inst.exec;
        if kind == ExecKind::Simd && ((e.offset / e.size) * e.size != e.offset || e.offset + e.size > 32) {
            return Some(format!("invalid emask M{} for SIMD{} instruction", e.offset / 4 + 1, e.size));
        }
        if inst.op == Opcode::Mulh {
            // MULH.md: the high dword of the product of two 32-bit integers.
            let wide = inst.operands.iter().skip(1).find_map(|op| match op {
                Operand::Direct(d) if d.ty.size() > 4 => Some(d.ty),
                Operand::Indirect(i) if i.ty.size() > 4 => Some(i.ty),
                Operand::Imm(imm) if imm.ty.size() > 4 => Some(imm.ty),
                _ => None,
            });
            if let Some(ty) = wide {
                return Some(format!("mulh multiplies 32-bit integers, not {}", ty.name()));
            }
        }
        let lanes = if kind == ExecKind::Simd { e.size } else { 1 };
        for op in &inst.operands {
            let Operand::Direct(d) = op else { continue };
            if d.is_null {
                continue;
            }
            let max_elt = (0..lanes)
                .map(|l| if d.is_dst { l * u32::from(d.region.vstride) } else { d.region.element(l) })
                .max()
                .unwrap_or(0);
            let size = d.ty.size();
            let var = &self.ctx.vars[d.var.0 as usize];
            let first = d.base;
            let end = u64::from(first) + u64::from(max_elt) * u64::from(size) + u64::from(size);
            let var_end = u64::from(var.offset) + u64::from(var.size);
            let verb = if d.is_dst { "writes" } else { "reads" };
            if end > var_end {
                return Some(format!(
                    "operand {} {verb} bytes {}..{} of {}, which has {} bytes",
                    var.name,
                    first - var.offset,
                    end - u64::from(var.offset),
                    var.name,
                    var.size
                ));
            }
        }
        None
    }
}

/// `M1`…`M8`, `M1_NM`…`M8_NM`, `NoMask` → (channel offset, no-mask).
fn mask_info(text: &str) -> Option<(u32, bool)> {
    if text == "NoMask" {
        return Some((0, true));
    }
    let rest = text.strip_prefix('M')?;
    let (num, nm) = match rest.strip_suffix("_NM") {
        Some(n) => (n, true),
        None => (rest, false),
    };
    let n: u32 = num.parse().ok().filter(|n| (1..=8).contains(n))?;
    if num.len() != 1 {
        return None;
    }
    Some((4 * (n - 1), nm))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask_info("M1"), Some((0, false)));
        assert_eq!(mask_info("M5_NM"), Some((16, true)));
        assert_eq!(mask_info("NoMask"), Some((0, true)));
        assert_eq!(mask_info("M9"), None);
        assert_eq!(mask_info("M01"), None);
    }
}

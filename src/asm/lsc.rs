//! LSC operands (DG2 and newer): data `V[.off]:d32x4t` and addresses
//! `MODEL[[SCALE*]V[+OFF|-OFF]]:aNN`.

use super::lexer::Tok;
use super::operand::Slot;
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::isa::{LscAddrModel, LscAddrOperand, LscAddrSize, LscDataOperand, LscDataSize, Operand};

impl UnitParser<'_> {
    /// `V[.off]:SHAPE` or `%null:SHAPE`.
    pub(crate) fn lsc_data(&mut self) -> PResult<Operand> {
        let Operand::Raw(raw) = self.raw(true)? else {
            return self.unexpected("an LSC data operand");
        };
        self.expect_p(":")?;
        let (shape, span) = self.expect_ident("an LSC data shape like d32x4")?;
        let (data_size, vector, transpose) = lsc_shape(&shape)
            .ok_or_else(|| PErr { span, msg: format!("invalid LSC data shape '{shape}'") })?;
        Ok(Operand::LscData(LscDataOperand { raw, data_size, vector, transpose }))
    }

    /// `MODEL[[SCALE*]V[+OFF|-OFF]]:aNN`.
    pub(crate) fn lsc_addr(&mut self) -> PResult<Operand> {
        let model = match &self.peek().tok {
            Tok::Ident(m) if matches!(m.as_str(), "flat" | "arg") => {
                let m = if m == "flat" { LscAddrModel::Flat } else { LscAddrModel::Arg };
                self.pos += 1;
                m
            }
            Tok::Ident(m) if matches!(m.as_str(), "bti" | "ss" | "bss") => {
                let which = m.clone();
                self.pos += 1;
                self.expect_p("(")?;
                let surf = match &self.peek().tok {
                    Tok::Ident(n) if matches!(self.lookup(n), Some(Binding::State(_))) => {
                        self.operand(Slot::Surf, 0, 0)?
                    }
                    _ => self.general(false, false)?,
                };
                self.expect_p(")")?;
                let surf = Box::new(surf);
                match which.as_str() {
                    "bti" => LscAddrModel::Bti(surf),
                    "ss" => LscAddrModel::Ss(surf),
                    _ => LscAddrModel::Bss(surf),
                }
            }
            Tok::P("[") => LscAddrModel::Flat,
            _ => return self.unexpected("an LSC address model (flat, bti, ss, bss, arg)"),
        };
        self.expect_p("[")?;
        let mut scale = 1u32;
        if matches!(self.peek().tok, Tok::Int { .. }) && self.at_p_n(1, "*") {
            let s = self.peek().span;
            let v = self.expr_primary()?;
            scale = self.non_negative(v, s, "LSC address scale")?;
            self.pos += 1;
        }
        let Operand::Raw(addr) = self.raw(true)? else {
            return self.unexpected("an address variable");
        };
        let mut offset = 0i64;
        if self.eat_p("+") {
            offset = self.expr(false)?;
        } else if self.eat_p("-") {
            offset = self.expr(false)?.wrapping_neg();
        }
        self.expect_p("]")?;
        self.expect_p(":")?;
        let (size, span) = self.expect_ident("an address size a16, a32 or a64")?;
        let size = match size.as_str() {
            "a16" => LscAddrSize::A16,
            "a32" => LscAddrSize::A32,
            "a64" => LscAddrSize::A64,
            _ => return Err(PErr { span, msg: format!("invalid LSC address size '{size}'") }),
        };
        Ok(Operand::LscAddr(LscAddrOperand { model, scale, addr, offset, size }))
    }
}

/// Decodes `d32x4t`-style shapes (a `u` prefix is accepted as a synonym of `d`).
pub(crate) fn lsc_shape(text: &str) -> Option<(LscDataSize, u32, bool)> {
    let rest = text.strip_prefix('d').or_else(|| text.strip_prefix('u'))?;
    let (rest, transpose) = match rest.strip_suffix('t') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (size_text, vector) = match rest.split_once('x') {
        Some((s, n)) => (s, n.parse::<u32>().ok()?),
        None => (rest, 1),
    };
    let size = match size_text {
        "8" => LscDataSize::D8,
        "16" => LscDataSize::D16,
        "32" => LscDataSize::D32,
        "64" => LscDataSize::D64,
        "8c32" => LscDataSize::D8U32,
        "16c32" => LscDataSize::D16U32,
        "16c32h" => LscDataSize::D16U32H,
        _ => return None,
    };
    matches!(vector, 1 | 2 | 3 | 4 | 8 | 16 | 32 | 64).then_some((size, vector, transpose))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(lsc_shape("d32x4t"), Some((LscDataSize::D32, 4, true)));
        assert_eq!(lsc_shape("d16c32h"), Some((LscDataSize::D16U32H, 1, false)));
        assert_eq!(lsc_shape("d32x5"), None);
        assert_eq!(lsc_shape("q32"), None);
    }
}

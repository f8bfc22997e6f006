//! LSC operands (DG2 and newer): data `V[.off]:d32x4t` and addresses
//! `MODEL[[SCALE*]V[+OFF|-OFF]]:aNN`.

use super::lexer::Tok;
use super::operand::Slot;
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::isa::{
    LscAddrModel, LscAddrOperand, LscAddrSize, LscBlock2dAddr, LscBlock2dData, LscDataOperand, LscDataSize,
    Operand,
};

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

    /// `V:dN.[BLOCKSx]WIDTHxHEIGHT{n|t}{n|t}` (2D block data: transposed, VNNI).
    pub(crate) fn lsc_block2d_data(&mut self) -> PResult<Operand> {
        let Operand::Raw(raw) = self.raw(true)? else {
            return self.unexpected("a 2D block data operand");
        };
        self.expect_p(":")?;
        // The lexer splits `d16.2x16x16nn` at the dot and may read `2x16x16nn` in pieces.
        let start = self.peek().span;
        let (size, _) = self.expect_ident("a 2D block shape like d16.2x16x16nn")?;
        self.expect_p(".")?;
        let mut shape = String::new();
        while !matches!(self.peek().tok, crate::asm::lexer::Tok::Newline | crate::asm::lexer::Tok::Eof)
            && !self.peek().ws_before
            || shape.is_empty()
        {
            let t = self.next();
            match &t.tok {
                Tok::Int { value, .. } => shape.push_str(&value.to_string()),
                Tok::Ident(w) => shape.push_str(w),
                Tok::Float(f) => shape.push_str(f),
                _ => return Err(PErr { span: t.span, msg: "invalid 2D block shape".into() }),
            }
        }
        let text = format!("{size}.{shape}");
        let data = block2d_shape(&text)
            .ok_or_else(|| PErr { span: start, msg: format!("invalid 2D block data shape '{text}'") })?;
        let (data_size, blocks, width, height, transpose, vnni) = data;
        Ok(Operand::LscBlock2dData(LscBlock2dData { raw, data_size, blocks, width, height, transpose, vnni }))
    }

    /// `flat[V + (X,Y)]` or `flat[BASE,WIDTH,HEIGHT,PITCH,X,Y]`.
    pub(crate) fn lsc_block2d_addr(&mut self) -> PResult<Operand> {
        match &self.peek().tok {
            Tok::Ident(m) if m == "flat" => self.pos += 1,
            _ => return self.unexpected("a 2D block address `flat[...]`"),
        }
        self.expect_p("[")?;
        let first = self.block2d_field()?;
        if self.eat_p("+") {
            let Operand::Raw(payload) = first else {
                return self.unexpected("a payload variable before `+ (X,Y)`");
            };
            self.expect_p("(")?;
            let x = self.expr(false)?;
            self.expect_p(",")?;
            let y = self.expr(false)?;
            self.expect_p(")")?;
            self.expect_p("]")?;
            return Ok(Operand::LscBlock2dAddr(LscBlock2dAddr::Payload { payload, x, y }));
        }
        let mut fields = vec![first];
        while self.eat_p(",") {
            fields.push(self.block2d_field()?);
        }
        self.expect_p("]")?;
        let span = self.peek().span;
        let fields: [Operand; 6] = fields.try_into().map_err(|_| PErr {
            span,
            msg: "a 2D block address has six fields: base, width, height, pitch, x, y".into(),
        })?;
        Ok(Operand::LscBlock2dAddr(LscBlock2dAddr::Fields(Box::new(fields))))
    }

    /// One field of a 2D block address: a constant (`0xFFF`) or a variable (`V`, `V.4`).
    fn block2d_field(&mut self) -> PResult<Operand> {
        if matches!(self.peek().tok, Tok::Int { .. } | Tok::P("(") | Tok::P("-")) {
            return Ok(Operand::Int(self.expr(false)?));
        }
        self.raw(true)
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

/// Decodes a 2D block shape `dN.[B x]W x H{n|t}{n|t}`: (element size, blocks, width,
/// height, transposed, VNNI).
pub(crate) fn block2d_shape(text: &str) -> Option<(LscDataSize, u32, u32, u32, bool, bool)> {
    let (size, rest) = text.split_once('.')?;
    let size = match size {
        "d8" => LscDataSize::D8,
        "d16" => LscDataSize::D16,
        "d32" => LscDataSize::D32,
        "d64" => LscDataSize::D64,
        _ => return None,
    };
    let flag = |c: char| match c {
        'n' => Some(false),
        't' => Some(true),
        _ => None,
    };
    let mut chars = rest.chars();
    let vnni = flag(chars.next_back()?)?;
    let transpose = flag(chars.next_back()?)?;
    let dims: Vec<u32> = chars.as_str().split('x').map(|d| d.parse().ok()).collect::<Option<_>>()?;
    let (blocks, width, height) = match dims[..] {
        [w, h] => (1, w, h),
        [b, w, h] => (b, w, h),
        _ => return None,
    };
    let ok = (1..=4).contains(&blocks) && (1..=64).contains(&width) && (1..=256).contains(&height);
    ok.then_some((size, blocks, width, height, transpose, vnni))
}

/// Decodes `d32x4t`-style shapes (a `u` prefix is accepted as a synonym of `d`; IGC 2.x
/// spells the widened forms `d8u32`, `d16u32`).
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
        "8c32" | "8u32" => LscDataSize::D8U32,
        "16c32" | "16u32" => LscDataSize::D16U32,
        "16c32h" | "16u32h" => LscDataSize::D16U32H,
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
        assert_eq!(lsc_shape("d16u32"), Some((LscDataSize::D16U32, 1, false)));
        assert_eq!(lsc_shape("d8u32"), Some((LscDataSize::D8U32, 1, false)));
        assert_eq!(lsc_shape("d64x64t"), Some((LscDataSize::D64, 64, true)));
    }

    #[test]
    fn block2d_shapes() {
        assert_eq!(block2d_shape("d16.2x16x16nt"), Some((LscDataSize::D16, 2, 16, 16, false, true)));
        assert_eq!(block2d_shape("d32.8x16tn"), Some((LscDataSize::D32, 1, 8, 16, true, false)));
        assert_eq!(block2d_shape("d16.32x2nn"), Some((LscDataSize::D16, 1, 32, 2, false, false)));
        assert_eq!(block2d_shape("d16.32x2xn"), None);
        assert_eq!(block2d_shape("d12.8x8nn"), None);
        assert_eq!(block2d_shape("d8.5x8x8nn"), None);
    }
}

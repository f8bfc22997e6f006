//! Integer constant expressions (C precedence, `>>>`, `?:`, `%sizeof`, `%DispatchSimd`) and
//! immediate literals (`VALUE:T` with the 12504 literal rules).

use super::lexer::Tok;
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::isa::{DataType, Immediate};
use crate::program::{AttrValue, Span};

/// Decimal literals are read with `atoi`, so they wrap to 32-bit two's complement.
pub(crate) fn int_literal_value(value: u64, hex: bool) -> i64 {
    if hex {
        value as i64
    } else {
        i64::from(value as u32 as i32)
    }
}

/// Truncates `bits` to the width of `ty` (packed vectors are 32-bit words).
pub(crate) fn truncate(bits: u64, ty: DataType) -> u64 {
    let width = ty.bits();
    if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    }
}

/// Parses an immediate type suffix. `:UV` is rejected like in 12504; `:bf` is IGC 2.x's (vISA
/// 4.2) addition; the 4.2 declaration types bf8, hf8, tf32 and e2m1 have no `:` token.
fn imm_type(name: &str) -> Option<DataType> {
    if name == "UV" {
        return None;
    }
    DataType::from_name(name).filter(|t| !t.is_convert_only())
}

/// The binary operators' precedence levels, loosest first.
fn level_of(op: &str) -> Option<usize> {
    Some(match op {
        "|" => 0,
        "^" => 1,
        "&" => 2,
        "==" | "!=" => 3,
        "<" | ">" | "<=" | ">=" => 4,
        "<<" | ">>" | ">>>" => 5,
        "+" | "-" => 6,
        "*" | "/" | "%" => 7,
        _ => return None,
    })
}

/// Nesting allowed in a constant expression (IGC's own never pass 3). Each level is a dozen
/// frames of the precedence climb: 256 levels overflowed a spawned thread's 2 MiB stack in a
/// debug build, 64 fit in 1 MiB (a test checks it).
const MAX_EXPR_DEPTH: u32 = 64;

impl UnitParser<'_> {
    /// An integer constant expression. With `no_rel`, `<`/`>` end the expression (regions).
    pub fn expr(&mut self, no_rel: bool) -> PResult<i64> {
        // Nearly every expression of a dump is one literal (a region's numbers): taken
        // without climbing the eight levels when no operator follows it.
        if let Tok::Int { value, hex } = self.peek().tok {
            if !matches!(&self.peek_n(1).tok, Tok::P(p) if *p == "?" || level_of(p).is_some()) {
                self.pos += 1;
                return Ok(int_literal_value(value, hex));
            }
        }
        let cond = self.binary(0, no_rel)?;
        if !self.eat_p("?") {
            return Ok(cond);
        }
        let a = self.expr(no_rel)?;
        self.expect_p(":")?;
        let b = self.expr(no_rel)?;
        Ok(if cond != 0 { a } else { b })
    }

    /// Precedence climbing over the binary operator levels, loosest first.
    fn binary(&mut self, level: usize, no_rel: bool) -> PResult<i64> {
        const LEVELS: usize = 8;
        if level >= LEVELS {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1, no_rel)?;
        loop {
            let op = match &self.peek().tok {
                Tok::P(p) if level_of(p) == Some(level) => *p,
                _ => return Ok(lhs),
            };
            if no_rel && level == 4 {
                return Ok(lhs);
            }
            let span = self.next().span;
            let rhs = self.binary(level + 1, no_rel)?;
            lhs = apply(op, lhs, rhs)
                .ok_or_else(|| PErr { span, msg: "division by zero in constant expression".into() })?;
        }
    }

    /// A unary expression. Every level of nesting (parentheses, `?:`, prefix operators)
    /// passes here, so the depth is bounded here: the parser recurses, and a kernel file must
    /// not be able to overflow the stack of whichever thread parses it.
    fn unary(&mut self) -> PResult<i64> {
        if self.expr_depth >= MAX_EXPR_DEPTH {
            let span = self.peek().span;
            return Err(PErr {
                span,
                msg: format!("constant expression nested more than {MAX_EXPR_DEPTH} levels deep"),
            });
        }
        self.expr_depth += 1;
        let v = self.unary_inner();
        self.expr_depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> PResult<i64> {
        if self.eat_p("-") {
            return Ok(self.unary()?.wrapping_neg());
        }
        if self.eat_p("~") {
            return Ok(!self.unary()?);
        }
        if self.eat_p("!") {
            return Ok(i64::from(self.unary()? == 0));
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<i64> {
        match &self.peek().tok {
            &Tok::Int { value, hex } => {
                self.pos += 1;
                Ok(int_literal_value(value, hex))
            }
            Tok::P("(") => {
                self.pos += 1;
                let v = self.expr(false)?;
                self.expect_p(")")?;
                Ok(v)
            }
            Tok::Ident(w) if w == "%sizeof" => {
                self.pos += 1;
                let paren = self.eat_p("(");
                let (name, span) = self.expect_ident("a variable name or GRF")?;
                if paren {
                    self.expect_p(")")?;
                }
                self.size_of(&name, span)
            }
            Tok::Ident(w) if w == "%DispatchSimd" => {
                self.pos += 1;
                // The dispatch width is only known from the SimdSize attribute.
                Ok(match self.attrs.iter().find(|(n, _)| n == "SimdSize") {
                    Some((_, AttrValue::Int(n))) => *n,
                    _ => 0,
                })
            }
            _ => self.unexpected("an integer expression"),
        }
    }

    fn size_of(&self, name: &str, span: Span) -> PResult<i64> {
        if name == "GRF" {
            return Ok(i64::from(self.ctx.grf_size));
        }
        Ok(match self.resolve(name, span)? {
            Binding::Gen(v) => i64::from(self.ctx.vars[v.0 as usize].size),
            Binding::Pred(p) => i64::from(self.ctx.preds[p.0 as usize].num_elts.div_ceil(8)),
            Binding::Addr(a) => i64::from(self.ctx.addrs[a.0 as usize].num_elts * 2),
            Binding::State(s) => i64::from(self.ctx.states[s.0 as usize].num_elts * 4),
        })
    }

    /// `VALUE:T`: `-`? (decimal | hex | float | `(expr)`) `:` type.
    pub fn immediate(&mut self) -> PResult<Immediate> {
        let neg = self.eat_p("-");
        let sized =
            !neg && matches!(&self.peek().tok, Tok::Ident(w) if w == "%sizeof" || w == "%DispatchSimd");
        let t = if sized { self.peek().clone() } else { self.next() };
        enum Lit {
            Int(i64, bool),
            Float(f64),
        }
        let lit = match &t.tok {
            Tok::Int { value, hex } => Lit::Int(int_literal_value(*value, *hex), *hex),
            Tok::Float(text) => Lit::Float(
                text.parse::<f64>().map_err(|_| PErr { span: t.span, msg: "bad float literal".into() })?,
            ),
            Tok::P("(") if !neg => {
                let v = self.expr(false)?;
                self.expect_p(")")?;
                Lit::Int(v, false)
            }
            Tok::Ident(_) if sized => Lit::Int(self.primary()?, false),
            other => {
                let msg = format!(
                    "syntax error, unexpected {}, expecting an immediate value",
                    super::parser::describe(other)
                );
                return Err(PErr { span: t.span, msg });
            }
        };
        if !self.at_p(":") {
            return self.unexpected("a type suffix like `:d` (immediates need a type)");
        }
        self.pos += 1;
        let (tname, tspan) = match &self.peek().tok {
            Tok::Ident(s) if !self.peek().ws_before => (s.clone(), self.peek().span),
            _ => return self.unexpected("an immediate type"),
        };
        self.pos += 1;
        let Some(ty) = imm_type(&tname) else {
            return Err(PErr {
                span: tspan,
                msg: format!("syntax error, unexpected '{tname}', expecting an immediate type"),
            });
        };
        let bits = match lit {
            Lit::Float(f) => {
                let f = if neg { -f } else { f };
                // Decimal float literals need a lower-case suffix.
                match (ty, tname.as_str()) {
                    (DataType::F, "f") => u64::from((f as f32).to_bits()),
                    (DataType::Df, "df") => f.to_bits(),
                    _ => {
                        return Err(PErr {
                            span: tspan,
                            msg: format!("syntax error, a decimal float cannot have type '{tname}'"),
                        })
                    }
                }
            }
            Lit::Int(v, hex) => {
                if matches!(ty, DataType::Hf | DataType::Bf) && (!hex || neg) {
                    return Err(PErr {
                        span: tspan,
                        msg: format!(
                            "syntax error, an :{ty} immediate must be a non-negative hex bit pattern"
                        ),
                    });
                }
                let v = if neg { v.wrapping_neg() } else { v };
                truncate(v as u64, ty)
            }
        };
        Ok(Immediate { ty, bits: truncate(bits, ty) })
    }
}

fn apply(op: &str, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "<" => i64::from(a < b),
        ">" => i64::from(a > b),
        "<=" => i64::from(a <= b),
        ">=" => i64::from(a >= b),
        "<<" => a.wrapping_shl(b as u32),
        ">>" => a.wrapping_shr(b as u32),
        ">>>" => ((a as u64).wrapping_shr(b as u32)) as i64,
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_rules() {
        assert_eq!(int_literal_value(4294967295, false), -1);
        assert_eq!(int_literal_value(2147483648, false), i64::from(i32::MIN));
        assert_eq!(int_literal_value(u64::MAX, true), -1);
        assert_eq!(truncate((-7i64) as u64, DataType::W), 0xfff9);
        assert_eq!(truncate(0x1234_5678, DataType::W), 0x5678);
        assert_eq!(imm_type("UV"), None);
        assert_eq!(imm_type("D"), Some(DataType::D));
        assert_eq!(imm_type("bf"), Some(DataType::Bf));
        assert_eq!(imm_type("bf8"), None);
    }

    #[test]
    fn operators() {
        assert_eq!(apply(">>", -8, 1), Some(-4));
        assert_eq!(apply(">>>", -8, 60), Some(15));
        assert_eq!(apply("/", 1, 0), None);
        assert_eq!(apply("%", 7, 4), Some(3));
    }

    /// The deepest nesting allowed parses in a debug build on half a spawned thread's
    /// default 2 MiB stack; one level more is a diagnostic.
    #[test]
    fn nesting_is_bounded_and_fits_a_default_thread_stack() {
        let kernel = |depth: u32| {
            let open = "(".repeat(depth as usize);
            let close = ")".repeat(depth as usize);
            format!(
                ".version 4.1\n.kernel \"t\"\n.decl R v_type=G type=d num_elts=8 align=hword\n.kernel_attr Target=\"3d\"\n.kernel_attr SimdSize=8\n.function \"_main_0\"\n\n_main_0:\n    mov (M1, 8) R(0,0)<1> {open}-1{close}:d\n    ret (M1, 1)\n"
            )
        };
        let parsed = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let deepest = crate::asm::parse_str("t.visaasm", &kernel(MAX_EXPR_DEPTH - 1)).is_ok();
                let too_deep = crate::asm::parse_str("t.visaasm", &kernel(MAX_EXPR_DEPTH + 1));
                (deepest, too_deep.err().map(|d| d.render()))
            })
            .expect("thread")
            .join()
            .expect("no stack overflow");
        assert!(parsed.0, "{} levels should parse", MAX_EXPR_DEPTH - 1);
        assert!(parsed.1.is_some_and(|r| r.contains(&format!("nested more than {MAX_EXPR_DEPTH} levels"))));
    }
}

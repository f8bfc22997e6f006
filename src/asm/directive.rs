//! Kernel-level directives other than `.decl`: `.kernel_attr`, `.input`, `.implicit_*`,
//! `.parameter`, and `attrs={…}` lists.

use super::lexer::Tok;
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::program::{AttrValue, Input, InputVar};

impl UnitParser<'_> {
    pub(crate) fn kernel_attr(&mut self) -> PResult<()> {
        let (name, span) = self.expect_ident("an attribute name")?;
        let value = if self.eat_p("=") {
            match &self.peek().tok {
                Tok::Str(s) => {
                    let s = s.clone();
                    self.pos += 1;
                    AttrValue::Str(s)
                }
                Tok::Newline | Tok::Eof => AttrValue::Str(String::new()),
                Tok::Ident(_) if name == "OutputAsmPath" || name == "AsmName" => {
                    return Err(PErr {
                        span: self.peek().span,
                        msg: "string attribute values must be quoted".into(),
                    });
                }
                _ => AttrValue::Int(self.expr(false)?),
            }
        } else {
            AttrValue::Flag
        };
        if name == "Target" && !matches!(&value, AttrValue::Str(s) if s == "3d" || s == "cm") {
            return Err(PErr { span, msg: "Target must be \"3d\" or \"cm\"".into() });
        }
        if name == "SimdSize" && !matches!(value, AttrValue::Int(0 | 1 | 8 | 16 | 32)) {
            return Err(PErr { span, msg: "SimdSize must be 0, 8, 16 or 32".into() });
        }
        self.attrs.retain(|(n, _)| *n != name);
        self.attrs.push((name, value));
        Ok(())
    }

    /// `.input`, `.implicit_*` (same shape) and `.parameter` (no offset; recorded as offset 0).
    pub(crate) fn input(&mut self, parameter: bool) -> PResult<()> {
        let (name, span) = self.expect_ident("a variable name")?;
        let var = match self.resolve(&name, span)? {
            Binding::Gen(v) => InputVar::Gen(v),
            Binding::State(s) => InputVar::State(s),
            _ => {
                return Err(PErr {
                    span,
                    msg: format!("{name}: an input must be a general, sampler or surface variable"),
                })
            }
        };
        let mut offset = 0i64;
        let mut size = None;
        while let Tok::Ident(key) = &self.peek().tok {
            let key = key.clone();
            if key == "attrs" {
                self.pos += 1;
                self.expect_p("=")?;
                self.attr_list()?;
                continue;
            }
            if key != "offset" && key != "size" {
                break;
            }
            if key == "offset" && parameter {
                return self.unexpected("`size=`");
            }
            self.pos += 1;
            self.expect_p("=")?;
            let v = self.expr(false)?;
            if key == "offset" {
                offset = v;
            } else {
                size = Some(v);
            }
        }
        let size = match (size, var) {
            (Some(s), _) => s,
            (None, InputVar::Gen(v)) => i64::from(self.ctx.vars[v.0 as usize].size),
            (None, _) => 0,
        };
        let (Ok(offset), Ok(size)) = (u32::try_from(offset), u32::try_from(size)) else {
            return Err(PErr {
                span,
                msg: "input offset and size must be non-negative 32-bit values".into(),
            });
        };
        if !parameter {
            self.inputs.push(Input { var, offset, size, span });
        }
        Ok(())
    }

    /// `{A, B=3, C="x"}` attribute lists (contents are not needed by vdb).
    pub fn attr_list(&mut self) -> PResult<()> {
        self.expect_p("{")?;
        if self.eat_p("}") {
            return Ok(());
        }
        loop {
            self.expect_ident("an attribute name")?;
            if self.eat_p("=") {
                if let Tok::Str(_) = self.peek().tok {
                    self.pos += 1;
                } else {
                    self.expr(false)?;
                }
            }
            if self.eat_p("}") {
                return Ok(());
            }
            self.expect_p(",")?;
        }
    }
}

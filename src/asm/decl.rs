//! `.decl` for general (G), address (A), predicate (P), sampler (S) and surface (T)
//! variables. General variables are laid out in the GRF space as they are declared: every
//! root gets the next free offset aligned to the GRF size (or its larger `align=`); aliases
//! view their base at `OFF`.

use super::lexer::Tok;
use super::parser::{Binding, PErr, PResult, UnitParser};
use crate::isa::{AddrId, DataType, PredId, StateId, VarId};
use crate::program::{align_up, AddrVar, GenVar, PredVar, Span, StateKind, StateVar};

/// Largest `num_elts` the real parser allows for a general variable.
const MAX_GEN_ELTS: i64 = 4096;

impl UnitParser<'_> {
    /// Expects `KEY =` (spaces allowed around `=`).
    fn key(&mut self, key: &str) -> PResult<()> {
        if !self.at_ident(key) {
            return self.unexpected(&format!("`{key}=`"));
        }
        self.pos += 1;
        self.expect_p("=")?;
        Ok(())
    }

    fn opt_key(&mut self, key: &str) -> PResult<bool> {
        if self.at_ident(key) {
            self.key(key)?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub fn decl(&mut self) -> PResult<()> {
        let (name, span) = self.expect_ident("a variable name")?;
        self.key("v_type")?;
        let (kind, kind_span) = self.expect_ident("G, A, P, S or T")?;
        match kind.as_str() {
            "G" => self.decl_gen(name, span),
            "A" | "P" | "S" | "T" => {
                self.key("num_elts")?;
                let n_span = self.peek().span;
                let n = self.expr(false)?;
                // The decl identifier is what instructions use; v_name is ignored.
                if (kind == "S" || kind == "T") && self.opt_key("v_name")? {
                    self.expect_name("a name")?;
                }
                if self.opt_key("attrs")? {
                    self.attr_list()?;
                }
                self.decl_other(&kind, name, span, n, n_span)
            }
            _ => Err(PErr {
                span: kind_span,
                msg: format!("unknown v_type '{kind}', expecting G, A, P, S or T"),
            }),
        }
    }

    fn decl_other(&mut self, kind: &str, name: String, span: Span, n: i64, n_span: Span) -> PResult<()> {
        let binding = match kind {
            "P" => {
                if !(1..=32).contains(&n) {
                    return Err(PErr {
                        span: n_span,
                        msg: format!("predicate {name}: num_elts must be 1..32, got {n}"),
                    });
                }
                let id = PredId(self.ctx.preds.len() as u32);
                self.ctx.preds.push(PredVar { name: name.clone(), num_elts: n as u32, span: Some(span) });
                Binding::Pred(id)
            }
            "A" => {
                if !(1..=16).contains(&n) {
                    return Err(PErr {
                        span: n_span,
                        msg: format!("address {name}: num_elts must be 1..16, got {n}"),
                    });
                }
                let id = AddrId(self.ctx.addrs.len() as u32);
                let slot = self.ctx.addr_slots;
                self.ctx.addr_slots += n as u32;
                self.ctx.addrs.push(AddrVar {
                    name: name.clone(),
                    num_elts: n as u32,
                    slot,
                    span: Some(span),
                });
                Binding::Addr(id)
            }
            _ => {
                if !(1..=256).contains(&n) {
                    return Err(PErr {
                        span: n_span,
                        msg: format!("{name}: num_elts must be 1..256, got {n}"),
                    });
                }
                let state_kind = if kind == "S" {
                    self.sampler_count += 1;
                    StateKind::Sampler(self.sampler_count - 1)
                } else {
                    // Numbered after the predefined T0..T5, like IGC's T6, T7, ...
                    self.surface_count += 1;
                    StateKind::Surface(5 + self.surface_count)
                };
                let id = StateId(self.ctx.states.len() as u32);
                self.ctx.states.push(StateVar { name: name.clone(), kind: state_kind, num_elts: n as u32 });
                Binding::State(id)
            }
        };
        self.bind(&name, span, binding)
    }

    fn decl_gen(&mut self, name: String, span: Span) -> PResult<()> {
        self.key("type")?;
        let (tname, tspan) = self.expect_ident("a type name")?;
        let ty = match DataType::from_name(&tname) {
            Some(t) if !t.is_packed_vector() => t,
            _ => return Err(PErr { span: tspan, msg: format!("unknown variable type '{tname}'") }),
        };
        self.key("num_elts")?;
        let n_span = self.peek().span;
        let n = self.expr(false)?;
        if !(1..=MAX_GEN_ELTS).contains(&n) {
            return Err(PErr {
                span: n_span,
                msg: format!("{name}: num_elts must be 1..{MAX_GEN_ELTS}, got {n}"),
            });
        }
        let align = if self.opt_key("align")? { self.align_value()? } else { 1 };
        let mut alias = None;
        if self.opt_key("alias")? {
            self.expect_p("<")?;
            let (base, bspan) = self.expect_ident("the alias base variable")?;
            let base = match self.resolve(&base, bspan)? {
                Binding::Gen(v) => v,
                _ => {
                    return Err(PErr {
                        span: bspan,
                        msg: format!("{base}: alias base must be a general variable"),
                    })
                }
            };
            self.expect_p(",")?;
            let off_span = self.peek().span;
            let off = self.expr(true)?;
            self.expect_p(">")?;
            let off = u32::try_from(off)
                .map_err(|_| PErr { span: off_span, msg: "alias offset must be non-negative".into() })?;
            alias = Some((base, off, off_span));
        }
        if self.opt_key("attrs")? {
            self.attr_list()?;
        }
        let size = n as u32 * ty.size();
        let id = VarId(self.ctx.vars.len() as u32);
        let (offset, root, alias) = match alias {
            Some((base, off, off_span)) => {
                let b = &self.ctx.vars[base.0 as usize];
                if u64::from(off) + u64::from(size) > u64::from(b.size) {
                    let msg = format!(
                        "{name}: alias of {} bytes at offset {off} runs past the end of {} ({} bytes)",
                        size, b.name, b.size
                    );
                    return Err(PErr { span: off_span, msg });
                }
                (b.offset + off, b.root, Some((base, off)))
            }
            None => {
                let offset = align_up(self.ctx.next_offset, align.max(self.ctx.grf_size));
                self.ctx.next_offset = offset + size;
                (offset, id, None)
            }
        };
        self.ctx.vars.push(GenVar {
            name: name.clone(),
            ty,
            num_elts: n as u32,
            align,
            alias,
            offset,
            size,
            root,
            predefined: false,
            span: Some(span),
            unit: Some(self.unit),
        });
        self.bind(&name, span, Binding::Gen(id))
    }

    /// `align=` value: a keyword or a power of two number of bytes up to 128.
    fn align_value(&mut self) -> PResult<u32> {
        let grf = self.ctx.grf_size;
        let t = self.peek().clone();
        if let Tok::Ident(word) = &t.tok {
            let v = match word.as_str() {
                "byte" => 1,
                "word" => 2,
                "dword" => 4,
                "qword" => 8,
                "oword" => 16,
                "hword" => 32,
                "GRF" => grf,
                "GRFx2" => grf * 2,
                "wordx32" => 64,
                "wordx64" => 128,
                _ => 0,
            };
            if v != 0 {
                self.pos += 1;
                return Ok(v);
            }
        }
        // `2GRF`, `32word`, `64word` lex as a number followed by a word.
        if let (Tok::Int { value, hex: false }, Tok::Ident(w)) = (&t.tok, &self.peek_n(1).tok) {
            let v = match (*value, w.as_str()) {
                (2, "GRF") => Some(grf * 2),
                (32, "word") => Some(64),
                (64, "word") => Some(128),
                _ => None,
            };
            if let Some(v) = v {
                if !self.peek_n(1).ws_before {
                    self.pos += 2;
                    return Ok(v);
                }
            }
        }
        let v = self.expr(false)?;
        match v {
            1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 => Ok(v as u32),
            _ => Err(PErr { span: t.span, msg: format!("invalid alignment {v}") }),
        }
    }
}

//! The statement-level parser: token cursor, error recovery at line ends, name scopes,
//! labels and their fix-ups, and the file-structure directives (`.version`, `.kernel`,
//! `.function`, `.kernel_attr`, `.input`, scopes). Declarations, operands and instructions
//! live in sibling modules as further `impl UnitParser` blocks.

use super::diag::{Diagnostics, Severity};
use super::lexer::{Lexer, Tok, Token};
use crate::isa::{AddrId, InstIdx, Operand, PredId, StateId, UnitId, VarId};
use crate::program::{
    AddrVar, AttrValue, FileId, GenVar, Inst, Label, PredVar, Span, StateVar, Unit, UnitKind,
};
use std::collections::HashMap;

/// What a name in a unit's name space refers to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    Gen(VarId),
    Pred(PredId),
    Addr(AddrId),
    State(StateId),
}

/// A parse error: where and what. Recovery happens at the next line.
#[derive(Clone, Debug)]
pub(crate) struct PErr {
    pub span: Span,
    pub msg: String,
}

pub(crate) type PResult<T> = Result<T, PErr>;

/// Program-wide state shared by all units while parsing.
pub(crate) struct Ctx {
    pub grf_size: u32,
    pub insts: Vec<Inst>,
    pub vars: Vec<GenVar>,
    pub preds: Vec<PredVar>,
    pub addrs: Vec<AddrVar>,
    pub states: Vec<StateVar>,
    /// Next free GRF byte for a root variable.
    pub next_offset: u32,
    pub addr_slots: u32,
    pub diags: Diagnostics,
    /// Predefined names, visible in every unit.
    pub predefined: HashMap<String, Binding>,
}

/// A reference to a label or subroutine that is resolved once the unit is read.
pub(crate) struct Fixup {
    pub name: String,
    pub span: Span,
    pub inst: usize,
    pub operand: usize,
    /// Position inside a `switchjmp` label list.
    pub slot: Option<usize>,
    pub subroutine: bool,
}

/// Parser state for one file (one unit).
pub(crate) struct UnitParser<'c> {
    pub ctx: &'c mut Ctx,
    /// The file's lexer: its `out` holds the tokens of the lines around the cursor `pos`
    /// (those taken before, but the last, are dropped as the parse goes; see `fill`).
    lexer: Lexer<'c>,
    pub pos: usize,
    pub file: FileId,
    pub unit: UnitId,
    /// Innermost scope last; `scopes[0]` is the unit's top level.
    pub scopes: Vec<HashMap<String, Binding>>,
    pub labels: HashMap<String, InstIdx>,
    pub label_list: Vec<Label>,
    pub functions: HashMap<String, InstIdx>,
    pub subroutines: Vec<Label>,
    pub fixups: Vec<Fixup>,
    /// Next `$N` instruction id.
    pub next_id: u32,
    /// Name of the `.function` just seen, whose echo label should be skipped.
    pub pending_echo: Option<String>,
    pub name: Option<(String, UnitKind)>,
    pub inputs: Vec<crate::program::Input>,
    pub attrs: Vec<(String, AttrValue)>,
    pub funcdecls: Vec<String>,
    pub surface_count: u32,
    pub sampler_count: u32,
    pub entry: InstIdx,
    /// How deep the constant expression being parsed nests (bounded: see `expr.rs`).
    pub expr_depth: u32,
}

/// Human description of a token for "unexpected …" messages.
pub(crate) fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) => format!("identifier '{s}'"),
        Tok::Int { .. } => "integer".into(),
        Tok::Float(_) => "float literal".into(),
        Tok::Str(_) => "string".into(),
        Tok::Label(s) => format!("label '{s}'"),
        Tok::P(p) => format!("'{p}'"),
        Tok::Newline => "end of line".into(),
        Tok::Eof => "end of file".into(),
        // "unexpected character 'x'": the callers say "unexpected" themselves.
        Tok::Bad(m) => m.strip_prefix("unexpected ").unwrap_or(m).to_string(),
    }
}

impl<'c> UnitParser<'c> {
    pub fn new(ctx: &'c mut Ctx, text: &'c str, file: FileId, unit: UnitId) -> Self {
        let entry = InstIdx(ctx.insts.len() as u32);
        UnitParser {
            ctx,
            lexer: Lexer::new(file, text),
            pos: 0,
            file,
            unit,
            scopes: vec![HashMap::new()],
            labels: HashMap::new(),
            label_list: Vec::new(),
            functions: HashMap::new(),
            subroutines: Vec::new(),
            fixups: Vec::new(),
            next_id: 0,
            pending_echo: None,
            name: None,
            inputs: Vec::new(),
            attrs: Vec::new(),
            funcdecls: Vec::new(),
            surface_count: 0,
            sampler_count: 0,
            entry,
            expr_depth: 0,
        }
    }

    // ----- cursor -------------------------------------------------------------------------

    pub fn peek(&self) -> &Token {
        self.peek_n(0)
    }

    pub fn peek_n(&self, n: usize) -> &Token {
        let toks = &self.lexer.out;
        &toks[(self.pos + n).min(toks.len().saturating_sub(1))]
    }

    /// Makes sure the tokens hold this line's and the next line's (no statement looks
    /// further), lexing more lines when they do not, and drops most of those taken before.
    fn fill(&mut self) {
        const LINES: usize = 64;
        let toks = &mut self.lexer.out;
        // `span_from` reads the token before the cursor: it stays.
        if self.pos > 1024 {
            toks.drain(..self.pos - 1);
            self.pos = 1;
        }
        if toks.iter().skip(self.pos).filter(|t| t.tok == Tok::Newline).take(2).count() < 2 {
            self.lexer.lines(LINES);
        }
    }

    /// The current token, moved out (the parser never looks back at a token it took: its
    /// place keeps the span for `span_from`), and the cursor past it.
    pub fn next(&mut self) -> Token {
        let last = self.lexer.out.len().saturating_sub(1);
        if self.pos >= last {
            // The last token lexed (the end of the file's, or of the lines lexed so far)
            // stays for every later look.
            self.pos = self.lexer.out.len();
            return self.peek().clone();
        }
        let t = &mut self.lexer.out[self.pos];
        self.pos += 1;
        let gap = Token { tok: Tok::Newline, span: t.span, ws_before: t.ws_before };
        std::mem::replace(t, gap)
    }

    pub fn at_p(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::P(q) if *q == p)
    }

    pub fn at_p_n(&self, n: usize, p: &str) -> bool {
        matches!(&self.peek_n(n).tok, Tok::P(q) if *q == p)
    }

    pub fn eat_p(&mut self, p: &str) -> bool {
        if self.at_p(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn at_eol(&self) -> bool {
        matches!(self.peek().tok, Tok::Newline | Tok::Eof)
    }

    pub fn at_ident(&self, word: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == word)
    }

    /// An error "unexpected X, expecting WHAT" at the current token.
    pub fn unexpected<T>(&self, what: &str) -> PResult<T> {
        let t = self.peek();
        Err(PErr {
            span: t.span,
            msg: format!("syntax error, unexpected {}, expecting {what}", describe(&t.tok)),
        })
    }

    pub fn expect_p(&mut self, p: &str) -> PResult<Span> {
        if self.at_p(p) {
            Ok(self.next().span)
        } else {
            self.unexpected(&format!("'{p}'"))
        }
    }

    pub fn expect_ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.take_word(false) {
            Some(word) => Ok(word),
            None => self.unexpected(what),
        }
    }

    /// Identifier or string literal (kernel and function names).
    pub fn expect_name(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.take_word(true) {
            Some(word) => Ok(word),
            None => self.unexpected(what),
        }
    }

    /// The current token's text and span, taken, if it is an identifier (or, with
    /// `strings`, a string literal).
    pub fn take_word(&mut self, strings: bool) -> Option<(String, Span)> {
        let word = match self.peek().tok {
            Tok::Ident(_) => true,
            Tok::Str(_) => strings,
            _ => false,
        };
        if !word {
            return None;
        }
        let t = self.next();
        let (Tok::Ident(s) | Tok::Str(s)) = t.tok else { return None };
        Some((s, t.span))
    }

    /// Span from `start` to the end of the previous token.
    pub fn span_from(&self, start: Span) -> Span {
        let end = if self.pos > 0 {
            self.lexer.out[(self.pos - 1).min(self.lexer.out.len() - 1)].span.end
        } else {
            start.end
        };
        Span { end: end.max(start.start), ..start }
    }

    pub fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.ctx.diags.push(span, Severity::Error, msg);
    }

    pub fn warn(&mut self, span: Span, msg: impl Into<String>) {
        self.ctx.diags.push(span, Severity::Warning, msg);
    }

    fn skip_line(&mut self) {
        while !self.at_eol() {
            self.pos += 1;
        }
    }

    // ----- names --------------------------------------------------------------------------

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .or_else(|| self.ctx.predefined.get(name).copied())
    }

    /// Looks a name up or reports the real parser's "unbound identifier" error.
    pub fn resolve(&self, name: &str, span: Span) -> PResult<Binding> {
        self.lookup(name).ok_or_else(|| PErr { span, msg: format!("{name}: unbound identifier") })
    }

    pub fn bind(&mut self, name: &str, span: Span, b: Binding) -> PResult<()> {
        let scope = self.scopes.last_mut().ok_or_else(|| PErr { span, msg: "no scope".into() })?;
        // IGC 2.x lists the declarations of every inlined-asm block at the kernel's top level
        // (`DST`, `SRC1_UD` once per block), so a name may be declared again: the later
        // declaration holds from there on, as an inner scope's would (IGC 1.0.12504 refused
        // it, and prints no such files).
        scope.insert(name.to_string(), b);
        Ok(())
    }

    // ----- driver -------------------------------------------------------------------------

    /// Parses every statement of the file, then resolves labels and appends the sentinel.
    pub fn run(mut self) -> Unit {
        let mut first = true;
        loop {
            self.fill();
            match self.peek().tok {
                Tok::Eof => break,
                Tok::Newline => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let start = self.peek().span;
            let result = if first && !self.at_directive("version") {
                Err(PErr { span: start, msg: "the file must start with `.version`".into() })
            } else {
                self.statement()
            };
            first = false;
            match result {
                Ok(()) if self.at_eol() => {}
                Ok(()) => {
                    let t = self.peek().clone();
                    let msg = format!("syntax error, unexpected {}, expecting end of line", describe(&t.tok));
                    self.error(t.span, msg);
                }
                Err(e) => self.error(e.span, e.msg),
            }
            self.skip_line();
        }
        self.finish()
    }

    fn at_directive(&self, name: &str) -> bool {
        self.at_p(".")
            && matches!(&self.peek_n(1).tok, Tok::Ident(s) if s == name)
            && !self.peek_n(1).ws_before
    }

    fn statement(&mut self) -> PResult<()> {
        let echo = self.pending_echo.take();
        let t = self.peek().clone();
        match &t.tok {
            Tok::Label(name) => {
                self.pos += 1;
                if echo.as_deref() == Some(name.as_str()) {
                    return Ok(());
                }
                self.define_label(name, t.span)
            }
            Tok::P(".") => {
                let (word, span) = match &self.peek_n(1).tok {
                    Tok::Ident(w) if !self.peek_n(1).ws_before => (w.clone(), self.peek_n(1).span),
                    _ => return self.unexpected("a directive name after '.'"),
                };
                self.pos += 2;
                self.directive(&word, span, t.span)
            }
            Tok::P("{") => {
                self.pos += 1;
                self.scopes.push(HashMap::new());
                Ok(())
            }
            Tok::P("}") => {
                self.pos += 1;
                if self.scopes.len() <= 1 {
                    return Err(PErr { span: t.span, msg: "'}' without a matching '{'".into() });
                }
                self.scopes.pop();
                Ok(())
            }
            Tok::Ident(w) if w == "LOC" || w == "FILE" => {
                let word = if w == "LOC" { "loc" } else { "file" };
                self.pos += 1;
                self.loc_or_file(word, t.span)
            }
            Tok::Ident(_) | Tok::P("(") => {
                if let (Tok::Ident(_), Tok::P(":")) = (&t.tok, &self.peek_n(1).tok) {
                    return Err(PErr {
                        span: t.span,
                        msg: "syntax error: a label must start at column 0".into(),
                    });
                }
                self.instruction()
            }
            _ => self.unexpected("a statement"),
        }
    }

    fn define_label(&mut self, name: &str, span: Span) -> PResult<()> {
        let target = InstIdx(self.ctx.insts.len() as u32);
        if self.labels.insert(name.to_string(), target).is_some() {
            return Err(PErr { span, msg: format!("label '{name}' defined twice") });
        }
        self.label_list.push(Label { name: name.to_string(), target, span });
        self.next_id += 1;
        Ok(())
    }

    fn directive(&mut self, word: &str, word_span: Span, dot: Span) -> PResult<()> {
        match word {
            "version" => match self.next().tok {
                Tok::Float(_) => Ok(()),
                Tok::Int { .. } => Ok(()),
                _ => Err(PErr { span: word_span, msg: "`.version` needs a version number like 4.1".into() }),
            },
            "kernel" | "global_function" => {
                let (name, span) = self.expect_name("a kernel or function name")?;
                if self.name.is_some() {
                    return Err(PErr {
                        span,
                        msg: "only one `.kernel` or `.global_function` per file".into(),
                    });
                }
                let kind = if word == "kernel" { UnitKind::Kernel } else { UnitKind::Function };
                self.name = Some((name, kind));
                Ok(())
            }
            "funcdecl" => {
                let (name, _) = self.expect_name("a function name")?;
                self.funcdecls.push(name);
                Ok(())
            }
            "decl" => self.decl(),
            "input" => self.input(false),
            "parameter" => self.input(true),
            w if w.starts_with("implicit_") => self.input(false),
            "kernel_attr" => self.kernel_attr(),
            "function" => {
                let (name, span) = self.expect_name("a subroutine name")?;
                let target = InstIdx(self.ctx.insts.len() as u32);
                if self.functions.insert(name.clone(), target).is_some() {
                    return Err(PErr { span, msg: format!("subroutine '{name}' defined twice") });
                }
                self.subroutines.push(Label { name: name.clone(), target, span });
                self.next_id += 1;
                self.pending_echo = Some(name);
                Ok(())
            }
            "loc" | "file" => self.loc_or_file(word, dot),
            _ => Err(PErr { span: word_span, msg: format!("unknown directive `.{word}`") }),
        }
    }

    // ----- end of unit --------------------------------------------------------------------

    fn finish(mut self) -> Unit {
        let end_span = self.lexer.out.last().map(|t| t.span).unwrap_or(super::diag::file_start(self.file));
        let sentinel = crate::program::Inst {
            op: crate::isa::Opcode::EndOfCode,
            sub: crate::isa::SubOp::None,
            pred: None,
            exec: crate::isa::ExecMask { size: 1, offset: 0, no_mask: true },
            sat: false,
            operands: Vec::new(),
            id: self.next_id,
            span: end_span,
            unit: self.unit,
            static_fault: None,
        };
        self.ctx.insts.push(sentinel);
        for fix in std::mem::take(&mut self.fixups) {
            let table = if fix.subroutine { &self.functions } else { &self.labels };
            let Some(&target) = table.get(&fix.name) else {
                let what = if fix.subroutine { "subroutine" } else { "label" };
                self.error(fix.span, format!("undefined {what}: {}", fix.name));
                continue;
            };
            let Some(op) = self.ctx.insts.get_mut(fix.inst).and_then(|i| i.operands.get_mut(fix.operand))
            else {
                continue;
            };
            match (op, fix.slot) {
                (Operand::Labels(list), Some(k)) => {
                    if let Some(slot) = list.get_mut(k) {
                        *slot = target;
                    }
                }
                (Operand::Label(t) | Operand::Subroutine(t), None) => *t = target,
                _ => {}
            }
        }
        let (name, kind) = self.name.take().unwrap_or_else(|| {
            let span = super::diag::file_start(self.file);
            self.ctx.diags.push(span, Severity::Error, "missing `.kernel` or `.global_function`");
            (String::new(), UnitKind::Kernel)
        });
        Unit {
            name,
            kind,
            file: self.file,
            entry: self.entry,
            end: InstIdx(self.ctx.insts.len() as u32),
            inputs: self.inputs,
            attrs: self.attrs,
            labels: self.label_list,
            subroutines: self.subroutines,
            funcdecls: self.funcdecls,
        }
    }
}

//! Lexer: turns one file's text into tokens, with newlines as tokens (statements are
//! line-based), comments and backslash continuations removed, and column-0 labels recognised.

use crate::program::{FileId, Span};

/// One token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier, possibly with a leading `%` (`%null`, `%sizeof`).
    Ident(String),
    /// Integer literal. Decimal values are kept as written (wrapping); `hex` tells which.
    Int {
        value: u64,
        hex: bool,
    },
    /// Decimal float literal text (`1.5`, `1.0e+3`, `2e-1`).
    Float(String),
    /// String literal with escapes decoded.
    Str(String),
    /// `NAME:` at column 0.
    Label(String),
    /// Punctuation or operator.
    P(&'static str),
    Newline,
    Eof,
    /// A character the language does not use, or a malformed literal (the message).
    Bad(String),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// Whether whitespace (or a comment) separates this token from the previous one.
    pub ws_before: bool,
}

/// Operators, longest first so that `>>>` wins over `>>` and `>`.
const PUNCTS: &[&str] = &[
    ">>>", "<<", ">>", "==", "!=", "<=", ">=", "(", ")", "<", ">", ";", ",", "[", "]", "{", "}", "=", ":",
    ".", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "?",
];

fn is_label_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '@' | '?')
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '@' | '?')
}

/// One file's lexer, resumable: [`Lexer::lines`] appends the tokens of the next lines to
/// [`Lexer::out`], so that a parser holds a few lines' tokens at a time, not the file's. It
/// never fails: bad characters become [`Tok::Bad`] for the parser to report.
pub(crate) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
    file: FileId,
    /// The tokens lexed and not yet taken by the caller.
    pub out: Vec<Token>,
    ws: bool,
    /// Whether the end of the file's tokens (a newline, then `Eof`) are out.
    done: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(file: FileId, text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
            col: 1,
            file,
            out: Vec::new(),
            ws: true,
            done: false,
        }
    }

    /// Lexes up to `count` more lines (each ending at its newline token; the last with `Eof`
    /// after its newline): the tokens always end at the end of a line.
    pub fn lines(&mut self, count: usize) {
        let mut left = count;
        while left > 0 && !self.done {
            if self.token() {
                left -= 1;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<char> {
        match self.bytes.get(self.pos) {
            // ASCII, nearly every character of a dump, without decoding.
            Some(&b) if b.is_ascii() => Some(b as char),
            _ => self.text.get(self.pos..).and_then(|s| s.chars().next()),
        }
    }

    #[inline]
    fn peek_at(&self, ahead: usize) -> Option<char> {
        match self.bytes.get(self.pos..=self.pos + ahead) {
            Some(run) if run.is_ascii() => Some(run[ahead] as char),
            _ => self.text.get(self.pos..).and_then(|s| s.chars().nth(ahead)),
        }
    }

    /// Moves to the end of the line (not past its newline): a comment's rest.
    fn skip_to_line_end(&mut self) {
        let rest = &self.bytes[self.pos..];
        let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        // A column per character: every byte but UTF-8's continuation bytes.
        self.col += rest[..len].iter().filter(|&&b| b & 0xc0 != 0x80).count() as u32;
        self.pos += len;
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn push(&mut self, tok: Tok, start: usize, line: u32, col: u32) {
        let span = Span { file: self.file, line, col, start: start as u32, end: self.pos as u32 };
        self.out.push(Token { tok, span, ws_before: self.ws });
        self.ws = false;
    }

    /// Lexes the next token (or skips blanks or a comment): true when that ended a line.
    fn token(&mut self) -> bool {
        let (start, line, col) = (self.pos, self.line, self.col);
        let Some(c) = self.peek() else {
            self.push(Tok::Newline, start, line, col);
            self.push(Tok::Eof, start, line, col);
            self.done = true;
            return true;
        };
        if c == '\n' {
            self.bump();
            self.push(Tok::Newline, start, line, col);
            self.ws = true;
            return true;
        } else if c == ' ' || c == '\t' || c == '\r' {
            self.skip_ascii(|b| matches!(b, b' ' | b'\t' | b'\r'));
            self.ws = true;
        } else if c == '\\' && self.continuation_follows() {
            // `\` then optional blanks then newline (or the end of the file): join the lines.
            while self.peek().is_some_and(|c| c != '\n') {
                self.bump();
            }
            self.bump();
            self.ws = true;
        } else if c == '/' && self.peek_at(1) == Some('/') {
            self.skip_to_line_end();
            self.ws = true;
        } else if c == '/' && self.peek_at(1) == Some('*') {
            self.block_comment(start, line, col);
        } else if col == 1 && is_label_start(c) && self.try_label(start, line, col) {
        } else if c.is_ascii_alphabetic() || c == '_' {
            let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
            self.push(Tok::Ident(word), start, line, col);
        } else if c == '%' && self.peek_at(1).is_some_and(|c| c.is_ascii_alphabetic() || c == '_') {
            self.bump();
            let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
            self.push(Tok::Ident(format!("%{word}")), start, line, col);
        } else if c.is_ascii_digit() {
            let tok = self.number();
            self.push(tok, start, line, col);
        } else if c == '"' {
            let tok = self.string();
            self.push(tok, start, line, col);
        } else if let Some(p) = self.punct() {
            self.push(Tok::P(p), start, line, col);
        } else {
            self.bad_run(c, start, line, col);
        }
        false
    }

    /// Characters that start no token, up to the next blank or line end, as one token: a
    /// binary file becomes a few tokens per line, not one per byte.
    fn bad_run(&mut self, first: char, start: usize, line: u32, col: u32) {
        self.bump();
        let mut count = 1usize;
        while let Some(c) = self.peek() {
            let starts_token = c.is_ascii_alphanumeric()
                || matches!(c, '_' | '"' | '\n' | ' ' | '\t' | '\r')
                || PUNCTS.iter().any(|p| p.starts_with(c));
            if starts_token {
                break;
            }
            self.bump();
            count += 1;
        }
        let msg = if count == 1 {
            format!("unexpected character '{}'", first.escape_default())
        } else {
            format!("unexpected character '{}' (and {} more after it)", first.escape_default(), count - 1)
        };
        self.push(Tok::Bad(msg), start, line, col);
    }

    fn continuation_follows(&self) -> bool {
        let rest = self.text.get(self.pos + 1..).unwrap_or("");
        let trimmed = rest.trim_start_matches([' ', '\t', '\r']);
        trimmed.starts_with('\n') || trimmed.is_empty()
    }

    fn block_comment(&mut self, start: usize, line: u32, col: u32) {
        self.bump();
        self.bump();
        loop {
            match self.peek() {
                None => {
                    self.push(Tok::Bad("unterminated block comment".into()), start, line, col);
                    return;
                }
                Some('*') if self.peek_at(1) == Some('/') => {
                    self.bump();
                    self.bump();
                    self.ws = true;
                    return;
                }
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    /// A label definition `NAME:` at column 0 (wider character set than identifiers).
    fn try_label(&mut self, start: usize, line: u32, col: u32) -> bool {
        let rest = self.text.get(self.pos..).unwrap_or("");
        let len = rest.find(|c: char| !is_label_char(c)).unwrap_or(rest.len());
        let after = rest.get(len..).unwrap_or("");
        // `NAME::` is not a label, and `:` must follow the name directly.
        if len == 0 || !after.starts_with(':') || after.starts_with("::") {
            return false;
        }
        let name = rest[..len].to_string();
        for _ in 0..=name.chars().count() {
            self.bump();
        }
        self.push(Tok::Label(name), start, line, col);
        true
    }

    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        self.skip_ascii(|b| pred(b as char));
        while self.peek().is_some_and(&pred) {
            self.bump();
        }
        self.text[start..self.pos].to_string()
    }

    /// Moves past a run of ASCII bytes (not newlines) that `pred` holds for, a column each:
    /// what `bump` would do one character at a time.
    fn skip_ascii(&mut self, pred: impl Fn(u8) -> bool) {
        let rest = &self.bytes[self.pos..];
        let len = rest.iter().position(|&b| !(b.is_ascii() && b != b'\n' && pred(b))).unwrap_or(rest.len());
        self.pos += len;
        self.col += len as u32;
    }

    fn number(&mut self) -> Tok {
        if self.peek() == Some('0') && matches!(self.peek_at(1), Some('x' | 'X')) {
            self.bump();
            self.bump();
            let digits = self.take_while(|c| c.is_ascii_hexdigit());
            if digits.is_empty() {
                return Tok::Bad("hex literal without digits".into());
            }
            if digits.len() > 16 {
                return Tok::Bad("hex literal wider than 64 bits".into());
            }
            return match u64::from_str_radix(&digits, 16) {
                Ok(value) => Tok::Int { value, hex: true },
                Err(_) => Tok::Bad("bad hex literal".into()),
            };
        }
        let start = self.pos;
        self.take_while(|c| c.is_ascii_digit());
        let mut is_float = false;
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            self.bump();
            self.take_while(|c| c.is_ascii_digit());
        }
        // The exponent needs an explicit sign: `1e3` lexes as `1` followed by `e3`.
        if matches!(self.peek(), Some('e' | 'E'))
            && matches!(self.peek_at(1), Some('+' | '-'))
            && self.peek_at(2).is_some_and(|c| c.is_ascii_digit())
        {
            is_float = true;
            self.bump();
            self.bump();
            self.take_while(|c| c.is_ascii_digit());
        }
        let text = &self.text[start..self.pos];
        if is_float {
            return Tok::Float(text.to_string());
        }
        let value = text.bytes().fold(0u64, |acc, d| acc.wrapping_mul(10).wrapping_add(u64::from(d - b'0')));
        Tok::Int { value, hex: false }
    }

    fn string(&mut self) -> Tok {
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.bump() {
                None | Some('\n') => return Tok::Bad("unterminated string literal".into()),
                Some('"') => break,
                Some('\\') => match self.bump() {
                    Some('n') => out.push(b'\n'),
                    Some('t') => out.push(b'\t'),
                    Some('r') => out.push(b'\r'),
                    Some('0'..='7') => {
                        let mut v = u32::from(self.bytes[self.pos - 1] - b'0');
                        for _ in 0..2 {
                            match self.peek() {
                                Some(c @ '0'..='7') => {
                                    v = v * 8 + (c as u32 - '0' as u32);
                                    self.bump();
                                }
                                _ => break,
                            }
                        }
                        out.push(v as u8);
                    }
                    Some('x') => {
                        let hex = self.take_while(|c| c.is_ascii_hexdigit());
                        let v =
                            u32::from_str_radix(hex.get(..2.min(hex.len())).unwrap_or("0"), 16).unwrap_or(0);
                        out.push(v as u8);
                    }
                    Some(c) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    None => return Tok::Bad("unterminated string literal".into()),
                },
                Some(c) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        if out.len() > 4095 {
            return Tok::Bad("string literal longer than 4095 bytes".into());
        }
        Tok::Str(String::from_utf8_lossy(&out).into_owned())
    }

    fn punct(&mut self) -> Option<&'static str> {
        let rest = self.bytes.get(self.pos..)?;
        let first = *rest.first()?;
        // The first byte compared before the rest (most candidates differ there).
        let p =
            PUNCTS.iter().copied().find(|p| p.as_bytes()[0] == first && rest.starts_with(p.as_bytes()))?;
        for _ in 0..p.len() {
            self.bump();
        }
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token of `text` (never fails: bad characters become [`Tok::Bad`]).
    fn lex(file: FileId, text: &str) -> Vec<Token> {
        let mut lx = Lexer::new(file, text);
        lx.lines(usize::MAX);
        lx.out
    }

    fn kinds(text: &str) -> Vec<Tok> {
        lex(FileId(0), text).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_floats_and_mnemonic_suffixes() {
        let t = kinds("svm_gather.4.1 1.0e+3 1e3 0xff");
        assert_eq!(t[0], Tok::Ident("svm_gather".into()));
        assert_eq!(t[1], Tok::P("."));
        assert_eq!(t[2], Tok::Float("4.1".into()));
        assert_eq!(t[3], Tok::Float("1.0e+3".into()));
        assert_eq!(t[4], Tok::Int { value: 1, hex: false });
        assert_eq!(t[5], Tok::Ident("e3".into()));
        assert_eq!(t[6], Tok::Int { value: 255, hex: true });
    }

    #[test]
    fn labels_only_at_column_zero_and_continuations_join() {
        let t = kinds("L$x:\n  L2:\nmov \\\n a");
        assert_eq!(t[0], Tok::Label("L$x".into()));
        assert_eq!(t[2], Tok::Ident("L2".into()));
        assert_eq!(t[3], Tok::P(":"));
        assert_eq!(t[5], Tok::Ident("mov".into()));
        assert_eq!(t[6], Tok::Ident("a".into()));
    }

    #[test]
    fn a_backslash_at_the_end_of_the_file_ends_the_tokens() {
        for text in ["\\", "x \\", "x \\  \t"] {
            let t = kinds(text);
            assert_eq!(t.last(), Some(&Tok::Eof), "{text:?}");
        }
    }

    #[test]
    fn characters_that_start_no_token_are_one_token_per_run() {
        let t = kinds("a \u{1}\u{2}\u{3}$\u{7f}(b");
        assert_eq!(t[0], Tok::Ident("a".into()));
        assert!(matches!(&t[1], Tok::Bad(m) if m.contains("4 more")), "{:?}", t[1]);
        assert_eq!(t[2], Tok::P("("));
        assert_eq!(t[3], Tok::Ident("b".into()));
    }

    #[test]
    fn comments_vanish_and_strings_decode() {
        let t = kinds("a /* x\n y */ b // c\n\"q\\n\"");
        assert_eq!(t[0], Tok::Ident("a".into()));
        assert_eq!(t[1], Tok::Ident("b".into()));
        assert_eq!(t[2], Tok::Newline);
        assert_eq!(t[3], Tok::Str("q\n".into()));
    }

    #[test]
    fn columns_count_characters_through_comments_and_non_ascii_text() {
        // A column per character, multi-byte ones included: after a line comment holding
        // them, and for tokens after them on the same line.
        let toks = lex(FileId(0), "a // é≠\u{1F600}x\n\"é\" b\n// 日本\nc");
        let at = |i: usize| (toks[i].span.line, toks[i].span.col);
        assert_eq!(toks[1].tok, Tok::Newline);
        assert_eq!(at(1), (1, 10));
        assert_eq!(toks[2].tok, Tok::Str("é".into()));
        assert_eq!((at(2), at(3)), ((2, 1), (2, 5)));
        assert_eq!((toks[4].tok.clone(), at(4)), (Tok::Newline, (2, 6)));
        assert_eq!((toks[5].tok.clone(), at(5)), (Tok::Newline, (3, 6)));
        assert_eq!((toks[6].tok.clone(), at(6)), (Tok::Ident("c".into()), (4, 1)));
    }
}

//! Lexer, parser and diagnostics for `.visaasm` text.

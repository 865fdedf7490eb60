//! The scenario language: a small POSIX-shell subset.
//!
//! Supported: comments, line continuations, words with '...', "..." and backslash quoting,
//! `NAME=value` assignments, `$NAME` / `${NAME}` / `$?` expansion (performed at run time,
//! see [`expand_words`]), lists with `;`, newline, `&&`, `||`, `&`, pipelines `a | b`, the
//! `time [-p]` prefix, redirections (`> f`, `>> f`, `< f`, `N> f`, `N>&M`, `&> f`), `for NAME
//! in WORDS; do ...; done` and `if ...; then ...; [elif ...;] [else ...;] fi`.
//! Everything else (while/until/case, functions, subshells, brace groups, here-documents,
//! command substitution, ...) is a [`ParseError`] that says what is accepted.

pub mod ast;
pub mod expand;
mod lexer;
mod parser;

use std::fmt;

pub use ast::*;
pub use expand::expand_words;

/// Deepest nesting of `for`/`if` blocks that [`parse`] accepts.
pub const MAX_NESTING: usize = 64;

/// A syntax error at a position of the script. `Display` is "line:col: message"; the caller
/// prefixes the file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl ParseError {
    pub fn new(span: Span, message: impl Into<String>) -> ParseError {
        ParseError { line: span.line, col: span.col, message: message.into() }
    }

    pub fn span(&self) -> Span {
        Span::new(self.line, self.col)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parse a whole script.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    parser::Parser::new(src).parse_script()
}

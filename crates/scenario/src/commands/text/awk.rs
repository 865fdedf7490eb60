//! awk: the POSIX awk language's common subset, with gawk's output. Patterns (BEGIN, END,
//! expressions, /regex/, ranges), actions with print/printf (to standard output),
//! variables, fields ($0, $N, NF, assignment to fields rebuilds $0 with OFS), NR, FNR, FS
//! (-F, single character, blank default, or a regex), OFS, ORS, associative arrays
//! (`a[k]`, `k in a`, `for (k in a)` in key order, `delete`), if/else, while, do, for,
//! next, exit, arithmetic, string concatenation, comparisons (numeric when both sides look
//! numeric), `~ !~`, and the functions length, substr, index, split, sub, gsub, match,
//! sprintf, toupper, tolower, int, sqrt, exp, log, sin, cos, atan2, rand, srand. Refused:
//! getline, output redirection inside the program, user-defined functions.

use super::{Ctx, Filter, FilterProg, Input, Reader};
use crate::commands::Cmd;
use regex::Regex;
use std::collections::BTreeMap;

// ---- Lexer ------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Re(String),
    Name(String),
    Builtin(String),
    Kw(&'static str),
    Op(&'static str),
    Newline,
    Eof,
}

const KEYWORDS: &[&str] = &["BEGIN", "END", "if", "else", "while", "for", "do", "in", "next", "exit", "print", "printf", "delete", "break", "continue", "getline", "function", "return", "nextfile"];
const BUILTINS: &[&str] = &["length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "toupper", "tolower", "int", "sqrt", "exp", "log", "sin", "cos", "atan2", "rand", "srand", "system", "close", "fflush"];
const OPS: &[&str] = &[
    "+=", "-=", "*=", "/=", "%=", "^=", "**", "==", "<=", ">=", "!=", "++", "--", "&&", "||", "!~", ">>", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "$", "=",
];

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    'outer: while i < c.len() {
        let ch = c[i];
        if ch == ' ' || ch == '\t' || ch == '\r' {
            i += 1;
            continue;
        }
        if ch == '\\' && c.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if ch == '#' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if ch == '\n' {
            out.push(Tok::Newline);
            i += 1;
            continue;
        }
        if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let st = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            if i < c.len() && (c[i] == 'e' || c[i] == 'E') && c.get(i + 1).is_some_and(|d| d.is_ascii_digit() || *d == '-' || *d == '+') {
                i += 2;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let s: String = c[st..i].iter().collect();
            out.push(Tok::Num(s.parse().map_err(|_| format!("awk: syntax error: bad number '{s}'"))?));
            continue;
        }
        if ch.is_ascii_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let s: String = c[st..i].iter().collect();
            if let Some(k) = KEYWORDS.iter().find(|k| **k == s) {
                out.push(Tok::Kw(k));
            } else if BUILTINS.contains(&s.as_str()) {
                out.push(Tok::Builtin(s));
            } else {
                out.push(Tok::Name(s));
            }
            continue;
        }
        if ch == '"' {
            let mut s = String::new();
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' && i + 1 < c.len() {
                    i += 1;
                    let e = match c[i] {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' => '\\',
                        '"' => '"',
                        '/' => '/',
                        'a' => '\x07',
                        other => {
                            s.push('\\');
                            other
                        }
                    };
                    s.push(e);
                } else {
                    s.push(c[i]);
                }
                i += 1;
            }
            if i >= c.len() {
                return Err("awk: unterminated string".into());
            }
            i += 1;
            out.push(Tok::Str(s));
            continue;
        }
        if ch == '/' {
            // A regex where an operand may start.
            let operand_pos = matches!(out.last(), None | Some(Tok::Newline | Tok::Op("(" | "," | "{" | "}" | ";" | "!" | "~" | "!~" | "&&" | "||" | "==" | "!=" | "<" | ">" | "<=" | ">=")) | Some(Tok::Kw(_)));
            if operand_pos {
                let mut s = String::new();
                i += 1;
                while i < c.len() && c[i] != '/' {
                    if c[i] == '\\' && c.get(i + 1) == Some(&'/') {
                        s.push('/');
                        i += 2;
                        continue;
                    }
                    if c[i] == '\n' {
                        return Err("awk: newline in regex".into());
                    }
                    s.push(c[i]);
                    i += 1;
                }
                if i >= c.len() {
                    return Err("awk: unterminated regex".into());
                }
                i += 1;
                out.push(Tok::Re(s));
                continue;
            }
        }
        for op in OPS {
            let n = op.chars().count();
            if i + n <= c.len() && c[i..i + n].iter().collect::<String>() == *op {
                out.push(Tok::Op(op));
                i += n;
                continue 'outer;
            }
        }
        return Err(format!("awk: syntax error at source character '{ch}'"));
    }
    out.push(Tok::Eof);
    Ok(out)
}

// ---- Syntax tree -----------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Expr {
    Num(f64),
    Str(String),
    Re(usize),
    Var(String),
    Field(Box<Expr>),
    Index(String, Vec<Expr>),
    In(Vec<Expr>, String),
    Assign(Box<Expr>, &'static str, Box<Expr>),
    Incr(Box<Expr>, bool, f64),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Match(bool, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Group(Box<Expr>),
}

#[derive(Clone, Debug)]
enum Stmt {
    Expr(Expr),
    Print(Vec<Expr>),
    Printf(Vec<Expr>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    Do(Box<Stmt>, Expr),
    For(Option<Box<Stmt>>, Option<Expr>, Option<Box<Stmt>>, Box<Stmt>),
    ForIn(String, String, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    Exit(Option<Expr>),
    Delete(String, Option<Vec<Expr>>),
    Break,
    Continue,
}

enum Pattern {
    Begin,
    End,
    All,
    Expr(Expr),
    Range(Expr, Expr, usize),
}

struct P {
    t: Vec<Tok>,
    i: usize,
    regexes: Vec<String>,
    ranges: usize,
}

type R<T> = Result<T, String>;

impl P {
    fn peek(&self) -> &Tok {
        self.t.get(self.i).unwrap_or(&Tok::Eof)
    }
    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        self.i += 1;
        t
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Tok::Op(x) if *x == o)
    }
    fn eat_op(&mut self, o: &str) -> bool {
        if self.is_op(o) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, o: &str) -> R<()> {
        if self.eat_op(o) {
            Ok(())
        } else {
            Err(format!("awk: syntax error: expected '{o}', found {}", self.desc()))
        }
    }
    fn desc(&self) -> String {
        match self.peek() {
            Tok::Num(n) => n.to_string(),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Re(s) => format!("/{s}/"),
            Tok::Name(s) | Tok::Builtin(s) => s.clone(),
            Tok::Kw(k) => k.to_string(),
            Tok::Op(o) => format!("'{o}'"),
            Tok::Newline => "newline".into(),
            Tok::Eof => "end of program".into(),
        }
    }
    fn nl(&mut self) {
        while matches!(self.peek(), Tok::Newline) || self.is_op(";") {
            self.i += 1;
        }
    }
    fn opt_nl(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.i += 1;
        }
    }

    fn program(&mut self) -> R<Vec<(Pattern, Option<Vec<Stmt>>)>> {
        let mut items = Vec::new();
        self.nl();
        while !matches!(self.peek(), Tok::Eof) {
            let pat = match self.peek() {
                Tok::Kw("BEGIN") => {
                    self.i += 1;
                    Pattern::Begin
                }
                Tok::Kw("END") => {
                    self.i += 1;
                    Pattern::End
                }
                Tok::Kw("function") => return Err("awk: user-defined functions are not supported".into()),
                Tok::Op("{") => Pattern::All,
                _ => {
                    let e = self.expr()?;
                    if self.eat_op(",") {
                        self.opt_nl();
                        let e2 = self.expr()?;
                        self.ranges += 1;
                        Pattern::Range(e, e2, self.ranges - 1)
                    } else {
                        Pattern::Expr(e)
                    }
                }
            };
            let action = if self.is_op("{") { Some(self.block()?) } else { None };
            if action.is_none() && matches!(pat, Pattern::Begin | Pattern::End) {
                return Err("awk: syntax error: BEGIN and END need an action { ... }".into());
            }
            items.push((pat, action));
            self.nl();
        }
        Ok(items)
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.expect("{")?;
        let mut v = Vec::new();
        self.nl();
        while !self.is_op("}") {
            if matches!(self.peek(), Tok::Eof) {
                return Err("awk: syntax error: missing '}'".into());
            }
            v.push(self.stmt()?);
            self.nl();
        }
        self.i += 1;
        Ok(v)
    }

    fn simple_or_block(&mut self) -> R<Stmt> {
        self.opt_nl();
        if self.is_op("{") {
            Ok(Stmt::Block(self.block()?))
        } else {
            let s = self.stmt()?;
            if self.is_op(";") {
                self.i += 1;
            }
            Ok(s)
        }
    }

    fn stmt(&mut self) -> R<Stmt> {
        match self.peek().clone() {
            Tok::Op("{") => Ok(Stmt::Block(self.block()?)),
            Tok::Kw("if") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                let a = self.simple_or_block()?;
                let save = self.i;
                self.nl();
                if matches!(self.peek(), Tok::Kw("else")) {
                    self.i += 1;
                    let b = self.simple_or_block()?;
                    return Ok(Stmt::If(c, Box::new(a), Some(Box::new(b))));
                }
                self.i = save;
                Ok(Stmt::If(c, Box::new(a), None))
            }
            Tok::Kw("while") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                Ok(Stmt::While(c, Box::new(self.simple_or_block()?)))
            }
            Tok::Kw("do") => {
                self.i += 1;
                let b = self.simple_or_block()?;
                self.nl();
                if !matches!(self.next(), Tok::Kw("while")) {
                    return Err("awk: syntax error: expected 'while' after 'do' body".into());
                }
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                Ok(Stmt::Do(Box::new(b), c))
            }
            Tok::Kw("for") => {
                self.i += 1;
                self.expect("(")?;
                if let (Tok::Name(k), Tok::Kw("in"), Tok::Name(a)) = (self.peek().clone(), self.t.get(self.i + 1).cloned().unwrap_or(Tok::Eof), self.t.get(self.i + 2).cloned().unwrap_or(Tok::Eof)) {
                    if matches!(self.t.get(self.i + 3), Some(Tok::Op(")"))) {
                        self.i += 4;
                        return Ok(Stmt::ForIn(k, a, Box::new(self.simple_or_block()?)));
                    }
                }
                let init = if self.is_op(";") { None } else { Some(Box::new(self.simple()?)) };
                self.expect(";")?;
                self.opt_nl();
                let cond = if self.is_op(";") { None } else { Some(self.expr()?) };
                self.expect(";")?;
                self.opt_nl();
                let step = if self.is_op(")") { None } else { Some(Box::new(self.simple()?)) };
                self.expect(")")?;
                Ok(Stmt::For(init, cond, step, Box::new(self.simple_or_block()?)))
            }
            Tok::Kw("next") => {
                self.i += 1;
                Ok(Stmt::Next)
            }
            Tok::Kw("break") => {
                self.i += 1;
                Ok(Stmt::Break)
            }
            Tok::Kw("continue") => {
                self.i += 1;
                Ok(Stmt::Continue)
            }
            Tok::Kw("exit") => {
                self.i += 1;
                let e = if self.ends_stmt() { None } else { Some(self.expr()?) };
                Ok(Stmt::Exit(e))
            }
            Tok::Kw("delete") => {
                self.i += 1;
                let Tok::Name(n) = self.next() else { return Err("awk: syntax error: delete needs an array".into()) };
                if self.eat_op("[") {
                    let idx = self.expr_list("]")?;
                    return Ok(Stmt::Delete(n, Some(idx)));
                }
                Ok(Stmt::Delete(n, None))
            }
            Tok::Kw("getline") => Err("awk: getline is not supported".into()),
            Tok::Kw("nextfile") | Tok::Kw("return") | Tok::Kw("function") => Err(format!("awk: '{}' is not supported", self.desc())),
            _ => self.simple(),
        }
    }

    fn ends_stmt(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Op(";" | "}"))
    }

    fn simple(&mut self) -> R<Stmt> {
        match self.peek() {
            Tok::Kw(k @ ("print" | "printf")) => {
                let printf = *k == "printf";
                self.i += 1;
                let args = if self.ends_stmt() {
                    Vec::new()
                } else if self.is_op("(") {
                    // `print (a, b)` or `print (a) b`.
                    let save = self.i;
                    self.i += 1;
                    let list = self.expr_list(")")?;
                    if self.ends_stmt() || self.is_op(">") || self.is_op("|") {
                        list
                    } else {
                        self.i = save;
                        self.print_list()?
                    }
                } else {
                    self.print_list()?
                };
                if self.is_op(">") || self.is_op(">>") || self.is_op("|") {
                    return Err("awk: output redirection inside the program is not supported (redirect awk's output in the shell)".into());
                }
                if printf {
                    if args.is_empty() {
                        return Err("awk: printf: no format".into());
                    }
                    Ok(Stmt::Printf(args))
                } else {
                    Ok(Stmt::Print(args))
                }
            }
            _ => Ok(Stmt::Expr(self.expr()?)),
        }
    }

    fn print_list(&mut self) -> R<Vec<Expr>> {
        let mut v = vec![self.expr_nogt()?];
        while self.eat_op(",") {
            self.opt_nl();
            v.push(self.expr_nogt()?);
        }
        Ok(v)
    }

    fn expr_list(&mut self, close: &str) -> R<Vec<Expr>> {
        let mut v = Vec::new();
        self.opt_nl();
        if self.eat_op(close) {
            return Ok(v);
        }
        loop {
            v.push(self.expr()?);
            self.opt_nl();
            if self.eat_op(close) {
                return Ok(v);
            }
            self.expect(",")?;
            self.opt_nl();
        }
    }

    fn expr(&mut self) -> R<Expr> {
        self.ternary(true)
    }
    /// In a print list, `>` is output redirection, not a comparison.
    fn expr_nogt(&mut self) -> R<Expr> {
        self.ternary(false)
    }

    fn ternary(&mut self, gt: bool) -> R<Expr> {
        let c = self.or(gt)?;
        if self.eat_op("?") {
            self.opt_nl();
            let a = self.ternary(gt)?;
            self.opt_nl();
            self.expect(":")?;
            self.opt_nl();
            let b = self.ternary(gt)?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        if let Tok::Op(op @ ("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=")) = self.peek().clone() {
            if matches!(c, Expr::Var(_) | Expr::Field(_) | Expr::Index(..)) {
                self.i += 1;
                self.opt_nl();
                let rhs = self.ternary(gt)?;
                return Ok(Expr::Assign(Box::new(c), op, Box::new(rhs)));
            }
        }
        Ok(c)
    }

    fn or(&mut self, gt: bool) -> R<Expr> {
        let mut l = self.and(gt)?;
        while self.eat_op("||") {
            self.opt_nl();
            l = Expr::Or(Box::new(l), Box::new(self.and(gt)?));
        }
        Ok(l)
    }
    fn and(&mut self, gt: bool) -> R<Expr> {
        let mut l = self.in_expr(gt)?;
        while self.eat_op("&&") {
            self.opt_nl();
            l = Expr::And(Box::new(l), Box::new(self.in_expr(gt)?));
        }
        Ok(l)
    }
    fn in_expr(&mut self, gt: bool) -> R<Expr> {
        let mut l = self.matching(gt)?;
        while matches!(self.peek(), Tok::Kw("in")) {
            self.i += 1;
            let Tok::Name(a) = self.next() else { return Err("awk: syntax error: 'in' needs an array".into()) };
            let keys = match l {
                Expr::Group(g) => vec![*g],
                other => vec![other],
            };
            l = Expr::In(keys, a);
        }
        Ok(l)
    }
    fn matching(&mut self, gt: bool) -> R<Expr> {
        let mut l = self.comparison(gt)?;
        loop {
            let neg = if self.eat_op("~") {
                false
            } else if self.eat_op("!~") {
                true
            } else {
                break;
            };
            let r = self.comparison(gt)?;
            l = Expr::Match(neg, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn comparison(&mut self, gt: bool) -> R<Expr> {
        let l = self.concat(gt)?;
        let op = match self.peek() {
            Tok::Op(o @ ("<" | "<=" | "==" | "!=" | ">=")) => *o,
            Tok::Op(">") if gt => ">",
            _ => return Ok(l),
        };
        self.i += 1;
        let r = self.concat(gt)?;
        Ok(Expr::Bin(op, Box::new(l), Box::new(r)))
    }
    fn starts_operand(&self) -> bool {
        match self.peek() {
            Tok::Num(_) | Tok::Str(_) | Tok::Re(_) | Tok::Name(_) | Tok::Builtin(_) => true,
            Tok::Op(o) => matches!(*o, "$" | "(" | "!" | "-" | "+" | "++" | "--"),
            _ => false,
        }
    }
    fn concat(&mut self, gt: bool) -> R<Expr> {
        let mut l = self.additive()?;
        while self.starts_operand() && !self.is_op("!") {
            // `a -1` is subtraction, handled in additive; a unary minus cannot start a
            // concatenated operand here.
            if self.is_op("-") || self.is_op("+") {
                break;
            }
            let r = self.additive()?;
            l = Expr::Concat(Box::new(l), Box::new(r));
        }
        let _ = gt;
        Ok(l)
    }
    fn additive(&mut self) -> R<Expr> {
        let mut l = self.mult()?;
        loop {
            let op = if self.is_op("+") {
                "+"
            } else if self.is_op("-") {
                "-"
            } else {
                break;
            };
            self.i += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.mult()?));
        }
        Ok(l)
    }
    fn mult(&mut self) -> R<Expr> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Op(o @ ("*" | "/" | "%")) => *o,
                _ => break,
            };
            self.i += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.unary()?));
        }
        Ok(l)
    }
    fn unary(&mut self) -> R<Expr> {
        if self.eat_op("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat_op("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat_op("+") {
            return Ok(Expr::Bin("+", Box::new(Expr::Num(0.0)), Box::new(self.unary()?)));
        }
        self.power()
    }
    fn power(&mut self) -> R<Expr> {
        let base = self.postfix()?;
        if self.eat_op("^") || self.eat_op("**") {
            let e = self.unary()?;
            return Ok(Expr::Bin("^", Box::new(base), Box::new(e)));
        }
        Ok(base)
    }
    fn postfix(&mut self) -> R<Expr> {
        if self.eat_op("++") {
            let lv = self.primary()?;
            return Ok(Expr::Incr(Box::new(lv), true, 1.0));
        }
        if self.eat_op("--") {
            let lv = self.primary()?;
            return Ok(Expr::Incr(Box::new(lv), true, -1.0));
        }
        let p = self.primary()?;
        if matches!(p, Expr::Var(_) | Expr::Field(_) | Expr::Index(..)) {
            if self.eat_op("++") {
                return Ok(Expr::Incr(Box::new(p), false, 1.0));
            }
            if self.eat_op("--") {
                return Ok(Expr::Incr(Box::new(p), false, -1.0));
            }
        }
        Ok(p)
    }
    fn primary(&mut self) -> R<Expr> {
        match self.next() {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Re(r) => {
                self.regexes.push(r);
                Ok(Expr::Re(self.regexes.len() - 1))
            }
            Tok::Op("$") => {
                let e = if self.eat_op("++") || self.eat_op("--") { return Err("awk: $++ is not supported".into()) } else { self.primary()? };
                Ok(Expr::Field(Box::new(e)))
            }
            Tok::Op("(") => {
                let e = self.expr()?;
                if self.is_op(",") {
                    // (a, b) in arr
                    let mut v = vec![e];
                    while self.eat_op(",") {
                        v.push(self.expr()?);
                    }
                    self.expect(")")?;
                    if !matches!(self.peek(), Tok::Kw("in")) {
                        return Err("awk: syntax error: a list in parentheses must be followed by 'in'".into());
                    }
                    self.i += 1;
                    let Tok::Name(a) = self.next() else { return Err("awk: syntax error: 'in' needs an array".into()) };
                    return Ok(Expr::In(v, a));
                }
                self.expect(")")?;
                Ok(Expr::Group(Box::new(e)))
            }
            Tok::Name(n) => {
                if self.eat_op("[") {
                    let idx = self.expr_list("]")?;
                    return Ok(Expr::Index(n, idx));
                }
                if self.is_op("(") {
                    return Err(format!("awk: calling function '{n}': user-defined functions are not supported"));
                }
                Ok(Expr::Var(n))
            }
            Tok::Builtin(b) => {
                let args = if self.eat_op("(") { self.expr_list(")")? } else { Vec::new() };
                if matches!(b.as_str(), "system" | "close" | "fflush") {
                    return Err(format!("awk: {b}() is not supported"));
                }
                Ok(Expr::Call(b, args))
            }
            Tok::Kw("getline") => Err("awk: getline is not supported".into()),
            other => {
                self.i -= 1;
                let _ = other;
                Err(format!("awk: syntax error at {}", self.desc()))
            }
        }
    }
}

// ---- Values and the interpreter ---------------------------------------------------------------

#[derive(Clone, Debug)]
enum V {
    Num(f64),
    Str(String),
    /// Input text that looks like a number compares as one (POSIX strnum).
    StrNum(String, f64),
}

fn looks_numeric(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let ok = t.parse::<f64>().ok().filter(|_| !t.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E'));
    ok.filter(|_| !t.eq_ignore_ascii_case("inf") && !t.eq_ignore_ascii_case("nan"))
}

/// strtod on a prefix: "12abc" is 12.
fn to_num(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut e = 0;
    if e < b.len() && (b[e] == b'-' || b[e] == b'+') {
        e += 1;
    }
    let ds = e;
    while e < b.len() && b[e].is_ascii_digit() {
        e += 1;
    }
    if e < b.len() && b[e] == b'.' {
        e += 1;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
    }
    if e > ds && e < b.len() && (b[e] == b'e' || b[e] == b'E') {
        let mut f = e + 1;
        if f < b.len() && (b[f] == b'-' || b[f] == b'+') {
            f += 1;
        }
        if f < b.len() && b[f].is_ascii_digit() {
            while f < b.len() && b[f].is_ascii_digit() {
                f += 1;
            }
            e = f;
        }
    }
    t[..e].parse().unwrap_or(0.0)
}

/// A number as awk prints it: integers exactly, others with "%.6g" (CONVFMT/OFMT).
fn num_str(n: f64) -> String {
    if n == n.trunc() && n.abs() < 1e16 {
        return format!("{}", n as i64);
    }
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf".into() } else { "inf".into() };
    }
    fmt_g(n, 6, false)
}

/// C's %g.
fn fmt_g(n: f64, prec: usize, alt: bool) -> String {
    let p = prec.max(1);
    if n == 0.0 {
        return "0".into();
    }
    let exp = n.abs().log10().floor() as i32;
    let s = if exp < -4 || exp >= p as i32 {
        let s = format!("{:.*e}", p - 1, n);
        // Rust: 1.5e6 -> C: 1.5e+06
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if alt { m.to_string() } else if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.').to_string() } else { m.to_string() };
        let ev: i32 = e.parse().unwrap_or(0);
        format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs())
    } else {
        let s = format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, n);
        if alt || !s.contains('.') { s } else { s.trim_end_matches('0').trim_end_matches('.').to_string() }
    };
    s
}

impl V {
    fn num(&self) -> f64 {
        match self {
            V::Num(n) | V::StrNum(_, n) => *n,
            V::Str(s) => to_num(s),
        }
    }
    fn str(&self) -> String {
        match self {
            V::Num(n) => num_str(*n),
            V::Str(s) | V::StrNum(s, _) => s.clone(),
        }
    }
    fn truthy(&self) -> bool {
        match self {
            V::Num(n) => *n != 0.0,
            V::Str(s) => !s.is_empty(),
            V::StrNum(_, n) => *n != 0.0,
        }
    }
    fn input(s: String) -> V {
        match looks_numeric(&s) {
            Some(n) => V::StrNum(s, n),
            None => V::Str(s),
        }
    }
}

enum Flow {
    Next,
    Exit,
    Break,
    Continue,
}

struct Awk {
    items: Vec<(Pattern, Option<Vec<Stmt>>)>,
    regexes: Vec<Regex>,
    dyn_re: BTreeMap<String, Regex>,
    vars: BTreeMap<String, V>,
    arrays: BTreeMap<String, BTreeMap<String, V>>,
    fields: Vec<String>,
    record: String,
    nf: usize,
    in_range: Vec<bool>,
    out: Vec<u8>,
    exit_code: i32,
    exiting: bool,
    began: bool,
    partial: Vec<u8>,
    rand_seed: u64,
    steps: u64,
}

const STEP_LIMIT: u64 = 200_000_000;

impl Awk {
    fn var(&self, n: &str) -> V {
        match n {
            "NF" => V::Num(self.nf as f64),
            _ => self.vars.get(n).cloned().unwrap_or(V::Str(String::new())),
        }
    }

    fn fs(&self) -> String {
        self.vars.get("FS").map(|v| v.str()).unwrap_or_else(|| " ".into())
    }

    fn split_record(&mut self) {
        let fs = self.fs();
        self.fields = split_with(&self.record, &fs, &mut self.dyn_re);
        self.nf = self.fields.len();
    }

    fn set_nf(&mut self, n: usize) {
        self.fields.resize(n, String::new());
        self.nf = n;
        self.rebuild();
    }

    fn rebuild(&mut self) {
        let ofs = self.vars.get("OFS").map(|v| v.str()).unwrap_or_else(|| " ".into());
        self.record = self.fields[..self.nf.min(self.fields.len())].join(&ofs);
    }

    fn field(&self, i: usize) -> V {
        if i == 0 {
            return V::input(self.record.clone());
        }
        match self.fields.get(i - 1) {
            Some(f) if i <= self.nf => V::input(f.clone()),
            _ => V::Str(String::new()),
        }
    }

    fn set_field(&mut self, i: usize, v: String) {
        if i == 0 {
            self.record = v;
            self.split_record();
            return;
        }
        if i > self.fields.len() {
            self.fields.resize(i, String::new());
        }
        self.fields[i - 1] = v;
        if i > self.nf {
            self.nf = i;
        }
        self.rebuild();
    }

    fn regex(&mut self, s: &str) -> R<Regex> {
        if let Some(r) = self.dyn_re.get(s) {
            return Ok(r.clone());
        }
        let r = Regex::new(&super::grep::ere_to_regex(s)).map_err(|e| format!("awk: invalid regex '{s}': {}", e.to_string().lines().last().unwrap_or("")))?;
        self.dyn_re.insert(s.to_string(), r.clone());
        Ok(r)
    }

    fn key(&mut self, idx: &[Expr]) -> R<String> {
        let subsep = self.vars.get("SUBSEP").map(|v| v.str()).unwrap_or_else(|| "\x1c".into());
        let mut parts = Vec::new();
        for e in idx {
            parts.push(self.eval(e)?.str());
        }
        Ok(parts.join(&subsep))
    }

    fn assign(&mut self, lv: &Expr, v: V) -> R<V> {
        match lv {
            Expr::Var(n) => {
                if n == "NF" {
                    self.set_nf(v.num().max(0.0) as usize);
                } else {
                    self.vars.insert(n.clone(), v.clone());
                }
            }
            Expr::Field(i) => {
                let i = self.eval(i)?.num();
                if i < 0.0 {
                    return Err(format!("awk: trying to access out of range field {i}"));
                }
                self.set_field(i as usize, v.str());
            }
            Expr::Index(a, idx) => {
                let k = self.key(idx)?;
                self.arrays.entry(a.clone()).or_default().insert(k, v.clone());
            }
            Expr::Group(g) => return self.assign(g, v),
            _ => return Err("awk: assignment to a non-variable".into()),
        }
        Ok(v)
    }

    fn eval(&mut self, e: &Expr) -> R<V> {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return Err("awk: the program ran too long (more than 200000000 steps)".into());
        }
        Ok(match e {
            Expr::Num(n) => V::Num(*n),
            Expr::Str(s) => V::Str(s.clone()),
            Expr::Re(i) => V::Num(f64::from(u8::from(self.regexes[*i].is_match(&self.record)))),
            Expr::Var(n) => self.var(n),
            Expr::Group(g) => self.eval(g)?,
            Expr::Field(i) => {
                let i = self.eval(i)?.num();
                if i < 0.0 {
                    return Err(format!("awk: trying to access out of range field {}", i as i64));
                }
                self.field(i as usize)
            }
            Expr::Index(a, idx) => {
                let k = self.key(idx)?;
                // Referencing an element creates it.
                self.arrays.entry(a.clone()).or_default().entry(k).or_insert(V::Str(String::new())).clone()
            }
            Expr::In(idx, a) => {
                let k = self.key(idx)?;
                V::Num(f64::from(u8::from(self.arrays.get(a).is_some_and(|m| m.contains_key(&k)))))
            }
            Expr::Assign(lv, op, rhs) => {
                let r = self.eval(rhs)?;
                let v = if *op == "=" {
                    match r {
                        V::StrNum(s, n) => V::StrNum(s, n),
                        other => other,
                    }
                } else {
                    let l = self.eval(lv)?.num();
                    V::Num(arith(&op[..1], l, r.num())?)
                };
                self.assign(lv, v)?
            }
            Expr::Incr(lv, pre, d) => {
                let old = self.eval(lv)?.num();
                self.assign(lv, V::Num(old + d))?;
                V::Num(if *pre { old + d } else { old })
            }
            Expr::Bin(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                match *op {
                    "<" | "<=" | ">" | ">=" | "==" | "!=" => {
                        let numeric = matches!((&x, &y), (V::Num(_) | V::StrNum(..), V::Num(_) | V::StrNum(..)));
                        let o = if numeric {
                            x.num().partial_cmp(&y.num()).unwrap_or(std::cmp::Ordering::Equal)
                        } else {
                            x.str().cmp(&y.str())
                        };
                        use std::cmp::Ordering::*;
                        let r = match *op {
                            "<" => o == Less,
                            "<=" => o != Greater,
                            ">" => o == Greater,
                            ">=" => o != Less,
                            "==" => o == Equal,
                            _ => o != Equal,
                        };
                        V::Num(f64::from(u8::from(r)))
                    }
                    _ => V::Num(arith(op, x.num(), y.num())?),
                }
            }
            Expr::Not(a) => V::Num(f64::from(u8::from(!self.eval(a)?.truthy()))),
            Expr::Neg(a) => V::Num(-self.eval(a)?.num()),
            Expr::And(a, b) => V::Num(f64::from(u8::from(self.eval(a)?.truthy() && self.eval(b)?.truthy()))),
            Expr::Or(a, b) => V::Num(f64::from(u8::from(self.eval(a)?.truthy() || self.eval(b)?.truthy()))),
            Expr::Cond(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::Concat(a, b) => {
                let mut s = self.eval(a)?.str();
                s.push_str(&self.eval(b)?.str());
                V::Str(s)
            }
            Expr::Match(neg, s, r) => {
                let text = self.eval(s)?.str();
                let re = self.re_of(r)?;
                V::Num(f64::from(u8::from(re.is_match(&text) != *neg)))
            }
            Expr::Call(f, args) => self.call(f, args)?,
        })
    }

    fn re_of(&mut self, r: &Expr) -> R<Regex> {
        match r {
            Expr::Re(i) => Ok(self.regexes[*i].clone()),
            other => {
                let s = self.eval(other)?.str();
                self.regex(&s)
            }
        }
    }

    fn call(&mut self, f: &str, args: &[Expr]) -> R<V> {
        let arg = |s: &mut Awk, i: usize| -> R<V> {
            match args.get(i) {
                Some(e) => s.eval(e),
                None => Ok(V::Str(String::new())),
            }
        };
        let need = |n: usize| -> R<()> {
            if args.len() < n {
                Err(format!("awk: {f}: not enough arguments"))
            } else {
                Ok(())
            }
        };
        Ok(match f {
            "length" => {
                if args.is_empty() {
                    V::Num(self.record.chars().count() as f64)
                } else if let Expr::Var(n) = &args[0] {
                    match self.arrays.get(n) {
                        Some(a) => V::Num(a.len() as f64),
                        None => V::Num(self.var(n).str().chars().count() as f64),
                    }
                } else {
                    V::Num(arg(self, 0)?.str().chars().count() as f64)
                }
            }
            "substr" => {
                need(2)?;
                let s: Vec<char> = arg(self, 0)?.str().chars().collect();
                let m = arg(self, 1)?.num().round();
                let n = if args.len() > 2 { arg(self, 2)?.num().round() } else { f64::INFINITY };
                // POSIX: characters from m to m+n-1, clipped to 1..=len.
                let start = m.max(1.0);
                let end = (m + n).min(s.len() as f64 + 1.0);
                if end <= start {
                    V::Str(String::new())
                } else {
                    V::Str(s[(start as usize - 1)..(end as usize - 1)].iter().collect())
                }
            }
            "index" => {
                need(2)?;
                let s = arg(self, 0)?.str();
                let t = arg(self, 1)?.str();
                V::Num(s.find(&t).map_or(0, |b| s[..b].chars().count() + 1) as f64)
            }
            "split" => {
                need(2)?;
                let s = arg(self, 0)?.str();
                let Expr::Var(a) = &args[1] else { return Err("awk: split: second argument must be an array".into()) };
                let fs = if args.len() > 2 {
                    match &args[2] {
                        Expr::Re(i) => format!("\x00re{}", self.regexes[*i].as_str()),
                        e => self.eval(e)?.str(),
                    }
                } else {
                    self.fs()
                };
                let parts = if let Some(re) = fs.strip_prefix("\x00re") {
                    let r = self.regex(re)?;
                    if s.is_empty() { Vec::new() } else { r.split(&s).map(str::to_string).collect() }
                } else {
                    split_with(&s, &fs, &mut self.dyn_re)
                };
                let m = self.arrays.entry(a.clone()).or_default();
                m.clear();
                for (i, p) in parts.iter().enumerate() {
                    m.insert((i + 1).to_string(), V::input(p.clone()));
                }
                V::Num(parts.len() as f64)
            }
            "sub" | "gsub" => {
                need(2)?;
                let re = self.re_of(&args[0])?;
                let repl = arg(self, 1)?.str();
                let target = args.get(2).cloned().unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
                let text = self.eval(&target)?.str();
                let mut out = String::new();
                let mut last = 0;
                let mut n = 0;
                for m in re.find_iter(&text) {
                    out.push_str(&text[last..m.start()]);
                    let rc: Vec<char> = repl.chars().collect();
                    let mut i = 0;
                    while i < rc.len() {
                        if rc[i] == '\\' && i + 1 < rc.len() && (rc[i + 1] == '&' || rc[i + 1] == '\\') {
                            out.push(rc[i + 1]);
                            i += 2;
                            continue;
                        }
                        if rc[i] == '&' {
                            out.push_str(m.as_str());
                        } else {
                            out.push(rc[i]);
                        }
                        i += 1;
                    }
                    last = m.end();
                    n += 1;
                    if f == "sub" {
                        break;
                    }
                }
                if n > 0 {
                    out.push_str(&text[last..]);
                    self.assign(&target, V::Str(out))?;
                }
                V::Num(n as f64)
            }
            "match" => {
                need(2)?;
                let s = arg(self, 0)?.str();
                let re = self.re_of(&args[1])?;
                let (st, len) = match re.find(&s) {
                    Some(m) => (s[..m.start()].chars().count() as f64 + 1.0, m.as_str().chars().count() as f64),
                    None => (0.0, -1.0),
                };
                self.vars.insert("RSTART".into(), V::Num(st));
                self.vars.insert("RLENGTH".into(), V::Num(len));
                V::Num(st)
            }
            "sprintf" => {
                need(1)?;
                let mut vals = Vec::new();
                for e in args {
                    vals.push(self.eval(e)?);
                }
                V::Str(format_awk(&vals))
            }
            "toupper" => V::Str(arg(self, 0)?.str().to_uppercase()),
            "tolower" => V::Str(arg(self, 0)?.str().to_lowercase()),
            "int" => V::Num(arg(self, 0)?.num().trunc()),
            "sqrt" => V::Num(arg(self, 0)?.num().sqrt()),
            "exp" => V::Num(arg(self, 0)?.num().exp()),
            "log" => V::Num(arg(self, 0)?.num().ln()),
            "sin" => V::Num(arg(self, 0)?.num().sin()),
            "cos" => V::Num(arg(self, 0)?.num().cos()),
            "atan2" => {
                need(2)?;
                V::Num(arg(self, 0)?.num().atan2(arg(self, 1)?.num()))
            }
            "rand" => {
                // A fixed-seed generator: the same program gives the same numbers.
                self.rand_seed = self.rand_seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                V::Num((self.rand_seed >> 11) as f64 / (1u64 << 53) as f64)
            }
            "srand" => {
                let old = self.rand_seed;
                self.rand_seed = if args.is_empty() { 0 } else { arg(self, 0)?.num() as u64 };
                V::Num(old as f64)
            }
            other => return Err(format!("awk: function {other} is not supported")),
        })
    }

    fn exec(&mut self, s: &Stmt) -> R<Option<Flow>> {
        match s {
            Stmt::Expr(e) => {
                self.eval(e)?;
            }
            Stmt::Print(args) => {
                let ofs = self.vars.get("OFS").map(|v| v.str()).unwrap_or_else(|| " ".into());
                let ors = self.vars.get("ORS").map(|v| v.str()).unwrap_or_else(|| "\n".into());
                let mut line = String::new();
                if args.is_empty() {
                    line.push_str(&self.record);
                }
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        line.push_str(&ofs);
                    }
                    let v = self.eval(a)?;
                    // print uses OFMT for non-integer numbers.
                    line.push_str(&v.str());
                }
                line.push_str(&ors);
                self.out.extend_from_slice(line.as_bytes());
            }
            Stmt::Printf(args) => {
                let mut vals = Vec::new();
                for e in args {
                    vals.push(self.eval(e)?);
                }
                let s = format_awk(&vals);
                self.out.extend_from_slice(s.as_bytes());
            }
            Stmt::If(c, a, b) => {
                if self.eval(c)?.truthy() {
                    return self.exec(a);
                } else if let Some(b) = b {
                    return self.exec(b);
                }
            }
            Stmt::While(c, body) => {
                while self.eval(c)?.truthy() {
                    match self.exec(body)? {
                        Some(Flow::Break) => break,
                        Some(Flow::Continue) | None => {}
                        other => return Ok(other),
                    }
                }
            }
            Stmt::Do(body, c) => loop {
                match self.exec(body)? {
                    Some(Flow::Break) => break,
                    Some(Flow::Continue) | None => {}
                    other => return Ok(other),
                }
                if !self.eval(c)?.truthy() {
                    break;
                }
            },
            Stmt::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.exec(i)?;
                }
                loop {
                    if let Some(c) = cond {
                        if !self.eval(c)?.truthy() {
                            break;
                        }
                    }
                    match self.exec(body)? {
                        Some(Flow::Break) => break,
                        Some(Flow::Continue) | None => {}
                        other => return Ok(other),
                    }
                    if let Some(st) = step {
                        self.exec(st)?;
                    }
                    self.steps += 1;
                    if self.steps > STEP_LIMIT {
                        return Err("awk: the program ran too long (more than 200000000 steps)".into());
                    }
                }
            }
            Stmt::ForIn(k, a, body) => {
                // gawk's order is its hash order; here keys go in sorted order (numbers
                // numerically), which is deterministic.
                let mut keys: Vec<String> = self.arrays.get(a).map(|m| m.keys().cloned().collect()).unwrap_or_default();
                keys.sort_by(|x, y| match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(p), Ok(q)) => p.partial_cmp(&q).unwrap_or(std::cmp::Ordering::Equal),
                    _ => x.cmp(y),
                });
                for key in keys {
                    self.vars.insert(k.clone(), V::input(key));
                    match self.exec(body)? {
                        Some(Flow::Break) => break,
                        Some(Flow::Continue) | None => {}
                        other => return Ok(other),
                    }
                }
            }
            Stmt::Block(v) => {
                for s in v {
                    if let Some(f) = self.exec(s)? {
                        return Ok(Some(f));
                    }
                }
            }
            Stmt::Next => return Ok(Some(Flow::Next)),
            Stmt::Break => return Ok(Some(Flow::Break)),
            Stmt::Continue => return Ok(Some(Flow::Continue)),
            Stmt::Exit(e) => {
                if let Some(e) = e {
                    self.exit_code = self.eval(e)?.num() as i32;
                }
                return Ok(Some(Flow::Exit));
            }
            Stmt::Delete(a, idx) => match idx {
                Some(idx) => {
                    let k = self.key(idx)?;
                    if let Some(m) = self.arrays.get_mut(a) {
                        m.remove(&k);
                    }
                }
                None => {
                    self.arrays.remove(a);
                }
            },
        }
        Ok(None)
    }

    fn run_actions(&mut self, which: &dyn Fn(&Pattern) -> bool, record: bool) -> R<Option<Flow>> {
        let items = std::mem::take(&mut self.items);
        let mut result = Ok(None);
        'items: for (pat, action) in &items {
            if !which(pat) {
                continue;
            }
            let sel = match pat {
                Pattern::Begin | Pattern::End | Pattern::All => true,
                Pattern::Expr(e) => match self.eval(e) {
                    Ok(v) => v.truthy(),
                    Err(m) => {
                        result = Err(m);
                        break;
                    }
                },
                Pattern::Range(a, b, i) => {
                    if self.in_range[*i] {
                        match self.eval(b) {
                            Ok(v) => {
                                if v.truthy() {
                                    self.in_range[*i] = false;
                                }
                                true
                            }
                            Err(m) => {
                                result = Err(m);
                                break;
                            }
                        }
                    } else {
                        match self.eval(a) {
                            Ok(v) if v.truthy() => {
                                let end = self.eval(b).map(|v| v.truthy()).unwrap_or(false);
                                self.in_range[*i] = !end;
                                true
                            }
                            Ok(_) => false,
                            Err(m) => {
                                result = Err(m);
                                break;
                            }
                        }
                    }
                }
            };
            if !sel {
                continue;
            }
            let Some(action) = action else {
                // A pattern alone prints the record.
                let mut l = self.record.clone();
                l.push_str(&self.vars.get("ORS").map(|v| v.str()).unwrap_or_else(|| "\n".into()));
                self.out.extend_from_slice(l.as_bytes());
                continue;
            };
            for s in action {
                match self.exec(s) {
                    Ok(None) => {}
                    Ok(Some(Flow::Next)) if record => break 'items,
                    Ok(Some(Flow::Exit)) => {
                        result = Ok(Some(Flow::Exit));
                        break 'items;
                    }
                    Ok(Some(_)) => {}
                    Err(m) => {
                        result = Err(m);
                        break 'items;
                    }
                }
            }
        }
        self.items = items;
        result
    }

    fn begin(&mut self) -> R<()> {
        if self.began {
            return Ok(());
        }
        self.began = true;
        if let Some(Flow::Exit) = self.run_actions(&|p| matches!(p, Pattern::Begin), false)? {
            self.exiting = true;
        }
        Ok(())
    }

    fn record(&mut self, line: &[u8]) -> R<()> {
        let nr = self.vars.get("NR").map_or(0.0, V::num) + 1.0;
        self.vars.insert("NR".into(), V::Num(nr));
        let fnr = self.vars.get("FNR").map_or(0.0, V::num) + 1.0;
        self.vars.insert("FNR".into(), V::Num(fnr));
        self.record = String::from_utf8_lossy(line).into_owned();
        self.split_record();
        if let Some(Flow::Exit) = self.run_actions(&|p| !matches!(p, Pattern::Begin | Pattern::End), true)? {
            self.exiting = true;
        }
        Ok(())
    }
}

fn arith(op: &str, a: f64, b: f64) -> R<f64> {
    Ok(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => {
            if b == 0.0 {
                return Err("awk: division by zero".into());
            }
            a / b
        }
        "%" => {
            if b == 0.0 {
                return Err("awk: division by zero in %".into());
            }
            a % b
        }
        "^" => a.powf(b),
        _ => return Err(format!("awk: unknown operator {op}")),
    })
}

/// Split a record: " " = runs of blanks (leading/trailing ignored); one other character
/// = that character; longer = a regex.
fn split_with(s: &str, fs: &str, cache: &mut BTreeMap<String, Regex>) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    if fs == " " {
        return s.split([' ', '\t', '\n']).filter(|f| !f.is_empty()).map(str::to_string).collect();
    }
    if fs.chars().count() == 1 && fs != "\\" {
        let c = fs.chars().next().unwrap_or(' ');
        if c == '\t' || !".[]()*+?^$|{}".contains(c) {
            return s.split(c).map(str::to_string).collect();
        }
    }
    let re = match cache.get(fs) {
        Some(r) => r.clone(),
        None => match Regex::new(&super::grep::ere_to_regex(fs)) {
            Ok(r) => {
                cache.insert(fs.to_string(), r.clone());
                r
            }
            Err(_) => return vec![s.to_string()],
        },
    };
    re.split(s).map(str::to_string).collect()
}

/// printf/sprintf with awk's conversions (%c of a number is that character).
fn format_awk(vals: &[V]) -> String {
    let fmt = vals[0].str();
    let f: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut ai = 1;
    let mut i = 0;
    while i < f.len() {
        if f[i] != '%' {
            out.push(f[i]);
            i += 1;
            continue;
        }
        if f.get(i + 1) == Some(&'%') {
            out.push('%');
            i += 2;
            continue;
        }
        let mut j = i + 1;
        let mut spec = String::new();
        while j < f.len() && "-+ #0123456789.*".contains(f[j]) {
            if f[j] == '*' {
                let v = vals.get(ai).map_or(0.0, V::num) as i64;
                ai += 1;
                spec.push_str(&v.to_string());
            } else {
                spec.push(f[j]);
            }
            j += 1;
        }
        let Some(&conv) = f.get(j) else {
            out.push_str(&f[i..].iter().collect::<String>());
            break;
        };
        let v = vals.get(ai).cloned().unwrap_or(V::Str(String::new()));
        ai += 1;
        let left = spec.contains('-');
        let zero = spec.trim_start_matches(['-', '+', ' ', '#']).starts_with('0');
        let plus = spec.contains('+');
        let space = spec.contains(' ');
        let alt = spec.contains('#');
        let digits = spec.trim_start_matches(['-', '+', ' ', '#', '0']);
        let (w, p) = match digits.split_once('.') {
            Some((w, p)) => (w.parse::<usize>().unwrap_or(0), Some(p.parse::<usize>().unwrap_or(0))),
            None => (digits.parse::<usize>().unwrap_or(0), None),
        };
        let body = match conv {
            'd' | 'i' => {
                let n = v.num();
                let n = if n.is_finite() { n.trunc() as i64 } else { 0 };
                let mut s = n.abs().to_string();
                if let Some(p) = p {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                if n < 0 {
                    s.insert(0, '-');
                } else if plus {
                    s.insert(0, '+');
                } else if space {
                    s.insert(0, ' ');
                }
                s
            }
            'o' => format!("{:o}", v.num() as i64),
            'x' => format!("{:x}", v.num() as i64),
            'X' => format!("{:X}", v.num() as i64),
            'u' => format!("{}", v.num() as u64),
            'c' => match v {
                V::Num(n) => char::from_u32(n as u32).map(String::from).unwrap_or_default(),
                other => other.str().chars().next().map(String::from).unwrap_or_default(),
            },
            's' => {
                let s = v.str();
                match p {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let n = v.num();
                let prec = p.unwrap_or(6);
                let mut s = match conv {
                    'e' | 'E' => {
                        let s = format!("{:.*e}", prec, n);
                        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                        let ev: i32 = e.parse().unwrap_or(0);
                        let s = format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs());
                        if conv == 'E' { s.to_uppercase() } else { s }
                    }
                    'g' | 'G' => {
                        let s = fmt_g(n, if prec == 0 { 1 } else { prec }, alt);
                        if conv == 'G' { s.to_uppercase() } else { s }
                    }
                    _ => format!("{:.*}", prec, n),
                };
                if n >= 0.0 && plus {
                    s.insert(0, '+');
                } else if n >= 0.0 && space {
                    s.insert(0, ' ');
                }
                s
            }
            other => {
                out.push('%');
                out.push_str(&spec);
                out.push(other);
                i = j + 1;
                continue;
            }
        };
        let n = body.chars().count();
        if n < w {
            let fill = w - n;
            if left {
                out.push_str(&body);
                out.push_str(&" ".repeat(fill));
            } else if zero && conv != 's' && conv != 'c' {
                let (sign, rest) = if body.starts_with(['-', '+', ' ']) { body.split_at(1) } else { ("", body.as_str()) };
                out.push_str(sign);
                out.push_str(&"0".repeat(fill));
                out.push_str(rest);
            } else {
                out.push_str(&" ".repeat(fill));
                out.push_str(&body);
            }
        } else {
            out.push_str(&body);
        }
        i = j + 1;
    }
    out
}

pub fn build(args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    let mut fs: Option<String> = None;
    let mut assigns: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    let mut program = None;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(v) = a.strip_prefix("-F") {
            if v.is_empty() {
                i += 1;
                fs = Some(args.get(i).cloned().ok_or("awk: option requires an argument -- F")?);
            } else {
                fs = Some(v.to_string());
            }
        } else if let Some(v) = a.strip_prefix("-v") {
            let v = if v.is_empty() {
                i += 1;
                args.get(i).cloned().ok_or("awk: option requires an argument -- v")?
            } else {
                v.to_string()
            };
            let (n, val) = v.split_once('=').ok_or(format!("awk: invalid -v argument '{v}' (expected NAME=VALUE)"))?;
            assigns.push((n.to_string(), val.to_string()));
        } else if a == "-f" {
            return Err("awk: -f PROGFILE is not supported (give the program on the command line)".into());
        } else if a.starts_with('-') && a.len() > 1 {
            return Err(format!("awk: unsupported option '{a}' (supported: -F FS, -v NAME=VALUE, 'PROGRAM' [FILE]...)"));
        } else {
            break;
        }
        i += 1;
    }
    if i < args.len() {
        program = Some(args[i].clone());
        i += 1;
    }
    let Some(program) = program else { return Err("awk: no program given (usage: awk [-F FS] [-v N=V] 'PROGRAM' [FILE]...)".into()) };
    let toks = lex(&program)?;
    let mut p = P { t: toks, i: 0, regexes: Vec::new(), ranges: 0 };
    let items = p.program()?;
    let mut regexes = Vec::new();
    for r in &p.regexes {
        regexes.push(Regex::new(&super::grep::ere_to_regex(r)).map_err(|e| format!("awk: invalid regex /{r}/: {}", e.to_string().lines().last().unwrap_or("")))?);
    }
    let mut vars = BTreeMap::new();
    let unescape = |s: &str| s.replace("\\t", "\t").replace("\\n", "\n");
    vars.insert("FS".into(), V::Str(fs.map(|f| if f == "t" { "\t".to_string() } else { unescape(&f) }).unwrap_or_else(|| " ".into())));
    vars.insert("OFS".into(), V::Str(" ".into()));
    vars.insert("ORS".into(), V::Str("\n".into()));
    vars.insert("SUBSEP".into(), V::Str("\x1c".into()));
    vars.insert("NR".into(), V::Num(0.0));
    vars.insert("FNR".into(), V::Num(0.0));
    for (n, v) in assigns {
        vars.insert(n, V::input(unescape(&v)));
    }
    // Operands: files, and NAME=VALUE assignments (done before reading; a simplification
    // of awk's in-order processing).
    let mut files = Vec::new();
    for a in &args[i..] {
        match a.split_once('=') {
            Some((n, v)) if !n.is_empty() && !n.starts_with(|c: char| c.is_ascii_digit()) && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                vars.insert(n.to_string(), V::input(unescape(v)));
            }
            _ => files.push(a.clone()),
        }
    }
    let only_begin = items.iter().all(|(p, _)| matches!(p, Pattern::Begin));
    let ranges = p.ranges;
    let awk = Awk {
        items,
        regexes,
        dyn_re: BTreeMap::new(),
        vars,
        arrays: BTreeMap::new(),
        fields: Vec::new(),
        record: String::new(),
        nf: 0,
        in_range: vec![false; ranges],
        out: Vec::new(),
        exit_code: 0,
        exiting: false,
        began: false,
        partial: Vec::new(),
        rand_seed: 0,
        steps: 0,
    };
    let reader = if only_begin { Reader::new(&[], ctx, Input::Tty) } else { Reader::new(&files, ctx, stdin) };
    Ok(Box::new(FilterProg::new("awk", reader, Box::new(AwkFilter { awk, error: None }))))
}

struct AwkFilter {
    awk: Awk,
    error: Option<String>,
}

impl AwkFilter {
    fn fail(&mut self, m: String, out: &mut Vec<u8>) -> bool {
        out.append(&mut self.awk.out);
        self.error = Some(m);
        false
    }
}

impl Filter for AwkFilter {
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        if let Err(m) = self.awk.begin() {
            return self.fail(m, out);
        }
        if self.awk.exiting {
            out.append(&mut self.awk.out);
            return false;
        }
        let mut start = 0;
        for (i, &b) in d.iter().enumerate() {
            if b == b'\n' {
                let line = if self.awk.partial.is_empty() {
                    d[start..i].to_vec()
                } else {
                    let mut l = std::mem::take(&mut self.awk.partial);
                    l.extend_from_slice(&d[start..i]);
                    l
                };
                start = i + 1;
                if let Err(m) = self.awk.record(&line) {
                    return self.fail(m, out);
                }
                if self.awk.exiting {
                    out.append(&mut self.awk.out);
                    return false;
                }
            }
        }
        self.awk.partial.extend_from_slice(&d[start..]);
        out.append(&mut self.awk.out);
        true
    }
    fn end_operand(&mut self, _name: Option<&str>, _out: &mut Vec<u8>) {
        self.awk.vars.insert("FNR".into(), V::Num(0.0));
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if self.error.is_some() {
            return 2;
        }
        let r = (|| -> R<()> {
            self.awk.begin()?;
            if !self.awk.exiting && !self.awk.partial.is_empty() {
                let l = std::mem::take(&mut self.awk.partial);
                self.awk.record(&l)?;
            }
            // END runs after exit in a main rule too (POSIX), not after exit in END.
            self.awk.run_actions(&|p| matches!(p, Pattern::End), false)?;
            Ok(())
        })();
        out.append(&mut self.awk.out);
        if let Err(m) = r {
            self.error = Some(m);
            return 2;
        }
        self.awk.exit_code
    }
    fn per_char(&self) -> bool {
        true
    }
    fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(prog: &str, input: &str) -> String {
        let toks = lex(prog).unwrap();
        let mut p = P { t: toks, i: 0, regexes: Vec::new(), ranges: 0 };
        let items = p.program().unwrap();
        let regexes = p.regexes.iter().map(|r| Regex::new(r).unwrap()).collect();
        let mut vars = BTreeMap::new();
        vars.insert("FS".into(), V::Str(" ".into()));
        let mut a = Awk { items, regexes, dyn_re: BTreeMap::new(), vars, arrays: BTreeMap::new(), fields: vec![], record: String::new(), nf: 0, in_range: vec![false; p.ranges], out: vec![], exit_code: 0, exiting: false, began: false, partial: vec![], rand_seed: 0, steps: 0 };
        let mut f = AwkFilter { awk: a, error: None };
        let mut out = Vec::new();
        f.data(input.as_bytes(), &mut out);
        f.finish(&mut out);
        a = f.awk;
        let _ = a;
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fields_sums_arrays() {
        assert_eq!(run("{ print $2, $1 }", "a b\nc d\n"), "b a\nd c\n");
        assert_eq!(run("{ s += $2 } END { print s }", "x 1\ny 2.5\n"), "3.5\n");
        assert_eq!(run("{ c[$1]++ } END { for (k in c) print k, c[k] }", "a\nb\na\n"), "a 2\nb 1\n");
        assert_eq!(run("NR == 2", "a\nb\nc\n"), "b\n");
        assert_eq!(run("/b/ { print NR \": \" $0 }", "a\nb\n"), "2: b\n");
        assert_eq!(run("$2 > 10 { print $1 }", "x 9\ny 11\nz 100\n"), "y\nz\n");
        assert_eq!(run("BEGIN { printf \"%5.1f|%-3s|%03d\\n\", 3.14159, \"a\", 7 }", ""), "  3.1|a  |007\n");
        assert_eq!(run("{ print NF }", "a b  c\n\n"), "3\n0\n");
        assert_eq!(run("{ $2 = \"X\"; print }", "a b c\n"), "a X c\n");
        assert_eq!(run("{ print length($1), substr($1, 2, 2), toupper($1) }", "hello\n"), "5 el HELLO\n");
        assert_eq!(run("BEGIN { print 1/3, 2^10, 10 % 3, 1e6, 0.1+0.2 }", ""), "0.333333 1024 1 1000000 0.3\n");
        assert_eq!(run("{ gsub(/o/, \"0\"); print }", "foo boo\n"), "f00 b00\n");
        assert_eq!(run("{ n = split($0, a, \":\"); print n, a[2] }", "x:y:z\n"), "3 y\n");
    }
}

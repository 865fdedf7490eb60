//! Shell arithmetic (`$((...))`, `((...))`, `let`): bash's integer expressions on 64-bit
//! signed values with C precedence (bash's expr.c): `, = += -= *= /= %= <<= >>= &= ^= |=`,
//! `?:`, `|| && | ^ &`, `== !=`, `< <= > >=`, `<< >>`, `+ -`, `* / %`, `**`, unary
//! `! ~ + -`, `++`/`--` (prefix and postfix), parentheses, decimal, `0x` hex, `0` octal and
//! `BASE#N` numbers, variables by name or as `$NAME`. An unset or empty variable is 0.

/// Variables the expression reads and assigns.
pub trait ArithVars {
    fn get(&self, name: &str) -> Option<String>;
    fn set(&mut self, name: &str, value: i64);
}

#[derive(Clone, Debug, PartialEq)]
enum T {
    Num(i64),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "^=",
    "|=", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "^", "|", "?", ":", "(", ")", ",",
];

fn parse_number(s: &str) -> Result<i64, String> {
    let bad = || format!("{s}: value too great for base (error token is \"{s}\")");
    if let Some((base, digits)) = s.split_once('#') {
        let b: u32 = base.parse().map_err(|_| bad())?;
        if !(2..=36).contains(&b) {
            return Err(format!("{s}: invalid arithmetic base (error token is \"{s}\")"));
        }
        return i64::from_str_radix(digits, b).map_err(|_| bad());
    }
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).map_err(|_| bad());
    }
    if s.len() > 1 && s.starts_with('0') {
        return i64::from_str_radix(&s[1..], 8).map_err(|_| bad());
    }
    s.parse::<i64>().map_err(|_| bad())
}

fn lex(src: &str) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_') {
                i += 1;
            }
            out.push(T::Num(parse_number(&src[st..i])?));
            continue;
        }
        if c == b'$' {
            // `$NAME` / `${NAME}` inside arithmetic: the variable itself.
            i += 1;
            let braced = b.get(i) == Some(&b'{');
            if braced {
                i += 1;
            }
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if st == i {
                return Err(format!("{}: syntax error: operand expected (error token is \"{}\")", src.trim(), &src[st - 1..]));
            }
            out.push(T::Name(src[st..i].to_string()));
            if braced {
                if b.get(i) != Some(&b'}') {
                    return Err(format!("{}: bad substitution", src.trim()));
                }
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(T::Name(src[st..i].to_string()));
            continue;
        }
        for op in OPS {
            if src[i..].starts_with(op) {
                out.push(T::Op(op));
                i += op.len();
                continue 'outer;
            }
        }
        return Err(format!("{}: syntax error: invalid arithmetic operator (error token is \"{}\")", src.trim(), &src[i..]));
    }
    Ok(out)
}

struct P<'a> {
    toks: Vec<T>,
    i: usize,
    vars: &'a mut dyn ArithVars,
    src: &'a str,
    /// Evaluation is off in the branch not taken of `&&`, `||`, `?:`.
    skip: u32,
    depth: u32,
}

/// Binary operators: (op, precedence), higher binds tighter.
fn binprec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

impl P<'_> {
    fn err(&self, what: &str) -> String {
        let rest: Vec<String> = self.toks[self.i.min(self.toks.len())..]
            .iter()
            .map(|t| match t {
                T::Num(n) => n.to_string(),
                T::Name(s) => s.clone(),
                T::Op(o) => o.to_string(),
            })
            .collect();
        format!("{}: syntax error: {what} (error token is \"{}\")", self.src.trim(), rest.join(" "))
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some(T::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn var(&self, name: &str) -> Result<i64, String> {
        if self.skip > 0 {
            return Ok(0);
        }
        let v = self.vars.get(name).unwrap_or_default();
        let v = v.trim();
        if v.is_empty() {
            return Ok(0);
        }
        // bash evaluates a variable's value as an expression; numbers are the common case.
        parse_number(v).or_else(|_| {
            if v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && v != name {
                self.var(v)
            } else {
                Err(format!("{v}: syntax error: operand expected"))
            }
        })
    }

    fn assign(&mut self, name: &str, v: i64) {
        if self.skip == 0 {
            self.vars.set(name, v);
        }
    }

    fn comma(&mut self) -> Result<i64, String> {
        let mut v = self.assign_expr()?;
        while self.peek_op() == Some(",") {
            self.i += 1;
            v = self.assign_expr()?;
        }
        Ok(v)
    }

    fn assign_expr(&mut self) -> Result<i64, String> {
        if let (Some(T::Name(n)), Some(T::Op(op))) = (self.toks.get(self.i), self.toks.get(self.i + 1)) {
            let op: &str = op;
            if matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "^=" | "|=") {
                let name = n.clone();
                self.i += 2;
                let rhs = self.assign_expr()?;
                let v = if op == "=" { rhs } else { self.binop(&op[..op.len() - 1], self.var(&name)?, rhs)? };
                self.assign(&name, v);
                return Ok(v);
            }
        }
        self.ternary()
    }

    fn ternary(&mut self) -> Result<i64, String> {
        let c = self.binary(1)?;
        if self.peek_op() != Some("?") {
            return Ok(c);
        }
        self.i += 1;
        if c == 0 {
            self.skip += 1;
        }
        let a = self.assign_expr()?;
        if c == 0 {
            self.skip -= 1;
        }
        if self.peek_op() != Some(":") {
            return Err(self.err("':' expected for conditional expression"));
        }
        self.i += 1;
        if c != 0 {
            self.skip += 1;
        }
        let b = self.assign_expr()?;
        if c != 0 {
            self.skip -= 1;
        }
        Ok(if c != 0 { a } else { b })
    }

    fn binop(&self, op: &str, a: i64, b: i64) -> Result<i64, String> {
        Ok(match op {
            "||" => i64::from(a != 0 || b != 0),
            "&&" => i64::from(a != 0 && b != 0),
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "==" => i64::from(a == b),
            "!=" => i64::from(a != b),
            "<" => i64::from(a < b),
            "<=" => i64::from(a <= b),
            ">" => i64::from(a > b),
            ">=" => i64::from(a >= b),
            "<<" => a.wrapping_shl(b as u32),
            ">>" => a.wrapping_shr(b as u32),
            "+" => a.wrapping_add(b),
            "-" => a.wrapping_sub(b),
            "*" => a.wrapping_mul(b),
            "/" | "%" => {
                if b == 0 {
                    if self.skip > 0 {
                        return Ok(0);
                    }
                    return Err(format!("{}: division by 0 (error token is \"{b}\")", self.src.trim()));
                }
                if op == "/" { a.wrapping_div(b) } else { a.wrapping_rem(b) }
            }
            "**" => {
                if b < 0 {
                    return Err(format!("{}: exponent less than 0", self.src.trim()));
                }
                a.wrapping_pow(b.min(u32::MAX as i64) as u32)
            }
            _ => return Err(self.err("unknown operator")),
        })
    }

    fn binary(&mut self, min: u8) -> Result<i64, String> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_op() {
            let Some(p) = binprec(op) else { break };
            if p < min {
                break;
            }
            self.i += 1;
            let short = (op == "&&" && lhs == 0) || (op == "||" && lhs != 0);
            if short {
                self.skip += 1;
            }
            // `**` is right-associative.
            let rhs = if op == "**" { self.binary(p)? } else { self.binary(p + 1)? };
            if short {
                self.skip -= 1;
            }
            lhs = self.binop(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(format!("{}: expression nested too deeply", self.src.trim()));
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<i64, String> {
        match self.toks.get(self.i).cloned() {
            Some(T::Op(op @ ("++" | "--"))) => {
                self.i += 1;
                let Some(T::Name(n)) = self.toks.get(self.i).cloned() else {
                    return Err(self.err("operand expected"));
                };
                self.i += 1;
                let v = self.var(&n)? + if op == "++" { 1 } else { -1 };
                self.assign(&n, v);
                Ok(v)
            }
            Some(T::Op(op @ ("!" | "~" | "-" | "+"))) => {
                self.i += 1;
                let v = self.unary()?;
                Ok(match op {
                    "!" => i64::from(v == 0),
                    "~" => !v,
                    "-" => v.wrapping_neg(),
                    _ => v,
                })
            }
            Some(T::Op("(")) => {
                self.i += 1;
                let v = self.comma()?;
                if self.peek_op() != Some(")") {
                    return Err(self.err("missing `)'"));
                }
                self.i += 1;
                Ok(v)
            }
            Some(T::Num(n)) => {
                self.i += 1;
                Ok(n)
            }
            Some(T::Name(n)) => {
                self.i += 1;
                match self.peek_op() {
                    Some(op @ ("++" | "--")) => {
                        self.i += 1;
                        let v = self.var(&n)?;
                        self.assign(&n, v + if op == "++" { 1 } else { -1 });
                        Ok(v)
                    }
                    _ => self.var(&n),
                }
            }
            _ => Err(self.err("operand expected")),
        }
    }
}

/// Evaluate an arithmetic expression; `Err` is bash's message (without the `bash: ` prefix).
pub fn eval(src: &str, vars: &mut dyn ArithVars) -> Result<i64, String> {
    let toks = lex(src)?;
    if toks.is_empty() {
        return Ok(0);
    }
    let mut p = P { toks, i: 0, vars, src, skip: 0, depth: 0 };
    let v = p.comma()?;
    if p.i < p.toks.len() {
        return Err(p.err("syntax error in expression"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct V(BTreeMap<String, String>);
    impl ArithVars for V {
        fn get(&self, n: &str) -> Option<String> {
            self.0.get(n).cloned()
        }
        fn set(&mut self, n: &str, v: i64) {
            self.0.insert(n.into(), v.to_string());
        }
    }

    fn ev(s: &str) -> Result<i64, String> {
        let mut v = V(BTreeMap::new());
        v.0.insert("x".into(), "5".into());
        eval(s, &mut v)
    }

    #[test]
    fn precedence_and_operators() {
        assert_eq!(ev("1 + 2 * 3"), Ok(7));
        assert_eq!(ev("(1 + 2) * 3"), Ok(9));
        assert_eq!(ev("2 ** 3 ** 2"), Ok(512));
        assert_eq!(ev("7 / 2"), Ok(3));
        assert_eq!(ev("-7 % 3"), Ok(-1));
        assert_eq!(ev("x * 2 + $x"), Ok(15));
        assert_eq!(ev("x > 3 && x < 10"), Ok(1));
        assert_eq!(ev("x == 5 ? 10 : 20"), Ok(10));
        assert_eq!(ev("0x10 + 010 + 2#101"), Ok(16 + 8 + 5));
        assert_eq!(ev("unset + 1"), Ok(1));
        assert_eq!(ev("1 << 4 | 1"), Ok(17));
        assert_eq!(ev("!0 + ~0"), Ok(0));
        assert_eq!(ev(""), Ok(0));
    }

    #[test]
    fn assignment_and_increments() {
        let mut v = V(BTreeMap::new());
        assert_eq!(eval("i = 3, i += 2, i++", &mut v), Ok(5));
        assert_eq!(v.0["i"], "6");
        assert_eq!(eval("--i", &mut v), Ok(5));
        assert_eq!(eval("0 && (i = 100)", &mut v), Ok(0));
        assert_eq!(v.0["i"], "5");
    }

    #[test]
    fn errors_are_bash_messages() {
        assert!(ev("1 / 0").unwrap_err().contains("division by 0"));
        assert!(ev("1 +").unwrap_err().contains("operand expected"));
        assert!(ev("(1").unwrap_err().contains("missing"));
        assert!(ev("1 2").unwrap_err().contains("syntax error"));
        assert!(ev("1 @ 2").unwrap_err().contains("invalid arithmetic operator"));
        assert!(ev(&"(".repeat(1000)).is_err());
    }
}

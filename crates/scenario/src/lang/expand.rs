//! Run-time expansion of words: variable lookup and field splitting.
//!
//! Unset variables expand to the empty string. An unquoted `$VAR` is split on blanks
//! (space, tab, newline) into several arguments, and vanishes when its value is empty;
//! a quoted `"$VAR"` always stays one argument. `$(...)` and `$((...))` are split like
//! variables; their values are computed by the caller (the shell runs the commands) and
//! handed in per part (see [`Word::expand_fields_with`]). Brace expansion comes first and
//! makes one word per alternative. `~` was turned into `$HOME` by the parser. Pathname
//! expansion (`*`, `?`, `[...]` written unquoted) comes last, on each field, through a
//! callback that lists the simulated filesystem's matching names
//! ([`Word::expand_fields_glob`]); a pattern that matches nothing stays as written.
//! `${NAME[@]}` gives one field per array element: the lookup returns the elements joined
//! by [`ARRAY_SEP`].

use super::ast::{ParamOp, Word, WordPart};

/// Separates the elements of an array in the value the lookup gives for `NAME[@]`.
pub const ARRAY_SEP: char = '\u{1f}';

/// Values of a word's `$(...)` / `$((...))` parts, by part index (others are ignored).
pub type PartValues = Vec<Option<String>>;

/// Values computed from the lookup alone: `$((...))` evaluated read-only, `$(...)` empty.
pub fn static_values(word: &Word, lookup: &dyn Fn(&str) -> Option<String>) -> PartValues {
    struct Ro<'a>(&'a dyn Fn(&str) -> Option<String>);
    impl super::arith::ArithVars for Ro<'_> {
        fn get(&self, n: &str) -> Option<String> {
            (self.0)(n)
        }
        fn set(&mut self, _: &str, _: i64) {}
    }
    word.parts
        .iter()
        .map(|p| match p {
            WordPart::Arith { expr, .. } => Some(super::arith::eval(expr, &mut Ro(lookup)).map(|v| v.to_string()).unwrap_or_default()),
            WordPart::CmdSubst { .. } => Some(String::new()),
            WordPart::ProcSubst(_) => Some("/dev/fd/63".to_string()),
            WordPart::Param { name, op, arg, arg2, .. } => {
                let val = match op {
                    ParamOp::Indirect => lookup(name).and_then(|n| lookup(&n)),
                    ParamOp::Names { .. } | ParamOp::Keys { .. } => None,
                    _ => lookup(name),
                };
                let need = param_needs_arg(*op, val.as_deref());
                let a = if need { arg.expand(lookup) } else { String::new() };
                let b = arg2.as_ref().map(|w| w.expand(lookup));
                let mut num = |e: &str| super::arith::eval(e, &mut Ro(lookup)).unwrap_or(0);
                Some(apply_param(*op, val, &a, b.as_deref(), &mut num).0)
            }
            _ => None,
        })
        .collect()
}

/// Whether `${NAME<op>ARG}` uses ARG when NAME's value is `val`.
pub fn param_needs_arg(op: ParamOp, val: Option<&str>) -> bool {
    let unset = |colon: bool| val.is_none() || (colon && val == Some(""));
    match op {
        ParamOp::Default { colon } | ParamOp::Assign { colon } | ParamOp::Error { colon } => unset(colon),
        ParamOp::Alt { colon } => !unset(colon),
        _ => true,
    }
}

/// What `${NAME<op>ARG}` does besides giving its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamEffect {
    None,
    /// `:=` on an unset NAME: NAME is assigned the value.
    Assign,
    /// `:?` on an unset NAME: the shell prints `NAME: ARG` and the script stops.
    Fail,
}

/// The value of `${NAME<op>ARG[/ARG2]}` for NAME's value `val` and the expanded arguments
/// (`num` evaluates an arithmetic expression). Patterns are fnmatch(3) globs, matched as
/// bash's remove/replace operators do (shortest or longest, from the start or the end).
pub fn apply_param(op: ParamOp, val: Option<String>, arg: &str, arg2: Option<&str>, num: &mut dyn FnMut(&str) -> i64) -> (String, ParamEffect) {
    use crate::builtins::glob_match;
    let need = param_needs_arg(op, val.as_deref());
    let v = val.unwrap_or_default();
    // Char boundaries of `v`, including its end.
    let cuts: Vec<usize> = v.char_indices().map(|(i, _)| i).chain(std::iter::once(v.len())).collect();
    let none = ParamEffect::None;
    match op {
        ParamOp::Default { .. } => (if need { arg.to_string() } else { v }, none),
        ParamOp::Assign { .. } => {
            if need {
                (arg.to_string(), ParamEffect::Assign)
            } else {
                (v, none)
            }
        }
        ParamOp::Error { .. } => {
            if need {
                (arg.to_string(), ParamEffect::Fail)
            } else {
                (v, none)
            }
        }
        ParamOp::Alt { .. } => (if need { arg.to_string() } else { String::new() }, none),
        ParamOp::RemovePrefix { longest } => {
            let mut order: Vec<usize> = cuts.clone();
            if longest {
                order.reverse();
            }
            let cut = order.into_iter().find(|&i| glob_match(arg, &v[..i]));
            (cut.map_or(v.clone(), |i| v[i..].to_string()), none)
        }
        ParamOp::RemoveSuffix { longest } => {
            let mut order: Vec<usize> = cuts.clone();
            if !longest {
                order.reverse();
            }
            let cut = order.into_iter().find(|&i| glob_match(arg, &v[i..]));
            (cut.map_or(v.clone(), |i| v[..i].to_string()), none)
        }
        ParamOp::Replace { all } => {
            let rep = arg2.unwrap_or("");
            let (pat, anchor) = match arg.as_bytes().first() {
                Some(b'#') => (&arg[1..], Some(true)),
                Some(b'%') => (&arg[1..], Some(false)),
                _ => (arg, None),
            };
            if pat.is_empty() && anchor.is_none() {
                return (v, none);
            }
            let mut out = String::new();
            let mut k = 0;
            let mut done = false;
            while k < cuts.len() {
                let i = cuts[k];
                let starts_ok = anchor != Some(true) || i == 0;
                let m = if done || !starts_ok {
                    None
                } else {
                    // The longest match starting at `i` (bash's rule).
                    cuts[k..].iter().rev().copied().find(|&j| j > i && (anchor != Some(false) || j == v.len()) && glob_match(pat, &v[i..j]))
                };
                match m {
                    Some(j) => {
                        out.push_str(rep);
                        done = !all;
                        k = cuts.iter().position(|&c| c == j).unwrap_or(cuts.len());
                        if j == v.len() {
                            break;
                        }
                    }
                    None => {
                        if let Some(c) = v.get(i..).and_then(|r| r.chars().next()) {
                            out.push(c);
                        }
                        k += 1;
                    }
                }
            }
            (out, none)
        }
        ParamOp::Case { upper, all } => {
            // bash's parameter_brace_casemod: each character (or the first) that matches
            // the pattern (any character when it is empty) changes case.
            let mut out = String::with_capacity(v.len());
            for (k, c) in v.chars().enumerate() {
                let hit = (all || k == 0) && (arg.is_empty() || glob_match(arg, c.encode_utf8(&mut [0; 4])));
                if !hit {
                    out.push(c);
                } else if upper {
                    out.extend(c.to_uppercase());
                } else {
                    out.extend(c.to_lowercase());
                }
            }
            (out, none)
        }
        // Looked up by the caller (they need the shell's variables): the value is passed in.
        ParamOp::Indirect | ParamOp::Names { .. } | ParamOp::Keys { .. } => (v, none),
        ParamOp::Substring => {
            let chars: Vec<char> = v.chars().collect();
            let n = chars.len() as i64;
            let mut off = num(arg);
            if off < 0 {
                off = (n + off).max(0);
            }
            if off > n {
                return (String::new(), none);
            }
            let end = match arg2 {
                None => n,
                Some(e) => {
                    let l = num(e);
                    if l < 0 {
                        n + l
                    } else {
                        (off.saturating_add(l)).min(n)
                    }
                }
            };
            if end <= off {
                return (String::new(), none);
            }
            (chars[off as usize..end as usize].iter().collect(), none)
        }
    }
}

/// Text of a literal (quoted) part as a glob pattern that matches it exactly.
fn escape_glob(s: &str, out: &mut String) {
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
}

fn is_ifs(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

impl Word {
    /// The word as one string, with no field splitting (for assignments, redirection
    /// targets, ...). Unset variables expand to "".
    pub fn expand(&self, lookup: &dyn Fn(&str) -> Option<String>) -> String {
        self.expand_with(lookup, &static_values(self, lookup))
    }

    /// [`Word::expand`] with the values of `$(...)` / `$((...))` parts given.
    pub fn expand_with(&self, lookup: &dyn Fn(&str) -> Option<String>, values: &PartValues) -> String {
        let mut out = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                WordPart::Lit(s) | WordPart::Glob(s) => out.push_str(s),
                WordPart::Var(name) | WordPart::QuotedVar(name) => {
                    if let Some(v) = lookup(name) {
                        out.push_str(&v);
                    }
                }
                WordPart::CmdSubst { .. } | WordPart::Arith { .. } | WordPart::Param { .. } | WordPart::ProcSubst(_) => {
                    if let Some(Some(v)) = values.get(i) {
                        out.push_str(v);
                    }
                }
                WordPart::Brace(alts) => out.push_str(&alts.join(" ")),
                WordPart::ArrayAll { name, .. } => {
                    if let Some(v) = lookup(&format!("{name}[@]")) {
                        out.push_str(&v.replace(ARRAY_SEP, " "));
                    }
                }
                WordPart::Array(words) => {
                    let vals: Vec<String> = words.iter().map(|(_, w)| w.expand(lookup)).collect();
                    out.push_str(&vals.join(" "));
                }
            }
        }
        out
    }

    /// The arguments this word becomes: unquoted variables are split on blanks; a word made
    /// only of unquoted variables that are empty or unset gives no argument at all.
    pub fn expand_fields(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
        let mut out = Vec::new();
        self.expand_fields_into(lookup, &mut out);
        out
    }

    fn expand_fields_into(&self, lookup: &dyn Fn(&str) -> Option<String>, out: &mut Vec<String>) {
        self.expand_fields_with(lookup, &static_values(self, lookup), out);
    }

    /// The fields of the word with the values of its `$(...)` / `$((...))` parts given (no
    /// pathname expansion).
    pub fn expand_fields_with(&self, lookup: &dyn Fn(&str) -> Option<String>, values: &PartValues, out: &mut Vec<String>) {
        self.expand_fields_glob(lookup, values, None, out);
    }

    /// [`Word::expand_fields_with`], then pathname expansion of the fields that have an
    /// unquoted glob character: `glob` gets the pattern (quoted characters escaped with `\`)
    /// and returns the matching names in order; none leaves the field as written.
    pub fn expand_fields_glob(&self, lookup: &dyn Fn(&str) -> Option<String>, values: &PartValues, glob: Option<&dyn Fn(&str) -> Vec<String>>, out: &mut Vec<String>) {
        // Brace expansion first: one word per alternative (left to right, nested braces in
        // the later parts vary fastest).
        if let Some(bi) = self.parts.iter().position(|p| matches!(p, WordPart::Brace(_))) {
            if let WordPart::Brace(alts) = &self.parts[bi] {
                for alt in alts {
                    let mut w = self.clone();
                    w.parts[bi] = if alt.contains(['*', '?', '[']) { WordPart::Glob(alt.clone()) } else { WordPart::Lit(alt.clone()) };
                    w.expand_fields_glob(lookup, values, glob, out);
                }
            }
            return;
        }
        let mut f = Fields { out, glob, cur: String::new(), pat: String::new(), globbed: false, started: false };
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                WordPart::Lit(s) => f.quoted(s),
                WordPart::Glob(s) => {
                    f.cur.push_str(s);
                    f.pat.push_str(s);
                    f.globbed = true;
                    f.started = true;
                }
                WordPart::QuotedVar(name) => f.quoted(&lookup(name).unwrap_or_default()),
                WordPart::Var(name) => f.split(&lookup(name).unwrap_or_default()),
                WordPart::Param { op: ParamOp::Names { at: true } | ParamOp::Keys { at: true }, quoted: true, .. } => {
                    // "${!PREFIX@}", "${!a[@]}": one field per name (joined by ARRAY_SEP).
                    let v = values.get(i).cloned().flatten().unwrap_or_default();
                    for (k, e) in v.split(ARRAY_SEP).filter(|e| !e.is_empty()).enumerate() {
                        if k > 0 {
                            f.end_field();
                        }
                        f.quoted(e);
                    }
                }
                WordPart::CmdSubst { quoted, .. } | WordPart::Arith { quoted, .. } | WordPart::Param { quoted, .. } => {
                    let v = values.get(i).cloned().flatten().unwrap_or_default();
                    let v = if v.contains(ARRAY_SEP) { v.replace(ARRAY_SEP, " ") } else { v };
                    if *quoted {
                        f.quoted(&v);
                    } else {
                        f.split(&v);
                    }
                }
                WordPart::ArrayAll { name, quoted } => {
                    let v = lookup(&format!("{name}[@]"));
                    let elems: Vec<&str> = match &v {
                        Some(v) if !v.is_empty() => v.split(ARRAY_SEP).collect(),
                        _ => Vec::new(),
                    };
                    if *quoted {
                        // "${a[@]}": each element one field; no elements, no field (unless
                        // other parts make one).
                        for (k, e) in elems.iter().enumerate() {
                            if k > 0 {
                                f.end_field();
                            }
                            f.quoted(e);
                        }
                    } else {
                        for e in elems {
                            f.split(&format!(" {e} "));
                        }
                    }
                }
                WordPart::ProcSubst(_) => f.quoted(&values.get(i).cloned().flatten().unwrap_or_default()),
                WordPart::Array(words) => {
                    for (_, w) in words {
                        f.quoted(&w.expand(lookup));
                    }
                }
                WordPart::Brace(_) => {}
            }
        }
        if f.started {
            f.end_field();
        }
    }
}

/// Fields being built: the text, its glob pattern, and whether an unquoted glob character
/// is in it.
struct Fields<'a> {
    out: &'a mut Vec<String>,
    glob: Option<&'a dyn Fn(&str) -> Vec<String>>,
    cur: String,
    pat: String,
    globbed: bool,
    /// Whether `cur` is a field already (it may be empty, e.g. from `""`).
    started: bool,
}

impl Fields<'_> {
    fn quoted(&mut self, s: &str) {
        self.cur.push_str(s);
        escape_glob(s, &mut self.pat);
        self.started = true;
    }

    /// A piece of an unquoted expansion's value: after splitting, its `*`, `?` and `[`
    /// make the field a pattern, as bash's expand_word_list_internal globs every field.
    fn unquoted(&mut self, s: &str) {
        self.cur.push_str(s);
        self.pat.push_str(s);
        if s.contains(['*', '?', '[']) {
            self.globbed = true;
        }
        self.started = true;
    }

    fn end_field(&mut self) {
        let text = std::mem::take(&mut self.cur);
        let pat = std::mem::take(&mut self.pat);
        if self.globbed {
            if let Some(g) = self.glob {
                let names = g(&pat);
                if !names.is_empty() {
                    self.out.extend(names);
                    self.globbed = false;
                    self.started = false;
                    return;
                }
            }
        }
        self.globbed = false;
        self.started = false;
        self.out.push(text);
    }

    /// An unquoted value: split on blanks.
    fn split(&mut self, v: &str) {
        if v.is_empty() {
            return;
        }
        let starts_blank = v.starts_with(is_ifs);
        let ends_blank = v.ends_with(is_ifs);
        let mut pieces = v.split(is_ifs).filter(|s| !s.is_empty()).peekable();
        if pieces.peek().is_none() {
            // Only blanks: they separate what comes before from what follows.
            if self.started {
                self.end_field();
            }
            return;
        }
        if starts_blank && self.started {
            self.end_field();
        }
        let mut first = true;
        for piece in pieces {
            if !first {
                self.end_field();
            }
            first = false;
            self.unquoted(piece);
        }
        self.started = true;
        if ends_blank {
            self.end_field();
        }
    }
}

/// Expand a command's words into its arguments (see [`Word::expand_fields`]).
pub fn expand_words(words: &[Word], lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        w.expand_fields_into(lookup, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::ast::Span;
    use super::*;

    fn w(parts: Vec<WordPart>) -> Word {
        Word { parts, span: Span::new(1, 1) }
    }
    fn lit(s: &str) -> WordPart {
        WordPart::Lit(s.into())
    }
    fn var(s: &str) -> WordPart {
        WordPart::Var(s.into())
    }
    fn qvar(s: &str) -> WordPart {
        WordPart::QuotedVar(s.into())
    }
    fn env(name: &str) -> Option<String> {
        match name {
            "A" => Some("1 2".into()),
            "B" => Some(" x  y ".into()),
            "E" => Some(String::new()),
            "S" => Some("   ".into()),
            "P" => Some("/tmp/dir".into()),
            "?" => Some("0".into()),
            _ => None,
        }
    }

    #[test]
    fn expand_joins_without_splitting() {
        assert_eq!(w(vec![lit("of="), var("P"), lit("/f")]).expand(&env), "of=/tmp/dir/f");
        assert_eq!(w(vec![var("A")]).expand(&env), "1 2");
        assert_eq!(w(vec![var("UNSET"), lit("x")]).expand(&env), "x");
        assert_eq!(w(vec![var("?")]).expand(&env), "0");
    }

    #[test]
    fn unquoted_vars_split() {
        assert_eq!(w(vec![var("A")]).expand_fields(&env), vec!["1", "2"]);
        assert_eq!(w(vec![lit("a"), var("A"), lit("b")]).expand_fields(&env), vec!["a1", "2b"]);
        assert_eq!(w(vec![lit("a"), var("B"), lit("b")]).expand_fields(&env), vec!["a", "x", "y", "b"]);
        assert_eq!(w(vec![lit("a"), var("S"), lit("b")]).expand_fields(&env), vec!["a", "b"]);
        assert_eq!(w(vec![var("S")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![var("B")]).expand_fields(&env), vec!["x", "y"]);
    }

    #[test]
    fn quoted_vars_stay_one_field() {
        assert_eq!(w(vec![qvar("A")]).expand_fields(&env), vec!["1 2"]);
        assert_eq!(w(vec![qvar("UNSET")]).expand_fields(&env), vec![""]);
        assert_eq!(w(vec![lit("")]).expand_fields(&env), vec![""]);
    }

    #[test]
    fn empty_unquoted_vars_vanish() {
        assert_eq!(w(vec![var("E")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![var("UNSET"), var("E")]).expand_fields(&env), Vec::<String>::new());
        assert_eq!(w(vec![lit(""), var("E")]).expand_fields(&env), vec![""]);
        let words = vec![w(vec![lit("echo")]), w(vec![var("E")]), w(vec![var("A")]), w(vec![qvar("E")])];
        assert_eq!(expand_words(&words, &env), vec!["echo", "1", "2", ""]);
    }
}

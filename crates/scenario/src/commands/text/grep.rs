//! grep (GNU grep 3): basic (-G, the default), extended (-E) and fixed (-F) patterns with
//! -v -c -i -w -x -o -q -n -l -h -H -m -s -e, one or more files or standard input.

use super::lines::getopt;
use super::{Ctx, Filter, FilterProg, Input, Reader};
use crate::commands::Cmd;
use regex::bytes::{Regex, RegexBuilder};

/// A POSIX basic regular expression in the regex crate's syntax: `\( \) \{ \} \| \+ \?`
/// are the operators and the bare characters literals; `*` first is literal; `\< \>` are
/// word boundaries.
pub(super) fn bre_to_regex(p: &str) -> String {
    let mut out = String::new();
    let c: Vec<char> = p.chars().collect();
    let mut i = 0;
    let mut in_bracket = false;
    while i < c.len() {
        let ch = c[i];
        if in_bracket {
            out.push(ch);
            if ch == '[' && c.get(i + 1) == Some(&':') {
                // [:class:]
                if let Some(end) = c[i..].iter().collect::<String>().find(":]") {
                    let cls: String = c[i + 1..i + end + 2].iter().collect();
                    out.push_str(&cls);
                    i += end + 2;
                    continue;
                }
            }
            if ch == ']' {
                in_bracket = false;
            }
            i += 1;
            continue;
        }
        match ch {
            '\\' if i + 1 < c.len() => {
                let n = c[i + 1];
                match n {
                    '(' | ')' | '{' | '}' | '|' | '+' | '?' => out.push(n),
                    '<' | '>' => out.push_str("\\b"),
                    c2 => {
                        out.push('\\');
                        out.push(c2);
                    }
                }
                i += 2;
                continue;
            }
            '(' | ')' | '{' | '}' | '|' | '+' | '?' => {
                out.push('\\');
                out.push(ch);
            }
            '*' if out.is_empty() || out.ends_with('(') || out.ends_with('|') => out.push_str("\\*"),
            '[' => {
                in_bracket = true;
                out.push('[');
                // `[]...]` and `[^]...]`: a leading ] is literal.
                if c.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if c.get(i + 1) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            _ => out.push(ch),
        }
        i += 1;
    }
    out
}

/// ERE: `\<`, `\>` as word boundaries; `{` not followed by a count is literal.
pub(super) fn ere_to_regex(p: &str) -> String {
    let mut out = String::new();
    let c: Vec<char> = p.chars().collect();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '\\' if matches!(c.get(i + 1), Some('<' | '>')) => {
                out.push_str("\\b");
                i += 2;
                continue;
            }
            '\\' if i + 1 < c.len() => {
                out.push('\\');
                out.push(c[i + 1]);
                i += 2;
                continue;
            }
            '{' if !c.get(i + 1).is_some_and(|d| d.is_ascii_digit() || *d == ',') => out.push_str("\\{"),
            ch => out.push(ch),
        }
        i += 1;
    }
    out
}

struct Grep {
    re: Regex,
    invert: bool,
    count: bool,
    only: bool,
    quiet: bool,
    number: bool,
    files_with: bool,
    prefix: bool,
    max: Option<u64>,
    // state
    name: Option<String>,
    line_no: u64,
    matches: u64,
    total: u64,
    partial: Vec<u8>,
    listed: bool,
}

pub fn build(name: &str, args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    let long = [
        ("extended-regexp", 'E'),
        ("fixed-strings", 'F'),
        ("basic-regexp", 'G'),
        ("invert-match", 'v'),
        ("count", 'c'),
        ("ignore-case", 'i'),
        ("word-regexp", 'w'),
        ("line-regexp", 'x'),
        ("only-matching", 'o'),
        ("quiet", 'q'),
        ("silent", 'q'),
        ("line-number", 'n'),
        ("files-with-matches", 'l'),
        ("no-filename", 'h'),
        ("with-filename", 'H'),
        ("max-count", 'm'),
        ("no-messages", 's'),
        ("regexp", 'e'),
        ("color", 'C'),
        ("colour", 'C'),
    ];
    let (opts, mut ops) = getopt("grep", args, "EFGvciwxoqnlhHsCa", "em", &long)?;
    let has = |c: char| opts.iter().any(|(o, _)| *o == c);
    let mut mode = match name {
        "egrep" => 'E',
        "fgrep" => 'F',
        _ => 'G',
    };
    for (o, _) in &opts {
        if matches!(o, 'E' | 'F' | 'G') {
            mode = *o;
        }
    }
    let mut patterns: Vec<String> = opts.iter().filter(|(o, _)| *o == 'e').filter_map(|(_, v)| v.clone()).collect();
    if patterns.is_empty() {
        if ops.is_empty() {
            return Err("grep: no pattern given (usage: grep [OPTION]... PATTERNS [FILE]...)".into());
        }
        patterns.push(ops.remove(0));
    }
    // A pattern with newlines is several patterns.
    let patterns: Vec<String> = patterns.iter().flat_map(|p| p.split('\n').map(str::to_string).collect::<Vec<_>>()).collect();
    let parts: Vec<String> = patterns
        .iter()
        .map(|p| match mode {
            'F' => regex::escape(p),
            'E' => ere_to_regex(p),
            _ => bre_to_regex(p),
        })
        .map(|p| {
            if has('x') {
                format!("^(?:{p})$")
            } else if has('w') {
                format!("\\b(?:{p})\\b")
            } else {
                format!("(?:{p})")
            }
        })
        .collect();
    let re = RegexBuilder::new(&parts.join("|"))
        .case_insensitive(has('i'))
        .unicode(false)
        .build()
        .map_err(|e| format!("grep: invalid pattern '{}': {}", patterns.join("\\n"), e.to_string().lines().last().unwrap_or("")))?;
    let max = match opts.iter().find(|(o, _)| *o == 'm') {
        Some((_, v)) => Some(v.clone().unwrap_or_default().parse::<u64>().map_err(|_| "grep: invalid max count".to_string())?),
        None => None,
    };
    let prefix = (ops.len() > 1 || has('H')) && !has('h');
    let g = Grep {
        re,
        invert: has('v'),
        count: has('c'),
        only: has('o'),
        quiet: has('q'),
        number: has('n'),
        files_with: has('l'),
        prefix,
        max,
        name: None,
        line_no: 0,
        matches: 0,
        total: 0,
        partial: Vec::new(),
        listed: false,
    };
    let mut p = FilterProg::new("grep", Reader::new(&ops, ctx, stdin), Box::new(g)).error_status(2);
    if has('s') {
        p = p.quiet_errors();
    }
    Ok(Box::new(p))
}

impl Grep {
    /// One line; `false` when grep stops reading (-q matched, -m reached, -l listed).
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        self.line_no += 1;
        let hit = self.re.is_match(line) != self.invert;
        if !hit {
            return true;
        }
        self.matches += 1;
        self.total += 1;
        if self.quiet {
            return false;
        }
        if self.files_with {
            if !self.listed {
                self.listed = true;
                out.extend_from_slice(self.name.as_deref().unwrap_or("(standard input)").as_bytes());
                out.push(b'\n');
            }
            return false;
        }
        if !self.count {
            let pre = |out: &mut Vec<u8>, g: &Grep| {
                if g.prefix {
                    out.extend_from_slice(g.name.as_deref().unwrap_or("(standard input)").as_bytes());
                    out.push(b':');
                }
                if g.number {
                    out.extend_from_slice(format!("{}:", g.line_no).as_bytes());
                }
            };
            if self.only && !self.invert {
                for m in self.re.find_iter(line) {
                    if m.as_bytes().is_empty() {
                        continue;
                    }
                    pre(out, self);
                    out.extend_from_slice(m.as_bytes());
                    out.push(b'\n');
                }
            } else if !self.only {
                pre(out, self);
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        !self.max.is_some_and(|m| self.matches >= m)
    }

    fn end_file(&mut self, out: &mut Vec<u8>) {
        if !self.partial.is_empty() {
            let l = std::mem::take(&mut self.partial);
            self.line(&l, out);
        }
        if self.count && !self.quiet && !self.files_with {
            if self.prefix {
                out.extend_from_slice(self.name.as_deref().unwrap_or("(standard input)").as_bytes());
                out.push(b':');
            }
            out.extend_from_slice(format!("{}\n", self.matches).as_bytes());
        }
        self.matches = 0;
        self.line_no = 0;
        self.listed = false;
    }
}

impl Filter for Grep {
    fn begin_operand(&mut self, name: Option<&str>, _out: &mut Vec<u8>) {
        self.name = name.map(str::to_string);
    }
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        let mut start = 0;
        for (i, &b) in d.iter().enumerate() {
            if b == b'\n' {
                let go = if self.partial.is_empty() {
                    self.line(&d[start..i], out)
                } else {
                    self.partial.extend_from_slice(&d[start..i]);
                    let l = std::mem::take(&mut self.partial);
                    self.line(&l, out)
                };
                start = i + 1;
                if !go {
                    self.partial.clear();
                    self.end_file(out);
                    return false;
                }
            }
        }
        self.partial.extend_from_slice(&d[start..]);
        true
    }
    fn end_operand(&mut self, name: Option<&str>, out: &mut Vec<u8>) {
        if self.name.is_none() {
            self.name = name.map(str::to_string);
        }
        self.end_file(out);
        self.name = None;
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if !self.partial.is_empty() || (self.line_no > 0 && self.count) {
            self.end_file(out);
        }
        i32::from(self.total == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bre_translation() {
        assert_eq!(bre_to_regex("a\\(b\\)*c"), "a(b)*c");
        assert_eq!(bre_to_regex("a+b?(c)"), "a\\+b\\?\\(c\\)");
        assert_eq!(bre_to_regex("*x"), "\\*x");
        assert_eq!(bre_to_regex("Dirty\\|Writeback"), "Dirty|Writeback");
        assert_eq!(bre_to_regex("[[:digit:]]\\{2\\}"), "[[:digit:]]{2}");
        assert_eq!(ere_to_regex("a{x"), "a\\{x");
    }
}

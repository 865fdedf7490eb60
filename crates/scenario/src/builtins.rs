//! The shell's own tests: `test` / `[ ]` and `[[ ]]` (bash's test.c and its extended
//! conditional), and glob patterns for `case` and `[[ == ]]` (fnmatch).

use memtwin_kernel::Kernel;
use std::collections::HashMap;

/// What a path is, for -e/-f/-d/-s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Missing,
    File { size: u64 },
    Dir,
    Device,
}

pub fn file_kind(k: &Kernel, abs: &str, captures: &HashMap<String, u32>) -> FileKind {
    if crate::commands::text::is_proc_file(k, abs) {
        return FileKind::File { size: 0 };
    }
    if matches!(abs, "/dev/null" | "/dev/zero" | "/dev/urandom" | "/dev/random") || (abs.starts_with("/dev/") && k.block.find(&abs[5..]).is_some()) {
        return FileKind::Device;
    }
    if k.fs.is_dir(abs) {
        return FileKind::Dir;
    }
    match k.sys_stat(abs) {
        Ok(st) => {
            let _ = captures;
            FileKind::File { size: st.size }
        }
        Err(_) => FileKind::Missing,
    }
}

/// fnmatch(3) without flags: `*`, `?`, `[...]` (with `!`/`^` and ranges), `\x`.
pub fn glob_match(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    // Iterative matching with backtracking to the last `*`.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = bracket(&p, pi, t[ti]) {
                        if matched {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                '\\' if pi + 1 < p.len() => {
                    if p[pi + 1] == t[ti] {
                        pi += 2;
                        ti += 1;
                        continue;
                    }
                }
                c => {
                    if c == t[ti] {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// A bracket expression at `p[i] == '['`: (matches c, index after it), or None if unclosed.
fn bracket(p: &[char], i: usize, c: char) -> Option<(bool, usize)> {
    let mut j = i + 1;
    let neg = matches!(p.get(j), Some('!' | '^'));
    if neg {
        j += 1;
    }
    let mut matched = false;
    let mut first = true;
    while j < p.len() {
        if p[j] == ']' && !first {
            return Some((matched != neg, j + 1));
        }
        first = false;
        if p[j] == '[' && p.get(j + 1) == Some(&':') {
            let rest: String = p[j..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let class = &rest[2..end];
                let ok = match class {
                    "digit" => c.is_ascii_digit(),
                    "alpha" => c.is_alphabetic(),
                    "alnum" => c.is_alphanumeric(),
                    "upper" => c.is_uppercase(),
                    "lower" => c.is_lowercase(),
                    "space" => c.is_whitespace(),
                    "punct" => c.is_ascii_punctuation(),
                    "xdigit" => c.is_ascii_hexdigit(),
                    _ => false,
                };
                matched |= ok;
                j += rest[..end + 2].chars().count();
                continue;
            }
        }
        if j + 2 < p.len() && p[j + 1] == '-' && p[j + 2] != ']' {
            if p[j] <= c && c <= p[j + 2] {
                matched = true;
            }
            j += 3;
            continue;
        }
        if p[j] == c {
            matched = true;
        }
        j += 1;
    }
    None
}

fn int_arg(s: &str) -> Result<i64, String> {
    s.trim().parse::<i64>().map_err(|_| format!("{s}: integer expression expected"))
}

fn unary(op: &str, a: &str, kind: &dyn Fn(&str) -> FileKind) -> Option<bool> {
    Some(match op {
        "-z" => a.is_empty(),
        "-n" => !a.is_empty(),
        "-e" | "-a" => kind(a) != FileKind::Missing,
        "-f" => matches!(kind(a), FileKind::File { .. }),
        "-d" => kind(a) == FileKind::Dir,
        "-s" => match kind(a) {
            FileKind::File { size } => size > 0,
            FileKind::Dir | FileKind::Device => true,
            FileKind::Missing => false,
        },
        "-r" | "-w" => kind(a) != FileKind::Missing,
        "-x" => kind(a) == FileKind::Dir,
        "-b" | "-c" => kind(a) == FileKind::Device,
        "-L" | "-h" | "-p" | "-S" => false,
        _ => return None,
    })
}

fn binary(op: &str, a: &str, b: &str, ext: bool) -> Result<Option<bool>, String> {
    Ok(Some(match op {
        "=" | "==" => {
            if ext {
                glob_match(b, a)
            } else {
                a == b
            }
        }
        "!=" => {
            if ext {
                !glob_match(b, a)
            } else {
                a != b
            }
        }
        "<" => a < b,
        ">" => a > b,
        "=~" if ext => {
            let re = regex::Regex::new(b).map_err(|_| format!("{b}: invalid regular expression"))?;
            re.is_match(a)
        }
        "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
            let (x, y) = (int_arg(a)?, int_arg(b)?);
            match op {
                "-eq" => x == y,
                "-ne" => x != y,
                "-lt" => x < y,
                "-le" => x <= y,
                "-gt" => x > y,
                _ => x >= y,
            }
        }
        "-nt" | "-ot" | "-ef" => return Err(format!("{op}: comparing files is not supported")),
        _ => return Ok(None),
    }))
}

/// `test` / `[`: POSIX rules by argument count, then -a/-o/!/( ) for longer expressions.
pub fn eval_test(args: &[String], kind: &dyn Fn(&str) -> FileKind) -> Result<bool, String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    eval_or(&a, kind, false)
}

/// `[[ ... ]]`: `&&`, `||`, `!`, `( )`, `==`/`!=` with glob patterns, `=~`, `<`, `>`.
pub fn eval_dbracket(args: &[String], kind: &dyn Fn(&str) -> FileKind) -> Result<bool, String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    eval_or(&a, kind, true)
}

fn split_top<'a>(a: &[&'a str], ops: &[&str]) -> Option<usize> {
    let mut depth = 0;
    for (i, w) in a.iter().enumerate().rev() {
        match *w {
            ")" => depth += 1,
            "(" => depth -= 1,
            w if depth == 0 && ops.contains(&w) && i > 0 && i + 1 < a.len() => return Some(i),
            _ => {}
        }
    }
    None
}

fn eval_or(a: &[&str], kind: &dyn Fn(&str) -> FileKind, ext: bool) -> Result<bool, String> {
    // Short forms first (so that `[ -n -o ]`-like edge cases follow the count rules).
    match a.len() {
        0 => return Ok(false),
        1 => return Ok(!a[0].is_empty()),
        2 => {
            if a[0] == "!" {
                return Ok(a[1].is_empty());
            }
            return unary(a[0], a[1], kind).ok_or_else(|| format!("{}: unary operator expected", a[0]));
        }
        3 => {
            if let Some(r) = binary(a[1], a[0], a[2], ext)? {
                return Ok(r);
            }
            if a[0] == "!" {
                return Ok(!eval_or(&a[1..], kind, ext)?);
            }
            if a[0] == "(" && a[2] == ")" {
                return Ok(!a[1].is_empty());
            }
        }
        _ => {}
    }
    let (or, and): (&[&str], &[&str]) = if ext { (&["||"], &["&&"]) } else { (&["-o"], &["-a"]) };
    if let Some(i) = split_top(a, or) {
        return Ok(eval_or(&a[..i], kind, ext)? || eval_or(&a[i + 1..], kind, ext)?);
    }
    if let Some(i) = split_top(a, and) {
        return Ok(eval_or(&a[..i], kind, ext)? && eval_or(&a[i + 1..], kind, ext)?);
    }
    if a[0] == "!" {
        return Ok(!eval_or(&a[1..], kind, ext)?);
    }
    if a[0] == "(" && a[a.len() - 1] == ")" {
        return eval_or(&a[1..a.len() - 1], kind, ext);
    }
    if a.len() == 3 {
        return Err(format!("{}: binary operator expected", a[1]));
    }
    Err("too many arguments".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> FileKind {
        FileKind::Missing
    }
    fn t(s: &str) -> Result<bool, String> {
        eval_test(&s.split(' ').map(str::to_string).collect::<Vec<_>>(), &none)
    }
    fn d(s: &str) -> Result<bool, String> {
        eval_dbracket(&s.split(' ').map(str::to_string).collect::<Vec<_>>(), &none)
    }

    #[test]
    fn globs() {
        assert!(glob_match("*.txt", "a.txt"));
        assert!(!glob_match("*.txt", "a.txt.bak"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("[!a-c]x", "bx"));
        assert!(glob_match("*", ""));
        assert!(glob_match("start|stop", "start|stop"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
    }

    #[test]
    fn tests() {
        assert_eq!(t("1 -lt 2"), Ok(true));
        assert_eq!(t("a = b"), Ok(false));
        assert_eq!(t("-z "), Ok(true));
        assert_eq!(t("! -f /nope"), Ok(true));
        assert_eq!(t("1 -eq 1 -a 2 -gt 3"), Ok(false));
        assert!(t("x -lt 2").unwrap_err().contains("integer expression expected"));
        assert_eq!(d("abc == a*"), Ok(true));
        assert_eq!(d("abc =~ ^a.c$"), Ok(true));
        assert_eq!(d("1 -lt 2 && 3 -gt 4"), Ok(false));
        assert_eq!(d("1 -lt 2 || 3 -gt 4"), Ok(true));
    }
}

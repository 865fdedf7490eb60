//! Size strings, as dd(1), mount(8) and free(1) users write them.
//!
//! Units are binary and case-insensitive: `K` = 1024, `M` = 1024², `G`, `T`, `P`, `E`; the
//! spellings `K`, `KB` and `KiB` all mean 1024 (as in dd's `bs=` and tmpfs's `size=`), so
//! `128MB` is 128 MiB, not 128 000 000. A plain number is a byte count; a trailing `B` is allowed
//! ("4096B"). Fractions are allowed with a unit ("1.9G") and rounded to the nearest byte.

/// What a size string may look like, for error messages.
const ACCEPTED: &str = "expected a byte count or a number with a unit K, M, G, T, P, E \
                        (powers of 1024; KB/KiB etc. mean the same), e.g. 4096, 512K, 1.9G, 16GiB";

/// Multiplier of a unit suffix (without the optional trailing "B"/"iB").
fn unit_multiplier(unit: &str) -> Option<u64> {
    let u = unit.to_ascii_lowercase();
    let prefix = if let Some(p) = u.strip_suffix("ib") {
        // "KiB", "MiB": the "i" needs a prefix letter before it.
        if p.is_empty() {
            return None;
        }
        p
    } else if let Some(p) = u.strip_suffix('b') {
        p
    } else {
        u.as_str()
    };
    let shift = match prefix {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        "e" => 60,
        _ => return None,
    };
    Some(1u64 << shift)
}

/// Parse a size string into bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(format!("empty size: {ACCEPTED}"));
    }
    let bad = || format!("invalid size '{s}': {ACCEPTED}");
    if t.starts_with('-') {
        return Err(format!(
            "invalid size '{s}': a size cannot be negative; {ACCEPTED}"
        ));
    }
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(num_end);
    let unit = unit.trim_start();
    let mult = unit_multiplier(unit).ok_or_else(bad)?;

    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    if int_part.is_empty() && matches!(frac_part, None | Some("")) {
        return Err(bad());
    }
    if frac_part.is_some_and(|f| f.contains('.')) {
        return Err(bad());
    }
    let too_big = || format!("size '{s}' is too large (at most {} bytes)", u64::MAX);

    // value = (int_part + frac_part / 10^k) * mult, computed exactly in u128 and rounded.
    let mut int_val: u128 = 0;
    for c in int_part.bytes() {
        int_val = int_val
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(c - b'0')))
            .ok_or_else(too_big)?;
        if int_val > u128::from(u64::MAX) {
            return Err(too_big());
        }
    }
    let whole = int_val.checked_mul(u128::from(mult)).ok_or_else(too_big)?;
    let mut bytes = whole;
    if let Some(f) = frac_part {
        if !f.is_empty() {
            if mult == 1 && f.bytes().any(|c| c != b'0') {
                return Err(format!(
                    "invalid size '{s}': a byte count must be a whole number; {ACCEPTED}"
                ));
            }
            // Digits beyond 19 cannot change the result by a whole byte below 2^64 * 10^-19.
            let digits = &f[..f.len().min(19)];
            let mut frac: u128 = 0;
            for c in digits.bytes() {
                frac = frac * 10 + u128::from(c - b'0');
            }
            let denom = 10u128.pow(digits.len() as u32);
            // frac < denom <= 10^19 and mult <= 2^60: the product fits in u128.
            let part = (frac * u128::from(mult) + denom / 2) / denom;
            bytes = bytes.checked_add(part).ok_or_else(too_big)?;
        }
    }
    u64::try_from(bytes).map_err(|_| too_big())
}

/// A short human size for descriptions and messages: "1.9G", "512M", "4K", "100" (bytes).
/// Whole multiples print exactly ("20G"); others with one decimal below 10 ("1.9G") and
/// rounded above ("150M"). `parse_size` reads every result back (approximately).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 6] = [
        (1 << 60, "E"),
        (1 << 50, "P"),
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    for &(unit, suffix) in &UNITS {
        if bytes >= unit {
            if bytes & (unit - 1) == 0 {
                return format!("{}{suffix}", bytes / unit);
            }
            let v = bytes as f64 / unit as f64;
            let s = if v < 9.95 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            };
            let s = s.strip_suffix(".0").map(str::to_string).unwrap_or(s);
            return format!("{s}{suffix}");
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: u64 = 1024;
    const M: u64 = 1024 * K;
    const G: u64 = 1024 * M;
    const T: u64 = 1024 * G;

    #[test]
    fn accepts_the_usual_spellings() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4096B"), Ok(4096));
        assert_eq!(parse_size("512K"), Ok(512 * K));
        assert_eq!(parse_size("512k"), Ok(512 * K));
        assert_eq!(parse_size("16GiB"), Ok(16 * G));
        assert_eq!(parse_size("128MB"), Ok(128 * M));
        assert_eq!(parse_size("128MiB"), Ok(128 * M));
        assert_eq!(parse_size("128mb"), Ok(128 * M));
        assert_eq!(parse_size("2g"), Ok(2 * G));
        assert_eq!(parse_size("1T"), Ok(T));
        assert_eq!(parse_size(" 16 GiB "), Ok(16 * G));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("2.K"), Ok(2048));
        assert_eq!(parse_size("1.9G"), Ok((1.9 * G as f64).round() as u64));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("4128760K"), Ok(4128760 * K));
        assert_eq!(parse_size("15E"), Ok(15 << 60));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn rejects_nonsense_saying_what_is_accepted() {
        for bad in [
            "12QB", "", "  ", "-1", "1.5.3G", "G", "K1", "1KK", "iB", "1 iB", "1e9", ".", "0x10",
            "+5",
        ] {
            let e = parse_size(bad).expect_err(bad);
            assert!(e.contains("e.g. 4096, 512K"), "{bad}: {e}");
        }
        assert!(parse_size("12QB")
            .unwrap_err()
            .starts_with("invalid size '12QB'"));
        assert!(parse_size("-1").unwrap_err().contains("negative"));
        assert!(parse_size("1.5").unwrap_err().contains("whole number"));
        assert!(parse_size("16E").unwrap_err().contains("too large"));
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("99999999999999999999999999999999999999999T")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("17179869184G")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn formats_short_sizes() {
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(100), "100");
        assert_eq!(format_size(1536), "1.5K");
        assert_eq!(format_size(512 * M), "512M");
        assert_eq!(format_size(20 * G), "20G");
        assert_eq!(format_size(1924020 * K), "1.8G");
        assert_eq!(format_size(4128760 * K), "3.9G");
        assert_eq!(format_size((1.9 * G as f64) as u64), "1.9G");
        assert_eq!(format_size(150 * M + 1), "150M");
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in ".{0,40}") {
            let _ = parse_size(&s);
        }

        #[test]
        fn parse_never_panics_on_sizeish(s in "[-+ .0-9]{0,25}[kKmMgGtTpPeEiIbBqQ]{0,4}") {
            let _ = parse_size(&s);
        }

        #[test]
        fn format_then_parse_is_close(b in 0u64..(15u64 << 60)) {
            let s = format_size(b);
            let back = parse_size(&s).map_err(|e| TestCaseError::fail(format!("{s}: {e}")))?;
            // One decimal below 10 units, whole units above: within 5% (or exact under 1K).
            let diff = (back as f64 - b as f64).abs();
            prop_assert!(diff <= b as f64 * 0.05 + 0.5, "{} -> {} -> {}", b, s, back);
        }
    }
}

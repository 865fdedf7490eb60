//! util-linux's libsmartcols table output (swapon --show, fincore, zramctl): every column
//! as wide as its widest cell or header, one space between columns, left- or
//! right-aligned, no trailing spaces after the last column.

/// `right[i]`: column i is right-aligned (numbers).
pub fn smartcols(headers: &[&str], right: &[bool], rows: &[Vec<String>]) -> String {
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for i in 0..n {
            let c = cells.get(i).copied().unwrap_or("");
            if i > 0 {
                s.push(' ');
            }
            if right[i] {
                s.push_str(&format!("{c:>width$}", width = w[i]));
            } else if i + 1 == n {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<width$}", width = w[i]));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(headers);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(|c| c.as_str()).collect();
        out.push_str(&line(&cells));
    }
    out
}

/// util-linux size_to_human_string (SIZE_SUFFIX_1LETTER): "4G", "1.5G", "512M", "0B".
pub fn size_to_human(bytes: u64) -> String {
    let letters = ['B', 'K', 'M', 'G', 'T', 'P', 'E'];
    let mut exp = 0;
    while exp + 1 < letters.len() && bytes >= 1u64 << (10 * (exp + 1)) {
        exp += 1;
    }
    if exp == 0 {
        return format!("{bytes}B");
    }
    let shift = 10 * exp as u32;
    let dec = bytes >> shift;
    let frac = bytes - (dec << shift);
    // The fraction in hundredths, rounded to one decimal as util-linux does.
    let mut frac100 = ((frac as u128 * 100) >> shift) as u64;
    let mut dec = dec;
    if frac100 % 10 >= 5 {
        frac100 += 10 - frac100 % 10;
    }
    let mut tenth = frac100 / 10;
    if tenth == 10 {
        dec += 1;
        tenth = 0;
    }
    if tenth == 0 {
        format!("{dec}{}", letters[exp])
    } else {
        format!("{dec}.{tenth}{}", letters[exp])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn widths_follow_the_cells() {
        let t = smartcols(&["NAME", "TYPE", "SIZE", "USED", "PRIO"], &[false, false, true, true, true], &[vec!["/swapfile".into(), "file".into(), "2G".into(), "0B".into(), "-2".into()]]);
        assert_eq!(t, "NAME      TYPE SIZE USED PRIO\n/swapfile file   2G   0B   -2\n");
    }
    #[test]
    fn human_sizes() {
        assert_eq!(size_to_human(2 << 30), "2G");
        assert_eq!(size_to_human(0), "0B");
        assert_eq!(size_to_human(1536 << 20), "1.5G");
        assert_eq!(size_to_human(536866816), "512M");
        assert_eq!(size_to_human(4096), "4K");
    }
}

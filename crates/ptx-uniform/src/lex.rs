//! The text of PTX: comments, labels, operand lists, integer literals.

/// The lines without `//` and `/* */` comments.
pub(crate) fn strip_comments(ptx: &str) -> Vec<String> {
    let mut in_block = false;
    ptx.lines()
        .map(|line| {
            let mut out = String::new();
            let mut rest = line;
            loop {
                if in_block {
                    match rest.find("*/") {
                        Some(e) => {
                            rest = &rest[e + 2..];
                            in_block = false;
                        }
                        None => break,
                    }
                } else {
                    let line_c = rest.find("//");
                    let block_c = rest.find("/*");
                    match (line_c, block_c) {
                        (Some(l), Some(b)) if b < l => {
                            out.push_str(&rest[..b]);
                            rest = &rest[b + 2..];
                            in_block = true;
                        }
                        (None, Some(b)) => {
                            out.push_str(&rest[..b]);
                            rest = &rest[b + 2..];
                            in_block = true;
                        }
                        (Some(l), _) => {
                            out.push_str(&rest[..l]);
                            break;
                        }
                        (None, None) => {
                            out.push_str(rest);
                            break;
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// The length of the label at the start of `s` (before its `:`).
pub(crate) fn label_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_alphabetic() || matches!(first, b'_' | b'$' | b'%')) {
        return None;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'$')) {
        i += 1;
    }
    let name_end = i;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    (i < b.len() && b[i] == b':' && b.get(i + 1) != Some(&b':'))
        .then_some(name_end + (i - name_end))
}

/// Splits operands at top-level commas.
pub(crate) fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// An integer literal of PTX (decimal, hex, octal, binary; an optional `-` and `U`).
pub(crate) fn int_literal(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_suffix('U').unwrap_or(s);
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>().ok()?
    } else {
        return None;
    };
    let v = v as i64;
    Some(if neg { v.wrapping_neg() } else { v })
}

//! The kernel's number parsers that mount options go through: `memparse`
//! (sizes with a K/M/G/... suffix) and `kstrtouint`. Pure text: must not
//! know any option.

/// The kernel's `memparse`: `simple_strtoull(s, 0)` (decimal, `0x` hex,
/// leading-0 octal) then an optional K/M/G/T/P/E suffix (either case);
/// returns the value and the rest of the text.
pub fn memparse(s: &str) -> Option<(u64, &str)> {
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 && radix != 8 {
        return None;
    }
    let v = if end == 0 {
        0
    } else {
        u64::from_str_radix(&digits[..end], radix).ok()?
    };
    let rest = &digits[end..];
    let shift = match rest.chars().next() {
        Some('k' | 'K') => 10,
        Some('m' | 'M') => 20,
        Some('g' | 'G') => 30,
        Some('t' | 'T') => 40,
        Some('p' | 'P') => 50,
        Some('e' | 'E') => 60,
        _ => return Some((v, rest)),
    };
    Some((
        v.checked_shl(shift).filter(|x| x >> shift == v)?,
        &rest[1..],
    ))
}

/// `kstrtouint(s, 0)`: decimal, `0x` hex, a leading `0` octal; an optional
/// trailing newline is not accepted here (mount options have none).
pub(super) fn c_uint(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return None;
    }
    u32::from_str_radix(digits, radix).ok().map(u64::from)
}

//! A syntax error in an expression (where and what) and the "did you mean"
//! a message gives for a misspelt name. Must not parse.

/// A syntax error: byte offset into the expression text and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at character {})", .offset + 1)]
pub struct SyntaxError {
    /// 0-based character offset in the expression.
    pub offset: usize,
    /// What was expected.
    pub message: String,
}

/// `, did you mean `x`?` for the closest candidate within edit distance 3
/// (of two as close, the one that starts as `word` does: `sdd` is `ssd`,
/// not `hdd`), else "".
pub fn suggest(word: &str, candidates: &[&str]) -> String {
    let first = word.chars().next();
    let best = candidates
        .iter()
        .map(|c| (levenshtein(word, c), c.chars().next() != first, *c))
        .filter(|(d, _, c)| *d <= 3.min(c.len().max(1)))
        .min();
    match best {
        Some((_, _, c)) => format!(", did you mean `{c}`?"),
        None => String::new(),
    }
}

/// Edit distance between two strings.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

//! Which shard of a fleet a snapshot folder belongs to (`check --fleet
//! --shard K/N`): the `K/N` value and a stable partition by the folder's
//! path relative to the fleet directory. Pure: reads nothing, prints nothing.
//!
//! The partition, documented in docs/git-workflow.md so it can be predicted
//! outside driftaudit: the key of a folder is the FNV-1a 64-bit hash of its
//! path relative to the fleet directory (the bytes of `dc1/db1`, `/`
//! between components, `.` when the fleet directory is the snapshot),
//! passed through the splitmix64 finaliser; the bucket is Lamping and
//! Veach's jump consistent hash of that key over N buckets, and shard K
//! holds bucket K-1. A folder's shard depends only on its own path and N:
//! the same on every machine and checkout, unchanged when other hosts are
//! added or removed, and going from N to N+1 shards moves only about
//! 1/(N+1) of the hosts.

use std::path::Path;

/// One shard of a fleet: `K/N`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Most shards a fleet can be split into.
pub const MAX_SHARDS: u32 = 65_536;

/// A `--shard` value that is not `K/N` with 1 <= K <= N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a shard: {why}")]
pub struct ShardError {
    given: String,
    why: &'static str,
}

impl Shard {
    /// Shard `index` of `count` (1-based), if `1 <= index <= count <= MAX_SHARDS`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index >= 1 && index <= count && count <= MAX_SHARDS).then_some(Shard { index, count })
    }

    /// K, 1-based.
    pub fn index(self) -> u32 {
        self.index
    }

    /// N.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the snapshot folder at `rel` (relative to the fleet
    /// directory) belongs to this shard.
    pub fn contains(self, rel: &Path) -> bool {
        bucket(rel, self.count) == self.index - 1
    }
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let err = |why| ShardError {
            given: s.to_string(),
            why,
        };
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| err("expected K/N, e.g. `2/4` for the second of four shards"))?;
        let number = |t: &str| -> Option<u32> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        };
        let (Some(k), Some(n)) = (number(k), number(n)) else {
            return Err(err("K and N must be whole numbers, e.g. `2/4`"));
        };
        if n == 0 || n > MAX_SHARDS {
            return Err(err("N must be between 1 and 65536"));
        }
        Shard::new(k, n).ok_or_else(|| err("K must be between 1 and N"))
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The 0-based bucket of the folder at `rel` among `count` (see the module
/// documentation); `count` 0 is treated as 1.
pub fn bucket(rel: &Path, count: u32) -> u32 {
    jump_consistent_hash(splitmix64(fnv1a64(&path_key(rel))), count.max(1))
}

/// The bytes hashed for a relative folder path: its components joined by
/// `/` (so `./a//b` and `a/b` are one folder), `.` for the empty path.
fn path_key(rel: &Path) -> Vec<u8> {
    let mut key = Vec::new();
    for c in rel.components() {
        if let std::path::Component::Normal(part) = c {
            if !key.is_empty() {
                key.push(b'/');
            }
            key.extend_from_slice(part.as_encoded_bytes());
        }
    }
    if key.is_empty() {
        key.push(b'.');
    }
    key
}

/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The splitmix64 finaliser: spreads FNV's low-bit differences (paths that
/// differ in their last digit) over all 64 bits.
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Jump consistent hash (Lamping and Veach, 2014, arXiv:1406.2294), as in
/// the paper's C++ listing.
fn jump_consistent_hash(mut key: u64, buckets: u32) -> u32 {
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    // 0 <= b < buckets
    u32::try_from(b).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        // from the FNV reference (isthe.com/chongo/tech/comp/fnv), test_fnv.c
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn jump_hash_matches_the_reference_implementation() {
        // the test table of python-jump-consistent-hash (tests/test_jump.py)
        assert_eq!(jump_consistent_hash(1, 1), 0);
        assert_eq!(jump_consistent_hash(42, 57), 43);
        assert_eq!(jump_consistent_hash(0xdead_10cc, 1), 0);
        assert_eq!(jump_consistent_hash(0xdead_10cc, 666), 361);
        assert_eq!(jump_consistent_hash(256, 1024), 520);
        for k in 0..200u64 {
            assert!(jump_consistent_hash(k, 7) < 7);
        }
    }

    #[test]
    fn shard_syntax_is_k_of_n_and_errors_say_what_is_wrong() {
        let s: Shard = "2/4".parse().unwrap();
        assert_eq!((s.index(), s.count(), s.to_string()), (2, 4, "2/4".into()));
        for bad in [
            "0/4", "5/4", "4", "a/b", "1/0", "-1/4", "1/ 4", "+1/4", "1/70000", "",
        ] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.starts_with(&format!("`{bad}` is not a shard: ")), "{e}");
        }
    }

    #[test]
    fn every_folder_is_in_exactly_one_shard_and_shards_are_balanced() {
        let paths: Vec<PathBuf> = (0..2000)
            .map(|i| PathBuf::from(format!("dc{}/host-{i:04}", i % 4 + 1)))
            .collect();
        let n = 4;
        let mut sizes = [0usize; 4];
        for p in &paths {
            let holders: Vec<u32> = (1..=n)
                .filter(|&k| Shard::new(k, n).unwrap().contains(p))
                .collect();
            assert_eq!(holders.len(), 1, "{p:?} in {holders:?}");
            sizes[holders[0] as usize - 1] += 1;
        }
        for s in sizes {
            assert!((400..=600).contains(&s), "unbalanced: {sizes:?}");
        }
    }

    #[test]
    fn a_folder_keeps_its_shard_and_growing_n_moves_few_hosts() {
        let key = |p: &str| bucket(Path::new(p), 8);
        // the same folder spelled differently is the same folder
        assert_eq!(key("dc1/db1"), key("./dc1//db1/"));
        assert_eq!(bucket(Path::new(""), 5), bucket(Path::new("."), 5));
        let paths: Vec<String> = (0..1000).map(|i| format!("h{i}")).collect();
        let moved = paths
            .iter()
            .filter(|p| bucket(Path::new(p), 4) != bucket(Path::new(p), 5))
            .count();
        // jump hash moves about 1/5 of the keys from 4 to 5 buckets, and
        // only into the new bucket
        assert!((120..=280).contains(&moved), "{moved} moved");
        for p in &paths {
            let (a, b) = (bucket(Path::new(p), 4), bucket(Path::new(p), 5));
            assert!(a == b || b == 4, "{p}: {a} -> {b}");
        }
    }
}

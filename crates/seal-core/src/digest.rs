//! SHA-256 digests in Seal's `sha256:<64 lowercase hex>` form, and the bundle
//! aggregate (SPEC §Content Hash).

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest as _, Sha256};

use super::paths::FilePath;

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest(pub [u8; 32]);

const PREFIX: &str = "sha256:";

impl Digest {
    /// Parses exactly `sha256:` followed by 64 lowercase hex digits
    /// (SPEC §Canonicalization Rules: hash encoding).
    pub(crate) fn parse(text: &str) -> Option<Digest> {
        let hex = text.strip_prefix(PREFIX)?;
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
            out[i] = (lower_hex_value(pair[0])? << 4) | lower_hex_value(pair[1])?;
        }
        Some(Digest(out))
    }

    /// SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    pub fn from_hasher(hasher: Sha256) -> Digest {
        Digest(hasher.finalize().into())
    }
}

fn lower_hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PREFIX)?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The aggregate `contentHash` of a `files` map: SHA-256 over the UTF-8 of
/// `path:hash` lines, sorted by path bytes and joined by `\n` (no trailing
/// newline). Paths are already NFC (a [`FilePath`] invariant) and a `BTreeMap`
/// of `String`s iterates in UTF-8 byte order.
pub fn content_hash(files: &BTreeMap<FilePath, Digest>) -> Digest {
    let mut hasher = Sha256::new();
    for (i, (path, digest)) in files.iter().enumerate() {
        if i > 0 {
            hasher.update(b"\n");
        }
        hasher.update(path.as_str().as_bytes());
        hasher.update(b":");
        hasher.update(digest.to_string().as_bytes());
    }
    Digest::from_hasher(hasher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_is_strict() {
        let good = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(Digest::parse(&good).unwrap().to_string(), good);
        for bad in [
            format!("sha256:{}", "AB".repeat(32)),
            format!("sha256:{}", "ab".repeat(31)),
            format!("sha256:{}0", "ab".repeat(32)),
            format!("SHA256:{}", "ab".repeat(32)),
            format!("sha512:{}", "ab".repeat(32)),
            format!("sha256:{}g", "a".repeat(63)),
            "ab".repeat(32),
        ] {
            assert!(Digest::parse(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn content_hash_of_the_canonical_example() {
        // seeds/lockfile-format-reference.txt, bundle ./.claude/skills/code-review.
        let mut files = BTreeMap::new();
        files.insert(
            FilePath::parse("scripts/review.sh").unwrap(),
            Digest::parse(
                "sha256:7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730",
            )
            .unwrap(),
        );
        files.insert(
            FilePath::parse("SKILL.md").unwrap(),
            Digest::parse(
                "sha256:3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
            )
            .unwrap(),
        );
        assert_eq!(
            content_hash(&files).to_string(),
            "sha256:9fe7f798a33bac89fa4fc396647caa03a17b64372af0b000dcfe89f1e10d4442"
        );
    }

    #[test]
    fn digest_of_test() {
        assert_eq!(
            Digest::of(b"test").to_string(),
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        );
    }
}

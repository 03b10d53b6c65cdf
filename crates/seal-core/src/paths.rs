//! Bundle keys and tracked file paths: their syntax rules, NFC normalisation and
//! directory-segment ancestry (SPEC §Bundle Key, §Canonicalization Rules).
//!
//! Each rule is one small named check returning a [`PathRule`] so that callers
//! (the lockfile validator, targeted pin, the mount gate) report the same rule
//! by the same name.

use std::fmt;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// Unicode Normalization Form C of `s` (SPEC §Canonicalization Rules: "normalize
/// all path strings to NFC before sorting, hashing, or writing").
pub fn nfc(s: &str) -> String {
    // ASCII is always NFC: the common name, told apart at memory speed
    // (every request builds its path name by name through here).
    if s.is_ascii() {
        return s.to_string();
    }
    match is_nfc_quick(s.chars()) {
        IsNormalized::Yes => s.to_string(),
        _ => s.nfc().collect(),
    }
}

/// A rule of the bundle-key or file-path syntax that a string breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRule {
    Empty,
    KeyMissingDotSlash,
    KeyIsProjectRoot,
    Absolute,
    LeadingDotSlash,
    Backslash,
    CarriageReturnOrLineFeed,
    RepeatedSeparator,
    TrailingSlash,
    DotDotSegment,
    DotSegment,
}

impl fmt::Display for PathRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathRule::Empty => "is empty",
            PathRule::KeyMissingDotSlash => "does not start with \"./\"",
            PathRule::KeyIsProjectRoot => {
                "names the project root, which Seal v1 does not support as a sealed root"
            }
            PathRule::Absolute => "is absolute",
            PathRule::LeadingDotSlash => "starts with \"./\"",
            PathRule::Backslash => "contains a backslash (paths use forward slashes)",
            PathRule::CarriageReturnOrLineFeed => "contains a carriage return or line feed",
            PathRule::RepeatedSeparator => "contains a repeated separator \"//\"",
            PathRule::TrailingSlash => "ends with a slash",
            PathRule::DotDotSegment => "contains a \"..\" segment",
            PathRule::DotSegment => "contains a \".\" segment",
        })
    }
}

/// Checks shared by keys, file paths and patterns on the part after any prefix.
fn check_segments(rest: &str) -> Result<(), PathRule> {
    if rest.contains('\\') {
        return Err(PathRule::Backslash);
    }
    if rest.contains("//") {
        return Err(PathRule::RepeatedSeparator);
    }
    if rest.ends_with('/') {
        return Err(PathRule::TrailingSlash);
    }
    for segment in rest.split('/') {
        match segment {
            ".." => return Err(PathRule::DotDotSegment),
            "." => return Err(PathRule::DotSegment),
            _ => {}
        }
    }
    Ok(())
}

/// A valid, NFC-normalised bundle key such as `./.claude/skills/review`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundleKey(String);

impl BundleKey {
    /// Validates a key as written in `seal.json` and normalises it to NFC.
    pub fn parse(raw: &str) -> Result<BundleKey, PathRule> {
        if raw.is_empty() {
            return Err(PathRule::Empty);
        }
        if raw == "." || raw == "./" {
            return Err(PathRule::KeyIsProjectRoot);
        }
        if raw.contains(['\r', '\n']) {
            return Err(PathRule::CarriageReturnOrLineFeed);
        }
        let Some(rest) = raw.strip_prefix("./") else {
            return Err(if raw.starts_with('/') {
                PathRule::Absolute
            } else {
                PathRule::KeyMissingDotSlash
            });
        };
        if rest.starts_with('/') {
            return Err(PathRule::RepeatedSeparator);
        }
        check_segments(rest)?;
        Ok(BundleKey(nfc(raw)))
    }

    /// The key for a project-relative path given as NFC segments.
    pub fn from_segments<S: AsRef<str>>(segments: &[S]) -> Result<BundleKey, PathRule> {
        let joined: Vec<&str> = segments.iter().map(|s| s.as_ref()).collect();
        BundleKey::parse(&format!("./{}", joined.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The project-relative path without the leading `./`.
    pub fn rel_path(&self) -> &str {
        &self.0[2..]
    }

    pub fn segments(&self) -> impl Iterator<Item = &str> + Clone {
        self.rel_path().split('/')
    }

    pub fn depth(&self) -> usize {
        self.segments().count()
    }

    /// True when `self` is a directory-segment ancestor of `other` (strictly
    /// above it). `./skills` is an ancestor of `./skills/foo` but not of
    /// `./skills-extra`: segments, not string prefixes (SPEC §Approach).
    pub fn is_ancestor_of(&self, other: &BundleKey) -> bool {
        is_segment_ancestor(self.rel_path(), other.rel_path())
    }
}

impl fmt::Display for BundleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::escape::escaped(&self.0))
    }
}

/// True when relative path `above` is a strict directory-segment ancestor of
/// relative path `below`.
pub(crate) fn is_segment_ancestor(above: &str, below: &str) -> bool {
    below.len() > above.len() && below.starts_with(above) && below.as_bytes()[above.len()] == b'/'
}

/// A valid, NFC-normalised path of a tracked file, relative to its sealed root;
/// `.` for the sole file of a regular-file root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FilePath(String);

/// Lets a files map be searched by `&str` (the order is the string's).
impl std::borrow::Borrow<str> for FilePath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// The tracked path of a regular-file sealed root.
pub(crate) const SINGLE_FILE_PATH: &str = ".";

impl FilePath {
    /// Validates a path as written in a `files` map and normalises it to NFC.
    pub fn parse(raw: &str) -> Result<FilePath, PathRule> {
        if raw.is_empty() {
            return Err(PathRule::Empty);
        }
        if raw == SINGLE_FILE_PATH {
            return Ok(FilePath(raw.to_string()));
        }
        if raw.starts_with('/') {
            return Err(PathRule::Absolute);
        }
        if raw.starts_with("./") {
            return Err(PathRule::LeadingDotSlash);
        }
        check_segments(raw)?;
        Ok(FilePath(nfc(raw)))
    }

    /// A path built from already-NFC segments found on disk.
    pub(crate) fn from_nfc_unchecked(path: String) -> FilePath {
        FilePath(path)
    }

    pub fn single_file() -> FilePath {
        FilePath(SINGLE_FILE_PATH.to_string())
    }

    pub fn is_single_file(&self) -> bool {
        self.0 == SINGLE_FILE_PATH
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FilePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::escape::escaped(&self.0))
    }
}

/// Normalises a user-typed project-relative path (a `seal pin` argument) the way
/// SPEC §Canonicalization Rules asks: drop a leading `./`, collapse repeated
/// separators, drop a trailing slash; reject `..`, `.` segments in the middle and
/// the project root itself. Returns NFC segments.
pub fn normalize_user_path(raw: &str) -> Result<Vec<String>, PathRule> {
    if raw.contains('\\') {
        return Err(PathRule::Backslash);
    }
    if raw.contains(['\r', '\n']) {
        return Err(PathRule::CarriageReturnOrLineFeed);
    }
    let mut segments = Vec::new();
    let pieces: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    for (i, piece) in pieces.iter().enumerate() {
        match *piece {
            "." if i == 0 => continue,
            "." => return Err(PathRule::DotSegment),
            ".." => return Err(PathRule::DotDotSegment),
            name => segments.push(nfc(name)),
        }
    }
    if segments.is_empty() {
        return Err(if raw.is_empty() {
            PathRule::Empty
        } else {
            PathRule::KeyIsProjectRoot
        });
    }
    Ok(segments)
}

/// The lockfile's file name at the project root.
pub const LOCKFILE_NAME: &str = "seal.json";

/// SPEC §What Gets Hashed: whether the directory entry `name` is excluded
/// from hashing (and so from every bundle): anything named `.git`, at any
/// depth, and the project's own `seal.json`, only directly in the project
/// root (`in_project_root`). The one place this rule is written.
pub fn is_excluded(name: &std::ffi::OsStr, in_project_root: bool) -> bool {
    name == ".git" || (in_project_root && name == LOCKFILE_NAME)
}

/// Whether a path below a sealed root (its names after the root's) passes
/// through an excluded entry (roots are never the project root itself).
pub fn is_excluded_below_root<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    names
        .into_iter()
        .any(|n| is_excluded(std::ffi::OsStr::new(n), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rules() {
        assert!(BundleKey::parse("./.claude/skills/review").is_ok());
        assert!(BundleKey::parse("./a b/c?[x]{y}").is_ok());
        let cases = [
            ("", PathRule::Empty),
            (".", PathRule::KeyIsProjectRoot),
            ("./", PathRule::KeyIsProjectRoot),
            ("skills/x", PathRule::KeyMissingDotSlash),
            ("/abs", PathRule::Absolute),
            (".//x", PathRule::RepeatedSeparator),
            ("./a//b", PathRule::RepeatedSeparator),
            ("./a/", PathRule::TrailingSlash),
            ("./a/../b", PathRule::DotDotSegment),
            ("./..", PathRule::DotDotSegment),
            ("./a/./b", PathRule::DotSegment),
            ("./a\\b", PathRule::Backslash),
            ("./a\rb", PathRule::CarriageReturnOrLineFeed),
            ("./a\nb", PathRule::CarriageReturnOrLineFeed),
        ];
        for (raw, rule) in cases {
            assert_eq!(BundleKey::parse(raw), Err(rule), "{raw:?}");
        }
    }

    #[test]
    fn keys_are_nfc() {
        let nfd = BundleKey::parse("./cafe\u{301}").unwrap();
        assert_eq!(nfd.as_str(), "./caf\u{e9}");
    }

    #[test]
    fn file_path_rules() {
        assert!(FilePath::parse(".").unwrap().is_single_file());
        assert!(FilePath::parse("scripts/run.sh").is_ok());
        assert!(FilePath::parse(".hidden/x").is_ok());
        assert!(
            FilePath::parse("a\nb").is_ok(),
            "newlines are legal file names"
        );
        for (raw, rule) in [
            ("", PathRule::Empty),
            ("/x", PathRule::Absolute),
            ("./x", PathRule::LeadingDotSlash),
            ("a//b", PathRule::RepeatedSeparator),
            ("a/", PathRule::TrailingSlash),
            ("a/../b", PathRule::DotDotSegment),
            ("a/./b", PathRule::DotSegment),
            ("a/.", PathRule::DotSegment),
            ("a\\b", PathRule::Backslash),
        ] {
            assert_eq!(FilePath::parse(raw), Err(rule), "{raw:?}");
        }
    }

    #[test]
    fn ancestry_is_by_segment() {
        let a = BundleKey::parse("./skills").unwrap();
        let b = BundleKey::parse("./skills/foo").unwrap();
        let c = BundleKey::parse("./skills-extra").unwrap();
        assert!(a.is_ancestor_of(&b));
        assert!(!b.is_ancestor_of(&a));
        assert!(!a.is_ancestor_of(&c));
        assert!(!a.is_ancestor_of(&a));
    }

    #[test]
    fn user_paths_normalise() {
        assert_eq!(
            normalize_user_path("./plugins/foo/").unwrap(),
            ["plugins", "foo"]
        );
        assert_eq!(
            normalize_user_path("plugins//foo").unwrap(),
            ["plugins", "foo"]
        );
        assert_eq!(normalize_user_path("./"), Err(PathRule::KeyIsProjectRoot));
        assert_eq!(normalize_user_path("a/../b"), Err(PathRule::DotDotSegment));
        assert_eq!(normalize_user_path("a/./b"), Err(PathRule::DotSegment));
    }
}

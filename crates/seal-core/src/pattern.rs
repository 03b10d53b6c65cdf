//! Discovery patterns: their syntax (SPEC §Standalone Tool Verification Set),
//! per-segment `*` matching, static production of bundle keys, and detection of
//! pattern pairs that could produce nested sealed roots.
//!
//! Everything here is pure string logic; expanding a pattern against the disk
//! lives in `discovery`.

use std::fmt;

use super::paths::{BundleKey, nfc};

/// Why a discovery pattern is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternRule {
    Empty,
    DoubleStar,
    LeadingDotSlash,
    LeadingSlash,
    Backslash,
    RepeatedSeparator,
    DotOrDotDotSegment,
    TrailingSlash,
}

impl fmt::Display for PatternRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PatternRule::Empty => "is empty",
            PatternRule::DoubleStar => "uses the unsupported \"**\" wildcard",
            PatternRule::LeadingDotSlash => "starts with \"./\"",
            PatternRule::LeadingSlash => "starts with \"/\"",
            PatternRule::Backslash => "contains a backslash",
            PatternRule::RepeatedSeparator => "contains a repeated separator \"//\"",
            PatternRule::DotOrDotDotSegment => "contains a \".\" or \"..\" segment",
            PatternRule::TrailingSlash => "has a trailing slash",
        })
    }
}

/// A valid discovery pattern, NFC-normalised, split into segments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pattern {
    text: String,
}

impl Pattern {
    /// Validates a pattern string (each rule in SPEC's list, in that order).
    pub fn parse(raw: &str) -> Result<Pattern, PatternRule> {
        if raw.is_empty() {
            return Err(PatternRule::Empty);
        }
        if raw.contains("**") {
            return Err(PatternRule::DoubleStar);
        }
        if raw.starts_with("./") {
            return Err(PatternRule::LeadingDotSlash);
        }
        if raw.starts_with('/') {
            return Err(PatternRule::LeadingSlash);
        }
        if raw.contains('\\') {
            return Err(PatternRule::Backslash);
        }
        if raw.contains("//") {
            return Err(PatternRule::RepeatedSeparator);
        }
        if raw.ends_with('/') {
            return Err(PatternRule::TrailingSlash);
        }
        if raw.split('/').any(|s| s == "." || s == "..") {
            return Err(PatternRule::DotOrDotDotSegment);
        }
        Ok(Pattern { text: nfc(raw) })
    }

    /// The narrowest pattern producing exactly `key`: the key's path as a
    /// literal. (A `*` inside a name cannot be escaped in Seal v1, so such a
    /// pattern also produces siblings; validation still applies.)
    pub(crate) fn exact_for(key: &BundleKey) -> Result<Pattern, PatternRule> {
        Pattern::parse(key.rel_path())
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn segments(&self) -> impl Iterator<Item = &str> + Clone {
        self.text.split('/')
    }

    pub fn depth(&self) -> usize {
        self.segments().count()
    }

    pub(crate) fn has_wildcard(&self) -> bool {
        self.text.contains('*')
    }

    /// True when this pattern statically produces `key` as a sealed root: same
    /// number of segments and every segment matched (SPEC §Lockfile Validity).
    pub fn produces(&self, key: &BundleKey) -> bool {
        self.depth() == key.depth()
            && self
                .segments()
                .zip(key.segments())
                .all(|(glob, name)| segment_matches(glob, name))
    }

    /// If the first segments of `path` form a root this pattern produces, the
    /// number of segments of that root.
    pub fn root_len_within<'a>(&self, path: impl IntoIterator<Item = &'a str>) -> Option<usize> {
        let mut path = path.into_iter();
        let mut n = 0;
        for glob in self.segments() {
            let name = path.next()?;
            if !segment_matches(glob, name) {
                return None;
            }
            n += 1;
        }
        Some(n)
    }

    /// True when `path` (fewer segments than the pattern) could be a directory
    /// on the way down to a root of this pattern.
    pub fn passes_through<'a>(&self, path: impl IntoIterator<Item = &'a str>) -> bool {
        let mut globs = self.segments();
        for name in path {
            match globs.next() {
                Some(glob) if segment_matches(glob, name) => {}
                _ => return false,
            }
        }
        globs.next().is_some()
    }

    /// True when this pattern and `other` can produce roots where one is a
    /// directory-segment ancestor of the other. Equal depths never nest; for
    /// different depths the shallower pattern's segments must each share at
    /// least one real file name with the deeper pattern's segment at the same
    /// place (so `skills/*` overlaps `skills/foo/*`, and `a*` overlaps `*b/c`).
    pub fn can_nest_with(&self, other: &Pattern) -> bool {
        let (short, long) = if self.depth() < other.depth() {
            (self, other)
        } else if other.depth() < self.depth() {
            (other, self)
        } else {
            return false;
        };
        short
            .segments()
            .zip(long.segments())
            .all(|(a, b)| globs_share_a_name(a, b))
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::escape::escaped(&self.text))
    }
}

/// Matches one directory-entry name against one pattern segment in which only
/// `*` is special (zero or more characters, never `/`, hidden names included).
pub fn segment_matches(glob: &str, name: &str) -> bool {
    if !glob.contains('*') {
        return glob == name;
    }
    // Matching bytes is matching characters here: `*` is ASCII, and a literal
    // run (valid UTF-8) can only match at a character boundary of the name.
    let (glob, name) = (glob.as_bytes(), name.as_bytes());
    // Greedy wildcard matching with backtracking to the last star.
    let (mut g, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if g < glob.len() && glob[g] == b'*' {
            star = Some((g, n));
            g += 1;
        } else if g < glob.len() && glob[g] == name[n] {
            g += 1;
            n += 1;
        } else if let Some((star_g, star_n)) = star {
            g = star_g + 1;
            n = star_n + 1;
            star = Some((star_g, star_n + 1));
        } else {
            return false;
        }
    }
    glob[g..].iter().all(|&c| c == b'*')
}

/// True when some real directory-entry name (non-empty, not `.` or `..`, no `/`)
/// matches both segment globs. Explores the product of the two glob automata,
/// remembering only whether the name so far is empty, `.`, `..` or anything else.
fn globs_share_a_name(a: &str, b: &str) -> bool {
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    enum Sofar {
        Empty,
        Dot,
        DotDot,
        Other,
    }
    fn push(s: Sofar, c: char) -> Sofar {
        match (s, c) {
            (Sofar::Empty, '.') => Sofar::Dot,
            (Sofar::Dot, '.') => Sofar::DotDot,
            _ => Sofar::Other,
        }
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(0usize, 0usize, Sofar::Empty)];
    while let Some(state @ (i, j, sofar)) = stack.pop() {
        if !seen.insert(state) {
            continue;
        }
        if i == a.len() && j == b.len() && sofar == Sofar::Other {
            return true;
        }
        let a_star = a.get(i) == Some(&'*');
        let b_star = b.get(j) == Some(&'*');
        // A star may match nothing.
        if a_star {
            stack.push((i + 1, j, sofar));
        }
        if b_star {
            stack.push((i, j + 1, sofar));
        }
        // Consume one character on both sides.
        match (a.get(i), b.get(j)) {
            (Some('*'), Some('*')) => {
                // Any character will do; one that is neither '.' nor '/' keeps
                // every option open.
                stack.push((i, j, Sofar::Other));
                stack.push((i, j, push(sofar, '.')));
            }
            (Some('*'), Some(&c)) if c != '/' => stack.push((i, j + 1, push(sofar, c))),
            (Some(&c), Some('*')) if c != '/' => stack.push((i + 1, j, push(sofar, c))),
            (Some(&x), Some(&y)) if x == y && x != '/' => {
                stack.push((i + 1, j + 1, push(sofar, x)))
            }
            _ => {}
        }
    }
    false
}

/// An actionable explanation of why no pattern in `patterns` produces `key`
/// (SPEC §Lockfile Validity: name the key, the pattern shape that would
/// produce it, and whole-root versus per-child discovery).
pub(crate) fn explain_not_produced(key: &BundleKey, patterns: &[Pattern]) -> String {
    let exact = key.rel_path();
    let parent_children = match key.rel_path().rsplit_once('/') {
        Some((parent, _)) => format!("{parent}/*"),
        None => "*".to_string(),
    };
    for pattern in patterns {
        if pattern.depth() < key.depth() && pattern.root_len_within(key.segments()).is_some() {
            return format!(
                "bundle key {key} is not produced by any discovery pattern: \"{pattern}\" \
                 produces one recursive bundle per match (here the root {}) and does not produce \
                 {key}; use \"{}\" for per-child bundle roots, or re-pin the containing root as \
                 the single recorded bundle",
                root_of(key, pattern.depth()),
                crate::escape::escaped(&parent_children),
            );
        }
    }
    for pattern in patterns {
        if pattern.depth() > key.depth() && pattern.passes_through(key.segments()) {
            return format!(
                "bundle key {key} is not produced by any discovery pattern: \"{pattern}\" \
                 produces roots below it, not {key} itself; add \"{}\" to discovery to seal it \
                 as one root",
                crate::escape::escaped(exact),
            );
        }
    }
    format!(
        "bundle key {key} is not produced by any discovery pattern; add \"{}\" (this root \
         only) or \"{}\" (each child of its parent as its own root) to \"discovery\"",
        crate::escape::escaped(exact),
        crate::escape::escaped(&parent_children),
    )
}

fn root_of(key: &BundleKey, depth: usize) -> String {
    let segments: Vec<&str> = key.segments().take(depth).collect();
    crate::escape::escaped(&format!("./{}", segments.join("/"))).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Pattern {
        Pattern::parse(s).unwrap()
    }
    fn k(s: &str) -> BundleKey {
        BundleKey::parse(s).unwrap()
    }

    #[test]
    fn syntax_rules() {
        for (raw, rule) in [
            ("", PatternRule::Empty),
            ("skills/**", PatternRule::DoubleStar),
            ("a**b", PatternRule::DoubleStar),
            ("./skills", PatternRule::LeadingDotSlash),
            ("/skills", PatternRule::LeadingSlash),
            ("skills\\*", PatternRule::Backslash),
            ("a//b", PatternRule::RepeatedSeparator),
            ("skills/", PatternRule::TrailingSlash),
            ("a/./b", PatternRule::DotOrDotDotSegment),
            ("a/..", PatternRule::DotOrDotDotSegment),
            (".", PatternRule::DotOrDotDotSegment),
        ] {
            assert_eq!(Pattern::parse(raw), Err(rule), "{raw:?}");
        }
        assert!(Pattern::parse(".claude/skills/*").is_ok());
        assert!(Pattern::parse("a?[b]{c}").is_ok());
    }

    #[test]
    fn star_matches_within_one_segment_including_hidden() {
        assert!(segment_matches("*", ".hidden"));
        assert!(segment_matches("*", "x"));
        assert!(segment_matches("a*", "a"));
        assert!(segment_matches("a*c", "abbbc"));
        assert!(segment_matches("*.md", "README.md"));
        assert!(!segment_matches("*.md", "README.mdx"));
        assert!(segment_matches("*a*a*", "banana"));
        assert!(!segment_matches("a?", "ab"), "? is literal");
        assert!(segment_matches("a?", "a?"));
        assert!(segment_matches("[x]", "[x]"));
        assert!(!segment_matches("[x]", "x"));
        assert!(segment_matches("caf*", "café"));
        assert!(segment_matches("*é", "café"));
        assert!(!segment_matches("*e", "café"));
        assert!(segment_matches("日*語", "日本語"));
        assert!(!segment_matches("日*本", "日本語"));
    }

    #[test]
    fn static_production() {
        assert!(p("skills/*").produces(&k("./skills/foo")));
        assert!(p("skills").produces(&k("./skills")));
        assert!(!p("skills").produces(&k("./skills/foo")));
        assert!(!p("skills/*").produces(&k("./skills")));
        assert!(!p("skills/*").produces(&k("./skills/a/b")));
        assert!(p("*/skills/*").produces(&k("./.codex/skills/x")));
    }

    #[test]
    fn nesting_patterns() {
        assert!(p("skills").can_nest_with(&p("skills/*")));
        assert!(p("skills/*").can_nest_with(&p("skills/foo/*")));
        assert!(p("skills/foo/*").can_nest_with(&p("skills/*")));
        assert!(p("a*").can_nest_with(&p("*b/c")));
        assert!(p("*").can_nest_with(&p(".claude/skills/*")));
        assert!(!p("skills/*").can_nest_with(&p("skills/*")));
        assert!(!p("skills/*").can_nest_with(&p("agents/*")));
        assert!(!p(".claude/skills/*").can_nest_with(&p(".claude/commands/*")));
        assert!(!p("skills/*").can_nest_with(&p("other/x/y")));
        // Equal depth never nests, whatever the globs.
        assert!(!p("*/*").can_nest_with(&p("a/b")));
    }

    #[test]
    fn shared_names_exclude_dot_and_dotdot() {
        // The only names matching both ".*" and "*." with length <= 2 are "." and
        // "..", but ".x." matches both.
        assert!(globs_share_a_name(".*", "*."));
        assert!(!globs_share_a_name("a", "b"));
        assert!(globs_share_a_name("a*", "*b"));
        assert!(!globs_share_a_name("a*", "b*"));
        assert!(globs_share_a_name("*", "*"));
    }

    #[test]
    fn explanations_are_actionable() {
        let msg = explain_not_produced(&k("./skills/foo"), &[p("skills")]);
        assert!(msg.contains("\"skills\""), "{msg}");
        assert!(msg.contains("skills/*"), "{msg}");
        assert!(msg.contains("./skills/foo"), "{msg}");
        let msg = explain_not_produced(&k("./skills"), &[p("skills/*")]);
        assert!(msg.contains("add \"skills\""), "{msg}");
        let msg = explain_not_produced(&k("./x/y"), &[]);
        assert!(msg.contains("\"x/y\"") && msg.contains("\"x/*\""), "{msg}");
    }
}

//! The `seal.json` model, its strict parse and validation (SPEC §Lockfile
//! Validity), and its canonical serialization (SPEC §Lockfile Serialization).
//!
//! [`Lockfile::parse`] is the only way to obtain a model from bytes, and it
//! enforces every validity rule; [`Lockfile::check`] re-runs the cross-entry
//! rules on a model built in memory (pin uses it before writing);
//! [`Lockfile::to_canonical_bytes`] writes what the reference CLI writes for the
//! same state. Each rule has one name in [`ValidityRule`] and is checked in one place.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::digest::{Digest, content_hash};
use super::escape::quoted;
use super::json::{self, Kind, Member, Value};
use super::paths::{BundleKey, FilePath};
use super::pattern::{Pattern, explain_not_produced};

/// The lockfile's file name at the project root (written beside the
/// exclusion rule that names it, in [`super::paths`]).
pub use super::paths::LOCKFILE_NAME;

/// Enforcement policy for Unverified and Mismatch bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Block,
    Warn,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Block => "block",
            Policy::Warn => "warn",
        }
    }
}

/// One pinned bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry {
    /// Advisory metadata; never part of verification.
    pub revision: Option<String>,
    pub content_hash: Digest,
    pub files: BTreeMap<FilePath, Digest>,
}

impl BundleEntry {
    /// Whether two entries pin the same files. The content hash binds the
    /// files map (a lockfile whose `contentHash` does not aggregate its
    /// `files` is rejected, [`check_entry_consistency`]), so comparing it
    /// is enough: a decision about a bundle of 20,000 files does not compare
    /// 20,000 paths.
    /// Whether `rel` (a path below the root) is a recorded file or a
    /// directory above one. Two searches of the sorted map, not a scan: a
    /// lookup in a bundle of 20,000 files costs what one in 10 does.
    pub fn records(&self, rel: &str) -> bool {
        if self.files.contains_key(rel) {
            return true;
        }
        // Every path below `rel/` sorts at or after `rel/`, before anything
        // not below it.
        let below = format!("{rel}/");
        self.files
            .range::<str, _>((
                std::ops::Bound::Included(below.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(first, _)| first.as_str().starts_with(&below))
    }

    pub fn pins_same_files(&self, other: &BundleEntry) -> bool {
        self.content_hash == other.content_hash && self.files.len() == other.files.len()
    }

    /// An entry for freshly hashed files (re-pinned entries carry no revision).
    pub fn from_files(files: BTreeMap<FilePath, Digest>) -> BundleEntry {
        BundleEntry {
            revision: None,
            content_hash: content_hash(&files),
            files,
        }
    }

    /// True when the root this entry records is a regular file.
    pub fn is_single_file(&self) -> bool {
        self.files.len() == 1
            && self
                .files
                .keys()
                .next()
                .is_some_and(FilePath::is_single_file)
    }
}

/// A valid Seal v1 lockfile. `discovery` is kept sorted (the serialized order);
/// an empty list and an absent field are the same state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lockfile {
    pub discovery: Vec<Pattern>,
    pub policy: Policy,
    pub bundles: BTreeMap<BundleKey, BundleEntry>,
}

/// Each validity rule of SPEC §Lockfile Validity and the lockfile reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidityRule {
    NotJson,
    NotAnObject,
    UnknownField,
    VersionMissing,
    VersionNotInteger,
    VersionUnsupported,
    PolicyMissing,
    PolicyInvalid,
    BundlesMissing,
    BundlesNotObject,
    DiscoveryNotArray,
    PatternNotString,
    PatternMalformed,
    PatternsNest,
    DiscoveryRequired,
    KeyMalformed,
    KeyDuplicateAfterNfc,
    KeyNested,
    KeyNotProduced,
    EntryNotObject,
    EntryFieldMissing,
    EntryFieldWrongType,
    RevisionEmpty,
    HashMalformed,
    FilesEmpty,
    FilePathMalformed,
    SingleFileDotNotSole,
    FilePathDuplicateAfterNfc,
    ContentHashMismatch,
}

impl ValidityRule {
    /// A short stable name, shown with every message.
    pub fn name(self) -> &'static str {
        match self {
            ValidityRule::NotJson => "json-syntax",
            ValidityRule::NotAnObject => "top-level-object",
            ValidityRule::UnknownField => "unknown-field",
            ValidityRule::VersionMissing => "version-required",
            ValidityRule::VersionNotInteger => "version-integer",
            ValidityRule::VersionUnsupported => "version-supported",
            ValidityRule::PolicyMissing => "policy-required",
            ValidityRule::PolicyInvalid => "policy-value",
            ValidityRule::BundlesMissing => "bundles-required",
            ValidityRule::BundlesNotObject => "bundles-object",
            ValidityRule::DiscoveryNotArray => "discovery-array",
            ValidityRule::PatternNotString => "pattern-string",
            ValidityRule::PatternMalformed => "pattern-syntax",
            ValidityRule::PatternsNest => "patterns-nest",
            ValidityRule::DiscoveryRequired => "discovery-required",
            ValidityRule::KeyMalformed => "key-syntax",
            ValidityRule::KeyDuplicateAfterNfc => "key-unique-nfc",
            ValidityRule::KeyNested => "key-nested",
            ValidityRule::KeyNotProduced => "key-produced",
            ValidityRule::EntryNotObject => "entry-object",
            ValidityRule::EntryFieldMissing => "entry-field-required",
            ValidityRule::EntryFieldWrongType => "entry-field-type",
            ValidityRule::RevisionEmpty => "revision-non-empty",
            ValidityRule::HashMalformed => "hash-format",
            ValidityRule::FilesEmpty => "files-non-empty",
            ValidityRule::FilePathMalformed => "file-path-syntax",
            ValidityRule::SingleFileDotNotSole => "file-dot-sole",
            ValidityRule::FilePathDuplicateAfterNfc => "file-path-unique-nfc",
            ValidityRule::ContentHashMismatch => "content-hash",
        }
    }
}

/// One broken rule with a message naming the offending value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: ValidityRule,
    pub message: String,
}

/// Why `seal.json` is not a valid Seal v1 lockfile: every violation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockfileError {
    pub violations: Vec<Violation>,
}

impl LockfileError {
    fn one(rule: ValidityRule, message: String) -> LockfileError {
        LockfileError {
            violations: vec![Violation { rule, message }],
        }
    }

    /// True when any violation is of `rule`.
    pub fn has(&self, rule: ValidityRule) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }
}

impl fmt::Display for LockfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.violations.as_slice() {
            [only] => write!(
                f,
                "seal.json is invalid: {} [{}]",
                only.message,
                only.rule.name()
            ),
            many => {
                write!(f, "seal.json is invalid ({} problems):", many.len())?;
                for v in many {
                    write!(f, "\n  - {} [{}]", v.message, v.rule.name())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LockfileError {}

/// Collects violations while walking the JSON tree.
#[derive(Default)]
struct Violations(Vec<Violation>);

impl Violations {
    fn add(&mut self, rule: ValidityRule, message: String) {
        self.0.push(Violation { rule, message });
    }
}

const TOP_FIELDS: [&str; 4] = ["version", "discovery", "policy", "bundles"];
const ENTRY_FIELDS: [&str; 3] = ["revision", "contentHash", "files"];

impl Lockfile {
    /// The empty lockfile `seal init` writes for a project with no bundles.
    pub fn empty(policy: Policy) -> Lockfile {
        Lockfile {
            discovery: Vec::new(),
            policy,
            bundles: BTreeMap::new(),
        }
    }

    /// Parses and fully validates `seal.json` bytes.
    pub fn parse(bytes: &[u8]) -> Result<Lockfile, LockfileError> {
        let root = json::parse(bytes).map_err(|e| {
            LockfileError::one(ValidityRule::NotJson, format!("not valid JSON: {e}"))
        })?;
        let Kind::Object(members) = &root.kind else {
            return Err(LockfileError::one(
                ValidityRule::NotAnObject,
                format!(
                    "the top level is {}, expected an object",
                    root.kind.type_name()
                ),
            ));
        };
        let mut v = Violations::default();
        reject_unknown_fields(members, &TOP_FIELDS, "top-level", &mut v);

        let field = |name: &str| members.iter().find(|m| m.key == name).map(|m| &m.value);
        check_version(field("version"), &mut v);
        let policy = parse_policy(field("policy"), &mut v);
        let discovery_present = field("discovery").is_some();
        let discovery = parse_discovery(field("discovery"), &mut v);
        let bundles = parse_bundles(field("bundles"), &mut v);

        if let (Some(policy), Some(bundles)) = (policy, bundles) {
            let lockfile = Lockfile {
                discovery,
                policy,
                bundles,
            };
            if !lockfile.bundles.is_empty() && !discovery_present {
                v.add(
                    ValidityRule::DiscoveryRequired,
                    "\"bundles\" is not empty but \"discovery\" is absent; every recorded bundle \
                     key must be produced by a discovery pattern"
                        .to_string(),
                );
            } else {
                lockfile.check_into(&mut v);
            }
            if v.0.is_empty() {
                return Ok(lockfile);
            }
        }
        Err(LockfileError { violations: v.0 })
    }

    /// Re-checks the rules that relate entries to each other on an in-memory
    /// model: pattern nesting, static production, nested keys, empty `files`,
    /// `.` as sole entry and the aggregate content hash.
    pub fn check(&self) -> Result<(), LockfileError> {
        let mut v = Violations::default();
        if !self.bundles.is_empty() && self.discovery.is_empty() {
            v.add(
                ValidityRule::DiscoveryRequired,
                "\"bundles\" is not empty but \"discovery\" has no patterns".to_string(),
            );
        }
        self.check_into(&mut v);
        if v.0.is_empty() {
            Ok(())
        } else {
            Err(LockfileError { violations: v.0 })
        }
    }

    fn check_into(&self, v: &mut Violations) {
        check_patterns_do_not_nest(&self.discovery, v);
        for (key, entry) in &self.bundles {
            if !self.discovery.iter().any(|p| p.produces(key)) {
                v.add(
                    ValidityRule::KeyNotProduced,
                    explain_not_produced(key, &self.discovery),
                );
            }
            check_entry_consistency(key, entry, v);
        }
        check_keys_do_not_nest(self.bundles.keys(), v);
    }

    /// The pattern(s) that produce `key`.
    pub fn patterns_producing<'a>(
        &'a self,
        key: &'a BundleKey,
    ) -> impl Iterator<Item = &'a Pattern> {
        self.discovery.iter().filter(move |p| p.produces(key))
    }

    /// Canonical bytes (SPEC §Lockfile Serialization), byte-identical with the
    /// reference CLI's encoder: fixed key order, sorted maps and discovery, two
    /// spaces per level, `": "`, Go string escaping, one trailing newline.
    pub fn to_canonical_bytes(&self) -> Vec<u8> {
        let mut out = String::with_capacity(256 + self.bundles.len() * 256);
        out.push('{');
        json::newline_indent(&mut out, 1);
        out.push_str("\"version\": 1,");
        if !self.discovery.is_empty() {
            json::newline_indent(&mut out, 1);
            out.push_str("\"discovery\": ");
            let mut patterns: Vec<&str> = self.discovery.iter().map(Pattern::as_str).collect();
            patterns.sort_unstable();
            json::write_string_array(&mut out, &patterns, 1);
            out.push(',');
        }
        json::newline_indent(&mut out, 1);
        out.push_str("\"policy\": ");
        json::write_go_string(&mut out, self.policy.as_str());
        out.push(',');
        json::newline_indent(&mut out, 1);
        out.push_str("\"bundles\": ");
        if self.bundles.is_empty() {
            out.push_str("{}");
        } else {
            out.push('{');
            for (i, (key, entry)) in self.bundles.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json::newline_indent(&mut out, 2);
                json::write_go_string(&mut out, key.as_str());
                out.push_str(": {");
                if let Some(revision) = &entry.revision {
                    json::newline_indent(&mut out, 3);
                    out.push_str("\"revision\": ");
                    json::write_go_string(&mut out, revision);
                    out.push(',');
                }
                json::newline_indent(&mut out, 3);
                out.push_str("\"contentHash\": ");
                json::write_go_string(&mut out, &entry.content_hash.to_string());
                out.push(',');
                json::newline_indent(&mut out, 3);
                out.push_str("\"files\": {");
                for (j, (path, digest)) in entry.files.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    json::newline_indent(&mut out, 4);
                    json::write_go_string(&mut out, path.as_str());
                    out.push_str(": ");
                    json::write_go_string(&mut out, &digest.to_string());
                }
                json::newline_indent(&mut out, 3);
                out.push('}');
                json::newline_indent(&mut out, 2);
                out.push('}');
            }
            json::newline_indent(&mut out, 1);
            out.push('}');
        }
        out.push_str("\n}\n");
        out.into_bytes()
    }
}

fn reject_unknown_fields(members: &[Member], known: &[&str], place: &str, v: &mut Violations) {
    for m in members {
        if !known.contains(&m.key.as_str()) {
            let hint = known
                .iter()
                .find(|k| k.eq_ignore_ascii_case(&m.key))
                .map(|k| format!(" (field names are case-sensitive: did you mean \"{k}\"?)"))
                .unwrap_or_default();
            v.add(
                ValidityRule::UnknownField,
                format!(
                    "{}: unknown {place} field {}{hint}; allowed: {}",
                    m.key_pos,
                    quoted(&m.key),
                    known.join(", ")
                ),
            );
        }
    }
}

/// `version` must be present and exactly the integer 1.
fn check_version(value: Option<&Value>, v: &mut Violations) {
    let Some(value) = value else {
        v.add(
            ValidityRule::VersionMissing,
            "\"version\" is missing (expected 1)".to_string(),
        );
        return;
    };
    match &value.kind {
        Kind::Number(raw) if raw == "1" => {}
        Kind::Number(raw) if is_integer_token(raw) => v.add(
            ValidityRule::VersionUnsupported,
            format!(
                "{}: \"version\" is {raw}; this tool supports Seal version 1 only",
                value.pos
            ),
        ),
        Kind::Number(raw) => v.add(
            ValidityRule::VersionNotInteger,
            format!(
                "{}: \"version\" is {raw}, expected the integer 1",
                value.pos
            ),
        ),
        other => v.add(
            ValidityRule::VersionNotInteger,
            format!(
                "{}: \"version\" is {}, expected the integer 1",
                value.pos,
                other.type_name()
            ),
        ),
    }
}

fn is_integer_token(raw: &str) -> bool {
    !raw.contains(['.', 'e', 'E'])
}

fn parse_policy(value: Option<&Value>, v: &mut Violations) -> Option<Policy> {
    let Some(value) = value else {
        v.add(
            ValidityRule::PolicyMissing,
            "\"policy\" is missing (expected \"block\" or \"warn\")".into(),
        );
        return None;
    };
    match &value.kind {
        Kind::String(s) if s == "block" => Some(Policy::Block),
        Kind::String(s) if s == "warn" => Some(Policy::Warn),
        Kind::String(s) => {
            v.add(
                ValidityRule::PolicyInvalid,
                format!(
                    "{}: \"policy\" is {}, expected exactly \"block\" or \"warn\"",
                    value.pos,
                    quoted(s)
                ),
            );
            None
        }
        other => {
            v.add(
                ValidityRule::PolicyInvalid,
                format!(
                    "{}: \"policy\" is {}, expected \"block\" or \"warn\"",
                    value.pos,
                    other.type_name()
                ),
            );
            None
        }
    }
}

fn parse_discovery(value: Option<&Value>, v: &mut Violations) -> Vec<Pattern> {
    let Some(value) = value else {
        return Vec::new();
    };
    let Kind::Array(items) = &value.kind else {
        v.add(
            ValidityRule::DiscoveryNotArray,
            format!(
                "{}: \"discovery\" is {}, expected an array of strings (omit the field instead of null)",
                value.pos,
                value.kind.type_name()
            ),
        );
        return Vec::new();
    };
    let mut patterns = Vec::with_capacity(items.len());
    for item in items {
        match &item.kind {
            Kind::String(raw) => match Pattern::parse(raw) {
                Ok(p) => patterns.push(p),
                Err(rule) => v.add(
                    ValidityRule::PatternMalformed,
                    format!("{}: discovery pattern {} {rule}", item.pos, quoted(raw)),
                ),
            },
            other => v.add(
                ValidityRule::PatternNotString,
                format!(
                    "{}: discovery entry is {}, expected a string",
                    item.pos,
                    other.type_name()
                ),
            ),
        }
    }
    patterns.sort();
    patterns
}

fn parse_bundles(
    value: Option<&Value>,
    v: &mut Violations,
) -> Option<BTreeMap<BundleKey, BundleEntry>> {
    let Some(value) = value else {
        v.add(
            ValidityRule::BundlesMissing,
            "\"bundles\" is missing (use {} for none)".to_string(),
        );
        return None;
    };
    let Kind::Object(members) = &value.kind else {
        v.add(
            ValidityRule::BundlesNotObject,
            format!(
                "{}: \"bundles\" is {}, expected an object",
                value.pos,
                value.kind.type_name()
            ),
        );
        return None;
    };
    let mut bundles = BTreeMap::new();
    let mut raw_by_key: HashMap<BundleKey, &str> = HashMap::new();
    let mut ok = true;
    for m in members {
        let key = match BundleKey::parse(&m.key) {
            Ok(key) => key,
            Err(rule) => {
                v.add(
                    ValidityRule::KeyMalformed,
                    format!("{}: bundle key {} {rule}", m.key_pos, quoted(&m.key)),
                );
                ok = false;
                continue;
            }
        };
        if let Some(first) = raw_by_key.get(&key) {
            v.add(
                ValidityRule::KeyDuplicateAfterNfc,
                format!(
                    "{}: bundle keys {} and {} are the same key after Unicode NFC normalisation",
                    m.key_pos,
                    quoted(first),
                    quoted(&m.key)
                ),
            );
            ok = false;
            continue;
        }
        raw_by_key.insert(key.clone(), &m.key);
        match parse_entry(&key, &m.value, v) {
            Some(entry) => {
                bundles.insert(key, entry);
            }
            None => ok = false,
        }
    }
    ok.then_some(bundles)
}

fn parse_entry(key: &BundleKey, value: &Value, v: &mut Violations) -> Option<BundleEntry> {
    let Kind::Object(members) = &value.kind else {
        v.add(
            ValidityRule::EntryNotObject,
            format!(
                "{}: bundle {key} is {}, expected an object",
                value.pos,
                value.kind.type_name()
            ),
        );
        return None;
    };
    let before = v.0.len();
    reject_unknown_fields(members, &ENTRY_FIELDS, &format!("bundle {key}"), v);
    let field = |name: &str| members.iter().find(|m| m.key == name).map(|m| &m.value);

    let revision = match field("revision").map(|r| (&r.kind, r.pos)) {
        None => None,
        Some((Kind::String(s), pos)) if s.is_empty() => {
            v.add(
                ValidityRule::RevisionEmpty,
                format!("{pos}: bundle {key} has an empty \"revision\"; omit the field instead"),
            );
            None
        }
        Some((Kind::String(s), _)) => Some(s.clone()),
        Some((other, pos)) => {
            v.add(
                ValidityRule::EntryFieldWrongType,
                format!(
                    "{pos}: \"revision\" of bundle {key} is {}, expected a string",
                    other.type_name()
                ),
            );
            None
        }
    };
    let content_hash = parse_hash(field("contentHash"), "contentHash", key, v);
    let files = parse_files(field("files"), key, v);
    if v.0.len() != before {
        return None;
    }
    Some(BundleEntry {
        revision,
        content_hash: content_hash?,
        files: files?,
    })
}

fn parse_hash(
    value: Option<&Value>,
    what: &str,
    key: &BundleKey,
    v: &mut Violations,
) -> Option<Digest> {
    let Some(value) = value else {
        v.add(
            ValidityRule::EntryFieldMissing,
            format!("bundle {key} has no \"{what}\""),
        );
        return None;
    };
    match &value.kind {
        Kind::String(s) => {
            let digest = Digest::parse(s);
            if digest.is_none() {
                v.add(
                    ValidityRule::HashMalformed,
                    format!(
                        "{}: {what} of bundle {key} is {}, expected \"sha256:\" and 64 lowercase hex digits",
                        value.pos,
                        quoted(s)
                    ),
                );
            }
            digest
        }
        other => {
            v.add(
                ValidityRule::EntryFieldWrongType,
                format!(
                    "{}: {what} of bundle {key} is {}, expected a string",
                    value.pos,
                    other.type_name()
                ),
            );
            None
        }
    }
}

fn parse_files(
    value: Option<&Value>,
    key: &BundleKey,
    v: &mut Violations,
) -> Option<BTreeMap<FilePath, Digest>> {
    let Some(value) = value else {
        v.add(
            ValidityRule::EntryFieldMissing,
            format!("bundle {key} has no \"files\""),
        );
        return None;
    };
    let Kind::Object(members) = &value.kind else {
        v.add(
            ValidityRule::EntryFieldWrongType,
            format!(
                "{}: \"files\" of bundle {key} is {}, expected an object",
                value.pos,
                value.kind.type_name()
            ),
        );
        return None;
    };
    let mut files = BTreeMap::new();
    let mut raw_by_path: HashMap<FilePath, &str> = HashMap::new();
    let mut ok = true;
    for m in members {
        let path = match FilePath::parse(&m.key) {
            Ok(path) => path,
            Err(rule) => {
                v.add(
                    ValidityRule::FilePathMalformed,
                    format!(
                        "{}: file path {} in bundle {key} {rule}",
                        m.key_pos,
                        quoted(&m.key)
                    ),
                );
                ok = false;
                continue;
            }
        };
        if let Some(first) = raw_by_path.get(&path) {
            v.add(
                ValidityRule::FilePathDuplicateAfterNfc,
                format!(
                    "{}: file paths {} and {} in bundle {key} are the same path after NFC normalisation",
                    m.key_pos,
                    quoted(first),
                    quoted(&m.key)
                ),
            );
            ok = false;
            continue;
        }
        raw_by_path.insert(path.clone(), &m.key);
        let what = format!("hash of {}", quoted(&m.key));
        match parse_hash(Some(&m.value), &what, key, v) {
            Some(d) => {
                files.insert(path, d);
            }
            None => ok = false,
        }
    }
    ok.then_some(files)
}

/// Empty `files`, `.` not alone, and the aggregate hash (SPEC §Canonicalization
/// Rules: tracked entries and internal consistency).
fn check_entry_consistency(key: &BundleKey, entry: &BundleEntry, v: &mut Violations) {
    if entry.files.is_empty() {
        v.add(
            ValidityRule::FilesEmpty,
            format!("bundle {key} has an empty \"files\" map"),
        );
        return;
    }
    if entry.files.len() > 1 && entry.files.keys().any(FilePath::is_single_file) {
        v.add(
            ValidityRule::SingleFileDotNotSole,
            format!("bundle {key} lists \".\" beside other files; \".\" is only for a regular-file root, alone"),
        );
    }
    let computed = content_hash(&entry.files);
    if computed != entry.content_hash {
        v.add(
            ValidityRule::ContentHashMismatch,
            format!(
                "contentHash of bundle {key} is {} but its files map aggregates to {computed}",
                entry.content_hash
            ),
        );
    }
}

/// No pair of patterns may produce roots where one is an ancestor of another.
fn check_patterns_do_not_nest(patterns: &[Pattern], v: &mut Violations) {
    for (i, a) in patterns.iter().enumerate() {
        for b in &patterns[i + 1..] {
            if a.can_nest_with(b) {
                v.add(
                    ValidityRule::PatternsNest,
                    format!(
                        "discovery patterns \"{a}\" and \"{b}\" can produce sealed roots where one \
                         contains the other; choose one bundle boundary for that subtree"
                    ),
                );
            }
        }
    }
}

/// No bundle key may be a directory-segment ancestor of another.
fn check_keys_do_not_nest<'a>(keys: impl Iterator<Item = &'a BundleKey>, v: &mut Violations) {
    let keys: Vec<&BundleKey> = keys.collect();
    let rel: std::collections::HashSet<&str> = keys.iter().map(|k| k.rel_path()).collect();
    for key in &keys {
        let path = key.rel_path();
        for (i, _) in path.match_indices('/') {
            let above = &path[..i];
            if rel.contains(above) {
                v.add(
                    ValidityRule::KeyNested,
                    format!(
                        "bundle key {key} is nested inside bundle key ./{}",
                        crate::escape::escaped(above)
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `records` (two searches of the sorted map) agrees with a scan of
        /// every file for an exact match or a segment ancestor.
        #[test]
        fn records_agrees_with_a_scan(
            files in proptest::collection::btree_set("[a./-]{1,3}(/[a./-]{1,3}){0,2}", 1..12),
            rel in "[a./-]{1,3}(/[a./-]{1,3}){0,2}",
        ) {
            let files: BTreeMap<FilePath, Digest> = files
                .iter()
                .filter_map(|f| FilePath::parse(f).ok())
                .map(|f| (f, Digest::of(b"x")))
                .collect();
            proptest::prop_assume!(!files.is_empty());
            let entry = BundleEntry::from_files(files.clone());
            let scanned = files.keys().any(|f| {
                f.as_str() == rel || crate::paths::is_segment_ancestor(&rel, f.as_str())
            });
            proptest::prop_assert_eq!(entry.records(&rel), scanned);
        }
    }

    pub(crate) const CANONICAL_EXAMPLE: &str =
        include_str!("../../../tests/golden/canonical-example.json");

    fn rules_of(text: &str) -> Vec<ValidityRule> {
        Lockfile::parse(text.as_bytes())
            .expect_err(text)
            .violations
            .iter()
            .map(|v| v.rule)
            .collect()
    }

    #[test]
    fn canonical_example_round_trips_byte_for_byte() {
        let lock = Lockfile::parse(CANONICAL_EXAMPLE.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(lock.to_canonical_bytes()).unwrap(),
            CANONICAL_EXAMPLE
        );
    }

    #[test]
    fn empty_lockfile_bytes() {
        let bytes = Lockfile::empty(Policy::Block).to_canonical_bytes();
        assert_eq!(
            bytes,
            b"{\n  \"version\": 1,\n  \"policy\": \"block\",\n  \"bundles\": {}\n}\n"
        );
        assert_eq!(
            Lockfile::parse(&bytes).unwrap(),
            Lockfile::empty(Policy::Block)
        );
    }

    #[test]
    fn field_names_are_case_sensitive() {
        let rules = rules_of(r#"{"Version": 1, "version": 1, "policy": "block", "bundles": {}}"#);
        assert_eq!(rules, [ValidityRule::UnknownField]);
    }

    #[test]
    fn version_rules() {
        let base = |v: &str| format!(r#"{{"version": {v}, "policy": "block", "bundles": {{}}}}"#);
        assert_eq!(rules_of(&base("2")), [ValidityRule::VersionUnsupported]);
        assert_eq!(rules_of(&base("1.0")), [ValidityRule::VersionNotInteger]);
        assert_eq!(rules_of(&base("1e0")), [ValidityRule::VersionNotInteger]);
        assert_eq!(rules_of(&base("\"1\"")), [ValidityRule::VersionNotInteger]);
        assert_eq!(rules_of(&base("null")), [ValidityRule::VersionNotInteger]);
        assert_eq!(
            rules_of(r#"{"policy": "block", "bundles": {}}"#),
            [ValidityRule::VersionMissing]
        );
    }

    #[test]
    fn policy_rules() {
        let base = |p: &str| format!(r#"{{"version": 1, "policy": {p}, "bundles": {{}}}}"#);
        assert_eq!(rules_of(&base("\"Block\"")), [ValidityRule::PolicyInvalid]);
        assert_eq!(rules_of(&base("\"audit\"")), [ValidityRule::PolicyInvalid]);
        assert_eq!(rules_of(&base("null")), [ValidityRule::PolicyInvalid]);
        assert_eq!(
            rules_of(r#"{"version": 1, "bundles": {}}"#),
            [ValidityRule::PolicyMissing]
        );
    }

    #[test]
    fn bundles_and_discovery_shapes() {
        assert_eq!(
            rules_of(r#"{"version": 1, "policy": "warn"}"#),
            [ValidityRule::BundlesMissing]
        );
        assert_eq!(
            rules_of(r#"{"version": 1, "policy": "warn", "bundles": null}"#),
            [ValidityRule::BundlesNotObject]
        );
        assert_eq!(
            rules_of(r#"{"version": 1, "discovery": null, "policy": "warn", "bundles": {}}"#),
            [ValidityRule::DiscoveryNotArray]
        );
        assert_eq!(
            rules_of(r#"{"version": 1, "discovery": [1], "policy": "warn", "bundles": {}}"#),
            [ValidityRule::PatternNotString]
        );
        assert!(
            Lockfile::parse(br#"{"version": 1, "discovery": [], "policy": "warn", "bundles": {}}"#)
                .is_ok()
        );
    }

    #[test]
    fn json_level_rules() {
        assert_eq!(
            rules_of("{\"version\": 1, \"policy\": \"block\", \"bundles\": {}} x"),
            [ValidityRule::NotJson]
        );
        assert_eq!(
            rules_of(r#"{"version": 1, "policy": "block", "policy": "warn", "bundles": {}}"#),
            [ValidityRule::NotJson]
        );
        assert_eq!(rules_of("[]"), [ValidityRule::NotAnObject]);
    }
}

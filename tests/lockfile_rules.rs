//! One test per validity rule of SPEC §Lockfile Validity and the seeds'
//! lockfile reference, through the public parser: each invalid lockfile must be
//! rejected with exactly the named [`ValidityRule`] (and nothing else, unless a second
//! rule is necessarily broken too), and the message must name the offending
//! value. The golden files in tests/golden/ pin the canonical writer.

use seal_core::lockfile::{Lockfile, LockfileError, Policy, ValidityRule};
use sha2::{Digest as _, Sha256};
use unicode_normalization::UnicodeNormalization;

// ---------------------------------------------------------------------------
// Building lockfile text
// ---------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sha256:` + hex of SHA-256 of `data`.
fn sha(data: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(data)))
}

/// A per-file hash distinct for each `n`.
fn h(n: u8) -> String {
    sha(&[n])
}

/// The aggregate content hash, computed here from the spec formula (NFC,
/// byte-order sort, `path:hash` joined by LF, SHA-256).
fn agg(files: &[(&str, &str)]) -> String {
    let mut entries: Vec<(String, &str)> =
        files.iter().map(|(p, d)| (p.nfc().collect(), *d)).collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let joined: Vec<String> = entries.iter().map(|(p, d)| format!("{p}:{d}")).collect();
    sha(joined.join("\n").as_bytes())
}

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A bundle entry object whose contentHash matches its files.
fn entry(files: &[(&str, &str)]) -> String {
    entry_with(&agg(files), files)
}

fn entry_with(content_hash: &str, files: &[(&str, &str)]) -> String {
    let members: Vec<String> = files
        .iter()
        .map(|(p, d)| format!("{}: {}", js(p), js(d)))
        .collect();
    format!(
        "{{\"contentHash\": {}, \"files\": {{{}}}}}",
        js(content_hash),
        members.join(", ")
    )
}

/// A lockfile with the given discovery patterns and `(key, entry JSON)` pairs.
fn lock(discovery: &[&str], bundles: &[(&str, String)]) -> String {
    let patterns: Vec<String> = discovery.iter().map(|p| js(p)).collect();
    let members: Vec<String> = bundles
        .iter()
        .map(|(k, e)| format!("{}: {e}", js(k)))
        .collect();
    format!(
        "{{\"version\": 1, \"discovery\": [{}], \"policy\": \"block\", \"bundles\": {{{}}}}}",
        patterns.join(", "),
        members.join(", ")
    )
}

/// One ordinary valid bundle entry.
fn ok_entry() -> String {
    entry(&[("SKILL.md", &h(1))])
}

fn parse_err(text: &str) -> LockfileError {
    match Lockfile::parse(text.as_bytes()) {
        Ok(l) => panic!("accepted an invalid lockfile:\n{text}\nparsed as {l:?}"),
        Err(e) => e,
    }
}

fn rules(text: &str) -> Vec<ValidityRule> {
    parse_err(text).violations.iter().map(|v| v.rule).collect()
}

/// Asserts that `text` breaks exactly `rule` (once) and returns the message.
#[track_caller]
fn only(text: &str, rule: ValidityRule) -> String {
    let e = parse_err(text);
    let got: Vec<ValidityRule> = e.violations.iter().map(|v| v.rule).collect();
    assert_eq!(got, [rule], "for lockfile:\n{text}\nerror: {e}");
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("[{}]", rule.name())),
        "message does not name the rule: {shown}"
    );
    e.violations[0].message.clone()
}

#[track_caller]
fn accepted(text: &str) -> Lockfile {
    Lockfile::parse(text.as_bytes()).unwrap_or_else(|e| panic!("rejected:\n{text}\n{e}"))
}

const EMPTY: &str = "{\"version\": 1, \"policy\": \"block\", \"bundles\": {}}";

// ---------------------------------------------------------------------------
// JSON level: syntax, duplicates, trailing content, encoding
// ---------------------------------------------------------------------------

#[test]
fn not_json_at_all() {
    for bad in [
        "",
        " ",
        "{",
        "}",
        "nul",
        "{\"version\": 1,}",
        "{'version': 1}",
        "{version: 1}",
    ] {
        only(bad, ValidityRule::NotJson);
    }
}

#[test]
fn top_level_must_be_an_object() {
    for (bad, what) in [
        ("[]", "an array"),
        ("1", "a number"),
        ("null", "null"),
        ("\"x\"", "a string"),
        ("true", "a boolean"),
    ] {
        let msg = only(bad, ValidityRule::NotAnObject);
        assert!(msg.contains(what), "{msg}");
    }
}

#[test]
fn trailing_garbage_is_rejected() {
    for tail in [" x", "{}", "\n{}", ",", "\n\n}", " null", "\u{0}"] {
        let text = format!("{EMPTY}{tail}");
        let msg = only(&text, ValidityRule::NotJson);
        assert!(
            msg.contains("after the JSON value") || msg.contains("expected"),
            "{msg}"
        );
    }
    // Trailing whitespace, including a final newline, is fine.
    accepted(&format!("{EMPTY}\n\n  \t\r\n"));
}

#[test]
fn duplicate_keys_at_the_top_level() {
    let text = "{\"version\": 1, \"policy\": \"block\", \"policy\": \"block\", \"bundles\": {}}";
    let msg = only(text, ValidityRule::NotJson);
    assert!(msg.contains("duplicate object key \"policy\""), "{msg}");
    // Same key after unescaping.
    only(
        "{\"version\": 1, \"\\u0076ersion\": 1, \"policy\": \"block\", \"bundles\": {}}",
        ValidityRule::NotJson,
    );
}

#[test]
fn duplicate_keys_in_bundles_entries_and_files() {
    let e = ok_entry();
    // Twice the same bundle key.
    let text = format!(
        "{{\"version\": 1, \"discovery\": [\"s/*\"], \"policy\": \"block\", \"bundles\": {{\"./s/a\": {e}, \"./s/a\": {e}}}}}"
    );
    let msg = only(&text, ValidityRule::NotJson);
    assert!(msg.contains("duplicate object key \"./s/a\""), "{msg}");
    // Twice "files" inside an entry.
    let files = format!("{{\"SKILL.md\": \"{}\"}}", h(1));
    let dup_field = format!(
        "{{\"contentHash\": \"{}\", \"files\": {files}, \"files\": {files}}}",
        agg(&[("SKILL.md", &h(1))])
    );
    only(
        &lock(&["s/*"], &[("./s/a", dup_field)]),
        ValidityRule::NotJson,
    );
    // Twice a file path.
    let dup_file = format!(
        "{{\"contentHash\": \"{}\", \"files\": {{\"SKILL.md\": \"{}\", \"SKILL.md\": \"{}\"}}}}",
        agg(&[("SKILL.md", &h(1))]),
        h(1),
        h(1)
    );
    let msg = only(
        &lock(&["s/*"], &[("./s/a", dup_file)]),
        ValidityRule::NotJson,
    );
    assert!(msg.contains("line 1"), "position is named: {msg}");
}

#[test]
fn invalid_utf8_is_rejected() {
    let mut bytes = lock(&["s/*"], &[("./s/a", ok_entry())]).into_bytes();
    let at = bytes.iter().position(|&b| b == b'S').unwrap();
    bytes[at] = 0xff;
    let e = Lockfile::parse(&bytes).unwrap_err();
    assert_eq!(e.violations.len(), 1);
    assert_eq!(e.violations[0].rule, ValidityRule::NotJson);
    assert!(e.violations[0].message.contains("UTF-8"), "{e}");
    // An overlong encoding and a lone continuation byte.
    for bad in [
        &b"{\"version\": 1, \"policy\": \"\xc0\xafblock\", \"bundles\": {}}"[..],
        b"\x80{}",
    ] {
        assert!(Lockfile::parse(bad).unwrap_err().has(ValidityRule::NotJson));
    }
}

#[test]
fn byte_order_mark_is_rejected() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(EMPTY.as_bytes());
    let e = Lockfile::parse(&bytes).unwrap_err();
    assert_eq!(
        e.violations.iter().map(|v| v.rule).collect::<Vec<_>>(),
        [ValidityRule::NotJson]
    );
    assert!(e.to_string().contains("byte-order mark"), "{e}");
}

#[test]
fn lone_surrogates_and_raw_control_characters_are_rejected() {
    for bad in [
        "{\"version\": 1, \"policy\": \"\\ud800\", \"bundles\": {}}",
        "{\"version\": 1, \"policy\": \"\\udc00\", \"bundles\": {}}",
        "{\"version\": 1, \"policy\": \"\\ud800\\u0041\", \"bundles\": {}}",
        "{\"version\": 1, \"policy\": \"blo\nck\", \"bundles\": {}}",
        "{\"version\": 1, \"policy\": \"\\x\", \"bundles\": {}}",
    ] {
        only(bad, ValidityRule::NotJson);
    }
}

#[test]
fn hostile_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "{{\"version\": 1, \"policy\": \"block\", \"bundles\": {{}}, \"x\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    only(&deep, ValidityRule::NotJson);
}

// ---------------------------------------------------------------------------
// Unknown fields, at every level, case-sensitive
// ---------------------------------------------------------------------------

#[test]
fn unknown_top_level_fields() {
    let msg = only(
        "{\"version\": 1, \"policy\": \"block\", \"bundles\": {}, \"extra\": true}",
        ValidityRule::UnknownField,
    );
    assert!(msg.contains("\"extra\""), "{msg}");
    // A case variant beside the real field is unknown, with a hint.
    let msg = only(
        "{\"version\": 1, \"Version\": 1, \"policy\": \"block\", \"bundles\": {}}",
        ValidityRule::UnknownField,
    );
    assert!(
        msg.contains("\"Version\"") && msg.contains("did you mean \"version\""),
        "{msg}"
    );
    // A case variant alone: unknown, and the real field is missing.
    assert_eq!(
        rules("{\"Version\": 1, \"policy\": \"block\", \"bundles\": {}}"),
        [ValidityRule::UnknownField, ValidityRule::VersionMissing]
    );
    assert_eq!(
        rules("{\"version\": 1, \"Policy\": \"block\", \"bundles\": {}}"),
        [ValidityRule::UnknownField, ValidityRule::PolicyMissing]
    );
    assert_eq!(
        rules("{\"version\": 1, \"policy\": \"block\", \"BUNDLES\": {}}"),
        [ValidityRule::UnknownField, ValidityRule::BundlesMissing]
    );
    assert_eq!(
        rules(&format!(
            "{{\"version\": 1, \"Discovery\": [\"s/*\"], \"policy\": \"block\", \"bundles\": {{\"./s/a\": {}}}}}",
            ok_entry()
        )),
        [ValidityRule::UnknownField, ValidityRule::DiscoveryRequired]
    );
    // Empty-string and null-valued unknown fields are still unknown.
    only(
        "{\"\": null, \"version\": 1, \"policy\": \"block\", \"bundles\": {}}",
        ValidityRule::UnknownField,
    );
}

#[test]
fn unknown_bundle_entry_fields() {
    let files = [("SKILL.md", h(1))];
    let f: Vec<(&str, &str)> = files.iter().map(|(p, d)| (*p, d.as_str())).collect();
    let base = entry(&f);
    for extra in [
        "\"extra\": 1",
        "\"ContentHash\": \"x\"",
        "\"Files\": {}",
        "\"Revision\": \"abc\"",
        "\"signature\": null",
    ] {
        let e = format!("{{{extra}, {}", &base[1..]);
        let msg = only(&lock(&["s/*"], &[("./s/a", e)]), ValidityRule::UnknownField);
        assert!(msg.contains("bundle ./s/a"), "{msg}");
    }
}

// ---------------------------------------------------------------------------
// version, policy, bundles, discovery: presence and types
// ---------------------------------------------------------------------------

fn with_version(v: &str) -> String {
    format!("{{\"version\": {v}, \"policy\": \"block\", \"bundles\": {{}}}}")
}

#[test]
fn version_must_be_the_integer_one() {
    accepted(&with_version("1"));
    for v in ["2", "0", "-1", "-0", "10", "100000000000000000000000000"] {
        let msg = only(&with_version(v), ValidityRule::VersionUnsupported);
        assert!(msg.contains(v), "{msg}");
    }
    for v in [
        "1.0", "1e0", "1E0", "0.1e1", "1.5", "\"1\"", "null", "true", "[1]", "{}",
    ] {
        only(&with_version(v), ValidityRule::VersionNotInteger);
    }
    only(
        "{\"policy\": \"block\", \"bundles\": {}}",
        ValidityRule::VersionMissing,
    );
}

#[test]
fn policy_must_be_block_or_warn_exactly() {
    let p = |v: &str| format!("{{\"version\": 1, \"policy\": {v}, \"bundles\": {{}}}}");
    assert_eq!(accepted(&p("\"block\"")).policy, Policy::Block);
    assert_eq!(accepted(&p("\"warn\"")).policy, Policy::Warn);
    for v in [
        "\"Block\"",
        "\"BLOCK\"",
        "\"Warn\"",
        "\"WARN\"",
        "\" block\"",
        "\"block \"",
        "\"\"",
        "\"audit\"",
        "\"off\"",
    ] {
        let msg = only(&p(v), ValidityRule::PolicyInvalid);
        assert!(msg.contains(v), "the value is named: {msg}");
    }
    for v in ["null", "1", "true", "[\"block\"]", "{}"] {
        only(&p(v), ValidityRule::PolicyInvalid);
    }
    only(
        "{\"version\": 1, \"bundles\": {}}",
        ValidityRule::PolicyMissing,
    );
}

#[test]
fn bundles_is_a_required_object() {
    only(
        "{\"version\": 1, \"policy\": \"block\"}",
        ValidityRule::BundlesMissing,
    );
    for v in ["null", "[]", "\"\"", "0", "true"] {
        only(
            &format!("{{\"version\": 1, \"policy\": \"block\", \"bundles\": {v}}}"),
            ValidityRule::BundlesNotObject,
        );
    }
}

#[test]
fn discovery_is_absent_or_an_array_of_strings() {
    let d = |v: &str| {
        format!("{{\"version\": 1, \"discovery\": {v}, \"policy\": \"block\", \"bundles\": {{}}}}")
    };
    accepted(&d("[]"));
    accepted(&d("[\"skills/*\"]"));
    for v in ["null", "\"skills/*\"", "{}", "1", "true"] {
        let msg = only(&d(v), ValidityRule::DiscoveryNotArray);
        assert!(msg.contains("discovery"), "{msg}");
    }
    for v in ["[1]", "[null]", "[[\"a\"]]", "[\"a\", {}]", "[true]"] {
        only(&d(v), ValidityRule::PatternNotString);
    }
}

#[test]
fn missing_everything_reports_every_rule() {
    assert_eq!(
        rules("{}"),
        [
            ValidityRule::VersionMissing,
            ValidityRule::PolicyMissing,
            ValidityRule::BundlesMissing
        ]
    );
}

// ---------------------------------------------------------------------------
// Discovery patterns
// ---------------------------------------------------------------------------

#[test]
fn every_malformed_pattern_is_rejected() {
    for (bad, words) in [
        ("**", "**"),
        ("skills/**", "**"),
        ("a/**/b", "**"),
        ("a**b", "**"),
        ("./skills", "./"),
        ("/skills", "starts with \"/\""),
        ("skills\\*", "backslash"),
        ("a//b", "repeated"),
        ("a/./b", "segment"),
        (".", "segment"),
        ("..", "segment"),
        ("a/..", "segment"),
        ("../a", "segment"),
        ("skills/", "trailing slash"),
        ("", "empty"),
    ] {
        let text = format!(
            "{{\"version\": 1, \"discovery\": [{}], \"policy\": \"block\", \"bundles\": {{}}}}",
            js(bad)
        );
        let msg = only(&text, ValidityRule::PatternMalformed);
        assert!(msg.contains(words), "{bad:?}: {msg}");
    }
}

#[test]
fn literal_special_characters_are_valid_patterns() {
    // ?, [, ], {, } are literal; single * anywhere in a segment is fine.
    accepted(&lock(&["a?[b]{c}", "x*y/*", ".hidden/*", "*.md"], &[]));
}

#[test]
fn nesting_patterns_are_rejected() {
    for (a, b) in [
        ("skills", "skills/*"),
        ("skills/*", "skills/foo/*"),
        ("skills/*", "skills/foo/bar"),
        ("*", ".claude/skills/*"),
        ("a*", "*b/c"),
        (".claude/*", ".claude/skills/*"),
        ("x", "x/y/z"),
    ] {
        for (p, q) in [(a, b), (b, a)] {
            let msg = only(&lock(&[p, q], &[]), ValidityRule::PatternsNest);
            assert!(msg.contains(a) && msg.contains(b), "{msg}");
        }
    }
}

#[test]
fn non_nesting_patterns_are_accepted() {
    for set in [
        &["skills/*", "skills-extra/*"][..],
        &["skills/*", "agents/*"],
        &["skills/*", "skills/*"], // exact duplicate production is not nesting
        &["*/*", "a/b"],           // equal depth never nests
        &[".claude/skills/*", ".claude/commands/*"],
        &["a/x*", "a/y*/z"],
        &["skills", "skills-extra/*"],
    ] {
        accepted(&lock(set, &[]));
    }
}

// ---------------------------------------------------------------------------
// Bundles need discovery; keys must be statically produced
// ---------------------------------------------------------------------------

#[test]
fn bundles_without_discovery_are_rejected() {
    let text = format!(
        "{{\"version\": 1, \"policy\": \"block\", \"bundles\": {{\"./s/a\": {}}}}}",
        ok_entry()
    );
    let msg = only(&text, ValidityRule::DiscoveryRequired);
    assert!(msg.contains("discovery"), "{msg}");
}

#[test]
fn empty_discovery_produces_nothing() {
    let msg = only(
        &lock(&[], &[("./s/a", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    assert!(msg.contains("./s/a"), "{msg}");
}

#[test]
fn key_not_produced_explains_whole_root_versus_per_child() {
    // Whole-root discovery does not produce a child key.
    let msg = only(
        &lock(&["skills"], &[("./skills/foo", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    for part in [
        "./skills/foo",
        "\"skills\"",
        "recursive",
        "./skills",
        "\"skills/*\"",
        "per-child",
        "re-pin",
    ] {
        assert!(msg.contains(part), "missing {part:?} in: {msg}");
    }
    // Per-child discovery does not produce the parent.
    let msg = only(
        &lock(&["skills/*"], &[("./skills", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    for part in ["./skills", "\"skills/*\"", "add \"skills\""] {
        assert!(msg.contains(part), "missing {part:?} in: {msg}");
    }
    // Unrelated pattern: offers both shapes.
    let msg = only(
        &lock(&["other/*"], &[("./x/y", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    for part in [
        "./x/y",
        "\"x/y\"",
        "\"x/*\"",
        "this root only",
        "each child",
    ] {
        assert!(msg.contains(part), "missing {part:?} in: {msg}");
    }
    // Wildcards are per segment: `*` does not produce a two-segment key.
    only(
        &lock(&["*"], &[("./a/b", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    // `?` is literal.
    only(
        &lock(&["skills/?"], &[("./skills/a", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
    // Case-sensitive.
    only(
        &lock(&["Skills/*"], &[("./skills/a", ok_entry())]),
        ValidityRule::KeyNotProduced,
    );
}

#[test]
fn produced_keys_are_accepted() {
    let l = accepted(&lock(
        &["skills/*", ".github/copilot-instructions.md", "x*y/*"],
        &[
            ("./skills/.hidden", ok_entry()),
            ("./skills/a", ok_entry()),
            ("./.github/copilot-instructions.md", entry(&[(".", &h(2))])),
            ("./xy/z", ok_entry()),
            ("./x-long-y/z", ok_entry()),
        ],
    ));
    assert_eq!(l.bundles.len(), 5);
}

// ---------------------------------------------------------------------------
// Bundle keys
// ---------------------------------------------------------------------------

#[test]
fn every_malformed_key_is_rejected() {
    for (bad, words) in [
        ("skills/a", "does not start with \"./\""),
        (".", "project root"),
        ("./", "project root"),
        ("", "empty"),
        ("/abs", "absolute"),
        ("./a/../b", "\"..\""),
        ("./..", "\"..\""),
        ("./a/..", "\"..\""),
        ("./a/./b", "\".\""),
        ("./a//b", "repeated"),
        (".//a", "repeated"),
        ("./a/", "slash"),
        ("./a\\b", "backslash"),
        ("./a\rb", "carriage return"),
        ("./a\nb", "line feed"),
    ] {
        let msg = only(
            &lock(&["*"], &[(bad, ok_entry())]),
            ValidityRule::KeyMalformed,
        );
        assert!(msg.contains(words), "{bad:?}: {msg}");
    }
}

#[test]
fn keys_duplicated_after_nfc_are_rejected() {
    let text = lock(
        &["*"],
        &[("./caf\u{e9}", ok_entry()), ("./cafe\u{301}", ok_entry())],
    );
    let msg = only(&text, ValidityRule::KeyDuplicateAfterNfc);
    assert!(msg.contains("NFC"), "{msg}");
    // Also when one spelling is a JSON escape.
    let text = format!(
        "{{\"version\": 1, \"discovery\": [\"*\"], \"policy\": \"block\", \"bundles\": {{\"./caf\\u00e9\": {e}, \"./cafe\\u0301\": {e}}}}}",
        e = ok_entry()
    );
    only(&text, ValidityRule::KeyDuplicateAfterNfc);
}

#[test]
fn nfd_keys_are_normalised() {
    let l = accepted(&lock(&["*"], &[("./cafe\u{301}", ok_entry())]));
    let key = l.bundles.keys().next().unwrap();
    assert_eq!(key.as_str(), "./caf\u{e9}");
}

#[test]
fn nested_keys_are_rejected_by_segment() {
    // Two patterns producing a key and its descendant necessarily nest too.
    let text = lock(
        &["skills", "skills/*"],
        &[("./skills", ok_entry()), ("./skills/foo", ok_entry())],
    );
    let mut got = rules(&text);
    got.sort_by_key(|r| r.name());
    assert_eq!(got, [ValidityRule::KeyNested, ValidityRule::PatternsNest]);
    assert!(
        parse_err(&text)
            .to_string()
            .contains("./skills/foo is nested inside bundle key ./skills")
    );
    // Deeper nesting.
    let text = lock(
        &["a", "a/b/*"],
        &[("./a", ok_entry()), ("./a/b/c", ok_entry())],
    );
    assert!(parse_err(&text).has(ValidityRule::KeyNested));
    // Prefix but not a segment ancestor: fine.
    accepted(&lock(
        &["*"],
        &[("./skills", ok_entry()), ("./skills-extra", ok_entry())],
    ));
    accepted(&lock(
        &["skills/*"],
        &[("./skills/a", ok_entry()), ("./skills/ab", ok_entry())],
    ));
}

// ---------------------------------------------------------------------------
// Bundle entries
// ---------------------------------------------------------------------------

#[test]
fn entry_must_be_an_object() {
    for v in ["null", "[]", "\"x\"", "1"] {
        only(
            &lock(&["s/*"], &[("./s/a", v.to_string())]),
            ValidityRule::EntryNotObject,
        );
    }
}

#[test]
fn entry_fields_are_required_and_typed() {
    let files = format!("{{\"SKILL.md\": \"{}\"}}", h(1));
    let ch = agg(&[("SKILL.md", &h(1))]);
    let msg = only(
        &lock(&["s/*"], &[("./s/a", format!("{{\"files\": {files}}}"))]),
        ValidityRule::EntryFieldMissing,
    );
    assert!(msg.contains("contentHash"), "{msg}");
    let msg = only(
        &lock(
            &["s/*"],
            &[("./s/a", format!("{{\"contentHash\": \"{ch}\"}}"))],
        ),
        ValidityRule::EntryFieldMissing,
    );
    assert!(msg.contains("files"), "{msg}");
    for bad_hash in ["null", "1", "[]"] {
        only(
            &lock(
                &["s/*"],
                &[(
                    "./s/a",
                    format!("{{\"contentHash\": {bad_hash}, \"files\": {files}}}"),
                )],
            ),
            ValidityRule::EntryFieldWrongType,
        );
    }
    for bad_files in ["null", "[]", "\"SKILL.md\""] {
        only(
            &lock(
                &["s/*"],
                &[(
                    "./s/a",
                    format!("{{\"contentHash\": \"{ch}\", \"files\": {bad_files}}}"),
                )],
            ),
            ValidityRule::EntryFieldWrongType,
        );
    }
    // A file hash that is not a string.
    only(
        &lock(
            &["s/*"],
            &[(
                "./s/a",
                format!("{{\"contentHash\": \"{ch}\", \"files\": {{\"SKILL.md\": 1}}}}"),
            )],
        ),
        ValidityRule::EntryFieldWrongType,
    );
}

#[test]
fn revision_present_must_be_a_non_empty_string() {
    let body = &ok_entry()[1..];
    let msg = only(
        &lock(
            &["s/*"],
            &[("./s/a", format!("{{\"revision\": \"\", {body}"))],
        ),
        ValidityRule::RevisionEmpty,
    );
    assert!(msg.contains("revision"), "{msg}");
    for v in ["null", "1", "[]", "{}", "false"] {
        only(
            &lock(
                &["s/*"],
                &[("./s/a", format!("{{\"revision\": {v}, {body}"))],
            ),
            ValidityRule::EntryFieldWrongType,
        );
    }
    let l = accepted(&lock(
        &["s/*"],
        &[("./s/a", format!("{{\"revision\": \"abc123\", {body}"))],
    ));
    assert_eq!(
        l.bundles.values().next().unwrap().revision.as_deref(),
        Some("abc123")
    );
}

#[test]
fn hash_format_is_sha256_and_64_lowercase_hex() {
    let good = h(1);
    let digits = &good["sha256:".len()..];
    let bad_hashes = [
        format!("sha256:{}", digits.to_uppercase()),
        format!("sha256:{}", &digits[..63]),
        format!("sha256:{digits}0"),
        format!("SHA256:{digits}"),
        format!("sha512:{digits}"),
        format!("sha256-{digits}"),
        digits.to_string(),
        format!("sha256:{}g", &digits[..63]),
        format!(" sha256:{digits}"),
        String::new(),
    ];
    for bad in &bad_hashes {
        // As a contentHash.
        let text = lock(
            &["s/*"],
            &[("./s/a", entry_with(bad, &[("SKILL.md", &good)]))],
        );
        let msg = only(&text, ValidityRule::HashMalformed);
        assert!(msg.contains("contentHash"), "{msg}");
        // As a file hash (the contentHash is computed over the bad text, so
        // only the format rule can fire).
        let text = lock(&["s/*"], &[("./s/a", entry(&[("SKILL.md", bad)]))]);
        let msg = only(&text, ValidityRule::HashMalformed);
        assert!(msg.contains("SKILL.md"), "{msg}");
    }
}

#[test]
fn files_must_not_be_empty() {
    let text = lock(&["s/*"], &[("./s/a", entry_with(&sha(b""), &[]))]);
    let msg = only(&text, ValidityRule::FilesEmpty);
    assert!(msg.contains("./s/a"), "{msg}");
}

#[test]
fn dot_is_only_valid_as_the_sole_entry() {
    accepted(&lock(
        &["docs/*"],
        &[("./docs/p.md", entry(&[(".", &h(1))]))],
    ));
    let text = lock(
        &["docs/*"],
        &[("./docs/p", entry(&[(".", &h(1)), ("a", &h(2))]))],
    );
    only(&text, ValidityRule::SingleFileDotNotSole);
}

#[test]
fn every_malformed_file_path_is_rejected() {
    for (bad, words) in [
        ("", "empty"),
        ("/x", "absolute"),
        ("./x", "starts with \"./\""),
        ("a//b", "repeated"),
        ("a/", "slash"),
        ("a/../b", "\"..\""),
        ("../x", "\"..\""),
        ("..", "\"..\""),
        ("a/./b", "\".\""),
        ("a/.", "\".\""),
        ("./", "starts with \"./\""),
        ("a\\b", "backslash"),
    ] {
        let text = lock(&["s/*"], &[("./s/a", entry(&[(bad, &h(1))]))]);
        let msg = only(&text, ValidityRule::FilePathMalformed);
        assert!(msg.contains(words), "{bad:?}: {msg}");
    }
}

#[test]
fn unusual_but_legal_file_names_are_accepted() {
    let names = [
        "a\nb",
        "a\rb",
        "tab\there",
        "esc\u{1b}[31m",
        "<>&",
        "\u{202e}evil",
        ".hidden",
        "sp ace",
        "x?[y]{z}*",
        "del\u{7f}",
    ];
    let files: Vec<(&str, String)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (*n, h(i as u8)))
        .collect();
    let f: Vec<(&str, &str)> = files.iter().map(|(p, d)| (*p, d.as_str())).collect();
    let l = accepted(&lock(&["s/*"], &[("./s/a", entry(&f))]));
    assert_eq!(l.bundles.values().next().unwrap().files.len(), names.len());
}

#[test]
fn file_paths_colliding_after_nfc_are_rejected() {
    let text = lock(
        &["s/*"],
        &[(
            "./s/a",
            entry(&[("caf\u{e9}", &h(1)), ("cafe\u{301}", &h(2))]),
        )],
    );
    let msg = only(&text, ValidityRule::FilePathDuplicateAfterNfc);
    assert!(msg.contains("NFC"), "{msg}");
    let text = lock(
        &["s/*"],
        &[(
            "./s/a",
            entry(&[("d/\u{c5}", &h(1)), ("d/A\u{30a}", &h(2))]),
        )],
    );
    only(&text, ValidityRule::FilePathDuplicateAfterNfc);
}

#[test]
fn content_hash_must_equal_the_aggregate() {
    let files = [("SKILL.md", h(1).clone()), ("scripts/run.sh", h(2))];
    let f: Vec<(&str, &str)> = files.iter().map(|(p, d)| (*p, d.as_str())).collect();
    // The hash of one file only, of the files in the wrong order, with a
    // trailing newline: all wrong.
    let wrong_order = sha(format!("scripts/run.sh:{}\nSKILL.md:{}", h(2), h(1)).as_bytes());
    let trailing_lf = sha(format!("SKILL.md:{}\nscripts/run.sh:{}\n", h(1), h(2)).as_bytes());
    for wrong in [agg(&f[..1]), wrong_order, trailing_lf, sha(b"test")] {
        let msg = only(
            &lock(&["s/*"], &[("./s/a", entry_with(&wrong, &f))]),
            ValidityRule::ContentHashMismatch,
        );
        assert!(msg.contains(&wrong) && msg.contains(&agg(&f)), "{msg}");
    }
    accepted(&lock(&["s/*"], &[("./s/a", entry(&f))]));
}

#[test]
fn content_hash_uses_nfc_paths() {
    // Recorded in NFD; the aggregate is over the NFC form.
    let nfd = "cafe\u{301}.md";
    let nfc_agg = agg(&[("caf\u{e9}.md", &h(1))]);
    let raw_agg = sha(format!("{nfd}:{}", h(1)).as_bytes());
    assert_ne!(nfc_agg, raw_agg);
    accepted(&lock(
        &["s/*"],
        &[("./s/a", entry_with(&nfc_agg, &[(nfd, &h(1))]))],
    ));
    only(
        &lock(
            &["s/*"],
            &[("./s/a", entry_with(&raw_agg, &[(nfd, &h(1))]))],
        ),
        ValidityRule::ContentHashMismatch,
    );
}

#[test]
fn several_problems_are_all_reported() {
    let text = "{\"version\": 2, \"discovery\": [\"a/\"], \"policy\": \"Block\", \"bundles\": {}, \"x\": 1}";
    let e = parse_err(text);
    let got: Vec<ValidityRule> = e.violations.iter().map(|v| v.rule).collect();
    assert_eq!(
        got,
        [
            ValidityRule::UnknownField,
            ValidityRule::VersionUnsupported,
            ValidityRule::PolicyInvalid,
            ValidityRule::PatternMalformed
        ]
    );
    assert!(
        e.to_string()
            .starts_with("seal.json is invalid (4 problems):"),
        "{e}"
    );
}

#[test]
fn names_in_messages_are_escaped() {
    let msg = only(
        "{\"version\": 1, \"ex\\u001b[31mtra\\u202e\": 1, \"policy\": \"block\", \"bundles\": {}}",
        ValidityRule::UnknownField,
    );
    assert!(msg.contains("ex\\u{001b}[31mtra\\u{202e}"), "{msg}");
    assert!(
        !msg.contains('\u{1b}') && !msg.contains('\u{202e}'),
        "{msg:?}"
    );
}

// ---------------------------------------------------------------------------
// Golden files
// ---------------------------------------------------------------------------

const CANONICAL: &str = include_str!("golden/canonical-example.json");
const SPEC_EXAMPLE: &str = include_str!("golden/spec-file-format-example.json");
const HAND_FORMATTED: &str = include_str!("golden/hand-formatted.json");
const HAND_FORMATTED_CANONICAL: &str = include_str!("golden/hand-formatted.canonical.json");
const GO_ESCAPING: &[u8] = include_bytes!("golden/go-escaping.json");

#[test]
fn golden_canonical_example_is_accepted_and_rewritten_identically() {
    let l = accepted(CANONICAL);
    assert_eq!(
        String::from_utf8(l.to_canonical_bytes()).unwrap(),
        CANONICAL
    );
    assert_eq!(l.bundles.len(), 2);
    let single = l
        .bundles
        .values()
        .find(|e| e.is_single_file())
        .expect("a single-file root");
    assert_eq!(single.files.len(), 1);
}

#[test]
fn golden_spec_file_format_example_is_rejected_for_its_content_hash() {
    let msg = only(SPEC_EXAMPLE, ValidityRule::ContentHashMismatch);
    assert!(
        msg.contains("sha256:9fe7f798a33bac89fa4fc396647caa03a17b64372af0b000dcfe89f1e10d4442"),
        "{msg}"
    );
}

#[test]
fn golden_hand_formatted_lockfile_parses_to_the_canonical_state() {
    let hand = accepted(HAND_FORMATTED);
    let canonical = accepted(HAND_FORMATTED_CANONICAL);
    assert_eq!(hand, canonical);
    assert_ne!(
        HAND_FORMATTED.as_bytes(),
        HAND_FORMATTED_CANONICAL.as_bytes()
    );
    assert_eq!(
        String::from_utf8(hand.to_canonical_bytes()).unwrap(),
        HAND_FORMATTED_CANONICAL
    );
    assert_eq!(
        hand.bundles
            .values()
            .find_map(|e| e.revision.clone())
            .as_deref(),
        Some("v1.2.3 <main> & co")
    );
}

#[test]
fn golden_go_escaping_is_reproduced() {
    // The file is encoding/json output (see docs/LOCKFILE.md): HTML-safe
    // escapes, U+2028/2029, short control escapes, \u00xx for other C0, DEL raw.
    let l = Lockfile::parse(GO_ESCAPING).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.to_canonical_bytes(), GO_ESCAPING);
    let text = std::str::from_utf8(GO_ESCAPING).unwrap();
    for escape in [
        "\\u003c", "\\u003e", "\\u0026", "\\u2028", "\\u2029", "\\b", "\\f", "\\n", "\\r", "\\t",
        "\\u0001", "\\u001b", "\\u001f", "\\\"", "\\\\",
    ] {
        assert!(text.contains(escape), "golden lacks {escape}");
    }
    assert!(text.contains('\u{7f}'), "DEL is written raw");
    assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
}

#[test]
fn empty_lockfile_bytes_are_exact() {
    let l = accepted(EMPTY);
    assert_eq!(
        l.to_canonical_bytes(),
        b"{\n  \"version\": 1,\n  \"policy\": \"block\",\n  \"bundles\": {}\n}\n"
    );
    // An empty discovery array is the same state as no discovery: omitted.
    let l2 =
        accepted("{\"version\": 1, \"discovery\": [], \"policy\": \"block\", \"bundles\": {}}");
    assert_eq!(l, l2);
    assert_eq!(l2.to_canonical_bytes(), l.to_canonical_bytes());
    let warn = accepted("{\"bundles\": {}, \"policy\": \"warn\", \"version\": 1}");
    assert_eq!(
        warn.to_canonical_bytes(),
        b"{\n  \"version\": 1,\n  \"policy\": \"warn\",\n  \"bundles\": {}\n}\n"
    );
}

#[test]
fn check_rejects_in_memory_models_the_parser_would_reject() {
    // Lockfile::check is what pin runs before writing.
    let mut l = accepted(CANONICAL);
    l.check().unwrap();
    let mut nested = l.clone();
    nested
        .discovery
        .push(seal_core::pattern::Pattern::parse(".claude").unwrap());
    let e = nested.check().unwrap_err();
    assert!(e.has(ValidityRule::PatternsNest), "{e}");
    l.discovery.clear();
    let e = l.check().unwrap_err();
    assert!(e.has(ValidityRule::DiscoveryRequired), "{e}");
}

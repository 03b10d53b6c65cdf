//! A proptest-driven fuzz harness over the lockfile parser and the pattern and
//! path rules (there is no nightly toolchain here for cargo-fuzz). Every target
//! asserts "no panic" plus invariants:
//!
//! - `Lockfile::parse` on arbitrary bytes, on byte-level mutations of valid
//!   lockfiles, and on structured near-valid JSON: when it succeeds the model
//!   passes `check`, and write -> parse -> write is a fixed point; when it
//!   fails every violation is named in the message;
//! - `Pattern::parse`, `produces` against an independent matcher,
//!   `can_nest_with` symmetric, irreflexive at equal depth, exact against a
//!   brute-force search on a small alphabet, and never missing a nesting
//!   witness built from the patterns themselves;
//! - `BundleKey::parse`, `FilePath::parse`, `normalize_user_path`: results are
//!   NFC, re-parse to themselves and obey every syntax rule.
//!
//! The tests are `#[ignore]`d so CI does not run them; `scripts/fuzz.sh
//! [MINUTES]` does. FUZZ_SECONDS (per target, default 0 = one batch) and
//! FUZZ_CASES (per batch, default 2000) control the length of a run.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use seal_core::lockfile::Lockfile;
use seal_core::paths::{BundleKey, FilePath, PathRule, normalize_user_path};
use seal_core::pattern::Pattern;
use sha2::{Digest as _, Sha256};
use unicode_normalization::{UnicodeNormalization, is_nfc};

// ---------------------------------------------------------------------------
// The driver: batches of proptest cases until the time budget is spent
// ---------------------------------------------------------------------------

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How long a target runs: a time budget (zero: one batch) and a batch size.
#[derive(Clone, Copy)]
struct Budget {
    time: Duration,
    cases: u32,
}

impl Budget {
    /// From FUZZ_SECONDS and FUZZ_CASES (scripts/fuzz.sh sets them).
    fn from_env() -> Budget {
        Budget {
            time: Duration::from_secs(env_u64("FUZZ_SECONDS", 0)),
            cases: env_u64("FUZZ_CASES", 2000) as u32,
        }
    }

    /// One small batch, for the smoke test in ordinary runs.
    fn smoke() -> Budget {
        Budget {
            time: Duration::ZERO,
            cases: 150,
        }
    }
}

fn fuzz<S, F>(name: &str, budget: Budget, strategy: S, test: F)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError>,
{
    let Budget {
        time: budget,
        cases,
    } = budget;
    let start = Instant::now();
    let mut total: u64 = 0;
    let mut batches = 0;
    loop {
        // A fresh runner per batch draws a fresh random seed.
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 20_000,
            ..Config::default()
        });
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("{name}: {e}");
        }
        total += u64::from(cases);
        batches += 1;
        if start.elapsed() >= budget {
            break;
        }
    }
    eprintln!(
        "fuzz {name}: {total} cases in {batches} batches, {:.0} s, no failure",
        start.elapsed().as_secs_f64()
    );
}

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

fn sha(data: &[u8]) -> String {
    let d = Sha256::digest(data);
    let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Content hash per the spec formula, over NFC paths.
fn aggregate(files: &[(String, String)]) -> String {
    let mut v: Vec<(String, &String)> = files.iter().map(|(p, h)| (p.nfc().collect(), h)).collect();
    v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    v.dedup_by(|a, b| a.0 == b.0);
    let lines: Vec<String> = v.iter().map(|(p, h)| format!("{p}:{h}")).collect();
    sha(lines.join("\n").as_bytes())
}

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Checks what a successful parse must guarantee.
fn check_parsed(l: &Lockfile, input: &[u8]) -> Result<(), TestCaseError> {
    l.check().map_err(|e| {
        TestCaseError::fail(format!(
            "parse accepted what check rejects: {e}\ninput: {:?}",
            String::from_utf8_lossy(input)
        ))
    })?;
    let bytes = l.to_canonical_bytes();
    let again = Lockfile::parse(&bytes).map_err(|e| {
        TestCaseError::fail(format!(
            "written lockfile does not parse: {e}\n{}",
            String::from_utf8_lossy(&bytes)
        ))
    })?;
    prop_assert_eq!(&again, l);
    prop_assert_eq!(again.to_canonical_bytes(), bytes);
    for key in l.bundles.keys() {
        prop_assert!(is_nfc(key.as_str()));
        prop_assert!(l.discovery.iter().any(|p| p.produces(key)));
    }
    Ok(())
}

fn check_parse(input: &[u8]) -> Result<(), TestCaseError> {
    match Lockfile::parse(input) {
        Ok(l) => check_parsed(&l, input),
        Err(e) => {
            prop_assert!(!e.violations.is_empty());
            let shown = e.to_string();
            for v in &e.violations {
                prop_assert!(!v.message.is_empty());
                let tag = format!("[{}]", v.rule.name());
                prop_assert!(shown.contains(&tag));
            }
            // Untrusted text never reaches a terminal raw.
            prop_assert!(
                !shown
                    .chars()
                    .any(|c| c == '\u{1b}' || c == '\r' || c == '\u{202e}'),
                "{:?}",
                shown
            );
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------
// Target 1: arbitrary bytes and byte-level mutations of valid lockfiles
// ---------------------------------------------------------------------------

const SEEDS: &[&[u8]] = &[
    include_bytes!("golden/canonical-example.json"),
    include_bytes!("golden/hand-formatted.json"),
    include_bytes!("golden/hand-formatted.canonical.json"),
    include_bytes!("golden/go-escaping.json"),
    include_bytes!("golden/spec-file-format-example.json"),
    b"{\"version\": 1, \"policy\": \"block\", \"bundles\": {}}",
];

/// Fragments that are interesting to splice into JSON.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u",
    "\\ud800",
    "\\u0000",
    "null",
    "true",
    "1",
    "1.0",
    "-0",
    "1e0",
    "\"version\"",
    "\"Version\"",
    "\"discovery\"",
    "\"policy\"",
    "\"bundles\"",
    "\"files\"",
    "\"contentHash\"",
    "\"revision\"",
    "\"./\"",
    "\".\"",
    "\"..\"",
    "\"**\"",
    "\"*\"",
    "/",
    "//",
    "\u{feff}",
    "\u{301}",
    "\u{e9}",
    "\n",
    "\r",
    "\t",
    " ",
    "\u{0}",
    "sha256:",
    "\"block\"",
    "\"warn\"",
];

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Token(usize, usize),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Edit::Flip(i, x)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| Edit::Insert(i, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Edit::Token(i, t)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Duplicate(i, n)),
    ]
}

fn mutate(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let len = v.len().max(1);
        match e {
            Edit::Flip(i, x) => {
                if !v.is_empty() {
                    let i = i % v.len();
                    v[i] ^= x;
                }
            }
            Edit::Delete(i, n) => {
                if !v.is_empty() {
                    let i = i % v.len();
                    let end = (i + n).min(v.len());
                    v.drain(i..end);
                }
            }
            Edit::Insert(i, b) => {
                let i = i % len;
                let i = i.min(v.len());
                v.splice(i..i, b.iter().copied());
            }
            Edit::Token(i, t) => {
                let i = (i % len).min(v.len());
                let tok = TOKENS[t % TOKENS.len()].as_bytes();
                v.splice(i..i, tok.iter().copied());
            }
            Edit::Duplicate(i, n) => {
                if !v.is_empty() {
                    let i = i % v.len();
                    let end = (i + n).min(v.len());
                    let piece = v[i..end].to_vec();
                    v.splice(end..end, piece);
                }
            }
        }
    }
    v
}

#[test]
#[ignore = "fuzz target: run by scripts/fuzz.sh"]
fn fuzz_lockfile_parse_bytes() {
    lockfile_parse_bytes(Budget::from_env());
}

fn lockfile_parse_bytes(budget: Budget) {
    let input = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        (0..SEEDS.len(), prop::collection::vec(edit(), 0..6))
            .prop_map(|(s, edits)| mutate(SEEDS[s], &edits)),
        (0..SEEDS.len(), prop::collection::vec(edit(), 0..3))
            .prop_map(|(s, edits)| mutate(SEEDS[s], &edits)),
    ];
    fuzz("lockfile-bytes", budget, input, |bytes| check_parse(&bytes));
}

// ---------------------------------------------------------------------------
// Target 2: structured, near-valid lockfile JSON
// ---------------------------------------------------------------------------

const GOOD_ATOMS: &[&str] = &[
    "a",
    "b",
    "skills",
    ".claude",
    "x.md",
    "-",
    "\u{e9}",
    "e\u{301}",
    "\u{c5}",
    "A\u{30a}",
    "<",
    "&",
    "?",
    "[",
    "{",
    " ",
    "\u{1f600}",
    "seal.json",
    ".git",
    "\u{1b}",
    "\t",
];

const BAD_ATOMS: &[&str] = &[
    "*", "**", ".", "..", "", "/", "//", "\\", "\r", "\n", "\u{0}", "\u{2028}", "\u{202e}",
    "\u{212b}",
];

fn atom() -> impl Strategy<Value = &'static str> {
    prop_oneof![12 => prop::sample::select(GOOD_ATOMS), 1 => prop::sample::select(BAD_ATOMS)]
}

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(atom(), 1..4).prop_map(|v| v.concat())
}

/// A key, often of the form `./seg/seg`.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::collection::vec(name(), 1..4).prop_map(|v| format!("./{}", v.join("/"))),
        1 => name(),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::collection::vec(name(), 1..4).prop_map(|v| v.join("/")),
        2 => Just(".".to_string()),
        1 => name(),
    ]
}

fn hash_text() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => any::<[u8; 4]>().prop_map(|b| sha(&b)),
        1 => any::<[u8; 4]>().prop_map(|b| sha(&b).to_uppercase()),
        1 => any::<[u8; 4]>().prop_map(|b| sha(&b)[..40].to_string()),
        1 => Just("sha256:".to_string()),
        1 => name(),
    ]
}

#[derive(Debug, Clone)]
struct Entry {
    revision: Option<String>,
    /// None: correct aggregate; Some: this text.
    content_hash: Option<String>,
    files: Vec<(String, String)>,
    extra_field: Option<String>,
    files_raw: Option<&'static str>,
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        prop::option::weighted(0.2, name()),
        prop::option::weighted(0.1, hash_text()),
        prop::collection::vec((path(), hash_text()), 0..4).prop_map(|mut v| {
            v.dedup_by(|a, b| a.0 == b.0);
            v
        }),
        prop::option::weighted(0.05, name()),
        prop::option::weighted(
            0.05,
            prop::sample::select(&["null", "[]", "\"x\"", "{}", "1"][..]),
        ),
    )
        .prop_map(
            |(revision, content_hash, files, extra_field, files_raw)| Entry {
                revision,
                content_hash,
                files,
                extra_field,
                files_raw,
            },
        )
}

#[derive(Debug, Clone)]
struct Doc {
    version: Option<&'static str>,
    policy: Option<&'static str>,
    discovery: Option<Vec<String>>,
    discovery_raw: Option<&'static str>,
    bundles: Vec<(String, Entry)>,
    bundles_raw: Option<&'static str>,
    extra: Option<String>,
    duplicate_top: bool,
    order: u64,
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        (
            prop::option::weighted(
                0.95,
                prop_oneof![
                    20 => Just("1"),
                    1 => prop::sample::select(&["2", "1.0", "\"1\"", "null", "0", "-1", "1e0"][..]),
                ],
            ),
            prop::option::weighted(
                0.95,
                prop_oneof![
                    10 => prop::sample::select(&["\"block\"", "\"warn\""][..]),
                    1 => prop::sample::select(&["\"Block\"", "null", "\"\"", "1"][..]),
                ],
            ),
            prop::option::weighted(
                0.8,
                prop::collection::vec(
                    prop_oneof![
                        3 => key().prop_map(|k| k.trim_start_matches("./").to_string()),
                        1 => name(),
                        2 => prop::collection::vec(prop_oneof![3 => name(), 1 => Just("*".to_string())], 1..3)
                            .prop_map(|v| v.join("/")),
                    ],
                    0..2,
                ),
            ),
            prop::option::weighted(0.03, prop::sample::select(&["null", "\"x\"", "{}", "[1]", "[null]"][..])),
        ),
        (
            prop::collection::vec((key(), entry()), 0..4),
            prop::option::weighted(0.03, prop::sample::select(&["null", "[]", "\"\"", "0"][..])),
            prop::option::weighted(0.03, name()),
            prop::bool::weighted(0.03),
            any::<u64>(),
        ),
    )
        .prop_map(
            |((version, policy, discovery, discovery_raw), (bundles, bundles_raw, extra, duplicate_top, order))| Doc {
                version,
                policy,
                discovery,
                discovery_raw,
                bundles,
                bundles_raw,
                extra,
                duplicate_top,
                order,
            },
        )
}

/// Makes keys producible: for every key, add its exact path as a pattern
/// (often the generated discovery is also kept, to exercise nesting).
fn render(d: &Doc) -> String {
    let mut top: Vec<String> = Vec::new();
    if let Some(v) = d.version {
        top.push(format!("\"version\": {v}"));
    }
    if let Some(p) = d.policy {
        top.push(format!("\"policy\": {p}"));
    }
    if let Some(raw) = d.discovery_raw {
        top.push(format!("\"discovery\": {raw}"));
    } else if let Some(patterns) = &d.discovery {
        let mut all: Vec<String> = patterns.clone();
        if d.order % 3 != 0 {
            for (k, _) in &d.bundles {
                all.push(k.trim_start_matches("./").to_string());
            }
        }
        let items: Vec<String> = all.iter().map(|p| js(p)).collect();
        top.push(format!("\"discovery\": [{}]", items.join(", ")));
    }
    if let Some(raw) = d.bundles_raw {
        top.push(format!("\"bundles\": {raw}"));
    } else {
        let mut members = Vec::new();
        for (k, e) in &d.bundles {
            let mut fields = Vec::new();
            if let Some(r) = &e.revision {
                fields.push(format!("\"revision\": {}", js(r)));
            }
            let ch = e
                .content_hash
                .clone()
                .unwrap_or_else(|| aggregate(&e.files));
            fields.push(format!("\"contentHash\": {}", js(&ch)));
            match e.files_raw {
                Some(raw) => fields.push(format!("\"files\": {raw}")),
                None => {
                    let f: Vec<String> = e
                        .files
                        .iter()
                        .map(|(p, h)| format!("{}: {}", js(p), js(h)))
                        .collect();
                    fields.push(format!("\"files\": {{{}}}", f.join(", ")));
                }
            }
            if let Some(x) = &e.extra_field {
                fields.push(format!("{}: 1", js(x)));
            }
            members.push(format!("{}: {{{}}}", js(k), fields.join(", ")));
        }
        top.push(format!("\"bundles\": {{{}}}", members.join(", ")));
    }
    if let Some(x) = &d.extra {
        top.push(format!("{}: true", js(x)));
    }
    if d.duplicate_top && !top.is_empty() {
        top.push(top[0].clone());
    }
    // Deterministic shuffle from `order`.
    let mut o = d.order;
    for i in (1..top.len()).rev() {
        o = o
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        top.swap(i, (o >> 33) as usize % (i + 1));
    }
    format!("{{{}}}", top.join(", "))
}

#[test]
#[ignore = "fuzz target: run by scripts/fuzz.sh"]
fn fuzz_lockfile_parse_structured() {
    lockfile_parse_structured(Budget::from_env());
}

fn lockfile_parse_structured(budget: Budget) {
    fuzz("lockfile-structured", budget, doc(), |d| {
        let text = render(&d);
        check_parse(text.as_bytes())
    });
}

/// A sanity check that the structured generator does reach valid lockfiles
/// (otherwise target 2 would only test error paths). Runs in CI: cheap.
#[test]
fn structured_generator_produces_valid_lockfiles() {
    // A fixed seed: the counts below are a property of the generator.
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 400,
            failure_persistence: None,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let mut valid = 0;
    let mut with_bundles = 0;
    let mut rules = std::collections::BTreeMap::new();
    for _ in 0..400 {
        let d = doc().new_tree(&mut runner).unwrap().current();
        match Lockfile::parse(render(&d).as_bytes()) {
            Ok(l) => {
                valid += 1;
                if !l.bundles.is_empty() {
                    with_bundles += 1;
                }
            }
            Err(e) => {
                for v in e.violations {
                    *rules.entry(v.rule.name()).or_insert(0) += 1;
                }
            }
        }
    }
    // Both sides are exercised: valid files with bundles, and many rules.
    assert!(
        valid >= 40 && with_bundles >= 10,
        "valid {valid}, with bundles {with_bundles}, errors {rules:?}"
    );
    assert!(
        rules.len() >= 12,
        "only {} rules reached: {rules:?}",
        rules.len()
    );
}

// ---------------------------------------------------------------------------
// Target 3: patterns
// ---------------------------------------------------------------------------

/// Independent `*` matcher (recursive, exponential but inputs are tiny).
fn glob_match(glob: &[char], name: &[char]) -> bool {
    match glob.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|i| glob_match(rest, &name[i..])),
        Some((c, rest)) => name.first() == Some(c) && glob_match(rest, &name[1..]),
    }
}

fn seg_match(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_match(&g, &n)
}

/// Brute force: does a real name (not "", ".", "..") over a small alphabet
/// match both segment globs? Complete for globs over {a, ., *} of length <= 3.
fn share_name_brute(a: &str, b: &str) -> bool {
    let alphabet = ['a', '.', 'z'];
    let max = a.len() + b.len() + 1;
    let mut names: Vec<String> = vec![String::new()];
    for _ in 0..max {
        let mut next = Vec::new();
        for n in &names {
            for c in alphabet {
                let mut m = n.clone();
                m.push(c);
                if m != "." && m != ".." && seg_match(a, &m) && seg_match(b, &m) {
                    return true;
                }
                next.push(m);
            }
        }
        names = next;
    }
    false
}

fn small_glob() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&["a", ".", "*"][..]), 1..4)
        .prop_map(|v| v.concat())
        .prop_filter("invalid segment", |s| {
            s != "." && s != ".." && !s.contains("**")
        })
}

fn small_pattern() -> impl Strategy<Value = String> {
    prop::collection::vec(small_glob(), 1..4).prop_map(|v| v.join("/"))
}

/// Instantiates each `*` of a pattern with a filler, giving a key it produces.
fn instantiate(pattern: &str, fill: &[String]) -> Option<String> {
    let mut i = 0;
    let mut segs = Vec::new();
    for seg in pattern.split('/') {
        let mut s = String::new();
        for c in seg.chars() {
            if c == '*' {
                s.push_str(&fill[i % fill.len()]);
                i += 1;
            } else {
                s.push(c);
            }
        }
        segs.push(s);
    }
    let key = format!("./{}", segs.join("/"));
    BundleKey::parse(&key).ok().map(|k| k.as_str().to_string())
}

#[test]
#[ignore = "fuzz target: run by scripts/fuzz.sh"]
fn fuzz_pattern_rules() {
    pattern_rules(Budget::from_env());
}

fn pattern_rules(budget: Budget) {
    let raw = prop_oneof![
        name(),
        prop::collection::vec(name(), 1..4).prop_map(|v| v.join("/")),
        small_pattern(),
    ];
    let fill = prop::collection::vec(
        prop::sample::select(&["", "a", "z", ".", "x.y", "\u{e9}"][..]).prop_map(String::from),
        1..4,
    );
    fuzz(
        "patterns",
        budget,
        (
            raw.clone(),
            raw,
            small_pattern(),
            small_pattern(),
            name(),
            fill,
        ),
        |(r1, r2, s1, s2, n, fill)| {
            let p1 = Pattern::parse(&r1);
            let p2 = Pattern::parse(&r2);
            for (raw, p) in [(&r1, &p1), (&r2, &p2)] {
                match p {
                    Err(rule) => {
                        // Rejected only for a rule the raw text really breaks.
                        let breaks = raw.is_empty()
                            || raw.contains("**")
                            || raw.starts_with('/')
                            || raw.contains('\\')
                            || raw.contains("//")
                            || raw.ends_with('/')
                            || raw.split('/').any(|s| s == "." || s == "..");
                        prop_assert!(breaks, "{:?} rejected: {:?}", raw, rule);
                    }
                    Ok(p) => {
                        prop_assert!(is_nfc(p.as_str()));
                        prop_assert!(!raw.is_empty() && !raw.contains("**") && !raw.contains('\\'));
                        prop_assert!(
                            !raw.starts_with('/') && !raw.starts_with("./") && !raw.ends_with('/')
                        );
                        prop_assert!(!raw.contains("//"));
                        prop_assert!(p.segments().all(|s| s != "." && s != ".." && !s.is_empty()));
                        prop_assert_eq!(Pattern::parse(p.as_str()), Ok(p.clone()));
                        prop_assert!(!p.can_nest_with(p), "a pattern never nests with itself");
                        // produces() against the independent matcher.
                        let key_raw = format!(
                            "./{}",
                            raw.replace('*', &n.replace(['/', '\\', '\r', '\n'], ""))
                        );
                        if let Ok(key) = BundleKey::parse(&key_raw) {
                            let expected = p.depth() == key.depth()
                                && p.segments()
                                    .zip(key.segments())
                                    .all(|(g, s)| seg_match(g, s));
                            prop_assert_eq!(
                                p.produces(&key),
                                expected,
                                "{} vs {}",
                                p.as_str(),
                                key.as_str()
                            );
                        }
                    }
                }
            }
            if let (Ok(a), Ok(b)) = (&p1, &p2) {
                prop_assert_eq!(
                    a.can_nest_with(b),
                    b.can_nest_with(a),
                    "symmetric: {} {}",
                    a.as_str(),
                    b.as_str()
                );
            }
            // Small-alphabet patterns: exact against brute force, and sound
            // against witnesses.
            let (a, b) = (Pattern::parse(&s1).unwrap(), Pattern::parse(&s2).unwrap());
            let nest = a.can_nest_with(&b);
            prop_assert_eq!(nest, b.can_nest_with(&a));
            let (short, long) = if a.depth() <= b.depth() {
                (&a, &b)
            } else {
                (&b, &a)
            };
            let brute = short.depth() < long.depth()
                && short
                    .segments()
                    .zip(long.segments())
                    .all(|(x, y)| share_name_brute(x, y));
            prop_assert_eq!(nest, brute, "{} vs {}", a.as_str(), b.as_str());
            if let (Some(ka), Some(kb)) = (
                instantiate(a.as_str(), &fill),
                instantiate(b.as_str(), &fill),
            ) {
                let (ka, kb) = (
                    BundleKey::parse(&ka).unwrap(),
                    BundleKey::parse(&kb).unwrap(),
                );
                prop_assert!(a.produces(&ka) && b.produces(&kb));
                if ka.is_ancestor_of(&kb) || kb.is_ancestor_of(&ka) {
                    prop_assert!(
                        nest,
                        "witness {} / {} but {} and {} do not nest",
                        ka.as_str(),
                        kb.as_str(),
                        a.as_str(),
                        b.as_str()
                    );
                }
            }
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------
// Target 4: bundle keys, file paths, user paths
// ---------------------------------------------------------------------------

#[test]
#[ignore = "fuzz target: run by scripts/fuzz.sh"]
fn fuzz_path_rules() {
    path_rules(Budget::from_env());
}

fn path_rules(budget: Budget) {
    let raw = prop_oneof![
        name(),
        key(),
        path(),
        prop::collection::vec(name(), 1..5).prop_map(|v| v.join("/")),
        any::<String>(),
    ];
    fuzz("paths", budget, (raw.clone(), raw), |(r, other)| {
        if let Ok(k) = BundleKey::parse(&r) {
            let s = k.as_str();
            prop_assert!(is_nfc(s));
            prop_assert!(s.starts_with("./") && s.len() > 2);
            prop_assert!(
                !s.contains('\\')
                    && !s.contains('\r')
                    && !s.contains('\n')
                    && !s.contains("//")
                    && !s.ends_with('/')
            );
            prop_assert!(
                k.segments()
                    .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
            );
            prop_assert_eq!(BundleKey::parse(s), Ok(k.clone()));
            let nfd: String = r.nfd().collect();
            prop_assert_eq!(BundleKey::parse(&nfd), Ok(k.clone()));
            prop_assert!(!k.is_ancestor_of(&k));
            if let Ok(o) = BundleKey::parse(&other) {
                let by_segments = {
                    let a: Vec<&str> = k.segments().collect();
                    let b: Vec<&str> = o.segments().collect();
                    a.len() < b.len() && b[..a.len()] == a[..]
                };
                prop_assert_eq!(k.is_ancestor_of(&o), by_segments);
                prop_assert!(!(k.is_ancestor_of(&o) && o.is_ancestor_of(&k)));
            }
        }
        match FilePath::parse(&r) {
            Ok(p) => {
                let s = p.as_str();
                prop_assert!(is_nfc(s));
                if p.is_single_file() {
                    prop_assert_eq!(s, ".");
                } else {
                    prop_assert!(
                        !s.is_empty()
                            && !s.starts_with('/')
                            && !s.starts_with("./")
                            && !s.ends_with('/')
                    );
                    prop_assert!(!s.contains('\\') && !s.contains("//"));
                    prop_assert!(
                        s.split('/')
                            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
                    );
                }
                prop_assert_eq!(FilePath::parse(s), Ok(p.clone()));
            }
            Err(rule) => {
                prop_assert!(
                    rule != PathRule::KeyMissingDotSlash && rule != PathRule::KeyIsProjectRoot
                );
            }
        }
        match normalize_user_path(&r) {
            Ok(segments) => {
                prop_assert!(!segments.is_empty());
                for s in &segments {
                    prop_assert!(!s.is_empty() && !s.contains('/') && s != "." && s != "..");
                    prop_assert!(is_nfc(s));
                }
                // Idempotent, and agrees with the key it names.
                let joined = segments.join("/");
                prop_assert_eq!(normalize_user_path(&joined), Ok(segments.clone()));
                if let Ok(k) = BundleKey::from_segments(&segments) {
                    let ks: Vec<&str> = k.segments().collect();
                    prop_assert_eq!(ks, segments.iter().map(String::as_str).collect::<Vec<_>>());
                    prop_assert_eq!(BundleKey::parse(&format!("./{joined}")), Ok(k.clone()));
                }
            }
            Err(rule) => {
                prop_assert!(
                    r.is_empty()
                        || r.contains('\\')
                        || r.contains(['\r', '\n'])
                        || r.split('/').any(|s| s == "." || s == "..")
                        || r.split('/').all(|s| s.is_empty() || s == "."),
                    "{:?} rejected with {:?}",
                    r,
                    rule
                );
            }
        }
        Ok(())
    });
}

/// Each fuzz target also runs one small batch in ordinary test runs, so the
/// harness itself cannot rot. Cheap: a few hundred cases each.
#[test]
fn fuzz_targets_smoke() {
    lockfile_parse_bytes(Budget::smoke());
    lockfile_parse_structured(Budget::smoke());
    pattern_rules(Budget::smoke());
    path_rules(Budget::smoke());
}

//! Property tests of the lockfile model and writer:
//!
//! - parse(write(x)) == x for generated valid lockfiles (non-ASCII, NFD input,
//!   `<>&`, control characters in file names, revisions, single-file roots);
//! - member order, whitespace, escapes and NFD spellings in the input never
//!   change the written bytes (nor does insertion order in the model);
//! - the content hash equals an independent computation with sha2 over the
//!   spec formula, both from a `files` map and from files on disk.
//!
//! Case counts are modest so `cargo nextest run` stays fast; raise them with
//! PROPTEST_CASES when hunting.

use std::collections::BTreeMap;

use proptest::prelude::*;
use seal_core::digest::{Digest, content_hash};
use seal_core::lockfile::{BundleEntry, Lockfile, Policy};
use seal_core::paths::{BundleKey, FilePath};
use seal_core::pattern::Pattern;
use sha2::{Digest as _, Sha256};
use unicode_normalization::UnicodeNormalization;

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Pieces of names: ASCII, precomposed and decomposed accents, CJK, emoji,
/// HTML-special characters, the literal glob characters, separators Go escapes,
/// a few control characters and DEL.
const KEY_ATOMS: &[&str] = &[
    "a",
    "b",
    "Z",
    "skill",
    "-",
    "_",
    ".",
    " ",
    "\u{e9}",
    "e\u{301}",
    "A\u{30a}",
    "\u{212b}", // ANGSTROM SIGN: NFC is U+00C5
    "\u{65e5}\u{672c}",
    "\u{1f600}",
    "<",
    ">",
    "&",
    "?",
    "[",
    "]",
    "{",
    "}",
    "\u{2028}",
    "\u{2029}",
    "\u{1b}",
    "\t",
    "\u{1}",
    "\u{8}",
    "\u{c}",
    "\u{7f}",
    "\u{202e}",
    "\"",
];

/// File names may also hold CR and LF.
const FILE_EXTRA_ATOMS: &[&str] = &["\n", "\r", "\u{1f}"];

fn segment_from(atoms: Vec<&'static str>) -> Option<String> {
    let s: String = atoms.concat();
    (s != "." && s != "..").then_some(s)
}

fn key_segment() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(KEY_ATOMS), 1..4)
        .prop_filter_map("dot segment", segment_from)
}

fn file_segment() -> impl Strategy<Value = String> {
    let atoms: Vec<&'static str> = KEY_ATOMS.iter().chain(FILE_EXTRA_ATOMS).copied().collect();
    prop::collection::vec(prop::sample::select(atoms), 1..4)
        .prop_filter_map("dot segment", segment_from)
}

fn file_path() -> impl Strategy<Value = String> {
    prop::collection::vec(file_segment(), 1..4).prop_map(|s| s.join("/"))
}

fn digest() -> impl Strategy<Value = Digest> {
    any::<[u8; 32]>().prop_map(Digest)
}

fn revision() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.3,
        prop::collection::vec(
            prop::sample::select(
                &[
                    "abc", "123", "v1.2", "<", ">", "&", "\\", "\"", "\n", "\u{1b}", "\u{e9}",
                    "e\u{301}", " ",
                ][..],
            ),
            1..5,
        )
        .prop_map(|v| v.concat()),
    )
}

/// A bundle entry with 1..6 files (or a single-file root), as raw strings that
/// may be NFD; duplicates after NFC are dropped.
fn entry(single_file: bool) -> impl Strategy<Value = BundleEntry> {
    let files = if single_file {
        digest().prop_map(|d| vec![(".".to_string(), d)]).boxed()
    } else {
        prop::collection::vec((file_path(), digest()), 1..6).boxed()
    };
    (files, revision()).prop_map(|(files, revision)| {
        let mut map = BTreeMap::new();
        for (raw, d) in files {
            map.entry(FilePath::parse(&raw).expect("generated path is valid"))
                .or_insert(d);
        }
        BundleEntry {
            revision,
            content_hash: content_hash(&map),
            files: map,
        }
    })
}

/// How one group of bundles is discovered; groups have distinct literal first
/// segments, so their patterns can never nest.
#[derive(Debug, Clone)]
enum Shape {
    /// `top` -> `./top`
    Whole,
    /// `top/*` -> `./top/<child>`
    Children(Vec<String>),
    /// `top/child` -> `./top/child`
    Literal(String),
    /// `top/pre*` -> `./top/pre<suffix>`
    Prefixed(String, Vec<String>),
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Whole),
        prop::collection::vec(key_segment(), 0..4).prop_map(Shape::Children),
        key_segment().prop_map(Shape::Literal),
        (
            key_segment(),
            prop::collection::vec(prop::option::of(key_segment()), 0..3)
        )
            .prop_map(|(pre, sfx)| {
                Shape::Prefixed(
                    pre,
                    sfx.into_iter().map(|s| s.unwrap_or_default()).collect(),
                )
            }),
    ]
}

/// A valid lockfile model.
fn lockfile() -> impl Strategy<Value = Lockfile> {
    let group = (key_segment(), shape(), any::<bool>());
    (
        prop::collection::vec(group, 0..5),
        prop::bool::ANY,
        prop::collection::vec((any::<bool>(), any::<u64>()), 12),
    )
        .prop_flat_map(|(groups, warn, picks)| {
            let mut seen_tops = std::collections::HashSet::new();
            let mut patterns = Vec::new();
            let mut keys: Vec<(BundleKey, bool)> = Vec::new();
            for ((top, shape, with_key), (single, _)) in
                groups.into_iter().zip(picks.iter().cycle())
            {
                let top_nfc: String = top.nfc().collect();
                if !seen_tops.insert(top_nfc) {
                    continue;
                }
                let (pattern, produced): (String, Vec<String>) = match shape {
                    Shape::Whole => (
                        top.clone(),
                        if with_key { vec![top.clone()] } else { vec![] },
                    ),
                    Shape::Children(children) => (
                        format!("{top}/*"),
                        children.iter().map(|c| format!("{top}/{c}")).collect(),
                    ),
                    Shape::Literal(child) => (
                        format!("{top}/{child}"),
                        if with_key {
                            vec![format!("{top}/{child}")]
                        } else {
                            vec![]
                        },
                    ),
                    Shape::Prefixed(pre, suffixes) => (
                        format!("{top}/{pre}*"),
                        suffixes.iter().map(|s| format!("{top}/{pre}{s}")).collect(),
                    ),
                };
                patterns.push(Pattern::parse(&pattern).expect("generated pattern is valid"));
                for rel in produced {
                    let key =
                        BundleKey::parse(&format!("./{rel}")).expect("generated key is valid");
                    if !keys.iter().any(|(k, _)| *k == key) {
                        keys.push((key, *single));
                    }
                }
            }
            patterns.sort();
            let entries: Vec<_> = keys.iter().map(|(_, single)| entry(*single)).collect();
            let keys: Vec<BundleKey> = keys.into_iter().map(|(k, _)| k).collect();
            (Just(patterns), Just(keys), entries, Just(warn))
        })
        .prop_map(|(discovery, keys, entries, warn)| Lockfile {
            discovery,
            policy: if warn { Policy::Warn } else { Policy::Block },
            bundles: keys.into_iter().zip(entries).collect(),
        })
}

// ---------------------------------------------------------------------------
// A second, deliberately different JSON writer for the same state
// ---------------------------------------------------------------------------

/// A tiny deterministic PRNG so one generated seed drives every choice.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
    fn ws(&mut self) -> &'static str {
        ["", "", " ", "\n", "\t", "\r\n", "  \n  "][self.below(7)]
    }
}

/// A JSON string literal with random (but valid) escaping choices.
fn messy_string(rng: &mut Rng, s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let must_escape = c == '"' || c == '\\' || (c as u32) < 0x20;
        if must_escape || rng.chance(6) {
            match c {
                '"' if rng.chance(2) => out.push_str("\\\""),
                '\\' if rng.chance(2) => out.push_str("\\\\"),
                '\n' if rng.chance(2) => out.push_str("\\n"),
                '/' if rng.chance(2) => out.push_str("\\/"),
                c => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        if rng.chance(2) {
                            out.push_str(&format!("\\u{:04x}", u));
                        } else {
                            out.push_str(&format!("\\u{:04X}", u));
                        }
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Maybe the NFD spelling of a path-like string (equal to it after NFC).
fn maybe_nfd(rng: &mut Rng, s: &str) -> String {
    if rng.chance(2) {
        s.nfd().collect()
    } else {
        s.to_string()
    }
}

fn messy_object(rng: &mut Rng, mut members: Vec<(String, String)>) -> String {
    rng.shuffle(&mut members);
    let mut out = String::from("{");
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(rng.ws());
        out.push_str(&messy_string(rng, k));
        out.push_str(rng.ws());
        out.push(':');
        out.push_str(rng.ws());
        out.push_str(v);
        out.push_str(rng.ws());
    }
    out.push('}');
    out
}

/// The same lockfile state written with shuffled members at every level,
/// shuffled discovery, random whitespace and escapes, and NFD spellings.
fn messy_json(l: &Lockfile, seed: u64) -> String {
    let mut rng = Rng(seed | 1);
    let mut bundles = Vec::new();
    for (key, e) in &l.bundles {
        let mut files = Vec::new();
        for (p, d) in &e.files {
            let name = maybe_nfd(&mut rng, p.as_str());
            let v = messy_string(&mut rng, &d.to_string());
            files.push((name, v));
        }
        let mut fields = vec![
            (
                "contentHash".to_string(),
                messy_string(&mut rng, &e.content_hash.to_string()),
            ),
            ("files".to_string(), messy_object(&mut rng, files)),
        ];
        if let Some(r) = &e.revision {
            fields.push(("revision".to_string(), messy_string(&mut rng, r)));
        }
        let k = maybe_nfd(&mut rng, key.as_str());
        bundles.push((k, messy_object(&mut rng, fields)));
    }
    let mut patterns: Vec<String> = l
        .discovery
        .iter()
        .map(|p| {
            let p = maybe_nfd(&mut rng, p.as_str());
            messy_string(&mut rng, &p)
        })
        .collect();
    rng.shuffle(&mut patterns);
    let mut top = vec![
        ("version".to_string(), "1".to_string()),
        (
            "policy".to_string(),
            messy_string(&mut rng, l.policy.as_str()),
        ),
        ("bundles".to_string(), messy_object(&mut rng, bundles)),
    ];
    if !l.discovery.is_empty() || rng.chance(2) {
        let ws = rng.ws();
        top.push((
            "discovery".to_string(),
            format!("[{ws}{}{ws}]", patterns.join(",")),
        ));
    }
    format!("{}{}{}", rng.ws(), messy_object(&mut rng, top), rng.ws())
}

// ---------------------------------------------------------------------------
// The independent content hash
// ---------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SPEC §Content Hash, from raw (possibly NFD) paths and hash strings.
fn spec_content_hash(files: &[(String, String)]) -> String {
    let mut lines: Vec<(Vec<u8>, String)> = files
        .iter()
        .map(|(p, h)| {
            let nfc: String = p.nfc().collect();
            (nfc.clone().into_bytes(), format!("{nfc}:{h}"))
        })
        .collect();
    lines.sort();
    let joined: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    let mut hasher = Sha256::new();
    hasher.update(joined.join("\n").as_bytes());
    format!("sha256:{}", hex(&hasher.finalize()))
}

fn sha_hex(data: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(data)))
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn generated_lockfiles_are_valid_and_round_trip(l in lockfile()) {
        l.check().map_err(|e| TestCaseError::fail(format!("generator made an invalid lockfile: {e}")))?;
        let bytes = l.to_canonical_bytes();
        let parsed = Lockfile::parse(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&bytes))))?;
        prop_assert_eq!(&parsed, &l);
        prop_assert_eq!(parsed.to_canonical_bytes(), bytes.clone());
        // Serialization invariants of SPEC §Lockfile Serialization.
        let text = String::from_utf8(bytes).unwrap();
        prop_assert!(text.ends_with("}\n") && !text.ends_with("\n\n"), "trailing newline");
        prop_assert!(!text.contains('\r') && !text.contains('\t'));
        prop_assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        prop_assert!(!text.contains('\u{2028}') && !text.contains('\u{2029}'), "line separators escaped");
        prop_assert!(text.chars().all(|c| c == '\n' || c as u32 >= 0x20));
        prop_assert_eq!(text.contains("\"discovery\""), !l.discovery.is_empty());
    }

    #[test]
    fn member_order_whitespace_escapes_and_nfd_never_change_the_bytes(l in lockfile(), seed in any::<u64>()) {
        let canonical = l.to_canonical_bytes();
        let messy = messy_json(&l, seed);
        let parsed = Lockfile::parse(messy.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{messy}")))?;
        prop_assert_eq!(&parsed, &l);
        prop_assert_eq!(parsed.to_canonical_bytes(), canonical);
    }

    #[test]
    fn model_insertion_order_never_changes_the_bytes(l in lockfile(), seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let mut items: Vec<_> = l.bundles.clone().into_iter().collect();
        rng.shuffle(&mut items);
        let mut discovery = l.discovery.clone();
        rng.shuffle(&mut discovery);
        let mut rebuilt = Lockfile::empty(l.policy);
        rebuilt.discovery = discovery;
        for (k, mut e) in items {
            let mut files: Vec<_> = e.files.into_iter().collect();
            rng.shuffle(&mut files);
            e.files = files.into_iter().collect();
            rebuilt.bundles.insert(k, e);
        }
        prop_assert_eq!(rebuilt.to_canonical_bytes(), l.to_canonical_bytes());
    }

    #[test]
    fn content_hash_matches_an_independent_computation(
        files in prop::collection::vec((file_path(), digest()), 1..8),
    ) {
        let mut map = BTreeMap::new();
        let mut raw: Vec<(String, String)> = Vec::new();
        for (p, d) in &files {
            let path = FilePath::parse(p).unwrap();
            if let std::collections::btree_map::Entry::Vacant(slot) = map.entry(path) {
                slot.insert(*d);
                raw.push((p.clone(), d.to_string()));
            }
        }
        let expected = spec_content_hash(&raw);
        prop_assert_eq!(content_hash(&map).to_string(), expected.clone());
        // And the writer puts exactly that string in the file.
        let mut l = Lockfile::empty(Policy::Block);
        l.discovery.push(Pattern::parse("b").unwrap());
        l.bundles.insert(BundleKey::parse("./b").unwrap(), BundleEntry::from_files(map));
        let text = String::from_utf8(l.to_canonical_bytes()).unwrap();
        let needle = format!("\"contentHash\": \"{expected}\"");
        prop_assert!(text.contains(&needle));
    }
}

/// Names safe to create on disk: the generated file segments minus `.git`
/// (excluded by the walker); any byte but `/` and NUL is legal on Linux.
fn disk_tree() -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    prop::collection::vec(
        (file_path(), prop::collection::vec(any::<u8>(), 0..2048)),
        1..10,
    )
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn hashing_files_on_disk_matches_an_independent_computation(tree in disk_tree()) {
        use std::os::fd::AsFd;
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("bundle");
        std::fs::create_dir(&root).unwrap();
        // Write the tree; skip entries that clash with an earlier file or
        // directory (as a file/dir or as an NFC twin).
        let mut written: Vec<(String, Vec<u8>)> = Vec::new();
        'next: for (path, data) in tree {
            let nfc: String = path.nfc().collect();
            for (other, _) in &written {
                let o: String = other.nfc().collect();
                let conflicts = o == nfc
                    || o.starts_with(&format!("{nfc}/"))
                    || nfc.starts_with(&format!("{o}/"))
                    || other
                        .split('/')
                        .zip(path.split('/'))
                        .any(|(a, b)| a != b && a.nfc().eq(b.nfc()));
                if conflicts {
                    continue 'next;
                }
            }
            let full = root.join(&path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, &data).unwrap();
            written.push((path, data));
        }
        let fd = seal_core::fs::open_project(t.path()).unwrap();
        let mut listings = seal_core::discovery::Listings::new(fd.as_fd());
        let raw = seal_core::fs::RawPath(vec!["bundle".into()]);
        let observed = seal_core::hash::observe_root(
            &mut listings,
            &raw,
            seal_core::fs::EntryKind::Dir,
            &seal_core::hash::KeepNothing,
            None,
        )
        .unwrap();
        prop_assert!(observed.problems.is_empty(), "{:?}", observed.problems);
        let expected: BTreeMap<String, String> = written
            .iter()
            .map(|(p, d)| (p.nfc().collect::<String>(), sha_hex(d)))
            .collect();
        let got: BTreeMap<String, String> = observed
            .files
            .iter()
            .map(|(p, d)| (p.as_str().to_string(), d.to_string()))
            .collect();
        prop_assert_eq!(&got, &expected);
        let raw_pairs: Vec<(String, String)> = expected.into_iter().collect();
        prop_assert_eq!(content_hash(&observed.files).to_string(), spec_content_hash(&raw_pairs));
    }
}

#[test]
fn independent_content_hash_agrees_with_the_seeds_example() {
    // The canonical example's first bundle (NOTES.md checked it by hand).
    let files = vec![
        (
            "scripts/review.sh".to_string(),
            "sha256:7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730".to_string(),
        ),
        (
            "SKILL.md".to_string(),
            "sha256:3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b".to_string(),
        ),
    ];
    assert_eq!(
        spec_content_hash(&files),
        "sha256:9fe7f798a33bac89fa4fc396647caa03a17b64372af0b000dcfe89f1e10d4442"
    );
}

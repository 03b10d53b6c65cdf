//! A differential test of `seal run`'s configuration filters against
//! reference parsers: dprint's `jsonc-parser` for JSON and JSONC, the `toml`
//! crate (what Codex reads its configuration with) for TOML, `yaml-rust2` (a
//! YAML 1.2 reader, as Continue's js-yaml is) for YAML.
//!
//! Documents are generated with comments of every kind, line terminators
//! readers disagree on (a lone carriage return, U+2028, U+2029, U+0085, a
//! vertical tab, a form feed) inside and around comments that hide members,
//! keys written with escapes, duplicate keys, trailing commas and byte-order
//! marks, from the keys each rule keeps and the keys extensions live under.
//! For every document and every rule:
//!
//! * every key the reference parser sees in the filtered copy is one the
//!   rule keeps (the issue's judge: no extension key survives, however the
//!   document is written);
//! * a document the filter reads, the reference reads too, with the same
//!   keys (the filter parses as the agent does); one it does not read is
//!   shown as an empty document.

use std::collections::BTreeSet;

use super::filter;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use seal_core::json::{self, Dialect, Kind, Value};
use seal_gate::filters::{FILTER_RULES, FilterRule, Format, Verdict};

/// Keys a document is made of: the rule's kept segments (a `*` made
/// concrete), and keys extensions and commands live under.
fn key_pool(rule: &FilterRule) -> Vec<String> {
    let mut keys: BTreeSet<String> = [
        "mcpServers",
        "mcp",
        "servers",
        "hooks",
        "plugin",
        "notify",
        "zsh_path",
        "apiKeyHelper",
        "NODE_OPTIONS",
        "env",
        "command",
        "projects",
        "profiles",
        "x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for keep in rule.kept() {
        for seg in keep.path {
            keys.insert(match seg.strip_suffix('*') {
                Some("") => "any".to_string(),
                Some(prefix) => format!("{prefix}X"),
                None => seg.to_string(),
            });
        }
    }
    keys.into_iter().collect()
}

/// A generated JSON document, before it is written out.
#[derive(Debug, Clone)]
enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Lit(&'static str),
}

fn json_tree(keys: Vec<String>) -> impl Strategy<Value = J> {
    let leaf = prop::sample::select(vec![
        "1",
        "-0.5e3",
        "true",
        "null",
        "\"v\"",
        "\"@ai-sdk/openai\"",
        "\"evil-pkg\"",
        "\"a\\u0041\\\"b\\\\\"",
        "\"// not a comment\"",
        "\"\\u2028\"",
    ])
    .prop_map(J::Lit);
    let k = keys.clone();
    let tree = leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec((prop::sample::select(k.clone()), inner.clone()), 0..6)
                .prop_map(J::Obj),
            prop::collection::vec(inner, 0..3).prop_map(J::Arr),
        ]
    });
    prop::collection::vec((prop::sample::select(keys), tree), 0..8).prop_map(J::Obj)
}

/// What may stand between two tokens: nothing, whitespace, comments (some
/// ended by a terminator readers disagree on, some hiding a member), or a
/// trailing comma where one may go.
const TRIVIA: &[&str] = &[
    "",
    "",
    " ",
    "\n",
    "\r\n",
    "\t",
    "// c\n",
    "// c\r\n",
    "// c\r",
    "// c\u{2028}",
    "// c\u{2029}",
    "// c\u{85}",
    "// c\u{b}",
    "// c\u{c}",
    "// \"mcpServers\": {\"s\": {\"command\": \"x\"}},\n",
    "// c\r\"mcpServers\": {\"s\": 1},\n",
    "/* \"hooks\": 1, */",
    "/* a // b\r */",
    "\u{2028}",
    "\u{b}",
    "TRAILING",
];

struct Writer<'a> {
    out: String,
    trivia: std::iter::Cycle<std::slice::Iter<'a, usize>>,
    escapes: std::iter::Cycle<std::slice::Iter<'a, bool>>,
}

impl Writer<'_> {
    fn trivia(&mut self) -> &'static str {
        TRIVIA[*self.trivia.next().unwrap() % TRIVIA.len()]
    }

    fn gap(&mut self) {
        let t = self.trivia();
        if t != "TRAILING" {
            self.out.push_str(t);
        }
    }

    fn key(&mut self, key: &str) {
        self.out.push('"');
        for c in key.chars() {
            if *self.escapes.next().unwrap() {
                self.out.push_str(&format!("\\u{:04x}", c as u32));
            } else {
                self.out.push(c);
            }
        }
        self.out.push('"');
    }

    fn close(&mut self, had_items: bool, close: char) {
        if had_items && self.trivia() == "TRAILING" {
            self.out.push(',');
        }
        self.gap();
        self.out.push(close);
    }

    fn value(&mut self, j: &J) {
        match j {
            J::Lit(l) => self.out.push_str(l),
            J::Arr(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.gap();
                    self.value(item);
                    self.gap();
                }
                self.close(!items.is_empty(), ']');
            }
            J::Obj(members) => {
                self.out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.gap();
                    self.key(k);
                    self.gap();
                    self.out.push(':');
                    self.gap();
                    self.value(v);
                    self.gap();
                }
                self.close(!members.is_empty(), '}');
            }
        }
    }
}

fn json_document(rule: &FilterRule) -> impl Strategy<Value = String> {
    (
        json_tree(key_pool(rule)),
        prop::collection::vec(0usize..1000, 1..64),
        prop::collection::vec(prop::bool::weighted(0.1), 1..32),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(tree, trivia, escapes, bom)| {
            let mut w = Writer {
                out: String::new(),
                trivia: trivia.iter().cycle(),
                escapes: escapes.iter().cycle(),
            };
            if bom {
                w.out.push('\u{feff}');
            }
            w.gap();
            w.value(&tree);
            w.gap();
            w.out
        })
}

/// Every key path the reference JSONC parser sees.
fn reference_json_paths(text: &str) -> Result<BTreeSet<Vec<String>>, String> {
    fn walk(v: &jsonc_parser::JsonValue, path: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
        match v {
            jsonc_parser::JsonValue::Object(o) => {
                for (k, v) in o.clone().into_iter() {
                    path.push(k.to_string());
                    out.insert(path.clone());
                    walk(&v, path, out);
                    path.pop();
                }
            }
            jsonc_parser::JsonValue::Array(items) => {
                for item in items.iter() {
                    walk(item, path, out);
                }
            }
            _ => {}
        }
    }
    let value = jsonc_parser::parse_to_value(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| e.to_string())?
        .ok_or("empty")?;
    let mut out = BTreeSet::new();
    walk(&value, &mut Vec::new(), &mut out);
    Ok(out)
}

/// Every key path the filter's own reader sees.
fn our_json_paths(v: &Value, path: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    match &v.kind {
        Kind::Object(members) => {
            for m in members {
                path.push(m.key.clone());
                out.insert(path.clone());
                our_json_paths(&m.value, path, out);
                path.pop();
            }
        }
        Kind::Array(items) => items.iter().for_each(|i| our_json_paths(i, path, out)),
        _ => {}
    }
}

/// Whether the rule keeps a value at `path` (a prefix of it kept whole, or
/// it on the way to kept paths), checked against the rule alone.
fn kept_by(rule: &FilterRule, path: &[String]) -> bool {
    (1..=path.len()).any(|n| {
        let refs: Vec<&str> = path[..n].iter().map(String::as_str).collect();
        match rule.verdict(&refs) {
            Verdict::Whole(_) => (1..n).all(|m| {
                let refs: Vec<&str> = path[..m].iter().map(String::as_str).collect();
                rule.verdict(&refs) == Verdict::Inside
            }),
            Verdict::Inside => n == path.len(),
            Verdict::Drop => false,
        }
    })
}

/// The number of generated documents per rule (more with
/// `FILTER_FUZZ_CASES`).
fn cases() -> u32 {
    std::env::var("FILTER_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

/// Runs the filter on documents of `document` for every rule of `format`:
/// a document it does not read must be shown as the format's empty
/// document; `check` judges the copy (`rule`, the document, the copy) of
/// one it reads. Returns how many were shown empty and how many read.
fn differential<S: Strategy<Value = String>>(
    format: Format,
    document: impl Fn(&'static FilterRule) -> S,
    check: impl Fn(&'static FilterRule, &str, &str) -> Result<(), TestCaseError>,
) -> (u32, u32) {
    let (mut masked, mut read) = (0u32, 0u32);
    for rule in FILTER_RULES.iter().copied().filter(|r| r.format == format) {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        let counts = std::cell::Cell::new((0u32, 0u32));
        runner
            .run(&document(rule), |doc| {
                let f = filter(rule, doc.as_bytes());
                let copy = std::str::from_utf8(&f.bytes).unwrap();
                let (m, r) = counts.get();
                if let Some(why) = &f.unparsed {
                    counts.set((m + 1, r));
                    let empty = std::str::from_utf8(super::empty_document(format)).unwrap();
                    prop_assert_eq!(copy, empty, "{}: masked as empty ({})", rule.id, why);
                    return Ok(());
                }
                counts.set((m, r + 1));
                check(rule, &doc, copy)
            })
            .unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        let (m, r) = counts.get();
        masked += m;
        read += r;
    }
    (masked, read)
}

#[test]
fn json_copies_hold_only_kept_keys_for_a_reference_parser() {
    let (masked, read) = differential(Format::Json, json_document, |rule, doc, copy| {
        // The copy: only kept keys, for the reference parser.
        let paths = reference_json_paths(copy)
            .map_err(|e| TestCaseError::fail(format!("copy unreadable: {e}: {copy}")))?;
        for p in &paths {
            prop_assert!(kept_by(rule, p), "{}: {p:?} kept in {copy:?}", rule.id);
        }
        // The document: the reference reads what the filter read.
        let ours = json::parse_as(doc.as_bytes(), Dialect::Jsonc).unwrap();
        let mut our_paths = BTreeSet::new();
        our_json_paths(&ours, &mut Vec::new(), &mut our_paths);
        let theirs = reference_json_paths(doc.trim_start_matches('\u{feff}'))
            .map_err(|e| TestCaseError::fail(format!("{e}: {doc:?}")))?;
        prop_assert_eq!(our_paths, theirs, "{:?}", doc);
        Ok(())
    });
    // The generator reaches both sides.
    assert!(masked > 100 && read > 100, "masked {masked}, read {read}");
}

/// A generated TOML document: lines of the top level and of tables.
fn toml_document(rule: &FilterRule) -> impl Strategy<Value = String> {
    let keys = key_pool(rule);
    let key = prop::sample::select(keys.clone()).prop_flat_map(|k| {
        prop_oneof![
            Just(
                if k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    k.clone()
                } else {
                    format!("\"{k}\"")
                }
            ),
            Just(format!(
                "\"{}\"",
                k.chars()
                    .map(|c| format!("\\u{:04X}", c as u32))
                    .collect::<String>()
            )),
        ]
    });
    let value = prop::sample::select(vec![
        "1",
        "true",
        "\"v\"",
        "'lit'",
        "\"evil # not a comment\"",
        "[1, 2]",
        "{ command = \"x\" }",
        "{ trust_level = \"trusted\" }",
    ]);
    let comment = prop::sample::select(vec![
        "",
        "",
        " # c",
        " # c\r[mcp_servers.s]",
        " # c\u{2028}notify = 1",
        " # c\u{c}",
    ]);
    let line = (
        prop::collection::vec(key.clone(), 1..3),
        value,
        comment.clone(),
    )
        .prop_map(|(path, value, comment)| format!("{} = {value}{comment}\n", path.join(".")));
    let header = (prop::collection::vec(key, 1..4), comment)
        .prop_map(|(path, comment)| format!("[{}]{comment}\n", path.join(".")));
    let item = prop_oneof![3 => line, 1 => header];
    (
        prop::collection::vec(item, 0..14),
        prop::bool::weighted(0.1),
        prop::sample::select(vec!["\n", "\r\n"]),
    )
        .prop_map(|(items, bom, eol)| {
            let body: String = items.concat().replace('\n', eol);
            if bom { format!("\u{feff}{body}") } else { body }
        })
}

/// Every key path of a TOML table.
fn toml_paths(t: &toml::Table, path: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    for (k, v) in t {
        path.push(k.clone());
        out.insert(path.clone());
        if let toml::Value::Table(sub) = v {
            toml_paths(sub, path, out);
        }
        path.pop();
    }
}

#[test]
fn toml_copies_hold_only_kept_keys_for_a_reference_parser() {
    let (masked, read) = differential(Format::Toml, toml_document, |rule, doc, copy| {
        let table: toml::Table = toml::from_str(copy.trim_start_matches('\u{feff}'))
            .map_err(|e| TestCaseError::fail(format!("copy unreadable: {e}: {copy}")))?;
        let mut paths = BTreeSet::new();
        toml_paths(&table, &mut Vec::new(), &mut paths);
        for p in &paths {
            prop_assert!(kept_by(rule, p), "{}: {p:?} kept in {copy:?}", rule.id);
        }
        // The document reads alike for the reference.
        prop_assert!(
            toml::from_str::<toml::Table>(doc.trim_start_matches('\u{feff}')).is_ok(),
            "the filter read what the reference does not: {doc:?}"
        );
        Ok(())
    });
    assert!(masked > 20 && read > 20, "masked {masked}, read {read}");
}

/// A generated YAML document: top-level entries written every way the cut
/// by top-level entry must get right (sequences at the key's column, block
/// and quoted scalars running over lines, flow collections, anchors, merge
/// keys, comments, document markers, tabs, carriage returns, YAML 1.1 line
/// breaks), from the keys the rule keeps and others.
fn yaml_document(rule: &FilterRule) -> impl Strategy<Value = String> {
    let mut keys: Vec<String> = key_pool(rule);
    keys.retain(|k| !k.contains('.'));
    let key = prop::sample::select(keys);
    let piece = (key.clone(), key, 0usize..22).prop_map(|(k, k2, shape)| match shape {
        0 => format!("{k}: value"),
        1 => format!("{k}:\n  - a: 1\n  - b"),
        2 => format!("{k}:\n- item\n- {k2}: x"),
        3 => format!("{k}: |\n  text\n  {k2}: x"),
        4 => format!("{k}: \"multi\n{k2}: y\""),
        5 => format!("{k}: [a,\n{k2}]"),
        6 => "# comment".to_string(),
        7 => String::new(),
        8 => "---".to_string(),
        9 => "...".to_string(),
        10 => format!("{k}: &a x"),
        11 => format!("{k}: *a"),
        12 => format!("\"{k}\": x"),
        13 => format!("? {k}\n: x"),
        14 => format!("\t{k}: x"),
        15 => format!("  {k2}: x"),
        16 => format!("{k}: x\r{k2}: y"),
        17 => format!("{k}: x\u{2028}{k2}: y"),
        18 => format!("{{ {k}: x }}"),
        19 => format!("<<: {{{k2}: x}}"),
        20 => format!("{k}: >-\n  folded\n\n  {k2}: z"),
        _ => format!("{k}:\n  nested: {{a: b,\n{k2}: d}}"),
    });
    (prop::collection::vec(piece, 1..6), any::<bool>())
        .prop_map(|(pieces, crlf)| pieces.join(if crlf { "\r\n" } else { "\n" }) + "\n")
}

/// The top-level keys of each document the reference reads in `text`, and
/// the value of each.
fn yaml_entries(text: &str) -> Result<Vec<Vec<(String, yaml_rust2::Yaml)>>, String> {
    use yaml_rust2::{Yaml, YamlLoader};
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    Ok(docs
        .into_iter()
        .map(|doc| match doc {
            Yaml::Hash(h) => h.into_iter().map(|(k, v)| (format!("{k:?}"), v)).collect(),
            Yaml::Null => Vec::new(),
            other => vec![(format!("{other:?}"), Yaml::Null)],
        })
        .collect())
}

#[test]
fn yaml_copies_hold_only_kept_entries_for_a_reference_parser() {
    let (masked, read) = differential(Format::Yaml, yaml_document, |rule, doc, copy| {
        let kept: BTreeSet<String> = key_pool(rule)
            .into_iter()
            .filter(|k| kept_by(rule, std::slice::from_ref(k)))
            .map(|k| format!("{:?}", yaml_rust2::Yaml::String(k)))
            .collect();
        // Whatever the reference makes of the copy, only kept keys are at
        // its top level.
        if let Ok(docs) = yaml_entries(copy) {
            for (k, _) in docs.iter().flatten() {
                prop_assert!(kept.contains(k), "{}: {k} in {copy:?}", rule.id);
            }
        }
        // A document the reference reads is read alike in the copy: the
        // same value for every kept key. Or the copy is refused whole (the
        // agent then starts with no configuration): where a kept entry
        // names an anchor of an entry dropped.
        if let Ok(original) = yaml_entries(doc) {
            let copied = match yaml_entries(copy) {
                Ok(copied) => copied,
                Err(e) if e.contains("unknown anchor") => return Ok(()),
                Err(e) => {
                    return Err(TestCaseError::fail(format!(
                        "copy unreadable: {e}: {copy:?} of {doc:?}"
                    )));
                }
            };
            let want: Vec<_> = original
                .into_iter()
                .flatten()
                .filter(|(k, _)| kept.contains(k))
                .collect();
            prop_assert_eq!(
                copied.into_iter().flatten().collect::<Vec<_>>(),
                want,
                "{:?}",
                doc
            );
        }
        Ok(())
    });
    assert!(masked > 20 && read > 20, "masked {masked}, read {read}");
}

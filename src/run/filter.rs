//! Filtered copies of agent configuration files that mix extensions with
//! settings and state (`~/.claude.json`, `~/.codex/config.toml`, ...).
//!
//! [`filter`] keeps only the keys a [`FilterRule`] lists
//! ([`seal_gate::filters`]: an allow-list per agent and version); every other
//! key is dropped. Each document is read in the agent's own grammar, by one
//! reader per grammar: JSON and JSONC by the core reader
//! ([`seal_core::json`], in its JSONC dialect), TOML by `toml_edit` (TOML
//! 1.0, as Codex's `toml` reads it). A document that reader cannot read
//! exactly as the agent would (a `//` comment whose end readers disagree on,
//! a duplicated key, anything outside the grammar) is shown as an empty
//! document, with a message naming it.
//!
//! A JSON copy is written anew from what was kept (no comment, no layout of
//! the original survives: nothing an agent could read otherwise); a TOML copy
//! keeps the layout and comments of what was kept. [`merge_back`] is the way
//! back at the end of a run: the agent's changes to kept keys are applied to
//! the host file, entry by entry, as values written anew, never over a change
//! the host made meanwhile to the same entry, and never a key the rule does
//! not keep.
//!
//! This module is pure: bytes in, bytes out.

use std::fmt;

use seal_core::json::{self, Dialect, Kind, Member, Value};
use seal_gate::filters::{FilterRule, Format, Verdict};

/// Files larger than this are not filtered (shown empty): agent configuration
/// files are kilobytes.
pub const MAX_BYTES: usize = 16 << 20;

/// The result of filtering one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filtered {
    /// What the run shows.
    pub bytes: Vec<u8>,
    /// The dropped entries, as dotted key paths with the names of their
    /// children (`mcpServers: github, evil`), unescaped.
    pub removed: Vec<String>,
    /// Why the document is shown empty, when it is.
    pub unparsed: Option<String>,
}

/// Why a document could not be read as its agent reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Filters `input` by `rule`: the document with only the keys the rule
/// keeps; an empty document (with the reason) when it cannot be read as the
/// agent reads it.
pub fn filter(rule: &FilterRule, input: &[u8]) -> Filtered {
    let result = if input.len() > MAX_BYTES {
        Err(ParseError(format!("larger than {MAX_BYTES} bytes")))
    } else {
        match rule.format {
            Format::Json => json_filter(rule, input),
            Format::Toml => toml_filter(rule, input),
            Format::Dotenv => dotenv_filter(rule, input),
            Format::Yaml => yaml_filter(rule, input),
        }
    };
    match result {
        Ok((bytes, removed)) => Filtered {
            bytes,
            removed,
            unparsed: None,
        },
        Err(e) => Filtered {
            bytes: empty_document(rule.format).to_vec(),
            removed: Vec::new(),
            unparsed: Some(e.0),
        },
    }
}

/// An empty document of the format: what a run shows for a filtered file
/// that is masked whole, or absent where the command could create it.
pub fn empty_document(format: Format) -> &'static [u8] {
    match format {
        Format::Json => b"{}\n",
        Format::Toml | Format::Yaml | Format::Dotenv => b"",
    }
}

fn describe(path: &[String], children: &[String]) -> String {
    let mut s = path.join(".");
    if !children.is_empty() {
        s.push_str(": ");
        s.push_str(&children.join(", "));
    }
    s
}

/// Whether the value at `path` is an entry of a map `rule` keeps entry by
/// entry.
fn is_map_entry(rule: &FilterRule, path: &[String]) -> bool {
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    rule.is_map_entry(&refs)
}

/// The rule's verdict on the value at `path` (the document itself is an
/// object whose members are decided).
fn verdict(rule: &FilterRule, path: &[String]) -> Verdict {
    if path.is_empty() {
        return Verdict::Inside;
    }
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    rule.verdict(&refs)
}

// ---------------------------------------------------------------------------
// JSON and JSONC

fn parse_jsonc(input: &[u8]) -> Result<Value, ParseError> {
    json::parse_as(input, Dialect::Jsonc).map_err(|e| ParseError(e.to_string()))
}

fn members(v: &Value) -> &[Member] {
    match &v.kind {
        Kind::Object(m) => m,
        _ => &[],
    }
}

fn child_names(v: &Value) -> Vec<String> {
    members(v).iter().map(|m| m.key.clone()).collect()
}

/// Whether `v` holds, anywhere, a string the agent runs as a command
/// ([`FilterRule::commands`]).
fn holds_command(rule: &FilterRule, v: &Value) -> bool {
    let Some(mark) = rule.commands else {
        return false;
    };
    match &v.kind {
        Kind::String(s) => mark.marks(s),
        Kind::Array(items) => items.iter().any(|i| holds_command(rule, i)),
        Kind::Object(members) => members.iter().any(|m| holds_command(rule, &m.value)),
        _ => false,
    }
}

/// What `rule` keeps of `v` (at `path`), noting what it drops.
fn keep_json(
    rule: &FilterRule,
    v: &Value,
    path: &mut Vec<String>,
    removed: &mut Vec<String>,
) -> Option<Value> {
    let verdict = verdict(rule, path);
    let unit = matches!(verdict, Verdict::Whole(_)) || is_map_entry(rule, path);
    match (verdict, &v.kind) {
        (_, _) if unit && holds_command(rule, v) => {
            removed.push(format!("{} (a command)", describe(path, &[])));
            None
        }
        (Verdict::Whole(None), _) => Some(v.clone()),
        (Verdict::Whole(Some(prefix)), Kind::String(s)) if s.starts_with(prefix) => Some(v.clone()),
        (Verdict::Inside, Kind::Object(members)) => {
            let mut kept = Vec::new();
            for m in members {
                path.push(m.key.clone());
                if let Some(value) = keep_json(rule, &m.value, path, removed) {
                    kept.push(Member { value, ..m.clone() });
                }
                path.pop();
            }
            Some(Value {
                kind: Kind::Object(kept),
                ..v.clone()
            })
        }
        // A list kept item by item (Factory Droid's `customModels`): each
        // item is at a `*` of the kept paths, named by its index.
        (Verdict::Inside, Kind::Array(items)) => {
            let mut kept = Vec::new();
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                kept.extend(keep_json(rule, item, path, removed));
                path.pop();
            }
            Some(Value {
                kind: Kind::Array(kept),
                ..v.clone()
            })
        }
        _ => {
            removed.push(describe(path, &child_names(v)));
            None
        }
    }
}

/// Two spaces per level.
fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// `v` as JSON laid out as `JSON.stringify(v, null, 2)` lays it out, at
/// nesting `depth`.
fn write_json(v: &Value, depth: usize, out: &mut String) {
    match &v.kind {
        Kind::Null => out.push_str("null"),
        Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Kind::Number(n) => out.push_str(n),
        Kind::String(s) => json::write_json_string(out, s),
        Kind::Array(items) if items.is_empty() => out.push_str("[]"),
        Kind::Object(members) if members.is_empty() => out.push_str("{}"),
        Kind::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(out, depth + 1);
                write_json(item, depth + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push(']');
        }
        Kind::Object(members) => {
            out.push_str("{\n");
            for (i, m) in members.iter().enumerate() {
                indent(out, depth + 1);
                json::write_json_string(out, &m.key);
                out.push_str(": ");
                write_json(&m.value, depth + 1, out);
                out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push('}');
        }
    }
}

fn json_filter(rule: &FilterRule, input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let root = parse_jsonc(input)?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(ParseError("the document is not an object".into()));
    }
    let mut removed = Vec::new();
    let kept =
        keep_json(rule, &root, &mut Vec::new(), &mut removed).expect("an object is kept inside");
    let mut out = String::new();
    write_json(&kept, 0, &mut out);
    out.push('\n');
    Ok((out.into_bytes(), removed))
}

// ---------------------------------------------------------------------------
// TOML, through a format-preserving editor

/// Removes from `table` what `rule` does not keep.
fn toml_keep(
    rule: &FilterRule,
    table: &mut dyn toml_edit::TableLike,
    path: &mut Vec<String>,
    removed: &mut Vec<String>,
) {
    let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
    for key in keys {
        path.push(key.clone());
        let item = table.get_mut(&key).expect("listed");
        let keep = match verdict(rule, path) {
            Verdict::Whole(None) => true,
            Verdict::Whole(Some(prefix)) => {
                item.as_str().is_some_and(|s: &str| s.starts_with(prefix))
            }
            Verdict::Inside => match item.as_table_like_mut() {
                Some(sub) => {
                    toml_keep(rule, sub, path, removed);
                    true
                }
                None => false,
            },
            Verdict::Drop => false,
        };
        if !keep {
            let children: Vec<String> = table
                .get(&key)
                .and_then(|i| i.as_table_like())
                .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
                .unwrap_or_default();
            table.remove(&key);
            removed.push(describe(path, &children));
        }
        path.pop();
    }
}

fn parse_toml(input: &[u8]) -> Result<toml_edit::DocumentMut, ParseError> {
    let text = std::str::from_utf8(input).map_err(|_| ParseError("not UTF-8".into()))?;
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| ParseError(e.message().to_string()))
}

fn toml_filter(rule: &FilterRule, input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let mut doc = parse_toml(input)?;
    let mut removed = Vec::new();
    toml_keep(rule, doc.as_table_mut(), &mut Vec::new(), &mut removed);
    if removed.is_empty() {
        return Ok((input.to_vec(), removed));
    }
    Ok((doc.to_string().into_bytes(), removed))
}

// ---------------------------------------------------------------------------
// dotenv

/// Whether `c` may stand in a kept value: what every dotenv reader (Node's
/// `dotenv`, Rust's `dotenvy`) takes as itself, quoted or not: no space, no
/// quote, no `#` (a comment in some), no `$` (a substitution in some), no
/// backslash (an escape in some).
fn plain_value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./:@+,%~=".contains(c)
}

/// One `KEY=VALUE` line (its leading blanks gone) as every dotenv reader
/// reads it, or `None`: an optional `export `, a key of letters, digits and `_`, `=` right after
/// it, and a value of [`plain_value_char`]s, bare or in one pair of quotes.
fn dotenv_line(line: &str) -> Option<(&str, &str)> {
    let line = line.strip_prefix("export ").unwrap_or(line);
    let (key, value) = line.split_once('=')?;
    let key_ok = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)));
    let value = unquoted.unwrap_or(value);
    (key_ok && value.chars().all(plain_value_char)).then_some((key, value))
}

/// Keeps the variables `rule` lists, written anew as `KEY=VALUE` lines.
/// Strict: a document with any line but those, blank lines and `#` comments
/// (a multi-line value, an escape, a substitution, a carriage return), or
/// with a variable set twice (readers take the first or the last), is not
/// read at all.
fn dotenv_filter(rule: &FilterRule, input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let text = std::str::from_utf8(input).map_err(|_| ParseError("not UTF-8".into()))?;
    let mut seen = std::collections::BTreeSet::new();
    let (mut kept, mut removed) = (String::new(), Vec::new());
    for (n, line) in text.split('\n').enumerate() {
        let bare = line.trim_start_matches([' ', '\t']);
        if bare.is_empty() || bare.starts_with('#') {
            continue;
        }
        let Some((key, value)) = dotenv_line(bare) else {
            return Err(ParseError(format!(
                "line {} is not a plain KEY=VALUE line every dotenv reader reads alike",
                n + 1
            )));
        };
        if !seen.insert(key) {
            return Err(ParseError(format!("{key} is set twice")));
        }
        match rule.verdict(&[key]) {
            Verdict::Whole(None) => kept.push_str(&format!("{key}={value}\n")),
            _ => removed.push(key.to_string()),
        }
    }
    Ok((kept.into_bytes(), removed))
}

// ---------------------------------------------------------------------------
// YAML, by top-level entry

/// Keeps the top-level entries `rule` keeps whole, each as the lines it was
/// written in; nothing is parsed below the top level. No YAML reader here
/// reads YAML as the agents' do (Continue's is js-yaml), so the copy holds
/// only whole lines of the original, cut where every reader starts a
/// top-level entry: a line at column 0 that is a plain `key:`. Every other
/// line belongs to the entry above it, as for every reader: indented lines,
/// blank lines, comments and `- ` items of a sequence written at the key's
/// own column. A document any reader could cut elsewhere is not read at
/// all: any other line at column 0 (a quoted or complex key, a flow
/// collection, a document marker or directive, the continuation of a
/// multi-line scalar), a tab in an indentation, a line break YAML 1.1 knows
/// and 1.2 does not (U+0085, U+2028, U+2029) or a carriage return alone, a
/// byte-order mark, or a key written twice. So whatever a reader makes of
/// the copy, its top-level keys are among those kept, and each kept entry
/// reads as it did in the original, or the copy does not read at all (a
/// kept entry naming an anchor of one dropped; a quoted scalar going on at
/// column 0 in a line shaped like a key, which is cut there): the agent
/// then meets a configuration it cannot read, never an extension.
fn yaml_filter(rule: &FilterRule, input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let text = std::str::from_utf8(input).map_err(|_| ParseError("not UTF-8".into()))?;
    if let Some(c) = text
        .chars()
        .find(|c| matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\0'))
    {
        return Err(ParseError(format!(
            "it holds U+{:04X}, which YAML readers read differently",
            c as u32
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    let (mut kept, mut removed) = (String::new(), Vec::new());
    // Whether the entry being read is kept (None before the first key).
    let mut keeping: Option<bool> = None;
    for (n, raw) in text.split_terminator('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.contains('\r') {
            return Err(ParseError(format!(
                "line {} holds a carriage return alone",
                n + 1
            )));
        }
        let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        if indent.contains('\t') {
            return Err(ParseError(format!("line {} is indented with a tab", n + 1)));
        }
        let bare = &line[indent.len()..];
        let continues = !indent.is_empty()
            || bare.is_empty()
            || bare.starts_with('#')
            || bare == "-"
            || bare.starts_with("- ");
        if continues {
            if keeping.is_none() && !bare.is_empty() && !bare.starts_with('#') {
                return Err(ParseError(format!(
                    "line {} comes before any top-level key",
                    n + 1
                )));
            }
        } else if keeping.is_none() && line == "---" {
            // The document's start marker: nothing of the document.
            continue;
        } else {
            let Some(key) = yaml_key(line) else {
                return Err(ParseError(format!(
                    "line {} is not a plain top-level `key:` every YAML reader cuts alike",
                    n + 1
                )));
            };
            if !seen.insert(key) {
                return Err(ParseError(format!("{key} is set twice")));
            }
            let keep = matches!(rule.verdict(&[key]), Verdict::Whole(None));
            if !keep {
                removed.push(key.to_string());
            }
            keeping = Some(keep);
        }
        if keeping == Some(true) {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    Ok((kept.into_bytes(), removed))
}

/// The key of a line that starts a top-level entry: a plain name, a colon,
/// then the end of the line or a space.
fn yaml_key(line: &str) -> Option<&str> {
    let (key, rest) = line.split_once(':')?;
    let key_ok = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (key_ok && (rest.is_empty() || rest.starts_with(' '))).then_some(key)
}

// ---------------------------------------------------------------------------
// Merge-back

/// What [`merge_back`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// The run did not change its copy: nothing to write.
    Unchanged,
    /// The new host document, and the entries taken from the run.
    Write {
        bytes: Vec<u8>,
        changed: Vec<String>,
    },
}

/// Applies the run's changes to the host file.
///
/// `start` is the host document as it was when the run started, `run` the
/// run's copy at the end, `host` the host document now. The changes are the
/// kept entries that differ between what the run was shown (`start`
/// filtered) and `run`; each is written over `host`'s entry, objects entry by
/// entry. Nothing the rule does not keep is taken from the run, and the
/// host's own entries of that kind stay. Every document must parse.
pub fn merge_back(
    rule: &FilterRule,
    start: &[u8],
    run: &[u8],
    host: &[u8],
) -> Result<Merged, ParseError> {
    let shown = filter(rule, start);
    if shown.unparsed.is_some() || run == shown.bytes.as_slice() {
        // A document shown empty is never merged: the agent saw nothing of it.
        return Ok(Merged::Unchanged);
    }
    match rule.format {
        Format::Json => json_merge(rule, &shown.bytes, run, host),
        Format::Toml => toml_merge(rule, &shown.bytes, run, host),
        // Never writable: nothing of the run's goes back.
        Format::Yaml | Format::Dotenv => Ok(Merged::Unchanged),
    }
}

/// Whether two values hold the same data (object members in any order).
fn same_json(a: &Value, b: &Value) -> bool {
    match (&a.kind, &b.kind) {
        (Kind::Object(x), Kind::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|m| {
                    y.iter()
                        .any(|n| n.key == m.key && same_json(&m.value, &n.value))
                })
        }
        (Kind::Array(x), Kind::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (x, y) => x == y,
    }
}

fn find<'v>(v: &'v Value, key: &str) -> Option<(usize, &'v Member)> {
    members(v).iter().enumerate().find(|(_, m)| m.key == key)
}

fn is_object(v: &Value) -> bool {
    matches!(v.kind, Kind::Object(_))
}

/// The object at `path` below `v`.
fn object_at<'v>(v: &'v Value, path: &[String]) -> Option<&'v Value> {
    let mut n = v;
    for k in path {
        n = &find(n, k)?.1.value;
    }
    is_object(n).then_some(n)
}

/// One change to a source text: replace `start..end` with `text`.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

fn apply(src: &[u8], mut edits: Vec<Edit>) -> Vec<u8> {
    // From the end backwards, so earlier offsets stay valid. Edits never
    // overlap (see `cut_members`); one that would is skipped rather than
    // allowed to corrupt the text.
    edits.sort_by(|a, b| b.start.cmp(&a.start).then(b.end.cmp(&a.end)));
    let mut out = src.to_vec();
    let mut floor = usize::MAX;
    for e in edits {
        if e.end > floor {
            continue;
        }
        out.splice(e.start..e.end, e.text.bytes());
        floor = e.start;
    }
    out
}

/// The edits that remove the members of object `node` whose indices are in
/// `gone` (ascending), each with its comma and the whitespace that belonged
/// to it. Consecutive members go in one edit, so edits never overlap.
fn cut_members(node: &Value, gone: &[usize]) -> Vec<Edit> {
    let members = members(node);
    let mut edits = Vec::new();
    let mut i = 0;
    while i < gone.len() {
        let a = gone[i];
        let mut b = a;
        while i + 1 < gone.len() && gone[i + 1] == b + 1 {
            i += 1;
            b += 1;
        }
        let (start, end) = if b + 1 < members.len() {
            (members[a].key_start, members[b + 1].key_start)
        } else if a > 0 {
            (members[a - 1].value.end, members[b].value.end)
        } else {
            (node.start + 1, members[b].value.end)
        };
        edits.push(Edit {
            start,
            end,
            text: String::new(),
        });
        i += 1;
    }
    edits
}

/// The indentation of the line `pos` is on.
fn indent_at(src: &[u8], pos: usize) -> String {
    let line_start = src[..pos]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    src[line_start..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .map(|b| *b as char)
        .collect()
}

/// The edit that adds `"key": value` members at the end of object `node`,
/// laid out like its other members.
fn insert_members(src: &[u8], node: &Value, new: &[(String, String)]) -> Option<Edit> {
    let Kind::Object(members) = &node.kind else {
        return None;
    };
    let key = |k: &str| {
        let mut s = String::new();
        json::write_json_string(&mut s, k);
        s
    };
    match members.last() {
        Some(last) => {
            // One member per line when the first member is on a line of its
            // own.
            let multiline = src[node.start..members[0].key_start].contains(&b'\n');
            let sep = if multiline {
                format!(",\n{}", indent_at(src, last.key_start))
            } else {
                ", ".to_string()
            };
            let text: String = new
                .iter()
                .map(|(k, v)| format!("{sep}{}: {v}", key(k)))
                .collect();
            Some(Edit {
                start: last.value.end,
                end: last.value.end,
                text,
            })
        }
        None => {
            let outer = indent_at(src, node.start);
            let body: Vec<String> = new
                .iter()
                .map(|(k, v)| format!("{outer}  {}: {v}", key(k)))
                .collect();
            Some(Edit {
                start: node.start + 1,
                end: node.end - 1,
                text: format!("\n{}\n{outer}", body.join(",\n")),
            })
        }
    }
}

/// New `(key, value text)` members for one object.
type Members = Vec<(String, String)>;

/// One change the run made, to be applied to the host document.
enum HostEdit {
    /// Write `value` (JSON text) at `parent.key`, over the host's entry or as
    /// a new one.
    Set {
        parent: Vec<String>,
        key: String,
        value: String,
    },
    Delete {
        parent: Vec<String>,
        key: String,
    },
}

/// A value as the text the merge writes: written anew (never the run's own
/// text, which could carry comments), at the nesting of `path`.
fn value_text(v: &Value, path: &[String]) -> String {
    let mut s = String::new();
    write_json(v, path.len(), &mut s);
    s
}

/// Compares the run's object with what it was shown, kept key by kept key,
/// and records the changes; objects with kept members are compared member
/// by member (so the agent's change to one entry never overwrites the host's
/// change to another).
fn json_changes(
    rule: &FilterRule,
    shown: &Value,
    run: &Value,
    host: Option<&Value>,
    path: &mut Vec<String>,
    out: &mut Vec<HostEdit>,
) {
    let mut keys: Vec<String> = Vec::new();
    for n in [shown, run] {
        for k in child_names(n) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    for key in keys {
        path.push(key.clone());
        let v = verdict(rule, path);
        path.pop();
        let s = find(shown, &key).map(|(_, m)| &m.value);
        let r = find(run, &key).map(|(_, m)| &m.value);
        let h = host.and_then(|h| find(h, &key)).map(|(_, m)| &m.value);
        let parent = path.clone();
        match v {
            Verdict::Drop => {}
            Verdict::Inside => {
                // An object the run removed loses what the run was shown of
                // it; the host's other members (never shown) stay.
                let removed = Value {
                    kind: Kind::Object(Vec::new()),
                    ..shown.clone()
                };
                let r = match r {
                    Some(r) if is_object(r) => r,
                    None if s.is_some() => &removed,
                    _ => continue,
                };
                path.push(key.clone());
                match h.filter(|h| is_object(h)) {
                    Some(h) => {
                        let empty = Value {
                            kind: Kind::Object(Vec::new()),
                            ..r.clone()
                        };
                        let s = s.filter(|s| is_object(s)).unwrap_or(&empty);
                        json_changes(rule, s, r, Some(h), path, out);
                    }
                    None => {
                        // Nothing of it on the host: the run's kept part.
                        let mut dropped = Vec::new();
                        if let Some(kept) = keep_json(rule, r, path, &mut dropped) {
                            let value = value_text(&kept, path);
                            out.push(HostEdit::Set { parent, key, value });
                        }
                    }
                }
                path.pop();
            }
            Verdict::Whole(prefix) => {
                let unchanged = match (s, r) {
                    (Some(s), Some(r)) => same_json(s, r),
                    (None, None) => true,
                    _ => false,
                };
                if unchanged {
                    continue;
                }
                match r {
                    Some(r) => {
                        let allowed = match (prefix, &r.kind) {
                            _ if holds_command(rule, r) => false,
                            (None, _) => true,
                            (Some(p), Kind::String(text)) => text.starts_with(p),
                            (Some(_), _) => false,
                        };
                        if allowed {
                            path.push(key.clone());
                            let value = value_text(r, path);
                            path.pop();
                            out.push(HostEdit::Set { parent, key, value });
                        }
                    }
                    None if h.is_some() => out.push(HostEdit::Delete { parent, key }),
                    None => {}
                }
            }
        }
    }
}

fn change_name(parent: &[String], key: &str) -> String {
    let mut p: Vec<&str> = parent.iter().map(String::as_str).collect();
    p.push(key);
    p.join(".")
}

fn json_merge(
    rule: &FilterRule,
    shown: &[u8],
    run: &[u8],
    host: &[u8],
) -> Result<Merged, ParseError> {
    let shown_root = parse_jsonc(shown)?;
    let run_root = parse_jsonc(run)?;
    let host_root = parse_jsonc(host)?;
    if ![&shown_root, &run_root, &host_root]
        .iter()
        .all(|v| is_object(v))
    {
        return Err(ParseError("the document is not an object".into()));
    }
    let mut changes = Vec::new();
    json_changes(
        rule,
        &shown_root,
        &run_root,
        Some(&host_root),
        &mut Vec::new(),
        &mut changes,
    );
    if changes.is_empty() {
        return Ok(Merged::Unchanged);
    }
    let mut changed = Vec::new();
    // Replacements and deletions by the spans of the host text ...
    let mut edits = Vec::new();
    let mut deletions: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    let mut inserts: Vec<(Vec<String>, Members)> = Vec::new();
    for c in changes {
        match c {
            HostEdit::Set { parent, key, value } => {
                let at = object_at(&host_root, &parent).and_then(|o| find(o, &key));
                changed.push(change_name(&parent, &key));
                match at {
                    Some((_, m)) => edits.push(Edit {
                        start: m.value.start,
                        end: m.value.end,
                        text: value,
                    }),
                    None => match inserts.iter_mut().find(|(p, _)| *p == parent) {
                        Some((_, v)) => v.push((key, value)),
                        None => inserts.push((parent, vec![(key, value)])),
                    },
                }
            }
            HostEdit::Delete { parent, key } => {
                if let Some((i, _)) = object_at(&host_root, &parent).and_then(|o| find(o, &key)) {
                    match deletions.iter_mut().find(|(p, _)| *p == parent) {
                        Some((_, v)) => v.push(i),
                        None => deletions.push((parent.clone(), vec![i])),
                    }
                    changed.push(format!("{} (removed)", change_name(&parent, &key)));
                }
            }
        }
    }
    for (parent, mut gone) in deletions {
        if let Some(obj) = object_at(&host_root, &parent) {
            gone.sort_unstable();
            gone.dedup();
            edits.extend(cut_members(obj, &gone));
        }
    }
    let mut text = apply(host, edits);
    // ... then insertions into the result, an object at a time.
    if !inserts.is_empty() {
        let root = parse_jsonc(&text)?;
        let edits: Vec<Edit> = inserts
            .iter()
            .filter_map(|(parent, new)| {
                object_at(&root, parent).and_then(|o| insert_members(&text, o, new))
            })
            .collect();
        text = apply(&text, edits);
    }
    parse_jsonc(&text)?;
    Ok(Merged::Write {
        bytes: text,
        changed,
    })
}

/// A TOML item reduced to its data (no comments, no layout), for comparison.
fn toml_canon(item: &toml_edit::Item) -> String {
    fn value(v: &toml_edit::Value) -> String {
        match v {
            toml_edit::Value::Array(a) => {
                format!("[{}]", a.iter().map(value).collect::<Vec<_>>().join(","))
            }
            toml_edit::Value::InlineTable(t) => {
                table(t.iter().map(|(k, v)| (k.to_string(), value(v))))
            }
            other => {
                let mut v = other.clone();
                v.decor_mut().clear();
                v.to_string()
            }
        }
    }
    fn table(entries: impl Iterator<Item = (String, String)>) -> String {
        let mut e: Vec<(String, String)> = entries.collect();
        e.sort();
        format!(
            "{{{}}}",
            e.into_iter()
                .map(|(k, v)| format!("{k:?}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        )
    }
    match item {
        toml_edit::Item::None => String::new(),
        toml_edit::Item::Value(v) => value(v),
        toml_edit::Item::Table(t) => table(t.iter().map(|(k, v)| (k.to_string(), toml_canon(v)))),
        toml_edit::Item::ArrayOfTables(a) => format!(
            "[[{}]]",
            a.iter()
                .map(|t| table(t.iter().map(|(k, v)| (k.to_string(), toml_canon(v)))))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn toml_merge_table(
    rule: &FilterRule,
    shown: &dyn toml_edit::TableLike,
    run: &dyn toml_edit::TableLike,
    host: &mut dyn toml_edit::TableLike,
    path: &mut Vec<String>,
    changed: &mut Vec<String>,
) {
    let mut keys: Vec<String> = Vec::new();
    for t in [shown, run] {
        for (k, _) in t.iter() {
            if !keys.iter().any(|x| x == k) {
                keys.push(k.to_string());
            }
        }
    }
    let empty = toml_edit::Table::new();
    for key in keys {
        path.push(key.clone());
        let name = path.join(".");
        let v = verdict(rule, path);
        let s = shown.get(&key);
        let r = run.get(&key);
        match v {
            Verdict::Drop => {}
            Verdict::Inside => {
                let host_table = host.get(&key).is_some_and(|h| h.is_table_like());
                match r.and_then(|r| r.as_table_like()) {
                    Some(r) if host_table => {
                        let s = s.and_then(|s| s.as_table_like()).unwrap_or(&empty);
                        if let Some(h) = host.get_mut(&key).and_then(|i| i.as_table_like_mut()) {
                            toml_merge_table(rule, s, r, h, path, changed);
                        }
                    }
                    Some(_) if host.get(&key).is_none() => {
                        // The run's (already filtered) table, whole.
                        host.insert(&key, run.get(&key).expect("present").clone());
                        changed.push(name);
                    }
                    _ => {}
                }
            }
            Verdict::Whole(prefix) => {
                let unchanged = match (s, r) {
                    (Some(s), Some(r)) => toml_canon(s) == toml_canon(r),
                    (None, None) => true,
                    _ => false,
                };
                let allowed = match (prefix, r) {
                    (Some(p), Some(r)) => r.as_str().is_some_and(|s| s.starts_with(p)),
                    _ => true,
                };
                if !unchanged && allowed {
                    match r {
                        Some(r) => {
                            host.insert(&key, r.clone());
                            changed.push(name);
                        }
                        None => {
                            if host.remove(&key).is_some() {
                                changed.push(format!("{name} (removed)"));
                            }
                        }
                    }
                }
            }
        }
        path.pop();
    }
}

fn toml_merge(
    rule: &FilterRule,
    shown: &[u8],
    run: &[u8],
    host: &[u8],
) -> Result<Merged, ParseError> {
    // What the run wrote, without anything the rule does not keep.
    let (run_kept, _) = toml_filter(rule, run)?;
    let shown = parse_toml(shown)?;
    let run = parse_toml(&run_kept)?;
    let mut host_doc = parse_toml(host)?;
    let mut changed = Vec::new();
    toml_merge_table(
        rule,
        shown.as_table(),
        run.as_table(),
        host_doc.as_table_mut(),
        &mut Vec::new(),
        &mut changed,
    );
    if changed.is_empty() {
        return Ok(Merged::Unchanged);
    }
    Ok(Merged::Write {
        bytes: host_doc.to_string().into_bytes(),
        changed,
    })
}

#[cfg(test)]
mod differential_tests;
#[cfg(test)]
mod tests;

//! Filtered copies of agent configuration files that mix extensions with
//! settings and state (`~/.claude.json`, `~/.codex/config.toml`, ...).
//!
//! [`filter`] removes the entries a [`FilterRule`] names (MCP servers, hooks,
//! plugins, notify commands, ...) and leaves everything else byte-for-byte:
//! JSON (and JSONC) by cutting the removed members' spans out of the original
//! text, TOML through `toml_edit`, which keeps comments and layout. A document
//! that does not parse is shown empty. [`merge_back`] is the way back at the
//! end of a run: the agent's own changes to its copy are applied to the host
//! file, entry by entry, never an extension entry, and never over a change
//! the host made meanwhile to the same entry.
//!
//! This module is pure: bytes in, bytes out.

use std::fmt;

use seal_gate::surfaces::{FilterRule, Format};

/// Files larger than this are not filtered (shown empty): agent configuration
/// files are kilobytes.
pub const MAX_BYTES: usize = 16 << 20;

/// The result of filtering one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filtered {
    /// What the run shows.
    pub bytes: Vec<u8>,
    /// The removed entries, as dotted key paths with the names of their
    /// children (`mcpServers: github, evil`), unescaped.
    pub removed: Vec<String>,
    /// Why the document is shown empty, when it is.
    pub unparsed: Option<String>,
}

/// Why a document could not be read as its format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Filters `input` by `rule`: the same document without the entries the rule
/// names; empty (with the reason) when it does not parse.
pub fn filter(rule: &FilterRule, input: &[u8]) -> Filtered {
    let result = if input.len() > MAX_BYTES {
        Err(ParseError(format!("larger than {} bytes", MAX_BYTES)))
    } else {
        match rule.format {
            Format::Json => json_filter(rule.remove, input),
            Format::Toml => toml_filter(rule.remove, input),
            Format::Yaml => Err(ParseError(
                "YAML files are not filtered (no format-preserving editor)".into(),
            )),
        }
    };
    match result {
        Ok((bytes, removed)) => Filtered {
            bytes,
            removed,
            unparsed: None,
        },
        Err(e) => Filtered {
            bytes: Vec::new(),
            removed: Vec::new(),
            unparsed: Some(e.0),
        },
    }
}

/// What a run shows for a filtered file that does not exist on the host when
/// its copy must be read-only: an empty document of the format.
pub fn empty_document(format: Format) -> &'static [u8] {
    match format {
        Format::Json => b"{}\n",
        Format::Toml | Format::Yaml => b"",
    }
}

/// Does `path` (concrete keys) match the rule path `pattern` (`*` = any key)?
fn matches(pattern: &[&str], path: &[&str]) -> bool {
    pattern.len() == path.len() && pattern.iter().zip(path).all(|(p, k)| *p == "*" || p == k)
}

/// Is `path` a proper prefix of some rule path (so extension entries may lie
/// below it)?
fn leads_to_removed(rules: &[&[&str]], path: &[&str]) -> bool {
    rules
        .iter()
        .any(|r| r.len() > path.len() && matches(&r[..path.len()], path))
}

fn is_removed(rules: &[&[&str]], path: &[&str]) -> bool {
    rules.iter().any(|r| matches(r, path))
}

fn describe(path: &[&str], children: &[String]) -> String {
    let mut s = path.join(".");
    if !children.is_empty() {
        s.push_str(": ");
        s.push_str(&children.join(", "));
    }
    s
}

// ---------------------------------------------------------------------------
// JSON and JSONC, by spans of the original text

/// A parsed JSON value with byte spans into the source.
#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Object { members: Vec<Member>, close: usize },
    Array,
    Scalar,
}

#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value: Node,
}

const MAX_DEPTH: usize = 512;

/// A tolerant JSON reader: JSON plus `//` and `/* */` comments and trailing
/// commas (JSONC, as VS Code-style configuration files use).
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn err<T>(&self, what: &str) -> Result<T, ParseError> {
        let line = self.s[..self.i.min(self.s.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        Err(ParseError(format!("{what} at line {line}")))
    }

    fn skip_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.s.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') => match self.s.get(self.i + 1) {
                    Some(b'/') => {
                        while self.i < self.s.len() && self.s[self.i] != b'\n' {
                            self.i += 1;
                        }
                    }
                    Some(b'*') => {
                        self.i += 2;
                        loop {
                            if self.i + 1 >= self.s.len() {
                                return self.err("unterminated comment");
                            }
                            if self.s[self.i] == b'*' && self.s[self.i + 1] == b'/' {
                                self.i += 2;
                                break;
                            }
                            self.i += 1;
                        }
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        self.skip_ws()?;
        let start = self.i;
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_ws()?;
                    match self.s.get(self.i) {
                        Some(b'}') => {
                            let close = self.i;
                            self.i += 1;
                            return Ok(Node {
                                start,
                                end: self.i,
                                kind: Kind::Object { members, close },
                            });
                        }
                        Some(b'"') => {
                            let key_start = self.i;
                            let key = self.string()?;
                            self.skip_ws()?;
                            if self.s.get(self.i) != Some(&b':') {
                                return self.err("expected ':'");
                            }
                            self.i += 1;
                            let value = self.value(depth + 1)?;
                            members.push(Member {
                                key,
                                key_start,
                                value,
                            });
                            self.skip_ws()?;
                            match self.s.get(self.i) {
                                Some(b',') => self.i += 1,
                                Some(b'}') => {}
                                _ => return self.err("expected ',' or '}'"),
                            }
                        }
                        _ => return self.err("expected a key or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                loop {
                    self.skip_ws()?;
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(Node {
                            start,
                            end: self.i,
                            kind: Kind::Array,
                        });
                    }
                    self.value(depth + 1)?;
                    self.skip_ws()?;
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {}
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => {
                self.string()?;
                Ok(Node {
                    start,
                    end: self.i,
                    kind: Kind::Scalar,
                })
            }
            Some(c) if c.is_ascii_alphanumeric() || *c == b'-' || *c == b'+' || *c == b'.' => {
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
                {
                    self.i += 1;
                }
                let word = &self.s[start..self.i];
                let ok = matches!(word, b"true" | b"false" | b"null")
                    || std::str::from_utf8(word)
                        .ok()
                        .is_some_and(|w| w.parse::<f64>().is_ok() && !w.starts_with('+'));
                if !ok {
                    return self.err("unexpected token");
                }
                Ok(Node {
                    start,
                    end: self.i,
                    kind: Kind::Scalar,
                })
            }
            None => self.err("unexpected end"),
            _ => self.err("unexpected character"),
        }
    }

    /// A string literal at `self.i`, decoded.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.i;
        self.i += 1;
        loop {
            match self.s.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => self.i += 2,
                Some(c) if *c < 0x20 => return self.err("control character in a string"),
                Some(_) => self.i += 1,
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i])
            .map_err(|_| ParseError("a string is not UTF-8".into()))?;
        serde_json::from_str::<String>(text).map_err(|e| ParseError(format!("bad string: {e}")))
    }
}

fn parse_json(input: &[u8]) -> Result<Node, ParseError> {
    let mut p = Parser { s: input, i: 0 };
    if input.starts_with(b"\xEF\xBB\xBF") {
        p.i = 3;
    }
    let root = p.value(0)?;
    p.skip_ws()?;
    if p.i != input.len() {
        return p.err("trailing content");
    }
    if std::str::from_utf8(input).is_err() {
        return Err(ParseError("not UTF-8".into()));
    }
    Ok(root)
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

/// The edits that remove the members of an object whose indices are in
/// `gone` (ascending), each with its comma and the whitespace that belonged to
/// it, so that the rest keeps its layout. Consecutive members go in one edit,
/// so the edits never overlap.
fn cut_members(node: &Node, members: &[Member], gone: &[usize]) -> Vec<Edit> {
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

fn child_names(node: &Node) -> Vec<String> {
    match &node.kind {
        Kind::Object { members, .. } => members.iter().map(|m| m.key.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Collects the edits removing every member at a rule path below `node`.
fn json_cuts(
    rules: &[&[&str]],
    node: &Node,
    path: &mut Vec<String>,
    edits: &mut Vec<Edit>,
    removed: &mut Vec<String>,
) {
    let Kind::Object { members, .. } = &node.kind else {
        return;
    };
    let mut gone = Vec::new();
    for (i, m) in members.iter().enumerate() {
        path.push(m.key.clone());
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        if is_removed(rules, &refs) {
            gone.push(i);
            removed.push(describe(&refs, &child_names(&m.value)));
        } else if leads_to_removed(rules, &refs) {
            json_cuts(rules, &m.value, path, edits, removed);
        }
        path.pop();
    }
    edits.extend(cut_members(node, members, &gone));
}

fn json_filter(rules: &[&[&str]], input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let root = parse_json(input)?;
    let mut edits = Vec::new();
    let mut removed = Vec::new();
    json_cuts(rules, &root, &mut Vec::new(), &mut edits, &mut removed);
    Ok((apply(input, edits), removed))
}

// ---------------------------------------------------------------------------
// TOML, through a format-preserving editor

fn toml_remove(
    rules: &[&[&str]],
    table: &mut dyn toml_edit::TableLike,
    path: &mut Vec<String>,
    removed: &mut Vec<String>,
) {
    let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
    for key in keys {
        path.push(key.clone());
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        if is_removed(rules, &refs) {
            let children: Vec<String> = table
                .get(&key)
                .and_then(|i| i.as_table_like())
                .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
                .unwrap_or_default();
            table.remove(&key);
            removed.push(describe(&refs, &children));
        } else if leads_to_removed(rules, &refs) {
            if let Some(sub) = table.get_mut(&key).and_then(|i| i.as_table_like_mut()) {
                toml_remove(rules, sub, path, removed);
            }
        }
        path.pop();
    }
}

fn parse_toml(input: &[u8]) -> Result<toml_edit::DocumentMut, ParseError> {
    let text = std::str::from_utf8(input).map_err(|_| ParseError("not UTF-8".into()))?;
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| ParseError(e.message().to_string()))
}

fn toml_filter(rules: &[&[&str]], input: &[u8]) -> Result<(Vec<u8>, Vec<String>), ParseError> {
    let mut doc = parse_toml(input)?;
    let mut removed = Vec::new();
    toml_remove(rules, doc.as_table_mut(), &mut Vec::new(), &mut removed);
    if removed.is_empty() {
        return Ok((input.to_vec(), removed));
    }
    Ok((doc.to_string().into_bytes(), removed))
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
/// entries (at the level where extension entries can sit below, otherwise
/// whole values) that differ between the filtered `start` (what the run was
/// shown) and the filtered `run`; each is written over `host`'s entry.
/// Extension entries are never taken from the run; the host's stay as they
/// are. Both documents must parse.
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
        Format::Json => json_merge(rule.remove, &shown.bytes, run, host),
        Format::Toml => toml_merge(rule.remove, &shown.bytes, run, host),
        Format::Yaml => Ok(Merged::Unchanged),
    }
}

fn json_value(src: &[u8], node: &Node) -> Option<serde_json::Value> {
    let text = std::str::from_utf8(&src[node.start..node.end]).ok()?;
    serde_json::from_str(text).ok()
}

fn same_json(a_src: &[u8], a: &Node, b_src: &[u8], b: &Node) -> bool {
    match (json_value(a_src, a), json_value(b_src, b)) {
        (Some(x), Some(y)) => x == y,
        // JSONC with comments: fall back to the text.
        _ => a_src[a.start..a.end] == b_src[b.start..b.end],
    }
}

fn find<'n>(node: &'n Node, key: &str) -> Option<(usize, &'n Member)> {
    match &node.kind {
        Kind::Object { members, .. } => members.iter().enumerate().rfind(|(_, m)| m.key == key),
        _ => None,
    }
}

fn is_object(node: &Node) -> bool {
    matches!(node.kind, Kind::Object { .. })
}

/// The object at `path` below `node` (the last of duplicate keys, as
/// `JSON.parse` takes).
fn object_at<'n>(node: &'n Node, path: &[String]) -> Option<&'n Node> {
    let mut n = node;
    for k in path {
        n = &find(n, k)?.1.value;
    }
    is_object(n).then_some(n)
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
fn insert_members(src: &[u8], node: &Node, new: &[(String, String)]) -> Option<Edit> {
    let Kind::Object { members, close } = &node.kind else {
        return None;
    };
    let key = |k: &str| serde_json::to_string(k).unwrap_or_default();
    match members.last() {
        Some(last) => {
            // Laid out one member per line when the first member is on a
            // line of its own.
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
                end: *close,
                text: format!("\n{}\n{outer}", body.join(",\n")),
            })
        }
    }
}

/// New `(key, value text)` members for one object.
type Members = Vec<(String, String)>;

/// One change the run made, to be applied to the host document.
enum HostEdit {
    Replace {
        parent: Vec<String>,
        key: String,
        value: String,
    },
    Insert {
        parent: Vec<String>,
        key: String,
        value: String,
    },
    Delete {
        parent: Vec<String>,
        key: String,
    },
}

const EMPTY_OBJECT: Node = Node {
    start: 0,
    end: 2,
    kind: Kind::Object {
        members: Vec::new(),
        close: 1,
    },
};

/// Compares the run's object with what it was shown and records the changes,
/// descending where extension entries may sit below (those are never
/// changed, and a host value holding them is never replaced whole).
fn json_changes(
    rules: &[&[&str]],
    shown: (&[u8], &Node),
    run: (&[u8], &Node),
    host: (&[u8], &Node),
    path: &mut Vec<String>,
    out: &mut Vec<HostEdit>,
) {
    let mut keys: Vec<String> = Vec::new();
    for n in [shown.1, run.1] {
        for k in child_names(n) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    for key in keys {
        path.push(key.clone());
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let removed = is_removed(rules, &refs);
        let descend = leads_to_removed(rules, &refs);
        path.pop();
        if removed {
            continue;
        }
        let s = find(shown.1, &key).map(|(_, m)| &m.value);
        let r = find(run.1, &key).map(|(_, m)| &m.value);
        let h = find(host.1, &key).map(|(_, m)| &m.value);
        let parent = path.clone();
        // Objects on both sides are merged member by member, so that the
        // agent's change to one entry never overwrites the host's change to
        // another. Where extension entries may sit below, the host's object
        // is only ever edited inside.
        let both_objects = h.is_some_and(is_object) && r.is_some_and(is_object);
        if both_objects || (descend && h.is_some_and(is_object)) {
            if let Some(r) = r.filter(|r| is_object(r)) {
                let s = s.filter(|s| is_object(s));
                let (s_src, s) = match s {
                    Some(s) => (shown.0, s),
                    None => (&b"{}"[..], &EMPTY_OBJECT),
                };
                path.push(key.clone());
                json_changes(
                    rules,
                    (s_src, s),
                    (run.0, r),
                    (host.0, h.expect("checked")),
                    path,
                    out,
                );
                path.pop();
            }
            continue;
        }
        let unchanged = match (s, r) {
            (Some(s), Some(r)) => same_json(shown.0, s, run.0, r),
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            continue;
        }
        match (r, h) {
            (Some(r), Some(_)) => out.push(HostEdit::Replace {
                parent,
                key,
                value: String::from_utf8_lossy(&run.0[r.start..r.end]).into_owned(),
            }),
            (Some(r), None) => out.push(HostEdit::Insert {
                parent,
                key,
                value: String::from_utf8_lossy(&run.0[r.start..r.end]).into_owned(),
            }),
            (None, Some(_)) => out.push(HostEdit::Delete { parent, key }),
            (None, None) => {}
        }
    }
}

fn change_name(parent: &[String], key: &str) -> String {
    let mut p: Vec<&str> = parent.iter().map(String::as_str).collect();
    p.push(key);
    p.join(".")
}

fn json_merge(
    rules: &[&[&str]],
    shown: &[u8],
    run: &[u8],
    host: &[u8],
) -> Result<Merged, ParseError> {
    // What the run wrote, without any extension entry it may have added.
    let (run_clean, _) = json_filter(rules, run)?;
    let shown_root = parse_json(shown)?;
    let run_root = parse_json(&run_clean)?;
    let host_root = parse_json(host)?;
    if ![&shown_root, &run_root, &host_root]
        .iter()
        .all(|n| is_object(n))
    {
        return Err(ParseError("the document is not an object".into()));
    }
    let mut changes = Vec::new();
    json_changes(
        rules,
        (shown, &shown_root),
        (&run_clean, &run_root),
        (host, &host_root),
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
    for c in &changes {
        match c {
            HostEdit::Replace { parent, key, value } => {
                if let Some((_, m)) = object_at(&host_root, parent).and_then(|o| find(o, key)) {
                    edits.push(Edit {
                        start: m.value.start,
                        end: m.value.end,
                        text: value.clone(),
                    });
                    changed.push(change_name(parent, key));
                }
            }
            HostEdit::Delete { parent, key } => {
                if let Some((i, _)) = object_at(&host_root, parent).and_then(|o| find(o, key)) {
                    match deletions.iter_mut().find(|(p, _)| p == parent) {
                        Some((_, v)) => v.push(i),
                        None => deletions.push((parent.clone(), vec![i])),
                    }
                    changed.push(format!("{} (removed)", change_name(parent, key)));
                }
            }
            HostEdit::Insert { .. } => {}
        }
    }
    for (parent, mut gone) in deletions {
        if let Some(obj) = object_at(&host_root, &parent) {
            if let Kind::Object { members, .. } = &obj.kind {
                gone.sort_unstable();
                gone.dedup();
                edits.extend(cut_members(obj, members, &gone));
            }
        }
    }
    let mut text = apply(host, edits);
    // ... then insertions into the result, an object at a time.
    let mut inserts: Vec<(Vec<String>, Members)> = Vec::new();
    for c in changes {
        if let HostEdit::Insert { parent, key, value } = c {
            changed.push(change_name(&parent, &key));
            match inserts.iter_mut().find(|(p, _)| *p == parent) {
                Some((_, v)) => v.push((key, value)),
                None => inserts.push((parent, vec![(key, value)])),
            }
        }
    }
    if !inserts.is_empty() {
        let root = parse_json(&text)?;
        let edits: Vec<Edit> = inserts
            .iter()
            .filter_map(|(parent, new)| {
                object_at(&root, parent).and_then(|o| insert_members(&text, o, new))
            })
            .collect();
        text = apply(&text, edits);
    }
    parse_json(&text)?;
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
    rules: &[&[&str]],
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
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let name = refs.join(".");
        let removed = is_removed(rules, &refs);
        let descend = leads_to_removed(rules, &refs);
        if removed {
            path.pop();
            continue;
        }
        let s = shown.get(&key);
        let r = run.get(&key);
        // Tables on both sides are merged entry by entry; where extension
        // entries may sit below, the host's table is only ever edited inside.
        let host_table = host.get(&key).is_some_and(|h| h.is_table_like());
        let run_table = r.is_some_and(|r| r.is_table_like());
        if host_table && (run_table || descend) {
            if let Some(r) = r.and_then(|r| r.as_table_like()) {
                let s = s.and_then(|s| s.as_table_like()).unwrap_or(&empty);
                if let Some(h) = host.get_mut(&key).and_then(|i| i.as_table_like_mut()) {
                    toml_merge_table(rules, s, r, h, path, changed);
                }
            }
            path.pop();
            continue;
        }
        path.pop();
        let unchanged = match (s, r) {
            (Some(s), Some(r)) => toml_canon(s) == toml_canon(r),
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            continue;
        }
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

fn toml_merge(
    rules: &[&[&str]],
    shown: &[u8],
    run: &[u8],
    host: &[u8],
) -> Result<Merged, ParseError> {
    let (run_clean, _) = toml_filter(rules, run)?;
    let shown = parse_toml(shown)?;
    let run = parse_toml(&run_clean)?;
    let mut host_doc = parse_toml(host)?;
    let mut changed = Vec::new();
    toml_merge_table(
        rules,
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
mod tests;

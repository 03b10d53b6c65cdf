//! The one JSON reader of sealfs, and a Go-compatible string writer for
//! `seal.json`.
//!
//! The reader exists because a general-purpose deserializer forgives things SPEC
//! §Lockfile Validity forbids: duplicated object keys (serde keeps the last one),
//! a byte-order mark, lone UTF-16 surrogates. It yields a small tree that keeps
//! object members in source order with their line and column (and byte span),
//! so that every validity error can point at the offending value. Nesting is
//! capped so hostile input cannot exhaust the stack.
//!
//! It reads two grammars ([`Dialect`]): strict JSON (`seal.json`, the machine
//! policy) and JSONC, JSON with comments and trailing commas, as agents'
//! configuration files are written (`seal run` filters them). In JSONC a
//! comment whose end some reader sees elsewhere than another (a `//` comment
//! holding a lone carriage return, U+2028, a form feed, ...) is an error:
//! text that one agent reads as a comment and another as a member is never
//! taken for either.
//!
//! The writer reproduces Go `encoding/json` string escaping (the reference CLI's
//! encoder, see docs/LOCKFILE.md), which is what makes our `seal.json` bytes
//! identical to the reference tool's for the same state.

use std::fmt;

/// Deepest nesting accepted in strict JSON. A valid lockfile needs 4 levels;
/// the margin keeps error messages about shape (not depth) for mildly wrong
/// files.
const MAX_DEPTH: usize = 64;

/// Deepest nesting accepted in JSONC (agents' state files nest deeper than a
/// lockfile; the cap still keeps the stack safe).
const MAX_DEPTH_JSONC: usize = 512;

/// Which grammar [`parse_as`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// RFC 8259, strictly: no comments, no trailing commas, no byte-order mark.
    Strict,
    /// JSON with `//` and `/* */` comments and trailing commas; a UTF-8
    /// byte-order mark at the start is skipped. A `//` comment ends at a line
    /// feed (or at a carriage return and line feed). Readers disagree on
    /// where a `//` comment ends when it holds another line terminator (a
    /// lone carriage return, U+2028, U+2029, U+0085, a vertical tab, a form
    /// feed, U+001C to U+001E): such a comment is an error
    /// ([`SyntaxError::AmbiguousComment`]), never read one way.
    Jsonc,
}

/// Characters some reader takes for the end of a line (JavaScript's line
/// terminators, and what Python's `splitlines` and others split at): a `//`
/// comment holding one of them is ambiguous.
fn ends_a_line_somewhere(c: char) -> bool {
    matches!(
        c,
        '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' | '\u{b}' | '\u{c}' | '\u{1c}'..='\u{1e}'
    )
}

/// A position in the source text, 1-based, counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// One JSON value with the position where it starts and its byte span in
/// the source (`start..end`).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub pos: Pos,
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// An object member: its key (with the key's position and byte offset) and
/// its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_pos: Pos,
    pub key_start: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    /// The number exactly as written, so `1`, `1.0` and `1e0` stay distinct.
    Number(String),
    String(String),
    Array(Vec<Value>),
    /// Members in source order; keys are unique (duplicates are a parse error).
    Object(Vec<Member>),
}

impl Kind {
    /// The JSON type name used in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::String(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }
}

/// Why the bytes are not one strict JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxError {
    InvalidUtf8 {
        byte_offset: usize,
    },
    ByteOrderMark,
    Unexpected {
        pos: Pos,
        found: String,
        expected: &'static str,
    },
    DuplicateKey {
        pos: Pos,
        key: String,
        first: Pos,
    },
    TrailingContent {
        pos: Pos,
    },
    TooDeep {
        pos: Pos,
    },
    BadEscape {
        pos: Pos,
        detail: &'static str,
    },
    ControlCharacterInString {
        pos: Pos,
    },
    /// JSONC: a `//` comment holding a character some reader ends a line at.
    AmbiguousComment {
        pos: Pos,
        found: char,
    },
    /// JSONC: a `/*` comment without its `*/`.
    UnterminatedComment {
        pos: Pos,
    },
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxError::InvalidUtf8 { byte_offset } => {
                write!(
                    f,
                    "not valid UTF-8 (first bad byte at offset {byte_offset})"
                )
            }
            SyntaxError::ByteOrderMark => write!(
                f,
                "starts with a byte-order mark; seal.json is UTF-8 without BOM"
            ),
            SyntaxError::Unexpected {
                pos,
                found,
                expected,
            } => {
                write!(f, "{pos}: expected {expected}, found {found}")
            }
            SyntaxError::DuplicateKey { pos, key, first } => write!(
                f,
                "{pos}: duplicate object key {} (first at {first})",
                crate::escape::quoted(key)
            ),
            SyntaxError::TrailingContent { pos } => {
                write!(f, "{pos}: unexpected content after the JSON value")
            }
            SyntaxError::TooDeep { pos } => {
                write!(f, "{pos}: nested deeper than {MAX_DEPTH} levels")
            }
            SyntaxError::BadEscape { pos, detail } => write!(f, "{pos}: invalid escape: {detail}"),
            SyntaxError::ControlCharacterInString { pos } => {
                write!(f, "{pos}: unescaped control character in string")
            }
            SyntaxError::AmbiguousComment { pos, found } => write!(
                f,
                "{pos}: a // comment holds U+{:04X}, where some readers end the comment and \
                 others do not",
                *found as u32
            ),
            SyntaxError::UnterminatedComment { pos } => {
                write!(f, "{pos}: a /* comment is never closed")
            }
        }
    }
}

/// Parses exactly one strict JSON value (surrounded by optional whitespace).
pub fn parse(bytes: &[u8]) -> Result<Value, SyntaxError> {
    parse_as(bytes, Dialect::Strict)
}

/// Parses exactly one JSON value of `dialect` (surrounded by optional
/// whitespace, and in JSONC comments). Spans are offsets into `bytes`.
pub fn parse_as(bytes: &[u8], dialect: Dialect) -> Result<Value, SyntaxError> {
    let bom = bytes.starts_with(&[0xEF, 0xBB, 0xBF]);
    if bom && dialect == Dialect::Strict {
        return Err(SyntaxError::ByteOrderMark);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| SyntaxError::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    let mut parser = Parser {
        chars: text.char_indices().peekable(),
        len: text.len(),
        line: 1,
        column: 1,
        dialect,
    };
    if bom {
        parser.chars.next();
    }
    parser.skip_whitespace()?;
    let value = parser.value(0)?;
    parser.skip_whitespace()?;
    if parser.peek().is_some() {
        return Err(SyntaxError::TrailingContent { pos: parser.pos() });
    }
    Ok(value)
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    len: usize,
    line: usize,
    column: usize,
    dialect: Dialect,
}

impl Parser<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    /// The byte offset of the next character.
    fn offset(&mut self) -> usize {
        self.chars.peek().map_or(self.len, |&(i, _)| i)
    }

    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn skip_whitespace(&mut self) -> Result<(), SyntaxError> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
                self.bump();
            }
            if self.dialect == Dialect::Strict || self.peek() != Some('/') {
                return Ok(());
            }
            let pos = self.pos();
            self.bump();
            match self.bump() {
                Some('/') => self.line_comment()?,
                Some('*') => self.block_comment(pos)?,
                _ => {
                    return Err(SyntaxError::Unexpected {
                        pos,
                        found: "'/'".into(),
                        expected: "a comment (// or /*) or a JSON value",
                    });
                }
            }
        }
    }

    /// The rest of a `//` comment, up to (not including) its line feed.
    fn line_comment(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                None | Some('\n') => return Ok(()),
                Some('\r') => {
                    let pos = self.pos();
                    self.bump();
                    if self.peek() == Some('\n') {
                        return Ok(());
                    }
                    return Err(SyntaxError::AmbiguousComment { pos, found: '\r' });
                }
                Some(c) if ends_a_line_somewhere(c) => {
                    return Err(SyntaxError::AmbiguousComment {
                        pos: self.pos(),
                        found: c,
                    });
                }
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    /// The rest of a `/* */` comment.
    fn block_comment(&mut self, start: Pos) -> Result<(), SyntaxError> {
        loop {
            match self.bump() {
                None => return Err(SyntaxError::UnterminatedComment { pos: start }),
                Some('*') if self.peek() == Some('/') => {
                    self.bump();
                    return Ok(());
                }
                Some(_) => {}
            }
        }
    }

    fn unexpected(&mut self, expected: &'static str) -> SyntaxError {
        let pos = self.pos();
        let found = match self.peek() {
            None => "end of input".to_string(),
            Some(c) => format!("'{}'", c.escape_default()),
        };
        SyntaxError::Unexpected {
            pos,
            found,
            expected,
        }
    }

    fn expect(&mut self, want: char, expected: &'static str) -> Result<(), SyntaxError> {
        if self.peek() == Some(want) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let pos = self.pos();
        let start = self.offset();
        let max = match self.dialect {
            Dialect::Strict => MAX_DEPTH,
            Dialect::Jsonc => MAX_DEPTH_JSONC,
        };
        if depth > max {
            return Err(SyntaxError::TooDeep { pos });
        }
        let kind = match self.peek() {
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some('"') => Kind::String(self.string()?),
            Some('t') => self.literal("true", Kind::Bool(true))?,
            Some('f') => self.literal("false", Kind::Bool(false))?,
            Some('n') => self.literal("null", Kind::Null)?,
            Some('-' | '0'..='9') => Kind::Number(self.number()?),
            _ => return Err(self.unexpected("a JSON value")),
        };
        let end = self.offset();
        Ok(Value {
            pos,
            start,
            end,
            kind,
        })
    }

    fn literal(&mut self, word: &'static str, kind: Kind) -> Result<Kind, SyntaxError> {
        for want in word.chars() {
            if self.peek() != Some(want) {
                return Err(self.unexpected("a JSON value"));
            }
            self.bump();
        }
        Ok(kind)
    }

    fn number(&mut self) -> Result<String, SyntaxError> {
        let mut raw = String::new();
        if self.peek() == Some('-') {
            raw.push('-');
            self.bump();
        }
        match self.peek() {
            Some('0') => {
                raw.push('0');
                self.bump();
            }
            Some('1'..='9') => self.digits(&mut raw),
            _ => return Err(self.unexpected("a digit")),
        }
        if self.peek() == Some('.') {
            raw.push('.');
            self.bump();
            if !matches!(self.peek(), Some('0'..='9')) {
                return Err(self.unexpected("a digit after '.'"));
            }
            self.digits(&mut raw);
        }
        if let Some(e @ ('e' | 'E')) = self.peek() {
            raw.push(e);
            self.bump();
            if let Some(sign @ ('+' | '-')) = self.peek() {
                raw.push(sign);
                self.bump();
            }
            if !matches!(self.peek(), Some('0'..='9')) {
                return Err(self.unexpected("a digit in the exponent"));
            }
            self.digits(&mut raw);
        }
        Ok(raw)
    }

    fn digits(&mut self, raw: &mut String) {
        while let Some(c @ '0'..='9') = self.peek() {
            raw.push(c);
            self.bump();
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.expect('"', "'\"'")?;
        let mut out = String::new();
        loop {
            let pos = self.pos();
            match self.bump() {
                None => return Err(self.unexpected("a closing '\"'")),
                Some('"') => return Ok(out),
                Some('\\') => out.push(self.escape(pos)?),
                Some(c) if (c as u32) < 0x20 => {
                    return Err(SyntaxError::ControlCharacterInString { pos });
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn escape(&mut self, pos: Pos) -> Result<char, SyntaxError> {
        let bad = |detail| SyntaxError::BadEscape { pos, detail };
        Ok(match self.bump() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let high = self
                    .hex4()
                    .ok_or_else(|| bad("\\u needs four hex digits"))?;
                match high {
                    0xD800..=0xDBFF => {
                        if self.bump() != Some('\\') || self.bump() != Some('u') {
                            return Err(bad("lone high surrogate"));
                        }
                        let low = self
                            .hex4()
                            .ok_or_else(|| bad("\\u needs four hex digits"))?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(bad("high surrogate not followed by a low surrogate"));
                        }
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or_else(|| bad("invalid code point"))?
                    }
                    0xDC00..=0xDFFF => return Err(bad("lone low surrogate")),
                    _ => char::from_u32(high).ok_or_else(|| bad("invalid code point"))?,
                }
            }
            _ => return Err(bad("unknown escape character")),
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = self.peek()?.to_digit(16)?;
            self.bump();
            value = value * 16 + digit;
        }
        Some(value)
    }

    fn array(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.expect('[', "'['")?;
        let mut items = Vec::new();
        self.skip_whitespace()?;
        if self.peek() == Some(']') {
            self.bump();
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_whitespace()?;
            items.push(self.value(depth + 1)?);
            self.skip_whitespace()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                    self.skip_whitespace()?;
                    if self.dialect == Dialect::Jsonc && self.peek() == Some(']') {
                        self.bump();
                        return Ok(Kind::Array(items));
                    }
                }
                Some(']') => {
                    self.bump();
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.expect('{', "'{'")?;
        let mut members: Vec<Member> = Vec::new();
        let mut seen: std::collections::HashMap<String, Pos> = std::collections::HashMap::new();
        self.skip_whitespace()?;
        if self.peek() == Some('}') {
            self.bump();
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_whitespace()?;
            let key_pos = self.pos();
            let key_start = self.offset();
            if self.peek() != Some('"') {
                return Err(self.unexpected("a string key"));
            }
            let key = self.string()?;
            if let Some(&first) = seen.get(&key) {
                return Err(SyntaxError::DuplicateKey {
                    pos: key_pos,
                    key,
                    first,
                });
            }
            seen.insert(key.clone(), key_pos);
            self.skip_whitespace()?;
            self.expect(':', "':'")?;
            self.skip_whitespace()?;
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_pos,
                key_start,
                value,
            });
            self.skip_whitespace()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                    self.skip_whitespace()?;
                    if self.dialect == Dialect::Jsonc && self.peek() == Some('}') {
                        self.bump();
                        return Ok(Kind::Object(members));
                    }
                }
                Some('}') => {
                    self.bump();
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }
}

/// Appends `s` as a JSON string literal with Go `encoding/json` escaping
/// (HTML-safe mode, Go 1.22 and later):
/// `"` and `\` escaped; `\b \f \n \r \t` short forms; other C0 controls as
/// `\u00xx` (lowercase hex); `<`, `>`, `&` as `\u003c`, `\u003e`, `\u0026`;
/// U+2028 and U+2029 as `\u2028`, `\u2029`; everything else (DEL and all other
/// non-ASCII) written as UTF-8. A Rust `str` is always valid UTF-8, so Go's
/// replacement of invalid bytes by U+FFFD never applies here (names that are
/// not UTF-8 never reach the writer, see docs/LOCKFILE.md).
pub fn write_go_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `s` as a JSON string literal with the least escaping JSON allows
/// (`"`, `\\`, control characters), plus U+2028 and U+2029, which some
/// readers take for line ends: for documents people and agents read back.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '\u{7f}' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Renders a JSON array of strings the way Go's indenting encoder does at the
/// given depth (`[]` when empty).
pub fn write_string_array(out: &mut String, items: &[&str], depth: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline_indent(out, depth + 1);
        write_go_string(out, item);
    }
    newline_indent(out, depth);
    out.push(']');
}

/// A line break followed by two spaces per level.
pub fn newline_indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> SyntaxError {
        parse(text.as_bytes()).expect_err(text)
    }

    #[test]
    fn keeps_member_order_and_raw_numbers() {
        let v = parse(br#"{"b": 1.0, "a": [true, null, -0, 1e5]}"#).unwrap();
        let Kind::Object(members) = v.kind else {
            panic!()
        };
        assert_eq!(members[0].key, "b");
        assert_eq!(members[0].value.kind, Kind::Number("1.0".into()));
        assert_eq!(members[1].key, "a");
        let Kind::Array(items) = &members[1].value.kind else {
            panic!()
        };
        assert_eq!(items[2].kind, Kind::Number("-0".into()));
        assert_eq!(items[3].kind, Kind::Number("1e5".into()));
    }

    #[test]
    fn rejects_duplicate_keys_at_any_depth() {
        assert!(matches!(
            err(r#"{"a":1,"a":2}"#),
            SyntaxError::DuplicateKey { .. }
        ));
        let e = err("{\"x\": {\"f\": 1,\n \"f\": 2}}");
        match e {
            SyntaxError::DuplicateKey { pos, key, .. } => {
                assert_eq!(key, "f");
                assert_eq!(pos.line, 2);
            }
            other => panic!("{other:?}"),
        }
        // Equal after unescaping is equal.
        assert!(matches!(
            err(r#"{"a":1,"\u0061":2}"#),
            SyntaxError::DuplicateKey { .. }
        ));
    }

    #[test]
    fn rejects_trailing_content_bom_and_bad_utf8() {
        assert!(matches!(err("{} x"), SyntaxError::TrailingContent { .. }));
        assert!(matches!(err("{}{}"), SyntaxError::TrailingContent { .. }));
        assert_eq!(
            parse(b"\xEF\xBB\xBF{}").unwrap_err(),
            SyntaxError::ByteOrderMark
        );
        assert_eq!(
            parse(b"{\"a\xff\": 1}").unwrap_err(),
            SyntaxError::InvalidUtf8 { byte_offset: 3 }
        );
    }

    #[test]
    fn rejects_malformed_tokens() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "1e",
            "tru",
            "\"a",
            "{a:1}",
            "'a'",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\u{1}\"",
            "nul",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn decodes_escapes_and_surrogate_pairs() {
        let v = parse(br#""\u00e9\ud83d\ude00\n\/""#).unwrap();
        assert_eq!(v.kind, Kind::String("é😀\n/".into()));
    }

    #[test]
    fn depth_is_capped() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(matches!(err(&deep), SyntaxError::TooDeep { .. }));
    }

    fn jsonc(text: &str) -> Result<Value, SyntaxError> {
        parse_as(text.as_bytes(), Dialect::Jsonc)
    }

    #[test]
    fn jsonc_reads_comments_trailing_commas_and_a_bom() {
        let v =
            jsonc("\u{feff}// head\r\n{\"a\": 1, /* x */ \"b\": [1, 2,], // tail\n \"c\": {},}\n")
                .unwrap();
        let Kind::Object(m) = &v.kind else { panic!() };
        let keys: Vec<&str> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c"]);
        // Byte spans point into the source.
        let text = "{\"k\": [true]}";
        let v = jsonc(text).unwrap();
        let Kind::Object(m) = &v.kind else { panic!() };
        assert_eq!(&text[m[0].value.start..m[0].value.end], "[true]");
        assert_eq!(&text[m[0].key_start..m[0].key_start + 3], "\"k\"");
        assert_eq!((v.start, v.end), (0, text.len()));
        // None of it in strict JSON.
        assert!(parse(b"{\"a\": 1, // c\n}").is_err());
        assert!(parse(b"[1,]").is_err());
    }

    #[test]
    fn jsonc_refuses_comments_readers_end_differently() {
        for t in [
            '\r', '\u{2028}', '\u{2029}', '\u{85}', '\u{b}', '\u{c}', '\u{1e}',
        ] {
            let text = format!("{{\"a\": 1 // c{t}, \"mcp\": 2\n}}");
            match jsonc(&text) {
                Err(SyntaxError::AmbiguousComment { found, .. }) => assert_eq!(found, t),
                other => panic!("{t:?}: {other:?}"),
            }
        }
        assert!(matches!(
            jsonc("{} /* open"),
            Err(SyntaxError::UnterminatedComment { .. })
        ));
        assert!(matches!(
            jsonc(r#"{"a": 1, "a": 2}"#),
            Err(SyntaxError::DuplicateKey { .. })
        ));
        for bad in [
            "{a: 1}", "{'a': 1}", "[0x1]", "[1,,]", "{,}", "[NaN]", "{} / 2",
        ] {
            assert!(jsonc(bad).is_err(), "{bad}");
        }
        // Deeper than a lockfile, within the cap.
        let deep = "[".repeat(400) + &"]".repeat(400);
        assert!(jsonc(&deep).is_ok());
    }

    #[test]
    fn plain_strings_parse_back() {
        let sample = "a\"b\\c\n\u{1}\u{7f}\u{2028}<&>é";
        let mut out = String::new();
        write_json_string(&mut out, sample);
        assert!(!out.contains('\u{2028}'));
        assert_eq!(
            parse(out.as_bytes()).unwrap().kind,
            Kind::String(sample.into())
        );
    }

    #[test]
    fn go_escaping_matches_encoding_json() {
        let mut out = String::new();
        write_go_string(
            &mut out,
            "a<b>&\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{2028}\u{2029}é",
        );
        assert_eq!(
            out,
            "\"a\\u003cb\\u003e\\u0026\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\\u2028\\u2029é\""
        );
    }

    #[test]
    fn written_strings_parse_back() {
        let sample = "x<>&\"\\\u{0}\u{8}\u{1b}\u{2028}😀/";
        let mut out = String::new();
        write_go_string(&mut out, sample);
        assert_eq!(
            parse(out.as_bytes()).unwrap().kind,
            Kind::String(sample.into())
        );
    }
}

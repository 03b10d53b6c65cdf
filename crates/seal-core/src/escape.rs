//! Terminal-safe rendering of untrusted names (file names, lockfile keys, patterns).
//!
//! A bundle is attacker-controlled input: a file named with an ANSI escape, a
//! carriage return or a right-to-left override could rewrite what a reviewer sees
//! in `seal verify` output. Every name that reaches a terminal or a log goes
//! through [`escaped`] or [`quoted`], which turn control characters, bidi
//! controls and other invisible format characters into visible `\u{..}` escapes.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write;
use std::os::unix::ffi::OsStrExt;

/// True for characters that must never be written raw to a terminal.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061C}'             // arabic letter mark
            | '\u{200B}'..='\u{200F}' // zero-width and directional marks
            | '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2069}' // word joiner, bidi isolates
            | '\u{FEFF}'              // zero-width no-break space
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotations
        )
}

/// The name with every unsafe character (and the backslash, so the result is
/// unambiguous) written as an escape. Borrowed when nothing needed escaping.
pub fn escaped(name: &str) -> Cow<'_, str> {
    if !name.chars().any(|c| is_unsafe(c) || c == '\\') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The escaped name in double quotes, for error messages.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", escaped(name).replace('"', "\\\""))
}

/// An OS name (possibly not UTF-8) made printable: invalid bytes become `\xNN`.
pub fn escaped_os(name: &OsStr) -> String {
    let bytes = name.as_bytes();
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&escaped(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_untouched() {
        assert!(matches!(
            escaped("./.claude/skills/review"),
            Cow::Borrowed(_)
        ));
        assert_eq!(escaped("café/日本"), "café/日本");
    }

    #[test]
    fn controls_and_bidi_are_escaped() {
        assert_eq!(escaped("a\u{1b}[31mb"), "a\\u{001b}[31mb");
        assert_eq!(escaped("x\ny\rz\t"), "x\\ny\\rz\\t");
        assert_eq!(escaped("evil\u{202e}txt.sh"), "evil\\u{202e}txt.sh");
        assert_eq!(escaped("a\u{2066}b\u{7f}"), "a\\u{2066}b\\u{007f}");
        assert_eq!(escaped("back\\slash"), "back\\\\slash");
        assert_eq!(escaped("c1\u{9b}"), "c1\\u{009b}");
    }

    #[test]
    fn quoted_escapes_quotes() {
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
    }

    #[test]
    fn os_names_show_invalid_bytes() {
        let name = OsStr::from_bytes(b"ok\xffx\x1b");
        assert_eq!(escaped_os(name), "ok\\xffx\\u{001b}");
    }
}

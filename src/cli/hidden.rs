//! Agent artifacts on disk that no discovery pattern covers: the sealed view
//! hides them (block) or serves them unverified (warn), and a user looking
//! at `seal verify` would not know why. `seal verify -v` lists them, each
//! with the `seal pin` command that would seal it; `seal pin` offers
//! patterns for them. They are found by the gate's own walk
//! ([`uncovered_artifacts`]) and decided by asking the gate's one question
//! ([`Gate::ask`](seal_gate::Gate::ask), explaining: under the policy in
//! force, as the view decides), the one `seal why` and `seal run --dry-run`
//! ask, so they all agree with the view.

use std::fmt::Write as _;
use std::path::Path;

use seal_core::discovery::Listings;
use seal_core::escape::escaped;
use seal_core::lockfile::Lockfile;
use seal_core::paths::BundleKey;
use seal_gate::assess::{Uncovered, uncovered_artifacts};
use seal_gate::{Gate, Op, Place, Who};

/// The uncovered artifact roots of the project, as the gate sees them now
/// (with the machine policy's extra surfaces).
pub fn find(listings: &mut Listings<'_>, lock: &Lockfile) -> Vec<Uncovered> {
    let extra = seal_gate::policy::machine()
        .map(|m| m.extra_surfaces.clone())
        .unwrap_or_default();
    uncovered_artifacts(listings, lock, &extra)
}

/// The bundle key an artifact root would be sealed under, or why it cannot
/// be one.
fn key_of(u: &Uncovered) -> Result<BundleKey, String> {
    if u.path.raw.0.iter().any(|n| n.to_str().is_none()) {
        return Err("a name on its path is not UTF-8".to_string());
    }
    let names: Vec<String> = u.path.names().map(str::to_string).collect();
    BundleKey::from_segments(&names).map_err(|rule| format!("the bundle key {rule}"))
}

/// The keys `seal pin` can offer patterns for, and the roots it cannot
/// (path, why).
pub fn keys(found: &[Uncovered]) -> (Vec<BundleKey>, Vec<(String, String)>) {
    let mut keys = Vec::new();
    let mut refused = Vec::new();
    for u in found {
        match key_of(u) {
            Ok(key) => keys.push(key),
            Err(why) => refused.push((u.path.display(), why)),
        }
    }
    (keys, refused)
}

/// The section `seal verify -v` prints after the result: every uncovered
/// artifact, what the view does with it and why, and the command that would
/// seal it. Empty when there is none. `gate` explains the project's view;
/// `project_arg` is the `-C DIR` the command was given, repeated in the
/// suggested commands.
pub fn render(found: &[Uncovered], gate: &Gate, project_arg: Option<&Path>) -> String {
    let mut out = String::new();
    if found.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nAgent artifacts no discovery pattern covers ({}):",
        found.len()
    );
    let round = gate.explaining(None);
    for u in found {
        let decision = round.ask(&u.path, Op::lookup(u.kind), Who::this_process());
        let rule = match &u.place {
            Place::Artifact { rule, .. } => rule.describe(),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<8} {}  ({rule}; {})",
            decision.word(),
            escaped(&u.path.display()),
            decision.reason.describe()
        );
        let _ = match key_of(u) {
            Ok(key) => writeln!(
                out,
                "           to seal it: {}",
                pin_command(project_arg, key.rel_path())
            ),
            Err(why) => writeln!(out, "           cannot be sealed: {why}"),
        };
    }
    if found.iter().any(|u| key_of(u).is_ok()) {
        let _ = writeln!(
            out,
            "'{}' offers discovery patterns for them.",
            escaped(&(seal_prefix(project_arg) + "pin"))
        );
    }
    out
}

/// `seal pin PATH` (with `-C DIR` when the command had one), quoted for a
/// POSIX shell, then escaped for the terminal.
pub fn pin_command(project_arg: Option<&Path>, rel: &str) -> String {
    escaped(&format!(
        "{}pin {}",
        seal_prefix(project_arg),
        shell_word(rel)
    ))
    .into_owned()
}

/// `seal ` or `seal -C DIR `.
fn seal_prefix(project_arg: Option<&Path>) -> String {
    match project_arg {
        Some(dir) => format!("seal -C {} ", shell_word(&dir.to_string_lossy())),
        None => "seal ".to_string(),
    }
}

/// A word a POSIX shell reads back as `text`: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "._/-+@%=:,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(
            shell_word(".claude/commands/deploy.md"),
            ".claude/commands/deploy.md"
        );
        assert_eq!(
            shell_word("docs/my notes/AGENTS.md"),
            "'docs/my notes/AGENTS.md'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn pin_commands_repeat_the_project_and_escape_for_the_terminal() {
        assert_eq!(pin_command(None, "a b"), "seal pin 'a b'");
        assert_eq!(
            pin_command(Some(Path::new("../proj")), ".mcp.json"),
            "seal -C ../proj pin .mcp.json"
        );
        assert_eq!(pin_command(None, "x\u{1b}[2J"), "seal pin 'x\\u{001b}[2J'");
    }
}

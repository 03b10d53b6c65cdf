//! Agent artifacts on disk that no discovery pattern covers: the sealed view
//! hides them (block) or serves them unverified (warn), and a user looking
//! at `seal verify` would not know why. `seal verify -v` lists them, each
//! with the `seal pin` command that would seal it; `seal pin` offers
//! patterns for them. They are found by the gate's own walk
//! ([`uncovered_artifacts`]) and decided by asking the gate's one question
//! ([`Gate::ask`](seal_gate::Gate::ask), explaining: under the policy in
//! force, as the view decides), the one `seal why` and `seal run --dry-run`
//! ask, so they all agree with the view. Symlinks at surface paths are
//! listed too, each with its target, where it leads, the gate's judgement
//! of it ([`surface_links`]) and a remedy that works (pinning what it leads
//! to; a link itself is never sealed).

use std::fmt::Write as _;
use std::path::Path;

use seal_core::discovery::{Listings, expand};
use seal_core::escape::{escaped, escaped_os};
use seal_core::lockfile::Lockfile;
use seal_core::paths::BundleKey;
use seal_core::pattern::Pattern;
use seal_gate::assess::{Uncovered, uncovered_artifacts};
use seal_gate::links::{Leads, LinkRule, LinkState, SurfaceLink, surface_links};
use seal_gate::{Gate, Op, Place, ViewPath, Who};

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

/// A symlink at a surface path, as the gate judges it, with the roots on
/// disk (not in seal.json) that would make it followed once sealed.
pub struct LinkLine {
    pub path: ViewPath,
    pub link: SurfaceLink,
    pub keys: Vec<BundleKey>,
}

/// Every symlink at a surface path of the project, judged as the gate
/// judges it now (with the machine policy's extra surfaces).
pub fn find_links(listings: &mut Listings<'_>, lock: &Lockfile, rule: &LinkRule) -> Vec<LinkLine> {
    let extra = seal_gate::policy::machine()
        .map(|m| m.extra_surfaces.clone())
        .unwrap_or_default();
    surface_links(listings, rule, lock, &extra)
        .into_iter()
        .map(|(path, link)| {
            let patterns: Vec<Pattern> = link
                .missing
                .iter()
                .filter_map(|m| Pattern::parse(m).ok())
                .collect();
            let keys = missing_keys(listings, lock, &patterns);
            LinkLine { path, link, keys }
        })
        .collect()
}

/// The roots on disk (not in seal.json) that `link`'s missing patterns
/// produce: what sealing it takes.
pub fn line_keys(ctx: &super::Context, lock: &Lockfile, link: &SurfaceLink) -> Vec<BundleKey> {
    let patterns: Vec<Pattern> = link
        .missing
        .iter()
        .filter_map(|m| Pattern::parse(m).ok())
        .collect();
    let mut listings = Listings::new(std::os::fd::AsFd::as_fd(&ctx.project));
    missing_keys(&mut listings, lock, &patterns)
}

/// The roots `patterns` produce that no pattern of `lock` produces.
fn missing_keys(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    patterns: &[Pattern],
) -> Vec<BundleKey> {
    expand(listings, patterns)
        .map(|e| {
            e.roots
                .into_keys()
                .filter(|k| !lock.discovery.iter().any(|p| p.produces(k)))
                .collect()
        })
        .unwrap_or_default()
}

/// The keys `seal pin` offers patterns for so that hidden links become
/// followed (what they lead to, not in seal.json).
pub fn link_keys(lines: &[LinkLine]) -> Vec<BundleKey> {
    let mut keys: Vec<BundleKey> = lines.iter().flat_map(|l| l.keys.clone()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Where a link leads, for people, to follow "leads" (`to ./AGENTS.md`,
/// `out of the project`).
pub fn leads_text(leads: &Leads) -> String {
    match leads {
        Leads::Inside { path, .. } => {
            format!("to {}", escaped(&ViewPath::of(path).display()))
        }
        Leads::Outside => "out of the project".to_string(),
        Leads::Dangling => "nowhere".to_string(),
        Leads::Loop => "around in a loop".to_string(),
    }
}

/// What would make a link followed, or fix it (none when it is followed).
pub fn link_remedy(line: &LinkLine, project_arg: Option<&Path>) -> Option<String> {
    let missing: Vec<String> = line
        .link
        .missing
        .iter()
        .map(|m| escaped(m).into_owned())
        .collect();
    Some(match line.link.state {
        LinkState::Followed => return None,
        LinkState::Unsealed if line.keys.is_empty() => format!(
            "to seal it: add the discovery pattern {} to seal.json (nothing is there to pin yet)",
            missing.join(", ")
        ),
        LinkState::Unsealed if line.link.missing.iter().all(|m| !m.contains('*')) => {
            let words: Vec<String> = line.keys.iter().map(|k| shell_word(k.rel_path())).collect();
            format!(
                "to seal it: {}",
                escaped(&format!(
                    "{}pin {}",
                    seal_prefix(project_arg),
                    words.join(" ")
                ))
            )
        }
        LinkState::Unsealed => format!(
            "to seal it: '{}' offers the discovery pattern {}",
            escaped(&(seal_prefix(project_arg) + "pin")),
            missing.join(", ")
        ),
        LinkState::NotADirectory => {
            "to fix it: make it lead to a directory, or remove it".to_string()
        }
        LinkState::Outside => {
            "to fix it: make it lead inside the project, or replace it with what it leads to"
                .to_string()
        }
        LinkState::Dangling => "to fix it: remove it, or create what it names".to_string(),
        LinkState::Loop => "to fix it: break the loop".to_string(),
    })
}

/// One line about a link at a surface path for `init` and `pin`: where it
/// leads, `note` (what is pinned for it), and what the view does with it.
pub fn link_line(path: &ViewPath, link: &SurfaceLink, note: &str) -> String {
    let shown = match link.state {
        LinkState::Followed => "the view shows it",
        _ => "the view hides it",
    };
    let note = if note.is_empty() {
        String::new()
    } else {
        format!("; {note}")
    };
    format!(
        "  {} -> {}: leads {}{note}; {shown} ({})\n",
        escaped(&path.display()),
        escaped_os(&link.target),
        leads_text(&link.leads),
        link.state.describe()
    )
}

/// The heading and lines of the links section of `init` and `pin`.
pub fn linked_section(command: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "Linked agent surfaces ({}): a link is never sealed itself; {command} seals what it \
         leads to\n{}",
        lines.len(),
        lines.concat()
    )
}

/// The section `seal verify -v` prints about links at surface paths: each
/// link, its target, where it leads, what the view does with it and why (as
/// `gate`, explaining the project's view, decides it), and the remedy.
/// Empty when there is none.
pub fn render_links(lines: &[LinkLine], gate: &Gate, project_arg: Option<&Path>) -> String {
    let mut out = String::new();
    if lines.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\nAgent surfaces that are symlinks ({}):", lines.len());
    let round = gate.explaining(None);
    for line in lines {
        let op = Op::symlink(&line.link.target);
        let decision = round.ask(&line.path, op, Who::this_process());
        let _ = writeln!(
            out,
            "  {:<8} {} -> {}  ({}; it leads {})",
            decision.word(),
            escaped(&line.path.display()),
            escaped_os(&line.link.target),
            decision.reason.describe(),
            leads_text(&line.link.leads)
        );
        if let Some(remedy) = link_remedy(line, project_arg) {
            let _ = writeln!(out, "           {remedy}");
        }
    }
    out
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

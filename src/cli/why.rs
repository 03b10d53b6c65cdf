//! `seal why PATH [--json]`: explain one path — ordinary, or which lockfile
//! key and discovery pattern, which surface row, or which project-external
//! mask governs it; whether it exists; its classification; and the
//! decision the gate (or `seal run`) takes about it now, asked of the gate
//! itself ([`Gate::explaining`](seal_gate::Gate::explaining): the view's own
//! question, recording nothing). The same [`Explanation`] is printed as
//! `label: text` lines on stderr, or as the JSON document of docs/JSON.md
//! on stdout.

use std::fmt::Write as _;
use std::io::Write as _;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{CliError, Context, Done};
use crate::run::plan::{self, Node, Placement, lexical, locate};
use crate::run::target_user;
use seal_core::escape::{escaped, escaped_os};
use seal_core::fs::EntryKind;
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::store::StoreError;
use seal_gate::policy::{MachinePolicy, Source, lockfile_bytes};
use seal_gate::{
    Change, ChangeReason, Found, Gate, Kernel, Op, Place, Reason, Verdict, ViewPath, Who,
};

pub fn run(ctx: &Context, path: &Path, json: bool) -> Result<Done, CliError> {
    let machine = super::machine_policy()?;
    // Without seal.json (and no machine policy requiring Seal) Seal is not
    // active here: the path is still placed, against the empty lockfile,
    // and the answer says what that means.
    let (lock, lockfile) = match lockfile_bytes(ctx.project.as_fd(), machine) {
        Ok((bytes, implied)) => (
            Lockfile::parse(&bytes)?,
            if implied {
                LockfileStatus::Implied
            } else {
                LockfileStatus::Present
            },
        ),
        Err(StoreError::Missing) => (Lockfile::empty(Policy::Block), LockfileStatus::Missing),
        Err(e) => return Err(e.into()),
    };
    // The view's own gate, explaining: a missing seal.json is the empty
    // lockfile standing in, so that the path is still placed and assessed.
    let gate = super::explaining_gate(ctx, &lock, lockfile != LockfileStatus::Present)?;
    let under = Under {
        machine,
        lock: &lock,
        lockfile,
        gate: &gate,
    };
    let project = ctx.canonical_dir()?;
    let absolute = if path.is_absolute() {
        lexical(path)
    } else {
        lexical(&project.join(path))
    };
    let explained = match absolute.strip_prefix(&project) {
        Ok(rel) => explain_inside(ctx, &under, &project, rel),
        Err(_) => explain_outside(&project, &absolute)?,
    };
    if json {
        let mut text = serde_json::to_string_pretty(&explained).unwrap_or_default();
        text.push('\n');
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        say!("{}", explained.text);
    }
    Ok(Done::Success)
}

/// Whether the project has a seal.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
enum LockfileStatus {
    Present,
    /// Missing, and the machine policy does not require Seal: Seal is not
    /// active; `seal mount` and `seal run` refuse to start.
    Missing,
    /// Missing, and the machine policy requires Seal: the empty lockfile
    /// (policy block) stands in.
    Implied,
}

/// One path explained: the human text, and the fields of `seal why
/// --json` (docs/JSON.md). Names in the fields are raw (JSON escapes
/// them); the text escapes them for the terminal.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Explanation {
    /// `./REL` for a path in the project, the absolute path outside it.
    path: String,
    /// `project` or `outside`.
    location: &'static str,
    /// Whether anything is at the path on disk (a dangling symlink counts).
    exists: bool,
    /// What the path is: `ordinary`, `lockfile`, `container`,
    /// `sealed-root`, `inside-sealed-root`, `artifact`, `inside-artifact`,
    /// `unmappable`; outside the project `extension-location`,
    /// `inside-extension-location`, `skeleton` or `host`.
    class: &'static str,
    /// The class in words (the human `class:` line).
    class_text: String,
    /// `present`, `missing` or `implied` (inside the project only).
    #[serde(skip_serializing_if = "Option::is_none")]
    lockfile: Option<LockfileStatus>,
    /// The symlink's target, for a symlink at a surface path or a path
    /// reached through a symlink (`via`).
    #[serde(skip_serializing_if = "Option::is_none")]
    link_target: Option<String>,
    /// The symlink in a directory on the way to the path (`./REL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<String>,
    /// Where a path reached through `via` leads in the project (`./REL`);
    /// the other fields explain that path.
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<String>,
    /// The lockfile key of the sealed root it is or lies in.
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    /// The discovery patterns that produce that key.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    patterns: Vec<String>,
    /// The bundle is recorded in seal.json (sealed roots only).
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<bool>,
    /// The root's state, assessed just now: Verified, Unverified, Removed,
    /// Mismatch, or absent, empty, cannot-verify.
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    modified: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    missing: Vec<String>,
    /// The policy in force and who set it (gated paths in the project).
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_source: Option<&'static str>,
    /// In the project: `visible`, `hidden`, `absent` (nothing there) or
    /// `no-view` (no seal.json: no view is served). Outside it: `masked`,
    /// `filtered`, `shown`, `absent`, `skeleton`, `as-on-host`,
    /// `inside-project` or `cannot-mask`.
    decision: &'static str,
    /// Why, in words.
    reason: String,
    /// The command that would seal it, when one would.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
    /// What the writable view does with a write there, when the machine
    /// policy protects it.
    #[serde(skip_serializing_if = "Option::is_none")]
    writes: Option<String>,
    /// The human text.
    #[serde(skip)]
    text: String,
}

/// The rules a path is explained under: the machine policy and the
/// lockfile (the empty one when seal.json is missing; `lockfile` says
/// which), and the gate that decides under them.
struct Under<'a> {
    machine: &'a MachinePolicy,
    lock: &'a Lockfile,
    lockfile: LockfileStatus,
    gate: &'a Gate,
}

fn explain_inside(ctx: &Context, under: &Under<'_>, project: &Path, rel: &Path) -> Explanation {
    if let Some(x) = through_a_link(ctx, under, project, rel) {
        return x;
    }
    let lock = under.lock;
    let view = ViewPath::from_names(rel.iter());
    let mut x = Explanation {
        path: view.display(),
        location: "project",
        lockfile: Some(under.lockfile),
        ..Explanation::default()
    };
    let mut out = String::new();
    let _ = writeln!(out, "path:     {}", escaped(&view.display()));
    let on_disk = std::fs::symlink_metadata(project.join(rel));
    x.exists = on_disk.is_ok();
    if !x.exists {
        let _ = writeln!(out, "exists:   no (nothing at this path on disk)");
    }
    match under.lockfile {
        LockfileStatus::Present => {}
        LockfileStatus::Implied => {
            let _ = writeln!(
                out,
                "lockfile: none; the machine policy {} requires Seal, so the project counts as \
                 having the empty lockfile (policy block)",
                under.machine.shown_file()
            );
        }
        LockfileStatus::Missing => {
            let _ = writeln!(
                out,
                "lockfile: none; there is no seal.json, so Seal is not active in this project \
                 (run 'seal init' to start)"
            );
        }
    }
    let round = under.gate.explaining(None);
    let place = round.place(&view);
    let on_disk = on_disk.ok().map(|m| EntryKind::from_mode(m.mode()));
    let target = std::fs::read_link(project.join(rel)).ok();
    let who = Who::this_process();
    if let Some(link) = target.as_deref().and_then(|t| {
        let verdict = round.ask(&view, Op::symlink(t.as_os_str()), who);
        explain_surface_link(ctx, under, &place, &view, &verdict)
    }) {
        out.push_str(&link.text);
        x.class = "surface-link";
        x.class_text = link.class_text;
        x.link_target = Some(link.target);
        x.decision = link.decision;
        x.reason = link.reason;
        x.fix = link.fix;
        x.text = out;
        return x;
    }
    let at = |root_len: usize, root: &'static str, inside: &'static str| {
        if root_len == view.depth() {
            root
        } else {
            inside
        }
    };
    match &place {
        Place::Ordinary | Place::Lockfile | Place::Container => {
            x.class = match place {
                Place::Lockfile => "lockfile",
                Place::Container => "container",
                _ => "ordinary",
            };
            x.class_text = place_class(&place).to_string();
            let _ = writeln!(out, "class:    {}", x.class_text);
            if let Some(target) = &target {
                let _ = writeln!(out, "link:     {}", escaped_os(target.as_os_str()));
                x.link_target = Some(target.to_string_lossy().into_owned());
            }
        }
        Place::Sealed { key, root_len } => {
            x.class = at(*root_len, "sealed-root", "inside-sealed-root");
            x.key = Some(key.as_str().to_string());
            x.patterns = lock
                .patterns_producing(key)
                .map(|p| p.to_string())
                .collect();
            let quoted: Vec<String> = x.patterns.iter().map(|p| format!("\"{p}\"")).collect();
            x.class_text = format!(
                "{} {} (discovery pattern {})",
                at(*root_len, "the sealed root", "inside the sealed root"),
                escaped(key.as_str()),
                escaped(&quoted.join(", "))
            );
            let _ = writeln!(out, "class:    {}", x.class_text);
            let entry = lock.bundles.get(key);
            x.recorded = Some(entry.is_some());
            let _ = match entry {
                Some(e) => writeln!(out, "lockfile: recorded, {} files", e.files.len()),
                None => writeln!(out, "lockfile: not recorded"),
            };
        }
        Place::Artifact { root_len, rule } => {
            x.class = at(*root_len, "artifact", "inside-artifact");
            x.class_text = format!(
                "{}: {}",
                at(*root_len, "an agent artifact", "inside an agent artifact"),
                rule.describe()
            );
            let _ = writeln!(out, "class:    {}", x.class_text);
            let _ = writeln!(
                out,
                "lockfile: no discovery pattern covers it, so it is unverified"
            );
        }
        Place::Unmappable { .. } => {
            x.class = "unmappable";
            x.class_text =
                "produced by a discovery pattern, but a name on its path cannot be a bundle key"
                    .to_string();
            let _ = writeln!(out, "class:    {}", x.class_text);
        }
    }
    // The gate's own question, root first: a path inside a root is only
    // reachable while its root is shown.
    let ask = |path: &ViewPath| {
        let op = Op::Lookup {
            on_disk,
            link_target: target.as_deref().map(Path::as_os_str),
            kernel: Kernel::default(),
        };
        round.ask(path, op, who)
    };
    let mut verdict = match place.root_len() {
        Some(root_len) => round.ask(&view.prefix(root_len), Op::lookup(EntryKind::Dir), who),
        None => ask(&view),
    };
    if let (Found::Root(state), Place::Sealed { .. } | Place::Artifact { .. }) =
        (verdict.found, &place)
    {
        let assessment = verdict.assessment.as_deref();
        match assessment.and_then(|a| a.unverifiable.as_ref()) {
            Some(e) => {
                x.state = Some("cannot-verify".to_string());
                let _ = writeln!(out, "state:    cannot verify ({e})");
            }
            None => {
                x.state = Some(state.as_str().to_string());
                let _ = writeln!(out, "state:    {} (assessed just now)", state.as_str());
            }
        }
        if let Some(report) = assessment.and_then(|a| a.report.as_ref()) {
            super::output::file_lines(&mut out, report);
            x.modified = report.modified.clone();
            x.added = report.added.clone();
            x.missing = report.missing.clone();
        }
    }
    if verdict.yes && place.root_len().is_some_and(|n| n < view.depth()) {
        verdict = ask(&view);
    }
    let implied = under.lockfile == LockfileStatus::Implied;
    let (policy, source) = under.machine.policy_of(lock, implied);
    if place.is_gated() && under.lockfile != LockfileStatus::Missing {
        x.policy = Some(policy.as_str());
        x.policy_source = Some(source.as_str());
    }
    if source == Source::Machine && !implied && place.is_gated() {
        let _ = writeln!(
            out,
            "policy:   {} (the machine policy {} overrides the project's {})",
            policy.as_str(),
            under.machine.shown_file(),
            lock.policy.as_str()
        );
    }
    // An agent's housekeeping is never pinned: `seal run` gives the agent
    // its own for the run.
    let housekeeping = matches!(
        place,
        Place::Artifact {
            rule: seal_gate::surfaces::SurfaceRule::Housekeeping(_),
            ..
        }
    );
    let fix = match verdict.reason {
        Reason::Failing { .. } | Reason::NotRecorded if place.is_gated() && !housekeeping => {
            let root = view.prefix(place.root_len().unwrap_or(view.depth()));
            Some(format!(
                "seal pin {}",
                root.display().trim_start_matches("./")
            ))
        }
        _ => None,
    };
    (x.decision, x.reason) = if under.lockfile == LockfileStatus::Missing {
        (
            "no-view",
            "no seal.json: seal mount and seal run refuse to start, and an agent without them \
             loads it as it is on disk; run 'seal init' to seal this project"
                .to_string(),
        )
    } else if !x.exists {
        ("absent", "nothing at this path on disk".to_string())
    } else {
        (verdict.word(), verdict.reason.describe().to_string())
    };
    let hint = match (&fix, x.decision) {
        (Some(fix), "hidden" | "visible") => format!("; run '{}' to seal it", escaped(fix)),
        (None, "hidden") if housekeeping => {
            "; nothing to pin: under seal run the agent writes its own, in memory for the run"
                .to_string()
        }
        _ => String::new(),
    };
    x.fix = fix.filter(|_| matches!(x.decision, "hidden" | "visible"));
    let _ = writeln!(out, "decision: {} ({}{hint})", x.decision, x.reason);
    // What the writable view does with a change here: the gate's own
    // answer to the view's questions (this round records nothing).
    let change = |change| {
        round.ask(
            &view,
            Op::Change {
                change,
                op: "why",
                writable: true,
            },
            who,
        )
    };
    // A refusal of the machine policy's globs names the glob too.
    let refused = |v: Verdict| {
        (!v.yes).then(|| match v.reason {
            Reason::Change(ChangeReason::MachineProtected | ChangeReason::MachineOnTheWay) => {
                let glob = under.machine.protected_paths.protection(view.names()).1;
                let glob =
                    glob.map(|g| format!("; glob {}", seal_core::escape::quoted(g.as_str())));
                format!("{}{}", v.reason.describe(), glob.unwrap_or_default())
            }
            _ => v.reason.describe().to_string(),
        })
    };
    let writes = match refused(change(Change::Modify)) {
        Some(why) => Some(format!("refused in the writable view ({why})")),
        None => refused(change(Change::MoveAway {
            holds_protected: false,
        }))
        .map(|why| format!("it may not be replaced or moved in the writable view ({why})")),
    };
    if let Some(writes) = writes {
        let _ = writeln!(out, "writes:   {writes}");
        x.writes = Some(writes);
    }
    x.text = out;
    x
}

/// A path reached through a symlink in one of its directories: the kernel
/// follows the link into the view, so the path is decided where it leads
/// (said, then explained there); or hidden with the link when the gate
/// hides the link. `None` when no directory on the way is a symlink.
fn through_a_link(
    ctx: &Context,
    under: &Under<'_>,
    project: &Path,
    rel: &Path,
) -> Option<Explanation> {
    let names: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let at = (1..names.len()).find(|&i| {
        let prefix: std::path::PathBuf = names[..i].iter().collect();
        std::fs::read_link(project.join(prefix)).is_ok()
    })?;
    let prefix: std::path::PathBuf = names[..at].iter().collect();
    let link_view = ViewPath::from_names(names[..at].iter().copied());
    let shown_path = ViewPath::from_names(names.iter().copied()).display();
    let mut out = format!(
        "path:     {}\nvia:      {}\n",
        escaped(&shown_path),
        escaped(&link_view.display())
    );
    let target = std::fs::read_link(project.join(&prefix)).ok()?;
    // The gate decides the link itself (a link at a surface path is judged
    // where it leads); the kernel follows it where it leads.
    let round = under.gate.explaining(None);
    let place = round.place(&link_view);
    let verdict = round.ask(
        &link_view,
        Op::symlink(target.as_os_str()),
        Who::this_process(),
    );
    let surface = explain_surface_link(ctx, under, &place, &link_view, &verdict);
    let leads = match &verdict.link {
        Some(link) => link.leads.clone(),
        None => {
            ctx.link_rule()
                .ok()?
                .follow(ctx.project.as_fd(), &link_view.raw, target.as_os_str())
        }
    };
    match (&surface, leads) {
        (Some(link), _) if link.decision == "hidden" => {
            out.push_str(&link.text);
            Some(Explanation {
                path: shown_path,
                location: "project",
                exists: true,
                class: "through-link",
                class_text: link.class_text.clone(),
                lockfile: Some(under.lockfile),
                via: Some(link_view.display()),
                link_target: Some(link.target.clone()),
                decision: link.decision,
                reason: link.reason.clone(),
                fix: link.fix.clone(),
                text: out,
                ..Explanation::default()
            })
        }
        (_, seal_gate::links::Leads::Inside { path, .. }) => {
            let mut resolved: std::path::PathBuf = path.0.iter().collect();
            resolved.extend(&names[at..]);
            let _ = writeln!(
                out,
                "link:     -> {} (the kernel follows it in the view; decided at {})",
                escaped_os(target.as_os_str()),
                escaped(&ViewPath::of(&path).display())
            );
            let there = explain_inside(ctx, under, project, &resolved);
            out.push_str(&there.text);
            Some(Explanation {
                path: shown_path,
                via: Some(link_view.display()),
                link_target: Some(target.to_string_lossy().into_owned()),
                resolved: Some(there.path.clone()),
                text: out,
                ..there
            })
        }
        _ => {
            // A link out of the project: decided as the gate decides the
            // link itself (an ordinary one by the ordinary link rule).
            let decision = verdict.word();
            let reason = format!(
                "{}; what is reached through it is not the project's",
                verdict.reason.describe()
            );
            let _ = writeln!(
                out,
                "link:     -> {} (it does not lead into the project)\ndecision: {decision} \
                 ({reason})",
                escaped_os(target.as_os_str()),
            );
            Some(Explanation {
                path: shown_path,
                location: "project",
                exists: true,
                class: "through-link",
                class_text: "a path below a symlink that leads out of the project".to_string(),
                lockfile: Some(under.lockfile),
                via: Some(link_view.display()),
                link_target: Some(target.to_string_lossy().into_owned()),
                decision,
                reason,
                text: out,
                ..Explanation::default()
            })
        }
    }
}

/// A symlink at a surface path, explained: its lines for the terminal (its
/// target, where it leads, the gate's judgement and a remedy, see
/// [`seal_gate::links`]) and the fields `seal why --json` gives for it.
struct SurfaceLinkExplained {
    text: String,
    class_text: String,
    target: String,
    decision: &'static str,
    reason: String,
    fix: Option<String>,
}

/// `verdict` is the gate's answer about the symlink at `view` (placed at
/// `place`); `None` when it is not a link at a surface path.
fn explain_surface_link(
    ctx: &Context,
    under: &Under<'_>,
    place: &Place,
    view: &ViewPath,
    decision: &Verdict,
) -> Option<SurfaceLinkExplained> {
    let link = decision.link.clone()?;
    let line = super::hidden::LinkLine {
        path: view.clone(),
        keys: super::hidden::line_keys(ctx, under.lock, &link),
        link,
    };
    let mut out = String::new();
    let class_text = format!(
        "a symlink at an agent surface path ({})",
        match place {
            Place::Container => "where agents look for a directory",
            _ => "where agents load one artifact",
        }
    );
    let _ = writeln!(out, "class:    {class_text}");
    let _ = writeln!(
        out,
        "link:     -> {} (leads {})",
        escaped_os(&line.link.target),
        super::hidden::leads_text(&line.link.leads)
    );
    let fix = super::hidden::link_remedy(&line, ctx.project_arg());
    let remedy = fix.as_ref().map(|r| format!("; {r}")).unwrap_or_default();
    let reason = decision.reason.describe();
    let _ = writeln!(out, "decision: {} ({reason}{remedy})", decision.word());
    Some(SurfaceLinkExplained {
        text: out,
        class_text,
        target: line.link.target.to_string_lossy().into_owned(),
        decision: decision.word(),
        reason: reason.to_string(),
        fix,
    })
}

/// What a place that needs no verification is, in words.
fn place_class(place: &Place) -> &'static str {
    match place {
        Place::Lockfile => "the project's lockfile (always shown, never sealed)",
        Place::Container => "container (a directory on the way to sealed roots or agent surfaces)",
        _ => "ordinary (no sealed root, no agent surface)",
    }
}

fn explain_outside(project: &Path, path: &Path) -> Result<Explanation, CliError> {
    let target = target_user(None, project).map_err(CliError::Run)?;
    let planned =
        plan::plan(&target.inputs).map_err(|e| CliError::Run(crate::run::RunError::Bind(e)))?;
    let mut x = Explanation {
        path: path.to_string_lossy().into_owned(),
        location: "outside",
        exists: std::fs::symlink_metadata(path).is_ok(),
        ..Explanation::default()
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "path:     {} (outside the project)",
        escaped_os(path.as_os_str())
    );
    // Where the run looks: the path with its parents' symlinks resolved (a
    // location is decided by where it is, not by what it points to).
    let at = locate(path);
    let hit = planned
        .planned
        .iter()
        .filter(|p| at.starts_with(&p.location) || path.starts_with(&p.location))
        .max_by_key(|p| p.location.as_os_str().len());
    let Some(p) = hit else {
        // Not placed: inside a skeleton directory (bound as on the host), or
        // outside them all.
        let mut dir = &planned.root;
        let mut skeleton = true;
        for c in at.components().skip(1) {
            match dir.children.get(c.as_os_str()) {
                Some(Node::Dir(d)) => dir = d,
                _ => {
                    skeleton = false;
                    break;
                }
            }
        }
        x.class = if skeleton { "skeleton" } else { "host" };
        x.class_text = "not a known agent extension location".to_string();
        (x.decision, x.reason) = if skeleton {
            (
                "skeleton",
                "seal run shows this directory as a skeleton of the host's (its entries bound, \
                 extension locations empty); new host entries do not appear during the run"
                    .to_string(),
            )
        } else {
            (
                "as-on-host",
                "seal run shows it as it is on the host".to_string(),
            )
        };
        let _ = writeln!(out, "class:    {}", x.class_text);
        let _ = writeln!(out, "decision: {}", x.reason);
        x.text = out;
        return Ok(x);
    };
    let inside = if p.location == at || p.location == path {
        x.class = "extension-location";
        ""
    } else {
        x.class = "inside-extension-location";
        "inside "
    };
    x.class_text = format!(
        "{inside}project-external extension location {} — {}",
        escaped_os(p.location.as_os_str()),
        p.why
    );
    let _ = writeln!(out, "class:    {}", x.class_text);
    (x.decision, x.reason) = match &p.state {
        plan::State::Placed(Placement::EmptyDir | Placement::Cover)
        | plan::State::Covered { .. } => (
            "masked",
            "seal run masks it with an empty read-only directory, whatever it is or points to"
                .to_string(),
        ),
        plan::State::Placed(Placement::EmptyFile) => (
            "masked",
            "seal run masks it with an empty read-only file, whatever it is or points to"
                .to_string(),
        ),
        plan::State::Placed(Placement::Filtered(f)) => {
            let mut s = format!(
                "seal run shows {} (filter \"{}\")",
                Placement::Filtered(f.clone()).describe(),
                f.rule.id
            );
            match &f.filtered.unparsed {
                Some(why) => {
                    let _ = write!(s, "; it does not parse ({why}), so it is shown empty");
                }
                None if f.filtered.removed.is_empty() => {
                    s.push_str("; it has no extension entries")
                }
                None => {
                    let removed: Vec<String> = f
                        .filtered
                        .removed
                        .iter()
                        .map(|r| escaped(r).into_owned())
                        .collect();
                    let _ = write!(s, "; removed: {}", removed.join("; "));
                }
            }
            ("filtered", s)
        }
        plan::State::Placed(other) => (
            "shown",
            format!("seal run shows {} there", other.describe()),
        ),
        plan::State::Absent => (
            "absent",
            "nothing there now, and nothing in the run can create it (its directory is read-only \
             there)"
                .to_string(),
        ),
        plan::State::InsideProject => (
            "inside-project",
            "it is inside the project: the sealed view decides".to_string(),
        ),
        plan::State::Impossible { reason } => (
            "cannot-mask",
            format!("cannot be masked ({reason}): seal run would be Blocked"),
        ),
    };
    let _ = writeln!(out, "decision: {}", x.reason);
    x.text = out;
    Ok(x)
}

//! `seal why PATH`: explain one path — ordinary, or which lockfile key and
//! discovery pattern, which surface row, or which project-external mask
//! governs it; its classification; and the decision the gate (or `seal run`)
//! takes about it now.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{CliError, Context, Done};
use crate::run::plan::{self, Node, Placement, lexical, locate};
use crate::run::target_user;
use seal_core::escape::{escaped, escaped_os};
use seal_core::fs::EntryKind;
use seal_core::lockfile::Lockfile;
use seal_gate::policy::{MachinePolicy, Protection, Source, lockfile_bytes};
use seal_gate::{Found, Kernel, Op, Place, Reason, ViewPath, Who};

pub fn run(ctx: &Context, path: &Path) -> Result<Done, CliError> {
    let machine = super::machine_policy()?;
    let (bytes, implied) = lockfile_bytes(ctx.project.as_fd(), machine)?;
    let lock = Lockfile::parse(&bytes)?;
    let under = Under {
        machine,
        lock: &lock,
        implied,
    };
    let project = std::fs::canonicalize(&ctx.dir).map_err(|source| CliError::Project {
        dir: ctx.dir.clone(),
        source,
    })?;
    let absolute = if path.is_absolute() {
        lexical(path)
    } else {
        lexical(&project.join(path))
    };
    let text = match absolute.strip_prefix(&project) {
        Ok(rel) => explain_inside(ctx, &under, &project, rel),
        Err(_) => explain_outside(&project, &absolute)?,
    };
    eprint!("{text}");
    Ok(Done::Success)
}

/// The rules a path is explained under: the machine policy and the
/// lockfile (`implied`: the empty one standing in for a missing seal.json).
struct Under<'a> {
    machine: &'a MachinePolicy,
    lock: &'a Lockfile,
    implied: bool,
}

fn explain_inside(ctx: &Context, under: &Under<'_>, project: &Path, rel: &Path) -> String {
    let lock = under.lock;
    let view = ViewPath::from_names(rel.iter());
    let mut out = String::new();
    let _ = writeln!(out, "path:     {}", escaped(&view.display()));
    if under.implied {
        let _ = writeln!(
            out,
            "lockfile: none; the machine policy {} requires Seal, so the project counts as \
             having the empty lockfile (policy block)",
            under.machine.shown_file()
        );
    }
    let gate = match super::explaining_gate(ctx, lock, under.implied) {
        Ok(gate) => gate,
        Err(e) => {
            let _ = writeln!(out, "decision: cannot tell ({e})");
            return out;
        }
    };
    let round = gate.explaining(None);
    let place = round.place(&view);
    let at = |root_len: usize, root: &'static str, inside: &'static str| {
        if root_len == view.depth() {
            root
        } else {
            inside
        }
    };
    let on_disk = std::fs::symlink_metadata(project.join(rel))
        .ok()
        .map(|m| EntryKind::from_mode(m.mode()));
    let target = std::fs::read_link(project.join(rel)).ok();
    match &place {
        Place::Ordinary | Place::Lockfile | Place::Container => {
            let _ = writeln!(out, "class:    {}", place_class(&place));
            if let Some(target) = &target {
                let _ = writeln!(out, "link:     {}", escaped_os(target.as_os_str()));
            }
        }
        Place::Sealed { key, root_len } => {
            let patterns: Vec<String> = lock
                .patterns_producing(key)
                .map(|p| format!("\"{p}\""))
                .collect();
            let _ = writeln!(
                out,
                "class:    {} {key} (discovery pattern {})",
                at(*root_len, "the sealed root", "inside the sealed root"),
                patterns.join(", ")
            );
            let _ = match lock.bundles.get(key) {
                Some(e) => writeln!(out, "lockfile: recorded, {} files", e.files.len()),
                None => writeln!(out, "lockfile: not recorded"),
            };
        }
        Place::Artifact { root_len, rule } => {
            let _ = writeln!(
                out,
                "class:    {}: {}",
                at(*root_len, "an agent artifact", "inside an agent artifact"),
                rule.describe()
            );
            let _ = writeln!(
                out,
                "lockfile: no discovery pattern covers it, so it is unverified"
            );
        }
        Place::Unmappable { .. } => {
            let _ = writeln!(
                out,
                "class:    produced by a discovery pattern, but a name on its path cannot be a bundle key"
            );
        }
    }
    // The gate's own question, root first: a path inside a root is only
    // reachable while its root is shown.
    let who = Who::this_process();
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
        let _ = match verdict
            .assessment
            .as_ref()
            .and_then(|a| a.unverifiable.as_ref())
        {
            Some(e) => writeln!(out, "state:    cannot verify ({e})"),
            None => writeln!(out, "state:    {} (assessed just now)", state.as_str()),
        };
        if let Some(report) = verdict.assessment.as_ref().and_then(|a| a.report.as_ref()) {
            super::output::file_lines(&mut out, report);
        }
    }
    if verdict.yes && place.root_len().is_some_and(|n| n < view.depth()) {
        verdict = ask(&view);
    }
    let (policy, source) = under.machine.policy_of(lock, under.implied);
    if source == Source::Machine && !under.implied && place.is_gated() {
        let _ = writeln!(
            out,
            "policy:   {} (the machine policy {} overrides the project's {})",
            policy.as_str(),
            under.machine.shown_file(),
            lock.policy.as_str()
        );
    }
    let hint = match verdict.reason {
        Reason::Failing { .. } | Reason::NotRecorded if place.is_gated() => {
            let root = view.prefix(place.root_len().unwrap_or(view.depth()));
            format!(
                "; run 'seal pin {}' to seal it",
                escaped(root.display().trim_start_matches("./"))
            )
        }
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "decision: {} ({}{hint})",
        verdict.word(),
        verdict.reason.describe()
    );
    if let (protection @ (Protection::Protected | Protection::OnTheWay), Some(glob)) =
        under.machine.protected_paths.protection(view.names())
    {
        let _ = writeln!(
            out,
            "writes:   {} in the writable view (machine policy protected path {})",
            if protection == Protection::Protected {
                "refused"
            } else {
                "may not replace or move it"
            },
            seal_core::escape::quoted(glob.as_str())
        );
    }
    out
}

/// What a place that needs no verification is, in words.
fn place_class(place: &Place) -> &'static str {
    match place {
        Place::Lockfile => "the project's lockfile (always shown, never sealed)",
        Place::Container => "container (a directory on the way to sealed roots or agent surfaces)",
        _ => "ordinary (no sealed root, no agent surface)",
    }
}

fn explain_outside(project: &Path, path: &Path) -> Result<String, CliError> {
    let target = target_user(None, project).map_err(CliError::Run)?;
    let planned =
        plan::plan(&target.inputs).map_err(|e| CliError::Run(crate::run::RunError::Bind(e)))?;
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
        let _ = writeln!(out, "class:    not a known agent extension location");
        let _ = writeln!(
            out,
            "decision: {}",
            if skeleton {
                "seal run shows this directory as a skeleton of the host's (its entries bound, \
                 extension locations empty); new host entries do not appear during the run"
            } else {
                "seal run shows it as it is on the host"
            }
        );
        return Ok(out);
    };
    let inside = if p.location == at || p.location == path {
        ""
    } else {
        "inside "
    };
    let _ = writeln!(
        out,
        "class:    {inside}project-external extension location {} — {}",
        escaped_os(p.location.as_os_str()),
        p.why
    );
    let decision = match &p.state {
        plan::State::Placed(Placement::EmptyDir | Placement::Cover) | plan::State::Covered { .. } => {
            "seal run masks it with an empty read-only directory, whatever it is or points to"
                .to_string()
        }
        plan::State::Placed(Placement::EmptyFile) => {
            "seal run masks it with an empty read-only file, whatever it is or points to".to_string()
        }
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
                None if f.filtered.removed.is_empty() => s.push_str("; it has no extension entries"),
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
            s
        }
        plan::State::Placed(other) => format!("seal run shows {} there", other.describe()),
        plan::State::Absent => {
            "nothing there now, and nothing in the run can create it (its directory is read-only there)"
                .to_string()
        }
        plan::State::InsideProject => "it is inside the project: the sealed view decides".to_string(),
        plan::State::Impossible { reason } => {
            format!("cannot be masked ({reason}): seal run would be Blocked")
        }
    };
    let _ = writeln!(out, "decision: {decision}");
    Ok(out)
}

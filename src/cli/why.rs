//! `seal why PATH`: explain one path — ordinary, or which lockfile key and
//! discovery pattern, which surface row, or which project-external mask
//! governs it; its classification; and the decision the gate (or `seal run`)
//! takes about it now.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::Path;

use super::{CliError, Context, Done};
use crate::run::plan::{self, Node, Placement, lexical, locate};
use crate::run::target_user;
use seal_core::discovery::Listings;
use seal_core::effort::Effort;
use seal_core::escape::{escaped, escaped_os};
use seal_core::hash::KeepNothing;
use seal_core::lockfile::Lockfile;
use seal_core::verify::BundleState;
use seal_gate::links::LinkRule;
use seal_gate::policy::{MachinePolicy, Protection, Source, lockfile_bytes};
use seal_gate::{
    Place, Reason, RootState, State, ViewPath, assess_artifact, assess_sealed, decide, place_with,
};

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
    if let Some(text) = through_a_link(ctx, under, project, rel) {
        return text;
    }
    let lock = under.lock;
    let mut view = ViewPath::root();
    for c in rel.iter() {
        view = view.child(c);
    }
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
    let place = place_with(lock, &under.machine.extra_surfaces, &view);
    if let Some(text) = explain_surface_link(ctx, under, project, rel, &view, &place) {
        out.push_str(&text);
        return out;
    }
    let mut listings = Listings::new(ctx.project.as_fd());
    let at = |root_len: usize, root: &'static str, inside: &'static str| {
        if root_len == view.depth() {
            root
        } else {
            inside
        }
    };
    // The states the gate would decide on, root first: a path inside a root
    // is only reachable while its root is shown.
    let mut states = Vec::new();
    match &place {
        Place::Ordinary | Place::Lockfile | Place::Container => {
            let _ = writeln!(out, "class:    {}", place_class(&place));
            match std::fs::read_link(project.join(rel)) {
                Ok(target) => {
                    let rule = LinkRule::new(project, &[project.to_path_buf()]);
                    let dir = view.parent().map(|p| p.raw).unwrap_or_default();
                    let _ = writeln!(out, "link:     {}", escaped_os(target.as_os_str()));
                    states.push(State::Link {
                        stays_behind_gate: rule.allows(&dir, target.as_os_str()),
                    });
                }
                Err(_) => states.push(State::Plain),
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
            let entry = lock.bundles.get(key);
            let _ = match entry {
                Some(e) => writeln!(out, "lockfile: recorded, {} files", e.files.len()),
                None => writeln!(out, "lockfile: not recorded"),
            };
            match assess_sealed(&mut listings, key, entry, &KeepNothing, Effort::full()) {
                Ok(found) => {
                    let _ = writeln!(
                        out,
                        "state:    {} (assessed just now)",
                        found.state.as_str()
                    );
                    if let Some(report) = &found.report {
                        super::output::file_lines(&mut out, report);
                    }
                    states.push(State::Root(found.state));
                }
                Err(e) => {
                    let _ = writeln!(out, "state:    cannot verify ({e})");
                    states.push(State::Root(RootState::Bundle(BundleState::Mismatch)));
                }
            }
            if *root_len < view.depth() {
                let rel = view.rel_text(*root_len);
                let recorded = entry.is_some_and(|e| e.records(&rel));
                states.push(State::Recorded(recorded));
            }
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
            let state = assess_artifact(&mut listings, &view.prefix(*root_len).raw);
            let _ = writeln!(out, "state:    {} (assessed just now)", state.as_str());
            states.push(State::Root(state));
        }
        Place::Unmappable { root_len } => {
            let _ = writeln!(
                out,
                "class:    produced by a discovery pattern, but a name on its path cannot be a bundle key"
            );
            states.push(State::Root(assess_artifact(
                &mut listings,
                &view.prefix(*root_len).raw,
            )));
        }
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
    let mut decision = decide(&place, State::Plain, policy);
    for state in states {
        decision = decide(&place, state, policy);
        if !decision.shown {
            break;
        }
    }
    let hint = match decision.reason {
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
        decision.word(),
        decision.reason.describe()
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

/// A path reached through a symlink in one of its directories: the kernel
/// follows the link into the view, so the path is decided where it leads
/// (said, then explained there); or hidden with the link when the gate
/// hides the link. `None` when no directory on the way is a symlink.
fn through_a_link(ctx: &Context, under: &Under<'_>, project: &Path, rel: &Path) -> Option<String> {
    let names: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let at = (1..names.len()).find(|&i| {
        let prefix: std::path::PathBuf = names[..i].iter().collect();
        std::fs::read_link(project.join(prefix)).is_ok()
    })?;
    let prefix: std::path::PathBuf = names[..at].iter().collect();
    let link_view = ViewPath::from_names(names[..at].iter().copied());
    let place = place_with(under.lock, &under.machine.extra_surfaces, &link_view);
    let mut out = format!(
        "path:     {}\nvia:      {}\n",
        escaped(&ViewPath::from_names(names.iter().copied()).display()),
        escaped(&link_view.display())
    );
    let surface = explain_surface_link(ctx, under, project, &prefix, &link_view, &place);
    let target = std::fs::read_link(project.join(&prefix)).ok()?;
    let leads =
        ctx.link_rule()
            .ok()?
            .follow(ctx.project.as_fd(), &link_view.raw, target.as_os_str());
    match (&surface, leads) {
        (Some(text), _) if text.contains("decision: hidden") => {
            out.push_str(text);
            Some(out)
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
            out.push_str(&explain_inside(ctx, under, project, &resolved));
            Some(out)
        }
        _ => {
            // An ordinary link out of the project: the ordinary link rule.
            let dir = link_view.parent().map(|p| p.raw).unwrap_or_default();
            let shown =
                LinkRule::new(project, &[project.to_path_buf()]).allows(&dir, target.as_os_str());
            let _ = writeln!(
                out,
                "link:     -> {} (it does not lead into the project)\ndecision: {} ({}; what \
                 is reached through it is not the project's)",
                escaped_os(target.as_os_str()),
                if shown { "visible" } else { "hidden" },
                Reason::Link {
                    stays_behind_gate: shown
                }
                .describe()
            );
            Some(out)
        }
    }
}

/// The lines about a symlink at a surface path: its target, where it
/// leads, the gate's judgement and a remedy (see [`seal_gate::links`]);
/// `None` for any other path.
fn explain_surface_link(
    ctx: &Context,
    under: &Under<'_>,
    project: &Path,
    rel: &Path,
    view: &ViewPath,
    place: &Place,
) -> Option<String> {
    let target = std::fs::read_link(project.join(rel)).ok()?;
    let rule = ctx.link_rule().ok()?;
    let link = seal_gate::links::judge(
        &rule,
        ctx.project.as_fd(),
        under.lock,
        &under.machine.extra_surfaces,
        view,
        place,
        target.as_os_str(),
    )?;
    let line = super::hidden::LinkLine {
        path: view.clone(),
        keys: super::hidden::line_keys(ctx, under.lock, &link),
        link,
    };
    let (policy, _) = under.machine.policy_of(under.lock, under.implied);
    let decision = decide(place, State::SurfaceLink(line.link.state), policy);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "class:    a symlink at an agent surface path ({})",
        match place {
            Place::Container => "where agents look for a directory",
            _ => "where agents load one artifact",
        }
    );
    let _ = writeln!(
        out,
        "link:     -> {} (leads {})",
        escaped_os(&line.link.target),
        super::hidden::leads_text(&line.link.leads)
    );
    let remedy = super::hidden::link_remedy(&line, ctx.project_arg())
        .map(|r| format!("; {r}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "decision: {} ({}{remedy})",
        decision.word(),
        decision.reason.describe()
    );
    Some(out)
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

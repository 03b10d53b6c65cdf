//! `seal why PATH`: explain one path — ordinary, or which lockfile key and
//! discovery pattern, which surface row, or which project-external mask
//! governs it; its classification; and the decision the gate (or `seal run`)
//! takes about it now.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::Path;

use super::{CliError, Context, Done};
use crate::core::discovery::Listings;
use crate::core::escape::{escaped, escaped_os};
use crate::core::hash::KeepNothing;
use crate::core::lockfile::{Lockfile, Policy};
use crate::core::store::read_lockfile;
use crate::core::verify::{BundleState, verify_key};
use crate::gate::links::LinkRule;
use crate::gate::{Place, ViewPath, place};
use crate::run::plan::{Node, Placement, State, lexical, locate, plan};
use crate::run::target_user;

pub fn run(ctx: &Context, path: &Path) -> Result<Done, CliError> {
    let bytes = read_lockfile(ctx.project.as_fd())?;
    let lock = Lockfile::parse(&bytes)?;
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
        Ok(rel) => explain_inside(ctx, &lock, &project, rel),
        Err(_) => explain_outside(&project, &absolute)?,
    };
    eprint!("{text}");
    Ok(Done::Success)
}

fn explain_inside(ctx: &Context, lock: &Lockfile, project: &Path, rel: &Path) -> String {
    let mut view = ViewPath::root();
    for c in rel.iter() {
        view = view.child(c);
    }
    let mut out = String::new();
    let _ = writeln!(out, "path:     {}", escaped(&view.display()));
    let policy = lock.policy.as_str();
    match place(lock, &view) {
        Place::Ordinary => {
            let _ = writeln!(out, "class:    ordinary (no sealed root, no agent surface)");
            let target = std::fs::read_link(project.join(rel)).ok();
            match target {
                Some(t) => {
                    let rule = LinkRule::new(project, &[project.to_path_buf()]);
                    let dir = view.parent().map(|p| p.raw).unwrap_or_default();
                    let allowed = rule.allows(&dir, t.as_os_str());
                    let _ = writeln!(
                        out,
                        "decision: a symlink to {}: {}",
                        escaped_os(t.as_os_str()),
                        if allowed {
                            "shown (following it stays behind the gate)"
                        } else {
                            "hidden (it would lead around the gate)"
                        }
                    );
                }
                None => {
                    let _ = writeln!(out, "decision: shown as on disk");
                }
            }
        }
        Place::Container => {
            let _ = writeln!(
                out,
                "class:    container (a directory on the way to sealed roots or agent surfaces)"
            );
            let _ = writeln!(
                out,
                "decision: shown; each entry inside is decided on its own"
            );
        }
        Place::Sealed { key, root_len } => {
            let patterns: Vec<String> = lock
                .patterns_producing(&key)
                .map(|p| format!("\"{p}\""))
                .collect();
            let at = if root_len == view.depth() {
                "the sealed root"
            } else {
                "inside the sealed root"
            };
            let _ = writeln!(
                out,
                "class:    {at} {key} (discovery pattern {})",
                patterns.join(", ")
            );
            let entry = lock.bundles.get(&key);
            match entry {
                Some(e) => {
                    let _ = writeln!(out, "lockfile: recorded, {} files", e.files.len());
                }
                None => {
                    let _ = writeln!(out, "lockfile: not recorded");
                }
            }
            let mut listings = Listings::new(ctx.project.as_fd());
            match verify_key(&mut listings, &key, entry, &KeepNothing) {
                Ok((report, _)) => {
                    let _ = writeln!(
                        out,
                        "state:    {} (verified just now)",
                        report.state.as_str()
                    );
                    super::output::file_lines(&mut out, &report);
                    let decision = match (report.state, lock.policy) {
                        (BundleState::Verified, _) => {
                            "visible; every open is verified again and served from the verified bytes"
                        }
                        (BundleState::Removed, _) => "nothing on disk to show",
                        (_, Policy::Warn) => {
                            "visible with a warning (warn mode); every load is logged"
                        }
                        (_, Policy::Block) => "hidden (block mode)",
                    };
                    let _ = writeln!(out, "decision: {decision}");
                }
                Err(e) => {
                    let _ = writeln!(out, "state:    cannot verify ({e})\ndecision: hidden");
                }
            }
        }
        Place::Artifact { root_len, rule } => {
            let at = if root_len == view.depth() {
                "an agent artifact"
            } else {
                "inside an agent artifact"
            };
            let _ = writeln!(out, "class:    {at}: {}", rule.describe());
            let _ = writeln!(
                out,
                "lockfile: no discovery pattern covers it, so it is unverified"
            );
            let _ = writeln!(
                out,
                "decision: {} ({policy} mode; run 'seal pin {}' to seal it)",
                if lock.policy == Policy::Warn {
                    "visible with a warning, every load logged"
                } else {
                    "hidden"
                },
                escaped(view.display().trim_start_matches("./"))
            );
        }
        Place::Unmappable { .. } => {
            let _ = writeln!(
                out,
                "class:    produced by a discovery pattern, but a name on its path is not UTF-8"
            );
            let _ = writeln!(
                out,
                "decision: unverified: {}",
                if lock.policy == Policy::Warn {
                    "visible with a warning"
                } else {
                    "hidden"
                }
            );
        }
    }
    out
}

fn explain_outside(project: &Path, path: &Path) -> Result<String, CliError> {
    let target = target_user(None, project).map_err(CliError::Run)?;
    let planned = plan(&target.inputs).map_err(|e| CliError::Run(crate::run::RunError::Bind(e)))?;
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
        State::Placed(Placement::EmptyDir | Placement::Cover) | State::Covered { .. } => {
            "seal run masks it with an empty read-only directory, whatever it is or points to"
                .to_string()
        }
        State::Placed(Placement::EmptyFile) => {
            "seal run masks it with an empty read-only file, whatever it is or points to".to_string()
        }
        State::Placed(Placement::Filtered(f)) => {
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
        State::Placed(other) => format!("seal run shows {} there", other.describe()),
        State::Absent => {
            "nothing there now, and nothing in the run can create it (its directory is read-only there)"
                .to_string()
        }
        State::InsideProject => "it is inside the project: the sealed view decides".to_string(),
        State::Impossible { reason } => {
            format!("cannot be masked ({reason}): seal run would be Blocked")
        }
    };
    let _ = writeln!(out, "decision: {decision}");
    Ok(out)
}

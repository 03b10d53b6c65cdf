//! `seal why PATH`: explain one path — ordinary, or which lockfile key and
//! discovery pattern, which surface row, or which project-external mask
//! governs it; its classification; and the decision the gate (or `seal run`)
//! takes about it now.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

use super::{CliError, Context, Done};
use crate::core::discovery::Listings;
use crate::core::escape::{escaped, escaped_os};
use crate::core::hash::KeepNothing;
use crate::core::lockfile::{Lockfile, Policy};
use crate::core::store::read_lockfile;
use crate::core::verify::{BundleState, verify_key};
use crate::gate::links::LinkRule;
use crate::gate::{Place, ViewPath, place};
use crate::run::masks::{MaskKind, MaskState, plan};
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

/// `.` and `..` resolved without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
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
    let planned = plan(&target.mask_inputs);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "path:     {} (outside the project)",
        escaped_os(path.as_os_str())
    );
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let hit = planned.iter().find(|p| {
        path.starts_with(&p.location)
            || match &p.state {
                MaskState::Mask { target, .. } | MaskState::Covered { by: target } => {
                    resolved.starts_with(target)
                }
                _ => false,
            }
    });
    match hit {
        Some(p) => {
            let _ = writeln!(
                out,
                "class:    project-external extension location {} — {}",
                escaped_os(p.location.as_os_str()),
                p.why
            );
            let decision = match &p.state {
                MaskState::Mask {
                    kind: MaskKind::Dir,
                    ..
                }
                | MaskState::Covered { .. } => {
                    "seal run masks it with an empty read-only directory".to_string()
                }
                MaskState::Mask {
                    kind: MaskKind::File,
                    ..
                } => "seal run masks it with an empty read-only file".to_string(),
                MaskState::Absent => "nothing there now; seal run has nothing to mask".to_string(),
                MaskState::InsideProject => {
                    "it resolves into the project: the sealed view decides".to_string()
                }
                MaskState::Impossible { reason } => {
                    format!("cannot be masked ({reason}): seal run would be Blocked")
                }
            };
            let _ = writeln!(out, "decision: {decision}");
        }
        None => {
            let _ = writeln!(out, "class:    not a known agent extension location");
            let _ = writeln!(out, "decision: seal run leaves it as it is");
        }
    }
    Ok(out)
}

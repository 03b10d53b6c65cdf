//! Which project-external locations `seal run` masks, and why.
//!
//! The plan is computed from the built-in table in [`crate::surfaces`] (home,
//! XDG and admin locations, locations named by relocating variables), plus
//! every instruction file and agent directory in each parent directory of the
//! project. It only reads the filesystem (`lstat`, `canonicalize`); applying
//! it is [`super::namespace`]'s job. Every candidate ends up in one state:
//! masked, absent (nothing to load), inside the project (the sealed view
//! governs it), covered by another mask, or impossible (the run is Blocked).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::surfaces::{AGENT_DIRS, Base, EXTERNAL_GROUPS, EXTERNAL_ROWS, parent_names};

/// What a mask covers a location with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskKind {
    /// An empty read-only tmpfs.
    Dir,
    /// An empty read-only regular file.
    File,
}

/// The fate of one candidate location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskState {
    /// Covered by an empty read-only `kind` at `target` (the location with
    /// symlinks resolved).
    Mask { target: PathBuf, kind: MaskKind },
    /// Nothing there.
    Absent,
    /// Resolves into the project: the sealed view decides about it.
    InsideProject,
    /// Inside a directory that another mask empties.
    Covered { by: PathBuf },
    /// Cannot be masked; the run must not start (SPEC: Blocked).
    Impossible { reason: String },
}

/// One candidate location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub location: PathBuf,
    /// Which table row or rule named it.
    pub why: String,
    pub state: MaskState,
}

/// The inputs: homes of the target user, the environment the command gets,
/// and the project's canonical path.
#[derive(Debug, Clone)]
pub struct MaskInputs {
    pub homes: Vec<PathBuf>,
    pub env: BTreeMap<String, OsString>,
    pub project: PathBuf,
}

impl MaskInputs {
    fn var(&self, name: &str) -> Option<PathBuf> {
        self.env
            .get(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// The directories a base stands for (several when there are several homes).
    fn bases(&self, base: Base) -> Vec<PathBuf> {
        match base {
            Base::Home => self.homes.clone(),
            Base::XdgConfig => match self.var("XDG_CONFIG_HOME") {
                Some(p) => vec![p],
                None => self.homes.iter().map(|h| h.join(".config")).collect(),
            },
            Base::EnvDir(v) | Base::EnvFile(v) => self.var(v).into_iter().collect(),
            Base::EnvDirList(v) => self
                .env
                .get(v)
                .map(|list| {
                    list.to_string_lossy()
                        .split([':', ','])
                        .map(str::trim)
                        .filter(|s| s.starts_with('/'))
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            Base::Root => vec![PathBuf::from("/")],
        }
    }
}

/// Every candidate location with the rule that names it (first rule wins).
pub fn candidates(inputs: &MaskInputs) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    let mut push = |p: PathBuf, why: String| {
        if !out.iter().any(|(q, _)| *q == p) {
            out.push((p, why));
        }
    };
    for g in EXTERNAL_GROUPS {
        for base in inputs.bases(g.base) {
            for name in g.names {
                let mut p = base.clone();
                if !g.dir.is_empty() {
                    p.push(g.dir);
                }
                p.push(name);
                push(p, format!("{} ({})", describe_base(g.base), g.agents));
            }
        }
    }
    for r in EXTERNAL_ROWS {
        for base in inputs.bases(r.base) {
            let p = if r.path.is_empty() {
                base
            } else {
                base.join(r.path.trim_start_matches('/'))
            };
            push(p, format!("{} ({})", describe_base(r.base), r.agents));
        }
    }
    let names = parent_names();
    let mut dir = inputs.project.parent();
    while let Some(parent) = dir {
        let is_home = inputs.homes.iter().any(|h| h == parent);
        for name in &names {
            // In a home directory the agent directories hold credentials and
            // state as well as extensions: the home rows above mask the
            // extension parts precisely instead.
            if is_home && AGENT_DIRS.contains(&name.as_str()) {
                continue;
            }
            push(
                parent.join(name),
                "parent directory of the project (agents walk up into it)".to_string(),
            );
        }
        dir = parent.parent();
    }
    out
}

fn describe_base(base: Base) -> String {
    match base {
        Base::Home => "home directory".to_string(),
        Base::XdgConfig => "XDG config directory".to_string(),
        Base::EnvDir(v) | Base::EnvFile(v) | Base::EnvDirList(v) => format!("${v}"),
        Base::Root => "system-wide".to_string(),
    }
}

/// Decides the state of every candidate.
pub fn plan(inputs: &MaskInputs) -> Vec<Planned> {
    let mut planned: Vec<Planned> = candidates(inputs)
        .into_iter()
        .map(|(location, why)| {
            let state = decide(&location, &inputs.project);
            Planned {
                location,
                why,
                state,
            }
        })
        .collect();
    // A location inside a directory that is masked needs no mask of its own
    // (and could not get one: the empty tmpfs has no such entry).
    let dirs: Vec<PathBuf> = planned
        .iter()
        .filter_map(|p| match &p.state {
            MaskState::Mask {
                target,
                kind: MaskKind::Dir,
            } => Some(target.clone()),
            _ => None,
        })
        .collect();
    for p in &mut planned {
        if let MaskState::Mask { target, .. } = &p.state {
            if let Some(outer) = dirs.iter().find(|d| target != *d && target.starts_with(d)) {
                p.state = MaskState::Covered { by: outer.clone() };
            }
        }
    }
    planned
}

fn decide(location: &Path, project: &Path) -> MaskState {
    match std::fs::symlink_metadata(location) {
        Ok(_) => {}
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return MaskState::Absent;
        }
        Err(e) => {
            return MaskState::Impossible {
                reason: format!("cannot inspect it: {e}"),
            };
        }
    }
    // Resolve symlinks: an agent follows them, so the target is what must be
    // covered. A dangling link leads nowhere.
    let target = match std::fs::canonicalize(location) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return MaskState::Absent,
        Err(e) => {
            return MaskState::Impossible {
                reason: format!("cannot resolve it: {e}"),
            };
        }
    };
    if target.starts_with(project) && target != project {
        return MaskState::InsideProject;
    }
    if project.starts_with(&target) {
        return MaskState::Impossible {
            reason: format!(
                "it contains the project ({}); masking it would hide the project itself",
                crate::core::escape::escaped_os(project.as_os_str())
            ),
        };
    }
    let kind = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => MaskKind::Dir,
        Ok(_) => MaskKind::File,
        Err(e) => {
            return MaskState::Impossible {
                reason: format!("cannot inspect its target: {e}"),
            };
        }
    };
    MaskState::Mask { target, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, MaskInputs) {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let home = root.join("home");
        let project = root.join("work/proj");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(home.join(".claude/skills/x")).unwrap();
        std::fs::write(home.join(".claude/CLAUDE.md"), "user memory").unwrap();
        std::fs::write(home.join(".claude/.credentials.json"), "secret").unwrap();
        std::fs::create_dir_all(home.join(".agents/skills/y")).unwrap();
        std::fs::write(root.join("work/CLAUDE.md"), "parent memory").unwrap();
        std::fs::create_dir_all(root.join("work/.codex")).unwrap();
        let inputs = MaskInputs {
            homes: vec![home],
            env: BTreeMap::new(),
            project,
        };
        (t, inputs)
    }

    fn masked(plan: &[Planned]) -> Vec<String> {
        let mut v: Vec<String> = plan
            .iter()
            .filter_map(|p| match &p.state {
                MaskState::Mask { target, .. } => Some(target.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn masks_home_and_parent_locations_that_exist() {
        let (t, inputs) = setup();
        let root = std::fs::canonicalize(t.path())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let plan = plan(&inputs);
        assert_eq!(
            masked(&plan),
            [
                format!("{root}/home/.agents/skills"),
                format!("{root}/home/.claude/CLAUDE.md"),
                format!("{root}/home/.claude/skills"),
                format!("{root}/work/.codex"),
                format!("{root}/work/CLAUDE.md"),
            ]
        );
        assert!(
            plan.iter()
                .all(|p| !p.location.ends_with(".credentials.json"))
        );
        let claude_md = plan
            .iter()
            .find(|p| p.location.ends_with("home/.claude/CLAUDE.md"))
            .unwrap();
        assert!(matches!(
            claude_md.state,
            MaskState::Mask {
                kind: MaskKind::File,
                ..
            }
        ));
    }

    #[test]
    fn relocating_variables_are_followed() {
        let (t, mut inputs) = setup();
        let alt = std::fs::canonicalize(t.path()).unwrap().join("alt-claude");
        std::fs::create_dir_all(alt.join("skills")).unwrap();
        inputs
            .env
            .insert("CLAUDE_CONFIG_DIR".into(), alt.clone().into_os_string());
        inputs
            .env
            .insert("CODEX_HOME".into(), "relative/ignored".into());
        assert!(
            masked(&plan(&inputs)).contains(&alt.join("skills").to_string_lossy().into_owned())
        );
    }

    #[test]
    fn symlinks_into_the_project_are_left_to_the_view_and_containing_the_project_is_impossible() {
        let (_t, inputs) = setup();
        let home = inputs.homes[0].clone();
        std::fs::create_dir_all(inputs.project.join("skills")).unwrap();
        std::os::unix::fs::symlink(inputs.project.join("skills"), home.join(".codex"))
            .unwrap_or(());
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::os::unix::fs::symlink(inputs.project.join("skills"), home.join(".gemini/skills"))
            .unwrap();
        let plan = plan(&inputs);
        let g = plan
            .iter()
            .find(|p| p.location.ends_with(".gemini/skills"))
            .unwrap();
        assert_eq!(g.state, MaskState::InsideProject);

        let mut inside = inputs.clone();
        inside.project = home.join(".claude/skills/x");
        let plan = super::plan(&inside);
        let s = plan
            .iter()
            .find(|p| p.location.ends_with(".claude/skills"))
            .unwrap();
        assert!(matches!(s.state, MaskState::Impossible { .. }), "{s:?}");
    }
}

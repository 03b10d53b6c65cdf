//! The run's write scope: which host places the command may change.
//!
//! Modelled on sandbox-runtime and Claude Code's own sandbox. The command
//! may write the project (through the sealed view, which protects its own
//! paths), the agents' state (their directories of the external table and
//! the writable filtered documents), `/tmp`, `/var/tmp`, `/dev`, its runtime
//! directory, and the caches builds need (`~/.cache` and the package
//! managers' download caches); `--allow-write` and the machine policy's
//! `allowWrite` add places. Everything else is read-only, the rest of the
//! home included: a place is decided by the most specific rule, so a home
//! below `/tmp` is read-only even though `/tmp` is writable.
//!
//! Some places are **protected**: never writable, even inside a writable
//! place, unless the machine policy lifts them (`allowWriteProtected`):
//! shell startup files, git's and ssh's configuration, user systemd units,
//! session environment and autostart entries (the list is
//! [`seal_gate::policy::PROTECTED`]). Through each of them the user's
//! shell, git, ssh or session manager would run what an agent planted,
//! later and outside any run.
//!
//! This module is pure: it decides from paths; [`super::plan`] turns the
//! decisions into placements, and [`super::root`] binds host entries
//! read-only or writable by them.

use std::path::{Path, PathBuf};

use seal_gate::surfaces::{Base, EXTERNAL_GROUPS};

/// Writable outside every home, whatever the user is.
const SYSTEM_WRITABLE: &[&str] = &["/tmp", "/var/tmp", "/dev"];

/// Writable under every home: the caches builds and package managers need
/// (what they download is fetched again if it goes, and no agent loads an
/// extension from them).
pub const HOME_CACHES: &[&str] = &[
    ".cache",
    ".npm",
    ".cargo/registry",
    ".cargo/git",
    "go/pkg/mod",
    ".m2/repository",
    ".gradle/caches",
    ".local/share/pnpm",
    ".yarn/berry/cache",
    ".bun/install/cache",
];

/// Caches in the shared temporary directory of compiled extensions an
/// agent runs in place of their source: jiti's, where Pi keeps its
/// TypeScript extensions compiled and takes an entry whose last line names
/// the hash of the source (public, for a pinned extension). Written from a
/// run, an entry would run in the next session outside it; `seal run`
/// also turns jiti's cache off for the command (`JITI_FS_CACHE`).
pub const SHARED_CODE_CACHES: &[&str] = &["/tmp/jiti"];

/// Agent state directories the external table does not name (it names the
/// agents' configuration directories): where agents keep sessions, logs and
/// databases.
pub const HOME_AGENT_STATE: &[&str] = &[
    // Pi's agent directory is in the external table, but two levels down
    // (`.pi/agent`), which the table's own writable places never are.
    ".pi/agent",
    ".local/share/opencode",
    ".local/state/opencode",
    ".local/share/kilo",
    ".local/state/kilo",
    ".local/state/kilo-sandbox-policy",
    ".local/share/goose",
    ".local/state/goose",
];

/// What the run lets the command do at a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Changes go to the host.
    Writable,
    /// Read-only (a directory the command could write on the host keeps its
    /// new entries in the run's memory, and they are dropped at the end).
    ReadOnly,
    /// Read-only even inside a writable place.
    Protected,
}

/// One place of the scope, with why it is there (for the dry run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: PathBuf,
    pub why: String,
    /// Under a home: made up for the run when it is not on the host yet
    /// (an agent's state directory, a cache), and created on the host at
    /// the end if the command wrote something there.
    pub made_up: bool,
}

/// A protected place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPlace {
    pub path: PathBuf,
    /// A directory when absent and occupied (else a file).
    pub dir: bool,
    pub why: String,
}

/// The write scope of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteScope {
    pub writable: Vec<Place>,
    /// Read-only however they are reached (the homes: more specific than a
    /// writable `/tmp` they may sit in).
    pub read_only: Vec<PathBuf>,
    pub protected: Vec<ProtectedPlace>,
    /// Directories holding an agent's writable state file (the top of the
    /// home holds `~/.claude.json`): new entries may be made there, in the
    /// run's memory only, unless the place is writable.
    pub state_dirs: Vec<PathBuf>,
}

/// Everything the scope is computed from.
pub struct ScopeInputs<'a> {
    /// The homes of the run (canonical).
    pub homes: &'a [PathBuf],
    /// The command's environment, for relocated agent directories and
    /// `XDG_RUNTIME_DIR`.
    pub var: &'a dyn Fn(&str) -> Option<PathBuf>,
    /// `--allow-write` and the machine policy's `allowWrite` (canonical).
    pub allow_write: &'a [(PathBuf, String)],
    /// Built-in protected paths under each home: (relative path, directory).
    pub protected_in_home: &'a [(&'static str, bool)],
}

/// Where agents keep their configuration and state: the directories of the
/// external table under a home, the XDG config directory or a relocating
/// variable.
fn agent_dirs(inputs: &ScopeInputs<'_>) -> Vec<(PathBuf, String, bool)> {
    let mut out = Vec::new();
    // An agent's own directory (`.claude`, `opencode`); not an editor's
    // storage that holds an agent's files among others (`Code/User`).
    for g in EXTERNAL_GROUPS
        .iter()
        .filter(|g| g.state && !g.dir.contains('/'))
    {
        let bases: Vec<PathBuf> = match g.base {
            Base::Home => inputs.homes.to_vec(),
            Base::XdgConfig => match (inputs.var)("XDG_CONFIG_HOME") {
                Some(p) => vec![p],
                None => inputs.homes.iter().map(|h| h.join(".config")).collect(),
            },
            Base::EnvDir(v) => (inputs.var)(v).into_iter().collect(),
            Base::EnvFile(_) | Base::EnvDirList(_) | Base::Root => Vec::new(),
        };
        for base in bases {
            let dir = if g.dir.is_empty() {
                base
            } else {
                base.join(g.dir)
            };
            out.push((dir, format!("agent state ({})", g.agents), true));
        }
    }
    for h in inputs.homes {
        for rel in HOME_AGENT_STATE {
            out.push((h.join(rel), "agent state".to_string(), true));
        }
    }
    out
}

impl WriteScope {
    pub fn new(inputs: &ScopeInputs<'_>) -> WriteScope {
        let mut scope = WriteScope {
            read_only: inputs.homes.to_vec(),
            ..WriteScope::default()
        };
        for h in inputs.homes {
            for (rel, dir) in inputs.protected_in_home {
                scope.protected.push(ProtectedPlace {
                    path: h.join(rel),
                    dir: *dir,
                    why: format!("protected: ~/{rel}"),
                });
            }
        }
        for cache in SHARED_CODE_CACHES {
            scope.protected.push(ProtectedPlace {
                path: PathBuf::from(cache),
                dir: true,
                why: "protected: compiled extensions a later session would run".to_string(),
            });
        }
        let mut wanted: Vec<(PathBuf, String, bool)> = SYSTEM_WRITABLE
            .iter()
            .map(|p| {
                (
                    PathBuf::from(p),
                    "temporary files and devices".to_string(),
                    false,
                )
            })
            .collect();
        if let Some(runtime) = (inputs.var)("XDG_RUNTIME_DIR") {
            wanted.push((runtime, "the user's runtime directory".to_string(), false));
        }
        for h in inputs.homes {
            for rel in HOME_CACHES {
                wanted.push((h.join(rel), "a build or package cache".to_string(), true));
            }
        }
        wanted.extend(agent_dirs(inputs));
        wanted.extend(
            inputs
                .allow_write
                .iter()
                .map(|(p, why)| (p.clone(), why.clone(), false)),
        );
        for (path, why, made_up) in wanted {
            // Where the place really is: a symlinked cache is written where
            // it leads.
            let path = std::fs::canonicalize(&path).unwrap_or_else(|_| super::plan::locate(&path));
            if !scope.writable.iter().any(|w| w.path == path) {
                scope.writable.push(Place { path, why, made_up });
            }
        }
        scope
    }

    /// What the run lets the command do at `path`: protected inside any
    /// protected place; else the most specific of the writable and
    /// read-only places containing it decides (read-only when none does).
    pub fn access(&self, path: &Path) -> Access {
        if self.protected.iter().any(|p| path.starts_with(&p.path)) {
            return Access::Protected;
        }
        let depth = |p: &Path| p.components().count();
        let writable = self
            .writable
            .iter()
            .filter(|w| path.starts_with(&w.path))
            .map(|w| depth(&w.path))
            .max();
        let read_only = self
            .read_only
            .iter()
            .filter(|r| path.starts_with(r))
            .map(|r| depth(r))
            .max();
        match (writable, read_only) {
            // A place named writable (`--allow-write ~`) wins over the same
            // place read-only.
            (Some(w), Some(r)) if w >= r => Access::Writable,
            (Some(_), None) => Access::Writable,
            _ => Access::ReadOnly,
        }
    }

    /// Whether `dir` holds an agent's writable state file.
    pub fn holds_state(&self, dir: &Path) -> bool {
        self.state_dirs.iter().any(|d| d == dir)
    }

    /// Whether changes at `path` go to the host.
    pub fn writable(&self, path: &Path) -> bool {
        self.access(path) == Access::Writable
    }

    /// The writable places that must be bound on their own: those whose
    /// directory is not writable already (a place inside another writable
    /// one needs nothing), deepest first.
    pub fn own_binds(&self) -> Vec<&Place> {
        let mut out: Vec<&Place> = self
            .writable
            .iter()
            .filter(|w| self.access(&w.path) == Access::Writable)
            .filter(|w| {
                w.path
                    .parent()
                    .is_none_or(|parent| self.access(parent) != Access::Writable)
            })
            .collect();
        out.sort_by_key(|w| std::cmp::Reverse(w.path.components().count()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(homes: &[&str], allow: &[&str]) -> WriteScope {
        let homes: Vec<PathBuf> = homes.iter().map(PathBuf::from).collect();
        let allow: Vec<(PathBuf, String)> = allow
            .iter()
            .map(|p| (PathBuf::from(p), "--allow-write".to_string()))
            .collect();
        let protected = seal_gate::policy::MachinePolicy::default().protected_in_home();
        WriteScope::new(&ScopeInputs {
            homes: &homes,
            var: &|_| None,
            allow_write: &allow,
            protected_in_home: &protected,
        })
    }

    #[test]
    fn the_most_specific_place_decides_and_protection_always_wins() {
        use Access::*;
        // A home below /tmp (as in the tests): the home is read-only, its
        // caches and agent directories writable, /tmp around it writable.
        let s = scope(&["/tmp/w/home"], &[]);
        let a = |p: &str| s.access(Path::new(p));
        assert_eq!(a("/tmp/x"), Writable);
        assert_eq!(a("/tmp/w/other"), Writable);
        assert_eq!(a("/tmp/w/home"), ReadOnly);
        assert_eq!(a("/tmp/w/home/notes.txt"), ReadOnly);
        assert_eq!(a("/tmp/w/home/.bashrc"), Protected);
        assert_eq!(a("/tmp/w/home/.ssh/config"), Protected);
        assert_eq!(a("/tmp/w/home/.config/systemd/user/x.service"), Protected);
        assert_eq!(a("/tmp/w/home/.cache/pip"), Writable);
        assert_eq!(a("/tmp/w/home/.claude/projects"), Writable);
        assert_eq!(a("/tmp/w/home/.config/opencode"), Writable);
        assert_eq!(a("/tmp/w/home/.local/share/opencode/log"), Writable);
        assert_eq!(a("/tmp/w/home/.local/share/claude/versions"), ReadOnly);
        assert_eq!(a("/tmp/w/home/.cargo/config.toml"), ReadOnly);
        assert_eq!(a("/tmp/w/home/.cargo/registry/src"), Writable);
        assert_eq!(a("/usr/bin"), ReadOnly);
        assert_eq!(a("/opt/data"), ReadOnly);
        assert_eq!(a("/var/tmp/x"), Writable);
        assert_eq!(a("/var/lib/x"), ReadOnly);
        // --allow-write widens, but never over a protected place.
        let s = scope(&["/home/u"], &["/home/u", "/srv/data"]);
        let a = |p: &str| s.access(Path::new(p));
        assert_eq!(a("/home/u/notes.txt"), Writable);
        assert_eq!(a("/home/u/.gitconfig"), Protected);
        assert_eq!(a("/home/u/.config/git/config"), Protected);
        assert_eq!(a("/srv/data/x"), Writable);
        assert_eq!(a("/srv/other"), ReadOnly);
    }

    #[test]
    fn only_places_in_read_only_directories_are_bound_on_their_own() {
        let s = scope(&["/tmp/w/home"], &["/tmp/w/home/.cache/x"]);
        let binds: Vec<&Path> = s.own_binds().iter().map(|p| p.path.as_path()).collect();
        assert!(binds.contains(&Path::new("/tmp")));
        assert!(binds.contains(&Path::new("/tmp/w/home/.cache")));
        assert!(
            !binds.contains(&Path::new("/tmp/w/home/.cache/x")),
            "inside a writable place already"
        );
        // Deepest first.
        let depths: Vec<usize> = binds.iter().map(|p| p.components().count()).collect();
        assert!(depths.windows(2).all(|d| d[0] >= d[1]), "{binds:?}");
    }
}

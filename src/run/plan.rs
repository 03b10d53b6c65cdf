//! What the run's filesystem holds, decided before anything changes.
//!
//! The run gets a root of its own (built by [`super::root`] from this plan):
//! every directory on the way to something placed on purpose is a *skeleton*
//! (a tmpfs of its own holding binds of the host directory's other entries),
//! and at the placed locations are the sealed view (at the project's own
//! path), the new `/proc`, empty read-only extension locations, filtered
//! copies of configuration files, covers over second mounts of the project,
//! and the user's extra binds. A rename, replacement or new file on the host
//! reaches the run only inside a subtree that a bind shows on purpose.
//!
//! Candidate locations come from the built-in table in [`seal_gate::surfaces`]
//! (home, XDG and admin locations, locations named by relocating variables,
//! Claude Code's per-project memory) and from every parent directory of the
//! project. Each is shown by its location alone, whatever is there (a symlink
//! into the project included). Planning only reads the filesystem.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::filter::{self, Filtered};
use super::mountinfo::{self, Alias, MountEntry};
use super::scope::{Access, ScopeInputs, WriteScope};
use seal_gate::surfaces::{
    AGENT_DIRS, Base, CLAUDE_PROJECT_MEMORY, EXTERNAL_GROUPS, EXTERNAL_ROWS, FilterRule, Show,
    SurfaceClass, caseless_instruction_file, claude_project_dir_name, parent_locations,
};

/// Top-level directories bound read-only whatever the host says: nothing in
/// the run, root included, changes the system.
const READ_ONLY: &[&str] = &[
    "/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/sys", "/usr",
];

/// Is `path` inside a system directory that the run sees read-only?
pub fn read_only_system(path: &Path) -> bool {
    READ_ONLY.iter().any(|p| path.starts_with(p))
}

/// Who the command runs as, for deciding which skeletons it may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunsAs {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

impl RunsAs {
    /// Whether this identity may create entries in a directory with this
    /// owner and mode. Root counts as an ordinary owner: the command never
    /// holds capabilities.
    pub fn may_write(&self, uid: u32, gid: u32, mode: u32) -> bool {
        if self.uid == uid {
            mode & 0o200 != 0
        } else if self.gid == gid || self.groups.contains(&gid) {
            mode & 0o020 != 0
        } else {
            mode & 0o002 != 0
        }
    }
}

/// An extra host path bound into the run (`--bind`, `--ro-bind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserBind {
    pub source: PathBuf,
    pub dest: PathBuf,
    pub writable: bool,
}

/// Everything the plan is computed from.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The target user's home and the caller's `$HOME` (canonical).
    pub homes: Vec<PathBuf>,
    /// The environment the command gets.
    pub env: BTreeMap<String, OsString>,
    /// The project's canonical path.
    pub project: PathBuf,
    pub who: RunsAs,
    pub binds: Vec<UserBind>,
    /// The host's mounts.
    pub mounts: Vec<MountEntry>,
    /// Locations the machine policy masks on top of the built-in tables.
    pub extra_masks: Vec<PathBuf>,
    /// Places added to the write scope (`--allow-write`, the machine
    /// policy's `allowWrite`), canonical, with where each comes from.
    pub allow_write: Vec<(PathBuf, String)>,
    /// The built-in protected paths under each home the machine policy
    /// leaves protected: (relative path, directory).
    pub protected_in_home: Vec<(&'static str, bool)>,
    /// The audit log files of the run (protected).
    pub sinks: Vec<PathBuf>,
}

impl Inputs {
    /// The run's write scope.
    pub fn scope(&self) -> WriteScope {
        WriteScope::new(&ScopeInputs {
            homes: &self.homes,
            var: &|name| self.var(name),
            allow_write: &self.allow_write,
            protected_in_home: &self.protected_in_home,
        })
    }

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

/// A filtered copy of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilteredFile {
    pub rule: &'static FilterRule,
    /// The host file's bytes at the start (`None`: there was none).
    pub original: Option<Vec<u8>>,
    /// What the run shows, the removed entries, and why it is empty if it is.
    pub filtered: Filtered,
    /// The host file's mode and owner (or defaults for a new one).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

/// What the run shows at one location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// An extension directory: an empty read-only directory.
    EmptyDir,
    /// An extension file: an empty read-only file.
    EmptyFile,
    /// A configuration file without its extension entries.
    Filtered(FilteredFile),
    /// The sealed view of the project.
    View,
    /// A second mount of the project, covered by an empty directory.
    Cover,
    /// An extra host path bound on purpose.
    Bind { source: PathBuf, writable: bool },
    /// The `/proc` of the run's PID namespace.
    Proc,
    /// A host place of the write scope, bound writable where the rest is
    /// read-only.
    Writable { source: PathBuf },
    /// A protected host place, bound read-only where the rest is writable.
    ReadOnly { source: PathBuf },
    /// An empty writable directory of the run's own, in memory
    /// ([`Show::Private`]), owned as the directory that holds it.
    Private { uid: u32, gid: u32 },
}

impl Placement {
    /// Whether the placed object is a directory.
    pub fn is_dir(&self) -> bool {
        !matches!(self, Placement::EmptyFile | Placement::Filtered(_))
    }

    /// A short description for the dry run and `seal why`.
    pub fn describe(&self) -> String {
        match self {
            Placement::EmptyDir => "an empty read-only directory".into(),
            Placement::EmptyFile => "an empty read-only file".into(),
            Placement::Filtered(f) => {
                let access = if f.rule.writable {
                    "a writable filtered copy, merged back at the end"
                } else {
                    "a read-only filtered copy"
                };
                match &f.filtered.unparsed {
                    Some(why) => format!("an empty file: it does not parse ({why})"),
                    None if f.original.is_none() => format!("{access} of an empty document"),
                    None => access.into(),
                }
            }
            Placement::View => "the sealed view of the project".into(),
            Placement::Cover => {
                "an empty read-only directory (a second mount of the project)".into()
            }
            Placement::Bind { writable, .. } => {
                if *writable {
                    "a writable bind of a host path".into()
                } else {
                    "a read-only bind of a host path".into()
                }
            }
            Placement::Proc => "the run's own /proc".into(),
            Placement::Writable { .. } => "writable (the run's write scope)".into(),
            Placement::ReadOnly { .. } => "read-only (protected)".into(),
            Placement::Private { .. } => {
                "an empty writable directory of the run's own, in memory (gone with the run)".into()
            }
        }
    }
}

/// The fate of one candidate location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Shown in the run as placed.
    Placed(Placement),
    /// Not on the host, and nothing in the run can create it (its directory
    /// is read-only there): not shown.
    Absent,
    /// A path inside the project that the project table covers: the sealed
    /// view decides about it.
    InsideProject,
    /// Inside another location that is shown empty.
    Covered { by: PathBuf },
    /// Cannot be shown as the table says; the run must not start (SPEC: Blocked).
    Impossible { reason: String },
}

/// One candidate location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub location: PathBuf,
    /// Which table row or rule named it.
    pub why: String,
    pub state: State,
    /// Whether something was on the host at the start (a symlink counts).
    pub existed: bool,
    /// The filter rule, for a configuration file.
    pub rule: Option<&'static FilterRule>,
}

/// A skeleton directory of the run's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir {
    pub path: PathBuf,
    /// The host has a directory here (else the run shows one it made).
    pub on_host: bool,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// The command may create entries in it (a tmpfs mounted read-write).
    pub writable: bool,
    /// Its host entries are bound writable (it is inside the write scope);
    /// else read-only.
    pub entries_writable: bool,
    /// The run reads it back at the end (a writable directory the user
    /// owns): its writable filtered copies are merged into the host's, and,
    /// when its entries are writable, new entries are copied to the host
    /// (outside the write scope they are dropped).
    pub merge: bool,
    pub children: BTreeMap<OsString, Node>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir(Dir),
    Place(Placement),
}

/// The whole plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub planned: Vec<Planned>,
    pub root: Dir,
    pub scope: WriteScope,
    /// The agent directories that get a private scratch layer
    /// ([`super::root`]'s `scratch`), absolute: those the view shows in the
    /// project, and [`Plan::masked_scratch`].
    pub scratch: Vec<PathBuf>,
}

impl Plan {
    /// The first candidate that cannot be placed, if any.
    pub fn impossible(&self) -> Option<(&Path, &str)> {
        self.planned.iter().find_map(|p| match &p.state {
            State::Impossible { reason } => Some((p.location.as_path(), reason.as_str())),
            _ => None,
        })
    }

    /// The agent directories with housekeeping outside the project (in its
    /// parents) that exist on the host and are masked empty: their agent
    /// writes there too as it starts (OpenCode uses every `.opencode` from
    /// the project up to its repository's root).
    pub fn masked_scratch(&self) -> impl Iterator<Item = &Path> {
        self.planned
            .iter()
            .filter(|p| p.existed && matches!(p.state, State::Placed(Placement::EmptyDir)))
            .map(|p| p.location.as_path())
            .filter(|l| {
                l.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(seal_gate::surfaces::scratch_dir)
                    .is_some()
            })
    }

    /// The skeleton directories whose new entries are merged back, in a
    /// fixed (pre-order) order.
    pub fn merge_dirs(&self) -> Vec<&Dir> {
        fn walk<'a>(d: &'a Dir, out: &mut Vec<&'a Dir>) {
            if d.merge {
                out.push(d);
            }
            for n in d.children.values() {
                if let Node::Dir(c) = n {
                    walk(c, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }
}

/// `.` and `..` resolved without touching the disk.
pub fn lexical(path: &Path) -> PathBuf {
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

/// `path` with the symlinks of its existing ancestors resolved; its last
/// component, and whatever part does not exist, kept as written. This is where
/// an agent that opens `path` lands, up to the location itself.
pub fn locate(path: &Path) -> PathBuf {
    let path = lexical(path);
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return path;
    };
    let mut missing: Vec<&OsStr> = vec![name];
    let mut dir = parent;
    loop {
        if let Ok(c) = std::fs::canonicalize(dir) {
            let mut out = c;
            for m in missing.iter().rev() {
                out.push(m);
            }
            return out;
        }
        match (dir.parent(), dir.file_name()) {
            (Some(p), Some(n)) => {
                missing.push(n);
                dir = p;
            }
            _ => return path,
        }
    }
}

/// Every candidate location with the show rule and the reason that names it
/// (the first rule naming a location wins).
pub fn candidates(inputs: &Inputs) -> Vec<(PathBuf, Show, String)> {
    let mut out: Vec<(PathBuf, Show, String)> = Vec::new();
    let mut push = |p: PathBuf, show: Show, why: String| {
        let p = locate(&p);
        if !out.iter().any(|(q, _, _)| *q == p) {
            out.push((p, show, why));
        }
    };
    for g in EXTERNAL_GROUPS {
        for base in inputs.bases(g.base) {
            let dir = if g.dir.is_empty() {
                base
            } else {
                base.join(g.dir.trim_start_matches('/'))
            };
            for loc in g.names {
                push(
                    dir.join(loc.name),
                    loc.show,
                    format!("{} ({})", describe_base(g.base), g.agents),
                );
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
            push(
                p,
                r.show,
                format!("{} ({})", describe_base(r.base), r.agents),
            );
        }
    }
    for p in &inputs.extra_masks {
        push(
            p.clone(),
            Show::Empty,
            "machine policy (an extra mask)".to_string(),
        );
    }
    // Claude Code's auto memory of the project (and of its git root).
    let mut memory_of = vec![inputs.project.clone()];
    if let Some(git_root) = inputs
        .project
        .ancestors()
        .find(|a| a.join(".git").exists())
        .filter(|a| **a != inputs.project)
    {
        memory_of.push(git_root.to_path_buf());
    }
    let mut claude_dirs: Vec<PathBuf> = inputs.homes.iter().map(|h| h.join(".claude")).collect();
    claude_dirs.extend(inputs.var("CLAUDE_CONFIG_DIR"));
    for dir in &claude_dirs {
        for p in &memory_of {
            if let Some(name) = claude_project_dir_name(p) {
                push(
                    dir.join("projects").join(name).join(CLAUDE_PROJECT_MEMORY),
                    Show::EmptyDir,
                    "Claude Code auto memory of the project".to_string(),
                );
            }
        }
    }
    let locations = parent_locations();
    let mut dir = inputs.project.parent();
    while let Some(parent) = dir {
        let is_home = inputs.homes.iter().any(|h| h == parent);
        for (name, show) in &locations {
            // In a home directory the agent directories hold credentials and
            // state as well as extensions: the home rows above show their
            // extension parts empty instead of the whole directory.
            let first = name.split('/').next().unwrap_or_default();
            if is_home && AGENT_DIRS.contains(&first) {
                continue;
            }
            push(
                parent.join(name),
                *show,
                "parent directory of the project (agents walk up into it)".to_string(),
            );
        }
        // A name no list can hold: every other letter case of the
        // instruction files an agent finds without regard to case.
        for name in odd_case_instruction_files(parent, &locations) {
            push(
                parent.join(name),
                Show::EmptyFile,
                "parent directory of the project (an instruction file in another letter case)"
                    .to_string(),
            );
        }
        dir = parent.parent();
    }
    out
}

/// The names in `dir` that spell an instruction file found without regard to
/// case ([`caseless_instruction_file`]) other than as the lists spell it
/// (those are masked by name already). An unreadable directory has none the
/// run could read either.
fn odd_case_instruction_files(dir: &Path, listed: &[(String, Show)]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            caseless_instruction_file(name).is_some() && !listed.iter().any(|(n, _)| n == name)
        })
        .collect()
}

fn describe_base(base: Base) -> String {
    match base {
        Base::Home => "home directory".to_string(),
        Base::XdgConfig => "XDG config directory".to_string(),
        Base::EnvDir(v) | Base::EnvFile(v) | Base::EnvDirList(v) => format!("${v}"),
        Base::Root => "system-wide".to_string(),
    }
}

/// The nearest ancestor of `path` (itself included) that is a directory on
/// the host, with its metadata.
fn nearest_dir(path: &Path) -> (PathBuf, std::fs::Metadata) {
    for a in path.ancestors() {
        if let Ok(m) = std::fs::symlink_metadata(a) {
            if m.is_dir() {
                return (a.to_path_buf(), m);
            }
        }
    }
    let root = std::fs::metadata("/").expect("/ exists");
    (PathBuf::from("/"), root)
}

/// Whether the command could create entries in the run's copy of the
/// directory at `path`: the user may write it on the host (or, when it is
/// not on the host, its nearest existing ancestor), and it is in the write
/// scope, or holds an agent's state file (the top of the home: the agent
/// writes that file through a temporary file and a rename; new entries
/// there stay in the run's memory), or it is made up inside such a
/// directory. The root, system directories and protected places are
/// read-only in the run whatever the host says.
fn writable_for(inputs: &Inputs, scope: &WriteScope, path: &Path) -> bool {
    let (near, m) = nearest_dir(path);
    if near == Path::new("/") || read_only_system(&near) || scope.access(path) == Access::Protected
    {
        return false;
    }
    inputs.who.may_write(m.uid(), m.gid(), m.mode())
        && (scope.writable(path) || scope.writable(&near) || scope.holds_state(&near))
}

/// Reads a configuration file for filtering, following symlinks (the agent
/// does) but never blocking on a FIFO.
fn read_config(path: &Path) -> Result<(Vec<u8>, std::fs::Metadata), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let m = f
        .metadata()
        .map_err(|e| format!("cannot inspect it: {e}"))?;
    if !m.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    f.take(filter::MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok((bytes, m))
}

fn filtered_file(inputs: &Inputs, rule: &'static FilterRule, location: &Path) -> FilteredFile {
    match read_config(location) {
        Ok((bytes, m)) => FilteredFile {
            rule,
            filtered: filter::filter(rule, &bytes),
            original: Some(bytes),
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        },
        Err(reason) => {
            let exists = std::fs::symlink_metadata(location).is_ok();
            let (_, dir) = nearest_dir(location.parent().unwrap_or(Path::new("/")));
            let (uid, gid) = if dir.uid() == inputs.who.uid {
                (dir.uid(), dir.gid())
            } else {
                (inputs.who.uid, inputs.who.gid)
            };
            FilteredFile {
                rule,
                original: None,
                filtered: Filtered {
                    bytes: filter::empty_document(rule.format).to_vec(),
                    removed: Vec::new(),
                    unparsed: exists.then_some(reason),
                },
                mode: 0o600,
                uid,
                gid,
            }
        }
    }
}

/// The state of one candidate: placed (how), absent, left to the view, or
/// impossible.
fn place_location(
    inputs: &Inputs,
    scope: &WriteScope,
    location: &Path,
    show: Show,
) -> (State, bool) {
    let project = &inputs.project;
    let existed = match std::fs::symlink_metadata(location) {
        Ok(_) => true,
        // A location this process cannot even reach (a directory on the way
        // it may not search) is out of the command's reach too: the command
        // never has more access than `seal run` itself.
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::EACCES)) =>
        {
            false
        }
        Err(e) => {
            return (
                State::Impossible {
                    reason: format!("cannot inspect it: {e}"),
                },
                true,
            );
        }
    };
    if project.starts_with(location) {
        return (
            State::Impossible {
                reason: format!(
                    "it contains the project ({}); showing it empty would hide the project itself",
                    seal_core::escape::escaped_os(project.as_os_str())
                ),
            },
            existed,
        );
    }
    if let Ok(rel) = location.strip_prefix(project) {
        let segments: Vec<String> = rel
            .iter()
            .map(|s| seal_core::paths::nfc(&s.to_string_lossy()))
            .collect();
        let refs: Vec<&str> = segments.iter().map(String::as_str).collect();
        return match seal_gate::surfaces::classify(&refs) {
            SurfaceClass::Artifact { .. } | SurfaceClass::Container => {
                (State::InsideProject, existed)
            }
            SurfaceClass::Outside => (
                State::Impossible {
                    reason: "it is inside the project, where no project surface row covers it: \
                             the sealed view cannot hide it (seal it, or move it out)"
                        .to_string(),
                },
                existed,
            ),
        };
    }
    let parent = location.parent().unwrap_or(Path::new("/"));
    let creatable = writable_for(inputs, scope, parent);
    let placement = match show {
        Show::EmptyDir => Placement::EmptyDir,
        Show::EmptyFile => Placement::EmptyFile,
        Show::Private => {
            let (_, m) = nearest_dir(location);
            Placement::Private {
                uid: m.uid(),
                gid: m.gid(),
            }
        }
        Show::Empty => match std::fs::metadata(location) {
            Ok(m) if m.is_dir() => Placement::EmptyDir,
            _ => Placement::EmptyFile,
        },
        Show::Filtered(rule) => {
            if !existed && (rule.writable || !creatable) {
                // The agent creates its own state file: nothing to show. A
                // read-only one in a directory the command can write is
                // occupied by an empty document, so it cannot be written.
                return (State::Absent, false);
            }
            if std::fs::metadata(location).is_ok_and(|m| m.is_dir()) {
                // No agent reads a directory where it reads this file (a
                // Python virtual environment named `.env` above the
                // project): shown as it is, read-only, so that nothing
                // takes its place.
                Placement::ReadOnly {
                    source: location.to_path_buf(),
                }
            } else {
                Placement::Filtered(filtered_file(inputs, rule, location))
            }
        }
    };
    if !existed && !creatable {
        return (State::Absent, false);
    }
    (State::Placed(placement), existed)
}

/// Plans the run's filesystem.
pub fn plan(inputs: &Inputs) -> Result<Plan, String> {
    let mut scope = inputs.scope();
    for sink in &inputs.sinks {
        scope.protected.push(super::scope::ProtectedPlace {
            path: sink.clone(),
            dir: false,
            why: "protected: an audit log of the run".to_string(),
        });
    }
    for dir in git_dirs_outside(&inputs.project) {
        scope.protected.push(super::scope::ProtectedPlace {
            path: dir,
            dir: true,
            why: "protected: a git directory of the project outside the view; git reads it, \
                  but commits need the repository's root sealed as the project"
                .to_string(),
        });
    }
    let candidates = candidates(inputs);
    // Where agents keep state files of their own (`~/.claude.json`).
    scope.state_dirs = candidates
        .iter()
        .filter(|(_, show, _)| matches!(show, Show::Filtered(rule) if rule.writable))
        .filter_map(|(location, _, _)| location.parent().map(Path::to_path_buf))
        .collect();
    let mut planned: Vec<Planned> = candidates
        .into_iter()
        .map(|(location, show, why)| {
            let (state, existed) = place_location(inputs, &scope, &location, show);
            Planned {
                location,
                why,
                state,
                existed,
                rule: match show {
                    Show::Filtered(r) => Some(r),
                    _ => None,
                },
            }
        })
        .collect();
    // The view, /proc, and second mounts of placed things.
    planned.push(Planned {
        location: inputs.project.clone(),
        why: "the project".into(),
        state: State::Placed(Placement::View),
        existed: true,
        rule: None,
    });
    planned.push(Planned {
        location: PathBuf::from("/proc"),
        why: "the run's PID namespace".into(),
        state: State::Placed(Placement::Proc),
        existed: true,
        rule: None,
    });
    let mut aliases = Vec::new();
    for p in &planned {
        let State::Placed(placement) = &p.state else {
            continue;
        };
        // Every placement, present on the host or not: through a second
        // mount of its directory the command could otherwise create it there.
        if matches!(placement, Placement::Proc) {
            continue;
        }
        for alias in mountinfo::aliases(&inputs.mounts, &p.location) {
            let (at, placement) = match (alias, placement) {
                (Alias::Within(at), Placement::View) => (at, Placement::Cover),
                (Alias::Part(at), Placement::View) => (at, Placement::Cover),
                (Alias::Within(at), other) => (at, other.clone()),
                (Alias::Part(at), _) => (at, Placement::EmptyDir),
            };
            if at.starts_with(&inputs.project) || at.starts_with("/proc") {
                continue;
            }
            aliases.push(Planned {
                location: at,
                why: format!(
                    "a second mount of {} (made before the run)",
                    seal_core::escape::escaped_os(p.location.as_os_str())
                ),
                state: State::Placed(placement),
                existed: p.existed,
                rule: p.rule,
            });
        }
    }
    for a in aliases {
        if !planned.iter().any(|p| p.location == a.location) {
            planned.push(a);
        }
    }
    // A placement inside an empty one needs nothing of its own.
    let empties: Vec<PathBuf> = planned
        .iter()
        .filter(|p| {
            matches!(
                p.state,
                State::Placed(
                    Placement::EmptyDir
                        | Placement::EmptyFile
                        | Placement::Filtered(_)
                        | Placement::Cover
                )
            )
        })
        .map(|p| p.location.clone())
        .collect();
    for p in &mut planned {
        if let State::Placed(_) | State::Absent = p.state {
            if let Some(outer) = empties
                .iter()
                .find(|d| p.location != **d && p.location.starts_with(d))
            {
                p.state = State::Covered { by: outer.clone() };
            }
        }
    }
    protect(inputs, &scope, &mut planned);
    for b in &inputs.binds {
        check_bind(inputs, &planned, b)?;
        planned.push(Planned {
            location: b.dest.clone(),
            why: "--bind / --ro-bind".into(),
            state: State::Placed(Placement::Bind {
                source: b.source.clone(),
                writable: b.writable,
            }),
            existed: true,
            rule: None,
        });
    }
    for w in scope.own_binds() {
        let inside_placed = planned.iter().any(|p| {
            w.path.starts_with(&p.location)
                && matches!(
                    p.state,
                    State::Placed(
                        Placement::View
                            | Placement::Proc
                            | Placement::EmptyDir
                            | Placement::EmptyFile
                            | Placement::Filtered(_)
                            | Placement::Cover
                            | Placement::Bind { .. }
                    )
                )
        });
        // One with placements inside is a skeleton (its entries writable):
        // nothing to bind.
        let holds_placed = planned
            .iter()
            .any(|p| p.location != w.path && p.location.starts_with(&w.path));
        let on_host = std::fs::symlink_metadata(&w.path).is_ok_and(|m| !m.is_symlink());
        if inside_placed || holds_placed || !on_host || read_only_system(&w.path) {
            continue;
        }
        planned.push(Planned {
            location: w.path.clone(),
            why: format!("write scope: {}", w.why),
            state: State::Placed(Placement::Writable {
                source: w.path.clone(),
            }),
            existed: true,
            rule: None,
        });
    }
    let mut root = tree(inputs, &scope, &planned);
    // An agent's state directory or a cache that is not on the host yet is
    // made up, writable, so that the agent can start; what it writes there
    // is copied to the host at the end.
    for w in scope.writable.iter().filter(|w| w.made_up) {
        let absent = std::fs::symlink_metadata(&w.path).is_err();
        let in_home = inputs.homes.iter().any(|h| w.path.starts_with(h));
        let inside_placed = planned.iter().any(|p| {
            w.path.starts_with(&p.location)
                && matches!(p.state, State::Placed(_))
                && !matches!(
                    p.state,
                    State::Placed(Placement::Writable { .. } | Placement::ReadOnly { .. })
                )
        });
        if absent && in_home && !inside_placed {
            made_up(inputs, &scope, &mut root, &w.path);
        }
    }
    Ok(Plan {
        planned,
        root,
        scope,
        scratch: Vec::new(),
    })
}

/// Places the protected places: an existing one bound read-only (a symlink
/// shown as what it leads to, which is protected too), an absent one
/// occupied by an empty read-only file or directory where the command could
/// create it.
fn protect(inputs: &Inputs, scope: &WriteScope, planned: &mut Vec<Planned>) {
    let mut todo: Vec<(PathBuf, bool, String)> = scope
        .protected
        .iter()
        .map(|p| (locate(&p.path), p.dir, p.why.clone()))
        .collect();
    let mut seen = 0;
    while seen < todo.len() {
        let (location, dir, why) = todo[seen].clone();
        seen += 1;
        if location.starts_with(&inputs.project) || planned.iter().any(|p| p.location == location) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&location);
        let state = match &meta {
            Ok(m) if m.is_symlink() => {
                // What it leads to is what the shell or git reads: that is
                // protected too, wherever it is.
                let target = std::fs::read_link(&location)
                    .map(|t| locate(&location.parent().unwrap_or(Path::new("/")).join(t)));
                match (std::fs::canonicalize(&location), target) {
                    (Ok(real), _) => {
                        todo.push((real.clone(), dir, format!("{why} (its target)")));
                        State::Placed(Placement::ReadOnly { source: real })
                    }
                    (Err(_), Ok(lexical)) => {
                        todo.push((lexical, dir, format!("{why} (its target)")));
                        occupied(inputs, scope, &location, dir)
                    }
                    (Err(_), Err(_)) => occupied(inputs, scope, &location, dir),
                }
            }
            Ok(_) => State::Placed(Placement::ReadOnly {
                source: location.clone(),
            }),
            Err(_) => occupied(inputs, scope, &location, dir),
        };
        planned.push(Planned {
            location,
            why,
            state,
            existed: meta.is_ok(),
            rule: None,
        });
    }
}

/// The git directories the project's git uses that are outside the project
/// (the view protects its own): the repository around a project in a
/// subdirectory, and where a gitfile (a linked worktree, a submodule) and
/// its `commondir` lead. Written from the run, their hooks and
/// configuration would run on the host; they are read-only in the run.
/// Read-only whole, not writable but for those side doors: an absent
/// `commondir` or `config.worktree` can only be kept from being made by a
/// placeholder, which turns the directory into a skeleton of binds where
/// git's lock-and-rename of its index fails; and an agent that could write
/// there could make one. So in a package of a repository git reads
/// (status, log, diff) and does not commit; a project that seals the
/// repository's root has its `.git` in the view, which guards each side
/// door by name and lets git commit.
fn git_dirs_outside(project: &Path) -> Vec<PathBuf> {
    fn follow(dot_git: &Path, out: &mut Vec<PathBuf>) {
        out.push(dot_git.to_path_buf());
        let Ok(text) = std::fs::read_to_string(dot_git) else {
            return;
        };
        let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir: ")) else {
            return;
        };
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        let gitdir = std::fs::canonicalize(base.join(target.trim())).ok();
        if let Some(gitdir) = gitdir {
            if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
                if let Ok(c) = std::fs::canonicalize(gitdir.join(common.trim())) {
                    out.push(c);
                }
            }
            out.push(gitdir);
        }
    }
    let mut out = Vec::new();
    let own = project.join(".git");
    if std::fs::symlink_metadata(&own).is_ok_and(|m| m.is_file()) {
        follow(&own, &mut out);
    }
    if let Some(around) = project
        .ancestors()
        .skip(1)
        .map(|a| a.join(".git"))
        .find(|g| std::fs::symlink_metadata(g).is_ok())
    {
        follow(&around, &mut out);
    }
    out.retain(|p| !p.starts_with(project));
    out
}

/// An absent protected place: occupied where the command could create it.
fn occupied(inputs: &Inputs, scope: &WriteScope, location: &Path, dir: bool) -> State {
    let parent = location.parent().unwrap_or(Path::new("/"));
    match (writable_for(inputs, scope, parent), dir) {
        (false, _) => State::Absent,
        (true, true) => State::Placed(Placement::EmptyDir),
        (true, false) => State::Placed(Placement::EmptyFile),
    }
}

/// Refuses an extra bind that would expose the real project or an extension
/// location, or hide something placed on purpose.
fn check_bind(inputs: &Inputs, planned: &[Planned], b: &UserBind) -> Result<(), String> {
    let shown = |p: &Path| seal_core::escape::escaped_os(p.as_os_str());
    let related = |a: &Path, b: &Path| a.starts_with(b) || b.starts_with(a);
    let project = &inputs.project;
    if related(&b.source, project) {
        return Err(format!(
            "cannot bind {}: it {} the project; the project is shown only through the sealed view",
            shown(&b.source),
            if b.source.starts_with(project) {
                "is inside"
            } else {
                "contains"
            }
        ));
    }
    if let (Some((dev, rel)), Some((pdev, prel))) = (
        mountinfo::fs_location(&inputs.mounts, &b.source),
        mountinfo::fs_location(&inputs.mounts, project),
    ) {
        if dev == pdev && related(&rel, &prel) {
            return Err(format!(
                "cannot bind {}: it shows the project's files (another mount of them)",
                shown(&b.source)
            ));
        }
    }
    for p in planned {
        if matches!(p.state, State::Placed(Placement::Proc)) {
            continue;
        }
        let ext = !matches!(p.state, State::Placed(Placement::View));
        if ext && related(&b.source, &p.location) && p.location != Path::new("/proc") {
            return Err(format!(
                "cannot bind {}: it {} the agent extension location {}",
                shown(&b.source),
                if b.source.starts_with(&p.location) {
                    "is inside"
                } else {
                    "contains"
                },
                shown(&p.location)
            ));
        }
        if related(&b.dest, &p.location) {
            return Err(format!(
                "cannot bind to {}: {} is placed there on purpose",
                shown(&b.dest),
                shown(&p.location)
            ));
        }
    }
    if b.dest == Path::new("/") {
        return Err("cannot bind to /".into());
    }
    Ok(())
}

/// A skeleton directory for `path`, described from the host.
fn skeleton(inputs: &Inputs, scope: &WriteScope, path: &Path) -> Dir {
    let (near, m) = nearest_dir(path);
    let on_host = near == path;
    let writable = writable_for(inputs, scope, path);
    let mode = if on_host {
        m.mode() & 0o7777
    } else {
        m.mode() & 0o777
    };
    Dir {
        path: path.to_path_buf(),
        on_host,
        mode,
        uid: m.uid(),
        gid: m.gid(),
        writable,
        entries_writable: scope.writable(path) && !read_only_system(path),
        merge: writable && m.uid() == inputs.who.uid,
        children: BTreeMap::new(),
    }
}

/// Adds `placement` at `names` below `dir` (whose path is `at`), making a
/// skeleton of every directory on the way. Inside something placed whole
/// there is nothing more to place.
fn insert(
    inputs: &Inputs,
    scope: &WriteScope,
    dir: &mut Dir,
    at: &Path,
    names: &[&OsStr],
    placement: &Placement,
) {
    match names {
        [] => {}
        [last] => {
            dir.children
                .entry(last.to_os_string())
                .or_insert_with(|| Node::Place(placement.clone()));
        }
        [first, rest @ ..] => {
            let path = at.join(first);
            let next = dir
                .children
                .entry(first.to_os_string())
                .or_insert_with(|| Node::Dir(skeleton(inputs, scope, &path)));
            if let Node::Dir(d) = next {
                insert(inputs, scope, d, &path, rest, placement);
            }
        }
    }
}

/// Makes skeletons down to `path` (a directory not on the host).
fn made_up(inputs: &Inputs, scope: &WriteScope, root: &mut Dir, path: &Path) {
    let mut dir = root;
    let mut at = PathBuf::from("/");
    for name in path.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n),
        _ => None,
    }) {
        at.push(name);
        let next = dir
            .children
            .entry(name.to_os_string())
            .or_insert_with(|| Node::Dir(skeleton(inputs, scope, &at)));
        match next {
            Node::Dir(d) => dir = d,
            Node::Place(_) => return,
        }
    }
}

/// The skeleton tree holding every placement. The places of the write
/// scope come last (and the deepest first): each only where nothing else is
/// placed, so a mask or the view inside one keeps it a skeleton.
fn tree(inputs: &Inputs, scope: &WriteScope, planned: &[Planned]) -> Dir {
    let mut root = skeleton(inputs, scope, Path::new("/"));
    let scoped = |p: &&Planned| {
        matches!(
            p.state,
            State::Placed(Placement::Writable { .. } | Placement::ReadOnly { .. })
        )
    };
    let order = planned
        .iter()
        .filter(|p| !scoped(p))
        .chain(planned.iter().filter(scoped));
    for p in order {
        let State::Placed(placement) = &p.state else {
            continue;
        };
        let names: Vec<&OsStr> = p
            .location
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        insert(inputs, scope, &mut root, Path::new("/"), &names, placement);
    }
    root
}

#[cfg(test)]
mod tests;

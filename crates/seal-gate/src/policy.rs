//! The machine policy: rules a security team sets for every project on a
//! machine, which a project's `seal.json` cannot weaken (docs/POLICY.md).
//!
//! One root-owned JSON file, at a path fixed when the binary is built
//! ([`DEFAULT_PATH`], `/etc/seal/policy.json` unless `SEAL_POLICY_PATH` was set
//! at build time). Test builds (the `test-hooks` feature, which only `cargo
//! test` turns on) read [`TEST_PATH_VAR`] instead, and no policy when it is
//! unset, so the tests never read the host's file; a binary `cargo build` or
//! `cargo install` makes has no such door, debug or release.
//! An absent file means no machine policy. A file that anyone but root could
//! change (owner not root, group or other write bits, a directory on its way
//! that others may write), a symlink, or a file that does not parse strictly
//! (the project's strict JSON reader, then a closed schema) is refused: every
//! command that reads it stops with exit 2, naming the file and the rule.
//!
//! This module owns the file, its schema and the small rule types the other
//! layers ask (the protected-path globs, the extra surface rows, the extra
//! home masks, the built-in write rules it may lift: git's side doors and
//! the agents' `.env`); it decides nothing about paths itself. The gate takes it
//! through [`crate::Gate::with_machine`]; the CLI reads it for `seal
//! policy`, `verify`, `why`, `mount` and `run`.

use std::fmt;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use nix::fcntl::OFlag;
use nix::sys::stat::{Mode, SFlag, fstat};

use crate::decision::Guard;
use crate::surfaces::{ExtraRows, SurfaceRow, Unit};
use seal_core::escape::{escaped_os, quoted};
use seal_core::json::{self, Kind, Member, Value};
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::pattern::Pattern;
use seal_core::store::{StoreError, read_lockfile};

/// Where the machine policy lives, fixed at build time.
pub const DEFAULT_PATH: &str = match option_env!("SEAL_POLICY_PATH") {
    Some(p) => p,
    None => "/etc/seal/policy.json",
};

/// Whether this build has the tests' hooks ([`TEST_PATH_VAR`],
/// [`TEST_SYSLOG_VAR`]); `seal --version` says so.
pub const TEST_HOOKS: bool = cfg!(any(test, feature = "test-hooks"));

/// Test builds only: the environment variable naming the policy file (no
/// machine policy when unset).
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) const TEST_PATH_VAR: &str = "SEAL_TEST_POLICY_PATH";

/// Test builds only: where the machine policy is when [`TEST_PATH_VAR`] is
/// unset: nowhere (a path that does not exist), never the host's.
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) const TEST_NO_POLICY: &str = "/nonexistent/sealfs-test-build/policy.json";

/// Test builds only: the environment variable that replaces `/dev/log` as
/// the syslog socket.
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) const TEST_SYSLOG_VAR: &str = "SEAL_TEST_SYSLOG_SOCKET";

/// The syslog socket the journal and syslog daemons listen on.
pub const SYSLOG_SOCKET: &str = "/dev/log";

/// The largest policy file read (a policy is a few hundred bytes).
const MAX_SIZE: u64 = 1 << 20;

/// The only schema version this build reads.
pub(crate) const VERSION: u64 = 1;

/// The machine policy file this binary reads: [`DEFAULT_PATH`], or in a test
/// build the file [`TEST_PATH_VAR`] names (none when unset).
pub fn policy_path() -> PathBuf {
    #[cfg(any(test, feature = "test-hooks"))]
    return std::env::var_os(TEST_PATH_VAR)
        .map_or_else(|| PathBuf::from(TEST_NO_POLICY), PathBuf::from);
    #[cfg(not(any(test, feature = "test-hooks")))]
    PathBuf::from(DEFAULT_PATH)
}

/// The syslog socket audit events go to: `/dev/log`, or in a test build the
/// socket [`TEST_SYSLOG_VAR`] names.
pub fn syslog_socket() -> PathBuf {
    #[cfg(any(test, feature = "test-hooks"))]
    if let Some(p) = std::env::var_os(TEST_SYSLOG_VAR) {
        return PathBuf::from(p);
    }
    PathBuf::from(SYSLOG_SOCKET)
}

/// Where a setting in force comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// sealfs itself: a default, or a rule no policy changes.
    BuiltIn,
    /// The machine policy file.
    Machine,
    /// The project's `seal.json`.
    Project,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::BuiltIn => "built-in",
            Source::Machine => "machine",
            Source::Project => "project",
        }
    }
}

/// The rule a refused policy file breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The path is a symlink.
    NoSymlink,
    /// Not a regular file.
    RegularFile,
    /// Not owned by root.
    OwnedByRoot,
    /// Group or others may write it.
    WritableByRootOnly,
    /// A directory on its way may be changed by someone other than root.
    SafeDirectories,
    /// It cannot be read.
    Readable,
    /// Larger than [`MAX_SIZE`].
    Size,
    /// Not one strict JSON value.
    StrictJson,
    /// A key the schema does not know, a wrong type or a bad value.
    Schema,
}

impl Rule {
    /// The rule's name in messages (docs/POLICY.md lists them).
    pub fn name(self) -> &'static str {
        match self {
            Rule::NoSymlink => "no-symlink",
            Rule::RegularFile => "regular-file",
            Rule::OwnedByRoot => "owned-by-root",
            Rule::WritableByRootOnly => "writable-by-root-only",
            Rule::SafeDirectories => "safe-directories",
            Rule::Readable => "readable",
            Rule::Size => "size",
            Rule::StrictJson => "strict-json",
            Rule::Schema => "schema",
        }
    }
}

/// Why a machine policy file is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    pub path: PathBuf,
    pub rule: Rule,
    pub detail: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "machine policy {} refused (rule {}): {}",
            escaped_os(self.path.as_os_str()),
            self.rule.name(),
            self.detail
        )
    }
}

impl std::error::Error for PolicyError {}

/// How syslog lines are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyslogFormat {
    /// `<PRI>seal[PID]: MESSAGE`, as syslog(3) sends it: what the journal
    /// and every syslog daemon parse.
    Rfc3164,
    /// `<PRI>1 TIME HOST seal PID EVENT - MESSAGE`.
    Rfc5424,
}

impl SyslogFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SyslogFormat::Rfc3164 => "rfc3164",
            SyslogFormat::Rfc5424 => "rfc5424",
        }
    }
}

/// The syslog facilities a policy may name, with their codes (RFC 5424).
pub(crate) const FACILITIES: &[(&str, u8)] = &[
    ("user", 1),
    ("daemon", 3),
    ("auth", 4),
    ("authpriv", 10),
    ("local0", 16),
    ("local1", 17),
    ("local2", 18),
    ("local3", 19),
    ("local4", 20),
    ("local5", 21),
    ("local6", 22),
    ("local7", 23),
];

/// Audit events sent to syslog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syslog {
    pub format: SyslogFormat,
    /// One of [`FACILITIES`].
    pub facility: &'static str,
}

impl Syslog {
    pub(crate) fn facility_code(&self) -> u8 {
        FACILITIES
            .iter()
            .find(|(n, _)| *n == self.facility)
            .map_or(10, |(_, c)| *c)
    }
}

impl Default for Syslog {
    fn default() -> Syslog {
        Syslog {
            format: SyslogFormat::Rfc3164,
            facility: "authpriv",
        }
    }
}

/// Where gate decisions must be recorded, whatever the command line says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MandatoryAudit {
    /// A JSON-lines file (absolute path).
    pub file: Option<PathBuf>,
    pub syslog: Option<Syslog>,
}

impl MandatoryAudit {
    pub fn is_empty(&self) -> bool {
        self.file.is_none() && self.syslog.is_none()
    }
}

/// A location `seal run` must mask besides its built-in table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtraMask {
    /// `~/REL`: under every home directory the run masks.
    Home(PathBuf),
    /// An absolute path.
    Absolute(PathBuf),
}

impl ExtraMask {
    /// The text as the policy wrote it.
    pub fn as_text(&self) -> String {
        match self {
            ExtraMask::Home(rel) => format!("~/{}", rel.display()),
            ExtraMask::Absolute(p) => p.display().to_string(),
        }
    }
}

/// One segment of a protected-path glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GlobSegment {
    /// `**`: any number of segments, none included.
    AnyDepth,
    /// A segment with `*` wildcards (each matches any run of characters
    /// within the name) or none (a literal).
    Name(String),
}

/// A protected-path glob of the writable view: segments separated by `/`,
/// `*` within a segment, `**` as a whole segment for any depth (zero or
/// more segments). Matched against the project-relative path's NFC names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    segments: Vec<GlobSegment>,
}

/// What a protected-path glob says about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// No glob matches it or leads through it.
    None,
    /// On the way to protected paths (`.git` for `.git/hooks/**`): it may
    /// be created as a directory, changed or emptied, never replaced by
    /// something else and never moved.
    OnTheWay,
    /// A glob matches it: immutable from inside the view.
    Protected,
}

impl Glob {
    pub(crate) fn parse(text: &str) -> Result<Glob, String> {
        if text.is_empty() {
            return Err("an empty pattern".into());
        }
        if text.starts_with('/') {
            return Err("starts with '/': patterns are relative to the project root".into());
        }
        let mut segments = Vec::new();
        for seg in text.split('/') {
            match seg {
                "" => return Err("has an empty segment ('//' or a trailing '/')".into()),
                "." | ".." => return Err(format!("has a {} segment", quoted(seg))),
                "**" => segments.push(GlobSegment::AnyDepth),
                s if s.contains("**") => {
                    return Err(format!(
                        "segment {} has '**' inside it; '**' must be a whole segment",
                        quoted(s)
                    ));
                }
                s if s.contains('\0') => return Err("contains a NUL character".into()),
                s => segments.push(GlobSegment::Name(seal_core::paths::nfc(s))),
            }
        }
        Ok(Glob {
            text: text.to_string(),
            segments,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The pattern positions reachable after matching all of `names`
    /// (positions after a `**` include the `**` itself and what follows).
    fn states_after<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<bool> {
        let n = self.segments.len();
        let mut states = vec![false; n + 1];
        states[0] = true;
        self.close(&mut states);
        for name in names {
            let mut next = vec![false; n + 1];
            for (i, on) in states.iter().enumerate().take(n) {
                if !on {
                    continue;
                }
                match &self.segments[i] {
                    GlobSegment::AnyDepth => next[i] = true,
                    GlobSegment::Name(glob) if wildcard_matches(glob, name) => next[i + 1] = true,
                    GlobSegment::Name(_) => {}
                }
            }
            self.close(&mut next);
            if !next.iter().any(|s| *s) {
                return next;
            }
            states = next;
        }
        states
    }

    /// A `**` may match nothing: a state before one reaches the next too.
    fn close(&self, states: &mut [bool]) {
        for i in 0..self.segments.len() {
            if states[i] && self.segments[i] == GlobSegment::AnyDepth {
                states[i + 1] = true;
            }
        }
    }

    /// What this glob says about the path of NFC `names`.
    pub fn protection<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Protection {
        let states = self.states_after(names);
        let n = self.segments.len();
        if states[n] {
            Protection::Protected
        } else if states[..n].iter().any(|s| *s) {
            Protection::OnTheWay
        } else {
            Protection::None
        }
    }
}

/// `*` matches any run of characters (none included) within one name.
fn wildcard_matches(glob: &str, name: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The protected paths of the writable view a machine policy adds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedPaths(Vec<Glob>);

impl ProtectedPaths {
    pub fn globs(&self) -> &[Glob] {
        &self.0
    }

    /// The strongest protection any glob gives the path of NFC `names`, with
    /// the glob that gives it.
    pub fn protection<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str> + Clone,
    ) -> (Protection, Option<&Glob>) {
        let mut found = (Protection::None, None);
        for glob in &self.0 {
            match glob.protection(names.clone()) {
                Protection::Protected => return (Protection::Protected, Some(glob)),
                Protection::OnTheWay => found = (Protection::OnTheWay, Some(glob)),
                Protection::None => {}
            }
        }
        found
    }
}

/// Where a built-in protected path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectedWhere {
    /// Under every home directory of `seal run` (`rel` is relative to it).
    Home { rel: &'static str, dir: bool },
    /// In the project, by the built-in rules of [`MachinePolicy::built_in_guard`].
    Project,
}

/// A path the command never changes, even inside a place it may write,
/// unless the machine policy lifts it (`allowWriteProtected`, by `name`):
/// files through which the user's shell, git, ssh or session manager run
/// commands later, outside any run (docs/SECURITY.md, "Write scope").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protected {
    pub name: &'static str,
    pub at: ProtectedWhere,
}

const fn home(name: &'static str, rel: &'static str, dir: bool) -> Protected {
    Protected {
        name,
        at: ProtectedWhere::Home { rel, dir },
    }
}

const fn project(name: &'static str) -> Protected {
    Protected {
        name,
        at: ProtectedWhere::Project,
    }
}

/// Every built-in protected path, by the name docs/POLICY.md gives it.
pub static PROTECTED: &[Protected] = &[
    home("~/.bashrc", ".bashrc", false),
    home("~/.bash_profile", ".bash_profile", false),
    home("~/.bash_login", ".bash_login", false),
    home("~/.bash_logout", ".bash_logout", false),
    home("~/.profile", ".profile", false),
    home("~/.zshenv", ".zshenv", false),
    home("~/.zshrc", ".zshrc", false),
    home("~/.zprofile", ".zprofile", false),
    home("~/.zlogin", ".zlogin", false),
    home("~/.zlogout", ".zlogout", false),
    home("~/.config/fish", ".config/fish", true),
    home("~/.gitconfig", ".gitconfig", false),
    home("~/.config/git", ".config/git", true),
    home("~/.ssh", ".ssh", true),
    home("~/.config/systemd", ".config/systemd", true),
    home("~/.local/share/systemd", ".local/share/systemd", true),
    home("~/.config/environment.d", ".config/environment.d", true),
    home("~/.config/autostart", ".config/autostart", true),
    project(".git/config"),
    project(".git/hooks"),
    project(".git/commondir"),
    project(".git/info"),
    project(".gitmodules"),
    project(".git"),
    project("HEAD"),
    project(".env"),
];

/// Names inside a git directory through which git runs commands or finds
/// another git directory (its configuration, hooks, the common directory of
/// a linked worktree, attributes and excludes), with the protected path
/// that covers each.
const GIT_SIDE_DOORS: &[(&str, &str)] = &[
    ("config", ".git/config"),
    ("config.worktree", ".git/config"),
    ("hooks", ".git/hooks"),
    ("commondir", ".git/commondir"),
    ("gitdir", ".git/commondir"),
    ("info", ".git/info"),
];

/// What the built-in rules of the writable view (git's side doors, the
/// agents' environment files) say about a project path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuiltInRule {
    /// Nothing.
    None,
    /// A file through which git on the host runs commands or finds another
    /// git directory (`.git/config`, `.git/hooks/...`, `.git/commondir`,
    /// `.git/info/...`, the same in `.git/modules/*` and `.git/worktrees/*`,
    /// `.gitmodules`): immutable from inside. The protected path's name.
    SideDoor(&'static str),
    /// A name `.git`: no repository is made, replaced or moved inside the
    /// project (one that is empty may be removed).
    Repository,
    /// A file named `HEAD` outside a `.git` directory: with `objects/` and
    /// `refs/` beside it, git takes its directory for a bare repository and
    /// reads its `config`. It may not be made.
    BareHead,
    /// A file named `.env`: Gemini CLI and Qwen Code read the first one they
    /// meet walking up from where they start into their own environment
    /// (`GEMINI_SYSTEM_MD` replaces the system prompt with a file it names,
    /// `BASH_ENV` runs a script before every shell command of the session),
    /// and Aider reads its `AIDER_*` commands from one. It may not be made or
    /// changed; it may be removed, and a directory of that name (a Python
    /// virtual environment) may be made.
    AgentEnvFile,
}

/// Whether `name` is `want` as a built-in rule compares: ASCII
/// case-insensitively, since on a case-insensitive filesystem (or a
/// case-folding directory) `.GIT` is the same directory and `.ENV` the file
/// an agent opening `.env` reads.
fn name_is(name: &str, want: &str) -> bool {
    name.eq_ignore_ascii_case(want)
}

/// The built-in rule of the project path of NFC `names`.
pub(crate) fn built_in_rule<'a>(names: impl IntoIterator<Item = &'a str>) -> BuiltInRule {
    let names: Vec<&str> = names.into_iter().collect();
    let Some(last) = names.last() else {
        return BuiltInRule::None;
    };
    for (i, name) in names.iter().enumerate() {
        if !name_is(name, ".git") || i + 1 == names.len() {
            continue;
        }
        let rest = &names[i + 1..];
        let door = |n: &str| {
            GIT_SIDE_DOORS
                .iter()
                .find(|(d, _)| name_is(n, d))
                .map(|(_, p)| *p)
        };
        if let Some(p) = door(rest[0]) {
            return BuiltInRule::SideDoor(p);
        }
        // A submodule's or linked worktree's own git directory.
        if name_is(rest[0], "modules") || name_is(rest[0], "worktrees") {
            if let Some(p) = rest[1..].iter().find_map(|n| door(n)) {
                return BuiltInRule::SideDoor(p);
            }
        }
        return BuiltInRule::None;
    }
    if name_is(last, ".git") {
        BuiltInRule::Repository
    } else if name_is(last, ".gitmodules") {
        BuiltInRule::SideDoor(".gitmodules")
    } else if *last == "HEAD" {
        BuiltInRule::BareHead
    } else if name_is(last, ".env") {
        BuiltInRule::AgentEnvFile
    } else {
        BuiltInRule::None
    }
}

/// The machine policy in force (the default: none).
#[derive(Debug, Clone, Default)]
pub struct MachinePolicy {
    /// The file it was read from; `None` when there is no policy file.
    pub file: Option<PathBuf>,
    /// `minimumPolicy`: a project's policy is raised to it (strictest wins).
    pub minimum_policy: Option<Policy>,
    /// `requireSeal`: a project without `seal.json` is treated as one with
    /// the empty lockfile (policy `block`) instead of Seal being inactive.
    pub require_seal: bool,
    pub audit: MandatoryAudit,
    /// `extraSurfaces`: Seal discovery patterns treated as agent surfaces.
    pub extra_surfaces: ExtraRows,
    /// `extraMasks`: locations `seal run` masks besides its table.
    pub extra_masks: Vec<ExtraMask>,
    /// `protectedPaths`: immutable in the writable view.
    pub protected_paths: ProtectedPaths,
    /// `readOnly`: views are always served read-only.
    pub read_only: bool,
    /// `rehashEveryOpen`: every open verifies its bundle in full.
    pub rehash_every_open: bool,
    /// `strictVerify`: `seal verify` runs as with `--strict` (agent
    /// artifacts no discovery pattern covers count as Unverified).
    pub strict_verify: bool,
    /// `allowWrite`: places `seal run` lets the command write besides its
    /// built-in write scope.
    pub allow_write: Vec<ExtraMask>,
    /// `allowWriteProtected`: built-in protected paths ([`PROTECTED`]) this
    /// machine leaves to the write scope.
    pub allow_write_protected: Vec<&'static str>,
    /// `sha256:` of the file's bytes (audit records name the policy in force).
    pub digest: Option<String>,
}

impl MachinePolicy {
    /// The policy in force for a project that asks for `project`: the
    /// strictest of the two, and who set it.
    pub(crate) fn policy_for(&self, project: Policy) -> (Policy, Source) {
        match (self.minimum_policy, project) {
            (Some(Policy::Block), Policy::Warn) => (Policy::Block, Source::Machine),
            _ => (project, Source::Project),
        }
    }

    /// The policy in force for `lock` (see [`MachinePolicy::policy_for`]);
    /// `implied` when `lock` stands in for a missing `seal.json` (its policy
    /// then comes from this machine policy's `requireSeal`).
    pub fn policy_of(&self, lock: &Lockfile, implied: bool) -> (Policy, Source) {
        let (policy, source) = self.policy_for(lock.policy);
        if implied {
            (policy, Source::Machine)
        } else {
            (policy, source)
        }
    }

    /// The source of one setting: the machine when the file sets it.
    pub fn source_if(&self, set: bool) -> Source {
        if set {
            Source::Machine
        } else {
            Source::BuiltIn
        }
    }

    /// The extra locations `seal run` must mask, resolved for `homes` (the
    /// home directories the run masks): `~/REL` under each home, absolute
    /// paths as they are. For the run's mask plan.
    pub fn extra_mask_paths(&self, homes: &[PathBuf]) -> Vec<PathBuf> {
        resolve_home_paths(&self.extra_masks, homes)
    }

    /// What `seal run` must show read-only to the command, so that it cannot
    /// change the rules it runs under: the policy file and its directory
    /// (whether or not the file exists).
    pub fn read_only_paths() -> Vec<PathBuf> {
        let file = policy_path();
        let mut out: Vec<PathBuf> = file.parent().map(Path::to_path_buf).into_iter().collect();
        out.push(file);
        out
    }

    /// The write guard the built-in rules ([`built_in_rule`]) put on the
    /// project path of NFC `names`, unless this policy lifts the rule
    /// (`allowWriteProtected`).
    pub(crate) fn built_in_guard<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Guard {
        let lifted = |name: &str| self.allow_write_protected.contains(&name);
        match built_in_rule(names) {
            BuiltInRule::None => Guard::Open,
            BuiltInRule::SideDoor(p) if !lifted(p) => Guard::GitSideDoor,
            BuiltInRule::Repository if !lifted(".git") => Guard::GitRepository,
            BuiltInRule::BareHead if !lifted("HEAD") => Guard::BareRepository,
            BuiltInRule::AgentEnvFile if !lifted(".env") => Guard::AgentEnvFile,
            BuiltInRule::SideDoor(_)
            | BuiltInRule::Repository
            | BuiltInRule::BareHead
            | BuiltInRule::AgentEnvFile => Guard::Open,
        }
    }

    /// The built-in protected paths under a home directory this policy
    /// leaves protected: (path relative to the home, whether a directory).
    pub fn protected_in_home(&self) -> Vec<(&'static str, bool)> {
        PROTECTED
            .iter()
            .filter(|p| !self.allow_write_protected.contains(&p.name))
            .filter_map(|p| match p.at {
                ProtectedWhere::Home { rel, dir } => Some((rel, dir)),
                ProtectedWhere::Project => None,
            })
            .collect()
    }

    /// The places `allowWrite` adds to the run's write scope, resolved for
    /// `homes` (as [`MachinePolicy::extra_mask_paths`]).
    pub fn allow_write_paths(&self, homes: &[PathBuf]) -> Vec<PathBuf> {
        resolve_home_paths(&self.allow_write, homes)
    }

    /// The path the file was read from, for messages (`-` without one).
    pub fn shown_file(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(|| "-".to_string(), |p| escaped_os(p.as_os_str()))
    }
}

/// `~/REL` entries under each of `homes`, absolute paths as they are.
fn resolve_home_paths(paths: &[ExtraMask], homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        match p {
            ExtraMask::Home(rel) => out.extend(homes.iter().map(|h| h.join(rel))),
            ExtraMask::Absolute(p) => out.push(p.clone()),
        }
    }
    out.dedup();
    out
}

/// The machine policy of this process, read once from [`policy_path`].
pub fn machine() -> Result<&'static MachinePolicy, PolicyError> {
    static CELL: OnceLock<Result<MachinePolicy, PolicyError>> = OnceLock::new();
    CELL.get_or_init(|| load_from(&policy_path()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Reads and checks the policy file at `path` (absent: no machine policy).
pub(crate) fn load_from(path: &Path) -> Result<MachinePolicy, PolicyError> {
    let refuse = |rule: Rule, detail: String| PolicyError {
        path: path.to_path_buf(),
        rule,
        detail,
    };
    let fd = match nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT) => return Ok(MachinePolicy::default()),
        Err(nix::errno::Errno::ELOOP) => {
            return Err(refuse(
                Rule::NoSymlink,
                "it is a symlink; the policy must be a regular file owned by root".into(),
            ));
        }
        Err(e) => return Err(refuse(Rule::Readable, format!("cannot open it: {e}"))),
    };
    check_file(fd.as_fd()).map_err(|(rule, detail)| refuse(rule, detail))?;
    check_directories(path).map_err(|(rule, detail)| refuse(rule, detail))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::from(fd), MAX_SIZE + 1),
        &mut bytes,
    )
    .map_err(|e| refuse(Rule::Readable, format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_SIZE {
        return Err(refuse(Rule::Size, format!("larger than {MAX_SIZE} bytes")));
    }
    let mut policy = parse(&bytes, path).map_err(|(rule, detail)| refuse(rule, detail))?;
    policy.file = Some(path.to_path_buf());
    policy.digest = Some(seal_core::digest::Digest::of(&bytes).to_string());
    Ok(policy)
}

/// A regular file, owned by root, that only root may write.
fn check_file(fd: BorrowedFd<'_>) -> Result<(), (Rule, String)> {
    let st = fstat(fd).map_err(|e| (Rule::Readable, format!("cannot inspect it: {e}")))?;
    if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
        return Err((Rule::RegularFile, "it is not a regular file".into()));
    }
    if st.st_uid != 0 {
        return Err((
            Rule::OwnedByRoot,
            format!(
                "it is owned by {}; it must be owned by root (chown root:root)",
                owner_words(st.st_uid)
            ),
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Err((
            Rule::WritableByRootOnly,
            format!(
                "its mode {:04o} lets group or others write it; make it 0644 (chmod 644)",
                st.st_mode & 0o7777
            ),
        ));
    }
    Ok(())
}

/// The owner of a refused file or directory, in words. Inside a user
/// namespace (rootless Podman, toolbox, bubblewrap as an ordinary user), a
/// file whose owner the namespace does not map, such as root's on the host,
/// shows as owned by the overflow uid (65534, `nobody`): that case is
/// named, since "owned by uid 65534" alone sends the reader looking for a
/// chown that would not help. It stays refused: from inside, that owner
/// cannot be told from a user of that uid (bubblewrap maps its user to
/// 65534 itself), so nothing proves the file is root's.
fn owner_words(uid: u32) -> String {
    let overflow = std::fs::read_to_string("/proc/sys/kernel/overflowuid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(DEFAULT_OVERFLOW_UID);
    let uid_map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    if may_be_unmapped_owner(uid, overflow, &uid_map) {
        format!(
            "uid {uid}, the overflow uid: this process runs in a user namespace (a container or \
             sandbox), where a file whose owner the namespace does not map, as root's on the \
             host, shows as uid {uid} and cannot be told from one a user owns, so seal cannot \
             prove it is root's. See \"A machine policy in a container\" in \
             docs/CONTAINERS.md"
        )
    } else {
        format!("uid {uid}")
    }
}

/// The kernel's default overflow uid.
const DEFAULT_OVERFLOW_UID: u32 = 65534;

/// True when an owner `uid` may be the overflow uid standing for an owner
/// the user namespace does not map: `uid` is the overflow uid and
/// `uid_map` (this process's `/proc/self/uid_map`) is not the initial
/// namespace's identity map. (Whether the host's root in particular is
/// unmapped cannot be read from inside: a nested namespace's map names
/// its parent's ids, not the host's.)
fn may_be_unmapped_owner(uid: u32, overflow: u32, uid_map: &str) -> bool {
    let initial = uid_map.split_whitespace().eq(["0", "0", "4294967295"]);
    uid == overflow && !initial
}

/// Every directory on the way to the file (resolved) is owned by root and
/// writable by root only, or sticky (then nobody but root may rename or
/// remove root's entries in it): else someone else could replace the file.
fn check_directories(path: &Path) -> Result<(), (Rule, String)> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let resolved = std::fs::canonicalize(parent).map_err(|e| {
        (
            Rule::SafeDirectories,
            format!("cannot resolve its directory: {e}"),
        )
    })?;
    let mut dir = Some(resolved.as_path());
    while let Some(d) = dir {
        let st = nix::sys::stat::stat(d).map_err(|e| {
            (
                Rule::SafeDirectories,
                format!("cannot inspect {}: {e}", escaped_os(d.as_os_str())),
            )
        })?;
        let sticky = st.st_mode & 0o1000 != 0;
        if st.st_uid != 0 || (st.st_mode & 0o022 != 0 && !sticky) {
            return Err((
                Rule::SafeDirectories,
                format!(
                    "the directory {} (owner {}, mode {:04o}) lets someone other than root \
                     replace the file; directories on its way must be owned by root and \
                     writable by root only",
                    escaped_os(d.as_os_str()),
                    owner_words(st.st_uid),
                    st.st_mode & 0o7777
                ),
            ));
        }
        dir = d.parent();
    }
    Ok(())
}

/// The top-level keys of the schema.
const KEYS: &[&str] = &[
    "version",
    "minimumPolicy",
    "requireSeal",
    "audit",
    "extraSurfaces",
    "extraMasks",
    "protectedPaths",
    "readOnly",
    "rehashEveryOpen",
    "strictVerify",
    "allowWrite",
    "allowWriteProtected",
];
const AUDIT_KEYS: &[&str] = &["file", "syslog"];
const SYSLOG_KEYS: &[&str] = &["format", "facility"];

type SchemaResult<T> = Result<T, (Rule, String)>;

fn schema_error<T>(at: &Value, what: String) -> SchemaResult<T> {
    Err((Rule::Schema, format!("{}: {what}", at.pos)))
}

/// The members of an object whose keys are all in `known`.
fn members<'v>(value: &'v Value, name: &str, known: &[&str]) -> SchemaResult<&'v [Member]> {
    let Kind::Object(members) = &value.kind else {
        return schema_error(
            value,
            format!("{name} must be an object, not {}", value.kind.type_name()),
        );
    };
    for m in members {
        if !known.contains(&m.key.as_str()) {
            return Err((
                Rule::Schema,
                format!(
                    "{}: unknown key {} in {name} (known keys: {})",
                    m.key_pos,
                    quoted(&m.key),
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(members)
}

fn boolean(value: &Value, key: &str) -> SchemaResult<bool> {
    match value.kind {
        Kind::Bool(b) => Ok(b),
        ref other => schema_error(
            value,
            format!("{key} must be true or false, not {}", other.type_name()),
        ),
    }
}

fn string<'v>(value: &'v Value, key: &str) -> SchemaResult<&'v str> {
    match &value.kind {
        Kind::String(s) => Ok(s),
        other => schema_error(
            value,
            format!("{key} must be a string, not {}", other.type_name()),
        ),
    }
}

fn strings<'v>(value: &'v Value, key: &str) -> SchemaResult<Vec<(&'v Value, &'v str)>> {
    let Kind::Array(items) = &value.kind else {
        return schema_error(
            value,
            format!(
                "{key} must be an array of strings, not {}",
                value.kind.type_name()
            ),
        );
    };
    items
        .iter()
        .map(|item| string(item, key).map(|s| (item, s)))
        .collect()
}

/// An absolute path without `.` or `..` segments.
fn clean_absolute(text: &str) -> Option<PathBuf> {
    let path = Path::new(text);
    let clean = path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && !text.contains("/./")
        && !text.ends_with("/.");
    clean.then(|| path.components().collect())
}

/// Parses policy bytes against the closed schema (`source` names the file in
/// the rows it adds to the surface table).
pub(crate) fn parse(bytes: &[u8], source: &Path) -> Result<MachinePolicy, (Rule, String)> {
    let root = json::parse(bytes).map_err(|e| (Rule::StrictJson, e.to_string()))?;
    let members = members(&root, "the policy", KEYS)?;
    let mut policy = MachinePolicy::default();
    let mut version = None;
    for m in members {
        let v = &m.value;
        match m.key.as_str() {
            "version" => match &v.kind {
                Kind::Number(n) if n == "1" => version = Some(VERSION),
                other => {
                    return schema_error(
                        v,
                        format!(
                            "version must be {VERSION} (the schema this build reads), not {}",
                            match other {
                                Kind::Number(n) => n.clone(),
                                k => k.type_name().to_string(),
                            }
                        ),
                    );
                }
            },
            "minimumPolicy" => {
                policy.minimum_policy = Some(match string(v, "minimumPolicy")? {
                    "block" => Policy::Block,
                    "warn" => Policy::Warn,
                    other => {
                        return schema_error(
                            v,
                            format!(
                                "minimumPolicy must be \"block\" or \"warn\", not {}",
                                quoted(other)
                            ),
                        );
                    }
                });
            }
            "requireSeal" => policy.require_seal = boolean(v, "requireSeal")?,
            "readOnly" => policy.read_only = boolean(v, "readOnly")?,
            "rehashEveryOpen" => policy.rehash_every_open = boolean(v, "rehashEveryOpen")?,
            "strictVerify" => policy.strict_verify = boolean(v, "strictVerify")?,
            "audit" => policy.audit = parse_audit(v)?,
            "extraSurfaces" => policy.extra_surfaces = parse_surfaces(v, source)?,
            "extraMasks" => {
                for (item, text) in strings(v, "extraMasks")? {
                    policy
                        .extra_masks
                        .push(parse_mask(item, text, "extraMasks")?);
                }
            }
            "allowWrite" => {
                for (item, text) in strings(v, "allowWrite")? {
                    policy
                        .allow_write
                        .push(parse_mask(item, text, "allowWrite")?);
                }
            }
            "allowWriteProtected" => {
                for (item, text) in strings(v, "allowWriteProtected")? {
                    match PROTECTED.iter().find(|p| p.name == text) {
                        Some(p) => policy.allow_write_protected.push(p.name),
                        None => {
                            return schema_error(
                                item,
                                format!(
                                    "allowWriteProtected entry {} is not a built-in protected \
                                     path (known: {})",
                                    quoted(text),
                                    PROTECTED
                                        .iter()
                                        .map(|p| p.name)
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            );
                        }
                    }
                }
            }
            "protectedPaths" => {
                let mut globs = Vec::new();
                for (item, text) in strings(v, "protectedPaths")? {
                    match Glob::parse(text) {
                        Ok(g) => globs.push(g),
                        Err(why) => {
                            return schema_error(
                                item,
                                format!("protectedPaths entry {}: {why}", quoted(text)),
                            );
                        }
                    }
                }
                policy.protected_paths = ProtectedPaths(globs);
            }
            _ => unreachable!("checked against KEYS"),
        }
    }
    if version.is_none() {
        return schema_error(
            &root,
            format!("the key \"version\" ({VERSION}) is required"),
        );
    }
    Ok(policy)
}

fn parse_audit(value: &Value) -> SchemaResult<MandatoryAudit> {
    let mut audit = MandatoryAudit::default();
    for m in members(value, "audit", AUDIT_KEYS)? {
        let v = &m.value;
        match m.key.as_str() {
            "file" => {
                let text = string(v, "audit.file")?;
                audit.file = Some(clean_absolute(text).ok_or_else(|| {
                    (
                        Rule::Schema,
                        format!(
                            "{}: audit.file must be an absolute path without '.' or '..', not {}",
                            v.pos,
                            quoted(text)
                        ),
                    )
                })?);
            }
            "syslog" => {
                let mut syslog = Syslog::default();
                for s in members(v, "audit.syslog", SYSLOG_KEYS)? {
                    let text = string(&s.value, &format!("audit.syslog.{}", s.key))?;
                    match (s.key.as_str(), text) {
                        ("format", "rfc3164") => syslog.format = SyslogFormat::Rfc3164,
                        ("format", "rfc5424") => syslog.format = SyslogFormat::Rfc5424,
                        ("facility", name) if FACILITIES.iter().any(|(n, _)| *n == name) => {
                            syslog.facility = FACILITIES
                                .iter()
                                .find(|(n, _)| *n == name)
                                .map_or("authpriv", |(n, _)| n);
                        }
                        (key, other) => {
                            let allowed = if key == "format" {
                                "rfc3164, rfc5424".to_string()
                            } else {
                                FACILITIES
                                    .iter()
                                    .map(|(n, _)| *n)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            };
                            return schema_error(
                                &s.value,
                                format!(
                                    "audit.syslog.{key} {} is not one of {allowed}",
                                    quoted(other)
                                ),
                            );
                        }
                    }
                }
                audit.syslog = Some(syslog);
            }
            _ => unreachable!("checked against AUDIT_KEYS"),
        }
    }
    Ok(audit)
}

fn parse_surfaces(value: &Value, source: &Path) -> SchemaResult<ExtraRows> {
    // Leaked once per policy read: rows name their pattern for the life of
    // the process, as the built-in ones do (`&'static SurfaceRow`).
    let source: &'static str = Box::leak(source.display().to_string().into_boxed_str());
    let mut rows = Vec::new();
    for (item, text) in strings(value, "extraSurfaces")? {
        let pattern = Pattern::parse(text).map_err(|rule| {
            (
                Rule::Schema,
                format!(
                    "{}: extraSurfaces entry {} is not a Seal discovery pattern: {rule}",
                    item.pos,
                    quoted(text)
                ),
            )
        })?;
        let row: &'static SurfaceRow = Box::leak(Box::new(SurfaceRow {
            pattern: Box::leak(text.to_string().into_boxed_str()),
            unit: Unit::Either,
            agents: "machine policy",
            source,
        }));
        rows.push((pattern, row));
    }
    Ok(ExtraRows::new(rows))
}

fn parse_mask(item: &Value, text: &str, key: &str) -> SchemaResult<ExtraMask> {
    let bad = |why: &str| schema_error(item, format!("{key} entry {}: {why}", quoted(text)));
    if let Some(rel) = text.strip_prefix("~/") {
        let clean = !rel.is_empty()
            && rel
                .split('/')
                .all(|s| !s.is_empty() && s != "." && s != "..");
        if !clean {
            return bad(
                "a home path is ~/ and a relative path without empty, '.' or '..' segments",
            );
        }
        return Ok(ExtraMask::Home(PathBuf::from(rel)));
    }
    match clean_absolute(text) {
        Some(p) if p != Path::new("/") => Ok(ExtraMask::Absolute(p)),
        _ => {
            bad("must be ~/PATH (under every home the run masks) or an absolute path other than /")
        }
    }
}

/// The project's `seal.json` bytes, or — when it is missing and the machine
/// policy requires Seal — the bytes of the empty lockfile (policy `block`),
/// with `true` to say so. Other errors are the store's.
pub fn lockfile_bytes(
    project: BorrowedFd<'_>,
    machine: &MachinePolicy,
) -> Result<(Vec<u8>, bool), StoreError> {
    match read_lockfile(project) {
        Err(StoreError::Missing) if machine.require_seal => {
            Ok((Lockfile::empty(Policy::Block).to_canonical_bytes(), true))
        }
        other => other.map(|bytes| (bytes, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<MachinePolicy, (Rule, String)> {
        parse(text.as_bytes(), Path::new("/etc/seal/policy.json"))
    }

    #[test]
    fn an_overflow_owner_is_named_only_inside_a_user_namespace() {
        // The initial namespace maps everything: 65534 is nobody's uid.
        assert!(!may_be_unmapped_owner(
            65534,
            65534,
            "         0          0 4294967295\n"
        ));
        // bubblewrap as uid 65534 (its nested namespace names the parent's
        // ids), rootless Podman, a map not yet written.
        for map in [
            "     65534          0          1\n",
            "0 1000 1\n1 100000 65536\n",
            "",
        ] {
            assert!(may_be_unmapped_owner(65534, 65534, map), "{map:?}");
        }
        // An owner that is not the overflow uid is what it says.
        assert!(!may_be_unmapped_owner(1000, 65534, "65534 65534 1\n"));
        assert!(may_be_unmapped_owner(4242, 4242, "0 1000 1\n"));
    }

    #[test]
    fn the_full_schema() {
        let p = parsed(
            r#"{
              "version": 1,
              "minimumPolicy": "block",
              "requireSeal": true,
              "audit": {"file": "/var/log/seal/audit.jsonl",
                        "syslog": {"format": "rfc5424", "facility": "local3"}},
              "extraSurfaces": [".acme/prompts/*", "tools/agent"],
              "extraMasks": ["~/.acme-agent", "/opt/acme/plugins"],
              "protectedPaths": [".git/hooks/**", ".github/workflows/*.yml"],
              "readOnly": true,
              "rehashEveryOpen": true,
              "strictVerify": true
            }"#,
        )
        .unwrap();
        assert_eq!(p.minimum_policy, Some(Policy::Block));
        assert!(p.require_seal && p.read_only && p.rehash_every_open && p.strict_verify);
        assert_eq!(
            p.audit.file.as_deref(),
            Some(Path::new("/var/log/seal/audit.jsonl"))
        );
        let syslog = p.audit.syslog.unwrap();
        assert_eq!(syslog.format, SyslogFormat::Rfc5424);
        assert_eq!(syslog.facility_code(), 19);
        assert_eq!(p.extra_surfaces.len(), 2);
        assert_eq!(
            p.extra_masks,
            vec![
                ExtraMask::Home(PathBuf::from(".acme-agent")),
                ExtraMask::Absolute(PathBuf::from("/opt/acme/plugins"))
            ]
        );
        assert_eq!(p.protected_paths.globs().len(), 2);
        let minimal = parsed(r#"{"version": 1}"#).unwrap();
        assert_eq!(minimal.minimum_policy, None);
        assert!(minimal.audit.is_empty() && !minimal.require_seal);
        let syslog = parsed(r#"{"version": 1, "audit": {"syslog": {}}}"#).unwrap();
        assert_eq!(syslog.audit.syslog, Some(Syslog::default()));
    }

    #[test]
    fn the_schema_is_closed_and_strict() {
        let cases: &[(&str, Rule, &str)] = &[
            (
                r#"{"version": 1, "minimumPolicy": "block", "minimumPolicy": "warn"}"#,
                Rule::StrictJson,
                "duplicate",
            ),
            (
                "\u{feff}{\"version\": 1}",
                Rule::StrictJson,
                "byte-order mark",
            ),
            (
                r#"{"version": 1} {}"#,
                Rule::StrictJson,
                "after the JSON value",
            ),
            (
                r#"{"version": 1, "requireSeal": true,}"#,
                Rule::StrictJson,
                "expected",
            ),
            (
                r#"{"version": 1, "requireSeals": true}"#,
                Rule::Schema,
                "unknown key \"requireSeals\"",
            ),
            (
                r#"{"version": 1, "audit": {"syslog": {"host": "x"}}}"#,
                Rule::Schema,
                "unknown key \"host\" in audit.syslog",
            ),
            (
                r#"{"version": 1, "audit": {"files": "/x"}}"#,
                Rule::Schema,
                "unknown key \"files\" in audit",
            ),
            (
                r#"{"minimumPolicy": "block"}"#,
                Rule::Schema,
                "\"version\" (1) is required",
            ),
            (r#"{"version": 2}"#, Rule::Schema, "version must be 1"),
            (r#"{"version": 1.0}"#, Rule::Schema, "version must be 1"),
            (r#"[]"#, Rule::Schema, "must be an object"),
            (
                r#"{"version": 1, "minimumPolicy": "Block"}"#,
                Rule::Schema,
                "\"block\" or \"warn\"",
            ),
            (
                r#"{"version": 1, "requireSeal": "yes"}"#,
                Rule::Schema,
                "true or false",
            ),
            (
                r#"{"version": 1, "audit": {"file": "audit.log"}}"#,
                Rule::Schema,
                "absolute path",
            ),
            (
                r#"{"version": 1, "audit": {"file": "/var/log/../x"}}"#,
                Rule::Schema,
                "absolute path",
            ),
            (
                r#"{"version": 1, "audit": {"syslog": {"format": "json"}}}"#,
                Rule::Schema,
                "rfc3164, rfc5424",
            ),
            (
                r#"{"version": 1, "audit": {"syslog": {"facility": "kern"}}}"#,
                Rule::Schema,
                "authpriv",
            ),
            (
                r#"{"version": 1, "audit": {"syslog": true}}"#,
                Rule::Schema,
                "must be an object",
            ),
            (
                r#"{"version": 1, "extraSurfaces": [".acme/**"]}"#,
                Rule::Schema,
                "discovery pattern",
            ),
            (
                r#"{"version": 1, "extraSurfaces": "x"}"#,
                Rule::Schema,
                "array of strings",
            ),
            (
                r#"{"version": 1, "extraMasks": ["relative"]}"#,
                Rule::Schema,
                "~/PATH",
            ),
            (
                r#"{"version": 1, "extraMasks": ["~/../etc"]}"#,
                Rule::Schema,
                "home path",
            ),
            (
                r#"{"version": 1, "extraMasks": ["/"]}"#,
                Rule::Schema,
                "other than /",
            ),
            (
                r#"{"version": 1, "protectedPaths": ["/etc"]}"#,
                Rule::Schema,
                "relative to the project",
            ),
            (
                r#"{"version": 1, "protectedPaths": [".git/ho**"]}"#,
                Rule::Schema,
                "whole segment",
            ),
            (
                r#"{"version": 1, "protectedPaths": ["a//b"]}"#,
                Rule::Schema,
                "empty segment",
            ),
            (
                r#"{"version": 1, "protectedPaths": [3]}"#,
                Rule::Schema,
                "must be a string",
            ),
        ];
        for (text, rule, says) in cases {
            let (got, message) = parsed(text).expect_err(text);
            assert_eq!(got, *rule, "{text}: {message}");
            assert!(message.contains(says), "{text}: {message}");
        }
    }

    #[test]
    fn strictest_wins() {
        for (minimum, project, want, source) in [
            (None, Policy::Warn, Policy::Warn, Source::Project),
            (None, Policy::Block, Policy::Block, Source::Project),
            (
                Some(Policy::Warn),
                Policy::Warn,
                Policy::Warn,
                Source::Project,
            ),
            (
                Some(Policy::Warn),
                Policy::Block,
                Policy::Block,
                Source::Project,
            ),
            (
                Some(Policy::Block),
                Policy::Warn,
                Policy::Block,
                Source::Machine,
            ),
            (
                Some(Policy::Block),
                Policy::Block,
                Policy::Block,
                Source::Project,
            ),
        ] {
            let m = MachinePolicy {
                minimum_policy: minimum,
                ..MachinePolicy::default()
            };
            assert_eq!(
                m.policy_for(project),
                (want, source),
                "{minimum:?} {project:?}"
            );
            let lock = Lockfile::empty(project);
            assert_eq!(m.policy_of(&lock, true).1, Source::Machine);
        }
    }

    #[test]
    fn protected_globs() {
        let p = |g: &str, path: &str| Glob::parse(g).unwrap().protection(path.split('/'));
        use Protection::*;
        assert_eq!(p(".git/hooks/**", ".git/hooks/pre-commit"), Protected);
        assert_eq!(p(".git/hooks/**", ".git/hooks"), Protected);
        assert_eq!(p(".git/hooks/**", ".git/hooks/a/b/c"), Protected);
        assert_eq!(p(".git/hooks/**", ".git"), OnTheWay);
        assert_eq!(p(".git/hooks/**", ".git/config"), None);
        assert_eq!(p(".git/hooks/**", "src"), None);
        assert_eq!(p(".git/config", ".git/config"), Protected);
        assert_eq!(p(".git/config", ".git/config/x"), None);
        assert_eq!(
            p(".github/workflows/*.yml", ".github/workflows/ci.yml"),
            Protected
        );
        assert_eq!(
            p(".github/workflows/*.yml", ".github/workflows/ci.yaml"),
            None
        );
        assert_eq!(p(".github/workflows/*.yml", ".github/workflows"), OnTheWay);
        assert_eq!(p("**/.env", "a/b/.env"), Protected);
        assert_eq!(p("**/.env", ".env"), Protected);
        assert_eq!(p("**/.env", "a/b"), OnTheWay);
        assert_eq!(p("a/**/z", "a/z"), Protected);
        assert_eq!(p("a/**/z", "a/b/c/z"), Protected);
        assert_eq!(p("a/**/z", "a/b/c"), OnTheWay);
        assert_eq!(p("a/**/z", "b"), None);
        assert!(wildcard_matches("*", ""));
        assert!(wildcard_matches("a*b*c", "abc"));
        assert!(wildcard_matches("a*b*c", "a-b-b-c"));
        assert!(!wildcard_matches("a*b*c", "acb"));
        assert!(!wildcard_matches("ab*ba", "aba"));
        let set = ProtectedPaths(vec![
            Glob::parse(".vscode/tasks.json").unwrap(),
            Glob::parse(".git/hooks/**").unwrap(),
        ]);
        let (found, glob) = set.protection([".git", "hooks", "x"]);
        assert_eq!(
            (found, glob.map(Glob::as_str)),
            (Protected, Some(".git/hooks/**"))
        );
        assert_eq!(set.protection([".vscode"]).0, OnTheWay);
        assert_eq!(set.protection(["src"]).0, None);
    }

    #[test]
    fn git_side_doors_at_any_depth() {
        use BuiltInRule::*;
        let r = |p: &str| built_in_rule(p.split('/'));
        assert_eq!(r(".git/config"), SideDoor(".git/config"));
        assert_eq!(r(".git/config.worktree"), SideDoor(".git/config"));
        assert_eq!(r(".git/hooks"), SideDoor(".git/hooks"));
        assert_eq!(r(".git/hooks/pre-commit"), SideDoor(".git/hooks"));
        assert_eq!(r(".git/commondir"), SideDoor(".git/commondir"));
        assert_eq!(r(".git/info/attributes"), SideDoor(".git/info"));
        assert_eq!(r(".git/modules/a/b/config"), SideDoor(".git/config"));
        assert_eq!(r(".git/modules/a/hooks/x"), SideDoor(".git/hooks"));
        assert_eq!(r(".git/worktrees/w/commondir"), SideDoor(".git/commondir"));
        assert_eq!(r(".git/worktrees/w/gitdir"), SideDoor(".git/commondir"));
        assert_eq!(r("vendor/lib/.git/config"), SideDoor(".git/config"));
        assert_eq!(r("x/.GIT/Hooks/y"), SideDoor(".git/hooks"));
        assert_eq!(r(".gitmodules"), SideDoor(".gitmodules"));
        assert_eq!(r("sub/.gitmodules"), SideDoor(".gitmodules"));
        assert_eq!(r(".git"), Repository);
        assert_eq!(r("src/.git"), Repository);
        assert_eq!(r("fixtures/bare/HEAD"), BareHead);
        // The rest of git's directory is git's own work: objects, refs,
        // the index, logs; and a HEAD inside .git is its own.
        for ordinary in [
            ".git/objects/ab/cdef",
            ".git/refs/heads/main",
            ".git/index",
            ".git/HEAD",
            ".git/logs/HEAD",
            ".git/packed-refs",
            ".git/COMMIT_EDITMSG",
            "src/config",
            "src/hooks/x",
            ".github/workflows/ci.yml",
            "",
        ] {
            assert_eq!(r(ordinary), None, "{ordinary}");
        }
    }

    #[test]
    fn agents_env_files_at_any_depth() {
        use BuiltInRule::*;
        let r = |p: &str| built_in_rule(p.split('/'));
        for env in [".env", "packages/web/.env", "a/b/c/.ENV"] {
            assert_eq!(r(env), AgentEnvFile, "{env}");
        }
        // Only the name agents read: not the variants applications read
        // beside it, not inside a `.env` directory (a virtual environment),
        // not git's own files.
        for other in [
            ".env.local",
            ".env.example",
            "app.env",
            ".envrc",
            "env",
            ".env/bin/activate",
            ".git/.env",
        ] {
            assert_eq!(r(other), None, "{other}");
        }
        let none = MachinePolicy::default();
        assert_eq!(none.built_in_guard(["src", ".env"]), Guard::AgentEnvFile);
        let lifted = parsed(r#"{"version": 1, "allowWriteProtected": [".env"]}"#).unwrap();
        assert_eq!(lifted.built_in_guard(["src", ".env"]), Guard::Open);
        assert_eq!(
            lifted.built_in_guard([".git", "config"]),
            Guard::GitSideDoor
        );
    }

    #[test]
    fn the_machine_policy_widens_the_write_scope_and_lifts_protections_by_name() {
        let p = parsed(
            r#"{"version": 1, "allowWrite": ["~/work", "/srv/data"],
                "allowWriteProtected": ["~/.ssh", ".git/hooks"]}"#,
        )
        .unwrap();
        let homes = [PathBuf::from("/home/a")];
        assert_eq!(
            p.allow_write_paths(&homes),
            vec![PathBuf::from("/home/a/work"), PathBuf::from("/srv/data")]
        );
        let home: Vec<&str> = p.protected_in_home().iter().map(|(r, _)| *r).collect();
        assert!(!home.contains(&".ssh") && home.contains(&".bashrc"));
        assert_eq!(p.built_in_guard([".git", "hooks", "x"]), Guard::Open);
        assert_eq!(p.built_in_guard([".git", "config"]), Guard::GitSideDoor);
        let none = MachinePolicy::default();
        assert_eq!(none.built_in_guard([".git", "hooks"]), Guard::GitSideDoor);
        assert_eq!(none.built_in_guard(["src", ".git"]), Guard::GitRepository);
        assert_eq!(none.built_in_guard(["a", "HEAD"]), Guard::BareRepository);
        assert_eq!(none.built_in_guard(["src", "main.rs"]), Guard::Open);
        for (bad, says) in [
            (
                r#"{"version": 1, "allowWriteProtected": ["~/.bashrc2"]}"#,
                "not a built-in",
            ),
            (
                r#"{"version": 1, "allowWrite": ["relative"]}"#,
                "allowWrite entry",
            ),
        ] {
            let (rule, message) = parsed(bad).expect_err(bad);
            assert_eq!(rule, Rule::Schema);
            assert!(message.contains(says), "{message}");
        }
    }

    #[test]
    fn extra_masks_resolve_under_every_home() {
        let m = parsed(r#"{"version": 1, "extraMasks": ["~/.acme", "/opt/acme"]}"#).unwrap();
        let homes = [PathBuf::from("/home/a"), PathBuf::from("/root")];
        assert_eq!(
            m.extra_mask_paths(&homes),
            vec![
                PathBuf::from("/home/a/.acme"),
                PathBuf::from("/root/.acme"),
                PathBuf::from("/opt/acme")
            ]
        );
        let ro = MachinePolicy::read_only_paths();
        assert_eq!(ro.last(), Some(&policy_path()));
        assert_eq!(ro.first().map(PathBuf::as_path), policy_path().parent());
    }

    #[test]
    fn a_missing_lockfile_is_the_empty_one_only_when_seal_is_required() {
        let t = tempfile::tempdir().unwrap();
        let fd = seal_core::fs::open_project(t.path()).unwrap();
        let none = MachinePolicy::default();
        assert!(matches!(
            lockfile_bytes(fd.as_fd(), &none),
            Err(StoreError::Missing)
        ));
        let required = MachinePolicy {
            require_seal: true,
            ..MachinePolicy::default()
        };
        let (bytes, implied) = lockfile_bytes(fd.as_fd(), &required).unwrap();
        assert!(implied);
        assert_eq!(
            Lockfile::parse(&bytes).unwrap(),
            Lockfile::empty(Policy::Block)
        );
        std::fs::write(t.path().join("seal.json"), b"{ broken").unwrap();
        let (bytes, implied) = lockfile_bytes(fd.as_fd(), &required).unwrap();
        assert!(!implied, "a present file is read, valid or not");
        assert!(Lockfile::parse(&bytes).is_err());
    }
}

//! `seal run`: an unmodified agent in a sealed namespace.
//!
//! [`prepare`] decides everything without changing anything (the lockfile, the
//! verification, who the command runs as, where it starts, and the plan of
//! the run's filesystem: [`plan`]); `--dry-run` prints that and stops.
//! [`execute`] then serves the sealed view, has the run's root built
//! ([`root`]) in namespaces the command cannot undo ([`namespace`]), runs the
//! command, merges its state back ([`merge`]) and returns its exit status.

pub mod filter;
pub mod merge;
pub mod mountinfo;
pub mod namespace;
pub mod plan;
pub mod root;
pub mod scope;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::unistd::{Gid, Uid, User};

use namespace::{Identity, Launch, Report};
use plan::{Plan, RunsAs, UserBind};
use root::BuildError;

use crate::mount::{MountError, MountRequest};
use seal_core::discovery::{DiscoveryError, Listings};
use seal_core::fs::EntryKind;
use seal_core::lockfile::{Lockfile, LockfileError};
use seal_core::paths::BundleKey;
use seal_core::store::StoreError;
use seal_core::verify::{ProjectReport, verify_project, verify_project_by};
use seal_gate::links::LinkRule;
use seal_gate::{Gate, Op, Place, RootState, Survey, ViewPath};

/// Why `seal run` stops before (or instead of) running the command.
#[derive(Debug)]
pub enum RunError {
    Lockfile(StoreError),
    Invalid(LockfileError),
    Discovery(DiscoveryError),
    Project(io::Error),
    User(String),
    /// A project-external location cannot be masked: the outcome is Blocked.
    MaskImpossible {
        location: PathBuf,
        reason: String,
    },
    /// An extra bind was refused (it would expose the project or an
    /// extension location).
    Bind(String),
    /// The machine policy file was refused.
    Policy(seal_gate::policy::PolicyError),
    Namespace(io::Error),
    Unprivileged(String),
    Mount(MountError),
    Command(io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |p: &Path| seal_core::escape::escaped_os(p.as_os_str());
        match self {
            RunError::Lockfile(e) => write!(f, "{e} (nothing was run)"),
            RunError::Invalid(e) => {
                write!(f, "{e}\nnothing was run: an invalid lockfile fails closed")
            }
            RunError::Discovery(e) => write!(f, "{e} (nothing was run)"),
            RunError::Project(e) => write!(f, "cannot resolve the project directory: {e}"),
            RunError::User(msg) => f.write_str(msg),
            RunError::MaskImpossible { location, reason } => write!(
                f,
                "cannot mask the project-external location {}: {reason}\nResult: Blocked (project-external \
                 extensions cannot be suppressed); the command was not started",
                shown(location)
            ),
            RunError::Bind(msg) => write!(f, "{msg} (nothing was run)"),
            RunError::Policy(e) => write!(f, "{e} (nothing was run)"),
            RunError::Namespace(e) => write!(f, "cannot create the sealed namespace: {e}"),
            RunError::Unprivileged(msg) => f.write_str(msg),
            RunError::Mount(e) => write!(f, "{e}"),
            RunError::Command(e) => write!(f, "cannot start the command: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What the user asked for.
pub struct RunRequest {
    pub project_dir: PathBuf,
    pub project: OwnedFd,
    pub command: Vec<OsString>,
    pub audit_log: Option<PathBuf>,
    pub user: Option<String>,
    /// Extra host paths bound into the run: (source, destination, writable).
    pub binds: Vec<(PathBuf, PathBuf, bool)>,
    /// `--allow-write PATH`: places added to the write scope.
    pub allow_write: Vec<PathBuf>,
    /// Serve the writable view (the default; `--read-only` turns it off).
    pub writable: bool,
    /// `--rehash-every-open`.
    pub rehash_every_open: bool,
    /// `--kernel-opens` (with `--read-only`): the kernel opens files itself.
    pub kernel_opens: bool,
    /// `--dry-run`: every bundle is verified for the report, and no view is
    /// made.
    pub dry_run: bool,
}

/// How many file bytes `seal run` hashes before its command starts (about
/// 30 ms on two cores): the bundles verified within it are in the summary,
/// and their verifications are the view's, reused by the command's first
/// opens. A bundle past it is verified at its first lookup, like any other
/// in the view; `seal run --dry-run` and `seal verify` verify them all.
pub const AHEAD_BYTES: u64 = 32 << 20;

/// Everything decided before anything changes.
pub struct Prepared {
    pub request: RunRequest,
    pub project_path: PathBuf,
    pub lockfile: Lockfile,
    /// `seal.json` is missing and the machine policy requires Seal: the
    /// lockfile is the empty one standing in for it.
    pub implied: bool,
    pub machine: &'static seal_gate::policy::MachinePolicy,
    /// The verification of the summary: of every bundle for a dry run; for
    /// a run, of those verified within [`AHEAD_BYTES`] by the view's gate.
    pub report: ProjectReport,
    /// The recorded bundles left out of `report`, verified at their first
    /// lookup.
    pub pending: Vec<BundleKey>,
    /// The view's gate, holding the verifications of `report` (none for a
    /// dry run).
    pub gate: Option<Arc<Gate>>,
    pub plan: Plan,
    pub identity: Identity,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

impl Prepared {
    /// The first location that cannot be shown as planned, if any.
    pub fn impossible_mask(&self) -> Option<(&Path, &str)> {
        self.plan.impossible()
    }
}

/// Reads and verifies the project and plans the namespace.
pub fn prepare(request: RunRequest) -> Result<Prepared, RunError> {
    let machine = seal_gate::policy::machine().map_err(RunError::Policy)?;
    let (bytes, implied) = seal_gate::policy::lockfile_bytes(request.project.as_fd(), machine)
        .map_err(RunError::Lockfile)?;
    let lockfile = Lockfile::parse(&bytes).map_err(RunError::Invalid)?;
    let mut listings = Listings::new(request.project.as_fd());
    let project_path = std::fs::canonicalize(&request.project_dir).map_err(RunError::Project)?;
    let mut target = target_user(request.user.as_deref(), &project_path)?;
    target.inputs.binds = user_binds(&request.binds)?;
    for path in &request.allow_write {
        let place = allowed_write(path, &project_path)?;
        target
            .inputs
            .allow_write
            .push((place, "--allow-write".to_string()));
    }
    // The machine policy holds for the command too: its file and directory
    // are shown read-only (the command cannot change the rules it runs
    // under), and its extra masks are masked like the built-in ones.
    // (The first that exists: the directory, which holds the file.)
    let policy_paths = seal_gate::policy::MachinePolicy::read_only_paths();
    if let Some((path, source)) = policy_paths
        .into_iter()
        .find_map(|p| std::fs::canonicalize(&p).ok().map(|c| (p, c)))
    {
        target.inputs.binds.push(UserBind {
            source,
            dest: path,
            writable: false,
        });
    }
    // The audit sinks cannot be written, renamed or removed from inside
    // (each is a read-only place; a directory holding one is a skeleton,
    // which cannot be moved either). One inside the project would be the
    // command's to change: refused.
    let sinks: Vec<PathBuf> = request
        .audit_log
        .iter()
        .chain(machine.audit.file.iter())
        .map(|p| plan::locate(&crate::mount::absolute(p)))
        .collect();
    for sink in &sinks {
        if sink.starts_with(&project_path) {
            return Err(RunError::Bind(format!(
                "the audit log {} is inside the project, where the command could change it; \
                 name one outside",
                seal_core::escape::escaped_os(sink.as_os_str())
            )));
        }
    }
    target.inputs.sinks = sinks;
    let mut plan = plan::plan(&target.inputs).map_err(RunError::Bind)?;
    plan.scratch =
        seal_gate::assess::scratch_dirs(&mut listings, &lockfile, &machine.extra_surfaces)
            .into_iter()
            .map(|raw| raw.0.iter().fold(project_path.clone(), |p, n| p.join(n)))
            .collect();
    let masked: Vec<PathBuf> = plan.masked_scratch().map(Path::to_path_buf).collect();
    plan.scratch.extend(masked);
    // seal runs from the project root (or -C DIR): the command starts there,
    // inside the view.
    let cwd = project_path.clone();
    let Summary {
        report,
        pending,
        gate,
    } = summary(&request, &lockfile, &project_path)?;
    Ok(Prepared {
        request,
        project_path,
        lockfile,
        implied,
        machine,
        report,
        pending,
        gate,
        plan,
        identity: target.identity,
        env: target.env,
        cwd,
    })
}

/// The summary's verification and, for a run, the view's gate that made it.
struct Summary {
    report: ProjectReport,
    pending: Vec<BundleKey>,
    gate: Option<Arc<Gate>>,
}

/// The summary's verification: for a dry run, every bundle, hashed here;
/// for a run, by the view's gate (returned) within [`AHEAD_BYTES`], so that
/// the command's first opens reuse what the summary verified, with the
/// recorded bundles left to their first lookup.
fn summary(
    request: &RunRequest,
    lockfile: &Lockfile,
    project_path: &Path,
) -> Result<Summary, RunError> {
    let mut listings = Listings::new(request.project.as_fd());
    if request.dry_run {
        let report = verify_project(&mut listings, lockfile, None).map_err(RunError::Discovery)?;
        return Ok(Summary {
            report,
            pending: Vec::new(),
            gate: None,
        });
    }
    let project = request.project.try_clone().map_err(RunError::Project)?;
    let gate =
        crate::mount::prepare_gate(project, &mount_request(request, project_path), project_path)
            .map_err(RunError::Mount)?;
    let mut ahead = gate.verify_ahead(AHEAD_BYTES);
    let (report, pending) = verify_project_by(&mut listings, lockfile, |key| ahead.remove(key))
        .map_err(RunError::Discovery)?;
    Ok(Summary {
        report,
        pending,
        gate: Some(gate),
    })
}

/// What the view of `request` is asked to be.
fn mount_request(request: &RunRequest, project_path: &Path) -> MountRequest {
    MountRequest {
        project_dir: request.project_dir.clone(),
        mountpoint: project_path.to_path_buf(),
        audit_log: request.audit_log.clone(),
        allow_other: true,
        writable: request.writable,
        nonempty: true,
        noexec: false,
        rehash_every_open: request.rehash_every_open,
        kernel_opens: request.kernel_opens && !request.writable,
    }
}

/// The command's user, environment, and the inputs of its mask plan.
pub struct Target {
    pub identity: Identity,
    pub env: Vec<(OsString, OsString)>,
    pub inputs: plan::Inputs,
}

/// An `--allow-write` place: an existing path (used canonical), outside the
/// project (which the sealed view decides) and the system directories
/// (read-only in every run).
fn allowed_write(path: &Path, project: &Path) -> Result<PathBuf, RunError> {
    let shown = seal_core::escape::escaped_os(path.as_os_str());
    let place = std::fs::canonicalize(path)
        .map_err(|e| RunError::Bind(format!("cannot allow writing {shown}: {e}")))?;
    if place.starts_with(project) {
        return Err(RunError::Bind(format!(
            "cannot allow writing {shown}: it is inside the project, which the sealed view decides"
        )));
    }
    if place == Path::new("/") || plan::read_only_system(&place) {
        return Err(RunError::Bind(format!(
            "cannot allow writing {shown}: the root and system directories are read-only in \
             every run"
        )));
    }
    Ok(place)
}

/// Checks the extra binds: the source must exist (it is used canonical), the
/// destination is taken with its existing parents' symlinks resolved.
fn user_binds(binds: &[(PathBuf, PathBuf, bool)]) -> Result<Vec<UserBind>, RunError> {
    binds
        .iter()
        .map(|(source, dest, writable)| {
            let shown = |p: &Path| seal_core::escape::escaped_os(p.as_os_str());
            let source = std::fs::canonicalize(source)
                .map_err(|e| RunError::Bind(format!("cannot bind {}: {e}", shown(source))))?;
            if !dest.is_absolute() {
                return Err(RunError::Bind(format!(
                    "the destination {} must be an absolute path",
                    shown(dest)
                )));
            }
            Ok(UserBind {
                source,
                dest: plan::locate(dest),
                writable: *writable,
            })
        })
        .collect()
}

/// Works out who the command runs as and what the plan is based on.
pub fn target_user(user: Option<&str>, project_path: &Path) -> Result<Target, RunError> {
    let (identity, home, user_name) = identity_for(user)?;
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    if identity.switch {
        set_env(&mut env, "HOME", home.clone().map(PathBuf::into_os_string));
        set_env(&mut env, "USER", user_name.clone().map(OsString::from));
        set_env(&mut env, "LOGNAME", user_name.map(OsString::from));
    }
    // The sealed view is a mount of its own at the project's path, so git,
    // walking up from the project to a repository root above it (a package
    // of a monorepo), would stop at the view's edge ("Stopping at filesystem
    // boundary") where on the host there is none: let it cross, as it would
    // there. A value the caller set stays.
    if !env
        .iter()
        .any(|(k, _)| k == "GIT_DISCOVERY_ACROSS_FILESYSTEM")
    {
        set_env(
            &mut env,
            "GIT_DISCOVERY_ACROSS_FILESYSTEM",
            Some(OsString::from("1")),
        );
    }
    // Both the target's home and the caller's $HOME: an agent may use either.
    let mut homes: Vec<PathBuf> = home.into_iter().collect();
    if let Some(h) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
    {
        homes.push(h);
    }
    let mut canonical: Vec<PathBuf> = Vec::new();
    for h in homes {
        let h = std::fs::canonicalize(&h).unwrap_or(h);
        if !canonical.contains(&h) {
            canonical.push(h);
        }
    }
    let groups: Vec<u32> = if identity.switch {
        identity.groups.iter().map(|g| g.as_raw()).collect()
    } else {
        nix::unistd::getgroups()
            .unwrap_or_default()
            .iter()
            .map(|g| g.as_raw())
            .collect()
    };
    // A policy that cannot be read is reported by whoever runs: here it adds
    // nothing (and lifts no protection).
    let machine = seal_gate::policy::machine().ok();
    let default_policy = seal_gate::policy::MachinePolicy::default();
    let machine = machine.unwrap_or(&default_policy);
    let extra_masks = machine.extra_mask_paths(&canonical);
    let allow_write = machine
        .allow_write_paths(&canonical)
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .map(|p| (p, "machine policy (allowWrite)".to_string()))
        .collect();
    let inputs = plan::Inputs {
        homes: canonical,
        env: env
            .iter()
            .filter_map(|(k, v)| k.to_str().map(|k| (k.to_string(), v.clone())))
            .collect::<BTreeMap<_, _>>(),
        project: project_path.to_path_buf(),
        who: RunsAs {
            uid: identity.uid.as_raw(),
            gid: identity.gid.as_raw(),
            groups,
        },
        binds: Vec::new(),
        mounts: mountinfo::read().map_err(RunError::Project)?,
        extra_masks,
        allow_write,
        protected_in_home: machine.protected_in_home(),
        sinks: Vec::new(),
    };
    // After the plan's inputs: held to their defaults, they mask nothing
    // more than the table's default rows do.
    hold_variables(&mut env);
    Ok(Target {
        identity,
        env,
        inputs,
    })
}

/// Gives each of [`HELD_VARIABLES`] the caller left unset (or empty) the
/// agent's own default, so that no `.env` an agent reads as it starts can
/// set it, and each held [`Held::Always`] its value whatever the caller set
/// (docs/SECURITY.md).
fn hold_variables(env: &mut Vec<(OsString, OsString)>) {
    use seal_gate::surfaces::{HELD_VARIABLES, Held};
    let home = env
        .iter()
        .find(|(k, v)| k == "HOME" && !v.is_empty())
        .map(|(_, v)| PathBuf::from(v));
    for (name, held) in HELD_VARIABLES {
        let always = matches!(held, Held::Always(_));
        if !always && env.iter().any(|(k, v)| k == name && !v.is_empty()) {
            continue;
        }
        let value = match held {
            Held::Value(v) | Held::Always(v) => Some(OsString::from(v)),
            Held::Home => home.clone().map(PathBuf::into_os_string),
            Held::InHome(dir) => home.as_ref().map(|h| h.join(dir).into_os_string()),
        };
        set_env(env, name, value);
    }
}

fn set_env(env: &mut Vec<(OsString, OsString)>, key: &str, value: Option<OsString>) {
    let Some(value) = value else { return };
    env.retain(|(k, _)| k != key);
    env.push((OsString::from(key), value));
}

/// Who the command runs as: `--user`, else the user behind `sudo`, else the
/// caller. Returns the identity, the home directory and the user name.
fn identity_for(
    user: Option<&str>,
) -> Result<(Identity, Option<PathBuf>, Option<String>), RunError> {
    let root = Uid::effective().is_root();
    let lookup_err =
        |e: nix::errno::Errno| RunError::User(format!("cannot read the user database: {e}"));
    let target = match user {
        Some(spec) => {
            if !root {
                return Err(RunError::User(
                    "--user needs seal run to be started as root".into(),
                ));
            }
            let found = match spec.parse::<u32>() {
                Ok(uid) => User::from_uid(Uid::from_raw(uid)).map_err(lookup_err)?,
                Err(_) => User::from_name(spec).map_err(lookup_err)?,
            };
            Some(found.ok_or_else(|| {
                RunError::User(format!("no such user: {}", seal_core::escape::quoted(spec)))
            })?)
        }
        None if root => match std::env::var("SUDO_UID")
            .ok()
            .and_then(|u| u.parse::<u32>().ok())
        {
            Some(uid) if uid != 0 => {
                let gid = std::env::var("SUDO_GID")
                    .ok()
                    .and_then(|g| g.parse::<u32>().ok());
                let found = User::from_uid(Uid::from_raw(uid)).map_err(lookup_err)?;
                match found {
                    Some(mut u) => {
                        if let Some(g) = gid {
                            u.gid = Gid::from_raw(g);
                        }
                        Some(u)
                    }
                    None => {
                        return Ok((
                            Identity {
                                uid: Uid::from_raw(uid),
                                gid: Gid::from_raw(gid.unwrap_or(uid)),
                                groups: vec![Gid::from_raw(gid.unwrap_or(uid))],
                                switch: true,
                            },
                            None,
                            None,
                        ));
                    }
                }
            }
            _ => None,
        },
        None => None,
    };
    match target {
        Some(u) => {
            let name = std::ffi::CString::new(u.name.clone())
                .map_err(|_| RunError::User("bad user name".into()))?;
            let groups = nix::unistd::getgrouplist(&name, u.gid).unwrap_or_else(|_| vec![u.gid]);
            Ok((
                Identity {
                    uid: u.uid,
                    gid: u.gid,
                    groups,
                    switch: u.uid != Uid::current() || u.gid != Gid::current(),
                },
                Some(u.dir),
                Some(u.name),
            ))
        }
        None => Ok((
            Identity {
                uid: Uid::current(),
                gid: Gid::current(),
                groups: Vec::new(),
                switch: false,
            },
            None,
            None,
        )),
    }
}

/// Serves the view, has the run's root built, runs the command, merges its
/// state back; returns its exit status (128+N when a signal ended it).
pub fn execute(prepared: Prepared) -> Result<i32, RunError> {
    if let Some((location, reason)) = prepared.impossible_mask() {
        return Err(RunError::MaskImpossible {
            location: location.to_path_buf(),
            reason: reason.to_string(),
        });
    }
    let unprivileged = !Uid::effective().is_root();
    if unprivileged {
        crate::mount::check_fuse_device().map_err(|e| {
            RunError::Unprivileged(format!(
                "{e}\nseal run without root needs user namespaces and a /dev/fuse this user may open; \
                 run it as root (sudo seal run ...) or make /dev/fuse usable (mode 0666, as most \
                 distributions ship it)"
            ))
        })?;
    }
    let launch = Launch::new(
        &prepared.request.command,
        &prepared.env,
        &prepared.cwd,
        prepared.identity.clone(),
    )
    .map_err(RunError::Command)?;
    let request = mount_request(&prepared.request, &prepared.project_path);
    let gate = match &prepared.gate {
        Some(gate) => Arc::clone(gate),
        None => {
            let project = prepared
                .request
                .project
                .try_clone()
                .map_err(RunError::Project)?;
            crate::mount::prepare_gate(project, &request, &prepared.project_path)
                .map_err(RunError::Mount)?
        }
    };
    // The view's gate, kept here past the mount for its audit log and the
    // warming.
    let view_gate = Arc::clone(&gate);
    let audit = view_gate.audit();
    if let Some(audit) = audit {
        audit.set_run(
            prepared.identity.uid.as_raw(),
            prepared
                .request
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        );
        audit.lifecycle(
            seal_gate::audit::Event::RunStart,
            prepared.report.outcome.as_str(),
            None,
        );
    }
    namespace::enter_namespaces(unprivileged).map_err(|e| {
        if unprivileged {
            RunError::Unprivileged(format!(
                "cannot create a user namespace ({e}); this kernel does not let unprivileged users \
                 create one. Run seal run as root instead."
            ))
        } else {
            RunError::Namespace(e)
        }
    })?;
    // The init is cloned while this process is single-threaded; it waits.
    let init = namespace::spawn_init(&prepared.plan, &launch).map_err(RunError::Namespace)?;
    let give_up = |init: namespace::Init, e: RunError| {
        let pid = init.pid;
        // Closing the socket makes the init exit without running anything.
        drop(init);
        namespace::wait_plain(pid);
        Err(e)
    };
    let view = crate::mount::mount(
        gate,
        &prepared.project_path,
        true,
        prepared.request.writable,
        request.kernel_opens,
    )
    .and_then(|session| session.spawn().map_err(MountError::Mount));
    let view = match view {
        Ok(v) => v,
        Err(e) => return give_up(init, RunError::Mount(e)),
    };
    // Listed in the background from now on, while the root is built and the
    // command starts (`mount/warm.rs`); stopped before the view goes.
    let warming =
        match crate::mount::warm::warm_entries(&prepared.project_path, Arc::clone(&view_gate)) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::debug!("the view's entries are not warmed: {e}");
                None
            }
        };
    let merge_dirs = prepared.plan.merge_dirs();
    // The view's device (asked now that it is served), so that the init can
    // check that what it binds at the project's path is the view.
    let view_dev = match nix::sys::stat::stat(&prepared.project_path) {
        Ok(st) => st.st_dev,
        Err(e) => {
            return give_up(
                init,
                RunError::Namespace(io::Error::from_raw_os_error(e as i32)),
            );
        }
    };
    let report = init.go(view_dev).and_then(|()| init.report());
    let fds = match report {
        Ok(Report::Ready(fds)) => fds,
        Ok(Report::Failed(BuildError::At { location, reason })) => {
            return give_up(init, RunError::MaskImpossible { location, reason });
        }
        Ok(Report::Failed(BuildError::Setup(reason))) => {
            return give_up(init, RunError::Namespace(io::Error::other(reason)));
        }
        Err(e) => return give_up(init, RunError::Namespace(e)),
    };
    if fds.len() != merge_dirs.len() {
        return give_up(
            init,
            RunError::Namespace(io::Error::other("the run's root was not built as planned")),
        );
    }
    // What each skeleton held before the command could write to it.
    let mut dirs = Vec::new();
    for (dir, fd) in merge_dirs.into_iter().zip(fds) {
        let start = match root::names(&fd) {
            Ok(n) => n.into_iter().collect(),
            Err(e) => return give_up(init, RunError::Namespace(e)),
        };
        dirs.push(merge::MergeDir { dir, fd, start });
    }
    if let Err(e) = init.start() {
        return give_up(init, RunError::Command(e));
    }
    let code = namespace::supervise(init.pid);
    if let Some(audit) = audit {
        audit.lifecycle(
            seal_gate::audit::Event::RunEnd,
            "the command ended",
            Some(code),
        );
    }
    drop(warming);
    drop(view);
    let outcome = merge::merge_back(&prepared.plan, dirs, &prepared.identity);
    for line in &outcome.done {
        tracing::info!("{line}");
    }
    // Written, not printed: a closed stderr loses them, no more (see
    // `cli::run`).
    let mut stderr = std::io::stderr();
    for line in outcome
        .problems
        .iter()
        .chain(&dropped_line(&outcome.dropped))
    {
        let _ = writeln!(stderr, "seal: run: {line}");
    }
    Ok(code)
}

/// The one line saying which new entries outside the write scope were left
/// behind with the run (at most eight named).
fn dropped_line(dropped: &[PathBuf]) -> Option<String> {
    if dropped.is_empty() {
        return None;
    }
    let mut names: Vec<String> = dropped
        .iter()
        .take(8)
        .map(|p| seal_core::escape::escaped_os(p.as_os_str()))
        .collect();
    if dropped.len() > 8 {
        names.push(format!("and {} more", dropped.len() - 8));
    }
    Some(format!(
        "not kept (outside the write scope, they lived in the run's memory): {}",
        names.join(", ")
    ))
}

/// One line of `--dry-run`: a bundle or artifact and whether the command
/// would see it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SeenEntry {
    pub path: String,
    pub kind: &'static str,
    pub state: String,
    pub visible: bool,
    pub why: String,
}

/// What the command would see: every bundle of the verification set and
/// every unverified artifact on the built-in surfaces, each decided by the
/// gate's own question on the states this verification found (nothing is
/// hashed again), under the policy in force, as the view decides.
pub fn what_it_would_see(prepared: &Prepared) -> Result<Vec<SeenEntry>, RunError> {
    let project = &prepared.project_path;
    let gate = Gate::for_explaining(
        prepared.request.project.as_fd(),
        &prepared.lockfile,
        prepared.machine,
        prepared.implied,
        LinkRule::new(project, std::slice::from_ref(project)),
    )
    .map_err(RunError::Project)?;
    let survey = Survey::of(&prepared.report);
    let round = gate.explaining(Some(&survey));
    let seen = |path: String, kind: EntryKind, what: &'static str, state: RootState| {
        let root = ViewPath::from_names(path.trim_start_matches("./").split('/').map(OsStr::new));
        let verdict = round.ask(&root, Op::lookup(kind), seal_gate::Who::this_process());
        let why = match &verdict.place {
            Place::Artifact { rule, .. } => format!(
                "{}; no sealed root covers it ({})",
                rule.describe(),
                verdict.reason.describe()
            ),
            _ => verdict.reason.describe().to_string(),
        };
        SeenEntry {
            path,
            kind: what,
            state: state.as_str().to_string(),
            visible: verdict.yes,
            why,
        }
    };
    let mut out: Vec<SeenEntry> = prepared
        .report
        .bundles
        .iter()
        .map(|b| {
            let state = RootState::Bundle(b.state);
            seen(b.name.as_display(), EntryKind::Dir, "bundle", state)
        })
        .collect();
    let mut listings = Listings::new(prepared.request.project.as_fd());
    let extra = &prepared.machine.extra_surfaces;
    for a in seal_gate::assess::uncovered_artifacts(&mut listings, &prepared.lockfile, extra) {
        out.push(seen(a.path.display(), a.kind, "artifact", a.state));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

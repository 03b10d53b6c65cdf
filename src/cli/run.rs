//! `seal run [--dry-run [--json]] [--ro-bind SRC DEST] [--bind SRC DEST] -- CMD`:
//! verify, then run CMD in a sealed namespace (see [`crate::run`]), or show
//! what it would see.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use super::output::verify_human;
use super::verify::{Decided, apply_machine_policy};
use super::{CliError, Context, Done};
use crate::run::plan::{Placement, Planned, State};
use crate::run::{Prepared, RunRequest, SeenEntry, execute, prepare, what_it_would_see};
use seal_core::escape::{escaped, escaped_os};
use seal_core::verify::Outcome;

pub struct RunArgs {
    pub audit_log: Option<PathBuf>,
    pub user: Option<String>,
    pub read_only: bool,
    pub rehash_every_open: bool,
    /// `--kernel-opens` (clap lets it through only with `--read-only`).
    pub kernel_opens: bool,
    pub dry_run: bool,
    pub json: bool,
    /// (source, destination, writable)
    pub binds: Vec<(PathBuf, PathBuf, bool)>,
    /// `--allow-write PATH`
    pub allow_write: Vec<PathBuf>,
    pub command: Vec<OsString>,
}

/// `SRC DEST` pairs of a repeated two-value option.
pub fn pairs(values: &[PathBuf], writable: bool) -> Vec<(PathBuf, PathBuf, bool)> {
    values
        .chunks_exact(2)
        .map(|c| (c[0].clone(), c[1].clone(), writable))
        .collect()
}

pub fn run(ctx: Context, args: RunArgs) -> Result<Done, CliError> {
    if args.command.is_empty() && !args.dry_run {
        return Err(CliError::Refused(
            "no command given: seal run [OPTIONS] -- CMD [ARGS...]".into(),
        ));
    }
    // The machine policy's readOnly and rehashEveryOpen hold whatever the
    // flags say (the gate enforces both again when it is built).
    let machine = super::machine_policy()?;
    // A sink that cannot be opened stops the run: said first, before the
    // verification summary (the run opens them again for the view).
    if !args.dry_run {
        crate::mount::open_audit_sinks(args.audit_log.as_deref(), machine)
            .map_err(CliError::Mount)?;
    }
    let mut prepared = prepare(RunRequest {
        project_dir: ctx.dir,
        project: ctx.project,
        command: args.command,
        audit_log: args.audit_log,
        user: args.user,
        binds: args.binds,
        allow_write: args.allow_write,
        writable: !args.read_only && !machine.read_only,
        rehash_every_open: args.rehash_every_open || machine.rehash_every_open,
        kernel_opens: args.kernel_opens && args.read_only,
        dry_run: args.dry_run,
    })
    .map_err(CliError::Run)?;
    // Strictest wins: the summary says the policy in force (what the dry
    // run shows, the gate decides under it).
    let implied = prepared.implied;
    let decided = apply_machine_policy(&mut prepared.report, machine, &prepared.lockfile, implied);
    if args.dry_run {
        return dry_run(&prepared, args.json, &decided);
    }
    let mut said = format!(
        "{}{}",
        verify_human(&prepared.report, false),
        decided.human_line()
    );
    let mode = format!(
        "seal: run: the project is the sealed view ({})",
        crate::mount::describe_mode(prepared.request.writable, prepared.request.kernel_opens)
    );
    let lines = [
        pending_line(&prepared),
        blocked_meaning(&prepared),
        Some(mode),
        unknown_agent_line(&prepared.request.command),
        root_sandbox_line(&prepared.request.command, prepared.identity.uid.is_root()),
    ];
    for line in lines.into_iter().flatten() {
        said.push_str(&line);
        said.push('\n');
    }
    // A closed stderr (`seal run ... 2>&1 | head`) loses these lines and
    // nothing else: the command still starts.
    say!("{said}");
    let code = execute(prepared).map_err(CliError::Run)?;
    Ok(Done::Exit(code.clamp(0, 255) as u8))
}

/// The line saying how many bundles the summary leaves to their first open
/// (none when it covers them all).
fn pending_line(prepared: &Prepared) -> Option<String> {
    let (n, bundles, are) = match prepared.pending.len() {
        0 => return None,
        1 => (1, "bundle", "is"),
        n => (n, "bundles", "are"),
    };
    Some(format!(
        "seal: run: {n} more {bundles} {are} verified when the command first opens them (the \
         summary stops after {} MiB of hashing; seal verify checks every bundle now)",
        crate::run::AHEAD_BYTES >> 20
    ))
}

/// The file name of the program a command starts, as the agent tables
/// name agents (`/opt/bin/codex` is `codex`).
fn program_name(command: &[OsString]) -> Option<String> {
    let name = std::path::Path::new(command.first()?).file_name()?;
    Some(name.to_string_lossy().into_owned())
}

/// One line when the command is not an agent of the tables: it runs sealed
/// all the same, but seal cannot know where else it loads from.
fn unknown_agent_line(command: &[OsString]) -> Option<String> {
    let name = program_name(command)?;
    if seal_gate::surfaces::agent_of_command(&name).is_some() {
        return None;
    }
    Some(format!(
        "seal: run: {} is not an agent seal knows (docs/SURFACES.md): the locations of the agents \
         it knows are sealed, anything it loads from elsewhere is not",
        escaped(&name)
    ))
}

/// One line when the command is an agent whose own sandbox cannot start in a
/// run as root: it would map root into a user namespace of its own, which
/// needs `CAP_SETFCAP`, and the command has no capability (with it, the
/// command could give any root-owned file it writes capabilities that hold
/// outside the run). A run as a user (`--user`) keeps such a sandbox working.
fn root_sandbox_line(command: &[OsString], as_root: bool) -> Option<String> {
    let name = program_name(command)?;
    if !as_root
        || !seal_gate::surfaces::AGENTS_SANDBOXED_IN_A_USER_NAMESPACE.contains(&name.as_str())
    {
        return None;
    }
    let agent = seal_gate::surfaces::agent_of_command(&name)?;
    Some(format!(
        "seal: run: {agent} runs each command in a sandbox of its own that maps root into a new \
         user namespace; a command run as root here has no capability, and Linux allows that \
         mapping only with CAP_SETFCAP, so each command it runs fails (\"bwrap: setting up uid \
         map: Operation not permitted\"). Run as a user (seal run --user USER), or make this \
         run its only sandbox ({name} --sandbox danger-full-access)"
    ))
}

/// What "Blocked" means for this run, in the words both the real run and
/// the dry run print (none when nothing is blocked). Bundles that are not
/// verified only disappear from the view: the command still starts, so the
/// run's exit code is the command's (0 for a dry run). Only a location that
/// cannot be masked stops the command from starting (exit 1).
fn blocked_meaning(prepared: &Prepared) -> Option<String> {
    use seal_core::verify::BundleState;
    if let Some((location, reason)) = prepared.impossible_mask() {
        return Some(format!(
            "Blocked for this run: the project-external location {} cannot be masked ({reason}), \
             so the command does not start (exit 1)",
            escaped_os(location.as_os_str())
        ));
    }
    if prepared.report.outcome != Outcome::Blocked {
        return None;
    }
    let hidden = prepared
        .report
        .bundles
        .iter()
        .filter(|b| matches!(b.state, BundleState::Unverified | BundleState::Mismatch))
        .count();
    let (bundles, are) = if hidden == 1 {
        ("bundle", "is")
    } else {
        ("bundles", "are")
    };
    Some(format!(
        "Blocked for this run: {hidden} {bundles} that {are} not verified {are} hidden from the \
         command; it starts and runs with the rest of the project"
    ))
}

fn dry_run(prepared: &Prepared, json: bool, decided: &Decided) -> Result<Done, CliError> {
    let seen = what_it_would_see(prepared).map_err(CliError::Run)?;
    // The real run's exit code: only an impossible mask keeps the command
    // from starting.
    let impossible = prepared.impossible_mask().is_some();
    let blocked = impossible;
    if json {
        let mut doc = serde_json::json!({
            "status": if impossible { "Blocked" } else { prepared.report.outcome.as_str() },
            "policy": prepared.report.policy.as_str(),
            "entries": seen,
            "masks": prepared.plan.planned.iter().map(location_json).collect::<Vec<_>>(),
            "writeScope": write_scope_json(prepared),
        });
        for (key, value) in decided.json_keys() {
            doc[key] = serde_json::Value::from(value);
        }
        let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
        out.push('\n');
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    } else {
        say!("{}{}", dry_run_text(prepared, &seen), decided.human_line());
    }
    Ok(if blocked {
        Done::Blocked
    } else {
        Done::Success
    })
}

/// Where the command may write: the project (through the view), each
/// writable place, and the protected places inside them.
fn write_scope_json(prepared: &Prepared) -> serde_json::Value {
    let scope = &prepared.plan.scope;
    serde_json::json!({
        "project": prepared.request.writable,
        "writable": scope.writable.iter().map(|w| serde_json::json!({
            "path": w.path.to_string_lossy(),
            "why": w.why,
        })).collect::<Vec<_>>(),
        "protected": scope.protected.iter().map(|p| p.path.to_string_lossy()).collect::<Vec<_>>(),
        "scratch": prepared.plan.scratch.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
    })
}

/// The dry run's lines on the write scope.
fn write_scope_text(prepared: &Prepared, out: &mut String) {
    use std::fmt::Write as _;
    let scope = &prepared.plan.scope;
    out.push_str("\nWhere the command may write (everything else is read-only):\n");
    let _ = writeln!(
        out,
        "  {} {}  [the project, through the sealed view{}]",
        if prepared.request.writable {
            "writable"
        } else {
            "read-only"
        },
        escaped_os(prepared.project_path.as_os_str()),
        if prepared.request.writable {
            "; never seal.json, sealed roots, agent surfaces or git's side doors"
        } else {
            ""
        }
    );
    for w in &scope.writable {
        if w.path.starts_with(&prepared.project_path) {
            continue;
        }
        let _ = writeln!(
            out,
            "  writable {}  [{}]",
            escaped_os(w.path.as_os_str()),
            escaped(&w.why)
        );
    }
    for p in &scope.protected {
        let _ = writeln!(
            out,
            "  never    {}  [{}]",
            escaped_os(p.path.as_os_str()),
            escaped(&p.why)
        );
    }
    for p in &prepared.plan.scratch {
        let _ = writeln!(
            out,
            "  scratch  {}  [the agent's housekeeping lives in memory for the run; \
             its extensions stay the view's, read-only]",
            escaped_os(p.as_os_str())
        );
    }
}

/// The state name, the kind (dir/file) and the extra fields of one location.
fn location_json(p: &Planned) -> serde_json::Value {
    let (state, kind, extra) = match &p.state {
        State::Placed(pl) => {
            let kind = if pl.is_dir() { "dir" } else { "file" };
            match pl {
                Placement::EmptyDir | Placement::EmptyFile => ("mask", Some(kind), None),
                Placement::Filtered(f) => (
                    "filter",
                    Some(kind),
                    Some(serde_json::json!({
                        "rule": f.rule.id,
                        "removed": f.filtered.removed,
                        "unparsed": f.filtered.unparsed,
                        "writable": f.rule.writable,
                        "existed": f.original.is_some(),
                    })),
                ),
                Placement::View => ("view", Some(kind), None),
                Placement::Cover => ("cover", Some(kind), None),
                Placement::Bind { source, writable } => (
                    "bind",
                    Some(kind),
                    Some(serde_json::json!({
                        "source": source.to_string_lossy(),
                        "writable": writable,
                    })),
                ),
                Placement::Proc => ("proc", Some(kind), None),
                Placement::Private { .. } => ("private", Some(kind), None),
                Placement::Writable { source } => (
                    "writable",
                    Some(kind),
                    Some(serde_json::json!({ "source": source.to_string_lossy() })),
                ),
                Placement::ReadOnly { source } => (
                    "protected",
                    Some(kind),
                    Some(serde_json::json!({ "source": source.to_string_lossy() })),
                ),
            }
        }
        State::Absent => ("absent", None, None),
        State::InsideProject => ("inside-project", None, None),
        State::Covered { by } => (
            "covered",
            None,
            Some(serde_json::json!({ "by": by.to_string_lossy() })),
        ),
        State::Impossible { reason } => (
            "impossible",
            None,
            Some(serde_json::json!({ "reason": reason })),
        ),
    };
    let mut v = serde_json::json!({
        "location": p.location.to_string_lossy(),
        "state": state,
        "kind": kind,
        "existed": p.existed,
        "why": p.why,
    });
    if let (Some(obj), Some(serde_json::Value::Object(extra))) = (v.as_object_mut(), extra) {
        obj.extend(extra);
    }
    v
}

fn dry_run_text(prepared: &Prepared, seen: &[SeenEntry]) -> String {
    use std::fmt::Write as _;
    let mut out = verify_human(&prepared.report, false);
    let _ = writeln!(
        out,
        "\nWhat the command would see (sealed view at {}):",
        escaped_os(prepared.project_path.as_os_str())
    );
    if seen.is_empty() {
        out.push_str("  (no bundles or agent artifacts)\n");
    }
    for e in seen {
        let _ = writeln!(
            out,
            "  {:<8} {:<8} {}  ({}: {})",
            if e.visible { "visible" } else { "hidden" },
            e.kind,
            escaped(&e.path),
            e.state,
            e.why
        );
    }
    out.push_str(
        "\nThe run's own filesystem (a new root: everything else is the host's, bound as it is):\n",
    );
    let mut absent = 0;
    // Locations not on the host, shown empty so that nothing in the run can
    // create them: listed by directory.
    let mut occupied: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for p in &prepared.plan.planned {
        let loc = escaped_os(p.location.as_os_str());
        let placeholder = matches!(
            p.state,
            State::Placed(Placement::EmptyDir | Placement::EmptyFile | Placement::Filtered(_))
        );
        if placeholder && !p.existed {
            let dir = p.location.parent().unwrap_or(&p.location).to_path_buf();
            let name = escaped_os(p.location.file_name().unwrap_or_default());
            match occupied.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, names)) => names.push(name),
                None => occupied.push((dir, vec![name])),
            }
            continue;
        }
        match &p.state {
            State::Placed(Placement::EmptyDir | Placement::EmptyFile) => {
                let what = if matches!(p.state, State::Placed(Placement::EmptyDir)) {
                    "empty dir"
                } else {
                    "empty file"
                };
                let _ = writeln!(out, "  masked   {loc}  [{what}; {}]", p.why);
            }
            State::Placed(Placement::Filtered(f)) => {
                let removes = match &f.filtered.unparsed {
                    Some(why) => format!("shown empty: it does not parse ({why})"),
                    None if f.filtered.removed.is_empty() => "removes nothing".to_string(),
                    None => format!(
                        "removes {}",
                        f.filtered
                            .removed
                            .iter()
                            .map(|r| escaped(r).into_owned())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                };
                let access = if f.rule.writable {
                    "writable copy, merged back"
                } else {
                    "read-only copy"
                };
                let _ = writeln!(out, "  filtered {loc}  [{removes}; {access}; {}]", p.why);
            }
            State::Placed(Placement::Cover) => {
                let _ = writeln!(out, "  covered  {loc}  [empty dir; {}]", p.why);
            }
            State::Placed(Placement::Private { .. }) => {
                let _ = writeln!(
                    out,
                    "  private  {loc}  [empty dir of the run's own, in memory; {}]",
                    p.why
                );
            }
            State::Placed(Placement::Bind { source, writable }) => {
                let _ = writeln!(
                    out,
                    "  bound    {loc}  [{} {}]",
                    if *writable { "writable" } else { "read-only" },
                    escaped_os(source.as_os_str())
                );
            }
            State::Placed(
                Placement::View
                | Placement::Proc
                | Placement::Writable { .. }
                | Placement::ReadOnly { .. },
            ) => {}
            State::Covered { by } => {
                let _ = writeln!(
                    out,
                    "  masked   {loc}  [inside masked {}]",
                    escaped_os(by.as_os_str())
                );
            }
            State::InsideProject => {
                let _ = writeln!(
                    out,
                    "  in view  {loc}  [inside the project: the sealed view decides]"
                );
            }
            State::Impossible { reason } => {
                let _ = writeln!(out, "  BLOCKED  {loc}  [{reason}]");
            }
            State::Absent => absent += 1,
        }
    }
    if !occupied.is_empty() {
        out.push_str(
            "  Not on the host, shown empty so that nothing in the run can create them:\n",
        );
    }
    for (dir, names) in &occupied {
        let _ = writeln!(
            out,
            "  occupied {}/{{{}}}",
            escaped_os(dir.as_os_str()),
            names.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  ({absent} other known locations do not exist and cannot be created in the run)"
    );
    write_scope_text(prepared, &mut out);
    let impossible = prepared.impossible_mask().is_some();
    let outcome = if impossible {
        Outcome::Blocked
    } else {
        prepared.report.outcome
    };
    let _ = writeln!(
        out,
        "Result: {} ({} mode)",
        outcome,
        prepared.report.policy.as_str()
    );
    if let Some(line) = blocked_meaning(prepared) {
        let _ = writeln!(out, "{line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(s: &str) -> Vec<OsString> {
        vec![OsString::from(s), OsString::from("exec")]
    }

    #[test]
    fn only_a_root_run_of_an_agent_sandboxed_in_a_user_namespace_is_told() {
        let line = root_sandbox_line(&command("/opt/bin/codex"), true).unwrap();
        assert!(
            line.contains("Codex CLI") && line.contains("CAP_SETFCAP"),
            "{line}"
        );
        assert!(
            line.contains("codex --sandbox danger-full-access"),
            "{line}"
        );
        assert_eq!(root_sandbox_line(&command("codex"), false), None);
        assert_eq!(root_sandbox_line(&command("claude"), true), None);
        assert_eq!(root_sandbox_line(&[], true), None);
    }
}

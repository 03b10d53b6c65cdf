//! `seal run [--dry-run [--json]] -- CMD`: verify, then run CMD in a sealed
//! namespace (see [`crate::run`]), or show what it would see.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use super::output::verify_human;
use super::verify::{Decided, apply_machine_policy};
use super::{CliError, Context, Done};
use crate::core::escape::escaped_os;
use crate::core::verify::Outcome;
use crate::run::masks::{MaskKind, MaskState};
use crate::run::{Prepared, RunRequest, SeenEntry, execute, prepare, what_it_would_see};

pub struct RunArgs {
    pub audit_log: Option<PathBuf>,
    pub user: Option<String>,
    pub read_only: bool,
    pub rehash_every_open: bool,
    pub dry_run: bool,
    pub json: bool,
    pub command: Vec<OsString>,
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
    let mut prepared = prepare(RunRequest {
        project_dir: ctx.dir,
        project: ctx.project,
        command: args.command,
        audit_log: args.audit_log,
        user: args.user,
        writable: !args.read_only && !machine.read_only,
        rehash_every_open: args.rehash_every_open || machine.rehash_every_open,
    })
    .map_err(CliError::Run)?;
    // Strictest wins: what the dry run shows and the summary says are
    // decided under the policy in force.
    let decided = apply_machine_policy(&mut prepared.report, machine, &prepared.lockfile, false);
    prepared.lockfile.policy = prepared.report.policy;
    if args.dry_run {
        return dry_run(&prepared, args.json, &decided);
    }
    eprint!(
        "{}{}",
        verify_human(&prepared.report, false),
        decided.human_line()
    );
    eprintln!(
        "seal: run: the project is the sealed view ({})",
        crate::mount::describe_mode(prepared.request.writable)
    );
    let code = execute(prepared).map_err(CliError::Run)?;
    Ok(Done::Exit(code.clamp(0, 255) as u8))
}

fn dry_run(prepared: &Prepared, json: bool, decided: &Decided) -> Result<Done, CliError> {
    let seen = what_it_would_see(prepared);
    let blocked =
        prepared.report.outcome == Outcome::Blocked || prepared.impossible_mask().is_some();
    if json {
        let mut doc = serde_json::json!({
            "status": if prepared.impossible_mask().is_some() { "Blocked" } else { prepared.report.outcome.as_str() },
            "policy": prepared.lockfile.policy.as_str(),
            "entries": seen,
            "masks": prepared.plan.iter().map(mask_json).collect::<Vec<_>>(),
        });
        for (key, value) in decided.json_keys() {
            doc[key] = serde_json::Value::from(value);
        }
        let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
        out.push('\n');
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    } else {
        eprint!("{}{}", dry_run_text(prepared, &seen), decided.human_line());
    }
    Ok(if blocked {
        Done::Blocked
    } else {
        Done::Success
    })
}

fn mask_json(p: &crate::run::masks::Planned) -> serde_json::Value {
    let (state, target, kind, reason) = match &p.state {
        MaskState::Mask { target, kind } => (
            "mask",
            Some(target.to_string_lossy().into_owned()),
            Some(if *kind == MaskKind::Dir {
                "dir"
            } else {
                "file"
            }),
            None,
        ),
        MaskState::Absent => ("absent", None, None, None),
        MaskState::InsideProject => ("inside-project", None, None, None),
        MaskState::Covered { by } => (
            "covered",
            Some(by.to_string_lossy().into_owned()),
            None,
            None,
        ),
        MaskState::Impossible { reason } => ("impossible", None, None, Some(reason.clone())),
    };
    serde_json::json!({
        "location": p.location.to_string_lossy(),
        "state": state,
        "target": target,
        "kind": kind,
        "why": p.why,
        "reason": reason,
    })
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
            crate::core::escape::escaped(&e.path),
            e.state,
            e.why
        );
    }
    out.push_str("\nProject-external locations:\n");
    let mut absent = 0;
    for p in &prepared.plan {
        let loc = escaped_os(p.location.as_os_str());
        match &p.state {
            MaskState::Mask { target, kind } => {
                let what = if *kind == MaskKind::Dir {
                    "empty dir"
                } else {
                    "empty file"
                };
                let via = if *target != p.location {
                    format!(" (-> {})", escaped_os(target.as_os_str()))
                } else {
                    String::new()
                };
                let _ = writeln!(out, "  masked   {loc}{via}  [{what}; {}]", p.why);
            }
            MaskState::Covered { by } => {
                let _ = writeln!(
                    out,
                    "  masked   {loc}  [inside masked {}]",
                    escaped_os(by.as_os_str())
                );
            }
            MaskState::InsideProject => {
                let _ = writeln!(
                    out,
                    "  in view  {loc}  [resolves into the project: the sealed view decides]"
                );
            }
            MaskState::Impossible { reason } => {
                let _ = writeln!(out, "  BLOCKED  {loc}  [{reason}]");
            }
            MaskState::Absent => absent += 1,
        }
    }
    let _ = writeln!(out, "  ({absent} other known locations do not exist)");
    let outcome = if prepared.impossible_mask().is_some() {
        Outcome::Blocked
    } else {
        prepared.report.outcome
    };
    let _ = writeln!(
        out,
        "Result: {} ({} mode){}",
        outcome,
        prepared.lockfile.policy.as_str(),
        if prepared.impossible_mask().is_some() {
            "; a project-external location cannot be masked, the command would not start"
        } else {
            ""
        }
    );
    out
}

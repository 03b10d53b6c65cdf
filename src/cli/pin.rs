//! `seal pin`: record the current state of bundles. The core plans the
//! change ([`crate::core::plan`]); this renders it, asks, and writes. Nothing
//! is written unless the whole result is a valid lockfile and the user
//! confirmed it; a run that changes nothing leaves the file's bytes alone.

use std::ffi::OsString;
use std::os::fd::AsFd;

use super::output::pin_summary;
use super::progress::ProgressLine;
use super::prompt::confirm;
use super::{CliError, Context, Done};
use crate::core::discovery::Listings;
use crate::core::lockfile::Lockfile;
use crate::core::plan::{PlanError, Refusal, plan_bulk, plan_targeted, resolve_target};
use crate::core::store::{Replace, WriteLock, read_lockfile, write_lockfile};

pub fn run(
    ctx: &Context,
    paths: &[OsString],
    prune: bool,
    verbose: bool,
) -> Result<Done, CliError> {
    let project = ctx.project.as_fd();
    let write_lock = WriteLock::acquire(project, || {
        eprintln!("seal: pin: waiting for another seal process to finish writing seal.json...")
    })?;
    let original = read_lockfile(project)?;
    let lock = Lockfile::parse(&original)?;
    let mut listings = Listings::new(project);
    let progress = ProgressLine::start("hashing");
    let plan = if paths.is_empty() {
        plan_bulk(&mut listings, &lock, prune, verbose, progress.counters())
    } else if prune {
        Err(PlanError::Refused(Refusal::PruneWithPaths))
    } else {
        let root = ctx.canonical_dir()?;
        paths
            .iter()
            .map(|arg| resolve_target(&mut listings, &root, arg))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|keys| plan_targeted(&mut listings, &lock, &keys, progress.counters()))
    };
    drop(progress);
    let plan =
        plan.map_err(|e| CliError::from_plan(e, "cannot pin, seal.json is unchanged", ""))?;
    let added: Vec<String> = plan
        .added_patterns
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    if plan.is_noop() {
        // A bulk pin shows what it looked at; a targeted one has nothing to add.
        if paths.is_empty() {
            eprint!("{}", pin_summary(&plan.rows, &[], verbose));
        }
        eprintln!("No changes");
        return Ok(Done::Success);
    }
    // SPEC: abort before writing when the result would not be a valid lockfile.
    plan.lockfile.check().map_err(|e| {
        CliError::Refused(format!(
            "the result would not be a valid lockfile, nothing was written:\n{e}"
        ))
    })?;
    eprint!("{}", pin_summary(&plan.rows, &added, verbose));
    if !confirm("Apply these pin changes?") {
        return Err(CliError::Declined { command: "pin" });
    }
    write_lockfile(
        project,
        &plan.lockfile.to_canonical_bytes(),
        Replace::Overwrite,
        &write_lock,
    )?;
    eprintln!("Pinned {} bundle(s)", plan.changes());
    Ok(Done::Success)
}

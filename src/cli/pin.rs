//! `seal pin`: record the current state of bundles. The core plans the
//! change ([`seal_core::plan`]); this renders it, asks, and writes. Nothing
//! is written unless the whole result is a valid lockfile and the user
//! confirmed it; a run that changes nothing leaves the file's bytes alone.
//!
//! A bulk pin also offers discovery patterns for the agent artifacts no
//! pattern covers ([`super::hidden`]), shown as "Discovery patterns to add"
//! with their bundles as `+ new` rows, in the same single confirmation.
//! Recorded keys that are gone are listed only with `--prune`; without it one
//! line counts them and names the flag. Bundles over 100 MiB are warned about
//! before the question.

use std::ffi::OsString;
use std::os::fd::AsFd;

use super::output::{large_warnings, not_proposing, pin_summary};
use super::progress::ProgressLine;
use super::prompt::confirm;
use super::{CliError, Context, Done};
use seal_core::discovery::Listings;
use seal_core::lockfile::Lockfile;
use seal_core::plan::{PlanError, Proposal, Refusal, plan_bulk, plan_targeted, resolve_target};
use seal_core::store::{Replace, WriteLock, read_lockfile, write_lockfile};

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
    let mut refused = Vec::new();
    let progress = ProgressLine::start("hashing");
    let plan = if paths.is_empty() {
        // Agent artifacts no pattern covers (the view hides them): offer
        // patterns for them in the same confirmation.
        let found = super::hidden::find(&mut listings, &lock);
        let (uncovered, unkeyable) = super::hidden::keys(&found);
        refused = unkeyable;
        let proposal = if uncovered.is_empty() {
            Ok(Proposal::default())
        } else {
            seal_gate::surfaces::propose(&mut listings).map_err(PlanError::from)
        };
        proposal.and_then(|proposal| {
            plan_bulk(
                &mut listings,
                &lock,
                prune,
                verbose,
                &uncovered,
                &proposal,
                progress.counters(),
            )
        })
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
    refused.extend(plan.skipped.iter().cloned());
    eprint!("{}", not_proposing("pin", &refused));
    let added: Vec<String> = plan
        .added_patterns
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    if plan.is_noop() {
        // A bulk pin shows what it looked at; a targeted one has nothing to add.
        if paths.is_empty() {
            eprint!("{}", pin_summary(&plan.rows, &[], verbose, prune));
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
    eprint!("{}", pin_summary(&plan.rows, &added, verbose, prune));
    eprint!("{}", large_warnings("pin", &plan.large_bundles()));
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

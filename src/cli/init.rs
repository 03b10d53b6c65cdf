//! `seal init`: the core proposes discovery patterns for the agent surfaces
//! present and hashes what they produce ([`seal_core::plan::plan_init`]);
//! this shows the proposal and writes the first `seal.json` after
//! confirmation. Never overwrites an existing file.
//!
//! Before the question, every bundle is read again and its files are
//! listed with line counts (`--diff`: with their contents as diffs), then,
//! apart, what the new `seal.json` lets run ([`super::approval`]);
//! `--json` prints the same plan on stdout, and `--dry-run` stops there.
//!
//! A symlink where agents look is never pinned (SPEC: it would be a
//! Mismatch); init pins what it leads to and prints one line per link, with
//! what the view will do with it.

use std::os::fd::AsFd;

use super::approval::{PlanDocument, Show, Sized, Skipped, review};
use super::diff::{History, HistoryNote};
use super::output::{init_summary, large_warnings};
use super::progress::ProgressLine;
use super::prompt::confirm;
use super::{CliError, Context, Done};
use seal_core::discovery::Listings;
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::plan::{PlanError, plan_init};
use seal_core::store::{Replace, StoreError, WriteLock, lockfile_exists, write_lockfile};
use seal_gate::propose::{LinkNote, propose};

pub fn run(ctx: &Context, warn: bool, show: Show) -> Result<Done, CliError> {
    // A machine policy that does not parse stops init as it stops verify:
    // its extra surfaces are part of what init must propose.
    let machine = super::machine_policy()?;
    let rule = ctx.link_rule()?;
    let project = ctx.project.as_fd();
    let write_lock = WriteLock::acquire(project, || {
        sayln!("seal: init: waiting for another seal process to finish writing seal.json...")
    })?;
    if lockfile_exists(project)? {
        return Err(CliError::Refused(
            "seal.json already exists; init will not overwrite".into(),
        ));
    }
    let policy = if warn { Policy::Warn } else { Policy::Block };
    let mut listings = Listings::new(project);
    let progress = ProgressLine::start("hashing");
    let mut links = Vec::new();
    let plan = propose(
        &mut listings,
        &rule,
        &Lockfile::empty(policy),
        &machine.extra_surfaces,
    )
    .map_err(PlanError::from)
    .and_then(|found| {
        links = found.links;
        plan_init(&mut listings, policy, found.proposal, progress.counters())
    });
    drop(progress);
    let plan = plan.map_err(|e| {
        CliError::from_plan(
            e,
            "cannot create seal.json",
            "\nFix or remove these entries, then run init again.",
        )
    })?;
    for (path, why) in &plan.skipped {
        sayln!("seal: init: warning: not proposing {path}: {why}");
    }
    let plan_large = plan.large_bundles();
    let lock = plan.lockfile;
    lock.check()
        .map_err(|e| CliError::Refused(format!("the proposed lockfile would be invalid: {e}")))?;
    let patterns: Vec<String> = plan
        .proposed
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    let mut history = History::open(&ctx.dir);
    let mut changes = Vec::new();
    for (key, entry) in &lock.bundles {
        changes.push(review(
            &mut listings,
            key,
            None,
            entry,
            history.as_mut().ok(),
            show.diffs,
        )?);
    }
    let bundles: Vec<(String, usize)> = lock
        .bundles
        .iter()
        .map(|(k, e)| (k.as_str().to_string(), e.files.len()))
        .collect();
    say!("{}", linked_surfaces(&links));
    say!(
        "{}",
        init_summary(&patterns, &bundles, &show.details(&changes))
    );
    let document = PlanDocument {
        command: "init",
        dry_run: show.dry_run,
        policy: policy.as_str(),
        patterns: patterns.clone(),
        bundles: &changes,
        unchanged: 0,
        kept_removed: 0,
        large: plan_large
            .iter()
            .map(|b| Sized {
                key: b.key.clone(),
                bytes: b.bytes,
            })
            .collect(),
        not_proposing: plan
            .skipped
            .iter()
            .map(|(path, why)| Skipped {
                path: path.clone(),
                why: why.clone(),
            })
            .collect(),
        history: HistoryNote::of(&history),
    };
    let warnings = large_warnings("init", &plan_large);
    if !show.before_question(&changes, &document, true, &warnings) {
        return Ok(Done::Success);
    }
    let question = if lock.discovery.is_empty() && lock.bundles.is_empty() {
        format!(
            "No agent bundles or known agent layouts detected in this project. Create empty seal.json with policy: {}?",
            policy.as_str()
        )
    } else {
        "Apply these changes?".to_string()
    };
    if !confirm(&question) {
        return Err(CliError::Declined { command: "init" });
    }
    match write_lockfile(
        project,
        &lock.to_canonical_bytes(),
        Replace::CreateOnly,
        &write_lock,
    ) {
        Err(StoreError::AlreadyExists) => {
            return Err(CliError::Refused(
                "seal.json appeared while init was running; nothing was written".into(),
            ));
        }
        other => other?,
    }
    sayln!(
        "Wrote seal.json ({} bundles, {} discovery patterns)",
        lock.bundles.len(),
        lock.discovery.len()
    );
    Ok(Done::Success)
}

/// One line per symlink at a surface path: where it leads, what was pinned
/// for it, and what the view will do with it once sealed.
fn linked_surfaces(links: &[LinkNote]) -> String {
    let lines: Vec<String> = links
        .iter()
        .map(|note| match &note.judged {
            Some(judged) => {
                let pinned: Vec<String> = note.patterns.iter().map(ToString::to_string).collect();
                let pinned = match pinned.as_slice() {
                    [] => String::new(),
                    list => format!("pinning {}", list.join(", ")),
                };
                super::hidden::link_line(&note.path, judged, &pinned)
            }
            None => format!(
                "  {}: a discovery pattern produces the link itself (a Mismatch: symlinks \
                 cannot be sealed)\n",
                seal_core::escape::escaped(&note.path.display())
            ),
        })
        .collect();
    super::hidden::linked_section("init", &lines)
}

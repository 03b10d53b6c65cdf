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
//!
//! Before the question, each new or modified bundle is read again and its
//! changed files are listed with line counts (`--diff`: with their diffs)
//! under its row, then, apart, what the pin lets run
//! ([`super::approval`]); `--json` prints the same plan on stdout, and
//! `--dry-run` stops there. There is no flag that skips the question.
//!
//! A symlink where agents look is never sealed (SPEC: a Mismatch): a bulk pin
//! lists every such link and offers patterns for what it leads to; a
//! targeted pin of one (`seal pin CLAUDE.md`) pins what it leads to instead,
//! and says so.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::AsFd;

use super::approval::{BundleChange, PlanDocument, Show, Sized, Skipped, review};
use super::diff::{History, HistoryNote};
use super::output::{large_warnings, not_proposing, pin_summary};
use super::progress::ProgressLine;
use super::prompt::confirm;
use super::{CliError, Context, Done};
use seal_core::discovery::Listings;
use seal_core::lockfile::Lockfile;
use seal_core::paths::BundleKey;
use seal_core::plan::{
    PinKind, PinPlan, PinRow, PlanError, Proposal, Refusal, plan_bulk, plan_targeted,
    resolve_target,
};
use seal_core::store::{Replace, WriteLock, read_lockfile, write_lockfile};
use seal_gate::links::{Leads, LinkRule, judge};
use seal_gate::propose::propose;
use seal_gate::{ViewPath, place_with};

pub fn run(ctx: &Context, paths: &[OsString], prune: bool, show: Show) -> Result<Done, CliError> {
    // A machine policy that does not parse stops pin as it stops verify.
    let machine = super::machine_policy()?;
    let rule = ctx.link_rule()?;
    let project = ctx.project.as_fd();
    let write_lock = WriteLock::acquire(project, || {
        sayln!("seal: pin: waiting for another seal process to finish writing seal.json...")
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
        let (mut uncovered, unkeyable) = super::hidden::keys(&found);
        refused = unkeyable;
        // Links at surface paths are never sealed: what they lead to is.
        let links = super::hidden::find_links(&mut listings, &lock, &rule);
        uncovered.extend(super::hidden::link_keys(&links));
        uncovered.sort();
        uncovered.dedup();
        say!("{}", linked_surfaces(&links));
        let proposal = if uncovered.is_empty() {
            Ok(Proposal::default())
        } else {
            propose(&mut listings, &rule, &lock, &machine.extra_surfaces)
                .map(|found| found.proposal)
                .map_err(PlanError::from)
        };
        proposal.and_then(|proposal| {
            plan_bulk(
                &mut listings,
                &lock,
                prune,
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
            .map(|arg| {
                let arg = link_target_arg(&mut listings, &rule, &lock, &root, arg);
                resolve_target(&mut listings, &root, &arg)
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|keys| plan_targeted(&mut listings, &lock, &keys, progress.counters()))
    };
    drop(progress);
    let plan =
        plan.map_err(|e| CliError::from_plan(e, "cannot pin, seal.json is unchanged", ""))?;
    let mut history = History::open(&ctx.dir);
    refused.extend(plan.skipped.iter().cloned());
    say!("{}", not_proposing("pin", &refused));
    let added: Vec<String> = plan
        .added_patterns
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    if plan.is_noop() {
        // A bulk pin shows what it looked at; a targeted one has nothing to add.
        if paths.is_empty() {
            say!("{}", pin_summary(&plan.rows, &[], &BTreeMap::new(), prune));
        }
        sayln!("No changes");
        if show.json {
            document(&plan, &added, &refused, show, &history, &[]).print();
        }
        return Ok(Done::Success);
    }
    // SPEC: abort before writing when the result would not be a valid lockfile.
    plan.lockfile.check().map_err(|e| {
        CliError::Refused(format!(
            "the result would not be a valid lockfile, nothing was written:\n{e}"
        ))
    })?;
    let changes = review_rows(&mut listings, &lock, &plan, history.as_mut().ok(), show)?;
    say!(
        "{}",
        pin_summary(&plan.rows, &added, &show.details(&changes), prune)
    );
    let warnings = large_warnings("pin", &plan.large_bundles());
    let doc = document(&plan, &added, &refused, show, &history, &changes);
    if !show.before_question(&changes, &doc, false, &warnings) {
        return Ok(Done::Success);
    }
    if !confirm("Apply these pin changes?") {
        return Err(CliError::Declined { command: "pin" });
    }
    write_lockfile(
        project,
        &plan.lockfile.to_canonical_bytes(),
        Replace::Overwrite,
        &write_lock,
    )?;
    sayln!("Pinned {} bundle(s)", plan.changes());
    Ok(Done::Success)
}

/// The plan as `--json` prints it.
fn document<'a>(
    plan: &PinPlan,
    added: &[String],
    refused: &[(String, String)],
    show: Show,
    history: &Result<History, String>,
    bundles: &'a [BundleChange],
) -> PlanDocument<'a> {
    let count = |kind: PinKind| plan.rows.iter().filter(|r| r.kind == kind).count();
    PlanDocument {
        command: "pin",
        dry_run: show.dry_run,
        policy: plan.lockfile.policy.as_str(),
        patterns: added.to_vec(),
        bundles,
        unchanged: count(PinKind::Unchanged),
        kept_removed: if plan.prune {
            0
        } else {
            count(PinKind::Removed)
        },
        large: plan
            .large_bundles()
            .into_iter()
            .map(|b| Sized {
                key: b.key,
                bytes: b.bytes,
            })
            .collect(),
        not_proposing: refused
            .iter()
            .map(|(path, why)| Skipped {
                path: path.clone(),
                why: why.clone(),
            })
            .collect(),
        history: HistoryNote::of(history),
    }
}

/// What the pin changes in each bundle it approves anew or withdraws, read
/// again as it is shown ([`super::approval::review`]), sorted by key.
fn review_rows(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    plan: &PinPlan,
    mut history: Option<&mut History>,
    show: Show,
) -> Result<Vec<BundleChange>, CliError> {
    let mut rows: Vec<&PinRow> = plan.rows.iter().collect();
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let mut changes = Vec::new();
    for row in rows {
        let key = BundleKey::parse(&row.key).map_err(|rule| {
            CliError::Refused(format!("{}: {rule}", seal_core::escape::escaped(&row.key)))
        })?;
        match (row.kind, plan.lockfile.bundles.get(&key)) {
            (PinKind::New | PinKind::Modified, Some(planned)) => changes.push(review(
                listings,
                &key,
                lock.bundles.get(&key),
                planned,
                history.as_deref_mut(),
                show.diffs,
            )?),
            (PinKind::Removed, None) => changes.push(BundleChange::removed(&row.key)),
            _ => {}
        }
    }
    Ok(changes)
}

/// The lines about links at surface paths a bulk pin prints: each, where it
/// leads, what is offered for it.
fn linked_surfaces(links: &[super::hidden::LinkLine]) -> String {
    let lines: Vec<String> = links
        .iter()
        .map(|l| {
            let offered: Vec<&str> = l.keys.iter().map(|k| k.as_str()).collect();
            let note = match offered.as_slice() {
                [] => String::new(),
                keys => format!(
                    "offering {} below",
                    seal_core::escape::escaped(&keys.join(", "))
                ),
            };
            super::hidden::link_line(&l.path, &l.link, &note)
        })
        .collect();
    super::hidden::linked_section("pin", &lines)
}

/// The argument a targeted pin works on: for a symlink at a surface path
/// standing for one artifact (`CLAUDE.md -> AGENTS.md`), the path it leads
/// to inside the project (said on stderr); anything else as it is.
fn link_target_arg(
    listings: &mut Listings<'_>,
    rule: &LinkRule,
    lock: &Lockfile,
    root: &std::path::Path,
    arg: &std::ffi::OsStr,
) -> OsString {
    let unchanged = arg.to_os_string();
    let path = std::path::Path::new(arg);
    let rel = if path.is_absolute() {
        match path.strip_prefix(root) {
            Ok(rel) => rel,
            Err(_) => return unchanged,
        }
    } else {
        path
    };
    let view = ViewPath::from_names(rel.iter());
    let (Some(parent), Some(name)) = (view.parent(), view.name()) else {
        return unchanged;
    };
    let project = listings.root();
    let Ok(dir) = seal_core::fs::open_dir_path_beneath(project, &parent.raw) else {
        return unchanged;
    };
    let Ok(target) = nix::fcntl::readlinkat(dir.as_fd(), name) else {
        return unchanged;
    };
    let extra = seal_gate::policy::machine()
        .map(|m| m.extra_surfaces.clone())
        .unwrap_or_default();
    let place = place_with(lock, &extra, &view);
    if place == seal_gate::Place::Container {
        return unchanged;
    }
    let Some(link) = judge(rule, project, lock, &extra, &view, &place, &target) else {
        return unchanged;
    };
    let Leads::Inside { path: at, .. } = &link.leads else {
        return unchanged;
    };
    let at = ViewPath::of(at);
    sayln!(
        "seal: pin: {} is a link to {}: pinning what it leads to, {}",
        seal_core::escape::escaped(&view.display()),
        seal_core::escape::escaped_os(&link.target),
        seal_core::escape::escaped(&at.display())
    );
    OsString::from(at.names().collect::<Vec<_>>().join("/"))
}

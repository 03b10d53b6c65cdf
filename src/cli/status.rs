//! `seal status [--json]`: the overview a user reads before pinning or
//! loading anything. The verification `seal verify` makes (the same
//! report, raised to the policy in force), each bundle that is not Verified
//! with the files that changed, and the agent artifacts the sealed view
//! hides although they are on disk (the `seal verify -v` list, found by
//! the gate's own walk and decided by asking the gate's one question, as
//! the view does); then what to run next. Nothing here decides anything of its own: every state and decision
//! comes from the functions `seal verify`, `seal verify -v` and `seal why`
//! call. Exit codes are verify's.

use std::io::Write as _;
use std::os::fd::AsFd;

use super::output::verify_human;
use super::progress::ProgressLine;
use super::verify::{Decided, apply_machine_policy, required_report, uncovered_bundles};
use super::{CliError, Context, Done};
use seal_core::discovery::Listings;
use seal_core::lockfile::Lockfile;
use seal_core::verify::{BundleState, Outcome, ProjectReport, verify_project};
use seal_gate::assess::Uncovered;
use seal_gate::policy::lockfile_bytes;
use seal_gate::{Gate, Op, Place, Who};

/// A project verified as `seal verify` verifies it.
pub struct Assessed {
    pub lock: Lockfile,
    pub report: ProjectReport,
    pub decided: Decided,
    /// No seal.json; the machine policy requires Seal.
    pub implied: bool,
}

impl Assessed {
    /// Verify's exit: Blocked is 1.
    pub fn done(&self) -> Done {
        match self.report.outcome {
            Outcome::Blocked => Done::Blocked,
            Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
        }
    }
}

/// Verifies the project as `seal verify` does: a missing seal.json is fatal
/// unless the machine policy requires Seal; the outcome is raised to the
/// policy in force. `progress` shows the progress line on a terminal.
pub fn assess(
    ctx: &Context,
    listings: &mut Listings<'_>,
    progress: bool,
) -> Result<Assessed, CliError> {
    let machine = super::machine_policy()?;
    let (bytes, implied) = lockfile_bytes(ctx.project.as_fd(), machine)?;
    let lock = Lockfile::parse(&bytes)?;
    let mut report = if implied {
        let rule = ctx.link_rule()?;
        required_report(uncovered_bundles(listings, &lock, machine, &rule)).0
    } else {
        let line = progress.then(|| ProgressLine::start("verifying"));
        verify_project(listings, &lock, line.as_ref().and_then(|p| p.counters()))?
    };
    let decided = apply_machine_policy(&mut report, machine, &lock, implied);
    Ok(Assessed {
        lock,
        report,
        decided,
        implied,
    })
}

pub fn run(ctx: &Context, json: bool) -> Result<Done, CliError> {
    let mut listings = Listings::new(ctx.project.as_fd());
    let assessed = assess(ctx, &mut listings, !json)?;
    let found = super::hidden::find(&mut listings, &assessed.lock);
    // The view's decisions, under the policy in force.
    let gate = super::explaining_gate(ctx, &assessed.lock, assessed.implied)?;
    if json {
        let mut text =
            serde_json::to_string_pretty(&document(&assessed, &found, &gate)).unwrap_or_default();
        text.push('\n');
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        say!("{}", human(ctx, &assessed, &found, &gate));
    }
    Ok(assessed.done())
}

/// The human overview: verify's output with every bundle's files, the
/// hidden artifacts, and what to run next.
fn human(ctx: &Context, assessed: &Assessed, found: &[Uncovered], gate: &Gate) -> String {
    let mut out = verify_human(&assessed.report, true);
    out.push_str(&assessed.decided.human_line());
    out.push_str(&super::hidden::render(found, gate, ctx.project_arg()));
    let mut next = Vec::new();
    let changed = assessed
        .report
        .bundles
        .iter()
        .any(|b| matches!(b.state, BundleState::Mismatch | BundleState::Unverified));
    if changed {
        next.push("'seal diff' shows what changed in each bundle that is not verified");
    }
    if changed || assessed.report.count(BundleState::Removed) > 0 {
        next.push("'seal pin' approves the changes (it asks first)");
    }
    if !next.is_empty() {
        out.push_str(&format!("\nNext: {}.\n", next.join("; ")));
    }
    out
}

/// The `--json` document (docs/JSON.md); keys in this order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    status: &'static str,
    policy: &'static str,
    /// Who set the policy, and the machine policy file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine_policy: Option<String>,
    lockfile: &'static str,
    counts: Counts,
    verified: Vec<String>,
    bundles: Vec<Bundle>,
    hidden: Vec<Hidden>,
}

#[derive(serde::Serialize)]
struct Counts {
    verified: usize,
    unverified: usize,
    removed: usize,
    mismatch: usize,
}

/// A bundle that is not Verified.
#[derive(serde::Serialize)]
struct Bundle {
    key: String,
    state: &'static str,
    modified: Vec<String>,
    added: Vec<String>,
    missing: Vec<String>,
    problems: Vec<String>,
}

/// An agent artifact no discovery pattern covers.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Hidden {
    path: String,
    surface: String,
    state: &'static str,
    decision: &'static str,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cannot_seal: Option<String>,
}

fn document(assessed: &Assessed, found: &[Uncovered], gate: &Gate) -> Document {
    let report = &assessed.report;
    let policy = report.policy;
    let bundles = report
        .not_verified()
        .into_iter()
        .map(|b| Bundle {
            key: b.name.as_display(),
            state: b.state.as_str(),
            modified: b.modified.clone(),
            added: b.added.clone(),
            missing: b.missing.clone(),
            problems: b.problems.iter().map(ToString::to_string).collect(),
        })
        .collect();
    let round = gate.explaining(None);
    let hidden = found
        .iter()
        .map(|u| {
            let decision = round.ask(&u.path, Op::lookup(u.kind), Who::this_process());
            let (keys, refused) = super::hidden::keys(std::slice::from_ref(u));
            Hidden {
                path: u.path.display(),
                surface: match &u.place {
                    Place::Artifact { rule, .. } => rule.describe(),
                    _ => String::new(),
                },
                state: u.state.as_str(),
                decision: decision.word(),
                reason: decision.reason.describe(),
                fix: keys
                    .first()
                    .map(|k| format!("seal pin {}", super::hidden::shell_word(k.rel_path()))),
                cannot_seal: refused.into_iter().next().map(|(_, why)| why),
            }
        })
        .collect();
    let extra: std::collections::BTreeMap<&str, String> =
        assessed.decided.json_keys().into_iter().collect();
    Document {
        status: report.outcome.as_str(),
        policy: policy.as_str(),
        policy_source: extra.get("policySource").cloned(),
        machine_policy: extra.get("machinePolicy").cloned(),
        lockfile: if assessed.implied {
            "implied"
        } else {
            "present"
        },
        counts: Counts {
            verified: report.count(BundleState::Verified),
            unverified: report.count(BundleState::Unverified),
            removed: report.count(BundleState::Removed),
            mismatch: report.count(BundleState::Mismatch),
        },
        verified: report.names_in(BundleState::Verified),
        bundles,
        hidden,
    }
}

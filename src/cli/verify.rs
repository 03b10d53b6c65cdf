//! `seal verify`: classify every bundle and report, exit 0 / 1 / 2.
//!
//! With `-v`, after the spec's own output (and whatever its result), the
//! agent artifacts no discovery pattern covers are listed with the `seal pin`
//! command that would seal each (see [`super::hidden`]): they are why a file
//! on disk is missing from the sealed view. `-v` is the place because the
//! reference CLI's `-v` only adds detail on stderr, so plain `verify` stays
//! byte-identical to the reference and only a verbose run pays for walking
//! the whole project; and it is where a user already looks when the view and
//! the disk disagree, with no new command to learn.
//!
//! With `--strict` (or the machine policy's `strictVerify`), every agent
//! artifact the built-in surface table finds and no discovery pattern covers
//! (and every link at a surface path leading to unsealed content or out of
//! the project) counts as an Unverified bundle: exit 1 under block, listed in
//! every format, a CI annotation on the file. SPEC forbids built-in
//! heuristics in standalone verification, so without it verify follows
//! `seal.json` alone and its output is the spec's.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsFd;

use super::formats::{
    Machine, escape_data, escape_property, github_annotations, repo_prefix, sarif_log,
};
use super::output::{verify_human, verify_json};
use super::progress::ProgressLine;
use super::{CliError, Context, Done};
use seal_core::discovery::Listings;
use seal_core::escape::escaped;
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::paths::BundleKey;
use seal_core::verify::{
    BundleReport, BundleState, Outcome, ProjectReport, RootName, verify_project,
};
use seal_gate::links::LinkState;
use seal_gate::policy::{MachinePolicy, Source, lockfile_bytes};

/// The machine formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The `--json` document
    Json,
    /// GitHub Actions workflow commands: one annotation per bundle that is
    /// not verified
    Github,
    /// SARIF 2.1.0, for code scanning
    Sarif,
}

/// Where the result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Human,
    Json,
    /// Annotations on stdout, and the human summary on stderr (both land in
    /// the job's log).
    Github,
    Sarif,
    Quiet,
}

impl Mode {
    pub fn from_flags(json: bool, format: Option<OutputFormat>, quiet: bool) -> Mode {
        match (json, format, quiet) {
            (true, _, _) | (false, Some(OutputFormat::Json), _) => Mode::Json,
            (false, Some(OutputFormat::Github), _) => Mode::Github,
            (false, Some(OutputFormat::Sarif), _) => Mode::Sarif,
            (false, None, true) => Mode::Quiet,
            (false, None, false) => Mode::Human,
        }
    }

    /// The machine format a fatal error is also written in.
    pub fn machine(self) -> Option<Machine> {
        match self {
            Mode::Json => Some(Machine::Json),
            Mode::Github => Some(Machine::Github),
            Mode::Sarif => Some(Machine::Sarif),
            Mode::Human | Mode::Quiet => None,
        }
    }
}

pub fn run(ctx: &Context, mode: Mode, verbose: bool, strict: bool) -> Result<Done, CliError> {
    let machine = super::machine_policy()?;
    let strict = strict || machine.strict_verify;
    // SPEC: a missing seal.json is fatal (exit 2), unless the machine policy
    // requires Seal: then the project counts as having the empty lockfile.
    let (bytes, implied) = lockfile_bytes(ctx.project.as_fd(), machine)?;
    let lock = Lockfile::parse(&bytes)?;
    let human = matches!(mode, Mode::Human | Mode::Github);
    let mut listings = Listings::new(ctx.project.as_fd());
    let rule = ctx.link_rule()?;
    // With --strict, what no discovery pattern covers but an agent would
    // load, with the message CI shows for each (SPEC: plain verify follows
    // seal.json alone, so only --strict or the machine policy adds these).
    let mut uncovered = BTreeMap::new();
    let mut report = if implied {
        let found = uncovered_bundles(&mut listings, &lock, machine, &rule);
        let (report, notes) = required_report(found);
        uncovered = notes;
        report
    } else {
        let progress = human.then(|| ProgressLine::start("verifying"));
        verify_project(
            &mut listings,
            &lock,
            progress.as_ref().and_then(|p| p.counters()),
        )?
    };
    if strict && !implied {
        for (bundle, message) in uncovered_bundles(&mut listings, &lock, machine, &rule) {
            if report.bundles.iter().all(|b| b.name != bundle.name) {
                uncovered.insert(bundle.name.as_display(), message);
                report.bundles.push(bundle);
            }
        }
        report.bundles.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let decided = apply_machine_policy(&mut report, machine, &lock, implied);
    let mut json_keys = decided.json_keys();
    if strict {
        json_keys.push(("strict", "true".to_string()));
    }
    let done = match report.outcome {
        Outcome::Blocked => Done::Blocked,
        Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
    };
    let stdout = match mode {
        Mode::Quiet | Mode::Human => None,
        Mode::Json => Some(verify_json(&report, &json_keys)),
        Mode::Github => Some(
            github_annotations(
                &report,
                &repo_prefix(&ctx.dir),
                &String::from_utf8_lossy(&bytes),
                &uncovered,
            ) + &decided.github_notice(),
        ),
        Mode::Sarif => Some(sarif_log(
            &report,
            &repo_prefix(&ctx.dir),
            &String::from_utf8_lossy(&bytes),
            super::exit_code(&Ok(done)),
            &json_keys,
            &uncovered,
        )),
    };
    if human {
        say!("{}{}", verify_human(&report, verbose), decided.human_line());
        if strict && !uncovered.is_empty() {
            say!("{}", strict_lines(&uncovered));
        }
        if verbose {
            let found = super::hidden::find(&mut listings, &lock);
            let gate = super::explaining_gate(ctx, &lock, implied)?;
            say!(
                "{}",
                super::hidden::render(&found, &gate, ctx.project_arg())
            );
            let links = super::hidden::find_links(&mut listings, &lock, &rule);
            say!(
                "{}",
                super::hidden::render_links(&links, &gate, ctx.project_arg())
            );
        }
    }
    if let Some(text) = stdout {
        let mut stdout = std::io::stdout().lock();
        // A closed stdout is not worth a different exit code than the result.
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
    Ok(done)
}

/// What the machine policy did to a verification, for every output format.
pub struct Decided {
    /// The machine policy file, when there is one.
    file: Option<String>,
    policy: Policy,
    source: Source,
    /// The policy the project's seal.json asks for.
    asked: Policy,
    /// No seal.json: the machine policy requires Seal.
    implied: bool,
}

impl Decided {
    /// The keys added to the `--json` document (and SARIF properties) when
    /// a machine policy file is present; SPEC's keys are never changed.
    pub fn json_keys(&self) -> Vec<(&'static str, String)> {
        let Some(file) = &self.file else {
            return Vec::new();
        };
        let mut keys = vec![
            ("policy", self.policy.as_str().to_string()),
            ("policySource", self.source.as_str().to_string()),
            ("machinePolicy", file.clone()),
        ];
        if self.implied {
            keys.push(("lockfile", "missing".to_string()));
        }
        keys
    }

    /// One sentence when the machine policy decided, else nothing.
    fn sentence(&self) -> Option<String> {
        let file = self.file.as_deref().unwrap_or("-");
        if self.implied {
            Some(format!(
                "there is no seal.json and the machine policy {file} requires Seal: the project \
                 counts as having the empty lockfile (policy block), every agent artifact in it \
                 is unverified, and the result is Blocked until it has a seal.json"
            ))
        } else if self.source == Source::Machine {
            Some(format!(
                "the machine policy {file} decided: its minimum policy {} overrides the \
                 project's {}",
                self.policy.as_str(),
                self.asked.as_str()
            ))
        } else {
            None
        }
    }

    /// The line printed after the result line (nothing when the machine
    /// policy did not decide).
    pub fn human_line(&self) -> String {
        self.sentence()
            .map(|s| format!("Policy: {s}\n"))
            .unwrap_or_default()
    }

    /// A `::notice` saying the machine policy decided (else nothing).
    pub fn github_notice(&self) -> String {
        self.sentence()
            .map(|s| {
                format!(
                    "::notice title={}::{}\n",
                    escape_property("seal machine policy"),
                    escape_data(&s)
                )
            })
            .unwrap_or_default()
    }
}

/// Raises the report to the policy in force (strictest wins) and, for a
/// project without seal.json under a policy that requires Seal, makes the
/// outcome Blocked (a machine policy never turns SPEC's exit 2 into a 0).
pub fn apply_machine_policy(
    report: &mut ProjectReport,
    machine: &MachinePolicy,
    lock: &Lockfile,
    implied: bool,
) -> Decided {
    let (policy, source) = machine.policy_of(lock, implied);
    report.policy = policy;
    report.outcome = if implied {
        Outcome::Blocked
    } else {
        Outcome::of(report.bundles.iter().map(|b| &b.state), policy)
    };
    Decided {
        file: machine
            .file
            .as_ref()
            .map(|p| seal_core::escape::escaped_os(p.as_os_str())),
        policy,
        source,
        asked: lock.policy,
        implied,
    }
}

/// The report of a project without seal.json when the machine policy
/// requires Seal: every agent artifact holding something loadable (on the
/// built-in surfaces and the policy's extra ones, `found`) is Unverified.
pub fn required_report(
    found: Vec<(BundleReport, String)>,
) -> (ProjectReport, BTreeMap<String, String>) {
    let notes = found
        .iter()
        .map(|(b, message)| (b.name.as_display(), message.clone()))
        .collect();
    let report = ProjectReport {
        policy: Policy::Block,
        bundles: found.into_iter().map(|(b, _)| b).collect(),
        outcome: Outcome::Blocked,
    };
    (report, notes)
}

/// Every agent artifact no discovery pattern covers, as an Unverified
/// bundle with the message CI shows for it: each artifact root the sealed
/// view would gate (the gate's own walk and surface table, with the machine
/// policy's extra surfaces), and each symlink at a surface path that leads
/// to content no sealed root covers or out of the project (named by the
/// link, the file agents open). Sorted by name.
pub fn uncovered_bundles(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    machine: &MachinePolicy,
    rule: &seal_gate::links::LinkRule,
) -> Vec<(BundleReport, String)> {
    let name_of = |path: &seal_gate::ViewPath| {
        let names: Vec<&str> = path.names().collect();
        match BundleKey::from_segments(&names) {
            Ok(key) => RootName::Key(key),
            Err(_) => RootName::Unmappable(path.display()),
        }
    };
    let unverified = |name| BundleReport {
        name,
        state: BundleState::Unverified,
        modified: vec![],
        added: vec![],
        missing: vec![],
        problems: vec![],
    };
    let mut out = Vec::new();
    for u in seal_gate::assess::uncovered_artifacts(listings, lock, &machine.extra_surfaces) {
        let rule = match &u.place {
            seal_gate::Place::Artifact { rule, .. } => rule.describe(),
            _ => "a root whose name cannot be a bundle key".to_string(),
        };
        let shown = escaped(&u.path.display()).into_owned();
        let message = format!(
            "Agent artifact {shown}: no discovery pattern in seal.json covers it ({rule}), so \
             an agent would load it unverified. Review it, then run '{}' to seal it.",
            super::hidden::pin_command(None, u.path.names().collect::<Vec<_>>().join("/").as_str())
        );
        out.push((unverified(name_of(&u.path)), message));
    }
    for line in super::hidden::find_links(listings, lock, rule) {
        let shown = escaped(&line.path.display()).into_owned();
        let target = seal_core::escape::escaped_os(&line.link.target);
        let message = match line.link.state {
            LinkState::Unsealed => format!(
                "Agent surface {shown} is a link to {target}, which leads {}: content no \
                 sealed root covers, so an agent would load it unverified. {}",
                super::hidden::leads_text(&line.link.leads),
                super::hidden::link_remedy(&line, None).unwrap_or_default()
            ),
            LinkState::Outside => format!(
                "Agent surface {shown} is a link out of the project ({target}): nothing there is \
                 sealed, so an agent would load it unverified. Make it lead inside the project, \
                 or replace it with what it leads to."
            ),
            // Followed: decided where it leads; the rest lead to nothing an
            // agent could load.
            LinkState::Followed
            | LinkState::NotADirectory
            | LinkState::Dangling
            | LinkState::Loop => continue,
        };
        out.push((unverified(name_of(&line.path)), message));
    }
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    out
}

/// The lines `--strict` adds after the result: each uncovered artifact with
/// why it counts.
fn strict_lines(uncovered: &BTreeMap<String, String>) -> String {
    let mut out = format!(
        "\nStrict: {} agent artifact(s) no discovery pattern covers count as unverified:\n",
        uncovered.len()
    );
    for message in uncovered.values() {
        out.push_str("  ");
        out.push_str(message);
        out.push('\n');
    }
    out
}

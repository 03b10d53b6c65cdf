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

use std::io::Write;
use std::os::fd::AsFd;

use super::formats::{Machine, github_annotations, repo_prefix, sarif_log};
use super::output::{verify_human, verify_json};
use super::progress::ProgressLine;
use super::{CliError, Context, Done};
use crate::core::discovery::Listings;
use crate::core::lockfile::Lockfile;
use crate::core::store::read_lockfile;
use crate::core::verify::{Outcome, verify_project};

/// The machine formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
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
    pub fn from_flags(json: bool, format: Option<Format>, quiet: bool) -> Mode {
        match (json, format, quiet) {
            (true, _, _) | (false, Some(Format::Json), _) => Mode::Json,
            (false, Some(Format::Github), _) => Mode::Github,
            (false, Some(Format::Sarif), _) => Mode::Sarif,
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

pub fn run(ctx: &Context, mode: Mode, verbose: bool) -> Result<Done, CliError> {
    let bytes = read_lockfile(ctx.project.as_fd())?;
    let lock = Lockfile::parse(&bytes)?;
    let human = matches!(mode, Mode::Human | Mode::Github);
    let progress = human.then(|| ProgressLine::start("verifying"));
    let mut listings = Listings::new(ctx.project.as_fd());
    let report = verify_project(
        &mut listings,
        &lock,
        progress.as_ref().and_then(|p| p.counters()),
    )?;
    drop(progress);
    let done = match report.outcome {
        Outcome::Blocked => Done::Blocked,
        Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
    };
    let stdout = match mode {
        Mode::Quiet | Mode::Human => None,
        Mode::Json => Some(verify_json(&report)),
        Mode::Github => Some(github_annotations(
            &report,
            &repo_prefix(&ctx.dir),
            &String::from_utf8_lossy(&bytes),
        )),
        Mode::Sarif => Some(sarif_log(
            &report,
            &repo_prefix(&ctx.dir),
            &String::from_utf8_lossy(&bytes),
            super::exit_code(&Ok(done)),
        )),
    };
    if human {
        eprint!("{}", verify_human(&report, verbose));
        if verbose {
            let found = super::hidden::find(&mut listings, &lock);
            eprint!(
                "{}",
                super::hidden::render(&found, &lock, ctx.project_arg())
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

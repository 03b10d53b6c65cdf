//! `seal verify`: classify every bundle and report, exit 0 / 1 / 2.

use std::io::Write;
use std::os::fd::AsFd;

use super::output::{verify_human, verify_json};
use super::progress::ProgressLine;
use super::{CliError, Context, Done};
use crate::core::discovery::Listings;
use crate::core::lockfile::Lockfile;
use crate::core::store::read_lockfile;
use crate::core::verify::{Outcome, verify_project};

/// Where the result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Human,
    Json,
    Quiet,
}

impl Mode {
    pub fn from_flags(json: bool, quiet: bool) -> Mode {
        match (json, quiet) {
            (true, _) => Mode::Json,
            (false, true) => Mode::Quiet,
            (false, false) => Mode::Human,
        }
    }
}

pub fn run(ctx: &Context, mode: Mode, verbose: bool) -> Result<Done, CliError> {
    let bytes = read_lockfile(ctx.project.as_fd())?;
    let lock = Lockfile::parse(&bytes)?;
    let progress = (mode == Mode::Human).then(|| ProgressLine::start("verifying"));
    let mut listings = Listings::new(ctx.project.as_fd());
    let report = verify_project(
        &mut listings,
        &lock,
        progress.as_ref().and_then(|p| p.counters()),
    )?;
    drop(progress);
    match mode {
        Mode::Quiet => {}
        Mode::Json => {
            let mut stdout = std::io::stdout().lock();
            // A closed stdout is not worth a different exit code than the result.
            let _ = stdout.write_all(verify_json(&report).as_bytes());
            let _ = stdout.flush();
        }
        Mode::Human => eprint!("{}", verify_human(&report, verbose)),
    }
    Ok(match report.outcome {
        Outcome::Blocked => Done::Blocked,
        Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
    })
}

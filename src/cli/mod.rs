//! The `seal` command line: argument parsing, dispatch, and the one place
//! where errors become exit codes.
//!
//! Human text goes to stderr only; stdout carries nothing but `verify --json`
//! (SPEC §CLI Tool Behaviors). Exit codes follow SPEC's table: 0 success,
//! 1 verify Blocked (and `seal run` when a mask cannot be applied), 2 fatal.

mod init;
mod mount;
mod output;
mod pin;
mod progress;
mod prompt;
mod run;
mod verify;
mod why;

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::core::discovery::DiscoveryError;
use crate::core::lockfile::LockfileError;
use crate::core::store::StoreError;

#[derive(Debug, Parser)]
#[command(
    name = "seal",
    version,
    about = "Pin and verify AI-agent extensions with a Seal v1 seal.json, and serve only verified ones",
    long_about = None,
    disable_help_subcommand = true
)]
struct Cli {
    /// Run as if started in DIR (the project root; parents are never searched)
    #[arg(short = 'C', value_name = "DIR", global = true)]
    directory: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a first seal.json from the agent layouts present in the project
    Init(InitArgs),
    /// Record the current state of bundles in seal.json (always asks first)
    Pin(PinArgs),
    /// Classify every bundle against seal.json; exit 0, 1 (Blocked) or 2
    Verify(VerifyArgs),
    /// Serve a read-only view of the project where bundles are readable only
    /// after a fresh verification (stays in the foreground)
    Mount(MountArgs),
    /// Run a command (an agent) in a private namespace: the sealed view at the
    /// project's own path, every project-external extension masked
    Run(RunArgs),
    /// Explain how one path is classified and what is decided about it
    Why(WhyArgs),
}

#[derive(Debug, Args)]
struct WhyArgs {
    /// A path in the project (relative to it) or outside it (absolute)
    path: PathBuf,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Append a JSON line per gate decision to FILE
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,
    /// Run the command as USER (name or uid; needs root). Default: the user
    /// behind sudo, else the caller
    #[arg(long, value_name = "USER")]
    user: Option<String>,
    /// Print what the command would see and which locations would be masked,
    /// then exit with the verify exit code
    #[arg(long)]
    dry_run: bool,
    /// With --dry-run: print the result as JSON on stdout
    #[arg(long, requires = "dry_run")]
    json: bool,
    /// Bind the host path SRC read-only at DEST in the run (repeatable)
    #[arg(long = "ro-bind", num_args = 2, value_names = ["SRC", "DEST"])]
    ro_bind: Vec<PathBuf>,
    /// Bind the host path SRC writable at DEST in the run (repeatable)
    #[arg(long = "bind", num_args = 2, value_names = ["SRC", "DEST"])]
    bind: Vec<PathBuf>,
    /// The command and its arguments
    #[arg(
        value_name = "CMD",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

#[derive(Debug, Args)]
struct MountArgs {
    /// Where the view appears (an empty directory outside the project)
    mountpoint: PathBuf,
    /// Append a JSON line per gate decision to FILE
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,
    /// Let other users (not only the one who mounted) use the view
    #[arg(long)]
    allow_other: bool,
}

#[derive(Debug, Args)]
struct InitArgs {
    /// Set policy to "warn" instead of "block"
    #[arg(long)]
    warn: bool,
    /// List the files of each bundle
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Debug, Args)]
struct PinArgs {
    /// Bundle roots to pin (default: every discovered and recorded bundle)
    #[arg(value_name = "PATH")]
    paths: Vec<OsString>,
    /// Drop recorded bundles that are no longer on disk
    #[arg(long)]
    prune: bool,
    /// Show per-file changes
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// Print the result as JSON on stdout
    #[arg(long, conflicts_with = "quiet")]
    json: bool,
    /// Print nothing; the exit code is the result
    #[arg(short, long)]
    quiet: bool,
    /// Show modified, added and missing files of each mismatched bundle
    #[arg(short, long)]
    verbose: bool,
}

/// Everything that ends a command with a fatal error (exit 2).
#[derive(Debug)]
pub enum CliError {
    /// The project directory could not be opened.
    Project {
        dir: PathBuf,
        source: std::io::Error,
    },
    Store(StoreError),
    Invalid(LockfileError),
    Discovery(DiscoveryError),
    /// The user declined, or no answer came.
    Declined {
        command: &'static str,
    },
    /// The requested change is not allowed; the message says why.
    Refused(String),
    Mount(crate::mount::MountError),
    Run(crate::run::RunError),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Project { dir, source } => {
                write!(
                    f,
                    "cannot open project directory {}: {source}",
                    crate::core::escape::escaped_os(dir.as_os_str())
                )
            }
            CliError::Store(StoreError::Missing) => {
                write!(
                    f,
                    "seal.json not found in the current directory; run 'seal init' first"
                )
            }
            CliError::Store(e) => write!(f, "{e}"),
            CliError::Invalid(e) => write!(f, "{e}"),
            CliError::Discovery(e) => write!(f, "{e}"),
            CliError::Declined { command } => write!(f, "{command} aborted"),
            CliError::Refused(msg) => f.write_str(msg),
            CliError::Mount(e) => write!(f, "{e}"),
            CliError::Run(e) => write!(f, "{e}"),
        }
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        CliError::Store(e)
    }
}
impl From<LockfileError> for CliError {
    fn from(e: LockfileError) -> Self {
        CliError::Invalid(e)
    }
}
impl From<DiscoveryError> for CliError {
    fn from(e: DiscoveryError) -> Self {
        CliError::Discovery(e)
    }
}

/// What a command that did not fail produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    Success,
    /// `verify` with outcome Blocked.
    Blocked,
    /// `run`: the command's own exit status.
    Exit(u8),
}

/// The exit code of every result, in one exhaustive match.
fn exit_code(result: &Result<Done, CliError>) -> u8 {
    match result {
        Ok(Done::Success) => 0,
        Ok(Done::Blocked) => 1,
        Ok(Done::Exit(code)) => *code,
        // SPEC: a project-external extension that cannot be suppressed makes
        // the outcome Blocked.
        Err(CliError::Run(crate::run::RunError::MaskImpossible { .. })) => 1,
        Err(CliError::Run(
            crate::run::RunError::Lockfile(_)
            | crate::run::RunError::Invalid(_)
            | crate::run::RunError::Discovery(_)
            | crate::run::RunError::Project(_)
            | crate::run::RunError::User(_)
            | crate::run::RunError::Bind(_)
            | crate::run::RunError::Namespace(_)
            | crate::run::RunError::Unprivileged(_)
            | crate::run::RunError::Mount(_)
            | crate::run::RunError::Command(_),
        )) => 2,
        Err(
            CliError::Project { .. }
            | CliError::Store(_)
            | CliError::Invalid(_)
            | CliError::Discovery(_)
            | CliError::Declined { .. }
            | CliError::Refused(_)
            | CliError::Mount(_),
        ) => 2,
    }
}

/// Shared context: where the project is.
pub struct Context {
    pub dir: PathBuf,
    pub project: OwnedFd,
}

impl Context {
    pub fn open(dir: Option<PathBuf>) -> Result<Context, CliError> {
        let dir = dir.unwrap_or_else(|| PathBuf::from("."));
        let project = crate::core::fs::open_project(&dir).map_err(|source| CliError::Project {
            dir: dir.clone(),
            source,
        })?;
        Ok(Context { dir, project })
    }
}

/// Operational logs go to stderr through `tracing`, filtered by `SEAL_LOG`
/// (for example `SEAL_LOG=info` or `SEAL_LOG=sealfs=debug`); warnings only by
/// default, and only errors from the FUSE library (it warns about the second
/// unmount after an external `umount`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SEAL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,fuser=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Entry point of the `seal` binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are human text too: stderr, exit 0.
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
            eprint!("{}", e.render());
            return ExitCode::from(code);
        }
    };
    let name = match &cli.command {
        Command::Init(_) => "init",
        Command::Pin(_) => "pin",
        Command::Verify(_) => "verify",
        Command::Mount(_) => "mount",
        Command::Run(_) => "run",
        Command::Why(_) => "why",
    };
    init_logging();
    let result = Context::open(cli.directory).and_then(|ctx| match cli.command {
        Command::Init(a) => init::run(&ctx, a.warn, a.verbose),
        Command::Pin(a) => pin::run(&ctx, &a.paths, a.prune, a.verbose),
        Command::Verify(a) => {
            verify::run(&ctx, verify::Mode::from_flags(a.json, a.quiet), a.verbose)
        }
        Command::Mount(a) => mount::run(ctx, a.mountpoint, a.audit_log, a.allow_other),
        Command::Run(a) => run::run(
            ctx,
            run::RunArgs {
                audit_log: a.audit_log,
                user: a.user,
                dry_run: a.dry_run,
                json: a.json,
                binds: run::pairs(&a.ro_bind, false)
                    .into_iter()
                    .chain(run::pairs(&a.bind, true))
                    .collect(),
                command: a.command,
            },
        ),
        Command::Why(a) => why::run(&ctx, &a.path),
    });
    // A fatal error is reported even under `verify --quiet`, as the reference
    // CLI does: exit 2 with no word is a riddle in a CI log.
    match &result {
        // The reference CLI's words for a declined prompt.
        Err(CliError::Declined { command }) => eprintln!("seal: {command} aborted"),
        Err(e) => eprintln!("seal: {name}: {e}"),
        Ok(_) => {}
    }
    ExitCode::from(exit_code(&result))
}

//! The `seal` command line: argument parsing, dispatch, and the one place
//! where errors become exit codes.
//!
//! Results and errors go to stderr as human text; stdout carries only what a
//! tool or a person asked to read: machine output (`--json`, `--format`), and
//! the help, version, completion and man page texts (clap's convention). With
//! a machine format, a fatal error is also written to stdout in that format
//! (`{"error": ..., "exit": 2}` for JSON), so a tool never parses an empty
//! stdout; docs/LOCKFILE.md records this departure from SPEC §CLI Tool
//! Behaviors. Exit codes follow SPEC's table: 0 success, 1 verify Blocked
//! (and `seal run` when a mask cannot be applied), 2 fatal.

/// `eprint!` for every human line `seal` writes: the same text on stderr,
/// but a stderr that cannot take it (closed by `seal verify 2>&1 | head -1`)
/// loses the text and nothing else, where `eprint!` panics and turns the
/// command's exit code into 101. Defined before the modules so that each of
/// them can use it; `clippy::print_stderr` (denied in `lib.rs`) keeps
/// `eprint!` out.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = std::io::stderr().lock().write_fmt(format_args!($($arg)*));
    }};
}

/// [`say!`] with a newline, as `eprintln!` is `eprint!` with one.
macro_rules! sayln {
    () => { say!("\n") };
    ($($arg:tt)*) => { say!("{}\n", format_args!($($arg)*)) };
}

mod approval;
mod diff;
mod formats;
mod hidden;
mod init;
mod lets_run;
mod meta;
mod mount;
mod output;
mod pin;
mod policy;
mod progress;
mod prompt;
mod run;
mod status;
mod verify;
mod why;

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

use seal_core::discovery::DiscoveryError;
use seal_core::lockfile::LockfileError;
use seal_core::store::StoreError;

/// `seal --version`: the version and the build profile, and whether the
/// tests' hooks are built in (only `cargo test` builds them; a machine
/// policy is never read from anywhere else in a binary without them).
const VERSION: &str = match (cfg!(debug_assertions), seal_gate::policy::TEST_HOOKS) {
    (true, true) => concat!(
        env!("CARGO_PKG_VERSION"),
        " (debug build, with test hooks: the machine policy is $SEAL_TEST_POLICY_PATH)"
    ),
    (true, false) => concat!(env!("CARGO_PKG_VERSION"), " (debug build)"),
    (false, true) => concat!(
        env!("CARGO_PKG_VERSION"),
        " (release build, with test hooks: the machine policy is $SEAL_TEST_POLICY_PATH)"
    ),
    (false, false) => concat!(env!("CARGO_PKG_VERSION"), " (release build)"),
};

#[derive(Debug, Parser)]
#[command(
    name = "seal",
    version = VERSION,
    about = "Pin and verify AI-agent extensions with a Seal v1 seal.json, and serve only verified ones",
    long_about = None
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
    /// Serve a view of the project where bundles are readable only after a
    /// fresh verification (read-only unless --writable; stays in the
    /// foreground)
    Mount(MountArgs),
    /// Run a command (an agent) in a private namespace: the sealed view at the
    /// project's own path, every project-external extension masked
    Run(RunArgs),
    /// Explain how one path is classified and what is decided about it
    Why(WhyArgs),
    /// Show what changed in each bundle that is not verified, against the
    /// approved bytes from git history; exit codes as verify's
    Diff(DiffArgs),
    /// Overview: the verification, what changed in each bundle that is not
    /// verified, and the agent artifacts the sealed view hides; exit codes
    /// as verify's
    Status(StatusArgs),
    /// Print the policy in force here (built-in defaults, the machine
    /// policy file, the project's seal.json) and where each setting comes from
    Policy(PolicyArgs),
    /// Print a shell completion script on stdout
    Completions(meta::CompletionsArgs),
    /// Print the man page (roff) of seal, or of one command, on stdout
    Man(meta::ManArgs),
}

#[derive(Debug, Args)]
struct PolicyArgs {
    /// Print it as JSON on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DiffArgs {
    /// Bundles to show: a bundle root, a path inside one, or a directory
    /// above bundles (default: every bundle that is not verified)
    #[arg(value_name = "PATH")]
    paths: Vec<OsString>,
    /// Print it as JSON on stdout (the same as --format json; schema:
    /// docs/JSON.md)
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Print it on stdout as json (the --json document) or markdown (a
    /// summary for a pull request, such as a GitHub job summary)
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<diff::Format>,
    /// First show what the approval changes from REV's seal.json to the
    /// project's (a pull request's base: the bundles newly approved,
    /// re-approved with other files or no longer approved, their files'
    /// diffs and what they let run); REV must be in the local git history
    #[arg(long, value_name = "REV")]
    base: Option<String>,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// Print it as JSON on stdout (schema: docs/JSON.md)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct WhyArgs {
    /// A path in the project (relative to it) or outside it (absolute)
    path: PathBuf,
    /// Print the explanation as JSON on stdout (schema: docs/JSON.md)
    #[arg(long)]
    json: bool,
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
    /// Serve the project read-only (default: writable, except for
    /// extensions and seal.json)
    #[arg(long)]
    read_only: bool,
    /// Verify a bundle in full at every open, even while the kernel's change
    /// feed proves it unchanged
    #[arg(long)]
    rehash_every_open: bool,
    /// With --read-only: let the kernel open files itself (as seal mount
    /// --kernel-opens; for trees that do not change during the run)
    #[arg(long, requires = "read_only")]
    kernel_opens: bool,
    // The exit codes in the words the README and the man page use.
    #[arg(long, help = dry_run_help())]
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
    /// Let the command write the host path PATH too (repeatable); the rest of
    /// the home and of the filesystem is read-only outside the project, /tmp,
    /// the agents' state and build caches (see --dry-run)
    #[arg(long = "allow-write", value_name = "PATH")]
    allow_write: Vec<PathBuf>,
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
    /// Let ordinary files be changed through the view (extensions and
    /// seal.json stay read-only); the same as -o writable
    #[arg(long)]
    writable: bool,
    /// Verify a bundle in full at every open, even while the kernel's change
    /// feed proves it unchanged (slower; the same as -o rehash_every_open)
    #[arg(long)]
    rehash_every_open: bool,
    /// Read-only view: let the kernel open files itself and keep their pages
    /// (an open costs no round trip; a bundle file is decided when it is
    /// looked up, and the kernel keeps that answer until the bundle
    /// changes). For trees that do not change while they are read, such as
    /// CI checkouts; see docs/SECURITY.md (the same as -o kernel_opens)
    #[arg(long)]
    kernel_opens: bool,
    // The help is built from the one list of known options (cli/mount.rs),
    // which the unknown-option error names too.
    #[arg(short = 'o', value_name = "OPTIONS", help = mount::options_help())]
    options: Vec<String>,
    /// Detach once the view is mounted (the parent exits 0 when it is
    /// ready, or with the error); what fstab and mount(8) expect
    #[arg(long)]
    daemon: bool,
}

#[derive(Debug, Args)]
struct InitArgs {
    /// Set policy to "warn" instead of "block"
    #[arg(long)]
    warn: bool,
    /// List every file of each bundle (without it, the first 20)
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    review: ReviewArgs,
}

/// How `init` and `pin` show what they would approve before they ask.
#[derive(Debug, Args)]
struct ReviewArgs {
    /// Show the diff of every changed file (against the approved bytes in
    /// git history), on stderr before the question
    #[arg(long)]
    diff: bool,
    /// Also print the plan as JSON on stdout before the question (schema:
    /// docs/JSON.md); the question is still asked: add --dry-run for the
    /// plan alone
    #[arg(long)]
    json: bool,
    /// Show the plan and stop: nothing is asked and nothing is written (exit
    /// 0)
    #[arg(long)]
    dry_run: bool,
}

impl ReviewArgs {
    fn show(&self, verbose: bool) -> approval::Show {
        approval::Show {
            diffs: self.diff,
            json: self.json,
            dry_run: self.dry_run,
            all_files: verbose || self.diff,
        }
    }
}

#[derive(Debug, Args)]
struct PinArgs {
    /// Bundle roots to pin (default: every discovered and recorded bundle)
    #[arg(value_name = "PATH")]
    paths: Vec<OsString>,
    /// Drop recorded bundles that are no longer on disk
    #[arg(long)]
    prune: bool,
    /// List every changed file of each bundle (without it, the first 20)
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    review: ReviewArgs,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// Print the result as JSON on stdout (the same as --format json)
    #[arg(long, conflicts_with_all = ["quiet", "format"])]
    json: bool,
    /// Print the result on stdout as json (the --json document), github
    /// (workflow-command annotations) or sarif (SARIF 2.1.0, for code scanning)
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "quiet")]
    format: Option<verify::OutputFormat>,
    /// Print nothing; the exit code is the result
    #[arg(short, long)]
    quiet: bool,
    /// Show modified, added and missing files of each mismatched bundle
    #[arg(short, long)]
    verbose: bool,
    /// Also count every agent artifact no discovery pattern covers (found
    /// with seal's built-in table of agent surfaces) as an Unverified
    /// bundle; the machine policy's "strictVerify" sets it
    #[arg(long)]
    strict: bool,
}

/// The exit code of `seal run --dry-run`, in the one wording `--help`, the
/// man page and the README use: the dry run exits as the real run would
/// before starting the command, which is not `seal verify`'s code (a
/// Blocked verification only hides bundles; the command still starts).
pub const DRY_RUN_EXIT: &str = "exits as the run would before starting the command: 0 when the \
     command would start (also when the verification is Blocked: the bundles that are not \
     verified are hidden from it), 1 when a project-external location cannot be masked, 2 when \
     seal.json is missing or invalid";

fn dry_run_help() -> String {
    format!(
        "Print what the command would see and which locations would be masked, then stop: it \
         {DRY_RUN_EXIT}"
    )
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
    /// The machine policy file is refused.
    Policy(seal_gate::policy::PolicyError),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Project { dir, source } => {
                write!(
                    f,
                    "cannot open project directory {}: {source}",
                    seal_core::escape::escaped_os(dir.as_os_str())
                )
            }
            CliError::Store(e) => write!(f, "{e}"),
            CliError::Invalid(e) => write!(f, "{e}"),
            CliError::Discovery(e) => write!(f, "{e}"),
            CliError::Declined { command } => write!(f, "{command} aborted"),
            CliError::Refused(msg) => f.write_str(msg),
            CliError::Mount(e) => write!(f, "{e}"),
            CliError::Run(e) => write!(f, "{e}"),
            CliError::Policy(e) => write!(f, "{e}"),
        }
    }
}

impl CliError {
    /// A plan that cannot go ahead: `heading` introduces the roots that
    /// block it and `footer` follows them.
    pub fn from_plan(e: seal_core::plan::PlanError, heading: &str, footer: &str) -> CliError {
        use seal_core::plan::PlanError;
        match e {
            PlanError::Discovery(e) => CliError::Discovery(e),
            PlanError::Refused(r) => CliError::Refused(r.to_string()),
            PlanError::Blocked(blockers) => {
                let lines: Vec<String> = blockers.iter().map(ToString::to_string).collect();
                CliError::Refused(format!("{heading}:\n  {}{footer}", lines.join("\n  ")))
            }
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
            | crate::run::RunError::Policy(_)
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
            | CliError::Mount(_)
            | CliError::Policy(_),
        ) => 2,
    }
}

/// The machine policy of this machine (read once); a refused policy file
/// ends every command that reads it with exit 2.
pub fn machine_policy() -> Result<&'static seal_gate::policy::MachinePolicy, CliError> {
    seal_gate::policy::machine().map_err(CliError::Policy)
}

/// A gate that answers the view's questions about the project in `ctx` the
/// way the view would (the machine policy in force; `lock` as `seal.json`,
/// `implied` when it stands in for a missing one), explaining only: the
/// commands that say what the view shows ask it.
pub fn explaining_gate(
    ctx: &Context,
    lock: &seal_core::lockfile::Lockfile,
    implied: bool,
) -> Result<seal_gate::Gate, CliError> {
    let links = ctx.link_rule()?;
    seal_gate::Gate::for_explaining(ctx.project.as_fd(), lock, machine_policy()?, implied, links)
        .map_err(|source| CliError::Project {
            dir: ctx.dir.clone(),
            source,
        })
}

/// Shared context: where the project is.
pub struct Context {
    pub dir: PathBuf,
    pub project: OwnedFd,
}

impl Context {
    /// The `-C DIR` the command was given (none for the current directory),
    /// to repeat in commands suggested to the user.
    pub fn project_arg(&self) -> Option<&std::path::Path> {
        (self.dir != std::path::Path::new(".")).then_some(self.dir.as_path())
    }

    /// The project directory's canonical path.
    pub fn canonical_dir(&self) -> Result<PathBuf, CliError> {
        std::fs::canonicalize(&self.dir).map_err(|source| CliError::Project {
            dir: self.dir.clone(),
            source,
        })
    }

    /// Where the project is, for following links at surface paths as the
    /// gate does (the view is the project itself here): its canonical path
    /// and the path as given.
    pub fn link_rule(&self) -> Result<seal_gate::links::LinkRule, CliError> {
        let canonical = self.canonical_dir()?;
        let given = std::path::absolute(&self.dir).unwrap_or_else(|_| canonical.clone());
        Ok(seal_gate::links::LinkRule::new(
            &canonical,
            &[canonical.clone(), given],
        ))
    }

    pub fn open(dir: Option<PathBuf>) -> Result<Context, CliError> {
        let dir = dir.unwrap_or_else(|| PathBuf::from("."));
        let project = seal_core::fs::open_project(&dir).map_err(|source| CliError::Project {
            dir: dir.clone(),
            source,
        })?;
        Ok(Context { dir, project })
    }
}

/// Operational logs go to stderr through `tracing`, filtered by `SEAL_LOG`
/// (for example `SEAL_LOG=info` or `SEAL_LOG=sealfs=debug`); warnings only by
/// default, and only errors from the FUSE library (it warns about the second
/// unmount after an external `umount`). Colours only on a terminal: a CI log
/// or a journal would show the escape codes raw.
fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("SEAL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,fuser=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A line that cannot be written is lost, nothing else: by default
        // the subscriber reports it with `eprintln!`, which panics when
        // stderr is a closed pipe (`seal run ... 2>&1 | head`), and a panic
        // on a thread that serves the view left its requests unanswered.
        .log_internal_errors(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Entry point of the `seal` binary.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // `mount -t fuse.seal` and fstab run /sbin/mount.fuse.seal (a link to
    // this binary) with mount(8)'s helper arguments.
    if mount::invoked_as_helper(args.first()) {
        init_logging();
        let result = mount::helper(&args[1..]);
        report_error("mount", &result, None);
        return ExitCode::from(exit_code(&result));
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap's convention: help and version on stdout with exit 0,
            // usage errors on stderr with exit 2.
            let _ = e.print();
            let code = e.exit_code();
            if code != 0 {
                // Only a command that has a machine format writes its error
                // in one (`seal mount --json` is refused, on stderr only).
                let machine = formats::Machine::requested_in(args.get(1..).unwrap_or(&[]))
                    .filter(|_| speaks_machine_format(&args));
                // The first line of clap's text, without its "error: ".
                let text = e.render().to_string();
                let first = text.lines().next().unwrap_or("usage error");
                let message = first.strip_prefix("error: ").unwrap_or(first);
                formats::print_error(machine, message, code as u8);
            }
            return ExitCode::from(code as u8);
        }
    };
    let machine = match &cli.command {
        Command::Verify(a) => verify::Mode::from_flags(a.json, a.format, a.quiet).machine(),
        Command::Run(a) if a.json => Some(formats::Machine::Json),
        Command::Policy(a) if a.json => Some(formats::Machine::Json),
        Command::Why(a) if a.json => Some(formats::Machine::Json),
        Command::Status(a) if a.json => Some(formats::Machine::Json),
        Command::Diff(a) if a.json || a.format == Some(diff::Format::Json) => {
            Some(formats::Machine::Json)
        }
        Command::Diff(a) if a.format == Some(diff::Format::Markdown) => {
            Some(formats::Machine::Markdown)
        }
        // The plan is on stdout before any question: an error after it
        // (declined) is not a second document, one before it is the only one.
        Command::Init(a) if a.review.json => Some(formats::Machine::Json),
        Command::Pin(a) if a.review.json => Some(formats::Machine::Json),
        _ => None,
    };
    let name = match &cli.command {
        Command::Init(_) => "init",
        Command::Pin(_) => "pin",
        Command::Verify(_) => "verify",
        Command::Mount(_) => "mount",
        Command::Run(_) => "run",
        Command::Why(_) => "why",
        Command::Status(_) => "status",
        Command::Diff(_) => "diff",
        Command::Policy(_) => "policy",
        Command::Completions(a) => return meta::completions(Cli::command(), a),
        Command::Man(a) => return meta::man(Cli::command(), a),
    };
    init_logging();
    let result = Context::open(cli.directory).and_then(|ctx| match cli.command {
        Command::Init(a) => init::run(&ctx, a.warn, a.review.show(a.verbose)),
        Command::Pin(a) => pin::run(&ctx, &a.paths, a.prune, a.review.show(a.verbose)),
        Command::Verify(a) => verify::run(
            &ctx,
            verify::Mode::from_flags(a.json, a.format, a.quiet),
            a.verbose,
            a.strict,
        ),
        Command::Mount(a) => mount::run(
            ctx,
            mount::MountArgs {
                mountpoint: a.mountpoint,
                audit_log: a.audit_log,
                allow_other: a.allow_other,
                writable: a.writable,
                rehash_every_open: a.rehash_every_open,
                kernel_opens: a.kernel_opens,
                options: a.options,
                daemon: a.daemon,
            },
        ),
        Command::Run(a) => run::run(
            ctx,
            run::RunArgs {
                audit_log: a.audit_log,
                user: a.user,
                read_only: a.read_only,
                rehash_every_open: a.rehash_every_open,
                kernel_opens: a.kernel_opens,
                dry_run: a.dry_run,
                json: a.json,
                binds: run::pairs(&a.ro_bind, false)
                    .into_iter()
                    .chain(run::pairs(&a.bind, true))
                    .collect(),
                allow_write: a.allow_write,
                command: a.command,
            },
        ),
        Command::Why(a) => why::run(&ctx, &a.path, a.json),
        Command::Status(a) => status::run(&ctx, a.json),
        Command::Diff(a) => diff::run(
            &ctx,
            &a.paths,
            a.format.or(a.json.then_some(diff::Format::Json)),
            a.base.as_deref(),
        ),
        Command::Policy(a) => policy::run(&ctx, a.json),
        Command::Completions(_) | Command::Man(_) => unreachable!("answered above"),
    });
    report_error(name, &result, machine);
    ExitCode::from(exit_code(&result))
}

/// True when the command named on `args` has `--json` or `--format`.
fn speaks_machine_format(args: &[OsString]) -> bool {
    let mut words = args.iter().skip(1).map(|a| a.to_str().unwrap_or(""));
    let mut command = None;
    while let Some(word) = words.next() {
        match word {
            "-C" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => {
                command = Some(w);
                break;
            }
        }
    }
    command
        .and_then(|name| Cli::command().find_subcommand(name).cloned())
        .is_some_and(|c| {
            c.get_arguments()
                .any(|a| matches!(a.get_long(), Some("json" | "format")))
        })
}

/// Prints a fatal error: always on stderr (even under `verify --quiet`, as
/// the reference CLI does: exit 2 with no word is a riddle in a CI log), and
/// on stdout too in the machine format that was asked for.
fn report_error(name: &str, result: &Result<Done, CliError>, machine: Option<formats::Machine>) {
    let Err(e) = result else { return };
    match e {
        // The reference CLI's words for a declined prompt.
        CliError::Declined { command } => sayln!("seal: {command} aborted"),
        e => sayln!("seal: {name}: {e}"),
    }
    formats::print_error(machine, &e.to_string(), exit_code(result));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words, with Markdown's backticks and roff's escaped hyphens undone.
    fn words(text: &str) -> String {
        text.replace(['`'], "")
            .replace("\\-", "-")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_dry_run_exit_codes_have_one_wording_everywhere() {
        let wording = words(DRY_RUN_EXIT);
        let help = Cli::command()
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(words(&help).contains(&wording), "{help}");
        let readme = words(include_str!("../../README.md"));
        assert!(readme.contains(&wording), "the README says it otherwise");
        let page = meta::page_text(Cli::command(), Some("run"));
        assert!(words(&page).contains(&wording), "{page}");
        // Nothing says the dry run exits with verify's code.
        assert!(!words(&help).contains("verify exit code"), "{help}");
    }
}

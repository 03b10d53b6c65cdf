//! `seal init | pin | verify` through the real binary on temporary projects:
//! exit codes, the stdout/stderr split, prompts answered on stdin, the exact
//! bytes of `seal.json` and of `verify --json`, concurrent pins, and the
//! hostile trees (symlinks, FIFOs, unreadable files, NFC twins, non-UTF-8 and
//! terminal-escape names).
//!
//! Every run goes through [`Project::seal`], which also enforces the stream
//! contract on every call: stdout is empty unless a machine format (`--json`,
//! `--format`) or a text to read (help, version, completions, man page) was
//! asked for, and with `--json` an exit 2 prints `{"error": ..., "exit": 2}`. Expected lockfiles are written by a small
//! independent encoder in this file, with hashes computed by `sha2` directly.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

mod support;

const SEAL: &str = env!("CARGO_BIN_EXE_seal");
const TIMEOUT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` with `stdin` fed and closed, failing the test after [`TIMEOUT`]
/// (a FIFO that blocks the binary must fail the test, not hang it).
fn run(mut cmd: Command, stdin: &[u8]) -> Out {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn seal");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The binary may exit without reading; a broken pipe is fine.
        let _ = input.write_all(&data);
    });
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out_pipe.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err_pipe.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("seal did not finish within {TIMEOUT:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    writer.join().unwrap();
    let stdout = out_reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    Out {
        code: status.code().expect("exited normally, not by a signal"),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// What pin and init say before the question when nothing they approve
/// runs anything.
const NOTHING_RUNS: &str = "What this approval lets run: no MCP server, hook, plugin, command or \
                            script was found (the text of its files still instructs the agent)\n";

/// The stream contract, checked on every run: SPEC §CLI Tool Behaviors,
/// except that a fatal error with `--json` is a JSON document on stdout too
/// (docs/LOCKFILE.md records the departure).
fn check_streams(args: &[&OsStr], out: &Out) {
    let args: Vec<&str> = args
        .iter()
        .map(|a| a.to_str().unwrap_or(""))
        .take_while(|a| *a != "--")
        .collect();
    let json = args.contains(&"--json")
        || args.contains(&"--format=json")
        || args.windows(2).any(|w| w == ["--format", "json"]);
    let machine = json || args.iter().any(|a| a.starts_with("--format"));
    let text = args
        .iter()
        .any(|a| ["--help", "-h", "--version", "-V"].contains(a))
        || args
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|c| ["help", "completions", "man"].contains(c));
    // Only the commands with a machine format write their errors in it.
    let command = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || args[i - 1] != "-C"))
        .map(|(_, a)| *a);
    let speaks_json = command.is_some_and(|c| {
        [
            "verify", "run", "policy", "why", "status", "diff", "init", "pin",
        ]
        .contains(&c)
    });
    if json && out.code == 2 && speaks_json {
        let doc: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: exit 2 without a JSON error ({e}): {out:?}"));
        if doc.get("command").is_some() {
            // init and pin print their plan before they ask: declined, it
            // stays the one document.
            assert!(out.stderr.ends_with("aborted\n"), "{args:?}: {out:?}");
            return;
        }
        assert_eq!(doc["exit"], 2, "{args:?}: {}", out.stdout);
        assert!(doc["error"].is_string(), "{args:?}: {}", out.stdout);
        assert_eq!(doc.as_object().unwrap().len(), 2, "{}", out.stdout);
    } else if !(text || machine && speaks_json) {
        assert_eq!(
            out.stdout, "",
            "stdout must be empty for {args:?} (exit {})",
            out.code
        );
    }
}

struct Project {
    tmp: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.tmp.path()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    fn file(&self, rel: &str, data: impl AsRef<[u8]>) -> &Project {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
        self
    }

    fn raw_file(&self, rel: &[u8], data: &[u8]) {
        let p = self.root().join(OsStr::from_bytes(rel));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }

    fn dir(&self, rel: &str) -> &Project {
        std::fs::create_dir_all(self.path(rel)).unwrap();
        self
    }

    fn symlink(&self, target: &str, rel: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    fn fifo(&self, rel: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    }

    fn set_lock(&self, text: &str) -> &Project {
        std::fs::write(self.path("seal.json"), text).unwrap();
        self
    }

    fn lock(&self) -> String {
        String::from_utf8(std::fs::read(self.path("seal.json")).expect("seal.json exists")).unwrap()
    }

    fn has_lock(&self) -> bool {
        std::fs::symlink_metadata(self.path("seal.json")).is_ok()
    }

    /// Top-level directory entries (to spot temporary or lock files left behind).
    fn top_names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Runs `seal ARGS` in the project root with `stdin`.
    fn seal(&self, args: &[&str], stdin: &str) -> Out {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.seal_os(&args, stdin.as_bytes())
    }

    fn seal_os(&self, args: &[&OsStr], stdin: &[u8]) -> Out {
        let mut cmd = Command::new(SEAL);
        cmd.args(args).current_dir(self.root());
        let out = run(cmd, stdin);
        check_streams(args, &out);
        out
    }

    /// `seal ARGS` must exit 2 and leave seal.json exactly as it was.
    #[track_caller]
    fn refused(&self, args: &[&str], stdin: &str) -> Out {
        let before = std::fs::read(self.path("seal.json")).ok();
        let out = self.seal(args, stdin);
        assert_eq!(out.code, 2, "{args:?} should exit 2: {out:?}");
        assert_eq!(
            std::fs::read(self.path("seal.json")).ok(),
            before,
            "{args:?} changed seal.json"
        );
        out
    }

    /// `seal ARGS` must exit 0.
    #[track_caller]
    fn ok(&self, args: &[&str], stdin: &str) -> Out {
        let out = self.seal(args, stdin);
        assert_eq!(out.code, 0, "{args:?} should exit 0: {out:?}");
        out
    }
}

// ---------------------------------------------------------------------------
// An independent expectation of seal.json and of verify --json
// ---------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha(data: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(data)))
}

/// Go encoding/json string escaping (HTML-safe), written out longhand.
fn go_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One bundle as the test expects it in seal.json.
struct B<'a> {
    key: &'a str,
    revision: Option<&'a str>,
    /// (path, file content)
    files: Vec<(&'a str, &'a [u8])>,
}

fn b<'a>(key: &'a str, files: &[(&'a str, &'a [u8])]) -> B<'a> {
    B {
        key,
        revision: None,
        files: files.to_vec(),
    }
}

/// The canonical seal.json for this state (SPEC §Lockfile Serialization).
fn lockfile(discovery: &[&str], policy: &str, bundles: &[B<'_>]) -> String {
    let mut out = String::from("{\n  \"version\": 1,\n");
    if !discovery.is_empty() {
        let mut d: Vec<&str> = discovery.to_vec();
        d.sort();
        let items: Vec<String> = d.iter().map(|p| format!("    {}", go_str(p))).collect();
        out.push_str(&format!(
            "  \"discovery\": [\n{}\n  ],\n",
            items.join(",\n")
        ));
    }
    out.push_str(&format!("  \"policy\": {},\n", go_str(policy)));
    if bundles.is_empty() {
        out.push_str("  \"bundles\": {}\n}\n");
        return out;
    }
    let mut sorted: Vec<&B<'_>> = bundles.iter().collect();
    sorted.sort_by(|x, y| x.key.as_bytes().cmp(y.key.as_bytes()));
    let mut entries = Vec::new();
    for bundle in sorted {
        let mut files: Vec<(&str, String)> =
            bundle.files.iter().map(|(p, d)| (*p, sha(d))).collect();
        files.sort_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));
        let joined: Vec<String> = files.iter().map(|(p, h)| format!("{p}:{h}")).collect();
        let content_hash = sha(joined.join("\n").as_bytes());
        let mut e = format!("    {}: {{\n", go_str(bundle.key));
        if let Some(r) = bundle.revision {
            e.push_str(&format!("      \"revision\": {},\n", go_str(r)));
        }
        e.push_str(&format!(
            "      \"contentHash\": \"{content_hash}\",\n      \"files\": {{\n"
        ));
        let lines: Vec<String> = files
            .iter()
            .map(|(p, h)| format!("        {}: \"{h}\"", go_str(p)))
            .collect();
        e.push_str(&lines.join(",\n"));
        e.push_str("\n      }\n    }");
        entries.push(e);
    }
    out.push_str(&format!(
        "  \"bundles\": {{\n{}\n  }}\n}}\n",
        entries.join(",\n")
    ));
    out
}

const EMPTY_BLOCK: &str = "{\n  \"version\": 1,\n  \"policy\": \"block\",\n  \"bundles\": {}\n}\n";

/// The exact `verify --json` document.
fn report(
    status: &str,
    verified: &[&str],
    unverified: &[&str],
    removed: &[&str],
    mismatch: &[&str],
) -> String {
    let arr = |items: &[&str]| {
        if items.is_empty() {
            "[]".to_string()
        } else {
            let mut v = items.to_vec();
            v.sort();
            let lines: Vec<String> = v.iter().map(|s| format!("    {}", go_str(s))).collect();
            format!("[\n{}\n  ]", lines.join(",\n"))
        }
    };
    format!(
        "{{\n  \"status\": \"{status}\",\n  \"verified\": {},\n  \"unverified\": {},\n  \"removed\": {},\n  \"mismatch\": {}\n}}\n",
        arr(verified),
        arr(unverified),
        arr(removed),
        arr(mismatch)
    )
}

/// A project with `s/*` discovery and no bundles yet.
fn s_project(policy: &str) -> Project {
    let p = Project::new();
    p.set_lock(&lockfile(&["s/*"], policy, &[]));
    p
}

// ---------------------------------------------------------------------------
// Missing and invalid lockfiles, usage errors
// ---------------------------------------------------------------------------

#[test]
fn missing_lockfile_is_fatal_for_every_command() {
    let p = Project::new();
    p.file("s/a/f", "x");
    for args in [
        &["verify"][..],
        &["verify", "--json"],
        &["verify", "--quiet"],
        &["verify", "-v"],
        &["pin"],
        &["pin", "s/a"],
        &["pin", "--prune"],
    ] {
        let out = p.refused(args, "y\n");
        assert!(
            out.stderr.contains("seal.json not found"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!p.has_lock(), "{args:?} created seal.json");
    }
}

#[test]
fn parents_are_never_searched() {
    let p = Project::new();
    p.set_lock(EMPTY_BLOCK).dir("sub/deeper");
    let mut cmd = Command::new(SEAL);
    cmd.arg("verify").current_dir(p.path("sub/deeper"));
    let out = run(cmd, b"");
    check_streams(&[OsStr::new("verify")], &out);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("seal.json not found"), "{}", out.stderr);
}

#[test]
fn invalid_lockfile_is_fatal_whatever_the_policy() {
    let p = Project::new();
    p.set_lock("{\"version\": 1, \"policy\": \"warn\", \"bundles\": {}, \"Version\": 1}");
    for args in [
        &["verify"][..],
        &["verify", "--json"],
        &["verify", "-q"],
        &["pin"],
        &["pin", "--prune"],
    ] {
        let out = p.refused(args, "y\n");
        assert!(
            out.stderr.contains("[unknown-field]"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("\"Version\""), "{}", out.stderr);
    }
    p.file("s/a/f", "x");
    let out = p.refused(&["pin", "s/a"], "y\n");
    assert!(out.stderr.contains("[unknown-field]"), "{}", out.stderr);
}

#[test]
fn spec_file_format_example_is_fatal() {
    let p = Project::new();
    p.set_lock(include_str!("golden/spec-file-format-example.json"));
    p.file(".agents/skills/code-review/SKILL.md", "x");
    let out = p.refused(&["verify", "--json"], "");
    assert!(out.stderr.contains("[content-hash]"), "{}", out.stderr);
    p.refused(&["pin"], "y\n");
}

#[test]
fn fatal_errors_are_reported_even_under_quiet() {
    let p = Project::new();
    let out = p.refused(&["verify", "--quiet"], "");
    assert_eq!(
        out.stderr,
        "seal: verify: seal.json not found in the project directory; run 'seal init' first\n"
    );
}

#[test]
fn json_with_quiet_is_a_usage_error_reported_before_the_lockfile_is_read() {
    let p = Project::new();
    for args in [
        &["verify", "--json", "--quiet"][..],
        &["verify", "--quiet", "--json"],
        &["verify", "--json", "-q"],
        &["verify", "-q", "--json", "-v"],
    ] {
        let out = p.refused(args, "");
        assert!(
            out.stderr.contains("--json") && out.stderr.contains("--quiet"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("seal.json"),
            "the lockfile was looked at: {}",
            out.stderr
        );
    }
    // Also with an invalid lockfile present: the usage error wins.
    p.set_lock("garbage");
    let out = p.refused(&["verify", "--json", "--quiet"], "");
    assert!(!out.stderr.contains("json-syntax"), "{}", out.stderr);
}

#[test]
fn unknown_commands_and_flags_exit_2() {
    let p = Project::new();
    p.set_lock(EMPTY_BLOCK);
    for args in [
        &[][..],
        &["frobnicate"],
        &["verify", "--yes"],
        &["pin", "--yes"],
        &["pin", "-y"],
        &["pin", "--force"],
        &["init", "--force"],
        &["verify", "--format=xml"],
        &["verify", "--format"],
        &["-C"],
    ] {
        let out = p.refused(args, "y\n");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_and_version_go_to_stdout_with_exit_0() {
    let p = Project::new();
    for args in [
        &["--help"][..],
        &["-h"],
        &["verify", "--help"],
        &["pin", "--help"],
        &["init", "--help"],
        &["help"],
        &["help", "verify"],
        &["help", "mount"],
    ] {
        let out = p.ok(args, "");
        assert!(out.stdout.contains("Usage:"), "{args:?}: {}", out.stdout);
        assert_eq!(out.stderr, "", "{args:?}");
    }
    let out = p.ok(&["--version"], "");
    // The test binary has the tests' hooks, and says so (tests/build.rs).
    assert!(
        out.stdout.starts_with(&format!(
            "seal {} (debug build, with test hooks",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        out.stdout
    );
    let help = p.ok(&["pin", "--help"], "").stdout;
    for flag in ["--prune", "-v", "-C"] {
        assert!(help.contains(flag), "{help}");
    }
    assert!(
        !help.contains("--yes") && !help.contains("--force"),
        "{help}"
    );
    // `seal help COMMAND` is `seal COMMAND --help`.
    assert_eq!(
        p.ok(&["help", "verify"], "").stdout,
        p.ok(&["verify", "--help"], "").stdout
    );
    let out = p.refused(&["help", "frobnicate"], "");
    assert!(out.stderr.contains("frobnicate"), "{}", out.stderr);
}

#[test]
fn completions_are_generated_from_the_parser() {
    let p = Project::new();
    for (shell, marker) in [
        ("bash", "complete -F _seal"),
        ("zsh", "#compdef seal"),
        ("fish", "complete -c seal"),
    ] {
        let out = p.ok(&["completions", shell], "");
        assert!(out.stdout.contains(marker), "{shell}: {}", out.stdout);
        // Every command and a command's own flags are offered.
        for word in ["verify", "mount", "completions", "prune", "format", "sarif"] {
            assert!(out.stdout.contains(word), "{shell} lacks {word}");
        }
    }
    let out = p.refused(&["completions", "tcsh"], "");
    assert!(out.stderr.contains("tcsh"), "{}", out.stderr);
    // The bash script is valid bash.
    let script = p.ok(&["completions", "bash"], "").stdout;
    let st = Command::new("bash")
        .args(["-n", "-c", &script])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn man_pages_are_generated_from_the_parser() {
    let p = Project::new();
    let top = p.ok(&["man"], "").stdout;
    assert!(
        top.starts_with(".ie") || top.contains(".TH seal 1"),
        "{top}"
    );
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
    ] {
        assert!(top.contains(section), "seal(1) lacks {section}");
    }
    let verify = p.ok(&["man", "verify"], "").stdout;
    assert!(verify.contains(".TH seal-verify 1"), "{verify}");
    for flag in ["\\-\\-json", "\\-\\-format", "\\-\\-quiet", "\\-C"] {
        assert!(verify.contains(flag), "seal-verify(1) lacks {flag}");
    }
    assert!(!verify.contains(".SH SUBCOMMANDS"), "{verify}");
    let out = p.refused(&["man", "frobnicate"], "");
    assert!(out.stderr.contains("frobnicate"), "{}", out.stderr);
    // groff renders it without warnings, when installed.
    if Command::new("groff").arg("-v").output().is_ok() {
        let mut child = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(top.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "groff warnings");
    }
}

#[test]
fn with_json_fatal_errors_are_json_on_stdout_too() {
    let p = Project::new();
    // Missing seal.json.
    for args in [&["verify", "--json"][..], &["verify", "--format", "json"]] {
        let out = p.refused(args, "");
        assert_eq!(
            out.stdout,
            "{\"error\": \"seal.json not found in the project directory; run 'seal init' first\", \"exit\": 2}\n"
        );
        // The human line is still on stderr.
        assert!(
            out.stderr.starts_with("seal: verify: seal.json not found"),
            "{}",
            out.stderr
        );
    }
    // An invalid lockfile; a usage error (reported before the lockfile is read).
    p.set_lock("garbage");
    let out = p.refused(&["verify", "--json"], "");
    assert!(out.stdout.contains("json-syntax"), "{}", out.stdout);
    let out = p.refused(&["verify", "--json", "--quiet"], "");
    assert!(out.stdout.contains("--quiet"), "{}", out.stdout);
    let out = p.refused(&["verify", "--json", "--yes"], "");
    assert!(out.stdout.contains("--yes"), "{}", out.stdout);
    // seal run --dry-run --json.
    let out = p.refused(&["run", "--dry-run", "--json"], "");
    assert!(out.stdout.contains("json-syntax"), "{}", out.stdout);
    // Without --json, stdout stays empty (checked by the harness); a --json
    // after `--` belongs to the command seal run would start.
    let out = p.refused(&["verify"], "");
    assert_eq!(out.stdout, "");
    let out = p.refused(&["run", "--dry-run", "--", "x", "--json"], "");
    assert_eq!(out.stdout, "");
    // A command without a machine format refuses --json on stderr only.
    let out = p.refused(&["mount", "/nowhere", "--json"], "");
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("--json"), "{}", out.stderr);
    // init --json has its plan: an error before it is the document.
    let out = p.refused(&["-C", ".", "init", "--json"], "");
    assert_eq!(
        out.stdout,
        "{\"error\": \"seal.json already exists; init will not overwrite\", \"exit\": 2}\n"
    );
    // In the CI formats: an annotation, a SARIF log that says it failed.
    let out = p.refused(&["verify", "--format", "github"], "");
    assert!(
        out.stdout.starts_with("::error title=seal failed::"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let out = p.refused(&["verify", "--format", "sarif"], "");
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let inv = &doc["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(inv["exitCode"], 2);
}

#[test]
fn dash_c_runs_in_the_named_directory() {
    let p = Project::new();
    p.set_lock(EMPTY_BLOCK);
    let root = p.root().to_str().unwrap();
    for args in [
        &["-C", root, "verify"][..],
        &["verify", "-C", root],
        &["-C", root, "verify", "--json"],
    ] {
        let mut cmd = Command::new(SEAL);
        cmd.args(args).current_dir("/");
        let out = run(cmd, b"");
        let os: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        check_streams(&os, &out);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
    }
    let mut cmd = Command::new(SEAL);
    cmd.args(["-C", root, "verify", "--json"]).current_dir("/");
    assert_eq!(run(cmd, b"").stdout, report("Verified", &[], &[], &[], &[]));
    // init through -C writes there.
    let q = Project::new();
    let mut cmd = Command::new(SEAL);
    cmd.args(["-C", q.root().to_str().unwrap(), "init"])
        .current_dir("/");
    assert_eq!(run(cmd, b"y\n").code, 0);
    assert_eq!(q.lock(), EMPTY_BLOCK);
    let out = p.refused(&["-C", "/nonexistent/seal-project", "verify"], "");
    assert!(
        out.stderr.contains("cannot open project directory"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------

#[test]
fn init_on_an_empty_project_writes_the_empty_lockfile() {
    let p = Project::new();
    let out = p.ok(&["init"], "y\n");
    assert_eq!(
        p.lock(),
        "{\n  \"version\": 1,\n  \"policy\": \"block\",\n  \"bundles\": {}\n}\n"
    );
    assert_eq!(
        out.stderr,
        "Discovery patterns to add:\n  (none)\n\nBundles to add (0):\n\nNo agent bundles or known agent \
         layouts detected in this project. Create empty seal.json with policy: block? [y/N] Wrote \
         seal.json (0 bundles, 0 discovery patterns)\n"
    );
    assert_eq!(
        p.top_names(),
        ["seal.json"],
        "no temporary or lock file left"
    );
    // Its result verifies.
    let out = p.ok(&["verify"], "");
    assert_eq!(
        out.stderr,
        "0 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n"
    );
}

#[test]
fn init_warn_sets_policy_warn() {
    let p = Project::new();
    let out = p.ok(&["init", "--warn"], "yes\n");
    assert_eq!(
        p.lock(),
        "{\n  \"version\": 1,\n  \"policy\": \"warn\",\n  \"bundles\": {}\n}\n"
    );
    assert!(
        out.stderr.contains("policy: warn? [y/N] "),
        "{}",
        out.stderr
    );
}

#[test]
fn init_accepts_every_spelling_of_yes() {
    for answer in [
        "y\n",
        "Y\n",
        "yes\n",
        "YES\n",
        "Yes",
        " y \n",
        "\tyes\t\n",
        "yEs\r\n",
        "y",
    ] {
        let p = Project::new();
        p.ok(&["init"], answer);
        assert_eq!(p.lock(), EMPTY_BLOCK, "{answer:?}");
    }
}

#[test]
fn init_declined_or_unanswered_changes_nothing() {
    for answer in [
        "n\n",
        "N\n",
        "no\n",
        "\n",
        "",
        "yess\n",
        "ye\n",
        "garbage\n",
        "y es\n",
        "nope",
        "\ny\n",
    ] {
        let p = Project::new();
        p.file(".claude/skills/a/SKILL.md", "x");
        let out = p.refused(&["init"], answer);
        assert!(
            out.stderr.ends_with("seal: init aborted\n"),
            "{answer:?}: {}",
            out.stderr
        );
        assert!(!p.has_lock(), "{answer:?}");
        assert_eq!(
            p.top_names(),
            [".claude"],
            "{answer:?}: nothing left behind"
        );
    }
}

#[test]
fn init_refuses_to_overwrite_anything_named_seal_json() {
    let p = Project::new();
    p.set_lock("not even json");
    let out = p.refused(&["init"], "y\n");
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    assert_eq!(p.lock(), "not even json");

    // A dangling symlink counts as existing; its target is not created.
    let q = Project::new();
    q.symlink("elsewhere.json", "seal.json");
    let out = q.refused(&["init"], "y\n");
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_link(q.path("seal.json")).unwrap(),
        Path::new("elsewhere.json")
    );
    assert!(!q.path("elsewhere.json").exists());

    // A directory too.
    let r = Project::new();
    r.dir("seal.json");
    r.refused(&["init", "--warn"], "y\n");
    assert!(r.path("seal.json").is_dir());
}

#[test]
fn init_pins_the_layouts_present() {
    let p = Project::new();
    p.file(".claude/skills/review/SKILL.md", "# Review\n")
        .file(".claude/skills/review/scripts/run.sh", "#!/bin/sh\n")
        .dir(".claude/skills/empty")
        .file(".claude/skills/gitonly/.git/HEAD", "ref");
    let out = p.ok(&["init"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &[".claude/skills/*"],
            "block",
            &[b(
                "./.claude/skills/review",
                &[
                    ("SKILL.md", b"# Review\n"),
                    ("scripts/run.sh", b"#!/bin/sh\n")
                ]
            )]
        )
    );
    assert_eq!(
        out.stderr,
        "Discovery patterns to add:\n  + .claude/skills/*\n\nBundles to add (1):\n  + ./.claude/skills/review  \
         (2 files)\n    added     SKILL.md  (+1 lines)\n    added     scripts/run.sh  (+1 lines)\n\n\
         What this approval lets run (1):\n  script in .claude/skills/review/scripts/run.sh: loads \
         #!/bin/sh\n\nApply these changes? [y/N] Wrote seal.json (1 bundles, 1 discovery patterns)\n"
    );
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Verified", &["./.claude/skills/review"], &[], &[], &[])
    );
}

#[test]
fn init_refuses_unsupported_files_and_writes_nothing() {
    let p = Project::new();
    p.file(".claude/skills/a/SKILL.md", "x");
    p.symlink("/etc/passwd", ".claude/skills/a/link");
    let out = p.refused(&["init"], "y\n");
    assert!(out.stderr.contains("link is a symlink"), "{}", out.stderr);
    assert!(!p.has_lock());
}

// ---------------------------------------------------------------------------
// verify: outcomes, exit codes, output formats
// ---------------------------------------------------------------------------

/// A project with one bundle in each state: ./s/ok Verified, ./s/new
/// Unverified, ./s/gone Removed, ./s/changed Mismatch (one file modified, one
/// added, one missing).
fn four_states(policy: &str) -> Project {
    let p = Project::new();
    p.file("s/ok/SKILL.md", "ok")
        .file("s/new/SKILL.md", "new")
        .file("s/changed/a", "A2")
        .file("s/changed/added", "+");
    p.set_lock(&lockfile(
        &["s/*"],
        policy,
        &[
            b("./s/ok", &[("SKILL.md", b"ok")]),
            b("./s/gone", &[("x", b"x")]),
            b("./s/changed", &[("a", b"A1"), ("missing", b"m")]),
        ],
    ));
    p
}

#[test]
fn verify_reports_all_four_states_under_block() {
    let p = four_states("block");
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        report(
            "Blocked",
            &["./s/ok"],
            &["./s/new"],
            &["./s/gone"],
            &["./s/changed"]
        )
    );
    assert_eq!(out.stderr, "");
    let out = p.seal(&["verify"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "1 verified, 1 unverified, 1 removed, 1 mismatch\n  Mismatch   ./s/changed\n  Removed    ./s/gone\n  \
         Unverified ./s/new\nResult: Blocked (block mode)\n"
    );
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "1 verified, 1 unverified, 1 removed, 1 mismatch\n  Mismatch   ./s/changed\n    modified: a\n    \
         added:    added\n    missing:  missing\n  Removed    ./s/gone\n  Unverified ./s/new\nResult: \
         Blocked (block mode)\n"
    );
    let out = p.seal(&["verify", "--quiet"], "");
    assert_eq!((out.code, out.stderr.as_str()), (1, ""));
}

#[test]
fn verify_formats_for_ci_place_each_bundle_that_is_not_verified_on_a_file() {
    let p = four_states("block");
    let json = p.seal(&["verify", "--json"], "");
    let alias = p.seal(&["verify", "--format", "json"], "");
    assert_eq!((alias.code, &alias.stdout), (json.code, &json.stdout));
    let out = p.seal(&["verify", "--format", "github"], "");
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert!(
        lines[0]
            .starts_with("::error file=s/changed/a,title=seal%3A Mismatch bundle ./s/changed::"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("%0Amodified: a%0Aadded: added%0Amissing: missing"),
        "{}",
        lines[0]
    );
    // Removed: on seal.json, at the line of its key.
    let line = p
        .lock()
        .lines()
        .position(|l| l.contains("\"./s/gone\""))
        .unwrap()
        + 1;
    assert!(
        lines[1].starts_with(&format!("::warning file=seal.json,line={line},title=")),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("::error file=s/new,title="),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("::notice title=seal verify::Result: Blocked"),
        "{}",
        lines[3]
    );
    // The human summary is on stderr as usual (the job log shows both).
    assert!(
        out.stderr.ends_with("Result: Blocked (block mode)\n"),
        "{}",
        out.stderr
    );

    // Paths relative to the repository root when the project is a
    // subdirectory of $GITHUB_WORKSPACE.
    let mut cmd = Command::new(SEAL);
    cmd.args(["verify", "--format", "github"])
        .current_dir(p.root())
        .env("GITHUB_WORKSPACE", p.root().parent().unwrap());
    let out = run(cmd, b"");
    let dir = p.root().file_name().unwrap().to_str().unwrap();
    assert!(
        out.stdout
            .starts_with(&format!("::error file={dir}/s/changed/a,")),
        "{}",
        out.stdout
    );

    let out = p.seal(&["verify", "--format", "sarif"], "");
    assert_eq!(out.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "seal/mismatched-bundle",
            "seal/removed-bundle",
            "seal/unverified-bundle"
        ]
    );
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "s/changed/a"
    );
    assert_eq!(doc["runs"][0]["invocations"][0]["exitCode"], 1);
    assert_eq!(out.stderr, "");
    // --format and --json or --quiet together are usage errors.
    p.refused(&["verify", "--format", "sarif", "--json"], "");
    p.refused(&["verify", "--format", "github", "-q"], "");
}

/// Runs `seal ARGS` in `p` with stderr a pipe whose reader is already gone
/// (`seal verify 2>&1 | head -c0`): every write to it fails with `EPIPE`.
fn seal_with_stderr_closed(p: &Project, args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(SEAL)
        .args(args)
        .current_dir(p.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(support::closed_pipe())
        .spawn()
        .unwrap();
    // The binary may exit without reading; a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    let code = out.status.code().expect("exited normally, not by a signal");
    (code, String::from_utf8(out.stdout).unwrap())
}

/// A closed stderr loses `seal`'s human text and nothing else: each command
/// exits with the code it has when stderr is open (not 101, a panic's, as
/// `eprint!` gave), prints the same machine output, and does its work.
#[test]
fn a_closed_stderr_changes_no_exit_code_and_no_work() {
    let p = four_states("block");
    let asked: &[&[&str]] = &[
        &["verify"],
        &["verify", "-v"],
        &["status"],
        &["why", "s/changed/a"],
        &["policy"],
        &["verify", "--no-such-flag"],
        &["pin", "--dry-run"],
    ];
    for args in asked {
        let open = p.seal(args, "");
        let (code, stdout) = seal_with_stderr_closed(&p, args, "");
        assert_ne!(
            open.stderr, "",
            "{args:?} writes nothing to stderr: a test of nothing"
        );
        assert_eq!((code, stdout), (open.code, open.stdout), "{args:?}");
    }
    // The commands that write: pin pins, and verify then passes.
    let (code, _) = seal_with_stderr_closed(&p, &["pin"], "y\n");
    assert_eq!(code, 0);
    p.ok(&["verify"], "");
    let fresh = Project::new();
    fresh.file(".claude/skills/review/SKILL.md", "# Review\n");
    let (code, _) = seal_with_stderr_closed(&fresh, &["init"], "y\n");
    assert_eq!(code, 0);
    assert!(fresh.has_lock());
    // A fatal error keeps its 2.
    let (code, _) = seal_with_stderr_closed(&Project::new(), &["verify"], "");
    assert_eq!(code, 2);
}

#[test]
fn verify_warn_mode_is_warning_with_exit_0() {
    let p = four_states("warn");
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Warning",
            &["./s/ok"],
            &["./s/new"],
            &["./s/gone"],
            &["./s/changed"]
        )
    );
    let out = p.ok(&["verify"], "");
    assert!(
        out.stderr.ends_with("Result: Warning (warn mode)\n"),
        "{}",
        out.stderr
    );
    let out = p.ok(&["verify", "-q"], "");
    assert_eq!(out.stderr, "");
}

#[test]
fn verify_drift_when_only_removed() {
    let p = Project::new();
    p.file("s/ok/f", "1");
    p.set_lock(&lockfile(
        &["s/*"],
        "block",
        &[b("./s/ok", &[("f", b"1")]), b("./s/gone", &[("f", b"2")])],
    ));
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Drift", &["./s/ok"], &[], &["./s/gone"], &[])
    );
    let out = p.ok(&["verify"], "");
    assert_eq!(
        out.stderr,
        "1 verified, 0 unverified, 1 removed, 0 mismatch\n  Removed    ./s/gone\nResult: Drift (block mode)\n"
    );
}

#[test]
fn verify_verified_output() {
    let p = Project::new();
    p.file("s/a/f", "1").file("s/b/g", "2");
    p.set_lock(&lockfile(
        &["s/*"],
        "block",
        &[b("./s/a", &[("f", b"1")]), b("./s/b", &[("g", b"2")])],
    ));
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Verified", &["./s/a", "./s/b"], &[], &[], &[])
    );
    assert_eq!(out.stderr, "");
    let out = p.ok(&["verify"], "");
    assert_eq!(
        out.stderr,
        "2 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n"
    );
    let out = p.ok(&["verify", "--quiet"], "");
    assert_eq!(out.stderr, "");
    // An empty project verifies too, with every array present.
    let q = Project::new();
    q.set_lock(EMPTY_BLOCK);
    assert_eq!(
        q.ok(&["verify", "--json"], "").stdout,
        "{\n  \"status\": \"Verified\",\n  \"verified\": [],\n  \"unverified\": [],\n  \"removed\": [],\n  \"mismatch\": []\n}\n"
    );
}

#[test]
fn verify_single_file_roots_like_the_canonical_example() {
    let p = Project::new();
    p.file(".github/copilot-instructions.md", "Be brief.\n")
        .file(".claude/skills/code-review/SKILL.md", "# Code review\n")
        .file(
            ".claude/skills/code-review/scripts/review.sh",
            "#!/bin/sh\n",
        );
    p.set_lock(EMPTY_BLOCK);
    // Pin the single-file root by path, then the skill through a pattern.
    p.ok(&["pin", ".github/copilot-instructions.md"], "y\n");
    let lock = p.lock();
    assert!(
        lock.contains(&format!(
            "\"files\": {{\n        \".\": \"{}\"\n      }}",
            sha(b"Be brief.\n")
        )),
        "{lock}"
    );
    p.ok(&["pin", ".claude/skills/code-review"], "y\n");
    let expected = lockfile(
        &[
            ".claude/skills/code-review",
            ".github/copilot-instructions.md",
        ],
        "block",
        &[
            b(
                "./.claude/skills/code-review",
                &[
                    ("SKILL.md", b"# Code review\n"),
                    ("scripts/review.sh", b"#!/bin/sh\n"),
                ],
            ),
            b(
                "./.github/copilot-instructions.md",
                &[(".", b"Be brief.\n")],
            ),
        ],
    );
    assert_eq!(p.lock(), expected);
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Verified",
            &[
                "./.claude/skills/code-review",
                "./.github/copilot-instructions.md"
            ],
            &[],
            &[],
            &[]
        )
    );
    // A change to the single file is a Mismatch.
    p.file(".github/copilot-instructions.md", "Be brief!\n");
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("  Mismatch   ./.github/copilot-instructions.md\n    modified: .\n"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// pin: prompts, bulk, prune, unchanged files
// ---------------------------------------------------------------------------

#[test]
fn pin_accepts_every_spelling_of_yes() {
    for answer in ["y\n", "yes\n", "YES\n", " y \n", "Y", "yEs\r\n"] {
        let p = s_project("block");
        p.file("s/a/f", "1");
        let out = p.ok(&["pin"], answer);
        assert_eq!(
            p.lock(),
            lockfile(&["s/*"], "block", &[b("./s/a", &[("f", b"1")])]),
            "{answer:?}"
        );
        assert!(
            out.stderr
                .ends_with("Apply these pin changes? [y/N] Pinned 1 bundle(s)\n"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn pin_declined_or_unanswered_changes_nothing() {
    for answer in [
        "n\n",
        "\n",
        "",
        "no\n",
        "yess\n",
        "garbage\n",
        "nein",
        "\ny\n",
    ] {
        let p = s_project("block");
        p.file("s/a/f", "1");
        let before = p.lock();
        let out = p.refused(&["pin"], answer);
        assert!(
            out.stderr.ends_with("seal: pin aborted\n"),
            "{answer:?}: {}",
            out.stderr
        );
        assert_eq!(p.lock(), before);
        assert_eq!(p.top_names(), ["s", "seal.json"]);
        // Targeted too.
        let out = p.refused(&["pin", "s/a"], answer);
        assert!(
            out.stderr.ends_with("seal: pin aborted\n"),
            "{answer:?}: {}",
            out.stderr
        );
    }
}

/// The tree matching tests/golden/hand-formatted.json.
fn hand_formatted_project() -> Project {
    let p = Project::new();
    p.file(".claude/skills/review/SKILL.md", "# Review\n")
        .file(
            ".claude/skills/review/scripts/run.sh",
            "#!/bin/sh\necho review\n",
        )
        .file("docs/agent-prompt.md", "Be careful.\n");
    p.set_lock(include_str!("golden/hand-formatted.json"));
    p
}

#[test]
fn pin_without_changes_leaves_a_hand_formatted_file_byte_for_byte() {
    let p = hand_formatted_project();
    let before = std::fs::read(p.path("seal.json")).unwrap();
    let mtime = std::fs::metadata(p.path("seal.json"))
        .unwrap()
        .modified()
        .unwrap();
    let out = p.ok(&["pin"], "");
    assert_eq!(out.stderr, "\n2 unchanged\nNo changes\n");
    let out = p.ok(
        &["pin", ".claude/skills/review", "docs/agent-prompt.md"],
        "",
    );
    assert_eq!(out.stderr, "No changes\n");
    p.ok(&["pin", "--prune"], "");
    assert_eq!(std::fs::read(p.path("seal.json")).unwrap(), before);
    assert_eq!(
        std::fs::metadata(p.path("seal.json"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Verified",
            &["./.claude/skills/review", "./docs/agent-prompt.md"],
            &[],
            &[],
            &[]
        )
    );
}

#[test]
fn pin_with_a_change_rewrites_canonically_and_drops_the_revision_of_repinned_entries() {
    // The prompt changes: its entry is re-pinned; the review bundle keeps its
    // revision because it is unchanged.
    let p = hand_formatted_project();
    p.file("docs/agent-prompt.md", "Be very careful.\n");
    let out = p.ok(&["pin"], "y\n");
    assert_eq!(
        out.stderr,
        format!(
            "  ~ modified  ./docs/agent-prompt.md  (1 files)\n    modified  agent-prompt.md  (no \
             git history: the approved bytes are unknown)\n\n1 unchanged\n\n{NOTHING_RUNS}\n\
             Apply these pin changes? [y/N] Pinned 1 bundle(s)\n"
        )
    );
    let expected = lockfile(
        &[".claude/skills/*", "docs/agent-prompt.md"],
        "warn",
        &[
            B {
                key: "./.claude/skills/review",
                revision: Some("v1.2.3 <main> & co"),
                files: vec![
                    ("SKILL.md", b"# Review\n"),
                    ("scripts/run.sh", b"#!/bin/sh\necho review\n"),
                ],
            },
            b("./docs/agent-prompt.md", &[(".", b"Be very careful.\n")]),
        ],
    );
    assert_eq!(p.lock(), expected);
    // Now the review bundle changes: it loses its revision.
    p.file(".claude/skills/review/SKILL.md", "# Review v2\n");
    p.ok(&["pin", "-v"], "y\n");
    let expected = lockfile(
        &[".claude/skills/*", "docs/agent-prompt.md"],
        "warn",
        &[
            b(
                "./.claude/skills/review",
                &[
                    ("SKILL.md", b"# Review v2\n"),
                    ("scripts/run.sh", b"#!/bin/sh\necho review\n"),
                ],
            ),
            b("./docs/agent-prompt.md", &[(".", b"Be very careful.\n")]),
        ],
    );
    assert_eq!(p.lock(), expected);
    assert!(!p.lock().contains("revision"));
}

#[test]
fn bulk_pin_adds_new_updates_modified_keeps_removed_and_prune_drops_them() {
    const KEPT: &str =
        "1 removed (not on disk, kept in seal.json): run with --prune to drop them\n";
    let p = Project::new();
    p.file("s/keep/f", "keep")
        .file("s/mod/f", "new content")
        .file("s/mod/g", "g")
        .file("s/new/f", "fresh");
    p.set_lock(&lockfile(
        &["s/*"],
        "block",
        &[
            B {
                key: "./s/keep",
                revision: Some("r-keep"),
                files: vec![("f", b"keep")],
            },
            B {
                key: "./s/mod",
                revision: Some("r-mod"),
                files: vec![("f", b"old content")],
            },
            B {
                key: "./s/gone",
                revision: Some("r-gone"),
                files: vec![("f", b"gone")],
            },
        ],
    ));
    // Without --prune a removed key is not listed as if the pin removed it:
    // one line counts it and names the flag.
    let out = p.ok(&["pin", "-v"], "y\n");
    assert_eq!(
        out.stderr,
        format!(
            "  ~ modified  ./s/mod  (2 files)\n    modified  f  (no git history: the approved bytes \
             are unknown)\n    added     g  (+1 lines)\n  + new       ./s/new  (1 files)\n    \
             added     f  (+1 lines)\n\n1 unchanged\n{KEPT}\n{NOTHING_RUNS}\nApply these pin \
             changes? [y/N] Pinned 2 bundle(s)\n"
        )
    );
    let gone = B {
        key: "./s/gone",
        revision: Some("r-gone"),
        files: vec![("f", b"gone")],
    };
    let keep = B {
        key: "./s/keep",
        revision: Some("r-keep"),
        files: vec![("f", b"keep")],
    };
    let modified = b("./s/mod", &[("f", b"new content"), ("g", b"g")]);
    let new = b("./s/new", &[("f", b"fresh")]);
    assert_eq!(
        p.lock(),
        lockfile(
            &["s/*"],
            "block",
            &[
                gone,
                keep,
                b("./s/mod", &[("f", b"new content"), ("g", b"g")]),
                b("./s/new", &[("f", b"fresh")])
            ]
        )
    );
    // Removed alone is not a change.
    let before = p.lock();
    let out = p.ok(&["pin"], "");
    assert_eq!(out.stderr, format!("\n3 unchanged\n{KEPT}No changes\n"));
    assert_eq!(p.lock(), before);
    // --prune drops it, after asking.
    p.refused(&["pin", "--prune"], "n\n");
    let out = p.ok(&["pin", "--prune"], "y\n");
    assert_eq!(
        out.stderr,
        "  - removed   ./s/gone\n\n3 unchanged\nApply these pin changes? [y/N] Pinned 1 bundle(s)\n"
    );
    let keep = B {
        key: "./s/keep",
        revision: Some("r-keep"),
        files: vec![("f", b"keep")],
    };
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[keep, modified, new])
    );
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Verified",
            &["./s/keep", "./s/mod", "./s/new"],
            &[],
            &[],
            &[]
        )
    );
    let out = p.refused(&["pin", "--prune", "s/keep"], "y\n");
    assert!(out.stderr.contains("--prune"), "{}", out.stderr);
}

#[test]
fn bundles_emptied_after_pinning_cannot_be_repinned() {
    let p = s_project("block");
    p.file("s/a/f", "1").file("s/b/f", "2");
    p.ok(&["pin"], "y\n");
    std::fs::remove_file(p.path("s/a/f")).unwrap();
    p.file("s/a/.git/HEAD", "ref");
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("  Mismatch   ./s/a\n    missing:  f\n"),
        "{}",
        out.stderr
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains("./s/a: holds no trackable file"),
        "{}",
        out.stderr
    );
}

#[test]
fn empty_directories_and_git_only_directories_are_not_bundles() {
    let p = s_project("block");
    p.dir("s/empty")
        .dir("s/nested/empty")
        .file("s/gitonly/.git/HEAD", "x")
        .file("s/gitonly/sub/.git", "gitdir: x");
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(out.stdout, report("Verified", &[], &[], &[], &[]));
    let out = p.ok(&["pin"], "");
    assert_eq!(out.stderr, "\n0 unchanged\nNo changes\n");
}

// ---------------------------------------------------------------------------
// Targeted pin
// ---------------------------------------------------------------------------

#[test]
fn targeted_pin_adds_the_narrowest_exact_pattern() {
    let p = Project::new();
    p.set_lock(EMPTY_BLOCK);
    p.file("skills/foo/SKILL.md", "foo")
        .file("skills/bar/SKILL.md", "bar");
    let out = p.ok(&["pin", "skills/foo"], "y\n");
    assert_eq!(
        out.stderr,
        format!(
            "Discovery patterns to add:\n  + skills/foo\n\n  + new       ./skills/foo  (1 files)\n    \
             added     SKILL.md  (+1 lines)\n\n0 unchanged\n\n{NOTHING_RUNS}\nApply \
             these pin changes? [y/N] Pinned 1 bundle(s)\n"
        )
    );
    assert_eq!(
        p.lock(),
        lockfile(
            &["skills/foo"],
            "block",
            &[b("./skills/foo", &[("SKILL.md", b"foo")])]
        )
    );
    // skills/bar is not discovered by that pattern: nothing unverified.
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Verified", &["./skills/foo"], &[], &[], &[])
    );
    // Spelling variants normalise to the same key; a second root gets its own pattern.
    p.ok(&["pin", "./skills//bar/"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &["skills/bar", "skills/foo"],
            "block",
            &[
                b("./skills/foo", &[("SKILL.md", b"foo")]),
                b("./skills/bar", &[("SKILL.md", b"bar")])
            ]
        )
    );
    // An absolute path inside the project works too.
    p.file("skills/foo/SKILL.md", "foo2");
    let abs = std::fs::canonicalize(p.path("skills/foo")).unwrap();
    p.ok(&["pin", abs.to_str().unwrap()], "y\n");
    assert!(p.lock().contains(&sha(b"foo2")));
}

#[test]
fn targeted_pin_uses_an_existing_pattern_and_pins_only_what_is_named() {
    let p = s_project("block");
    p.file("s/a/f", "a").file("s/b/f", "b");
    let out = p.ok(&["pin", "s/a"], "y\n");
    assert!(
        !out.stderr.contains("Discovery patterns to add"),
        "{}",
        out.stderr
    );
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[b("./s/a", &[("f", b"a")])])
    );
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &["./s/a"], &["./s/b"], &[], &[]))
    );
}

#[test]
fn targeted_pin_of_a_changed_bundle_asks_first() {
    let p = s_project("block");
    p.file("s/a/f", "a");
    p.ok(&["pin", "s/a"], "y\n");
    p.file("s/a/f", "changed");
    let out = p.refused(&["pin", "s/a"], "n\n");
    assert!(
        out.stderr.contains("  ~ modified  ./s/a  (1 files)\n"),
        "{}",
        out.stderr
    );
    p.refused(&["pin", "s/a"], "");
    p.ok(&["pin", "s/a"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[b("./s/a", &[("f", b"changed")])])
    );
}

#[test]
fn targeted_pin_single_file_root() {
    let p = Project::new();
    p.set_lock(EMPTY_BLOCK);
    p.file("docs/agent-prompt.md", "prompt");
    p.ok(&["pin", "docs/agent-prompt.md"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &["docs/agent-prompt.md"],
            "block",
            &[b("./docs/agent-prompt.md", &[(".", b"prompt")])]
        )
    );
    p.ok(&["verify"], "");
}

#[test]
fn targeted_pin_refuses_a_key_inside_a_recorded_root() {
    let p = Project::new();
    p.file("skills/foo/f", "x");
    p.set_lock(&lockfile(
        &["skills"],
        "block",
        &[b("./skills", &[("foo/f", b"x")])],
    ));
    let out = p.refused(&["pin", "skills/foo"], "y\n");
    assert!(
        out.stderr
            .contains("./skills/foo is inside the recorded bundle ./skills"),
        "{}",
        out.stderr
    );
}

#[test]
fn targeted_pin_refuses_a_key_around_a_recorded_root() {
    let p = Project::new();
    p.file("skills/foo/f", "x");
    p.set_lock(&lockfile(
        &["skills/*"],
        "block",
        &[b("./skills/foo", &[("f", b"x")])],
    ));
    let out = p.refused(&["pin", "skills"], "y\n");
    assert!(
        out.stderr
            .contains("./skills contains the recorded bundle ./skills/foo"),
        "{}",
        out.stderr
    );
    // Two arguments nested in each other.
    let q = Project::new();
    q.set_lock(EMPTY_BLOCK).file("a/b/f", "x");
    let out = q.refused(&["pin", "a", "a/b"], "y\n");
    assert!(out.stderr.contains("./a/b is inside ./a"), "{}", out.stderr);
}

#[test]
fn targeted_pin_refuses_a_pattern_that_would_nest_with_discovery() {
    // `skills` is a whole-root pattern (no key recorded yet); adding
    // `skills/foo` would make the lockfile invalid.
    let p = Project::new();
    p.file("skills/foo/f", "x");
    p.set_lock(&lockfile(&["skills"], "block", &[]));
    let out = p.refused(&["pin", "skills/foo"], "y\n");
    assert!(out.stderr.contains("[patterns-nest]"), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
}

#[test]
fn targeted_pin_resolves_true_case_and_refuses_a_wrong_case_argument() {
    let p = s_project("block");
    p.file("s/MySkill/f", "x");
    for wrong in ["s/myskill", "S/MySkill", "s/MYSKILL"] {
        let out = p.refused(&["pin", wrong], "y\n");
        assert!(
            out.stderr.contains("no such file or directory"),
            "{wrong}: {}",
            out.stderr
        );
    }
    p.ok(&["pin", "s/MySkill"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[b("./s/MySkill", &[("f", b"x")])])
    );
}

#[test]
fn targeted_pin_refuses_symlinks_and_special_files() {
    let p = s_project("block");
    p.file("s/real/f", "x");
    p.symlink("real", "s/link");
    p.symlink("s", "alias");
    p.fifo("s/pipe");
    let out = p.refused(&["pin", "s/link"], "y\n");
    assert!(out.stderr.contains("is a symlink"), "{}", out.stderr);
    let out = p.refused(&["pin", "alias/real"], "y\n");
    assert!(out.stderr.contains("alias is a symlink"), "{}", out.stderr);
    let out = p.refused(&["pin", "s/pipe"], "y\n");
    assert!(out.stderr.contains("is a FIFO"), "{}", out.stderr);
}

#[test]
fn targeted_pin_refuses_the_root_parents_and_outside_paths() {
    let p = s_project("block");
    p.file("s/a/f", "x");
    for arg in [
        ".",
        "./",
        "..",
        "../x",
        "s/../s/a",
        "s/./a",
        "/etc",
        "s/missing",
        "s\\a",
        "",
    ] {
        p.refused(&["pin", arg], "y\n");
    }
    let out = p.seal_os(&[OsStr::new("pin"), OsStr::from_bytes(b"s/\xff")], b"y\n");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not UTF-8"), "{}", out.stderr);
}

// ---------------------------------------------------------------------------
// Unicode, case and odd on-disk shapes
// ---------------------------------------------------------------------------

#[test]
fn nfd_named_bundle_directories_get_nfc_keys_and_verify() {
    let p = s_project("block");
    p.file("s/cafe\u{301}/SKILL.md", "x")
        .file("s/cafe\u{301}/re\u{301}sume\u{301}.md", "y");
    p.ok(&["pin"], "y\n");
    let expected = lockfile(
        &["s/*"],
        "block",
        &[b(
            "./s/caf\u{e9}",
            &[("SKILL.md", b"x"), ("r\u{e9}sum\u{e9}.md", b"y")],
        )],
    );
    assert_eq!(p.lock(), expected);
    assert!(!p.lock().contains('\u{301}'));
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Verified", &["./s/caf\u{e9}"], &[], &[], &[])
    );
    // Targeted pin by either spelling finds the NFD directory.
    p.ok(&["pin", "s/caf\u{e9}"], "");
    p.ok(&["pin", "s/cafe\u{301}"], "");
    assert_eq!(p.lock(), expected);
}

#[test]
fn a_key_whose_parent_is_a_regular_file_is_removed() {
    let p = Project::new();
    p.file("plain", "I am a file");
    p.set_lock(&lockfile(
        &["plain/*"],
        "block",
        &[b("./plain/x", &[("f", b"1")])],
    ));
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(out.stdout, report("Drift", &[], &[], &["./plain/x"], &[]));
    let out = p.ok(&["pin"], "");
    assert!(out.stderr.ends_with("No changes\n"), "{}", out.stderr);
    p.ok(&["pin", "--prune"], "y\n");
    assert_eq!(p.lock(), lockfile(&["plain/*"], "block", &[]));
}

#[test]
fn a_key_whose_case_differs_from_disk_is_removed_and_the_disk_root_unverified() {
    let p = Project::new();
    p.file("plugins/myskill/f", "1");
    p.set_lock(&lockfile(
        &["plugins/*"],
        "block",
        &[b("./plugins/MySkill", &[("f", b"1")])],
    ));
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        report(
            "Blocked",
            &[],
            &["./plugins/myskill"],
            &["./plugins/MySkill"],
            &[]
        )
    );
}

#[test]
fn nfc_twins_are_a_mismatch_in_verify_and_abort_pin() {
    // Twin files inside a bundle.
    let p = s_project("block");
    p.file("s/a/caf\u{e9}", "1");
    p.ok(&["pin"], "y\n");
    p.file("s/a/cafe\u{301}", "2");
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]))
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains("equal after Unicode NFC normalisation"),
        "{}",
        out.stderr
    );
    // Twin bundle roots.
    let q = s_project("block");
    q.file("s/caf\u{e9}/f", "1");
    q.ok(&["pin"], "y\n");
    q.file("s/cafe\u{301}/f", "1");
    let out = q.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/caf\u{e9}"]))
    );
    let out = q.refused(&["pin"], "y\n");
    assert!(out.stderr.contains("NFC"), "{}", out.stderr);
    q.refused(&["pin", "s/caf\u{e9}"], "y\n");
}

#[test]
fn git_is_excluded_at_any_depth() {
    let p = s_project("block");
    p.file("s/a/SKILL.md", "x")
        .file("s/a/.git/HEAD", "ref: main")
        .file("s/a/sub/.git/config", "[core]")
        .file("s/a/sub/file", "y")
        .file("s/a/mod/.git", "gitdir: ../.git/modules/mod")
        .file("s/a/mod/code", "z")
        .file("s/a/.gitignore", "tracked");
    p.ok(&["pin"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &["s/*"],
            "block",
            &[b(
                "./s/a",
                &[
                    (".gitignore", b"tracked"),
                    ("SKILL.md", b"x"),
                    ("mod/code", b"z"),
                    ("sub/file", b"y")
                ]
            )]
        )
    );
    p.file("s/a/.git/HEAD", "changed")
        .file("s/a/sub/.git/new", "new")
        .file("s/a/mod/.git", "other");
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(out.stdout, report("Verified", &["./s/a"], &[], &[], &[]));
}

#[test]
fn seal_json_inside_a_bundle_is_tracked() {
    let p = s_project("block");
    p.file("s/a/seal.json", "{}").file("s/a/f", "1");
    p.ok(&["pin"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &["s/*"],
            "block",
            &[b("./s/a", &[("f", b"1"), ("seal.json", b"{}")])]
        )
    );
    p.file("s/a/seal.json", "{ }");
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("  Mismatch   ./s/a\n    modified: seal.json\n"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// Unsupported files: symlinks, FIFOs, sockets
// ---------------------------------------------------------------------------

/// A pinned bundle ./s/a, then `spoil` adds something to it.
fn spoiled(spoil: impl FnOnce(&Project)) -> Project {
    let p = s_project("block");
    p.file("s/a/f", "1");
    p.ok(&["pin"], "y\n");
    spoil(&p);
    p
}

#[track_caller]
fn assert_mismatch_and_pin_abort(p: &Project, problem: &str) {
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]).as_str())
    );
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!("    problem:  {problem}")),
        "{}",
        out.stderr
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains(&format!("./s/a: {problem}")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("seal.json is unchanged"),
        "{}",
        out.stderr
    );
    p.refused(&["pin", "s/a"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[b("./s/a", &[("f", b"1")])])
    );
}

#[test]
fn a_symlink_in_a_bundle_is_a_mismatch_and_aborts_pin() {
    let p = spoiled(|p| p.symlink("/etc/passwd", "s/a/link"));
    assert_mismatch_and_pin_abort(
        &p,
        "link is a symlink (only regular files and directories can be sealed)",
    );
    // Also a symlink replacing a tracked file, and a symlink to a directory.
    let q = spoiled(|p| {
        std::fs::remove_file(p.path("s/a/f")).unwrap();
        p.symlink("/etc/hostname", "s/a/f");
    });
    assert_mismatch_and_pin_abort(&q, "f is a symlink");
    let r = spoiled(|p| p.symlink("/etc", "s/a/etc"));
    assert_mismatch_and_pin_abort(&r, "etc is a symlink");
}

#[test]
fn a_fifo_in_a_bundle_is_a_mismatch_and_never_blocks() {
    let p = spoiled(|p| p.fifo("s/a/pipe"));
    assert_mismatch_and_pin_abort(&p, "pipe is a FIFO");
    // A FIFO in a new bundle: pin aborts (without hanging).
    let q = s_project("block");
    q.file("s/b/f", "1");
    q.fifo("s/b/pipe");
    let out = q.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains("./s/b: pipe is a FIFO"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_socket_in_a_bundle_is_a_mismatch() {
    let p = spoiled(|p| {
        let l = std::os::unix::net::UnixListener::bind(p.path("s/a/sock")).unwrap();
        drop(l);
    });
    assert_mismatch_and_pin_abort(&p, "sock is a socket");
}

#[test]
fn symlinked_bundle_roots_and_parents_are_never_followed() {
    // The root itself is a symlink.
    let p = s_project("block");
    p.file("real/f", "1");
    p.symlink("../real", "s/a");
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &["./s/a"], &[], &[]))
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains("./s/a: . is a symlink"),
        "{}",
        out.stderr
    );
    // A recorded key whose root became a symlink.
    let q = spoiled(|p| {
        std::fs::rename(p.path("s/a"), p.path("moved")).unwrap();
        p.symlink("../moved", "s/a");
    });
    let out = q.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]))
    );
    q.refused(&["pin"], "y\n");
    // A recorded key reached through a symlinked parent directory.
    let r = spoiled(|p| {
        std::fs::rename(p.path("s"), p.path("t")).unwrap();
        p.symlink("t", "s");
    });
    let out = r.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]))
    );
    let out = r.refused(&["pin"], "y\n");
    assert!(out.stderr.contains("symlink"), "{}", out.stderr);
}

// ---------------------------------------------------------------------------
// Read errors (as an unprivileged user: root ignores file modes)
// ---------------------------------------------------------------------------

const NOBODY: u32 = 65534;

/// Runs the binary as uid/gid 65534 through setpriv.
fn seal_as_nobody(p: &Project, args: &[&str], stdin: &str) -> Out {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".to_string(),
        "--".to_string(),
        SEAL.to_string(),
    ])
    .args(args)
    .current_dir(p.root());
    let out = run(cmd, stdin.as_bytes());
    let os: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    check_streams(&os, &out);
    out
}

fn chown_tree(path: &Path) {
    let status = Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A pinned project handed to uid 65534, in which `spoil` then makes something
/// unreadable for that user.
fn unreadable_project(spoil: impl FnOnce(&Project)) -> Project {
    let p = s_project("block");
    p.file("s/a/f", "1")
        .file("s/a/secret", "2")
        .file("s/a/sub/inner", "3");
    p.ok(&["pin"], "y\n");
    std::fs::set_permissions(p.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    chown_tree(p.root());
    // Sanity: as that user, everything is readable and verifies.
    let out = seal_as_nobody(&p, &["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, report("Verified", &["./s/a"], &[], &[], &[]).as_str()),
        "{}",
        out.stderr
    );
    spoil(&p);
    p
}

#[test]
fn an_unreadable_file_is_a_mismatch_in_verify_and_aborts_pin() {
    let p = unreadable_project(|p| {
        std::fs::set_permissions(p.path("s/a/secret"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
    });
    // The read error is real: the unprivileged user cannot open the file.
    let mut check = Command::new("setpriv");
    check
        .args([
            format!("--reuid={NOBODY}"),
            format!("--regid={NOBODY}"),
            "--clear-groups".into(),
            "cat".into(),
        ])
        .arg(p.path("s/a/secret"));
    assert_eq!(
        run(check, b"").code,
        1,
        "the file must be unreadable for uid {NOBODY}"
    );

    let out = seal_as_nobody(&p, &["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]).as_str())
    );
    let out = seal_as_nobody(&p, &["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "  Mismatch   ./s/a\n    modified: secret\n    problem:  secret cannot be read: Permission denied (os error 13)\n"
        ),
        "{}",
        out.stderr
    );
    let before = p.lock();
    let out = seal_as_nobody(&p, &["pin"], "y\n");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("./s/a: secret cannot be read"),
        "{}",
        out.stderr
    );
    let out = seal_as_nobody(&p, &["pin", "s/a"], "y\n");
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(p.lock(), before);
}

#[test]
fn an_unreadable_directory_in_a_bundle_is_a_mismatch_and_aborts_pin() {
    let p = unreadable_project(|p| {
        std::fs::set_permissions(p.path("s/a/sub"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
    });
    let out = seal_as_nobody(&p, &["verify", "-v"], "");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("  Mismatch   ./s/a\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("    problem:  sub cannot be read: Permission denied"),
        "{}",
        out.stderr
    );
    let before = p.lock();
    let out = seal_as_nobody(&p, &["pin"], "y\n");
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(p.lock(), before);
}

#[test]
fn an_unreadable_bundle_root_is_a_mismatch_not_a_fatal_error() {
    let p = unreadable_project(|p| {
        std::fs::set_permissions(p.path("s/a"), std::fs::Permissions::from_mode(0o000)).unwrap();
    });
    let out = seal_as_nobody(&p, &["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]).as_str()),
        "{}",
        out.stderr
    );
    let out = seal_as_nobody(&p, &["verify", "-v"], "");
    assert!(
        out.stderr
            .contains("    problem:  . cannot be read: Permission denied"),
        "{}",
        out.stderr
    );
    let before = p.lock();
    let out = seal_as_nobody(&p, &["pin"], "y\n");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("./s/a: . cannot be read"),
        "{}",
        out.stderr
    );
    assert_eq!(p.lock(), before);
    // Under warn the policy decides, as for any Mismatch: Warning, exit 0.
    let warn = before.replace("\"policy\": \"block\"", "\"policy\": \"warn\"");
    std::fs::write(p.path("seal.json"), &warn).unwrap();
    let out = seal_as_nobody(&p, &["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, report("Warning", &[], &[], &[], &["./s/a"]).as_str())
    );
    // An unreadable new root is Unverified.
    let q = unreadable_project(|p| {
        p.file("s/new/f", "x");
        chown_tree(p.root());
        std::fs::set_permissions(p.path("s/new"), std::fs::Permissions::from_mode(0o000)).unwrap();
    });
    let out = seal_as_nobody(&q, &["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            1,
            report("Blocked", &["./s/a"], &["./s/new"], &[], &[]).as_str()
        ),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// Hostile names
// ---------------------------------------------------------------------------

#[test]
fn control_and_bidi_characters_are_escaped_in_human_output() {
    let p = s_project("block");
    p.file("s/a/f", "1");
    p.ok(&["pin"], "y\n");
    p.file("s/a/x\ry", "cr")
        .file("s/a/esc\u{1b}]0;pwned\u{7}", "osc")
        .file("s/a/evil\u{202e}hs.txt", "bidi")
        .file("s/a/nl\nname", "lf");
    p.file("s/e\u{1b}[31mred/f", "new bundle")
        .file("s/rtl\u{202e}gpj.sh/f", "new bundle");
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "0 verified, 2 unverified, 0 removed, 1 mismatch\n  Mismatch   ./s/a\n    added:    esc\\u{001b}]0;pwned\\u{0007}\n    \
         added:    evil\\u{202e}hs.txt\n    added:    nl\\nname\n    added:    x\\ry\n  Unverified ./s/e\\u{001b}[31mred\n  \
         Unverified ./s/rtl\\u{202e}gpj.sh\nResult: Blocked (block mode)\n"
    );
    for raw in ['\u{1b}', '\r', '\u{202e}', '\u{7}'] {
        assert!(
            !out.stderr.contains(raw),
            "raw {raw:?} reached the terminal"
        );
    }
    // The pin summary escapes too, and JSON output uses JSON escapes.
    let out = p.refused(&["pin", "-v"], "n\n");
    assert!(
        out.stderr
            .contains("  + new       ./s/e\\u{001b}[31mred  (1 files)"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains('\u{1b}') && !out.stderr.contains('\u{202e}'),
        "{:?}",
        out.stderr
    );
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Blocked",
            &[],
            &["./s/e\u{1b}[31mred", "./s/rtl\u{202e}gpj.sh"],
            &[],
            &["./s/a"]
        )
    );
    assert!(out.stdout.contains("\\u001b"));
    // Pinning them records Go-escaped names that parse back and verify.
    p.ok(&["pin"], "y\n");
    let lock = p.lock();
    assert!(
        lock.contains("\"x\\ry\"") && lock.contains("\"esc\\u001b]0;pwned\\u0007\""),
        "{lock}"
    );
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report(
            "Verified",
            &["./s/a", "./s/e\u{1b}[31mred", "./s/rtl\u{202e}gpj.sh"],
            &[],
            &[],
            &[]
        )
    );
}

#[test]
fn bundle_roots_whose_names_cannot_be_keys_are_unverified_and_sorted() {
    // CR in a directory name: a valid file name, but never a valid bundle key.
    let p = s_project("block");
    p.file("s/cr\rname/f", "1")
        .file("s/b/f", "2")
        .file("s/d/f", "3");
    let out = p.seal(&["verify"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "0 verified, 3 unverified, 0 removed, 0 mismatch\n  Unverified ./s/b\n  Unverified ./s/cr\\rname\n  Unverified \
         ./s/d\nResult: Blocked (block mode)\n"
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(out.stderr.contains("./s/cr\\rname"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("not valid UTF-8"),
        "the name is UTF-8: {}",
        out.stderr
    );
}

#[test]
fn a_file_name_with_a_backslash_cannot_be_pinned() {
    // A file path with a backslash is invalid in seal.json: pin must refuse it
    // rather than write a lockfile every later run rejects.
    let p = s_project("block");
    p.file("s/a/ok", "1").file("s/a/back\\slash", "2");
    let out = p.refused(&["pin"], "y\n");
    assert!(out.stderr.contains("back\\\\slash"), "{}", out.stderr);
    assert_eq!(p.lock(), lockfile(&["s/*"], "block", &[]));
    let q = Project::new();
    q.file(".claude/skills/a/back\\slash", "2");
    q.refused(&["init"], "y\n");
    assert!(!q.has_lock());
    // After pinning without it, adding it is a Mismatch.
    let r = spoiled(|p| {
        p.file("s/a/x\\y", "3");
    });
    let out = r.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]))
    );
}

#[test]
fn non_utf8_names_abort_pin_and_are_a_mismatch_in_verify() {
    let p = spoiled(|p| p.raw_file(b"s/a/bad\xffname", b"x"));
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &[], &[], &["./s/a"]))
    );
    let out = p.refused(&["pin"], "y\n");
    assert!(
        out.stderr.contains("./s/a: bad") && out.stderr.contains("not valid UTF-8"),
        "{}",
        out.stderr
    );
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &[b("./s/a", &[("f", b"1")])])
    );
    // A bundle root with a non-UTF-8 name is unverified and blocks pin.
    let q = s_project("block");
    q.raw_file(b"s/\xfe/f", b"x");
    let out = q.seal(&["verify", "--json"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("\"unverified\": [\n    \"./s/\u{fffd}\"\n  ]"),
        "{}",
        out.stdout
    );
    let out = q.refused(&["pin"], "y\n");
    assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);
}

// ---------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------

#[test]
fn eight_concurrent_pins_never_corrupt_or_lose_updates() {
    let p = s_project("block");
    for i in 0..8 {
        p.file(&format!("s/b{i}/f"), format!("bundle {i}"));
        p.file(&format!("s/b{i}/big"), vec![i as u8; 256 * 1024]);
    }
    let root = p.root().to_path_buf();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut cmd = Command::new(SEAL);
                cmd.args(["pin", &format!("s/b{i}")]).current_dir(&root);
                run(cmd, b"y\n")
            })
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(out.stdout, "");
    }
    let mut bundles = Vec::new();
    let names: Vec<String> = (0..8).map(|i| format!("./s/b{i}")).collect();
    let contents: Vec<(Vec<u8>, Vec<u8>)> = (0..8)
        .map(|i| {
            (
                format!("bundle {i}").into_bytes(),
                vec![i as u8; 256 * 1024],
            )
        })
        .collect();
    for i in 0..8 {
        bundles.push(b(
            &names[i],
            &[("f", &contents[i].0), ("big", &contents[i].1)],
        ));
    }
    assert_eq!(
        p.lock(),
        lockfile(&["s/*"], "block", &bundles),
        "every pin kept, none lost"
    );
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        p.ok(&["verify", "--json"], "").stdout,
        report("Verified", &refs, &[], &[], &[])
    );
    assert_eq!(
        p.top_names(),
        ["s", "seal.json"],
        "no temporary or lock file left behind"
    );

    // Eight concurrent bulk pins after a change: one writes, the rest see no change.
    for i in 0..8 {
        p.file(&format!("s/b{i}/f"), format!("changed {i}"));
    }
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut cmd = Command::new("sh");
                cmd.args(["-c", &format!("echo y | '{SEAL}' pin")])
                    .current_dir(&root);
                run(cmd, b"")
            })
        })
        .collect();
    let outs: Vec<Out> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outs.iter().all(|o| o.code == 0), "{outs:?}");
    let writers = outs
        .iter()
        .filter(|o| o.stderr.contains("Pinned 8 bundle(s)"))
        .count();
    let idle = outs
        .iter()
        .filter(|o| o.stderr.ends_with("No changes\n"))
        .count();
    assert_eq!((writers, idle), (1, 7), "{outs:?}");
    assert_eq!(
        p.ok(&["verify", "--json"], "").stdout,
        report("Verified", &refs, &[], &[], &[])
    );
    assert_eq!(p.top_names(), ["s", "seal.json"]);
}

#[test]
fn the_project_lockfile_is_never_a_bundle() {
    // `*` matches every top-level entry, but not the lockfile itself: pinning
    // it would be circular and leave the project Blocked forever.
    let p = Project::new();
    p.file("a/f", "1").file("b.md", "2");
    p.set_lock(&lockfile(&["*"], "block", &[]));
    let out = p.seal(&["verify", "--json"], "");
    assert_eq!(
        (out.code, out.stdout),
        (1, report("Blocked", &[], &["./a", "./b.md"], &[], &[]))
    );
    p.ok(&["pin"], "y\n");
    assert_eq!(
        p.lock(),
        lockfile(
            &["*"],
            "block",
            &[b("./a", &[("f", b"1")]), b("./b.md", &[(".", b"2")])]
        )
    );
    let out = p.ok(&["verify", "--json"], "");
    assert_eq!(
        out.stdout,
        report("Verified", &["./a", "./b.md"], &[], &[], &[])
    );
    let out = p.refused(&["pin", "seal.json"], "y\n");
    assert!(out.stderr.contains("project lockfile"), "{}", out.stderr);
    // A seal.json inside a bundle root position elsewhere is ordinary content.
    p.file("a/seal.json", "{}");
    let out = p.seal(&["verify", "-v"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("    added:    seal.json\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn bundles_with_thousands_of_directories_work_under_a_low_open_file_limit() {
    // 1500 directories in one bundle, run with RLIMIT_NOFILE 256: the walk
    // must not keep a descriptor per directory.
    let p = s_project("block");
    for i in 0..1500 {
        p.file(&format!("s/a/d{i}/f"), format!("{i}"));
    }
    let limited = |args: &str, stdin: &[u8]| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("ulimit -n 256 && exec '{SEAL}' {args}")])
            .current_dir(p.root());
        run(cmd, stdin)
    };
    let out = limited("pin", b"y\n");
    assert_eq!(out.code, 0, "{}", &out.stderr[..out.stderr.len().min(2000)]);
    assert!(
        out.stderr.contains("  + new       ./s/a  (1500 files)"),
        "{}",
        out.stderr
    );
    let out = limited("verify --json", b"");
    assert_eq!(
        (out.code, out.stdout),
        (0, report("Verified", &["./s/a"], &[], &[], &[]))
    );
}

#[test]
fn a_lockfile_that_is_not_a_regular_file_is_refused() {
    // A symlinked seal.json is never followed, even to a valid lockfile.
    let p = Project::new();
    p.file("real.json", EMPTY_BLOCK);
    p.symlink("real.json", "seal.json");
    for args in [&["verify"][..], &["verify", "--json"], &["pin"]] {
        let out = p.refused(args, "y\n");
        assert!(
            out.stderr.contains("seal.json is a symlink"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.path("real.json")).unwrap(),
        EMPTY_BLOCK
    );
    // A FIFO named seal.json fails at once instead of blocking.
    let q = Project::new();
    q.fifo("seal.json");
    for args in [&["verify"][..], &["pin"], &["init"]] {
        let out = q.seal(args, "y\n");
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
    }
    // A directory too.
    let r = Project::new();
    r.dir("seal.json");
    let out = r.refused(&["verify"], "");
    assert!(out.stderr.contains("seal.json"), "{}", out.stderr);
}

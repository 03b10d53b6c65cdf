//! The GitHub Action (`action.yml`) run by a local runner of its steps, since
//! no hosted runner is reachable from CI: the runner reads action.yml, runs
//! each `run:` step with `bash --noprofile --norc -eo pipefail` (what
//! `shell: bash` means on a runner) in the step's working directory, with the
//! `GITHUB_*` and `RUNNER_*` environment a runner sets, evaluates the few
//! expressions the action uses (an input's default too, with the event
//! payload a test gives), collects step outputs from `$GITHUB_OUTPUT`
//! and `$GITHUB_PATH`, and stands in for `actions/upload-artifact` by copying
//! the file. It parses the workflow commands a step prints, as the runner
//! does, to check the annotations. The install step really runs
//! `cargo install --path` on this checkout (with the dev profile and this
//! build's target directory, so it reuses what the test build compiled).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

mod support;
use support::git_in;

const SEAL: &str = env!("CARGO_BIN_EXE_seal");
const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn load(path: &Path) -> Yaml {
    let text = fs::read_to_string(path).unwrap();
    let mut docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
    assert_eq!(docs.len(), 1, "{}: one document", path.display());
    docs.remove(0)
}

fn str_of<'a>(y: &'a Yaml, key: &str) -> Option<&'a str> {
    y[key].as_str()
}

/// A workflow command as the runner parses it from a step's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WorkflowCommand {
    name: String,
    properties: BTreeMap<String, String>,
    message: String,
}

/// The runner's unescaping (actions/runner `ActionCommand.Unescape`).
fn unescape(s: &str) -> String {
    s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

fn workflow_commands(stdout: &str) -> Vec<WorkflowCommand> {
    stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("::")?;
            let (head, message) = rest.split_once("::")?;
            let (name, props) = head.split_once(' ').unwrap_or((head, ""));
            let properties = props
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("key=value");
                    (k.to_string(), unescape(v))
                })
                .collect();
            Some(WorkflowCommand {
                name: name.to_string(),
                properties,
                message: unescape(message),
            })
        })
        .collect()
}

#[derive(Debug)]
struct StepRun {
    name: String,
    ran: bool,
    code: i32,
    stdout: String,
    stderr: String,
}

#[derive(Debug)]
struct JobRun {
    steps: Vec<StepRun>,
    outputs: BTreeMap<String, String>,
    failed: bool,
    /// Uploaded artifacts: name -> copied file.
    artifacts: BTreeMap<String, PathBuf>,
    summary: String,
}

impl JobRun {
    fn step(&self, name: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no step {name}: {:?}", self.steps))
    }
}

/// Everything a step's expressions may read.
struct Contexts {
    inputs: BTreeMap<String, String>,
    steps: BTreeMap<String, BTreeMap<String, String>>,
    github: BTreeMap<&'static str, String>,
    /// The event payload, by dotted path (`pull_request.base.sha`); a path
    /// it lacks reads as empty, as on GitHub.
    event: BTreeMap<String, String>,
    runner_temp: String,
}

impl Contexts {
    fn value(&self, expr: &str) -> String {
        let expr = expr.trim();
        let parts: Vec<&str> = expr.split('.').collect();
        match parts.as_slice() {
            ["inputs", name] => self
                .inputs
                .get(*name)
                .unwrap_or_else(|| panic!("action.yml reads an undeclared input {name}"))
                .clone(),
            ["steps", id, "outputs", name] => self
                .steps
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            ["github", name] => self.github.get(name).cloned().unwrap_or_default(),
            ["github", "event", path @ ..] => {
                self.event.get(&path.join(".")).cloned().unwrap_or_default()
            }
            ["runner", "temp"] => self.runner_temp.clone(),
            _ => panic!("this local runner does not evaluate ${{{{ {expr} }}}}"),
        }
    }

    /// Replaces every `${{ ... }}` in `text`.
    fn substitute(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("closed expression") + start;
            out.push_str(&self.value(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// A step's `if:`, for the forms the action uses: `&&` of status
    /// functions and `X == 'literal'` / `X != 'literal'`. Without a status
    /// function, `success()` is implied, as on GitHub.
    fn condition(&self, cond: Option<&str>, failed: bool) -> bool {
        let Some(cond) = cond else { return !failed };
        let cond = cond.trim();
        let cond = cond
            .strip_prefix("${{")
            .and_then(|c| c.strip_suffix("}}"))
            .unwrap_or(cond);
        let mut status_seen = false;
        let mut all = true;
        for term in cond.split("&&").map(str::trim) {
            let value = match term {
                "always()" => {
                    status_seen = true;
                    true
                }
                "success()" => {
                    status_seen = true;
                    !failed
                }
                "failure()" => {
                    status_seen = true;
                    failed
                }
                t => {
                    let (lhs, rhs, equal) = if let Some((l, r)) = t.split_once("==") {
                        (l, r, true)
                    } else if let Some((l, r)) = t.split_once("!=") {
                        (l, r, false)
                    } else {
                        panic!("this local runner does not evaluate if: {t}")
                    };
                    let literal = rhs.trim().trim_matches('\'');
                    (self.value(lhs) == literal) == equal
                }
            };
            all &= value;
        }
        all && (status_seen || !failed)
    }
}

/// `name=value` lines and `name<<DELIM` blocks of a `$GITHUB_OUTPUT` file.
fn read_outputs(path: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            out.insert(name.to_string(), value.to_string());
        }
    }
    out
}

/// Runs the composite action in `action_dir` on `workspace`, with `with`
/// overriding input defaults, outside a pull request.
fn run_action(action_dir: &Path, workspace: &Path, with: &[(&str, &str)]) -> JobRun {
    run_action_on(action_dir, workspace, with, &[])
}

/// Runs the action for an event whose payload holds `event` (dotted paths
/// and values).
fn run_action_on(
    action_dir: &Path,
    workspace: &Path,
    with: &[(&str, &str)],
    event: &[(&str, &str)],
) -> JobRun {
    let action = load(&action_dir.join("action.yml"));
    assert_eq!(str_of(&action["runs"], "using"), Some("composite"));
    let temp = tempfile::tempdir().unwrap();
    let runner_temp = temp.path().join("runner-temp");
    fs::create_dir(&runner_temp).unwrap();
    let files = temp.path().join("files");
    fs::create_dir(&files).unwrap();
    let artifacts_dir = temp.path().join("artifacts");

    let mut ctx = Contexts {
        inputs: BTreeMap::new(),
        steps: BTreeMap::new(),
        github: BTreeMap::from([
            ("action_path", action_dir.display().to_string()),
            ("workspace", workspace.display().to_string()),
        ]),
        event: event
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        runner_temp: runner_temp.display().to_string(),
    };
    // Defaults may be expressions (of the github context), evaluated as the
    // job starts.
    for (name, spec) in action["inputs"].as_hash().expect("inputs") {
        let name = name.as_str().unwrap().to_string();
        let default = ctx.substitute(str_of(spec, "default").unwrap_or(""));
        ctx.inputs.insert(name, default);
    }
    for (k, v) in with {
        assert!(ctx.inputs.contains_key(*k), "the action has no input {k}");
        ctx.inputs.insert(k.to_string(), v.to_string());
    }
    // Not the test build's target directory: `cargo install` links a `seal`
    // without the tests' hooks, which must not replace the one the other
    // tests run (target/debug/seal). tests/policy_build.rs builds the same
    // binary there, so the two share what they compile.
    let target_dir = std::env::var("CARGO_TARGET_DIR")
        .map(|t| format!("{t}/plain-build"))
        .unwrap_or_else(|_| format!("{REPO}/target/plain-build"));
    let base_path = std::env::var("PATH").unwrap_or_default();
    let mut added_path: Vec<String> = Vec::new();
    let mut job = JobRun {
        steps: Vec::new(),
        outputs: BTreeMap::new(),
        failed: false,
        artifacts: BTreeMap::new(),
        summary: String::new(),
    };
    for (i, step) in action["runs"]["steps"]
        .as_vec()
        .expect("steps")
        .iter()
        .enumerate()
    {
        let name = str_of(step, "name").unwrap_or("(unnamed)").to_string();
        if !ctx.condition(str_of(step, "if"), job.failed) {
            job.steps.push(StepRun {
                name,
                ran: false,
                code: 0,
                stdout: String::new(),
                stderr: String::new(),
            });
            continue;
        }
        let (code, stdout, stderr) = if let Some(uses) = str_of(step, "uses") {
            assert!(
                uses.starts_with("actions/upload-artifact@"),
                "this local runner only stands in for upload-artifact, not {uses}"
            );
            let path = PathBuf::from(ctx.substitute(str_of(&step["with"], "path").unwrap()));
            let path = workspace.join(path);
            let artifact = ctx.substitute(str_of(&step["with"], "name").unwrap());
            if path.is_file() {
                let dest = artifacts_dir.join(&artifact);
                fs::create_dir_all(&dest).unwrap();
                let copy = dest.join(path.file_name().unwrap());
                fs::copy(&path, &copy).unwrap();
                job.artifacts.insert(artifact, copy);
                (0, String::new(), String::new())
            } else {
                (
                    0,
                    format!(
                        "::warning::No files were found with the provided path: {}\n",
                        path.display()
                    ),
                    String::new(),
                )
            }
        } else {
            let script = step["run"].as_str().expect("a run or uses step");
            assert_eq!(
                str_of(step, "shell"),
                Some("bash"),
                "composite run steps must name their shell"
            );
            let script_file = files.join(format!("step-{i}.sh"));
            fs::write(&script_file, ctx.substitute(script)).unwrap();
            let dir = match str_of(step, "working-directory") {
                Some(d) => workspace.join(ctx.substitute(d)),
                None => workspace.to_path_buf(),
            };
            let output_file = files.join(format!("output-{i}"));
            let path_file = files.join(format!("path-{i}"));
            let summary_file = files.join(format!("summary-{i}"));
            for f in [&output_file, &path_file, &summary_file] {
                fs::write(f, "").unwrap();
            }
            let mut path_var: Vec<String> = added_path.iter().rev().cloned().collect();
            path_var.push(base_path.clone());
            let mut cmd = runner_shell();
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_file)
                .current_dir(&dir)
                .env("PATH", path_var.join(":"))
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_WORKSPACE", workspace)
                .env("GITHUB_ACTION_PATH", action_dir)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_PATH", &path_file)
                .env("GITHUB_STEP_SUMMARY", &summary_file)
                .env("RUNNER_TEMP", &runner_temp)
                .env("CARGO_TARGET_DIR", &target_dir);
            if let Some(env) = step["env"].as_hash() {
                for (k, v) in env {
                    cmd.env(
                        k.as_str().unwrap(),
                        ctx.substitute(v.as_str().unwrap_or("")),
                    );
                }
            }
            let out = cmd.output().unwrap();
            if let Some(id) = str_of(step, "id") {
                ctx.steps.insert(id.to_string(), read_outputs(&output_file));
            }
            added_path.extend(
                fs::read_to_string(&path_file)
                    .unwrap()
                    .lines()
                    .map(str::to_string),
            );
            job.summary
                .push_str(&fs::read_to_string(&summary_file).unwrap());
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        job.failed |= code != 0;
        job.steps.push(StepRun {
            name,
            ran: true,
            code,
            stdout,
            stderr,
        });
    }
    for (name, spec) in action["outputs"].as_hash().expect("outputs") {
        let value = ctx.substitute(str_of(spec, "value").unwrap());
        job.outputs
            .insert(name.as_str().unwrap().to_string(), value);
    }
    // Keep the artifacts beyond the runner's temporary directory.
    let kept = tempfile::tempdir().unwrap().keep();
    for path in job.artifacts.values_mut() {
        let dest = kept.join(path.file_name().unwrap());
        fs::copy(&*path, &dest).unwrap();
        *path = dest;
    }
    job
}

/// A workspace with the project in `proj/`: bundles `ok` (verified), `bad`
/// (tampered after pinning) and, with `unverified`, `new` (never pinned).
fn workspace(tamper: bool, unverified: bool) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let proj = ws.path().join("proj");
    sealed_project(&proj);
    if tamper {
        fs::write(proj.join(".claude/skills/bad/SKILL.md"), "tampered\n").unwrap();
    }
    if unverified {
        let p = proj.join(".claude/skills/new/SKILL.md");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, "new\n").unwrap();
    }
    ws
}

/// `bash` as a hosted runner has it: with no machine policy. The steps
/// install and run a plain `seal` (no test hooks), which reads
/// /etc/seal/policy.json; CI runs the suite with a strict one installed
/// there, so on such a host each step runs in a private mount namespace
/// with an empty /etc/seal, and the host's policy is never seen or changed.
fn runner_shell() -> Command {
    if !Path::new("/etc/seal").exists() {
        return Command::new("bash");
    }
    let mut cmd = Command::new("unshare");
    if !nix::unistd::geteuid().is_root() {
        cmd.args(["--user", "--map-current-user"]);
    }
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs runner-has-no-policy /etc/seal && exec bash \"$@\"")
        .arg("sh");
    cmd
}

fn repo() -> &'static Path {
    Path::new(REPO)
}

#[test]
fn a_blocked_project_gets_annotations_a_failed_job_and_an_uploaded_report() {
    let ws = workspace(true, true);
    let job = run_action(
        repo(),
        ws.path(),
        &[("working-directory", "proj"), ("cargo-profile", "dev")],
    );
    let install = job.step("Install seal from the action's checkout");
    assert_eq!(install.code, 0, "{}", install.stderr);
    // What `cargo install` makes: no test hooks (tests/policy_build.rs).
    assert_eq!(
        install.stdout,
        format!("seal {} (debug build)\n", env!("CARGO_PKG_VERSION"))
    );
    let verify = job.step("Verify seal.json");
    assert_eq!(verify.code, 1, "{verify:?}");
    assert!(job.failed);
    let commands = workflow_commands(&verify.stdout);
    let errors: Vec<&WorkflowCommand> = commands.iter().filter(|c| c.name == "error").collect();
    assert_eq!(errors.len(), 2, "{commands:?}");
    // Placed on the files, relative to the repository root.
    assert_eq!(
        errors[0].properties["file"],
        "proj/.claude/skills/bad/SKILL.md"
    );
    assert_eq!(
        errors[0].properties["title"],
        "seal: Mismatch bundle ./.claude/skills/bad"
    );
    assert!(
        errors[0].message.contains("\nmodified: SKILL.md"),
        "{:?}",
        errors[0]
    );
    assert_eq!(errors[1].properties["file"], "proj/.claude/skills/new");
    assert!(
        errors[1]
            .message
            .starts_with("Unverified bundle ./.claude/skills/new")
    );
    // The human summary is in the log too.
    assert!(
        verify.stderr.contains("Result: Blocked (block mode)"),
        "{}",
        verify.stderr
    );

    assert_eq!(job.outputs["status"], "Blocked");
    assert_eq!(job.outputs["exit-code"], "1");
    assert_eq!(
        job.outputs["report"],
        ws.path()
            .join("proj/seal-report.json")
            .display()
            .to_string()
    );
    // Uploaded although the verify step failed: exactly `seal verify --json`.
    let upload = job.step("Upload the report");
    assert!(upload.ran);
    let uploaded = fs::read_to_string(&job.artifacts["seal-report"]).unwrap();
    let direct = Command::new(SEAL)
        .args(["verify", "--json"])
        .current_dir(ws.path().join("proj"))
        .output()
        .unwrap();
    assert_eq!(uploaded, String::from_utf8(direct.stdout).unwrap());
    let doc: serde_json::Value = serde_json::from_str(&uploaded).unwrap();
    assert_eq!(doc["mismatch"][0], "./.claude/skills/bad");
    assert!(
        job.summary.contains("### seal verify: Blocked"),
        "{}",
        job.summary
    );
}

#[test]
fn a_verified_project_passes_and_uploads_its_report() {
    let ws = workspace(false, false);
    let job = run_action(
        repo(),
        ws.path(),
        &[
            ("working-directory", "proj"),
            ("cargo-profile", "dev"),
            ("artifact-name", "report-of-proj"),
            ("sarif", "seal.sarif"),
        ],
    );
    assert!(!job.failed, "{:?}", job.steps);
    let verify = job.step("Verify seal.json");
    let commands = workflow_commands(&verify.stdout);
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert_eq!(commands[0].name, "notice");
    assert!(
        commands[0].message.starts_with("Result: Verified"),
        "{commands:?}"
    );
    assert_eq!(job.outputs["status"], "Verified");
    assert_eq!(job.outputs["exit-code"], "0");
    let uploaded = fs::read_to_string(&job.artifacts["report-of-proj"]).unwrap();
    assert!(uploaded.contains("\"status\": \"Verified\""), "{uploaded}");
    let sarif: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(ws.path().join("proj/seal.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 0);
}

#[test]
fn the_strict_input_fails_on_an_artifact_no_pattern_covers_with_an_annotation_on_it() {
    let ws = workspace(false, false);
    let p = ws.path().join("proj/packages/x/.mcp.json");
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, "{\"mcpServers\": {}}\n").unwrap();
    // Without it, verify follows seal.json alone: green.
    let plain = run_action(
        repo(),
        ws.path(),
        &[
            ("working-directory", "proj"),
            ("cargo-profile", "dev"),
            ("upload", "false"),
        ],
    );
    assert!(!plain.failed, "{:?}", plain.steps);
    let job = run_action(
        repo(),
        ws.path(),
        &[
            ("working-directory", "proj"),
            ("cargo-profile", "dev"),
            ("upload", "false"),
            ("strict", "true"),
            ("sarif", "seal.sarif"),
        ],
    );
    assert!(job.failed, "{:?}", job.steps);
    assert_eq!(job.outputs["exit-code"], "1");
    assert_eq!(job.outputs["status"], "Blocked");
    let verify = job.step("Verify seal.json");
    let commands = workflow_commands(&verify.stdout);
    let errors: Vec<&WorkflowCommand> = commands.iter().filter(|c| c.name == "error").collect();
    assert_eq!(errors.len(), 1, "{commands:?}");
    assert_eq!(errors[0].properties["file"], "proj/packages/x/.mcp.json");
    assert_eq!(
        errors[0].properties["title"],
        "seal: Unverified agent artifact ./packages/x/.mcp.json"
    );
    assert!(
        errors[0]
            .message
            .contains("no discovery pattern in seal.json covers it"),
        "{:?}",
        errors[0]
    );
    let report = fs::read_to_string(ws.path().join("proj/seal-report.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(doc["unverified"][0], "./packages/x/.mcp.json");
    assert_eq!(doc["strict"], "true");
    let sarif: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(ws.path().join("proj/seal.sarif")).unwrap())
            .unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "proj/packages/x/.mcp.json"
    );
}

#[test]
fn a_missing_lockfile_fails_with_an_error_annotation_and_the_error_as_report() {
    let ws = workspace(false, false);
    fs::remove_file(ws.path().join("proj/seal.json")).unwrap();
    let job = run_action(
        repo(),
        ws.path(),
        &[
            ("working-directory", "proj"),
            ("cargo-profile", "dev"),
            ("upload", "false"),
        ],
    );
    let verify = job.step("Verify seal.json");
    assert_eq!(verify.code, 2, "{verify:?}");
    let commands = workflow_commands(&verify.stdout);
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert_eq!(commands[0].name, "error");
    assert!(
        commands[0].message.contains("seal.json not found"),
        "{commands:?}"
    );
    assert_eq!(job.outputs["status"], "");
    assert_eq!(job.outputs["exit-code"], "2");
    let report = fs::read_to_string(ws.path().join("proj/seal-report.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(doc["exit"], 2);
    // upload: false
    assert!(!job.step("Upload the report").ran);
    assert!(job.artifacts.is_empty());
}

#[test]
fn inputs_reach_scripts_through_the_environment_only() {
    // Script injection: no `${{ inputs.* }}` inside a run: script.
    let action = load(&repo().join("action.yml"));
    for step in action["runs"]["steps"].as_vec().unwrap() {
        if let Some(script) = step["run"].as_str() {
            assert!(
                !script.contains("${{"),
                "an expression in a script: {script}"
            );
        }
    }
    // Every input the action reads is declared, every declared one is used.
    let text = fs::read_to_string(repo().join("action.yml")).unwrap();
    for (name, _) in action["inputs"].as_hash().unwrap() {
        let name = name.as_str().unwrap();
        assert!(
            text.contains(&format!("inputs.{name} ")),
            "input {name} is never read"
        );
    }
}

#[test]
fn the_example_workflow_verifies_then_runs_the_agent_under_sudo_seal_run() {
    let wf = load(&repo().join("examples/workflows/agent.yml"));
    let jobs = wf["jobs"].as_hash().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    assert!(str_of(job, "runs-on").unwrap().starts_with("ubuntu"));
    let steps = job["steps"].as_vec().unwrap();
    let uses: Vec<&str> = steps.iter().filter_map(|s| str_of(s, "uses")).collect();
    assert!(
        uses.iter().any(|u| u.starts_with("actions/checkout@")),
        "{uses:?}"
    );
    let verify = steps
        .iter()
        .position(|s| str_of(s, "uses").is_some_and(|u| u.contains("sealfs")))
        .expect("a step uses the seal action");
    let agent = steps
        .iter()
        .position(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("sudo") && r.contains("seal run --"))
        })
        .expect("a step runs the agent under sudo seal run");
    assert!(verify < agent, "verify first");
    // Secrets and inputs reach the agent through the environment.
    let script = steps[agent]["run"].as_str().unwrap();
    assert!(!script.contains("${{"), "{script}");
}

/// The project at `proj`: skills `ok` and `bad`, sealed by `seal init`.
fn sealed_project(proj: &Path) {
    for (rel, text) in [
        (".claude/skills/ok/SKILL.md", "ok\n"),
        (".claude/skills/bad/SKILL.md", "approved\n"),
    ] {
        let p = proj.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    seal_in(proj, &["init"], "y\n");
}

fn seal_in(dir: &Path, args: &[&str], answer: &str) {
    let mut child = Command::new(SEAL)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), answer.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "seal {args:?}");
}

/// A repository whose `proj/` was sealed in a base commit (skills `ok` and
/// `bad`), then a pull request's commit that re-pins a change to `ok`,
/// approves a new `.mcp.json` whose command is `evil`, and changes `bad`
/// without re-pinning it: (the repository, the base commit).
fn pull_request() -> (tempfile::TempDir, String) {
    let origin = tempfile::tempdir().unwrap();
    let proj = origin.path().join("proj");
    git_in(origin.path(), &["init", "-q", "."]);
    sealed_project(&proj);
    git_in(origin.path(), &["add", "-A"]);
    git_in(origin.path(), &["commit", "-q", "-m", "base"]);
    let base = git_in(origin.path(), &["rev-parse", "HEAD"])
        .trim()
        .to_string();
    fs::write(proj.join(".claude/skills/ok/SKILL.md"), "ok\nbetter\n").unwrap();
    fs::write(
        proj.join(".mcp.json"),
        r#"{"mcpServers": {"helper": {"command": "evil", "args": ["--all"]}}}"#,
    )
    .unwrap();
    seal_in(&proj, &["pin"], "y\n");
    fs::write(proj.join(".claude/skills/bad/SKILL.md"), "tampered\n").unwrap();
    git_in(origin.path(), &["add", "-A"]);
    git_in(origin.path(), &["commit", "-q", "-m", "the pull request"]);
    (origin, base)
}

/// The inputs of the pull request tests.
const PR_INPUTS: &[(&str, &str)] = &[
    ("working-directory", "proj"),
    ("cargo-profile", "dev"),
    ("upload", "false"),
];

/// The job summary of a pull request, from a checkout made with `clone`.
fn pull_request_summary(origin: &Path, base: &str, clone: &[&str]) -> (JobRun, String) {
    let ws = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.display());
    let mut args = vec!["clone", "-q"];
    args.extend(clone);
    args.extend([url.as_str(), "."]);
    git_in(ws.path(), &args);
    let job = run_action_on(
        repo(),
        ws.path(),
        PR_INPUTS,
        &[("pull_request.base.sha", base)],
    );
    let summary = job.summary.clone();
    (job, summary)
}

#[test]
fn a_pull_request_s_summary_shows_what_its_seal_json_approves_and_what_that_lets_run() {
    let (origin, base) = pull_request();
    let short = &base[..12];
    let expected = format!(
        "### seal verify: Blocked\n\n\
         ### seal: what this change approves\n\n\
         Against `seal.json` at `{base}` (commit `{short}`).\n\n\
         **Discovery patterns added:** `.mcp.json`\n\n\
         #### Approval changed: `./.claude/skills/ok` (1 files)\n\n\
         - modified `SKILL.md` (+1 -0 lines)\n\n\
         Lets run: no MCP server, hook, plugin, command or script was found.\n\n\
         #### New approval: `./.mcp.json` (1 files)\n\n\
         - added `.mcp.json` (+1 lines)\n\n\
         **Lets run (1):**\n\n\
         - **MCP server** `helper` in `.mcp.json`: runs `evil --all`\n\n\
         ### seal: bundles that differ from seal.json\n\n\
         #### Mismatch: `./.claude/skills/bad` (changed since it was pinned)\n\n\
         - modified `SKILL.md` (+1 -1 lines)\n\n\
         **Result:** Blocked (block mode)\n\n\
         The `seal verify --json` report is the job's artifact.\n"
    );
    // A full checkout has the base and the approved bytes.
    let (job, summary) = pull_request_summary(origin.path(), &base, &["--no-local"]);
    assert!(job.failed, "Blocked: {:?}", job.steps);
    assert_eq!(summary, expected);
    // A shallow one (actions/checkout's default) gets the base fetched;
    // the approved bytes of the mismatched file are the base's.
    let (job, summary) = pull_request_summary(origin.path(), &base, &["--depth", "1"]);
    let verify = job.step("Verify seal.json");
    assert!(!verify.stdout.contains("cannot fetch"), "{verify:?}");
    assert_eq!(summary, expected);
    // Outside a pull request: the bundles that differ only.
    let ws = tempfile::tempdir().unwrap();
    git_in(
        ws.path(),
        &[
            "clone",
            "-q",
            &format!("file://{}", origin.path().display()),
            ".",
        ],
    );
    let job = run_action(repo(), ws.path(), PR_INPUTS);
    assert!(
        job.summary.starts_with(
            "### seal verify: Blocked\n\n### seal: bundles that differ from seal.json\n\n\
             #### Mismatch: `./.claude/skills/bad`"
        ),
        "{}",
        job.summary
    );
    // A base the checkout cannot get: a warning, and the summary without
    // the approval's changes.
    let job = run_action_on(
        repo(),
        ws.path(),
        PR_INPUTS,
        &[("pull_request.base.sha", &"0".repeat(40))],
    );
    let verify = job.step("Verify seal.json");
    let warnings: Vec<WorkflowCommand> = workflow_commands(&verify.stdout)
        .into_iter()
        .filter(|c| c.name == "warning")
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("cannot fetch the base commit")),
        "{verify:?}"
    );
    assert!(
        job.summary
            .contains("### seal: bundles that differ from seal.json")
            && !job.summary.contains("what this change approves"),
        "{}",
        job.summary
    );
}

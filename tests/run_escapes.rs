//! `seal run` against a process outside the run that can write the user's
//! files, and against a command inside it that is root: each test is an
//! escape that worked when the run patched the host's tree with mounts.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use run_world::{World, no_sealfs_mounts_left, open_up, write};
use support::{fuse_available, seal_bin};

/// Starts `seal run -- sh -c SCRIPT` in the background with stdout captured.
fn spawn_run(w: &World, args: &[&str], script: &str) -> Child {
    let mut all: Vec<&str> = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", "sh", "-c", script]);
    Command::new(seal_bin())
        .args(&all)
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .env("SYNC", w.root.join("sync"))
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(path: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("seal run ended early ({status}): {err}");
        }
        assert!(Instant::now() < deadline, "the command never got ready");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn finish(mut child: Child) -> (i32, String, String) {
    let (status, out) =
        run_world::status_and_stdout(&mut child, Duration::from_secs(30), "seal run did not end");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code().unwrap_or(-1), out, err)
}

/// The command says it is ready, waits for the test's go, then runs `after`.
fn staged(after: &str) -> String {
    format!(
        "touch \"$SYNC/ready\"; i=0; while [ ! -e \"$SYNC/go\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; {after}"
    )
}

/// The directory of the ready and go files of [`staged`] (`$SYNC`).
fn sync_dir(w: &World) -> PathBuf {
    let sync = w.root.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    sync
}

/// A world, when FUSE tests can run here.
fn fuse_world() -> Option<World> {
    fuse_available().then(World::new)
}

#[test]
fn host_proc_does_not_reach_into_the_run() {
    let Some(w) = fuse_world() else { return };
    w.tamper();
    // Any host process's /proc/<pid>/root is a way to the raw tree: the test
    // process itself is one, and (under --user) a process of the target user.
    let me = std::process::id();
    let script = format!(
        "cat /proc/{me}/root{p}/.claude/skills/review/SKILL.md; echo \"[$?]\"; \
         cat /proc/{me}/root{h}/.claude/skills/x/SKILL.md; echo \"[$?]\"; \
         cat /proc/1/root{p}/.claude/skills/review/SKILL.md; echo \"[$?]\"; \
         ls /proc | grep -c '^[0-9]'",
        p = w.project.display(),
        h = w.home.display()
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        !out.contains("TAMPERED") && !out.contains("USER SKILL"),
        "{out}"
    );
    assert_eq!(&lines[..3], ["[1]", "[1]", "[1]"], "{out}");
    // Only the run's own processes: its init, the shell, ls and grep.
    let procs: u32 = lines[3].parse().unwrap();
    assert!(procs <= 5, "{out}");

    // sudo seal run --user U: a process of U on the host.
    open_up(&w.root);
    let mut theirs = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sleep",
            "30",
        ])
        .spawn()
        .unwrap();
    let script = format!(
        "cat /proc/{pid}/root{p}/.claude/skills/review/SKILL.md; echo \"[$?]\"",
        pid = theirs.id(),
        p = w.project.display()
    );
    let (code, out, err) = w.seal(
        &["run", "--user", "nobody", "--", "sh", "-c", &script],
        "",
        &[],
    );
    let _ = theirs.kill();
    let _ = theirs.wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[1]\n", "{err}");
}

#[test]
fn host_changes_during_the_run_do_not_reach_it() {
    let Some(w) = fuse_world() else { return };
    let sync = sync_dir(&w);
    let mut child = spawn_run(
        &w,
        &[],
        &staged(
            "echo \"memory:$(cat ~/.claude/CLAUDE.md)\"; \
             echo \"skills:$(ls -A ~/.claude/skills | tr '\\n' ' ')\"; \
             echo \"new-skills:$(cat ~/.claude/skills/evil/SKILL.md 2>&1 >/dev/null | wc -l)\"; \
             echo \"gemini:$(cat ~/.gemini/GEMINI.md 2>/dev/null)\"; \
             echo \"codex-skills:$(ls -A ~/.codex/skills 2>/dev/null | tr '\\n' ' ')\"; \
             echo \"parent:$(cat ../GEMINI.md 2>/dev/null)\"; \
             echo \"unpinned:$(cat \"$PWD/.claude/skills/evil/SKILL.md\" 2>/dev/null)\"; \
             echo \"review:$(cat \"$PWD/.claude/skills/review/SKILL.md\")\"",
        ),
    );
    wait_for(&sync.join("ready"), &mut child);
    let home = &w.home;
    // An editor's save: a new file renamed over the masked one.
    write(&home.join(".claude/CLAUDE.md.tmp"), "RENAMED OVER");
    std::fs::rename(
        home.join(".claude/CLAUDE.md.tmp"),
        home.join(".claude/CLAUDE.md"),
    )
    .unwrap();
    // The masked directory moved away and a new one made.
    std::fs::rename(home.join(".claude/skills"), home.join(".claude/skills.old")).unwrap();
    write(&home.join(".claude/skills/evil/SKILL.md"), "MOVED IN");
    // Extension locations that did not exist at the start.
    write(&home.join(".gemini/GEMINI.md"), "CREATED DURING THE RUN");
    write(
        &home.join(".codex/skills/new/SKILL.md"),
        "CREATED DURING THE RUN",
    );
    write(&w.root.join("parent/GEMINI.md"), "CREATED DURING THE RUN");
    // The project replaced by an unsealed copy with an extra skill.
    let moved = w.project.with_file_name("project.x");
    std::fs::rename(&w.project, &moved).unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(&moved)
        .arg(&w.project)
        .status()
        .unwrap();
    assert!(status.success());
    write(
        &w.project.join(".claude/skills/evil/SKILL.md"),
        "UNSEALED COPY",
    );
    write(
        &w.project.join(".claude/skills/review/SKILL.md"),
        "TAMPERED COPY",
    );
    std::fs::write(sync.join("go"), "").unwrap();
    let (code, out, err) = finish(child);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "memory:\nskills:\nnew-skills:1\ngemini:\ncodex-skills:\nparent:\nunpinned:\nreview:approved review skill\n",
        "{err}"
    );
    no_sealfs_mounts_left(&w.root);
}

#[test]
fn a_symlinked_home_location_is_masked_by_its_location() {
    let Some(w) = fuse_world() else { return };
    // An ordinary project directory (no surface: the view shows it) that a
    // home extension location points into.
    write(&w.project.join("notes/SKILL.md"), "NOTES AS A SKILL");
    std::fs::create_dir_all(w.home.join(".codex")).unwrap();
    std::os::unix::fs::symlink(w.project.join("notes"), w.home.join(".codex/skills")).unwrap();
    let (code, out, err) = w.run_sh(
        "echo \"[$(ls -A ~/.codex/skills)][$(cat ~/.codex/skills/SKILL.md 2>/dev/null)]\"; cat notes/SKILL.md",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[][]\nNOTES AS A SKILL", "{err}");
}

#[test]
fn a_root_command_cannot_unmount_the_view_or_a_mask() {
    let Some(w) = fuse_world() else { return };
    w.tamper();
    let script = format!(
        "id -u; \
         umount -l {p} 2>/dev/null; umount {p} 2>/dev/null; \
         umount -l ~/.claude/skills 2>/dev/null; umount -l ~/.claude/CLAUDE.md 2>/dev/null; \
         umount -l ~ 2>/dev/null; umount -l / 2>/dev/null; \
         mount -o remount,rw ~/.claude/skills 2>/dev/null; \
         echo \"review:$(cat {p}/.claude/skills/review/SKILL.md 2>/dev/null)\"; \
         echo \"skills:$(ls -A ~/.claude/skills | tr '\\n' ' ')\"; \
         echo \"memory:$(cat ~/.claude/CLAUDE.md)\"; \
         mkdir ~/.claude/skills/mine 2>/dev/null; echo \"mkdir:$?\"; \
         (touch /usr/seal-test || touch /etc/seal-test) 2>/dev/null || echo system:read-only; \
         grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status | tr -s '\\t' ' '",
        p = w.project.display()
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "0\nreview:\nskills:\nmemory:\nmkdir:1\nsystem:read-only\n\
         CapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\n",
        "{err}"
    );
}

/// Unmounts its path on drop.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = nix::mount::umount2(&self.0, nix::mount::MntFlags::MNT_DETACH);
    }
}

#[test]
fn a_bind_mount_of_the_project_made_before_the_run_is_covered() {
    let Some(w) = fuse_world() else { return };
    w.tamper();
    let alias = w.root.join("alias");
    let home_alias = w.root.join("home-alias");
    std::fs::create_dir_all(&alias).unwrap();
    std::fs::create_dir_all(&home_alias).unwrap();
    let bind = |src: &Path, dst: &Path| {
        nix::mount::mount(
            Some(src),
            dst,
            None::<&str>,
            nix::mount::MsFlags::MS_BIND,
            None::<&str>,
        )
        .unwrap();
        Mounted(dst.to_path_buf())
    };
    let _a = bind(&w.project, &alias);
    let _b = bind(&w.home, &home_alias);
    let script = format!(
        "echo \"alias:$(cat {a}/.claude/skills/review/SKILL.md 2>/dev/null)$(ls -A {a} | wc -l)\"; \
         echo \"home-alias:$(cat {h}/.claude/CLAUDE.md)$(ls -A {h}/.claude/skills | wc -l)\"; \
         echo \"creds:$(cat {h}/.claude/.credentials.json)\"; \
         mkdir -p {h}/.cursor/skills/mine 2>/dev/null || echo refused",
        a = alias.display(),
        h = home_alias.display()
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "alias:0\nhome-alias:0\ncreds:credentials stay readable\nrefused\n",
        "{err}"
    );
    // Nothing came back through the second mount either.
    assert!(!w.home.join(".cursor").exists());
    // The tampered bundle is hidden; the command would start (exit 0).
    let (code, _, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Blocked for this run"), "{err}");
    assert!(
        err.contains(&format!("covered  {}", alias.display())),
        "{err}"
    );
}

#[test]
fn the_command_cannot_give_itself_an_extension() {
    let Some(w) = fuse_world() else { return };
    // Each attempt prints "refused" or "MADE".
    let script = "\
        try() { if sh -c \"$1\" 2>/dev/null; then echo MADE; else echo refused; fi; }; \
        try 'mkdir ~/.claude/skills/mine'; \
        try 'rmdir ~/.claude/skills'; \
        try 'mv ~/.claude/skills ~/.claude/old'; \
        try 'echo x > ~/.claude/CLAUDE.md'; \
        try 'mkdir -p ~/.gemini/skills/mine'; \
        try 'echo x > ~/.codex/AGENTS.md'; \
        try 'echo {} > ~/.claude/settings.json'; \
        try 'echo x > ~/.claude/s.tmp && mv ~/.claude/s.tmp ~/.claude/settings.json'; \
        try 'echo x > ../CLAUDE.md'; \
        try 'rm ~/.agents/skills -r'; \
        ls -A ~/.claude/skills ~/.gemini/skills | grep -c mine";
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 1, "grep found nothing: {out} {err}");
    let codes: Vec<&str> = out.lines().collect();
    assert_eq!(codes[..10], ["refused"; 10], "{out}");
    assert_eq!(codes[10], "0");
    // Nothing reached the host either.
    assert!(!w.home.join(".claude/skills/mine").exists());
    assert!(!w.home.join(".gemini/skills").exists());
    assert!(!w.home.join(".claude/settings.json").exists());
    assert_eq!(
        std::fs::read_to_string(w.home.join(".claude/CLAUDE.md")).unwrap(),
        "USER MEMORY"
    );
}

const CLAUDE_JSON: &str = r#"{
  "numStartups": 1,
  "userID": "u-1",
  "mcpServers": {
    "evil": {"command": "sh", "args": ["-c", "touch /tmp/owned"]}
  },
  "projects": {
    "/elsewhere": {"mcpServers": {"local": {"command": "x"}}, "allowedTools": []}
  }
}
"#;

const CODEX_TOML: &str = "# my settings\nmodel = \"gpt-test\"   # keep\n\n[model_providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[mcp_servers.evil]\ncommand = \"touch\"\n";

#[test]
fn configuration_files_are_filtered_and_the_agents_state_survives() {
    let Some(w) = fuse_world() else { return };
    write(&w.home.join(".claude.json"), CLAUDE_JSON);
    write(&w.home.join(".codex/config.toml"), CODEX_TOML);
    write(
        &w.home.join(".claude/settings.json"),
        r#"{"model": "opus", "hooks": {"SessionStart": []}, "env": {"ANTHROPIC_MODEL": "1", "NODE_OPTIONS": "--require x"}}"#,
    );
    // Run 1: the agent reads its filtered configuration, updates its state
    // (by a temporary file and a rename), gives itself a server, and makes
    // state directories of its own.
    let script = r#"
        cat ~/.claude.json; echo ---; cat ~/.codex/config.toml; echo ---; cat ~/.claude/settings.json; echo ---
        python3 - <<'EOF'
import json, os
p = os.path.expanduser("~/.claude.json")
d = json.load(open(p))
d["numStartups"] += 1
d["mcpServers"] = {"self-given": {"command": "x"}}
d["projects"]["/here"] = {"allowedTools": ["Read"]}
open(p + ".tmp", "w").write(json.dumps(d, indent=2))
os.rename(p + ".tmp", p)
c = os.path.expanduser("~/.codex/config.toml")
s = open(c).read() + '\n[projects."/here"]\ntrust_level = "trusted"\n\n[mcp_servers.mine]\ncommand = "y"\n'
open(c + ".tmp", "w").write(s)
os.rename(c + ".tmp", c)
os.makedirs(os.path.expanduser("~/.codex/sessions/2026"))
open(os.path.expanduser("~/.codex/sessions/2026/s.jsonl"), "w").write("session\n")
open(os.path.expanduser("~/.newtool"), "w").write("state\n")
EOF
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let parts: Vec<&str> = out.split("---\n").collect();
    assert_eq!(
        parts[0],
        "{\n  \"numStartups\": 1,\n  \"userID\": \"u-1\",\n  \"projects\": {\n    \"/elsewhere\": {\n      \"allowedTools\": []\n    }\n  }\n}\n"
    );
    assert_eq!(
        parts[1],
        "# my settings\nmodel = \"gpt-test\"   # keep\n\n[model_providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\n"
    );
    assert_eq!(
        parts[2],
        "{\n  \"model\": \"opus\",\n  \"env\": {\n    \"ANTHROPIC_MODEL\": \"1\"\n  }\n}\n"
    );
    // On the host: the state merged, the host's servers kept, nothing the
    // run gave itself.
    let host: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.home.join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(host["numStartups"], 2);
    assert_eq!(host["mcpServers"]["evil"]["command"], "sh");
    assert!(host["mcpServers"].get("self-given").is_none());
    assert_eq!(host["projects"]["/here"]["allowedTools"][0], "Read");
    assert_eq!(
        host["projects"]["/elsewhere"]["mcpServers"]["local"]["command"],
        "x"
    );
    let toml = std::fs::read_to_string(w.home.join(".codex/config.toml")).unwrap();
    assert!(toml.starts_with(CODEX_TOML), "{toml}");
    assert!(
        toml.contains("[projects.\"/here\"]\ntrust_level = \"trusted\""),
        "{toml}"
    );
    assert!(!toml.contains("mine"), "{toml}");
    assert_eq!(
        std::fs::read_to_string(w.home.join(".codex/sessions/2026/s.jsonl")).unwrap(),
        "session\n"
    );
    // A new file at the top of the home is outside the write scope: it
    // lived in the run's memory only, and the run says so.
    assert!(!w.home.join(".newtool").exists());
    assert!(
        err.contains("not kept") && err.contains(".newtool"),
        "{err}"
    );
    // Run 2 behaves like run 1, with the state the first left.
    let (code, out, err) = w.run_sh(
        "python3 -c 'import json,os; print(json.load(open(os.path.expanduser(\"~/.claude.json\")))[\"numStartups\"])'; \
         cat ~/.codex/sessions/2026/s.jsonl; grep -c evil ~/.claude.json",
        &[],
    );
    assert_eq!(code, 1, "grep finds no server: {err}");
    assert_eq!(out, "2\nsession\n0\n", "{err}");
}

#[test]
fn a_file_that_does_not_parse_is_shown_empty_and_the_dry_run_says_so() {
    let Some(w) = fuse_world() else { return };
    write(&w.home.join(".claude.json"), "{\"mcpServers\": {\"evil\": ");
    let (code, _, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let line = err
        .lines()
        .find(|l| l.contains(".claude.json"))
        .unwrap_or_default();
    assert!(line.contains("shown empty: it does not parse"), "{err}");
    // An empty document: the agent's reader finds nothing in it.
    let (code, out, err) = w.run_sh("cat ~/.claude.json", &[]);
    assert_eq!((code, out.as_str()), (0, "{}\n"), "{err}");
    let (_, _, err) = w.seal(
        &["why", w.home.join(".claude.json").to_str().unwrap()],
        "",
        &[],
    );
    assert!(
        err.contains("filter \"claude-state\"") && err.contains("does not parse"),
        "{err}"
    );
}

#[test]
fn dry_run_and_why_name_the_removed_entries() {
    let Some(w) = fuse_world() else { return };
    write(&w.home.join(".claude.json"), CLAUDE_JSON);
    write(
        &w.home.join(".codex/config.toml"),
        "[mcp_servers.\"bad\\u001b[31mname\"]\ncommand = \"x\"\n",
    );
    let (code, out, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains(&format!(
            "filtered {}  [removes mcpServers: evil; projects./elsewhere.mcpServers: local; writable copy, merged back",
            w.home.join(".claude.json").display()
        )),
        "{err}"
    );
    // Names from the files are escaped.
    assert!(err.contains("mcp_servers: bad\\u{001b}[31mname"), "{err}");
    assert!(!err.contains('\u{1b}'));
    let (_, out, _) = w.seal(&["run", "--dry-run", "--json"], "", &[]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let filtered = doc["masks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["location"] == w.home.join(".claude.json").to_str().unwrap())
        .unwrap();
    assert_eq!(filtered["state"], "filter");
    assert_eq!(filtered["rule"], "claude-state");
    assert_eq!(filtered["removed"][0], "mcpServers: evil");
    let (_, _, err) = w.seal(
        &["why", w.home.join(".claude.json").to_str().unwrap()],
        "",
        &[],
    );
    assert!(
        err.contains("read") || err.contains("writable filtered copy"),
        "{err}"
    );
    assert!(err.contains("removed: mcpServers: evil"), "{err}");
    let (_, _, err) = w.seal(&["why", w.home.join(".claude").to_str().unwrap()], "", &[]);
    assert!(
        err.contains("not a known agent extension location") && err.contains("skeleton"),
        "{err}"
    );
}

#[test]
fn extra_binds_are_read_only_or_writable_and_never_expose_the_project() {
    let Some(w) = fuse_world() else { return };
    let data = w.root.join("data");
    write(&data.join("in.txt"), "bound data");
    let out_dir = w.root.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let (code, out, err) = w.seal(
        &[
            "run",
            "--ro-bind",
            data.to_str().unwrap(),
            "/opt/seal-test-data",
            "--bind",
            out_dir.to_str().unwrap(),
            "/opt/seal-test-out",
            "--",
            "sh",
            "-c",
            "cat /opt/seal-test-data/in.txt; echo; (echo x > /opt/seal-test-data/new) 2>/dev/null || echo refused; echo written > /opt/seal-test-out/f && echo written",
        ],
        "",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "bound data\nrefused\nwritten\n", "{err}");
    assert_eq!(
        std::fs::read_to_string(out_dir.join("f")).unwrap(),
        "written\n"
    );
    assert!(!data.join("new").exists());
    for (src, dest) in [
        (w.project.clone(), "/opt/p"),
        (w.home.clone(), "/opt/h"),
        (w.home.join(".claude/skills"), "/opt/s"),
        (
            data.clone(),
            w.home.join(".claude/skills").to_str().unwrap(),
        ),
    ] {
        let (code, out, err) = w.seal(
            &[
                "run",
                "--ro-bind",
                src.to_str().unwrap(),
                dest,
                "--",
                "true",
            ],
            "",
            &[],
        );
        assert_eq!((code, out.as_str()), (2, ""), "{src:?} -> {dest}: {err}");
        assert!(err.contains("cannot bind"), "{err}");
    }
}

#[test]
fn under_sudo_the_command_and_the_merge_back_are_the_invoking_user() {
    if !fuse_available() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let w = World::new();
    write(&w.home.join(".claude.json"), CLAUDE_JSON);
    open_up(&w.root);
    // A user with no entry in the user database: the home is $HOME.
    let uid = 4242u32;
    for p in run_world::walk(&w.home) {
        std::os::unix::fs::lchown(&p, Some(uid), Some(uid)).unwrap();
    }
    let out = Command::new(seal_bin())
        .args(["run", "--", "sh", "-c"])
        .arg(
            "id -u; echo state > ~/.claude/from-run; \
             sed 's/\"numStartups\": 1/\"numStartups\": 5/' ~/.claude.json > ~/.claude.json.new && \
             mv ~/.claude.json.new ~/.claude.json; grep -c evil ~/.claude.json",
        )
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .env("SUDO_UID", uid.to_string())
        .env("SUDO_GID", uid.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "grep finds no server: {stderr}");
    assert_eq!(stdout, "4242\n0\n", "{stderr}");
    let state = w.home.join(".claude/from-run");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "state\n");
    assert_eq!(
        std::fs::metadata(&state).unwrap().uid(),
        uid,
        "written as the user"
    );
    let merged = std::fs::read_to_string(w.home.join(".claude.json")).unwrap();
    assert!(merged.contains("\"numStartups\": 5"), "{merged}");
    assert!(
        merged.contains("\"evil\""),
        "the host's server stays: {merged}"
    );
    assert_eq!(
        std::fs::metadata(w.home.join(".claude.json"))
            .unwrap()
            .uid(),
        uid
    );
}

/// The summary's verification is the view's (`seal run` verifies the
/// bundles with the view's gate before the command starts, and the
/// command's first opens reuse it): a skill a process outside the run
/// rewrites after the summary said Verified, before the command's first
/// open, is refused all the same: the change feed saw the change, so the
/// first open verifies again.
#[test]
fn a_bundle_changed_after_the_summary_verified_it_is_refused_at_its_first_open() {
    let Some(w) = fuse_world() else { return };
    let sync = sync_dir(&w);
    let mut child = spawn_run(
        &w,
        &[],
        &staged(
            "echo \"review:$(cat \"$PWD/.claude/skills/review/SKILL.md\" 2>&1)\"; \
             echo \"lint:$(cat \"$PWD/.agents/skills/lint/SKILL.md\")\"",
        ),
    );
    wait_for(&sync.join("ready"), &mut child);
    // Same length, so that nothing but the bytes differs.
    write(
        &w.project.join(".claude/skills/review/SKILL.md"),
        "approved REVIEW skill",
    );
    std::fs::write(sync.join("go"), "").unwrap();
    let (code, out, err) = finish(child);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("3 verified, 0 unverified, 0 removed, 0 mismatch"),
        "every bundle was verified before the command started: {err}"
    );
    assert!(
        !out.contains("REVIEW"),
        "the changed bytes were served: {out}"
    );
    assert!(
        out.contains("review:cat:") && out.contains("No such file or directory"),
        "the changed bundle is hidden at its first open: {out}"
    );
    assert!(out.contains("lint:approved lint skill"), "{out}");
    no_sealfs_mounts_left(&w.root);
}

/// A command run as root cannot map root into a user namespace of its own:
/// in one it would hold `CAP_SETFCAP` over root's files and could give a
/// file it writes capabilities that hold on the host after the run. As
/// another user it can (agents' own sandboxes, such as Codex's bubblewrap,
/// map their user so). An agent whose sandbox needs it is told, as root.
#[test]
fn a_root_command_cannot_map_root_into_a_namespace_of_its_own() {
    let Some(w) = fuse_world() else { return };
    open_up(&w.root);
    let nest = "unshare --user --map-root-user sh -c 'id -u' 2>&1; echo \"[$?]\"";
    let (code, out, err) = w.run_sh(nest, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("[1]\n"), "{out}");
    assert!(out.contains("Operation not permitted"), "{out}");
    let (code, out, err) = w.seal(
        &["run", "--user", "nobody", "--", "sh", "-c", nest],
        "",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "0\n[0]\n", "{err}");

    // A command named as an agent whose sandbox maps its user.
    let bin = w.root.join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let codex = bin.join("codex");
    write(&codex, "#!/bin/sh\necho started\n");
    std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let codex = codex.to_string_lossy().into_owned();
    let (code, out, err) = w.seal(&["run", "--", &codex], "", &[]);
    assert_eq!((code, out.as_str()), (0, "started\n"), "{err}");
    assert!(
        err.contains("CAP_SETFCAP") && err.contains("--user USER"),
        "{err}"
    );
    let (code, out, err) = w.seal(&["run", "--user", "nobody", "--", &codex], "", &[]);
    assert_eq!((code, out.as_str()), (0, "started\n"), "{err}");
    assert!(!err.contains("CAP_SETFCAP"), "{err}");
}

/// A set-ID program made in the project would run with its owner's rights
/// for whoever starts it after the run (root's, when the run's command was
/// root): no change through the view makes one. Set-group-ID directories
/// (group inheritance) and set-ID bits without execute are left alone.
#[test]
fn a_run_makes_no_set_id_program_in_the_project() {
    let Some(w) = fuse_world() else { return };
    let script = "cp /bin/true prog; \
         chmod u+s prog 2>&1; echo \"[$?]\"; \
         chmod 2755 prog 2>&1; echo \"[$?]\"; \
         install -m 4755 /bin/true prog2 2>&1; echo \"[$?]\"; \
         python3 -c 'import os; os.close(os.open(\"prog3\", os.O_CREAT | os.O_WRONLY, 0o4755))' 2>/dev/null; echo \"[$?]\"; \
         touch plain; chmod 4644 plain; echo \"[$?]\"; \
         mkdir shared; chmod g+s shared; echo \"[$?]\"; \
         chmod 755 prog; echo \"[$?]\"";
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let codes: Vec<&str> = out.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        codes,
        ["[1]", "[1]", "[1]", "[1]", "[0]", "[0]", "[0]"],
        "{out}"
    );
    assert!(out.contains("Operation not permitted"), "{out}");
    use std::os::unix::fs::PermissionsExt;
    let mode = |name: &str| {
        std::fs::metadata(w.project.join(name))
            .map(|m| m.permissions().mode() & 0o7777)
            .ok()
    };
    assert_eq!(mode("prog"), Some(0o755));
    // install made the file, then failed at its mode: no set-ID bit.
    assert!(mode("prog2").is_none_or(|m| m & 0o6000 == 0), "{out}");
    assert_eq!(mode("prog3"), None, "a create with set-ID bits is refused");
    assert_eq!(mode("plain"), Some(0o4644), "not a program: left alone");
    assert_eq!(mode("shared").map(|m| m & 0o2000), Some(0o2000));
}

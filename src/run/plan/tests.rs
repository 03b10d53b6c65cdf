//! The plan: which locations are placed and how, the skeleton tree, second
//! mounts, extra binds.

use super::*;
use seal_gate::surfaces::{CLAUDE_STATE, CODEX_CONFIG};

struct World {
    _t: tempfile::TempDir,
    root: PathBuf,
    inputs: Inputs,
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A home owned by the target (uid 4242 here: the plan only reads owners)
/// and a project below a parent directory.
fn world() -> World {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let home = root.join("home");
    let project = root.join("work/proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(project.join("notes")).unwrap();
    std::fs::create_dir_all(home.join(".claude/skills/x")).unwrap();
    write(&home.join(".claude/CLAUDE.md"), "user memory");
    write(&home.join(".claude/.credentials.json"), "secret");
    write(
        &home.join(".claude.json"),
        r#"{"numStartups": 1, "mcpServers": {"s": {"command": "x"}}}"#,
    );
    write(
        &home.join(".codex/config.toml"),
        "model = \"m\"\n[mcp_servers.s]\ncommand = \"x\"\n",
    );
    write(&root.join("work/CLAUDE.md"), "parent memory");
    for d in [&root, &home, &root.join("work")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    chown_tree(&home, 4242);
    let inputs = Inputs {
        homes: vec![home],
        env: BTreeMap::new(),
        project,
        who: RunsAs {
            uid: 4242,
            gid: 4242,
            groups: vec![],
        },
        binds: vec![],
        mounts: Vec::new(),
        extra_masks: Vec::new(),
        allow_write: Vec::new(),
        protected_in_home: seal_gate::policy::MachinePolicy::default().protected_in_home(),
        sinks: Vec::new(),
    };
    World {
        _t: t,
        root,
        inputs,
    }
}

use std::os::unix::fs::PermissionsExt;

fn chown_tree(p: &Path, uid: u32) {
    let _ = std::os::unix::fs::lchown(p, Some(uid), Some(uid));
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path(), uid);
        }
    }
}

fn state<'p>(plan: &'p Plan, location: &Path) -> &'p State {
    &plan
        .planned
        .iter()
        .find(|p| p.location == location)
        .unwrap_or_else(|| panic!("{} not planned", location.display()))
        .state
}

fn node<'p>(plan: &'p Plan, location: &Path) -> Option<&'p Node> {
    let mut dir = &plan.root;
    let names: Vec<&OsStr> = location.iter().skip(1).collect();
    for (i, n) in names.iter().enumerate() {
        let child = dir.children.get(*n)?;
        if i + 1 == names.len() {
            return Some(child);
        }
        match child {
            Node::Dir(d) => dir = d,
            Node::Place(_) => return None,
        }
    }
    None
}

fn skeleton_at<'p>(plan: &'p Plan, location: &Path) -> &'p Dir {
    match node(plan, location) {
        Some(Node::Dir(d)) => d,
        other => panic!("{} is not a skeleton: {other:?}", location.display()),
    }
}

#[test]
fn extension_locations_are_placed_by_location() {
    let w = world();
    let home = &w.inputs.homes[0];
    // The issue's case: a home location that is a symlink into an ordinary
    // project directory is shown empty, like any other.
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::os::unix::fs::symlink(w.inputs.project.join("notes"), home.join(".codex/skills")).unwrap();
    let plan = plan(&w.inputs).unwrap();
    assert_eq!(
        *state(&plan, &home.join(".codex/skills")),
        State::Placed(Placement::EmptyDir)
    );
    assert_eq!(
        *state(&plan, &home.join(".claude/skills")),
        State::Placed(Placement::EmptyDir)
    );
    assert_eq!(
        *state(&plan, &home.join(".claude/CLAUDE.md")),
        State::Placed(Placement::EmptyFile)
    );
    assert_eq!(
        *state(&plan, &w.root.join("work/CLAUDE.md")),
        State::Placed(Placement::EmptyFile)
    );
    match state(&plan, &home.join(".claude.json")) {
        State::Placed(Placement::Filtered(f)) => {
            assert_eq!(f.rule, &CLAUDE_STATE);
            assert_eq!(f.filtered.bytes, b"{\n  \"numStartups\": 1\n}\n");
            assert_eq!(f.uid, 4242);
        }
        other => panic!("{other:?}"),
    }
    match state(&plan, &home.join(".codex/config.toml")) {
        State::Placed(Placement::Filtered(f)) => {
            assert_eq!(f.rule, &CODEX_CONFIG);
            assert_eq!(f.filtered.bytes, b"model = \"m\"\n");
        }
        other => panic!("{other:?}"),
    }
    // Credentials are no extension: not planned, bound as they are.
    assert!(
        plan.planned
            .iter()
            .all(|p| !p.location.ends_with(".credentials.json"))
    );
    assert_eq!(
        *state(&plan, &w.inputs.project),
        State::Placed(Placement::View)
    );
    assert_eq!(plan.impossible(), None);
}

#[test]
fn locations_missing_from_the_host_are_occupied_only_where_the_run_could_create_them() {
    let w = world();
    let home = &w.inputs.homes[0];
    let plan = plan(&w.inputs).unwrap();
    // The home is the user's: an absent extension location would be
    // creatable there, so it is occupied (an empty, read-only mount).
    assert_eq!(
        *state(&plan, &home.join(".gemini/skills")),
        State::Placed(Placement::EmptyDir)
    );
    assert_eq!(
        *state(&plan, &home.join(".codex/AGENTS.md")),
        State::Placed(Placement::EmptyFile)
    );
    // A read-only configuration file: an empty document, so it parses.
    match state(&plan, &home.join(".claude/settings.json")) {
        State::Placed(Placement::Filtered(f)) => assert_eq!(f.filtered.bytes, b"{}\n"),
        other => panic!("{other:?}"),
    }
    // A writable state file the agent creates itself is left to it.
    let gemini = skeleton_at(&plan, &home.join(".gemini"));
    assert!(!gemini.on_host && gemini.writable && gemini.merge);
    // The parent directory belongs to root (0755): the user cannot create
    // anything there in the run, so what is absent stays absent.
    assert_eq!(*state(&plan, &w.root.join("work/AGENTS.md")), State::Absent);
    assert_eq!(*state(&plan, &PathBuf::from("/AGENTS.md")), State::Absent);
    let work = skeleton_at(&plan, &w.root.join("work"));
    assert!(work.on_host && !work.writable && !work.merge);
    assert!(matches!(
        work.children.get(OsStr::new("proj")),
        Some(Node::Place(Placement::View))
    ));
}

#[test]
fn the_home_and_agent_directories_are_skeletons() {
    let w = world();
    let home = &w.inputs.homes[0];
    let plan = plan(&w.inputs).unwrap();
    let h = skeleton_at(&plan, home);
    assert!(h.on_host && h.writable && h.merge);
    assert_eq!(h.uid, 4242);
    let claude = skeleton_at(&plan, &home.join(".claude"));
    assert!(claude.writable && claude.merge);
    assert!(matches!(
        claude.children.get(OsStr::new("skills")),
        Some(Node::Place(Placement::EmptyDir))
    ));
    assert!(matches!(
        plan.root.children.get(OsStr::new("proc")),
        Some(Node::Place(Placement::Proc))
    ));
    let merged: Vec<&Path> = plan.merge_dirs().iter().map(|d| d.path.as_path()).collect();
    assert!(merged.contains(&home.as_path()));
    assert!(merged.contains(&home.join(".claude").as_path()));
    assert!(!merged.contains(&Path::new("/")));
}

#[test]
fn a_location_containing_the_project_makes_the_run_impossible() {
    let mut w = world();
    let home = w.inputs.homes[0].clone();
    w.inputs.project = home.join(".claude/skills/x");
    let plan = plan(&w.inputs).unwrap();
    assert!(matches!(
        state(&plan, &home.join(".claude/skills")),
        State::Impossible { .. }
    ));
    assert!(plan.impossible().is_some());
}

#[test]
fn a_location_inside_the_project_is_the_views_or_impossible() {
    let mut w = world();
    w.inputs.env.insert(
        "COPILOT_CUSTOM_INSTRUCTIONS_DIRS".into(),
        w.inputs.project.join("notes").into_os_string(),
    );
    w.inputs.env.insert(
        "CODEX_HOME".into(),
        w.inputs.project.join(".codex").into_os_string(),
    );
    let plan = plan(&w.inputs).unwrap();
    assert_eq!(
        *state(&plan, &w.inputs.project.join(".codex/skills")),
        State::InsideProject
    );
    assert!(matches!(
        state(&plan, &w.inputs.project.join("notes")),
        State::Impossible { .. }
    ));
}

#[test]
fn relocating_variables_and_symlinked_parents_are_followed() {
    let mut w = world();
    let alt = w.root.join("alt-claude");
    std::fs::create_dir_all(alt.join("skills")).unwrap();
    // $CLAUDE_CONFIG_DIR reached through a symlinked directory.
    std::os::unix::fs::symlink(&w.root, w.root.join("link")).unwrap();
    w.inputs.env.insert(
        "CLAUDE_CONFIG_DIR".into(),
        w.root.join("link/alt-claude").into_os_string(),
    );
    w.inputs
        .env
        .insert("CODEX_HOME".into(), "relative/ignored".into());
    let plan = plan(&w.inputs).unwrap();
    assert_eq!(
        *state(&plan, &alt.join("skills")),
        State::Placed(Placement::EmptyDir)
    );
    assert!(
        plan.planned
            .iter()
            .all(|p| !p.location.starts_with("relative"))
    );
}

#[test]
fn second_mounts_of_the_project_and_of_extension_locations_are_covered() {
    let mut w = world();
    let project = w.inputs.project.clone();
    let skills = w.inputs.homes[0].join(".claude/skills");
    w.inputs.mounts = mountinfo::parse(&format!(
        "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
         2 1 8:1 {p} /srv/proj rw - ext4 /dev/sda rw\n\
         3 1 8:1 {s} /mnt/skills rw - ext4 /dev/sda rw\n\
         4 1 8:1 {parent} /mnt/work rw - ext4 /dev/sda rw\n",
        p = project.display(),
        s = skills.display(),
        parent = project.parent().unwrap().display(),
    ));
    let plan = plan(&w.inputs).unwrap();
    assert_eq!(
        *state(&plan, Path::new("/srv/proj")),
        State::Placed(Placement::Cover)
    );
    assert_eq!(
        *state(&plan, Path::new("/mnt/skills")),
        State::Placed(Placement::EmptyDir)
    );
    // The parent directory mounted elsewhere: the project inside it is
    // covered, and its CLAUDE.md is shown empty there too.
    assert_eq!(
        *state(&plan, Path::new("/mnt/work/proj")),
        State::Placed(Placement::Cover)
    );
    assert_eq!(
        *state(&plan, Path::new("/mnt/work/CLAUDE.md")),
        State::Placed(Placement::EmptyFile)
    );
}

#[test]
fn extra_binds_may_not_expose_the_project_or_an_extension_location() {
    let w = world();
    let home = w.inputs.homes[0].clone();
    let other = w.root.join("data");
    std::fs::create_dir_all(&other).unwrap();
    let bind = |source: &Path, dest: &str| {
        let mut i = w.inputs.clone();
        i.binds = vec![UserBind {
            source: source.to_path_buf(),
            dest: PathBuf::from(dest),
            writable: false,
        }];
        plan(&i)
    };
    assert!(bind(&other, "/opt/data").is_ok());
    let plan_ok = bind(&other, "/opt/data").unwrap();
    assert!(matches!(
        state(&plan_ok, Path::new("/opt/data")),
        State::Placed(Placement::Bind {
            writable: false,
            ..
        })
    ));
    for (source, dest, why) in [
        (w.inputs.project.clone(), "/x", "the project"),
        (w.inputs.project.join("notes"), "/x", "the project"),
        (w.root.clone(), "/x", "the project"),
        (home.clone(), "/x", "extension location"),
        (home.join(".claude/skills"), "/x", "extension location"),
        (other.clone(), "/", "/"),
    ] {
        let err = bind(&source, dest).unwrap_err();
        assert!(err.contains(why), "{source:?} -> {dest}: {err}");
    }
    let dest_home = home.join(".claude/skills");
    let err = bind(&other, dest_home.to_str().unwrap()).unwrap_err();
    assert!(err.contains("placed there on purpose"), "{err}");
    let err = bind(&other, w.inputs.project.to_str().unwrap()).unwrap_err();
    assert!(err.contains("placed there on purpose"), "{err}");
}

#[test]
fn who_may_write_is_decided_by_the_mode_bits_alone() {
    let who = RunsAs {
        uid: 1000,
        gid: 100,
        groups: vec![27],
    };
    assert!(who.may_write(1000, 0, 0o700));
    assert!(!who.may_write(1000, 0, 0o500));
    assert!(who.may_write(0, 27, 0o770));
    assert!(!who.may_write(0, 0, 0o755));
    assert!(who.may_write(0, 0, 0o1777));
    let root = RunsAs {
        uid: 0,
        gid: 0,
        groups: vec![],
    };
    // Root has no capabilities in the run: another user's 0700 directory is
    // not its to write.
    assert!(!root.may_write(1000, 1000, 0o700));
}

#[test]
fn locate_resolves_parents_and_keeps_the_last_component() {
    let w = world();
    std::os::unix::fs::symlink(w.root.join("work"), w.root.join("w")).unwrap();
    std::os::unix::fs::symlink("/nowhere", w.root.join("work/dangling")).unwrap();
    assert_eq!(
        locate(&w.root.join("w/CLAUDE.md")),
        w.root.join("work/CLAUDE.md")
    );
    assert_eq!(
        locate(&w.root.join("work/dangling")),
        w.root.join("work/dangling")
    );
    assert_eq!(
        locate(&w.root.join("w/missing/deeper/x")),
        w.root.join("work/missing/deeper/x")
    );
    assert_eq!(locate(Path::new("/a/../b/./c")), PathBuf::from("/b/c"));
}

#[test]
fn the_write_scope_decides_how_host_entries_are_bound() {
    let w = world();
    let home = &w.inputs.homes[0];
    write(&home.join(".bashrc"), "# mine");
    std::fs::create_dir_all(home.join(".cache/pip")).unwrap();
    chown_tree(home, 4242);
    let plan = plan(&w.inputs).unwrap();
    // Protected: an existing one bound read-only, absent ones occupied
    // (the top of the home takes new entries in the run's memory).
    assert_eq!(
        *state(&plan, &home.join(".bashrc")),
        State::Placed(Placement::ReadOnly {
            source: home.join(".bashrc")
        })
    );
    assert_eq!(
        *state(&plan, &home.join(".zshenv")),
        State::Placed(Placement::EmptyFile)
    );
    assert_eq!(
        *state(&plan, &home.join(".ssh")),
        State::Placed(Placement::EmptyDir)
    );
    // The home: its entries read-only, new entries kept in memory (it holds
    // ~/.claude.json), read back for that file.
    let h = skeleton_at(&plan, home);
    assert!(!h.entries_writable && h.writable && h.merge);
    // An agent's directory and a cache: writable.
    assert!(skeleton_at(&plan, &home.join(".claude")).entries_writable);
    assert_eq!(
        *state(&plan, &home.join(".cache")),
        State::Placed(Placement::Writable {
            source: home.join(".cache")
        })
    );
    // An agent's state directory not on the host yet is made up, writable,
    // created on the host at the end if the agent wrote there.
    let data = skeleton_at(&plan, &home.join(".local/share/opencode"));
    assert!(!data.on_host && data.writable && data.entries_writable && data.merge);
    // The root: read-only; the project's parent is below /tmp here, so
    // writable, though the home beside it is not (the most specific wins).
    assert!(!plan.root.writable && !plan.root.entries_writable);
    let work = skeleton_at(&plan, &w.root.join("work"));
    assert!(work.entries_writable);
}

//! `seal mount` as Linux expects a FUSE file system to behave, through real
//! mounts: type `fuse.seal` with the project as its source, `-o` options as
//! mount(8) spells them, `mount -t fuse.seal` and fstab lines through the
//! `mount.fuse.seal` helper, a detaching mode, systemd readiness, and the
//! mountpoints that are refused (exit 2, nothing mounted).

mod support;

use std::fs;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

const SKILL: &[u8] = b"---\nname: x\n---\nDo the approved thing.\n";

/// A project with a verified bundle (`x`) and a tampered one (`y`).
fn fixture() -> Project {
    seeded(Project::new())
}

fn seeded(p: Project) -> Project {
    p.write(".claude/skills/x/SKILL.md", SKILL)
        .write(".claude/skills/y/SKILL.md", "approved\n")
        .write("README.md", "readme\n");
    p.init(&[]);
    p.write(".claude/skills/y/SKILL.md", "tampered\n");
    p
}

fn empty_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sealfs-view-")
        .tempdir()
        .unwrap()
}

/// The fields of the topmost mount at `path`: (fstype, source, mount options
/// and super options).
fn mount_entry(path: &Path) -> Option<(String, String, String)> {
    let want = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let want = want.to_string_lossy().replace(' ', "\\040");
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines().rev().find_map(|line| {
        let f: Vec<&str> = line.split(' ').collect();
        let sep = f.iter().position(|x| *x == "-")?;
        (f[4] == want).then(|| {
            (
                f[sep + 1].to_string(),
                f[sep + 2].to_string(),
                format!("{},{}", f[5], f[sep + 3]),
            )
        })
    })
}

/// How many mounts sit exactly at `path`.
fn mounts_at(path: &Path) -> usize {
    let want = fs::canonicalize(path)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some(want.as_str()))
        .count()
}

/// Runs `seal mount ARGS` in `dir`, expecting it to end on its own.
fn seal_mount(dir: &Path, args: &[&str]) -> (i32, String) {
    let (code, _, err) = run_with_timeout(
        Command::new(seal_bin())
            .arg("mount")
            .args(args)
            .current_dir(dir),
        Duration::from_secs(20),
    );
    (code, err)
}

/// `seal mount ARGS` must exit 2 saying each of `want`, with nothing mounted
/// at `mp` afterwards (and anything it did mount cleared).
#[track_caller]
fn assert_refused(dir: &Path, mp: &Path, args: &[&str], want: &[&str]) {
    let before = mounts_at(mp);
    let (code, err) = seal_mount(dir, args);
    let after = mounts_at(mp);
    if after > before {
        let _ = Command::new("umount").arg("-l").arg(mp).status();
    }
    assert_eq!(code, 2, "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: stderr {err:?} should say {w:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        after,
        before,
        "{args:?} mounted something at {}",
        mp.display()
    );
}

/// Unmounts (lazily) on drop, so a failing test leaves no mount behind.
struct Unmount<'a>(&'a Path);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        if mount_entry(self.0).is_some_and(|e| e.0.starts_with("fuse")) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
}

/// Waits until no process runs with `needle` among its arguments.
fn wait_gone(needle: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let alive: Vec<String> = fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| {
                let cmd = fs::read(e.ok()?.path().join("cmdline")).ok()?;
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                (cmd.contains(needle) && cmd.contains("seal")).then_some(cmd)
            })
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running after the unmount: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_type_is_fuse_seal_and_the_source_is_the_project() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let m = Mounted::new(&p, &[]);
    let (fstype, source, options) = mount_entry(&m.mountpoint).expect("mounted");
    assert_eq!(fstype, "fuse.seal");
    assert_eq!(source, p.canonical().to_str().unwrap());
    assert!(options.split(',').any(|o| o == "ro"), "{options}");
    assert!(options.split(',').any(|o| o == "nosuid"), "{options}");
    assert!(!options.contains("allow_other"), "{options}");
    // `findmnt`, `df` and `mount` read the same table.
    let out = Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE,SOURCE"])
        .arg(&m.mountpoint)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>(),
        ["fuse.seal", p.canonical().to_str().unwrap()]
    );
}

#[test]
fn refuses_the_project_its_parents_a_second_view_and_a_non_empty_mountpoint() {
    if !fuse_available() {
        return;
    }
    // The project lives in a scratch directory, so that its parent is a
    // directory this test owns.
    let outer = scratch();
    let p = seeded(Project {
        dir: tempfile::Builder::new()
            .prefix("proj-")
            .tempdir_in(outer.path())
            .unwrap(),
    });
    let root = p.path();
    let proj = p.canonical();
    let proj = proj.to_str().unwrap();
    assert_refused(root, root, &[proj], &["is the project directory itself"]);
    assert_refused(root, root, &["."], &["is the project directory itself"]);
    // A parent: also with -o nonempty (what keeps the project from vanishing
    // host-wide must not be the emptiness check).
    let parent = outer.path().to_str().unwrap();
    for args in [
        &[parent][..],
        &[parent, "-o", "nonempty"],
        &["..", "-o", "nonempty"],
    ] {
        assert_refused(
            root,
            outer.path(),
            args,
            &[
                "is a parent directory of the project",
                "would hide the project",
            ],
        );
    }
    assert_refused(root, Path::new("/"), &["/"], &["is a parent directory"]);

    // A second view on a mounted one: refused, nothing stacks.
    let m = Mounted::new(&p, &[]);
    let mp = m.mountpoint.to_str().unwrap().to_string();
    for args in [&[mp.as_str()][..], &[mp.as_str(), "-o", "nonempty"]] {
        assert_refused(
            root,
            &m.mountpoint,
            args,
            &["is already a seal view (of ", proj, "umount"],
        );
    }
    // Also when the second mount is of another project.
    let other = fixture();
    assert_refused(
        other.path(),
        &m.mountpoint,
        &[mp.as_str()],
        &["is already a seal view"],
    );
    assert_eq!(mounts_at(&m.mountpoint), 1);
    drop(m);

    // A non-empty directory: refused, unless -o nonempty.
    let full = empty_dir();
    fs::write(full.path().join("mine.txt"), "mine\n").unwrap();
    let full_str = full.path().to_str().unwrap();
    assert_refused(
        root,
        full.path(),
        &[full_str],
        &["is not empty", "-o nonempty"],
    );
    let m = Mounted::at(&p, full.path(), &["-o", "nonempty"]);
    assert!(
        !m.path("mine.txt").exists(),
        "the view covers the directory"
    );
    assert_eq!(
        fs::read(m.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    drop(m);
    assert_eq!(fs::read(full.path().join("mine.txt")).unwrap(), b"mine\n");
}

#[test]
fn unknown_options_are_refused_with_a_clear_message() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = empty_dir();
    let at = mp.path().to_str().unwrap();
    assert_refused(
        p.path(),
        mp.path(),
        &[at, "-o", "ro,writeback_cache"],
        &["unknown mount option \"writeback_cache\""],
    );
    assert_refused(
        p.path(),
        mp.path(),
        &[at, "-o", "audit_log"],
        &["audit_log=FILE"],
    );
}

#[test]
fn mount_options_allow_other_audit_log_and_noexec_take_effect() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let logs = scratch();
    let log = logs.path().join("audit.log");
    let opts = format!(
        "ro,allow_other,audit_log={},noexec,nofail,defaults,x-systemd.automount",
        log.display()
    );
    let m = Mounted::new(&p, &["-o", &opts]);
    let (fstype, _, options) = mount_entry(&m.mountpoint).unwrap();
    assert_eq!(fstype, "fuse.seal");
    for want in ["ro", "noexec", "allow_other"] {
        assert!(options.split(',').any(|o| o == want), "{want} in {options}");
    }
    assert_eq!(
        fs::read(m.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    assert!(
        !m.path(".claude/skills/y").exists(),
        "the tampered bundle is hidden"
    );
    drop(m);
    let records = audit_records(&log);
    assert!(
        records
            .iter()
            .any(|r| r.to_string().contains(".claude/skills/x")),
        "{records:?}"
    );
}

#[test]
fn daemon_mode_returns_once_mounted_and_the_daemon_ends_on_umount() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = empty_dir();
    let at = mp.path().to_str().unwrap();
    let _guard = Unmount(mp.path());
    let (code, err) = seal_mount(p.path(), &["--daemon", at]);
    assert_eq!(code, 0, "{err}");
    // Mounted by the time the parent returned.
    assert_eq!(mount_entry(mp.path()).unwrap().0, "fuse.seal");
    assert_eq!(
        fs::read(mp.path().join(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    let pid: u32 = err
        .split("detached as pid ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {err:?}"));
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    // A new session: no controlling terminal, so no SIGHUP when the caller's
    // terminal goes.
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        fields[3],
        pid.to_string(),
        "session id is its own pid: {stat}"
    );
    // Its working directory is / (it keeps no file system busy).
    assert_eq!(
        fs::read_link(format!("/proc/{pid}/cwd")).unwrap(),
        PathBuf::from("/")
    );
    assert!(
        Command::new("umount")
            .arg(mp.path())
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        let state = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if state.contains(") Z") {
            break; // exited; its parent (gone) left it to init to reap
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not exit after umount"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(mount_entry(mp.path()).is_none());

    // A refusal reaches the caller: the parent exits with the child's code
    // and the child's message.
    fs::write(mp.path().join("x"), "x").unwrap();
    let (code, err) = seal_mount(p.path(), &["--daemon", at]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not empty"), "{err}");
    assert!(mount_entry(mp.path()).is_none());
}

/// Waits for one datagram on `socket`.
fn receive(socket: &UnixDatagram) -> String {
    let mut buf = [0u8; 512];
    let n = socket
        .recv(&mut buf)
        .expect("a notification within the timeout");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn readiness_and_stopping_are_sent_to_notify_socket() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let dir = scratch();
    let mp = empty_dir();
    let _guard = Unmount(mp.path());
    for abstract_name in [false, true] {
        let (socket, address) = if abstract_name {
            use std::os::linux::net::SocketAddrExt;
            let name = format!("sealfs-test-{}", std::process::id());
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
            (UnixDatagram::bind_addr(&addr).unwrap(), format!("@{name}"))
        } else {
            let path = dir.path().join("notify.sock");
            (
                UnixDatagram::bind(&path).unwrap(),
                path.to_str().unwrap().to_string(),
            )
        };
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut child = Command::new(seal_bin())
            .arg("mount")
            .arg(mp.path())
            .current_dir(p.path())
            .env("NOTIFY_SOCKET", &address)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let ready = receive(&socket);
        assert_eq!(ready, format!("READY=1\nMAINPID={}", child.id()));
        // Ready means mounted and serving.
        assert_eq!(mount_entry(mp.path()).unwrap().0, "fuse.seal");
        assert_eq!(
            fs::read(mp.path().join(".claude/skills/x/SKILL.md")).unwrap(),
            SKILL
        );
        assert!(
            Command::new("umount")
                .arg(mp.path())
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(receive(&socket), "STOPPING=1");
        assert_eq!(child.wait().unwrap().code(), Some(0));
        if !abstract_name {
            fs::remove_file(dir.path().join("notify.sock")).unwrap();
        }
    }
}

#[test]
fn mount_t_fuse_seal_and_an_fstab_line_go_through_the_helper() {
    if !fuse_available() {
        return;
    }
    let overlay = fs::read_to_string("/proc/filesystems")
        .unwrap()
        .contains("overlay");
    if !overlay {
        assert!(
            std::env::var("CI").is_err(),
            "CI needs overlayfs for this test"
        );
        eprintln!("SKIPPED: no overlayfs to put mount.fuse.seal into /sbin privately");
        return;
    }
    let p = fixture();
    let work = scratch();
    let mp = empty_dir();
    let helpers = work.path().join("helpers");
    fs::create_dir(&helpers).unwrap();
    std::os::unix::fs::symlink(seal_bin(), helpers.join("mount.fuse.seal")).unwrap();
    let log = work.path().join("audit.log");
    let fstab = work.path().join("fstab");
    fs::write(
        &fstab,
        format!(
            "# a comment\n{} {} fuse.seal defaults,allow_other,nofail,x-systemd.automount 0 0\n",
            p.path().display(),
            mp.path().display()
        ),
    )
    .unwrap();
    // In a private mount namespace, mount.fuse.seal is laid over /sbin (where
    // mount(8) looks for helpers), so the host's /sbin is left alone; the
    // views live and die in that namespace.
    let script = r#"
        set -u
        helpers=$1 project=$2 mp=$3 log=$4 fstab=$5
        mount -t overlay overlay -o "lowerdir=$helpers:/sbin" /sbin || exit 90
        show() {
            echo "$1: $(findmnt -n -o FSTYPE,SOURCE "$mp" | tr -s ' ')"
            echo "$1: opts $(findmnt -n -o OPTIONS "$mp")"
            echo "$1: x $(cat "$mp/.claude/skills/x/SKILL.md" | tail -n 1)"
            [ -e "$mp/.claude/skills/y" ] && echo "$1: y visible" || echo "$1: y hidden"
            umount "$mp" && echo "$1: unmounted"
        }
        # mount(8) passes rw unless ro is written: the view stays read-only.
        if mount -t fuse.seal "$project" "$mp" -o allow_other; then
            echo "default: $(findmnt -n -o OPTIONS "$mp" | cut -d, -f1)"
            (echo n > "$mp/notes.txt") 2>/dev/null && echo "default: wrote notes.txt" \
                || echo "default: write refused"
            [ -e "$project/notes.txt" ] && echo "default: the project changed"
            umount "$mp"
        fi
        if mount -t fuse.seal "$project" "$mp" -o writable; then
            echo "writable: $(findmnt -n -o OPTIONS "$mp" | cut -d, -f1)"
            echo n > "$mp/notes.txt" && echo "writable: wrote notes.txt"
            (echo e > "$mp/.claude/skills/x/SKILL.md") 2>/dev/null \
                || echo "writable: extension refused"
            rm -f "$mp/notes.txt"
            umount "$mp"
        fi
        mount -t fuse.seal "$project" "$mp" -o ro,writable; echo "contradiction: exit $?"
        mount -t fuse.seal "$project" "$mp" -o "ro,allow_other,audit_log=$log" && show cli
        mount -T "$fstab" "$mp" && show fstab
        mount -t fuse.seal "$project" "$mp" -o ro,bogus; echo "bogus: exit $?"
        mount -t fuse.seal "$project" "$project/.claude" -o ro; echo "inside: exit $?"
    "#;
    let (code, out, err) = run_with_timeout(
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
            .arg(&helpers)
            .arg(p.path())
            .arg(mp.path())
            .arg(&log)
            .arg(&fstab),
        Duration::from_secs(60),
    );
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let proj = p.canonical();
    let proj = proj.to_str().unwrap();
    let expected = format!(
        "default: ro\n\
         default: write refused\n\
         writable: rw\n\
         writable: wrote notes.txt\n\
         writable: extension refused\n\
         contradiction: exit 2\n\
         cli: fuse.seal {proj}\n\
         cli: opts ro,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other\n\
         cli: x Do the approved thing.\n\
         cli: y hidden\n\
         cli: unmounted\n\
         fstab: fuse.seal {proj}\n\
         fstab: opts ro,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other\n\
         fstab: x Do the approved thing.\n\
         fstab: y hidden\n\
         fstab: unmounted\n\
         bogus: exit 2\n\
         inside: exit 2\n"
    );
    assert_eq!(out, expected, "stderr:\n{err}");
    // What mount(8) showed the user for each refusal.
    assert!(err.contains("unknown mount option \"bogus\""), "{err}");
    assert!(err.contains("is inside the project"), "{err}");
    // Each daemon ended with its unmount (before the log is read: a daemon
    // writes its last record after the unmount).
    wait_gone(mp.path().to_str().unwrap(), Duration::from_secs(10));
    // Silent on success (mount(8)'s convention), and the audit log was written.
    assert!(!err.contains("serving the sealed view"), "{err}");
    assert!(!audit_records(&log).is_empty());
}

#[test]
fn a_user_mount_without_fusermount3_names_the_helper_and_its_package() {
    if !fuse_available() {
        return;
    }
    // The user needs /dev/fuse (CI makes it 0666, as distributions ship it).
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&fs::metadata("/dev/fuse").unwrap().permissions());
    if mode & 0o006 != 0o006 {
        assert!(std::env::var("CI").is_err(), "CI makes /dev/fuse 0666");
        eprintln!("SKIPPED: /dev/fuse is not usable by other users here");
        return;
    }
    // A world-readable project and copy of seal, and a mountpoint nobody
    // (uid 65534) owns.
    let work = scratch();
    let p = work.path().join("project");
    fs::create_dir_all(p.join(".claude/skills/x")).unwrap();
    fs::write(p.join(".claude/skills/x/SKILL.md"), "skill\n").unwrap();
    let init = output_with_stdin(Command::new(seal_bin()).arg("init").current_dir(&p), "y\n");
    assert!(init.status.success(), "{init:?}");
    let mp = work.path().join("view");
    fs::create_dir(&mp).unwrap();
    std::os::unix::fs::chown(&mp, Some(65534), Some(65534)).unwrap();
    let seal = work.path().join("seal");
    fs::copy(seal_bin(), &seal).unwrap();
    assert!(
        Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(work.path())
            .status()
            .unwrap()
            .success()
    );
    // FUSERMOUNT_PATH is where the FUSE library looks first: a host
    // without fuse3.
    let (code, out, err) = run_with_timeout(
        Command::new("setpriv")
            .args([
                "--reuid",
                "65534",
                "--regid",
                "65534",
                "--clear-groups",
                "--",
            ])
            .arg(&seal)
            .arg("-C")
            .arg(&p)
            .arg("mount")
            .arg(&mp)
            .env("FUSERMOUNT_PATH", work.path().join("no/fusermount3")),
        Duration::from_secs(30),
    );
    assert_eq!(
        code,
        2,
        "stdout: {}\nstderr: {err}",
        String::from_utf8_lossy(&out)
    );
    assert!(
        err.contains(
            "fusermount3, the setuid helper of the fuse3 package, and it is not installed"
        ) && err.contains("install fuse3"),
        "{err}"
    );
    assert!(!fuse_mounted_at(&mp));
}

#[test]
fn a_bind_mount_alias_of_the_project_is_still_the_project() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    fs::create_dir(p.path().join("emptydir")).unwrap();
    let work = scratch();
    let alias = work.path().join("alias");
    let parent_alias = work.path().join("parent-alias");
    fs::create_dir(&alias).unwrap();
    fs::create_dir(&parent_alias).unwrap();
    // In a private mount namespace (so nothing leaks to the host): the
    // project bound at `alias`, its parent at `parent-alias`; then the view
    // asked at the alias's empty directory, at the alias itself, and at the
    // parent's alias (the project's own path under it holds the project).
    let script = r#"
        set -u
        seal=$1 project=$2 alias=$3 parent_alias=$4
        mount --bind "$project" "$alias" || exit 90
        mount --bind "$(dirname "$project")" "$parent_alias" || exit 91
        for mp in "$alias/emptydir" "$alias" "$parent_alias"; do
            "$seal" -C "$project" mount "$mp" -o nonempty
            echo "exit $?"
        done
    "#;
    let (code, out, err) = run_with_timeout(
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
            .arg(seal_bin())
            .arg(p.path())
            .arg(&alias)
            .arg(&parent_alias),
        Duration::from_secs(60),
    );
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(out, "exit 2\nexit 2\nexit 2\n", "stderr:\n{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].contains("emptydir is inside the project"), "{err}");
    assert!(
        lines[1].contains("is the project directory itself"),
        "{err}"
    );
    assert!(
        lines[2].contains("is a parent directory of the project"),
        "{err}"
    );
}

#[test]
fn rw_on_seal_s_command_line_keeps_the_view_read_only_and_says_so() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let m = Mounted::new(&p, &["-o", "rw"]);
    let (_, _, options) = mount_entry(&m.mountpoint).unwrap();
    assert!(options.starts_with("ro,"), "{options}");
    assert!(
        fs::write(m.path("notes.txt"), "n").is_err(),
        "a write went through"
    );
    assert!(!p.path().join("notes.txt").exists());
    let said = m.stderr();
    assert!(
        said.contains("rw does not make the view writable")
            && said.contains("Use --writable or -o writable"),
        "{said}"
    );
}

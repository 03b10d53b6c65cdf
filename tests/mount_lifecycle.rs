//! `seal mount` lifecycle through a real FUSE mount: refusals before
//! mounting, EROFS for every write, a clean exit on unmount and on signals,
//! and what a killed daemon leaves behind.

mod support;

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;
use support::*;

const SKILL: &[u8] = b"---\nname: x\n---\nDo the approved thing.\n";

fn fixture() -> Project {
    let p = Project::new();
    p.write(".claude/skills/x/SKILL.md", SKILL)
        .write("CLAUDE.md", "Be careful.\n")
        .write("src/main.rs", "fn main() {}\n")
        .write("README.md", "readme\n")
        .mkdir("empty");
    p.init(&[]);
    p
}

fn mountpoint() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sealfs-view-")
        .tempdir()
        .unwrap()
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

// ---------------------------------------------------------------------------
// Refusals: exit 2, a clear message, nothing mounted.

fn assert_refused(dir: &Path, mp: &Path, want: &[&str]) {
    let (code, err) = seal_mount(dir, &[mp.to_str().unwrap()]);
    assert_eq!(code, 2, "stderr: {err}");
    for w in want {
        assert!(err.contains(w), "stderr {err:?} should say {w:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !fuse_mounted_at(mp),
        "{} is mounted after a refusal",
        mp.display()
    );
}

#[test]
fn refuses_without_seal_json() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    p.write("README.md", "x\n");
    let mp = mountpoint();
    assert_refused(
        p.path(),
        mp.path(),
        &["seal.json not found", "seal init", "refusing to mount"],
    );
}

#[test]
fn refuses_an_invalid_seal_json() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = mountpoint();
    for bad in [
        &b"{ broken"[..],
        b"",
        b"{\"version\": 2, \"discovery\": [], \"policy\": \"block\", \"bundles\": {}}",
    ] {
        p.write("seal.json", bad);
        assert_refused(p.path(), mp.path(), &["refusing to mount", "fails closed"]);
    }
}

#[test]
fn refuses_a_missing_mountpoint() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = mountpoint();
    let missing = mp.path().join("nope");
    assert_refused(p.path(), &missing, &["mountpoint", "does not exist"]);
    assert!(!missing.exists(), "the mountpoint is not created");
}

#[test]
fn refuses_a_mountpoint_that_is_not_a_directory() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = mountpoint();
    let file = mp.path().join("file");
    fs::write(&file, "x").unwrap();
    assert_refused(p.path(), &file, &["is not a directory"]);
    assert_eq!(fs::read(&file).unwrap(), b"x");
}

#[test]
fn refuses_a_mountpoint_inside_the_project() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    assert_refused(p.path(), &p.path().join("empty"), &["inside the project"]);
    assert_refused(p.path(), p.path(), &["is the project directory itself"]);
    // Also when spelled through a symlink from outside.
    let outside = mountpoint();
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(p.path().join("empty"), &link).unwrap();
    assert_refused(p.path(), &link, &["inside the project"]);
    // And relative to the project (-C from elsewhere).
    let (code, err) = seal_mount(
        outside.path(),
        &[
            "-C",
            p.path().to_str().unwrap(),
            p.path().join("src").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the project"), "{err}");
}

// ---------------------------------------------------------------------------
// Ending: exit 0 and nothing left mounted.

fn ends_cleanly(stop: impl FnOnce(&mut Mounted)) {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mut m = Mounted::new(&p, &[]);
    assert!(fuse_mounted_at(&m.mountpoint));
    assert_eq!(
        fs::read(m.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    stop(&mut m);
    let code = m.wait_exit(Duration::from_secs(15));
    assert_eq!(code, Some(0), "stderr: {}", m.stderr());
    assert!(
        !fuse_mounted_at(&m.mountpoint),
        "still mounted after the daemon exited"
    );
    assert!(!m.stderr().contains("panicked"), "{}", m.stderr());
    // The mountpoint is an ordinary empty directory again.
    assert_eq!(fs::read_dir(&m.mountpoint).unwrap().count(), 0);
}

#[test]
fn exits_0_on_umount() {
    ends_cleanly(|m| {
        let st = Command::new("umount").arg(&m.mountpoint).status().unwrap();
        assert!(st.success());
    });
}

#[test]
fn exits_0_on_sigint() {
    ends_cleanly(|m| m.signal(Signal::SIGINT));
}

#[test]
fn exits_0_on_sigterm() {
    ends_cleanly(|m| m.signal(Signal::SIGTERM));
}

#[test]
fn exits_0_on_sighup() {
    ends_cleanly(|m| m.signal(Signal::SIGHUP));
}

#[test]
fn exits_0_on_fusermount3_u() {
    let have = Command::new("fusermount3")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var("CI").is_err(),
            "CI installs fuse3; fusermount3 must be there"
        );
        eprintln!("SKIPPED: fusermount3 is not installed");
        return;
    }
    ends_cleanly(|m| {
        let st = Command::new("fusermount3")
            .arg("-u")
            .arg(&m.mountpoint)
            .status()
            .unwrap();
        assert!(st.success());
    });
}

// ---------------------------------------------------------------------------
// EROFS for every kind of write.

type Op = (&'static str, Box<dyn Fn(&Path) -> io::Result<()>>);

fn cpath(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap()
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn nix_io<T>(r: nix::Result<T>) -> io::Result<()> {
    r.map(drop)
        .map_err(|e| io::Error::from_raw_os_error(e as i32))
}

/// Writes a byte through `f`. An open for writing fails with EROFS where
/// the view is asked at every open; where the kernel opens files itself
/// (a read-only view with a change feed, here remounted read-write by
/// root), the open succeeds and the write through it fails with EROFS.
fn write_one(mut f: std::fs::File) -> io::Result<()> {
    use std::io::Write;
    f.write_all(b"x")?;
    f.sync_all()
}

fn write_ops() -> Vec<Op> {
    use std::fs::OpenOptions;
    let mut ops: Vec<Op> = Vec::new();
    for (what, file) in [
        ("ordinary", "README.md"),
        ("bundle", ".claude/skills/x/SKILL.md"),
        ("instruction", "CLAUDE.md"),
    ] {
        let f = file.to_string();
        ops.push((
            leak(format!("open O_WRONLY ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    OpenOptions::new()
                        .write(true)
                        .open(r.join(&f))
                        .and_then(write_one)
                }
            }),
        ));
        ops.push((
            leak(format!("open O_RDWR ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(r.join(&f))
                        .and_then(write_one)
                }
            }),
        ));
        ops.push((
            leak(format!("open O_APPEND ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    OpenOptions::new()
                        .append(true)
                        .open(r.join(&f))
                        .and_then(write_one)
                }
            }),
        ));
        ops.push((
            leak(format!("open O_RDONLY|O_TRUNC ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_TRUNC)
                        .open(r.join(&f))
                        .map(drop)
                }
            }),
        ));
        ops.push((
            leak(format!("truncate ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| nix_io(nix::unistd::truncate(&r.join(&f), 0))
            }),
        ));
        ops.push((
            leak(format!("unlink ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| fs::remove_file(r.join(&f))
            }),
        ));
        ops.push((
            leak(format!("chmod ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    fs::set_permissions(
                        r.join(&f),
                        std::os::unix::fs::PermissionsExt::from_mode(0o777),
                    )
                }
            }),
        ));
        ops.push((
            leak(format!("chown ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| std::os::unix::fs::chown(r.join(&f), Some(1), Some(1))
            }),
        ));
        ops.push((
            leak(format!("utimes ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    let c = cpath(&r.join(&f));
                    check(unsafe {
                        libc::utimensat(libc::AT_FDCWD, c.as_ptr(), std::ptr::null(), 0)
                    })
                }
            }),
        ));
        ops.push((
            leak(format!("setxattr ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    let c = cpath(&r.join(&f));
                    check(unsafe {
                        libc::setxattr(
                            c.as_ptr(),
                            c"user.seal".as_ptr(),
                            b"1".as_ptr().cast(),
                            1,
                            0,
                        )
                    })
                }
            }),
        ));
        ops.push((
            leak(format!("removexattr ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| {
                    let c = cpath(&r.join(&f));
                    check(unsafe { libc::removexattr(c.as_ptr(), c"user.seal".as_ptr()) })
                }
            }),
        ));
        ops.push((
            leak(format!("rename ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| fs::rename(r.join(&f), r.join("renamed"))
            }),
        ));
        ops.push((
            leak(format!("link ({what})")),
            Box::new({
                let f = f.clone();
                move |r: &Path| fs::hard_link(r.join(&f), r.join("hardlink"))
            }),
        ));
    }
    for (what, dir) in [
        ("root", ""),
        ("bundle", ".claude/skills/x"),
        ("ordinary dir", "src"),
    ] {
        let d = dir.to_string();
        ops.push((
            leak(format!("create ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| {
                    fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(r.join(&d).join("new.txt"))
                        .map(drop)
                }
            }),
        ));
        ops.push((
            leak(format!("mkdir ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| fs::create_dir(r.join(&d).join("newdir"))
            }),
        ));
        ops.push((
            leak(format!("symlink ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| std::os::unix::fs::symlink("README.md", r.join(&d).join("newlink"))
            }),
        ));
        ops.push((
            leak(format!("mknod fifo ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| {
                    nix_io(nix::sys::stat::mknod(
                        &r.join(&d).join("fifo"),
                        nix::sys::stat::SFlag::S_IFIFO,
                        nix::sys::stat::Mode::from_bits_truncate(0o644),
                        0,
                    ))
                }
            }),
        ));
        ops.push((
            leak(format!("mknod regular ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| {
                    nix_io(nix::sys::stat::mknod(
                        &r.join(&d).join("regular"),
                        nix::sys::stat::SFlag::S_IFREG,
                        nix::sys::stat::Mode::from_bits_truncate(0o644),
                        0,
                    ))
                }
            }),
        ));
        ops.push((
            leak(format!("rename into ({what})")),
            Box::new({
                let d = d.clone();
                move |r: &Path| fs::rename(r.join("README.md"), r.join(&d).join("moved.md"))
            }),
        ));
    }
    ops.push((
        "rmdir (empty dir)",
        Box::new(|r: &Path| fs::remove_dir(r.join("empty"))),
    ));
    ops.push((
        "rmdir (bundle root)",
        Box::new(|r: &Path| fs::remove_dir(r.join(".claude/skills/x"))),
    ));
    ops.push((
        "rename dir",
        Box::new(|r: &Path| fs::rename(r.join("src"), r.join("src2"))),
    ));
    ops.push((
        "chmod dir",
        Box::new(|r: &Path| {
            fs::set_permissions(
                r.join("src"),
                std::os::unix::fs::PermissionsExt::from_mode(0o700),
            )
        }),
    ));
    ops.push((
        "access W_OK",
        Box::new(|r: &Path| {
            let c = cpath(&r.join("README.md"));
            check(unsafe { libc::access(c.as_ptr(), libc::W_OK) })
        }),
    ));
    ops
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn assert_all_erofs(root: &Path, layer: &str, skip: &[&str]) {
    let mut wrong = Vec::new();
    for (name, op) in write_ops() {
        if skip.contains(&name) {
            continue;
        }
        let r = op(root);
        if errno_of(&r) != Some(libc::EROFS) {
            wrong.push(format!("{name}: {r:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{layer}: these did not fail with EROFS:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn every_kind_of_write_gets_erofs() {
    every_kind_of_write_gets_erofs_in(&[]);
}

#[test]
fn every_kind_of_write_gets_erofs_when_the_kernel_opens() {
    every_kind_of_write_gets_erofs_in(&["--kernel-opens"]);
}

#[test]
fn kernel_opens_are_refused_for_the_writable_view() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = mountpoint();
    let (code, err) = seal_mount(
        p.path(),
        &[mp.path().to_str().unwrap(), "--writable", "--kernel-opens"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--kernel-opens serves the read-only view only"),
        "{err}"
    );
    assert!(!fuse_mounted_at(mp.path()));
}

fn every_kind_of_write_gets_erofs_in(extra: &[&str]) {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let before = tree(p.path(), true);
    let m = Mounted::new(&p, extra);
    // As mounted (read-only mount): the kernel refuses.
    assert_all_erofs(&m.mountpoint, "read-only mount", &[]);
    assert_eq!(tree(p.path(), true), before, "the disk changed");
    // Remounted read-write by root: the daemon itself refuses every write.
    let st = Command::new("mount")
        // -i: no /sbin/mount.fuse helper (it would try to run the fsname).
        .args(["-i", "-o", "remount,rw"])
        .arg(&m.mountpoint)
        .status()
        .unwrap();
    assert!(st.success(), "remount,rw failed");
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = info
        .lines()
        .find(|l| l.split(' ').nth(4) == Some(m.mountpoint.to_str().unwrap()))
        .unwrap();
    assert!(line.split(' ').nth(5).unwrap().starts_with("rw"), "{line}");
    // (With default_permissions the kernel answers access(2) itself and
    // never asks the daemon, so W_OK is granted on a read-write remount
    // though every actual write still fails.)
    assert_all_erofs(
        &m.mountpoint,
        "daemon (mount remounted rw)",
        &["access W_OK"],
    );
    assert_eq!(tree(p.path(), true), before, "the disk changed");
    assert_view(p.path(), &m.mountpoint, &[], true);
    // Reads still work.
    assert_eq!(
        fs::read(m.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
}

// ---------------------------------------------------------------------------
// A daemon killed with SIGKILL.

#[test]
fn killed_daemon_serves_nothing_and_the_stale_mount_can_be_cleared() {
    if !fuse_available() {
        return;
    }
    let p = fixture();
    let mp = mountpoint();
    let mut m = Mounted::at(&p, mp.path(), &[]);
    assert_eq!(
        fs::read(m.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    // Handles opened before the kill.
    let mut held_bundle = fs::File::open(m.path(".claude/skills/x/SKILL.md")).unwrap();
    let mut held_plain = fs::File::open(m.path("README.md")).unwrap();

    let mut child = m.child.take().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));

    // Every open fails with ENOTCONN: nothing is served. Lookups may answer
    // from the kernel's caches until their TTL runs out (a bundle's while
    // the change feed watches it, one second; ordinary entries in a
    // directory the directory feed watches, ten minutes), then fail.
    let paths = [
        "README.md",
        "src/main.rs",
        ".claude/skills/x/SKILL.md",
        "CLAUDE.md",
        "seal.json",
    ];
    for rel in paths {
        let r = fs::read(m.path(rel));
        assert_eq!(errno_of(&r), Some(libc::ENOTCONN), "read {rel}: {r:?}");
    }
    std::thread::sleep(Duration::from_millis(1200));
    for rel in paths
        .iter()
        .filter(|rel| !["README.md", "src/main.rs"].contains(rel))
    {
        let r = fs::symlink_metadata(m.path(rel));
        assert_eq!(errno_of(&r), Some(libc::ENOTCONN), "lstat {rel}: {r:?}");
    }
    let r = fs::read_dir(mp.path()).map(|d| d.count());
    assert_eq!(errno_of(&r), Some(libc::ENOTCONN), "readdir: {r:?}");
    assert!(fuse_mounted_at(mp.path()), "the stale mount is still there");

    // Handles opened before the kill are passed through by the kernel to the
    // verified snapshot / the real file, so they may keep reading: whatever
    // they return must be the verified bytes, whatever the disk says now.
    p.write(".claude/skills/x/SKILL.md", b"tampered after the kill\n");
    let mut buf = Vec::new();
    match held_bundle.read_to_end(&mut buf) {
        Ok(_) => assert_eq!(buf, SKILL, "a held handle served unverified bytes"),
        Err(e) => eprintln!("held bundle handle after SIGKILL: {e}"),
    }
    let mut plain = Vec::new();
    let _ = held_plain.read_to_end(&mut plain);
    drop((held_bundle, held_plain));
    p.write(".claude/skills/x/SKILL.md", SKILL);

    // A new mount on the stale mountpoint is refused with a way out.
    let (code, err) = seal_mount(p.path(), &[mp.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("stale"), "{err}");
    assert!(
        err.contains("umount -l") || err.contains("fusermount3 -u"),
        "{err}"
    );

    // Cleared as the message says, the same place mounts again.
    let st = Command::new("umount")
        .arg("-l")
        .arg(mp.path())
        .status()
        .unwrap();
    assert!(st.success());
    assert!(!fuse_mounted_at(mp.path()));
    let again = Mounted::at(&p, mp.path(), &[]);
    assert_eq!(
        fs::read(again.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    assert_view(p.path(), mp.path(), &[], true);
    drop(again);
    assert!(!fuse_mounted_at(mp.path()));
}

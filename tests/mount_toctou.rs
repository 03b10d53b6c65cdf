//! Time of check / time of use through a real FUSE mount.
//!
//! A writer keeps swapping a bundle file (in place, by rename, half of it, or
//! the whole bundle directory) between the approved bytes and unapproved
//! bytes of the same length while readers open and read it
//! through the view. Whatever the interleaving, a read that succeeds returns
//! exactly the approved bytes: never the unapproved ones, never a mix, never
//! a prefix. Opens that meet an unapproved state are refused (ENOENT).

mod support;

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use support::*;

/// Opens the readers make in each swap test, in total (four tests: 100,000).
const OPENS: u64 = 25_000;
const READERS: usize = 3;
const FILE: &str = ".claude/skills/t/SKILL.md";

/// 24 KiB of approved bytes: several pages, so that a torn read would show.
fn approved() -> Vec<u8> {
    (0..24 * 1024u32)
        .map(|i| b"approved-line-"[(i % 14) as usize])
        .collect()
}

/// Unapproved bytes of the same length.
fn unapproved() -> Vec<u8> {
    (0..24 * 1024u32)
        .map(|i| b"EVIL"[(i % 4) as usize])
        .collect()
}

fn fixture(warn: bool) -> Project {
    let p = Project::new();
    p.write(FILE, approved())
        .write(".claude/skills/t/other.md", "the other file\n")
        .write("src/main.rs", "fn main() {}\n");
    p.init(if warn { &["--warn"] } else { &[] });
    p
}

#[derive(Debug, Clone, Copy)]
enum Swap {
    /// Truncate and rewrite the file in place.
    InPlace,
    /// Write a temporary file and rename it over the bundle file.
    Rename,
    /// Overwrite the first half in place, then put it back.
    Partial,
    /// Build a whole copy of the bundle directory outside it and exchange
    /// the two directories atomically (`RENAME_EXCHANGE`).
    Directory,
}

fn swap_once(p: &Project, how: Swap, bytes: &[u8], tmp: &std::path::Path) {
    let path = p.path().join(FILE);
    match how {
        Swap::InPlace => {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)
                .unwrap();
            // In two writes, so that half-written states happen too.
            let half = bytes.len() / 2;
            f.write_all(&bytes[..half]).unwrap();
            f.write_all(&bytes[half..]).unwrap();
        }
        Swap::Rename => {
            fs::write(tmp, bytes).unwrap();
            fs::rename(tmp, &path).unwrap();
        }
        Swap::Partial => {
            let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all_at(&bytes[..bytes.len() / 2], 0).unwrap();
        }
        Swap::Directory => {
            let copy = tmp.with_extension("dir");
            let _ = fs::remove_dir_all(&copy);
            fs::create_dir(&copy).unwrap();
            fs::write(copy.join("SKILL.md"), bytes).unwrap();
            fs::write(copy.join("other.md"), "the other file\n").unwrap();
            let root = path.parent().unwrap();
            nix::fcntl::renameat2(
                nix::fcntl::AT_FDCWD,
                &copy,
                nix::fcntl::AT_FDCWD,
                root,
                nix::fcntl::RenameFlags::RENAME_EXCHANGE,
            )
            .unwrap();
            fs::remove_dir_all(&copy).unwrap();
        }
    }
}

/// `extra`: arguments of `seal mount` (`--kernel-opens`: the kernel opens
/// files itself and bundle files are decided at lookup).
fn swap_test(how: Swap, extra: &[&str]) {
    if !fuse_available() {
        return;
    }
    let p = fixture(false);
    let m = Mounted::new(&p, extra);
    let good = approved();
    let evil = unapproved();
    let target = m.path(FILE);
    // The tmp file of the rename variant lives outside the bundle (ordinary).
    let tmp = p.path().join("swap.tmp");

    let stop = AtomicBool::new(false);
    let opens = AtomicU64::new(0);
    let served = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    let swaps = AtomicU64::new(0);
    let bad: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                swap_once(&p, how, &evil, &tmp);
                // Hold each state for a little while, varying, so that opens
                // meet both states and both transitions; now and then for a
                // few milliseconds, so that whole verifications fit in one
                // state even on a slow, loaded machine.
                hold(if i % 16 == 8 { 3000 } else { i % 7 * 40 });
                swap_once(&p, how, &good, &tmp);
                hold(if i % 16 == 0 { 3000 } else { i % 5 * 60 });
                i += 1;
                swaps.fetch_add(1, Ordering::Relaxed);
            }
            swap_once(&p, how, &good, &tmp);
        });
        for _ in 0..READERS {
            s.spawn(|| {
                while opens.fetch_add(1, Ordering::Relaxed) < OPENS {
                    let mut buf = Vec::new();
                    let result = fs::File::open(&target).and_then(|mut f| f.read_to_end(&mut buf));
                    match result {
                        Ok(_) if buf == good => {
                            served.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) => {
                            wrong.fetch_add(1, Ordering::Relaxed);
                            let mut b = bad.lock().unwrap();
                            if b.len() < 5 {
                                b.push(describe(&buf, &good, &evil));
                            }
                        }
                        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            wrong.fetch_add(1, Ordering::Relaxed);
                            let mut b = bad.lock().unwrap();
                            if b.len() < 5 {
                                b.push(format!("unexpected error {e}"));
                            }
                        }
                    }
                }
            });
        }
        // Readers finish on their own; then the writer stops.
        while opens.load(Ordering::Relaxed) < OPENS + READERS as u64 {
            std::thread::sleep(Duration::from_millis(20));
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "the readers are stuck"
            );
        }
        stop.store(true, Ordering::Relaxed);
    });
    let served = served.load(Ordering::Relaxed);
    let refused = refused.load(Ordering::Relaxed);
    let wrong = wrong.load(Ordering::Relaxed);
    println!(
        "TOCTOU {how:?}: {} opens in {:.1?}: {served} served the approved bytes, {refused} refused \
         (ENOENT), {wrong} wrong; {} swaps",
        served + refused + wrong,
        started.elapsed(),
        swaps.load(Ordering::Relaxed)
    );
    let bad = bad.into_inner().unwrap();
    assert!(bad.is_empty(), "{wrong} bad outcomes, e.g. {bad:#?}");
    assert_eq!(served + refused, OPENS);
    assert!(served > 0, "no open was ever served");
    assert!(
        refused > 0,
        "no open was ever refused: the swap was not seen"
    );
    // Settled: approved on disk again, served again.
    assert_bytes(
        &fs::read(&target).unwrap(),
        &good,
        "after the writer stopped",
    );
}

/// Waits `micros`: spinning for short waits (a sleep would last much longer),
/// sleeping for long ones (to leave the CPU to the readers).
fn hold(micros: u64) {
    if micros >= 1000 {
        std::thread::sleep(Duration::from_micros(micros));
        return;
    }
    let until = Instant::now() + Duration::from_micros(micros);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn assert_bytes(got: &[u8], want: &[u8], what: &str) {
    assert!(
        got == want,
        "{what}: {}",
        match want == unapproved().as_slice() {
            true => describe(got, &approved(), want),
            false => describe(got, want, &unapproved()),
        }
    );
}

fn describe(buf: &[u8], good: &[u8], evil: &[u8]) -> String {
    let from_good = buf.iter().zip(good).filter(|(a, b)| a == b).count();
    let from_evil = buf.iter().zip(evil).filter(|(a, b)| a == b).count();
    format!(
        "{} bytes ({} expected); {from_good} match the approved bytes, {from_evil} the unapproved",
        buf.len(),
        good.len()
    )
}

#[test]
fn swapping_in_place_never_serves_unapproved_bytes() {
    swap_test(Swap::InPlace, &[]);
}

#[test]
fn swapping_by_rename_never_serves_unapproved_bytes() {
    swap_test(Swap::Rename, &[]);
}

#[test]
fn partial_overwrite_never_serves_a_mix() {
    swap_test(Swap::Partial, &[]);
}

#[test]
fn swapping_the_bundle_directory_never_serves_unapproved_bytes() {
    swap_test(Swap::Directory, &[]);
}

#[test]
fn swapping_in_place_never_serves_unapproved_bytes_when_the_kernel_opens() {
    swap_test(Swap::InPlace, &["--kernel-opens"]);
}

#[test]
fn swapping_by_rename_never_serves_unapproved_bytes_when_the_kernel_opens() {
    swap_test(Swap::Rename, &["--kernel-opens"]);
}

#[test]
fn partial_overwrite_never_serves_a_mix_when_the_kernel_opens() {
    swap_test(Swap::Partial, &["--kernel-opens"]);
}

#[test]
fn swapping_the_bundle_directory_never_serves_unapproved_bytes_when_the_kernel_opens() {
    swap_test(Swap::Directory, &["--kernel-opens"]);
}

// ---------------------------------------------------------------------------
// Open, then change the disk, then read.

#[test]
fn open_then_change_then_read_yields_the_verified_bytes() {
    open_then_change_then_read(&[]);
}

#[test]
fn open_then_change_then_read_yields_the_verified_bytes_when_the_kernel_opens() {
    open_then_change_then_read(&["--kernel-opens"]);
}

fn open_then_change_then_read(extra: &[&str]) {
    if !fuse_available() {
        return;
    }
    let p = fixture(false);
    let m = Mounted::new(&p, extra);
    let good = approved();
    let target = m.path(FILE);
    type Change<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let changes: Vec<Change> = vec![
        (
            "rewrite in place",
            Box::new(|| {
                p.write(FILE, unapproved());
            }),
        ),
        (
            "partial overwrite",
            Box::new(|| {
                let f = fs::OpenOptions::new()
                    .write(true)
                    .open(p.path().join(FILE))
                    .unwrap();
                f.write_all_at(b"EVIL", 100).unwrap();
            }),
        ),
        (
            "truncate",
            Box::new(|| {
                p.write(FILE, b"");
            }),
        ),
        (
            "grow",
            Box::new(|| {
                p.write(FILE, [approved(), unapproved()].concat());
            }),
        ),
        (
            "delete",
            Box::new(|| {
                p.remove(FILE);
            }),
        ),
        (
            "rename over",
            Box::new(|| {
                fs::write(p.path().join("x.tmp"), unapproved()).unwrap();
                fs::rename(p.path().join("x.tmp"), p.path().join(FILE)).unwrap();
            }),
        ),
    ];
    for (name, change) in &changes {
        p.write(FILE, &good);
        let mut held = fs::File::open(&target)
            .unwrap_or_else(|e| panic!("before {name}: the approved file does not open: {e}"));
        let mut first = vec![0u8; 100];
        held.read_exact(&mut first).unwrap();
        assert_eq!(first, good[..100]);
        change();
        // New opens see the change (refused: the bundle is not verified):
        // at once, or where the kernel opens files itself, once the feed's
        // listener has made it forget the entry it kept, and until then
        // only with the approved bytes.
        let refused = || match fs::File::open(&target) {
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{name}: new open {e}");
                true
            }
            Ok(mut early) => {
                let mut got = Vec::new();
                match early.read_to_end(&mut got) {
                    Ok(_) => {
                        assert_bytes(&got, &good, &format!("{name}: an open before the notice"))
                    }
                    Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{name}: {e}"),
                }
                false
            }
        };
        assert!(m.after_change(refused), "{name}: a new open is not refused");
        // A lookup after the change must not cut the held handle short.
        let _ = fs::symlink_metadata(&target);
        let mut rest = Vec::new();
        held.read_to_end(&mut rest).unwrap();
        assert_bytes(
            &[first, rest].concat(),
            &good,
            &format!("{name}: held handle"),
        );
        held.seek(SeekFrom::Start(0)).unwrap();
        let mut all = Vec::new();
        held.read_to_end(&mut all).unwrap();
        assert_bytes(&all, &good, &format!("{name}: reread"));
        let mut at = vec![0u8; 4096];
        held.read_exact_at(&mut at, 8192).unwrap();
        assert_bytes(&at, &good[8192..12288], &format!("{name}: pread"));
    }
    p.write(FILE, &good);
    assert_bytes(&fs::read(&target).unwrap(), &good, "after");
}

/// Under warn, a new open after a change serves the new bytes while a handle
/// opened before keeps the old ones (both at once, on one path).
#[test]
fn under_warn_old_and_new_handles_keep_their_own_bytes() {
    if !fuse_available() {
        return;
    }
    let p = fixture(true);
    let m = Mounted::new(&p, &[]);
    let good = approved();
    let evil = unapproved();
    let target = m.path(FILE);
    let held = fs::File::open(&target).unwrap();
    p.write(FILE, &evil);
    // A stat through the view now reports the disk's state...
    let _ = fs::metadata(&target).unwrap();
    // ...and a new open serves what is on the disk (with a warning); where
    // the kernel opens files itself, once the feed's listener made it
    // forget what it kept, and until then the approved bytes, whole.
    let new_open_serves_the_change = || {
        let mut got = Vec::new();
        fs::File::open(&target)
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        if got != evil {
            assert_bytes(&got, &good, "a new open before the change was seen");
        }
        got == evil
    };
    assert!(
        m.after_change(new_open_serves_the_change),
        "a new open after the change does not serve it"
    );
    let new = fs::File::open(&target).unwrap();
    // The old handle still reads what it opened.
    let mut all = vec![0u8; good.len()];
    held.read_exact_at(&mut all, 0).unwrap();
    assert_bytes(&all, &good, "the held handle");
    p.write(FILE, b"short");
    let _ = fs::metadata(&target);
    let mut all = Vec::new();
    let mut h = &held;
    h.seek(SeekFrom::Start(0)).unwrap();
    h.read_to_end(&mut all).unwrap();
    assert_bytes(
        &all,
        &good,
        "the held handle after a stat of a shorter file",
    );
    drop(new);
    drop(held);
}

/// What a new open serves is decided by its own verification, never by a
/// handle still open on older bytes of the same file: after a re-pin to new
/// bytes, a new open serves the new bytes while the old handle keeps the old.
#[test]
fn a_held_handle_does_not_decide_what_a_new_open_serves() {
    if !fuse_available() {
        return;
    }
    let p = fixture(false);
    let m = Mounted::new(&p, &[]);
    let target = m.path(FILE);
    let good = approved();
    let held = fs::File::open(&target).unwrap();
    let v2: Vec<u8> = good.iter().map(|b| b.to_ascii_uppercase()).collect();
    // Where the kernel opens files itself, each change reaches it through
    // the feed's listener (within 100 ms); until then it serves what it
    // kept, which was approved.
    p.write(FILE, &v2);
    let refused = || match fs::File::open(&target) {
        Err(e) => {
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "a new open: {e}");
            true
        }
        Ok(mut early) => {
            let mut got = Vec::new();
            early.read_to_end(&mut got).unwrap();
            assert_bytes(&got, &good, "a new open before the change was seen");
            false
        }
    };
    assert!(
        m.after_change(refused),
        "a new open of the changed file is not refused"
    );
    p.pin(&[]);
    let serves_the_repin = || {
        let Ok(mut new) = fs::File::open(&target) else {
            return false;
        };
        let mut got = Vec::new();
        new.read_to_end(&mut got).unwrap();
        assert_bytes(&got, &v2, "a new open after the re-pin");
        true
    };
    assert!(
        m.after_change(serves_the_repin),
        "a new open after the re-pin is refused"
    );
    let mut old = vec![0u8; good.len()];
    held.read_exact_at(&mut old, 0).unwrap();
    assert_bytes(&old, &good, "the handle opened before");
}

//! Resources of the `seal mount` daemon through a real FUSE mount: verified
//! snapshots are released when their handles close, and verifying a big
//! bundle never stalls requests for ordinary files.

mod support;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::*;

/// The daemon's open file descriptors that are verified snapshots: memfds,
/// and (files of 2 MiB or more, the daemon being root) files of its private
/// huge-page tmpfs, which is attached nowhere (so the link names the file
/// from that tmpfs's root).
fn snapshot_fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| fs::read_link(e.unwrap().path()).ok())
        .filter(|t| {
            let t = t.to_string_lossy();
            t.starts_with("/memfd:seal-verified") || t.starts_with("/seal-verified-")
        })
        .count()
}

/// The daemon's snapshots of the huge-page store.
fn huge_snapshot_fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| fs::read_link(e.unwrap().path()).ok())
        .filter(|t| t.to_string_lossy().starts_with("/seal-verified-"))
        .count()
}

fn all_fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count()
}

/// Polls `f` until it returns `want` or `timeout` passes; returns the last value.
fn eventually(timeout: Duration, want: usize, f: impl Fn() -> usize) -> usize {
    let deadline = Instant::now() + timeout;
    loop {
        let v = f();
        if v == want || Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A memory cgroup (v1 or v2) holding only the daemon, to measure the shared
/// memory (memfd pages) charged to it. None where cgroups cannot be created.
struct MemCgroup {
    dir: PathBuf,
}

impl MemCgroup {
    fn for_pid(pid: u32) -> Option<MemCgroup> {
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        let candidates: Vec<PathBuf> = own
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                let path = path.trim_start_matches('/');
                if controllers.split(',').any(|c| c == "memory") {
                    Some(Path::new("/sys/fs/cgroup/memory").join(path))
                } else if controllers.is_empty() {
                    Some(Path::new("/sys/fs/cgroup").join(path))
                } else {
                    None
                }
            })
            .collect();
        for base in candidates {
            let dir = base.join(format!("sealfs-test-{pid}"));
            if fs::create_dir(&dir).is_err() {
                continue;
            }
            let cg = MemCgroup { dir };
            if cg.shmem().is_some()
                && fs::write(cg.dir.join("cgroup.procs"), pid.to_string()).is_ok()
            {
                return Some(cg);
            }
        }
        None
    }

    /// Bytes of shared memory (memfd / tmpfs pages) charged to the cgroup.
    fn shmem(&self) -> Option<u64> {
        let stat = fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        stat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == "shmem").then(|| v.trim().parse().ok())?
        })
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // A daemon still inside (a test failed before unmounting) moves back
        // to the parent, so that the directory can go.
        if let (Ok(procs), Some(parent)) = (
            fs::read_to_string(self.dir.join("cgroup.procs")),
            self.dir.parent(),
        ) {
            for pid in procs.lines() {
                let _ = fs::write(parent.join("cgroup.procs"), pid);
            }
        }
        for _ in 0..100 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn snapshots_are_released_when_handles_close() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    let data: Vec<u8> = (0..16 * MIB).map(|i| (i % 251) as u8).collect();
    p.write(".claude/skills/big/data.bin", &data)
        .write(".claude/skills/big/SKILL.md", "big\n")
        .write(".claude/skills/small/SKILL.md", "small\n")
        .write("README.md", "readme\n");
    p.init(&[]);
    let mut m = Mounted::new(&p, &[]);
    let pid = m.pid();
    let cgroup = MemCgroup::for_pid(pid);
    if cgroup.is_none() {
        eprintln!("note: no memory cgroup could be created; checking descriptors only");
    }
    // Warm up: lookups, one open and close of everything.
    assert!(fs::read(m.path(".claude/skills/big/data.bin")).unwrap() == data);
    assert_eq!(fs::read(m.path("README.md")).unwrap(), b"readme\n");
    assert_eq!(
        eventually(Duration::from_secs(5), 0, || snapshot_fds(pid)),
        0
    );
    let baseline_fds = all_fds(pid);
    let baseline_shmem = cgroup.as_ref().and_then(|c| c.shmem());

    // K handles of the same unchanged file share one snapshot: the
    // verification kept every file of this small bundle, once.
    const K: usize = 4;
    let handles: Vec<fs::File> = (0..K)
        .map(|_| fs::File::open(m.path(".claude/skills/big/data.bin")).unwrap())
        .collect();
    assert!(snapshot_fds(pid) <= 2, "snapshots are shared by content");
    // The 16 MiB file is on the huge-page store (root can always mount it).
    assert_eq!(
        huge_snapshot_fds(pid),
        1,
        "the big file on the huge-page store"
    );
    let sibling = fs::File::open(m.path(".claude/skills/big/SKILL.md")).unwrap();
    assert!(snapshot_fds(pid) <= 2);
    if let (Some(cg), Some(base)) = (&cgroup, baseline_shmem) {
        let held = cg.shmem().unwrap().saturating_sub(base);
        println!(
            "shmem charged to the daemon with {K} handles of a 16 MiB file open: {held} bytes"
        );
        assert!(held <= 16 * MIB + 4 * MIB, "{held}");
    }
    for mut h in handles {
        let mut buf = Vec::new();
        h.read_to_end(&mut buf).unwrap();
        assert!(buf == data);
    }
    drop(sibling);
    // Release is asynchronous (FUSE_RELEASE after close): poll.
    let left = eventually(Duration::from_secs(5), 0, || snapshot_fds(pid));
    assert_eq!(left, 0, "snapshots linger after every handle closed");
    // The daemon may close descriptors it caches (a kept ordinary backing
    // goes when the kernel forgets its inode), but must not hold more.
    let now_fds = all_fds(pid);
    assert!(
        now_fds <= baseline_fds,
        "descriptors leak: {now_fds} > {baseline_fds}"
    );
    if let (Some(cg), Some(base)) = (&cgroup, baseline_shmem) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut now = cg.shmem().unwrap();
        while now > base + MIB && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            now = cg.shmem().unwrap();
        }
        println!("shmem after closing: {now} bytes (baseline {base})");
        assert!(
            now <= base + MIB,
            "snapshot memory not freed: {now} bytes (baseline {base})"
        );
    }

    // Many opens and closes do not accumulate anything.
    for _ in 0..100 {
        let mut f = fs::File::open(m.path(".claude/skills/small/SKILL.md")).unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        assert_eq!(s, "small\n");
    }
    assert_eq!(
        eventually(Duration::from_secs(5), 0, || snapshot_fds(pid)),
        0
    );
    let now_fds = all_fds(pid);
    assert!(
        now_fds <= baseline_fds,
        "descriptors leak: {now_fds} > {baseline_fds}"
    );
    assert_eq!(m.unmount(), Some(0));
    drop(cgroup);
}

/// The big bundle's size: 300 MB as in the issue; smaller in unoptimised
/// builds, where SHA-256 runs at a few tens of MB/s and 300 MB would take
/// minutes (the bound below is relative to the measured verification time,
/// so the size only sets how long the test runs).
const BIG_MIB: u64 = if cfg!(debug_assertions) { 120 } else { 300 };

#[test]
fn verifying_a_big_bundle_never_stalls_ordinary_requests() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    {
        use std::io::Write;
        let path = p.path().join(".claude/skills/big/blob.bin");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::io::BufWriter::new(fs::File::create(path).unwrap());
        let chunk: Vec<u8> = (0..MIB).map(|i| (i * 7 % 253) as u8).collect();
        for _ in 0..BIG_MIB {
            f.write_all(&chunk).unwrap();
        }
        f.flush().unwrap();
    }
    p.write(".claude/skills/big/SKILL.md", "big\n");
    const FILES: usize = 400;
    for i in 0..FILES {
        p.write(&format!("src/d{}/f{i}.txt", i % 20), vec![b'o'; 4096]);
    }
    p.init(&[]);
    // Every lookup and open of the bundle is a full verification here (the
    // change feed would prove most of them current and spare the hashing).
    let m = Mounted::new(&p, &["--rehash-every-open"]);
    let blob = m.path(".claude/skills/big/blob.bin");
    let ordinary: Vec<PathBuf> = (0..FILES)
        .map(|i| m.path(&format!("src/d{}/f{i}.txt", i % 20)))
        .collect();
    // Warm the ordinary paths (cache, lookups).
    for f in &ordinary {
        assert_eq!(fs::read(f).unwrap().len(), 4096);
    }

    let verifying = AtomicBool::new(true);
    let bundle_opens: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    let root_lookups: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    let ordinary_ops: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            // A lookup of the root is one verification of the whole bundle;
            // an open is a lookup and a verification that keeps the file.
            let root = m.path(".claude/skills/big");
            let started = Instant::now();
            for _ in 0..3 {
                let t0 = Instant::now();
                fs::metadata(&root).unwrap();
                let t1 = Instant::now();
                root_lookups.lock().unwrap().push((t0, t1));
                let f = fs::File::open(&blob).unwrap();
                let t2 = Instant::now();
                drop(f);
                bundle_opens.lock().unwrap().push((t1, t2));
                if started.elapsed() > Duration::from_secs(10) {
                    break;
                }
            }
            verifying.store(false, Ordering::Relaxed);
        });
        s.spawn(|| {
            let mut i = 0;
            let mut buf = vec![0u8; 4096];
            while verifying.load(Ordering::Relaxed) {
                let path = &ordinary[i % FILES];
                let t0 = Instant::now();
                let md = fs::symlink_metadata(path).unwrap();
                let mut f = fs::File::open(path).unwrap();
                f.read_exact(&mut buf).unwrap();
                drop(f);
                let t1 = Instant::now();
                assert_eq!(md.len(), 4096);
                ordinary_ops.lock().unwrap().push((t0, t1));
                i += 1;
            }
        });
    });
    let lookups = root_lookups.into_inner().unwrap();
    let mut opens = bundle_opens.into_inner().unwrap();
    let ops = ordinary_ops.into_inner().unwrap();
    let verify = lookups.iter().map(|(a, b)| *b - *a).min().unwrap();
    let open_time = opens.iter().map(|(a, b)| *b - *a).min().unwrap();
    opens.extend(lookups);
    let during: Vec<Duration> = ops
        .iter()
        .filter(|(a, b)| opens.iter().any(|(s, e)| a < e && b > s))
        .map(|(a, b)| *b - *a)
        .collect();
    let max = during.iter().max().copied().unwrap_or_default();
    let mut sorted = during.clone();
    sorted.sort();
    let p50 = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
    println!(
        "big bundle: fastest root lookup (one {BIG_MIB} MiB verification) {verify:.2?}, fastest open \
         {open_time:.2?}; {} ordinary stat+open+read+close during verifications: p50 {p50:.2?}, \
         max {max:.2?}",
        during.len()
    );
    // A request that waited on a verification would wait for all of it, and
    // the loop above meets every verification (three lookups, three opens):
    // a stall makes several requests that slow. One slow request alone is a
    // preemption of the shared two-CPU machine (35 ms once in CI, with a
    // p50 of 82 µs), so the bound holds for all but the slowest.
    let second = sorted.iter().rev().nth(1).copied().unwrap_or_default();
    assert!(
        second * 4 < verify,
        "two ordinary requests took {second:?} or more (the slowest {max:?}), a quarter or more \
         of one verification ({verify:?})"
    );
    assert!(
        during.len() >= 100,
        "too few ordinary requests overlapped a verification ({})",
        during.len()
    );
}

/// Two thousand handles of one 5 MB bundle file, opened while held, cost one
/// copy of its bytes, with or without the change feed (snapshots are shared
/// by content, not made per handle).
#[test]
fn thousands_of_handles_of_one_file_share_one_snapshot() {
    if !fuse_available() {
        return;
    }
    let data: Vec<u8> = (0..5 * MIB).map(|i| (i % 239) as u8).collect();
    // Without the feed every open hashes the 5 MB again: fewer handles.
    for (extra, count) in [(&[][..], 2000), (&["--rehash-every-open"][..], 200)] {
        let p = Project::new();
        p.write(".claude/skills/big/data.bin", &data)
            .write(".claude/skills/big/SKILL.md", "big\n");
        p.init(&[]);
        let mut m = Mounted::new(&p, extra);
        let pid = m.pid();
        let cgroup = MemCgroup::for_pid(pid);
        let base = cgroup.as_ref().and_then(|c| c.shmem());
        let handles: Vec<fs::File> = (0..count)
            .map(|_| fs::File::open(m.path(".claude/skills/big/data.bin")).unwrap())
            .collect();
        let held = snapshot_fds(pid);
        assert!(held <= 2, "{extra:?}: {held} snapshots for one file");
        if let (Some(cg), Some(base)) = (&cgroup, base) {
            let bytes = cg.shmem().unwrap().saturating_sub(base);
            println!("{extra:?}: {count} handles of a 5 MiB file hold {bytes} bytes of shmem");
            assert!(bytes <= 2 * 5 * MIB + MIB, "{extra:?}: {bytes}");
        }
        let mut buf = Vec::new();
        let mut last = &handles[count - 1];
        last.read_to_end(&mut buf).unwrap();
        assert!(buf == data);
        drop(handles);
        assert_eq!(m.unmount(), Some(0));
        drop(cgroup);
    }
}

/// A hostile neighbour never holds up an approved skill (issue 13): six
/// processes list `.claude/skills` over and over, each first writing to a
/// big pinned bundle there (same bytes, so it stays approved but must be
/// hashed in full at the next listing), and next to them an unpinned chain
/// 1,500 directories deep (as deep as a path within PATH_MAX goes).
/// Meanwhile every file of an approved 10-file skill is read again and
/// again: each read returns its approved bytes, and the slowest takes under
/// half of one listing (one full verification of the big bundle). The
/// absolute bound (50 ms) is measured by `scripts/bench-hostile.sh` (shape
/// `fair`), not here.
#[test]
fn an_approved_skill_stays_readable_while_a_hostile_tree_is_listed() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    let big = p.path().join(".claude/skills/heavy/blob.bin");
    fs::create_dir_all(big.parent().unwrap()).unwrap();
    let blob: Vec<u8> = (0..(BIG_MIB / 4) * MIB)
        .map(|i| (i * 13 % 251) as u8)
        .collect();
    fs::write(&big, &blob).unwrap();
    drop(blob);
    p.write(".claude/skills/heavy/SKILL.md", "heavy\n");
    let good: Vec<(String, Vec<u8>)> = (0..10)
        .map(|i| {
            let rel = format!(".claude/skills/good/f{i}.md");
            let bytes = format!("approved file {i}\n").repeat(50 + i).into_bytes();
            p.write(&rel, &bytes);
            (rel, bytes)
        })
        .collect();
    p.write(".claude/skills/good/SKILL.md", "good\n");
    p.init(&[]);
    // The unpinned chain: not in the lockfile, so hidden (block), and decided
    // at every listing of `.claude/skills` by a walk to its one file.
    let mut deep = p.path().join(".claude/skills/evil");
    for _ in 0..1500 {
        deep.push("d");
    }
    fs::create_dir_all(&deep).unwrap();
    fs::write(deep.join("SKILL.md"), "evil\n").unwrap();

    let m = Mounted::new(&p, &[]);
    let skills = m.path(".claude/skills");
    for (rel, bytes) in &good {
        assert_eq!(&fs::read(m.path(rel)).unwrap(), bytes, "{rel}");
    }
    let listing_names = |dir: &Path| {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                e.metadata().unwrap();
                e.file_name().to_string_lossy().into_owned()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing_names(&skills), ["good", "heavy"]);

    const LISTERS: usize = 6;
    const LISTINGS_EACH: usize = 3;
    let listers_left = std::sync::atomic::AtomicUsize::new(LISTERS);
    let listings: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    let reads: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    let skill_md = p.path().join(".claude/skills/heavy/SKILL.md");
    /// Counts a lister out however it ends (a failed one must not leave the
    /// reader reading forever).
    struct Done<'a>(&'a std::sync::atomic::AtomicUsize);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    std::thread::scope(|s| {
        for lister in 0..LISTERS {
            let (listers_left, listings, skills, skill_md, p) =
                (&listers_left, &listings, &skills, &skill_md, &p);
            s.spawn(move || {
                let _done = Done(listers_left);
                // Same bytes under a new inode, renamed in from outside the
                // bundle: the bundle matches at every instant, yet the change
                // feed voids its verification.
                let fresh = p.path().join(format!(".claude/heavy-{lister}.tmp"));
                for _ in 0..LISTINGS_EACH {
                    fs::write(&fresh, "heavy\n").unwrap();
                    fs::rename(&fresh, skill_md).unwrap();
                    let t0 = Instant::now();
                    let names = listing_names(skills);
                    let t1 = Instant::now();
                    assert_eq!(names, ["good", "heavy"]);
                    listings.lock().unwrap().push((t0, t1));
                }
            });
        }
        s.spawn(|| {
            let mut i = 0;
            while listers_left.load(Ordering::Acquire) > 0 {
                let (rel, bytes) = &good[i % good.len()];
                let t0 = Instant::now();
                let got = fs::read(m.path(rel)).unwrap();
                let t1 = Instant::now();
                assert_eq!(&got, bytes, "{rel}: not its approved bytes");
                reads.lock().unwrap().push((t0, t1));
                i += 1;
            }
        });
    });
    let listings = listings.into_inner().unwrap();
    let mut listing_times: Vec<Duration> = listings.iter().map(|(a, b)| *b - *a).collect();
    listing_times.sort();
    let listing_p50 = listing_times[listing_times.len() / 2];
    let during: Vec<Duration> = reads
        .into_inner()
        .unwrap()
        .iter()
        .filter(|(a, b)| listings.iter().any(|(s, e)| a < e && b > s))
        .map(|(a, b)| *b - *a)
        .collect();
    let mut sorted = during.clone();
    sorted.sort();
    let max = sorted.last().copied().unwrap_or_default();
    let p50 = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
    println!(
        "{} listings of .claude/skills (p50 {listing_p50:.2?}); {} reads of the approved skill \
         during them: p50 {p50:.2?}, max {max:.2?}",
        listings.len(),
        during.len()
    );
    assert!(
        during.len() >= 100,
        "too few reads overlapped a listing ({})",
        during.len()
    );
    assert!(
        // Half, not less: a reader queued behind the verifications waits
        // about a whole listing (measured: 170 ms against 240 ms), one that
        // is not takes a few ms, and a loaded CI machine adds its hiccups.
        max * 2 < listing_p50,
        "a read of the approved skill took {max:?}, half or more of a listing ({listing_p50:?})"
    );
}

/// The daemon's resident size in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Every file under `dir`, listed with their attributes (`ls -laR`).
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let md = fs::symlink_metadata(&path).unwrap();
        if md.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Memory comes back when the load goes away (issue 13): a 20,000-file
/// bundle and a directory of 20,000 ordinary files are walked and read three
/// times over; once the kernel has forgotten their inodes and the bundle's
/// cached verification has gone unused for two minutes, the daemon is back
/// within 12 MiB of its idle size, or at most at 36 MiB (before issue 13:
/// it kept what the load took, 126 MiB, and grew with each pass).
#[test]
fn memory_comes_back_after_a_big_tree_is_walked_and_read() {
    if !fuse_available() {
        return;
    }
    const FILES: usize = 20_000;
    let p = Project::new();
    for i in 0..FILES {
        p.write(
            &format!(".claude/skills/big/d{:03}/f{i:05}.md", i / 100),
            format!("bundle file {i}\n"),
        );
        p.write(
            &format!("src/many/d{:03}/f{i:05}.rs", i / 100),
            format!("// ordinary {i}\n"),
        );
    }
    p.write(".claude/skills/big/SKILL.md", "big\n");
    p.init(&[]);
    let m = Mounted::new(&p, &[]);
    let pid = m.pid();
    assert!(m.path("seal.json").exists());
    std::thread::sleep(Duration::from_secs(3));
    let idle = rss_kib(pid);
    let mut loaded = Vec::new();
    for _ in 0..3 {
        let mut files = Vec::new();
        walk(&m.path(""), &mut files);
        assert!(files.len() > 2 * FILES, "{} files", files.len());
        for f in &files {
            fs::read(f).unwrap();
        }
        loaded.push(rss_kib(pid));
    }
    // The kernel forgets the inodes it no longer uses (so the daemon may);
    // the cached verification expires after two minutes unused.
    fs::write("/proc/sys/vm/drop_caches", "2").unwrap();
    // Near idle: on 2026-12-06 the daemon idles at 25 MiB (11.5 MiB of it
    // anonymous, the rest the binary's pages) and settles at 32-34 MiB
    // after the load, alone or with the whole suite on two cores: about
    // 8 MiB of anonymous memory stays (the same with one heap arena, so not
    // the arenas' fragmentation; not yet traced to a table). The bound
    // leaves that margin and still fails on what issue 13 fixed (a daemon
    // that keeps what the load took: 50-60 MiB after each pass here).
    const NEAR_IDLE_KIB: u64 = 12 * 1024;
    const GOAL_KIB: u64 = 36 * 1024;
    let bound = (idle + NEAR_IDLE_KIB).max(GOAL_KIB);
    let started = Instant::now();
    let mut now = rss_kib(pid);
    while now > bound && started.elapsed() < Duration::from_secs(200) {
        std::thread::sleep(Duration::from_secs(2));
        now = rss_kib(pid);
    }
    println!(
        "resident KiB: idle {idle}, after each pass {loaded:?}, {now} after {:.0?}",
        started.elapsed()
    );
    assert!(
        now <= bound,
        "the daemon stays at {now} KiB (bound {bound}), idle it took {idle} KiB (passes: \
         {loaded:?})"
    );
}

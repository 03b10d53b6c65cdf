//! Tree builder and core timer for `scripts/bench-hostile.sh`.
//!
//! Deep chains are longer than PATH_MAX, so they are built through directory
//! descriptors (`mkdirat`/`openat`), which no shell tool does; and the
//! verdict-only verification the mount needs ([`verify_key_with`] with
//! [`AfterProof::Stop`]) has no CLI command, so it is timed here.
//!
//! ```text
//! hostile_bench chain DIR DEPTH NAMELEN   .claude/skills/evil: DEPTH nested dirs, file f at the bottom
//! hostile_bench wide DIR N                .claude/skills/wide: N files in one directory
//! hostile_bench bundle DIR N              .claude/skills/big: N files, 100 per directory
//! hostile_bench core DIR KEY MODE REPS    median wall and CPU (user+system, all threads)
//!                                         seconds of verify_key_with (MODE full|stop), then
//!                                         the state, how it finished and the bytes read
//! hostile_bench reads DIR SECONDS         reads every file of DIR (one level) in turn for
//!                                         SECONDS; prints the reads, then p50, p99 and max
//!                                         milliseconds of one open+read+close
//! ```
//! Every tree gets a `seal.json` with discovery `.claude/skills/*`, policy
//! block and no bundles (the script pins what it needs recorded).

use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};
use seal_core::discovery::Listings;
use seal_core::effort::{AfterProof, Cancel, Effort, HashProgress};
use seal_core::fs::open_project;
use seal_core::hash::KeepNothing;
use seal_core::lockfile::Lockfile;
use seal_core::paths::BundleKey;
use seal_core::store::read_lockfile;
use seal_core::verify::verify_key_with;

const LOCK: &str = r#"{"version": 1, "discovery": [".claude/skills/*"], "policy": "block", "bundles": {}}
"#;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_else(|| usage());
    let num = |i: usize| arg(i).parse::<usize>().unwrap_or_else(|_| usage());
    match arg(0) {
        "chain" => chain(&project(arg(1)), num(2), num(3)),
        "wide" => files(
            &project(arg(1)).join(".claude/skills/wide"),
            num(2),
            usize::MAX,
        ),
        "bundle" => files(&project(arg(1)).join(".claude/skills/big"), num(2), 100),
        "core" => core(Path::new(arg(1)), arg(2), arg(3), num(4)),
        "reads" => reads(Path::new(arg(1)), num(2)),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: see the top of examples/hostile_bench.rs");
    std::process::exit(2)
}

/// A fresh project directory with the lockfile.
fn project(dir: &str) -> PathBuf {
    let dir = PathBuf::from(dir);
    if dir.exists() {
        let ok = std::process::Command::new("rm")
            .arg("-rf")
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot remove {}", dir.display());
    }
    fs::create_dir_all(dir.join(".claude/skills")).unwrap();
    fs::write(dir.join("seal.json"), LOCK).unwrap();
    dir
}

fn chain(project: &Path, depth: usize, name_len: usize) {
    let base = project.join(".claude/skills/evil");
    fs::create_dir_all(&base).unwrap();
    let name = "d".repeat(name_len);
    let mut dir: OwnedFd = open_project(&base).unwrap();
    for _ in 0..depth {
        mkdirat(dir.as_fd(), name.as_str(), Mode::from_bits_truncate(0o755)).unwrap();
        dir = openat(
            dir.as_fd(),
            name.as_str(),
            OFlag::O_DIRECTORY | OFlag::O_RDONLY,
            Mode::empty(),
        )
        .unwrap();
    }
    let f = openat(
        dir.as_fd(),
        "f",
        OFlag::O_CREAT | OFlag::O_WRONLY,
        Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    nix::unistd::write(&f, b"payload\n").unwrap();
}

/// `n` small files under `root`, `per_dir` to a directory.
fn files(root: &Path, n: usize, per_dir: usize) {
    for i in 0..n {
        let dir = if per_dir == usize::MAX {
            root.to_path_buf()
        } else {
            root.join(format!("d{:04}", i / per_dir))
        };
        if i % per_dir.min(n) == 0 {
            fs::create_dir_all(&dir).unwrap();
        }
        fs::write(dir.join(format!("f{i:06}")), format!("file {i}\n")).unwrap();
    }
}

/// Open+read+close of each file of `dir` in turn for `seconds`: how long an
/// approved skill takes to read while something else loads the mount.
fn reads(dir: &Path, seconds: usize) {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no files in {}", dir.display());
    let until = Instant::now() + std::time::Duration::from_secs(seconds as u64);
    let mut times = Vec::new();
    for path in files.iter().cycle() {
        let started = Instant::now();
        fs::read(path).unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        if Instant::now() >= until {
            break;
        }
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{} {:.3} {:.3} {:.3}",
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

fn core(project: &Path, key: &str, mode: &str, reps: usize) {
    let fd = open_project(project).unwrap();
    let lock = Lockfile::parse(&read_lockfile(fd.as_fd()).unwrap()).unwrap();
    let key = BundleKey::parse(key).unwrap();
    let entry = lock.bundles.get(&key);
    let after_proof = match mode {
        "full" => AfterProof::Finish,
        "stop" => AfterProof::Stop,
        _ => usage(),
    };
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let mut last = String::new();
    for _ in 0..reps.max(1) {
        let cancel = Cancel::new();
        let progress = HashProgress::default();
        let effort = Effort {
            after_proof,
            cancel: &cancel,
            progress: Some(&progress),
            witness: None,
        };
        let cpu_start = cpu();
        let started = Instant::now();
        let mut listings = Listings::new(fd.as_fd());
        let check = verify_key_with(&mut listings, &key, entry, &KeepNothing, effort).unwrap();
        times.push(started.elapsed().as_secs_f64());
        cpu_times.push(cpu() - cpu_start);
        last = format!(
            "{} {:?} {}",
            check.report.state.as_str(),
            check.finish,
            progress.bytes_done.load(Ordering::Relaxed)
        );
    }
    times.sort_by(f64::total_cmp);
    cpu_times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    println!("{:.6} {:.6} {last}", times[mid], cpu_times[mid]);
}

/// CPU seconds (user + system) this process has used, all threads.
fn cpu() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let u = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    secs(u.user_time()) + secs(u.system_time())
}

//! Latency and throughput helper for `scripts/bench-mount.sh`.
//!
//! Shell timing cannot resolve single opens (a few microseconds natively), and
//! a Python loop adds about as much per call as a native open costs, which
//! would shrink every ratio to native. This helper times the system calls
//! themselves with `Instant` and does the whole interleaved run, so that the
//! three views are measured in the same loop under the same conditions.
//!
//! ```text
//! mount_bench gen DIR                       make the tree (deterministic)
//! mount_bench git-prep DIR NAME...          make a git repository of 20,000
//!                                           files per view, at DIR/gitw/NAME
//! mount_bench run NAME=DIR [NAME=DIR...] [--reps N]
//!                                           interleaved run, prints the table
//! mount_bench write-run NAME=DIR [NAME=DIR...] [--reps N]
//!                                           the same for writes (DIR writable)
//! mount_bench workload NAME DIR [VIEW]      run each workload once (for counting)
//! ```
//!
//! Each view writes in a directory of its own (`wscratch/NAME`) and runs git
//! in a repository of its own (`gitw/NAME`): git's index records inode
//! numbers, which differ between the disk and a FUSE view, so a repository
//! shared by the views would be re-checked in full at each switch.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SMALL_FILES: usize = 20_000;
const TOP_DIRS: usize = 10;
const SUB_DIRS: usize = 30;
const GIB: u64 = 1 << 30;
/// The ordinary one-gigabyte file.
const BIG: &str = "data/big.bin";
/// The one-gigabyte file inside a pinned bundle.
const BUNDLE_BIG: &str = ".claude/skills/huge/blob.bin";
/// The verified 10-file bundle (SKILL.md and f1..f9.md, 4.5 KB each).
const BUNDLE_TEN: &str = ".claude/skills/ten";
/// A file of the verified 10-file bundle.
const BUNDLE_SMALL: &str = ".claude/skills/ten/f1.md";
/// A bundle that ships its dependencies: 2,000 files of 9.5 KB on average
/// (19 MB) in 40 package directories, as a skill or MCP server with
/// `node_modules` has.
const BUNDLE_WIDE: &str = ".claude/skills/wide";
const WIDE_FILES: usize = 2_000;
const WIDE_DIRS: usize = 40;
/// An ordinary 4 KiB file.
const FOUR_K: &str = "src/a0/b0/4k.txt";
/// The subtree of the 20,000 small files.
const SMALL_TREE: &str = "src";
/// Past the view's one-second TTLs (ordinary entries where no directory
/// feed watches, attributes of sealed paths): a walk this long after the
/// last is "settled". Where the directory feed watches, the kernel keeps
/// ordinary entries for ten minutes, forgotten at each change (`walk-cold`
/// measures a walk once the kernel has forgotten them).
const EXPIRE: Duration = Duration::from_millis(1200);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => generate(Path::new(&args[1])),
        Some("run") => run(&args[1..]),
        Some("write-run") => write_run(&args[1..]),
        Some("git-prep") => {
            let root = PathBuf::from(&args[1]);
            for name in &args[2..] {
                git_prep(&root.join(GIT_TREES).join(name));
            }
        }
        Some("walk-cold") => {
            // Once per view: a walk just after the kernel dropped its
            // dentries and inodes (as when memory runs short, or the view's
            // TTL ran out): every entry is looked up again.
            for (name, dir) in args[1..].iter().filter_map(|a| a.split_once('=')) {
                walk(Path::new(dir));
                fs::write("/proc/sys/vm/drop_caches", "2").expect("drop_caches (as root)");
                std::thread::sleep(Duration::from_millis(500));
                let (t, _) = walk(Path::new(dir));
                println!("  {name}: {:.4} s", t.as_secs_f64());
            }
        }
        Some("workload") => {
            let name = &args[1];
            let root = PathBuf::from(&args[2]);
            workload(name, &root, args.get(3).map_or("count", String::as_str));
        }
        _ => {
            eprintln!(
                "usage: mount_bench gen DIR | git-prep DIR NAME... | run NAME=DIR... [--reps N] \
                 | write-run NAME=DIR... [--reps N] | workload NAME DIR [VIEW] \
                 | walk-cold NAME=DIR..."
            );
            std::process::exit(2);
        }
    }
}

// ---------------------------------------------------------------------------
// The tree.

fn pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for w in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w.copy_from_slice(&x.to_le_bytes()[..w.len()]);
    }
}

fn write_big(path: &Path, size: u64, seed: u64) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = File::create(path).unwrap();
    let mut chunk = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < size {
        pattern(&mut chunk, seed ^ done);
        f.write_all(&chunk).unwrap();
        done += chunk.len() as u64;
    }
}

fn generate(root: &Path) {
    fs::create_dir_all(root).unwrap();
    let mut buf = vec![0u8; 4096];
    for i in 0..SMALL_FILES {
        let dir = root.join(format!(
            "{SMALL_TREE}/a{}/b{}",
            i % TOP_DIRS,
            (i / TOP_DIRS) % SUB_DIRS
        ));
        if i < TOP_DIRS * SUB_DIRS {
            fs::create_dir_all(&dir).unwrap();
        }
        // 256 B .. 4 KiB.
        let len = 256 + (i * 7919) % (4096 - 256);
        pattern(&mut buf[..len], i as u64);
        fs::write(dir.join(format!("f{i}.txt")), &buf[..len]).unwrap();
    }
    pattern(&mut buf, 4);
    fs::write(root.join(FOUR_K), &buf).unwrap();
    for i in 0..10 {
        let mut b = vec![0u8; 4500];
        pattern(&mut b, 1000 + i);
        let name = if i == 0 {
            "SKILL.md".to_string()
        } else {
            format!("f{i}.md")
        };
        let p = root.join(BUNDLE_TEN).join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, b).unwrap();
    }
    let mut wide = vec![0u8; 19_000];
    for (i, p) in wide_files(root).iter().enumerate() {
        if i < WIDE_DIRS {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
        }
        // 0 .. 19 KB, 9.5 KB on average.
        let len = (i * 7919) % 19_000;
        pattern(&mut wide[..len], 5000 + i as u64);
        fs::write(p, &wide[..len]).unwrap();
    }
    fs::write(root.join(BUNDLE_WIDE).join("SKILL.md"), "wide\n").unwrap();
    write_big(&root.join(BIG), GIB, 1);
    write_big(&root.join(BUNDLE_BIG), GIB, 2);
    fs::write(root.join(".claude/skills/huge/SKILL.md"), "huge\n").unwrap();
    fs::write(root.join("README.md"), "bench tree\n").unwrap();
}

// ---------------------------------------------------------------------------
// Workloads.

/// readdir + lstat of every entry under `dir`; returns (time, entries).
fn walk(dir: &Path) -> (Duration, usize) {
    let t = Instant::now();
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let md = fs::symlink_metadata(&p).unwrap();
            n += 1;
            if md.is_dir() {
                stack.push(p);
            }
        }
    }
    (t.elapsed(), n)
}

fn small_files(root: &Path) -> Vec<PathBuf> {
    (0..SMALL_FILES)
        .map(|i| {
            root.join(format!(
                "{SMALL_TREE}/a{}/b{}/f{i}.txt",
                i % TOP_DIRS,
                (i / TOP_DIRS) % SUB_DIRS
            ))
        })
        .collect()
}

/// `lstat` of a name that does not exist next to each of the 20,000 small
/// files (what interpreters and build tools do as they search paths);
/// returns the time.
fn probe_missing(root: &Path) -> Duration {
    let names: Vec<PathBuf> = small_files(root)
        .into_iter()
        .map(|f| f.with_extension("missing"))
        .collect();
    let t = Instant::now();
    for n in &names {
        assert!(fs::symlink_metadata(n).is_err(), "{}", n.display());
    }
    t.elapsed()
}

/// The 2,000 files of the wide bundle (`SKILL.md` aside).
fn wide_files(root: &Path) -> Vec<PathBuf> {
    (0..WIDE_FILES)
        .map(|i| {
            root.join(format!(
                "{BUNDLE_WIDE}/node_modules/p{}/f{i}.js",
                i % WIDE_DIRS
            ))
        })
        .collect()
}

/// Makes the wide bundle's verification stale without changing what it
/// verifies to: its `SKILL.md` is touched on the disk (the change feed
/// reports the new time, so the next open verifies the bundle again).
fn touch_wide(native: &Path) {
    let f = File::options()
        .write(true)
        .open(native.join(BUNDLE_WIDE).join("SKILL.md"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
}

/// open + read to the end + close of every small file.
fn read_all(files: &[PathBuf]) -> Duration {
    let mut buf = vec![0u8; 8192];
    let t = Instant::now();
    for p in files {
        let mut f = File::open(p).unwrap();
        while f.read(&mut buf).unwrap() > 0 {}
    }
    t.elapsed()
}

/// Times `n` lstat calls of `path`.
fn lstat_latencies(path: &Path, n: usize, out: &mut Vec<u64>) {
    for _ in 0..n {
        let t = Instant::now();
        fs::symlink_metadata(path).unwrap();
        out.push(t.elapsed().as_nanos() as u64);
    }
}

/// Times `n` opens of `path` (the open call only; each handle is closed
/// before the next open, untimed).
fn open_latencies(path: &Path, n: usize, out: &mut Vec<u64>) {
    for _ in 0..n {
        let t = Instant::now();
        let f = File::open(path).unwrap();
        out.push(t.elapsed().as_nanos() as u64);
        drop(f);
    }
}

/// (open time, read time, bytes) of a sequential read with 1 MiB reads.
fn seq_read(path: &Path) -> (Duration, Duration, u64) {
    let mut buf = vec![0u8; 1 << 20];
    let t = Instant::now();
    let mut f = File::open(path).unwrap();
    let opened = t.elapsed();
    let t = Instant::now();
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        n += k as u64;
    }
    (opened, t.elapsed(), n)
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

// ---------------------------------------------------------------------------
// The interleaved run.

#[derive(Default)]
struct Samples {
    /// Per metric, one value per repetition (seconds or GB/s).
    per_rep: BTreeMap<&'static str, Vec<f64>>,
    /// Per latency metric, every sample (ns).
    latencies: BTreeMap<&'static str, Vec<u64>>,
}

impl Samples {
    fn put(&mut self, metric: &'static str, value: f64) {
        self.per_rep.entry(metric).or_default().push(value);
    }
}

/// `NAME=DIR...` and `--reps N`.
fn views_and_reps(args: &[String]) -> (Vec<(String, PathBuf)>, usize) {
    let mut views: Vec<(String, PathBuf)> = Vec::new();
    let mut reps = 5;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--reps" {
            reps = args[i + 1].parse().unwrap();
            i += 2;
            continue;
        }
        let (name, dir) = args[i].split_once('=').expect("NAME=DIR");
        views.push((name.to_string(), PathBuf::from(dir)));
        i += 1;
    }
    (views, reps)
}

fn run(args: &[String]) {
    let (views, reps) = views_and_reps(args);
    let native = views[0].1.clone();
    // Warm every view: page cache of all files, lookups, snapshots once.
    for (name, root) in &views {
        eprintln!("warming {name} ...");
        walk(root);
        read_all(&small_files(root));
        seq_read(&root.join(BIG));
        seq_read(&root.join(BUNDLE_BIG));
        let mut sink = Vec::new();
        open_latencies(&root.join(FOUR_K), 100, &mut sink);
        open_latencies(&root.join(BUNDLE_SMALL), 20, &mut sink);
        read_all(&wide_files(root));
    }
    interleaved(&views, reps, "", |name, root, _, s| {
        {
            let mut put = |k: &'static str, x: f64| s.put(k, x);
            let small = root.join(SMALL_TREE);
            std::thread::sleep(EXPIRE);
            let (t, n_small) = walk(&small);
            put("walk src, settled (s)", t.as_secs_f64());
            let (t, _) = walk(&small);
            put("walk src, repeated (s)", t.as_secs_f64());
            probe_missing(root);
            put(
                "lstat 20,000 missing names, repeated (s)",
                probe_missing(root).as_secs_f64(),
            );
            put(
                "open+read+close 20,000 files (s)",
                read_all(&small_files(root)).as_secs_f64(),
            );
            std::thread::sleep(EXPIRE);
            let (t, n_all) = walk(root);
            put("walk whole tree, settled (s)", t.as_secs_f64());
            let (t, _) = walk(root);
            put("walk whole tree, repeated (s)", t.as_secs_f64());
            assert!(
                n_small >= SMALL_FILES && n_all > n_small,
                "{name}: {n_small} {n_all}"
            );
            // A program loading a bundle it has not loaded since the bundle
            // last changed (the view verifies it first), then again.
            touch_wide(&native);
            let wide = wide_files(root);
            put(
                "load the 2,000-file bundle, changed (s)",
                read_all(&wide).as_secs_f64(),
            );
            put(
                "load the 2,000-file bundle, again (s)",
                read_all(&wide).as_secs_f64(),
            );
            let (o, r, n) = seq_read(&root.join(BIG));
            assert_eq!(n, GIB, "{name}: short read of {BIG}");
            put("1 GiB ordinary: open (s)", o.as_secs_f64());
            put("1 GiB ordinary: read (s)", r.as_secs_f64());
            let (o, r, n) = seq_read(&root.join(BUNDLE_BIG));
            assert_eq!(n, GIB, "{name}: short read of {BUNDLE_BIG}");
            put("1 GiB in bundle: open (s)", o.as_secs_f64());
            put("1 GiB in bundle: read (s)", r.as_secs_f64());
        }
        let lat = s.latencies.entry("4 KiB ordinary open (us)").or_default();
        open_latencies(&root.join(FOUR_K), 2000, lat);
        let lat = s.latencies.entry("10-file bundle open (us)").or_default();
        open_latencies(&root.join(BUNDLE_SMALL), 300, lat);
        let lat = s
            .latencies
            .entry("10-file bundle root lstat (us)")
            .or_default();
        lstat_latencies(&root.join(BUNDLE_TEN), 300, lat);
    });
}

/// Runs `one(name, root, rep, samples)` for every view in every repetition,
/// rotating the order each repetition so that no view always runs first;
/// then prints the table.
fn interleaved(
    views: &[(String, PathBuf)],
    reps: usize,
    what: &str,
    mut one: impl FnMut(&str, &Path, usize, &mut Samples),
) {
    let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
    for rep in 0..reps {
        let mut order: Vec<usize> = (0..views.len()).collect();
        order.rotate_left(rep % views.len());
        for &v in &order {
            let (name, root) = &views[v];
            eprintln!("rep {}/{reps}: {name}{what}", rep + 1);
            one(name, root, rep, samples.entry(name.clone()).or_default());
        }
    }
    report(views, &mut samples);
}

fn report(views: &[(String, PathBuf)], samples: &mut BTreeMap<String, Samples>) {
    let names: Vec<&String> = views.iter().map(|(n, _)| n).collect();
    let base = names[0].clone();
    let mut rows: Vec<(String, Vec<f64>)> = Vec::new();
    let metrics: Vec<&'static str> = samples[&base].per_rep.keys().copied().collect();
    for m in &metrics {
        let vals = names
            .iter()
            .map(|n| median(samples.get_mut(*n).unwrap().per_rep.get_mut(m).unwrap()))
            .collect();
        rows.push((m.to_string(), vals));
    }
    let lat_metrics: Vec<&'static str> = samples[&base].latencies.keys().copied().collect();
    for m in &lat_metrics {
        for (p, label) in [(50, "p50"), (99, "p99")] {
            let vals = names
                .iter()
                .map(|n| {
                    let v = samples.get_mut(*n).unwrap().latencies.get_mut(m).unwrap();
                    v.sort_unstable();
                    percentile(v, p) as f64 / 1000.0
                })
                .collect();
            rows.push((
                format!("{} {label}", m.trim_end_matches(" (us)")) + " (us)",
                vals,
            ));
        }
    }
    // GB/s for the read phases.
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(10);
    print!("{:width$}", "metric (median of reps)");
    for n in &names {
        print!(" | {n:>10}");
    }
    for n in &names[1..] {
        print!(" | {:>12}", format!("{n}/{base}"));
    }
    println!();
    println!(
        "{}",
        "-".repeat(width + names.len() * 13 + (names.len() - 1) * 15)
    );
    for (label, vals) in &rows {
        print!("{label:width$}");
        for v in vals {
            print!(" | {:>10}", fmt(*v));
        }
        for v in &vals[1..] {
            let r = if vals[0] > 0.0 { v / vals[0] } else { f64::NAN };
            print!(" | {:>11.2}x", r);
        }
        println!();
    }
    for (label, vals) in &rows {
        if label.ends_with("read (s)") || label.ends_with("write+close (s)") {
            let gbps: Vec<String> = vals
                .iter()
                .zip(&names)
                .map(|(v, n)| format!("{n} {:.2} GB/s", GIB as f64 / v / 1e9))
                .collect();
            println!("{label}: {}", gbps.join(", "));
        }
    }
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// Runs one workload once (for a request-counting pass; the caller cuts the
/// daemon's debug log around it). `view` names the view's own git
/// repository and scratch directory.
fn workload(name: &str, root: &Path, view: &str) {
    let scratch = root.join(WRITE_SCRATCH).join(view);
    let repo = root.join(GIT_TREES).join(view);
    match name {
        "write-seq" => {
            fs::create_dir_all(&scratch).unwrap();
            seq_write(&scratch.join("big.bin"));
            fs::remove_file(scratch.join("big.bin")).unwrap();
        }
        "write-small" => {
            let dir = scratch.join("small");
            make_small_dirs(&dir);
            write_small(&dir);
        }
        "remove-small" => fs::remove_dir_all(scratch.join("small")).unwrap(),
        "git-status" => {
            git(&repo, &["status", "--porcelain"]);
        }
        "git-modify" => modify_tracked(&repo, workload_round()),
        "git-commit" => {
            git_commit(&repo, workload_round());
        }
        "walk" => {
            walk(&root.join(SMALL_TREE));
        }
        "read-small" => {
            read_all(&small_files(root));
        }
        "open-4k" => open_latencies(&root.join(FOUR_K), 1000, &mut Vec::new()),
        "open-bundle" => open_latencies(&root.join(BUNDLE_SMALL), 100, &mut Vec::new()),
        "load-wide" => {
            read_all(&wide_files(root));
        }
        "lstat-bundle-root" => lstat_latencies(&root.join(BUNDLE_TEN), 100, &mut Vec::new()),
        "seq-ordinary" => {
            seq_read(&root.join(BIG));
        }
        "seq-bundle" => {
            seq_read(&root.join(BUNDLE_BIG));
        }
        other => panic!("unknown workload {other}"),
    }
}

// ---------------------------------------------------------------------------
// Writes.

/// Where each view writes (`wscratch/NAME`), relative to the view's root.
const WRITE_SCRATCH: &str = "wscratch";
/// Where each view's git repository is (`gitw/NAME`).
const GIT_TREES: &str = "gitw";
/// Files of each git repository (4 KiB each, in 300 directories).
const GIT_FILES: usize = 20_000;
/// Files changed before each `git add -A && git commit`.
const GIT_CHANGED: usize = 1_000;

/// The `i`th of 20,000 files in 300 directories, relative to their root.
fn spread(i: usize) -> String {
    format!("a{}/b{}/f{i}.txt", i % TOP_DIRS, (i / TOP_DIRS) % SUB_DIRS)
}

fn make_small_dirs(root: &Path) {
    for a in 0..TOP_DIRS {
        for b in 0..SUB_DIRS {
            fs::create_dir_all(root.join(format!("a{a}/b{b}"))).unwrap();
        }
    }
}

/// Runs git in `dir` (an identity, no automatic gc, no user config);
/// returns its stdout and how long it took.
fn git(dir: &Path, args: &[&str]) -> (String, Duration) {
    let t = Instant::now();
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
        ])
        .args(["-c", "gc.auto=0"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8_lossy(&out.stdout).into_owned(), took)
}

/// A repository of 20,000 4 KiB files at `repo`, committed (natively).
fn git_prep(repo: &Path) {
    let _ = fs::remove_dir_all(repo);
    make_small_dirs(repo);
    let mut buf = vec![0u8; 4096];
    for i in 0..GIT_FILES {
        pattern(&mut buf, 7_000_000 + i as u64);
        fs::write(repo.join(spread(i)), &buf).unwrap();
    }
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "20,000 files"]);
}

/// Writes 1 GiB to `path` in 1 MiB writes; returns (write+close, fsync).
fn seq_write(path: &Path) -> (Duration, Duration) {
    let mut chunk = vec![0u8; 1 << 20];
    pattern(&mut chunk, 99);
    let t = Instant::now();
    let mut f = File::create(path).unwrap();
    for _ in 0..GIB / chunk.len() as u64 {
        f.write_all(&chunk).unwrap();
    }
    let written = t.elapsed();
    let t = Instant::now();
    f.sync_all().unwrap();
    let synced = t.elapsed();
    drop(f);
    assert_eq!(fs::metadata(path).unwrap().len(), GIB);
    (written, synced)
}

/// create + write 4 KiB + close of 20,000 files under `root` (whose 300
/// directories exist).
fn write_small(root: &Path) -> Duration {
    let mut buf = vec![0u8; 4096];
    pattern(&mut buf, 5);
    let t = Instant::now();
    for i in 0..SMALL_FILES {
        let mut f = File::create(root.join(spread(i))).unwrap();
        f.write_all(&buf).unwrap();
    }
    t.elapsed()
}

/// Changes 1,000 of the repository's files (every 20th), with content of
/// round `round`.
fn modify_tracked(repo: &Path, round: u64) {
    let mut buf = vec![0u8; 4096];
    for k in 0..GIT_CHANGED {
        let i = k * (GIT_FILES / GIT_CHANGED);
        pattern(&mut buf, round * 1_000_000 + i as u64);
        fs::write(repo.join(spread(i)), &buf).unwrap();
    }
}

/// The round of a single `git-modify` or `git-commit` workload: `ROUND` in
/// the environment (a new one for each commit measured by hand, or the
/// content would not change), else 9999.
fn workload_round() -> u64 {
    std::env::var("ROUND")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9999)
}

/// `git add -A && git commit`; returns the time of both.
fn git_commit(repo: &Path, round: u64) -> Duration {
    let (_, add) = git(repo, &["add", "-A"]);
    let (_, commit) = git(repo, &["commit", "-q", "-m", &format!("round {round}")]);
    add + commit
}

/// The interleaved write run: every view in turn, the order rotating.
fn write_run(args: &[String]) {
    let (views, reps) = views_and_reps(args);
    // Warm: each view's git index is refreshed through that view (its
    // inode numbers), every repository file is in the page cache.
    for (name, root) in &views {
        eprintln!("warming {name} ...");
        let repo = root.join(GIT_TREES).join(name);
        git(&repo, &["status", "--porcelain"]);
        let (out, _) = git(&repo, &["status", "--porcelain"]);
        assert!(out.is_empty(), "{name}: the repository is not clean: {out}");
        let scratch = root.join(WRITE_SCRATCH).join(name);
        let _ = fs::remove_dir_all(&scratch);
        fs::create_dir_all(&scratch).unwrap();
    }
    interleaved(&views, reps, " (writes)", |name, root, rep, s| {
        let mut put = |k: &'static str, x: f64| s.put(k, x);
        let scratch = root.join(WRITE_SCRATCH).join(name);
        let big = scratch.join("big.bin");
        // What the previous view left dirty goes to the disk first, so that
        // its writeback does not land in this view's time.
        rustix::fs::sync();
        let (written, synced) = seq_write(&big);
        put("1 GiB sequential write+close (s)", written.as_secs_f64());
        put("1 GiB write: fsync (s)", synced.as_secs_f64());
        fs::remove_file(&big).unwrap();
        let small = scratch.join(format!("small{rep}"));
        make_small_dirs(&small);
        rustix::fs::sync();
        put(
            "create+write+close 20,000 4 KiB files (s)",
            write_small(&small).as_secs_f64(),
        );
        fs::remove_dir_all(&small).unwrap();
        let repo = root.join(GIT_TREES).join(name);
        std::thread::sleep(EXPIRE);
        let (out, t) = git(&repo, &["status", "--porcelain"]);
        assert!(out.is_empty(), "{name}: {out}");
        put("git status 20,000 files, settled (s)", t.as_secs_f64());
        let (_, t) = git(&repo, &["status", "--porcelain"]);
        put("git status 20,000 files, repeated (s)", t.as_secs_f64());
        modify_tracked(&repo, rep as u64 + 1);
        put(
            "git add -A && git commit, 1,000 changed (s)",
            git_commit(&repo, rep as u64 + 1).as_secs_f64(),
        );
    });
}

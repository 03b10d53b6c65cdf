//! `seal mount` through a real FUSE mount: what the view shows and hides.
//!
//! Every test mounts its own temporary project on its own temporary
//! mountpoint through `support::Mounted`, which unmounts on drop. The view is
//! compared with the disk after each change: the same tree, kinds, modes,
//! sizes, times and bytes, minus exactly the paths that must be hidden, whose
//! lookups must fail with ENOENT (see `support::assert_view`).
//!
//! Ordinary directories have a one-second attribute TTL in the kernel, so a
//! test that changes an ordinary directory's entries checks the hidden paths
//! at once and waits for the TTL ([`settle`]) before comparing times.

mod support;

use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

const SKILL: &[u8] =
    b"---\nname: x\ndescription: the approved skill\n---\nDo the approved thing.\n";
const HELPER: &[u8] = b"def hi():\n    return 42\n";
const CLAUDE: &[u8] = b"Be careful.\n";

/// A project with a verified skill bundle, a pinned `CLAUDE.md` (when
/// `claude_md`) and ordinary files, initialised with `seal init`.
fn fixture(warn: bool, claude_md: bool) -> Project {
    let p = Project::new();
    p.write(".claude/skills/x/SKILL.md", SKILL)
        .write(".claude/skills/x/helper.py", HELPER)
        .write(".claude/skills/x/scripts/run.sh", "#!/bin/sh\necho ok\n")
        .write("src/main.rs", "fn main() {}\n")
        .write("src/deep/notes.md", "ordinary notes\n")
        .write("README.md", "readme\n")
        .mkdir("empty");
    if claude_md {
        p.write("CLAUDE.md", CLAUDE);
    }
    p.init(if warn { &["--warn"] } else { &[] });
    p
}

/// A mount with an audit log outside the project.
struct View {
    m: Mounted,
    audit: PathBuf,
    /// The project on the disk.
    disk: PathBuf,
    _scratch: tempfile::TempDir,
}

impl View {
    fn new(p: &Project) -> View {
        let scratch = scratch();
        let audit = scratch.path().join("audit.jsonl");
        let m = Mounted::new(p, &["--audit-log", audit.to_str().unwrap()]);
        View {
            m,
            audit,
            disk: p.path().to_path_buf(),
            _scratch: scratch,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.m.path(rel)
    }

    fn root(&self) -> &Path {
        &self.m.mountpoint
    }

    fn records(&self) -> Vec<serde_json::Value> {
        audit_records(&self.audit)
    }

    /// Names listed by readdir of `rel` in the view.
    fn listing(&self, rel: &str) -> Vec<String> {
        listed_names(&self.path(rel))
    }
}

/// Asserts that the listing of `rel` is `expected` within 100 ms. A
/// listing is decided when it is read; with a change feed the kernel opens
/// directories itself, and a reader in the same instant as another read may
/// get that read's listing (until the read that ends it drops it), as may a
/// reader within milliseconds of a change (until the feed's listener makes
/// the kernel drop it).
fn assert_listed<const N: usize>(v: &View, rel: &str, expected: [&str; N]) {
    let listed = within_100ms(|| v.listing(rel) == expected);
    assert!(
        listed,
        "{rel}: {:?}, not {expected:?} after 100 ms",
        v.listing(rel)
    );
}

/// Waits out the kernel's one-second TTL for ordinary entries.
fn settle() {
    std::thread::sleep(Duration::from_millis(1200));
}

/// An open of a hidden file fails at once (every file open reaches the
/// gate); a lookup, and an open of a hidden directory, within 100 ms (the
/// kernel may remember a watched bundle's path until the change feed's
/// listener tells it to forget, which it does as soon as the change is
/// read; with a change feed the kernel opens directories itself, and a
/// listing read from it is decided when it is read).
fn assert_hidden(v: &View, rel: &str) {
    let is_dir = v.disk.join(rel).is_dir();
    if is_dir {
        let failed = within_100ms(|| errno_of(&fs::File::open(v.path(rel))) == Some(libc::ENOENT));
        assert!(failed, "open {rel} still succeeds after 100 ms");
    }
    let open = fs::File::open(v.path(rel));
    assert_eq!(errno_of(&open), Some(libc::ENOENT), "open {rel}: {open:?}");
    let gone = within_100ms(|| fs::symlink_metadata(v.path(rel)).is_err());
    let st = fs::symlink_metadata(v.path(rel));
    assert!(gone, "lstat {rel} still answers after 100 ms: {st:?}");
    assert_eq!(errno_of(&st), Some(libc::ENOENT), "lstat {rel}: {st:?}");
}

fn as_strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The records of `event` about `path`.
fn records_of<'a>(
    records: &'a [serde_json::Value],
    event: &str,
    path: &str,
) -> Vec<&'a serde_json::Value> {
    records
        .iter()
        .filter(|r| r["event"] == event && r["path"] == path)
        .collect()
}

/// Checks the fields every record must have, and that no record carries an
/// absolute host path outside the fields that name the project and the
/// command (schema seal.audit/2).
fn assert_well_formed(records: &[serde_json::Value], project: &Path) {
    let project = project.to_string_lossy();
    for r in records {
        for field in ["time", "event", "op", "path", "outcome", "comm"] {
            assert!(r[field].is_string(), "{field} missing in {r}");
        }
        assert!(r["pid"].as_u64().is_some_and(|p| p > 0), "pid in {r}");
        assert!(r["path"].as_str().unwrap().starts_with('.'), "{r}");
        let mut rest = r.clone();
        let fields = rest.as_object_mut().unwrap();
        fields.remove("project");
        fields.remove("run_command");
        let line = rest.to_string();
        assert!(!line.contains(project.as_ref()), "host path in {line}");
    }
}

// ---------------------------------------------------------------------------
// A verified bundle, and each kind of change to it.

#[derive(Debug, Clone, Copy)]
enum Change {
    Modify,
    Add,
    Remove,
    Symlink,
    Fifo,
}

const X: &str = ".claude/skills/x";
const X_KEY: &str = "./.claude/skills/x";

fn apply(p: &Project, c: Change) {
    match c {
        Change::Modify => {
            p.write(".claude/skills/x/SKILL.md", b"Do the UNAPPROVED thing.\n");
        }
        Change::Add => {
            p.write(".claude/skills/x/extra.md", b"added later\n");
        }
        Change::Remove => {
            p.remove(".claude/skills/x/helper.py");
        }
        Change::Symlink => {
            p.symlink("SKILL.md", ".claude/skills/x/link.md");
        }
        Change::Fifo => {
            p.mkfifo(".claude/skills/x/pipe");
        }
    }
}

fn revert(p: &Project, c: Change) {
    match c {
        Change::Modify => {
            p.write(".claude/skills/x/SKILL.md", SKILL);
        }
        Change::Add => {
            p.remove(".claude/skills/x/extra.md");
        }
        Change::Remove => {
            p.write(".claude/skills/x/helper.py", HELPER);
        }
        Change::Symlink => {
            p.remove(".claude/skills/x/link.md");
        }
        Change::Fifo => {
            p.remove(".claude/skills/x/pipe");
        }
    }
}

/// Checks that `r` names the change `c` in its file lists.
fn assert_names_change(r: &serde_json::Value, c: Change) {
    let (field, want) = match c {
        Change::Modify => ("modified", "SKILL.md"),
        Change::Add => ("added", "extra.md"),
        Change::Remove => ("missing", "helper.py"),
        Change::Symlink => ("problems", "link.md"),
        Change::Fifo => ("problems", "pipe"),
    };
    let listed = as_strings(&r[field]);
    assert!(
        listed.iter().any(|f| f.contains(want)),
        "{field} of {r} should name {want}"
    );
    assert_eq!(r["outcome"], "Mismatch", "{r}");
    assert_eq!(r["key"], X_KEY, "{r}");
}

fn changed_bundle_under_block(c: Change) {
    if !fuse_available() {
        return;
    }
    let p = fixture(false, true);
    let v = View::new(&p);
    // Verified: readable, with the disk's bytes.
    assert_eq!(
        fs::read(v.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    assert_view(p.path(), v.root(), &[], true);
    let before = v.records().len();

    apply(&p, c);
    assert_hidden(&v, X);
    assert_hidden(&v, ".claude/skills/x/SKILL.md");
    assert_listed(&v, ".claude/skills", []);
    assert_view(p.path(), v.root(), &[X], true);
    // Ordinary files and the other bundle are untouched.
    assert_eq!(fs::read(v.path("CLAUDE.md")).unwrap(), CLAUDE);
    assert_eq!(fs::read(v.path("src/main.rs")).unwrap(), b"fn main() {}\n");

    let records = v.records();
    assert_well_formed(&records, p.path());
    let after: Vec<_> = records[before..]
        .iter()
        .filter(|r| r["key"] == X_KEY)
        .collect();
    assert!(!after.is_empty(), "no audit record after the change");
    for r in &after {
        assert_eq!(r["event"], "hide", "only hides once changed: {r}");
        assert_names_change(r, c);
    }
    assert!(
        after
            .iter()
            .any(|r| r["op"] == "lookup" && r["path"] == X_KEY),
        "the hidden lookup of the root is logged: {after:?}"
    );

    revert(&p, c);
    assert_eq!(
        fs::read(v.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    assert_listed(&v, ".claude/skills", ["x"]);
    assert_view(p.path(), v.root(), &[], true);
}

/// The lookups of `name` the daemon has logged so far (its stderr is read
/// by a thread: waits a moment for the lines of requests already answered).
fn lookups_of(m: &Mounted, name: &str) -> usize {
    let wanted = format!("LOOKUP name \"{name}\"");
    logged(m, |l| l.contains(&wanted))
}

/// The lines the daemon has logged so far that `counts` (its stderr is
/// read by a thread: waits a moment for the lines of requests already
/// answered).
fn logged(m: &Mounted, counts: impl Fn(&str) -> bool) -> usize {
    std::thread::sleep(Duration::from_millis(200));
    m.stderr_lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| counts(l))
        .count()
}

/// Where the kernel offers FUSE over io_uring, requests are served from a
/// ring per CPU (`mount/ring.rs`), not by the classic loop: reading a skill
/// and listing its bundle go through the rings, with the same answers.
#[test]
fn requests_are_served_from_the_rings_where_the_kernel_offers_them() {
    if !fuse_available() || !support::rings_available() {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &[], "sealfs=info,sealfs::requests=debug");
    assert_eq!(
        fs::read(m.path(".claude/skills/x/helper.py")).unwrap(),
        HELPER
    );
    assert_eq!(
        logged(&m, |l| l
            .contains("FUSE requests come through io_uring rings")),
        1,
        "the transport is not said at info level"
    );
    let listed: Vec<_> = fs::read_dir(m.path(".claude/skills/x"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        listed.iter().any(|n| n == "helper.py"),
        "listed: {listed:?}"
    );
    let by_rings = logged(&m, |l| l.contains("sealfs::requests::ring: FUSE("));
    let classic = logged(&m, |l| {
        l.contains("sealfs::requests::device: FUSE(") && l.contains("LOOKUP name \"helper.py\"")
    });
    assert!(by_rings >= 3, "the rings served {by_rings} requests");
    assert_eq!(classic, 0, "the classic loop looked the skill up");
    let threads = fs::read_dir(format!("/proc/{}/task", m.child.as_ref().unwrap().id()))
        .unwrap()
        .filter_map(|t| fs::read_to_string(t.unwrap().path().join("comm")).ok())
        .filter(|name| name.starts_with("seal-ring-"))
        .count();
    assert!(threads >= 1, "no ring thread");
}

/// A bundle whose verification the change feed keeps proving current is
/// remembered by the kernel (past the one second an ordinary entry outside
/// a watched directory lives, no lookup of it reaches the daemon), and
/// forgotten as soon as it changes.
#[test]
fn a_watched_bundle_is_remembered_by_the_kernel_and_forgotten_at_its_change() {
    // The change feed's fast path: off under --rehash-every-open.
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &[], "sealfs::requests=debug");
    let helper = m.path(".claude/skills/x/helper.py");
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    let first = lookups_of(&m, "helper.py");
    assert!(first >= 1, "the first read looks it up");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    assert!(fs::metadata(m.path(X)).unwrap().is_dir());
    assert_eq!(lookups_of(&m, "helper.py"), first, "kept: no lookup");

    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    let gone = within_100ms(|| fs::symlink_metadata(&helper).is_err());
    assert!(gone, "still there 100 ms after the change");
    assert!(within_100ms(|| fs::symlink_metadata(m.path(X)).is_err()));
    p.write(".claude/skills/x/helper.py", HELPER);
    assert!(within_100ms(|| fs::read(&helper).is_ok_and(|b| b == HELPER)));
}

/// Where the kernel opens files itself, the lookup that showed a bundle
/// file is its opens' decision and the kernel keeps it: reading the file
/// again, past every one-second TTL, reaches the daemon with no request at
/// all, and a change on the disk still refuses it within 100 ms.
#[test]
fn where_the_kernel_opens_a_bundle_file_read_again_reaches_no_one() {
    // The change feed's fast path: off under --rehash-every-open.
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &["--kernel-opens"], "sealfs::requests=debug");
    let helper = m.path(".claude/skills/x/helper.py");
    // The first open is the daemon's (answered ENOSYS); the next the
    // kernel's own.
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    std::thread::sleep(Duration::from_millis(1500));
    let mark = log_mark(&m);
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    assert_eq!(fs::read(&helper).unwrap(), HELPER);
    // (The mount root's attributes are refreshed every second: they tell a
    // live mount from one whose daemon is gone.)
    let mut again = requests_since(&m, mark);
    again.retain(|l| !l.contains("ino 0x0000000000000001 GETATTR"));
    assert!(
        again.is_empty(),
        "reading a kept bundle file again reached the daemon: {again:?}"
    );

    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    assert!(
        within_100ms(|| errno_of(&fs::File::open(&helper)) == Some(libc::ENOENT)),
        "a tampered bundle file still opens 100 ms after the change"
    );
    p.write(".claude/skills/x/helper.py", HELPER);
    assert!(within_100ms(|| fs::read(&helper).is_ok_and(|b| b == HELPER)));
}

/// A listing inside a verified bundle lets the kernel keep the entries its
/// lookups decided (reading the skill again after `ls` asks no `LOOKUP`);
/// where the kernel opens files itself, a bundle file first met in a
/// listing is still looked up, pinned and read (it failed with `ESTALE`
/// when the listing's entry spared that lookup).
#[test]
fn a_listing_inside_a_bundle_spares_lookups_and_never_a_pin() {
    // Where the kernel opens files itself, its files are looked up (and
    // pinned) all the same: the test below.
    if !fuse_available()
        || support::mount_mode_has("--rehash-every-open")
        || support::mount_mode_has("--kernel-opens")
    {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &[], "sealfs::requests=debug");
    let skill = m.path(".claude/skills/x");
    let read_all = || {
        for name in ["SKILL.md", "helper.py", "scripts/run.sh"] {
            fs::read(skill.join(name)).unwrap();
        }
    };
    read_all();
    // The log lines of the first reads arrive before the mark (the daemon's
    // stderr is read by a thread).
    std::thread::sleep(Duration::from_millis(200));
    let mark = log_mark(&m);
    assert!(fs::read_dir(&skill).unwrap().count() >= 3);
    read_all();
    let lookups: Vec<String> = requests_since_where(&m, mark, |l| l.contains(" LOOKUP "));
    assert!(
        lookups.is_empty(),
        "looked up again after a listing: {lookups:?}"
    );
    // What the listing let the kernel keep, it forgets at the change as
    // the lookups' entries: a file tampered on the disk refuses its open.
    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    assert!(
        within_100ms(|| errno_of(&fs::File::open(skill.join("helper.py"))) == Some(libc::ENOENT)),
        "a tampered bundle file still opens 100 ms after the change"
    );
    p.write(".claude/skills/x/helper.py", HELPER);
    drop(m);

    let m = Mounted::new(&p, &["--kernel-opens"]);
    let skill = m.path(".claude/skills/x");
    // The kernel learns to open files itself at the first open.
    fs::read(m.path("README.md")).unwrap();
    let names: Vec<_> = fs::read_dir(&skill)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(names.iter().any(|n| n == "helper.py"), "{names:?}");
    assert_eq!(fs::read(skill.join("helper.py")).unwrap(), HELPER);
    assert_eq!(fs::read(skill.join("SKILL.md")).unwrap(), SKILL);
}

/// A listing of the skills directory keeps each current skill's root as
/// its lookup would: walking into a listed skill looks nothing up again.
/// The listing registers each root for the listener's notices, so a skill
/// tampered on the disk is gone within 100 ms all the same.
#[test]
fn a_listing_of_the_skills_keeps_their_roots_until_one_changes() {
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &[], "sealfs::requests=debug");
    let skills = m.path(".claude/skills");
    let mark = log_mark(&m);
    let names: Vec<_> = fs::read_dir(&skills)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(names.iter().any(|n| n == "x"), "{names:?}");
    fs::read(skills.join("x/SKILL.md")).unwrap();
    fs::read(skills.join("x/helper.py")).unwrap();
    let root_lookups: Vec<String> =
        requests_since_where(&m, mark, |l| l.contains(" LOOKUP ") && l.contains("\"x\""));
    assert!(
        root_lookups.is_empty(),
        "the listed root was looked up again: {root_lookups:?}"
    );
    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    assert!(
        within_100ms(|| errno_of(&fs::metadata(skills.join("x"))) == Some(libc::ENOENT)),
        "a tampered skill's root still shows 100 ms after the change"
    );
    assert!(errno_of(&fs::File::open(skills.join("x/SKILL.md"))) == Some(libc::ENOENT));
    p.write(".claude/skills/x/helper.py", HELPER);
    assert!(within_100ms(|| fs::metadata(skills.join("x")).is_ok()));
}

/// The kernel keeps the listings of a skill's directories while the feed
/// proves the skill current: listing them again asks nothing. A change a
/// process on the host makes anywhere in the skill (here a file of its
/// root rewritten, which leaves `scripts/` as it was on the disk) makes
/// the bundle's notice drop those listings with the root: within 100 ms
/// the skill is gone, and a directory handle held open in `scripts/` is
/// answered by the view again, not from what the kernel kept.
#[test]
fn a_skill_s_listings_are_kept_until_the_skill_changes() {
    use std::os::unix::fs::MetadataExt;
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &[], "sealfs::requests=debug");
    let skill = m.path(".claude/skills/x");
    let scripts = skill.join("scripts");
    let names = |dir: &Path| -> Vec<std::ffi::OsString> {
        let mut n: Vec<_> = fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
            .unwrap_or_default();
        n.sort();
        n
    };
    let first = (names(&skill), names(&scripts));
    assert_eq!(first.0, ["SKILL.md", "helper.py", "scripts"], "{first:?}");
    assert_eq!(first.1, ["run.sh"], "{first:?}");
    let held = fs::File::open(&scripts).unwrap();
    let listed_scripts = format!("ino {:#018x} READDIR", held.metadata().unwrap().ino());
    // The log lines of the first listings arrive before the mark.
    std::thread::sleep(Duration::from_millis(200));
    let mark = log_mark(&m);
    assert_eq!((names(&skill), names(&scripts)), first);
    let listings: Vec<String> = requests_since_where(&m, mark, |l| l.contains(" READDIR"));
    assert!(
        listings.is_empty(),
        "the skill was listed again: {listings:?}"
    );
    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    assert!(
        within_100ms(|| errno_of(&fs::metadata(&skill)) == Some(libc::ENOENT)),
        "the changed skill still shows 100 ms after the change"
    );
    let mark = log_mark(&m);
    let through_handle = Path::new("/proc/self/fd").join(held.as_raw_fd().to_string());
    let _ = names(&through_handle);
    let asked: Vec<String> = requests_since_where(&m, mark, |l| l.contains(&listed_scripts));
    assert!(
        !asked.is_empty(),
        "a handle held in the changed skill was answered from the listing the kernel kept"
    );
    p.write(".claude/skills/x/helper.py", HELPER);
    assert!(within_100ms(|| (names(&skill), names(&scripts)) == first));
}

/// In a writable view, a change of attributes made through the view (the
/// `chmod` tar makes of each file it writes) leaves the kernel holding the
/// attributes it was answered: a `stat` after the listener has read the
/// change's event asks the daemon nothing. The same change made by a
/// process on the host shows through the view within 100 ms.
#[test]
fn attributes_changed_through_the_view_are_kept_and_the_host_s_changes_show() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // The directory feed's fast path: off under --rehash-every-open.
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::logging(&p, &["--writable"], "sealfs::requests=debug");
    let file = m.path("src/deep/notes.md");
    let mode = || fs::metadata(&file).unwrap().mode() & 0o7777;
    let ino = fs::metadata(&file).unwrap().ino();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    // The listener reads the change's event meanwhile.
    std::thread::sleep(Duration::from_millis(200));
    let mark = log_mark(&m);
    assert_eq!(mode(), 0o600);
    let getattr = format!("ino {ino:#018x} GETATTR");
    let asked = requests_since_where(&m, mark, |l| l.contains(&getattr));
    assert!(
        asked.is_empty(),
        "the kernel forgot attributes it was answered: {asked:?}"
    );
    fs::set_permissions(
        p.path().join("src/deep/notes.md"),
        fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    assert!(
        within_100ms(|| mode() == 0o640),
        "the host's chmod does not show 100 ms after it: {:o}",
        mode()
    );
}

/// As the adversary after a listing kept the skills' roots: a process on
/// the host moves a listed skill away and puts a tampered copy under its
/// name (its own inode, never verified). Within 100 ms the name shows
/// nothing, and no byte of the copy is ever served; once the approved
/// skill is moved back it shows again. (Two notices make the kernel forget
/// the kept root here: the bundle's, and the directory feed's for the
/// name moved in the skills directory; the test above holds the bundle's
/// alone, for a change inside the skill.)
#[test]
fn a_listed_skill_swapped_for_a_tampered_copy_is_gone_within_100ms() {
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    let m = Mounted::new(&p, &[]);
    let skills = m.path(".claude/skills");
    assert!(
        fs::read_dir(&skills)
            .unwrap()
            .any(|e| e.unwrap().file_name() == "x")
    );
    assert_eq!(fs::read(skills.join("x/SKILL.md")).unwrap(), SKILL);
    let disk = p.path().join(".claude/skills");
    fs::rename(disk.join("x"), disk.join("x.approved")).unwrap();
    fs::create_dir_all(disk.join("x/scripts")).unwrap();
    fs::write(disk.join("x/SKILL.md"), b"TAMPERED SKILL").unwrap();
    fs::write(disk.join("x/helper.py"), HELPER).unwrap();
    fs::write(disk.join("x/scripts/run.sh"), "#!/bin/sh\necho ok\n").unwrap();
    assert!(
        within_100ms(|| errno_of(&fs::metadata(skills.join("x"))) == Some(libc::ENOENT)),
        "the swapped skill still shows 100 ms after the swap"
    );
    assert!(
        matches!(fs::read(skills.join("x/SKILL.md")), Err(e) if e.raw_os_error() == Some(libc::ENOENT))
    );
    assert!(
        !fs::read_dir(&skills)
            .unwrap()
            .any(|e| e.unwrap().file_name() == "x")
    );
    fs::remove_dir_all(disk.join("x")).unwrap();
    fs::rename(disk.join("x.approved"), disk.join("x")).unwrap();
    assert!(within_100ms(
        || fs::read(skills.join("x/SKILL.md")).is_ok_and(|b| b == SKILL)
    ));
}

/// The requests logged since `mark` that `wanted` picks.
fn requests_since_where(m: &Mounted, mark: usize, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    requests_since(m, mark)
        .into_iter()
        .filter(|l| wanted(l))
        .collect()
}

/// The requests of kind `op` the daemon has logged so far.
fn requests_of(m: &Mounted, op: &str) -> usize {
    let wanted = format!(" {op} ");
    logged(m, |l| is_request(l) && l.contains(&wanted))
}

/// How many lines the daemon has logged so far (a mark for
/// [`requests_since`]).
fn log_mark(m: &Mounted) -> usize {
    m.stderr_lines.lock().unwrap().len()
}

/// Whether a line of the daemon's log is a request it served: from the
/// classic loop (`mount/device.rs`) or from a ring (`mount/ring.rs`).
fn is_request(line: &str) -> bool {
    line.contains("sealfs::requests::device: FUSE(")
        || line.contains("sealfs::requests::ring: FUSE(")
}

/// The requests the daemon has logged since `mark`, once those in flight
/// have had time to arrive.
fn requests_since(m: &Mounted, mark: usize) -> Vec<String> {
    std::thread::sleep(Duration::from_millis(200));
    m.stderr_lines.lock().unwrap()[mark..]
        .iter()
        .filter(|l| is_request(l))
        .cloned()
        .collect()
}

/// With a change feed the kernel opens directories itself: after the first
/// `opendir` (answered `ENOSYS`), a walk of ordinary directories it has
/// seen before reaches the daemon with no request at all (a listing that
/// holds a bundle or an agent file is still read, and decided, each time),
/// and the listings it keeps follow the disk: a name made there shows
/// within 100 ms, a bundle changed on the disk is gone from its container's
/// listing within 100 ms, and back as soon as it is whole again.
#[test]
fn the_kernel_opens_directories_itself_and_keeps_true_listings() {
    // The change feed's fast path: off under --rehash-every-open.
    if !fuse_available() || support::mount_mode_has("--rehash-every-open") {
        return;
    }
    let p = fixture(false, true);
    p.write("src/fresh/a.rs", "a\n");
    let m = Mounted::logging(&p, &[], "sealfs::requests=debug");
    let walk = || tree(&m.mountpoint.join("src"), false).len();
    let listed = |rel: &str| listed_names(&m.path(rel));
    let entries = walk();
    assert_eq!(walk(), entries);
    assert!(
        requests_of(&m, "OPENDIR") <= 1,
        "only the first opendir reaches the daemon"
    );
    let listings = requests_of(&m, "READDIRPLUS") + requests_of(&m, "READDIR");
    let mark = log_mark(&m);
    assert_eq!(walk(), entries);
    assert_eq!(listed("src/fresh"), ["a.rs"]);
    let again = requests_since(&m, mark);
    assert!(
        again
            .iter()
            .all(|l| !l.contains("READDIR") && !l.contains("OPENDIR")),
        "an ordinary listing kept by the kernel was read again: {again:?}"
    );
    assert!(listings > 0);

    // A name made on the disk shows in the kept listing.
    p.write("src/fresh/b.rs", "b\n");
    assert!(within_100ms(|| listed("src/fresh") == ["a.rs", "b.rs"]));
    // A bundle changed on the disk leaves its container's listing, and is
    // back once whole.
    assert_eq!(listed(".claude/skills"), ["x"]);
    p.write(".claude/skills/x/helper.py", "tampered = True\n");
    assert!(within_100ms(|| listed(".claude/skills").is_empty()));
    p.write(".claude/skills/x/helper.py", HELPER);
    assert!(within_100ms(|| listed(".claude/skills") == ["x"]));
}

fn changed_bundle_under_warn(c: Change) {
    if !fuse_available() {
        return;
    }
    let p = fixture(true, true);
    let v = View::new(&p);
    assert_view(p.path(), v.root(), &[], true);
    let before = v.records().len();

    apply(&p, c);
    // Visible, with what is on the disk now, and every load is a warning
    // (where the kernel opens files itself, once the listener made it
    // forget the approved bytes it kept).
    let skill = v.path(".claude/skills/x/SKILL.md");
    assert!(
        v.m.after_change(|| fs::read(&skill).unwrap() == p.read(".claude/skills/x/SKILL.md")),
        "the changed bundle does not read what the disk has"
    );
    assert_view(p.path(), v.root(), &[], true);
    let records = v.records();
    assert_well_formed(&records, p.path());
    let warns = records_of(&records[before..], "warn", "./.claude/skills/x/SKILL.md");
    assert!(!warns.is_empty(), "no warn record: {records:?}");
    for r in &warns {
        assert_eq!(r["op"], "open", "{r}");
        assert_eq!(r["comm"].as_str().map(|s| !s.is_empty()), Some(true));
        assert!(r["verify_us"].is_u64(), "{r}");
        assert_names_change(r, c);
    }
    assert!(
        records[before..]
            .iter()
            .filter(|r| r["key"] == X_KEY)
            .all(|r| r["event"] != "allow"),
        "a changed bundle is never logged as allowed"
    );

    let n = v.records().len();
    revert(&p, c);
    // Read, and allowed (where the kernel opens files itself, at the
    // lookup after the listener made it forget the bundle).
    let allowed_again = || {
        fs::read(&skill).unwrap() == SKILL
            && !records_of(&v.records()[n..], "allow", "./.claude/skills/x/SKILL.md").is_empty()
    };
    assert!(
        v.m.after_change(allowed_again),
        "the bundle made whole is not allowed again: {:?}",
        &v.records()[n..]
    );
    let records = v.records();
    let allowed = records_of(&records[n..], "allow", "./.claude/skills/x/SKILL.md");
    assert_eq!(allowed.len(), 1, "{:?}", &records[n..]);
    assert_eq!(allowed[0]["outcome"], "Verified");
}

#[test]
fn modified_file_hides_bundle_under_block() {
    changed_bundle_under_block(Change::Modify);
}

#[test]
fn added_file_hides_bundle_under_block() {
    changed_bundle_under_block(Change::Add);
}

#[test]
fn removed_file_hides_bundle_under_block() {
    changed_bundle_under_block(Change::Remove);
}

#[test]
fn symlink_in_bundle_hides_it_under_block() {
    changed_bundle_under_block(Change::Symlink);
}

#[test]
fn fifo_in_bundle_hides_it_under_block() {
    changed_bundle_under_block(Change::Fifo);
}

#[test]
fn modified_file_shows_bundle_with_warning_under_warn() {
    changed_bundle_under_warn(Change::Modify);
}

#[test]
fn added_file_shows_bundle_with_warning_under_warn() {
    changed_bundle_under_warn(Change::Add);
}

#[test]
fn removed_file_shows_bundle_with_warning_under_warn() {
    changed_bundle_under_warn(Change::Remove);
}

#[test]
fn symlink_in_bundle_shows_it_with_warning_under_warn() {
    changed_bundle_under_warn(Change::Symlink);
}

#[test]
fn fifo_in_bundle_shows_it_with_warning_under_warn() {
    changed_bundle_under_warn(Change::Fifo);
}

#[test]
fn verified_bundles_are_served_with_the_disk_bytes_and_logged() {
    if !fuse_available() {
        return;
    }
    let p = fixture(false, true);
    let v = View::new(&p);
    assert_eq!(
        v.listing(""),
        [
            ".claude",
            "CLAUDE.md",
            "README.md",
            "empty",
            "seal.json",
            "src"
        ]
    );
    assert_eq!(
        v.listing(".claude/skills/x"),
        ["SKILL.md", "helper.py", "scripts"]
    );
    assert_view(p.path(), v.root(), &[], true);
    // seal.json is visible and read-only.
    assert_eq!(fs::read(v.path("seal.json")).unwrap(), p.read("seal.json"));
    let records = v.records();
    assert_well_formed(&records, p.path());
    for rel in [
        "./.claude/skills/x/SKILL.md",
        "./.claude/skills/x/helper.py",
        "./.claude/skills/x/scripts/run.sh",
        "./CLAUDE.md",
    ] {
        let allowed = records_of(&records, "allow", rel);
        assert!(
            !allowed.is_empty(),
            "no allow record for {rel}: {records:?}"
        );
        assert_eq!(allowed[0]["op"], "open");
        assert_eq!(allowed[0]["outcome"], "Verified");
    }
    assert!(
        records
            .iter()
            .all(|r| ["allow", "mount-start", "mount-end"].contains(&r["event"].as_str().unwrap())),
        "nothing but allows for a verified project: {records:?}"
    );
    assert!(
        records.iter().all(|r| r["path"] != "./src/main.rs"),
        "ordinary files are not gate decisions"
    );
}

// ---------------------------------------------------------------------------
// Paths no lockfile entry covers.

#[test]
fn unpinned_bundle_is_hidden_under_block() {
    if !fuse_available() {
        return;
    }
    let p = fixture(false, true);
    let v = View::new(&p);
    assert_view(p.path(), v.root(), &[], true);
    p.write(".claude/skills/y/SKILL.md", "not pinned\n");
    assert_hidden(&v, ".claude/skills/y");
    assert_hidden(&v, ".claude/skills/y/SKILL.md");
    assert_listed(&v, ".claude/skills", ["x"]);
    settle();
    assert_view(p.path(), v.root(), &[".claude/skills/y"], true);
    let records = v.records();
    let hides = records_of(&records, "hide", "./.claude/skills/y");
    assert!(!hides.is_empty(), "{records:?}");
    assert!(
        hides
            .iter()
            .all(|r| r["outcome"] == "Unverified" && r["key"] == "./.claude/skills/y")
    );
    assert!(
        records
            .iter()
            .all(|r| r["key"] != "./.claude/skills/y" || r["event"] == "hide")
    );
}

#[test]
fn unpinned_bundle_is_shown_with_warning_under_warn() {
    if !fuse_available() {
        return;
    }
    let p = fixture(true, true);
    let v = View::new(&p);
    p.write(".claude/skills/y/SKILL.md", "not pinned\n");
    assert_eq!(
        fs::read(v.path(".claude/skills/y/SKILL.md")).unwrap(),
        b"not pinned\n"
    );
    assert_listed(&v, ".claude/skills", ["x", "y"]);
    settle();
    assert_view(p.path(), v.root(), &[], true);
    let records = v.records();
    let warns = records_of(&records, "warn", "./.claude/skills/y/SKILL.md");
    assert!(!warns.is_empty(), "{records:?}");
    assert!(warns.iter().all(|r| r["outcome"] == "Unverified"));
}

/// New agent artifacts no lockfile pattern covers.
const ARTIFACTS: &[&str] = &[
    ".claude/commands/x.md",
    "CLAUDE.md",
    "AGENTS.md",
    "src/CLAUDE.md",
    "src/deep/AGENTS.md",
    "src/deep/CLAUDE.local.md",
];

#[test]
fn new_commands_and_instruction_files_are_hidden_under_block() {
    if !fuse_available() {
        return;
    }
    let p = fixture(false, false);
    let v = View::new(&p);
    assert_view(p.path(), v.root(), &[], true);
    for a in ARTIFACTS {
        p.write(a, format!("injected {a}\n"));
    }
    for a in ARTIFACTS {
        assert_hidden(&v, a);
    }
    // The directories on the way stay (they hold nothing loadable now).
    assert_listed(&v, ".claude/commands", []);
    assert_listed(&v, "src/deep", ["notes.md"]);
    assert_listed(&v, "src", ["deep", "main.rs"]);
    assert_eq!(
        v.listing(""),
        [".claude", "README.md", "empty", "seal.json", "src"]
    );
    settle();
    assert_view(p.path(), v.root(), ARTIFACTS, true);
    let records = v.records();
    assert_well_formed(&records, p.path());
    for a in ARTIFACTS {
        let hides = records_of(&records, "hide", &format!("./{a}"));
        assert!(!hides.is_empty(), "no hide record for {a}: {records:?}");
        assert!(
            hides[0]["outcome"]
                .as_str()
                .unwrap()
                .starts_with("unverified artifact"),
            "{}",
            hides[0]
        );
    }
}

#[test]
fn new_commands_and_instruction_files_are_shown_with_warning_under_warn() {
    if !fuse_available() {
        return;
    }
    let p = fixture(true, false);
    let v = View::new(&p);
    for a in ARTIFACTS {
        p.write(a, format!("injected {a}\n"));
    }
    for a in ARTIFACTS {
        assert_eq!(
            fs::read(v.path(a)).unwrap(),
            format!("injected {a}\n").as_bytes()
        );
    }
    settle();
    assert_view(p.path(), v.root(), &[], true);
    let records = v.records();
    for a in ARTIFACTS {
        let warns = records_of(&records, "warn", &format!("./{a}"));
        assert!(!warns.is_empty(), "no warn record for {a}: {records:?}");
        assert_eq!(warns[0]["op"], "open");
    }
}

// ---------------------------------------------------------------------------
// The lockfile is live.

fn invalid_lockfile_hides_everything(warn: bool) {
    if !fuse_available() {
        return;
    }
    let p = fixture(warn, true);
    let good = p.read("seal.json");
    let v = View::new(&p);
    assert_view(p.path(), v.root(), &[], true);
    let sealed = [X, "CLAUDE.md"];

    for broken in [&b"{ broken"[..], b"", b"{\"version\": 2}"] {
        p.write("seal.json", broken);
        for s in sealed {
            assert_hidden(&v, s);
        }
        assert_eq!(
            fs::read(v.path("seal.json")).unwrap(),
            broken,
            "seal.json shows its bytes"
        );
        assert_listed(&v, ".claude/skills", []);
        // A new artifact while invalid is hidden too, even under warn.
        p.write("src/AGENTS.md", "new\n");
        assert_hidden(&v, "src/AGENTS.md");
        settle();
        assert_view(p.path(), v.root(), &[X, "CLAUDE.md", "src/AGENTS.md"], true);
        p.remove("src/AGENTS.md");

        // Fixing it restores the view without a remount.
        p.write("seal.json", &good);
        assert_eq!(
            fs::read(v.path(".claude/skills/x/SKILL.md")).unwrap(),
            SKILL
        );
        assert_eq!(fs::read(v.path("CLAUDE.md")).unwrap(), CLAUDE);
        settle();
        assert_view(p.path(), v.root(), &[], true);
    }

    // A missing seal.json fails closed the same way.
    p.remove("seal.json");
    for s in sealed {
        assert_hidden(&v, s);
    }
    settle();
    assert_view(p.path(), v.root(), &sealed, true);
    p.write("seal.json", &good);
    assert_eq!(
        fs::read(v.path(".claude/skills/x/SKILL.md")).unwrap(),
        SKILL
    );
    settle();
    assert_view(p.path(), v.root(), &[], true);

    let records = v.records();
    assert_well_formed(&records, p.path());
    let closed: Vec<_> = records
        .iter()
        .filter(|r| r["event"] == "fail-closed")
        .collect();
    assert!(!closed.is_empty(), "{records:?}");
    assert!(
        closed
            .iter()
            .all(|r| r["outcome"].as_str().unwrap().starts_with("fail-closed"))
    );
    assert!(
        closed
            .iter()
            .any(|r| r["outcome"].as_str().unwrap().contains("missing")),
        "{closed:?}"
    );
}

#[test]
fn invalid_lockfile_while_mounted_hides_everything_until_fixed() {
    invalid_lockfile_hides_everything(false);
}

#[test]
fn invalid_lockfile_fails_closed_under_warn_too() {
    invalid_lockfile_hides_everything(true);
}

// ---------------------------------------------------------------------------
// Symlinks outside bundles (crates/seal-gate/src/links.rs).

#[test]
fn symlinks_outside_bundles_cannot_go_around_the_gate() {
    if !fuse_available() {
        return;
    }
    let p = fixture(false, true);
    let real = p.canonical();
    let mp_dir = tempfile::Builder::new()
        .prefix("sealfs-view-")
        .tempdir()
        .unwrap();
    let mp = fs::canonicalize(mp_dir.path()).unwrap();
    let up = "../".repeat(mp.components().count() + 2);
    let real_rel = real.strip_prefix("/").unwrap().display().to_string();
    let hidden_links: Vec<(&str, String)> = vec![
        ("docs/abs-file", format!("{}/src/main.rs", real.display())),
        (
            "docs/abs-bundle",
            format!("{}/.claude/skills/x/SKILL.md", real.display()),
        ),
        ("docs/abs-root", real.display().to_string()),
        ("docs/escape", format!("{up}{real_rel}/CLAUDE.md")),
        (
            "docs/proc-root",
            format!("/proc/self/root{}/CLAUDE.md", real.display()),
        ),
        ("docs/proc-cwd", "/proc/self/cwd".to_string()),
        ("docs/dev-fd", "/dev/fd/0".to_string()),
    ];
    let shown_links: Vec<(&str, String)> = vec![
        (
            "docs/rel-bundle",
            "../.claude/skills/x/SKILL.md".to_string(),
        ),
        ("docs/rel-file", "../src/main.rs".to_string()),
        ("docs/env", "/usr/bin/env".to_string()),
        (
            "docs/view",
            format!("{}/.claude/skills/x/SKILL.md", mp.display()),
        ),
        ("docs/dangling", "nowhere".to_string()),
    ];
    for (l, t) in hidden_links.iter().chain(&shown_links) {
        p.symlink(t, l);
    }
    let v = Mounted::at(&p, &mp, &[]);
    let hidden: Vec<&str> = hidden_links.iter().map(|(l, _)| *l).collect();
    for h in &hidden {
        let r = fs::symlink_metadata(v.path(h));
        assert_eq!(errno_of(&r), Some(libc::ENOENT), "{h}: {r:?}");
        assert_eq!(errno_of(&fs::read(v.path(h))), Some(libc::ENOENT), "{h}");
    }
    assert_view(p.path(), &mp, &hidden, true);
    for (l, t) in &shown_links {
        assert_eq!(fs::read_link(v.path(l)).unwrap(), Path::new(t), "{l}");
    }
    // A relative link into a sealed root follows the gate.
    assert_eq!(fs::read(v.path("docs/rel-bundle")).unwrap(), SKILL);
    assert_eq!(fs::read(v.path("docs/view")).unwrap(), SKILL);
    assert_eq!(
        fs::read(v.path("docs/rel-file")).unwrap(),
        b"fn main() {}\n"
    );
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&fs::metadata(v.path("docs/env")).unwrap()),
        std::os::unix::fs::MetadataExt::ino(&fs::metadata("/usr/bin/env").unwrap())
    );
    p.write(".claude/skills/x/SKILL.md", b"tampered\n");
    assert!(
        fs::symlink_metadata(v.path("docs/rel-bundle")).is_ok(),
        "the link itself stays"
    );
    for l in ["docs/rel-bundle", "docs/view"] {
        // Where the kernel opens files itself, until the listener made it
        // forget them it serves the approved bytes it kept, and only those.
        let refused = || {
            let r = fs::read(v.path(l));
            match r {
                Ok(ref bytes) if bytes == SKILL => false,
                _ => {
                    assert_eq!(
                        errno_of(&r),
                        Some(libc::ENOENT),
                        "{l} followed into a hidden bundle: {r:?}"
                    );
                    true
                }
            }
        };
        assert!(
            v.after_change(refused),
            "{l} still reads the bundle after its change"
        );
    }
    p.write(".claude/skills/x/SKILL.md", SKILL);
    assert!(
        v.after_change(|| fs::read(v.path("docs/rel-bundle")).ok().as_deref() == Some(SKILL)),
        "the bundle made whole does not read through the link"
    );
    drop(v);
}

/// The decision `seal why` prints for `rel` ("visible" or "hidden").
fn why_says(p: &Project, rel: &str) -> String {
    let (code, _, err) = p.seal(&["why", rel], "");
    assert_eq!(code, 0, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("decision:"))
        .unwrap_or_else(|| panic!("no decision for {rel}: {err}"));
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn why_and_the_dry_run_agree_with_the_view() {
    if !fuse_available() {
        return;
    }
    for warn in [false, true] {
        let p = fixture(warn, true);
        // A second pattern whose only root is an empty directory (unrecorded:
        // not a bundle), an empty agent directory, tampering, new artifacts.
        p.mkdir(".claude/skills/empty/sub")
            .mkdir(".claude/agents/nested")
            .write(".claude/skills/x/SKILL.md", "TAMPERED")
            .write(".claude/commands/new.md", "new command")
            .write("docs/AGENTS.md", "nested instructions")
            .mkdir(".claude/skills/fresh")
            .write(".claude/skills/fresh/SKILL.md", "unpinned");
        let v = View::new(&p);
        let paths = [
            ".claude/skills/empty",
            ".claude/skills/empty/sub",
            ".claude/agents",
            ".claude/skills/x",
            ".claude/skills/x/SKILL.md",
            ".claude/skills/fresh",
            ".claude/commands/new.md",
            "docs/AGENTS.md",
            "CLAUDE.md",
            "seal.json",
            "src/main.rs",
            ".claude",
        ];
        for rel in paths {
            let in_view = fs::symlink_metadata(v.path(rel)).is_ok();
            let want = if in_view { "visible" } else { "hidden" };
            assert_eq!(why_says(&p, rel), want, "warn={warn}: seal why {rel}");
        }
        let (_, out, err) = p.seal(&["run", "--dry-run", "--json"], "");
        let doc: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        let entries = doc["entries"].as_array().unwrap();
        assert!(!entries.is_empty());
        for e in entries {
            let rel = e["path"].as_str().unwrap().trim_start_matches("./");
            let in_view = fs::symlink_metadata(v.path(rel)).is_ok();
            assert_eq!(
                e["visible"].as_bool().unwrap(),
                in_view,
                "warn={warn}: dry run on {rel}: {e}"
            );
        }
    }
}

/// Bytes of `len` bytes, all `b`.
fn filled(b: u8, len: usize) -> Vec<u8> {
    vec![b; len]
}

/// Rewrites `path` in place with `bytes` (the same length) and puts its
/// modification time back: a change the kernel's own attribute checks
/// (`FUSE_AUTO_INVAL_DATA` compares mtime and size) cannot see.
fn rewrite_keeping_mtime(path: &Path, bytes: &[u8]) {
    let mtime = fs::metadata(path).unwrap().modified().unwrap();
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, bytes, 0).unwrap();
    f.set_modified(mtime).unwrap();
}

#[test]
fn pages_the_kernel_keeps_are_dropped_at_a_change_and_never_outlive_an_approval() {
    // The read-only view lets the kernel open files itself and keep their
    // pages. A change on the disk must drop an ordinary file's pages at
    // once (the directory feed), a bundle file re-pinned to other bytes
    // must be read afresh (a new inode), and a tampered bundle file must
    // not open, cached pages or not.
    if !fuse_available() {
        return;
    }
    let p = fixture(false, false);
    p.write("src/page.txt", filled(b'a', 8192));
    p.write(".claude/skills/x/data.txt", filled(b'A', 8192));
    p.pin(&[]);
    let v = Mounted::new(&p, &["--kernel-opens"]);
    for _ in 0..2 {
        // Listed first: the kernel learns the bundle's root from the
        // listing, then keeps the file's entry (the feed proves the bundle
        // current), which the tamper below must make it forget.
        assert_eq!(listed_names(&v.path(".claude/skills")), ["x"]);
        assert_eq!(
            fs::read(v.path("src/page.txt")).unwrap(),
            filled(b'a', 8192)
        );
        assert_eq!(
            fs::read(v.path(".claude/skills/x/data.txt")).unwrap(),
            filled(b'A', 8192)
        );
    }
    rewrite_keeping_mtime(&p.path().join("src/page.txt"), &filled(b'b', 8192));
    assert!(
        within_100ms(|| fs::read(v.path("src/page.txt")).unwrap() == filled(b'b', 8192)),
        "an ordinary file changed on the disk still reads as the kernel kept it"
    );
    let bundle_file = p.path().join(".claude/skills/x/data.txt");
    rewrite_keeping_mtime(&bundle_file, &filled(b'B', 8192));
    p.pin(&[]);
    assert!(
        within_100ms(
            || fs::read(v.path(".claude/skills/x/data.txt")).is_ok_and(|b| b == filled(b'B', 8192))
        ),
        "a bundle file pinned anew still reads as the bytes approved before"
    );
    rewrite_keeping_mtime(&bundle_file, &filled(b'C', 8192));
    assert!(
        within_100ms(
            || errno_of(&fs::File::open(v.path(".claude/skills/x/data.txt"))) == Some(libc::ENOENT)
        ),
        "a tampered bundle file still opens"
    );
    // Opened before the change: only the approved bytes, or nothing.
    rewrite_keeping_mtime(&bundle_file, &filled(b'B', 8192));
    let mut opened = None;
    assert!(within_100ms(|| {
        opened = fs::File::open(v.path(".claude/skills/x/data.txt")).ok();
        opened.is_some()
    }));
    rewrite_keeping_mtime(&bundle_file, &filled(b'C', 8192));
    let mut got = Vec::new();
    match std::io::Read::read_to_end(opened.as_mut().unwrap(), &mut got) {
        Ok(_) => assert_eq!(got, filled(b'B', 8192), "read after the tamper"),
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{e}"),
    }
}

//! Progress during a large file, at the core: the counters a progress line
//! polls move chunk by chunk while one file is hashed (the file count stands
//! still until it ends), and a hashed root knows how many bytes it holds (the
//! size `seal pin` and `seal init` warn about). Observed from inside the work
//! by a keeper that reads the counters at every chunk, so nothing is timed.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::AsFd;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

use seal_core::discovery::Listings;
use seal_core::effort::Effort;
use seal_core::effort::HashProgress;
use seal_core::fs::{EntryKind, RawPath, open_project};
use seal_core::hash::{KeepNothing, Keeper, observe_root, observe_root_with};
use seal_core::paths::FilePath;

const CHUNK: u64 = 256 * 1024;

/// Records (files_done, bytes_done) each time a chunk of a file is handed
/// over, which happens before the chunk is counted.
struct Watch<'p> {
    progress: &'p HashProgress,
    seen: Mutex<Vec<(u64, u64)>>,
}

impl Keeper for Watch<'_> {
    type Writer = ();
    type Kept = ();
    fn wants(&self, _: &FilePath) -> bool {
        true
    }
    fn begin(&self, _: &FilePath, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn append(&self, _: &mut (), _: &[u8]) -> io::Result<()> {
        let p = self.progress;
        self.seen.lock().unwrap().push((
            p.files_done.load(Ordering::Relaxed),
            p.bytes_done.load(Ordering::Relaxed),
        ));
        Ok(())
    }
    fn finish(&self, _: ()) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn bytes_move_while_one_large_file_is_hashed() {
    let t = tempfile::tempdir().unwrap();
    let size = 10 * CHUNK + 7;
    let file = fs::File::create(t.path().join("big.bin")).unwrap();
    file.set_len(size).unwrap();
    let fd = open_project(t.path()).unwrap();
    let mut l = Listings::new(fd.as_fd());
    let progress = HashProgress::default();
    let watch = Watch {
        progress: &progress,
        seen: Mutex::new(Vec::new()),
    };
    let effort = Effort {
        progress: Some(&progress),
        ..Effort::full()
    };
    let raw = RawPath(vec![OsString::from("big.bin")]);
    let o = observe_root_with(&mut l, &raw, EntryKind::File, &watch, effort, None).unwrap();
    let seen = watch.seen.into_inner().unwrap();
    // Eleven chunks; before each, the bytes of the ones before it were
    // already counted, and the file was not.
    let expected: Vec<(u64, u64)> = (0..11).map(|i| (0, i * CHUNK)).collect();
    assert_eq!(seen, expected);
    assert_eq!(progress.files_done.load(Ordering::Relaxed), 1);
    assert_eq!(progress.bytes_done.load(Ordering::Relaxed), size);
    assert_eq!(o.bytes, size);
}

#[test]
fn a_hashed_root_knows_its_size() {
    let t = tempfile::tempdir().unwrap();
    let b = t.path().join("b");
    fs::create_dir_all(b.join("sub/.git")).unwrap();
    fs::write(b.join("a"), vec![1u8; 1000]).unwrap();
    fs::write(b.join("sub/c"), vec![2u8; 3 * CHUNK as usize + 1]).unwrap();
    fs::write(b.join("empty"), b"").unwrap();
    // Excluded from hashing, so not counted.
    fs::write(b.join("sub/.git/HEAD"), vec![3u8; 5000]).unwrap();
    let fd = open_project(t.path()).unwrap();
    let mut l = Listings::new(fd.as_fd());
    let raw = RawPath(vec![OsString::from("b")]);
    let o = observe_root(&mut l, &raw, EntryKind::Dir, &KeepNothing, None).unwrap();
    assert_eq!(o.files.len(), 3);
    assert_eq!(o.bytes, 1000 + 3 * CHUNK + 1);
}

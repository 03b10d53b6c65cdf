//! An open handle describes the bytes it serves, through a real FUSE mount:
//! after the file behind it is replaced by a larger one, or re-pinned,
//! `fstat` on the handle still gives the size of the verified bytes it
//! reads, and a mapping of that size reads them without a signal.

mod support;

use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use support::*;

const APPROVED: &[u8] = b"approved 12!";
const FILE: &str = ".claude/skills/x/SKILL.md";

/// Maps `len` bytes of `file` and copies them out.
fn mapped(file: &fs::File, len: usize) -> Vec<u8> {
    // SAFETY: the mapping is read-only, `len` bytes from offset 0 of a file
    // whose handle stays open for the call, copied out before munmap.
    unsafe {
        let map = nix::sys::mman::mmap(
            None,
            std::num::NonZeroUsize::new(len).unwrap(),
            nix::sys::mman::ProtFlags::PROT_READ,
            nix::sys::mman::MapFlags::MAP_SHARED,
            file,
            0,
        )
        .unwrap();
        let bytes = std::slice::from_raw_parts(map.as_ptr() as *const u8, len).to_vec();
        nix::sys::mman::munmap(map, len).unwrap();
        bytes
    }
}

#[test]
fn fstat_and_mmap_of_a_handle_match_the_bytes_it_serves() {
    if !fuse_available() {
        return;
    }
    for warn in [false, true] {
        let p = Project::new();
        p.write(FILE, APPROVED)
            .write("src/main.rs", "fn main() {}\n");
        p.init(if warn { &["--warn"] } else { &[] });
        let m = Mounted::new(&p, &[]);
        let mut handle = fs::File::open(m.path(FILE)).unwrap();
        let mut first = Vec::new();
        handle.read_to_end(&mut first).unwrap();
        assert_eq!(first, APPROVED);

        // Replaced on disk by a larger file (as an editor saves).
        let bigger = vec![b'E'; 10_000];
        fs::write(p.path().join("new.tmp"), &bigger).unwrap();
        fs::rename(p.path().join("new.tmp"), p.path().join(FILE)).unwrap();
        let by_path = fs::metadata(m.path(FILE));
        if warn {
            // Shown with a warning: the new file under a new inode (once the
            // kernel has forgotten the entry it remembered, at most 100 ms).
            drop(by_path);
            assert!(within_100ms(
                || fs::metadata(m.path(FILE)).is_ok_and(|md| md.len() == 10_000)
            ));
            let md = fs::metadata(m.path(FILE)).unwrap();
            assert_ne!(md.ino(), handle.metadata().unwrap().ino());
        } else {
            drop(by_path);
            assert!(
                within_100ms(|| fs::metadata(m.path(FILE)).is_err()),
                "a Mismatch bundle is hidden"
            );
        }
        for wait in [Duration::ZERO, Duration::from_millis(1200)] {
            // After the attribute timeout, fstat asks the daemon again.
            std::thread::sleep(wait);
            let len = handle.metadata().unwrap().len();
            assert_eq!(len, APPROVED.len() as u64, "warn={warn}, after {wait:?}");
            assert_eq!(mapped(&handle, len as usize), APPROVED);
        }

        // Re-pinned: the path shows the new bytes; the old handle keeps its own.
        p.pin(&[]);
        let md = fs::metadata(m.path(FILE)).unwrap();
        assert_eq!(md.len(), 10_000);
        assert_eq!(fs::read(m.path(FILE)).unwrap(), bigger);
        std::thread::sleep(Duration::from_millis(1200));
        let len = handle.metadata().unwrap().len();
        assert_eq!(len, APPROVED.len() as u64, "warn={warn}: after re-pin");
        assert_eq!(mapped(&handle, len as usize), APPROVED);
        let mut again = Vec::new();
        use std::io::Seek;
        handle.seek(std::io::SeekFrom::Start(0)).unwrap();
        handle.read_to_end(&mut again).unwrap();
        assert_eq!(again, APPROVED);
    }
}

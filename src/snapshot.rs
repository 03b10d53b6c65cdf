//! Immutable copies of verified bytes (sealed memfds).
//!
//! The mount's rule is that the bytes served are the bytes verified. While a
//! bundle is hashed, every file an open asked for is copied, chunk by chunk,
//! into a fresh memfd — the same chunks the hash saw. The memfd is then sealed
//! against any write, shrink or growth, so nothing (not even this process) can
//! change it afterwards, and a handle opened on it reads those bytes only:
//! through FUSE passthrough where the kernel allows it, through `read` in the
//! daemon otherwise. The memory is freed when the last handle closes.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::core::digest::Digest;
use crate::core::hash::Keeper;
use crate::core::paths::FilePath;

/// The largest read buffer [`Snapshot::of_file`] keeps per thread.
const READ_BUFFER_MAX: usize = 256 * 1024;

thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Verified bytes of one file, sealed against change.
#[derive(Debug)]
pub struct Snapshot {
    file: File,
    len: u64,
    digest: Option<Digest>,
}

impl Snapshot {
    /// Records the SHA-256 these bytes were hashed to.
    pub fn verified_as(mut self, digest: Option<Digest>) -> Snapshot {
        self.digest = digest;
        self
    }

    /// The SHA-256 of the bytes, when known: two snapshots with the same
    /// digest hold the same bytes.
    pub fn digest(&self) -> Option<Digest> {
        self.digest
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memfd, for registering as a passthrough backing file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Reads up to `size` bytes at `offset` (fewer at the end; none past it).
    pub fn read_at(&self, offset: u64, size: usize) -> io::Result<Vec<u8>> {
        if offset >= self.len {
            return Ok(Vec::new());
        }
        let want = size.min((self.len - offset) as usize);
        let mut buf = vec![0u8; want];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }

    /// Reads the regular file at `raw` below `project` (crossing no symlink)
    /// into a new snapshot labelled with the digest of exactly the bytes
    /// read.
    pub fn of_file(
        project: std::os::fd::BorrowedFd<'_>,
        raw: &crate::core::fs::RawPath,
    ) -> io::Result<Snapshot> {
        use sha2::Digest as _;
        let fd = crate::core::fs::open_file_beneath(project, &raw.to_os_string())?;
        let st = crate::core::fs::fstat_fd(fd.as_fd())?;
        if crate::core::fs::EntryKind::from_mode(st.st_mode) != crate::core::fs::EntryKind::File {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let file = File::from(fd);
        let mut w = SnapshotWriter::new()?;
        let mut hasher = sha2::Sha256::new();
        // The thread's read buffer, grown to the file (plus one byte to see
        // its end at once) up to 256 KiB: a small file costs no 256 KiB to
        // zero, and a big one no fresh mapping at every open (a buffer that
        // size gets one of its own, see `crate::memory::tune_heap`).
        let hint = usize::try_from(st.st_size).unwrap_or(usize::MAX);
        let want = hint.saturating_add(1).clamp(4096, READ_BUFFER_MAX);
        READ_BUFFER.with(|buf| {
            let mut buf = buf.borrow_mut();
            if buf.len() < want {
                buf.resize(want, 0);
            }
            let buf = &mut buf[..want];
            let mut offset = 0u64;
            loop {
                let n = crate::core::fs::read_fully_at(&file, offset, buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                w.append(&buf[..n])?;
                offset += n as u64;
            }
            Ok::<_, io::Error>(())
        })?;
        Ok(w.seal()?.verified_as(Some(Digest::from_hasher(hasher))))
    }

    /// Builds a snapshot directly from bytes (tests and small files).
    pub fn from_bytes(bytes: &[u8]) -> io::Result<Snapshot> {
        let mut w = SnapshotWriter::new()?;
        w.file.write_all(bytes)?;
        w.len = bytes.len() as u64;
        w.seal()
    }
}

/// A memfd being filled; becomes a [`Snapshot`] when sealed.
pub struct SnapshotWriter {
    file: File,
    len: u64,
}

impl SnapshotWriter {
    pub fn new() -> io::Result<SnapshotWriter> {
        let fd = memfd_create(
            c"seal-verified",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
        Ok(SnapshotWriter {
            file: File::from(fd),
            len: 0,
        })
    }

    pub fn append(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.file.write_all(chunk)?;
        self.len += chunk.len() as u64;
        Ok(())
    }

    /// Seals the memfd: no write, no shrink, no growth, and no seal removal.
    pub fn seal(self) -> io::Result<Snapshot> {
        let seals = SealFlag::F_SEAL_WRITE
            | SealFlag::F_SEAL_SHRINK
            | SealFlag::F_SEAL_GROW
            | SealFlag::F_SEAL_SEAL;
        fcntl(self.file.as_fd(), FcntlArg::F_ADD_SEALS(seals))
            .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
        Ok(Snapshot {
            file: self.file,
            len: self.len,
            digest: None,
        })
    }
}

/// Keeps the files whose paths are in `wanted` as snapshots while hashing.
pub struct SnapshotKeeper<'a> {
    pub wanted: &'a (dyn Fn(&FilePath) -> bool + Sync),
}

impl Keeper for SnapshotKeeper<'_> {
    type Writer = SnapshotWriter;
    type Kept = Snapshot;

    fn wants(&self, path: &FilePath) -> bool {
        (self.wanted)(path)
    }
    fn begin(&self, _path: &FilePath, _size_hint: u64) -> io::Result<SnapshotWriter> {
        SnapshotWriter::new()
    }
    fn append(&self, writer: &mut SnapshotWriter, chunk: &[u8]) -> io::Result<()> {
        writer.append(chunk)
    }
    fn finish(&self, writer: SnapshotWriter) -> io::Result<Snapshot> {
        writer.seal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_snapshot_cannot_change() {
        let s = Snapshot::from_bytes(b"approved").unwrap();
        assert_eq!(s.read_at(0, 100).unwrap(), b"approved");
        assert_eq!(s.read_at(3, 2).unwrap(), b"ro");
        assert!(s.read_at(8, 10).unwrap().is_empty());
        assert!(s.read_at(100, 10).unwrap().is_empty());
        // Writing through a new writable descriptor of the same memfd fails.
        let path = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(s.file())
        );
        let reopened = std::fs::OpenOptions::new().write(true).open(&path);
        match reopened {
            Ok(mut f) => assert!(
                f.write_all(b"X").is_err(),
                "write to a sealed memfd succeeded"
            ),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM)),
        }
        assert!(
            s.file().set_len(1).is_err(),
            "shrink of a sealed memfd succeeded"
        );
        assert_eq!(s.read_at(0, 100).unwrap(), b"approved");
    }
}

//! Immutable copies of verified bytes (sealed memfds, or immutable files of a
//! private huge-page tmpfs for big files).
//!
//! The mount's rule is that the bytes served are the bytes verified. While a
//! bundle is hashed, every file an open asked for is copied, chunk by chunk,
//! into a fresh in-memory file — the same chunks the hash saw — that nothing
//! (not even this process) can change afterwards (one big file read again on
//! its own is copied by the kernel and hashed from that file once it cannot
//! change: the digest is of exactly the bytes it holds), and a handle opened on it
//! reads those bytes only: through FUSE passthrough where the kernel allows
//! it, through `read` in the daemon otherwise. The memory is freed once the
//! last handle closes and the gate keeps the bytes no longer (two seconds
//! after their last use).
//!
//! Two stores, one guarantee:
//! - **A sealed memfd** (most files): sealed against any write, shrink or
//!   growth, and against removing the seals.
//! - **A huge-page tmpfs file** (files of 2 MiB or more, when the daemon may
//!   mount): a memfd is made of 4 KiB pages, and reading one costs about 1.6
//!   times reading the disk's page cache, which keeps big files in large
//!   folios. So big files go to a tmpfs the daemon mounts for itself with
//!   `huge=within_size` and never attaches anywhere (`fsmount` without
//!   `move_mount`: no path of any namespace reaches it, only the daemon's
//!   descriptor). A tmpfs file cannot be sealed, so it is made as immutable
//!   as a file can be: written through a descriptor that is closed before
//!   the snapshot exists, its name removed (it has no name and no writable
//!   descriptor left), and flagged immutable, so that not even a new open
//!   through `/proc` may write it. Where the tmpfs cannot be had, or its
//!   files cannot be flagged immutable (no `CAP_SYS_ADMIN` or no
//!   `CAP_LINUX_IMMUTABLE`: a daemon in a user namespace, an old kernel),
//!   big files go to sealed memfds too.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use rustix::fs::{AtFlags, Mode, OFlags};

use seal_core::digest::Digest;
use seal_core::hash::Keeper;
use seal_core::paths::FilePath;

/// Files at least this big are copied into their snapshot by the kernel
/// (`sendfile`) and then hashed from the snapshot itself: one copy of their
/// bytes instead of two (into a buffer, then into the snapshot). Their
/// digest is then that of exactly the bytes the snapshot holds.
const KERNEL_COPY_MIN: u64 = HUGE_STORE_MIN;

/// How much of a snapshot [`Snapshot::hash`] maps at a time (a multiple of
/// the huge page, so every window starts page-aligned).
const HASH_WINDOW: usize = 32 * 1024 * 1024;

/// The most `sendfile` moves in one call (it stops at 2 GiB anyway).
const KERNEL_COPY_CHUNK: usize = 64 * 1024 * 1024;

/// The largest read buffer [`Snapshot::of_file`] keeps per thread.
const READ_BUFFER_MAX: usize = 256 * 1024;

thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The smallest file kept on the huge-page store: one huge page (x86-64 and
/// arm64 with 4 KiB pages). A smaller file could not use a huge page, and
/// `huge=within_size` gives it small pages anyway.
const HUGE_STORE_MIN: u64 = 2 * 1024 * 1024;

/// Where a snapshot's bytes live (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Store {
    SealedMemfd,
    HugeTmpfs,
}

/// Verified bytes of one file, sealed against change.
#[derive(Debug)]
pub struct Snapshot {
    file: File,
    len: u64,
    digest: Option<Digest>,
    /// Which store holds the bytes (the tests check it).
    #[cfg_attr(not(test), expect(dead_code))]
    store: Store,
}

impl Snapshot {
    /// Records the SHA-256 these bytes were hashed to.
    pub(crate) fn verified_as(mut self, digest: Option<Digest>) -> Snapshot {
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

    /// The file holding the bytes (read-only), for registering as a
    /// passthrough backing file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Which store holds the bytes.
    #[cfg(test)]
    pub(crate) fn store(&self) -> Store {
        self.store
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
    pub(crate) fn of_file(
        project: std::os::fd::BorrowedFd<'_>,
        raw: &seal_core::fs::RawPath,
    ) -> io::Result<Snapshot> {
        use sha2::Digest as _;
        let fd = seal_core::fs::open_file_beneath(project, &raw.to_os_string())?;
        let st = seal_core::fs::fstat_fd(fd.as_fd())?;
        if seal_core::fs::EntryKind::from_mode(st.st_mode) != seal_core::fs::EntryKind::File {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let file = File::from(fd);
        let size = u64::try_from(st.st_size).unwrap_or(0);
        let mut w = SnapshotWriter::for_size(size)?;
        if size >= KERNEL_COPY_MIN {
            w.append_file(&file)?;
            let snapshot = w.seal()?;
            let digest = snapshot.hash()?;
            return Ok(snapshot.verified_as(Some(digest)));
        }
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
                let n = seal_core::fs::read_fully_at(&file, offset, buf)?;
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

    /// The digest of the snapshot's bytes, hashed through read-only mappings
    /// of them (no copy), one window at a time: the daemon's resident size
    /// grows by one window, not by the file.
    fn hash(&self) -> io::Result<Digest> {
        use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};
        use sha2::Digest as _;
        let errno = |e: nix::errno::Errno| io::Error::from_raw_os_error(e as i32);
        let mut hasher = sha2::Sha256::new();
        let mut offset = 0u64;
        while offset < self.len {
            let window = (self.len - offset).min(HASH_WINDOW as u64) as usize;
            let Some(length) = std::num::NonZeroUsize::new(window) else {
                break;
            };
            let at_offset =
                i64::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
            // SAFETY: a read-only shared mapping of part of the snapshot's
            // file, which nothing can change any more (sealed against writes
            // and shrinking, or immutable with no writable descriptor left):
            // its `window` bytes from `offset` (a multiple of the window,
            // so page-aligned, and below the length) stay mapped, readable
            // and unchanged until the unmap below, so no access faults and
            // the slice never changes.
            let at = unsafe {
                mmap(
                    None,
                    length,
                    ProtFlags::PROT_READ,
                    MapFlags::MAP_SHARED | MapFlags::MAP_POPULATE,
                    &self.file,
                    at_offset,
                )
            }
            .map_err(errno)?;
            // SAFETY: `at` maps `window` readable bytes (above) until the
            // unmap.
            let bytes = unsafe { std::slice::from_raw_parts(at.as_ptr().cast::<u8>(), window) };
            hasher.update(bytes);
            // SAFETY: unmaps exactly the mapping made above; `bytes` is not
            // used after it.
            unsafe { munmap(at, window) }.map_err(errno)?;
            offset += window as u64;
        }
        Ok(Digest::from_hasher(hasher))
    }

    /// Builds a snapshot directly from bytes.
    #[cfg(test)]
    pub(crate) fn from_bytes(bytes: &[u8]) -> io::Result<Snapshot> {
        let mut w = SnapshotWriter::for_size(bytes.len() as u64)?;
        w.append(bytes)?;
        w.seal()
    }
}

/// The daemon's private huge-page tmpfs: the root of a mount attached
/// nowhere, made at the first big snapshot; `None` when it cannot be made.
fn huge_store() -> Option<&'static OwnedFd> {
    static STORE: OnceLock<Option<OwnedFd>> = OnceLock::new();
    STORE
        .get_or_init(|| match mount_huge_store() {
            Ok(root) => Some(root),
            Err(e) => {
                tracing::debug!("no huge-page store for big snapshots ({e}); sealed memfds only");
                None
            }
        })
        .as_ref()
}

fn mount_huge_store() -> io::Result<OwnedFd> {
    use rustix::mount::{
        FsMountFlags, FsOpenFlags, MountAttrFlags, fsconfig_create, fsconfig_set_string, fsmount,
        fsopen,
    };
    let fs = fsopen("tmpfs", FsOpenFlags::FSOPEN_CLOEXEC)?;
    // `within_size`: a huge page only where the file reaches past its end,
    // so a file's tail costs small pages, not a whole huge one. No size cap
    // beyond memory: a memfd has none either, and a snapshot is never
    // bigger than a file being verified.
    fsconfig_set_string(&fs, "huge", "within_size")?;
    fsconfig_set_string(&fs, "size", "100%")?;
    fsconfig_set_string(&fs, "mode", "0700")?;
    fsconfig_create(&fs)?;
    let root = fsmount(
        &fs,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NOEXEC
            | MountAttrFlags::MOUNT_ATTR_NOSUID
            | MountAttrFlags::MOUNT_ATTR_NODEV,
    )?;
    // A snapshot that cannot be flagged immutable could be opened again for
    // writing by whoever may act as the daemon's user: the store is used
    // only where the flag can be set (`CAP_LINUX_IMMUTABLE`, which a daemon
    // in a user namespace lacks).
    let probe = rustix::fs::openat(
        &root,
        c"probe",
        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::RUSR,
    )?;
    rustix::fs::unlinkat(&root, c"probe", AtFlags::empty())?;
    rustix::fs::ioctl_setflags(&probe, rustix::fs::IFlags::IMMUTABLE)?;
    Ok(root)
}

/// A file of the huge-page store while it is written: named (so that it can
/// be opened again read-only) until it is sealed or dropped.
struct HugeFile {
    root: &'static OwnedFd,
    name: CString,
}

impl HugeFile {
    /// A new file of `size_hint` bytes (its size set first, so that
    /// `huge=within_size` gives its pages huge ones as they are written).
    fn create(root: &'static OwnedFd, size_hint: u64) -> io::Result<(HugeFile, File)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = CString::new(format!(
            "seal-verified-{}",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
        .expect("no NUL in a number");
        let fd = rustix::fs::openat(
            root,
            name.as_c_str(),
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::RUSR,
        )?;
        let named = HugeFile { root, name };
        let file = File::from(fd);
        file.set_len(size_hint)?;
        Ok((named, file))
    }

    /// Opens the file again read-only and removes its name.
    fn reopen_read_only(self) -> io::Result<File> {
        let fd = rustix::fs::openat(
            self.root,
            self.name.as_c_str(),
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
        // `self` drops here: the name goes.
    }
}

impl Drop for HugeFile {
    fn drop(&mut self) {
        let _ = rustix::fs::unlinkat(self.root, self.name.as_c_str(), AtFlags::empty());
    }
}

/// An in-memory file being filled; becomes a [`Snapshot`] when sealed.
pub(crate) struct SnapshotWriter {
    file: File,
    len: u64,
    /// The store's name of the file, for a file of the huge-page store.
    huge: Option<HugeFile>,
}

impl SnapshotWriter {
    /// A writer for about `size_hint` bytes (the file's size when it was
    /// looked at; the bytes kept may differ if it changes meanwhile).
    pub(crate) fn for_size(size_hint: u64) -> io::Result<SnapshotWriter> {
        if size_hint >= HUGE_STORE_MIN
            && let Some(root) = huge_store()
        {
            match HugeFile::create(root, size_hint) {
                Ok((huge, file)) => {
                    return Ok(SnapshotWriter {
                        file,
                        len: 0,
                        huge: Some(huge),
                    });
                }
                Err(e) => tracing::debug!("huge-page store refused a file ({e}); using a memfd"),
            }
        }
        let fd = memfd_create(
            c"seal-verified",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
        Ok(SnapshotWriter {
            file: File::from(fd),
            len: 0,
            huge: None,
        })
    }

    /// Appends what `file` holds, copied by the kernel (`sendfile`), up to
    /// its end as it is while copied.
    fn append_file(&mut self, file: &File) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        // `sendfile` writes at the descriptor's position (`append` writes at
        // offsets and never moves it).
        (&self.file).seek(SeekFrom::Start(self.len))?;
        let mut from = 0u64;
        loop {
            let n = rustix::fs::sendfile(&self.file, file, Some(&mut from), KERNEL_COPY_CHUNK)?;
            if n == 0 {
                return Ok(());
            }
            self.len += n as u64;
        }
    }

    pub(crate) fn append(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.file.write_all_at(chunk, self.len)?;
        self.len += chunk.len() as u64;
        Ok(())
    }

    /// Makes the bytes unchangeable. A memfd is sealed: no write, no shrink,
    /// no growth, and no seal removal. A file of the huge-page store is cut
    /// to the bytes written, opened again read-only, its name and its
    /// writable descriptor dropped, and flagged immutable where the daemon
    /// may.
    pub(crate) fn seal(self) -> io::Result<Snapshot> {
        let SnapshotWriter { file, len, huge } = self;
        let (file, store) = match huge {
            None => {
                let seals = SealFlag::F_SEAL_WRITE
                    | SealFlag::F_SEAL_SHRINK
                    | SealFlag::F_SEAL_GROW
                    | SealFlag::F_SEAL_SEAL;
                fcntl(file.as_fd(), FcntlArg::F_ADD_SEALS(seals))
                    .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
                (file, Store::SealedMemfd)
            }
            Some(huge) => {
                file.set_len(len)?;
                let read_only = huge.reopen_read_only()?;
                drop(file);
                // The store was only taken into use once this worked
                // (`mount_huge_store`); should it fail now, no snapshot.
                rustix::fs::ioctl_setflags(&read_only, rustix::fs::IFlags::IMMUTABLE)?;
                (read_only, Store::HugeTmpfs)
            }
        };
        Ok(Snapshot {
            file,
            len,
            digest: None,
            store,
        })
    }
}

/// Keeps the files whose paths are in `wanted` as snapshots while hashing.
pub(crate) struct SnapshotKeeper<'a> {
    pub wanted: &'a (dyn Fn(&FilePath) -> bool + Sync),
}

impl Keeper for SnapshotKeeper<'_> {
    type Writer = SnapshotWriter;
    type Kept = Snapshot;

    fn wants(&self, path: &FilePath) -> bool {
        (self.wanted)(path)
    }
    fn begin(&self, _path: &FilePath, size_hint: u64) -> io::Result<SnapshotWriter> {
        SnapshotWriter::for_size(size_hint)
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
    use std::io::Write;

    /// Whether the huge-page store must be there: as root (CI runs as
    /// root), the daemon can always mount its own tmpfs.
    fn huge_store_expected() -> bool {
        let root = nix::unistd::geteuid().is_root();
        if !root {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("the huge-page store test needs root; CI must run it");
            }
            eprintln!("SKIPPED: the huge-page store needs CAP_SYS_ADMIN");
        }
        root
    }

    /// A write through any new descriptor of `s`'s file fails, and so does
    /// a resize; the bytes stay `expected`.
    fn assert_unchangeable(s: &Snapshot, expected: &[u8]) {
        let path = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(s.file())
        );
        match std::fs::OpenOptions::new().write(true).open(&path) {
            Ok(mut f) => assert!(
                f.write_all(b"X").is_err() && f.set_len(1).is_err(),
                "a write to a snapshot through a new descriptor succeeded"
            ),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM)),
        }
        assert!(s.file().set_len(1).is_err(), "a snapshot was resized");
        assert!(
            s.file().write_all_at(b"X", 0).is_err(),
            "a snapshot's own descriptor wrote"
        );
        assert_eq!(s.read_at(0, expected.len() + 10).unwrap(), expected);
    }

    #[test]
    fn a_big_snapshot_lives_on_huge_pages_and_cannot_change() {
        if !huge_store_expected() {
            return;
        }
        // 3 MiB and a bit: a huge page and a tail of small ones.
        let bytes: Vec<u8> = (0..3 * 1024 * 1024 + 4321u32)
            .map(|i| (i % 251) as u8)
            .collect();
        let s = Snapshot::from_bytes(&bytes).unwrap();
        assert_eq!(s.store(), Store::HugeTmpfs);
        assert_eq!(s.len(), bytes.len() as u64);
        assert_eq!(s.file().metadata().unwrap().len(), bytes.len() as u64);
        // No name left in the store: nothing but its descriptor reaches it.
        let root = huge_store().expect("the store was made");
        let names: Vec<_> = rustix::fs::Dir::read_from(root)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_bytes() != b"." && e.file_name().to_bytes() != b"..")
            .map(|e| e.file_name().to_owned())
            .collect();
        assert!(names.is_empty(), "names left in the store: {names:?}");
        assert_unchangeable(&s, &bytes);
    }

    #[test]
    fn a_file_that_shrank_while_read_keeps_only_the_bytes_read() {
        if !huge_store_expected() {
            return;
        }
        // The size hint said 8 MiB; only 2.5 MiB came: the snapshot is the
        // bytes that came, not a tail of zeroes.
        let mut w = SnapshotWriter::for_size(8 * 1024 * 1024).unwrap();
        let chunk = vec![7u8; 512 * 1024];
        for _ in 0..5 {
            w.append(&chunk).unwrap();
        }
        let s = w.seal().unwrap();
        assert_eq!(s.store(), Store::HugeTmpfs);
        assert_eq!(s.len(), 5 * 512 * 1024);
        assert_eq!(s.file().metadata().unwrap().len(), 5 * 512 * 1024);
        assert_unchangeable(&s, &vec![7u8; 5 * 512 * 1024]);
    }

    #[test]
    fn a_file_is_labelled_with_the_digest_of_exactly_the_bytes_its_snapshot_holds() {
        // Below the kernel-copy size (read and hashed on the way) and above
        // it (copied by the kernel, hashed from the snapshot): the same
        // bytes, the same digest as hashing the file directly.
        let dir = tempfile::tempdir().unwrap();
        let project = seal_core::fs::open_project(dir.path()).unwrap();
        for size in [
            0usize,
            4096,
            KERNEL_COPY_MIN as usize - 1,
            5 * 1024 * 1024 + 17,
            // Over two windows of the mapping that hashes it.
            2 * HASH_WINDOW + 4096 + 3,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
            std::fs::write(dir.path().join("f.bin"), &bytes).unwrap();
            let raw = seal_core::fs::RawPath(vec!["f.bin".into()]);
            let s = Snapshot::of_file(project.as_fd(), &raw).unwrap();
            assert_eq!(s.len(), size as u64, "size {size}");
            assert_eq!(s.digest(), Some(Digest::of(&bytes)), "size {size}");
            assert!(
                s.read_at(0, size).unwrap() == bytes,
                "size {size}: other bytes"
            );
        }
    }

    #[test]
    fn a_dropped_writer_leaves_no_name_behind() {
        if !huge_store_expected() {
            return;
        }
        let w = SnapshotWriter::for_size(4 * 1024 * 1024).unwrap();
        let name = w
            .huge
            .as_ref()
            .expect("a big writer uses the store")
            .name
            .clone();
        let root = huge_store().unwrap();
        assert!(rustix::fs::statat(root, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok());
        drop(w);
        assert!(rustix::fs::statat(root, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).is_err());
    }

    #[test]
    fn a_small_snapshot_is_a_sealed_memfd() {
        let s = Snapshot::from_bytes(&[1u8; 100_000]).unwrap();
        assert_eq!(s.store(), Store::SealedMemfd);
        assert_unchangeable(&s, &[1u8; 100_000]);
    }

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

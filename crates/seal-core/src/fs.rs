//! Reading the project tree without following links.
//!
//! Every access below the project root goes through a directory file
//! descriptor: directories are opened with `O_NOFOLLOW|O_DIRECTORY`, files with
//! `openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)` and `O_NOFOLLOW|O_NONBLOCK` so a
//! symlink is never dereferenced and a FIFO never blocks. Names are handled as
//! raw bytes ([`RawPath`]) until they are turned into NFC strings for the
//! lockfile; that keeps NFD-named directories and non-UTF-8 names reachable.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use nix::fcntl::{OFlag, OpenHow, ResolveFlag, open, openat, openat2};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

/// What a directory entry is, from `d_type` or `lstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}

impl EntryKind {
    pub fn from_mode(mode: u32) -> EntryKind {
        match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
            SFlag::S_IFDIR => EntryKind::Dir,
            SFlag::S_IFREG => EntryKind::File,
            SFlag::S_IFLNK => EntryKind::Symlink,
            SFlag::S_IFIFO => EntryKind::Fifo,
            SFlag::S_IFSOCK => EntryKind::Socket,
            SFlag::S_IFCHR => EntryKind::CharDevice,
            _ => EntryKind::BlockDevice,
        }
    }

    /// How the kind is named in messages ("a symlink").
    pub fn describe(self) -> &'static str {
        match self {
            EntryKind::Dir => "a directory",
            EntryKind::File => "a regular file",
            EntryKind::Symlink => "a symlink",
            EntryKind::Fifo => "a FIFO",
            EntryKind::Socket => "a socket",
            EntryKind::CharDevice => "a character device",
            EntryKind::BlockDevice => "a block device",
        }
    }
}

/// One entry of a directory listing, with its name exactly as on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    pub kind: EntryKind,
    pub ino: u64,
}

/// A project-relative path as raw on-disk names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RawPath(pub Vec<OsString>);

impl RawPath {
    pub fn join(&self, name: &OsStr) -> RawPath {
        let mut v = self.0.clone();
        v.push(name.to_os_string());
        RawPath(v)
    }

    /// The path as bytes joined by `/` (`.` for the project root itself).
    pub fn to_os_string(&self) -> OsString {
        if self.0.is_empty() {
            return OsString::from(".");
        }
        let mut bytes = Vec::new();
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(name.as_bytes());
        }
        OsString::from_vec(bytes)
    }

    /// Printable form for messages.
    pub(crate) fn display(&self) -> String {
        crate::escape::escaped_os(&self.to_os_string())
    }
}

/// Opens the project root (the user named it, so a symlinked path is fine).
pub fn open_project(path: &Path) -> io::Result<OwnedFd> {
    open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// Opens child directory `name` of `parent`, refusing symlinks.
pub fn open_dir_at(parent: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    openat(
        parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// Opens the directory at `path` below `root` without crossing any symlink.
pub fn open_dir_beneath(root: BorrowedFd<'_>, path: &RawPath) -> io::Result<OwnedFd> {
    open_beneath(
        root,
        path.to_os_string().as_os_str(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
    )
}

/// An `O_PATH` handle on the directory at `path` below `root` (for `*at`
/// calls; cheaper than opening it for reading), crossing no symlink.
pub fn open_dir_path_beneath(root: BorrowedFd<'_>, path: &RawPath) -> io::Result<OwnedFd> {
    open_beneath(
        root,
        path.to_os_string().as_os_str(),
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
    )
}

/// An `O_PATH` handle on whatever is at `path` below `root` (a symlink
/// itself, not its target), crossing no symlink on the way: the writable
/// view names the target of a change by it.
pub fn open_path_beneath(root: BorrowedFd<'_>, path: &RawPath) -> io::Result<OwnedFd> {
    open_beneath(
        root,
        path.to_os_string().as_os_str(),
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
    )
}

/// Opens the file at `path` below `root` for reading: no symlink anywhere on
/// the path, no blocking on a FIFO, no controlling terminal.
pub fn open_file_beneath(root: BorrowedFd<'_>, path: &OsStr) -> io::Result<OwnedFd> {
    open_beneath(
        root,
        path,
        OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY
            | OFlag::O_CLOEXEC,
    )
}

/// The longest path handed to one `openat2`: the kernel refuses paths of
/// `PATH_MAX` (4096) bytes or more, and a project's own paths may be that
/// long relative to where a program stands, so longer ones are resolved a
/// piece at a time.
const PATH_PIECE: usize = 3072;

/// `openat2(root, path, flags)` below `root`, crossing no symlink. A path
/// longer than [`PATH_PIECE`] is walked in pieces cut at a `/`, each opened
/// beneath the last (so the whole stays beneath `root`); a single name
/// longer than `NAME_MAX` still gets the kernel's `ENAMETOOLONG`.
fn open_beneath(root: BorrowedFd<'_>, path: &OsStr, flags: OFlag) -> io::Result<OwnedFd> {
    let resolve = ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS;
    let bytes = path.as_bytes();
    let cut = (bytes.len() > PATH_PIECE)
        .then(|| bytes[..PATH_PIECE].iter().rposition(|b| *b == b'/'))
        .flatten()
        .filter(|cut| *cut > 0);
    let Some(cut) = cut else {
        let how = OpenHow::new().flags(flags).resolve(resolve);
        return openat2(root, path, how).map_err(io::Error::from);
    };
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
        .resolve(resolve);
    let dir = openat2(root, OsStr::from_bytes(&bytes[..cut]), how)?;
    open_beneath(dir.as_fd(), OsStr::from_bytes(&bytes[cut + 1..]), flags)
}

/// `lstat` of `name` in `dir`.
pub fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<FileStat> {
    fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).map_err(io::Error::from)
}

pub fn fstat_fd(fd: BorrowedFd<'_>) -> io::Result<FileStat> {
    fstat(fd).map_err(io::Error::from)
}

/// Lists `dir` (without `.` and `..`), resolving unknown `d_type`s by `lstat`.
/// The listing reopens the directory so the caller's descriptor keeps its own
/// offset.
pub fn list_dir(dir: BorrowedFd<'_>) -> io::Result<Vec<DirEntry>> {
    let fresh = openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    list_fresh_dir(fresh.as_fd())
}

/// Lists a directory through a descriptor nobody else reads from (its offset
/// is used): `getdents64` straight into a buffer, nothing else. The buffer
/// is what a FUSE view is asked for at once: 64 KiB holds about 400 entries
/// with their attributes, so a listing through a view (`mount/warm.rs`)
/// hands the kernel a directory of that size in one `READDIRPLUS`. (The
/// kernel uses `READDIRPLUS` only for a listing's first request.)
pub fn list_fresh_dir(fd: BorrowedFd<'_>) -> io::Result<Vec<DirEntry>> {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut raw = rustix::fs::RawDir::new(fd, buf.spare_capacity_mut());
    let mut out = Vec::new();
    while let Some(entry) = raw.next() {
        let entry = entry.map_err(io::Error::from)?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let name = OsString::from_vec(bytes.to_vec());
        let kind = match entry.file_type() {
            rustix::fs::FileType::RegularFile => EntryKind::File,
            rustix::fs::FileType::Directory => EntryKind::Dir,
            rustix::fs::FileType::Symlink => EntryKind::Symlink,
            rustix::fs::FileType::Fifo => EntryKind::Fifo,
            rustix::fs::FileType::Socket => EntryKind::Socket,
            rustix::fs::FileType::CharacterDevice => EntryKind::CharDevice,
            rustix::fs::FileType::BlockDevice => EntryKind::BlockDevice,
            rustix::fs::FileType::Unknown => EntryKind::from_mode(lstat_at(fd, &name)?.st_mode),
        };
        out.push(DirEntry {
            name,
            kind,
            ino: entry.ino(),
        });
    }
    Ok(out)
}

/// The UTF-8 NFC form of an on-disk name, or `None` when it is not UTF-8 (and
/// so cannot be written in a lockfile).
pub fn nfc_name(name: &OsStr) -> Option<String> {
    name.to_str().map(crate::paths::nfc)
}

/// Up to `len` bytes of `file` at `offset` (fewer only at its end), as
/// [`read_fully_at`] reads them.
pub fn read_chunk_at(file: &std::fs::File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let n = read_fully_at(file, offset, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Reads into `buf` at `offset` until it is full or the file ends (a short
/// positional read of a regular file is not its end); returns how many bytes
/// were read. The descriptor's own offset is untouched.
pub fn read_fully_at(file: &std::fs::File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads a whole file from offset 0 with positional reads, starting with
/// room for `size_hint` bytes and stopping once more than `limit` bytes were
/// read (the caller then refuses the file: it never reads much beyond).
pub(crate) fn read_to_end_at(
    file: &std::fs::File,
    size_hint: usize,
    limit: usize,
) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; size_hint.clamp(512, limit.saturating_add(1))];
    let mut len = 0;
    loop {
        let n = read_fully_at(file, len as u64, &mut bytes[len..])?;
        len += n;
        if len < bytes.len() || len > limit {
            break;
        }
        bytes.resize((bytes.len() * 2).min(limit.saturating_add(1)), 0);
    }
    bytes.truncate(len);
    Ok(bytes)
}

//! The FUSE protocol on the wire, for the transports the mount runs itself
//! (the io_uring rings of `ring.rs`): a request decoded from the bytes the
//! kernel hands over, a reply encoded as the kernel reads it. `fuser` mounts
//! and answers `INIT`; past that, the rings hand over the raw protocol,
//! which `fuser` keeps private. Layouts are those of `linux/fuse.h` (ABI
//! 7.38 and later), little-endian fields at their natural alignment.
//!
//! A request is a header, then the operation's fixed part, then the rest
//! (names, data). The classic device hands them over as one buffer; a ring
//! hands the fixed part and the rest apart. [`decode`] takes them apart, so
//! it serves both.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType};

use super::view::{SetAttr, SetTime};

/// Opcodes the view serves (`enum fuse_opcode`).
pub mod op {
    pub const LOOKUP: u32 = 1;
    pub const FORGET: u32 = 2;
    pub const GETATTR: u32 = 3;
    pub const SETATTR: u32 = 4;
    pub const READLINK: u32 = 5;
    pub const SYMLINK: u32 = 6;
    pub const MKNOD: u32 = 8;
    pub const MKDIR: u32 = 9;
    pub const UNLINK: u32 = 10;
    pub const RMDIR: u32 = 11;
    pub const RENAME: u32 = 12;
    pub const LINK: u32 = 13;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const WRITE: u32 = 16;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const SETXATTR: u32 = 21;
    pub const GETXATTR: u32 = 22;
    pub const LISTXATTR: u32 = 23;
    pub const REMOVEXATTR: u32 = 24;
    pub const OPENDIR: u32 = 27;
    pub const READDIR: u32 = 28;
    pub const RELEASEDIR: u32 = 29;
    pub const FSYNCDIR: u32 = 30;
    pub const ACCESS: u32 = 34;
    pub const CREATE: u32 = 35;
    pub const INTERRUPT: u32 = 36;
    pub const DESTROY: u32 = 38;
    pub const BATCH_FORGET: u32 = 42;
    pub const FALLOCATE: u32 = 43;
    pub const READDIRPLUS: u32 = 44;
    pub const RENAME2: u32 = 45;
}

/// `struct fuse_in_header`.
pub const IN_HEADER: usize = 40;
/// `struct fuse_out_header`.
pub const OUT_HEADER: usize = 16;

/// `fuse_setattr_in.valid` bits.
const FATTR_MODE: u32 = 1 << 0;
const FATTR_UID: u32 = 1 << 1;
const FATTR_GID: u32 = 1 << 2;
const FATTR_SIZE: u32 = 1 << 3;
const FATTR_ATIME: u32 = 1 << 4;
const FATTR_MTIME: u32 = 1 << 5;
const FATTR_FH: u32 = 1 << 6;
const FATTR_ATIME_NOW: u32 = 1 << 7;
const FATTR_MTIME_NOW: u32 = 1 << 8;
/// `fuse_getattr_in.getattr_flags`: `fh` is set.
const GETATTR_FH: u32 = 1 << 0;
/// `fuse_fsync_in.fsync_flags`: data only.
const FSYNC_FDATASYNC: u32 = 1 << 0;

/// The header of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InHeader {
    pub len: u32,
    pub opcode: u32,
    pub unique: u64,
    pub nodeid: u64,
    pub uid: u32,
    pub gid: u32,
    pub pid: u32,
    /// Extensions after the arguments, in units of 8 bytes (none are
    /// negotiated; a request carrying some is refused).
    pub total_extlen: u16,
}

/// A decoded request: names and data borrow the buffer they came in.
#[derive(Debug, PartialEq, Eq)]
pub enum Request<'a> {
    Lookup {
        name: &'a OsStr,
    },
    Forget {
        nlookup: u64,
    },
    BatchForget {
        forgets: Vec<(u64, u64)>,
    },
    Getattr {
        fh: Option<u64>,
    },
    Setattr {
        fh: Option<u64>,
        set: SetAttr,
    },
    Readlink,
    Symlink {
        name: &'a OsStr,
        target: &'a OsStr,
    },
    Mknod {
        name: &'a OsStr,
        mode: u32,
        rdev: u32,
    },
    Mkdir {
        name: &'a OsStr,
        mode: u32,
    },
    Unlink {
        name: &'a OsStr,
    },
    Rmdir {
        name: &'a OsStr,
    },
    Rename {
        name: &'a OsStr,
        newdir: u64,
        newname: &'a OsStr,
        flags: u32,
    },
    Link {
        oldnode: u64,
        name: &'a OsStr,
    },
    Open {
        flags: i32,
    },
    Read {
        fh: u64,
        offset: u64,
        size: u32,
    },
    Write {
        fh: u64,
        offset: u64,
        data: &'a [u8],
    },
    Statfs,
    Release {
        fh: u64,
    },
    Fsync {
        fh: u64,
        datasync: bool,
    },
    Setxattr {
        name: &'a OsStr,
        value: &'a [u8],
        flags: i32,
    },
    Getxattr {
        name: &'a OsStr,
        size: u32,
    },
    Listxattr {
        size: u32,
    },
    Removexattr {
        name: &'a OsStr,
    },
    Opendir,
    Readdir {
        fh: u64,
        offset: u64,
        size: u32,
    },
    Readdirplus {
        fh: u64,
        offset: u64,
        size: u32,
    },
    Releasedir {
        fh: u64,
    },
    Fsyncdir,
    Access {
        mask: u32,
    },
    Create {
        name: &'a OsStr,
        mode: u32,
        flags: i32,
    },
    Interrupt {
        unique: u64,
    },
    Fallocate {
        fh: u64,
        offset: u64,
        length: u64,
        mode: i32,
    },
    Destroy,
    /// An operation the view does not serve: answered `ENOSYS`, after
    /// which the kernel stops asking for most (`FLUSH`, `IOCTL`, locks).
    Other(u32),
}

impl Request<'_> {
    /// The operation's name, as the kernel's headers spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Lookup { .. } => "LOOKUP",
            Request::Forget { .. } => "FORGET",
            Request::BatchForget { .. } => "BATCH_FORGET",
            Request::Getattr { .. } => "GETATTR",
            Request::Setattr { .. } => "SETATTR",
            Request::Readlink => "READLINK",
            Request::Symlink { .. } => "SYMLINK",
            Request::Mknod { .. } => "MKNOD",
            Request::Mkdir { .. } => "MKDIR",
            Request::Unlink { .. } => "UNLINK",
            Request::Rmdir { .. } => "RMDIR",
            Request::Rename { .. } => "RENAME",
            Request::Link { .. } => "LINK",
            Request::Open { .. } => "OPEN",
            Request::Read { .. } => "READ",
            Request::Write { .. } => "WRITE",
            Request::Statfs => "STATFS",
            Request::Release { .. } => "RELEASE",
            Request::Fsync { .. } => "FSYNC",
            Request::Setxattr { .. } => "SETXATTR",
            Request::Getxattr { .. } => "GETXATTR",
            Request::Listxattr { .. } => "LISTXATTR",
            Request::Removexattr { .. } => "REMOVEXATTR",
            Request::Opendir => "OPENDIR",
            Request::Readdir { .. } => "READDIR",
            Request::Readdirplus { .. } => "READDIRPLUS",
            Request::Releasedir { .. } => "RELEASEDIR",
            Request::Fsyncdir => "FSYNCDIR",
            Request::Access { .. } => "ACCESS",
            Request::Create { .. } => "CREATE",
            Request::Interrupt { .. } => "INTERRUPT",
            Request::Fallocate { .. } => "FALLOCATE",
            Request::Destroy => "DESTROY",
            Request::Other(_) => "OTHER",
        }
    }

    /// The request as a log line shows it: its name, then its arguments
    /// (data by its size).
    pub fn describe(&self) -> String {
        let args = match self {
            Request::Write { fh, offset, data } => {
                format!("fh {fh}, offset {offset}, size {}", data.len())
            }
            Request::Setxattr { name, value, flags } => {
                format!("name {name:?}, size {}, flags {flags:#x}", value.len())
            }
            other => match other.entry_name() {
                Some(name) => format!("name {name:?}"),
                None => format!("{other:?}"),
            },
        };
        format!("{} {args}", self.name())
    }

    /// The name the request is about, if it names one in a directory.
    pub fn entry_name(&self) -> Option<&OsStr> {
        match self {
            Request::Lookup { name }
            | Request::Symlink { name, .. }
            | Request::Mknod { name, .. }
            | Request::Mkdir { name, .. }
            | Request::Unlink { name }
            | Request::Rmdir { name }
            | Request::Rename { name, .. }
            | Request::Link { name, .. }
            | Request::Create { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// A request that does not parse: answered `EIO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// Reads little fields off the front of a buffer.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.0.len() < n {
            return Err(Malformed);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_ne_bytes(
            self.take(2)?.try_into().map_err(|_| Malformed)?,
        ))
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_ne_bytes(
            self.take(4)?.try_into().map_err(|_| Malformed)?,
        ))
    }
    fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(u64::from_ne_bytes(
            self.take(8)?.try_into().map_err(|_| Malformed)?,
        ))
    }
    fn skip(&mut self, n: usize) -> Result<(), Malformed> {
        self.take(n).map(|_| ())
    }
    /// A NUL-terminated name.
    fn name(&mut self) -> Result<&'a OsStr, Malformed> {
        let end = self.0.iter().position(|&b| b == 0).ok_or(Malformed)?;
        let name = &self.0[..end];
        self.0 = &self.0[end + 1..];
        Ok(OsStr::from_bytes(name))
    }
}

/// The header at the front of `bytes`.
pub fn header(bytes: &[u8]) -> Result<InHeader, Malformed> {
    let mut f = Fields(bytes.get(..IN_HEADER).ok_or(Malformed)?);
    let h = InHeader {
        len: f.u32()?,
        opcode: f.u32()?,
        unique: f.u64()?,
        nodeid: f.u64()?,
        uid: f.u32()?,
        gid: f.u32()?,
        pid: f.u32()?,
        total_extlen: f.u16()?,
    };
    f.skip(2)?;
    Ok(h)
}

/// The size of `opcode`'s fixed part: what a ring hands apart from the rest.
pub fn fixed_size(opcode: u32) -> usize {
    match opcode {
        op::FORGET | op::INTERRUPT | op::LINK | op::RENAME => 8,
        op::GETATTR | op::MKNOD | op::FSYNC | op::CREATE | op::RENAME2 => 16,
        op::SETATTR => 88,
        op::MKDIR | op::OPEN | op::OPENDIR | op::ACCESS | op::GETXATTR | op::LISTXATTR => 8,
        op::SETXATTR | op::BATCH_FORGET => 8,
        op::READ | op::READDIR | op::READDIRPLUS | op::WRITE => 40,
        op::RELEASE | op::RELEASEDIR => 24,
        op::FSYNCDIR => 16,
        op::FALLOCATE => 32,
        _ => 0,
    }
}

fn time(secs: u64, nsecs: u32) -> SystemTime {
    // The kernel sends times since the epoch as a signed second count.
    let secs = secs as i64;
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::from_nanos(nsecs.into())
    }
}

/// Decodes the request `h` heads: `fixed` is its operation's fixed part
/// ([`fixed_size`] bytes, or more), `rest` what follows it.
pub fn decode<'a>(h: &InHeader, fixed: &'a [u8], rest: &'a [u8]) -> Result<Request<'a>, Malformed> {
    if h.total_extlen != 0 {
        return Err(Malformed);
    }
    let mut a = Fields(fixed);
    let mut r = Fields(rest);
    Ok(match h.opcode {
        op::LOOKUP => Request::Lookup { name: r.name()? },
        op::FORGET => Request::Forget { nlookup: a.u64()? },
        op::BATCH_FORGET => {
            let count = a.u32()? as usize;
            let mut forgets = Vec::with_capacity(count.min(4096));
            for _ in 0..count {
                forgets.push((r.u64()?, r.u64()?));
            }
            Request::BatchForget { forgets }
        }
        op::GETATTR => {
            let flags = a.u32()?;
            a.skip(4)?;
            let fh = a.u64()?;
            Request::Getattr {
                fh: (flags & GETATTR_FH != 0).then_some(fh),
            }
        }
        op::SETATTR => {
            let valid = a.u32()?;
            a.skip(4)?;
            let fh = a.u64()?;
            let size = a.u64()?;
            a.skip(8)?; // lock_owner
            let (atime, mtime) = (a.u64()?, a.u64()?);
            a.skip(8)?; // ctime
            let (atimensec, mtimensec) = (a.u32()?, a.u32()?);
            a.skip(4)?; // ctimensec
            let mode = a.u32()?;
            a.skip(4)?;
            let (uid, gid) = (a.u32()?, a.u32()?);
            let set = |bit: u32| valid & bit != 0;
            let when = |bit: u32, now: u32, secs: u64, nsecs: u32| {
                if set(now) {
                    Some(SetTime::Now)
                } else if set(bit) {
                    Some(SetTime::At(time(secs, nsecs)))
                } else {
                    None
                }
            };
            Request::Setattr {
                fh: set(FATTR_FH).then_some(fh),
                set: SetAttr {
                    mode: set(FATTR_MODE).then_some(mode),
                    uid: set(FATTR_UID).then_some(uid),
                    gid: set(FATTR_GID).then_some(gid),
                    size: set(FATTR_SIZE).then_some(size),
                    atime: when(FATTR_ATIME, FATTR_ATIME_NOW, atime, atimensec),
                    mtime: when(FATTR_MTIME, FATTR_MTIME_NOW, mtime, mtimensec),
                },
            }
        }
        op::READLINK => Request::Readlink,
        op::SYMLINK => Request::Symlink {
            name: r.name()?,
            target: r.name()?,
        },
        op::MKNOD => {
            let (mode, rdev) = (a.u32()?, a.u32()?);
            Request::Mknod {
                name: r.name()?,
                mode,
                rdev,
            }
        }
        op::MKDIR => {
            let mode = a.u32()?;
            Request::Mkdir {
                name: r.name()?,
                mode,
            }
        }
        op::UNLINK => Request::Unlink { name: r.name()? },
        op::RMDIR => Request::Rmdir { name: r.name()? },
        op::RENAME | op::RENAME2 => {
            let newdir = a.u64()?;
            let flags = if h.opcode == op::RENAME2 { a.u32()? } else { 0 };
            Request::Rename {
                name: r.name()?,
                newdir,
                newname: r.name()?,
                flags,
            }
        }
        op::LINK => {
            let oldnode = a.u64()?;
            Request::Link {
                oldnode,
                name: r.name()?,
            }
        }
        op::OPEN => Request::Open {
            flags: a.u32()? as i32,
        },
        op::OPENDIR => Request::Opendir,
        op::READ | op::READDIR | op::READDIRPLUS => {
            let (fh, offset, size) = (a.u64()?, a.u64()?, a.u32()?);
            match h.opcode {
                op::READ => Request::Read { fh, offset, size },
                op::READDIR => Request::Readdir { fh, offset, size },
                _ => Request::Readdirplus { fh, offset, size },
            }
        }
        op::WRITE => {
            let (fh, offset, size) = (a.u64()?, a.u64()?, a.u32()? as usize);
            Request::Write {
                fh,
                offset,
                data: r.take(size)?,
            }
        }
        op::STATFS => Request::Statfs,
        op::RELEASE => Request::Release { fh: a.u64()? },
        op::RELEASEDIR => Request::Releasedir { fh: a.u64()? },
        op::FSYNC => {
            let fh = a.u64()?;
            Request::Fsync {
                fh,
                datasync: a.u32()? & FSYNC_FDATASYNC != 0,
            }
        }
        op::FSYNCDIR => Request::Fsyncdir,
        op::SETXATTR => {
            let (size, flags) = (a.u32()? as usize, a.u32()? as i32);
            let name = r.name()?;
            Request::Setxattr {
                name,
                value: r.take(size)?,
                flags,
            }
        }
        op::GETXATTR => {
            let size = a.u32()?;
            Request::Getxattr {
                name: r.name()?,
                size,
            }
        }
        op::LISTXATTR => Request::Listxattr { size: a.u32()? },
        op::REMOVEXATTR => Request::Removexattr { name: r.name()? },
        op::ACCESS => Request::Access { mask: a.u32()? },
        op::CREATE => {
            let (flags, mode) = (a.u32()? as i32, a.u32()?);
            Request::Create {
                name: r.name()?,
                mode,
                flags,
            }
        }
        op::INTERRUPT => Request::Interrupt { unique: a.u64()? },
        op::FALLOCATE => Request::Fallocate {
            fh: a.u64()?,
            offset: a.u64()?,
            length: a.u64()?,
            mode: a.u32()? as i32,
        },
        op::DESTROY => Request::Destroy,
        other => Request::Other(other),
    })
}

/// What a listing entry tells the kernel besides its name.
#[derive(Debug, Clone, Copy)]
pub enum Plus<'a> {
    /// A `readdir` entry: the name alone.
    No,
    /// A `readdirplus` entry with its attributes, kept for the duration.
    Entry(&'a FileAttr, Duration),
    /// A `readdirplus` entry that links nothing: for a name the kernel
    /// already knows.
    Unlinked,
}

/// The body of a reply (what follows the out header), built up in place.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Body(pub Vec<u8>);

impl Body {
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_ne_bytes());
        self
    }

    /// `struct fuse_attr`.
    fn attr(&mut self, a: &FileAttr) -> &mut Self {
        let (at, mt, ct) = (
            since_epoch(a.atime),
            since_epoch(a.mtime),
            since_epoch(a.ctime),
        );
        self.u64(a.ino.0).u64(a.size).u64(a.blocks);
        self.u64(at.0).u64(mt.0).u64(ct.0);
        self.u32(at.1).u32(mt.1).u32(ct.1);
        self.u32(mode(a))
            .u32(a.nlink)
            .u32(a.uid)
            .u32(a.gid)
            .u32(a.rdev);
        self.u32(a.blksize).u32(0)
    }

    /// `struct fuse_entry_out`: node `a.ino` (0: a negative entry).
    pub fn entry(&mut self, a: &FileAttr, entry_ttl: Duration, attr_ttl: Duration) -> &mut Self {
        self.u64(a.ino.0).u64(0);
        self.u64(entry_ttl.as_secs()).u64(attr_ttl.as_secs());
        self.u32(entry_ttl.subsec_nanos())
            .u32(attr_ttl.subsec_nanos());
        self.attr(a)
    }

    /// `struct fuse_attr_out`.
    pub fn attr_out(&mut self, a: &FileAttr, ttl: Duration) -> &mut Self {
        self.u64(ttl.as_secs()).u32(ttl.subsec_nanos()).u32(0);
        self.attr(a)
    }

    /// `struct fuse_open_out`.
    pub fn open(&mut self, fh: u64, open_flags: u32, backing_id: u32) -> &mut Self {
        self.u64(fh).u32(open_flags).u32(backing_id)
    }

    /// `struct fuse_write_out`.
    pub fn written(&mut self, size: u32) -> &mut Self {
        self.u32(size).u32(0)
    }

    /// `struct fuse_getxattr_out`: the size a value or list would take.
    pub fn xattr_size(&mut self, size: u32) -> &mut Self {
        self.u32(size).u32(0)
    }

    /// Raw data (read, readlink, an xattr value or list).
    pub fn data(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.extend_from_slice(bytes);
        self
    }

    /// `struct fuse_statfs_out`.
    pub fn statfs(&mut self, s: &nix::sys::statvfs::Statvfs) -> &mut Self {
        self.u64(s.blocks())
            .u64(s.blocks_free())
            .u64(s.blocks_available());
        self.u64(s.files()).u64(s.files_free());
        self.u32(s.block_size() as u32).u32(s.name_max() as u32);
        self.u32(s.fragment_size() as u32).u32(0);
        for _ in 0..6 {
            self.u32(0);
        }
        self
    }

    /// Adds a `struct fuse_dirent` (a `fuse_direntplus` unless `plus` is
    /// [`Plus::No`]: its entry first) unless it would take the body past
    /// `limit` bytes: returns whether the body is full.
    pub fn dirent(
        &mut self,
        limit: usize,
        plus: Plus<'_>,
        ino: u64,
        next_offset: u64,
        kind: FileType,
        name: &OsStr,
    ) -> bool {
        let name = name.as_bytes();
        let unpadded = 24 + name.len();
        let size = unpadded.next_multiple_of(8) + if matches!(plus, Plus::No) { 0 } else { 128 };
        if self.0.len() + size > limit {
            return true;
        }
        match plus {
            Plus::No => {}
            Plus::Entry(attr, ttl) => {
                self.entry(attr, ttl, ttl);
            }
            // An entry of node 0: the kernel links nothing for this name
            // and takes no lookup of it (fuse_direntplus_link).
            Plus::Unlinked => self.0.resize(self.0.len() + 128, 0),
        }
        self.u64(ino).u64(next_offset).u32(name.len() as u32);
        self.u32(dirent_type(kind));
        self.0.extend_from_slice(name);
        self.0
            .resize(self.0.len() + unpadded.next_multiple_of(8) - unpadded, 0);
        false
    }
}

/// Seconds and nanoseconds since the epoch (before it: negative seconds,
/// as the kernel reads them).
fn since_epoch(t: SystemTime) -> (u64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs(), d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            let (secs, nanos) = (d.as_secs() as i64, d.subsec_nanos());
            if nanos == 0 {
                ((-secs) as u64, 0)
            } else {
                ((-secs - 1) as u64, 1_000_000_000 - nanos)
            }
        }
    }
}

/// The kind bits of a file type (`S_IFMT`).
fn kind_bits(kind: FileType) -> u32 {
    match kind {
        FileType::NamedPipe => libc::S_IFIFO,
        FileType::CharDevice => libc::S_IFCHR,
        FileType::BlockDevice => libc::S_IFBLK,
        FileType::Directory => libc::S_IFDIR,
        FileType::RegularFile => libc::S_IFREG,
        FileType::Symlink => libc::S_IFLNK,
        FileType::Socket => libc::S_IFSOCK,
    }
}

fn mode(a: &FileAttr) -> u32 {
    kind_bits(a.kind) | u32::from(a.perm)
}

/// A listing entry's type (`DT_*`: the kind bits shifted down).
fn dirent_type(kind: FileType) -> u32 {
    kind_bits(kind) >> 12
}

/// The out header of the reply to `unique`: `error` is 0 or a negative
/// errno, `body_len` the body's size.
pub fn out_header(unique: u64, error: i32, body_len: usize) -> [u8; OUT_HEADER] {
    let mut h = [0u8; OUT_HEADER];
    h[0..4].copy_from_slice(&((OUT_HEADER + body_len) as u32).to_ne_bytes());
    h[4..8].copy_from_slice(&error.to_ne_bytes());
    h[8..16].copy_from_slice(&unique.to_ne_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuser::INodeNo;

    /// A request as the classic device hands it over.
    fn request(opcode: u32, fixed: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        let len = (IN_HEADER + fixed.len() + rest.len()) as u32;
        v.extend_from_slice(&len.to_ne_bytes());
        v.extend_from_slice(&opcode.to_ne_bytes());
        v.extend_from_slice(&7u64.to_ne_bytes()); // unique
        v.extend_from_slice(&42u64.to_ne_bytes()); // nodeid
        for x in [1000u32, 100, 4242] {
            v.extend_from_slice(&x.to_ne_bytes());
        }
        v.extend_from_slice(&[0; 4]);
        v.extend_from_slice(fixed);
        v.extend_from_slice(rest);
        v
    }

    fn parse(bytes: &[u8]) -> (InHeader, Request<'_>) {
        let h = header(bytes).unwrap();
        let body = &bytes[IN_HEADER..];
        let n = fixed_size(h.opcode).min(body.len());
        let r = decode(&h, &body[..n], &body[n..]).unwrap();
        (h, r)
    }

    fn le(fields: &[u64]) -> Vec<u8> {
        fields.iter().flat_map(|f| f.to_ne_bytes()).collect()
    }

    #[test]
    fn a_header_reads_every_field() {
        let bytes = request(op::LOOKUP, &[], b"name\0");
        let (h, r) = parse(&bytes);
        assert_eq!(
            h,
            InHeader {
                len: bytes.len() as u32,
                opcode: op::LOOKUP,
                unique: 7,
                nodeid: 42,
                uid: 1000,
                gid: 100,
                pid: 4242,
                total_extlen: 0,
            }
        );
        assert_eq!(
            r,
            Request::Lookup {
                name: OsStr::new("name")
            }
        );
    }

    #[test]
    fn names_data_and_fixed_parts_decode() {
        let bytes = request(
            op::RENAME2,
            &[le(&[9]), 1u32.to_ne_bytes().to_vec(), vec![0; 4]].concat(),
            b"a\0b\0",
        );
        assert_eq!(
            parse(&bytes).1,
            Request::Rename {
                name: OsStr::new("a"),
                newdir: 9,
                newname: OsStr::new("b"),
                flags: 1
            }
        );
        let write_in = [le(&[5, 100]), 3u32.to_ne_bytes().to_vec(), vec![0; 20]].concat();
        let bytes = request(op::WRITE, &write_in, b"xyz");
        assert_eq!(
            parse(&bytes).1,
            Request::Write {
                fh: 5,
                offset: 100,
                data: b"xyz"
            }
        );
        let bytes = request(op::SYMLINK, &[], b"link\0../target\0");
        assert_eq!(
            parse(&bytes).1,
            Request::Symlink {
                name: OsStr::new("link"),
                target: OsStr::new("../target")
            }
        );
        let bytes = request(
            op::BATCH_FORGET,
            &[2u32.to_ne_bytes(), [0; 4]].concat(),
            &le(&[3, 1, 4, 2]),
        );
        assert_eq!(
            parse(&bytes).1,
            Request::BatchForget {
                forgets: vec![(3, 1), (4, 2)]
            }
        );
    }

    #[test]
    fn setattr_reads_only_what_valid_names() {
        let mut fixed = vec![0u8; 88];
        fixed[0..4].copy_from_slice(&(FATTR_SIZE | FATTR_MTIME_NOW | FATTR_ATIME).to_ne_bytes());
        fixed[16..24].copy_from_slice(&77u64.to_ne_bytes());
        fixed[32..40].copy_from_slice(&1_000u64.to_ne_bytes());
        fixed[56..60].copy_from_slice(&5u32.to_ne_bytes());
        fixed[68..72].copy_from_slice(&0o644u32.to_ne_bytes());
        let bytes = request(op::SETATTR, &fixed, &[]);
        let Request::Setattr { fh, set } = parse(&bytes).1 else {
            panic!("not a setattr");
        };
        assert_eq!(fh, None);
        assert_eq!(
            (set.mode, set.uid, set.gid, set.size),
            (None, None, None, Some(77))
        );
        assert_eq!(
            set.atime,
            Some(SetTime::At(UNIX_EPOCH + Duration::new(1_000, 5)))
        );
        assert_eq!(set.mtime, Some(SetTime::Now));
    }

    #[test]
    fn short_or_unterminated_requests_are_malformed() {
        let bytes = request(op::LOOKUP, &[], b"no-nul");
        let h = header(&bytes).unwrap();
        assert_eq!(decode(&h, &[], &bytes[IN_HEADER..]), Err(Malformed));
        let bytes = request(
            op::WRITE,
            &[le(&[5, 0]), 9u32.to_ne_bytes().to_vec(), vec![0; 20]].concat(),
            b"abc",
        );
        let h = header(&bytes).unwrap();
        let body = &bytes[IN_HEADER..];
        assert_eq!(
            decode(&h, &body[..40], &body[40..]),
            Err(Malformed),
            "data shorter than size"
        );
        assert_eq!(header(&bytes[..20]), Err(Malformed));
        let mut with_ext = request(op::LOOKUP, &[], b"n\0");
        with_ext[36] = 1;
        let h = header(&with_ext).unwrap();
        assert_eq!(
            decode(&h, &[], b"n\0"),
            Err(Malformed),
            "extensions were not negotiated"
        );
    }

    fn attr() -> FileAttr {
        FileAttr {
            ino: INodeNo(12),
            size: 3,
            blocks: 8,
            atime: UNIX_EPOCH + Duration::new(5, 6),
            mtime: UNIX_EPOCH - Duration::new(1, 500_000_000),
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: FileType::Directory,
            perm: 0o755,
            nlink: 2,
            uid: 1,
            gid: 2,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }

    #[test]
    fn replies_have_the_kernels_layouts() {
        let mut b = Body::default();
        b.entry(&attr(), Duration::new(1, 2), Duration::new(3, 4));
        assert_eq!(b.0.len(), 128, "fuse_entry_out");
        let u64_at = |i: usize| u64::from_ne_bytes(b.0[i..i + 8].try_into().unwrap());
        let u32_at = |i: usize| u32::from_ne_bytes(b.0[i..i + 4].try_into().unwrap());
        assert_eq!(
            (u64_at(0), u64_at(16), u64_at(24), u32_at(32), u32_at(36)),
            (12, 1, 3, 2, 4)
        );
        // attr starts at 40: ino, size, blocks, atime, mtime (-1.5 s is -2 s
        // plus 0.5 s), ctime, nsecs, mode.
        assert_eq!((u64_at(40), u64_at(48), u64_at(64)), (12, 3, 5));
        assert_eq!((u64_at(72) as i64, u32_at(92)), (-2, 500_000_000));
        assert_eq!(u32_at(88), 6);
        assert_eq!(u32_at(100), libc::S_IFDIR | 0o755);
        let mut a = Body::default();
        a.attr_out(&attr(), Duration::from_secs(1));
        assert_eq!(a.0.len(), 104, "fuse_attr_out");
        let mut o = Body::default();
        o.open(9, 1 << 7, 3);
        assert_eq!(o.0.len(), 16, "fuse_open_out");
        assert_eq!(out_header(7, -2, 10), {
            let mut h = [0u8; 16];
            h[0..4].copy_from_slice(&26u32.to_ne_bytes());
            h[4..8].copy_from_slice(&(-2i32).to_ne_bytes());
            h[8..16].copy_from_slice(&7u64.to_ne_bytes());
            h
        });
    }

    #[test]
    fn dirents_are_padded_and_stop_at_the_limit() {
        let mut b = Body::default();
        assert!(!b.dirent(64, Plus::No, 5, 1, FileType::RegularFile, OsStr::new("abc")));
        assert_eq!(b.0.len(), 32, "24 bytes and a 3-byte name, padded to 8");
        assert_eq!(
            u32::from_ne_bytes(b.0[20..24].try_into().unwrap()),
            libc::DT_REG as u32
        );
        assert!(
            b.dirent(
                64,
                Plus::No,
                6,
                2,
                FileType::Directory,
                OsStr::new("a-longer-name")
            ),
            "full"
        );
        assert_eq!(b.0.len(), 32, "nothing added past the limit");
        let mut p = Body::default();
        assert!(!p.dirent(
            4096,
            Plus::Entry(&attr(), Duration::ZERO),
            12,
            1,
            FileType::Directory,
            OsStr::new("d")
        ));
        assert_eq!(p.0.len(), 128 + 32);
        assert_eq!(&p.0[..8], &12u64.to_ne_bytes(), "the entry's node");
        let mut u = Body::default();
        assert!(!u.dirent(
            4096,
            Plus::Unlinked,
            12,
            1,
            FileType::Directory,
            OsStr::new("d")
        ));
        assert_eq!(u.0.len(), 128 + 32);
        assert!(u.0[..128].iter().all(|&b| b == 0), "an entry of node 0");
        assert_eq!(&u.0[128..136], &12u64.to_ne_bytes(), "the name's inode");
    }
}

//! Acting as the caller: the writable view makes every change with the
//! filesystem credentials of the process that asked (its uid, gid and
//! supplementary groups), on the thread serving the request only. The disk
//! then checks permissions as it would for the caller, files are created
//! owned by the caller (and inherit a set-group-ID directory's group), and a
//! root daemon never lends its own powers: switching the filesystem uid away
//! from 0 drops the capabilities that override file permissions.
//!
//! When the daemon is not root (an unprivileged `seal run` or `seal mount`),
//! nothing is switched: every caller is the daemon's own user there.

use std::io;
use std::sync::OnceLock;

use nix::unistd::{Gid, Uid, setfsgid, setfsuid};

use seal_gate::Who;

/// The daemon's own supplementary groups, read once, restored after each
/// change made as a caller.
fn own_groups() -> &'static [rustix::thread::Gid] {
    static GROUPS: OnceLock<Vec<rustix::thread::Gid>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        nix::unistd::getgroups()
            .unwrap_or_default()
            .into_iter()
            .map(|g| rustix::thread::Gid::from_raw(g.as_raw()))
            .collect()
    })
}

/// The supplementary groups of process `pid` (from `/proc/PID/status`), or
/// none when it is gone.
fn groups_of(pid: u32) -> Vec<rustix::thread::Gid> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return Vec::new();
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Groups:"))
        .map(|list| {
            list.split_whitespace()
                .filter_map(|g| g.parse::<u32>().ok())
                .map(rustix::thread::Gid::from_raw)
                .collect()
        })
        .unwrap_or_default()
}

/// The credentials of this thread, switched to a caller's until dropped.
#[must_use]
pub struct AsCaller {
    switched: bool,
}

impl AsCaller {
    /// Switches this thread's filesystem credentials to `who`'s (a no-op for
    /// an unprivileged daemon, or a root caller with root's groups).
    pub fn switch(who: Who) -> io::Result<AsCaller> {
        if !Uid::effective().is_root() || (who.uid == 0 && who.gid == 0) {
            return Ok(AsCaller { switched: false });
        }
        let mut groups = groups_of(who.pid);
        if groups.is_empty() {
            groups.push(rustix::thread::Gid::from_raw(who.gid));
        }
        let guard = AsCaller { switched: true };
        rustix::thread::set_thread_groups(&groups)?;
        setfsgid(Gid::from_raw(who.gid));
        setfsuid(Uid::from_raw(who.uid));
        // setfsuid reports the previous value, never an error: read back.
        if setfsuid(Uid::from_raw(u32::MAX)) != Uid::from_raw(who.uid)
            || setfsgid(Gid::from_raw(u32::MAX)) != Gid::from_raw(who.gid)
        {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        Ok(guard)
    }
}

impl Drop for AsCaller {
    fn drop(&mut self) {
        if !self.switched {
            return;
        }
        setfsuid(Uid::from_raw(0));
        setfsgid(Gid::from_raw(0));
        if let Err(e) = rustix::thread::set_thread_groups(own_groups()) {
            // A thread left with a caller's groups must not serve anyone
            // else: there is no safe way on.
            tracing::error!("cannot restore the daemon's groups: {e}");
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_acts_as_the_caller_and_comes_back() {
        if !Uid::effective().is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::thread::spawn(move || {
            let who = Who {
                pid: std::process::id(),
                uid: 4242,
                gid: 4343,
            };
            {
                let _as = AsCaller::switch(who).unwrap();
                let p = dir.path().join("mine");
                // The temporary directory belongs to root (0700): as the
                // caller it cannot be written.
                assert!(std::fs::write(&p, b"x").is_err());
            }
            let p = dir.path().join("root");
            std::fs::write(&p, b"x").unwrap();
            let md = std::fs::metadata(&p).unwrap();
            assert_eq!(std::os::unix::fs::MetadataExt::uid(&md), 0);
        })
        .join()
        .unwrap();
    }
}

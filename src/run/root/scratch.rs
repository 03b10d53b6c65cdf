//! The private scratch layer of a run over an agent directory its agent
//! writes its own housekeeping into
//! ([`seal_gate::surfaces::SCRATCH_DIRS`]: OpenCode's
//! `.opencode`, which it fills with a `.gitignore`, a `package.json` and the
//! `node_modules` of its plugins' dependencies as it starts; Pi's `.pi`,
//! where it takes a lock beside its settings).
//!
//! The layer is a tmpfs of the run's own, laid over the view's directory (or
//! over a masked one in a parent of the project, which shows nothing): it
//! holds a read-only bind of every entry the view shows there (so what the
//! agent loads is still the verified bundle, decided by the view at each
//! open; a linked surface is bound as what it leads to in the view), and a
//! read-only empty placeholder for every name the agent loads from that the
//! view does not show, so nothing planted in the layer is ever loaded as an
//! extension. Every other name is the agent's own for the run,
//! like `/tmp`: it lives in memory and goes with the run's mount namespace,
//! so it never reaches the disk or a later run.
//!
//! The layer is filled at a staging path and moved into place whole: one
//! that cannot be built completely is never laid, and the directory stays
//! the view's, read-only (the agent then meets the error it meets without a
//! layer).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2};
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sys::stat::Mode;

use super::{Builder, EMPTY_DIR, NEW, bind_fd, mkdir, relative, remount_tree_read_only, touch};
use crate::run::plan::Placement;
use seal_core::fs::EntryKind;
use seal_gate::surfaces::{Unit, scratch_dir};

/// Where a layer is filled before it is moved into place (in the staging
/// root, which is detached when the build finishes).
const SCRATCH_STAGE: &str = "/scratch";

impl Builder {
    /// Lays the scratch layer over the project's agent directory at
    /// `location` (its path on the host, inside the view).
    pub(super) fn scratch(&self, location: &Path, index: usize) -> io::Result<()> {
        let Some(kind) = location
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(scratch_dir)
        else {
            return Err(io::Error::other("not an agent directory with housekeeping"));
        };
        let new = nix::fcntl::open(
            NEW,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        // The view's directory (or a masked one: the empty directory),
        // reached without following a symlink and checked to be one of
        // them: nothing else is ever covered.
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        let view = openat2(new.as_fd(), relative(location), how)?;
        let st = nix::sys::stat::fstat(&view)?;
        let empties = nix::sys::stat::stat(EMPTY_DIR)?;
        let masked = (st.st_dev, st.st_ino) == (empties.st_dev, empties.st_ino);
        if st.st_dev != self.view_dev && !masked {
            return Err(io::Error::other(
                "it is neither in the sealed view nor masked",
            ));
        }
        let shown = seal_core::fs::list_dir(view.as_fd())?;
        // The layer's root has the directory's mode and owner (a masked
        // one's as on the host).
        let owner = if masked {
            nix::sys::stat::fstat(&self.open_beneath(location, OFlag::O_DIRECTORY)?)?
        } else {
            st
        };
        let stage = Path::new(SCRATCH_STAGE).join(index.to_string());
        std::fs::create_dir_all(&stage)?;
        self.tmpfs_owned(&stage, owner.st_mode & 0o7777, owner.st_uid, owner.st_gid)?;
        let filled = (|| -> io::Result<()> {
            for e in &shown {
                let name = e.name.to_str();
                if name.is_some_and(|n| kind.housekeeping.contains(&n)) {
                    // The agent's own, fresh for the run.
                    continue;
                }
                let unit = kind
                    .loads
                    .iter()
                    .find(|(n, _)| name == Some(*n))
                    .map(|(_, unit)| *unit);
                let unit = unit.unwrap_or(match e.kind {
                    EntryKind::Dir => Unit::Dir,
                    _ => Unit::File,
                });
                self.shown_entry(&view, &location.join(&e.name), &stage.join(&e.name), unit)?;
            }
            for (name, unit) in kind.loads {
                if shown.iter().any(|e| e.name == *name) {
                    continue;
                }
                self.place(&placeholder(*unit), &location.join(name), &stage.join(name))?;
            }
            let target = Path::new(NEW).join(relative(location));
            mount(
                Some(&stage),
                &target,
                None::<&str>,
                MsFlags::MS_MOVE,
                None::<&str>,
            )?;
            Ok(())
        })();
        if filled.is_err() {
            let _ = umount2(&stage, MntFlags::MNT_DETACH);
        }
        filled
    }

    /// One entry the view shows in the directory, at `target` in the layer:
    /// a read-only bind of what it is in the view or, for a linked surface,
    /// of what the link leads to there (a copy of the link would be the
    /// agent's to remove and replace with a directory of its own); a
    /// read-only empty placeholder of the `unit`'s shape when that is not in
    /// the view.
    fn shown_entry(
        &self,
        view: &OwnedFd,
        location: &Path,
        target: &Path,
        unit: Unit,
    ) -> io::Result<()> {
        let name = location.file_name().unwrap_or_default();
        let in_view = openat(
            view.as_fd(),
            name,
            OFlag::O_PATH | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .ok()
        .and_then(|fd| {
            let st = nix::sys::stat::fstat(&fd).ok()?;
            (st.st_dev == self.view_dev).then_some((fd, st))
        });
        let Some((fd, st)) = in_view else {
            return self.place(&placeholder(unit), location, target);
        };
        if EntryKind::from_mode(st.st_mode) == EntryKind::Dir {
            mkdir(target, 0o755)?;
        } else {
            drop(touch(target, 0o644)?);
        }
        bind_fd(&fd, target)?;
        remount_tree_read_only(target)
    }
}

/// The read-only empty placeholder of a name the agent loads a `unit` from.
fn placeholder(unit: Unit) -> Placement {
    match unit {
        Unit::File => Placement::EmptyFile,
        Unit::Dir | Unit::Either => Placement::EmptyDir,
    }
}

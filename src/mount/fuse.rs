//! The FUSE session's side that `fuser` calls: the handshake (`INIT`: what
//! the view asks of the kernel, the rings among it) and the end of the
//! session. `fuser` mounts and unmounts and carries the notifications that
//! make the kernel forget; the requests themselves are read by the view's
//! own transports (`device.rs`, `ring.rs`) and served by `serve.rs`.

use std::ffi::OsStr;
use std::io;
use std::sync::Arc;

use fuser::{Filesystem, INodeNo, InitFlags, KernelConfig, Request};

use super::backing::{DevBacking, Registrar};
use super::dispatch::Dispatch;
use super::serve::Shared;
use super::view::View;
use seal_gate::Gate;

/// In a debug build, set: no FUSE passthrough (the mount tests' mode matrix).
const NO_PASSTHROUGH_VAR: &str = "SEAL_TEST_NO_PASSTHROUGH";

/// In a debug build, set: no io_uring rings (the mount tests' mode matrix).
const NO_RINGS_VAR: &str = "SEAL_TEST_NO_RINGS";

/// The payload of a ring entry: the kernel's largest read or write (256
/// pages) and a page for the arguments around it.
const RING_PAYLOAD: usize = (1 << 20) + 4096;

/// Threads that run the verifications the FUSE threads hand off.
const VERIFY_WORKERS: usize = 2;

/// The session's notifier tells the kernel to forget
/// (`SEAL_LOG=sealfs::notices=debug` logs each notice).
impl super::view::Invalidate for fuser::Notifier {
    fn entry(&self, parent: u64, name: &OsStr) {
        tracing::debug!(target: "sealfs::notices", "forget entry {parent:#018x} {name:?}");
        if let Err(e) = self.inval_entry(INodeNo(parent), name) {
            tracing::debug!("inval_entry: {e}");
        }
    }
    fn inode(&self, ino: u64) {
        tracing::debug!(target: "sealfs::notices", "forget attributes {ino:#018x}");
        // Attributes only: a negative offset leaves cached pages alone.
        if let Err(e) = self.inval_inode(INodeNo(ino), -1, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
    fn data(&self, ino: u64) {
        tracing::debug!(target: "sealfs::notices", "forget data {ino:#018x}");
        // Offset 0, length 0: attributes and every cached page.
        if let Err(e) = self.inval_inode(INodeNo(ino), 0, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
    fn listing(&self, dir: u64) {
        tracing::debug!(target: "sealfs::notices", "forget listing {dir:#018x}");
        // Offset 0, length 0: every cached page, which for a directory is
        // its cached listing.
        if let Err(e) = self.inval_inode(INodeNo(dir), 0, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
}

/// What `seal mount` does when the session has ended (see [`SealFs::on_end`]).
pub type LastWords = Box<dyn FnOnce() + Send + Sync>;

/// The filesystem as `fuser` sees it: the view and where its requests run
/// (what the transports serve with), the rings the handshake agrees to, and
/// the session's last words.
pub struct SealFs {
    shared: Arc<Shared>,
    /// Whether the kernel agreed to serve requests through io_uring rings
    /// (`ring.rs`), and the size of their payload buffers.
    rings: Arc<std::sync::OnceLock<usize>>,
    last_words: Option<LastWords>,
}

impl SealFs {
    /// At most `fuse_threads - 2` requests that may verify a bundle run on
    /// FUSE threads at once, so two always remain for ordinary requests.
    pub fn new(
        gate: std::sync::Arc<Gate>,
        fuse_threads: usize,
        writable: bool,
        kernel_opens: bool,
    ) -> SealFs {
        let view = View::new(gate, writable).letting_the_kernel_open(kernel_opens);
        SealFs {
            shared: Arc::new(Shared {
                dispatch: Arc::new(Dispatch::new(
                    Arc::new(view),
                    fuse_threads.saturating_sub(2),
                    VERIFY_WORKERS,
                )),
                // Its device is set once the session has one.
                registrar: Registrar::default(),
            }),
            rings: Arc::default(),
            last_words: None,
        }
    }

    /// What the transports serve with: the view behind its dispatch, and
    /// where backings are registered.
    pub fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    /// The size of the rings' payload buffers, set once the handshake has
    /// agreed to them (unset: the classic loop serves everything).
    pub fn rings(&self) -> Arc<std::sync::OnceLock<usize>> {
        Arc::clone(&self.rings)
    }

    /// Runs `last_words` once the session has ended (every FUSE thread is
    /// done) and before the FUSE library tears the mount down. `seal mount`
    /// exits there: the library's teardown unmounts the mountpoint path
    /// again, which, after an external `umount`, may by then be a new mount.
    pub fn on_end(mut self, last_words: LastWords) -> SealFs {
        self.last_words = Some(last_words);
        self
    }

    fn view(&self) -> &View<DevBacking> {
        self.shared.dispatch.shared()
    }
}

impl Filesystem for SealFs {
    fn destroy(&mut self) {
        if let Some(last_words) = self.last_words.take() {
            last_words();
        }
    }

    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        let _ = config
            .add_capabilities(InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO);
        let _ = config.add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP);
        let _ = config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS);
        // Without it the kernel asks for `security.capability` before every
        // write, a round trip each (a 1 GiB write in 1 MiB writes: 1,024),
        // to learn whether the write must drop set-ID bits and capabilities.
        // With it the filesystem drops them, and the disk does: every change
        // the view makes runs with the caller's credentials (on the serving
        // thread; passthrough writes with those of the backing's
        // registration, made as the caller: `BackingOf::RealFile`), so the
        // disk applies the rules of a native write.
        let _ = config.add_capabilities(InitFlags::FUSE_HANDLE_KILLPRIV_V2);
        // Asked for, not `View::opens_in_kernel`: the handshake runs while
        // the session is made, before the view has its invalidator and
        // directory feed (`mount_with` warns if the kernel will not open
        // files itself after all; cached reads then refresh attributes).
        if self.view().kernel_opens_asked() && !self.view().is_writable() {
            // Files the kernel opens itself keep their pages: a change of
            // mtime or size, seen when their attributes are refreshed, must
            // drop them (where the directory feed does not tell at once).
            let _ = config.add_capabilities(InitFlags::FUSE_AUTO_INVAL_DATA);
        }
        // Requests through rings per CPU, where the kernel offers them (a
        // debug build keeps the classic loop when the test matrix asks).
        let no_rings = cfg!(debug_assertions) && std::env::var_os(NO_RINGS_VAR).is_some();
        if !no_rings
            && config
                .capabilities()
                .contains(InitFlags::FUSE_OVER_IO_URING)
            && crate::mount::ring::available()
        {
            // A ring entry holds the largest request or reply body: keep it
            // at 1 MiB (the kernel's largest read and write in pages).
            let max_write = config
                .set_max_write(RING_PAYLOAD as u32)
                .map_or_else(|max| max, |_| RING_PAYLOAD as u32);
            if config
                .add_capabilities(InitFlags::FUSE_OVER_IO_URING)
                .is_ok()
            {
                let _ = self.rings.set((max_write as usize).max(RING_PAYLOAD));
            }
        }
        // A debug build serves every read from the daemon when the test
        // matrix asks (as where the kernel refuses passthrough).
        let refused = cfg!(debug_assertions) && std::env::var_os(NO_PASSTHROUGH_VAR).is_some();
        if !refused
            && config.add_capabilities(InitFlags::FUSE_PASSTHROUGH).is_ok()
            && config.set_max_stack_depth(2).is_ok()
        {
            self.view().backings().enable();
        } else {
            tracing::info!("the kernel offers no FUSE passthrough; serving reads from the daemon");
        }
        Ok(())
    }
}

//! A progress line on stderr for long hashing runs, shown only when stderr is
//! a terminal and the run lasts longer than a moment, and erased at the end.
//!
//! The line counts bytes as well as files, to a tenth of a unit: the core
//! adds to `bytes_done` after every 256 KiB chunk, so during one large file,
//! when the file count stands still, the line still moves.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::output::human_bytes;
use seal_core::effort::HashProgress;

/// How long a run goes before the line appears (quick runs show nothing).
const FIRST_PAINT: Duration = Duration::from_millis(400);
/// How often the line is redrawn.
const REPAINT: Duration = Duration::from_millis(100);

/// Shows progress until dropped.
pub struct ProgressLine {
    pub counters: Arc<HashProgress>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressLine {
    pub fn start(what: &'static str) -> ProgressLine {
        let terminal = std::io::stderr().is_terminal();
        Self::start_on(what, terminal.then(std::io::stderr), FIRST_PAINT, REPAINT)
    }

    /// Paints on `sink` (nothing when `None`) after `first`, every `every`.
    fn start_on<W: Write + Send + 'static>(
        what: &'static str,
        sink: Option<W>,
        first: Duration,
        every: Duration,
    ) -> ProgressLine {
        let counters = Arc::new(HashProgress::default());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = sink.map(|sink| {
            let (counters, stop) = (counters.clone(), stop.clone());
            std::thread::spawn(move || paint(what, sink, &counters, &stop, first, every))
        });
        ProgressLine {
            counters,
            stop,
            thread,
        }
    }

    pub fn counters(&self) -> Option<&HashProgress> {
        Some(&self.counters)
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One frame: `hashing: 3/10 files, 412.5 MiB`.
fn frame(what: &str, counters: &HashProgress) -> String {
    let done = counters.files_done.load(Ordering::Relaxed);
    let total = counters.files_total.load(Ordering::Relaxed);
    let bytes = counters.bytes_done.load(Ordering::Relaxed);
    format!("{what}: {done}/{total} files, {}", human_bytes(bytes))
}

/// Redraws the line in place until `stop`, then erases it if it was shown.
/// Only a changed frame is written, so a stalled run does not flood a
/// terminal recorder.
fn paint<W: Write>(
    what: &str,
    mut sink: W,
    counters: &HashProgress,
    stop: &AtomicBool,
    first: Duration,
    every: Duration,
) {
    std::thread::sleep(first);
    let mut last = None;
    while !stop.load(Ordering::Relaxed) {
        let now = frame(what, counters);
        if last.as_ref() != Some(&now) {
            let _ = write!(sink, "\r\x1b[K{now}");
            let _ = sink.flush();
            last = Some(now);
        }
        std::thread::sleep(every);
    }
    if last.is_some() {
        let _ = write!(sink, "\r\x1b[K");
        let _ = sink.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// A sink the test can read while the painter writes.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }

        /// Waits (bounded) until `needle` has been painted.
        fn wait_for(&self, needle: &str) {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !self.text().contains(needle) {
                assert!(
                    Instant::now() < deadline,
                    "never painted {needle:?}: {:?}",
                    self.text()
                );
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    #[test]
    fn the_line_moves_with_bytes_while_one_large_file_is_hashed() {
        let sink = Shared::default();
        let line = ProgressLine::start_on(
            "hashing",
            Some(sink.clone()),
            Duration::ZERO,
            Duration::from_millis(1),
        );
        let c = &line.counters;
        c.files_total.store(1, Ordering::Relaxed);
        // One 1 GiB file, chunk by chunk: the file count stays 0/1.
        sink.wait_for("\r\x1b[Khashing: 0/1 files, 0 B");
        for mib in [3u64, 7] {
            c.bytes_done.store(mib << 20, Ordering::Relaxed);
            sink.wait_for(&format!("\r\x1b[Khashing: 0/1 files, {mib}.0 MiB"));
        }
        c.bytes_done.store((7 << 20) + (1 << 17), Ordering::Relaxed);
        sink.wait_for("hashing: 0/1 files, 7.1 MiB");
        c.files_done.store(1, Ordering::Relaxed);
        sink.wait_for("hashing: 1/1 files, 7.1 MiB");
        drop(line);
        let text = sink.text();
        assert!(text.ends_with("\r\x1b[K"), "the line is erased: {text:?}");
        // Unchanged frames are not repainted.
        assert_eq!(text.matches("0/1 files, 3.0 MiB").count(), 1, "{text:?}");
    }

    #[test]
    fn quick_runs_and_non_terminals_show_nothing() {
        let sink = Shared::default();
        let line = ProgressLine::start_on(
            "hashing",
            Some(sink.clone()),
            Duration::from_millis(200),
            Duration::from_millis(1),
        );
        line.counters.bytes_done.store(1 << 30, Ordering::Relaxed);
        // Done before the first paint: the drop stops the painter first.
        drop(line);
        assert_eq!(sink.text(), "");
        let none = ProgressLine::start_on::<Shared>("hashing", None, Duration::ZERO, REPAINT);
        assert!(none.thread.is_none());
    }
}

//! A progress line on stderr for long hashing runs, shown only when stderr is
//! a terminal and the run lasts longer than a moment, and erased at the end.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::core::hash::HashProgress;

/// Shows progress until dropped.
pub struct ProgressLine {
    pub counters: Arc<HashProgress>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressLine {
    pub fn start(what: &'static str) -> ProgressLine {
        let counters = Arc::new(HashProgress::default());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let (counters, stop) = (counters.clone(), stop.clone());
            std::thread::spawn(move || {
                // Quick runs never show anything.
                std::thread::sleep(Duration::from_millis(400));
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    let done = counters.files_done.load(Ordering::Relaxed);
                    let total = counters.files_total.load(Ordering::Relaxed);
                    let mib = counters.bytes_done.load(Ordering::Relaxed) >> 20;
                    eprint!("\r\x1b[K{what}: {done}/{total} files, {mib} MiB");
                    let _ = std::io::stderr().flush();
                    shown = true;
                    std::thread::sleep(Duration::from_millis(100));
                }
                if shown {
                    eprint!("\r\x1b[K");
                }
            })
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

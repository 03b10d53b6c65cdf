//! Fresh verification with sharing: every decision about a bundle waits for a
//! verification that *started after the request arrived*. Requests that arrive
//! while a verification runs do not use it; they are served by the next one,
//! which a single thread runs for all of them (single flight). Nothing is ever
//! reused on timestamps, inode numbers or sizes: the only thing shared is a run
//! that began after the request was registered.
//!
//! The files requested are known when a run starts (every request waiting for
//! it registered before it began), so the run keeps snapshots of exactly those
//! files and no others.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use crate::core::paths::FilePath;
use crate::snapshot::Snapshot;

/// The result of one verification run.
#[derive(Debug)]
pub struct Run<V> {
    /// Requests numbered up to this one arrived before the run started.
    started_after: u64,
    pub verdict: V,
    snapshots: Mutex<HashMap<FilePath, (Arc<Snapshot>, usize)>>,
}

impl<V> Run<V> {
    /// Takes the snapshot of `path` for one of the requests that asked for it;
    /// the run forgets it once every such request has taken it.
    pub fn take_snapshot(&self, path: &FilePath) -> Option<Arc<Snapshot>> {
        let mut map = self.snapshots.lock().unwrap_or_else(|e| e.into_inner());
        let (snapshot, remaining) = map.get_mut(path)?;
        let snapshot = snapshot.clone();
        *remaining -= 1;
        if *remaining == 0 {
            map.remove(path);
        }
        Some(snapshot)
    }
}

struct State<V> {
    arrivals: u64,
    running: bool,
    wanted: Vec<FilePath>,
    latest: Option<Arc<Run<V>>>,
}

/// The verifications of one root.
pub struct Flight<V> {
    state: Mutex<State<V>>,
    finished: Condvar,
}

impl<V> Default for Flight<V> {
    fn default() -> Self {
        Flight {
            state: Mutex::new(State {
                arrivals: 0,
                running: false,
                wanted: Vec::new(),
                latest: None,
            }),
            finished: Condvar::new(),
        }
    }
}

impl<V> Flight<V> {
    /// Returns a run that started after this call began, running one if none
    /// is under way. `verify` gets the paths whose bytes must be kept and
    /// returns the verdict with those snapshots.
    pub fn fresh(
        &self,
        want: Option<&FilePath>,
        verify: impl FnOnce(&[FilePath]) -> (V, HashMap<FilePath, Arc<Snapshot>>),
    ) -> Arc<Run<V>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.arrivals += 1;
        let me = st.arrivals;
        if let Some(w) = want {
            st.wanted.push(w.clone());
        }
        let mut verify = Some(verify);
        loop {
            if let Some(run) = &st.latest {
                if run.started_after >= me {
                    return run.clone();
                }
            }
            if !st.running {
                // Every request numbered <= arrivals is registered already.
                let started_after = st.arrivals;
                let wanted = std::mem::take(&mut st.wanted);
                st.running = true;
                drop(st);
                let Some(f) = verify.take() else {
                    unreachable!(
                        "a request leads at most one run: once it led, the run's number covers it"
                    )
                };
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&wanted)));
                st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                st.running = false;
                match outcome {
                    Ok((verdict, kept)) => {
                        let mut counts: HashMap<FilePath, usize> = HashMap::new();
                        for w in &wanted {
                            *counts.entry(w.clone()).or_default() += 1;
                        }
                        let snapshots = kept
                            .into_iter()
                            .filter_map(|(p, s)| counts.get(&p).map(|&n| (p, (s, n))))
                            .collect();
                        st.latest = Some(Arc::new(Run {
                            started_after,
                            verdict,
                            snapshots: Mutex::new(snapshots),
                        }));
                        self.finished.notify_all();
                    }
                    Err(panic) => {
                        self.finished.notify_all();
                        drop(st);
                        std::panic::resume_unwind(panic);
                    }
                }
                continue;
            }
            st = self.finished.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Flights by root identity.
pub struct Flights<V> {
    map: Mutex<HashMap<String, Arc<Flight<V>>>>,
}

impl<V> Default for Flights<V> {
    fn default() -> Self {
        Flights {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<V> Flights<V> {
    pub fn get(&self, id: &str) -> Arc<Flight<V>> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(id.to_string()).or_default().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[test]
    fn each_request_gets_a_run_that_started_after_it() {
        let flight: Arc<Flight<u64>> = Arc::new(Flight::default());
        let clock = Arc::new(AtomicU64::new(0));
        let runs = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::new();
        for _ in 0..16 {
            let (flight, clock, runs) = (flight.clone(), clock.clone(), runs.clone());
            handles.push(std::thread::spawn(move || {
                for _ in 0..50 {
                    let arrived = clock.fetch_add(1, Ordering::SeqCst);
                    let run = flight.fresh(None, |_| {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let start = clock.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_micros(200));
                        (start, HashMap::new())
                    });
                    assert!(
                        run.verdict > arrived,
                        "run started at {} before arrival {arrived}",
                        run.verdict
                    );
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let n = runs.load(Ordering::SeqCst);
        assert!(n < 16 * 50, "no sharing happened ({n} runs)");
        assert!(n >= 50, "too few runs ({n})");
    }

    #[test]
    fn snapshots_go_to_those_who_asked() {
        let flight: Flight<()> = Flight::default();
        let a = FilePath::parse("a").unwrap();
        let run = flight.fresh(Some(&a), |wanted| {
            assert_eq!(wanted, [FilePath::parse("a").unwrap()]);
            let mut m = HashMap::new();
            m.insert(
                FilePath::parse("a").unwrap(),
                Arc::new(Snapshot::from_bytes(b"A").unwrap()),
            );
            m.insert(
                FilePath::parse("b").unwrap(),
                Arc::new(Snapshot::from_bytes(b"B").unwrap()),
            );
            ((), m)
        });
        assert!(
            run.take_snapshot(&FilePath::parse("b").unwrap()).is_none(),
            "unrequested bytes are not kept"
        );
        assert_eq!(run.take_snapshot(&a).unwrap().read_at(0, 9).unwrap(), b"A");
        assert!(
            run.take_snapshot(&a).is_none(),
            "released after the last taker"
        );
    }
}

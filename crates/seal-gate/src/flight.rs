//! Fresh verification with sharing: every decision about a bundle waits for a
//! verification that *started after the request arrived*. Requests that arrive
//! while a verification runs do not use it; they are served by the next one,
//! which a single thread runs for all of them (single flight). Nothing is ever
//! reused on timestamps, inode numbers or sizes: the only thing shared is a run
//! that began after the request was registered.
//!
//! Each request holds a ticket. A run takes every ticket pending when it
//! starts (so it knows exactly which files to snapshot), and answers each of
//! those tickets, and only those: a request is never handed another run's
//! result, so it always gets the snapshot of the file it asked for.
//!
//! The bookkeeping is a state machine ([`Tickets`]) with no blocking in it, so
//! that tests can drive any interleaving of requests and runs step by step;
//! [`Flight`] wraps it with a mutex and a condition variable.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use crate::snapshot::Snapshot;
use seal_core::paths::FilePath;

/// What one request gets: the verdict of the run that took its ticket, and
/// the snapshot of the file it asked for (when that run kept one).
#[derive(Debug)]
pub(crate) struct Answer<V> {
    pub verdict: Arc<V>,
    pub snapshot: Option<Arc<Snapshot>>,
}

impl<V> Clone for Answer<V> {
    fn clone(&self) -> Self {
        Answer {
            verdict: self.verdict.clone(),
            snapshot: self.snapshot.clone(),
        }
    }
}

/// A request's place in line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Ticket(u64);

/// The tickets one run answers, and the files they want kept.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    tickets: Vec<(Ticket, Option<FilePath>)>,
}

impl Batch {
    /// The files whose bytes the run must keep (each once).
    pub(crate) fn wanted(&self) -> Vec<FilePath> {
        let mut paths: Vec<FilePath> = self
            .tickets
            .iter()
            .filter_map(|(_, want)| want.clone())
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }
}

/// The bookkeeping of one root's verifications (no blocking).
#[derive(Debug, Clone)]
pub(crate) struct Tickets<V> {
    next: u64,
    running: bool,
    pending: Vec<(Ticket, Option<FilePath>)>,
    answers: HashMap<Ticket, Answer<V>>,
}

impl<V> Default for Tickets<V> {
    fn default() -> Self {
        Tickets {
            next: 0,
            running: false,
            pending: Vec::new(),
            answers: HashMap::new(),
        }
    }
}

impl<V> Tickets<V> {
    /// Registers a request (wanting the bytes of `want`, if any).
    pub(crate) fn arrive(&mut self, want: Option<&FilePath>) -> Ticket {
        self.next += 1;
        let ticket = Ticket(self.next);
        self.pending.push((ticket, want.cloned()));
        ticket
    }

    /// The answer for `ticket`, once the run that took it has finished.
    pub(crate) fn take(&mut self, ticket: Ticket) -> Option<Answer<V>> {
        self.answers.remove(&ticket)
    }

    /// Starts a run for every pending ticket, unless one is under way or
    /// nothing is pending.
    pub(crate) fn start(&mut self) -> Option<Batch> {
        if self.running || self.pending.is_empty() {
            return None;
        }
        self.running = true;
        Some(Batch {
            tickets: std::mem::take(&mut self.pending),
        })
    }

    /// Answers every ticket of `batch` from one finished run.
    pub(crate) fn finish(
        &mut self,
        batch: Batch,
        verdict: V,
        kept: &HashMap<FilePath, Arc<Snapshot>>,
    ) {
        self.running = false;
        let verdict = Arc::new(verdict);
        for (ticket, want) in batch.tickets {
            let snapshot = want.and_then(|w| kept.get(&w).cloned());
            self.answers.insert(
                ticket,
                Answer {
                    verdict: verdict.clone(),
                    snapshot,
                },
            );
        }
    }

    /// A run that failed (panicked): its tickets wait for the next run.
    pub(crate) fn abandon(&mut self, batch: Batch) {
        self.running = false;
        let mut tickets = batch.tickets;
        tickets.append(&mut self.pending);
        self.pending = tickets;
    }
}

/// The verifications of one root.
pub(crate) struct Flight<V> {
    tickets: Mutex<Tickets<V>>,
    finished: Condvar,
}

impl<V> Default for Flight<V> {
    fn default() -> Self {
        Flight {
            tickets: Mutex::new(Tickets::default()),
            finished: Condvar::new(),
        }
    }
}

impl<V> Flight<V> {
    /// Returns the answer of a run that started after this call began,
    /// running one if none is under way. `verify` gets the paths whose bytes
    /// must be kept and returns the verdict with those snapshots.
    pub(crate) fn fresh(
        &self,
        want: Option<&FilePath>,
        verify: impl FnOnce(&[FilePath]) -> (V, HashMap<FilePath, Arc<Snapshot>>),
    ) -> Answer<V> {
        let mut tickets = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        let mine = tickets.arrive(want);
        let mut verify = Some(verify);
        loop {
            if let Some(answer) = tickets.take(mine) {
                return answer;
            }
            if let Some(batch) = tickets.start() {
                drop(tickets);
                let Some(run) = verify.take() else {
                    unreachable!("a request leads at most one run: the run it leads answers it")
                };
                let wanted = batch.wanted();
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&wanted)));
                tickets = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
                match outcome {
                    Ok((verdict, kept)) => tickets.finish(batch, verdict, &kept),
                    Err(panic) => {
                        tickets.abandon(batch);
                        self.finished.notify_all();
                        drop(tickets);
                        std::panic::resume_unwind(panic);
                    }
                }
                self.finished.notify_all();
                continue;
            }
            tickets = self
                .finished
                .wait(tickets)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Flights by root identity.
pub(crate) struct Flights<V> {
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
    pub(crate) fn get(&self, id: &str) -> Arc<Flight<V>> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(id.to_string()).or_default().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    fn path(s: &str) -> FilePath {
        FilePath::parse(s).unwrap()
    }

    /// Snapshots of `paths`, each holding its own name as bytes.
    fn kept(paths: &[FilePath]) -> HashMap<FilePath, Arc<Snapshot>> {
        paths
            .iter()
            .map(|p| {
                (
                    p.clone(),
                    Arc::new(Snapshot::from_bytes(p.as_str().as_bytes()).unwrap()),
                )
            })
            .collect()
    }

    fn bytes(answer: &Answer<u32>) -> Option<Vec<u8>> {
        answer.snapshot.as_ref().map(|s| s.read_at(0, 64).unwrap())
    }

    /// The interleaving that lost snapshots before tickets: A waits through a
    /// run it did not register for, a run D leads answers A, and E's later
    /// run finishes before A wakes up. A must get ITS run's snapshot of its
    /// file, not E's run (which holds none).
    #[test]
    fn a_waiter_gets_the_run_that_took_its_ticket() {
        let mut t: Tickets<u32> = Tickets::default();
        let x = t.arrive(None);
        let first = t.start().unwrap();
        let a = t.arrive(Some(&path("a.md")));
        assert!(t.start().is_none(), "one run at a time");
        t.finish(first, 1, &HashMap::new());
        assert!(t.take(x).is_some());
        assert!(t.take(a).is_none(), "A arrived after the first run started");
        let d = t.arrive(Some(&path("d.md")));
        let second = t.start().unwrap();
        assert_eq!(second.wanted(), [path("a.md"), path("d.md")]);
        t.finish(second, 2, &kept(&[path("a.md"), path("d.md")]));
        let e = t.arrive(Some(&path("e.md")));
        let third = t.start().unwrap();
        t.finish(third, 3, &kept(&[path("e.md")]));
        let got = t.take(a).unwrap();
        assert_eq!(*got.verdict, 2);
        assert_eq!(bytes(&got).unwrap(), b"a.md");
        assert_eq!(bytes(&t.take(d).unwrap()).unwrap(), b"d.md");
        assert_eq!(bytes(&t.take(e).unwrap()).unwrap(), b"e.md");
    }

    /// Two requests for the same file in one run both get its bytes.
    #[test]
    fn requests_for_the_same_file_share_its_snapshot() {
        let mut t: Tickets<u32> = Tickets::default();
        let a = t.arrive(Some(&path("f")));
        let b = t.arrive(Some(&path("f")));
        let run = t.start().unwrap();
        assert_eq!(run.wanted(), [path("f")]);
        t.finish(run, 1, &kept(&[path("f")]));
        assert_eq!(bytes(&t.take(a).unwrap()).unwrap(), b"f");
        assert_eq!(bytes(&t.take(b).unwrap()).unwrap(), b"f");
        assert!(t.take(a).is_none(), "an answer is taken once");
    }

    #[test]
    fn an_abandoned_run_leaves_its_tickets_for_the_next() {
        let mut t: Tickets<u32> = Tickets::default();
        let a = t.arrive(Some(&path("f")));
        let run = t.start().unwrap();
        let b = t.arrive(None);
        t.abandon(run);
        let again = t.start().unwrap();
        t.finish(again, 7, &kept(&[path("f")]));
        assert_eq!(bytes(&t.take(a).unwrap()).unwrap(), b"f");
        assert_eq!(*t.take(b).unwrap().verdict, 7);
    }

    /// Every interleaving of three requests (each: arrive, then try to lead
    /// or wait, then finish the run it leads) answers each request exactly
    /// once, from a run that started after it arrived, with its own file.
    #[test]
    fn every_interleaving_of_three_requests() {
        #[derive(Clone, Copy, PartialEq, Debug)]
        enum Step {
            Arrive,
            Lead,
            Finish,
            Done,
        }
        #[derive(Clone)]
        struct World {
            t: Tickets<u64>,
            steps: [Step; 3],
            tickets: [Option<Ticket>; 3],
            arrived_at: [u64; 3],
            leading: [Option<(Batch, u64)>; 3],
            clock: u64,
        }
        let files = [path("0"), path("1"), path("2")];
        fn explore(w: World, files: &[FilePath; 3], count: &mut usize) {
            let mut progressed = false;
            for i in 0..3 {
                let mut w = w.clone();
                match w.steps[i] {
                    Step::Arrive => {
                        w.clock += 1;
                        w.arrived_at[i] = w.clock;
                        w.tickets[i] = Some(w.t.arrive(Some(&files[i])));
                        w.steps[i] = Step::Lead;
                    }
                    Step::Lead => {
                        let ticket = w.tickets[i].unwrap();
                        if let Some(answer) = w.t.take(ticket) {
                            assert!(
                                *answer.verdict > w.arrived_at[i],
                                "request {i} got a run that started before it arrived"
                            );
                            let got = answer.snapshot.unwrap().read_at(0, 8).unwrap();
                            assert_eq!(got, files[i].as_str().as_bytes(), "request {i}");
                            w.steps[i] = Step::Done;
                        } else if let Some(batch) = w.t.start() {
                            w.clock += 1;
                            w.leading[i] = Some((batch, w.clock));
                            w.steps[i] = Step::Finish;
                        } else {
                            // Waiting: only progress elsewhere can help.
                            continue;
                        }
                    }
                    Step::Finish => {
                        let (batch, started) = w.leading[i].take().unwrap();
                        let wanted = batch.wanted();
                        w.t.finish(batch, started, &kept(&wanted));
                        w.steps[i] = Step::Lead;
                    }
                    Step::Done => continue,
                }
                progressed = true;
                explore(w, files, count);
            }
            if !progressed {
                assert!(
                    w.steps.iter().all(|s| *s == Step::Done),
                    "stuck: {:?}",
                    w.steps
                );
                *count += 1;
            }
        }
        let world = World {
            t: Tickets::default(),
            steps: [Step::Arrive; 3],
            tickets: [None; 3],
            arrived_at: [0; 3],
            leading: [None, None, None],
            clock: 0,
        };
        let mut count = 0;
        explore(world, &files, &mut count);
        assert!(count > 100, "explored {count} interleavings");
    }

    #[test]
    fn each_request_gets_a_run_that_started_after_it() {
        let flight: Arc<Flight<u64>> = Arc::new(Flight::default());
        let clock = Arc::new(AtomicU64::new(0));
        let runs = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::new();
        for i in 0..16 {
            let (flight, clock, runs) = (flight.clone(), clock.clone(), runs.clone());
            handles.push(std::thread::spawn(move || {
                let mine = path(&format!("f{i}"));
                for _ in 0..50 {
                    let arrived = clock.fetch_add(1, Ordering::SeqCst);
                    let answer = flight.fresh(Some(&mine), |wanted| {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let start = clock.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_micros(200));
                        (start, kept(wanted))
                    });
                    assert!(
                        *answer.verdict > arrived,
                        "run started at {} before arrival {arrived}",
                        answer.verdict
                    );
                    let got = answer.snapshot.expect("every request gets its file");
                    assert_eq!(got.read_at(0, 8).unwrap(), mine.as_str().as_bytes());
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
    fn unrequested_bytes_are_not_handed_out() {
        let flight: Flight<()> = Flight::default();
        let a = path("a");
        let answer = flight.fresh(Some(&a), |wanted| {
            assert_eq!(wanted, [path("a")]);
            ((), kept(&[path("a"), path("b")]))
        });
        assert_eq!(answer.snapshot.unwrap().read_at(0, 9).unwrap(), b"a");
        let none = flight.fresh(None, |_| ((), kept(&[path("a")])));
        assert!(none.snapshot.is_none());
    }
}

//! Where a request runs. Most run on the FUSE thread that received them. A
//! request that may hash ("heavy": verifying a bundle, or reading a bundle
//! file's bytes again, can take a while) runs there too while few such
//! requests do; beyond that it is handed, with its
//! reply, to a verification worker, so that some FUSE threads always remain
//! free for ordinary requests however many bundles are being hashed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

/// Runs requests against a shared `T`, inline or on a worker.
pub struct Dispatch<T> {
    shared: Arc<T>,
    inline_busy: Arc<AtomicUsize>,
    inline_max: usize,
    queue: Sender<Job>,
}

impl<T: Send + Sync + 'static> Dispatch<T> {
    /// `inline_max` heavy requests at most run on FUSE threads at once; the
    /// rest wait for one of `workers` threads.
    pub fn new(shared: Arc<T>, inline_max: usize, workers: usize) -> Dispatch<T> {
        let (queue, jobs) = channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        for i in 0..workers {
            let jobs = jobs.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("seal-verify-{i}"))
                .spawn(move || {
                    yield_to_requests();
                    loop {
                        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => break,
                        }
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("cannot start verification worker {i}: {e}");
            }
        }
        Dispatch {
            shared,
            inline_busy: Arc::new(AtomicUsize::new(0)),
            inline_max: inline_max.max(1),
            queue,
        }
    }

    pub fn shared(&self) -> &Arc<T> {
        &self.shared
    }

    /// Runs `work` here, unless an inline slot is not free and `heavy` says
    /// the request may hash: then on a worker.
    ///
    /// `heavy` is asked only when every inline slot is taken. Asking builds
    /// and places the request's path, which for a light request costs as
    /// much as the request itself; while a slot is free any request may
    /// take it, and the rule that keeps FUSE threads free for ordinary
    /// requests (at most `inline_max` requests in slots, hashing or not)
    /// holds all the same.
    pub fn run(&self, heavy: impl FnOnce(&T) -> bool, work: impl FnOnce(&T) + Send + 'static) {
        if self.inline_busy.fetch_add(1, Ordering::AcqRel) < self.inline_max {
            let _slot = Slot(&self.inline_busy);
            return work(&self.shared);
        }
        self.inline_busy.fetch_sub(1, Ordering::AcqRel);
        self.run_heavy_elsewhere(heavy, work);
    }

    /// Runs `work` here unless `heavy` says the request may hash: then
    /// always on a worker. For a thread that alone serves a
    /// queue of requests (a CPU's ring), which one hashing would stall.
    pub fn run_heavy_elsewhere(
        &self,
        heavy: impl FnOnce(&T) -> bool,
        work: impl FnOnce(&T) + Send + 'static,
    ) {
        if !heavy(&self.shared) {
            return work(&self.shared);
        }
        let shared = self.shared.clone();
        // The worker serves the request as it arrived here (a worker serves
        // no request of its own, so it has no arrival outside one).
        let arrival = seal_gate::feed::RequestScope::arrival();
        let job = move || {
            let _request = arrival.map(seal_gate::feed::RequestScope::resume);
            work(&shared)
        };
        if let Err(job) = self.queue.send(Box::new(job)) {
            // No worker left (shutting down): run it here after all.
            (job.0)();
        }
    }
}

/// The niceness of the verification workers (and of the hashing threads
/// they start, which inherit it): a verification is throughput, a request
/// waiting on a ring or a FUSE thread is latency, so on a busy machine the
/// threads that answer requests run first.
const VERIFY_NICE: i32 = 10;

/// Lowers the calling thread (a verification worker) below the threads
/// that answer requests (any user may lower its own threads).
fn yield_to_requests() {
    let me = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(me), VERIFY_NICE) {
        tracing::debug!("a verification worker keeps its priority: {e}");
    }
}

/// An inline slot taken: given back when the work ends, even by a panic
/// (a slot lost for good would leave one heavy request fewer inline).
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn heavy_work_beyond_the_limit_goes_to_a_worker() {
        let d = Arc::new(Dispatch::new(Arc::new(()), 1, 1));
        let here = std::thread::current().id();
        let (release, hold) = channel::<()>();
        let (ran_on, threads) = channel();
        // The first heavy job holds the only inline slot until released.
        let d2 = d.clone();
        let first = std::thread::spawn(move || {
            d2.run(
                |_| true,
                move |_| {
                    let _ = hold.recv_timeout(Duration::from_secs(10));
                },
            )
        });
        std::thread::sleep(Duration::from_millis(50));
        let tx = ran_on.clone();
        d.run(
            |_| true,
            move |_| tx.send(std::thread::current().id()).unwrap(),
        );
        let worker = threads.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_ne!(worker, here, "over the limit: ran on a worker");
        d.run(
            |_| false,
            move |_| ran_on.send(std::thread::current().id()).unwrap(),
        );
        assert_eq!(threads.recv().unwrap(), here, "light work runs inline");
        release.send(()).unwrap();
        first.join().unwrap();
    }

    #[test]
    fn weight_is_asked_only_when_every_inline_slot_is_taken() {
        let d = Dispatch::new(Arc::new(()), 1, 1);
        let here = std::thread::current().id();
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let ask = |_: &()| {
            asked.fetch_add(1, Ordering::SeqCst);
            true
        };
        let (ran_on, threads) = channel();
        // A free slot: run here, unasked, heavy or not.
        let tx = ran_on.clone();
        d.run(ask, move |_| tx.send(std::thread::current().id()).unwrap());
        assert_eq!(threads.recv().unwrap(), here);
        assert_eq!(
            asked.load(Ordering::SeqCst),
            0,
            "a free slot needs no answer"
        );
        // The slot given back after the work (a second request finds it
        // free again), and asked when it is taken: from inside a job that
        // holds the only slot.
        let d = Arc::new(d);
        let inner = d.clone();
        let (asked_tx, asked_rx) = channel();
        d.run(
            |_| unreachable!("the slot is free"),
            move |_| {
                let asked_here = Arc::new(AtomicUsize::new(0));
                let counter = asked_here.clone();
                inner.run(
                    move |_| {
                        counter.fetch_add(1, Ordering::SeqCst);
                        false
                    },
                    |_| {},
                );
                asked_tx.send(asked_here.load(Ordering::SeqCst)).unwrap();
            },
        );
        assert_eq!(
            asked_rx.recv().unwrap(),
            1,
            "a taken slot: the weight is asked"
        );
        // A panicking job gives its slot back.
        let d2 = d.clone();
        let _ = std::thread::spawn(move || d2.run(|_| true, |_| panic!("boom"))).join();
        d.run(
            |_| unreachable!("the panicked job's slot is free again"),
            |_| {},
        );
    }
}

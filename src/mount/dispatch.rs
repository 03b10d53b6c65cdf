//! Where a request runs. Most run on the FUSE thread that received them. A
//! request that may verify a bundle ("heavy": hashing can take a while) runs
//! there too while few such requests do; beyond that it is handed, with its
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

    /// Runs `work` here, unless it is heavy and the FUSE threads already
    /// doing heavy work are at their limit: then on a worker.
    pub fn run(&self, heavy: bool, work: impl FnOnce(&T) + Send + 'static) {
        if !heavy {
            return work(&self.shared);
        }
        if self.inline_busy.fetch_add(1, Ordering::AcqRel) < self.inline_max {
            work(&self.shared);
            self.inline_busy.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.inline_busy.fetch_sub(1, Ordering::AcqRel);
        let shared = self.shared.clone();
        // The worker serves the request as it arrived here (a worker serves
        // no request of its own, so it has no arrival outside one).
        let arrival = crate::feed::RequestScope::arrival();
        let job = move || {
            let _request = arrival.map(crate::feed::RequestScope::resume);
            work(&shared)
        };
        if let Err(job) = self.queue.send(Box::new(job)) {
            // No worker left (shutting down): run it here after all.
            (job.0)();
        }
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
            d2.run(true, move |_| {
                let _ = hold.recv_timeout(Duration::from_secs(10));
            })
        });
        std::thread::sleep(Duration::from_millis(50));
        let tx = ran_on.clone();
        d.run(true, move |_| tx.send(std::thread::current().id()).unwrap());
        let worker = threads.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_ne!(worker, here, "over the limit: ran on a worker");
        d.run(false, move |_| {
            ran_on.send(std::thread::current().id()).unwrap()
        });
        assert_eq!(threads.recv().unwrap(), here, "light work runs inline");
        release.send(()).unwrap();
        first.join().unwrap();
    }
}

//! Checks that run on worker threads while the caller, under the GIL,
//! goes on reading records: what a walk under the GIL cannot pass is sent
//! in batches as it is met, so the checking overlaps the reading.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use pyo3::prelude::*;

/// How many jobs go to the pool at once.
const BATCH: usize = 32;

/// What a batch of jobs becomes: results by index, or the panic a job
/// raised.
type Done<R> = std::thread::Result<Vec<(usize, R)>>;

/// A batch of jobs, with their indices.
type Batch<J> = Vec<(usize, J)>;

/// Jobs of type `J` run on worker threads into results of type `R`, by
/// index, on as few workers as keep up with the caller.
pub struct Pool<J, R> {
    run: Arc<dyn Fn(Batch<J>) -> Vec<(usize, R)> + Send + Sync>,
    batch: Batch<J>,
    jobs: Option<mpsc::Sender<Batch<J>>>,
    queue: Arc<Mutex<mpsc::Receiver<Batch<J>>>>,
    tx: mpsc::Sender<Done<R>>,
    rx: mpsc::Receiver<Done<R>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    sent: usize,
    /// Batches the workers have finished.
    done: Arc<AtomicUsize>,
}

impl<J: Send + 'static, R: Send + 'static> Pool<J, R> {
    /// A pool whose batches `run` turns into results.
    pub fn new(run: impl Fn(Batch<J>) -> Vec<(usize, R)> + Send + Sync + 'static) -> Self {
        let (tx, rx) = mpsc::channel();
        let (jobs, queue) = mpsc::channel();
        Pool {
            run: Arc::new(run),
            batch: Vec::with_capacity(BATCH),
            jobs: Some(jobs),
            queue: Arc::new(Mutex::new(queue)),
            tx,
            rx,
            workers: Vec::new(),
            sent: 0,
            done: Arc::default(),
        }
    }

    /// Job `i`.
    pub fn push(&mut self, i: usize, job: J) {
        self.batch.push((i, job));
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        // One worker, the caller keeping a core to read on; up to one per
        // core when the batches queue up faster than they are checked.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let behind = self.sent - self.done.load(Ordering::Relaxed);
        if self.workers.is_empty() || (behind > 2 && self.workers.len() < cores) {
            self.spawn();
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.sent += 1;
        if let Some(jobs) = &self.jobs {
            // The workers hold the queue until it is closed.
            let _ = jobs.send(batch);
        }
    }

    /// A worker: batches from the queue until it is closed, results to
    /// the caller (a panic included, raised again by `finish`).
    fn spawn(&mut self) {
        let (run, queue, tx) = (self.run.clone(), self.queue.clone(), self.tx.clone());
        let finished = self.done.clone();
        let worker = std::thread::Builder::new()
            .name("muranopl-check".into())
            .stack_size(8 << 20)
            .spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok(batch) = next else { return };
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(batch)));
                finished.fetch_add(1, Ordering::Relaxed);
                // The receiver is gone only when the caller stopped early.
                if tx.send(done).is_err() {
                    return;
                }
            });
        // With no thread to be had, the caller runs the batches.
        if let Ok(w) = worker {
            self.workers.push(w);
        }
    }

    /// Every result, by index, waited for without the GIL; a job's panic
    /// is raised again here.
    pub fn finish(mut self, py: Python<'_>) -> Vec<(usize, R)> {
        self.flush();
        drop(self.jobs.take());
        let mut out = Vec::new();
        if self.workers.is_empty() {
            // No worker could be made: what was queued is run here.
            let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            while let Ok(batch) = queue.try_recv() {
                out.extend((self.run)(batch));
            }
            return out;
        }
        let (rx, sent, workers) = (self.rx, self.sent, self.workers);
        let batches: Vec<Done<R>> = py.detach(move || {
            let got = rx.iter().take(sent).collect();
            for w in workers {
                let _ = w.join();
            }
            got
        });
        for b in batches {
            match b {
                Ok(b) => out.extend(b),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    }
}

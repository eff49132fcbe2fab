//! Checks that run on the thread pool while the caller, under the GIL,
//! goes on reading records: what a walk under the GIL cannot pass is sent
//! in batches as it is met, so the checking overlaps the reading.

use std::sync::mpsc;
use std::sync::Arc;

use pyo3::prelude::*;

/// How many jobs go to the pool at once. A batch is worth waking a pool
/// thread for only when it holds more work than the wake-up and, on a
/// busy machine, the wait for the thread to be scheduled cost: with 32,
/// the few checks of a batch whose failures repeat (W7's sixty-odd) went
/// to two pool threads that competed with the caller's thread for the
/// cores, and `validate_objects` took a tenth longer under load than with
/// every check on the caller's thread. Fewer jobs than this all run on
/// the caller's thread ([`Pool::finish`]).
const BATCH: usize = 256;

/// What a batch of jobs becomes: results by index, or the panic a job
/// raised.
type Done<R> = std::thread::Result<Vec<(usize, R)>>;

/// Jobs of type `J` run on the pool into results of type `R`, by index.
pub struct Pool<J, R> {
    run: Arc<dyn Fn(Vec<(usize, J)>) -> Vec<(usize, R)> + Send + Sync>,
    batch: Vec<(usize, J)>,
    tx: mpsc::Sender<Done<R>>,
    rx: mpsc::Receiver<Done<R>>,
    sent: usize,
}

impl<J: Send + 'static, R: Send + 'static> Pool<J, R> {
    /// A pool whose batches `run` turns into results.
    pub fn new(run: impl Fn(Vec<(usize, J)>) -> Vec<(usize, R)> + Send + Sync + 'static) -> Self {
        let (tx, rx) = mpsc::channel();
        Pool {
            run: Arc::new(run),
            batch: Vec::with_capacity(BATCH),
            tx,
            rx,
            sent: 0,
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
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let (run, tx) = (self.run.clone(), self.tx.clone());
        self.sent += 1;
        rayon::spawn(move || {
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(batch)));
            // The receiver is gone only when the caller stopped on an error.
            let _ = tx.send(done);
        });
    }

    /// Every result, by index, waited for without the GIL; a job's panic
    /// is raised again here. The last, partial batch runs on this thread
    /// (which would only wait): a call with few jobs (a batch of records
    /// whose failures repeat) waits for no other thread to be scheduled,
    /// which on a loaded machine cost more than the jobs.
    pub fn finish(self, py: Python<'_>) -> Vec<(usize, R)> {
        let (rx, sent, run, last) = (self.rx, self.sent, self.run, self.batch);
        let batches: Vec<Done<R>> = py.detach(move || {
            let mut all = Vec::with_capacity(sent + 1);
            if !last.is_empty() {
                all.push(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                    || run(last),
                )));
            }
            all.extend(rx.iter().take(sent));
            all
        });
        let mut out = Vec::new();
        for b in batches {
            match b {
                Ok(b) => out.extend(b),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    }
}

/// The interpreter's cyclic garbage collector, paused while a result of
/// many new containers is built under the GIL (and started again when
/// this drops, if it was running).
///
/// Each list appended counts toward a collection: building ten thousand
/// of them ran about fourteen young-generation collections, and the
/// middle generation's promoted every list still being built to the old
/// one, so that most calls also ran a full collection over all the
/// caller's data (a fifth of `validate_objects`' time on W7). Paused,
/// the new lists are looked at once, by the next collection, and leave
/// the young generation only if they outlive it. No Python code runs
/// while it is paused but what the building calls (a `Violation`
/// constructor), and the GIL is held throughout, so no other thread runs
/// while it is paused.
pub struct GcPause<'py> {
    gc: Option<Bound<'py, PyModule>>,
}

impl<'py> GcPause<'py> {
    /// Pauses the collector, if it runs.
    pub fn new(py: Python<'py>) -> PyResult<GcPause<'py>> {
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause { gc: None });
        }
        gc.call_method0("disable")?;
        Ok(GcPause { gc: Some(gc) })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.gc {
            // `gc.enable()` does not fail.
            let _ = gc.call_method0("enable");
        }
    }
}

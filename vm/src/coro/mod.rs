//! Green threads: MuranoPL `Parallel` branches and `pselect` bodies run as
//! stackful coroutines (corosensei) under a deterministic FIFO scheduler.
//!
//! A green thread gives way at [`yield_now`] (`sleep()` and blocking host
//! calls); the scheduler then resumes the next runnable thread in order, so
//! runs are reproducible. The raw-pointer plumbing that lets `yield_now`
//! reach the running coroutine's yielder is confined to this module.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::collections::VecDeque;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// Stack size of one green thread.
pub const STACK_SIZE: usize = 4 << 20;

// Per-OS-thread scheduler state: one scheduler runs on one OS thread and
// its green threads never leave it. The running thread's identity
// (`CURRENT`, `CURRENT_ID`) and its evaluation depth (`interp::DEPTH`) are
// switched by `run` around every resume, so green threads never see each
// other's.
thread_local! {
    static CURRENT: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    static CURRENT_ID: Cell<u64> = const { Cell::new(0) };
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    /// The virtual clock, in seconds.
    static CLOCK: Cell<f64> = const { Cell::new(0.0) };
    /// The wake-up time the running green thread asked for when it yielded.
    static WAKE: Cell<f64> = const { Cell::new(0.0) };
}

/// The virtual clock (seconds since the first green thread started).
pub fn now() -> f64 {
    CLOCK.with(|c| c.get())
}

/// Sleeps `secs` seconds of virtual time: the scheduler resumes the other
/// green threads that are due earlier first. Outside green threads the
/// clock simply advances.
pub fn sleep(secs: f64) {
    let secs = if secs.is_finite() && secs > 0.0 {
        secs
    } else {
        0.0
    };
    let wake = now() + secs;
    if !in_green_thread() {
        CLOCK.with(|c| c.set(wake));
        return;
    }
    WAKE.with(|w| w.set(wake));
    yield_now();
}

/// The id of the running green thread (0 outside green threads).
pub fn current_id() -> u64 {
    CURRENT_ID.with(|c| c.get())
}

/// True when called from inside a green thread.
pub fn in_green_thread() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Gives way to the other green threads of the innermost scheduler; a no-op
/// outside green threads.
pub fn yield_now() {
    let y = CURRENT.with(|c| c.get());
    if y.is_null() {
        return;
    }
    // A plain yield is due now.
    if WAKE.with(|w| w.get()) < now() {
        WAKE.with(|w| w.set(now()));
    }
    // SAFETY: `CURRENT` is non-null only while `run` is inside
    // `Coroutine::resume` of the coroutine that owns this yielder (it is set
    // right before the resume and restored right after), and the yielder
    // lives on that coroutine's stack for the whole body. `suspend` is
    // called on the coroutine's own stack, as corosensei requires.
    unsafe { (*y).suspend(()) };
}

type Task<T> = Box<dyn FnOnce() -> T>;

struct Thread<T> {
    id: u64,
    wake: f64,
    index: usize,
    co: Coroutine<(), (), T, DefaultStack>,
    /// The evaluation depth of this thread while it is switched out.
    depth: u32,
    yielder: std::rc::Rc<Cell<*const Yielder<(), ()>>>,
}

/// Runs `tasks` as green threads, at most `limit` at a time (`0` = no
/// limit), and returns their results in task order.
pub fn run<T: 'static>(tasks: Vec<Task<T>>, limit: usize) -> Vec<T> {
    let n = tasks.len();
    let limit = if limit == 0 { n.max(1) } else { limit };
    let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut pending: VecDeque<(usize, Task<T>)> = tasks.into_iter().enumerate().collect();
    let mut ready: VecDeque<Thread<T>> = VecDeque::new();
    loop {
        while ready.len() < limit {
            let Some((index, task)) = pending.pop_front() else {
                break;
            };
            let cell = std::rc::Rc::new(Cell::new(std::ptr::null()));
            let cell2 = cell.clone();
            let stack = DefaultStack::new(STACK_SIZE).expect("green thread stack");
            let co = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                cell2.set(y as *const _);
                CURRENT.with(|c| c.set(y as *const _));
                task()
            });
            let id = NEXT_ID.with(|c| {
                let v = c.get();
                c.set(v + 1);
                v
            });
            ready.push_back(Thread {
                wake: now(),
                depth: crate::interp::depth(),
                id,
                index,
                co,
                yielder: cell,
            });
        }
        // The thread due first (FIFO among equals) runs next; the virtual
        // clock jumps to its wake-up time.
        let Some(next) = ready
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.wake.total_cmp(&b.1.wake).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i)
        else {
            break;
        };
        let mut t = ready.remove(next).expect("ready thread");
        if t.wake > now() {
            CLOCK.with(|c| c.set(t.wake));
        }
        WAKE.with(|w| w.set(now()));
        let prev = CURRENT.with(|c| c.replace(t.yielder.get()));
        let prev_id = CURRENT_ID.with(|c| c.replace(t.id));
        let outer_depth = crate::interp::swap_depth(t.depth);
        let r = t.co.resume(());
        t.depth = crate::interp::swap_depth(outer_depth);
        CURRENT.with(|c| c.set(prev));
        CURRENT_ID.with(|c| c.set(prev_id));
        match r {
            CoroutineResult::Yield(()) => {
                t.wake = WAKE.with(|w| w.get());
                ready.push_back(t)
            }
            CoroutineResult::Return(v) => results[t.index] = Some(v),
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("green thread finished"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeping_threads_wake_in_virtual_time_order() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mk = |name: &'static str, secs: f64, log: Rc<RefCell<Vec<String>>>| -> Task<()> {
            Box::new(move || {
                sleep(secs);
                log.borrow_mut().push(name.to_string());
            })
        };
        let start = now();
        run(
            vec![
                mk("slow", 5.0, log.clone()),
                mk("fast", 1.0, log.clone()),
                mk("mid", 2.0, log.clone()),
            ],
            0,
        );
        assert_eq!(*log.borrow(), vec!["fast", "mid", "slow"]);
        assert!((now() - start - 5.0).abs() < 1e-9);
    }
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn interleaves_at_yield_points_in_fifo_order() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mk = |name: &'static str, log: Rc<RefCell<Vec<String>>>| -> Task<usize> {
            Box::new(move || {
                log.borrow_mut().push(format!("{name} enter"));
                yield_now();
                log.borrow_mut().push(format!("{name} exit"));
                name.len()
            })
        };
        let r = run(
            vec![
                mk("a", log.clone()),
                mk("bb", log.clone()),
                mk("ccc", log.clone()),
            ],
            2,
        );
        assert_eq!(r, vec![1, 2, 3]);
        // With Limit 2 the third thread starts when the first one ends and
        // queues behind the second, as in the reference's green pool.
        assert_eq!(
            *log.borrow(),
            vec![
                "a enter",
                "bb enter",
                "a exit",
                "bb exit",
                "ccc enter",
                "ccc exit"
            ]
        );
        assert!(!in_green_thread());
    }
}

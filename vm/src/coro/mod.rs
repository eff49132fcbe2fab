//! Green threads: MuranoPL `Parallel` branches and `pselect` bodies run as
//! stackful coroutines (corosensei) under a deterministic FIFO scheduler.
//!
//! A green thread gives way at [`yield_now`] (`sleep()` and blocking host
//! calls); the scheduler then resumes the next runnable thread in order, so
//! runs are reproducible. The raw-pointer plumbing that lets `yield_now`
//! reach the running coroutine's yielder is confined to this module.
//!
//! The scheduler is a value, [`Scheduler`], that each execution owns (its
//! virtual clock, its thread ids, its park/unpark epoch): two executions on
//! one OS thread never see each other's. Only the identity of the
//! coroutine running on the OS thread is a thread-local, set around each
//! switch and restored after it.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// Stack size of [`on_big_stack`]: address space reserved, not memory
/// used (the pages are committed as the stack grows), sized like the
/// CLI's main thread.
pub const STACK_SIZE: usize = 256 << 20;

/// Stack size of one green thread: what the engine's depth limit needs
/// (`interp::MAX_DEPTH` nested MuranoPL calls took 2-4 MiB in a release
/// build; values nested a million deep are dropped, printed, compared and
/// converted without recursion), with room to spare, and more for debug
/// builds' larger frames. Each thread reserves this much address space,
/// so tens of thousands can run at once, and a limit on the address space
/// bounds how many (starting one past it is a `MemoryError`).
pub const GREEN_STACK_SIZE: usize = if cfg!(debug_assertions) {
    64 << 20
} else {
    16 << 20
};

// The coroutine running on this OS thread: the one place a green thread
// can find its own yielder, which is why it cannot live in the
// [`Scheduler`] value (a scheduler shared by two OS threads would hand one
// the other's stack to switch to). `run_seeded` sets both right before it
// resumes a green thread and puts back what it found right after, so
// outside a resume they hold what they held before (null and 0 outside
// green threads): nothing stays in them from one execution to the next.
thread_local! {
    static CURRENT: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    static CURRENT_ID: Cell<u64> = const { Cell::new(0) };
}

/// The green-thread scheduler of one execution: its virtual clock, the
/// ids it gives its threads, and the slots its threads and its run loop
/// hand each other across a switch. The executor owns one, so two
/// executions (on one OS thread or not) never see each other's clock or
/// thread ids; the run loops of nested `Parallel`s share their
/// execution's. `Sync` (atomics and locks), so that the executor that
/// owns it can be shared; one execution runs on one OS thread.
#[derive(Debug)]
pub struct Scheduler {
    /// The virtual clock, in seconds (`f64` bits).
    clock: AtomicU64,
    /// The id of the next green thread.
    next_id: AtomicU64,
    /// The wake-up time the running green thread asked for when it
    /// yielded (`f64` bits).
    wake: AtomicU64,
    /// Bumped by `unpark_all`: threads parked before it may run again.
    epoch: AtomicU64,
    /// Why the running green thread parks, set by `park` for the run loop.
    parking: Mutex<Option<String>>,
    /// Set by a run loop that found all its threads parked, for the parked
    /// thread it resumes: the deadlock's description.
    deadlock: Mutex<Option<String>>,
}

impl Default for Scheduler {
    fn default() -> Scheduler {
        Scheduler::new()
    }
}

fn take(slot: &Mutex<Option<String>>) -> Option<String> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

fn put(slot: &Mutex<Option<String>>, v: String) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
}

impl Scheduler {
    /// A scheduler whose clock reads 0 and whose first thread is `T1`.
    pub fn new() -> Scheduler {
        Scheduler {
            clock: AtomicU64::new(0f64.to_bits()),
            next_id: AtomicU64::new(1),
            wake: AtomicU64::new(0f64.to_bits()),
            epoch: AtomicU64::new(0),
            parking: Mutex::new(None),
            deadlock: Mutex::new(None),
        }
    }

    /// The virtual clock (seconds of sleep since the execution started).
    pub fn now(&self) -> f64 {
        f64::from_bits(self.clock.load(Ordering::Relaxed))
    }

    fn set_now(&self, t: f64) {
        self.clock.store(t.to_bits(), Ordering::Relaxed);
    }

    fn wake(&self) -> f64 {
        f64::from_bits(self.wake.load(Ordering::Relaxed))
    }

    fn set_wake(&self, t: f64) {
        self.wake.store(t.to_bits(), Ordering::Relaxed);
    }

    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Parks the running green thread until another one calls
    /// [`Scheduler::unpark_all`] (it released what this one waits for).
    /// `reason` says what it waits for. When every green thread of the
    /// run loops on this OS thread is parked, none can ever run: `park`
    /// then fails with a description of the deadlock naming each waiting
    /// thread and its reason. Outside green threads it fails at once
    /// (nothing could unpark the caller).
    pub fn park(&self, reason: String) -> Result<(), String> {
        if !in_green_thread() {
            return Err(format!("T{} {reason}", current_id()));
        }
        put(&self.parking, format!("T{} {reason}", current_id()));
        yield_now();
        match take(&self.deadlock) {
            Some(msg) => Err(msg),
            None => Ok(()),
        }
    }

    /// Lets every parked green thread run again (each re-checks what it
    /// waits for).
    pub fn unpark_all(&self) {
        self.epoch.fetch_add(1, Ordering::Relaxed);
    }

    /// Sleeps `secs` seconds of virtual time: the run loop resumes the
    /// other green threads that are due earlier first. Outside green
    /// threads the clock simply advances.
    pub fn sleep(&self, secs: f64) {
        let secs = if secs.is_finite() && secs > 0.0 {
            secs
        } else {
            0.0
        };
        let wake = self.now() + secs;
        if !in_green_thread() {
            self.set_now(wake);
            return;
        }
        self.set_wake(wake);
        yield_now();
    }
}

/// The id of the running green thread (0 outside green threads).
pub fn current_id() -> u64 {
    CURRENT_ID.with(|c| c.get())
}

/// True when called from inside a green thread.
pub fn in_green_thread() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Gives way to the other green threads of the innermost run loop; a
/// no-op outside green threads. A plain yield is due now (the run loop
/// makes it so); [`Scheduler::sleep`] asks for later.
pub fn yield_now() {
    let y = CURRENT.with(|c| c.get());
    if y.is_null() {
        return;
    }
    // SAFETY: `CURRENT` is non-null only while `run_seeded` is inside
    // `Coroutine::resume` of the coroutine that owns this yielder (it is
    // set right before the resume and restored right after), and the
    // yielder lives on that coroutine's stack for the whole body.
    // `suspend` is called on the coroutine's own stack, as corosensei
    // requires.
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
    /// Its time budget while it is switched out.
    budget: runtime::budget::State,
    yielder: std::rc::Rc<Cell<*const Yielder<(), ()>>>,
    /// Why it is parked, and the unpark epoch it parked in.
    parked: Option<(String, u64)>,
}

impl<T> Thread<T> {
    /// Not parked, or parked before `epoch` (something was released since).
    fn runnable(&self, epoch: u64) -> bool {
        match &self.parked {
            None => true,
            Some((_, parked_in)) => *parked_in != epoch,
        }
    }
}

/// The next draw of the deterministic generator seeded schedules use (a
/// 64-bit linear congruential generator, Knuth's MMIX constants): steps
/// `state` and returns the new state.
pub fn next_draw(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state
}

/// Chooses which of the threads due first runs next: the first in FIFO
/// order, or one drawn from a seeded generator (to test many schedules).
struct Picker(Option<u64>);

impl Picker {
    fn pick(&mut self, due: usize) -> usize {
        match &mut self.0 {
            None => 0,
            // The high bits are the generator's best.
            Some(x) => (next_draw(x) >> 33) as usize % due,
        }
    }
}

/// The most stacks of finished green threads kept for the next ones.
const MAX_FREE_STACKS: usize = 16;

impl Scheduler {
    /// Runs `tasks` as green threads, at most `limit` at a time (`0` = no
    /// limit), and returns their results in task order (`Err`: a green
    /// thread could not be started, see [`Scheduler::run_seeded`]).
    pub fn run<T: 'static>(&self, tasks: Vec<Task<T>>, limit: usize) -> Result<Vec<T>, String> {
        self.run_seeded(tasks, limit, None)
    }

    /// The index of the thread to run next: among the runnable threads
    /// due first, the one `picker` chooses; `None` when none is runnable.
    fn next_thread<T>(&self, ready: &VecDeque<Thread<T>>, picker: &mut Picker) -> Option<usize> {
        let epoch = self.epoch();
        let first = ready
            .iter()
            .filter(|t| t.runnable(epoch))
            .map(|t| t.wake)
            .min_by(f64::total_cmp)?;
        let due: Vec<usize> = (0..ready.len())
            .filter(|&i| ready[i].runnable(epoch) && ready[i].wake == first)
            .collect();
        Some(due[picker.pick(due.len())])
    }

    /// What to do when every thread of a run loop is parked. Inside an
    /// outer green thread, that thread parks in its own run loop (a thread
    /// there may release what these wait for); `Ok` when it was unparked.
    /// Otherwise no thread can ever run again: the deadlock's description.
    fn all_parked<T>(&self, ready: &VecDeque<Thread<T>>) -> Result<(), String> {
        let waits: Vec<&str> = ready
            .iter()
            .filter_map(|t| t.parked.as_ref().map(|p| p.0.as_str()))
            .collect();
        let waits = waits.join("; ");
        if in_green_thread() {
            return self.park(format!("runs green threads that wait: {waits}"));
        }
        Err(format!("every green thread waits on another: {waits}"))
    }

    /// [`Scheduler::run`], with the threads due at the same time taken in
    /// an order drawn from `seed` instead of FIFO order (`None`: FIFO).
    ///
    /// When a green thread cannot be started (its stack's address space
    /// cannot be mapped: more threads at once than the kernel's map limit
    /// or the process's address-space limit allow), no further task
    /// starts, the threads already running run to their end, and the
    /// result is `Err` with the reason.
    pub fn run_seeded<T: 'static>(
        &self,
        tasks: Vec<Task<T>>,
        limit: usize,
        seed: Option<u64>,
    ) -> Result<Vec<T>, String> {
        let mut picker = Picker(seed);
        let n = tasks.len();
        let limit = if limit == 0 { n.max(1) } else { limit };
        let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
        let mut failed = None;
        let mut pending: VecDeque<(usize, Task<T>)> = tasks.into_iter().enumerate().collect();
        let mut ready: VecDeque<Thread<T>> = VecDeque::new();
        // The stacks of finished threads, for the next ones to start on.
        let mut free: Vec<DefaultStack> = Vec::new();
        loop {
            while ready.len() < limit {
                let Some((index, task)) = pending.pop_front() else {
                    break;
                };
                match self.spawn(index, task, free.pop()) {
                    Ok(t) => ready.push_back(t),
                    Err(e) => {
                        failed = Some(format!(
                            "cannot start green thread {} of {n}: its stack ({} MiB of address \
                             space) cannot be mapped beside the {} running: {e}",
                            index + 1,
                            GREEN_STACK_SIZE >> 20,
                            ready.len()
                        ));
                        pending.clear();
                    }
                }
            }
            if ready.is_empty() {
                break;
            }
            // The runnable thread due first (FIFO among equals, unless
            // seeded) runs next; the virtual clock jumps to its wake-up
            // time. With every thread parked, a deadlock resumes the first
            // parked thread with its description, so that its `park` fails.
            let next = match self.next_thread(&ready, &mut picker) {
                Some(i) => i,
                None => match self.all_parked(&ready) {
                    Ok(()) => continue,
                    Err(msg) => {
                        put(&self.deadlock, msg);
                        0
                    }
                },
            };
            let Some(mut t) = ready.remove(next) else {
                unreachable!("next_thread picks a thread in `ready`")
            };
            match self.resume(&mut t) {
                CoroutineResult::Yield(()) => {
                    // A plain yield is due now (an inner run loop may have
                    // moved the clock past the wake-up time left here).
                    t.wake = self.wake().max(self.now());
                    t.parked = take(&self.parking).map(|r| (r, self.epoch()));
                    ready.push_back(t)
                }
                CoroutineResult::Return(v) => {
                    results[t.index] = Some(v);
                    if free.len() < MAX_FREE_STACKS {
                        free.push(t.co.into_stack());
                    }
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(results.into_iter().flatten().collect())
    }

    /// A green thread for `task`, on `stack` or a new one.
    fn spawn<T: 'static>(
        &self,
        index: usize,
        task: Task<T>,
        stack: Option<DefaultStack>,
    ) -> std::io::Result<Thread<T>> {
        let stack = match stack {
            Some(s) => s,
            None => DefaultStack::new(GREEN_STACK_SIZE)?,
        };
        let cell = std::rc::Rc::new(Cell::new(std::ptr::null()));
        let cell2 = cell.clone();
        let co = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
            cell2.set(y as *const _);
            CURRENT.with(|c| c.set(y as *const _));
            task()
        });
        Ok(Thread {
            wake: self.now(),
            depth: crate::interp::depth(),
            budget: runtime::budget::current(),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            index,
            co,
            yielder: cell,
            parked: None,
        })
    }

    /// Switches to `t` until it yields or returns, with its clock,
    /// identity, depth and budget in place, and back.
    fn resume<T>(&self, t: &mut Thread<T>) -> CoroutineResult<(), T> {
        t.parked = None;
        if t.wake > self.now() {
            self.set_now(t.wake);
        }
        self.set_wake(self.now());
        let prev = CURRENT.with(|c| c.replace(t.yielder.get()));
        let prev_id = CURRENT_ID.with(|c| c.replace(t.id));
        let outer_depth = crate::interp::swap_depth(t.depth);
        let outer_budget = runtime::budget::swap(t.budget);
        let r = t.co.resume(());
        t.budget = runtime::budget::swap(outer_budget);
        t.depth = crate::interp::swap_depth(outer_depth);
        CURRENT.with(|c| c.set(prev));
        CURRENT_ID.with(|c| c.set(prev_id));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeping_threads_wake_in_virtual_time_order() {
        let s = Rc::new(Scheduler::new());
        let log = Rc::new(RefCell::new(Vec::new()));
        let mk = |name: &'static str, secs: f64, log: Rc<RefCell<Vec<String>>>| -> Task<()> {
            let s = s.clone();
            Box::new(move || {
                s.sleep(secs);
                log.borrow_mut().push(name.to_string());
            })
        };
        let r = s.run(
            vec![
                mk("slow", 5.0, log.clone()),
                mk("fast", 1.0, log.clone()),
                mk("mid", 2.0, log.clone()),
            ],
            0,
        );
        assert_eq!(r, Ok(vec![(), (), ()]));
        assert_eq!(*log.borrow(), vec!["fast", "mid", "slow"]);
        assert!((s.now() - 5.0).abs() < 1e-9);
    }

    /// Two executions on one OS thread: each scheduler starts its clock at
    /// 0 and its thread ids at 1, whatever the other did before.
    #[test]
    fn schedulers_share_nothing() {
        let trace = || {
            let s = Rc::new(Scheduler::new());
            let s2 = s.clone();
            let task: Task<(u64, f64)> = Box::new(move || {
                s2.sleep(2.5);
                (current_id(), s2.now())
            });
            let r = s.run(vec![task], 0).unwrap();
            (r, s.now())
        };
        let first = trace();
        assert_eq!(first, (vec![(1, 2.5)], 2.5));
        assert_eq!(trace(), first);
        assert_eq!(current_id(), 0);
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
        let r = Scheduler::new().run(
            vec![
                mk("a", log.clone()),
                mk("bb", log.clone()),
                mk("ccc", log.clone()),
            ],
            2,
        );
        assert_eq!(r, Ok(vec![1, 2, 3]));
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

    #[test]
    fn parked_threads_wait_for_unpark_and_a_full_deadlock_fails_their_park() {
        let s = Rc::new(Scheduler::new());
        let open = Rc::new(Cell::new(false));
        let log = Rc::new(RefCell::new(Vec::new()));
        let (o1, l1, s1) = (open.clone(), log.clone(), s.clone());
        let waiter: Task<Result<(), String>> = Box::new(move || {
            while !o1.get() {
                s1.park("waits for the gate".into())?;
            }
            l1.borrow_mut().push("through");
            Ok(())
        });
        let (o2, l2, s2) = (open.clone(), log.clone(), s.clone());
        let opener: Task<Result<(), String>> = Box::new(move || {
            s2.sleep(3.0);
            l2.borrow_mut().push("open");
            o2.set(true);
            s2.unpark_all();
            Ok(())
        });
        let r = s.run(vec![waiter, opener], 0);
        assert_eq!(r, Ok(vec![Ok(()), Ok(())]));
        assert_eq!(*log.borrow(), vec!["open", "through"]);

        // Both wait for a gate nobody opens: each `park` fails in turn,
        // naming every waiting thread.
        let stuck = |name: &'static str| -> Task<Result<(), String>> {
            let s = s.clone();
            Box::new(move || s.park(format!("waits for {name}")))
        };
        let r = s.run(vec![stuck("x"), stuck("y")], 0);
        let r = r.unwrap();
        let e = r[0].clone().unwrap_err();
        assert!(
            e.starts_with("every green thread waits on another: T"),
            "{e}"
        );
        assert!(
            e.contains("waits for x") && e.contains("waits for y"),
            "{e}"
        );
        assert!(r[1].is_err());
    }

    #[test]
    fn a_seed_reorders_threads_due_together_and_replays() {
        let order = |seed| {
            let log = Rc::new(RefCell::new(Vec::new()));
            let tasks: Vec<Task<()>> = (0..6)
                .map(|i| {
                    let log = log.clone();
                    Box::new(move || log.borrow_mut().push(i)) as Task<()>
                })
                .collect();
            Scheduler::new().run_seeded(tasks, 0, seed).unwrap();
            let v = log.borrow().clone();
            v
        };
        assert_eq!(order(None), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(order(Some(7)), order(Some(7)));
        assert!((1..20).any(|s| order(Some(s)) != order(None)));
    }
}

// A spare big stack per OS thread for `on_big_stack`: scratch memory that
// holds nothing between calls (each call runs to completion on it).
thread_local! {
    static SPARE_STACK: RefCell<Option<DefaultStack>> = const { RefCell::new(None) };
}

/// Runs `f` on a stack of [`STACK_SIZE`] (reserved address space, committed
/// as used), whatever stack the caller has: embedders call the engine from
/// threads with small stacks, and dropping or printing a deeply nested
/// value recurses. One stack per OS thread is kept for the next call; a
/// nested call (already on it) runs in place. Panics propagate. When no
/// such stack can be mapped, `f` runs on the caller's stack.
pub fn on_big_stack<R>(f: impl FnOnce() -> R) -> R {
    match try_on_big_stack(f) {
        Ok(v) => v,
        Err((_, f)) => f(),
    }
}

/// [`on_big_stack`], or the error mapping its stack failed with and `f`,
/// which has not run.
pub fn try_on_big_stack<R, F: FnOnce() -> R>(f: F) -> Result<R, (std::io::Error, F)> {
    let mut stack = match SPARE_STACK.with(|s| s.borrow_mut().take()) {
        Some(s) => s,
        None => match DefaultStack::new(STACK_SIZE) {
            Ok(s) => s,
            Err(e) => return Err((e, f)),
        },
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        corosensei::on_stack(&mut stack, f)
    }));
    SPARE_STACK.with(|s| *s.borrow_mut() = Some(stack));
    match r {
        Ok(v) => Ok(v),
        Err(p) => std::panic::resume_unwind(p),
    }
}

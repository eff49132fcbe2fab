//! The time and memory budgets of an evaluation
//! ([`crate::Options::time_budget`], [`crate::Options::max_memory`]).
//!
//! An evaluation opens a [`Budget`] scope; long-running work (every
//! element a lazy sequence yields, see [`crate::seq`]) calls [`tick`],
//! which looks at the clock once every [`CHECK_EVERY`] ticks and fails with
//! a `TimeoutError` once the budget is spent. A scope opened inside
//! another (a MuranoPL method called from YAQL, a nested evaluation) never
//! extends the outer deadline.
//!
//! The clock starts at the first check, so that the many short evaluations
//! that never reach it (a contract check, a small condition) cost no clock
//! reads.
//!
//! The memory budget counts the bytes of every string and collection the
//! scope's values are made of ([`charge`], called by the value
//! constructors): bytes allocated, not bytes live, so it also bounds the
//! peak. Growth that would pass it fails before allocating
//! ([`reserve`], used where one operation builds a large string); the rest
//! is caught at the next [`tick`]. Green threads of one execution share
//! its meter: [`swap`] exchanges only the time part.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// How many ticks pass between two looks at the clock.
pub const CHECK_EVERY: u32 = 1024;

/// The time budget state of the code running on one OS thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    /// The budget of the innermost scope (`None`: unlimited).
    budget: Option<Duration>,
    /// When the scope's budget runs out, once the clock was first read.
    deadline: Option<Instant>,
    /// Ticks since the last look at the clock.
    ticks: u32,
}

/// The memory budget of the code running on one OS thread.
#[derive(Clone, Copy, Debug)]
struct Meter {
    /// Bytes the scope may allocate (`usize::MAX`: unlimited).
    quota: usize,
    /// Bytes allocated since the outermost memory-limited scope opened.
    spent: usize,
}

impl Meter {
    const UNLIMITED: Meter = Meter {
        quota: usize::MAX,
        spent: 0,
    };
    fn active(self) -> bool {
        self.quota != usize::MAX
    }
}

// The budgets of the evaluation running on this OS thread. Safe as
// thread-locals for the same reason as the evaluation depth
// (`vm::interp`): evaluation never migrates between OS threads. Green
// threads get their own time state (the scheduler swaps it with [`swap`]
// on every switch) and share the meter of their execution. Each scope
// restores what it replaced.
thread_local! {
    // Per OS thread, swapped per green thread, restored by every scope.
    static STATE: Cell<State> = const {
        Cell::new(State { budget: None, deadline: None, ticks: 0 })
    };
    // Per OS thread, shared by its green threads, restored by every scope.
    // No result depends on what an earlier evaluation left here: the
    // outermost scope starts the count at 0 and its end turns the meter off
    // (unlimited), and nested scopes only lower the quota. A value freed on
    // another thread never touches it (bytes are counted when made), and
    // threads that evaluate in parallel (validate's workers, serve's
    // workers) each open their own scope.
    static METER: Cell<Meter> = const { Cell::new(Meter::UNLIMITED) };
}

/// A budget scope: restores the enclosing budget when dropped.
#[must_use = "the budget applies while the scope is alive"]
pub struct Budget {
    prev: State,
    prev_meter: Meter,
    /// The scope shares the enclosing one's time budget: its clock, once
    /// started, goes back to the enclosing scope.
    shared: bool,
}

impl Budget {
    /// Opens a scope limited to `time` and to `memory` bytes allocated
    /// (and to what is left of the enclosing scope's, if any: a nested
    /// scope shares the enclosing meter).
    pub fn start(time: Option<Duration>, memory: Option<usize>) -> Budget {
        let prev = STATE.with(|s| s.get());
        let (next, shared) = Self::time_part(prev, time);
        STATE.with(|s| s.set(next));
        let prev_meter = METER.with(|m| m.get());
        if let Some(m) = memory {
            let next = if prev_meter.active() {
                Meter {
                    quota: prev_meter.quota.min(prev_meter.spent.saturating_add(m)),
                    ..prev_meter
                }
            } else {
                Meter { quota: m, spent: 0 }
            };
            METER.with(|c| c.set(next));
        }
        Budget {
            prev,
            prev_meter,
            shared,
        }
    }

    /// The time state of a scope opened within `prev`, and whether it
    /// shares `prev`'s clock.
    fn time_part(mut prev: State, budget: Option<Duration>) -> (State, bool) {
        let shared = prev.budget.is_some()
            && prev.deadline.is_none()
            && budget.is_none_or(|b| Some(b) >= prev.budget);
        if shared {
            // The enclosing clock has not started and this scope asks for no
            // less: share the enclosing budget (no clock read).
            return (prev, true);
        }
        let mut next = State {
            budget,
            deadline: None,
            ticks: 0,
        };
        if let Some(outer_budget) = prev.budget {
            // Within an enclosing budget: start its clock (if not yet) and
            // end no later than it.
            let now = Instant::now();
            let outer = *prev.deadline.get_or_insert(now + outer_budget);
            let deadline = budget.map_or(outer, |b| (now + b).min(outer));
            next.deadline = Some(deadline);
            next.budget = Some(budget.unwrap_or(outer_budget));
        }
        (next, false)
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        let (prev, shared) = (self.prev, self.shared);
        STATE.with(|s| {
            let now = s.get();
            s.set(if shared { now } else { prev })
        });
        let prev = self.prev_meter;
        METER.with(|m| {
            // What the scope allocated stays spent for an enclosing meter.
            let spent = if prev.active() {
                m.get().spent
            } else {
                prev.spent
            };
            m.set(Meter { spent, ..prev })
        });
    }
}

/// Counts a unit of work; fails once the time or memory budget is spent.
#[inline]
pub fn tick() -> Result<()> {
    let due = STATE.with(|s| {
        let mut st = s.get();
        st.ticks += 1;
        s.set(st);
        st.ticks >= CHECK_EVERY
    });
    if due {
        check()
    } else {
        Ok(())
    }
}

/// Every [`CHECK_EVERY`] ticks: the meter, then the clock.
#[cold]
#[inline(never)]
fn check() -> Result<()> {
    reserve(0)?;
    STATE.with(|s| {
        let mut st = s.get();
        st.ticks = 0;
        let r = match st.budget {
            None => Ok(()),
            Some(b) => {
                let now = Instant::now();
                let deadline = *st.deadline.get_or_insert(now + b);
                if now >= deadline {
                    Err(exceeded(b))
                } else {
                    Ok(())
                }
            }
        };
        s.set(st);
        r
    })
}

/// Counts `bytes` a value of this scope is made of. Past the memory
/// budget, the next [`tick`] fails.
#[inline]
pub fn charge(bytes: usize) {
    let over = METER.with(|m| {
        let mut meter = m.get();
        meter.spent = meter.spent.saturating_add(bytes);
        m.set(meter);
        meter.spent > meter.quota
    });
    if over {
        STATE.with(|s| {
            let st = s.get();
            s.set(State {
                ticks: CHECK_EVERY - 1,
                ..st
            })
        });
    }
}

/// Fails when allocating `bytes` more would pass the memory budget (the
/// bytes are charged when the value is made).
pub fn reserve(bytes: usize) -> Result<()> {
    let meter = METER.with(|m| m.get());
    if meter.spent.saturating_add(bytes) > meter.quota {
        return Err(memory_exceeded(meter.quota));
    }
    Ok(())
}

/// The error of a spent memory budget (`yaql`'s
/// `MemoryQuotaExceededException`, the kind a too large value gets).
fn memory_exceeded(quota: usize) -> Error {
    Error::new(
        ErrorKind::MemoryQuotaExceededException,
        format!("Expression consumed too much memory: its strings and collections took more than {quota} bytes in all (the max-memory limit)"),
    )
}

/// The error of a spent budget.
pub fn exceeded(budget: Duration) -> Error {
    Error::new(
        ErrorKind::TimeoutError,
        format!(
            "Evaluation exceeded its time budget of {:.3} s",
            budget.as_secs_f64()
        ),
    )
}

/// This thread's budget state (a new green thread starts with it).
pub fn current() -> State {
    STATE.with(|s| s.get())
}

/// Replaces this thread's time budget state, returning the previous one
/// (the green-thread scheduler swaps it on every switch). The memory meter
/// stays: the green threads of an execution share it.
pub fn swap(state: State) -> State {
    STATE.with(|s| s.replace(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin_until_error() -> Error {
        loop {
            if let Err(e) = tick() {
                return e;
            }
        }
    }

    #[test]
    fn a_spent_budget_fails_and_scopes_restore_what_they_replaced() {
        let outer = Budget::start(Some(Duration::from_millis(30)), None);
        {
            // An inner scope asking for more time still ends with the outer.
            let _inner = Budget::start(Some(Duration::from_secs(3600)), None);
            let t = Instant::now();
            let e = spin_until_error();
            assert_eq!(e.kind(), "TimeoutError");
            assert!(t.elapsed() < Duration::from_secs(5));
        }
        drop(outer);
        // Without a scope nothing is limited.
        for _ in 0..10 * CHECK_EVERY {
            tick().unwrap();
        }
        assert!(current().budget.is_none());
    }

    #[test]
    fn memory_is_counted_from_the_outermost_scope_and_checked_at_ticks() {
        let outer = Budget::start(None, Some(1000));
        charge(600);
        {
            // A nested scope shares the meter and cannot extend it; what it
            // allocates stays spent.
            let _inner = Budget::start(None, Some(10_000));
            assert!(reserve(400).is_ok());
            let e = reserve(401).unwrap_err();
            assert_eq!(e.kind(), "MemoryQuotaExceededException");
            charge(300);
        }
        let meter = || METER.with(|m| m.get());
        assert_eq!((meter().spent, meter().quota), (900, 1000));
        // Passing the budget fails the very next tick.
        charge(200);
        let e = tick().unwrap_err();
        assert_eq!(e.kind(), "MemoryQuotaExceededException");
        assert!(e.to_string().contains("1000 bytes"), "{e}");
        // A green-thread switch keeps the meter.
        let saved = swap(State::default());
        assert_eq!(meter().spent, 1100);
        assert!(reserve(0).is_err());
        swap(saved);
        drop(outer);
        assert!(!meter().active());
        charge(1 << 40);
        for _ in 0..2 * CHECK_EVERY {
            tick().unwrap();
        }
        assert!(reserve(1 << 40).is_ok());
    }
}

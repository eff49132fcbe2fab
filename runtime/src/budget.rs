//! The time budget of an evaluation ([`crate::Options::time_budget`]).
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

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// How many ticks pass between two looks at the clock.
pub const CHECK_EVERY: u32 = 1024;

/// The budget state of the code running on one OS thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    /// The budget of the innermost scope (`None`: unlimited).
    budget: Option<Duration>,
    /// When the scope's budget runs out, once the clock was first read.
    deadline: Option<Instant>,
    /// Ticks since the last look at the clock.
    ticks: u32,
}

// The budget of the evaluation running on this OS thread. Safe as a
// thread-local for the same reason as the evaluation depth
// (`vm::interp`): evaluation never migrates between OS threads, and green
// threads get their own state (the scheduler swaps it with [`swap`] on
// every switch). Each scope restores what it replaced.
thread_local! {
    // Per OS thread, swapped per green thread, restored by every scope.
    static STATE: Cell<State> = const {
        Cell::new(State { budget: None, deadline: None, ticks: 0 })
    };
}

/// A budget scope: restores the enclosing budget when dropped.
#[must_use = "the budget applies while the scope is alive"]
pub struct Budget {
    prev: State,
    /// The scope shares the enclosing one's budget: its clock, once
    /// started, goes back to the enclosing scope.
    shared: bool,
}

impl Budget {
    /// Opens a scope limited to `budget` (and to what is left of the
    /// enclosing scope's, if any).
    pub fn start(budget: Option<Duration>) -> Budget {
        let mut prev = STATE.with(|s| s.get());
        let mut next = State {
            budget,
            deadline: None,
            ticks: 0,
        };
        let shared = prev.budget.is_some()
            && prev.deadline.is_none()
            && budget.is_none_or(|b| Some(b) >= prev.budget);
        if shared {
            // The enclosing clock has not started and this scope asks for no
            // less: share the enclosing budget (no clock read).
            next = prev;
        } else if let Some(outer_budget) = prev.budget {
            // Within an enclosing budget: start its clock (if not yet) and
            // end no later than it.
            let now = Instant::now();
            let outer = *prev.deadline.get_or_insert(now + outer_budget);
            let deadline = budget.map_or(outer, |b| (now + b).min(outer));
            next.deadline = Some(deadline);
            next.budget = Some(budget.unwrap_or(outer_budget));
        }
        STATE.with(|s| s.set(next));
        Budget { prev, shared }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        let prev = self.prev;
        let shared = self.shared;
        STATE.with(|s| {
            let now = s.get();
            s.set(if shared { now } else { prev })
        });
    }
}

/// Counts a unit of work; fails once the budget is spent.
#[inline]
pub fn tick() -> Result<()> {
    STATE.with(|s| {
        let mut st = s.get();
        st.ticks += 1;
        if st.ticks < CHECK_EVERY {
            s.set(st);
            return Ok(());
        }
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

/// Replaces this thread's budget state, returning the previous one (the
/// green-thread scheduler swaps it on every switch).
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
        let outer = Budget::start(Some(Duration::from_millis(30)));
        {
            // An inner scope asking for more time still ends with the outer.
            let _inner = Budget::start(Some(Duration::from_secs(3600)));
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
}

//! The random generator of a run: what `random()`, `random(from, to)` and
//! MuranoPL's `randomName()` draw from.
//!
//! A run is replayable: with [`crate::Options::seed`] set, the generator
//! starts from the seed, so the same run draws the same numbers; without
//! one it starts from the clock and the process's hash keys. Nothing is
//! shared between runs:
//!
//! - a MuranoPL execution owns its [`Rng`] (the host hands it out through
//!   [`crate::host::Host::rng`]);
//! - a YAQL evaluation opens a [`Scope`] (as it opens a
//!   [`crate::budget::Budget`]), and [`next_u64`] draws from the innermost
//!   one: a nested evaluation draws from its enclosing evaluation's
//!   generator, and the outermost scope's end takes it away.
//!
//! ```
//! use muranopl_runtime::rand::{Rng, Scope};
//! let (a, b) = (Rng::new(Some(7)), Rng::new(Some(7)));
//! assert_eq!(a.next_u64(), b.next_u64());
//! let first = {
//!     let _run = Scope::enter(Some(7));
//!     muranopl_runtime::rand::next_u64()
//! };
//! let _again = Scope::enter(Some(7));
//! assert_eq!(muranopl_runtime::rand::next_u64(), first);
//! ```

use std::cell::RefCell;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The splitmix64 increment.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A splitmix64 generator: lock-free, so the green threads and the OS
/// threads that share a run may draw from it at once (each draw is one
/// atomic add; which thread gets which number follows the order of their
/// draws).
#[derive(Debug)]
pub struct Rng {
    state: AtomicU64,
    seeded: AtomicBool,
    /// Unseeded and not drawn from yet: the first draw mixes in
    /// [`entropy`] (a clock read and a hasher, which the many executions
    /// that never draw should not pay for).
    pending: AtomicBool,
}

impl Rng {
    /// A generator that starts from `seed`, or from the clock and the
    /// process's hash keys when `None`.
    pub fn new(seed: Option<u64>) -> Rng {
        Rng {
            state: AtomicU64::new(seed.unwrap_or(0)),
            seeded: AtomicBool::new(seed.is_some()),
            pending: AtomicBool::new(seed.is_none()),
        }
    }

    /// Starts the generator again, as [`Rng::new`] does (a run's options
    /// are applied after its executor is made).
    pub fn reseed(&self, seed: Option<u64>) {
        self.state.store(seed.unwrap_or(0), Ordering::Relaxed);
        self.seeded.store(seed.is_some(), Ordering::Relaxed);
        self.pending.store(seed.is_none(), Ordering::Relaxed);
    }

    /// True when the generator started from a seed (a replayable run):
    /// what else a draw depends on (`randomName()`'s time part) must then
    /// not come from the wall clock either.
    pub fn seeded(&self) -> bool {
        self.seeded.load(Ordering::Relaxed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&self) -> u64 {
        // The first draw of an unseeded generator (one thread wins the
        // swap; a draw racing it may still see the bare state, which only
        // an unseeded run can).
        if self.pending.load(Ordering::Relaxed) && self.pending.swap(false, Ordering::Relaxed) {
            self.state.fetch_add(entropy(), Ordering::Relaxed);
        }
        let s = self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        mix(s)
    }

    /// A float in `[0.0, 1.0)` (53 random bits).
    pub fn next_f64(&self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// splitmix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for an unseeded run: the clock, mixed with the randomly keyed
/// hasher the standard library seeds from the OS.
fn entropy() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(nanos);
    h.finish()
}

/// The generator of an open [`Scope`]: made at its first draw, so that
/// the many evaluations that never draw cost no clock read.
struct Slot {
    seed: Option<u64>,
    rng: Option<Rng>,
}

// The generator of the YAQL evaluation running on this OS thread. Not
// state that outlives a run: only a [`Scope`] sets it, and the outermost
// scope empties it when it ends, so the next evaluation starts a generator
// of its own. Evaluation never migrates between OS threads, and the green
// threads of a MuranoPL execution draw from their executor's generator
// (the host's), not from here.
thread_local! {
    static CURRENT: RefCell<Option<Slot>> = const { RefCell::new(None) };
}

/// The generator scope of one evaluation: the outermost one on a thread
/// starts a generator from the seed, nested ones share it. Ends it when
/// dropped (the outermost one).
#[must_use = "the generator applies while the scope is alive"]
pub struct Scope {
    outermost: bool,
}

impl Scope {
    /// Opens a scope: a new generator from `seed` (see [`Rng::new`]),
    /// unless an enclosing evaluation's generator is in place already.
    #[inline]
    pub fn enter(seed: Option<u64>) -> Scope {
        let outermost = CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_some() {
                return false;
            }
            *c = Some(Slot { seed, rng: None });
            true
        });
        Scope { outermost }
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        if self.outermost {
            CURRENT.with(|c| *c.borrow_mut() = None);
        }
    }
}

/// The next 64 random bits of the running evaluation's generator; outside
/// any [`Scope`] (a lazy result drained after its evaluation ended), from
/// a generator of its own started from the clock.
pub fn next_u64() -> u64 {
    let r = CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let slot = c.as_mut()?;
        let seed = slot.seed;
        Some(slot.rng.get_or_insert_with(|| Rng::new(seed)).next_u64())
    });
    r.unwrap_or_else(|| Rng::new(None).next_u64())
}

/// The next 64 random bits for an evaluation in `env`: from its host's
/// generator (a MuranoPL execution's) when it has one, else from the
/// evaluation's ([`next_u64`]).
pub fn draw(env: &crate::Env) -> u64 {
    if let Some(h) = env.host() {
        if let Some(r) = h.rng() {
            return r.next_u64();
        }
    }
    next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_replays_and_scopes_nest_and_end() {
        let draws = |seed| {
            let _s = Scope::enter(seed);
            let a = next_u64();
            // A nested evaluation continues the enclosing generator.
            let b = {
                let _inner = Scope::enter(Some(99));
                next_u64()
            };
            (a, b, next_u64())
        };
        let one = draws(Some(7));
        assert_eq!(one, draws(Some(7)));
        assert_ne!(one.0, one.1);
        assert_ne!(one, draws(Some(8)));
        assert_ne!(draws(None), draws(None));
        // Nothing is left between runs.
        assert!(CURRENT.with(|c| c.borrow().is_none()));
        let r = Rng::new(None);
        assert!(!r.seeded());
        r.reseed(Some(7));
        assert!(r.seeded());
        assert_eq!(r.next_u64(), Rng::new(Some(7)).next_u64());
        let f = r.next_f64();
        assert!((0.0..1.0).contains(&f));
    }
}

//! What evaluation runs with: the options (limits, the JIT mode, legacy
//! mode) and the environment that pairs them with a function registry
//! and, in MuranoPL, a host.

use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::registry::Registry;
use crate::{budget, host};

/// When contracts and YAQL conditions are compiled to machine code (by
/// the Cranelift tier, `compiler::jit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum JitMode {
    /// Never: everything is interpreted.
    Off = 0,
    /// Contracts, expressions and lambdas once they have been used
    /// [`JitMode::HOT`] times.
    #[default]
    Auto = 1,
    /// Contracts as their class is compiled; expressions and lambdas at
    /// their first use.
    Always = 2,
}

impl JitMode {
    /// Uses of a contract, expression or lambda after which
    /// [`JitMode::Auto`] compiles it.
    pub const HOT: u32 = 64;

    /// The environment variable the harness and the CLI read.
    pub const ENV: &'static str = "MURANOPL_JIT";

    /// The mode `MURANOPL_JIT` names; `None` when unset.
    pub fn from_env() -> Result<Option<JitMode>, String> {
        match std::env::var(Self::ENV) {
            Ok(s) => s.parse().map(Some),
            Err(_) => Ok(None),
        }
    }

    /// True when code about to be used for the `uses + 1`th time should
    /// be compiled first.
    pub fn compiles_at(self, uses: u32) -> bool {
        match self {
            JitMode::Off => false,
            JitMode::Auto => uses + 1 >= Self::HOT,
            JitMode::Always => true,
        }
    }
}

impl std::str::FromStr for JitMode {
    type Err = String;
    fn from_str(s: &str) -> Result<JitMode, String> {
        match s {
            "off" => Ok(JitMode::Off),
            "auto" => Ok(JitMode::Auto),
            "always" => Ok(JitMode::Always),
            other => Err(format!(
                "unknown JIT mode '{other}' (expected off, auto or always)"
            )),
        }
    }
}

/// Engine options, as `yaql.limitIterators` and friends.
#[derive(Clone, Debug)]
pub struct Options {
    /// `yaql.limitIterators`: maximum collection size, `None` = unlimited.
    pub limit_iterators: Option<usize>,
    /// `yaql.memoryQuota` in (approximate) bytes: the largest value one
    /// operation may build, `None` = unlimited.
    pub memory_quota: Option<usize>,
    /// Bytes the strings and collections of one evaluation may take in
    /// all (allocated, not live; see [`budget`]), `None` = unlimited.
    pub max_memory: Option<usize>,
    /// `yaql.convertSetsToLists` on output.
    pub convert_sets_to_lists: bool,
    /// `yaql.convertTuplesToLists` on output: when off, a tuple
    /// ([`value::ListData::is_tuple`]) leaves the engine as one where the
    /// output can tell (the Python binding).
    pub convert_tuples_to_lists: bool,
    /// yaql 0.2 compatibility (legacy) mode.
    pub legacy: bool,
    /// When conditions (whole expressions and lambdas such as `where`'s
    /// predicate) run as machine code.
    pub jit: JitMode,
    /// Wall-clock time one evaluation may take (see [`budget`]), `None` =
    /// unlimited.
    pub time_budget: Option<std::time::Duration>,
    /// Where `random()` and `randomName()` start (see [`rand`]): the same
    /// seed draws the same numbers, so a run replays exactly; `None` =
    /// from the clock.
    pub seed: Option<u64>,
}

/// The default iterator limit: no collection may grow past ten million
/// elements (the reference's default is none; an infinite `sequence()`
/// must end somewhere).
pub const DEFAULT_LIMIT_ITERATORS: usize = 10_000_000;

/// The default memory quota: 256 MiB for one value an operation builds
/// (the reference's default is none).
pub const DEFAULT_MEMORY_QUOTA: usize = 256 << 20;

/// The default memory budget of one evaluation: 768 MiB allocated by its
/// values in all (the reference has none).
pub const DEFAULT_MAX_MEMORY: usize = 768 << 20;

/// The default time budget of one evaluation: one minute.
pub const DEFAULT_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

impl Default for Options {
    /// Limits on: the reference has none by default, but an engine that
    /// runs expressions and models its users did not write must end every
    /// evaluation (`sequence()`, `'x' * 3000000000`, exponential work).
    fn default() -> Options {
        Options {
            limit_iterators: Some(DEFAULT_LIMIT_ITERATORS),
            memory_quota: Some(DEFAULT_MEMORY_QUOTA),
            max_memory: Some(DEFAULT_MAX_MEMORY),
            convert_sets_to_lists: true,
            convert_tuples_to_lists: true,
            legacy: false,
            jit: JitMode::default(),
            time_budget: Some(DEFAULT_TIME_BUDGET),
            seed: None,
        }
    }
}

impl Options {
    /// The options of the reference test-suite (and the conformance harness).
    pub fn test_suite(legacy: bool) -> Options {
        Options {
            limit_iterators: Some(100),
            memory_quota: Some(20000),
            max_memory: Some(DEFAULT_MAX_MEMORY),
            convert_sets_to_lists: !legacy,
            convert_tuples_to_lists: !legacy,
            legacy,
            jit: JitMode::default(),
            time_budget: Some(DEFAULT_TIME_BUDGET),
            seed: None,
        }
    }
}

struct EnvInner {
    registry: Arc<Registry>,
    options: Options,
    host: Option<HostLink>,
}

/// How an environment reaches its host.
enum HostLink {
    /// The environment keeps the host alive (a host made for it).
    Owned(Arc<dyn host::Host>),
    /// The host owns the environment: a strong link back would make a
    /// cycle that keeps both alive forever (an executor holds its
    /// environments). Calls made after the host is gone see no host.
    Back(std::sync::Weak<dyn host::Host>),
}

/// What evaluation needs: the function registry and the options. Cheap to
/// clone; shared by lazy sequences that outlive a call.
#[derive(Clone)]
pub struct Env(Arc<EnvInner>);

impl Env {
    /// Makes an environment.
    pub fn new(registry: Arc<Registry>, options: Options) -> Env {
        Env(Arc::new(EnvInner {
            registry,
            options,
            host: None,
        }))
    }
    /// Makes an environment with a host (MuranoPL execution).
    pub fn with_host(registry: Arc<Registry>, options: Options, host: Arc<dyn host::Host>) -> Env {
        Env(Arc::new(EnvInner {
            registry,
            options,
            host: Some(HostLink::Owned(host)),
        }))
    }
    /// Makes an environment for a host that holds it: the environment
    /// refers back to the host without keeping it alive.
    pub fn with_host_back(
        registry: Arc<Registry>,
        options: Options,
        host: std::sync::Weak<dyn host::Host>,
    ) -> Env {
        Env(Arc::new(EnvInner {
            registry,
            options,
            host: Some(HostLink::Back(host)),
        }))
    }
    /// The host, if any (and still alive).
    pub fn host(&self) -> Option<std::borrow::Cow<'_, Arc<dyn host::Host>>> {
        match self.0.host.as_ref()? {
            HostLink::Owned(h) => Some(std::borrow::Cow::Borrowed(h)),
            HostLink::Back(w) => w.upgrade().map(std::borrow::Cow::Owned),
        }
    }
    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.0.registry
    }
    /// The options.
    pub fn options(&self) -> &Options {
        &self.0.options
    }
    /// The iterator limit (`usize::MAX` when unlimited).
    pub fn limit(&self) -> usize {
        self.0.options.limit_iterators.unwrap_or(usize::MAX)
    }
    /// Fails when one value of `bytes` bytes would exceed the memory
    /// quota, or would take the evaluation past its memory budget. Strings
    /// that grow by concatenation, joining, replacing or padding are
    /// bounded this way, as repetition is (the reference bounds only
    /// repetition; an unbounded doubling would end the process).
    pub fn guard_size(&self, bytes: usize) -> Result<()> {
        match self.0.options.memory_quota {
            Some(q) if q > 0 && bytes > q => Err(Error::new(
                ErrorKind::MemoryQuotaExceededException,
                "Expression consumed too much memory",
            )),
            _ => budget::reserve(bytes),
        }
    }
}

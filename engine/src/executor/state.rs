//! The executor itself: its fields, its construction and the state a run
//! changes besides the objects (violations, log, traces, configuration,
//! ids, the step budget).

use runtime::ErrorKind;
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use compiler::jit;
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::Cx;
use runtime::value::ObjRef;
use runtime::{Dict, Env, Error, Options, Result, Value};

use super::foreign::Index;
use super::roots::GcState;
use crate::catalog::Catalog;
use crate::class::{Class, Given, Method};
use crate::cloud;
use crate::package::Package;

/// The state of one object.
pub struct ObjState {
    /// Its class.
    pub class: Arc<Class>,
    /// Identity.
    pub r: Arc<ObjRef>,
    /// Property values by name.
    pub props: Dict,
    /// Owner.
    pub owner: Option<Arc<ObjRef>>,
    /// Attributes (`setAttr`).
    pub attrs: Dict,
    /// `?.name`.
    pub name: Value,
    /// `?.metadata`.
    pub metadata: Value,
    /// Destroyed (`.destroy` ran).
    pub destroyed: bool,
    /// `.init` finished.
    pub initialized: bool,
    /// Objects to notify on destruction: (subscriber, handler).
    pub subscribers: Vec<(Arc<ObjRef>, Option<String>)>,
    /// The designer attributes of its definition's `?` (keys starting
    /// with `_`), written back by model serialization.
    pub designer: Option<Box<Dict>>,
}

/// What one object takes in the store beyond its id and property values:
/// its state, its reference, and its entry in the index by id.
pub(crate) const OBJECT_BYTES: usize = std::mem::size_of::<Option<ObjState>>()
    + std::mem::size_of::<ObjRef>()
    + 2 * std::mem::size_of::<usize>()
    + std::mem::size_of::<(Arc<str>, u32)>()
    + 16;

/// What sees each log line as it is recorded: (level, logger, text).
pub type LogSink = std::sync::Arc<dyn Fn(&str, &str, &str) + Send + Sync>;

pub(crate) struct State {
    pub(crate) objects: Vec<Option<ObjState>>,
    pub(crate) statics: HashMap<String, Dict>,
    /// Live objects by id (the latest object of an id wins).
    pub(crate) by_id: HashMap<Arc<str>, u32>,
    /// Validation mode: contract violations at load are recorded here
    /// (object JSON path, property, error) instead of failing the load.
    /// (object slot, JSON path, property, error).
    pub(crate) violations: Option<Vec<(u32, String, String, Error)>>,
    /// JSON paths of loaded objects (validation mode), by slot.
    pub(crate) paths: HashMap<u32, String>,
    pub(crate) locks: HashMap<String, (u64, u32)>,
    /// Draws the order of green threads due at the same time (`None`:
    /// FIFO); see [`Executor::set_schedule_seed`].
    pub(crate) schedule_seed: Option<u64>,
    pub(crate) log: Vec<String>,
    /// Called with each log line as it is recorded ([`Executor::on_log`]).
    pub(crate) log_sink: Option<LogSink>,
    pub(crate) engine_config: HashMap<String, Value>,
    pub(crate) aliases: Vec<(String, Arc<ObjRef>)>,
    pub(crate) traces: Vec<Value>,
    pub(crate) next_id: u64,
    /// The declaring class of the method whose expressions run now, per
    /// green thread (0 = the thread that is not a green thread): private
    /// properties are keyed by it.
    pub(crate) callers: HashMap<u64, Arc<str>>,
    /// Instantiated meta objects by declaration (see `reflection.rs`).
    pub(crate) meta: HashMap<String, Vec<Value>>,
    /// Garbage collector state (see `gc.rs`).
    pub(crate) gc: GcState,
}

/// Object-store generations: every executor gets a distinct one, so an
/// object reference from another execution is recognised as foreign. An
/// atomic counter, not shared state: nothing reads it but `Executor::new`.
static STORE_GEN: AtomicU64 = AtomicU64::new(1);

/// How many statements one execution may run (about a minute of work):
/// a workflow that never ends fails with `ExecutionLimitExceeded` instead
/// of hanging the process.
pub const STEP_BUDGET: u64 = 200_000_000;

/// One MuranoPL execution: an object store over a shared [`Catalog`].
pub struct Executor {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) state: Mutex<State>,
    pub(crate) store: u64,
    /// Statements left before the execution stops (a guard against
    /// workflows that never end).
    pub(crate) steps_left: AtomicU64,
    pub(crate) me: OnceLock<std::sync::Weak<Executor>>,
    pub(crate) envs: OnceLock<[Env; 2]>,
    /// The world outside the engine (see [`cloud`]).
    pub(crate) cloud: std::sync::RwLock<cloud::SharedCloud>,
    /// The call hook (the test framework's mocks), once installed.
    pub(crate) hook: OnceLock<Arc<dyn CallHook>>,
    /// What the layers above do for this one (see [`Layers`]).
    pub(crate) layers: &'static Layers,
    /// Streaming validation: the classes of the model's objects by id,
    /// for objects this execution does not hold (see `stream.rs`).
    pub(crate) foreign: OnceLock<Arc<Index>>,
    /// The execution's random generator (`random()`, `randomName()`); see
    /// [`Executor::set_seed`].
    pub(crate) rng: runtime::rand::Rng,
    /// `randomName()`'s counter (murano's module-level one, per execution).
    pub(crate) names: std::sync::atomic::AtomicU64,
    /// The green-thread scheduler of `Parallel` and `pselect`: its virtual
    /// clock and thread ids belong to this execution alone.
    pub(crate) sched: vm::coro::Scheduler,
    /// What watches the execution run, once installed (see
    /// [`crate::trace`]).
    pub(crate) tracer: OnceLock<std::sync::Arc<dyn crate::trace::Tracer>>,
}

// ---- what the layers above do for the executor ----------------------------

/// A method call about to run, its arguments bound (see
/// [`CallHook::intercept`]).
pub struct Call<'a> {
    /// The receiver as called (a `cast` view stays a view).
    pub this: &'a Value,
    /// The receiver the body would run with.
    pub plain: &'a Value,
    /// The class declaring the method.
    pub class: &'a Arc<Class>,
    /// The method.
    pub method: &'a Arc<Method>,
    /// The arguments by name, checked by their contracts.
    pub vars: &'a [(Arc<str>, Value)],
    /// How the caller gave each standard argument.
    pub how: &'a [Given],
}

/// Intercepts method calls: what the test framework installs for its
/// mocks ([`Executor::set_call_hook`]). Without a hook a call pays one
/// atomic load for it.
pub trait CallHook: Send + Sync {
    /// A call from an expression starts at call site `ctx`; true when the
    /// hook wants [`CallHook::leave_site`] when it ends.
    fn enter_site(&self, ctx: &Arc<Frame>) -> bool;
    /// The call entered at the latest [`CallHook::enter_site`] ended.
    fn leave_site(&self);
    /// Runs instead of the method when it returns `Some`.
    fn intercept(&self, ex: &Executor, call: &Call<'_>) -> Option<Result<Value>>;
    /// The hook as `Any` (its installer finds its own state again).
    fn as_any(&self) -> &dyn Any;
}

/// Runs a method body with its arguments bound (the statement interpreter).
pub type RunMethod =
    fn(&Executor, &Env, &Arc<Class>, &Arc<Method>, Value, Vec<(Arc<str>, Value)>) -> Result<Value>;

/// Makes an object of a definition (the model loader).
pub type Instantiate =
    fn(&Executor, &Cx, &Value, Option<Arc<ObjRef>>, Option<&str>) -> Result<Arc<ObjRef>>;

/// The properties of a class a template gives (the model loader).
pub type TemplateProps = fn(&Executor, &Arc<Class>, &Dict, &[Value]) -> Result<Dict>;

/// What the layers above the executor do for it: each a function of the
/// layer that implements it, filled in by the crate's top.
pub struct Layers {
    /// The statement interpreter's entry.
    pub run_method: RunMethod,
    /// `class()` contracts making objects of definitions.
    pub instantiate: Instantiate,
    /// `template()` contracts.
    pub template_props: TemplateProps,
}

/// The options of MuranoPL's YAQL: the engine's default limits (murano
/// itself sets 2000 elements and 512 KiB, which a model of a million
/// objects validated here would exceed).
fn options(legacy: bool, jit: jit::Mode) -> Options {
    Options {
        legacy,
        jit,
        ..Options::default()
    }
}

impl Executor {
    /// Makes an executor over a shared catalogue, the layers above doing
    /// `layers` for it (the crate's top gives them: see
    /// `Executor::with_catalog`).
    pub fn assemble(catalog: Arc<Catalog>, layers: &'static Layers) -> Arc<Executor> {
        let jit = catalog.jit();
        let ex = Arc::new(Executor {
            catalog,
            state: Mutex::new(State {
                objects: Vec::new(),
                statics: HashMap::new(),
                by_id: HashMap::new(),
                violations: None,
                paths: HashMap::new(),
                locks: HashMap::new(),
                schedule_seed: None,
                log: Vec::new(),
                log_sink: None,
                engine_config: HashMap::new(),
                aliases: Vec::new(),
                traces: Vec::new(),
                next_id: 1,
                callers: HashMap::new(),
                meta: HashMap::new(),
                gc: GcState::default(),
            }),
            store: STORE_GEN.fetch_add(1, Ordering::Relaxed),
            steps_left: AtomicU64::new(STEP_BUDGET),
            me: OnceLock::new(),
            envs: OnceLock::new(),
            cloud: std::sync::RwLock::new(Arc::new(cloud::NoCloud)),
            hook: OnceLock::new(),
            layers,
            foreign: OnceLock::new(),
            rng: runtime::rand::Rng::new(None),
            names: std::sync::atomic::AtomicU64::new(1),
            sched: vm::coro::Scheduler::new(),
            tracer: OnceLock::new(),
        });
        let _ = ex.me.set(Arc::downgrade(&ex));
        // The environments refer back to the executor without owning it:
        // it owns them, and a strong link would keep both alive forever.
        let me = Arc::downgrade(&ex) as std::sync::Weak<dyn Host>;
        let _ = ex.envs.set([
            Env::with_host_back(ex.catalog.registry(false), options(false, jit), me.clone()),
            Env::with_host_back(ex.catalog.registry(true), options(true, jit), me),
        ]);
        ex
    }

    /// Installs what hears each statement and call of the execution
    /// (once; false when one is installed already).
    pub fn set_tracer(&self, tracer: Arc<dyn crate::trace::Tracer>) -> bool {
        self.tracer.set(tracer).is_ok()
    }

    /// The installed tracer.
    #[inline]
    pub fn tracer(&self) -> Option<&Arc<dyn crate::trace::Tracer>> {
        self.tracer.get()
    }

    /// Makes `class()` contracts find the objects of `index` by id
    /// (streaming validation, see `stream.rs`).
    pub fn set_foreign(&self, index: Arc<Index>) {
        let _ = self.foreign.set(index);
    }

    /// The index of objects held elsewhere, when validating a stream.
    pub fn foreign(&self) -> Option<&Index> {
        self.foreign.get().map(|i| &**i)
    }

    /// The catalogue this execution runs over.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Attaches the world outside the engine (the simulated cloud).
    pub fn set_cloud(&self, cloud: cloud::SharedCloud) {
        *self.cloud.write().unwrap_or_else(|e| e.into_inner()) = cloud;
    }

    /// The world outside the engine.
    pub fn cloud(&self) -> cloud::SharedCloud {
        self.cloud.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sets how many more statements this execution may run (the default
    /// is [`STEP_BUDGET`]; `u64::MAX` is unlimited).
    pub fn set_step_budget(&self, steps: u64) {
        self.steps_left.store(steps, Ordering::Relaxed);
    }

    /// Counts one executed statement; false when the budget is spent.
    pub fn spend_step(&self) -> bool {
        self.steps_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// This executor as an `Arc`.
    pub fn arc(&self) -> Arc<Executor> {
        self.me
            .get()
            .and_then(|w| w.upgrade())
            .expect("executor alive")
    }

    /// The evaluation environment for a package format.
    pub fn env(&self, legacy: bool) -> &Env {
        &self.envs.get().expect("envs")[legacy as usize]
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The packages, in lookup order.
    pub fn packages(&self) -> &[Arc<Package>] {
        &self.catalog.packages
    }

    // ---- classes ------------------------------------------------------

    /// Finds a class by full name or type string (see [`Catalog::class`]).
    pub fn class(&self, name: &str) -> Result<Arc<Class>> {
        self.catalog.class(name)
    }

    /// A class as code of package `from` sees it (see [`Catalog::class_from`]).
    pub fn class_from(&self, name: &str, from: Option<&Package>) -> Result<Arc<Class>> {
        self.catalog.class_from(name, from)
    }

    /// The key of class `name` as package `from` sees it (see
    /// [`Catalog::key_from`]).
    pub fn key_from(&self, name: &str, from: Option<&Package>) -> String {
        self.catalog.key_from(name, from)
    }

    /// The type value of a class.
    pub fn type_value(&self, name: &str) -> Result<Value> {
        Ok(Value::Type(self.class(name)?.type_ref.clone()))
    }
    // ---- gc support ----

    /// Runs `f` on the garbage collector's state.
    pub fn gc_state<T>(&self, f: impl FnOnce(&mut GcState) -> T) -> T {
        f(&mut self.lock().gc)
    }

    /// Every static property value (GC roots).
    pub fn gc_static_values(&self) -> Vec<Value> {
        let st = self.lock();
        st.statics
            .values()
            .flat_map(|d| d.values().cloned())
            .collect()
    }
    // ---- end gc support ----
}

/// The executor an expression runs for, from its call's context: how
/// the engine's natives reach it (`cx.executor()?`).
pub trait ExecutorOf {
    /// The executor, or a `RuntimeError` outside a MuranoPL execution.
    fn executor(&self) -> Result<Arc<Executor>>;
}

impl ExecutorOf for Cx<'_> {
    fn executor(&self) -> Result<Arc<Executor>> {
        self.env
            .host()
            .and_then(|h| h.into_owned().as_any_arc().downcast::<Executor>().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::RuntimeError,
                    "no MuranoPL executor in this context",
                )
            })
    }
}

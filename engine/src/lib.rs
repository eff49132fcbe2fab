//! MuranoPL execution: packages and classes, the object store, method
//! dispatch, property access with usages, contracts, object models in and
//! out, and the engine functions (`new`, `find`, `id`, ...).
//!
//! A [`Catalog`] holds packages and their compiled classes: each class is
//! compiled once, the first time any execution needs it, and then shared
//! (read-only, `Send + Sync`) by every execution and thread. An
//! [`Executor`] is one MuranoPL execution (one deployment, one model to
//! validate, one request, one test) over a catalogue: the object store and
//! everything else a run changes. It is the [`Host`](runtime::host::Host)
//! of the YAQL environment its expressions run in, so `$obj.method()` on an
//! object reaches [`Executor::invoke`]; the world outside (Heat, the agent)
//! it reaches only through its [`cloud::CloudHost`].
//!
//! The modules are layered: each imports only those below it (base,
//! classes, catalogue, executor, contracts, property access, dispatch, the
//! statement interpreter, models, natives; see `docs/architecture.md`,
//! "Engine layers"). What an upper layer does for a lower one is wired
//! here: the natives registered into the registries every [`Catalog`]
//! compiles against ([`Natives`]), the executor's upcalls ([`Layers`]);
//! the test framework's mocks are a [`CallHook`] it installs.
//!
//! Method bodies run as statement bytecode (`vm/src/stmt`, with `exec.rs`
//! as the interpreter's host);
//! `Parallel` branches are green threads (`vm/src/coro`). Classes are
//! keyed by name, or by `Name/version@package` when several loaded
//! versions of a package provide them (see [`Executor::class`] and
//! `docs/packages.md`).

pub mod actions;
mod catalog;
mod class;
pub mod cloud;
mod cloud_fns;
mod code;
pub mod contracts;
mod defs;
mod dispatch;
pub mod exec;
mod executor;
pub mod extra;
pub mod funcs;
pub mod gc;
mod lineage;
pub mod model;
mod package;
mod props;
pub mod reflection;
pub mod serialize;
pub mod stream;
pub mod testing;
pub mod trace;
pub mod version;

pub use catalog::{Catalog, CompileContract, Natives};
pub use class::{check_meta, Arg, Class, ContractCode, Given, Method, Prop};
pub use compiler::murano::node_value;
pub use dispatch::call_registry;
pub use executor::{
    attr_slot, qualified_kind, resolve_class_name, Call, CallHook, Executor, ExecutorOf,
    Instantiate, Layers, LogSink, ObjState, RunMethod, Scope, TemplateProps, STEP_BUDGET,
};
pub use package::{format_le_13, is_legacy_format, Package};

use std::sync::{Arc, OnceLock};

use compiler::murano::Template;
use compiler::{jit, CompileOptions};
use runtime::registry::Registry;
use runtime::Result;

use contracts::Contract;

// ---- the natives, registered --------------------------------------------
//
// The engine's layers import only what is below them (see
// `docs/architecture.md`); what the upper layers do for the lower ones is
// wired here, at the top: the natives (engine functions, reflection, GC,
// serialization, the cloud, the test framework) registered into the
// registries the catalogue compiles against, the contract compiler, and
// the executor's upcalls (the statement interpreter, the model loader).

/// Registers the engine's natives: every function MuranoPL expressions
/// can call beyond the standard library.
fn register_natives(r: &mut Registry) {
    serialize::register(r);
    reflection::register(r);
    gc::register(r);
    cloud_fns::register(r);
    testing::register(r);
    extra::register(r);
    funcs::register(r);
}

/// The registry MuranoPL expressions run with: the standard library plus
/// the engine functions.
pub fn murano_registry(legacy: bool) -> Arc<Registry> {
    // Built once per process and immutable after: a cache, not state.
    static R: OnceLock<[Arc<Registry>; 2]> = OnceLock::new();
    R.get_or_init(|| {
        let mk = |legacy: bool| {
            let mut r = Registry::new();
            r.set_any_form(legacy);
            r.group("murano");
            register_natives(&mut r);
            r.merge_from(&stdlib::registry(legacy));
            Arc::new(r)
        };
        [mk(false), mk(true)]
    })[legacy as usize]
        .clone()
}

/// The registry contracts run with: MuranoPL's plus the contract methods
/// (`int()`, `string()`, `class()`, ...).
pub fn contract_registry(legacy: bool) -> Arc<Registry> {
    // Built once per process and immutable after: a cache, not state.
    static R: OnceLock<[Arc<Registry>; 2]> = OnceLock::new();
    R.get_or_init(|| {
        let mk = |legacy: bool| {
            let mut r = Registry::new();
            r.set_any_form(legacy);
            r.group("contracts");
            contracts::register(&mut r);
            r.merge_from(&murano_registry(legacy));
            Arc::new(r)
        };
        [mk(false), mk(true)]
    })[legacy as usize]
        .clone()
}

/// Compiles a contract for the catalogue ([`Natives::compile_contract`]).
fn compile_contract(
    t: &Template,
    reg: &Registry,
    opts: CompileOptions,
    mode: jit::Mode,
) -> Result<ContractCode> {
    Contract::compile(t, reg, opts, mode).map(ContractCode::new)
}

/// What every catalogue is given.
fn natives() -> Natives {
    Natives {
        murano: [murano_registry(false), murano_registry(true)],
        contracts: [contract_registry(false), contract_registry(true)],
        compile_contract,
    }
}

/// What every executor is given.
static LAYERS: Layers = Layers {
    run_method: exec::run_method,
    instantiate: model::instantiate,
    template_props: model::template_props,
};

impl Catalog {
    /// A catalogue over packages (the first is searched first; the core
    /// library is added last), with the engine's natives. Nothing is
    /// compiled yet.
    pub fn new(packages: Vec<Package>) -> Arc<Catalog> {
        Catalog::with_natives(packages, natives())
    }
}

impl Executor {
    /// Makes an executor over packages with a catalogue of its own (see
    /// [`Executor::with_catalog`] to share compiled classes).
    pub fn new(packages: Vec<Package>) -> Arc<Executor> {
        Executor::with_catalog(Catalog::new(packages))
    }

    /// Makes an executor over a shared catalogue.
    pub fn with_catalog(catalog: Arc<Catalog>) -> Arc<Executor> {
        Executor::assemble(catalog, &LAYERS)
    }
}

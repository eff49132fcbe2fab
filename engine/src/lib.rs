//! MuranoPL execution: packages and classes, the object store, method
//! dispatch, property access with usages, contracts, object models in and
//! out, and the engine functions (`new`, `find`, `id`, ...).
//!
//! A [`Catalog`] holds packages and their compiled classes: each class is
//! compiled once, the first time any execution needs it, and then shared
//! (read-only, `Send + Sync`) by every execution and thread. An
//! [`Executor`] is one MuranoPL execution (one deployment, one model to
//! validate, one request, one test) over a catalogue: the object store and
//! everything else a run changes. It is the [`Host`] of the YAQL
//! environment its expressions run in, so `$obj.method()` on an object
//! reaches [`Executor::call_method`]; the world outside (Heat, the agent)
//! it reaches only through its [`cloud::CloudHost`].
//!
//! Method bodies run as statement bytecode (`exec.rs`, `vm/src/bc/stmt.rs`);
//! `Parallel` branches are green threads (`vm/src/coro`). Classes are
//! keyed by name, or by `Name/version@package` when several loaded
//! versions of a package provide them (see [`Executor::class`] and
//! `docs/packages.md`).

pub mod actions;
mod catalog;
pub mod cloud;
pub mod contracts;
pub mod exec;
pub mod extra;
pub mod funcs;
pub mod gc;
mod methods;
pub mod model;
pub mod reflection;
pub mod serialize;
pub mod stream;
pub mod testing;
pub mod version;

pub use compiler::murano::node_value;

use runtime::ErrorKind;
use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use compiler::murano::{
    load_classes, ArgUsage, Cardinality, ClassDecl, ClassUsage, LoadOptions, MetaTarget,
    MethodDecl, MethodScope, MethodUsage, PropertyUsage, Template,
};
use compiler::{jit, CompileOptions};
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{ArgIn, Cx, Form, Registry};
use runtime::value::{ObjRef, TypeRef};
use runtime::{Dict, Env, Error, Options, Result, Value};

use contracts::Contract;
use exec::{Body, CTemplate};

/// Our own core library (`io.murano`), embedded.
const CORE: &[(&str, &str)] = &[
    ("Object.yaml", include_str!("core/Object.yaml")),
    ("Exception.yaml", include_str!("core/Exception.yaml")),
    ("StackTrace.yaml", include_str!("core/StackTrace.yaml")),
    ("Metadata.yaml", include_str!("core/Metadata.yaml")),
    ("GC.yaml", include_str!("core/GC.yaml")),
    ("TestFixture.yaml", include_str!("core/TestFixture.yaml")),
    ("Logger.yaml", include_str!("core/Logger.yaml")),
    ("Application.yaml", include_str!("core/Application.yaml")),
    (
        "CloudResource.yaml",
        include_str!("core/CloudResource.yaml"),
    ),
    ("Instance.yaml", include_str!("core/Instance.yaml")),
    ("Environment.yaml", include_str!("core/Environment.yaml")),
    ("System.yaml", include_str!("core/System.yaml")),
    ("Network.yaml", include_str!("core/Network.yaml")),
    ("Linux.yaml", include_str!("core/Linux.yaml")),
];

/// A package: name, version, format and its parsed class declarations.
#[derive(Clone)]
pub struct Package {
    /// Package name (`tests`, `io.murano`).
    pub name: Arc<str>,
    /// Version text.
    pub version: Arc<str>,
    /// yaql 0.2 mode (Format 1.0 and 1.1).
    pub legacy: bool,
    /// Runtime version 1.3 or older: the engine functions `super`,
    /// `psuper`, `cast`, `id` and `type` also have method forms.
    pub runtime_le_13: bool,
    /// Class declarations by full name.
    pub decls: HashMap<String, Arc<ClassDecl>>,
    /// Class configuration: class name -> property -> value.
    pub configs: HashMap<String, Dict>,
    /// The manifest's `Require`: package name and version spec. When
    /// several loaded versions of a package provide a class, code of this
    /// package sees the version its requirement names.
    pub requires: Vec<(String, version::VersionSpec)>,
    /// The manifest's `Meta` (`typeinfo(...).package.meta`).
    pub meta: Vec<compiler::murano::MetaDecl>,
}

impl Package {
    /// Parses a package from class files.
    pub fn new(
        name: &str,
        version: &str,
        format: &str,
        files: &[(String, String)],
    ) -> Result<Package> {
        let legacy = is_legacy_format(format);
        let mut decls = HashMap::new();
        for (file, text) in files {
            for d in load_classes(text, file, LoadOptions { legacy })? {
                decls.insert(d.name.clone(), Arc::new(d));
            }
        }
        Ok(Package {
            name: name.into(),
            version: version.into(),
            legacy,
            runtime_le_13: legacy || format_le_13(format),
            decls,
            configs: HashMap::new(),
            requires: Vec::new(),
            meta: Vec::new(),
        })
    }

    /// The core library package.
    pub fn core() -> Package {
        // Parsed once per process; every executor gets a copy (the class
        // declarations are shared). Immutable once initialised.
        static CORE_PACKAGE: OnceLock<Package> = OnceLock::new();
        CORE_PACKAGE
            .get_or_init(|| {
                let files: Vec<(String, String)> = CORE
                    .iter()
                    .map(|(f, t)| (format!("io.murano/{f}"), t.to_string()))
                    .collect();
                Package::new("io.murano", "0.0.0", "1.4", &files).expect("core library parses")
            })
            .clone()
    }
}

impl Package {
    /// A class declaration of this package.
    pub fn decl(&self, name: &str) -> Option<&Arc<compiler::murano::ClassDecl>> {
        self.decls.get(name)
    }

    /// The names of the classes declared in this package (sorted).
    pub fn class_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.decls.keys().cloned().collect();
        v.sort();
        v
    }
}

/// True for package formats that use yaql 0.2.
pub fn is_legacy_format(format: &str) -> bool {
    let f = format.rsplit('/').next().unwrap_or(format);
    f.starts_with("1.0") || f.starts_with("1.1")
}

/// True for package formats of runtime version 1.3 or older.
pub fn format_le_13(format: &str) -> bool {
    let f = format.rsplit('/').next().unwrap_or(format);
    let mut it = f.split('.').map(|x| x.trim().parse::<u64>().unwrap_or(0));
    let (major, minor) = (it.next().unwrap_or(1), it.next().unwrap_or(0));
    major < 1 || (major == 1 && minor <= 3)
}

/// How the caller gave a standard method argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Given {
    /// By position.
    Positional,
    /// By name.
    Named,
    /// Not given: the default (or null).
    Default,
}

/// A compiled property.
pub struct Prop {
    /// Name.
    pub name: Arc<str>,
    /// The name as a value (the key of the property in a definition).
    pub key: Value,
    /// Usage.
    pub usage: PropertyUsage,
    /// Contract.
    pub contract: Contract,
    /// Default.
    pub default: Option<CTemplate>,
    /// The raw declaration's default (for reflection).
    pub has_default: bool,
}

/// A compiled method argument.
pub struct Arg {
    /// Name.
    pub name: Arc<str>,
    /// Usage.
    pub usage: ArgUsage,
    /// Contract.
    pub contract: Contract,
    /// Default.
    pub default: Option<CTemplate>,
}

/// A compiled method.
pub struct Method {
    /// Name.
    pub name: Arc<str>,
    /// Declaring class name.
    pub class: Arc<str>,
    /// Arguments.
    pub args: Vec<Arg>,
    /// Usage.
    pub usage: MethodUsage,
    /// Scope.
    pub scope: MethodScope,
    /// Body.
    pub body: Body,
    /// Declaration (meta, positions).
    pub decl: MethodDecl,
}

impl Method {
    /// Callable from outside (API, harness steps).
    pub fn is_action(&self) -> bool {
        self.scope == MethodScope::Public || self.usage == MethodUsage::Action
    }
    /// Static (or extension) method.
    pub fn is_static(&self) -> bool {
        matches!(self.usage, MethodUsage::Static | MethodUsage::Extension)
    }
}

/// A built class.
pub struct Class {
    /// Full name.
    pub name: Arc<str>,
    /// The key the executor knows the class by: the full name, or
    /// `Name/version@package` for a class that another loaded version of
    /// its package also provides (side-by-side versions; the first
    /// package on the search order keeps the plain name). Objects, type
    /// values and methods refer to their class by this key.
    pub key: Arc<str>,
    /// Its package.
    pub package: Arc<Package>,
    /// Declaration.
    pub decl: Arc<ClassDecl>,
    /// Direct parents.
    pub parents: Vec<Arc<Class>>,
    /// Ancestors in method resolution order (C3), without this class.
    pub ancestors: Vec<Arc<Class>>,
    /// Own properties, in declaration order.
    pub props: Vec<Prop>,
    /// Own methods.
    pub methods: HashMap<String, Arc<Method>>,
    /// The type object.
    pub type_ref: Arc<TypeRef>,
    /// The properties an object of this class initializes, in order (see
    /// [`Class::init_order`]).
    init_order: Vec<(u32, u32)>,
    /// Methods that two unrelated parents define (see
    /// [`Class::ambiguous_method`]).
    ambiguous: Vec<String>,
}

impl Class {
    /// The properties an object of this class initializes, with the class
    /// declaring each: base classes first, a property redeclared in a
    /// subclass once (by its most derived declaration), static properties
    /// left out.
    pub fn init_order(self: &Arc<Class>) -> impl Iterator<Item = (&Arc<Class>, &Prop)> {
        self.init_order.iter().map(move |&(c, p)| {
            let c = match c {
                0 => self,
                k => &self.ancestors[k as usize - 1],
            };
            (c, &c.props[p as usize])
        })
    }

    /// True when `name` is a method two unrelated parents define and this
    /// class does not, so that a call cannot choose (murano's
    /// `_choose_symbol` in murano/dsl/murano_type.py finds one definition
    /// per path to a root class and drops those another path overrides).
    pub fn ambiguous_method(&self, name: &str) -> bool {
        self.ambiguous.iter().any(|n| n == name)
    }

    fn find_ambiguous(&self) -> Vec<String> {
        // Only a name more than one ancestor defines can be ambiguous.
        let mut seen: std::collections::HashSet<&String> = Default::default();
        let mut names: Vec<&String> = Vec::new();
        for c in &self.ancestors {
            for n in c.methods.keys() {
                if !seen.insert(n) && !names.contains(&n) && !self.methods.contains_key(n) {
                    names.push(n);
                }
            }
        }
        names
            .into_iter()
            .filter(|n| {
                let defined =
                    |c: &Class| c.methods.get(n.as_str()).map(|m| Arc::as_ptr(m) as usize);
                self.symbol_choices(&defined) > 1
            })
            .cloned()
            .collect()
    }

    /// True when static property `name` is one two unrelated parents
    /// declare (murano's `find_static_property` chooses as methods do).
    pub fn ambiguous_property(&self, name: &str) -> bool {
        // A declaration's address identifies it (only compared, never
        // dereferenced), as murano compares the symbols with `is`.
        let declared = |c: &Class| {
            c.props
                .iter()
                .find(|p| &*p.name == name)
                .map(|p| p as *const Prop as usize)
        };
        declared(self).is_none() && self.symbol_choices(&declared) > 1
    }

    /// How many definitions murano's `_choose_symbol` keeps of the symbol
    /// `find` finds in a class (as an identity): each path from this class
    /// to a root gives the chain of the definitions along it; a chain that
    /// is the tail of a longer one is overridden by it.
    fn symbol_choices(&self, find: &dyn Fn(&Class) -> Option<usize>) -> usize {
        fn chains(
            c: &Class,
            find: &dyn Fn(&Class) -> Option<usize>,
            out: &mut Vec<Vec<usize>>,
            mut path: Vec<usize>,
        ) {
            path.extend(find(c));
            if c.parents.is_empty() {
                if !path.is_empty() {
                    out.push(path);
                }
                return;
            }
            for p in &c.parents {
                chains(p, find, out, path.clone());
            }
        }
        let mut all = Vec::new();
        chains(self, find, &mut all, Vec::new());
        all.sort_by_key(Vec::len);
        let mut chosen: Vec<usize> = Vec::new();
        for (i, ci) in all.iter().enumerate() {
            if chosen.contains(&ci[0]) {
                continue;
            }
            let overridden = all[i + 1..].iter().any(|cj| cj.ends_with(ci));
            if !overridden {
                chosen.push(ci[0]);
            }
        }
        chosen.len()
    }

    fn make_init_order(&mut self) {
        let mut order = Vec::new();
        let chain: Vec<&Class> = self.mro().collect();
        // The class `find_prop` finds each property in: the first in MRO
        // order that declares it (one pass, not a search per property).
        let mut first: HashMap<&str, &str> = HashMap::new();
        for c in &chain {
            for p in &c.props {
                first.entry(&p.name).or_insert(&c.name);
            }
        }
        let mut done: HashSet<&str> = HashSet::new();
        for (ci, c) in chain.iter().enumerate().rev() {
            for (pi, p) in c.props.iter().enumerate() {
                let redeclared = first.get(&*p.name).is_some_and(|d| *d != &*c.name);
                if redeclared || !done.insert(&p.name) {
                    continue;
                }
                if p.usage != PropertyUsage::Static {
                    order.push((ci as u32, pi as u32));
                }
            }
        }
        self.init_order = order;
    }

    /// This class, then its ancestors in method resolution order.
    pub fn mro(&self) -> impl Iterator<Item = &Class> {
        std::iter::once(self).chain(self.ancestors.iter().map(|c| &**c))
    }
    /// Finds a method along the MRO.
    pub fn find_method(&self, name: &str) -> Option<Arc<Method>> {
        self.mro().find_map(|c| c.methods.get(name).cloned())
    }
    /// Finds a property along the MRO (with its declaring class).
    pub fn find_prop(&self, name: &str) -> Option<(&Class, &Prop)> {
        self.mro()
            .find_map(|c| c.props.iter().find(|p| &*p.name == name).map(|p| (c, p)))
    }
    /// True when this class is `name` or derives from it.
    pub fn is_a(&self, name: &str) -> bool {
        self.mro().any(|c| &*c.name == name || &*c.key == name)
    }
    /// `Name/version@package`.
    pub fn type_string(&self) -> String {
        format!(
            "{}/{}@{}",
            self.name, self.package.version, self.package.name
        )
    }
    /// Resolves a type name in this class's namespaces.
    pub fn resolve(&self, name: &str) -> String {
        self.decl
            .resolve_name(name)
            .unwrap_or_else(|_| name.to_string())
    }
}

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
}

/// What one object takes in the store beyond its id and property values:
/// its state, its reference, and its entry in the index by id.
const OBJECT_BYTES: usize = std::mem::size_of::<Option<ObjState>>()
    + std::mem::size_of::<ObjRef>()
    + 2 * std::mem::size_of::<usize>()
    + std::mem::size_of::<(Arc<str>, u32)>()
    + 16;

struct State {
    objects: Vec<Option<ObjState>>,
    statics: HashMap<String, Dict>,
    /// Live objects by id (the latest object of an id wins).
    by_id: HashMap<Arc<str>, u32>,
    /// Validation mode: contract violations at load are recorded here
    /// (object JSON path, property, error) instead of failing the load.
    /// (object slot, JSON path, property, error).
    violations: Option<Vec<(u32, String, String, Error)>>,
    /// JSON paths of loaded objects (validation mode), by slot.
    paths: HashMap<u32, String>,
    locks: HashMap<String, (u64, u32)>,
    /// Draws the order of green threads due at the same time (`None`:
    /// FIFO); see [`Executor::set_schedule_seed`].
    schedule_seed: Option<u64>,
    log: Vec<String>,
    engine_config: HashMap<String, Value>,
    aliases: Vec<(String, Arc<ObjRef>)>,
    traces: Vec<Value>,
    next_id: u64,
    /// The declaring class of the method whose expressions run now, per
    /// green thread (0 = the thread that is not a green thread): private
    /// properties are keyed by it.
    callers: HashMap<u64, Arc<str>>,
    /// Instantiated meta objects by declaration (see `reflection.rs`).
    meta: HashMap<String, Vec<Value>>,
    /// Garbage collector state (see `gc.rs`).
    gc: gc::GcState,
}

/// Object-store generations: every executor gets a distinct one, so an
/// object reference from another execution is recognised as foreign. An
/// atomic counter, not shared state: nothing reads it but `Executor::new`.
static STORE_GEN: AtomicU64 = AtomicU64::new(1);

/// How many statements one execution may run (about a minute of work):
/// a workflow that never ends fails with `ExecutionLimitExceeded` instead
/// of hanging the process.
pub const STEP_BUDGET: u64 = 200_000_000;

/// The compiled classes of a set of packages: what every execution over
/// those packages shares. A class is compiled (contracts, defaults, method
/// bodies) the first time any execution asks for it and is immutable from
/// then on; [`Catalog::compiled`] counts the compilations, so a process
/// compiles each class once however many executions, requests or threads
/// use it. `Send + Sync`; share it as an `Arc`.
pub struct Catalog {
    packages: Vec<Arc<Package>>,
    /// Names of the extension methods any loaded class declares, so that
    /// ordinary method calls skip the extension lookup.
    extension_names: std::collections::HashSet<String>,
    /// Names of the classes more than one loaded package provides (side by
    /// side versions): lookups of these depend on who asks.
    ambiguous: std::collections::HashSet<String>,
    classes: std::sync::RwLock<HashMap<String, Arc<Class>>>,
    /// Held while a class is compiled, so that two executions asking for
    /// the same class at once compile it once.
    building: Mutex<()>,
    compiled: std::sync::atomic::AtomicUsize,
    /// Time spent compiling, in nanoseconds.
    compile_ns: AtomicU64,
    /// When contracts are compiled to machine code ([`jit::Mode`] as a
    /// byte; set before the classes that should follow it are built).
    jit: AtomicU8,
}

/// One MuranoPL execution: an object store over a shared [`Catalog`].
pub struct Executor {
    catalog: Arc<Catalog>,
    state: Mutex<State>,
    store: u64,
    /// Statements left before the execution stops (a guard against
    /// workflows that never end).
    steps_left: AtomicU64,
    me: OnceLock<std::sync::Weak<Executor>>,
    envs: OnceLock<[Env; 2]>,
    /// The world outside the engine (see [`cloud`]).
    cloud: std::sync::RwLock<cloud::SharedCloud>,
    /// The test framework's mocks (see [`testing`]).
    mocks: testing::Mocks,
    /// Streaming validation: the classes of the model's objects by id,
    /// for objects this execution does not hold (see [`stream`]).
    foreign: OnceLock<Arc<stream::Index>>,
    /// The execution's random generator (`random()`, `randomName()`); see
    /// [`Executor::set_seed`].
    rng: runtime::rand::Rng,
    /// `randomName()`'s counter (murano's module-level one, per execution).
    names: AtomicU64,
    /// The green-thread scheduler of `Parallel` and `pselect`: its virtual
    /// clock and thread ids belong to this execution alone.
    sched: vm::coro::Scheduler,
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
            funcs::register(&mut r);
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

/// Whether meta-class `mc` may be attached to `target` (murano/dsl/meta.py
/// `MetaData`): it is a meta-class, applies there, and, of cardinality
/// One, is not in `used` (the meta-classes attached to that declaration
/// so far, which this adds to).
pub fn check_meta(mc: &ClassDecl, target: MetaTarget, used: &mut HashSet<String>) -> Result<()> {
    if mc.usage != ClassUsage::Meta {
        return Err(Error::value("Only Meta classes can be attached"));
    }
    if !mc.applies.contains(&target) {
        return Err(Error::value(format!(
            "Meta class {} is not applicable here ({target:?})",
            mc.name
        )));
    }
    if !used.insert(mc.name.clone()) && mc.cardinality != Cardinality::Many {
        return Err(Error::value(
            "Cannot attach several Meta instances with cardinality One",
        ));
    }
    Ok(())
}

/// Kinds of MuranoPL exceptions as seen from inside MuranoPL.
pub fn qualified_kind(kind: &str) -> String {
    match ErrorKind::known(kind).and_then(|k| k.module()) {
        Some(module) => format!("{module}.{kind}"),
        None => kind.to_string(),
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
                engine_config: HashMap::new(),
                aliases: Vec::new(),
                traces: Vec::new(),
                next_id: 1,
                callers: HashMap::new(),
                meta: HashMap::new(),
                gc: gc::GcState::default(),
            }),
            store: STORE_GEN.fetch_add(1, Ordering::Relaxed),
            steps_left: AtomicU64::new(STEP_BUDGET),
            me: OnceLock::new(),
            envs: OnceLock::new(),
            cloud: std::sync::RwLock::new(Arc::new(cloud::NoCloud)),
            mocks: testing::Mocks::default(),
            foreign: OnceLock::new(),
            rng: runtime::rand::Rng::new(None),
            names: AtomicU64::new(1),
            sched: vm::coro::Scheduler::new(),
        });
        let _ = ex.me.set(Arc::downgrade(&ex));
        // The environments refer back to the executor without owning it:
        // it owns them, and a strong link would keep both alive forever.
        let me = Arc::downgrade(&ex) as std::sync::Weak<dyn Host>;
        let _ = ex.envs.set([
            Env::with_host_back(murano_registry(false), options(false, jit), me.clone()),
            Env::with_host_back(murano_registry(true), options(true, jit), me),
        ]);
        ex
    }

    /// Makes `class()` contracts find the objects of `index` by id
    /// (streaming validation, see [`stream`]).
    pub(crate) fn set_foreign(&self, index: Arc<stream::Index>) {
        let _ = self.foreign.set(index);
    }

    /// The index of objects held elsewhere, when validating a stream.
    pub(crate) fn foreign(&self) -> Option<&stream::Index> {
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

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The packages, in lookup order.
    pub fn packages(&self) -> &[Arc<Package>] {
        &self.catalog.packages
    }

    /// Switches validation mode on: loading records contract violations
    /// instead of stopping at the first one.
    pub fn collect_violations(&self) {
        self.lock().violations = Some(Vec::new());
    }

    /// True in validation mode.
    pub fn collecting(&self) -> bool {
        self.lock().violations.is_some()
    }

    /// Records a violation (validation mode).
    pub fn record_violation(&self, r: &ObjRef, prop: &str, e: Error) {
        let mut st = self.lock();
        let path = st
            .paths
            .get(&r.slot)
            .cloned()
            .unwrap_or_else(|| format!("<{}>", r.id));
        if let Some(v) = st.violations.as_mut() {
            v.push((r.slot, path, prop.to_string(), e));
        }
    }

    /// Records the JSON path of a loaded object (validation mode).
    pub fn set_path(&self, r: &ObjRef, path: String) {
        let mut st = self.lock();
        if st.violations.is_some() {
            st.paths.insert(r.slot, path);
        }
    }

    /// The recorded violations (JSON path, property, error), in the order
    /// of the objects in the model (the order they were created in), then
    /// of the properties in each.
    pub fn take_violations(&self) -> Vec<(String, String, Error)> {
        let mut v = self.lock().violations.take().unwrap_or_default();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|(_, p, n, e)| (p, n, e)).collect()
    }

    /// Records a log line (`io.murano.system.Logger`).
    pub fn log(&self, level: &str, logger: &str, text: &str) {
        self.lock()
            .log
            .push(format!("{} {}: {}", level.to_uppercase(), logger, text));
    }

    /// The results of green threads in order, or the first error (in
    /// branch order, as murano's `helpers.parallel_select` reraises it);
    /// every other branch's error is logged rather than dropped.
    pub fn first_error<T>(&self, results: Vec<Result<T>>, what: &str) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(results.len());
        let mut first = None;
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok(v) => out.push(v),
                Err(e) if first.is_none() => first = Some(e),
                Err(e) => self.log(
                    "warning",
                    "murano.dsl",
                    &format!(
                        "{what} branch {i} also failed: {}: {}",
                        e.kind(),
                        e.message()
                    ),
                ),
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Takes the log lines recorded so far.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().log)
    }

    /// Sets an engine configuration value (`config(group, setting)`).
    pub fn set_engine_config(&self, group: &str, setting: &str, v: Value) {
        self.lock()
            .engine_config
            .insert(format!("{group}.{setting}"), v);
    }

    /// An engine configuration value (null when unset).
    pub fn engine_config(&self, group: &str, setting: &str) -> Value {
        self.lock()
            .engine_config
            .get(&format!("{group}.{setting}"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Takes the traces recorded so far.
    pub fn take_traces(&self) -> Vec<Value> {
        std::mem::take(&mut self.lock().traces)
    }

    /// Records a trace.
    pub fn trace(&self, v: Value) {
        self.lock().traces.push(v);
    }

    /// A fresh object id (32 hex digits, deterministic per execution).
    pub fn new_id(&self) -> String {
        let mut st = self.lock();
        let n = st.next_id;
        st.next_id += 1;
        format!("{:032x}", 0x5eed_0000_0000_0000_0000_0000u128 + n as u128)
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

    // ---- objects ------------------------------------------------------

    /// Creates an object (uninitialized) of `class`.
    pub fn create(
        &self,
        class: &Arc<Class>,
        id: Option<String>,
        owner: Option<Arc<ObjRef>>,
    ) -> Arc<ObjRef> {
        let id = id.unwrap_or_else(|| self.new_id());
        // Objects count against the execution's memory budget like the
        // values they hold: the store keeps each one until it is destroyed.
        runtime::budget::charge(OBJECT_BYTES + 2 * id.len());
        let mut st = self.lock();
        let slot = st.objects.len() as u32;
        let r = Arc::new(ObjRef {
            id: id.into(),
            class: class.key.clone(),
            slot,
            store: self.store,
        });
        st.by_id.insert(r.id.clone(), slot);
        st.objects.push(Some(ObjState {
            class: class.clone(),
            r: r.clone(),
            props: Dict::default(),
            owner,
            attrs: Dict::default(),
            name: Value::Null,
            metadata: Value::Null,
            destroyed: false,
            initialized: false,
            subscribers: Vec::new(),
        }));
        r
    }

    /// Runs `f` on an object's state.
    pub fn with_obj<T>(&self, r: &ObjRef, f: impl FnOnce(&mut ObjState) -> T) -> Result<T> {
        if r.store != self.store {
            return Err(Error::new(
                ErrorKind::NoObjectFoundError,
                format!("Object {} is not in this execution", r.id),
            ));
        }
        let mut st = self.lock();
        match st.objects.get_mut(r.slot as usize).and_then(|o| o.as_mut()) {
            Some(o) => Ok(f(o)),
            None => Err(Error::new(
                ErrorKind::ObjectDestroyedError,
                format!("Object {} has been destroyed", r.id),
            )),
        }
    }

    /// The class of an object.
    pub fn class_of(&self, r: &ObjRef) -> Result<Arc<Class>> {
        self.with_obj(r, |o| o.class.clone())
    }

    /// Makes `id` find `r` while a snippet with fresh ids loads.
    pub fn push_alias(&self, id: &str, r: Arc<ObjRef>) {
        self.lock().aliases.push((id.to_string(), r));
    }

    /// Drops the aliases added since `mark`.
    pub fn truncate_aliases(&self, mark: usize) -> usize {
        let mut st = self.lock();
        let n = st.aliases.len();
        st.aliases.truncate(mark);
        n
    }

    /// The number of aliases in force.
    pub fn alias_mark(&self) -> usize {
        self.lock().aliases.len()
    }

    /// Finds a live object by id.
    pub fn find_object(&self, id: &str) -> Option<Arc<ObjRef>> {
        let st = self.lock();
        if let Some((_, r)) = st.aliases.iter().rev().find(|(k, _)| k == id) {
            return Some(r.clone());
        }
        if let Some(&slot) = st.by_id.get(id) {
            if let Some(Some(o)) = st.objects.get(slot as usize) {
                if !o.destroyed && &*o.r.id == id {
                    return Some(o.r.clone());
                }
            }
        }
        st.objects
            .iter()
            .flatten()
            .find(|o| &*o.r.id == id && !o.destroyed)
            .map(|o| o.r.clone())
    }

    /// Every live object.
    pub fn all_objects(&self) -> Vec<Arc<ObjRef>> {
        self.lock()
            .objects
            .iter()
            .flatten()
            .filter(|o| !o.destroyed)
            .map(|o| o.r.clone())
            .collect()
    }

    /// The owner of an object.
    pub fn owner(&self, r: &ObjRef) -> Option<Arc<ObjRef>> {
        self.with_obj(r, |o| o.owner.clone()).ok().flatten()
    }

    /// Static property storage of a class.
    pub fn static_get(&self, class: &str, name: &str) -> Option<Value> {
        self.lock()
            .statics
            .get(class)
            .and_then(|d| d.get(&Value::str(name)).cloned())
    }

    /// Assigns static property `name` of `class` (or of the ancestor
    /// declaring it), checked and coerced by its contract, as murano's
    /// `set_static_property` transforms it.
    pub fn set_static(&self, class: &Arc<Class>, name: &str, v: Value) -> Result<()> {
        let Some((decl, prop)) = class.find_prop(name) else {
            self.static_set(&class.key, name, v);
            return Ok(());
        };
        let decl = self.class(&decl.key)?;
        let env = self.env(decl.package.legacy).clone();
        let ctx = self.class_ctx(&decl, Value::Type(decl.type_ref.clone()));
        let v = prop.contract.check(self, &env, &ctx, v, None, &prop.name)?;
        self.static_set(&decl.key, name, v);
        Ok(())
    }

    /// Sets a static property as it is (see [`Executor::set_static`]).
    pub fn static_set(&self, class: &str, name: &str, v: Value) {
        self.lock()
            .statics
            .entry(class.to_string())
            .or_default()
            .insert(Value::str(name), v);
    }

    // ---- properties ---------------------------------------------------

    /// Reads `obj.name`. `inside` is true when the reader is a method of
    /// the object's own class hierarchy (`$this.x`, `$.x`).
    pub fn get_property(&self, r: &ObjRef, name: &str, inside: bool) -> Result<Value> {
        let class = self.class_of(r)?;
        let Some((decl, prop)) = class.find_prop(name) else {
            // Undeclared ("private") properties: set from inside the object,
            // one per declaring class of the method that set them.
            // As murano's `MuranoObject.get_property`
            // (murano/dsl/murano_object.py): code of a class the object is
            // an instance of reads its own private value, or finds it
            // uninitialized; other code cannot read it.
            if !inside {
                return Err(Error::new(
                    ErrorKind::PropertyReadError,
                    format!(
                        "Property \"{name}\" in class \"{}\" cannot be read",
                        class.name
                    ),
                ));
            }
            let key = self.private_key(name);
            return match self.with_obj(r, |o| o.props.get(&key).cloned())? {
                Some(v) => Ok(v),
                None => Err(Error::new(
                    ErrorKind::UninitializedPropertyAccessError,
                    format!(
                        "Access to uninitialized property \"{name}\" in class \"{}\" is forbidden",
                        self.caller()
                            .as_deref()
                            .and_then(|k| k.split('/').next())
                            .unwrap_or(&*class.name)
                    ),
                )),
            };
        };
        if prop.usage == PropertyUsage::Static {
            let v = self.static_get(&decl.key, name);
            return self.static_value(decl, prop, v);
        }
        let v = self.with_obj(r, |o| o.props.get(&Value::str(name)).cloned())?;
        match v {
            Some(v) => Ok(v),
            None => Err(Error::new(
                ErrorKind::UninitializedPropertyAccessError,
                format!(
                    "Access to uninitialized property \"{name}\" in class \"{}\" is forbidden",
                    class.name
                ),
            )),
        }
    }

    pub(crate) fn static_value(
        &self,
        decl: &Class,
        prop: &Prop,
        v: Option<Value>,
    ) -> Result<Value> {
        if let Some(v) = v {
            return Ok(v);
        }
        let decl = &self.class(&decl.key)?;
        // Initialise from the default on first read.
        let legacy = decl.package.legacy;
        let env = self.env(legacy).clone();
        let ctx = self.class_ctx(decl, Value::Type(decl.type_ref.clone()));
        let raw = match &prop.default {
            Some(t) => t.eval(&env, &ctx)?,
            None => Value::Null,
        };
        let v = prop
            .contract
            .check(self, &env, &ctx, raw, None, &prop.name)?;
        self.static_set(&decl.key, &prop.name, v.clone());
        Ok(v)
    }

    /// Writes `obj.name = v` through the property's contract.
    pub fn set_property(
        &self,
        r: &Arc<ObjRef>,
        name: &str,
        v: Value,
        inside: bool,
        caller: Option<&Arc<Class>>,
    ) -> Result<()> {
        let class = self.class_of(r)?;
        let Some((decl, prop)) = class.find_prop(name) else {
            if !inside {
                return Err(Error::new(
                    ErrorKind::PropertyWriteError,
                    format!("Property '{name}' of class {} is private", class.name),
                ));
            }
            let key = match caller {
                Some(c) => Value::str(format!("{}::{name}", c.key)),
                None => self.private_key(name),
            };
            return self.with_obj(r, |o| {
                o.props.insert(key, v);
            });
        };
        if !inside {
            return Err(Error::new(
                ErrorKind::NoWriteAccessError,
                format!("Property '{name}' is not writable from outside"),
            ));
        }
        if matches!(prop.usage, PropertyUsage::In | PropertyUsage::Const)
            && self.with_obj(r, |o| o.initialized)?
        {
            return Err(Error::new(
                ErrorKind::NoWriteAccessError,
                format!("Property \"{name}\" is immutable to the caller"),
            ));
        }
        let legacy = decl.package.legacy;
        let env = self.env(legacy).clone();
        let decl = &self.class(&decl.key)?;
        let ctx = self.class_ctx(decl, Value::Object(r.clone()));
        let v = prop
            .contract
            .check(self, &env, &ctx, v, Some(r), &prop.name)?;
        if prop.usage == PropertyUsage::Static {
            self.static_set(&decl.key, name, v);
            return Ok(());
        }
        self.with_obj(r, |o| {
            o.props.insert(Value::str(name), v);
        })
    }

    /// The storage key of an undeclared property for the class whose method
    /// is running (set by [`Executor::set_caller`]).
    fn private_key(&self, name: &str) -> Value {
        Value::str(format!("{}::{name}", self.caller().unwrap_or_default()))
    }

    /// Records the declaring class of the method whose expressions run now
    /// (for private properties); returns the previous one.
    pub fn set_caller(&self, class: Option<Arc<str>>) -> Option<Arc<str>> {
        let me = vm::coro::current_id();
        let mut st = self.lock();
        match class {
            Some(c) => st.callers.insert(me, c),
            None => st.callers.remove(&me),
        }
    }

    /// The declaring class of the method whose expressions run now on this
    /// green thread.
    pub fn caller(&self) -> Option<Arc<str>> {
        self.lock().callers.get(&vm::coro::current_id()).cloned()
    }

    /// A context for evaluating expressions of `class` with `$` = `this`.
    pub fn class_ctx(&self, class: &Arc<Class>, this: Value) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(this.clone());
        f.vars.push(("this".into(), this));
        f.scope = Some(
            exec::Scope {
                class: Some(class.clone()),
                ..Default::default()
            }
            .into_frame_scope(),
        );
        Arc::new(f)
    }

    /// The class of the method a context belongs to.
    pub fn ctx_class(&self, ctx: &Arc<Frame>) -> Option<Arc<Class>> {
        exec::Scope::find(ctx, |s| s.class.clone())
    }

    // ---- exceptions ---------------------------------------------------

    /// Makes the error a `Throw` raises: an `io.murano.Exception` object
    /// carried by an error of kind [`exec::MURANO_EXCEPTION`].
    pub fn throw(
        &self,
        names: Vec<String>,
        message: String,
        extra: Value,
        cause: Option<Value>,
    ) -> Error {
        let obj = match self.exception(&names, &message, extra, cause) {
            Ok(o) => o,
            Err(e) => return e,
        };
        Error::new(exec::MURANO_EXCEPTION, message).with_data(obj)
    }

    fn exception(
        &self,
        names: &[String],
        message: &str,
        extra: Value,
        cause: Option<Value>,
    ) -> Result<Value> {
        let class = self.class("io.murano.Exception")?;
        let r = self.create(&class, None, None);
        self.with_obj(&r, |o| {
            o.props.insert(
                Value::str("name"),
                Value::str(names.first().cloned().unwrap_or_default()),
            );
            o.props.insert(Value::str("message"), Value::str(message));
            o.props.insert(Value::str("extra"), extra);
            o.props
                .insert(Value::str("cause"), cause.unwrap_or(Value::Null));
            o.props.insert(Value::str("stackTrace"), Value::Null);
            o.props.insert(Value::str("nativeException"), Value::Null);
            o.attrs.insert(
                Value::str("#names"),
                Value::list(names.iter().map(|n| Value::str(n.as_str())).collect()),
            );
            o.initialized = true;
        })?;
        Ok(Value::Object(r))
    }

    /// The exception object a `Catch` with `As` binds for an error, its
    /// `stackTrace` an `io.murano.StackTrace` of the frames the error left
    /// (set once: a rethrown exception keeps the trace of its first catch).
    pub fn exception_object(&self, e: &Error, names: &[String]) -> Result<Value> {
        let obj = match e.data() {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => self.exception(names, e.message(), Value::dict(Dict::default()), None)?,
        };
        if let Value::Object(r) = &obj {
            if self.get_property(r, "stackTrace", true)?.is_null() {
                let trace = self.stack_trace(e)?;
                self.with_obj(r, |o| {
                    o.props.insert(Value::str("stackTrace"), trace);
                })?;
            }
        }
        Ok(obj)
    }

    /// An `io.murano.StackTrace` of the error's frames, outermost first,
    /// each a dict as murano's `compose_stack_frame`
    /// (murano/dsl/principal_objects/stack_trace.py) makes it:
    /// `instruction`, `location` (`file`, `line`, `column`), `methodName`,
    /// `typeName`.
    fn stack_trace(&self, e: &Error) -> Result<Value> {
        let frames = e
            .stack_frames()
            .into_iter()
            .map(|f| {
                let mut d = Dict::default();
                let (instr, loc) = match f.statement {
                    Some((at, text)) => {
                        let mut l = Dict::default();
                        l.insert(Value::str("file"), Value::str(&*at.file));
                        l.insert(Value::str("line"), Value::Int(at.line.into()));
                        l.insert(Value::str("column"), Value::Int(at.col.into()));
                        (Value::str(&*text), Value::dict(l))
                    }
                    None => (Value::Null, Value::Null),
                };
                let (ty, m) = match f.method {
                    Some((t, m)) => (Value::str(&*t), Value::str(&*m)),
                    None => (Value::Null, Value::Null),
                };
                d.insert(Value::str("instruction"), instr);
                d.insert(Value::str("location"), loc);
                d.insert(Value::str("methodName"), m);
                d.insert(Value::str("typeName"), ty);
                Value::dict(d)
            })
            .collect();
        let class = self.class("io.murano.StackTrace")?;
        let r = self.create(&class, None, None);
        self.with_obj(&r, |o| {
            o.props.insert(Value::str("frames"), Value::list(frames));
            o.initialized = true;
        })?;
        Ok(Value::Object(r))
    }

    // ---- gc support ----

    /// Runs `f` on the garbage collector's state.
    pub fn gc_state<T>(&self, f: impl FnOnce(&mut gc::GcState) -> T) -> T {
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

impl Host for Executor {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }

    /// Objects and types dispatch here; a plain value only when some
    /// loaded class declares an extension method of that name.
    fn may_handle(&self, receiver: &Value, name: &str) -> bool {
        matches!(receiver, Value::Object(_) | Value::Type(_))
            || self.catalog.extension_names.contains(name)
    }

    fn rng(&self) -> Option<&runtime::rand::Rng> {
        Some(&self.rng)
    }

    fn call_method(
        &self,
        cx: &Cx,
        receiver: &Value,
        name: &str,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Option<Result<Value>> {
        let _gc_root = gc::FrameGuard::push(self, cx.ctx); // gc: the caller's locals stay alive
        let _site = testing::CallSite::push(self, cx.ctx); // test runner: withOriginal's context
        if let Some(e) = gc::destroyed_error(self, receiver) {
            return Some(Err(e));
        }
        // Arguments reach MuranoPL methods evaluated, lazy sequences as lists.
        let force = |a: &ArgIn| -> Result<Value> {
            let v = match a {
                ArgIn::Val(v) => v.clone(),
                ArgIn::Thunk(c) => c.call(cx.env, &[])?,
                ArgIn::Skip => Value::Null,
            };
            stdlib::finalize(cx.env, v)
        };
        let args = || -> Result<(Vec<Value>, Vec<(Arc<str>, Value)>)> {
            let mut p = Vec::new();
            for a in pos {
                p.push(force(a)?);
            }
            let mut n = Vec::new();
            for (k, a) in named {
                n.push((k.clone(), force(a)?));
            }
            Ok((p, n))
        };
        let own = match receiver {
            Value::Object(o) => match self.dispatch_class(o) {
                Ok(c) => Some(c),
                Err(e) => return Some(Err(e)),
            },
            Value::Type(t) => match self.class(&t.name) {
                Ok(c) => Some(c),
                Err(e) => return Some(Err(e)),
            },
            _ => None,
        };
        if let Some(class) = &own {
            if class.ambiguous_method(name) {
                return Some(Err(Error::new(
                    ErrorKind::AmbiguousMethodName,
                    format!("Found more that one method \"{name}\""),
                )));
            }
            if let Some(m) = class.find_method(name) {
                if let (Value::Type(_), false) = (receiver, m.is_static()) {
                    return Some(Err(Error::new(
                        ErrorKind::NoMatchingMethodException,
                        format!("Method {name} of {} is not static", class.name),
                    )));
                }
                // An extension method of the object's own class is still
                // an extension: the object is its first argument (murano's
                // `_create_extension_mpl_stub` in murano/dsl/yaql_integration.py).
                if !(m.usage == MethodUsage::Extension && matches!(receiver, Value::Object(_))) {
                    return Some(args().and_then(|(p, n)| self.invoke(receiver, class, &m, p, n)));
                }
                let eclass = match self.class(&m.class) {
                    Ok(c) => c,
                    Err(e) => return Some(Err(e)),
                };
                return self.extend(cx, receiver, &eclass, &m, args);
            }
        }
        // Extension methods visible from the calling class.
        if !self.catalog.extension_names.contains(name) {
            return None;
        }
        let ext = self
            .ctx_class(cx.ctx)
            .and_then(|caller| self.find_extension(&caller, name));
        let (eclass, m) = ext?;
        self.extend(cx, receiver, &eclass, &m, args)
    }
}

/// Calls a function of the registry by name (used by engine functions).
pub fn call_registry(cx: &Cx, name: &str, form: Form, args: Vec<Value>) -> Result<Value> {
    let pos: Vec<ArgIn> = args.into_iter().map(ArgIn::Val).collect();
    cx.env.registry().call(cx, name, None, form, &pos, &[])
}

/// The executor behind an environment.
pub fn executor(cx: &Cx) -> Result<Arc<Executor>> {
    cx.env
        .host()
        .and_then(|h| h.into_owned().as_any_arc().downcast::<Executor>().ok())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::RuntimeError,
                "no MuranoPL executor in this context",
            )
        })
}

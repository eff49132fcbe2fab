//! The MuranoPL facade: load a catalogue of packages once, then open as
//! many sessions over it as there are models, requests or tests. Every
//! session shares the catalogue's compiled classes; each has its own
//! object store and its own simulated cloud.
//!
//! ```
//! use muranopl::Catalogue;
//! use muranopl::json;
//! # let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
//! // Compile once...
//! let cat = Catalogue::load(&[examples.join("validate")], &[], true).unwrap();
//! // ...validate many models (each in an execution of its own).
//! let model = json::from_tagged_str(r#"{"?": {"id": "s1", "type": "com.example.Server"},
//!     "name": "a", "port": 70000, "tags": [], "enabled": true,
//!     "settings": {"timeout": 1, "label": "x"}}"#).unwrap();
//! let report = cat.validate(&model);
//! assert_eq!(report.violations.len(), 1);
//! assert_eq!(report.violations[0].1, "port");
//!
//! // Deploy an application to the simulated cloud.
//! let cat = Catalogue::load(&[examples.join("hello-app")], &[], true).unwrap();
//! let session = cat.session();
//! let app = json::from_tagged_str(r#"{"?": {"id": "app", "type": "com.example.Hello"},
//!     "instance": {"?": {"id": "vm", "type": "io.murano.resources.LinuxMuranoInstance"},
//!                  "name": "web", "flavor": "m1.small", "image": "ubuntu"}}"#).unwrap();
//! session.deploy(&app, "deploy").unwrap();
//! let record = json::to_tagged_string(&session.record());
//! assert!(record.contains("hello from 10."));
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use crate::artifact::format as mcat;
use crate::yaql::Engine;
use engine::model::Validation;
use engine::{Catalog, Executor, Package};
use package::{to_package, FormatRegistry, PackageFormat, PackageLoader};
use runtime::Value;
use sim::SimCloud;

/// Loaded packages and their shared compiled classes: what every
/// validation, run, test, schema and action of this library reads. Cheap
/// to clone (the compiled classes are shared); share it across threads.
#[derive(Clone)]
pub struct Catalogue {
    formats: Vec<Arc<dyn PackageFormat>>,
    catalog: Arc<Catalog>,
    /// Statements each session's execution may run.
    max_steps: u64,
    /// What loading warned about (a class that failed to load when not
    /// strict, a package of the search path that could not be read).
    warnings: Arc<[String]>,
    /// Where each package's files are on this machine, as messages name
    /// them (JSON-escaped), and what [`Catalogue::without_paths`] says
    /// instead: the package's name. The longest first.
    paths: Arc<[(String, String)]>,
}

impl Catalogue {
    /// Loads packages (directories, .zip files or catalogue artifacts,
    /// `.mcat`: see [`crate::artifact`]) and, from the search path `libs`,
    /// what they require. A class that fails to load is a
    /// warning ([`Catalogue::warnings`]; the rest of its package still
    /// runs), or, when `strict`, the error.
    pub fn load(paths: &[PathBuf], libs: &[PathBuf], strict: bool) -> Result<Catalogue, String> {
        let formats = load_formats(paths, libs)?;
        Catalogue::from_formats(formats, strict, Vec::new(), None)
    }

    /// What Murano's API serves: the given packages with what they
    /// require or, when none is given, every package on the search path
    /// (all versions); plus the forms metadata package. Not strict: a
    /// class that fails to load, or a package of the search path that
    /// cannot be read, is a warning.
    pub fn load_served(
        paths: &[PathBuf],
        libs: &[PathBuf],
        class_configs: Option<&std::path::Path>,
    ) -> Result<Catalogue, String> {
        let mut formats = load_formats(paths, libs)?;
        let mut warnings = Vec::new();
        if paths.is_empty() {
            let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
            for b in &loader.broken {
                warnings.push(format!("{}: {}", b.path.display(), b.error.message()));
            }
            for f in loader.found.values().flatten() {
                if !formats
                    .iter()
                    .any(|q| q.full_name() == f.name && *q.version() == f.version)
                {
                    formats.push(f.package.clone());
                }
            }
        }
        let extra = forms::schema::forms_package().into_iter().collect();
        let mut cat = Catalogue::from_formats(formats, false, extra, class_configs)?;
        warnings.extend(cat.warnings.iter().cloned());
        cat.warnings = warnings.into();
        Ok(cat)
    }

    /// A catalogue over already loaded packages, plus `extra` packages
    /// searched after them; `class_configs` is a directory of per-class
    /// configuration files (see [`read_class_configs`]).
    pub fn from_formats(
        formats: Vec<Arc<dyn PackageFormat>>,
        strict: bool,
        extra: Vec<Package>,
        class_configs: Option<&std::path::Path>,
    ) -> Result<Catalogue, String> {
        let (mut packages, warnings) = packages_of(&formats, strict)?;
        packages.extend(extra);
        if let Some(dir) = class_configs {
            read_class_configs(dir, &mut packages)?;
        }
        let paths = package_paths(&formats);
        Ok(Catalogue {
            formats,
            catalog: Catalog::new(packages),
            max_steps: engine::STEP_BUDGET,
            warnings: warnings.into(),
            paths,
        })
    }

    /// This catalogue, its MuranoPL code (method bodies, property
    /// defaults, contracts) able to call the functions `engine` defines
    /// ([`crate::Engine::define`]) by name, `name(...)`, from any thread
    /// that runs it. A host function takes precedence over a
    /// standard-library or engine function of its name; functions the
    /// engine defines later are not seen, nor those of an earlier call
    /// (this one's replace them). Unlike in the engine's evaluations, a
    /// call that leaves an argument out (`f(1,,3)`) does not reach the
    /// function: it is an error of the calling code. The classes are
    /// compiled again, when first used, against the functions; the
    /// packages are shared.
    ///
    /// ```
    /// use muranopl::{json, Catalogue, Engine, Limits, Value};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/c/doubler");
    /// let mut engine = Engine::new(Default::default());
    /// engine.define("twice", std::sync::Arc::new(|args, _kw| {
    ///     Ok(Value::Int(2 * args[0].as_ref().and_then(|v| v.as_i64()).unwrap_or(0)))
    /// }));
    /// let cat = Catalogue::load(&[dir.into()], &[], true).unwrap();
    /// let cat = cat.with_host_functions(&engine);
    /// let model = json::from_tagged_str(r#"{"?": {"id": "d", "type": "com.example.Doubler"},
    ///     "x": 21}"#).unwrap();
    /// let out = cat.session().run_method(&model, "double", Limits::default());
    /// // The model's root runs in an environment: one result per application.
    /// assert_eq!(json::to_tagged_string(&out.result.unwrap()), "[42]");
    /// ```
    pub fn with_host_functions(&self, engine: &Engine) -> Catalogue {
        self.with_natives(crate::host::natives(engine.host_functions()))
    }

    /// This catalogue compiled against other natives (the registries its
    /// code sees): the packages are shared, the classes compiled again
    /// when first used.
    fn with_natives(&self, natives: engine::Natives) -> Catalogue {
        // The catalogue's packages and the core library, added last, that
        // a new catalogue adds again.
        let packages = self.catalog.packages();
        let own = packages[..packages.len().saturating_sub(1)].iter();
        let catalog = Catalog::with_natives(own.map(|p| (**p).clone()).collect(), natives);
        catalog.set_jit(self.catalog.jit());
        Catalogue {
            catalog,
            ..self.clone()
        }
    }

    /// What loading warned about, one line each (nothing is printed).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// `name/version` of every package loaded.
    pub fn names(&self) -> Vec<String> {
        (self.formats.iter())
            .map(|f| format!("{}/{}", f.full_name(), f.version()))
            .collect()
    }

    /// `json`, a JSON text, with every package's location on this machine
    /// replaced by the package's name (`/srv/apps/web/Classes/W.yaml:3:5`
    /// becomes `com.example.Web/Classes/W.yaml:3:5`): for answers that
    /// leave the machine.
    pub fn without_paths(&self, json: &str) -> String {
        let mut out = json.to_string();
        for (at, name) in self.paths.iter() {
            if out.contains(at.as_str()) {
                out = out.replace(at.as_str(), name);
            }
        }
        out
    }

    /// Sets when contracts and conditions are compiled to machine code.
    pub fn set_jit(&self, mode: compiler::jit::Mode) {
        self.catalog.set_jit(mode);
    }

    /// Sets how many statements each session's execution may run
    /// (`u64::MAX`: unlimited; [`engine::STEP_BUDGET`] by default).
    pub fn set_max_steps(&mut self, steps: u64) {
        self.max_steps = steps;
    }

    /// The loaded packages, roots first.
    pub fn formats(&self) -> &[Arc<dyn PackageFormat>] {
        &self.formats
    }

    /// The compiled classes.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Validates an object model (`{"Objects": ...}` or a bare object)
    /// against the catalogue's contracts, in an execution of its own.
    pub fn validate(&self, model: &Value) -> Validation {
        engine::model::validate(&self.catalog, model)
    }

    /// A fresh execution over the catalogue with its own simulated cloud,
    /// the packages' resources readable from it.
    pub fn session(&self) -> Session {
        let cloud = Arc::new(SimCloud::new());
        for p in &self.formats {
            let p2 = p.clone();
            cloud.set_resources(
                p.full_name(),
                Arc::new(move |n: &str| p2.get_resource(n).ok()),
            );
        }
        let ex = Executor::with_catalog(self.catalog.clone());
        ex.set_cloud(cloud.clone());
        ex.set_step_budget(self.max_steps);
        Session { ex, cloud }
    }
}

/// One execution: an executor and the simulated cloud it deploys to.
pub struct Session {
    ex: Arc<Executor>,
    cloud: Arc<SimCloud>,
}

impl Session {
    /// The executor.
    pub fn executor(&self) -> &Arc<Executor> {
        &self.ex
    }

    /// The simulated cloud.
    pub fn cloud(&self) -> &SimCloud {
        &self.cloud
    }

    /// Loads an object model and runs `method` on it in the simulated
    /// cloud (see [`sim::deploy`]: a root that is not an environment is
    /// placed into one); returns the root object (the method's return
    /// value is dropped).
    pub fn deploy(&self, model: &Value, method: &str) -> runtime::Result<Value> {
        let root = sim::deploy::load(&self.ex, model, "environment")?;
        sim::deploy::run(&self.ex, &root, method)?;
        Ok(Value::Object(root))
    }

    /// What the run did in the cloud (see [`SimCloud::record`]).
    pub fn record(&self) -> Value {
        self.cloud.record()
    }

    /// Loads an object model and runs `method` on its root (see
    /// [`Session::deploy`]) within `limits`, on an engine-owned stack.
    /// Never fails as a whole: the outcome holds the method's result or
    /// error, the object model after the run (when the model loaded) and
    /// the log the run wrote.
    ///
    /// ```
    /// use muranopl::{json, Catalogue, Limits};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/hello-app");
    /// let cat = Catalogue::load(&[dir.into()], &[], true).unwrap();
    /// let app = json::from_tagged_str(r#"{"?": {"id": "app", "type": "com.example.Hello"},
    ///     "instance": {"?": {"id": "vm", "type": "io.murano.resources.LinuxMuranoInstance"},
    ///                  "name": "web", "flavor": "m1.small", "image": "ubuntu"}}"#).unwrap();
    /// let out = cat.session().run_method(&app, "deploy", Limits::default());
    /// assert!(out.result.is_ok());
    /// assert!(json::to_tagged_string(out.model.as_ref().unwrap()).contains("com.example.Hello"));
    /// ```
    pub fn run_method(&self, model: &Value, method: &str, limits: Limits) -> Outcome {
        vm::coro::on_big_stack(|| {
            let _budget = self.limit(limits);
            let ex = self.executor();
            let (result, model) = match sim::deploy::load(ex, model, "environment") {
                Ok(root) => {
                    let r = sim::deploy::run(ex, &root, method);
                    (r, engine::serialize::serialize_model(ex, &root).ok())
                }
                Err(e) => (Err(e), None),
            };
            Outcome {
                result,
                model,
                log: ex.take_log(),
            }
        })
    }
}

/// What one run did ([`Session::run_method`]).
pub struct Outcome {
    /// The method's return value, or the error it ended with (its
    /// MuranoPL stack trace in [`Error::trace`](runtime::Error::trace)).
    pub result: runtime::Result<Value>,
    /// The object model after the run (`None` when the model did not load).
    pub model: Option<Value>,
    /// The lines the run logged.
    pub log: Vec<String>,
}

/// Loads packages and what they require from the search path, each
/// `name/version` once. A path ending in `.mcat` is a catalogue artifact
/// (see [`crate::artifact`]): its packages, read into memory.
pub fn load_formats(
    paths: &[PathBuf],
    libs: &[PathBuf],
) -> Result<Vec<Arc<dyn PackageFormat>>, String> {
    load_formats_for(paths, libs, None)
}

/// [`load_formats`], plus the packages of the search path that provide
/// the classes an object model's objects ask for (see
/// [`PackageLoader::model_packages`]).
pub fn load_formats_for(
    paths: &[PathBuf],
    libs: &[PathBuf],
    model: Option<&Value>,
) -> Result<Vec<Arc<dyn PackageFormat>>, String> {
    load_formats_roots(paths, libs, model).map(|(all, _)| all)
}

/// [`load_formats_for`], and how many of the packages (the first) are
/// the roots: one for each path, or an artifact's roots for it. An
/// artifact's packages are what its roots require (resolved when it was
/// packed, not again); they come before the search path's copies of the
/// same `name/version` for the other paths' requirements.
pub fn load_formats_roots(
    paths: &[PathBuf],
    libs: &[PathBuf],
    model: Option<&Value>,
) -> Result<(Vec<Arc<dyn PackageFormat>>, usize), String> {
    let reg = FormatRegistry::builtin();
    let mut loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    let mut all: Vec<Arc<dyn PackageFormat>> = Vec::new();
    let push = |p: Arc<dyn PackageFormat>, all: &mut Vec<Arc<dyn PackageFormat>>| {
        if !all
            .iter()
            .any(|q| q.full_name() == p.full_name() && q.version() == p.version())
        {
            all.push(p);
        }
    };
    // Roots to resolve, and the artifacts' own requirements (resolved).
    let mut roots = Vec::new();
    let mut shipped = Vec::new();
    for path in paths {
        if mcat::is_artifact(path) {
            let a = mcat::read(path)?;
            for p in &a.packages {
                prefer(&mut loader, p.base().source.location().to_path_buf(), p);
            }
            let n = a.contents.roots.len();
            a.roots().iter().for_each(|p| push(p.clone(), &mut all));
            shipped.extend(a.packages.into_iter().skip(n));
            continue;
        }
        let p = reg.load(path).map_err(|e| {
            // The error may name the path already (a missing package).
            let shown = path.display().to_string();
            match e.message() {
                m if m.starts_with(&shown) => m.to_string(),
                m => format!("{shown}: {m}"),
            }
        })?;
        push(p.clone(), &mut all);
        roots.push(p);
    }
    let n_roots = all.len();
    for p in shipped {
        push(p, &mut all);
    }
    for root in &roots {
        let deps = loader.resolve(root).map_err(|e| e.message().to_string())?;
        for d in deps {
            push(d, &mut all);
        }
    }
    if let Some(model) = model {
        let more = loader
            .model_packages(model, &all)
            .map_err(|e| e.message().to_string())?;
        for p in more {
            push(p, &mut all);
        }
    }
    Ok((all, n_roots))
}

/// Adds `p` to the loader's packages in place of a copy of the same
/// `name/version` the search path has.
fn prefer(loader: &mut PackageLoader, at: PathBuf, p: &Arc<dyn PackageFormat>) {
    if let Some(list) = loader.found.get_mut(p.full_name()) {
        list.retain(|f| f.version != *p.version());
    }
    loader.add(at, p.clone());
}

/// Reads the configuration of each class of `packages` from `dir`:
/// `<full class name>.json`, else `<full class name>.yaml`, a mapping of
/// property names to values for its `Usage: Config` properties, as
/// murano's package loader reads `[engine] class_configs`
/// (murano/engine/package_loader.py, `get_class_config`). A class without
/// a file has no configuration.
pub fn read_class_configs(dir: &std::path::Path, packages: &mut [Package]) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a directory of class configs",
            dir.display()
        ));
    }
    for p in packages.iter_mut() {
        for class in p.class_names() {
            let Some(v) = read_class_config(dir, &class)? else {
                continue;
            };
            match v {
                Value::Dict(ref d) => {
                    p.configs.insert(class, (**d).clone());
                }
                other => {
                    return Err(format!(
                        "{}: the configuration of {class} must be a mapping, not {}",
                        dir.display(),
                        other.type_name()
                    ))
                }
            }
        }
    }
    Ok(())
}

fn read_class_config(dir: &std::path::Path, class: &str) -> Result<Option<Value>, String> {
    let json = dir.join(format!("{class}.json"));
    if json.is_file() {
        let text =
            std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
        return runtime::json::from_tagged_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {}", json.display(), e.message()));
    }
    let yaml = dir.join(format!("{class}.yaml"));
    if yaml.is_file() {
        let text =
            std::fs::read_to_string(&yaml).map_err(|e| format!("{}: {e}", yaml.display()))?;
        let file = yaml.display().to_string();
        let docs = compiler::murano::yaml::load_documents(&text, &file)
            .map_err(|e| e.message().to_string())?;
        return Ok(docs.first().map(compiler::murano::yaml::node_value));
    }
    Ok(None)
}

/// The executor's packages from the loaded `formats`, and the warnings:
/// a class that fails to load is a warning (the rest of the package still
/// runs), or, when `strict`, the error.
pub fn packages_of(
    formats: &[Arc<dyn PackageFormat>],
    strict: bool,
) -> Result<(Vec<Package>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for f in formats {
        let (p, errors) = to_package(&**f);
        for e in errors {
            if strict {
                return Err(format!("{}: {}: {}", f.full_name(), e.kind(), e.message()));
            }
            warnings.push(format!("{}: {}", f.full_name(), e.message()));
        }
        out.push(p);
    }
    Ok((out, warnings))
}

/// Each package's location as messages name it (JSON-escaped) and its
/// name to say instead, the longest first (a package inside another's
/// directory).
fn package_paths(formats: &[Arc<dyn PackageFormat>]) -> Arc<[(String, String)]> {
    let json_text = |s: &str| {
        let quoted = serde_json::Value::String(s.to_string()).to_string();
        quoted[1..quoted.len() - 1].to_string()
    };
    let mut paths: Vec<(String, String)> = (formats.iter())
        .map(|f| {
            let at = f.base().source.display("");
            (json_text(&at), json_text(&format!("{}/", f.full_name())))
        })
        .collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
    paths.into()
}

/// The limits of one MuranoPL execution.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall-clock time (`None`: unlimited).
    pub timeout: Option<std::time::Duration>,
    /// Statements (`None`: unlimited).
    pub max_steps: Option<u64>,
    /// Bytes the execution's values may take in all (`None`: unlimited).
    pub max_memory: Option<usize>,
    /// Where the execution's `random()` and `randomName()` start (`None`:
    /// from the clock); see `runtime::rand`.
    pub seed: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Some(std::time::Duration::from_secs(600)),
            max_steps: Some(engine::STEP_BUDGET),
            max_memory: Some(runtime::DEFAULT_MAX_MEMORY),
            seed: None,
        }
    }
}

impl Limits {
    /// No limit at all.
    pub const UNLIMITED: Limits = Limits {
        timeout: None,
        max_steps: None,
        max_memory: None,
        seed: None,
    };

    /// Applies the time and memory limits to what runs on this thread
    /// while the returned scope lives (the statement limit is a session's:
    /// [`Session::limit`]). A scope opened inside another never loosens it.
    pub fn start(&self) -> runtime::budget::Budget {
        runtime::budget::Budget::start(self.timeout, self.max_memory)
    }
}

impl Session {
    /// Applies `limits` to this session's execution; the time budget holds
    /// while the returned scope lives.
    pub fn limit(&self, limits: Limits) -> runtime::budget::Budget {
        self.executor()
            .set_step_budget(limits.max_steps.unwrap_or(u64::MAX));
        self.executor().set_seed(limits.seed);
        limits.start()
    }
}

//! The MuranoPL facade: load a catalogue of packages once, then open as
//! many sessions over it as there are models, requests or tests. Every
//! session shares the catalogue's compiled classes; each has its own
//! object store and its own simulated cloud.
//!
//! ```
//! use muranopl::session::Catalogue;
//! use muranopl::json;
//! // Compile once...
//! let cat = Catalogue::load(&["examples/validate".into()], &[], true).unwrap();
//! // ...validate many models (each in an execution of its own).
//! let model = json::from_tagged_str(r#"{"?": {"id": "s1", "type": "com.example.Server"},
//!     "name": "a", "port": 70000, "tags": [], "enabled": true,
//!     "settings": {"timeout": 1, "label": "x"}}"#).unwrap();
//! let report = cat.validate(&model);
//! assert_eq!(report.violations.len(), 1);
//! assert_eq!(report.violations[0].1, "port");
//!
//! // Deploy an application to the simulated cloud.
//! let cat = Catalogue::load(&["examples/hello-app".into()], &[], true).unwrap();
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

use engine::model::Validation;
use engine::{Catalog, Executor, Package};
use package::{to_package, FormatRegistry, PackageFormat, PackageLoader};
use runtime::Value;
use sim::SimCloud;

/// Loaded packages and their shared compiled classes.
#[derive(Clone)]
pub struct Catalogue {
    formats: Vec<Arc<dyn PackageFormat>>,
    catalog: Arc<Catalog>,
}

impl Catalogue {
    /// Loads packages (directories or .zip files) and, from the search
    /// path `libs`, what they require. A class that fails to load is a
    /// warning on stderr (the rest of its package still runs), or, when
    /// `strict`, the error.
    pub fn load(paths: &[PathBuf], libs: &[PathBuf], strict: bool) -> Result<Catalogue, String> {
        let formats = load_formats(paths, libs)?;
        Catalogue::from_formats(formats, strict, Vec::new(), None)
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
        let mut packages = packages_of(&formats, strict)?;
        packages.extend(extra);
        if let Some(dir) = class_configs {
            read_class_configs(dir, &mut packages)?;
        }
        Ok(Catalogue {
            formats,
            catalog: Catalog::new(packages),
        })
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
}

/// Loads packages and what they require from the search path, each
/// `name/version` once.
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
    let reg = FormatRegistry::builtin();
    let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    let mut all: Vec<Arc<dyn PackageFormat>> = Vec::new();
    let push = |p: Arc<dyn PackageFormat>, all: &mut Vec<Arc<dyn PackageFormat>>| {
        if !all
            .iter()
            .any(|q| q.full_name() == p.full_name() && q.version() == p.version())
        {
            all.push(p);
        }
    };
    let mut roots = Vec::new();
    for path in paths {
        let p = reg
            .load(path)
            .map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        push(p.clone(), &mut all);
        roots.push(p);
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
    Ok(all)
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

/// The executor's packages from the loaded `formats`. A class that fails
/// to load is a warning (the rest of the package still runs), or, when
/// `strict`, the error.
pub fn packages_of(
    formats: &[Arc<dyn PackageFormat>],
    strict: bool,
) -> Result<Vec<Package>, String> {
    let mut out = Vec::new();
    for f in formats {
        let (p, errors) = to_package(&**f);
        for e in errors {
            if strict {
                return Err(format!("{}: {}: {}", f.full_name(), e.kind(), e.message()));
            }
            eprintln!("warning: {}: {}", f.full_name(), e.message());
        }
        out.push(p);
    }
    Ok(out)
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

impl Session {
    /// Applies `limits` to this session's execution; the time budget holds
    /// while the returned scope lives.
    pub fn limit(&self, limits: Limits) -> runtime::budget::Budget {
        self.executor()
            .set_step_budget(limits.max_steps.unwrap_or(u64::MAX));
        self.executor().set_seed(limits.seed);
        runtime::budget::Budget::start(limits.timeout, limits.max_memory)
    }
}

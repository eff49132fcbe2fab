//! The catalogue: classes built from their declarations (resolution of
//! names, versions and parents, meta checks), once, shared by every
//! execution.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use compiler::murano::{ClassDecl, ClassUsage, MetaTarget, MethodUsage, Template};
use compiler::{jit, CompileOptions};
use runtime::value::TypeRef;
use runtime::{Error, ErrorKind, Registry, Result, Value};

use crate::class::{check_meta, mapped, Arg, Class, ContractCode, Method, Prop, VersionConflict};
use crate::code::{Body, CTemplate};
use crate::lineage;
use crate::package::Package;
use crate::version;

/// The compiled classes of a set of packages: what every execution over
/// those packages shares. A class is compiled (contracts, defaults, method
/// bodies) the first time any execution asks for it and is immutable from
/// then on; [`Catalog::compiled`] counts the compilations, so a process
/// compiles each class once however many executions, requests or threads
/// use it. `Send + Sync`; share it as an `Arc`.
pub struct Catalog {
    pub(crate) packages: Vec<Arc<Package>>,
    /// Names of the extension methods any loaded class declares, so that
    /// ordinary method calls skip the extension lookup.
    pub(crate) extension_names: std::collections::HashSet<String>,
    /// Names of the classes more than one loaded package provides (side by
    /// side versions): lookups of these depend on who asks.
    pub(crate) ambiguous: std::collections::HashSet<String>,
    pub(crate) classes: std::sync::RwLock<HashMap<String, Arc<Class>>>,
    /// Held while a class is compiled, so that two executions asking for
    /// the same class at once compile it once.
    pub(crate) building: Mutex<()>,
    pub(crate) compiled: std::sync::atomic::AtomicUsize,
    /// Time spent compiling, in nanoseconds.
    pub(crate) compile_ns: AtomicU64,
    /// When contracts are compiled to machine code ([`jit::Mode`] as a
    /// byte; set before the classes that should follow it are built).
    pub(crate) jit: AtomicU8,
    /// What the layers above give the catalogue.
    pub(crate) natives: Natives,
}

/// Compiles a contract template (the contracts layer's compiler).
pub type CompileContract =
    fn(&Template, &Registry, CompileOptions, jit::Mode) -> Result<ContractCode>;

/// What the layers above the catalogue give it, the registration API of
/// the natives: the function registries expressions and contracts are
/// compiled against (the standard library, the engine functions and the
/// contract methods, registered by the crate's top), and the contract
/// compiler.
pub struct Natives {
    /// MuranoPL's registry, by format (modern, legacy).
    pub murano: [Arc<Registry>; 2],
    /// The contracts' registry, by format (modern, legacy).
    pub contracts: [Arc<Registry>; 2],
    /// The contract compiler.
    pub compile_contract: CompileContract,
}

impl Catalog {
    /// A catalogue over packages (the first is searched first; the core
    /// library is added last), compiling with what the layers above give
    /// it (the crate's top: see `Catalog::new`). Nothing is compiled yet.
    pub fn with_natives(mut packages: Vec<Package>, natives: Natives) -> Arc<Catalog> {
        packages.push(Package::core());
        let extension_names = packages
            .iter()
            .flat_map(|p| p.decls.values())
            .flat_map(|d| d.methods.iter())
            .filter(|m| m.usage == MethodUsage::Extension)
            .map(|m| m.name.clone())
            .collect();
        let mut providers: HashMap<&str, usize> = HashMap::new();
        for d in packages.iter().flat_map(|p| p.decls.keys()) {
            *providers.entry(d.as_str()).or_default() += 1;
        }
        let ambiguous = providers
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(d, _)| d.to_string())
            .collect();
        Arc::new(Catalog {
            ambiguous,
            packages: packages.into_iter().map(Arc::new).collect(),
            extension_names,
            classes: Default::default(),
            building: Mutex::new(()),
            compiled: Default::default(),
            compile_ns: Default::default(),
            jit: AtomicU8::new(jit::Mode::default() as u8),
            natives,
        })
    }

    /// The registry MuranoPL expressions run with (standard library and
    /// the engine functions), for a package format.
    pub fn registry(&self, legacy: bool) -> Arc<Registry> {
        self.natives.murano[legacy as usize].clone()
    }

    /// The registry contracts run with (the MuranoPL one and the contract
    /// methods), for a package format.
    pub fn contract_registry(&self, legacy: bool) -> Arc<Registry> {
        self.natives.contracts[legacy as usize].clone()
    }

    /// When contracts are compiled to machine code.
    pub fn jit(&self) -> jit::Mode {
        match self.jit.load(Ordering::Relaxed) {
            0 => jit::Mode::Off,
            2 => jit::Mode::Always,
            _ => jit::Mode::Auto,
        }
    }

    /// Sets when contracts are compiled to machine code: `Always` compiles
    /// the contracts of the classes built from now on as they are built;
    /// `Off` stops using machine code at once.
    pub fn set_jit(&self, mode: jit::Mode) {
        self.jit.store(mode as u8, Ordering::Relaxed);
    }

    /// How many classes have been compiled so far.
    pub fn compiled(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }

    /// The time spent compiling classes so far.
    pub fn compile_time(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.compile_ns.load(Ordering::Relaxed))
    }

    /// The packages, in lookup order.
    pub fn packages(&self) -> &[Arc<Package>] {
        &self.packages
    }

    /// True when some loaded class declares an extension method `name`.
    pub fn declares_extension(&self, name: &str) -> bool {
        !self.extension_names.is_empty() && self.extension_names.contains(name)
    }

    pub(crate) fn cached(&self, key: &str) -> Option<Arc<Class>> {
        self.classes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    /// Finds (building on first use) a class by full name, or by a type
    /// string `Name/version@package` (either part may be left out) that
    /// picks one of several loaded versions of the class. A plain name is
    /// the version first in search order; so is a type string when only
    /// one package provides the class or nothing matches its version.
    pub fn class(&self, name: &str) -> Result<Arc<Class>> {
        if let Some(c) = self.cached(name) {
            return Ok(c);
        }
        let key = self.class_key(name, None);
        if key != name {
            if let Some(c) = self.cached(&key) {
                return Ok(c);
            }
        }
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let t0 = std::time::Instant::now();
        let r = self.build_class(&key, &mut Vec::new());
        self.compile_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }

    /// A class as code of package `from` sees it: when several loaded
    /// versions provide `name`, `from`'s own version if it is one of them,
    /// else the version `from`'s `Require` names, else the first.
    pub fn class_from(&self, name: &str, from: Option<&Package>) -> Result<Arc<Class>> {
        self.class(&self.key_from(name, from))
    }

    /// The key of class `name` as code of package `from` sees it (see
    /// [`Catalog::class_from`]); the plain name unless several loaded
    /// versions provide the class.
    pub fn key_from(&self, name: &str, from: Option<&Package>) -> String {
        if !self.ambiguous.contains(name) {
            return name.to_string();
        }
        self.class_key(name, from)
    }

    /// The packages (indices) providing class `name`, in search order.
    pub(crate) fn providers(&self, name: &str) -> Vec<usize> {
        (0..self.packages.len())
            .filter(|&i| self.packages[i].decls.contains_key(name))
            .collect()
    }

    /// The executor's key of the class `spec` (a name or a type string)
    /// names, as package `from` sees it.
    pub(crate) fn class_key(&self, spec: &str, from: Option<&Package>) -> String {
        let (name, ver, pkg) = if spec.contains(['/', '@']) {
            version::parse_type_string(spec)
        } else {
            (spec.to_string(), None, None)
        };
        let pinned = ver.is_some() || pkg.is_some();
        if !self.ambiguous.contains(&name) && !pinned {
            return name;
        }
        let providers = self.providers(&name);
        let version_of = |i: usize| version::parse_version(&self.packages[i].version).ok();
        let mut chosen = None;
        if pinned {
            let spec = ver
                .as_deref()
                .and_then(|v| version::VersionSpec::parse(Some(v)).ok());
            chosen = providers
                .iter()
                .copied()
                .filter(|&i| pkg.as_deref().is_none_or(|p| &*self.packages[i].name == p))
                .filter(|&i| match (&spec, version_of(i)) {
                    (Some(s), Some(v)) => s.matches(&v),
                    (Some(_), None) => false,
                    (None, _) => true,
                })
                .max_by_key(|&i| version_of(i));
        } else if let Some(from) = from {
            chosen = providers.iter().copied().find(|&i| {
                let p = &self.packages[i];
                p.name == from.name && p.version == from.version
            });
            if chosen.is_none() {
                chosen = from.requires.iter().find_map(|(req, spec)| {
                    providers
                        .iter()
                        .copied()
                        .filter(|&i| &*self.packages[i].name == req.as_str())
                        .filter(|&i| version_of(i).is_some_and(|v| spec.matches(&v)))
                        .max_by_key(|&i| version_of(i))
                });
            }
        }
        match chosen {
            Some(i) if Some(&i) != providers.first() => {
                let p = &self.packages[i];
                format!("{name}/{}@{}", p.version, p.name)
            }
            // A version or package no loaded class matches: a key no
            // class has, so that the lookup fails naming them (the only
            // loaded version is not taken instead).
            None if pinned && !providers.is_empty() => spec.to_string(),
            _ => name,
        }
    }

    /// The error for a class key no loaded class has: the version or
    /// package it names when the class is loaded in others.
    pub(crate) fn not_found(&self, key: &str) -> Error {
        let (name, ver, pkg) = version::parse_type_string(key);
        if !key.contains(['/', '@']) || !self.packages.iter().any(|p| p.decls.contains_key(&name)) {
            return self.no_class(&name);
        }
        let mut msg = format!("Class \"{name}\" is not found");
        if let Some(v) = ver {
            msg = format!("{msg} in a version matching \"{v}\"");
        }
        if let Some(p) = pkg {
            msg = format!("{msg} in package \"{p}\"");
        }
        Error::new(ErrorKind::NoClassFound, msg)
    }

    pub(crate) fn no_class(&self, name: &str) -> Error {
        let pkgs: Vec<String> = self
            .packages
            .iter()
            .rev()
            .map(|p| format!("{}/{}", p.name, p.version))
            .collect();
        Error::new(
            ErrorKind::NoClassFound,
            format!("Class \"{name}\" is not found in {}", pkgs.join(", ")),
        )
    }

    /// Checks every `Meta` of a declaration as murano's `MetaData` does when
    /// the class is built (murano/dsl/meta.py): each names a meta-class
    /// (built here) that applies to the target, and a meta-class of
    /// cardinality One is attached at most once per declaration.
    pub(crate) fn check_metas(
        &self,
        pkg: &Package,
        decl: &ClassDecl,
        building: &mut Vec<String>,
    ) -> Result<()> {
        let members = decl
            .properties
            .iter()
            .map(|p| (MetaTarget::Property, &p.meta));
        let methods = decl.methods.iter().flat_map(|m| {
            let args = m.arguments.iter().map(|a| (MetaTarget::Argument, &a.meta));
            std::iter::once((MetaTarget::Method, &m.meta)).chain(args)
        });
        let all = std::iter::once((MetaTarget::Type, &decl.meta))
            .chain(members)
            .chain(methods);
        for (target, metas) in all {
            let mut used = HashSet::new();
            for md in metas {
                let key = self.class_key(&md.name, Some(pkg));
                let mc = if building.contains(&key) {
                    let own = pkg
                        .decls
                        .get(&md.name)
                        .ok_or_else(|| self.no_class(&md.name))?;
                    own.clone()
                } else {
                    self.build_class(&key, building)?.decl.clone()
                };
                check_meta(&mc, target, &mut used)
                    .map_err(|e| md.pos.error(e.error_kind().clone(), e.message()))?;
            }
        }
        Ok(())
    }

    /// Builds the class of executor key `key` (see [`Catalog::class_key`]).
    pub(crate) fn build_class(&self, key: &str, building: &mut Vec<String>) -> Result<Arc<Class>> {
        if let Some(c) = self.cached(key) {
            return Ok(c);
        }
        let (name, found) = match key.split_once('/') {
            Some((name, rest)) => {
                let (ver, pkg) = rest.split_once('@').unwrap_or((rest, ""));
                let found = self
                    .packages
                    .iter()
                    .find(|p| &*p.version == ver && &*p.name == pkg && p.decls.contains_key(name));
                (name, found)
            }
            None => (
                key,
                self.packages.iter().find(|p| p.decls.contains_key(key)),
            ),
        };
        let Some((pkg, decl)) = found.map(|p| (p.clone(), p.decls[name].clone())) else {
            return Err(self.not_found(key));
        };
        if let Some(broken) = &decl.broken {
            return Err(broken.0.clone());
        }
        if building.iter().any(|b| b == key) {
            let chain = building.join(" -> ");
            return Err(decl.pos.error(
                ErrorKind::DslSyntaxError,
                format!("class {key} inherits from itself ({chain} -> {key})"),
            ));
        }
        building.push(key.to_string());
        let mut parents = Vec::new();
        for (i, pn) in decl.extends.iter().enumerate() {
            let pk = self.class_key(pn, Some(&pkg));
            // A parent that is not found is reported where it is named.
            let parent =
                self.build_class(&pk, building)
                    .map_err(|e| match decl.extends_at.get(i) {
                        Some(at) if *e.error_kind() == ErrorKind::NoClassFound => {
                            e.with_location(at.location())
                        }
                        _ => e,
                    })?;
            parents.push(parent);
        }
        // murano/dsl/murano_type.py `MuranoClass.__init__`: a class's
        // parents are classes; a meta-class's may be either.
        if decl.usage == ClassUsage::Class {
            if let Some(p) = parents.iter().find(|p| p.decl.usage == ClassUsage::Meta) {
                building.pop();
                return Err(decl.pos.error(
                    ErrorKind::InvalidInheritanceError,
                    format!(
                        "Type {name} cannot have parent with Usage Meta (parent {})",
                        p.name
                    ),
                ));
            }
        }
        let metas = self.check_metas(&pkg, &decl, building);
        building.pop();
        metas?;
        let (remap, mro, conflicts) = self.lineage(&pkg, name, key, &parents, building)?;
        let (props, methods) = self.compile_members(&pkg, &decl, key)?;
        let type_ref = Arc::new(TypeRef {
            name: key.into(),
            version: pkg.version.clone(),
            package: pkg.name.clone(),
        });
        let mut cls = Class {
            // The name it was asked by: a class the manifest lists under
            // another name than its file's `Name` is known by the
            // manifest's, as murano knows it.
            name: name.into(),
            key: key.into(),
            package: pkg.clone(),
            decl: decl.clone(),
            parents,
            ancestors: mro,
            props,
            methods,
            type_ref,
            init_order: Vec::new(),
            ambiguous: Vec::new(),
            remap,
            conflicts,
            plan: Default::default(),
        };
        cls.make_init_order();
        cls.ambiguous = cls.find_ambiguous();
        let cls = Arc::new(cls);
        self.classes
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), cls.clone());
        self.compiled.fetch_add(1, Ordering::Relaxed);
        Ok(cls)
    }

    /// The lineage of class `name` (key `key`, of package `pkg`) with
    /// declared parents `parents` (see [`crate::lineage`]): the ancestors
    /// its view replaces, its ancestors in method resolution order, and
    /// the classes left among them in several versions.
    fn lineage(
        &self,
        pkg: &Arc<Package>,
        name: &str,
        key: &str,
        parents: &[Arc<Class>],
        building: &mut Vec<String>,
    ) -> Result<(
        Vec<(Arc<str>, Arc<Class>)>,
        Vec<Arc<Class>>,
        Vec<VersionConflict>,
    )> {
        let mut class_in = |cname: &str, p: &Package| -> Result<Option<Arc<Class>>> {
            let providers = self.providers(cname);
            let Some(&i) = providers.iter().find(|&&i| {
                let q = &self.packages[i];
                q.name == p.name && q.version == p.version
            }) else {
                return Ok(None);
            };
            let k = if Some(&i) == providers.first() {
                cname.to_string()
            } else {
                format!("{cname}/{}@{}", p.version, p.name)
            };
            self.build_class(&k, building).map(Some)
        };
        let remap = lineage::remappings(pkg, key, parents, &mut class_in)?;
        let own: Vec<&Arc<Class>> = {
            let mut v: Vec<&Arc<Class>> = Vec::new();
            for p in parents {
                let p = mapped(p, &remap);
                if !v.iter().any(|q| q.key == p.key) {
                    v.push(p);
                }
            }
            v
        };
        let mro = lineage::linearize(&own, &remap).ok_or_else(|| {
            Error::new(
                ErrorKind::DslSyntaxError,
                format!("cannot linearize the parents of {name}"),
            )
        })?;
        let conflicts = lineage::conflicts(name, &own, &mro, &remap, pkg);
        Ok((remap, mro, conflicts))
    }

    /// Compiles the properties and methods of class `key` (declared by
    /// `decl` in `pkg`): contracts, defaults, bodies.
    fn compile_members(
        &self,
        pkg: &Package,
        decl: &ClassDecl,
        key: &str,
    ) -> Result<(Vec<Prop>, HashMap<String, Arc<Method>>)> {
        let legacy = pkg.legacy;
        let copts = CompileOptions {
            legacy,
            murano: true,
        };
        let mreg = self.registry(legacy);
        let creg = self.contract_registry(legacy);
        let compile_contract = self.natives.compile_contract;
        let mut props = Vec::new();
        for p in &decl.properties {
            props.push(Prop {
                name: p.name.as_str().into(),
                key: Value::Str(runtime::value::intern(&p.name)),
                usage: p.usage,
                contract: compile_contract(&p.contract, &creg, copts, self.jit())?,
                default: match &p.default {
                    Some(t) => Some(CTemplate::compile(t, &mreg, copts)?),
                    None => None,
                },
                has_default: p.default.is_some(),
            });
        }
        let mut methods = HashMap::new();
        for m in &decl.methods {
            let mut args = Vec::new();
            for a in &m.arguments {
                args.push(Arg {
                    name: a.name.as_str().into(),
                    usage: a.usage,
                    contract: compile_contract(&a.contract, &creg, copts, self.jit())?,
                    default: match &a.default {
                        Some(t) => Some(CTemplate::compile(t, &mreg, copts)?),
                        None => None,
                    },
                });
            }
            let body = match &m.body {
                Some(b) => Body::compile(b, &mreg, copts)?,
                None => Body::empty(),
            };
            methods.insert(
                m.name.clone(),
                Arc::new(Method {
                    name: m.name.as_str().into(),
                    class: key.into(),
                    args,
                    usage: m.usage,
                    scope: m.scope,
                    body,
                    decl: m.clone(),
                }),
            );
        }
        Ok((props, methods))
    }
}

//! Compiled classes: properties, methods and their arguments, with their
//! contracts, defaults and bodies compiled; method resolution order and the
//! choice between parents' symbols.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use compiler::murano::{
    ArgUsage, Cardinality, ClassDecl, ClassUsage, MetaTarget, MethodDecl, MethodScope, MethodUsage,
    PropertyUsage,
};
use runtime::value::TypeRef;
use runtime::{Error, Result, Value};

use crate::code::{Body, CTemplate};
use crate::package::Package;

/// A compiled contract as the class layer holds it: made and read by the
/// contracts layer above (`contracts::Contract`, which it dereferences to
/// there), opaque here.
pub struct ContractCode(Box<dyn Any + Send + Sync>);

impl ContractCode {
    /// Wraps compiled contract code.
    pub fn new<T: Any + Send + Sync>(code: T) -> ContractCode {
        ContractCode(Box::new(code))
    }

    /// The compiled code, when it is a `T`.
    #[inline]
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
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
    pub contract: ContractCode,
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
    pub contract: ContractCode,
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
    pub(crate) init_order: Vec<(u32, u32)>,
    /// Methods that two unrelated parents define (see
    /// [`Class::ambiguous_method`]).
    pub(crate) ambiguous: Vec<String>,
    /// The ancestors this class's view replaces by another version of
    /// their package (by key), as murano's parent remapping does (see
    /// [`crate::lineage`]).
    pub(crate) remap: Vec<(Arc<str>, Arc<Class>)>,
    /// Classes among the ancestors in several versions no requirement
    /// reconciles.
    pub(crate) conflicts: Vec<VersionConflict>,
    /// The plan of its property contracts on engine values
    /// (`contracts::plan::ObjectPlan`, opaque here), made when the JIT
    /// mode wants machine code for it.
    pub(crate) plan: compiler::jit::Tier<ContractCode>,
}

impl Class {
    /// A class of `package` that only names types (see
    /// [`ClassDecl::names_only`]): no parents, properties or methods, its
    /// key its name. Expressions evaluated in its scope (see
    /// [`crate::Executor::names_ctx`]) resolve class names and find
    /// extension methods as code of `package` declaring `decl`'s
    /// namespaces and imports would.
    pub fn names_only(decl: ClassDecl, package: Arc<Package>) -> Arc<Class> {
        let name: Arc<str> = decl.name.as_str().into();
        let type_ref = Arc::new(TypeRef {
            name: name.clone(),
            version: package.version.clone(),
            package: package.name.clone(),
        });
        Arc::new(Class {
            name: name.clone(),
            key: name,
            package,
            decl: Arc::new(decl),
            parents: Vec::new(),
            ancestors: Vec::new(),
            props: Vec::new(),
            methods: HashMap::new(),
            type_ref,
            init_order: Vec::new(),
            ambiguous: Vec::new(),
            remap: Vec::new(),
            conflicts: Vec::new(),
            plan: Default::default(),
        })
    }

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

    pub(crate) fn find_ambiguous(&self) -> Vec<String> {
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
        let declared = |c: &Class| property_declaration(c, name);
        declared(self).is_none() && self.symbol_choices(&declared) > 1
    }

    /// How many definitions murano's `_choose_symbol` keeps of the symbol
    /// `find` finds in a class (as an identity): each path from this class
    /// to a root gives the chain of the definitions along it; a chain that
    /// is the tail of a longer one is overridden by it.
    fn symbol_choices(&self, find: &dyn Fn(&Class) -> Option<usize>) -> usize {
        fn chains(
            c: &Class,
            remap: &[(Arc<str>, Arc<Class>)],
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
            for p in parents_of(c, remap) {
                chains(p, remap, find, out, path.clone());
            }
        }
        let mut all = Vec::new();
        chains(self, &self.remap, find, &mut all, Vec::new());
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

    /// The parents of `c` (this class or one of its ancestors) as this
    /// class sees them: murano's `parents(origin)`, with the remapping of
    /// this class (murano/dsl/murano_type.py).
    pub fn parents_of<'a>(&'a self, c: &'a Class) -> Vec<&'a Arc<Class>> {
        parents_of(c, &self.remap)
    }

    /// What names each class among the ancestors in several versions
    /// that no requirement reconciles: the class, and for each version the
    /// chain reaching it and the requirement choosing it.
    pub fn version_conflicts(&self) -> impl Iterator<Item = &str> {
        self.conflicts.iter().map(|c| c.message.as_str())
    }

    /// The conflict behind an ambiguous member: the one among whose
    /// versions at least two declare it (`declares`).
    pub fn conflict_behind(&self, declares: &dyn Fn(&Class) -> bool) -> Option<&str> {
        self.conflicts.iter().find_map(|x| {
            let n = (x.keys.iter())
                .filter(|k| self.ancestors.iter().any(|a| a.key == **k && declares(a)))
                .count();
            (n > 1).then_some(x.message.as_str())
        })
    }

    /// murano's `AmbiguousPropertyNameError` for an object of this class:
    /// a property two versions of one ancestor declare (and no class
    /// between overrides) cannot be set (`MuranoObject.set_property` finds
    /// the single property first, murano/dsl/murano_object.py).
    pub fn conflicting_property(&self) -> Option<Error> {
        for x in &self.conflicts {
            for k in &x.keys {
                let Some(c) = self.ancestors.iter().find(|a| a.key == *k) else {
                    continue;
                };
                for p in &c.props {
                    let declared = |c: &Class| property_declaration(c, &p.name);
                    if p.usage != PropertyUsage::Static && self.symbol_choices(&declared) > 1 {
                        return Some(Error::new(
                            runtime::ErrorKind::AmbiguousPropertyNameError,
                            format!("Found more that one property \"{}\": {}", p.name, x.message),
                        ));
                    }
                }
            }
        }
        None
    }

    pub(crate) fn make_init_order(&mut self) {
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

/// The declaration of property `name` in class `c` (not its ancestors),
/// identified by its address: only compared, never dereferenced, as
/// murano compares symbols with `is`. No state: the address of a
/// declaration in a frozen class, read where it is asked for.
fn property_declaration(c: &Class, name: &str) -> Option<usize> {
    (c.props.iter())
        .find(|p| &*p.name == name)
        .map(|p| p as *const Prop as usize)
}

/// One class needed in several versions that no requirement reconciles.
#[derive(Clone, Debug)]
pub struct VersionConflict {
    /// The class's full name.
    pub class: Arc<str>,
    /// The keys of its versions among the ancestors.
    pub keys: Vec<Arc<str>>,
    /// What names it: the class, and for each version the chain that
    /// reaches it and the requirement that chose it.
    pub message: String,
}

/// `c` as the class with the remappings `remap` sees it.
pub(crate) fn mapped<'a>(c: &'a Arc<Class>, remap: &'a [(Arc<str>, Arc<Class>)]) -> &'a Arc<Class> {
    remap
        .iter()
        .find(|(k, _)| *k == c.key)
        .map_or(c, |(_, to)| to)
}

/// The parents of `c` under `remap` (murano's `parents(origin)`), each
/// once.
pub(crate) fn parents_of<'a>(
    c: &'a Class,
    remap: &'a [(Arc<str>, Arc<Class>)],
) -> Vec<&'a Arc<Class>> {
    let mut out: Vec<&Arc<Class>> = Vec::new();
    for p in &c.parents {
        let p = mapped(p, remap);
        if !out.iter().any(|q| q.key == p.key) {
            out.push(p);
        }
    }
    out
}

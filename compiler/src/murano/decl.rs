//! MuranoPL class declarations from YAML documents.
//!
//! [`load_classes`] reads a class file (one or several YAML documents) and
//! builds one [`ClassDecl`] per document that has a `Name`. A document
//! without `Name` only sets `Namespaces` for the documents after it; a
//! document's own `Namespaces` also carry on to the documents after it.
//!
//! The reading follows murano's `murano_type.create`, `MuranoProperty`,
//! `MuranoMethod` and `MuranoMethodArgument` (defaults, accepted usages,
//! argument order, `initialize`/`destroy` renamed `.init`/`.destroy`,
//! `Workflow` as an old name of `Methods`). Unknown keys at class,
//! property, method and argument level are ignored, as murano ignores
//! them, but each is recorded in [`ClassDecl::warnings`] (`package check`
//! prints them) so that a misspelt `Contarct` does not go unnoticed.
//! Errors are `DslSyntaxError` (or `DslContractSyntaxError` for a missing
//! contract) with a message starting `file:line:col:`.

use std::collections::HashMap;

use runtime::{Error, ErrorKind, Value};

use super::pos::Pos;
use super::yaml::{load_documents, LoadOptions, Node, NodeKind, Template, TemplateKind};

/// The root class every class without `Extends` derives from.
pub const OBJECT_CLASS: &str = "io.murano.Object";

/// Resolves type names against a class's `Namespaces`, as murano's
/// `NamespaceResolver` does.
///
/// * `ns:Name` uses the prefix `ns`; `:Name` uses `=`;
/// * a name with a dot and no prefix is already full;
/// * a bare `Name` uses `=` (which defaults to the empty namespace, so the
///   name stays as is);
/// * an empty namespace gives the bare name.
///
/// A resolver made for a REPL may also know short names (see
/// [`NamespaceResolver::with_short_names`]); a class's never does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamespaceResolver {
    /// As declared, in order.
    declared: Vec<(String, String)>,
    /// Bare names that stand for a full name whatever `=` is.
    short: Vec<(String, String)>,
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_')
}

fn is_dotted(s: &str) -> bool {
    s.split('.').all(is_ident)
}

impl NamespaceResolver {
    /// Makes a resolver from `(prefix, namespace)` pairs. A prefix is an
    /// identifier or `=`; a namespace is a dotted name or empty.
    pub fn new(namespaces: Vec<(String, String)>) -> Result<Self, Error> {
        for (prefix, ns) in &namespaces {
            if prefix != "=" && !is_ident(prefix) {
                return Err(Error::value(format!(
                    "Invalid namespace prefix \"{prefix}\""
                )));
            }
            if !ns.is_empty() && !is_dotted(ns) {
                return Err(Error::value(format!("Invalid namespace \"{ns}\"")));
            }
        }
        Ok(NamespaceResolver {
            declared: namespaces,
            short: Vec::new(),
        })
    }

    /// This resolver, where each bare name of `short` (`Name`, no prefix,
    /// no dot) stands for its full name: a scope that sees the classes
    /// of packages whose classes declare different `=` namespaces.
    pub fn with_short_names(mut self, short: Vec<(String, String)>) -> Self {
        self.short = short;
        self
    }

    /// The declared `(prefix, namespace)` pairs.
    pub fn namespaces(&self) -> &[(String, String)] {
        &self.declared
    }

    fn lookup(&self, prefix: &str) -> Option<&str> {
        // A repeated prefix: the last one wins, as in a Python dict.
        match self.declared.iter().rev().find(|(p, _)| p == prefix) {
            Some((_, ns)) => Some(ns),
            None if prefix == "=" || prefix.is_empty() => Some(""),
            None => None,
        }
    }

    /// Resolves a type name to a full name. Errors: `ValueError` for a
    /// malformed name, `KeyError` for an unknown prefix.
    pub fn resolve_name(&self, name: &str) -> Result<String, Error> {
        // ^([a-zA-Z_]\w*:|:)?[a-zA-Z_]\w*(\.[a-zA-Z_]\w*)*$
        let (prefix, rest) = match name.split_once(':') {
            Some((p, r)) => (Some(p), r),
            None => (None, name),
        };
        let valid = match prefix {
            None | Some("") => true,
            Some(p) => is_ident(p),
        } && is_dotted(rest);
        if !valid {
            return Err(Error::value(format!("Invalid type name \"{name}\"")));
        }
        if let (None, Some((_, full))) = (prefix, self.short.iter().find(|(n, _)| n == rest)) {
            return Ok(full.clone());
        }
        let prefix = match prefix {
            None if rest.contains('.') => "",
            None | Some("") => "=",
            Some(p) => p,
        };
        let ns = self
            .lookup(prefix)
            .ok_or_else(|| Error::key(format!("Unknown namespace prefix {prefix}")))?;
        Ok(if ns.is_empty() {
            rest.to_string()
        } else {
            format!("{ns}.{rest}")
        })
    }
}

/// `Usage` of a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassUsage {
    /// An ordinary class (the default).
    Class,
    /// A meta-class, attachable through `Meta`.
    Meta,
}

/// `Cardinality` of a meta-class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cardinality {
    /// At most one instance per target (the default).
    One,
    /// Several instances per target.
    Many,
}

/// What a meta-class `Applies` to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetaTarget {
    /// Packages.
    Package,
    /// Classes.
    Type,
    /// Methods.
    Method,
    /// Properties.
    Property,
    /// Method arguments.
    Argument,
}

impl MetaTarget {
    /// All targets, as `Applies: All` (the default) says.
    pub const ALL: [MetaTarget; 5] = [
        MetaTarget::Package,
        MetaTarget::Type,
        MetaTarget::Method,
        MetaTarget::Property,
        MetaTarget::Argument,
    ];
}

/// `Usage` of a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PropertyUsage {
    /// Input from the object model (the default).
    In,
    /// Output of workflows.
    Out,
    /// Both.
    InOut,
    /// Input, fixed once a workflow has run.
    Const,
    /// Workflow-only, neither read nor serialized.
    Runtime,
    /// Per class, not per object.
    Static,
    /// Read from the class configuration.
    Config,
}

/// `Usage` of a method argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgUsage {
    /// One value (the default).
    Standard,
    /// The remaining positional arguments, as a list.
    VarArgs,
    /// The remaining keyword arguments, as a dict.
    KwArgs,
}

/// `Usage` of a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodUsage {
    /// An instance method (the default).
    Runtime,
    /// A static method.
    Static,
    /// A static method extending another type.
    Extension,
    /// A deprecated action (implies `Scope: Public`).
    Action,
}

/// `Scope` of a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodScope {
    /// Callable only from MuranoPL (the default).
    Session,
    /// Callable from outside (API actions, harness steps).
    Public,
}

/// One `Meta` entry: a meta-class and the property values given to it.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaDecl {
    /// The meta-class's full name.
    pub name: String,
    /// The properties (a dict template; `{}` when none were given).
    pub props: Template,
    /// Where the entry is.
    pub pos: Pos,
}

/// A declared property.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyDecl {
    /// Its name.
    pub name: String,
    /// `Contract`.
    pub contract: Template,
    /// `Usage`.
    pub usage: PropertyUsage,
    /// `Default`, when given (a given null is `Some`).
    pub default: Option<Template>,
    /// `Meta`.
    pub meta: Vec<MetaDecl>,
    /// Where its name is.
    pub pos: Pos,
}

/// A declared method argument.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgDecl {
    /// Its name.
    pub name: String,
    /// `Contract`.
    pub contract: Template,
    /// `Default`, when given.
    pub default: Option<Template>,
    /// `Usage`.
    pub usage: ArgUsage,
    /// `Meta`.
    pub meta: Vec<MetaDecl>,
    /// Where its name is.
    pub pos: Pos,
}

/// A declared method.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodDecl {
    /// Its name (`initialize` and `destroy` become `.init` and `.destroy`).
    pub name: String,
    /// `Arguments`, in order: standard ones, then at most one `VarArgs`,
    /// then at most one `KwArgs`.
    pub arguments: Vec<ArgDecl>,
    /// `Usage`.
    pub usage: MethodUsage,
    /// `Scope` (`Public` for `Usage: Action`).
    pub scope: MethodScope,
    /// `Body`, raw: lowering decides what its entries mean.
    pub body: Option<Node>,
    /// `Meta`.
    pub meta: Vec<MetaDecl>,
    /// Where its name is.
    pub pos: Pos,
}

/// A class declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDecl {
    /// The full name.
    pub name: String,
    /// `Namespaces` in force for this class, as declared.
    pub namespaces: Vec<(String, String)>,
    /// Full names of the parents, in order (`io.murano.Object` by default).
    pub extends: Vec<String>,
    /// Where each declared parent is named (empty for the default parent).
    pub extends_at: Vec<Pos>,
    /// `Properties`, in order.
    pub properties: Vec<PropertyDecl>,
    /// `Methods`, in order.
    pub methods: Vec<MethodDecl>,
    /// `Import`: full names, without repeats or the class itself.
    pub import: Vec<String>,
    /// `Meta`.
    pub meta: Vec<MetaDecl>,
    /// `Usage`.
    pub usage: ClassUsage,
    /// `Cardinality` (meta-classes).
    pub cardinality: Cardinality,
    /// `Applies` (meta-classes).
    pub applies: Vec<MetaTarget>,
    /// `Inherited` (meta-classes).
    pub inherited: bool,
    /// Where the class's mapping starts.
    pub pos: Pos,
    /// What murano would silently ignore in the declaration (unknown keys),
    /// as `file:line:col: message` lines.
    pub warnings: Vec<String>,
    resolver: NamespaceResolver,
    /// Why the class cannot be built, for a class whose declaration is
    /// wrong past its name. The package still loads: murano builds a class
    /// when something first reaches it (murano/dsl/murano_package.py
    /// `get_class`), and raises this error there.
    pub broken: Option<Broken>,
}

/// The error a class declaration holds until the class is reached (see
/// [`ClassDecl::broken`]). Two are equal when their kind and message are.
#[derive(Clone, Debug)]
pub struct Broken(pub Error);

impl PartialEq for Broken {
    fn eq(&self, other: &Broken) -> bool {
        self.0.kind() == other.0.kind() && self.0.message() == other.0.message()
    }
}

impl ClassDecl {
    /// A declaration that only names types: no parents, members or meta,
    /// `namespaces` (and `short` bare names, see
    /// [`NamespaceResolver::with_short_names`]) to resolve class names
    /// with and `import` to find extension methods in. Code run in its class's scope sees class
    /// names as code of a class declaring these would (a REPL's scope).
    pub fn names_only(
        name: String,
        (namespaces, short): (Vec<(String, String)>, Vec<(String, String)>),
        import: Vec<String>,
        pos: Pos,
    ) -> Result<ClassDecl, Error> {
        let resolver = NamespaceResolver::new(namespaces.clone())?.with_short_names(short);
        Ok(ClassDecl {
            name,
            namespaces,
            extends: Vec::new(),
            extends_at: Vec::new(),
            properties: Vec::new(),
            methods: Vec::new(),
            import,
            meta: Vec::new(),
            usage: ClassUsage::Class,
            cardinality: Cardinality::One,
            applies: MetaTarget::ALL.to_vec(),
            inherited: false,
            pos,
            warnings: Vec::new(),
            resolver,
            broken: None,
        })
    }

    /// A class named `name` whose declaration fails with `error` when the
    /// class is built.
    fn broken(
        name: String,
        namespaces: Vec<(String, String)>,
        resolver: NamespaceResolver,
        pos: Pos,
        error: Error,
    ) -> ClassDecl {
        let extends = if name == OBJECT_CLASS {
            Vec::new()
        } else {
            vec![OBJECT_CLASS.to_string()]
        };
        ClassDecl {
            name,
            namespaces,
            extends,
            extends_at: Vec::new(),
            properties: Vec::new(),
            methods: Vec::new(),
            import: Vec::new(),
            meta: Vec::new(),
            usage: ClassUsage::Class,
            cardinality: Cardinality::One,
            applies: MetaTarget::ALL.to_vec(),
            inherited: false,
            pos,
            warnings: Vec::new(),
            resolver,
            broken: Some(Broken(error)),
        }
    }

    /// Resolves a type name in this class's namespaces.
    pub fn resolve_name(&self, name: &str) -> Result<String, Error> {
        self.resolver.resolve_name(name)
    }

    /// The class's namespace resolver.
    pub fn resolver(&self) -> &NamespaceResolver {
        &self.resolver
    }

    /// The property named `name`.
    pub fn property(&self, name: &str) -> Option<&PropertyDecl> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The method named `name`.
    pub fn method(&self, name: &str) -> Option<&MethodDecl> {
        self.methods.iter().find(|m| m.name == name)
    }
}

const CLASS_KEYS: &[&str] = &[
    "Name",
    "Namespaces",
    "Extends",
    "Properties",
    "Methods",
    "Workflow",
    "Import",
    "Meta",
    "Usage",
    "Cardinality",
    "Applies",
    "Inherited",
];
const PROPERTY_KEYS: &[&str] = &["Contract", "Usage", "Default", "Meta"];
const METHOD_KEYS: &[&str] = &["Body", "Arguments", "Usage", "Scope", "Meta"];
const ARG_KEYS: &[&str] = &["Contract", "Usage", "Default", "Meta"];

const SYNTAX: &str = "DslSyntaxError";
/// What murano's type and method constructors raise (murano/dsl/murano_type.py,
/// meta.py, murano_method.py): a plain `ValueError`.
const VALUE: &str = "ValueError";

/// Loads every class of a class file. `file` names it in positions.
pub fn load_classes(text: &str, file: &str, opts: LoadOptions) -> Result<Vec<ClassDecl>, Error> {
    load_classes_for(text, file, opts, None)
}

/// [`load_classes`] for the file a manifest lists class `listed` in: as
/// murano's `MuranoPackage._register_mpl_classes`
/// (murano/dsl/murano_package.py), when no document is named `listed`, the
/// one document without a `Name` (and with more than `Namespaces`) is that
/// class; two such documents are `AmbiguousClassName`.
pub fn load_classes_for(
    text: &str,
    file: &str,
    opts: LoadOptions,
    listed: Option<&str>,
) -> Result<Vec<ClassDecl>, Error> {
    let docs = load_documents(text, file)?;
    let mut namespaces: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    let mut unnamed: Option<(&Node, Vec<(String, String)>)> = None;
    for doc in &docs {
        if doc.is_null() {
            continue;
        }
        let map = expect_map(doc, "a class document")?;
        check_keys(map, "class")?;
        if let Some(ns) = get(map, "Namespaces") {
            namespaces = read_namespaces(ns)?;
        }
        if get(map, "Name").is_none() {
            let only_namespaces = map.iter().all(|(k, _)| k.as_scalar() == Some("Namespaces"));
            if let (Some(name), false) = (listed, only_namespaces) {
                if unnamed.is_some() {
                    return Err(doc.pos.error(
                        ErrorKind::AmbiguousClassName,
                        format!("Found more that one version of class \"{name}\""),
                    ));
                }
                unnamed = Some((doc, namespaces.clone()));
            }
            continue;
        }
        let mut decl = class_decl(doc, map, namespaces.clone(), opts, None)?;
        lint_keys(map, &mut decl.warnings);
        out.push(decl);
    }
    if let (Some(name), Some((doc, ns))) = (listed, unnamed) {
        if !out.iter().any(|d| d.name == name) {
            let map = expect_map(doc, "a class document")?;
            let mut decl = class_decl(doc, map, ns, opts, Some(name))?;
            lint_keys(map, &mut decl.warnings);
            out.push(decl);
        }
    }
    Ok(out)
}

/// The `Meta` of a package manifest (full class names: a manifest has no
/// `Namespaces`), with positions in the manifest; empty without one.
pub fn load_manifest_meta(
    text: &str,
    file: &str,
    opts: LoadOptions,
) -> Result<Vec<MetaDecl>, Error> {
    let docs = load_documents(text, file)?;
    let Some(doc) = docs.iter().find(|d| !d.is_null()) else {
        return Ok(Vec::new());
    };
    let map = expect_map(doc, "a manifest")?;
    let resolver = NamespaceResolver::new(Vec::new())?;
    read_meta(get(map, "Meta"), &resolver, opts)
}

/// A class declaration from its document; `named` is the full name of a
/// document without `Name` (see [`load_classes_for`]).
fn class_decl(
    doc: &Node,
    map: &[(Node, Node)],
    namespaces: Vec<(String, String)>,
    opts: LoadOptions,
    named: Option<&str>,
) -> Result<ClassDecl, Error> {
    let ns_pos = get(map, "Namespaces").map_or(&doc.pos, |n| &n.pos);
    let resolver = NamespaceResolver::new(namespaces.clone()).map_err(|e| at(ns_pos, e))?;
    let name = match named {
        Some(n) => n.to_string(),
        None => {
            let name_node = get(map, "Name").expect("checked by the caller");
            let raw_name = type_name_text(name_node, "Name")?;
            resolver
                .resolve_name(raw_name)
                .map_err(|e| at(&name_node.pos, e))?
        }
    };
    let pos = doc.pos.clone();
    match class_body(
        map,
        name.clone(),
        namespaces.clone(),
        resolver.clone(),
        pos.clone(),
        opts,
    ) {
        Ok(decl) => Ok(decl),
        Err(e) => Ok(ClassDecl::broken(name, namespaces, resolver, pos, e)),
    }
}

/// The rest of a class declaration once its name is known: what murano's
/// `murano_type.create` reads when the class is first built.
fn class_body(
    map: &[(Node, Node)],
    name: String,
    namespaces: Vec<(String, String)>,
    resolver: NamespaceResolver,
    pos: Pos,
    opts: LoadOptions,
) -> Result<ClassDecl, Error> {
    let usage = match opt_text(get(map, "Usage"), "Usage")? {
        None | Some(("Class", _)) => ClassUsage::Class,
        Some(("Meta", _)) => ClassUsage::Meta,
        Some((u, p)) => return Err(p.error(VALUE, format!("Invalid type Usage: \"{u}\""))),
    };

    let mut extends = Vec::new();
    let mut extends_at = Vec::new();
    for n in list_value(get(map, "Extends")) {
        let raw = type_name_text(n, "Extends")?;
        extends.push(resolver.resolve_name(raw).map_err(|e| at(&n.pos, e))?);
        extends_at.push(n.pos.clone());
    }
    if extends.is_empty() && name != OBJECT_CLASS {
        extends.push(OBJECT_CLASS.to_string());
    }

    let mut import = Vec::new();
    for n in list_value(get(map, "Import")) {
        let raw = type_name_text(n, "Import")?;
        let full = resolver.resolve_name(raw).map_err(|e| at(&n.pos, e))?;
        if full != name && !import.contains(&full) {
            import.push(full);
        }
    }

    let meta = read_meta(get(map, "Meta"), &resolver, opts)?;

    let mut cardinality = Cardinality::One;
    let mut applies = MetaTarget::ALL.to_vec();
    let mut inherited = false;
    if usage == ClassUsage::Meta {
        cardinality = match opt_text(get(map, "Cardinality"), "Cardinality")? {
            None | Some(("One", _)) => Cardinality::One,
            Some(("Many", _)) => Cardinality::Many,
            Some((c, p)) => {
                return Err(p.error(VALUE, format!("Invalid MetaClass Cardinality \"{c}\"")))
            }
        };
        if let Some(a) = get(map, "Applies") {
            applies = read_applies(a)?;
        }
        if let Some(i) = get(map, "Inherited") {
            inherited = match i.to_template(opts)?.kind {
                TemplateKind::Value(Value::Bool(b)) => b,
                _ => {
                    return Err(i
                        .pos
                        .error(VALUE, "Invalid Inherited value. Must be true or false"))
                }
            };
        }
    }

    let mut properties = Named::new();
    if let Some(props) = non_null(get(map, "Properties")) {
        for (k, v) in expect_map(props, "Properties")? {
            let p = property_decl(k, v, &resolver, opts)?;
            properties.insert(&p.name.clone(), p);
        }
    }

    let mut methods = Named::new();
    let methods_node = non_null(get(map, "Methods")).or_else(|| non_null(get(map, "Workflow")));
    if let Some(ms) = methods_node {
        for (k, v) in expect_map(ms, "Methods")? {
            let m = method_decl(k, v, &resolver, opts)?;
            methods.insert(&m.name.clone(), m);
        }
    }

    Ok(ClassDecl {
        name,
        namespaces,
        extends,
        extends_at,
        properties: properties.items,
        methods: methods.items,
        import,
        meta,
        usage,
        cardinality,
        applies,
        inherited,
        pos,
        warnings: Vec::new(),
        resolver,
        broken: None,
    })
}

fn property_decl(
    key: &Node,
    decl: &Node,
    resolver: &NamespaceResolver,
    opts: LoadOptions,
) -> Result<PropertyDecl, Error> {
    let name = name_text(key, "property")?;
    let what = format!("declaration of property {name}");
    let map = expect_map(decl, &what)?;
    check_keys(map, &what)?;
    let usage = match opt_text(get(map, "Usage"), "Usage")? {
        None | Some(("In", _)) => PropertyUsage::In,
        Some(("Out", _)) => PropertyUsage::Out,
        Some(("InOut", _)) => PropertyUsage::InOut,
        Some(("Const", _)) => PropertyUsage::Const,
        Some(("Runtime", _)) => PropertyUsage::Runtime,
        Some(("Static", _)) => PropertyUsage::Static,
        Some(("Config", _)) => PropertyUsage::Config,
        Some((u, p)) => {
            return Err(p.error(
                SYNTAX,
                format!(
                    "Unknown usage {u}. Must be one of (In, Out, InOut, Const, Runtime, Static, Config)"
                ),
            ))
        }
    };
    Ok(PropertyDecl {
        name: name.to_string(),
        contract: contract(map, decl, &what, opts)?,
        usage,
        default: get(map, "Default")
            .map(|d| d.to_template(opts))
            .transpose()?,
        meta: read_meta(get(map, "Meta"), resolver, opts)?,
        pos: key.pos.clone(),
    })
}

fn method_decl(
    key: &Node,
    payload: &Node,
    resolver: &NamespaceResolver,
    opts: LoadOptions,
) -> Result<MethodDecl, Error> {
    let raw = name_text(key, "method")?;
    let name = match raw {
        "initialize" => ".init",
        "destroy" => ".destroy",
        n => n,
    }
    .to_string();
    let mut decl = MethodDecl {
        name,
        arguments: Vec::new(),
        usage: MethodUsage::Runtime,
        scope: MethodScope::Session,
        body: None,
        meta: Vec::new(),
        pos: key.pos.clone(),
    };
    if payload.is_null() {
        return Ok(decl);
    }
    let what = format!("method {raw}");
    let map = expect_map(payload, &what)?;
    check_keys(map, &what)?;
    decl.body = non_null(get(map, "Body")).cloned();
    decl.usage = match opt_text(get(map, "Usage"), "Usage")? {
        None | Some(("Runtime", _)) => MethodUsage::Runtime,
        Some(("Static", _)) => MethodUsage::Static,
        Some(("Extension", _)) => MethodUsage::Extension,
        Some(("Action", _)) => MethodUsage::Action,
        Some((u, p)) => {
            // murano/dsl/yaql_integration.py, `_build_mpl_stub_function_definitions`
            return Err(p.error(VALUE, format!("Unknown method usage {u}")));
        }
    };
    let scope = opt_text(get(map, "Scope"), "Scope")?;
    // murano's `MuranoMethod` checks no scope: one that is not `Public`
    // only makes the method no action.
    decl.scope = match scope {
        Some(("Public", _)) => MethodScope::Public,
        _ => MethodScope::Session,
    };
    if decl.usage == MethodUsage::Action {
        if let Some(("Session", p)) = scope {
            return Err(p.error(
                VALUE,
                format!(
                    "Both \"Usage: Action\" and \"Scope: Session\" are provided for method {raw}"
                ),
            ));
        }
        decl.scope = MethodScope::Public;
    }
    decl.meta = read_meta(get(map, "Meta"), resolver, opts)?;

    // `Arguments`: a list of single-key mappings, or one mapping.
    let args = get(map, "Arguments");
    let records: Vec<(&Node, &Node)> = match args.map(|a| &a.kind) {
        None => Vec::new(),
        Some(NodeKind::Map(m)) => m.iter().map(|(k, v)| (k, v)).collect(),
        Some(NodeKind::Seq(items)) => {
            let mut v = Vec::new();
            for r in items {
                match r.as_map() {
                    Some([(k, d)]) => v.push((k, d)),
                    _ => {
                        return Err(r.pos.error(
                            SYNTAX,
                            format!(
                                "Invalid arguments declaration in method {raw}: \
                                 each argument is a mapping with one key"
                            ),
                        ))
                    }
                }
            }
            v
        }
        Some(NodeKind::Scalar { .. }) if args.is_some_and(Node::is_null) => Vec::new(),
        Some(_) => {
            let a = args.expect("matched Some");
            return Err(a.pos.error(
                SYNTAX,
                format!("Invalid arguments declaration in method {raw}"),
            ));
        }
    };
    let (mut seen_var, mut seen_kw) = (false, false);
    let mut arguments = Named::new();
    for (k, d) in records {
        let arg = arg_decl(k, d, raw, resolver, opts)?;
        let bad_order = match arg.usage {
            ArgUsage::Standard => seen_var || seen_kw,
            ArgUsage::VarArgs => std::mem::replace(&mut seen_var, true) || seen_kw,
            ArgUsage::KwArgs => std::mem::replace(&mut seen_kw, true),
        };
        if bad_order {
            return Err(k
                .pos
                .error(SYNTAX, format!("Invalid argument order in method {raw}")));
        }
        arguments.insert(&arg.name.clone(), arg);
    }
    decl.arguments = arguments.items;
    Ok(decl)
}

fn arg_decl(
    key: &Node,
    decl: &Node,
    method: &str,
    resolver: &NamespaceResolver,
    opts: LoadOptions,
) -> Result<ArgDecl, Error> {
    let name = name_text(key, "argument")?;
    let what = format!("declaration of argument {name} of method {method}");
    let map = expect_map(decl, &what)?;
    check_keys(map, &what)?;
    let usage = match opt_text(get(map, "Usage"), "Usage")? {
        None | Some(("Standard", _)) => ArgUsage::Standard,
        Some(("VarArgs", _)) => ArgUsage::VarArgs,
        Some(("KwArgs", _)) => ArgUsage::KwArgs,
        Some((u, p)) => {
            return Err(p.error(
                SYNTAX,
                format!("Unknown usage {u}. Must be one of (Standard, VarArgs, KwArgs)"),
            ))
        }
    };
    Ok(ArgDecl {
        name: name.to_string(),
        contract: contract(map, decl, &what, opts)?,
        default: get(map, "Default")
            .map(|d| d.to_template(opts))
            .transpose()?,
        usage,
        meta: read_meta(get(map, "Meta"), resolver, opts)?,
        pos: key.pos.clone(),
    })
}

fn contract(
    map: &[(Node, Node)],
    decl: &Node,
    what: &str,
    opts: LoadOptions,
) -> Result<Template, Error> {
    match get(map, "Contract") {
        Some(c) => c.to_template(opts),
        None => Err(decl
            .pos
            .error("DslContractSyntaxError", format!("{what} has no Contract"))),
    }
}

fn read_meta(
    node: Option<&Node>,
    resolver: &NamespaceResolver,
    opts: LoadOptions,
) -> Result<Vec<MetaDecl>, Error> {
    let mut out = Vec::new();
    for entry in list_value(node) {
        let (name_node, props) = match &entry.kind {
            NodeKind::Map(m) if m.len() == 1 => (&m[0].0, Some(&m[0].1)),
            NodeKind::Map(_) => {
                return Err(entry.pos.error(
                    VALUE,
                    "Invalid Meta format: an entry is a mapping with one key",
                ))
            }
            NodeKind::Scalar { .. } => (entry, None),
            NodeKind::Seq(_) => return Err(entry.pos.error(VALUE, "Invalid Meta format")),
        };
        let raw = type_name_text(name_node, "Meta")?;
        let name = resolver
            .resolve_name(raw)
            .map_err(|e| at(&name_node.pos, e))?;
        let props = match non_null(props) {
            Some(p) => {
                expect_map(p, "Meta properties")?;
                p.to_template(opts)?
            }
            None => Template {
                kind: TemplateKind::Dict(Vec::new()),
                pos: props.map_or(&entry.pos, |p| &p.pos).clone(),
            },
        };
        out.push(MetaDecl {
            name,
            props,
            pos: entry.pos.clone(),
        });
    }
    Ok(out)
}

fn read_applies(node: &Node) -> Result<Vec<MetaTarget>, Error> {
    let items: Vec<&Node> = match &node.kind {
        NodeKind::Seq(v) => v.iter().collect(),
        NodeKind::Scalar { .. } if !node.is_null() => vec![node],
        _ => {
            return Err(node
                .pos
                .error(VALUE, "Applies must be a target name or a list of them"))
        }
    };
    let mut out = Vec::new();
    for n in items {
        let t = match n.as_scalar() {
            Some("All") => {
                out = MetaTarget::ALL.to_vec();
                continue;
            }
            Some("Package") => MetaTarget::Package,
            Some("Type") => MetaTarget::Type,
            Some("Method") => MetaTarget::Method,
            Some("Property") => MetaTarget::Property,
            Some("Argument") => MetaTarget::Argument,
            other => {
                return Err(n.pos.error(
                    VALUE,
                    format!(
                        "Invalid MetaClass target(s) \"{}\"",
                        other.unwrap_or(n.kind_name())
                    ),
                ))
            }
        };
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

fn read_namespaces(node: &Node) -> Result<Vec<(String, String)>, Error> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in expect_map(node, "Namespaces")? {
        let prefix = scalar_text(k, "a namespace prefix")?;
        let ns = if v.is_null() {
            ""
        } else {
            scalar_text(v, "a namespace")?
        };
        if prefix != "=" && !is_ident(prefix) {
            // murano's `NamespaceResolver` raises `ValueError`.
            return Err(k.pos.error(
                ErrorKind::ValueError,
                format!("Invalid namespace prefix \"{prefix}\""),
            ));
        }
        if !ns.is_empty() && !is_dotted(ns) {
            return Err(v
                .pos
                .error(ErrorKind::ValueError, format!("Invalid namespace \"{ns}\"")));
        }
        out.retain(|(p, _)| p != prefix);
        out.push((prefix.to_string(), ns.to_string()));
    }
    Ok(out)
}

// ---- helpers ----

/// Re-raises a positionless error at `pos`, keeping its kind.
fn at(pos: &Pos, e: Error) -> Error {
    pos.error(e.error_kind().clone(), e.message())
}

/// The value of the last entry with scalar key `key` (a Python dict keeps
/// the last of repeated keys).
fn get<'a>(map: &'a [(Node, Node)], key: &str) -> Option<&'a Node> {
    map.iter()
        .rev()
        .find(|(k, _)| k.as_scalar() == Some(key))
        .map(|(_, v)| v)
}

fn non_null(n: Option<&Node>) -> Option<&Node> {
    n.filter(|n| !n.is_null())
}

/// murano's `helpers.list_value`: absent or null is `[]`, a sequence is its
/// items, anything else is a list of itself.
fn list_value(n: Option<&Node>) -> Vec<&Node> {
    match n {
        None => Vec::new(),
        Some(n) if n.is_null() => Vec::new(),
        Some(Node {
            kind: NodeKind::Seq(v),
            ..
        }) => v.iter().collect(),
        Some(n) => vec![n],
    }
}

fn expect_map<'a>(node: &'a Node, what: &str) -> Result<&'a [(Node, Node)], Error> {
    node.as_map().ok_or_else(|| {
        node.pos.error(
            SYNTAX,
            format!("{what} must be a mapping, not a {}", node.kind_name()),
        )
    })
}

/// Keys must be scalars; which scalars is [`lint_keys`]'s business.
fn check_keys(map: &[(Node, Node)], what: &str) -> Result<(), Error> {
    for (k, _) in map {
        if k.as_scalar().is_none() {
            return Err(k
                .pos
                .error(SYNTAX, format!("{what} has a {} as a key", k.kind_name())));
        }
    }
    Ok(())
}

fn unknown_keys(map: &[(Node, Node)], allowed: &[&str], what: &str, out: &mut Vec<String>) {
    for (k, _) in map {
        if let Some(s) = k.as_scalar() {
            if !allowed.contains(&s) {
                out.push(format!(
                    "{}: unknown key \"{s}\" in {what} is ignored (expected one of: {})",
                    k.pos,
                    allowed.join(", ")
                ));
            }
        }
    }
}

/// Records the unknown keys of a class document (class, properties,
/// methods, arguments) in `out`.
fn lint_keys(map: &[(Node, Node)], out: &mut Vec<String>) {
    unknown_keys(map, CLASS_KEYS, "class", out);
    if let Some(props) = get(map, "Properties").and_then(Node::as_map) {
        for (k, v) in props {
            if let Some(m) = v.as_map() {
                let name = k.as_scalar().unwrap_or("?");
                unknown_keys(
                    m,
                    PROPERTY_KEYS,
                    &format!("declaration of property {name}"),
                    out,
                );
            }
        }
    }
    for section in ["Methods", "Workflow"] {
        let Some(methods) = get(map, section).and_then(Node::as_map) else {
            continue;
        };
        for (k, v) in methods {
            let Some(m) = v.as_map() else { continue };
            let method = k.as_scalar().unwrap_or("?");
            unknown_keys(m, METHOD_KEYS, &format!("method {method}"), out);
            let args: Vec<&(Node, Node)> = match get(m, "Arguments").map(|a| &a.kind) {
                Some(NodeKind::Map(items)) => items.iter().collect(),
                Some(NodeKind::Seq(items)) => {
                    items.iter().filter_map(Node::as_map).flatten().collect()
                }
                _ => Vec::new(),
            };
            for (ak, av) in args {
                if let Some(am) = av.as_map() {
                    let arg = ak.as_scalar().unwrap_or("?");
                    unknown_keys(
                        am,
                        ARG_KEYS,
                        &format!("declaration of argument {arg} of method {method}"),
                        out,
                    );
                }
            }
        }
    }
}

fn scalar_text<'a>(node: &'a Node, what: &str) -> Result<&'a str, Error> {
    node.as_scalar().ok_or_else(|| {
        node.pos.error(
            SYNTAX,
            format!("{what} must be a scalar, not a {}", node.kind_name()),
        )
    })
}

/// A property, method or argument name: a non-null scalar.
fn name_text<'a>(node: &'a Node, what: &str) -> Result<&'a str, Error> {
    if node.is_null() {
        return Err(node.pos.error(SYNTAX, format!("a {what} name is empty")));
    }
    scalar_text(node, &format!("a {what} name"))
}

/// A type name: the scalar's text whatever YAML makes of it (`ns:Name`
/// reads as a YAQL expression, murano takes its text).
fn type_name_text<'a>(node: &'a Node, what: &str) -> Result<&'a str, Error> {
    if node.is_null() {
        return Err(node.pos.error(SYNTAX, format!("{what}: empty type name")));
    }
    scalar_text(node, &format!("{what}: a type name"))
}

/// An optional keyword field (`Usage`, `Scope`, ...): absent or null is
/// `None`.
fn opt_text<'a>(node: Option<&'a Node>, what: &str) -> Result<Option<(&'a str, &'a Pos)>, Error> {
    match non_null(node) {
        None => Ok(None),
        Some(n) => Ok(Some((scalar_text(n, what)?, &n.pos))),
    }
}

/// Items keyed by name that keep the first place of a repeated name and its
/// last declaration, as a Python dict does.
struct Named<T> {
    items: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T> Named<T> {
    fn new() -> Self {
        Named {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }
    fn insert(&mut self, name: &str, item: T) {
        match self.index.get(name) {
            Some(&i) => self.items[i] = item,
            None => {
                self.index.insert(name.to_string(), self.items.len());
                self.items.push(item);
            }
        }
    }
}

//! Murano Dynamic UI: UI definitions (`UI/ui.yaml`, Version 2.0–2.3, as
//! murano-dashboard supports them) and the object model the dashboard makes
//! of them.
//!
//! * [`UiDefinition::parse`] reads `Version`, `Templates`, `Application`
//!   and `Forms` (each form's fields with their types, `initial`,
//!   `required`, `hidden`, length and value limits, `regexpValidator`,
//!   `validators`, `choices`, ... and its form-level `validators`). Every
//!   malformed part is an error starting with `file:line:col:`.
//! * [`generate`] fills the forms as the dashboard's wizard would: a value
//!   from the answers, else the field's `initial` (YAQL allowed, in the
//!   standard context of the forms before it), else a deterministic sample
//!   of its type (first flavor meeting the `requirements`, an image of the
//!   `imageType`, keypair `default`, zone `nova`, network "Auto", ...). It
//!   cleans and validates every value, runs the form-level validators, then
//!   evaluates `Application` in the standard context: `$` is the cleaned
//!   data (`$.<form>.<field>`), each template of `Templates` is a variable
//!   (`$name`, evaluated where it is used), and the dashboard's functions
//!   `repeat(template, times)` (`$index` counts from 1),
//!   `generateHostname(pattern, index)`, `name()`, `ref(template)` and
//!   `encryptData(value)` are available. Every `?` mapping of the result
//!   gets a deterministic uuid-like `id`; from Version 2.2 on the
//!   application gets its name (`?.name`, the `workflowManagement` form's
//!   `application_name`).
//! * Fields whose type is an application class (WordPress's database
//!   server) get the object model of that application, generated from its
//!   own package's UI when the package is on the search path.
//!
//! As the dashboard, a definition without `Version` is Version 1 and
//! refused, a second field of a name replaces the first, and a field type
//! it does not know is a choice of applications of that type.

use runtime::ErrorKind;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use compiler::murano::{load_documents, LoadOptions, Node, NodeKind, Pos, Template, TemplateKind};
use compiler::{CompileOptions, Program};

use crate::cloud::{self, FLAVORS, IMAGES};
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{p, ArgIn, Args, Cx, Registry, Ty};
use runtime::{Dict, Env, Error, Options, Result, Value};

use package::{node_value, PackageFormat, PackageLoader};

/// The newest Dynamic UI format version understood.
pub const LATEST_VERSION: (u32, u32) = (2, 3);
/// The dashboard's own storage key inside `?`.
pub const DASHBOARD_ATTRS_KEY: &str = "_26411a1861294160833743e45d0eaad9";
/// The form the dashboard appends (Version 2.2+: the application name).
pub const WF_MANAGEMENT_NAME: &str = "workflowManagement";

/// How UI expressions compile: the dashboard evaluates them with yaql's
/// legacy (0.2-compatible) engine, without MuranoPL operators.
const COMPILE: CompileOptions = CompileOptions {
    legacy: true,
    murano: false,
};

const MARK: &str = "\u{1}ui.template:";
const MAX_REPEAT: i64 = 10_000;
const MAX_DEPTH: usize = 64;
const MAX_APP_NESTING: usize = 4;

fn ui_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::UiDefinitionError, msg)
}

// ---- definitions ------------------------------------------------------

/// A UI format version, `MAJOR.MINOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UiVersion {
    /// Major part.
    pub major: u32,
    /// Minor part.
    pub minor: u32,
}

impl std::fmt::Display for UiVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl UiVersion {
    /// Parses `2`, `2.2`, `1.0`.
    pub fn parse(text: &str) -> Option<UiVersion> {
        let t = text.trim();
        let (a, b) = match t.split_once('.') {
            Some((a, b)) => (a, b),
            None => (t, "0"),
        };
        let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        if !ok(a) || !ok(b) {
            return None;
        }
        Some(UiVersion {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

/// A field's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `string`.
    String,
    /// `text` (multi-line string).
    Text,
    /// `boolean`.
    Boolean,
    /// `integer`.
    Integer,
    /// `password`.
    Password,
    /// `clusterip`.
    ClusterIp,
    /// `floatingip` (a boolean).
    FloatingIp,
    /// `domain` (an Active Directory domain name).
    Domain,
    /// `databaselist` (comma-separated database names).
    DatabaseList,
    /// `image`.
    Image,
    /// `flavor`.
    Flavor,
    /// `keypair`.
    Keypair,
    /// `azone`.
    Azone,
    /// `network` (a `[network, subnet]` pair).
    Network,
    /// `choice`.
    Choice,
    /// `securitygroup`.
    SecurityGroup,
    /// `volume`.
    Volume,
    /// `instance` (Version 1.x only).
    Instance,
    /// One or several application classes.
    App(Vec<String>),
}

impl FieldType {
    fn from_name(name: &str) -> Option<FieldType> {
        Some(match name {
            "string" => FieldType::String,
            "text" => FieldType::Text,
            "boolean" => FieldType::Boolean,
            "integer" => FieldType::Integer,
            "password" => FieldType::Password,
            "clusterip" => FieldType::ClusterIp,
            "floatingip" => FieldType::FloatingIp,
            "domain" => FieldType::Domain,
            "databaselist" => FieldType::DatabaseList,
            "image" => FieldType::Image,
            "flavor" => FieldType::Flavor,
            "keypair" => FieldType::Keypair,
            "azone" => FieldType::Azone,
            "network" => FieldType::Network,
            "choice" => FieldType::Choice,
            "securitygroup" => FieldType::SecurityGroup,
            "volume" => FieldType::Volume,
            "instance" => FieldType::Instance,
            _ => return None,
        })
    }

    /// The type's name as written in UI files.
    pub fn name(&self) -> String {
        match self {
            FieldType::String => "string",
            FieldType::Text => "text",
            FieldType::Boolean => "boolean",
            FieldType::Integer => "integer",
            FieldType::Password => "password",
            FieldType::ClusterIp => "clusterip",
            FieldType::FloatingIp => "floatingip",
            FieldType::Domain => "domain",
            FieldType::DatabaseList => "databaselist",
            FieldType::Image => "image",
            FieldType::Flavor => "flavor",
            FieldType::Keypair => "keypair",
            FieldType::Azone => "azone",
            FieldType::Network => "network",
            FieldType::Choice => "choice",
            FieldType::SecurityGroup => "securitygroup",
            FieldType::Volume => "volume",
            FieldType::Instance => "instance",
            FieldType::App(names) => return names.join("|"),
        }
        .to_string()
    }
}

/// A compiled piece of UI YAML: constants and YAQL expressions.
#[derive(Clone)]
pub enum Tpl {
    /// A constant.
    Const(Value),
    /// A YAQL expression.
    Expr {
        /// Compiled program.
        prog: Arc<Program>,
        /// Its text.
        src: Arc<str>,
        /// Where it is.
        pos: Pos,
    },
    /// A sequence.
    List(Vec<Tpl>),
    /// A mapping (keys may be expressions).
    Dict(Vec<(Tpl, Tpl)>),
}

impl Tpl {
    fn compile(t: &Template) -> Result<Tpl> {
        Ok(match &t.kind {
            TemplateKind::Value(v) => Tpl::Const(v.clone()),
            TemplateKind::Expr { src, .. } => Tpl::Expr {
                prog: Arc::new(compile_yaql(src, &t.pos)?),
                src: src.clone(),
                pos: t.pos.clone(),
            },
            TemplateKind::List(items) => {
                Tpl::List(items.iter().map(Tpl::compile).collect::<Result<_>>()?)
            }
            TemplateKind::Dict(items) => Tpl::Dict(
                items
                    .iter()
                    .map(|(k, v)| Ok((Tpl::compile(k)?, Tpl::compile(v)?)))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    fn from_node(n: &Node) -> Result<Tpl> {
        check_yaql(n)?;
        Tpl::compile(&n.to_template(LoadOptions { legacy: true })?)
    }

    /// True when this is a constant.
    pub fn is_const(&self) -> bool {
        matches!(self, Tpl::Const(_))
    }
}

/// A plain scalar that looks like YAQL (`$...`, `func(...`) but does not
/// parse would silently become a string (as in the dashboard); it is an
/// error here, with the parser's message.
fn check_yaql(n: &Node) -> Result<()> {
    match &n.kind {
        NodeKind::Scalar {
            value,
            style: compiler::murano::ScalarStyle::Plain,
            tag: None,
        } => {
            let t = value.trim();
            let looks = t.starts_with('$')
                || t.find('(').is_some_and(|i| {
                    i > 0
                        && t[..i]
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && t[..i].starts_with(|c: char| c.is_ascii_alphabetic())
                });
            if looks {
                if let Err(e) = compiler::yaql::parse(
                    t,
                    compiler::yaql::LexOptions {
                        legacy: true,
                        murano: false,
                    },
                ) {
                    return Err(n.pos.error(
                        ErrorKind::YaqlGrammarException,
                        format!("bad YAQL expression `{t}`: {}", e.message()),
                    ));
                }
            }
            Ok(())
        }
        NodeKind::Scalar { .. } => Ok(()),
        NodeKind::Seq(items) => items.iter().try_for_each(check_yaql),
        NodeKind::Map(entries) => entries
            .iter()
            .try_for_each(|(k, v)| check_yaql(k).and_then(|_| check_yaql(v))),
    }
}

fn compile_yaql(src: &str, pos: &Pos) -> Result<Program> {
    compiler::compile(src, &registry(), COMPILE).map_err(|e| {
        Error::new(
            e.kind().to_string(),
            format!("{pos}: {} in `{src}`", e.message()),
        )
    })
}

/// A field or form validator.
#[derive(Clone)]
pub struct Validator {
    /// `regexpValidator` pattern, or a YAQL expression.
    pub check: Check,
    /// `message`.
    pub message: Option<String>,
    /// Where it is.
    pub pos: Pos,
}

/// What a validator checks.
#[derive(Clone)]
pub enum Check {
    /// A Python regular expression the value must match (`re.search`).
    Regexp(String),
    /// A YAQL expression that must be true.
    Yaql(Tpl),
}

/// A form field.
#[derive(Clone)]
pub struct Field {
    /// `name`.
    pub name: String,
    /// `type`.
    pub ty: FieldType,
    /// Where the field is.
    pub pos: Pos,
    /// `label` (default: the name capitalized).
    pub label: String,
    /// `description`.
    pub description: Option<String>,
    /// `initial`.
    pub initial: Option<Tpl>,
    /// `required` (default true; booleans are never required).
    pub required: Tpl,
    /// `hidden`.
    pub hidden: Tpl,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minValue`.
    pub min_value: Option<i64>,
    /// `maxValue`.
    pub max_value: Option<i64>,
    /// `regexpValidator` (with `errorMessages.invalid`).
    pub regexp: Option<Validator>,
    /// `validators`.
    pub validators: Vec<Validator>,
    /// `choices`: (value, label).
    pub choices: Vec<(Value, String)>,
    /// `imageType`.
    pub image_type: Option<String>,
    /// `requirements` of a flavor field.
    pub requirements: Dict,
    /// `allow_auto` of a network field (default true).
    pub allow_auto: bool,
    /// `filter` of a network field: a regular expression network names
    /// must match from their start.
    pub network_filter: Option<String>,
    /// `include_subnets` of a network field (default true).
    pub include_subnets: bool,
    /// `errorMessages.required`: the message for a missing value.
    pub required_msg: Option<String>,
    /// `confirmInput` of a password field (default true).
    pub confirm_input: bool,
    /// Every attribute, as data.
    pub raw: Dict,
}

/// A form.
#[derive(Clone)]
pub struct Form {
    /// Its name.
    pub name: String,
    /// Where it is.
    pub pos: Pos,
    /// Fields, in order.
    pub fields: Vec<Field>,
    /// Form-level validators (standard context).
    pub validators: Vec<Validator>,
}

/// A parsed UI definition.
#[derive(Clone)]
pub struct UiDefinition {
    /// The file, as named in messages.
    pub file: String,
    /// `Version` (default: the latest).
    pub version: UiVersion,
    /// `Templates`, in order.
    pub templates: Vec<(String, Tpl)>,
    /// `Application`: the object model the answers make.
    pub application: Tpl,
    /// `Forms`.
    pub forms: Vec<Form>,
    /// Where the document starts.
    pub pos: Pos,
}

fn scalar_text<'a>(n: &'a Node, what: &str) -> Result<&'a str> {
    n.as_scalar().ok_or_else(|| {
        n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("{what} must be a scalar, not a {}", n.kind_name()),
        )
    })
}

fn opt_int(n: Option<&Node>, what: &str) -> Result<Option<i64>> {
    let Some(n) = n else { return Ok(None) };
    if n.is_null() {
        return Ok(None);
    }
    match node_value(n) {
        Value::Int(i) => Ok(Some(i)),
        Value::Str(ref s) => s.trim().parse::<i64>().map(Some).map_err(|_| {
            n.pos.error(
                ErrorKind::UiDefinitionError,
                format!("{what} must be an integer"),
            )
        }),
        _ => Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("{what} must be an integer"),
        )),
    }
}

fn bool_tpl(n: Option<&Node>, default: bool, what: &str) -> Result<Tpl> {
    let Some(n) = n else {
        return Ok(Tpl::Const(Value::Bool(default)));
    };
    let t = Tpl::from_node(n)?;
    match &t {
        Tpl::Const(Value::Bool(_)) | Tpl::Expr { .. } => Ok(t),
        Tpl::Const(Value::Null) => Ok(Tpl::Const(Value::Bool(default))),
        Tpl::Const(Value::Int(i)) => Ok(Tpl::Const(Value::Bool(*i != 0))),
        Tpl::Const(Value::Str(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(Tpl::Const(Value::Bool(true))),
            "false" | "no" | "off" | "0" | "" => Ok(Tpl::Const(Value::Bool(false))),
            _ => Err(n.pos.error(
                ErrorKind::UiDefinitionError,
                format!("{what} must be a boolean"),
            )),
        },
        _ => Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("{what} must be a boolean"),
        )),
    }
}

fn parse_validators(n: &Node, what: &str) -> Result<Vec<Validator>> {
    if n.is_null() {
        return Ok(Vec::new());
    }
    let NodeKind::Seq(items) = &n.kind else {
        return Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("{what} must be a list of {{expr, message}} mappings"),
        ));
    };
    let mut out = Vec::new();
    for it in items {
        if it.as_map().is_none() {
            return Err(it.pos.error(
                ErrorKind::UiDefinitionError,
                format!(
                    "a validator must be a mapping with `expr`, not a {}",
                    it.kind_name()
                ),
            ));
        }
        let Some(expr) = it.get("expr") else {
            return Err(it.pos.error(
                ErrorKind::UiDefinitionError,
                "a validator needs an `expr` key",
            ));
        };
        let check = if let Some(re) = expr.get("regexpValidator") {
            Check::Regexp(scalar_text(re, "regexpValidator")?.to_string())
        } else if expr.as_map().is_some() {
            return Err(expr.pos.error(
                ErrorKind::UiDefinitionError,
                "a validator's `expr` mapping must hold `regexpValidator`",
            ));
        } else {
            Check::Yaql(Tpl::from_node(expr)?)
        };
        let message = match it.get("message") {
            None => None,
            Some(m) if m.is_null() => None,
            Some(m) => Some(scalar_text(m, "message")?.to_string()),
        };
        out.push(Validator {
            check,
            message,
            pos: it.pos.clone(),
        });
    }
    Ok(out)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn parse_field(n: &Node) -> Result<Field> {
    if n.as_map().is_none() {
        return Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("a field must be a mapping, not a {}", n.kind_name()),
        ));
    }
    let Some(name_n) = n.get("name") else {
        return Err(n
            .pos
            .error(ErrorKind::UiDefinitionError, "a field needs a `name`"));
    };
    let name = scalar_text(name_n, "field name")?.to_string();
    if name.is_empty() {
        return Err(name_n.pos.error(
            ErrorKind::UiDefinitionError,
            "a field's name must not be empty",
        ));
    }
    let Some(type_n) = n.get("type") else {
        return Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("field {name} needs a `type`"),
        ));
    };
    let ty = match &type_n.kind {
        NodeKind::Seq(items) => {
            let mut names = Vec::new();
            for it in items {
                names.push(scalar_text(it, "field type")?.to_string());
            }
            if names.is_empty() {
                return Err(type_n.pos.error(
                    ErrorKind::UiDefinitionError,
                    format!("field {name}: empty type list"),
                ));
            }
            FieldType::App(names)
        }
        _ => {
            let t = scalar_text(type_n, "field type")?;
            match FieldType::from_name(t) {
                Some(FieldType::Instance) => {
                    return Err(type_n.pos.error(
                        ErrorKind::UiDefinitionError,
                        format!(
                            "field {name}: the `instance` field type was dropped in Version 2.0"
                        ),
                    ))
                }
                Some(ft) => ft,
                // murano-dashboard makes any other type a choice of the
                // environment's applications of that type (`make_select_cls`
                // in muranodashboard/dynamic_ui/fields.py).
                None => FieldType::App(vec![t.to_string()]),
            }
        }
    };
    let label = match n.get("label") {
        Some(l) if !l.is_null() => node_value(l)
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| capitalize(&name)),
        _ => capitalize(&name),
    };
    let description = n
        .get("description")
        .and_then(|d| d.as_scalar())
        .map(str::to_string);
    let initial = match n.get("initial") {
        None => None,
        Some(i) => Some(Tpl::from_node(i)?),
    };
    let required = bool_tpl(
        n.get("required"),
        !matches!(ty, FieldType::Boolean | FieldType::FloatingIp),
        "required",
    )?;
    let hidden = bool_tpl(n.get("hidden"), false, "hidden")?;
    let error_msg = |kind: &str| {
        n.get("errorMessages")
            .and_then(|e| e.get(kind))
            .and_then(|m| m.as_scalar())
            .map(str::to_string)
    };
    let invalid_msg = error_msg("invalid");
    let required_msg = error_msg("required");
    if let Some(em) = n.get("errorMessages") {
        if em.as_map().is_none() && !em.is_null() {
            return Err(em.pos.error(
                ErrorKind::UiDefinitionError,
                "errorMessages must be a mapping (invalid, required)",
            ));
        }
    }
    let regexp = match n.get("regexpValidator") {
        None => None,
        Some(r) if r.is_null() => None,
        Some(r) => Some(Validator {
            check: Check::Regexp(scalar_text(r, "regexpValidator")?.to_string()),
            message: invalid_msg,
            pos: r.pos.clone(),
        }),
    };
    let validators = match n.get("validators") {
        None => Vec::new(),
        Some(v) => parse_validators(v, "validators")?,
    };
    let mut choices = Vec::new();
    if let Some(c) = n.get("choices") {
        match &c.kind {
            NodeKind::Seq(items) => {
                for it in items {
                    match &it.kind {
                        NodeKind::Seq(pair) if pair.len() == 2 => {
                            let label = node_value(&pair[1]);
                            choices.push((
                                node_value(&pair[0]),
                                label
                                    .as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| runtime::pyrepr::to_str(&label)),
                            ));
                        }
                        NodeKind::Scalar { value, .. } => {
                            choices.push((node_value(it), value.clone()));
                        }
                        _ => {
                            return Err(it.pos.error(
                                ErrorKind::UiDefinitionError,
                                "a choice must be a [value, label] pair",
                            ))
                        }
                    }
                }
            }
            NodeKind::Map(entries) => {
                for (k, v) in entries {
                    let label = node_value(v);
                    choices.push((
                        node_value(k),
                        label
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| runtime::pyrepr::to_str(&label)),
                    ));
                }
            }
            _ if c.is_null() => {}
            _ => {
                return Err(c.pos.error(
                    ErrorKind::UiDefinitionError,
                    "choices must be a list of [value, label] pairs",
                ))
            }
        }
    }
    if ty == FieldType::Choice && choices.is_empty() {
        return Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("choice field {name} has no choices"),
        ));
    }
    let image_type = n
        .get("imageType")
        .and_then(|t| t.as_scalar())
        .map(str::to_string);
    let requirements = match n.get("requirements") {
        None => Dict::default(),
        Some(r) => match node_value(r) {
            Value::Dict(ref d) => (**d).clone(),
            Value::Null => Dict::default(),
            _ => {
                return Err(r.pos.error(
                    ErrorKind::UiDefinitionError,
                    "requirements must be a mapping (min_disk, min_vcpus, min_memory_mb)",
                ))
            }
        },
    };
    let allow_auto = !matches!(
        n.get("allow_auto").map(node_value),
        Some(Value::Bool(false))
    );
    let confirm_input = !matches!(
        n.get("confirmInput").map(node_value),
        Some(Value::Bool(false))
    );
    let include_subnets = !matches!(
        n.get("include_subnets").map(node_value),
        Some(Value::Bool(false))
    );
    let network_filter = n
        .get("filter")
        .and_then(|f| f.as_scalar())
        .map(str::to_string);
    // NetworkChoiceField refuses any other `murano_networks`.
    if let Some(m) = n.get("murano_networks").filter(|m| !m.is_null()) {
        let ok = m
            .as_scalar()
            .is_some_and(|s| ["exclude", "translate"].contains(&s.to_ascii_lowercase().as_str()));
        if !ok {
            return Err(m.pos.error(
                ErrorKind::UiDefinitionError,
                format!("field {name}: invalid value of 'murano_networks' (exclude or translate)"),
            ));
        }
    }
    let raw = match node_value(n) {
        Value::Dict(ref d) => (**d).clone(),
        _ => Dict::default(),
    };
    Ok(Field {
        name,
        ty,
        pos: n.pos.clone(),
        label,
        description,
        initial,
        required,
        hidden,
        min_length: opt_int(n.get("minLength"), "minLength")?,
        max_length: opt_int(n.get("maxLength"), "maxLength")?,
        min_value: opt_int(n.get("minValue"), "minValue")?,
        max_value: opt_int(n.get("maxValue"), "maxValue")?,
        regexp,
        validators,
        choices,
        image_type,
        requirements,
        required_msg,
        allow_auto,
        network_filter,
        include_subnets,
        confirm_input,
        raw,
    })
}

fn parse_form(name: &str, body: &Node, pos: &Pos) -> Result<Form> {
    let mut form = Form {
        name: name.to_string(),
        pos: pos.clone(),
        fields: Vec::new(),
        validators: Vec::new(),
    };
    if body.is_null() {
        return Ok(form);
    }
    if body.as_map().is_none() {
        return Err(body.pos.error(
            ErrorKind::UiDefinitionError,
            format!(
                "form {name} must be a mapping with `fields`, not a {}",
                body.kind_name()
            ),
        ));
    }
    if let Some(f) = body.get("fields") {
        match &f.kind {
            NodeKind::Seq(items) => {
                for it in items {
                    let field = parse_field(it)?;
                    // The dashboard keeps a form's fields in an ordered
                    // dict: a second field of a name replaces the first,
                    // in its place.
                    match form.fields.iter_mut().find(|x| x.name == field.name) {
                        Some(slot) => *slot = field,
                        None => form.fields.push(field),
                    }
                }
            }
            _ if f.is_null() => {}
            _ => {
                return Err(f.pos.error(
                    ErrorKind::UiDefinitionError,
                    format!(
                        "form {name}: fields must be a list, not a {}",
                        f.kind_name()
                    ),
                ))
            }
        }
    }
    if let Some(v) = body.get("validators") {
        form.validators = parse_validators(v, "form validators")?;
    }
    Ok(form)
}

impl UiDefinition {
    /// Parses a UI definition; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<UiDefinition> {
        let docs = load_documents(text, file)?;
        let Some(doc) = docs.first() else {
            return Err(ui_error(format!("{file}: empty UI definition")));
        };
        if docs.len() > 1 {
            return Err(docs[1].pos.error(
                ErrorKind::UiDefinitionError,
                "a UI definition is a single YAML document",
            ));
        }
        if doc.as_map().is_none() {
            return Err(doc.pos.error(
                ErrorKind::UiDefinitionError,
                format!(
                    "a UI definition must be a mapping, not a {}",
                    doc.kind_name()
                ),
            ));
        }
        // murano-dashboard's `check_version` (dynamic_ui/version.py): a
        // definition without `Version` is 1; only the 2.x family up to the
        // latest is supported.
        let (ver_text, ver_pos) = match doc.get("Version") {
            None => ("1".to_string(), &doc.pos),
            Some(v) => (scalar_text(v, "Version")?.to_string(), &v.pos),
        };
        let version = UiVersion::parse(&ver_text).ok_or_else(|| {
            ver_pos.error(
                ErrorKind::UiDefinitionError,
                format!("malformed Version `{ver_text}` (expected MAJOR.MINOR)"),
            )
        })?;
        let latest = UiVersion {
            major: LATEST_VERSION.0,
            minor: LATEST_VERSION.1,
        };
        if version.major != latest.major {
            return Err(ver_pos.error(
                ErrorKind::UiDefinitionError,
                format!(
                    "Unsupported Dynamic UI format version: requested format version \
                     {version} is not compatible with the supported family {}",
                    latest.major
                ),
            ));
        }
        if version > latest {
            return Err(ver_pos.error(
                ErrorKind::UiDefinitionError,
                format!(
                    "Unsupported Dynamic UI format version: requested format version \
                     {version} is newer than latest supported {latest}"
                ),
            ));
        }
        let mut templates = Vec::new();
        if let Some(t) = doc.get("Templates") {
            match &t.kind {
                NodeKind::Map(entries) => {
                    for (k, v) in entries {
                        let name = scalar_text(k, "template name")?.to_string();
                        let tpl = Tpl::from_node(v)?;
                        if let Some(slot) = templates.iter_mut().find(|(n, _)| *n == name) {
                            slot.1 = tpl;
                        } else {
                            templates.push((name, tpl));
                        }
                    }
                }
                _ if t.is_null() => {}
                _ => {
                    return Err(t.pos.error(
                        ErrorKind::UiDefinitionError,
                        format!("Templates must be a mapping, not a {}", t.kind_name()),
                    ))
                }
            }
        }
        let application = match doc.get("Application") {
            None => None,
            Some(a) if a.is_null() => None,
            Some(a) => {
                if a.as_map().is_none() {
                    return Err(a.pos.error(
                        ErrorKind::UiDefinitionError,
                        format!("Application must be a mapping, not a {}", a.kind_name()),
                    ));
                }
                Some(Tpl::from_node(a)?)
            }
        };
        let Some(application) = application else {
            return Err(doc.pos.error(
                ErrorKind::UiDefinitionError,
                "Application section is required",
            ));
        };
        let mut forms = Vec::new();
        if let Some(f) = doc.get("Forms") {
            match &f.kind {
                NodeKind::Seq(items) => {
                    for it in items {
                        let entries = match it.as_map() {
                            Some(e) if e.len() == 1 => e,
                            _ => return Err(it.pos.error(
                                ErrorKind::UiDefinitionError,
                                "each form must be a mapping of one form name to its definition",
                            )),
                        };
                        let (k, body) = &entries[0];
                        let name = scalar_text(k, "form name")?;
                        if forms.iter().any(|x: &Form| x.name == name) {
                            return Err(k.pos.error(
                                ErrorKind::UiDefinitionError,
                                format!("duplicate form {name}"),
                            ));
                        }
                        forms.push(parse_form(name, body, &k.pos)?);
                    }
                }
                _ if f.is_null() => {}
                _ => {
                    return Err(f.pos.error(
                        ErrorKind::UiDefinitionError,
                        format!("Forms must be a list of forms, not a {}", f.kind_name()),
                    ))
                }
            }
        }
        Ok(UiDefinition {
            file: file.to_string(),
            version,
            templates,
            application,
            forms,
            pos: doc.pos.clone(),
        })
    }

    /// The forms and fields, as data (for `ui forms`).
    pub fn describe(&self) -> Value {
        let s = |x: &str| Value::str(x);
        let mut forms = Vec::new();
        for f in &self.forms {
            let mut fields = Vec::new();
            for fd in &f.fields {
                let mut d = Dict::default();
                d.insert(s("name"), s(&fd.name));
                d.insert(s("type"), s(&fd.ty.name()));
                d.insert(s("label"), s(&fd.label));
                d.insert(
                    s("required"),
                    match &fd.required {
                        Tpl::Const(v) => v.clone(),
                        _ => s("<expression>"),
                    },
                );
                d.insert(
                    s("hidden"),
                    match &fd.hidden {
                        Tpl::Const(v) => v.clone(),
                        _ => s("<expression>"),
                    },
                );
                if let Some(Tpl::Const(v)) = &fd.initial {
                    d.insert(s("initial"), v.clone());
                }
                d.insert(s("position"), s(&fd.pos.to_string()));
                fields.push(Value::dict(d));
            }
            let mut d = Dict::default();
            d.insert(s("name"), s(&f.name));
            d.insert(s("fields"), Value::list(fields));
            d.insert(s("validators"), Value::Int(f.validators.len() as i64));
            forms.push(Value::dict(d));
        }
        let mut d = Dict::default();
        d.insert(s("file"), s(&self.file));
        d.insert(s("version"), s(&self.version.to_string()));
        d.insert(
            s("templates"),
            Value::list(self.templates.iter().map(|(n, _)| s(n)).collect()),
        );
        d.insert(s("forms"), Value::list(forms));
        Value::dict(d)
    }
}

// ---- evaluation ---------------------------------------------------------

/// Deterministic ids and random names.
pub struct IdGen {
    state: u64,
    hostnames: u64,
}

impl IdGen {
    /// A generator seeded by text (the package name).
    pub fn new(seed: &str) -> IdGen {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        IdGen {
            state: h,
            hostnames: 0,
        }
    }
    fn next(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A uuid4-shaped id (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
    pub fn uuid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        let a = (a & 0xffff_ffff_ffff_0fff) | 0x4000;
        let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
    /// A random-looking host name (`generateHostname` without a pattern).
    pub fn hostname(&mut self) -> String {
        self.hostnames += 1;
        let mut s = String::new();
        for _ in 0..8 {
            s.push((b'a' + (self.next() % 26) as u8) as char);
        }
        format!("{s}{}", self.hostnames)
    }
}

/// The YAQL host of one UI evaluation: templates, the application name and
/// the id generator, reached by the dashboard functions.
pub struct UiHost {
    templates: HashMap<String, Tpl>,
    app_name: String,
    ids: Arc<Mutex<IdGen>>,
    refs: Mutex<HashMap<String, Value>>,
    depth: AtomicUsize,
}

impl Host for UiHost {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
    fn call_method(
        &self,
        _: &Cx,
        _: &Value,
        _: &str,
        _: &[ArgIn],
        _: &[(Arc<str>, ArgIn)],
    ) -> Option<Result<Value>> {
        None
    }
}

struct DepthGuard<'a>(&'a AtomicUsize);
impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn mentions_pos(msg: &str, pos: &Pos) -> bool {
    msg.starts_with(&*pos.file)
}

impl UiHost {
    fn enter(&self) -> Result<DepthGuard<'_>> {
        let d = self.depth.fetch_add(1, Ordering::Relaxed);
        let g = DepthGuard(&self.depth);
        if d > MAX_DEPTH {
            return Err(ui_error(
                "templates nest too deeply (a template refers to itself?)",
            ));
        }
        Ok(g)
    }

    /// Evaluates a template in a context (templates referenced by the
    /// results are evaluated there too, as the dashboard does).
    pub fn eval(&self, env: &Env, t: &Tpl, ctx: &Arc<Frame>) -> Result<Value> {
        match t {
            Tpl::Const(v) => Ok(v.clone()),
            Tpl::Expr { prog, src, pos } => {
                let v = prog
                    .eval_in(env, ctx)
                    .and_then(|v| stdlib::finalize(env, v))
                    .map_err(|e| {
                        if mentions_pos(e.message(), pos) {
                            e
                        } else {
                            Error::new(
                                e.kind().to_string(),
                                format!("{pos}: {} in `{src}`", e.message()),
                            )
                        }
                    })?;
                self.resolve(env, v, ctx)
            }
            Tpl::List(items) => Ok(Value::list(
                items
                    .iter()
                    .map(|x| self.eval(env, x, ctx))
                    .collect::<Result<_>>()?,
            )),
            Tpl::Dict(items) => {
                let mut d = Dict::default();
                for (k, v) in items {
                    let k = self.eval(env, k, ctx)?;
                    let v = self.eval(env, v, ctx)?;
                    d.insert(k, v);
                }
                Ok(Value::dict(d))
            }
        }
    }

    /// Replaces template references inside a value by their evaluation.
    fn resolve(&self, env: &Env, v: Value, ctx: &Arc<Frame>) -> Result<Value> {
        if !has_marker(&v) {
            return Ok(v);
        }
        let _g = self.enter()?;
        match v {
            Value::Str(ref s) => {
                let name = &s[MARK.len()..];
                let t = self
                    .templates
                    .get(name)
                    .ok_or_else(|| ui_error(format!("unknown template {name}")))?;
                self.eval(env, t, ctx)
            }
            Value::List(ref l) => Ok(Value::list(
                l.iter()
                    .map(|x| self.resolve(env, x.clone(), ctx))
                    .collect::<Result<_>>()?,
            )),
            Value::Dict(ref d) => {
                let mut out = Dict::default();
                for (k, x) in d.iter() {
                    out.insert(
                        self.resolve(env, k.clone(), ctx)?,
                        self.resolve(env, x.clone(), ctx)?,
                    );
                }
                Ok(Value::dict(out))
            }
            other => Ok(other),
        }
    }
}

fn has_marker(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.starts_with(MARK),
        Value::List(l) => l.iter().any(has_marker),
        Value::Dict(d) => d.iter().any(|(k, x)| has_marker(k) || has_marker(x)),
        _ => false,
    }
}

fn host(cx: &Cx) -> Result<Arc<UiHost>> {
    cx.env
        .host()
        .and_then(|h| h.into_owned().as_any_arc().downcast::<UiHost>().ok())
        .ok_or_else(|| Error::new(ErrorKind::RuntimeError, "not in a Dynamic UI evaluation"))
}

fn f_repeat(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let times = a.int(1)?;
    if times < 0 {
        return Err(Error::new(
            ErrorKind::ValueError,
            format!("repeat: negative count {times} (the dashboard would loop forever)"),
        ));
    }
    if times > MAX_REPEAT {
        return Err(Error::new(
            ErrorKind::ValueError,
            format!("repeat: count {times} is too large (at most {MAX_REPEAT})"),
        ));
    }
    let tmpl = a.get(0).clone();
    let mut out = Vec::with_capacity(times as usize);
    for i in 0..times {
        let mut f = Frame::child(cx.ctx, &[]);
        f.vars.push(("index".into(), Value::Int(i + 1)));
        let f = Arc::new(f);
        out.push(h.resolve(cx.env, tmpl.clone(), &f)?);
    }
    Ok(Value::list(out))
}

fn f_generate_hostname(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let number = match a.get(1) {
        Value::Null => Value::Null,
        v => v.clone(),
    };
    match a.get(0) {
        Value::Str(p) if !p.is_empty() => Ok(Value::str(
            p.replace('#', &runtime::pyrepr::to_str(&number)),
        )),
        _ => {
            let mut ids = h.ids.lock().unwrap_or_else(|e| e.into_inner());
            Ok(Value::str(ids.hostname()))
        }
    }
}

fn f_name(cx: &Cx, _: Args) -> Result<Value> {
    Ok(Value::str(&host(cx)?.app_name))
}

fn f_ref(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let template = a.str(0).to_string();
    let param = match a.get(1) {
        Value::Str(s) => s.to_string(),
        _ => template.clone(),
    };
    let id_only = a.get(2).truthy();
    let key = format!("#{param}");
    let cached = h
        .refs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    let data = match cached {
        Some(d) => d,
        None => {
            let Some(t) = h.templates.get(&template) else {
                return Ok(Value::Null);
            };
            let v = h.eval(cx.env, t, cx.ctx)?;
            let v = match v {
                Value::Dict(ref d) => {
                    let mut d = (**d).clone();
                    let mut q = match d.get(&Value::str("?")) {
                        Some(Value::Dict(q)) => (**q).clone(),
                        _ => Dict::default(),
                    };
                    if !q.contains_key(&Value::str("id")) {
                        let id = h.ids.lock().unwrap_or_else(|e| e.into_inner()).uuid();
                        q.insert(Value::str("id"), Value::str(id));
                    }
                    d.insert(Value::str("?"), Value::dict(q));
                    Value::dict(d)
                }
                other => other,
            };
            h.refs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, v.clone());
            v
        }
    };
    let Value::Dict(d) = &data else {
        return Ok(Value::Null);
    };
    if id_only {
        return Ok(match d.get(&Value::str("?")) {
            Some(Value::Dict(q)) => q.get(&Value::str("id")).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        });
    }
    Ok(data)
}

fn f_encrypt(_: &Cx, a: Args) -> Result<Value> {
    // No key manager offline: the value passes through (decryptData in the
    // engine returns it unchanged too).
    Ok(a.get(0).clone())
}

/// The registry UI expressions compile against: the dashboard functions
/// in front of the YAQL standard library.
pub fn registry() -> Arc<Registry> {
    // Built once per process and immutable after: a cache, not state.
    static R: OnceLock<Arc<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut r = Registry::new();
        r.set_any_form(true);
        r.group("ui");
        r.function(
            "repeat",
            vec![p("template", Ty::Any).nullable(), p("times", Ty::Int)],
            f_repeat,
        );
        r.function(
            "generateHostname",
            vec![
                p("pattern", Ty::Any).nullable(),
                p("number", Ty::Any).nullable(),
            ],
            f_generate_hostname,
        );
        r.function("name", vec![], f_name);
        r.function(
            "ref",
            vec![
                p("templateName", Ty::Str),
                p("parameterName", Ty::Str).opt(),
                p("idOnly", Ty::Any).opt(),
            ],
            f_ref,
        );
        r.function(
            "encryptData",
            vec![p("data", Ty::Any).nullable()],
            f_encrypt,
        );
        r.merge_from(&stdlib::registry(true));
        Arc::new(r)
    })
    .clone()
}

/// The dashboard's yaql options, but for the iterator limit: the
/// dashboard has none, and an endless or huge `repeat($t, n)` would grow
/// one list until memory ran out (found by the `ui` fuzz target); here it
/// stops at [`runtime::DEFAULT_LIMIT_ITERATORS`] elements.
fn options() -> Options {
    Options {
        limit_iterators: Some(runtime::DEFAULT_LIMIT_ITERATORS),
        memory_quota: None,
        convert_sets_to_lists: true,
        legacy: true,
        ..Options::default()
    }
}

// ---- samples --------------------------------------------------------------

fn string_candidates(field: &Field) -> Vec<String> {
    let n = field.name.to_ascii_lowercase();
    let mut c: Vec<String> = Vec::new();
    if field.ty == FieldType::Password || n.contains("pass") {
        c.extend(["P@ssw0rd1", "Passw0rd1", "passw0rd1", "Password1"].map(String::from));
    }
    if n.contains("mail") {
        c.push("admin@example.com".into());
    }
    if n.contains("domain") {
        c.extend(["acme.local", "example.com"].map(String::from));
    }
    if n.contains("auth") {
        c.push("http://keystone.example.com:5000/v3".into());
    }
    if n.contains("osimage") {
        c.push("ubuntu16.04-x64".into());
    }
    if n.contains("url") || n.contains("repo") || n.contains("uri") {
        c.extend(
            [
                "https://git.example.com/app.git",
                "http://example.com/",
                "http://10.0.0.2:5000",
            ]
            .map(String::from),
        );
    }
    if field.ty == FieldType::ClusterIp
        || n.ends_with("ip")
        || n.contains("address")
        || n.contains("host")
    {
        c.extend(["10.0.0.10", "host-1"].map(String::from));
    }
    if n.contains("port") {
        c.push("8080".into());
    }
    if n.contains("user") || n.contains("login") {
        c.extend(["admin", "user1"].map(String::from));
    }
    if n.contains("key") {
        c.push("key-1234567890".into());
    }
    let base: String = field
        .name
        .chars()
        .filter(|ch| ch.is_ascii_alphanumeric())
        .collect();
    if !base.is_empty() {
        c.push(base.clone());
        c.push(format!("{base}1"));
    }
    c.extend(
        [
            "sample",
            "sample1",
            "Sample1",
            "sample-1",
            "a",
            "abc",
            "a1",
            "A1",
            "P@ssw0rd1",
            "example.com",
            "10.0.0.10",
            "1",
        ]
        .map(String::from),
    );
    c
}

// ---- generation -----------------------------------------------------------

/// What [`generate`] needs besides the definition.
pub struct ModelOptions<'a> {
    /// The package's full name (seeds the ids; its last part is the
    /// default application name).
    pub package: String,
    /// Answers: `{form: {field: value}}` (or `{"form.field": value}`).
    pub answers: Option<Value>,
    /// Where application-typed fields find their packages.
    pub loader: Option<&'a PackageLoader>,
    /// Shared id generator (nested applications use their parent's).
    pub ids: Option<Arc<Mutex<IdGen>>>,
    /// Nesting depth of application-typed fields.
    pub nesting: usize,
}

/// The result of [`generate`].
pub struct Outcome {
    /// The application's object model.
    pub model: Value,
    /// The cleaned form data (`$`).
    pub data: Value,
    /// Which fields took samples, warnings.
    pub notes: Vec<String>,
    /// The applications made for application fields, in the order they
    /// were made (an application's own additions before it): the
    /// dashboard adds each to the environment beside this one, and the
    /// fields hold their ids.
    pub added: Vec<Value>,
}

fn answer_for(answers: &Option<Value>, form: &str, field: &str) -> Option<Value> {
    let Some(Value::Dict(a)) = answers else {
        return None;
    };
    if let Some(Value::Dict(f)) = a.get(&Value::str(form)) {
        if let Some(v) = f.get(&Value::str(field)) {
            return Some(v.clone());
        }
    }
    a.get(&Value::str(format!("{form}.{field}"))).cloned()
}

fn check_answers(answers: &Option<Value>, ui: &UiDefinition) -> Result<()> {
    let Some(a) = answers else { return Ok(()) };
    let Value::Dict(a) = a else {
        return Err(ui_error(
            "answers must be a mapping of form names to {field: value} mappings",
        ));
    };
    // A password field that confirms its input also has the dashboard's
    // `<name>-clone` field (muranodashboard/dynamic_ui/forms.py).
    let is_field = |x: &Field, field: &str| {
        x.name == field
            || (x.ty == FieldType::Password
                && x.confirm_input
                && field.strip_suffix("-clone") == Some(x.name.as_str()))
    };
    let has = |form: &str, field: &str| {
        (form == WF_MANAGEMENT_NAME && field == "application_name")
            || ui
                .forms
                .iter()
                .any(|f| f.name == form && f.fields.iter().any(|x| is_field(x, field)))
    };
    for (k, v) in a.iter() {
        let k = runtime::pyrepr::to_str(k);
        match v {
            Value::Dict(fields) if !k.contains('.') => {
                if k != WF_MANAGEMENT_NAME && !ui.forms.iter().any(|f| f.name == k) {
                    return Err(ui_error(format!(
                        "answers: no form {k} in {} (forms: {})",
                        ui.file,
                        ui.forms
                            .iter()
                            .map(|f| f.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                for f in fields.keys() {
                    let f = runtime::pyrepr::to_str(f);
                    if !has(&k, &f) {
                        return Err(ui_error(format!("answers: form {k} has no field {f}")));
                    }
                }
            }
            _ => match k.split_once('.') {
                Some((form, field)) if has(form, field) => {}
                _ => {
                    return Err(ui_error(format!(
                        "answers: `{k}` is not a form (mapping) or a `form.field` key"
                    )))
                }
            },
        }
    }
    Ok(())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Dict(d) => d.is_empty(),
        _ => false,
    }
}

struct Gen<'a> {
    ui: &'a UiDefinition,
    opts: &'a ModelOptions<'a>,
    env: Env,
    host: Arc<UiHost>,
    regex_prog: Program,
    notes: Vec<String>,
    added: Vec<Value>,
}

impl Gen<'_> {
    fn ctx(&self, data: &Dict) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(Value::dict(data.clone()));
        for (name, _) in &self.ui.templates {
            f.vars
                .push((name.as_str().into(), Value::str(format!("{MARK}{name}"))));
        }
        Arc::new(f)
    }

    fn eval(&self, t: &Tpl, ctx: &Arc<Frame>) -> Result<Value> {
        self.host.eval(&self.env, t, ctx)
    }

    fn regex_match(&self, pattern: &str, value: &str, pos: &Pos) -> Result<bool> {
        let mut f = Frame::default();
        f.args.push(Value::Null);
        f.vars.push(("v".into(), Value::str(value)));
        f.vars.push(("p".into(), Value::str(pattern)));
        match self.regex_prog.eval_in(&self.env, &Arc::new(f)) {
            Ok(v) => Ok(v.truthy()),
            Err(e) => Err(pos.error(
                ErrorKind::UiDefinitionError,
                format!("bad regexpValidator `{pattern}`: {}", e.message()),
            )),
        }
    }

    /// The value of an image or network field that names an image or
    /// network of the cloud the field does not offer (its `imageType`,
    /// `filter`, `include_subnets`), as text.
    fn not_offered(&self, field: &Field, v: &Value) -> Result<Option<String>> {
        match field.ty {
            FieldType::Image => {
                let name = v.as_str().unwrap_or("");
                let image = IMAGES.iter().find(|i| i.name == name);
                Ok(image
                    .filter(|i| !i.offered_for(field.image_type.as_deref()))
                    .map(|i| i.name.to_string()))
            }
            FieldType::Network => {
                let Value::List(pair) = v else {
                    return Ok(None);
                };
                let net = pair.first().and_then(Value::as_str).unwrap_or("");
                if !cloud::known_network(net) {
                    return Ok(None);
                }
                let subnet = pair.get(1).and_then(Value::as_str);
                let offered = self.network_choices(field)?;
                let ok = offered.iter().any(|(n, s)| *n == net && *s == subnet);
                Ok((!ok).then(|| runtime::pyrepr::to_str(v)))
            }
            _ => Ok(None),
        }
    }

    /// The `[network, subnet]` choices of a network field besides `Auto`.
    fn network_choices(&self, field: &Field) -> Result<Vec<(&'static str, Option<&'static str>)>> {
        let q = cloud::NetworkQuery {
            filter: field.network_filter.as_deref(),
            include_subnets: field.include_subnets,
        };
        let mut err = None;
        let mut matches = |pattern: &str, name: &str| {
            // Python's `re.match` anchors at the start only.
            match self.regex_match(&format!("^(?:{pattern})"), name, &field.pos) {
                Ok(b) => b,
                Err(e) => {
                    err.get_or_insert(e);
                    false
                }
            }
        };
        let out = cloud::network_choices(&q, &mut matches);
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Converts a raw value to the field's cleaned type.
    fn coerce(&self, field: &Field, v: Value) -> std::result::Result<Value, String> {
        Ok(match &field.ty {
            FieldType::Boolean | FieldType::FloatingIp => match v {
                Value::Bool(b) => Value::Bool(b),
                Value::Null => Value::Bool(false),
                Value::Str(ref s) => Value::Bool(!matches!(
                    s.to_ascii_lowercase().as_str(),
                    "" | "false" | "0" | "no" | "off"
                )),
                other => Value::Bool(other.truthy()),
            },
            FieldType::Integer => match v {
                Value::Int(i) => Value::Int(i),
                Value::Bool(b) => Value::Int(b as i64),
                Value::Null => Value::Null,
                Value::Str(ref s) if s.trim().is_empty() => Value::Null,
                Value::Str(ref s) => Value::Int(
                    s.trim()
                        .parse::<i64>()
                        .map_err(|_| format!("`{s}` is not a whole number"))?,
                ),
                Value::Float(f) if f.fract() == 0.0 => Value::Int(f as i64),
                other => {
                    return Err(format!(
                        "`{}` is not a whole number",
                        runtime::pyrepr::to_str(&other)
                    ))
                }
            },
            FieldType::DatabaseList => match v {
                Value::Null => Value::list(vec![]),
                Value::Str(ref s) => Value::list(
                    s.split(',')
                        .map(str::trim)
                        .filter(|x| !x.is_empty())
                        .map(Value::str)
                        .collect(),
                ),
                l @ Value::List(_) => l,
                other => {
                    return Err(format!(
                        "`{}` is not a list of database names",
                        runtime::pyrepr::to_str(&other)
                    ))
                }
            },
            FieldType::Network => match v {
                Value::Null => Value::list(vec![Value::Null, Value::Null]),
                Value::Str(ref s) => match s.split_once(',') {
                    Some((n, sub)) => {
                        Value::list(vec![Value::str(n.trim()), Value::str(sub.trim())])
                    }
                    None => Value::list(vec![Value::str(&**s), Value::Null]),
                },
                l @ Value::List(_) if matches!(&l, Value::List(x) if x.len() == 2) => l,
                other => {
                    return Err(format!(
                        "`{}` is not a [network, subnet] pair",
                        runtime::pyrepr::to_str(&other)
                    ))
                }
            },
            FieldType::App(_) | FieldType::Instance => v,
            FieldType::Choice => match v {
                Value::Null => Value::str(""),
                other => other,
            },
            _ => match v {
                Value::Null => Value::str(""),
                s @ Value::Str(_) => s,
                other => Value::str(runtime::pyrepr::to_str(&other)),
            },
        })
    }

    /// Validates a cleaned value; `Err(message)` when invalid.
    fn validate(
        &self,
        field: &Field,
        v: &Value,
        required: bool,
    ) -> Result<std::result::Result<(), String>> {
        if is_empty(v) || (field.ty == FieldType::Network && !has_network(v)) {
            if required && !(field.ty == FieldType::Network && field.allow_auto) {
                return Ok(Err(field
                    .required_msg
                    .clone()
                    .unwrap_or_else(|| "This field is required.".into())));
            }
            return Ok(Ok(()));
        }
        if let Value::Str(s) = v {
            let len = s.chars().count() as i64;
            if let Some(m) = field.min_length {
                if len < m {
                    return Ok(Err(format!(
                        "Ensure this value has at least {m} characters (it has {len})."
                    )));
                }
            }
            if let Some(m) = field.max_length {
                if len > m {
                    return Ok(Err(format!(
                        "Ensure this value has at most {m} characters (it has {len})."
                    )));
                }
            }
        }
        if let Value::Int(i) = v {
            if let Some(m) = field.min_value {
                if *i < m {
                    return Ok(Err(format!(
                        "Ensure this value is greater than or equal to {m}."
                    )));
                }
            }
            if let Some(m) = field.max_value {
                if *i > m {
                    return Ok(Err(format!(
                        "Ensure this value is less than or equal to {m}."
                    )));
                }
            }
        }
        if field.ty == FieldType::Choice && !field.choices.iter().any(|(c, _)| c == v) {
            return Ok(Err(format!(
                "Select a valid choice. {} is not one of the available choices.",
                runtime::pyrepr::to_str(v)
            )));
        }
        if field.ty == FieldType::DatabaseList {
            if let Value::List(l) = v {
                for x in l.iter() {
                    let s = runtime::pyrepr::to_str(x);
                    let ok = s
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_@#$".contains(c));
                    if !ok {
                        return Ok(Err(format!(
                            "First symbol should be latin letter or underscore. Subsequent symbols can be latin letter, numeric, underscore, at sign, number sign or dollar sign ({s})"
                        )));
                    }
                }
            }
        }
        if field.ty == FieldType::ClusterIp {
            let s = v.as_str().unwrap_or("");
            if s.parse::<std::net::Ipv4Addr>().is_err() {
                return Ok(Err(format!("Enter a valid IPv4 address ({s}).")));
            }
        }
        let text = match v {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        };
        // The dashboard offers only the flavors that meet the field's
        // `requirements` (FlavorChoiceField): a known flavor below them is
        // not a choice. (A flavor this catalogue does not know is taken as
        // the user's cloud has it.)
        if field.ty == FieldType::Flavor {
            let name = text.clone().unwrap_or_default();
            if let Some(f) = FLAVORS.iter().find(|f| f.name == name) {
                if !f.meets(&field.requirements) {
                    return Ok(Err(format!(
                        "Select a valid choice. {name} is not one of the available choices \
                         (it does not meet the requirements {})",
                        runtime::pyrepr::to_str(&Value::dict(field.requirements.clone()))
                    )));
                }
            }
        }
        if let Some(refused) = self.not_offered(field, v)? {
            return Ok(Err(format!(
                "Select a valid choice. {refused} is not one of the available choices."
            )));
        }
        let custom = field.regexp.is_some() || !field.validators.is_empty();
        if field.ty == FieldType::Password && !(custom && self.ui.version >= v23()) {
            let s = text.clone().unwrap_or_default();
            let strong = s.chars().count() >= 7
                && s.chars().any(|c| c.is_ascii_uppercase())
                && s.chars().any(|c| c.is_ascii_lowercase())
                && s.chars().any(|c| c.is_ascii_digit())
                && s.chars().any(|c| !c.is_ascii_alphanumeric());
            if !strong {
                return Ok(Err("The password must contain at least 7 characters, 1 capital letter, 1 non-capital letter, 1 digit and 1 special character.".into()));
            }
        }
        let mut all: Vec<&Validator> = Vec::new();
        if let Some(r) = &field.regexp {
            all.push(r);
        }
        all.extend(field.validators.iter());
        for val in all {
            let ok = match &val.check {
                Check::Regexp(p) => match &text {
                    Some(s) => self.regex_match(p, s, &val.pos)?,
                    None => self.regex_match(p, &runtime::pyrepr::to_str(v), &val.pos)?,
                },
                Check::Yaql(t) => {
                    let mut f = Frame::default();
                    f.args.push(v.clone());
                    self.eval(t, &Arc::new(f))?.truthy()
                }
            };
            if !ok {
                return Ok(Err(val
                    .message
                    .clone()
                    .unwrap_or_else(|| "Enter a valid value.".into())));
            }
        }
        Ok(Ok(()))
    }

    fn sample(&mut self, form: &str, field: &Field, required: bool) -> Result<Value> {
        let note = |s: &mut Vec<String>, v: &Value| {
            s.push(format!(
                "{form}.{}: sample {} ({})",
                field.name,
                runtime::json::to_tagged_string(v),
                field.ty.name()
            ))
        };
        let v = match &field.ty {
            FieldType::Boolean | FieldType::FloatingIp => return Ok(Value::Bool(false)),
            FieldType::Integer => {
                if !required {
                    return Ok(Value::Null);
                }
                let mut i = field
                    .min_value
                    .unwrap_or(1)
                    .max(field.min_value.unwrap_or(0));
                if let Some(m) = field.max_value {
                    i = i.min(m);
                }
                Value::Int(i)
            }
            FieldType::Flavor => {
                let f = FLAVORS
                    .iter()
                    .find(|f| f.meets(&field.requirements))
                    .unwrap_or(&FLAVORS[FLAVORS.len() - 1]);
                Value::str(f.name)
            }
            FieldType::Image => {
                let wanted = field.image_type.as_deref();
                match IMAGES.iter().find(|i| i.offered_for(wanted)) {
                    Some(i) => Value::str(i.name),
                    None if !required => return Ok(Value::str("")),
                    None => {
                        return Err(field.pos.error(
                            ErrorKind::UiValidationError,
                            format!(
                                "{form}.{}: no image of type {} in the simulated cloud (the \
                                 dashboard offers none); answer one with --answers",
                                field.name,
                                wanted.unwrap_or("")
                            ),
                        ))
                    }
                }
            }
            FieldType::Keypair => Value::str("default"),
            FieldType::Azone => Value::str("nova"),
            FieldType::SecurityGroup => Value::str("default"),
            FieldType::Volume => {
                if !required {
                    return Ok(Value::str(""));
                }
                Value::str("volume-1")
            }
            FieldType::Network => {
                if field.allow_auto {
                    return Ok(Value::list(vec![Value::Null, Value::Null]));
                }
                match self.network_choices(field)?.first() {
                    Some((n, sub)) => {
                        Value::list(vec![Value::str(*n), sub.map_or(Value::Null, Value::str)])
                    }
                    None => {
                        return Err(field.pos.error(
                            ErrorKind::UiValidationError,
                            format!(
                                "{form}.{}: no network of the simulated cloud matches the \
                                 field; answer one with --answers",
                                field.name
                            ),
                        ))
                    }
                }
            }
            FieldType::Choice => field.choices[0].0.clone(),
            FieldType::DatabaseList => {
                if !required {
                    return Ok(Value::list(vec![]));
                }
                Value::list(vec![Value::str("db1")])
            }
            FieldType::Instance => return Ok(Value::Null),
            FieldType::App(types) => return self.app_sample(form, field, types, required, None),
            FieldType::String
            | FieldType::Text
            | FieldType::Password
            | FieldType::ClusterIp
            | FieldType::Domain => {
                if !required {
                    return Ok(Value::str(""));
                }
                let mut chosen = None;
                for c in string_candidates(field) {
                    let v = Value::str(&c);
                    if self.validate(field, &v, true)?.is_ok() {
                        chosen = Some(v);
                        break;
                    }
                }
                match chosen {
                    Some(v) => v,
                    None => {
                        let v = Value::str("sample");
                        self.notes.push(format!(
                            "{form}.{}: no sample satisfies its validators; using \"sample\" ({})",
                            field.name, field.pos
                        ));
                        v
                    }
                }
            }
        };
        note(&mut self.notes, &v);
        Ok(v)
    }

    /// Adds `app` to the environment, as the dashboard's "+" beside an
    /// application field does (`make_select_cls` in
    /// muranodashboard/dynamic_ui/fields.py adds it through the catalogue's
    /// add view, and the field's choice is then its id). Returns that id.
    fn add_application(&mut self, app: Value) -> Value {
        let app = {
            let mut g = self.host.ids.lock().unwrap_or_else(|e| e.into_inner());
            insert_ids(app, &mut g)
        };
        let id = match &app {
            Value::Dict(d) => match d.get(&Value::str("?")) {
                Some(Value::Dict(q)) => q.get(&Value::str("id")).cloned(),
                _ => None,
            },
            _ => None,
        };
        self.added.push(app);
        id.unwrap_or(Value::Null)
    }

    /// A new application for an application field, from its package's UI
    /// with `answers` (see [`ModelOptions::answers`]): added to the
    /// environment, the field's value is its id.
    fn app_sample(
        &mut self,
        form: &str,
        field: &Field,
        types: &[String],
        required: bool,
        answers: Option<Value>,
    ) -> Result<Value> {
        // The dashboard leaves an optional application field empty unless
        // the user picks or adds an application for it.
        if !required && answers.is_none() {
            self.notes.push(format!(
                "{form}.{}: optional application of type {} left empty",
                field.name,
                types.join(" or ")
            ));
            return Ok(Value::Null);
        }
        let Some(loader) = self.opts.loader else {
            if required {
                self.notes.push(format!(
                    "{form}.{}: needs an application of type {}; no search path (-L) to make one",
                    field.name,
                    types.join(" or ")
                ));
            }
            return Ok(Value::Null);
        };
        if self.opts.nesting >= MAX_APP_NESTING {
            self.notes.push(format!(
                "{form}.{}: applications nest too deeply; left null",
                field.name
            ));
            return Ok(Value::Null);
        }
        // The requirements of the package whose UI this is: an embedded
        // application comes from the version that `run` resolves too.
        let requirements: Vec<(String, package::VersionSpec)> = loader
            .found
            .values()
            .flatten()
            .find(|f| f.package.full_name() == self.opts.package)
            .map(|f| f.package.requirements().to_vec())
            .unwrap_or_default();
        for t in types {
            let mut candidates: Vec<_> = loader
                .found
                .values()
                .flatten()
                .filter(|f| {
                    f.package.full_name() == t || f.package.classes().iter().any(|c| c == t)
                })
                .collect();
            // Highest version first, then keep those the requirement allows.
            candidates.sort_by(|a, b| b.package.version().cmp(a.package.version()));
            let found = candidates
                .iter()
                .find(|f| {
                    requirements
                        .iter()
                        .find(|(n, _)| n == f.package.full_name())
                        .is_none_or(|(_, spec)| spec.matches(f.package.version()))
                })
                .or(candidates.first())
                .copied();
            let Some(found) = found else { continue };
            let pkg = found.package.clone();
            let nested = ModelOptions {
                package: pkg.full_name().to_string(),
                answers: answers.clone(),
                loader: self.opts.loader,
                ids: Some(self.host.ids.clone()),
                nesting: self.opts.nesting + 1,
            };
            match package_model(&*pkg, &nested) {
                Ok(Some(out)) => {
                    let mut model = out.model;
                    // The field names the class; keep it when the package's
                    // application is another class of it.
                    if let Value::Dict(d) = &model {
                        let ty = d
                            .get(&Value::str("?"))
                            .and_then(|q| match q {
                                Value::Dict(q) => q.get(&Value::str("type")).cloned(),
                                _ => None,
                            })
                            .and_then(|v| v.as_str().map(str::to_string));
                        if ty.as_deref() != Some(t.as_str()) {
                            let mut q = Dict::default();
                            q.insert(Value::str("type"), Value::str(t));
                            let mut d2 = Dict::default();
                            d2.insert(Value::str("?"), Value::dict(q));
                            model = Value::dict(d2);
                        }
                    }
                    self.notes.push(format!(
                        "{form}.{}: a new {t} application (from package {})",
                        field.name,
                        pkg.full_name()
                    ));
                    for n in out.notes {
                        self.notes.push(format!("  {t}: {n}"));
                    }
                    self.added.extend(out.added);
                    return Ok(self.add_application(model));
                }
                Ok(None) => {
                    let mut q = Dict::default();
                    q.insert(Value::str("type"), Value::str(t));
                    let mut d = Dict::default();
                    d.insert(Value::str("?"), Value::dict(q));
                    self.notes.push(format!(
                        "{form}.{}: a new {t} application (package {} has no UI: no properties set)",
                        field.name,
                        pkg.full_name()
                    ));
                    return Ok(self.add_application(Value::dict(d)));
                }
                // Answers the user gave for it must fit.
                Err(e) if answers.is_some() => return Err(e),
                Err(e) => {
                    self.notes.push(format!(
                        "{form}.{}: could not make a {t} application: {}",
                        field.name,
                        e.message()
                    ));
                }
            }
        }
        if required {
            self.notes.push(format!(
                "{form}.{}: no package on the search path provides {}; left null",
                field.name,
                types.join(" or ")
            ));
        }
        Ok(Value::Null)
    }

    fn field_value(&mut self, form: &Form, field: &Field, data: &Dict) -> Result<Value> {
        let ctx = self.ctx(data);
        let required = self.eval(&field.required, &ctx)?.truthy()
            && !matches!(field.ty, FieldType::Boolean | FieldType::FloatingIp);
        let fail = |msg: String| {
            field.pos.error(
                ErrorKind::UiValidationError,
                format!("{}.{}: {msg}", form.name, field.name),
            )
        };
        if let Some(a) = answer_for(&self.opts.answers, &form.name, &field.name) {
            // An application field answered with a mapping of forms (not an
            // object model): the answers for the application made for it.
            if let (FieldType::App(types), Value::Dict(d)) = (&field.ty, &a) {
                if !d.contains_key(&Value::str("?")) {
                    return self.app_sample(&form.name, field, types, required, Some(a.clone()));
                }
            }
            let clone = format!("{}-clone", field.name);
            if let Some(c) = answer_for(&self.opts.answers, &form.name, &clone) {
                if field.ty == FieldType::Password && c != a {
                    return Err(fail("Passwords do not match".into()));
                }
            }
            let v = self.coerce(field, a).map_err(fail)?;
            if let FieldType::App(_) = field.ty {
                return Ok(v);
            }
            self.validate(field, &v, required)?.map_err(fail)?;
            return Ok(v);
        }
        if let Some(init) = &field.initial {
            let raw = self.eval(init, &ctx)?;
            if !raw.is_null() || !matches!(field.ty, FieldType::App(_)) {
                let v = self.coerce(field, raw).map_err(fail)?;
                let empty_required = required && is_empty(&v);
                if !empty_required {
                    if let Err(m) = self.validate(field, &v, required)? {
                        self.notes.push(format!(
                            "{}.{}: its initial value is invalid: {m}",
                            form.name, field.name
                        ));
                    }
                    return Ok(v);
                }
            }
        }
        self.sample(&form.name, field, required)
    }

    fn run(mut self) -> Result<Outcome> {
        check_answers(&self.opts.answers, self.ui)?;
        let mut data = Dict::default();
        for form in &self.ui.forms {
            let mut fd = Dict::default();
            data.insert(Value::str(&form.name), Value::dict(fd.clone()));
            for field in &form.fields {
                let v = self.field_value(form, field, &data)?;
                fd.insert(Value::str(&field.name), v);
                data.insert(Value::str(&form.name), Value::dict(fd.clone()));
            }
            let ctx = self.ctx(&data);
            for val in &form.validators {
                let ok = match &val.check {
                    Check::Yaql(t) => self.eval(t, &ctx)?.truthy(),
                    Check::Regexp(_) => true,
                };
                if !ok {
                    return Err(val.pos.error(
                        ErrorKind::UiValidationError,
                        format!(
                            "form {}: {}",
                            form.name,
                            val.message.as_deref().unwrap_or("validation failed")
                        ),
                    ));
                }
            }
        }
        let default_name = self
            .opts
            .package
            .rsplit('.')
            .next()
            .unwrap_or(&self.opts.package)
            .to_string();
        let app_name = match answer_for(&self.opts.answers, WF_MANAGEMENT_NAME, "application_name")
        {
            Some(v) => runtime::pyrepr::to_str(&v),
            None => default_name,
        };
        let mut wf = Dict::default();
        wf.insert(Value::str("application_name"), Value::str(&app_name));
        data.insert(Value::str(WF_MANAGEMENT_NAME), Value::dict(wf));
        let ctx = self.ctx(&data);
        let model = self.eval(&self.ui.application, &ctx)?;
        let Value::Dict(md) = &model else {
            return Err(self.ui.pos.error(
                ErrorKind::UiDefinitionError,
                "the Application section must evaluate to a mapping",
            ));
        };
        if !matches!(md.get(&Value::str("?")), Some(Value::Dict(q)) if q.contains_key(&Value::str("type")))
        {
            return Err(self.ui.pos.error(
                ErrorKind::UiDefinitionError,
                "the Application section needs `?: {type: <class>}`",
            ));
        }
        let mut model = model;
        if self.ui.version >= (UiVersion { major: 2, minor: 2 }) {
            model = set_app_name(model, &app_name);
        }
        let ids = self.host.ids.clone();
        let model = {
            let mut g = ids.lock().unwrap_or_else(|e| e.into_inner());
            insert_ids(model, &mut g)
        };
        Ok(Outcome {
            model,
            data: Value::dict(data),
            notes: self.notes,
            added: self.added,
        })
    }
}

fn v23() -> UiVersion {
    UiVersion { major: 2, minor: 3 }
}

fn has_network(v: &Value) -> bool {
    match v {
        Value::List(l) => l.iter().any(|x| !x.is_null()),
        _ => !v.is_null(),
    }
}

fn set_app_name(model: Value, name: &str) -> Value {
    let Value::Dict(ref d) = model else {
        return model;
    };
    let mut d = (**d).clone();
    let mut q = match d.get(&Value::str("?")) {
        Some(Value::Dict(q)) => (**q).clone(),
        _ => Dict::default(),
    };
    q.insert(Value::str("name"), Value::str(name));
    let mut storage = Dict::default();
    storage.insert(Value::str("name"), Value::str(name));
    q.insert(Value::str(DASHBOARD_ATTRS_KEY), Value::dict(storage));
    d.insert(Value::str("?"), Value::dict(q));
    Value::dict(d)
}

/// Gives every `?` mapping an `id` (where it has none), in document order.
pub fn insert_ids(v: Value, ids: &mut IdGen) -> Value {
    match v {
        Value::Dict(ref d) => {
            let mut out = Dict::default();
            for (k, x) in d.iter() {
                if k.as_str() == Some("?") {
                    if let Value::Dict(q) = x {
                        let mut q = (**q).clone();
                        if !q.contains_key(&Value::str("id")) {
                            q.insert(Value::str("id"), Value::str(ids.uuid()));
                        }
                        out.insert(k.clone(), Value::dict(q));
                        continue;
                    }
                }
                out.insert(k.clone(), insert_ids(x.clone(), ids));
            }
            Value::dict(out)
        }
        Value::List(ref l) => Value::list(l.iter().map(|x| insert_ids(x.clone(), ids)).collect()),
        other => other,
    }
}

/// Fills the forms and evaluates the Application section.
pub fn generate(ui: &UiDefinition, opts: &ModelOptions) -> Result<Outcome> {
    let ids = opts
        .ids
        .clone()
        .unwrap_or_else(|| Arc::new(Mutex::new(IdGen::new(&opts.package))));
    let default_name = opts
        .package
        .rsplit('.')
        .next()
        .unwrap_or(&opts.package)
        .to_string();
    let app_name = match answer_for(&opts.answers, WF_MANAGEMENT_NAME, "application_name") {
        Some(v) => runtime::pyrepr::to_str(&v),
        None => default_name,
    };
    let host = Arc::new(UiHost {
        templates: ui.templates.iter().cloned().collect(),
        app_name,
        ids,
        refs: Mutex::new(HashMap::new()),
        depth: AtomicUsize::new(0),
    });
    let h: Arc<dyn Host> = host.clone();
    let env = Env::with_host(registry(), options(), h);
    let regex_prog = compiler::compile("$v =~ $p", &registry(), COMPILE)?;
    let g = Gen {
        ui,
        opts,
        env,
        host,
        regex_prog,
        notes: Vec::new(),
        added: Vec::new(),
    };
    g.run()
}

/// The object model of a package's UI (`None` when it has no UI).
pub fn package_model(pkg: &dyn PackageFormat, opts: &ModelOptions) -> Result<Option<Outcome>> {
    let Some(text) = pkg.ui()? else {
        return Ok(None);
    };
    let file = pkg
        .base()
        .source
        .display(&format!("UI/{}", pkg.base().manifest.ui));
    let ui = UiDefinition::parse(&text, &file)?;
    generate(&ui, opts).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str, answers: Option<&str>) -> Result<Outcome> {
        let ui = UiDefinition::parse(text, "ui.yaml")?;
        let answers = match answers {
            Some(a) => {
                let docs = load_documents(a, "answers.yaml")?;
                Some(node_value(&docs[0]))
            }
            None => None,
        };
        generate(
            &ui,
            &ModelOptions {
                package: "com.example.App".into(),
                answers,
                loader: None,
                ids: None,
                nesting: 0,
            },
        )
    }

    fn json(v: &Value) -> String {
        runtime::json::to_tagged_string(v)
    }

    fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
        let mut cur = v;
        for k in path {
            cur = match cur {
                Value::Dict(d) => d.get(&Value::str(*k)).expect(k),
                Value::List(l) => &l[k.parse::<usize>().unwrap()],
                _ => panic!("no {k} in {}", json(cur)),
            };
        }
        cur
    }

    const AD: &str = r##"
Version: 2.2
Templates:
  primaryController:
    ?:
      type: com.example.PrimaryController
    host:
      ?:
        type: com.example.Host
      name: generateHostname($.appConfiguration.unitNamingPattern, 1)
      flavor: $.instanceConfiguration.flavor
      image: $.instanceConfiguration.osImage
  secondaryController:
    ?:
      type: com.example.SecondaryController
    host:
      ?:
        type: com.example.Host
      name: generateHostname($.appConfiguration.unitNamingPattern, $index + 1)
      networks:
        customNetworks: switch($.instanceConfiguration.network[0], $=null=>list(), $!=null=>$joinNet)
  joinNet:
    - ?:
        type: io.murano.resources.ExistingNeutronNetwork
      internalNetworkName: $.instanceConfiguration.network[0]
Application:
  ?:
    type: com.example.ActiveDirectory
  name: $.appConfiguration.name
  primaryController: $primaryController
  secondaryControllers: repeat($secondaryController, $.appConfiguration.dcInstances - 1)
Forms:
  - appConfiguration:
      fields:
        - name: name
          type: string
          initial: acme.local
        - name: dcInstances
          type: integer
          initial: 1
          minValue: 1
          maxValue: 5
        - name: unitNamingPattern
          type: string
          required: false
          initial: dc-#
          regexpValidator: '^[a-zA-Z][-_\w#]*$'
          errorMessages:
            invalid: Just letters
        - name: adminPassword
          type: password
      validators:
        - expr: $.appConfiguration.dcInstances < 2 or '#' in $.appConfiguration.unitNamingPattern
          message: Incrementation symbol "#" is required
  - instanceConfiguration:
      fields:
        - name: flavor
          type: flavor
          requirements:
            min_memory_mb: 4096
        - name: osImage
          type: image
          imageType: windows.2012
        - name: network
          type: network
"##;

    #[test]
    fn active_directory_defaults() {
        let out = model(AD, None).unwrap();
        let m = &out.model;
        assert_eq!(
            get(m, &["?", "type"]).as_str(),
            Some("com.example.ActiveDirectory")
        );
        assert_eq!(get(m, &["?", "name"]).as_str(), Some("App"));
        assert!(get(m, &["?", "id"]).as_str().unwrap().len() == 36);
        assert_eq!(
            get(m, &["primaryController", "host", "name"]).as_str(),
            Some("dc-1")
        );
        assert_eq!(
            get(m, &["primaryController", "host", "flavor"]).as_str(),
            Some("m1.medium")
        );
        assert_eq!(
            get(m, &["primaryController", "host", "image"]).as_str(),
            Some("ws-2012-std")
        );
        assert!(get(m, &["primaryController", "host", "?", "id"])
            .as_str()
            .is_some());
        assert_eq!(json(get(m, &["secondaryControllers"])), "[]");
        // password sample is strong
        let pw = get(&out.data, &["appConfiguration", "adminPassword"]);
        assert_eq!(pw.as_str(), Some("P@ssw0rd1"));
    }

    #[test]
    fn answers_repeat_and_index() {
        let out = model(
            AD,
            Some("appConfiguration: {dcInstances: 3}\ninstanceConfiguration: {network: [net1, sub1]}"),
        )
        .unwrap();
        let m = &out.model;
        let sc = get(m, &["secondaryControllers"]);
        assert_eq!(get(sc, &["0", "host", "name"]).as_str(), Some("dc-2"));
        assert_eq!(get(sc, &["1", "host", "name"]).as_str(), Some("dc-3"));
        assert_eq!(
            get(
                sc,
                &[
                    "1",
                    "host",
                    "networks",
                    "customNetworks",
                    "0",
                    "internalNetworkName"
                ]
            )
            .as_str(),
            Some("net1")
        );
        let a = get(sc, &["0", "?", "id"]).as_str().unwrap();
        let b = get(sc, &["1", "?", "id"]).as_str().unwrap();
        assert_ne!(a, b);
        // deterministic
        let again = model(
            AD,
            Some("appConfiguration: {dcInstances: 3}\ninstanceConfiguration: {network: [net1, sub1]}"),
        )
        .unwrap();
        assert_eq!(json(&again.model), json(&out.model));
    }

    #[test]
    fn answer_validation() {
        let e = model(AD, Some("appConfiguration: {dcInstances: 9}"))
            .err()
            .unwrap();
        assert!(
            e.message().contains("less than or equal to 5"),
            "{}",
            e.message()
        );
        assert!(e.message().starts_with("ui.yaml:"), "{}", e.message());
        let e = model(AD, Some("appConfiguration: {unitNamingPattern: '9x'}"))
            .err()
            .unwrap();
        assert!(e.message().contains("Just letters"), "{}", e.message());
        let e = model(AD, Some("appConfiguration: {adminPassword: weak}"))
            .err()
            .unwrap();
        assert!(e.message().contains("password"), "{}", e.message());
        let e = model(
            AD,
            Some("appConfiguration: {dcInstances: 2, unitNamingPattern: dc}"),
        )
        .err()
        .unwrap();
        assert!(e.message().contains("Incrementation"), "{}", e.message());
        let e = model(AD, Some("nosuchForm: {a: 1}")).err().unwrap();
        assert!(
            e.message().contains("no form nosuchForm"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn malformed_definitions() {
        let cases = [
            // murano-dashboard's `check_version`: only the 2.x family, up to
            // the latest; no `Version` is 1.
            ("Version: 3.0\nApplication: {}\n", "not compatible with the supported family 2"),
            ("Version: 1.0\nApplication: {}\n", "requested format version 1.0 is not compatible"),
            ("Application: {}\n", "requested format version 1.0 is not compatible"),
            ("Version: 2.9\nApplication: {}\n", "is newer than latest supported 2.3"),
            ("Version: x\nApplication: {}\n", "malformed Version"),
            ("Version: 2\nForms: []\n", "Application section is required"),
            (
                "Version: 2.2\nApplication:\n  ?: {type: A}\nForms:\n  - f:\n      fields:\n        - type: string\n",
                "needs a `name`",
            ),
            ("Version: 2.2\nApplication:\n  ?: {type: A}\nForms: {a: 1}\n", "Forms must be a list"),
            ("Version: 2.2\nApplication: [1]\n", "Application must be a mapping"),
            ("a: [\n", "ui.yaml:"),
        ];
        for (text, want) in cases {
            let e = UiDefinition::parse(text, "ui.yaml")
                .err()
                .unwrap_or_else(|| panic!("{text}"));
            assert!(e.message().contains(want), "{text}: {}", e.message());
            assert!(e.message().starts_with("ui.yaml:"), "{}", e.message());
        }
    }

    #[test]
    fn bad_yaql_has_position() {
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $.f.a.nosuchfunc()\nForms:\n  - f:\n      fields:\n        - name: a\n          type: string\n          initial: q\n";
        let e = model(text, None).err().unwrap();
        assert!(e.message().starts_with("ui.yaml:4:"), "{}", e.message());
    }

    #[test]
    fn hostnames_names_and_refs() {
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  h: generateHostname('', 1)\n  c: name()\n  r: ref(t, null, true)\n  r2: ref(t, null, true)\nTemplates:\n  t:\n    ?: {type: B}\n";
        let out = model(text, None).unwrap();
        let h = get(&out.model, &["h"]).as_str().unwrap();
        assert!(h.chars().next().unwrap().is_ascii_lowercase() && h.len() > 5);
        assert_eq!(get(&out.model, &["c"]).as_str(), Some("App"));
        assert_eq!(
            json(get(&out.model, &["r"])),
            json(get(&out.model, &["r2"]))
        );
    }

    #[test]
    fn choices_and_types() {
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  p: $.f.probe\n  d: $.f.dbs\n  b: $.f.flag\nForms:\n  - f:\n      fields:\n        - name: probe\n          type: choice\n          choices:\n            - [HTTP, 'Http']\n            - [ICMP, 'Icmp']\n        - name: dbs\n          type: databaselist\n          initial: 'a, b'\n        - name: flag\n          type: boolean\n";
        let out = model(text, None).unwrap();
        assert_eq!(get(&out.model, &["p"]).as_str(), Some("HTTP"));
        assert_eq!(json(get(&out.model, &["d"])), r#"["a", "b"]"#);
        assert_eq!(json(get(&out.model, &["b"])), "false");
        let e = model(text, Some("f: {probe: FTP}")).err().unwrap();
        assert!(e.message().contains("valid choice"), "{}", e.message());
        let out = model(text, Some("f.probe: ICMP")).unwrap();
        assert_eq!(get(&out.model, &["p"]).as_str(), Some("ICMP"));
    }

    #[test]
    fn broken_yaql_is_an_error() {
        for bad in ["$.f.a +", "generateHostname($.x, 1", "$.f.b.foo("] {
            let text = format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  x: {bad}\n");
            let e = UiDefinition::parse(&text, "ui.yaml").err().unwrap();
            assert!(e.message().starts_with("ui.yaml:4:6:"), "{}", e.message());
        }
        // ordinary strings stay strings
        UiDefinition::parse(
            "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: Apache License (2.0)\n  y: kube-#\n",
            "ui.yaml",
        )
        .unwrap();
    }

    /// murano-dashboard's leniency (muranodashboard/dynamic_ui/forms.py and
    /// fields.py): a second field of a name replaces the first, a type it
    /// does not know is a choice of applications of that type, and
    /// `errorMessages.required` is the message for a missing answer.
    #[test]
    fn dashboard_leniency() {
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $.f.a\nForms:\n  - f:\n      fields:\n        - name: a\n          type: integer\n        - name: db\n          type: com.example.Db\n          required: false\n        - name: a\n          type: string\n          errorMessages:\n            required: Say something\n";
        let ui = UiDefinition::parse(text, "ui.yaml").unwrap();
        let fields = &ui.forms[0].fields;
        assert_eq!(fields.len(), 2);
        assert_eq!(
            (fields[0].name.as_str(), fields[0].ty.clone()),
            ("a", FieldType::String)
        );
        assert_eq!(fields[1].ty, FieldType::App(vec!["com.example.Db".into()]));
        let e = model(text, Some("f: {a: ''}")).err().unwrap();
        assert!(e.message().contains("Say something"), "{}", e.message());
        // A known flavor below the requirements is not a choice.
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  f: $.f.fl\nForms:\n  - f:\n      fields:\n        - name: fl\n          type: flavor\n          requirements: {min_vcpus: 2}\n";
        assert_eq!(
            get(&model(text, None).unwrap().model, &["f"]).as_str(),
            Some("m1.medium")
        );
        let e = model(text, Some("f: {fl: m1.small}")).err().unwrap();
        assert!(
            e.message().contains("not one of the available choices"),
            "{}",
            e.message()
        );
        assert!(model(text, Some("f: {fl: m1.large}")).is_ok());
        // A password's confirmation is its `-clone` field.
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  p: $.f.pw\nForms:\n  - f:\n      fields:\n        - name: pw\n          type: password\n";
        let out = model(text, Some("f: {pw: 'Secret#1', pw-clone: 'Secret#1'}")).unwrap();
        assert_eq!(get(&out.model, &["p"]).as_str(), Some("Secret#1"));
        let e = model(text, Some("f: {pw: 'Secret#1', pw-clone: 'Other#12'}"))
            .err()
            .unwrap();
        assert!(
            e.message().contains("Passwords do not match"),
            "{}",
            e.message()
        );
    }

    /// Image and network fields offer what murano-dashboard lists
    /// (muranodashboard/dynamic_ui/fields.py `ImageChoiceField.update`,
    /// muranodashboard/common/net.py `get_available_networks`).
    #[test]
    fn images_and_networks_are_the_offered_ones() {
        let image = |ty: &str| {
            format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  i: $.f.im\nForms:\n  - f:\n      fields:\n        - name: im\n          type: image\n          imageType: {ty}\n")
        };
        let sample = |text: &str| {
            get(&model(text, None).unwrap().model, &["i"])
                .as_str()
                .map(str::to_string)
        };
        assert_eq!(sample(&image("linux")).as_deref(), Some("ubuntu16.04-x64"));
        assert_eq!(
            sample(&image("linux.docker")).as_deref(),
            Some("ubuntu16.04-x64-docker")
        );
        assert_eq!(sample(&image("windows")).as_deref(), Some("ws-2012-std"));
        // A subtype is offered for its type, not the other way round.
        assert!(model(&image("linux"), Some("f: {im: ubuntu16.04-x64-kubernetes}")).is_ok());
        let e = model(&image("linux.docker"), Some("f: {im: ubuntu16.04-x64}"))
            .err()
            .unwrap();
        assert!(
            e.message().contains("not one of the available choices"),
            "{}",
            e.message()
        );
        let e = model(&image("windows"), Some("f: {im: ubuntu16.04-x64}"))
            .err()
            .unwrap();
        assert!(e.message().contains("ubuntu16.04-x64"), "{}", e.message());
        // An image of another cloud is the user's to name.
        assert!(model(&image("linux"), Some("f: {im: my-own-image}")).is_ok());
        // No image of the type: nothing to choose, and the note says why.
        let e = model(&image("linux.centos"), None).err().unwrap();
        assert!(
            e.message().contains("no image of type linux.centos"),
            "{}",
            e.message()
        );

        let net = |extra: &str| {
            format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  n: $.f.net\nForms:\n  - f:\n      fields:\n        - name: net\n          type: network\n          allow_auto: false\n{extra}")
        };
        let pair = |text: &str, answers: Option<&str>| {
            model(text, answers).map(|o| json(get(&o.model, &["n"])))
        };
        assert_eq!(
            pair(&net(""), None).unwrap(),
            r#"["private-net", "private-subnet"]"#
        );
        let no_subnets = net("          include_subnets: false\n");
        assert_eq!(pair(&no_subnets, None).unwrap(), r#"["private-net", null]"#);
        // External networks are never offered; a filter matches from the start.
        let e = pair(&net(""), Some("f: {net: [public, public-subnet]}")).unwrap_err();
        assert!(
            e.message().contains("not one of the available choices"),
            "{}",
            e.message()
        );
        let filtered = net("          filter: net\n");
        assert!(pair(&filtered, None)
            .unwrap_err()
            .message()
            .contains("no network"));
        assert!(pair(&net("          filter: priv\n"), None).is_ok());
        assert!(pair(&no_subnets, Some("f: {net: [private-net, private-subnet]}")).is_err());
        let bad = net("          murano_networks: keep\n");
        assert!(UiDefinition::parse(&bad, "ui.yaml").is_err());
    }

    #[test]
    fn a_huge_repeat_is_an_error_not_an_abort() {
        // Fuzzing (ui target): `repeat(x)` without a count repeats without
        // end, as yaql's does; the list it made grew to 2 GiB before the
        // process was killed. It now stops at the iterator limit.
        let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: repeat($nosuch)\nTemplates:\n  t: {y: 1}\n";
        let e = model(text, None).err().unwrap();
        assert_eq!(e.kind(), "CollectionTooLargeException", "{}", e.message());
    }

    #[test]
    fn self_referencing_template_is_an_error() {
        let text =
            "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $t\nTemplates:\n  t:\n    y: $t\n";
        let e = model(text, None).err().unwrap();
        assert!(e.message().contains("nest too deeply"), "{}", e.message());
    }
}

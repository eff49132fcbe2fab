//! The parsed form of a UI definition: versions, field types,
//! validators, fields and forms (their templates are [`Tpl`]s).

use compiler::murano::Pos;
use runtime::{Dict, Value};

use super::host::Tpl;

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
    pub(super) fn from_name(name: &str) -> Option<FieldType> {
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

impl UiDefinition {
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

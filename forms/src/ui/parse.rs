//! Reading a UI definition from YAML: the document, its forms and their
//! fields, each malformed part an error at its position.

use compiler::murano::{load_documents, Node, NodeKind, Pos};
use runtime::{Dict, ErrorKind, Result, Value};

use package::node_value;

use super::common::{ui_error, LATEST_VERSION};
use super::definition::{Check, Field, FieldType, Form, UiDefinition, UiVersion, Validator};
use super::host::Tpl;

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
    let name = field_name(n)?;
    let ty = field_type(n, &name)?;
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
    let (invalid_msg, required_msg) = error_messages(n)?;
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
    let choices = match n.get("choices") {
        Some(c) => parse_choices(c)?,
        None => Vec::new(),
    };
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
    let requirements = field_requirements(n)?;
    let allow_auto = flag(n, "allow_auto");
    let confirm_input = flag(n, "confirmInput");
    let include_subnets = flag(n, "include_subnets");
    let network_filter = n
        .get("filter")
        .and_then(|f| f.as_scalar())
        .map(str::to_string);
    check_murano_networks(n, &name)?;
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

/// A field's `name`: a non-empty scalar.
fn field_name(n: &Node) -> Result<String> {
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
    Ok(name)
}

/// A field's `type`: a known type name, or one or more application
/// types.
fn field_type(n: &Node, name: &str) -> Result<FieldType> {
    let Some(type_n) = n.get("type") else {
        return Err(n.pos.error(
            ErrorKind::UiDefinitionError,
            format!("field {name} needs a `type`"),
        ));
    };
    Ok(match &type_n.kind {
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
    })
}

/// A field's `errorMessages`: (`invalid`, `required`).
fn error_messages(n: &Node) -> Result<(Option<String>, Option<String>)> {
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
    Ok((invalid_msg, required_msg))
}

/// A label given as data (a non-string in its Python text).
fn choice_label(label: Value) -> String {
    label
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| runtime::pyrepr::to_str(&label))
}

/// A field's `choices`: `[value, label]` pairs, scalars, or a mapping of
/// values to labels.
fn parse_choices(c: &Node) -> Result<Vec<(Value, String)>> {
    let mut choices = Vec::new();
    match &c.kind {
        NodeKind::Seq(items) => {
            for it in items {
                match &it.kind {
                    NodeKind::Seq(pair) if pair.len() == 2 => {
                        choices.push((node_value(&pair[0]), choice_label(node_value(&pair[1]))));
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
                choices.push((node_value(k), choice_label(node_value(v))));
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
    Ok(choices)
}

/// A flavor field's `requirements` mapping.
fn field_requirements(n: &Node) -> Result<Dict> {
    Ok(match n.get("requirements") {
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
    })
}

/// A flag that is on unless it is `false`.
fn flag(n: &Node, key: &str) -> bool {
    !matches!(n.get(key).map(node_value), Some(Value::Bool(false)))
}

/// NetworkChoiceField refuses any other `murano_networks` than `exclude`
/// or `translate`.
fn check_murano_networks(n: &Node, name: &str) -> Result<()> {
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
    Ok(())
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
}

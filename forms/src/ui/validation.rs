//! Cleaning and validating field values as the dashboard's fields do.

use std::sync::Arc;

use compiler::murano::Pos;
use runtime::ctx::Frame;
use runtime::{ErrorKind, Result, Value};

use crate::cloud::{self, FLAVORS, IMAGES};

use super::definition::{Check, Field, FieldType, UiVersion, Validator};
use super::model::Gen;

pub(super) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Dict(d) => d.is_empty(),
        _ => false,
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
impl Gen<'_> {
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
    pub(super) fn network_choices(
        &self,
        field: &Field,
    ) -> Result<Vec<(&'static str, Option<&'static str>)>> {
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
    pub(super) fn coerce(&self, field: &Field, v: Value) -> std::result::Result<Value, String> {
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
    pub(super) fn validate(
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
}

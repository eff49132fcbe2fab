//! `murano_validate(class, json)`: the contract violations of one object
//! model, as `validate` finds them, as a list of `{path, property,
//! message}` structs (empty when the model is valid).
//!
//! Each row is a model of its own (`{"Objects": ...}` or a bare object),
//! validated as in an execution of its own: rows never see each other's
//! objects, so the result of a row does not depend on how the rows are
//! split into batches, partitions or executors. A row whose contracts read
//! values only is checked without loading its objects
//! ([`engine::stream::Models`], which gives what the load gives); any
//! other row is loaded.
//!
//! `class` is the class the root object must be: a root without a type
//! in its `?` header is taken to be one, and a root of another class (not
//! `class` nor a subclass of it) is one violation at `$`. A NULL class
//! takes the model's own types; a NULL model is a NULL result. A model
//! that cannot be validated at all (malformed JSON, an unknown class, a
//! load error) is one violation at `$` with a NULL property and the
//! error as its message, so one bad row does not stop a scan over
//! millions.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, ListBuilder, StringBuilder, StructBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use engine::stream::Models;
use muranopl::{sorted_violations, Violation};
use runtime::Value;

use crate::strings::{strings, StrColumn};
use crate::Catalog;

/// `murano_validate` over one catalogue (without one, every call is an
/// error that says so).
pub struct Validate {
    signature: Signature,
    catalog: Option<Catalog>,
}

impl std::fmt::Debug for Validate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validate")
    }
}

// One function per process: resolved by name on every node, whatever
// catalogue each node loaded.
impl PartialEq for Validate {
    fn eq(&self, _: &Validate) -> bool {
        true
    }
}
impl Eq for Validate {}
impl std::hash::Hash for Validate {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        "murano_validate".hash(h)
    }
}

/// The fields of one violation.
pub fn violation_fields() -> Fields {
    Fields::from(vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("property", DataType::Utf8, true),
        Field::new("message", DataType::Utf8, false),
    ])
}

impl Validate {
    /// The function as DataFusion registers it.
    pub fn udf(catalog: Option<Catalog>) -> ScalarUDF {
        ScalarUDF::new_from_impl(Validate {
            signature: Signature::exact(
                vec![DataType::Utf8, DataType::Utf8],
                Volatility::Immutable,
            ),
            catalog,
        })
    }

    /// The violations of one model, sorted as `validate` sorts them;
    /// `models` checks it without loading it when it can.
    fn violations(
        catalog: &Catalog,
        models: &mut Models<'_>,
        class: Option<&str>,
        doc: &str,
    ) -> Vec<Violation> {
        let model = match runtime::json::from_tagged_str(doc) {
            Ok(m) => m,
            Err(e) => return vec![whole(format!("the model is not JSON: {}", e.message()))],
        };
        let model = match class {
            Some(c) => match expect_class(catalog, model, c) {
                Ok(m) => m,
                Err(v) => return vec![v],
            },
            None => model,
        };
        let v = models
            .validate(&model)
            .unwrap_or_else(|| catalog.catalogue().validate(&model));
        let mut out = sorted_violations(v.violations);
        for x in &mut out {
            x.message = catalog.relative(std::mem::take(&mut x.message));
        }
        if let Some(e) = v.error {
            out.push(whole(format!("{}: {}", e.kind(), e.message())));
        }
        out
    }

    fn column(catalog: &Catalog, classes: &StrColumn, docs: &StrColumn, rows: usize) -> ArrayRef {
        let mut out = ListBuilder::new(StructBuilder::from_fields(violation_fields(), 0));
        let mut models = Models::new(catalog.catalogue().catalog());
        for i in 0..rows {
            let Some(doc) = docs.get(i) else {
                out.append_null();
                continue;
            };
            for v in Validate::violations(catalog, &mut models, classes.get(i), doc) {
                let s = out.values();
                string_field(s, 0).append_value(&v.path);
                match v.property.is_empty() {
                    true => string_field(s, 1).append_null(),
                    false => string_field(s, 1).append_value(&v.property),
                }
                string_field(s, 2).append_value(&v.message);
                s.append(true);
            }
            out.append(true);
        }
        Arc::new(out.finish())
    }
}

/// The model with its root object typed `class` when its header names
/// no type; a violation when it names a class that is not a `class`.
fn expect_class(catalog: &Catalog, model: Value, class: &str) -> Result<Value, Violation> {
    let objects = Value::str("Objects");
    let header = Value::str("?");
    let ty = Value::str("type");
    let root = match &model {
        Value::Dict(d) => d.get(&objects).unwrap_or(&model),
        _ => return Ok(model),
    };
    let Value::Dict(obj) = root else {
        return Ok(model);
    };
    let head = match obj.get(&header) {
        Some(Value::Dict(h)) => Some(h),
        _ => None,
    };
    if let Some(name) = head.and_then(|h| h.get(&ty)).and_then(|t| t.as_str()) {
        let catalog = catalog.catalogue().catalog();
        return match catalog.class(name) {
            Ok(c) if c.is_a(class) => Ok(model),
            Ok(_) => Err(whole(format!("the object is a {name}, not a {class}"))),
            Err(e) => Err(whole(format!("{}: {}", e.kind(), e.message()))),
        };
    }
    // Typed `class`: a copy of the header, the object and (when the model
    // is `{"Objects": ...}`) the model, with everything else kept.
    let mut head = head.map(|h| (**h).clone()).unwrap_or_default();
    head.insert(ty, Value::str(class));
    let mut typed = (**obj).clone();
    typed.insert(header, Value::dict(head));
    let typed = Value::dict(typed);
    Ok(match &model {
        Value::Dict(d) if d.contains_key(&objects) => {
            let mut m = (**d).clone();
            m.insert(objects, typed);
            Value::dict(m)
        }
        _ => typed,
    })
}

fn string_field(s: &mut StructBuilder, i: usize) -> &mut StringBuilder {
    s.field_builder::<StringBuilder>(i)
        .expect("violation fields are strings")
}

/// A violation of the whole model (at `$`, no property).
fn whole(message: String) -> Violation {
    Violation {
        path: "$".into(),
        property: String::new(),
        message,
        position: None,
    }
}

impl ScalarUDFImpl for Validate {
    fn name(&self) -> &str {
        "murano_validate"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::new_list(
            DataType::Struct(violation_fields()),
            true,
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let Some(catalog) = &self.catalog else {
            return exec_err!(
                "murano_validate: no catalogue is loaded (muranopl batch --catalog PACKAGE_OR_ARTIFACT)"
            );
        };
        let cols = strings("murano_validate", &args.args, rows)?;
        let out = vm::coro::on_big_stack(|| Validate::column(catalog, &cols[0], &cols[1], rows));
        debug_assert_eq!(out.len(), rows);
        Ok(ColumnarValue::Array(out))
    }
}

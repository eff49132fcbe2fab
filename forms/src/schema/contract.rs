//! Contracts to JSON Schema, read from the contract IR
//! ([`compiler::murano::ir::Contract`]) as murano's contracts'
//! `generate_schema` build it: lists become `array` schemas (their length
//! bounds dropped), dicts `object` schemas (a key contract gives
//! `additionalProperties`), and a chain of contract methods on `$`
//! (`string`, `int`, `bool`, `notNull`, `check`, `class`, `template`,
//! `owned`, `notOwned`) builds the schema link by link from `{}`. A
//! `check()` predicate's conjuncts that are comparisons, memberships or
//! regular-expression matches (the IR's [`Predicate`]) become
//! `minimum`/`maximum`, `enum` and `pattern`; their operands are evaluated
//! in the class's static context.

use runtime::ErrorKind;
use std::sync::Arc;

use compiler::murano::ir::{
    self, CmpOp, ContractKind, DictKey, Link, LinkKind, Operand, OperandForm, Predicate, Subject,
};
use compiler::murano::{LoadOptions, Template};
use compiler::CompileOptions;
use runtime::{Dict, Error, Result, Value};

use engine::Class;

use super::{dict_of, key, no_schema, truthy, type_value, Dialect, Gen};

/// The schema's marker of a `notNull()` seen, removed when the schema is
/// done (`#finalize` of murano's schema context).
const NOT_NULL: &str = "_notNull";

/// Where a contract's names and constants are read.
struct ExprCx<'s> {
    /// The text of the expression the operands are parts of.
    src: &'s str,
    legacy: bool,
    /// The class whose namespaces and static context the contract's names
    /// and constants are resolved in.
    scope: &'s Arc<Class>,
}

impl Gen<'_> {
    /// A property's or argument's schema: must be a dict.
    pub(super) fn translate_top(&self, t: &Template, owner: &Arc<Class>) -> Result<Dict> {
        let legacy = owner.package.legacy;
        let c = ir::lower_contract(t, LoadOptions { legacy })?;
        match self.translate(&c, owner)? {
            Value::Dict(ref d) => Ok((**d).clone()),
            _ => Err(no_schema(format!(
                "{}: the contract does not translate to a schema",
                t.pos
            ))),
        }
    }

    /// `translate`: a contract of class `owner` to its schema.
    fn translate(&self, c: &ir::Contract, owner: &Arc<Class>) -> Result<Value> {
        Ok(match &c.kind {
            ContractKind::Dict(items) => {
                let mut props = Dict::default();
                let mut additional = Value::Bool(false);
                for (k, v) in items {
                    match k {
                        DictKey::Const(kv) => {
                            let tv = self.translate(v, owner)?;
                            props.insert(kv.clone(), tv);
                        }
                        DictKey::Contract(k)
                            if matches!(
                                k.kind,
                                ContractKind::List { .. } | ContractKind::Dict(_)
                            ) =>
                        {
                            return Err(no_schema("unhashable dict contract key"))
                        }
                        DictKey::Contract(_) => additional = self.translate(v, owner)?,
                    }
                }
                Value::dict(dict_of(vec![
                    ("type", Value::str("object")),
                    ("properties", Value::dict(props)),
                    ("additionalProperties", additional),
                ]))
            }
            ContractKind::List { items, .. } => {
                let mut out = Vec::new();
                for it in items {
                    // murano drops every integer of a list spec, not only
                    // its trailing length bounds.
                    if matches!(it.kind, ContractKind::Const(Value::Int(_) | Value::Bool(_))) {
                        continue;
                    }
                    out.push(self.translate(it, owner)?);
                }
                let mut d = dict_of(vec![("type", Value::str("array"))]);
                match out.len() {
                    0 => {}
                    1 => {
                        d.insert(key("items"), out.pop().unwrap_or(Value::Null));
                    }
                    _ => {
                        let last = out.last().cloned().unwrap_or(Value::Null);
                        d.insert(key("items"), Value::list(out));
                        d.insert(key("additionalItems"), last);
                    }
                }
                Value::dict(d)
            }
            ContractKind::Any => Value::dict(Dict::default()),
            ContractKind::Null | ContractKind::Const(_) => Value::Null,
            ContractKind::Chain { expr, links } => {
                let cx = self.expr_cx(&expr.src, owner);
                let mut d = Dict::default();
                for l in links {
                    d = self.link(&cx, d, l)?;
                }
                finalize(Value::dict(d))
            }
            ContractKind::Expr(y) => {
                return Err(no_schema(format!(
                    "unsupported contract expression `{}`",
                    y.src
                )))
            }
            ContractKind::Static(y) => {
                let cx = self.expr_cx(&y.src, owner);
                finalize(self.eval_plain(&cx, &y.src)?)
            }
        })
    }

    fn expr_cx<'s>(&'s self, src: &'s str, owner: &'s Arc<Class>) -> ExprCx<'s> {
        let scope = match self.dialect {
            Dialect::Reference => &self.cls,
            Dialect::Spec => owner,
        };
        ExprCx {
            src,
            legacy: owner.package.legacy,
            scope,
        }
    }

    /// The schema `d` built so far with link `l` applied.
    fn link(&self, cx: &ExprCx, mut d: Dict, l: &Link) -> Result<Dict> {
        let not_null = d.get(&key(NOT_NULL)).is_some();
        match &l.kind {
            LinkKind::String | LinkKind::Int | LinkKind::Bool => {
                let base = match l.kind {
                    LinkKind::String => "string",
                    LinkKind::Int => "integer",
                    _ => "boolean",
                };
                Ok(dict_of(vec![("type", type_value(base, not_null))]))
            }
            LinkKind::NotNull => {
                if let Some(Value::List(ref types)) = d.get(&key("type")).cloned() {
                    let mut ts: Vec<Value> = (**types).clone();
                    if let Some(i) = ts.iter().position(|t| t.as_str() == Some("null")) {
                        ts.remove(i);
                        let nt = if ts.len() == 1 {
                            ts.pop().unwrap_or(Value::Null)
                        } else {
                            Value::list(ts)
                        };
                        d.insert(key("type"), nt);
                    }
                }
                d.insert(key(NOT_NULL), Value::Bool(true));
                Ok(d)
            }
            LinkKind::Owned | LinkKind::NotOwned => {
                d.insert(key("owned"), Value::Bool(l.kind == LinkKind::Owned));
                Ok(d)
            }
            LinkKind::Check { shape, .. } => {
                for this in self.conjuncts(shape) {
                    if let Some((path, res)) = self.extract_pattern(cx, this, &d) {
                        d = constrain(d, &path, res);
                    }
                }
                Ok(d)
            }
            LinkKind::Class {
                name,
                default,
                version,
            } => self.object_schema(cx, "class", not_null, name, default, version),
            LinkKind::Template {
                name,
                exclude,
                default_type,
                version,
            } => {
                let mut out =
                    self.object_schema(cx, "template", not_null, name, default_type, version)?;
                out.insert(key("owned"), Value::Bool(true));
                if let Some(ep) = exclude {
                    let v = match ep.literal() {
                        Some(v) => v.clone(),
                        None => self.eval_plain(cx, ep.text(cx.src))?,
                    };
                    if truthy(&v) {
                        out.insert(key("excludedProperties"), v);
                    }
                }
                Ok(out)
            }
            LinkKind::Call { .. } => Err(no_schema(format!(
                "unsupported contract expression `{}`",
                l.text(cx.src)
            ))),
        }
    }

    /// The schema of `class()` or `template()` (`method`) of type `name`.
    fn object_schema(
        &self,
        cx: &ExprCx,
        method: &str,
        not_null: bool,
        name: &Operand,
        default: &Option<Operand>,
        version: &Option<Operand>,
    ) -> Result<Dict> {
        let ty = self.type_arg(cx, name)?.ok_or_else(|| {
            Error::new(
                ErrorKind::ValueError,
                format!("{method}(): the type must not be null"),
            )
        })?;
        if let Some(dt) = default {
            self.type_arg(cx, dt)?;
        }
        let mut out = dict_of(vec![
            ("type", type_value("muranoObject", not_null)),
            ("muranoType", Value::str(&ty)),
        ]);
        if self.dialect == Dialect::Spec {
            let given = version.as_ref().and_then(|e| self.constant(cx, e));
            let version = match given {
                Some(v) => v,
                None => Value::str(self.version_of(cx, &ty)?),
            };
            out.insert(key("version"), version);
        }
        Ok(out)
    }

    /// A type argument of `class()`/`template()`: resolved in the names
    /// scope of `cx`.
    fn type_arg(&self, cx: &ExprCx, e: &Operand) -> Result<Option<String>> {
        let name = match &e.form {
            OperandForm::Literal(Value::Str(s)) => s.to_string(),
            OperandForm::Literal(Value::Null) => return Ok(None),
            OperandForm::NsName(n) => n.clone(),
            OperandForm::Literal(_) | OperandForm::Static | OperandForm::Dynamic => {
                match self.eval_plain(cx, e.text(cx.src))? {
                    Value::Null => return Ok(None),
                    Value::Str(ref s) => s.to_string(),
                    Value::Type(ref t) => {
                        return Ok(Some(self.ex.class(&t.name)?.name.to_string()))
                    }
                    Value::Object(ref o) => return Ok(Some(self.ex.class_of(o)?.name.to_string())),
                    _ => return Err(no_schema("bad type argument")),
                }
            }
        };
        let full = cx.scope.decl.resolve_name(&name)?;
        Ok(Some(self.ex.class(&full)?.name.to_string()))
    }

    /// The parts of a `check()` predicate `A and B and ...` tried as
    /// patterns. murano's loop splits off the right operand only: `and`
    /// is left-associative, so of `A and B and C` it tries `A and B` (no
    /// pattern) and `C`. The spec splits at every `and`.
    fn conjuncts<'p>(&self, pred: &'p Predicate) -> Vec<&'p Predicate> {
        let mut out = Vec::new();
        let mut p = pred;
        while let Predicate::And(l, r) = p {
            match self.dialect {
                Dialect::Reference => out.push(&**l),
                Dialect::Spec => out.extend(self.conjuncts(l)),
            }
            p = r;
        }
        out.push(p);
        out
    }

    /// The subjects a dialect constrains: `$` itself in murano's; in the
    /// spec, property paths under it and lengths too.
    fn subject_ok(&self, s: &Subject) -> bool {
        self.dialect == Dialect::Spec || s.is_value()
    }

    /// `extract_pattern` of a `check()` conjunct: the schema keys it gives
    /// and the property path under `$` they constrain (empty: the value
    /// itself).
    fn extract_pattern(
        &self,
        cx: &ExprCx,
        p: &Predicate,
        schema: &Dict,
    ) -> Option<(Vec<String>, Vec<(Value, Value)>)> {
        match p {
            Predicate::Compare {
                subject,
                op,
                bound,
                subject_left,
            } if self.subject_ok(subject) => {
                let c = self.constant(cx, bound)?;
                // murano indexes its operator tuple `(>, <, >=, <=)` with
                // `-1 - i` when `$` is on the right: `>` becomes `<=`.
                let op = match (subject_left, op) {
                    (true, op) => *op,
                    (false, CmpOp::Gt) => CmpOp::Le,
                    (false, CmpOp::Lt) => CmpOp::Ge,
                    (false, CmpOp::Ge) => CmpOp::Lt,
                    (false, CmpOp::Le) => CmpOp::Gt,
                };
                if subject.len {
                    return Some((subject.path.clone(), length_bound(op, &c, schema)?));
                }
                let (k, x, excl) = match op {
                    CmpOp::Gt => ("minimum", "exclusiveMinimum", true),
                    CmpOp::Ge => ("minimum", "exclusiveMinimum", false),
                    CmpOp::Lt => ("maximum", "exclusiveMaximum", true),
                    CmpOp::Le => ("maximum", "exclusiveMaximum", false),
                };
                Some((
                    subject.path.clone(),
                    vec![(key(k), c), (key(x), Value::Bool(excl))],
                ))
            }
            Predicate::In { subject, set } if self.subject_ok(subject) => {
                match self.constant(cx, set)? {
                    v @ Value::List(_) => Some((subject.path.clone(), vec![(key("enum"), v)])),
                    _ => None,
                }
            }
            Predicate::Matches { subject, pattern } if self.subject_ok(subject) => {
                let c = self.constant(cx, pattern)?;
                Some((subject.path.clone(), vec![(key("pattern"), c)]))
            }
            _ => None,
        }
    }

    /// `evaluate_constant`: a literal, or the operand's value in the
    /// class's static context when it does not use `$`; `None` otherwise
    /// (and for null).
    fn constant(&self, cx: &ExprCx, e: &Operand) -> Option<Value> {
        let v = match &e.form {
            OperandForm::Literal(v) => v.clone(),
            OperandForm::Dynamic => return None,
            OperandForm::NsName(_) | OperandForm::Static => {
                self.eval_plain(cx, e.text(cx.src)).ok()?
            }
        };
        if v.is_null() {
            None
        } else {
            Some(v)
        }
    }

    /// The version spec the class `ty` named in a contract of `cx.scope`
    /// is found with: what the declaring package's manifest requires of the
    /// type's package, or the exact version of the package the type is in.
    fn version_of(&self, cx: &ExprCx, ty: &str) -> Result<String> {
        let from = &cx.scope.package;
        let cls = self.ex.class_from(ty, Some(from))?;
        let pkg = &cls.package;
        if pkg.name != from.name {
            if let Some((_, spec)) = from.requires.iter().find(|(n, _)| **n == *pkg.name) {
                let text = spec.text.trim();
                return Ok(if text.is_empty() {
                    spec.to_string()
                } else {
                    text.to_string()
                });
            }
        }
        Ok(format!("={}", pkg.version))
    }

    /// Evaluates expression text `src` with the engine in the static
    /// context of `cx.scope`.
    fn eval_plain(&self, cx: &ExprCx, src: &str) -> Result<Value> {
        let reg = engine::murano_registry(cx.legacy);
        let prog = compiler::compile(
            src,
            &reg,
            CompileOptions {
                legacy: cx.legacy,
                murano: true,
            },
        )?;
        let env = self.ex.env(cx.legacy);
        let scope = cx.scope;
        let ctx = self
            .ex
            .class_ctx(scope, Value::Type(scope.type_ref.clone()));
        let prev = self.ex.set_caller(Some(scope.key.clone()));
        let r = prog.eval_in(env, &ctx);
        self.ex.set_caller(prev);
        match r? {
            v @ Value::Iter(_) => Ok(v),
            v => stdlib::finalize(env, v),
        }
    }
}

/// `#finalize` of the schema context: the `notNull()` marker removed.
fn finalize(v: Value) -> Value {
    match &v {
        Value::Dict(d) if d.get(&key(NOT_NULL)).is_some() => {
            let mut d2 = (**d).clone();
            d2.shift_remove(&key(NOT_NULL));
            Value::dict(d2)
        }
        _ => v,
    }
}

/// `schema` with a `check()` pattern's keys `res` set on the property at
/// `path` (empty: the value itself); a path constrains only a
/// `muranoObject`, in its `context`.
fn constrain(mut schema: Dict, path: &[String], res: Vec<(Value, Value)>) -> Dict {
    if path.is_empty() {
        for (k, v) in res {
            schema.insert(k, v);
        }
    } else if is_object_schema(&schema) {
        let ctx = match schema.get(&key("context")) {
            Some(Value::Dict(c)) => (**c).clone(),
            _ => Dict::default(),
        };
        schema.insert(key("context"), Value::dict(at_path(ctx, path, res)));
    }
    schema
}

/// `minLength`/`maxLength` (`minItems`/`maxItems` for an array schema)
/// for a length compared with an integer.
fn length_bound(op: CmpOp, c: &Value, schema: &Dict) -> Option<Vec<(Value, Value)>> {
    let Value::Int(n) = c else { return None };
    let array = match schema.get(&key("type")) {
        Some(Value::Str(t)) => &**t == "array",
        Some(Value::List(ts)) => ts.iter().any(|t| t.as_str() == Some("array")),
        _ => false,
    };
    let (min, max) = if array {
        ("minItems", "maxItems")
    } else {
        ("minLength", "maxLength")
    };
    let (k, v) = match op {
        CmpOp::Gt => (min, n.checked_add(1)?),
        CmpOp::Ge => (min, *n),
        CmpOp::Lt => (max, n.checked_sub(1)?),
        CmpOp::Le => (max, *n),
    };
    Some(vec![(key(k), Value::Int(v.max(0)))])
}

/// True for a `muranoObject` schema (whose `check()`s on properties go to
/// its `context`).
fn is_object_schema(d: &Dict) -> bool {
    match d.get(&key("type")) {
        Some(Value::Str(t)) => &**t == "muranoObject",
        Some(Value::List(ts)) => ts.iter().any(|t| t.as_str() == Some("muranoObject")),
        _ => false,
    }
}

/// `schema` with `pairs` set on the schema of the property at `path`
/// (nested `object` schemas made as needed).
fn at_path(mut schema: Dict, path: &[String], pairs: Vec<(Value, Value)>) -> Dict {
    let Some((head, rest)) = path.split_first() else {
        for (k, v) in pairs {
            schema.insert(k, v);
        }
        return schema;
    };
    if schema.get(&key("type")).is_none() {
        schema.insert(key("type"), Value::str("object"));
    }
    let mut props = match schema.get(&key("properties")) {
        Some(Value::Dict(p)) => (**p).clone(),
        _ => Dict::default(),
    };
    let child = match props.get(&key(head)) {
        Some(Value::Dict(c)) => (**c).clone(),
        _ => Dict::default(),
    };
    props.insert(key(head), Value::dict(at_path(child, rest, pairs)));
    schema.insert(key("properties"), Value::dict(props));
    schema
}

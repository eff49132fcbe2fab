//! Contracts of properties and method arguments.
//!
//! [`lower_contract`] reads a `Contract:` template as the engine always has:
//!
//! * an expression that is just `$`: anything ([`ContractKind::Any`]);
//! * null: anything too ([`ContractKind::Null`], apart for the schema
//!   generator, which gives it no schema);
//! * another constant: that value ([`ContractKind::Const`]);
//! * a list: a last integer is the minimum length and, with an integer
//!   before it, those two are the minimum and maximum (`[$.string(), 1,
//!   5]`); the items before them are the contracts of the list's items by
//!   position, the last one applying to every item after (`[$.int(),
//!   $.string()]`), and none (`[]`, `[1, 5]`) means any item, as murano's
//!   `Contract._map_list` (murano/dsl/contracts/contracts.py) reads them
//!   ([`ContractKind::List`]);
//! * a dict: constant keys are required keys, expression keys are key
//!   contracts for the other keys ([`ContractKind::Dict`]);
//! * an expression: a chain of coercions applied to `$`
//!   ([`ContractKind::Chain`]: `$.int().notNull().check($ > 0)`), read from
//!   the syntax tree, or any other expression kept whole
//!   ([`ContractKind::Expr`], or [`ContractKind::Static`] when it does not
//!   read `$`).
//!
//! [`link`] is the one place that gives each contract method its meaning
//! (name and arguments to a [`LinkKind`]); the arguments it binds are
//! [`Operand`]s, and a `check()` predicate has its [`Predicate`] shape, so
//! that the checker, the JIT and the schema generator read the IR, never
//! the syntax tree.

use runtime::{Error, Span, Value};
use std::fmt;

use super::expr::{calls_method, slice, Exprs, OnExpr, Role, Yaql};
use super::predicate::reads_value;
pub use super::predicate::{CmpOp, Operand, OperandForm, Predicate, Subject};
use crate::murano::yaml::{LoadOptions, Template, TemplateKind};
use crate::murano::Pos;
use crate::yaql::ast::{Arg, Expr, ExprKind};

/// A contract with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Contract {
    /// What it checks.
    pub kind: ContractKind,
    /// Where it is.
    pub pos: Pos,
}

/// The contract forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ContractKind {
    /// Anything (`$`).
    Any,
    /// No contract (null): anything, as [`ContractKind::Any`].
    Null,
    /// A constant: the value must be null or equal to it, and becomes it.
    Const(Value),
    /// A list whose item `i` satisfies `items[i]` (the last of `items`
    /// past their end; any item when there are none), of length
    /// `min..=max`.
    List {
        /// The item contracts by position, as written.
        items: Vec<Contract>,
        /// Minimum length (a negative one bounds nothing).
        min: i64,
        /// Maximum length, when given (a negative one bounds nothing).
        max: Option<i64>,
    },
    /// A dict: required constant keys and key contracts, in order. An
    /// empty dict accepts any dict.
    Dict(Vec<(DictKey, Contract)>),
    /// A chain of coercions applied to `$`, in order.
    Chain {
        /// The whole expression (evaluated as is).
        expr: Yaql,
        /// Its links, from `$` outwards (never empty).
        links: Vec<Link>,
    },
    /// Any other contract expression, evaluated with `$` the value.
    Expr(Yaql),
    /// A contract expression that does not read `$`, evaluated as
    /// [`ContractKind::Expr`] is.
    Static(Yaql),
}

/// A key of a dict contract.
#[derive(Clone, Debug, PartialEq)]
pub enum DictKey {
    /// A key that is always there (null when missing).
    Const(Value),
    /// A contract the keys not given as constants must satisfy
    /// ([`ContractKind::Any`], `Chain`, `Expr` or `Static`).
    Contract(Contract),
}

/// One call of a contract chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Which check.
    pub kind: LinkKind,
    /// The chain up to and including this call, as offsets into the
    /// chain's text.
    pub span: Span,
}

/// The checks a chain is made of. Arguments are syntax trees whose spans
/// are offsets into the chain's text.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkKind {
    /// `int()`.
    Int,
    /// `string()`.
    String,
    /// `bool()`.
    Bool,
    /// `notNull()`.
    NotNull,
    /// `class(name[, defaultName[, versionSpec]])`.
    Class {
        /// The class.
        name: Operand,
        /// The class an object definition without a type gets.
        default: Option<Operand>,
        /// The versions of the class's package.
        version: Option<Operand>,
    },
    /// `template(type[, defaultType[, versionSpec[, excludeProperties]]])`
    /// (murano's parameter order): the value stays an object definition.
    Template {
        /// The class.
        name: Operand,
        /// Properties left out of the definition.
        exclude: Option<Operand>,
        /// The class a definition without a type gets.
        default_type: Option<Operand>,
        /// The versions of the class's package.
        version: Option<Operand>,
    },
    /// `owned()`.
    Owned,
    /// `notOwned()`.
    NotOwned,
    /// `check(predicate[, msg])`.
    Check {
        /// Evaluated with `$` the value.
        predicate: Expr,
        /// The violation message.
        message: Option<Expr>,
        /// What the predicate says, as far as a schema can tell.
        shape: Predicate,
    },
    /// Any other method call, or a known one with other arguments.
    Call {
        /// The method.
        name: String,
        /// Its arguments.
        args: Vec<Arg>,
    },
}

impl LinkKind {
    /// The method name the link calls.
    pub fn method(&self) -> &str {
        match self {
            LinkKind::Int => "int",
            LinkKind::String => "string",
            LinkKind::Bool => "bool",
            LinkKind::NotNull => "notNull",
            LinkKind::Class { .. } => "class",
            LinkKind::Template { .. } => "template",
            LinkKind::Owned => "owned",
            LinkKind::NotOwned => "notOwned",
            LinkKind::Check { .. } => "check",
            LinkKind::Call { name, .. } => name,
        }
    }
}

impl Contract {
    /// True for a `template()` contract, whose value stays an object
    /// definition: an expression calling `.template(...)` anywhere, or a
    /// list of such.
    pub fn is_template(&self) -> bool {
        match &self.kind {
            ContractKind::Chain { expr, .. }
            | ContractKind::Expr(expr)
            | ContractKind::Static(expr) => calls_method(&expr.ast, "template"),
            // As before positional item contracts: the first item decides.
            ContractKind::List { items, .. } => items.first().is_some_and(Contract::is_template),
            _ => false,
        }
    }

    /// Calls `f` on each YAQL expression, in id order.
    pub fn for_each_expr<'a>(&'a self, f: &mut dyn FnMut(&'a Yaql)) {
        match &self.kind {
            ContractKind::Any | ContractKind::Null | ContractKind::Const(_) => {}
            ContractKind::List { items, .. } => {
                for c in items {
                    c.for_each_expr(f);
                }
            }
            ContractKind::Dict(items) => {
                for (k, v) in items {
                    if let DictKey::Contract(c) = k {
                        c.for_each_expr(f);
                    }
                    v.for_each_expr(f);
                }
            }
            ContractKind::Chain { expr, .. }
            | ContractKind::Expr(expr)
            | ContractKind::Static(expr) => f(expr),
        }
    }
}

/// Lowers a contract template (see the module docs).
///
/// # Panics
///
/// In debug builds, when the result fails
/// [`verify_contract`](super::verify_contract) (a bug of the front end).
pub fn lower_contract(t: &Template, opts: LoadOptions) -> Result<Contract, Error> {
    lower_contract_with(t, opts, &mut |_| Ok(()))
}

/// Lowers a contract template, calling `on_expr` on each YAQL expression as
/// it is made, in [`ExprId`](super::ExprId) order (list items after the
/// element contract are never compiled, as the engine never compiles
/// them).
///
/// # Panics
///
/// As [`lower_contract`].
pub fn lower_contract_with(
    t: &Template,
    opts: LoadOptions,
    on_expr: OnExpr<'_>,
) -> Result<Contract, Error> {
    let mut ex = Exprs::new(opts, on_expr);
    let c = contract(&mut ex, t)?;
    if cfg!(debug_assertions) {
        if let Err(e) = super::verify_contract(&c) {
            panic!("IR verifier: {e}\n{c}");
        }
    }
    Ok(c)
}

fn contract(ex: &mut Exprs<'_>, t: &Template) -> Result<Contract, Error> {
    let kind = match &t.kind {
        TemplateKind::Expr { src, .. } if src.trim() == "$" => ContractKind::Any,
        TemplateKind::Expr { src, program_span } => {
            let y = ex.parse_template(src, &t.pos, *program_span, Role::Contract)?;
            match chain(&y.ast, ex.opts.legacy) {
                Some(links) => ContractKind::Chain { expr: y, links },
                None if reads_value(&y.ast) => ContractKind::Expr(y),
                None => ContractKind::Static(y),
            }
        }
        TemplateKind::Value(Value::Null) => ContractKind::Null,
        TemplateKind::Value(v) => ContractKind::Const(v.clone()),
        TemplateKind::List(spec) => {
            // Python's `isinstance(x, int)`, which takes booleans too.
            let int = |t: &Template| match t.kind {
                TemplateKind::Value(Value::Int(n)) => Some(n),
                TemplateKind::Value(Value::Bool(b)) => Some(b as i64),
                _ => None,
            };
            let (mut min, mut max, mut shift) = (0, None, 0);
            if let Some(n) = spec.last().and_then(int) {
                (min, shift) = (n, 1);
                if let Some(m) = spec.len().checked_sub(2).and_then(|i| int(&spec[i])) {
                    (min, max, shift) = (m, Some(n), 2);
                }
            }
            // No items (`[]`, or bounds alone, where murano would fail on
            // an item with an IndexError): any item.
            let items = spec[..spec.len() - shift]
                .iter()
                .map(|it| contract(ex, it))
                .collect::<Result<Vec<_>, _>>()?;
            ContractKind::List { items, min, max }
        }
        TemplateKind::Dict(items) => {
            let mut out = Vec::new();
            for (k, v) in items {
                let key = match &k.kind {
                    TemplateKind::Value(kv) => DictKey::Const(kv.clone()),
                    _ => DictKey::Contract(contract(ex, k)?),
                };
                out.push((key, contract(ex, v)?));
            }
            ContractKind::Dict(out)
        }
    };
    Ok(Contract {
        kind,
        pos: t.pos.clone(),
    })
}

/// The links of `$.a(..).b(..)...`, or `None` for any other expression.
pub(crate) fn chain(e: &Expr, legacy: bool) -> Option<Vec<Link>> {
    let mut links = Vec::new();
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Method(recv, name, args) => {
                links.push(Link {
                    kind: link(name, args, legacy),
                    span: cur.span,
                });
                cur = recv;
            }
            ExprKind::Var(v) if v.is_empty() && !links.is_empty() => break,
            _ => return None,
        }
    }
    links.reverse();
    Some(links)
}

/// Binds `args` to parameters `params` (by position, then by name), the
/// first `required` of them required. `None` when they do not fit.
fn bind(args: &[Arg], params: &[&str], required: usize, legacy: bool) -> Option<Vec<Option<Expr>>> {
    let mut slots: Vec<Option<Expr>> = vec![None; params.len()];
    let mut npos = 0;
    for a in args {
        let (name, e) = match a {
            Arg::Pos(e) => match &e.kind {
                // yaql 0.2 writes keyword arguments as `name => value`.
                ExprKind::Op("#operator_=>", xs) if legacy && xs[0].span.start == e.span.start => {
                    match &xs[0].kind {
                        ExprKind::Keyword(k) if params.contains(&k.as_str()) => {
                            (Some(k.as_str()), &xs[1])
                        }
                        _ => (None, e),
                    }
                }
                _ => (None, e),
            },
            Arg::Named(n, e) => (Some(n.as_str()), e),
            Arg::Mapping(..) | Arg::Skip => return None,
        };
        let i = match name {
            None => {
                npos += 1;
                npos - 1
            }
            Some(n) => params.iter().position(|p| *p == n)?,
        };
        let slot = slots.get_mut(i)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(e.clone());
    }
    slots[..required]
        .iter()
        .all(Option::is_some)
        .then_some(slots)
}

/// The meaning of contract method `name` called with `args`: the one
/// place that decides it. A known method with arguments that do not fit
/// its parameters (murano's, camelCase) is a [`LinkKind::Call`], as any
/// other method is.
pub(crate) fn link(name: &str, args: &[Arg], legacy: bool) -> LinkKind {
    let other = || LinkKind::Call {
        name: name.to_string(),
        args: args.to_vec(),
    };
    let nullary = |k: LinkKind| if args.is_empty() { k } else { other() };
    let operand = |e: Option<Expr>| e.as_ref().map(Operand::of);
    match name {
        "int" => nullary(LinkKind::Int),
        "string" => nullary(LinkKind::String),
        "bool" => nullary(LinkKind::Bool),
        "notNull" => nullary(LinkKind::NotNull),
        "owned" => nullary(LinkKind::Owned),
        "notOwned" => nullary(LinkKind::NotOwned),
        "class" => match bind(args, &["name", "defaultName", "versionSpec"], 1, legacy) {
            Some(mut s) => {
                let version = operand(s.pop().flatten());
                let default = operand(s.pop().flatten());
                let name = Operand::of(&s.pop().flatten().expect("required"));
                LinkKind::Class {
                    name,
                    default,
                    version,
                }
            }
            None => other(),
        },
        "template" => match bind(
            args,
            &["type", "defaultType", "versionSpec", "excludeProperties"],
            1,
            legacy,
        ) {
            Some(mut s) => {
                let exclude = operand(s.pop().flatten());
                let version = operand(s.pop().flatten());
                let default_type = operand(s.pop().flatten());
                let name = Operand::of(&s.pop().flatten().expect("required"));
                LinkKind::Template {
                    name,
                    exclude,
                    default_type,
                    version,
                }
            }
            None => other(),
        },
        "check" => match bind(args, &["predicate", "msg"], 1, legacy) {
            Some(mut s) => {
                let message = s.pop().flatten();
                let predicate = s.pop().flatten().expect("required");
                LinkKind::Check {
                    shape: Predicate::of(&predicate),
                    predicate,
                    message,
                }
            }
            None => other(),
        },
        _ => other(),
    }
}

// ---- printing ---------------------------------------------------------------

fn arg_text(src: &str, a: &Arg) -> String {
    match a {
        Arg::Pos(e) => slice(src, e.span).to_string(),
        Arg::Named(n, e) => format!("{n} => {}", slice(src, e.span)),
        Arg::Mapping(k, v) => format!("{} => {}", slice(src, k.span), slice(src, v.span)),
        Arg::Skip => String::new(),
    }
}

fn link_text(src: &str, l: &Link) -> String {
    let s = |e: &Expr| slice(src, e.span).to_string();
    let opt = |label: &str, e: &Option<Expr>| {
        e.as_ref()
            .map_or(String::new(), |e| format!(", {label}: {}", s(e)))
    };
    let opt_op = |label: &str, o: &Option<Operand>| {
        o.as_ref()
            .map_or(String::new(), |o| format!(", {label}: {}", s(&o.expr)))
    };
    match &l.kind {
        LinkKind::Class {
            name,
            default,
            version,
        } => format!(
            "class({}{}{})",
            s(&name.expr),
            opt_op("default", default),
            opt_op("version", version)
        ),
        LinkKind::Template {
            name,
            exclude,
            default_type,
            version,
        } => format!(
            "template({}{}{}{})",
            s(&name.expr),
            opt_op("exclude", exclude),
            opt_op("default", default_type),
            opt_op("version", version)
        ),
        LinkKind::Check {
            predicate, message, ..
        } => {
            format!("check({}{})", s(predicate), opt("message", message))
        }
        LinkKind::Call { name, args } => format!(
            "call {name}({})",
            args.iter()
                .map(|a| arg_text(src, a))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        k => k.method().to_string(),
    }
}

fn write_contract(f: &mut fmt::Formatter<'_>, c: &Contract, ind: usize) -> fmt::Result {
    match &c.kind {
        ContractKind::Any => f.write_str("any")?,
        ContractKind::Null => f.write_str("null")?,
        ContractKind::Const(v) => write!(f, "const {v:?}")?,
        ContractKind::Chain { expr, links } => {
            let l: Vec<String> = links.iter().map(|l| link_text(&expr.src, l)).collect();
            write!(f, "chain {expr}: {}", l.join(" -> "))?;
        }
        ContractKind::Expr(y) => write!(f, "expr {y}")?,
        ContractKind::Static(y) => write!(f, "static {y}")?,
        ContractKind::List { items, min, max } => {
            write!(f, "list {min}..")?;
            if let Some(m) = max {
                write!(f, "{m}")?;
            }
            writeln!(f, " @{}:{}", c.pos.line, c.pos.col)?;
            for item in items {
                pad(f, ind + 1)?;
                write_contract(f, item, ind + 1)?;
            }
            return Ok(());
        }
        ContractKind::Dict(items) => {
            writeln!(f, "dict @{}:{}", c.pos.line, c.pos.col)?;
            for (k, v) in items {
                pad(f, ind + 1)?;
                match k {
                    DictKey::Const(k) => writeln!(f, "key {k:?}")?,
                    DictKey::Contract(k) => {
                        f.write_str("key ")?;
                        write_contract(f, k, ind + 1)?;
                    }
                }
                pad(f, ind + 2)?;
                write_contract(f, v, ind + 2)?;
            }
            return Ok(());
        }
    }
    writeln!(f, " @{}:{}", c.pos.line, c.pos.col)
}

fn pad(f: &mut fmt::Formatter<'_>, ind: usize) -> fmt::Result {
    for _ in 0..ind {
        f.write_str("  ")?;
    }
    Ok(())
}

impl fmt::Display for Contract {
    /// One node per line, nested contracts indented, positions as
    /// `@line:col`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_contract(f, self, 0)
    }
}

impl Link {
    /// The text of the chain up to and including this link.
    pub fn text<'a>(&self, chain_src: &'a str) -> &'a str {
        slice(chain_src, self.span)
    }
}

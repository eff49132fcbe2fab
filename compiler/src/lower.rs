//! Lowering: syntax tree -> IR.

use std::sync::Arc;

use num_bigint_dep::parse_int;
use runtime::registry::Form;
use runtime::{num, Error, Registry, Result, Span, Value};

use crate::ir::{BinOp, Call, Node};
use crate::yaql::ast::{Arg, Expr, ExprKind, Lit};

/// Maximum nesting depth of an expression.
pub const MAX_NESTING: usize = 200;

mod num_bigint_dep {
    use runtime::Value;
    /// Parses an integer literal of any size.
    pub fn parse_int(s: &str) -> Value {
        match s.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => {
                // Arbitrary precision: accumulate in decimal chunks.
                let mut acc = Value::Int(0);
                for ch in s.chars() {
                    let d = ch.to_digit(10).unwrap_or(0) as i64;
                    acc = runtime::num::mul(&acc, &Value::Int(10)).unwrap_or(Value::Null);
                    acc = runtime::num::add(&acc, &Value::Int(d)).unwrap_or(Value::Null);
                }
                acc
            }
        }
    }
}

/// Lowers expressions against a registry.
pub struct Lowerer<'a> {
    reg: &'a Registry,
    nlocals: u32,
    depth: usize,
    legacy: bool,
}

impl<'a> Lowerer<'a> {
    /// A lowerer using `reg` to resolve calls.
    pub fn new(reg: &'a Registry) -> Lowerer<'a> {
        Lowerer {
            reg,
            nlocals: 0,
            depth: 0,
            legacy: false,
        }
    }
    /// yaql 0.2 mode: `name => value` in calls of functions that take
    /// keyword arguments (and of MuranoPL methods) passes a keyword argument.
    pub fn legacy(mut self, on: bool) -> Self {
        self.legacy = on;
        self
    }
    /// Number of local slots used.
    pub fn nlocals(&self) -> u32 {
        self.nlocals
    }

    /// Lowers an expression.
    pub fn lower(&mut self, e: &Expr) -> Result<Node> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(
                Error::new("YaqlGrammarException", "expression is nested too deeply")
                    .with_span(e.span),
            );
        }
        let r = self.lower_inner(e);
        self.depth -= 1;
        r
    }

    fn lower_inner(&mut self, e: &Expr) -> Result<Node> {
        Ok(match &e.kind {
            ExprKind::Lit(l) => Node::Const(match l {
                Lit::Int(s) => parse_int(s),
                Lit::Float(f) => Value::Float(*f),
                Lit::Str(s) => Value::str(s.as_str()),
                Lit::Bool(b) => Value::Bool(*b),
                Lit::Null => Value::Null,
            }),
            ExprKind::Keyword(k) => Node::Const(Value::str(k.as_str())),
            ExprKind::Var(v) => {
                if v.is_empty() {
                    Node::Arg(1)
                } else if let Some(n) = v.parse::<u32>().ok().filter(|n| *n >= 1) {
                    Node::Arg(n)
                } else {
                    Node::Var(v.as_str().into())
                }
            }
            ExprKind::Call(name, args) => self.call(name, Form::Function, None, args, e.span)?,
            ExprKind::Method(recv, name, args) => {
                let r = self.lower(recv)?;
                self.call(name, Form::Method, Some(r), args, e.span)?
            }
            ExprKind::Op(name, args) => self.op(name, args, e.span)?,
            ExprKind::Attr(recv, name) => {
                let r = self.lower(recv)?;
                Node::Attr(
                    Box::new(r),
                    name.as_str().into(),
                    self.reg.get("#attr").cloned(),
                    e.span,
                )
            }
            ExprKind::Dot(recv, expr) => {
                let r = self.lower(recv)?;
                self.call_nodes(
                    "#operator_.",
                    Form::Function,
                    vec![Some(r)],
                    vec![(**expr).clone()],
                    e.span,
                )?
            }
            ExprKind::SafeDot(recv, member) => {
                let r = self.lower(recv)?;
                let slot = self.nlocals;
                self.nlocals += 1;
                let m = &**member;
                let body = match &m.kind {
                    ExprKind::Keyword(k) => Node::Attr(
                        Box::new(Node::Local(slot)),
                        k.as_str().into(),
                        self.reg.get("#attr").cloned(),
                        e.span,
                    ),
                    ExprKind::Call(name, args) => {
                        self.call(name, Form::Method, Some(Node::Local(slot)), args, e.span)?
                    }
                    _ => self.call_nodes(
                        "#operator_.",
                        Form::Function,
                        vec![Some(Node::Local(slot))],
                        vec![m.clone()],
                        e.span,
                    )?,
                };
                Node::SafeDot(Box::new(r), slot, Box::new(body))
            }
            ExprKind::Index(recv, args) => {
                let r = self.lower(recv)?;
                self.call("#indexer", Form::Function, Some(r), args, e.span)?
            }
            ExprKind::Delegate(callee, args) => {
                let r = self.lower(callee)?;
                self.call("#call", Form::Function, Some(r), args, e.span)?
            }
            ExprKind::List(args) => {
                if args.iter().all(|a| matches!(a, Arg::Pos(_))) {
                    let mut items = Vec::new();
                    for a in args {
                        if let Arg::Pos(x) = a {
                            items.push(self.lower(x)?);
                        }
                    }
                    Node::List(items)
                } else {
                    self.call("#list", Form::Function, None, args, e.span)?
                }
            }
            ExprKind::Map(args) => {
                if args
                    .iter()
                    .all(|a| matches!(a, Arg::Named(..) | Arg::Mapping(..)))
                {
                    let mut items = Vec::new();
                    for a in args {
                        match a {
                            Arg::Named(k, v) => {
                                items.push((Node::Const(Value::str(k.as_str())), self.lower(v)?))
                            }
                            Arg::Mapping(k, v) => items.push((self.lower(k)?, self.lower(v)?)),
                            _ => {}
                        }
                    }
                    Node::Dict(items, e.span)
                } else {
                    self.call("#map", Form::Function, None, args, e.span)?
                }
            }
            ExprKind::NsName(ns, name) => {
                let ns = ns.as_ref().map_or(Value::Null, |s| Value::str(s.as_str()));
                let set = self.reg.get("#operator_:").cloned();
                Node::Call(Box::new(Call {
                    name: "#operator_:".into(),
                    form: Form::Function,
                    set,
                    pos: vec![
                        Some(Node::Const(ns)),
                        Some(Node::Const(Value::str(name.as_str()))),
                    ],
                    named: vec![],
                    span: e.span,
                }))
            }
        })
    }

    fn op(&mut self, name: &'static str, args: &[Expr], span: Span) -> Result<Node> {
        match (name, args) {
            ("#operator_and", [a, b]) => Ok(Node::And(
                Box::new(self.lower(a)?),
                Box::new(self.lower(b)?),
            )),
            ("#operator_or", [a, b]) => {
                Ok(Node::Or(Box::new(self.lower(a)?), Box::new(self.lower(b)?)))
            }
            ("#unary_operator_not", [a]) => Ok(Node::Not(Box::new(self.lower(a)?))),
            ("#operator_=>", [a, b]) => {
                // yaql 0.2 `build_tuple`: `a => b` is the tuple (a, b) and a
                // left operand that is itself `=>` extends its tuple.
                // A parenthesised left operand stays one element: the
                // grammar gives `(a => b) => c` a span starting at `(`, one
                // byte before its left operand's.
                let mut items = match &a.kind {
                    ExprKind::Op("#operator_=>", _) if a.span.start == span.start => match self.op(
                        "#operator_=>",
                        match &a.kind {
                            ExprKind::Op(_, x) => x,
                            _ => unreachable!(),
                        },
                        a.span,
                    )? {
                        Node::List(v) => v,
                        other => vec![other],
                    },
                    _ => vec![self.lower(a)?],
                };
                items.push(self.lower(b)?);
                Ok(Node::List(items))
            }
            ("#unary_operator_-", [a]) => {
                let x = self.lower(a)?;
                if let Node::Const(v) = &x {
                    if v.is_number() {
                        if let Ok(r) = num::neg(v) {
                            return Ok(Node::Const(r));
                        }
                    }
                }
                Ok(Node::Neg(
                    Box::new(x),
                    self.reg.get("#unary_operator_-").cloned(),
                    span,
                ))
            }
            (_, [a, b]) if BinOp::from_func(name).is_some() => {
                let op = BinOp::from_func(name).unwrap();
                let (x, y) = (self.lower(a)?, self.lower(b)?);
                if let (Node::Const(p), Node::Const(q)) = (&x, &y) {
                    if let Some(v) = fold(op, p, q) {
                        return Ok(Node::Const(v));
                    }
                }
                Ok(Node::Bin(
                    op,
                    Box::new(x),
                    Box::new(y),
                    self.reg.get(name).cloned(),
                    span,
                ))
            }
            _ => {
                let pos = args.iter().map(|a| Arg::Pos(a.clone())).collect::<Vec<_>>();
                self.call(name, Form::Function, None, &pos, span)
            }
        }
    }

    fn call_nodes(
        &mut self,
        name: &str,
        form: Form,
        pre: Vec<Option<Node>>,
        rest: Vec<Expr>,
        span: Span,
    ) -> Result<Node> {
        let npos = pre.len() + rest.len();
        let (lz, _) = self.reg.lazy_slots(name, form, npos, &[]);
        let mut pos = pre;
        for e in rest.iter() {
            let n = self.lower(e)?;
            pos.push(Some(if lz[pos.len()] {
                Node::Lambda(Box::new(n))
            } else {
                n
            }));
        }
        Ok(Node::Call(Box::new(Call {
            name: name.into(),
            form,
            set: self.reg.get(name).cloned(),
            pos,
            named: vec![],
            span,
        })))
    }

    fn call(
        &mut self,
        name: &str,
        form: Form,
        recv: Option<Node>,
        args: &[Arg],
        span: Span,
    ) -> Result<Node> {
        if self.legacy && !self.reg.all_no_kw(name, form) {
            let is_kw = |a: &Arg| match a {
                Arg::Pos(e) => match &e.kind {
                    ExprKind::Op("#operator_=>", xs) => {
                        matches!(&xs[0].kind, ExprKind::Keyword(_))
                            && xs[0].span.start == e.span.start
                    }
                    _ => false,
                },
                _ => false,
            };
            // A keyword argument when the function takes keyword arguments
            // or has a parameter of that name, or is not a library function.
            let takes = |k: &str| {
                self.reg.get(name).is_none_or(|set| {
                    set.overloads.iter().any(|o| {
                        o.params.iter().any(|p| {
                            p.mode == runtime::registry::Mode::Kw
                                || (p.mode == runtime::registry::Mode::Normal && &*p.name == k)
                        })
                    })
                })
            };
            let kw_name = |a: &Arg| -> Option<String> {
                if !is_kw(a) {
                    return None;
                }
                match a {
                    Arg::Pos(e) => match &e.kind {
                        ExprKind::Op(_, xs) => match &xs[0].kind {
                            ExprKind::Keyword(k) if takes(k) => Some(k.clone()),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                }
            };
            if args.iter().any(|a| kw_name(a).is_some()) {
                let conv: Vec<Arg> = args
                    .iter()
                    .map(|a| match (a, kw_name(a)) {
                        (Arg::Pos(e), Some(k)) => match &e.kind {
                            ExprKind::Op(_, xs) => Arg::Named(k, xs[1].clone()),
                            _ => a.clone(),
                        },
                        _ => a.clone(),
                    })
                    .collect();
                let saved = self.legacy;
                self.legacy = false;
                let r = self.call(name, form, recv, &conv, span);
                self.legacy = saved;
                return r;
            }
        }
        if self.reg.all_no_kw(name, form) && args.iter().any(|a| matches!(a, Arg::Named(..))) {
            let conv: Vec<Arg> = args
                .iter()
                .map(|a| match a {
                    Arg::Named(n, v) => Arg::Mapping(
                        Expr {
                            kind: ExprKind::Lit(Lit::Str(n.clone())),
                            span: v.span,
                        },
                        v.clone(),
                    ),
                    other => other.clone(),
                })
                .collect();
            return self.call(name, form, recv, &conv, span);
        }
        let npos =
            recv.is_some() as usize + args.iter().filter(|a| !matches!(a, Arg::Named(..))).count();
        let names: Vec<&str> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Named(n, _) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        let (mut lz_pos, mut lz_named) = self.reg.lazy_slots(name, form, npos, &names);
        if form == Form::Method && !self.reg.has_form(name, form) {
            // Not a library method: a MuranoPL method or an error. Arguments
            // are evaluated only once the call resolves (as the reference's
            // lazy arguments are), so pass them as thunks.
            for (i, l) in lz_pos.iter_mut().enumerate() {
                *l = i > 0;
            }
            lz_named.iter_mut().for_each(|l| *l = true);
        }
        let mut pos: Vec<Option<Node>> = Vec::new();
        if let Some(r) = recv {
            pos.push(Some(r));
        }
        let mut named = Vec::new();
        for a in args {
            match a {
                Arg::Pos(e) => {
                    let lazy = lz_pos[pos.len()];
                    let n = self.lower(e)?;
                    pos.push(Some(if lazy { Node::Lambda(Box::new(n)) } else { n }));
                }
                Arg::Mapping(k, v) => {
                    let lazy = lz_pos[pos.len()];
                    let (k, v) = (self.lower(k)?, self.lower(v)?);
                    pos.push(Some(if lazy {
                        Node::Pair(
                            Box::new(Node::Lambda(Box::new(k))),
                            Box::new(Node::Lambda(Box::new(v))),
                        )
                    } else {
                        Node::Pair(Box::new(k), Box::new(v))
                    }));
                }
                Arg::Skip => pos.push(None),
                Arg::Named(n, e) => {
                    let lazy = lz_named[named.len()];
                    let x = self.lower(e)?;
                    named.push((
                        Arc::from(n.as_str()),
                        if lazy { Node::Lambda(Box::new(x)) } else { x },
                    ));
                }
            }
        }
        Ok(Node::Call(Box::new(Call {
            name: name.into(),
            form,
            set: self.reg.get(name).cloned(),
            pos,
            named,
            span,
        })))
    }
}

fn fold(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    let nums = a.is_number() && b.is_number();
    let r = match op {
        BinOp::Add if nums => num::add(a, b),
        BinOp::Sub if nums => num::sub(a, b),
        BinOp::Mul if nums => num::mul(a, b),
        BinOp::Div if nums => num::div(a, b),
        BinOp::Mod if nums => num::modulo(a, b),
        _ => return None,
    };
    r.ok()
}

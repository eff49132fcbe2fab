//! Lowering: syntax tree -> IR.
//!
//! Each call site looks its name up in the registry once: what the
//! registry's `all_no_kw`, `has_form` and `lazy_slots` answer is computed
//! from that one overload set when every overload accepts the call's form
//! (then the registry's yaql 0.2 any-form switch cannot change the
//! answer), and asked of the registry otherwise. Debug builds check the
//! two agree.

use std::sync::Arc;

use runtime::num::parse_int;
use runtime::registry::{Form, Mode, OverloadSet};
use runtime::{num, Error, Registry, Result, Span, Value};

use crate::ir::{self, BinOp, Builder, Call, Node, NodeId};
use crate::yaql::ast::Expr;
use crate::yaql::flat::{Arg, Flat, Id, Kind, Lit};

/// Maximum nesting depth of an expression.
pub const MAX_NESTING: usize = 200;

/// Lowers expressions against a registry.
pub struct Lowerer<'a> {
    reg: &'a Registry,
    nlocals: u32,
    depth: usize,
    legacy: bool,
    /// `#attr`, looked up on first use.
    attr_set: Option<Option<Arc<OverloadSet>>>,
    /// The overloads of each [`BinOp`] (by `BinOp as usize`) and of
    /// unary minus (last), looked up on first use.
    op_sets: [Option<Option<Arc<OverloadSet>>>; 13],
    b: Builder,
}

// Scratch memory only: a lowering takes the spare builder, clears it and
// puts it back, so no result depends on what an earlier expression (on this
// OS thread) left in it.
thread_local! {
    /// A spare builder: its vectors keep their capacity from expression
    /// to expression.
    static SPARE: std::cell::Cell<Option<Builder>> = const { std::cell::Cell::new(None) };
}

impl Drop for Lowerer<'_> {
    fn drop(&mut self) {
        let mut b = std::mem::take(&mut self.b);
        // Keep the vectors unless an unusually large expression grew them.
        if b.is_small() {
            b.clear();
            let _ = SPARE.try_with(|s| s.set(Some(b)));
        }
    }
}

/// An argument of a call, borrowed from the syntax tree, after the
/// rewrites `call` applies (legacy keyword arguments, named arguments of
/// functions without keyword parameters as mapping rules).
#[derive(Clone, Copy)]
enum A<'e> {
    Pos(Id),
    Named(&'e str, Id),
    /// `key => value`; a string key comes from a rewritten named argument.
    Mapping(Key<'e>, Id),
    Skip,
}

#[derive(Clone, Copy)]
enum Key<'e> {
    Expr(Id),
    Str(&'e str),
}

/// A call's arguments: the syntax tree's, an operator's operands, or
/// rewritten ones.
#[derive(Clone, Copy)]
enum Args<'e> {
    Ast(&'e [Arg<'e>]),
    Ids(&'e [Id]),
    Conv(&'e [A<'e>]),
}

impl<'e> Args<'e> {
    fn iter(self) -> impl Iterator<Item = A<'e>> + Clone {
        let n = match self {
            Args::Ast(a) => a.len(),
            Args::Ids(a) => a.len(),
            Args::Conv(a) => a.len(),
        };
        (0..n).map(move |i| match self {
            Args::Ast(a) => A::of(&a[i]),
            Args::Ids(a) => A::Pos(a[i]),
            Args::Conv(a) => a[i],
        })
    }
}

impl<'e> A<'e> {
    fn of(a: &Arg<'e>) -> A<'e> {
        match *a {
            Arg::Pos(e) => A::Pos(e),
            Arg::Named(n, e) => A::Named(n, e),
            Arg::Mapping(k, v) => A::Mapping(Key::Expr(k), v),
            Arg::Skip => A::Skip,
        }
    }
}

/// How a call's arguments are rewritten before lowering.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rewrite {
    None,
    /// yaql 0.2: `name => value` passes a keyword argument.
    LegacyKw,
    /// `name => value` is a positional mapping rule.
    NamedAsMapping,
}

/// What lowering needs to know of a call's overloads.
struct Sig<'s> {
    set: Option<&'s Arc<OverloadSet>>,
    /// Every overload accepts the call's form: answers come from `set`.
    local: bool,
    form: Form,
}

impl<'a> Lowerer<'a> {
    /// A lowerer using `reg` to resolve calls.
    pub fn new(reg: &'a Registry) -> Lowerer<'a> {
        Lowerer {
            reg,
            nlocals: 0,
            depth: 0,
            legacy: false,
            attr_set: None,
            op_sets: Default::default(),
            b: SPARE
                .try_with(|s| s.take())
                .ok()
                .flatten()
                .unwrap_or_default(),
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

    /// Lowers a syntax tree.
    pub fn lower(&mut self, e: &Expr) -> Result<ir::Expr> {
        let (tree, root) = Flat::from_tree(e);
        self.lower_flat(&tree, root)
    }

    /// Lowers the expression at `root` of a flat tree.
    pub fn lower_flat(&mut self, f: &Flat<'_>, root: Id) -> Result<ir::Expr> {
        self.b.clear();
        let root = self.node(f, root)?;
        Ok(self.b.finish(root, self.nlocals))
    }

    /// Lowers a subexpression.
    fn node(&mut self, f: &Flat<'_>, e: Id) -> Result<NodeId> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(
                Error::new("YaqlGrammarException", "expression is nested too deeply")
                    .with_span(f.span(e)),
            );
        }
        let r = self.node_inner(f, e);
        self.depth -= 1;
        r
    }

    fn add(&mut self, n: Node) -> NodeId {
        self.b.add(n)
    }

    fn attr_set(&mut self) -> Option<Arc<OverloadSet>> {
        let reg = self.reg;
        self.attr_set
            .get_or_insert_with(|| reg.get("#attr").cloned())
            .clone()
    }

    /// The overloads of a binary operator (`Some`) or of unary minus.
    fn op_set(&mut self, op: Option<BinOp>) -> Option<Arc<OverloadSet>> {
        let (i, name) = match op {
            Some(op) => (op as usize, op.func()),
            None => (12, "#unary_operator_-"),
        };
        let reg = self.reg;
        self.op_sets[i]
            .get_or_insert_with(|| reg.get(name).cloned())
            .clone()
    }

    fn attr(&mut self, recv: NodeId, name: &str, span: Span) -> NodeId {
        let set = self.attr_set();
        self.add(Node::Attr(recv, runtime::value::intern(name), set, span))
    }

    /// Replaces `old` (a constant just added, with nothing after it) by a
    /// folded constant.
    fn fold_into(&mut self, old: NodeId, v: Value) -> NodeId {
        if old.index() + 1 == self.b.next_id().index() {
            self.b.truncate(old);
        }
        self.add(Node::Const(v))
    }

    fn node_inner(&mut self, f: &Flat<'_>, e: Id) -> Result<NodeId> {
        let span = f.span(e);
        Ok(match f.kind(e) {
            Kind::Lit(l) => self.add(Node::Const(match l {
                Lit::Int(s) => parse_int(s),
                Lit::Float(x) => Value::Float(*x),
                Lit::Str(s) => Value::str(&**s),
                Lit::Bool(b) => Value::Bool(*b),
                Lit::Null => Value::Null,
            })),
            Kind::Keyword(k) => self.add(Node::Const(Value::str(*k))),
            Kind::Var(v) => {
                let n = if v.is_empty() {
                    Node::Arg(1)
                } else if let Some(n) = v.parse::<u32>().ok().filter(|n| *n >= 1) {
                    Node::Arg(n)
                } else {
                    Node::Var(Arc::new(v.to_string()))
                };
                self.add(n)
            }
            Kind::Call(name, args) => {
                self.call_args(f, name, Form::Function, None, f.args(*args), span)?
            }
            Kind::Method(recv, name, args) => {
                let r = self.node(f, *recv)?;
                self.call_args(f, name, Form::Method, Some(r), f.args(*args), span)?
            }
            Kind::Op(name, args) => self.op(f, name, args.as_slice(), span)?,
            Kind::Attr(recv, name) => {
                let r = self.node(f, *recv)?;
                self.attr(r, name, span)
            }
            Kind::Dot(recv, expr) => {
                let r = self.node(f, *recv)?;
                self.call_nodes(f, "#operator_.", r, *expr, span)?
            }
            Kind::SafeDot(recv, member) => {
                let r = self.node(f, *recv)?;
                let slot = self.nlocals;
                self.nlocals += 1;
                let local = self.add(Node::Local(slot));
                let body = match f.kind(*member) {
                    Kind::Keyword(k) => self.attr(local, k, span),
                    Kind::Call(name, args) => {
                        self.call_args(f, name, Form::Method, Some(local), f.args(*args), span)?
                    }
                    _ => self.call_nodes(f, "#operator_.", local, *member, span)?,
                };
                self.add(Node::SafeDot(r, slot, body))
            }
            Kind::Index(recv, args) => {
                let r = self.node(f, *recv)?;
                self.call_args(f, "#indexer", Form::Function, Some(r), f.args(*args), span)?
            }
            Kind::Delegate(callee, args) => {
                let r = self.node(f, *callee)?;
                self.call_args(f, "#call", Form::Function, Some(r), f.args(*args), span)?
            }
            Kind::List(args) => {
                let args = f.args(*args);
                if args.iter().all(|a| matches!(a, Arg::Pos(_))) {
                    let mark = self.b.mark();
                    for a in args {
                        if let Arg::Pos(x) = a {
                            let n = self.node(f, *x)?;
                            self.b.push(n);
                        }
                    }
                    let (items, _) = self.b.refs(mark);
                    self.add(Node::List(items))
                } else {
                    self.call_args(f, "#list", Form::Function, None, args, span)?
                }
            }
            Kind::Map(args) => {
                let args = f.args(*args);
                if args
                    .iter()
                    .all(|a| matches!(a, Arg::Named(..) | Arg::Mapping(..)))
                {
                    let mark = self.b.mark();
                    for a in args {
                        let (k, v) = match *a {
                            Arg::Named(k, v) => {
                                (self.add(Node::Const(Value::str(k))), self.node(f, v)?)
                            }
                            Arg::Mapping(k, v) => (self.node(f, k)?, self.node(f, v)?),
                            _ => continue,
                        };
                        self.b.push(k);
                        self.b.push(v);
                    }
                    let (items, _) = self.b.refs(mark);
                    self.add(Node::Dict(items, span))
                } else {
                    self.call_args(f, "#map", Form::Function, None, args, span)?
                }
            }
            Kind::NsName(ns, name) => {
                let ns = ns.map_or(Value::Null, Value::str);
                let set = self.reg.get("#operator_:").cloned();
                let mark = self.b.mark();
                let ns = self.add(Node::Const(ns));
                self.b.push(ns);
                let name_node = self.add(Node::Const(Value::str(*name)));
                self.b.push(name_node);
                let (pos, named) = self.b.refs(mark);
                self.add(Node::Call(Box::new(Call {
                    name: call_name("#operator_:", set.as_ref()),
                    form: Form::Function,
                    set,
                    pos,
                    named,
                    span,
                })))
            }
        })
    }

    fn op(&mut self, f: &Flat<'_>, name: &'static str, args: &[Id], span: Span) -> Result<NodeId> {
        match (name, args) {
            ("#operator_and", &[a, b]) => {
                let (x, y) = (self.node(f, a)?, self.node(f, b)?);
                Ok(self.add(Node::And(x, y)))
            }
            ("#operator_or", &[a, b]) => {
                let (x, y) = (self.node(f, a)?, self.node(f, b)?);
                Ok(self.add(Node::Or(x, y)))
            }
            ("#unary_operator_not", &[a]) => {
                let x = self.node(f, a)?;
                Ok(self.add(Node::Not(x)))
            }
            ("#operator_=>", &[a, b]) => self.tuple(f, a, b, span),
            ("#unary_operator_-", &[a]) => {
                let x = self.node(f, a)?;
                if let Node::Const(v) = self.b.get(x) {
                    if v.is_number() {
                        if let Ok(r) = num::neg(v) {
                            return Ok(self.fold_into(x, r));
                        }
                    }
                }
                let set = self.op_set(None);
                Ok(self.add(Node::Neg(x, set, span)))
            }
            (_, &[a, b]) if BinOp::from_func(name).is_some() => {
                let op = BinOp::from_func(name).unwrap();
                let (x, y) = (self.node(f, a)?, self.node(f, b)?);
                if let (Node::Const(p), Node::Const(q)) = (self.b.get(x), self.b.get(y)) {
                    if let Some(v) = fold(op, p, q) {
                        if x.index() + 1 == y.index() {
                            self.b.truncate(y);
                        }
                        return Ok(self.fold_into(x, v));
                    }
                }
                let set = self.op_set(Some(op));
                Ok(self.add(Node::Bin(op, x, y, set, span)))
            }
            _ => self.call(
                f,
                name,
                Form::Function,
                None,
                Args::Ids(args),
                Rewrite::None,
                span,
            ),
        }
    }

    /// yaql 0.2 `build_tuple`: `a => b` is the tuple (a, b) (a call of
    /// the legacy library's `tuple`), and a left
    /// operand that is itself `=>` extends its tuple: the chain's left
    /// spine is walked down, then its leftmost operand and the right ones
    /// are lowered in order. A parenthesised left operand stays one
    /// element: the grammar gives `(a => b) => c` a span starting at `(`,
    /// one byte before its left operand's.
    fn tuple(&mut self, f: &Flat<'_>, a: Id, b: Id, span: Span) -> Result<NodeId> {
        let mut rights = vec![b];
        let (mut left, mut start) = (a, span.start);
        while let Kind::Op("#operator_=>", ops) = f.kind(left) {
            let (outer, [x, y]) = (f.span(left), ops.as_slice()) else {
                break;
            };
            if outer.start != start {
                break;
            }
            rights.push(*y);
            (left, start) = (*x, outer.start);
        }
        let mark = self.b.mark();
        let x = self.node(f, left)?;
        self.b.push(x);
        for &r in rights.iter().rev() {
            let y = self.node(f, r)?;
            self.b.push(y);
        }
        let (pos, named) = self.b.refs(mark);
        // The library's `tuple` builds it (a list that an engine keeping
        // tuples returns as one); a registry without it, a list.
        let Some(set) = self.reg.get("tuple").cloned() else {
            return Ok(self.add(Node::List(pos)));
        };
        Ok(self.add(Node::Call(Box::new(Call {
            name: call_name("tuple", Some(&set)),
            form: Form::Function,
            set: Some(set),
            pos,
            named,
            span,
        }))))
    }

    /// The overloads of `name` and whether they decide `form` alone.
    fn sig(&self, name: &str, form: Form) -> Sig<'a> {
        let set = self.reg.get(name);
        let local = set.is_none_or(|s| s.overloads.iter().all(|o| o.accepts_form(form)));
        Sig { set, local, form }
    }

    /// `Registry::all_no_kw`.
    fn all_no_kw(&self, name: &str, sig: &Sig<'_>) -> bool {
        if !sig.local {
            return self.reg.all_no_kw(name, sig.form);
        }
        let r = sig
            .set
            .is_some_and(|s| !s.overloads.is_empty() && s.overloads.iter().all(|o| o.no_kw));
        debug_assert_eq!(r, self.reg.all_no_kw(name, sig.form));
        r
    }

    /// `Registry::has_form`.
    fn has_form(&self, name: &str, sig: &Sig<'_>) -> bool {
        if !sig.local {
            return self.reg.has_form(name, sig.form);
        }
        let r = sig.set.is_some_and(|s| !s.overloads.is_empty());
        debug_assert_eq!(r, self.reg.has_form(name, sig.form));
        r
    }

    /// Whether positional slot `i` (receiver first) of a call whose
    /// overloads decide its form alone is compiled lazily (as
    /// `Registry::lazy_slots` answers).
    fn lazy_pos(sig: &Sig<'_>, i: usize) -> bool {
        sig.set.iter().flat_map(|s| s.overloads.iter()).any(|ov| {
            match ov.params.iter().filter(|p| p.mode == Mode::Normal).nth(i) {
                Some(p) => p.lazy,
                None => var_lazy(ov),
            }
        })
    }

    /// Whether named argument `n` is compiled lazily (see `lazy_pos`).
    fn lazy_named(sig: &Sig<'_>, n: &str) -> bool {
        sig.set.iter().flat_map(|s| s.overloads.iter()).any(|ov| {
            if ov.no_kw {
                return var_lazy(ov);
            }
            match ov
                .params
                .iter()
                .find(|p| p.mode == Mode::Normal && &*p.name == n)
            {
                Some(p) => p.lazy,
                None => ov
                    .params
                    .iter()
                    .find(|p| p.mode == Mode::Kw)
                    .is_some_and(|p| p.lazy),
            }
        })
    }

    /// Which arguments of a call are compiled lazily.
    fn lazy(&self, name: &str, sig: &Sig<'_>, args: Args<'_>, npos: usize) -> Lazy {
        // Not a library method: a MuranoPL method or an error. Arguments
        // are evaluated only once the call resolves (as the reference's
        // lazy arguments are), so pass them as thunks.
        if sig.form == Form::Method && !self.has_form(name, sig) {
            return Lazy::Thunks;
        }
        let names = || -> Vec<&str> {
            args.iter()
                .filter_map(|a| match a {
                    A::Named(n, _) => Some(n),
                    _ => None,
                })
                .collect()
        };
        if !sig.local {
            let (p, n) = self.reg.lazy_slots(name, sig.form, npos, &names());
            return Lazy::Slots(p, n);
        }
        #[cfg(debug_assertions)]
        {
            let names = names();
            let (p, n) = self.reg.lazy_slots(name, sig.form, npos, &names);
            let q: Vec<bool> = (0..npos).map(|i| Self::lazy_pos(sig, i)).collect();
            let m: Vec<bool> = names.iter().map(|n| Self::lazy_named(sig, n)).collect();
            debug_assert_eq!((p, n), (q, m), "lazy slots of {name}");
        }
        Lazy::Local
    }

    /// `recv.(expr)`: `#operator_.` with the receiver and the member.
    fn call_nodes(
        &mut self,
        f: &Flat<'_>,
        name: &str,
        pre: NodeId,
        rest: Id,
        span: Span,
    ) -> Result<NodeId> {
        let sig = self.sig(name, Form::Function);
        let npos = 2;
        let lz = match self.lazy(name, &sig, Args::Conv(&[]), npos) {
            Lazy::Slots(p, _) => p[npos - 1],
            _ => Self::lazy_pos(&sig, npos - 1),
        };
        let mark = self.b.mark();
        self.b.push(pre);
        let mut n = self.node(f, rest)?;
        if lz {
            n = self.add(Node::Lambda(n));
        }
        self.b.push(n);
        let (pos, named) = self.b.refs(mark);
        Ok(self.add(Node::Call(Box::new(Call {
            name: call_name(name, sig.set),
            form: Form::Function,
            set: sig.set.cloned(),
            pos,
            named,
            span,
        }))))
    }

    fn call_args<'e>(
        &mut self,
        f: &'e Flat<'e>,
        name: &str,
        form: Form,
        recv: Option<NodeId>,
        args: &'e [Arg<'e>],
        span: Span,
    ) -> Result<NodeId> {
        self.call(f, name, form, recv, Args::Ast(args), Rewrite::None, span)
    }

    /// The keyword of a yaql 0.2 `name => value` positional argument.
    fn legacy_kw<'e>(f: &'e Flat<'e>, a: &A<'e>) -> Option<(&'e str, Id)> {
        let A::Pos(e) = *a else { return None };
        match f.kind(e) {
            Kind::Op("#operator_=>", xs) => match (xs.as_slice(), f.span(e).start) {
                (&[k, v], start) if f.span(k).start == start => match f.kind(k) {
                    Kind::Keyword(k) => Some((k, v)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call<'e>(
        &mut self,
        f: &'e Flat<'e>,
        name: &str,
        form: Form,
        recv: Option<NodeId>,
        args: Args<'e>,
        rewrite: Rewrite,
        span: Span,
    ) -> Result<NodeId> {
        let sig = self.sig(name, form);
        if rewrite == Rewrite::None {
            let no_kw = self.all_no_kw(name, &sig);
            if self.legacy && !no_kw {
                // A keyword argument when the function takes keyword
                // arguments or has a parameter of that name, or is not a
                // library function.
                let takes = |k: &str| {
                    sig.set.is_none_or(|set| {
                        set.overloads.iter().any(|o| {
                            o.params.iter().any(|p| {
                                p.mode == Mode::Kw || (p.mode == Mode::Normal && &*p.name == k)
                            })
                        })
                    })
                };
                let kw = |a: A<'_>| Self::legacy_kw(f, &a).is_some_and(|(k, _)| takes(k));
                if args.iter().any(kw) {
                    let conv: Vec<A<'_>> = args
                        .iter()
                        .map(|a| match Self::legacy_kw(f, &a) {
                            Some((k, v)) if takes(k) => A::Named(k, v),
                            _ => a,
                        })
                        .collect();
                    // The arguments are lowered as the default engine does.
                    let saved = self.legacy;
                    self.legacy = false;
                    let r = self.call(
                        f,
                        name,
                        form,
                        recv,
                        Args::Conv(&conv),
                        Rewrite::LegacyKw,
                        span,
                    );
                    self.legacy = saved;
                    return r;
                }
            }
            if no_kw && args.iter().any(|a| matches!(a, A::Named(..))) {
                let conv: Vec<A<'_>> = args
                    .iter()
                    .map(|a| match a {
                        A::Named(n, v) => A::Mapping(Key::Str(n), v),
                        other => other,
                    })
                    .collect();
                return self.call(
                    f,
                    name,
                    form,
                    recv,
                    Args::Conv(&conv),
                    Rewrite::NamedAsMapping,
                    span,
                );
            }
        }
        let npos =
            recv.is_some() as usize + args.iter().filter(|a| !matches!(a, A::Named(..))).count();
        let lazy = self.lazy(name, &sig, args, npos);
        let mark = self.b.mark();
        let mut npushed = 0;
        if let Some(r) = recv {
            self.b.push(r);
            npushed += 1;
        }
        let mut nnamed = 0;
        for a in args.iter() {
            match a {
                A::Pos(e) => {
                    let lz = lazy.pos(&sig, npushed);
                    let mut n = self.node(f, e)?;
                    if lz {
                        n = self.add(Node::Lambda(n));
                    }
                    self.b.push(n);
                }
                A::Mapping(k, v) => {
                    let lz = lazy.pos(&sig, npushed);
                    let mut k = match k {
                        Key::Expr(k) => self.node(f, k)?,
                        Key::Str(s) => self.add(Node::Const(Value::str(s))),
                    };
                    if lz {
                        k = self.add(Node::Lambda(k));
                    }
                    let mut v = self.node(f, v)?;
                    if lz {
                        v = self.add(Node::Lambda(v));
                    }
                    let p = self.add(Node::Pair(k, v));
                    self.b.push(p);
                }
                A::Skip => self.b.push(NodeId::SKIP),
                A::Named(n, e) => {
                    let lz = lazy.named(&sig, nnamed, n);
                    let mut x = self.node(f, e)?;
                    if lz {
                        x = self.add(Node::Lambda(x));
                    }
                    self.b.push_named(Arc::from(n), x);
                    nnamed += 1;
                    continue;
                }
            }
            npushed += 1;
        }
        let (pos, named) = self.b.refs(mark);
        Ok(self.add(Node::Call(Box::new(Call {
            name: call_name(name, sig.set),
            form,
            set: sig.set.cloned(),
            pos,
            named,
            span,
        }))))
    }
}

/// Which arguments of a call are compiled lazily (see `Lowerer::lazy`).
enum Lazy {
    /// As the call's overloads say (computed from them per argument).
    Local,
    /// As `Registry::lazy_slots` says: positional, named.
    Slots(Vec<bool>, Vec<bool>),
    /// Every argument but the receiver.
    Thunks,
}

impl Lazy {
    fn pos(&self, sig: &Sig<'_>, i: usize) -> bool {
        match self {
            Lazy::Local => Lowerer::lazy_pos(sig, i),
            Lazy::Slots(p, _) => p[i],
            Lazy::Thunks => i > 0,
        }
    }
    fn named(&self, sig: &Sig<'_>, j: usize, n: &str) -> bool {
        match self {
            Lazy::Local => Lowerer::lazy_named(sig, n),
            Lazy::Slots(_, m) => m[j],
            Lazy::Thunks => true,
        }
    }
}

/// Whether an overload's `*args` parameter (if any) is lazy.
fn var_lazy(ov: &runtime::registry::Overload) -> bool {
    ov.params
        .iter()
        .find(|p| p.mode == Mode::Var)
        .is_some_and(|p| p.lazy)
}

/// The name of a call: shared with the overloads when they spell it.
fn call_name(name: &str, set: Option<&Arc<OverloadSet>>) -> Arc<str> {
    match set.and_then(|s| s.overloads.first()) {
        Some(o) if &*o.name == name => o.name.clone(),
        _ => name.into(),
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

#[cfg(test)]
mod tests {
    use crate::ir::Node;
    use crate::yaql::{flat::Flat, parse_flat, LexOptions};

    fn lower_legacy(src: &str) -> crate::ir::Expr {
        let reg = runtime::Registry::new();
        let lex = LexOptions {
            legacy: true,
            murano: false,
        };
        let mut f = Flat::default();
        let root = parse_flat(src, lex, &mut f).unwrap();
        let mut lowerer = super::Lowerer::new(&reg).legacy(true);
        lowerer.lower_flat(&f, root).ok().unwrap()
    }

    /// With the legacy library's `tuple` registered, `a => b` calls it (so
    /// the value is a tuple), and a parenthesised left operand is a call
    /// of its own.
    #[test]
    fn legacy_pairs_call_tuple() {
        use runtime::registry::{var, Ty};
        let mut reg = runtime::Registry::new();
        reg.function("tuple", vec![var("args", Ty::Any).nullable()], |_, a| {
            Ok(runtime::Value::tuple(a.rest))
        });
        let lex = LexOptions {
            legacy: true,
            murano: false,
        };
        let mut f = Flat::default();
        let root = parse_flat("(1 => 2) => 3", lex, &mut f).unwrap();
        let ir = super::Lowerer::new(&reg)
            .legacy(true)
            .lower_flat(&f, root)
            .ok()
            .unwrap();
        let Node::Call(c) = &ir[ir.root] else {
            panic!("{}", ir.print())
        };
        assert_eq!(&*c.name, "tuple");
        let args = ir.list(c.pos);
        assert_eq!(args.len(), 2);
        assert!(matches!(&ir[args[0]], Node::Call(inner) if &*inner.name == "tuple"));
    }

    /// yaql 0.2 `a => b => c` is one tuple (a, b, c), built in one pass:
    /// a chain of 100,000 is 100,000 constants and one list.
    #[test]
    fn legacy_pair_chains_make_one_tuple() {
        // A parenthesised left operand stays one element.
        let ir = lower_legacy("(1 => 2) => 3 => 4");
        let want = "list : list\n  list : list\n    const 1 : int\n    const 2 : int\n  \
                    const 3 : int\n  const 4 : int\n";
        assert_eq!(ir.print(), want);
        let n = 100_000;
        let src = vec!["7"; n].join(" => ");
        let t = std::time::Instant::now();
        let ir = lower_legacy(&src);
        assert!(t.elapsed().as_secs() < 5);
        assert_eq!(ir.nodes.len(), n + 1);
        assert!(matches!(ir[ir.root], Node::List(items) if items.len() == n));
    }
}

//! The YAQL syntax tree. Every node has a byte span into the expression.

use runtime::Span;

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// Integer literal text (arbitrary size).
    Int(String),
    /// Float literal.
    Float(f64),
    /// String.
    Str(String),
    /// `true`/`false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// Expression kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Lit(Lit),
    /// A bare identifier (evaluates to its text).
    Keyword(String),
    /// `$`, `$1`, `$name`: the text after `$`.
    Var(String),
    /// `name(args)`.
    Call(String, Vec<Arg>),
    /// `recv.name(args)`.
    Method(Box<Expr>, String, Vec<Arg>),
    /// An operator, `#operator_<op>` / `#unary_operator_<op>` / `*equal`.
    Op(&'static str, Vec<Expr>),
    /// `recv.name` with a keyword on the right.
    Attr(Box<Expr>, String),
    /// `recv.expr` with any other expression on the right.
    Dot(Box<Expr>, Box<Expr>),
    /// `recv?.member`.
    SafeDot(Box<Expr>, Box<Expr>),
    /// `recv[args]`.
    Index(Box<Expr>, Vec<Arg>),
    /// `callee(args)` (delegate call).
    Delegate(Box<Expr>, Vec<Arg>),
    /// `[args]`.
    List(Vec<Arg>),
    /// `{args}`.
    Map(Vec<Arg>),
    /// `ns:Name` or `:Name` (MuranoPL).
    NsName(Option<String>, String),
}

/// A call argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// Positional.
    Pos(Expr),
    /// `name => value`.
    Named(String, Expr),
    /// `key => value` with a non-keyword key: a mapping rule.
    Mapping(Expr, Expr),
    /// An empty slot.
    Skip,
}

impl Expr {
    /// Makes a node.
    pub fn new(kind: ExprKind, l: usize, r: usize) -> Box<Expr> {
        Box::new(Expr {
            kind,
            span: Span::new(l, r),
        })
    }
    /// Pretty form, fully parenthesised (used by tests).
    pub fn sexp(&self) -> String {
        fn args(a: &[Arg]) -> String {
            a.iter()
                .map(|a| match a {
                    Arg::Pos(e) => e.sexp(),
                    Arg::Named(n, e) => format!("{n} => {}", e.sexp()),
                    Arg::Mapping(k, v) => format!("{} => {}", k.sexp(), v.sexp()),
                    Arg::Skip => "_".into(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
        match &self.kind {
            ExprKind::Lit(Lit::Int(s)) => s.clone(),
            ExprKind::Lit(Lit::Float(f)) => format!("{f:?}"),
            ExprKind::Lit(Lit::Str(s)) => format!("{s:?}"),
            ExprKind::Lit(Lit::Bool(b)) => b.to_string(),
            ExprKind::Lit(Lit::Null) => "null".into(),
            ExprKind::Keyword(k) => k.clone(),
            ExprKind::Var(v) => format!("${v}"),
            ExprKind::Call(n, a) => format!("{n}({})", args(a)),
            ExprKind::Method(r, n, a) => format!("{}.{n}({})", r.sexp(), args(a)),
            ExprKind::Op(o, a) => format!(
                "({o} {})",
                a.iter().map(|e| e.sexp()).collect::<Vec<_>>().join(" ")
            ),
            ExprKind::Attr(r, n) => format!("{}.{n}", r.sexp()),
            ExprKind::Dot(r, e) => format!("{}.({})", r.sexp(), e.sexp()),
            ExprKind::SafeDot(r, e) => format!("{}?.{}", r.sexp(), e.sexp()),
            ExprKind::Index(r, a) => format!("{}[{}]", r.sexp(), args(a)),
            ExprKind::Delegate(r, a) => format!("{}({})", r.sexp(), args(a)),
            ExprKind::List(a) => format!("[{}]", args(a)),
            ExprKind::Map(a) => format!("{{{}}}", args(a)),
            ExprKind::NsName(ns, n) => format!("{}:{n}", ns.clone().unwrap_or_default()),
        }
    }
}

// The grammar's actions (`grammar.lalrpop`).

/// Makes a node.
pub(crate) fn node(kind: ExprKind, l: usize, r: usize) -> Expr {
    Expr {
        kind,
        span: Span::new(l, r),
    }
}

/// Builds a binary operator node.
pub(crate) fn op2(name: &'static str, a: Expr, b: Expr, l: usize, r: usize) -> Expr {
    node(ExprKind::Op(name, vec![a, b]), l, r)
}

/// Builds a unary operator node.
pub(crate) fn op1(name: &'static str, a: Expr, l: usize, r: usize) -> Expr {
    node(ExprKind::Op(name, vec![a]), l, r)
}

/// Builds `key => value` in an argument list: a named argument when the
/// key is a bare keyword, else a mapping rule.
pub(crate) fn named_or_mapping(k: Expr, v: Expr) -> Arg {
    match k.kind {
        ExprKind::Keyword(name) => Arg::Named(name, v),
        _ => Arg::Mapping(k, v),
    }
}

/// Builds `recv.member`: a keyword member makes [`ExprKind::Attr`], a call
/// [`ExprKind::Method`] (also in parentheses: `x.(f(y))` is `x.f(y)`), any
/// other member [`ExprKind::Dot`].
pub(crate) fn member(recv: Expr, m: Expr, l: usize, r: usize) -> Expr {
    let recv = Box::new(recv);
    let kind = match m.kind {
        ExprKind::Keyword(k) => ExprKind::Attr(recv, k),
        ExprKind::Call(n, a) => ExprKind::Method(recv, n, a),
        other => ExprKind::Dot(
            recv,
            Box::new(Expr {
                kind: other,
                span: m.span,
            }),
        ),
    };
    node(kind, l, r)
}

/// Starts an argument list.
pub(crate) fn first(a: Arg) -> Vec<Arg> {
    let mut v = Vec::with_capacity(4);
    v.push(a);
    v
}

/// Appends to an argument list.
pub(crate) fn push(mut v: Vec<Arg>, a: Arg) -> Vec<Arg> {
    v.push(a);
    v
}

/// Checks an argument list: `f(a,,b)` and `f(,a)` are fine; a trailing
/// empty slot and a positional argument after a named one are errors.
pub fn check_args(mut v: Vec<Arg>) -> Result<Vec<Arg>, &'static str> {
    if v.len() == 1 && v[0] == Arg::Skip {
        v.clear();
        return Ok(v);
    }
    if matches!(v.last(), Some(Arg::Skip)) {
        return Err("trailing comma");
    }
    let mut seen_named = false;
    for a in &v {
        match a {
            Arg::Named(..) | Arg::Mapping(..) => seen_named = true,
            _ if seen_named => return Err("positional argument after a named one"),
            _ => {}
        }
    }
    Ok(v)
}

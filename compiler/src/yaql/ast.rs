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

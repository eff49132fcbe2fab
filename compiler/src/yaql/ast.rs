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

/// Trees nest as deep as their text (lowering refuses past 200 levels,
/// but MuranoPL keeps the trees it parses): dropping moves a node's
/// children onto a stack on the heap, emptied one by one, so that it never
/// recurses more than one level.
impl Drop for Expr {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_children(&mut self.kind, &mut stack);
        while let Some(mut e) = stack.pop() {
            take_children(&mut e.kind, &mut stack);
        }
    }
}

/// Moves the children of a node onto `stack`.
fn take_children(kind: &mut ExprKind, stack: &mut Vec<Expr>) {
    fn take(e: &mut Expr) -> Expr {
        let null = Expr {
            kind: ExprKind::Lit(Lit::Null),
            span: Span::default(),
        };
        std::mem::replace(e, null)
    }
    fn args(a: &mut Vec<Arg>, stack: &mut Vec<Expr>) {
        for a in a.drain(..) {
            match a {
                Arg::Pos(e) | Arg::Named(_, e) => stack.push(e),
                Arg::Mapping(k, v) => stack.extend([k, v]),
                Arg::Skip => {}
            }
        }
    }
    match kind {
        ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::Var(_) | ExprKind::NsName(..) => {}
        ExprKind::Call(_, a) | ExprKind::List(a) | ExprKind::Map(a) => args(a, stack),
        ExprKind::Method(r, _, a) | ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => {
            stack.push(take(r));
            args(a, stack);
        }
        ExprKind::Op(_, xs) => stack.append(xs),
        ExprKind::Attr(r, _) => stack.push(take(r)),
        ExprKind::Dot(r, m) | ExprKind::SafeDot(r, m) => stack.extend([take(r), take(m)]),
    }
}

//! The YAQL expressions a MuranoPL tree holds ([`Yaql`]) and the templates
//! made of them ([`Tmpl`]), with what lowering a body or a contract shares:
//! where an expression sits ([`Role`]), how its errors are worded, and
//! the syntax-tree helpers.

use std::fmt;
use std::sync::Arc;

use runtime::{Error, Span, Value};

use super::super::yaml::{LoadOptions, Template, TemplateKind};
use super::super::Pos;
use crate::yaql::ast::{Arg, Expr, ExprKind};
use crate::yaql::{self, LexOptions};
pub use vm::stmt::ExprId;

/// Where a YAQL expression sits; it decides how compile errors are worded
/// (see [`crate::compile_yaql`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A value in a body (a statement's expression, condition, ...).
    Template,
    /// An index of an assignment destination (`$x[$i]`: `$i`).
    DestIndex,
    /// The object expression of a [`DestRoot::Of`] destination.
    DestBase,
    /// A contract expression.
    Contract,
}

/// A YAQL expression: its text, syntax tree and place.
#[derive(Clone, Debug, PartialEq)]
pub struct Yaql {
    /// Its number in the tree.
    pub id: ExprId,
    /// Its text (for a destination part: the slice of the key it spans).
    pub src: Arc<str>,
    /// Its syntax tree; spans are offsets into `src`.
    pub ast: Arc<Expr>,
    /// The position of the YAML scalar it comes from.
    pub pos: Pos,
    /// Its byte range in the file (exact for single-line plain scalars).
    pub span: Span,
    /// Where it sits.
    pub role: Role,
}

impl Yaql {
    /// A compile error of this expression, worded as the engine words it.
    pub(crate) fn wrap_error(&self, e: Error) -> Error {
        wrap_error(self.role, &self.pos, &self.src, e)
    }
}

/// Words a compile error of an expression with role `role` as the engine
/// does.
pub(super) fn wrap_error(role: Role, pos: &Pos, src: &str, e: Error) -> Error {
    match role {
        Role::Template => Error::new(
            e.kind().to_string(),
            format!("{pos}: {} in `{src}`", e.message()),
        ),
        Role::Contract => Error::new(
            "DslContractSyntaxError",
            format!("{pos}: {} in contract `{src}`", e.message()),
        ),
        Role::DestIndex | Role::DestBase => e,
    }
}

impl fmt::Display for Yaql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}`{}`", self.id, self.src)
    }
}

/// A value template: a YAML value as MuranoPL evaluates it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tmpl {
    /// What it is.
    pub kind: TmplKind,
    /// Where it is.
    pub pos: Pos,
}

/// The shape of a [`Tmpl`].
#[derive(Clone, Debug, PartialEq)]
pub enum TmplKind {
    /// A constant.
    Const(Value),
    /// A YAQL expression.
    Expr(Yaql),
    /// A list of templates.
    List(Vec<Tmpl>),
    /// A dict of templates, in source order; a key is a constant or an
    /// expression.
    Dict(Vec<(Tmpl, Tmpl)>),
}

impl Tmpl {
    /// Calls `f` on each YAQL expression, in id order.
    pub fn for_each_expr<'a>(&'a self, f: &mut dyn FnMut(&'a Yaql)) {
        match &self.kind {
            TmplKind::Const(_) => {}
            TmplKind::Expr(y) => f(y),
            TmplKind::List(items) => items.iter().for_each(|t| t.for_each_expr(f)),
            TmplKind::Dict(items) => items.iter().for_each(|(k, v)| {
                k.for_each_expr(f);
                v.for_each_expr(f);
            }),
        }
    }

    /// The constant, if this is one.
    pub fn as_const(&self) -> Option<&Value> {
        match &self.kind {
            TmplKind::Const(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for Tmpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TmplKind::Const(v) => write!(f, "{v:?}"),
            TmplKind::Expr(y) => write!(f, "{y}"),
            TmplKind::List(items) => {
                f.write_str("[")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("]")
            }
            TmplKind::Dict(items) => {
                f.write_str("{")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Gives a loaded value template (a default, a meta value) its IR form,
/// calling `on_expr` on each YAQL expression as it is made, in source
/// (= [`ExprId`]) order.
pub fn lower_template_with(
    t: &Template,
    opts: LoadOptions,
    on_expr: OnExpr<'_>,
) -> Result<Tmpl, Error> {
    Exprs::new(opts, on_expr).template(t)
}

/// The hook the `_with` front ends call on each expression as it is made.
pub type OnExpr<'a> = &'a mut dyn FnMut(&Yaql) -> Result<(), Error>;

/// Makes [`Yaql`] nodes: numbers them and calls the hook.
pub(crate) struct Exprs<'a> {
    pub(crate) opts: LoadOptions,
    next: usize,
    hook: OnExpr<'a>,
}

impl<'a> Exprs<'a> {
    pub(crate) fn new(opts: LoadOptions, hook: OnExpr<'a>) -> Self {
        Exprs {
            opts,
            next: 0,
            hook,
        }
    }

    pub(crate) fn lex(&self) -> LexOptions {
        LexOptions {
            legacy: self.opts.legacy,
            murano: true,
        }
    }

    /// Numbers a new expression and passes it to the hook.
    pub(crate) fn make(
        &mut self,
        src: Arc<str>,
        ast: Arc<Expr>,
        pos: &Pos,
        span: Span,
        role: Role,
    ) -> Result<Yaql, Error> {
        let y = Yaql {
            id: ExprId::new(self.next),
            src,
            ast,
            pos: pos.clone(),
            span,
            role,
        };
        self.next += 1;
        (self.hook)(&y)?;
        Ok(y)
    }

    /// Parses the text of an expression template.
    pub(crate) fn parse_template(
        &mut self,
        src: &Arc<str>,
        pos: &Pos,
        span: Span,
        role: Role,
    ) -> Result<Yaql, Error> {
        // The loader made an expression of the scalar because it parsed
        // with these options, so this fails only with other options.
        let ast = yaql::parse(src, self.lex()).map_err(|e| wrap_error(role, pos, src, e))?;
        self.make(src.clone(), Arc::from(ast), pos, span, role)
    }

    /// Gives a loaded template its IR form (expressions in source order).
    pub(crate) fn template(&mut self, t: &Template) -> Result<Tmpl, Error> {
        let kind = match &t.kind {
            TemplateKind::Value(v) => TmplKind::Const(v.clone()),
            TemplateKind::Expr { src, program_span } => {
                TmplKind::Expr(self.parse_template(src, &t.pos, *program_span, Role::Template)?)
            }
            TemplateKind::List(items) => TmplKind::List(
                items
                    .iter()
                    .map(|x| self.template(x))
                    .collect::<Result<_, _>>()?,
            ),
            TemplateKind::Dict(items) => TmplKind::Dict(
                items
                    .iter()
                    .map(|(k, v)| Ok((self.template(k)?, self.template(v)?)))
                    .collect::<Result<_, Error>>()?,
            ),
        };
        Ok(Tmpl {
            kind,
            pos: t.pos.clone(),
        })
    }
}

/// A copy of `e` with every span moved `by` bytes to the left: the tree of
/// a sub-expression as parsing its own text would give it.
pub(crate) fn rebase(e: &Expr, by: u32) -> Expr {
    let mut e = e.clone();
    shift(&mut e, by);
    e
}

pub(super) fn shift(e: &mut Expr, by: u32) {
    e.span = Span {
        start: e.span.start.saturating_sub(by),
        end: e.span.end.saturating_sub(by),
    };
    let args = |a: &mut Vec<Arg>| {
        for x in a {
            match x {
                Arg::Pos(v) | Arg::Named(_, v) => shift(v, by),
                Arg::Mapping(k, v) => {
                    shift(k, by);
                    shift(v, by);
                }
                Arg::Skip => {}
            }
        }
    };
    match &mut e.kind {
        ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::Var(_) | ExprKind::NsName(..) => {}
        ExprKind::Call(_, a) | ExprKind::List(a) | ExprKind::Map(a) => args(a),
        ExprKind::Method(r, _, a) | ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => {
            shift(r, by);
            args(a);
        }
        ExprKind::Op(_, xs) => xs.iter_mut().for_each(|x| shift(x, by)),
        ExprKind::Attr(r, _) => shift(r, by),
        ExprKind::Dot(a, b) | ExprKind::SafeDot(a, b) => {
            shift(a, by);
            shift(b, by);
        }
    }
}

/// Whether `e` calls a method named `name` anywhere.
pub(crate) fn calls_method(e: &Expr, name: &str) -> bool {
    let args = |a: &[Arg]| {
        a.iter().any(|x| match x {
            Arg::Pos(v) | Arg::Named(_, v) => calls_method(v, name),
            Arg::Mapping(k, v) => calls_method(k, name) || calls_method(v, name),
            Arg::Skip => false,
        })
    };
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::Var(_) | ExprKind::NsName(..) => false,
        ExprKind::Call(_, a) | ExprKind::List(a) | ExprKind::Map(a) => args(a),
        ExprKind::Method(r, n, a) => n == name || calls_method(r, name) || args(a),
        ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => calls_method(r, name) || args(a),
        ExprKind::Op(_, xs) => xs.iter().any(|x| calls_method(x, name)),
        ExprKind::Attr(r, _) => calls_method(r, name),
        ExprKind::Dot(a, b) | ExprKind::SafeDot(a, b) => {
            calls_method(a, name) || calls_method(b, name)
        }
    }
}

/// The text `span` covers in `src` (empty when out of range).
pub(crate) fn slice(src: &str, span: Span) -> &str {
    src.get(span.start as usize..span.end as usize)
        .unwrap_or("")
}

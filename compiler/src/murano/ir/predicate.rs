//! What the front end reads in the arguments of contract calls: each
//! argument's form ([`Operand`]), and the shape of a `check()` predicate
//! ([`Predicate`]): its conjunctions and the comparisons, memberships and
//! regular-expression matches of `$` (or of a property path under it, or
//! a length) with an operand. The engine's checker, the JIT and the
//! schema generator read these instead of the syntax tree; the schema
//! generator turns the comparisons into `minimum`/`maximum`, `enum`,
//! `pattern` and length bounds, as murano's `Check.generate_schema`
//! (murano/dsl/contracts/check.py) does.

use runtime::Value;

use super::expr::slice;
use crate::yaql::ast::{Arg, Expr, ExprKind, Lit};

/// An argument of a contract call: its syntax tree and its form.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// The argument (spans are offsets into the chain's text).
    pub expr: Expr,
    /// What kind of expression it is.
    pub form: OperandForm,
}

/// The forms of an [`Operand`].
#[derive(Clone, Debug, PartialEq)]
pub enum OperandForm {
    /// A literal or a bare word (`80`, `'x'`, `null`, `Name`): its value.
    Literal(Value),
    /// `ns:Name` or `:Name`, as written.
    NsName(String),
    /// Any other expression that does not read `$`: a constant of the
    /// class's context.
    Static,
    /// An expression that reads `$` (the value checked).
    Dynamic,
}

impl Operand {
    /// The operand of argument `e`.
    pub(crate) fn of(e: &Expr) -> Operand {
        let form = match &e.kind {
            ExprKind::Lit(l) => OperandForm::Literal(lit_value(l)),
            ExprKind::Keyword(k) => OperandForm::Literal(Value::str(k)),
            ExprKind::NsName(ns, n) => {
                OperandForm::NsName(format!("{}:{n}", ns.as_deref().unwrap_or("")))
            }
            _ if reads_value(e) => OperandForm::Dynamic,
            _ => OperandForm::Static,
        };
        Operand {
            expr: e.clone(),
            form,
        }
    }

    /// Its text, given the text of the chain it belongs to.
    pub fn text<'a>(&self, chain_src: &'a str) -> &'a str {
        slice(chain_src, self.expr.span)
    }

    /// The literal's value, when it is one.
    pub fn literal(&self) -> Option<&Value> {
        match &self.form {
            OperandForm::Literal(v) => Some(v),
            _ => None,
        }
    }
}

/// The value of a literal (an integer too large for `i64` is a big one).
fn lit_value(l: &Lit) -> Value {
    match l {
        Lit::Int(s) => runtime::num::parse_int(s),
        Lit::Float(f) => Value::Float(*f),
        Lit::Str(s) => Value::str(s.as_str()),
        Lit::Bool(b) => Value::Bool(*b),
        Lit::Null => Value::Null,
    }
}

/// True for `$` and `$1`, the value a contract checks.
pub(crate) fn is_value(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(v) if v.is_empty() || v == "1")
}

/// Whether `$` (or `$1`) occurs anywhere in `e`.
pub(crate) fn reads_value(e: &Expr) -> bool {
    let args = |a: &[Arg]| {
        a.iter().any(|x| match x {
            Arg::Pos(e) | Arg::Named(_, e) => reads_value(e),
            Arg::Mapping(k, v) => reads_value(k) || reads_value(v),
            Arg::Skip => false,
        })
    };
    match &e.kind {
        ExprKind::Var(_) => is_value(e),
        ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::NsName(..) => false,
        ExprKind::Call(_, a) | ExprKind::List(a) | ExprKind::Map(a) => args(a),
        ExprKind::Method(r, _, a) | ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => {
            reads_value(r) || args(a)
        }
        ExprKind::Op(_, xs) => xs.iter().any(reads_value),
        ExprKind::Attr(r, _) => reads_value(r),
        ExprKind::Dot(r, m) | ExprKind::SafeDot(r, m) => reads_value(r) || reads_value(m),
    }
}

/// The shape of a `check()` predicate.
#[derive(Clone, Debug, PartialEq)]
pub enum Predicate {
    /// `left and right`.
    And(Box<Predicate>, Box<Predicate>),
    /// `subject op bound`, or `bound op subject`.
    Compare {
        /// What is compared.
        subject: Subject,
        /// The comparison as written.
        op: CmpOp,
        /// What it is compared with.
        bound: Operand,
        /// True when the subject is the left operand (the first side
        /// that is a subject, when both are).
        subject_left: bool,
    },
    /// `subject = value` (or `value = subject`).
    Equals {
        /// What must equal the value.
        subject: Subject,
        /// The value.
        value: Operand,
    },
    /// `subject in set`.
    In {
        /// What must be in the set.
        subject: Subject,
        /// The set.
        set: Operand,
    },
    /// `subject.matches(pattern)`.
    Matches {
        /// What must match.
        subject: Subject,
        /// The regular expression (the first argument).
        pattern: Operand,
    },
    /// Anything else.
    Other,
}

/// An ordering comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
}

impl CmpOp {
    fn of(op: &str) -> Option<CmpOp> {
        Some(match op {
            "#operator_>" => CmpOp::Gt,
            "#operator_>=" => CmpOp::Ge,
            "#operator_<" => CmpOp::Lt,
            "#operator_<=" => CmpOp::Le,
            _ => return None,
        })
    }
}

/// What a predicate constrains: `$` itself, a property path under it
/// (`$.a.b`), or the length of either (`len(x)`, `x.len()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// The property names from `$` (empty: the value itself).
    pub path: Vec<String>,
    /// The length of it rather than it.
    pub len: bool,
}

impl Subject {
    /// True for `$` itself (murano's only subject).
    pub fn is_value(&self) -> bool {
        self.path.is_empty() && !self.len
    }

    fn of(e: &Expr) -> Option<Subject> {
        if is_value(e) {
            return Some(Subject {
                path: Vec::new(),
                len: false,
            });
        }
        let inner = match &e.kind {
            ExprKind::Attr(recv, name) => {
                let mut s = Subject::of(recv).filter(|s| !s.len)?;
                s.path.push(name.clone());
                return Some(s);
            }
            ExprKind::Call(n, args) if n == "len" && args.len() == 1 => match &args[0] {
                Arg::Pos(x) => x,
                _ => return None,
            },
            ExprKind::Method(recv, n, args) if n == "len" && args.is_empty() => recv,
            _ => return None,
        };
        let mut s = Subject::of(inner).filter(|s| !s.len)?;
        s.len = true;
        Some(s)
    }
}

impl Predicate {
    /// The shape of predicate `e`.
    pub(crate) fn of(e: &Expr) -> Predicate {
        match &e.kind {
            ExprKind::Op("#operator_and", a) if a.len() == 2 => Predicate::And(
                Box::new(Predicate::of(&a[0])),
                Box::new(Predicate::of(&a[1])),
            ),
            ExprKind::Op(op, a) if a.len() == 2 => {
                if let Some(op) = CmpOp::of(op) {
                    for (s, b, subject_left) in [(&a[0], &a[1], true), (&a[1], &a[0], false)] {
                        if let Some(subject) = Subject::of(s) {
                            return Predicate::Compare {
                                subject,
                                op,
                                bound: Operand::of(b),
                                subject_left,
                            };
                        }
                    }
                } else if *op == "*equal" {
                    for (s, v) in [(&a[0], &a[1]), (&a[1], &a[0])] {
                        if let Some(subject) = Subject::of(s).filter(|s| !s.len) {
                            let value = Operand::of(v);
                            return Predicate::Equals { subject, value };
                        }
                    }
                } else if *op == "#operator_in" {
                    if let Some(subject) = Subject::of(&a[0]).filter(|s| !s.len) {
                        let set = Operand::of(&a[1]);
                        return Predicate::In { subject, set };
                    }
                }
                Predicate::Other
            }
            ExprKind::Method(recv, name, args) if name == "matches" => {
                match (Subject::of(recv).filter(|s| !s.len), args.first()) {
                    (Some(subject), Some(Arg::Pos(p))) => Predicate::Matches {
                        subject,
                        pattern: Operand::of(p),
                    },
                    _ => Predicate::Other,
                }
            }
            _ => Predicate::Other,
        }
    }
}

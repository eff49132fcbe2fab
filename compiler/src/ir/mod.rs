//! The typed IR between the syntax tree and bytecode.
//!
//! Names are resolved (`$`/`$n` to argument slots, functions to their
//! overload sets), lazily evaluated arguments are explicit [`Node::Lambda`]s,
//! operators with fast paths are [`Node::Bin`], and constants are folded.
//! The IR prints as text (see [`Node::print`]); golden tests pin it.

use std::fmt::Write;
use std::sync::Arc;

use runtime::registry::{Form, OverloadSet};
use runtime::{Span, Value};

/// Binary operators with VM fast paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `mod`
    Mod,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
}

impl BinOp {
    /// The reference function implementing the operator.
    pub fn func(self) -> &'static str {
        match self {
            BinOp::Add => "#operator_+",
            BinOp::Sub => "#operator_-",
            BinOp::Mul => "#operator_*",
            BinOp::Div => "#operator_/",
            BinOp::Mod => "#operator_mod",
            BinOp::Eq => "*equal",
            BinOp::Ne => "*not_equal",
            BinOp::Lt => "#operator_<",
            BinOp::Le => "#operator_<=",
            BinOp::Gt => "#operator_>",
            BinOp::Ge => "#operator_>=",
            BinOp::In => "#operator_in",
        }
    }
    /// From a reference function name.
    pub fn from_func(name: &str) -> Option<BinOp> {
        Some(match name {
            "#operator_+" => BinOp::Add,
            "#operator_-" => BinOp::Sub,
            "#operator_*" => BinOp::Mul,
            "#operator_/" => BinOp::Div,
            "#operator_mod" => BinOp::Mod,
            "*equal" => BinOp::Eq,
            "*not_equal" => BinOp::Ne,
            "#operator_<" => BinOp::Lt,
            "#operator_<=" => BinOp::Le,
            "#operator_>" => BinOp::Gt,
            "#operator_>=" => BinOp::Ge,
            "#operator_in" => BinOp::In,
            _ => return None,
        })
    }
}

/// Static types inferred for IR nodes (`Any` when unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// Unknown.
    Any,
    /// `null`.
    Null,
    /// Boolean.
    Bool,
    /// Integer.
    Int,
    /// Float.
    Float,
    /// String.
    Str,
    /// List.
    List,
    /// Dict.
    Dict,
    /// Lambda (a lazily evaluated argument).
    Lambda,
    /// Mapping rule.
    Pair,
}

impl Type {
    fn of(v: &Value) -> Type {
        match v {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Bool,
            Value::Int(_) | Value::BigInt(_) => Type::Int,
            Value::Float(_) => Type::Float,
            Value::Str(_) => Type::Str,
            Value::List(_) => Type::List,
            Value::Dict(_) => Type::Dict,
            _ => Type::Any,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Type::Any => "any",
            Type::Null => "null",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Float => "float",
            Type::Str => "str",
            Type::List => "list",
            Type::Dict => "dict",
            Type::Lambda => "lambda",
            Type::Pair => "pair",
        }
    }
}

/// A resolved call.
#[derive(Clone)]
pub struct Call {
    /// Function name.
    pub name: Arc<str>,
    /// Form.
    pub form: Form,
    /// Overloads known at compile time.
    pub set: Option<Arc<OverloadSet>>,
    /// Positional arguments (`None` = skipped slot).
    pub pos: Vec<Option<Node>>,
    /// Named arguments.
    pub named: Vec<(Arc<str>, Node)>,
    /// Source span.
    pub span: Span,
}

/// An IR node.
#[derive(Clone)]
pub enum Node {
    /// A constant.
    Const(Value),
    /// `$n`.
    Arg(u32),
    /// `$name`.
    Var(Arc<str>),
    /// A local slot (the receiver saved by `?.`).
    Local(u32),
    /// A list literal.
    List(Vec<Node>),
    /// A dict literal.
    Dict(Vec<(Node, Node)>, Span),
    /// A mapping rule.
    Pair(Box<Node>, Box<Node>),
    /// A lazily evaluated argument (compiled as a closure).
    Lambda(Box<Node>),
    /// A call through the registry.
    Call(Box<Call>),
    /// Attribute access `recv.name`.
    Attr(Box<Node>, Arc<str>, Option<Arc<OverloadSet>>, Span),
    /// Binary operator with a fast path.
    Bin(BinOp, Box<Node>, Box<Node>, Option<Arc<OverloadSet>>, Span),
    /// Unary minus.
    Neg(Box<Node>, Option<Arc<OverloadSet>>, Span),
    /// `not`.
    Not(Box<Node>),
    /// `and` (returns the deciding operand).
    And(Box<Node>, Box<Node>),
    /// `or`.
    Or(Box<Node>, Box<Node>),
    /// `recv?.body`: `body` reads the receiver from local `slot`.
    SafeDot(Box<Node>, u32, Box<Node>),
}

impl Node {
    /// The statically known type of the node's value.
    pub fn ty(&self) -> Type {
        match self {
            Node::Const(v) => Type::of(v),
            Node::List(_) => Type::List,
            Node::Dict(..) => Type::Dict,
            Node::Pair(..) => Type::Pair,
            Node::Lambda(_) => Type::Lambda,
            Node::Not(_) => Type::Bool,
            Node::Bin(op, a, b, _, _) => match op {
                BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::In => Type::Bool,
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                    match (a.ty(), b.ty()) {
                        (Type::Int, Type::Int) => Type::Int,
                        (Type::Int | Type::Float, Type::Int | Type::Float) => Type::Float,
                        (Type::Str, Type::Str) if *op == BinOp::Add => Type::Str,
                        _ => Type::Any,
                    }
                }
            },
            Node::Neg(a, _, _) => match a.ty() {
                t @ (Type::Int | Type::Float) => t,
                _ => Type::Any,
            },
            _ => Type::Any,
        }
    }

    /// Prints the IR as an indented S-expression.
    pub fn print(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, 0);
        s
    }

    fn write(&self, out: &mut String, ind: usize) {
        let start = out.len();
        self.write_node(out, ind);
        let t = self.ty();
        if t != Type::Any {
            // Put the type at the end of the node's first line.
            let nl = out[start..].find('\n').map_or(out.len(), |i| start + i);
            out.insert_str(nl, &format!(" : {}", t.name()));
        }
    }

    fn write_node(&self, out: &mut String, ind: usize) {
        let pad = "  ".repeat(ind);
        match self {
            Node::Const(v) => {
                let _ = writeln!(out, "{pad}const {v:?}");
            }
            Node::Arg(n) => {
                let _ = writeln!(out, "{pad}arg ${n}");
            }
            Node::Var(n) => {
                let _ = writeln!(out, "{pad}var ${n}");
            }
            Node::Local(n) => {
                let _ = writeln!(out, "{pad}local l{n}");
            }
            Node::List(items) => {
                let _ = writeln!(out, "{pad}list");
                for i in items {
                    i.write(out, ind + 1);
                }
            }
            Node::Dict(items, _) => {
                let _ = writeln!(out, "{pad}dict");
                for (k, v) in items {
                    k.write(out, ind + 1);
                    v.write(out, ind + 2);
                }
            }
            Node::Pair(k, v) => {
                let _ = writeln!(out, "{pad}pair");
                k.write(out, ind + 1);
                v.write(out, ind + 1);
            }
            Node::Lambda(b) => {
                let _ = writeln!(out, "{pad}lambda");
                b.write(out, ind + 1);
            }
            Node::Call(c) => {
                let _ = writeln!(
                    out,
                    "{pad}call {}{} [{}]",
                    if c.form == Form::Method { "." } else { "" },
                    c.name,
                    c.set.as_ref().map_or(0, |s| s.overloads.len())
                );
                for a in &c.pos {
                    match a {
                        Some(a) => a.write(out, ind + 1),
                        None => {
                            let _ = writeln!(out, "{pad}  skip");
                        }
                    }
                }
                for (n, a) in &c.named {
                    let _ = writeln!(out, "{pad}  {n} =>");
                    a.write(out, ind + 2);
                }
            }
            Node::Attr(r, n, _, _) => {
                let _ = writeln!(out, "{pad}attr .{n}");
                r.write(out, ind + 1);
            }
            Node::Bin(op, a, b, _, _) => {
                let _ = writeln!(out, "{pad}{op:?}");
                a.write(out, ind + 1);
                b.write(out, ind + 1);
            }
            Node::Neg(a, _, _) => {
                let _ = writeln!(out, "{pad}neg");
                a.write(out, ind + 1);
            }
            Node::Not(a) => {
                let _ = writeln!(out, "{pad}not");
                a.write(out, ind + 1);
            }
            Node::And(a, b) => {
                let _ = writeln!(out, "{pad}and");
                a.write(out, ind + 1);
                b.write(out, ind + 1);
            }
            Node::Or(a, b) => {
                let _ = writeln!(out, "{pad}or");
                a.write(out, ind + 1);
                b.write(out, ind + 1);
            }
            Node::SafeDot(r, slot, b) => {
                let _ = writeln!(out, "{pad}safedot l{slot}");
                r.write(out, ind + 1);
                b.write(out, ind + 1);
            }
        }
    }
}

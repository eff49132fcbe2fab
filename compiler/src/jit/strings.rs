//! String-building lambdas (`select($.name.toUpper() + '-' + str($.id))`)
//! run directly: the string is built in one buffer from `$`, its fields
//! and constants, with no frame, no argument lists and no intermediate
//! values. Only the library's `toUpper()`, `toLower()` and `str()` and
//! `+` of strings are taken; a value of a kind the plan was not made for
//! (a field that is no string, a missing key, `str()` of anything but an
//! integer or a string) hands the call to the interpreter, which answers
//! (an error included) in its own words.

use std::sync::Arc;

use runtime::registry::Form;
use runtime::Value;

use crate::ir::{BinOp, Expr, Node, NodeId};

/// A value read: `$`, or a field of a value read (`$.a.b`, keys interned).
enum Read {
    Arg,
    Field(Box<Read>, Value),
}

impl Read {
    fn of(e: &Expr, id: NodeId) -> Option<Read> {
        match &e[id] {
            Node::Arg(1) => Some(Read::Arg),
            Node::Attr(recv, name, _, _) => Some(Read::Field(
                Box::new(Read::of(e, *recv)?),
                Value::Str(runtime::value::intern(name)),
            )),
            _ => None,
        }
    }

    /// The value read from `arg`, when every step reads a dict's entry.
    fn get<'v>(&self, arg: &'v Value) -> Option<&'v Value> {
        match self {
            Read::Arg => Some(arg),
            Read::Field(recv, key) => match recv.get(arg)? {
                Value::Dict(d) => runtime::value::get_interned(d, key),
                _ => None,
            },
        }
    }
}

/// How a part of the string is made.
enum Part {
    Const(String),
    /// A value read that must be a string.
    Text(Read),
    /// `str(x)` of a value read: an integer's digits, a string itself.
    Str(Read),
    Upper(Box<Part>),
    Lower(Box<Part>),
    /// `a + b + ...` of strings.
    Concat(Vec<Part>),
}

impl Part {
    /// The plan of node `id`; `sure` is set when some part can only be a
    /// string (a constant or a string function), so that `$.a + $.b`,
    /// which may add numbers, is left to the arithmetic tier.
    fn of(e: &Expr, id: NodeId, sure: &mut bool) -> Option<Part> {
        match &e[id] {
            Node::Const(Value::Str(s)) => {
                *sure = true;
                Some(Part::Const(s.to_string()))
            }
            Node::Bin(BinOp::Add, l, r, _, _) => {
                let mut parts = Vec::new();
                for side in [*l, *r] {
                    match Part::of(e, side, sure)? {
                        Part::Concat(more) => parts.extend(more),
                        p => parts.push(p),
                    }
                }
                Some(Part::Concat(parts))
            }
            Node::Call(c) if c.named.is_empty() && super::codegen::library(c) => {
                let args = e.list(c.pos);
                let part = match (&*c.name, c.form, args) {
                    ("toUpper", Form::Method, [recv]) => {
                        Part::Upper(Box::new(Part::of(e, *recv, &mut false)?))
                    }
                    ("toLower", Form::Method, [recv]) => {
                        Part::Lower(Box::new(Part::of(e, *recv, &mut false)?))
                    }
                    ("str", Form::Function, [arg]) => Part::Str(Read::of(e, *arg)?),
                    _ => return None,
                };
                *sure = true;
                Some(part)
            }
            _ => Read::of(e, id).map(Part::Text),
        }
    }

    /// Appends this part for `$` = `arg` to `out`; `None` when a value is
    /// not of the kind the plan takes.
    fn push(&self, arg: &Value, out: &mut String) -> Option<()> {
        match self {
            Part::Const(s) => out.push_str(s),
            Part::Text(r) => out.push_str(r.get(arg)?.as_str()?),
            Part::Str(r) => match r.get(arg)? {
                Value::Str(s) => out.push_str(s),
                Value::Int(i) => {
                    use std::fmt::Write;
                    write!(out, "{i}").ok()?
                }
                _ => return None,
            },
            Part::Upper(p) | Part::Lower(p) => {
                let from = out.len();
                p.push(arg, out)?;
                let upper = matches!(self, Part::Upper(_));
                if out[from..].is_ascii() {
                    let tail = &mut out[from..];
                    if upper {
                        tail.make_ascii_uppercase()
                    } else {
                        tail.make_ascii_lowercase()
                    }
                } else {
                    // Full Unicode case mapping, as the library's
                    // `toUpper()`/`toLower()` (`str::to_uppercase`).
                    let mapped = if upper {
                        out[from..].to_uppercase()
                    } else {
                        out[from..].to_lowercase()
                    };
                    out.truncate(from);
                    out.push_str(&mapped);
                }
            }
            Part::Concat(parts) => {
                for p in parts {
                    p.push(arg, out)?;
                }
            }
        }
        Some(())
    }
}

/// A string-building lambda's plan, run as its [`vm::bc::Fast`] tier.
pub(super) struct Build(Part);

impl Build {
    /// The plan of lambda body `body` of `e`, when it builds a string from
    /// what the plan takes.
    pub(super) fn compile(e: &Expr, body: NodeId) -> Option<Arc<Build>> {
        let mut sure = false;
        let part = Part::of(e, body, &mut sure)?;
        (sure && !matches!(part, Part::Const(_))).then(|| Arc::new(Build(part)))
    }
}

impl vm::bc::Fast for Build {
    fn call(&self, env: &runtime::Env, arg: &Value) -> Option<Value> {
        let o = env.options();
        if o.jit == super::Mode::Off || o.legacy {
            return None;
        }
        let mut out = String::new();
        self.0.push(arg, &mut out)?;
        // The interpreter's `+` refuses a string past the memory quota.
        env.guard_size(out.len()).ok()?;
        Some(Value::str(out))
    }
}

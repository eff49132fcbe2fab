//! Bytecode: instructions, chunks, call sites, disassembly.

pub mod ops;

use std::fmt::Write;
use std::sync::Arc;

use runtime::registry::{Form, OverloadSet};
use runtime::{Span, Value};

pub use ops::Op;

/// How an argument of a call site is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// An evaluated value.
    Val,
    /// A lazily compiled argument (a closure).
    Thunk,
    /// An empty slot; nothing is pushed.
    Skip,
}

/// A call site: the function name, its overloads resolved at compile time,
/// and the shape of the arguments.
#[derive(Clone)]
pub struct CallSite {
    /// Function name (`where`, `#operator_+`, ...).
    pub name: Arc<str>,
    /// Function or method form.
    pub form: Form,
    /// The overloads known at compile time.
    pub set: Option<Arc<OverloadSet>>,
    /// Positional arguments (receiver first for methods).
    pub pos: Vec<ArgKind>,
    /// Named arguments.
    pub named: Vec<(Arc<str>, ArgKind)>,
    /// Source span of the call.
    pub span: Span,
}

impl CallSite {
    /// Number of values the call pops.
    pub fn arity(&self) -> usize {
        self.pos.iter().filter(|k| **k != ArgKind::Skip).count()
            + self.named.iter().filter(|k| k.1 != ArgKind::Skip).count()
    }
}

/// A compiled unit: an expression or a lambda body.
pub struct Chunk {
    /// Encoded instructions.
    pub code: Vec<u8>,
    /// Constant pool.
    pub consts: Vec<Value>,
    /// Call sites.
    pub sites: Vec<CallSite>,
    /// Nested chunks (lambdas).
    pub chunks: Vec<Arc<Chunk>>,
    /// Source spans by instruction offset (sorted by pc).
    pub spans: Vec<(u32, Span)>,
    /// Number of local slots.
    pub nlocals: u32,
    /// True for the closure of a lazily compiled argument.
    pub thunk: bool,
    /// A faster way to run a one-argument lambda, tried before the code
    /// (see [`Fast`]).
    pub fast: Option<Arc<dyn Fast>>,
}

/// A faster way to run a lambda called with one argument (`$`), which the
/// compiler attaches to its chunk: machine code for a condition, a direct
/// read for `$.name`. It answers only what it is sure of; `None` runs the
/// code.
pub trait Fast: Send + Sync {
    /// The lambda's value for `$` = `arg`, or `None`.
    fn call(&self, env: &runtime::Env, arg: &Value) -> Option<Value>;
}

impl Chunk {
    /// The span of the instruction at `pc`.
    pub fn span_at(&self, pc: usize) -> Option<Span> {
        let i = self.spans.partition_point(|(p, _)| *p as usize <= pc);
        if i == 0 {
            None
        } else {
            Some(self.spans[i - 1].1)
        }
    }

    /// Disassembles the chunk and its nested chunks.
    pub fn disas(&self) -> String {
        let mut out = String::new();
        self.disas_into(&mut out, "main");
        out
    }

    fn disas_into(&self, out: &mut String, name: &str) {
        let _ = writeln!(
            out,
            "chunk {name}{} (locals={}):",
            if self.thunk { " [thunk]" } else { "" },
            self.nlocals
        );
        match ops::decode_all(&self.code) {
            Some(list) => {
                for (pc, op) in list {
                    let _ = write!(out, "  {pc:04}  {:<16} {}", op.mnemonic(), op.operands());
                    let note = match op {
                        Op::Const { idx } => self
                            .consts
                            .get(idx as usize)
                            .map(|v| format!("{v:?}"))
                            .unwrap_or_default(),
                        Op::Var { name } => self
                            .consts
                            .get(name as usize)
                            .map(|v| format!("${}", v.as_str().unwrap_or("?")))
                            .unwrap_or_default(),
                        Op::Call { site }
                        | Op::Attr { site }
                        | Op::Add { site }
                        | Op::Sub { site }
                        | Op::Mul { site }
                        | Op::Div { site }
                        | Op::Mod { site }
                        | Op::Eq { site }
                        | Op::Ne { site }
                        | Op::Lt { site }
                        | Op::Le { site }
                        | Op::Gt { site }
                        | Op::Ge { site }
                        | Op::In { site }
                        | Op::Neg { site } => self
                            .sites
                            .get(site as usize)
                            .map(describe_site)
                            .unwrap_or_default(),
                        _ => String::new(),
                    };
                    if note.is_empty() {
                        out.push('\n');
                    } else {
                        let _ = writeln!(out, "    ; {note}");
                    }
                }
            }
            None => out.push_str("  <undecodable>\n"),
        }
        for (i, c) in self.chunks.iter().enumerate() {
            c.disas_into(out, &format!("{name}.{i}"));
        }
    }
}

fn describe_site(s: &CallSite) -> String {
    let k = |k: &ArgKind| match k {
        ArgKind::Val => "v",
        ArgKind::Thunk => "lazy",
        ArgKind::Skip => "_",
    };
    let mut parts: Vec<String> = s.pos.iter().map(|a| k(a).to_string()).collect();
    for (n, a) in &s.named {
        parts.push(format!("{n}=>{}", k(a)));
    }
    format!(
        "{}{}({}) [{} overloads]",
        if s.form == Form::Method { "." } else { "" },
        s.name,
        parts.join(", "),
        s.set.as_ref().map_or(0, |x| x.overloads.len())
    )
}

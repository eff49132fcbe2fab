//! Emission: IR -> bytecode chunks.

use std::sync::Arc;

use runtime::registry::Form;
use runtime::{Span, Value};
use vm::bc::{ArgKind, CallSite, Chunk, Op};

use crate::ir::{self, BinOp, Node, NodeId};

/// The buffers of the chunk being built: reused from chunk to chunk (and,
/// through a per-thread pool, from expression to expression), so that
/// building a chunk allocates only its final, exactly sized vectors.
#[derive(Default)]
struct Bufs {
    code: Vec<u8>,
    consts: Vec<Value>,
    sites: Vec<CallSite>,
    chunks: Vec<Arc<Chunk>>,
    spans: Vec<(u32, Span)>,
}

// Per-thread scratch buffers and immutable shared names: each chunk built
// moves its buffers' contents out (leaving them empty), so no chunk depends
// on what an earlier emission left; the names never change.
thread_local! {
    /// Spare buffers, one set per lambda nesting level.
    static POOL: std::cell::Cell<Vec<Bufs>> = const { std::cell::Cell::new(Vec::new()) };
    /// The names of the sites `simple_site` makes, shared.
    static NAMES: [Arc<str>; 14] = NAME_STRS.map(Arc::from);
}

/// `#attr`, unary minus, then the [`BinOp`]s in declaration order (see
/// `simple_site`).
const NAME_STRS: [&str; 14] = [
    "#attr",
    "#unary_operator_-",
    "#operator_+",
    "#operator_-",
    "#operator_*",
    "#operator_/",
    "#operator_mod",
    "*equal",
    "*not_equal",
    "#operator_<",
    "#operator_<=",
    "#operator_>",
    "#operator_>=",
    "#operator_in",
];

/// Builds chunks: the one of an expression and those of its lambdas.
pub struct Emitter<'a> {
    /// Shared with the lambdas' fast tiers ([`crate::jit::lambda_tier`]).
    ir: &'a Arc<ir::Expr>,
    /// Buffers by lambda nesting level; `levels[depth]` is in use.
    levels: Vec<Bufs>,
    depth: usize,
}

/// Moves the contents of `v` into a new, exactly sized vector, leaving
/// `v` empty with its capacity.
fn take<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    out.append(v);
    out
}

impl Emitter<'_> {
    /// Compiles an expression into a chunk ending with `Return`.
    pub fn chunk(ir: &Arc<ir::Expr>) -> Chunk {
        let mut e = Emitter {
            ir,
            levels: POOL.try_with(|p| p.take()).unwrap_or_default(),
            depth: 0,
        };
        let c = e.build(ir.root, false);
        // Keep the buffers unless an unusually large expression grew them.
        if e.levels.iter().all(|b| b.code.capacity() <= 1 << 16) {
            let _ = POOL.try_with(|p| p.set(e.levels));
        }
        c
    }

    /// Builds the chunk of `node` at the current depth.
    fn build(&mut self, node: NodeId, thunk: bool) -> Chunk {
        if self.levels.len() <= self.depth {
            self.levels.push(Bufs::default());
        }
        self.node(node);
        self.op(Op::Return {});
        let b = &mut self.levels[self.depth];
        Chunk {
            code: take(&mut b.code),
            consts: take(&mut b.consts),
            sites: take(&mut b.sites),
            chunks: take(&mut b.chunks),
            spans: take(&mut b.spans),
            nlocals: self.ir.nlocals,
            thunk,
            fast: None,
        }
    }

    fn bufs(&mut self) -> &mut Bufs {
        &mut self.levels[self.depth]
    }

    fn op(&mut self, op: Op) -> usize {
        let code = &mut self.bufs().code;
        let at = code.len();
        op.encode(code);
        at
    }

    fn op_at(&mut self, op: Op, span: Span) {
        let b = self.bufs();
        let at = b.code.len() as u32;
        b.spans.push((at, span));
        op.encode(&mut b.code);
    }

    fn konst(&mut self, v: Value) -> u32 {
        let consts = &mut self.bufs().consts;
        // Reuse identical string constants (names).
        if let Value::Str(s) = &v {
            if let Some(i) = consts
                .iter()
                .position(|c| matches!(c, Value::Str(t) if t == s))
            {
                return i as u32;
            }
        }
        consts.push(v);
        (consts.len() - 1) as u32
    }

    fn patch(&mut self, at: usize, target: usize) {
        let t = (target as u32).to_le_bytes();
        self.bufs().code[at + 1..at + 5].copy_from_slice(&t);
    }

    fn site(&mut self, s: CallSite) -> u32 {
        let sites = &mut self.bufs().sites;
        sites.push(s);
        (sites.len() - 1) as u32
    }

    /// A site of `n` values for `#attr` (`None`), a binary operator, or
    /// unary minus (`Some(None)`).
    fn simple_site(
        &mut self,
        op: Option<Option<BinOp>>,
        set: &Option<Arc<runtime::registry::OverloadSet>>,
        n: usize,
        span: Span,
    ) -> u32 {
        let i = match op {
            None => 0,
            Some(None) => 1,
            Some(Some(op)) => op as usize + 2,
        };
        self.site(CallSite {
            name: NAMES
                .try_with(|names| names[i].clone())
                .unwrap_or_else(|_| NAME_STRS[i].into()),
            form: Form::Function,
            set: set.clone(),
            pos: vec![ArgKind::Val; n],
            named: vec![],
            span,
        })
    }

    fn arg(&mut self, n: NodeId) -> ArgKind {
        self.node(n);
        match self.ir[n] {
            Node::Lambda(_) => ArgKind::Thunk,
            _ => ArgKind::Val,
        }
    }

    fn node(&mut self, id: NodeId) {
        let ir = self.ir;
        let n = &ir[id];
        match n {
            Node::Const(v) => match v {
                Value::Null => {
                    self.op(Op::Null {});
                }
                Value::Bool(true) => {
                    self.op(Op::True {});
                }
                Value::Bool(false) => {
                    self.op(Op::False {});
                }
                _ => {
                    let idx = self.konst(v.clone());
                    self.op(Op::Const { idx });
                }
            },
            Node::Arg(k) => {
                self.op(Op::Arg { n: *k });
            }
            Node::Var(name) => {
                let idx = self.konst(Value::Str(name.clone()));
                self.op(Op::Var { name: idx });
            }
            Node::Local(s) => {
                self.op(Op::LoadLocal { slot: *s });
            }
            Node::List(items) => {
                for &i in ir.list(*items) {
                    self.node(i);
                }
                self.op(Op::List {
                    n: items.len() as u32,
                });
            }
            Node::Dict(items, span) => {
                for &i in ir.list(*items) {
                    self.node(i);
                }
                self.op_at(
                    Op::Dict {
                        n: (items.len() / 2) as u32,
                    },
                    *span,
                );
            }
            Node::Pair(k, v) => {
                self.node(*k);
                self.node(*v);
                self.op(Op::Pair {});
            }
            Node::Lambda(body) => {
                self.depth += 1;
                let mut c = self.build(*body, true);
                self.depth -= 1;
                c.fast = crate::jit::lambda_tier(self.ir, *body);
                let chunks = &mut self.bufs().chunks;
                chunks.push(Arc::new(c));
                let idx = (chunks.len() - 1) as u32;
                self.op(Op::Closure { chunk: idx });
            }
            Node::Call(c) => {
                let mut pos = Vec::with_capacity(c.pos.len());
                for &a in ir.list(c.pos) {
                    if a == NodeId::SKIP {
                        pos.push(ArgKind::Skip);
                    } else {
                        pos.push(self.arg(a));
                    }
                }
                let mut named = Vec::with_capacity(c.named.len());
                for (name, a) in ir.named(c.named) {
                    let k = self.arg(*a);
                    named.push((name.clone(), k));
                }
                let site = self.site(CallSite {
                    name: c.name.clone(),
                    form: c.form,
                    set: c.set.clone(),
                    pos,
                    named,
                    span: c.span,
                });
                self.op_at(Op::Call { site }, c.span);
            }
            Node::Attr(r, name, set, span) => {
                self.node(*r);
                let idx = self.konst(Value::Str(name.clone()));
                self.op(Op::Const { idx });
                let site = self.simple_site(None, set, 2, *span);
                self.op_at(Op::Attr { site }, *span);
            }
            Node::Bin(op, a, b, set, span) => {
                self.node(*a);
                self.node(*b);
                let site = self.simple_site(Some(Some(*op)), set, 2, *span);
                let o = match op {
                    BinOp::Add => Op::Add { site },
                    BinOp::Sub => Op::Sub { site },
                    BinOp::Mul => Op::Mul { site },
                    BinOp::Div => Op::Div { site },
                    BinOp::Mod => Op::Mod { site },
                    BinOp::Eq => Op::Eq { site },
                    BinOp::Ne => Op::Ne { site },
                    BinOp::Lt => Op::Lt { site },
                    BinOp::Le => Op::Le { site },
                    BinOp::Gt => Op::Gt { site },
                    BinOp::Ge => Op::Ge { site },
                    BinOp::In => Op::In { site },
                };
                self.op_at(o, *span);
            }
            Node::Neg(a, set, span) => {
                self.node(*a);
                let site = self.simple_site(Some(None), set, 1, *span);
                self.op_at(Op::Neg { site }, *span);
            }
            Node::Not(a) => {
                self.node(*a);
                self.op(Op::Not {});
            }
            Node::And(a, b) | Node::Or(a, b) => {
                self.node(*a);
                let j = if matches!(n, Node::And(..)) {
                    self.op(Op::JumpIfFalseKeep { target: 0 })
                } else {
                    self.op(Op::JumpIfTrueKeep { target: 0 })
                };
                self.node(*b);
                let end = self.bufs().code.len();
                self.patch(j, end);
            }
            Node::SafeDot(r, slot, body) => {
                self.node(*r);
                let j = self.op(Op::JumpIfNullKeep { target: 0 });
                self.op(Op::StoreLocal { slot: *slot });
                self.node(*body);
                let end = self.bufs().code.len();
                self.patch(j, end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_names_spell_the_operators() {
        use BinOp::*;
        for op in [Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, In] {
            assert_eq!(NAME_STRS[op as usize + 2], op.func());
        }
    }
}

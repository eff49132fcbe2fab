//! Emission: IR -> bytecode chunks.

use std::sync::Arc;

use runtime::registry::Form;
use runtime::{Span, Value};
use vm::bc::{ArgKind, CallSite, Chunk, Op};

use crate::ir::{BinOp, Node};

/// Builds one chunk.
pub struct Emitter {
    code: Vec<u8>,
    consts: Vec<Value>,
    sites: Vec<CallSite>,
    chunks: Vec<Arc<Chunk>>,
    spans: Vec<(u32, Span)>,
    nlocals: u32,
}

impl Emitter {
    fn new(nlocals: u32) -> Emitter {
        Emitter {
            code: Vec::new(),
            consts: Vec::new(),
            sites: Vec::new(),
            chunks: Vec::new(),
            spans: Vec::new(),
            nlocals,
        }
    }

    /// Compiles a node into a chunk ending with `Return`.
    pub fn chunk(node: &Node, nlocals: u32, thunk: bool) -> Chunk {
        let mut e = Emitter::new(nlocals);
        e.node(node);
        e.op(Op::Return {});
        Chunk {
            code: e.code,
            consts: e.consts,
            sites: e.sites,
            chunks: e.chunks,
            spans: e.spans,
            nlocals: e.nlocals,
            thunk,
        }
    }

    fn op(&mut self, op: Op) -> usize {
        let at = self.code.len();
        op.encode(&mut self.code);
        at
    }

    fn op_at(&mut self, op: Op, span: Span) {
        let at = self.code.len() as u32;
        self.spans.push((at, span));
        op.encode(&mut self.code);
    }

    fn konst(&mut self, v: Value) -> u32 {
        // Reuse identical string constants (names).
        if let Value::Str(s) = &v {
            if let Some(i) = self
                .consts
                .iter()
                .position(|c| matches!(c, Value::Str(t) if t == s))
            {
                return i as u32;
            }
        }
        self.consts.push(v);
        (self.consts.len() - 1) as u32
    }

    fn patch(&mut self, at: usize, target: usize) {
        let t = (target as u32).to_le_bytes();
        self.code[at + 1..at + 5].copy_from_slice(&t);
    }

    fn site(&mut self, s: CallSite) -> u32 {
        self.sites.push(s);
        (self.sites.len() - 1) as u32
    }

    fn simple_site(
        &mut self,
        name: &str,
        set: &Option<Arc<runtime::registry::OverloadSet>>,
        n: usize,
        span: Span,
    ) -> u32 {
        self.site(CallSite {
            name: name.into(),
            form: Form::Function,
            set: set.clone(),
            pos: vec![ArgKind::Val; n],
            named: vec![],
            span,
        })
    }

    fn arg(&mut self, n: &Node) -> ArgKind {
        match n {
            Node::Lambda(_) => {
                self.node(n);
                ArgKind::Thunk
            }
            _ => {
                self.node(n);
                ArgKind::Val
            }
        }
    }

    fn node(&mut self, n: &Node) {
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
                let idx = self.konst(Value::str(&**name));
                self.op(Op::Var { name: idx });
            }
            Node::Local(s) => {
                self.op(Op::LoadLocal { slot: *s });
            }
            Node::List(items) => {
                for i in items {
                    self.node(i);
                }
                self.op(Op::List {
                    n: items.len() as u32,
                });
            }
            Node::Dict(items, span) => {
                for (k, v) in items {
                    self.node(k);
                    self.node(v);
                }
                self.op_at(
                    Op::Dict {
                        n: items.len() as u32,
                    },
                    *span,
                );
            }
            Node::Pair(k, v) => {
                self.node(k);
                self.node(v);
                self.op(Op::Pair {});
            }
            Node::Lambda(body) => {
                let c = Emitter::chunk(body, self.nlocals, true);
                self.chunks.push(Arc::new(c));
                let idx = (self.chunks.len() - 1) as u32;
                self.op(Op::Closure { chunk: idx });
            }
            Node::Call(c) => {
                let mut pos = Vec::new();
                for a in &c.pos {
                    match a {
                        Some(a) => pos.push(self.arg(a)),
                        None => pos.push(ArgKind::Skip),
                    }
                }
                let mut named = Vec::new();
                for (name, a) in &c.named {
                    let k = self.arg(a);
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
                self.node(r);
                let idx = self.konst(Value::Str(runtime::value::intern(name)));
                self.op(Op::Const { idx });
                let site = self.simple_site("#attr", set, 2, *span);
                self.op_at(Op::Attr { site }, *span);
            }
            Node::Bin(op, a, b, set, span) => {
                self.node(a);
                self.node(b);
                let site = self.simple_site(op.func(), set, 2, *span);
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
                self.node(a);
                let site = self.simple_site("#unary_operator_-", set, 1, *span);
                self.op_at(Op::Neg { site }, *span);
            }
            Node::Not(a) => {
                self.node(a);
                self.op(Op::Not {});
            }
            Node::And(a, b) | Node::Or(a, b) => {
                self.node(a);
                let j = if matches!(n, Node::And(..)) {
                    self.op(Op::JumpIfFalseKeep { target: 0 })
                } else {
                    self.op(Op::JumpIfTrueKeep { target: 0 })
                };
                self.node(b);
                let end = self.code.len();
                self.patch(j, end);
            }
            Node::SafeDot(r, slot, body) => {
                self.node(r);
                let j = self.op(Op::JumpIfNullKeep { target: 0 });
                self.op(Op::StoreLocal { slot: *slot });
                self.node(body);
                let end = self.code.len();
                self.patch(j, end);
            }
        }
    }
}

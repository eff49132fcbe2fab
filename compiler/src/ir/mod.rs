//! The typed IR between the syntax tree and bytecode.
//!
//! Names are resolved (`$`/`$n` to argument slots, functions to their
//! overload sets), lazily evaluated arguments are explicit [`Node::Lambda`]s,
//! operators with fast paths are [`Node::Bin`], and constants are folded.
//!
//! The nodes of an expression live in one [`Expr`] and refer to each other
//! by [`NodeId`] (as Cranelift's instructions do): building the IR of an
//! expression makes a few vectors rather than a box per node. Lists of
//! nodes (call arguments, list items, dict entries) are [`Refs`] ranges of
//! one shared vector. The IR prints as text (see [`Expr::print`]); golden
//! tests pin it.

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

/// A node of an [`Expr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeId(u32);

impl NodeId {
    /// An empty argument slot (`f(a,,b)`) in a call's positional
    /// arguments.
    pub const SKIP: NodeId = NodeId(u32::MAX);

    /// The node's index in [`Expr::nodes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A list of nodes: a range of [`Expr::refs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refs {
    start: u32,
    len: u32,
}

impl Refs {
    /// The number of nodes.
    pub fn len(self) -> usize {
        self.len as usize
    }
    /// Whether the list is empty.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
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
    /// Positional arguments ([`NodeId::SKIP`] = skipped slot).
    pub pos: Refs,
    /// Named arguments: a range of [`Expr::named`].
    pub named: Refs,
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
    /// `$name` (the name as the string constant the bytecode loads).
    Var(Arc<String>),
    /// A local slot (the receiver saved by `?.`).
    Local(u32),
    /// A list literal.
    List(Refs),
    /// A dict literal: keys and values alternate.
    Dict(Refs, Span),
    /// A mapping rule.
    Pair(NodeId, NodeId),
    /// A lazily evaluated argument (compiled as a closure).
    Lambda(NodeId),
    /// A call through the registry.
    Call(Box<Call>),
    /// Attribute access `recv.name` (the name interned, see
    /// `runtime::value::intern`).
    Attr(NodeId, Arc<String>, Option<Arc<OverloadSet>>, Span),
    /// Binary operator with a fast path.
    Bin(BinOp, NodeId, NodeId, Option<Arc<OverloadSet>>, Span),
    /// Unary minus.
    Neg(NodeId, Option<Arc<OverloadSet>>, Span),
    /// `not`.
    Not(NodeId),
    /// `and` (returns the deciding operand).
    And(NodeId, NodeId),
    /// `or`.
    Or(NodeId, NodeId),
    /// `recv?.body`: `body` reads the receiver from local `slot`.
    SafeDot(NodeId, u32, NodeId),
}

/// The IR of one expression.
#[derive(Clone, Default)]
pub struct Expr {
    /// The nodes, children before parents.
    pub nodes: Vec<Node>,
    /// The node lists that [`Refs`] index.
    pub refs: Vec<NodeId>,
    /// Named call arguments.
    pub named: Vec<(Arc<str>, NodeId)>,
    /// The expression's node.
    pub root: NodeId,
    /// Number of local slots used.
    pub nlocals: u32,
}

impl std::ops::Index<NodeId> for Expr {
    type Output = Node;
    fn index(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
}

impl Expr {
    /// The nodes of a list.
    pub fn list(&self, r: Refs) -> &[NodeId] {
        &self.refs[r.range()]
    }
    /// The named arguments of a call.
    pub fn named(&self, r: Refs) -> &[(Arc<str>, NodeId)] {
        &self.named[r.range()]
    }

    /// The statically known type of a node's value.
    pub fn ty(&self, id: NodeId) -> Type {
        match &self[id] {
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
                    match (self.ty(*a), self.ty(*b)) {
                        (Type::Int, Type::Int) => Type::Int,
                        (Type::Int | Type::Float, Type::Int | Type::Float) => Type::Float,
                        (Type::Str, Type::Str) if *op == BinOp::Add => Type::Str,
                        _ => Type::Any,
                    }
                }
            },
            Node::Neg(a, _, _) => match self.ty(*a) {
                t @ (Type::Int | Type::Float) => t,
                _ => Type::Any,
            },
            _ => Type::Any,
        }
    }

    /// Prints the IR as an indented S-expression.
    pub fn print(&self) -> String {
        let mut s = String::new();
        self.write(self.root, &mut s, 0);
        s
    }

    fn write(&self, id: NodeId, out: &mut String, ind: usize) {
        let start = out.len();
        self.write_node(id, out, ind);
        let t = self.ty(id);
        if t != Type::Any {
            // Put the type at the end of the node's first line.
            let nl = out[start..].find('\n').map_or(out.len(), |i| start + i);
            out.insert_str(nl, &format!(" : {}", t.name()));
        }
    }

    fn write_node(&self, id: NodeId, out: &mut String, ind: usize) {
        let pad = "  ".repeat(ind);
        match &self[id] {
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
                for &i in self.list(*items) {
                    self.write(i, out, ind + 1);
                }
            }
            Node::Dict(items, _) => {
                let _ = writeln!(out, "{pad}dict");
                for kv in self.list(*items).chunks(2) {
                    self.write(kv[0], out, ind + 1);
                    self.write(kv[1], out, ind + 2);
                }
            }
            Node::Pair(k, v) => {
                let _ = writeln!(out, "{pad}pair");
                self.write(*k, out, ind + 1);
                self.write(*v, out, ind + 1);
            }
            Node::Lambda(b) => {
                let _ = writeln!(out, "{pad}lambda");
                self.write(*b, out, ind + 1);
            }
            Node::Call(c) => {
                let _ = writeln!(
                    out,
                    "{pad}call {}{} [{}]",
                    if c.form == Form::Method { "." } else { "" },
                    c.name,
                    c.set.as_ref().map_or(0, |s| s.overloads.len())
                );
                for &a in self.list(c.pos) {
                    if a == NodeId::SKIP {
                        let _ = writeln!(out, "{pad}  skip");
                    } else {
                        self.write(a, out, ind + 1);
                    }
                }
                for (n, a) in self.named(c.named) {
                    let _ = writeln!(out, "{pad}  {n} =>");
                    self.write(*a, out, ind + 2);
                }
            }
            Node::Attr(r, n, _, _) => {
                let _ = writeln!(out, "{pad}attr .{n}");
                self.write(*r, out, ind + 1);
            }
            Node::Bin(op, a, b, _, _) => {
                let _ = writeln!(out, "{pad}{op:?}");
                self.write(*a, out, ind + 1);
                self.write(*b, out, ind + 1);
            }
            Node::Neg(a, _, _) => {
                let _ = writeln!(out, "{pad}neg");
                self.write(*a, out, ind + 1);
            }
            Node::Not(a) => {
                let _ = writeln!(out, "{pad}not");
                self.write(*a, out, ind + 1);
            }
            Node::And(a, b) => {
                let _ = writeln!(out, "{pad}and");
                self.write(*a, out, ind + 1);
                self.write(*b, out, ind + 1);
            }
            Node::Or(a, b) => {
                let _ = writeln!(out, "{pad}or");
                self.write(*a, out, ind + 1);
                self.write(*b, out, ind + 1);
            }
            Node::SafeDot(r, slot, b) => {
                let _ = writeln!(out, "{pad}safedot l{slot}");
                self.write(*r, out, ind + 1);
                self.write(*b, out, ind + 1);
            }
        }
    }
}

/// Builds an [`Expr`]: nodes are added children first; a list is made
/// from the nodes pushed on a scratch stack since a mark.
#[derive(Default)]
pub struct Builder {
    nodes: Vec<Node>,
    refs: Vec<NodeId>,
    named: Vec<(Arc<str>, NodeId)>,
    stack: Vec<NodeId>,
    named_stack: Vec<(Arc<str>, NodeId)>,
}

impl Builder {
    /// Adds a node.
    pub fn add(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        NodeId(self.nodes.len() as u32 - 1)
    }
    /// The node `id`.
    pub fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    /// Removes the nodes added since `id` was (`id` included), when nothing
    /// refers to them.
    pub fn truncate(&mut self, id: NodeId) {
        self.nodes.truncate(id.index());
    }
    /// The next id `add` returns.
    pub fn next_id(&self) -> NodeId {
        NodeId(self.nodes.len() as u32)
    }
    /// Marks the scratch stacks (see `push`, `refs`).
    pub fn mark(&self) -> (usize, usize) {
        (self.stack.len(), self.named_stack.len())
    }
    /// Pushes a list item.
    pub fn push(&mut self, id: NodeId) {
        self.stack.push(id);
    }
    /// Pushes a named argument.
    pub fn push_named(&mut self, name: Arc<str>, id: NodeId) {
        self.named_stack.push((name, id));
    }
    /// The items pushed since `mark`, as a list (and the named arguments).
    pub fn refs(&mut self, mark: (usize, usize)) -> (Refs, Refs) {
        let start = self.refs.len() as u32;
        self.refs.extend_from_slice(&self.stack[mark.0..]);
        self.stack.truncate(mark.0);
        let pos = Refs {
            start,
            len: self.refs.len() as u32 - start,
        };
        let mut named = Refs::default();
        if self.named_stack.len() > mark.1 {
            named.start = self.named.len() as u32;
            named.len = (self.named_stack.len() - mark.1) as u32;
            self.named.extend(self.named_stack.drain(mark.1..));
        }
        (pos, named)
    }
    /// Moves the nodes out (into exactly sized vectors), leaving the
    /// builder empty for reuse.
    pub fn finish(&mut self, root: NodeId, nlocals: u32) -> Expr {
        fn take<T>(v: &mut Vec<T>) -> Vec<T> {
            let mut out = Vec::with_capacity(v.len());
            out.append(v);
            out
        }
        self.stack.clear();
        self.named_stack.clear();
        Expr {
            nodes: take(&mut self.nodes),
            refs: take(&mut self.refs),
            named: take(&mut self.named),
            root,
            nlocals,
        }
    }
    /// Whether the builder's vectors are of an ordinary size (worth
    /// keeping for the next expression).
    pub fn is_small(&self) -> bool {
        self.nodes.capacity() <= 1 << 12 && self.refs.capacity() <= 1 << 12
    }
    /// Empties the builder.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.refs.clear();
        self.named.clear();
        self.stack.clear();
        self.named_stack.clear();
    }
}

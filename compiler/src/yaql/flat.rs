//! The parser's syntax tree, flat: the nodes of one expression in a
//! vector, children before parents, referring to each other by index and
//! borrowing their names from the source.
//!
//! The parser builds this form because its symbols stay small (an index,
//! not a 64-byte node) and a node costs no allocation; lowering reads it
//! directly. [`Flat::tree`] makes the boxed [`ast`] tree that analyses of
//! MuranoPL contracts and forms match on, and [`Flat::from_tree`] goes
//! back to compile such a tree. Both walk without recursion, so a tree of
//! any depth converts (lowering refuses the deep ones, with a position).

use std::borrow::Cow;

use runtime::Span;

use super::ast;

/// A node's index in its [`Flat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Id(u32);

impl Id {
    /// The index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A call's arguments: a range of [`Flat::args`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Args {
    start: u32,
    len: u32,
}

/// An operator's one or two operands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operands {
    ids: [Id; 2],
    len: u8,
}

impl Operands {
    /// The operands, left first.
    pub fn as_slice(&self) -> &[Id] {
        &self.ids[..self.len as usize]
    }
}

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit<'s> {
    /// Integer literal text (arbitrary size).
    Int(&'s str),
    /// Float literal.
    Float(f64),
    /// String, unescaped.
    Str(Cow<'s, str>),
    /// `true`/`false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// What a node is: [`ast::ExprKind`] with indices for boxes.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind<'s> {
    /// A literal.
    Lit(Lit<'s>),
    /// A bare identifier.
    Keyword(&'s str),
    /// `$`, `$1`, `$name`: the text after `$`.
    Var(&'s str),
    /// `name(args)`.
    Call(&'s str, Args),
    /// `recv.name(args)`.
    Method(Id, &'s str, Args),
    /// An operator (see [`ast::ExprKind::Op`]).
    Op(&'static str, Operands),
    /// `recv.name`.
    Attr(Id, &'s str),
    /// `recv.expr`.
    Dot(Id, Id),
    /// `recv?.member`.
    SafeDot(Id, Id),
    /// `recv[args]`.
    Index(Id, Args),
    /// `callee(args)`.
    Delegate(Id, Args),
    /// `[args]`.
    List(Args),
    /// `{args}`.
    Map(Args),
    /// `ns:Name` or `:Name`.
    NsName(Option<&'s str>, &'s str),
}

/// A node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'s> {
    /// What it is.
    pub kind: Kind<'s>,
    /// Where it is.
    pub span: Span,
}

/// A call argument (see [`ast::Arg`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<'s> {
    /// Positional.
    Pos(Id),
    /// `name => value`.
    Named(&'s str, Id),
    /// `key => value` with a non-keyword key.
    Mapping(Id, Id),
    /// An empty slot.
    Skip,
}

/// The nodes of one expression.
#[derive(Debug, Default)]
pub struct Flat<'s> {
    nodes: Vec<Node<'s>>,
    args: Vec<Arg<'s>>,
    /// Emptied argument vectors of the parser, for the next list.
    spare: Vec<Vec<Arg<'s>>>,
}

impl<'s> Flat<'s> {
    /// Room for an expression of about `src_len` bytes.
    pub fn with_capacity(src_len: usize) -> Flat<'s> {
        Flat {
            nodes: Vec::with_capacity(src_len / 4 + 4),
            args: Vec::with_capacity(src_len / 16 + 4),
            spare: Vec::new(),
        }
    }
    /// A node.
    pub fn get(&self, id: Id) -> &Node<'s> {
        &self.nodes[id.index()]
    }
    /// A node's kind.
    pub fn kind(&self, id: Id) -> &Kind<'s> {
        &self.nodes[id.index()].kind
    }
    /// A node's span.
    pub fn span(&self, id: Id) -> Span {
        self.nodes[id.index()].span
    }
    /// An argument list.
    pub fn args(&self, a: Args) -> &[Arg<'s>] {
        &self.args[a.start as usize..(a.start + a.len) as usize]
    }

    /// Adds a node.
    pub fn add(&mut self, kind: Kind<'s>, span: Span) -> Id {
        let id = Id(u32::try_from(self.nodes.len()).expect("expression under 4G nodes"));
        self.nodes.push(Node { kind, span });
        id
    }
    /// Adds a node spanning bytes `l..r`.
    pub(crate) fn node(&mut self, kind: Kind<'s>, l: usize, r: usize) -> Id {
        self.add(kind, Span::new(l, r))
    }
    /// Adds an operator node.
    pub(crate) fn op(&mut self, name: &'static str, ops: &[Id], l: usize, r: usize) -> Id {
        let mut ids = [Id(0); 2];
        ids[..ops.len()].copy_from_slice(ops);
        let len = ops.len() as u8;
        self.node(Kind::Op(name, Operands { ids, len }), l, r)
    }

    /// Builds `recv.member`: a keyword member makes [`Kind::Attr`], a call
    /// [`Kind::Method`] (also in parentheses: `x.(f(y))` is `x.f(y)`), any
    /// other member [`Kind::Dot`]. The first two take the member's place.
    pub(crate) fn member(&mut self, recv: Id, m: Id, l: usize, r: usize) -> Id {
        let span = Span::new(l, r);
        let kind = match self.nodes[m.index()].kind {
            Kind::Keyword(k) => Kind::Attr(recv, k),
            Kind::Call(n, a) => Kind::Method(recv, n, a),
            _ => return self.add(Kind::Dot(recv, m), span),
        };
        self.nodes[m.index()] = Node { kind, span };
        m
    }

    /// `key => value` in an argument list: a named argument when the key
    /// is a bare keyword, else a mapping rule.
    pub(crate) fn named_or_mapping(&self, k: Id, v: Id) -> Arg<'s> {
        match self.nodes[k.index()].kind {
            Kind::Keyword(name) => Arg::Named(name, v),
            _ => Arg::Mapping(k, v),
        }
    }

    /// Starts an argument list being parsed.
    pub(crate) fn first(&mut self, a: Arg<'s>) -> Vec<Arg<'s>> {
        let mut v = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(4));
        v.push(a);
        v
    }

    /// Ends an argument list: checks it (`f(a,,b)` and `f(,a)` are fine; a
    /// trailing empty slot and a positional argument after a named one are
    /// errors) and stores it.
    pub(crate) fn finish_args(&mut self, mut v: Vec<Arg<'s>>) -> Result<Args, &'static str> {
        let r = check_args(&v).map(|items| {
            let start = self.args.len() as u32;
            self.args.extend_from_slice(items);
            Args {
                start,
                len: items.len() as u32,
            }
        });
        v.clear();
        self.spare.push(v);
        r
    }

    /// Builds the boxed tree of `root` (children before parents, so each
    /// node's children are built when it is).
    pub fn tree(&self, root: Id) -> Box<ast::Expr> {
        let mut built: Vec<Option<ast::Expr>> = Vec::with_capacity(root.index() + 1);
        for n in &self.nodes[..=root.index()] {
            let e = self.tree_node(n, &mut built);
            built.push(Some(e));
        }
        Box::new(built.pop().flatten().expect("the root is built"))
    }

    fn tree_node(&self, n: &Node<'s>, built: &mut [Option<ast::Expr>]) -> ast::Expr {
        use ast::ExprKind as K;
        let bx = |built: &mut [Option<ast::Expr>], id: Id| Box::new(take(built, id));
        let kind = match &n.kind {
            Kind::Lit(l) => K::Lit(match l {
                Lit::Int(s) => ast::Lit::Int(s.to_string()),
                Lit::Float(f) => ast::Lit::Float(*f),
                Lit::Str(s) => ast::Lit::Str(s.to_string()),
                Lit::Bool(b) => ast::Lit::Bool(*b),
                Lit::Null => ast::Lit::Null,
            }),
            Kind::Keyword(k) => K::Keyword(k.to_string()),
            Kind::Var(v) => K::Var(v.to_string()),
            Kind::Call(name, a) => K::Call(name.to_string(), self.tree_args(*a, built)),
            Kind::Method(r, name, a) => {
                K::Method(bx(built, *r), name.to_string(), self.tree_args(*a, built))
            }
            Kind::Op(name, ops) => K::Op(
                name,
                ops.as_slice().iter().map(|&i| take(built, i)).collect(),
            ),
            Kind::Attr(r, name) => K::Attr(bx(built, *r), name.to_string()),
            Kind::Dot(r, m) => K::Dot(bx(built, *r), bx(built, *m)),
            Kind::SafeDot(r, m) => K::SafeDot(bx(built, *r), bx(built, *m)),
            Kind::Index(r, a) => K::Index(bx(built, *r), self.tree_args(*a, built)),
            Kind::Delegate(r, a) => K::Delegate(bx(built, *r), self.tree_args(*a, built)),
            Kind::List(a) => K::List(self.tree_args(*a, built)),
            Kind::Map(a) => K::Map(self.tree_args(*a, built)),
            Kind::NsName(ns, name) => K::NsName(ns.map(str::to_string), name.to_string()),
        };
        ast::Expr { kind, span: n.span }
    }

    fn tree_args(&self, a: Args, built: &mut [Option<ast::Expr>]) -> Vec<ast::Arg> {
        self.args(a)
            .iter()
            .map(|a| match *a {
                Arg::Pos(e) => ast::Arg::Pos(take(built, e)),
                Arg::Named(n, e) => ast::Arg::Named(n.to_string(), take(built, e)),
                Arg::Mapping(k, v) => ast::Arg::Mapping(take(built, k), take(built, v)),
                Arg::Skip => ast::Arg::Skip,
            })
            .collect()
    }

    /// The flat form of a tree, and its root. A work stack visits the
    /// tree: each node is added after its children, whose indices wait on
    /// `done` in the order the node lists them.
    pub fn from_tree(e: &'s ast::Expr) -> (Flat<'s>, Id) {
        enum Work<'t> {
            Visit(&'t ast::Expr),
            Build(&'t ast::Expr),
        }
        let mut f = Flat::default();
        let mut work = vec![Work::Visit(e)];
        let mut done: Vec<Id> = Vec::new();
        let mut kids: Vec<&ast::Expr> = Vec::new();
        while let Some(w) = work.pop() {
            match w {
                Work::Visit(e) => {
                    work.push(Work::Build(e));
                    kids.clear();
                    children(e, &mut kids);
                    work.extend(kids.iter().rev().map(|k| Work::Visit(k)));
                }
                Work::Build(e) => {
                    kids.clear();
                    children(e, &mut kids);
                    let first = done.len() - kids.len();
                    let id = f.add_built(e, &done[first..]);
                    done.truncate(first);
                    done.push(id);
                }
            }
        }
        let root = done.pop().expect("the root is built");
        (f, root)
    }

    /// Adds tree node `e` whose children (as [`children`] lists them) are
    /// the nodes `ids`.
    fn add_built(&mut self, e: &'s ast::Expr, ids: &[Id]) -> Id {
        use ast::ExprKind as K;
        let mut ids = ids.iter().copied();
        let mut next = || ids.next().expect("a child's index");
        let kind = match &e.kind {
            K::Lit(l) => Kind::Lit(match l {
                ast::Lit::Int(s) => Lit::Int(s),
                ast::Lit::Float(f) => Lit::Float(*f),
                ast::Lit::Str(s) => Lit::Str(Cow::Borrowed(s)),
                ast::Lit::Bool(b) => Lit::Bool(*b),
                ast::Lit::Null => Lit::Null,
            }),
            K::Keyword(k) => Kind::Keyword(k),
            K::Var(v) => Kind::Var(v),
            K::Call(name, a) => Kind::Call(name, self.built_args(a, &mut next)),
            K::Method(_, name, a) => {
                let recv = next();
                Kind::Method(recv, name, self.built_args(a, &mut next))
            }
            K::Op(name, xs) => {
                let ops: Vec<Id> = xs.iter().map(|_| next()).collect();
                return self.op(name, &ops, e.span.start as usize, e.span.end as usize);
            }
            K::Attr(_, name) => Kind::Attr(next(), name),
            K::Dot(..) => Kind::Dot(next(), next()),
            K::SafeDot(..) => Kind::SafeDot(next(), next()),
            K::Index(_, a) => {
                let recv = next();
                Kind::Index(recv, self.built_args(a, &mut next))
            }
            K::Delegate(_, a) => {
                let recv = next();
                Kind::Delegate(recv, self.built_args(a, &mut next))
            }
            K::List(a) => Kind::List(self.built_args(a, &mut next)),
            K::Map(a) => Kind::Map(self.built_args(a, &mut next)),
            K::NsName(ns, name) => Kind::NsName(ns.as_deref(), name),
        };
        self.add(kind, e.span)
    }

    fn built_args(&mut self, args: &'s [ast::Arg], next: &mut impl FnMut() -> Id) -> Args {
        let start = self.args.len() as u32;
        for a in args {
            let a = match a {
                ast::Arg::Pos(_) => Arg::Pos(next()),
                ast::Arg::Named(n, _) => Arg::Named(n, next()),
                ast::Arg::Mapping(..) => Arg::Mapping(next(), next()),
                ast::Arg::Skip => Arg::Skip,
            };
            self.args.push(a);
        }
        Args {
            start,
            len: args.len() as u32,
        }
    }
}

/// A built node, moved to its parent (each node has one).
fn take(built: &mut [Option<ast::Expr>], id: Id) -> ast::Expr {
    built[id.index()].take().expect("a child has one parent")
}

/// A tree node's children in the order [`Flat::add_built`] takes them.
fn children<'t>(e: &'t ast::Expr, out: &mut Vec<&'t ast::Expr>) {
    use ast::ExprKind as K;
    let args = |a: &'t [ast::Arg], out: &mut Vec<&'t ast::Expr>| {
        for a in a {
            match a {
                ast::Arg::Pos(e) | ast::Arg::Named(_, e) => out.push(e),
                ast::Arg::Mapping(k, v) => out.extend([k, v]),
                ast::Arg::Skip => {}
            }
        }
    };
    match &e.kind {
        K::Lit(_) | K::Keyword(_) | K::Var(_) | K::NsName(..) => {}
        K::Call(_, a) | K::List(a) | K::Map(a) => args(a, out),
        K::Method(r, _, a) | K::Index(r, a) | K::Delegate(r, a) => {
            out.push(r);
            args(a, out);
        }
        K::Op(_, xs) => out.extend(xs.iter()),
        K::Attr(r, _) => out.push(r),
        K::Dot(r, m) | K::SafeDot(r, m) => out.extend([&**r, &**m]),
    }
}

/// Checks an argument list (see [`Flat::finish_args`]); an empty list is
/// one empty slot.
fn check_args<'a, 's>(v: &'a [Arg<'s>]) -> Result<&'a [Arg<'s>], &'static str> {
    if let [Arg::Skip] = v {
        return Ok(&[]);
    }
    if matches!(v.last(), Some(Arg::Skip)) {
        return Err("trailing comma");
    }
    let mut seen_named = false;
    for a in v {
        match a {
            Arg::Named(..) | Arg::Mapping(..) => seen_named = true,
            _ if seen_named => return Err("positional argument after a named one"),
            _ => {}
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaql::{parse, parse_flat, LexOptions};

    const MURANO: LexOptions = LexOptions {
        legacy: false,
        murano: true,
    };

    const CASES: [(&str, &str); 13] = [
        ("$.a.b(1, x => 2)[0]", "$.a.b(1, x => 2)[0]"),
        ("f(,1)?.g(y)", "f(_, 1)?.g(y)"),
        ("x.(1 + 2)", "x.((#operator_+ 1 2))"),
        ("x.(f(y))", "x.f(y)"),
        ("$x?.k", "$x?.k"),
        ("$x?.(1)", "$x?.1"),
        ("$1($2)(3)", "$1($2)(3)"),
        (
            r"[1, 2.5, 'a\nb', `v\`w`, true, false, null]",
            r#"[1, 2.5, "a\nb", "v`w", true, false, null]"#,
        ),
        ("{a => 1, 1 + 1 => 2}", "{a => 1, (#operator_+ 1 1) => 2}"),
        ("ns:Name + :Other", "(#operator_+ ns:Name :Other)"),
        (
            "not -a.b mod 2 = 3 and $ in [] or x =~ y",
            "(#operator_or (#operator_and (#unary_operator_not (*equal (#operator_mod \
             (#unary_operator_- a.b) 2) 3)) (#operator_in $ [])) (#operator_=~ x y))",
        ),
        ("a -> b -> c", "(#operator_-> a (#operator_-> b c))"),
        ("f(a, , b)", "f(a, _, b)"),
    ];

    #[test]
    fn every_kind_of_node_makes_its_tree_and_back() {
        for (src, want) in CASES {
            let tree = parse(src, MURANO).unwrap();
            assert_eq!(tree.sexp(), want, "{src}");
            let (flat, root) = Flat::from_tree(&tree);
            assert_eq!(flat.tree(root), tree, "{src}");
        }
        // Members replace their node; spans cover the whole member access.
        let mut f = Flat::default();
        let root = parse_flat("x.(f(y))", MURANO, &mut f).unwrap();
        assert!(matches!(f.kind(root), Kind::Method(_, "f", _)));
        assert_eq!(f.span(root), Span::new(0, 8));
    }

    #[test]
    fn argument_lists_are_checked_where_they_end() {
        let err = |src| parse(src, MURANO).unwrap_err();
        let e = err("f(a,)");
        assert_eq!(
            (e.message(), e.span()),
            ("Parse error: trailing comma", Some(Span::new(0, 5)))
        );
        let e = err("g(1, f(a => 1, 2))");
        assert_eq!(
            e.message(),
            "Parse error: positional argument after a named one"
        );
        assert_eq!(parse("f()", MURANO).unwrap().sexp(), "f()");
    }

    /// Building, converting and lowering a tree 100,000 levels deep use
    /// no recursion (the thread's stack is 2 MB: 20 bytes a level); lowering refuses it at
    /// the nesting limit with the position of the node past it.
    #[test]
    fn deep_trees_convert_without_recursion() {
        let n = 100_000;
        let src = format!("{}1{}", "[".repeat(n), "]".repeat(n));
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let mut f = Flat::default();
                let root = parse_flat(&src, MURANO, &mut f).unwrap();
                let tree = f.tree(root);
                let (back, root) = Flat::from_tree(&tree);
                assert_eq!(back.get(root), f.get(root));
                let reg = runtime::Registry::new();
                let e = crate::lower::Lowerer::new(&reg)
                    .lower_flat(&back, root)
                    .err()
                    .unwrap();
                let at = crate::lower::MAX_NESTING;
                assert_eq!(e.message(), "expression is nested too deeply");
                assert_eq!(e.span(), Some(Span::new(at, 2 * n + 1 - at)));
                // The boxed tree drops without recursion too.
                drop(tree);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}

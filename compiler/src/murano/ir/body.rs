//! Statements of method bodies, and the front end that recognises them.
//!
//! [`lower_body`] reads a `Body` node as the engine's statement compiler
//! always has:
//!
//! * a sequence is a block of statements; a null node an empty block; any
//!   other node a block of one statement;
//! * a non-mapping is an expression statement (its template is evaluated);
//! * a one-entry mapping whose scalar key is not a keyword and starts with
//!   `$` or contains a `.` is an assignment (`$x: 1`, `$.p[$i]: 2`,
//!   `$obj.prop: 3`), its key parsed as YAQL into a [`Dest`];
//! * a mapping with one of the keywords `Return`, `If`, `While`, `For`,
//!   `Repeat`, `Break`, `Continue`, `Match`, `Switch`, `Parallel`, `Try`,
//!   `Throw`, `Rethrow`, `Do` (tried in that order) is that statement; its
//!   other keys must be the statement's own (`Then`/`Else`, `In`/`Do`,
//!   `Value`/`Default`, `Limit`, `Catch`/`Else`/`Finally`,
//!   `Message`/`Extra`/`Cause`), else `SyntaxError` `unexpected key 'K'
//!   in statement` (no macro of murano's takes it);
//! * any other mapping is an expression statement (a dict template).
//!
//! `Break` and `Continue` outside a loop, and `Rethrow` outside a `Catch`
//! clause (a `Parallel` branch starts outside both), are not compile errors:
//! they fail when run. The front end makes them [`StmtKind::Invalid`], so
//! that in the tree [`StmtKind::Break`] and friends only appear where they
//! have a target (which [`verify`](super::verify) checks).

use std::fmt;
use std::sync::Arc;

use runtime::{Error, Span, Value};

use super::expr::{rebase, slice, Exprs, OnExpr, Role, Tmpl, Yaql};
use crate::murano::yaml::{plain_value, LoadOptions, Node, NodeKind, ScalarStyle};
use crate::murano::Pos;
use crate::yaql::ast::{Arg, Expr, ExprKind, Lit};
use crate::yaql::{self};

/// A block: statements run in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
}

/// A statement with its position (the position of its YAML node).
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it is.
    pub pos: Pos,
}

/// The statements.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// A template evaluated for its effects.
    Expr(Tmpl),
    /// `DEST: value`.
    Assign {
        /// Where the value goes.
        dest: Dest,
        /// The value.
        value: Tmpl,
    },
    /// `Return: value` (`None` for a null or empty `Return`).
    Return(Option<Tmpl>),
    /// `If: cond`, `Then: block`, `Else: block`.
    If {
        /// The condition.
        cond: Tmpl,
        /// `Then` (empty when missing).
        then: Block,
        /// `Else`, when given.
        else_: Option<Block>,
    },
    /// `While: cond`, `Do: block`.
    While {
        /// The condition.
        cond: Tmpl,
        /// `Do` (empty when missing).
        body: Block,
    },
    /// `For: var`, `In: collection`, `Do: block`.
    For {
        /// The loop variable, without leading `$`s (empty when `For` is not a
        /// scalar).
        var: Arc<str>,
        /// `In`: the collection (a dict iterates over its keys).
        in_: Tmpl,
        /// `Do` (empty when missing).
        body: Block,
    },
    /// `Repeat: count`, `Do: block`.
    Repeat {
        /// How many times.
        count: Tmpl,
        /// `Do` (empty when missing).
        body: Block,
    },
    /// `Break` inside a loop.
    Break,
    /// `Continue` inside a loop.
    Continue,
    /// `Match: {case: block}`, `Value: v`, `Default: block`.
    Match {
        /// `Value`: the value compared with each case.
        value: Tmpl,
        /// The cases, in order.
        cases: Vec<Case>,
        /// `Default`, when given.
        default: Option<Block>,
    },
    /// `Switch: {cond: block}`, `Default: block`: runs every case whose
    /// condition holds, `Default` when none did.
    Switch {
        /// The cases, in order.
        cases: Vec<Case>,
        /// `Default`, when given.
        default: Option<Block>,
    },
    /// `Do: block`.
    Do(Block),
    /// `Parallel: [block, ...]`, `Limit: n`.
    Parallel {
        /// The branches (a non-sequence `Parallel` is one branch).
        branches: Vec<Block>,
        /// `Limit`, when given.
        limit: Option<Tmpl>,
    },
    /// `Try: block`, `Catch: [...]`, `Else: block`, `Finally: block`.
    Try {
        /// `Try` (empty when missing or null).
        body: Block,
        /// `Catch` clauses, in order.
        catches: Vec<Catch>,
        /// `Else`: runs when the body raised nothing.
        else_: Option<Block>,
        /// `Finally`.
        finally: Option<Block>,
    },
    /// `Throw: names`, `Message`, `Extra`, `Cause`.
    Throw {
        /// The exception name or list of names.
        names: Tmpl,
        /// `Message`.
        message: Option<Tmpl>,
        /// `Extra`.
        extra: Option<Tmpl>,
        /// `Cause`.
        cause: Option<Tmpl>,
    },
    /// `Rethrow` inside a `Catch` clause.
    Rethrow,
    /// `Break`, `Continue` or `Rethrow` where it has no target: fails with
    /// `DslInvalidOperationError` when run.
    Invalid(InvalidOp),
}

/// A statement that has no target where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InvalidOp {
    /// `Break` outside a loop.
    Break,
    /// `Continue` outside a loop.
    Continue,
    /// `Rethrow` outside a `Catch` clause.
    Rethrow,
}

impl InvalidOp {
    /// The kind of error it raises when run: `DslInvalidOperationError`,
    /// but a `Rethrow` re-raises no current exception, which Python
    /// refuses with `TypeError`.
    pub fn kind(self) -> &'static str {
        match self {
            InvalidOp::Rethrow => "TypeError",
            _ => "DslInvalidOperationError",
        }
    }

    /// The message of the error it raises.
    pub fn message(self) -> &'static str {
        match self {
            InvalidOp::Break => "Break cannot be used on method level",
            InvalidOp::Continue => "Continue cannot be used on method level",
            InvalidOp::Rethrow => "Rethrow outside of a Catch block",
        }
    }

    /// The operand of its `SOp::Invalid` instruction.
    pub fn code(self) -> u32 {
        match self {
            InvalidOp::Break => vm::stmt::ops::INVALID_BREAK,
            InvalidOp::Continue => vm::stmt::ops::INVALID_CONTINUE,
            InvalidOp::Rethrow => vm::stmt::ops::INVALID_RETHROW,
        }
    }

    /// The statement of an `SOp::Invalid` operand.
    pub fn from_code(code: u32) -> Option<InvalidOp> {
        [InvalidOp::Break, InvalidOp::Continue, InvalidOp::Rethrow]
            .into_iter()
            .find(|op| op.code() == code)
    }

    fn keyword(self) -> &'static str {
        match self {
            InvalidOp::Break => "break",
            InvalidOp::Continue => "continue",
            InvalidOp::Rethrow => "rethrow",
        }
    }
}

/// A case of `Match` or `Switch`.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The value (`Match`) or condition (`Switch`).
    pub key: Tmpl,
    /// What runs.
    pub body: Block,
}

/// A `Catch` clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Catch {
    /// `With`: the exception names it catches (empty: any), as written
    /// (resolved against the class's namespaces when run). A scalar is one
    /// name, its text taken as is: an empty `With:` is the name `~` and
    /// `With: ''` the empty name, neither of which any exception has
    /// (murano reads both as "any"); non-scalar list items are skipped.
    pub with: Vec<String>,
    /// `As`: the variable bound to the exception, without leading `$`s.
    pub as_: Option<Arc<str>>,
    /// `Do` (empty when missing).
    pub body: Block,
    /// Where the clause is.
    pub pos: Pos,
}

/// An assignment destination: a root and a path into it.
///
/// | key | root | path |
/// | --- | --- | --- |
/// | `$x`, `$x.a[0].b`, `$obj.prop` | `Local(x)`, `Local(x)`, `Local(obj)` | `[]`, `[.a, [e0], .b]`, `[.prop]` |
/// | `$.p`, `$this.p[$i]` | `Prop(p)` | `[]`, `[[e0]]` |
/// | `$x.f().p.q`, `:T.p` | `Of(e0, p)` | `[.q]`, `[]` |
///
/// A local's path is walked into its value (objects get their properties
/// set); `Of` sets a property of the object, or the static property of the
/// type, its expression yields.
#[derive(Clone, Debug, PartialEq)]
pub struct Dest {
    /// What is assigned.
    pub root: DestRoot,
    /// The path into it.
    pub path: Vec<DestStep>,
    /// The key's text.
    pub src: Arc<str>,
}

/// The root of a [`Dest`].
#[derive(Clone, Debug, PartialEq)]
pub enum DestRoot {
    /// A variable: `$x` (`$` is the variable named ``; `$this` is `this`).
    Local(Arc<str>),
    /// A property of the current object or class: `$.p`, `$this.p`.
    Prop(Arc<str>),
    /// Property `name` of what an expression yields.
    Of(Yaql, Arc<str>),
}

/// One step of a [`Dest`] path.
#[derive(Clone, Debug, PartialEq)]
pub enum DestStep {
    /// A constant key or property name: `.a`, `['a']`.
    Key(Arc<str>),
    /// A computed key or index: `[$i]`, `[0]`.
    Index(Yaql),
}

/// Lowers a method `Body` node (see the module docs).
///
/// # Panics
///
/// In debug builds, when the result fails [`verify`](super::verify) (a bug
/// of the front end).
pub fn lower_body(node: &Node, opts: LoadOptions) -> Result<Block, Error> {
    lower_body_with(node, opts, &mut |_| Ok(()))
}

/// Lowers a method `Body` node, calling `on_expr` on each YAQL expression
/// as it is made, in [`ExprId`](super::ExprId) order; an error it returns
/// stops the lowering and is returned as it is. A consumer that compiles in
/// the hook reports the same first error for a bad body as the engine's
/// statement compiler, which compiled each expression as it met it.
///
/// # Panics
///
/// As [`lower_body`].
pub fn lower_body_with(
    node: &Node,
    opts: LoadOptions,
    on_expr: OnExpr<'_>,
) -> Result<Block, Error> {
    let mut fe = Front {
        ex: Exprs::new(opts, on_expr),
        in_loop: false,
        in_catch: false,
    };
    let b = fe.block(node)?;
    if cfg!(debug_assertions) {
        if let Err(e) = super::verify(&b) {
            panic!("IR verifier: {e}\n{b}");
        }
    }
    Ok(b)
}

const KEYWORDS: &[&str] = &[
    "Return", "If", "While", "For", "Repeat", "Break", "Continue", "Match", "Switch", "Parallel",
    "Try", "Throw", "Rethrow", "Do",
];

/// A statement that is neither a YAQL expression, an assignment nor a
/// block construct, rejected as murano's `parse_expression` rejects it
/// (murano/dsl/expressions.py: `SyntaxError`, "Syntax is incorrect in
/// expression").
fn incorrect(node: &Node) -> Error {
    node.pos.error(
        "SyntaxError",
        format!("Syntax is incorrect in expression: {}", describe(node)),
    )
}

/// A statement as Python would print it, roughly: a scalar's text, a
/// list's or dict's items.
fn describe(node: &Node) -> String {
    match &node.kind {
        NodeKind::Scalar { value, .. } => value.clone(),
        NodeKind::Seq(items) => {
            let items: Vec<String> = items.iter().map(describe).collect();
            format!("[{}]", items.join(", "))
        }
        NodeKind::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", describe(k), describe(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// True when a node holds a value Python finds true (`Break: 1`).
fn has_value(n: &Node) -> bool {
    match &n.kind {
        NodeKind::Scalar { value, style, .. } if *style == ScalarStyle::Plain => plain_value(value)
            .unwrap_or_else(|| Value::str(value.as_str()))
            .truthy(),
        NodeKind::Scalar { value, .. } => !value.is_empty(),
        NodeKind::Seq(items) => !items.is_empty(),
        NodeKind::Map(items) => !items.is_empty(),
    }
}

fn syntax(node: &Node, msg: impl fmt::Display) -> Error {
    node.pos.error("DslSyntaxError", msg)
}

struct Front<'a> {
    ex: Exprs<'a>,
    /// Inside a loop body (not across a `Parallel` branch).
    in_loop: bool,
    /// Inside a `Catch` clause (not across a `Parallel` branch).
    in_catch: bool,
}

impl Front<'_> {
    fn tmpl(&mut self, node: &Node) -> Result<Tmpl, Error> {
        let t = node.to_template(self.ex.opts)?;
        self.ex.template(&t)
    }

    fn block(&mut self, node: &Node) -> Result<Block, Error> {
        let mut stmts = Vec::new();
        match &node.kind {
            NodeKind::Seq(items) => {
                for it in items {
                    stmts.push(self.stmt(it)?);
                }
            }
            _ if node.is_null() => {}
            _ => stmts.push(self.stmt(node)?),
        }
        Ok(Block { stmts })
    }

    fn opt_block(&mut self, node: Option<&Node>) -> Result<Option<Block>, Error> {
        node.map(|n| self.block(n)).transpose()
    }

    /// A loop body.
    fn loop_block(&mut self, node: Option<&Node>) -> Result<Block, Error> {
        let saved = std::mem::replace(&mut self.in_loop, true);
        let b = self.opt_block(node);
        self.in_loop = saved;
        Ok(b?.unwrap_or_default())
    }

    fn stmt(&mut self, node: &Node) -> Result<Stmt, Error> {
        let kind = self.stmt_kind(node)?;
        Ok(Stmt {
            kind,
            pos: node.pos.clone(),
        })
    }

    fn stmt_kind(&mut self, node: &Node) -> Result<StmtKind, Error> {
        let Some(map) = node.as_map() else {
            // Only a YAQL expression is a statement on its own: a plain
            // string (`- Break`, `Then: Break`), a number or a list is not.
            let t = self.tmpl(node)?;
            if !matches!(t.kind, super::TmplKind::Expr(_)) {
                return Err(incorrect(node));
            }
            return Ok(StmtKind::Expr(t));
        };
        if let [(k, v)] = map {
            if let Some(key) = k.as_scalar() {
                if !KEYWORDS.contains(&key) && (key.starts_with('$') || key.contains('.')) {
                    let dest = self.dest(k, key)?;
                    let value = self.tmpl(v)?;
                    return Ok(StmtKind::Assign { dest, value });
                }
            }
        }
        let keys = StmtKeys { node, map };
        if let Some(kind) = self.control_stmt(&keys)? {
            return Ok(kind);
        }
        if let Some(kind) = self.block_stmt(&keys)? {
            return Ok(kind);
        }
        // No block keyword and no destination (`- Retrun: 1`). Reading it
        // as data first reports what YAML cannot construct (an unhashable
        // key), as PyYAML would before murano sees the statement.
        self.tmpl(node)?;
        Err(incorrect(node))
    }

    /// `Return`, `If`, `While`, `For`, `Repeat`, `Break` and `Continue`
    /// (`None`: none of them).
    ///
    /// The macros check their own arguments as murano's do
    /// (murano/dsl/macros.py): `For`, `Repeat`, `Break` and `Continue`
    /// raise `DslSyntaxError`; a `While` that is no expression matches no
    /// macro (`SyntaxError`); `If` takes any value.
    fn control_stmt(&mut self, keys: &StmtKeys) -> Result<Option<StmtKind>, Error> {
        let (node, get, must) = (keys.node, |k| keys.get(k), |k| keys.must(k));
        Ok(Some(if keys.has("Return") {
            keys.check(&["Return"])?;
            let v = must("Return");
            StmtKind::Return(if v.is_null() {
                None
            } else {
                Some(self.tmpl(v)?)
            })
        } else if keys.has("If") {
            keys.check(&["If", "Then", "Else"])?;
            let cond = self.tmpl(must("If"))?;
            let then = self.opt_block(get("Then"))?.unwrap_or_default();
            let else_ = self.opt_block(get("Else"))?;
            StmtKind::If { cond, then, else_ }
        } else if keys.has("While") {
            keys.check(&["While", "Do"])?;
            let cond = self.tmpl(must("While"))?;
            if !matches!(cond.kind, super::TmplKind::Expr(_)) {
                return Err(incorrect(node));
            }
            let body = self.loop_block(get("Do"))?;
            StmtKind::While { cond, body }
        } else if keys.has("For") {
            keys.check(&["For", "In", "Do"])?;
            self.for_stmt(keys)?
        } else if keys.has("Repeat") {
            keys.check(&["Repeat", "Do"])?;
            let count = self.tmpl(must("Repeat"))?;
            let counts = match &count.kind {
                super::TmplKind::Expr(_) => true,
                super::TmplKind::Const(v) => matches!(v, Value::Int(_) | Value::Bool(_)),
                _ => false,
            };
            if !counts {
                return Err(syntax(
                    must("Repeat"),
                    "Repeat value must be either int or expression",
                ));
            }
            let body = self.loop_block(get("Do"))?;
            StmtKind::Repeat { count, body }
        } else if keys.has("Break") {
            keys.check(&["Break"])?;
            if has_value(must("Break")) {
                return Err(syntax(must("Break"), "Break cannot have value"));
            }
            if self.in_loop {
                StmtKind::Break
            } else {
                StmtKind::Invalid(InvalidOp::Break)
            }
        } else if keys.has("Continue") {
            keys.check(&["Continue"])?;
            if has_value(must("Continue")) {
                return Err(syntax(must("Continue"), "Continue cannot have value"));
            }
            if self.in_loop {
                StmtKind::Continue
            } else {
                StmtKind::Invalid(InvalidOp::Continue)
            }
        } else {
            return Ok(None);
        }))
    }

    /// `For: $var`, `In: collection`, `Do: body`.
    fn for_stmt(&mut self, keys: &StmtKeys) -> Result<StmtKind, Error> {
        let node = keys.node;
        let for_node = keys.must("For");
        let is_string = match &for_node.kind {
            NodeKind::Scalar { value, style, .. } => {
                *style != ScalarStyle::Plain
                    || matches!(plain_value(value), None | Some(Value::Str(_)))
            }
            _ => false,
        };
        if !is_string {
            return Err(syntax(for_node, "For value must be of string type"));
        }
        let var = for_node.as_scalar().unwrap_or("");
        let var: Arc<str> = var.trim_start_matches('$').into();
        let Some(inn) = keys.get("In") else {
            return Err(syntax(node, "For needs In"));
        };
        let in_ = self.tmpl(inn)?;
        let body = self.loop_block(keys.get("Do"))?;
        Ok(StmtKind::For { var, in_, body })
    }

    /// `Match`, `Switch`, `Parallel`, `Try`, `Throw`, `Rethrow` and `Do`
    /// (`None`: none of them).
    fn block_stmt(&mut self, keys: &StmtKeys) -> Result<Option<StmtKind>, Error> {
        let (node, get, must) = (keys.node, |k| keys.get(k), |k| keys.must(k));
        Ok(Some(if keys.has("Match") {
            keys.check(&["Match", "Value", "Default"])?;
            let cases = self.cases(must("Match"))?;
            let Some(val) = get("Value") else {
                return Err(syntax(node, "Match needs Value"));
            };
            let value = self.tmpl(val)?;
            let default = self.opt_block(get("Default"))?;
            StmtKind::Match {
                value,
                cases,
                default,
            }
        } else if keys.has("Switch") {
            keys.check(&["Switch", "Default"])?;
            let cases = self.cases(must("Switch"))?;
            let default = self.opt_block(get("Default"))?;
            StmtKind::Switch { cases, default }
        } else if keys.has("Parallel") {
            keys.check(&["Parallel", "Limit"])?;
            self.parallel_stmt(keys)?
        } else if keys.has("Try") {
            keys.check(&["Try", "Catch", "Else", "Finally"])?;
            self.try_stmt(keys)?
        } else if keys.has("Throw") {
            keys.check(&["Throw", "Message", "Extra", "Cause"])?;
            // murano's `ThrowMacro` refuses a statement without names.
            if !has_value(must("Throw")) {
                return Err(must("Throw")
                    .pos
                    .error("ValueError", "Throw names are not provided"));
            }
            let names = self.tmpl(must("Throw"))?;
            let message = get("Message").map(|n| self.tmpl(n)).transpose()?;
            let extra = get("Extra").map(|n| self.tmpl(n)).transpose()?;
            let cause = get("Cause").map(|n| self.tmpl(n)).transpose()?;
            StmtKind::Throw {
                names,
                message,
                extra,
                cause,
            }
        } else if keys.has("Rethrow") {
            keys.check(&["Rethrow"])?;
            if self.in_catch {
                StmtKind::Rethrow
            } else {
                StmtKind::Invalid(InvalidOp::Rethrow)
            }
        } else if keys.has("Do") {
            keys.check(&["Do"])?;
            StmtKind::Do(self.block(must("Do"))?)
        } else {
            return Ok(None);
        }))
    }

    /// `Parallel: branches`, `Limit: n`.
    fn parallel_stmt(&mut self, keys: &StmtKeys) -> Result<StmtKind, Error> {
        let p = keys.must("Parallel");
        // A branch runs on its own: no loop or clause around it.
        let saved = (self.in_loop, self.in_catch);
        (self.in_loop, self.in_catch) = (false, false);
        let branches = match &p.kind {
            NodeKind::Seq(items) => items
                .iter()
                .map(|it| self.block(it))
                .collect::<Result<Vec<_>, _>>(),
            _ => self.block(p).map(|b| vec![b]),
        };
        (self.in_loop, self.in_catch) = saved;
        let branches = branches?;
        let limit = keys.get("Limit").map(|n| self.tmpl(n)).transpose()?;
        Ok(StmtKind::Parallel { branches, limit })
    }

    /// `Try`, `Catch`, `Else`, `Finally`.
    fn try_stmt(&mut self, keys: &StmtKeys) -> Result<StmtKind, Error> {
        let get = |k| keys.get(k);
        // The clauses are read before the body, as the engine reads
        // them (this decides which error of a bad `Try` comes first).
        let mut catches = Vec::new();
        if let Some(c) = get("Catch") {
            let items: Vec<&Node> = match &c.kind {
                NodeKind::Seq(items) => items.iter().collect(),
                _ => vec![c],
            };
            for it in items {
                catches.push(self.catch(it)?);
            }
        }
        let body = self.opt_block(get("Try"))?.unwrap_or_default();
        let else_ = self.opt_block(get("Else"))?;
        let finally = self.opt_block(get("Finally"))?;
        Ok(StmtKind::Try {
            body,
            catches,
            else_,
            finally,
        })
    }

    fn catch(&mut self, it: &Node) -> Result<Catch, Error> {
        let with = match it.get("With") {
            None => Vec::new(),
            Some(w) => match &w.kind {
                NodeKind::Seq(xs) => xs
                    .iter()
                    .filter_map(|x| x.as_scalar().map(str::to_string))
                    .collect(),
                _ => w
                    .as_scalar()
                    .map(|s| vec![s.to_string()])
                    .unwrap_or_default(),
            },
        };
        let as_ = it
            .get("As")
            .and_then(|a| a.as_scalar())
            .map(|s| Arc::from(s.trim_start_matches('$')));
        let saved = std::mem::replace(&mut self.in_catch, true);
        let body = self.opt_block(it.get("Do"));
        self.in_catch = saved;
        Ok(Catch {
            with,
            as_,
            body: body?.unwrap_or_default(),
            pos: it.pos.clone(),
        })
    }

    fn cases(&mut self, node: &Node) -> Result<Vec<Case>, Error> {
        let Some(map) = node.as_map() else {
            return Err(syntax(node, "expected a mapping of cases"));
        };
        map.iter()
            .map(|(k, v)| {
                Ok(Case {
                    key: self.tmpl(k)?,
                    body: self.block(v)?,
                })
            })
            .collect()
    }

    /// A sub-expression of the destination key `text` (of node `node`).
    fn dest_part(&mut self, node: &Node, text: &str, e: &Expr, role: Role) -> Result<Yaql, Error> {
        let src: Arc<str> = slice(text, e.span).into();
        let start = node.span().start;
        let span = Span {
            start: start + e.span.start,
            end: start + e.span.end,
        };
        let ast = Arc::new(rebase(e, e.span.start));
        self.ex.make(src, ast, &node.pos, span, role)
    }

    /// Reads an assignment key. The syntax tree is walked from the outside
    /// in (so indexes are numbered right to left): `.name` and `['name']`
    /// are keys, other indexes computed; the walk ends at `$.name` /
    /// `$this.name` (a property), at a variable, or at any other expression,
    /// whose property is the first key.
    fn dest(&mut self, node: &Node, text: &str) -> Result<Dest, Error> {
        let ast = yaql::parse(text, self.ex.lex()).map_err(|e| {
            syntax(
                node,
                format!("bad assignment target `{text}`: {}", e.message()),
            )
        })?;
        let mut steps = Vec::new();
        let mut cur: &Expr = &ast;
        let root = loop {
            match &cur.kind {
                ExprKind::Attr(recv, name) => {
                    if matches!(&recv.kind, ExprKind::Var(v) if v.is_empty() || v == "this") {
                        break DestRoot::Prop(name.as_str().into());
                    }
                    steps.push(DestStep::Key(name.as_str().into()));
                    cur = recv;
                }
                ExprKind::Index(recv, args) => {
                    let [Arg::Pos(ix)] = &args[..] else {
                        return Err(syntax(node, format!("bad index in `{text}`")));
                    };
                    match &ix.kind {
                        ExprKind::Lit(Lit::Str(s)) => steps.push(DestStep::Key(s.as_str().into())),
                        _ => {
                            let y = self.dest_part(node, text, ix, Role::DestIndex)?;
                            steps.push(DestStep::Index(y));
                        }
                    }
                    cur = recv;
                }
                ExprKind::Var(v) => break DestRoot::Local(v.as_str().into()),
                _ => {
                    let Some(DestStep::Key(name)) = steps.last().cloned() else {
                        return Err(syntax(node, format!("cannot assign to `{text}`")));
                    };
                    steps.pop();
                    let base = self.dest_part(node, text, cur, Role::DestBase)?;
                    break DestRoot::Of(base, name);
                }
            }
        };
        steps.reverse();
        Ok(Dest {
            root,
            path: steps,
            src: text.into(),
        })
    }
}

// ---- printing ---------------------------------------------------------------

fn at(f: &mut fmt::Formatter<'_>, pos: &Pos) -> fmt::Result {
    writeln!(f, " @{}:{}", pos.line, pos.col)
}

fn pad(f: &mut fmt::Formatter<'_>, ind: usize) -> fmt::Result {
    for _ in 0..ind {
        f.write_str("  ")?;
    }
    Ok(())
}

/// Whether `s` can follow a `.` in a destination as printed.
fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_')
}

impl fmt::Display for DestStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DestStep::Key(k) if is_name(k) => write!(f, ".{k}"),
            DestStep::Key(k) => write!(f, "[{k:?}]"),
            DestStep::Index(y) => write!(f, "[{y}]"),
        }
    }
}

impl fmt::Display for Dest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.root {
            DestRoot::Local(n) => write!(f, "${n}")?,
            DestRoot::Prop(n) => write!(f, "$.{n}")?,
            DestRoot::Of(e, n) => write!(f, "({e}).{n}")?,
        }
        self.path.iter().try_for_each(|s| write!(f, "{s}"))
    }
}

impl fmt::Display for Block {
    /// One statement per line, nested blocks indented by two spaces, each
    /// statement's position last as `@line:col`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_block(f, self, 0)
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_stmt(f, self, 0)
    }
}

fn write_block(f: &mut fmt::Formatter<'_>, b: &Block, ind: usize) -> fmt::Result {
    b.stmts.iter().try_for_each(|s| write_stmt(f, s, ind))
}

/// A header line (`else`, `finally`, ...) and its block.
fn write_part(f: &mut fmt::Formatter<'_>, head: &str, b: &Block, ind: usize) -> fmt::Result {
    pad(f, ind)?;
    writeln!(f, "{head}")?;
    write_block(f, b, ind + 1)
}

fn write_cases(f: &mut fmt::Formatter<'_>, cases: &[Case], ind: usize) -> fmt::Result {
    for c in cases {
        pad(f, ind)?;
        write!(f, "case {}", c.key)?;
        at(f, &c.key.pos)?;
        write_block(f, &c.body, ind + 1)?;
    }
    Ok(())
}

fn write_stmt(f: &mut fmt::Formatter<'_>, s: &Stmt, ind: usize) -> fmt::Result {
    pad(f, ind)?;
    match &s.kind {
        StmtKind::Expr(t) => write!(f, "expr {t}")?,
        StmtKind::Assign { dest, value } => write!(f, "assign {dest} = {value}")?,
        StmtKind::Return(None) => f.write_str("return")?,
        StmtKind::Return(Some(t)) => write!(f, "return {t}")?,
        StmtKind::If { cond, then, else_ } => {
            write!(f, "if {cond}")?;
            at(f, &s.pos)?;
            write_block(f, then, ind + 1)?;
            if let Some(e) = else_ {
                write_part(f, "else", e, ind)?;
            }
            return Ok(());
        }
        StmtKind::While { cond, body } => {
            write!(f, "while {cond}")?;
            at(f, &s.pos)?;
            return write_block(f, body, ind + 1);
        }
        StmtKind::For { var, in_, body } => {
            write!(f, "for ${var} in {in_}")?;
            at(f, &s.pos)?;
            return write_block(f, body, ind + 1);
        }
        StmtKind::Repeat { count, body } => {
            write!(f, "repeat {count}")?;
            at(f, &s.pos)?;
            return write_block(f, body, ind + 1);
        }
        StmtKind::Break => f.write_str("break")?,
        StmtKind::Continue => f.write_str("continue")?,
        StmtKind::Match {
            value,
            cases,
            default,
        } => {
            write!(f, "match {value}")?;
            at(f, &s.pos)?;
            write_cases(f, cases, ind + 1)?;
            if let Some(d) = default {
                write_part(f, "default", d, ind + 1)?;
            }
            return Ok(());
        }
        StmtKind::Switch { cases, default } => {
            f.write_str("switch")?;
            at(f, &s.pos)?;
            write_cases(f, cases, ind + 1)?;
            if let Some(d) = default {
                write_part(f, "default", d, ind + 1)?;
            }
            return Ok(());
        }
        StmtKind::Do(b) => {
            f.write_str("do")?;
            at(f, &s.pos)?;
            return write_block(f, b, ind + 1);
        }
        StmtKind::Parallel { branches, limit } => {
            f.write_str("parallel")?;
            if let Some(l) = limit {
                write!(f, " limit {l}")?;
            }
            at(f, &s.pos)?;
            for (i, b) in branches.iter().enumerate() {
                write_part(f, &format!("branch {i}"), b, ind + 1)?;
            }
            return Ok(());
        }
        StmtKind::Try {
            body,
            catches,
            else_,
            finally,
        } => {
            f.write_str("try")?;
            at(f, &s.pos)?;
            write_block(f, body, ind + 1)?;
            for c in catches {
                pad(f, ind)?;
                f.write_str("catch ")?;
                if c.with.is_empty() {
                    f.write_str("*")?;
                } else {
                    let names: Vec<String> = c.with.iter().map(|w| format!("{w:?}")).collect();
                    f.write_str(&names.join(" | "))?;
                }
                if let Some(a) = &c.as_ {
                    write!(f, " as ${a}")?;
                }
                at(f, &c.pos)?;
                write_block(f, &c.body, ind + 1)?;
            }
            if let Some(e) = else_ {
                write_part(f, "else", e, ind)?;
            }
            if let Some(e) = finally {
                write_part(f, "finally", e, ind)?;
            }
            return Ok(());
        }
        StmtKind::Throw {
            names,
            message,
            extra,
            cause,
        } => {
            write!(f, "throw {names}")?;
            for (k, v) in [("message", message), ("extra", extra), ("cause", cause)] {
                if let Some(v) = v {
                    write!(f, " {k} {v}")?;
                }
            }
        }
        StmtKind::Rethrow => f.write_str("rethrow")?,
        StmtKind::Invalid(op) => write!(f, "invalid {} ({:?})", op.keyword(), op.message())?,
    }
    at(f, &s.pos)
}

/// The keys of a block statement's mapping.
struct StmtKeys<'a> {
    node: &'a Node,
    map: &'a [(Node, Node)],
}

impl<'a> StmtKeys<'a> {
    fn key_of(n: &Node) -> &str {
        n.as_scalar().unwrap_or("")
    }

    fn get(&self, name: &str) -> Option<&'a Node> {
        self.node.get(name)
    }

    fn has(&self, name: &str) -> bool {
        self.map.iter().any(|(k, _)| Self::key_of(k) == name)
    }

    /// The value of a key `has` found.
    fn must(&self, name: &str) -> &'a Node {
        self.get(name).expect("the key is present")
    }

    /// Refuses a key no macro takes: murano's `parse_expression` finds
    /// none and raises `SyntaxError`.
    fn check(&self, allowed: &[&str]) -> Result<(), Error> {
        for (k, _) in self.map {
            let kk = Self::key_of(k);
            if !allowed.contains(&kk) {
                return Err(k
                    .pos
                    .error("SyntaxError", format!("unexpected key '{kk}' in statement")));
            }
        }
        Ok(())
    }
}

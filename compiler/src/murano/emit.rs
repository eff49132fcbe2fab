//! Statement bytecode of method bodies: the emitter from the IR.
//!
//! [`compile_body`] is the one path from a `Body` node to runnable code:
//! [`lower_body_with`] reads the statements into the [IR](super::ir),
//! compiling each YAQL expression as it is made (so a bad body reports the
//! same first error as reading it in order does), and [`emit`] lowers the
//! IR to [`vm::stmt`] instructions in a [`Code`] object, which the
//! statement interpreter ([`vm::stmt::run`]) runs for the engine.
//!
//! Control flow becomes explicit jumps (forward jumps are patched when
//! their label is bound); `Try`/`Catch`/`Finally` become a handler table,
//! inner handlers first. Each instruction keeps its statement's position.
//! Instruction operands index side tables of the code object:
//!
//! * `expr`/`cond`/`limit`: [`Code::operands`], one per template operand in
//!   emission order; a YAQL expression in one is an [`ExprId`] into
//!   [`Code::programs`], the compiled expressions of the whole body in IR
//!   order (shared with the `Parallel` sub-codes);
//! * `target`: [`Code::targets`], assignment destinations;
//! * `var`: [`Code::names`]; `clauses`: [`Code::clauses`]; `throw`:
//!   [`Code::throws`]; `first`: [`Code::subs`], one sub-code per `Parallel`
//!   branch;
//! * `slot` and `try_`: per-activation scratch ([`Code::nslots`],
//!   [`Code::ntries`]).
//!
//! ```
//! use muranopl_compiler::murano::emit::compile_body;
//! use muranopl_compiler::murano::{load_classes, LoadOptions};
//! use muranopl_compiler::CompileOptions;
//! let src = "Name: C\nMethods:\n  m:\n    Body:\n      - For: i\n        In: $xs\n        Do:\n          - Break:\n";
//! let class = &load_classes(src, "C.yaml", LoadOptions::default()).unwrap()[0];
//! let opts = CompileOptions { legacy: false, murano: true };
//! let code = compile_body(class.methods[0].body.as_ref().unwrap(), &runtime::Registry::new(), opts).unwrap();
//! assert_eq!(code.disas(), "  \
//! 0000  IterInit { slot: 0, expr: 0 }                        ; $xs  @C.yaml:5:9
//!   0001  IterNext { slot: 0, var: 0, done: 4 }                ; $i  @C.yaml:5:9
//!   0002  Leave { to: 4 }                                       @C.yaml:8:13
//!   0003  Jump { to: 1 }                                        @C.yaml:5:9
//! ");
//! ```

use std::sync::Arc;

use runtime::{Error, Registry, Value};
use vm::stmt::{
    Clause, Handler, HandlerKind, Operand, SOp, Source, Target, TargetRoot, TargetStep, Throw, NONE,
};

use super::ir::{
    lower_body_with, lower_template_with, Block, Case, Catch, Dest, DestRoot, DestStep, Stmt,
    StmtKind, Tmpl, TmplKind, Yaql,
};
use super::yaml::{LoadOptions, Node, Template};
use crate::{CompileOptions, Program};

/// A method body (or a `Parallel` branch of one) as statement bytecode,
/// its expressions compiled to [`Program`]s.
pub type Code = vm::stmt::Code<Program>;

impl Source for Program {
    fn source(&self) -> &str {
        Program::source(self)
    }
}

/// The operand of an IR template.
pub fn operand_of(t: &Tmpl) -> Operand {
    match &t.kind {
        TmplKind::Const(v) => Operand::Const(v.clone()),
        TmplKind::Expr(y) => Operand::Expr(y.id),
        TmplKind::List(items) => Operand::List(items.iter().map(operand_of).collect()),
        TmplKind::Dict(items) => Operand::Dict(
            items
                .iter()
                .map(|(k, v)| (operand_of(k), operand_of(v)))
                .collect(),
        ),
    }
}

/// The target of an IR destination.
pub fn target_of(d: &Dest) -> Target {
    let root = match &d.root {
        DestRoot::Local(n) => TargetRoot::Local(n.clone()),
        DestRoot::Prop(n) => TargetRoot::Prop(n.clone()),
        DestRoot::Of(base, n) => TargetRoot::Of(base.id, n.clone()),
    };
    let path = d
        .path
        .iter()
        .map(|s| match s {
            DestStep::Key(k) => TargetStep::Key(Value::str(&**k)),
            DestStep::Index(y) => TargetStep::Index(y.id),
        })
        .collect();
    Target { root, path }
}

/// Compiles a method `Body` node: lowers it to the IR, compiling each
/// expression with `reg` and `opts` as it is made (errors worded as
/// [`Yaql::compile`] words them), and emits its code.
pub fn compile_body(node: &Node, reg: &Registry, opts: CompileOptions) -> Result<Code, Error> {
    let (block, programs) = lower_and_compile(node, reg, opts)?;
    Ok(emit(&block, programs))
}

/// Lowers a `Body` node as [`compile_body`] does and returns the IR with
/// the compiled programs, indexed by [`ExprId`].
pub fn lower_and_compile(
    node: &Node,
    reg: &Registry,
    opts: CompileOptions,
) -> Result<(Block, Arc<[Program]>), Error> {
    let mut programs = Vec::new();
    let block = lower_body_with(node, load_options(opts), &mut |y: &Yaql| {
        programs.push(crate::compile_yaql(y, reg, opts)?);
        Ok(())
    })?;
    Ok((block, programs.into()))
}

/// Compiles a value template on its own (a default, a meta value): its
/// operand and the programs its [`ExprId`]s index.
pub fn compile_template(
    t: &Template,
    reg: &Registry,
    opts: CompileOptions,
) -> Result<(Operand, Arc<[Program]>), Error> {
    let mut programs = Vec::new();
    let tmpl = lower_template_with(t, load_options(opts), &mut |y: &Yaql| {
        programs.push(crate::compile_yaql(y, reg, opts)?);
        Ok(())
    })?;
    Ok((operand_of(&tmpl), programs.into()))
}

fn load_options(opts: CompileOptions) -> LoadOptions {
    LoadOptions {
        legacy: opts.legacy,
    }
}

/// Emits the code of a lowered (and verified) body whose expression
/// `ExprId(i)` compiled to `programs[i]`.
///
/// # Panics
///
/// When `b` breaks the [verifier](super::ir::verify)'s rules (a `Break`
/// outside a loop, ...), and in debug builds when an expression id is out
/// of `programs`' range.
pub fn emit(b: &Block, programs: Arc<[Program]>) -> Code {
    let mut e = Emitter {
        code: Code::new(programs),
        loops: Vec::new(),
        labels: Vec::new(),
        patches: Vec::new(),
        catches: Vec::new(),
    };
    e.block(b);
    for (at, l) in std::mem::take(&mut e.patches) {
        let to = e.labels[l].expect("label bound");
        *e.code.ops[at].target_mut().expect("a jump") = to;
    }
    debug_assert!(
        e.code
            .max_expr()
            .is_none_or(|m| m.index() < e.code.programs.len()),
        "an expression id beyond the programs"
    );
    e.code
}

struct Emitter {
    code: Code,
    /// (continue target, break label) of the enclosing loops.
    loops: Vec<(u32, usize)>,
    /// Label -> pc, once bound.
    labels: Vec<Option<u32>>,
    /// (instruction, label) of forward jumps to patch.
    patches: Vec<(usize, usize)>,
    /// The `Try` of each enclosing `Catch` clause (for `Rethrow`).
    catches: Vec<u32>,
}

impl Emitter {
    fn emit(&mut self, op: SOp, s: &Stmt) -> usize {
        self.code.ops.push(op);
        self.code.pos.push(s.pos.location());
        let text = match self.code.texts.last() {
            Some(t)
                if self.code.pos.len() > 1
                    && self.code.pos[self.code.pos.len() - 2] == s.pos.location() =>
            {
                t.clone()
            }
            _ => Arc::from(instruction(s)),
        };
        self.code.texts.push(text);
        self.code.ops.len() - 1
    }

    /// Emits `op`, whose jump target is label `l` (patched at the end).
    fn emit_to(&mut self, op: SOp, l: usize, s: &Stmt) {
        let at = self.emit(op, s);
        self.patches.push((at, l));
    }

    fn pc(&self) -> u32 {
        self.code.ops.len() as u32
    }

    fn operand(&mut self, t: &Tmpl) -> u32 {
        self.code.operands.push(operand_of(t));
        (self.code.operands.len() - 1) as u32
    }

    fn slot(&mut self) -> u32 {
        self.code.nslots += 1;
        self.code.nslots - 1
    }

    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn bind(&mut self, l: usize) {
        self.labels[l] = Some(self.pc());
    }

    fn block(&mut self, b: &Block) {
        b.stmts.iter().for_each(|s| self.stmt(s));
    }

    fn loop_body(&mut self, top: u32, exit: usize, b: &Block) {
        self.loops.push((top, exit));
        self.block(b);
        self.loops.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr(t) => {
                let expr = self.operand(t);
                self.emit(SOp::Eval { expr }, s);
            }
            StmtKind::Assign { dest, value } => {
                self.code.targets.push(target_of(dest));
                let target = (self.code.targets.len() - 1) as u32;
                let expr = self.operand(value);
                self.emit(SOp::Assign { target, expr }, s);
            }
            StmtKind::Return(t) => {
                let expr = t.as_ref().map_or(NONE, |t| self.operand(t));
                self.emit(SOp::Return { expr }, s);
            }
            StmtKind::If { cond, then, else_ } => {
                let (l_else, l_end) = (self.label(), self.label());
                let cond = self.operand(cond);
                self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_else, s);
                self.block(then);
                self.emit_to(SOp::Jump { to: 0 }, l_end, s);
                self.bind(l_else);
                if let Some(e) = else_ {
                    self.block(e);
                }
                self.bind(l_end);
            }
            StmtKind::While { cond, body } => {
                let l_exit = self.label();
                let top = self.pc();
                let cond = self.operand(cond);
                self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_exit, s);
                self.loop_body(top, l_exit, body);
                self.emit(SOp::Jump { to: top }, s);
                self.bind(l_exit);
            }
            StmtKind::For { var, in_, body } => {
                let l_exit = self.label();
                let slot = self.slot();
                let expr = self.operand(in_);
                self.code.names.push(var.clone());
                let var = (self.code.names.len() - 1) as u32;
                self.emit(SOp::IterInit { slot, expr }, s);
                let top = self.pc();
                self.emit_to(SOp::IterNext { slot, var, done: 0 }, l_exit, s);
                self.loop_body(top, l_exit, body);
                self.emit(SOp::Jump { to: top }, s);
                self.bind(l_exit);
            }
            StmtKind::Repeat { count, body } => {
                let l_exit = self.label();
                let slot = self.slot();
                let expr = self.operand(count);
                self.emit(SOp::CountInit { slot, expr }, s);
                let top = self.pc();
                self.emit_to(SOp::CountNext { slot, done: 0 }, l_exit, s);
                self.loop_body(top, l_exit, body);
                self.emit(SOp::Jump { to: top }, s);
                self.bind(l_exit);
            }
            // The verifier guarantees an enclosing loop or clause.
            StmtKind::Break => {
                let (_, exit) = *self.loops.last().expect("Break in a loop");
                self.emit_to(SOp::Leave { to: 0 }, exit, s);
            }
            StmtKind::Continue => {
                let (top, _) = *self.loops.last().expect("Continue in a loop");
                self.emit(SOp::Leave { to: top }, s);
            }
            StmtKind::Rethrow => {
                let try_ = *self.catches.last().expect("Rethrow in a Catch clause");
                self.emit(SOp::Rethrow { try_ }, s);
            }
            StmtKind::Invalid(op) => {
                self.emit(SOp::Invalid { what: op.code() }, s);
            }
            StmtKind::Match {
                value,
                cases,
                default,
            } => self.match_(s, value, cases, default.as_ref()),
            StmtKind::Switch { cases, default } => self.switch(s, cases, default.as_ref()),
            StmtKind::Do(b) => self.block(b),
            StmtKind::Parallel { branches, limit } => self.parallel(s, branches, limit.as_ref()),
            StmtKind::Try {
                body,
                catches,
                else_,
                finally,
            } => self.try_(s, body, catches, else_.as_ref(), finally.as_ref()),
            StmtKind::Throw {
                names,
                message,
                extra,
                cause,
            } => {
                self.code.throws.push(Throw {
                    names: operand_of(names),
                    message: message.as_ref().map(operand_of),
                    extra: extra.as_ref().map(operand_of),
                    cause: cause.as_ref().map(operand_of),
                });
                let throw = (self.code.throws.len() - 1) as u32;
                self.emit(SOp::Throw { throw }, s);
            }
        }
    }

    /// `Match`: the value in a temporary, each case compared with it in
    /// turn, else `Default`.
    fn match_(&mut self, s: &Stmt, value: &Tmpl, cases: &[Case], default: Option<&Block>) {
        let l_end = self.label();
        let slot = self.slot();
        let expr = self.operand(value);
        self.emit(SOp::SetTemp { slot, expr }, s);
        for c in cases {
            let l_next = self.label();
            let expr = self.operand(&c.key);
            self.emit_to(SOp::JumpIfNe { slot, expr, to: 0 }, l_next, s);
            self.block(&c.body);
            self.emit_to(SOp::Jump { to: 0 }, l_end, s);
            self.bind(l_next);
        }
        if let Some(d) = default {
            self.block(d);
        }
        self.bind(l_end);
    }

    /// `Switch`: every case whose condition holds runs (a flag records
    /// that one did), else `Default`.
    fn switch(&mut self, s: &Stmt, cases: &[Case], default: Option<&Block>) {
        let l_end = self.label();
        let slot = self.slot();
        self.emit(SOp::ClearFlag { slot }, s);
        for c in cases {
            let l_next = self.label();
            let cond = self.operand(&c.key);
            self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_next, s);
            self.emit(SOp::Flag { slot }, s);
            self.block(&c.body);
            self.bind(l_next);
        }
        self.emit_to(SOp::JumpIfFlag { slot, to: 0 }, l_end, s);
        if let Some(d) = default {
            self.block(d);
        }
        self.bind(l_end);
    }

    /// `Parallel`: each branch emitted as code of its own.
    fn parallel(&mut self, s: &Stmt, branches: &[Block], limit: Option<&Tmpl>) {
        let first = self.code.subs.len() as u32;
        for b in branches {
            // A branch is code of its own: no loop or clause around it.
            let sub = emit(b, self.code.programs.clone());
            self.code.subs.push(Arc::new(sub));
        }
        let limit = limit.map_or(NONE, |l| self.operand(l));
        let count = branches.len() as u32;
        self.emit(
            SOp::Parallel {
                first,
                count,
                limit,
            },
            s,
        );
    }

    /// `Try`: the body (and `Else`) jumps to `Finally`; the catch dispatch
    /// and each clause follow, then `Finally` with its `EndFinally`. The
    /// body's handlers were pushed while emitting it, so they come before
    /// this `Try`'s own.
    fn try_(
        &mut self,
        s: &Stmt,
        body: &Block,
        catches: &[Catch],
        else_: Option<&Block>,
        finally: Option<&Block>,
    ) {
        let try_ = self.code.ntries;
        self.code.ntries += 1;
        let l_fin = self.label();
        let start = self.pc();
        self.block(body);
        let try_end = self.pc();
        if let Some(e) = else_ {
            self.block(e);
        }
        self.emit_to(SOp::Jump { to: 0 }, l_fin, s);
        let catch_pc = self.pc();
        let ci = self.code.clauses.len() as u32;
        self.code.clauses.push(Vec::new());
        let mut clauses = Vec::new();
        if !catches.is_empty() {
            self.emit(SOp::Catch { try_, clauses: ci }, s);
            for c in catches {
                clauses.push(Clause {
                    with: c.with.clone(),
                    as_: c.as_.clone(),
                    target: self.pc(),
                });
                self.catches.push(try_);
                self.block(&c.body);
                self.catches.pop();
                self.emit(SOp::EndCatch { try_ }, s);
                self.emit_to(SOp::Jump { to: 0 }, l_fin, s);
            }
        }
        self.code.clauses[ci as usize] = clauses;
        self.bind(l_fin);
        let fin_pc = self.pc();
        if let Some(f) = finally {
            self.block(f);
            self.emit(SOp::EndFinally { try_ }, s);
        }
        if !catches.is_empty() {
            self.code.handlers.push(Handler {
                start,
                end: try_end,
                target: catch_pc,
                kind: HandlerKind::Catch(try_),
            });
        }
        if finally.is_some() {
            self.code.handlers.push(Handler {
                start,
                end: fin_pc,
                target: fin_pc,
                kind: HandlerKind::Finally(try_),
            });
        }
    }
}

/// A statement's text as murano's stack traces show it: an expression's
/// source, `destination: value` for an assignment, and `block construct`
/// for a block (murano/dsl/expressions.py titles macros so).
fn instruction(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Expr(t) => tmpl_text(t),
        StmtKind::Assign { dest, value } => format!("{}: {}", dest.src, tmpl_text(value)),
        _ => "block construct".to_string(),
    }
}

/// A template's text: its expressions' sources within its data.
fn tmpl_text(t: &Tmpl) -> String {
    match &t.kind {
        TmplKind::Const(v) => runtime::pyrepr::to_str(v),
        TmplKind::Expr(y) => y.src.to_string(),
        TmplKind::List(l) => format!(
            "[{}]",
            l.iter().map(tmpl_text).collect::<Vec<_>>().join(", ")
        ),
        TmplKind::Dict(d) => format!(
            "{{{}}}",
            d.iter()
                .map(|(k, v)| format!("{}: {}", tmpl_text(k), tmpl_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

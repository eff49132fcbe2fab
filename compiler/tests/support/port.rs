//! The engine's statement lowering (exec.rs's `Lower`), ported to read the
//! IR instead of the engine's private statement tree. Expressions are
//! compiled through the lowering hook into a table indexed by `ExprId`.

use std::sync::Arc;

use muranopl_compiler::murano::ir::{Block, Catch, Stmt, StmtKind, Tmpl, TmplKind};
use muranopl_compiler::Program;
use vm::bc::stmt::{disas, Handler, HandlerKind, SOp, NONE};

pub struct Code {
    ops: Vec<SOp>,
    pos: Vec<String>,
    handlers: Vec<Handler>,
    notes: Vec<String>,
    clauses: Vec<Vec<(Vec<String>, Option<Arc<str>>, u32)>>,
    throws: Vec<String>,
    names: Vec<Arc<str>>,
    subs: Vec<Code>,
    nslots: u32,
    ntries: u32,
    ntargets: u32,
}

struct Lower<'a> {
    code: Code,
    programs: &'a [Program],
    loops: Vec<(u32, usize)>,
    labels: Vec<Option<u32>>,
    patches: Vec<(usize, usize)>,
    catches: Vec<u32>,
}

pub fn lower(b: &Block, programs: &[Program]) -> Code {
    let mut l = Lower {
        code: Code {
            ops: vec![],
            pos: vec![],
            handlers: vec![],
            notes: vec![],
            clauses: vec![],
            throws: vec![],
            names: vec![],
            subs: vec![],
            nslots: 0,
            ntries: 0,
            ntargets: 0,
        },
        programs,
        loops: vec![],
        labels: vec![],
        patches: vec![],
        catches: vec![],
    };
    l.block(b);
    for (at, lb) in std::mem::take(&mut l.patches) {
        let to = l.labels[lb].expect("label bound");
        *l.code.ops[at].target_mut().expect("a jump") = to;
    }
    l.code
}

impl Lower<'_> {
    fn emit(&mut self, op: SOp, s: &Stmt) -> usize {
        self.code.ops.push(op);
        self.code.pos.push(s.pos.to_string());
        self.code.ops.len() - 1
    }
    fn pc(&self) -> u32 {
        self.code.ops.len() as u32
    }
    /// The expression table entry of a template, with its note.
    fn expr(&mut self, t: &Tmpl) -> u32 {
        self.code.notes.push(match &t.kind {
            TmplKind::Expr(y) => self.programs[y.id.index()].source().to_string(),
            TmplKind::Const(v) => format!("{v:?}"),
            _ => "<template>".into(),
        });
        (self.code.notes.len() - 1) as u32
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
    fn emit_to(&mut self, op: SOp, l: usize, s: &Stmt) {
        let at = self.emit(op, s);
        self.patches.push((at, l));
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
                let expr = self.expr(t);
                self.emit(SOp::Eval { expr }, s);
            }
            StmtKind::Assign { value, .. } => {
                let target = self.code.ntargets;
                self.code.ntargets += 1;
                let expr = self.expr(value);
                self.emit(SOp::Assign { target, expr }, s);
            }
            StmtKind::Return(t) => {
                let expr = t.as_ref().map_or(NONE, |t| self.expr(t));
                self.emit(SOp::Return { expr }, s);
            }
            StmtKind::If { cond, then, else_ } => {
                let (l_else, l_end) = (self.label(), self.label());
                let cond = self.expr(cond);
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
                let cond = self.expr(cond);
                self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_exit, s);
                self.loop_body(top, l_exit, body);
                self.emit(SOp::Jump { to: top }, s);
                self.bind(l_exit);
            }
            StmtKind::For { var, in_, body } => {
                let l_exit = self.label();
                let slot = self.slot();
                let expr = self.expr(in_);
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
                let expr = self.expr(count);
                self.emit(SOp::CountInit { slot, expr }, s);
                let top = self.pc();
                self.emit_to(SOp::CountNext { slot, done: 0 }, l_exit, s);
                self.loop_body(top, l_exit, body);
                self.emit(SOp::Jump { to: top }, s);
                self.bind(l_exit);
            }
            // The verifier guarantees an enclosing loop / clause.
            StmtKind::Break => {
                let (_, exit) = *self.loops.last().expect("in a loop");
                self.emit_to(SOp::Leave { to: 0 }, exit, s);
            }
            StmtKind::Continue => {
                let (top, _) = *self.loops.last().expect("in a loop");
                self.emit(SOp::Leave { to: top }, s);
            }
            StmtKind::Rethrow => {
                let try_ = *self.catches.last().expect("in a Catch");
                self.emit(SOp::Rethrow { try_ }, s);
            }
            StmtKind::Invalid(op) => {
                self.emit(SOp::Invalid { what: op.code() }, s);
            }
            StmtKind::Match {
                value,
                cases,
                default,
            } => {
                let l_end = self.label();
                let slot = self.slot();
                let expr = self.expr(value);
                self.emit(SOp::SetTemp { slot, expr }, s);
                for c in cases {
                    let l_next = self.label();
                    let expr = self.expr(&c.key);
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
            StmtKind::Switch { cases, default } => {
                let l_end = self.label();
                let slot = self.slot();
                self.emit(SOp::ClearFlag { slot }, s);
                for c in cases {
                    let l_next = self.label();
                    let cond = self.expr(&c.key);
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
            StmtKind::Do(b) => self.block(b),
            StmtKind::Parallel { branches, limit } => {
                let first = self.code.subs.len() as u32;
                for b in branches {
                    let sub = lower(b, self.programs);
                    self.code.subs.push(sub);
                }
                let limit = limit.as_ref().map_or(NONE, |l| self.expr(l));
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
            StmtKind::Try {
                body,
                catches,
                else_,
                finally,
            } => self.try_(s, body, catches, else_, finally),
            StmtKind::Throw { names, .. } => {
                self.code.throws.push(match &names.kind {
                    TmplKind::Const(v) => format!("{v:?}"),
                    TmplKind::Expr(y) => self.programs[y.id.index()].source().to_string(),
                    _ => String::new(),
                });
                let throw = (self.code.throws.len() - 1) as u32;
                self.emit(SOp::Throw { throw }, s);
            }
        }
    }

    fn try_(
        &mut self,
        s: &Stmt,
        body: &Block,
        catches: &[Catch],
        else_: &Option<Block>,
        finally: &Option<Block>,
    ) {
        let try_ = self.code.ntries;
        self.code.ntries += 1;
        let (l_catch, l_fin) = (self.label(), self.label());
        let start = self.pc();
        self.block(body);
        let try_end = self.pc();
        if let Some(e) = else_ {
            self.block(e);
        }
        self.emit_to(SOp::Jump { to: 0 }, l_fin, s);
        self.bind(l_catch);
        let catch_pc = self.pc();
        let ci = self.code.clauses.len() as u32;
        self.code.clauses.push(Vec::new());
        let mut clauses = Vec::new();
        if !catches.is_empty() {
            self.emit(SOp::Catch { try_, clauses: ci }, s);
            for c in catches {
                clauses.push((c.with.clone(), c.as_.clone(), self.pc()));
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

impl Code {
    /// exec.rs's `Code::disas`.
    pub fn disas(&self) -> String {
        let mut out = disas(&self.ops, &self.pos, &self.handlers, |op| self.note(op));
        for (i, s) in self.subs.iter().enumerate() {
            out.push_str(&format!("  branch {i}:\n"));
            for line in s.disas().lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    fn note(&self, op: &SOp) -> String {
        let e = |i: u32| self.notes.get(i as usize).cloned().unwrap_or_default();
        match *op {
            SOp::Eval { expr }
            | SOp::SetTemp { expr, .. }
            | SOp::IterInit { expr, .. }
            | SOp::CountInit { expr, .. } => e(expr),
            SOp::JumpIfNot { cond, .. } => e(cond),
            SOp::Return { expr } if expr != NONE => e(expr),
            SOp::JumpIfNe { expr, .. } => e(expr),
            SOp::Assign { expr, .. } => e(expr),
            SOp::IterNext { var, .. } => format!("${}", self.names[var as usize]),
            SOp::Catch { clauses, .. } => self.clauses[clauses as usize]
                .iter()
                .map(|(with, as_, target)| {
                    format!(
                        "{}{} -> {:04}",
                        if with.is_empty() {
                            "*".to_string()
                        } else {
                            with.join("|")
                        },
                        as_.as_ref().map_or(String::new(), |a| format!(" as ${a}")),
                        target
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
            SOp::Throw { throw } => self.throws[throw as usize].clone(),
            _ => String::new(),
        }
    }
}

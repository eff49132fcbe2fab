//! The IR verifier: the invariants the front ends guarantee and the
//! bytecode lowering relies on.

use super::body::{Block, DestRoot, DestStep, InvalidOp, Stmt, StmtKind};
use super::contract::{chain, Contract, ContractKind, DictKey};
use super::expr::{ExprId, Role, Tmpl, TmplKind, Yaql};
use super::predicate::reads_value;
use crate::murano::Pos;
use crate::yaql::ast::ExprKind;

/// Checks a body:
///
/// * `Break` and `Continue` only inside a loop body, `Rethrow` only inside
///   a `Catch` clause, and [`StmtKind::Invalid`] only where the statement
///   it stands for would have no target (a `Parallel` branch is outside
///   every loop and clause);
/// * expressions numbered 0, 1, 2, ... in the order the engine compiles
///   them, each with the [`Role`] of its place, non-empty text and a
///   syntax tree within it;
/// * dict templates keyed by constants or expressions only;
/// * a `$.name` destination names its property;
/// * positions 1-based.
pub fn verify(b: &Block) -> Result<(), String> {
    let mut v = Verifier {
        next: 0,
        in_loop: false,
        in_catch: false,
    };
    v.block(b)
}

/// Checks a contract: expressions numbered in compile order with the
/// contract role, chains non-empty and matching their syntax tree (and
/// every `$`-rooted method chain lowered as one), dict key contracts made
/// from expressions only, positions 1-based.
pub fn verify_contract(c: &Contract) -> Result<(), String> {
    let mut v = Verifier {
        next: 0,
        in_loop: false,
        in_catch: false,
    };
    v.contract(c)
}

struct Verifier {
    next: usize,
    in_loop: bool,
    in_catch: bool,
}

fn pos_ok(pos: &Pos) -> Result<(), String> {
    if pos.line == 0 || pos.col == 0 {
        return Err(format!("{pos}: position is not 1-based"));
    }
    Ok(())
}

impl Verifier {
    fn yaql(&mut self, y: &Yaql, role: Role) -> Result<(), String> {
        let want = ExprId::new(self.next);
        if y.id != want {
            return Err(format!(
                "{}: expression {} `{}` should be {want}",
                y.pos, y.id, y.src
            ));
        }
        self.next += 1;
        if y.role != role {
            return Err(format!(
                "{}: expression {} has role {:?}, expected {role:?}",
                y.pos, y.id, y.role
            ));
        }
        if y.src.trim().is_empty() {
            return Err(format!("{}: expression {} has no text", y.pos, y.id));
        }
        if y.ast.span.end as usize > y.src.len() || y.ast.span.start > y.ast.span.end {
            return Err(format!(
                "{}: expression {}'s syntax tree spans {}..{} beyond its text `{}`",
                y.pos, y.id, y.ast.span.start, y.ast.span.end, y.src
            ));
        }
        pos_ok(&y.pos)
    }

    fn tmpl(&mut self, t: &Tmpl) -> Result<(), String> {
        pos_ok(&t.pos)?;
        match &t.kind {
            TmplKind::Const(_) => Ok(()),
            TmplKind::Expr(y) => self.yaql(y, Role::Template),
            TmplKind::List(items) => items.iter().try_for_each(|x| self.tmpl(x)),
            TmplKind::Dict(items) => items.iter().try_for_each(|(k, v)| {
                if matches!(k.kind, TmplKind::List(_) | TmplKind::Dict(_)) {
                    return Err(format!("{}: a dict key is a list or dict", k.pos));
                }
                self.tmpl(k)?;
                self.tmpl(v)
            }),
        }
    }

    fn opt(&mut self, t: &Option<Tmpl>) -> Result<(), String> {
        t.as_ref().map_or(Ok(()), |t| self.tmpl(t))
    }

    fn block(&mut self, b: &Block) -> Result<(), String> {
        b.stmts.iter().try_for_each(|s| self.stmt(s))
    }

    fn opt_block(&mut self, b: &Option<Block>) -> Result<(), String> {
        b.as_ref().map_or(Ok(()), |b| self.block(b))
    }

    fn loop_block(&mut self, b: &Block) -> Result<(), String> {
        let saved = std::mem::replace(&mut self.in_loop, true);
        let r = self.block(b);
        self.in_loop = saved;
        r
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), String> {
        pos_ok(&s.pos)?;
        let pos = &s.pos;
        match &s.kind {
            StmtKind::Expr(t) => self.tmpl(t),
            StmtKind::Assign { dest, value } => {
                if dest.src.is_empty() {
                    return Err(format!("{pos}: destination without text"));
                }
                // Indexes are compiled from the right, then the object.
                for st in dest.path.iter().rev() {
                    if let DestStep::Index(y) = st {
                        self.yaql(y, Role::DestIndex)?;
                    }
                }
                match &dest.root {
                    DestRoot::Local(_) => {}
                    DestRoot::Prop(n) if n.is_empty() => {
                        return Err(format!("{pos}: property destination without a name"))
                    }
                    DestRoot::Prop(_) => {}
                    DestRoot::Of(base, _) => self.yaql(base, Role::DestBase)?,
                }
                self.tmpl(value)
            }
            StmtKind::Return(t) => self.opt(t),
            StmtKind::If { cond, then, else_ } => {
                self.tmpl(cond)?;
                self.block(then)?;
                self.opt_block(else_)
            }
            StmtKind::While { cond, body } => {
                self.tmpl(cond)?;
                self.loop_block(body)
            }
            StmtKind::For { in_, body, .. } => {
                self.tmpl(in_)?;
                self.loop_block(body)
            }
            StmtKind::Repeat { count, body } => {
                self.tmpl(count)?;
                self.loop_block(body)
            }
            StmtKind::Break | StmtKind::Continue if !self.in_loop => {
                Err(format!("{pos}: Break or Continue outside a loop"))
            }
            StmtKind::Break | StmtKind::Continue => Ok(()),
            StmtKind::Match {
                value,
                cases,
                default,
            } => {
                for c in cases {
                    self.tmpl(&c.key)?;
                    self.block(&c.body)?;
                }
                self.tmpl(value)?;
                self.opt_block(default)
            }
            StmtKind::Switch { cases, default } => {
                for c in cases {
                    self.tmpl(&c.key)?;
                    self.block(&c.body)?;
                }
                self.opt_block(default)
            }
            StmtKind::Do(b) => self.block(b),
            StmtKind::Parallel { branches, limit } => {
                let saved = (self.in_loop, self.in_catch);
                (self.in_loop, self.in_catch) = (false, false);
                let r = branches.iter().try_for_each(|b| self.block(b));
                (self.in_loop, self.in_catch) = saved;
                r?;
                self.opt(limit)
            }
            StmtKind::Try {
                body,
                catches,
                else_,
                finally,
            } => {
                for c in catches {
                    pos_ok(&c.pos)?;
                    let saved = std::mem::replace(&mut self.in_catch, true);
                    let r = self.block(&c.body);
                    self.in_catch = saved;
                    r?;
                }
                self.block(body)?;
                self.opt_block(else_)?;
                self.opt_block(finally)
            }
            StmtKind::Throw {
                names,
                message,
                extra,
                cause,
            } => {
                self.tmpl(names)?;
                self.opt(message)?;
                self.opt(extra)?;
                self.opt(cause)
            }
            StmtKind::Rethrow if !self.in_catch => {
                Err(format!("{pos}: Rethrow outside a Catch clause"))
            }
            StmtKind::Rethrow => Ok(()),
            StmtKind::Invalid(op) => {
                let has_target = match op {
                    InvalidOp::Break | InvalidOp::Continue => self.in_loop,
                    InvalidOp::Rethrow => self.in_catch,
                };
                if has_target {
                    return Err(format!(
                        "{pos}: invalid {op:?} where the statement has a target"
                    ));
                }
                Ok(())
            }
        }
    }

    fn contract(&mut self, c: &Contract) -> Result<(), String> {
        pos_ok(&c.pos)?;
        match &c.kind {
            ContractKind::Any | ContractKind::Null | ContractKind::Const(_) => Ok(()),
            ContractKind::List { items, .. } => items.iter().try_for_each(|c| self.contract(c)),
            ContractKind::Dict(items) => items.iter().try_for_each(|(k, v)| {
                if let DictKey::Contract(k) = k {
                    if !matches!(
                        k.kind,
                        ContractKind::Any
                            | ContractKind::Chain { .. }
                            | ContractKind::Expr(_)
                            | ContractKind::Static(_)
                    ) {
                        return Err(format!("{}: a key contract is not an expression", k.pos));
                    }
                    self.contract(k)?;
                }
                self.contract(v)
            }),
            ContractKind::Chain { expr, links } => {
                self.yaql(expr, Role::Contract)?;
                if links.is_empty() {
                    return Err(format!("{}: a chain without links", c.pos));
                }
                // The links are the method calls from `$` outwards.
                let mut cur = &*expr.ast;
                for l in links.iter().rev() {
                    let ExprKind::Method(recv, name, _) = &cur.kind else {
                        return Err(format!(
                            "{}: chain `{}` has more links than calls",
                            c.pos, expr.src
                        ));
                    };
                    if name != l.kind.method() || cur.span != l.span {
                        return Err(format!(
                            "{}: link {} of `{}` does not match the call .{name}()",
                            c.pos,
                            l.kind.method(),
                            expr.src
                        ));
                    }
                    cur = recv;
                }
                if !matches!(&cur.kind, ExprKind::Var(v) if v.is_empty()) {
                    return Err(format!(
                        "{}: chain `{}` is not rooted at $",
                        c.pos, expr.src
                    ));
                }
                Ok(())
            }
            ContractKind::Expr(y) | ContractKind::Static(y) => {
                self.yaql(y, Role::Contract)?;
                if matches!(c.kind, ContractKind::Static(_)) == reads_value(&y.ast) {
                    return Err(format!(
                        "{}: contract `{}` is {}static",
                        c.pos,
                        y.src,
                        if reads_value(&y.ast) { "" } else { "not " }
                    ));
                }
                if y.src.trim() == "$" {
                    return Err(format!("{}: contract `$` is not Any", c.pos));
                }
                if chain(&y.ast, false).is_some() {
                    return Err(format!(
                        "{}: contract `{}` is a chain kept as an expression",
                        c.pos, y.src
                    ));
                }
                Ok(())
            }
        }
    }
}

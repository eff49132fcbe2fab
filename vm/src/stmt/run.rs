//! The statement interpreter: runs a [`Code`] against a [`Host`].
//!
//! The interpreter owns control flow: the program counter, jumps, loop
//! state (`For` items, `Repeat` counts, `Match` temporaries, `Switch`
//! flags), exception dispatch through the handler table, `Finally` blocks
//! with what was pending when they began (an exception, a return, a
//! jump), and the position an error leaving a statement gets. The host
//! owns everything that has meaning in MuranoPL: evaluating template
//! operands, variables, assignment, which `Catch` clause catches an error,
//! the exception a `Throw` makes, and how `Parallel` branches run.

use std::sync::Arc;

use runtime::{Error, Result, Value};

use super::code::{Clause, Code, Operand, Target, Throw};
use super::ops::{finally_between, find_handler, Handler, HandlerKind, SOp, INVALID_RETHROW, NONE};

/// What the statement interpreter asks of the language it runs.
pub trait Host {
    /// The compiled expression type of the code.
    type Program;

    /// Called before each instruction: a statement is a unit of the run's
    /// budgets (steps, time); an error stops the run at that statement.
    fn tick(&mut self) -> Result<()>;

    /// True when the host watches statements start ([`Host::statement`]);
    /// by default it does not, and the interpreter asks nothing more.
    #[inline]
    fn tracing(&self) -> bool {
        false
    }

    /// A statement of `code` starts at instruction `pc` (the first
    /// instruction of a statement, or a jump back to one), when
    /// [`Host::tracing`].
    #[inline]
    fn statement(&mut self, code: &Code<Self::Program>, pc: u32) {
        let _ = (code, pc);
    }

    /// The value of a template operand of `code` (lazy results
    /// materialised).
    fn eval(&mut self, code: &Code<Self::Program>, o: &Operand) -> Result<Value>;

    /// The truth of a condition operand of `code` (`If`, `While`, a
    /// `Switch` case): by default its value's truthiness; a host may
    /// answer from faster code that agrees with it.
    fn cond(&mut self, code: &Code<Self::Program>, o: &Operand) -> Result<bool> {
        Ok(self.eval(code, o)?.truthy())
    }

    /// Assigns `v` through target `t` of `code`.
    fn assign(&mut self, code: &Code<Self::Program>, t: &Target, v: Value) -> Result<()>;

    /// Binds a variable of the running block (a `For` variable).
    fn bind(&mut self, name: &Arc<str>, v: Value);

    /// Runs `branches` concurrently, at most `limit` at a time (0: no
    /// limit), each with [`run`]; the first error fails the statement.
    fn parallel(&mut self, branches: &[Arc<Code<Self::Program>>], limit: usize) -> Result<()>;

    /// The clause among `clauses` that catches `e` (with its `As` variable
    /// bound), as the pc of its block; `None` when none catches it.
    fn catch(&mut self, e: &Error, clauses: &[Clause]) -> Result<Option<u32>>;

    /// The error a `Throw` statement raises.
    fn throw(&mut self, code: &Code<Self::Program>, t: &Throw) -> Error;

    /// The error of [`SOp::Invalid`] with code `what` (an operation the
    /// compiler refused: `Break` outside a loop, ...).
    fn invalid(&self, what: u32) -> Error;
}

/// Runs `code` to its end or a `Return`: the returned value, or `None`
/// when the code ran off its end.
pub fn run<H: Host>(host: &mut H, code: &Code<H::Program>) -> Result<Option<Value>> {
    let mut st = Run {
        slots: vec![Slot::Empty; code.nslots as usize],
        caught: vec![None; code.ntries as usize],
        pending: Vec::new(),
    };
    let mut pc: u32 = 0;
    loop {
        let Some(op) = code.ops.get(pc as usize).copied() else {
            return Ok(None);
        };
        // Running out of a budget is not an exception the code can catch.
        if let Err(e) = host.tick() {
            return Err(leaving(e, code, pc));
        }
        if host.tracing() && starts_statement(code, pc) {
            host.statement(code, pc);
        }
        match st.step(host, code, pc, op) {
            Ok(Flow::Next) => pc += 1,
            Ok(Flow::Goto(t)) => pc = t,
            Ok(Flow::Return(v)) => return Ok(Some(v)),
            Err(e) => {
                let e = leaving(e, code, pc);
                match find_handler(&code.handlers, pc).copied() {
                    Some(Handler {
                        target,
                        kind: HandlerKind::Catch(t),
                        ..
                    }) => {
                        st.caught[t as usize] = Some(e);
                        pc = target;
                    }
                    Some(Handler {
                        target,
                        kind: HandlerKind::Finally(t),
                        ..
                    }) => {
                        st.pending.push((t, Pending::Throw(e)));
                        pc = target;
                    }
                    None => return Err(e),
                }
            }
        }
    }
}

/// True when instruction `pc` is the first of its statement's: the first
/// of the code, or one whose position differs from the one before it.
fn starts_statement<P>(code: &Code<P>, pc: u32) -> bool {
    let pc = pc as usize;
    pc == 0 || code.pos.get(pc) != code.pos.get(pc - 1)
}

/// Records that `e` left the statement of instruction `pc`: the
/// statement's position joins the trace and, unless the error has a
/// location already (from a statement further in), becomes its location.
fn leaving<P>(e: Error, code: &Code<P>, pc: u32) -> Error {
    let pc = pc as usize;
    e.leave_statement(code.pos[pc].clone(), code.texts[pc].clone())
}

/// Completion pending while a `Finally` block runs.
enum Pending {
    Throw(Error),
    Return(Value),
    Jump(u32),
}

/// What an instruction does next.
enum Flow {
    Next,
    Goto(u32),
    Return(Value),
}

/// A scratch slot of an activation.
#[derive(Clone)]
enum Slot {
    Empty,
    Items(Vec<Value>, usize),
    Count(i64),
    Value(Value),
    Flag(bool),
}

/// The interpreter's state of one run of a code object.
struct Run {
    slots: Vec<Slot>,
    /// The error each `Try` caught, while its clauses run.
    caught: Vec<Option<Error>>,
    /// (try, completion) of the `Finally` blocks running, innermost last.
    pending: Vec<(u32, Pending)>,
}

impl Run {
    fn step<H: Host>(
        &mut self,
        host: &mut H,
        code: &Code<H::Program>,
        pc: u32,
        op: SOp,
    ) -> Result<Flow> {
        let eval = |host: &mut H, i: u32| host.eval(code, &code.operands[i as usize]);
        Ok(match op {
            SOp::Eval { expr } => {
                eval(host, expr)?;
                Flow::Next
            }
            SOp::Assign { target, expr } => {
                let v = eval(host, expr)?;
                host.assign(code, &code.targets[target as usize], v)?;
                Flow::Next
            }
            SOp::JumpIfNot { cond, to } => {
                if host.cond(code, &code.operands[cond as usize])? {
                    Flow::Next
                } else {
                    Flow::Goto(to)
                }
            }
            SOp::Jump { to } => Flow::Goto(to),
            SOp::Leave { to } => return self.unwind(code, pc, Pending::Jump(to)),
            SOp::Return { expr } => {
                let v = if expr == NONE {
                    Value::Null
                } else {
                    eval(host, expr)?
                };
                return self.unwind(code, pc, Pending::Return(v));
            }
            SOp::IterInit { slot, expr } => {
                self.slots[slot as usize] = Slot::Items(items(eval(host, expr)?)?, 0);
                Flow::Next
            }
            SOp::IterNext { slot, var, done } => match self.next_item(slot) {
                Some(v) => {
                    host.bind(&code.names[var as usize], v);
                    Flow::Next
                }
                None => Flow::Goto(done),
            },
            SOp::CountInit { slot, expr } => {
                let n = eval(host, expr)?.as_i64().unwrap_or(0);
                self.slots[slot as usize] = Slot::Count(n);
                Flow::Next
            }
            SOp::CountNext { slot, done } => match &mut self.slots[slot as usize] {
                Slot::Count(n) if *n > 0 => {
                    *n -= 1;
                    Flow::Next
                }
                _ => Flow::Goto(done),
            },
            SOp::SetTemp { slot, expr } => {
                self.slots[slot as usize] = Slot::Value(eval(host, expr)?);
                Flow::Next
            }
            SOp::JumpIfNe { slot, expr, to } => {
                let k = eval(host, expr)?;
                match &self.slots[slot as usize] {
                    Slot::Value(v) if *v == k => Flow::Next,
                    _ => Flow::Goto(to),
                }
            }
            SOp::Flag { slot } => {
                self.slots[slot as usize] = Slot::Flag(true);
                Flow::Next
            }
            SOp::ClearFlag { slot } => {
                self.slots[slot as usize] = Slot::Flag(false);
                Flow::Next
            }
            SOp::JumpIfFlag { slot, to } => match self.slots[slot as usize] {
                Slot::Flag(true) => Flow::Goto(to),
                _ => Flow::Next,
            },
            SOp::Parallel {
                first,
                count,
                limit,
            } => {
                let limit = if limit == NONE {
                    0
                } else {
                    eval(host, limit)?.as_i64().unwrap_or(0).max(0) as usize
                };
                let (first, count) = (first as usize, count as usize);
                host.parallel(&code.subs[first..first + count], limit)?;
                Flow::Next
            }
            SOp::Catch { try_, clauses } => {
                return self.catch(host, &code.clauses[clauses as usize], try_)
            }
            SOp::EndCatch { try_ } => {
                self.caught[try_ as usize] = None;
                Flow::Next
            }
            SOp::EndFinally { try_ } => return self.end_finally(code, pc, try_),
            SOp::Throw { throw } => return Err(host.throw(code, &code.throws[throw as usize])),
            SOp::Rethrow { try_ } => {
                return Err(self.caught[try_ as usize]
                    .clone()
                    .unwrap_or_else(|| host.invalid(INVALID_RETHROW)))
            }
            SOp::Invalid { what } => return Err(host.invalid(what)),
        })
    }

    /// `IterNext`: the next item of slot `slot`, if any.
    #[inline]
    fn next_item(&mut self, slot: u32) -> Option<Value> {
        match &mut self.slots[slot as usize] {
            Slot::Items(items, i) => {
                let v = items.get(*i).cloned();
                *i += 1;
                v
            }
            _ => None,
        }
    }

    /// Continues a return or jump from `pc` through the `Finally` blocks it
    /// leaves.
    fn unwind<P>(&mut self, code: &Code<P>, pc: u32, p: Pending) -> Result<Flow> {
        let to = match &p {
            Pending::Jump(t) => Some(*t),
            _ => None,
        };
        if let Some(h) = finally_between(&code.handlers, pc, to) {
            let HandlerKind::Finally(t) = h.kind else {
                unreachable!("finally_between finds Finally handlers only")
            };
            self.pending.push((t, p));
            return Ok(Flow::Goto(h.target));
        }
        match p {
            Pending::Jump(t) => Ok(Flow::Goto(t)),
            Pending::Return(v) => Ok(Flow::Return(v)),
            Pending::Throw(e) => Err(e),
        }
    }

    /// `Catch`: the clause of Try `try_` that catches its error, if any;
    /// an error no clause catches goes on.
    #[inline(never)]
    fn catch<H: Host>(&mut self, host: &mut H, clauses: &[Clause], try_: u32) -> Result<Flow> {
        let Some(e) = self.caught[try_ as usize].clone() else {
            return Ok(Flow::Next);
        };
        match host.catch(&e, clauses)? {
            Some(target) => Ok(Flow::Goto(target)),
            None => {
                self.caught[try_ as usize] = None;
                Err(e)
            }
        }
    }

    /// `EndFinally`: what was pending when the `Finally` of Try `try_`
    /// began (an exception, a return, a jump) goes on.
    #[inline(never)]
    fn end_finally<P>(&mut self, code: &Code<P>, pc: u32, try_: u32) -> Result<Flow> {
        match self.pending.last() {
            Some((t, _)) if *t == try_ => {}
            _ => return Ok(Flow::Next),
        }
        match self.pending.pop() {
            // A pending exception continues to the handlers outside
            // this Try.
            Some((_, Pending::Throw(e))) => Err(e),
            Some((_, other)) => self.unwind(code, pc, other),
            None => Ok(Flow::Next),
        }
    }
}

/// `IterInit`: the items a `For` walks (a dict's keys; nothing for null).
fn items(coll: Value) -> Result<Vec<Value>> {
    Ok(match &coll {
        Value::Dict(d) => d.keys().cloned().collect(),
        Value::Null => Vec::new(),
        v => runtime::seq::iterate_unlimited(v)?.collect::<Result<_>>()?,
    })
}

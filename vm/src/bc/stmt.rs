//! Statement bytecode of MuranoPL method bodies.
//!
//! Control flow is explicit jumps; `Try`/`Catch`/`Finally` become a handler
//! table of `[start, end) -> target` entries, innermost first, that the
//! disassembler prints. Operands index side tables of the code object that
//! owns the instructions (expressions, assignment targets, names, catch
//! clauses, sub-codes for `Parallel` branches); this module only knows
//! their numbers.

use std::fmt::Write;

/// A statement instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SOp {
    /// Evaluate expression `expr` for its effects.
    Eval {
        /// Expression index.
        expr: u32,
    },
    /// Assign expression `expr` to target `target`.
    Assign {
        /// Target index.
        target: u32,
        /// Expression index.
        expr: u32,
    },
    /// Jump to `to` when expression `cond` is falsy.
    JumpIfNot {
        /// Expression index.
        cond: u32,
        /// Target pc.
        to: u32,
    },
    /// Jump to `to`.
    Jump {
        /// Target pc.
        to: u32,
    },
    /// Jump to `to` through the `Finally` blocks it leaves (`Break`,
    /// `Continue`).
    Leave {
        /// Target pc.
        to: u32,
    },
    /// Return expression `expr` (or null) through enclosing `Finally` blocks.
    Return {
        /// Expression index, `u32::MAX` for none.
        expr: u32,
    },
    /// `For`: evaluate the collection `expr` into iterator slot `slot`.
    IterInit {
        /// Slot.
        slot: u32,
        /// Expression index.
        expr: u32,
    },
    /// `For`: next element into variable `var`, or jump to `done`.
    IterNext {
        /// Slot.
        slot: u32,
        /// Name index.
        var: u32,
        /// Target pc when exhausted.
        done: u32,
    },
    /// `Repeat`: evaluate the count `expr` into slot `slot`.
    CountInit {
        /// Slot.
        slot: u32,
        /// Expression index.
        expr: u32,
    },
    /// `Repeat`: decrement slot `slot`, or jump to `done` at zero.
    CountNext {
        /// Slot.
        slot: u32,
        /// Target pc.
        done: u32,
    },
    /// `Match`: evaluate `expr` into slot `slot`.
    SetTemp {
        /// Slot.
        slot: u32,
        /// Expression index.
        expr: u32,
    },
    /// `Match`: jump to `to` unless slot `slot` equals expression `expr`.
    JumpIfNe {
        /// Slot.
        slot: u32,
        /// Expression index.
        expr: u32,
        /// Target pc.
        to: u32,
    },
    /// `Switch`: set flag slot `slot`.
    Flag {
        /// Slot.
        slot: u32,
    },
    /// `Switch`: clear flag slot `slot`.
    ClearFlag {
        /// Slot.
        slot: u32,
    },
    /// `Switch`: jump to `to` when flag slot `slot` is set.
    JumpIfFlag {
        /// Slot.
        slot: u32,
        /// Target pc.
        to: u32,
    },
    /// `Parallel`: run sub-codes `first..first+count` as green threads, at
    /// most expression `limit` at a time (`u32::MAX`: no limit).
    Parallel {
        /// First sub-code.
        first: u32,
        /// Number of branches.
        count: u32,
        /// Expression index of `Limit`.
        limit: u32,
    },
    /// Catch dispatch of try `try_`: match the caught exception against
    /// clause list `clauses`, bind `As`, jump to the clause, or rethrow.
    Catch {
        /// Try index.
        try_: u32,
        /// Clause list index.
        clauses: u32,
    },
    /// End of a catch clause of try `try_`.
    EndCatch {
        /// Try index.
        try_: u32,
    },
    /// End of the `Finally` block of try `try_`: resume the completion that
    /// entered it (fall through, rethrow, return or jump).
    EndFinally {
        /// Try index.
        try_: u32,
    },
    /// `Throw`: throw statement `throw` (names, message, extra, cause).
    Throw {
        /// Throw-spec index.
        throw: u32,
    },
    /// `Rethrow` the exception caught by try `try_`.
    Rethrow {
        /// Try index.
        try_: u32,
    },
    /// `Break`/`Continue` outside a loop (`DslInvalidOperationError`).
    Invalid {
        /// 0 = Break, 1 = Continue, 2 = Rethrow outside Catch.
        what: u32,
    },
}

/// What a handler does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerKind {
    /// Jump to the catch dispatch of try `0`.
    Catch(u32),
    /// Enter the `Finally` block of try `0` with the exception pending.
    Finally(u32),
}

/// A handler table entry: an exception raised at a pc in `[start, end)`
/// continues at `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handler {
    /// First covered pc.
    pub start: u32,
    /// One past the last covered pc.
    pub end: u32,
    /// Where to continue.
    pub target: u32,
    /// Catch or Finally.
    pub kind: HandlerKind,
}

/// Finds the innermost handler covering `pc` (the table lists inner
/// handlers first).
pub fn find_handler(handlers: &[Handler], pc: u32) -> Option<&Handler> {
    handlers.iter().find(|h| h.start <= pc && pc < h.end)
}

/// Finds the innermost `Finally` handler covering `pc` but not `to`.
pub fn finally_between(handlers: &[Handler], pc: u32, to: Option<u32>) -> Option<&Handler> {
    handlers.iter().find(|h| {
        matches!(h.kind, HandlerKind::Finally(_))
            && h.start <= pc
            && pc < h.end
            && to.is_none_or(|t| !(h.start <= t && t < h.end))
    })
}

/// Disassembles instructions (with a position per instruction) and the
/// handler table.
pub fn disas(
    ops: &[SOp],
    pos: &[String],
    handlers: &[Handler],
    note: impl Fn(&SOp) -> String,
) -> String {
    let mut out = String::new();
    for (pc, op) in ops.iter().enumerate() {
        let text = format!("{op:?}");
        let n = note(op);
        let _ = write!(out, "  {pc:04}  {text:<52}");
        if !n.is_empty() {
            let _ = write!(out, " ; {n}");
        }
        if let Some(p) = pos.get(pc) {
            let _ = write!(out, "  @{p}");
        }
        out.push('\n');
    }
    if !handlers.is_empty() {
        out.push_str("  Handlers:\n");
        for h in handlers {
            let _ = writeln!(
                out,
                "    [{:04}, {:04}) -> {:04}  {:?}",
                h.start, h.end, h.target, h.kind
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn innermost_handler_wins_and_finally_skips_targets_inside() {
        let hs = [
            Handler {
                start: 2,
                end: 4,
                target: 9,
                kind: HandlerKind::Catch(1),
            },
            Handler {
                start: 0,
                end: 8,
                target: 10,
                kind: HandlerKind::Finally(0),
            },
        ];
        assert_eq!(find_handler(&hs, 3).unwrap().target, 9);
        assert_eq!(find_handler(&hs, 5).unwrap().target, 10);
        assert!(find_handler(&hs, 8).is_none());
        assert_eq!(finally_between(&hs, 3, Some(20)).unwrap().target, 10);
        assert!(finally_between(&hs, 3, Some(1)).is_none());
    }
}

//! Statement bytecode of MuranoPL method bodies.
//!
//! Control flow is explicit jumps; `Try`/`Catch`/`Finally` become a handler
//! table of `[start, end) -> target` entries, innermost first, that the
//! disassembler prints. Operands index side tables of the code object that
//! owns the instructions (template operands, assignment targets, names,
//! catch clauses, sub-codes for `Parallel` branches: the [`Code`](super::Code)
//! object, which the compiler's `murano::emit` makes from the MuranoPL IR);
//! this module only knows their numbers.
//!
//! The instructions are declared once, in [`for_each_sop!`](crate::for_each_sop):
//! the enum [`SOp`], its mnemonics, its operand lists ([`SOp::operands`]),
//! jump patching ([`SOp::target_mut`]) and the disassembler's text
//! ([`SOp`]'s `Display`, which [`disas`] prints) are generated from it.
//!
//! Naming: ops are CamelCase verbs (`Eval`, `Jump`, `IterNext`) or the
//! statement they implement (`Parallel`, `Catch`); an operand's name says
//! what it is and its kind ([`OperandKind`]) which table it indexes:
//! `Expr` = template operands, `OptExpr` = the same or [`NONE`], `Target`
//! = assignment targets, `Name` = names, `Pc` = absolute instruction
//! index, `Slot` = per-activation scratch slot, `Sub` = `Parallel`
//! sub-codes, `Try` = per-activation caught-exception slot of a `Try`,
//! `Clauses` = catch clause lists, `Throw` = `Throw` specs, `Count` and
//! `What` plain numbers.

use std::fmt::{self, Write};

/// The operand value meaning "none" (no `Return` value, no `Limit`).
pub const NONE: u32 = u32::MAX;
/// [`SOp::Invalid`] operand: `Break` outside a loop.
pub const INVALID_BREAK: u32 = 0;
/// [`SOp::Invalid`] operand: `Continue` outside a loop.
pub const INVALID_CONTINUE: u32 = 1;
/// [`SOp::Invalid`] operand: `Rethrow` outside a `Catch` clause.
pub const INVALID_RETHROW: u32 = 2;

/// Calls `$m!` with the statement-op table: each op with its doc, and each
/// operand (a `u32`) with its doc and [`OperandKind`].
#[macro_export]
macro_rules! for_each_sop {
    ($m:ident) => {
        $m! {
            /// Evaluate expression `expr` for its effects.
            Eval {
                /// Expression index.
                expr: Expr,
            },
            /// Assign expression `expr` to target `target`.
            Assign {
                /// Target index.
                target: Target,
                /// Expression index.
                expr: Expr,
            },
            /// Jump to `to` when expression `cond` is falsy.
            JumpIfNot {
                /// Expression index.
                cond: Expr,
                /// Target pc.
                to: Pc,
            },
            /// Jump to `to`.
            Jump {
                /// Target pc.
                to: Pc,
            },
            /// Jump to `to` through the `Finally` blocks it leaves (`Break`,
            /// `Continue`).
            Leave {
                /// Target pc.
                to: Pc,
            },
            /// Return expression `expr` (or null) through enclosing `Finally` blocks.
            Return {
                /// Expression index, `u32::MAX` for none.
                expr: OptExpr,
            },
            /// `For`: evaluate the collection `expr` into iterator slot `slot`.
            IterInit {
                /// Slot.
                slot: Slot,
                /// Expression index.
                expr: Expr,
            },
            /// `For`: next element into variable `var`, or jump to `done`.
            IterNext {
                /// Slot.
                slot: Slot,
                /// Name index.
                var: Name,
                /// Target pc when exhausted.
                done: Pc,
            },
            /// `Repeat`: evaluate the count `expr` into slot `slot`.
            CountInit {
                /// Slot.
                slot: Slot,
                /// Expression index.
                expr: Expr,
            },
            /// `Repeat`: decrement slot `slot`, or jump to `done` at zero.
            CountNext {
                /// Slot.
                slot: Slot,
                /// Target pc.
                done: Pc,
            },
            /// `Match`: evaluate `expr` into slot `slot`.
            SetTemp {
                /// Slot.
                slot: Slot,
                /// Expression index.
                expr: Expr,
            },
            /// `Match`: jump to `to` unless slot `slot` equals expression `expr`.
            JumpIfNe {
                /// Slot.
                slot: Slot,
                /// Expression index.
                expr: Expr,
                /// Target pc.
                to: Pc,
            },
            /// `Switch`: set flag slot `slot`.
            Flag {
                /// Slot.
                slot: Slot,
            },
            /// `Switch`: clear flag slot `slot`.
            ClearFlag {
                /// Slot.
                slot: Slot,
            },
            /// `Switch`: jump to `to` when flag slot `slot` is set.
            JumpIfFlag {
                /// Slot.
                slot: Slot,
                /// Target pc.
                to: Pc,
            },
            /// `Parallel`: run sub-codes `first..first+count` as green threads, at
            /// most expression `limit` at a time (`u32::MAX`: no limit).
            Parallel {
                /// First sub-code.
                first: Sub,
                /// Number of branches.
                count: Count,
                /// Expression index of `Limit`.
                limit: OptExpr,
            },
            /// Catch dispatch of try `try_`: match the caught exception against
            /// clause list `clauses`, bind `As`, jump to the clause, or rethrow.
            Catch {
                /// Try index.
                try_: Try,
                /// Clause list index.
                clauses: Clauses,
            },
            /// End of a catch clause of try `try_`.
            EndCatch {
                /// Try index.
                try_: Try,
            },
            /// End of the `Finally` block of try `try_`: resume the completion that
            /// entered it (fall through, rethrow, return or jump).
            EndFinally {
                /// Try index.
                try_: Try,
            },
            /// `Throw`: throw statement `throw` (names, message, extra, cause).
            Throw {
                /// Throw-spec index.
                throw: Throw,
            },
            /// `Rethrow` the exception caught by try `try_`.
            Rethrow {
                /// Try index.
                try_: Try,
            },
            /// `Break`/`Continue` outside a loop, or `Rethrow` outside a
            /// `Catch` clause: fails with `DslInvalidOperationError`.
            Invalid {
                /// 0 = Break, 1 = Continue, 2 = Rethrow outside Catch
                /// (`INVALID_BREAK`, `INVALID_CONTINUE`, `INVALID_RETHROW`).
                what: What,
            },
        }
    };
}

/// What an operand of an [`SOp`] is (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// A template operand index.
    Expr,
    /// A template operand index or [`NONE`].
    OptExpr,
    /// An assignment-target index.
    Target,
    /// A name index.
    Name,
    /// An absolute instruction index (a jump target).
    Pc,
    /// A scratch slot.
    Slot,
    /// A `Parallel` sub-code index.
    Sub,
    /// A count.
    Count,
    /// A `Try` index.
    Try,
    /// A catch clause list index.
    Clauses,
    /// A `Throw` spec index.
    Throw,
    /// An [`SOp::Invalid`] code.
    What,
}

/// One operand of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The field name.
    pub name: &'static str,
    /// What it is.
    pub kind: OperandKind,
    /// Its value.
    pub value: u32,
}

/// The field, when its kind is `Pc` (for [`SOp::target_mut`]).
macro_rules! pc_of {
    (Pc, $f:ident) => {
        Some($f)
    };
    ($kind:ident, $f:ident) => {{
        let _ = $f;
        None
    }};
}

macro_rules! define_sops {
    ($( $(#[$doc:meta])* $name:ident { $( $(#[$fdoc:meta])* $field:ident : $kind:ident ),* $(,)? } ,)*) => {
        /// A statement instruction.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum SOp {
            $( $(#[$doc])* $name { $( $(#[$fdoc])* $field: u32, )* }, )*
        }

        impl SOp {
            /// Every mnemonic, in table order.
            pub const MNEMONICS: &'static [&'static str] = &[$( stringify!($name) ),*];

            /// The mnemonic (the variant name).
            pub fn mnemonic(&self) -> &'static str {
                match self { $( SOp::$name { .. } => stringify!($name), )* }
            }

            /// The operands, in declaration order.
            pub fn operands(&self) -> Vec<Operand> {
                match *self {
                    $( SOp::$name { $($field),* } => vec![$(
                        Operand { name: stringify!($field), kind: OperandKind::$kind, value: $field }
                    ),*], )*
                }
            }

            /// The jump target operand (kind `Pc`), for patching forward
            /// jumps; `None` for instructions that do not jump.
            pub fn target_mut(&mut self) -> Option<&mut u32> {
                match self {
                    $( SOp::$name { $($field),* } => {
                        let t: Option<&mut u32> = None;
                        $( let t = t.or(pc_of!($kind, $field)); )*
                        t
                    } )*
                }
            }
        }
    };
}

for_each_sop!(define_sops);

impl fmt::Display for SOp {
    /// The disassembler's text: `Name { field: value, ... }` (the same text
    /// as `Debug`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())?;
        let ops = self.operands();
        if !ops.is_empty() {
            f.write_str(" { ")?;
            for (i, o) in ops.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}: {}", o.name, o.value)?;
            }
            f.write_str(" }")?;
        }
        Ok(())
    }
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
        let text = op.to_string();
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

    /// One instance of every op, in table order.
    fn every_op() -> Vec<SOp> {
        vec![
            SOp::Eval { expr: 1 },
            SOp::Assign { target: 2, expr: 3 },
            SOp::JumpIfNot { cond: 4, to: 5 },
            SOp::Jump { to: 6 },
            SOp::Leave { to: 7 },
            SOp::Return { expr: NONE },
            SOp::IterInit { slot: 8, expr: 9 },
            SOp::IterNext {
                slot: 10,
                var: 11,
                done: 12,
            },
            SOp::CountInit { slot: 13, expr: 14 },
            SOp::CountNext { slot: 15, done: 16 },
            SOp::SetTemp { slot: 17, expr: 18 },
            SOp::JumpIfNe {
                slot: 19,
                expr: 20,
                to: 21,
            },
            SOp::Flag { slot: 22 },
            SOp::ClearFlag { slot: 23 },
            SOp::JumpIfFlag { slot: 24, to: 25 },
            SOp::Parallel {
                first: 26,
                count: 27,
                limit: 28,
            },
            SOp::Catch {
                try_: 29,
                clauses: 30,
            },
            SOp::EndCatch { try_: 31 },
            SOp::EndFinally { try_: 32 },
            SOp::Throw { throw: 33 },
            SOp::Rethrow { try_: 34 },
            SOp::Invalid {
                what: INVALID_RETHROW,
            },
        ]
    }

    #[test]
    fn generated_text_is_the_debug_text() {
        let ops = every_op();
        let names: Vec<&str> = ops.iter().map(|o| o.mnemonic()).collect();
        assert_eq!(names, SOp::MNEMONICS);
        for op in &ops {
            assert_eq!(op.to_string(), format!("{op:?}"));
        }
        assert_eq!(
            ops[11].to_string(),
            "JumpIfNe { slot: 19, expr: 20, to: 21 }"
        );
        assert_eq!(ops[5].to_string(), "Return { expr: 4294967295 }");
    }

    #[test]
    fn operands_carry_names_kinds_and_values() {
        let op = SOp::IterNext {
            slot: 1,
            var: 2,
            done: 3,
        };
        let got: Vec<(&str, OperandKind, u32)> = op
            .operands()
            .into_iter()
            .map(|o| (o.name, o.kind, o.value))
            .collect();
        assert_eq!(
            got,
            [
                ("slot", OperandKind::Slot, 1),
                ("var", OperandKind::Name, 2),
                ("done", OperandKind::Pc, 3)
            ]
        );
        assert_eq!(
            SOp::Parallel {
                first: 0,
                count: 2,
                limit: NONE
            }
            .operands()[2]
                .kind,
            OperandKind::OptExpr
        );
    }

    #[test]
    fn target_mut_patches_exactly_the_jump_operand() {
        let mut ops = every_op();
        let mut jumps = Vec::new();
        for op in ops.iter_mut() {
            if let Some(t) = op.target_mut() {
                *t = 999;
                jumps.push(op.mnemonic());
            }
        }
        assert_eq!(
            jumps,
            [
                "JumpIfNot",
                "Jump",
                "Leave",
                "IterNext",
                "CountNext",
                "JumpIfNe",
                "JumpIfFlag"
            ]
        );
        assert_eq!(
            ops[7],
            SOp::IterNext {
                slot: 10,
                var: 11,
                done: 999
            }
        );
        assert_eq!(
            ops[11],
            SOp::JumpIfNe {
                slot: 19,
                expr: 20,
                to: 999
            }
        );
        // Every other operand is untouched.
        for (a, b) in ops.iter().zip(every_op()) {
            let (xa, xb) = (a.operands(), b.operands());
            for (oa, ob) in xa.iter().zip(&xb) {
                if oa.kind != OperandKind::Pc {
                    assert_eq!(oa, ob);
                }
            }
        }
    }

    /// The disassembly of the Try/Catch/Finally method pinned at the
    /// repository root (`tests/golden/murano_try.golden`), rebuilt by hand:
    /// the generated text must stay byte-identical.
    #[test]
    fn disas_is_byte_identical_to_the_pinned_golden() {
        let ops = [
            SOp::IterInit { slot: 0, expr: 0 },
            SOp::IterNext {
                slot: 0,
                var: 0,
                done: 22,
            },
            SOp::JumpIfNot { cond: 1, to: 5 },
            SOp::Leave { to: 1 },
            SOp::Jump { to: 5 },
            SOp::Eval { expr: 2 },
            SOp::JumpIfNot { cond: 3, to: 9 },
            SOp::Return { expr: 4 },
            SOp::Jump { to: 9 },
            SOp::Eval { expr: 5 },
            SOp::Jump { to: 19 },
            SOp::Catch {
                try_: 0,
                clauses: 0,
            },
            SOp::Eval { expr: 6 },
            SOp::Rethrow { try_: 0 },
            SOp::EndCatch { try_: 0 },
            SOp::Jump { to: 19 },
            SOp::Leave { to: 22 },
            SOp::EndCatch { try_: 0 },
            SOp::Jump { to: 19 },
            SOp::Eval { expr: 7 },
            SOp::EndFinally { try_: 0 },
            SOp::Jump { to: 1 },
            SOp::Throw { throw: 0 },
        ];
        let lines = [
            6, 6, 10, 12, 10, 13, 14, 16, 14, 26, 9, 9, 21, 22, 9, 9, 24, 9, 9, 28, 9, 6, 29,
        ];
        let cols = [
            9, 9, 17, 21, 17, 17, 17, 21, 17, 17, 13, 13, 21, 21, 13, 13, 21, 13, 13, 17, 13, 9, 9,
        ];
        let pos: Vec<String> = lines
            .iter()
            .zip(cols)
            .map(|(l, c)| format!("Test.yaml:{l}:{c}"))
            .collect();
        let exprs = [
            "<template>",
            "$i = 2",
            "trace($i)",
            "$i = 3",
            "$i",
            "trace(ok)",
            "trace($e.message)",
            "trace(finally)",
        ];
        let handlers = [
            Handler {
                start: 2,
                end: 9,
                target: 11,
                kind: HandlerKind::Catch(0),
            },
            Handler {
                start: 2,
                end: 19,
                target: 19,
                kind: HandlerKind::Finally(0),
            },
        ];
        let note = |op: &SOp| match *op {
            SOp::Eval { expr } | SOp::IterInit { expr, .. } | SOp::JumpIfNot { cond: expr, .. } => {
                exprs[expr as usize].to_string()
            }
            SOp::Return { expr } if expr != NONE => exprs[expr as usize].to_string(),
            SOp::IterNext { .. } => "$i".to_string(),
            SOp::Catch { .. } => "keyError as $e -> 0012, * -> 0016".to_string(),
            SOp::Throw { .. } => "\"notReached\"".to_string(),
            _ => String::new(),
        };
        let want = r#"  0000  IterInit { slot: 0, expr: 0 }                        ; <template>  @Test.yaml:6:9
  0001  IterNext { slot: 0, var: 0, done: 22 }               ; $i  @Test.yaml:6:9
  0002  JumpIfNot { cond: 1, to: 5 }                         ; $i = 2  @Test.yaml:10:17
  0003  Leave { to: 1 }                                       @Test.yaml:12:21
  0004  Jump { to: 5 }                                        @Test.yaml:10:17
  0005  Eval { expr: 2 }                                     ; trace($i)  @Test.yaml:13:17
  0006  JumpIfNot { cond: 3, to: 9 }                         ; $i = 3  @Test.yaml:14:17
  0007  Return { expr: 4 }                                   ; $i  @Test.yaml:16:21
  0008  Jump { to: 9 }                                        @Test.yaml:14:17
  0009  Eval { expr: 5 }                                     ; trace(ok)  @Test.yaml:26:17
  0010  Jump { to: 19 }                                       @Test.yaml:9:13
  0011  Catch { try_: 0, clauses: 0 }                        ; keyError as $e -> 0012, * -> 0016  @Test.yaml:9:13
  0012  Eval { expr: 6 }                                     ; trace($e.message)  @Test.yaml:21:21
  0013  Rethrow { try_: 0 }                                   @Test.yaml:22:21
  0014  EndCatch { try_: 0 }                                  @Test.yaml:9:13
  0015  Jump { to: 19 }                                       @Test.yaml:9:13
  0016  Leave { to: 22 }                                      @Test.yaml:24:21
  0017  EndCatch { try_: 0 }                                  @Test.yaml:9:13
  0018  Jump { to: 19 }                                       @Test.yaml:9:13
  0019  Eval { expr: 7 }                                     ; trace(finally)  @Test.yaml:28:17
  0020  EndFinally { try_: 0 }                                @Test.yaml:9:13
  0021  Jump { to: 1 }                                        @Test.yaml:6:9
  0022  Throw { throw: 0 }                                   ; "notReached"  @Test.yaml:29:9
  Handlers:
    [0002, 0009) -> 0011  Catch(0)
    [0002, 0019) -> 0019  Finally(0)
"#;
        assert_eq!(disas(&ops, &pos, &handlers, note), want);
    }
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

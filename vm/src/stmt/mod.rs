//! Statement bytecode of MuranoPL method bodies and its interpreter.
//!
//! * [`ops`]: the instructions ([`SOp`]), the handler table and the
//!   disassembler's text;
//! * [`Code`]: a code object, the instructions with their positions and
//!   the side tables their operands index (template operands, assignment
//!   targets, names, catch clauses, `Throw`s, `Parallel` branches),
//!   generic over the compiled expression type; the compiler's
//!   `murano::emit` makes it from the MuranoPL IR;
//! * [`run`]: the interpreter, which owns control flow and asks a
//!   [`Host`] (the engine) for everything with MuranoPL meaning.

mod code;
pub mod ops;
mod run;

pub use code::{Clause, Code, ExprId, Operand, Source, Target, TargetRoot, TargetStep, Throw};
pub use ops::{Handler, HandlerKind, SOp, NONE};
pub use run::{run, Host};

#[cfg(test)]
mod tests;

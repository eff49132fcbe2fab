//! The typed IR of MuranoPL method bodies and contracts.
//!
//! A method's `Body` and each property's or argument's `Contract` are YAML;
//! this module gives them a typed, positioned, printable and verified form
//! that [`emit`](super::emit) lowers to statement bytecode
//! ([`vm::stmt`]) and the engine builds its contract checkers from:
//!
//! * [`body`]: statements ([`Stmt`], [`Block`]), with assignment
//!   destinations ([`Dest`]) read from the YAQL syntax tree of the key;
//!   [`lower_body`] recognises statements exactly as the engine always has.
//! * [`contract`]: [`Contract`] trees (list and dict forms, and chains of
//!   coercions such as `$.int().notNull()` recognised from the syntax
//!   tree); [`lower_contract`].
//! * [`verify`] and [`verify_contract`] check the invariants the front ends
//!   guarantee; both run after every lowering in debug builds.
//!
//! Expressions are [`Tmpl`] values (constants, lists, dicts and YAQL
//! expressions). Each YAQL expression ([`Yaql`]) keeps its text, position
//! and syntax tree, so nothing is parsed again, and has an [`ExprId`]
//! numbering it in the order the engine compiles expressions; a consumer
//! compiles them with [`Yaql::compile`] (errors worded as the engine words
//! them) into a table indexed by that id. The `_with` variants of the front
//! ends call a hook on each expression as it is made, so a consumer that
//! compiles there reports the first error of a body in the same order as
//! compiling while recognising statements does.
//!
//! ```
//! use muranopl_compiler::murano::ir::{lower_body, lower_contract, verify};
//! use muranopl_compiler::murano::{load_classes, LoadOptions};
//! let src = "Name: C\nProperties:\n  n:\n    Contract: $.int().notNull()\n\
//!            Methods:\n  m:\n    Body:\n      - $.n: 1\n      - Return: $.n + 1\n";
//! let class = &load_classes(src, "C.yaml", LoadOptions::default()).unwrap()[0];
//! let body = lower_body(class.methods[0].body.as_ref().unwrap(), LoadOptions::default()).unwrap();
//! verify(&body).unwrap();
//! assert_eq!(body.to_string(), "assign $.n = 1 @8:9\nreturn e0`$.n + 1` @9:9\n");
//! let c = lower_contract(&class.properties[0].contract, LoadOptions::default()).unwrap();
//! assert_eq!(c.to_string(), "chain e0`$.int().notNull()`: int -> notNull @4:15\n");
//! ```

pub mod body;
pub mod contract;
mod expr;
mod predicate;
mod verify;

#[cfg(test)]
mod tests;

pub use body::{
    lower_body, lower_body_with, Block, Case, Catch, Dest, DestRoot, DestStep, InvalidOp, Stmt,
    StmtKind,
};
pub use contract::{
    lower_contract, lower_contract_with, CmpOp, Contract, ContractKind, DictKey, Link, LinkKind,
    Operand, OperandForm, Predicate, Subject,
};
pub use expr::{lower_template_with, OnExpr, Role, Tmpl, TmplKind, Yaql};
pub use verify::{verify, verify_contract};

/// The number of a YAQL expression in a body or contract tree (defined
/// with the statement bytecode, whose operands name expressions by it).
pub use vm::stmt::ExprId;

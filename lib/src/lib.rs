//! muranopl: a fast engine for YAQL and MuranoPL, as a library.
//!
//! [`Engine`] compiles and evaluates YAQL; [`Catalogue`] loads MuranoPL
//! packages once and answers for them: validation of object models
//! ([`Catalogue::validate`], [`validate_text`]), runs on the simulated
//! cloud ([`Catalogue::session`]), tests ([`Suite`]), form schemas
//! ([`Catalogue::schemas`]), static actions ([`Catalogue::static_action`])
//! and the object model of a package's UI ([`ui_model`]). Nothing here
//! prints: warnings and errors are returned. The `muranopl` program, its
//! HTTP server and the C ABI are other crates built on this one.
//!
//! ```
//! use muranopl::Engine;
//! let engine = Engine::new(Default::default());
//! let out = engine.eval_json("$.where($ > 2).select($ * 10)", "[1, 2, 3, 4]").unwrap();
//! assert_eq!(out, "[30, 40]");
//! ```
#![deny(unsafe_code)]

pub mod artifact;
mod calls;
pub mod host;
pub mod report;
pub mod session;
pub mod testing;
pub mod ui;
mod yaql;

pub use compiler::yaql::table::{OpTable, OpType};
pub use compiler::{compile, compile_with_operators, jit, CompileOptions, Program};
pub use engine::LogSink;
pub use host::HostFunction;
pub use report::{
    on_big_stack, sort_violations, sorted_violations, validate_text, violation_order, Checked,
    Report, Violation,
};
pub use runtime::error::line_col;
pub use runtime::{ctx::Frame, json, Env, Error, ErrorKind, Options, Value};
pub use session::{Catalogue, Limits, Outcome, Session};
pub use testing::{PlanError, Suite};
pub use ui::ui_model;
/// Runs a closure on an engine-owned stack (see [`vm::coro::on_big_stack`]).
pub use vm::coro::on_big_stack as on_engine_stack;
pub use yaql::Engine;

/// An empty dictionary (for building values by hand).
pub fn runtime_dict() -> runtime::Dict {
    runtime::Dict::default()
}

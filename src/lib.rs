//! The `muranopl` program: argument parsing and the commands (`yaql`,
//! `validate`, `run`, `test`, `package`, `ui`, `schema`, `action`,
//! `serve`, `harness`), the rendering of their diagnostics and progress,
//! and the HTTP server with the forms page. Everything they compute comes
//! from the library crate `muranopl` (`lib/`) and the lint crate
//! `muranopl-lint` (`lint/`); this crate reads arguments and files and
//! prints.
#![deny(unsafe_code)]

pub mod api_cmd;
pub mod args;
pub mod cli;
pub mod dsl;
pub mod harness;
pub mod jsonpos;
pub mod lsp;
pub mod package;
pub mod records;
pub mod repl;
pub mod run;
pub mod schema;
pub mod serve;
pub mod test_cmd;
pub mod trace;
pub mod ui;
pub mod validate;
pub mod warnings;
pub mod yaql_cmd;

pub use lint::diag;

//! The integration tests of the `muranopl` program and its library, one
//! test binary (one link) for all of them; each module is a group. Run
//! one group with `cargo test --test all cli::` (or any name filter).

mod common;

mod browser;
mod cli;
mod conformance;
mod core_api;
mod diagnostics;
mod doc_examples;
mod engine_state;
mod exit_codes;
mod golden;
mod hostile;
mod jit_diff;
mod limits;
mod lint;
mod lsp;
mod murano;
mod murano_threads;
mod muranoclient;
mod repl;
mod replay;
mod schemas_all;
mod serve;
mod serve_load;
mod serve_murano;
mod spec_cli;
mod spec_versions;
mod trace;
mod yaql;

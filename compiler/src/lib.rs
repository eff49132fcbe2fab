//! The muranopl compiler: YAQL text -> syntax tree -> IR -> bytecode.
//!
//! MuranoPL class files go through [`murano`]: YAML -> declarations; a
//! method body -> [`murano::ir`] -> statement bytecode
//! ([`murano::emit::compile_body`]); a contract -> [`murano::ir::Contract`].
//!
//! ```
//! use muranopl_compiler::{compile, CompileOptions};
//! use runtime::Registry;
//! let prog = compile("1 + 2 * 3", &Registry::new(), CompileOptions::default()).unwrap();
//! assert!(prog.ir().print().contains("const 7"));
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod emit;
pub mod ir;
// The only module with `unsafe`: it calls the machine code it makes.
#[allow(unsafe_code)]
pub mod jit;
pub mod lower;
pub mod murano;
mod program;
pub mod yaql;

pub use program::{
    compile, compile_parsed, compile_with_operators, compile_yaql, CompileOptions, Program,
};

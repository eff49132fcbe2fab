//! The muranopl virtual machine: the YAQL bytecode format ([`bc`]) and its
//! interpreter ([`interp`]); the statement bytecode of MuranoPL method
//! bodies and its interpreter ([`stmt`]).
//!
//! ```
//! use std::sync::Arc;
//! use muranopl_vm::bc::{Chunk, Op};
//! use runtime::{Env, Frame, Options, Registry, Value};
//! let mut code = Vec::new();
//! Op::Const { idx: 0 }.encode(&mut code);
//! Op::Return {}.encode(&mut code);
//! let chunk = Chunk { code, consts: vec![Value::Int(42)], sites: vec![], chunks: vec![],
//!                     spans: vec![], nlocals: 0, thunk: false, fast: None };
//! let env = Env::new(Arc::new(Registry::new()), Options::default());
//! let v = muranopl_vm::interp::run(&env, &chunk, &Frame::root(Value::Null)).unwrap();
//! assert_eq!(v, Value::Int(42));
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod bc;
pub mod coro;
pub mod interp;
pub mod stmt;

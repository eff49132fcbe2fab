//! Runtime of muranopl: values, errors with spans, contexts, the function
//! registry and the tagged JSON of the conformance protocol.
//!
//! ```
//! use muranopl_runtime::{json, Value};
//! let v = json::from_tagged_str(r#"{"a": [1, 2.5, null]}"#).unwrap();
//! assert_eq!(json::to_tagged_string(&v), r#"{"a": [1, 2.5, null]}"#);
//! assert!(Value::Int(1) == Value::Float(1.0) && Value::Int(1) == Value::Bool(true));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod ctx;
pub mod env;
pub mod error;
pub mod host;
pub mod json;
pub mod num;
pub mod pyrepr;
pub mod rand;
pub mod registry;
pub mod seq;
pub mod value;

pub use ctx::Frame;
pub use env::{
    Env, JitMode, Options, DEFAULT_LIMIT_ITERATORS, DEFAULT_MAX_MEMORY, DEFAULT_MEMORY_QUOTA,
    DEFAULT_TIME_BUDGET,
};
pub use error::{Error, ErrorKind, Location, Result, Span, StackFrame, TraceEntry};
pub use registry::Registry;
pub use value::{Closure, Dict, Invoke, ListData, Set, Value};

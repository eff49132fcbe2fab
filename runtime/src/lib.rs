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

pub mod ctx;
pub mod error;
pub mod host;
pub mod json;
pub mod num;
pub mod pyrepr;
pub mod registry;
pub mod seq;
pub mod value;

use std::sync::Arc;

pub use ctx::Frame;
pub use error::{Error, ErrorKind, Location, Result, Span};
pub use registry::Registry;
pub use value::{Closure, Dict, Invoke, Set, Value};

/// Engine options, as `yaql.limitIterators` and friends.
#[derive(Clone, Debug)]
pub struct Options {
    /// `yaql.limitIterators`: maximum collection size, `None` = unlimited.
    pub limit_iterators: Option<usize>,
    /// `yaql.memoryQuota` in (approximate) bytes, `None` = unlimited.
    pub memory_quota: Option<usize>,
    /// `yaql.convertSetsToLists` on output.
    pub convert_sets_to_lists: bool,
    /// yaql 0.2 compatibility (legacy) mode.
    pub legacy: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limit_iterators: None,
            // Not the reference's default (none), but a guard against
            // exhausting memory with one operation (`'x' * 3000000000`).
            memory_quota: Some(1 << 30),
            convert_sets_to_lists: true,
            legacy: false,
        }
    }
}

impl Options {
    /// The options of the reference test-suite (and the conformance harness).
    pub fn test_suite(legacy: bool) -> Options {
        Options {
            limit_iterators: Some(100),
            memory_quota: Some(20000),
            convert_sets_to_lists: !legacy,
            legacy,
        }
    }
}

struct EnvInner {
    registry: Arc<Registry>,
    options: Options,
    host: Option<Arc<dyn host::Host>>,
}

/// What evaluation needs: the function registry and the options. Cheap to
/// clone; shared by lazy sequences that outlive a call.
#[derive(Clone)]
pub struct Env(Arc<EnvInner>);

impl Env {
    /// Makes an environment.
    pub fn new(registry: Arc<Registry>, options: Options) -> Env {
        Env(Arc::new(EnvInner {
            registry,
            options,
            host: None,
        }))
    }
    /// Makes an environment with a host (MuranoPL execution).
    pub fn with_host(registry: Arc<Registry>, options: Options, host: Arc<dyn host::Host>) -> Env {
        Env(Arc::new(EnvInner {
            registry,
            options,
            host: Some(host),
        }))
    }
    /// The host, if any.
    pub fn host(&self) -> Option<&Arc<dyn host::Host>> {
        self.0.host.as_ref()
    }
    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.0.registry
    }
    /// The options.
    pub fn options(&self) -> &Options {
        &self.0.options
    }
    /// The iterator limit (`usize::MAX` when unlimited).
    pub fn limit(&self) -> usize {
        self.0.options.limit_iterators.unwrap_or(usize::MAX)
    }
}

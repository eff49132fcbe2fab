//! Murano Dynamic UI: UI definitions (`UI/ui.yaml`, Version 2.0–2.3, as
//! murano-dashboard supports them) and the object model the dashboard makes
//! of them.
//!
//! * [`UiDefinition::parse`] reads `Version`, `Templates`, `Application`
//!   and `Forms` (each form's fields with their types, `initial`,
//!   `required`, `hidden`, length and value limits, `regexpValidator`,
//!   `validators`, `choices`, ... and its form-level `validators`). Every
//!   malformed part is an error starting with `file:line:col:`.
//! * [`generate`] fills the forms as the dashboard's wizard would: a value
//!   from the answers, else the field's `initial` (YAQL allowed, in the
//!   standard context of the forms before it), else a deterministic sample
//!   of its type (first flavor meeting the `requirements`, an image of the
//!   `imageType`, keypair `default`, zone `nova`, network "Auto", ...). It
//!   cleans and validates every value, runs the form-level validators, then
//!   evaluates `Application` in the standard context: `$` is the cleaned
//!   data (`$.<form>.<field>`), each template of `Templates` is a variable
//!   (`$name`, evaluated where it is used), and the dashboard's functions
//!   `repeat(template, times)` (`$index` counts from 1),
//!   `generateHostname(pattern, index)`, `name()`, `ref(template)` and
//!   `encryptData(value)` are available. Every `?` mapping of the result
//!   gets a deterministic uuid-like `id`; from Version 2.2 on the
//!   application gets its name (`?.name`, the `workflowManagement` form's
//!   `application_name`).
//! * Fields whose type is an application class (WordPress's database
//!   server) get the object model of that application, generated from its
//!   own package's UI when the package is on the search path.
//!
//! As the dashboard, a definition without `Version` is Version 1 and
//! refused, a second field of a name replaces the first, and a field type
//! it does not know is a choice of applications of that type.

use runtime::ErrorKind;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use compiler::murano::{load_documents, LoadOptions, Node, NodeKind, Pos, Template, TemplateKind};
use compiler::{CompileOptions, Program};

use crate::cloud::{self, FLAVORS, IMAGES};
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{p, ArgIn, Args, Cx, Registry, Ty};
use runtime::{Dict, Env, Error, Options, Result, Value};

use package::{node_value, PackageFormat, PackageLoader};

/// The newest Dynamic UI format version understood.
pub const LATEST_VERSION: (u32, u32) = (2, 3);
/// The dashboard's own storage key inside `?`.
pub const DASHBOARD_ATTRS_KEY: &str = "_26411a1861294160833743e45d0eaad9";
/// The form the dashboard appends (Version 2.2+: the application name).
pub const WF_MANAGEMENT_NAME: &str = "workflowManagement";

/// How UI expressions compile: the dashboard evaluates them with yaql's
/// legacy (0.2-compatible) engine, without MuranoPL operators.
const COMPILE: CompileOptions = CompileOptions {
    legacy: true,
    murano: false,
};

const MARK: &str = "\u{1}ui.template:";
const MAX_REPEAT: i64 = 10_000;
const MAX_DEPTH: usize = 64;
const MAX_APP_NESTING: usize = 4;

fn ui_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::UiDefinitionError, msg)
}

// The parts of the Dynamic UI, by concern.
mod definition;
mod host;
mod model;
mod parse;
mod samples;
#[cfg(test)]
mod tests;
mod validation;

pub use definition::*;
pub use host::*;
pub use model::*;
use validation::*;

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

// The parts of the Dynamic UI, by concern, bottom layer first: each
// names only the modules above it in this list.
mod common;
mod definition;
mod fill;
mod host;
mod model;
mod parse;
mod samples;
#[cfg(test)]
mod tests;
mod validation;

pub use common::{DASHBOARD_ATTRS_KEY, LATEST_VERSION, WF_MANAGEMENT_NAME};
pub use definition::{Check, Field, FieldType, Form, UiDefinition, UiVersion, Validator};
pub use host::{registry, IdGen, Tpl, UiHost};
pub use model::{generate, insert_ids, package_model, ModelOptions, Outcome};

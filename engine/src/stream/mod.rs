//! Streaming validation of one large object model: the JSON text is read
//! once, front to back, split into pieces ([`runtime::json::split`]) that
//! worker threads parse and check in parallel, and nothing of the model is
//! kept but what later checks need: the class of every object by id, and
//! the property values of the objects whose contracts name other objects.
//!
//! It gives what [`crate::model::validate`] gives, violation for violation
//! and in the same order (the objects' order in the document, then the
//! properties' order of initialization), for the models it takes:
//! - every object definition has a `?` header with a `type` and a string
//!   `id`, ids are unique, and no definition uses the snippet form;
//! - every class of the model initializes its properties from the model
//!   alone: no `.init` method, constant defaults, and contracts that look
//!   at the value and at most the classes of the objects it names
//!   ([`Reach::Classes`]); no extension method intercepts them;
//! - no `ObjectsCopy`, no tagged value spread over a spine, nesting within
//!   the JSON depth limit.
//!
//! Anything else ends the stream with [`Outcome::Fallback`] and the reason,
//! and the caller validates the model with the ordinary load, which also
//! reports malformed JSON and load errors in its own words.

mod fast;
mod reader;
mod run;
#[cfg(test)]
mod tests;
mod worker;

pub use reader::Progress;
pub use run::{validate, Models, Options, Outcome, Phases, Stats};

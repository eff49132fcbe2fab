//! The constants and the error constructor every part of the Dynamic UI
//! shares (the bottom layer of `ui`).

use compiler::CompileOptions;
use runtime::{Error, ErrorKind};

/// The newest Dynamic UI format version understood.
pub const LATEST_VERSION: (u32, u32) = (2, 3);
/// The dashboard's own storage key inside `?`.
pub const DASHBOARD_ATTRS_KEY: &str = "_26411a1861294160833743e45d0eaad9";
/// The form the dashboard appends (Version 2.2+: the application name).
pub const WF_MANAGEMENT_NAME: &str = "workflowManagement";

/// How UI expressions compile: the dashboard evaluates them with yaql's
/// legacy (0.2-compatible) engine, without MuranoPL operators.
pub(super) const COMPILE: CompileOptions = CompileOptions {
    legacy: true,
    murano: false,
};

pub(super) const MARK: &str = "\u{1}ui.template:";
pub(super) const MAX_REPEAT: i64 = 10_000;
pub(super) const MAX_DEPTH: usize = 64;
pub(super) const MAX_APP_NESTING: usize = 4;

pub(super) fn ui_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::UiDefinitionError, msg)
}

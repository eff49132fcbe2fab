//! `yaql/standard_library/regex.py`.

use runtime::registry::Registry;

/// Registers the group.
pub fn register(r: &mut Registry) {
    let _ = r;
}

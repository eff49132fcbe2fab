//! `yaql/standard_library/boolean.py`.

use runtime::registry::Registry;

/// Registers the group.
pub fn register(r: &mut Registry) {
    let _ = r;
}

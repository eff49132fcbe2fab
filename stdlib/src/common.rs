//! `yaql/standard_library/common.py`.

use runtime::registry::Registry;

/// Registers the group.
pub fn register(r: &mut Registry) {
    let _ = r;
}

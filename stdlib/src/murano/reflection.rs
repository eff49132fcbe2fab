//! Reflection (`typeinfo`, type/property/method/argument info objects,
//! `invoke`, `setValue`/`getValue`) and metadata objects.

/// Registers the reflection functions.
pub fn register(r: &mut runtime::Registry) {
    let _ = r;
}

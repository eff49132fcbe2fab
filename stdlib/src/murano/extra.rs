//! Further engine functions of MuranoPL expressions (`base64encode`,
//! `randomName`, `bind`, `patch`, legacy `substr`, ...).

/// Registers the functions.
pub fn register(r: &mut runtime::Registry) {
    let _ = r;
}

//! What loading packages warned about, on stderr.

use muranopl::Catalogue;

/// Prints the catalogue's load warnings, one `warning: ...` line each.
pub fn print(catalogue: &Catalogue) {
    for w in catalogue.warnings() {
        eprintln!("warning: {w}");
    }
}

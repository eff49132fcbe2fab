//! The catalogue artifact (`.mcat`): the format lives in the library
//! facade ([`muranopl::artifact`]), so every embedder (Rust, C, Python)
//! loads the artifacts `muranopl batch pack` writes; this module names it
//! where the DataFusion crate's callers have always found it.

pub use muranopl::artifact::*;

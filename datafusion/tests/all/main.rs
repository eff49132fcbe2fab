//! The DataFusion crate's integration tests, in one binary (each test
//! binary links DataFusion and Ballista: hundreds of megabytes apiece):
//! the catalogue artifact, the functions on a local context, and a
//! Ballista cluster on loopback.

mod artifact;
mod ballista;
mod common;
mod udfs;

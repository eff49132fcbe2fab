//! The DataFusion crate's integration tests, in one binary (each test
//! binary links DataFusion and Ballista: hundreds of megabytes apiece):
//! the functions on a local context, and a Ballista cluster on loopback
//! over a catalogue artifact (whose format's tests are the library's,
//! `lib/src/artifact`).

mod ballista;
mod common;
mod udfs;

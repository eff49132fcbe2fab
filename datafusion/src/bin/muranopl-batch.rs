//! `muranopl-batch`: what `muranopl batch` runs (see
//! [`muranopl_datafusion::batch`]).

// mimalloc, as `muranopl` itself: every row is an execution of its own
// whose many small values are freed at its end. Measured on 2026-11-28,
// `murano_validate` over 1M objects on 2 partitions, five interleaved
// rounds: median 3.00 s against 3.31 s with the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(muranopl_datafusion::batch::main(std::env::args_os()));
}

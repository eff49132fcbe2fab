//! `muranopl-batch`: what `muranopl batch` runs (see
//! [`muranopl_datafusion::batch`]).

// mimalloc, as `muranopl` itself: every row is an execution of its own
// whose many small values are freed at its end. Not yet shown to help
// here (docs/scale-out.md, "Measured": single runs were too noisy).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(muranopl_datafusion::batch::main(std::env::args_os()));
}

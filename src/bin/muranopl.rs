// mimalloc: the engine allocates many small, short-lived values (model
// objects, dicts, strings). Measured on 2026-11-22: `validate` over 100k
// objects, three interleaved runs of each build, user CPU 2.10-2.29 s
// against 2.73-3.49 s with the system allocator. Library users (Rust or
// the C ABI) keep whatever allocator their program uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(muranopl_cli::cli::main());
}

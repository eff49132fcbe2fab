//! `muranopl-batch`: what `muranopl batch` runs (see
//! [`muranopl_datafusion::batch`]).

fn main() {
    std::process::exit(muranopl_datafusion::batch::main(std::env::args_os()));
}

fn main() {
    std::process::exit(muranopl::cli::main());
}

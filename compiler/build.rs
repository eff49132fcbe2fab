fn main() {
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .process_file("src/yaql/grammar.lalrpop")
        .expect("lalrpop grammar");
}

//! The C programs of `examples/c`, compiled with the system C compiler
//! against `include/muranopl.h` and the crate's shared library, and run:
//! `eval.c` (one expression) and `threads.c` (a catalogue and an engine
//! shared by 4 pthreads: validation, a run, a schema, a static action and
//! host functions called from YAQL and from MuranoPL, each answer checked
//! by the program; the catalogue loaded from package directories, then
//! from a `.mcat` artifact of them). Skipped, saying so, when there is no
//! C compiler.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn compiler() -> Option<&'static str> {
    ["cc", "gcc", "clang"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The folder of the crate's shared library, built with the test binary
/// (`cargo test` leaves it beside the binary in `deps`; `cargo build`
/// one folder up).
fn libdir() -> PathBuf {
    let so = format!(
        "{}muranopl_capi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let found = [deps, deps.parent().unwrap()]
        .into_iter()
        .find(|d| d.join(&so).exists())
        .map(Path::to_path_buf);
    found.unwrap_or_else(|| panic!("{so} was not built next to {}", exe.display()))
}

/// Compiles `examples/c/NAME.c` into a temporary executable.
fn build(cc: &str, name: &str) -> PathBuf {
    let root = root();
    let libdir = libdir();
    let exe = std::env::temp_dir().join(format!("muranopl-c-{name}-{}", std::process::id()));
    let o = Command::new(cc)
        .arg("-Wall")
        .arg(root.join(format!("examples/c/{name}.c")))
        .arg("-I")
        .arg(root.join("include"))
        .arg("-L")
        .arg(&libdir)
        .arg("-lmuranopl_capi")
        .arg("-lpthread")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn the_eval_example_links_and_runs() {
    let Some(cc) = compiler() else {
        skip("no C compiler (cc, gcc, clang) found; examples/c/eval.c is not built");
        return;
    };
    let exe = build(cc, "eval");
    let run = |args: &[&str]| Command::new(&exe).args(args).output().unwrap();
    let o = run(&[
        "$.where($.age > 30).select($.name)",
        r#"[{"age": 40, "name": "alice"}, {"age": 20, "name": "bob"}]"#,
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(out, r#"["alice"]"#);
    let o = run(&["1 +"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("YaqlGrammarException"));
    std::fs::remove_file(&exe).ok();
}

#[test]
fn four_threads_share_a_catalogue_and_an_engine_from_c() {
    let Some(cc) = compiler() else {
        skip("no C compiler (cc, gcc, clang) found; examples/c/threads.c is not built");
        return;
    };
    let exe = build(cc, "threads");
    let root = root();
    let mcat = std::env::temp_dir().join(format!("muranopl-c-{}.mcat", std::process::id()));
    let packages = [
        "examples/validate",
        "examples/hello-app",
        "examples/c/doubler",
    ];
    let packages: Vec<PathBuf> = packages.iter().map(|p| root.join(p)).collect();
    muranopl::artifact::pack(&packages, &[], &mcat).unwrap();
    for args in [
        vec![root.as_os_str()],
        vec![root.as_os_str(), mcat.as_os_str()],
    ] {
        let o = Command::new(&exe).args(&args).output().unwrap();
        let (out, err) = text(&o);
        assert!(
            o.status.success(),
            "{args:?}: exit {:?}\n{out}\n{err}",
            o.status.code()
        );
        assert_eq!(
            out,
            "ok: 4 threads x 10 rounds (validate, run, schema, static action, \
             host functions from YAQL and MuranoPL)"
        );
    }
    std::fs::remove_file(&mcat).ok();
    std::fs::remove_file(&exe).ok();
}

/// `docs/embedding.md` shows `examples/c/threads.c` whole, as it is.
#[test]
fn the_embedding_guide_shows_the_program_as_it_is() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/embedding.md")).unwrap();
    let program = std::fs::read_to_string(root.join("examples/c/threads.c")).unwrap();
    assert!(
        doc.contains(&format!("```c\n{program}```")),
        "docs/embedding.md must end with examples/c/threads.c in a ```c block, as it is"
    );
}

/// Says that a test is skipped, and why, on the process's standard error
/// directly (the test harness captures only the print macros), so that the
/// run's output shows it without `--nocapture`.
fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP: {why}");
}

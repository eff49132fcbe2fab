//! `muranopl test PKG [Class[.test]...] [-L DIR]...`: the MuranoPL test
//! runner (murano-test-runner). Test classes are the package's classes
//! that extend `io.murano.test.TestFixture`; their tests are their own
//! methods whose names start with `test`. Every test runs on a fresh
//! executor and a fresh fixture object: `setUp`, the test, `tearDown`.
//! Each test prints as `Class.test ..... OK` or `FAIL!` (with the error
//! below it), then a summary; the exit status is 1 when any test fails.

use compiler::jit::Mode;
use std::path::{Path, PathBuf};
use std::time::Instant;

use muranopl::{Limits, PlanError, Suite};

/// What `muranopl test` runs, and how.
pub struct TestRun<'a> {
    /// The package (a directory or .zip).
    pub package: &'a Path,
    /// The test classes or `Class.test` names (all when empty).
    pub selectors: &'a [String],
    /// The package search path.
    pub libs: &'a [PathBuf],
    /// When contracts become machine code.
    pub jit: Mode,
    /// The class configuration directory.
    pub class_configs: Option<&'a Path>,
    /// Each test's limits and seed.
    pub limits: Limits,
    /// How errors are printed.
    pub messages: crate::diag::MessageFormat,
    /// The least severe log line printed on stderr.
    pub log_level: crate::args::LogLevel,
    /// The trace and the breakpoints.
    pub trace: Tracing<'a>,
}

/// What `test` traces (see [`crate::trace`]).
pub struct Tracing<'a> {
    /// Print each statement and call on stderr.
    pub stderr: bool,
    /// Write them as JSON Lines to this file.
    pub json: Option<&'a Path>,
    /// `FILE:LINE` statements to stop at, reading expressions from stdin
    /// (as `run --break`).
    pub breaks: &'a [String],
}

/// Runs `muranopl test`; returns the exit status.
pub fn run(r: TestRun<'_>) -> i32 {
    let TestRun {
        package,
        selectors,
        libs,
        jit,
        class_configs,
        limits,
        messages,
        log_level,
        trace,
    } = r;
    let mut suite = match Suite::load(package, libs, class_configs) {
        Ok(s) => {
            s.catalogue().set_jit(jit);
            s
        }
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(sink) = log_level.sink(false) {
        suite.on_log(sink);
    }
    let tracer = match tracer(&suite, &trace) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(t) = &tracer {
        suite.on_trace(t.clone());
    }
    let status = run_plan(&suite, selectors, limits, messages);
    if let Some(t) = tracer {
        t.flush();
    }
    status
}

/// The tracer `trace` asks for (none when it asks for nothing), its
/// breakpoints' expressions compiled against the suite's functions.
fn tracer(
    suite: &Suite,
    trace: &Tracing<'_>,
) -> Result<Option<std::sync::Arc<crate::trace::Trace>>, String> {
    if !trace.stderr && trace.json.is_none() && trace.breaks.is_empty() {
        return Ok(None);
    }
    let breaks = (trace.breaks.iter())
        .map(|b| crate::trace::parse_break(b))
        .collect::<Result<Vec<_>, _>>()?;
    let t = crate::trace::Trace::new(trace.stderr, trace.json)?;
    let t = if breaks.is_empty() {
        t
    } else {
        t.with_breaks(breaks, suite.catalogue().catalog().registry(false))
    };
    Ok(Some(std::sync::Arc::new(t)))
}

/// Runs the tests `selectors` pick and prints their outcomes; the exit
/// status.
fn run_plan(
    suite: &Suite,
    selectors: &[String],
    limits: Limits,
    messages: crate::diag::MessageFormat,
) -> i32 {
    let plan = match suite.plan(selectors) {
        Ok(p) => p,
        Err(e @ PlanError::NoMatch(_)) => {
            eprintln!("error: {e}");
            return 2;
        }
        Err(PlanError::Compile(e)) => {
            crate::diag::Diagnostic::from_text("CompileError", &e).eprint(messages);
            return 2;
        }
    };
    let width = plan
        .iter()
        .map(|(c, t)| c.len() + t.len() + 1)
        .max()
        .unwrap_or(0)
        + 3;
    let started = Instant::now();
    let mut failures: Vec<(String, String)> = Vec::new();
    for (c, t) in &plan {
        let name = format!("{c}.{t}");
        print!("{name} {} ", ".".repeat(width - name.len()));
        use std::io::Write;
        let _ = std::io::stdout().flush();
        match suite.run(c, t, limits) {
            Ok(()) => println!("OK"),
            Err(e) => {
                println!("FAIL!");
                for line in e.lines() {
                    println!("    {line}");
                }
                failures.push((name, e));
            }
        }
    }
    println!("{}", "-".repeat(70));
    println!(
        "Ran {} test{} in {:.3}s",
        plan.len(),
        if plan.len() == 1 { "" } else { "s" },
        started.elapsed().as_secs_f64()
    );
    println!();
    if failures.is_empty() {
        println!("OK");
        0
    } else {
        println!(
            "FAILED (failures={}, passed={})",
            failures.len(),
            plan.len() - failures.len()
        );
        for (name, _) in &failures {
            println!("  FAIL: {name}");
        }
        1
    }
}

//! The MuranoPL test runner's core (murano-test-runner): test classes are
//! a package's classes that extend `io.murano.test.TestFixture`; their
//! tests are their own methods whose names start with `test`. Every test
//! runs on a fresh executor and a fresh fixture object: `setUp`, the
//! test, `tearDown`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::{exec, testing, Executor};
use package::{FormatRegistry, PackageFormat, PackageLoader};

use crate::session::{Catalogue, Limits, Session};

/// A package and its requirements, compiled once for every test.
pub struct Suite {
    root: Arc<dyn PackageFormat>,
    catalogue: Catalogue,
    /// Sees the tests' log lines as they are recorded.
    log_sink: Option<engine::LogSink>,
    /// Hears every statement and call of the tests (see
    /// [`engine::trace`]).
    tracer: Option<Arc<dyn engine::trace::Tracer>>,
}

impl Suite {
    /// Loads the package at `path` and what it requires from `libs`; a
    /// class that does not compile is the error.
    pub fn load(
        path: &Path,
        libs: &[PathBuf],
        class_configs: Option<&Path>,
    ) -> Result<Suite, String> {
        let root: Arc<dyn PackageFormat> = FormatRegistry::builtin()
            .load(path)
            .map_err(|e| e.message().to_string())?;
        let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
        let deps = loader.resolve(&root).map_err(|e| e.message().to_string())?;
        let all = std::iter::once(root.clone()).chain(deps).collect();
        let catalogue = Catalogue::from_formats(all, true, Vec::new(), class_configs)?;
        Ok(Suite {
            root,
            catalogue,
            log_sink: None,
            tracer: None,
        })
    }

    /// Calls `f` with every log line the tests record (`Logger`), as they
    /// are recorded: (level, logger name, text).
    pub fn on_log(&mut self, f: engine::LogSink) {
        self.log_sink = Some(f);
    }

    /// Gives `t` every statement and call of the tests as they run.
    pub fn on_trace(&mut self, t: Arc<dyn engine::trace::Tracer>) {
        self.tracer = Some(t);
    }

    /// The package and its requirements, compiled.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// A fresh session over the package and its requirements (one
    /// catalogue, compiled once, for every test).
    fn session(&self) -> Session {
        let session = self.catalogue.session();
        if let Some(f) = &self.log_sink {
            session.executor().on_log(f.clone());
        }
        if let Some(t) = &self.tracer {
            session.executor().set_tracer(t.clone());
        }
        session
    }

    /// The `(class, test)` pairs that `selectors` pick (all when empty),
    /// in declaration order.
    pub fn plan(&self, selectors: &[String]) -> Result<Vec<(String, String)>, PlanError> {
        let classes = discover(self).map_err(PlanError::Compile)?;
        let mut plan: Vec<(String, String)> = Vec::new();
        for (c, tests) in &classes {
            for t in tests {
                if selected(selectors, c, t) {
                    plan.push((c.clone(), t.clone()));
                }
            }
        }
        for s in selectors {
            if !plan
                .iter()
                .any(|(c, t)| selected(std::slice::from_ref(s), c, t))
            {
                return Err(PlanError::NoMatch(s.clone()));
            }
        }
        Ok(plan)
    }

    /// Runs one test on a fresh executor under `limits`: `Err` holds the
    /// failure as `Kind: message` (a panic is an `InternalError`).
    pub fn run(&self, class: &str, test: &str, limits: Limits) -> Result<(), String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_one(self, class, test, limits)
        }))
        .unwrap_or_else(|_| Err("InternalError: panic".to_string()))
    }
}

/// Why there is no test plan.
#[derive(Debug)]
pub enum PlanError {
    /// A class of the package does not compile (the error, rendered).
    Compile(String),
    /// A selector picks no test.
    NoMatch(String),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Compile(e) => f.write_str(e),
            PlanError::NoMatch(s) => write!(f, "no test class or test matches {s}"),
        }
    }
}

fn render(ex: &Executor, e: &runtime::Error) -> String {
    let names = exec::error_names(ex, e, false);
    let kind = names
        .first()
        .cloned()
        .unwrap_or_else(|| e.kind().to_string());
    format!("{kind}: {}", e.message())
}

/// Runs one test on a fresh executor, under `limits`.
fn run_one(suite: &Suite, class: &str, test: &str, limits: Limits) -> Result<(), String> {
    let session = suite.session();
    let _budget = session.limit(limits);
    let ex = session.executor();
    testing::run_test(ex, class, test).map_err(|e| render(ex, &e))
}

/// The test classes of the package and their tests, in declaration order.
fn discover(suite: &Suite) -> Result<Vec<(String, Vec<String>)>, String> {
    let session = suite.session();
    let ex = session.executor();
    let mut names = suite.root.classes();
    if let Some(p) = ex.packages().first() {
        for c in p.class_names() {
            if !names.contains(&c) {
                names.push(c);
            }
        }
    }
    // A class of the package that does not compile fails the run: its
    // tests would otherwise go missing without a word.
    for name in suite.root.classes() {
        if let Err(e) = ex.class(&name) {
            return Err(format!("class {name}: {}", render(ex, &e)));
        }
    }
    let mut out = Vec::new();
    for name in names {
        let Some(tests) = testing::tests_of(ex, &name) else {
            continue;
        };
        out.push((name, tests));
    }
    Ok(out)
}

/// Does a `Class` or `Class.test` selector pick this test? A class may be
/// given by its full name or by its last part.
fn selected(sel: &[String], class: &str, test: &str) -> bool {
    if sel.is_empty() {
        return true;
    }
    let short = class.rsplit('.').next().unwrap_or(class);
    sel.iter().any(|s| {
        let is = |c: &str| c == class || c == short;
        if is(s) {
            return true;
        }
        match s.rsplit_once('.') {
            Some((c, t)) => t == test && is(c),
            None => false,
        }
    })
}

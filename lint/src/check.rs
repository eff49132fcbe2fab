//! `package check`'s work: loading a package with its requirements,
//! compiling every class of it, and linting it; the diagnostics are data
//! the caller renders.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::Executor;
use package::{
    to_package, to_package_checked, validate_images, FormatRegistry, PackageFormat, PackageLoader,
};

/// The outcome of a package check.
pub struct CheckReport {
    /// The package's full name.
    pub name: String,
    /// Classes that compiled.
    pub ok: Vec<String>,
    /// Errors (class file, requirement, compilation), one line each.
    pub errors: Vec<String>,
    /// Problems in required packages (not fatal for the package itself).
    pub warnings: Vec<String>,
    /// Required packages loaded, `name/version`.
    pub loaded: Vec<String>,
    /// The package and the executor that compiled its classes (none when
    /// its requirements could not be resolved).
    pub compiled: Option<(Arc<dyn PackageFormat>, Arc<Executor>)>,
    /// The package's class files read while loading it, by name.
    pub texts: std::collections::HashMap<String, String>,
}

/// Loads `path` and its requirements from `libs` and compiles every class.
pub fn check_package(
    path: &Path,
    libs: &[PathBuf],
    jit: compiler::jit::Mode,
) -> Result<CheckReport, String> {
    let root: Arc<dyn PackageFormat> = FormatRegistry::builtin()
        .load(path)
        .map_err(|e| e.message().to_string())?;
    check_loaded(root, libs, &[], jit)
}

/// [`check_package`] of a package already loaded (from an editor's
/// unsaved files, say: see [`package::Source::Edited`]); `edited` are
/// packages of the search path loaded the same way, which stand in for
/// the copies of the same name and version found there.
pub fn check_loaded(
    root: Arc<dyn PackageFormat>,
    libs: &[PathBuf],
    edited: &[Arc<dyn PackageFormat>],
    jit: compiler::jit::Mode,
) -> Result<CheckReport, String> {
    let mut loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    for p in edited {
        loader.replace(p.clone());
    }
    let mut report = CheckReport {
        name: root.full_name().to_string(),
        ok: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        loaded: Vec::new(),
        compiled: None,
        texts: Default::default(),
    };
    let deps = match loader.resolve(&root) {
        Ok(d) => d,
        Err(e) => {
            report
                .errors
                .extend(e.message().lines().map(str::to_string));
            for b in &loader.broken {
                report.warnings.push(format!(
                    "skipped {}: {}",
                    b.path.display(),
                    b.error.message()
                ));
            }
            return Ok(report);
        }
    };
    let checked = to_package_checked(&*root);
    // The classes an error keeps from loading are reported once, by it.
    let failed: HashSet<String> = (checked.errors.iter())
        .flat_map(|e| e.classes.iter().cloned())
        .collect();
    let undefined: HashSet<String> = checked.undefined.into_iter().collect();
    report
        .errors
        .extend((checked.errors.iter()).map(|e| e.error.message().to_string()));
    report.errors.extend(
        validate_images(&*root)
            .iter()
            .map(|e| e.message().to_string()),
    );
    report
        .warnings
        .extend(checked.warnings.iter().map(|e| e.message().to_string()));
    let root_pkg = checked.package;
    report.texts = checked.texts;
    // Every class of the package: the manifest's, then any other class
    // its files define.
    let mut classes = root.classes();
    let mut seen: HashSet<String> = classes.iter().cloned().collect();
    for c in root_pkg.class_names() {
        if seen.insert(c.clone()) {
            classes.push(c);
        }
    }
    let mut pkgs = vec![root_pkg];
    for d in &deps {
        report
            .loaded
            .push(format!("{}/{}", d.full_name(), d.version()));
        let (p, errs) = to_package(&**d);
        report.warnings.extend(
            errs.iter()
                .map(|e| format!("in required package {}: {}", d.full_name(), e.message())),
        );
        pkgs.push(p);
    }
    let catalog = engine::Catalog::new(pkgs);
    catalog.set_jit(jit);
    let ex = Executor::with_catalog(catalog);
    for class in classes {
        if failed.contains(&class) {
            continue;
        }
        // A listed class its file does not define was warned about: murano
        // loads the package and fails only when the class is asked for.
        let declared = ex
            .packages()
            .first()
            .is_some_and(|p| p.decl(&class).is_some());
        if !declared && undefined.contains(&class) {
            continue;
        }
        match ex.class(&class) {
            Ok(_) => report.ok.push(class),
            Err(e) => {
                let file = e
                    .location()
                    .map(ToString::to_string)
                    .or_else(|| {
                        ex.packages()
                            .first()
                            .and_then(|p| p.decl(&class))
                            .map(|d| d.pos.to_string())
                    })
                    .or_else(|| root.class_file(&class))
                    .or_else(|| root.get_class(&class).ok().map(|s| s.file))
                    .unwrap_or_else(|| root.full_name().to_string());
                let msg = e.message();
                if msg.contains(file.split(':').next().unwrap_or(&file)) {
                    report.errors.push(format!("class {class}: {msg}"));
                } else {
                    report.errors.push(format!("{file}: class {class}: {msg}"));
                }
            }
        }
    }
    report.compiled = Some((root, ex));
    Ok(report)
}

/// How `package check` runs and reports.
pub struct CheckOptions {
    /// When contracts become machine code.
    pub jit: compiler::jit::Mode,
    /// How diagnostics print (human format).
    pub messages: crate::diag::MessageFormat,
    /// What is printed.
    pub format: crate::LintFormat,
    /// Lints not reported.
    pub allow: std::collections::HashSet<crate::Lint>,
    /// Warnings fail the check too.
    pub deny_warnings: bool,
}

/// A package checked and linted.
pub struct Checked {
    /// What loading and compiling found.
    pub report: CheckReport,
    /// Errors first, then load warnings, then lint findings (without
    /// snippets).
    pub diagnostics: Vec<crate::diag::Diagnostic>,
    /// The same as people see them, with their snippets, when checked for
    /// a terminal (human format and messages).
    pub rendered: Vec<String>,
    /// The number of findings of each lint.
    pub counts: Vec<(crate::Lint, usize)>,
    /// The bytes of the paths the diagnostics name, where their text lost
    /// them (names that are not UTF-8).
    pub paths: crate::RawPaths,
    /// For each diagnostic, its byte range in its file where known (the
    /// lint findings'), for editors that underline it.
    pub spans: Vec<Option<std::ops::Range<usize>>>,
    /// The texts of the files the lints read, by the name diagnostics
    /// give them.
    pub texts: std::collections::HashMap<String, String>,
}

/// How many names the suggestions for a package's errors compare, at most
/// (each compares its name with the catalogue's classes or methods).
const HELP_BUDGET: usize = 4_000_000;

/// Checks and lints a package.
pub fn check_and_lint(
    path: &Path,
    libs: &[PathBuf],
    opts: &CheckOptions,
) -> Result<Checked, String> {
    let r = check_package(path, libs, opts.jit)?;
    Ok(lint_checked(r, path, opts))
}

/// [`check_and_lint`] of a package already loaded (see [`check_loaded`],
/// which `edited` is passed to); `path` is where it is.
pub fn check_and_lint_loaded(
    root: Arc<dyn PackageFormat>,
    path: &Path,
    libs: &[PathBuf],
    edited: &[Arc<dyn PackageFormat>],
    opts: &CheckOptions,
) -> Result<Checked, String> {
    let r = check_loaded(root, libs, edited, opts.jit)?;
    Ok(lint_checked(r, path, opts))
}

/// Lints a checked package and collects the diagnostics.
fn lint_checked(r: CheckReport, path: &Path, opts: &CheckOptions) -> Checked {
    use crate::diag::Diagnostic;
    // A suggestion compares the name with every class or method of the
    // catalogue: suggestions for so many errors that together they
    // compare some million names.
    let helped = r.compiled.as_ref().map_or(0, |(_, ex)| {
        let names: usize = (ex.packages().iter())
            .flat_map(|p| p.decls.values())
            .map(|d| 1 + d.methods.len())
            .sum();
        HELP_BUDGET / names.max(1)
    });
    // Human output escapes what the package wrote (see
    // `lint::for_terminal`).
    let terminal = opts.format == crate::LintFormat::Human
        && opts.messages == crate::diag::MessageFormat::Human;
    let mut diags = crate::Collected::new(terminal);
    for (i, e) in r.errors.iter().enumerate() {
        let d = Diagnostic::from_text("CompileError", e);
        diags.push_text(match &r.compiled {
            Some((_, ex)) if i < helped => d.with_catalog_help(ex.catalog()),
            _ => d,
        });
    }
    // The lints report the keys class declarations ignore.
    let ignored: HashSet<&str> = r
        .compiled
        .iter()
        .flat_map(|(_, ex)| ex.packages().first())
        .flat_map(|p| p.decls.values())
        .flat_map(|d| d.warnings.iter().map(String::as_str))
        .collect();
    for w in r.warnings.iter().filter(|w| !ignored.contains(w.as_str())) {
        diags.push_text(Diagnostic::from_text("PackageWarning", w).as_warning());
    }
    let mut counts = Vec::new();
    let mut paths = crate::RawPaths::of(path);
    let mut spans = vec![None; diags.diagnostics.len()];
    let mut texts = Default::default();
    if let Some((root, ex)) = &r.compiled {
        let input = crate::Input {
            root: &**root,
            classes: &r.ok,
            executor: ex,
            texts: &r.texts,
        };
        let lints = crate::lint(&input, &opts.allow);
        counts = lints.counts();
        paths.files = lints.raw_files.clone();
        diags.push_findings(&lints.findings, &lints.texts);
        spans.extend(lints.findings.iter().map(|f| Some(f.span.clone())));
        texts = lints.texts;
    }
    Checked {
        report: r,
        diagnostics: diags.diagnostics,
        rendered: diags.rendered,
        counts,
        paths,
        spans,
        texts,
    }
}

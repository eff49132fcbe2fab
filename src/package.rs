//! `muranopl package info|check`: package facts as JSON, and loading a
//! package with its requirements and compiling every class of it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Subcommand;
use stdlib::murano::packages::{
    to_package, to_package_checked, FormatRegistry, PackageFormat, PackageLoader,
};
use stdlib::murano::Executor;

/// `muranopl package ...`.
#[derive(Subcommand)]
pub enum PackageCmd {
    /// Print a package's manifest facts as JSON.
    Info {
        /// A package directory or .zip.
        package: PathBuf,
    },
    /// Load a package and its requirements and compile every class of it.
    Check {
        /// A package directory or .zip.
        package: PathBuf,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
    },
}

/// Runs a `package` subcommand; returns the exit status.
pub fn run(cmd: PackageCmd) -> i32 {
    match cmd {
        PackageCmd::Info { package } => info(&package),
        PackageCmd::Check { package, libs } => check(&package, &libs),
    }
}

fn value_json(v: &runtime::Value) -> serde_json::Value {
    serde_json::from_str(&runtime::json::to_tagged_string(v)).unwrap_or(serde_json::Value::Null)
}

/// The manifest facts of a package, as JSON.
pub fn info_json(p: &dyn PackageFormat) -> serde_json::Value {
    use serde_json::{json, Map, Value as J};
    let m = &p.base().manifest;
    let classes: Map<String, J> = m
        .classes
        .iter()
        .map(|(c, f)| (c.clone(), J::String(f.clone())))
        .collect();
    let require: Map<String, J> = p
        .requirements()
        .iter()
        .map(|(n, s)| (n.clone(), J::String(s.to_string())))
        .collect();
    let logo = match p.logo() {
        Ok(Some(b)) => json!({"file": m.logo, "bytes": b.len()}),
        Ok(None) => J::Null,
        Err(e) => json!({"file": m.logo, "error": e.message()}),
    };
    let supplier_logo = match p.supplier_logo() {
        Ok(Some(b)) => json!({"bytes": b.len()}),
        Ok(None) => J::Null,
        Err(e) => json!({"error": e.message()}),
    };
    let ui = match p.ui() {
        Ok(Some(t)) => json!({"file": format!("UI/{}", m.ui), "bytes": t.len()}),
        Ok(None) => J::Null,
        Err(e) => json!({"file": format!("UI/{}", m.ui), "error": e.message()}),
    };
    let images = match p.images() {
        Ok(list) => J::Array(list.iter().map(|i| value_json(&i.data)).collect()),
        Err(e) => json!({"error": e.message()}),
    };
    json!({
        "FullName": p.full_name(),
        "Name": p.display_name(),
        "Version": p.version().to_string(),
        "Format": format!("{}/{}", p.format_name(), p.runtime_version()),
        "Type": p.package_type(),
        "Description": p.description(),
        "Author": p.author(),
        "Supplier": p.supplier().map(value_json),
        "Tags": p.tags(),
        "Classes": if m.classes.is_empty() {
            J::Array(p.classes().into_iter().map(J::String).collect())
        } else {
            J::Object(classes)
        },
        "Require": require,
        "Meta": m.meta.as_ref().map(value_json),
        "UI": ui,
        "Logo": logo,
        "SupplierLogo": supplier_logo,
        "Images": images,
        "Path": p.base().source.location().display().to_string(),
    })
}

fn info(path: &Path) -> i32 {
    match FormatRegistry::builtin().load(path) {
        Ok(p) => {
            let j = info_json(&*p);
            println!(
                "{}",
                serde_json::to_string_pretty(&j).unwrap_or_else(|_| j.to_string())
            );
            0
        }
        Err(e) => {
            eprintln!("error: {}", e.message());
            1
        }
    }
}

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
}

/// Loads `path` and its requirements from `libs` and compiles every class.
pub fn check_package(path: &Path, libs: &[PathBuf]) -> Result<CheckReport, String> {
    let root: Arc<dyn PackageFormat> = FormatRegistry::builtin()
        .load(path)
        .map_err(|e| e.message().to_string())?;
    let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    let mut report = CheckReport {
        name: root.full_name().to_string(),
        ok: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        loaded: Vec::new(),
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
    let (root_pkg, errs, warns) = to_package_checked(&*root);
    report
        .errors
        .extend(errs.iter().map(|e| e.message().to_string()));
    report
        .warnings
        .extend(warns.iter().map(|e| e.message().to_string()));
    // Every class of the package: the manifest's, then any other class
    // its files define.
    let mut classes = root.classes();
    for c in root_pkg.class_names() {
        if !classes.contains(&c) {
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
    let ex = Executor::new(pkgs);
    for class in classes {
        // A class whose file already failed to load is reported once.
        let file = root.get_class(&class).map(|s| s.file);
        if report
            .errors
            .iter()
            .any(|e| e.contains(&class) || file.as_ref().is_ok_and(|f| e.starts_with(f.as_str())))
        {
            continue;
        }
        match ex.class(&class) {
            Ok(_) => report.ok.push(class),
            Err(e) => {
                let file = ex
                    .packages()
                    .first()
                    .and_then(|p| p.decl(&class))
                    .map(|d| d.pos.to_string())
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
    Ok(report)
}

fn check(path: &Path, libs: &[PathBuf]) -> i32 {
    match check_package(path, libs) {
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
        Ok(r) => {
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            for e in &r.errors {
                eprintln!("error: {e}");
            }
            let deps = if r.loaded.is_empty() {
                String::new()
            } else {
                format!(" (with {})", r.loaded.join(", "))
            };
            if r.errors.is_empty() {
                println!("{}: {} classes compiled{deps}", r.name, r.ok.len());
                0
            } else {
                println!(
                    "{}: {} classes compiled, {} errors{deps}",
                    r.name,
                    r.ok.len(),
                    r.errors.len()
                );
                1
            }
        }
    }
}

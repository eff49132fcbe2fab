//! `muranopl package info|check|pack|bundle`: package facts as JSON,
//! loading a package with its requirements and compiling every class of
//! it, packing a package directory into a .zip, and resolving a bundle
//! over the search path (directories of packages or repository roots with
//! `apps/`, `bundles/`, `images/`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Subcommand;
use lint::check::{check_and_lint, CheckOptions, Checked};
use package::{load_bundle, pack_package, FormatRegistry, PackageFormat, PackageLoader};

/// `muranopl package ...`.
#[derive(Subcommand)]
pub enum PackageCmd {
    /// Print a package's manifest facts as JSON; with `-L`, also the
    /// packages its `Require` resolves to (`Resolved`).
    Info {
        /// A package directory or .zip.
        package: PathBuf,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
    },
    /// Load a package and its requirements, compile every class of it,
    /// and lint it: errors for what murano rejects (exit 1), warnings with
    /// positions for what it accepts but is probably wrong (YAQL-looking
    /// strings that do not parse, ignored keys, undefined variables,
    /// unknown methods and properties, defaults that violate their
    /// contracts, unreachable statements, unused `Require` entries,
    /// classes nothing names).
    Check {
        /// A package directory or .zip.
        package: PathBuf,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
        /// How to print the findings.
        #[arg(long, value_enum, default_value_t)]
        format: lint::LintFormat,
        /// Do not report this lint (e.g. `unreferenced-class`); repeatable.
        #[arg(short = 'A', long = "allow", value_name = "LINT", value_parser = parse_lint)]
        allow: Vec<lint::Lint>,
        /// Exit 1 when there are warnings too.
        #[arg(long)]
        deny_warnings: bool,
        /// Also print what the compiled tier takes of the package's
        /// contracts: each contract chain or expression that stays
        /// interpreted, with why, and the share compiled to machine code
        /// (on stdout, after the check).
        #[arg(long)]
        jit_coverage: bool,
    },
    /// Pack a package directory into a .zip (manifest.yaml, Classes/,
    /// Resources/, UI/, images.lst, logos; template.yaml for HOT). With
    /// `-L`, also warns about a `Require` the search path cannot satisfy.
    Pack {
        /// A package directory.
        dir: PathBuf,
        /// The .zip to write.
        #[arg(long = "out", short = 'o')]
        out: PathBuf,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
    },
    /// Resolve a bundle (JSON or YAML `{Packages: [{Name, Version}]}`, a
    /// file or the name of a bundle in a repository's `bundles/`) and
    /// print the packages it needs as JSON.
    Bundle {
        /// A bundle file, or a bundle name found in `-L` repositories.
        bundle: PathBuf,
        /// A directory whose subfolders or .zip files are packages, or a
        /// repository root (`apps/`, `bundles/`, `images/`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
    },
}

/// Runs a `package` subcommand; returns the exit status.
pub fn run(cmd: PackageCmd, jit: compiler::jit::Mode, messages: crate::diag::MessageFormat) -> i32 {
    match cmd {
        PackageCmd::Info { package, libs } => info(&package, &libs),
        PackageCmd::Check {
            package,
            libs,
            format,
            allow,
            deny_warnings,
            jit_coverage,
        } => {
            let opts = CheckOptions {
                jit,
                messages,
                format,
                allow: allow.into_iter().collect(),
                deny_warnings,
            };
            check(&package, &libs, &opts, jit_coverage)
        }
        PackageCmd::Pack { dir, out, libs } => pack(&dir, &out, &libs),
        PackageCmd::Bundle { bundle, libs } => bundle_cmd(&bundle, &libs),
    }
}

fn value_json(v: &runtime::Value) -> serde_json::Value {
    serde_json::from_str(&runtime::json::to_tagged_string(v)).unwrap_or(serde_json::Value::Null)
}

/// Text from a package made safe to print on a terminal, on one line
/// (see [`runtime::pyrepr::escape_controls`]).
fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    runtime::pyrepr::escape_controls(s, false)
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

fn info(path: &Path, libs: &[PathBuf]) -> i32 {
    match FormatRegistry::builtin().load(path) {
        Ok(p) => {
            let mut j = info_json(&*p);
            if !libs.is_empty() {
                j["Resolved"] = resolved_json(p, libs);
            }
            println!(
                "{}",
                serde_json::to_string_pretty(&j).unwrap_or_else(|_| j.to_string())
            );
            0
        }
        Err(e) => {
            eprintln!("error: {}", safe(e.message()));
            crate::args::exit::USAGE
        }
    }
}

/// What `root`'s requirements resolve to on the search path `libs`:
/// `{name: {Version, Path}}`, or `{error: message}`.
fn resolved_json(root: Arc<dyn PackageFormat>, libs: &[PathBuf]) -> serde_json::Value {
    use serde_json::json;
    let deps = PackageLoader::new(libs).and_then(|l| l.resolve(&root));
    match deps {
        Ok(deps) => {
            let mut out = serde_json::Map::new();
            for d in deps {
                out.insert(
                    format!("{}/{}", d.full_name(), d.version()),
                    json!({"Version": d.version().to_string(),
                           "Path": d.base().source.location().display().to_string()}),
                );
            }
            serde_json::Value::Object(out)
        }
        Err(e) => json!({"error": e.message()}),
    }
}

fn parse_lint(s: &str) -> Result<lint::Lint, String> {
    lint::Lint::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = lint::Lint::ALL.iter().map(|l| l.name()).collect();
        format!("unknown lint `{s}` (one of: {})", names.join(", "))
    })
}

fn check(path: &Path, libs: &[PathBuf], opts: &CheckOptions, jit_coverage: bool) -> i32 {
    match check_and_lint(path, libs, opts) {
        Ok(c) => {
            let status = print_checked(&c, opts);
            if jit_coverage {
                print_jit_coverage(&c.report);
            }
            status
        }
        Err(e) => print_load_failure(path, &e, opts),
    }
}

/// `--jit-coverage`: the contract parts the compiled tier leaves to the
/// interpreter, with why, then the share it compiles.
fn print_jit_coverage(r: &lint::check::CheckReport) {
    let parts = lint::tier::coverage(r);
    for p in &parts {
        if let Err(why) = &p.tier.compiled {
            println!(
                "interpreted: {} {} at {}: {}: {why}",
                p.class,
                p.what,
                p.tier.at,
                safe(&p.tier.source)
            );
        }
    }
    let pct = |(compiled, all): (usize, usize)| {
        if all == 0 {
            100.0
        } else {
            100.0 * compiled as f64 / all as f64
        }
    };
    let all = lint::tier::share(&parts);
    let contracts = lint::tier::share_of(&parts, |p| !p.condition);
    let conditions = lint::tier::share_of(&parts, |p| p.condition);
    println!(
        "jit coverage: {}: {}/{} compiled ({:.1}%): contract parts {}/{} ({:.1}%), conditions {}/{} ({:.1}%)",
        r.name,
        all.0,
        all.1,
        pct(all),
        contracts.0,
        contracts.1,
        pct(contracts),
        conditions.0,
        conditions.1,
        pct(conditions),
    );
}

/// Prints what checking a package found; the exit status.
fn print_checked(c: &Checked, opts: &CheckOptions) -> i32 {
    use lint::LintFormat;
    let (r, diags) = (&c.report, &c.diagnostics);
    let warnings = diags.iter().filter(|d| d.warning).count();
    let failed = !r.errors.is_empty() || (opts.deny_warnings && warnings > 0);
    match opts.format {
        LintFormat::Human => {
            if c.rendered.len() == diags.len() {
                c.rendered.iter().for_each(|t| eprint!("{t}"));
            } else {
                diags.iter().for_each(|d| d.eprint(opts.messages));
            }
            let deps = if r.loaded.is_empty() {
                String::new()
            } else {
                format!(" (with {})", safe(&r.loaded.join(", ")))
            };
            let lints: Vec<String> = (c.counts.iter()).map(|(l, n)| format!("{n} {l}")).collect();
            let lints = if lints.is_empty() {
                String::new()
            } else {
                format!(": {}", lints.join(", "))
            };
            println!(
                "{}: {} classes compiled, {} errors, {warnings} warnings{lints}{deps}",
                safe(&r.name),
                r.ok.len(),
                r.errors.len(),
            );
        }
        LintFormat::Json => {
            let j = json_document(Some(&r.name), &r.ok, &r.loaded, diags, &c.counts);
            println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
        }
        LintFormat::Sarif => {
            let log = lint::render_sarif(diags, &c.paths);
            println!("{}", serde_json::to_string_pretty(&log).unwrap_or_default());
        }
    }
    i32::from(failed)
}

/// Prints the error of a package that does not load (`path`, error
/// `e`): in JSON and SARIF a whole document carrying it, so that a tool
/// reading the output always gets one. The exit status: a package that
/// cannot be read is input that cannot be read (2).
fn print_load_failure(path: &Path, e: &str, opts: &CheckOptions) -> i32 {
    use lint::LintFormat;
    let mut d = crate::diag::Diagnostic::from_text("PackageLoadError", e);
    if opts.format == LintFormat::Human {
        if opts.messages == crate::diag::MessageFormat::Human {
            d = lint::text_for_terminal(d);
        }
        d.eprint(opts.messages);
        return crate::args::exit::USAGE;
    }
    // Without a position in the message, the error is the package's.
    if d.file.is_none() {
        d.file = Some(path.display().to_string());
    }
    let doc = match opts.format {
        LintFormat::Sarif => {
            lint::render_sarif(std::slice::from_ref(&d), &lint::RawPaths::of(path))
        }
        _ => json_document(None, &[], &[], std::slice::from_ref(&d), &[]),
    };
    println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    crate::args::exit::USAGE
}

/// `package check --format json`: the package (null when it did not
/// load), the classes that compiled, the requirements loaded, errors and
/// warnings, and the number of findings of each lint.
fn json_document(
    name: Option<&str>,
    classes: &[String],
    loaded: &[String],
    diags: &[crate::diag::Diagnostic],
    counts: &[(lint::Lint, usize)],
) -> serde_json::Value {
    let (errors, warns): (Vec<_>, Vec<_>) = diags.iter().partition(|d| !d.warning);
    let counts: serde_json::Map<String, serde_json::Value> = counts
        .iter()
        .map(|(l, n)| (l.name().to_string(), (*n).into()))
        .collect();
    serde_json::json!({
        "package": name,
        "classes": classes,
        "loaded": loaded,
        "errors": errors.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
        "warnings": warns.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
        "lints": counts,
    })
}

/// Prints a warning for each `Require` of the package at `path` that the
/// search path `libs` cannot satisfy (nothing when `libs` is empty).
pub fn warn_unresolved(path: &Path, libs: &[PathBuf]) {
    if libs.is_empty() {
        return;
    }
    let Ok(p) = FormatRegistry::builtin().load(path) else {
        return;
    };
    let resolved = PackageLoader::new(libs).and_then(|l| l.resolve(&p));
    if let Err(e) = resolved {
        for line in e.message().lines() {
            eprintln!("warning: {}", safe(line));
        }
    }
}

fn pack(dir: &Path, out: &Path, libs: &[PathBuf]) -> i32 {
    warn_unresolved(dir, libs);
    match pack_package(dir, out) {
        Ok(files) => {
            println!("{}: {} files", out.display(), files.len());
            0
        }
        Err(e) => {
            eprintln!("error: {}", safe(e.message()));
            crate::args::exit::USAGE
        }
    }
}

/// Resolves a bundle over `libs`: the packages as JSON.
pub fn bundle_json(bundle: &Path, libs: &[PathBuf]) -> Result<serde_json::Value, String> {
    use serde_json::json;
    let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    let file = if bundle.is_file() {
        bundle.to_path_buf()
    } else {
        let name = bundle.to_string_lossy();
        loader.find_bundle(&name).ok_or_else(|| {
            format!(
                "{}: no such bundle file{}",
                bundle.display(),
                if loader.repositories.is_empty() {
                    String::new()
                } else {
                    " (nor in the bundles/ of the -L repositories)".to_string()
                }
            )
        })?
    };
    let b = load_bundle(&file).map_err(|e| e.message().to_string())?;
    let items = loader
        .resolve_bundle(&b)
        .map_err(|e| e.message().to_string())?;
    let mut images = Vec::new();
    let packages: Vec<serde_json::Value> = items
        .iter()
        .map(|i| {
            if let Ok(list) = i.found.package.images() {
                for img in list {
                    images.push(json!({
                        "name": img.name,
                        "package": i.found.name,
                        "path": loader
                            .find_image(&img.name)
                            .map(|p| p.display().to_string()),
                    }));
                }
            }
            json!({
                "name": i.found.name,
                "version": i.found.version.to_string(),
                "path": i.found.path.display().to_string(),
                "requested": i.requested,
                "requiredBy": i.required_by,
            })
        })
        .collect();
    Ok(json!({
        "bundle": file.display().to_string(),
        "packages": packages,
        "images": images,
    }))
}

fn bundle_cmd(bundle: &Path, libs: &[PathBuf]) -> i32 {
    match bundle_json(bundle, libs) {
        Ok(j) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&j).unwrap_or_else(|_| j.to_string())
            );
            0
        }
        Err(e) => {
            for l in e.lines() {
                eprintln!("error: {}", safe(l));
            }
            crate::args::exit::USAGE
        }
    }
}

//! `muranopl ui model|forms`: the object model a package's Dynamic UI
//! produces (as Murano's dashboard would), and its parsed forms.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use muranopl::ui::{load_ui, ui_model};
use package::{node_value, FormatRegistry};

/// `muranopl ui ...`.
#[derive(Subcommand)]
pub enum UiCmd {
    /// Print the object model (JSON) of a package's application, from its
    /// UI definition: answers, else `initial` values, else samples. An
    /// application field gets a new application of its type, added to the
    /// environment as the dashboard's "+" adds it (the field holds its id);
    /// the output is then that environment with every application.
    Model {
        /// A package directory or .zip.
        package: PathBuf,
        /// A directory whose subfolders or .zip files are packages
        /// (searched for application-typed fields); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
        /// Answers (JSON or YAML): `{form: {field: value}}`. A field whose
        /// type is an application takes the answers of the application
        /// made for it the same way: `{form: {field: {itsForm: {...}}}}`.
        #[arg(long)]
        answers: Option<PathBuf>,
        /// Print the cleaned form data too (`{"data": ..., "model": ...}`).
        #[arg(long)]
        with_data: bool,
        /// Do not print notes (samples used, warnings) to stderr.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Print a package's parsed UI forms and fields as JSON.
    Forms {
        /// A package directory or .zip.
        package: PathBuf,
        /// A directory whose subfolders or .zip files are packages; with
        /// it, a `Require` the search path cannot satisfy is warned about.
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
    },
}

/// Runs a `ui` subcommand; returns the exit status.
pub fn run(cmd: UiCmd) -> i32 {
    // Input that cannot be read (2) before anything runs (1).
    let (UiCmd::Model { package, .. } | UiCmd::Forms { package, .. }) = &cmd;
    let answers = match &cmd {
        UiCmd::Model { answers, .. } => answers.as_deref(),
        UiCmd::Forms { .. } => None,
    };
    for p in std::iter::once(package.as_path()).chain(answers) {
        if !p.exists() {
            eprintln!("error: {}: no such file or directory", p.display());
            return crate::args::exit::USAGE;
        }
    }
    let r = match cmd {
        UiCmd::Model {
            package,
            libs,
            answers,
            with_data,
            quiet,
        } => {
            let answers = match answers.as_deref().map(read_answers).transpose() {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("error: {e}");
                    return crate::args::exit::USAGE;
                }
            };
            model(&package, &libs, answers, with_data, quiet)
        }
        UiCmd::Forms { package, libs } => {
            crate::package::warn_unresolved(&package, &libs);
            forms(&package)
        }
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn err(e: runtime::Error) -> String {
    e.report(None)
}

fn to_json(v: &runtime::Value) -> String {
    let s = runtime::json::to_tagged_string(v);
    match serde_json::from_str::<serde_json::Value>(&s) {
        Ok(j) => serde_json::to_string_pretty(&j).unwrap_or(s),
        Err(_) => s,
    }
}

fn read_answers(path: &Path) -> Result<runtime::Value, String> {
    let max = Some(crate::records::DEFAULT_MAX_RECORD);
    let text =
        crate::records::read_text(path, max).map_err(|e| format!("{}: {e}", path.display()))?;
    let docs = compiler::murano::load_documents(&text, &path.display().to_string()).map_err(err)?;
    Ok(docs.first().map(node_value).unwrap_or(runtime::Value::Null))
}

fn model(
    package: &Path,
    libs: &[PathBuf],
    answers: Option<runtime::Value>,
    with_data: bool,
    quiet: bool,
) -> Result<(), String> {
    let (model, data, notes) = ui_model(package, libs, answers)?;
    if !quiet {
        for n in &notes {
            eprintln!("note: {n}");
        }
    }
    if with_data {
        let mut d = runtime::Dict::default();
        d.insert(runtime::Value::str("data"), data);
        d.insert(runtime::Value::str("model"), model);
        println!("{}", to_json(&runtime::Value::dict(d)));
    } else {
        println!("{}", to_json(&model));
    }
    Ok(())
}

fn forms(package: &Path) -> Result<(), String> {
    let pkg = FormatRegistry::builtin().load(package).map_err(err)?;
    let ui = load_ui(&*pkg)?;
    println!("{}", to_json(&ui.describe()));
    Ok(())
}

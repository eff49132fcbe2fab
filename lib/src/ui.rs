//! The object model a package's Dynamic UI produces, as Murano's
//! dashboard makes it.

use std::path::{Path, PathBuf};

use forms::ui::{generate, IdGen, ModelOptions, UiDefinition};
use package::{FormatRegistry, PackageFormat, PackageLoader};

fn err(e: runtime::Error) -> String {
    e.report(None)
}

/// The package's UI definition, parsed.
pub fn load_ui(pkg: &dyn PackageFormat) -> Result<UiDefinition, String> {
    let Some(text) = pkg.ui().map_err(err)? else {
        return Err(format!(
            "package {} has no UI definition ({})",
            pkg.full_name(),
            pkg.base()
                .source
                .display(&format!("UI/{}", pkg.base().manifest.ui))
        ));
    };
    let file = pkg
        .base()
        .source
        .display(&format!("UI/{}", pkg.base().manifest.ui));
    UiDefinition::parse(&text, &file).map_err(err)
}

/// The object model a package's Dynamic UI produces, as the dashboard
/// makes it: from `answers` (`{form: {field: value}}`), else the fields'
/// `initial` values, else samples. Returns the model, the cleaned form
/// data and notes (samples used, warnings). `libs` is searched for the
/// packages of application-typed fields.
pub fn ui_model(
    package: &Path,
    libs: &[PathBuf],
    answers: Option<runtime::Value>,
) -> Result<(runtime::Value, runtime::Value, Vec<String>), String> {
    let pkg = FormatRegistry::builtin().load(package).map_err(err)?;
    let ui = load_ui(&*pkg)?;
    let loader = if libs.is_empty() {
        None
    } else {
        Some(PackageLoader::new(libs).map_err(err)?)
    };
    let out = generate(
        &ui,
        &ModelOptions {
            package: pkg.full_name().to_string(),
            answers: answers.filter(|a| !a.is_null()),
            loader: loader.as_ref(),
            ids: None,
            nesting: 0,
        },
    )
    .map_err(err)?;
    let model = if out.added.is_empty() {
        out.model
    } else {
        // Applications made for application fields sit beside this one in
        // its environment, named as `run` names the one it makes.
        let stem = package.file_stem().map(|s| s.to_string_lossy().to_string());
        let name = format!("{}-env", stem.as_deref().unwrap_or("environment"));
        let mut ids = IdGen::new(&name);
        let mut apps = out.added;
        apps.push(out.model);
        sim::deploy::environment(apps, &name, || ids.uuid())
    };
    Ok((model, out.data, out.notes))
}

//! `muranopl harness schema`: MuranoPL forms (JSON Schema of a class and
//! its model builders) over JSON Lines (see
//! `../shared/conformance/PROTOCOL.md`, section `harness schema`).

use engine::{exec, Executor, Package};
use forms::schema;
use serde_json::{json, Value as J};

use muranopl::json as tj;

fn files_of(j: Option<&J>) -> Vec<(String, String)> {
    let mut files = Vec::new();
    if let Some(J::Object(c)) = j {
        for (k, v) in c {
            files.push((k.clone(), v.as_str().unwrap_or("").to_string()));
        }
    }
    files
}

fn str_field<'a>(j: &'a J, name: &str, default: &'a str) -> &'a str {
    j.get(name).and_then(|f| f.as_str()).unwrap_or(default)
}

fn load_error(id: &J, e: &runtime::Error) -> J {
    json!({"id": id, "error": {"names": [e.kind()], "message": e.message()}})
}

fn run_case(req: &J, jit: compiler::jit::Mode) -> J {
    let id = req.get("id").cloned().unwrap_or(J::Null);
    let mut packages = Vec::new();
    let format = str_field(req, "format", "1.4");
    match Package::new("tests", "0.0.0", format, &files_of(req.get("classes"))) {
        Ok(p) => packages.push(p),
        Err(e) => return load_error(&id, &e),
    }
    for p in req
        .get("packages")
        .and_then(|p| p.as_array())
        .cloned()
        .unwrap_or_default()
    {
        let pkg = Package::new(
            str_field(&p, "name", ""),
            str_field(&p, "version", "0.0.0"),
            str_field(&p, "format", "1.4"),
            &files_of(p.get("classes")),
        );
        match pkg {
            Ok(p) => packages.push(p),
            Err(e) => return load_error(&id, &e),
        }
    }
    if let Some(f) = schema::forms_package() {
        packages.push(f);
    }
    let catalog = engine::Catalog::new(packages);
    catalog.set_jit(jit);
    let ex = Executor::with_catalog(catalog);
    let class = str_field(req, "class", "");
    let methods: Option<Vec<String>> = match req.get("methods") {
        Some(J::Array(a)) => Some(
            a.iter()
                .filter_map(|m| m.as_str().map(str::to_string))
                .collect(),
        ),
        Some(J::String(s)) => Some(vec![s.clone()]),
        _ => None,
    };
    let package = req.get("package").and_then(|p| p.as_str());
    match schema::generate_schema(
        &ex,
        class,
        methods.as_deref(),
        package,
        schema::Dialect::Reference,
    ) {
        Ok(schemas) => {
            let mut out = serde_json::Map::new();
            for (name, v) in schemas {
                let j = serde_json::from_str(&tj::to_tagged_string(&v)).unwrap_or(J::Null);
                out.insert(name, j);
            }
            json!({"id": id, "schemas": out})
        }
        Err(e) => json!({"id": id, "error": {
            "names": exec::error_names(&ex, &e, false), "message": e.message()}}),
    }
}

/// Runs the schema harness loop on stdin/stdout.
pub fn harness_schema(jit: compiler::jit::Mode, max_line: Option<usize>) -> i32 {
    crate::harness::serve("error", max_line, |req| run_case(req, jit))
}

//! Heat Orchestration Template packages (`Format: Heat.HOT`): the
//! classes murano generates for them.

use compiler::murano::load_documents;
use engine::node_value;
use runtime::{Dict, Result, Value};

use crate::error::{class_error, format_error, load_error};
use crate::format::{ClassSource, PackageBase, PackageFormat};

/// A Heat template package (Format Heat.HOT/1.0): `template.yaml` becomes
/// one generated MuranoPL class named after the package, extending
/// `io.murano.Application`, as murano's `hot_package` translates it.
pub struct HotPackage {
    pub(crate) base: PackageBase,
}

pub(crate) fn yq(s: &str) -> String {
    // A double-quoted YAML string, read back as a string.
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(crate) fn yaql_tag(expr: &str) -> String {
    format!("!yaql {}", yq(expr))
}

pub(crate) fn hot_value_text(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => runtime::json::to_tagged_string(other),
    }
}

pub(crate) fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) => Some(*f as i64),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn dget<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Dict(d) => d.get(&Value::str(k)),
        _ => None,
    }
}

/// The contract of a HOT parameter (murano's `_translate_param_to_contract`).
pub fn hot_param_contract(param: &Value) -> std::result::Result<String, String> {
    let ty = dget(param, "type").and_then(|t| t.as_str()).unwrap_or("");
    let mut c = String::from("$");
    match ty {
        "string" | "comma_delimited_list" | "json" => c.push_str(".string()"),
        "number" => c.push_str(".int()"),
        "boolean" => c.push_str(".bool()"),
        other => return Err(format!("Unsupported parameter type {other}")),
    }
    let constraints = match dget(param, "constraints") {
        Some(Value::List(l)) => l.as_slice().to_vec(),
        _ => Vec::new(),
    };
    let min_max = |v: &Value| {
        (
            dget(v, "min").and_then(as_int),
            dget(v, "max").and_then(as_int),
        )
    };
    for k in &constraints {
        if let Some(Value::List(vals)) = dget(k, "allowed_values") {
            let items: Vec<String> = vals.iter().map(hot_value_text).collect();
            c.push_str(&format!(".check($ in list({}))", items.join(", ")));
        } else if let Some(l) = dget(k, "length") {
            match min_max(l) {
                (Some(a), Some(b)) => {
                    c.push_str(&format!(".check(len($) >= {a} and len($) <= {b})"))
                }
                (Some(a), None) => c.push_str(&format!(".check(len($) >= {a})")),
                (None, Some(b)) => c.push_str(&format!(".check(len($) <= {b})")),
                _ => {}
            }
        } else if let Some(r) = dget(k, "range") {
            match min_max(r) {
                (Some(a), Some(b)) => c.push_str(&format!(".check($ >= {a} and $ <= {b})")),
                (Some(a), None) => c.push_str(&format!(".check($ >= {a})")),
                (None, Some(b)) => c.push_str(&format!(".check($ <= {b})")),
                _ => {}
            }
        } else if let Some(p) = dget(k, "allowed_pattern") {
            let p = p
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| hot_value_text(p));
            c.push_str(&format!(".check(matches($, '{p}'))"));
        }
    }
    Ok(c)
}

impl HotPackage {
    pub(crate) fn new(base: PackageBase) -> Result<HotPackage> {
        Ok(HotPackage { base })
    }

    fn template(&self) -> Result<(String, Value)> {
        let src = &self.base.source;
        let file = src.display("template.yaml");
        let Some(text) = src.read_text("template.yaml")? else {
            return Err(class_error(format!(
                "{file}: File with class definition not found"
            )));
        };
        let docs = load_documents(&text, &file)?;
        let hot = docs.first().map(node_value).unwrap_or(Value::Null);
        if dget(&hot, "resources").is_none() {
            return Err(format_error(format!("{file}: Not a HOT template")));
        }
        Ok((text, hot))
    }

    /// True when `Resources/HotEnvironments` holds files (then parameters
    /// are not validated by contracts).
    fn has_environments(&self) -> bool {
        !self
            .base
            .source
            .list("Resources/HotEnvironments")
            .is_empty()
    }

    /// The `Resources/HotFiles` tree, relative paths.
    pub fn hot_files(&self) -> Vec<String> {
        self.base.source.list("Resources/HotFiles")
    }

    /// The generated MuranoPL class text.
    pub fn translate_class(&self) -> Result<String> {
        let (_, hot) = self.template()?;
        let name = self.full_name();
        let mut y = String::new();
        y.push_str(&format!(
            "Name: {}\nExtends: io.murano.Application\n",
            yq(name)
        ));
        y.push_str("Properties:\n");
        y.push_str(&format!(
            "  generatedHeatStackName:\n    Contract: {}\n    Usage: Out\n",
            yaql_tag("$.string()")
        ));
        y.push_str(&format!(
            "  hotEnvironment:\n    Contract: {}\n    Usage: In\n",
            yaql_tag("$.string()")
        ));
        y.push_str(&format!(
            "  name:\n    Contract: {}\n    Usage: In\n",
            yaql_tag("$.string().notNull()")
        ));
        y.push_str("  templateParameters:\n    Contract:");
        let params = match dget(&hot, "parameters") {
            Some(Value::Dict(d)) if !self.has_environments() => d.as_ref().clone(),
            _ => Dict::default(),
        };
        if params.is_empty() {
            y.push_str(" {}\n");
        } else {
            y.push('\n');
            for (k, v) in &params {
                let key = k
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| hot_value_text(k));
                let c = hot_param_contract(v).map_err(format_error)?;
                y.push_str(&format!("      {}: {}\n", yq(&key), yaql_tag(&c)));
            }
        }
        y.push_str("    Default: {}\n    Usage: In\n");
        let outputs: Vec<String> = match dget(&hot, "outputs") {
            Some(Value::Dict(d)) => d
                .keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        y.push_str("  templateOutputs:\n    Contract:");
        if outputs.is_empty() {
            y.push_str(" {}\n");
        } else {
            y.push('\n');
            for k in &outputs {
                y.push_str(&format!("      {}: {}\n", yq(k), yaql_tag("$.string()")));
            }
        }
        y.push_str("    Default: {}\n    Usage: Out\n");
        // Methods (murano's _generate_workflow).
        let e = |s: &str| yaql_tag(s);
        y.push_str("Methods:\n");
        y.push_str("  .init:\n    Body:\n");
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$environment"),
            e("$.find('io.murano.Environment').require()")
        ));
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$generatedHeatStackName"),
            e("$.getAttr(generatedHeatStackName, null)")
        ));
        y.push_str(&format!(
            "      - If: {}\n        Then:\n          - {}: {}\n          - {}\n",
            e("$generatedHeatStackName = null"),
            e("$generatedHeatStackName"),
            e("randomName()"),
            e("$.setAttr(generatedHeatStackName, $generatedHeatStackName)")
        ));
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$.generatedHeatStackName"),
            e("$generatedHeatStackName")
        ));
        y.push_str("  deploy:\n    Body:\n");
        let files = self.hot_files();
        let mut files_map = String::from("{");
        for (i, f) in files.iter().enumerate() {
            if i > 0 {
                files_map.push_str(", ");
            }
            files_map.push_str(&format!(
                "{}: {}",
                yq(&format!("../{f}")),
                e(&format!("$resources.string('HotFiles/{f}')"))
            ));
        }
        files_map.push('}');
        let steps: Vec<String> = vec![
            format!("{}: {}", e("$environment"), e("$.find('io.murano.Environment').require()")),
            format!("{}: {}", e("$reporter"), e("$environment.reporter")),
            format!(
                "{}: {}",
                e("$stack"),
                e("new('io.murano.system.HeatStack', $environment, name => $.generatedHeatStackName)")
            ),
            e("$reporter.report($this, 'Application deployment has started')"),
            format!("{}: {}", e("$resources"), e("new('io.murano.system.Resources')")),
            format!("{}: {}", e("$template"), e("$resources.yaml(type($this))")),
            format!("{}: {}", e("$parameters"), e("$.templateParameters")),
            format!("{}: {}", e("$files"), files_map),
            format!("{}: {}", e("$hotEnv"), e("$.hotEnvironment")),
            e("$stack.setTemplate($template)"),
            e("$stack.setParameters($parameters)"),
            e("$stack.setFiles($files)"),
            e("$stack.setHotEnvironment($hotEnv)"),
            e("$reporter.report($this, 'Stack creation has started')"),
        ];
        for s in steps {
            y.push_str(&format!("      - {s}\n"));
        }
        y.push_str("      - Try:\n          - ");
        y.push_str(&e("$stack.push()"));
        y.push_str("\n        Catch:\n          - As: e\n            Do:\n              - ");
        y.push_str(&e("$reporter.report_error($this, $e.message)"));
        y.push_str("\n              - Rethrow:\n        Else:\n          - ");
        y.push_str(&format!("{}: {}\n", e("$outputs"), e("$stack.output()")));
        for k in &outputs {
            y.push_str(&format!(
                "          - {}: {}\n",
                e(&format!("$.templateOutputs.{k}")),
                e(&format!("$outputs.{k}"))
            ));
        }
        y.push_str(&format!(
            "          - {}\n          - {}\n",
            e("$reporter.report($this, 'Stack was successfully created')"),
            e("$reporter.report($this, 'Application deployment has finished')")
        ));
        y.push_str("  .destroy:\n    Body:\n");
        y.push_str(&format!(
            "      - {}: {}\n      - {}\n",
            e("$stack"),
            e("new('io.murano.system.HeatStack', $this, name => $.generatedHeatStackName)"),
            e("$stack.delete()")
        ));
        Ok(y)
    }

    /// The generated UI definition, as murano's `_translate_ui`
    /// (murano/packages/hot_package.py) writes it: `group0` holds the
    /// hidden `title` and the application name; each `parameter_groups`
    /// entry becomes a form of the parameters it names that exist; the
    /// parameters no group names make one last form.
    pub fn translate_ui(&self) -> Result<String> {
        let (_, hot) = self.template()?;
        let name = self.full_name();
        let version = self.version().to_string();
        let params = match dget(&hot, "parameters") {
            Some(Value::Dict(d)) => d.as_ref().clone(),
            _ => Dict::default(),
        };
        let mut groups: Vec<Vec<String>> = Vec::new();
        if let Some(Value::List(gs)) = dget(&hot, "parameter_groups") {
            for g in gs.iter() {
                // Iterating a dict of parameters gives its names.
                let listed: Vec<Value> = match dget(g, "parameters") {
                    Some(Value::List(ps)) => ps.to_vec(),
                    Some(Value::Dict(ps)) => ps.keys().cloned().collect(),
                    _ => Vec::new(),
                };
                let names: Vec<String> = listed
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .filter(|p| {
                        params
                            .get(&Value::str(p.as_str()))
                            .is_some_and(Value::truthy)
                    })
                    .collect();
                groups.push(names);
            }
        }
        let rest: Vec<String> = params
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .filter(|k| !groups.iter().flatten().any(|g| g == k))
            .collect();
        if !rest.is_empty() {
            groups.push(rest);
        }
        let mut y = String::from("Version: 2\nApplication:\n  \"?\":\n");
        y.push_str(&format!(
            "    \"classVersion\": {}\n    \"package\": {}\n    \"type\": {}\n",
            yq(&version),
            yq(name),
            yq(name)
        ));
        y.push_str(&format!("  \"name\": {}\n", yaql_tag("$.group0.name")));
        y.push_str("  \"templateParameters\":\n");
        if groups.iter().all(Vec::is_empty) {
            y.push_str("    {}\n");
        }
        for (i, g) in groups.iter().enumerate() {
            for p in g {
                let expr = format!("$.group{}.{p}", i + 1);
                y.push_str(&format!("    {}: {}\n", yq(p), yaql_tag(&expr)));
            }
        }
        let title = self.description().unwrap_or_default();
        y.push_str(&format!(
            "Forms:\n  - group0:\n      fields:\n\
             \x20       - name: title\n          type: string\n          required: false\n          hidden: true\n          description: {}\n\
             \x20       - name: name\n          type: string\n          label: Application Name\n          required: true\n\
             \x20         description: Enter a desired name for the application. Just A-Z, a-z, 0-9, and dash are allowed\n",
            yq(title)
        ));
        for (i, g) in groups.iter().enumerate() {
            y.push_str(&format!("  - group{}:\n      fields:\n", i + 1));
            if g.is_empty() {
                y.push_str("        []\n");
            }
            for p in g {
                let def = params
                    .get(&Value::str(p.as_str()))
                    .cloned()
                    .unwrap_or(Value::Null);
                y.push_str(&hot_ui_field(p, &def));
            }
        }
        Ok(y)
    }
}

/// One generated form field of a HOT parameter (murano's
/// `_translate_ui_parameter`): its type, label (the name in title case
/// unless given), description, default (`initial`, then not required) and
/// constraints (`length` as `minLength`/`maxLength`; `range`,
/// `allowed_values` and `allowed_pattern` as validators with the
/// constraint's description as message).
pub(crate) fn hot_ui_field(name: &str, def: &Value) -> String {
    let ty = match dget(def, "type").and_then(|t| t.as_str()) {
        Some("number") => "integer",
        Some("boolean") => "boolean",
        _ => "string",
    };
    let label = dget(def, "label")
        .and_then(|v| v.as_str())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| title_case(name).replace('_', " "));
    let mut y = format!(
        "        - name: {}\n          type: {ty}\n          label: {}\n",
        yq(name),
        yq(&label)
    );
    if let Some(d) = dget(def, "description") {
        y.push_str(&format!(
            "          description: {}\n",
            yq(&runtime::pyrepr::to_str(d))
        ));
    }
    match dget(def, "default") {
        Some(d) => y.push_str(&format!(
            "          initial: {}\n          required: false\n",
            runtime::json::to_tagged_string(d)
        )),
        None => y.push_str("          required: true\n"),
    }
    let mut validators = Vec::new();
    let (mut min_len, mut max_len): (Option<i64>, Option<i64>) = (None, None);
    if let Some(Value::List(cs)) = dget(def, "constraints") {
        for c in cs.iter() {
            let message = dget(c, "description").map(|m| yq(&runtime::pyrepr::to_str(m)));
            let check = if let Some(spec) = dget(c, "length") {
                if let Some(m) = dget(spec, "min").and_then(as_int) {
                    min_len = Some(min_len.map_or(m, |x| x.max(m)));
                }
                if let Some(m) = dget(spec, "max").and_then(as_int) {
                    max_len = Some(max_len.map_or(m, |x| x.min(m)));
                }
                continue;
            } else if let Some(spec) = dget(c, "range") {
                let (lo, hi) = (dget(spec, "min"), dget(spec, "max"));
                let bound = |v: &Value| runtime::pyrepr::to_str(v);
                let expr = match (lo, hi) {
                    (Some(l), Some(h)) => format!("$ >= {} and $ <= {}", bound(l), bound(h)),
                    (Some(l), None) => format!("$ >= {}", bound(l)),
                    (None, Some(h)) => format!("$ <= {}", bound(h)),
                    (None, None) => continue,
                };
                yaql_tag(&expr)
            } else if let Some(Value::List(vals)) = dget(c, "allowed_values") {
                let list: Vec<String> = vals.iter().map(hot_value_text).collect();
                yaql_tag(&format!("$ in list({})", list.join(", ")))
            } else if let Some(p) = dget(c, "allowed_pattern") {
                format!(
                    "\n              regexpValidator: {}",
                    yq(&runtime::pyrepr::to_str(p))
                )
            } else {
                continue;
            };
            validators.push((check, message));
        }
    }
    if let Some(m) = min_len {
        y.push_str(&format!("          minLength: {m}\n"));
    }
    if let Some(m) = max_len {
        y.push_str(&format!("          maxLength: {m}\n"));
    }
    if !validators.is_empty() {
        y.push_str("          validators:\n");
        for (check, message) in validators {
            y.push_str(&format!("            - expr: {check}\n"));
            if let Some(m) = message {
                y.push_str(&format!("              message: {m}\n"));
            }
        }
    }
    y
}

/// Python's `str.title()`: each run of letters starts upper case, the rest
/// lower case.
pub(crate) fn title_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_letter = true;
        } else {
            out.push(c);
            prev_letter = false;
        }
    }
    out
}

impl PackageFormat for HotPackage {
    fn base(&self) -> &PackageBase {
        &self.base
    }
    fn classes(&self) -> Vec<String> {
        vec![self.full_name().to_string()]
    }
    fn get_class(&self, name: &str) -> Result<ClassSource> {
        if name != self.full_name() {
            return Err(class_error(format!(
                "Class {name} not defined in this package"
            )));
        }
        Ok(ClassSource {
            file: format!("{}(generated)", self.base.source.display("template.yaml")),
            text: self.translate_class()?,
        })
    }
    fn ui(&self) -> Result<Option<String>> {
        self.translate_ui().map(Some)
    }
    fn get_resource(&self, name: &str) -> Result<Vec<u8>> {
        // The template itself is the resource named after the package.
        if name == self.full_name() {
            let (text, _) = self.template()?;
            return Ok(text.into_bytes());
        }
        let rel = format!("Resources/{name}");
        self.base
            .source
            .read(&rel)?
            .ok_or_else(|| load_error(format!("resource {name} not found")))
    }
}

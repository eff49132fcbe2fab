//! Completion (properties and methods after `$.`, YAQL methods after
//! `.`, extension methods in scope after either, variables after `$`,
//! functions, class names and block keywords elsewhere) and the outline
//! of a class file (document symbols).

use std::collections::BTreeSet;

use lsp_types::{
    CompletionItem, CompletionItemKind, DocumentSymbol, Documentation, MarkupContent, MarkupKind,
    SymbolKind,
};
use runtime::registry::Kind;

use super::docs;
use super::navigate::{template_text, Here};
use super::text;

fn item(label: &str, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: (!detail.is_empty()).then_some(detail),
        ..CompletionItem::default()
    }
}

/// The completions at byte `at` of the document.
pub fn complete(here: &Here<'_>, at: usize) -> Vec<CompletionItem> {
    let t = here.text;
    let at = text::floor_char(t, at.min(t.len()));
    let start = text::word_at(t, at.saturating_sub(1))
        .filter(|(_, s)| s.end == at)
        .map_or(at, |(_, s)| s.start);
    let before = &t[..start];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let lead = before[line_start..].trim_start();
    if let Some(keys) = file_keys(here.file, &before[line_start..]) {
        return keys
            .iter()
            .map(|k| {
                let mut i = item(k, CompletionItemKind::PROPERTY, String::new());
                i.insert_text = Some(format!("{k}: "));
                i
            })
            .collect();
    }
    if in_contract(t, start) && before.ends_with('.') {
        return contract_functions(here);
    }
    if before.ends_with("$.") || before.ends_with("$this.") {
        let mut out = members(here, at);
        out.extend(extensions(here, at));
        return out;
    }
    if before.ends_with('$') {
        return variables(here, at);
    }
    if before.ends_with('.') {
        let mut out = functions(here, true);
        out.extend(
            members(here, at)
                .into_iter()
                .filter(|i| i.kind == Some(CompletionItemKind::METHOD)),
        );
        out.extend(extensions(here, at));
        return out;
    }
    let mut out = functions(here, false);
    out.extend(classes(here, at));
    if lead.is_empty() || lead == "-" || lead == "- " {
        out.extend(docs::KEYWORDS.iter().map(|(k, d)| {
            let mut i = item(k, CompletionItemKind::KEYWORD, String::new());
            i.insert_text = Some(format!("{k}: "));
            i.documentation = Some(Documentation::String(d.to_string()));
            i
        }));
    }
    out
}

/// The top-level keys of a manifest (`manifest.yaml`) or a UI
/// definition (a file under `UI/`), when `line` (the text before the
/// cursor on its line) is at the start of a top-level key.
fn file_keys(file: &std::path::Path, line: &str) -> Option<&'static [&'static str]> {
    const UI: &[&str] = &["Version", "Application", "Forms", "Templates"];
    if !line.chars().all(|c| c.is_alphanumeric()) {
        return None;
    }
    let name = file.file_name()?.to_str()?;
    if name == "manifest.yaml" {
        return Some(lint::MANIFEST_KEYS);
    }
    let in_ui = file.parent()?.file_name().is_some_and(|d| d == "UI");
    (in_ui && (name.ends_with(".yaml") || name.ends_with(".yml"))).then_some(UI)
}

/// True when byte `at` is in the value of a `Contract:` key (on its line
/// or in the lines nested under it).
fn in_contract(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if text[line_start..at].contains("Contract:") {
        return true;
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut min = indent(&text[line_start..at]);
    for line in text[..line_start].lines().rev().take(200) {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let i = indent(line);
        if i < min {
            if line.contains("Contract:") {
                return true;
            }
            min = i;
            if i == 0 {
                break;
            }
        }
    }
    false
}

/// The contract functions (`string`, `int`, `class`, `notNull`, ...).
fn contract_functions(here: &Here<'_>) -> Vec<CompletionItem> {
    let Some(ex) = here.ex else {
        return Vec::new();
    };
    let contracts = ex.catalog().contract_registry(false);
    let plain = ex.catalog().registry(false);
    // The names contracts add overloads to (`int` is a function too).
    let count =
        |r: &runtime::registry::Registry, n: &str| r.get(n).map_or(0, |s| s.overloads.len());
    let mut names: Vec<&str> = (contracts.names())
        .filter(|n| docs::callable(n) && count(&contracts, n) > count(&plain, n))
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .map(|n| {
            let sig = contracts
                .get(n)
                .and_then(|s| s.overloads.first().map(|o| docs::signature(o)));
            item(n, CompletionItemKind::FUNCTION, sig.unwrap_or_default())
        })
        .collect()
}

/// The properties and methods of the class around `at` and its parents.
fn members(here: &Here<'_>, at: usize) -> Vec<CompletionItem> {
    let Some(class) = here.class_at(at) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for d in here.mro(&class.name) {
        for p in &d.properties {
            if seen.insert(("p", p.name.clone())) {
                let detail = format!("{}: {} ({})", p.name, template_text(&p.contract), d.name);
                out.push(item(&p.name, CompletionItemKind::FIELD, detail));
            }
        }
        for m in &d.methods {
            if m.name.starts_with('.') || !seen.insert(("m", m.name.clone())) {
                continue;
            }
            let args: Vec<&str> = m.arguments.iter().map(|a| a.name.as_str()).collect();
            let detail = format!("{}::{}({})", d.name, m.name, args.join(", "));
            out.push(item(&m.name, CompletionItemKind::METHOD, detail));
        }
    }
    out
}

/// The extension methods (`Usage: Extension`) code of the class around
/// `at` can call as methods: its own and those of the classes it
/// imports; the detail shows the arguments after the receiver.
fn extensions(here: &Here<'_>, at: usize) -> Vec<CompletionItem> {
    let Some(class) = here.class_at(at) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let classes = std::iter::once(&class.name).chain(class.import.iter());
    for d in classes.filter_map(|c| here.decl(c)) {
        for m in &d.methods {
            if m.usage != compiler::murano::MethodUsage::Extension || !seen.insert(m.name.clone()) {
                continue;
            }
            let args: Vec<&str> = (m.arguments.iter().skip(1))
                .map(|a| a.name.as_str())
                .collect();
            let detail = format!("{}::{}({}) (extension)", d.name, m.name, args.join(", "));
            out.push(item(&m.name, CompletionItemKind::METHOD, detail));
        }
    }
    out
}

/// The variables of the method around `at`: its arguments, what it
/// assigns before `at`, and `this`.
fn variables(here: &Here<'_>, at: usize) -> Vec<CompletionItem> {
    let mut names = BTreeSet::new();
    names.insert("this".to_string());
    if let Some((c, i)) = here.method_at(at) {
        let m = &c.methods[i];
        names.extend(m.arguments.iter().map(|a| a.name.clone()));
        let from = (m.pos.offset as usize).min(at);
        let body = &here.text[from..at];
        for (i, _) in body.match_indices('$') {
            let rest = &body[i + 1..];
            let n = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if n > 0 && rest[n..].starts_with(':') {
                names.insert(rest[..n].to_string());
            }
        }
    }
    names
        .into_iter()
        .map(|n| item(&n, CompletionItemKind::VARIABLE, String::new()))
        .collect()
}

/// YAQL functions (or, with `methods`, those callable as methods).
fn functions(here: &Here<'_>, methods: bool) -> Vec<CompletionItem> {
    let registry = here.registry();
    let mut names: Vec<&str> = registry.names().filter(|n| docs::callable(n)).collect();
    names.sort_unstable();
    names
        .into_iter()
        .filter_map(|n| {
            let set = registry.get(n)?;
            let fits = set.overloads.iter().any(|o| match o.kind {
                Kind::Function => !methods,
                Kind::Method => methods,
                Kind::Extension => true,
            });
            if !fits {
                return None;
            }
            let sig = set.overloads.first().map(|o| docs::signature(o));
            let mut i = item(n, CompletionItemKind::FUNCTION, sig.unwrap_or_default());
            if let Some(d) = docs::function_doc(n) {
                let first = d.split("\n\n").next().unwrap_or("").to_string();
                i.documentation = Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: first,
                }));
            }
            Some(i)
        })
        .collect()
}

/// The classes loaded, by full name and, in the namespaces of the class
/// around `at`, by their prefixed names.
fn classes(here: &Here<'_>, at: usize) -> Vec<CompletionItem> {
    let Some(ex) = here.ex else {
        return Vec::new();
    };
    let here_class = here.class_at(at);
    let mut names = BTreeSet::new();
    for p in ex.packages() {
        for name in p.decls.keys() {
            names.insert(name.clone());
            for (prefix, ns) in here_class.iter().flat_map(|c| c.namespaces.iter()) {
                if let Some(short) = name.strip_prefix(&format!("{ns}.")) {
                    if !short.contains('.') {
                        names.insert(if prefix == "=" {
                            short.to_string()
                        } else {
                            format!("{prefix}:{short}")
                        });
                    }
                }
            }
        }
    }
    names
        .into_iter()
        .map(|n| item(&n, CompletionItemKind::CLASS, String::new()))
        .collect()
}

/// The outline of the document: each class with its properties and
/// methods.
#[allow(deprecated)]
pub fn symbols(here: &Here<'_>) -> Vec<DocumentSymbol> {
    let t = here.text;
    let starts = text::line_starts(t);
    let classes = here.classes();
    let symbol =
        |name: &str, kind: SymbolKind, detail: Option<String>, start: usize, end: usize| {
            let range = text::range(t, &starts, start..end);
            let sel_end = text::line_end(t, start).max(start);
            DocumentSymbol {
                name: name.to_string(),
                detail,
                kind,
                tags: None,
                deprecated: None,
                range,
                selection_range: text::range(t, &starts, start..sel_end.min(end.max(start))),
                children: None,
            }
        };
    let mut out = Vec::new();
    for (k, c) in classes.iter().enumerate() {
        let start = c.pos.offset as usize;
        let end = classes
            .get(k + 1)
            .map_or(t.len(), |n| n.pos.offset as usize)
            .max(start);
        let mut children = Vec::new();
        for p in &c.properties {
            let s = p.pos.offset as usize;
            let e = text::line_end(t, s);
            let detail = Some(template_text(&p.contract));
            children.push(symbol(&p.name, SymbolKind::PROPERTY, detail, s, e));
        }
        for m in &c.methods {
            let s = m.pos.offset as usize;
            let e = text::line_end(t, s);
            children.push(symbol(&m.name, SymbolKind::METHOD, None, s, e));
        }
        let mut cls = symbol(&c.name, SymbolKind::CLASS, None, start, end);
        cls.selection_range = cls.range;
        cls.selection_range.end = text::position(t, &starts, text::line_end(t, start));
        if cls.selection_range.end.line > cls.range.end.line {
            cls.selection_range.end = cls.range.end;
        }
        cls.children = Some(children);
        out.push(cls);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contracts_are_found_on_their_line_and_under_it() {
        let t = "Properties:\n  a:\n    Contract: $.string()\n  b:\n    Contract:\n      x: $.int()\n    Usage: In\nMethods:\n  m:\n    Body:\n      - $.a\n";
        let at = |s: &str| t.find(s).unwrap() + s.len();
        assert!(in_contract(t, at("Contract: $.")));
        assert!(in_contract(t, at("x: $.")));
        assert!(!in_contract(t, at("Usage: ")));
        assert!(!in_contract(t, at("- $.")));
    }

    #[test]
    fn manifests_and_ui_files_complete_their_keys() {
        let m = std::path::Path::new("/p/manifest.yaml");
        assert!(file_keys(m, "Fu").unwrap().contains(&"FullName"));
        assert!(file_keys(m, "  Fu").is_none());
        let ui = std::path::Path::new("/p/UI/ui.yaml");
        assert!(file_keys(ui, "").unwrap().contains(&"Forms"));
        assert!(file_keys(std::path::Path::new("/p/Classes/C.yaml"), "").is_none());
    }
}

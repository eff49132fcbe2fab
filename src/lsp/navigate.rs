//! What is under the cursor in a class file (a class name, a property or
//! method of the current class, a method call, a YAQL function, a
//! variable, a keyword), and hover and go-to-definition from it.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use compiler::murano::{ClassDecl, MethodUsage, Pos, Template, TemplateKind};
use engine::Executor;

use super::docs;
use super::text;

/// What a name in a class file stands for.
pub enum Target {
    /// A class.
    Class(Arc<ClassDecl>),
    /// A property (its class, its index there).
    Property(Arc<ClassDecl>, usize),
    /// Methods of that name (each class declaring one, its index there).
    Method(Vec<(Arc<ClassDecl>, usize)>),
    /// A YAQL (or MuranoPL engine) function.
    Function(String),
    /// A `$variable` of the method around the cursor.
    Variable(String),
    /// A block keyword or declaration key.
    Keyword(&'static str),
}

/// The document being looked at.
pub struct Here<'a> {
    /// Its text.
    pub text: &'a str,
    /// Its path.
    pub file: &'a Path,
    /// The executor of its package's last check.
    pub ex: Option<&'a Arc<Executor>>,
}

impl Here<'_> {
    /// The declarations of this file, in the order of their positions: of
    /// the package checked, or of a package it requires (a file of a
    /// library looked at from a package using it).
    pub fn classes(&self) -> Vec<Arc<ClassDecl>> {
        let Some(ex) = self.ex else {
            return Vec::new();
        };
        let file = self.file.display().to_string();
        let mut out: Vec<Arc<ClassDecl>> = (ex.packages().iter())
            .find(|p| p.decls.values().any(|d| *d.pos.file == *file))
            .into_iter()
            .flat_map(|p| p.decls.values())
            .filter(|d| *d.pos.file == *file)
            .cloned()
            .collect();
        out.sort_by_key(|d| d.pos.offset);
        out
    }

    /// The class declared around byte `at`.
    pub fn class_at(&self, at: usize) -> Option<Arc<ClassDecl>> {
        let classes = self.classes();
        let before = classes.iter().rev().find(|d| d.pos.offset as usize <= at);
        before.or(classes.first()).cloned()
    }

    /// The registry the package's expressions are compiled with.
    pub fn registry(&self) -> Arc<runtime::registry::Registry> {
        match self.ex {
            Some(ex) => ex.catalog().registry(false),
            None => Arc::new(stdlib::registry(false)),
        }
    }

    /// The declaration of class `name` (the first package declaring it).
    pub fn decl(&self, name: &str) -> Option<Arc<ClassDecl>> {
        let ex = self.ex?;
        (ex.packages().iter()).find_map(|p| p.decls.get(name).cloned())
    }

    /// Class `name` and its ancestors, in method resolution order.
    pub fn mro(&self, name: &str) -> Vec<Arc<ClassDecl>> {
        match self.ex.map(|ex| ex.class(name)) {
            Some(Ok(c)) => c.mro().map(|k| k.decl.clone()).collect(),
            _ => self.decl(name).into_iter().collect(),
        }
    }

    /// What the name at byte `at` stands for, and its span.
    pub fn target(&self, at: usize) -> Option<(Target, Range<usize>)> {
        let t = self.text;
        let (word, span) = text::word_at(t, at)?;
        let before = &t[..span.start];
        let after = &t[span.end..];
        let call = after.starts_with('(');
        let here = self.class_at(at);
        if before.ends_with('$') {
            return Some((Target::Variable(word.to_string()), span));
        }
        // murano's lookup of `$x.name()`: a method of `$x`'s class, else an
        // extension method of the current class or of those it imports.
        let extension = || here.as_ref().and_then(|c| self.extension(c, word));
        if before.ends_with("$.") || before.ends_with("$this.") {
            if let Some(c) = &here {
                let own = self.member(&c.name, word, call);
                if let Some(t) = own.or_else(|| extension().filter(|_| call)) {
                    return Some((t, span));
                }
            }
        }
        if call && before.ends_with('.') {
            // `$x`'s class is not known here: an extension method in
            // scope, else the current class's method, else any class's.
            let own = || here.as_ref().and_then(|c| self.member(&c.name, word, true));
            if let Some(t) = extension().or_else(own).or_else(|| self.any_method(word)) {
                return Some((t, span));
            }
        }
        if !call {
            if let Some(t) = self.class_named_at(at, here.as_deref()) {
                return Some(t);
            }
        }
        if after.starts_with(':') {
            if let Some(k) = docs::KEYWORDS.iter().find(|(k, _)| *k == word) {
                return Some((Target::Keyword(k.0), span));
            }
        }
        if let Some(c) = &here {
            if let Some(t) = self.declared_at(c, span.start) {
                return Some((t, span));
            }
        }
        let registry = self.registry();
        if registry.get(word).is_some() || docs::function_doc(word).is_some() {
            return Some((Target::Function(word.to_string()), span));
        }
        None
    }

    /// Property or method `name` of class `class` (through its parents).
    fn member(&self, class: &str, name: &str, call: bool) -> Option<Target> {
        let mro = self.mro(class);
        let methods: Vec<(Arc<ClassDecl>, usize)> = (mro.iter())
            .filter_map(|d| Some((d.clone(), d.methods.iter().position(|m| m.name == name)?)))
            .collect();
        let prop = (mro.iter())
            .find_map(|d| Some((d.clone(), d.properties.iter().position(|p| p.name == name)?)));
        match (call, prop) {
            (false, Some((d, i))) => Some(Target::Property(d, i)),
            _ if !methods.is_empty() => Some(Target::Method(methods)),
            (_, Some((d, i))) => Some(Target::Property(d, i)),
            _ => None,
        }
    }

    /// The extension methods (`Usage: Extension`) named `name` that code of
    /// class `from` calls as methods: its own, then those of the classes
    /// it imports, as the engine looks them up.
    fn extension(&self, from: &ClassDecl, name: &str) -> Option<Target> {
        let classes = std::iter::once(&from.name).chain(from.import.iter());
        let found: Vec<(Arc<ClassDecl>, usize)> = classes
            .filter_map(|c| self.decl(c))
            .filter_map(|d| {
                let i = (d.methods.iter())
                    .position(|m| m.name == name && m.usage == MethodUsage::Extension)?;
                Some((d, i))
            })
            .take(1)
            .collect();
        (!found.is_empty()).then_some(Target::Method(found))
    }

    /// Every class's method named `name`.
    fn any_method(&self, name: &str) -> Option<Target> {
        let ex = self.ex?;
        let mut found: Vec<(Arc<ClassDecl>, usize)> = (ex.packages().iter())
            .flat_map(|p| p.decls.values())
            .filter_map(|d| Some((d.clone(), d.methods.iter().position(|m| m.name == name)?)))
            .collect();
        found.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        (!found.is_empty()).then_some(Target::Method(found))
    }

    /// The class a type name at `at` names (`ns:Name`, a full name, or a
    /// name in the class's default namespace).
    fn class_named_at(
        &self,
        at: usize,
        here: Option<&ClassDecl>,
    ) -> Option<(Target, Range<usize>)> {
        let (name, span) = text::type_name_at(self.text, at)?;
        let class = |name: &str| {
            let full = here
                .and_then(|c| c.resolve_name(name).ok())
                .unwrap_or_else(|| name.to_string());
            self.decl(&full).or_else(|| self.decl(name))
        };
        if let Some(decl) = class(name) {
            return Some((Target::Class(decl), span));
        }
        // `ns:Name.method(...)`: the name ends at the `.` after `at`.
        let from = at.clamp(span.start, span.end);
        let end = from + self.text[from..span.end].find('.')?;
        let decl = class(&self.text[span.start..end])?;
        Some((Target::Class(decl), span.start..end))
    }

    /// The property or method of `class` whose name is declared at byte
    /// `at`, or the class itself when `at` is its `Name:`.
    fn declared_at(&self, class: &Arc<ClassDecl>, at: usize) -> Option<Target> {
        let at = at as u32;
        if let Some(i) = class.properties.iter().position(|p| p.pos.offset == at) {
            return Some(Target::Property(class.clone(), i));
        }
        if let Some(i) = class.methods.iter().position(|m| m.pos.offset == at) {
            return Some(Target::Method(vec![(class.clone(), i)]));
        }
        None
    }

    /// The method of the class around `at` whose body holds it.
    pub fn method_at(&self, at: usize) -> Option<(Arc<ClassDecl>, usize)> {
        let c = self.class_at(at)?;
        let i = (c.methods.iter().enumerate())
            .filter(|(_, m)| *m.pos.file == *self.file.display().to_string())
            .filter(|(_, m)| m.pos.offset as usize <= at)
            .max_by_key(|(_, m)| m.pos.offset)?
            .0;
        Some((c, i))
    }

    /// Where variable `$name` used at `at` is bound: an argument of the
    /// method, or the last assignment (`$name:`, `For: name`, `As: name`)
    /// before it in the method.
    pub fn binding(&self, name: &str, at: usize) -> Option<(Range<usize>, String)> {
        let (c, i) = self.method_at(at)?;
        let m = &c.methods[i];
        if let Some(a) = m.arguments.iter().find(|a| a.name == name) {
            let start = a.pos.offset as usize;
            return Some((
                start..start + name.len(),
                format!(
                    "argument `{name}` of method `{}`: `{}`",
                    m.name,
                    template_text(&a.contract)
                ),
            ));
        }
        let from = (m.pos.offset as usize).min(at);
        let body = &self.text[from..at];
        let patterns = [
            format!("${name}:"),
            format!("For: {name}\n"),
            format!("As: {name}\n"),
        ];
        let (rel, pat) = patterns
            .iter()
            .filter_map(|p| body.rfind(p.as_str()).map(|i| (i, p)))
            .max_by_key(|(i, _)| *i)?;
        let start = from + rel + pat.find(name).unwrap_or(0);
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line = self.text[line_start..text::line_end(self.text, start)].trim();
        let (l, _) = lint::diag::line_col(self.text, start);
        Some((
            start..start + name.len(),
            format!("`${name}`, bound at line {l}: `{line}`"),
        ))
    }

    /// Hover text (markdown) for the name at `at`, and its span.
    pub fn hover(&self, at: usize) -> Option<(String, Range<usize>)> {
        let (target, span) = self.target(at)?;
        let md = match target {
            Target::Class(d) => class_hover(&d),
            Target::Property(d, i) => property_hover(&d, i),
            Target::Method(ms) => {
                let parts: Vec<String> = ms.iter().map(|(d, i)| method_hover(d, *i)).collect();
                parts.join("\n\n---\n\n")
            }
            Target::Function(name) => docs::function_hover(&self.registry(), &name)?,
            Target::Variable(name) => match self.binding(&name, at) {
                Some((_, what)) => what,
                None if name == "this" => "`$this`: the object the method runs on".into(),
                None => format!("`${name}`: no binding before it in this method"),
            },
            Target::Keyword(k) => docs::keyword_doc(k)?.to_string(),
        };
        Some((md, span))
    }

    /// Where the name at `at` is declared: positions in files.
    pub fn definition(&self, at: usize) -> Vec<Pos> {
        let Some((target, _)) = self.target(at) else {
            return Vec::new();
        };
        match target {
            Target::Class(d) => vec![d.pos.clone()],
            Target::Property(d, i) => vec![d.properties[i].pos.clone()],
            Target::Method(ms) => ms.iter().map(|(d, i)| d.methods[*i].pos.clone()).collect(),
            Target::Variable(name) => self
                .binding(&name, at)
                .map(|(span, _)| {
                    let (line, col) = lint::diag::line_col(self.text, span.start);
                    vec![Pos {
                        file: self.file.display().to_string().into(),
                        line: line as u32,
                        col: col as u32,
                        offset: span.start as u32,
                    }]
                })
                .unwrap_or_default(),
            Target::Function(_) | Target::Keyword(_) => Vec::new(),
        }
    }
}

/// A template as its source shows it (an expression's text, a
/// constant's JSON, lists and dicts of those).
pub fn template_text(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Expr { src, .. } => src.to_string(),
        TemplateKind::Value(v) => runtime::json::to_tagged_string(v),
        TemplateKind::List(items) => {
            let items: Vec<String> = items.iter().map(template_text).collect();
            format!("[{}]", items.join(", "))
        }
        TemplateKind::Dict(kvs) => {
            let kvs: Vec<String> = kvs
                .iter()
                .map(|(k, v)| format!("{}: {}", template_text(k), template_text(v)))
                .collect();
            format!("{{{}}}", kvs.join(", "))
        }
    }
}

fn at_text(pos: &Pos) -> String {
    format!("{}:{}:{}", pos.file, pos.line, pos.col)
}

fn meta_text(meta: &[compiler::murano::MetaDecl]) -> String {
    if meta.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = meta.iter().map(|m| m.name.as_str()).collect();
    format!("\n\nMeta: {}", names.join(", "))
}

fn class_hover(d: &ClassDecl) -> String {
    let props: Vec<&str> = d.properties.iter().map(|p| p.name.as_str()).collect();
    let methods: Vec<&str> = d.methods.iter().map(|m| m.name.as_str()).collect();
    format!(
        "```\nclass {}\nextends {}\n```\nproperties: {}\n\nmethods: {}{}\n\ndeclared at {}",
        d.name,
        d.extends.join(", "),
        props.join(", "),
        methods.join(", "),
        meta_text(&d.meta),
        at_text(&d.pos)
    )
}

fn property_hover(d: &ClassDecl, i: usize) -> String {
    let p = &d.properties[i];
    let default = p
        .default
        .as_ref()
        .map(|t| format!("\n\nDefault: `{}`", template_text(t)))
        .unwrap_or_default();
    format!(
        "```yaql\n{}: {}\n```\nproperty of `{}`, Usage: {:?}{default}{}\n\ndeclared at {}",
        p.name,
        template_text(&p.contract),
        d.name,
        p.usage,
        meta_text(&p.meta),
        at_text(&p.pos)
    )
}

fn method_hover(d: &ClassDecl, i: usize) -> String {
    let m = &d.methods[i];
    let args: Vec<String> = m
        .arguments
        .iter()
        .map(|a| format!("{}: {}", a.name, template_text(&a.contract)))
        .collect();
    format!(
        "```yaql\n{}::{}({})\n```\nUsage: {:?}, Scope: {:?}{}\n\ndeclared at {}",
        d.name,
        m.name,
        args.join(", "),
        m.usage,
        m.scope,
        meta_text(&m.meta),
        at_text(&m.pos)
    )
}

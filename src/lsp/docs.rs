//! What hover and completion say about YAQL functions (their signatures
//! from the registry, their docs from the library's own doc comments,
//! collected by `build.rs`) and about MuranoPL's block keywords.

use runtime::registry::{Kind, Mode, Overload, Registry, Ty};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/yaql_docs.rs"));
}

/// The doc comments of YAQL name `name`, joined (several functions of
/// the library may share a name: `len` of strings and of collections).
pub fn function_doc(name: &str) -> Option<String> {
    let docs = generated::DOCS;
    let first = docs.partition_point(|(n, _)| *n < name);
    let found: Vec<&str> = docs[first..]
        .iter()
        .take_while(|(n, _)| *n == name)
        .map(|(_, d)| *d)
        .collect();
    (!found.is_empty()).then(|| found.join("\n\n---\n\n"))
}

/// True for names users call (not operators or internal functions).
pub fn callable(name: &str) -> bool {
    !name.starts_with('#') && !name.starts_with('*') && !name.is_empty()
}

fn ty_name(t: &Ty) -> String {
    match t {
        Ty::Any => "any".into(),
        Ty::Null => "null".into(),
        Ty::Int | Ty::IntStrict => "int".into(),
        Ty::Number => "number".into(),
        Ty::NumberOrBool => "number|bool".into(),
        Ty::Str => "string".into(),
        Ty::Bool => "bool".into(),
        Ty::Iterable => "iterable".into(),
        Ty::Sequence => "list".into(),
        Ty::Mapping => "dict".into(),
        Ty::Set => "set".into(),
        Ty::Collection => "collection".into(),
        Ty::DateTime => "datetime".into(),
        Ty::TimeSpan => "timespan".into(),
        Ty::Callable => "lambda".into(),
        Ty::Context => "context".into(),
        Ty::Pair => "mapping rule".into(),
        Ty::OneOf(ts) => ts.iter().map(ty_name).collect::<Vec<_>>().join("|"),
        Ty::Check(_) => "value".into(),
    }
}

/// One overload as a call: `receiver.name(a: string, b: int = 0)`.
pub fn signature(o: &Overload) -> String {
    let param = |p: &runtime::registry::Param| {
        let mut s = match p.mode {
            Mode::Var => format!("*{}", p.name),
            Mode::Kw => format!("**{}", p.name),
            Mode::Normal => p.name.to_string(),
        };
        s.push_str(": ");
        if p.lazy {
            s.push_str("lazy ");
        }
        s.push_str(&ty_name(&p.ty));
        if p.nullable {
            s.push('?');
        }
        if let Some(d) = &p.default {
            s.push_str(" = ");
            s.push_str(&runtime::json::to_tagged_string(d));
        }
        s
    };
    let params: Vec<String> = o.params.iter().map(param).collect();
    match o.kind {
        Kind::Method if !params.is_empty() => {
            format!("{}.{}({})", params[0], o.name, params[1..].join(", "))
        }
        Kind::Extension if !params.is_empty() => format!(
            "{}({})  # also {}.{}(...)",
            o.name,
            params.join(", "),
            params[0],
            o.name
        ),
        _ => format!("{}({})", o.name, params.join(", ")),
    }
}

/// The signatures of every overload of `name`, one a line.
pub fn signatures(registry: &Registry, name: &str) -> Vec<String> {
    let mut out: Vec<String> = registry
        .get(name)
        .map(|set| set.overloads.iter().map(|o| signature(o)).collect())
        .unwrap_or_default();
    out.dedup();
    out
}

/// Hover text (markdown) of YAQL function `name`, when it is one.
pub fn function_hover(registry: &Registry, name: &str) -> Option<String> {
    let sigs = signatures(registry, name);
    let doc = function_doc(name);
    if sigs.is_empty() && doc.is_none() {
        return None;
    }
    let mut s = String::new();
    if !sigs.is_empty() {
        s.push_str("```yaql\n");
        s.push_str(&sigs.join("\n"));
        s.push_str("\n```\n");
    }
    if let Some(d) = doc {
        s.push('\n');
        s.push_str(&d);
    }
    Some(s)
}

/// MuranoPL's block keywords and what each does.
pub const KEYWORDS: &[(&str, &str)] = &[
    ("If", "`If: COND` `Then: [...]` `Else: [...]`: runs Then when COND is true, else Else."),
    ("While", "`While: COND` `Do: [...]`: repeats Do while COND is true."),
    ("For", "`For: VAR` `In: COLLECTION` `Do: [...]`: runs Do once per element, `$VAR` bound to it."),
    ("Repeat", "`Repeat: N` `Do: [...]`: runs Do N times."),
    ("Match", "`Match: {VALUE: [...], ...}` `Value: EXPR` `Default: [...]`: runs the branch whose key equals EXPR."),
    ("Switch", "`Switch: {COND: [...], ...}` `Default: [...]`: runs the branch of the first true condition."),
    ("Parallel", "`Parallel: [...]` `Limit: N`: runs each statement in a green thread of its own, at most N at once."),
    ("Try", "`Try: [...]` `Catch: [{With: TYPE, As: VAR, Do: [...]}]` `Else: [...]` `Finally: [...]`: exceptions."),
    ("Throw", "`Throw: NAME` `Message: TEXT` `Extra: {...}` `Cause: $e`: raises a MuranoPL exception."),
    ("Rethrow", "`Rethrow:`: raises again the exception a `Catch` caught."),
    ("Return", "`Return: VALUE`: leaves the method with VALUE."),
    ("Break", "`Break:`: leaves the innermost loop."),
    ("Continue", "`Continue:`: starts the next iteration of the innermost loop."),
    ("Do", "`Do: [...]`: the statements of a loop, `Catch` clause or block."),
    ("Then", "`Then: [...]`: the statements `If` runs when its condition is true."),
    ("Else", "`Else: [...]`: what `If` runs otherwise, or what `Try` runs when nothing was thrown."),
    ("Catch", "`Catch: [{With: TYPE, As: VAR, Do: [...]}]`: handlers of `Try`."),
    ("Finally", "`Finally: [...]`: what `Try` always runs last."),
    ("With", "`With: TYPE`: the exception type a `Catch` clause handles."),
    ("As", "`As: VAR`: the variable a `Catch` clause binds the exception to."),
    ("Limit", "`Limit: N`: how many branches of `Parallel` run at once."),
    ("Contract", "`Contract: EXPR`: what values a property or argument takes ($.string(), $.int(), $.class(T), ...)."),
    ("Usage", "`Usage:` of a property (In, Out, InOut, Const, Runtime, Static, Config), method (Runtime, Static, Extension, Action) or argument (Standard, VarArgs, KwArgs)."),
    ("Default", "`Default: VALUE`: the value of a property or argument that is not given."),
    ("Body", "`Body: [...]`: the statements of a method."),
    ("Arguments", "`Arguments: [{name: {Contract: ...}}]`: the method's parameters, in order."),
    ("Scope", "`Scope: Session|Public`: who may call the method (Public: API actions)."),
    ("Extends", "`Extends: TYPE` or a list: the parent classes."),
    ("Namespaces", "`Namespaces: {=: default.ns, prefix: some.ns}`: the prefixes type names use."),
    ("Properties", "`Properties:`: the class's properties, each with Contract, Usage, Default, Meta."),
    ("Methods", "`Methods:`: the class's methods, each with Arguments, Body, Usage, Scope, Meta."),
    ("Meta", "`Meta:`: meta-class instances attached to the class, property, method or argument."),
    ("Import", "`Import:`: classes whose methods and static properties this class uses unqualified."),
];

/// The doc of keyword `k`.
pub fn keyword_doc(k: &str) -> Option<&'static str> {
    KEYWORDS.iter().find(|(n, _)| *n == k).map(|(_, d)| *d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_documents_its_functions() {
        let doc = function_doc("toUpper").expect("toUpper is documented");
        assert!(doc.contains("'abc'.toUpper()"), "{doc}");
        assert!(function_doc("where").is_some());
        assert!(function_doc("no_such_function").is_none());
        let r = stdlib::registry(false);
        let sigs = signatures(&r, "toUpper");
        assert_eq!(sigs, ["string: string.toUpper()"]);
    }
}

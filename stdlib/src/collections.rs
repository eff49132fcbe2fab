//! `yaql/standard_library/collections.py`: lists, dicts and sets —
//! construction (`list`, `set`, `dict`, `#list`, `#map`, `toList`, `toSet`,
//! `toDict`), access (`#indexer`, `x.key`, `get`, `keys`, `values`,
//! `items`, `len`, `contains*`, `in`), operators (`+`, `-`, `*`, set
//! comparisons) and the copy-on-write editors (`set`, `delete`, `insert`,
//! `replace`, set algebra, `flatten`).
//!
//! Functions the reference writes as Python generators return lazy
//! sequences here (`Value::iter`), so they are one-shot and are rejected by
//! `sequence` parameters (`[1, 2].delete(0)[0]` has no matching `#indexer`),
//! exactly as in yaql.

use runtime::registry::Registry;

mod access;
mod common;
mod construction;
mod editors;
mod operators;
mod sets;

// ---------------------------------------------------------------------------

/// Registers the group.
pub fn register(r: &mut Registry) {
    construction::register(r);
    access::register(r);
    operators::register(r);
    sets::register(r);
    editors::register(r);
}

#[cfg(test)]
mod tests {
    use runtime::{json, Options, Value};

    fn eval(expr: &str, data: &str) -> Result<String, String> {
        let reg = crate::registry(false);
        let prog = compiler::compile(expr, &reg, Default::default()).map_err(|e| e.to_string())?;
        let env = crate::env(Options {
            limit_iterators: Some(100),
            ..Options::default()
        });
        let data = if data.is_empty() {
            Value::Null
        } else {
            json::from_tagged_str(data).unwrap()
        };
        let v = prog
            .eval(&env, data)
            .and_then(|v| crate::finalize(&env, v))
            .map_err(|e| e.kind().to_string())?;
        Ok(json::to_tagged_string(&v))
    }

    fn ok(expr: &str, data: &str) -> String {
        eval(expr, data).unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn constructors() {
        assert_eq!(ok("list(1, 2, list(3, 4))", ""), "[1, 2, [3, 4]]");
        assert_eq!(
            ok("list(1, {a => 2, b => 3}.values(), 4)", ""),
            "[1, 2, 3, 4]"
        );
        assert_eq!(
            ok("dict(list(list(a, 1), list('b', 2)))", ""),
            r#"{"a": 1, "b": 2}"#
        );
        assert_eq!(
            ok("$.toDict($, $*$)", "[1, 2]"),
            r#"{"$dict": [[1, 1], [2, 4]]}"#
        );
        assert_eq!(ok("len(set(1, 2, 2, 1.0))", ""), "2");
        assert_eq!(eval("{1}", "").unwrap_err(), "NoMatchingFunctionException");
    }

    #[test]
    fn indexing_and_access() {
        assert_eq!(ok("$[-1]", "[1, 2, 3]"), "3");
        assert_eq!(eval("$[3]", "[1, 2, 3]").unwrap_err(), "IndexError");
        assert_eq!(
            eval("$[a]", "[1, 2, 3]").unwrap_err(),
            "NoMatchingFunctionException"
        );
        assert_eq!(ok("$[c, 55]", r#"{"a": 1}"#), "55");
        assert_eq!(eval("$.b", r#"{"a": 1}"#).unwrap_err(), "KeyError");
        assert_eq!(
            eval("[1, 2].delete(0)[0]", "").unwrap_err(),
            "NoMatchingFunctionException"
        );
    }

    #[test]
    fn editors() {
        assert_eq!(ok("[1, 2].insert(-1, a)", ""), r#"[1, "a", 2]"#);
        assert_eq!(ok("{x => 1, y => 2}.values().insert(-1, a)", ""), "[1, 2]");
        assert_eq!(
            ok("[1, 2].insertMany(-1, [a, b])", ""),
            r#"["a", "b", 1, 2]"#
        );
        assert_eq!(
            ok("[1, 2, 3, 4].replaceMany(1, [7, 8], -1)", ""),
            "[1, 7, 8]"
        );
        assert_eq!(ok("[1, 2, 3, 4].delete(1, -1)", ""), "[1]");
        assert_eq!(
            ok("$.set('a' => 55, 'd x' => 99)", r#"{"a": 12, "b": 1}"#),
            r#"{"a": 55, "b": 1, "d x": 99}"#
        );
        assert_eq!(
            ok("$.delete(a)", r#"{"a": 1, "b": 2, "c": 3}"#),
            r#"{"b": 2, "c": 3}"#
        );
        assert_eq!(
            ok("[1, [2, [3, set(4)]], 'ab'].flatten()", ""),
            r#"[1, 2, 3, 4, "ab"]"#
        );
    }

    #[test]
    fn operators() {
        assert_eq!(ok("[1, 2] * 2", ""), "[1, 2, 1, 2]");
        assert_eq!(ok("{a => 1, b => 2} + {b => 3}", ""), r#"{"a": 1, "b": 3}"#);
        assert_eq!(ok("set(1, 2) < set(1, 2, 3)", ""), "true");
        assert_eq!(ok("set(1, 2) <= set(1, 3)", ""), "false");
        assert_eq!(ok("isSet(set(1, 2) - set(2))", ""), "true");
        assert_eq!(ok("[1, 2] in set([1, 2], 5)", ""), "true");
        assert_eq!(
            eval("a in $", r#"{"a": 1}"#).unwrap_err(),
            "NoMatchingFunctionException"
        );
    }
}

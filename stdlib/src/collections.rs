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

use runtime::registry::{lazy, p, var, Registry, Ty};

mod access;
mod common;
mod construction;
mod editors;
mod operators;
mod sets;

use access::*;
use common::{not_pair, not_set_iterable};
use construction::*;
use editors::*;
use operators::*;
use sets::*;

// ---------------------------------------------------------------------------

/// Registers the group.
pub fn register(r: &mut Registry) {
    let any = || Ty::Any;
    // construction
    r.function("list", vec![var("args", any()).nullable()], list_);
    r.function("#list", vec![var("args", any()).nullable()], build_list);
    r.function("dict", vec![var("args", Ty::Pair)], dict_)
        .no_kw();
    r.function("dict", vec![p("items", Ty::Iterable)], dict_items_ctor)
        .no_kw();
    r.function("#map", vec![var("args", Ty::Pair)], dict_)
        .no_kw();
    r.method("toList", vec![p("collection", Ty::Iterable)], to_list);
    r.method("toSet", vec![p("collection", Ty::Iterable)], to_set);
    r.method(
        "toDict",
        vec![
            p("collection", Ty::Iterable),
            lazy("keySelector"),
            lazy("valueSelector"),
        ],
        to_dict2,
    );
    r.method(
        "toDict",
        vec![p("collection", Ty::Iterable), lazy("keySelector")],
        to_dict1,
    );
    r.function("set", vec![var("args", any()).nullable()], set_);

    // access
    r.function(
        "#attr",
        vec![p("dict", Ty::Mapping), p("key", Ty::Str)],
        dict_keyword_access,
    );
    r.function(
        "#indexer",
        vec![p("dict", Ty::Mapping), p("key", any()).nullable()],
        dict_indexer,
    );
    r.function(
        "#indexer",
        vec![
            p("dict", Ty::Mapping),
            p("key", any()).nullable(),
            p("default", any()).nullable(),
        ],
        dict_get,
    );
    r.function(
        "#indexer",
        vec![p("list", Ty::Sequence), p("index", Ty::Int)],
        list_indexer,
    );
    r.method(
        "get",
        vec![
            p("dict", Ty::Mapping),
            p("key", any()).nullable(),
            p("default", any()).opt(),
        ],
        dict_get,
    );
    r.method("keys", vec![p("dict", Ty::Mapping)], dict_keys);
    r.method("values", vec![p("dict", Ty::Mapping)], dict_values);
    r.method("items", vec![p("dict", Ty::Mapping)], dict_items);
    r.function(
        "#operator_in",
        vec![p("value", any()).nullable(), p("collection", Ty::Iterable)],
        in_,
    );
    r.method(
        "contains",
        vec![p("collection", Ty::Iterable), p("value", any()).nullable()],
        contains,
    );
    r.method(
        "containsKey",
        vec![p("dict", Ty::Mapping), p("key", any()).nullable()],
        contains_key,
    );
    r.method(
        "containsValue",
        vec![p("dict", Ty::Mapping), p("value", any()).nullable()],
        contains_value,
    );
    r.extension("len", vec![p("dict", Ty::Mapping)], len_);
    r.extension("len", vec![p("sequence", Ty::Sequence)], len_);
    r.extension("len", vec![p("set", Ty::Set)], len_);
    r.function("isList", vec![p("arg", any()).nullable()], is_list);
    r.function("isDict", vec![p("arg", any()).nullable()], is_dict);
    r.function("isSet", vec![p("arg", any()).nullable()], is_set);

    // operators
    r.function(
        "#operator_+",
        vec![p("left", Ty::Mapping), p("right", Ty::Mapping)],
        combine_dicts,
    );
    r.function(
        "#operator_+",
        vec![p("left", Ty::Iterable), p("right", Ty::Iterable)],
        combine_lists,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Sequence), p("right", Ty::Int)],
        list_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), p("right", Ty::Sequence)],
        int_by_list,
    );
    r.function(
        "#operator_-",
        vec![p("left", Ty::Set), p("right", Ty::Set)],
        difference,
    );
    let sets = || vec![p("left", Ty::Set), p("right", Ty::Set)];
    r.function("#operator_<", sets(), set_lt);
    r.function("#operator_<=", sets(), set_lte);
    r.function("#operator_>", sets(), set_gt);
    r.function("#operator_>=", sets(), set_gte);

    // set algebra
    r.method("union", sets(), union);
    r.method("intersect", sets(), intersect);
    r.method("difference", sets(), difference);
    r.method("symmetricDifference", sets(), symmetric_difference);
    r.method(
        "add",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_add,
    );
    r.method(
        "remove",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_remove,
    );

    // dict editors
    r.method(
        "set",
        vec![
            p("dict", Ty::Mapping),
            p("key", Ty::Check(not_pair)).nullable(),
            p("value", Ty::Check(not_pair)).nullable(),
        ],
        dict_set,
    )
    .no_kw();
    r.method(
        "set",
        vec![p("dict", Ty::Mapping), p("replacements", Ty::Mapping)],
        dict_set_many,
    )
    .no_kw();
    r.method(
        "set",
        vec![p("dict", Ty::Mapping), var("args", Ty::Pair)],
        dict_set_many_inline,
    )
    .no_kw();
    r.method(
        "delete",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("count", Ty::Int).default(1i64),
        ],
        delete,
    );
    r.method(
        "delete",
        vec![p("dict", Ty::Mapping), var("keys", any()).nullable()],
        delete_keys,
    );
    r.method(
        "deleteAll",
        vec![p("dict", Ty::Mapping), p("keys", Ty::Iterable)],
        delete_keys_seq,
    );

    // sequence editors
    r.method(
        "insert",
        vec![
            p("collection", Ty::Sequence),
            p("position", Ty::Int),
            p("value", any()).nullable(),
        ],
        list_insert,
    );
    r.method(
        "insert",
        vec![
            p("collection", Ty::Check(not_set_iterable)),
            p("position", Ty::Int),
            p("value", any()).nullable(),
        ],
        iter_insert,
    );
    r.method(
        "insertMany",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("values", Ty::Iterable),
        ],
        insert_many,
    );
    r.method(
        "replace",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("value", any()).nullable(),
            p("count", Ty::Int).default(1i64),
        ],
        replace,
    );
    r.method(
        "replaceMany",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("values", Ty::Iterable),
            p("count", Ty::Int).default(1i64),
        ],
        replace_many,
    );
    r.method("flatten", vec![p("collection", Ty::Iterable)], flatten);
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

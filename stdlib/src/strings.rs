//! `yaql/standard_library/strings.py`: string functions and operators with
//! Python `str` semantics on code points (`len`, `substring`, `indexOf`,
//! `split`, `trim`, `format`, ...).

use runtime::registry::{kw, p, var, Registry, Ty};
use runtime::Value;

// The functions, by concern, in files of their own.
mod basic;
mod edit;
mod format;
mod search;
mod text;

use basic::*;
use edit::*;
use format::*;
use search::*;
pub(crate) use text::{char_of, count_matches};

/// Registers the group.
pub fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
    let sn = |n: &str| p(n, Ty::Str).nullable().default(Value::Null);
    r.function("#operator_>", vec![s("left"), s("right")], gt)
        .pure_();
    r.function("#operator_<", vec![s("left"), s("right")], lt)
        .pure_();
    r.function("#operator_>=", vec![s("left"), s("right")], gte)
        .pure_();
    r.function("#operator_<=", vec![s("left"), s("right")], lte)
        .pure_();
    r.extension("len", vec![s("string")], len_).pure_();
    r.method("toLower", vec![s("string")], to_lower).pure_();
    r.method("toUpper", vec![s("string")], to_upper).pure_();
    r.method(
        "split",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        split,
    )
    .pure_();
    r.method(
        "rightSplit",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        right_split,
    )
    .pure_();
    r.method(
        "join",
        vec![p("sequence", Ty::Iterable), s("separator")],
        join,
    );
    r.method(
        "join",
        vec![s("separator"), p("sequence", Ty::Iterable)],
        join_,
    );
    r.function("str", vec![p("value", Ty::Any).nullable()], str_)
        .pure_();
    r.function("concat", vec![var("args", Ty::Str)], concat)
        .pure_();
    r.function("#operator_+", vec![var("args", Ty::Str)], concat)
        .pure_();
    r.method("trim", vec![s("string"), sn("chars")], trim)
        .pure_();
    r.method("trimLeft", vec![s("string"), sn("chars")], trim_left)
        .pure_();
    r.method("trimRight", vec![s("string"), sn("chars")], trim_right)
        .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            s("old"),
            s("new"),
            p("count", Ty::Int).default(-1i64),
        ],
        replace,
    )
    .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            p("replacements", Ty::Mapping),
            p("count", Ty::Int).default(-1i64),
        ],
        replace_with_dict,
    )
    .pure_();
    r.extension(
        "format",
        vec![
            s("formatString"),
            var("args", Ty::Any).nullable(),
            kw("kwargs", Ty::Any).nullable(),
        ],
        format_,
    )
    .pure_();
    r.extension(
        "isEmpty",
        vec![
            p("string", Ty::Str).nullable(),
            p("trim", Ty::Bool).default(true),
            sn("chars"),
        ],
        is_empty,
    )
    .pure_();
    r.function(
        "#operator_*",
        vec![s("left"), p("right", Ty::Int)],
        string_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), s("right")],
        int_by_string,
    );
    r.method(
        "substring",
        vec![
            s("string"),
            p("start", Ty::Int),
            p("length", Ty::Int).default(-1i64),
        ],
        substring,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        index_of,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        index_of_,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        last_index_of,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        last_index_of_,
    )
    .pure_();
    r.method("toCharArray", vec![s("string")], to_char_array)
        .pure_();
    let flag = |n: &str| p(n, Ty::Bool).nullable().default(false);
    r.function(
        "characters",
        vec![
            flag("digits"),
            flag("hexdigits"),
            flag("asciiLowercase"),
            flag("asciiUppercase"),
            flag("asciiLetters"),
            flag("letters"),
            flag("octdigits"),
            flag("punctuation"),
            flag("printable"),
            flag("lowercase"),
            flag("uppercase"),
            flag("whitespace"),
        ],
        characters,
    )
    .pure_();
    r.function("isString", vec![p("arg", Ty::Any).nullable()], is_string)
        .pure_();
    r.extension(
        "norm",
        vec![p("string", Ty::Str).nullable(), sn("chars")],
        norm,
    )
    .pure_();
    r.function("#operator_in", vec![s("left"), s("right")], in_)
        .pure_();
    r.method(
        "startsWith",
        vec![s("string"), var("prefixes", Ty::Str)],
        starts_with,
    )
    .pure_();
    r.method(
        "endsWith",
        vec![s("string"), var("suffixes", Ty::Str)],
        ends_with,
    )
    .pure_();
    r.function("hex", vec![p("num", Ty::Number).nullable()], hex_)
        .pure_();
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn eval(expr: &str, data: Value) -> Result<Value, String> {
        let env = crate::env(runtime::Options::test_suite(false));
        let prog = compiler::compile(expr, &crate::registry(false), Default::default())
            .map_err(|e| format!("{e:?}"))?;
        let v = prog.eval(&env, data).map_err(|e| e.kind().to_string())?;
        crate::finalize(&env, v).map_err(|e| e.kind().to_string())
    }

    fn ok(expr: &str) -> String {
        runtime::json::to_tagged_string(&eval(expr, Value::Null).unwrap())
    }

    #[test]
    fn basics() {
        assert_eq!(ok("'straße'.toUpper()"), "\"STRASSE\"");
        assert_eq!(ok("'aбв'.len()"), "3");
        assert_eq!(ok("'abcdef'.substring(-3, 2)"), "\"de\"");
        assert_eq!(ok("'abcdefedcba'.indexOf(dcb, -4, 100)"), "7");
        assert_eq!(
            ok("'  a b  c '.split(maxSplits => 1)"),
            "[\"a\", \"b  c \"]"
        );
        assert_eq!(ok("'a,b,c'.rightSplit(',', 1)"), "[\"a,b\", \"c\"]");
        assert_eq!(ok("'xxhixx'.trim('x')"), "\"hi\"");
        assert_eq!(
            ok("str([1, 'a', true, null, 2.0])"),
            "\"(1, 'a', True, None, 2.0)\""
        );
        assert_eq!(ok("'ab' * 3"), "\"ababab\"");
        assert_eq!(ok("hex(-42)"), "\"-0x2a\"");
        assert_eq!(ok("[1, null, true].join('-')"), "\"1-null-true\"");
    }

    #[test]
    fn format() {
        assert_eq!(ok("'abc{0}ab{1}abc'.format(' ', ',')"), "\"abc ab,abc\"");
        assert_eq!(ok("format('{x}-{}', 1, x => 2)"), "\"2-1\"");
        assert_eq!(
            ok("'{0:>5}|{1:.2f}|{2:05d}'.format(ab, 3.14159, 42)"),
            "\"   ab|3.14|00042\""
        );
        assert_eq!(ok("'{!r}'.format(a)"), "\"'a'\"");
    }

    #[test]
    fn errors() {
        assert_eq!(
            eval("'a' + 1", Value::Null).unwrap_err(),
            "NoMatchingFunctionException"
        );
        assert_eq!(
            eval("'a'.split('')", Value::Null).unwrap_err(),
            "ValueError"
        );
        assert_eq!(eval("hex(1.5)", Value::Null).unwrap_err(), "TypeError");
    }
}

#[cfg(test)]
mod replace_tests {
    use super::text::{count_matches, py_replace};

    /// The search-based replace and count agree with std's (the oracle)
    /// for one-byte, longer and non-ASCII patterns, every count.
    #[test]
    fn replace_and_count_agree_with_std() {
        let texts = [
            "",
            "a",
            "aaaa",
            "abcabcab",
            "héllo wörld héllo",
            "xaXaxAx",
            "ééé",
        ];
        let patterns = ["a", "ab", "aa", "é", "llo", "x", "zz"];
        for s in texts {
            for old in patterns {
                assert_eq!(count_matches(s, old), s.matches(old).count(), "{s} {old}");
                for new in ["", "Z", "ZZZ", "ü"] {
                    assert_eq!(
                        py_replace(s, old, new, -1),
                        s.replace(old, new),
                        "{s} {old} {new}"
                    );
                    for n in 0..4 {
                        assert_eq!(
                            py_replace(s, old, new, n),
                            s.replacen(old, new, n as usize),
                            "{s} {old} {new} {n}"
                        );
                    }
                }
            }
        }
    }
}

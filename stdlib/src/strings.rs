//! `yaql/standard_library/strings.py`: string functions and operators with
//! Python `str` semantics on code points (`len`, `substring`, `indexOf`,
//! `split`, `trim`, `format`, ...).

use runtime::registry::Registry;

// The functions, by concern, in files of their own.
mod basic;
mod edit;
mod format;
mod search;
mod text;

pub(crate) use text::{char_of, count_matches};

/// Registers the group.
pub fn register(r: &mut Registry) {
    basic::register(r);
    search::register(r);
    edit::register(r);
    format::register(r);
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

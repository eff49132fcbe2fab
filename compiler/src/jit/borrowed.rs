//! Values read in place, as compiled contract chains take them: a caller
//! that holds its data in another form (a Python dict, say) describes each
//! value as a [`Borrowed`] instead of building a [`runtime::Value`] for it
//! ([`super::Native::first_failing_borrowed`] runs a chain on them).
//!
//! A borrowed value has no engine value behind it, so whatever the code
//! would read through one (a field, a list's item, a `class()` link's
//! question to the engine) deopts: the answer is then "cannot show to
//! pass", never a wrong pass.

use super::abi::{tag, Scalar};

/// A value as a compiled chain reads it, described by its caller: the
/// same tags [`runtime::Value`]s have. The caller must describe a value
/// exactly as the engine's value of it would be (an integer that fits
/// `i64` is `Int`, one that does not is `BigInt`; a string is its UTF-8
/// text; a list or dict is its length).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Borrowed<'a> {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer that fits 64 bits.
    Int(i64),
    /// An integer that does not.
    BigInt,
    /// A float.
    Float(f64),
    /// A string.
    Str(&'a str),
    /// A list of this many items.
    List(usize),
    /// A dict of this many entries.
    Dict(usize),
    /// Anything else (the code deopts on it, or passes it only where any
    /// non-null value passes).
    Other,
}

impl Borrowed<'_> {
    /// The scalar the machine code reads: no engine value behind it
    /// (`val` null), which every helper refuses.
    pub(super) fn scalar(self) -> Scalar {
        let (tag, bits, ptr, len) = match self {
            Borrowed::Null => (tag::NULL, 0, std::ptr::null(), 0),
            Borrowed::Bool(b) => (tag::BOOL, b as u64, std::ptr::null(), 0),
            Borrowed::Int(i) => (tag::INT, i as u64, std::ptr::null(), 0),
            Borrowed::BigInt => (tag::BIGINT, 0, std::ptr::null(), 0),
            Borrowed::Float(f) => (tag::FLOAT, f.to_bits(), std::ptr::null(), 0),
            Borrowed::Str(s) => (tag::STR, 0, s.as_ptr(), s.len()),
            Borrowed::List(n) => (tag::LIST, 0, std::ptr::null(), n),
            Borrowed::Dict(n) => (tag::DICT, 0, std::ptr::null(), n),
            Borrowed::Other => (tag::OTHER, 0, std::ptr::null(), 0),
        };
        Scalar {
            tag,
            bits,
            ptr,
            len,
            val: std::ptr::null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Native;
    use super::*;
    use crate::murano::ir::LinkKind;
    use crate::{compile, CompileOptions};
    use runtime::registry::{p, var, Args, Cx, Ty};
    use runtime::{Registry, Value};

    fn stub(_: &Cx, _: Args) -> runtime::Result<Value> {
        Ok(Value::Null)
    }

    /// A chain `pre...check(pred)` compiled against the names the JIT
    /// knows (their bodies never run in compiled code).
    fn chain(pre: &[LinkKind], pred: &str) -> Native {
        let mut r = Registry::new();
        r.group("common");
        for name in ["isInteger", "isNumber", "isString", "isBoolean", "len"] {
            r.function(name, vec![p("value", Ty::Any).nullable()], stub);
        }
        r.function("list", vec![var("args", Ty::Any).nullable()], stub);
        let prog = compile(pred, &r, CompileOptions::default()).unwrap();
        let check = LinkKind::Check {
            predicate: *crate::yaql::parse("$", Default::default()).unwrap(),
            message: None,
            shape: crate::murano::ir::Predicate::Other,
        };
        let mut steps: Vec<super::super::Step<'_>> =
            pre.iter().map(super::super::Step::plain).collect();
        steps.push(super::super::Step {
            link: &check,
            predicate: Some(prog.ir()),
        });
        Native::compile(&steps).unwrap()
    }

    /// Each value as the engine holds it and as a caller describes it.
    fn pairs() -> Vec<(Value, Borrowed<'static>)> {
        vec![
            (Value::Null, Borrowed::Null),
            (Value::Bool(true), Borrowed::Bool(true)),
            (Value::Bool(false), Borrowed::Bool(false)),
            (Value::Int(0), Borrowed::Int(0)),
            (Value::Int(1), Borrowed::Int(1)),
            (Value::Int(80), Borrowed::Int(80)),
            (Value::Int(65536), Borrowed::Int(65536)),
            (Value::Int(-3), Borrowed::Int(-3)),
            (Value::Int(i64::MAX), Borrowed::Int(i64::MAX)),
            (
                runtime::json::from_tagged_str("36893488147419103228").unwrap(),
                Borrowed::BigInt,
            ),
            (Value::Float(80.0), Borrowed::Float(80.0)),
            (Value::Float(f64::NAN), Borrowed::Float(f64::NAN)),
            (Value::str("80"), Borrowed::Str("80")),
            (Value::str("TCP"), Borrowed::Str("TCP")),
            (Value::str("public"), Borrowed::Str("public")),
            (Value::str("publicx"), Borrowed::Str("publicx")),
            (Value::str(""), Borrowed::Str("")),
            (Value::str("é"), Borrowed::Str("é")),
            (Value::list(vec![Value::Int(1)]), Borrowed::List(1)),
            (Value::list(vec![]), Borrowed::List(0)),
            (Value::dict(Default::default()), Borrowed::Dict(0)),
        ]
    }

    #[test]
    fn borrowed_values_pass_exactly_as_the_engine_values_of_them() {
        let chains = [
            chain(&[LinkKind::NotNull], "isInteger($) and $ > 0 and $ < 65536"),
            chain(
                &[LinkKind::NotNull],
                "$ in list(public, cloud, host, internal)",
            ),
            chain(&[LinkKind::NotNull], "isString($)"),
            chain(&[], "isInteger($)"),
            chain(&[LinkKind::Int], "$ >= 0"),
            chain(&[LinkKind::String], "$ = TCP or $ = UDP"),
            chain(&[LinkKind::Bool], "$"),
            chain(&[LinkKind::NotNull], "isNumber($) and $ > 1.5"),
        ];
        let pairs = pairs();
        for (k, n) in chains.iter().enumerate() {
            let values: Vec<Value> = pairs.iter().map(|(v, _)| v.clone()).collect();
            let borrowed: Vec<Borrowed<'_>> = pairs.iter().map(|(_, b)| *b).collect();
            for (v, b) in &pairs {
                assert_eq!(n.passes(v), n.passes_borrowed(*b), "chain {k} on {v:?}");
            }
            assert_eq!(
                n.first_failing(&values),
                n.first_failing_borrowed(&borrowed),
                "chain {k}"
            );
        }
    }

    #[test]
    fn long_runs_go_in_batches_and_stop_at_the_first_failure() {
        let n = chain(&[LinkKind::NotNull], "isInteger($) and $ > 0 and $ < 65536");
        let mut items = vec![Borrowed::Int(8080); 40];
        assert_eq!(n.first_failing_borrowed(&items), 40);
        items[33] = Borrowed::Bool(true);
        assert_eq!(n.first_failing_borrowed(&items), 33);
        items[2] = Borrowed::Str("8080");
        assert_eq!(n.first_failing_borrowed(&items), 2);
        assert!(!n.passes_borrowed(Borrowed::Other));
        assert!(!n.passes_borrowed(Borrowed::Null));
    }
}

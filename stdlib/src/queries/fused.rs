//! Query fusion: a chain of `where` and `select` over one collection runs
//! as one loop over it, and so do the aggregates that consume the chain
//! (`sum`, `len`, `count`, `any`, `all`, `first`, `min`, `max`,
//! `aggregate`).
//!
//! `where` and `select` return a lazy sequence that carries its parts (the
//! source's iterator and the stages, [`Query`]) until it is first pulled.
//! A later `where`/`select`, or an aggregate, that is given such a
//! sequence and holds the only reference to it takes the parts instead of
//! pulling the sequence element by element: the stages' lambdas then run
//! one after the other on each source element, with no sequence, lock or
//! iterator call between them. Nothing else can observe a sequence whose
//! only reference is the argument being consumed, so the elements, the
//! order in which lambdas run, the errors (a sequence stops after its
//! first, as a Python generator does) and the iterator limit (counted on
//! the source, the first stage's count, which is never below a later
//! stage's) are exactly those of the stage-by-stage chain. A sequence held
//! anywhere else (a variable, a list) is pulled as before.

use std::sync::{Arc, Mutex};

use runtime::registry::Cx;
use runtime::seq::SeqIter;
use runtime::value::LazySeq;
use runtime::{Env, Result, Value};

/// Calls a lambda value (a non-lambda is returned as is).
pub(super) fn call(env: &Env, f: &Value, args: &[Value]) -> Result<Value> {
    match f {
        Value::Lambda(c) => c.call(env, args),
        other => Ok(other.clone()),
    }
}

/// What a stage does with an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `where(f)`: keeps the elements `f` is true of.
    Where,
    /// `select(f)`: maps each element with `f`.
    Select,
}

/// One `where`/`select` of a chain: the environment it was called in and
/// its lambda.
struct Stage {
    kind: Kind,
    env: Env,
    f: Value,
}

/// A chain of stages over a source, not yet pulled.
pub(super) struct Query {
    source: SeqIter,
    stages: Vec<Stage>,
}

/// The parts a query's sequence carries until it is first pulled, or
/// until a later stage or an aggregate takes them.
struct Parts(Mutex<Option<Query>>);

impl Parts {
    fn take(&self) -> Option<Query> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The query `v` is, when `v` is a query's sequence that nobody but the
/// caller holds and nothing has pulled.
fn take(v: &Value) -> Option<Query> {
    let Value::Iter(seq) = v else {
        return None;
    };
    if Arc::strong_count(seq) != 1 {
        return None;
    }
    seq.ext::<Parts>()?.take()
}

/// `source.where(f)` or `source.select(f)`: a stage added to the query
/// `source` is, or a new query over `source` (iterated with the limit now,
/// as the stage alone would).
pub(super) fn stage(cx: &Cx, source: &Value, kind: Kind, f: &Value) -> Result<Value> {
    let mut q = match take(source) {
        Some(q) => q,
        None => Query {
            source: cx.iter(source)?,
            stages: Vec::new(),
        },
    };
    q.stages.push(Stage {
        kind,
        env: cx.env.clone(),
        f: f.clone(),
    });
    let parts = Arc::new(Parts(Mutex::new(Some(q))));
    let mine = parts.clone();
    let mut run: Option<Fused> = None;
    let it = std::iter::from_fn(move || {
        // The first pull takes the parts (unless a consumer took them).
        let run = run.get_or_insert_with(|| Fused::of(mine.take()));
        run.next()
    });
    Ok(Value::Iter(LazySeq::with_ext(Box::new(it), parts)))
}

/// The elements of a collection as an aggregate reads them: a query it
/// alone holds runs fused ([`Fused`]), anything else is iterated with the
/// limit ([`Cx::iter`]).
pub(super) enum Items {
    Seq(SeqIter),
    Fused(Fused),
}

/// Iterates `v` for an aggregate that consumes it (see [`Items`]).
pub(super) fn items(cx: &Cx, v: &Value) -> Result<Items> {
    Ok(match take(v) {
        Some(q) => Items::Fused(Fused::of(Some(q))),
        None => Items::Seq(cx.iter(v)?),
    })
}

impl Iterator for Items {
    type Item = Result<Value>;
    fn next(&mut self) -> Option<Result<Value>> {
        match self {
            Items::Seq(s) => s.next(),
            Items::Fused(f) => f.next(),
        }
    }
}

/// A query running: each source element through every stage in turn.
/// It stops after the first error.
pub(super) struct Fused {
    query: Option<Query>,
}

impl Fused {
    fn of(query: Option<Query>) -> Fused {
        Fused { query }
    }

    /// The next element the stages let through, its error, or the end.
    fn pull(q: &mut Query) -> Option<Result<Value>> {
        'items: loop {
            let mut v = match q.source.next()? {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            for s in &q.stages {
                match s.kind {
                    Kind::Where => match call(&s.env, &s.f, std::slice::from_ref(&v)) {
                        Ok(keep) if keep.truthy() => {}
                        Ok(_) => continue 'items,
                        Err(e) => return Some(Err(e)),
                    },
                    Kind::Select => match call(&s.env, &s.f, &[v]) {
                        Ok(mapped) => v = mapped,
                        Err(e) => return Some(Err(e)),
                    },
                }
            }
            return Some(Ok(v));
        }
    }
}

impl Iterator for Fused {
    type Item = Result<Value>;
    fn next(&mut self) -> Option<Result<Value>> {
        let r = Fused::pull(self.query.as_mut()?);
        if !matches!(r, Some(Ok(_))) {
            self.query = None;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{eval, ok};
    use super::*;
    use runtime::{Frame, Options};

    #[test]
    fn only_a_query_held_by_its_consumer_alone_is_taken() {
        let env = crate::env(Options::test_suite(false));
        let ctx = Frame::root(Value::Null);
        let cx = Cx::new(&env, &ctx);
        let list = Value::list(vec![Value::Int(1), Value::Int(2)]);
        let q = stage(&cx, &list, Kind::Select, &Value::Int(7)).unwrap();
        let held = q.clone();
        assert!(take(&q).is_none(), "a second reference keeps it a sequence");
        drop(held);
        assert!(take(&q).is_some());
        // Taken once: the parts are gone, and the sequence is empty.
        assert!(take(&q).is_none());
        let Value::Iter(seq) = &q else { unreachable!() };
        assert!(seq.next().is_none());
        // Pulled once: no longer a query.
        let q = stage(&cx, &list, Kind::Where, &Value::Bool(true)).unwrap();
        let Value::Iter(seq) = &q else { unreachable!() };
        assert_eq!(seq.next().unwrap().unwrap(), Value::Int(1));
        assert!(take(&q).is_none());
        assert_eq!(seq.next().unwrap().unwrap(), Value::Int(2));
        // Not iterable: the error is the stage's, at once.
        let e = stage(&cx, &Value::Int(3), Kind::Where, &Value::Bool(true));
        assert_eq!(e.unwrap_err().kind(), "TypeError");
    }

    #[test]
    fn a_chain_evaluated_by_the_vm_is_one_query() {
        // Through the interpreter's calls (lazy arguments take the general
        // binder): each stage finds the previous one's sequence held by
        // itself alone and extends it.
        let env = crate::env(Options::test_suite(false));
        let opts = Default::default();
        let stages = |expr: &str| {
            let prog = compiler::compile(expr, env.registry(), opts).unwrap();
            let v = prog.eval(&env, Value::list(vec![Value::Int(1)])).unwrap();
            take(&v).map(|q| q.stages.iter().map(|s| s.kind).collect::<Vec<_>>())
        };
        use Kind::{Select, Where};
        assert_eq!(stages("$.where($ > 0)"), Some(vec![Where]));
        assert_eq!(
            stages("$.where($ > 0).select($ * 2).where(true).select(str($))"),
            Some(vec![Where, Select, Where, Select])
        );
        // Held by a variable: the next stage pulls it.
        assert_eq!(
            stages("let(g => $.select($)) -> $g.where(true)"),
            Some(vec![Where])
        );
        assert_eq!(stages("$.where($ > 0).take(1)"), None);
    }

    /// Each expression gives the same result fused (the chain written out)
    /// and stage by stage (the first stage held in a variable, so that the
    /// next pulls it as a sequence).
    #[test]
    fn fused_chains_answer_as_stage_by_stage_ones() {
        let data = "[5, 1, 4, 2, 3, 0]";
        for (chain, tail, expected) in [
            ("$.where($ > 1)", ".select($ * 10).sum()", "140"),
            (
                "$.select($ * 2)",
                ".where($ > 4).select($ + 1).toList()",
                "[11, 9, 7]",
            ),
            ("$.where($ > 1)", ".select($ * 2).where($ < 9).len()", "3"),
            ("$.where($ > 1)", ".count()", "4"),
            ("$.select($ - 3)", ".any($ = 2)", "true"),
            ("$.select($ - 3)", ".all($ > -4)", "true"),
            ("$.where($ < 3)", ".select($ * 3).first()", "3"),
            ("$.where($ > 9)", ".select($).first(-1)", "-1"),
            ("$.where($ > 1)", ".max()", "5"),
            ("$.select(str($))", ".sum('>')", "\">514230\""),
            ("$.where($ > 1)", ".aggregate($1 * $2, 1)", "120"),
        ] {
            ok(&format!("{chain}{tail}"), data, expected);
            ok(&format!("let(g => {chain}) -> $g{tail}"), data, expected);
        }
    }

    #[test]
    fn errors_limits_and_partial_reads_are_the_chains() {
        let data = "[3, 2, 1]";
        // The error of the element that raises, whatever consumes it.
        for tail in [".sum()", ".toList()", ".len()", ".where(true).first()"] {
            let e = eval(&format!("$.where($ < 3).select(6 / ($ - 2)){tail}"), data);
            assert_eq!(e, Err("ZeroDivisionError".into()), "{tail}");
        }
        // Lazy: an infinite source is read as far as needed, and counted
        // against the iterator limit.
        ok(
            "sequence().where($ mod 2 = 1).select($ * $).first()",
            "null",
            "1",
        );
        ok(
            "sequence(5).select($ * 2).where($ > 12).take(2)",
            "null",
            "[14, 16]",
        );
        assert_eq!(
            eval("sequence().where($ < 0).select($).first()", "null"),
            Err("CollectionTooLargeException".into())
        );
        // A sequence read partly, then read again where it is held: the
        // rest of it, as with a generator.
        ok(
            "let(g => $.where($ > 0)) -> [$g.select($ * 10).first(), $g.toList()]",
            data,
            "[30, [2, 1]]",
        );
        ok(
            "let(g => $.where($ > 0)) -> [$g.len(), $g.select($).toList()]",
            data,
            "[3, []]",
        );
    }
}

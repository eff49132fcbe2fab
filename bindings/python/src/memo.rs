//! Within one call, a record the plan cannot pass that is the same as an
//! earlier one (the same values, of the same types, where the plan did
//! not pass them; the same properties passed) gets that record's answer
//! instead of a check of its own: batches repeat their few wrong values.
//! Only for classes whose contracts call nothing but pure functions, so
//! that the same values always make the same answer.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use runtime::Value;

/// The names a contract may call for its answers to be kept: the
/// coercions and checks, the type tests, list building and operators.
const PURE: &[&str] = &[
    "notNull",
    "check",
    "int",
    "string",
    "bool",
    "isInteger",
    "isNumber",
    "isString",
    "isBoolean",
    "isList",
    "isDict",
    "list",
    "len",
];

/// True when every property contract of `class` calls only [`PURE`]
/// names and operators (`#...`).
pub fn pure(class: &Arc<engine::Class>) -> bool {
    class.init_order().all(|(_, p)| {
        p.contract
            .get::<engine::contracts::Contract>()
            .is_some_and(|c| {
                c.names()
                    .iter()
                    .all(|n| n.starts_with('#') || PURE.contains(&&**n))
            })
    })
}

/// A record compared strictly (with its kind and the properties passed):
/// the same kind of value (`true` is not `1`, `1` is not
/// `1.0`), floats by their bits; kinds other than the JSON-like ones are
/// never equal (no answer is shared for them).
struct Strict(usize, u64, Value);

fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::BigInt(x), Value::BigInt(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| strict_eq(p, q))
        }
        (Value::Dict(x), Value::Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k, v), (l, w))| strict_eq(k, l) && strict_eq(v, w))
        }
        _ => false,
    }
}

fn strict_hash<H: Hasher>(v: &Value, h: &mut H) {
    std::mem::discriminant(v).hash(h);
    match v {
        Value::List(l) => l.iter().for_each(|x| strict_hash(x, h)),
        Value::Dict(d) => d.iter().for_each(|(k, x)| {
            strict_hash(k, h);
            strict_hash(x, h)
        }),
        Value::Float(f) => f.to_bits().hash(h),
        other => other.hash(h),
    }
}

impl PartialEq for Strict {
    fn eq(&self, o: &Strict) -> bool {
        self.0 == o.0 && self.1 == o.1 && strict_eq(&self.2, &o.2)
    }
}

impl Eq for Strict {}

impl Hash for Strict {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.hash(h);
        self.1.hash(h);
        strict_hash(&self.2, h);
    }
}

/// The records met so far, by their index.
#[derive(Default)]
pub struct Memo {
    seen: HashMap<Strict, usize, rustc_hash::FxBuildHasher>,
}

impl Memo {
    /// The index of an earlier record the same as `v` with the same
    /// properties passed (`passed`, by bit) and of the same `kind` (its
    /// class); else `None`, and this one (record `i`) is kept.
    pub fn seen(&mut self, kind: usize, passed: u64, v: &Value, i: usize) -> Option<usize> {
        let key = Strict(kind, passed, v.clone());
        match self.seen.get(&key) {
            Some(&first) => Some(first),
            None => {
                self.seen.insert(key, i);
                None
            }
        }
    }
}

/// A failing value kept strictly (as [`Strict`] compares values): the
/// JSON-like kinds only, a dict's entries in order.
pub enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    /// By its bits.
    Float(u64),
    Str(Box<str>),
    List(Vec<Plain>),
    Dict(Vec<(Box<str>, Plain)>),
}

/// A failing value as the caller holds it, compared with a kept one in
/// place (without converting it).
pub trait Kept {
    /// Its hash (the same for strictly equal values), over what
    /// [`Kept::keep`] would keep; `None` when it would keep nothing.
    fn hash(&self) -> Option<u64>;
    /// True when this value is strictly `p` (same kinds, same values).
    fn is(&self, p: &Plain) -> bool;
    /// This value kept; `None` when it is of another kind than [`Plain`]
    /// has, or too large to be worth keeping.
    fn keep(&self) -> Option<Plain>;
}

/// What a failure is known by: the record's kind (its class), the
/// properties passed (by bit), the failing property, and its value's
/// hash (0: not given).
type FailedKey = (usize, u64, usize, u64);

/// Records met so far that failed on one property's value (or its
/// absence), by the properties passed, that property and the value: a
/// record the same in these has the same answer (see
/// [`crate::plan::PyPlan::failing_value`]). Values are found by their
/// hash, then compared in place.
#[derive(Default)]
pub struct Failed {
    seen: HashMap<FailedKey, Vec<(Option<Plain>, usize)>, rustc_hash::FxBuildHasher>,
    kept: usize,
}

impl Failed {
    /// Failures kept at most.
    const MAX: usize = 1024;

    /// The index of an earlier record of the same `kind` (its class)
    /// failing the same way as record `i` (properties `passed`, property
    /// `prop` failing on `value`, `None`: not given); else `None`, and
    /// this one is kept.
    pub fn seen<K: Kept>(
        &mut self,
        kind: usize,
        passed: u64,
        prop: usize,
        value: Option<&K>,
        i: usize,
    ) -> Option<usize> {
        let hash = match value {
            None => 0,
            Some(v) => v.hash()?,
        };
        let key = (kind, passed, prop, hash);
        if let Some(kept) = self.seen.get(&key) {
            let same = kept.iter().find(|(v, _)| match (v, value) {
                (None, None) => true,
                (Some(v), Some(b)) => b.is(v),
                _ => false,
            });
            if let Some(&(_, first)) = same {
                return Some(first);
            }
        }
        if self.kept < Failed::MAX {
            let value = match value {
                None => None,
                Some(b) => Some(b.keep()?),
            };
            self.kept += 1;
            self.seen.entry(key).or_default().push((value, i));
        }
        None
    }
}

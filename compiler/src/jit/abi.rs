//! What compiled code and the code that calls it agree on: the tags and
//! layout of the values it reads ([`Scalar`]), and what a contract chain
//! is made of ([`Step`]) or why it is not compiled ([`Unsupported`]).

use runtime::Value;

use crate::ir::Expr;
use crate::murano::ir::LinkKind;

/// The tags of [`Scalar::tag`], in the order the guards rely on: every
/// tag below [`tag::CONTAINER`] is a scalar.
pub(super) mod tag {
    pub const NULL: u64 = 0;
    pub const BOOL: u64 = 1;
    pub const INT: u64 = 2;
    pub const FLOAT: u64 = 3;
    pub const STR: u64 = 4;
    pub const BIGINT: u64 = 5;
    pub const LIST: u64 = 6;
    pub const DICT: u64 = 7;
    pub const OTHER: u64 = 8;
    /// The first tag that is no scalar.
    pub const CONTAINER: u64 = LIST;
}

/// A value as compiled code reads it. `bits` holds a boolean, an integer
/// or a double's bits; `ptr`/`len` a string's UTF-8 bytes (`len` a list's
/// or dict's length); `val` the value
/// itself (for the field helper) — all borrowed for the duration of one
/// call.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Scalar {
    pub(super) tag: u64,
    pub(super) bits: u64,
    pub(super) ptr: *const u8,
    pub(super) len: usize,
    pub(super) val: *const Value,
}

impl Scalar {
    pub(super) const EMPTY: Scalar = Scalar {
        tag: tag::OTHER,
        bits: 0,
        ptr: std::ptr::null(),
        len: 0,
        val: std::ptr::null(),
    };

    /// `v` as a scalar; a string's bytes only when `strings` (reading them
    /// costs a pointer chase the code may not need).
    pub(super) fn of(v: &Value, strings: bool) -> Scalar {
        let (tag, bits) = match v {
            Value::Null => (tag::NULL, 0),
            Value::Bool(b) => (tag::BOOL, *b as u64),
            Value::Int(i) => (tag::INT, *i as u64),
            Value::Float(f) => (tag::FLOAT, f.to_bits()),
            Value::BigInt(_) => (tag::BIGINT, 0),
            Value::Str(_) if !strings => (tag::STR, 0),
            Value::Str(s) => {
                return Scalar {
                    tag: tag::STR,
                    bits: 0,
                    ptr: s.as_ptr(),
                    len: s.len(),
                    val: v,
                }
            }
            Value::List(l) => return Scalar::container(tag::LIST, l.len(), v),
            Value::Dict(d) => return Scalar::container(tag::DICT, d.len(), v),
            _ => (tag::OTHER, 0),
        };
        Scalar {
            tag,
            bits,
            val: v,
            ..Scalar::EMPTY
        }
    }

    pub(super) fn container(tag: u64, len: usize, v: &Value) -> Scalar {
        Scalar {
            tag,
            len,
            val: v,
            ..Scalar::EMPTY
        }
    }
}

/// A link of a contract chain as the JIT takes it: the contract IR's
/// link ([`LinkKind`], which says what it means) with the expression IR
/// of a `check()` predicate compiled alone (`$` being argument 1). The
/// links it compiles are `notNull()`, `int()`, `string()`, `bool()`,
/// `check(p)`, and `class()`, `owned()`, `notOwned()` and `template()`
/// (which ask the [`Host`]); any other is [`Unsupported`].
#[derive(Clone, Copy)]
pub struct Step<'a> {
    /// What the link checks.
    pub link: &'a LinkKind,
    /// The compiled predicate of a [`LinkKind::Check`].
    pub predicate: Option<&'a Expr>,
}

impl<'a> Step<'a> {
    /// A link that has no predicate.
    pub fn plain(link: &'a LinkKind) -> Step<'a> {
        Step {
            link,
            predicate: None,
        }
    }
}

/// Why a chain stays interpreted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

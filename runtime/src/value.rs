//! The runtime value of YAQL and MuranoPL.
//!
//! `Value` is a 16-byte enum (pinned by a compile-time assertion below).
//! Collections are reference-counted and immutable: every YAQL function
//! returns new values, as the reference's frozen tuples and dicts do.
//! Equality and hashing follow Python: `1`, `1.0` and `true` are equal and
//! hash alike, so they are the same dictionary key.

use std::any::Any;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex};

use indexmap::{IndexMap, IndexSet};
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use rustc_hash::FxHasher;
use smallvec::SmallVec;

use crate::ctx::Frame;
use crate::error::Result;

/// Hasher used by every dictionary and set.
pub type FxBuild = BuildHasherDefault<FxHasher>;
/// An insertion-ordered dictionary, as yaql's `FrozenDict` over Python's dict.
pub type Dict = IndexMap<Value, Value, FxBuild>;
/// An insertion-ordered set (Python sets are unordered; keeping insertion
/// order makes results deterministic).
pub type Set = IndexSet<Value, FxBuild>;

/// `null` with a `'static` address: a borrowed default that costs no
/// temporary (values have a destructor, so `&Value::Null` is not promoted
/// to a constant). Immutable (no interior mutability): not state.
pub static NULL: Value = Value::Null;

/// A YAQL value.
#[derive(Clone)]
pub enum Value {
    /// `null` (Python `None`).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// An integer outside the 64-bit range (always normalised: never fits i64).
    BigInt(Arc<BigInt>),
    /// A double.
    Float(f64),
    /// A string.
    Str(Arc<String>),
    /// A list (Python list), or a yaql tuple ([`ListData::is_tuple`]).
    List(Arc<ListData>),
    /// A dictionary.
    Dict(Arc<Dict>),
    /// A set.
    Set(Arc<Set>),
    /// A datetime with a UTC offset.
    DateTime(Arc<DateTime>),
    /// A timespan in microseconds.
    TimeSpan(i64),
    /// A callable: a compiled lambda bound to its context, or a native.
    Lambda(Arc<Closure>),
    /// A lazy, one-shot sequence (a Python generator).
    Iter(Arc<LazySeq>),
    /// A context object (`let`, `with`, `unpack`, `def`).
    Context(Arc<Frame>),
    /// A mapping rule `key => value` passed as an argument.
    Pair(Arc<(Value, Value)>),
    /// A MuranoPL object (identity; its state lives in the executor).
    Object(Arc<ObjRef>),
    /// A MuranoPL type object (`ns:Name`, `type('x.y')`).
    Type(Arc<TypeRef>),
}

/// The immutable identity of a MuranoPL object: its id, class and the
/// slot of its state in the executor's object store.
#[derive(Debug)]
pub struct ObjRef {
    /// The object id (the `?.id` of the model).
    pub id: Arc<str>,
    /// Full class name.
    pub class: Arc<str>,
    /// Slot in the store.
    pub slot: u32,
    /// Store generation, so that refs of another execution never alias.
    pub store: u64,
}

/// A MuranoPL type reference.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TypeRef {
    /// Full class name.
    pub name: Arc<str>,
    /// Package version.
    pub version: Arc<str>,
    /// Package name.
    pub package: Arc<str>,
}

const _: () = assert!(std::mem::size_of::<Value>() == 16);

/// A datetime: UTC instant in microseconds plus the offset in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Microseconds since the Unix epoch, UTC.
    pub micros: i64,
    /// UTC offset in seconds.
    pub offset: i32,
}

/// Something that can be invoked with positional and keyword arguments.
pub trait Invoke: Send + Sync {
    /// Calls the code in `ctx` with the given arguments.
    fn invoke(
        &self,
        env: &crate::Env,
        ctx: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> Result<Value>;
    /// Calls the code with positional arguments some of which the call
    /// left out (`f(, 1)`: `None`). By default a left-out argument is
    /// null; code with defaults of its own (a Python function's) fills
    /// them.
    fn invoke_partial(
        &self,
        env: &crate::Env,
        ctx: &Arc<Frame>,
        args: &[Option<Value>],
        kwargs: &[(Arc<str>, Value)],
    ) -> Result<Value> {
        let args: Vec<Value> = args
            .iter()
            .map(|a| a.clone().unwrap_or(Value::Null))
            .collect();
        self.invoke(env, ctx, &args, kwargs)
    }
    /// A short description for diagnostics.
    fn describe(&self) -> String {
        "<lambda>".into()
    }
    /// True for the closure of a lazily compiled call argument.
    fn is_thunk(&self) -> bool {
        false
    }
    /// The code as `Any`, for library values that are lambdas underneath
    /// (a compiled regex) to be recognised by their type; `None` (the
    /// default) for ordinary code.
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }
}

/// A lambda: code plus the context it was created in.
pub struct Closure {
    /// The code.
    pub code: Arc<dyn Invoke>,
    /// The defining context.
    pub ctx: Arc<Frame>,
}

impl Closure {
    /// Calls the lambda with positional arguments (`$1`, `$2`, ...).
    pub fn call(&self, env: &crate::Env, args: &[Value]) -> Result<Value> {
        self.code.invoke(env, &self.ctx, args, &[])
    }
    /// Calls the lambda with positional and keyword arguments.
    pub fn call_kw(
        &self,
        env: &crate::Env,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> Result<Value> {
        self.code.invoke(env, &self.ctx, args, kwargs)
    }
    /// Evaluates the lambda's expression in another context (`->`).
    pub fn call_in(&self, env: &crate::Env, ctx: &Arc<Frame>, args: &[Value]) -> Result<Value> {
        self.code.invoke(env, ctx, args, &[])
    }
}

/// A boxed fallible iterator of values.
pub type BoxIter = Box<dyn Iterator<Item = Result<Value>> + Send>;

/// A lazy one-shot sequence, like a Python generator: iterating it twice
/// gives the remaining elements only.
pub struct LazySeq {
    inner: Mutex<Option<BoxIter>>,
    /// For memorized sequences: the elements pulled so far (every reader
    /// replays them, as yaql's `memorize` does).
    memo: Option<Mutex<Vec<Value>>>,
    /// What the library that made the sequence keeps on it (an `orderBy`
    /// result's sort fields, which `thenBy` extends): the sequence carries
    /// its own state, so no table on the side has to recognise it.
    ext: Option<Arc<dyn Any + Send + Sync>>,
}

impl LazySeq {
    /// Wraps an iterator.
    pub fn new(it: BoxIter) -> Arc<LazySeq> {
        Arc::new(LazySeq {
            inner: Mutex::new(Some(it)),
            memo: None,
            ext: None,
        })
    }
    /// Wraps an iterator in a re-iterable, caching sequence.
    pub fn memo(it: BoxIter) -> Arc<LazySeq> {
        Arc::new(LazySeq {
            inner: Mutex::new(Some(it)),
            memo: Some(Mutex::new(Vec::new())),
            ext: None,
        })
    }
    /// Wraps an iterator in a one-shot sequence that carries `ext`, state
    /// of the library that made it (see [`LazySeq::ext`]).
    pub fn with_ext(it: BoxIter, ext: Arc<dyn Any + Send + Sync>) -> Arc<LazySeq> {
        Arc::new(LazySeq {
            inner: Mutex::new(Some(it)),
            memo: None,
            ext: Some(ext),
        })
    }
    /// The state the sequence was made with ([`LazySeq::with_ext`]), when
    /// it is a `T`.
    pub fn ext<T: Any>(&self) -> Option<&T> {
        self.ext.as_deref()?.downcast_ref::<T>()
    }
    /// True for memorized sequences.
    pub fn is_memo(&self) -> bool {
        self.memo.is_some()
    }
    /// Element `i` of a memorized sequence, pulling as needed.
    pub fn get(&self, i: usize) -> Option<Result<Value>> {
        let memo = self.memo.as_ref()?;
        loop {
            {
                let m = memo.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(v) = m.get(i) {
                    return Some(Ok(v.clone()));
                }
            }
            let next = {
                let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                match g.as_mut() {
                    Some(it) => {
                        let r = it.next();
                        if r.is_none() {
                            *g = None;
                        }
                        r
                    }
                    None => None,
                }
            };
            match next {
                Some(Ok(v)) => memo.lock().unwrap_or_else(|e| e.into_inner()).push(v),
                Some(Err(e)) => return Some(Err(e)),
                None => return None,
            }
        }
    }
    /// Pulls the next element (one-shot sequences only).
    pub fn next(&self) -> Option<Result<Value>> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match g.as_mut() {
            Some(it) => {
                let r = it.next();
                if r.is_none() {
                    *g = None;
                }
                r
            }
            None => None,
        }
    }
}

/// Bytes of an `Arc`'s counts and a `String`/`Vec`/map header, as the
/// memory budget counts them.
const ARC_HEADER: usize = 16 + 24;
/// Bytes of one dict entry: its hash, key and value, and an index slot.
const DICT_ENTRY: usize = 8 + 2 * size_of::<Value>() + 8;
/// Bytes of one set entry: its hash and value, and an index slot.
const SET_ENTRY: usize = 8 + size_of::<Value>() + 8;

/// A list's storage, counted toward the memory budget as [`Value::list`]
/// counts it.
pub fn list_arc(v: Vec<Value>) -> Arc<ListData> {
    crate::budget::charge(ARC_HEADER + v.capacity() * size_of::<Value>());
    Arc::new(ListData::from(v))
}

/// The storage of [`Value::List`]: its items, and whether it is a tuple.
///
/// yaql keeps Python's two sequences apart: `1 => 2` and `tuple(1, 2)`
/// (yaql 0.2), and the input data (which the reference freezes into
/// tuples), are tuples, and an engine whose `yaql.convertTuplesToLists`
/// is off returns them as tuples. Every YAQL function and comparison takes
/// a tuple as the list it is (`tuple(1, 2) = [1, 2]`); only the flag tells
/// them apart, where a value leaves the engine. It dereferences to its
/// items.
#[derive(Clone, Default)]
pub struct ListData {
    items: Vec<Value>,
    tuple: bool,
}

impl ListData {
    /// A tuple of `items`.
    pub fn tuple(items: Vec<Value>) -> ListData {
        ListData { items, tuple: true }
    }
    /// True for a tuple.
    pub fn is_tuple(&self) -> bool {
        self.tuple
    }
    /// The items.
    pub fn into_vec(self) -> Vec<Value> {
        self.items
    }
}

impl From<Vec<Value>> for ListData {
    /// A list (not a tuple) of `items`.
    fn from(items: Vec<Value>) -> ListData {
        ListData {
            items,
            tuple: false,
        }
    }
}

impl FromIterator<Value> for ListData {
    fn from_iter<I: IntoIterator<Item = Value>>(it: I) -> ListData {
        ListData::from(it.into_iter().collect::<Vec<_>>())
    }
}

impl std::ops::Deref for ListData {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.items
    }
}

impl std::ops::DerefMut for ListData {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.items
    }
}

impl fmt::Debug for ListData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}

/// A set's storage, counted toward the memory budget as [`Value::set`]
/// counts it.
pub fn set_arc(s: Set) -> Arc<Set> {
    crate::budget::charge(ARC_HEADER + s.capacity() * SET_ENTRY);
    Arc::new(s)
}

impl Value {
    /// Makes a string value. Its bytes count toward the evaluation's
    /// memory budget ([`crate::budget::charge`]), as do a collection's.
    pub fn str<S: Into<String>>(s: S) -> Value {
        let s = s.into();
        crate::budget::charge(ARC_HEADER + s.capacity());
        Value::Str(Arc::new(s))
    }
    /// Makes a list value.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(list_arc(v))
    }
    /// Makes a tuple value (a list that an engine which keeps tuples
    /// returns as a tuple; see [`ListData`]).
    pub fn tuple(v: Vec<Value>) -> Value {
        crate::budget::charge(ARC_HEADER + v.capacity() * size_of::<Value>());
        Value::List(Arc::new(ListData::tuple(v)))
    }
    /// Makes a dict value.
    pub fn dict(d: Dict) -> Value {
        crate::budget::charge(ARC_HEADER + d.capacity() * DICT_ENTRY);
        Value::Dict(Arc::new(d))
    }
    /// Makes a set value.
    pub fn set(s: Set) -> Value {
        Value::Set(set_arc(s))
    }
    /// Makes a lazy sequence from an iterator.
    pub fn iter<I>(it: I) -> Value
    where
        I: Iterator<Item = Result<Value>> + Send + 'static,
    {
        Value::Iter(LazySeq::new(Box::new(it)))
    }
    /// Makes an integer from a big integer, normalising to `Int` when it fits.
    pub fn from_bigint(b: BigInt) -> Value {
        match b.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::BigInt(Arc::new(b)),
        }
    }
    /// Makes a float value.
    pub fn float(f: f64) -> Value {
        Value::Float(f)
    }

    /// The Python type name of the value, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "tuple",
            Value::Dict(_) => "FrozenDict",
            Value::Set(_) => "frozenset",
            Value::DateTime(_) => "datetime",
            Value::TimeSpan(_) => "timedelta",
            Value::Lambda(_) => "function",
            Value::Iter(_) => "generator",
            Value::Context(_) => "Context",
            Value::Pair(_) => "MappingRule",
            Value::Object(_) => "MuranoObject",
            Value::Type(_) => "MuranoType",
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(b) => !b.is_zero(),
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Set(s) => !s.is_empty(),
            Value::TimeSpan(t) => *t != 0,
            _ => true,
        }
    }

    /// Reads the first cache line of the value's own memory (a string's
    /// first byte, a list's first item, a dict's first entry and that
    /// entry's value) and returns something computed from it. Code that is
    /// about to look at many values calls this on each first: the reads do
    /// not depend on each other, so their cache misses overlap.
    pub fn touch(&self) -> usize {
        match self {
            Value::Str(s) => s.as_bytes().first().map_or(0, |b| *b as usize),
            Value::List(l) => l.first().map_or(0, |v| v.is_null() as usize),
            Value::Dict(d) => d.values().map(|v| v.touch_shallow()).sum(),
            _ => 0,
        }
    }

    fn touch_shallow(&self) -> usize {
        match self {
            // The bytes too: a check compares them next, and reading them
            // here overlaps their miss with the other values'.
            Value::Str(s) => s.as_bytes().first().map_or(0, |b| *b as usize),
            Value::List(l) => l.len(),
            Value::Dict(d) => d.len(),
            _ => 0,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// True for integers (not booleans).
    pub fn is_int(&self) -> bool {
        matches!(self, Value::Int(_) | Value::BigInt(_))
    }
    /// True for ints and floats (not booleans).
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::BigInt(_) | Value::Float(_))
    }
    /// The string content, if a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }
    /// The value as f64, for numbers and booleans.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::BigInt(b) => b.to_f64(),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(*b as i64 as f64),
            _ => None,
        }
    }
    /// The value as a big integer, for ints and booleans.
    pub fn as_bigint(&self) -> Option<BigInt> {
        match self {
            Value::Int(i) => Some(BigInt::from(*i)),
            Value::BigInt(b) => Some((**b).clone()),
            Value::Bool(b) => Some(BigInt::from(*b as i64)),
            _ => None,
        }
    }
    /// The value as i64 for ints and booleans that fit.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }
    /// True for values that are Python collections a query may iterate
    /// (lists, sets, lazy sequences; not strings nor dicts).
    pub fn is_iterable(&self) -> bool {
        matches!(self, Value::List(_) | Value::Set(_) | Value::Iter(_))
    }
}

/// Numeric view used by equality and ordering.
enum Num<'a> {
    I(i64),
    B(&'a BigInt),
    F(f64),
}

fn num_of(v: &Value) -> Option<Num<'_>> {
    match v {
        Value::Bool(b) => Some(Num::I(*b as i64)),
        Value::Int(i) => Some(Num::I(*i)),
        Value::BigInt(b) => Some(Num::B(b)),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

fn float_cmp_big(f: f64, b: &BigInt) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        });
    }
    let fl = f.floor();
    let fb = num_bigint::BigInt::from(fl as i128);
    // Floats beyond i128 are handled through f64 comparison of the bigint.
    if fl.abs() >= 1.0e38 {
        return f.partial_cmp(&b.to_f64().unwrap_or(f64::INFINITY));
    }
    match fb.cmp(b) {
        Ordering::Equal => {
            if f > fl {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

fn float_cmp_int(f: f64, i: i64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Exact comparison between f64 and i64.
    if f >= 9.3e18 {
        return Some(Ordering::Greater);
    }
    if f <= -9.3e18 {
        return Some(Ordering::Less);
    }
    let t = f.trunc();
    let ti = t as i64;
    match ti.cmp(&i) {
        Ordering::Equal => {
            if f > t {
                Some(Ordering::Greater)
            } else if f < t {
                Some(Ordering::Less)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// Compares two numbers (ints, bigints, floats, booleans) as Python does.
pub fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    let (x, y) = (num_of(a)?, num_of(b)?);
    match (x, y) {
        (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
        (Num::I(a), Num::B(b)) => Some(BigInt::from(a).cmp(b)),
        (Num::B(a), Num::I(b)) => Some((*a).cmp(&BigInt::from(b))),
        (Num::B(a), Num::B(b)) => Some(a.cmp(b)),
        (Num::F(a), Num::F(b)) => a.partial_cmp(&b),
        (Num::F(a), Num::I(b)) => float_cmp_int(a, b),
        (Num::I(a), Num::F(b)) => float_cmp_int(b, a).map(Ordering::reverse),
        (Num::F(a), Num::B(b)) => float_cmp_big(a, b),
        (Num::B(a), Num::F(b)) => float_cmp_big(b, a).map(Ordering::reverse),
    }
}

/// Values nest without bound (`aggregate` builds a list millions deep),
/// and a container's drop glue drops its items recursively. So a value
/// that is the only owner of a container holding containers moves those
/// onto a stack (on the heap past a few), and each is emptied the same way
/// before it is dropped: dropping never recurses more than one level.
impl Drop for Value {
    #[inline]
    fn drop(&mut self) {
        if is_container(self) {
            drop_nested(self);
        }
    }
}

#[inline(never)]
fn drop_nested(v: &mut Value) {
    if owns_nested(v) {
        let mut stack = SmallVec::<[Value; 8]>::new();
        detach_containers(v, &mut stack);
        while let Some(mut v) = stack.pop() {
            if owns_nested(&v) {
                detach_containers(&mut v, &mut stack);
            }
        }
    }
}

fn is_container(v: &Value) -> bool {
    matches!(
        v,
        Value::List(_) | Value::Dict(_) | Value::Set(_) | Value::Pair(_)
    )
}

/// Whether dropping `v` would drop a container inside a container.
fn owns_nested(v: &Value) -> bool {
    match v {
        Value::List(l) => Arc::strong_count(l) == 1 && l.iter().any(is_container),
        Value::Dict(d) => {
            Arc::strong_count(d) == 1 && d.iter().any(|(k, x)| is_container(k) || is_container(x))
        }
        Value::Set(s) => Arc::strong_count(s) == 1 && s.iter().any(is_container),
        Value::Pair(p) => Arc::strong_count(p) == 1 && (is_container(&p.0) || is_container(&p.1)),
        _ => false,
    }
}

/// Moves the containers among the items of the container `v` solely owns
/// onto `stack` (leaving `null`s; a dict with a container key or a set
/// gives up all its items).
fn detach_containers(v: &mut Value, stack: &mut SmallVec<[Value; 8]>) {
    let mut take = |x: &mut Value| {
        if is_container(x) {
            stack.push(std::mem::replace(x, Value::Null));
        }
    };
    match v {
        Value::List(l) => {
            if let Some(items) = Arc::get_mut(l) {
                items.iter_mut().for_each(take);
            }
        }
        Value::Dict(d) => {
            if let Some(d) = Arc::get_mut(d) {
                if d.keys().any(is_container) {
                    d.drain(..).for_each(|(k, x)| stack.extend([k, x]));
                } else {
                    d.values_mut().for_each(take);
                }
            }
        }
        Value::Set(s) => {
            if let Some(s) = Arc::get_mut(s) {
                stack.extend(s.drain(..));
            }
        }
        Value::Pair(p) => {
            if let Some((a, b)) = Arc::get_mut(p) {
                take(a);
                take(b);
            }
        }
        _ => {}
    }
}

impl PartialEq for Value {
    /// Containers are compared with a stack of pairs on the heap, not by
    /// recursion: two lists nested ten million deep compare without
    /// overflowing the thread's stack.
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        let mut pending: SmallVec<[(&Value, &Value); 8]> = SmallVec::new();
        pending.push((self, other));
        while let Some(pair) = pending.pop() {
            let same = match pair {
                (List(a), List(b)) => {
                    if !Arc::ptr_eq(a, b) {
                        if a.len() != b.len() {
                            return false;
                        }
                        pending.extend(a.iter().zip(b.iter()).rev());
                    }
                    true
                }
                (Dict(a), Dict(b)) => {
                    if !Arc::ptr_eq(a, b) {
                        if a.len() != b.len() {
                            return false;
                        }
                        for (k, v) in a.iter() {
                            match b.get(k) {
                                Some(w) => pending.push((v, w)),
                                None => return false,
                            }
                        }
                    }
                    true
                }
                (Pair(a), Pair(b)) => {
                    pending.push((&a.1, &b.1));
                    pending.push((&a.0, &b.0));
                    true
                }
                (a, b) => a.eq_leaf(b),
            };
            if !same {
                return false;
            }
        }
        true
    }
}

impl Value {
    /// Equality of values that are not both lists, dicts or pairs.
    fn eq_leaf(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Str(a), Str(b)) => Arc::ptr_eq(a, b) || a == b,
            (Int(a), Int(b)) => a == b,
            (Set(a), Set(b)) => a.len() == b.len() && a.iter().all(|k| b.contains(k)),
            (DateTime(a), DateTime(b)) => a.micros == b.micros,
            (TimeSpan(a), TimeSpan(b)) => a == b,
            (Lambda(a), Lambda(b)) => Arc::ptr_eq(a, b),
            (Iter(a), Iter(b)) => Arc::ptr_eq(a, b),
            (Context(a), Context(b)) => Arc::ptr_eq(a, b),
            (Object(a), Object(b)) => Arc::ptr_eq(a, b) || (a.store == b.store && a.slot == b.slot),
            (Type(a), Type(b)) => a == b,
            _ => match num_cmp(self, other) {
                Some(o) => o == Ordering::Equal,
                None => false,
            },
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.hash_within(h, 0)
    }
}

impl Value {
    /// Lists and pairs deeper than this are hashed by their length only:
    /// equal values still hash alike, and hashing a deep value takes no
    /// deep recursion.
    const HASH_DEPTH: u32 = 32;

    fn hash_within<H: Hasher>(&self, h: &mut H, depth: u32) {
        if depth >= Value::HASH_DEPTH {
            if let Value::List(l) = self {
                1u8.hash(h);
                return l.len().hash(h);
            }
            if let Value::Pair(_) = self {
                return 4u8.hash(h);
            }
        }
        match self {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (*b as i64).hash(h),
            Value::Int(i) => i.hash(h),
            Value::BigInt(b) => b.hash(h),
            Value::Float(f) => {
                if f.fract() == 0.0 && f.is_finite() {
                    if *f >= -9.2e18 && *f <= 9.2e18 {
                        (*f as i64).hash(h)
                    } else {
                        BigInt::from(*f as i128).hash(h)
                    }
                } else {
                    f.to_bits().hash(h)
                }
            }
            Value::Str(s) => s.as_str().hash(h),
            Value::List(l) => {
                1u8.hash(h);
                for v in l.iter() {
                    v.hash_within(h, depth + 1)
                }
            }
            Value::Dict(d) => {
                2u8.hash(h);
                d.len().hash(h)
            }
            Value::Set(s) => {
                3u8.hash(h);
                s.len().hash(h)
            }
            Value::DateTime(d) => d.micros.hash(h),
            Value::TimeSpan(t) => t.hash(h),
            Value::Lambda(l) => (Arc::as_ptr(l) as *const u8 as usize).hash(h),
            Value::Iter(l) => (Arc::as_ptr(l) as usize).hash(h),
            Value::Context(l) => (Arc::as_ptr(l) as usize).hash(h),
            Value::Pair(p) => {
                p.0.hash_within(h, depth + 1);
                p.1.hash_within(h, depth + 1)
            }
            Value::Object(o) => o.slot.hash(h),
            Value::Type(t) => t.name.hash(h),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::json::to_tagged_string(self))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::str(s)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::list(v)
    }
}

/// `d[key]` where `key` is usually interned ([`intern`]), as are the
/// keys the JSON and YAML loaders make and the names compiled code reads:
/// a small dict's entries are scanned for the same string (the same
/// allocation, else, in a second scan, the same bytes: interning is per
/// thread, so a key compiled on one thread and data loaded on another
/// share bytes, not pointers), sequential reads of the entries with no
/// hashing and no index table; a string key equals only a string key, so
/// the scans' answer is final. A larger dict is looked up by hash.
#[inline]
pub fn get_interned<'a>(d: &'a Dict, key: &Value) -> Option<&'a Value> {
    const SCAN: usize = 16;
    if let (Value::Str(k), true) = (key, d.len() <= SCAN) {
        let same = |e: &Value, bytes: bool| match e {
            Value::Str(e) => Arc::ptr_eq(e, k) || (bytes && e.as_bytes() == k.as_bytes()),
            _ => false,
        };
        // Pointers first: they answer without reading a byte when the key
        // and the data were interned on this thread.
        let mut at = d.iter().find(|(e, _)| same(e, false));
        if at.is_none() {
            at = d.iter().find(|(e, _)| same(e, true));
        }
        return at.map(|(_, v)| v);
    }
    d.get(key)
}

/// Returns a shared string for `s`: dictionary keys of input data and the
/// attribute names of compiled expressions go through here, so that the
/// same key is one allocation and attribute lookups can compare pointers.
/// Only short strings are interned, and the table is bounded.
///
/// The table is per thread: threads that load data in parallel (validate's
/// workers) each share their own copy of a key, so that counting its
/// references never bounces one cache line between cores (with one
/// process-wide table, that cost validate 10% of its time on two cores).
/// Pointers then differ across threads; every comparison falls back to the
/// bytes.
pub fn intern(s: &str) -> Arc<String> {
    const MAX_LEN: usize = 40;
    const MAX_ENTRIES: usize = 1 << 16;
    if s.len() > MAX_LEN {
        return Arc::new(s.to_string());
    }
    thread_local! {
        // Per thread, keyed with Fx (short keys: names and dict keys); it
        // only maps strings to equal strings, so no result depends on
        // what an earlier evaluation on this thread left in it.
        static LOCAL: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Arc<String>>> =
            std::cell::RefCell::new(rustc_hash::FxHashMap::default());
    }
    LOCAL
        .try_with(|l| {
            let mut l = l.borrow_mut();
            if let Some(a) = l.get(s) {
                return a.clone();
            }
            let a = Arc::new(s.to_string());
            if l.len() < MAX_ENTRIES {
                l.insert(s.into(), a.clone());
            }
            a
        })
        .unwrap_or_else(|_| Arc::new(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_of(v: &Value) -> u64 {
        let mut h = FxHasher::default();
        v.hash(&mut h);
        h.finish()
    }

    /// A tuple is the list of its items to equality, hashing and every
    /// reader; only `is_tuple` tells them apart, and a list made from a
    /// tuple's items is a list.
    #[test]
    fn tuples_are_lists_that_say_so() {
        let items = vec![Value::Int(1), Value::str("a")];
        let (t, l) = (Value::tuple(items.clone()), Value::list(items.clone()));
        assert_eq!(t, l);
        assert_eq!(hash_of(&t), hash_of(&l));
        let (Value::List(td), Value::List(ld)) = (&t, &l) else {
            panic!("lists")
        };
        assert!(td.is_tuple() && !ld.is_tuple());
        assert_eq!(td.len(), 2);
        assert_eq!(td[1], Value::str("a"));
        assert_eq!((**td).clone().into_vec(), items);
        assert!(!ListData::from(items.clone()).is_tuple());
        assert!(!items.into_iter().collect::<ListData>().is_tuple());
        let mut set = Set::default();
        set.insert(t);
        assert!(!set.insert(l));
        assert_eq!(format!("{:?}", ListData::tuple(vec![Value::Int(1)])), "[1]");
    }

    #[test]
    fn get_interned_finds_keys_by_pointer_or_bytes_and_only_string_keys() {
        let mut small = Dict::default();
        small.insert(Value::Int(1), Value::str("one"));
        small.insert(Value::Str(intern("port")), Value::Int(80));
        small.insert(Value::str("name"), Value::str("web"));
        // The same allocation, a fresh allocation of the same bytes, and a
        // key interned on another thread all find the entry.
        assert_eq!(
            get_interned(&small, &Value::Str(intern("port"))),
            Some(&Value::Int(80))
        );
        assert_eq!(
            get_interned(&small, &Value::str("port")),
            Some(&Value::Int(80))
        );
        let elsewhere = std::thread::spawn(|| intern("name")).join().unwrap();
        assert_eq!(
            get_interned(&small, &Value::Str(elsewhere)),
            Some(&Value::str("web"))
        );
        assert_eq!(get_interned(&small, &Value::str("por")), None);
        assert_eq!(get_interned(&small, &Value::str("1")), None);
        assert_eq!(
            get_interned(&small, &Value::Int(1)),
            Some(&Value::str("one"))
        );
        let big: Dict = (0..40)
            .map(|i| (Value::str(format!("k{i}")), Value::Int(i)))
            .collect();
        assert_eq!(
            get_interned(&big, &Value::str("k33")),
            Some(&Value::Int(33))
        );
        assert_eq!(get_interned(&big, &Value::str("k40")), None);
    }

    fn deep(n: usize, leaf: Value) -> Value {
        (0..n).fold(leaf, |v, i| {
            if i % 2 == 0 {
                Value::list(vec![v])
            } else {
                Value::Pair(Arc::new((Value::Int(i as i64), v)))
            }
        })
    }

    /// Comparing, hashing, writing and dropping values nested far deeper
    /// than a small stack could recurse (300k levels on a 2 MB stack).
    #[test]
    fn deep_values_compare_hash_print_repr_and_drop_without_recursion() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let n = 300_000;
                let (a, b, c) = (
                    deep(n, Value::Null),
                    deep(n, Value::Null),
                    deep(n, Value::Int(1)),
                );
                assert!(a == b);
                assert!(a != c);
                let hash = |v: &Value| {
                    let mut h = FxHasher::default();
                    v.hash(&mut h);
                    h.finish()
                };
                assert_eq!(hash(&a), hash(&b));
                let text = crate::json::to_tagged_string(&a);
                let head = "[299999, [[299997, [[299995, ";
                let repr = crate::pyrepr::to_str(&a);
                let ok = text.starts_with(head)
                    && text.contains("[1, [null]]]]")
                    && text.ends_with("]]]]")
                    && repr.starts_with("(299999, ((299997, ((299995, ")
                    && repr.contains("(3, ((1, (None,)),))")
                    && repr.ends_with(",)),)),))");
                // A dict and a set deep inside, and a value shared with a
                // live one (which keeps its part).
                let shared = deep(1000, Value::Int(2));
                let d = Value::dict(Dict::from_iter([(Value::Int(0), a)]));
                let e = deep(n, Value::set(Set::from_iter([d, shared.clone()])));
                drop((b, c, e));
                assert!(shared == deep(1000, Value::Int(2)));
                assert!(ok, "{} ... {}", &text[..40], &text[text.len() - 40..]);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn equal_values_hash_alike_past_the_hash_depth() {
        let mut h1 = FxHasher::default();
        let mut h2 = FxHasher::default();
        deep(100, Value::Int(1)).hash(&mut h1);
        deep(100, Value::Float(1.0)).hash(&mut h2);
        assert_eq!(h1.finish(), h2.finish());
        assert!(deep(100, Value::Int(1)) == deep(100, Value::Float(1.0)));
        assert!(deep(100, Value::Int(1)) != deep(101, Value::Int(1)));
    }
}

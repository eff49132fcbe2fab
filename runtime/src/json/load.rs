//! Tagged JSON text straight to [`Value`]: serde_json's parser drives a
//! visitor that builds values as it reads, with no `serde_json::Value` tree
//! in between.
//!
//! The result is what `from_tagged(&serde_json::from_str(s)?)` gives, value
//! for value and error for error:
//! - Malformed JSON wins over any tag error, wherever either occurs, because
//!   the whole text is parsed first there. So a tag error does not stop the
//!   parse here: a value loads to a [`Loaded`], an `Err` carrying its first
//!   tag error, and parsing goes on to the end.
//! - Of several tag errors, the first in the order of the deduplicated
//!   document wins: a duplicate key replaces the earlier value (and its
//!   error) in the earlier key's place, as `serde_json::Map` does with
//!   `preserve_order`.
//! - An object is a tag only if it ends up with one key, a tag, so the value
//!   under a leading tag key is read as a `serde_json::Value` (tag values
//!   are small) and converted once the object's end shows which it is.
//! - Nesting is bounded by serde_json's recursion limit
//!   ([`super::MAX_DEPTH`]), which both paths share; deeper input is a JSON
//!   error, not a stack overflow.
//!
//! Lists and dicts are built in scratch stacks shared by the whole parse,
//! then moved out at their exact size, as the old path's `collect` and
//! `reserve` sized them.

use std::fmt;
use std::sync::Arc;

use num_bigint::BigInt;
use rustc_hash::FxHashMap;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Result};
use crate::value::{intern, Dict, Value};

/// A loaded value, or the first tag error inside it.
type Loaded = Result<Value>;

/// The key under which serde_json's `arbitrary_precision` feature hands a
/// number to a visitor: a one-entry map from this key to the number's text
/// (serde_json's private `number::TOKEN`).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Parses tagged JSON text (see [`super::from_tagged_str`]).
pub(super) fn from_str(s: &str) -> Result<Value> {
    let mut scratch = Scratch::default();
    // A small document (one object of a streamed model) has too few
    // repeated keys to pay for a cache of its own.
    scratch.keys.direct = s.len() < Keys::WORTH_IT;
    let mut de = serde_json::Deserializer::from_str(s);
    let loaded = Load(&mut scratch)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(super::bad_json)?;
    loaded
}

/// A parser for many small documents in a row (the pieces of a streamed
/// model): its scratch stacks and its cache of keys last from one document
/// to the next, so that a key met before costs one lookup in a small
/// table of this parser's and nothing is allocated but the values.
#[derive(Default)]
pub struct Parser {
    scratch: Scratch,
}

impl Parser {
    /// Parses tagged JSON text, as [`super::from_tagged_str`] does.
    pub fn parse(&mut self, s: &str) -> Result<Value> {
        self.scratch.items.clear();
        self.scratch.entries.clear();
        let mut de = serde_json::Deserializer::from_str(s);
        let loaded = Load(&mut self.scratch)
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(super::bad_json)?;
        loaded
    }
}

/// Parses a sequence of tagged JSON documents separated by whitespace (a
/// stream, as jq reads its input). A malformed document ends the sequence
/// with its error; the documents before it are kept.
pub(super) fn documents(s: &str) -> (Vec<Value>, Option<Error>) {
    let mut scratch = Scratch::default();
    scratch.keys.direct = s.len() < Keys::WORTH_IT;
    let mut de = serde_json::Deserializer::from_str(s);
    let mut docs = Vec::new();
    // `end` only looks past whitespace: it fails, consuming nothing, when
    // another document follows.
    while de.end().is_err() {
        match Load(&mut scratch).deserialize(&mut de) {
            Ok(Ok(v)) => docs.push(v),
            Ok(Err(e)) => return (docs, Some(e)),
            Err(e) => return (docs, Some(super::bad_json(e))),
        }
    }
    (docs, None)
}

/// Elements and entries of the lists and dicts being read, innermost last,
/// and the keys met so far.
#[derive(Default)]
struct Scratch {
    items: Vec<Value>,
    entries: Vec<(Arc<String>, Loaded)>,
    keys: Keys,
}

/// The keys of one parse, each as [`intern`] gave it the first time: the
/// keys of an array of records repeat, and a lookup here is cheaper than one
/// in the intern table. (A key too long for that table is then shared within
/// the parse only.) Bounded, as that table is.
#[derive(Default)]
struct Keys {
    seen: FxHashMap<Box<str>, Arc<String>>,
    /// Ask the intern table directly (a small document).
    direct: bool,
}

impl Keys {
    const MAX_ENTRIES: usize = 1 << 12;

    /// The text length from which a parse keeps its own key cache.
    const WORTH_IT: usize = 16 << 10;

    fn get(&mut self, s: &str) -> Arc<String> {
        if self.direct {
            return intern(s);
        }
        if let Some(k) = self.seen.get(s) {
            return k.clone();
        }
        let k = intern(s);
        if self.seen.len() < Self::MAX_ENTRIES {
            self.seen.insert(s.into(), k.clone());
        }
        k
    }
}

/// Reads one JSON value.
struct Load<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for Load<'_> {
    type Value = Loaded;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Loaded, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Load<'_> {
    type Value = Loaded;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_unit<E>(self) -> Result<Loaded, E> {
        Ok(Ok(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Loaded, E> {
        Ok(Ok(Value::Null))
    }

    fn visit_bool<E>(self, b: bool) -> Result<Loaded, E> {
        Ok(Ok(Value::Bool(b)))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Loaded, E> {
        Ok(Ok(Value::Int(i)))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Loaded, E> {
        Ok(Ok(match i64::try_from(u) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::from_bigint(BigInt::from(u)),
        }))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Loaded, E> {
        // As `serde_json::Value` does: a non-finite float is null. (With
        // `arbitrary_precision` the parser sends floats as text, below.)
        Ok(match serde_json::Number::from_f64(f) {
            Some(n) => super::number(&n),
            None => Ok(Value::Null),
        })
    }

    fn visit_str<E>(self, s: &str) -> Result<Loaded, E> {
        Ok(Ok(Value::str(s)))
    }

    fn visit_string<E>(self, s: String) -> Result<Loaded, E> {
        Ok(Ok(Value::str(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loaded, A::Error> {
        let scratch = self.0;
        let mark = scratch.items.len();
        let mut err = None;
        while let Some(x) = seq.next_element_seed(Load(scratch))? {
            match x {
                Ok(v) if err.is_none() => scratch.items.push(v),
                Ok(_) => {}
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        match err {
            Some(e) => {
                scratch.items.truncate(mark);
                Ok(Err(e))
            }
            None => Ok(Ok(Value::list(scratch.items.drain(mark..).collect()))),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loaded, A::Error> {
        let scratch = self.0;
        let first = match map.next_key_seed(KeySeed(&mut scratch.keys))? {
            None => return Ok(Ok(Value::dict(Dict::default()))),
            // A number under `arbitrary_precision`, or an object whose first
            // key is that token, which `serde_json::Value` reads the same way
            // and then leaves the map (its end is checked by the parser).
            Some(Key::Number) => return Ok(super::number(&map.next_value::<NumberText>()?.0)),
            Some(Key::Name(k)) => k,
        };
        let mark = scratch.entries.len();
        match super::TAGS.iter().find(|t| **t == first.as_str()) {
            Some(tag) => {
                let mut raw: serde_json::Value = map.next_value()?;
                loop {
                    let Some(k) = map.next_key_seed(KeySeed(&mut scratch.keys))? else {
                        return Ok(super::from_tag(tag, &raw));
                    };
                    let k = k.name(&mut scratch.keys);
                    if k.as_str() == *tag {
                        raw = map.next_value()?;
                        continue;
                    }
                    // A second key: a plain dict after all.
                    scratch.entries.push((first, super::from_tagged(&raw)));
                    let v = map.next_value_seed(Load(scratch))?;
                    scratch.entries.push((k, v));
                    break;
                }
            }
            None => {
                let v = map.next_value_seed(Load(scratch))?;
                scratch.entries.push((first, v));
            }
        }
        while let Some(k) = map.next_key_seed(KeySeed(&mut scratch.keys))? {
            let v = map.next_value_seed(Load(scratch))?;
            scratch.entries.push((k.name(&mut scratch.keys), v));
        }
        Ok(dict(scratch.entries.drain(mark..)))
    }
}

/// Builds a dict from entries in document order: a repeated key keeps its
/// first place and takes its last value. The first tag error left in the
/// dict, in its order, is the dict's error.
fn dict(entries: std::vec::Drain<'_, (Arc<String>, Loaded)>) -> Loaded {
    let mut d = Dict::with_capacity_and_hasher(entries.len(), Default::default());
    if entries.as_slice().iter().all(|(_, v)| v.is_ok()) {
        for (k, v) in entries {
            d.insert(Value::Str(k), v?);
        }
        return Ok(Value::dict(d));
    }
    let mut errors: Vec<(usize, Error)> = Vec::new();
    for (k, v) in entries {
        let (i, old) = d.insert_full(Value::Str(k), Value::Null);
        if old.is_some() {
            errors.retain(|(j, _)| *j != i);
        }
        match v {
            Ok(v) => d[i] = v,
            Err(e) => errors.push((i, e)),
        }
    }
    match errors.into_iter().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(Value::dict(d)),
    }
}

/// An object key: interned, as `from_tagged` interns keys.
enum Key {
    /// [`NUMBER_TOKEN`].
    Number,
    Name(Arc<String>),
}

impl Key {
    /// The key as a dict key: past the first key the token is just a name.
    fn name(self, keys: &mut Keys) -> Arc<String> {
        match self {
            Key::Number => keys.get(NUMBER_TOKEN),
            Key::Name(k) => k,
        }
    }
}

struct KeySeed<'a>(&'a mut Keys);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, s: &str) -> Result<Key, E> {
        Ok(if s == NUMBER_TOKEN {
            Key::Number
        } else {
            Key::Name(self.0.get(s))
        })
    }
}

/// A number's text under [`NUMBER_TOKEN`], checked as serde_json's private
/// `NumberFromString` checks it (same expectation, same error).
struct NumberText(serde_json::Number);

impl<'de> Deserialize<'de> for NumberText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<NumberText, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = NumberText;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("string containing a number")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<NumberText, E> {
                s.parse().map(NumberText).map_err(de::Error::custom)
            }
        }
        d.deserialize_str(V)
    }
}

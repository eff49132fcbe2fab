//! Iteration over YAQL collections with the engine's iterator limit.
//!
//! The reference (`utils.limit_iterable`) rejects a materialised collection
//! longer than the limit at once and lets a lazy sequence raise
//! `CollectionTooLargeException` when the element past the limit is pulled.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::value::{LazySeq, ListData, Set, Value};
use crate::Env;

enum Src {
    List(Arc<ListData>, usize),
    Set(Arc<Set>, usize),
    Lazy(Arc<LazySeq>),
    Memo(Arc<LazySeq>, usize),
}

/// An owned iterator over a collection's elements.
pub struct SeqIter {
    src: Src,
    count: usize,
    limit: usize,
}

impl Iterator for SeqIter {
    type Item = Result<Value>;
    fn next(&mut self) -> Option<Result<Value>> {
        match &mut self.src {
            Src::List(l, i) => {
                let v = l.get(*i)?.clone();
                *i += 1;
                Some(Ok(v))
            }
            Src::Set(s, i) => {
                let v = s.get_index(*i)?.clone();
                *i += 1;
                Some(Ok(v))
            }
            Src::Memo(l, i) => {
                if let Err(e) = crate::budget::tick() {
                    return Some(Err(e));
                }
                let r = l.get(*i)?;
                *i += 1;
                if r.is_ok() {
                    if self.count >= self.limit {
                        return Some(Err(Error::too_large()));
                    }
                    self.count += 1;
                }
                Some(r)
            }
            Src::Lazy(l) => {
                if let Err(e) = crate::budget::tick() {
                    return Some(Err(e));
                }
                let r = l.next()?;
                if r.is_ok() {
                    if self.count >= self.limit {
                        return Some(Err(Error::too_large()));
                    }
                    self.count += 1;
                }
                Some(r)
            }
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.src {
            Src::List(l, i) => (l.len() - *i, Some(l.len() - *i)),
            Src::Set(s, i) => (s.len() - *i, Some(s.len() - *i)),
            Src::Lazy(_) | Src::Memo(..) => (0, None),
        }
    }
}

/// Iterates a list, set or lazy sequence (not strings nor dicts), applying
/// the iterator limit.
pub fn iterate(env: &Env, v: &Value) -> Result<SeqIter> {
    let limit = env.limit();
    let src = match v {
        Value::List(l) => {
            if l.len() > limit {
                return Err(Error::too_large());
            }
            Src::List(l.clone(), 0)
        }
        Value::Set(s) => {
            if s.len() > limit {
                return Err(Error::too_large());
            }
            Src::Set(s.clone(), 0)
        }
        Value::Iter(l) if l.is_memo() => Src::Memo(l.clone(), 0),
        Value::Iter(l) => Src::Lazy(l.clone()),
        Value::Dict(d) if env.options().legacy => {
            // yaql 0.2 iterates dictionaries over their keys.
            if d.len() > limit {
                return Err(Error::too_large());
            }
            Src::List(Arc::new(d.keys().cloned().collect()), 0)
        }
        other => {
            return Err(Error::type_(format!(
                "'{}' object is not iterable",
                other.type_name()
            )))
        }
    };
    Ok(SeqIter {
        src,
        count: 0,
        limit,
    })
}

/// Iterates without checking the limit on materialised collections (used
/// internally where the reference does not pass through a typed parameter).
pub fn iterate_unlimited(v: &Value) -> Result<SeqIter> {
    let src = match v {
        Value::List(l) => Src::List(l.clone(), 0),
        Value::Set(s) => Src::Set(s.clone(), 0),
        Value::Iter(l) if l.is_memo() => Src::Memo(l.clone(), 0),
        Value::Iter(l) => Src::Lazy(l.clone()),
        other => {
            return Err(Error::type_(format!(
                "'{}' object is not iterable",
                other.type_name()
            )))
        }
    };
    Ok(SeqIter {
        src,
        count: 0,
        limit: usize::MAX,
    })
}

/// Collects into a vector with the limit.
pub fn to_vec(env: &Env, v: &Value) -> Result<Vec<Value>> {
    if let Value::List(l) = v {
        if l.len() > env.limit() {
            return Err(Error::too_large());
        }
        return Ok(l.to_vec());
    }
    iterate(env, v)?.collect()
}

/// Returns a shared list: the list itself when already materialised.
pub fn to_list(env: &Env, v: &Value) -> Result<Arc<ListData>> {
    if let Value::List(l) = v {
        if l.len() > env.limit() {
            return Err(Error::too_large());
        }
        return Ok(l.clone());
    }
    let items = iterate(env, v)?.collect::<Result<Vec<_>>>()?;
    Ok(crate::value::list_arc(items))
}

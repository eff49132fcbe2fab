//! Partitioning: `takeWhile`, `skipWhile`, `slice`, `splitAt` and the like.

use super::common::*;
use super::fused::call;

use runtime::registry::{Args, Cx};
use runtime::{Result, Value};

/// `collection.takeWhile(predicate)` (`queries.take_while`).
///
/// Matches yaql `queries.take_while` (`takeWhile`).
///
/// ```yaql
/// [1, 2, 3, 4, 5].takeWhile($ < 4)
/// # => [1, 2, 3]
/// sequence().takeWhile($ < 3)
/// # => [0, 1, 2]
/// ```
pub(super) fn take_while(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let f = a.get(1).clone();
    let env = cx.env.clone();
    let mut done = false;
    Ok(gen(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let x = tri!(it.next()?);
        if tri!(call(&env, &f, std::slice::from_ref(&x))).truthy() {
            Some(Ok(x))
        } else {
            done = true;
            None
        }
    })))
}

/// `collection.skipWhile(predicate)` (`queries.skip_while`).
///
/// Matches yaql `queries.skip_while` (`skipWhile`).
///
/// ```yaql
/// [1, 2, 3, 4, 5].skipWhile($ < 3)
/// # => [3, 4, 5]
/// [5, 1, 6].skipWhile($ < 4)
/// # => [5, 1, 6]
/// ```
pub(super) fn skip_while(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let f = a.get(1).clone();
    let env = cx.env.clone();
    let mut dropping = true;
    Ok(gen(std::iter::from_fn(move || {
        if dropping {
            loop {
                let x = tri!(it.next()?);
                if !tri!(call(&env, &f, std::slice::from_ref(&x))).truthy() {
                    dropping = false;
                    return Some(Ok(x));
                }
            }
        }
        it.next()
    })))
}

/// `collection.slice(length)` (`queries.slice_`).
///
/// Matches yaql `queries.slice_` (`slice`).
///
/// ```yaql
/// range(1, 6).slice(2)
/// # => [[1, 2], [3, 4], [5]]
/// [1, 2].slice(5)
/// # => [[1, 2]]
/// ```
pub(super) fn slice(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let n = int_arg(&a, 1)?;
    let mut done = false;
    Ok(gen(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let n = tri!(islice_count(n));
        let mut chunk = Vec::new();
        while chunk.len() < n {
            match it.next() {
                Some(r) => chunk.push(tri!(r)),
                None => break,
            }
        }
        if chunk.is_empty() {
            done = true;
            None
        } else {
            Some(Ok(Value::list(chunk)))
        }
    })))
}

/// `collection.splitWhere(predicate)` (`queries.split_where`).
///
/// Matches yaql `queries.split_where` (`splitWhere`). A leading delimiter
/// gives an empty first part; a trailing one gives no empty last part.
///
/// ```yaql
/// [1, 2, 3, 4, 5, 6, 7].splitWhere($ mod 3 = 0)
/// # => [[1, 2], [4, 5], [7]]
/// range(1, 6).splitWhere($ mod 3 = 1)
/// # => [[], [2, 3], [5]]
/// [1, 2, 3].splitWhere($ = 3)
/// # => [[1, 2]]
/// ```
pub(super) fn split_where(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = Some(cx.iter(a.get(0))?);
    let f = a.get(1).clone();
    let env = cx.env.clone();
    let mut lst: Vec<Value> = Vec::new();
    let (mut start, mut end) = (0usize, 0usize);
    let mut finished = false;
    Ok(gen(std::iter::from_fn(move || {
        if let Some(src) = it.take() {
            lst = tri!(src.collect::<Result<Vec<_>>>());
        }
        while end < lst.len() {
            let hit = tri!(call(&env, &f, &[lst[end].clone()])).truthy();
            end += 1;
            if hit {
                let part = lst[start..end - 1].to_vec();
                start = end;
                return Some(Ok(Value::list(part)));
            }
        }
        if !finished && start != end {
            finished = true;
            return Some(Ok(Value::list(lst[start..end].to_vec())));
        }
        None
    })))
}

/// `collection.sliceWhere(predicate)` (`queries.slice_where`).
///
/// Matches yaql `queries.slice_where` (`sliceWhere`).
///
/// ```yaql
/// [1, 2, 3, 4, 5, 6, 7].sliceWhere($ mod 3 = 0)
/// # => [[1, 2], [3], [4, 5], [6], [7]]
/// ['a', 'a', 'b', 'a', 'a'].sliceWhere($ != 'a')
/// # => [["a", "a"], ["b"], ["a", "a"]]
/// ```
pub(super) fn slice_where(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = Some(cx.iter(a.get(0))?);
    let f = a.get(1).clone();
    let env = cx.env.clone();
    let mut lst: Vec<Value> = Vec::new();
    let (mut start, mut end) = (0usize, 0usize);
    let mut p1: Option<Value> = None;
    let mut finished = false;
    Ok(gen(std::iter::from_fn(move || {
        if let Some(src) = it.take() {
            lst = tri!(src.collect::<Result<Vec<_>>>());
        }
        while end < lst.len() {
            let p2 = tri!(call(&env, &f, &[lst[end].clone()]));
            let cut = matches!(&p1, Some(p) if *p != p2);
            p1 = Some(p2);
            if cut {
                let part = lst[start..end].to_vec();
                start = end;
                end += 1;
                return Some(Ok(Value::list(part)));
            }
            end += 1;
        }
        if !finished && start != end {
            finished = true;
            return Some(Ok(Value::list(lst[start..end].to_vec())));
        }
        None
    })))
}

/// `collection.splitAt(index)` (`queries.split_at`).
///
/// Matches yaql `queries.split_at` (`splitAt`). The index is a Python slice
/// index (negative counts from the end).
///
/// ```yaql
/// [1, 2, 3, 4].splitAt(1)
/// # => [[1], [2, 3, 4]]
/// [1, 2, 3, 4].splitAt(-1)
/// # => [[1, 2, 3], [4]]
/// [1, 2].splitAt(5)
/// # => [[1, 2], []]
/// ```
pub(super) fn split_at(cx: &Cx, a: Args) -> Result<Value> {
    let lst = cx.to_vec(a.get(0))?;
    let idx = int_arg(&a, 1)?;
    let n = lst.len() as i64;
    let cut = if idx < 0 {
        (n + idx).max(0)
    } else {
        idx.min(n)
    } as usize;
    Ok(Value::list(vec![
        Value::list(lst[..cut].to_vec()),
        Value::list(lst[cut..].to_vec()),
    ]))
}

/// `collection.reverse()` (`queries.reverse`): a reversed iterator over
/// the collection evaluated to a list.
///
/// Matches yaql `queries.reverse` (`reverse`).
///
/// ```yaql
/// [1, 2, 3, 4].reverse()
/// # => [4, 3, 2, 1]
/// range(3).reverse()
/// # => [2, 1, 0]
/// ```
pub(super) fn reverse(cx: &Cx, a: Args) -> Result<Value> {
    let lst = cx.to_vec(a.get(0))?;
    Ok(gen(lst.into_iter().rev().map(Ok)))
}

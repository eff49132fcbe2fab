//! Paths into an object model, as murano's `TraverseHelper`
//! (`murano/common/utils.py`) reads them: `/services/ID/name` is the key
//! `services`, then the object of that list whose `?.id` is `ID` (or, when
//! no object has that id and `ID` is a number, the item at that index),
//! then the key `name`.

use serde_json::Value as J;

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The index in `list` that `seg` names: the object whose `?.id` is `seg`,
/// else the index `seg` when it is a number in range.
fn position(list: &[J], seg: &str) -> Option<usize> {
    let by_id = list.iter().position(|item| {
        item.get("?")
            .and_then(|h| h.get("id"))
            .and_then(J::as_str)
            .is_some_and(|id| id == seg)
    });
    by_id.or_else(|| {
        let i: usize = seg.parse().ok()?;
        (i < list.len()).then_some(i)
    })
}

fn step<'a>(source: &'a J, seg: &str) -> Option<&'a J> {
    match source {
        J::Array(list) => position(list, seg).map(|i| &list[i]),
        J::Object(map) => map.get(seg),
        _ => None,
    }
}

fn step_mut<'a>(source: &'a mut J, seg: &str) -> Option<&'a mut J> {
    match source {
        J::Array(list) => {
            let i = position(list, seg)?;
            list.get_mut(i)
        }
        J::Object(map) => map.get_mut(seg),
        _ => None,
    }
}

/// The value at `path` (`/` or empty: `source` itself).
pub fn get<'a>(path: &str, source: &'a J) -> Option<&'a J> {
    segments(path).into_iter().try_fold(source, step)
}

/// The value at `path`, to change.
pub fn get_mut<'a>(path: &str, source: &'a mut J) -> Option<&'a mut J> {
    segments(path).into_iter().try_fold(source, step_mut)
}

/// The parent of `path` and the last segment.
fn parent_mut<'a, 'p>(path: &'p str, source: &'a mut J) -> Option<(&'a mut J, &'p str)> {
    let segs = segments(path);
    let (last, init) = segs.split_last()?;
    let parent = init.iter().try_fold(source, |s, seg| step_mut(s, seg))?;
    Some((parent, last))
}

/// Sets the value at `path` (murano's `update`): a key of an object
/// (added when missing), or an item of a list named by id or index.
/// `false` when the parent is not there.
pub fn update(path: &str, value: J, source: &mut J) -> bool {
    let Some((parent, key)) = parent_mut(path, source) else {
        return false;
    };
    match parent {
        J::Object(map) => {
            map.insert(key.to_string(), value);
            true
        }
        J::Array(list) => match position(list, key) {
            Some(i) => {
                list[i] = value;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Appends `value` to the list at `path` (murano's `insert`), or its
/// items when `value` is a list (murano's `extend`). `false` when there is
/// no list there.
pub fn insert(path: &str, value: J, source: &mut J) -> bool {
    match get_mut(path, source) {
        Some(J::Array(list)) => {
            match value {
                J::Array(items) => list.extend(items),
                v => list.push(v),
            }
            true
        }
        _ => false,
    }
}

/// Removes the value at `path` (murano's `remove`). `false` when there is
/// none.
pub fn remove(path: &str, source: &mut J) -> bool {
    let Some((parent, key)) = parent_mut(path, source) else {
        return false;
    };
    match parent {
        J::Object(map) => map.shift_remove(key).is_some(),
        J::Array(list) => match position(list, key) {
            Some(i) => {
                list.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model() -> J {
        json!({"services": [
            {"?": {"id": "a"}, "name": "one"},
            {"?": {"id": "b"}, "name": "two"},
        ]})
    }

    #[test]
    fn paths_name_items_by_id_or_index() {
        let m = model();
        assert_eq!(get("/services/b/name", &m), Some(&json!("two")));
        assert_eq!(get("/services/0/name", &m), Some(&json!("one")));
        assert_eq!(get("/services/c", &m), None);
        assert_eq!(get("/", &m), Some(&m));
    }

    #[test]
    fn edits() {
        let mut m = model();
        assert!(update("/services/a/name", json!("uno"), &mut m));
        assert!(insert("/services", json!({"?": {"id": "c"}}), &mut m));
        assert!(remove("/services/b", &mut m));
        assert!(!remove("/services/b", &mut m));
        let ids: Vec<_> = m["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["?"]["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(m["services"][0]["name"], "uno");
        assert!(update("/services", json!([]), &mut m));
        assert_eq!(m["services"], json!([]));
    }
}

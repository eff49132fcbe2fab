//! Where JSON paths (`$.Objects.servers[9].port`) are in a document's
//! text, so that a report about a value can name its line and column.
//!
//! One pass over text that has already parsed as JSON, with an explicit
//! stack (documents nest as deep as the parser allowed), no values built.
//! A member is found at its key, an array element at its first character.
//! Where a key occurs twice in an object, the JSON reader keeps the last
//! value, so the last occurrence is the one found.

use std::collections::HashMap;

/// The byte offsets of those of `wanted` that occur in `text`, a JSON
/// document (of a path that occurs more than once, through duplicate
/// keys, the last). A path that starts with `$.Objects` is also looked for
/// under `$` (a model may be the objects themselves, without the
/// `Objects` key), where it is not found as it is.
pub fn locate(text: &str, wanted: &[&str]) -> HashMap<String, usize> {
    scan(text, wanted, false)
}

/// [`locate`] in the first JSON value of `text`, which may go on with
/// more text (the rest of a document read from the middle).
pub fn locate_in_first(text: &str, wanted: &[&str]) -> HashMap<String, usize> {
    scan(text, wanted, true)
}

fn scan(text: &str, wanted: &[&str], first_only: bool) -> HashMap<String, usize> {
    let mut want: HashMap<String, &str> = HashMap::new();
    for w in wanted {
        if let Some(rest) = w.strip_prefix("$.Objects") {
            want.entry(format!("${rest}")).or_insert(w);
        }
    }
    for w in wanted {
        want.insert(w.to_string(), w);
    }
    let mut found = Found::default();
    let mut scan = Scan::default();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' | b'[' => {
                scan.value_at(i, &want, &mut found);
                scan.open(c == b'{');
                i += 1;
            }
            b'}' | b']' => {
                scan.close();
                i += 1;
                if first_only && scan.stack.is_empty() {
                    break;
                }
            }
            b',' => {
                scan.next_item();
                i += 1;
            }
            b'"' => {
                let end = string_end(b, i);
                if scan.expects_key() {
                    let raw = &text[i..end];
                    let key = serde_json::from_str::<String>(raw)
                        .unwrap_or_else(|_| raw.trim_matches('"').to_string());
                    scan.key(&key, i);
                } else {
                    scan.value_at(i, &want, &mut found);
                }
                i = end;
            }
            b':' => i += 1,
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                scan.value_at(i, &want, &mut found);
                while i < b.len()
                    && !matches!(b[i], b',' | b'}' | b']')
                    && !b[i].is_ascii_whitespace()
                {
                    i += 1;
                }
            }
        }
    }
    let mut at = found.under_root;
    at.extend(found.exact);
    at
}

/// The offsets found so far: of paths as they are wanted, and of paths
/// found under `$` for `$.Objects` (see [`locate`]).
#[derive(Default)]
struct Found {
    exact: HashMap<String, usize>,
    under_root: HashMap<String, usize>,
}

/// The offset just past the string starting at `start` (a `"`).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// An open container: the length of the path at it, and for an object
/// the offset of the current key (`None` while a key is expected), for an
/// array the current index.
enum Open {
    Object { base: usize, key_at: Option<usize> },
    Array { base: usize, index: usize },
}

#[derive(Default)]
struct Scan {
    path: String,
    stack: Vec<Open>,
}

impl Scan {
    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some(Open::Object { key_at: None, .. }))
    }

    fn open(&mut self, object: bool) {
        let base = self.path.len();
        self.stack.push(if object {
            Open::Object { base, key_at: None }
        } else {
            Open::Array { base, index: 0 }
        });
    }

    fn close(&mut self) {
        if let Some(Open::Object { base, .. } | Open::Array { base, .. }) = self.stack.pop() {
            self.path.truncate(base);
        }
    }

    fn next_item(&mut self) {
        match self.stack.last_mut() {
            Some(Open::Object { key_at, .. }) => *key_at = None,
            Some(Open::Array { index, .. }) => *index += 1,
            None => {}
        }
    }

    fn key(&mut self, key: &str, at: usize) {
        if let Some(Open::Object { base, key_at }) = self.stack.last_mut() {
            self.path.truncate(*base);
            self.path.push('.');
            self.path.push_str(key);
            *key_at = Some(at);
        }
    }

    /// A value starts at `at`: records it when its path is wanted.
    fn value_at(&mut self, at: usize, want: &HashMap<String, &str>, found: &mut Found) {
        let at = match self.stack.last_mut() {
            None => {
                self.path = "$".into();
                at
            }
            Some(Open::Object { key_at, .. }) => key_at.unwrap_or(at),
            Some(Open::Array { base, index }) => {
                self.path.truncate(*base);
                self.path.push_str(&format!("[{index}]"));
                at
            }
        };
        if let Some(&w) = want.get(&self.path) {
            let found = if w == self.path {
                &mut found.exact
            } else {
                &mut found.under_root
            };
            // A later occurrence (a duplicate key) replaces an earlier one.
            found.insert(w.to_string(), at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn the_first_value_ends_the_search_when_asked() {
        let text = r#"{"port": 1, "x": {"port": 2}}, {"port": 3}] }"#;
        let first = super::locate_in_first(text, &["$.port", "$.x.port"]);
        assert_eq!(first.get("$.port"), Some(&1));
        assert_eq!(first.get("$.x.port"), Some(&18));
        // Read on, the next value would be taken for a root of its own.
        assert_eq!(locate(text, &["$.port"]).get("$.port"), Some(&32));
    }

    #[test]
    fn paths_are_found_at_their_keys_and_elements() {
        let text = r#"{"Objects": {"servers": [{"port": 1}, {"na\"me": "x", "port": [7, 8]}]}}"#;
        let got = locate(
            text,
            &[
                "$.Objects.servers[1].port",
                "$.Objects.servers[0]",
                "$.Objects.servers[1].port[1]",
                "$.Objects.servers[1].na\"me",
                "$.Objects.nothing",
            ],
        );
        let at = |p: &str| got.get(p).map(|&i| &text[i..i + 6]);
        assert_eq!(at("$.Objects.servers[1].port"), Some("\"port\""));
        assert_eq!(at("$.Objects.servers[0]"), Some("{\"port"));
        assert_eq!(
            got.get("$.Objects.servers[1].port[1]")
                .map(|&i| &text[i..i + 1]),
            Some("8")
        );
        assert!(got.contains_key("$.Objects.servers[1].na\"me"));
        assert!(!got.contains_key("$.Objects.nothing"));
    }

    #[test]
    fn of_duplicate_keys_the_last_is_found_as_the_reader_keeps_its_value() {
        let text = r#"{"a": {"p": 1, "p": 2}, "a": {"p": 3, "q": [4, 5], "q": [6]}}"#;
        let got = locate(text, &["$.a.p", "$.a.q[0]", "$.a"]);
        let at = |p: &str, n: usize| got.get(p).map(|&i| &text[i..i + n]);
        assert_eq!(at("$.a.p", 6), Some("\"p\": 3"));
        assert_eq!(at("$.a.q[0]", 2), Some("6]"));
        assert_eq!(got.get("$.a"), Some(&24));
    }

    #[test]
    fn a_path_under_the_objects_key_wins_over_one_under_the_root() {
        let text = r#"{"Objects": {"port": 1}, "port": 2}"#;
        let got = locate(text, &["$.Objects.port"]);
        assert_eq!(got.get("$.Objects.port"), Some(&13));
    }

    #[test]
    fn a_model_without_the_objects_key_is_the_objects() {
        let text = "{\"?\": {}, \"port\": 2}";
        let got = locate(text, &["$.Objects.port"]);
        assert_eq!(got.get("$.Objects.port"), Some(&10));
    }
}

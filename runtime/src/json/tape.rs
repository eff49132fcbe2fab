//! A validating scan of small JSON texts into a flat tape of nodes, read in
//! place: no value is built, strings are slices of the text.
//!
//! It is the fast path of a reader that only needs to look at a document
//! (streamed validation reads an object's properties for its contracts'
//! machine code and builds values only for objects that fail). So it
//! declines, rather than answers, whatever it does not read exactly as
//! [`super::from_tagged_str`] would: [`Tape::scan`] is false for malformed
//! JSON and also for valid text with a backslash in a string (escapes),
//! a key that may be a tag (`$...`), a key named twice among those asked
//! for, or nesting deeper than [`Tape::MAX_DEPTH`]. A caller then parses
//! the text the ordinary way, which gives the values or the error.
//!
//! Numbers are described as the loader makes them: an integer that fits
//! 64 bits is [`Num::Int`], a longer one [`Num::Big`], anything with a
//! fraction or an exponent a float parsed from its text.

/// One value of a scanned document, in document order: a container's node
/// is followed by its children (a dict's as key, value, key, value...).
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// What the value is.
    pub kind: Kind,
    /// Of a string or a key: the byte range of its text (no quotes).
    /// Of a container: its number of items or entries in `end`.
    start: u32,
    end: u32,
    /// The index of the node after this one's subtree.
    pub next: u32,
    /// Of a key: its index in the keys the scan was given (`u32::MAX`
    /// when none). Of an integer or a float: its bits.
    word: u64,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Num(Num),
    /// A string (without escapes).
    Str,
    /// A list, followed by its items.
    List,
    /// A dict, followed by its entries: a key node, then its value.
    Dict,
    /// A dict's key.
    Key,
}

/// What a number is as the loader makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Num {
    /// An integer that fits 64 bits.
    Int,
    /// An integer that does not.
    Big,
    /// A number with a fraction or an exponent.
    Float,
}

/// The nodes of the last document scanned, and flags about it.
#[derive(Default)]
pub struct Tape {
    nodes: Vec<Node>,
    /// Open containers: the index of each one's node.
    open: Vec<u32>,
    /// A dict below the top level has a `?` key or a value that is null
    /// or a dict.
    nested_flags: bool,
}

const NO_KEY: u64 = u32::MAX as u64;

impl Tape {
    /// Nesting the scan follows; deeper text is declined.
    pub const MAX_DEPTH: usize = 32;

    /// Scans `text`, one JSON value with optional whitespace around it,
    /// matching each dict key against `keys` (the first equal one). False
    /// when the text is declined (see the module's doc); the tape is then
    /// not to be read.
    pub fn scan<K: AsRef<str>>(&mut self, text: &str, keys: &[K]) -> bool {
        self.nodes.clear();
        self.open.clear();
        self.nested_flags = false;
        let mut s = Scan {
            b: text.as_bytes(),
            i: 0,
            tape: self,
        };
        s.document(keys).is_some()
    }

    /// The node at `at` (the document is node 0).
    pub fn node(&self, at: u32) -> &Node {
        &self.nodes[at as usize]
    }

    /// True when a dict below the top level has a `?` key or a null or
    /// dict value (a reader of object models treats those apart).
    pub fn nested_flags(&self) -> bool {
        self.nested_flags
    }

    /// The text of a string or key node.
    pub fn str<'t>(&self, text: &'t str, n: &Node) -> &'t str {
        &text[n.start as usize..n.end as usize]
    }

    /// A container's number of items or entries.
    pub fn len(&self, n: &Node) -> usize {
        n.end as usize
    }

    /// Of a key node, its index in the scan's keys.
    pub fn key_index(&self, n: &Node) -> Option<usize> {
        (n.kind == Kind::Key && n.word != NO_KEY).then_some(n.word as usize)
    }

    /// The value of an integer node.
    pub fn int(&self, n: &Node) -> i64 {
        n.word as i64
    }

    /// The value of a float node.
    pub fn float(&self, n: &Node) -> f64 {
        f64::from_bits(n.word)
    }
}

struct Scan<'a, 't> {
    b: &'a [u8],
    i: usize,
    tape: &'t mut Tape,
}

impl Scan<'_, '_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn push(&mut self, kind: Kind, start: usize, end: usize, word: u64) -> usize {
        let at = self.tape.nodes.len();
        self.tape.nodes.push(Node {
            kind,
            start: start as u32,
            end: end as u32,
            next: at as u32 + 1,
            word,
        });
        at
    }

    fn document<K: AsRef<str>>(&mut self, keys: &[K]) -> Option<()> {
        if self.b.len() >= u32::MAX as usize {
            return None;
        }
        self.ws();
        self.value(keys, 0)?;
        self.ws();
        (self.i == self.b.len()).then_some(())
    }

    fn value<K: AsRef<str>>(&mut self, keys: &[K], depth: usize) -> Option<()> {
        match *self.b.get(self.i)? {
            b'{' => self.dict(keys, depth),
            b'[' => self.list(keys, depth),
            b'"' => {
                let (start, end) = self.string()?;
                self.push(Kind::Str, start, end, 0);
                Some(())
            }
            b't' => self.literal(b"true", Kind::Bool(true)),
            b'f' => self.literal(b"false", Kind::Bool(false)),
            b'n' => self.literal(b"null", Kind::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<()> {
        if !self.b[self.i..].starts_with(word) {
            return None;
        }
        self.i += word.len();
        self.push(kind, 0, 0, 0);
        Some(())
    }

    /// A string at `"`: the range of its text. Declines escapes.
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.i + 1;
        let mut i = start;
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => i += 1,
            }
        }
        self.i = i + 1;
        Some((start, i))
    }

    /// Reads digits: how many, and their value while it fits 64 bits.
    #[inline]
    fn digits(&mut self) -> (usize, Option<u64>) {
        let from = self.i;
        let mut value = Some(0u64);
        while let Some(&d) = self.b.get(self.i) {
            if !d.is_ascii_digit() {
                break;
            }
            value = value
                .and_then(|v| v.checked_mul(10))
                .and_then(|v| v.checked_add(u64::from(d - b'0')));
            self.i += 1;
        }
        (self.i - from, value)
    }

    fn number(&mut self) -> Option<()> {
        let start = self.i;
        let negative = self.b[self.i] == b'-';
        if negative {
            self.i += 1;
        }
        let int = match self.b.get(self.i)? {
            b'0' => {
                self.i += 1;
                Some(0)
            }
            b'1'..=b'9' => self.digits().1,
            _ => return None,
        };
        let mut float = false;
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits().0 == 0 {
                return None;
            }
            float = true;
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits().0 == 0 {
                return None;
            }
            float = true;
        }
        let (num, word) = if float {
            // The text is ASCII from `start` to here.
            let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
            (Num::Float, text.parse::<f64>().ok()?.to_bits())
        } else {
            let int = int.and_then(|v| {
                if negative {
                    0i64.checked_sub_unsigned(v)
                } else {
                    i64::try_from(v).ok()
                }
            });
            match int {
                Some(n) => (Num::Int, n as u64),
                None => (Num::Big, 0),
            }
        };
        self.push(Kind::Num(num), start, self.i, word);
        Some(())
    }

    fn list<K: AsRef<str>>(&mut self, keys: &[K], depth: usize) -> Option<()> {
        if depth >= Tape::MAX_DEPTH {
            return None;
        }
        let at = self.push(Kind::List, 0, 0, 0);
        self.i += 1;
        self.ws();
        let mut n = 0;
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                self.value(keys, depth + 1)?;
                n += 1;
                self.ws();
                match self.b.get(self.i)? {
                    b',' => self.i += 1,
                    b']' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.close(at, n);
        Some(())
    }

    fn dict<K: AsRef<str>>(&mut self, keys: &[K], depth: usize) -> Option<()> {
        if depth >= Tape::MAX_DEPTH {
            return None;
        }
        let at = self.push(Kind::Dict, 0, 0, 0);
        self.i += 1;
        self.ws();
        let mut n = 0;
        // The asked-for keys met (the first 64), to decline one named twice.
        let mut seen = 0u64;
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                if self.b.get(self.i) != Some(&b'"') {
                    return None;
                }
                let (start, end) = self.string()?;
                let key = &self.b[start..end];
                if key.first() == Some(&b'$') {
                    return None;
                }
                let found = keys.iter().position(|k| same(k.as_ref().as_bytes(), key));
                if let Some(k) = found {
                    if k >= 64 || seen & (1 << k) != 0 {
                        return None;
                    }
                    seen |= 1 << k;
                }
                let word = found.map_or(NO_KEY, |k| k as u64);
                self.push(Kind::Key, start, end, word);
                self.ws();
                if self.b.get(self.i) != Some(&b':') {
                    return None;
                }
                self.i += 1;
                self.ws();
                let value = self.tape.nodes.len();
                self.value(keys, depth + 1)?;
                if depth > 0
                    && (key == b"?"
                        || matches!(self.tape.nodes[value].kind, Kind::Null | Kind::Dict))
                {
                    self.tape.nested_flags = true;
                }
                n += 1;
                self.ws();
                match self.b.get(self.i)? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.close(at, n);
        Some(())
    }

    /// Ends the container at `at`, of `n` children.
    fn close(&mut self, at: usize, n: usize) {
        let next = self.tape.nodes.len() as u32;
        let node = &mut self.tape.nodes[at];
        node.end = n as u32;
        node.next = next;
    }
}

/// Byte-slice equality for short keys, without a call into `memcmp`.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::from_tagged_str;
    use crate::Value;

    /// The tape of `text` read back as a value, for comparison with the
    /// loader's.
    fn back(tape: &Tape, text: &str, at: u32) -> (Value, u32) {
        let n = *tape.node(at);
        let v = match n.kind {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(b),
            Kind::Num(Num::Int) => Value::Int(tape.int(&n)),
            Kind::Num(Num::Float) => Value::Float(tape.float(&n)),
            Kind::Num(Num::Big) => from_tagged_str(tape.str(text, &n)).unwrap(),
            Kind::Str | Kind::Key => Value::str(tape.str(text, &n)),
            Kind::List => {
                let mut items = Vec::new();
                let mut i = at + 1;
                for _ in 0..tape.len(&n) {
                    let (v, next) = back(tape, text, i);
                    items.push(v);
                    i = next;
                }
                Value::list(items)
            }
            Kind::Dict => {
                let mut d = crate::Dict::default();
                let mut i = at + 1;
                for _ in 0..tape.len(&n) {
                    let k = Value::str(tape.str(text, tape.node(i)));
                    let (v, next) = back(tape, text, i + 1);
                    d.insert(k, v);
                    i = next;
                }
                Value::dict(d)
            }
        };
        assert_eq!(n.next, tape.node(at).next);
        (v, n.next)
    }

    fn scanned(text: &str) -> Option<Value> {
        let mut tape = Tape::default();
        tape.scan(text, &["a", "b"]).then(|| back(&tape, text, 0).0)
    }

    #[test]
    fn documents_read_back_as_the_loader_reads_them() {
        for text in [
            r#"{"a": 1, "b": [true, false, null], "c": {"d": "x"}}"#,
            " [1, -0, 2.5, -1e3, 1E+2, 0.0, 9223372036854775807] ",
            "[-9223372036854775808, 9223372036854775808, 123456789012345678901234567890]",
            r#"{"": "", "é": "ü€𝄞"}"#,
            "[[], {}, [[]], {\"a\": {}}]",
            "\t\r\n\"s\"\n",
            "1e400",
        ] {
            let want = from_tagged_str(text).unwrap();
            assert_eq!(scanned(text), Some(want), "{text}");
        }
    }

    #[test]
    fn malformed_and_unusual_text_is_declined() {
        for text in [
            "",
            " ",
            "{",
            "[1,]",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "{a:1}",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "tru",
            "nul",
            "[1]]",
            "1 2",
            "\"a",
            "\"\u{1}\"",
        ] {
            assert_eq!(scanned(text), None, "{text:?}");
            assert!(from_tagged_str(text).is_err(), "{text:?} is malformed");
        }
        // Read exactly only by the loader: escapes, tags, repeated keys.
        for text in [
            r#""a\"b""#,
            r#""\u0041""#,
            r#"{"$float": "nan"}"#,
            r#"{"a": 1, "a": 2}"#,
        ] {
            assert_eq!(scanned(text), None, "{text:?}");
            assert!(from_tagged_str(text).is_ok(), "{text:?} is valid");
        }
        // A key not asked for may repeat: the reader sees it as unknown.
        assert!(scanned(r#"{"c": 1, "c": 2}"#).is_some());
        let deep = "[".repeat(Tape::MAX_DEPTH + 1) + &"]".repeat(Tape::MAX_DEPTH + 1);
        assert_eq!(scanned(&deep), None);
        let ok = "[".repeat(Tape::MAX_DEPTH) + &"]".repeat(Tape::MAX_DEPTH);
        assert!(scanned(&ok).is_some());
    }

    #[test]
    fn numbers_are_of_the_loader_s_kind() {
        let mut tape = Tape::default();
        for (text, kind) in [
            ("0", Num::Int),
            ("-0", Num::Int),
            ("0.0", Num::Float),
            ("1e2", Num::Float),
            ("-9223372036854775809", Num::Big),
        ] {
            assert!(tape.scan(text, &[""; 0]));
            assert_eq!(tape.node(0).kind, Kind::Num(kind), "{text}");
        }
    }

    #[test]
    fn keys_are_matched_and_nested_dicts_flagged() {
        let mut tape = Tape::default();
        let text = r#"{"?": {"id": "x"}, "b": 2, "zz": {"a": null}}"#;
        assert!(tape.scan(text, &["a", "b", "?"]));
        assert_eq!(tape.key_index(tape.node(1)), Some(2));
        let b = tape.node(tape.node(2).next);
        assert_eq!((b.kind, tape.key_index(b)), (Kind::Key, Some(1)));
        assert!(tape.nested_flags(), "a null under a nested dict");
        assert!(tape.scan(r#"{"?": {"id": "x"}, "b": null}"#, &["b"]));
        assert!(!tape.nested_flags(), "the top level's values are its own");
        assert!(tape.scan(r#"[{"?": 1}]"#, &["b"]));
        assert!(tape.nested_flags(), "a `?` below the top");
    }
}

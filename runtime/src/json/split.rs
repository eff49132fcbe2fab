//! One large JSON text as a stream of pieces that parse on their own, so
//! that a document bigger than what should be held in memory can be read
//! once, front to back, and its pieces parsed and checked on several
//! threads.
//!
//! A container whose text grows longer than the chunk size is a *spine*:
//! the splitter reports where it opens ([`Piece::Open`]) and closes
//! ([`Piece::Close`]), and each of its direct children as a
//! [`Piece::Unit`], the complete text of one JSON value (however deep),
//! unless the child is itself a spine. A document no longer than the chunk
//! size is one unit. Keys of spine dicts are decoded; list children are
//! reported in order and carry no key.
//!
//! The splitter reads brackets, strings, commas and colons, and rejects
//! text that is not JSON at that level (a missing comma, an unclosed
//! string, trailing text, nesting deeper than the limit). The inside of a
//! unit, numbers and literals included, is checked by whoever parses it.
//! Memory stays proportional to the chunk size plus one read block, except
//! for a single unit longer than the chunk (a huge string), which is held
//! whole.

use std::io::Read;

/// What [`split`] reports, in document order.
#[derive(Debug, PartialEq)]
pub enum Piece<'a> {
    /// A spine container opens; its children follow until its [`Piece::Close`].
    Open {
        /// Its key, when its parent is a dict.
        key: Option<String>,
        /// A list (else a dict).
        list: bool,
        /// Byte offset of its opening bracket.
        offset: u64,
    },
    /// A complete value: a direct child of the innermost open spine, or the
    /// whole document.
    Unit {
        /// Its key, when its parent is a dict.
        key: Option<String>,
        /// Byte offset of its first byte.
        offset: u64,
        /// Its text.
        text: &'a [u8],
    },
    /// The innermost open spine closes.
    Close,
}

/// Why a text could not be split: malformed JSON at the level the splitter
/// reads, a read error, or the consumer's own error.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitError {
    /// Byte offset where it was found.
    pub offset: u64,
    /// What was wrong.
    pub message: String,
}

/// The size of one read.
const BLOCK: usize = 1 << 20;

/// Splits the JSON text read from `input` into pieces (see the module
/// documentation), calling `sink` with each. Containers nested deeper than
/// `max_depth` are an error. `sink` may stop the split with a message.
pub fn split(
    input: impl Read,
    chunk: usize,
    max_depth: usize,
    sink: impl FnMut(Piece<'_>) -> Result<(), String>,
) -> Result<(), SplitError> {
    Splitter {
        input,
        buf: Vec::new(),
        block: vec![0; BLOCK],
        base: 0,
        at: 0,
        eof: false,
        stack: Vec::new(),
        spines: 0,
        token: None,
        root_done: false,
        chunk: chunk.max(1) as u64,
        max_depth,
        sink,
    }
    .run()
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    /// Just opened: a first value (list) or key (dict), or the close.
    First,
    /// After `,` in a dict: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After `,` in a list or `:` in a dict: a value.
    Value,
    /// After a value: `,` or the close.
    Next,
}

struct Frame {
    list: bool,
    start: u64,
    spine: bool,
    /// The span of this container's key in its parent dict.
    key: Option<(u64, u64)>,
    state: State,
    /// In a dict: the span of the key whose value comes next.
    cur_key: Option<(u64, u64)>,
}

/// A string or literal being read.
#[derive(Clone, Copy)]
struct Token {
    start: u64,
    string: bool,
    /// A dict key (else a value).
    key: bool,
}

struct Splitter<R, F> {
    input: R,
    /// The text from `base` on.
    buf: Vec<u8>,
    /// Where reads land.
    block: Vec<u8>,
    base: u64,
    /// The next byte to read.
    at: u64,
    eof: bool,
    stack: Vec<Frame>,
    /// How many frames at the bottom of the stack are spines.
    spines: usize,
    token: Option<Token>,
    root_done: bool,
    chunk: u64,
    max_depth: usize,
    sink: F,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

fn ends_literal(b: u8) -> bool {
    is_ws(b) || matches!(b, b',' | b']' | b'}' | b':' | b'"' | b'[' | b'{')
}

impl<R: Read, F: FnMut(Piece<'_>) -> Result<(), String>> Splitter<R, F> {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, SplitError> {
        Err(SplitError {
            offset: self.at,
            message: message.into(),
        })
    }

    fn idx(&self, abs: u64) -> usize {
        (abs - self.base) as usize
    }

    /// Reads another block, first dropping the text nothing needs any more.
    fn refill(&mut self) -> Result<(), SplitError> {
        let keep = self.keep_from();
        if keep > self.base && self.idx(keep) >= BLOCK {
            let n = self.idx(keep);
            self.buf.drain(..n);
            self.base = keep;
        }
        let got = loop {
            match self.input.read(&mut self.block) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return self.err(format!("cannot read: {e}")),
            }
        };
        self.buf.extend_from_slice(&self.block[..got]);
        self.eof = got == 0;
        Ok(())
    }

    /// The first byte a later piece may still need.
    fn keep_from(&self) -> u64 {
        let mut keep = self.at;
        if let Some(f) = self.stack.get(self.spines) {
            keep = keep.min(f.key.map_or(f.start, |k| k.0));
        }
        if let Some(t) = self.token {
            keep = keep.min(t.start);
        }
        if let Some(k) = self.stack.last().and_then(|f| f.cur_key) {
            keep = keep.min(k.0);
        }
        keep
    }

    fn run(mut self) -> Result<(), SplitError> {
        loop {
            if self.idx(self.at) >= self.buf.len() {
                if self.eof {
                    break;
                }
                self.refill()?;
                continue;
            }
            match self.token {
                Some(t) if t.string => self.in_string(t)?,
                Some(t) => self.in_literal(t)?,
                None => self.structure()?,
            }
        }
        if self.token.is_some_and(|t| t.string) {
            return self.err("unterminated string");
        }
        if let Some(t) = self.token.take() {
            self.end_token(t, self.at)?;
        }
        if !self.stack.is_empty() {
            return self.err("unexpected end of text inside a container");
        }
        if !self.root_done {
            return self.err("no JSON value");
        }
        Ok(())
    }

    fn in_string(&mut self, t: Token) -> Result<(), SplitError> {
        let i = self.idx(self.at);
        let found = memchr::memchr2(b'"', b'\\', &self.buf[i..]);
        // A raw control character cannot be in a JSON string: the text
        // fails there, not once the rest of the input (an endless string
        // of NUL bytes, say) has been read and held.
        let scanned = &self.buf[i..i + found.unwrap_or(self.buf.len() - i)];
        if let Some(k) = first_control(scanned) {
            self.at += k as u64;
            return self.err("a control character (U+0000 to U+001F) in a string");
        }
        match found {
            None => self.at = self.base + self.buf.len() as u64,
            Some(j) if self.buf[i + j] == b'\\' => self.at += j as u64 + 2,
            Some(j) => {
                self.at += j as u64 + 1;
                self.token = None;
                self.end_token(t, self.at)?;
            }
        }
        Ok(())
    }

    fn in_literal(&mut self, t: Token) -> Result<(), SplitError> {
        let i = self.idx(self.at);
        match self.buf[i..].iter().position(|&b| ends_literal(b)) {
            None => self.at = self.base + self.buf.len() as u64,
            Some(j) => {
                self.at += j as u64;
                self.token = None;
                self.end_token(t, self.at)?;
            }
        }
        Ok(())
    }

    fn structure(&mut self) -> Result<(), SplitError> {
        let b = self.buf[self.idx(self.at)];
        if is_ws(b) {
            self.at += 1;
            return Ok(());
        }
        match b {
            b'{' | b'[' => {
                if self.stack.len() == self.spines {
                    if let Some(end) = self.unit_end() {
                        // A whole unit in the text at hand: its inside is
                        // for its parser to check.
                        self.start_value()?;
                        let start = std::mem::replace(&mut self.at, end);
                        return self.end_value(start, end);
                    }
                }
                self.start_value()?;
                if self.stack.len() >= self.max_depth {
                    return self.err("JSON nested too deeply");
                }
                let key = self.stack.last_mut().and_then(|p| p.cur_key.take());
                self.stack.push(Frame {
                    list: b == b'[',
                    start: self.at,
                    spine: false,
                    key,
                    state: State::First,
                    cur_key: None,
                });
                self.at += 1;
                self.promote()
            }
            b'}' | b']' => self.close(b == b']'),
            b',' => {
                let f = match self.stack.last_mut() {
                    Some(f) if f.state == State::Next => f,
                    _ => return self.err("unexpected ','"),
                };
                f.state = if f.list { State::Value } else { State::Key };
                self.at += 1;
                self.promote()
            }
            b':' => {
                match self.stack.last_mut() {
                    Some(f) if f.state == State::Colon => f.state = State::Value,
                    _ => return self.err("unexpected ':'"),
                }
                self.at += 1;
                Ok(())
            }
            b'"' if self
                .stack
                .last()
                .is_some_and(|f| !f.list && matches!(f.state, State::First | State::Key)) =>
            {
                self.token = Some(Token {
                    start: self.at,
                    string: true,
                    key: true,
                });
                self.at += 1;
                Ok(())
            }
            _ => {
                self.start_value()?;
                self.token = Some(Token {
                    start: self.at,
                    string: b == b'"',
                    key: false,
                });
                self.at += 1;
                Ok(())
            }
        }
    }

    /// A value starts here: checks that one may, and moves its parent on.
    fn start_value(&mut self) -> Result<(), SplitError> {
        match self.stack.last_mut() {
            None if !self.root_done => Ok(()),
            None => self.err("text after the JSON value"),
            Some(f) if f.state == State::Value || (f.list && f.state == State::First) => {
                f.state = State::Next;
                Ok(())
            }
            Some(_) => self.err("unexpected value"),
        }
    }

    fn end_token(&mut self, t: Token, end: u64) -> Result<(), SplitError> {
        if t.key {
            let f = self.stack.last_mut().expect("a key is read in a dict");
            f.cur_key = Some((t.start, end));
            f.state = State::Colon;
            return Ok(());
        }
        self.end_value(t.start, end)
    }

    /// A value ended at `end`: a unit when it is a direct child of the
    /// innermost spine (or the whole document).
    fn end_value(&mut self, start: u64, end: u64) -> Result<(), SplitError> {
        if self.stack.is_empty() {
            self.root_done = true;
        }
        // The value's key is done with, whatever the level.
        let key = match self.stack.last_mut() {
            Some(f) if !f.list => f.cur_key.take(),
            _ => None,
        };
        if self.stack.len() != self.spines {
            return Ok(());
        }
        self.emit_unit(key, start, end)
    }

    fn emit_unit(
        &mut self,
        key: Option<(u64, u64)>,
        start: u64,
        end: u64,
    ) -> Result<(), SplitError> {
        let key = self.decode_key(key)?;
        let (s, e) = (self.idx(start), self.idx(end));
        let piece = Piece::Unit {
            key,
            offset: start,
            text: &self.buf[s..e],
        };
        (self.sink)(piece).or_else(|m| self.err(m))
    }

    fn decode_key(&self, span: Option<(u64, u64)>) -> Result<Option<String>, SplitError> {
        let Some((s, e)) = span else { return Ok(None) };
        match serde_json::from_slice::<String>(&self.buf[self.idx(s)..self.idx(e)]) {
            Ok(k) => Ok(Some(k)),
            Err(e) => self.err(format!("bad key: {e}")),
        }
    }

    fn close(&mut self, list: bool) -> Result<(), SplitError> {
        match self.stack.last() {
            Some(f) if f.list == list && matches!(f.state, State::First | State::Next) => {}
            _ => return self.err(format!("unexpected '{}'", if list { ']' } else { '}' })),
        }
        self.promote()?;
        let f = self.stack.pop().expect("checked above");
        self.at += 1;
        if f.spine {
            self.spines -= 1;
            if self.stack.is_empty() {
                self.root_done = true;
            }
            return (self.sink)(Piece::Close).or_else(|m| self.err(m));
        }
        if self.stack.is_empty() {
            self.root_done = true;
        }
        if self.stack.len() != self.spines {
            return Ok(());
        }
        // Its key was taken from its parent when it opened.
        self.emit_unit(f.key, f.start, self.at)
    }

    /// The end of the container opening at `at`, when the text read so
    /// far holds it within the chunk size (so that it is a unit, never a
    /// spine) and it nests no deeper than the limit allows; brackets are
    /// only counted (a unit's parser checks the rest).
    fn unit_end(&self) -> Option<u64> {
        let i = self.idx(self.at);
        let window = &self.buf[i..self.buf.len().min(i + self.chunk as usize + 1)];
        let room = self.max_depth.checked_sub(self.stack.len())?;
        container_end(window, room).map(|j| self.at + j as u64)
    }

    /// Makes spines of the open containers that have grown past the chunk
    /// size, outermost first, reporting the children they already hold.
    fn promote(&mut self) -> Result<(), SplitError> {
        while self.spines < self.stack.len() && self.at - self.stack[self.spines].start > self.chunk
        {
            let i = self.spines;
            let (list, start, key) = {
                let f = &self.stack[i];
                (f.list, f.start, f.key)
            };
            let key = self.decode_key(key)?;
            (self.sink)(Piece::Open {
                key,
                list,
                offset: start,
            })
            .or_else(|m| self.err(m))?;
            // The children complete so far, up to the one still open.
            let limit = match self.stack.get(i + 1) {
                Some(child) => child.key.map_or(child.start, |k| k.0),
                None => self.stack[i].cur_key.map_or(self.at, |k| k.0),
            };
            self.stack[i].spine = true;
            self.spines += 1;
            self.rescan(list, start + 1, limit)?;
        }
        Ok(())
    }

    /// Reports the complete children between `from` and `limit` of a
    /// container that has just become a spine (text the main loop has
    /// already checked).
    fn rescan(&mut self, list: bool, from: u64, limit: u64) -> Result<(), SplitError> {
        let mut i = self.idx(from);
        let end = self.idx(limit);
        loop {
            while i < end && (is_ws(self.buf[i]) || self.buf[i] == b',') {
                i += 1;
            }
            if i >= end {
                return Ok(());
            }
            let mut key = None;
            if !list {
                let k_end = skip_string(&self.buf, i);
                key = Some((self.base + i as u64, self.base + k_end as u64));
                i = k_end;
                while i < end && (is_ws(self.buf[i]) || self.buf[i] == b':') {
                    i += 1;
                }
                if i >= end {
                    return Ok(());
                }
            }
            let v_end = skip_value(&self.buf, i);
            if v_end == i || v_end > end {
                return self.err("malformed container");
            }
            let start = self.base + i as u64;
            self.emit_unit(key, start, self.base + v_end as u64)?;
            i = v_end;
        }
    }
}

/// Where the first byte below 0x20 is in `bytes`: a branch-free pass
/// first (it vectorizes), the position only when there is one.
fn first_control(bytes: &[u8]) -> Option<usize> {
    if bytes.iter().fold(false, |seen, &b| seen | (b < 0x20)) {
        bytes.iter().position(|&b| b < 0x20)
    } else {
        None
    }
}

/// The end (past its closing bracket) of the container at the start of
/// `bytes`, when `bytes` holds it and it nests at most `room` deep;
/// brackets are only counted, strings skipped.
fn container_end(bytes: &[u8], room: usize) -> Option<usize> {
    // Strings are short in the models this reads (keys, names): a byte
    // loop beats a search call per string.
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b'"' => loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\\' => i += 2,
                    _ => i += 1,
                }
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > room {
                    return None;
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The end of the string starting at `i` (past its closing quote).
fn skip_string(buf: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < buf.len() {
        match memchr::memchr2(b'"', b'\\', &buf[i..]) {
            Some(j) if buf[i + j] == b'\\' => i += j + 2,
            Some(j) => return i + j + 1,
            None => return buf.len(),
        }
    }
    buf.len()
}

/// The end of the (checked) value starting at `i`.
fn skip_value(buf: &[u8], mut i: usize) -> usize {
    match buf[i] {
        b'"' => skip_string(buf, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < buf.len() {
                match buf[i] {
                    b'"' => {
                        i = skip_string(buf, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            buf.len()
        }
        _ => {
            i + buf[i..]
                .iter()
                .position(|&b| ends_literal(b))
                .unwrap_or(buf.len() - i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of `text` as strings: `{key`/`[key` for opens, `key=text`
    /// for units, `}` for closes.
    fn pieces(text: &str, chunk: usize) -> Result<Vec<String>, SplitError> {
        let mut out = Vec::new();
        // Reads of one byte at a time cross every token boundary.
        let input = OneByte(text.as_bytes());
        split(input, chunk, 64, |p| {
            out.push(match p {
                Piece::Open { key, list, offset } => {
                    assert_eq!(
                        text.as_bytes()[offset as usize],
                        if list { b'[' } else { b'{' }
                    );
                    format!(
                        "{}{}",
                        if list { '[' } else { '{' },
                        key.unwrap_or_default()
                    )
                }
                Piece::Unit {
                    key,
                    offset,
                    text: t,
                } => {
                    assert_eq!(&text.as_bytes()[offset as usize..][..t.len()], t);
                    format!("{}={}", key.unwrap_or_default(), String::from_utf8_lossy(t))
                }
                Piece::Close => "}".into(),
            });
            Ok(())
        })?;
        Ok(out)
    }

    struct OneByte<'a>(&'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() || b.is_empty() {
                return Ok(0);
            }
            b[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn a_small_document_is_one_unit() {
        let doc = r#" {"a": [1, 2], "b": "x"} "#;
        assert_eq!(pieces(doc, 100).unwrap(), [r#"={"a": [1, 2], "b": "x"}"#]);
        assert_eq!(pieces("17", 1).unwrap(), ["=17"]);
    }

    #[test]
    fn large_containers_become_spines_with_their_children_as_units() {
        let doc = r#"{"Objects": {"?": {"id": "f"}, "servers": [{"n": 1}, {"n": "a,]}"}, 3]}, "k\"q": null}"#;
        let got = pieces(doc, 20).unwrap();
        assert_eq!(
            got,
            [
                "{",
                "{Objects",
                r#"?={"id": "f"}"#,
                "[servers",
                r#"={"n": 1}"#,
                r#"={"n": "a,]}"}"#,
                "=3",
                "}",
                "}",
                "k\"q=null",
                "}"
            ]
        );
    }

    #[test]
    fn a_container_promoted_late_reports_the_children_it_holds() {
        // The list grows past the chunk only at its last element.
        let doc = r#"[[1, [2, 3], {"a": "b"}, "long string here"]]"#;
        let got = pieces(doc, 30).unwrap();
        assert_eq!(
            got,
            [
                "[",
                "[",
                "=1",
                "=[2, 3]",
                r#"={"a": "b"}"#,
                "=\"long string here\"",
                "}",
                "}"
            ]
        );
    }

    #[test]
    fn malformed_structure_is_an_error_with_its_offset() {
        for (doc, offset) in [
            (r#"{"a" 1}"#, 5),
            ("[1 2]", 3),
            ("[1,]x", 3),
            ("{} {}", 3),
            (r#"["abc"#, 5),
            ("[[1]", 4),
            ("", 0),
            // A raw control character in a string, found where it is.
            ("[\"ab\0cd\"]", 4),
            ("{\"a\": \"x\\\"y\u{1b}\"}", 11),
        ] {
            let e = pieces(doc, 2).unwrap_err();
            assert_eq!(e.offset, offset, "{doc}: {}", e.message);
        }
        let deep = "[".repeat(70) + &"]".repeat(70);
        assert!(pieces(&deep, 4).unwrap_err().message.contains("deeply"));
    }

    /// The document rebuilt from its pieces, each unit parsed alone.
    fn rebuild(text: &str, chunk: usize) -> serde_json::Value {
        use serde_json::Value as J;
        let mut stack: Vec<(Option<String>, J)> = Vec::new();
        let mut root = None;
        let mut put = |stack: &mut Vec<(Option<String>, J)>, key: Option<String>, v: J| match stack
            .last_mut()
        {
            Some((_, J::Array(a))) => a.push(v),
            Some((_, J::Object(o))) => {
                o.insert(key.expect("a key in a dict"), v);
            }
            Some(_) => unreachable!(),
            None => root = Some(v),
        };
        split(OneByte(text.as_bytes()), chunk, 64, |p| {
            match p {
                Piece::Open { key, list, .. } => {
                    let empty = if list {
                        J::Array(vec![])
                    } else {
                        J::Object(Default::default())
                    };
                    stack.push((key, empty));
                }
                Piece::Unit { key, text, .. } => {
                    let v = serde_json::from_slice(text).map_err(|e| e.to_string())?;
                    put(&mut stack, key, v);
                }
                Piece::Close => {
                    let (key, v) = stack.pop().expect("an open spine");
                    put(&mut stack, key, v);
                }
            }
            Ok(())
        })
        .unwrap();
        root.expect("a document")
    }

    #[test]
    fn the_pieces_rebuild_the_document_at_every_chunk_size() {
        let doc = r#"{"a": [1, {"b": [true, false, null]}, "x\\y\"z"], "c": {"d": -1.5e3, "": []}, "e": [[[]]]}"#;
        let want: serde_json::Value = serde_json::from_str(doc).unwrap();
        for chunk in 1..doc.len() + 2 {
            assert_eq!(rebuild(doc, chunk), want, "chunk {chunk}");
        }
    }
}

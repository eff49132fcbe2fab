//! The fast path of a streamed piece: an object definition whose contracts'
//! machine code passes it, read straight from its text ([`Tape`]) through
//! its class's [`ObjectPlan`], with no value built.
//!
//! A piece takes it only when the answer is sure to be the one the
//! worker's full path gives: the text scans (valid JSON without
//! escapes or tags, see [`runtime::json::tape`]); it is one definition
//! whose `?` header holds exactly a string `id` and a string `type`, of a
//! class checked from the values alone (the worker's `Plan::Now`); no dict inside it
//! has a header or a null or dict value (which the full path would look at
//! as possible nested definitions); and the plan shows every property to
//! pass. Anything else, a violation included, goes the full way, which
//! finds it and words it.

use std::sync::Arc;

use compiler::jit::Native;
use runtime::json::tape::{Kind, Num, Tape};

use crate::contracts::plan::{scalar, ObjectPlan, View};
use crate::contracts::Borrowed;

/// What the fast path knows of a class, by the `type` its headers give.
pub(crate) struct FastClass {
    ty: Box<str>,
    /// Its index in the worker's `class_list`.
    ci: u32,
    /// `None`: its objects always go the full way.
    plan: Option<ObjectPlan>,
    /// The keys a scan matches: the plan's (by their slots), then the
    /// header's where the plan has not named them.
    keys: Vec<Arc<str>>,
    /// The indexes of `?`, `id` and `type` among `keys`.
    header: [usize; 3],
}

/// The fast path's state in a worker.
#[derive(Default)]
pub(crate) struct Fast {
    tape: Tape,
    classes: Vec<FastClass>,
    /// The class of the last definition read (most pieces share it).
    last: usize,
}

/// The keys a header is read by, before any class is known.
const HEADER: [&str; 3] = ["?", "id", "type"];

/// The keys of a scan for a plan of `keys`, and where the header's are.
fn scan_keys(keys: &[Arc<str>]) -> (Vec<Arc<str>>, [usize; 3]) {
    let mut all = keys.to_vec();
    let header = HEADER.map(|h| match all.iter().position(|k| &**k == h) {
        Some(i) => i,
        None => {
            all.push(h.into());
            all.len() - 1
        }
    });
    (all, header)
}

/// A value of a scanned text, as a plan reads it.
struct TapeView<'a> {
    tape: &'a Tape,
    text: &'a str,
    at: u32,
}

impl<'a> TapeView<'a> {
    fn at(&self, at: u32) -> TapeView<'a> {
        TapeView { at, ..*self }
    }

    /// The entry of a dict node whose key has index `key`: its value node.
    fn entry(&self, key: usize) -> Option<u32> {
        let n = self.tape.node(self.at);
        let mut i = self.at + 1;
        for _ in 0..self.tape.len(n) {
            if self.tape.key_index(self.tape.node(i)) == Some(key) {
                return Some(i + 1);
            }
            i = self.tape.node(i + 1).next;
        }
        None
    }
}

impl View for TapeView<'_> {
    fn read(&self) -> Option<Borrowed<'_>> {
        let n = self.tape.node(self.at);
        Some(match n.kind {
            Kind::Null => Borrowed::Null,
            Kind::Bool(b) => Borrowed::Bool(b),
            Kind::Num(Num::Int) => Borrowed::Int(self.tape.int(n)),
            Kind::Num(Num::Big) => Borrowed::BigInt,
            Kind::Num(Num::Float) => Borrowed::Float(self.tape.float(n)),
            Kind::Str => Borrowed::Str(self.tape.str(self.text, n)),
            Kind::List => Borrowed::List(self.tape.len(n)),
            Kind::Dict => Borrowed::Dict(self.tape.len(n)),
            Kind::Key => Borrowed::Other,
        })
    }

    fn field(&self, slot: usize) -> Option<Option<Self>> {
        if self.tape.node(self.at).kind != Kind::Dict {
            return None;
        }
        Some(self.entry(slot).map(|at| self.at(at)))
    }

    fn item(&self, i: usize) -> Option<Self> {
        let n = self.tape.node(self.at);
        if n.kind != Kind::List || i >= self.tape.len(n) {
            return None;
        }
        let mut at = self.at + 1;
        for _ in 0..i {
            at = self.tape.node(at).next;
        }
        Some(self.at(at))
    }

    fn items_pass(&self, n: usize, chain: &Native) -> bool {
        let node = self.tape.node(self.at);
        if node.kind != Kind::List || self.tape.len(node) != n {
            return false;
        }
        let mut at = self.at + 1;
        (0..n).all(|_| {
            let x = self.at(at);
            at = self.tape.node(at).next;
            x.read()
                .is_some_and(|b| scalar(b) && chain.passes_borrowed(b))
        })
    }
}

/// A definition's `id` and `type` read from the tape of its text (keys
/// matched as `header` says): `None` unless the header holds exactly
/// those two strings.
fn header<'t>(tape: &Tape, text: &'t str, header: [usize; 3]) -> Option<(&'t str, &'t str)> {
    if tape.node(0).kind != Kind::Dict {
        return None;
    }
    let root = TapeView { tape, text, at: 0 };
    let h = root.at(root.entry(header[0])?);
    let n = tape.node(h.at);
    if n.kind != Kind::Dict || tape.len(n) != 2 {
        return None;
    }
    let string = |at: u32| {
        let n = tape.node(at);
        (n.kind == Kind::Str).then(|| tape.str(text, n))
    };
    Some((string(h.entry(header[1])?)?, string(h.entry(header[2])?)?))
}

/// What [`Fast::head`] read of a definition.
pub(crate) enum Head<'t> {
    /// Its id, and its class among the fast path's (the tape holds its
    /// text, scanned with that class's keys).
    Known { id: &'t str, class: usize },
    /// Its id and the `type` of a class not met yet ([`Fast::learn`]).
    New { id: &'t str, ty: &'t str },
}

impl Fast {
    /// Whether `text` is JSON the scan reads (only its syntax matters).
    pub(crate) fn syntax(&mut self, text: &str) -> bool {
        self.tape.scan(text, &HEADER[..0])
    }

    /// Scans the text of a definition and reads its header; `None` when
    /// it must go the full way.
    pub(crate) fn head<'t>(&mut self, text: &'t str) -> Option<Head<'t>> {
        let last = self.classes.get(self.last);
        let scanned = match last {
            Some(c) => self.tape.scan(text, &c.keys),
            None => self.tape.scan(text, &HEADER),
        };
        if !scanned || self.tape.nested_flags() {
            return None;
        }
        let (id, ty) = header(&self.tape, text, last.map_or([0, 1, 2], |c| c.header))?;
        if last.is_some_and(|c| *c.ty == *ty) {
            return Some(Head::Known {
                id,
                class: self.last,
            });
        }
        let Some(class) = self.classes.iter().position(|c| *c.ty == *ty) else {
            return Some(Head::New { id, ty });
        };
        self.last = class;
        // The same text, its keys matched for that class.
        self.tape
            .scan(text, &self.classes[class].keys)
            .then_some(Head::Known { id, class })
    }

    /// Learns the class of headers of type `ty` (`ci` in the worker's
    /// list), with its plan (`None`: its objects always go the full way).
    pub(crate) fn learn(&mut self, ty: &str, ci: u32, plan: Option<ObjectPlan>) {
        let (keys, header) = scan_keys(plan.as_ref().map_or(&[], |p| p.keys()));
        self.classes.push(FastClass {
            ty: ty.into(),
            ci,
            plan,
            keys,
            header,
        });
        self.last = self.classes.len() - 1;
    }

    /// After [`Fast::head`] gave `class`: the class's index in the
    /// worker's list when its plan shows the definition in `text` to have
    /// no violation.
    pub(crate) fn passes(&self, text: &str, class: usize) -> Option<u32> {
        let c = &self.classes[class];
        let view = TapeView {
            tape: &self.tape,
            text,
            at: 0,
        };
        let len = self.tape.len(self.tape.node(0));
        c.plan.as_ref()?.holds(&view, len, 1).then_some(c.ci)
    }
}

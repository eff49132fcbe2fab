//! YAML with positions, and MuranoPL's reading of YAML scalars.
//!
//! [`load_documents`] runs saphyr's event parser and builds one [`Node`] per
//! YAML document, keeping mapping order, each scalar's style and tag, and the
//! file position of every node. Aliases are expanded (a copy of the anchored
//! node; an alias to a node still being built, i.e. a recursive structure, is
//! an error), nesting deeper than [`MAX_DEPTH`] and expansions beyond
//! [`MAX_NODES`] nodes are errors.
//!
//! [`Node::to_template`] then gives each scalar its MuranoPL meaning, as
//! murano's `yaql_yaml_loader` (a PyYAML loader with an implicit `!yaql`
//! resolver tried after the core ones) does:
//!
//! | scalar | meaning |
//! | --- | --- |
//! | plain, untagged, a YAML 1.1 null/bool/int/float (`~`, `yes`, `0x1F`, `1_000`, `.5`) | that value |
//! | plain, untagged, [`is_expression`] | [`TemplateKind::Expr`] |
//! | any other plain, quoted (`'..'`, `".."`) or block (`|`, `>`) scalar | string |
//! | `!!str` / `!` | string |
//! | `!yaql` | expression (must parse) |
//! | `!!int`, `!!float`, `!!bool`, `!!null` | that type |
//!
//! Error kinds follow PyYAML's: `ScannerError` (malformed YAML),
//! `ComposerError` (aliases, depth, size), `ConstructorError` (tags, keys).

use std::collections::HashMap;
use std::sync::Arc;

use runtime::{Error, Span, Value};
use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, Tag};

use super::pos::Pos;
use crate::yaql::{self, LexOptions};

/// Deepest nesting of sequences and mappings accepted.
pub const MAX_DEPTH: usize = 256;
/// Most nodes one file may expand to (aliases count their whole copy).
pub const MAX_NODES: usize = 4_000_000;

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarStyle {
    /// `text`
    Plain,
    /// `'text'`
    SingleQuoted,
    /// `"text"`
    DoubleQuoted,
    /// `|` block
    Literal,
    /// `>` block
    Folded,
}

/// A YAML node with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// Where it starts (for a tagged scalar: where its text starts).
    pub pos: Pos,
    /// Byte offset one past its end.
    pub end: u32,
}

/// The shape of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A scalar: its (unescaped, folded) text, style and tag. Tags of the
    /// core schema are written `!!str`; local tags `!yaql`; the non-specific
    /// tag `!`.
    Scalar {
        /// The scalar's value text.
        value: String,
        /// How it was written.
        style: ScalarStyle,
        /// Its explicit tag, if any.
        tag: Option<String>,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order (duplicate keys kept).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The scalar's text, if this is a scalar.
    pub fn as_scalar(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether this is a scalar that YAML reads as null (`~`, `null`, empty),
    /// plain and untagged, or tagged `!!null`.
    pub fn is_null(&self) -> bool {
        match &self.kind {
            NodeKind::Scalar { value, style, tag } => match tag.as_deref() {
                Some("!!null") => true,
                None => *style == ScalarStyle::Plain && is_null_text(value),
                _ => false,
            },
            _ => false,
        }
    }

    /// The mapping's entries, if this is a mapping.
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.kind {
            NodeKind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The value of the first entry whose key is the scalar `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_scalar() == Some(key))
            .map(|(_, v)| v)
    }

    /// The byte range of the node in its file.
    pub fn span(&self) -> Span {
        Span {
            start: self.pos.offset,
            end: self.end.max(self.pos.offset),
        }
    }

    /// A short name of the node's kind for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            NodeKind::Scalar { .. } => "scalar",
            NodeKind::Seq(_) => "sequence",
            NodeKind::Map(_) => "mapping",
        }
    }

    /// Gives the node its MuranoPL meaning (see the module docs).
    // Keys are scalar constants (no lazy sequences), so hashing is stable.
    #[allow(clippy::mutable_key_type)]
    pub fn to_template(&self, opts: LoadOptions) -> Result<Template, Error> {
        let kind = match &self.kind {
            NodeKind::Scalar { value, style, tag } => {
                scalar_template(value, *style, tag.as_deref(), self, opts)?
            }
            NodeKind::Seq(items) => TemplateKind::List(
                items
                    .iter()
                    .map(|n| n.to_template(opts))
                    .collect::<Result<_, _>>()?,
            ),
            NodeKind::Map(entries) => {
                // A Python dict: a repeated key keeps its first place and
                // takes the last value. Expression keys never collide.
                let mut out: Vec<(Template, Template)> = Vec::with_capacity(entries.len());
                let mut seen: HashMap<Value, usize> = HashMap::new();
                for (k, v) in entries {
                    let key = k.to_template(opts)?;
                    let val = v.to_template(opts)?;
                    match &key.kind {
                        TemplateKind::List(_) | TemplateKind::Dict(_) => {
                            return Err(k.pos.error(
                                "ConstructorError",
                                "found unhashable key while constructing a mapping",
                            ));
                        }
                        TemplateKind::Value(kv) => {
                            if let Some(&i) = seen.get(kv) {
                                out[i].1 = val;
                                continue;
                            }
                            seen.insert(kv.clone(), out.len());
                        }
                        TemplateKind::Expr { .. } => {}
                    }
                    out.push((key, val));
                }
                TemplateKind::Dict(out)
            }
        };
        Ok(Template {
            kind,
            pos: self.pos.clone(),
        })
    }
}

/// Options of the MuranoPL reading of YAML.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// yaql 0.2 (legacy) syntax, as packages of `Format` 1.0 and 1.1 use.
    pub legacy: bool,
}

/// A YAML value as MuranoPL reads it, with positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// What it is.
    pub kind: TemplateKind,
    /// Where it is.
    pub pos: Pos,
}

/// The shape of a [`Template`].
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateKind {
    /// A YAQL expression, not compiled yet.
    Expr {
        /// The expression text.
        src: Arc<str>,
        /// The scalar's byte range in its file. For a single-line plain
        /// scalar `src` is exactly that slice, so a YAQL offset `o` is file
        /// offset `program_span.start + o`.
        program_span: Span,
    },
    /// A constant.
    Value(Value),
    /// A sequence.
    List(Vec<Template>),
    /// A mapping, in source order; keys may be expressions.
    Dict(Vec<(Template, Template)>),
}

impl Template {
    /// The constant string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            TemplateKind::Value(v) => v.as_str(),
            _ => None,
        }
    }

    /// Whether this is the constant null.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, TemplateKind::Value(Value::Null))
    }
}

/// Whether `text` is a YAQL expression for MuranoPL: it is not made of only
/// word characters, digits, whitespace and dots (`^[\s\w\d.]*$`), and it
/// parses as YAQL with MuranoPL operators.
pub fn is_expression(text: &str, legacy: bool) -> bool {
    if text
        .chars()
        .all(|c| c.is_whitespace() || c.is_alphanumeric() || c == '_' || c == '.')
    {
        return false;
    }
    yaql::parse(
        text,
        LexOptions {
            legacy,
            murano: true,
        },
    )
    .is_ok()
}

/// The value PyYAML's implicit resolvers (YAML 1.1) give a plain scalar:
/// null (`~`, `null`, `Null`, `NULL`, empty), bool (`true`, `yes`, `on`,
/// ... in three casings), ints (`0b`, octal `0..`, `0x`, `1_000`,
/// sexagesimal `1:20`) and floats (`1.`, `.5`, `1.0e+3`, `.inf`, `.nan`,
/// `1:20.5`). `None` for anything else (timestamps stay strings).
pub fn plain_value(text: &str) -> Option<Value> {
    if is_null_text(text) {
        return Some(Value::Null);
    }
    if let Some(b) = bool_text(text) {
        return Some(Value::Bool(b));
    }
    if is_float_text(text) {
        return float_value(text);
    }
    if is_int_text(text) {
        return int_value(text);
    }
    None
}

fn is_null_text(s: &str) -> bool {
    matches!(s, "" | "~" | "null" | "Null" | "NULL")
}

fn bool_text(s: &str) -> Option<bool> {
    match s {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// A tiny matcher over bytes for the resolver regexes.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_if(&mut self, f: impl Fn(u8) -> bool) -> bool {
        match self.b.get(self.i) {
            Some(&c) if f(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    fn eat_many(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let s = self.i;
        while self.eat_if(&f) {}
        self.i - s
    }
    fn sign(&mut self) {
        let _ = self.eat(b'-') || self.eat(b'+');
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
    /// `(':' [0-5]?[0-9])+`
    fn sexagesimal(&mut self) -> bool {
        let mut n = 0;
        loop {
            let save = self.i;
            if !self.eat(b':') {
                break;
            }
            let d1 = self.eat_if(|c| c.is_ascii_digit());
            if !d1 {
                self.i = save;
                break;
            }
            // [0-5]?[0-9]: one digit, or two with the first in 0..=5.
            let first = self.b[self.i - 1];
            if first <= b'5' && self.eat_if(|c| c.is_ascii_digit()) {
                // two digits
            }
            n += 1;
        }
        n > 0
    }
    /// `[eE][-+][0-9]+`, optional.
    fn exponent(&mut self) {
        let save = self.i;
        if self.eat_if(|c| c == b'e' || c == b'E')
            && self.eat_if(|c| c == b'-' || c == b'+')
            && self.eat_many(|c| c.is_ascii_digit()) > 0
        {
            return;
        }
        self.i = save;
    }
}

fn digit_(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

fn is_float_text(s: &str) -> bool {
    let b = s.as_bytes();
    let try_alt = |f: &dyn Fn(&mut Cur) -> bool| {
        let mut c = Cur { b, i: 0 };
        f(&mut c) && c.done()
    };
    // [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    try_alt(&|c| {
        c.sign();
        if !c.eat_if(|x| x.is_ascii_digit()) {
            return false;
        }
        c.eat_many(digit_);
        if !c.eat(b'.') {
            return false;
        }
        c.eat_many(digit_);
        c.exponent();
        true
    }) ||
    // \.[0-9][0-9_]*([eE][-+][0-9]+)?
    try_alt(&|c| {
        if !c.eat(b'.') || !c.eat_if(|x| x.is_ascii_digit()) {
            return false;
        }
        c.eat_many(digit_);
        c.exponent();
        true
    }) ||
    // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    try_alt(&|c| {
        c.sign();
        if !c.eat_if(|x| x.is_ascii_digit()) {
            return false;
        }
        c.eat_many(digit_);
        if !c.sexagesimal() || !c.eat(b'.') {
            return false;
        }
        c.eat_many(digit_);
        true
    }) || matches!(
        s.strip_prefix(['-', '+']).unwrap_or(s),
        ".inf" | ".Inf" | ".INF"
    ) || matches!(s, ".nan" | ".NaN" | ".NAN")
}

fn is_int_text(s: &str) -> bool {
    let b = s.as_bytes();
    let try_alt = |f: &dyn Fn(&mut Cur) -> bool| {
        let mut c = Cur { b, i: 0 };
        f(&mut c) && c.done()
    };
    // [-+]?0b[0-1_]+
    try_alt(&|c| {
        c.sign();
        c.eat(b'0') && c.eat(b'b') && c.eat_many(|x| x == b'0' || x == b'1' || x == b'_') > 0
    }) ||
    // [-+]?0[0-7_]+
    try_alt(&|c| {
        c.sign();
        c.eat(b'0') && c.eat_many(|x| (b'0'..=b'7').contains(&x) || x == b'_') > 0
    }) ||
    // [-+]?(0|[1-9][0-9_]*)
    try_alt(&|c| {
        c.sign();
        if c.eat(b'0') {
            return true;
        }
        if !c.eat_if(|x| (b'1'..=b'9').contains(&x)) {
            return false;
        }
        c.eat_many(digit_);
        true
    }) ||
    // [-+]?0x[0-9a-fA-F_]+
    try_alt(&|c| {
        c.sign();
        c.eat(b'0') && c.eat(b'x') && c.eat_many(|x| x.is_ascii_hexdigit() || x == b'_') > 0
    }) ||
    // [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
    try_alt(&|c| {
        c.sign();
        if !c.eat_if(|x| (b'1'..=b'9').contains(&x)) {
            return false;
        }
        c.eat_many(digit_);
        c.sexagesimal()
    })
}

/// PyYAML's `construct_yaml_int` on text the int resolver accepted (or
/// that is tagged `!!int`). `None` when it does not make a number.
fn int_value(text: &str) -> Option<Value> {
    let mut s: String = text.chars().filter(|&c| c != '_').collect();
    let neg = s.starts_with('-');
    if s.starts_with(['-', '+']) {
        s.remove(0);
    }
    let apply = |v: i128| -> Option<Value> {
        let v = if neg { -v } else { v };
        i64::try_from(v).ok().map(Value::Int)
    };
    if s == "0" {
        return Some(Value::Int(0));
    }
    let radix = |digits: &str, r: u32| -> Option<Value> {
        if digits.is_empty() {
            return None;
        }
        match i128::from_str_radix(digits, r) {
            Ok(v) => apply(v),
            Err(_) => None,
        }
    };
    if let Some(d) = s.strip_prefix("0b") {
        return radix(d, 2);
    }
    if let Some(d) = s.strip_prefix("0x") {
        return radix(d, 16);
    }
    if s.starts_with('0') {
        return radix(&s, 8);
    }
    if s.contains(':') {
        let mut v: i128 = 0;
        for part in s.split(':') {
            let d: i128 = part.parse().ok()?;
            v = v.checked_mul(60)?.checked_add(d)?;
        }
        return apply(v);
    }
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    match s.parse::<i64>() {
        Ok(v) => Some(Value::Int(if neg { -v } else { v })),
        Err(_) => {
            // Beyond i64: the tagged-JSON reader makes big integers.
            let lit = if neg { format!("-{s}") } else { s };
            runtime::json::from_tagged_str(&lit).ok()
        }
    }
}

/// PyYAML's `construct_yaml_float`.
fn float_value(text: &str) -> Option<Value> {
    let mut s: String = text
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_lowercase();
    let neg = s.starts_with('-');
    if s.starts_with(['-', '+']) {
        s.remove(0);
    }
    let sign = if neg { -1.0 } else { 1.0 };
    let v = if s == ".inf" {
        f64::INFINITY
    } else if s == ".nan" {
        f64::NAN
    } else if s.contains(':') {
        let mut v = 0.0;
        for part in s.split(':') {
            v = v * 60.0 + part.parse::<f64>().ok()?;
        }
        v
    } else {
        // Rust does not read "1." or ".5e+3" differently from Python.
        s.parse::<f64>().ok()?
    };
    Some(Value::Float(sign * v))
}

fn scalar_template(
    value: &str,
    style: ScalarStyle,
    tag: Option<&str>,
    node: &Node,
    opts: LoadOptions,
) -> Result<TemplateKind, Error> {
    let expr = |src: &str| TemplateKind::Expr {
        src: src.into(),
        program_span: node.span(),
    };
    let bad = |what: &str| {
        node.pos.error(
            "ConstructorError",
            format!("cannot construct {what} from {value:?}"),
        )
    };
    Ok(match tag {
        None if style == ScalarStyle::Plain => {
            if let Some(v) = plain_value(value) {
                TemplateKind::Value(v)
            } else if is_expression(value, opts.legacy) {
                expr(value)
            } else {
                TemplateKind::Value(Value::str(value))
            }
        }
        None | Some("!!str") | Some("!") => TemplateKind::Value(Value::str(value)),
        Some("!yaql") => {
            if let Err(e) = yaql::parse(
                value,
                LexOptions {
                    legacy: opts.legacy,
                    murano: true,
                },
            ) {
                return Err(node.pos.error(
                    "YaqlGrammarException",
                    format!("in expression {value:?}: {}", e.message()),
                ));
            }
            expr(value)
        }
        Some("!!null") if is_null_text(value) => TemplateKind::Value(Value::Null),
        Some("!!null") => return Err(bad("a null")),
        Some("!!bool") => {
            TemplateKind::Value(Value::Bool(bool_text(value).ok_or_else(|| bad("a bool"))?))
        }
        Some("!!int") => TemplateKind::Value(int_value(value).ok_or_else(|| bad("an int"))?),
        Some("!!float") => TemplateKind::Value(
            float_value(value)
                .or_else(|| int_value(value).and_then(|v| v.as_f64().map(Value::Float)))
                .ok_or_else(|| bad("a float"))?,
        ),
        Some("!!timestamp") => TemplateKind::Value(Value::str(value)),
        Some(t) => {
            return Err(node.pos.error(
                "ConstructorError",
                format!("could not determine a constructor for the tag '{t}'"),
            ))
        }
    })
}

/// Maps saphyr's character offsets to byte offsets, lines and columns.
struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each char when the text is not ASCII.
    char_bytes: Option<Vec<u32>>,
    /// Byte offset where each line starts.
    starts: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let char_bytes = (!text.is_ascii()).then(|| {
            let mut v: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
            v.push(text.len() as u32);
            v
        });
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Lines {
            text,
            char_bytes,
            starts,
        }
    }

    fn byte(&self, char_index: usize) -> u32 {
        match &self.char_bytes {
            Some(v) => v.get(char_index).copied().unwrap_or(self.text.len() as u32),
            None => char_index.min(self.text.len()) as u32,
        }
    }

    fn pos(&self, file: &Arc<str>, char_index: usize) -> Pos {
        let offset = self.byte(char_index);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1] as usize;
        let col = self
            .text
            .get(start..offset as usize)
            .map_or(0, |s| s.chars().count());
        Pos {
            file: file.clone(),
            line: line as u32,
            col: col as u32 + 1,
            offset,
        }
    }
}

fn tag_string(t: &Tag) -> String {
    if t.is_yaml_core_schema() {
        format!("!!{}", t.suffix)
    } else if t.handle == "!" {
        format!("!{}", t.suffix)
    } else {
        format!("{}{}", t.handle, t.suffix)
    }
}

fn style_of(s: SaphyrStyle) -> ScalarStyle {
    match s {
        SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        SaphyrStyle::Literal => ScalarStyle::Literal,
        SaphyrStyle::Folded => ScalarStyle::Folded,
        _ => ScalarStyle::Plain,
    }
}

enum Open {
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>, Option<Node>),
}

struct Frame {
    open: Open,
    pos: Pos,
    anchor: usize,
    /// Nodes in this collection so far (for alias budgets).
    size: usize,
}

/// Parses YAML text into one [`Node`] per document. `file` names the text
/// in positions. An empty document (`---` alone) is a null scalar.
///
/// A text the scanner rejects for its indentation is read again as PyYAML
/// reads it, with no indentation checked inside flow collections (see
/// [`super::lenient`]); positions stay those of `text`.
pub fn load_documents(text: &str, file: &str) -> Result<Vec<Node>, Error> {
    let file: Arc<str> = file.into();
    let lines = Lines::new(text);
    match load_from(text, &lines, &file, &|i| i) {
        Err(e) if e.message().contains("invalid indentation") => {
            match super::lenient::pad_flow_lines(text) {
                Some(p) => load_from(&p.text, &lines, &file, &|i| p.original(i)).map_err(|_| e),
                None => Err(e),
            }
        }
        r => r,
    }
}

/// Parses `parsed` into documents; `original` maps a char index of
/// `parsed` to one of the text `lines` holds.
fn load_from(
    parsed: &str,
    lines: &Lines<'_>,
    file: &Arc<str>,
    original: &dyn Fn(usize) -> usize,
) -> Result<Vec<Node>, Error> {
    let file = file.clone();
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    // anchor id -> (node, its node count)
    let mut anchors: HashMap<usize, (Node, usize)> = HashMap::new();
    let mut total = 0usize;
    for ev in Parser::new_from_str(parsed) {
        let (ev, span) = ev.map_err(|e| {
            lines
                .pos(&file, original(e.marker().index()))
                .error("ScannerError", e.info())
        })?;
        let pos = lines.pos(&file, original(span.start.index()));
        let end = lines.byte(original(span.end.index()));
        let mut done: Option<(Node, usize, usize)> = None; // node, size, anchor
        let is_seq = matches!(ev, Event::SequenceStart(..));
        match ev {
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd => {
                if matches!(ev, Event::DocumentStart(_)) {
                    anchors.clear();
                }
            }
            Event::Alias(id) => {
                let (node, size) = anchors.get(&id).cloned().ok_or_else(|| {
                    pos.error(
                        "ComposerError",
                        "found undefined alias (or an alias inside its own anchor)",
                    )
                })?;
                done = Some((node, size, 0));
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| tag_string(&t));
                let node = Node {
                    kind: NodeKind::Scalar {
                        value: value.into_owned(),
                        style: style_of(style),
                        tag,
                    },
                    pos,
                    end,
                };
                done = Some((node, 1, anchor));
            }
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
                if let Some(t) = tag {
                    let t = tag_string(&t);
                    let ok = if is_seq { "!!seq" } else { "!!map" };
                    if t != ok && t != "!" {
                        return Err(pos.error(
                            "ConstructorError",
                            format!("could not determine a constructor for the tag '{t}'"),
                        ));
                    }
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(pos.error(
                        "ComposerError",
                        format!("nesting deeper than {MAX_DEPTH} levels"),
                    ));
                }
                stack.push(Frame {
                    open: if is_seq {
                        Open::Seq(Vec::new())
                    } else {
                        Open::Map(Vec::new(), None)
                    },
                    pos,
                    anchor,
                    size: 1,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(f) = stack.pop() else {
                    return Err(pos.error("ComposerError", "unbalanced collection end"));
                };
                let kind = match f.open {
                    Open::Seq(v) => NodeKind::Seq(v),
                    Open::Map(m, None) => NodeKind::Map(m),
                    Open::Map(_, Some(k)) => {
                        return Err(k.pos.error("ComposerError", "mapping key without a value"))
                    }
                };
                let node = Node {
                    kind,
                    pos: f.pos,
                    end,
                };
                done = Some((node, f.size, f.anchor));
            }
        }
        if let Some((node, size, anchor)) = done {
            total = total.saturating_add(size);
            if total > MAX_NODES {
                return Err(node.pos.error(
                    "ComposerError",
                    format!("document expands to more than {MAX_NODES} nodes"),
                ));
            }
            if anchor != 0 {
                anchors.insert(anchor, (node.clone(), size));
            }
            match stack.last_mut() {
                None => docs.push(node),
                Some(f) => {
                    f.size = f.size.saturating_add(size);
                    match &mut f.open {
                        Open::Seq(v) => v.push(node),
                        Open::Map(m, key) => match key.take() {
                            None => *key = Some(node),
                            Some(k) => m.push((k, node)),
                        },
                    }
                }
            }
        }
    }
    if let Some(f) = stack.last() {
        return Err(f.pos.error("ComposerError", "unterminated collection"));
    }
    Ok(docs)
}

/// The plain data of a YAML node (scalars typed as YAML 1.1 does).
pub fn node_value(n: &Node) -> Value {
    match &n.kind {
        NodeKind::Scalar { value, style, tag } => {
            if tag.is_none() && *style == ScalarStyle::Plain {
                if let Some(v) = plain_value(value) {
                    return v;
                }
            }
            Value::str(value.clone())
        }
        NodeKind::Seq(items) => Value::list(items.iter().map(node_value).collect()),
        NodeKind::Map(entries) => {
            let mut d = runtime::Dict::default();
            for (k, v) in entries {
                d.insert(node_value(k), node_value(v));
            }
            Value::dict(d)
        }
    }
}

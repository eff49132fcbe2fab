//! Expressions of an engine with its own operator table (the reference's
//! `YaqlFactory.operators` after `insert_operator`), parsed by precedence
//! climbing.
//!
//! The lalrpop grammar ([`super::parse_flat`]) is the standard table,
//! fixed when the crate is built, and stays the parser of every engine
//! whose table is the standard one. The reference builds a new lexer and
//! parser from the table each time a factory creates an engine; here a
//! table ([`OpTable`]) is checked once and drives this parser, which builds
//! the same [`Flat`] tree, so lowering is shared. Its rules are the
//! reference's (`factory.py`, `lexer.py`, `parser.py`):
//!
//! - Each group of the table is one precedence level, the first the
//!   tightest; within a level a binary operator is left- or
//!   right-associative, a unary one prefix or suffix.
//! - An operator symbol made of punctuation is matched before the
//!   built-in punctuation, longest first; a word that is in the table is
//!   that operator (a word followed by `(` stays a function call).
//! - `.` and `?.` are the binary operators of the table (`recv.name`,
//!   `recv.f(args)`, `recv.(expr)`), `[]` the indexer at its level; a
//!   call `value(args)` binds tightest.
//! - A binary operator calls `#operator_<symbol>`, a unary one
//!   `#unary_operator_<symbol>`, one with an alias `*<alias>`.
//! - The name-value operator (`=>` unless the table has none) separates a
//!   name or key from its value in an argument list.

use runtime::{Error, Span};

use super::flat::{Arg, Args, Flat, Id, Kind, Lit};
use super::lexer::{unescape, unquote_verbatim, LexOptions, Lexer, Tok};

/// What an operator of the table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpType {
    /// `op x`.
    Prefix,
    /// `x op`.
    Suffix,
    /// `x op y`, grouping to the left.
    BinaryLeft,
    /// `x op y`, grouping to the right.
    BinaryRight,
    /// `name op value` in an argument list (at most one in a table).
    NameValue,
}

impl OpType {
    /// The reference's `OperatorType` name (`PREFIX_UNARY`, ...).
    pub fn from_name(name: &str) -> Option<OpType> {
        Some(match name {
            "PREFIX_UNARY" => OpType::Prefix,
            "SUFFIX_UNARY" => OpType::Suffix,
            "BINARY_LEFT_ASSOCIATIVE" => OpType::BinaryLeft,
            "BINARY_RIGHT_ASSOCIATIVE" => OpType::BinaryRight,
            "NAME_VALUE_PAIR" => OpType::NameValue,
            _ => return None,
        })
    }
}

/// One record of the reference's table: an operator, or (`None`) the end
/// of a precedence group.
pub type Record = Option<(String, OpType, Option<String>)>;

/// An operator in one role (unary or binary).
#[derive(Clone, Debug)]
struct Role {
    /// Binding power: larger binds tighter.
    power: u32,
    /// Prefix (unary) or left-associative (binary).
    left: bool,
    /// The function it calls.
    name: String,
}

#[derive(Clone, Debug)]
struct Entry {
    symbol: String,
    unary: Option<Role>,
    binary: Option<Role>,
}

/// A checked operator table.
#[derive(Clone, Debug, Default)]
pub struct OpTable {
    entries: Vec<Entry>,
    /// Punctuation symbols (entry indices), longest first.
    punct: Vec<usize>,
    name_value: Option<String>,
    /// The indexer's binding power (`[]` in the table).
    indexer: Option<u32>,
}

fn invalid(symbol: &str) -> Error {
    Error::new(
        "InvalidOperatorTableException",
        format!("Invalid records in operator table for operator \"{symbol}\""),
    )
}

impl OpTable {
    /// The table of `records`, as the reference's `_build_operator_table`
    /// reads them: an operator given two unary or two binary roles, or a
    /// second name-value operator, is `InvalidOperatorTableException`.
    pub fn new(records: &[Record]) -> Result<OpTable, Error> {
        let groups = 1 + records.iter().filter(|r| r.is_none()).count() as u32;
        let mut t = OpTable::default();
        let mut level = 1;
        for r in records {
            let Some((symbol, ty, alias)) = r else {
                level += 1;
                continue;
            };
            if *ty == OpType::NameValue {
                if t.name_value.is_some() {
                    return Err(invalid(symbol));
                }
                t.name_value = Some(symbol.clone());
                continue;
            }
            let at = match t.entries.iter().position(|e| &e.symbol == symbol) {
                Some(i) => i,
                None => {
                    t.entries.push(Entry {
                        symbol: symbol.clone(),
                        unary: None,
                        binary: None,
                    });
                    t.entries.len() - 1
                }
            };
            let unary = matches!(ty, OpType::Prefix | OpType::Suffix);
            let name = match (alias, unary) {
                (Some(a), _) => format!("*{a}"),
                (None, true) => format!("#unary_operator_{symbol}"),
                (None, false) => format!("#operator_{symbol}"),
            };
            // As the reference's precedence list: per level, the
            // right-associative binary and suffix operators bind tighter
            // than the left-associative and prefix ones.
            let right = matches!(ty, OpType::Suffix | OpType::BinaryRight);
            let role = Role {
                power: 4 * (groups + 1 - level) + if right { 2 } else { 0 },
                left: matches!(ty, OpType::Prefix | OpType::BinaryLeft),
                name,
            };
            let e = &mut t.entries[at];
            let slot = if unary { &mut e.unary } else { &mut e.binary };
            if slot.is_some() {
                return Err(invalid(symbol));
            }
            *slot = Some(role);
        }
        t.indexer = t
            .entries
            .iter()
            .find(|e| e.symbol == "[]")
            .and_then(|e| e.binary.as_ref().map(|r| r.power));
        let mut punct: Vec<usize> = (0..t.entries.len())
            .filter(|&i| {
                let s = &t.entries[i].symbol;
                !s.is_empty() && !is_word_start(s) && s != "[]" && s != "{}"
            })
            .collect();
        punct.sort_by_key(|&i| std::cmp::Reverse(t.entries[i].symbol.len()));
        t.punct = punct;
        Ok(t)
    }

    fn entry(&self, symbol: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.symbol == symbol)
    }
}

fn is_word_start(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// A token of a table's language.
#[derive(Clone, Copy, Debug)]
enum T<'s> {
    /// An operator of the table (its symbol).
    Op(&'s str),
    /// The name-value operator.
    NameValue,
    /// Anything else, as the standard lexer reads it.
    Tok(Tok<'s>),
}

/// The nesting a parse allows before it refuses the expression (the
/// parser recurses once per level).
const MAX_NESTING: usize = 512;

struct Parser<'s, 't> {
    src: &'s str,
    table: &'s OpTable,
    opts: LexOptions,
    tree: &'t mut Flat<'s>,
    /// The next token and its span, read ahead.
    peeked: Option<(usize, T<'s>, usize)>,
    pos: usize,
    /// The end of the last token taken.
    end: usize,
    depth: usize,
}

/// Parses `src` with `table`'s operators into `tree` and returns its root.
pub fn parse<'s>(
    src: &'s str,
    table: &'s OpTable,
    opts: LexOptions,
    tree: &mut Flat<'s>,
) -> Result<Id, Error> {
    if src.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
        return Err(grammar("Parse error: empty expression", 0, 0));
    }
    // The reference lexes the whole expression first: a lexical error
    // anywhere wins over a syntax error before it.
    let mut p = Parser {
        src,
        table,
        opts,
        tree,
        peeked: None,
        pos: 0,
        end: 0,
        depth: 0,
    };
    while p.next()?.is_some() {}
    p.pos = 0;
    let root = p.expr(0)?;
    match p.next()? {
        None => Ok(root),
        Some((l, _, r)) => Err(p.unexpected(l, r)),
    }
}

fn grammar(msg: &str, l: usize, r: usize) -> Error {
    Error::new("YaqlGrammarException", msg).with_span(Span::new(l, r))
}

impl<'s> Parser<'s, '_> {
    /// Reads the token at `self.pos`.
    fn read(&mut self) -> Result<Option<(usize, T<'s>, usize)>, Error> {
        let b = self.src.as_bytes();
        let mut i = self.pos;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            self.pos = i;
            return Ok(None);
        };
        let plain = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'\'' | b'"' | b'`');
        if !plain && c < 0x80 {
            let rest = &self.src[i..];
            if let Some(nv) = &self.table.name_value {
                let longer = self.table.punct.iter().any(|&k| {
                    let s = &self.table.entries[k].symbol;
                    s.len() > nv.len() && rest.starts_with(s.as_str())
                });
                if rest.starts_with(nv.as_str()) && !longer {
                    self.pos = i + nv.len();
                    return Ok(Some((i, T::NameValue, self.pos)));
                }
            }
            for &k in &self.table.punct {
                let s = self.table.entries[k].symbol.as_str();
                if rest.starts_with(s) {
                    self.pos = i + s.len();
                    return Ok(Some((i, T::Op(s), self.pos)));
                }
            }
        }
        let mut lx = Lexer::at(self.src, i, self.opts);
        match lx.next() {
            None => {
                self.pos = self.src.len();
                Ok(None)
            }
            Some(Err(_)) => Err(lx
                .error
                .take()
                .unwrap_or_else(|| grammar("invalid token", i, i + 1))),
            Some(Ok((l, tok, r))) => {
                self.pos = r;
                let word = match tok {
                    Tok::Keyword(w) => Some(w),
                    Tok::And | Tok::Or | Tok::Not | Tok::Mod | Tok::In => Some(&self.src[l..r]),
                    _ => None,
                };
                let t = match word.and_then(|w| self.table.entry(w)) {
                    Some(e) => T::Op(e.symbol.as_str()),
                    None if word.is_some() => T::Tok(Tok::Keyword(&self.src[l..r])),
                    None => T::Tok(tok),
                };
                Ok(Some((l, t, r)))
            }
        }
    }

    fn peek(&mut self) -> Result<Option<(usize, T<'s>, usize)>, Error> {
        if self.peeked.is_none() {
            self.peeked = self.read()?;
        }
        Ok(self.peeked)
    }

    fn next(&mut self) -> Result<Option<(usize, T<'s>, usize)>, Error> {
        let t = match self.peeked.take() {
            Some(t) => Some(t),
            None => self.read()?,
        };
        if let Some((_, _, r)) = t {
            self.end = r;
        }
        Ok(t)
    }

    fn unexpected(&self, l: usize, r: usize) -> Error {
        let text = self.src.get(l..r).unwrap_or("?");
        grammar(&format!("Parse error: unexpected '{text}'"), l, r)
    }

    fn eof(&self) -> Error {
        let n = self.src.len();
        grammar("unexpected end of statement", n, n)
    }

    /// The next token, which must be there.
    fn need(&mut self) -> Result<(usize, T<'s>, usize), Error> {
        self.next()?.ok_or_else(|| self.eof())
    }

    /// An expression whose operators bind at least as tightly as `min`.
    fn expr(&mut self, min: u32) -> Result<Id, Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let at = self.pos;
            return Err(grammar("Parse error: expression nested too deeply", at, at));
        }
        let start = self.peek()?.map_or(self.src.len(), |t| t.0);
        let mut left = self.prefix()?;
        while let Some((_, t, r)) = self.peek()? {
            let Some(next) = self.infix(start, left, min, (t, r))? else {
                break;
            };
            left = next;
        }
        self.depth -= 1;
        Ok(left)
    }

    /// `left` extended by the operator (or postfix) at the next token,
    /// when it binds at least as tightly as `min`.
    fn infix(
        &mut self,
        start: usize,
        left: Id,
        min: u32,
        (t, r): (T<'s>, usize),
    ) -> Result<Option<Id>, Error> {
        let table = self.table;
        match t {
            T::Op(sym) => {
                let e = table.entry(sym).expect("a table operator");
                if let Some(b) = &e.binary {
                    if b.power < min {
                        return Ok(None);
                    }
                    self.next()?;
                    let right = self.expr(if b.left { b.power + 1 } else { b.power })?;
                    let end = self.end;
                    return Ok(Some(self.binary(sym, &b.name, left, right, start, end)));
                }
                match &e.unary {
                    Some(u) if !u.left && u.power >= min => {
                        self.next()?;
                        Ok(Some(self.call(&u.name, &[left], start, r)))
                    }
                    _ => Ok(None),
                }
            }
            T::Tok(Tok::LBracket) => match self.table.indexer {
                Some(p) if p >= min => {
                    self.next()?;
                    let (args, end) = self.args(Tok::RBracket)?;
                    Ok(Some(self.tree.node(Kind::Index(left, args), start, end)))
                }
                _ => Ok(None),
            },
            T::Tok(Tok::LParen) => {
                self.next()?;
                let (args, end) = self.args(Tok::RParen)?;
                Ok(Some(self.tree.node(Kind::Delegate(left, args), start, end)))
            }
            _ => Ok(None),
        }
    }

    /// A prefix operator and its operand, or a primary.
    fn prefix(&mut self) -> Result<Id, Error> {
        let (l, t, r) = self.need()?;
        let lit = |k| Kind::Lit(k);
        let table = self.table;
        let kind = match t {
            T::Op(sym) => {
                let e = table.entry(sym).expect("a table operator");
                let Some(u) = e.unary.as_ref().filter(|u| u.left) else {
                    return Err(self.unexpected(l, r));
                };
                let x = self.expr(u.power + 1)?;
                let end = self.end;
                return Ok(self.call(&u.name, &[x], l, end));
            }
            T::NameValue => return Err(self.unexpected(l, r)),
            T::Tok(tok) => match tok {
                Tok::Int(s) => lit(Lit::Int(s)),
                Tok::Float(s) => lit(Lit::Float(s.parse().unwrap_or(0.0))),
                Tok::Str(s) => lit(Lit::Str(unescape(s))),
                Tok::Verbatim(s) => lit(Lit::Str(unquote_verbatim(s))),
                Tok::True => lit(Lit::Bool(true)),
                Tok::False => lit(Lit::Bool(false)),
                Tok::Null => lit(Lit::Null),
                Tok::Dollar(v) => Kind::Var(v),
                Tok::Keyword(k) => Kind::Keyword(k),
                Tok::Func(f) => {
                    let (args, end) = self.args(Tok::RParen)?;
                    return Ok(self.tree.node(Kind::Call(f, args), l, end));
                }
                Tok::LParen => {
                    let e = self.expr(0)?;
                    return match self.need()? {
                        (_, T::Tok(Tok::RParen), _) => Ok(e),
                        (l, _, r) => Err(self.unexpected(l, r)),
                    };
                }
                Tok::LBracket => {
                    let (args, end) = self.args(Tok::RBracket)?;
                    return Ok(self.tree.node(Kind::List(args), l, end));
                }
                Tok::LBrace => {
                    let (args, end) = self.args(Tok::RBrace)?;
                    return Ok(self.tree.node(Kind::Map(args), l, end));
                }
                _ => return Err(self.unexpected(l, r)),
            },
        };
        Ok(self.tree.node(kind, l, r))
    }

    /// An argument list up to `close` (consumed): its arguments and the
    /// end of `close`.
    fn args(&mut self, close: Tok<'static>) -> Result<(Args, usize), Error> {
        let mut items: Vec<Arg<'s>> = Vec::new();
        loop {
            let (_, t, _) = self.peek()?.ok_or_else(|| self.eof())?;
            let item = match t {
                T::Tok(Tok::Comma) => Arg::Skip,
                T::Tok(c) if c == close => Arg::Skip,
                _ => {
                    let k = self.expr(0)?;
                    if let Some((_, T::NameValue, _)) = self.peek()? {
                        self.next()?;
                        let v = self.expr(0)?;
                        self.tree.named_or_mapping(k, v)
                    } else {
                        Arg::Pos(k)
                    }
                }
            };
            items.push(item);
            let (l2, t, r2) = self.need()?;
            match t {
                T::Tok(Tok::Comma) => continue,
                T::Tok(c) if c == close => {
                    let mut v = self.tree.first(items[0]);
                    v.extend_from_slice(&items[1..]);
                    let args = self
                        .tree
                        .finish_args(v)
                        .map_err(|e| grammar(&format!("Parse error: {e}"), 0, self.src.len()))?;
                    return Ok((args, r2));
                }
                _ => return Err(self.unexpected(l2, r2)),
            }
        }
    }

    /// A binary operator's node: `.` and `?.` make member access, an
    /// operator of the standard grammar its node, any other a call.
    fn binary(&mut self, sym: &str, name: &'s str, a: Id, b: Id, l: usize, r: usize) -> Id {
        match sym {
            "." => self.tree.member(a, b, l, r),
            "?." => self.tree.node(Kind::SafeDot(a, b), l, r),
            _ => self.call(name, &[a, b], l, r),
        }
    }

    /// `name(operands)`: the standard grammar's operator node when `name`
    /// is one of its operators, else a call of `name`.
    fn call(&mut self, name: &'s str, operands: &[Id], l: usize, r: usize) -> Id {
        if let Some(s) = standard_name(name) {
            return self.tree.op(s, operands, l, r);
        }
        let mut v = self.tree.first(Arg::Pos(operands[0]));
        v.extend(operands[1..].iter().map(|&x| Arg::Pos(x)));
        let args = self
            .tree
            .finish_args(v)
            .expect("positional operands make a valid list");
        self.tree.node(Kind::Call(name, args), l, r)
    }
}

/// The function names the standard grammar's operators call.
fn standard_name(name: &str) -> Option<&'static str> {
    const NAMES: [&str; 21] = [
        "#operator_->",
        "#operator_=>",
        "#operator_or",
        "#operator_and",
        "#unary_operator_not",
        "*equal",
        "*not_equal",
        "#operator_<",
        "#operator_<=",
        "#operator_>",
        "#operator_>=",
        "#operator_in",
        "#operator_+",
        "#operator_-",
        "#operator_*",
        "#operator_/",
        "#operator_mod",
        "#operator_=~",
        "#operator_!~",
        "#unary_operator_-",
        "#unary_operator_+",
    ];
    NAMES.iter().find(|n| **n == name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaql::ast::Expr;

    fn rec(s: &str, ty: OpType) -> Record {
        Some((s.to_string(), ty, None))
    }

    /// The reference factory's table (`YaqlFactory()._standard_operators`
    /// with `=>` as the name-value operator, and its `[]`/`{}` group), or
    /// the yaql 0.2 one (`=>` a binary operator after `or`).
    fn standard(legacy: bool) -> Vec<Record> {
        use OpType::*;
        let groups: Vec<Vec<Record>> = vec![
            vec![rec(".", BinaryLeft), rec("?.", BinaryLeft)],
            vec![rec("[]", BinaryLeft), rec("{}", BinaryLeft)],
            vec![rec("+", Prefix), rec("-", Prefix)],
            vec![rec("=~", BinaryLeft), rec("!~", BinaryLeft)],
            vec![
                rec("*", BinaryLeft),
                rec("/", BinaryLeft),
                rec("mod", BinaryLeft),
            ],
            vec![rec("+", BinaryLeft), rec("-", BinaryLeft)],
            vec![
                rec(">", BinaryLeft),
                rec("<", BinaryLeft),
                rec(">=", BinaryLeft),
                rec("<=", BinaryLeft),
                Some(("!=".into(), BinaryLeft, Some("not_equal".into()))),
                Some(("=".into(), BinaryLeft, Some("equal".into()))),
                rec("in", BinaryLeft),
            ],
            vec![rec("not", Prefix)],
            vec![rec("and", BinaryLeft)],
            vec![rec("or", BinaryLeft)],
        ];
        let mut out: Vec<Record> = Vec::new();
        if !legacy {
            out.push(rec("=>", NameValue));
        }
        for g in groups {
            if !out.is_empty()
                && out
                    .last()
                    .is_some_and(|r| r.is_some() && r.as_ref().unwrap().1 != NameValue)
            {
                out.push(None);
            }
            out.extend(g);
        }
        if legacy {
            out.extend([None, rec("=>", BinaryLeft)]);
        }
        out.extend([None, rec("->", BinaryRight)]);
        out
    }

    fn opts(legacy: bool) -> LexOptions {
        LexOptions {
            legacy,
            murano: false,
        }
    }

    fn with_table(src: &str, t: &OpTable, legacy: bool) -> Result<Expr, String> {
        let mut f = Flat::default();
        let root = parse(src, t, opts(legacy), &mut f).map_err(|e| e.kind().to_string())?;
        Ok(*f.tree(root))
    }

    fn fixed(src: &str, legacy: bool) -> Result<Expr, String> {
        crate::yaql::parse(src, opts(legacy))
            .map(|e| *e)
            .map_err(|e| e.kind().to_string())
    }

    /// With the standard table, the trees (spans included) and the errors
    /// are the fixed grammar's.
    #[test]
    fn the_standard_table_parses_as_the_grammar() {
        let cases = [
            "1 + 2 * 3 - -4",
            "$.where($.age > 30).select($.name)",
            "$.a[0].b?.c(1, x => 2)",
            "not a and b or c -> d -> e",
            "(1 + 2) * 3 mod 4 / 5",
            "'a' =~ 'b' != x !~ y = z",
            "[1, 2, {a => 1, 'k' => [3]}]",
            "f(, 1)(2)[3]",
            "$x in [1] and -$.y.len() >= 2",
            "a.(b + 1).c",
            "`v` + \"s\" + 1.5 + true + null",
            "$[1, 2]",
            "f()",
            "1 +",
            "f(1,)",
            "f(a => 1, 2)",
            "(1",
            "1 2",
            "#",
            "  ",
            "a => b",
        ];
        let t = OpTable::new(&standard(false)).unwrap();
        for src in cases {
            assert_eq!(with_table(src, &t, false), fixed(src, false), "{src}");
        }
        let t = OpTable::new(&standard(true)).unwrap();
        for src in [
            "1 => 2 => 3",
            "(1 => 2) => 3",
            "a or b => c -> d",
            "f(a => 1)",
        ] {
            assert_eq!(with_table(src, &t, true), fixed(src, true), "{src}");
        }
    }

    fn show(e: &Expr) -> String {
        use crate::yaql::ast::{Arg, ExprKind as K};
        match &e.kind {
            K::Op(name, xs) => {
                let xs: Vec<String> = xs.iter().map(show).collect();
                format!("{name}({})", xs.join(", "))
            }
            K::Call(name, args) => {
                let xs: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Pos(x) => show(x),
                        other => format!("{other:?}"),
                    })
                    .collect();
                format!("{name}({})", xs.join(", "))
            }
            K::Keyword(k) => k.clone(),
            K::Var(v) => format!("${v}"),
            K::Lit(l) => format!("{l:?}"),
            K::Attr(r, n) => format!("{}.{n}", show(r)),
            K::Index(r, _) => format!("{}[..]", show(r)),
            other => format!("{other:?}"),
        }
    }

    fn parsed(src: &str, t: &OpTable) -> String {
        show(&with_table(src, t, false).unwrap())
    }

    /// Inserted operators parse at their level, with their associativity,
    /// and call `#operator_<symbol>` (or their alias).
    #[test]
    fn inserted_operators_parse_at_their_level() {
        use OpType::*;
        let mut recs = standard(false);
        // `&` a group of its own after `and`'s; `**` right-associative in
        // `*`'s group; `xor` a word; `!` a suffix; `~` a prefix aliased.
        let at = |recs: &Vec<Record>, s: &str| {
            recs.iter()
                .position(|r| r.as_ref().is_some_and(|r| r.0 == s))
                .unwrap()
        };
        let and = at(&recs, "and");
        recs.splice(and + 1..and + 1, [None, rec("&", BinaryLeft)]);
        let star = at(&recs, "*");
        recs.insert(star + 1, rec("**", BinaryRight));
        let or = at(&recs, "or");
        recs.insert(or + 1, rec("xor", BinaryLeft));
        let plus = at(&recs, "+");
        recs.insert(plus, rec("!", Suffix));
        recs.insert(plus, Some(("~".into(), Prefix, Some("tilde".into()))));
        let t = OpTable::new(&recs).unwrap();
        assert_eq!(
            parsed("a and b & c and d", &t),
            "#operator_&(#operator_and(a, b), #operator_and(c, d))"
        );
        assert_eq!(
            parsed("2 ** 3 ** 2 * 4", &t),
            "#operator_*(#operator_**(Int(\"2\"), #operator_**(Int(\"3\"), Int(\"2\"))), Int(\"4\"))"
        );
        assert_eq!(
            parsed("a xor b or c", &t),
            "#operator_or(#operator_xor(a, b), c)"
        );
        assert_eq!(parsed("xor(1)", &t), "xor(Int(\"1\"))");
        assert_eq!(
            parsed("$.a! + 1", &t),
            "#operator_+(#unary_operator_!($.a), Int(\"1\"))"
        );
        assert_eq!(parsed("~$x.y", &t), "*tilde($x.y)");
        // A call written after `.` is a method call, as the reference's
        // `#operator_.` makes it: an operator binding tighter than `.`
        // is one too.
        let mut recs = standard(false);
        recs.splice(1..1, [rec("!", Suffix), None]);
        let t = OpTable::new(&recs).unwrap();
        let e = with_table("$.a!", &t, false).unwrap();
        assert!(
            matches!(&e.kind, crate::yaql::ast::ExprKind::Method(_, n, a)
            if n == "#unary_operator_!" && a.len() == 1)
        );
        // A high-precedence operator above `.` leaves `$.a[0]` alone.
        let mut recs = standard(false);
        recs.splice(0..0, [rec(":", BinaryLeft), None]);
        let t = OpTable::new(&recs).unwrap();
        assert_eq!(parsed("$.a[0]", &t), "$.a[..]");
        assert_eq!(parsed("a:b.c", &t), "#operator_:(a, b).c");
        // An operator the table does not have is not one.
        assert_eq!(
            with_table("a & b", &OpTable::new(&standard(false)).unwrap(), false).unwrap_err(),
            "YaqlLexicalException"
        );
    }

    /// The reference's `_build_operator_table` refuses a symbol with two
    /// roles of one kind and a second name-value operator.
    #[test]
    fn invalid_tables_are_refused() {
        use OpType::*;
        let kind = |recs: &[Record]| OpTable::new(recs).unwrap_err().kind().to_string();
        assert_eq!(
            kind(&[rec("+", BinaryLeft), None, rec("+", BinaryRight)]),
            "InvalidOperatorTableException"
        );
        assert_eq!(
            kind(&[rec("-", Prefix), rec("-", Suffix)]),
            "InvalidOperatorTableException"
        );
        assert_eq!(
            kind(&[rec("=>", NameValue), rec(":", NameValue)]),
            "InvalidOperatorTableException"
        );
        assert!(OpTable::new(&[rec("-", Prefix), rec("-", BinaryLeft)]).is_ok());
    }

    /// Nesting is bounded: a deep expression is an error, not a crash.
    #[test]
    fn deep_nesting_is_an_error() {
        let t = OpTable::new(&standard(false)).unwrap();
        let src = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(
            with_table(&src, &t, false).unwrap_err(),
            "YaqlGrammarException"
        );
        let src = format!("{}1", "-".repeat(5000));
        assert_eq!(
            with_table(&src, &t, false).unwrap_err(),
            "YaqlGrammarException"
        );
    }
}

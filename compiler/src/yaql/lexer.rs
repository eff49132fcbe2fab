//! The YAQL lexer, following `yaql/language/lexer.py`.
//!
//! Tokens borrow their text from the source, and so do the nodes of the
//! parser's [`super::flat::Flat`] tree: a token costs no allocation.
//! [`Lexer`] streams tokens to the parser.

use std::borrow::Cow;

use runtime::{Error, Span};

/// A token. Payloads are slices of the source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tok<'a> {
    /// `$`, `$1`, `$name` (the text after `$`).
    Dollar(&'a str),
    /// Integer literal text.
    Int(&'a str),
    /// Float literal text.
    Float(&'a str),
    /// Identifier immediately followed by `(`.
    Func(&'a str),
    /// A bare identifier.
    Keyword(&'a str),
    /// A quoted string: the text between the quotes, escapes not decoded
    /// (see [`unescape`]).
    Str(&'a str),
    /// A verbatim (backquoted) string: the text between the backquotes,
    /// `` \` `` not decoded (see [`unquote_verbatim`]).
    Verbatim(&'a str),
    /// `true`
    True,
    /// `false`
    False,
    /// `null`
    Null,
    /// `and`
    And,
    /// `or`
    Or,
    /// `not`
    Not,
    /// `mod`
    Mod,
    /// `in`
    In,
    /// `is` (MuranoPL only)
    Is,
    /// `:` (MuranoPL only)
    Colon,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `=>` as the keyword-argument / mapping marker (default engine)
    Arrow,
    /// `=>` as a binary operator (legacy engine)
    LegacyArrow,
    /// `->`
    Send,
    /// `.`
    Dot,
    /// `?.`
    QDot,
    /// `=~`
    Match,
    /// `!~`
    NotMatch,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `>`
    Gt,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `!=`
    Ne,
    /// `=`
    Eq,
}

/// Lexer options.
#[derive(Clone, Copy, Debug, Default)]
pub struct LexOptions {
    /// yaql 0.2 mode: `=>` is a binary operator.
    pub legacy: bool,
    /// MuranoPL operators `is` and `:`.
    pub murano: bool,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// ASCII identifier characters (no byte >= 0x80: see `word_end`). An
/// immutable table, computed at compile time.
static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 128 {
        t[c] = (c as u8).is_ascii_alphanumeric() || c == b'_' as usize;
        c += 1;
    }
    t
};

fn lex_error(msg: String, at: usize, len: usize) -> Error {
    Error::new("YaqlLexicalException", msg).with_span(Span::new(at, at + len.max(1)))
}

/// A token with its byte span.
pub type Spanned<'a> = (usize, Tok<'a>, usize);

/// The streaming lexer: an iterator of tokens that stops at the first
/// lexical error, which it keeps in [`Lexer::error`] (the item is then an
/// `Err`).
pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    opts: LexOptions,
    /// The lexical error that stopped the lexer.
    pub error: Option<Error>,
}

impl<'a> Lexer<'a> {
    /// A lexer over `src`.
    pub fn new(src: &'a str, opts: LexOptions) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            opts,
            error: None,
        }
    }

    /// A lexer over `src` from byte `pos` on (a character boundary).
    pub(crate) fn at(src: &'a str, pos: usize, opts: LexOptions) -> Lexer<'a> {
        Lexer {
            src,
            pos,
            opts,
            error: None,
        }
    }

    /// Lexes the rest of the input, returning the first lexical error.
    pub fn finish(&mut self) -> Option<Error> {
        while self.error.is_none() && self.next().is_some() {}
        self.error.take()
    }

    /// The end of the word (identifier characters) starting at `i`.
    #[inline(always)]
    fn word_end(&self, mut i: usize) -> usize {
        let b = self.src.as_bytes();
        while i < b.len() && WORD[b[i] as usize] {
            i += 1;
        }
        if i < b.len() && b[i] >= 0x80 {
            self.word_end_unicode(i)
        } else {
            i
        }
    }

    /// `word_end` from a non-ASCII character on.
    #[inline(never)]
    fn word_end_unicode(&self, mut i: usize) -> usize {
        let b = self.src.as_bytes();
        while let Some(&c) = b.get(i) {
            if c < 0x80 {
                if !WORD[c as usize] {
                    break;
                }
                i += 1;
            } else {
                let ch = self.src[i..].chars().next().unwrap();
                if !is_word(ch) {
                    break;
                }
                i += ch.len_utf8();
            }
        }
        i
    }

    /// Stops at a lexical error.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, e: Error) -> Option<<Self as Iterator>::Item> {
        self.error = Some(e);
        self.pos = self.src.len();
        Some(Err("lexical error"))
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Spanned<'a>, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        let src = self.src;
        let b = src.as_bytes();
        let mut i = self.pos;
        let c0 = loop {
            match b.get(i) {
                Some(b' ' | b'\t' | b'\r' | b'\n') => i += 1,
                Some(&c) => break c,
                None => {
                    self.pos = i;
                    return None;
                }
            }
        };
        match c0 {
            b'$' => {
                let j = self.word_end(i + 1);
                self.token(i, Tok::Dollar(&src[i + 1..j]), j)
            }
            b'0'..=b'9' => self.number(i),
            b'\'' | b'"' => self.string(i, c0),
            b'`' => self.verbatim(i),
            _ if WORD[c0 as usize] || (c0 >= 0x80 && self.word_end(i) > i) => self.word(i),
            _ => self.punct(i, c0),
        }
    }
}

/// The tokens by their first character; each moves past its token and
/// returns it (or the lexical error).
impl<'a> Lexer<'a> {
    /// The token `t` at `start..end`; the lexer moves to `end`.
    #[inline(always)]
    fn token(&mut self, start: usize, t: Tok<'a>, end: usize) -> Option<<Self as Iterator>::Item> {
        self.pos = end;
        Some(Ok((start, t, end)))
    }

    /// A number at `i`: `\b\d+(\.?\d+)?\b`.
    #[inline(always)]
    fn number(&mut self, i: usize) -> Option<<Self as Iterator>::Item> {
        let src = self.src;
        let b = src.as_bytes();
        let prev_word = src[..i].chars().next_back().is_some_and(is_word);
        if prev_word {
            let c = b[i] as char;
            return self.fail(lex_error(format!("Illegal character '{c}'"), i, 1));
        }
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let mut is_float = false;
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            j += 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            is_float = true;
        }
        if self.word_end(j) != j {
            return self.fail(lex_error(
                format!("Illegal character '{}'", &src[i..i + 1]),
                i,
                1,
            ));
        }
        let text = &src[i..j];
        let t = if is_float {
            Tok::Float(text)
        } else {
            Tok::Int(text)
        };
        self.token(i, t, j)
    }

    /// A string quoted by `quote` at `i`.
    #[inline(always)]
    fn string(&mut self, i: usize, quote: u8) -> Option<<Self as Iterator>::Item> {
        let src = self.src;
        let b = src.as_bytes();
        let mut j = i + 1;
        let mut closed = false;
        while j < b.len() {
            if b[j] == b'\\' {
                j += 2;
                continue;
            }
            if b[j] == quote {
                closed = true;
                break;
            }
            j += 1;
        }
        if !closed {
            let c = quote as char;
            return self.fail(lex_error(format!("Illegal character '{c}'"), i, 1));
        }
        self.token(i, Tok::Str(&src[i + 1..j]), j + 1)
    }

    /// A `` `verbatim` `` string at `i`.
    #[inline(always)]
    fn verbatim(&mut self, i: usize) -> Option<<Self as Iterator>::Item> {
        let src = self.src;
        let b = src.as_bytes();
        let mut j = i + 1;
        let mut closed = false;
        while j < b.len() {
            // As the reference's `` `([^`\\]|\\.)*` ``: a backslash
            // escapes any character (only `` \` `` is decoded).
            if b[j] == b'\\' && j + 1 < b.len() {
                j += 2;
                continue;
            }
            if b[j] == b'`' {
                closed = true;
                break;
            }
            j += 1;
        }
        if !closed {
            return self.fail(lex_error("Illegal character '`'".into(), i, 1));
        }
        self.token(i, Tok::Verbatim(&src[i + 1..j]), j + 1)
    }

    /// A word at `i`: a function name (before `(`), a keyword operator or
    /// constant, or a keyword.
    #[inline(always)]
    fn word(&mut self, i: usize) -> Option<<Self as Iterator>::Item> {
        let src = self.src;
        let b = src.as_bytes();
        let j = self.word_end(i);
        let word = &src[i..j];
        if word.starts_with("__") {
            return self.fail(lex_error(
                format!("Illegal character '{}'", &word[..1]),
                i,
                1,
            ));
        }
        if j < b.len() && b[j] == b'(' {
            return self.token(i, Tok::Func(word), j + 1);
        }
        let t = match word {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "and" => Tok::And,
            "or" => Tok::Or,
            "not" => Tok::Not,
            "mod" => Tok::Mod,
            "in" => Tok::In,
            "is" if self.opts.murano => Tok::Is,
            _ => Tok::Keyword(word),
        };
        self.token(i, t, j)
    }

    /// An operator or punctuation of one or two characters at `i`.
    #[inline(always)]
    fn punct(&mut self, i: usize, c0: u8) -> Option<<Self as Iterator>::Item> {
        let next = self.src.as_bytes().get(i + 1).copied().unwrap_or(0);
        let t2 = match (c0, next) {
            (b'?', b'.') => Some(Tok::QDot),
            (b'=', b'~') => Some(Tok::Match),
            (b'!', b'~') => Some(Tok::NotMatch),
            (b'>', b'=') => Some(Tok::Ge),
            (b'<', b'=') => Some(Tok::Le),
            (b'!', b'=') => Some(Tok::Ne),
            (b'-', b'>') => Some(Tok::Send),
            (b'=', b'>') => Some(if self.opts.legacy {
                Tok::LegacyArrow
            } else {
                Tok::Arrow
            }),
            _ => None,
        };
        if let Some(t) = t2 {
            return self.token(i, t, i + 2);
        }
        let t1 = match c0 {
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b',' => Tok::Comma,
            b'.' => Tok::Dot,
            b'*' => Tok::Star,
            b'/' => Tok::Slash,
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'>' => Tok::Gt,
            b'<' => Tok::Lt,
            b'=' => Tok::Eq,
            b':' if self.opts.murano => Tok::Colon,
            _ => {
                let c = self.src[i..].chars().next().unwrap();
                return self.fail(lex_error(
                    format!("Illegal character '{c}'"),
                    i,
                    c.len_utf8(),
                ));
            }
        };
        self.token(i, t1, i + 1)
    }
}

/// Splits `src` into tokens with byte spans.
pub fn tokenize(src: &str, opts: LexOptions) -> Result<Vec<Spanned<'_>>, Error> {
    let mut lx = Lexer::new(src, opts);
    let toks: Vec<_> = lx.by_ref().filter_map(Result::ok).collect();
    match lx.error {
        Some(e) => Err(e),
        None => Ok(toks),
    }
}

/// Decodes a verbatim string's text: `` \` `` is a backquote.
pub fn unquote_verbatim(raw: &str) -> Cow<'_, str> {
    if raw.contains("\\`") {
        Cow::Owned(raw.replace("\\`", "`"))
    } else {
        Cow::Borrowed(raw)
    }
}

/// Decodes backslash escapes as Python's `unicode_escape` does for the
/// sequences it knows; unknown sequences stay as they are.
pub fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let cs: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c != '\\' || i + 1 >= cs.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = cs[i + 1];
        let simple = match n {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\n' => None,
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            i += 2;
            continue;
        }
        let hex = |len: usize| -> Option<char> {
            if i + 2 + len > cs.len() {
                return None;
            }
            let h: String = cs[i + 2..i + 2 + len].iter().collect();
            u32::from_str_radix(&h, 16).ok().and_then(char::from_u32)
        };
        match n {
            'x' | 'u' | 'U' => {
                let len = match n {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                if let Some(ch) = hex(len) {
                    out.push(ch);
                    i += 2 + len;
                } else {
                    out.push('\\');
                    i += 1;
                }
            }
            '0'..='7' => {
                let mut j = i + 1;
                let mut v = 0u32;
                while j < cs.len() && j < i + 4 && ('0'..='7').contains(&cs[j]) {
                    v = v * 8 + cs[j].to_digit(8).unwrap();
                    j += 1;
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                i = j;
            }
            'N' if i + 2 < cs.len() && cs[i + 2] == '{' => {
                // Named escapes: keep as is (no Unicode name table here).
                out.push('\\');
                i += 1;
            }
            _ => {
                out.push('\\');
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

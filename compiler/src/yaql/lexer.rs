//! The YAQL lexer, following `yaql/language/lexer.py`.

use runtime::{Error, Span};

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `$`, `$1`, `$name` (the text after `$`).
    Dollar(String),
    /// Integer literal text.
    Int(String),
    /// Float literal text.
    Float(String),
    /// Identifier immediately followed by `(`.
    Func(String),
    /// A bare identifier.
    Keyword(String),
    /// A quoted or verbatim string (decoded).
    Str(String),
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

fn lex_error(msg: String, at: usize, len: usize) -> Error {
    Error::new("YaqlLexicalException", msg).with_span(Span::new(at, at + len.max(1)))
}

/// Splits `src` into tokens with byte spans.
pub fn tokenize(src: &str, opts: LexOptions) -> Result<Vec<(usize, Tok, usize)>, Error> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let prev_word = |i: usize| -> bool { src[..i].chars().next_back().is_some_and(is_word) };
    while i < src.len() {
        let c = src[i..].chars().next().unwrap();
        if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
            i += 1;
            continue;
        }
        let start = i;
        if c == '$' {
            let mut j = i + 1;
            while let Some(ch) = src[j..].chars().next() {
                if is_word(ch) {
                    j += ch.len_utf8();
                } else {
                    break;
                }
            }
            out.push((start, Tok::Dollar(src[i + 1..j].to_string()), j));
            i = j;
            continue;
        }
        if c.is_ascii_digit() {
            // \b\d+(\.?\d+)?\b
            if prev_word(i) {
                return Err(lex_error(format!("Illegal character '{c}'"), i, 1));
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
            if src[j..].chars().next().is_some_and(is_word) {
                return Err(lex_error(
                    format!("Illegal character '{}'", &src[start..start + 1]),
                    start,
                    1,
                ));
            }
            let text = src[i..j].to_string();
            out.push((
                start,
                if is_float {
                    Tok::Float(text)
                } else {
                    Tok::Int(text)
                },
                j,
            ));
            i = j;
            continue;
        }
        if is_word(c) {
            let mut j = i;
            while let Some(ch) = src[j..].chars().next() {
                if is_word(ch) {
                    j += ch.len_utf8();
                } else {
                    break;
                }
            }
            let word = &src[i..j];
            if word.starts_with("__") {
                return Err(lex_error(
                    format!("Illegal character '{}'", &word[..1]),
                    i,
                    1,
                ));
            }
            if j < b.len() && b[j] == b'(' {
                out.push((start, Tok::Func(word.to_string()), j + 1));
                i = j + 1;
                continue;
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
                "is" if opts.murano => Tok::Is,
                _ => Tok::Keyword(word.to_string()),
            };
            out.push((start, t, j));
            i = j;
            continue;
        }
        if c == '\'' || c == '"' {
            let mut j = i + 1;
            let mut closed = false;
            while j < b.len() {
                if b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if b[j] == c as u8 {
                    closed = true;
                    break;
                }
                j += 1;
            }
            if !closed {
                return Err(lex_error(format!("Illegal character '{c}'"), i, 1));
            }
            let raw = &src[i + 1..j];
            out.push((start, Tok::Str(unescape(raw)), j + 1));
            i = j + 1;
            continue;
        }
        if c == '`' {
            let mut j = i + 1;
            let mut s = String::new();
            let mut closed = false;
            while j < b.len() {
                if b[j] == b'\\' && j + 1 < b.len() && b[j + 1] == b'`' {
                    s.push('`');
                    j += 2;
                    continue;
                }
                if b[j] == b'`' {
                    closed = true;
                    break;
                }
                let ch = src[j..].chars().next().unwrap();
                s.push(ch);
                j += ch.len_utf8();
            }
            if !closed {
                return Err(lex_error("Illegal character '`'".into(), i, 1));
            }
            out.push((start, Tok::Str(s), j + 1));
            i = j + 1;
            continue;
        }
        let two = src.get(i..i + 2).unwrap_or("");
        let t2 = match two {
            "?." => Some(Tok::QDot),
            "=~" => Some(Tok::Match),
            "!~" => Some(Tok::NotMatch),
            ">=" => Some(Tok::Ge),
            "<=" => Some(Tok::Le),
            "!=" => Some(Tok::Ne),
            "->" => Some(Tok::Send),
            "=>" => Some(if opts.legacy {
                Tok::LegacyArrow
            } else {
                Tok::Arrow
            }),
            _ => None,
        };
        if let Some(t) = t2 {
            out.push((start, t, i + 2));
            i += 2;
            continue;
        }
        let t1 = match c {
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            ',' => Tok::Comma,
            '.' => Tok::Dot,
            '*' => Tok::Star,
            '/' => Tok::Slash,
            '+' => Tok::Plus,
            '-' => Tok::Minus,
            '>' => Tok::Gt,
            '<' => Tok::Lt,
            '=' => Tok::Eq,
            ':' if opts.murano => Tok::Colon,
            _ => {
                return Err(lex_error(
                    format!("Illegal character '{c}'"),
                    i,
                    c.len_utf8(),
                ))
            }
        };
        out.push((start, t1, i + 1));
        i += 1;
    }
    Ok(out)
}

/// Decodes backslash escapes as Python's `unicode_escape` does for the
/// sequences it knows; unknown sequences stay as they are.
pub fn unescape(raw: &str) -> String {
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
    out
}

//! The YAQL front end: lexer, grammar (lalrpop) and syntax tree, and the
//! precedence-climbing parser of engines with an operator table of their
//! own ([`table`]).

pub mod ast;
pub mod flat;
pub mod lexer;
pub mod table;

#[allow(missing_docs, clippy::all, unused_parens, unreachable_pub)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/yaql/grammar.rs"));
}

use lalrpop_util::ParseError;
use runtime::{Error, Span};

pub use lexer::LexOptions;

/// Parses a YAQL expression into its syntax tree.
pub fn parse(src: &str, opts: LexOptions) -> Result<Box<ast::Expr>, Error> {
    let mut tree = flat::Flat::with_capacity(src.len());
    let root = parse_flat(src, opts, &mut tree)?;
    Ok(tree.tree(root))
}

/// Parses a YAQL expression into `tree` (empty) and returns its root.
///
/// The lexer streams tokens to the parser. A lexical error anywhere in
/// `src` wins over a syntax error before it (the reference tokenizes the
/// whole expression first), so after a syntax error the rest is lexed.
pub fn parse_flat<'s>(
    src: &'s str,
    opts: LexOptions,
    tree: &mut flat::Flat<'s>,
) -> Result<flat::Id, Error> {
    if src
        .bytes()
        .all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return Err(
            Error::new("YaqlGrammarException", "Parse error: empty expression")
                .with_span(Span::new(0, 0)),
        );
    }
    let mut lx = lexer::Lexer::new(src, opts);
    let r = grammar::ExprParser::new().parse(tree, lx.by_ref());
    match r {
        Ok(e) => Ok(e),
        Err(e) => Err(match lx.finish() {
            Some(lex) => lex,
            None => grammar_error(src, e),
        }),
    }
}

fn grammar_error(src: &str, e: ParseError<usize, lexer::Tok<'_>, &'static str>) -> Error {
    let (msg, span) = match e {
        ParseError::InvalidToken { location } => (
            "invalid token".to_string(),
            Span::new(location, location + 1),
        ),
        ParseError::UnrecognizedEof { location, .. } => (
            "unexpected end of statement".to_string(),
            Span::new(location, location),
        ),
        ParseError::UnrecognizedToken {
            token: (l, _, r), ..
        } => (
            format!("Parse error: unexpected '{}'", src.get(l..r).unwrap_or("?")),
            Span::new(l, r),
        ),
        ParseError::ExtraToken { token: (l, _, r) } => (
            format!("Parse error: unexpected '{}'", src.get(l..r).unwrap_or("?")),
            Span::new(l, r),
        ),
        ParseError::User { error } => (format!("Parse error: {error}"), Span::new(0, src.len())),
    };
    Error::new("YaqlGrammarException", msg).with_span(span)
}

//! The YAQL front end: lexer, grammar (lalrpop) and syntax tree.

pub mod ast;
pub mod lexer;

#[allow(missing_docs, clippy::all, unused_parens, unreachable_pub)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/yaql/grammar.rs"));
}

use lalrpop_util::ParseError;
use runtime::{Error, Span};

pub use lexer::LexOptions;

/// Parses a YAQL expression.
pub fn parse(src: &str, opts: LexOptions) -> Result<Box<ast::Expr>, Error> {
    let toks = lexer::tokenize(src, opts)?;
    if toks.is_empty() {
        return Err(
            Error::new("YaqlGrammarException", "Parse error: empty expression")
                .with_span(Span::new(0, 0)),
        );
    }
    let p = grammar::ExprParser::new();
    p.parse(toks.into_iter().map(Ok::<_, &'static str>))
        .map_err(|e| grammar_error(src, e))
}

fn grammar_error(src: &str, e: ParseError<usize, lexer::Tok, &'static str>) -> Error {
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

//! Positions and names: LSP positions (0-based lines, UTF-16 columns)
//! to and from byte offsets, file URIs to and from paths, and the
//! package a file belongs to.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, Uri};

/// The path of a `file:` URI.
pub fn uri_path(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

/// The `file:` URI of an absolute path.
pub fn path_uri(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// The offsets of the starts of the lines of `text`.
pub fn line_starts(text: &str) -> Vec<usize> {
    lint::line_starts(text)
}

/// The LSP position of byte `at` of `text` (`starts`: its line starts).
pub fn position(text: &str, starts: &[usize], at: usize) -> Position {
    let at = floor_char(text, at.min(text.len()));
    let line = starts.partition_point(|&s| s <= at).max(1) - 1;
    let start = starts.get(line).copied().unwrap_or(0).min(at);
    let col: usize = text[start..at].chars().map(char::len_utf16).sum();
    Position::new(line as u32, col as u32)
}

/// The byte offset of LSP position `p` in `text` (clamped to its line).
pub fn offset(text: &str, starts: &[usize], p: Position) -> usize {
    let Some(&start) = starts.get(p.line as usize) else {
        return text.len();
    };
    let line = &text[start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= p.character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    start + line.len()
}

/// The LSP range of bytes `span` of `text`.
pub fn range(text: &str, starts: &[usize], span: std::ops::Range<usize>) -> Range {
    Range::new(
        position(text, starts, span.start),
        position(text, starts, span.end.max(span.start)),
    )
}

/// The byte offset of 1-based line `line`, column `col` (characters).
pub fn line_col_offset(text: &str, line: usize, col: usize) -> usize {
    lint::diag::offset(text, line, col).unwrap_or(text.len())
}

/// The end of the line holding byte `at`, trailing blanks left out.
pub fn line_end(text: &str, at: usize) -> usize {
    let at = floor_char(text, at.min(text.len()));
    let rest = &text[at..];
    at + rest
        .find('\n')
        .map_or(rest.len(), |i| rest[..i].trim_end().len())
}

/// The char boundary at or before `at`.
pub fn floor_char(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The package folder `file` belongs to: the nearest folder at or above
/// it holding a `manifest.yaml`, within three levels (a class file is in
/// `Classes/` or a folder under it, a UI definition in `UI/`).
pub fn package_dir(file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent();
    for _ in 0..6 {
        let d = dir?;
        if d.join("manifest.yaml").is_file() {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// The identifier around byte `at` (letters, digits, `_`) and its span.
pub fn word_at(text: &str, at: usize) -> Option<(&str, std::ops::Range<usize>)> {
    span_of(text, at, |c| c.is_alphanumeric() || c == '_')
}

/// The type name around byte `at` (`ns:Name`, `a.b.Name`).
pub fn type_name_at(text: &str, at: usize) -> Option<(&str, std::ops::Range<usize>)> {
    let (s, r) = span_of(text, at, |c| c.is_alphanumeric() || "_.:".contains(c))?;
    let trimmed = s
        .trim_start_matches(['.', ':'])
        .trim_end_matches(['.', ':']);
    let start = r.start + (s.len() - s.trim_start_matches(['.', ':']).len());
    Some((trimmed, start..start + trimmed.len()))
}

fn span_of(
    text: &str,
    at: usize,
    ok: impl Fn(char) -> bool,
) -> Option<(&str, std::ops::Range<usize>)> {
    let at = floor_char(text, at.min(text.len()));
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| ok(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = at
        + text[at..]
            .char_indices()
            .find(|(_, c)| !ok(*c))
            .map_or(text.len() - at, |(i, _)| i);
    (start < end).then(|| (&text[start..end], start..end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "a: 1\nbé𝄞x: $x\n";
        let starts = line_starts(text);
        // `x` after `é` (2 bytes, 1 unit) and `𝄞` (4 bytes, 2 units).
        let x = text.find("x:").unwrap();
        assert_eq!(position(text, &starts, x), Position::new(1, 4));
        assert_eq!(offset(text, &starts, Position::new(1, 4)), x);
        assert_eq!(offset(text, &starts, Position::new(1, 99)), text.len() - 1);
        assert_eq!(offset(text, &starts, Position::new(9, 0)), text.len());
    }

    #[test]
    fn words_and_type_names() {
        let t = "- $.find(std:Environment).require()";
        let at = t.find("Env").unwrap() + 2;
        assert_eq!(word_at(t, at).unwrap().0, "Environment");
        assert_eq!(type_name_at(t, at).unwrap().0, "std:Environment");
        assert_eq!(type_name_at(t, t.find("find").unwrap()).unwrap().0, "find");
        assert!(word_at("  ", 1).is_none());
    }

    #[test]
    fn uris_and_paths_round_trip() {
        let p = Path::new("/tmp/a b/Classes/C.yaml");
        let u = path_uri(p).unwrap();
        assert_eq!(u.as_str(), "file:///tmp/a%20b/Classes/C.yaml");
        assert_eq!(uri_path(&u).unwrap(), p);
    }
}

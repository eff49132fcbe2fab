//! PyYAML's leniency on flow collections. PyYAML (which murano loads
//! class files and execution plans with) checks no indentation inside
//! `[ … ]` and `{ … }`: a multi-line flow collection may close, or go on,
//! at or left of the key that holds it. The YAML 1.2 scanner we use
//! rejects such lines, so a text it rejects for indentation is read again
//! with the lines inside flow collections indented just enough, and every
//! position is mapped back to the original text (indentation inside a
//! flow collection changes no value: scalars fold their line breaks and
//! leading spaces away).

/// A text with lines inside flow collections indented further.
pub(crate) struct Padded {
    /// The indented text.
    pub text: String,
    /// For each line of `text`: the char index where it starts, the
    /// spaces added before it, and the spaces added to it.
    lines: Vec<(usize, usize, usize)>,
}

impl Padded {
    /// The char index in the original text of char `i` of [`Padded::text`].
    pub fn original(&self, i: usize) -> usize {
        let line = self
            .lines
            .partition_point(|&(start, _, _)| start <= i)
            .max(1)
            - 1;
        let (start, before, pad) = self.lines[line];
        let in_line = i - start;
        i - before - pad.min(in_line)
    }
}

/// Where a scan of one line leaves off.
#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

struct Scan {
    /// Open flow collections.
    depth: usize,
    /// The column lines inside the outermost open collection need.
    need: usize,
    quote: Quote,
    /// A block scalar runs while lines are indented more than this.
    block_scalar: Option<usize>,
}

/// The text with every line that starts inside a flow collection indented
/// to at least one column right of the collection's opening bracket;
/// `None` when no line needs it.
pub(crate) fn pad_flow_lines(text: &str) -> Option<Padded> {
    let mut st = Scan {
        depth: 0,
        need: 0,
        quote: Quote::None,
        block_scalar: None,
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut lines = Vec::new();
    let (mut before, mut chars, mut changed) = (0usize, 0usize, false);
    for line in text.split_inclusive('\n') {
        let indent = line.chars().take_while(|&c| c == ' ').count();
        let blank = line.trim().is_empty();
        let pad = if st.depth > 0 && !blank && indent < st.need {
            st.need - indent
        } else {
            0
        };
        lines.push((chars, before, pad));
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(line);
        changed |= pad > 0;
        before += pad;
        chars += pad + line.chars().count();
        scan_line(&mut st, line, indent, blank);
    }
    changed.then_some(Padded { text: out, lines })
}

fn scan_line(st: &mut Scan, line: &str, indent: usize, blank: bool) {
    if let Some(limit) = st.block_scalar {
        if blank || indent > limit {
            return;
        }
        st.block_scalar = None;
    }
    let chars: Vec<char> = line.trim_end_matches(['\n', '\r']).chars().collect();
    let mut i = 0;
    // In block context a flow collection starts only as a node: at the
    // start of the line, after `- ` or after `key: `.
    let mut node_start = st.depth == 0 && st.quote == Quote::None;
    while i < chars.len() {
        let c = chars[i];
        match st.quote {
            Quote::Single => {
                if c == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        i += 1;
                    } else {
                        st.quote = Quote::None;
                    }
                }
            }
            Quote::Double => {
                if c == '\\' {
                    i += 1;
                } else if c == '"' {
                    st.quote = Quote::None;
                }
            }
            Quote::None => {
                let after_space = i == 0 || chars[i - 1] == ' ';
                if c == '#' && after_space {
                    break;
                }
                if st.depth > 0 {
                    match c {
                        '[' | '{' => st.depth += 1,
                        ']' | '}' => {
                            st.depth -= 1;
                            node_start = false;
                        }
                        '\'' => st.quote = Quote::Single,
                        '"' => st.quote = Quote::Double,
                        _ => {}
                    }
                } else if c == ' ' {
                } else if node_start && (c == '[' || c == '{') {
                    st.depth = 1;
                    st.need = i + 1;
                } else if node_start && c == '-' && chars.get(i + 1).is_none_or(|&n| n == ' ') {
                } else if node_start && (c == '\'' || c == '"') {
                    st.quote = if c == '\'' {
                        Quote::Single
                    } else {
                        Quote::Double
                    };
                    node_start = false;
                } else if node_start && (c == '|' || c == '>') && is_block_indicator(&chars[i..]) {
                    st.block_scalar = Some(indent);
                    return;
                } else {
                    // `key: ` starts a node; anything else ends the chance.
                    node_start = c == ':' && chars.get(i + 1).is_none_or(|&n| n == ' ');
                }
            }
        }
        i += 1;
    }
}

/// `|` or `>` with optional indentation and chomping indicators, then
/// nothing but a comment.
fn is_block_indicator(rest: &[char]) -> bool {
    let tail: String = rest[1..].iter().collect();
    let tail =
        tail.trim_start_matches(['-', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    let tail = tail.trim_start();
    tail.is_empty() || tail.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_inside_flow_collections_are_indented_and_mapped_back() {
        let text = "a:\n  - $x: [\n      1, 2\n    ]\n  - $y: {\n    k: 1\n  }\n";
        let p = pad_flow_lines(text).expect("needs padding");
        assert_eq!(
            p.text,
            "a:\n  - $x: [\n         1, 2\n         ]\n  - $y: {\n         k: 1\n         }\n"
        );
        // `]` of line 4 is char 9 of that line in the padded text and char 4
        // of the original.
        let padded_line4 = p
            .text
            .split_inclusive('\n')
            .take(3)
            .map(|l| l.chars().count())
            .sum::<usize>();
        let original_line4 = text
            .split_inclusive('\n')
            .take(3)
            .map(|l| l.chars().count())
            .sum::<usize>();
        assert_eq!(p.original(padded_line4 + 9), original_line4 + 4);
        // A line before any padding maps to itself.
        assert_eq!(p.original(3), 3);
    }

    #[test]
    fn brackets_in_plain_scalars_quotes_comments_and_block_scalars_open_nothing() {
        let text = "- $x: $l[0] + len([1])\n- 'a [' \n- b # [\n- |\n  [\n- c\n";
        assert!(pad_flow_lines(text).is_none());
    }
}

//! A small YAML reader for the subset `.ze_info` uses: block maps, block lists (also lists of
//! maps written `- key: value`), plain/quoted scalars, flow lists of scalars (`[1, 2, 3]`),
//! comments, and the `---` / `...` document markers. Every node keeps its 1-based line so
//! callers can say where a value came from.

use std::fmt;

/// A YAML node with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Scalar { value: String, line: u32 },
    List { items: Vec<Node>, line: u32 },
    Map { entries: Vec<(String, Node)>, line: u32 },
}

impl Node {
    pub fn line(&self) -> u32 {
        match self {
            Node::Scalar { line, .. } | Node::List { line, .. } | Node::Map { line, .. } => *line,
        }
    }
}

/// A syntax error in the YAML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for YamlError {}

fn err<T>(line: u32, message: impl Into<String>) -> Result<T, YamlError> {
    Err(YamlError { line, message: message.into() })
}

/// One meaningful source line: indentation in columns and the text after it.
#[derive(Clone, Debug)]
struct Line {
    no: u32,
    indent: usize,
    text: String,
}

/// Drops blank lines, comments and document markers; rejects tabs in indentation.
fn lines_of(text: &str) -> Result<Vec<Line>, YamlError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let body = strip_comment(raw).trim_end();
        let trimmed = body.trim_start();
        if trimmed.is_empty() || trimmed == "---" || trimmed == "..." {
            continue;
        }
        let indent = body.len() - trimmed.len();
        if body[..indent].contains('\t') {
            return err(no, "tab in indentation");
        }
        out.push(Line { no, indent, text: trimmed.to_string() });
    }
    Ok(out)
}

/// Removes a `#` comment that is outside quotes and starts a word.
fn strip_comment(s: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return &s[..i],
            None => {}
        }
        prev = c;
    }
    s
}

/// Splits `key: rest` at the first `:` followed by a space or the end, outside quotes.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ':' && matches!(bytes.get(i + 1), None | Some(b' ')) => {
                return Some((text[..i].trim(), text[i + 1..].trim()));
            }
            None => {}
        }
    }
    None
}

/// Parses a YAML document into a node tree. An empty document is an empty map.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    let mut lines = lines_of(text)?;
    if lines.is_empty() {
        return Ok(Node::Map { entries: Vec::new(), line: 1 });
    }
    let mut pos = 0;
    let indent = lines[0].indent;
    let node = parse_block(&mut lines, &mut pos, indent, 0)?;
    if let Some(extra) = lines.get(pos) {
        return err(extra.no, "unexpected text after the document (bad indentation?)");
    }
    Ok(node)
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Parses the block (map or list) whose lines start at column `indent`.
fn parse_block(lines: &mut [Line], pos: &mut usize, indent: usize, depth: usize) -> Result<Node, YamlError> {
    // Each level is a few frames of recursion: a hostile file must not be able to overflow
    // the stack of the thread that loads it (ze_info nests five or six levels).
    if depth > MAX_DEPTH {
        return err(lines[*pos].no, format!("nested more than {MAX_DEPTH} levels deep"));
    }
    if is_item(&lines[*pos].text) {
        parse_list(lines, pos, indent, depth + 1)
    } else {
        parse_map(lines, pos, indent, depth + 1)
    }
}

/// Deepest nesting read (a debug build's 2 MiB thread stack held about 1,100).
const MAX_DEPTH: usize = 64;

fn parse_list(lines: &mut [Line], pos: &mut usize, indent: usize, depth: usize) -> Result<Node, YamlError> {
    let line = lines[*pos].no;
    let mut items = Vec::new();
    while *pos < lines.len() && lines[*pos].indent == indent && is_item(&lines[*pos].text) {
        let rest = lines[*pos].text[1..].trim_start().to_string();
        if rest.is_empty() {
            // `-` alone: the item is the nested block on the next lines.
            *pos += 1;
            items.push(nested_value(lines, pos, indent, line, depth)?);
            continue;
        }
        if split_key(&rest).is_some() {
            // `- key: v`: the item is a map whose first key sits where `key` is; rewrite the
            // line so the map parser sees an ordinary map line at that column.
            let dash_width = lines[*pos].text.len() - rest.len();
            lines[*pos].indent += dash_width;
            lines[*pos].text = rest;
            let col = lines[*pos].indent;
            items.push(parse_block_map(lines, pos, col, depth)?);
        } else {
            items.push(scalar(&rest, lines[*pos].no)?);
            *pos += 1;
        }
    }
    Ok(Node::List { items, line })
}

/// A map inside a list item, one level deeper.
fn parse_block_map(
    lines: &mut [Line],
    pos: &mut usize,
    indent: usize,
    depth: usize,
) -> Result<Node, YamlError> {
    if depth > MAX_DEPTH {
        return err(lines[*pos].no, format!("nested more than {MAX_DEPTH} levels deep"));
    }
    parse_map(lines, pos, indent, depth + 1)
}

fn parse_map(lines: &mut [Line], pos: &mut usize, indent: usize, depth: usize) -> Result<Node, YamlError> {
    let line = lines[*pos].no;
    let mut entries: Vec<(String, Node)> = Vec::new();
    while *pos < lines.len() && lines[*pos].indent == indent {
        let no = lines[*pos].no;
        if is_item(&lines[*pos].text) {
            return err(no, "list item where a map key was expected");
        }
        let Some((key, rest)) = split_key(&lines[*pos].text) else {
            return err(no, format!("expected `key: value`, found `{}`", lines[*pos].text));
        };
        let key = unquote(key, no)?;
        if entries.iter().any(|(k, _)| *k == key) {
            return err(no, format!("duplicate key `{key}`"));
        }
        let value = if rest.is_empty() {
            *pos += 1;
            nested_value(lines, pos, indent, no, depth)?
        } else {
            let v = scalar(rest, no)?;
            *pos += 1;
            v
        };
        entries.push((key, value));
    }
    if *pos < lines.len() && lines[*pos].indent > indent {
        return err(lines[*pos].no, "unexpected indentation");
    }
    Ok(Node::Map { entries, line })
}

/// The value of `key:` with nothing after the colon: a deeper block, a list at the key's own
/// column (YAML allows `key:` followed by `- item` at the same indentation), or null.
fn nested_value(
    lines: &mut [Line],
    pos: &mut usize,
    indent: usize,
    no: u32,
    depth: usize,
) -> Result<Node, YamlError> {
    match lines.get(*pos) {
        Some(next) if next.indent > indent => {
            let col = next.indent;
            parse_block(lines, pos, col, depth)
        }
        Some(next) if next.indent == indent && is_item(&next.text) => parse_block(lines, pos, indent, depth),
        _ => Ok(Node::Scalar { value: String::new(), line: no }),
    }
}

/// A scalar or a flow list of scalars.
fn scalar(text: &str, line: u32) -> Result<Node, YamlError> {
    if let Some(inner) = text.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return err(line, "unterminated `[` list");
        };
        let mut items = Vec::new();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            items.push(Node::Scalar { value: unquote(part, line)?, line });
        }
        return Ok(Node::List { items, line });
    }
    if text.starts_with('{') {
        return err(line, "flow maps `{...}` are not supported");
    }
    Ok(Node::Scalar { value: unquote(text, line)?, line })
}

/// Removes surrounding quotes: `'...'` (with `''` for a quote) or `"..."` (with `\` escapes).
fn unquote(text: &str, line: u32) -> Result<String, YamlError> {
    if let Some(body) = text.strip_prefix('\'') {
        let Some(body) = body.strip_suffix('\'') else {
            return err(line, "unterminated single-quoted string");
        };
        return Ok(body.replace("''", "'"));
    }
    if let Some(body) = text.strip_prefix('"') {
        let Some(body) = body.strip_suffix('"') else {
            return err(line, "unterminated double-quoted string");
        };
        return Ok(unescape(body));
    }
    Ok(text.to_string())
}

fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

//! Finding shell variable syntax (`$NAME`) in the code of a Python or JavaScript file, not in its
//! strings or comments: models that write scripts sometimes leave `$DM_JSON` where they meant the
//! environment variable, and the script then fails in a way that is hard to read.
//!
//! Each lexer walks the source once and reports the byte ranges that are code. Strings and comments
//! are skipped; the code inside an f-string's replacement field or a template literal's `${...}` is
//! code again. A lexer that loses its place errs towards "code", so a token is reported rather than
//! missed.

/// The language of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    JavaScript,
}

/// The first `$NAME` token in code: its text and byte offset.
pub fn first_token(source: &str, lang: Lang) -> Option<(String, usize)> {
    let bytes = source.as_bytes();
    let code = match lang {
        Lang::Python => python_code(bytes),
        Lang::JavaScript => js_code(bytes),
    };
    // Python has no `$` in its syntax at all, so one capital letter is enough; in JavaScript `$` starts
    // identifiers, so only the all-caps names of at least two characters that shells use are taken.
    let min_len = match lang {
        Lang::Python => 1,
        Lang::JavaScript => 2,
    };
    for (from, to) in code {
        let mut i = from;
        while i < to {
            if bytes[i] == b'$' && i + 1 < to && is_name_start(bytes[i + 1]) {
                let mut j = i + 1;
                while j < to && is_name_char(bytes[j]) {
                    j += 1;
                }
                // A longer identifier that merely starts with capitals (`$Foo`) is not a shell name.
                let continues = j < to && (bytes[j].is_ascii_lowercase() || bytes[j] >= 0x80);
                if j - i > min_len && !continues {
                    return Some((source[i..j].to_string(), i));
                }
                i = j;
                continue;
            }
            i += 1;
        }
    }
    None
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_uppercase() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'
}

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Byte ranges of code, in order.
type Ranges = Vec<(usize, usize)>;

fn push(ranges: &mut Ranges, from: usize, to: usize) {
    if from < to {
        ranges.push((from, to));
    }
}

// ---------------------------------------------------------------------------------------------------
// Python

fn python_code(b: &[u8]) -> Ranges {
    let mut out = Ranges::new();
    let end = python_scan(b, 0, None, &mut out);
    debug_assert!(end <= b.len());
    out
}

/// Scan Python code from `i` until the end, or (inside an f-string field) until the `}` that closes
/// it at depth 0 or a `:` that starts its format spec; returns where it stopped.
fn python_scan(b: &[u8], mut i: usize, field: Option<&mut FieldStop>, out: &mut Ranges) -> usize {
    let mut depth = 0usize;
    let mut start = i;
    let mut field = field;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                push(out, start, i);
                while i < b.len() && !is_line_end(b[i]) {
                    i += 1;
                }
                start = i;
            }
            b'\'' | b'"' => {
                let (prefix_start, flags) = string_prefix(b, start, i);
                push(out, start, prefix_start);
                i = python_string(b, i, flags, out);
                start = i;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'}' => {
                if depth == 0 {
                    if let Some(f) = field.as_deref_mut() {
                        push(out, start, i);
                        f.stopped_at = Stop::Close;
                        return i;
                    }
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b':' if depth == 0 && field.is_some() => {
                let f = field.as_deref_mut().expect("checked");
                if has_lambda(&b[f.start..i]) {
                    i += 1;
                    continue;
                }
                push(out, start, i);
                f.stopped_at = Stop::FormatSpec;
                return i;
            }
            b'!' if depth == 0
                && field.is_some()
                && b.get(i + 1) != Some(&b'=')
                && matches!(b.get(i + 1), Some(b'r' | b's' | b'a')) =>
            {
                // A conversion (`!r`): the field's code ends here.
                push(out, start, i);
                let f = field.as_deref_mut().expect("checked");
                f.stopped_at = Stop::Conversion;
                return i;
            }
            _ => i += 1,
        }
    }
    push(out, start, i);
    if let Some(f) = field {
        f.stopped_at = Stop::End;
    }
    i
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Close,
    FormatSpec,
    Conversion,
    End,
}

struct FieldStop {
    start: usize,
    stopped_at: Stop,
}

/// Whether the field's code so far holds the keyword `lambda` (its `:` is not a format spec).
fn has_lambda(code: &[u8]) -> bool {
    let text = String::from_utf8_lossy(code);
    text.match_indices("lambda").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + 6..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

#[derive(Clone, Copy, Default)]
struct StrFlags {
    raw: bool,
    format: bool,
}

/// The string prefix letters (`r`, `b`, `f`, `u`, in any case and order, at most two) before the
/// quote at `quote`, not part of a longer name.
fn string_prefix(b: &[u8], floor: usize, quote: usize) -> (usize, StrFlags) {
    let mut at = quote;
    let mut flags = StrFlags::default();
    while at > floor
        && quote - at < 2
        && matches!(b[at - 1].to_ascii_lowercase(), b'r' | b'b' | b'f' | b'u')
    {
        at -= 1;
    }
    let is_ident = |x: u8| x.is_ascii_alphanumeric() || x == b'_' || x >= 0x80;
    if at > 0 && at < quote && is_ident(b[at - 1]) {
        return (quote, flags);
    }
    for &p in &b[at..quote] {
        match p.to_ascii_lowercase() {
            b'r' => flags.raw = true,
            b'f' => flags.format = true,
            _ => {}
        }
    }
    (at, flags)
}

/// Skip a string starting at the quote `i`; the code of an f-string's fields goes to `out`. Returns
/// the index after the string (or where an unterminated one-line string ended).
fn python_string(b: &[u8], i: usize, flags: StrFlags, out: &mut Ranges) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        let c = b[j];
        if c == b'\\' {
            if flags.format && b.get(j + 1) == Some(&b'{') {
                // `\{` is no escape: the brace still opens a field.
                j += 1;
                continue;
            }
            // An escape, or a line continuation (CRLF counts as one).
            j += if b.get(j + 1) == Some(&b'\r') && b.get(j + 2) == Some(&b'\n') {
                3
            } else {
                2
            };
            continue;
        }
        if c == q && (!triple || (b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q))) {
            return j + if triple { 3 } else { 1 };
        }
        if !triple && is_line_end(c) {
            return j;
        }
        if flags.format && c == b'{' {
            if b.get(j + 1) == Some(&b'{') {
                j += 2;
                continue;
            }
            j = python_field(b, j + 1, out);
            continue;
        }
        if flags.format && c == b'}' && b.get(j + 1) == Some(&b'}') {
            j += 2;
            continue;
        }
        j += 1;
    }
    j.min(b.len())
}

/// A replacement field from just after its `{`: code, then an optional conversion and format spec
/// (literal text with nested fields). Returns the index after its `}`.
fn python_field(b: &[u8], from: usize, out: &mut Ranges) -> usize {
    let mut stop = FieldStop {
        start: from,
        stopped_at: Stop::End,
    };
    let mut j = python_scan(b, from, Some(&mut stop), out);
    if stop.stopped_at == Stop::Conversion {
        j = (j + 2).min(b.len());
        if b.get(j) == Some(&b':') {
            stop.stopped_at = Stop::FormatSpec;
        } else if b.get(j) == Some(&b'}') {
            return j + 1;
        }
    }
    match stop.stopped_at {
        Stop::Close => (j + 1).min(b.len()),
        Stop::End | Stop::Conversion => j.min(b.len()),
        Stop::FormatSpec => {
            // Literal text up to the closing brace, with nested fields.
            j += 1;
            while j < b.len() {
                match b[j] {
                    b'}' => return j + 1,
                    b'{' => j = python_field(b, j + 1, out),
                    c if is_line_end(c) => return j,
                    _ => j += 1,
                }
            }
            j.min(b.len())
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// JavaScript

fn js_code(b: &[u8]) -> Ranges {
    let mut out = Ranges::new();
    js_scan(b, 0, false, &mut out);
    out
}

/// Scan JavaScript code from `i`; inside `${...}` stop at the `}` that closes it. Returns where it
/// stopped.
fn js_scan(b: &[u8], mut i: usize, in_template: bool, out: &mut Ranges) -> usize {
    let mut depth = 0usize;
    let mut start = i;
    // The last significant byte, to tell a regex literal from a division.
    let mut last: u8 = b'(';
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                push(out, start, i);
                while i < b.len() && !is_line_end(b[i]) {
                    i += 1;
                }
                start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                push(out, start, i);
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(b.len());
                start = i;
            }
            b'/' if b"(,=:[!&|?{};+-*%<>~^".contains(&last) || last == b'\n' => {
                push(out, start, i);
                i = js_regex(b, i);
                start = i;
                last = b'a';
            }
            b'\'' | b'"' => {
                push(out, start, i);
                i = js_string(b, i);
                start = i;
                last = b'a';
            }
            b'`' => {
                push(out, start, i);
                i = js_template(b, i + 1, out);
                start = i;
                last = b'a';
            }
            b'{' => {
                depth += 1;
                last = c;
                i += 1;
            }
            b'}' => {
                if depth == 0 && in_template {
                    push(out, start, i);
                    return i;
                }
                depth = depth.saturating_sub(1);
                last = c;
                i += 1;
            }
            _ => {
                if !c.is_ascii_whitespace() {
                    last = c;
                }
                i += 1;
            }
        }
    }
    push(out, start, i);
    i
}

fn js_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => return j + 1,
            c if is_line_end(c) => return j,
            _ => j += 1,
        }
    }
    j.min(b.len())
}

fn js_template(b: &[u8], mut j: usize, out: &mut Ranges) -> usize {
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => return j + 1,
            b'$' if b.get(j + 1) == Some(&b'{') => {
                j = (js_scan(b, j + 2, true, out) + 1).min(b.len());
            }
            _ => j += 1,
        }
    }
    j.min(b.len())
}

fn js_regex(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let mut class = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'[' => {
                class = true;
                j += 1;
            }
            b']' => {
                class = false;
                j += 1;
            }
            b'/' if !class => {
                j += 1;
                while j < b.len() && b[j].is_ascii_alphabetic() {
                    j += 1;
                }
                return j;
            }
            c if is_line_end(c) => return j,
            _ => j += 1,
        }
    }
    j.min(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(src: &str) -> Option<String> {
        first_token(src, Lang::Python).map(|(t, _)| t)
    }

    fn js(src: &str) -> Option<String> {
        first_token(src, Lang::JavaScript).map(|(t, _)| t)
    }

    #[test]
    fn python_tokens_in_code_are_found() {
        assert_eq!(
            py("import json\npayload = $DM_JSON\n"),
            Some("$DM_JSON".into())
        );
        assert_eq!(py("result = f\"{ \"$A\" + $P }\""), Some("$P".into()));
        assert_eq!(py("result = f\"\\{$A}\""), Some("$A".into()));
        assert_eq!(py("result = f\"{lambda value: $F}\""), Some("$F".into()));
        assert_eq!(py("text = \"ok\"\rpayload = $C"), Some("$C".into()));
        assert_eq!(py("text = \"ok\rpayload = $E"), Some("$E".into()));
        assert_eq!(py("# note\rpayload = $D"), Some("$D".into()));
        assert_eq!(py("x = f'{a!r:>{$W}}'"), Some("$W".into()));
    }

    #[test]
    fn python_strings_comments_and_format_specs_are_not_code() {
        let valid = [
            "value = \"$A\"",
            "other = '''$_'''",
            "raw = r\"$Q\"",
            "hash_text = \"# $R\"",
            "nested = f\"{ '$S' }\"",
            "braces = f\"{{ $T }}\"",
            "continued = \"text \\\r\n$U\"",
            "format_text = f\"{Echo():$W}\"",
            "élambda = Echo()",
            "unicode_format = f\"{élambda:$Y}\"",
            "# $P",
            "doc = \"\"\"\n$HOME is set\n\"\"\"",
            "print(f\"{value}:{other}:{raw}\")",
        ]
        .join("\n");
        assert_eq!(py(&valid), None);
    }

    #[test]
    fn javascript_tokens_in_code_are_found_and_strings_skipped() {
        assert_eq!(js("const x = $DM_JSON;\n"), Some("$DM_JSON".into()));
        assert_eq!(js("console.log(\"echo $HOME\")\nconsole.log('done')"), None);
        assert_eq!(js("const $el = 1; const $ = 2; const $Foo = 3;"), None);
        assert_eq!(
            js("const t = `path ${ $HOME_DIR } and $NOT_CODE`;"),
            Some("$HOME_DIR".into())
        );
        assert_eq!(js("// $COMMENT\n/* $BLOCK */ const r = /^\\$HOME$/;"), None);
        assert_eq!(js("const a = b / $DIV;"), Some("$DIV".into()));
    }

    #[test]
    fn lexers_never_panic_on_any_input() {
        let mut rng = crate::test_rng::Rng(11);
        let pool: &[&str] = &[
            "\"", "'", "`", "f\"", "r'", "{", "}", "${", "\\", "\r", "\n", "#", "//", "/*", "*/",
            "/", "$A", "$HOME", ":", "!r", "lambda", "é", "'''", "\"\"\"", "x",
        ];
        for _ in 0..5000 {
            let mut s = String::new();
            for _ in 0..12 {
                s.push_str(rng.pick(pool));
            }
            let _ = first_token(&s, Lang::Python);
            let _ = first_token(&s, Lang::JavaScript);
        }
    }
}

//! A fail-closed lexer for the subset of shell that approval analysis accepts: words, quotes,
//! escapes, comments, heredocs, and the operators `&&`, `||`, `;`, `|`. Everything else (`$(`,
//! backticks, redirections, subshells, process substitution, `&`, parameter expansion, newlines outside
//! heredocs) stops the analysis with OpenClaw B's reason texts.
//!
//! Written by hand rather than with a grammar crate: the job is to *refuse* everything outside a small
//! subset with exact reasons, and to produce the argv bash would produce for what is accepted (checked
//! by a differential test against bash). A full grammar (tree-sitter-bash, brush-parser) would accept
//! far more and then need the same refusal walk, plus a C build or a large dependency.

/// One simple command's words after quote removal, and where it sits in the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Whether any part was quoted or escaped (an unquoted `~` expands, a quoted one does not).
    pub quoted: bool,
    /// Whether the word holds unquoted glob characters or braces, or starts with a tilde form
    /// other than `~` and `~/` (`~user`, `~+`): bash may expand it into other words, or several.
    pub has_glob: bool,
    /// Index (in chars of `text`) of the first character that was quoted or escaped: an
    /// assignment `NAME=...` is one only when `NAME=` itself is unquoted (`'X=1' rm` runs `X=1`).
    pub first_quoted: Option<usize>,
}

/// A shell variable's name: a letter or `_`, then letters, digits or `_`.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether an unquoted word reads as a prefix assignment (`NAME=value`).
pub fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| is_name(name))
}

impl Word {
    /// The variable a prefix assignment (`NAME=value`, `NAME+=value`) sets, when this word is one.
    pub fn assignment(&self) -> Option<(&str, &str)> {
        let eq = self.text.find('=')?;
        let name = self.text[..eq]
            .strip_suffix('+')
            .unwrap_or(&self.text[..eq]);
        let valid = is_name(name);
        let unquoted = self
            .first_quoted
            .is_none_or(|q| q > self.text[..eq].chars().count());
        (valid && unquoted).then(|| (name, &self.text[eq + 1..]))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
    Seq,
    Pipe,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::And => "&&",
            Op::Or => "||",
            Op::Seq => ";",
            Op::Pipe => "|",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(Word),
    Op(Op),
    /// A heredoc (`<<DELIM` and its body); not part of argv.
    Heredoc,
}

fn unsupported(tok: &str) -> String {
    format!("unsupported shell token: {tok}")
}

/// Split a command into tokens, or say why it cannot be analysed.
pub fn lex(input: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut has_glob = false;
    let mut first_quoted: Option<usize> = None;
    // Heredocs whose bodies start at the next newline: (delimiter, strip tabs, body may expand).
    let mut pending_heredocs: Vec<(String, bool, bool)> = Vec::new();
    let mut i = 0;

    macro_rules! end_word {
        () => {
            if in_word {
                let text = std::mem::take(&mut word);
                let tilde = tilde_expands(&text, first_quoted);
                tokens.push(Token::Word(Word {
                    text,
                    quoted,
                    has_glob: has_glob || tilde,
                    first_quoted,
                }));
                in_word = false;
                quoted = false;
                has_glob = false;
                first_quoted = None;
            }
        };
    }

    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => {
                end_word!();
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\n' => {
                end_word!();
                if pending_heredocs.is_empty() {
                    // A trailing newline ends the command; anything after it is a second command line.
                    if chars[i + 1..].iter().all(|&c| is_bash_blank(c)) {
                        break;
                    }
                    return Err(unsupported("\n"));
                }
                i += 1;
                for (delim, strip_tabs, expands) in std::mem::take(&mut pending_heredocs) {
                    i = read_heredoc_body(&chars, i, &delim, strip_tabs, expands)?;
                }
                tokens.push(Token::Heredoc);
                if chars[i..].iter().any(|&c| !is_bash_blank(c)) {
                    return Err(unsupported("\n"));
                }
                break;
            }
            // OpenClaw B names the character itself (a line break in the reason text).
            '\r' => return Err(unsupported("\r")),
            '\\' => {
                match next {
                    None => return Err("unterminated shell quote/escape".into()),
                    Some('\n') => return Err(unsupported("line continuation")),
                    Some(n) => {
                        first_quoted.get_or_insert_with(|| word.chars().count());
                        word.push(n)
                    }
                }
                in_word = true;
                quoted = true;
                i += 2;
            }
            '\'' => {
                let Some(end) = chars[i + 1..].iter().position(|&c| c == '\'') else {
                    return Err("unterminated shell quote/escape".into());
                };
                first_quoted.get_or_insert_with(|| word.chars().count());
                word.extend(&chars[i + 1..i + 1 + end]);
                in_word = true;
                quoted = true;
                i += end + 2;
            }
            '"' => {
                i += 1;
                first_quoted.get_or_insert_with(|| word.chars().count());
                loop {
                    let Some(&d) = chars.get(i) else {
                        return Err("unterminated shell quote/escape".into());
                    };
                    match d {
                        '"' => {
                            i += 1;
                            break;
                        }
                        // B's texts: a line break inside double quotes (LF, CR or CRLF, escaped
                        // or not) is "newline"; outside quotes it is the character itself.
                        '\\' => match chars.get(i + 1) {
                            Some('\n' | '\r') => return Err(unsupported("newline")),
                            Some(&e @ ('\\' | '"' | '$' | '`')) => {
                                word.push(e);
                                i += 2;
                            }
                            Some(_) => {
                                word.push('\\');
                                i += 1;
                            }
                            None => return Err("unterminated shell quote/escape".into()),
                        },
                        '`' => return Err(unsupported("`")),
                        '\n' | '\r' => return Err(unsupported("newline")),
                        '$' => {
                            check_dollar(chars.get(i + 1).copied(), true)?;
                            word.push('$');
                            i += 1;
                        }
                        _ => {
                            word.push(d);
                            i += 1;
                        }
                    }
                }
                in_word = true;
                quoted = true;
            }
            '&' if next == Some('&') => {
                end_word!();
                tokens.push(Token::Op(Op::And));
                i += 2;
            }
            '|' if next == Some('|') => {
                end_word!();
                tokens.push(Token::Op(Op::Or));
                i += 2;
            }
            '|' if next == Some('&') => return Err(unsupported("|&")),
            '|' => {
                end_word!();
                tokens.push(Token::Op(Op::Pipe));
                i += 1;
            }
            ';' => {
                end_word!();
                tokens.push(Token::Op(Op::Seq));
                i += 1;
            }
            '&' => return Err(unsupported("&")),
            '<' if next == Some('<') && chars.get(i + 2) != Some(&'<') => {
                end_word!();
                let (heredoc, after) = parse_heredoc_start(&chars, i + 2)?;
                pending_heredocs.push(heredoc);
                i = after;
            }
            '<' => return Err(unsupported("<")),
            '>' => return Err(unsupported(">")),
            '(' => return Err(unsupported("(")),
            ')' => return Err(unsupported(")")),
            '`' => return Err(unsupported("`")),
            '$' if next == Some('[') => {
                // The old arithmetic `$[...]` over numbers only (`$[1+1]`): a word bash computes,
                // so it may be any number; names, `$` and substitutions inside are refused.
                let body = arithmetic_body(&chars[i + 2..]).ok_or_else(|| unsupported("$["))?;
                word.extend(&chars[i..i + 3 + body]);
                has_glob = true;
                in_word = true;
                i += 3 + body;
            }
            '$' => {
                check_dollar(next, false)?;
                word.push('$');
                in_word = true;
                i += 1;
            }
            _ => {
                if matches!(c, '*' | '?' | '[' | '{') {
                    has_glob = true;
                }
                word.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    if in_word {
        let tilde = tilde_expands(&word, first_quoted);
        tokens.push(Token::Word(Word {
            text: word,
            quoted,
            has_glob: has_glob || tilde,
            first_quoted,
        }));
    }
    if !pending_heredocs.is_empty() {
        return Err("unterminated heredoc".into());
    }
    Ok(tokens)
}

/// `$(` is a command substitution; other expansions (`$VAR`, `${...}`, `$1`, `$?`, the old
/// arithmetic `$[...]`) would make the analysed argv differ from what runs, so they fail the
/// analysis too. Outside double quotes `$'...'` (ANSI-C escapes: `$'\x72m'` is `rm`) and `$"..."`
/// (locale translation) are words bash rewrites; they are refused rather than decoded. A `$` not
/// followed by any of these is a literal dollar sign, as in bash.
fn check_dollar(next: Option<char>, in_double_quotes: bool) -> Result<(), String> {
    match next {
        Some('(') => Err(unsupported("$()")),
        Some('[') => Err(unsupported("$[")),
        Some('\'') if !in_double_quotes => Err(unsupported("$'...'")),
        Some('"') if !in_double_quotes => Err(unsupported("$\"...\"")),
        Some(c) if c == '{' || c == '_' || c.is_ascii_alphanumeric() || "?!#@*$-".contains(c) => {
            Err(unsupported("$ expansion"))
        }
        _ => Ok(()),
    }
}

/// The length of `$[`'s body up to its `]` when it holds numbers and operators only.
fn arithmetic_body(rest: &[char]) -> Option<usize> {
    let end = rest.iter().position(|&c| c == ']')?;
    let allowed = |c: char| c.is_ascii_digit() || " \t+-*/%()<>=!&|^~?:,".contains(c);
    (end > 0 && rest[..end].iter().all(|&c| allowed(c))).then_some(end)
}

/// An unquoted `~` at the start of a word other than `~` or `~/...` (which the analysis expands):
/// `~user`, `~+`, `~-` name directories bash looks up.
fn tilde_expands(text: &str, first_quoted: Option<usize>) -> bool {
    (text.starts_with('~') && first_quoted != Some(0) && text != "~" && !text.starts_with("~/"))
        || assignment_tilde(text)
}

/// A word shaped like an assignment (`NAME=...`) with a `~` after its `=` or a `:`: bash (outside
/// POSIX mode) expands those tildes in any such word, arguments included (`echo a=~/x` prints
/// `a=/home/u/x`, `make DIR=~root`). Where a quote may have kept one literal, it still counts:
/// the word is not taken as exact.
fn assignment_tilde(text: &str) -> bool {
    let Some((name, value)) = text.split_once('=') else {
        return false;
    };
    let is_name = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_name && (value.starts_with('~') || value.contains(":~"))
}

/// After `<<`: optional `-`, then the delimiter word (quoted or not). Returns the position after it.
fn parse_heredoc_start(
    chars: &[char],
    mut i: usize,
) -> Result<((String, bool, bool), usize), String> {
    let strip_tabs = chars.get(i) == Some(&'-');
    if strip_tabs {
        i += 1;
    }
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let mut delim = String::new();
    let mut quoted = false;
    while let Some(&c) = chars.get(i) {
        match c {
            '\'' => {
                let Some(end) = chars[i + 1..].iter().position(|&d| d == c) else {
                    return Err("unterminated shell quote/escape".into());
                };
                delim.extend(&chars[i + 1..i + 1 + end]);
                quoted = true;
                i += end + 2;
            }
            '"' => {
                // Quote removal as bash does it: inside double quotes a backslash escapes only
                // `$`, `` ` ``, `"`, `\` and a newline (`<<"A\\"` ends at a line `A\`).
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated shell quote/escape".into()),
                        Some('"') => break,
                        Some('\\') => match chars.get(i + 1) {
                            Some('\n') => i += 2,
                            Some(&n) if "$`\"\\".contains(n) => {
                                delim.push(n);
                                i += 2;
                            }
                            _ => {
                                delim.push('\\');
                                i += 1;
                            }
                        },
                        Some(&other) => {
                            delim.push(other);
                            i += 1;
                        }
                    }
                }
                quoted = true;
                i += 1;
            }
            '$' if matches!(chars.get(i + 1), Some('\'' | '"')) => {
                return Err("unsupported heredoc delimiter: $'...' or $\"...\"".into());
            }
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err("unterminated shell quote/escape".into());
                };
                delim.push(n);
                quoted = true;
                i += 2;
            }
            // bash's blanks only: a Unicode space (U+00A0, U+2028...) is a word character to it,
            // so `EOF<U+00A0>` is the delimiter whole (taking it as `EOF` made a line after the
            // real end of the heredoc look like part of its body).
            c if is_bash_blank(c) || "|&;<>()".contains(c) => break,
            _ => {
                delim.push(c);
                i += 1;
            }
        }
    }
    if delim.is_empty() {
        return Err("unterminated heredoc".into());
    }
    Ok(((delim, strip_tabs, !quoted), i))
}

/// Bounds of an unquoted heredoc's logical line (OpenClaw's): backslash-newline pairs joined into one
/// line, and that line's length. Past them the analysis refuses instead of reading on.
const MAX_CONTINUATION_CHUNKS: usize = 1024;
const MAX_LOGICAL_LINE: usize = 64 * 1024;

/// Consume a heredoc body starting at `i` (the line after the command); returns the position after
/// the terminator line.
///
/// In an unquoted body bash joins backslash-newline before it looks for expansions and before it
/// compares the terminator: `EO\` + `F` ends the body, and a line that looks like the terminator
/// after a continuation (`safe\` + `EOF`) is part of the line it continues, not the end. The joined
/// (logical) line is what is compared and checked, within the bounds above. With `<<-` (tabs stripped
/// from each line read) a continuation is refused rather than modelled.
fn read_heredoc_body(
    chars: &[char],
    mut i: usize,
    delim: &str,
    strip_tabs: bool,
    expands: bool,
) -> Result<usize, String> {
    loop {
        if i > chars.len() || (i == chars.len() && !chars.is_empty() && chars[i - 1] == '\n') {
            return Err("unterminated heredoc".into());
        }
        let mut line = String::new();
        let mut chunks = 0usize;
        let end = loop {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            let chunk = &chars[i..end];
            let continues = expands
                && end < chars.len()
                && chunk.iter().rev().take_while(|&&c| c == '\\').count() % 2 == 1;
            if !continues {
                line.extend(chunk);
                if expands && line.chars().count() > MAX_LOGICAL_LINE {
                    return Err("heredoc logical line too large".into());
                }
                break end;
            }
            if strip_tabs {
                return Err("backslash-newline in unquoted heredoc".into());
            }
            chunks += 1;
            if chunks > MAX_CONTINUATION_CHUNKS {
                return Err("heredoc continuation too long".into());
            }
            line.extend(&chunk[..chunk.len() - 1]);
            if line.chars().count() > MAX_LOGICAL_LINE {
                return Err("heredoc logical line too large".into());
            }
            i = end + 1;
        };
        let check = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            &line
        };
        if check == delim {
            return Ok((end + 1).min(chars.len()));
        }
        if expands && has_substitution(&line) {
            return Err("command substitution in unquoted heredoc".into());
        }
        if end >= chars.len() {
            return Err("unterminated heredoc".into());
        }
        i = end + 1;
    }
}

fn has_substitution(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '`' => return true,
            '$' if matches!(chars.get(i + 1), Some('(' | '{' | '[')) => return true,
            _ => i += 1,
        }
    }
    false
}

/// What bash splits words at outside quotes: space, tab and newline (its `IFS`-independent parser
/// blanks). Nothing else, however white it looks: Rust's `char::is_whitespace` also takes Unicode
/// spaces, which bash reads as parts of a word.
pub(crate) fn is_bash_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<String> {
        lex(cmd)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w.text,
                Token::Op(o) => format!("<{}>", o.as_str()),
                Token::Heredoc => "<heredoc>".into(),
            })
            .collect()
    }

    #[test]
    fn accepted_forms() {
        let cases: &[(&str, &[&str])] = &[
            ("ls -la", &["ls", "-la"]),
            ("echo 'a b' \"c d\"", &["echo", "a b", "c d"]),
            (
                r#"echo "a\"b" 'x\y' a\ b"#,
                &["echo", "a\"b", "x\\y", "a b"],
            ),
            (r#"echo "\$HOME \`x\`""#, &["echo", "$HOME `x`"]),
            (r#"echo "a\nb""#, &["echo", "a\\nb"]),
            (
                "ls && git status || true; pwd",
                &["ls", "<&&>", "git", "status", "<||>", "true", "<;>", "pwd"],
            ),
            (
                "cat f | grep x | wc -l",
                &["cat", "f", "<|>", "grep", "x", "<|>", "wc", "-l"],
            ),
            ("echo hi # a comment", &["echo", "hi"]),
            ("echo a#b", &["echo", "a#b"]),
            ("echo 'a;b' \"c|d\" 'e&&f'", &["echo", "a;b", "c|d", "e&&f"]),
            ("echo $ 5$", &["echo", "$", "5$"]),
            ("cat <<EOF\nhello $x\nEOF\n", &["cat", "<heredoc>"]),
            ("cat <<'EOF'\n$(not run)\nEOF", &["cat", "<heredoc>"]),
            ("cat <<-EOF\n\tbody\n\tEOF", &["cat", "<heredoc>"]),
            ("echo ''", &["echo", ""]),
            ("ls\n", &["ls"]),
            // Inside double quotes `$'` and `$"` are a literal dollar sign.
            ("echo \"$'x'\" \"a$\"", &["echo", "$'x'", "a$"]),
            // Quoted delimiters keep backslashes: no joining, the body is data.
            ("cat <<'EOF'\nEO\\\nEOF", &["cat", "<heredoc>"]),
            // In double quotes a backslash escapes `\\` and `$`: the delimiters are `A\` and `E$`.
            ("cat <<\"A\\\\\"\nA\\\n", &["cat", "<heredoc>"]),
            ("cat <<\"E\\$\"\nE$\n", &["cat", "<heredoc>"]),
            ("cat <<\"E\\x\"\nE\\x\n", &["cat", "<heredoc>"]),
            ("cat <<EOF\na\\\\\nEOF", &["cat", "<heredoc>"]),
        ];
        for (cmd, expected) in cases {
            assert_eq!(words(cmd), *expected, "{cmd:?}");
        }
    }

    fn only_word(cmd: &str) -> Word {
        match lex(cmd).unwrap().remove(0) {
            Token::Word(w) => w,
            t => panic!("{t:?}"),
        }
    }

    #[test]
    fn assignments_and_tilde_forms() {
        assert_eq!(only_word("X=1").assignment(), Some(("X", "1")));
        assert_eq!(only_word("X+=1").assignment(), Some(("X", "1")));
        assert_eq!(only_word("X='a b'").assignment(), Some(("X", "a b")));
        assert_eq!(only_word("'X=1'").assignment(), None);
        assert_eq!(only_word("X\\=1").assignment(), None);
        assert_eq!(only_word("1X=1").assignment(), None);
        assert_eq!(only_word("--x=1").assignment(), None);
        for (word, expands) in [
            ("~", false),
            ("~/x", false),
            ("~root", true),
            ("~+", true),
            ("~-/x", true),
            ("'~root'", false),
            ("\\~root", false),
            ("a~b", false),
            // A word shaped like an assignment: bash expands a tilde after its `=` or a `:`.
            ("a=~/x", true),
            ("b=~root", true),
            ("c=x:~/z", true),
            ("--opt=~/x", false),
            ("x=a~b", false),
            // Arithmetic over numbers: a word bash computes.
            ("$[1+1]", true),
            ("x$[ (2*3) % 4 ]y", true),
        ] {
            assert_eq!(only_word(word).has_glob, expands, "{word}");
        }
    }

    #[test]
    fn refused_forms_with_reasons() {
        let cases: &[(&str, &str)] = &[
            ("echo $(whoami)", "unsupported shell token: $()"),
            ("echo \"$(whoami)\"", "unsupported shell token: $()"),
            ("echo `whoami`", "unsupported shell token: `"),
            ("echo \"`whoami`\"", "unsupported shell token: `"),
            ("echo hi > f", "unsupported shell token: >"),
            ("cat < f", "unsupported shell token: <"),
            ("ls 2>&1", "unsupported shell token: >"),
            ("(ls)", "unsupported shell token: ("),
            ("diff <(ls) <(ls)", "unsupported shell token: <"),
            ("sleep 1 &", "unsupported shell token: &"),
            ("ls |& cat", "unsupported shell token: |&"),
            // OpenClaw B's texts name a line break by the character itself outside quotes, and
            // "newline" inside double quotes (LF, CR, CRLF, escaped or not).
            ("ls\nrm -rf /", "unsupported shell token: \n"),
            ("echo \"a\nb\"", "unsupported shell token: newline"),
            ("echo \"a\r\nb\"", "unsupported shell token: newline"),
            ("echo \"a\\\nb\"", "unsupported shell token: newline"),
            (
                "echo \"ok $\\\r\n(id -u)\"",
                "unsupported shell token: newline",
            ),
            (
                "echo a \\\n b",
                "unsupported shell token: line continuation",
            ),
            ("echo 'open", "unterminated shell quote/escape"),
            ("echo \"open", "unterminated shell quote/escape"),
            ("echo \\", "unterminated shell quote/escape"),
            ("cat <<EOF\nno end", "unterminated heredoc"),
            (
                "cat <<EOF\n$(id)\nEOF",
                "command substitution in unquoted heredoc",
            ),
            (
                "cat <<EOF\n${x}\nEOF",
                "command substitution in unquoted heredoc",
            ),
            (
                "cat <<EOF\n`id`\nEOF",
                "command substitution in unquoted heredoc",
            ),
            ("echo $HOME", "unsupported shell token: $ expansion"),
            ("echo \"${HOME}\"", "unsupported shell token: $ expansion"),
            ("echo a\rb", "unsupported shell token: \r"),
            // Words bash rewrites: ANSI-C and locale quoting, old arithmetic.
            ("$'rm' -f x", "unsupported shell token: $'...'"),
            ("find . $'-delete'", "unsupported shell token: $'...'"),
            ("$\"rm\" -f x", "unsupported shell token: $\"...\""),
            ("echo $[a+1]", "unsupported shell token: $["),
            ("echo $[x[$(id)]]", "unsupported shell token: $["),
            ("echo $[1+1", "unsupported shell token: $["),
            ("echo \"$[1]\"", "unsupported shell token: $["),
            // Unquoted heredoc bodies: bash joins backslash-newline before it looks for `$(`
            // and before it compares the terminator.
            (
                "cat <<EOF\n$\\\n(touch F)\nEOF",
                "command substitution in unquoted heredoc",
            ),
            (
                "cat <<-EOF\n\tsafe\\\n\tEOF\nEOF",
                "backslash-newline in unquoted heredoc",
            ),
            (
                "cat <<EOF\n$[x]\nEOF",
                "command substitution in unquoted heredoc",
            ),
        ];
        for (cmd, reason) in cases {
            assert_eq!(lex(cmd).unwrap_err(), *reason, "{cmd:?}");
        }
    }

    #[test]
    fn unquoted_heredoc_lines_are_joined_within_bounds() {
        // The joined line is the terminator (what would follow it is another command).
        assert_eq!(words("cat <<EOF\nEO\\\nF\n"), ["cat", "<heredoc>"]);
        // A terminator-like line inside a continuation is spliced into the line, not the end.
        assert_eq!(
            words("cat <<EOF\nsafe\\\nEOF\n/usr/bin/printf hi\nEOF"),
            ["cat", "<heredoc>"]
        );
        // An even number of backslashes is a literal one: no continuation.
        assert_eq!(words("cat <<EOF\nsafe\\\\\nEOF\n"), ["cat", "<heredoc>"]);
        assert_eq!(
            lex("cat <<EOF\nsafe\\\nEOF\n").unwrap_err(),
            "unterminated heredoc"
        );
        // Bounds: continuation chunks and the logical line's length.
        let many = format!(
            "cat <<EOF\n{}x\nEOF",
            "\\\n".repeat(MAX_CONTINUATION_CHUNKS)
        );
        assert_eq!(words(&many), ["cat", "<heredoc>"]);
        let too_many = format!(
            "cat <<EOF\n{}x\nEOF",
            "\\\n".repeat(MAX_CONTINUATION_CHUNKS + 1)
        );
        assert_eq!(lex(&too_many).unwrap_err(), "heredoc continuation too long");
        let long = format!("cat <<EOF\n{}\nEOF", "a".repeat(MAX_LOGICAL_LINE));
        assert_eq!(words(&long), ["cat", "<heredoc>"]);
        let too_long = format!("cat <<EOF\n{}\nEOF", "a".repeat(MAX_LOGICAL_LINE + 1));
        assert_eq!(
            lex(&too_long).unwrap_err(),
            "heredoc logical line too large"
        );
        let too_long_joined = format!(
            "cat <<EOF\n{}\\\n{}\nEOF",
            "a".repeat(MAX_LOGICAL_LINE / 2),
            "b".repeat(MAX_LOGICAL_LINE / 2 + 1)
        );
        assert_eq!(
            lex(&too_long_joined).unwrap_err(),
            "heredoc logical line too large"
        );
        // A quoted delimiter's body is data: no joining and no bound.
        let quoted = format!("cat <<'EOF'\n{}\nEOF", "a".repeat(MAX_LOGICAL_LINE + 1));
        assert_eq!(words(&quoted), ["cat", "<heredoc>"]);
        // At the end of input with a continuation pending: unterminated.
        assert_eq!(
            lex("cat <<EOF\nsafe\\\nEOF").unwrap_err(),
            "unterminated heredoc"
        );
    }
}

//! sed scripts: read-only when every command only prints, deletes or moves text between the
//! pattern and hold spaces. `w`, `W` (and the `w` flag of `s`) write files, `e` (and the `e` flag)
//! runs commands, `r`, `R` read other files; anything not parsed is refused.
//!
//! The script is the `-e`/`--expression` values, or else the first operand: a later operand is an
//! input file, whatever its name (`sed -n 1p error.log`).
//!
//! Regular expressions are scanned twice, once treating `[...]` as a bracket expression that may
//! hold the delimiter (GNU) and once not (POSIX), and both readings must be read-only: where the
//! regex ends decides what is read as flags and commands.

use super::Args;
use crate::approval::getopt::Parsed;

pub fn check_sed(parsed: &Parsed, args: &Args) -> Result<(), String> {
    let expressions: Vec<(&str, Option<usize>)> = parsed
        .opts()
        .filter(|o| o.name == "-e" || o.name == "--expression")
        .map(|o| (o.value.as_deref().unwrap_or(""), o.value_index))
        .collect();
    let script = if expressions.is_empty() {
        let Some((first, at)) = parsed.operands().next() else {
            return Ok(());
        };
        if args.expands(at) {
            return Err(format!("the script {first} may expand to other words"));
        }
        first.to_string()
    } else {
        if let Some((v, _)) = expressions
            .iter()
            .find(|(_, at)| at.is_some_and(|at| args.expands(at)))
        {
            return Err(format!("the script {v} may expand to other words"));
        }
        // sed joins the -e pieces with newlines.
        expressions
            .iter()
            .map(|(v, _)| *v)
            .collect::<Vec<_>>()
            .join("\n")
    };
    for brackets in [true, false] {
        Script::new(&script, brackets)
            .check()
            .map_err(|why| format!("the script {why}"))?;
    }
    Ok(())
}

/// Why the sed script `script` may run a shell command (the `e` command or the `e` flag of `s`) or
/// write a file (`w`, `W`, the `w` flag: a file a later command may run), if it may: it does, or it
/// does not parse with certainty (an unknown command, an unterminated regex), read both as GNU and
/// as POSIX read a `[...]` holding the delimiter. Files it reads are not the question here, nor
/// standard output and error written by name.
pub fn script_runs_commands(script: &str) -> Option<String> {
    [true, false].iter().find_map(|&brackets| {
        let mut s = Script::new(script, brackets);
        s.files_ok = true;
        s.check().err()
    })
}

struct Script {
    chars: Vec<char>,
    at: usize,
    /// Whether a `[...]` in a regex may hold the delimiter.
    brackets: bool,
    /// Whether `w`, `W`, `r`, `R` (and the `w` flag) pass, for the question whether the script runs
    /// commands (`e`) rather than whether it is read-only.
    files_ok: bool,
}

impl Script {
    fn new(s: &str, brackets: bool) -> Script {
        Script {
            chars: s.chars().collect(),
            at: 0,
            brackets,
            files_ok: false,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn skip_to_line_end(&mut self) {
        while !matches!(self.peek(), None | Some('\n')) {
            self.at += 1;
        }
    }

    fn check(&mut self) -> Result<(), String> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == '#' {
                self.skip_to_line_end();
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.at += 1;
                self.skip_blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.at += 1;
                }
                self.address()?;
                self.skip_blanks();
            }
            while self.peek() == Some('!') {
                self.at += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn number(&mut self) -> bool {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.at > start
    }

    /// An optional address: a line number (or `first~step`), `$`, `/re/` or `\cREc` with flags.
    fn address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.number();
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.regex('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.at += 1;
                let delim = self
                    .bump()
                    .filter(|d| *d != '\n' && *d != '\\')
                    .ok_or("has a bad address delimiter")?;
                self.regex(delim)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    /// Up to the closing delimiter (consumed).
    fn regex(&mut self, delim: char) -> Result<(), String> {
        loop {
            match self.bump() {
                None | Some('\n') => return Err("has an unterminated regular expression".into()),
                Some('\\') => {
                    if self.bump().is_none() {
                        return Err("ends in a backslash".into());
                    }
                }
                Some('[') if self.brackets => self.bracket()?,
                Some(c) if c == delim => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// After `[`: up to the closing `]`, with `[:class:]`, `[.x.]`, `[=x=]` and a leading `]`.
    fn bracket(&mut self) -> Result<(), String> {
        if self.peek() == Some('^') {
            self.at += 1;
        }
        if self.peek() == Some(']') {
            self.at += 1;
        }
        loop {
            match self.bump() {
                None | Some('\n') => return Err("has an unterminated bracket expression".into()),
                Some(']') => return Ok(()),
                Some('[') if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.bump().unwrap_or(':');
                    loop {
                        match self.bump() {
                            None | Some('\n') => {
                                return Err("has an unterminated bracket expression".into())
                            }
                            Some(c) if c == kind && self.peek() == Some(']') => {
                                self.at += 1;
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// A replacement or `y` set up to the delimiter (consumed); escaped newlines are allowed.
    fn text_to(&mut self, delim: char) -> Result<(), String> {
        loop {
            match self.bump() {
                None => return Err("has an unterminated s or y command".into()),
                Some('\n') => return Err("has an unterminated s or y command".into()),
                Some('\\') => {
                    self.bump();
                }
                Some(c) if c == delim => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// A label for `:`, `b`, `t`, `T`: read only up to the first character that could end it
    /// in any sed, so nothing after it is skipped unread.
    fn label(&mut self) {
        self.skip_blanks();
        while !matches!(self.peek(), None | Some('\n' | ';' | ' ' | '\t' | '}')) {
            self.at += 1;
        }
    }

    /// After a command: blanks, then the end, a newline, `;`, `}` or a comment.
    fn end_of_command(&mut self, cmd: char) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Ok(()),
            Some(c) => Err(format!("has an unexpected {c:?} after the {cmd} command")),
        }
    }

    fn command(&mut self) -> Result<(), String> {
        let Some(cmd) = self.bump() else {
            return Err("ends after an address".into());
        };
        match cmd {
            '{' | '}' => Ok(()),
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => {
                self.end_of_command(cmd)
            }
            'l' | 'q' | 'Q' | 'L' => {
                self.skip_blanks();
                self.number();
                self.end_of_command(cmd)
            }
            ':' | 'b' | 't' | 'T' => {
                self.label();
                self.end_of_command(cmd)
            }
            // Text to the end of the line (GNU one-liner form, or `a\` and the lines after it,
            // which are then read as commands here: stricter than sed, never looser).
            'a' | 'i' | 'c' => {
                self.skip_to_line_end();
                Ok(())
            }
            's' => self.substitute(),
            'y' => {
                let delim = self
                    .bump()
                    .filter(|d| *d != '\n' && *d != '\\')
                    .ok_or("has a bad y delimiter")?;
                self.text_to(delim)?;
                self.text_to(delim)?;
                self.end_of_command(cmd)
            }
            // The file name is the rest of the line. A file read is not the question there; a file
            // written is (one a later command runs: `sed -n '1w package.json'`), but for the
            // standard streams.
            'r' | 'R' if self.files_ok => {
                self.skip_to_line_end();
                Ok(())
            }
            'w' | 'W' if self.files_ok && self.writes_a_stream() => Ok(()),
            // GNU's `v [VERSION]`: a label-like word.
            'v' if self.files_ok => {
                self.label();
                self.end_of_command(cmd)
            }
            'w' | 'W' => Err(format!("writes a file ({cmd} command)")),
            'e' => Err("runs a command (e command)".into()),
            'r' | 'R' => Err(format!("reads another file ({cmd} command)")),
            c => Err(format!("uses the command {c:?}, which is not allowed")),
        }
    }

    /// Whether the file name that is the rest of the line is standard output or error (GNU's
    /// special names); the line is read either way.
    fn writes_a_stream(&mut self) -> bool {
        let start = self.at;
        self.skip_to_line_end();
        let name: String = self.chars[start..self.at].iter().collect();
        matches!(name.trim(), "/dev/stdout" | "/dev/stderr")
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delim = self
            .bump()
            .filter(|d| *d != '\n' && *d != '\\')
            .ok_or("has a bad s delimiter")?;
        self.regex(delim)?;
        self.text_to(delim)?;
        while let Some(c) = self.peek() {
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.at += 1,
                c if c.is_ascii_digit() => self.at += 1,
                'w' if self.files_ok && {
                    self.at += 1;
                    self.writes_a_stream()
                } =>
                {
                    return Ok(())
                }
                'w' => return Err("writes a file (w flag of s)".into()),
                'e' => return Err("runs a command (e flag of s)".into()),
                _ => break,
            }
        }
        self.end_of_command('s')
    }
}

#[cfg(test)]
mod tests {
    use super::Script;

    fn ok(s: &str) -> bool {
        [true, false]
            .iter()
            .all(|&b| Script::new(s, b).check().is_ok())
    }

    #[test]
    fn scripts_that_run_commands() {
        use super::script_runs_commands as runs;
        for s in [
            "p",
            "s/a/b/g",
            "1w /dev/stdout",
            "s/a/b/w /dev/stderr",
            "r /etc/passwd",
            "/e/d",
            "s/e/E/g",
            "y/e/E/",
            "a e",
            "# e\np",
            "v 4.2; p",
        ] {
            assert_eq!(runs(s), None, "{s}");
        }
        for s in [
            "e touch x",
            "1e",
            "1w out",
            "s/a/b/w out",
            "W package.json",
            "s/.*/touch x/e",
            "s/a/b/ge",
            "s/a/b/;e",
            "/x/{e rm x\n}",
            "$!e",
            "k",
            "s/a/b",
            "s/[/]/x/e",
        ] {
            assert!(runs(s).is_some(), "{s}");
        }
    }

    #[test]
    fn scripts() {
        for s in [
            "p",
            "1,5p",
            "$p",
            "/foo/p",
            "/a\\/b/,/c/d",
            "\\%x%p",
            "s/a/b/g",
            "s|a|b|2p",
            "s/a/b/I;s/c/d/",
            "1~2p",
            "0,/re/d",
            "/x/,+3p",
            "/x/!d",
            "/x/{p;d}",
            ":a;N;$!ba;s/\\n/ /g",
            "y/abc/xyz/",
            "a hello; world",
            "l 20",
            "q5",
            "= ; p",
            "# comment w x\np",
        ] {
            assert!(ok(s), "{s}");
        }
        for s in [
            "w out",
            "1w out",
            "/x/W out",
            "s/a/b/w out",
            "s/a/b/gw out",
            "s/a/b/e",
            "e echo",
            "1e",
            "r /etc/passwd",
            "R x",
            "p;w x",
            "$!{w x\n}",
            "a\\\nw x",
            "s/[/]/x/w f",
            // Fine for GNU sed, but a POSIX sed reads `]` as the replacement and `x/` as flags.
            "s/[/]/x/",
            "s/[/]w/x/",
            "b end;w x",
            "v; w x",
            "k",
            "s/a/b",
            "/unterminated",
        ] {
            assert!(!ok(s), "{s}");
        }
    }
}

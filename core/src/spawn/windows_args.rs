//! A Windows command line and environment block from argv and a map, as `CreateProcessW` takes them.
//! Plain functions over strings, so they are tested on every platform.
//!
//! Quoting follows the rules the Microsoft C runtime (and so PowerShell, node and most programs) use to
//! split a command line: an argument with a space, a tab, a quote or nothing at all is quoted;
//! backslashes are literal except before a quote, where each is doubled; a quote is escaped with a
//! backslash. `cmd.exe` splits its own way, so its command (after `/c`) is passed whole inside one pair
//! of quotes, which `/s` strips, as OpenClaw's `["cmd.exe", "/d", "/s", "/c", cmd]` does.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// One argument quoted for the C runtime's splitter.
pub fn quote_arg(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\x0b', '"']) {
        return arg.to_string();
    }
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Backslashes before a quote are doubled, and the quote itself escaped.
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                backslashes = 0;
                out.push(c);
            }
        }
    }
    // Before the closing quote, backslashes are doubled so the quote stays a quote.
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
    out
}

/// Whether `program` is `cmd.exe` (by file name, any case).
pub fn is_cmd(program: &std::path::Path) -> bool {
    // Split by hand on both separators, so the test of a Windows path means the same everywhere.
    let text = program.to_string_lossy();
    let name = text
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    name == "cmd.exe" || name == "cmd"
}

/// The full command line: the program, the shell's own arguments, and the script (for `cmd.exe` inside
/// one pair of quotes, unescaped; for every other program quoted as one argument).
pub fn command_line(program: &std::path::Path, args: &[String], script: &str) -> String {
    let mut line = quote_arg(&program.display().to_string());
    for a in args {
        line.push(' ');
        line.push_str(&quote_arg(a));
    }
    line.push(' ');
    if is_cmd(program) {
        line.push('"');
        line.push_str(script);
        line.push('"');
    } else {
        line.push_str(&quote_arg(script));
    }
    line
}

/// The environment as a Unicode block: `NAME=value` entries, each ending in NUL, sorted by name without
/// regard to case (as Windows keeps it), and a final NUL.
pub fn environment_block(env: &BTreeMap<OsString, OsString>) -> Vec<u16> {
    let mut entries: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    entries.sort_by_key(|(k, _)| k.to_uppercase());
    let mut block = Vec::new();
    for (k, v) in entries {
        block.extend(k.encode_utf16());
        block.push(u16::from(b'='));
        block.extend(v.encode_utf16());
        block.push(0);
    }
    if block.is_empty() {
        // An empty block still needs its two NULs.
        block.push(0);
    }
    block.push(0);
    block
}

/// A string as a NUL-terminated UTF-16 buffer.
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C runtime's splitter (the documented rules of `CommandLineToArgvW` for arguments after the
    /// first), to check that quoting round-trips.
    fn split(line: &str) -> Vec<String> {
        let mut args = Vec::new();
        let mut cur = String::new();
        let mut in_arg = false;
        let mut quoted = false;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                let start = i;
                while i < chars.len() && chars[i] == '\\' {
                    i += 1;
                }
                let n = i - start;
                if i < chars.len() && chars[i] == '"' {
                    cur.extend(std::iter::repeat_n('\\', n / 2));
                    if n % 2 == 1 {
                        cur.push('"');
                        i += 1;
                    }
                } else {
                    cur.extend(std::iter::repeat_n('\\', n));
                }
                in_arg = true;
                continue;
            }
            if c == '"' {
                quoted = !quoted;
                in_arg = true;
            } else if (c == ' ' || c == '\t') && !quoted {
                if in_arg {
                    args.push(std::mem::take(&mut cur));
                    in_arg = false;
                }
            } else {
                cur.push(c);
                in_arg = true;
            }
            i += 1;
        }
        if in_arg {
            args.push(cur);
        }
        args
    }

    #[test]
    fn quoting_round_trips_through_the_c_runtime_rules() {
        let cases = [
            "",
            "plain",
            "two words",
            "tab\there",
            "say \"hi\"",
            "C:\\path with space\\",
            "C:\\no_space\\",
            "ends with \\\"",
            "\\\\server\\share",
            "a\\\\\"b",
            "\"",
            "\\",
            "x\ny",
            "ümlaut 🎉",
        ];
        for case in cases {
            let line = format!("prog {}", quote_arg(case));
            assert_eq!(
                split(&line),
                vec!["prog".to_string(), case.to_string()],
                "{line}"
            );
        }
        // Arguments that need nothing are left alone.
        assert_eq!(quote_arg("-NoProfile"), "-NoProfile");
        assert_eq!(quote_arg("C:\\dir\\"), "C:\\dir\\");
    }

    #[test]
    fn generated_arguments_round_trip() {
        let mut rng = crate::test_rng::Rng(0x5eed_2026);
        let alphabet = ['a', ' ', '\\', '"', '\t', 'é', 'b'];
        for _ in 0..5000 {
            let len = rng.below(12);
            let arg: String = (0..len).map(|_| rng.pick(&alphabet)).collect();
            let line = format!("p {}", quote_arg(&arg));
            assert_eq!(split(&line), vec!["p".to_string(), arg.clone()], "{line:?}");
        }
    }

    #[test]
    fn cmd_gets_its_command_whole_and_powershell_one_argument() {
        let line = command_line(
            std::path::Path::new("C:\\Windows\\System32\\cmd.exe"),
            &["/d".into(), "/s".into(), "/c".into()],
            "echo \"a b\" & dir",
        );
        assert_eq!(
            line,
            "C:\\Windows\\System32\\cmd.exe /d /s /c \"echo \"a b\" & dir\""
        );
        let ps = command_line(
            std::path::Path::new("C:\\Program Files\\PowerShell\\7\\pwsh.exe"),
            &["-NoProfile".into(), "-Command".into()],
            "Write-Output \"x\"",
        );
        assert_eq!(
            split(&ps),
            vec![
                "C:\\Program Files\\PowerShell\\7\\pwsh.exe",
                "-NoProfile",
                "-Command",
                "Write-Output \"x\""
            ]
        );
    }

    #[test]
    fn environment_block_is_sorted_without_case_and_double_terminated() {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("b"), OsString::from("2"));
        env.insert(OsString::from("A"), OsString::from("1"));
        env.insert(OsString::from("Path"), OsString::from("C:\\x"));
        let block = environment_block(&env);
        let text = String::from_utf16(&block).unwrap();
        assert_eq!(text, "A=1\0b=2\0Path=C:\\x\0\0");
        assert_eq!(environment_block(&BTreeMap::new()), vec![0, 0]);
    }
}

//! Allowlist globs over resolved executable paths.
//!
//! The dialect is deliberately tiny: `**`, `*`, `?` and a leading `~`. Everything else is literal,
//! because executable names such as `g++` or directories such as `[x]` must be writable as-is
//! without escaping, and a person reading the allowlist should never need to know a regex dialect.

/// Only patterns that name a location are matched against paths; a bare name such as `ls` would
/// otherwise allow every `ls` found anywhere on `PATH`.
pub fn is_path_pattern(pattern: &str) -> bool {
    pattern.contains(['/', '\\', '~'])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run without `/`.
    Star,
    /// `**`: any run, `/` included.
    DoubleStar,
}

fn expand_home(pattern: &str, home: Option<&str>) -> String {
    let Some(home) = home.filter(|h| !h.is_empty()) else {
        return pattern.to_string();
    };
    // `/` alone must stay `/`, or `~/bin` would become `//bin`.
    let home = match home.trim_end_matches('/') {
        "" => "/",
        h => h,
    };
    if pattern == "~" {
        return home.to_string();
    }
    match pattern.strip_prefix("~/") {
        Some(rest) if home == "/" => format!("/{rest}"),
        Some(rest) => format!("{home}/{rest}"),
        None => pattern.to_string(),
    }
}

fn tokenize(pattern: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                Token::DoubleStar
            }
            '*' => Token::Star,
            '?' => Token::One,
            other => Token::Literal(other),
        });
    }
    tokens
}

/// Does `pattern` match the whole of `path`? `home` expands a leading `~`; without it `~` stays
/// literal and so matches no absolute path.
pub fn glob_matches(pattern: &str, path: &str, home: Option<&str>) -> bool {
    let expanded = expand_home(pattern.trim(), home);
    let tokens = tokenize(&expanded);
    let text: Vec<char> = path.chars().collect();

    // Table over suffixes instead of recursive backtracking: patterns with many stars stay
    // O(pattern x path) rather than exponential. `next[j]` holds "tokens[i+1..] match text[j..]".
    let n = text.len();
    let mut next = vec![false; n + 1];
    next[n] = true;
    for token in tokens.iter().rev() {
        let mut cur = vec![false; n + 1];
        for j in (0..=n).rev() {
            cur[j] = match *token {
                Token::Literal(c) => j < n && text[j] == c && next[j + 1],
                Token::One => j < n && text[j] != '/' && next[j + 1],
                // Either the star stops here, or it swallows text[j] and continues.
                Token::Star => next[j] || (j < n && text[j] != '/' && cur[j + 1]),
                Token::DoubleStar => next[j] || (j < n && cur[j + 1]),
            };
        }
        next = cur;
    }
    next[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_patterns_only() {
        assert!(is_path_pattern("/usr/bin/ls"));
        assert!(is_path_pattern("~/bin/tool"));
        assert!(is_path_pattern("C:\\tools\\x.exe"));
        assert!(is_path_pattern("~"));
        assert!(!is_path_pattern("ls"));
        assert!(!is_path_pattern("*"));
        assert!(!is_path_pattern("python3*"));
    }

    #[test]
    fn match_table() {
        let home = Some("/home/ann");
        #[rustfmt::skip]
        let cases: &[(&str, &str, Option<&str>, bool)] = &[
            // Literal paths.
            ("/usr/bin/ls", "/usr/bin/ls", None, true),
            ("/usr/bin/ls", "/usr/bin/lsx", None, false),
            ("/usr/bin/ls", "/x/usr/bin/ls", None, false),
            ("/usr/bin/g++", "/usr/bin/g++", None, true),
            ("/usr/bin/g++", "/usr/bin/g", None, false),
            ("/opt/[x]/bin", "/opt/[x]/bin", None, true),
            ("/opt/[x]/bin", "/opt/x/bin", None, false),
            ("/opt/{a,b}/run", "/opt/a/run", None, false),
            ("/opt/{a,b}/run", "/opt/{a,b}/run", None, true),
            ("/opt/a.b", "/opt/aXb", None, false),
            // Case-sensitive, as POSIX paths are.
            ("/usr/bin/LS", "/usr/bin/ls", None, false),
            // `?` is one non-slash character.
            ("/usr/bin/?s", "/usr/bin/ls", None, true),
            ("/usr/bin/?s", "/usr/bin/s", None, false),
            ("/usr/bin/?s", "/usr/bin/lls", None, false),
            ("/usr?bin/ls", "/usr/bin/ls", None, false),
            // `*` stays within one component.
            ("/usr/bin/*", "/usr/bin/ls", None, true),
            ("/usr/bin/*", "/usr/bin/", None, true),
            ("/usr/bin/*", "/usr/bin/sub/ls", None, false),
            ("/usr/*/ls", "/usr/local/bin/ls", None, false),
            ("/usr/bin/py*3", "/usr/bin/python3", None, true),
            ("/usr/bin/*.sh", "/usr/bin/a.b.sh", None, true),
            // `**` crosses components.
            ("/usr/**/python3", "/usr/local/bin/python3", None, true),
            ("/usr/**/python3", "/usr/bin/python3", None, true),
            ("/usr/**/python3", "/usr/bin/python3.12", None, false),
            ("/usr/**/python3", "/opt/usr/bin/python3", None, false),
            ("/opt/**", "/opt/a/b/c", None, true),
            ("/opt/**", "/opt/", None, true),
            ("/opt/**", "/optx/a", None, false),
            ("**", "/anything/at/all", None, true),
            ("/a/**/**/z", "/a/b/c/z", None, true),
            // Home expansion.
            ("~/bin/*", "/home/ann/bin/tool", home, true),
            ("~/bin/*", "/home/ann/bin/sub/tool", home, false),
            ("~/bin/*", "/home/bob/bin/tool", home, false),
            ("~/bin/*", "/home/ann/bin/tool", None, false),
            ("~", "/home/ann", home, true),
            ("~/x", "/home/ann/x", Some("/home/ann/"), true),
            ("~/x", "/x", Some("/"), true),
            // `~` elsewhere is literal.
            ("/opt/~/x", "/opt/~/x", home, true),
            ("~ann/bin/x", "/home/ann/bin/x", home, false),
            // Surrounding whitespace in the pattern is ignored, in the path it is not.
            ("  /usr/bin/ls\t", "/usr/bin/ls", None, true),
            ("  ~/bin/*  ", "/home/ann/bin/tool", home, true),
            ("/usr/bin/ls", "/usr/bin/ls ", None, false),
            // Empty pattern matches only an empty path.
            ("", "", None, true),
            ("", "/usr/bin/ls", None, false),
        ];
        for (pattern, path, home, expected) in cases {
            assert_eq!(
                glob_matches(pattern, path, *home),
                *expected,
                "pattern {pattern:?} path {path:?} home {home:?}"
            );
        }
    }

    #[test]
    fn many_stars_do_not_blow_up() {
        let pattern = format!("/*{}x", "a*".repeat(30));
        let path = format!("/{}", "a".repeat(200));
        assert!(!glob_matches(&pattern, &path, None));
    }
}

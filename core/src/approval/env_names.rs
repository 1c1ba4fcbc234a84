//! The environment variables a command may set (by prefix assignment or `env NAME=...`) and still
//! run without asking: they change formatting only. Every other name can make a program run other
//! code or find other files (`BASH_ENV`, `BASH_FUNC_*`, `PATH`, `LD_PRELOAD`, `GIT_CONFIG_*`,
//! `GIT_EXTERNAL_DIFF`, `PAGER`, `LESSOPEN`, `RIPGREP_CONFIG_PATH`...), so a list of bad names would
//! always be one short: this is the list of good ones, and it stays small.

/// Whether assigning `name` leaves what the command runs unchanged.
pub fn is_harmless(name: &str) -> bool {
    name.starts_with("LC_")
        || matches!(
            name,
            "LANG"
                | "LANGUAGE"
                | "TZ"
                | "NO_COLOR"
                | "FORCE_COLOR"
                | "CLICOLOR"
                | "TERM"
                | "COLUMNS"
                | "LINES"
                | "CI"
        )
}

/// Whether assigning `value` to `name` leaves what the command runs unchanged: a harmless name, and
/// for the variables that choose the character set (`LC_ALL`, `LC_CTYPE`, `LANG`) a value in which
/// bash reads the command's bytes as the analyzer does. In BIG5, GBK, GB18030 or Shift_JIS the second
/// byte of a character can be `\`, `'`, `"` or `` ` ``: bash then pairs it with the character and
/// closes a quote the analyzer saw open (`LC_ALL=zh_TW.BIG5 bash -c 'echo "严\" ; touch x ; "严\"'`
/// runs `touch`). Harmless: empty, `C`, `POSIX` and UTF-8 locales.
pub fn is_harmless_assignment(name: &str, value: &str) -> bool {
    is_harmless(name) && (!chooses_charset(name) || reads_like_utf8(value))
}

/// The variables whose value sets how bash splits bytes into characters (`LC_ALL` over `LC_CTYPE`
/// over `LANG`).
pub fn chooses_charset(name: &str) -> bool {
    matches!(name, "LC_ALL" | "LC_CTYPE" | "LANG")
}

/// A locale bash tokenizes as the analyzer does: unset or empty, `C`/`POSIX`, or a UTF-8 one
/// (`en_US.UTF-8`, `C.utf8`, `de_DE.UTF-8@euro`).
pub fn reads_like_utf8(locale: &str) -> bool {
    if matches!(locale, "" | "C" | "POSIX") {
        return true;
    }
    let charset = locale
        .split_once('.')
        .map(|(_, rest)| rest.split('@').next().unwrap_or(rest))
        .unwrap_or("");
    let normal: String = charset
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    normal == "utf8"
}

/// The first assignment (name, value) outside the harmless set, if any: its name.
pub fn first_harmful<'a>(
    assignments: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<&'a str> {
    assignments
        .into_iter()
        .find(|(n, v)| !is_harmless_assignment(n, v))
        .map(|(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_formatting_variables_are_harmless() {
        for n in [
            "LANG", "LC_ALL", "LC_CTYPE", "TZ", "NO_COLOR", "TERM", "COLUMNS",
        ] {
            assert!(is_harmless(n), "{n}");
        }
        for n in [
            "PATH",
            "BASH_ENV",
            "ENV",
            "BASH_FUNC_cat%%",
            "LD_PRELOAD",
            "GIT_CONFIG_COUNT",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
            "PAGER",
            "LESSOPEN",
            "IFS",
            "X",
            "SHELLOPTS",
        ] {
            assert!(!is_harmless(n), "{n}");
        }
        assert_eq!(
            first_harmful([("LANG", "C"), ("PAGER", "x"), ("X", "")]),
            Some("PAGER")
        );
    }

    #[test]
    fn a_locale_is_harmless_only_where_bash_reads_bytes_as_utf8() {
        for v in [
            "",
            "C",
            "POSIX",
            "C.UTF-8",
            "C.utf8",
            "en_US.UTF-8",
            "de_DE.utf-8@euro",
        ] {
            for n in ["LC_ALL", "LC_CTYPE", "LANG"] {
                assert!(is_harmless_assignment(n, v), "{n}={v}");
            }
        }
        for v in [
            "zh_TW.BIG5",
            "zh_CN.GBK",
            "zh_CN.GB18030",
            "ja_JP.SJIS",
            "en_US",
            "ja_JP.eucJP",
        ] {
            for n in ["LC_ALL", "LC_CTYPE", "LANG"] {
                assert!(!is_harmless_assignment(n, v), "{n}={v}");
            }
        }
        // Other locale categories do not split bytes into characters.
        assert!(is_harmless_assignment("LC_MESSAGES", "zh_TW.BIG5"));
        assert!(is_harmless_assignment("LANGUAGE", "zh_TW"));
        assert_eq!(first_harmful([("LC_ALL", "zh_TW.BIG5")]), Some("LC_ALL"));
    }
}

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

/// The first assigned name outside the harmless set, if any.
pub fn first_harmful<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names.into_iter().find(|n| !is_harmless(n))
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
        assert_eq!(first_harmful(["LANG", "PAGER", "X"]), Some("PAGER"));
    }
}

//! What a program is, whatever it was called: the names the analyzer's lists know it by.
//!
//! The lists of shells, wrappers, dispatchers and code runners name programs; a command can call the
//! same program by another name (`rbash` is bash, `editor` and `vim.basic` are vim, `fakeroot-sysv`
//! is fakeroot, `tclsh8.6` is tclsh, `linux64` is setarch, `/lib64/ld-linux-x86-64.so.2` is the
//! dynamic loader, which runs the program it is given). A list checked against the typed name alone
//! let those through as plain commands. Each list is checked against every name here instead: the
//! typed one, the one `PATH` resolved (links followed), and what each stands for.

/// Names that are another program under Debian's alternatives or a distribution's packaging.
const ALIASES: &[(&str, &str)] = &[
    ("rbash", "bash"),
    ("fakeroot-sysv", "fakeroot"),
    ("fakeroot-tcp", "fakeroot"),
    ("editor", "vim"),
    ("sensible-editor", "vim"),
    ("vim.basic", "vim"),
    ("vim.tiny", "vim"),
    ("vim.nox", "vim"),
    ("vim.gtk", "vim"),
    ("vim.gtk3", "vim"),
    ("vim.athena", "vim"),
    ("rvim", "vim"),
    ("gvim", "vim"),
    ("evim", "vim"),
    ("rview", "view"),
    ("linux32", "setarch"),
    ("linux64", "setarch"),
    ("i386", "setarch"),
    ("x86_64", "setarch"),
    ("uname26", "setarch"),
    ("pdb3", "pdb"),
    ("gdbtui", "gdb"),
    // busybox's make.
    ("mim", "make"),
];

/// Every name the program `typed` (as written, a path or a name) is known by, given what `PATH`
/// resolved it to (`resolved`: the executable's own name, or empty): the typed basename first.
pub fn names(typed: &str, resolved: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !n.is_empty() && !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for raw in [typed, resolved] {
        let base = raw.rsplit('/').next().unwrap_or(raw);
        let base = base.strip_suffix(".exe").unwrap_or(base);
        add(base);
        if let Some((_, is)) = ALIASES.iter().find(|(alias, _)| *alias == base) {
            add(is);
        }
        // QEMU's user-mode emulators (`qemu-x86_64`, `qemu-aarch64-static`) run the program
        // they are given.
        if base.starts_with("qemu-") && !base.starts_with("qemu-system-") && base != "qemu-img" {
            add("qemu-user");
        }
        // The dynamic loader, by any of its names.
        if base == "ld.so" || base.starts_with("ld-linux") || base.starts_with("ld64.so") {
            add("ld.so");
        }
        // A version after the name: tclsh8.6, python3.11, perl5.36, lua5.4, node20; and with a
        // platform after it (`perl5.36-x86_64-linux-gnu`): the letters before the first digit.
        let bare = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if bare.len() >= 2 && bare != base {
            add(bare);
        }
        // A version after a dash: LLVM's and GCC's tools (`opt-14`, `llc-14`, `not-14`,
        // `clang-14`, `gcc-nm-12`).
        if let Some((stem, version)) = base.rsplit_once('-') {
            if stem.len() >= 2
                && !version.is_empty()
                && version.chars().all(|c| c.is_ascii_digit() || c == '.')
            {
                add(stem);
            }
        }
        if let Some(at) = base.find(|c: char| c.is_ascii_digit()) {
            let stem = &base[..at];
            if stem.len() >= 2 && stem.chars().all(|c| c.is_ascii_alphabetic()) {
                add(stem);
            }
        }
    }
    out
}

/// Whether any of `names` is in `list`.
pub fn any_in(names: &[String], list: &[&str]) -> bool {
    names.iter().any(|n| list.contains(&n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_known_by_what_it_is() {
        for (typed, resolved, want) in [
            ("rbash", "bash", "bash"),
            ("editor", "vim.basic", "vim"),
            ("/usr/bin/editor", "", "vim"),
            ("fakeroot-sysv", "", "fakeroot"),
            ("tclsh8.6", "tclsh8.6", "tclsh"),
            ("linux64", "setarch", "setarch"),
            (
                "/lib64/ld-linux-x86-64.so.2",
                "ld-linux-x86-64.so.2",
                "ld.so",
            ),
            ("ld.so", "", "ld.so"),
            ("python3.11", "", "python"),
            ("sh", "dash", "dash"),
            ("perl5.36-x86_64-linux-gnu", "", "perl"),
            ("perl5.36.0", "", "perl"),
            ("gdbtui", "", "gdb"),
            ("opt-14", "", "opt"),
            ("not-14", "", "not"),
            ("gcc-nm-12", "", "gcc-nm"),
            ("ld.lld-14", "", "ld.lld"),
            ("qemu-x86_64-static", "", "qemu-user"),
            ("pydoc3", "", "pydoc"),
        ] {
            let got = names(typed, resolved);
            assert!(
                got.iter().any(|n| n == want),
                "{typed} ({resolved}): {got:?}"
            );
        }
        assert_eq!(names("ls", "ls"), vec!["ls".to_string()]);
        // A name that is only digits after a letter keeps its own name first.
        assert_eq!(names("b2sum", "")[0], "b2sum");
    }
}

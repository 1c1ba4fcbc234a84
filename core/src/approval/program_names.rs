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
    // rustup's names for a debugger and for rustc (every rustup proxy is one file).
    ("rust-gdb", "gdb"),
    ("rust-gdbgui", "gdb"),
    ("rust-lldb", "lldb"),
    ("clippy-driver", "rustc"),
    // Debian's names for the real valgrind, gold and the ELF tools.
    ("valgrind.bin", "valgrind"),
    ("gold", "ld.gold"),
];

/// The first part of a GNU target triplet: a binutils or GCC tool named for a target
/// (`x86_64-linux-gnu-nm`, `aarch64-linux-gnu-ld.bfd`, `x86_64-w64-mingw32-ar`) is that tool.
const TRIPLET_ARCHES: &[&str] = &[
    "x86_64",
    "i386",
    "i486",
    "i586",
    "i686",
    "aarch64",
    "arm",
    "armv7l",
    "armhf",
    "riscv64",
    "powerpc",
    "powerpc64",
    "powerpc64le",
    "ppc64le",
    "s390x",
    "mips",
    "mipsel",
    "mips64",
    "mips64el",
    "loongarch64",
    "sparc64",
    "alpha",
    "m68k",
    "sh4",
    "hppa",
    "ia64",
];

/// The tool a target-prefixed name stands for: the part after the triplet (two to four parts,
/// an architecture first and an OS or ABI last).
fn after_triplet(base: &str) -> Option<&str> {
    let parts: Vec<&str> = base.split('-').collect();
    if parts.len() < 3 || !TRIPLET_ARCHES.contains(&parts[0]) {
        return None;
    }
    let os_like = |p: &str| {
        [
            "linux", "gnu", "mingw", "elf", "eabi", "darwin", "none", "musl", "w64",
        ]
        .iter()
        .any(|k| p.contains(k))
    };
    (2..=4.min(parts.len() - 1))
        .rev()
        .find(|&k| os_like(parts[k - 1]))
        .map(|k| {
            let at: usize = parts[..k].iter().map(|p| p.len() + 1).sum();
            &base[at..]
        })
}

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
        // A tool named for its target is the tool, by every name of its own (`x86_64-linux-gnu-gcc-nm-12`
        // is gcc-nm, `x86_64-linux-gnu-gp-collect-app` is gp-collect-app).
        if let Some(tool) = after_triplet(base) {
            for n in names(tool, "") {
                add(&n);
            }
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
            ("x86_64-linux-gnu-nm", "", "nm"),
            ("x86_64-linux-gnu-ld.bfd", "", "ld.bfd"),
            ("x86_64-linux-gnu-gcc-nm-12", "", "gcc-nm"),
            ("x86_64-pc-linux-gnu-ranlib", "", "ranlib"),
            ("x86_64-w64-mingw32-ar", "", "ar"),
            ("x86_64-linux-gnu-gp-collect-app", "", "gp-collect-app"),
            ("arm-linux-gnueabihf-objdump", "", "objdump"),
            ("gold", "", "ld.gold"),
            ("rust-gdb", "rustup", "gdb"),
            ("clippy-driver", "rustup", "rustc"),
            ("valgrind.bin", "", "valgrind"),
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

//! What a sandboxed run may write, as one decision used twice: to build the kernel's rules (Landlock,
//! read-only mounts, the macOS profile) and by the supervisor that names each denied operation. Keeping
//! one decision keeps the report honest: it never names a rule the kernel does not enforce.

use std::path::{Component, Path, PathBuf};

/// Device files every run may write: the bit buckets, terminals and randomness.
pub const WRITABLE_DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// The host's device nodes a run's own `/dev` holds (bound in; see `child::DevPlan`).
pub const DEV_NODES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The links of a run's own `/dev`: name and target.
pub const DEV_LINKS: [(&str, &str); 5] = [
    ("ptmx", "pts/ptmx"),
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
];

/// Directories of terminal devices: a PTY run's own `/dev/pts/N` is opened by programs like `ssh`.
pub const WRITABLE_DEVICE_DIRS: [&str; 1] = ["/dev/pts"];

/// Where POSIX shared memory lives.
pub const SHM: &str = "/dev/shm";

/// Entries of a git directory that run code, change what git runs, or say where git reads its config
/// and repository from: never writable in a sandbox. `commondir` pointed at a planted directory, or
/// `config.worktree` with `core.fsmonitor`, would run the command's code in the host's next
/// `git status`; `info/` holds attributes and sparse patterns git obeys.
/// (`remotes` and `branches`: the legacy remote files, which git still reads for a remote its config
/// does not name; outside round eight: `git fetch upstream` fetched from where a run's file said.)
pub const PROTECTED_GIT_ENTRIES: [&str; 7] = [
    "hooks",
    "config",
    "commondir",
    "info",
    "config.worktree",
    "remotes",
    "branches",
];

/// The same, in each `worktrees/<name>/` of a git directory (`gitdir` says where the worktree is).
pub const PROTECTED_WORKTREE_ENTRIES: [&str; 3] = ["config.worktree", "commondir", "gitdir"];

/// Shell start-up files in a home directory: writing one runs code in the user's next shell.
pub const PROTECTED_RC_FILES: [&str; 10] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
];

/// Files and directories of a project (at the top of each writable root) that tools or the user's
/// editor run, or that grant an agent more: never writable in a sandbox, so a command cannot plant
/// what the host later runs (an editor's tasks on folder open, direnv on `cd`, hooks a commit runs,
/// an agent's own settings and MCP servers, a package manager's hooks and the program it runs
/// instead of itself: yarn 1's `yarn-path`, pnpm's `.pnpmfile.cjs`, bun's `preload`, mise's `enter`
/// hooks and `_.source`, cargo's `rustc-wrapper` and runners).
pub const PROTECTED_IN_ROOTS: [&str; 60] = [
    ".claude",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".cursor",
    ".zed",
    ".gemini",
    ".codex",
    ".roo",
    ".amazonq",
    "opencode.json",
    ".envrc",
    ".husky",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    ".devcontainer",
    ".gitconfig",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    "bunfig.toml",
    ".mise.toml",
    "mise.toml",
    ".nvim.lua",
    ".exrc",
    ".hg/hgrc",
    ".cargo/config.toml",
    ".cargo/config",
    // Outside round five, 2026-11-27: other agents' and editors' settings of the same kind (MCP
    // servers, hooks, plugins loaded at start, lint and test commands), other version control
    // systems' repository configs, and start-up files interpreters read from their cwd.
    ".opencode",
    "opencode.jsonc",
    ".qwen",
    ".kilocode",
    ".kiro",
    ".continue",
    ".crush.json",
    ".aider.conf.yml",
    ".openhands",
    ".windsurf",
    ".clinerules",
    ".sl/config",
    ".jj/repo/config.toml",
    ".pijul/config",
    ".Rprofile",
    ".irbrc",
    ".pryrc",
    ".bazelrc",
    // Outside round six: every name an editor's project-local start-up reads beside `.exrc` and
    // `.nvim.lua` (Vim's `exrc` reads `.vimrc`, `_vimrc`, `_exrc`, gvim `.gvimrc` and `_gvimrc`,
    // Neovim `.nvimrc`; lazy.nvim a `.lazy.lua` spec; Emacs evaluates `.dir-locals.el`).
    ".vimrc",
    "_vimrc",
    "_exrc",
    ".gvimrc",
    "_gvimrc",
    ".nvimrc",
    ".lazy.lua",
    ".dir-locals.el",
    ".dir-locals-2.el",
];

/// Names that host tools look for in the directory they run in and every directory above it, and
/// that make them run a program: at any depth inside a root, never written by a run in a directory
/// of the host's (one no run made; see `host_repos`: a run's own clone or new crate is the run's,
/// as its build scripts are). rustup runs
/// the toolchain a `rust-toolchain(.toml)` names (`path = ...`: every `cargo --version`), cargo the
/// `rustc-wrapper` and runners of a `.cargo/config.toml`, yarn the `yarnPath` of a `.yarnrc.yml`,
/// npm the `script-shell` and `node-options` of a package's `.npmrc`, pnpm a `.pnpmfile.cjs`, bun
/// the `preload` of a `bunfig.toml`, mise the tools and hooks of its configs, hg the hooks of a
/// repository's `.hg/hgrc` (so no `.hg` is made or replaced in a directory of the host's; `.jj`, `.sl` and
/// `.pijul` likewise). A directory name (`.cargo`, `.mise`) covers what is inside and
/// the name itself (a link named so would put the config elsewhere).
pub const PROTECTED_AT_ANY_DEPTH: [&str; 19] = [
    ".cargo",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".yarnrc",
    ".yarnrc.yml",
    ".npmrc",
    ".pnpmfile.cjs",
    ".pnpmfile.mjs",
    "bunfig.toml",
    ".mise.toml",
    "mise.toml",
    ".mise.local.toml",
    "mise.local.toml",
    ".mise",
    ".tool-versions",
    ".hg",
    // The other version control systems that find their repository walking up, as git and hg do,
    // and obey its config (pagers, editors, diff tools): a `.jj` whose `repo` is a file names a
    // repository elsewhere, past the `.jj/repo/config.toml` protected at the top of a root.
    ".jj",
    ".sl",
    ".pijul",
];

/// In a home directory a root holds, besides the shell start-up files: what runs programs on its own
/// when the user next works, read from `$HOME`. The configs that make git, ssh, npm, cargo, gradle,
/// sbt, docker, kubectl or the AWS CLI run programs (credential helpers and processes, init scripts,
/// plugins); what a desktop or user session starts; the aliases Debian's `.bashrc` sources, version
/// managers it sources (`.nvm`, `.pyenv`'s shims), the configs of other shells, editors and REPLs
/// that run commands on start; Claude Code's user config (the MCP servers it starts); direnv's list
/// of trusted `.envrc` files; and what comes first on `PATH` or `sys.path`: `~/.local/bin` (which
/// `.profile` puts first), `~/.local/lib` (Python's user site: a `.pth` or `usercustomize` runs in
/// every `python3`), `~/.cargo/bin`, `~/.bun/bin`, `~/.deno/bin`. `pip install --user` and
/// `cargo install` cannot write there from a sandbox. All of `~/.config`: what lives there is what
/// programs load as their configuration (git's, gdb's and tmux's start-up commands among them), so it
/// is the host's whole, not a list of the ones known to run commands. And `~/.cargo/env`, which
/// `.profile` and `.bashrc` source.
pub const PROTECTED_HOME_ENTRIES: [&str; 87] = [
    ".gitconfig",
    ".ssh",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".cargo/config.toml",
    ".cargo/config",
    ".cargo/bin",
    ".rustup",
    ".gradle/init.d",
    ".gradle/gradle.properties",
    ".sbt",
    ".m2/settings.xml",
    ".docker",
    ".kube",
    ".aws",
    ".terraformrc",
    ".inputrc",
    ".local/share/systemd",
    ".local/share/direnv",
    ".xprofile",
    ".xsessionrc",
    ".xinitrc",
    ".bash_aliases",
    ".claude.json",
    ".vimrc",
    ".vim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".ipython",
    ".Rprofile",
    ".julia/config",
    ".irbrc",
    ".pryrc",
    ".psqlrc",
    ".ripgreprc",
    ".nvm",
    ".pyenv",
    ".bun/bin",
    ".deno/bin",
    ".local/bin",
    ".local/lib",
    ".config",
    ".cargo/env",
    ".gdbinit",
    ".sqliterc",
    ".local/share/nvim",
    // Start-up files of less (`LESSOPEN` in `.lesskey` ran in the host's `git log`), hg, screen,
    // lldb, pdb, wget and curl; the editor `sensible-editor` picks; mailcap's viewers; Jupyter's
    // server config and kernels; desktop entries; gpg-agent's config (even before `.gnupg` exists);
    // the package indexes pip, gem and conda install from; pre-commit's cached hook repositories
    // and npx's cached packages, which the host's `pre-commit` and `npx` run as they are.
    ".lesskey",
    ".hgrc",
    ".screenrc",
    ".selected_editor",
    ".mailcap",
    ".lldbinit",
    ".pdbrc",
    ".wgetrc",
    ".curlrc",
    ".jupyter",
    ".local/share/jupyter",
    ".local/share/applications",
    ".local/share/pnpm/global",
    ".gnupg",
    ".pip",
    ".pydistutils.cfg",
    ".gemrc",
    ".condarc",
    ".cache/pre-commit",
    ".npm/_npx",
    // The approvals this runtime and OpenClaw obey (`exec-approvals.json` and the gateway's
    // `openclaw.json`, the MCP server's own file): a run that wrote `{"pattern": "*"}` there had its
    // next elevated command run outside the sandbox unasked.
    ".openclaw",
    ".agent-exec",
    // Outside round five: `~/bin` (Debian's `.profile` puts it first on PATH), the files shells,
    // sessions and mail delivery run, the shims and frameworks rc files source, and corepack's
    // cache (a cached package manager is run again without a check).
    "bin",
    ".bash_completion",
    ".local/share/bash-completion",
    ".xsession",
    ".pam_environment",
    ".forward",
    ".local/share/dbus-1",
    ".asdf",
    ".oh-my-zsh",
    ".fzf.bash",
    ".fzf.zsh",
    ".p10k.zsh",
    ".sdkman",
    ".volta",
    ".rbenv",
    ".local/share/mise",
    ".cache/node/corepack",
];

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyRule {
    /// The path is not under any writable root.
    OutsideWritableRoots,
    /// The path is (or is under) a protected path inside a writable root.
    Protected(PathBuf),
    /// A Unix socket file outside the writable roots and the run's `unixSockets`.
    SocketOutside,
}

impl DenyRule {
    /// The rule as a report names it.
    pub fn describe(&self) -> String {
        match self {
            DenyRule::OutsideWritableRoots => "outside the writable roots".to_string(),
            DenyRule::Protected(p) => format!("protected path {}", p.display()),
            DenyRule::SocketOutside => "outside the writable roots and unixSockets".to_string(),
        }
    }
}

/// The file system side of a sandbox: where writes may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsPolicy {
    /// Canonical directories (and everything beneath them) the run may change.
    pub writable_roots: Vec<PathBuf>,
    /// Canonical paths inside writable roots that stay read-only, whether they exist yet or not.
    pub protected: Vec<PathBuf>,
    /// The `.git` entries (directories or `gitdir:` files) of the repositories in the roots: each
    /// stays where it is (no rename, removal or replacement) while what is inside a directory one
    /// stays writable for commits, except its protected entries.
    pub git_entries: Vec<PathBuf>,
    /// The user's home directory (links resolved), where `.cargo` is cargo's own home rather than a
    /// project's config (see `PROTECTED_AT_ANY_DEPTH`; its own protected entries are listed above).
    pub home: Option<PathBuf>,
    /// Unix socket files (or directories of them) outside the roots that the run may connect to while
    /// the network is off: an ssh-agent, a language server, a database's socket the caller trusts.
    pub unix_sockets: Vec<PathBuf>,
    /// The run's own directory mounted over `/dev/shm` in its mount namespace, when it has one: POSIX
    /// shared memory and semaphores (Python's multiprocessing, Chromium) work, and the host's
    /// segments stay out of reach.
    pub private_shm: Option<PrivateShm>,
    /// `denyWrite` globs, made absolute (relative ones under each root): what they match is
    /// protected, whether it exists yet or not.
    pub deny_write_globs: WriteGlobs,
    /// `protected`, looked up by each write's ancestors (built on the first check).
    pub protected_index: super::path_index::PathIndex,
    /// The run's `/dev/pts` is its own: a `devpts` instance of its own, or only its own terminal
    /// (see `child::DevPlan`), whose modes (`mesg n`, a test's `chmod` of its pty) are its to change.
    /// Otherwise it is the host's, where every terminal of the user's lives.
    pub own_devpts: bool,
    /// The host's own directories inside the writable roots (the session logs, the sandbox's temp
    /// dirs, when a root holds the temp dir): not the run's, but for its own temp dir in one. The
    /// host writes its logs and makes its runs' temp dirs there by name: one moved aside or replaced
    /// by a link made the host write a run's output wherever the link pointed.
    pub host_dirs: Vec<PathBuf>,
    /// The run's own private temp dir, whose contents are its own wherever it lies.
    pub own_tmp: Option<PathBuf>,
}

/// Globs of paths no write may touch, compiled once per run.
#[derive(Debug, Clone, Default)]
pub struct WriteGlobs {
    patterns: Vec<String>,
    set: Option<globset::GlobSet>,
}

impl WriteGlobs {
    /// Are there any?
    pub fn any(&self) -> bool {
        self.set.is_some()
    }
}

impl PartialEq for WriteGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}
impl Eq for WriteGlobs {}

impl WriteGlobs {
    /// The pattern that matches `path`, if one does.
    pub fn matching(&self, path: &Path) -> Option<&str> {
        let set = self.set.as_ref()?;
        set.matches(path)
            .first()
            .map(|&i| self.patterns[i].as_str())
    }
}

/// Whether a `denyWrite` entry is a glob rather than a path.
fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '[', '{'])
}

/// A directory of the run's mounted where POSIX shared memory lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateShm {
    /// Where it is mounted: `/dev/shm` with links resolved (some systems link it to `/run/shm`).
    pub at: PathBuf,
    /// The run's directory behind it.
    pub backing: PathBuf,
}

impl FsPolicy {
    /// Build the policy for `roots` (already canonical), finding the protected paths inside them.
    /// `home` is the user's home directory: its start-up files are protected when a root contains it.
    pub fn new(roots: Vec<PathBuf>, home: Option<&Path>) -> FsPolicy {
        let mut writable_roots: Vec<PathBuf> = Vec::new();
        for r in roots {
            if !writable_roots.contains(&r) {
                writable_roots.push(r);
            }
        }
        let mut protected = Vec::new();
        let mut protect = |p: PathBuf| {
            if !protected.contains(&p) {
                protected.push(p);
            }
        };
        let mut git_entries = Vec::new();
        for root in &writable_roots {
            // A root may be someone's home, or be used as one (HOME pointed at it): its shell
            // start-up files run in the next shell there.
            for entry in PROTECTED_IN_ROOTS.iter().chain(&PROTECTED_RC_FILES) {
                protect(root.join(entry));
            }
            for work_tree in work_trees(root) {
                let dot_git = work_tree.join(".git");
                if std::fs::symlink_metadata(&dot_git).is_err() {
                    continue;
                }
                if !git_entries.contains(&dot_git) {
                    git_entries.push(dot_git.clone());
                }
                if dot_git.is_file() {
                    // A `gitdir:` file says where the repository is: it is not the run's to repoint.
                    protect(dot_git.clone());
                }
                for git_dir in git_dirs(&work_tree) {
                    for p in protected_in_git_dir(&git_dir) {
                        protect(p);
                    }
                }
            }
        }
        // What the roots' repositories' config and the user's global config name as hooks or as
        // more config (`core.hooksPath = .githooks`, `include.path = ~/.gitconfig.local`): git
        // runs and reads those as it does `.git/hooks` and `.git/config`.
        let home_dir = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
        let mut configs: Vec<(PathBuf, PathBuf)> = Vec::new();
        for root in &writable_roots {
            for work_tree in work_trees(root) {
                for git_dir in git_dirs(&work_tree) {
                    for name in ["config", "config.worktree"] {
                        configs.push((git_dir.join(name), work_tree.clone()));
                    }
                }
            }
        }
        if let Some(home) = &home_dir {
            configs.push((home.join(".gitconfig"), home.clone()));
            configs.push((home.join(".config/git/config"), home.clone()));
        }
        for path in git_config_named_paths(configs, home_dir.as_deref()) {
            protect(path);
        }
        if let Some(home) = home {
            let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
            if under_any(&home, &writable_roots) {
                for rc in PROTECTED_RC_FILES.iter().chain(&PROTECTED_HOME_ENTRIES) {
                    protect(home.join(rc));
                }
            }
        }
        // Only what lies inside a writable root needs protecting; the rest is read-only anyway.
        protected.retain(|p| under_any(p, &writable_roots));
        git_entries.retain(|p| under_any(p, &writable_roots));
        FsPolicy {
            writable_roots,
            protected,
            git_entries,
            home: home_dir,
            unix_sockets: Vec::new(),
            private_shm: None,
            deny_write_globs: WriteGlobs::default(),
            protected_index: Default::default(),
            own_devpts: false,
            host_dirs: Vec::new(),
            own_tmp: None,
        }
    }

    /// The same policy, with the host's own directories `dirs` (see `host_dirs`) and the run's
    /// temp dir `own_tmp`. Directories that do not exist yet are named as they will be made.
    pub fn with_host_dirs(mut self, dirs: &[&Path], own_tmp: &Path) -> FsPolicy {
        for dir in dirs {
            let dir = real_or_named(dir);
            if under_any(&dir, &self.writable_roots) && !self.host_dirs.contains(&dir) {
                self.host_dirs.push(dir);
            }
        }
        self.own_tmp = Some(real_or_named(own_tmp));
        self
    }

    /// The same policy, with the caller's `denyWrite` entries: paths (absolute, or relative to each
    /// root) join the protected paths; globs are matched by the supervisor on every write. An
    /// invalid glob is the caller's error, with its text.
    pub fn with_deny_write(mut self, entries: &[String]) -> Result<FsPolicy, String> {
        let mut patterns = Vec::new();
        let mut builder = globset::GlobSetBuilder::new();
        for entry in entries {
            let absolute: Vec<PathBuf> = if Path::new(entry).is_absolute() {
                vec![PathBuf::from(entry)]
            } else {
                self.writable_roots.iter().map(|r| r.join(entry)).collect()
            };
            for p in absolute {
                if is_glob(entry) {
                    let text = p.to_string_lossy().into_owned();
                    let glob = globset::GlobBuilder::new(&text)
                        .literal_separator(true)
                        .build()
                        .map_err(|e| {
                            format!(
                                "sandbox.denyWrite has {entry:?}, which is not a valid glob: {e}"
                            )
                        })?;
                    builder.add(glob);
                    patterns.push(text);
                } else {
                    // Links resolved where the path exists, as the supervisor resolves what it checks.
                    // Outside the roots everything is read-only already (no bind is needed: the
                    // host's own files, such as its approvals file, are named for every run).
                    let p = std::fs::canonicalize(&p).unwrap_or(p);
                    if under_any(&p, &self.writable_roots) && !self.protected.contains(&p) {
                        self.protected.push(p);
                    }
                }
            }
        }
        if !patterns.is_empty() {
            let set = builder
                .build()
                .map_err(|e| format!("sandbox.denyWrite could not be compiled: {e}"))?;
            self.deny_write_globs = WriteGlobs {
                patterns,
                set: Some(set),
            };
        }
        Ok(self)
    }

    /// The same policy, with a directory of the run's standing in for `/dev/shm`.
    pub fn with_private_shm(mut self, shm: PrivateShm) -> FsPolicy {
        self.private_shm = Some(shm);
        self
    }

    /// The same policy, in a run whose `/dev/pts` is its own (see `own_devpts`).
    pub fn with_own_devpts(mut self) -> FsPolicy {
        self.own_devpts = true;
        self
    }

    /// The same policy, with `sockets` (absolute, canonical where they exist) connectable.
    pub fn with_unix_sockets(mut self, sockets: Vec<PathBuf>) -> FsPolicy {
        self.unix_sockets = sockets;
        self
    }

    /// May the run connect to the Unix socket file at `path` (absolute, links resolved)? A socket a
    /// run could have made itself (under a writable root) or one the caller named; nothing else, so a
    /// command cannot reach the host's daemons (`docker.sock`, the D-Bus system bus) through their
    /// sockets while its network is off.
    pub fn check_connect(&self, path: &Path) -> Result<(), DenyRule> {
        if under_any(path, &self.writable_roots) || under_any(path, &self.unix_sockets) {
            return Ok(());
        }
        Err(DenyRule::SocketOutside)
    }

    /// May the run create, change or remove `path`? `path` is absolute with every symbolic link
    /// resolved (see the supervisor's resolver); device files are judged by their names.
    /// The protected path `path` is on the way to, if any (`~/.local` for `~/.local/lib`): a file or
    /// a link made there, or a directory moved there, would put the protected path elsewhere (a
    /// link `.local -> x` makes `.local/lib/...` land in `x/lib`, which nothing protects).
    pub fn on_the_way_to_protected(&self, path: &Path) -> Option<&Path> {
        let at = path.as_os_str().as_encoded_bytes();
        // By bytes (a check on every creation): `p` is `path`, a `/`, then more.
        self.protected
            .iter()
            .chain(&self.git_entries)
            .chain(&self.host_dirs)
            .find(|p| {
                let p = p.as_os_str().as_encoded_bytes();
                p.len() > at.len() + 1 && p.starts_with(at) && p[at.len()] == b'/'
            })
            .map(PathBuf::as_path)
    }

    /// Whether a call may change the name or the metadata of `path`: make, remove, rename or link
    /// it, change its mode, owner, times or attributes. As `check_write`, except that the devices a
    /// run may write to are not the run's: their contents are (`> /dev/null`), their names and modes
    /// are the host's (without a mount namespace they are the host's own nodes: `chmod 600
    /// /dev/null` or a rename onto it would break every other program of the machine, and Landlock,
    /// which does not cover metadata, would not stop the supervisor making it).
    pub fn check_change(&self, path: &Path) -> Result<(), DenyRule> {
        self.check_write(path)?;
        let own_terminal = self.own_devpts
            && WRITABLE_DEVICE_DIRS
                .iter()
                .any(|d| path.starts_with(d) && path != Path::new(d));
        if is_writable_device(path) && !own_terminal && !under_any(path, &self.writable_roots) {
            return Err(DenyRule::OutsideWritableRoots);
        }
        Ok(())
    }

    /// Whether an open for writing may write to `path`'s contents (see `check_change` for the rest).
    pub fn check_write(&self, path: &Path) -> Result<(), DenyRule> {
        if let Some(p) = self.protected_index.first_containing(&self.protected, path) {
            return Err(DenyRule::Protected(p.clone()));
        }
        if let Some(g) = self.deny_write_globs.matching(path) {
            return Err(DenyRule::Protected(PathBuf::from(g)));
        }
        // The `.git` entry itself: renaming, removing or replacing it would repoint the repository.
        if let Some(p) = self.git_entries.iter().find(|p| path == p.as_path()) {
            return Err(DenyRule::Protected(p.clone()));
        }
        if let Some(d) = self.host_dirs.iter().find(|d| path.starts_with(d)) {
            let own = self
                .own_tmp
                .as_ref()
                .is_some_and(|t| path.starts_with(t) && path != t.as_path());
            if !own {
                return Err(DenyRule::Protected(d.clone()));
            }
        }
        if under_any(path, &self.writable_roots) || is_writable_device(path) {
            return Ok(());
        }
        if self
            .private_shm
            .as_ref()
            .is_some_and(|s| path.starts_with(&s.at))
        {
            return Ok(());
        }
        Err(DenyRule::OutsideWritableRoots)
    }
}

/// Directories in `root` whose `.git` is protected: the root itself, and the submodules its
/// `.gitmodules` names (a submodule's own config runs in the host's `git status` of the parent).
fn work_trees(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    // Every gitlink of the index too, named in `.gitmodules` or not: the host's `git status`
    // recurses into an embedded repository and reads its config. (An index that does not read as
    // one adds nothing here; the gate asks about every git command in such a repository.)
    if root.join(".git").is_dir() {
        for link in crate::git_layout::gitlink_paths(&root.join(".git")).unwrap_or_default() {
            // Only paths inside the root, as git itself requires of an index entry.
            if !link.components().all(|c| matches!(c, Component::Normal(_))) {
                continue;
            }
            let p = root.join(link);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    let Ok(text) = std::fs::read_to_string(root.join(".gitmodules")) else {
        return out;
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "path" {
            continue;
        }
        let rel = Path::new(value.trim());
        // Only paths inside the root, as git itself requires of a submodule.
        if rel.is_relative() && rel.components().all(|c| matches!(c, Component::Normal(_))) {
            let p = root.join(rel);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The paths git config files name as hooks or as more config, each file given with the directory
/// its relative `core.hooksPath` is taken from (the work tree; a relative `include.path` is taken
/// from the including file's directory), followed through includes a few levels deep.
fn git_config_named_paths(
    mut configs: Vec<(PathBuf, PathBuf)>,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut read: Vec<PathBuf> = Vec::new();
    let absolute = |value: &str, base: &Path| -> Option<PathBuf> {
        let p = match value.strip_prefix("~/") {
            Some(rest) => home?.join(rest),
            None => base.join(value),
        };
        Some(std::fs::canonicalize(&p).unwrap_or(p))
    };
    while let Some((file, work_tree)) = configs.pop() {
        if read.contains(&file) || read.len() >= 64 {
            continue;
        }
        read.push(file.clone());
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        for e in crate::approval::git_config::parse(&text) {
            let Some(value) = e.value.as_deref().filter(|v| !v.is_empty()) else {
                continue;
            };
            let hooks = e.section == "core" && e.key == "hookspath";
            let include = matches!(e.section.as_str(), "include" | "includeif") && e.key == "path";
            let base = if hooks { &work_tree } else { &dir };
            if !(hooks || include) {
                continue;
            }
            if let Some(p) = absolute(value, base) {
                if include {
                    configs.push((p.clone(), work_tree.clone()));
                }
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The entries of git directory `git_dir` that stay read-only: its own, those of each worktree it
/// has, and those of each submodule repository it keeps under `modules/` (nested ones included).
fn protected_in_git_dir(git_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_GIT_ENTRIES
        .iter()
        .map(|e| git_dir.join(e))
        .collect();
    if let Ok(entries) = std::fs::read_dir(git_dir.join("worktrees")) {
        for e in entries.flatten() {
            out.extend(PROTECTED_WORKTREE_ENTRIES.iter().map(|n| e.path().join(n)));
        }
    }
    for sub in crate::git_layout::submodule_git_dirs(git_dir) {
        out.extend(PROTECTED_GIT_ENTRIES.iter().map(|n| sub.join(n)));
    }
    out
}

/// `path` with its links resolved, or, where it does not exist yet, its parent's with its name.
fn real_or_named(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .unwrap_or_else(|_| normalize(parent))
            .join(name),
        _ => normalize(path),
    }
}

/// Is `path` one of `dirs` or beneath one (by whole components)?
fn under_any(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| path.starts_with(d))
}

/// Whether an open of `path` makes a new pty: the pty multiplexer, by either of its names.
pub fn is_pty_multiplexer(path: &Path) -> bool {
    path == Path::new("/dev/ptmx") || path == Path::new("/dev/pts/ptmx")
}

/// Whether the machine's pool of ptys is down to what is kept for the host. A run without a devpts
/// of its own (no mount namespace) opens the host's `/dev/ptmx`, and the pool is one for the whole
/// machine (`kernel.pty.max`): a run opening it in a loop left the host's next `openpty` failing.
/// The kernel keeps `kernel.pty.reserve` ptys of the pool for the host's own devpts against
/// containers' instances; a run sharing the host's instance is held to the same, but to at most a
/// quarter of the pool (a small `max` still leaves the run ptys). Unreadable counts (no `/proc`)
/// leave the kernel's own limit in force.
pub fn host_pty_pool_is_low() -> bool {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/pty/{name}"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    };
    let (Some(nr), Some(max)) = (read("nr"), read("max")) else {
        return false;
    };
    let kept = read("reserve").unwrap_or(0).min(max / 4);
    nr + kept >= max
}

pub fn is_writable_device(path: &Path) -> bool {
    WRITABLE_DEVICES.iter().any(|d| path == Path::new(d))
        || WRITABLE_DEVICE_DIRS
            .iter()
            .any(|d| path.starts_with(d) && path != Path::new(d))
}

/// The git directories of a root: `<root>/.git` when it is a directory, or the directory a `.git` file
/// points to (`gitdir: ...`, worktrees and submodules) together with its common directory.
fn git_dirs(root: &Path) -> Vec<PathBuf> {
    let dot_git = root.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return Vec::new();
    };
    if meta.is_dir() {
        return vec![dot_git];
    }
    let Ok(text) = std::fs::read_to_string(&dot_git) else {
        return Vec::new();
    };
    let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let git_dir = normalize(&root.join(target.trim()));
    let git_dir = std::fs::canonicalize(&git_dir).unwrap_or(git_dir);
    let mut dirs = vec![git_dir.clone()];
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        let common = normalize(&git_dir.join(common.trim()));
        dirs.push(std::fs::canonicalize(&common).unwrap_or(common));
    }
    dirs
}

/// Lexical normalisation (`.` and `..` removed) of an absolute path whose links are already resolved.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn deny_write_paths_and_globs_are_protected_in_each_root() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (a, b) = (
            std::fs::canonicalize(a.path()).unwrap(),
            std::fs::canonicalize(b.path()).unwrap(),
        );
        let p = FsPolicy::new(vec![a.clone(), b.clone()], None)
            .with_deny_write(&[".env".into(), "secrets/**".into(), "**/*.pem".into()])
            .unwrap();
        for root in [&a, &b] {
            assert_eq!(
                p.check_write(&root.join(".env")),
                Err(DenyRule::Protected(root.join(".env")))
            );
            assert!(p.check_write(&root.join("secrets/x/y")).is_err());
            assert!(p.check_write(&root.join("k.pem")).is_err());
            assert!(p.check_write(&root.join("deep/er/k.pem")).is_err());
            assert_eq!(p.check_write(&root.join("notes.txt")), Ok(()));
            assert_eq!(p.check_write(&root.join("secretsx")), Ok(()));
        }
        // A glob does not reach past its root or across a separator where it says `*`.
        let one = FsPolicy::new(vec![a.clone()], None)
            .with_deny_write(&["*.key".into()])
            .unwrap();
        assert!(one.check_write(&a.join("x.key")).is_err());
        assert_eq!(one.check_write(&a.join("sub/x.key")), Ok(()));
        assert!(FsPolicy::new(vec![a.clone()], None)
            .with_deny_write(&["[oops".into()])
            .unwrap_err()
            .contains("not a valid glob"));
    }

    #[test]
    fn tool_configs_and_shell_start_up_files_are_protected_at_every_root() {
        let a = tempfile::tempdir().unwrap();
        let a = std::fs::canonicalize(a.path()).unwrap();
        let p = FsPolicy::new(vec![a.clone()], None);
        for f in [
            ".bashrc",
            ".zshrc",
            ".profile",
            ".gitconfig",
            ".npmrc",
            ".cursor/mcp.json",
            ".yarnrc.yml",
        ] {
            assert!(p.check_write(&a.join(f)).is_err(), "{f}");
        }
        assert_eq!(p.check_write(&a.join("src/.bashrc.txt")), Ok(()));
    }

    use super::*;

    fn canon(p: &Path) -> PathBuf {
        std::fs::canonicalize(p).unwrap()
    }

    #[test]
    fn writes_inside_roots_and_devices_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let p = FsPolicy::new(vec![root.clone()], None);
        assert_eq!(p.check_write(&root.join("a/b.txt")), Ok(()));
        assert_eq!(p.check_write(&root), Ok(()));
        assert_eq!(
            p.check_write(Path::new("/etc/passwd")),
            Err(DenyRule::OutsideWritableRoots)
        );
        // A sibling whose name merely starts with the root's name is outside.
        let sibling = PathBuf::from(format!("{}-other/x", root.display()));
        assert_eq!(p.check_write(&sibling), Err(DenyRule::OutsideWritableRoots));
        assert_eq!(p.check_write(Path::new("/dev/null")), Ok(()));
        assert_eq!(p.check_write(Path::new("/dev/pts/3")), Ok(()));
        assert_eq!(
            p.check_write(Path::new("/dev/pts")),
            Err(DenyRule::OutsideWritableRoots)
        );
        assert_eq!(
            p.check_write(Path::new("/dev/sda")),
            Err(DenyRule::OutsideWritableRoots)
        );
        // A device's contents are writable, its name and metadata are not the run's.
        for device in ["/dev/null", "/dev/full", "/dev/tty", "/dev/pts/3"] {
            assert_eq!(
                p.check_change(Path::new(device)),
                Err(DenyRule::OutsideWritableRoots),
                "{device}"
            );
        }
        assert_eq!(p.check_change(&root.join("a/b.txt")), Ok(()));
        // A run's own devpts (or its own terminal) is its own; its other nodes are still the host's.
        let own = p.clone().with_own_devpts();
        assert_eq!(own.check_change(Path::new("/dev/pts/3")), Ok(()));
        assert_eq!(
            own.check_change(Path::new("/dev/null")),
            Err(DenyRule::OutsideWritableRoots)
        );
        assert_eq!(
            p.check_change(Path::new("/etc/passwd")),
            Err(DenyRule::OutsideWritableRoots)
        );
    }

    #[test]
    fn git_hooks_and_config_are_protected_even_before_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        let p = FsPolicy::new(vec![root.clone()], None);
        let git_protected: Vec<PathBuf> = p
            .protected
            .iter()
            .filter(|x| x.starts_with(root.join(".git")))
            .cloned()
            .collect();
        assert_eq!(
            git_protected,
            [
                "hooks",
                "config",
                "commondir",
                "info",
                "config.worktree",
                "remotes",
                "branches"
            ]
            .map(|e| root.join(".git").join(e))
        );
        // The `.git` entry itself stays, and its other contents are writable.
        assert_eq!(
            p.check_write(&root.join(".git")),
            Err(DenyRule::Protected(root.join(".git")))
        );
        assert_eq!(
            p.check_write(&root.join(".git/commondir")),
            Err(DenyRule::Protected(root.join(".git/commondir")))
        );
        assert_eq!(
            p.check_write(&root.join(".git/hooks/pre-commit")),
            Err(DenyRule::Protected(root.join(".git/hooks")))
        );
        assert_eq!(
            p.check_write(&root.join(".git/config")),
            Err(DenyRule::Protected(root.join(".git/config")))
        );
        // The rest of the git directory stays writable: commits must work.
        assert_eq!(p.check_write(&root.join(".git/index.lock")), Ok(()));
        assert_eq!(p.check_write(&root.join(".git/objects/ab/cd")), Ok(()));
    }

    #[test]
    fn a_gitdir_file_protects_the_directory_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = canon(dir.path());
        let real = base.join("repo.git/worktrees/wt");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("commondir"), "../..\n").unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", real.display())).unwrap();
        let p = FsPolicy::new(vec![wt, base.clone()], None);
        assert!(p.protected.contains(&real.join("hooks")), "{p:?}");
        assert!(p.protected.contains(&base.join("repo.git/config")), "{p:?}");
    }

    #[test]
    fn what_editors_agents_and_hooks_run_is_protected_at_the_top_of_every_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let p = FsPolicy::new(vec![root.clone()], None);
        for entry in [
            ".claude/settings.json",
            ".mcp.json",
            ".vscode/tasks.json",
            ".envrc",
            ".husky/pre-commit",
            ".pre-commit-config.yaml",
            // What an editor opening the project reads (outside round six: a `.vimrc` ran).
            ".exrc",
            ".vimrc",
            ".gvimrc",
            ".nvimrc",
            "_vimrc",
            ".dir-locals.el",
        ] {
            assert!(
                matches!(
                    p.check_write(&root.join(entry)),
                    Err(DenyRule::Protected(_))
                ),
                "{entry}"
            );
        }
        // Deeper in the tree they are ordinary files of the project.
        assert_eq!(p.check_write(&root.join("docs/.vscode/x")), Ok(()));
        assert_eq!(p.check_write(&root.join("src/main.rs")), Ok(()));
    }

    #[test]
    fn worktrees_submodules_and_gitdir_files_are_protected() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("worktrees/wt")).unwrap();
        std::fs::create_dir_all(git.join("modules/libs/a/modules/b")).unwrap();
        std::fs::write(git.join("modules/libs/a/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("modules/libs/a/modules/b/HEAD"), "x\n").unwrap();
        std::fs::create_dir_all(root.join("libs/a")).unwrap();
        std::fs::write(
            root.join("libs/a/.git"),
            format!("gitdir: {}\n", git.join("modules/libs/a").display()),
        )
        .unwrap();
        std::fs::write(
            root.join(".gitmodules"),
            "[submodule \"a\"]\n\tpath = libs/a\n\turl = ../a\n[submodule \"x\"]\n\tpath = ../escape\n",
        )
        .unwrap();
        let p = FsPolicy::new(vec![root.clone()], None);
        for protected in [
            git.join("worktrees/wt/commondir"),
            git.join("worktrees/wt/gitdir"),
            git.join("modules/libs/a/config"),
            git.join("modules/libs/a/hooks/post-checkout"),
            git.join("modules/libs/a/modules/b/config"),
            root.join("libs/a/.git"),
        ] {
            assert!(
                matches!(p.check_write(&protected), Err(DenyRule::Protected(_))),
                "{}",
                protected.display()
            );
        }
        assert_eq!(p.check_write(&git.join("modules/libs/a/index")), Ok(()));
        assert_eq!(p.check_write(&root.join("libs/a/file.c")), Ok(()));
        assert_eq!(p.git_entries, vec![git.clone(), root.join("libs/a/.git")]);
    }

    #[test]
    fn an_embedded_repositorys_config_and_hooks_are_protected_without_gitmodules() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let git = |args: &[&str]| crate::git_layout::git_in(&root, args);
        if !git(&["init", "-q"]) {
            return;
        }
        std::fs::create_dir_all(root.join("vendor/lib/.git/hooks")).unwrap();
        std::fs::write(root.join("vendor/lib/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let gitlink = format!("160000,{},vendor/lib", "1".repeat(40));
        assert!(git(&["update-index", "--add", "--cacheinfo", &gitlink]));
        let p = FsPolicy::new(vec![root.clone()], None);
        for protected in [
            root.join("vendor/lib/.git/config"),
            root.join("vendor/lib/.git/hooks/pre-commit"),
        ] {
            assert!(
                matches!(p.check_write(&protected), Err(DenyRule::Protected(_))),
                "{}",
                protected.display()
            );
        }
        assert_eq!(p.check_write(&root.join("vendor/lib/src.c")), Ok(()));
    }

    #[test]
    fn rc_files_are_protected_when_a_root_holds_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = canon(dir.path());
        let p = FsPolicy::new(vec![home.clone()], Some(&home));
        assert_eq!(
            p.check_write(&home.join(".bashrc")),
            Err(DenyRule::Protected(home.join(".bashrc")))
        );
        assert_eq!(p.check_write(&home.join("notes.txt")), Ok(()));
        for entry in [
            ".gitconfig",
            ".ssh/config",
            ".config/git/config",
            ".npmrc",
            ".bash_aliases",
            ".claude.json",
            ".config/fish/config.fish",
            ".local/bin/git",
        ] {
            assert!(
                matches!(
                    p.check_write(&home.join(entry)),
                    Err(DenyRule::Protected(_))
                ),
                "{entry}"
            );
        }
        // A root elsewhere leaves home's files alone (they are outside the roots anyway).
        let other = tempfile::tempdir().unwrap();
        let p = FsPolicy::new(vec![canon(other.path())], Some(&home));
        assert!(p.protected.iter().all(|x| !x.starts_with(&home)));
    }

    #[test]
    fn sockets_connect_inside_the_roots_and_where_the_caller_allows() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let p = FsPolicy::new(vec![root.clone()], None)
            .with_unix_sockets(vec![PathBuf::from("/run/user/0/ssh-agent.sock")]);
        assert_eq!(p.check_connect(&root.join("dev.sock")), Ok(()));
        assert_eq!(
            p.check_connect(Path::new("/run/user/0/ssh-agent.sock")),
            Ok(())
        );
        assert_eq!(
            p.check_connect(Path::new("/var/run/docker.sock")),
            Err(DenyRule::SocketOutside)
        );
        // Device names that are writable are not sockets to connect to.
        assert_eq!(
            p.check_connect(Path::new("/dev/null")),
            Err(DenyRule::SocketOutside)
        );
        assert_eq!(
            DenyRule::SocketOutside.describe(),
            "outside the writable roots and unixSockets"
        );
    }

    #[test]
    fn dev_shm_is_writable_only_when_the_run_has_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let root = canon(dir.path());
        let p = FsPolicy::new(vec![root.clone()], None);
        let shm = Path::new("/dev/shm/sem.mp-1");
        assert_eq!(p.check_write(shm), Err(DenyRule::OutsideWritableRoots));
        let p = p.with_private_shm(PrivateShm {
            at: PathBuf::from(SHM),
            backing: root.join(".dev-shm"),
        });
        assert_eq!(p.check_write(shm), Ok(()));
        assert_eq!(
            p.check_write(Path::new("/dev/shmx")),
            Err(DenyRule::OutsideWritableRoots)
        );
    }

    #[test]
    fn the_hosts_own_directories_in_a_root_are_not_the_runs_but_its_temp_dir_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let base = root.join("agent-exec-sandbox-0");
        let own = base.join("run-1");
        std::fs::create_dir_all(&own).unwrap();
        // The log directory is not made yet: named as it will be.
        let logs = root.join("agent-exec-0");
        let p = FsPolicy::new(vec![root.clone(), own.clone()], None)
            .with_host_dirs(&[&base, &logs, Path::new("/elsewhere/logs")], &own);
        assert_eq!(p.host_dirs, vec![base.clone(), logs.clone()]);
        for refused in [
            base.clone(),
            base.join("run-2/secret"),
            base.join("new"),
            logs.clone(),
            logs.join("run-9-x.log"),
            own.clone(),
        ] {
            assert!(
                matches!(p.check_change(&refused), Err(DenyRule::Protected(_))),
                "{refused:?}"
            );
        }
        assert_eq!(p.check_write(&own.join("f")), Ok(()));
        assert_eq!(p.check_change(&own.join("d/e")), Ok(()));
        assert_eq!(p.check_write(&root.join("other")), Ok(()));
        // A link where the log directory's parent would be is on the way to it.
        let deep = root.join("a/agent-exec-0");
        let q = FsPolicy::new(vec![root.clone()], None).with_host_dirs(&[&deep], &own);
        assert_eq!(
            q.on_the_way_to_protected(&root.join("a")),
            Some(deep.as_path())
        );
    }

    #[test]
    fn normalize_removes_dots() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
    }
}

//! Options that make a program run a command or load code named in its own arguments: `git grep -O
//! CMD` (the pager it opens the matches in), `git fetch --upload-pack=CMD`, `sort
//! --compress-program=PROG`, `gcc -wrapper sh,-c,...`, `npx -c CMD`, `java -XX:OnError=CMD`,
//! `rsync -e CMD`. A command using one runs what the analyzer does not see: it is inexact (never let
//! through by an allow rule, an allowlist entry or analysis, asked whenever a deny rule exists).
//!
//! One table, read the way each program reads its options: long ones by any prefix that is unique
//! among its own (getopt_long; four characters or more, so `--co` is not taken for every `--c...`),
//! short ones as a letter anywhere in a cluster (`-iO`; a value that happens to hold the letter
//! counts too, which asks where it need not, never the other way round), and word prefixes as
//! written (`-XX:OnError=`, `-wrapper`, less's `+`).

/// One program's (or subcommand's) options that run something.
struct CommandOptions {
    /// The program, by any name `program_names` gives it.
    programs: &'static [&'static str],
    /// The subcommand they belong to (`git fetch`, `npm exec`), or empty for the program's own.
    subcommands: &'static [&'static str],
    /// Long options (`--upload-pack`), taken by any prefix of four characters or more.
    long: &'static [&'static str],
    /// Short option letters, anywhere in a cluster.
    short: &'static [char],
    /// Words starting so, exactly as written.
    prefix: &'static [&'static str],
    /// What the option does, for the reason a person reads.
    runs: &'static str,
}

const GCC: &[&str] = &[
    "gcc", "cc", "c++", "g++", "clang", "clang++", "cpp", "gfortran", "c89", "c99",
];

/// The JDK's tools besides `java` (its own options are a row of their own).
const JDK_TOOLS: &[&str] = &[
    "javac",
    "javap",
    "javadoc",
    "jar",
    "jarsigner",
    "keytool",
    "jdeps",
    "jlink",
    "jmod",
    "jpackage",
    "jdeprscan",
    "jps",
    "jstat",
    "jstatd",
    "jinfo",
    "jmap",
    "jstack",
    "jfr",
    "jconsole",
    "jhsdb",
    "jimage",
    "serialver",
    "rmiregistry",
    "jwebserver",
    "native2ascii",
];

/// Programs that read options from a response file (`@file`) beside gcc, rustc and the JDK's:
/// binutils and LLVM's tools (by any name `program_names` gives them).
const RESPONSE_FILE_READERS: &[&str] = &[
    "nm",
    "ar",
    "ranlib",
    "objdump",
    "objcopy",
    "strip",
    "readelf",
    "size",
    "strings",
    "addr2line",
    "c++filt",
    "elfedit",
    "gprof",
    "as",
    "ld",
    "ld.bfd",
    "ld.gold",
    "gold",
    "dwp",
    "gcc-nm",
    "gcc-ar",
    "gcc-ranlib",
    "opt",
    "llc",
    "lld",
    "ld.lld",
    "ld64.lld",
    "wasm-ld",
    "llvm-nm",
    "llvm-ar",
    "llvm-ranlib",
    "llvm-objdump",
    "llvm-objcopy",
    "llvm-readelf",
    "llvm-readobj",
    "llvm-size",
    "llvm-strings",
    "llvm-strip",
    "llvm-dis",
    "llvm-as",
    "llvm-link",
    "llvm-mc",
    "llvm-lto",
    "llvm-lto2",
    "llvm-dwarfdump",
    "llvm-symbolizer",
    "llvm-cov",
    "llvm-profdata",
    "llvm-cxxfilt",
    "llvm-config",
    "llvm-tblgen",
    "llvm-extract",
    "llvm-lib",
    "llvm-dlltool",
    "llvm-rc",
    "llvm-ml",
];

const TABLE: &[CommandOptions] = &[
    CommandOptions {
        programs: &["git"],
        subcommands: &["grep"],
        long: &["--open-files-in-pager"],
        short: &['O'],
        prefix: &[],
        runs: "opens the matches with the command it is given",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["ls-remote", "clone"],
        long: &["--upload-pack"],
        short: &['u'],
        prefix: &[],
        runs: "runs the command it is given as the remote's upload-pack",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["fetch", "pull", "fetch-pack"],
        long: &["--upload-pack", "--exec"],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given as the remote's upload-pack",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["push", "send-pack"],
        long: &["--receive-pack", "--exec"],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given as the remote's receive-pack",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["archive"],
        long: &["--exec"],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given as the remote's upload-archive",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["clone"],
        long: &["--config", "--template"],
        short: &['c'],
        prefix: &[],
        runs: "sets the new repository's configuration or hooks, which the checkout then runs",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["daemon"],
        long: &["--access-hook"],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given for every request",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["send-email"],
        long: &[
            "--sendmail-cmd",
            "--smtp-server",
            "--to-cmd",
            "--cc-cmd",
            "--header-cmd",
        ],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["instaweb"],
        long: &["--httpd", "--browser"],
        short: &['d', 'b'],
        prefix: &[],
        runs: "runs the web server or browser it is given",
    },
    CommandOptions {
        programs: &["sort"],
        subcommands: &[],
        long: &["--compress-program"],
        short: &[],
        prefix: &[],
        runs: "pipes its temporary files through the program it is given",
    },
    CommandOptions {
        programs: &["npx"],
        subcommands: &[],
        long: &["--call"],
        short: &['c'],
        prefix: &[],
        runs: "runs the shell command it is given",
    },
    CommandOptions {
        programs: &["npm", "pnpm"],
        subcommands: &["exec", "x", "dlx"],
        long: &["--call"],
        short: &['c'],
        prefix: &[],
        runs: "runs the shell command it is given",
    },
    CommandOptions {
        programs: GCC,
        subcommands: &[],
        // The driver's long aliases (outside round eight: `--prefix` is `-B`, `--for-linker` is
        // `-Xlinker`), by any abbreviation the driver takes.
        long: &["--specs", "--prefix", "--for-linker", "--for-assembler"],
        short: &[],
        prefix: &[
            "-wrapper", "-B", "-fplugin", "-specs", "--specs", "@", "-Wl,", "-Xlinker", "-Wp,",
            "-Xpreprocessor", "-Wa,", "-Xassembler",
        ],
        runs: "runs or loads the program it is given (a wrapper, the tools' directory, a plugin, a spec file, options from a file, the linker's plugins)",
    },
    CommandOptions {
        programs: &["java"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &[
            "-XX:",
            "-agentpath",
            "-agentlib",
            "-javaagent",
            "-Xrun",
            "-Xlog",
            "-Xshare",
            "-Xbootclasspath",
            "--patch-module",
            "--upgrade-module-path",
            "-D",
            "@",
        ],
        runs: "runs the command, loads the agent or class, or writes the file it is given (JVM options: -XX:OnError, -Djava.system.class.loader, -Xlog:...:file=)",
    },
    // Outside round seven: the JDK's other tools hand `-J` options to their JVM (`javap
    // -J-javaagent:a.jar` ran the agent), read options from `@file`, and load providers,
    // processors, doclets and plugins named in their options.
    CommandOptions {
        programs: JDK_TOOLS,
        subcommands: &[],
        long: &[
            "--processor-path",
            "--processor-module-path",
            "--doclet-path",
            "--taglet-path",
            // Another JDK's image: its lib/jrt-fs.jar is loaded.
            "--system",
        ],
        short: &[],
        prefix: &[
            "-J",
            "@",
            "-processor",
            "-Xplugin",
            "-doclet",
            "-taglet",
            "-providerpath",
            "-providerPath",
            "-providerclass",
            "-providerClass",
            "-providerarg",
            "-providerArg",
            "-addprovider",
            "-conf",
            "-pluginpath",
        ],
        runs: "hands its JVM the option, or loads the code (a provider, processor, doclet, plugin), or reads the options it is given",
    },
    // Binutils' and LLVM's tools read more options from `@file` (`nm @args` loaded `--plugin`).
    CommandOptions {
        programs: RESPONSE_FILE_READERS,
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["@"],
        runs: "reads more options from the file it names (`--plugin`, `-load` among them)",
    },
    CommandOptions {
        programs: &["rsync"],
        subcommands: &[],
        long: &["--rsh", "--rsync-path"],
        short: &['e'],
        prefix: &[],
        runs: "runs the remote shell or program it is given",
    },
    CommandOptions {
        programs: &["scp", "sftp"],
        subcommands: &[],
        long: &[],
        short: &['S', 'o', 'F', 'D'],
        prefix: &[],
        runs: "runs the program, or the ssh options (ProxyCommand), it is given",
    },
    CommandOptions {
        programs: &["wget"],
        subcommands: &[],
        long: &["--use-askpass", "--config"],
        short: &[],
        prefix: &[],
        runs: "runs the program it is given for the password",
    },
    CommandOptions {
        programs: &["apt-get", "apt", "apt-cache", "aptitude"],
        subcommands: &[],
        long: &["--option", "--config-file"],
        short: &['o', 'c'],
        prefix: &[],
        runs: "sets configuration that runs commands (APT::Update::Pre-Invoke)",
    },
    CommandOptions {
        programs: &["less"],
        subcommands: &[],
        long: &["--lesskey-file", "--lesskey-src"],
        short: &['k'],
        prefix: &["+"],
        runs: "runs the commands it is given at start (`!` runs a shell command)",
    },
    CommandOptions {
        programs: &["psql"],
        subcommands: &[],
        long: &["--command", "--file"],
        short: &['c', 'f'],
        prefix: &[],
        runs: "runs its meta-commands (`\\!` runs a shell command) and SQL (`COPY ... PROGRAM`)",
    },
    CommandOptions {
        programs: &["mysql", "mariadb"],
        subcommands: &[],
        long: &["--execute"],
        short: &['e'],
        prefix: &[],
        runs: "runs its commands (`system` runs a shell command)",
    },
    CommandOptions {
        programs: &["sqlite3"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-cmd", "-init"],
        runs: "runs its dot-commands (`.shell` runs a shell command)",
    },
    CommandOptions {
        programs: &["diff3", "sdiff"],
        subcommands: &[],
        long: &["--diff-program"],
        short: &[],
        prefix: &[],
        runs: "runs the diff program it is given",
    },
    CommandOptions {
        programs: &["split", "gsplit"],
        subcommands: &[],
        long: &["--filter"],
        short: &[],
        prefix: &[],
        runs: "pipes each piece through the shell command it is given",
    },
    CommandOptions {
        programs: &["wget"],
        subcommands: &[],
        long: &["--execute"],
        short: &['e'],
        prefix: &[],
        runs: "runs wgetrc commands (`use_askpass` runs a program)",
    },
    CommandOptions {
        programs: &["dpkg"],
        subcommands: &[],
        long: &[
            "--pre-invoke",
            "--post-invoke",
            "--status-logger",
            "--admindir",
            "--root",
            "--instdir",
        ],
        short: &[],
        prefix: &[],
        runs: "runs the command it is given, or maintainer scripts from another root",
    },
    CommandOptions {
        programs: &["rustup"],
        subcommands: &["run"],
        long: &[],
        short: &[],
        prefix: &[""],
        runs: "runs the command it is given with a toolchain",
    },
    CommandOptions {
        programs: &["rustup"],
        subcommands: &["toolchain"],
        long: &[],
        short: &[],
        prefix: &["link"],
        runs: "makes a directory of programs a toolchain, which every later cargo and rustc runs",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["merge", "pull", "rebase"],
        long: &["--strategy"],
        short: &['s'],
        prefix: &[],
        runs: "runs the merge strategy program it names (git-merge-NAME, found on PATH)",
    },
    // (Their `-s` is `--signoff`.)
    CommandOptions {
        programs: &["git"],
        subcommands: &["cherry-pick", "revert"],
        long: &["--strategy"],
        short: &[],
        prefix: &[],
        runs: "runs the merge strategy program it names (git-merge-NAME, found on PATH)",
    },
    CommandOptions {
        programs: &["gprofng"],
        subcommands: &["collect"],
        long: &[],
        short: &[],
        prefix: &[""],
        runs: "runs the program it is given",
    },
    CommandOptions {
        programs: &["pip", "pip3"],
        subcommands: &[],
        long: &["--python"],
        short: &[],
        prefix: &[],
        runs: "runs itself again under the interpreter it is given",
    },
    CommandOptions {
        programs: &["gpg-zip"],
        subcommands: &[],
        long: &["--tar", "--gpg", "--tar-args", "--gpg-args"],
        short: &[],
        prefix: &[],
        runs: "runs the tar or gpg program it is given",
    },
    CommandOptions {
        programs: &["rpcgen"],
        subcommands: &[],
        long: &[],
        short: &['Y'],
        prefix: &[],
        runs: "runs the preprocessor of the directory it is given",
    },
    CommandOptions {
        programs: &["rustc", "rustdoc"],
        subcommands: &[],
        long: &[
            "--codegen",
            "--test-builder",
            "--test-builder-wrapper",
            "--runtool",
            "--runtool-arg",
        ],
        short: &[],
        prefix: &["-C", "-Z", "@"],
        runs: "runs the linker it is given (`-C linker=`) or reads more options from a file",
    },
    CommandOptions {
        programs: &["pip", "pip3"],
        subcommands: &["config"],
        long: &["--editor"],
        short: &[],
        prefix: &["edit"],
        runs: "opens the configuration in the editor it is given",
    },
    CommandOptions {
        programs: &["man"],
        subcommands: &[],
        long: &["--pager", "--html", "--preprocessor"],
        short: &['P', 'H', 'p'],
        prefix: &[],
        runs: "runs the program it names as the pager, browser or preprocessor",
    },
    CommandOptions {
        programs: &["openssl"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-engine", "-pre", "-post", "-provider"],
        runs: "loads the engine or provider it is given (a shared library's code)",
    },
    CommandOptions {
        programs: &["openssl"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-config"],
        runs: "reads the configuration it is given, which loads the providers and engines it names (a shared library's code)",
    },
    CommandOptions {
        programs: &["jshell"],
        subcommands: &[],
        long: &["--startup"],
        short: &[],
        prefix: &[],
        runs: "runs the startup script it is given",
    },
    CommandOptions {
        programs: &["groff", "nroff", "troff", "pic", "gpic", "eqn", "tbl", "grog"],
        subcommands: &[],
        long: &[],
        short: &['U'],
        prefix: &[],
        runs: "(unsafe mode) runs the shell commands its input holds (`.sy`, `sh`)",
    },
    CommandOptions {
        programs: &["npm", "pnpm", "yarn"],
        subcommands: &["explore"],
        long: &[],
        short: &[],
        prefix: &["--", ""],
        runs: "runs a shell command in the package's directory",
    },
    CommandOptions {
        programs: &["npm", "pnpm", "yarn"],
        subcommands: &["config"],
        long: &[],
        short: &[],
        prefix: &["set", "edit"],
        runs: "changes what later commands of it run (`script-shell`, `node-options`)",
    },
    CommandOptions {
        programs: &["cmake"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-E", "-P"],
        runs: "runs the command or script it is given",
    },
    // Options that load code (a shared library, a plugin, a config naming a program): an
    // outside round, 2026-11-27, ran each one's payload.
    CommandOptions {
        programs: &["curl"],
        subcommands: &[],
        long: &["--engine", "--config"],
        short: &['K'],
        prefix: &[],
        runs: "loads the crypto engine (a shared library) or the config file (which can name one) it is given",
    },
    CommandOptions {
        programs: &["man"],
        subcommands: &[],
        long: &["--config-file"],
        short: &['C'],
        prefix: &[],
        runs: "reads the man configuration it is given (`DEFINE troff` names the program it runs)",
    },
    CommandOptions {
        programs: &[
            "nm", "ar", "ranlib", "gcc-nm", "gcc-ar", "gcc-ranlib", "objcopy", "objdump", "ld",
            "ld.bfd", "ld.gold", "ld.lld", "llvm-nm", "llvm-ar", "llvm-ranlib",
        ],
        subcommands: &[],
        long: &["--plugin"],
        short: &[],
        prefix: &["-plugin"],
        runs: "loads the plugin (a shared library) it is given",
    },
    CommandOptions {
        programs: &["opt", "llc", "lli", "clang", "clang++", "bugpoint", "llvm-lto", "llvm-lto2"],
        subcommands: &[],
        long: &["--load", "--load-pass-plugin", "--pass-plugin"],
        short: &[],
        prefix: &["-load", "-fpass-plugin", "-Xclang"],
        runs: "loads the plugin (a shared library) it is given",
    },
    CommandOptions {
        programs: &["ssh-keygen"],
        subcommands: &[],
        long: &[],
        short: &['D', 'w'],
        prefix: &[],
        runs: "loads the PKCS#11 or security key provider (a shared library) it is given",
    },
    CommandOptions {
        programs: &["ssh-add"],
        subcommands: &[],
        long: &[],
        short: &['s', 'S'],
        prefix: &[],
        runs: "loads the PKCS#11 or security key provider (a shared library) it is given",
    },
    CommandOptions {
        programs: &["kubectl", "oc", "helm"],
        subcommands: &[],
        long: &["--kubeconfig"],
        short: &[],
        prefix: &[],
        runs: "reads the kubeconfig it is given (a user's `exec` entry names a program it runs)",
    },
    CommandOptions {
        programs: &["gpg", "gpg2", "gpgv", "gpgsm"],
        subcommands: &[],
        long: &[
            "--agent-program",
            "--dirmngr-program",
            "--keyboxd-program",
            "--photo-viewer",
            "--exec-path",
            "--options",
            "--homedir",
        ],
        short: &[],
        prefix: &[],
        runs: "runs the helper program it is given, or reads options that name one",
    },
    CommandOptions {
        programs: &["gpg-connect-agent"],
        subcommands: &[],
        long: &["--exec", "--run", "--agent-program", "--dirmngr-program", "--homedir"],
        short: &['E', 'r'],
        prefix: &[],
        runs: "runs the program or the command file it is given",
    },
    CommandOptions {
        programs: &["gpgtar"],
        subcommands: &[],
        long: &["--gpg"],
        short: &[],
        prefix: &[],
        runs: "runs the gpg program it is given",
    },
    CommandOptions {
        programs: &["dpkg-architecture"],
        subcommands: &[],
        long: &["--command"],
        short: &['c'],
        prefix: &[],
        runs: "runs the command it is given",
    },
    CommandOptions {
        programs: &["prove"],
        subcommands: &[],
        // (Outside round eleven: `--rc` names a file of options, `--exec` among them.)
        long: &["--exec", "--rc", "--harness", "--source", "--formatter", "--plugin"],
        short: &['e', 'P', 'M', 'I'],
        prefix: &[],
        runs: "runs each test with the program it is given",
    },
    CommandOptions {
        programs: &["pygmentize"],
        subcommands: &[],
        long: &[],
        // (`-o` writes the file it is given: a heredoc through `-f null` lands unchanged.)
        short: &['x', 'o'],
        prefix: &[],
        runs: "loads a lexer or formatter from the Python file it is given",
    },
    CommandOptions {
        programs: &["perldoc"],
        subcommands: &[],
        long: &[],
        // (`-n` is the program run in nroff's place, `-d` an output file, `-o` a formatter.)
        short: &['M', 'n', 'd', 'o'],
        prefix: &[],
        runs: "loads the formatter module it is given",
    },
    // Options that make a command that reads write a file instead (any file, with content the
    // command line chooses: a later `npm test` runs a `package.json` written so, and `python3`
    // a `.pth` file): `Bash(git log:*)` let `git log --output=package.json` through.
    // Every subcommand: the revision and diff options that take `--output` are parsed by many
    // (`shortlog`, `blame`, `annotate` and `rev-list` wrote or emptied a file in a second round).
    CommandOptions {
        programs: &["git"],
        subcommands: &[],
        long: &["--output", "--output-directory"],
        short: &[],
        prefix: &[],
        runs: "writes the file it is given",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["format-patch", "archive"],
        long: &["--output"],
        short: &['o'],
        prefix: &[],
        runs: "writes the file or directory it is given",
    },
    CommandOptions {
        programs: &["git"],
        subcommands: &["bundle"],
        long: &[],
        short: &[],
        prefix: &["create"],
        runs: "writes the bundle file it is given",
    },
    CommandOptions {
        programs: &["sort"],
        subcommands: &[],
        long: &["--output"],
        short: &['o'],
        prefix: &[],
        runs: "writes the file it is given",
    },
    CommandOptions {
        programs: &["find"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-fprint", "-fls"],
        runs: "writes the file it is given",
    },
    CommandOptions {
        programs: &["tar", "gtar", "bsdtar"],
        subcommands: &[],
        long: &["--index-file", "--volno-file"],
        short: &[],
        prefix: &[],
        runs: "writes its listing (names the archive chooses) to the file it is given",
    },
    CommandOptions {
        programs: &["less"],
        subcommands: &[],
        long: &["--log-file", "--LOG-FILE"],
        short: &['o', 'O'],
        prefix: &[],
        runs: "copies its input to the file it is given",
    },
    CommandOptions {
        programs: &["yq", "tomlq", "xq", "xq-python"],
        subcommands: &[],
        long: &["--inplace", "--in-place", "--split-exp"],
        short: &['i'],
        prefix: &[],
        runs: "rewrites the file it is given",
    },
    // curl writes to standard output unless told otherwise (wget writes files by design: a rule on
    // wget allows its downloads).
    CommandOptions {
        programs: &["curl"],
        subcommands: &[],
        long: &[
            "--output",
            "--remote-name",
            "--remote-name-all",
            "--output-dir",
            "--dump-header",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
            "--stderr",
            "--create-dirs",
        ],
        short: &['o', 'O', 'D', 'c', 'J'],
        prefix: &[],
        runs: "writes the file it is given",
    },
    // Outside round six: an upload to a `file:` URL writes that file, with the content of the file
    // (or standard input) it uploads.
    CommandOptions {
        programs: &["curl"],
        subcommands: &[],
        long: &["--upload-file"],
        short: &['T'],
        prefix: &[],
        runs: "uploads the file it is given, and to a file: URL that writes any local file",
    },
    // pip's general options, in every subcommand (`pip show --log f` appends text the line chose).
    CommandOptions {
        programs: &["pip", "pip3"],
        subcommands: &[],
        long: &["--log", "--log-file", "--local-log", "--cache-dir", "--report"],
        short: &[],
        prefix: &[],
        runs: "writes (appends to) the file or directory it is given",
    },
    // Outside round eleven: perl's module and library options run code at compile time (`perl -c
    // -M'strict;BEGIN{...}'` under `Bash(perl -c:*)`), cpan's `-j` loads a config of Perl code,
    // cfn-lint's `-a` imports rule files, and node's preloads, loaders and file writers.
    CommandOptions {
        programs: &["perl"],
        subcommands: &[],
        long: &[],
        short: &[],
        prefix: &["-M", "-m", "-I", "-d"],
        runs: "loads the module, library path or debugger it is given (code run at compile time)",
    },
    CommandOptions {
        programs: &["cpan"],
        subcommands: &[],
        long: &[],
        short: &['j'],
        prefix: &[],
        runs: "loads the configuration file (Perl code) it is given",
    },
    CommandOptions {
        programs: &["cfn-lint"],
        subcommands: &[],
        long: &["--append-rules", "--output-file", "--override-spec", "--registry-schemas"],
        short: &['a'],
        prefix: &[],
        runs: "imports the rule files, or writes the file, it is given",
    },
    CommandOptions {
        programs: &["node", "nodejs"],
        subcommands: &[],
        long: &[
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "--env-file",
            "--env-file-if-exists",
            "--redirect-code-traces-to",
            "--cpu-prof-dir",
            "--heap-prof-dir",
            "--diagnostic-dir",
            "--report-dir",
            "--report-directory",
            "--test-reporter-destination",
            "--experimental-policy",
            "--snapshot-blob",
        ],
        short: &['r'],
        prefix: &[],
        runs: "loads the code, or writes the file, it is given (a preload, a loader, an environment file, a trace or profile)",
    },
    // cargo's own arguments after `--` go to rustc (clippy, rustc) or rustdoc.
    CommandOptions {
        programs: &["cargo"],
        subcommands: &["clippy", "rustc", "rustdoc"],
        long: &["--codegen", "--test-builder", "--test-builder-wrapper", "--runtool"],
        short: &[],
        prefix: &["-C", "-Z", "@"],
        runs: "hands rustc or rustdoc the linker or program (or options from a file) it is given",
    },
    CommandOptions {
        programs: &["gh"],
        subcommands: &["alias"],
        long: &["--shell"],
        short: &['s'],
        prefix: &[],
        runs: "makes an alias that runs a shell command",
    },
    CommandOptions {
        programs: &["gh"],
        subcommands: &["extension", "ext", "extensions"],
        long: &[],
        short: &[],
        prefix: &["exec", "install"],
        runs: "runs (or installs) an extension, a program of its own",
    },
    // Reading tools with an output option of their own (outside round seven: `shuf -o`,
    // `iconv -o`), and kubectl's profile and cache (an existing file truncated).
    CommandOptions {
        programs: &[
            "shuf", "iconv", "sdiff", "zstd", "unzstd", "zstdcat", "msgcat", "msguniq", "msgconv",
            "msggrep", "msgattrib", "msgcomm", "msgen", "msgmerge", "msginit", "msgfmt",
            "msgunfmt", "xgettext", "ptx",
        ],
        subcommands: &[],
        long: &["--output", "--output-file", "--output-dir"],
        short: &['o', 'G'],
        prefix: &[],
        runs: "writes the file it is given (ptx -G takes its second operand for the output)",
    },
    // Outside round nine: kustomize runs helm (`--helm-command`), or the exec functions its
    // kustomization names, when told to; and writes where `-o` says.
    CommandOptions {
        programs: &["kubectl", "kustomize"],
        subcommands: &[],
        long: &[
            "--enable-helm",
            "--helm-command",
            "--enable-exec",
            "--enable-alpha-plugins",
            "--enable-star",
        ],
        short: &[],
        prefix: &[],
        runs: "runs helm or the functions a kustomization names",
    },
    CommandOptions {
        programs: &["kubectl"],
        subcommands: &["kustomize"],
        long: &["--output"],
        short: &['o'],
        prefix: &[],
        runs: "writes the file it is given",
    },
    CommandOptions {
        programs: &["kubectl"],
        subcommands: &[],
        long: &["--profile-output", "--cache-dir"],
        short: &[],
        prefix: &[],
        runs: "writes the profile or cache to the file or directory it is given",
    },
    CommandOptions {
        programs: &["kubectl"],
        subcommands: &[],
        long: &["--log-file", "--log-dir"],
        short: &[],
        prefix: &[],
        runs: "writes its log to the file or directory it is given",
    },
];

/// git's own options that take a value as the next word.
const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--list-cmds",
];

/// The subcommand of `args` (a program's arguments), skipping the program's own options: git's
/// (some take a value), or any leading options for the others.
pub(crate) fn subcommand<'a>(program: &str, args: &'a [String]) -> Option<(usize, &'a str)> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') {
            return Some((i, a.as_str()));
        }
        i += if program == "git" && GIT_VALUED.contains(&a.as_str()) {
            2
        } else {
            1
        };
    }
    None
}

/// Does the table know program `name`'s options that run commands (so its other arguments are
/// its own: messages, patterns, file names)?
pub fn knows(name: &str) -> bool {
    name == "sqlite3" || TABLE.iter().any(|e| e.programs.contains(&name))
}

/// Why `argv` (a program known as `names`) runs a command named in its arguments, if one of the
/// table's options is there (before `--`), or git is given an `ext::` transport (a command line).
/// Whether git's subcommand `sub` has options that run a command (this table's), or runs a command or
/// hooks its arguments name (`git_runs`, and the ones `dispatch` reads: `difftool -x`, `rebase -x`,
/// `bisect run`, `submodule foreach`, `filter-branch`).
pub fn git_subcommand_runs(sub: &str) -> bool {
    TABLE
        .iter()
        .any(|e| e.programs.contains(&"git") && e.subcommands.contains(&sub))
        || sub.starts_with("remote-")
        || matches!(
            sub,
            "push"
                | "send-pack"
                | "archive"
                | "for-each-repo"
                | "difftool"
                | "mergetool"
                | "rebase"
                | "bisect"
                | "submodule"
                | "filter-branch"
                | "config"
                | "var"
        )
}

/// Whether a program of `names` has options that run a command (this table's, git's, sqlite3's,
/// a compiler's): a word bash may expand into an option (`{-exec,cmd}`, a file named
/// `--compress-program=sh` matched by `*`) is then one of them as far as anyone can tell.
pub fn has_running_options(names: &[String]) -> bool {
    names.iter().any(|n| {
        is_compiler(n)
            || matches!(n.as_str(), "git" | "sqlite3")
            || TABLE.iter().any(|e| e.programs.contains(&n.as_str()))
    })
}

pub fn runs(names: &[String], argv: &[String]) -> Option<String> {
    let args = argv.get(1..).unwrap_or(&[]);
    // A compiler by any of its names (`gcc-12`, `c99-gcc`, `x86_64-linux-gnu-gcc-12`, `clang-14`)
    // is read as the table's `gcc`.
    let mut names: Vec<String> = names.to_vec();
    if names.iter().any(|n| is_compiler(n)) {
        names.push("gcc".into());
    }
    let names = &names[..];
    let is = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
    if is(&["git"]) {
        if let Some(why) = git_runs(args) {
            return Some(why);
        }
    }
    if is(&["git"]) {
        if let Some(a) = args.iter().find(|a| a.starts_with("ext::")) {
            return Some(format!(
                "git {a}: the ext:: transport runs the command line it names"
            ));
        }
    }
    // sqlite3 DB SQL...: every operand after the database is SQL or a dot-command.
    if is(&["sqlite3"]) && args.iter().filter(|a| !a.starts_with('-')).count() >= 2 {
        return Some(
            "sqlite3 runs the SQL and dot-commands it is given (`.shell` runs a shell command)"
                .into(),
        );
    }
    for entry in TABLE.iter().filter(|e| is(e.programs)) {
        let program = entry.programs.first().copied().unwrap_or("");
        let options: &[String] = if entry.subcommands.is_empty() {
            args
        } else {
            match subcommand(program, args) {
                Some((at, sub)) if entry.subcommands.contains(&sub) => &args[at + 1..],
                _ => continue,
            }
        };
        // yq (the jq wrapper) takes any left-over word with an `i` for in-place, `--` or not;
        // cargo hands what follows `--` to rustc or rustdoc.
        let passes_on = entry.programs.contains(&"cargo") && !entry.subcommands.is_empty();
        let ends = !is(&["yq", "tomlq", "xq", "xq-python"]) && !passes_on;
        for a in options.iter().take_while(|a| !(ends && *a == "--")) {
            let readings = as_the_program_reads(names, a);
            if let Some(hit) = readings.iter().find_map(|a| matches(entry, a)) {
                let sub = match subcommand(program, args) {
                    Some((_, s)) if !entry.subcommands.is_empty() => format!("{program} {s}"),
                    _ => names.first().cloned().unwrap_or_default(),
                };
                return Some(format!("{sub} {hit} {}", entry.runs));
            }
        }
    }
    // gh passes the words after `--` to git (`gh repo clone x -- --upload-pack=...`).
    if is(&["gh"]) && args.iter().any(|a| a == "--") {
        return Some(
            "gh passes the words after -- to git, which the analyzer does not judge".into(),
        );
    }
    if is(&["openssl"]) {
        // An engine, by URI, by an option of any subcommand (`-engine`, `-keygen_engine`...), or
        // as the `engine` subcommand's operand: an id that is no built-in engine is loaded as a
        // shared library, a path as given (outside round nine).
        let engine = |a: &&String| {
            a.to_ascii_lowercase().contains("org.openssl.engine:")
                || (a.starts_with('-') && a.to_ascii_lowercase().contains("engine"))
        };
        if let Some(a) = args.iter().find(engine) {
            return Some(format!(
                "openssl {a}: an engine it names is loaded as a shared library"
            ));
        }
        if subcommand("openssl", args).is_some_and(|(_, sub)| sub == "engine") {
            return Some(
                "openssl engine loads the engines it names (a path as a shared library)".into(),
            );
        }
    }
    // javac runs the annotation processors a classpath's jars name (META-INF/services) unless
    // told not to; the project's own directory is the project's code, a classpath given is not.
    // (`-proc:` is one of a set: the last given counts.)
    let proc_none = args
        .iter()
        .rev()
        .find(|a| a.starts_with("-proc:"))
        .is_some_and(|a| a == "-proc:none");
    if is(&["javac"]) && !proc_none {
        let classpath = |a: &String| {
            matches!(a.as_str(), "-cp" | "-classpath" | "--class-path")
                || a.starts_with("--class-path=")
        };
        if args.iter().any(classpath) {
            return Some(
                "javac runs the annotation processors the classpath it is given holds (without -proc:none)"
                    .into(),
            );
        }
    }
    None
}

/// `a` as the program named `names` reads it: openssl takes `--opt` for `-opt`, keytool and
/// jarsigner compare option names without case, and Go's pflag CLIs (kubectl, oc, helm) take `_`
/// for `-` in long option names (outside round eight: `openssl x509 --engine x.so`, `keytool
/// -PROVIDERCLASS`, `kubectl --cache_dir` passed where the usual spelling was asked).
/// GCC's driver also takes any `--name` it has no alias for as `-fname` (`--plugin=x.so` is
/// `-fplugin=x.so`): both readings count.
fn as_the_program_reads(names: &[String], a: &str) -> Vec<String> {
    let is = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
    if is(&["openssl"]) && a.starts_with("--") && a.len() > 2 {
        return vec![a[1..].to_string()];
    }
    if is(&["keytool", "jarsigner"]) && a.starts_with('-') {
        return vec![keytool_spelling(a)];
    }
    if is(&["kubectl", "oc", "helm"]) && a.starts_with("--") {
        let (name, value) = a.split_once('=').map_or((a, None), |(n, v)| (n, Some(v)));
        let name = format!("--{}", name[2..].replace('_', "-"));
        return vec![value.map_or(name.clone(), |v| format!("{name}={v}"))];
    }
    if is(GCC) && a.starts_with("--") && a.len() > 2 {
        return vec![a.to_string(), format!("-f{}", &a[2..])];
    }
    vec![a.to_string()]
}

/// A keytool or jarsigner option as the table spells it: the name's case as written there (they
/// compare names without case), known by its lower-case form.
fn keytool_spelling(a: &str) -> String {
    const SPELLED: &[&str] = &[
        "-providerPath",
        "-providerClass",
        "-providerArg",
        "-addprovider",
        "-conf",
        "-J",
    ];
    let lower = a.to_ascii_lowercase();
    SPELLED
        .iter()
        .find(|s| lower.starts_with(&s.to_ascii_lowercase()))
        .map_or_else(|| a.to_string(), |s| format!("{s}{}", &a[s.len()..]))
}

/// Is `name` a C compiler driver: gcc, g++, cc, c++, cpp or clang, with a target before it or a
/// version after it?
fn is_compiler(name: &str) -> bool {
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    ["gcc", "g++", "-cc", "-c++", "-cpp"]
        .iter()
        .any(|t| bare.ends_with(t))
        || matches!(bare, "cc" | "c++" | "cpp")
        || bare.starts_with("clang")
}

/// What git runs beyond the table's options: its internal helpers (`submodule--helper foreach`),
/// `for-each-repo` (a git command line in other repositories), a push to a repository on this
/// machine (its hooks run: `pre-receive`, `post-update`), an archive from one (its config's
/// `tar.*.command` runs).
fn git_runs(args: &[String]) -> Option<String> {
    let (at, sub) = subcommand("git", args)?;
    let rest = &args[at + 1..];
    // `git remote-ext URL CMD` (and every remote helper called by hand) runs what its arguments
    // name, past git's own `protocol.ext.allow`.
    if sub.starts_with("remote-") {
        return Some(format!(
            "git {sub} is a remote helper: it runs the transport or command its arguments name"
        ));
    }
    if sub.contains("--") || sub == "for-each-repo" {
        return Some(format!(
            "git {sub} runs other git commands the analyzer does not see"
        ));
    }
    let local = |a: &str| {
        a.starts_with('/')
            || a.starts_with("./")
            || a.starts_with("../")
            || a.starts_with('~')
            || a.starts_with("file:")
            || a == "."
            || a == ".."
    };
    if matches!(sub, "push" | "send-pack") {
        if let Some(dest) = rest.iter().find(|a| !a.starts_with('-')) {
            if local(dest) {
                return Some(format!(
                    "git {sub} {dest}: the repository on this machine runs its own hooks"
                ));
            }
        }
    }
    if sub == "archive" {
        if let Some(remote) = rest.iter().find_map(|a| a.strip_prefix("--remote=")) {
            if local(remote) {
                return Some(format!(
                    "git archive --remote={remote}: that repository's configuration runs"
                ));
            }
        }
    }
    None
}

/// The option of `entry` that word `a` spells, if any.
fn matches(entry: &CommandOptions, a: &str) -> Option<String> {
    if let Some(p) = entry.prefix.iter().find(|p| a.starts_with(**p)) {
        // An empty prefix: every word (the subcommand's own words are what it runs).
        return Some(if p.is_empty() { a } else { p }.to_string());
    }
    if a.starts_with("--") {
        let spelled = abbreviated_long(a, entry.long)?;
        return entry
            .long
            .iter()
            .find(|l| l.starts_with(spelled))
            .map(|l| (*l).to_string());
    }
    cluster_letter(a, entry.short).map(|c| format!("-{c}"))
}

/// The long option word `a` spells (`--name`, or `--name=value`: the `--name`), when it is a prefix
/// of one of `longs` four characters long or more: getopt_long takes any unique prefix, and `--co`
/// is not taken for every `--c...`.
pub(crate) fn abbreviated_long<'a>(a: &'a str, longs: &[&str]) -> Option<&'a str> {
    let spelled = a.split_once('=').map_or(a, |(n, _)| n);
    (spelled.len() > 3 && spelled.starts_with("--") && longs.iter().any(|l| l.starts_with(spelled)))
        .then_some(spelled)
}

/// Which of `letters` the short-option cluster `a` (`-iO`, not `--...`) holds, if any: whatever the
/// letter means there (a value that happens to hold it counts too).
pub(crate) fn cluster_letter(a: &str, letters: &[char]) -> Option<char> {
    let cluster = a.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
    cluster.chars().find(|c| letters.contains(c))
}

#[cfg(test)]
mod tests {
    use super::runs;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn check(name: &str, line: &str) -> Option<String> {
        runs(
            &crate::approval::program_names::names(name, ""),
            &argv(line),
        )
    }

    #[test]
    fn options_that_run_commands_are_seen_in_every_spelling() {
        for line in [
            "git grep -Ocmd hi",
            "git grep -iO cmd hi",
            "git grep --open-files-in-pager=cmd hi",
            "git grep --open=cmd hi",
            "git -C d grep -O cmd hi",
            "git ls-remote --upload-pack=cmd .",
            "git ls-remote -u cmd .",
            "git fetch --upload-pack=cmd .",
            "git fetch --upl=cmd .",
            "git pull --upload-pack=cmd .",
            "git clone -u cmd . d",
            "git clone --no-local --upload-pack cmd . d",
            "git clone -c core.fsmonitor=cmd . d",
            "git clone --template=t . d",
            "git push --receive-pack=cmd . HEAD",
            "git push --exec=cmd . HEAD",
            "git archive --remote=. --exec=cmd HEAD",
            "git daemon --access-hook=cmd",
            "git send-email --sendmail-cmd=cmd x.patch",
            "git fetch ext::sh%20-c%20cmd",
            "git remote add o ext::cmd",
            "sort -S 1 --compress-program=sh data",
            "sort --compress-prog=sh data",
            "sort --co=sh data",
            "npx -c cmd",
            "npx --call=cmd",
            "npm exec -c cmd",
            "npm x --call cmd",
            "gcc -wrapper sh,-c,cmd -x c /dev/null",
            "cc -B./evil/ main.c",
            "gcc -fplugin=./p.so main.c",
            "java -XX:OnError=cmd -jar x.jar",
            "java -javaagent:a.jar -jar x.jar",
            "rsync -e cmd a b",
            "rsync -avze cmd a b",
            "rsync --rsh=cmd a b",
            "rsync --rsync-path=cmd a b",
            "scp -S prog a b",
            "scp -o ProxyCommand=cmd a b",
            "wget --use-askpass=cmd u",
            "apt-get -o APT::Update::Pre-Invoke::=cmd update",
            "less +!cmd f",
            "psql -c x",
            "mysql -e x",
            "sqlite3 -cmd .shell db",
            "sqlite3 db .shell",
            "diff3 --diff-program=cmd a b c",
            "cmake -E env cmd",
            "split --filter=cmd f",
            "split --fil=cmd f",
            "wget -e use_askpass=cmd u",
            "wget --config=evil.rc u",
            "wget --conf=evil.rc u",
            "git remote-ext . cmd",
            "git remote-fd 3",
            "dpkg --post-invoke=cmd --configure -a",
            "rustc -C linker=cmd x.rs",
            "rustc -Clinker=cmd x.rs",
            "rustc --codegen linker=cmd x.rs",
            "pip config edit --editor cmd",
            "man --pag=cmd ls",
            "man --ht=cmd ls",
            "gcc-12 -wrapper cmd,x -c x.c",
            "c99-gcc -wrapper cmd,x -c x.c",
            "x86_64-linux-gnu-gcc-12 -wrapper cmd,x -c x.c",
            "clang-14 -B d x.c",
            "gcc @args -c x.c",
            "gcc -Wl,-plugin=p.so x.c",
            "gcc -Xlinker -plugin=p.so x.c",
            "gcc -Wp,-fplugin=p.so x.c",
            "java @argfile",
            "java -XX:VMOptionsFile=f -version",
            "openssl engine -pre SO_PATH:p.so",
            "jshell --startup f",
            "groff -U -z",
            "pic -U",
            "npm explore x -- cmd",
            "npm config set script-shell cmd",
            "git submodule--helper foreach cmd",
            "git for-each-repo --config=x -- -c alias.x=!cmd x",
            "git push /tmp/evil.git HEAD:x",
            "git push ../evil HEAD:x",
            "git push file:///tmp/evil HEAD:x",
            "git archive --remote=/tmp/evil.git HEAD",
            // Outside round, 2026-11-27: options that load code.
            "curl -sS --engine /abs/p.so https://x",
            "curl --eng=/abs/p.so https://x",
            "curl -K cfg https://x",
            "man -C ./man.conf -l x.1",
            "man --config-file=./man.conf ls",
            "nm --plugin ./p.so /bin/ls",
            "gcc-nm --plugin=./p.so x.o",
            "ld -plugin ./p.so x.o",
            "ar --plugin ./p.so t x.a",
            "opt -load ./p.so x.ll",
            "opt-14 -load=./p.so x.ll",
            "llc -load ./p.so x.ll",
            "clang -Xclang -load -Xclang ./p.so x.c",
            "ssh-keygen -D ./p.so",
            "ssh-add -s ./p.so",
            "kubectl get pods --kubeconfig=kc.yaml",
            "kubectl --kubeconfig kc.yaml get pods",
            "gpg --agent-program ./payload.sh -k",
            "gpg --photo-viewer ./x --list-keys",
            "gpg-connect-agent --exec ./payload.sh",
            "gpgtar --gpg ./payload.sh -t x",
            "dpkg-architecture -c ./payload.sh",
            "prove --exec ./payload.sh x.t",
            "pygmentize -x -l ./lex.py:L f",
            "perldoc -M Evil x",
            // Options that make a reading command write a file.
            "git log -1 --format=x --output=package.json",
            "git log --out=package.json",
            "git diff --output=/root/.bashrc",
            "git show --output x HEAD",
            "git -C d log --output=f",
            "git format-patch -o out HEAD~1",
            "git format-patch --output-directory out HEAD~1",
            "git archive -o x.tar HEAD",
            "git archive --output=x.tar HEAD",
            "git bundle create x.bundle HEAD",
            "sort -o ~/.bashrc a",
            "sort -uo out a",
            "sort --output=out a",
            "find . -fprintf F %p",
            "find . -fprint0 F",
            "find . -fls F",
            "tar -tf a.tar --index-file=zz.pth",
            "less -o log f",
            "less --log-file=log f",
            "yq -i .a=1 f.yaml",
            // Outside round six.
            "curl -sS -T data.txt file:///tmp/x",
            "curl -Tdata.txt file:///tmp/x",
            "curl --upload-file data.txt file:///tmp/x",
            "curl --upl data.txt file:///tmp/x",
            "openssl req -config evil.cnf -new -x509",
            "openssl ca -config evil.cnf",
            "pip3 show --log test.sh zz",
            "pip list --log=x",
            "pip3 freeze --log-file x",
            "pip list --cache-dir d",
            "pip install --report r.json x",
            "git cherry-pick --strategy=pwn side",
            "git cherry-pick --strat=pwn side",
            "git revert --strategy pwn HEAD",
            "git rebase -s pwn main",
            "git rebase --strategy=pwn main",
            "kubectl get pods --log-file=/tmp/x",
            // Outside round seven.
            "javap -J-javaagent:/tmp/agent.jar java.lang.Object",
            "jar -J-javaagent:a.jar --version",
            "keytool -list -providerclass Prov -providerpath cls -keystore /dev/null",
            "jarsigner -verify -providerPath cls x.jar",
            "javac -processorpath . X.java",
            "javac @args",
            "javadoc -docletpath . -doclet D X.java",
            "java -version -Djava.system.class.loader=Evil",
            "java -XX:ErrorFile=/tmp/x -version",
            "java -Xlog:gc:file=x -version",
            "nm @args /bin/true",
            "x86_64-linux-gnu-nm @args o.o",
            "objdump -d @args",
            "opt @optargs -S x.ll",
            "opt-14 @args",
            "llvm-nm @args",
            "rustdoc --test --test-builder=./x lib.rs",
            "rustdoc --runtool ./x lib.rs",
            "shuf -o out f",
            "shuf --ou=out f",
            "iconv -f utf8 -t ascii -o out f",
            "zstd -dc f -o out",
            "sdiff -o out a b",
            "msgcat -o out a.po",
            "ptx -G f out",
            "kubectl get pods --profile=cpu --profile-output=package.json",
            "kubectl version --cache-dir=d",
            // Outside round eight.
            "gcc --prefix=/tmp/pfx/ -c a.c",
            "gcc --prefix /tmp/pfx/ -c a.c",
            "gcc --pre=/tmp/pfx/ -c a.c",
            "x86_64-linux-gnu-gcc --for-linker=-plugin=x.so a.c",
            "gcc --for-assembler=x a.c",
            "gcc -Wa,-x a.c",
            "openssl x509 --engine /x.so -noout",
            "openssl x509 --provider-path d --provider p -noout",
            "openssl req --config o.cnf -new",
            "openssl pkey -in org.openssl.engine:/x.so:k -noout",
            "keytool -list -PROVIDERPATH p.jar -PROVIDERCLASS E",
            "keytool -list -ProviderClass E",
            "keytool -list -conf k.conf",
            "jarsigner -verify -ADDPROVIDER SunPKCS11 -PROVIDERARG p.cfg e.jar",
            "jarsigner -verify -conf x.conf x.jar",
            "javac -cp evil.jar A.java",
            "javac --class-path=evil.jar A.java",
            "jconsole -pluginpath p.jar",
            "kubectl get pods --cache_dir=/tmp/kc",
            "kubectl get pods --log_file=/tmp/x",
            "kubectl get pods --profile_output=x",
            "yq . f.yml -y -- -i",
            "java --patch-module java.base=pm -version",
            // Outside round nine.
            "gcc --plugin=/tmp/p.so -c a.c -o a.o",
            "cc -c --plugin=./p.so a.c",
            "openssl engine /tmp/e.so",
            "openssl req -new -key k.pem -keygen_engine /tmp/e.so -noout",
            "openssl pkey -in ORG.OPENSSL.ENGINE:/x.so:k",
            "javac --system /tmp/jh -d out A.java",
            "jdeps --system=/tmp/jh x.jar",
            "javac -cp ap/p.jar -proc:none -proc:only A.java",
            "kubectl kustomize --enable-helm --helm-command=./hc.sh kz",
            "kubectl kustomize --enable_helm --helm_command=./hc.sh kz",
            "kubectl kustomize --enable-alpha-plugins --enable-exec kz",
            "kubectl kustomize -o package.json kz",
            // Outside round eleven.
            "cargo clippy --target-dir t -- -C linker=./lk --emit=link",
            "cargo rustc -- -C linker=./lk",
            "cargo rustdoc -- --test-builder ./x",
            "node --check --require ./pre.js a.js",
            "node --check --import data:text/javascript,x a.js",
            "node --test --import ./x.mjs",
            "node -r ./pre.js a.js",
            "pygmentize -f null -o package.json",
            "prove --rc=./rc t/a.t",
            "prove -PEvil t/a.t",
            "perl -c -M'strict;BEGIN{}' x.pl",
            "perl -c -I/tmp/d -MEv x.pl",
            "cpan -l -j ./cfg.pm",
            "cfn-lint -a ./rules t.yaml",
            "perldoc -n ./x perlfunc",
            "gh repo clone x -- --upload-pack=./x",
            "gh alias set x --shell 'touch y'",
            "gh extension exec x",
        ] {
            let name = line.split_whitespace().next().unwrap();
            assert!(check(name, line).is_some(), "{line}");
        }
    }

    #[test]
    fn the_same_programs_without_those_options_run_nothing_else() {
        for line in [
            "git grep -i hi",
            "git grep -e Other hi",
            "git fetch -u origin",
            "git fetch --update-head-ok origin",
            "git push origin HEAD",
            "git log --oneline",
            "git commit -m use-the-upload-pack",
            "git clone . d",
            "git grep -- -O",
            "sort -u data",
            "sort --check data",
            "npx eslint .",
            "npm exec eslint",
            "npm test",
            "gcc -O2 -o app main.c",
            "java -jar x.jar",
            "rsync -av a b",
            "scp a b",
            "wget u",
            "apt-get update",
            "less f",
            "cmake --build .",
            "sqlite3 db",
            "split -l 10 f",
            "wget -q u",
            "dpkg -l",
            "rustc x.rs",
            "pip config list",
            "man ls",
            "gcc-12 -O2 -c x.c",
            "openssl rand -hex 8",
            "groff -man f",
            "npm config get registry",
            "git push origin HEAD",
            "git archive HEAD",
            "curl -sSL https://x",
            "man -k printf",
            "nm -D /bin/ls",
            "ssh-keygen -t ed25519 -f k",
            "kubectl get pods",
            "gpg --list-keys",
            "git log -p --stat",
            "git diff --stat",
            "git show HEAD:README.md",
            "git bundle verify x.bundle",
            "sort -n data",
            "find . -name x -print",
            "tar -tf a.tar",
            "less -R f",
            "yq .a f.yaml",
            "curl -sS https://x -H 'Accept: text/plain'",
            "openssl x509 -in c.pem -noout -text",
            "pip3 show requests",
            "git cherry-pick -s side",
            "git revert -s HEAD",
            "git rebase -i main",
            "javap -c X",
            "java -version",
            "keytool -list -keystore k.jks",
            "nm -D /bin/ls",
            "shuf -n 3 f",
            "iconv -f utf8 -t ascii f",
            "kubectl get pods -o wide",
            "gcc -O2 -c a.c",
            "openssl x509 -in c.pem -noout --text",
            "keytool -list -v -keystore k.jks",
            "javac A.java",
            "javac -proc:none -cp lib.jar A.java",
            "kubectl get pods --all_namespaces",
            "yq . f.yml -- x",
            "gcc --version",
            "openssl x509 -in c.pem -noout -text",
            "javac -cp lib.jar -proc:only -proc:none A.java",
            "kubectl kustomize kz",
            "cargo clippy -- -D warnings",
            "node --check a.js",
            "pygmentize -l python f.py",
            "prove -v t/a.t",
            "perl -c x.pl",
            "gh repo clone x",
        ] {
            let name = line.split_whitespace().next().unwrap();
            assert_eq!(check(name, line), None, "{line}");
        }
    }
}

//! The grammars: for each command the classifier may call read-only, its options as its own
//! getopt string and long-option table (GNU coreutils 9, grep 3, sed 4.9, diffutils 3, findutils 4,
//! util-linux 2.38, binutils 2.40, procps 4, checked against `--help` and the man pages), what
//! makes it not read-only, and its operands.
//!
//! Left out on purpose (so they are never read-only): pagers (`less`, `more`: `!`, `v`, `|` run
//! commands when a terminal is attached, `less -o` writes a log, LESSOPEN runs a preprocessor),
//! wrappers (`env`, `xargs`, `nice`, `timeout`: they run another command, judged on its own after
//! analysis unwraps it; `xargs` builds that command from its input, so it is never read-only),
//! and tools whose option parsers could not be checked here (`ag`, `ack`, `fd`/`fdfind`, `bat`,
//! `exa`, `eza`, `lsof`, `locate`).

use super::awk::check_awk;
use super::custom::{
    any_args, check_bracket, check_date, check_jq, check_printf, check_ps, check_test, check_tree,
    check_xxd, check_yq,
};
use super::find::check_find;
use super::sed::check_sed;
use super::{Check, Grammar, Kind, Operands, Syntax};
use crate::approval::getopt::Spec;

const fn getopt(
    name: &'static str,
    kind: Kind,
    spec: Spec,
    refused: &'static [(&'static str, &'static str)],
    operands: Operands,
    check: Option<Check>,
    example: &'static [&'static str],
) -> Grammar {
    Grammar {
        name,
        kind,
        syntax: Syntax::Getopt {
            spec,
            refused,
            operands,
            check,
        },
        example,
    }
}

/// A GNU tool with no option that writes: only its option set matters.
const fn plain(
    name: &'static str,
    kind: Kind,
    short: &'static str,
    long: &'static str,
    example: &'static [&'static str],
) -> Grammar {
    getopt(
        name,
        kind,
        Spec::gnu(short, long),
        &[],
        Operands::Any,
        None,
        example,
    )
}

const fn custom(
    name: &'static str,
    kind: Kind,
    check: fn(&super::Args) -> Result<(), String>,
    example: &'static [&'static str],
) -> Grammar {
    Grammar {
        name,
        kind,
        syntax: Syntax::Custom(check),
        example,
    }
}

/// A bash builtin: bash's internal getopt has bundling and attached values but no long options.
const fn builtin(short: &'static str) -> Spec {
    Spec {
        short,
        long: "",
        abbreviations: false,
        permute: false,
    }
}

const GREP_SHORT: &str = "0123456789A:B:C:D:EFGHILPRTUVX:Zabcd:e:f:hilm:noqrsuvwxyz";
const GREP_LONG: &str = "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= \
    ignore-case no-ignore-case word-regexp line-regexp null-data no-messages invert-match \
    version help max-count= byte-offset line-number line-buffered with-filename no-filename \
    label= only-matching quiet|silent binary-files= text directories= devices= recursive \
    dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match \
    files-with-matches count initial-tab null before-context= after-context= context= \
    group-separator= no-group-separator color|colour=? binary";

const SORT_LONG: &str = "ignore-leading-blanks check=? compress-program= debug dictionary-order \
    files0-from= general-numeric-sort human-numeric-sort ignore-case ignore-nonprinting key= \
    merge month-sort numeric-sort output= random-sort random-source= reverse sort= stable \
    buffer-size= field-separator= temporary-directory= unique version-sort zero-terminated \
    parallel= batch-size= help version";

const SUM_SHORT: &str = "bctwz";
const SUM_LONG: &str =
    "binary check tag text zero ignore-missing quiet status strict warn help version";

const DIFF_LONG: &str = "normal brief report-identical-files context=? unified=? ed rcs \
    side-by-side width= left-column suppress-common-lines show-c-function show-function-line= \
    label= expand-tabs initial-tab tabsize= suppress-blank-empty paginate recursive \
    no-dereference new-file unidirectional-new-file ignore-file-name-case \
    no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= \
    ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change \
    ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr ifdef= \
    old-group-format= new-group-format= unchanged-group-format= changed-group-format= \
    line-format= old-line-format= new-line-format= unchanged-line-format= minimal \
    horizon-lines= speed-large-files color=? palette= forward-ed binary help version";

#[rustfmt::skip]
pub static GRAMMARS: &[Grammar] = &[
    // ---- search
    getopt("grep", Kind::Search, Spec::gnu(GREP_SHORT, GREP_LONG), &[], Operands::Any, None, &["-rn", "TODO", "src"]),
    getopt("egrep", Kind::Search, Spec::gnu(GREP_SHORT, GREP_LONG), &[], Operands::Any, None, &["-n", "a|b", "f"]),
    getopt("fgrep", Kind::Search, Spec::gnu(GREP_SHORT, GREP_LONG), &[], Operands::Any, None, &["-n", "x", "f"]),
    // ripgrep parses with lexopt: bundling and attached values, but no abbreviations.
    getopt("rg", Kind::Search, Spec {
        short: "0.A:B:C:E:FHILM:NPST:UVabcd:e:f:g:hij:lm:nopqr:st:uvwxz",
        long: "after-context= before-context= context= regexp= file= glob= iglob= type= \
               type-not= type-add= type-clear= max-count= max-depth= max-filesize= threads= \
               max-columns= replace= encoding= path-separator= context-separator= \
               field-match-separator= field-context-separator= sort= sortr= color= colors= \
               ignore-file= pre= pre-glob= hostname-bin= search-zip \
               ignore-case case-sensitive smart-case word-regexp line-regexp invert-match \
               line-number no-line-number count count-matches files-with-matches \
               files-without-match files only-matching fixed-strings pcre2 multiline \
               multiline-dotall with-filename no-filename heading no-heading vimgrep json \
               quiet null hidden follow no-ignore no-ignore-vcs no-ignore-dot no-ignore-global \
               no-ignore-parent no-ignore-exclude no-ignore-files text binary trim column \
               byte-offset stats debug trace passthru one-file-system no-messages \
               max-columns-preview no-config type-list pretty unrestricted help version",
        abbreviations: false,
        permute: true,
    }, &[
        ("--pre", "runs a preprocessor program on every file"),
        ("--hostname-bin", "runs a program to get the host name"),
        ("-z --search-zip", "runs decompression programs"),
    ], Operands::Any, None, &["-n", "fn main", "src"]),
    custom("find", Kind::Search, check_find, &[".", "-name", "*.rs", "-type", "f"]),
    // debianutils which: `-a` only; GNU which options could not be checked.
    getopt("which", Kind::Search, Spec { short: "as", long: "", abbreviations: false, permute: false },
        &[], Operands::Any, None, &["-a", "ls"]),
    getopt("whereis", Kind::Search, Spec { short: "bBmMsSfulhV", long: "help version", abbreviations: true, permute: true },
        &[], Operands::Any, None, &["-b", "ls"]),

    // ---- read
    plain("cat", Kind::Read, "AbeEnstTuv",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version",
        &["-n", "f"]),
    plain("head", Kind::Read, "c:n:qvz0123456789",
        "bytes= lines= quiet|silent verbose zero-terminated help version", &["-n", "20", "f"]),
    plain("tail", Kind::Read, "c:n:fFqs:vz0123456789",
        "bytes= follow=? lines= max-unchanged-stats= pid= quiet|silent retry sleep-interval= verbose \
         zero-terminated help version", &["-f", "log.txt"]),
    plain("wc", Kind::Read, "clLmw",
        "bytes chars lines files0-from= max-line-length words total= help version", &["-l", "f"]),
    getopt("file", Kind::Read, Spec::gnu("bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0",
        "help version magic-file= uncompress uncompress-noreport brief checking-printout \
         exclude= exclude-quiet= files-from= separator= mime apple extension mime-type \
         mime-encoding keep-going list dereference no-dereference no-buffer no-pad print0 \
         preserve-date parameter= raw special-files no-sandbox compile debug"), &[
        ("-C --compile", "writes a compiled magic file"),
        ("-z -Z --uncompress --uncompress-noreport", "may run decompression programs"),
        ("-p --preserve-date", "resets the files' access times"),
    ], Operands::Any, None, &["-b", "f"]),
    plain("stat", Kind::Read, "c:fLt",
        "dereference file-system cached= format= printf= terse help version", &["-c", "%s", "f"]),
    plain("nl", Kind::Read, "b:d:f:h:i:l:n:ps:v:w:",
        "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= \
         join-blank-lines= number-format= no-renumber number-separator= starting-line-number= \
         number-width= help version", &["-ba", "f"]),
    plain("od", Kind::Read, "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx",
        "address-radix= endian= format= output-duplicates read-bytes= skip-bytes= strings=? \
         traditional width=? help version", &["-c", "f"]),
    custom("xxd", Kind::Read, check_xxd, &["-l", "64", "f"]),
    plain("hexdump", Kind::Read, "bcCde:f:L::n:os:vxhV",
        "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex \
         color=? format= format-file= length= skip= no-squeezing help version", &["-C", "f"]),
    getopt("strings", Kind::Read, Spec::gnu("adfhHn:wot:e:T:Vv0123456789s:U:",
        "all data print-file-name bytes= radix= include-all-whitespace target= encoding= \
         unicode= output-separator= help version"), &[], Operands::Any,
        Some(super::custom::no_response_files), &["-n", "8", "f"]),
    custom("jq", Kind::Read, check_jq, &["-r", ".name", "package.json"]),
    custom("yq", Kind::Read, check_yq, &["-y", ".a", "f.yaml"]),
    getopt("sort", Kind::Read, Spec::gnu("bcCdfghik:mMno:rRsS:t:T:uVy:z", SORT_LONG), &[
        ("-o --output", "writes its output to a file"),
        ("--compress-program", "runs a compression program"),
        ("-T --temporary-directory", "writes temporary files to a chosen directory"),
    ], Operands::Any, None, &["-rn", "-k2,2", "f"]),
    getopt("uniq", Kind::Read, Spec::gnu("0123456789cdDf:is:uw:z",
        "count repeated all-repeated=? skip-fields= ignore-case skip-chars= unique \
         zero-terminated check-chars= group=? help version"),
        &[], Operands::AtMost(1), None, &["-c", "f"]),
    plain("cut", Kind::Read, "b:c:d:f:nsz",
        "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= \
         zero-terminated help version", &["-d", ",", "-f1", "f"]),
    getopt("tr", Kind::Read, Spec::gnu("cCdst",
        "complement delete squeeze-repeats truncate-set1 help version"),
        &[], Operands::AtMost(2), None, &["a-z", "A-Z"]),
    getopt("diff", Kind::Read, Spec::gnu(
        "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ", DIFF_LONG), &[
        ("-l --paginate", "runs pr"),
    ], Operands::Any, None, &["-u", "a", "b"]),
    plain("cmp", Kind::Read, "bci:ln:sv",
        "print-bytes print-chars ignore-initial= verbose bytes= quiet|silent help version", &["a", "b"]),
    plain("comm", Kind::Read, "123z",
        "check-order nocheck-order output-delimiter= total zero-terminated help version", &["-3", "a", "b"]),
    plain("readlink", Kind::Read, "efmnqsvz",
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent \
         verbose zero help version", &["-f", "f"]),
    plain("realpath", Kind::Read, "eLmPqsz",
        "canonicalize-existing canonicalize-missing logical physical quiet relative-to= \
         relative-base= strip|no-symlinks zero help version", &["f"]),
    plain("md5sum", Kind::Read, SUM_SHORT, SUM_LONG, &["f"]),
    plain("sha1sum", Kind::Read, SUM_SHORT, SUM_LONG, &["f"]),
    plain("sha256sum", Kind::Read, SUM_SHORT, SUM_LONG, &["-c", "SUMS"]),
    plain("sha512sum", Kind::Read, SUM_SHORT, SUM_LONG, &["f"]),
    getopt("base64", Kind::Read, Spec::gnu("diw:", "decode ignore-garbage wrap= help version"),
        &[], Operands::AtMost(1), None, &["-d", "f"]),
    plain("column", Kind::Read, "c:dE:eH:hi:JLl:N:n:O:o:p:R:r:s:tT:VW:x",
        "columns= table table-name= table-order= table-columns= table-columns-limit= \
         table-noextreme= table-noheadings table-header-repeat table-hide= table-right= \
         table-truncate= table-wrap= table-empty-lines keep-empty-lines json tree= tree-id= \
         tree-parent= output-width= output-separator= separator= fillrows help version", &["-t", "f"]),
    plain("fold", Kind::Read, "bsw:", "bytes spaces width= help version", &["-w", "80", "f"]),
    plain("rev", Kind::Read, "0hV", "zero help version", &["f"]),
    plain("tac", Kind::Read, "brs:", "before regex separator= help version", &["f"]),
    plain("paste", Kind::Read, "d:sz", "delimiters= serial zero-terminated help version", &["-sd,", "f"]),
    plain("expand", Kind::Read, "it:0123456789", "initial tabs= help version", &["-t", "4", "f"]),
    plain("basename", Kind::Read, "as:z", "multiple suffix= zero help version", &["-s", ".rs", "a/b.rs"]),
    plain("dirname", Kind::Read, "z", "zero help version", &["a/b"]),
    getopt("sed", Kind::Read, Spec::gnu("Ee:f:i::l:nrsuz",
        "quiet|silent debug expression= file= follow-symlinks in-place=? line-length= posix \
         regexp-extended separate sandbox unbuffered null-data binary help version"), &[
        ("-i --in-place", "edits files in place"),
        ("-f --file", "reads its script from a file, which cannot be checked"),
    ], Operands::Any, Some(check_sed), &["-n", "1,5p", "f"]),
    // mawk and gawk agree on -F, -v and `--`; everything else (gawk's -f, -e, -i, -l, -o, -p,
    // -d, mawk's -W) loads code, writes files or changes the dialect.
    getopt("awk", Kind::Read, Spec {
        short: "F:v:f:W:e:i:l:E:o::p::d::D::L::bcCghMnNOPrsStVYZ:",
        long: "",
        abbreviations: false,
        permute: false,
    }, &[
        ("-f -e -E -i -l", "loads program text or extensions that cannot be checked"),
        ("-o -p -d", "writes a file"),
        ("-W -D -b -c -C -g -h -L -M -n -N -O -P -r -s -S -t -V -Y -Z", "is not allowed for read-only awk"),
    ], Operands::Any, Some(check_awk), &["{print $1}", "f"]),

    // ---- list
    plain("ls", Kind::List, "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1",
        "all almost-all author escape block-size= ignore-backups color=? directory dired \
         classify=? file-type format= full-time group-directories-first no-group human-readable \
         si dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink=? \
         indicator-style= inode ignore= kibibytes dereference numeric-uid-gid literal \
         hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size \
         sort= time= time-style= tabsize= width= context zero help version", &["-la"]),
    custom("tree", Kind::List, check_tree, &["-L", "2", "src"]),
    plain("du", Kind::List, "0abd:chHklmst:xB:DLPSX:",
        "null all apparent-size block-size= bytes total dereference-args max-depth= files0-from= \
         human-readable inodes dereference count-links no-dereference separate-dirs si summarize \
         threshold= time=? time-style= exclude-from= exclude= one-file-system help version", &["-sh", "."]),
    getopt("df", Kind::List, Spec::gnu("aB:iF:hHklmPTt:vx:",
        "all block-size= human-readable si inodes local no-sync output=? portability sync total \
         type= print-type exclude-type= help version"), &[
        ("--sync", "flushes file-system buffers"),
    ], Operands::Any, None, &["-h"]),
    custom("ps", Kind::List, check_ps, &["aux"]),

    // ---- neutral
    custom("echo", Kind::Neutral, any_args, &["hello"]),
    custom("printf", Kind::Neutral, check_printf, &["%s\\n", "x"]),
    custom("true", Kind::Neutral, any_args, &[]),
    custom("false", Kind::Neutral, any_args, &[]),
    custom(":", Kind::Neutral, any_args, &[]),
    getopt("cd", Kind::Neutral, builtin("LPe@"), &[], Operands::AtMost(1), None, &["src"]),
    getopt("pwd", Kind::Neutral, builtin("LP"), &[], Operands::AtMost(0), None, &["-P"]),
    custom("test", Kind::Neutral, check_test, &["-f", "x"]),
    custom("[", Kind::Neutral, check_bracket, &["-f", "x", "]"]),
    getopt("sleep", Kind::Neutral, Spec::gnu("", "help version"), &[], Operands::Any, None, &["1"]),
    getopt("date", Kind::Neutral, Spec::gnu("d:f:I::r:Rs:u",
        "date= debug file= iso-8601=? resolution rfc-email rfc-822 rfc-2822 rfc-3339= reference= \
         set= utc|universal|uct help version"), &[
        ("-s --set", "sets the system clock"),
    ], Operands::AtMost(1), Some(check_date), &["+%s"]),
    getopt("whoami", Kind::Neutral, Spec::gnu("", "help version"), &[], Operands::AtMost(0), None, &[]),
    plain("id", Kind::Neutral, "agnruzGZ", "context group groups name real user zero help version", &["-u"]),
    getopt("uname", Kind::Neutral, Spec::gnu("asnrvmpio",
        "all kernel-name nodename kernel-release kernel-version machine processor \
         hardware-platform operating-system help version"), &[], Operands::AtMost(0), None, &["-a"]),
    getopt("hostname", Kind::Neutral, Spec::gnu("aAbdfF:hiIsVy",
        "alias all-fqdns boot domain fqdn|long file= help ip-address all-ip-addresses short \
         version yp|nis"), &[
        ("-b --boot", "sets the host name"),
        ("-F --file", "sets the host name from a file"),
    ], Operands::AtMost(0), None, &["-f"]),
    plain("printenv", Kind::Neutral, "0", "null help version", &["HOME"]),
    plain("seq", Kind::Neutral, "f:s:w", "format= separator= equal-width help version", &["1", "10"]),
    custom("expr", Kind::Neutral, any_args, &["1", "+", "2"]),
    getopt("type", Kind::Neutral, builtin("afptP"), &[], Operands::Any, None, &["-a", "ls"]),
];

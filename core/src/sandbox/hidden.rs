//! What a sandboxed run may not read: the default credential locations of every home it can name,
//! the caller's `denyRead`, minus its `allowRead`. Landlock grants reads by hierarchy and cannot take
//! a subtree back, so hiding needs the run's mount namespace: a directory is covered by an empty
//! tmpfs nobody may list (mode 0000, or 0111 when something inside is brought back), a file by an
//! empty file nobody may read (mode 0000). Without a mount namespace nothing is hidden, which the
//! report says, and an explicit `denyRead` is refused rather than ignored.

use std::path::{Path, PathBuf};

/// The homes of the people who use this machine, from `passwd`-format `text`: root's and each
/// regular account's (uid 1000 and up, Debian's and most distributions' first user id, but not
/// `nobody`), whichever of them are real directories other than `/`. Their credential files are
/// hidden from every run, not only the caller's: a token another user left world-readable (npm
/// writes `.npmrc` with the umask's 0644) is no business of the run's. Accounts only NSS knows (LDAP)
/// are not listed here.
pub fn people_homes(text: &str) -> Vec<PathBuf> {
    const FIRST_REGULAR_UID: u32 = 1000;
    const NOBODY: u32 = 65534;
    let mut homes = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        let (Some(uid), Some(home)) = (fields.get(2), fields.get(5)) else {
            continue;
        };
        let Ok(uid) = uid.parse::<u32>() else {
            continue;
        };
        let person = uid == 0 || (uid >= FIRST_REGULAR_UID && uid != NOBODY);
        let home = PathBuf::from(home);
        if person && home.is_absolute() && home != Path::new("/") && !homes.contains(&home) {
            homes.push(home);
        }
    }
    homes.retain(|h| h.is_dir());
    homes
}

/// Where credentials live, relative to a home directory: keys, cloud and registry tokens, password
/// stores, browser profiles (cookies and saved passwords), git's second credential store, database
/// passwords (`.pgpass`, `.my.cnf`), password managers' CLI data, S3 and rclone remotes.
pub const DEFAULT_IN_HOME: [&str; 31] = [
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".gnupg",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gh",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".local/share/keyrings",
    ".config/git/credentials",
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".config/Bitwarden CLI",
    ".config/op",
    ".s3cfg",
    ".boto",
    ".config/rclone",
];

/// System files with credentials (already unreadable to a normal user; a root run drops the
/// capabilities that would read them, and they are hidden as well).
pub const DEFAULT_SYSTEM: [&str; 2] = ["/etc/shadow", "/etc/gshadow"];

/// One path to hide, as it exists when the run starts (links resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hide {
    pub path: PathBuf,
    pub is_dir: bool,
    /// `allowRead` paths inside a hidden directory, brought back (they exist; links resolved).
    pub keep: Vec<PathBuf>,
}

/// The paths to hide for homes `homes` and the caller's lists (absolute). Paths that do not exist
/// are skipped (there is nothing to read); a path inside another hidden one is covered by it; a path
/// `allowRead` names (or lies under) is not hidden.
pub fn plan(homes: &[PathBuf], deny_read: &[PathBuf], allow_read: &[PathBuf]) -> Vec<Hide> {
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let allowed: Vec<PathBuf> = allow_read.iter().filter_map(|p| real(p)).collect();
    let mut candidates = in_homes(homes);
    candidates.extend(DEFAULT_SYSTEM.iter().map(PathBuf::from));
    candidates.extend(deny_read.iter().cloned());
    let mut out: Vec<Hide> = Vec::new();
    for c in candidates {
        // Most candidates are not there: one lstat says so, where resolving would walk each part.
        if std::fs::symlink_metadata(&c).is_err() {
            continue;
        }
        let Some(path) = real(&c) else { continue };
        if allowed.iter().any(|a| path.starts_with(a)) {
            continue;
        }
        if out.iter().any(|h| path.starts_with(&h.path)) {
            continue;
        }
        // A new outer path replaces the inner ones it covers.
        out.retain(|h| !h.path.starts_with(&path));
        let is_dir = path.is_dir();
        out.push(Hide {
            path,
            is_dir,
            keep: Vec::new(),
        });
    }
    for h in out.iter_mut().filter(|h| h.is_dir) {
        let mut keep: Vec<PathBuf> = allowed
            .iter()
            .filter(|a| a.starts_with(&h.path) && **a != h.path)
            .cloned()
            .collect();
        keep.sort();
        // An allowed path inside another allowed one comes back with it.
        let mut outer: Vec<PathBuf> = Vec::new();
        for k in keep {
            if !outer.iter().any(|o| k.starts_with(o)) {
                outer.push(k);
            }
        }
        h.keep = outer;
    }
    out
}

/// The default credential locations in each of `homes` (links of the homes resolved; a home that
/// does not exist has none), whether they exist or not.
pub fn in_homes(homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for home in homes {
        let Ok(home) = std::fs::canonicalize(home) else {
            continue;
        };
        if !seen.contains(&home) {
            out.extend(DEFAULT_IN_HOME.iter().map(|e| home.join(e)));
            seen.push(home);
        }
    }
    out
}

/// The directories to make inside a hidden directory `hidden` (an empty tmpfs) so that `keep` can be
/// bound back at its place: each missing ancestor of `keep` below `hidden`, outermost first.
pub fn dirs_to_make(hidden: &Path, keep: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = keep
        .ancestors()
        .skip(1)
        .take_while(|a| *a != hidden && a.starts_with(hidden))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_homes_of_root_and_regular_accounts_are_the_peoples() {
        let dir = tempfile::tempdir().unwrap();
        let (alice, svc, gone) = (
            dir.path().join("alice"),
            dir.path().join("svc"),
            dir.path().join("gone"),
        );
        std::fs::create_dir(&alice).unwrap();
        std::fs::create_dir(&svc).unwrap();
        let text = format!(
            "root:x:0:0:root:/:/bin/bash\n\
             daemon:x:1:1::{svc}:/usr/sbin/nologin\n\
             alice:x:1000:1000::{alice}:/bin/bash\n\
             again:x:1001:1001::{alice}:/bin/bash\n\
             gone:x:1002:1002::{gone}:/bin/sh\n\
             nobody:x:65534:65534::{svc}:/usr/sbin/nologin\n\
             relative:x:1003:1003::home/r:/bin/sh\n\
             # comment\n\
             broken:x:abc:1::{svc}:/bin/sh\n",
            svc = svc.display(),
            alice = alice.display(),
            gone = gone.display()
        );
        // root's home `/` is no home to hide in; a system account's, nobody's, a missing one's, a
        // relative one's and a malformed line's are not listed; a home shared by two accounts once.
        assert_eq!(people_homes(&text), vec![alice]);
    }

    #[test]
    fn defaults_in_each_home_the_callers_list_and_exceptions() {
        let home = tempfile::tempdir().unwrap();
        let h = std::fs::canonicalize(home.path()).unwrap();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        std::fs::write(h.join(".ssh/id_ed25519"), "key").unwrap();
        std::fs::write(h.join(".ssh/known_hosts"), "hosts").unwrap();
        std::fs::create_dir_all(h.join(".aws")).unwrap();
        std::fs::write(h.join(".netrc"), "machine x").unwrap();
        std::fs::create_dir_all(h.join("project/secrets/deep")).unwrap();
        std::fs::write(h.join("project/.env"), "A=1").unwrap();
        let plan = plan(
            &[h.clone(), h.clone()],
            &[
                h.join("project/.env"),
                h.join("project/secrets"),
                h.join("missing"),
            ],
            &[h.join(".ssh/known_hosts"), h.join(".aws")],
        );
        let hidden: Vec<&Path> = plan.iter().map(|x| x.path.as_path()).collect();
        assert!(hidden.contains(&h.join(".ssh").as_path()));
        assert!(hidden.contains(&h.join(".netrc").as_path()));
        assert!(hidden.contains(&h.join("project/.env").as_path()));
        assert!(hidden.contains(&h.join("project/secrets").as_path()));
        // allowRead of the whole directory: not hidden. A missing path: nothing to hide.
        assert!(!hidden.contains(&h.join(".aws").as_path()));
        assert!(!hidden.iter().any(|p| p.ends_with("missing")));
        // Once per path, though two homes named it.
        assert_eq!(hidden.iter().filter(|p| **p == h.join(".ssh")).count(), 1);
        let ssh = plan.iter().find(|x| x.path == h.join(".ssh")).unwrap();
        assert!(ssh.is_dir);
        assert_eq!(ssh.keep, vec![h.join(".ssh/known_hosts")]);
        let netrc = plan.iter().find(|x| x.path == h.join(".netrc")).unwrap();
        assert!(!netrc.is_dir);
    }

    #[test]
    fn an_outer_path_covers_the_inner_ones_whatever_the_order() {
        let d = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(d.join("a/b/c")).unwrap();
        let p = plan(&[], &[d.join("a/b/c"), d.join("a")], &[]);
        assert_eq!(
            p.iter()
                .filter(|h| h.path.starts_with(&d))
                .map(|h| h.path.clone())
                .collect::<Vec<_>>(),
            vec![d.join("a")]
        );
        assert_eq!(
            dirs_to_make(&d.join("a"), &d.join("a/b/c/file")),
            vec![d.join("a/b"), d.join("a/b/c")]
        );
        assert!(dirs_to_make(&d.join("a"), &d.join("a/file")).is_empty());
    }
}

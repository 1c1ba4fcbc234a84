//! Where a tool call's run starts: the workdir the model asked for, else the directory the scope's
//! last run `cd`'d into (with `trackCwd`), else the host's directory; with OpenClaw's warning texts
//! whenever a directory asked for is gone. The adapters call this instead of keeping the rule.

use std::path::{Component, Path, PathBuf};

use super::registry::Registry;

/// What the caller knows about where to run.
#[derive(Debug, Default, Clone)]
pub struct WorkdirRequest<'a> {
    /// The model's `workdir` (relative to the base; blank means none).
    pub requested: Option<&'a str>,
    /// The host's directory (the tool's `cwd` default); the process's cwd when absent.
    pub base: Option<&'a Path>,
    /// Follow the scope's tracked directory when no workdir is asked for.
    pub track: bool,
    pub scope: Option<&'a str>,
}

/// The directory to run in, and the warnings the result text carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workdir {
    pub cwd: PathBuf,
    pub warnings: Vec<String>,
    /// The requested workdir is not a directory (the run would fall back, as the warning says).
    pub unavailable: bool,
}

/// Resolve where the run starts (see the module's note).
pub fn resolve(registry: &Registry, req: &WorkdirRequest<'_>) -> Workdir {
    let fallback = fallback(req.base);
    let mut warnings = Vec::new();
    let mut unavailable = false;
    let asked = req.requested.map(str::trim).filter(|w| !w.is_empty());
    let cwd = match asked {
        Some(w) => {
            let abs = lexical_join(&fallback, Path::new(w));
            if abs.is_dir() {
                abs
            } else {
                unavailable = true;
                warnings.push(format!(
                    "Warning: workdir \"{w}\" is unavailable; using \"{}\".",
                    fallback.display()
                ));
                fallback
            }
        }
        None if req.track => {
            let (cwd, warning) = tracked_or(registry, req.scope, fallback);
            warnings.extend(warning);
            cwd
        }
        None => fallback,
    };
    Workdir {
        cwd,
        warnings,
        unavailable,
    }
}

/// The scope's tracked directory when a run left one and it still exists; else `fallback`, with a
/// warning when the tracked directory is gone.
pub fn tracked_or(
    registry: &Registry,
    scope: Option<&str>,
    fallback: PathBuf,
) -> (PathBuf, Option<String>) {
    match registry.scope_cwd(scope) {
        Some(dir) if dir.is_dir() => (dir, None),
        Some(dir) => {
            let warning = format!(
                "Warning: the tracked directory {} no longer exists; using {}.",
                dir.display(),
                fallback.display()
            );
            (fallback, Some(warning))
        }
        None => (fallback, None),
    }
}

/// The host's directory when it exists, else the home directory (as OpenClaw falls back).
fn fallback(base: Option<&Path>) -> PathBuf {
    let base = match base {
        Some(b) => lexical_join(&std::env::current_dir().unwrap_or_default(), b),
        None => std::env::current_dir().unwrap_or_default(),
    };
    if base.is_dir() {
        return base;
    }
    std::env::home_dir().unwrap_or_else(|| PathBuf::from("/"))
}

/// `path.resolve(base, p)` as Node does it: `p` over `base`, `.` and `..` folded without touching the
/// file system (so `a/link/..` is `a`, as the model's shell would not see it, but as OpenClaw does).
fn lexical_join(base: &Path, p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(p).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> &'static Registry {
        Box::leak(Box::default())
    }

    #[test]
    fn a_workdir_is_taken_relative_to_the_base_and_a_missing_one_falls_back_with_openclaws_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let r = registry();
        let base = dir.path();
        let at = |requested| {
            resolve(
                r,
                &WorkdirRequest {
                    requested: Some(requested),
                    base: Some(base),
                    ..Default::default()
                },
            )
        };
        let got = at(" sub ");
        assert_eq!(got.cwd, base.join("sub"));
        assert!(got.warnings.is_empty());
        let got = at("sub/../sub/./");
        assert_eq!(got.cwd, base.join("sub"));
        let got = at("gone");
        assert_eq!(got.cwd, base);
        assert_eq!(
            got.warnings,
            vec![format!(
                "Warning: workdir \"gone\" is unavailable; using \"{}\".",
                base.display()
            )]
        );
        // Blank is no workdir at all: no warning.
        let got = at("   ");
        assert_eq!((got.cwd.as_path(), got.warnings.len()), (base, 0));
    }

    #[test]
    fn a_missing_base_falls_back_to_home() {
        let got = resolve(
            registry(),
            &WorkdirRequest {
                base: Some(Path::new("/nonexistent/agent-exec-base")),
                ..Default::default()
            },
        );
        assert_eq!(Some(got.cwd), std::env::home_dir());
    }

    #[test]
    fn the_tracked_directory_is_followed_only_when_asked_and_only_while_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let tracked = dir.path().join("went-here");
        std::fs::create_dir(&tracked).unwrap();
        let r = registry();
        r.set_scope_cwd(Some("agent-a"), tracked.clone());
        let base = dir.path();
        let ask = |track, scope| WorkdirRequest {
            requested: None,
            base: Some(base),
            track,
            scope,
        };
        assert_eq!(resolve(r, &ask(true, Some("agent-a"))).cwd, tracked);
        assert_eq!(resolve(r, &ask(false, Some("agent-a"))).cwd, base);
        // Another scope never sees it.
        assert_eq!(resolve(r, &ask(true, Some("agent-b"))).cwd, base);
        // An explicit workdir wins over the tracked one.
        let explicit = WorkdirRequest {
            requested: Some("."),
            ..ask(true, Some("agent-a"))
        };
        assert_eq!(resolve(r, &explicit).cwd, base);
        std::fs::remove_dir(&tracked).unwrap();
        let got = resolve(r, &ask(true, Some("agent-a")));
        assert_eq!(got.cwd, base);
        assert_eq!(
            got.warnings,
            vec![format!(
                "Warning: the tracked directory {} no longer exists; using {}.",
                tracked.display(),
                base.display()
            )]
        );
    }
}

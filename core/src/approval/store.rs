//! The exec approvals file (`~/.openclaw/exec-approvals.json`), read and written as OpenClaw B does.
//!
//! Reading is lenient inside a well-formed file (bad enum values and odd entries are dropped, bare
//! strings become entries) but strict about the file itself: a file we cannot parse is reported and
//! never rewritten, since rewriting it would lose whatever the person meant. Unknown fields are kept
//! so a newer writer's data survives our writes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use nix::errno::Errno;
#[cfg(unix)]
use nix::fcntl::{Flock, FlockArg};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::policy::{Ask, Security};
use crate::error::{AgentError, ErrorCode};
use crate::util::{now_ms, uuid_v4};

const FILE_NAME: &str = ".openclaw/exec-approvals.json";
const MAIN_AGENT: &str = "main";
const LEGACY_AGENT: &str = "default";
const WILDCARD_AGENT: &str = "*";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SocketConfig {
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub path: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Settings shared by `defaults` and each agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Defaults {
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub security: Option<Security>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub ask: Option<Ask>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub ask_fallback: Option<Security>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub auto_allow_skills: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowlistEntry {
    /// Filled with a fresh UUID on load when the file has none.
    #[serde(default, deserialize_with = "lenient_string")]
    pub id: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub pattern: String,
    /// Milliseconds since the Unix epoch.
    #[serde(
        default,
        deserialize_with = "lenient_millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_used_at: Option<u64>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_used_command: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_resolved_path: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub source: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEntry {
    #[serde(flatten)]
    pub settings: Defaults,
    #[serde(
        default,
        deserialize_with = "lenient_allowlist",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub allowlist: Vec<AllowlistEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalsFile {
    pub version: u32,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub socket: Option<SocketConfig>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub defaults: Option<Defaults>,
    #[serde(
        default,
        deserialize_with = "lenient_agents",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub agents: BTreeMap<String, AgentEntry>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for ApprovalsFile {
    fn default() -> Self {
        ApprovalsFile {
            version: 1,
            socket: None,
            defaults: None,
            agents: BTreeMap::new(),
            extra: Map::new(),
        }
    }
}

/// A value of the wrong shape counts as unset rather than spoiling the whole file.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(lenient::<D, String>(d)?.unwrap_or_default())
}

/// JavaScript writes `Date.now()`, but a hand edit may leave a float.
fn lenient_millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)))
}

fn lenient_allowlist<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<AllowlistEntry>, D::Error> {
    let Value::Array(items) = Value::deserialize(d)? else {
        return Ok(Vec::new());
    };
    Ok(items
        .into_iter()
        .filter_map(|item| match item {
            Value::String(pattern) => Some(AllowlistEntry {
                pattern,
                ..Default::default()
            }),
            obj @ Value::Object(_) => serde_json::from_value::<AllowlistEntry>(obj).ok(),
            _ => None,
        })
        .filter(|e| !e.pattern.trim().is_empty())
        .collect())
}

fn lenient_agents<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, AgentEntry>, D::Error> {
    let Value::Object(agents) = Value::deserialize(d)? else {
        return Ok(BTreeMap::new());
    };
    Ok(agents
        .into_iter()
        .filter_map(|(id, v)| match v {
            Value::Object(_) => serde_json::from_value(v).ok().map(|a| (id, a)),
            _ => None,
        })
        .collect())
}

/// The home directory of the account, where `$HOME` is not set.
#[cfg(unix)]
fn account_home() -> Option<PathBuf> {
    crate::util::account_home()
}

/// The profile directory (`%USERPROFILE%`), where `$HOME` is not set, as most Windows shells leave it.
#[cfg(windows)]
fn account_home() -> Option<PathBuf> {
    std::env::var_os("USERPROFILE")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn default_path_from(openclaw_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let base = openclaw_home
        .filter(|h| !h.is_empty())
        .or_else(|| home.filter(|h| !h.is_empty()))
        .map(PathBuf::from)
        .or_else(account_home)
        .unwrap_or_else(|| PathBuf::from("/"));
    base.join(FILE_NAME)
}

/// `$OPENCLAW_HOME/.openclaw/exec-approvals.json`, else the same under `$HOME`.
pub fn default_path() -> PathBuf {
    default_path_from(std::env::var_os("OPENCLAW_HOME"), std::env::var_os("HOME"))
}

fn invalid(path: &Path, what: impl std::fmt::Display) -> AgentError {
    AgentError::new(
        ErrorCode::InvalidApprovalsFile,
        format!(
            "{}: {what}. Fix or move the file; agent-exec did not change it.",
            path.display()
        ),
    )
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parse file bytes; `path` only names the file in errors.
fn parse(path: &Path, bytes: &[u8]) -> Result<ApprovalsFile, AgentError> {
    // An empty file holds nothing to lose, so it reads like a missing one (e.g. after `touch`).
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(ApprovalsFile::default());
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        let full = e.to_string();
        let reason = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(r, _)| r);
        invalid(
            path,
            format_args!(
                "invalid JSON at line {} column {} ({reason})",
                e.line(),
                e.column()
            ),
        )
    })?;
    let Value::Object(top) = &value else {
        return Err(invalid(
            path,
            format_args!(
                "the top level must be a JSON object, found {}",
                json_kind(&value)
            ),
        ));
    };
    match top.get("version") {
        Some(v) if v.as_u64() == Some(1) || v.as_f64() == Some(1.0) => {}
        Some(v) => {
            return Err(invalid(
                path,
                format_args!("unsupported \"version\": {v} (agent-exec reads version 1)"),
            ))
        }
        None => return Err(invalid(path, "missing \"version\": 1")),
    }
    let mut file: ApprovalsFile = serde_json::from_value(value).map_err(|e| invalid(path, e))?;
    file.version = 1;
    migrate_legacy_default(&mut file);
    for entry in file
        .agents
        .values_mut()
        .flat_map(|a| a.allowlist.iter_mut())
    {
        if entry.id.trim().is_empty() {
            entry.id = uuid_v4();
        }
    }
    Ok(file)
}

/// Older files kept the main agent under `default`.
fn migrate_legacy_default(file: &mut ApprovalsFile) {
    let Some(legacy) = file.agents.remove(LEGACY_AGENT) else {
        return;
    };
    let main = file.agents.entry(MAIN_AGENT.to_string()).or_default();
    let (m, l) = (&mut main.settings, legacy.settings);
    m.security = m.security.or(l.security);
    m.ask = m.ask.or(l.ask);
    m.ask_fallback = m.ask_fallback.or(l.ask_fallback);
    m.auto_allow_skills = m.auto_allow_skills.or(l.auto_allow_skills);
    for (k, v) in l.extra {
        m.extra.entry(k).or_insert(v);
    }
    let mut seen: std::collections::HashSet<String> = main
        .allowlist
        .iter()
        .map(|e| e.pattern.to_lowercase())
        .collect();
    for entry in legacy.allowlist {
        if seen.insert(entry.pattern.to_lowercase()) {
            main.allowlist.push(entry);
        }
    }
}

/// Read the approvals file. Missing means empty; malformed is an error and the file is left alone.
pub fn load(path: &Path) -> Result<ApprovalsFile, AgentError> {
    match fs::read(path) {
        Ok(bytes) => parse(path, &bytes),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(ApprovalsFile::default()),
        Err(e) => Err(invalid(path, format_args!("cannot read it ({e})"))),
    }
}

/// One agent's settings after falling back to `*` and `defaults`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentPolicy {
    pub security: Option<Security>,
    pub ask: Option<Ask>,
    pub ask_fallback: Option<Security>,
    pub auto_allow_skills: Option<bool>,
    /// The wildcard agent's entries, then the agent's own.
    pub allowlist: Vec<AllowlistEntry>,
}

pub fn resolve_agent(file: &ApprovalsFile, agent_id: Option<&str>) -> AgentPolicy {
    let id = agent_id.unwrap_or(MAIN_AGENT);
    let wildcard = file.agents.get(WILDCARD_AGENT);
    // Asking for `*` itself must not list its entries twice.
    let agent = file.agents.get(id).filter(|_| id != WILDCARD_AGENT);
    let layers: Vec<&Defaults> = [
        agent.map(|a| &a.settings),
        wildcard.map(|w| &w.settings),
        file.defaults.as_ref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    AgentPolicy {
        security: layers.iter().find_map(|d| d.security),
        ask: layers.iter().find_map(|d| d.ask),
        ask_fallback: layers.iter().find_map(|d| d.ask_fallback),
        auto_allow_skills: layers.iter().find_map(|d| d.auto_allow_skills),
        allowlist: wildcard
            .into_iter()
            .chain(agent)
            .flat_map(|a| a.allowlist.iter().cloned())
            .collect(),
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

fn io_error(path: &Path, doing: &str, e: impl std::fmt::Display) -> AgentError {
    AgentError::new(
        ErrorCode::InvalidApprovalsFile,
        format!("{}: cannot {doing} ({e})", path.display()),
    )
}

/// Files the approvals store makes are its owner's alone: mode 0600 on Unix. On Windows a new file
/// takes the ACL of its directory, the user's profile by default, which only the user (and
/// administrators) can read; the README says so.
fn private_file_options() -> OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    options.mode(0o600);
    options
}

fn open_lock_file(lock: &Path) -> Result<File, AgentError> {
    private_file_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock)
        .map_err(|e| io_error(lock, "open the lock file", e))
}

#[cfg(windows)]
fn lock_exclusive(lock: &Path) -> Result<File, AgentError> {
    let file = open_lock_file(lock)?;
    // LockFileEx; released when the handle closes.
    file.lock().map_err(|e| io_error(lock, "lock", e))?;
    Ok(file)
}

#[cfg(unix)]
fn lock_exclusive(lock: &Path) -> Result<Flock<File>, AgentError> {
    let mut file = open_lock_file(lock)?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(locked) => return Ok(locked),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, e)) => return Err(io_error(lock, "lock", e)),
        }
    }
}

/// How many times each file was rewritten (tests count the rewrites a batch makes).
#[cfg(test)]
pub(crate) static REWRITES: std::sync::Mutex<BTreeMap<PathBuf, usize>> =
    std::sync::Mutex::new(BTreeMap::new());

fn write_atomically(path: &Path, dir: &Path, file: &ApprovalsFile) -> Result<(), AgentError> {
    #[cfg(test)]
    {
        *REWRITES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(path.to_path_buf())
            .or_default() += 1;
    }
    let mut json = serde_json::to_vec_pretty(file).map_err(|e| io_error(path, "serialize", e))?;
    json.push(b'\n');
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| io_error(dir, "create a temp file in", e))?;
    #[cfg(unix)]
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o600))
        .map_err(|e| io_error(tmp.path(), "set the mode of", e))?;
    tmp.write_all(&json)
        .map_err(|e| io_error(tmp.path(), "write", e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| io_error(tmp.path(), "sync", e))?;
    tmp.persist(path)
        .map_err(|e| io_error(path, "replace", e.error))?;
    // Make the rename itself durable; the data is already safe, so a failure here is not fatal.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Locked read-modify-write. `modify` returns whether it changed anything; unchanged files are not
/// rewritten. The lock lives in a sibling file because the data file is replaced by rename, and a
/// lock on a replaced inode would protect nothing.
fn update<T>(
    path: &Path,
    modify: impl FnOnce(&mut ApprovalsFile) -> (bool, T),
) -> Result<T, AgentError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder
        .create(&dir)
        .map_err(|e| io_error(&dir, "create the directory", e))?;
    let lock = lock_exclusive(&lock_path(path))?;
    let mut file = load(path)?;
    let (changed, out) = modify(&mut file);
    if changed {
        write_atomically(path, &dir, &file)?;
    }
    drop(lock);
    Ok(out)
}

/// Add patterns to an agent's allowlist; returns those that were not already there.
pub fn add_allowlist_patterns(
    path: &Path,
    agent_id: Option<&str>,
    patterns: &[String],
    source: Option<&str>,
) -> Result<Vec<String>, AgentError> {
    let id = agent_id.unwrap_or(MAIN_AGENT);
    update(path, |file| {
        let agent = file.agents.entry(id.to_string()).or_default();
        let mut added = Vec::new();
        for pattern in patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
            if agent.allowlist.iter().any(|e| e.pattern == pattern) {
                continue;
            }
            agent.allowlist.push(AllowlistEntry {
                id: uuid_v4(),
                pattern: pattern.to_string(),
                source: source.map(str::to_string),
                ..Default::default()
            });
            added.push(pattern.to_string());
        }
        (!added.is_empty(), added)
    })
}

/// One use of an allowlist entry, to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryUse {
    /// `None`: the main agent.
    pub agent_id: Option<String>,
    pub pattern: String,
    pub command: String,
    pub resolved_path: Option<String>,
    /// When it was used (ms since the epoch).
    pub at_ms: u64,
}

/// Note that an agent's allowlist entry was just used. Does nothing if the agent has no such entry.
pub fn record_use(
    path: &Path,
    agent_id: Option<&str>,
    pattern: &str,
    command: &str,
    resolved_path: Option<&str>,
) -> Result<(), AgentError> {
    record_uses(
        path,
        &[EntryUse {
            agent_id: agent_id.map(str::to_string),
            pattern: pattern.to_string(),
            command: command.to_string(),
            resolved_path: resolved_path.map(str::to_string),
            at_ms: now_ms(),
        }],
    )
}

/// Record several uses in one locked rewrite (none if no entry matched). Later uses of an entry win.
pub fn record_uses(path: &Path, uses: &[EntryUse]) -> Result<(), AgentError> {
    update(path, |file| {
        let mut changed = false;
        for u in uses {
            let id = u.agent_id.as_deref().unwrap_or(MAIN_AGENT);
            let entry = file
                .agents
                .get_mut(id)
                .and_then(|a| a.allowlist.iter_mut().find(|e| e.pattern == u.pattern));
            let Some(entry) = entry else {
                continue;
            };
            entry.last_used_at = Some(u.at_ms);
            entry.last_used_command = Some(u.command.clone());
            if let Some(p) = &u.resolved_path {
                entry.last_resolved_path = Some(p.clone());
            }
            changed = true;
        }
        (changed, ())
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, contents: &str) -> PathBuf {
        let path = dir.join("exec-approvals.json");
        fs::write(&path, contents).unwrap();
        path
    }

    fn on_disk(path: &Path) -> Value {
        serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
    }

    fn patterns(entries: &[AllowlistEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.pattern.as_str()).collect()
    }

    #[test]
    fn missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = load(&dir.path().join("nope.json")).unwrap();
        assert_eq!(file, ApprovalsFile::default());
        assert_eq!(file.version, 1);
        assert_eq!(resolve_agent(&file, None), AgentPolicy::default());
        let file = load(&write(dir.path(), " \n")).unwrap();
        assert_eq!(file, ApprovalsFile::default());
    }

    #[test]
    fn default_path_prefers_openclaw_home() {
        let p = default_path_from(Some("/oc".into()), Some("/home/u".into()));
        assert_eq!(p, Path::new("/oc/.openclaw/exec-approvals.json"));
        let p = default_path_from(Some("".into()), Some("/home/u".into()));
        assert_eq!(p, Path::new("/home/u/.openclaw/exec-approvals.json"));
        let p = default_path_from(None, Some("/home/u".into()));
        assert_eq!(p, Path::new("/home/u/.openclaw/exec-approvals.json"));
        assert!(default_path_from(None, None).ends_with(".openclaw/exec-approvals.json"));
    }

    #[test]
    fn uuids_are_v4() {
        let a = uuid_v4();
        let b = uuid_v4();
        assert_ne!(a, b);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(a
            .chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)));
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
    }

    #[test]
    fn round_trip_keeps_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let original = json!({
            "version": 1,
            "futureTop": {"x": [1, 2]},
            "socket": {"path": "/run/oc.sock", "token": "t", "tls": true},
            "defaults": {"security": "allowlist", "ask": "on-miss", "colour": "blue"},
            "agents": {
                "main": {
                    "security": "full",
                    "note": "keep me",
                    "allowlist": [{
                        "id": "11111111-2222-4333-8444-555555555555",
                        "pattern": "/usr/bin/ls",
                        "lastUsedAt": 1700000000000u64,
                        "lastUsedCommand": "ls -la",
                        "lastResolvedPath": "/usr/bin/ls",
                        "source": "allow-always",
                        "comment": "from review"
                    }]
                }
            }
        });
        let path = write(dir.path(), &original.to_string());
        let file = load(&path).unwrap();
        assert_eq!(file.extra["futureTop"], json!({"x": [1, 2]}));
        assert_eq!(file.socket.as_ref().unwrap().token.as_deref(), Some("t"));
        let entry = &file.agents["main"].allowlist[0];
        assert_eq!(entry.last_used_at, Some(1_700_000_000_000));
        assert_eq!(entry.extra["comment"], json!("from review"));
        assert_eq!(serde_json::to_value(&file).unwrap(), original);

        // And through a real write.
        add_allowlist_patterns(&path, None, &["/usr/bin/cat".into()], None).unwrap();
        let mut after = on_disk(&path);
        let list = after["agents"]["main"]["allowlist"].as_array_mut().unwrap();
        assert_eq!(list.len(), 2);
        list.pop();
        assert_eq!(after, original);
    }

    #[test]
    fn legacy_default_merges_into_main() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1, "agents": {
                "default": {"security": "deny", "ask": "always", "legacy": 1,
                            "allowlist": ["/usr/bin/LS", "/usr/bin/git"]},
                "main": {"security": "full", "allowlist": ["/usr/bin/ls"]}
            }}"#,
        );
        let file = load(&path).unwrap();
        assert!(!file.agents.contains_key("default"));
        let main = &file.agents["main"];
        assert_eq!(main.settings.security, Some(Security::Full));
        assert_eq!(main.settings.ask, Some(Ask::Always));
        assert_eq!(main.settings.extra["legacy"], json!(1));
        assert_eq!(patterns(&main.allowlist), ["/usr/bin/ls", "/usr/bin/git"]);

        // Only `default`: it simply becomes `main`, and a write persists the migration.
        let path = write(
            dir.path(),
            r#"{"version": 1, "agents": {"default": {"ask": "off"}}}"#,
        );
        add_allowlist_patterns(&path, None, &["/bin/x".into()], None).unwrap();
        let v = on_disk(&path);
        assert!(v["agents"].get("default").is_none());
        assert_eq!(v["agents"]["main"]["ask"], json!("off"));
    }

    #[test]
    fn resolution_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1,
                "defaults": {"security": "deny", "ask": "always", "askFallback": "full", "autoAllowSkills": true},
                "agents": {
                    "*": {"ask": "on-miss", "askFallback": "allowlist", "allowlist": ["/w/one", "/w/two"]},
                    "ops": {"security": "full", "allowlist": ["/ops/tool"]}
                }}"#,
        );
        let file = load(&path).unwrap();
        let ops = resolve_agent(&file, Some("ops"));
        assert_eq!(ops.security, Some(Security::Full));
        assert_eq!(ops.ask, Some(Ask::OnMiss));
        assert_eq!(ops.ask_fallback, Some(Security::Allowlist));
        assert_eq!(ops.auto_allow_skills, Some(true));
        assert_eq!(patterns(&ops.allowlist), ["/w/one", "/w/two", "/ops/tool"]);

        let main = resolve_agent(&file, None);
        assert_eq!(main.security, Some(Security::Deny));
        assert_eq!(main.ask, Some(Ask::OnMiss));
        assert_eq!(patterns(&main.allowlist), ["/w/one", "/w/two"]);

        let star = resolve_agent(&file, Some("*"));
        assert_eq!(patterns(&star.allowlist), ["/w/one", "/w/two"]);
    }

    #[test]
    fn bare_strings_and_odd_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1, "agents": {
                "main": {"allowlist": ["/usr/bin/ls", {"pattern": "/usr/bin/git"}, 7, {"id": "x"}, "  ", null]},
                "broken": "not an object"
            }}"#,
        );
        let file = load(&path).unwrap();
        let list = &file.agents["main"].allowlist;
        assert_eq!(patterns(list), ["/usr/bin/ls", "/usr/bin/git"]);
        assert!(list.iter().all(|e| e.id.len() == 36));
        assert_ne!(list[0].id, list[1].id);
        assert!(!file.agents.contains_key("broken"));
    }

    #[test]
    fn invalid_enum_values_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1,
                "defaults": {"security": "sometimes", "ask": "on-miss", "autoAllowSkills": "yes"},
                "agents": {"main": {"security": "allowlist", "ask": 3, "askFallback": "maybe"}}}"#,
        );
        let file = load(&path).unwrap();
        let defaults = file.defaults.as_ref().unwrap();
        assert_eq!(defaults.security, None);
        assert_eq!(defaults.auto_allow_skills, None);
        let main = resolve_agent(&file, None);
        assert_eq!(main.security, Some(Security::Allowlist));
        assert_eq!(main.ask, Some(Ask::OnMiss));
        assert_eq!(main.ask_fallback, None);
        assert!(!serde_json::to_string(&file).unwrap().contains("sometimes"));
    }

    #[test]
    fn malformed_files_are_reported_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "{\n  \"version\": 1,\n    oops\n}",
                "invalid JSON at line 3 column 5",
            ),
            (
                r#"{"version": 2, "agents": {}}"#,
                "unsupported \"version\": 2",
            ),
            (r#"{"agents": {}}"#, "missing \"version\": 1"),
            (
                r#"[{"version": 1}]"#,
                "must be a JSON object, found an array",
            ),
            (r#""hello""#, "found a string"),
        ];
        for (contents, expected) in cases {
            let path = write(dir.path(), contents);
            let err = load(&path).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidApprovalsFile);
            assert!(
                err.message.contains(&path.display().to_string()),
                "{}",
                err.message
            );
            assert!(err.message.contains(expected), "{}", err.message);
            assert!(err.message.contains("did not change it"), "{}", err.message);

            let err = add_allowlist_patterns(&path, None, &["/bin/ls".into()], None).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidApprovalsFile);
            record_use(&path, None, "/bin/ls", "ls", None).unwrap_err();
            assert_eq!(fs::read_to_string(&path).unwrap(), contents);
        }
    }

    #[test]
    fn writes_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("fresh")
            .join("nested")
            .join("exec-approvals.json");
        let added = add_allowlist_patterns(
            &path,
            Some("ops"),
            &["/usr/bin/ls".into()],
            Some("allow-always"),
        )
        .unwrap();
        assert_eq!(added, ["/usr/bin/ls"]);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&lock_path(&path)), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&dir.path().join("fresh")), 0o700);

        // An existing, looser file is tightened by the rewrite.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        add_allowlist_patterns(&path, Some("ops"), &["/usr/bin/cat".into()], None).unwrap();
        assert_eq!(mode(&path), 0o600);

        let v = on_disk(&path);
        assert_eq!(v["version"], json!(1));
        assert_eq!(
            v["agents"]["ops"]["allowlist"][0]["source"],
            json!("allow-always")
        );
        assert!(v["agents"]["ops"]["allowlist"][1].get("source").is_none());
    }

    #[test]
    fn dedupe_by_exact_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1, "agents": {"main": {"allowlist": ["/usr/bin/ls"]}}}"#,
        );
        let added = add_allowlist_patterns(
            &path,
            None,
            &[
                "/usr/bin/ls".into(),
                "/usr/bin/git".into(),
                " /usr/bin/git ".into(),
                "/usr/bin/LS".into(),
                "".into(),
            ],
            None,
        )
        .unwrap();
        assert_eq!(added, ["/usr/bin/git", "/usr/bin/LS"]);
        let file = load(&path).unwrap();
        assert_eq!(
            patterns(&file.agents["main"].allowlist),
            ["/usr/bin/ls", "/usr/bin/git", "/usr/bin/LS"]
        );

        // Nothing new: the file is not rewritten at all.
        let before = fs::read(&path).unwrap();
        let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
        let inode = ino(&path);
        assert!(
            add_allowlist_patterns(&path, None, &["/usr/bin/ls".into()], None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(fs::read(&path).unwrap(), before);
        assert_eq!(ino(&path), inode);

        // Another agent's entries do not count.
        let added =
            add_allowlist_patterns(&path, Some("ops"), &["/usr/bin/ls".into()], None).unwrap();
        assert_eq!(added, ["/usr/bin/ls"]);
    }

    #[test]
    fn record_use_updates_only_that_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            r#"{"version": 1, "agents": {"main": {"allowlist": [
                {"id": "a", "pattern": "/usr/bin/ls"}, {"id": "b", "pattern": "/usr/bin/git"}]}}}"#,
        );
        let before = now_ms();
        record_use(
            &path,
            None,
            "/usr/bin/git",
            "git status",
            Some("/usr/bin/git"),
        )
        .unwrap();
        let file = load(&path).unwrap();
        let list = &file.agents["main"].allowlist;
        assert_eq!(list[0].last_used_at, None);
        assert!(list[1].last_used_at.unwrap() >= before);
        assert_eq!(list[1].last_used_command.as_deref(), Some("git status"));
        assert_eq!(list[1].last_resolved_path.as_deref(), Some("/usr/bin/git"));
        assert_eq!(list[1].id, "b");

        // Unknown pattern or agent: nothing is written.
        let bytes = fs::read(&path).unwrap();
        record_use(&path, None, "/usr/bin/nope", "nope", None).unwrap();
        record_use(&path, Some("ops"), "/usr/bin/git", "git", None).unwrap();
        assert_eq!(fs::read(&path).unwrap(), bytes);
        // Missing file: still nothing to record, and nothing created.
        let missing = dir.path().join("none.json");
        record_use(&missing, None, "/usr/bin/git", "git", None).unwrap();
        assert!(!missing.exists());
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-approvals.json");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let p = format!("/opt/t{t}/bin{i}");
                        let added =
                            add_allowlist_patterns(&path, None, std::slice::from_ref(&p), None)
                                .unwrap();
                        assert_eq!(added, [p]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let file = load(&path).unwrap();
        let mut got: Vec<String> = file.agents["main"]
            .allowlist
            .iter()
            .map(|e| e.pattern.clone())
            .collect();
        got.sort();
        let mut want: Vec<String> = (0..8)
            .flat_map(|t| (0..25).map(move |i| format!("/opt/t{t}/bin{i}")))
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    const CHILD_ENV: &str = "AGENT_EXEC_STORE_TEST_CHILD";

    /// Not a test on its own: the body runs only when `concurrent_processes_lose_nothing` starts
    /// this test binary as a child writer.
    #[test]
    fn child_writer() {
        let Some(spec) = std::env::var_os(CHILD_ENV) else {
            return;
        };
        let spec = spec.into_string().unwrap();
        let (path, tag) = spec.split_once('|').unwrap();
        for i in 0..25 {
            add_allowlist_patterns(Path::new(path), None, &[format!("/proc{tag}/bin{i}")], None)
                .unwrap();
        }
    }

    #[test]
    fn concurrent_processes_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-approvals.json");
        let exe = std::env::current_exe().unwrap();
        let children: Vec<_> = (0..4)
            .map(|n| {
                std::process::Command::new(&exe)
                    .args([
                        "--exact",
                        "approval::store::tests::child_writer",
                        "--test-threads=1",
                    ])
                    .env(CHILD_ENV, format!("{}|{n}", path.display()))
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let file = load(&path).unwrap();
        assert_eq!(file.agents["main"].allowlist.len(), 100);
    }
}

//! `preflightCommand`: OpenClaw B's script preflight, for the exec tool to run before a host run.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::to_napi;

/// Refuse a `python <file>.py` / `node <file>.js` command whose script (inside `cwd`, at most 512 KiB)
/// holds shell variable syntax in its code or starts with a shell line, and an interpreter command
/// mixed with other shell syntax, with B's texts and the code `ERR_PREFLIGHT_REJECTED`. Anything else
/// returns nothing. `path` is the `PATH` the command will run with (default: the host's). First, the
/// `/approve` guard: a command that would run `/approve <id> <decision>` is refused. `scripts: false`
/// skips reading scripts (a run on another machine).
#[napi(js_name = "preflightCommand")]
pub fn preflight_command(
    env: Env,
    command: String,
    cwd: String,
    path: Option<String>,
    scripts: Option<bool>,
) -> Result<()> {
    let host_path = std::env::var("PATH").ok();
    let (cwd, path) = (
        std::path::Path::new(&cwd),
        path.as_deref().or(host_path.as_deref()),
    );
    let checked = if scripts == Some(false) {
        crate::preflight::approve_guard::check(&command, cwd, path)
    } else {
        crate::preflight::check(&command, cwd, path)
    };
    checked.map_err(|e| to_napi(&env, &e))
}

//! Rules the tool adapters ask the runtime for instead of keeping them in JavaScript: how a call's
//! approval modes combine with the host's, and where a call's run starts.

use napi_derive::napi;
use serde_json::Value;

use crate::approval::policy::{max_ask, min_security, Ask, Security};
use crate::session::workdir::{self, WorkdirRequest};

/// Approval modes after tightening.
#[napi(object, js_name = "ApprovalModes")]
pub struct JsApprovalModes {
    #[napi(ts_type = "'deny' | 'allowlist' | 'full'")]
    pub security: String,
    #[napi(ts_type = "'off' | 'on-miss' | 'always'")]
    pub ask: String,
}

fn text<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v.and_then(|v| v.get(key)).and_then(Value::as_str)
}

/// The modes a tool call runs under: the host's configured `{security, ask}` tightened by what the
/// call asks for (it can only make them stricter: deny < allowlist < full, off < on-miss < always).
/// A value that names no mode, or is not a string, is ignored; absent ones count as `full` and `off`.
#[napi(
    ts_args_type = "configured: { security?: unknown; ask?: unknown }, requested?: { security?: unknown; ask?: unknown }"
)]
pub fn tighten_approval(configured: Value, requested: Option<Value>) -> JsApprovalModes {
    let security = |v: Option<&Value>| {
        text(v, "security")
            .and_then(Security::parse)
            .unwrap_or(Security::Full)
    };
    let ask = |v: Option<&Value>| text(v, "ask").and_then(Ask::parse).unwrap_or(Ask::Off);
    let requested = requested.as_ref();
    JsApprovalModes {
        security: min_security(security(Some(&configured)), security(requested))
            .as_str()
            .to_string(),
        ask: max_ask(ask(Some(&configured)), ask(requested))
            .as_str()
            .to_string(),
    }
}

/// Where a tool call's run starts, and the warnings its result carries.
#[napi(object, js_name = "ResolvedWorkdir")]
pub struct JsResolvedWorkdir {
    pub cwd: String,
    pub warnings: Vec<String>,
    /// The requested `workdir` is not a directory: `cwd` is the fallback the warning names.
    pub unavailable: bool,
}

/// Where a tool call's run starts: the model's `workdir` (relative to `cwd`, the host's directory,
/// which defaults to the process's), else with `trackCwd` the directory the scope's last run ended
/// in, else `cwd`; a directory that is gone falls back with OpenClaw's warning. A missing `cwd`
/// falls back to the home directory. A `workdir` that is not a string is ignored.
#[napi(
    ts_args_type = "options: { workdir?: unknown; cwd?: string; trackCwd?: boolean; scopeKey?: string }"
)]
pub fn resolve_workdir(options: Value) -> JsResolvedWorkdir {
    let o = Some(&options);
    let base = text(o, "cwd")
        .filter(|c| !c.is_empty())
        .map(std::path::Path::new);
    let resolved = workdir::resolve(
        crate::session::registry::global(),
        &WorkdirRequest {
            requested: text(o, "workdir"),
            base,
            track: options.get("trackCwd").and_then(Value::as_bool) == Some(true),
            scope: text(o, "scopeKey"),
        },
    );
    JsResolvedWorkdir {
        cwd: resolved.cwd.display().to_string(),
        warnings: resolved.warnings,
        unavailable: resolved.unavailable,
    }
}

//! AgentError -> JS `Error` with a stable `code` property.

use napi::{Env, JsError};

use crate::error::AgentError;

/// A napi error that throws (or rejects with) a JS Error whose `code` is the agent error code.
///
/// napi's own errors carry a fixed status enum as `code`; building the JS object here and handing
/// napi a reference to it keeps our code strings intact through sync throws and Promise rejections.
pub fn to_napi(env: &Env, e: &AgentError) -> napi::Error {
    let err: napi::Error<String> = napi::Error::new(e.code.as_str().to_string(), e.message.clone());
    let value = JsError::from(err).into_unknown(*env);
    napi::Error::from(value)
}

//! The one bridge between the bindings' two kinds of failure and JavaScript.
//!
//! A binding meets two kinds of error: the engine's (a napi call failed; rare) and the caller's (bad
//! input, a refused command: an [`AgentError`] with a stable `code`). [`BindError`] holds either, so
//! `?` works on both and no early-return macro is needed; [`split`] decides at the boundary which
//! kind throws now and which travels into a promise as its rejection.

use std::future::Future;

use napi::bindgen_prelude::{FromNapiValue, Object, Unknown};
use napi::{Env, JsError, JsValue, ValueType};

use crate::error::AgentError;

/// A failure in a binding: the engine's, or the caller's typed error.
#[derive(Debug)]
pub enum BindError {
    Napi(napi::Error),
    Agent(AgentError),
}

pub type BindResult<T> = std::result::Result<T, BindError>;
pub type AgentResult<T> = std::result::Result<T, AgentError>;

impl From<napi::Error> for BindError {
    fn from(e: napi::Error) -> Self {
        BindError::Napi(e)
    }
}

impl From<AgentError> for BindError {
    fn from(e: AgentError) -> Self {
        BindError::Agent(e)
    }
}

impl BindError {
    /// The JS error to throw: a typed error keeps its `code`.
    pub fn into_napi(self, env: &Env) -> napi::Error {
        match self {
            BindError::Napi(e) => e,
            BindError::Agent(e) => to_napi(env, &e),
        }
    }
}

/// Engine errors throw now; typed errors are kept for the promise to reject with.
pub fn split<T>(r: BindResult<T>) -> napi::Result<AgentResult<T>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(BindError::Agent(e)) => Ok(Err(e)),
        Err(BindError::Napi(e)) => Err(e),
    }
}

/// A synchronous binding's result as JS sees it: typed errors throw with their `code`.
pub fn throw<T>(env: &Env, r: BindResult<T>) -> napi::Result<T> {
    r.map_err(|e| e.into_napi(env))
}

/// An async binding's work as `spawn_future_with_callback` takes it: the work ends in a typed result
/// (using `?` on typed errors), which the callback turns into a resolution or a rejection.
pub async fn settle<T>(work: impl Future<Output = AgentResult<T>>) -> napi::Result<AgentResult<T>> {
    Ok(work.await)
}

/// A napi error that throws (or rejects with) a JS Error whose `code` is the agent error code.
///
/// napi's own errors carry a fixed status enum as `code`; building the JS object here and handing
/// napi a reference to it keeps our code strings intact through sync throws and Promise rejections.
pub fn to_napi(env: &Env, e: &AgentError) -> napi::Error {
    let err: napi::Error<String> = napi::Error::new(e.code.as_str().to_string(), e.message.clone());
    let value = JsError::from(err).into_unknown(*env);
    napi::Error::from(value)
}

/// A typed result settled in a callback: a typed error rejects (or throws) with its `code`.
pub fn reject<T>(env: &Env, r: AgentResult<T>) -> napi::Result<T> {
    r.map_err(|e| to_napi(env, &e))
}

/// `value` converted to `T` when its JS type is `expected`, else `None`.
///
/// The one place the bindings convert a JS value themselves instead of through napi's typed
/// arguments (whose mismatch error is napi's, untyped): the type is checked first, so a wrong type
/// becomes our typed error at the call site, never napi's.
pub fn typed<'a, T: FromNapiValue>(
    env: &Env,
    value: &Unknown<'a>,
    expected: ValueType,
) -> napi::Result<Option<T>> {
    if value.get_type()? != expected {
        return Ok(None);
    }
    // SAFETY: `value` is a live handle of this env (it was passed to the binding that calls this),
    // and its JS type was just checked to be the one `T` converts from.
    Ok(Some(unsafe { T::from_napi_value(env.raw(), value.raw())? }))
}

/// `value` as an object, or `None` when it is not one (functions are objects too).
pub fn object_of<'a>(env: &Env, value: &Unknown<'a>) -> napi::Result<Option<Object<'a>>> {
    match value.get_type()? {
        ValueType::Function => typed(env, value, ValueType::Function),
        _ => typed(env, value, ValueType::Object),
    }
}

//! Reading fields of a JS options object, each with a typed error naming the option when its value
//! has the wrong type; and the check that refuses unknown option names with the nearest known one.
//!
//! Options arrive as plain objects rather than napi-derived structs so that a wrong type gets our
//! error code and a sentence naming the option, not napi's generic conversion message. Every parser
//! of options (exec's, the approval policy's, the sandbox's, the session calls') reads through this.

use napi::bindgen_prelude::*;
use napi::ValueType;

use super::errors::BindResult;
use crate::error::{AgentError, ErrorCode};

pub struct Fields<'a> {
    pub obj: Object<'a>,
}

pub(crate) fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::External => "an external",
        ValueType::BigInt => "a bigint",
        _ => "an unknown value",
    }
}

impl<'a> Fields<'a> {
    pub(crate) fn raw(&self, name: &str) -> Result<Option<(ValueType, Unknown<'a>)>> {
        let v: Option<Unknown<'a>> = self.obj.get(name)?;
        match v {
            None => Ok(None),
            Some(u) => {
                let t = u.get_type()?;
                if t == ValueType::Null || t == ValueType::Undefined {
                    Ok(None)
                } else {
                    Ok(Some((t, u)))
                }
            }
        }
    }

    pub fn string(&self, name: &str, code: ErrorCode) -> BindResult<Option<String>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::String, _)) => Ok(self.obj.get::<String>(name)?),
            Some((t, _)) => Err(AgentError::new(
                code,
                format!(
                    "The {name} option must be a string, but it is {}.",
                    type_name(t)
                ),
            )),
        };
        Ok(r?)
    }

    pub fn boolean(&self, name: &str) -> BindResult<Option<bool>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::Boolean, _)) => Ok(self.obj.get::<bool>(name)?),
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be true or false, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    /// A finite, non-negative number of milliseconds (or count).
    pub fn non_negative(&self, name: &str) -> BindResult<Option<f64>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::Number, _)) => {
                let n: f64 = self.obj.get::<f64>(name)?.unwrap_or(0.0);
                if !n.is_finite() || n < 0.0 {
                    Err(AgentError::invalid_option(format!(
                        "The {name} option must be a finite number of at least 0, but it is {n}."
                    )))
                } else {
                    Ok(Some(n))
                }
            }
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be a number, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    pub fn function(&self, name: &str) -> BindResult<bool> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(false),
            Some((ValueType::Function, _)) => Ok(true),
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be a function, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    pub fn object(&self, name: &str) -> Result<Option<(ValueType, Unknown<'a>)>> {
        self.raw(name)
    }

    /// An array of paths, or `None` when the option is absent.
    pub fn paths(&self, name: &str) -> BindResult<Option<Vec<std::path::PathBuf>>> {
        if self.object(name)?.is_none() {
            return Ok(None);
        }
        Ok(Some(
            self.strings(name)?
                .into_iter()
                .map(std::path::PathBuf::from)
                .collect(),
        ))
    }

    /// An array of strings (missing means empty), or `message` as the error when it is not one.
    pub fn strings_or(
        &self,
        name: &str,
        message: impl FnOnce() -> String,
    ) -> BindResult<Vec<String>> {
        self.strings(name).map_err(|e| match e {
            super::errors::BindError::Agent(_) => AgentError::invalid_option(message()).into(),
            other => other,
        })
    }

    /// An array of strings (missing means empty).
    pub fn strings(&self, name: &str) -> BindResult<Vec<String>> {
        let bad = || {
            AgentError::invalid_option(format!("The {name} option must be an array of strings."))
        };
        let Some((t, value)) = self.raw(name)? else {
            return Ok(Vec::new());
        };
        if t != ValueType::Object || !value.is_array()? {
            return Err(bad().into());
        }
        let arr: Array = self.obj.get(name)?.expect("checked above");
        let mut out = Vec::with_capacity(arr.len() as usize);
        for i in 0..arr.len() {
            let item: Option<Unknown> = arr.get(i)?;
            match item {
                Some(u) if u.get_type()? == ValueType::String => {
                    out.push(arr.get::<String>(i)?.unwrap_or_default())
                }
                _ => return Err(bad().into()),
            }
        }
        Ok(out)
    }
}

/// An object of string values (`undefined` values skipped), as `[key, value]` pairs.
pub fn env_object(f: &Fields, name: &str) -> BindResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    let Some((t, _)) = f.object(name)? else {
        return Ok(out);
    };
    if t != ValueType::Object {
        return Err(AgentError::new(
            ErrorCode::InvalidEnv,
            format!(
                "The {name} option must be an object of string values, but it is {}.",
                type_name(t)
            ),
        )
        .into());
    }
    let env_obj: Object = f.obj.get(name)?.expect("checked above");
    for key in Object::keys(&env_obj)? {
        let v: Option<Unknown> = env_obj.get(&key)?;
        let vt = match &v {
            Some(u) => u.get_type()?,
            None => ValueType::Undefined,
        };
        match vt {
            ValueType::String => {
                let value: String = env_obj.get(&key)?.unwrap_or_default();
                out.push((key, value));
            }
            // `{ FOO: undefined }` is how JS spells "not set".
            ValueType::Undefined => {}
            other => {
                return Err(AgentError::new(
                    ErrorCode::InvalidEnv,
                    format!(
                        "The env variable \"{key}\" must be a string, but it is {}. Convert it with String(value) or leave it out.",
                        type_name(other)
                    ),
                ).into())
            }
        }
    }
    Ok(out)
}

/// The first own key of `obj` with a defined value that is not in `known`.
pub(crate) fn first_unknown_key(obj: &Object, known: &[&str]) -> Result<Option<String>> {
    let names = obj.get_property_names()?;
    let len = names.get_array_length()?;
    for i in 0..len {
        let name: String = names.get_element(i)?;
        if known.contains(&name.as_str()) {
            continue;
        }
        let defined = match obj.get::<Unknown>(&name)? {
            Some(v) => v.get_type()? != ValueType::Undefined,
            None => false,
        };
        if defined {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// `Unknown exec option "timout". Did you mean "timeoutMs"?`, or the list of options when nothing is
/// close.
pub(crate) fn unknown_option_message(what: &str, name: &str, known: &[&str]) -> String {
    let lower = name.to_ascii_lowercase();
    // Jaro-Winkler favours a shared start, which is how option typos look (`timout`, `timeout`).
    let nearest = known
        .iter()
        .map(|k| (strsim::jaro_winkler(&lower, &k.to_ascii_lowercase()), *k))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((score, k)) if score >= 0.8 => {
            format!("Unknown {what} option \"{name}\". Did you mean \"{k}\"?")
        }
        _ => format!(
            "Unknown {what} option \"{name}\". Known options: {}.",
            known.join(", ")
        ),
    }
}

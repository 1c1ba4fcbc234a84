//! napi bindings.

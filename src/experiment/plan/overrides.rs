//! Overrides of a model's parameters at dotted paths: an experiment's `set` and axes,
//! `replay --set` and `advise`.

use crate::model::WorldSpec;
use serde_json::Value;

/// Apply `value` at dotted `path` in the parameter tree; the path must already exist.
pub fn apply_override(root: &mut Value, path: &str, value: Value) -> Result<(), String> {
    check_param_path(path)?;
    let mut node = root;
    let mut walked = String::new();
    for seg in path.split('.') {
        let Value::Object(map) = node else {
            return Err(format!(
                "`{walked}` has no fields, so `{path}` does not exist"
            ));
        };
        if !map.contains_key(seg) {
            let keys: Vec<&str> = map.keys().map(|s| s.as_str()).collect();
            return Err(format!(
                "unknown parameter `{seg}`{}; expected one of: {}",
                if walked.is_empty() {
                    String::new()
                } else {
                    format!(" in `{walked}`")
                },
                keys.join(", ")
            ));
        }
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(seg);
        node = map.get_mut(seg).expect("checked");
    }
    *node = value;
    Ok(())
}

/// Why overrides did not apply: override `i` (its path is missing, or its value does not fit
/// the parameter), or the overridden parameters as a whole (a check failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverrideError {
    /// Override `i` of the list, and why.
    At(usize, String),
    /// The parameters with every override applied, and why.
    Whole(String),
}

/// `world` with each `(path, value)` override applied in order (see [`apply_override`]) and
/// validated: the one way `replay --set` and `advise` change a model's parameters.
pub fn with_overrides(
    world: &WorldSpec,
    sets: &[(String, Value)],
) -> Result<WorldSpec, OverrideError> {
    let mut params = world.params_json();
    for (i, (k, v)) in sets.iter().enumerate() {
        apply_override(&mut params, k, v.clone()).map_err(|m| OverrideError::At(i, m))?;
        // Checked one at a time, so that the error names the override that does not fit.
        world
            .with_params_json(params.clone())
            .map_err(|m| OverrideError::At(i, m))?;
    }
    let w = world
        .with_params_json(params)
        .map_err(OverrideError::Whole)?;
    w.validate()
        .map_err(|e| OverrideError::Whole(e.to_string()))?;
    Ok(w)
}

/// A parameter path is dot-separated names, none empty.
pub(super) fn check_param_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("an empty parameter path; write a dotted path such as `vtgate.phase`".into());
    }
    if path.split('.').any(str::is_empty) {
        return Err(format!(
            "`{path}` has an empty segment; write a dotted path such as `vtgate.phase`"
        ));
    }
    Ok(())
}

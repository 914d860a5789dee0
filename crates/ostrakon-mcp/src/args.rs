//! Tool arguments, parsed so that a model that got one wrong is told which tool, which
//! argument, and what that argument is (the SDK's own extractor answers serde's bare
//! "missing field `fact`"). Unknown arguments are refused by the argument types
//! (`deny_unknown_fields`), with the names that are accepted.
//!
//! The wrapper is named `Parameters`, as the SDK's is: its `#[tool]` macro finds a tool's
//! input schema by that name.

use std::borrow::Cow;

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A tool's arguments, deserialized with errors that name the tool and the argument.
#[derive(Debug, Clone)]
pub struct Parameters<T>(pub T);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

impl<S, T> FromContextPart<ToolCallContext<'_, S>> for Parameters<T>
where
    T: DeserializeOwned + JsonSchema + 'static,
{
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = Value::Object(context.arguments.take().unwrap_or_default());
        serde_path_to_error::deserialize::<_, T>(arguments)
            .map(Parameters)
            .map_err(|e| refusal::<T>(&context.name, &e))
    }
}

/// The error for arguments that do not fit: the tool, the argument (its path, `facts[0].object`),
/// serde's reason, and the argument's own description from the tool's schema.
fn refusal<T: JsonSchema + 'static>(
    tool: &str,
    error: &serde_path_to_error::Error<serde_json::Error>,
) -> ErrorData {
    let reason = error.inner().to_string();
    let path = error.path().to_string();
    let schema = rmcp::handler::server::common::schema_for_input::<T>().ok();
    let properties = schema.as_ref().and_then(|s| s.get("properties")).and_then(Value::as_object);
    let names: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    // A missing argument is reported at its parent: name it from serde's reason.
    let missing = reason.strip_prefix("missing field `").and_then(|r| r.split('`').next());
    let argument = match (path.as_str(), missing) {
        (".", Some(name)) => name.to_owned(),
        (".", None) => String::new(),
        (p, Some(name)) => format!("{p}.{name}"),
        (p, None) => p.to_owned(),
    };
    let root = argument.split(['.', '[']).next().unwrap_or_default();
    let described = properties
        .and_then(|p| p.get(root))
        .and_then(|p| p.get("description"))
        .and_then(Value::as_str)
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" ").trim_end_matches('.').to_owned());
    let mut message = if argument.is_empty() {
        format!("{tool}: {reason}")
    } else if missing.is_some() {
        format!("{tool}: missing argument `{argument}`")
    } else {
        format!("{tool}: argument `{argument}`: {reason}")
    };
    if let Some(described) = &described {
        message.push_str(&format!(" (`{root}`: {described})"));
    }
    let expected = properties.and_then(|p| p.get(root)).and_then(expected_of);
    if let Some(expected) = &expected {
        message.push_str(&format!("; `{root}` must be {expected}"));
    }
    message.push_str(&format!("; {tool} takes {}", names.join(", ")));
    ErrorData::invalid_params(
        message,
        Some(
            json!({ "tool": tool, "argument": argument, "reason": reason, "expected": expected, "arguments": names }),
        ),
    )
}

/// What an argument's schema asks for, in words: one of its values, or its type (`a
/// string`, `a list of strings`, `an integer or null`).
fn expected_of(schema: &Value) -> Option<String> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return Some(format!("one of {}", values.join(", ")));
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let word = |kind: &str| match kind {
        "string" => "a string".to_owned(),
        "integer" => "an integer".to_owned(),
        "number" => "a number".to_owned(),
        "boolean" => "true or false".to_owned(),
        "object" => "an object".to_owned(),
        "null" => "null".to_owned(),
        "array" => match schema.get("items").and_then(|i| i.get("type")).and_then(Value::as_str) {
            Some(item) => format!("a list of {item}s"),
            None => "a list".to_owned(),
        },
        other => other.to_owned(),
    };
    Some(kinds.into_iter().map(word).collect::<Vec<_>>().join(" or "))
}

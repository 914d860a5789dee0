//! A tool's result: the operation's data (`result`), or a tool error carrying the GraphQL
//! errors with their codes; and the variables as GraphQL should get them.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// The tool result of a GraphQL response, `shape`d when it succeeded.
pub(crate) fn answer(response: async_graphql::Response, shape: fn(&mut Value)) -> CallToolResult {
    let data = response.data.into_json().unwrap_or(Value::Null);
    if !response.errors.is_empty() {
        let errors: Vec<Value> = response
            .errors
            .iter()
            .map(|e| {
                let code = e
                    .extensions
                    .as_ref()
                    .and_then(|x| x.get("code"))
                    .and_then(|c| c.clone().into_json().ok())
                    .unwrap_or(Value::Null);
                json!({ "code": code, "message": e.message, "path": e.path })
            })
            .collect();
        let first = &errors[0];
        let mut body = json!({ "code": first["code"], "message": first["message"], "errors": errors });
        // A mutation that wrote and then failed on a field still reports what it wrote.
        if let Some(result) = data.get("result").filter(|r| !r.is_null()) {
            body["result"] = result.clone();
        }
        return CallToolResult::structured_error(body);
    }
    let mut result = match data {
        Value::Object(mut map) => map.remove("result").unwrap_or(Value::Null),
        other => other,
    };
    shape(&mut result);
    // Structured content must be an object; a list (or null) is wrapped.
    let result = if result.is_object() { result } else { json!({ "result": result }) };
    CallToolResult::structured(result)
}

/// A tool error with one code, for failures before any GraphQL runs.
pub(crate) fn tool_error(code: &str, message: &str) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "code": code,
        "message": message,
        "errors": [{ "code": code, "message": message }],
    }))
}

/// Drops null members of objects, recursively: an argument left out is a variable left
/// out, so GraphQL applies its default (a null would override it, or be refused).
pub(crate) fn prune_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(prune_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}

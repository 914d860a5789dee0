//! The tools' input schemas as a model reads them, in fewer tokens: the tool list is sent
//! in every conversation, so each character is paid again and again. The rewriting keeps
//! what the schemas accept and say, and drops only what JSON Schema lets go unsaid:
//!
//! - an optional argument is simply not `required`: `"type": ["string", "null"]` with
//!   `"default": null` becomes `"type": "string"`, and `anyOf [X, null]` becomes X;
//! - an enum of described constants (`oneOf` of `const`s) becomes `enum`, its values'
//!   descriptions joined into the argument's own;
//! - `format` on numbers (`double`, `int64`: not a JSON Schema vocabulary for them),
//!   `writeOnly`, and `additionalProperties: false` (the arguments refuse unknown names
//!   themselves, and say which are accepted) are left out.
//!
//! The schemas come from `schemars` (through rmcp's `#[tool]`), which has no such mode;
//! hence this small rewrite of its output.

use serde_json::{Map, Value};

/// Rewrites one input schema in place (recursively: properties, items, `$defs`).
pub(crate) fn compact(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for child in map.values_mut() {
                compact(child);
            }
            compact_object(map);
        }
        Value::Array(items) => items.iter_mut().for_each(compact),
        _ => {}
    }
}

fn compact_object(map: &mut Map<String, Value>) {
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::Array(kinds)) = map.get("type") {
        let kinds: Vec<Value> = kinds.iter().filter(|k| k.as_str() != Some("null")).cloned().collect();
        if let [only] = kinds.as_slice() {
            map.insert("type".into(), only.clone());
        }
    }
    if let Some(Value::Array(options)) = map.get("anyOf") {
        let options: Vec<&Value> =
            options.iter().filter(|o| o.get("type").and_then(Value::as_str) != Some("null")).collect();
        if let [Value::Object(only)] = options.as_slice() {
            let only = only.clone();
            map.remove("anyOf");
            for (key, value) in only {
                map.entry(key).or_insert(value);
            }
        }
    }
    if let Some(Value::Array(options)) = map.get("oneOf") {
        let constants: Option<Vec<(Value, Option<String>)>> = options
            .iter()
            .map(|o| {
                let value = o.get("const")?.clone();
                Some((value, o.get("description").and_then(Value::as_str).map(str::to_owned)))
            })
            .collect();
        if let Some(constants) = constants {
            let said: Vec<String> = constants
                .iter()
                .filter_map(|(value, described)| {
                    described.as_ref().map(|d| format!("{}: {}", value.as_str().unwrap_or_default(), d))
                })
                .collect();
            map.remove("oneOf");
            map.insert("enum".into(), Value::Array(constants.into_iter().map(|(v, _)| v).collect()));
            if let Some(kind) = map.get("enum").and_then(|e| e.get(0)).and_then(json_type) {
                map.entry("type").or_insert(Value::String(kind.into()));
            }
            if !said.is_empty() {
                let own = map.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
                let joined =
                    if own.is_empty() { said.join(" ") } else { format!("{own} {}", said.join(" ")) };
                map.insert("description".into(), Value::String(joined));
            }
        }
    }
    let numeric = matches!(map.get("type").and_then(Value::as_str), Some("number" | "integer"));
    if numeric {
        map.remove("format");
    }
    map.remove("writeOnly");
    if map.get("additionalProperties") == Some(&Value::Bool(false)) {
        map.remove("additionalProperties");
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        // Doc comments wrap lines; the model reads one paragraph.
        *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
}

fn json_type(value: &Value) -> Option<&'static str> {
    match value {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn optional_arguments_enums_and_noise_become_plain_schema() {
        let mut schema = json!({
            "type": "object", "additionalProperties": false, "required": ["name"],
            "properties": {
                "name": { "type": "string", "description": "Its name,\n  e.g. \"Ana\"." },
                "age": { "type": ["integer", "null"], "format": "int64", "default": null },
                "when": { "type": ["string", "null"], "default": "2024" },
                "polarity": { "anyOf": [{ "$ref": "#/$defs/Polarity" }, { "type": "null" }], "default": null,
                              "description": "Stated or denied." },
                "cardinality": { "description": "How many.", "writeOnly": true, "oneOf": [
                    { "const": "ONE", "type": "string", "description": "One at a time." },
                    { "const": "MANY", "type": "string", "description": "Coexisting." } ] },
                "either": { "anyOf": [{ "type": "string" }, { "type": "integer" }] }
            }
        });
        compact(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object", "required": ["name"],
                "properties": {
                    "name": { "type": "string", "description": "Its name, e.g. \"Ana\"." },
                    "age": { "type": "integer" },
                    "when": { "type": "string", "default": "2024" },
                    "polarity": { "$ref": "#/$defs/Polarity", "description": "Stated or denied." },
                    "cardinality": { "type": "string", "enum": ["ONE", "MANY"],
                                     "description": "How many. ONE: One at a time. MANY: Coexisting." },
                    "either": { "anyOf": [{ "type": "string" }, { "type": "integer" }] }
                }
            })
        );
    }
}

//! What some tools do to their operation's answer before the model reads it: `recall`
//! answers flat, like `search` (its mutation nests the hits under the write's payload),
//! and `facts_as_of` says when one subject's predicate holds several values at once —
//! the sign of a predicate left MANY that should have been declared ONE.

use std::collections::BTreeMap;

use serde_json::Value;

/// `{seq, result: {basis, warnings, hits}}` as `{seq, basis, warnings, hits}`.
pub(crate) fn recalled(answer: &mut Value) {
    let Value::Object(map) = answer else { return };
    if let Some(Value::Object(inner)) = map.remove("result") {
        map.extend(inner);
    }
}

/// A fact's value as a person reads it.
fn shown(object: &Value) -> String {
    if let Some(name) = object.pointer("/entity/name").and_then(Value::as_str) {
        return name.to_owned();
    }
    ["string", "integer", "float", "boolean", "time"]
        .iter()
        .find_map(|k| object.get(*k).filter(|v| !v.is_null()))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .unwrap_or_default()
}

/// Adds `note` when facts in force share a subject and predicate.
pub(crate) fn note_coexisting(answer: &mut Value) {
    let Some(nodes) = answer.get("nodes").and_then(Value::as_array) else { return };
    let mut slots: BTreeMap<(String, String), (String, Vec<String>)> = BTreeMap::new();
    for fact in nodes {
        let in_force = fact.get("status").and_then(Value::as_str) == Some("CURRENT")
            && fact.get("polarity").and_then(Value::as_str) != Some("NEGATED");
        if !in_force {
            continue;
        }
        let subject = fact.pointer("/subject/id").and_then(Value::as_str).unwrap_or_default();
        let name = fact.pointer("/subject/name").and_then(Value::as_str).unwrap_or_default();
        let predicate = fact.get("predicate").and_then(Value::as_str).unwrap_or_default();
        let slot = slots
            .entry((subject.to_owned(), predicate.to_owned()))
            .or_insert_with(|| (name.to_owned(), Vec::new()));
        slot.1.push(fact.get("object").map(shown).unwrap_or_default());
    }
    let notes: Vec<String> = slots
        .iter()
        .filter(|(_, (_, values))| values.len() > 1)
        .map(|((_, predicate), (name, values))| {
            format!(
                "{name} {predicate} has {} values at once ({}): {predicate} is MANY, so its values coexist. If a new \
                 value replaces the old one, declare it ONE with define_predicate.",
                values.len(),
                values.join(", ")
            )
        })
        .collect();
    if let (false, Value::Object(map)) = (notes.is_empty(), answer) {
        map.insert("note".into(), Value::String(notes.join(" ")));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn two_values_of_one_slot_in_force_get_a_note_and_one_does_not() {
        let fact = |id: &str, city: &str, status: &str| {
            json!({ "subject": { "id": "1", "name": "Ana" }, "predicate": "livesIn", "status": status,
                    "polarity": "ASSERTED", "object": { "entity": { "id": id, "name": city } } })
        };
        let mut two = json!({ "nodes": [fact("2", "Lyon", "CURRENT"), fact("3", "Berlin", "CURRENT")] });
        note_coexisting(&mut two);
        let note = two["note"].as_str().unwrap();
        assert!(note.contains("Ana livesIn has 2 values at once (Lyon, Berlin)"), "{note}");
        let mut one = json!({ "nodes": [fact("2", "Lyon", "SUPERSEDED"), fact("3", "Berlin", "CURRENT")] });
        note_coexisting(&mut one);
        assert!(one.get("note").is_none());
        let mut flat = json!({ "seq": 4, "result": { "hits": [], "basis": { "seq": 4 } } });
        recalled(&mut flat);
        assert_eq!(flat, json!({ "seq": 4, "hits": [], "basis": { "seq": 4 } }));
    }
}

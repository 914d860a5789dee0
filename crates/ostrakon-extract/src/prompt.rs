//! What the extractor asks a model, and the shape of the answer it asks for: the request
//! body of an OpenAI-compatible `chat/completions` call for one episode, with a JSON
//! schema (`response_format`) that the answer must follow.

use ostrakon_core::Episode;
use serde_json::{Value, json};

/// The prompt's version: part of every extraction's source, so that a new prompt reads
/// every episode again while the same prompt never reads one twice.
pub const PROMPT_VERSION: &str = "extract-1";

/// What the model is told once, before the episode.
const INSTRUCTIONS: &str = "You extract durable facts from one message of a conversation, for a memory.\n\
Return only facts the message states or plainly implies about people, places, organisations, \
things or events: who someone is, where they live or work, what they like, own, plan or did, \
and relations between them. Skip greetings, opinions about the conversation itself, and \
anything uncertain.\n\
Each fact: `subject` is the entity it is about, by its name as written (the speaker's name \
for \"I\"); `predicate` is a short relation in snake_case (lives_in, works_at, likes, \
plans_to, has_child, visited); `object` is the value, and `objectIsEntity` says whether it \
names an entity (a person, place, organisation, thing) rather than a value or description; \
`validFrom` and `validTo` are when it holds, as ISO 8601 dates or date-times, resolved \
against the message's time for relative expressions (\"last week\", \"next month\"), or \
null when the message does not say.\n\
Return {\"facts\": []} when the message states nothing durable.";

/// The JSON schema the answer must follow.
pub fn answer_schema() -> Value {
    let nullable_string = json!({ "type": ["string", "null"] });
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["facts"],
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["subject", "predicate", "object", "objectIsEntity", "validFrom", "validTo"],
                    "properties": {
                        "subject": { "type": "string" },
                        "predicate": { "type": "string" },
                        "object": { "type": "string" },
                        "objectIsEntity": { "type": "boolean" },
                        "validFrom": nullable_string,
                        "validTo": nullable_string,
                    }
                }
            }
        }
    })
}

/// The message that carries the episode: its time and speaker first, then its text.
pub fn episode_message(episode: &Episode) -> String {
    // The weekday too: "last Friday" is resolved from it.
    let day = episode.occurred_at.to_datetime().format("%A");
    let mut head = format!("Message time: {} ({day})\n", episode.occurred_at);
    if let Some(role) = &episode.role {
        head.push_str(&format!("Speaker: {role}\n"));
    }
    if let Some(thread) = &episode.thread {
        head.push_str(&format!("Conversation: {thread}\n"));
    }
    format!("{head}\n{}", episode.text)
}

/// The request body of a `chat/completions` call for `episode` to `model`.
pub fn request_body(model: &str, episode: &Episode) -> Value {
    json!({
        "model": model,
        "temperature": 0,
        "messages": [
            { "role": "system", "content": INSTRUCTIONS },
            { "role": "user", "content": episode_message(episode) },
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": { "name": "ostrakon_facts", "strict": true, "schema": answer_schema() }
        }
    })
}

//! Secrets out of text bound for an answer or a log line: the known ones (tokens, API
//! keys) wherever they appear, and what has the shape of one — a URL's user and password
//! (`nats://user:pass@host`), a bearer token, an `api_key=…`/`"password": "…"` value, an
//! `sk-…` key, a bearer or basic credential. Written by hand: a few fixed shapes, scanned once, need no regex engine.

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Names whose value is a secret in `name=value`, `name: value` and `"name": "value"`.
const SECRET_NAMES: [&str; 9] =
    ["api_key", "apikey", "api-key", "access_token", "token", "password", "passwd", "secret", "x-api-key"];

/// `text` with every secret in `known` (those shorter than 4 characters are not
/// secrets) and everything shaped like one replaced by [`REDACTED`].
pub fn redact(text: &str, known: &[&str]) -> String {
    let mut out = text.to_owned();
    for secret in known.iter().filter(|s| s.len() >= 4) {
        if out.contains(secret) {
            out = out.replace(secret, REDACTED);
        }
    }
    let out = url_credentials(&out);
    let out = after_marker(&out, "Bearer ", 1);
    let out = after_marker(&out, "Basic ", 8);
    let out = after_marker(&out, "sk-", 16);
    named_values(&out)
}

/// Characters a token, key or password is made of, as far as a scan can tell.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=' | '%')
}

/// The user and password of every URL (`scheme://user:pass@host`).
fn url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '>' | ','))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(userinfo) => {
                out.push_str(REDACTED);
                out.push_str(&authority[userinfo..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The token after each `marker` (when at least `min` characters long).
fn after_marker(text: &str, marker: &str, min: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let end = tail.find(|c: char| !is_token_char(c)).unwrap_or(tail.len());
        if end >= min && tail[..end] != *REDACTED {
            out.push_str(REDACTED);
        } else {
            out.push_str(&tail[..end]);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The value after each secret name followed by `=` or `:` (quoted or not).
fn named_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for name in SECRET_NAMES {
        let mut from = 0;
        while let Some(found) = lower[from..].find(name) {
            let start = from + found;
            from = start + name.len();
            // A whole name: not the tail of a longer word.
            let before = lower[..start].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let bytes = text.as_bytes();
            let mut i = from;
            if bytes.get(i) == Some(&b'"') || bytes.get(i) == Some(&b'\'') {
                i += 1;
            }
            while bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            if !matches!(bytes.get(i), Some(b'=' | b':')) {
                continue;
            }
            i += 1;
            while bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            let quoted = matches!(bytes.get(i), Some(b'"' | b'\''));
            if quoted {
                i += 1;
            }
            let value = &text[i..];
            let end = if quoted {
                value.find(['"', '\'']).unwrap_or(value.len())
            } else {
                value
                    .find(|c: char| c.is_whitespace() || matches!(c, '&' | ',' | ';' | '}' | ')'))
                    .unwrap_or(value.len())
            };
            if end > 0 && value[..end] != *REDACTED {
                cuts.push((i, i + end));
            }
        }
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in cuts {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(REDACTED);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_and_secret_shapes_are_redacted() {
        let key = "k3y-Very-Secret-123";
        assert_eq!(
            redact(&format!("called with {key} and failed"), &[key]),
            "called with [redacted] and failed"
        );
        assert_eq!(
            redact("cannot reach nats://alice:s3cret@10.0.0.5:4222/x: refused", &[]),
            "cannot reach nats://[redacted]@10.0.0.5:4222/x: refused"
        );
        assert_eq!(redact("https://example.com/v1 said 401", &[]), "https://example.com/v1 said 401");
        assert_eq!(
            redact("header Authorization: Bearer abc.def-123", &[]),
            "header Authorization: Bearer [redacted]"
        );
        assert_eq!(redact("got Bearer abc.def-123 back", &[]), "got Bearer [redacted] back");
        assert_eq!(
            redact("GET /v1?api_key=ABCDEF123&model=x failed", &[]),
            "GET /v1?api_key=[redacted]&model=x failed"
        );
        assert_eq!(
            redact(r#"{"error": "bad", "password": "hunter22", "token":"t0k"}"#, &[]),
            r#"{"error": "bad", "password": "[redacted]", "token":"[redacted]"}"#
        );
        assert_eq!(
            redact("Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQr", &[]),
            "Incorrect API key provided: sk-[redacted]"
        );
        // Words that merely contain a name, and short sk- words, stay.
        assert_eq!(redact("tokenizer: ok; task-sk-1 done", &[]), "tokenizer: ok; task-sk-1 done");
        assert_eq!(redact("the tokens were counted", &[]), "the tokens were counted");
    }
}

//! Names in NATS: the shard of a namespace, its subject, and back.

/// The stream of shard `shard`.
pub(crate) fn stream_name(shard: u32) -> String {
    format!("MNEMO_LOG_{shard}")
}

/// The shard that holds the namespace `name`, of `shards`.
pub(crate) fn shard_of(name: &str, shards: u32) -> u32 {
    crc32fast::hash(name.as_bytes()) % shards.max(1)
}

/// The subject of namespace `name` (a valid log name: `[A-Za-z0-9_.-]`): a dot would split
/// it into subject tokens, so it is written `=` (which names never contain).
pub fn subject_of(name: &str, shards: u32) -> String {
    format!("mnemo.log.{}.{}", shard_of(name, shards), name.replace('.', "="))
}

/// The namespace whose subject is `subject`, if it is one of Ostrakon's.
pub fn namespace_of(subject: &str) -> Option<String> {
    let rest = subject.strip_prefix("mnemo.log.")?;
    let (shard, token) = rest.split_once('.')?;
    shard.parse::<u32>().ok()?;
    (!token.is_empty() && !token.contains('.')).then(|| token.replace('=', "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_names_its_namespace_and_dots_stay_one_token() {
        for name in ["user-1", "a.b.c", "x_y"] {
            let subject = subject_of(name, 16);
            assert_eq!(subject.matches('.').count(), 3, "{subject}");
            assert_eq!(namespace_of(&subject).as_deref(), Some(name));
        }
        assert_eq!(namespace_of("other.subject.1.x"), None);
    }
}

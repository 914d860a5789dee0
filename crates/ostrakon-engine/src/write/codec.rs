//! A batch's bytes in the log: its events, postcard-encoded after one format byte
//! ([`EVENT_FORMAT`]). The log frames and checksums them; this is what is inside.

use ostrakon_core::{EVENT_FORMAT, Event, Namespace};

use crate::error::storage::StorageError;

/// The payload of a batch of `events`.
pub(crate) fn encode(events: &[Event]) -> Result<Vec<u8>, StorageError> {
    let mut payload = vec![EVENT_FORMAT];
    postcard::to_io(events, &mut payload).map_err(|e| StorageError::Encode(e.to_string()))?;
    Ok(payload)
}

/// The events of batch `seq` of `ns`, from its payload.
pub(crate) fn decode(ns: &Namespace, seq: u64, payload: &[u8]) -> Result<Vec<Event>, StorageError> {
    let err = |reason: String| StorageError::Decode { namespace: ns.to_string(), seq, reason };
    match payload.split_first() {
        Some((&EVENT_FORMAT, body)) => postcard::from_bytes(body).map_err(|e| err(e.to_string())),
        Some((version, _)) => Err(err(format!("unsupported event format {version}"))),
        None => Err(err("empty batch".into())),
    }
}

//! Importing a file of operation lines (`ops.rs`) into a store, as `ostrakon import` does:
//! three stages, each on its own thread, lines in file order throughout — reading and
//! parsing (needs nothing of the store); validating a batch and queueing it on the log
//! (each batch sees the names of the ones before it); making queued batches durable
//! (those queued meanwhile share one fsync) and applying them. A line that cites records
//! by id, and every op but `assertFacts`, waits until the earlier ones are applied.

use std::io::BufRead;
use std::sync::Arc;

use ostrakon_engine::Store;

use crate::exec::{build::schema, limits::Limits};
use crate::ops::{self, Rejection};

/// How many lines may be validated ahead of the one being applied.
const IMPORT_QUEUE: usize = 8;

/// What an import did: the lines accepted, and those refused (1-based line number, why).
#[derive(Debug, Default)]
pub struct Imported {
    /// Lines whose operation was applied.
    pub accepted: u64,
    /// Lines refused, in file order, with the reason; nothing of them was stored.
    pub rejected: Vec<(usize, Rejection)>,
}

/// Why an import stopped before the end of its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The input could not be read at this (1-based) line.
    #[error("line {line}: {source}")]
    Read {
        /// The line.
        line: usize,
        /// The reading error.
        source: std::io::Error,
    },
    /// A stage of the import failed (a bug rather than bad input).
    #[error("the import failed: {0}")]
    Failed(String),
}

/// What the validating stage hands to the applying one, in file order.
enum Stage<'s> {
    /// A line started: queued on the log, or done already.
    Line(usize, ops::Started<'s>),
    /// Answered once every line before it is applied.
    Settled(std::sync::mpsc::SyncSender<()>),
}

/// Imports every line of `reader` into `store`, reporting progress as (bytes read,
/// lines accepted, lines rejected) after each line. Every accepted batch is durable when
/// this returns; a refused line stores nothing and the import goes on.
pub fn import(
    store: &Arc<Store>,
    reader: Box<dyn BufRead + Send>,
    progress: &(dyn Fn(u64, u64, usize) + Sync),
) -> Result<Imported, ImportError> {
    let schema = schema(Arc::clone(store), Limits::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ImportError::Failed(e.to_string()))?;
    let (tx, rx) =
        std::sync::mpsc::sync_channel::<(usize, std::io::Result<(u64, Option<ops::ReadLine>)>)>(16);
    let (queue, queued) = std::sync::mpsc::sync_channel::<Stage<'_>>(IMPORT_QUEUE);
    let store_ref: &Store = store;
    let read_bytes = std::sync::atomic::AtomicU64::new(0);
    let read_bytes = &read_bytes;
    // Lines reach the applying stage in file order, so the rejections come out in it.
    std::thread::scope(|scope| -> Result<Imported, ImportError> {
        scope.spawn(move || {
            let mut reader = reader;
            // One buffer for every line: a line of facts is parsed from it, not kept.
            let mut buffer = String::new();
            for n in 0.. {
                buffer.clear();
                let item = match reader.read_line(&mut buffer) {
                    Ok(0) => break,
                    Ok(len) => {
                        let line = buffer.strip_suffix('\n').unwrap_or(&buffer);
                        let line = line.strip_suffix('\r').unwrap_or(line);
                        Ok((len as u64, (!line.trim().is_empty()).then(|| ops::read_str(line))))
                    }
                    Err(e) => Err(e),
                };
                let failed = item.is_err();
                if tx.send((n, item)).is_err() || failed {
                    break;
                }
            }
        });
        let finisher = scope.spawn(move || {
            let mut done = Imported::default();
            for stage in queued {
                match stage {
                    Stage::Line(n, started) => {
                        match ops::finish_started(started) {
                            Ok(_) => done.accepted += 1,
                            Err(rejection) => {
                                tracing::debug!(line = n + 1, code = %rejection.code, message = %rejection.message, "rejected");
                                done.rejected.push((n + 1, rejection));
                            }
                        }
                        let bytes = read_bytes.load(std::sync::atomic::Ordering::Relaxed);
                        progress(bytes, done.accepted, done.rejected.len());
                    }
                    Stage::Settled(settled) => {
                        let _ = settled.send(());
                    }
                }
            }
            done
        });
        let settle = || {
            let (done, settled) = std::sync::mpsc::sync_channel(1);
            if queue.send(Stage::Settled(done)).is_ok() {
                let _ = settled.recv();
            }
        };
        let read_lines = || -> Result<(), ImportError> {
            for (n, item) in rx {
                let (len, read) = item.map_err(|source| ImportError::Read { line: n + 1, source })?;
                read_bytes.fetch_add(len, std::sync::atomic::Ordering::Relaxed);
                let Some(read) = read else { continue };
                if !read.queues() {
                    settle();
                }
                let started = runtime.block_on(ops::start_read(&schema, store_ref, read));
                if queue.send(Stage::Line(n, started)).is_err() {
                    break;
                }
            }
            Ok(())
        };
        let read = read_lines();
        drop(queue);
        let finished =
            finisher.join().map_err(|_| ImportError::Failed("the applying thread failed".into()))?;
        read.map(|()| finished)
    })
}

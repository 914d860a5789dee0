//! Group commit on a log that other writers append to too (a replicated stream, logs in
//! memory shared by several stores): the part of appending that does not depend on where
//! the records are kept, so that every shared backend refuses stale writers alike.
//!
//! `submit` seals a batch's frame (its seq follows the last one queued; its system time
//! is above every one handed out) and queues it; the first `wait`er with nothing in flight
//! publishes everything queued as one group, expecting the last record this handle knows
//! ([`Publish::publish`] stores the group only right after it). On success every batch of
//! the group is durable. When the group is refused — another writer appended first, or
//! the store did not answer — every batch queued in it or after it is refused (each was
//! prepared on top of the batches before it), and the handle counts one more refusal.
//!
//! **Why the count.** A refused batch's seq is handed out again, so a seq alone does not
//! say which batch a writer prepared on: after its batch 10 was refused and another
//! writer's batch 10 was read, "after batch 10" names a different record than the one the
//! writer validated against and took ids after. A writer therefore submits with the
//! refusals it has seen ([`After::refusals`]); a submit that has not seen the latest one is
//! refused at once, under the same lock as the refusal itself, and the writer must catch up
//! from what the log holds before it prepares again. So a batch is stored only on top of
//! exactly the records its writer prepared it on.
//!
//! Outcomes are kept per batch until its waiter takes them: none is ever forgotten, so a
//! refused batch can never be reported durable however long its waiter was descheduled.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crate::error::LogError;
use crate::frames::encode_frame;
use crate::log::{Clock, Ticket};
use crate::record::Committed;

/// Where a submitted batch must go, and until when it may wait for the log.
#[derive(Clone, Copy, Debug)]
pub struct After {
    /// The last batch its writer has seen (applied, or queued by it): the batch goes right
    /// after it or not at all. 0: none.
    pub seq: u64,
    /// The handle's refusals (`RecordLog::refusals`) when
    /// the writer last caught up: a batch prepared before a later refusal may have been
    /// prepared on a refused one, and is refused.
    pub refusals: u64,
    /// When to stop retrying a log that does not answer, and refuse the batch as
    /// [`LogError::Unavailable`] (its outcome then unknown).
    pub deadline: Instant,
}

impl After {
    /// After batch `seq`, for a log that never refuses (one writer): no refusal to have
    /// seen, no deadline worth the name.
    pub fn only_writer(seq: u64) -> Self {
        After { seq, refusals: 0, deadline: Instant::now() + std::time::Duration::from_secs(3_600) }
    }
}

/// The last record a handle knows of: its batch, system time, and the position the store
/// gives it (a stream sequence; for logs in memory, the batch itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Known {
    /// Its batch.
    pub seq: u64,
    /// Its system time.
    pub time: i64,
    /// Where the store keeps it.
    pub position: u64,
}

/// Why a group was not stored.
#[derive(Clone, Debug)]
pub enum Refusal {
    /// Another writer appended first; the log now ends at batch `found` (as far as known).
    Conflict {
        /// The log's last batch.
        found: u64,
    },
    /// The store did not answer in time: the group may still appear, whole.
    Unavailable(String),
}

/// Where the records go: one group of frames, stored right after the record at
/// `after.position`, or refused.
pub trait Publish {
    /// Stores `frames` (the batches `group.0` to `group.1`, back to back) right after `after`,
    /// retrying an unanswered attempt (so that it lands once) until `deadline`; the
    /// position of the stored group.
    fn publish(
        &self,
        frames: Vec<u8>,
        after: Known,
        group: (Committed, Committed),
        deadline: Instant,
    ) -> Result<u64, Refusal>;
}

struct Queued {
    committed: Committed,
    frame: Vec<u8>,
    deadline: Instant,
}

#[derive(Default)]
struct State {
    known: Known,
    /// Frame bytes of every record known (the log's size as this handle counts it).
    size: u64,
    /// Sealed frames waiting for a publish, in seq order.
    queue: VecDeque<Queued>,
    /// The last batch of the group being published.
    in_flight: Option<Committed>,
    /// The last system time handed out.
    last_time: i64,
    /// Groups refused so far.
    refusals: u64,
    /// The last batch another writer was found to have appended, before this handle has
    /// read it: a submit expecting less is refused at once.
    seen_elsewhere: u64,
    /// The outcome of each batch whose group is done, by system time (unique per
    /// handle), until its waiter takes it.
    outcomes: HashMap<i64, Result<(), Refusal>>,
}

impl State {
    /// The last batch queued or in flight, else the last known.
    fn last_seq(&self) -> u64 {
        self.queue.back().map(|q| q.committed.seq).or(self.in_flight.map(|c| c.seq)).unwrap_or(self.known.seq)
    }

    /// Refuses `group` and everything queued after it (prepared on top of it).
    fn refuse(&mut self, group: &[Committed], refusal: &Refusal) {
        if let Refusal::Conflict { found } = refusal {
            self.seen_elsewhere = self.seen_elsewhere.max(*found);
        }
        self.refusals += 1;
        let queued: Vec<Committed> = self.queue.drain(..).map(|q| q.committed).collect();
        for c in group.iter().chain(&queued) {
            self.outcomes.insert(c.system_time, Err(refusal.clone()));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One namespace's appends on a shared log: the queue, what the handle knows of the log,
/// and the outcomes.
pub struct GroupCommit {
    name: String,
    state: Mutex<State>,
    done: Condvar,
    /// Largest group, in bytes (the store's largest message).
    max_group: usize,
}

impl GroupCommit {
    /// Appends to the log `name`, in groups of at most `max_group` bytes.
    pub fn new(name: &str, max_group: usize) -> Self {
        GroupCommit { name: name.to_owned(), state: Mutex::default(), done: Condvar::new(), max_group }
    }

    /// Queues `payload` as the batch after `after.seq` (see [`After`]): its ticket, or
    /// [`LogError::Conflict`] when the log (as this handle knows it) ends elsewhere or a
    /// group was refused since the writer caught up.
    pub fn submit(&self, payload: &[u8], after: After, clock: &Clock) -> Result<Ticket, LogError> {
        let max = self.max_group.saturating_sub(64);
        if payload.len() > max {
            return Err(LogError::TooLarge { len: payload.len(), max });
        }
        let mut state = lock(&self.state);
        let found = state.last_seq();
        if after.refusals != state.refusals || after.seq < state.seen_elsewhere {
            return Err(LogError::Conflict { expected: after.seq, found: found.max(state.seen_elsewhere) });
        }
        if after.seq != found {
            return Err(LogError::Conflict { expected: after.seq, found });
        }
        let time = clock().max(state.last_time.saturating_add(1)).max(state.known.time.saturating_add(1));
        state.last_time = time;
        let committed = Committed { seq: found + 1, system_time: time };
        let frame = encode_frame(committed.seq, time, payload);
        state.queue.push_back(Queued { committed, frame, deadline: after.deadline });
        Ok(Ticket::new(committed))
    }

    /// Returns once the submitted batch is durable, publishing groups through `store`
    /// while it waits; its refusal otherwise.
    pub fn wait(&self, ticket: Ticket, store: &dyn Publish) -> Result<Committed, LogError> {
        let committed = ticket.committed();
        let mut state = lock(&self.state);
        loop {
            if let Some(outcome) = state.outcomes.remove(&committed.system_time) {
                return match outcome {
                    Ok(()) => Ok(committed),
                    Err(Refusal::Conflict { found }) => {
                        Err(LogError::Conflict { expected: committed.seq - 1, found })
                    }
                    Err(Refusal::Unavailable(reason)) => Err(LogError::Unavailable { reason }),
                };
            }
            if state.in_flight.is_none() && !state.queue.is_empty() {
                state = self.lead(state, store);
            } else {
                state = self.done.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Publishes what is queued, as the group's leader.
    fn lead<'a>(&'a self, mut state: MutexGuard<'a, State>, store: &dyn Publish) -> MutexGuard<'a, State> {
        let mut frames = Vec::new();
        let mut group: Vec<Committed> = Vec::new();
        let mut deadline: Option<Instant> = None;
        while let Some(next) = state.queue.front() {
            if !frames.is_empty() && frames.len() + next.frame.len() > self.max_group {
                break;
            }
            let Some(next) = state.queue.pop_front() else { break };
            frames.extend_from_slice(&next.frame);
            group.push(next.committed);
            deadline = Some(deadline.map_or(next.deadline, |d| d.min(next.deadline)));
        }
        let (Some(&first), Some(&last), Some(deadline)) = (group.first(), group.last(), deadline) else {
            return state;
        };
        if state.known.seq + 1 != first.seq {
            // While the group waited, a read learned of another writer's batch with its seq:
            // the group was prepared on a state the log has left, and expecting the newly
            // learned record would store it as a second batch of that seq.
            let found = state.known.seq;
            state.refuse(&group, &Refusal::Conflict { found });
            self.done.notify_all();
            return state;
        }
        state.in_flight = Some(last);
        let after = state.known;
        let bytes = frames.len() as u64;
        drop(state);
        let outcome = store.publish(frames, after, (first, last), deadline);
        let mut state = lock(&self.state);
        state.in_flight = None;
        match outcome {
            Ok(position) => {
                if position > state.known.position {
                    state.known = Known { seq: last.seq, time: last.system_time, position };
                    state.size += bytes;
                }
                for c in &group {
                    state.outcomes.insert(c.system_time, Ok(()));
                }
            }
            Err(refusal) => state.refuse(&group, &refusal),
        }
        self.done.notify_all();
        state
    }

    /// Takes in a record read from the log at `position` (of `bytes` frame bytes, counted
    /// into the size once), when it is past what was known.
    pub fn learn(&self, record: Known, bytes: u64) {
        let mut state = lock(&self.state);
        if record.position <= state.known.position {
            return;
        }
        state.known = record;
        state.last_time = state.last_time.max(record.time);
        state.size += bytes;
    }

    /// The last record this handle knows of.
    pub fn known(&self) -> Known {
        lock(&self.state).known
    }

    /// The last batch queued or in flight, else the last known.
    pub fn last_seq(&self) -> u64 {
        lock(&self.state).last_seq()
    }

    /// The last batch this handle queued that may still become durable; 0 when none.
    pub fn own_pending(&self) -> u64 {
        let state = lock(&self.state);
        state.queue.back().map(|q| q.committed.seq).or(state.in_flight.map(|c| c.seq)).unwrap_or(0)
    }

    /// Groups refused so far.
    pub fn refusals(&self) -> u64 {
        lock(&self.state).refusals
    }

    /// Frame bytes of every record known.
    pub fn size(&self) -> u64 {
        lock(&self.state).size
    }

    /// The log's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

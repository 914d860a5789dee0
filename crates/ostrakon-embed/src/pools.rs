//! The single-threaded pools the encoders run on.

use std::path::Path;

use ostrakon_search::embedder::EmbedError;

/// `job(0)`, `job(1)`, … `job(workers - 1)`, each on a thread of its own (on the calling
/// thread when there is one): the results in that order, a worker that panicked as an error.
pub(crate) fn on_workers<T: Send>(
    workers: usize,
    job: impl Fn(usize) -> Result<T, EmbedError> + Sync,
) -> Vec<Result<T, EmbedError>> {
    if workers <= 1 {
        return vec![job(0)];
    }
    let job = &job;
    std::thread::scope(|scope| {
        let running: Vec<_> = (0..workers).map(|w| scope.spawn(move || job(w))).collect();
        running
            .into_iter()
            .map(|r| {
                r.join().unwrap_or_else(|_| {
                    Err(EmbedError::Inference { reason: "an embedding worker panicked".into() })
                })
            })
            .collect()
    })
}

/// A pool of one thread: the model's matrix products run on the pool they are called from,
/// so inside it they use one core. A `background` one yields the CPU to every other thread
/// of normal priority (the indexer's batches must not slow the requests meanwhile).
pub(crate) fn worker_pool(dir: &Path, background: bool) -> Result<rayon::ThreadPool, EmbedError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|_| "ostrakon-embed".to_owned())
        .start_handler(move |_| {
            if background {
                lower_priority();
            }
        })
        .build()
        .map_err(|err| EmbedError::Load { path: dir.to_owned(), reason: err.to_string() })
}

/// The calling thread at the lowest priority but one (nice 19 is left to the machine's
/// own chores). On Linux the nice value is the thread's own. Where it cannot be set, the
/// thread keeps its priority: only how the CPU is shared changes, never a result.
fn lower_priority() {
    #[cfg(unix)]
    let _ = rustix::process::setpriority_process(None, BACKGROUND_NICE);
}

/// The nice value of the threads that embed in the background.
#[cfg(unix)]
const BACKGROUND_NICE: i32 = 15;

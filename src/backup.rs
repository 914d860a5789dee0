//! `ostrakon backup` and `ostrakon restore`: an online copy of a data directory, and a data
//! directory made from one (see `ostrakon_engine::admin::backup`).

use std::path::Path;

pub(crate) fn backup(data: &Path, to: &Path) -> anyhow::Result<()> {
    if crate::cluster::selected() {
        anyhow::bail!(
            "on a cluster the logs live in JetStream: back up its streams and object store with the NATS tools \
             (nats stream backup); ostrakon backup copies a data directory"
        );
    }
    let started = std::time::Instant::now();
    let report = ostrakon_engine::admin::backup(data, to)?;
    for (ns, seq) in &report.namespaces {
        println!("{}: batch {}", ns.as_str(), seq.0);
    }
    println!(
        "backed up {} namespaces, {} derived files, {} bytes to {} in {:.1} s",
        report.namespaces.len(),
        report.derived_files,
        report.bytes,
        to.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub(crate) fn restore(from: &Path, data: &Path) -> anyhow::Result<()> {
    if crate::cluster::selected() {
        anyhow::bail!(
            "ostrakon restore writes a data directory; on a cluster restore its streams with the NATS tools"
        );
    }
    let restored = ostrakon_engine::admin::restore(from, data)?;
    for (ns, seq) in &restored {
        println!("{}: batch {}", ns.as_str(), seq.0);
    }
    println!("restored {} namespaces into {}", restored.len(), data.display());
    Ok(())
}

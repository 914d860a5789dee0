//! Texts per second of multilingual-e5-small (4-bit; one worker, then two) and
//! all-MiniLM-L6-v2 (one worker):
//! `cargo run --release -p ostrakon-embed --example e5_speed [TEXTS.jsonl]`.
use std::time::Instant;

use ostrakon_embed::{E5, Embedder, MiniLm, default_model_cache, locate_or_fetch, locate_or_fetch_e5};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let texts: Vec<String> = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(path)?.lines().take(500).map(str::to_owned).collect(),
        None => (0..500)
            .map(|i| format!("Turn {i}: we went camping with the kids two weekends ago and it rained the whole time, so we played cards."))
            .collect(),
    };
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let e5 = E5::load(&locate_or_fetch_e5(&default_model_cache(), &|l| eprintln!("{l}"))?)?;
    println!("e5: loaded in {:.2} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    e5.embed(&texts)?;
    let s = started.elapsed().as_secs_f64();
    println!("e5: {} texts in {s:.2} s: {:.0} texts/s", texts.len(), texts.len() as f64 / s);
    let two = E5::load_with_workers(&locate_or_fetch_e5(&default_model_cache(), &|l| eprintln!("{l}"))?, 2)?;
    let started = Instant::now();
    two.embed(&texts)?;
    let s = started.elapsed().as_secs_f64();
    println!("e5, two workers: {} texts in {s:.2} s: {:.0} texts/s", texts.len(), texts.len() as f64 / s);
    let started = Instant::now();
    let minilm = MiniLm::load(&locate_or_fetch(&default_model_cache(), &|l| eprintln!("{l}"))?)?;
    println!("MiniLM: loaded in {:.2} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    minilm.embed(&texts)?;
    let s = started.elapsed().as_secs_f64();
    println!("MiniLM: {} texts in {s:.2} s: {:.0} texts/s", texts.len(), texts.len() as f64 / s);
    Ok(())
}

//! The container image (`Dockerfile`): it builds, starts as its non-root user on a data
//! volume with the example configuration, reports healthy and answers a token's query.
//! Skipped, saying so, where no Docker daemon answers.

use std::process::Command;
use std::time::{Duration, Instant};

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker").args(args).output().unwrap()
}

fn daemon_answers() -> bool {
    Command::new("docker").arg("info").output().is_ok_and(|o| o.status.success())
}

#[test]
fn the_image_builds_starts_healthy_and_answers() {
    if !daemon_answers() {
        eprintln!("skipped: no Docker daemon answers `docker info`");
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let built = docker(&["build", "-t", "ostrakon-test", root]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let config = format!("{root}/deploy/ostrakon.toml:/etc/ostrakon/ostrakon.toml:ro");
    let run = docker(&["run", "-d", "--rm", "-p", "127.0.0.1::7070", "-v", &config, "ostrakon-test"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let id = String::from_utf8_lossy(&run.stdout).trim().to_owned();
    let stop = || docker(&["stop", &id]);
    let port = String::from_utf8_lossy(&docker(&["port", &id, "7070"]).stdout)
        .trim()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    let started = Instant::now();
    let health = loop {
        let state = docker(&["inspect", "-f", "{{.State.Health.Status}}", &id]);
        let state = String::from_utf8_lossy(&state.stdout).trim().to_owned();
        if state != "starting" || started.elapsed() > Duration::from_secs(120) {
            break state;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let user = docker(&["exec", &id, "id", "-u"]);
    let answer = Command::new("curl")
        .args([
            "-fsS",
            "-H",
            "Authorization: Bearer replace-with-a-long-secret",
            "-H",
            "Content-Type: application/json",
        ])
        .args(["-d", r#"{"query":"{ namespaces }"}"#, &format!("http://127.0.0.1:{port}/graphql")])
        .output()
        .unwrap();
    stop();
    assert_eq!(health, "healthy");
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "10001");
    assert!(String::from_utf8_lossy(&answer.stdout).contains("\"data\""), "{answer:?}");
}

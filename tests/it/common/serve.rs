//! The real `ostrakon serve` binary on a loopback port, and plain HTTP/1.1 to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// A running server and its address.
pub(crate) struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Never leave a server behind, whatever the test did.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `ostrakon serve` on an ephemeral loopback port and waits until /healthz answers.
pub(crate) fn start(data: &Path) -> Server {
    start_with(data, &[])
}

/// [`start`] with more environment variables.
pub(crate) fn start_with(data: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Server {
    start_with_args(data, env, &[])
}

/// [`start_with`] with more arguments to `ostrakon serve`.
pub(crate) fn start_with_args(
    data: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    args: &[&std::ffi::OsStr],
) -> Server {
    start_command(data, env, args, Stdio::inherit())
}

/// [`start_with_args`], logging at `info` into the returned text (every line the server
/// wrote to stderr so far), as well as to the test's stderr.
pub(crate) fn start_logged(
    data: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    args: &[&std::ffi::OsStr],
) -> (Server, std::sync::Arc<std::sync::Mutex<String>>) {
    let mut env = env.to_vec();
    env.push(("OSTRAKON_LOG", "info".as_ref()));
    let mut server = start_command(data, &env, args, Stdio::piped());
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let stderr = server.child.stderr.take().unwrap();
    let kept = std::sync::Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            kept.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    (server, log)
}

fn start_command(
    data: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    args: &[&std::ffi::OsStr],
    stderr: Stdio,
) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(args)
        .env("OSTRAKON_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    // The first line of stdout names the address; read it on a thread to bound the wait.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20)).expect("the server printed no address");
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("{line}"));
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches("/graphql").parse().unwrap();
    let server = Server { child, addr };
    for _ in 0..100 {
        if matches!(http(addr, "GET", "/healthz", ""), Ok((200, _))) {
            return server;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("/healthz never answered");
}

/// One HTTP/1.1 request on its own connection; the status and body.
pub(crate) fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    http_with(addr, method, path, "", body)
}

/// [`http`] with more header lines (each ending `\r\n`).
pub(crate) fn http_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no response head"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no status"))?;
    let chunked = head.lines().any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    Ok((status, if chunked { dechunk(body) } else { body.to_owned() }))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

pub(crate) fn graphql(addr: SocketAddr, query: &str, variables: Value) -> std::io::Result<Value> {
    graphql_as(addr, None, query, variables)
}

/// [`graphql`] with a bearer token.
pub(crate) fn graphql_as(
    addr: SocketAddr,
    token: Option<&str>,
    query: &str,
    variables: Value,
) -> std::io::Result<Value> {
    let headers = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let body = json!({ "query": query, "variables": variables }).to_string();
    let (status, body) = http_with(addr, "POST", "/graphql", &headers, &body)?;
    if status != 200 {
        return Err(std::io::Error::other(format!("status {status}: {body}")));
    }
    serde_json::from_str(&body).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

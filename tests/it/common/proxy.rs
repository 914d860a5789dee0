//! A TCP proxy on 127.0.0.1 that a node reaches NATS through, so that a test can cut the
//! connection between them (every open connection closed, new ones refused) or slow it
//! (each chunk held back a while), and heal it again.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One proxy: listens on `port`, forwards to its target.
pub(crate) struct Proxy {
    pub port: u16,
    state: Arc<State>,
}

struct State {
    target: SocketAddr,
    cut: AtomicBool,
    delay_micros: AtomicU64,
    stopped: AtomicBool,
    open: Mutex<Vec<TcpStream>>,
}

impl Proxy {
    /// A proxy to `target`, on a port of its own.
    pub(crate) fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            target,
            cut: AtomicBool::new(false),
            delay_micros: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let accepting = Arc::clone(&state);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if accepting.cut.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect_timeout(&accepting.target, Duration::from_secs(2)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                {
                    let mut open = accepting.open.lock().unwrap();
                    open.extend(client.try_clone().ok());
                    open.extend(server.try_clone().ok());
                }
                for (from, to) in [(client.try_clone(), server.try_clone()), (Ok(server), Ok(client))] {
                    let (Ok(from), Ok(to)) = (from, to) else { continue };
                    let state = Arc::clone(&accepting);
                    std::thread::spawn(move || pump(from, to, &state));
                }
            }
        });
        Proxy { port, state }
    }

    /// The URL a NATS client connects through.
    pub(crate) fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Closes every connection through it and refuses new ones until [`Proxy::heal`].
    pub(crate) fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        for stream in self.state.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Holds every chunk back `delay` before forwarding it (zero: none).
    pub(crate) fn delay(&self, delay: Duration) {
        self.state.delay_micros.store(delay.as_micros() as u64, Ordering::SeqCst);
    }

    /// Lets connections through again, with no delay.
    pub(crate) fn heal(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
        self.delay(Duration::ZERO);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        self.cut();
        // Wakes the accepting thread so that it sees `stopped`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, state: &State) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let delay = state.delay_micros.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
        if state.cut.load(Ordering::SeqCst) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

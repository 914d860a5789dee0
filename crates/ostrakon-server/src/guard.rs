//! The browser guard: a cross-site request, or one whose `Host` is not this machine in
//! loopback mode (DNS rebinding), is refused before anything runs.

use crate::state::AppState;
use std::net::IpAddr;

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::Response;

/// Refuses cross-site and rebinding requests before anything else runs.
pub(crate) async fn guard(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    state.check_browser(request.headers())?;
    Ok(next.run(request).await)
}

/// Whether a `Host` header names this machine: `localhost` (or a name under it), or a
/// loopback address, with any port.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        match rest.split_once(']') {
            Some((addr, _)) => addr,
            None => return false,
        }
    } else {
        host.rsplit_once(':')
            .map_or(host, |(name, port)| if port.chars().all(|c| c.is_ascii_digit()) { name } else { host })
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl AppState {
    /// Refuses what a browser page of another site could send: a `Host` that is not a
    /// loopback name when serving without tokens (DNS rebinding), and an `Origin` that is
    /// neither this server's nor allowed.
    pub(crate) fn check_browser(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or("\u{fffd}"));
        if !self.inner.config.requires_tokens()
            && let Some(host) = host
            && !is_loopback_host(host)
        {
            return Err(ApiError::Refused(format!(
                "Host {host:?} is not a loopback name or address; without tokens this server only answers \
                 requests addressed to this machine"
            )));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            // Browsers always send an Origin on cross-site POSTs and WebSocket upgrades; a
            // cross-site GET without one (an image or a link of another site's page, which
            // would run a SPARQL query) still says where it came from.
            if headers.get("sec-fetch-site").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
            {
                return Err(ApiError::Refused(
                    "a request from another site's page (Sec-Fetch-Site: cross-site) without an allowed Origin".into(),
                ));
            }
            return Ok(());
        };
        let origin = origin.to_str().unwrap_or("\u{fffd}");
        let allowed = match crate::config::normalize_origin(origin) {
            // `null` (sandboxed frames, local files) or something no browser sends.
            None => false,
            Some(normal) => {
                let same = host.is_some_and(|h| {
                    normal
                        .split_once("://")
                        .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(h.trim()))
                });
                same || self.inner.config.allowed_origins.contains(&normal)
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(ApiError::Refused(format!(
                "Origin {origin:?} may not call this server; add it to `allowed_origins` in the config"
            )))
        }
    }
}

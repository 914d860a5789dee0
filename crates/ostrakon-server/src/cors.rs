//! CORS as browsers expect it, for the pages of `allowed_origins` (and no other): a
//! preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered with the origin,
//! the methods and the headers a client of this API sends; every answer to such a page
//! names its origin, so the browser lets the page read it. A page of any other origin
//! gets no CORS header: its preflight is refused (403 `FORBIDDEN`), and its requests by
//! the browser guard, before anything runs.

use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, header, request::Parts};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// Whether `origin` is one of `allowed`.
fn is_allowed(allowed: &[String], origin: &HeaderValue) -> bool {
    origin
        .to_str()
        .ok()
        .and_then(crate::config::normalize_origin)
        .is_some_and(|normal| allowed.contains(&normal))
}

/// Refuses the preflight of a page whose origin is not allowed, with no CORS header.
pub(crate) async fn refuse_other_preflights(allowed: Vec<String>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let preflight =
        request.method() == Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    match headers.get(header::ORIGIN) {
        Some(origin) if preflight && !is_allowed(&allowed, origin) => {
            crate::error::ApiError::Refused(format!(
                "Origin {:?} may not call this server; add it to `allowed_origins` in the config",
                origin.to_str().unwrap_or("\u{fffd}")
            ))
            .into_response()
        }
        _ => next.run(request).await,
    }
}

/// The CORS layer for `allowed` (origins as [`crate::config::normalize_origin`] makes
/// them); none when no origin is allowed.
pub(crate) fn layer(allowed: &[String]) -> Option<CorsLayer> {
    if allowed.is_empty() {
        return None;
    }
    let allowed = allowed.to_vec();
    let origin = AllowOrigin::predicate(move |origin: &HeaderValue, _: &Parts| is_allowed(&allowed, origin));
    Some(
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                header::ACCEPT,
                HeaderName::from_static("apollographql-client-name"),
                HeaderName::from_static("apollographql-client-version"),
                HeaderName::from_static("mcp-session-id"),
                HeaderName::from_static("mcp-protocol-version"),
                HeaderName::from_static("last-event-id"),
            ])
            .expose_headers([HeaderName::from_static("mcp-session-id")])
            .max_age(PREFLIGHT_MAX_AGE),
    )
}

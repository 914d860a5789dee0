//! The pages the binary serves, embedded at build time: GraphiQL (GET `/graphql`, its
//! scripts and styles under `/assets/graphiql/`, from the npm registry at pinned versions:
//! `assets/README.md`) and the timeline page (`/ui/`). Nothing is loaded from elsewhere,
//! and the pages' Content-Security-Policy forbids it, so they work on a machine without a
//! network.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// What an HTML page may load: only this server (and data: URLs for icons and fonts).
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' \
     'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self' ws: wss:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A served file: its name, media type and bytes.
type Asset = (&'static str, &'static str, &'static [u8]);

const GRAPHIQL: &[Asset] = &[
    (
        "graphiql.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/graphiql/graphiql.min.js"),
    ),
    ("graphiql.min.css", "text/css; charset=utf-8", include_bytes!("../assets/graphiql/graphiql.min.css")),
    (
        "react.production.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/graphiql/react.production.min.js"),
    ),
    (
        "react-dom.production.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/graphiql/react-dom.production.min.js"),
    ),
];

const GRAPHIQL_PAGE: &[u8] = include_bytes!("../assets/graphiql/index.html");

const UI: &[Asset] = &[
    ("app.js", "text/javascript; charset=utf-8", include_bytes!("../assets/ui/app.js")),
    ("style.css", "text/css; charset=utf-8", include_bytes!("../assets/ui/style.css")),
    ("favicon.svg", "image/svg+xml", include_bytes!("../assets/ui/favicon.svg")),
];

const UI_PAGE: &[u8] = include_bytes!("../assets/ui/index.html");

fn page(body: &'static [u8]) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, PAGE_POLICY),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn file(table: &[Asset], name: &str, cache: &'static str) -> Response {
    match table.iter().find(|(n, _, _)| *n == name) {
        Some((_, media, body)) => (
            [
                (header::CONTENT_TYPE, *media),
                (header::CACHE_CONTROL, cache),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    }
}

/// The GraphiQL page.
pub(crate) fn graphiql_page() -> Response {
    page(GRAPHIQL_PAGE)
}

/// GraphiQL's scripts and styles: pinned versions, so they may be cached for a day.
pub(crate) async fn graphiql_file(Path(name): Path<String>) -> Response {
    file(GRAPHIQL, &name, "public, max-age=86400")
}

/// The timeline page.
pub(crate) async fn ui_index() -> Response {
    page(UI_PAGE)
}

/// The icon, also at `/favicon.ico`, where browsers look for it on every page (GraphiQL's
/// too): without it each page logs a failed request.
pub(crate) async fn favicon() -> Response {
    file(UI, "favicon.svg", "public, max-age=86400")
}

/// The timeline page's script and styles.
pub(crate) async fn ui_file(Path(name): Path<String>) -> Response {
    file(UI, &name, "no-cache")
}

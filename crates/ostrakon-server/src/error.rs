//! The one error type of the HTTP layer: details go to the log, the client gets a status
//! and a GraphQL-shaped body with a stable `extensions.code`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ostrakon_graphql::code;
use serde_json::json;
use thiserror::Error;

/// Why a request was refused before (or instead of) running GraphQL.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ApiError {
    /// Tokens are configured and the request carries none, or an unknown one.
    #[error("missing or unknown bearer token ({0})")]
    Unauthorized(&'static str),
    /// The token is valid but may not use this route.
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// A request a browser page of another site could have sent: a foreign `Origin`, a
    /// non-loopback `Host` without tokens, or a POST that is not `application/json`.
    #[error("refused: {0}")]
    Refused(String),
    /// The body is larger than the configured limit.
    #[error("request body larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit.
        limit: usize,
    },
    /// The body is not a GraphQL request.
    #[error("bad request: {0}")]
    BadRequest(String),
    /// Something failed inside the server.
    #[error("internal error: {0}")]
    Internal(String),
    /// A refusal with its own status and code (the SPARQL endpoint's errors).
    #[error("{message}")]
    Coded {
        /// The HTTP status.
        status: StatusCode,
        /// The stable code.
        code: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) | ApiError::Refused(_) => StatusCode::FORBIDDEN,
            ApiError::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Coded { status, .. } => *status,
        }
    }

    /// The stable code in `extensions.code`.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized(_) | ApiError::Forbidden(_) | ApiError::Refused(_) => code::FORBIDDEN,
            ApiError::BodyTooLarge { .. } => code::LIMIT_EXCEEDED,
            ApiError::BadRequest(_) => code::BAD_REQUEST,
            ApiError::Internal(_) => code::INTERNAL,
            ApiError::Coded { code, .. } => code,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = match &self {
            ApiError::Internal(detail) => {
                tracing::error!(error = %detail, "request failed");
                // The detail may name files or internals; the log has it.
                "internal error; see the server log".to_owned()
            }
            // Which of "missing" and "unknown" it was only helps someone guessing tokens.
            ApiError::Unauthorized(why) => {
                tracing::info!(reason = why, "request refused: no valid token");
                "missing or unknown bearer token".to_owned()
            }
            ApiError::Refused(why) => {
                tracing::info!(reason = %why, "request refused");
                self.to_string()
            }
            other => {
                tracing::debug!(error = %other, "request refused");
                other.to_string()
            }
        };
        let body = json!({ "errors": [{ "message": message, "extensions": { "code": self.code() } }] });
        let mut response = (self.status(), Json(body)).into_response();
        if matches!(self, ApiError::Unauthorized(_)) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

//! A store opened in this process that runs GraphQL documents: what the Python package's
//! `ostrakon.open(path)` drives, with the same schema, limits and embedder as `serve`.

use std::path::Path;
use std::sync::Arc;

use ostrakon_graphql::{Access, Limits};

/// An open data directory and the GraphQL schema over it. Dropping it closes the store
/// and releases the directory.
pub struct Embedded {
    schema: ostrakon_graphql::OstrakonSchema,
    runtime: tokio::runtime::Runtime,
}

impl Embedded {
    /// Opens (or creates) the data directory `data`, as `ostrakon serve` would; a
    /// directory another process holds is refused, naming it.
    pub fn open(data: &Path) -> anyhow::Result<Self> {
        let store = Arc::new(crate::open_store(data, ostrakon_engine::Residency::default(), 1)?);
        let schema = ostrakon_graphql::schema(store, Limits::default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(Embedded { schema, runtime })
    }

    /// Runs one GraphQL document with its variables (a JSON object, or none) and returns
    /// the response as JSON text: `data`, and `errors` with their codes. The caller has
    /// every right, as a local user of the directory has.
    pub fn execute(&self, document: &str, variables: Option<serde_json::Value>) -> String {
        let variables = variables.map(async_graphql::Variables::from_json).unwrap_or_default();
        let request = async_graphql::Request::new(document).variables(variables).data(Access::Local);
        let response = self.runtime.block_on(self.schema.execute(request));
        serde_json::to_string(&response).unwrap_or_else(|e| {
            serde_json::json!({ "errors": [{ "message": format!("cannot write the response: {e}"),
                "extensions": { "code": "INTERNAL" } }] })
            .to_string()
        })
    }
}

//! A store opened in this process that runs GraphQL documents: what the Python package's
//! `ostrakon.open(path)` drives, with the same schema, limits and embedder as `serve`.

use std::path::Path;
use std::sync::Arc;

use ostrakon_graphql::{Access, Limits};

/// An open data directory and the GraphQL schema over it. Dropping it closes the store
/// and releases the directory.
pub struct Embedded {
    store: Arc<ostrakon_engine::Store>,
    schema: ostrakon_graphql::OstrakonSchema,
    runtime: tokio::runtime::Runtime,
}

impl Embedded {
    /// Opens (or creates) the data directory `data`, as `ostrakon serve` would; a
    /// directory another process holds is refused, naming it.
    pub fn open(data: &Path) -> anyhow::Result<Self> {
        let store = Arc::new(crate::open::open_store(data, ostrakon_engine::admin::Residency::default(), 1)?);
        let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(Embedded { store, schema, runtime })
    }

    /// Runs one GraphQL document with its variables (a JSON object, or none) — its
    /// operation `operation` when it holds several — and returns the response as JSON
    /// text: `data`, and `errors` with their codes. The caller has every right, as a local
    /// user of the directory has.
    pub fn execute(
        &self,
        document: &str,
        variables: Option<serde_json::Value>,
        operation: Option<&str>,
    ) -> String {
        let variables = variables.map(async_graphql::Variables::from_json).unwrap_or_default();
        let mut request = async_graphql::Request::new(document).variables(variables).data(Access::Local);
        if let Some(name) = operation {
            request = request.operation_name(name);
        }
        let response = self.runtime.block_on(self.schema.execute(request));
        serde_json::to_string(&response).unwrap_or_else(|e| {
            serde_json::json!({ "errors": [{ "message": format!("cannot write the response: {e}"),
                "extensions": { "code": "INTERNAL" } }] })
            .to_string()
        })
    }

    /// Imports a file of operations in the import format (`ostrakon import`), each line
    /// one atomic batch; `progress` hears (bytes read, lines accepted, lines rejected) as
    /// it goes. A refused line stores nothing and is reported with its reason.
    pub fn import_jsonl(
        &self,
        file: &Path,
        progress: &(dyn Fn(u64, u64, usize) + Sync),
    ) -> anyhow::Result<ostrakon_graphql::import::Imported> {
        use anyhow::Context as _;
        let f = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        let reader = Box::new(std::io::BufReader::new(f));
        ostrakon_graphql::import::import(&self.store, reader, progress)
            .with_context(|| format!("importing {}", file.display()))
    }
}

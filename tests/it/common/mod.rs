//! Shared helpers for the workspace tests: the engine tests' fixture (a store with a
//! pinned clock, terse constructors for entities, facts and times), the project's root,
//! and the helpers of single areas.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub(crate) use ostrakon_testkit::engine::*;

/// The project's root: from `cargo test`'s environment when it sets one, so that a test
/// binary built in another checkout of the same sources (a shared target directory)
/// reads this checkout's files.
pub(crate) fn project_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), Into::into)
}

/// Runs a GraphQL operation as the local user; its data, which must come without errors.
pub(crate) async fn gql(schema: &ostrakon_graphql::OstrakonSchema, query: &str) -> serde_json::Value {
    let request = async_graphql::Request::new(query).data(ostrakon_graphql::Access::Local);
    let response = serde_json::to_value(schema.execute(request).await).unwrap();
    assert!(response["errors"].is_null(), "{query}\n{response}");
    response["data"].clone()
}

/// [`gql`] with variables.
pub(crate) async fn gql_with(
    schema: &ostrakon_graphql::OstrakonSchema,
    query: &str,
    variables: serde_json::Value,
) -> serde_json::Value {
    let request = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables))
        .data(ostrakon_graphql::Access::Local);
    let response = serde_json::to_value(schema.execute(request).await).unwrap();
    assert!(response["errors"].is_null(), "{query}\n{response}");
    response["data"].clone()
}

/// An in-memory store whose clock stands at 2030-01-01, and its GraphQL schema.
pub(crate) fn schema_in_2030() -> (std::sync::Arc<ostrakon_engine::Store>, ostrakon_graphql::OstrakonSchema) {
    use ostrakon_engine::core::{TimeZone, Timestamp};
    let now = Timestamp::parse("clock", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap();
    let storage = std::sync::Arc::new(ostrakon_engine::log::MemStorage::new());
    let store = std::sync::Arc::new(
        ostrakon_engine::Store::with_storage(storage, std::sync::Arc::new(move || now)).unwrap(),
    );
    let schema = ostrakon_graphql::schema(std::sync::Arc::clone(&store), ostrakon_graphql::Limits::default());
    (store, schema)
}

/// Runs a GraphQL operation that must fail; the code of its first error.
pub(crate) async fn gql_error(schema: &ostrakon_graphql::OstrakonSchema, query: &str) -> String {
    let request = async_graphql::Request::new(query).data(ostrakon_graphql::Access::Local);
    let response = serde_json::to_value(schema.execute(request).await).unwrap();
    response["errors"][0]["extensions"]["code"].as_str().unwrap_or_else(|| panic!("{response}")).to_owned()
}

pub(crate) mod cluster;
pub(crate) use ostrakon_testkit::graphql_fuzz as fuzz;
pub(crate) mod history;
pub(crate) mod proxy;
pub(crate) mod python;
pub(crate) mod serve;
pub(crate) use ostrakon_testkit::sparql_fuzz;
pub(crate) mod stub_model;

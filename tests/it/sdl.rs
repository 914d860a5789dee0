//! `schema/schema.graphql` is the SDL the server serves; this fails when they drift.
//! `UPDATE_EXPECT=1` rewrites the file.

#[test]
fn schema_file_matches_the_exported_sdl() {
    let path = crate::common::project_root().join("schema/schema.graphql");
    let sdl = ostrakon_graphql::sdl();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &sdl).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == sdl,
        "schema/schema.graphql differs from the exported SDL; run `UPDATE_EXPECT=1 cargo test --test it sdl::` and review"
    );
    for name in ["entity", "entities", "facts", "history", "snapshot", "neighbors", "episodes", "namespace"] {
        assert!(sdl.contains(&format!("\t{name}(")), "query {name} missing");
    }
    for name in [
        "recordEpisode",
        "assertFacts",
        "endFact",
        "retractFact",
        "definePredicate",
        "configureNamespace",
        "events",
    ] {
        assert!(sdl.contains(&format!("\t{name}(")), "operation {name} missing");
    }
}

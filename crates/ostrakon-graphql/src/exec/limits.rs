//! The limits every request is held to.

/// Limits every request is held to; exceeding one is a `LIMIT_EXCEEDED` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest selection set.
    pub max_depth: usize,
    /// Highest complexity: a field costs 1 plus its children's cost times the items it may
    /// return (its page size for a listing, the bound its field enforces for another list).
    pub max_complexity: usize,
    /// Most fields once fragments are expanded.
    pub max_fields: usize,
    /// Most aliased fields.
    pub max_aliases: usize,
    /// Most mutation fields (each is one batch) in one request.
    pub max_mutations: usize,
    /// Largest page (`first`) of a listing.
    pub max_page: usize,
    /// Most hops of `neighbors`.
    pub max_neighbor_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 16,
            max_complexity: 500_000,
            max_fields: 2_000,
            max_aliases: 100,
            max_mutations: 20,
            max_page: 1_000,
            max_neighbor_depth: 4,
        }
    }
}

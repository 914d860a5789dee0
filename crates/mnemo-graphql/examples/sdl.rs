//! Prints the schema's SDL.
fn main() {
    print!("{}", mnemo_graphql::sdl());
}

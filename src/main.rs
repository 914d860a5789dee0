//! The `ostrakon` binary: the command line of the library's [`ostrakon::run_cli`], which
//! the Python package's `ostrakon` command runs too.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(ostrakon::run_cli(std::env::args_os()))
}

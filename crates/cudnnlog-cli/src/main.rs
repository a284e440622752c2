//! The `cudnnlog` binary: everything is in the crate's library.

fn main() -> std::process::ExitCode {
    cudnnlog_cli::main()
}

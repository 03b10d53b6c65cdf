//! The `seal` binary: a thin shell over [`sealfs::cli`].

fn main() -> std::process::ExitCode {
    sealfs::cli::main()
}

//! The `seal` binary: a thin shell over [`sealfs::main`].

fn main() -> std::process::ExitCode {
    sealfs::main()
}

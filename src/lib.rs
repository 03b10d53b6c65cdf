//! sealfs: Seal v1 lockfiles for AI-agent extensions, enforced.
//!
//! Layers, top to bottom (data flows down), each a crate of the workspace so
//! that the compiler holds the layering: this crate's [`cli`] parses arguments
//! and renders results, [`run`] builds the sealed namespace and [`mount`]
//! serves the view over FUSE; `seal-gate` decides what a path may show (with
//! the machine policy and the agent surface table); `seal-core` knows the
//! spec and nothing above it.

//!
//! Nothing of this crate is used outside it but [`main`]: its modules are
//! private, so the compiler holds every item to a use inside the crate.

// Human text goes through `cli`'s `say!`, which a closed stderr cannot
// panic; machine output through writes whose error is dropped.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod cli;
mod mount;
mod run;

pub use cli::main;

//! sealfs: Seal v1 lockfiles for AI-agent extensions, enforced.
//!
//! Layers, top to bottom (data flows down), each a crate of the workspace so
//! that the compiler holds the layering: this crate's [`cli`] parses arguments
//! and renders results, [`run`] builds the sealed namespace and [`mount`]
//! serves the view over FUSE; `seal-gate` decides what a path may show (with
//! the machine policy and the agent surface table); `seal-core` knows the
//! spec and nothing above it.

pub mod cli;
pub mod mount;
pub mod run;

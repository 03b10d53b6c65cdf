//! sealfs: Seal v1 lockfiles for AI-agent extensions, enforced.
//!
//! Layers, top to bottom (data flows down): [`cli`] parses arguments and renders
//! results; [`run`] builds the sealed namespace; [`mount`] is the FUSE adapter;
//! [`gate`] decides what a path may show; [`core`] knows the spec. [`surfaces`]
//! is the built-in table of where agents load extensions from; [`policy`] is
//! the machine policy a security team sets, which no project can weaken.

pub mod cli;
pub mod core;
pub mod feed;
pub mod gate;
pub mod memory;
pub mod mount;
pub mod policy;
pub mod run;
pub mod snapshot;
pub mod surfaces;

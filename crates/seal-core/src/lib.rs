//! The Seal v1 core: everything the spec defines, and nothing about FUSE,
//! namespaces or terminals. The CLI, the gate and the mount are built on it.

pub mod digest;
pub mod discovery;
pub mod effort;
pub mod escape;
mod expected;
pub mod fs;
pub mod hash;
pub mod json;
pub mod lockfile;
pub mod paths;
pub mod pattern;
pub mod plan;
pub mod store;
pub mod verify;
pub mod walk;

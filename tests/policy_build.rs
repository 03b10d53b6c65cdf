//! The tests never read the host's machine policy, and the door that lets
//! them name their own exists only in test builds.
//!
//! seal-gate's `test-hooks` feature (SEAL_TEST_POLICY_PATH,
//! SEAL_TEST_SYSLOG_SOCKET) is enabled only through this package's
//! dev-dependency: Cargo's resolver 2 turns it on when test targets are
//! built (`cargo test`, and the `seal` binary the integration tests run)
//! and never for `cargo build` or `cargo install`. Both halves are checked
//! here on real builds; `seal --version` names the build.

mod support;

use std::path::Path;
use std::process::Command;

use support::seal_bin;

fn seal(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(seal_bin());
    cmd.args(args)
        .current_dir(std::env::temp_dir())
        .env_remove("SEAL_TEST_POLICY_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn policy_file(args_env: &[(&str, &str)], bin: &str) -> serde_json::Value {
    let mut cmd = Command::new(bin);
    cmd.args(["-C", "/", "policy", "--json"])
        .env_remove("SEAL_TEST_POLICY_PATH");
    for (k, v) in args_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_test_binary_has_the_hooks_says_so_and_reads_no_host_policy() {
    let (code, out, _) = seal(&["--version"], &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains("with test hooks") && out.contains("debug build"),
        "{out}"
    );
    // Without the variable: no machine policy, and never /etc/seal's.
    let doc = policy_file(&[], seal_bin());
    let path = doc["policyFile"]["path"].as_str().unwrap();
    assert_ne!(path, seal_gate::policy::DEFAULT_PATH);
    assert!(!Path::new(path).exists(), "{path}");
    assert_eq!(doc["policyFile"]["present"], false);
    // With it: the file it names.
    let doc = policy_file(
        &[("SEAL_TEST_POLICY_PATH", "/nonexistent/x.json")],
        seal_bin(),
    );
    assert_eq!(doc["policyFile"]["path"], "/nonexistent/x.json");
}

/// The features Cargo resolves for seal-gate in the build of `sealfs`, with
/// the given edge kinds (`normal` for `cargo build`, `all` for tests).
fn resolved_features(edges: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "sealfs",
            "-e",
            &format!("{edges},features"),
            "-i",
            "seal-gate",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn cargo_build_resolves_seal_gate_without_the_hooks() {
    assert!(
        !resolved_features("normal").contains("test-hooks"),
        "{}",
        resolved_features("normal")
    );
    // The same query sees them where tests are built: it can fail.
    assert!(resolved_features("all").contains("test-hooks"));
}

#[test]
fn a_binary_cargo_build_makes_has_no_door_to_another_policy() {
    // A real `cargo build` of the binary, in a target directory of its own
    // (kept between runs, so only the first build is slow).
    let manifest = env!("CARGO_MANIFEST_DIR");
    let target = Path::new(manifest).join("target/plain-build");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--bin", "seal", "--target-dir"])
        .arg(&target)
        .current_dir(manifest)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = target.join("debug/seal");
    let bin = bin.to_str().unwrap();
    let version = Command::new(bin).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    assert_eq!(
        version,
        format!("seal {} (debug build)\n", env!("CARGO_PKG_VERSION"))
    );
    // The variable changes nothing: the policy is the built-in path's.
    let doc = policy_file(&[("SEAL_TEST_POLICY_PATH", "/nonexistent/x.json")], bin);
    assert_eq!(doc["policyFile"]["path"], seal_gate::policy::DEFAULT_PATH);
}

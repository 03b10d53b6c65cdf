//! `seal policy [--json]`: the policy in force here — the built-in defaults,
//! the machine policy file, and what the project's `seal.json` asks — with
//! where each setting comes from. How a security team checks a machine
//! (docs/POLICY.md): a refused policy file is exit 2, as for every command.

use std::fmt::Write as _;
use std::io::Write as _;
use std::os::fd::AsFd;

use serde_json::{Value, json};

use super::{CliError, Context, Done};
use seal_core::escape::{escaped, escaped_os};
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::store::StoreError;
use seal_gate::policy::{MachinePolicy, Source, lockfile_bytes, policy_path, syslog_socket};

/// What the project's `seal.json` says.
enum ProjectLock {
    Present(Lockfile),
    /// Missing, and the machine policy requires Seal: the empty lockfile.
    Implied(Lockfile),
    Missing,
    Invalid(String),
}

/// One row: its `--json` key, its label, its value, words for people, and
/// where it comes from.
struct Setting {
    key: &'static str,
    label: &'static str,
    value: Value,
    text: String,
    source: Source,
}

pub fn run(ctx: &Context, json_out: bool) -> Result<Done, CliError> {
    let machine = super::machine_policy()?;
    let project = match lockfile_bytes(ctx.project.as_fd(), machine) {
        Ok((bytes, implied)) => match Lockfile::parse(&bytes) {
            Ok(lock) if implied => ProjectLock::Implied(lock),
            Ok(lock) => ProjectLock::Present(lock),
            Err(e) => ProjectLock::Invalid(e.to_string()),
        },
        Err(StoreError::Missing) => ProjectLock::Missing,
        Err(e) => ProjectLock::Invalid(e.to_string()),
    };
    let settings = settings(machine, &project);
    if json_out {
        let mut out = serde_json::to_string_pretty(&document(machine, &project, &settings))
            .unwrap_or_default();
        out.push('\n');
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    } else {
        say!("{}", text(machine, &project, &settings));
    }
    Ok(Done::Success)
}

fn on_off(on: bool, yes: &str, no: &str) -> String {
    if on { yes.to_string() } else { no.to_string() }
}

fn listed(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_string()
    } else {
        items
            .iter()
            .map(|i| escaped(i).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn settings(m: &MachinePolicy, project: &ProjectLock) -> Vec<Setting> {
    let set = |on: bool| m.source_if(on);
    let mut rows = Vec::new();
    rows.push(Setting {
        key: "minimumPolicy",
        label: "minimum policy",
        value: json!(m.minimum_policy.map(Policy::as_str)),
        text: match m.minimum_policy {
            Some(Policy::Block) => "block (a project's warn acts as block)".into(),
            Some(Policy::Warn) => "warn (each project's seal.json decides)".into(),
            None => "none (each project's seal.json decides)".into(),
        },
        source: set(m.minimum_policy.is_some()),
    });
    let (project_value, project_text) = match project {
        ProjectLock::Present(l) => (
            json!(l.policy.as_str()),
            format!("{} (seal.json)", l.policy.as_str()),
        ),
        ProjectLock::Implied(_) => (Value::Null, "none: no seal.json".into()),
        ProjectLock::Missing => (
            Value::Null,
            "none: no seal.json, so Seal is inactive here".into(),
        ),
        ProjectLock::Invalid(e) => (Value::Null, format!("none: seal.json is unusable ({e})")),
    };
    rows.push(Setting {
        key: "projectPolicy",
        label: "project asks",
        value: project_value,
        text: project_text,
        source: Source::Project,
    });
    let in_force = match project {
        ProjectLock::Present(l) => Some(m.policy_of(l, false)),
        ProjectLock::Implied(l) => Some(m.policy_of(l, true)),
        ProjectLock::Missing | ProjectLock::Invalid(_) => None,
    };
    rows.push(Setting {
        key: "effectivePolicy",
        label: "policy in force",
        value: json!(in_force.map(|(p, _)| p.as_str())),
        text: match (in_force, project) {
            (Some((p, _)), ProjectLock::Implied(_)) => format!(
                "{} (the machine requires Seal: a project without seal.json counts as the empty \
                 lockfile)",
                p.as_str()
            ),
            (Some((p, Source::Machine)), _) => {
                format!("{} (raised by the machine policy)", p.as_str())
            }
            (Some((p, _)), _) => p.as_str().to_string(),
            (None, ProjectLock::Missing) => "none: Seal is inactive (no seal.json)".into(),
            (None, _) => "none: every command refuses an unusable seal.json".into(),
        },
        source: in_force.map_or(Source::BuiltIn, |(_, s)| s),
    });
    rows.push(Setting {
        key: "requireSeal",
        label: "require Seal",
        value: json!(m.require_seal),
        text: on_off(
            m.require_seal,
            "yes (a project without seal.json is treated as the empty lockfile, policy block)",
            "no (a project without seal.json: Seal is inactive; verify exits 2)",
        ),
        source: set(m.require_seal),
    });
    let file = m.audit.file.as_ref();
    rows.push(Setting {
        key: "auditFile",
        label: "audit file",
        value: json!(file.map(|p| p.to_string_lossy().into_owned())),
        text: file.map_or_else(
            || "none (--audit-log FILE adds one per command)".to_string(),
            |p| {
                format!(
                    "{} (mandatory; --audit-log adds another)",
                    escaped_os(p.as_os_str())
                )
            },
        ),
        source: set(file.is_some()),
    });
    let socket = syslog_socket();
    rows.push(Setting {
        key: "auditSyslog",
        label: "audit syslog",
        value: match m.audit.syslog {
            Some(s) => json!({
                "format": s.format.as_str(),
                "facility": s.facility,
                "socket": socket.to_string_lossy(),
            }),
            None => Value::Null,
        },
        text: match m.audit.syslog {
            Some(s) => format!(
                "{} to {} (facility {}; mandatory)",
                s.format.as_str(),
                escaped_os(socket.as_os_str()),
                s.facility
            ),
            None => "no".into(),
        },
        source: set(m.audit.syslog.is_some()),
    });
    let surfaces: Vec<String> = m.extra_surfaces.patterns().map(String::from).collect();
    rows.push(Setting {
        key: "extraSurfaces",
        label: "extra surfaces",
        value: json!(surfaces),
        text: format!(
            "{} (on top of the {} built-in rows of docs/SURFACES.md)",
            listed(&surfaces, "none"),
            seal_gate::surfaces::PROJECT_ROWS.len()
        ),
        source: set(!surfaces.is_empty()),
    });
    let masks: Vec<String> = m.extra_masks.iter().map(|x| x.as_text()).collect();
    rows.push(Setting {
        key: "extraMasks",
        label: "extra run masks",
        value: json!(masks),
        text: format!(
            "{} (on top of seal run's built-in table)",
            listed(&masks, "none")
        ),
        source: set(!masks.is_empty()),
    });
    let protected: Vec<String> = m
        .protected_paths
        .globs()
        .iter()
        .map(|g| g.as_str().to_string())
        .collect();
    rows.push(Setting {
        key: "protectedPaths",
        label: "protected paths",
        value: json!(protected),
        text: format!(
            "{} (besides seal.json, sealed roots and agent surfaces, always protected)",
            listed(&protected, "none")
        ),
        source: set(!protected.is_empty()),
    });
    let allow: Vec<String> = m.allow_write.iter().map(|x| x.as_text()).collect();
    rows.push(Setting {
        key: "allowWrite",
        label: "run may write",
        value: json!(allow),
        text: format!(
            "{} (besides the project, /tmp, agent state and caches; seal run --dry-run lists all)",
            listed(&allow, "nothing more")
        ),
        source: set(!allow.is_empty()),
    });
    let lifted: Vec<String> = m
        .allow_write_protected
        .iter()
        .map(|n| n.to_string())
        .collect();
    rows.push(Setting {
        key: "allowWriteProtected",
        label: "unprotected",
        value: json!(lifted),
        text: format!(
            "{} (built-in protected paths the write scope may reach)",
            listed(&lifted, "none: every built-in protection holds")
        ),
        source: set(!lifted.is_empty()),
    });
    rows.push(Setting {
        key: "readOnly",
        label: "read-only views",
        value: json!(m.read_only),
        text: on_off(
            m.read_only,
            "forced (seal run and seal mount serve read-only views)",
            "not forced (seal run is writable unless --read-only; seal mount read-only unless \
             --writable)",
        ),
        source: set(m.read_only),
    });
    rows.push(Setting {
        key: "rehashEveryOpen",
        label: "rehash every open",
        value: json!(m.rehash_every_open),
        text: on_off(
            m.rehash_every_open,
            "forced (every open verifies its bundle in full)",
            "not forced (--rehash-every-open asks for it)",
        ),
        source: set(m.rehash_every_open),
    });
    rows.push(Setting {
        key: "strictVerify",
        label: "strict verify",
        value: json!(m.strict_verify),
        text: on_off(
            m.strict_verify,
            "forced (seal verify counts agent artifacts no discovery pattern covers as \
             unverified, as with --strict)",
            "not forced (seal verify --strict asks for it)",
        ),
        source: set(m.strict_verify),
    });
    rows
}

fn project_json(project: &ProjectLock) -> Value {
    let (lockfile, error) = match project {
        ProjectLock::Present(_) => ("present", None),
        ProjectLock::Implied(_) => ("missing-required", None),
        ProjectLock::Missing => ("missing", None),
        ProjectLock::Invalid(e) => ("invalid", Some(e.clone())),
    };
    json!({ "lockfile": lockfile, "error": error })
}

fn document(m: &MachinePolicy, project: &ProjectLock, settings: &[Setting]) -> Value {
    let mut rows = serde_json::Map::new();
    for s in settings {
        rows.insert(
            s.key.to_string(),
            json!({ "value": s.value, "source": s.source.as_str() }),
        );
    }
    json!({
        "policyFile": {
            "path": policy_path().to_string_lossy(),
            "present": m.file.is_some(),
        },
        "project": project_json(project),
        "settings": rows,
    })
}

fn text(m: &MachinePolicy, project: &ProjectLock, settings: &[Setting]) -> String {
    let mut out = String::new();
    let path = escaped_os(policy_path().as_os_str());
    let _ = writeln!(
        out,
        "machine policy: {path} ({})",
        if m.file.is_some() {
            "present, owned by root, read"
        } else {
            "absent: the built-in defaults apply"
        }
    );
    let _ = writeln!(
        out,
        "project:        seal.json {}\n",
        match project {
            ProjectLock::Present(_) => "present",
            ProjectLock::Implied(_) => "missing (required by the machine policy)",
            ProjectLock::Missing => "missing",
            ProjectLock::Invalid(_) => "unusable",
        }
    );
    for s in settings {
        let _ = writeln!(
            out,
            "{:<18} {:<12} {}",
            s.label,
            format!("[{}]", s.source.as_str()),
            s.text
        );
    }
    out
}

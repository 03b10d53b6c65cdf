//! The audit log: one JSON object per line for every decision the gate takes
//! about a sealed or surface path (`--audit-log FILE`).
//!
//! A line names the time, the event (`allow`, `hide`, `warn`, `fail-closed`),
//! the operation, the bundle key, the project-relative path, the outcome, the
//! files that differ, the requesting pid and its command name, and how long the
//! verification took. It never contains file contents or absolute host paths.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// A verified bundle (or root) was shown or served.
    Allow,
    /// A path was hidden or an open refused.
    Hide,
    /// Policy `warn` let an unverified or mismatched artifact through.
    Warn,
    /// The lockfile is invalid or missing: every sealed and surface path is hidden.
    FailClosed,
    /// The writable view refused to change a protected path.
    DenyWrite,
}

/// One decision.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub time: String,
    pub event: Event,
    pub op: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub path: String,
    pub outcome: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modified: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    pub pid: u32,
    pub comm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_us: Option<u64>,
}

/// Appends records to a file, one line each, flushed per line.
pub struct AuditLog {
    file: Mutex<File>,
}

impl AuditLog {
    pub fn open(path: &std::path::Path) -> io::Result<AuditLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AuditLog {
            file: Mutex::new(file),
        })
    }

    pub fn write(&self, record: &Record) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(&line) {
            tracing::warn!("cannot write the audit log: {e}");
        }
    }
}

/// The command name of `pid` (from `/proc/PID/comm`), or `?`.
pub fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim_end_matches('\n').to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// `SystemTime` as RFC 3339 UTC with microseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, dd) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{dd:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Days since 1970-01-01 to a (year, month, day) in the proleptic Gregorian
/// calendar (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_999_999) + Duration::from_micros(5);
        assert_eq!(rfc3339(t), "2026-11-30T00:53:19.000005Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&rfc3339(leap)[..10], "2000-02-29");
    }

    #[test]
    fn records_are_json_lines() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("audit.jsonl");
        let log = AuditLog::open(&p).unwrap();
        log.write(&Record {
            time: rfc3339(SystemTime::now()),
            event: Event::FailClosed,
            op: "open",
            key: Some("./a".into()),
            path: "./a/x".into(),
            outcome: "invalid lockfile".into(),
            modified: vec![],
            added: vec!["n".into()],
            missing: vec![],
            problems: vec![],
            pid: 1,
            comm: "cat".into(),
            verify_us: Some(12),
        });
        let text = std::fs::read_to_string(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["event"], "fail-closed");
        assert_eq!(v["added"][0], "n");
        assert!(v.get("modified").is_none());
        assert!(text.ends_with('\n'));
    }
}

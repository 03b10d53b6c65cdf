//! The audit log: one JSON object per line for every decision the gate takes
//! about a sealed or surface path, and every write it refuses, sent to each
//! sink: a file (`--audit-log FILE`, a machine policy's `audit.file`) and the
//! system log (a machine policy's `audit.syslog`: a datagram to `/dev/log`,
//! which the journal or a syslog daemon collects).
//!
//! The schema is versioned and documented in docs/AUDIT.md ([`SCHEMA`]):
//! every line has every field (`null` or `[]` when there is nothing to say).
//! A line names the time, the host, the event (`allow`, `hide`, `warn`,
//! `fail-closed`, `deny-write`, and `mount-start` / `mount-end` /
//! `run-start` / `run-end` around a view and a run), the operation, the
//! bundle key, the project-relative path, the outcome, the files that
//! differ, the policy in force and who set it, the requesting process (pid,
//! uid, user name, command name), how long the verification took, and the
//! session it belongs to ([`Session`]: the project's path, an id, the
//! digests of `seal.json` and of the machine policy, the user and command of
//! the run). It never contains file contents.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::policy::{Source, Syslog, SyslogFormat};

/// The schema of every line (docs/AUDIT.md); a change that removes or
/// retypes a field gets a new version.
pub(crate) const SCHEMA: &str = "seal.audit/2";

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
    /// A view started serving (`seal mount`).
    MountStart,
    /// A view stopped serving.
    MountEnd,
    /// `seal run` is about to start its command.
    RunStart,
    /// The command of `seal run` ended (with `exit_status`).
    RunEnd,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Allow => "allow",
            Event::Hide => "hide",
            Event::Warn => "warn",
            Event::FailClosed => "fail-closed",
            Event::DenyWrite => "deny-write",
            Event::MountStart => "mount-start",
            Event::MountEnd => "mount-end",
            Event::RunStart => "run-start",
            Event::RunEnd => "run-end",
        }
    }

    /// The syslog severity (RFC 5424): refusals are notices, lets-through
    /// under `warn` and fail-closed are warnings, allows are informational.
    fn severity(self) -> u8 {
        match self {
            Event::Allow
            | Event::MountStart
            | Event::MountEnd
            | Event::RunStart
            | Event::RunEnd => 6,
            Event::Hide | Event::DenyWrite => 5,
            Event::Warn | Event::FailClosed => 4,
        }
    }
}

/// One decision (docs/AUDIT.md describes each field).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    pub schema: &'static str,
    pub time: String,
    pub host: String,
    pub event: Event,
    pub op: &'static str,
    pub key: Option<String>,
    pub path: String,
    pub outcome: String,
    /// The policy in force (`block` or `warn`); `null` for refused writes.
    pub policy: Option<&'static str>,
    /// Who set the rule that decided: `project`, `machine` or `built-in`.
    pub policy_source: Source,
    pub modified: Vec<String>,
    pub added: Vec<String>,
    pub missing: Vec<String>,
    pub problems: Vec<String>,
    pub pid: u32,
    pub uid: u32,
    pub user: Option<String>,
    pub comm: String,
    pub verify_us: Option<u64>,
    /// The project's canonical path.
    pub project: Option<String>,
    /// The id of this view or run: every record of one has it.
    pub session: String,
    /// `sha256:` of `seal.json` as the view started (`null` when Seal is
    /// required and there is none).
    pub lockfile_digest: Option<String>,
    /// `sha256:` of the machine policy file (`null` without one).
    pub policy_digest: Option<String>,
    /// The user the run's command runs as (for a mount, the user who
    /// mounted).
    pub run_uid: Option<u32>,
    /// The command `seal run` ran (for a mount, the `seal mount` command).
    pub run_command: Vec<String>,
    /// `run-end`: the command's exit status (128+N for a signal).
    pub exit_status: Option<i32>,
}

/// What every record of one view or run carries.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub project: Option<String>,
    pub id: String,
    pub lockfile_digest: Option<String>,
    pub policy_digest: Option<String>,
    pub run_uid: Option<u32>,
    pub run_command: Vec<String>,
}

/// A fresh session id: 128 random bits in hex (the time and pid when the
/// kernel's random source cannot be read).
pub(crate) fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if read.is_err() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_nanos();
        bytes[..8].copy_from_slice(&(now as u64).to_le_bytes());
        bytes[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Record {
    fn in_session(mut self, s: &Session) -> Record {
        self.project = s.project.clone();
        self.session = s.id.clone();
        self.lockfile_digest = s.lockfile_digest.clone();
        self.policy_digest = s.policy_digest.clone();
        self.run_uid = s.run_uid;
        self.run_command = s.run_command.clone();
        self
    }
}

/// Where records go.
enum Sink {
    File(Mutex<File>),
    Syslog(SyslogSink),
}

/// A datagram per record to a syslog socket (the journal's `/dev/log`).
struct SyslogSink {
    socket: UnixDatagram,
    path: PathBuf,
    settings: Syslog,
    host: String,
}

/// The longest datagram sent: the file lists of a record beyond it are cut
/// (the file sink keeps them whole); syslog daemons cut lines around 8 KiB.
const MAX_DATAGRAM: usize = 8 * 1024;

impl SyslogSink {
    fn connect(path: &Path, settings: Syslog) -> io::Result<SyslogSink> {
        let socket = UnixDatagram::unbound()?;
        // A stalled journal must not stall the view for long.
        socket.set_write_timeout(Some(Duration::from_secs(1)))?;
        socket.connect(path)?;
        Ok(SyslogSink {
            socket,
            path: path.to_path_buf(),
            settings,
            host: hostname(),
        })
    }

    /// The framed message for `record` (its JSON line, file lists cut when
    /// the datagram would be too long).
    fn frame(&self, record: &Record) -> Vec<u8> {
        let pri = self.settings.facility_code() as u32 * 8 + record.event.severity() as u32;
        let pid = std::process::id();
        let head = match self.settings.format {
            SyslogFormat::Rfc3164 => format!("<{pri}>seal[{pid}]: "),
            SyslogFormat::Rfc5424 => format!(
                "<{pri}>1 {} {} seal {pid} {} - ",
                record.time,
                if self.host.is_empty() {
                    "-"
                } else {
                    &self.host
                },
                record.event.as_str()
            ),
        };
        let mut json = serde_json::to_string(record).unwrap_or_default();
        if head.len() + json.len() > MAX_DATAGRAM {
            let mut cut = record.clone();
            for list in [
                &mut cut.modified,
                &mut cut.added,
                &mut cut.missing,
                &mut cut.problems,
            ] {
                if list.len() > 8 {
                    let more = list.len() - 8;
                    list.truncate(8);
                    list.push(format!("... {more} more"));
                }
            }
            json = serde_json::to_string(&cut).unwrap_or_default();
        }
        let mut out = head.into_bytes();
        out.extend_from_slice(json.as_bytes());
        out
    }

    fn send(&self, record: &Record) -> io::Result<()> {
        let bytes = self.frame(record);
        match self.socket.send(&bytes) {
            Ok(_) => Ok(()),
            // The daemon was restarted (a new socket at the same path).
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ECONNREFUSED | libc::ENOTCONN | libc::ENOENT)
                ) =>
            {
                self.socket.connect(&self.path)?;
                self.socket.send(&bytes).map(drop)
            }
            Err(e) => Err(e),
        }
    }
}

/// Sends records to every sink, one line each, flushed per line.
pub struct AuditLog {
    sinks: Vec<Sink>,
    host: String,
    users: Mutex<HashMap<u32, Option<String>>>,
    session: std::sync::RwLock<Session>,
}

impl Default for AuditLog {
    fn default() -> AuditLog {
        AuditLog {
            sinks: Vec::new(),
            host: hostname(),
            users: Mutex::new(HashMap::new()),
            session: std::sync::RwLock::new(Session {
                id: new_session_id(),
                ..Session::default()
            }),
        }
    }
}

impl AuditLog {
    /// A log with one file sink.
    #[cfg(test)]
    pub(crate) fn open(path: &Path) -> io::Result<AuditLog> {
        let mut log = AuditLog::default();
        log.add_file(path)?;
        Ok(log)
    }

    /// Appends to `path` too (created readable by its owner and group only).
    pub fn add_file(&mut self, path: &Path) -> io::Result<()> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o640)
            .open(path)?;
        self.sinks.push(Sink::File(Mutex::new(file)));
        Ok(())
    }

    /// Sends to the syslog socket at `socket` too (it must be there now).
    pub fn add_syslog(&mut self, socket: &Path, settings: Syslog) -> io::Result<()> {
        self.sinks
            .push(Sink::Syslog(SyslogSink::connect(socket, settings)?));
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    /// Sets what every record of this view carries (its id stays).
    pub fn set_session(&self, session: Session) {
        let mut s = self.session.write().unwrap_or_else(|e| e.into_inner());
        let id = std::mem::take(&mut s.id);
        *s = Session { id, ..session };
    }

    /// Names the run: the user its command runs as and the command.
    pub fn set_run(&self, uid: u32, command: Vec<String>) {
        let mut s = self.session.write().unwrap_or_else(|e| e.into_inner());
        s.run_uid = Some(uid);
        s.run_command = command;
    }

    /// Writes a `mount-start`, `mount-end`, `run-start` or `run-end`
    /// record: by this process, about the whole project (`.`), with the
    /// outcome (the verification's result, or why it ended) and, for a
    /// run's end, the exit status.
    pub fn lifecycle(&self, event: Event, outcome: &str, exit_status: Option<i32>) {
        let op = match event {
            Event::RunStart | Event::RunEnd => "run",
            _ => "mount",
        };
        let mut r = self.record(
            event,
            op,
            std::process::id(),
            nix::unistd::getuid().as_raw(),
        );
        r.path = ".".to_string();
        r.outcome = outcome.to_string();
        r.exit_status = exit_status;
        self.write(&r);
    }

    /// A record of `event` by `op` for the process `pid` (as `uid`), with
    /// the fields every record has filled in and the rest empty.
    pub(crate) fn record(&self, event: Event, op: &'static str, pid: u32, uid: u32) -> Record {
        Record {
            schema: SCHEMA,
            time: rfc3339(SystemTime::now()),
            host: self.host.clone(),
            event,
            op,
            key: None,
            path: String::new(),
            outcome: String::new(),
            policy: None,
            policy_source: Source::BuiltIn,
            modified: vec![],
            added: vec![],
            missing: vec![],
            problems: vec![],
            pid,
            uid,
            user: self.user_name(uid),
            comm: command_name(pid),
            verify_us: None,
            project: None,
            session: String::new(),
            lockfile_digest: None,
            policy_digest: None,
            run_uid: None,
            run_command: Vec::new(),
            exit_status: None,
        }
        .in_session(&self.session.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The name of `uid` (looked up once).
    fn user_name(&self, uid: u32) -> Option<String> {
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        users
            .entry(uid)
            .or_insert_with(|| {
                nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
                    .ok()
                    .flatten()
                    .map(|u| u.name)
            })
            .clone()
    }

    pub(crate) fn write(&self, record: &Record) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        for sink in &self.sinks {
            let written = match sink {
                Sink::File(file) => file
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .write_all(&line),
                Sink::Syslog(syslog) => syslog.send(record),
            };
            if let Err(e) = written {
                tracing::warn!("cannot write an audit record: {e}");
            }
        }
    }
}

/// This machine's host name, as the kernel has it (empty when it cannot be
/// read).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim_end_matches('\n').to_string())
        .unwrap_or_default()
}

/// The command name of `pid` (from `/proc/PID/comm`), or `?`.
pub(crate) fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim_end_matches('\n').to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// `SystemTime` as RFC 3339 UTC with microseconds.
pub(crate) fn rfc3339(t: SystemTime) -> String {
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
    fn records_are_json_lines_with_every_field() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("audit.jsonl");
        let log = AuditLog::open(&p).unwrap();
        let mut r = log.record(Event::FailClosed, "open", std::process::id(), 0);
        r.key = Some("./a".into());
        r.path = "./a/x".into();
        r.outcome = "invalid lockfile".into();
        r.added = vec!["n".into()];
        r.verify_us = Some(12);
        log.write(&r);
        let text = std::fs::read_to_string(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["event"], "fail-closed");
        assert_eq!(v["added"][0], "n");
        assert_eq!(v["modified"], serde_json::json!([]));
        assert_eq!(v["policy"], serde_json::Value::Null);
        assert_eq!(v["policy_source"], "built-in");
        assert_eq!(v["uid"], 0);
        assert_eq!(v["user"], "root");
        assert!(v["host"].is_string() && v["comm"].is_string());
        assert!(text.ends_with('\n'));
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort_unstable();
        let mut want = [
            "schema",
            "time",
            "host",
            "event",
            "op",
            "key",
            "path",
            "outcome",
            "policy",
            "policy_source",
            "modified",
            "added",
            "missing",
            "problems",
            "pid",
            "uid",
            "user",
            "comm",
            "verify_us",
            "project",
            "session",
            "lockfile_digest",
            "policy_digest",
            "run_uid",
            "run_command",
            "exit_status",
        ];
        want.sort_unstable();
        assert_eq!(fields, want, "every field, always (docs/AUDIT.md)");
    }

    /// Receives one datagram on a socket bound at `path`.
    fn receive(socket: &UnixDatagram) -> String {
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = vec![0u8; 65536];
        let n = socket.recv(&mut buf).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn syslog_datagrams_in_both_formats() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("log.sock");
        let server = UnixDatagram::bind(&path).unwrap();
        let mut log = AuditLog::default();
        log.add_syslog(&path, Syslog::default()).unwrap();
        log.add_syslog(
            &path,
            Syslog {
                format: SyslogFormat::Rfc5424,
                facility: "local0",
            },
        )
        .unwrap();
        let mut r = log.record(Event::Hide, "lookup", 1, 0);
        r.path = "./.claude/skills/x".into();
        r.modified = (0..2000).map(|i| format!("file-{i:04}.md")).collect();
        log.write(&r);
        // authpriv (10) * 8 + notice (5) = 85.
        let pid = std::process::id();
        let first = receive(&server);
        let json = first
            .strip_prefix(&format!("<85>seal[{pid}]: "))
            .unwrap_or_else(|| panic!("{first}"));
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["path"], "./.claude/skills/x");
        assert_eq!(v["event"], "hide");
        assert!(first.len() <= MAX_DATAGRAM, "{}", first.len());
        assert_eq!(
            v["modified"].as_array().unwrap().len(),
            9,
            "cut to 8 and a count"
        );
        // local0 (16) * 8 + 5 = 133.
        let second = receive(&server);
        let prefix = format!("<133>1 {} ", r.time);
        assert!(second.starts_with(&prefix), "{second}");
        let rest: Vec<&str> = second[prefix.len()..].splitn(5, ' ').collect();
        assert_eq!(&rest[1..4], ["seal", &pid.to_string(), "hide"]);
        let v: serde_json::Value =
            serde_json::from_str(rest[4].strip_prefix("- ").unwrap()).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        // A socket that is not there: refused when the log is made.
        let mut none = AuditLog::default();
        assert!(
            none.add_syslog(&t.path().join("missing.sock"), Syslog::default())
                .is_err()
        );
    }
}

//! The one question: [`Gate::ask`] (path, [`Op`], [`Who`]) → [`Verdict`].
//! Everything the view, `seal why`, `seal verify -v`, `seal run --dry-run`
//! and the writable view's checks want to know about a path is asked here:
//! the path is placed, the facts the decision needs are gathered one way
//! ([`Round::gather`]), the table decides ([`decide`]: shown or not, and how
//! long the kernel may keep the answer), the view gets the bytes to serve,
//! and the decision is recorded. Nothing amends an answer after the table.
//!
//! A [`Round`] asks its questions on one read of `seal.json` (a listing
//! decides all its entries on one read). It serves the view
//! ([`Gate::ask`], [`Gate::round`]: state current at this moment, bytes
//! kept for an open, decisions recorded), or explains
//! ([`Gate::explaining`]: nothing recorded, no bytes kept, and with a
//! [`Survey`] nothing hashed either).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::Arc;

use seal_core::digest::Digest;
use seal_core::discovery::Listings;
use seal_core::effort::Effort;
use seal_core::fs::EntryKind;
use seal_core::hash::KeepNothing;
use seal_core::lockfile::Policy;
use seal_core::paths::is_excluded_below_root;
use seal_core::verify::{BundleReport, BundleState, ProjectReport};

use crate::audit::{Event, Record};
use crate::decision::{Asked, Change, Decision, Facts, Found, Keep, Kernel, Reason, RootState};
use crate::links::SurfaceLink;
use crate::live::LockView;
use crate::place::{Place, ViewPath};
use crate::policy::Source;
use crate::snapshot::Snapshot;
use crate::{Assessment, Gate, Who, assess_artifact, assess_sealed, decide, next_run};

/// What is asked about a path.
#[derive(Debug, Clone, Copy)]
pub enum Op<'a> {
    /// Whether the name shows (a lookup, an entry of a listing), and how
    /// long the kernel may keep the answer: what is on the disk under it
    /// (`None`: nothing), a symlink's target, and what the view knows of
    /// how the kernel would keep it.
    Lookup {
        on_disk: Option<EntryKind>,
        link_target: Option<&'a OsStr>,
        kernel: Kernel,
    },
    /// Which bytes an open of the regular file for reading serves.
    /// `recorded`: the verification run under which this path's bytes were
    /// given out (and recorded) before; an `allow` under the same run is not
    /// recorded again.
    Open { recorded: Option<u64> },
    /// Whether the bytes of `digest`, given out for this bundle file under
    /// verification run `run`, may be served again without reading the file
    /// (nothing is recorded).
    Reuse { digest: &'a Digest, run: u64 },
    /// A change through the view (`op` names it in the audit log);
    /// `writable`: the view makes changes at all (`seal mount --writable`,
    /// `seal run` without `--read-only`).
    Change {
        change: Change,
        op: &'static str,
        writable: bool,
    },
}

/// What an open serves.
#[derive(Debug, Clone)]
pub enum Serve {
    Nothing,
    /// The disk's file (an ordinary file, or a name never part of a bundle).
    Disk,
    /// These verified bytes.
    Bytes(Arc<Snapshot>),
}

/// The gate's answer.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Shown (a lookup), served (an open, again or not), made (a change).
    pub yes: bool,
    /// How long the kernel may keep the answer.
    pub keep: Keep,
    /// The audit event the decision amounts to.
    pub event: Option<Event>,
    pub reason: Reason,
    pub serve: Serve,
    pub place: Place,
    /// What gathering found (the state of the root it decided on, for one).
    pub found: Found,
    /// The verification run that allowed it, when a Verified bundle did.
    pub run: Option<u64>,
    /// The assessment of the root it was decided on (its report says what
    /// differs).
    pub assessment: Option<Arc<Assessment>>,
    /// The judgement of a symlink at a surface path (where it leads, what
    /// would have to be sealed), when that is what was asked about.
    pub link: Option<SurfaceLink>,
}

impl Verdict {
    /// "visible" or "hidden".
    pub fn word(&self) -> &'static str {
        if self.yes { "visible" } else { "hidden" }
    }
}

/// Root states a survey already found (the report of `seal verify`'s
/// verification), by the root's path (`./a/b`): a round explaining with
/// them hashes nothing.
#[derive(Debug, Default)]
pub struct Survey(HashMap<String, RootState>);

impl Survey {
    pub fn of(report: &ProjectReport) -> Survey {
        Survey(
            report
                .bundles
                .iter()
                .map(|b| {
                    let state = RootState::Bundle(b.state);
                    (b.name.as_display().to_string(), state)
                })
                .collect(),
        )
    }
}

/// Whom a round answers.
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// The view: state current at this moment, bytes kept for an open, the
    /// decision recorded.
    Serve,
    /// `seal why`, `verify -v`, the dry run: nothing recorded, no bytes
    /// kept; roots the survey knows are not assessed again, others in full.
    Explain(Option<&'a Survey>),
}

/// Questions answered on one read of `seal.json`.
pub struct Round<'g> {
    gate: &'g Gate,
    lock: LockView,
    mode: Mode<'g>,
}

/// What gathering found for one question.
struct Gathered {
    asked: Asked,
    found: Found,
    policy: Policy,
    current: bool,
    assessment: Option<Arc<Assessment>>,
    snapshot: Option<Arc<Snapshot>>,
    link: Option<SurfaceLink>,
}

impl Gate {
    /// The one question, on `seal.json` as it is now.
    pub fn ask(&self, path: &ViewPath, op: Op<'_>, who: Who) -> Verdict {
        self.round().ask(path, op, who)
    }

    /// A round of the view's questions on one read of `seal.json`.
    pub fn round(&self) -> Round<'_> {
        Round {
            gate: self,
            lock: self.lock_view(),
            mode: Mode::Serve,
        }
    }

    /// A round explaining decisions (nothing recorded, no bytes kept): a
    /// root `survey` knows is decided on the state it found, any other is
    /// assessed now.
    pub fn explaining<'a>(&'a self, survey: Option<&'a Survey>) -> Round<'a> {
        Round {
            gate: self,
            lock: self.lock_view(),
            mode: Mode::Explain(survey),
        }
    }

    /// How long the kernel may keep an answer about `path` already given
    /// (attributes asked again, entries of a listing already decided) or a
    /// name not on the disk (`found`: [`Found::Missing`]): the table's
    /// lifetime column, on the lockfile as last read, hashing nothing.
    /// Inside a sealed root, as for a lookup there, whether the change feed
    /// proves the bundle's verification current: an entry of a listing of a
    /// skill is then kept as its lookup would be, instead of making the
    /// kernel forget the entry its lookup kept (every file of the skill was
    /// looked up again after each listing). The root itself too: then
    /// `kernel.told` must say whether the view registered it for the
    /// listener's notices, as a lookup of it does.
    pub fn keep(&self, path: &ViewPath, found: Found, kernel: Kernel) -> Keep {
        let last = self.live.last();
        let place = self.place(last.patterns_source(), path);
        let current = match (&place, &last) {
            (Place::Sealed { key, .. }, LockView::Valid(lock)) => {
                place.root_len().is_some_and(|root_len| {
                    root_len <= path.depth()
                        && !is_excluded_below_root(path.names().skip(root_len))
                        && self
                            .cache
                            .is_current(key, lock.bundles.get(key), self.policy_of(lock).0)
                })
            }
            _ => false,
        };
        crate::decision::keep(
            &place,
            &Facts {
                asked: Asked::Lookup,
                found,
                policy: Policy::Block,
                current,
                depth: path.depth(),
                kernel,
            },
        )
    }
}

impl Op<'static> {
    /// A lookup of a name holding a `kind` on the disk (not a symlink), as
    /// `seal why` and the commands that explain ask it.
    pub fn lookup(kind: EntryKind) -> Op<'static> {
        Op::Lookup {
            on_disk: Some(kind),
            link_target: None,
            kernel: Kernel::default(),
        }
    }
}

impl<'a> Op<'a> {
    /// A lookup of a symlink whose target is `target`, as a readlink and
    /// the commands that explain ask it.
    pub fn symlink(target: &'a OsStr) -> Op<'a> {
        Op::Lookup {
            on_disk: Some(EntryKind::Symlink),
            link_target: Some(target),
            kernel: Kernel::default(),
        }
    }
}

impl Round<'_> {
    /// Where `path` sits on this round's lockfile.
    pub fn place(&self, path: &ViewPath) -> Place {
        self.gate.place(self.lock.patterns_source(), path)
    }

    /// The question.
    pub fn ask(&self, path: &ViewPath, op: Op<'_>, who: Who) -> Verdict {
        let lock = self.lock.patterns_source();
        let place = self.gate.place(lock, path);
        let policy = self.gate.policy_of(lock).0;
        let g = self.gather(&place, path, &op, policy);
        let kernel = match op {
            Op::Lookup { kernel, .. } => kernel,
            _ => Kernel::default(),
        };
        let decision = decide(
            &place,
            Facts {
                asked: g.asked,
                found: g.found,
                policy: g.policy,
                current: g.current,
                depth: path.depth(),
                kernel,
            },
        );
        let run = g
            .assessment
            .as_deref()
            .filter(|a| a.found() == Found::Root(RootState::Bundle(BundleState::Verified)))
            .map(|a| a.run);
        if let Mode::Serve = self.mode {
            let at_root = place.root_len() == Some(path.depth());
            let recorded = match op {
                // Lookups record what they hide at a root (and every
                // fail-closed); what they show is recorded when it is opened.
                Op::Lookup { .. } => {
                    !decision.yes && (at_root || decision.event == Some(Event::FailClosed))
                }
                // Bytes given out again under the run that allowed them were
                // recorded then.
                Op::Open { recorded } => {
                    !(decision.event == Some(Event::Allow) && run.is_some() && run == recorded)
                }
                Op::Reuse { .. } => false,
                Op::Change { .. } => true,
            };
            if recorded {
                self.record(op, &place, path, &decision, g.assessment.as_deref(), who);
            }
        }
        let serve = match (decision.yes, &op, g.snapshot) {
            (true, Op::Open { .. }, Some(bytes)) => Serve::Bytes(bytes),
            (true, Op::Open { .. }, None) => Serve::Disk,
            _ => Serve::Nothing,
        };
        Verdict {
            yes: decision.yes,
            keep: decision.keep,
            event: decision.event,
            reason: decision.reason,
            serve,
            place,
            found: g.found,
            run,
            assessment: g.assessment,
            link: g.link,
        }
    }

    /// The facts a question needs, gathered the one way: nothing for an
    /// ordinary path (the link rule for a symlink), fail-closed while
    /// `seal.json` is invalid, a verification of a sealed root current at
    /// this moment (for an open, keeping the file's bytes), whether
    /// `seal.json` records a name inside one, an assessment of an artifact.
    fn gather(&self, place: &Place, path: &ViewPath, op: &Op<'_>, policy: Policy) -> Gathered {
        let mut g = Gathered {
            asked: Asked::Lookup,
            found: Found::Plain,
            policy,
            current: false,
            assessment: None,
            snapshot: None,
            link: None,
        };
        if let Op::Change {
            change, writable, ..
        } = *op
        {
            // Placed on the last valid lockfile: protection holds while
            // `seal.json` is invalid too.
            g.asked = Asked::Change {
                change,
                writable,
                guard: self.gate.guard(path),
                built_in: self.gate.built_in_guard(path),
            };
            return g;
        }
        let (on_disk, link_target) = match *op {
            Op::Lookup {
                on_disk,
                link_target,
                ..
            } => (on_disk, link_target),
            _ => (Some(EntryKind::File), None),
        };
        g.asked = match op {
            Op::Open { .. } => Asked::Open { captured: true },
            Op::Reuse { .. } => Asked::Reuse { same: false },
            _ => Asked::Lookup,
        };
        // A symlink at a surface path: judged where it leads, on this
        // round's lockfile (while it is invalid, decided as any symlink
        // at its place: hidden).
        if let (Some(EntryKind::Symlink), Some(target), LockView::Valid(lock)) =
            (on_disk, link_target, &self.lock)
            && let Some(link) = self.gate.surface_link(lock, place, path, target)
        {
            g.found = Found::SurfaceLink(link.state);
            g.link = Some(link);
            return g;
        }
        let Some(root_len) = place.root_len() else {
            g.found = match (on_disk, link_target) {
                (None, _) => Found::Missing,
                (Some(EntryKind::Symlink), target) => {
                    let dir = path.parent().map(|p| p.raw).unwrap_or_default();
                    let stays_behind_gate = target.is_some_and(|t| self.gate.links.allows(&dir, t));
                    Found::Link { stays_behind_gate }
                }
                (Some(_), _) => Found::Plain,
            };
            return g;
        };
        let LockView::Valid(lock) = &self.lock else {
            g.found = Found::LockfileInvalid;
            return g;
        };
        let at_root = root_len == path.depth();
        if is_excluded_below_root(path.names().skip(root_len)) {
            // Never part of a bundle (`.git`): never hashed, never recorded,
            // so shown and read as on disk only where the policy lets
            // unrecorded names through.
            g.found = Found::Recorded(false);
            return g;
        }
        if let Place::Sealed { key, .. } = place {
            let entry = lock.bundles.get(key);
            // Whether the change feed proves the verification decided on
            // current (asked once it is made, for a root's lookup).
            let current = || match self.mode {
                Mode::Serve => self.gate.cache.is_current(key, entry, policy),
                Mode::Explain(_) => false,
            };
            let assessed = match (op, at_root) {
                (Op::Lookup { .. }, false) => {
                    let rel = path.rel_text(root_len);
                    g.found = match on_disk {
                        None => Found::Missing,
                        Some(_) => Found::Recorded(entry.is_some_and(|e| e.records(&rel))),
                    };
                    g.current = current();
                    return g;
                }
                (Op::Lookup { .. }, true) => {
                    let assessed = self.assess_sealed_root(key, path, root_len);
                    g.current = current();
                    assessed
                }
                (Op::Open { .. }, _) => {
                    let Some(rel) = path.rel_from(root_len) else {
                        // A name no bundle can record: nothing to serve.
                        g.found = Found::Recorded(false);
                        g.asked = Asked::Open { captured: false };
                        return g;
                    };
                    let answer = self.gate.sealed_run(key, Some(&rel));
                    g.snapshot = answer.snapshot;
                    g.asked = Asked::Open {
                        captured: g.snapshot.is_some(),
                    };
                    Some(answer.verdict)
                }
                (Op::Reuse { digest, run }, _) => {
                    let recorded = path
                        .rel_from(root_len)
                        .and_then(|rel| entry?.files.get(&rel).copied());
                    if recorded.as_ref() != Some(*digest) {
                        g.found = Found::Recorded(recorded.is_some());
                        return g;
                    }
                    let verdict = self.gate.sealed_run(key, None).verdict;
                    g.asked = Asked::Reuse {
                        same: verdict.run == *run,
                    };
                    Some(verdict)
                }
                (Op::Change { .. }, _) => None,
            };
            if let Some(a) = assessed {
                g.found = a.found();
                g.policy = a.policy;
                g.assessment = Some(a);
            }
            return g;
        }
        // An agent artifact, or a root whose name cannot be a key.
        let root = path.prefix(root_len);
        g.found = Found::Root(RootState::Bundle(BundleState::Unverified));
        match op {
            Op::Lookup { .. } => {
                let surveyed = match self.mode {
                    Mode::Explain(Some(survey)) => survey.0.get(&root.display()).copied(),
                    _ => None,
                };
                let state = surveyed.unwrap_or_else(|| {
                    let mut listings = Listings::new(self.gate.project_fd());
                    assess_artifact(&mut listings, &root.raw)
                });
                g.found = Found::Root(state);
            }
            // Opening a regular file inside an artifact proves the artifact
            // holds something loadable: it is Unverified. Its bytes are only
            // needed (hashed and kept) when the policy lets them through.
            Op::Open { .. } => {
                let answer = match (self.mode, path.rel_from(root_len), policy) {
                    (Mode::Serve, Some(rel), Policy::Warn) => {
                        let flight = self
                            .gate
                            .flights
                            .get(&format!("artifact:{}", root.display()));
                        Some(flight.fresh(Some(&rel), |wanted| {
                            self.gate.observe_artifact(&root, wanted)
                        }))
                    }
                    _ => None,
                };
                if let Some(answer) = answer {
                    g.snapshot = answer.snapshot;
                    g.policy = answer.verdict.policy;
                    g.assessment = Some(answer.verdict);
                }
                g.asked = Asked::Open {
                    captured: g.snapshot.is_some(),
                };
            }
            Op::Reuse { .. } | Op::Change { .. } => {}
        }
        g
    }

    /// The assessment of the sealed root `key` (at `path`) a lookup decides
    /// on: for the view, a verification current at this moment; explaining,
    /// the survey's state, or a full verification keeping nothing.
    fn assess_sealed_root(
        &self,
        key: &seal_core::paths::BundleKey,
        path: &ViewPath,
        root_len: usize,
    ) -> Option<Arc<Assessment>> {
        let survey = match self.mode {
            Mode::Serve => return Some(self.gate.sealed_run(key, None).verdict),
            Mode::Explain(survey) => survey,
        };
        let LockView::Valid(lock) = &self.lock else {
            return None;
        };
        let policy = self.gate.policy_of(lock).0;
        let surveyed = survey.and_then(|s| s.0.get(&path.prefix(root_len).display()).copied());
        let started = std::time::Instant::now();
        let (state, report, unverifiable) = match surveyed {
            Some(state) => (state, None, None),
            None => {
                let mut listings = Listings::new(self.gate.project_fd());
                let entry = lock.bundles.get(key);
                match assess_sealed(&mut listings, key, entry, &KeepNothing, Effort::full()) {
                    Ok(found) => (found.state, found.report, None),
                    Err(e) => (
                        RootState::Bundle(BundleState::Mismatch),
                        None,
                        Some(e.to_string()),
                    ),
                }
            }
        };
        Some(Arc::new(Assessment {
            state,
            report,
            policy,
            fail_closed: None,
            unverifiable,
            micros: started.elapsed().as_micros() as u64,
            run: next_run(),
        }))
    }

    /// Logs a decision and writes it to the audit log.
    fn record(
        &self,
        op: Op<'_>,
        place: &Place,
        path: &ViewPath,
        decision: &Decision,
        assessment: Option<&Assessment>,
        who: Who,
    ) {
        let Some(event) = decision.event else { return };
        let told = !matches!(event, Event::Allow);
        let audit = self.gate.audit.as_ref();
        if !told && audit.is_none() {
            // Nothing to say and nowhere to write it: the common case of
            // an allowed open, spared formatting the outcome and the path.
            return;
        }
        let (op, change) = match op {
            Op::Lookup { .. } => ("lookup", None),
            Op::Open { .. } | Op::Reuse { .. } => ("open", None),
            Op::Change { op, .. } => (op, Some(decision.reason)),
        };
        let shown = seal_core::escape::escaped(&path.display()).into_owned();
        if let Some(reason) = change {
            tracing::info!("refused {op} of {shown}: {}", reason.describe());
            let Some(audit) = audit else { return };
            let mut record = audit.record(Event::DenyWrite, op, who.pid, who.uid);
            record.key = key_of(place);
            record.path = path.display();
            record.outcome = reason.describe().to_string();
            record.policy_source = match reason {
                Reason::Change(r) => r.source(),
                _ => Source::BuiltIn,
            };
            audit.write(&record);
            return;
        }
        let fail_closed = match (assessment.and_then(|a| a.fail_closed.as_ref()), &self.lock) {
            (Some(reason), _) | (None, LockView::Invalid { reason, .. }) => Some(reason.clone()),
            (None, LockView::Valid(_)) => None,
        };
        let outcome = match (&fail_closed, place) {
            (Some(reason), _) => format!("fail-closed: {reason}"),
            (None, Place::Artifact { rule, .. }) => {
                format!("unverified artifact: {}", rule.describe())
            }
            (None, Place::Unmappable { .. }) => {
                "unverified: a name on its path cannot be a bundle key".to_string()
            }
            (None, _) => assessment
                .map_or("Unverified", |a| a.state.as_str())
                .to_string(),
        };
        match event {
            Event::Allow
            | Event::DenyWrite
            | Event::MountStart
            | Event::MountEnd
            | Event::RunStart
            | Event::RunEnd => {}
            Event::FailClosed => tracing::warn!("fail closed on {op} {shown}: {outcome}"),
            Event::Hide | Event::Warn => tracing::info!(
                "{} {op} {shown} ({outcome}; {})",
                if event == Event::Hide {
                    "hid"
                } else {
                    "warned on"
                },
                decision.reason.describe()
            ),
        }
        let Some(audit) = audit else { return };
        let report = assessment.and_then(|a| a.report.as_ref());
        let list =
            |f: fn(&BundleReport) -> &Vec<String>| report.map(f).cloned().unwrap_or_default();
        let event = if fail_closed.is_some() {
            Event::FailClosed
        } else {
            event
        };
        let mut record: Record = audit.record(event, op, who.pid, who.uid);
        let (policy, source) = match assessment {
            Some(a) => (a.policy, self.gate.policy_of(self.lock.patterns_source()).1),
            None => self.gate.policy_of(self.lock.patterns_source()),
        };
        record.policy = Some(policy.as_str());
        // Failing closed is the same rule whatever any policy says.
        record.policy_source = if event == Event::FailClosed {
            Source::BuiltIn
        } else {
            source
        };
        record.key = key_of(place);
        record.path = path.display();
        record.outcome = outcome;
        record.modified = list(|r| &r.modified);
        record.added = list(|r| &r.added);
        record.missing = list(|r| &r.missing);
        record.problems = report
            .map(|r| r.problems.iter().map(|p| p.to_string()).collect())
            .unwrap_or_default();
        record.verify_us = assessment.map(|a| a.micros);
        audit.write(&record);
    }
}

/// The bundle key a record names: the sealed root's.
fn key_of(place: &Place) -> Option<String> {
    match place {
        Place::Sealed { key, .. } => Some(key.as_str().to_string()),
        _ => None,
    }
}

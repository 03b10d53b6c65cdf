//! The decision table: what a path may show, serve or become, given where it
//! is ([`Place`]), what was asked ([`Asked`]), what gathering [`Found`] and
//! the policy — and for how long the kernel may keep the answer ([`Keep`],
//! a column of the same table). One pure function, [`decide`]; the view,
//! the audit log, `seal why`, `seal verify -v` and `seal run --dry-run` all
//! get their answers from it through [`crate::Gate::ask`], so they can never
//! disagree.
//!
//! The rules (SPEC §Verification Outcomes, docs/SECURITY.md):
//!
//! * ordinary paths, containers and the lockfile are shown; an ordinary
//!   symlink only when following it stays behind the gate;
//! * a symlink at a surface path is shown only when everything read through
//!   it is decided where it leads ([`super::links`]), and never kept;
//! * every sealed or surface path is hidden while `seal.json` is invalid
//!   (fail closed, whatever the policy);
//! * a root is shown when it is Verified or holds nothing loadable (an empty
//!   directory), hidden when Removed or absent, and when Unverified or
//!   Mismatch shown under `warn` (every load logged) and hidden under `block`;
//! * inside a root the kernel reached through a fresh lookup, `block` shows
//!   only what the lockfile records (the open verifies the bytes);
//! * an open inside a root serves only bytes its verification kept; bytes
//!   given out before are served again only under the verification that
//!   allowed them;
//! * the writable view changes ordinary paths only, never git's side doors
//!   unless the machine policy lifts them ([`decide_change`]);
//! * the kernel keeps an answer only as long as something will tell it to
//!   forget it when it changes ([`keep`]).

use std::time::Duration;

use seal_core::lockfile::Policy;
use seal_core::verify::BundleState;

use super::audit::Event;
use super::links::LinkState;
use super::place::Place;

/// How long the kernel may keep entries of ordinary paths and containers in
/// a directory the view's directory feed does not watch.
pub const ORDINARY_TTL: Duration = Duration::from_secs(1);

/// How long the kernel may keep the entries and attributes of ordinary
/// paths in a directory the directory feed watches. The feed's listener
/// tells the kernel to forget each as soon as the feed reports its change
/// (and the kernel orders that notice after any lookup or listing in
/// flight in the directory: both hold its lock); this bounds only what the
/// feed cannot see, the time stamps a write through a shared writable
/// mapping sets. Long, because an agent's `git status` or walk minutes
/// after the last should not find every entry expired.
pub const FED_TTL: Duration = Duration::from_secs(600);

/// How long the kernel may keep attributes no feed keeps true. Attributes
/// never decide visibility (an entry with a zero TTL is looked up again on
/// every path walk, and that lookup returns fresh attributes); keeping them
/// spares the GETATTR the kernel's permission check would send after each
/// lookup.
pub const ATTR_TTL: Duration = Duration::from_secs(1);

/// How long the kernel may keep a sealed path whose bundle the change feed
/// watches (and its attributes): the mount's feed listener tells it to
/// forget the bundle's root, and everything below it, as soon as it reads a
/// change under the root. No answer decided before the change outlives that
/// notice:
/// - a lookup the kernel sends for a name it does not hold keeps the
///   directory locked until it has taken the answer, and the notice waits
///   for that lock, so it finds and drops the entry just made;
/// - a lookup that checks an entry the kernel holds runs without the lock,
///   but the notice removes the entry from the kernel's tables, so an answer
///   that arrives after it refreshes an entry no path walk finds again;
/// - a root is registered for the notice before its lookup is decided, so a
///   change made while its first lookup is decided forgets it too;
/// - the kernel takes no attributes asked before its last notice about an
///   inode.
///
/// Long, like ordinary entries in a watched directory: an agent that loads
/// a skill's files again a minute later should not look each up again.
/// Opens are decided by the gate either way; where the kernel opens files
/// itself they were decided at the lookup this entry keeps, and an open
/// before the notice serves the bytes that lookup pinned (approved ones).
pub const WATCHED_TTL: Duration = FED_TTL;

/// The state of a root as an assessment found it just now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootState {
    /// A member of the verification set, in one of SPEC's four states.
    Bundle(BundleState),
    /// A directory with nothing trackable in it: not a bundle, nothing to
    /// load (SPEC: discovery ignores empty directories).
    NotABundle,
    /// Nothing on disk and nothing recorded.
    Absent,
}

impl RootState {
    pub fn as_str(self) -> &'static str {
        match self {
            RootState::Bundle(s) => s.as_str(),
            RootState::NotABundle => "empty",
            RootState::Absent => "absent",
        }
    }
}

/// What gathering found about a path when it is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing to verify: an ordinary path, a container or the lockfile,
    /// and not a symlink.
    Plain,
    /// An ordinary symlink, and whether following its target stays behind
    /// the gate ([`super::links::LinkRule`]).
    Link { stays_behind_gate: bool },
    /// Nothing on the disk under the name.
    Missing,
    /// `seal.json` is invalid or missing.
    LockfileInvalid,
    /// The root the path is (or is inside of), as assessed now.
    Root(RootState),
    /// A path inside a sealed root, and whether `seal.json` records it (a
    /// file, or a directory holding recorded files).
    Recorded(bool),
    /// A symlink at a surface path (a container or an artifact root), as
    /// [`super::links::judge`] found it.
    SurfaceLink(LinkState),
}

/// What was asked, as the table sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Whether a name shows (a lookup, an entry of a listing).
    Lookup,
    /// Which bytes an open for reading serves. `captured`: it has bytes to
    /// serve, the ones the verification that decides it kept (the file was
    /// there when it was walked), or the disk's for a path no verification
    /// decides (an ordinary file, a name never part of a bundle).
    Open { captured: bool },
    /// Whether bytes given out before may be served again without reading
    /// the file. `same`: `seal.json` still records them, and the
    /// verification that allowed them is the one current now.
    Reuse { same: bool },
    /// A change through the view: whether the view makes changes at all
    /// (`writable`), what the machine policy adds to the write rules there
    /// (`guard`), and what the built-in rules add (`built_in`: git's side
    /// doors, the agents' environment files; where the machine policy does
    /// not lift them).
    Change {
        change: Change,
        writable: bool,
        guard: Guard,
        built_in: Guard,
    },
}

/// What the view knows about how the kernel would keep an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kernel {
    /// The view tells the kernel to forget what a change makes stale (its
    /// notifier is set and a listener acts on the change feeds).
    pub told: bool,
    /// The view's directory feed watches the directory holding the name.
    pub dir_watched: bool,
    /// The attributes may change with no notice: a file with several names
    /// (the view may number it anew under some of them: a change through
    /// one leaves the others' stale), or with a set-ID bit (a write drops it
    /// on the disk, as the writer, without the kernel's knowing).
    pub volatile_attrs: bool,
}

/// How long the kernel may keep an answer: the table's lifetime column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// The name's entry (for a name not on the disk, the negative entry).
    pub entry: Duration,
    /// Its attributes.
    pub attrs: Duration,
    /// No verification decides it: a listing of such names only may be
    /// kept (while the directory feed keeps it true).
    pub settled: bool,
}

impl Keep {
    /// Whether this is a sealed or surface answer the kernel keeps only
    /// until the view tells it of its bundle's change (the bundle's root
    /// must be registered for that notice).
    pub fn until_told(&self) -> bool {
        !self.settled && !self.entry.is_zero()
    }
}

/// Why a decision came out as it did (rendered by `seal why`, the dry run
/// and the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Ordinary,
    Lockfile,
    Container,
    Link {
        stays_behind_gate: bool,
    },
    /// A symlink where agents look for extensions (`.claude -> notes`):
    /// following it would take the agent's path away from the gate.
    LinkedContainer,
    FailClosed,
    Verified,
    Empty,
    Removed,
    Absent,
    /// Unverified or Mismatch, let through or held back by the policy.
    Failing {
        state: BundleState,
        policy: Policy,
    },
    Recorded,
    NotRecorded,
    /// Allowed, yet the file is not part of what was verified (it appeared
    /// after the walk): no bytes were kept for it.
    NotCaptured,
    /// Bytes given out before are not served again without a decision:
    /// `seal.json` or the verification current now is another.
    DecideAgain,
    /// A sealed or surface place with a state that only ordinary paths have:
    /// never produced by the gate; hidden, to fail closed.
    Inconsistent,
    /// A symlink at a surface path (see [`super::links`]).
    SurfaceLink(LinkState),
    /// A change through the writable view, allowed or refused.
    Change(ChangeReason),
}

impl Reason {
    /// One line for people (the decision says whether it is visible).
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Ordinary => "ordinary, as on disk",
            Reason::Lockfile => "the project's lockfile, never sealed",
            Reason::Container => {
                "a directory on the way to sealed roots or agent surfaces; each entry inside is \
                 decided on its own"
            }
            Reason::Link {
                stays_behind_gate: true,
            } => "a symlink whose target stays behind the gate",
            Reason::Link {
                stays_behind_gate: false,
            } => "a symlink that would lead around the gate",
            Reason::LinkedContainer => {
                "a symlink on the way to agent surfaces: what lies behind it would be placed by \
                 its target's name, not by where agents look"
            }
            Reason::FailClosed => "seal.json is invalid or missing: fail closed",
            Reason::Verified => {
                "verified; every open is verified again and served from the verified bytes"
            }
            Reason::Empty => "an empty directory: nothing an agent could load",
            Reason::Removed => "recorded in seal.json but not on disk",
            Reason::Absent => "nothing on disk",
            Reason::Failing {
                policy: Policy::Warn,
                ..
            } => "warn mode; every load is logged",
            Reason::Failing {
                policy: Policy::Block,
                ..
            } => "block mode",
            Reason::Recorded => "recorded in seal.json; every open verifies the bundle",
            Reason::NotRecorded => "not recorded in seal.json",
            Reason::NotCaptured => "not part of what was verified (it appeared after the walk)",
            Reason::DecideAgain => "seal.json or the verification changed: decided again",
            Reason::Inconsistent => "no assessment of this sealed path: fail closed",
            Reason::SurfaceLink(state) => state.describe(),
            Reason::Change(reason) => reason.describe(),
        }
    }
}

/// The decision about one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Shown (a lookup), served (an open, again or not), made (a change).
    pub yes: bool,
    pub keep: Keep,
    /// The audit event this decision amounts to when the path is loaded
    /// (opened) or a change refused; `None` for ordinary paths.
    pub event: Option<Event>,
    pub reason: Reason,
}

impl Decision {
    /// "visible" or "hidden".
    pub fn word(&self) -> &'static str {
        if self.yes { "visible" } else { "hidden" }
    }
}

/// Everything a decision is made on, besides the place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub asked: Asked,
    pub found: Found,
    /// The policy in force (the strictest of the project's and the
    /// machine's).
    pub policy: Policy,
    /// The change feed proves the verification decided on current: it will
    /// report the bundle's first change.
    pub current: bool,
    /// How many names the path has (a name in the project root has one).
    pub depth: usize,
    pub kernel: Kernel,
}

/// The decision table.
pub fn decide(place: &Place, facts: Facts) -> Decision {
    let keep = keep(place, &facts);
    let (yes, event, reason) = match facts.asked {
        Asked::Change {
            change,
            writable,
            guard,
            built_in,
        } => {
            let (allowed, reason) = decide_change(place, change, writable, [guard, built_in]);
            let event = (!allowed).then_some(Event::DenyWrite);
            (allowed, event, Reason::Change(reason))
        }
        Asked::Lookup => shows(place, facts.found, facts.policy),
        Asked::Open { captured } => match shows(place, facts.found, facts.policy) {
            (true, _, _) if !captured => (false, Some(Event::Hide), Reason::NotCaptured),
            shown => shown,
        },
        // Records nothing: a refusal only sends the caller to ask afresh.
        Asked::Reuse { same } => match shows(place, facts.found, facts.policy) {
            (true, _, reason @ Reason::Verified) if same => (true, None, reason),
            _ => (false, None, Reason::DecideAgain),
        },
    };
    Decision {
        yes,
        keep,
        event,
        reason,
    }
}

/// The visibility half: whether the path shows, the event that amounts to
/// when it is loaded, and why.
fn shows(place: &Place, found: Found, policy: Policy) -> (bool, Option<Event>, Reason) {
    if let Found::SurfaceLink(link) = found {
        // Shown only when what is read through it is decided where it leads
        // (the kernel's every later lookup is), wherever it stands.
        let shown = link == LinkState::Followed;
        return (
            shown,
            (!shown).then_some(Event::Hide),
            Reason::SurfaceLink(link),
        );
    }
    if !place.is_gated() {
        let plain = match place {
            Place::Lockfile => Reason::Lockfile,
            Place::Container => Reason::Container,
            _ => Reason::Ordinary,
        };
        return match found {
            Found::Missing => (false, None, Reason::Absent),
            Found::Link { .. } if *place == Place::Container => {
                (false, None, Reason::LinkedContainer)
            }
            Found::Link { stays_behind_gate } => {
                (stays_behind_gate, None, Reason::Link { stays_behind_gate })
            }
            // Verification states do not concern ordinary places.
            Found::Plain
            | Found::LockfileInvalid
            | Found::Root(_)
            | Found::Recorded(_)
            | Found::SurfaceLink(_) => (true, None, plain),
        };
    }
    match found {
        Found::Missing => (false, None, Reason::Absent),
        Found::LockfileInvalid => (false, Some(Event::FailClosed), Reason::FailClosed),
        Found::Root(RootState::Bundle(BundleState::Verified)) => {
            (true, Some(Event::Allow), Reason::Verified)
        }
        Found::Root(RootState::NotABundle) => (true, None, Reason::Empty),
        Found::Root(RootState::Bundle(BundleState::Removed)) => {
            (false, Some(Event::Hide), Reason::Removed)
        }
        Found::Root(RootState::Absent) => (false, None, Reason::Absent),
        Found::Root(RootState::Bundle(
            state @ (BundleState::Unverified | BundleState::Mismatch),
        )) => {
            let reason = Reason::Failing { state, policy };
            match policy {
                Policy::Warn => (true, Some(Event::Warn), reason),
                Policy::Block => (false, Some(Event::Hide), reason),
            }
        }
        Found::Recorded(true) => (true, None, Reason::Recorded),
        Found::Recorded(false) => (policy == Policy::Warn, None, Reason::NotRecorded),
        Found::Plain | Found::Link { .. } | Found::SurfaceLink(_) => {
            (false, None, Reason::Inconsistent)
        }
    }
}

/// The lifetime column: how long the kernel may keep the answer. Ordinary
/// answers never depend on a verification: kept [`ORDINARY_TTL`], or
/// [`FED_TTL`] where the directory feed will report their change (a name
/// not on the disk too, below the root: a lost event makes the kernel
/// forget each directory's entry, which drops the negative entries below
/// it, and the root's would outlive that). A sealed or surface answer is
/// kept only while the change feed proves its bundle current and the view
/// will tell the kernel at its first change ([`WATCHED_TTL`]); otherwise
/// every path walk reaches the gate again. A symlink at a surface path is
/// never kept either: what it leads to may change with no notice about the
/// link, so it is judged again at every lookup. Attributes never decide
/// visibility: kept as long as the entry where a feed keeps them true,
/// else [`ATTR_TTL`], and not at all when they may change unseen.
pub fn keep(place: &Place, facts: &Facts) -> Keep {
    let judged_link = matches!(facts.found, Found::SurfaceLink(_));
    let gated = place.is_gated() || judged_link;
    let fed = !gated && facts.kernel.dir_watched;
    let watched = gated && !judged_link && facts.current && facts.kernel.told;
    let entry = match (facts.found, fed, watched, gated) {
        (Found::Missing, true, _, _) if facts.depth > 1 => FED_TTL,
        (Found::Missing, _, _, _) => Duration::ZERO,
        (_, true, _, _) => FED_TTL,
        (_, _, true, _) => WATCHED_TTL,
        (_, _, _, false) => ORDINARY_TTL,
        (_, _, _, true) => Duration::ZERO,
    };
    let attrs = match (facts.found, facts.kernel.volatile_attrs) {
        (Found::Missing, _) | (_, true) => Duration::ZERO,
        _ if fed || watched => FED_TTL,
        _ => ATTR_TTL,
    };
    Keep {
        entry,
        attrs,
        settled: !gated,
    }
}

/// A change the writable view may be asked to make at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Create a directory there.
    MakeDir,
    /// Create anything else there: a file, a node, a symlink, a hard link,
    /// the destination of a rename.
    Make,
    /// Change what is there: write, truncate, mode, owner, times, xattrs.
    Modify,
    /// Remove it (unlink, rmdir).
    Remove,
    /// Move it away (the source of a rename). `holds_protected`: it is a
    /// directory holding paths that are protected (instruction files).
    MoveAway { holds_protected: bool },
    /// Give a file it makes or changes a set-user-ID bit, or a set-group-ID
    /// bit with group execute: a program that would run with its owner's
    /// rights after the run, for whoever starts it.
    GrantSetId,
}

/// Why a change is allowed or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeReason {
    Ordinary,
    /// `seal.json`: only `seal pin` on the host changes it.
    Lockfile,
    /// A sealed root, an agent artifact, or inside one (existing or not).
    Extension,
    /// A container may be made, changed or removed when empty, but nothing
    /// else may take its place and it may not move (it leads to roots).
    ContainerShape,
    /// Moving this directory would move protected files with it.
    HoldsProtected,
    /// The machine policy forces read-only views.
    MachineReadOnly,
    /// A protected path of the machine policy (`protectedPaths`).
    MachineProtected,
    /// On the way to protected paths of the machine policy: it may be made
    /// as a directory, changed or emptied, never replaced or moved.
    MachineOnTheWay,
    /// A file through which git on the host runs commands or finds another
    /// git directory (`.git/config`, `.git/hooks`, `.git/commondir`, ...).
    GitSideDoor,
    /// `.git`: no repository is made, replaced or moved inside the project.
    GitRepository,
    /// A `HEAD` file outside `.git` would make its directory a bare repository.
    BareRepository,
    /// A `.env`, which agents read into their environment as they start.
    AgentEnvFile,
    /// The view is read-only (`seal run --read-only`, `seal mount` without
    /// `--writable`).
    ReadOnlyView,
    /// No change through the view makes a set-ID program.
    SetIdProgram,
}

impl ChangeReason {
    pub fn describe(self) -> &'static str {
        match self {
            ChangeReason::Ordinary => "an ordinary path: changes go to the project",
            ChangeReason::Lockfile => "seal.json changes only through 'seal pin' outside the view",
            ChangeReason::Extension => {
                "an agent extension location (sealed root or surface): immutable from inside"
            }
            ChangeReason::ContainerShape => {
                "a directory on the way to agent extensions: it may be created or emptied, \
                 never replaced or moved"
            }
            ChangeReason::HoldsProtected => {
                "it holds agent instruction files, which would move too"
            }
            ChangeReason::MachineReadOnly => "the machine policy serves every view read-only",
            ChangeReason::MachineProtected => {
                "a protected path of the machine policy: immutable from inside"
            }
            ChangeReason::MachineOnTheWay => {
                "a directory on the way to protected paths of the machine policy: it may be \
                 created or emptied, never replaced or moved"
            }
            ChangeReason::GitSideDoor => {
                "a git configuration, hook or git-directory link: git on the host would run \
                 what it names; immutable from inside"
            }
            ChangeReason::GitRepository => {
                "a .git: no git repository is made, replaced or moved inside the project"
            }
            ChangeReason::BareRepository => {
                "a HEAD file outside .git would make its directory a bare git repository"
            }
            ChangeReason::AgentEnvFile => {
                "a .env file: Gemini CLI, Qwen Code and Aider read it into their environment \
                 as they start (a system prompt, a script before every shell command, commands \
                 to run); it may be removed, never made or changed from inside"
            }
            ChangeReason::ReadOnlyView => "the view is read-only",
            ChangeReason::SetIdProgram => {
                "a set-user-ID or set-group-ID program would run with its owner's rights for \
                 whoever starts it later: no change through the view makes one"
            }
        }
    }

    /// Which policy set the rule behind this reason.
    pub(crate) fn source(self) -> crate::policy::Source {
        match self {
            ChangeReason::MachineReadOnly
            | ChangeReason::MachineProtected
            | ChangeReason::MachineOnTheWay => crate::policy::Source::Machine,
            ChangeReason::Ordinary
            | ChangeReason::Lockfile
            | ChangeReason::Extension
            | ChangeReason::ContainerShape
            | ChangeReason::HoldsProtected
            | ChangeReason::GitSideDoor
            | ChangeReason::GitRepository
            | ChangeReason::BareRepository
            | ChangeReason::AgentEnvFile
            | ChangeReason::ReadOnlyView
            | ChangeReason::SetIdProgram => crate::policy::Source::BuiltIn,
        }
    }
}

/// What the machine policy (docs/POLICY.md: `readOnly`, `protectedPaths`)
/// and the built-in rules ([`crate::policy::built_in_rule`], which the
/// machine policy may lift) add to the write rules at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: the built-in rules alone.
    Open,
    /// On the way to a protected path (`.git` for `.git/hooks/**`).
    OnTheWay,
    /// A protected path.
    Protected,
    /// Every view is read-only.
    ReadOnly,
    /// A git side door: built-in, immutable.
    GitSideDoor,
    /// `.git` itself: built-in; it may only be removed.
    GitRepository,
    /// A `HEAD` outside `.git`: built-in; it may not be made.
    BareRepository,
    /// A `.env`: built-in; it may not be made (as a file: a directory may be)
    /// or changed.
    AgentEnvFile,
}

/// The write half of the table: which changes the view makes. A read-only
/// view makes none. Everything an agent could load from, or that decides
/// what it loads, is immutable from inside, whether it exists or not; the
/// machine policy's guard, then the built-in rules' guard, only ever refuse more
/// (an earlier refusal keeps its reason).
fn decide_change(
    place: &Place,
    change: Change,
    writable: bool,
    guards: [Guard; 2],
) -> (bool, ChangeReason) {
    if !writable {
        return (false, ChangeReason::ReadOnlyView);
    }
    let built_in = match place {
        Place::Lockfile => (false, ChangeReason::Lockfile),
        Place::Sealed { .. } | Place::Artifact { .. } | Place::Unmappable { .. } => {
            (false, ChangeReason::Extension)
        }
        Place::Container => match change {
            Change::MakeDir | Change::Modify | Change::Remove => (true, ChangeReason::Ordinary),
            Change::Make | Change::MoveAway { .. } => (false, ChangeReason::ContainerShape),
            Change::GrantSetId => (false, ChangeReason::SetIdProgram),
        },
        Place::Ordinary => match change {
            Change::MoveAway {
                holds_protected: true,
            } => (false, ChangeReason::HoldsProtected),
            Change::GrantSetId => (false, ChangeReason::SetIdProgram),
            _ => (true, ChangeReason::Ordinary),
        },
    };
    guards
        .into_iter()
        .fold(built_in, |decided, guard| match (decided, guard) {
            ((false, reason), _) => (false, reason),
            (allowed, Guard::Open) => allowed,
            (_, Guard::ReadOnly) => (false, ChangeReason::MachineReadOnly),
            (_, Guard::Protected) => (false, ChangeReason::MachineProtected),
            (allowed, Guard::OnTheWay) => match change {
                Change::MakeDir | Change::Modify | Change::Remove | Change::GrantSetId => allowed,
                Change::Make | Change::MoveAway { .. } => (false, ChangeReason::MachineOnTheWay),
            },
            (_, Guard::GitSideDoor) => (false, ChangeReason::GitSideDoor),
            (allowed, Guard::GitRepository) => match change {
                Change::Remove => allowed,
                _ => (false, ChangeReason::GitRepository),
            },
            (allowed, Guard::BareRepository) => match change {
                Change::Make | Change::MakeDir => (false, ChangeReason::BareRepository),
                _ => allowed,
            },
            (allowed, Guard::AgentEnvFile) => match change {
                Change::Make | Change::Modify => (false, ChangeReason::AgentEnvFile),
                _ => allowed,
            },
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surfaces::SurfaceRule;
    use seal_core::paths::BundleKey;

    fn places() -> Vec<Place> {
        vec![
            Place::Ordinary,
            Place::Lockfile,
            Place::Container,
            Place::Sealed {
                key: BundleKey::parse("./a").unwrap(),
                root_len: 1,
            },
            Place::Artifact {
                root_len: 1,
                rule: SurfaceRule::InstructionFile("CLAUDE.md"),
            },
            Place::Unmappable { root_len: 1 },
        ]
    }

    fn founds() -> Vec<Found> {
        let mut v = vec![
            Found::Plain,
            Found::Link {
                stays_behind_gate: true,
            },
            Found::Link {
                stays_behind_gate: false,
            },
            Found::Missing,
            Found::LockfileInvalid,
            Found::Root(RootState::NotABundle),
            Found::Root(RootState::Absent),
            Found::Recorded(true),
            Found::Recorded(false),
            Found::SurfaceLink(LinkState::Followed),
            Found::SurfaceLink(LinkState::Unsealed),
        ];
        for s in [
            BundleState::Verified,
            BundleState::Unverified,
            BundleState::Removed,
            BundleState::Mismatch,
        ] {
            v.push(Found::Root(RootState::Bundle(s)));
        }
        v
    }

    fn facts(asked: Asked, found: Found, policy: Policy) -> Facts {
        Facts {
            asked,
            found,
            policy,
            current: false,
            depth: 2,
            kernel: Kernel::default(),
        }
    }

    /// The visibility table written out independently, one row per
    /// combination.
    fn expected(place: &Place, found: Found, policy: Policy) -> (bool, Option<Event>) {
        use BundleState::*;
        if let Found::SurfaceLink(link) = found {
            return match link {
                LinkState::Followed => (true, None),
                _ => (false, Some(Event::Hide)),
            };
        }
        if found == Found::Missing {
            return (false, None);
        }
        if !place.is_gated() {
            return match found {
                Found::Link { .. } if *place == Place::Container => (false, None),
                Found::Link { stays_behind_gate } => (stays_behind_gate, None),
                _ => (true, None),
            };
        }
        let block = policy == Policy::Block;
        match found {
            Found::Plain | Found::Link { .. } | Found::Missing => (false, None),
            Found::LockfileInvalid => (false, Some(Event::FailClosed)),
            Found::Root(RootState::Bundle(Verified)) => (true, Some(Event::Allow)),
            Found::Root(RootState::Bundle(Removed)) => (false, Some(Event::Hide)),
            Found::Root(RootState::Bundle(Unverified | Mismatch)) if block => {
                (false, Some(Event::Hide))
            }
            Found::Root(RootState::Bundle(Unverified | Mismatch)) => (true, Some(Event::Warn)),
            Found::Root(RootState::NotABundle) => (true, None),
            Found::Root(RootState::Absent) => (false, None),
            Found::Recorded(recorded) => (recorded || !block, None),
            Found::SurfaceLink(_) => unreachable!("decided above"),
        }
    }

    #[test]
    fn every_combination() {
        let mut rows = 0;
        for place in places() {
            for found in founds() {
                for policy in [Policy::Block, Policy::Warn] {
                    let case = format!("{place:?} × {found:?} × {policy:?}");
                    let (shown, event) = expected(&place, found, policy);
                    let d = decide(&place, facts(Asked::Lookup, found, policy));
                    assert_eq!((d.yes, d.event), (shown, event), "{case}");
                    assert!(!d.reason.describe().is_empty());
                    // An open serves only bytes it has.
                    for captured in [true, false] {
                        let d = decide(&place, facts(Asked::Open { captured }, found, policy));
                        if shown && !captured {
                            assert_eq!((d.yes, d.event), (false, Some(Event::Hide)), "{case}");
                        } else {
                            assert_eq!((d.yes, d.event), (shown, event), "{case}");
                        }
                    }
                    // Bytes are served again only under the verification of
                    // a Verified bundle that allowed them, and nothing is
                    // recorded either way.
                    let verified = found == Found::Root(RootState::Bundle(BundleState::Verified));
                    for same in [true, false] {
                        let d = decide(&place, facts(Asked::Reuse { same }, found, policy));
                        let want = same && verified && place.is_gated();
                        assert_eq!((d.yes, d.event), (want, None), "{case} same {same}");
                    }
                    rows += 1;
                }
            }
        }
        assert_eq!(rows, 6 * 15 * 2);
    }

    /// The lifetime column written out independently.
    #[test]
    fn the_kernel_keeps_an_answer_only_while_it_will_be_told_of_its_change() {
        for place in places() {
            for found in [
                Found::Plain,
                Found::Missing,
                Found::Recorded(true),
                Found::SurfaceLink(LinkState::Followed),
            ] {
                for bits in 0..16u8 {
                    let [told, dir_watched, volatile_attrs, current] =
                        [0, 1, 2, 3].map(|i| bits & (1 << i) != 0);
                    for depth in [1, 2] {
                        let facts = Facts {
                            current,
                            depth,
                            kernel: Kernel {
                                told,
                                dir_watched,
                                volatile_attrs,
                            },
                            ..facts(Asked::Lookup, found, Policy::Block)
                        };
                        let k = keep(&place, &facts);
                        let case = format!("{place:?} {found:?} {facts:?}");
                        // A link at a surface path is judged at every
                        // lookup, wherever it stands.
                        let judged = matches!(found, Found::SurfaceLink(_));
                        let gated = place.is_gated() || judged;
                        let fed = !gated && dir_watched;
                        let watched = gated && !judged && current && told;
                        let entry = if found == Found::Missing {
                            if fed && depth > 1 {
                                FED_TTL
                            } else {
                                Duration::ZERO
                            }
                        } else if fed {
                            FED_TTL
                        } else if watched {
                            WATCHED_TTL
                        } else if gated {
                            Duration::ZERO
                        } else {
                            ORDINARY_TTL
                        };
                        assert_eq!(k.entry, entry, "{case}");
                        let attrs = if volatile_attrs || found == Found::Missing {
                            Duration::ZERO
                        } else if fed || watched {
                            FED_TTL
                        } else {
                            ATTR_TTL
                        };
                        assert_eq!(k.attrs, attrs, "{case}");
                        assert_eq!(k.settled, !gated, "{case}");
                        // A sealed or surface answer is never kept without
                        // a feed that proves it current and a view that
                        // tells the kernel.
                        if gated && !(current && told) {
                            assert_eq!(k.entry, Duration::ZERO, "{case}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_change_at_every_place() {
        let changes = [
            Change::MakeDir,
            Change::Make,
            Change::Modify,
            Change::Remove,
            Change::MoveAway {
                holds_protected: false,
            },
            Change::MoveAway {
                holds_protected: true,
            },
            Change::GrantSetId,
        ];
        let guards = [
            Guard::Open,
            Guard::OnTheWay,
            Guard::Protected,
            Guard::ReadOnly,
        ];
        let gits = [
            Guard::Open,
            Guard::GitSideDoor,
            Guard::GitRepository,
            Guard::BareRepository,
            Guard::AgentEnvFile,
        ];
        // Whether a guard lets a change the rules before it allowed through.
        let permits = |guard: Guard, change: Change| match guard {
            Guard::Open => true,
            Guard::OnTheWay => matches!(
                change,
                Change::MakeDir | Change::Modify | Change::Remove | Change::GrantSetId
            ),
            Guard::Protected | Guard::ReadOnly | Guard::GitSideDoor => false,
            Guard::GitRepository => change == Change::Remove,
            Guard::BareRepository => !matches!(change, Change::Make | Change::MakeDir),
            Guard::AgentEnvFile => !matches!(change, Change::Make | Change::Modify),
        };
        let mut rows = 0;
        for place in places() {
            for change in changes {
                for (guard, git, writable) in guards
                    .into_iter()
                    .flat_map(|g| gits.map(|git| (g, git)))
                    .flat_map(|(g, git)| [true, false].map(|w| (g, git, w)))
                {
                    let asked = Asked::Change {
                        change,
                        writable,
                        guard,
                        built_in: git,
                    };
                    let d = decide(&place, facts(asked, Found::Plain, Policy::Block));
                    let built_in = match (&place, change) {
                        (Place::Ordinary, Change::MoveAway { holds_protected }) => !holds_protected,
                        (_, Change::GrantSetId) => false,
                        (Place::Ordinary, _) => true,
                        (Place::Container, Change::MakeDir | Change::Modify | Change::Remove) => {
                            true
                        }
                        _ => false,
                    };
                    let machine = permits(guard, change);
                    let want = writable && built_in && machine && permits(git, change);
                    let case = format!("{place:?} × {change:?} × {guard:?} × {git:?} × {writable}");
                    assert_eq!(d.yes, want, "{case}");
                    assert_eq!(d.event, (!want).then_some(Event::DenyWrite));
                    let Reason::Change(reason) = d.reason else {
                        panic!("{:?}", d.reason)
                    };
                    assert!(!reason.describe().is_empty());
                    // A read-only view refuses first; then a refusal the
                    // built-in rules make is theirs, one the machine policy
                    // makes the machine's, and what is left the built-in rules'
                    // (built in).
                    let source = reason.source();
                    if writable && change == Change::GrantSetId {
                        let own = matches!(place, Place::Ordinary | Place::Container);
                        assert_eq!(reason == ChangeReason::SetIdProgram, own, "{case}");
                    }
                    match (writable, built_in, machine, d.yes) {
                        (false, ..) => assert_eq!(reason, ChangeReason::ReadOnlyView, "{case}"),
                        (true, false, ..) => {
                            assert_eq!(source, crate::policy::Source::BuiltIn, "{case}")
                        }
                        (true, true, false, _) => {
                            assert_eq!(source, crate::policy::Source::Machine, "{case}")
                        }
                        (true, true, true, false) => assert!(
                            matches!(
                                reason,
                                ChangeReason::GitSideDoor
                                    | ChangeReason::GitRepository
                                    | ChangeReason::BareRepository
                                    | ChangeReason::AgentEnvFile
                            ),
                            "{case}"
                        ),
                        (true, true, true, true) => assert_eq!(reason, ChangeReason::Ordinary),
                    }
                    rows += 1;
                }
            }
        }
        assert_eq!(rows, 6 * 7 * 4 * 5 * 2);
    }

    #[test]
    fn a_symlink_where_agents_look_is_hidden_wherever_it_points() {
        for policy in [Policy::Block, Policy::Warn] {
            let link = Found::Link {
                stays_behind_gate: true,
            };
            let lookup = |place: &Place| decide(place, facts(Asked::Lookup, link, policy)).yes;
            assert!(!lookup(&Place::Container));
            assert!(lookup(&Place::Ordinary));
        }
    }

    #[test]
    fn invalid_lockfile_hides_every_gated_place_whatever_the_policy() {
        for place in places().into_iter().filter(Place::is_gated) {
            for policy in [Policy::Block, Policy::Warn] {
                let d = decide(&place, facts(Asked::Lookup, Found::LockfileInvalid, policy));
                assert!(!d.yes);
            }
        }
    }
}

//! The decision table: what a path may show, given where it is ([`Place`]),
//! what is known about it now ([`State`]) and the policy. One pure function,
//! [`decide`]; the gate, the audit log, `seal why` and `seal run --dry-run`
//! all render its [`Decision`], so they can never disagree.
//!
//! The rules (SPEC §Verification Outcomes, docs/SECURITY.md):
//!
//! * ordinary paths, containers and the lockfile are shown; an ordinary
//!   symlink only when following it stays behind the gate;
//! * every sealed or surface path is hidden while `seal.json` is invalid
//!   (fail closed, whatever the policy);
//! * a root is shown when it is Verified or holds nothing loadable (an empty
//!   directory), hidden when Removed or absent, and when Unverified or
//!   Mismatch shown under `warn` (every load logged) and hidden under `block`;
//! * inside a root the kernel reached through a fresh lookup, `block` shows
//!   only what the lockfile records (the open verifies the bytes).

use seal_core::lockfile::Policy;
use seal_core::verify::BundleState;

use super::audit::Event;
use super::links::LinkState;
use super::place::Place;

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

/// What is known about a path when it is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Nothing to verify: an ordinary path, a container or the lockfile,
    /// and not a symlink.
    Plain,
    /// An ordinary symlink, and whether following its target stays behind
    /// the gate ([`super::links::LinkRule`]).
    Link { stays_behind_gate: bool },
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

/// How long the kernel may remember answers about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// Ordinary paths, containers and the lockfile: their visibility never
    /// depends on a verification.
    Cacheable,
    /// Sealed and surface paths: every lookup must reach the gate.
    Fresh,
    /// A sealed path whose bundle's verification is reused while the change
    /// feed proves it current: the kernel may remember the answer briefly,
    /// and is told to forget it as soon as the feed reports a change.
    Watched,
}

impl Place {
    /// How long the kernel may remember answers about this place.
    pub fn caching(&self) -> Caching {
        if self.is_gated() {
            Caching::Fresh
        } else {
            Caching::Cacheable
        }
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
    /// A sealed or surface place with a state that only ordinary paths have:
    /// never produced by the gate; hidden, to fail closed.
    Inconsistent,
    /// A symlink at a surface path (see [`super::links`]).
    SurfaceLink(LinkState),
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
            Reason::Inconsistent => "no assessment of this sealed path: fail closed",
            Reason::SurfaceLink(state) => state.describe(),
        }
    }
}

/// The decision about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub shown: bool,
    pub caching: Caching,
    /// The audit event this decision amounts to when the path is loaded
    /// (opened); `None` for ordinary paths.
    pub event: Option<Event>,
    pub reason: Reason,
}

impl Decision {
    /// "visible" or "hidden".
    pub fn word(&self) -> &'static str {
        if self.shown { "visible" } else { "hidden" }
    }
}

/// The decision table.
pub fn decide(place: &Place, state: State, policy: Policy) -> Decision {
    if let State::SurfaceLink(link) = state {
        return decide_surface_link(link);
    }
    let caching = place.caching();
    let made = |shown: bool, event: Option<Event>, reason: Reason| Decision {
        shown,
        caching,
        event,
        reason,
    };
    if !place.is_gated() {
        let plain = match place {
            Place::Lockfile => Reason::Lockfile,
            Place::Container => Reason::Container,
            _ => Reason::Ordinary,
        };
        return match state {
            State::Link { .. } if *place == Place::Container => {
                made(false, None, Reason::LinkedContainer)
            }
            State::Link { stays_behind_gate } => {
                made(stays_behind_gate, None, Reason::Link { stays_behind_gate })
            }
            // Verification states do not concern ordinary places.
            State::Plain
            | State::LockfileInvalid
            | State::Root(_)
            | State::Recorded(_)
            | State::SurfaceLink(_) => made(true, None, plain),
        };
    }
    let failing = |state: BundleState| {
        let reason = Reason::Failing { state, policy };
        match policy {
            Policy::Warn => made(true, Some(Event::Warn), reason),
            Policy::Block => made(false, Some(Event::Hide), reason),
        }
    };
    match state {
        State::LockfileInvalid => made(false, Some(Event::FailClosed), Reason::FailClosed),
        State::Root(RootState::Bundle(BundleState::Verified)) => {
            made(true, Some(Event::Allow), Reason::Verified)
        }
        State::Root(RootState::NotABundle) => made(true, None, Reason::Empty),
        State::Root(RootState::Bundle(BundleState::Removed)) => {
            made(false, Some(Event::Hide), Reason::Removed)
        }
        State::Root(RootState::Absent) => made(false, None, Reason::Absent),
        State::Root(RootState::Bundle(s @ (BundleState::Unverified | BundleState::Mismatch))) => {
            failing(s)
        }
        State::Recorded(true) => made(true, None, Reason::Recorded),
        State::Recorded(false) => match policy {
            Policy::Warn => made(true, None, Reason::NotRecorded),
            Policy::Block => made(false, None, Reason::NotRecorded),
        },
        State::Plain | State::Link { .. } | State::SurfaceLink(_) => {
            made(false, None, Reason::Inconsistent)
        }
    }
}

/// A symlink at a surface path is shown only when what is read through it
/// is decided where it leads (the kernel's every later lookup is), and is
/// never remembered: a link changed on disk is judged again at once.
fn decide_surface_link(link: LinkState) -> Decision {
    let shown = link == LinkState::Followed;
    Decision {
        shown,
        caching: Caching::Fresh,
        event: (!shown).then_some(Event::Hide),
        reason: Reason::SurfaceLink(link),
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
    /// The view is read-only (`seal run --read-only`, `seal mount` without
    /// `--writable`).
    ReadOnlyView,
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
            ChangeReason::ReadOnlyView => "the view is read-only",
        }
    }

    /// Which policy set the rule behind this reason.
    pub fn source(self) -> crate::policy::Source {
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
            | ChangeReason::ReadOnlyView => crate::policy::Source::BuiltIn,
        }
    }
}

/// What the machine policy adds to the write rules at a path
/// (docs/POLICY.md: `readOnly`, `protectedPaths`).
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
    /// A git side door ([`crate::policy::git_rule`]): built-in, immutable.
    GitSideDoor,
    /// `.git` itself: built-in; it may only be removed.
    GitRepository,
    /// A `HEAD` outside `.git`: built-in; it may not be made.
    BareRepository,
}

/// The decision about one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeDecision {
    pub allowed: bool,
    pub reason: ChangeReason,
}

/// The write half of the table: which changes the writable view makes.
/// Everything an agent could load from, or that decides what it loads, is
/// immutable from inside, whether it exists or not; the machine policy's
/// `guard` only ever refuses more (a built-in refusal keeps its reason).
pub fn decide_change(place: &Place, change: Change, guard: Guard) -> ChangeDecision {
    let built_in = match place {
        Place::Lockfile => (false, ChangeReason::Lockfile),
        Place::Sealed { .. } | Place::Artifact { .. } | Place::Unmappable { .. } => {
            (false, ChangeReason::Extension)
        }
        Place::Container => match change {
            Change::MakeDir | Change::Modify | Change::Remove => (true, ChangeReason::Ordinary),
            Change::Make | Change::MoveAway { .. } => (false, ChangeReason::ContainerShape),
        },
        Place::Ordinary => match change {
            Change::MoveAway {
                holds_protected: true,
            } => (false, ChangeReason::HoldsProtected),
            _ => (true, ChangeReason::Ordinary),
        },
    };
    let (allowed, reason) = match (built_in, guard) {
        ((false, reason), _) => (false, reason),
        (allowed, Guard::Open) => allowed,
        (_, Guard::ReadOnly) => (false, ChangeReason::MachineReadOnly),
        (_, Guard::Protected) => (false, ChangeReason::MachineProtected),
        (allowed, Guard::OnTheWay) => match change {
            Change::MakeDir | Change::Modify | Change::Remove => allowed,
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
    };
    ChangeDecision { allowed, reason }
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

    fn states() -> Vec<State> {
        let mut v = vec![
            State::Plain,
            State::Link {
                stays_behind_gate: true,
            },
            State::Link {
                stays_behind_gate: false,
            },
            State::LockfileInvalid,
            State::Root(RootState::NotABundle),
            State::Root(RootState::Absent),
            State::Recorded(true),
            State::Recorded(false),
            State::SurfaceLink(LinkState::Followed),
            State::SurfaceLink(LinkState::Unsealed),
        ];
        for s in [
            BundleState::Verified,
            BundleState::Unverified,
            BundleState::Removed,
            BundleState::Mismatch,
        ] {
            v.push(State::Root(RootState::Bundle(s)));
        }
        v
    }

    /// The table written out independently, one row per combination.
    fn expected(place: &Place, state: State, policy: Policy) -> (bool, Option<Event>) {
        use BundleState::*;
        if let State::SurfaceLink(link) = state {
            return match link {
                LinkState::Followed => (true, None),
                _ => (false, Some(Event::Hide)),
            };
        }
        if !place.is_gated() {
            return match state {
                State::Link { .. } if *place == Place::Container => (false, None),
                State::Link { stays_behind_gate } => (stays_behind_gate, None),
                _ => (true, None),
            };
        }
        let block = policy == Policy::Block;
        match state {
            State::Plain | State::Link { .. } => (false, None),
            State::LockfileInvalid => (false, Some(Event::FailClosed)),
            State::Root(RootState::Bundle(Verified)) => (true, Some(Event::Allow)),
            State::Root(RootState::Bundle(Removed)) => (false, Some(Event::Hide)),
            State::Root(RootState::Bundle(Unverified | Mismatch)) if block => {
                (false, Some(Event::Hide))
            }
            State::Root(RootState::Bundle(Unverified | Mismatch)) => (true, Some(Event::Warn)),
            State::Root(RootState::NotABundle) => (true, None),
            State::Root(RootState::Absent) => (false, None),
            State::Recorded(recorded) => (recorded || !block, None),
            State::SurfaceLink(_) => unreachable!("decided above"),
        }
    }

    #[test]
    fn every_combination() {
        let mut rows = 0;
        for place in places() {
            for state in states() {
                for policy in [Policy::Block, Policy::Warn] {
                    let d = decide(&place, state, policy);
                    let (shown, event) = expected(&place, state, policy);
                    assert_eq!(
                        (d.shown, d.event),
                        (shown, event),
                        "{place:?} × {state:?} × {policy:?}"
                    );
                    let caching = match state {
                        State::SurfaceLink(_) => Caching::Fresh,
                        _ => place.caching(),
                    };
                    assert_eq!(d.caching, caching);
                    assert!(!d.reason.describe().is_empty());
                    rows += 1;
                }
            }
        }
        assert_eq!(rows, 6 * 14 * 2);
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
        ];
        let guards = [
            Guard::Open,
            Guard::OnTheWay,
            Guard::Protected,
            Guard::ReadOnly,
            Guard::GitSideDoor,
            Guard::GitRepository,
            Guard::BareRepository,
        ];
        let mut rows = 0;
        for place in places() {
            for change in changes {
                for guard in guards {
                    let d = decide_change(&place, change, guard);
                    let built_in = match (&place, change) {
                        (Place::Ordinary, Change::MoveAway { holds_protected }) => !holds_protected,
                        (Place::Ordinary, _) => true,
                        (Place::Container, Change::MakeDir | Change::Modify | Change::Remove) => {
                            true
                        }
                        _ => false,
                    };
                    let want = built_in
                        && match guard {
                            Guard::Open => true,
                            Guard::OnTheWay => {
                                matches!(change, Change::MakeDir | Change::Modify | Change::Remove)
                            }
                            Guard::Protected | Guard::ReadOnly | Guard::GitSideDoor => false,
                            Guard::GitRepository => change == Change::Remove,
                            Guard::BareRepository => {
                                !matches!(change, Change::Make | Change::MakeDir)
                            }
                        };
                    assert_eq!(d.allowed, want, "{place:?} × {change:?} × {guard:?}");
                    assert!(!d.reason.describe().is_empty());
                    // A refusal the built-in rules make is theirs; one only
                    // the machine policy makes is the machine's.
                    let source = d.reason.source();
                    let machine_guard =
                        matches!(guard, Guard::OnTheWay | Guard::Protected | Guard::ReadOnly);
                    match (built_in, d.allowed) {
                        (false, _) => assert_eq!(source, crate::policy::Source::BuiltIn),
                        (true, false) if machine_guard => {
                            assert_eq!(source, crate::policy::Source::Machine)
                        }
                        (true, false) => assert_eq!(source, crate::policy::Source::BuiltIn),
                        (true, true) => assert_eq!(d.reason, ChangeReason::Ordinary),
                    }
                    rows += 1;
                }
            }
        }
        assert_eq!(rows, 6 * 6 * 7);
    }

    #[test]
    fn a_symlink_where_agents_look_is_hidden_wherever_it_points() {
        for policy in [Policy::Block, Policy::Warn] {
            let link = State::Link {
                stays_behind_gate: true,
            };
            assert!(!decide(&Place::Container, link, policy).shown);
            assert!(decide(&Place::Ordinary, link, policy).shown);
        }
    }

    #[test]
    fn invalid_lockfile_hides_every_gated_place_whatever_the_policy() {
        for place in places().into_iter().filter(Place::is_gated) {
            for policy in [Policy::Block, Policy::Warn] {
                assert!(!decide(&place, State::LockfileInvalid, policy).shown);
            }
        }
    }
}

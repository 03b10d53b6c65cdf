//! The symlink rule for paths outside sealed roots and surfaces.
//!
//! Inside a sealed root a symlink makes the bundle a Mismatch (SPEC), so it is
//! never served. Elsewhere a symlink is shown only when following it cannot
//! reach project content without passing the gate:
//!
//! * a target that resolves (lexically, from the link's place in the view)
//!   inside the view is shown: the kernel follows it through the mount, and
//!   every step of that walk is a gated lookup;
//! * a target inside the real project directory (when the view is mounted
//!   elsewhere) is hidden: it would reach the ungated tree (an absolute link to
//!   the project path, or `../project/...` from a sibling mountpoint);
//! * a target under `/proc` or `/dev/fd` is hidden: magic links such as
//!   `/proc/self/root/...` can re-enter any path;
//! * any other target (a system path such as `/usr/bin/python3`) is shown.
//!
//! Under `seal run` the view is mounted at the project's own path, so the
//! first case covers every link into the project. See docs/SECURITY.md.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use seal_core::fs::RawPath;

/// Where the view is and where the real project is.
#[derive(Debug, Clone)]
pub struct LinkRule {
    view_root: PathBuf,
    /// Every absolute spelling of the real project known to us (as given and
    /// canonical).
    real_project: Vec<PathBuf>,
}

/// Lexical normalisation: `.` dropped, `..` pops (never above `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

impl LinkRule {
    pub fn new(view_root: &Path, real_project: &[PathBuf]) -> LinkRule {
        let mut real: Vec<PathBuf> = real_project.iter().map(|p| normalize(p)).collect();
        real.dedup();
        LinkRule {
            view_root: normalize(view_root),
            real_project: real,
        }
    }

    /// Whether a symlink in directory `link_dir` (project-relative) pointing
    /// at `target` may be shown.
    pub(crate) fn allows(&self, link_dir: &RawPath, target: &OsStr) -> bool {
        let target = Path::new(target);
        let absolute = if target.is_absolute() {
            normalize(target)
        } else {
            let mut p = self.view_root.clone();
            for name in &link_dir.0 {
                p.push(name);
            }
            normalize(&p.join(target))
        };
        let bytes = absolute.as_os_str().as_bytes();
        if bytes == b"/proc"
            || bytes.starts_with(b"/proc/")
            || bytes.starts_with(b"/dev/fd")
            || bytes.starts_with(b"/dev/std")
        {
            return false;
        }
        if absolute.starts_with(&self.view_root) {
            return true;
        }
        !self
            .real_project
            .iter()
            .any(|real| absolute.starts_with(real))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn dir(s: &str) -> RawPath {
        RawPath(
            s.split('/')
                .filter(|x| !x.is_empty())
                .map(OsString::from)
                .collect(),
        )
    }

    #[test]
    fn separate_mountpoint() {
        let rule = LinkRule::new(Path::new("/mnt/view"), &[PathBuf::from("/home/u/proj")]);
        // Into the real project: hidden, however spelled.
        assert!(!rule.allows(&dir("docs"), OsStr::new("/home/u/proj/.claude/skills/x")));
        assert!(!rule.allows(&dir("docs"), OsStr::new("/home/u/proj")));
        assert!(!rule.allows(&dir(""), OsStr::new("../../home/u/proj/CLAUDE.md")));
        assert!(!rule.allows(&dir("a"), OsStr::new("/home/u/other/../proj/x")));
        // Magic links.
        assert!(!rule.allows(&dir(""), OsStr::new("/proc/self/root/home/u/proj")));
        assert!(!rule.allows(&dir(""), OsStr::new("/dev/fd/3")));
        // Inside the view: gated by the mount itself.
        assert!(rule.allows(&dir("docs"), OsStr::new("../.claude/skills/x")));
        assert!(rule.allows(&dir("docs"), OsStr::new("/mnt/view/src")));
        // System paths.
        assert!(rule.allows(&dir(".venv/bin"), OsStr::new("/usr/bin/python3")));
        assert!(rule.allows(&dir(""), OsStr::new("../../usr/lib")));
    }

    #[test]
    fn view_at_the_project_path() {
        let rule = LinkRule::new(Path::new("/home/u/proj"), &[PathBuf::from("/home/u/proj")]);
        assert!(rule.allows(&dir("docs"), OsStr::new("/home/u/proj/.claude/skills/x")));
        assert!(rule.allows(&dir(""), OsStr::new("../proj/CLAUDE.md")));
        assert!(!rule.allows(&dir(""), OsStr::new("/proc/self/cwd")));
    }
}

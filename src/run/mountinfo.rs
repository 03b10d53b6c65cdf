//! `/proc/self/mountinfo`, read to find every mount that shows a part of the
//! project or of an extension location at a second place (a bind mount made
//! before the run), and to list the mounts below a bind that must be made
//! read-only too.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub id: u32,
    pub parent: u32,
    /// `major:minor` of the filesystem.
    pub dev: (u32, u32),
    /// The directory of the filesystem this mount shows (`/` for a whole one).
    pub root: PathBuf,
    /// Where it is mounted.
    pub mountpoint: PathBuf,
    pub fstype: String,
    /// What was mounted (lossy where it is not UTF-8).
    pub source: String,
}

/// Decodes mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(field: &str) -> PathBuf {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// Parses mountinfo text; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            let id = f.next()?.parse().ok()?;
            let parent = f.next()?.parse().ok()?;
            let (maj, min) = f.next()?.split_once(':')?;
            let root = unescape(f.next()?);
            let mountpoint = unescape(f.next()?);
            // Optional fields end with a lone "-".
            let mut rest = f.skip_while(|x| *x != "-");
            rest.next()?;
            let fstype = rest.next()?.to_string();
            let source = unescape(rest.next()?).to_string_lossy().into_owned();
            Some(MountEntry {
                id,
                parent,
                dev: (maj.parse().ok()?, min.parse().ok()?),
                root,
                mountpoint,
                fstype,
                source,
            })
        })
        .collect()
}

/// This process's mounts.
pub fn read() -> std::io::Result<Vec<MountEntry>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/mountinfo")?))
}

/// The mount that `path` (absolute, canonical) is on: the last mounted one
/// whose mountpoint is the longest prefix of it.
pub fn containing<'m>(mounts: &'m [MountEntry], path: &Path) -> Option<&'m MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if path.starts_with(&m.mountpoint)
            && best.is_none_or(|b| m.mountpoint.as_os_str().len() >= b.mountpoint.as_os_str().len())
        {
            best = Some(m);
        }
    }
    best
}

/// Where `path` sits inside its filesystem: the device and the path from the
/// filesystem's root.
pub fn fs_location(mounts: &[MountEntry], path: &Path) -> Option<((u32, u32), PathBuf)> {
    let m = containing(mounts, path)?;
    let rest = path.strip_prefix(&m.mountpoint).ok()?;
    Some((m.dev, m.root.join(rest)))
}

/// Every other place where the filesystem object at `path` (or a directory
/// holding it, or a part of it) is visible through another mount: for each,
/// the path at which `path` itself shows up there (`Within`), or the
/// mountpoint of a mount that shows only a part of `path` (`Part`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Alias {
    /// `path` is visible at this other path.
    Within(PathBuf),
    /// A mount at this path shows a part of what is below `path`.
    Part(PathBuf),
}

pub fn aliases(mounts: &[MountEntry], path: &Path) -> Vec<Alias> {
    let Some(primary) = containing(mounts, path) else {
        return Vec::new();
    };
    let Some((dev, rel)) = fs_location(mounts, path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in mounts {
        if m.dev != dev || m.id == primary.id {
            continue;
        }
        // A mount below `path` itself (a filesystem mounted inside it) is part
        // of what `path` shows, not a second way to it.
        if m.mountpoint.starts_with(path) {
            continue;
        }
        if let Ok(below) = rel.strip_prefix(&m.root) {
            let at = m.mountpoint.join(below);
            if at != path {
                out.push(Alias::Within(at));
            }
        } else if m.root.starts_with(&rel) {
            out.push(Alias::Part(m.mountpoint.clone()));
        }
    }
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 254:0 /home/u/proj /srv/proj rw,relatime shared:1 - ext4 /dev/vda rw
41 27 254:0 /home /mnt/all\\040homes rw - ext4 /dev/vda rw
42 27 254:0 /home/u/proj/src /opt/src rw - ext4 /dev/vda rw
43 27 0:50 / /home/u/proj/mnt rw - tmpfs tmpfs rw
";

    #[test]
    fn parses_and_unescapes() {
        let m = parse(SAMPLE);
        assert_eq!(m.len(), 6);
        assert_eq!(m[3].mountpoint, PathBuf::from("/mnt/all homes"));
        assert_eq!(m[2].root, PathBuf::from("/home/u/proj"));
        assert_eq!(m[0].fstype, "proc");
        assert_eq!(m[2].fstype, "ext4");
        assert_eq!(m[5].source, "tmpfs");
        // An octal escape only where three digits follow.
        let odd = parse("1 1 0:1 / /a\\9b\\04 rw - fuse.seal /x\\011y\\134w rw\n");
        assert_eq!(odd[0].mountpoint, PathBuf::from("/a\\9b\\04"));
        assert_eq!(odd[0].source, "/x\ty\\w");
    }

    #[test]
    fn finds_second_ways_to_a_path() {
        let m = parse(SAMPLE);
        let a = aliases(&m, Path::new("/home/u/proj"));
        assert_eq!(
            a,
            vec![
                Alias::Part(PathBuf::from("/opt/src")),
                Alias::Within(PathBuf::from("/mnt/all homes/u/proj")),
                Alias::Within(PathBuf::from("/srv/proj")),
            ]
        );
        assert!(aliases(&m, Path::new("/etc")).is_empty());
    }
}

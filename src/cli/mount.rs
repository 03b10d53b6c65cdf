//! `seal mount MOUNTPOINT [-o OPTIONS] [--daemon]`: serve the sealed view,
//! in the foreground or detached; and the mount(8) helper: run as
//! `mount.fuse.seal` (a link to this binary), `mount -t fuse.seal PROJECT
//! MOUNTPOINT -o ...` and fstab lines of type `fuse.seal` reach the same code
//! with mount(8)'s helper arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{CliError, Context, Done};
use crate::mount::{MountRequest, detach, run_mount, shown};

/// The name mount(8) runs for type `fuse.seal`: /sbin/mount.fuse.seal.
pub const HELPER_NAME: &str = "mount.fuse.seal";

pub struct MountArgs {
    pub mountpoint: PathBuf,
    pub audit_log: Option<PathBuf>,
    pub allow_other: bool,
    /// `--writable`: the same as `-o rw` (a later `-o ro` wins).
    pub writable: bool,
    /// `--rehash-every-open` (or `-o rehash_every_open`).
    pub rehash_every_open: bool,
    /// `--kernel-opens` (or `-o kernel_opens`).
    pub kernel_opens: bool,
    /// `-o` lists, as given.
    pub options: Vec<String>,
    pub daemon: bool,
}

/// What the `-o` lists ask for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    writable: bool,
    rehash_every_open: bool,
    kernel_opens: bool,
    allow_other: bool,
    audit_log: Option<PathBuf>,
    nonempty: bool,
    noexec: bool,
}

/// Options mount(8) and fstab pass to every helper (see mount(8), "FILESYSTEM-
/// INDEPENDENT MOUNT OPTIONS"), which say nothing to the view: accepted and
/// ignored. The view is always nodev and nosuid, and always has
/// default_permissions (the kernel checks modes).
const IGNORED: &[&str] = &[
    "defaults",
    "auto",
    "noauto",
    "user",
    "nouser",
    "users",
    "owner",
    "group",
    "nofail",
    "_netdev",
    "nodev",
    "dev",
    "nosuid",
    "suid",
    "atime",
    "noatime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
    "diratime",
    "nodiratime",
    "lazytime",
    "nolazytime",
    "sync",
    "async",
    "dirsync",
    "silent",
    "loud",
    "default_permissions",
];

/// Options with a value that are ignored likewise (`user=NAME` comes from
/// mount(8) for user mounts).
const IGNORED_PREFIXES: &[&str] = &["x-", "comment=", "user=", "fsname=", "subtype="];

/// Applies comma-separated `lists` in order (a later `ro`/`rw` wins). An
/// unknown option is an error unless `sloppy` (mount's `-s`).
fn parse_options(lists: &[String], sloppy: bool, into: &mut Options) -> Result<(), String> {
    for option in lists.iter().flat_map(|l| l.split(',')) {
        match option {
            "" => {}
            "ro" => into.writable = false,
            "rw" => into.writable = true,
            "allow_other" => into.allow_other = true,
            "nonempty" => into.nonempty = true,
            "noexec" => into.noexec = true,
            "rehash_every_open" => into.rehash_every_open = true,
            "kernel_opens" => into.kernel_opens = true,
            "exec" => into.noexec = false,
            "audit_log" | "audit_log=" => {
                return Err("mount option audit_log needs a file: audit_log=FILE".into());
            }
            o if o.starts_with("audit_log=") => {
                into.audit_log = Some(PathBuf::from(&o["audit_log=".len()..]));
            }
            o if IGNORED.contains(&o) || IGNORED_PREFIXES.iter().any(|p| o.starts_with(p)) => {}
            _ if sloppy => {}
            o => {
                return Err(format!(
                    "unknown mount option {} (seal knows ro, rw, allow_other, audit_log=FILE, \
                     nonempty, exec, noexec, rehash_every_open, kernel_opens, and ignores the \
                     generic ones \
                     mount(8) passes)",
                    seal_core::escape::quoted(o)
                ));
            }
        }
    }
    Ok(())
}

pub fn run(ctx: Context, args: MountArgs) -> Result<Done, CliError> {
    serve(ctx, args, false, true)
}

/// Mounts and serves. `sloppy` ignores unknown options; `announce` prints the
/// readiness line (mount(8)'s helper is silent on success unless `-v`).
fn serve(ctx: Context, args: MountArgs, sloppy: bool, announce: bool) -> Result<Done, CliError> {
    let mut options = Options {
        allow_other: args.allow_other,
        audit_log: args.audit_log,
        writable: args.writable,
        rehash_every_open: args.rehash_every_open,
        kernel_opens: args.kernel_opens,
        ..Options::default()
    };
    parse_options(&args.options, sloppy, &mut options).map_err(CliError::Refused)?;
    let machine = super::machine_policy()?;
    if machine.read_only && options.writable {
        eprintln!(
            "seal: mount: the machine policy {} serves every view read-only; the view will be \
             read-only",
            machine.shown_file()
        );
        options.writable = false;
    }
    options.rehash_every_open |= machine.rehash_every_open;
    if options.kernel_opens && options.writable {
        return Err(CliError::Refused(
            "--kernel-opens serves the read-only view only (the writable view asks at every \
             open, to pass writes through as the writer); drop one of them"
                .into(),
        ));
    }
    let request = MountRequest {
        project_dir: ctx.dir.clone(),
        mountpoint: args.mountpoint.clone(),
        audit_log: options.audit_log,
        allow_other: options.allow_other,
        writable: options.writable,
        nonempty: options.nonempty,
        noexec: options.noexec,
        rehash_every_open: options.rehash_every_open,
        kernel_opens: options.kernel_opens,
    };
    // Before anything starts a thread; errors from here on are printed by
    // the child, whose exit code the waiting parent takes as its own.
    let detached = if args.daemon {
        Some(detach().map_err(CliError::Mount)?)
    } else {
        None
    };
    let daemon = detached.is_some();
    run_mount(&request, ctx.project, detached, |view| {
        if !announce {
            return;
        }
        let stop = if daemon {
            format!("detached as pid {}; stop with", std::process::id())
        } else {
            "stop with".to_string()
        };
        eprintln!(
            "seal: mount: serving the sealed view of {} at {} ({}); {stop} 'umount {}'{}",
            shown(&crate::mount::absolute(&ctx.dir)),
            shown(view),
            crate::mount::describe_mode(request.writable, request.kernel_opens),
            shown(&args.mountpoint),
            if daemon { "" } else { " or Ctrl-C" },
        );
    })
    .map_err(CliError::Mount)?;
    Ok(Done::Success)
}

/// True when this process was started as the mount(8) helper.
pub fn invoked_as_helper(argv0: Option<&OsString>) -> bool {
    argv0
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .is_some_and(|name| name == HELPER_NAME)
}

/// The helper's arguments: `PROJECT MOUNTPOINT [-sfnv] [-N NS] [-o OPTS]
/// [-t TYPE]` (mount(8), "EXTERNAL HELPERS").
#[derive(Debug, Default, PartialEq, Eq)]
struct HelperArgs {
    positional: Vec<OsString>,
    options: Vec<String>,
    sloppy: bool,
    fake: bool,
    verbose: bool,
}

fn parse_helper_args(args: &[OsString]) -> Result<HelperArgs, String> {
    let mut out = HelperArgs::default();
    let mut iter = args.iter();
    let text = |a: &OsString| {
        a.to_str()
            .map(str::to_string)
            .ok_or_else(|| "mount options must be UTF-8".to_string())
    };
    while let Some(arg) = iter.next() {
        let s = arg.to_str().unwrap_or("");
        if s == "-o" || s == "-t" || s == "-N" {
            let value = iter.next().ok_or_else(|| format!("{s} needs a value"))?;
            match s {
                "-o" => out.options.push(text(value)?),
                "-t" => {
                    let t = text(value)?;
                    if t != crate::mount::FS_TYPE && t != "seal" {
                        return Err(format!(
                            "{HELPER_NAME} mounts type {}, not {}",
                            crate::mount::FS_TYPE,
                            seal_core::escape::quoted(&t)
                        ));
                    }
                }
                _ => {
                    return Err(
                        "mounting into another mount namespace (-N) is not supported".into(),
                    );
                }
            }
        } else if let Some(opts) = s.strip_prefix("-o").filter(|o| !o.is_empty()) {
            out.options.push(opts.to_string());
        } else if s.len() > 1 && s.starts_with('-') && s[1..].chars().all(|c| "sfnv".contains(c)) {
            out.sloppy |= s.contains('s');
            out.fake |= s.contains('f');
            out.verbose |= s.contains('v');
        } else if s.starts_with('-') && s.len() > 1 {
            return Err(format!(
                "unknown helper flag {}",
                seal_core::escape::quoted(s)
            ));
        } else {
            out.positional.push(arg.clone());
        }
    }
    if out.positional.len() != 2 {
        return Err(format!(
            "usage: {HELPER_NAME} PROJECT MOUNTPOINT [-o ro,allow_other,audit_log=FILE,nonempty] \
             (run by 'mount -t fuse.seal' and fstab)"
        ));
    }
    Ok(out)
}

/// `mount.fuse.seal PROJECT MOUNTPOINT -o OPTIONS`: checks everything, then
/// detaches once the view is mounted, as mount(8) expects. `-f` (fake)
/// checks the options and stops there.
pub fn helper(args: &[OsString]) -> Result<Done, CliError> {
    let parsed = parse_helper_args(args).map_err(CliError::Refused)?;
    let [project, mountpoint] = [&parsed.positional[0], &parsed.positional[1]];
    if parsed.fake {
        parse_options(&parsed.options, parsed.sloppy, &mut Options::default())
            .map_err(CliError::Refused)?;
        return Ok(Done::Success);
    }
    let ctx = Context::open(Some(PathBuf::from(project)))?;
    serve(
        ctx,
        MountArgs {
            mountpoint: PathBuf::from(mountpoint),
            audit_log: None,
            allow_other: false,
            // mount(8) passes rw or ro itself.
            writable: false,
            rehash_every_open: false,
            kernel_opens: false,
            options: parsed.options,
            daemon: true,
        },
        parsed.sloppy,
        parsed.verbose,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(lists: &[&str]) -> Result<Options, String> {
        let mut o = Options::default();
        let lists: Vec<String> = lists.iter().map(|s| s.to_string()).collect();
        parse_options(&lists, false, &mut o).map(|()| o)
    }

    #[test]
    fn options_as_mount_spells_them() {
        let o = parsed(&[
            "ro,allow_other,audit_log=/var/log/seal.log",
            "nonempty,noexec",
        ])
        .unwrap();
        assert_eq!(
            o,
            Options {
                writable: false,
                rehash_every_open: false,
                kernel_opens: false,
                allow_other: true,
                audit_log: Some(PathBuf::from("/var/log/seal.log")),
                nonempty: true,
                noexec: true,
            }
        );
        assert!(parsed(&["rw"]).unwrap().writable);
        assert!(!parsed(&["rw,ro"]).unwrap().writable, "the last one wins");
        // What fstab and mount(8) add is accepted and changes nothing.
        assert_eq!(
            parsed(&[
                "defaults,nofail,_netdev,nosuid,nodev,relatime,x-systemd.automount,user=alice"
            ])
            .unwrap(),
            Options::default()
        );
    }

    #[test]
    fn unknown_options_are_refused_unless_sloppy() {
        let e = parsed(&["ro,writeback"]).unwrap_err();
        assert!(e.contains("\"writeback\""), "{e}");
        assert!(parsed(&["audit_log"]).is_err());
        let mut o = Options::default();
        parse_options(&["ro,writeback".into()], true, &mut o).unwrap();
    }

    #[test]
    fn helper_arguments() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        let h =
            parse_helper_args(&args(&["/p", "/m", "-o", "ro,allow_other", "-n", "-sv"])).unwrap();
        assert_eq!(h.positional, args(&["/p", "/m"]));
        assert_eq!(h.options, vec!["ro,allow_other".to_string()]);
        assert!(h.sloppy && h.verbose && !h.fake);
        let h = parse_helper_args(&args(&["/p", "/m", "-oro", "-t", "fuse.seal", "-f"])).unwrap();
        assert_eq!(h.options, vec!["ro".to_string()]);
        assert!(h.fake);
        assert!(parse_helper_args(&args(&["/p"])).is_err());
        assert!(parse_helper_args(&args(&["/p", "/m", "-t", "ext4"])).is_err());
        assert!(parse_helper_args(&args(&["/p", "/m", "-N", "/proc/1/ns/mnt"])).is_err());
        assert!(parse_helper_args(&args(&["/p", "/m", "-x"])).is_err());
    }

    #[test]
    fn helper_is_recognised_by_its_name_only() {
        assert!(invoked_as_helper(Some(&"/sbin/mount.fuse.seal".into())));
        assert!(invoked_as_helper(Some(&"mount.fuse.seal".into())));
        assert!(!invoked_as_helper(Some(&"/usr/bin/seal".into())));
        assert!(!invoked_as_helper(None));
    }
}

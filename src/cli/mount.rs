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
    /// `--writable`: the same as `-o writable`.
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
    /// `ro` was written (refused together with `writable`).
    read_only: bool,
    /// `rw` was written: it never asks for the writable view.
    rw: bool,
    rehash_every_open: bool,
    kernel_opens: bool,
    allow_other: bool,
    audit_log: Option<PathBuf>,
    nonempty: bool,
    noexec: bool,
}

/// The options seal itself understands, in the order `--help`, the README
/// and the unknown-option error list them (one list, so the three agree).
///
/// The view is read-only unless `writable` is written. `rw` cannot ask for
/// it: mount(8) passes `rw` to every helper whenever `ro` is not given (an
/// fstab line with `defaults`, `mount -t fuse.seal P M -o allow_other`), so
/// a helper cannot tell a written `rw` from mount(8)'s own, and a view
/// that turned writable on mount(8)'s default would let writes reach the
/// project that nobody asked for.
pub const KNOWN_OPTIONS: &[(&str, &str)] = &[
    ("ro", "the read-only view (the default)"),
    ("writable", "the writable view, as --writable"),
    (
        "rw",
        "accepted and ignored (mount(8) passes it whenever ro is not given, so it never makes \
         the view writable)",
    ),
    ("allow_other", "as --allow-other"),
    ("audit_log=FILE", "as --audit-log FILE"),
    ("nonempty", "mount over a directory that is not empty"),
    ("noexec", "nothing in the view may be executed"),
    ("exec", "undoes noexec"),
    ("rehash_every_open", "as --rehash-every-open"),
    ("kernel_opens", "as --kernel-opens"),
];

/// The option names, comma-separated: what the unknown-option error and
/// the README name.
pub fn known_option_names() -> String {
    KNOWN_OPTIONS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `-o` help of `seal mount`, from [`KNOWN_OPTIONS`].
pub fn options_help() -> String {
    let list: Vec<String> = KNOWN_OPTIONS
        .iter()
        .map(|(name, what)| format!("{name}: {what}"))
        .collect();
    format!(
        "Mount options, comma-separated, as mount(8) spells them. {}. The generic ones mount(8) \
         and fstab pass (defaults, nofail, _netdev, x-*, ...) are accepted and ignored; any \
         other is refused",
        list.join("; ")
    )
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

/// Applies comma-separated `lists` in order. An unknown option is an error
/// unless `sloppy` (mount's `-s`); so is `ro` together with `writable`.
fn parse_options(lists: &[String], sloppy: bool, into: &mut Options) -> Result<(), String> {
    for option in lists.iter().flat_map(|l| l.split(',')) {
        match option {
            "" => {}
            "ro" => into.read_only = true,
            "rw" => into.rw = true,
            "writable" => into.writable = true,
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
                    "unknown mount option {} (seal knows {}, and ignores the generic ones \
                     mount(8) passes)",
                    seal_core::escape::quoted(o),
                    known_option_names()
                ));
            }
        }
    }
    if into.read_only && into.writable {
        return Err(
            "mount options ro and writable (or --writable) contradict each other; drop one".into(),
        );
    }
    Ok(())
}

pub fn run(ctx: Context, args: MountArgs) -> Result<Done, CliError> {
    serve(ctx, args, Caller::CommandLine)
}

/// Who asked for the mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// `seal mount`: says when the view is ready.
    CommandLine,
    /// mount(8) through `mount.fuse.seal`: `sloppy` (`-s`) ignores unknown
    /// options; silent on success unless `verbose` (`-v`), as mount helpers
    /// are.
    Helper { sloppy: bool, verbose: bool },
}

/// Mounts and serves.
fn serve(ctx: Context, args: MountArgs, caller: Caller) -> Result<Done, CliError> {
    let (sloppy, announce) = match caller {
        Caller::CommandLine => (false, true),
        Caller::Helper { sloppy, verbose } => (sloppy, verbose),
    };
    let mut options = Options {
        allow_other: args.allow_other,
        audit_log: args.audit_log,
        writable: args.writable,
        rehash_every_open: args.rehash_every_open,
        kernel_opens: args.kernel_opens,
        ..Options::default()
    };
    parse_options(&args.options, sloppy, &mut options).map_err(CliError::Refused)?;
    // mount(8) passes rw to its helper unasked; only a person who typed it
    // on seal's command line needs telling.
    if options.rw && !options.writable && caller == Caller::CommandLine {
        sayln!(
            "seal: mount: note: rw does not make the view writable (mount(8) passes rw to every \
             helper); the view is read-only. Use --writable or -o writable for the writable view"
        );
    }
    let machine = super::machine_policy()?;
    if machine.read_only && options.writable {
        sayln!(
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
        sayln!(
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
            "usage: {HELPER_NAME} PROJECT MOUNTPOINT [-o OPTIONS] (run by 'mount -t fuse.seal' \
             and fstab; OPTIONS: {})",
            known_option_names()
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
            // mount(8) passes rw or ro itself; only `writable` in the
            // options asks for the writable view.
            writable: false,
            rehash_every_open: false,
            kernel_opens: false,
            options: parsed.options,
            daemon: true,
        },
        Caller::Helper {
            sloppy: parsed.sloppy,
            verbose: parsed.verbose,
        },
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
                read_only: true,
                rw: false,
                rehash_every_open: false,
                kernel_opens: false,
                allow_other: true,
                audit_log: Some(PathBuf::from("/var/log/seal.log")),
                nonempty: true,
                noexec: true,
            }
        );
        assert!(parsed(&["writable"]).unwrap().writable);
        assert!(parsed(&["rw,writable"]).unwrap().writable);
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
    fn the_view_is_read_only_unless_writable_is_written() {
        // What mount(8) hands the helper for `-o allow_other`, for an fstab
        // line with `defaults`, and for no options at all: `rw` first.
        for lists in [&["rw,allow_other"][..], &["rw"], &["rw", "defaults"], &[]] {
            let o = parsed(lists).unwrap();
            assert!(!o.writable, "{lists:?} made the view writable");
        }
        assert!(parsed(&["rw,writable,allow_other"]).unwrap().writable);
        // Contradictions are refused, whatever the order.
        for lists in [&["ro,writable"][..], &["writable", "ro"]] {
            let e = parsed(lists).unwrap_err();
            assert!(e.contains("contradict"), "{e}");
        }
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
    fn help_error_and_known_options_name_the_same_options() {
        let e = parsed(&["bogus"]).unwrap_err();
        let help = options_help();
        for (name, _) in KNOWN_OPTIONS {
            assert!(e.contains(name), "the error lacks {name}: {e}");
            assert!(help.contains(name), "the help lacks {name}: {help}");
            // Every listed option parses (with a value where it takes one).
            let spelled = name.replace("=FILE", "=/tmp/f");
            parsed(&[&spelled]).unwrap();
        }
        assert_eq!(
            e.split(" (seal knows ").nth(1).unwrap(),
            format!(
                "{}, and ignores the generic ones mount(8) passes)",
                known_option_names()
            )
        );
    }

    #[test]
    fn the_readme_lists_the_same_options() {
        let readme = include_str!("../../README.md");
        let start = readme
            .find("Options (the same list as `seal mount --help`")
            .expect("the README's option paragraph");
        let paragraph = &readme[start..];
        let paragraph = &paragraph[..paragraph.find("\n\n").unwrap()];
        // The options seal knows come before the generic ones it ignores.
        let own = &paragraph[..paragraph.find("the generic ones").unwrap()];
        let named: Vec<&str> = own
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| !w.contains(' ') && !w.starts_with('-') && *w != "mount(8)")
            .collect();
        for (name, _) in KNOWN_OPTIONS {
            assert!(named.contains(name), "the README lacks {name}: {own}");
        }
        for word in named {
            assert!(
                KNOWN_OPTIONS.iter().any(|(name, _)| *name == word),
                "the README names {word}, which seal does not know"
            );
        }
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

//! `seal mount MOUNTPOINT`: serve the sealed view in the foreground until it
//! is unmounted or interrupted.

use std::path::PathBuf;

use super::{CliError, Context, Done};
use crate::mount::{MountRequest, run_mount, shown};

pub fn run(
    ctx: Context,
    mountpoint: PathBuf,
    audit_log: Option<PathBuf>,
    allow_other: bool,
    writable: bool,
) -> Result<Done, CliError> {
    let request = MountRequest {
        project_dir: ctx.dir.clone(),
        mountpoint: mountpoint.clone(),
        audit_log,
        allow_other,
        writable,
    };
    run_mount(&request, ctx.project, |view| {
        eprintln!(
            "seal: mount: serving the sealed view of {} at {} ({}); stop with 'umount {}' or Ctrl-C",
            shown(&crate::mount::absolute(&ctx.dir)),
            shown(view),
            crate::mount::describe_mode(writable),
            shown(&mountpoint),
        );
    })
    .map_err(CliError::Mount)?;
    Ok(Done::Success)
}

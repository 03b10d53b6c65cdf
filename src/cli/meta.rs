//! Texts generated from the clap definitions themselves, so they can never
//! disagree with the parser: shell completions (`seal completions SHELL`)
//! and man pages (`seal man [COMMAND]`), both on stdout.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (seal-COMMAND(1)); default: seal(1)
    command: Option<String>,
}

/// Writes `bytes` to stdout; a closed stdout (`| head`) is exit 0 too.
fn emit(bytes: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
    ExitCode::SUCCESS
}

pub fn completions(mut cmd: clap::Command, args: &CompletionsArgs) -> ExitCode {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "seal", &mut buf);
    emit(&buf)
}

/// Sections clap does not know: exit codes, files and environment.
fn extra_sections(top: bool) -> Vec<u8> {
    use clap_mangen::roff::{Roff, bold, roman};
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        (
            "0",
            "Verified, Drift or Warning; every successful init, pin and mount.",
        ),
        (
            "1",
            "Blocked: unverified or mismatched bundles under policy block (seal run: also a \
             project-external extension that cannot be masked).",
        ),
        (
            "2",
            "seal.json missing or invalid, a declined or impossible change, a refused \
             mountpoint, a refused machine policy, a system error.",
        ),
    ] {
        roff.control("TP", [])
            .text([bold(code)])
            .text([roman(meaning)]);
    }
    roff.control("PP", []).text([roman(
        "seal run exits with the command's own status (128+N when signal N ended it).",
    )]);
    roff.control("PP", []).text([roman(format!(
        "seal run --dry-run {}.",
        super::DRY_RUN_EXIT
    ))]);
    roff.control("SH", ["FILES"]);
    for (file, meaning) in [
        (
            "seal.json".to_string(),
            "The project's Seal v1 lockfile, in the project directory (the current directory, \
             or -C DIR; parent directories are never searched).",
        ),
        (
            seal_gate::policy::DEFAULT_PATH.to_string(),
            "The machine policy: rules no project's seal.json can weaken. Refused (exit 2) \
             unless it is a regular file owned by root that only root may write, in \
             directories only root may change.",
        ),
        (
            format!("/sbin/{}", super::mount::HELPER_NAME),
            "A link to seal, which mount(8) and fstab run for file system type fuse.seal.",
        ),
        (
            seal_gate::policy::SYSLOG_SOCKET.to_string(),
            "The syslog socket audit events go to when the machine policy names a syslog sink.",
        ),
        (
            "/dev/fuse".to_string(),
            "The FUSE device seal mount and seal run need (non-root mounts also need \
             fusermount3, from the fuse3 package).",
        ),
    ] {
        roff.control("TP", [])
            .text([bold(file)])
            .text([roman(meaning)]);
    }
    if top {
        roff.control("SH", ["ENVIRONMENT"]);
        for (name, meaning) in [
            (
                "SEAL_LOG",
                "Operational log filter on stderr, for example info or sealfs=debug.",
            ),
            (
                "NOTIFY_SOCKET",
                "Set by systemd for Type=notify services: seal mount sends READY=1 once the \
                 view is mounted and STOPPING=1 when it unmounts.",
            ),
            (
                "GITHUB_WORKSPACE",
                "With verify --format github or sarif, file paths are made relative to it.",
            ),
        ] {
            roff.control("TP", [])
                .text([bold(name)])
                .text([roman(meaning)]);
        }
        roff.control("SH", ["SEE ALSO"]);
        roff.text([roman(
            "mount(8), fstab(5), fusermount3(1); the Seal v1 specification.",
        )]);
    }
    roff.to_roff().into_bytes()
}

/// The SYNOPSIS section: every option with its value name (clap_mangen
/// drops the value of an option that has only a short name, so `-C DIR`
/// came out as `-C `), then the positionals, then `COMMAND`.
fn synopsis(cmd: &clap::Command) -> Vec<u8> {
    use clap::ArgAction;
    use clap_mangen::roff::{Inline, Roff, bold, italic, roman};
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut line: Vec<Inline> = vec![bold(name.to_string())];
    let value = |arg: &clap::Arg| {
        arg.get_value_names()
            .map(|v| v.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| arg.get_id().as_str().to_uppercase())
    };
    let mut options: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    options.sort_by_key(|a| {
        (
            a.get_short().is_none(),
            a.get_short(),
            a.get_long().map(str::to_string),
        )
    });
    for arg in options {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => continue,
        };
        let (open, close) = if arg.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(bold(flag));
        if matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) {
            line.push(roman(" "));
            line.push(italic(value(arg)));
        }
        line.push(roman(close));
        if matches!(arg.get_action(), ArgAction::Append | ArgAction::Count) {
            line.push(roman("..."));
        }
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let many = matches!(arg.get_action(), ArgAction::Append)
            || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        if arg.is_required_set() {
            line.push(roman(" "));
            line.push(italic(value(arg)));
        } else {
            line.push(roman(" ["));
            line.push(italic(value(arg)));
            line.push(roman("]"));
        }
        if many {
            line.push(roman("..."));
        }
    }
    if cmd.has_subcommands() {
        line.push(roman(" "));
        line.push(italic("COMMAND"));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    roff.text(line);
    roff.to_roff().into_bytes()
}

/// One man page: clap's sections, then ours, then the version.
fn page(cmd: clap::Command, top: bool) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    buf.extend_from_slice(&synopsis(&cmd));
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    if top {
        man.render_subcommands_section(&mut buf)?;
    }
    buf.extend_from_slice(&extra_sections(top));
    man.render_version_section(&mut buf)?;
    Ok(buf)
}

/// The roff of seal(1), or of seal-COMMAND(1); an error names an unknown
/// command.
fn render(mut cmd: clap::Command, command: Option<&str>) -> Result<Vec<u8>, String> {
    // Propagates global options (-C) into each command first.
    cmd.build();
    let (page_cmd, top) = match command {
        None => (cmd, true),
        Some(name) => match cmd.find_subcommand(name) {
            // clap names are 'static; this process prints one page and exits.
            Some(sub) => (
                sub.clone()
                    .name(&*Box::leak(format!("seal-{name}").into_boxed_str()))
                    .version(env!("CARGO_PKG_VERSION")),
                false,
            ),
            None => {
                return Err(format!(
                    "no command {}; try 'seal --help'",
                    seal_core::escape::quoted(name)
                ));
            }
        },
    };
    page(page_cmd, top).map_err(|e| e.to_string())
}

/// A man page as text (for the tests).
#[cfg(test)]
pub fn page_text(cmd: clap::Command, command: Option<&str>) -> String {
    String::from_utf8(render(cmd, command).unwrap()).unwrap()
}

pub fn man(cmd: clap::Command, args: &ManArgs) -> ExitCode {
    match render(cmd, args.command.as_deref()) {
        Ok(buf) => emit(&buf),
        Err(e) => {
            sayln!("seal: man: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_page_has_exit_status_and_files_and_a_synopsis_with_values() {
        let top = page_text(crate::cli::Cli::command(), None);
        for command in [
            None,
            Some("policy"),
            Some("verify"),
            Some("mount"),
            Some("why"),
        ] {
            let text = page_text(crate::cli::Cli::command(), command);
            for section in [".SH \"EXIT STATUS\"", ".SH FILES", ".SH SYNOPSIS"] {
                assert!(text.contains(section), "{command:?} lacks {section}");
            }
            assert!(text.contains("\\fBseal.json\\fR"), "{command:?}");
            assert!(
                text.contains(&format!(
                    "\\fB{}\\fR",
                    seal_gate::policy::DEFAULT_PATH.replace('-', "\\-")
                )),
                "{command:?}"
            );
        }
        let policy = page_text(crate::cli::Cli::command(), Some("policy"));
        let synopsis = policy.lines().skip_while(|l| *l != ".SH SYNOPSIS").nth(1);
        assert_eq!(
            synopsis,
            Some(
                "\\fBseal policy\\fR [\\fB\\-C\\fR \\fIDIR\\fR] [\\fB\\-h|\\-\\-help\\fR] \
                 [\\fB\\-\\-json\\fR]"
            )
        );
        assert!(top.contains(".SH ENVIRONMENT"));
    }
}

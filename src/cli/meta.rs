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

/// Sections clap does not know: exit codes and environment.
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
             mountpoint, a system error.",
        ),
    ] {
        roff.control("TP", [])
            .text([bold(code)])
            .text([roman(meaning)]);
    }
    roff.control("PP", []).text([roman(
        "seal run exits with the command's own status (128+N when signal N ended it).",
    )]);
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

/// One man page: clap's sections, then ours, then the version.
fn page(cmd: clap::Command, top: bool) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd);
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    if top {
        man.render_subcommands_section(&mut buf)?;
    }
    buf.extend_from_slice(&extra_sections(top));
    man.render_version_section(&mut buf)?;
    Ok(buf)
}

pub fn man(mut cmd: clap::Command, args: &ManArgs) -> ExitCode {
    // Propagates global options (-C) into each command first.
    cmd.build();
    let (page_cmd, top) = match &args.command {
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
                eprintln!(
                    "seal: man: no command {}; try 'seal --help'",
                    seal_core::escape::quoted(name)
                );
                return ExitCode::from(2);
            }
        },
    };
    match page(page_cmd, top) {
        Ok(buf) => emit(&buf),
        Err(e) => {
            eprintln!("seal: man: {e}");
            ExitCode::from(2)
        }
    }
}

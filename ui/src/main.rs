//! The `vdb` command line: `check`, `run`, `batch`, `trace`, `new`, `record`, `replay` and the TUI.

/// Prints a line to stdout, ignoring a closed pipe (`vdb run ... | head` must not panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod action;
mod app;
mod batch;
mod bench;
mod commands;
mod keymap;
mod launchfile;
mod newlaunch;
mod record;
mod terminal;
mod tui;
mod view;

/// The ocloc driver lives in its own crate, shared with the OpenCL ICD (`vdb record`).
use vdb_compile as compile;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// vdb: a time-travel debugger for Intel vISA kernels.
#[derive(Parser, Debug)]
#[command(name = "vdb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Open the debugger on a launch file (.json), a kernel that needs no inputs (.visaasm), or
    /// OpenCL C (.cl) with the launch given by --global, --local and --arg.
    target: Option<PathBuf>,
    #[command(flatten)]
    source: launchfile::SourceFlags,
    /// Key bindings to use on top of the defaults (TOML, `[keys] step = ["s", "F7"]`).
    #[arg(long)]
    keymap: Option<PathBuf>,
    /// Run the debugger commands in FILE when the debugger opens (as `source FILE`; repeatable).
    #[arg(short = 'x', long = "command", value_name = "FILE")]
    commands: Vec<PathBuf>,
    /// Recording budget: bytes, or with a unit (512M, 2G, 1.5GiB; K, M, G and T are powers of
    /// 1024). The run stops there, everything recorded so far usable. Default: half of
    /// physical memory.
    #[arg(long, global = true, value_name = "SIZE", value_parser = vdb::session::parse_size)]
    record_limit: Option<u64>,
    /// Keep every step's write log as it is recorded. By default a recording keeps its
    /// checkpoints and write indexes, and records a stretch of steps again from its
    /// checkpoint the first time a command looks into it (the log is a cache).
    #[arg(long, global = true)]
    keep_log: bool,
    /// How a work-group's threads take turns: rr (one instruction each in turn, the default),
    /// seq (each runs until it blocks), chaos (random threads in random bursts, per --seed).
    #[arg(long, global = true, value_name = "rr|seq|chaos", default_value = "rr")]
    schedule: String,
    /// The chaos schedule's seed.
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
}

/// A `--grf-size` value: only the sizes platforms have.
fn grf_size(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(n @ (32 | 64)) => Ok(n),
        _ => Err(format!("`{text}` is not a GRF size: platforms have 32-byte or 64-byte GRFs")),
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse .visaasm files and print every diagnostic (exit 1 if any file has an error).
    Check {
        /// Kernel and function files; files given together form one program.
        files: Vec<PathBuf>,
        /// Check each file on its own instead of as one program.
        #[arg(long)]
        separately: bool,
        /// GRF register size in bytes: 32, or 64 on the platforms that have it (Xe-HPC, Xe2).
        /// Default: the platform's (below).
        #[arg(long, value_parser = grf_size)]
        grf_size: Option<u32>,
        /// The platform the kernel was compiled for (skl, tgllp, acm-g10, pvc, xe2, …).
        /// Default: the dump's trailing `//Platform:` line (or a sibling dump's of the same
        /// compilation), else a 32-byte GRF.
        #[arg(long)]
        platform: Option<String>,
    },
    /// Run a launch to the end, write its outputs and print a summary.
    Run {
        /// The launch file (JSON), or OpenCL C (.cl) with --global and --arg.
        launch: PathBuf,
        #[command(flatten)]
        source: launchfile::SourceFlags,
        /// Write outputs under this folder instead of the launch file's.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also print one JSON line of statistics.
        #[arg(long)]
        stats: bool,
        /// Record every write (as the debugger does) and report the recording's size.
        #[arg(long)]
        record: bool,
        /// Work-groups run side by side on up to this many cores (default: all of them). The
        /// result is always that of running them one after another.
        #[arg(long, short = 'j')]
        jobs: Option<std::num::NonZeroUsize>,
        /// Run the launch under the round-robin schedule and under N chaos seeds (1..=N), and
        /// report which seeds give different outputs, and how (exit 1 if any does).
        #[arg(long, value_name = "N")]
        schedules: Option<u64>,
        /// Check the run instead of writing its outputs: `races` lists the data races of SLM
        /// and global memory (grouped by pair of instructions, each with the steps of its
        /// first pair), `uninit` the reads of SLM and private memory nothing wrote before,
        /// `all` both (exit 1 if there are any).
        #[arg(long, value_name = "WHAT", value_parser = ["races", "uninit", "all"])]
        check: Option<String>,
    },
    /// Run debugger commands from a script against a recorded run.
    Batch {
        launch: PathBuf,
        #[command(flatten)]
        source: launchfile::SourceFlags,
        /// One command per line; `#` starts a comment.
        #[arg(long)]
        script: PathBuf,
        /// Print one JSON object per command.
        #[arg(long)]
        json: bool,
    },
    /// Record a whole run and time goto, reverse steps and last-write queries on it.
    #[command(hide = true)]
    BenchRecord {
        launch: PathBuf,
        #[arg(long, default_value_t = 200)]
        queries: usize,
    },
    /// Record a whole run and time key presses (update + full render) at random points.
    #[command(hide = true)]
    BenchRender {
        launch: PathBuf,
        #[arg(long, default_value_t = 400)]
        frames: usize,
    },
    /// Compile OpenCL C and write a launch file naming every argument, with placeholders.
    New {
        /// The OpenCL C file.
        source: PathBuf,
        /// The kernel (default: the file's only one).
        #[arg(long)]
        kernel: Option<String>,
        /// skl, tgllp or acm-g10.
        #[arg(long, default_value = "skl")]
        device: String,
        /// OpenCL build options (`-DN=4`).
        #[arg(long = "build-options", default_value = "", allow_hyphen_values = true)]
        build_options: String,
        /// Where to write it (default: KERNEL.launch.json beside the source).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Run an unmodified OpenCL program with vdb as its OpenCL platform, saving every launch.
    Record {
        /// The Intel GPU to emulate: skl, tgllp or acm-g10.
        #[arg(long, default_value = "skl")]
        device: String,
        /// Where the launches go.
        #[arg(short, long, default_value = "vdb-record")]
        output: PathBuf,
        /// Save only this kernel's launches (all still run).
        #[arg(long, value_name = "KERNEL")]
        only: Option<String>,
        /// Replace a recording already in the output folder.
        #[arg(long)]
        force: bool,
        /// The program and its arguments (after `--`).
        #[arg(last = true, required = true, value_name = "PROGRAM ARGS")]
        program: Vec<String>,
    },
    /// List a recording's launches, or open one in the debugger (N, or --kernel with --nth).
    Replay {
        /// The folder `vdb record` wrote.
        dir: PathBuf,
        /// The launch number (as listed).
        number: Option<u32>,
        /// The launch of this kernel (with --nth: which one, counting from 0).
        #[arg(long)]
        kernel: Option<String>,
        #[arg(long, default_value_t = 0)]
        nth: usize,
        /// Run it instead and compare its outputs with the bytes the program got.
        #[arg(long)]
        check: bool,
    },
    /// Write the whole recorded run as JSON lines.
    Trace {
        launch: PathBuf,
        #[command(flatten)]
        source: launchfile::SourceFlags,
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    commands::KEEP_LOG.store(cli.keep_log, std::sync::atomic::Ordering::Relaxed);
    let Some(schedule) = vdb::exec::Schedule::parse(&cli.schedule, cli.seed) else {
        eprintln!("error: --schedule {}: give rr, seq or chaos", cli.schedule);
        return ExitCode::from(commands::EXIT_BAD_LAUNCH);
    };
    let Some(command) = cli.command else {
        return match cli.target {
            Some(target) => ExitCode::from(interactive(
                &target,
                &cli.source,
                cli.keymap.as_deref(),
                &cli.commands,
                cli.record_limit,
                schedule,
            )),
            None => {
                eprintln!("usage: vdb LAUNCH.json | KERNEL.visaasm | K.cl --global N --arg NAME=VALUE..., or vdb --help");
                ExitCode::from(commands::EXIT_BAD_LAUNCH)
            }
        };
    };
    let code = match command {
        Command::Check { files, separately, grf_size, platform } => {
            commands::check(&files, separately, grf_size, platform.as_deref())
        }
        Command::Run { launch, source, out, stats, record, jobs, schedules, check } => {
            let jobs = jobs
                .or(std::num::NonZeroUsize::new(commands::cores()))
                .unwrap_or(std::num::NonZeroUsize::MIN);
            match (commands::resolve_input(&launch, &source, schedule), schedules) {
                (Ok(input), _) if check.is_some() => commands::check_run(&input, stats, check.as_deref()),
                (Ok(input), Some(n)) => commands::compare_schedules(&input, n, jobs),
                (Ok(input), None) => {
                    commands::run(&input, out.as_deref(), stats, record, jobs, cli.record_limit)
                }
                (Err(code), _) => code,
            }
        }
        Command::Batch { launch, source, script, json } => {
            match commands::resolve_input(&launch, &source, schedule) {
                Ok(input) => batch::batch(&input, &script, json, cli.record_limit),
                Err(code) => code,
            }
        }
        Command::Trace { launch, source, output } => {
            match commands::resolve_input(&launch, &source, schedule) {
                Ok(input) => batch::trace(&input, &output, cli.record_limit),
                Err(code) => code,
            }
        }
        Command::New { source, kernel, device, build_options, output, force } => {
            newlaunch::new_launch(&newlaunch::NewLaunch {
                source: &source,
                kernel: kernel.as_deref(),
                device: &device,
                build_options: &build_options,
                output: output.as_deref(),
                force,
            })
        }
        Command::Record { device, output, only, force, program } => record::record(&record::RecordArgs {
            device: &device,
            output: &output,
            only: only.as_deref(),
            force,
            program: &program,
        }),
        Command::Replay { dir, number, kernel, nth, check } => {
            if number.is_none() && kernel.is_none() {
                record::list(&dir)
            } else {
                match record::choose(&dir, &record::Choice { number, kernel: kernel.as_deref(), nth }) {
                    Ok(launch) if check => record::check(&launch, schedule),
                    Ok(launch) => interactive(
                        &launch,
                        &cli.source,
                        cli.keymap.as_deref(),
                        &cli.commands,
                        cli.record_limit,
                        schedule,
                    ),
                    Err(e) => {
                        eprintln!("error: {e}");
                        commands::EXIT_BAD_LAUNCH
                    }
                }
            }
        }
        Command::BenchRecord { launch, queries } => bench::bench_record(&launch, queries),
        Command::BenchRender { launch, frames } => bench::bench_render(&launch, frames),
    };
    ExitCode::from(code)
}

/// The keymap in force: defaults, then `--keymap FILE` or `$XDG_CONFIG_HOME/vdb/keys.toml`.
fn load_keymap(path: Option<&std::path::Path>) -> Result<keymap::Keymap, String> {
    let default_path = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("vdb/keys.toml"));
    let chosen = path.map(PathBuf::from).or(default_path.filter(|p| p.exists()));
    match chosen {
        None => Ok(keymap::Keymap::default()),
        Some(p) => {
            let text = vdb::launch::raw::read_text(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            keymap::Keymap::with_overrides(&text).map_err(|e| format!("{}: {e}", p.display()))
        }
    }
}

fn interactive(
    target: &std::path::Path,
    source: &launchfile::SourceFlags,
    keymap: Option<&std::path::Path>,
    scripts: &[PathBuf],
    budget: Option<u64>,
    schedule: vdb::exec::Schedule,
) -> u8 {
    let keymap = match load_keymap(keymap) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return commands::EXIT_BAD_LAUNCH;
        }
    };
    let opened =
        commands::resolve_input(target, source, schedule).and_then(|i| commands::open_input(&i, budget));
    let session = match opened {
        Ok(s) => s,
        Err(code) => return code,
    };
    match tui::run(session, keymap, scripts) {
        Ok(()) => commands::EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            commands::EXIT_DIAGNOSTICS
        }
    }
}

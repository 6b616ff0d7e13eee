//! The `isolde` command line: a thin shell over the library.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use isolde::anomaly::Workload;
use isolde::check::{self, CheckOptions, Validity, WorkloadChoice};
use isolde::history::transaction_order::OrderFile;
use isolde::{gen, ingest, reports};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const EXIT_HELP: &str = "Exit status: 0 valid, 1 invalid, 3 unknown (the analysis could not decide), \
2 usage or input error. With several files, the worst of them: invalid, then error, then unknown, then valid.";

/// A fast, Elle-compatible checker of transaction isolation.
#[derive(Parser)]
#[command(name = "isolde", version, about, after_help = EXIT_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Analyze a history and report which isolation anomalies it shows.
    #[command(after_help = EXIT_HELP)]
    Analyze(AnalyzeArgs),
    /// elle-cli's command line: `isolde elle-cli -m list-append [-c MODELS] FILE...`
    /// (also what the binary does when run through a link named `elle-cli`).
    /// `isolde elle-cli --help` lists elle-cli's options.
    #[command(disable_help_flag = true)]
    ElleCli {
        /// elle-cli's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Generate a history (for benchmarks, tests, and trying isolde out).
    Gen {
        #[command(subcommand)]
        what: GenCmd,
    },
    /// Record a history by running a workload against a database (SQLite
    /// by default), optionally checking it (`isolde help record.md` prints the guide).
    #[command(after_help = EXIT_HELP)]
    Record(isolde::record::RecordArgs),
    /// Run Hermitage's isolation tests against a database (SQLite by
    /// default) and print its table of anomalies, each run checked by
    /// isolde (isolde help hermitage).
    Hermitage(isolde::hermitage::HermitageArgs),
    /// Explore every history of a small transactional program under an
    /// isolation level and check its assertion (`isolde help explore.md` prints the guide).
    /// Exit status: 0 holds, 1 violated, 2 bad program, 3 stopped by a budget.
    Explore(isolde::explore::cli::ExploreArgs),
    /// Convert a history to another checker's format (`isolde help formats`).
    Convert {
        /// The history (any format `analyze` reads); `-` reads standard input.
        input: PathBuf,
        /// Input format (default: by extension, else sniffed).
        #[arg(long, value_enum, default_value = "auto")]
        input_format: InputArg,
        /// The format to write.
        #[arg(long, value_enum)]
        to: ConvertArg,
        /// Output file (default: stdout).
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
        /// plume, awdit-test: start each session with a read of a fresh key's
        /// initial value, so that AWDIT orders its initial transaction first
        /// as isolde does (`isolde help formats`).
        #[arg(long, help_heading = TUNING)]
        pin_initial: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ConvertArg {
    Json,
    Dbcop,
    Plume,
    AwditTest,
}

/// Help headings. The options under a heading of
/// `isolde::help_headings::HIDDEN_FROM_SHORT_HELP` ([`TUNING`], [`FOLLOW`], [`DISTRIBUTED`], [`WHITE_BOX`],
/// and the Jepsen checkers' heading of `isolde::cli::jepsen::JepsenArgs`)
/// are left out of `--help` and shown by `--help-all` (see
/// `isolde::cli::help`).
const INPUT: &str = "Input";
const MODELS: &str = "Models";
const OUTPUT: &str = "Output";
const LIMITS: &str = isolde::help_headings::LIMITS;
const TUNING: &str = isolde::help_headings::TUNING;
const WORKLOAD: &str = "Workload";
const STORE: &str = "Store";
const FOLLOW: &str = isolde::help_headings::FOLLOW;
const DISTRIBUTED: &str = isolde::help_headings::DISTRIBUTED;
const WHITE_BOX: &str = isolde::help_headings::WHITE_BOX;

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// History files: Jepsen EDN (one op per line or one vector), elle-cli JSON,
    /// dbcop history.bincode, PolySI/Plume text, AWDIT's test format, or a directory of Cobra *.log
    /// files; a Jepsen store directory (store/TEST/latest) is read through its history.edn,
    /// a directory of EDN shards (h.000.edn, h.001.edn, …) as one history in their order,
    /// gzipped files (.gz) as they are; `-` reads standard input.
    /// Several files give one result each (tables one after another, or one JSON/EDN line per file).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Follow a history that is still being written (a Jepsen history.edn
    /// being appended, or `-`, a pipe such as `isolde gen … -o -`): check it
    /// in rounds, print each anomaly once it is final (one line each), a
    /// status line per round on stderr, and the verdict on everything read
    /// when the input ends (end of a pipe, --follow-idle, SIGINT or SIGTERM).
    /// One file; Jepsen EDN, one op per line, or a directory of Cobra client
    /// logs, read to their ends with Cobra's epoch key as the fence key
    /// (isolde help online; its knobs: --help-all).
    #[arg(long, help_heading = INPUT)]
    follow: bool,
    /// With --follow: a round after this many newly completed transactions.
    #[arg(long, default_value_t = 5_000, value_name = "N", requires = "follow", help_heading = FOLLOW)]
    round_txns: usize,
    /// With --follow: a round after this many milliseconds when fewer
    /// transactions arrived (a round never starts sooner after the previous
    /// one than that one took).
    #[arg(long, default_value_t = 1_000, value_name = "MS", requires = "follow", help_heading = FOLLOW)]
    round_ms: u64,
    /// With --follow on a file: the input ends after this many seconds
    /// without growth (default: only SIGINT/SIGTERM end it).
    #[arg(long, value_name = "SECS", requires = "follow", help_heading = FOLLOW)]
    follow_idle: Option<f64>,
    /// With --follow: keep every transaction read and check them all each
    /// round, as the batch check does (memory grows with the run). Without
    /// it --follow holds only a window of recent transactions wherever a
    /// collection rule exists: list-append at strict-serializable, and
    /// registers with fence transactions at strong-session-serializable,
    /// strong-session-snapshot-isolation or causal-cerone, where the write
    /// order of concurrent writes nothing has read yet is assumed and a
    /// later read showing another makes the verdict unknown (exit 3)
    /// (isolde help online).
    #[arg(long, requires = "follow", help_heading = FOLLOW)]
    follow_all: bool,
    /// Holding a window is what --follow does (the default since
    /// 2026-12); kept so that older command lines still run.
    #[arg(long, hide = true, requires = "follow", conflicts_with = "follow_all")]
    #[allow(dead_code)]
    follow_window: bool,
    /// Spread the check over N processes (on one host or many): start each
    /// with the same arguments and its own --process; they talk over TCP
    /// (--hostfile, default 127.0.0.1:2101+I). Process 0 prints the result;
    /// every process exits with its status (isolde help distributed).
    #[arg(long, value_name = "N", requires = "process", help_heading = DISTRIBUTED)]
    processes: Option<usize>,
    /// With --processes: this process's index, 0 to N-1 (under Slurm,
    /// `--process $SLURM_PROCID`).
    #[arg(long, value_name = "I", requires = "processes", help_heading = DISTRIBUTED)]
    process: Option<usize>,
    /// With --processes: a file of `host:port` lines, one per process in
    /// process order (the same file on every host).
    #[arg(long, value_name = "FILE", requires = "processes", help_heading = DISTRIBUTED)]
    hostfile: Option<PathBuf>,
    /// Worker threads per process of a distributed check.
    #[arg(long, value_name = "T", default_value_t = 1, help_heading = DISTRIBUTED)]
    threads: usize,
    /// Check with N processes on this host over loopback, started for you
    /// (this one is process 0): a distributed check without a cluster.
    #[arg(long, value_name = "N", conflicts_with_all = ["processes", "process", "hostfile"], help_heading = DISTRIBUTED)]
    local_processes: Option<usize>,
    /// Seconds the processes of a distributed check may take to connect
    /// before every one gives up (exit 2).
    #[arg(long, value_name = "SECS", default_value_t = 30.0, help_heading = DISTRIBUTED)]
    start_timeout: f64,
    /// Workload whose inference rules apply: Elle's (list-append,
    /// rw-register), or a Jepsen / Knossos checker's (isolde help jepsen).
    /// `auto` detects Jepsen workloads from the ops' :f values.
    #[arg(long, value_enum, default_value = "auto", help_heading = INPUT)]
    workload: WorkloadArg,
    #[command(flatten)]
    jepsen: isolde::cli::jepsen::JepsenArgs,
    /// Input format (default: by extension, else sniffed).
    #[arg(long, value_enum, default_value = "auto", value_name = "FORMAT", help_heading = INPUT)]
    input_format: InputArg,
    /// dbcop transactions marked committed that hold a failed event:
    /// `indeterminate` reads them as :info (their writes may or may not have
    /// taken effect; a failed statement aborts a PostgreSQL-wire
    /// transaction), `as-committed` as dbcop does (committed, without the
    /// failed events).
    #[arg(long, value_enum, default_value = "indeterminate", value_name = "HOW", help_heading = INPUT)]
    failed_events: FailedEventsArg,
    /// rw-register: infer per-key version order from realtime order.
    #[arg(long, help_heading = INPUT)]
    linearizable_keys: bool,
    /// rw-register: infer per-key version order from process order.
    #[arg(long, help_heading = INPUT)]
    sequential_keys: bool,
    /// rw-register: infer version order from writes following reads.
    #[arg(long, help_heading = INPUT)]
    wfr_keys: bool,
    /// rw-register: the database's commit order, an EDN or JSON map from
    /// completion :index to order number ({"1": 0, "3": 1}); gives write
    /// orders (Elle's :transaction-order).
    #[arg(long, value_name = "FILE", help_heading = WHITE_BOX)]
    transaction_order: Option<std::path::PathBuf>,
    /// Consistency models expected to hold, comma separated (Elle's names, or
    /// si, ser, strict-ser, rc, ru, rr, read-committed-be,
    /// transactional-causal), `all` for every level from read-committed-be to
    /// serializability (the table format adds one row per level), or `none`.
    /// Default: strict-serializable.
    #[arg(
        long = "model",
        alias = "models",
        visible_alias = "consistency-models",
        short = 'm',
        visible_short_alias = 'c',
        value_delimiter = ',',
        help_heading = MODELS
    )]
    model: Option<Vec<String>>,
    /// Specific anomalies to look for, comma separated (e.g. G0,G1c,G2).
    #[arg(long, short = 'a', value_delimiter = ',', help_heading = MODELS)]
    anomalies: Vec<String>,
    /// Session order of the exact weak levels (read-committed-be,
    /// read-atomic, causal-cerone): `process` takes each process as a
    /// session (Biswas–Enea, Cerone); `none` drops it, Elle's plain semantics.
    #[arg(long, value_enum, default_value = "process", help_heading = MODELS)]
    sessions: SessionsArg,
    /// rw-register: skip the exact check of serializability / snapshot
    /// isolation (polygraph + SAT) and report only what Elle's inference finds.
    #[arg(long, help_heading = MODELS)]
    no_exact: bool,
    /// Output format (default: table on a terminal, json otherwise).
    #[arg(long, short = 'f', value_enum, help_heading = OUTPUT)]
    format: Option<FormatArg>,
    /// With the table format, print every witness in full (cycle
    /// explanations in Elle's words).
    #[arg(long, short = 'v', help_heading = OUTPUT)]
    verbose: bool,
    /// Print every case of every anomaly (table --verbose, json, edn);
    /// by default at most 10 per anomaly type are printed, with the total
    /// count (`--directory` always writes all).
    #[arg(long, help_heading = OUTPUT)]
    all_anomalies: bool,
    /// Print values whole in --verbose explanations and --directory's
    /// .txt files (by default a long list shows the elements that matter,
    /// `[… 214 elements … 17 *18* 19]`, and a long transaction the
    /// micro-ops used; JSON and EDN always hold every value).
    #[arg(long, help_heading = OUTPUT)]
    full_values: bool,
    /// Write Elle's output directory here: <type>.txt explanations of every
    /// cycle, and incompatible-order/<key>.html tables.
    #[arg(long, short = 'd', value_name = "DIR", help_heading = OUTPUT)]
    directory: Option<PathBuf>,
    /// Write one self-contained HTML page here: the verdict, the levels,
    /// each anomaly type's first cases explained, with their cycles drawn,
    /// and the transactions they name (--directory writes the same page
    /// as DIR/index.html). One history only.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    html: Option<PathBuf>,
    /// Image format of plots in --directory (needs graphviz's `dot`).
    #[arg(long, value_enum, default_value = "svg", value_name = "FORMAT", help_heading = OUTPUT)]
    plot_format: PlotFormatArg,
    /// Plot every cycle in --directory (by default the first 10 of each
    /// anomaly type and of SCCs are plotted; the explanations hold all).
    #[arg(long, help_heading = OUTPUT)]
    all_plots: bool,
    /// Print sizes and stage times to stderr.
    #[arg(long, help_heading = OUTPUT)]
    stats: bool,
    /// Milliseconds to spend searching each strongly connected component.
    #[arg(long, default_value_t = 1000, value_name = "MS", help_heading = LIMITS)]
    cycle_search_timeout: u64,
    /// rw-register: seconds the exact check may take per level before the
    /// verdict becomes unknown.
    #[arg(long, default_value_t = 600, value_name = "SECS", help_heading = LIMITS)]
    exact_timeout: u64,
    /// rw-register: most write-order constraints the exact check builds
    /// (one per pair of independent writers of a key that known dependencies
    /// leave unordered); over it, windows of consecutive transactions are
    /// checked for a refutation, and the verdict is unknown when none has one.
    #[arg(long, default_value_t = 50_000_000, value_name = "N", help_heading = TUNING)]
    max_constraints: usize,
    /// rw-register: memory budget for the exact check's reachability rows, MB.
    #[arg(long, default_value_t = 1024, value_name = "MB", help_heading = TUNING)]
    reach_memory: usize,
    /// Skip plots whose DOT text exceeds this many bytes.
    #[arg(long, default_value_t = 65536, value_name = "BYTES", help_heading = TUNING)]
    max_plot_bytes: usize,
    /// Milliseconds to wait for each plot to render.
    #[arg(long, default_value_t = 5000, value_name = "MS", help_heading = TUNING)]
    plot_timeout: u64,
    /// rw-register: skip pruning in the exact check (for comparisons).
    #[arg(long, help_heading = TUNING)]
    no_pruning: bool,
    /// rw-register: skip the serial replay that decides most valid
    /// histories in linear time before the exact check builds its
    /// polygraph (for comparisons).
    #[arg(long, help_heading = TUNING)]
    no_serial_replay: bool,
    /// rw-register: add causal consistency's forced write orders to the
    /// exact check's known edges. `auto` does with --no-pruning only:
    /// pruning derives the same orders itself, so with it they cost more
    /// than they save (`isolde help models`). Verdicts do not depend on it.
    #[arg(long, value_enum, default_value = "auto", help_heading = TUNING)]
    cc_orders: SwitchArg,
    /// rw-register: run the exact check's pruning reachability on a CUDA GPU:
    /// `auto` when built with the `gpu` feature, a device is present and the
    /// history is large enough; `on` requires one (exit 2 without);
    /// `off` never touches CUDA. Verdicts do not depend on it.
    #[arg(long, value_enum, default_value = "auto", help_heading = TUNING)]
    gpu: GpuArg,
    /// rw-register: the CPU computation of pruning's reachability: `mirror`
    /// (the GPU kernels' algorithm: band rows by position, closed column
    /// block by column block, in-place updates; the faster) or `classic`
    /// (rows by node, recomputed every round). Verdicts do not depend on it.
    #[arg(long, value_enum, default_value = "mirror", help_heading = TUNING)]
    cpu_reach: CpuReachArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum GpuArg {
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum SwitchArg {
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum CpuReachArg {
    Mirror,
    Classic,
}

#[derive(Clone, Copy, ValueEnum)]
enum SessionsArg {
    Process,
    None,
}

/// Options shared by both generators.
#[derive(clap::Args)]
struct GenCommon {
    /// Random seed.
    #[arg(long, default_value_t = 0, help_heading = WORKLOAD, display_order = 1000)]
    seed: u64,
    /// Isolation level of the simulated store: a multi-version store, or
    /// for read-committed-be, read-atomic, causal-cerone and prefix a weak
    /// store (replicas, a shared log) that gives exactly that level (these
    /// take no --inject; see `isolde help models`).
    #[arg(long, value_enum, default_value = "strict-serializable", help_heading = STORE)]
    level: LevelArg,
    /// Plant named anomalies among normal traffic, comma separated: G0
    /// (list-append only), G1a, G1b, G1c, lost-update, write-skew,
    /// long-fork, read-skew, internal, duplicate-elements (list-append
    /// only), garbage-read, stale-realtime-read, and the weak-level ones
    /// non-monotonic-read(-ao), fractured-read(-ao), non-repeatable-read,
    /// causality-violation, future-read, not-my-own-write,
    /// not-my-last-write (Plume's tap-a … tap-m are accepted as names too);
    /// closed-predicate takes G1c, write-skew, predicate-write-skew (G2)
    /// and predicate-read-miss.
    #[arg(long, value_delimiter = ',', help_heading = STORE)]
    inject: Vec<String>,
    /// Number of injected scenarios (cycling through --inject; default one
    /// per listed anomaly).
    #[arg(long, default_value_t = 0, help_heading = STORE)]
    inject_count: usize,
    /// Probability that a transaction fails (:fail, no effect).
    #[arg(long, default_value_t = 0.0, help_heading = STORE)]
    fail_fraction: f64,
    /// Probability that a transaction is indeterminate (:info).
    #[arg(long, default_value_t = 0.0, help_heading = STORE)]
    info_fraction: f64,
    /// Output file (default, or `-`: stdout). Generation streams: `gen
    /// --txns 10000000 -o - | isolde analyze --follow -` checks as it goes.
    #[arg(long, short = 'o', help_heading = OUTPUT)]
    output: Option<PathBuf>,
    /// rw-register: after every N transactions each client runs a fence
    /// transaction (a read-modify-write of the key `:isolde/fence`, as Cobra
    /// does), which lets `analyze --follow` collect old transactions
    /// (isolde help online). 0: none.
    #[arg(long, default_value_t = 0, value_name = "N", help_heading = STORE)]
    fences: usize,
}

#[derive(Subcommand)]
enum GenCmd {
    /// A Jepsen bank history (transfers and reads of every balance).
    Bank(isolde::cli::jepsen::GenArgs),
    /// A Jepsen counter history (adds and reads).
    Counter(isolde::cli::jepsen::GenArgs),
    /// A Jepsen set history (adds, reads of the whole set, a final read).
    Set(isolde::cli::jepsen::GenArgs),
    /// A Jepsen queue history (enqueues, dequeues, a final drain), for the
    /// queue and total-queue checkers.
    Queue(isolde::cli::jepsen::GenArgs),
    /// A Jepsen unique-id history (generations of ids).
    UniqueIds(isolde::cli::jepsen::GenArgs),
    /// A list-append history from an in-memory multi-version store.
    ListAppend {
        // First, so that the headings read Workload, Store, Output, then
        // the hidden options.
        #[command(flatten)]
        common: GenCommon,
        /// Number of transactions.
        #[arg(long, default_value_t = 10_000, help_heading = WORKLOAD)]
        txns: usize,
        /// Concurrent client processes.
        #[arg(long, default_value_t = 10, help_heading = WORKLOAD)]
        processes: usize,
        /// Minimum micro-ops per transaction.
        #[arg(long, default_value_t = 1, help_heading = TUNING)]
        min_txn_len: usize,
        /// Maximum micro-ops per transaction.
        #[arg(long, default_value_t = 5, help_heading = WORKLOAD)]
        max_txn_len: usize,
        /// Keys in the active window.
        #[arg(long, default_value_t = 100, help_heading = WORKLOAD)]
        active_keys: usize,
        /// Appends per key before it is retired.
        #[arg(long, default_value_t = 100, help_heading = TUNING)]
        max_writes_per_key: usize,
        /// Fraction of micro-ops that are reads.
        #[arg(long, default_value_t = 0.5, help_heading = WORKLOAD)]
        read_fraction: f64,
        /// Key distribution over the active window.
        #[arg(long, value_enum, default_value = "exponential", help_heading = WORKLOAD)]
        key_dist: KeyDistArg,
    },
    /// An rw-register history (PolySI's default shape) from an in-memory
    /// multi-version store.
    RwRegister {
        // First, so that the headings read Workload, Store, Output, then
        // the hidden options.
        #[command(flatten)]
        common: GenCommon,
        /// Number of transactions (ignored with --txns-per-session).
        #[arg(long, default_value_t = 10_000, help_heading = WORKLOAD)]
        txns: usize,
        /// Concurrent client processes (dbcop/PolySI sessions).
        #[arg(long, alias = "sessions", default_value_t = 20, help_heading = WORKLOAD)]
        processes: usize,
        /// Transactions per session: every process runs exactly this many
        /// (txns = sessions * this). Required for --output-format dbcop.
        #[arg(long, help_heading = WORKLOAD)]
        txns_per_session: Option<usize>,
        /// Micro-ops per transaction (dbcop's events per transaction).
        #[arg(long, alias = "ops-per-txn", default_value_t = 15, help_heading = WORKLOAD)]
        txn_len: usize,
        /// Minimum micro-ops per transaction (default: --txn-len).
        #[arg(long, help_heading = TUNING)]
        min_txn_len: Option<usize>,
        /// Number of keys (variables).
        #[arg(long, alias = "key-count", default_value_t = 10_000, help_heading = WORKLOAD)]
        keys: usize,
        /// Fraction of micro-ops that are reads.
        #[arg(long, alias = "read-proportion", default_value_t = 0.5, help_heading = WORKLOAD)]
        read_fraction: f64,
        /// Key distribution (hotspot: --hot-probability of the operations
        /// on the first --hot-fraction of the keys).
        #[arg(long, value_enum, default_value = "zipf", help_heading = WORKLOAD)]
        key_dist: RwKeyDistArg,
        /// Zipf exponent.
        #[arg(long, default_value_t = 1.0, help_heading = TUNING)]
        zipf_exponent: f64,
        /// Hotspot: fraction of keys that are hot.
        #[arg(long, default_value_t = 0.2, help_heading = TUNING)]
        hot_fraction: f64,
        /// Hotspot: probability that an operation targets a hot key.
        #[arg(long, default_value_t = 0.8, help_heading = TUNING)]
        hot_probability: f64,
        /// Output format: Jepsen EDN, dbcop's history.bincode, the
        /// Plume/PolySI/AWDIT text format, or AWDIT's test format.
        #[arg(long, value_enum, default_value = "edn", help_heading = OUTPUT)]
        output_format: OutputFormatArg,
        /// plume, awdit-test: start each session with a read of a fresh key's
        /// initial value (see `isolde convert --pin-initial`).
        #[arg(long, help_heading = TUNING)]
        pin_initial: bool,
    },
    /// An Elle closed-predicate history (an :init universe, then inserts,
    /// writes and deletes of each key once, item reads and predicate reads)
    /// from an in-memory store (`isolde help checks`).
    ClosedPredicate {
        // First, so that the headings read Workload, Store, Output, then
        // the hidden options.
        #[command(flatten)]
        common: GenCommon,
        /// Number of transactions after the :init.
        #[arg(long, default_value_t = 100, help_heading = WORKLOAD)]
        txns: usize,
        /// Concurrent client processes.
        #[arg(long, alias = "sessions", default_value_t = 10, help_heading = WORKLOAD)]
        processes: usize,
        /// Keys of the universe (Elle's key count): each is mutated at most
        /// once (k mod 3 = 0 inserted, 1 written, 2 deleted; the :init sets
        /// up the written and deleted ones at 0 or 1); once all are, every
        /// micro-op reads.
        #[arg(long, default_value_t = 50, help_heading = WORKLOAD)]
        keys: usize,
        /// Minimum micro-ops per transaction.
        #[arg(long, default_value_t = 1, help_heading = TUNING)]
        min_txn_len: usize,
        /// Maximum micro-ops per transaction.
        #[arg(long, default_value_t = 4, help_heading = WORKLOAD)]
        max_txn_len: usize,
        /// Fraction of micro-ops that read (half item reads, half predicate
        /// reads); the rest mutate. Default: 2/3 (Elle's thirds).
        #[arg(long, help_heading = WORKLOAD)]
        read_fraction: Option<f64>,
        /// Elle's insert-only mode: the :init sets up no key and every
        /// mutation is an insert.
        #[arg(long, help_heading = TUNING)]
        insert_only: bool,
        /// Output format: Jepsen EDN or elle-cli JSON.
        #[arg(long, value_enum, default_value = "edn", help_heading = OUTPUT)]
        output_format: CpFormatArg,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CpFormatArg {
    Edn,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum LevelArg {
    StrictSerializable,
    Serializable,
    SnapshotIsolation,
    ReadCommitted,
    /// Weak stores that give exactly this level (see `isolde help models`).
    ReadCommittedBe,
    ReadAtomic,
    CausalCerone,
    Prefix,
}

impl LevelArg {
    /// The weak store level, for the weak levels.
    fn weak(self) -> Option<gen::weak::WeakLevel> {
        match self {
            LevelArg::ReadCommittedBe => Some(gen::weak::WeakLevel::ReadCommitted),
            LevelArg::ReadAtomic => Some(gen::weak::WeakLevel::ReadAtomic),
            LevelArg::CausalCerone => Some(gen::weak::WeakLevel::Causal),
            LevelArg::Prefix => Some(gen::weak::WeakLevel::Prefix),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormatArg {
    Edn,
    Dbcop,
    Plume,
    AwditTest,
}

#[derive(Clone, Copy, ValueEnum)]
enum PlotFormatArg {
    Svg,
    Png,
}

#[derive(Clone, Copy, ValueEnum)]
enum RwKeyDistArg {
    Uniform,
    Zipf,
    Hotspot,
}

#[derive(Clone, Copy, ValueEnum)]
enum KeyDistArg {
    Uniform,
    Exponential,
}

#[derive(Clone, Copy, ValueEnum)]
enum WorkloadArg {
    Auto,
    ListAppend,
    RwRegister,
    /// Elle's closed-predicate workload (:init, :insert, :delete, :rp).
    ClosedPredicate,
    Bank,
    Counter,
    Set,
    SetFull,
    LongFork,
    Comments,
    Sequential,
    Register,
    CasRegister,
    Mutex,
    /// Porcupine's key-value model (get/put/append per :key).
    Kv,
    Queue,
    TotalQueue,
    UniqueIds,
}

impl WorkloadArg {
    /// The Jepsen or Knossos workload, for those.
    fn jepsen(self) -> Option<isolde::jepsen::detect::Workload> {
        let name = self.to_possible_value()?.get_name().to_string();
        isolde::jepsen::detect::Workload::from_name(&name)
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum FormatArg {
    Table,
    Json,
    Edn,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailedEventsArg {
    Indeterminate,
    AsCommitted,
}

#[derive(Clone, Copy, ValueEnum)]
enum InputArg {
    Auto,
    Edn,
    Json,
    Dbcop,
    #[value(alias = "plume")]
    PolysiText,
    Cobra,
    AwditTest,
    /// Jepsen's store file `test.jepsen` (forced even beside a history.edn).
    JepsenStore,
}

fn expand_model(m: &str) -> String {
    match m.trim() {
        "si" => "snapshot-isolation",
        "ser" => "serializable",
        "strict-ser" => "strict-serializable",
        "rc" => "read-committed",
        "ru" => "read-uncommitted",
        "rr" => "repeatable-read",
        other => other,
    }
    .trim_start_matches(':')
    .to_string()
}

fn input_format(f: InputArg) -> ingest::Format {
    match f {
        InputArg::Auto => ingest::Format::Auto,
        InputArg::Edn => ingest::Format::Edn,
        InputArg::Json => ingest::Format::Json,
        InputArg::Dbcop => ingest::Format::Dbcop,
        InputArg::PolysiText => ingest::Format::PolysiText,
        InputArg::Cobra => ingest::Format::Cobra,
        InputArg::AwditTest => ingest::Format::AwditTest,
        InputArg::JepsenStore => ingest::Format::JepsenStore,
    }
}

fn analyze(a: AnalyzeArgs) -> Result<ExitCode, String> {
    let input = input_format(a.input_format);
    let models = a.model.as_ref().map(|ms| {
        if ms.len() == 1 && ms[0].trim() == "none" {
            Vec::new()
        } else {
            ms.iter().map(|m| expand_model(m)).collect()
        }
    });
    if matches!(a.gpu, GpuArg::On) && !a.no_exact {
        isolde::accel::gpu_probe().map_err(|e| format!("--gpu on: {e}"))?;
    }
    // Usage errors before reading a possibly large history.
    check::resolve_models(&models).map_err(|e| e.to_string())?;
    let anomalies = check::resolve_anomalies(&a.anomalies).map_err(|e| e.to_string())?;
    if a.html.is_some() && a.files.len() > 1 {
        return Err(
            "--html FILE writes the page of one history; with several, -d DIR writes DIR/<name>/index.html for each"
                .into(),
        );
    }
    if a.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err("standard input (`-`) can be read only once".into());
    }
    let read = ingest::ReadOptions {
        failed_events: match a.failed_events {
            FailedEventsArg::Indeterminate => ingest::FailedEvents::Indeterminate,
            FailedEventsArg::AsCommitted => ingest::FailedEvents::AsCommitted,
        },
    };
    let opts = CheckOptions {
        workload: match a.workload {
            WorkloadArg::ListAppend => WorkloadChoice::Fixed(Workload::ListAppend),
            WorkloadArg::RwRegister => WorkloadChoice::Fixed(Workload::RwRegister),
            WorkloadArg::ClosedPredicate => WorkloadChoice::Fixed(Workload::ClosedPredicate),
            _ => WorkloadChoice::Auto,
        },
        models,
        anomalies,
        cycle_search_timeout: Duration::from_millis(a.cycle_search_timeout),
        rw: isolde::infer::rw_register::RwOptions {
            wfr_keys: a.wfr_keys,
            sequential_keys: a.sequential_keys,
            linearizable_keys: a.linearizable_keys,
        },
        keep_sccs: a.directory.is_some(),
        keep_order: false,
        exact: (!a.no_exact).then_some(isolde::si_check::ExactOptions {
            prune: !a.no_pruning,
            serial_first: !a.no_serial_replay,
            cc_orders: match a.cc_orders {
                SwitchArg::Auto => a.no_pruning,
                SwitchArg::On => true,
                SwitchArg::Off => false,
            },
            known: None,
            session_orders: None,
            keep_serial: false,
            reach_bytes: a.reach_memory.saturating_mul(1 << 20),
            timeout: Some(Duration::from_secs(a.exact_timeout)),
            max_constraints: a.max_constraints,
            progress: None,
            accel: isolde::accel::AccelOptions {
                gpu: match a.gpu {
                    GpuArg::Auto => isolde::accel::GpuMode::Auto,
                    GpuArg::On => isolde::accel::GpuMode::On,
                    GpuArg::Off => isolde::accel::GpuMode::Off,
                },
                cpu: match a.cpu_reach {
                    CpuReachArg::Mirror => isolde::accel::CpuPath::Mirror,
                    CpuReachArg::Classic => isolde::accel::CpuPath::Classic,
                },
            },
        }),
        weak: isolde::weak::Options {
            sessions: match a.sessions {
                SessionsArg::Process => isolde::weak::front::Sessions::Process,
                SessionsArg::None => isolde::weak::front::Sessions::None,
            },
            ..isolde::weak::Options::default()
        },
        // Without --model, every level of the ladder is decided (and shown);
        // the verdict stays Elle's default model's.
        ladder: a.model.is_none(),
        initial_value: a.jepsen.initial_value.clone(),
    };
    let format = a.format.unwrap_or(if std::io::stdout().is_terminal() { FormatArg::Table } else { FormatArg::Json });
    let several = a.files.len() > 1;
    let limit = (!a.all_anomalies).then_some(reports::table::DEFAULT_EXAMPLES);
    // Worst first: invalid, error, unknown, valid.
    let rank = |code: u8| match code {
        1 => 3,
        2 => 2,
        3 => 1,
        _ => 0,
    };
    let dist_args = isolde::cli::dist::DistArgs {
        processes: a.processes,
        process: a.process,
        hostfile: a.hostfile.clone(),
        threads: a.threads,
        local_processes: a.local_processes,
        start_timeout: a.start_timeout,
    };
    let order = order_file(&a, dist_args.wanted())?;
    if a.jepsen.initial_value.is_some() && (dist_args.wanted() || a.follow) {
        return Err("--initial-value is taken by a check on one process of a whole history; drop --follow, \
                    --processes and --local-processes"
            .into());
    }
    if dist_args.wanted() {
        return analyze_distributed(&a, &dist_args, &opts, format, limit).map(ExitCode::from);
    }
    if a.follow {
        if a.files.len() != 1 {
            return Err("--follow follows one history at a time".into());
        }
        if !matches!(a.input_format, InputArg::Auto | InputArg::Edn | InputArg::JepsenStore) {
            return Err("--follow reads Jepsen EDN, one op per line, or Jepsen's test.jepsen".into());
        }
        if a.workload.jepsen().is_some() {
            return Err("--follow checks transactional histories (list-append, rw-register); \
                        check a Jepsen checker's history when its run ends"
                .into());
        }
        return follow_one(&a, &a.files[0], &opts, format, limit).map(ExitCode::from);
    }
    let mut worst = 0u8;
    let explicit = a.jepsen.max_memory.map(|m| m as u64);
    if let Some(budget) = isolde::cli::memory_guard::budget_mb(explicit) {
        for file in &a.files {
            isolde::cli::memory_guard::check_size(file, budget, explicit.is_some())?;
        }
    }
    isolde::cli::memory_guard::watch();
    for file in &a.files {
        let code = match analyze_one(&a, file, (input, read, order.as_ref()), &opts, format, several, limit) {
            Ok(code) => code,
            Err(e) if several => {
                eprintln!("isolde: {e}");
                let mut out = std::io::stdout().lock();
                let line = match format {
                    FormatArg::Table => format!("{}: ERROR: {e}\n\n", file.display()),
                    FormatArg::Json => format!(
                        "{{\"file\":{},\"error\":{}}}\n",
                        serde_json::Value::from(file.display().to_string()),
                        serde_json::Value::from(e)
                    ),
                    FormatArg::Edn => format!(
                        "{{:file {}, :error {}}}\n",
                        serde_json::Value::from(file.display().to_string()),
                        serde_json::Value::from(e)
                    ),
                };
                out.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
                2
            }
            Err(e) => return Err(e),
        };
        if rank(code) > rank(worst) {
            worst = code;
        }
    }
    Ok(ExitCode::from(worst))
}

/// `--transaction-order FILE`, read before any history: it describes one
/// history, checked on one process and not followed.
fn order_file(a: &AnalyzeArgs, distributed: bool) -> Result<Option<OrderFile>, String> {
    let Some(path) = &a.transaction_order else { return Ok(None) };
    let refuse = |why: &str| Err(format!("--transaction-order {}: {why}", path.display()));
    if a.files.len() != 1 {
        return refuse("an order names one history's completions; give one history file");
    }
    if distributed || a.follow {
        return refuse("the order is used by a check on one process of a whole history; drop --processes, --local-processes and --follow");
    }
    if a.workload.jepsen().is_some() {
        return refuse("the order gives write orders of rw-register histories");
    }
    OrderFile::read(path).map(Some)
}

/// `analyze --processes/--local-processes`: this process's part of a
/// distributed check; process 0 prints the result. Returns the exit status
/// every process takes.
fn analyze_distributed(
    a: &AnalyzeArgs,
    dist: &isolde::cli::dist::DistArgs,
    opts: &CheckOptions,
    format: FormatArg,
    limit: Option<usize>,
) -> Result<u8, String> {
    if a.files.len() != 1 {
        return Err("a distributed check reads one history (every process the same file)".into());
    }
    if a.follow {
        return Err("--follow checks a growing history on one process; drop --processes/--local-processes".into());
    }
    if a.directory.is_some() {
        return Err("--directory's plots need the whole graph on one process; with --processes use --html, or \
                    check without --processes"
            .into());
    }
    if a.workload.jepsen().is_some() {
        return Err("a distributed check runs Elle's list-append and rw-register checks; check Jepsen's other \
                    workloads without --processes"
            .into());
    }
    let t0 = std::time::Instant::now();
    let file = &a.files[0];
    let done = isolde::cli::dist::check(file, opts, dist)?;
    let Some(checked) = done.checked else { return Ok(done.status) };
    if a.stats {
        isolde::cli::dist::print_stats(&done.workers, checked.outcome.stats.ops);
    }
    let how = Printing { format, several: false, one_line: false, limit };
    print_checked(a, file, &checked, t0, &how)
}

/// Checks one file, prints its result and writes its directory; returns its
/// exit status.
#[allow(clippy::too_many_arguments)]
fn analyze_one(
    a: &AnalyzeArgs,
    file: &std::path::Path,
    (input, read, order): (ingest::Format, ingest::ReadOptions, Option<&OrderFile>),
    opts: &CheckOptions,
    format: FormatArg,
    several: bool,
    limit: Option<usize>,
) -> Result<u8, String> {
    let t0 = std::time::Instant::now();
    let jepsen = |c: Result<isolde::cli::jepsen::JepsenChecked, String>| {
        let how = match format {
            FormatArg::Table => isolde::cli::jepsen::Printed::Table,
            FormatArg::Json if several => isolde::cli::jepsen::Printed::JsonLine,
            FormatArg::Json => isolde::cli::jepsen::Printed::Json,
            FormatArg::Edn => isolde::cli::jepsen::Printed::Edn,
        };
        let c = c?;
        if a.stats {
            eprintln!("{}: read {:.6}s check {:.6}s", file.display(), c.times.0.as_secs_f64(), c.times.1.as_secs_f64());
        }
        isolde::cli::jepsen::print(&c, file, how, several, &mut std::io::stdout().lock()).map_err(|e| e.to_string())
    };
    if let Some(w) = a.workload.jepsen() {
        return jepsen(isolde::cli::jepsen::check_path(file, input, Some(w), &a.jepsen.options()));
    }
    let checked = match isolde::cli::read_and_check_ordered(file, input, read, opts, order) {
        Ok(c) => c,
        Err(e) => match matches!(a.workload, WorkloadArg::Auto)
            .then(|| isolde::cli::jepsen::check_detected(file, input, &a.jepsen.options(), false))
            .flatten()
        {
            Some(c) => return jepsen(c),
            None => return Err(e),
        },
    };
    if matches!(a.workload, WorkloadArg::Auto) && isolde::cli::jepsen::looks_jepsen(&checked.history) {
        if let Some(c) = isolde::cli::jepsen::check_detected(file, input, &a.jepsen.options(), true) {
            return jepsen(c);
        }
    }
    let how = Printing { format, several, one_line: several, limit };
    print_checked(a, file, &checked, t0, &how)
}

/// The `--stats` memory lines: per stage, the bytes its kept structures
/// hold and the resident set and its peak when it ended; per transaction
/// (completion op) for the history and the overall peak.
fn print_stage_memory(
    h: &isolde::history::History,
    parse_peak_mb: Option<u64>,
    stages: &[isolde::check::mem::StageMemory],
) {
    let mb = |b: u64| b as f64 / 1e6;
    let txns = h.ops.iter().filter(|o| !o.is_invoke()).count().max(1) as f64;
    let columns = h.column_bytes();
    let kept: u64 = columns.iter().map(|c| c.1).sum();
    let parts: Vec<String> = columns.iter().map(|(n, b)| format!("{n} {:.1}", mb(*b))).collect();
    eprintln!(
        "memory parse: history {:.1} MB ({:.0} B/txn: {} MB), peak {} MB",
        mb(kept),
        kept as f64 / txns,
        parts.join(", "),
        parse_peak_mb.map(|m| m.to_string()).unwrap_or_else(|| "?".into())
    );
    for s in stages {
        eprintln!(
            "memory {}: kept {:.1} MB ({:.0} B/txn), resident {:.1} MB, peak {:.1} MB ({:.0} B/txn)",
            s.stage,
            mb(s.bytes),
            s.bytes as f64 / txns,
            mb(s.rss),
            mb(s.peak),
            s.peak as f64 / txns
        );
    }
}

/// How a checked history is printed.
#[derive(Clone, Copy)]
struct Printing {
    format: FormatArg,
    /// Several files: each result names its file, directories go below `-d`.
    several: bool,
    /// JSON/EDN on one line (several files, or after --follow's lines).
    one_line: bool,
    limit: Option<usize>,
}

/// Prints a checked history (stats, result, directory); returns its exit
/// status.
fn print_checked(
    a: &AnalyzeArgs,
    file: &std::path::Path,
    checked: &isolde::cli::Checked,
    t0: std::time::Instant,
    how: &Printing,
) -> Result<u8, String> {
    let Printing { format, several, one_line, limit } = *how;
    let (h, outcome) = (&checked.history, &checked.outcome);
    if a.stats {
        let st = &outcome.stats;
        eprintln!(
            "ops {}  keys {}  edges {}\nparse {:.3}s  infer {:.3}s  graph {:.3}s  cycles {:.3}s  total {:.3}s\npeak RSS after parse {} MB, at end {} MB",
            st.ops,
            h.key_count(),
            st.edges,
            checked.parse_time.as_secs_f64(),
            st.infer.as_secs_f64(),
            st.graph.as_secs_f64(),
            st.cycles.as_secs_f64(),
            t0.elapsed().as_secs_f64(),
            checked.parse_peak_mb.map(|m| m.to_string()).unwrap_or_else(|| "?".into()),
            isolde::cli::peak_rss_mb().map(|m| m.to_string()).unwrap_or_else(|| "?".into()),
        );
        print_stage_memory(h, checked.parse_peak_mb, &st.memory);
        for (model, x) in &st.exact {
            eprintln!(
                "exact {model}: txns {}  known edges {}  constraints {} -> {} after {} pruning rounds  \
                 constraint edges {} -> {}  components {} (largest {} vars)  decisions {}  conflicts {}  undone {}  jumped levels {}  restarts {}  learnt lits {}  theory conflicts {}  refuted phases {}  theory props {}  narrowing passes {}\n  \
                 build {:.3}s  prune {:.3}s  solve {:.3}s  witness {:.3}s  guess {:.3}s ({} serial backtracks first, {} after pruning){}",
                x.txns,
                x.known_edges,
                x.constraints,
                x.constraints_after,
                x.rounds,
                x.constraint_edges,
                x.constraint_edges_after,
                x.components,
                x.largest_component,
                x.decisions,
                x.conflicts,
                x.solver.undone,
                x.solver.jumped,
                x.solver.restarts,
                x.solver.learnt_lits,
                x.solver.theory_conflicts,
                x.solver.refuted_phases,
                x.solver.theory_props,
                x.narrowing_passes,
                x.build.as_secs_f64(),
                x.prune.as_secs_f64(),
                x.solve.as_secs_f64(),
                x.witness.as_secs_f64(),
                x.guess.as_secs_f64(),
                x.serial_backtracks,
                x.pruned_backtracks,
                if x.guessed { " (valid by the replayed serial order, no search)" } else { "" },
            );
            eprintln!("  {}", x.accel);
            if let Some(w) = &x.windows {
                eprintln!(
                    "  over the constraint limit: {} windows looked at ({} searched, largest {} transactions) in {:.3}s{}",
                    w.windows,
                    w.searched,
                    w.largest,
                    w.time.as_secs_f64(),
                    match w.refuted_by {
                        Some((a, b)) => format!("; refuted by the window of ops {a}..={b}"),
                        None => "; none refuted the level".into(),
                    }
                );
            }
            eprintln!(
                "  causal forced write orders added {} ({} between different write chains)  \
                 unread lone-writer pairs dropped {}",
                x.known_orders, x.known_orders_new, x.unread_pairs
            );
        }
        if !st.exact.is_empty() {
            eprintln!("causal forced write orders computed in {:.3}s", st.known_orders.as_secs_f64());
        }
        for model in &st.exact_implied {
            eprintln!("exact {model}: not searched: the weak check's violation refutes it");
        }
        if let Some(t) = st.ladder {
            eprintln!("ladder: levels beyond the requested models decided in {:.3}s", t.as_secs_f64());
        }
        for row in &outcome.levels {
            eprintln!("level {}", isolde::reports::table::level_line(row));
        }
    }
    for (model, x) in &outcome.stats.exact {
        if let Some(e) = &x.accel.gpu_error {
            return Err(format!("exact {model}: {e}"));
        }
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // With several files each JSON/EDN result is one line, naming its file.
    let tree = || {
        let t = reports::result_map::result_map_limited(h, outcome, limit);
        match t {
            reports::tree::Node::Map(mut m) if several => {
                m.insert(
                    0,
                    (reports::tree::Node::Keyword("file".into()), reports::tree::Node::Str(file.display().to_string())),
                );
                reports::tree::Node::Map(m)
            }
            t => t,
        }
    };
    match format {
        FormatArg::Table => {
            let width = Some(isolde::cli::help::output_width());
            let topts = reports::table::TableOptions {
                verbose: a.verbose,
                max_examples: limit,
                width,
                full_values: a.full_values,
            };
            out.write_all(reports::table::render_with(h, outcome, &topts).as_bytes()).and_then(|()| {
                if several {
                    out.write_all(b"\n")
                } else {
                    Ok(())
                }
            })
        }
        FormatArg::Json if one_line => {
            reports::json::write_line_io(&mut out, h, &tree()).and_then(|()| out.write_all(b"\n"))
        }
        FormatArg::Json => reports::json::write_io(&mut out, h, &tree()).and_then(|()| out.write_all(b"\n")),
        FormatArg::Edn => reports::edn::write_io(&mut out, h, &tree()).and_then(|()| out.write_all(b"\n")),
    }
    .and_then(|()| out.flush())
    .map_err(|e| e.to_string())?;
    drop(out);
    if format != FormatArg::Table {
        isolde::cli::elle_cli::note_truncated(&mut std::io::stderr(), outcome, limit);
    }
    if let Some(dir) = &a.directory {
        let plots = reports::directory::PlotOptions {
            format: match a.plot_format {
                PlotFormatArg::Svg => "svg".into(),
                PlotFormatArg::Png => "png".into(),
            },
            max_bytes: a.max_plot_bytes,
            timeout: Duration::from_millis(a.plot_timeout),
            max_plots_per_type: (!a.all_plots).then_some(reports::directory::DEFAULT_PLOTS_PER_TYPE),
            naming: reports::text::Naming::Index,
            values: if a.full_values { reports::text::Values::Full } else { reports::text::Values::Short },
        };
        let dir = isolde::cli::directory_for(dir, file, several);
        isolde::cli::write_directory(h, outcome, &dir, &plots);
        write_page(h, &checked, file, &dir.join("index.html"), Some(dir.clone()));
    }
    if let Some(page) = &a.html {
        write_page(h, &checked, file, page, None);
    }
    Ok(match outcome.valid {
        Validity::Valid => 0,
        Validity::Invalid => 1,
        Validity::Unknown => 3,
    })
}

/// `analyze --follow`: checks `file` in rounds as it grows, prints each
/// final anomaly as a line (a table row, or one JSON/EDN object), then the
/// verdict on everything read; returns the exit status (2 when a malformed
/// op stopped the reading, after the verdict on the ops before it).
fn follow_one(
    a: &AnalyzeArgs,
    file: &std::path::Path,
    opts: &CheckOptions,
    format: FormatArg,
    limit: Option<usize>,
) -> Result<u8, String> {
    let fopts = isolde::online::FollowOptions {
        round_txns: a.round_txns,
        round_interval: Duration::from_millis(a.round_ms),
        idle: a.follow_idle.map(|s| Duration::from_secs_f64(s.max(0.0))),
        max_memory_mb: a.jepsen.max_memory.map(|m| m as u64),
        throttle: true,
        done: None,
        quiet_lines: isolde::online::collect::QUIET_LINES,
        keep_all: a.follow_all,
        ..isolde::online::FollowOptions::default()
    };
    let t0 = std::time::Instant::now();
    let mut watch = FollowPrinter {
        format: match format {
            FormatArg::Table => reports::online::LineFormat::Table,
            FormatArg::Json => reports::online::LineFormat::Json,
            FormatArg::Edn => reports::online::LineFormat::Edn,
        },
    };
    let mut followed = isolde::online::follow(file, opts, &fopts, &mut watch)?;
    // A malformed op: the verdict on what came before it, then exit 2.
    let (mut code, mut memory) = (None, false);
    match &followed.ending {
        isolde::online::Ending::End(_) => {}
        isolde::online::Ending::Malformed(e) => {
            eprintln!("isolde: {e}");
            eprintln!("isolde: the verdict below covers the ops read before it");
            code = Some(2);
        }
        isolde::online::Ending::Memory(reason) => {
            eprintln!("isolde: {reason}");
            memory = true;
        }
    }
    if followed.history.ops.iter().all(|o| o.is_invoke()) && followed.collected == 0 {
        return Err(format!("{}: no completed operations were read: nothing to check", file.display()));
    }
    let mut outcome = isolde::online::final_check(&mut followed, opts).map_err(|e| e.to_string())?;
    if let Some(why) = &followed.unknown {
        eprintln!("isolde: {why}");
    }
    if followed.assumed > 0 {
        eprintln!(
            "isolde: {} versions were collected in an order assumed from the round's serial execution \
             (no read or path had ordered them yet)",
            followed.assumed
        );
    }
    if followed.flipped > 0 {
        eprintln!(
            "isolde: {} of those orders a later read showed the other way round, and another execution of the \
             round that collected them explained it ({} found by the exact check on the kept round; isolde help \
             online)",
            followed.flipped, followed.resolved
        );
    }
    if followed.reverted.0 > 0 {
        eprintln!(
            "isolde: {} collected transactions were taken back into the window ({} take-backs) for reads that \
             needed them checked again with those still held (isolde help online)",
            followed.reverted.1, followed.reverted.0
        );
    }
    if followed.collected > 0 {
        eprintln!(
            "isolde: {} transactions were collected while following; the verdict covers them, \
             the cases below only those still held (the others were printed as they were found)",
            followed.collected
        );
    }
    let sealed = followed.sealed;
    if sealed.keys > 0 {
        eprintln!(
            "isolde: {} retired keys were sealed to a spill file in the temporary directory ({:.1} MB, removed at \
             exit), {} of them read back when an op mentioned them again",
            sealed.keys,
            sealed.bytes as f64 / 1e6,
            sealed.read_back
        );
    }
    let history = followed.history;
    if memory && outcome.valid == Validity::Valid {
        outcome.valid = Validity::Unknown;
    }
    eprintln!(
        "isolde: followed {}: {} transactions read ({} ops held at the end) in {:.1} s, {} rounds, {} anomalies \
         reported while following",
        history.source,
        followed.txns_read,
        history.ops.len(),
        followed.elapsed.as_secs_f64(),
        followed.rounds,
        followed.reported
    );
    let checked = isolde::cli::Checked {
        history,
        outcome,
        parse_time: followed.elapsed,
        parse_peak_mb: isolde::cli::peak_rss_mb(),
    };
    let how = Printing { format, several: false, one_line: true, limit };
    let verdict = print_checked(a, file, &checked, t0, &how)?;
    Ok(code.unwrap_or(verdict))
}

/// Prints what `--follow` finds as it goes: anomalies on stdout (table rows
/// on a terminal, JSON/EDN objects one per line otherwise), status lines on
/// stderr.
struct FollowPrinter {
    format: reports::online::LineFormat,
}

impl isolde::online::Watch for FollowPrinter {
    fn anomalies(
        &mut self,
        round: usize,
        h: &isolde::history::History,
        workload: isolde::anomaly::Workload,
        found: &[isolde::online::Final],
    ) {
        let mut out = std::io::stdout().lock();
        for f in found {
            let line = reports::online::anomaly_line(h, workload, round, &f.name, &f.case, self.format);
            let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
        }
    }

    fn status(&mut self, s: &isolde::online::RoundStatus) {
        eprintln!("isolde: {s}");
    }

    fn note(&mut self, text: &str) {
        eprintln!("isolde: {text}");
    }
}

/// Writes the HTML page of a checked history to `page` (a warning if it
/// cannot: the verdict is already out).
fn write_page(
    h: &isolde::history::History,
    checked: &isolde::cli::Checked,
    file: &std::path::Path,
    page: &std::path::Path,
    plots_dir: Option<PathBuf>,
) {
    let history_href = (file.as_os_str() != "-")
        .then(|| std::path::absolute(file).ok())
        .flatten()
        .map(|p| format!("file://{}", p.display()));
    let opts = reports::html::HtmlOptions {
        plots_dir,
        history_href,
        parse_time: Some(checked.parse_time),
        ..Default::default()
    };
    if let Err(e) = reports::html::write(h, &checked.outcome, page, &opts) {
        eprintln!("isolde: warning: could not write {}: {e}", page.display());
    }
}

/// Runs a writer against the output file, or stdout when there is none.
fn write_to(
    output: &Option<PathBuf>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<ExitCode, String> {
    let name = output.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "stdout".into());
    let res = match output {
        Some(p) if p.as_os_str() != "-" => std::fs::File::create(p).and_then(|mut f| write(&mut f)),
        _ => write(&mut std::io::stdout().lock()),
    };
    match res {
        // A reader that stops early (`| head`, a checker that exits on
        // its verdict) is not an error of the generator.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        r => r,
    }
    .map_err(|e| format!("{name}: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// The generator options shared by both workloads.
fn gen_options(c: &GenCommon) -> Result<gen::GenOptions, String> {
    let inject = gen::inject::parse_list(&c.inject.join(","))?;
    Ok(gen::GenOptions {
        level: match c.level {
            LevelArg::StrictSerializable => gen::Level::StrictSerializable,
            LevelArg::Serializable => gen::Level::Serializable,
            LevelArg::SnapshotIsolation => gen::Level::SnapshotIsolation,
            LevelArg::ReadCommitted => gen::Level::ReadCommitted,
            _ => {
                return Err(
                    "the weak levels (read-committed-be, read-atomic, causal-cerone, prefix) take no --inject".into()
                )
            }
        },
        inject,
        inject_count: c.inject_count,
        fences: c.fences,
        ..Default::default()
    })
}

/// Reports what a generator run planted and aborted, on stderr.
fn report_gen(stats: &gen::GenStats) {
    for (kind, n) in stats.injected.planted() {
        eprintln!("isolde: injected {n} x {kind}");
    }
}

fn generate(g: GenCmd) -> Result<ExitCode, String> {
    use isolde::gen::jepsen::Kind;
    match g {
        GenCmd::Bank(a) => {
            isolde::cli::jepsen::generate(Kind::Bank, &a, &mut std::io::stderr()).map(|()| ExitCode::SUCCESS)
        }
        GenCmd::Counter(a) => {
            isolde::cli::jepsen::generate(Kind::Counter, &a, &mut std::io::stderr()).map(|()| ExitCode::SUCCESS)
        }
        GenCmd::Set(a) => {
            isolde::cli::jepsen::generate(Kind::Set, &a, &mut std::io::stderr()).map(|()| ExitCode::SUCCESS)
        }
        GenCmd::Queue(a) => {
            isolde::cli::jepsen::generate(Kind::Queue, &a, &mut std::io::stderr()).map(|()| ExitCode::SUCCESS)
        }
        GenCmd::UniqueIds(a) => {
            isolde::cli::jepsen::generate(Kind::UniqueIds, &a, &mut std::io::stderr()).map(|()| ExitCode::SUCCESS)
        }
        GenCmd::ListAppend {
            txns,
            processes,
            min_txn_len,
            max_txn_len,
            active_keys,
            max_writes_per_key,
            read_fraction,
            key_dist,
            common,
        } => {
            let weak = common.level.weak();
            if weak.is_some() && (!common.inject.is_empty() || common.fences > 0) {
                return Err("the weak levels take no --inject and no --fences".into());
            }
            let opts = if weak.is_some() { gen::GenOptions::default() } else { gen_options(&common)? };
            let cfg = gen::list_append::ListAppendConfig {
                seed: common.seed,
                txns,
                processes,
                min_txn_len,
                max_txn_len,
                active_keys,
                max_writes_per_key,
                read_fraction,
                key_dist: match key_dist {
                    KeyDistArg::Uniform => gen::list_append::KeyDist::Uniform,
                    KeyDistArg::Exponential => gen::list_append::KeyDist::Exponential,
                },
                fail_fraction: common.fail_fraction,
                info_fraction: common.info_fraction,
            };
            if let Some(level) = weak {
                return write_to(&common.output, |w| gen::weak::write_weak_list_append(&cfg, level, w));
            }
            write_to(&common.output, |w| {
                gen::list_append::write_list_append_with(&cfg, &opts, w).map(|s| report_gen(&s))
            })
        }
        GenCmd::RwRegister {
            txns,
            processes,
            txns_per_session,
            txn_len,
            min_txn_len,
            keys,
            read_fraction,
            key_dist,
            zipf_exponent,
            hot_fraction,
            hot_probability,
            output_format,
            pin_initial,
            common,
        } => {
            let weak = common.level.weak();
            let mut opts = match weak {
                Some(_) if !common.inject.is_empty() || txns_per_session.is_some() || common.fences > 0 => {
                    return Err("the weak levels take no --inject, --txns-per-session or --fences".into())
                }
                Some(_) => gen::GenOptions::default(),
                None => gen_options(&common)?,
            };
            opts.txns_per_session = txns_per_session;
            let text = match output_format {
                OutputFormatArg::Edn => None,
                OutputFormatArg::Dbcop => {
                    opts.output_format = gen::OutputFormat::Dbcop;
                    None
                }
                OutputFormatArg::Plume => Some(gen::TextFormat::Plume),
                OutputFormatArg::AwditTest => Some(gen::TextFormat::AwditTest),
            };
            if text.is_some() && opts.fences > 0 {
                return Err("--fences: fence transactions are written to Jepsen EDN histories only".into());
            }
            let txns = match txns_per_session {
                Some(per) => processes.checked_mul(per).ok_or("sessions * txns-per-session overflows")?,
                None => txns,
            };
            let cfg = gen::rw_register::RwRegisterConfig {
                seed: common.seed,
                txns,
                processes,
                min_txn_len: min_txn_len.unwrap_or(txn_len),
                max_txn_len: txn_len,
                keys,
                read_fraction,
                key_dist: match key_dist {
                    RwKeyDistArg::Uniform => gen::rw_register::RwKeyDist::Uniform,
                    RwKeyDistArg::Zipf => gen::rw_register::RwKeyDist::Zipf(zipf_exponent),
                    RwKeyDistArg::Hotspot => gen::rw_register::RwKeyDist::Hotspot { hot_fraction, hot_probability },
                },
                fail_fraction: common.fail_fraction,
                info_fraction: common.info_fraction,
            };
            if let Some(level) = weak {
                if opts.output_format == gen::OutputFormat::Dbcop {
                    return Err("the weak levels are written as edn, plume or awdit-test".into());
                }
                let Some(format) = text else {
                    return write_to(&common.output, |w| gen::weak::write_weak(&cfg, level, w));
                };
                let mut out = Vec::new();
                let gen =
                    |buf: &mut Vec<u8>| gen::weak::write_weak(&cfg, level, buf).map(|()| gen::GenStats::default());
                gen::generate_text(gen, format, gen::registers::ExportOptions { pin_initial }, &mut out)?;
                return write_to(&common.output, |w| w.write_all(&out));
            }
            if let Some(format) = text {
                let export = gen::registers::ExportOptions { pin_initial };
                let mut out = Vec::new();
                let gen = |buf: &mut Vec<u8>| gen::rw_register::write_rw_register_with(&cfg, &opts, buf);
                report_gen(&gen::generate_text(gen, format, export, &mut out)?);
                return write_to(&common.output, |w| w.write_all(&out));
            }
            write_to(&common.output, |w| {
                gen::rw_register::write_rw_register_with(&cfg, &opts, w).map(|s| report_gen(&s))
            })
        }
        GenCmd::ClosedPredicate {
            common,
            txns,
            processes,
            keys,
            min_txn_len,
            max_txn_len,
            read_fraction,
            insert_only,
            output_format,
        } => {
            if common.level.weak().is_some() {
                return Err("closed-predicate histories are generated at strict-serializable or serializable".into());
            }
            let opts = gen_options(&common)?;
            let cfg = gen::closed_predicate::ClosedPredicateConfig {
                seed: common.seed,
                txns,
                processes,
                min_txn_len,
                max_txn_len,
                keys,
                read_fraction: read_fraction.unwrap_or(2.0 / 3.0),
                insert_only,
                fail_fraction: common.fail_fraction,
                info_fraction: common.info_fraction,
            };
            gen::closed_predicate::validate(&cfg, &opts)?;
            match output_format {
                CpFormatArg::Edn => write_to(&common.output, |w| {
                    gen::closed_predicate::write_closed_predicate_with(&cfg, &opts, w).map(|s| report_gen(&s))
                }),
                CpFormatArg::Json => {
                    let mut edn = Vec::new();
                    let stats = gen::closed_predicate::write_closed_predicate_with(&cfg, &opts, &mut edn)
                        .map_err(|e| e.to_string())?;
                    let text = String::from_utf8(edn).map_err(|e| e.to_string())?;
                    let json = gen::json::edn_to_json(&text)?;
                    report_gen(&stats);
                    write_to(&common.output, |w| w.write_all(json.as_bytes()))
                }
            }
        }
    }
}

/// True when the binary was run through a link (or copy) named `elle-cli`.
fn called_as_elle_cli(argv0: Option<&std::ffi::OsString>) -> bool {
    argv0.map(std::path::Path::new).and_then(|p| p.file_stem()).is_some_and(|s| s == "elle-cli")
}

fn elle_cli(args: &[std::ffi::OsString]) -> ExitCode {
    let code = isolde::cli::elle_cli::run(args, &mut std::io::stdout().lock(), &mut std::io::stderr());
    ExitCode::from(code)
}

fn main() -> ExitCode {
    // Before anything else: glibc reads its tunables only at start.
    isolde::huge_pages::restart_with_huge_pages();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if called_as_elle_cli(argv.first()) {
        return elle_cli(&argv[1..]);
    }
    if let Some(guide) = isolde::cli::help::guide_request(&argv[1..]) {
        print!("{guide}");
        return ExitCode::SUCCESS;
    }
    let help = isolde::cli::help::split_help(
        Cli::command().after_help(format!("{EXIT_HELP}\n\n{}", isolde::cli::help::guides_line())),
    );
    let cli = isolde::cli::help::wrap_to(help, isolde::cli::help::output_width()).get_matches();
    let cli = Cli::from_arg_matches(&cli).unwrap_or_else(|e| e.exit());
    let r = match cli.cmd {
        Cmd::ElleCli { args } => return elle_cli(&args),
        Cmd::Analyze(a) => analyze(a),
        Cmd::Gen { what } => generate(what),
        Cmd::Record(a) => isolde::record::run(&a).map(ExitCode::from).map_err(|e| e.to_string()),
        Cmd::Hermitage(a) => isolde::hermitage::run(&a).map(ExitCode::from),
        Cmd::Convert { input, input_format: f, to, output, pin_initial } => {
            let to = match to {
                ConvertArg::Json => isolde::cli::convert::Target::Json,
                ConvertArg::Dbcop => isolde::cli::convert::Target::Dbcop,
                ConvertArg::Plume => isolde::cli::convert::Target::Plume,
                ConvertArg::AwditTest => isolde::cli::convert::Target::AwditTest,
            };
            let read = ingest::ReadOptions::default();
            let mut out = Vec::new();
            isolde::cli::convert::convert(&input, input_format(f), read, to, pin_initial, &mut out)
                .and_then(|()| write_to(&output, |w| w.write_all(&out)))
        }
        Cmd::Explore(a) => Ok(ExitCode::from(isolde::explore::cli::run(&a))),
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("isolde: {e}");
            ExitCode::from(2)
        }
    }
}

//! The command line's definition: what `main` parses, and what the man pages and
//! shell completions are generated from, so that they cannot drift from `--help`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};

/// `leveldb-bloom`: its options and subcommand.
#[derive(Parser)]
#[command(
    name = "leveldb-bloom",
    version,
    about = "Tools for LevelDB's bloom filters"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The filter policy of the reader whose Gets `explain` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReaderPolicy {
    /// LevelDB's bloom filter (`leveldb.BuiltinBloomFilter2`), as LevelDB ≥ 1.18 and
    /// this library read it.
    Leveldb,
    /// The legacy name (`leveldb.BuiltinBloomFilter`), as goleveldb reads it.
    Legacy,
    /// The legacy name read with the signed hash, as HyperLevelDB and LevelDB
    /// before 1.18 on x86 read it.
    LegacySigned,
    /// No filter policy: every table LevelDB looks in costs a block read.
    None,
}

/// A program that reads a database's filters, named to `audit` with `--reader`: only
/// the keys the named readers would miss then count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reader {
    /// LevelDB ≥ 1.18 (and this library, rusty-leveldb): `leveldb.BuiltinBloomFilter2`,
    /// unsigned hash.
    Leveldb,
    /// goleveldb: `leveldb.BuiltinBloomFilter`, unsigned hash.
    Goleveldb,
    /// HyperLevelDB: `leveldb.BuiltinBloomFilter`, signed hash.
    Hyperleveldb,
    /// LevelDB before 1.18 on x86: `leveldb.BuiltinBloomFilter`, signed hash.
    OldLeveldbX86,
    /// LevelDB before 1.18 on ARM: `leveldb.BuiltinBloomFilter`, unsigned hash.
    OldLeveldbArm,
    /// RocksDB's block-based filter: `rocksdb.BuiltinBloomFilter`, signed hash.
    Rocksdb,
}

/// The filter policy `refilter` writes new filters with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WriterPolicy {
    /// LevelDB's bloom filter (`leveldb.BuiltinBloomFilter2`): what LevelDB ≥ 1.18
    /// with `NewBloomFilterPolicy` reads.
    Leveldb,
    /// The legacy name (`leveldb.BuiltinBloomFilter`): what goleveldb reads.
    Legacy,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Proves that no key of a LevelDB database can disappear behind its filters.
    ///
    /// Reads the live tables of each database directory (the current version, from
    /// CURRENT and its MANIFEST; without one, every *.ldb and *.sst file), or each
    /// table file given, read-only, a block at a time, and checks every filter
    /// against the keys it covers. A key counts as missed when any known reader of
    /// its filter's name would miss it (goleveldb and HyperLevelDB read
    /// leveldb.BuiltinBloomFilter with different hashes), unless --reader names the
    /// programs that read the database. Errors are also printed on stderr. Exit
    /// status: 0 when no key is missed and every table was read: tables were audited,
    /// or a database's current version lists none yet (its last line then says there
    /// was nothing to audit, not OK); 1 when a key is missed, a table or a database's
    /// CURRENT or MANIFEST could not be read, a directory holds neither CURRENT nor a
    /// table file (nothing audited), or the report could not be written (a full
    /// disk); 2 on a usage error.
    Audit {
        /// Database directories or table files.
        #[arg(required = true, value_name = "PATH", value_hint = ValueHint::AnyPath)]
        paths: Vec<PathBuf>,
        /// One JSON document on stdout instead of the text report.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// List at most N missed keys per table (all are counted).
        #[arg(long, value_name = "N", default_value_t = 1000, value_hint = ValueHint::Other)]
        max_missed: usize,
        /// The programs that read the database (repeat for several): only the keys
        /// they would miss count. Default: every known reader of each filter's name.
        #[arg(long, value_name = "NAME", value_enum)]
        reader: Vec<Reader>,
    },
    /// Follows keys through a LevelDB database as a Get does: which tables it consults,
    /// what each filter answers, which blocks it reads, where the key is found.
    ///
    /// Reads CURRENT and the MANIFEST (the live tables per level), then for each KEY
    /// walks the tables in LevelDB 1.23's order: level-0 tables whose range holds the
    /// key, newest first, then at most one table per deeper level, stopping where
    /// LevelDB stops. Read-only; safe while LevelDB has the database open. Exit
    /// status: 0 when every key was explained; 1 when the database could not be read
    /// (a missing CURRENT, a MANIFEST that does not parse, a comparator other than
    /// leveldb.BytewiseComparator, a table that cannot be read); 2 on a usage error.
    Explain {
        /// The database directory.
        #[arg(value_name = "DB", value_hint = ValueHint::DirPath)]
        path: PathBuf,
        /// The keys, as text (or hex with --hex).
        #[arg(required_unless_present = "keys_file", value_name = "KEY", value_hint = ValueHint::Other)]
        keys: Vec<String>,
        /// More keys, one per line, after those given as arguments: any bytes but a
        /// newline (with --hex, hex digits); a regular file of at most 64 MiB, or `-`
        /// for stdin. For keys longer than a command line may be.
        #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
        keys_file: Option<PathBuf>,
        /// The keys (KEY and --keys-file) are hex.
        #[arg(long)]
        hex: bool,
        /// One JSON document on stdout instead of text.
        #[arg(long)]
        json: bool,
        /// Also read the write-ahead log: keys written since the last flush are found
        /// there first, as LevelDB finds them in memory.
        #[arg(long)]
        log: bool,
        /// The filter policy of the reader to explain.
        #[arg(long, value_name = "POLICY", value_enum, default_value_t = ReaderPolicy::Leveldb)]
        policy: ReaderPolicy,
    },
    /// Writes one self-contained HTML page that draws LevelDB's real filters.
    ///
    /// With TABLE: the table's filters listed, one drawn as a grid of its bits (the
    /// first with keys, --filter N, or the one LevelDB consults for --key), with the
    /// keys it covers. Without: a playground, the filter LevelDB builds for --keys
    /// (or --keys-file) at --bits-per-key, to which keys can be added. On the page,
    /// hovering a bit shows the keys that set it; typing a key shows its probes and
    /// the verdict. The page needs no network.
    Show(ShowArgs),
    /// Gives a closed LevelDB database the filters it should have, without rewriting
    /// its data, and commits the result as LevelDB commits a version.
    ///
    /// For each live table (from CURRENT and its MANIFEST): a new table file whose
    /// data and index blocks are copied byte for byte, with a filter block built as
    /// LevelDB 1.23 builds it for those keys and that policy, tables in parallel;
    /// each new table is synced and read back; then a new MANIFEST is written and
    /// synced, and CURRENT replaced atomically. The old tables stay until LevelDB
    /// next opens the database and deletes them. The directory is opened once and
    /// every file reached through that handle; new files take the permissions of the
    /// files they replace. Holds the database's LOCK throughout and refuses when a
    /// program has the database open, when its MANIFEST names no comparator (any
    /// named one is kept, byte for byte), when a table, MANIFEST or CURRENT is a symlink or
    /// not a regular file, when a table cannot be read completely, or when the disk
    /// has too little room; on any error nothing changes. With --dry-run, writes
    /// nothing and reports what each --bits-per-key would cost and save.
    /// LevelDB uses the new filters only when the program opens the database with a
    /// bloom filter policy (plyvel bloom_filter_bits=N, C
    /// leveldb_options_set_filter_policy, C++ options.filter_policy, or
    /// leveldb-bloom run --default-bits N); without one it
    /// reads no filter, and its compactions write tables without filters again. Exit
    /// status: 0 when done, 1 when nothing was changed because of an error, 2 on a
    /// usage error.
    Refilter {
        /// The database directory.
        #[arg(value_name = "DB", value_hint = ValueHint::DirPath)]
        path: PathBuf,
        /// Bits per key of the new filters, 0 to 1000 (default 10, LevelDB's usual
        /// choice); with --dry-run, a list to compare (default 6,10,16).
        #[arg(
            long,
            value_name = "N",
            value_delimiter = ',',
            value_parser = clap::value_parser!(u32).range(0..=1000),
            value_hint = ValueHint::Other
        )]
        bits_per_key: Vec<u32>,
        /// The filters to write.
        #[arg(long, value_enum, default_value_t = WriterPolicy::Leveldb)]
        policy: WriterPolicy,
        /// Write nothing: report, per level and in total, the current filters and
        /// those of each --bits-per-key.
        #[arg(long)]
        dry_run: bool,
        /// One JSON document on stdout instead of the text report.
        #[arg(long)]
        json: bool,
    },
    /// Tells, without running them, whether LD_PRELOAD=libleveldb_bloom.so.0 reaches the
    /// LevelDB bloom policy of programs, scripts, extension modules and libraries.
    ///
    /// Reads each ELF file's headers, dynamic symbols, relocations, DT_NEEDED and
    /// flags, with bounded reads at their places: whether it calls LevelDB's bloom
    /// functions through the dynamic linker (LD_PRELOAD reaches them), is linked with
    /// libleveldb_bloom already, or binds them inside itself (linked -Bsymbolic or
    /// -Bsymbolic-functions, LevelDB linked statically, or held with hidden symbols);
    /// whether LEVELDB_BLOOM_DEFAULT_BITS reaches the databases it opens (a program
    /// that sets no filter policy has none to swap); which std::string ABI its
    /// LevelDB has; and the route that swaps it. A script is named as one and the
    /// ELF program it runs is judged; a Python or Node interpreter is pointed at the
    /// extension module to judge. Exit status: 0 when every file was read and judged
    /// and LD_PRELOAD reaches every LevelDB bloom call in them; 3 when some cannot be
    /// reached (why and the route on stdout); 1 when a file could not be read, is
    /// neither an ELF file nor a script, or could not be judged (an interpreter, a
    /// script whose program was not found); 2 on a usage error.
    Reach {
        /// Programs, extension modules (*.so) or shared libraries.
        #[arg(required = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
        files: Vec<PathBuf>,
        /// One JSON document on stdout instead of the text report.
        #[arg(long)]
        json: bool,
    },
    /// Runs a command with libleveldb_bloom swapped in: the library installed beside
    /// this tool, preloaded for that command alone.
    ///
    /// Finds libleveldb_bloom.so.0 where this tool's install route put it, relative to
    /// the tool's own path (a moved install finds its own): beside it, in ../lib,
    /// ../lib/MULTIARCH or ../lib64 (make install, the Debian package, the npm
    /// package), or in ../lib/python3.*/site-packages/leveldb_bloom (the wheel). Puts
    /// it in front of LD_PRELOAD (what was there stays), sets the variables asked for,
    /// and replaces itself with COMMAND: the exit status and signals are the
    /// command's. When `reach` would say the swap cannot reach COMMAND's LevelDB, says
    /// so once first. With --print-env, prints the variables instead, for a shell or
    /// a systemd unit. Exit status: the command's; 1 when the library (or, with
    /// --default-bits, its default-bits object) is not installed beside the tool; 2
    /// on a usage error; 126 when COMMAND cannot be run, 127 when it is not found.
    #[command(after_help = "Example:\n  leveldb-bloom run --stats=stderr -- python3 app.py")]
    Run(RunArgs),
}

/// How `run --print-env` prints the variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EnvFormat {
    /// `export NAME='value'` lines, for `eval` in a POSIX shell (the LD_PRELOAD this
    /// shell has is kept in the value).
    Sh,
    /// `Environment="NAME=value"` lines for a unit's Service section (a service's
    /// LD_PRELOAD is its own: only the library's).
    Systemd,
}

impl EnvFormat {
    /// Whether the printed LD_PRELOAD keeps the one this tool was started with.
    pub fn keeps_ld_preload(self) -> bool {
        self == Self::Sh
    }
}

/// `run`'s arguments.
#[derive(Args)]
pub struct RunArgs {
    /// Also preload libleveldb_bloom_default_bits.so, beside the library, with
    /// LEVELDB_BLOOM_DEFAULT_BITS=N: databases opened with no filter policy get
    /// LevelDB's bloom filter at N bits per key, 1 to 100.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=100),
        value_hint = ValueHint::Other
    )]
    pub default_bits: Option<u32>,
    /// Count the filter queries and write one summary line at exit
    /// (LEVELDB_BLOOM_STATS): to stderr (`--stats` alone), or appended to the file
    /// DEST (`--stats=DEST`, made absolute here).
    #[arg(
        long,
        value_name = "DEST",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "stderr",
        value_hint = ValueHint::FilePath
    )]
    pub stats: Option<OsString>,
    /// The SIMD level the library hashes with (LEVELDB_BLOOM_SIMD); by default the
    /// best this CPU has.
    #[arg(long, value_name = "LEVEL", value_parser = PossibleValuesParser::new(leveldb_bloom::SIMD_LEVELS))]
    pub simd: Option<String>,
    /// Print the variables instead of running a command: `--print-env` (or
    /// `=sh`) as export lines for `eval`, `--print-env=systemd` as Environment= lines.
    #[arg(
        long,
        value_name = "FORMAT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "sh",
        value_enum,
        conflicts_with = "command"
    )]
    pub print_env: Option<EnvFormat>,
    /// The command and its arguments (after `--` when an argument starts with `-`).
    #[arg(
        value_name = "COMMAND",
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present = "print_env",
        value_hint = ValueHint::CommandWithArguments
    )]
    pub command: Vec<OsString>,
}

/// `show`'s arguments.
#[derive(Args)]
pub struct ShowArgs {
    /// A table file (*.ldb, *.sst); without it, the playground.
    #[arg(value_name = "TABLE", value_hint = ValueHint::FilePath)]
    pub table: Option<PathBuf>,
    /// The filter to draw first.
    #[arg(long, value_name = "N", requires = "table", conflicts_with = "key", value_hint = ValueHint::Other)]
    pub filter: Option<usize>,
    /// Ask the filter about this key when the page opens (with TABLE: draw the
    /// filter LevelDB consults for it).
    #[arg(long, value_name = "KEY", value_hint = ValueHint::Other)]
    pub key: Option<String>,
    /// The playground's bits per key, 0 to 100 (past 44, k stays 30).
    #[arg(long, value_name = "B", default_value_t = 10, conflicts_with = "table", value_hint = ValueHint::Other)]
    pub bits_per_key: u32,
    /// The playground's keys, separated by commas.
    #[arg(long, value_name = "KEY,...", value_delimiter = ',', conflicts_with = "table", value_hint = ValueHint::Other)]
    pub keys: Vec<String>,
    /// The playground's keys, one per line: any bytes but a newline (with --hex, hex
    /// digits); a regular file of at most 64 MiB, or `-` for stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "table", value_hint = ValueHint::FilePath)]
    pub keys_file: Option<PathBuf>,
    /// Keys (--key, --keys, --keys-file) are hex.
    #[arg(long)]
    pub hex: bool,
    /// The page to write: a new or regular file, never a symlink's target; `-` writes
    /// it to stdout.
    #[arg(short, long, value_name = "PAGE.html", value_hint = ValueHint::FilePath)]
    pub output: PathBuf,
}

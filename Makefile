# leveldb-bloom: `make demo` and `make test` do everything on a fresh machine.

CARGO   ?= cargo
CC      ?= cc
LIBDIR  := target/release
LIB     := $(LIBDIR)/libleveldb_bloom.so
CSTRICT := -Wall -Wextra -Werror -pedantic

.PHONY: all build header deps demo demo-deps test check clippy-cpus test-deb bench fuzz clean install uninstall plot deb dist

all: build

# LevelDB's development files and the test tools; installed when missing (as root).
deps:
	@scripts/ensure-leveldb

build:
	$(CARGO) build --release --workspace

# Regenerates the committed include/leveldb_bloom.h from the Rust source.
header:
	LEVELDB_BLOOM_WRITE_HEADER=1 $(CARGO) build --release --features header

# The demo: a real LevelDB database, written and read with the swap (linked
# -lleveldb_bloom before -lleveldb), then read back by stock LevelDB. Needs only a C
# compiler, libleveldb-dev and cargo (scripts/ensure-demo); the database stays in
# DEMO_DB for the tool's commands printed at the end.
DEMO_DB := target/demo/db
demo: demo-deps build
	$(CC) -std=c99 $(CSTRICT) -Iinclude examples/demo.c -o $(LIBDIR)/demo \
	  -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lleveldb_bloom -lleveldb -lm
	$(CC) -std=c99 $(CSTRICT) examples/demo_stock_reader.c -o $(LIBDIR)/demo-stock-reader \
	  -lleveldb
	rm -rf $(DEMO_DB) && mkdir -p $(dir $(DEMO_DB))
	@$(LIBDIR)/demo $(DEMO_DB) && $(LIBDIR)/demo-stock-reader $(DEMO_DB)
	@table=$$(ls $(DEMO_DB)/*.ldb | head -n 1) && \
	  printf '\nThe database stays in %s. Try the tool on it:\n' $(DEMO_DB) && \
	  printf '  %s\n' "$(LIBDIR)/leveldb-bloom audit $(DEMO_DB)" \
	    "$(LIBDIR)/leveldb-bloom explain $(DEMO_DB) user:00001042 user:00001043" \
	    "$(LIBDIR)/leveldb-bloom show $$table --key user:00001043 -o target/demo/filter.html"

demo-deps:
	@scripts/ensure-demo

# Formatting, the import check, clippy, the format core's Rust tests and the unit tests
# of the table crate and the tool: minutes, no system package needed or installed (no
# LevelDB, no C harness; their integration tests, which need LevelDB, run in `make test`).
check:
	$(CARGO) fmt --check
	scripts/import-graph.py >/dev/null
	$(CARGO) clippy --workspace --all-targets --all-features --release -- -D warnings
	$(MAKE) --no-print-directory clippy-cpus
	$(CARGO) test --profile release-tests -p leveldb-bloom --all-features
	$(CARGO) test --profile release-tests -p leveldb-bloom-table -p leveldb-bloom-cli --lib

# Clippy for the other CPUs tests/suite/cpus.rs runs (AArch64; s390x, big-endian), in their
# own target directory (tests/suite/cpus.rs builds there too): the crates whose code
# depends on the CPU (cfg target_arch, target_endian: the C ABI and the core; the table
# crate and the tool have none); a CPU whose Rust target or
# cross compiler (make deps) is missing is a SKIPPED line.
CPUS := aarch64-unknown-linux-gnu:aarch64-linux-gnu s390x-unknown-linux-gnu:s390x-linux-gnu
clippy-cpus:
	@for cpu in $(CPUS); do target=$${cpu%%:*} gnu=$${cpu#*:}; \
	  if rustup target list --installed 2>/dev/null | grep -qx $$target && command -v $$gnu-g++ >/dev/null; then \
	    echo "clippy --target $$target"; \
	    CARGO_TARGET_DIR=target/cpus $(CARGO) clippy -p leveldb-bloom-capi -p leveldb-bloom \
	      --all-targets --all-features --release --target $$target -- -D warnings || exit 1; \
	  else echo "SKIPPED: clippy for $$target: needs its Rust target and $$gnu-g++ (make deps)"; fi; done

test: deps
	$(CARGO) fmt --check
	scripts/import-graph.py >/dev/null
	$(CARGO) clippy --workspace --all-targets --all-features --release -- -D warnings
	$(MAKE) --no-print-directory clippy-cpus
	# The C library first: the tests load the release build (cargo test does not build a
	# cdylib), and are themselves built without its link-time optimisation (Cargo.toml).
	$(CARGO) build --release --workspace
	# The wheels and npm packages, which cli/tests/suite/wheel.rs and npm_package.rs install.
	DIST_OR_SKIP=1 $(MAKE) --no-print-directory dist
	$(CARGO) test --profile release-tests --all-features --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --no-deps --all-features --workspace
	$(MAKE) --no-print-directory test-deb
	@# Last, to stand in the summary: a SIMD level this CPU lacks was not tested.
	@scripts/simd-levels $(LIB)

# The Debian packages built, checked by lintian, installed, used, purged (as root;
# otherwise skipped, saying so): scripts/test-deb. A step of its own, after cargo's
# tests, since it builds with cargo and installs what tests/suite/install.rs checks too.
test-deb: deps
	scripts/test-deb

# This library against LevelDB's own policy, in one run (under 3 minutes; BENCH_ARGS=--quick
# for a shorter one); its floor (core/examples/bench_floor.rs); LevelDB databases, stock
# against the swap; instructions per Get (perf, else valgrind if installed; the bench's
# --counters runs only these); the Rust API against rusty-leveldb at each SIMD level, both
# built with LTO (core/examples/rust_peers.rs, profile bench-peers); the audit beside
# LevelDB's own checked scan (scripts/bench-audit); refilter against LevelDB's full
# compaction (scripts/bench-refilter); a default-options program's absent Gets, stock
# against refilter + LEVELDB_BLOOM_DEFAULT_BITS (scripts/bench-default-bits); see README.
BENCH := $(LIBDIR)/leveldb_bloom_bench
bench: deps build
	$(CARGO) build --release -p leveldb-bloom --example bench_floor
	$(CXX) -std=c++17 -O2 $(CSTRICT) -Iinclude benches/bench.cc benches/bench_db.cc -o $(BENCH) \
	  -lleveldb -ldl
	$(BENCH) $(abspath $(LIB)) --floor $(abspath $(LIBDIR)/examples/bench_floor) $(BENCH_ARGS)
	$(CARGO) build --profile bench-peers -p leveldb-bloom --features rusty-leveldb --example rust_peers
	for level in scalar avx2 avx512; do target/bench-peers/examples/rust_peers $$level; done
	$(CC) -std=c99 -O2 $(CSTRICT) benches/scan_db.c -o $(LIBDIR)/scan_db -lleveldb
	scripts/ensure-leveldb /usr/bin/time:time
	scripts/bench-audit $(LIBDIR)/scan_db $(LIBDIR)/leveldb-bloom
	scripts/bench-refilter $(LIBDIR)/scan_db $(LIBDIR)/leveldb-bloom
	scripts/bench-default-bits $(LIBDIR)/scan_db $(abspath $(LIB)) $(LIBDIR)/leveldb-bloom

# Fuzzing: the table, MANIFEST and log readers and the audit on TABLE_FUZZ_CASES mutated
# tables and MANIFESTs of LevelDB and goleveldb (cli/tests/suite/fuzz_tables.rs; `make test`
# runs 20,000), then the filter differentially against LevelDB for FUZZ_SECONDS (needs
# clang; see scripts/fuzz). UPDATE_CORPUS=1 replaces fuzz/corpus with the minimised
# result (commit it; `make test` replays it); otherwise the working tree is left as it was.
FUZZ_SECONDS     ?= 60
UPDATE_CORPUS    ?= 0
TABLE_FUZZ_CASES ?= 2000000
fuzz: deps build
	TABLE_FUZZ_CASES=$(TABLE_FUZZ_CASES) $(CARGO) test --release -p leveldb-bloom-cli \
	  --test suite -- fuzz_tables:: --nocapture
	FUZZ_SECONDS=$(FUZZ_SECONDS) UPDATE_CORPUS=$(UPDATE_CORPUS) scripts/fuzz

clean:
	$(CARGO) clean

# Measures the false-positive rate for 1..=20 bits per key, prints it as a table and
# redraws the README's figure.
plot:
	$(CARGO) run --release -p leveldb-bloom --example fp_rate -- docs/false-positive-rate.svg

# Installation, GNU style: `make && sudo make install PREFIX=/usr/local`. install only
# copies what `make` built (and has the built tool write its man pages and shell
# completions) and never runs cargo, so nothing is compiled as root (and
# tests/suite/install.rs can run it from inside `cargo test`, which holds cargo's lock).
PREFIX       ?= /usr/local
DESTDIR      ?=
libdir       ?= $(PREFIX)/lib
includedir   ?= $(PREFIX)/include
bindir       ?= $(PREFIX)/bin
cmakedir     ?= $(libdir)/cmake/leveldb_bloom
pkgconfigdir ?= $(libdir)/pkgconfig
datarootdir  ?= $(PREFIX)/share
man1dir      ?= $(datarootdir)/man/man1
# The library's page, libleveldb_bloom(7): its variables and the recipe for slow lookups.
man7dir      ?= $(datarootdir)/man/man7
bashcompdir  ?= $(datarootdir)/bash-completion/completions
# zsh's own prefix has site-functions in its fpath; Debian's packages use
# vendor-completions (debian/rules says so).
zshcompdir   ?= $(datarootdir)/zsh/site-functions
fishcompdir  ?= $(datarootdir)/fish/vendor_completions.d
# The directory holding the built libleveldb_bloom.so and .a, and the built
# command-line tool.
ARTIFACTS    ?= $(LIBDIR)
TOOL         ?= $(LIBDIR)/leveldb-bloom
# Installed copies lose their debug information (the build keeps it, for profiling);
# `make install STRIP_FLAGS=` installs them as built.
STRIP_FLAGS  ?= --strip-debug
# The names come from what is installed: the version from the header (generated
# from Cargo.toml), the soname from the library (set by build.rs): the built one for
# install, the installed one for uninstall.
VERSION      := $(shell sed -n 's/^\#define LEVELDB_BLOOM_VERSION "\(.*\)"/\1/p' include/leveldb_bloom.h)
REALNAME     := libleveldb_bloom.so.$(VERSION)
soname_of     = $(shell objdump -p $(1) 2>/dev/null | sed -n 's/^ *SONAME *//p')
SONAME        = $(call soname_of,$(ARTIFACTS)/libleveldb_bloom.so)
# Everything install creates, so that uninstall removes exactly that: the files, and
# the directories that did not exist before, listed in DIRS_RECORD.
INSTALLED     = $(addprefix $(DESTDIR)$(libdir)/,$(REALNAME) $(call soname_of,$(DESTDIR)$(libdir)/$(REALNAME)) libleveldb_bloom.so libleveldb_bloom.a $(DEFAULT_BITS)) \
                $(addprefix $(DESTDIR)$(includedir)/,leveldb_bloom.h leveldb_bloom.hpp) \
                $(DESTDIR)$(pkgconfigdir)/leveldb_bloom.pc $(DESTDIR)$(bindir)/leveldb-bloom \
                $(addprefix $(DESTDIR)$(cmakedir)/,leveldb_bloomConfig.cmake leveldb_bloomConfigVersion.cmake) \
                $(wildcard $(DESTDIR)$(man1dir)/leveldb-bloom.1 $(DESTDIR)$(man1dir)/leveldb-bloom-*.1) \
                $(DESTDIR)$(man7dir)/libleveldb_bloom.7 \
                $(DESTDIR)$(bashcompdir)/leveldb-bloom $(DESTDIR)$(zshcompdir)/_leveldb-bloom \
                $(DESTDIR)$(fishcompdir)/leveldb-bloom.fish
# The object preloaded for LEVELDB_BLOOM_DEFAULT_BITS (default-bits/), beside the library.
DEFAULT_BITS := libleveldb_bloom_default_bits.so
DIRS_RECORD  := $(datarootdir)/leveldb-bloom/installed-directories
INSTALL_DIRS  = $(bindir) $(includedir) $(libdir) $(pkgconfigdir) $(cmakedir) $(man1dir) $(man7dir) \
                $(bashcompdir) $(zshcompdir) $(fishcompdir) $(patsubst %/,%,$(dir $(DIRS_RECORD)))
# The CMake package finds the library and headers relative to itself (relocatable).
cmake_rel     = $(shell realpath -m -s --relative-to=$(cmakedir) $(1))

install:
	@test -n "$(VERSION)" || { echo "error: include/leveldb_bloom.h has no LEVELDB_BLOOM_VERSION" >&2; exit 1; }
	@for f in libleveldb_bloom.so libleveldb_bloom.a $(DEFAULT_BITS); do test -f $(ARTIFACTS)/$$f || \
	  { echo "error: $(ARTIFACTS)/$$f is missing: run 'make' first" >&2; exit 1; }; done
	@test -f $(TOOL) || { echo "error: $(TOOL) is missing: run 'make' first" >&2; exit 1; }
	@test -n "$(SONAME)" || { echo "error: $(ARTIFACTS)/libleveldb_bloom.so has no soname" >&2; exit 1; }
	@created=$$(for d in $(INSTALL_DIRS); do \
	    while [ "$$d" != / ] && [ ! -d "$(DESTDIR)$$d" ]; do echo "$$d"; d=$$(dirname "$$d"); done; \
	  done) && install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS)) && \
	  { cat $(DESTDIR)$(DIRS_RECORD) 2>/dev/null || true; for d in $$created; do echo "$$d"; done; } \
	    | sort -u > $(DESTDIR)$(DIRS_RECORD).new && mv $(DESTDIR)$(DIRS_RECORD).new $(DESTDIR)$(DIRS_RECORD)
	install -m 755 $(TOOL) $(DESTDIR)$(bindir)/leveldb-bloom
	install -m 755 $(ARTIFACTS)/libleveldb_bloom.so $(DESTDIR)$(libdir)/$(REALNAME)
	ln -sfn $(REALNAME) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(libdir)/libleveldb_bloom.so
	install -m 644 $(ARTIFACTS)/libleveldb_bloom.a $(DESTDIR)$(libdir)/libleveldb_bloom.a
	install -m 755 $(ARTIFACTS)/$(DEFAULT_BITS) $(DESTDIR)$(libdir)/$(DEFAULT_BITS)
	$(if $(STRIP_FLAGS),strip $(STRIP_FLAGS) $(DESTDIR)$(libdir)/$(REALNAME) $(DESTDIR)$(libdir)/libleveldb_bloom.a $(DESTDIR)$(libdir)/$(DEFAULT_BITS) $(DESTDIR)$(bindir)/leveldb-bloom)
	install -m 644 $(wildcard include/leveldb_bloom.h include/leveldb_bloom.hpp) $(DESTDIR)$(includedir)/
	sed -e 's|@prefix@|$(PREFIX)|' \
	    -e 's|@libdir@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(libdir))|' \
	    -e 's|@includedir@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(includedir))|' \
	    -e 's|@version@|$(VERSION)|' leveldb_bloom.pc.in > $(DESTDIR)$(pkgconfigdir)/leveldb_bloom.pc
	for f in leveldb_bloomConfig leveldb_bloomConfigVersion; do \
	  sed -e 's|@libdir@|$(call cmake_rel,$(libdir))|g' -e 's|@includedir@|$(call cmake_rel,$(includedir))|g' \
	    -e 's|@version@|$(VERSION)|g' cmake/$$f.cmake.in > $(DESTDIR)$(cmakedir)/$$f.cmake; done
	$(TOOL) man-pages $(DESTDIR)$(man1dir)
	install -m 644 docs/man/libleveldb_bloom.7 $(DESTDIR)$(man7dir)/libleveldb_bloom.7
	$(TOOL) completion bash > $(DESTDIR)$(bashcompdir)/leveldb-bloom
	$(TOOL) completion zsh > $(DESTDIR)$(zshcompdir)/_leveldb-bloom
	$(TOOL) completion fish > $(DESTDIR)$(fishcompdir)/leveldb-bloom.fish

# The Python wheels (`leveldb-bloom`, manylinux_2_24) and npm packages (`leveldb-bloom` and
# its per-platform packages), one per CPU (x86-64, AArch64), into target/dist, the version
# cli/Cargo.toml's: scripts/build-dist, with maturin and zig from PyPI (installed into
# target/dist-tools by scripts/ensure-dist-tools) and Debian's AArch64 cross compiler
# (make deps). See docs/install.md.
dist:
	scripts/build-dist

# Debian packages, split as Debian splits libraries: libleveldb-bloom0 (the shared
# library), libleveldb-bloom-dev (headers, static library, pkg-config and CMake files),
# leveldb-bloom-tools (the tool, its man pages and completions); built by debhelper
# (debian/) from `make install`, into target/debian. Needs debhelper and dpkg-dev.
DEB_VERSION = $(shell dpkg-parsechangelog -SVersion)
# debhelper's work files (dh_clean would also search all of target/ for editor backups).
DEB_WORK    = .debhelper tmp files debhelper-build-stamp *.substvars *.debhelper.log \
              libleveldb-bloom0 libleveldb-bloom-dev leveldb-bloom-tools
deb: build
	@test "$(DEB_VERSION)" = "$(VERSION)" || { echo "error: debian/changelog says $(DEB_VERSION), \
	  the library is $(VERSION): add a debian/changelog entry (dch -v $(VERSION))" >&2; exit 1; }
	rm -rf target/debian && mkdir -p target/debian
	debian/rules binary
	cd debian && rm -rf $(DEB_WORK)

# Removes the files install made, and the directories it made when they are left
# empty, deepest first; never a directory that was there before.
uninstall:
	rm -f $(INSTALLED)
	@test ! -f $(DESTDIR)$(DIRS_RECORD) || { dirs=$$(sort -r $(DESTDIR)$(DIRS_RECORD)) && \
	  rm -f $(DESTDIR)$(DIRS_RECORD) && \
	  for d in $$dirs; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done; }

# leveldb-bloom: `make demo` and `make test` do everything on a fresh machine.

CARGO   ?= cargo
CC      ?= cc
LIBDIR  := target/release
LIB     := $(LIBDIR)/libleveldb_bloom.so
CSTRICT := -Wall -Wextra -Werror -pedantic

.PHONY: all build header deps demo test bench clean

all: build

# LevelDB's development files and the test tools; installed when missing (as root).
deps:
	@scripts/ensure-leveldb

build:
	$(CARGO) build --release
	ln -sf libleveldb_bloom.so $(LIB).0

# Regenerates the committed include/leveldb_bloom.h from the Rust source.
header:
	LEVELDB_BLOOM_WRITE_HEADER=1 $(CARGO) build --release

# The demo: a real LevelDB database in a temporary directory, written and read with
# the swap (linked -lleveldb_bloom before -lleveldb), then read back by stock LevelDB.
demo: deps build
	$(CC) -std=c99 $(CSTRICT) -Iinclude examples/demo.c -o $(LIBDIR)/demo \
	  -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lleveldb_bloom -lleveldb -lm
	$(CC) -std=c99 $(CSTRICT) examples/demo_stock_reader.c -o $(LIBDIR)/demo-stock-reader \
	  -lleveldb
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	  $(LIBDIR)/demo "$$dir/db" && $(LIBDIR)/demo-stock-reader "$$dir/db"

test: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets --release -- -D warnings
	$(CARGO) test --release

# This library against LevelDB's own policy, in one run (a few minutes); see README.
BENCH := $(LIBDIR)/leveldb_bloom_bench
bench: deps build
	$(CXX) -std=c++17 -O2 $(CSTRICT) -Iinclude benches/bench.cc -o $(BENCH) -lleveldb -ldl
	$(BENCH) $(abspath $(LIB)) $(BENCH_ARGS)

clean:
	$(CARGO) clean

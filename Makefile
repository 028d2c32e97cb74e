# leveldb-bloom: `make demo` and `make test` do everything on a fresh machine.

CARGO   ?= cargo
CC      ?= cc
LIBDIR  := target/release
LIB     := $(LIBDIR)/libleveldb_bloom.so
CSTRICT := -Wall -Wextra -Werror -pedantic

.PHONY: all build header deps demo test fuzz clean

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

demo: deps build
	$(CC) -std=c99 $(CSTRICT) -Iinclude examples/demo.c -o $(LIBDIR)/demo \
	  -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lleveldb_bloom
	$(LIBDIR)/demo

test: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets --release -- -D warnings
	$(CARGO) test --release

# Differential fuzzing against LevelDB for FUZZ_SECONDS (needs clang; see scripts/fuzz).
# Commit the minimised fuzz/corpus it leaves; `make test` replays it.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz

clean:
	$(CARGO) clean

"""A plyvel program with LevelDB's default options: no filter policy
(bloom_filter_bits=0), unless BITS is given. Nothing here knows about leveldb-bloom;
tests/suite/default_bits.rs runs it stock and with LD_PRELOAD=libleveldb_bloom.so.

    plyvel_default_options.py DIR [BITS]

Two sessions of writes, each ending with a full compaction, so that the same program
always writes the same tables (several: 1 MiB each, values snappy cannot shrink).
"""
import hashlib
import sys

import plyvel

KEYS = 40_000


def main():
    bits = {"bloom_filter_bits": int(sys.argv[2])} if len(sys.argv) > 2 else {}
    for session in (1, 2):
        db = plyvel.DB(
            sys.argv[1],
            create_if_missing=True,
            write_buffer_size=64 << 20,
            max_file_size=1 << 20,
            **bits,
        )
        for i in range(0, KEYS, session):
            key = b"key%08d" % (i * 7919 % KEYS)
            db.put(key, hashlib.sha512(b"%d %d" % (i, session)).digest())
        db.compact_range()
        db.close()


main()

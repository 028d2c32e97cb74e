"""A small LevelDB database for `leveldb-bloom refilter`'s tests, written and read
by Debian's plyvel (LevelDB 1.23), deterministically: the same arguments give
byte-identical tables, whatever the filter policy.

    refilter_db.py write DIR BITS|none [LATE]
    refilter_db.py read DIR BITS|none [LATE]

write: KEYS keys with 100-byte values, compacted into a few level-1 tables; with
LATE, LATE more keys after the compaction and a reopen, so that level 0 holds a
table too. read: opens the database with that policy, checks every key's value and
that absent keys are absent, prints "read: P present, A absent, W wrong" and exits
1 if W > 0.
"""
import hashlib
import sys

import plyvel

KEYS = 12_000


def key(i):
    return b"key %08d" % (i * 7919 % 1_000_003)


def value(k):
    return hashlib.sha512(k).digest()[:36] + k * 4


def absent_key(i):
    """Keys never written, spread over the range of the written ones."""
    return key(KEYS + i)


def late_key(i):
    return b"late %06d" % i


def open_db(path, bits, create=False):
    options = dict(create_if_missing=create, write_buffer_size=64 << 20, max_file_size=1 << 20)
    if bits != "none":
        options["bloom_filter_bits"] = int(bits)
    return plyvel.DB(path, **options)


def written(late):
    return [key(i) for i in range(KEYS)] + [late_key(i) for i in range(late)]


def main():
    mode, path, bits = sys.argv[1:4]
    late = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    if mode == "write":
        db = open_db(path, bits, create=True)
        for i in range(KEYS):
            db.put(key(i), value(key(i)))
        db.compact_range()
        for i in range(late):
            db.put(late_key(i), value(late_key(i)))
        db.close()
        if late:
            # The reopen turns the log into a level-0 table and leaves an empty log.
            open_db(path, bits).close()
        return
    db = open_db(path, bits)
    present = absent = wrong = 0
    for k in written(late):
        got = db.get(k)
        present += got == value(k)
        wrong += got != value(k)
    for i in range(KEYS):
        got = db.get(absent_key(i))
        absent += got is None
        wrong += got is not None
    db.close()
    print(f"read: {present} present, {absent} absent, {wrong} wrong")
    sys.exit(1 if wrong else 0)


main()

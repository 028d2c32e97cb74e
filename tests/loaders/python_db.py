"""A LevelDB database written and read from Python, as real Python programs do it:
through Debian's plyvel (an extension module that loads libleveldb RTLD_LOCAL) or
through LevelDB's C API with ctypes (ctypes.CDLL loads it RTLD_LOCAL too). Nothing
here knows about leveldb-bloom; the tests run it with and without
LD_PRELOAD=libleveldb_bloom.so.

    python_db.py plyvel|ctypes write|read DIR

write: puts KEYS keys of any bytes and lengths 0..64 (deterministic), deleting
every tenth again, compacting twice. read: gets every key written and as many that
were not, and prints "read: P present, A absent, W wrong"; exits 1 if W > 0.
Both print "swap status: S", S read from inside this process with
leveldb_bloom_swap_status() when the environment names the library in
LEVELDB_BLOOM_LIB, else "absent".
"""
import ctypes
import hashlib
import os
import random
import sys

KEYS = 20_000
BITS_PER_KEY = 10
WRITE_BUFFER_SIZE = 64 << 20  # holds the whole session: no flush before the compaction
MAX_FILE_SIZE = 1 << 20  # the smallest LevelDB allows: several tables


def keys():
    """The keys written, then keys never written (a 0xff byte ends every one)."""
    rng = random.Random(20261122)
    present = set()
    while len(present) < KEYS:
        present.add(rng.randbytes(rng.randrange(0, 65)))
    present = sorted(present)
    absent = [rng.randbytes(rng.randrange(0, 64)) + b"\xff" for _ in range(KEYS)]
    absent = [key for key in absent if key not in present]
    return present, absent


def value(key):
    """64 bytes snappy cannot shrink, then the key: several tables' worth."""
    return hashlib.sha512(key).digest() + key


class Plyvel:
    def __init__(self, path, create):
        import plyvel

        self.db = plyvel.DB(
            path,
            create_if_missing=create,
            bloom_filter_bits=BITS_PER_KEY,
            write_buffer_size=WRITE_BUFFER_SIZE,
            max_file_size=MAX_FILE_SIZE,
        )

    def put(self, key, value):
        self.db.put(key, value)

    def delete(self, key):
        self.db.delete(key)

    def get(self, key):
        return self.db.get(key)

    def compact(self):
        self.db.compact_range()

    def close(self):
        self.db.close()


class CApi:
    """LevelDB's C API (leveldb/c.h) through ctypes."""

    def __init__(self, path, create):
        lib = ctypes.CDLL("libleveldb.so.1d")
        p, c, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
        err = ctypes.POINTER(ctypes.c_char_p)
        for name, res, args in [
            ("leveldb_options_create", p, []),
            ("leveldb_options_set_create_if_missing", None, [p, ctypes.c_ubyte]),
            ("leveldb_options_set_filter_policy", None, [p, p]),
            ("leveldb_options_set_write_buffer_size", None, [p, sz]),
            ("leveldb_options_set_max_file_size", None, [p, sz]),
            ("leveldb_filterpolicy_create_bloom", p, [ctypes.c_int]),
            ("leveldb_filterpolicy_destroy", None, [p]),
            ("leveldb_open", p, [p, c, err]),
            ("leveldb_close", None, [p]),
            ("leveldb_put", None, [p, p, c, sz, c, sz, err]),
            ("leveldb_delete", None, [p, p, c, sz, err]),
            ("leveldb_get", p, [p, p, c, sz, ctypes.POINTER(sz), err]),
            ("leveldb_free", None, [p]),
            ("leveldb_compact_range", None, [p, c, sz, c, sz]),
            ("leveldb_readoptions_create", p, []),
            ("leveldb_writeoptions_create", p, []),
            ("leveldb_readoptions_destroy", None, [p]),
            ("leveldb_writeoptions_destroy", None, [p]),
            ("leveldb_options_destroy", None, [p]),
        ]:
            function = getattr(lib, name)
            function.restype, function.argtypes = res, args
        self.lib = lib
        self.policy = lib.leveldb_filterpolicy_create_bloom(BITS_PER_KEY)
        if not self.policy:
            sys.exit("leveldb_filterpolicy_create_bloom returned NULL")
        self.options = lib.leveldb_options_create()
        lib.leveldb_options_set_create_if_missing(self.options, int(create))
        lib.leveldb_options_set_filter_policy(self.options, self.policy)
        lib.leveldb_options_set_write_buffer_size(self.options, WRITE_BUFFER_SIZE)
        lib.leveldb_options_set_max_file_size(self.options, MAX_FILE_SIZE)
        self.read_options = lib.leveldb_readoptions_create()
        self.write_options = lib.leveldb_writeoptions_create()
        self.db = lib.leveldb_open(self.options, path.encode(), self.error())
        self.check("open")

    def error(self):
        self.err = ctypes.c_char_p()
        return ctypes.byref(self.err)

    def check(self, what):
        if self.err.value is not None:
            sys.exit(f"{what}: {self.err.value.decode()}")

    def put(self, key, value):
        self.lib.leveldb_put(
            self.db, self.write_options, key, len(key), value, len(value), self.error()
        )
        self.check("put")

    def delete(self, key):
        self.lib.leveldb_delete(self.db, self.write_options, key, len(key), self.error())
        self.check("delete")

    def get(self, key):
        length = ctypes.c_size_t()
        found = self.lib.leveldb_get(
            self.db, self.read_options, key, len(key), ctypes.byref(length), self.error()
        )
        self.check("get")
        if not found:
            return None
        data = ctypes.string_at(found, length.value)
        self.lib.leveldb_free(found)
        return data

    def compact(self):
        self.lib.leveldb_compact_range(self.db, None, 0, None, 0)

    def close(self):
        lib = self.lib
        lib.leveldb_close(self.db)
        lib.leveldb_readoptions_destroy(self.read_options)
        lib.leveldb_writeoptions_destroy(self.write_options)
        lib.leveldb_options_destroy(self.options)
        lib.leveldb_filterpolicy_destroy(self.policy)  # after the database is closed


def swap_status():
    path = os.environ.get("LEVELDB_BLOOM_LIB")
    if not path:
        return "absent"
    return str(ctypes.CDLL(path).leveldb_bloom_swap_status())


def main():
    binding, mode, path = sys.argv[1:4]
    db = {"plyvel": Plyvel, "ctypes": CApi}[binding](path, create=(mode == "write"))
    present, absent = keys()
    print(f"swap status: {swap_status()}")
    if mode == "write":
        # Two compactions, the second merging into the tables of the first, so that
        # the tables are rewritten at MAX_FILE_SIZE rather than moved whole.
        for key in present[::2]:
            db.put(key, value(key))
        db.compact()
        for key in present[1::2]:
            db.put(key, value(key))
        for key in present[::10]:
            db.delete(key)
        db.compact()
        print(f"wrote {len(present)} keys")
    else:
        deleted = set(present[::10])
        counts = {"present": 0, "absent": 0, "wrong": 0}
        for key in present + absent:
            expected = None if key in deleted or key in absent else value(key)
            got = db.get(key)
            counts["present" if got is not None else "absent"] += 1
            if got != expected:
                counts["wrong"] += 1
                print(f"wrong: {key.hex()}", file=sys.stderr)
        print("read: {present} present, {absent} absent, {wrong} wrong".format(**counts))
        if counts["wrong"]:
            sys.exit(1)
    db.close()


if __name__ == "__main__":
    main()

"""LevelDB's C API through ctypes, the library loaded RTLD_LOCAL as ctypes loads it.

    ctypes_db.py LIBLEVELDB POLICY DIR

POLICY is "stock" (the LevelDB's own leveldb_filterpolicy_create_bloom(10)) or the
path of libleveldb_bloom (its leveldb_bloom_policy_create(10)). Writes 30,000 keys
with 100-byte values (several tables after the compaction), reads them and as many
absent keys back, and prints what it read. Run by tests/suite/string_abi.rs."""
import ctypes
import hashlib
import sys

leveldb_path, policy_from, directory = sys.argv[1:4]
leveldb = ctypes.CDLL(leveldb_path)
pointer, size = ctypes.c_void_p, ctypes.c_size_t
for name, result, arguments in [
    ("leveldb_options_create", pointer, []),
    ("leveldb_options_set_create_if_missing", None, [pointer, ctypes.c_ubyte]),
    ("leveldb_options_set_filter_policy", None, [pointer, pointer]),
    ("leveldb_writeoptions_create", pointer, []),
    ("leveldb_readoptions_create", pointer, []),
    ("leveldb_open", pointer, [pointer, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]),
    ("leveldb_put", None, [pointer, pointer, ctypes.c_char_p, size, ctypes.c_char_p, size,
                           ctypes.POINTER(ctypes.c_char_p)]),
    ("leveldb_get", pointer, [pointer, pointer, ctypes.c_char_p, size, ctypes.POINTER(size),
                              ctypes.POINTER(ctypes.c_char_p)]),
    ("leveldb_compact_range", None, [pointer, ctypes.c_char_p, size, ctypes.c_char_p, size]),
    ("leveldb_free", None, [pointer]),
    ("leveldb_close", None, [pointer]),
    ("leveldb_filterpolicy_create_bloom", pointer, [ctypes.c_int]),
]:
    function = getattr(leveldb, name)
    function.restype, function.argtypes = result, arguments

if policy_from == "stock":
    create = leveldb.leveldb_filterpolicy_create_bloom
else:
    create = ctypes.CDLL(policy_from).leveldb_bloom_policy_create
    create.restype, create.argtypes = pointer, [ctypes.c_int]
policy = create(10)
assert policy, "no policy"

options = leveldb.leveldb_options_create()
leveldb.leveldb_options_set_create_if_missing(options, 1)
leveldb.leveldb_options_set_filter_policy(options, policy)
error = ctypes.c_char_p()
db = leveldb.leveldb_open(options, directory.encode(), ctypes.byref(error))
assert not error.value, error.value
write, read = leveldb.leveldb_writeoptions_create(), leveldb.leveldb_readoptions_create()
KEYS = 30000


def key(i):
    return b"ctypes key %d" % (i * 7919)


def value(i):
    # Incompressible, so that the tables are several.
    return b"".join(hashlib.sha256(b"%d %d" % (i, part)).digest() for part in range(3)) + b"%04d" % (
        i % 10000)


for i in range(KEYS):
    leveldb.leveldb_put(db, write, key(i), len(key(i)), value(i), len(value(i)), ctypes.byref(error))
    assert not error.value, error.value
leveldb.leveldb_compact_range(db, None, 0, None, 0)
present = absent = wrong = 0
for i in range(2 * KEYS):
    length = size()
    found = leveldb.leveldb_get(db, read, key(i), len(key(i)), ctypes.byref(length),
                                ctypes.byref(error))
    assert not error.value, error.value
    if found:
        present += 1
        wrong += i >= KEYS or ctypes.string_at(found, length.value) != value(i)
        leveldb.leveldb_free(found)
    else:
        absent += 1
        wrong += i < KEYS
leveldb.leveldb_close(db)
print("read: %d present, %d absent, %d wrong" % (present, absent, wrong))

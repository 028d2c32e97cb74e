"""Python multiprocessing with the fork start method, as a real program uses it:
worker processes forked from a parent whose other threads keep creating and
destroying bloom policies through LevelDB's C API (ctypes releases the GIL for each
call, so the threads are inside LevelDB, and under the swap inside leveldb-bloom,
when the main thread forks). Each worker opens a database of its own with plyvel
(bloom_filter_bits=10), writes KEYS keys, compacts, and reads every one back, and
keys never written. The parent opens no database itself: LevelDB's own background
thread and file locks do not survive a fork, and are not what this tests. Nothing
here knows about leveldb-bloom but the swap status, read from inside each worker
with leveldb_bloom_swap_status() when LEVELDB_BLOOM_LIB names the library.

    fork_workers.py WORKERS DIR

Prints "workers: W started, P passed, H hung, F failed" and how many workers read
each swap status ("swap status in workers: 3 in 200"); exits 1 unless every worker
passed.
"""
import collections
import ctypes
import multiprocessing
import os
import sys
import threading

KEYS = 3000
CHURN_THREADS = 4
AT_ONCE = 4
# A worker still running after this long is hung: it needs well under a second.
TIMEOUT_SECONDS = 60


def churn(stop):
    """Creates and destroys bloom policies until told to stop."""
    lib = ctypes.CDLL("libleveldb.so.1d")
    lib.leveldb_filterpolicy_create_bloom.restype = ctypes.c_void_p
    lib.leveldb_filterpolicy_create_bloom.argtypes = [ctypes.c_int]
    lib.leveldb_filterpolicy_destroy.argtypes = [ctypes.c_void_p]
    while not stop.is_set():
        policy = lib.leveldb_filterpolicy_create_bloom(10)
        lib.leveldb_filterpolicy_destroy(policy)


def swap_status():
    path = os.environ.get("LEVELDB_BLOOM_LIB")
    if not path:
        return "absent"
    return str(ctypes.CDLL(path).leveldb_bloom_swap_status())


def work(path):
    """One worker: its own database, every key read back; the result in PATH.result."""
    import plyvel

    db = plyvel.DB(path, create_if_missing=True, bloom_filter_bits=10)
    for i in range(KEYS):
        db.put(b"key%d" % i, b"value%d" % i)
    db.compact_range()
    found = sum(db.get(b"key%d" % i) == b"value%d" % i for i in range(KEYS))
    phantom = sum(db.get(b"absent%d" % i) is not None for i in range(KEYS))
    db.close()
    with open(path + ".result", "w") as result:
        result.write(f"{found} {phantom} {swap_status()}\n")


def outcome(process, path):
    """'passed', 'hung' or 'failed', and the worker's swap status."""
    process.join(TIMEOUT_SECONDS)
    if process.is_alive():
        process.kill()
        process.join()
        return "hung", None
    try:
        with open(path + ".result") as result:
            found, phantom, status = result.read().split()
    except OSError:
        return "failed", None
    passed = process.exitcode == 0 and int(found) == KEYS and int(phantom) == 0
    return ("passed" if passed else "failed"), status


def main():
    workers, root = int(sys.argv[1]), sys.argv[2]
    os.makedirs(root, exist_ok=True)
    import plyvel  # noqa: F401  loaded before the fork, as a real program has it

    context = multiprocessing.get_context("fork")
    stop = threading.Event()
    threads = [threading.Thread(target=churn, args=(stop,)) for _ in range(CHURN_THREADS)]
    for thread in threads:
        thread.start()
    counts = {"passed": 0, "hung": 0, "failed": 0}
    statuses = []
    for first in range(0, workers, AT_ONCE):
        batch = []
        for n in range(first, min(first + AT_ONCE, workers)):
            path = os.path.join(root, f"worker{n}")
            process = context.Process(target=work, args=(path,))
            process.start()
            batch.append((process, path))
        for process, path in batch:
            result, status = outcome(process, path)
            counts[result] += 1
            statuses.append(status)
    stop.set()
    for thread in threads:
        thread.join()
    print("workers: {} started, {passed} passed, {hung} hung, {failed} failed".format(workers, **counts))
    tally = collections.Counter(statuses)
    print("swap status in workers: " + ", ".join(f"{s} in {n}" for s, n in sorted(tally.items(), key=str)))
    sys.exit(0 if counts["passed"] == workers else 1)


if __name__ == "__main__":
    main()

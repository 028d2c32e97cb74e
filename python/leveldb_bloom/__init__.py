"""LevelDB's bloom filter policy as a preloadable library, and the tool that runs a
program with it: ``leveldb-bloom run -- python app.py`` (or ``python -m leveldb_bloom
run -- ...``). The library and the default-bits object are files of this package."""
import os
import shutil
import sysconfig

__all__ = ["library_path", "default_bits_path", "tool_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_path():
    """The path of libleveldb_bloom.so.0 in this package: the value for LD_PRELOAD."""
    return os.path.join(_HERE, "libleveldb_bloom.so.0")


def default_bits_path():
    """The path of the object that gives databases opened with no filter policy one
    (LEVELDB_BLOOM_DEFAULT_BITS); it may be absent from older wheels."""
    return os.path.join(_HERE, "libleveldb_bloom_default_bits.so")


def tool_path():
    """The leveldb-bloom executable pip installed with this package: in the scripts
    directory of the prefix the package is in (a venv, --user, --prefix), else on
    PATH."""
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(_HERE))))
    beside = os.path.join(prefix, "bin", "leveldb-bloom")
    if os.access(beside, os.X_OK):
        return beside
    scripts = os.path.join(sysconfig.get_path("scripts"), "leveldb-bloom")
    if os.access(scripts, os.X_OK):
        return scripts
    found = shutil.which("leveldb-bloom")
    if found is None:
        raise FileNotFoundError("the leveldb-bloom executable is not installed with this package")
    return found

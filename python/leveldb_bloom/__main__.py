"""``python -m leveldb_bloom ARGS...`` is ``leveldb-bloom ARGS...``: for example
``python -m leveldb_bloom run --stats -- python app.py``. The process becomes the tool
(and, with ``run``, the command), so the exit status and signals are theirs."""
import os
import sys

from leveldb_bloom import tool_path


def main():
    try:
        tool = tool_path()
    except FileNotFoundError as error:
        sys.exit(f"leveldb-bloom: {error}")
    os.execv(tool, [tool] + sys.argv[1:])


if __name__ == "__main__":
    main()

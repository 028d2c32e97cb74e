#!/usr/bin/python3
"""Types `leveldb-bloom WORDS<TAB>` into a real interactive bash, in a pseudo-terminal,
with bash-completion loaded and the tool's completion script sourced, and prints what
bash offered. Usage: complete_in_bash.py COMPLETION_SCRIPT TOOL_DIR 'explain --'"""
import os
import pty
import select
import signal
import sys
import tempfile
import time

script, tool_dir, line = sys.argv[1], sys.argv[2], sys.argv[3]
rc = tempfile.NamedTemporaryFile("w", suffix=".bashrc", delete=False)
rc.write(
    "PS1='READY> '\n"
    "source /usr/share/bash-completion/bash_completion\n"
    f"source {script}\n"
    f"PATH={tool_dir}:$PATH\n"
    # One TAB lists every candidate, on one screen, without asking.
    "bind 'set show-all-if-ambiguous on'\n"
    "bind 'set completion-query-items 0'\n"
    "bind 'set page-completions off'\n"
)
rc.close()
env = dict(os.environ, TERM="dumb", INPUTRC="/dev/null", COLUMNS="200", LINES="50")
pid, fd = pty.fork()
if pid == 0:
    os.execvpe("bash", ["bash", "--noprofile", "--rcfile", rc.name, "-i"], env)


def read_until(marker, seconds):
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


read_until(b"READY> ", 10)
os.write(fd, f"leveldb-bloom {line}\t".encode())
offered = read_until(b"READY> ", 10)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
os.unlink(rc.name)
sys.stdout.write(offered.decode("utf-8", "replace"))

#!/usr/bin/python3
"""Usage: with-task-limit.py N command [args...]

Runs the command with at most N tasks (processes and threads) for its user
(RLIMIT_NPROC), as a container's pids limit or a runner's task limit would:
the command itself is one, so N=1 refuses every thread it starts. Root is
exempt from the limit, so as root the command runs as `nobody`; nobody may
not reach the build tree (a clone under /root), so the command and every
file its arguments name (PATH or NAME=PATH) are first copied to a fresh
temporary directory it can read, removed afterwards.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

limit, command = int(sys.argv[1]), sys.argv[2:]


def lower():
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


# LeakSanitizer's exit check (sanitizer build) needs a tracer task of its own.
options = os.environ.get("ASAN_OPTIONS", "")
os.environ["ASAN_OPTIONS"] = (options + ":" if options else "") + "detect_leaks=0"
if os.geteuid() != 0:
    lower()
    os.execv(command[0], command)

# In /tmp itself: lit points TMPDIR at a directory only root may enter.
stage = tempfile.mkdtemp(prefix="fuel-task-limit-", dir="/tmp")
os.chmod(stage, 0o755)


def staged(arg):
    name, sep, path = arg.rpartition("=") if "=" in arg else ("", "", arg)
    if not os.path.isfile(path):
        return arg
    copy = os.path.join(stage, f"{len(os.listdir(stage))}-{os.path.basename(path)}")
    shutil.copy(path, copy)
    os.chmod(copy, 0o755)
    return name + sep + copy


try:
    code = subprocess.run([staged(a) for a in command], preexec_fn=lower).returncode
finally:
    shutil.rmtree(stage)
sys.exit(code if code >= 0 else 128 - code)

#!/usr/bin/python3
"""Usage: with-task-limit.py N command [args...]

Runs the command with at most N tasks (processes and threads) for its user
(RLIMIT_NPROC), as a container's pids limit or a runner's task limit would:
the command itself is one, so N=1 refuses every thread it starts. Root is
exempt from the limit, so as root the command runs as `nobody`.
"""
import os
import resource
import sys

limit = int(sys.argv[1])
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
# LeakSanitizer's exit check (sanitizer build) needs a tracer task of its own.
options = os.environ.get("ASAN_OPTIONS", "")
os.environ["ASAN_OPTIONS"] = (options + ":" if options else "") + "detect_leaks=0"
os.execv(sys.argv[2], sys.argv[2:])

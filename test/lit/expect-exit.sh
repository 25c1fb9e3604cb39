#!/usr/bin/env bash
# Usage: expect-exit.sh N command [args...]
# Runs the command with its output passed through, and exits non-zero unless
# the command's exit code is exactly N (so a crash or a wrong code fails).
expected=$1
shift
"$@"
code=$?
if [ "$code" -ne "$expected" ]; then
  echo "expect-exit: '$*' exited with $code, expected $expected" >&2
  exit 1
fi
exit 0

#!/usr/bin/env bash
# Usage: run-fuzzer.sh FUZZER SECONDS WORKDIR SEEDS
# Runs a libFuzzer target for a bounded time on the seed corpus SEEDS
# (make-fuzz-seeds.sh), which it reads as WORKDIR/seeds and never writes. Fails
# on any crash, sanitizer report, leak or input slower than 10 s.
set -euo pipefail
fuzzer=$(realpath "$1") seconds=$2 work=$3 seeds=$(realpath "$4")

rm -rf "$work" && mkdir -p "$work/corpus"
ln -s "$seeds" "$work/seeds"
echo "run-fuzzer: $(ls "$work/seeds" | wc -l) seed inputs, ${seconds}s"
cd "$work"
# A fixed seed keeps CI runs close to reproducible (coverage that depends
# on timing or addresses still steers them apart; runs by hand may vary it).
status=0
"$fuzzer" -seed="${FUEL_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -max_len=65536 -print_final_stats=1 corpus seeds 2>&1 | tee fuzzer.log || status=$?
[ "$status" -eq 0 ] && exit 0
# The report sits amid thousands of progress lines, which a CI log cut to its
# head and tail drops: repeat it last, with the input that failed.
echo "run-fuzzer: $(basename "$fuzzer") failed (exit code $status); its report:"
grep -v -E '^#[0-9]+[[:space:]]|NEW_FUNC' fuzzer.log |
  sed -n '/ERROR\|ALARM\|^rejected input\|^print -> parse\|deadly signal/,$p' | head -n 60
for input in crash-* leak-* timeout-* oom-* slow-unit-*; do
  [ -f "$input" ] || continue
  echo "run-fuzzer: $input, $(wc -c < "$input") bytes (base64 of its first 3 KiB):"
  head -c 3072 "$input" | base64 -w 100
done
exit "$status"

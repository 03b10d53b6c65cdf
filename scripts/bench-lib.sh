# Sourced by the benchmark scripts: what they share.

# interleave ROUNDS FUNCTION MODE...: runs `FUNCTION MODE` for each mode,
# ROUNDS times, in the given order in odd rounds and reversed in even ones,
# so that no mode always runs right after the same other one (what one
# leaves in the caches, the machine's load of the moment).
interleave() {
  local rounds=$1 run=$2
  shift 2
  local modes=("$@") order r i m
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order=("${modes[@]}"); else
      order=(); for ((i=${#modes[@]}-1; i>=0; i--)); do order+=("${modes[$i]}"); done
    fi
    for m in "${order[@]}"; do
      echo "   round $r: $m" >&2
      "$run" "$m"
    done
  done
}

#!/bin/bash
# A change of the lowering, checked and timed on a GPU in one call: every
# kernel of the new sm_90a library against float64 (check_correctness.py,
# check_softcap.py), the score- and mask-function checks, sanitizers and GPU
# suites of gpu_functions.sh (CHECK_ONLY), then interleaved A/Bs of the
# libraries before and after: the function kernels and the plain ones
# (bench_functions_ab.py), and the plain grid (ab_libraries.py).
#
#   OUT=DIR bench/gpu_lowering_ab.sh ab|checks BEFORE AFTER AFTER_SM80 RUNTIME_SO STEM
#
# "ab" (about 5 minutes): the ALiBi and plain kernels' A/B at D = 128 (or
# the cases in $CASES, bench_functions_ab.py's), the
# function checks on sm_90a, check_correctness.py on the new library (as
# far as it gets in a minute) and memcheck; "checks": the plain grid's A/B
# (D = 64 and 128), check_softcap.py and gpu_functions.sh (sm_80 included).
#
# BEFORE needs the sm_90a bf16 D = 128 plain and function kernels and the
# D = 64 plain ones; AFTER the whole sm_90a library; AFTER_SM80 the sm_80
# function kernels (run as sm_90 cubins). Each step under its own time
# limit; the log goes to $OUT/$STEM-$PART.log as it happens.
set -x
cd "$(dirname "$0")/.."
PART=$1 B=$(realpath "$2") N=$(realpath "$3") N80=$(realpath "$4") RT=$(realpath "$5") STEM=$6
: "${OUT:?set OUT to the results folder}"
export PYTHONPATH=$PWD/python TILED_ATTN_RUNTIME=$RT PYTHONUNBUFFERED=1
exec > >(tee "$OUT/$STEM-$PART.log") 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ "$PART" = ab ]; then
  timeout 170 python3 bench/bench_functions_ab.py --before "$B" --after "$N" --stem "$STEM-functions" \
    --cases "${CASES:-plain,plain-causal,alibi,alibi-causal}" --rounds 5 --out "$OUT"
  timeout 70 python3 bench/bench_functions.py --library "$N" --check-only --out "$OUT/sm90a" \
    > "$OUT/$STEM-check-functions.txt" 2>&1
  tail -3 "$OUT/$STEM-check-functions.txt"
  mkdir -p "$OUT/correctness"
  timeout 60 python3 bench/check_correctness.py --library "$N" --out "$OUT/correctness" \
    --stem "$STEM-correctness" > "$OUT/$STEM-check-all.txt" 2>&1
  grep -v "^PASS\|^SKIP" "$OUT/$STEM-check-all.txt" | tail -6
  grep -c "^PASS" "$OUT/$STEM-check-all.txt"
  timeout 45 compute-sanitizer --tool memcheck python3 bench/functions_smoke.py --library "$N" 2>&1 | tail -3
else
  timeout 100 python3 bench/ab_libraries.py "$B" "$N" --seqs 4096,16384 --causal 0,1 \
    --head-dims 64,128 --dtypes bf16 --rounds 5 > "$OUT/$STEM-plain.txt" 2>&1
  tail -10 "$OUT/$STEM-plain.txt"
  timeout 100 python3 bench/check_softcap.py "$N" --out "$OUT" --stem "$STEM-softcap" \
    > "$OUT/$STEM-check-softcap.txt" 2>&1
  tail -2 "$OUT/$STEM-check-softcap.txt"
  OUT=$OUT CHECK_ONLY=1 timeout 380 bench/gpu_functions.sh "$N" "$N80" "$RT"
fi

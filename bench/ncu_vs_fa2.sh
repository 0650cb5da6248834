#!/usr/bin/env bash
# bench/ncu_vs_fa2.sh S LIB...: bench/ncu_vs_torch.sh S fa2 LIB... (kept for
# the results that name it).
exec "$(dirname "${BASH_SOURCE[0]}")/ncu_vs_torch.sh" "$1" fa2 "${@:2}"

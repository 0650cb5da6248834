// Paged KV caches with pages smaller than a key block (`page-size`): each
// key block is one tile.load that gathers block_n / page_size pages, the
// table read once per page (the last used page's entry for pages past an
// entry's keys, whose table entries point past the cache here). As in
// equivalence-paged.mlir, tiled-attn-run scatters the keys into randomly
// ordered pages, fills what no used key fills with large values and compares
// with its float64 reference; before and after the library's schedules
// (the next block's gather prefetched through the table, and TMA's
// lowering's rings, which take a gathered load).

// DEFINE: %{shapes} = 1x1,1x300,3x100,5x129,64x257,17x17

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=64 page-size=16 variant=none_seqused_paged" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" -o %t.nones.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.nones.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=2 | FileCheck %s
// Pages of 8 under blocks of 64 (eight pages a block).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=64 page-size=8 variant=none_seqused_paged" -o %t.p8.mlir
// RUN: tiled-attn-opt %t.p8.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" -o %t.p8s.mlir
// RUN: tiled-attn-run %t.p8.mlir --compare-with=%t.p8s.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=3 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=32 block-n=64 page-size=32 variant=bottom_right_lse_seqused_paged" -o %t.br.mlir
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="exp2=1 mask-split=1 stages=3 defer-pv=1" -o %t.brs.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.brs.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=4 --heads=2 | FileCheck %s --check-prefixes=CHECK,LSE

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=64 page-size=16 variant=none_lse_split_seqused_paged" -o %t.split.mlir
// RUN: tiled-attn-opt %t.split.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.splits.mlir
// RUN: tiled-attn-run %t.split.mlir --compare-with=%t.splits.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=1 --splits=3 | FileCheck %s --check-prefixes=CHECK,LSE

// vLLM's form (varlen queries, each sequence its row of the table).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=64 page-size=16 variant=bottom_right_lse_varlen_seqused_paged" -o %t.varlen.mlir
// RUN: tiled-attn-opt %t.varlen.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.varlens.mlir
// RUN: tiled-attn-run %t.varlen.mlir --compare-with=%t.varlens.mlir --equivalence-tolerance=2e-3 --shapes=1x1,1x300,3x100,5x129,64x257,17x17,0x5,4x0 --heads=4 --kv-heads=2 | FileCheck %s --check-prefix=VARLEN
// VARLEN: varlen H=4 Hkv=2 {{.*}} causal=bottom_right: {{.*}} PASS

// Mutation: every group reading the first group's page fails.
// RUN: sed -e 's/gather(\(%[0-9]*\), %[0-9]*, %[0-9]*, %[0-9]*)/gather(\1, \1, \1, \1)/' %t.none.mlir > %t.mut1.mlir
// RUN: not tiled-attn-run %t.mut1.mlir --shapes=3x100 --batch=3 --heads=2 | FileCheck %s --check-prefix=MUTANT

// The generator refuses a page size that does not divide block_n, and
// tiled-attn-run one the kernel does not gather.
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-n=64 page-size=24 variant=none_seqused_paged" 2>&1 | FileCheck %s --check-prefix=BADPAGE
// BADPAGE: a page size of 24 needs a paged kernel and a multiple of 8 that divides block_n (64) and is smaller
// RUN: not tiled-attn-run %t.none.mlir --shapes=3x100 --page-size=64 2>&1 | FileCheck %s --check-prefix=PAGE
// PAGE: --page-size must be the 16 rows the kernel gathers its key blocks in, got 64

// LSE: lse_err=
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
// MUTANT: FAIL
module {}

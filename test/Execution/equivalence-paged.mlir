// A paged KV cache (`paged`, vLLM's and FlashAttention's block_table): k and
// v are the pages of a [num_pages, H_kv, page_size, D] cache laid out as
// vLLM's [num_pages, page_size, H_kv, D], batch entry b's keys i *
// page_size ... in page block_table[b, i]. tiled-attn-run scatters the keys
// into randomly ordered pages (two more that no entry uses), fills what no
// used key fills with large values and points the table's entries past the
// used pages past the cache, so a kernel that reads a wrong page, a wrong
// block of a page or a key past an entry's length shows. The lengths are
// seqused's (S_k, 0, 1, random). Pages of one block and of several; GQA;
// bottom-right causal; split-KV's chunks over the pages; before and after
// the library's schedules (prefetch of the next block through the table).

// DEFINE: %{shapes} = 1x1,1x300,3x100,5x129,64x257,17x17

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_seqused_paged" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" -o %t.nones.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.nones.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=2 --page-size=16 | FileCheck %s
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.nones.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=2 --page-size=48 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=32 block-n=32 variant=bottom_right_lse_seqused_paged" -o %t.br.mlir
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.brs.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.brs.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=4 --heads=2 --page-size=128 | FileCheck %s --check-prefixes=CHECK,LSE

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_lse_split_seqused_paged" -o %t.split.mlir
// RUN: tiled-attn-opt %t.split.mlir --tile-schedule="exp2=1 mask-split=1 stages=3 defer-pv=1" -o %t.splits.mlir
// RUN: tiled-attn-run %t.split.mlir --compare-with=%t.splits.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=1 --splits=3 --page-size=32 | FileCheck %s --check-prefixes=CHECK,LSE

// vLLM's form: packed query sequences (varlen) against paged caches, each
// sequence its row of the table and its seqused_k keys (cu_seqlens_k is not
// read), empty sequences included; a mutation reading row 0 for every
// sequence fails.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=bottom_right_lse_varlen_seqused_paged" -o %t.varlen.mlir
// RUN: tiled-attn-opt %t.varlen.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.varlens.mlir
// RUN: tiled-attn-run %t.varlen.mlir --compare-with=%t.varlens.mlir --equivalence-tolerance=2e-3 --shapes=1x1,1x300,3x100,5x129,64x257,17x17,0x5,4x0 --heads=4 --kv-heads=2 --page-size=48 | FileCheck %s --check-prefix=VARLEN
// RUN: sed -e 's/tile.read %arg9\[%2, /tile.read %arg9[%c0, /' %t.varlen.mlir > %t.mut3.mlir
// RUN: not tiled-attn-run %t.mut3.mlir --shapes=1x300,3x100,5x129 --heads=4 --kv-heads=2 | FileCheck %s --check-prefix=MUTANT
// VARLEN: varlen H=4 Hkv=2 {{.*}} causal=bottom_right: {{.*}} PASS

// Mutations: the table ignored (each entry's keys read from page b), or the
// block within the page ignored, fail.
// RUN: sed -e 's/tile.read %arg6\[%2, \(%[0-9]*\)\] : <?x?xi32>/tile.read %arg6[%2, %c0] : <?x?xi32>/' %t.none.mlir > %t.mut1.mlir
// RUN: not tiled-attn-run %t.mut1.mlir --shapes=3x100 --batch=3 --heads=2 --page-size=16 | FileCheck %s --check-prefix=MUTANT
// RUN: sed -e 's/= arith.remui \(%[0-9]*\), \(%[0-9]*\) : index/= arith.remui %c0, \2 : index/' %t.none.mlir > %t.mut2.mlir
// RUN: not tiled-attn-run %t.mut2.mlir --shapes=3x100 --batch=3 --heads=2 --page-size=48 | FileCheck %s --check-prefix=MUTANT

// The generator refuses a paged kernel without seqused, and a page size
// that is no multiple of block_n is tiled-attn-run's error.
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=none_paged" 2>&1 | FileCheck %s --check-prefix=NOUSED
// NOUSED: paged (a paged KV cache) needs seqused
// RUN: not tiled-attn-run %t.none.mlir --shapes=3x100 --page-size=24 2>&1 | FileCheck %s --check-prefix=PAGE
// PAGE: --page-size must be a positive multiple of the kernel's block_n (16), got 24

// LSE: lse_err=
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
// MUTANT: FAIL
module {}

// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 causal=top_left block-m=64 block-n=32" | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward="head-dim=64 head-dim-v=32 causal=bottom_right name=bwd" | FileCheck %s --check-prefix=BR
// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward | FileCheck %s --check-prefix=NONE
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="dtype=f32" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="causal=diagonal" 2>&1 | FileCheck %s --check-prefix=CAUSAL
// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward="causal=window softcap=1" | FileCheck %s --check-prefix=WINDOW
// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward="causal=window varlen=1" | FileCheck %s --check-prefix=VARWIN
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="block-m=24" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="name=taken" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: cat %repo/kernels/functions/alibi.mlir %repo/kernels/functions/document.mlir \
// RUN:   | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 causal=top_left functions=alibi,document" | FileCheck %s --check-prefix=FUNCTIONS
// RUN: tiled-attn-opt %s --tile-generate-sdpa-backward="functions=declared" | FileCheck %s --check-prefix=DECLARED
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="functions=nope" 2>&1 | FileCheck %s --check-prefix=NO-FUNCTION
// RUN: cat %repo/kernels/functions/document.mlir %repo/kernels/functions/prefix_lm.mlir \
// RUN:   | not tiled-attn-opt --tile-generate-sdpa-backward="functions=document,prefix_lm" 2>&1 | FileCheck %s --check-prefix=TWO-MASKS
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="functions=sine" 2>&1 | FileCheck %s --check-prefix=SINE
// RUN: not tiled-attn-opt %s --tile-generate-sdpa-backward="functions=wrong" 2>&1 | FileCheck %s --check-prefix=WRONG-GRAD

// The backward pass as three kernels. The preprocess: delta = rowsum(dO *
// O) of a block of query rows, and those rows of dQ's f32 accumulator set
// to zero.

// CHECK-LABEL: func.func @sdpa_bwd_preprocess(
// CHECK-SAME: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<o>}
// CHECK-SAME: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<do>}
// CHECK-SAME: %[[DELTA:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<delta>}
// CHECK-SAME: %[[ACC:[^:]*]]: !tile.view<?x?x?x64xf32> {tile.arg = #tile.arg<dq_accum>})
// CHECK: %[[PROD:.*]] = arith.mulf {{.*}} : tensor<64x64xf32>
// CHECK: %[[ROWS:.*]] = tile.reduce sum %[[PROD]] along 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK: tile.store %[[ROWS]], %[[DELTA]]
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// CHECK: tile.store %[[ZERO]], %[[ACC]]

// The main kernel: a program per block of 32 keys of a K/V head; over the
// query heads of its group, and the query blocks from the first that sees
// the keys (top-left: key0 / 64) to the last, the scores transposed (keys
// as rows), dV and dK carried, dS transposed for dQ's part, which is added
// into the accumulator. Masks from the block's positions: keys past S_k,
// queries past S_q, and the causal mask.

// CHECK-LABEL: func.func @sdpa_bwd(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<q>}
// CHECK-SAME: %[[K:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<k>}
// CHECK-SAME: %[[V:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<v>}
// CHECK-SAME: %[[DO:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<do>}
// CHECK-SAME: %[[LSEV:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>}
// CHECK-SAME: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<delta>}
// CHECK-SAME: %[[ACC2:[^:]*]]: !tile.view<?x?x?x64xf32> {tile.arg = #tile.arg<dq_accum>}
// CHECK-SAME: %[[DK:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<dk>}
// CHECK-SAME: %[[DV:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<dv>}
// CHECK-SAME: %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>})
// CHECK: %[[N:.*]] = tile.block_id x
// CHECK: %[[HKV:.*]] = tile.block_id y
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: %[[KB:.*]] = tile.load %[[K]][{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<32x64xbf16>
// (K_n once: Sᵀ's lhs and dQ's rhs.)
// CHECK-NOT: tile.load %[[K]][
// CHECK: %[[VB:.*]] = tile.load %[[V]][{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<32x64xbf16>
// CHECK: %[[KEY0:.*]] = arith.muli %[[N]], %c32
// CHECK: %[[QBLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: %[[LASTKEY:.*]] = arith.addi %[[KEY0]], %c31
// CHECK: %[[FROMQ:.*]] = arith.maxsi %[[KEY0]], %c0
// CHECK: %[[FROMB:.*]] = arith.divui %[[FROMQ]], %c64
// CHECK: %[[FIRST:.*]] = arith.minui %[[FROMB]], %[[QBLOCKS]]
// A program whose keys lie past S_k visits no query block: end = first.
// CHECK: %[[KEYSLEFT:.*]] = arith.cmpi ult, %[[KEY0]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.select %[[KEYSLEFT]], %[[QBLOCKS]], %[[FIRST]] : index
// The query blocks that see every key of the block, all in bounds (from
// ceil((key0 + 31) / 64), while the keys lie inside S_k, to S_q / 64) take
// no mask: three loops, masked, unmasked, masked.
// CHECK: %[[ALLQ:.*]] = arith.maxsi %[[LASTKEY]], %c0
// CHECK: %[[FROM:.*]] = arith.ceildivui %[[ALLQ]], %c64
// CHECK: %[[FROMEND:.*]] = arith.minui %[[FROM]], %[[END]]
// CHECK: %[[FULLFROM:.*]] = arith.maxui %[[FIRST]], %[[FROMEND]] : index
// CHECK: %[[KEYSFULL:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK: %[[FULLTO:.*]] = arith.select %[[KEYSFULL]], %{{.*}}, %[[FULLFROM]] : index
// CHECK: %[[GRADS:.*]]:2 = scf.for %[[G:.*]] = %c0 to %[[GROUP]] step %c1
// CHECK: %[[EDGE:.*]]:2 = scf.for %[[M:.*]] = %[[FIRST]] to %[[FULLFROM]] step %c1 iter_args(%[[DKACC:.*]] = %{{.*}}, %[[DVACC:.*]] = %{{.*}}) -> (tensor<32x64xf32>, tensor<32x64xf32>)
// Q_m and dO_m are loaded once each (their transposes are views of them).
// CHECK: %[[QB:.*]] = tile.load %[[Q]][{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<64x64xbf16>
// CHECK: %[[DOB:.*]] = tile.load %[[DO]][{{.*}}] pad(0.000000e+00) :
// CHECK-NOT: tile.load
// The rows' log-sum-exps gathered at the queries' positions (-inf past
// S_q), -inf made +inf.
// CHECK: %[[QPOS:.*]] = tile.iota offset(%{{.*}}) : tensor<64xi32>
// CHECK: %[[LSE:.*]] = tile.gather %[[LSEV]][%{{.*}}, %{{.*}}, %[[QPOS]]] pad(0xFFF0000000000000) :
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[LSE]] : tensor<64xi1>, tensor<64xf32>
// CHECK: %[[QT:.*]] = tile.transpose %[[QB]] : tensor<64x64xbf16> -> tensor<64x64xbf16>
// CHECK: %[[ST:.*]] = tile.mma %[[KB]], %[[QT]], %{{.*}} : tensor<32x64xbf16>, tensor<64x64xbf16> -> tensor<32x64xf32>
// CHECK: %[[EXP:.*]] = math.exp
// The masked steps build the positions (not held through the loops).
// CHECK: %[[KEYROWS:.*]] = tile.iota offset(%[[KEY0]]) : tensor<32x64xi32>
// CHECK: %[[KEYSIN:.*]] = arith.cmpi slt, %[[KEYROWS]], %{{.*}} : tensor<32x64xi32>
// CHECK: %[[QCOLS:.*]] = tile.iota dim 1 offset(%{{.*}}) : tensor<32x64xi32>
// CHECK: arith.cmpi slt, %[[QCOLS]], %{{.*}} : tensor<32x64xi32>
// CHECK: %[[DIAG:.*]] = arith.subi %[[KEYROWS]], %[[QCOLS]] : tensor<32x64xi32>
// CHECK: arith.cmpi sle, %[[DIAG]], %{{.*}} : tensor<32x64xi32>
// CHECK: %[[PT:.*]] = arith.select %{{.*}}, %[[EXP]], %{{.*}} : tensor<32x64xi1>, tensor<32x64xf32>
// CHECK: %[[PT16:.*]] = arith.truncf %[[PT]] : tensor<32x64xf32> to tensor<32x64xbf16>
// CHECK: %[[NEWDV:.*]] = tile.mma %[[PT16]], %[[DOB]], %[[DVACC]]
// CHECK: %[[DOT:.*]] = tile.transpose %[[DOB]]
// CHECK: %[[DPT:.*]] = tile.mma %[[VB]], %[[DOT]], %{{.*}} : tensor<32x64xbf16>, tensor<64x64xbf16> -> tensor<32x64xf32>
// CHECK: %[[DST:.*]] = arith.mulf %[[PT]], %{{.*}} : tensor<32x64xf32>
// CHECK: %[[DS16:.*]] = arith.truncf %[[DST]]
// CHECK: %[[NEWDK:.*]] = tile.mma %[[DS16]], %[[QB]], %[[DKACC]]
// CHECK: %[[DS:.*]] = tile.transpose %[[DS16]] : tensor<32x64xbf16> -> tensor<64x32xbf16>
// CHECK: %[[DQ:.*]] = tile.mma %[[DS]], %[[KB]], %{{.*}} : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
// CHECK: tile.store %[[DQ]], %[[ACC2]][{{.*}}] add : tensor<64x64xf32>
// CHECK: scf.yield %[[NEWDK]], %[[NEWDV]]
// CHECK: %[[INNER:.*]]:2 = scf.for %{{.*}} = %[[FULLFROM]] to %[[FULLTO]] step %c1 iter_args(%{{.*}} = %[[EDGE]]#0, %{{.*}} = %[[EDGE]]#1)
// The unmasked steps' rows lie inside S_q: their gathers check no bounds.
// CHECK: tile.gather %[[LSEV]][%{{.*}}, %{{.*}}, %{{.*}}] pad(0xFFF0000000000000) in_bounds
// CHECK-NOT: arith.cmpi
// CHECK: tile.gather %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] pad(0.000000e+00) in_bounds
// CHECK-NOT: arith.cmpi
// CHECK: tile.store %{{.*}} add
// CHECK: scf.for %{{.*}} = %[[FULLTO]] to %[[END]] step %c1 iter_args(%{{.*}} = %[[INNER]]#0, %{{.*}} = %[[INNER]]#1)
// CHECK: arith.cmpi sle
// CHECK: %[[SCALED:.*]] = arith.mulf %[[GRADS]]#0, %{{.*}} : tensor<32x64xf32>
// CHECK: %[[DKOUT:.*]] = arith.truncf %[[SCALED]]
// CHECK: tile.store %[[DKOUT]], %[[DK]]
// CHECK: %[[DVOUT:.*]] = arith.truncf %[[GRADS]]#1
// CHECK: tile.store %[[DVOUT]], %[[DV]]

// The postprocess: dQ = scale * accumulator, in the element type.

// CHECK-LABEL: func.func @sdpa_bwd_postprocess(
// CHECK-SAME: !tile.view<?x?x?x64xf32> {tile.arg = #tile.arg<dq_accum>}
// CHECK-SAME: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<dq>}
// CHECK-SAME: f32 {tile.arg = #tile.arg<scale>}
// CHECK: arith.mulf
// CHECK: arith.truncf {{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>

// The deterministic mode's dq: per query block over the key blocks it sees
// (masked edges around an unmasked middle), S = Q Kᵀ, P, dP = dO Vᵀ, dS,
// and dQ += dS K in registers; dq written once, by a plain store.
// CHECK-LABEL: func.func @sdpa_bwd_dq(
// CHECK-SAME: %[[DQQ:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<q>}
// CHECK-SAME: %[[DQOUT:[^:]*]]: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<dq>}
// CHECK: %[[QB:.*]] = tile.load %[[DQQ]]
// CHECK: %[[DOB:.*]] = tile.load
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[KB:.*]] = tile.load {{.*}} : <?x?x?x64xbf16> -> tensor<32x64xbf16>
// CHECK: %[[KT:.*]] = tile.transpose %[[KB]] : tensor<32x64xbf16> -> tensor<64x32xbf16>
// CHECK: tile.mma %[[QB]], %[[KT]]
// CHECK: math.exp
// CHECK: tile.mma %[[DOB]]
// CHECK-NOT: tile.store
// CHECK: tile.mma %{{.*}}, %[[KB]], %{{.*}} : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
// CHECK-NOT: tile.store
// CHECK: scf.for
// CHECK-NOT: tile.store
// CHECK: tile.store %{{.*}}, %[[DQOUT]][%{{[^]]*}}] : tensor<64x64xbf16>
// CHECK-NEXT: return

// Bottom-right: queries shifted by S_k - S_q, so the first query block is
// the one holding key0 - (S_k - S_q); V, dO and dV of head dim 32.
// BR-LABEL: func.func @bwd_preprocess(
// BR-SAME: !tile.view<?x?x?x32xf16> {tile.arg = #tile.arg<o>}
// BR-LABEL: func.func @bwd(
// BR-SAME: !tile.view<?x?x?x32xf16> {tile.arg = #tile.arg<dv>}
// BR: %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// BR: %[[FROM:.*]] = arith.subi %{{.*}}, %[[SHIFT]] : index
// BR: arith.maxsi %[[FROM]], %c0
// BR: tile.mma {{.*}} : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
// BR-LABEL: func.func @bwd_postprocess(

// No mask: every query block, no causal comparison.
// NONE-LABEL: func.func @sdpa_bwd(
// NONE: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// NONE-NOT: arith.cmpi sle
// NONE-LABEL: func.func @sdpa_bwd_postprocess(

// A window: its band's two bounds and the softcap as arguments; the band's
// two comparisons of j - i in the masked steps; t = tanh(scale / softcap *
// s), scores softcap * t, and dS times 1 - t^2.
// WINDOW-LABEL: func.func @sdpa_bwd(
// WINDOW-SAME: %[[LO:[^:]*]]: index {tile.arg = #tile.arg<window_lo>}, %[[HI:[^:]*]]: index {tile.arg = #tile.arg<window_hi>}, %[[CAP:[^:]*]]: f32 {tile.arg = #tile.arg<softcap>})
// WINDOW: arith.divf %{{.*}}, %[[CAP]] : f32
// WINDOW: %[[T:.*]] = math.tanh
// WINDOW: %[[DIAG:.*]] = arith.subi %{{.*}}, %{{.*}} : tensor<64x64xi32>
// WINDOW: arith.cmpi sle, %[[DIAG]]
// WINDOW: arith.cmpi sge, %[[DIAG]]
// WINDOW: %[[TT:.*]] = arith.mulf %[[T]], %[[T]] : tensor<64x64xf32>
// WINDOW: arith.subf %{{.*}}, %[[TT]] : tensor<64x64xf32>

// DTYPE: error: tile-generate-sdpa-backward: dtype must be f16 or bf16, got 'f32'
// CAUSAL: error: tile-generate-sdpa-backward: causal must be none, top_left, bottom_right or window, got 'diagonal'
// BLOCK: error: block_m and block_n must be multiples of 16 in [16, 256], got 24 and 64
// NAME: error: tile-generate-sdpa-backward: the module already has a symbol named 'taken'

func.func private @taken()

// Score and mask functions (the forward's): the main and dq kernels take
// their captured inputs after the other arguments, once per name; the
// main kernel applies them to its transposed scores (keys as rows), the
// score function's gradient (derived from its body) to take dS back, and
// the mask function in every step (no unmasked loop: one loop of masked
// steps per heads' iteration, the other two empty).
// FUNCTIONS: func.func @alibi_grad(
// FUNCTIONS-LABEL: func.func @sdpa_bwd(
// FUNCTIONS-SAME: %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>}, %[[SLOPES:[^:]*]]: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, %[[DOCS:[^:]*]]: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
// FUNCTIONS: %[[ENTRY:.*]] = tile.block_id z
// FUNCTIONS: %[[KEY0:.*]] = arith.muli %{{.*}}, %c64 : index
// FUNCTIONS: scf.for
// FUNCTIONS: %[[Q0:.*]] = arith.muli %{{.*}}, %c64{{.*}} : index
// FUNCTIONS: %[[RAW:.*]] = arith.mulf %{{.*}} : tensor<64x64xf32>
// FUNCTIONS: tile.apply @alibi score(%[[RAW]] : tensor<64x64xf32>) at(%[[ENTRY]], %{{.*}}, %[[Q0]], %[[KEY0]]) captures(%[[SLOPES]] : !tile.view<?xf32>) {transposed}
// FUNCTIONS: tile.apply @document at(%[[ENTRY]], %{{.*}}, %[[Q0]], %[[KEY0]]) captures(%[[DOCS]] : !tile.view<?x?xi32>) {transposed} : tensor<64x64xi1>
// FUNCTIONS: tile.apply @alibi_grad score(%[[RAW]] : tensor<64x64xf32>) at(%[[ENTRY]], %{{.*}}, %[[Q0]], %[[KEY0]]) captures(%[[SLOPES]], %{{.*}} : !tile.view<?xf32>, f32) {transposed}
// FUNCTIONS-LABEL: func.func @sdpa_bwd_dq(
// FUNCTIONS-SAME: %{{[^:]*}}: f32 {tile.arg = #tile.arg<scale>}, %{{[^:]*}}: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, %{{[^:]*}}: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
// FUNCTIONS: tile.apply @alibi score
// FUNCTIONS-NOT: transposed
// FUNCTIONS-SAME: : tensor<64x64xf32>

// A gradient declared beside its function is the one used.
// DECLARED-NOT: func.func @declared_grad_grad
// DECLARED: tile.apply @declared_grad score
func.func @declared(%score: f32, %b: index, %h: index, %q: index, %kv: index) -> f32 {
  %r = math.sin %score : f32
  return %r : f32
}
func.func @declared_grad(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                         %grad: f32) -> f32 {
  %c = math.cos %score : f32
  %r = arith.mulf %grad, %c : f32
  return %r : f32
}

// NO-FUNCTION: error: no function 'nope' in the module (a score or mask function)
// TWO-MASKS: error: two mask functions: 'document' and 'prefix_lm' (a score function gives an f32, a mask function an i1)
// SINE: error: tile-differentiate-score: no derivative for 'math.sin' of a value that depends on the score; declare the function's gradient beside it instead
func.func @sine(%score: f32, %b: index, %h: index, %q: index, %kv: index) -> f32 {
  %r = math.sin %score : f32
  return %r : f32
}
// WRONG-GRAD: error: the gradient 'wrong_grad' of 'wrong' must be of type '(f32, index, index, index, index, f32) -> f32' (wrong's arguments and %grad), got '(f32, index, index, index, index) -> f32'
func.func @wrong(%score: f32, %b: index, %h: index, %q: index, %kv: index) -> f32 {
  return %score : f32
}
func.func @wrong_grad(%score: f32, %b: index, %h: index, %q: index, %kv: index) -> f32 {
  return %score : f32
}

// A window of a varlen batch: the main kernel takes window_align after the
// offsets and shifts the band by the sequence's S_k - S_q times it (1:
// bottom-right, 0: as given), before clamping it to [-S_q, S_k].
// VARWIN-LABEL: func.func @sdpa_bwd(
// VARWIN-SAME: %[[LO:[^:]*]]: index {tile.arg = #tile.arg<window_lo>}, %[[HI:[^:]*]]: index {tile.arg = #tile.arg<window_hi>}, %{{[^:]*}}: !tile.view<?xi32> {tile.arg = #tile.arg<cu_seqlens_q>}, %{{[^:]*}}: !tile.view<?xi32> {tile.arg = #tile.arg<cu_seqlens_k>}, %[[ALIGN:[^:]*]]: index {tile.arg = #tile.arg<window_align>})
// VARWIN: %[[SQ:.*]] = tile.dim %{{.*}}[2]
// VARWIN: %[[SK:.*]] = tile.dim %{{.*}}[2]
// VARWIN: %[[NEGQ:.*]] = arith.subi %c0, %[[SQ]] : index
// VARWIN: %[[SHIFTS:.*]] = arith.subi %[[SK]], %[[SQ]] : index
// VARWIN: %[[SHIFT:.*]] = arith.muli %[[ALIGN]], %[[SHIFTS]] : index
// VARWIN: %[[SLO:.*]] = arith.addi %[[LO]], %[[SHIFT]] : index
// VARWIN: %[[SHI:.*]] = arith.addi %[[HI]], %[[SHIFT]] : index
// VARWIN: arith.maxsi %[[SLO]], %[[NEGQ]] : index
// VARWIN: arith.maxsi %[[SHI]], %[[NEGQ]] : index

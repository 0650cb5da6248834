// RUN: tiled-attn-opt %s --tile-generate-sdpa | FileCheck %s --check-prefix=DEFAULT
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 dtype=bf16 variant=top_left block-m=128 block-n=64" | FileCheck %s --check-prefix=CAUSAL
// RUN: tiled-attn-opt %s --tile-generate-sdpa="variant=bottom_right" | FileCheck %s --check-prefix=BR
// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=attn block-n=32" | FileCheck %s --check-prefix=NAME
// RUN: tiled-attn-opt %s --tile-generate-sdpa="variant=window block-m=128 block-n=64" | FileCheck %s --check-prefix=WINDOW
// RUN: tiled-attn-opt %s --tile-generate-sdpa="variant=window_softcap_lse" | FileCheck %s --check-prefix=LSE
// RUN: tiled-attn-opt %s --tile-generate-sdpa="variant=window_lse_varlen" | FileCheck %s --check-prefix=VARLEN
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=192 head-dim-v=128 dtype=bf16" | FileCheck %s --check-prefix=MLA

// The input is an empty module: the pass appends the kernel to it.

//===----------------------------------------------------------------------===//
// Default: f16, D = 64, block_m = block_n = 64, no causal mask.
//===----------------------------------------------------------------------===//

// DEFAULT-LABEL: func.func @sdpa_fwd(
// DEFAULT-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %[[O:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>})
// DEFAULT-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}
// DEFAULT-DAG: %[[C0:.*]] = arith.constant 0 : index
// DEFAULT-DAG: %[[C1:.*]] = arith.constant 1 : index
// DEFAULT: %[[M_BLK:.*]] = tile.block_id x
// DEFAULT: %[[HEAD:.*]] = tile.block_id y
// DEFAULT: %[[BATCH:.*]] = tile.block_id z
// DEFAULT: %[[SEQ_K:.*]] = tile.dim %[[K]][2]
// DEFAULT: %[[QT:.*]] = tile.load %[[Q]][%[[BATCH]], %[[HEAD]], %[[M_BLK]], %[[C0]]] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16>
// Grouped KV heads: query head h reads K/V head h / (H_q / H_kv), computed
// after Q's load is issued, and only when the head counts differ.
// DEFAULT-NEXT: %[[HQ:.*]] = tile.dim %[[Q]][1]
// DEFAULT-NEXT: %[[HKV:.*]] = tile.dim %[[K]][1]
// DEFAULT-NEXT: %[[GROUPED:.*]] = arith.cmpi ne, %[[HQ]], %[[HKV]] : index
// DEFAULT-NEXT: %[[KVHEAD:.*]] = scf.if %[[GROUPED]] -> (index) {
// DEFAULT-NEXT: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HKV]] : index
// DEFAULT-NEXT: %[[KVH:.*]] = arith.divui %[[HEAD]], %[[GROUP]] : index
// DEFAULT-NEXT: scf.yield %[[KVH]] : index
// DEFAULT-NEXT: } else {
// DEFAULT-NEXT: scf.yield %[[HEAD]] : index
// DEFAULT: %[[NUM_BLOCKS:.*]] = arith.ceildivui %[[SEQ_K]], %[[BN:.*]] : index
// DEFAULT-NOT: arith.subi
// DEFAULT: scf.for %[[J:.*]] = %[[C0]] to %[[NUM_BLOCKS]] step %[[C1]]
// DEFAULT: %[[KT:.*]] = tile.load %[[K]][%[[BATCH]], %[[KVHEAD]], %[[J]], %[[C0]]] pad(0.000000e+00) transpose : <?x?x?x64xf16> -> tensor<64x64xf16>
// V is loaded together with K.
// DEFAULT: %[[VB:.*]] = tile.load %[[V]][%[[BATCH]], %[[KVHEAD]], %[[J]], %[[C0]]] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16>
// DEFAULT: %[[S:.*]] = tile.mma %[[QT]], %[[KT]], %{{.*}} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
// DEFAULT: %[[COL:.*]] = arith.muli %[[J]], %[[BN]] : index
// DEFAULT: %[[COLS_IN:.*]] = tile.bounds_mask offsets(%[[COL]]) limits(%[[SEQ_K]]) : tensor<64xi1>
// DEFAULT: %[[IN:.*]] = tile.broadcast %[[COLS_IN]] along 0 : tensor<64xi1> -> tensor<64x64xi1>
// DEFAULT-NOT: tile.causal_mask
// DEFAULT: %[[MASKED:.*]] = arith.select %[[IN]], %[[S]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// DEFAULT: %{{.*}}, %{{.*}}, %[[PROBS:.*]], %{{.*}} = tile.online_softmax %[[MASKED]], %{{.*}}, %{{.*}} scale(%[[SCALE]]) : tensor<64x64xf32>, tensor<64xf32>
// DEFAULT: %[[P:.*]] = arith.truncf %[[PROBS]] : tensor<64x64xf32> to tensor<64x64xf16>
// DEFAULT: tile.mma %[[P]], %[[VB]], %{{.*}} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
// DEFAULT: scf.yield
// DEFAULT: tile.store %{{.*}}, %[[O]][%[[BATCH]], %[[HEAD]], %[[M_BLK]], %[[C0]]] : tensor<64x64xf16>, <?x?x?x64xf16>
// DEFAULT-NEXT: return

//===----------------------------------------------------------------------===//
// bf16, D = 128, block_m = 128, block_n = 64, causal (top-left).
//===----------------------------------------------------------------------===//

// CAUSAL-LABEL: func.func @sdpa_fwd(
// CAUSAL-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>}, %[[O:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>})
// CAUSAL-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 128, element_type = bf16, causal = top_left, block_m = 128, block_n = 64>}
// CAUSAL-DAG: %[[C0:.*]] = arith.constant 0 : index
// CAUSAL-DAG: %[[C128:.*]] = arith.constant 128 : index
// CAUSAL-DAG: %[[C64:.*]] = arith.constant 64 : index
// CAUSAL: %[[M_BLK:.*]] = tile.block_id x
// CAUSAL: %[[SEQ_K:.*]] = tile.dim %[[K]][2]
// CAUSAL: %[[QT:.*]] = tile.load %[[Q]][{{.*}}] pad(0.000000e+00) : <?x?x?x128xbf16> -> tensor<128x128xbf16>
// CAUSAL: %[[NUM_BLOCKS:.*]] = arith.ceildivui %[[SEQ_K]], %[[C64]] : index
// Top-left: the first query row of the block is m * block_m, unshifted.
// CAUSAL: %[[ROW:.*]] = arith.muli %[[M_BLK]], %[[C128]] : index
// CAUSAL-NOT: arith.subi
// CAUSAL: scf.for %[[J:.*]] = %[[C0]] to %[[NUM_BLOCKS]] step
// K is loaded as a 128x64 tile of Kᵀ (a 64x128 block in memory).
// CAUSAL: %[[KT:.*]] = tile.load %[[K]][%{{.*}}, %{{.*}}, %[[J]], %[[C0]]] pad(0.000000e+00) transpose : <?x?x?x128xbf16> -> tensor<128x64xbf16>
// V is loaded together with K.
// CAUSAL: %[[VB:.*]] = tile.load %[[V]][%{{.*}}, %{{.*}}, %[[J]], %[[C0]]] pad(0.000000e+00) : <?x?x?x128xbf16> -> tensor<64x128xbf16>
// CAUSAL: %[[S:.*]] = tile.mma %[[QT]], %[[KT]], %{{.*}} : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
// CAUSAL: %[[COL:.*]] = arith.muli %[[J]], %[[C64]] : index
// CAUSAL: %[[COLS_IN:.*]] = tile.bounds_mask offsets(%[[COL]]) limits(%[[SEQ_K]]) : tensor<64xi1>
// CAUSAL: %[[IN:.*]] = tile.broadcast %[[COLS_IN]] along 0 : tensor<64xi1> -> tensor<128x64xi1>
// CAUSAL: %[[VIS:.*]] = tile.causal_mask %[[ROW]], %[[COL]] : tensor<128x64xi1>
// CAUSAL: %[[KEEP:.*]] = arith.andi %[[IN]], %[[VIS]] : tensor<128x64xi1>
// CAUSAL: %[[MASKED:.*]] = arith.select %[[KEEP]], %[[S]], %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CAUSAL: %{{.*}}, %{{.*}}, %[[PROBS:.*]], %{{.*}} = tile.online_softmax %[[MASKED]], %{{.*}}, %{{.*}} scale(%[[SCALE]]) : tensor<128x64xf32>, tensor<128xf32>
// CAUSAL: %[[P:.*]] = arith.truncf %[[PROBS]] : tensor<128x64xf32> to tensor<128x64xbf16>
// CAUSAL: tile.mma %[[P]], %[[VB]], %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
// CAUSAL: tile.store %{{.*}}, %[[O]][{{.*}}] : tensor<128x128xbf16>, <?x?x?x128xbf16>

//===----------------------------------------------------------------------===//
// Causal, bottom-right: query rows are shifted by S_k - S_q.
//===----------------------------------------------------------------------===//

// BR-LABEL: func.func @sdpa_fwd(
// BR-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %{{[^:]*}}: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %{{[^:]*}}: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %{{[^:]*}}: f32 {tile.arg = #tile.arg<scale>})
// BR-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = bottom_right, block_m = 64, block_n = 64>}
// BR: %[[M_BLK:.*]] = tile.block_id x
// BR: %[[SEQ_Q:.*]] = tile.dim %[[Q]][2]
// BR: %[[SEQ_K:.*]] = tile.dim %[[K]][2]
// BR: %[[ROW0:.*]] = arith.muli %[[M_BLK]], %{{.*}} : index
// BR: %[[SHIFT:.*]] = arith.subi %[[SEQ_K]], %[[SEQ_Q]] : index
// BR: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[SHIFT]] : index
// BR: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// BR: %[[COL:.*]] = arith.muli %[[J]], %{{.*}} : index
// BR: %[[COLS_IN:.*]] = tile.bounds_mask offsets(%[[COL]]) limits(%[[SEQ_K]]) : tensor<64xi1>
// BR: %[[IN:.*]] = tile.broadcast %[[COLS_IN]] along 0 : tensor<64xi1> -> tensor<64x64xi1>
// BR: %[[VIS:.*]] = tile.causal_mask %[[ROW]], %[[COL]] : tensor<64x64xi1>
// BR: %[[KEEP:.*]] = arith.andi %[[IN]], %[[VIS]] : tensor<64x64xi1>
// BR: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// BR: tile.online_softmax

//===----------------------------------------------------------------------===//
// The kernel's name and block_n are options.
//===----------------------------------------------------------------------===//

// NAME-LABEL: func.func @attn(
// NAME-SAME: #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32>
// NAME: tile.load %{{.*}} transpose : <?x?x?x64xf16> -> tensor<64x32xf16>
// NAME: tile.mma %{{.*}} : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
// NAME: tile.mma %{{.*}} : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
// NAME-NOT: func.func @sdpa_fwd

//===----------------------------------------------------------------------===//
// window: the band of diagonals comes as two index arguments after the scale
// and masks the scores with the keys' bounds, in place of a causal mask.
//===----------------------------------------------------------------------===//

// WINDOW-LABEL: func.func @sdpa_fwd(
// WINDOW-SAME: %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>}, %[[LO:[^:]*]]: index {tile.arg = #tile.arg<window_lo>}, %[[HI:[^:]*]]: index {tile.arg = #tile.arg<window_hi>})
// WINDOW-SAME: causal = window, block_m = 128, block_n = 64
// WINDOW: %[[M_BLK:.*]] = tile.block_id x
// WINDOW: %[[ROW:.*]] = arith.muli %[[M_BLK]], %{{.*}} : index
// WINDOW-NOT: arith.subi
// WINDOW: scf.for %[[J:[^ ]*]] =
// WINDOW: %[[COL:.*]] = arith.muli %[[J]], %{{.*}} : index
// WINDOW: %[[IN:.*]] = tile.bounds_mask offsets(%[[COL]])
// WINDOW: %[[KEEP:.*]] = tile.broadcast %[[IN]]
// WINDOW-NOT: tile.causal_mask
// WINDOW: %[[BAND:.*]] = tile.window_mask %[[ROW]], %[[COL]] diagonals(%[[LO]], %[[HI]]) : tensor<128x64xi1>
// WINDOW: %[[BOTH:.*]] = arith.andi %[[KEEP]], %[[BAND]]
// WINDOW: arith.select %[[BOTH]]

//===----------------------------------------------------------------------===//
// lse: the rows' log-sum-exps leave through one more view, last, from the
// loop's final max and sum (with a softcap, of the capped scores: the
// softmax's scale is the cap); before O's store, which stays last.
//===----------------------------------------------------------------------===//

// LSE-LABEL: func.func @sdpa_fwd(
// LSE-SAME: %[[O:arg3]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %[[SCALE:arg4]]: f32 {tile.arg = #tile.arg<scale>}, %[[LO:arg5]]: index {tile.arg = #tile.arg<window_lo>}, %[[HI:arg6]]: index {tile.arg = #tile.arg<window_hi>}, %[[CAP:arg7]]: f32 {tile.arg = #tile.arg<softcap>}, %[[LSE:arg8]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>})
// LSE-SAME: features = [softcap, lse]
// LSE: %[[M_BLK:.*]] = tile.block_id x
// LSE: %[[H:.*]] = tile.block_id y
// LSE: %[[B:.*]] = tile.block_id z
// LSE: %[[LOOP:.*]]:3 = scf.for
// LSE: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} scale(%[[CAP]])
// LSE: %[[ROWS:.*]] = tile.log_sum_exp %[[LOOP]]#0, %[[LOOP]]#1 scale(%[[CAP]]) : tensor<64xf32>
// LSE-NEXT: tile.store %[[ROWS]], %[[LSE]][%[[B]], %[[H]], %[[M_BLK]]] : tensor<64xf32>, <?x?x?xf32>
// LSE: tile.store %{{.*}}, %[[O]][%[[B]], %[[H]], %[[M_BLK]], %{{.*}}] : tensor<64x64xf16>
// LSE-NEXT: return

//===----------------------------------------------------------------------===//
// varlen: packed views [1, H, total, D]; program (m, h, b) reads sequence
// b's offsets, shifts a bottom-right band by its S_k - S_q, slices the
// views to it (K and V to no keys past its queries; lse clamped to its view,
// which has no rows when the caller wants none) and indexes batch 0.
//===----------------------------------------------------------------------===//

// VARLEN-LABEL: func.func @sdpa_fwd(
// VARLEN-SAME: %[[Q:arg0]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %[[K:arg1]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %[[V:arg2]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %[[O:arg3]]: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}
// VARLEN-SAME: %[[LO:arg5]]: index {tile.arg = #tile.arg<window_lo>}, %[[HI:arg6]]: index {tile.arg = #tile.arg<window_hi>}, %[[ALIGN:arg7]]: index {tile.arg = #tile.arg<window_align>}, %[[LSEV:arg8]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>}, %[[CUQ:arg9]]: !tile.view<?xi32> {tile.arg = #tile.arg<cu_seqlens_q>}, %[[CUK:arg10]]: !tile.view<?xi32> {tile.arg = #tile.arg<cu_seqlens_k>})
// VARLEN-SAME: features = [lse, varlen]
// VARLEN: %[[M_BLK:.*]] = tile.block_id x
// VARLEN: %[[B:.*]] = tile.block_id z
// VARLEN: %[[NEXT:.*]] = arith.addi %[[B]], %c1
// VARLEN: %[[RQ0:.*]] = tile.read %[[CUQ]][%[[B]]] : <?xi32> -> i32
// VARLEN: %[[Q0:.*]] = arith.index_cast %[[RQ0]] : i32 to index
// VARLEN: %[[RQ1:.*]] = tile.read %[[CUQ]][%[[NEXT]]] : <?xi32> -> i32
// VARLEN: %[[Q1:.*]] = arith.index_cast %[[RQ1]]
// VARLEN: %[[LENQ:.*]] = arith.subi %[[Q1]], %[[Q0]]
// VARLEN: tile.read %[[CUK]][%[[B]]]
// VARLEN: %[[LENK:.*]] = arith.subi
// VARLEN: %[[DIFF:.*]] = arith.subi %[[LENK]], %[[LENQ]]
// VARLEN: %[[SHIFT:.*]] = arith.muli %[[ALIGN]], %[[DIFF]]
// VARLEN: arith.addi %[[LO]], %[[SHIFT]]
// VARLEN: arith.addi %[[HI]], %[[SHIFT]]
// VARLEN: %[[ROW0:.*]] = arith.muli %[[M_BLK]], %c64
// VARLEN: %[[LIVE:.*]] = arith.cmpi ult, %[[ROW0]], %[[LENQ]]
// VARLEN: %[[KEYS:.*]] = arith.select %[[LIVE]], %[[LENK]], %c0
// VARLEN: %[[QS:.*]] = tile.slice %[[Q]][2] offset(%[[Q0]]) size(%[[LENQ]])
// VARLEN: %[[OS:.*]] = tile.slice %[[O]][2] offset(%[[Q0]]) size(%[[LENQ]])
// VARLEN: %[[ROWS:.*]] = tile.dim %[[LSEV]][2]
// VARLEN: %[[FIRST:.*]] = arith.minui %[[Q0]], %[[ROWS]]
// VARLEN: %[[LEFT:.*]] = arith.subi %[[ROWS]], %[[FIRST]]
// VARLEN: %[[COUNT:.*]] = arith.minui %[[LENQ]], %[[LEFT]]
// VARLEN: %[[LSES:.*]] = tile.slice %[[LSEV]][2] offset(%[[FIRST]]) size(%[[COUNT]])
// VARLEN: %[[KS:.*]] = tile.slice %[[K]][2] offset(%{{.*}}) size(%[[KEYS]])
// VARLEN: tile.slice %[[V]][2] offset(%{{.*}}) size(%[[KEYS]])
// VARLEN: tile.load %[[QS]][%c0, %{{.*}}, %[[M_BLK]], %c0]
// VARLEN: scf.for
// VARLEN: tile.load %[[KS]][%c0,
// VARLEN: tile.store %{{.*}}, %[[LSES]][%c0, %{{.*}}, %[[M_BLK]]]
// VARLEN: tile.store %{{.*}}, %[[OS]][%c0, %{{.*}}, %[[M_BLK]], %c0]

// DeepSeek's multi-head latent attention: Q and K of 192 columns, V and O of
// 128. Q K^T contracts over 192; P V and the accumulator, its rescale and the
// output have 128.
// MLA-LABEL: func.func @sdpa_fwd(
// MLA-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>}, %[[O:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, %{{[^:]*}}: f32 {tile.arg = #tile.arg<scale>})
// MLA-SAME: tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 128, element_type = bf16
// MLA: tile.load %[[Q]]{{.*}} -> tensor<64x192xbf16>
// MLA: arith.constant dense<0.000000e+00> : tensor<64x128xf32>
// MLA: scf.for {{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>)
// MLA: tile.load %[[K]]{{.*}} -> tensor<192x64xbf16>
// MLA: tile.load %[[V]]{{.*}} -> tensor<64x128xbf16>
// MLA: tile.mma {{.*}} : tensor<64x192xbf16>, tensor<192x64xbf16> -> tensor<64x64xf32>
// MLA: tile.broadcast %{{.*}} along 1 : tensor<64xf32> -> tensor<64x128xf32>
// MLA: tile.mma {{.*}} : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
// MLA: tile.store %{{.*}}, %[[O]]{{.*}} : tensor<64x128xbf16>

// RUN: not tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 head-dim-v=128" 2>&1 | FileCheck %s --check-prefix=ERR-HEAD-DIM-V
// ERR-HEAD-DIM-V: error: head_dim_v must be a multiple of 16 in [16, 256] other than head_dim (128), or omitted, got 128

//===----------------------------------------------------------------------===//
// Invalid configurations
//===----------------------------------------------------------------------===//

// The name becomes a PTX entry point ('k{' aborted in the NVPTX backend,
// found by test/Fuzz):
// RUN: not tiled-attn-opt %s '--tile-generate-sdpa=name=k{' 2>&1 | FileCheck %s --check-prefix=ERR-NAME
// RUN: not tiled-attn-opt %s --tile-generate-sdpa=name=1k 2>&1 | FileCheck %s --check-prefix=ERR-NAME
// ERR-NAME: error: tile-generate-sdpa: name must be a C identifier (letters, digits and '_', not starting with a digit): it names the PTX entry point; got '{{k\{|1k}}'

// RUN: not tiled-attn-opt %s --tile-generate-sdpa=dtype=f32 2>&1 | FileCheck %s --check-prefix=ERR-DTYPE
// ERR-DTYPE: error: tile-generate-sdpa: dtype must be f16 or bf16, got 'f32'

// RUN: not tiled-attn-opt %s --tile-generate-sdpa=block-m=40 2>&1 | FileCheck %s --check-prefix=ERR-BLOCK-M
// ERR-BLOCK-M: error: block_m must be a multiple of 16 in [16, 256], got 40

// The variant's grammar is KernelVariant.def's: a mask, the features in
// their order, then functions.
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="variant=diagonal" 2>&1 | FileCheck %s --check-prefix=ERR-VARIANT
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="variant=window_top_left" 2>&1 | FileCheck %s --check-prefix=ERR-VARIANT
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="variant=none_lse_softcap" 2>&1 | FileCheck %s --check-prefix=ERR-VARIANT
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="variant=none+alibi+alibi" 2>&1 | FileCheck %s --check-prefix=ERR-VARIANT
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="variant=none_softcapped" 2>&1 | FileCheck %s --check-prefix=ERR-VARIANT
// ERR-VARIANT: error: tile-generate-sdpa: variant must be <none|top_left|bottom_right|window>[_softcap][_lse][_varlen][_sparse][_split][_seqused][_paged][+function...], got '

// RUN: not tiled-attn-opt %s --tile-generate-sdpa=head-dim=72 2>&1 | FileCheck %s --check-prefix=ERR-HEAD-DIM
// ERR-HEAD-DIM: error: head_dim must be a multiple of 16 in [16, 256], got 72

// A second kernel of the same name is refused.
// RUN: not tiled-attn-opt %s --tile-generate-sdpa --tile-generate-sdpa 2>&1 | FileCheck %s --check-prefix=ERR-SYMBOL
// ERR-SYMBOL: error: tile-generate-sdpa: the module already has a symbol named 'sdpa_fwd'

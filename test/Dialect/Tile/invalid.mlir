// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// !tile.view
//===----------------------------------------------------------------------===//

// expected-error @+1 {{a view needs at least one dimension}}
func.func private @view_rank_0(!tile.view<f16>)

// -----

// expected-error @+1 {{view elements must be f16, bf16, f32, i32 or i8, got 'i64'}}
func.func private @view_element_i64(!tile.view<?x64xi64>)

// -----

//===----------------------------------------------------------------------===//
// #tile.sdpa
//===----------------------------------------------------------------------===//

// expected-error @+1 {{head_dim must be a multiple of 16 in [16, 256], got 72}}
func.func private @sdpa_head_dim() attributes {tile.sdpa = #tile.sdpa<head_dim = 72, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{head_dim must be a multiple of 16 in [16, 256], got 512}}
func.func private @sdpa_head_dim_large() attributes {tile.sdpa = #tile.sdpa<head_dim = 512, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{element_type must be f16 or bf16, got 'f32'}}
func.func private @sdpa_element_type() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f32, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{block_m must be a multiple of 16 in [16, 256], got 40}}
func.func private @sdpa_block_m() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 40, block_n = 64>}

// -----

// expected-error @+1 {{block_n must be a multiple of 16 in [16, 256], got 8}}
func.func private @sdpa_block_n() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = bf16, causal = top_left, block_m = 64, block_n = 8>}

// -----

// A refill can only take the buffer of a block it replaces when there is a
// block in flight (stages >= 2), whether stages is written or left at 1.

// expected-error @+1 {{refill_after_use needs stages >= 2}}
func.func private @sdpa_refill_after_use_one_stage() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, stages = 1, refill_after_use = true>}

// -----

// expected-error @+1 {{refill_after_use needs stages >= 2}}
func.func private @sdpa_refill_after_use_default_stages() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, refill_after_use = true>}

// -----

// The features are KernelVariant.def's, by name, in its order, once each.

// expected-error @+2 {{unknown kernel feature 'dropout' (KernelVariant.def: softcap, lse, varlen, sparse, split, seqused, paged)}}
// expected-error @+1 {{failed to parse Tile_SdpaAttr parameter 'features'}}
func.func private @sdpa_unknown_feature() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse, dropout]>}

// -----

// A paged cache's keys are each entry's used ones: paged needs seqused.

// expected-error @+1 {{paged (a paged KV cache) needs seqused and takes no block mask}}
func.func private @sdpa_paged_without_seqused() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse, paged]>}

// -----

// expected-error @+2 {{kernel feature 'softcap' out of order or repeated (KernelVariant.def's order: softcap, lse, varlen, sparse, split, seqused, paged)}}
// expected-error @+1 {{failed to parse Tile_SdpaAttr parameter 'features'}}
func.func private @sdpa_features_out_of_order() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse, softcap]>}

// -----

// Split-KV writes partial outputs with their log-sum-exps, which the merge
// needs, and splits the keys of an unmasked problem.

// expected-error @+1 {{split (split-KV) needs lse and takes no causal mask, window or varlen}}
func.func private @sdpa_split_without_lse() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [split]>}

// -----

// expected-error @+1 {{split (split-KV) needs lse and takes no causal mask, window or varlen}}
func.func private @sdpa_split_causal() attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = top_left, block_m = 64, block_n = 64, features = [lse, split]>}

// -----

// A split kernel's o is the partial outputs, in f32, and num_splits follows.
// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k: !tile.view<?x?x?x64xf16>, v: !tile.view<?x?x?x64xf16>, o: !tile.view<?x?x?x64xf32>, scale: f32, lse: !tile.view<?x?x?xf32>, num_splits: index) and no results}}
func.func @sdpa_split_f16_output(
    %q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>},
    %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
    %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>},
    %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
    %scale: f32 {tile.arg = #tile.arg<scale>},
    %lse: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>},
    %n: index {tile.arg = #tile.arg<num_splits>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse, split]>} {
  return
}

// -----

// expected-error @+1 {{head_dim_v must be a multiple of 16 in [16, 256] other than head_dim (192), or omitted, got 100}}
func.func private @sdpa_head_dim_v() attributes {tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 100, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// One kernel, one spelling: a head_dim_v equal to head_dim is left out.

// expected-error @+1 {{head_dim_v must be a multiple of 16 in [16, 256] other than head_dim (128), or omitted, got 128}}
func.func private @sdpa_head_dim_v_same() attributes {tile.sdpa = #tile.sdpa<head_dim = 128, head_dim_v = 128, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// With head_dim_v, v and o have a head dim of their own.

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k: !tile.view<?x?x?x192xbf16>, v, o: !tile.view<?x?x?x128xbf16>, scale: f32) and no results, got '(!tile.view<?x?x?x192xbf16>, !tile.view<?x?x?x192xbf16>, !tile.view<?x?x?x192xbf16>, !tile.view<?x?x?x128xbf16>, f32) -> ()'}}
func.func private @sdpa_v_head_dim(!tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 128, element_type = bf16, causal = none, block_m = 64, block_n = 64>}

// -----

// The attribute promises the kernel ABI (q, k, v, o, scale).

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) -> ()'}}
func.func private @sdpa_missing_output(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) -> f32'}}
func.func private @sdpa_result(!tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) -> f32 attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// A window kernel also takes the band's diagonals (window_lo, window_hi).

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, window_lo, window_hi: index) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) -> ()'}}
func.func private @sdpa_window_without_band(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = window, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, window_lo, window_hi: index) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32, i32, index) -> ()'}}
func.func private @sdpa_window_band_type(!tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, i32 {tile.arg = #tile.arg<window_lo>}, index {tile.arg = #tile.arg<window_hi>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = window, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x128xbf16>, scale: f32) and no results, got '(!tile.view<?x?x?x128xbf16>, !tile.view<?x?x?x64xbf16>, !tile.view<?x?x?x128xbf16>, !tile.view<?x?x?x128xbf16>, f32) -> ()'}}
func.func @sdpa_head_dim_mismatch(%q: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<k>}, %v: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 128, element_type = bf16, causal = bottom_right, block_m = 128, block_n = 64>} {
  return
}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xbf16>, scale: f32) and no results, got '(!tile.view<?x?x?x64xbf16>, !tile.view<?x?x?x64xbf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xbf16>, f32) -> ()'}}
func.func private @sdpa_element_type_mismatch(!tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = bf16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32) and no results, got '(!tile.view<?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) -> ()'}}
func.func private @sdpa_view_rank(!tile.view<?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f16) -> ()'}}
func.func private @sdpa_scale_f16(!tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f16 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// Every argument carries its role (#tile.arg), in any order; the roles are
// what the passes, the kernel ABI and the runtime know arguments by.

!v = !tile.view<?x?x?x64xf16>
// expected-error @+1 {{'func.func' op argument #1 has no 'tile.arg' role (expected #tile.arg<k>)}}
func.func private @sdpa_role_missing(!v {tile.arg = #tile.arg<q>}, !v, !v {tile.arg = #tile.arg<v>}, !v {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

!v = !tile.view<?x?x?x64xf16>
// expected-error @+1 {{'func.func' op two arguments are 'k'}}
func.func private @sdpa_role_twice(!v {tile.arg = #tile.arg<q>}, !v {tile.arg = #tile.arg<k>}, !v {tile.arg = #tile.arg<k>}, !v {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

!v = !tile.view<?x?x?x64xf16>
// expected-error @+1 {{'func.func' op argument #5 is 'softcap', which this kernel's 'tile.sdpa' does not take}}
func.func private @sdpa_role_not_taken(!v {tile.arg = #tile.arg<q>}, !v {tile.arg = #tile.arg<k>}, !v {tile.arg = #tile.arg<v>}, !v {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, f32 {tile.arg = #tile.arg<softcap>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// Captured inputs (of score and mask functions): views or scalars, each
// with a name of its own.

!v = !tile.view<?x?x?x64xf16>
// expected-error @+1 {{'func.func' op captured input 'slopes' must be a view or an f32, i32 or index scalar, got 'f16'}}
func.func private @sdpa_captured_type(!v {tile.arg = #tile.arg<q>}, !v {tile.arg = #tile.arg<k>}, !v {tile.arg = #tile.arg<v>}, !v {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, f16 {tile.arg = #tile.arg<captured, "slopes">}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

!v = !tile.view<?x?x?x64xf16>
// expected-error @+1 {{'func.func' op two captured inputs named 'docs'}}
func.func private @sdpa_captured_twice(!v {tile.arg = #tile.arg<q>}, !v {tile.arg = #tile.arg<k>}, !v {tile.arg = #tile.arg<v>}, !v {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "docs">}, !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "docs">}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{a captured input needs a name that is a C identifier, got '2x'}}
func.func private @captured_name(f32 {tile.arg = #tile.arg<captured, "2x">})

// -----

// expected-error @+1 {{a captured input needs a name that is a C identifier, got none}}
func.func private @captured_unnamed(f32 {tile.arg = #tile.arg<captured>})

// -----

// expected-error @+1 {{a captured input may not take the name of a role, got 'lse'}}
func.func private @captured_role_name(f32 {tile.arg = #tile.arg<captured, "lse">})

// -----

// expected-error @+1 {{only a captured input has a name; 'q' is named by its role}}
func.func private @role_named(f32 {tile.arg = #tile.arg<q, "query">})

// -----

// expected-error @+1 {{'tile.arg' must be a #tile.arg attribute}}
func.func private @role_string(f32 {tile.arg = "q"})

// -----

// An `lse` kernel also takes the view of the rows' log-sum-exps, last:
// rank 3, f32.

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, lse: !tile.view<?x?x?xf32>) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) -> ()'}}
func.func private @sdpa_lse_missing(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse]>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, softcap: f32, lse: !tile.view<?x?x?xf32>) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32, f32, !tile.view<?x?x?x?xf32>) -> ()'}}
func.func private @sdpa_lse_rank(!tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, f32 {tile.arg = #tile.arg<softcap>}, !tile.view<?x?x?x?xf32> {tile.arg = #tile.arg<lse>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [softcap, lse]>}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, window_lo, window_hi: index, lse: !tile.view<?x?x?xf32>) and no results, got '(!tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, !tile.view<?x?x?x64xf16>, f32, index, index, !tile.view<?x?x?xf16>) -> ()'}}
func.func private @sdpa_lse_element_type(!tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>}, index {tile.arg = #tile.arg<window_lo>}, index {tile.arg = #tile.arg<window_hi>}, !tile.view<?x?x?xf16> {tile.arg = #tile.arg<lse>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = window, block_m = 64, block_n = 64, features = [lse]>}

// -----

// expected-error @+1 {{'tile.sdpa' must be a #tile.sdpa attribute}}
func.func private @sdpa_not_an_sdpa_attr() attributes {tile.sdpa = 64 : i64}

// -----

// expected-error @+1 {{unknown tile dialect attribute 'tile.schedule'}}
func.func private @unknown_attr() attributes {tile.schedule = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}

// -----

// expected-error @+1 {{'tile.sdpa' may only be attached to a function}}
module @not_a_func attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>} {
}

// -----

//===----------------------------------------------------------------------===//
// Tile types (declarative)
//===----------------------------------------------------------------------===//

func.func @tile_not_a_tile_size(%s: tensor<16x40xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tile.reduce' op operand #0 must be f16, bf16 or f32 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16x40xf32>'}}
  %0 = tile.reduce max %s along 1 : tensor<16x40xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @tile_dynamic_shape(%s: tensor<16x?xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tile.reduce' op operand #0 must be f16, bf16 or f32 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16x?xf32>'}}
  %0 = tile.reduce sum %s along 1 : tensor<16x?xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @iota_not_a_tile_size() -> tensor<24xi32> {
  // expected-error @+1 {{'tile.iota' op result #0 must be i32, i64 or f32 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<24xi32>'}}
  %0 = tile.iota : tensor<24xi32>
  return %0 : tensor<24xi32>
}

// -----

func.func @iota_f16() -> tensor<16xf16> {
  // expected-error @+1 {{'tile.iota' op result #0 must be i32, i64 or f32 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16xf16>'}}
  %0 = tile.iota : tensor<16xf16>
  return %0 : tensor<16xf16>
}

// -----

//===----------------------------------------------------------------------===//
// tile.dim
//===----------------------------------------------------------------------===//

func.func @dim_out_of_range(%v: !tile.view<?x?x?x64xf16>) -> index {
  // expected-error @+1 {{'tile.dim' op expects a dimension in [0, 4), got 4}}
  %0 = tile.dim %v[4] : !tile.view<?x?x?x64xf16>
  return %0 : index
}

// -----

func.func @dim_negative(%v: !tile.view<?x64xf16>) -> index {
  // expected-error @+1 {{'tile.dim' op attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = tile.dim %v[-1] : !tile.view<?x64xf16>
  return %0 : index
}

// -----

//===----------------------------------------------------------------------===//
// tile.load and tile.store
//===----------------------------------------------------------------------===//

func.func @load_num_indices(%v: !tile.view<?x?x?x64xf16>, %i: index) -> tensor<64x64xf16> {
  // expected-error @+1 {{'tile.load' op expects 4 indices for a rank-4 view, got 2}}
  %0 = tile.load %v[%i, %i] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// -----

func.func @load_gather_no_leading_index(%v: !tile.view<?x64xf16>, %i: index) -> tensor<16x64xf16> {
  // expected-error @+1 {{'tile.load' op expects 'gather' to replace a leading index, but the view has none past the tile's}}
  %0 = tile.load %v[%i, %i] gather(%i, %i) pad(0.0) : !tile.view<?x64xf16> -> tensor<16x64xf16>
  return %0 : tensor<16x64xf16>
}

// -----

func.func @load_gather_groups(%v: !tile.view<?x?x?x64xf16>, %i: index) -> tensor<64x64xf16> {
  // expected-error @+1 {{'tile.load' op expects the block's 64 rows to split into the 3 groups of 'gather'}}
  %0 = tile.load %v[%i, %i, %i, %i] gather(%i, %i, %i) pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// -----

func.func @load_tile_rank(%v: !tile.view<?xf16>, %i: index) -> tensor<16x16xf16> {
  // expected-error @+1 {{'tile.load' op expects a tile of rank at most 1 (the view's), got rank 2}}
  %0 = tile.load %v[%i] pad(0.0) : !tile.view<?xf16> -> tensor<16x16xf16>
  return %0 : tensor<16x16xf16>
}

// -----

func.func @load_element_type(%v: !tile.view<?x64xf16>, %i: index) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'tile.load' op expects the tile's element type ('bf16') to equal the view's ('f16')}}
  %0 = tile.load %v[%i, %i] pad(0.0) : !tile.view<?x64xf16> -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @load_transpose_rank(%v: !tile.view<?x64xf16>, %i: index) -> tensor<64xf16> {
  // expected-error @+1 {{'tile.load' op expects a rank-2 tile with 'transpose', got rank 1}}
  %0 = tile.load %v[%i, %i] pad(0.0) transpose : !tile.view<?x64xf16> -> tensor<64xf16>
  return %0 : tensor<64xf16>
}

// -----

func.func @store_num_indices(%t: tensor<16x64xf16>, %v: !tile.view<?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tile.store' op expects 3 indices for a rank-3 view, got 4}}
  tile.store %t, %v[%i, %i, %i, %i] : tensor<16x64xf16>, !tile.view<?x?x64xf16>
  return
}

// -----

func.func @store_tile_rank(%t: tensor<16x64xf16>, %v: !tile.view<?xf16>, %i: index) {
  // expected-error @+1 {{'tile.store' op expects a tile of rank at most 1 (the view's), got rank 2}}
  tile.store %t, %v[%i] : tensor<16x64xf16>, !tile.view<?xf16>
  return
}

// -----

func.func @store_element_type(%t: tensor<16x64xf32>, %v: !tile.view<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.store' op expects the tile's element type ('f32') to equal the view's ('bf16')}}
  tile.store %t, %v[%i, %i] : tensor<16x64xf32>, !tile.view<?x64xbf16>
  return
}

// -----

func.func @store_add_element_type(%t: tensor<16x64xbf16>, %v: !tile.view<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile.store' op adds f32 elements only, got 'bf16'}}
  tile.store %t, %v[%i, %i] add : tensor<16x64xbf16>, !tile.view<?x64xbf16>
  return
}

// -----

func.func @transpose_rank(%t: tensor<16xf32>) {
  // expected-error @+1 {{'tile.transpose' op transposes rank-2 tiles, got rank 1}}
  %r = tile.transpose %t : tensor<16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @transpose_shape(%t: tensor<16x32xf32>) {
  // expected-error @+1 {{'tile.transpose' op expects a result of shape 32x16, got 16x32}}
  %r = tile.transpose %t : tensor<16x32xf32> -> tensor<16x32xf32>
  return
}

// -----

func.func @transpose_element_type(%t: tensor<16x32xf32>) {
  // expected-error @+1 {{'tile.transpose' op failed to verify that all of {input, result} have same element type}}
  %r = tile.transpose %t : tensor<16x32xf32> -> tensor<32x16xf16>
  return
}

// -----

func.func @store_mask_shape(%t: tensor<16x64xf16>, %v: !tile.view<?x64xf16>, %i: index, %m: tensor<64x16xi1>) {
  // expected-error @+1 {{'tile.store' op expects the mask's shape (64x16) to equal the value's (16x64)}}
  tile.store %t, %v[%i, %i] mask(%m : tensor<64x16xi1>) : tensor<16x64xf16>, !tile.view<?x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tile.mma
//===----------------------------------------------------------------------===//

func.func @mma_element_types(%a: tensor<16x16xf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'tile.mma' op failed to verify that all of {lhs, rhs} have same element type}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @mma_f32_inputs(%a: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'tile.mma' op operand #0 must be rank-2 f16 or bf16 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16x16xf32>'}}
  %0 = tile.mma %a, %a, %c : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @mma_f16_acc(%a: tensor<16x16xf16>, %c: tensor<16x16xf16>) -> tensor<16x16xf16> {
  // expected-error @+1 {{'tile.mma' op operand #2 must be rank-2 f32 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16x16xf16>'}}
  %0 = tile.mma %a, %a, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf16>
  return %0 : tensor<16x16xf16>
}

// -----

func.func @mma_rank(%a: tensor<16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'tile.mma' op operand #0 must be rank-2 f16 or bf16 tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<16xf16>'}}
  %0 = tile.mma %a, %b, %c : tensor<16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @mma_inner_dim(%a: tensor<64x64xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>) -> tensor<64x16xf32> {
  // expected-error @+1 {{'tile.mma' op expects lhs columns (64) to equal rhs rows (32)}}
  %0 = tile.mma %a, %b, %c : tensor<64x64xf16>, tensor<32x16xf16> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

func.func @mma_acc_shape(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'tile.mma' op expects an accumulator of shape 64x16, got 16x64}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tile.reduce and tile.broadcast
//===----------------------------------------------------------------------===//

func.func @reduce_rank_1(%s: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tile.reduce' op expects a rank-1 input to reduce to a scalar, got 'tensor<16xf32>'}}
  %0 = tile.reduce max %s along 0 : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @reduce_axis(%s: tensor<16x32xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tile.reduce' op expects an axis in [0, 2), got 2}}
  %0 = tile.reduce max %s along 2 : tensor<16x32xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @reduce_result_shape(%s: tensor<16x32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'tile.reduce' op expects a result of shape 16 (the input without axis 1), got 32}}
  %0 = tile.reduce sum %s along 1 : tensor<16x32xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

func.func @reduce_element_type(%s: tensor<16x32xf32>) -> tensor<16xf16> {
  // expected-error @+1 {{'tile.reduce' op failed to verify that all of {input, result} have same element type}}
  %0 = tile.reduce sum %s along 1 : tensor<16x32xf32> -> tensor<16xf16>
  return %0 : tensor<16xf16>
}

// -----

func.func @broadcast_rank(%r: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tile.broadcast' op expects a result of rank 2, got rank 1}}
  %0 = tile.broadcast %r along 0 : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @broadcast_axis(%r: tensor<16xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'tile.broadcast' op expects an axis in [0, 2), got 2}}
  %0 = tile.broadcast %r along 2 : tensor<16xf32> -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

func.func @broadcast_shape(%r: tensor<16xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'tile.broadcast' op expects the result without axis 0 (32) to equal the input's shape (16)}}
  %0 = tile.broadcast %r along 0 : tensor<16xf32> -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tile.iota and masks
//===----------------------------------------------------------------------===//

func.func @iota_rank() -> tensor<16x16x16xi32> {
  // expected-error @+1 {{'tile.iota' op expects a rank-1 or rank-2 tile (a vector or a score block), got 'tensor<16x16x16xi32>'}}
  %0 = tile.iota : tensor<16x16x16xi32>
  return %0 : tensor<16x16x16xi32>
}

// -----

func.func @iota_dim(%i: index) -> tensor<16x16xi32> {
  // expected-error @+1 {{'tile.iota' op expects dim in [0, 2) for a rank-2 tile, got 2}}
  %0 = tile.iota dim 2 offset(%i) : tensor<16x16xi32>
  return %0 : tensor<16x16xi32>
}

// -----

func.func @iota_step_of_integers(%i: index, %s: f32) -> tensor<16xi32> {
  // expected-error @+1 {{'tile.iota' op expects f32 positions with a step, got 'tensor<16xi32>'}}
  %0 = tile.iota offset(%i) step(%s) : tensor<16xi32>
  return %0 : tensor<16xi32>
}

// -----

func.func @iota_dim_of_a_vector() -> tensor<16xi32> {
  // expected-error @+1 {{'tile.iota' op expects dim in [0, 1) for a rank-1 tile, got 1}}
  %0 = tile.iota dim 1 : tensor<16xi32>
  return %0 : tensor<16xi32>
}

// -----

func.func @bounds_mask_operands(%i: index) -> tensor<16x16xi1> {
  // expected-error @+1 {{'tile.bounds_mask' op expects 2 offsets and limits for a rank-2 mask, got 2 offsets and 1 limits}}
  %0 = tile.bounds_mask offsets(%i, %i) limits(%i) : tensor<16x16xi1>
  return %0 : tensor<16x16xi1>
}

// -----

func.func @causal_mask_rank(%i: index) -> tensor<16xi1> {
  // expected-error @+1 {{'tile.causal_mask' op expects a rank-2 mask, got rank 1}}
  %0 = tile.causal_mask %i, %i : tensor<16xi1>
  return %0 : tensor<16xi1>
}

// -----

func.func @window_mask_rank(%i: index) -> tensor<16xi1> {
  // expected-error @+1 {{'tile.window_mask' op expects a rank-2 mask, got rank 1}}
  %0 = tile.window_mask %i, %i diagonals(%i, %i) : tensor<16xi1>
  return %0 : tensor<16xi1>
}

// -----

//===----------------------------------------------------------------------===//
// tile.log_sum_exp
//===----------------------------------------------------------------------===//

func.func @log_sum_exp_rank(%m: tensor<16x4xf32>, %l: tensor<16x4xf32>, %scale: f32) {
  // expected-error @+1 {{'tile.log_sum_exp' op expects row statistics of rank 1, got rank 2}}
  %lse = tile.log_sum_exp %m, %l scale(%scale) : tensor<16x4xf32>
  return
}

// -----

func.func @log_sum_exp_types(%m: tensor<16xf32>, %l: tensor<32xf32>, %scale: f32) {
  // expected-error @+1 {{'tile.log_sum_exp' op failed to verify that all of {max, sum, result} have same type}}
  %lse = "tile.log_sum_exp"(%m, %l, %scale) : (tensor<16xf32>, tensor<32xf32>, f32) -> tensor<16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tile.online_softmax
//===----------------------------------------------------------------------===//

func.func @online_softmax_scores_rank(%s: tensor<16xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %scale: f32) {
  // expected-error @+1 {{'tile.online_softmax' op expects rank-2 scores, got rank 1}}
  %m1, %l1, %p, %a = tile.online_softmax %s, %m, %l scale(%scale) : tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @online_softmax_rows(%s: tensor<16x32xf32>, %m: tensor<32xf32>, %l: tensor<32xf32>, %scale: f32) {
  // expected-error @+1 {{'tile.online_softmax' op expects running statistics of shape 16 (one per score row), got 32}}
  %m1, %l1, %p, %a = tile.online_softmax %s, %m, %l scale(%scale) : tensor<16x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @online_softmax_rows_rank(%s: tensor<16x32xf32>, %m: tensor<16x32xf32>, %l: tensor<16x32xf32>, %scale: f32) {
  // expected-error @+1 {{'tile.online_softmax' op expects running statistics of shape 16 (one per score row), got 16x32}}
  %m1, %l1, %p, %a = tile.online_softmax %s, %m, %l scale(%scale) : tensor<16x32xf32>, tensor<16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tile.slice, tile.read and tile.write
//===----------------------------------------------------------------------===//

func.func @slice_dim(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tile.slice' op expects a dimension in [0, 4), got 4}}
  %0 = tile.slice %v[4] offset(%i) size(%i) : !tile.view<?x?x?x64xf16>
  return
}

// -----

func.func @slice_static(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tile.slice' op expects dimension 3 of the view to be dynamic ('?'), got size 64}}
  %0 = tile.slice %v[3] offset(%i) size(%i) : !tile.view<?x?x?x64xf16>
  return
}

// -----

func.func @read_indices(%v: !tile.view<?xi32>, %i: index) {
  // expected-error @+1 {{'tile.read' op expects 1 indices for a rank-1 view, got 2}}
  %0 = tile.read %v[%i, %i] : !tile.view<?xi32> -> i32
  return
}

// -----

func.func @read_type(%v: !tile.view<?xi32>, %i: index) {
  // expected-error @+1 {{'tile.read' op expects the result type ('f32') to equal the view's element type ('i32')}}
  %0 = tile.read %v[%i] : !tile.view<?xi32> -> f32
  return
}

// -----

func.func @write_indices(%v: !tile.view<?x?xi8>, %x: i8, %i: index) {
  // expected-error @+1 {{'tile.write' op expects 2 indices for a rank-2 view, got 1}}
  tile.write %x, %v[%i] : i8, !tile.view<?x?xi8>
  return
}

// -----

func.func @write_type(%v: !tile.view<?xi8>, %x: i32, %i: index) {
  // expected-error @+1 {{'tile.write' op expects the value type ('i32') to equal the view's element type ('i8')}}
  tile.write %x, %v[%i] : i32, !tile.view<?xi8>
  return
}

// -----

func.func @write_not_a_scalar(%v: !tile.view<?xf32>, %x: tensor<4xf32>, %i: index) {
  // expected-error @+1 {{'tile.write' op operand #0 must be}}
  tile.write %x, %v[%i] : tensor<4xf32>, !tile.view<?xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, cu_seqlens_q, cu_seqlens_k: !tile.view<?xi32>) and no results}}
func.func @sdpa_varlen_offsets(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %s: f32 {tile.arg = #tile.arg<scale>}, %cq: !tile.view<?xf32> {tile.arg = #tile.arg<cu_seqlens_q>}, %ck: !tile.view<?xi32> {tile.arg = #tile.arg<cu_seqlens_k>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [varlen]>} {
  return
}

// -----

// expected-error @+1 {{'func.func' op with 'tile.sdpa' expects arguments (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32, window_lo, window_hi, window_align: index, cu_seqlens_q, cu_seqlens_k: !tile.view<?xi32>) and no results}}
func.func @sdpa_varlen_window(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>, %s: f32, %lo: index, %hi: index, %cq: !tile.view<?xi32>, %ck: !tile.view<?xi32>) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = window, block_m = 64, block_n = 64, features = [varlen]>} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// The body agrees with #tile.sdpa
//===----------------------------------------------------------------------===//

// The runtime launches ceil(S_q / block_m) programs: 64-row blocks under a
// block_m of 256 would leave rows unwritten.
func.func @sdpa_body_block_m(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                             %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                             %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 256, block_n = 32>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op moves blocks of 64x64 of 'q', but the kernel's #tile.sdpa declares block_m = 256 and head_dim = 64 (blocks of 256x64)}}
  %q_i = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  return
}

// -----

// A transposed K block is compared as it lies in memory (block_n x head_dim).
func.func @sdpa_body_block_n(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                             %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                             %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %kt_ok = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x32xf16>
  // expected-error @+1 {{'tile.load' op moves blocks of 64x64 of 'k', but the kernel's #tile.sdpa declares block_n = 32 and head_dim = 64 (blocks of 32x64)}}
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  return
}

// -----

// Through a slice (a sequence of a packed batch), and part of the head dim.
func.func @sdpa_body_head_dim(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                              %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                              %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %v_b = tile.slice %v[2] offset(%c0) size(%c8) : !tile.view<?x?x?x64xf16>
  // expected-error @+1 {{'tile.load' op moves blocks of 32x32 of 'v', but the kernel's #tile.sdpa declares block_n = 32 and head_dim = 64 (blocks of 32x64)}}
  %v_j = tile.load %v_b[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<32x32xf16>
  return
}

// -----

func.func @sdpa_body_store_o(%q: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<k>},
                             %v: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>},
                             %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 128, element_type = bf16, causal = none, block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %o_i = arith.constant dense<1.0> : tensor<128x128xbf16>
  // expected-error @+1 {{'tile.store' op moves blocks of 128x128 of 'o', but the kernel's #tile.sdpa declares block_m = 64 and head_dim_v = 128 (blocks of 64x128)}}
  tile.store %o_i, %o[%c0, %c0, %c0, %c0] : tensor<128x128xbf16>, !tile.view<?x?x?x128xbf16>
  return
}

// -----

func.func @sdpa_body_store_lse(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                               %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                               %scale: f32 {tile.arg = #tile.arg<scale>}, %lse: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32, features = [lse]>} {
  %c0 = arith.constant 0 : index
  %rows = arith.constant dense<0.0> : tensor<128xf32>
  // expected-error @+1 {{'tile.store' op moves blocks of 128 of 'lse', but the kernel's #tile.sdpa declares block_m = 64 (blocks of 64)}}
  tile.store %rows, %lse[%c0, %c0, %c0] : tensor<128xf32>, !tile.view<?x?x?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Tiles no target can hold
//===----------------------------------------------------------------------===//

func.func @tile_too_large(%q: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op result #0 must be any tile (static shape of 2^k or 16k sizes, at most 65536 elements), but got 'tensor<4294967296x64xf16>'}}
  %t = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<4294967296x64xf16>
  return
}

// -----

// Tensors of arith ops are checked by the kernel: a splat of 2^38 elements
// costs nothing to parse and everything to lower or run.
// expected-error @+1 {{'func.func' op with 'tile.sdpa' holds a 'tensor<4294967296x64xf32>' of 274877906944 elements; a tile may have at most 65536 (the 65536 registers of one SM)}}
func.func @kernel_value_too_large(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                                  %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32>} {
  // expected-note @+1 {{the value is here}}
  %acc = arith.constant dense<0.0> : tensor<4294967296x64xf32>
  return
}

// -----

// The element count overflows int64: it saturates.
// expected-error @+1 {{holds a 'tensor<4294967296x4294967296x4294967296xf32>' of more than 2^63 elements}}
func.func @kernel_value_overflow(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                                 %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                                 %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 32>} {
  // expected-note @+1 {{the value is here}}
  %acc = arith.constant dense<0.0> : tensor<4294967296x4294967296x4294967296xf32>
  return
}

// -----

func.func @gather_rank(%v: !tile.view<?x?xi32>, %i: tensor<64xi32>) -> tensor<64xi32> {
  // expected-error @+1 {{'tile.gather' op expects 2 indices for a rank-2 view, got 1}}
  %r = tile.gather %v[%i] pad(0.0) : !tile.view<?x?xi32>, tensor<64xi32> -> tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

func.func @gather_shape(%v: !tile.view<?x?xi32>, %b: index, %i: tensor<32xi32>) -> tensor<64xi32> {
  // expected-error @+1 {{'tile.gather' op expects index 1 to be an index or a tile of the result's shape, got 'tensor<32xi32>'}}
  %r = tile.gather %v[%b, %i] pad(0.0) : !tile.view<?x?xi32>, index, tensor<32xi32> -> tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

func.func @gather_type(%v: !tile.view<?xf32>, %i: tensor<64xi32>) -> tensor<64xi32> {
  // expected-error @+1 {{'tile.gather' op expects a result of the view's element type 'f32', got 'tensor<64xi32>'}}
  %r = tile.gather %v[%i] pad(0.0) : !tile.view<?xf32>, tensor<64xi32> -> tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

func.func @gather_scalar(%v: !tile.view<?xf32>, %i: index) -> tensor<64xf32> {
  // expected-error @+1 {{'tile.gather' op expects at least one tile of indices (one element at scalar indices is tile.read)}}
  %r = tile.gather %v[%i] pad(0.0) : !tile.view<?xf32>, index -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @apply_missing(%i: index) -> tensor<16x16xi1> {
  // expected-error @+1 {{'tile.apply' op expects 'nowhere' to be a func.func of the module}}
  %m = tile.apply @nowhere at(%i, %i, %i, %i) : tensor<16x16xi1>
  return %m : tensor<16x16xi1>
}

// -----

func.func private @declared(index, index, index, index) -> i1

func.func @apply_declared(%i: index) -> tensor<16x16xi1> {
  // expected-error @+1 {{'tile.apply' op expects 'declared' to have a body (it is inlined)}}
  %m = tile.apply @declared at(%i, %i, %i, %i) : tensor<16x16xi1>
  return %m : tensor<16x16xi1>
}

// -----

func.func @mask_f32(%b: index, %h: index, %q: index, %kv: index) -> f32 {
  %c = arith.constant 0.0 : f32
  return %c : f32
}

func.func @apply_signature(%i: index) -> tensor<16x16xi1> {
  // expected-error @+1 {{'tile.apply' op expects 'mask_f32' of type '(index, index, index, index) -> i1' (batch, head, q_idx, kv_idx, captures), got '(index, index, index, index) -> f32'}}
  %m = tile.apply @mask_f32 at(%i, %i, %i, %i) : tensor<16x16xi1>
  return %m : tensor<16x16xi1>
}

// -----

func.func @apply_mask_type(%i: index) -> tensor<16x16xf32> {
  // expected-error @+1 {{'tile.apply' op expects a mask function (no score) to give an i1 tile, got 'tensor<16x16xf32>'}}
  %m = tile.apply @f at(%i, %i, %i, %i) : tensor<16x16xf32>
  return %m : tensor<16x16xf32>
}

// -----

func.func @apply_score_type(%s: tensor<16x16xf32>, %i: index) -> tensor<16x32xf32> {
  // expected-error @+1 {{'tile.apply' op expects a score function's result to be the score's type 'tensor<16x16xf32>', got 'tensor<16x32xf32>'}}
  %m = tile.apply @f score(%s : tensor<16x16xf32>) at(%i, %i, %i, %i) : tensor<16x32xf32>
  return %m : tensor<16x32xf32>
}

// -----

func.func @apply_rank(%i: index) -> tensor<16xi1> {
  // expected-error @+1 {{'tile.apply' op expects a rank-2 result (a score block), got 'tensor<16xi1>'}}
  %m = tile.apply @f at(%i, %i, %i, %i) : tensor<16xi1>
  return %m : tensor<16xi1>
}

// -----

// expected-error @+1 {{unknown tile dialect argument attribute 'tile.role'}}
func.func private @unknown_arg_attr(f32 {tile.role = #tile.arg<q>})

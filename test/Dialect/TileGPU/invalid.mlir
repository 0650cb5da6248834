// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the tilegpu verifiers (TileGPUDialect.cpp,
// TileGPUOps.cpp) and per ODS constraint of TileGPUOps.td that can fire.

//===----------------------------------------------------------------------===//
// Discardable attributes: tilegpu.target, tilegpu.shared_bytes, tilegpu.warps
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tilegpu.target' must be a #tilegpu.target on a module}}
module attributes {tilegpu.target = "sm_80"} {}

// -----

// expected-error @+1 {{'tilegpu.target' must be a #tilegpu.target on a module}}
func.func private @negative_target_on_func() attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}

// -----

// expected-error @+1 {{'tilegpu.shared_bytes' must be an i64 of at least 0}}
func.func private @negative_shared_bytes() attributes {tilegpu.shared_bytes = -16 : i64}

// -----

// expected-error @+1 {{'tilegpu.warps' must be an i64 of at least 1}}
func.func private @negative_warps_not_integer() attributes {tilegpu.warps = "four"}

// -----

// expected-error @+1 {{'tilegpu.tmem_columns' must be an i64 power of two in [32, 512] on a kernel function}}
func.func private @negative_tmem_columns() attributes {tilegpu.tmem_columns = 48 : i64}

// -----

// expected-error @+1 {{'tilegpu.tmem_columns' must be an i64 power of two in [32, 512] on a kernel function}}
module attributes {tilegpu.tmem_columns = 64 : i64} {}

// -----

// expected-error @+1 {{unknown tilegpu attribute 'tilegpu.shared'}}
func.func private @negative_unknown_attribute() attributes {tilegpu.shared = 1024 : i64}

// -----

//===----------------------------------------------------------------------===//
// #tilegpu.target
//===----------------------------------------------------------------------===//

// expected-error @+1 {{unknown chip 'sm_70' (known: }}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_70", family = mma_sync>} {}

// -----

// expected-error @+1 {{chip 'sm_80' has no wgmma matrix units}}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = wgmma>} {}

// -----

// wgmma needs the architecture-specific features of sm_90a.

// expected-error @+1 {{chip 'sm_90' has no wgmma matrix units}}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90", family = wgmma>} {}

// -----

// expected-error @+1 {{chip 'sm_90a' has no tcgen05 matrix units}}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = tcgen05>} {}

// -----

// expected-error @+2 {{failed to parse TileGPU_TargetAttr parameter 'family'}}
// expected-error @+1 {{expected ::tiled_attn::tilegpu::Family to be one of: mma_sync, wgmma, tcgen05}}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = hmma>} {}

// -----

//===----------------------------------------------------------------------===//
// Distributed layouts: the attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{warps must be a power of two in [1, 32], or 12, got 3}}
func.func private @negative_mma_sync_warps(tensor<96x64xf32, #tilegpu.mma_sync<acc, warps = 3>>)

// -----

// expected-error @+1 {{warps must be a power of two in [1, 32], or 12, got 64}}
func.func private @negative_mma_sync_warps_large(tensor<1024xf32, #tilegpu.mma_sync<rows, warps = 64>>)

// -----

// expected-error @+1 {{warps must be a power of two in [1, 32], or 12, got 0}}
func.func private @negative_mma_sync_warps_zero(tensor<64xf32, #tilegpu.mma_sync<cols, warps = 0>>)

// -----

// expected-error @+1 {{warps must be a power of two in [1, 32], or 12, got -1}}
func.func private @negative_mma_sync_warps_negative(tensor<64xf32, #tilegpu.mma_sync<cols, warps = -1>>)

// -----

// expected-error @+1 {{warps must be a power of two in [1, 32], or 12, got 1099511627776}}
func.func private @negative_mma_sync_warps_2_40(tensor<64xf32, #tilegpu.mma_sync<cols, warps = 1099511627776>>)

// -----

// expected-error @+1 {{warpgroups must be in [1, 4], got 0}}
func.func private @negative_wgmma_warpgroups_zero(tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 0>>)

// -----

// expected-error @+1 {{warpgroups must be in [1, 4], got 5}}
func.func private @negative_wgmma_warpgroups_large(tensor<320xf32, #tilegpu.wgmma<rows, warpgroups = 5>>)

// -----

// Warpgroups side by side on an accumulator's columns: column_blocks
// divides warpgroups, splits an accumulator and its row and column
// vectors (never a register lhs), and leaves 64 rows a row block and
// N / column_blocks columns a multiple of 8 up to 256 each.

// expected-error @+1 {{column_blocks must divide warps (8), got 3}}
func.func private @negative_mma_sync_column_blocks(tensor<64x96xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 3>>)

// -----

// expected-error @+1 {{column_blocks splits an accumulator and its row and column vectors, not an A operand (each warp would need the whole lhs)}}
func.func private @negative_mma_sync_column_blocks_opa(tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 8, column_blocks = 2>>)

// -----

// expected-error @+1 {{a tile of shape 2-d [64, 24] in #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2> needs rank 2, rows a multiple of 16 x warps / column_blocks and columns of 8 in each column block}}
func.func private @negative_mma_sync_column_blocks_shape(tensor<64x24xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>)

// -----

// expected-error @+1 {{column_blocks must divide warpgroups (2), got 3}}
func.func private @negative_wgmma_column_blocks(tensor<64x96xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 3>>)

// -----

// expected-error @+1 {{column_blocks splits an accumulator and its row and column vectors, not a register A operand (each warpgroup would need the whole lhs)}}
func.func private @negative_wgmma_column_blocks_opa(tensor<64x64xf16, #tilegpu.wgmma<opa, warpgroups = 2, column_blocks = 2>>)

// -----

// expected-error @+1 {{#tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2> needs 64 rows (64 per row block) and N a multiple of 8 up to 256 in each column block}}
func.func private @negative_wgmma_column_blocks_shape(tensor<64x72xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>)

// -----

// expected-error @+1 {{#tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2> needs a vector of a multiple of 8 columns in each column block}}
func.func private @negative_wgmma_column_blocks_cols(tensor<24xf32, #tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2>>)

// -----

// expected-error @+1 {{warps must be 4, 8 or 16 (whole quadrants), got 2}}
func.func private @negative_tmem_lanes_warps(tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 2>>)

// -----

// expected-error @+1 {{warps must be 4, 8 or 16 (whole quadrants), got 32}}
func.func private @negative_tmem_lanes_warps_large(tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 32>>)

// -----

// wgmma's kinds are acc, rows, cols and opa.

// expected-error @+2 {{failed to parse TileGPU_WgmmaLayoutAttr parameter 'kind'}}
// expected-error @+1 {{expected ::tiled_attn::tilegpu::WgmmaKind to be one of: acc, rows, cols, opa}}
func.func private @negative_wgmma_kind(tensor<64x64xf16, #tilegpu.wgmma<opb, warpgroups = 1>>)

// -----

// expected-error @+1 {{#tilegpu.wgmma<opa, warpgroups = 2> needs 128 rows (64 per warpgroup) and K a multiple of 16}}
func.func private @negative_wgmma_opa_rows(tensor<64x64xf16, #tilegpu.wgmma<opa, warpgroups = 2>>)

// -----

// expected-error @+1 {{a box row of 256 bytes: TMA copies rows of a multiple of 16 bytes, and a swizzled box row spans exactly the swizzle (128 bytes)}}
func.func private @negative_tensor_map_box(!tilegpu.tensor_map<64x128xf16, swizzle = 128>)

// -----

// expected-error @+1 {{a tensor map's box is rows x cols, each in [1, 256]}}
func.func private @negative_tensor_map_rows(!tilegpu.tensor_map<512x64xf16, swizzle = 128>)

// -----

// expected-error @+1 {{a tensor map of f16, bf16, f32, i8 or i32, not 'f64'}}
func.func private @negative_tensor_map_type(!tilegpu.tensor_map<64x16xf64, swizzle = 128>)

// -----

// expected-error @+1 {{a tensor_map parameter, and only it, gives its !tilegpu.tensor_map type (after a colon)}}
func.func private @negative_param_map_missing(!llvm.ptr {tilegpu.param = #tilegpu.param<tensor_map, "k">})

// -----

// expected-error @+1 {{a tensor_map parameter, and only it, gives its !tilegpu.tensor_map type (after a colon)}}
func.func private @negative_param_map_on_base(memref<f16> {tilegpu.param = #tilegpu.param<base, "k" : !tilegpu.tensor_map<64x64xf16, swizzle = 128>>})

// -----

func.func @negative_tma_box(%map: !tilegpu.tensor_map<64x64xf16, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  %bars = tilegpu.alloc : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  // expected-error @+1 {{copies panels of '!tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>' with '!tilegpu.tensor_map<64x64xf16, swizzle = 128>': the box must be one panel}}
  %r = tilegpu.tma_load %map[%i, %i, %i, %i] into %buf, %bars[%i] : !tilegpu.tensor_map<64x64xf16, swizzle = 128>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_tma_gather_box(%map: !tilegpu.tensor_map<64x64xf16, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  %bars = tilegpu.alloc : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  // expected-error @+1 {{the box must be one panel (all stored rows, or one gather group's}}
  %r = tilegpu.tma_load %map[%i, %i, %i, %i] gather(%i, %i, %i, %i) into %buf, %bars[%i] : !tilegpu.tensor_map<64x64xf16, swizzle = 128>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_tma_gather_atoms(%map: !tilegpu.tensor_map<4x64xf16, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x16xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  %bars = tilegpu.alloc : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  // expected-error @+1 {{gathers 16 stored rows in 4 groups: each must be a multiple of 8 rows (whole swizzle atoms)}}
  %r = tilegpu.tma_load %map[%i, %i, %i, %i] gather(%i, %i, %i, %i) into %buf, %bars[%i] : !tilegpu.tensor_map<4x64xf16, swizzle = 128>, !tilegpu.buffer<64x16xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_async_copy_gather(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{gathers 64 stored rows in 3 equal groups, each at a leading index of a view of rank 3 or more}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] gather(%i, %i, %i) into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_tma_barriers(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  // expected-error @+1 {{expects mbarriers, a rank-1 shared buffer of i64}}
  %r = tilegpu.tma_load %map[%i, %i, %i, %i] into %buf, %bars[%i] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_wgmma_padded_rhs(%q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                     %k: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>,
                                     %acc: tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  // expected-error @+1 {{wgmma reads shared operands in swizzled panels}}
  %s = tilegpu.mma %q, %k, %acc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #tilegpu.role
//===----------------------------------------------------------------------===//

// expected-error @+1 {{role 'producer' needs at least one warp}}
func.func private @negative_role_no_warps() attributes {role = #tilegpu.role<"producer", warps = 0>}

// -----

// expected-error @+1 {{role 'producer': a register budget is a multiple of 8 in [24, 256], got 16}}
func.func private @negative_role_registers_small() attributes {role = #tilegpu.role<"producer", warps = 4, registers = 16>}

// -----

// expected-error @+1 {{role 'consumer': a register budget is a multiple of 8 in [24, 256], got 264}}
func.func private @negative_role_registers_large() attributes {role = #tilegpu.role<"consumer", warps = 8, registers = 264>}

// -----

// expected-error @+1 {{role 'consumer': a register budget is a multiple of 8 in [24, 256], got 100}}
func.func private @negative_role_registers_not_multiple_of_8() attributes {role = #tilegpu.role<"consumer", warps = 8, registers = 100>}

// -----

// At most 32 warps (1024 threads) in all: a role of INT64_MAX warps ran the
// verifier out of memory (found by test/Fuzz).
func.func @negative_roles_too_many_warps() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op has 1048640 warps in its roles; a CTA has at most 32 (1024 threads)}}
  tilegpu.warp_specialize [#tilegpu.role<"first", warps = 64>, #tilegpu.role<"second", warps = 9223372036854775807>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_roles_33_warps() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op has 33 warps in its roles; a CTA has at most 32 (1024 threads)}}
  tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 32>, #tilegpu.role<"producer", warps = 1>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// setmaxnreg sets a whole warpgroup's budget: roles that share a warpgroup
// share one budget, and a budget covers whole warpgroups.
func.func @negative_role_budget_partial_warpgroup() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op role 'producer': a register budget applies to whole warpgroups, but warps 4-5 are not one warpgroup of one budget}}
  tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 4>, #tilegpu.role<"producer", warps = 2, registers = 24>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_role_budgets_differ_in_warpgroup() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op role 'producer': a register budget applies to whole warpgroups, but warps 4-7 are not one warpgroup of one budget}}
  tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 4, registers = 240>, #tilegpu.role<"producer", warps = 1, registers = 24>, #tilegpu.role<"mma", warps = 3, registers = 48, active = 1>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// -----

// expected-error @+1 {{role 'producer': 5 active warps, but it has 4}}
func.func private @negative_role_active_too_many() attributes {role = #tilegpu.role<"producer", warps = 4, active = 5>}

// -----

// expected-error @+1 {{role 'producer': -1 active warps, but it has 4}}
func.func private @negative_role_active_negative() attributes {role = #tilegpu.role<"producer", warps = 4, active = -1>}

// -----

//===----------------------------------------------------------------------===//
// #tilegpu.shared, #tilegpu.tensor_memory and !tilegpu.buffer
//===----------------------------------------------------------------------===//

// expected-error @+1 {{swizzle must be 0 (none), 32, 64 or 128 bytes, got 16}}
func.func private @negative_swizzle_mode(!tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 16>>)

// -----

// expected-error @+1 {{pad must be non-negative, got -8}}
func.func private @negative_pad(!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = -8>>)

// -----

// expected-error @+1 {{a swizzled buffer has no padding (swizzle = 128, pad = 8)}}
func.func private @negative_swizzle_and_pad(!tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, pad = 8>>)

// -----

// expected-error @+1 {{a buffer's encoding must say where it lives (#tilegpu.shared or #tilegpu.tensor_memory), got #tilegpu.mma_sync<acc, warps = 4>}}
func.func private @negative_buffer_register_layout(!tilegpu.buffer<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>)

// -----

// expected-error @+1 {{a buffer's encoding must say where it lives (#tilegpu.shared or #tilegpu.tensor_memory), got 3 : i64}}
func.func private @negative_buffer_encoding_integer(!tilegpu.buffer<64x64xf16, 3 : i64>)

// -----

// expected-error @+1 {{a buffer has 1 to 3 positive static dimensions (slots x rows x columns)}}
func.func private @negative_buffer_rank_4(!tilegpu.buffer<2x2x64x64xf16, #tilegpu.shared<>>)

// -----

// expected-error @+1 {{a buffer has 1 to 3 positive static dimensions (slots x rows x columns)}}
func.func private @negative_buffer_rank_0(!tilegpu.buffer<f16, #tilegpu.shared<>>)

// -----

// expected-error @+1 {{a buffer has 1 to 3 positive static dimensions (slots x rows x columns)}}
func.func private @negative_buffer_empty_ring(!tilegpu.buffer<0x64x64xf16, #tilegpu.shared<>>)

// -----

// expected-error @+1 {{a shared buffer holds integers or floats, not 'index'}}
func.func private @negative_shared_index(!tilegpu.buffer<64x64xindex, #tilegpu.shared<>>)

// -----

// expected-error @+1 {{a rank-1 shared buffer (mbarriers) takes the plain #tilegpu.shared<> encoding}}
func.func private @negative_mbarriers_padded(!tilegpu.buffer<2xi64, #tilegpu.shared<pad = 8>>)

// -----

// expected-error @+1 {{a 128-byte swizzle needs stored rows of a multiple of 128 bytes, got 64}}
func.func private @negative_swizzle_short_rows(!tilegpu.buffer<128x32xf16, #tilegpu.shared<swizzle = 128>>)

// -----

// A transposed tile's stored rows are its columns: 32 f16 here.

// expected-error @+1 {{a 128-byte swizzle needs stored rows of a multiple of 128 bytes, got 64}}
func.func private @negative_swizzle_transposed_short_rows(!tilegpu.buffer<32x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>)

// -----

// expected-error @+1 {{a 32-byte swizzle needs stored rows of a multiple of 32 bytes, got 16}}
func.func private @negative_swizzle_32_short_rows(!tilegpu.buffer<3x64x8xf16, #tilegpu.shared<swizzle = 32>>)

// -----

// expected-error @+1 {{a tensor-memory tile has rank 2 and at most 128 rows (lanes), or blocks of 128 rows}}
func.func private @negative_tmem_rows(!tilegpu.buffer<192x64xf32, #tilegpu.tensor_memory<>>)

// -----

// expected-error @+1 {{a tensor-memory tile has rank 2 and at most 128 rows (lanes)}}
func.func private @negative_tmem_ring_rows(!tilegpu.buffer<2x192x64xf32, #tilegpu.tensor_memory<>>)

// -----

// expected-error @+1 {{a tensor-memory tile has rank 2 and at most 128 rows (lanes)}}
func.func private @negative_tmem_rank_1(!tilegpu.buffer<128xf32, #tilegpu.tensor_memory<>>)

// -----

// expected-error @+1 {{tensor memory holds 32-bit elements, or packed 16-bit ones, not 'f16'}}
func.func private @negative_tmem_f16_unpacked(!tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<>>)

// -----

// expected-error @+1 {{tensor memory holds 32-bit elements, or packed 16-bit ones, not 'i8'}}
func.func private @negative_tmem_i8_packed(!tilegpu.buffer<128x64xi8, #tilegpu.tensor_memory<packed = true>>)

// -----

//===----------------------------------------------------------------------===//
// tilegpu.alloc
//===----------------------------------------------------------------------===//

func.func @negative_alloc_offset() {
  // expected-error @+1 {{'tilegpu.alloc' op attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %b = tilegpu.alloc offset(-128) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_alloc_padded_alignment() {
  // expected-error @+1 {{'tilegpu.alloc' op offset 64 is not a multiple of 128, the alignment of '!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %b = tilegpu.alloc offset(64) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A 128-byte swizzle repeats every 8 rows of 128 bytes: 1024-byte alignment.

func.func @negative_alloc_swizzled_alignment() {
  // expected-error @+1 {{'tilegpu.alloc' op offset 512 is not a multiple of 1024, the alignment of '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<swizzle = 128>>'}}
  %b = tilegpu.alloc offset(512) : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<swizzle = 128>>
  return
}

// -----

func.func @negative_alloc_tmem_alignment() {
  // expected-error @+1 {{'tilegpu.alloc' op offset 16 is not a multiple of 32, the alignment of '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %b = tilegpu.alloc offset(16) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

// The custom form only parses a !tilegpu.buffer; the generic form reaches
// the ODS constraints (also in the cases below that use it).

func.func @negative_alloc_memref() {
  // expected-error @+1 {{'tilegpu.alloc' op result #0 must be a buffer, but got 'memref<64x64xf16, 3>'}}
  %b = "tilegpu.alloc"() : () -> memref<64x64xf16, 3>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.slot
//===----------------------------------------------------------------------===//

func.func @negative_slot_of_tile(%i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.slot' op expects a ring (slots x rows x columns), got '!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %s = tilegpu.slot %b[%i] : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_slot_shape(%i: index) {
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.slot' op result '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>' must be one tile of '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_slot_element_type(%i: index) {
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.slot' op result '!tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>' must be one tile of '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_slot_encoding(%i: index) {
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.slot' op result '!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>' must be one tile of '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_slot_ring_argument(%ring: !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>, %i: index) {
  // expected-error @+1 {{'tilegpu.slot' op expects the ring to come from a tilegpu.alloc}}
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_slot_index_type(%i: i32) {
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.slot' op operand #1 must be index, but got 'i32'}}
  %s = "tilegpu.slot"(%ring, %i) : (!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>, i32)
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.async_copy
//===----------------------------------------------------------------------===//

func.func @negative_async_copy_index_count(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op expects 4 tile indices for '!tile.view<?x?x?x64xf16>', got 3}}
  %c = tilegpu.async_copy %v[%i, %i, %i] into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_copy_view_rank_1(%v: !tile.view<64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op copies a 2-d block of the last two dimensions of a view of rank 2 or more}}
  %c = tilegpu.async_copy %v[%i] into %b
      : !tile.view<64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_copy_into_ring(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op copies into one tile, not the ring '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>' (take a tilegpu.slot of it)}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %ring
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_copy_into_rank_1(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64xf16, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.async_copy' op copies into a rank-2 tile, not '!tilegpu.buffer<64xf16, #tilegpu.shared<>>'}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64xf16, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_async_copy_element_type(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op element types differ: '!tile.view<?x?x?x64xf16>' and '!tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>'}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_copy_row_width(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op a 64x128 tile stores rows of 128 elements, but the view's rows have 64}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// K is copied as it is in global memory; the buffer holds Kᵀ, so its rows
// (not its columns) are the view's.

func.func @negative_async_copy_transposed_row_width(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // expected-error @+1 {{'tilegpu.async_copy' op a 128x64 transposed tile stores rows of 128 elements, but the view's rows have 64}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %b
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_async_copy_into_tmem(%v: !tile.view<?x?x?x64xf32>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  // expected-error @+1 {{custom op 'tilegpu.async_copy' 'dst' must be a buffer in shared memory, but got '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %c = tilegpu.async_copy %v[%i, %i, %i, %i] into %b
      : !tile.view<?x?x?x64xf32>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_async_copy_into_tmem_generic(%v: !tile.view<?x?x?x64xf32>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  // expected-error @+1 {{'tilegpu.async_copy' op operand #5 must be a buffer in shared memory, but got '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %c = "tilegpu.async_copy"(%v, %i, %i, %i, %i, %b)
      <{operandSegmentSizes = array<i32: 1, 4, 0, 1>}>
      : (!tile.view<?x?x?x64xf32>, index, index, index, index,
         !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>)
      -> !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_async_copy_from_memref(%v: memref<?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op operand #0 must be}}
  %c = "tilegpu.async_copy"(%v, %i, %i, %b)
      <{operandSegmentSizes = array<i32: 1, 2, 0, 1>}>
      : (memref<?x64xf16>, index, index, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>)
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_copy_result_type(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.async_copy' op failed to verify that the result is the destination buffer}}
  %c = "tilegpu.async_copy"(%v, %i, %i, %i, %i, %b)
      <{operandSegmentSizes = array<i32: 1, 4, 0, 1>}>
      : (!tile.view<?x?x?x64xf16>, index, index, index, index,
         !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>)
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 16>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.async_wait
//===----------------------------------------------------------------------===//

func.func @negative_async_wait_pending(%b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.async_wait' op attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %w = tilegpu.async_wait %b pending(-1) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_async_wait_tmem(%b: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.async_wait' op operand #0 must be a buffer in shared memory, but got '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %w = "tilegpu.async_wait"(%b) : (!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>)
      -> !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_async_wait_result_type(%b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.async_wait' op failed to verify that the result is the awaited buffer}}
  %w = "tilegpu.async_wait"(%b) : (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>)
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.local_load and the shapes the layouts take
//===----------------------------------------------------------------------===//

func.func @negative_local_load_shape(%b: !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.local_load' op reads '!tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>' into a different tile, 'tensor<128x128xf16, #tilegpu.mma_sync<opa, warps = 4>>'}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
      -> tensor<128x128xf16, #tilegpu.mma_sync<opa, warps = 4>>
  return
}

// -----

func.func @negative_local_load_element_type(%b: !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.local_load' op reads '!tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>' into a different tile, 'tensor<128x64xbf16, #tilegpu.mma_sync<opa, warps = 4>>'}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
      -> tensor<128x64xbf16, #tilegpu.mma_sync<opa, warps = 4>>
  return
}

// -----

func.func @negative_tmem_scale_store_view(%o: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                          %inv: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>,
                                          %out: !tile.view<?x?x?x128xbf16>, %i: index) {
  // expected-error @+1 {{'tilegpu.tmem_scale_store' op stores rows of 64 columns into a view whose rows have 128}}
  tilegpu.tmem_scale_store %o, %inv to %out[%i, %i, %i, %i] : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
      tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>, !tile.view<?x?x?x128xbf16>
  return
}

// -----

func.func @negative_tmem_scale_store_indices(%o: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                             %inv: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>,
                                             %out: !tile.view<?x?x?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tilegpu.tmem_scale_store' op takes one index per dimension of '!tile.view<?x?x?x64xbf16>' (at least 2), not 2}}
  tilegpu.tmem_scale_store %o, %inv to %out[%i, %i] : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
      tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>, !tile.view<?x?x?x64xbf16>
  return
}

// -----

func.func @negative_tmem_scale_store_scales(%o: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                            %inv: tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>,
                                            %out: !tile.view<?x?x?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tilegpu.tmem_scale_store' op takes the scales as tensor<128xf32, #tilegpu.tmem_lanes<rows, ...>>, not 'tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>'}}
  tilegpu.tmem_scale_store %o, %inv to %out[%i, %i, %i, %i] : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
      tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>, !tile.view<?x?x?x64xbf16>
  return
}

// -----

func.func @negative_local_store_shape(%b: !tilegpu.buffer<128xf32, #tilegpu.shared<>>,
                                      %v: tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes 'tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>' into a different tile, '!tilegpu.buffer<128xf32, #tilegpu.shared<>>'}}
  tilegpu.local_store %v, %b : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, !tilegpu.buffer<128xf32, #tilegpu.shared<>>
  return
}

// -----

// An accumulator goes into one shared tile (quad fragments: padded or
// swizzled; tensor-memory lanes: swizzled) as its stored matrix: the tile,
// or with a transposed encoding its transpose; not into a ring.

func.func @negative_local_store_ring(%b: !tilegpu.buffer<2x64x64xbf16, #tilegpu.shared<swizzle = 128>>,
                                     %v: tensor<64x64xbf16, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes an accumulator into a two-dimensional shared buffer only, got 'tensor<64x64xbf16, #tilegpu.mma_sync<acc, warps = 4>>' and '!tilegpu.buffer<2x64x64xbf16, #tilegpu.shared<swizzle = 128>>'}}
  tilegpu.local_store %v, %b : tensor<64x64xbf16, #tilegpu.mma_sync<acc, warps = 4>>, !tilegpu.buffer<2x64x64xbf16, #tilegpu.shared<swizzle = 128>>
  return
}

// -----

func.func @negative_local_store_transposed_shape(%b: !tilegpu.buffer<64x32xbf16, #tilegpu.shared<pad = 8, transposed = true>>,
                                                 %v: tensor<64x32xbf16, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes 'tensor<64x32xbf16, #tilegpu.mma_sync<acc, warps = 4>>' as the stored matrix of '!tilegpu.buffer<64x32xbf16, #tilegpu.shared<pad = 8, transposed = true>>', which holds another}}
  tilegpu.local_store %v, %b : tensor<64x32xbf16, #tilegpu.mma_sync<acc, warps = 4>>, !tilegpu.buffer<64x32xbf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_local_store_lanes_unswizzled(%b: !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>,
                                                 %v: tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes a #tilegpu.tmem_lanes accumulator into swizzled panels only, not '!tilegpu.buffer<128x64xf32, #tilegpu.shared<>>'}}
  tilegpu.local_store %v, %b : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_local_store_lanes_transposed_shape(%b: !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                                       %v: tensor<128x64xbf16, #tilegpu.tmem_lanes<acc, warps = 8>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes 'tensor<128x64xbf16, #tilegpu.tmem_lanes<acc, warps = 8>>' as the stored matrix of '!tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>', which holds another}}
  tilegpu.local_store %v, %b : tensor<128x64xbf16, #tilegpu.tmem_lanes<acc, warps = 8>>, !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  return
}

// -----

func.func @negative_local_store_layout(%b: !tilegpu.buffer<128xf32, #tilegpu.shared<>>,
                                       %v: tensor<128xf32, #tilegpu.tmem_lanes<cols, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.local_store' op writes #tilegpu.tmem_lanes<rows> vectors or accumulators only, not 'tensor<128xf32, #tilegpu.tmem_lanes<cols, warps = 4>>'}}
  tilegpu.local_store %v, %b : tensor<128xf32, #tilegpu.tmem_lanes<cols, warps = 4>>, !tilegpu.buffer<128xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_local_store_no_layout(%b: !tilegpu.buffer<128xf32, #tilegpu.shared<>>, %v: tensor<128xf32>) {
  // expected-error @+1 {{'tilegpu.local_store' op operand #0 must be a tile in a distributed (register) layout, but got 'tensor<128xf32>'}}
  tilegpu.local_store %v, %b : tensor<128xf32>, !tilegpu.buffer<128xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_local_load_no_layout(%b: !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.local_load' op result #0 must be a tile in a distributed (register) layout, but got 'tensor<128x64xf16>'}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>> -> tensor<128x64xf16>
  return
}

// -----

func.func @negative_local_load_tmem(%b: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.local_load' op operand #0 must be a buffer in shared memory, but got '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
      -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
  return
}

// -----

// 8 warps of 16 rows each need 128 rows.

func.func @negative_mma_sync_acc_rows(%b: !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 2-d [64, 64] in #tilegpu.mma_sync<acc, warps = 8> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>
      -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
  return
}

// -----

func.func @negative_mma_sync_acc_cols(%b: !tilegpu.buffer<64x12xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 2-d [64, 12] in #tilegpu.mma_sync<acc, warps = 4> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x12xf32, #tilegpu.shared<>>
      -> tensor<64x12xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_sync_acc_rank(%b: !tilegpu.buffer<128xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 1-d [128] in #tilegpu.mma_sync<acc, warps = 4> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128xf32, #tilegpu.shared<>>
      -> tensor<128xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

// An A operand's columns are k-steps of 16.

func.func @negative_mma_sync_opa_cols(%b: !tilegpu.buffer<64x24xf16, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 2-d [64, 24] in #tilegpu.mma_sync<opa, warps = 4> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x24xf16, #tilegpu.shared<>>
      -> tensor<64x24xf16, #tilegpu.mma_sync<opa, warps = 4>>
  return
}

// -----

func.func @negative_mma_sync_rows_length(%b: !tilegpu.buffer<96xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 1-d [96] in #tilegpu.mma_sync<rows, warps = 4> needs rank 1 and a length that is a multiple of 16 x warps}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<96xf32, #tilegpu.shared<>>
      -> tensor<96xf32, #tilegpu.mma_sync<rows, warps = 4>>
  return
}

// -----

func.func @negative_mma_sync_rows_rank(%b: !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 2-d [128, 64] in #tilegpu.mma_sync<rows, warps = 4> needs rank 1 and a length that is a multiple of 16 x warps}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
      -> tensor<128x64xf32, #tilegpu.mma_sync<rows, warps = 4>>
  return
}

// -----

func.func @negative_mma_sync_cols_length(%b: !tilegpu.buffer<60xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{a tile of shape 1-d [60] in #tilegpu.mma_sync<cols, warps = 4> needs rank 1 and a length that is a multiple of 8}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<60xf32, #tilegpu.shared<>>
      -> tensor<60xf32, #tilegpu.mma_sync<cols, warps = 4>>
  return
}

// -----

func.func @negative_wgmma_acc_rows(%b: !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{#tilegpu.wgmma<acc, warpgroups = 2> needs 128 rows (64 per warpgroup) and N a multiple of 8 up to 256}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>
      -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_wgmma_acc_wide(%b: !tilegpu.buffer<64x512xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{#tilegpu.wgmma<acc, warpgroups = 1> needs 64 rows (64 per warpgroup) and N a multiple of 8 up to 256}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x512xf32, #tilegpu.shared<>>
      -> tensor<64x512xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
  return
}

// -----

func.func @negative_wgmma_rows(%b: !tilegpu.buffer<128xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{#tilegpu.wgmma<rows, warpgroups = 1> needs 64 rows (64 per warpgroup)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128xf32, #tilegpu.shared<>>
      -> tensor<128xf32, #tilegpu.wgmma<rows, warpgroups = 1>>
  return
}

// -----

func.func @negative_tmem_lanes_rows(%b: !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{#tilegpu.tmem_lanes<acc, warps = 4> needs 128 rows (one row per tensor-memory lane)}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>
      -> tensor<64x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
  return
}

// -----

func.func @negative_tmem_lanes_cols(%b: !tilegpu.buffer<128x6xf32, #tilegpu.shared<>>) {
  // expected-error @+2 {{#tilegpu.tmem_lanes<acc, warps = 16> splits the columns between 4 warps per quadrant; 6 columns do not split evenly}}
  %t = tilegpu.local_load %b : !tilegpu.buffer<128x6xf32, #tilegpu.shared<>>
      -> tensor<128x6xf32, #tilegpu.tmem_lanes<acc, warps = 16>>
  return
}

// -----

// expected-error @+1 {{#tilegpu.tmem_lanes<rows, warps = 4> takes rank-1 tiles}}
func.func private @negative_tmem_lanes_rows_rank(tensor<128x2xf32, #tilegpu.tmem_lanes<rows, warps = 4>>)

// -----

// expected-error @+1 {{#tilegpu.tmem_lanes<rows, warps = 4> needs 128 rows (one row per tensor-memory lane)}}
func.func private @negative_tmem_lanes_rows_count(tensor<64xf32, #tilegpu.tmem_lanes<rows, warps = 4>>)

// -----

// expected-error @+1 {{#tilegpu.tmem_lanes<cols, warps = 8> splits the columns between 2 warps per quadrant; 5 columns do not split evenly}}
func.func private @negative_tmem_lanes_cols_split(tensor<5xf32, #tilegpu.tmem_lanes<cols, warps = 8>>)

// -----

//===----------------------------------------------------------------------===//
// tilegpu.mma
//===----------------------------------------------------------------------===//

func.func @negative_mma_rhs_ring(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects rank-2 operands}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_inner_dim(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<32x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects lhs columns (64) to equal rhs rows (32)}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<32x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_acc_shape(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects a 128x128 accumulator, got 128x64}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_mixed_elements(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects f16 or bf16 operands of one type, got 'f16' and 'bf16'}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_f32_operands(
    %q: !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>,
    %k: !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>,
    %acc: tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects f16 or bf16 operands of one type, got 'f32' and 'f32'}}
  %o = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<>>
        -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_mma_f16_accumulator(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op accumulates in f32, not 'f16'}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

// Warpgroups side by side on the columns each need the whole lhs: it
// comes from shared memory.
func.func @negative_mma_column_blocks_register_lhs(
    %p: tensor<64x64xf16, #tilegpu.wgmma<opa, warpgroups = 1>>,
    %v: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
    %acc: tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>) {
  // expected-error @+1 {{'tilegpu.mma' op takes a shared lhs where the warpgroups split the accumulator's columns, not #tilegpu.wgmma<opa, warpgroups = 1>}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<64x64xf16, #tilegpu.wgmma<opa, warpgroups = 1>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>
        -> tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  return
}

// -----

func.func @negative_mma_transposed_shared_lhs(
    %q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    %acc: tensor<128x128xf32, #tilegpu.mma_sync<acc, warps = 8>>) {
  // expected-error @+1 {{'tilegpu.mma' op a transposed shared lhs in swizzled panels is wgmma's (M-major); mma.sync reads a transposed lhs from padded rows}}
  %o = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
        -> tensor<128x128xf32, #tilegpu.mma_sync<acc, warps = 8>>
  return
}

// -----

func.func @negative_mma_mixed_families(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  // expected-error @+1 {{'tilegpu.mma' op mixes layout families: #tilegpu.mma_sync<opa, warps = 8> and #tilegpu.wgmma<acc, warpgroups = 2>}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_mma_lhs_layout_shape(
    // expected-error @+1 {{a tile of shape 2-d [64, 64] in #tilegpu.mma_sync<opa, warps = 8> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
    %p: tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  %o = tilegpu.mma %p, %v, %acc
      : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_acc_layout_shape(
    %q: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
    %k: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    // expected-error @+1 {{#tilegpu.wgmma<acc, warpgroups = 2> needs 128 rows (64 per warpgroup) and N a multiple of 8 up to 256}}
    %acc: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  %o = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
        -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_mma_lhs_tmem(
    %q: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
    %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    %acc: tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  // expected-error @+1 {{'tilegpu.mma' op operand #0 must be a tile in a distributed (register) layout or a buffer in shared memory, but got '!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>'}}
  %o = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
        -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_mma_rhs_register(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op operand #1 must be a buffer in shared memory, but got 'tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>'}}
  %o = "tilegpu.mma"(%p, %v, %acc)
      : (tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
         tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
         tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>)
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_acc_no_layout(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32>) {
  // expected-error @+1 {{'tilegpu.mma' op operand #2 must be a tile in a distributed (register) layout, but got 'tensor<128x64xf32>'}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32>
  return
}

// -----

func.func @negative_mma_result_type(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op failed to verify that all of {acc, result} have same type}}
  %o = "tilegpu.mma"(%p, %v, %acc)
      : (tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
         !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
         tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>)
      -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.cta_reduce
//===----------------------------------------------------------------------===//

func.func @negative_cta_reduce_no_scratch(
    %rows: tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>) -> f32 {
  // expected-error @+1 {{'tilegpu.cta_reduce' op needs a scratch buffer: the warps of 'tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>' hold different elements}}
  %0 = tilegpu.cta_reduce max %rows : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>> -> f32
  return %0 : f32
}

// -----

func.func @negative_cta_reduce_needless_scratch(
    %cols: tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>>) -> f32 {
  %scratch = tilegpu.alloc : !tilegpu.buffer<1x8xf32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.cta_reduce' op takes no scratch buffer: every warp of 'tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>>' holds the same elements}}
  %0 = tilegpu.cta_reduce max %cols through %scratch
      : tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>>,
        !tilegpu.buffer<1x8xf32, #tilegpu.shared<>> -> f32
  return %0 : f32
}

// -----

func.func @negative_cta_reduce_scratch_shape(
    %rows: tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>) -> f32 {
  %scratch = tilegpu.alloc : !tilegpu.buffer<1x4xf32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.cta_reduce' op takes a 1x8xf32 scratch buffer (one element per warp), not '!tilegpu.buffer<1x4xf32, #tilegpu.shared<>>'}}
  %0 = tilegpu.cta_reduce max %rows through %scratch
      : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>,
        !tilegpu.buffer<1x4xf32, #tilegpu.shared<>> -> f32
  return %0 : f32
}

// -----

func.func @negative_cta_reduce_f16(
    %cols: tensor<64xf16, #tilegpu.mma_sync<cols, warps = 8>>) -> f32 {
  // expected-error @+1 {{'tilegpu.cta_reduce' op reduces f32 tiles, not 'tensor<64xf16, #tilegpu.mma_sync<cols, warps = 8>>'}}
  %0 = tilegpu.cta_reduce max %cols : tensor<64xf16, #tilegpu.mma_sync<cols, warps = 8>> -> f32
  return %0 : f32
}


// -----

//===----------------------------------------------------------------------===//
// tilegpu.staged_store
//===----------------------------------------------------------------------===//

func.func @negative_staged_store_staging_shape(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op stages 'tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>' through a different tile, '!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A tile whose warpgroups split its columns is stored by each warpgroup
// directly, never staged.
func.func @negative_staged_store_column_blocks(
    %o: tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op stages no tile whose warpgroups split its columns, got 'tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_staged_store_staging_element_type(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.staged_store' op stages 'tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>' through a different tile, '!tilegpu.buffer<128x64xf32, #tilegpu.shared<>>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_staged_store_view_element_type(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xbf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op stores 'f16' into a view of 'bf16'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xbf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_staged_store_index_count(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op expects 4 tile indices for '!tile.view<?x?x?x64xf16>', got 2}}
  tilegpu.staged_store %o, %ov[%i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_staged_store_value_layout_shape(
    // expected-error @+1 {{a tile of shape 2-d [64, 64] in #tilegpu.mma_sync<acc, warps = 8> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
    %o: tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 8>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 8>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_staged_store_no_layout(
    %o: tensor<128x64xf16>, %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op operand #0 must be a tile in a distributed (register) layout, but got 'tensor<128x64xf16>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

func.func @negative_mbarrier_init_element_type(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_init' op expects mbarriers, a rank-1 shared buffer of i64, got '!tilegpu.buffer<2xi32, #tilegpu.shared<>>'}}
  tilegpu.mbarrier_init %bars[%s], count(1) : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_init_count(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_init' op attribute 'count' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  tilegpu.mbarrier_init %bars[%s], count(0) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_arrive_rank_2(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2x2xi64, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_arrive_expect_tx' op expects mbarriers, a rank-1 shared buffer of i64, got '!tilegpu.buffer<2x2xi64, #tilegpu.shared<>>'}}
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(16384) : !tilegpu.buffer<2x2xi64, #tilegpu.shared<>>
  return
}

// -----

// The transaction count of an mbarrier is 20 bits wide.

func.func @negative_mbarrier_arrive_bytes(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_arrive_expect_tx' op expects fewer than 2^20 transaction bytes, got 1048576}}
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(1048576) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_arrive_zero_bytes(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_arrive_expect_tx' op attribute 'bytes' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(0) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_arrive_element_type(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_arrive' op expects mbarriers, a rank-1 shared buffer of i64, got '!tilegpu.buffer<2xi32, #tilegpu.shared<>>'}}
  tilegpu.mbarrier_arrive %bars[%s] : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_wait_element_type(%s: index, %p: i1) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xf32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_wait' op expects mbarriers, a rank-1 shared buffer of i64, got '!tilegpu.buffer<2xf32, #tilegpu.shared<>>'}}
  tilegpu.mbarrier_wait %bars[%s], phase(%p) : !tilegpu.buffer<2xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mbarrier_wait_phase_type(%s: index, %p: i32) {
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.mbarrier_wait' op operand #2 must be 1-bit signless integer, but got 'i32'}}
  "tilegpu.mbarrier_wait"(%bars, %s, %p) : (!tilegpu.buffer<2xi64, #tilegpu.shared<>>, index, i32) -> ()
  return
}

// -----

func.func @negative_mbarrier_tmem(%s: index) {
  %bars = tilegpu.alloc : !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
  // expected-error @+1 {{'tilegpu.mbarrier_init' op operand #0 must be a buffer in shared memory, but got '!tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>'}}
  tilegpu.mbarrier_init %bars[%s], count(1) : !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.warp_specialize
//===----------------------------------------------------------------------===//

func.func @negative_warp_specialize_no_roles() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op expects at least one role}}
  tilegpu.warp_specialize []
  return
}

// -----

func.func @negative_warp_specialize_region_count() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op expects one region per role: 2 roles, 1 regions}}
  tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4, registers = 24>,
                           #tilegpu.role<"consumer", warps = 8, registers = 240>] {
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_warp_specialize_duplicate_role() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op role 'consumer' appears twice}}
  tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 4>,
                           #tilegpu.role<"consumer", warps = 4>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_warp_specialize_not_roles() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op attribute 'roles' failed to satisfy constraint: warp roles}}
  tilegpu.warp_specialize [4 : i64] {
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_warp_specialize_region_arguments() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op role regions take no arguments}}
  tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4>] {
  ^bb0(%x: index):
    tilegpu.async_wait_all
  }
  return
}

// -----

func.func @negative_warp_specialize_empty_regions() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op region #0 ('bodies') failed to verify constraint: region with 1 blocks}}
  "tilegpu.warp_specialize"() ({}, {}) {roles = [#tilegpu.role<"a", warps = 4>, #tilegpu.role<"b", warps = 4>]} : () -> ()
  return
}

// -----

func.func @negative_warp_specialize_two_blocks() {
  // expected-error @+1 {{'tilegpu.warp_specialize' op expects region #0 to have 0 or 1 blocks}}
  tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4>] {
    cf.br ^bb1
  ^bb1:
    tilegpu.async_wait_all
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.mma: the layout each operand plays
//===----------------------------------------------------------------------===//

// mma.sync takes its register lhs in the A-operand layout.

func.func @negative_mma_sync_lhs_acc_kind(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects a register lhs in #tilegpu.mma_sync<opa, warps = 4>, not #tilegpu.mma_sync<acc, warps = 4>}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

// 128 rows split over 8 warps or over 4: both tiles are valid on their
// own, but lhs and accumulator must be split by the same warps.

func.func @negative_mma_sync_warps_differ(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects a register lhs in #tilegpu.mma_sync<opa, warps = 4>, not #tilegpu.mma_sync<opa, warps = 8>}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

func.func @negative_mma_sync_acc_opa_kind(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<opa, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op expects the accumulator in the 'acc' layout, not #tilegpu.mma_sync<opa, warps = 4>}}
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<opa, warps = 4>>
  return
}

// -----

func.func @negative_mma_tmem_lanes_acc(
    %q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
    %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    %acc: tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.mma' op has no register accumulator in #tilegpu.tmem_lanes<acc, warps = 4> (tcgen05 accumulates in tensor memory)}}
  %o = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// tilegpu.staged_store: what it can stage
//===----------------------------------------------------------------------===//

// The 16-byte pieces are 8 halves: an f32 tile cannot be staged.

func.func @negative_staged_store_f32(
    %o: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf32>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  // expected-error @+1 {{'tilegpu.staged_store' op cannot stage 'tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>': it takes a 16-bit 'acc' tile whose warps' rows split into 16-byte pieces, a whole number per lane}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf32>,
        !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_staged_store_transposed_staging(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // expected-error @+1 {{'tilegpu.staged_store' op stages through an untransposed, unswizzled buffer, not '!tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_staged_store_swizzled_staging(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  // expected-error @+1 {{'tilegpu.staged_store' op stages through an untransposed, unswizzled buffer, not '!tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>'}}
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  return
}

// -----

func.func @negative_staged_store_rank1_view(
    %o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
    %ov: !tile.view<?xf16>, %i: index) {
  %stage = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // expected-error @+1 {{'tilegpu.staged_store' op stores a 2-d block of the last two dimensions of a view of rank 2 or more}}
  tilegpu.staged_store %o, %ov[%i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Tensor memory: 512 columns, scalar elements
//===----------------------------------------------------------------------===//

// Three slots of 256 f32 columns.

// expected-error @+1 {{a tensor-memory buffer of 768 columns is more than the 512 there are}}
func.func private @negative_tmem_buffer_columns(!tilegpu.buffer<3x128x256xf32, #tilegpu.tensor_memory<>>)

// -----

func.func @negative_alloc_tmem_past_end() {
  // expected-error @+1 {{'tilegpu.alloc' op columns 384 to 640 run past tensor memory's 512}}
  %b = tilegpu.alloc offset(384) : !tilegpu.buffer<128x256xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

// expected-error @+1 {{tensor memory holds integers or floats, not 'index'}}
func.func private @negative_tmem_index(!tilegpu.buffer<128x64xindex, #tilegpu.tensor_memory<>>)

// -----

//===----------------------------------------------------------------------===//
// Discardable attributes: values and owners
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tilegpu.warps' must be an i64 of at least 1}}
func.func private @negative_warps_zero() attributes {tilegpu.warps = 0}

// -----

func.func @negative_shared_bytes_not_on_function() {
  // expected-error @+1 {{'tilegpu.shared_bytes' belongs on a kernel function}}
  %c = arith.constant {tilegpu.shared_bytes = 16 : i64} 0 : index
  return
}

// -----

//===----------------------------------------------------------------------===//
// Encodings verify the tensors that carry them
//===----------------------------------------------------------------------===//

// expected-error @+1 {{#tilegpu.tmem_lanes<acc, warps = 4> needs 128 rows (one row per tensor-memory lane)}}
func.func private @negative_tmem_lanes_type_rows(tensor<64x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>)

// -----

// 8 warps: two per quadrant, each taking half of the columns.

// expected-error @+1 {{#tilegpu.tmem_lanes<acc, warps = 8> splits the columns between 2 warps per quadrant; 63 columns do not split evenly}}
func.func private @negative_tmem_lanes_type_cols(tensor<128x63xf32, #tilegpu.tmem_lanes<acc, warps = 8>>)

// -----

// expected-error @+1 {{a tile of shape 2-d [64, 64] in #tilegpu.mma_sync<acc, warps = 8> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
func.func private @negative_mma_sync_type_shape(tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 8>>)

// -----

// expected-error @+1 {{a tile in shared memory has rank 2, not 1}}
func.func private @negative_shared_tensor_rank1(tensor<64xf16, #tilegpu.shared<>>)

// -----

//===----------------------------------------------------------------------===//
// Kernel parameters (#tilegpu.param on a kernel's arguments)
//===----------------------------------------------------------------------===//

// expected-error @+1 {{argument #0 is a base parameter, so it must be a rank-0 memref, got 'memref<?xf16>'}}
func.func private @negative_param_base_rank(memref<?xf16> {tilegpu.param = #tilegpu.param<base, "q">})

// -----

// expected-error @+1 {{argument #0 is a size parameter, so it must be an integer or index, got 'f32'}}
func.func private @negative_param_size_type(f32 {tilegpu.param = #tilegpu.param<size, "q", dim = 2>})

// -----

// expected-error @+1 {{argument #1 is a scalar parameter, so it must be an integer or a float, got 'memref<f32>'}}
func.func private @negative_param_scalar_type(index {tilegpu.param = #tilegpu.param<scalar, "n">}, memref<f32> {tilegpu.param = #tilegpu.param<scalar, "scale">})

// -----

// expected-error @+1 {{a stride parameter needs a dim >= 0}}
func.func private @negative_param_stride_no_dim(index {tilegpu.param = #tilegpu.param<stride, "q">})

// -----

// expected-error @+1 {{a base parameter has no dim, got 1}}
func.func private @negative_param_base_dim(memref<f16> {tilegpu.param = #tilegpu.param<base, "q", dim = 1>})

// -----

// expected-error @+1 {{a kernel parameter needs a name}}
func.func private @negative_param_no_name(memref<f16> {tilegpu.param = #tilegpu.param<base, "">})

// -----

// expected-error @+1 {{'tilegpu.param' must be a #tilegpu.param on a kernel argument}}
func.func private @negative_param_not_param(index {tilegpu.param = 3 : i64})

// -----

// expected-error @+1 {{unknown tilegpu argument attribute 'tilegpu.warps'}}
func.func private @negative_param_unknown(index {tilegpu.warps = 3 : i64})

// -----

// Only a wgmma product is asynchronous: the wait takes its result.
func.func @mma_wait_not_an_mma(%acc: tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>) {
  // expected-error @+1 {{'tilegpu.mma_wait' op waits for the result of a wgmma tilegpu.mma (the only asynchronous one)}}
  %r = tilegpu.mma_wait %acc : tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @mma_wait_sync_family(%p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>) {
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  // expected-error @+1 {{'tilegpu.mma_wait' op waits for the result of a wgmma tilegpu.mma}}
  %r = tilegpu.mma_wait %o : tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Tensor memory and tcgen05
//===----------------------------------------------------------------------===//

func.func @negative_tmem_mma_shapes(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                    %b: !tilegpu.buffer<32x128xf16, #tilegpu.shared<pad = 8, transposed = true>>,
                                    %d: !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op expects (M x K) · (K x N) into M x N, got 128x64 · 32x128 into 128x128}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<32x128xf16, #tilegpu.shared<pad = 8, transposed = true>>, !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_rows(%a: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                  %b: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                  %d: !tilegpu.buffer<64x128xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op takes M = 128 (one row per tensor-memory lane) or blocks of 128 rows, got 64}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, !tilegpu.buffer<64x128xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_n(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                               %b: !tilegpu.buffer<64x24xf16, #tilegpu.shared<pad = 8>>,
                               %d: !tilegpu.buffer<128x24xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op takes N a multiple of 16 in [16, 256], got 24}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x24xf16, #tilegpu.shared<pad = 8>>, !tilegpu.buffer<128x24xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_k(%a: !tilegpu.buffer<128x8xf32, #tilegpu.tensor_memory<>>,
                               %b: !tilegpu.buffer<8x64xf16, #tilegpu.shared<pad = 8>>,
                               %d: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op takes K a multiple of 16, got 8}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x8xf32, #tilegpu.tensor_memory<>>, !tilegpu.buffer<8x64xf16, #tilegpu.shared<pad = 8>>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_element(%a: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                     %b: !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>,
                                     %d: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op multiplies f16 or bf16 (.kind::f16), not 'f32'}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_mixed(%a: !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>,
                                   %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                   %d: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op multiplies operands of one type, got 'bf16' and 'f16'}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_packed_acc(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                        %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                        %d: !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op accumulates in unpacked f32, not '!tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>'}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

func.func @negative_tmem_mma_transposed_lhs(%a: !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                            %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                            %d: !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op takes a transposed (M-major) shared lhs of one block of 128 rows, got M = 256}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_padded(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                    %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
                                    %d: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op reads shared operands in swizzled panels, not '!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>'}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_ring(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                  %b: !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                  %d: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op rhs must be one 2-D tile, not '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<swizzle = 128>>'}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_shared_acc(%a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                        %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                        %d: !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op operand #2 must be a buffer in tensor memory}}
  tilegpu.tmem_mma %a, %b, %d, accumulate(%f) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<128x64xf32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mma_commit(%bars: !tilegpu.buffer<2xi32, #tilegpu.shared<>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tilegpu.mma_commit' op expects mbarriers, a rank-1 shared buffer of i64, got '!tilegpu.buffer<2xi32, #tilegpu.shared<>>'}}
  tilegpu.mma_commit %bars[%c0] : !tilegpu.buffer<2xi32, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_tmem_load_layout(%s: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_load' op moves tiles in #tilegpu.tmem_lanes<acc>, not #tilegpu.wgmma<acc, warpgroups = 2>}}
  %r = tilegpu.tmem_load %s : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}

// -----

func.func @negative_tmem_load_shape(%s: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_load' op moves a 128x128 tile to or from a buffer of 128x64}}
  %r = tilegpu.tmem_load %s : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
  return
}

// -----

func.func @negative_tmem_load_packed(%p: !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>) {
  // expected-error @+1 {{'tilegpu.tmem_load' op reads unpacked 32-bit tiles, not '!tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>'}}
  %r = tilegpu.tmem_load %p : !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>> -> tensor<128x64xf16, #tilegpu.tmem_lanes<acc, warps = 4>>
  return
}

// -----

func.func @negative_tmem_store_element(%v: tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
                                       %p: !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>) {
  // expected-error @+1 {{'tilegpu.tmem_store' op moves 'f32' to or from a buffer of 'f16'}}
  tilegpu.tmem_store %v, %p : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

func.func @negative_tmem_store_ring(%v: tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
                                    %r: !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_store' op moves a 128x64 tile to or from a buffer of 2x128x64}}
  tilegpu.tmem_store %v, %r : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_scale_rows_packed(%p: !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>,
                                           %alpha: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.tmem_scale_rows' op scales an unpacked f32 accumulator of 128 rows or blocks of 128 rows, not '!tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>'}}
  tilegpu.tmem_scale_rows %p, %alpha : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>, tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
  return
}

// -----

func.func @negative_tmem_scale_rows_columns(%o: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                            %alpha: tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>) {
  // expected-error @+1 {{'tilegpu.tmem_scale_rows' op takes the scales as tensor<128xf32, #tilegpu.tmem_lanes<rows, ...>>, not 'tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>'}}
  tilegpu.tmem_scale_rows %o, %alpha : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, tensor<64xf32, #tilegpu.tmem_lanes<cols, warps = 4>>
  return
}

// -----

func.func @negative_tmem_scale_rows_warps(%o: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
                                          %alpha: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>) {
  // expected-error @+1 {{'tilegpu.tmem_scale_rows' op runs on 4 warps per block of 128 rows (a warp per quadrant of rows), not 8}}
  tilegpu.tmem_scale_rows %o, %alpha : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>
  return
}

// -----

// Two row blocks on 6 warps: 3 per block is not whole quadrants.
// expected-error @+1 {{each of the 2 row blocks takes 4, 8 or 16 warps (whole quadrants), but warps is 6}}
func.func private @negative_tmem_lanes_row_blocks(tensor<256x64xf32, #tilegpu.tmem_lanes<acc, warps = 6, row_blocks = 2>>)

// -----

// expected-error @+1 {{row_blocks must be positive, got 0}}
func.func private @negative_tmem_lanes_no_row_blocks(tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4, row_blocks = 0>>)

// -----

func.func @negative_tmem_lanes_block_rows(%buf: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{#tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2> needs 256 rows (one row per tensor-memory lane, in each of its 2 blocks of 128)}}
  %t = tilegpu.tmem_load %buf : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
  return
}

// -----

func.func @negative_mma_commit_groups(%bars: !tilegpu.buffer<1xi64, #tilegpu.shared<>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tilegpu.mma_commit' op commits 2 groups' products to mbarriers of a buffer of 1}}
  tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_mma_commit_joint(%bars: !tilegpu.buffer<1xi64, #tilegpu.shared<>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tilegpu.mma_commit' op commits jointly with one group: there is no other group's issuer to join}}
  tilegpu.mma_commit %bars[%c0] {joint} : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  return
}

// -----

func.func @negative_group_id_groups() -> index {
  // expected-error @+1 {{'tilegpu.group_id' op attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %g = tilegpu.group_id {groups = 0}
  return %g : index
}

// -----

func.func @negative_group_barrier_groups() {
  // expected-error @+1 {{'tilegpu.group_barrier' op attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  tilegpu.group_barrier {groups = -1}
  return
}

// -----

// row_block names one of the accumulator's blocks of 128 rows.
func.func @negative_tmem_mma_row_block(%q: !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
                                       %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                       %s: !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{'tilegpu.tmem_mma' op issues row block 2 of 2 (blocks of 128 rows)}}
  tilegpu.tmem_mma %q, %k, %s, accumulate(%f) {row_block = 2}
      : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_mma_negative_row_block(%q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                                %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                                %s: !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>, %f: i1) {
  // expected-error @+1 {{attribute 'row_block' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  tilegpu.tmem_mma %q, %k, %s, accumulate(%f) {row_block = -1}
      : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

// An alias lies over its source's rows and within a source block's columns,
// its blocks where the source's are.
func.func @negative_tmem_alias_rows(%s: !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_alias' op aliases tiles of the same rows, got 256 and 128}}
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

func.func @negative_tmem_alias_columns(%s: !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_alias' op takes 128 columns a row block, more than the source's 64}}
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

func.func @negative_tmem_alias_blocks(%s: !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_alias' op puts its row blocks 64 columns apart, the source 128 (set block_columns)}}
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

// block_columns leaves room for a block's own columns.
// expected-error @+1 {{block_columns (32) is 0 or at least a row block's 64 columns}}
func.func private @negative_block_columns(!tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 32>>)

// -----

// An alias names one tile, not a ring.
func.func @negative_tmem_alias_ring(%s: !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>) {
  // expected-error @+1 {{'tilegpu.tmem_alias' op aliases one 2-D tile with another, not '!tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>' and '!tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>'}}
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<128x64xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

// A transposed view keeps the source's bytes: its shape swapped, the pad
// kept, the transposed flag flipped; padded tiles only.
func.func @negative_transpose_view_shape(%s: !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.transpose_view' op gives the source's transpose over the same bytes (shape swapped, pad and swizzle kept, transposed flipped), expected 128x64 with transposed = 1, got '!tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>'}}
  %t = tilegpu.transpose_view %s : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_transpose_view_flag(%s: !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.transpose_view' op gives the source's transpose over the same bytes}}
  %t = tilegpu.transpose_view %s : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

func.func @negative_transpose_view_pad(%s: !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.transpose_view' op gives the source's transpose over the same bytes}}
  %t = tilegpu.transpose_view %s : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 16, transposed = true>>
  return
}

// -----

func.func @negative_transpose_view_swizzle(%s: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>) {
  // expected-error @+1 {{'tilegpu.transpose_view' op gives the source's transpose over the same bytes (shape swapped, pad and swizzle kept, transposed flipped), expected 64x64 with transposed = 1, got '!tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 64, transposed = true>>'}}
  %t = tilegpu.transpose_view %s : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 64, transposed = true>>
  return
}

// -----

func.func @negative_transpose_view_ring(%s: !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>) {
  // expected-error @+1 {{'tilegpu.transpose_view' op transposes one 2-D shared tile, not '!tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>'}}
  %t = tilegpu.transpose_view %s : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

func.func @negative_tma_reduce_box(%map: !tilegpu.tensor_map<32x32xf32, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  // expected-error @+1 {{adds panels of '!tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>' with '!tilegpu.tensor_map<32x32xf32, swizzle = 128>': the box must be one panel}}
  tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>, !tilegpu.tensor_map<32x32xf32, swizzle = 128>
  return
}

// -----

func.func @negative_tma_reduce_f16(%map: !tilegpu.tensor_map<64x64xf16, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>
  // expected-error @+1 {{adds an f32 tile stored as it is (not transposed), got '!tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>'}}
  tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.tensor_map<64x64xf16, swizzle = 128>
  return
}

// -----

func.func @negative_tma_reduce_indices(%map: !tilegpu.tensor_map<64x32xf32, swizzle = 128>, %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  // expected-error @+1 {{expects 4 tile indices (a rank-4 view), got 3}}
  tilegpu.tma_reduce %buf into %map[%i, %i, %i] : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>, !tilegpu.tensor_map<64x32xf32, swizzle = 128>
  return
}

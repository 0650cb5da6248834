// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --convert-tilegpu-to-nvvm

// What convert-tilegpu-to-nvvm refuses. The kernels are written at the GPU
// level, as tilegpu-assign-layouts, convert-tile-to-tilegpu,
// tilegpu-resolve-async-waits and tilegpu-allocate-memory would leave them
// (or, for the cases they never produce, would not). A pattern's error is
// followed by the conversion's own.

//===----------------------------------------------------------------------===//
// The kernel and its module
//===----------------------------------------------------------------------===//

// expected-error @+1 {{convert-tilegpu-to-nvvm: the module has no #tilegpu.target; run tilegpu-attach-target first}}
module {
  func.func @negative_no_target(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    return
  }
}

// -----

// setmaxnreg.inc waits for registers that the other roles free: budgets
// beyond what the CTA was launched with would hang the kernel.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @negative_register_file(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 16 : i64} {
    // expected-error @+1 {{GPU lowering: the roles' register budgets take 67584 registers, more than the 65536 a CTA of 512 threads starts with (128 each; setmaxnreg would wait forever); lower the budgets}}
    tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>, #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>, #tilegpu.role<"mma", warps = 4, registers = 24, active = 1>] {
      tilegpu.async_wait_all
    }, {
      tilegpu.async_wait_all
    }, {
      tilegpu.async_wait_all
    }
    return
  }
}

// -----

// 384 threads start with 168 registers each (64512): 8 warps at 240 and 4
// at 32 would take 65536, all of the SM's file but more than the CTA's, and
// hang (the library's causal attn_mask kernels did, 2026-12-01); 24 fits.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @negative_launch_registers(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 12 : i64} {
    // expected-error @+1 {{GPU lowering: the roles' register budgets take 65536 registers, more than the 64512 a CTA of 384 threads starts with (168 each; setmaxnreg would wait forever); lower the budgets}}
    tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>, #tilegpu.role<"producer", warps = 4, registers = 32, active = 1>] {
      tilegpu.async_wait_all
    }, {
      tilegpu.async_wait_all
    }
    return
  }
}

// -----

// A tensor-memory buffer needs its first column.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_tmem_without_offset(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    // expected-error @+1 {{GPU lowering: the tensor-memory buffer has no offset; run tilegpu-allocate-memory}}
    %s = tilegpu.alloc : !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  // expected-error @+1 {{convert-tilegpu-to-nvvm: kernel argument #0 has type 'memref<4xf32>'; a kernel takes views and integer or float scalars}}
  func.func @negative_memref_argument(%m: memref<4xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  // expected-error @+1 {{convert-tilegpu-to-nvvm: 'negative_no_warps' has no tilegpu.warps; run tilegpu-assign-layouts first}}
  func.func @negative_no_warps(%x: index) attributes {tilegpu.shared_bytes = 0 : i64} {
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  // expected-error @+1 {{convert-tilegpu-to-nvvm: 'negative_no_shared_bytes' has no tilegpu.shared_bytes; run tilegpu-allocate-memory first}}
  func.func @negative_no_shared_bytes(%x: index) attributes {tilegpu.warps = 1 : i64} {
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  // expected-error @+1 {{convert-tilegpu-to-nvvm: a kernel returns nothing, 'negative_returns' returns 1 values}}
  func.func @negative_returns(%x: index) -> index
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    return %x : index
  }
}

// -----

// A tile without a register layout (tilegpu-assign-layouts not run).

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_not_in_registers(%x: f32)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    // expected-error @+1 {{convert-tilegpu-to-nvvm: 'tensor<16x16xf32>' is not in registers; run tilegpu-assign-layouts and convert-tile-to-tilegpu first}}
    %s = tensor.splat %x : tensor<16x16xf32>
    return
  }
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// -----

// A buffer needs its offset (tilegpu-allocate-memory not run): the alloc
// has no lowering.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_alloc_without_offset(%k: !tile.view<?x?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 768 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{failed to legalize operation 'tilegpu.alloc'}}
    %buf = tilegpu.alloc : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    %cp = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %buf
        : !tile.view<?x?x?x16xf16>, !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    %r = tilegpu.async_wait %cp pending(0)
        : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    return
  }
}

// -----

// A wait needs its count of groups in flight (tilegpu-resolve-async-waits
// not run).

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_wait_without_pending(%k: !tile.view<?x?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 768 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    %cp = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %buf
        : !tile.view<?x?x?x16xf16>, !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    // expected-error @+2 {{GPU lowering: the wait has no count of groups in flight; run tilegpu-resolve-async-waits first}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.async_wait'}}
    %r = tilegpu.async_wait %cp
        : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    return
  }
}

// -----

// 4 warps are 128 threads; a 16x16 f16 block is 32 copies of 16 bytes.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_copy_split(%k: !tile.view<?x?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 768 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0)
        : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
    // expected-error @+2 {{GPU lowering: a 16x16 block does not split into 128 threads' 16-byte copies}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.async_copy'}}
    %cp = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %buf
        : !tile.view<?x?x?x16xf16>, !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
    return
  }
}

// -----

// The kernel ABI has rank-4 views (batch, heads, sequence, head dim).

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_copy_rank3(%k: !tile.view<?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 768 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    // expected-error @+2 {{GPU lowering: copies blocks of rank-4 views}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.async_copy'}}
    %cp = tilegpu.async_copy %k[%c0, %c0, %c0] into %buf
        : !tile.view<?x?x16xf16>, !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>
    return
  }
}

//===----------------------------------------------------------------------===//
// mma.sync
//===----------------------------------------------------------------------===//

// -----

// A register tile read from shared memory is an A operand, not an
// accumulator.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_local_load_to_acc(%q: !tile.view<?x?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 768 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
    %cp = tilegpu.async_copy %q[%c0, %c0, %c0, %c0] into %buf
        : !tile.view<?x?x?x16xf16>, !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
    %r = tilegpu.async_wait %cp pending(0)
        : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
    gpu.barrier
    // An accumulator-layout block (a bias block) is read from
    // untransposed buffers.
    // expected-error @+2 {{GPU lowering: reads an accumulator-layout block from untransposed buffers only}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.local_load'}}
    %qa = tilegpu.local_load %r
        : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
        -> tensor<16x16xf16, #tilegpu.mma_sync<acc, warps = 1>>
    return
  }
}

// -----

#acc = #tilegpu.mma_sync<acc, warps = 1>
#opa = #tilegpu.mma_sync<opa, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_convert_opa_to_acc(%x: f16, %o: !tile.view<?x?x?x16xf16>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %q = tensor.splat %x : tensor<16x16xf16, #opa>
    // expected-error @+2 {{GPU lowering: no register move from #tilegpu.mma_sync<opa, warps = 1> to #tilegpu.mma_sync<acc, warps = 1>}}
    // expected-error @+1 {{failed to legalize operation 'tile.convert_layout'}}
    %qa = tile.convert_layout %q : tensor<16x16xf16, #opa> -> tensor<16x16xf16, #acc>
    tile.store %qa, %o[%c0, %c0, %c0, %c0]
        : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
    return
  }
}

// -----

// A row reduction of a tile whose warpgroups split its columns would need
// the other warpgroup's registers.
#blocks = #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>
#rows = #tilegpu.wgmma<rows, warpgroups = 2, column_blocks = 2>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @negative_reduce_column_blocks(%x: f32, %o: !tile.view<?x?x?x64xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 8 : i64} {
    %c0 = arith.constant 0 : index
    %s = tensor.splat %x : tensor<64x64xf32, #blocks>
    // expected-error @+2 {{GPU lowering: a reduction of a tile whose warps split its columns would need the other warps' registers; not supported ('tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>')}}
    // expected-error @+1 {{failed to legalize operation 'tile.reduce'}}
    %r = tile.reduce max %s along 1 : tensor<64x64xf32, #blocks> -> tensor<64xf32, #rows>
    %b = tile.broadcast %r along 1 : tensor<64xf32, #rows> -> tensor<64x64xf32, #blocks>
    tile.store %b, %o[%c0, %c0, %c0, %c0]
        : tensor<64x64xf32, #blocks>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// A column reduction (which tilegpu-assign-layouts accepts, giving cols)
// has no lowering yet.

#acc = #tilegpu.mma_sync<acc, warps = 1>
#cols = #tilegpu.mma_sync<cols, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_column_reduction(%x: f32, %o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %s = tensor.splat %x : tensor<16x16xf32, #acc>
    // expected-error @+2 {{GPU lowering: only row reductions of an accumulator (along 1) are supported}}
    // expected-error @+1 {{failed to legalize operation 'tile.reduce'}}
    %r = tile.reduce max %s along 0 : tensor<16x16xf32, #acc> -> tensor<16xf32, #cols>
    %b = tile.broadcast %r along 0 : tensor<16xf32, #cols> -> tensor<16x16xf32, #acc>
    tile.store %b, %o[%c0, %c0, %c0, %c0]
        : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
    return
  }
}

// -----

#opa = #tilegpu.mma_sync<opa, warps = 1>
#rows = #tilegpu.mma_sync<rows, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_broadcast_to_opa(%x: f16)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %r = tensor.splat %x : tensor<16xf16, #rows>
    // expected-error @+2 {{GPU lowering: broadcasts produce accumulators}}
    // expected-error @+1 {{failed to legalize operation 'tile.broadcast'}}
    %b = tile.broadcast %r along 1 : tensor<16xf16, #rows> -> tensor<16x16xf16, #opa>
    return
  }
}

// -----

#acc = #tilegpu.mma_sync<acc, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_bounds_mask_2d(%x: f32, %n: index, %o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32, #acc>
    %s = tensor.splat %x : tensor<16x16xf32, #acc>
    // expected-error @+2 {{GPU lowering: bounds masks are over columns}}
    // expected-error @+1 {{failed to legalize operation 'tile.bounds_mask'}}
    %m = tile.bounds_mask offsets(%c0, %c0) limits(%n, %n) : tensor<16x16xi1, #acc>
    %sm = arith.select %m, %s, %ninf : tensor<16x16xi1, #acc>, tensor<16x16xf32, #acc>
    tile.store %sm, %o[%c0, %c0, %c0, %c0]
        : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
    return
  }
}

// -----

#acc = #tilegpu.mma_sync<acc, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_masked_store(%x: f16, %o: !tile.view<?x?x16xf16>, %n: index)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %s = tensor.splat %x : tensor<16x16xf16, #acc>
    %m = tile.causal_mask %c0, %n : tensor<16x16xi1, #acc>
    // expected-error @+2 {{GPU lowering: stores take an accumulator tile into a rank-4 view, or an unmasked vector of rows into a rank-3 one}}
    // expected-error @+1 {{failed to legalize operation 'tile.store'}}
    tile.store %s, %o[%c0, %c0, %c0] mask(%m : tensor<16x16xi1, #acc>)
        : tensor<16x16xf16, #acc>, !tile.view<?x?x16xf16>
    return
  }
}

// -----

// A staged store writes 16-byte pieces of 16-bit elements (the verifier
// says so before the lowering runs).

#acc = #tilegpu.mma_sync<acc, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_staged_store_f32(%x: f32, %o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 1536 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %s = tensor.splat %x : tensor<16x16xf32, #acc>
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8>>
    // expected-error @+1 {{'tilegpu.staged_store' op cannot stage 'tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>': it takes a 16-bit 'acc' tile whose warps' rows split into 16-byte pieces, a whole number per lane}}
    tilegpu.staged_store %s, %o[%c0, %c0, %c0, %c0] through %buf
        : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>, !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8>>
    return
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

#rows = #tilegpu.mma_sync<rows, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_dense_constant()
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    // expected-error @+2 {{GPU lowering: only splat tile constants}}
    // expected-error @+1 {{failed to legalize operation 'arith.constant'}}
    %cst = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32, #rows>
    return
  }
}

// -----

// An adding store (atomics: the tcgen05 backward's varlen dQ) takes an
// accumulator tile, not a vector of rows.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_tmem_lanes_adding_rows(%o: !tile.view<?x?x?xf32>, %x: f32)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %r = tensor.splat %x : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    // expected-error @+2 {{GPU lowering: an adding store takes an f32 accumulator tile}}
    // expected-error @+1 {{failed to legalize operation 'tile.store' that was explicitly marked illegal}}
    tile.store %r, %o[%c0, %c0, %c0] add : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>, !tile.view<?x?x?xf32>
    return
  }
}

// -----

// A row reduction in tmem_lanes stays in one thread; with 8 warps a row's
// columns are split between two warps.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_tmem_lanes_reduce_split_row(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 8 : i64} {
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    %x = tilegpu.tmem_load %s : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 8>>
    // expected-error @+2 {{GPU lowering: a row reduction in #tilegpu.tmem_lanes<acc, warps = 8> would combine the column groups of 2 warps; it takes 4 warps per block of 128 rows (a warp per row)}}
    // expected-error @+1 {{failed to legalize operation 'tile.reduce' that was explicitly marked illegal}}
    %m = tile.reduce max %x along 1 : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 8>>
        -> tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_tmem_lanes_broadcast_kind(%o: !tile.view<?x?x?x16xf32>, %n: index)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    %x = tilegpu.tmem_load %s : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %in = tile.bounds_mask offsets(%c0) limits(%n) : tensor<128xi1, #tilegpu.tmem_lanes<cols, warps = 4>>
    // expected-error @+2 {{GPU lowering: a broadcast in tmem_lanes takes a rows (along 1) or cols (along 0) vector of the accumulator's warps}}
    // expected-error @+1 {{failed to legalize operation 'tile.broadcast' that was explicitly marked illegal}}
    %b = tile.broadcast %in along 1 : tensor<128xi1, #tilegpu.tmem_lanes<cols, warps = 4>>
        -> tensor<128x64xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
    %y = arith.select %b, %x, %x : tensor<128x64xi1, #tilegpu.tmem_lanes<acc, warps = 4>>,
        tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tilegpu.tmem_store %y, %s : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    return
  }
}

// -----

// A group barrier on 8 warps split 3 ways is not whole warps per group.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_group_barrier_split() attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 8 : i64} {
    // expected-error @+2 {{GPU lowering: 8 warps do not split into 3 groups}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.group_barrier' that was explicitly marked illegal}}
    tilegpu.group_barrier {groups = 3}
    return
  }
}

// -----

// Group barriers and warpgroup turns would both take the named barriers
// after the roles'.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_groups_and_turns() attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 8 : i64} {
    // expected-note @+1 {{a turn}}
    tilegpu.turn_start
    // expected-error @+1 {{convert-tilegpu-to-nvvm: group barriers and warpgroup turns (ping-pong) in one kernel would share named barriers}}
    tilegpu.group_barrier {groups = 2}
    return
  }
}

// -----

// A product of two row blocks is issued by the first thread of each of two
// groups of warps: 3 warps do not split so.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_tmem_mma_groups(%o: !tile.view<?x?x?x64xf32>)
      attributes {tilegpu.shared_bytes = 49152 : i64, tilegpu.warps = 3 : i64} {
    %false = arith.constant false
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(32768) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    // expected-error @+2 {{GPU lowering: 3 warps do not split into 2 groups}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.tmem_mma' that was explicitly marked illegal}}
    tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
        : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    return
  }
}

// -----

// A block in tcgen05's accumulator lanes is read from TMA's swizzled panels
// (16-byte pieces of a row), not from padded rows.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @negative_lanes_block_padded(%o: !tile.view<?x?x?x64xf32>)
      attributes {tilegpu.shared_bytes = 36864 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.shared<pad = 8>>
    // expected-error @+2 {{GPU lowering: reads a block into #tilegpu.tmem_lanes<acc, warps = 4> from TMA's swizzled panels only, in 16-byte pieces of a row, not from '!tilegpu.buffer<128x64xf32, #tilegpu.shared<pad = 8>>'}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.local_load'}}
    %acc = tilegpu.local_load %buf
        : !tilegpu.buffer<128x64xf32, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tile.store %acc, %o[%c0, %c0, %c0, %c0]
        : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// An adding store (atomic f32 adds) takes an accumulator tile: a vector of
// rows, whose lowering writes each row once, would overwrite.

#rows = #tilegpu.mma_sync<rows, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_store_add_rows(%x: f32, %o: !tile.view<?x?x?xf32>)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %r = tensor.splat %x : tensor<16xf32, #rows>
    // expected-error @+2 {{GPU lowering: an adding store takes an accumulator tile}}
    // expected-error @+1 {{failed to legalize operation 'tile.store'}}
    tile.store %r, %o[%c0, %c0, %c0] add : tensor<16xf32, #rows>, !tile.view<?x?x?xf32>
    return
  }
}

// -----

// A local store of an accumulator writes 16-bit pairs (a transpose on its
// way to an mma's operand), not f32.

#acc = #tilegpu.mma_sync<acc, warps = 1>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @negative_local_store_f32(%x: f32)
      attributes {tilegpu.shared_bytes = 1536 : i64, tilegpu.warps = 1 : i64} {
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8, transposed = true>>
    %s = tensor.splat %x : tensor<16x16xf32, #acc>
    // expected-error @+2 {{GPU lowering: a local store of an accumulator writes 16-bit elements, or 32-bit ones untransposed, got 'tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>' into '!tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8, transposed = true>>'}}
    // expected-error @+1 {{failed to legalize operation 'tilegpu.local_store'}}
    tilegpu.local_store %s, %buf : tensor<16x16xf32, #acc>, !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8, transposed = true>>
    return
  }
}

// tilegpu-simulate-roles.mlir's TMA-reduction cases: a write before the
// wait, no wait at all, both waits.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @write_before_the_wait(%map: !tilegpu.tensor_map<64x32xf32, swizzle = 128>,
                                   %dq: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>, %i: index)
      attributes {tilegpu.shared_bytes = 16384 : i64, tilegpu.warps = 4 : i64} {
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.local_store %dq, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.tensor_map<64x32xf32, swizzle = 128>
    gpu.barrier
    tilegpu.local_store %dq, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.tma_reduce_wait %buf : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @no_wait(%map: !tilegpu.tensor_map<64x32xf32, swizzle = 128>,
                     %dq: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>, %i: index)
      attributes {tilegpu.shared_bytes = 16384 : i64, tilegpu.warps = 4 : i64} {
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.local_store %dq, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.tensor_map<64x32xf32, swizzle = 128>
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @waited(%map: !tilegpu.tensor_map<64x32xf32, swizzle = 128>,
                    %dq: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>, %i: index)
      attributes {tilegpu.shared_bytes = 16384 : i64, tilegpu.warps = 4 : i64} {
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.local_store %dq, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.tensor_map<64x32xf32, swizzle = 128>
    tilegpu.tma_reduce_wait %buf {read} : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    tilegpu.local_store %dq, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.tma_reduce_wait %buf : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    return
  }
}

// tilegpu-simulate-roles.mlir's case of an mbarrier used after a buffer
// placed over its bytes was written (the allocator reusing its memory too
// early), and the same with the mbarrier initialized again first.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @arrive_after_overwrite(%acc: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>)
      attributes {tilegpu.shared_bytes = 16384 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %bar = tilegpu.alloc offset(0) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %bar[%c0], count(4) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    gpu.barrier
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.local_store %acc, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.mbarrier_arrive %bar[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    return
  }
}

// -----

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @initialized_again(%acc: tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>)
      attributes {tilegpu.shared_bytes = 16384 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %bar = tilegpu.alloc offset(0) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %bar[%c0], count(4) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    gpu.barrier
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    tilegpu.local_store %acc, %buf : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>,
        !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    tilegpu.mbarrier_init %bar[%c0], count(4) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.mbarrier_arrive %bar[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    return
  }
}

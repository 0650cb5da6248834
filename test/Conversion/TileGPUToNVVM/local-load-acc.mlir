// RUN: tiled-attn-opt %s -split-input-file --convert-tilegpu-to-nvvm | FileCheck %s

// tilegpu.local_load of a block in the accumulator's layout (a bias or mask
// block staged by block-loads): each lane's column pairs (rows g and g + 8,
// columns 2t and 2t + 1 of each 8-column tile), one vector load of two
// elements each (aligned to the pair's size), from a padded buffer at (row, column), or from TMA's
// swizzled panels (128 bytes: 32 floats a panel row) at the flat index of
// the pair's 16-byte chunk xor-ed with the row mod 8. Into tcgen05's
// accumulator lanes (a row per thread, its registers consecutive columns),
// from the swizzled panels in 16-byte pieces of the thread's row.

// CHECK-LABEL: gpu.func @padded
// CHECK-COUNT-4: vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<16x24xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: vector.load
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @padded(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 1536 : i64, tilegpu.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8>>
    %acc = tilegpu.local_load %buf
        : !tilegpu.buffer<16x16xf32, #tilegpu.shared<pad = 8>>
        -> tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>
    tile.store %acc, %o[%c0, %c0, %c0, %c0]
        : tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>, !tile.view<?x?x?x16xf32>
    return
  }
}

// -----

// CHECK-LABEL: gpu.func @swizzled
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<64x64xf32, #gpu.address_space<workgroup>> into memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// CHECK: vector.load %[[FLAT]][%{{.*}}] {alignment = 8 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-15: vector.load %[[FLAT]]
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @swizzled(%o: !tile.view<?x?x?x64xf32>)
      attributes {tilegpu.shared_bytes = 4096 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
    %acc = tilegpu.local_load %buf
        : !tilegpu.buffer<64x64xf32, #tilegpu.shared<swizzle = 128>>
        -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
    tile.store %acc, %o[%c0, %c0, %c0, %c0]
        : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// CHECK-LABEL: gpu.func @lanes
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<128x64xf32, #gpu.address_space<workgroup>> into memref<8192xf32, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// CHECK: vector.load %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<8192xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-15: vector.load %[[FLAT]]{{.*}}vector<4xf32>
// CHECK-NOT: vector.load
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @lanes(%o: !tile.view<?x?x?x64xf32>)
      attributes {tilegpu.shared_bytes = 32768 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.shared<swizzle = 128>>
    %acc = tilegpu.local_load %buf
        : !tilegpu.buffer<128x64xf32, #tilegpu.shared<swizzle = 128>>
        -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tile.store %acc, %o[%c0, %c0, %c0, %c0]
        : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// A byte mask's block: 16 bytes a piece.
// CHECK-LABEL: gpu.func @lanes_bytes
// CHECK-COUNT-4: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<8192xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK-NOT: vector.load
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @lanes_bytes(%o: !tile.view<?x?x?x64xi8>)
      attributes {tilegpu.shared_bytes = 8192 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %buf = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xi8, #tilegpu.shared<swizzle = 64>>
    %acc = tilegpu.local_load %buf
        : !tilegpu.buffer<128x64xi8, #tilegpu.shared<swizzle = 64>>
        -> tensor<128x64xi8, #tilegpu.tmem_lanes<acc, warps = 4>>
    tile.store %acc, %o[%c0, %c0, %c0, %c0]
        : tensor<128x64xi8, #tilegpu.tmem_lanes<acc, warps = 4>>, !tile.view<?x?x?x64xi8>
    return
  }
}

// The three implementations of the distributed-layout interface, walked
// over every (warp, lane, register): each stays inside its tile and holds
// every element the same number of times; the first lane's registers show
// the fragment each matrix unit defines.

// RUN: tiled-attn-opt %s --mlir-disable-threading --test-tilegpu-layouts -o /dev/null | FileCheck %s

// mma.sync m16n8k16: per (m-tile, n-tile of 8) a lane holds (g, 2t),
// (g, 2t+1), (g+8, 2t), (g+8, 2t+1); the A operand adds columns 8 apart.
// CHECK: tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>: 128 threads x 8 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1) (0, 8) (0, 9) (8, 8) (8, 9)
// CHECK: tensor<64x32xf32, #tilegpu.mma_sync<opa, warps = 4>>: 128 threads x 16 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1) (0, 8) (0, 9) (8, 8) (8, 9) (0, 16)
// A row vector lives in the four lanes of a quad; a column vector in every
// warp.
// CHECK: tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>: 128 threads x 2 registers, each element held 4 time(s)
// CHECK-NEXT: warp 0 lane 0: (0) (8)
// CHECK: tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>: 128 threads x 4 registers, each element held 32 time(s)
func.func private @mma_sync(tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>,
                            tensor<64x32xf16, #tilegpu.mma_sync<opa, warps = 4>>,
                            tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>,
                            tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>)

// column_blocks = 2 on mma.sync: 8 warps on 64 rows, four of 16 rows
// twice, warp w on the columns of block w % 2.
// CHECK: tensor<64x32xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>: 256 threads x 8 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1) (0, 8) (0, 9) (8, 8) (8, 9)
// CHECK: tensor<32xf32, #tilegpu.mma_sync<cols, warps = 8, column_blocks = 2>>: 256 threads x 4 registers, each element held 32 time(s)
func.func private @mma_sync_column_blocks(tensor<64x32xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>,
                                          tensor<32xf32, #tilegpu.mma_sync<cols, warps = 8, column_blocks = 2>>)

// wgmma m64nNk16: two warpgroups of 64 rows, N / 2 registers per thread.
// CHECK: tensor<128x16xf32, #tilegpu.wgmma<acc, warpgroups = 2>>: 256 threads x 8 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1) (0, 8) (0, 9) (8, 8) (8, 9)
// CHECK: tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 1>>: 128 threads x 2 registers, each element held 4 time(s)
func.func private @wgmma(tensor<128x16xf32, #tilegpu.wgmma<acc, warpgroups = 2>>,
                         tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 1>>)

// column_blocks = 2: the two warpgroups side by side on 64 rows, each on
// 8 of the 16 columns.
// CHECK: tensor<64x16xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>: 256 threads x 4 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1)
func.func private @wgmma_column_blocks(tensor<64x16xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>)

// Its vectors: a column vector split as the columns (each element in
// the 32 threads of its warpgroup that hold its column), a row vector the
// same rows in both warpgroups.
// CHECK: tensor<16xf32, #tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2>>: 256 threads x 2 registers, each element held 32 time(s)
// CHECK-NEXT: warp 0 lane 0: (0) (1)
// CHECK: tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 2, column_blocks = 2>>: 256 threads x 2 registers, each element held 8 time(s)
// CHECK-NEXT: warp 0 lane 0: (0) (8)
func.func private @wgmma_column_block_vectors(tensor<16xf32, #tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2>>,
                                              tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 2, column_blocks = 2>>)

// tcgen05.ld 32x32b: one row per lane, consecutive columns per register;
// with 8 warps the two warps of a quadrant split the columns.
// CHECK: tensor<128x8xf32, #tilegpu.tmem_lanes<acc, warps = 4>>: 128 threads x 8 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (0, 2) (0, 3) (0, 4) (0, 5) (0, 6) (0, 7)
// CHECK: tensor<128x8xf32, #tilegpu.tmem_lanes<acc, warps = 8>>: 256 threads x 4 registers, each element held 1 time(s)
// CHECK-NEXT: warp 0 lane 0: (0, 0) (0, 1) (0, 2) (0, 3)
// Its vectors: a row's element in each thread of the row (twice with 8
// warps), the columns of a thread's half in every lane.
// CHECK: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>: 256 threads x 1 registers, each element held 2 time(s)
// CHECK-NEXT: warp 0 lane 0: (0)
// CHECK: tensor<8xf32, #tilegpu.tmem_lanes<cols, warps = 8>>: 256 threads x 4 registers, each element held 128 time(s)
// CHECK-NEXT: warp 0 lane 0: (0) (1) (2) (3)
func.func private @tmem(tensor<128x8xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
                        tensor<128x8xf32, #tilegpu.tmem_lanes<acc, warps = 8>>,
                        tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>,
                        tensor<8xf32, #tilegpu.tmem_lanes<cols, warps = 8>>)

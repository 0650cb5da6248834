// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s

// Row reductions, broadcasts and masks on accumulators. With g = lane / 4
// and t = lane % 4, a lane holds, per 16x8 tile, rows g and g + 8 at
// columns 2t and 2t + 1: a row lives in the four lanes of a quad, so a row
// reduction combines the lane's own registers, then shuffles xor 1 and 2.
// Masks compare each register's coordinates.

// CHECK-LABEL: gpu.func @masked_row_stats(
// CHECK-SAME: %[[X:[^:]*]]: f32 {tilegpu.param = #tilegpu.param<scalar, "arg0">}
// CHECK-SAME: %[[I:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg1">}
// CHECK-SAME: %[[J:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg2">}
// CHECK-SAME: %[[N:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg3">}
// CHECK-SAME: %{{[^:]*}}: memref<f32> {tilegpu.param = #tilegpu.param<base, "arg4">}
// CHECK-DAG: %[[C1_I32:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C2_I32:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[C32_I32:.*]] = arith.constant 32 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// Column offsets of the cols layout (2 n-tiles), and of the acc layout.
// CHECK-DAG: %[[COLS_OFF:.*]] = arith.constant dense<[0, 1, 8, 9]> : vector<4xindex>
// CHECK-DAG: %[[ACC_COLS:.*]] = arith.constant dense<[0, 1, 0, 1, 8, 9, 8, 9]> : vector<8xindex>
// CHECK-DAG: %[[ACC_ROWS:.*]] = arith.constant dense<[0, 0, 8, 8, 0, 0, 8, 8]> : vector<8xindex>
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: %[[S:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>

// The bounds mask: column j + 2t + offset < n.
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %[[C32]] : index
// CHECK-NEXT: %[[T:.*]] = arith.remui %[[LANE]], %[[C4]] : index
// CHECK-NEXT: %[[T2:.*]] = arith.muli %[[T]], %[[C2]] : index
// CHECK-NEXT: %[[COL0:.*]] = arith.addi %[[J]], %[[T2]] : index
// CHECK-NEXT: %[[COL0V:.*]] = vector.broadcast %[[COL0]] : index to vector<4xindex>
// CHECK-NEXT: %[[COLS:.*]] = arith.addi %[[COL0V]], %[[COLS_OFF]] : vector<4xindex>
// CHECK-NEXT: %[[LIMIT:.*]] = vector.broadcast %[[N]] : index to vector<4xindex>
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi slt, %[[COLS]], %[[LIMIT]] : vector<4xindex>
// Broadcast along 0: cols registers to the acc registers of each n-tile.
// CHECK-NEXT: %[[IN2:.*]] = vector.shuffle %[[IN]], %[[IN]] [0, 1, 0, 1, 2, 3, 2, 3] : vector<4xi1>, vector<4xi1>

// The causal mask: column j + 2t + offset <= row i + 16 warp + g + offset.
// CHECK: %[[TID2:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE2:.*]] = arith.remui %[[TID2]], %[[C32]] : index
// CHECK-NEXT: %[[WARP:.*]] = arith.divui %[[TID2]], %[[C32]] : index
// CHECK-NEXT: %[[G:.*]] = arith.divui %[[LANE2]], %[[C4]] : index
// CHECK-NEXT: %[[T_2:.*]] = arith.remui %[[LANE2]], %[[C4]] : index
// CHECK-NEXT: %[[WROW:.*]] = arith.muli %[[WARP]], %[[C16]] : index
// CHECK-NEXT: %[[WG:.*]] = arith.addi %[[WROW]], %[[G]] : index
// CHECK-NEXT: %[[ROW0:.*]] = arith.addi %[[I]], %[[WG]] : index
// CHECK-NEXT: %[[T2_2:.*]] = arith.muli %[[T_2]], %[[C2]] : index
// CHECK-NEXT: %[[COL0_2:.*]] = arith.addi %[[J]], %[[T2_2]] : index
// CHECK-NEXT: %[[ROW0V:.*]] = vector.broadcast %[[ROW0]] : index to vector<8xindex>
// CHECK-NEXT: %[[ROWSV:.*]] = arith.addi %[[ROW0V]], %[[ACC_ROWS]] : vector<8xindex>
// CHECK-NEXT: %[[COL0V_2:.*]] = vector.broadcast %[[COL0_2]] : index to vector<8xindex>
// CHECK-NEXT: %[[COLSV:.*]] = arith.addi %[[COL0V_2]], %[[ACC_COLS]] : vector<8xindex>
// CHECK-NEXT: %[[CAUSAL:.*]] = arith.cmpi sle, %[[COLSV]], %[[ROWSV]] : vector<8xindex>
// CHECK-NEXT: %[[MASK:.*]] = arith.andi %[[IN2]], %[[CAUSAL]] : vector<8xi1>
// CHECK-NEXT: %[[SM:.*]] = arith.select %[[MASK]], %[[S]], %[[NEG_INF]] : vector<8xi1>, vector<8xf32>

// Row max of row g: registers 0, 1 (n-tile 0) and 4, 5 (n-tile 1), then the
// quad.
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[SM]][0] : f32 from vector<8xf32>
// CHECK-NEXT: %[[E1:.*]] = vector.extract %[[SM]][1] : f32 from vector<8xf32>
// CHECK-NEXT: %[[M01:.*]] = arith.maximumf %[[E0]], %[[E1]] : f32
// CHECK-NEXT: %[[E4:.*]] = vector.extract %[[SM]][4] : f32 from vector<8xf32>
// CHECK-NEXT: %[[M014:.*]] = arith.maximumf %[[M01]], %[[E4]] : f32
// CHECK-NEXT: %[[E5:.*]] = vector.extract %[[SM]][5] : f32 from vector<8xf32>
// CHECK-NEXT: %[[MLANE:.*]] = arith.maximumf %[[M014]], %[[E5]] : f32
// CHECK-NEXT: %[[SH1:.*]], %{{.*}} = gpu.shuffle xor %[[MLANE]], %[[C1_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: %[[MX1:.*]] = arith.maximumf %[[MLANE]], %[[SH1]] : f32
// CHECK-NEXT: %[[SH2:.*]], %{{.*}} = gpu.shuffle xor %[[MX1]], %[[C2_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: %[[MAX_G:.*]] = arith.maximumf %[[MX1]], %[[SH2]] : f32
// Row g + 8: registers 2, 3, 6, 7.
// CHECK-NEXT: vector.extract %[[SM]][2] : f32 from vector<8xf32>
// CHECK-NEXT: vector.extract %[[SM]][3] : f32 from vector<8xf32>
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: vector.extract %[[SM]][6] : f32 from vector<8xf32>
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: vector.extract %[[SM]][7] : f32 from vector<8xf32>
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: gpu.shuffle xor %{{.*}}, %[[C1_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: gpu.shuffle xor %{{.*}}, %[[C2_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: %[[MAX_G8:.*]] = arith.maximumf
// CHECK-NEXT: %[[RMAX:.*]] = vector.from_elements %[[MAX_G]], %[[MAX_G8]] : vector<2xf32>

// Row sum: the same with addf.
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[SS1:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %[[C1_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[SS1]] : f32
// CHECK-NEXT: %[[SS2:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %[[C2_I32]], %[[C32_I32]] : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[SS2]] : f32
// CHECK: %[[RSUM:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: gpu.shuffle
// A rows value is a vector<2xf32> (rows g and g + 8).
// CHECK: %[[T:.*]] = arith.addf %[[RMAX]], %[[RSUM]] : vector<2xf32>
// Broadcast along 1: each row's value to its four registers.
// CHECK-NEXT: vector.shuffle %[[T]], %[[T]] [0, 0, 1, 1, 0, 0, 1, 1] : vector<2xf32>, vector<2xf32>
// CHECK: gpu.return
func.func @masked_row_stats(%x: f32, %i: index, %j: index, %n: index,
                            %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %s = tensor.splat %x : tensor<16x16xf32>
  %in = tile.bounds_mask offsets(%j) limits(%n) : tensor<16xi1>
  %in2 = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
  %cm = tile.causal_mask %i, %j : tensor<16x16xi1>
  %mask = arith.andi %in2, %cm : tensor<16x16xi1>
  %sm = arith.select %mask, %s, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
  %rmax = tile.reduce max %sm along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %rsum = tile.reduce sum %sm along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %t = arith.addf %rmax, %rsum : tensor<16xf32>
  %b = tile.broadcast %t along 1 : tensor<16xf32> -> tensor<16x16xf32>
  tile.store %b, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// Two m-tiles: rows g, g + 8, g + 16, g + 24; the second m-tile's registers
// are 8..15.

// CHECK-LABEL: gpu.func @two_m_tiles(
// CHECK-DAG: arith.constant dense<[0, 1, 0, 1, 8, 9, 8, 9, 0, 1, 0, 1, 8, 9, 8, 9]> : vector<16xindex>
// CHECK-DAG: arith.constant dense<[0, 0, 8, 8, 0, 0, 8, 8, 16, 16, 24, 24, 16, 16, 24, 24]> : vector<16xindex>
// CHECK: %[[SM:.*]] = arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-COUNT-2: gpu.shuffle xor
// CHECK-COUNT-2: gpu.shuffle xor
// CHECK: vector.extract %[[SM]][8] : f32 from vector<16xf32>
// CHECK-NEXT: vector.extract %[[SM]][9] : f32 from vector<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.extract %[[SM]][12] : f32 from vector<16xf32>
// CHECK-COUNT-2: gpu.shuffle xor
// CHECK: vector.extract %[[SM]][10] : f32 from vector<16xf32>
// CHECK-NEXT: vector.extract %[[SM]][11] : f32 from vector<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.extract %[[SM]][14] : f32 from vector<16xf32>
// CHECK-COUNT-2: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: %[[R:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT: vector.shuffle %[[R]], %[[R]] [0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3] : vector<4xf32>, vector<4xf32>
func.func @two_m_tiles(%x: f32, %i: index, %j: index,
                       %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<32x16xf32>
  %s = tensor.splat %x : tensor<32x16xf32>
  %cm = tile.causal_mask %i, %j : tensor<32x16xi1>
  %sm = arith.select %cm, %s, %ninf : tensor<32x16xi1>, tensor<32x16xf32>
  %rsum = tile.reduce sum %sm along 1 : tensor<32x16xf32> -> tensor<32xf32>
  %b = tile.broadcast %rsum along 1 : tensor<32xf32> -> tensor<32x16xf32>
  tile.store %b, %o[%c0, %c0, %c0, %c0]
      : tensor<32x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// A window mask: lo <= column - row <= hi. The diagonal of each register is
// (first column - first row) + a constant of the layout: here, rows g and
// g + 8 at columns 2t, 2t + 1 of two 16x8 tiles give [0, 1, -8, -7, 8, 9, 0,
// 1]. The scalars go to the other side (lo - base, hi - base), clamped to
// just outside those constants [-9, 10] and narrowed to i32, so each
// register costs two 32-bit compares with a constant.
// CHECK-LABEL: gpu.func @window_mask(
// CHECK-DAG: %[[MIN:.*]] = arith.constant -9 : index
// CHECK-DAG: %[[MAX:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[DIAGONALS:.*]] = arith.constant dense<[0, 1, -8, -7, 8, 9, 0, 1]> : vector<8xi32>
// CHECK: %[[BASE:.*]] = arith.subi %[[COL:.*]], %[[ROW:.*]] : index
// CHECK: %[[A0:.*]] = arith.subi %[[LO:.*]], %[[BASE]] : index
// CHECK: %[[A1:.*]] = arith.maxsi %[[A0]], %[[MIN]] : index
// CHECK: %[[A2:.*]] = arith.minsi %[[A1]], %[[MAX]] : index
// CHECK: %[[A:.*]] = arith.index_cast %[[A2]] : index to i32
// CHECK: %[[B0:.*]] = arith.subi %[[HI:.*]], %[[BASE]] : index
// CHECK: %[[B1:.*]] = arith.maxsi %[[B0]], %[[MIN]] : index
// CHECK: %[[B2:.*]] = arith.minsi %[[B1]], %[[MAX]] : index
// CHECK: %[[B:.*]] = arith.index_cast %[[B2]] : index to i32
// CHECK: %[[AV:.*]] = vector.broadcast %[[A]] : i32 to vector<8xi32>
// CHECK: %[[ABOVE:.*]] = arith.cmpi sle, %[[AV]], %[[DIAGONALS]] : vector<8xi32>
// CHECK: %[[BV:.*]] = vector.broadcast %[[B]] : i32 to vector<8xi32>
// CHECK: %[[BELOW:.*]] = arith.cmpi sge, %[[BV]], %[[DIAGONALS]] : vector<8xi32>
// CHECK: %[[BAND:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : vector<8xi1>
// CHECK: arith.select %[[BAND]]
func.func @window_mask(%x: f32, %i: index, %j: index, %lo: index, %hi: index,
                       %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %s = tensor.splat %x : tensor<16x16xf32>
  %wm = tile.window_mask %i, %j diagonals(%lo, %hi) : tensor<16x16xi1>
  %sm = arith.select %wm, %s, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
  %rsum = tile.reduce sum %sm along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %b = tile.broadcast %rsum along 1 : tensor<16xf32> -> tensor<16x16xf32>
  tile.store %b, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// A vector of rows (a kernel's log-sum-exps) into a rank-3 view [b, h, rows]
// at block %i: the log is lg2.approx times ln 2 per register, and the first
// lane of each quad (t == 0) writes its rows g and g + 8 where they are
// within the view's rows.

// CHECK-LABEL: gpu.func @store_rows(
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK: %[[LG0:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[LOG0:.*]] = arith.mulf %[[LG0]], %[[LN2]] : f32
// CHECK-NEXT: %[[LG1:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[LOG1:.*]] = arith.mulf %[[LG1]], %[[LN2]] : f32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %{{.*}} : index
// CHECK-NEXT: arith.divui %[[TID]]
// CHECK-NEXT: arith.divui %[[LANE]]
// CHECK-NEXT: %[[T:.*]] = arith.remui %[[LANE]], %{{.*}} : index
// CHECK-NEXT: %[[ROWS:.*]] = memref.dim %[[VIEW:.*]], %{{.*}} : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: arith.addi
// CHECK-NEXT: %[[ROW0:.*]] = arith.addi
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[IN0:.*]] = arith.cmpi ult, %[[ROW0]], %[[ROWS]] : index
// CHECK-NEXT: %[[W0:.*]] = arith.andi %[[FIRST]], %[[IN0]] : i1
// CHECK-NEXT: scf.if %[[W0]] {
// CHECK-NEXT:   memref.store %[[LOG0]], %[[VIEW]][%{{.*}}, %{{.*}}, %[[ROW0]]]
// CHECK: %[[ROW1:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK-NEXT: %[[IN1:.*]] = arith.cmpi ult, %[[ROW1]], %[[ROWS]] : index
// CHECK-NEXT: %[[W1:.*]] = arith.andi %[[FIRST]], %[[IN1]] : i1
// CHECK-NEXT: scf.if %[[W1]] {
// CHECK-NEXT:   memref.store %[[LOG1]], %[[VIEW]][%{{.*}}, %{{.*}}, %[[ROW1]]]
func.func @store_rows(%x: f32, %o: !tile.view<?x?x?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %s = tensor.splat %x : tensor<16x16xf32>
  %r = tile.reduce max %s along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %l = math.log %r : tensor<16xf32>
  tile.store %l, %o[%c0, %c0, %i] : tensor<16xf32>, !tile.view<?x?x?xf32>
  return
}

// -----

// Reductions to a scalar (tilegpu.cta_reduce, one warp: no shared memory).
// A vector of rows lives in the quads' lanes g = lane / 4, each quad's four
// lanes holding the same rows: the lane sums its rows g and g + 8, then
// shuffles xor 4, 8 and 16 (not 1 and 2, which would count a row four
// times). A vector of columns lives in the lanes t = lane % 4, the same in
// every quad: xor 1 and 2. tile.write: the first thread writes, inside the
// view.

// CHECK-LABEL: gpu.func @reduce_to_scalar(
// CHECK-DAG: %[[C4_I32:.*]] = arith.constant 4 : i32
// CHECK: %[[R0:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[X4:.*]], %{{.*}} = gpu.shuffle  xor %[[R0]], %[[C4_I32]], %{{.*}} : f32
// CHECK-NEXT: %[[R1:.*]] = arith.addf %[[R0]], %[[X4]] : f32
// CHECK-NEXT: %[[X8:.*]], %{{.*}} = gpu.shuffle  xor %[[R1]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[R2:.*]] = arith.addf %[[R1]], %[[X8]] : f32
// CHECK-NEXT: %[[X16:.*]], %{{.*}} = gpu.shuffle  xor %[[R2]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[ROWS:.*]] = arith.addf %[[R2]], %[[X16]] : f32
// CHECK-NOT: gpu.barrier
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: %[[C3:.*]] = arith.addf
// CHECK-NEXT: %[[X1:.*]], %{{.*}} = gpu.shuffle  xor %[[C3]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[C4:.*]] = arith.addf %[[C3]], %[[X1]] : f32
// CHECK-NEXT: %[[X2:.*]], %{{.*}} = gpu.shuffle  xor %[[C4]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[COLS:.*]] = arith.addf %[[C4]], %[[X2]] : f32
// CHECK: %[[IN0:.*]] = arith.cmpi ugt, %{{.*}}, %{{.*}} : index
// CHECK: %[[TID0:.*]] = gpu.thread_id  x
// CHECK-NEXT: %[[FIRST0:.*]] = arith.cmpi eq, %[[TID0]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST0]] {
// CHECK-NEXT:   scf.if %[[IN0]] {
// CHECK-NEXT:     memref.store %[[ROWS]], %{{.*}}[%{{.*}}] : memref<?xf32, strided<[1], offset: ?>>
// CHECK: memref.store %[[COLS]]
// CHECK-NOT: gpu.barrier
func.func @reduce_to_scalar(%x: f32, %n: index, %o: !tile.view<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = tensor.splat %x : tensor<16x16xf32>
  %r = tile.reduce max %s along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %rows = tile.reduce sum %r along 0 : tensor<16xf32> -> f32
  %in = tile.bounds_mask offsets(%c0) limits(%n) : tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %c = arith.select %in, %one, %zero : tensor<16xi1>, tensor<16xf32>
  %cols = tile.reduce sum %c along 0 : tensor<16xf32> -> f32
  tile.write %rows, %o[%c0] : f32, !tile.view<?xf32>
  tile.write %cols, %o[%c1] : f32, !tile.view<?xf32>
  return
}

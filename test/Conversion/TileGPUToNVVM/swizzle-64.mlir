// D = 96: stored rows of 192 bytes are 64-byte swizzled panels (32 columns,
// three per tile), on each family that reads TMA's panels. wgmma's case is
// in wgmma.mlir.
//
// tcgen05 (two Q tiles, P over S): the descriptors carry swizzle mode 4
// (64B) in bits 61-63, the version 1 in bit 46, SBO = 8 rows of 64 bytes =
// 512 (32 << 32); K-major (Q, K) LBO 16: 0x8000402000010000; N-major V LBO
// = its panel of 128 rows x 64 bytes = 8192 (512 << 16): 0x8000402002000000.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="p-over-s=1" --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=TCGEN05
// TCGEN05-LABEL: gpu.func @sdpa_fwd
// TCGEN05-SAME: !tilegpu.tensor_map<256x32xf16, swizzle = 64>
// TCGEN05-SAME: !tilegpu.tensor_map<128x32xf16, swizzle = 64>
// TCGEN05-DAG: %[[NMAJOR:.*]] = arith.constant 33554432 : i32
// TCGEN05-DAG: %[[KMAJOR:.*]] = arith.constant 65536 : i32
// TCGEN05-DAG: %[[HI:.*]] = arith.constant -9223301530671644672 : i64
// TCGEN05: arith.ori %{{.*}}, %[[KMAJOR]] : i32
// TCGEN05: arith.ori %{{.*}}, %[[HI]] : i64
// TCGEN05: nvvm.tcgen05.mma
// TCGEN05: arith.ori %{{.*}}, %[[NMAJOR]] : i32
// TCGEN05: arith.ori %{{.*}}, %[[HI]] : i64
// TCGEN05: nvvm.tcgen05.mma
//
// mma.sync with TMA (sm_120a): ldmatrix reads K and V with TMA's 64-byte
// swizzle undone: the 16-byte chunk c of row r of a panel is stored at
// c ^ (r / 2 mod 4) (128-byte panels: r mod 8), rows 32 elements apart,
// panels 64 x 32 elements apart.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_120a \
// RUN:   --tilegpu-assign-layouts="warps=4 tma=1" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=LDMATRIX
// LDMATRIX-LABEL: gpu.func @sdpa_fwd
// LDMATRIX-SAME: !tilegpu.tensor_map<64x32xf16, swizzle = 64>
// LDMATRIX: %[[PANEL:.*]] = arith.divui %[[COL:[0-9]+]], %c32 : index
// LDMATRIX-NEXT: %[[IN:.*]] = arith.remui %[[COL]], %c32 : index
// LDMATRIX-NEXT: %[[CHUNK:.*]] = arith.divui %[[IN]], %c8 : index
// LDMATRIX-NEXT: %[[HALF:.*]] = arith.divui %[[ROW:.*]], %c2 : index
// LDMATRIX-NEXT: %[[PHASE:.*]] = arith.remui %[[HALF]], %c4 : index
// LDMATRIX-NEXT: arith.xori %[[CHUNK]], %[[PHASE]] : index
// LDMATRIX: arith.muli %[[ROW]], %c32 : index
// LDMATRIX-NEXT: arith.muli %[[PANEL]], %c2048 : index
// LDMATRIX: nvgpu.ldmatrix %{{.*}} : memref<6144xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
//
// Both kernels assemble for their chips.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tile-to-ptx="chip=sm_100a warps=8 warp-specialize=1 ring-slots=2 mma-warp=1 p-over-s=1 correction=1 producer-registers=48 consumer-registers=160 correction-registers=56" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm100a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.sm100a.ptx -o %t.sm100a.cubin %}
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tile-to-ptx="chip=sm_120a warps=4 tma=1" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm120a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_120a %t.sm120a.ptx -o %t.sm120a.cubin %}
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm120a.ptx
// PTX: .target sm_120a
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16

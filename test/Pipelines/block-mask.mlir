// The block mask kernel of a mask function (tile-generate-block-mask), from
// the tile level to PTX on every family: its two reductions to a scalar per
// block become tilegpu.cta_reduce through one f32 per warp, and its block
// kinds one byte written by the first thread. ptxas assembles each family's
// PTX. (Its results: test/Kernels, on the host executor.)

// RUN: tiled-attn-opt %s --tile-generate-block-mask="mask-function=document" --tile-vectorize-apply \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu \
// RUN:   | FileCheck %s --check-prefix=GPU
// GPU-LABEL: func.func @block_mask(
// GPU: %[[SCRATCH0:.*]] = tilegpu.alloc : <1x8xf32, #tilegpu.shared<>>
// GPU: %[[SCRATCH1:.*]] = tilegpu.alloc : <1x8xf32, #tilegpu.shared<>>
// GPU: scf.for
// GPU: tilegpu.cta_reduce max %{{.*}} through %[[SCRATCH0]] : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>
// GPU: tilegpu.cta_reduce min %{{.*}} through %[[SCRATCH1]] : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>
// GPU: tile.write

// RUN: tiled-attn-opt %s --tile-generate-block-mask="mask-function=document" --tile-to-ptx="chip=sm_80 warps=8" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin %}
// RUN: tiled-attn-opt %s --tile-generate-block-mask="mask-function=document" --tile-to-ptx="chip=sm_90a warps=8" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm_90a.ptx -o %t.sm_90a.cubin %}
// RUN: tiled-attn-opt %s --tile-generate-block-mask="mask-function=document" --tile-to-ptx="chip=sm_100a warps=4" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_100a.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_100a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.sm_100a.ptx -o %t.sm_100a.cubin %}
// RUN: tiled-attn-opt %s --tile-generate-block-mask="mask-function=document" --tile-to-ptx="chip=sm_120a warps=4" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_120a.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_120a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_120a %t.sm_120a.ptx -o %t.sm_120a.cubin %}

// Per key block: lanes by shuffles, then warps through shared memory
// between barriers; then one byte. (The blocks of the loop need not come in
// program order in the PTX.)
// PTX-LABEL: .entry block_mask(
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: bar.sync 0;
// PTX-DAG: st.shared.{{[bf]}}32
// PTX-DAG: ld.shared
// PTX-DAG: st.global.{{[bu]}}8

func.func @document(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                    %document_ids: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
    -> i1 {
  %dq = tile.read %document_ids[%b, %q_idx] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %document_ids[%b, %kv_idx] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}

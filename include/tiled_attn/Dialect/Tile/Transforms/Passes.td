//===- Passes.td - Transforms on the tile dialect ----------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileDecomposeOnlineSoftmaxPass
    : Pass<"tile-decompose-online-softmax", "::mlir::func::FuncOp"> {
  let summary = "Rewrite tile.online_softmax into reductions and elementwise math";
  let description = [{
    Expands each `tile.online_softmax` into the primitives a GPU lowering
    handles: a row max (`tile.reduce max`), broadcasts, `math.exp`, a row sum,
    and the guard that keeps rows with no visible key free of NaN.

    Before:

    ```mlir
    %m1, %l1, %p, %a = tile.online_softmax %s, %m0, %l0 scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    ```

    After (abridged):

    ```mlir
    %x    = arith.mulf %s, %scale_splat : tensor<16x16xf32>
    %rmax = tile.reduce max %x along 1 : tensor<16x16xf32> -> tensor<16xf32>
    %m1   = arith.maximumf %m0, %rmax : tensor<16xf32>
    %ref  = arith.select %is_neg_inf, %zero, %m1 : tensor<16xi1>, tensor<16xf32>
    %p    = math.exp (%x - broadcast(%ref))
    %a    = math.exp (%m0 - %ref)
    %l1   = %l0 * %a + tile.reduce sum %p
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TileGenerateSdpaPass : Pass<"tile-generate-sdpa", "::mlir::ModuleOp"> {
  let summary = "Add an SDPA forward kernel, built from a configuration, to the module";
  let description = [{
    Appends a FlashAttention-style forward kernel in tile IR: one program per
    `block-m` query rows of one (batch, head), streaming K and V in blocks of
    `block-n` with an online softmax. Any sequence length works: tails are
    padded on load, masked in the scores and masked on store.

    ```
    tiled-attn-opt --tile-generate-sdpa="head-dim=128 dtype=bf16 causal=1 block-m=128 block-n=64" empty.mlir
    ```

    The kernel carries a `tile.sdpa` attribute recording its configuration.
  }];
  let options = [
    Option<"headDim", "head-dim", "int64_t", /*default=*/"64",
           "Head dimension D (a power of two in [16, 256])">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "Element type of Q, K, V and O: f16 or bf16">,
    Option<"causal", "causal", "bool", /*default=*/"false",
           "Apply a causal mask">,
    Option<"causalAlign", "causal-align", "std::string",
           /*default=*/"\"top-left\"",
           "Causal alignment: top-left (PyTorch is_causal) or bottom-right">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"64",
           "Query rows per program (power of two in [16, 256])">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "Keys per inner-loop step (power of two in [16, 256])">,
    Option<"kernelName", "name", "std::string", /*default=*/"\"sdpa_fwd\"",
           "Symbol name of the generated kernel">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::tiled_attn::tile::TileDialect",
  ];
}

#endif // TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD

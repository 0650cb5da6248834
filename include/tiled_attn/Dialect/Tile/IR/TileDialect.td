//===- TileDialect.td - The tile dialect -------------------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tiled_attn::tile";
  let summary = "Block-granular tile programs for attention kernels";
  let description = [{
    The `tile` dialect is the target-independent level of tiled-attn. One
    program instance (a block) loads whole tiles from strided global views,
    multiplies them on the matrix units (`tile.mma`), reduces and broadcasts
    them, and stores a tile back under a bounds mask.

    Tiles are builtin ranked tensors with a static shape whose sizes are
    powers of two or multiples of 16 (FlashAttention-3's 176-key blocks), so
    that upstream `arith` and `math` ops apply elementwise to them. Global
    memory is reached only through `!tile.view` values, whose sizes and
    strides are known at run time.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable function attribute that carries an SDPA
    /// kernel's semantics and schedule.
    static constexpr ::llvm::StringLiteral getSdpaAttrName() {
      return "tile.sdpa";
    }
    /// Name of the argument attribute that carries a kernel argument's
    /// role (#tile.arg).
    static constexpr ::llvm::StringLiteral getArgAttrName() {
      return "tile.arg";
    }
  }];
}

#endif // TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_TD

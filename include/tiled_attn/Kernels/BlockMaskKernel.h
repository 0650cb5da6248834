//===- BlockMaskKernel.h - A block mask from a mask function ----*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_BLOCKMASKKERNEL_H
#define TILED_ATTN_KERNELS_BLOCKMASKKERNEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace tiled_attn {

/// What a block of a block mask is to the block-sparse kernels, as
/// tile-generate-block-mask's kernels write it (one byte per block).
enum class BlockKind : int8_t {
  /// No query of the block sees a key of it: the kernels skip it.
  Empty = 0,
  /// Some do: the kernels visit it with the mask function and the bounds.
  Partial = 1,
  /// Every query (within S_q) sees every key, all within S_k: the kernels
  /// visit it with no mask at all.
  Full = 2,
};

struct BlockMaskKernelConfig {
  /// The mask function (a func.func of the module: (b, h, q_idx, kv_idx:
  /// index, captured inputs...) -> i1).
  std::string maskFunction;
  std::string name = "block_mask";
};

/// Builds, at `builder`'s insertion point (in the module that holds the mask
/// function), the kernel that classifies the kBlockMaskSize x
/// kBlockMaskSize blocks of a [B, H, S_q, S_k] mask given by the function:
/// program (m, h, b) evaluates the function over the blocks of query block
/// m, one key block after another, reduces each to whether some element is
/// visible and whether all are (rows past S_q count as visible, keys past
/// S_k as hidden), and writes its BlockKind to block_kinds[b, h, m, j].
/// Arguments: the function's captured inputs, seq_q, seq_k (index) and
/// block_kinds (an i8 view [B, H, ceil(S_q / 128), ceil(S_k / 128)]).
mlir::FailureOr<mlir::func::FuncOp>
buildBlockMaskKernel(mlir::OpBuilder &builder, mlir::Location loc,
                     const BlockMaskKernelConfig &config);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_BLOCKMASKKERNEL_H

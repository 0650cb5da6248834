//===- SplitMergeKernel.h - Merge split-KV partial results ------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_SPLITMERGEKERNEL_H
#define TILED_ATTN_KERNELS_SPLITMERGEKERNEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace tiled_attn {

struct SplitMergeKernelConfig {
  /// The head dim of V and O (a multiple of blockD).
  int64_t headDimV = 128;
  /// O's element type: f16 or bf16.
  mlir::Type elementType;
  /// Rows per program and columns per step.
  int64_t blockM = 16;
  int64_t blockD = 64;
  /// Chunks read per step of the loop over them: their reads are issued
  /// together, so a step waits one memory latency, not one per chunk. 0:
  /// as many as 64 registers of a warp's lanes hold of the partial outputs
  /// (block_m * block_d / 32 each), at most 8.
  int64_t chunksPerStep = 0;
  std::string name = "split_merge";
};

/// Builds the kernel that merges a split-KV kernel's partial results
/// (tile-generate-sdpa's `split` feature): program (m, h, b) reads, for
/// each of num_splits chunks s, the log-sum-exps lse_partial[b, h *
/// num_splits + s, rows] and the outputs o_partial[b, h * num_splits + s,
/// rows, :] (f32) of block_m query rows, and writes
///
///   lse[b, h, rows] = log(sum_s exp(lse_s))      (-inf: no chunk saw a key)
///   o[b, h, rows, :] = sum_s exp(lse_s - lse) o_s  (0 for such a row)
///
/// blockD columns at a time. Arguments: o_partial, lse_partial, num_splits,
/// o, lse.
mlir::FailureOr<mlir::func::FuncOp>
buildSplitMergeKernel(mlir::OpBuilder &builder, mlir::Location loc,
                      const SplitMergeKernelConfig &config);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_SPLITMERGEKERNEL_H

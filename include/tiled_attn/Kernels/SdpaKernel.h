//===- SdpaKernel.h - Build the SDPA forward kernel in tile IR --*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_SDPAKERNEL_H
#define TILED_ATTN_KERNELS_SDPAKERNEL_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Kernels/KernelVariant.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tiled_attn {

/// What an SDPA forward kernel computes and with which blocks.
struct SdpaKernelConfig {
  int64_t headDim = 64;
  /// The head dim of V and O where it differs from Q's and K's (DeepSeek's
  /// MLA: 192 and 128); 0 is headDim.
  int64_t headDimV = 0;
  /// f16 or bf16.
  mlir::Type elementType;
  /// What it computes besides (KernelVariant.def):
  /// - the mask: none, a causal mask (top_left, bottom_right), or `window`:
  ///   a band of diagonals given at run time by two more arguments
  ///   (window_lo, window_hi), with the key blocks outside it skipped by
  ///   `tile-mask-split`;
  /// - `softcap` (Gemma 2's logit cap): one more f32 argument, softcap, and
  ///   scores softcap * tanh(scale * s / softcap);
  /// - `lse`: one more argument, a [B, H_q, S_q] f32 view, for each query
  ///   row's log-sum-exp (natural log, of the scores the softmax sees);
  /// - `varlen` (variable-length batches): q, k, v, o (and lse) are packed
  ///   tensors seen as [1, H, total, D] ([1, H_q, total_q]), and two more
  ///   arguments, cu_seqlens_q and cu_seqlens_k (rank-1 i32 views of B + 1
  ///   offsets), say where each sequence starts; program (m, h, b) computes
  ///   block m of sequence b. A `window` kernel takes one more index
  ///   argument, window_align (0: the diagonals as given; 1: shifted by each
  ///   sequence's S_k - S_q);
  /// - `sparse`: block-sparse iteration over a block mask (FlexAttention's
  ///   BlockMask) of kBlockMaskSize x kBlockMaskSize blocks, given as four
  ///   captured i32 views (kBlockMaskArguments): per batch entry, query head
  ///   and query block, the number of partial key blocks and their indices,
  ///   and the number of full ones and theirs. The kernel visits the partial
  ///   blocks with the mask function and the keys' bounds, then the full
  ///   ones with neither; a block in neither list costs nothing. blockM and
  ///   blockN divide kBlockMaskSize. Not with a causal or window mask, nor
  ///   varlen;
  /// - score and mask functions (tile.apply's), by name: func.funcs of the
  ///   module the kernel is built in, a score function's result an f32 and a
  ///   mask function's an i1. The score function takes the scaled (and
  ///   capped) score and gives the score the softmax sees; the mask
  ///   function's false hides a key. Their captured inputs (arguments marked
  ///   #tile.arg<captured, "name">) become the kernel's, after the others,
  ///   once per name.
  KernelVariant variant;
  int64_t blockM = 64;
  int64_t blockN = 64;
  /// With `paged`: 0 for pages of any multiple of blockN (a key block lies
  /// in one page), or the one page size, smaller than blockN and dividing
  /// it, the kernel takes: each key block is then gathered from blockN /
  /// pageSize pages (tile.load's gather).
  int64_t pageSize = 0;
  std::string name = "sdpa_fwd";
};

/// Builds the FlashAttention-style forward kernel at the builder's insertion
/// point (inside a module). Returns failure, after reporting through
/// `emitError`, when the configuration is invalid.
mlir::FailureOr<mlir::func::FuncOp>
buildSdpaKernel(mlir::OpBuilder &builder, mlir::Location loc,
                const SdpaKernelConfig &config);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_SDPAKERNEL_H

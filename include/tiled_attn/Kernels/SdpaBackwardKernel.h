//===- SdpaBackwardKernel.h - The SDPA backward pass in tile IR -*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_SDPABACKWARDKERNEL_H
#define TILED_ATTN_KERNELS_SDPABACKWARDKERNEL_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>
#include <vector>

namespace tiled_attn {

/// What the backward pass of an SDPA forward kernel computes, and with
/// which blocks.
struct SdpaBackwardKernelConfig {
  int64_t headDim = 64;
  /// The head dim of V, O and dO where it differs from Q's and K's; 0 is
  /// headDim.
  int64_t headDimV = 0;
  /// q, k, v, o, do and the gradients: f16 or bf16.
  mlir::Type elementType;
  /// The forward's mask: none, a causal mask (top_left, bottom_right) or
  /// `window`: the main and dq kernels take two more index arguments, window_lo
  /// and window_hi, and query i sees key j iff window_lo <= j - i <=
  /// window_hi (the forward's window kernels' band of diagonals).
  tile::CausalMode causal = tile::CausalMode::None;
  /// The forward's softcap (Gemma 2): the main and dq kernels take one more f32
  /// argument, softcap; the scores were softcap * tanh(scale * s /
  /// softcap), and dS takes the chain rule's 1 - tanh^2.
  bool softcap = false;
  /// Variable-length batches (FlashAttention's varlen): q, o, do, dq (and
  /// lse, delta, dq_accum) are packed [1, H_q, total_q, ...] and k, v, dk,
  /// dv [1, H_kv, total_k, D], and every kernel takes cu_seqlens_q (the main
  /// and dq kernels cu_seqlens_k too: rank-1 i32 views of B + 1 offsets);
  /// the grids' z is the sequence. With a window, they also take
  /// window_align (index, after the offsets), as the forward's varlen window
  /// kernels do: 1 shifts the band by each sequence's S_k - S_q
  /// (bottom-right), 0 keeps it as given.
  bool varlen = false;
  /// The forward's score and mask functions (FlexAttention's score_mod and
  /// mask_mod, as the forward generator takes them), by name: func.funcs of
  /// the module the kernels are built in, at most one of each. A score
  /// function f needs its gradient @<f>_grad beside it, in
  /// tile-differentiate-score's form (tile-generate-sdpa-backward derives
  /// it where the module has none). The main and dq kernels apply them to
  /// the scores as the forward did (transposed in the main kernel: keys as
  /// rows), hide what the mask function hides, take dS back through
  /// @<f>_grad, and take the functions' captured inputs after their other
  /// arguments, once per name. Captured inputs get no gradient.
  std::vector<std::string> functions;
  /// Query rows per block (every kernel) and keys per block (the main
  /// kernel's programs), multiples of 16.
  int64_t blockM = 64;
  int64_t blockN = 64;
  /// The main kernel's name; the others add "_preprocess" and
  /// "_postprocess".
  std::string name = "sdpa_bwd";
};

/// The three kernels of the backward pass, launched in this order.
struct SdpaBackwardKernels {
  /// Program (m, h, b): delta[b, h, rows] = rowsum(dO * O) of block m's
  /// query rows (in f32), and those rows of dq_accum set to 0. Arguments:
  /// o, do, delta, dq_accum. Grid: (ceil(S_q / block_m), H_q, B).
  mlir::func::FuncOp preprocess;
  /// Program (n, h_kv, b): key block n of K/V head h_kv, for every query
  /// head of its group and every query block that sees the block, with the
  /// scores computed transposed (keys as rows):
  ///
  ///   Sᵀ = K_n Q_mᵀ,  Pᵀ = exp(scale Sᵀ - lse_m)  (0 where masked)
  ///   dV_n += Pᵀ dO_m,  dPᵀ = V_n dO_mᵀ,  dSᵀ = Pᵀ (dPᵀ - delta_m)
  ///   dK_n += dSᵀ Q_m,  dq_accum[m] += dS K_n   (an adding store)
  ///
  /// then dk = scale dK_n and dv = dV_n. Pᵀ and dSᵀ are rounded to the
  /// element type for their products, as FlashAttention does. Arguments:
  /// q, k, v, do, lse (the forward's, natural log of the scaled scores),
  /// delta, dq_accum, dk, dv, scale. Grid: (ceil(S_k / block_n), H_kv, B).
  mlir::func::FuncOp main;
  /// Program (m, h, b): dq = scale * dq_accum of block m's rows, in the
  /// element type. Arguments: dq_accum, dq, scale. Grid as preprocess's.
  mlir::func::FuncOp postprocess;
  /// The deterministic mode's dQ, launched after the main kernel instead
  /// of the postprocess. Program (m, h, b): query block m of query head h,
  /// over the key blocks it sees, with dQ in registers:
  ///
  ///   S = Q_m K_nᵀ,  P = exp(scale S - lse_m)  (0 where masked)
  ///   dP = dO_m V_nᵀ,  dS = P (dP - delta_m),  dQ_m += dS K_n
  ///
  /// then dq = scale dQ_m in the element type, written once: the same bits
  /// every run (dq_accum, which the main kernel still adds into, is not
  /// read). Arguments: q, k, v, do, lse, delta, dq, scale, then the main
  /// kernel's band, softcap and varlen arguments. Grid as preprocess's.
  mlir::func::FuncOp dq;
};

/// The kernels of the backward pass: preprocess, main and postprocess in
/// launch order; dq (deterministic mode) instead of postprocess.
enum class SdpaBackwardPhase { Preprocess, Main, Postprocess, Dq };

/// "preprocess", "main", "postprocess" or "dq".
llvm::StringRef sdpaBackwardPhaseName(SdpaBackwardPhase phase);

/// The symbol of a phase's kernel: `name` for the main kernel, `name`
/// followed by "_preprocess", "_postprocess" or "_dq" for the others.
std::string sdpaBackwardSymbol(llvm::StringRef name, SdpaBackwardPhase phase);

/// Builds one phase's kernel at the builder's insertion point.
mlir::FailureOr<mlir::func::FuncOp>
buildSdpaBackwardKernel(mlir::OpBuilder &builder, mlir::Location loc,
                        const SdpaBackwardKernelConfig &config,
                        SdpaBackwardPhase phase);

/// Builds the four kernels at the builder's insertion point (a module's
/// body). GQA: K/V head h_kv serves query heads h_kv * G .. h_kv * G + G - 1,
/// G = H_q / H_kv, and its dK, dV sum over them.
mlir::FailureOr<SdpaBackwardKernels>
buildSdpaBackwardKernels(mlir::OpBuilder &builder, mlir::Location loc,
                         const SdpaBackwardKernelConfig &config);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_SDPABACKWARDKERNEL_H

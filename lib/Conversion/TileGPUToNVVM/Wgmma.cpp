//===- Wgmma.cpp - tilegpu.mma to wgmma -----------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `acc += lhs * rhs` on Hopper's warpgroup matrix units. Warpgroup w owns
// rows 64w .. 64w + 63 of the accumulator and issues, per k-step of 16, one
// wgmma.mma_async m64nNk16 (N the accumulator's width):
//
// - rhs in shared memory, read through a descriptor: stored transposed (K,
//   which holds Kᵀ) it is K-major; stored as it is (V) it is N-major, the
//   descriptor's transpose bit set;
// - lhs in shared memory, K-major through a descriptor (Q); or stored
//   transposed (dS, written as dSᵀ's rows), M-major, the descriptor laid
//   out as an N-major rhs's and wgmma's transpose-A bit set; or in registers
//   (P) in the `opa` layout: the register-A form of wgmma, which NVVM in
//   LLVM 22 lacks (llvm-project issue 133733), so it is one inline-asm
//   instruction.
//
// Shared operands are swizzled panels (#tilegpu.shared<swizzle = W>) of
// W = 128, 64 or 32 bytes a row: 64, 32 or 16 columns of 16-bit elements
// (D = 96 takes three 64-byte panels). A descriptor holds the start
// address, the leading and stride byte offsets (all >> 4) and the swizzle
// mode (bits 62-63: 1 = 128B, 2 = 64B, 3 = 32B):
//
// - K-major: 8-row atoms of 8W bytes one after the other (SBO = 8W; LBO
//   unused); k-step k starts 32k bytes on, in the panel holding columns
//   16k .. 16k + 15.
// - N-major: rows are k, W/2 columns of N per panel: SBO = 8W (8 k-rows),
//   LBO = the panel size (the next W/2 columns of N); k-step k starts at
//   row 16k.
//
// The warpgroup fences its registers, issues every k-step and commits them
// as one group; tilegpu.mma_wait (wgmma.wait_group N) lets the accumulator
// be read, N groups after it still in flight.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Target/Encodings.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <string>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// The per-thread accumulator as the struct of N / 2 f32 that wgmma takes,
/// and back.
Value toStruct(OpBuilder &b, Location loc, Value vector) {
  int64_t n = cast<VectorType>(vector.getType()).getNumElements();
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(n, f32));
  Value s = LLVM::UndefOp::create(b, loc, type);
  for (int64_t i = 0; i < n; ++i)
    s = LLVM::InsertValueOp::create(
        b, loc, s, vector::ExtractOp::create(b, loc, vector, i), i);
  return s;
}

Value fromStruct(OpBuilder &b, Location loc, Value s, int64_t n) {
  SmallVector<Value> regs;
  for (int64_t i = 0; i < n; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, s, i));
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({n}, b.getF32Type()), regs);
}

/// One wgmma m64nNk16 with A from registers (four 32-bit registers of two
/// 16-bit elements each): the one instruction NVVM lacks, as inline asm.
Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, Value a8,
                     Value descB, Type elt, int64_t n, bool transB,
                     bool accumulate) {
  int64_t regs = n / 2;
  std::string type = elt.isBF16() ? "bf16" : "f16";
  std::string asmStr =
      "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(regs + 5) +
      ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
      "k16.f32." + type + "." + type + " {";
  for (int64_t i = 0; i < regs; ++i)
    asmStr += (i ? ", $" : "$") + std::to_string(i);
  asmStr += "}, {";
  for (int64_t i = 0; i < 4; ++i)
    asmStr += (i ? ", $" : "$") + std::to_string(regs + i);
  asmStr += "}, $" + std::to_string(regs + 4) + ", p, 1, 1, " +
            (transB ? "1" : "0") + ";\n}";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  constraints += "r,r,r,r,l,r";
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);

  Type i32 = b.getI32Type();
  SmallVector<Value> operands;
  Value words =
      vector::BitCastOp::create(b, loc, VectorType::get({4}, i32), a8);
  for (int64_t i = 0; i < 4; ++i)
    operands.push_back(vector::ExtractOp::create(b, loc, words, i));
  operands.push_back(descB);
  operands.push_back(arith::ConstantIntOp::create(b, loc, i32, accumulate));
  for (int64_t i = 0; i < regs; ++i)
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, acc.getType(), operands, asmStr, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return asmOp.getResult(0);
}

/// The byte offset of stored column `column` in N-major (or M-major)
/// panels: its panel's, plus its place in the panel's rows.
Value panelColumnOffset(OpBuilder &b, Location loc, Value column,
                        int64_t panelColumns, int64_t panelBytes,
                        int64_t elementBytes) {
  Value panel =
      arith::DivUIOp::create(b, loc, column, cIdx(b, loc, panelColumns));
  Value within =
      arith::RemUIOp::create(b, loc, column, cIdx(b, loc, panelColumns));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, panel, cIdx(b, loc, panelBytes)),
      arith::MulIOp::create(b, loc, within, cIdx(b, loc, elementBytes)));
}

struct MmaToWgmma final : OpConversionPattern<MmaOp> {
  MmaToWgmma(TileGPUToNVVMTypeConverter &converter, MLIRContext *ctx,
             bool uniformWarpgroup)
      : OpConversionPattern(converter, ctx),
        uniformWarpgroup(uniformWarpgroup) {}
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto accTy = cast<RankedTensorType>(op.getAcc().getType());
    auto layout = dyn_cast<WgmmaLayoutAttr>(accTy.getEncoding());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not a wgmma accumulator");
    // With column blocks, each warpgroup computes N / blocks of the
    // columns.
    int64_t blocks = layout.getColumnBlocks();
    int64_t n = accTy.getDimSize(1) / blocks;
    BufferType rhsTy = op.getRhs().getType();
    auto rhsEnc = cast<SharedEncodingAttr>(rhsTy.getEncoding());
    Type elt = rhsTy.getElementType();
    // K is the rhs's rows (a K x N tile) whichever way it is stored.
    int64_t k = rhsTy.getTileShape()[0];
    int64_t rhsPanelCols = rhsEnc.getPanelColumns(elt);
    int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
    if (n % 8 || n > 256 || k % 16)
      return op.emitError() << "GPU lowering: wgmma takes N a multiple of 8 "
                               "up to 256 and K a multiple of 16, got N = "
                            << n << ", K = " << k;
    bool transB = !rhsEnc.getTransposed();
    if (transB && n > rhsPanelCols && n % rhsPanelCols)
      return op.emitError() << "GPU lowering: an N-major rhs spans whole "
                               "panels of "
                            << rhsPanelCols << " columns";

    if (!transB && n % 8)
      return op.emitError() << "GPU lowering: a K-major rhs's column block "
                               "starts on an 8-row atom";
    if (transB && blocks > 1 && n % 8)
      return op.emitError() << "GPU lowering: an N-major rhs's column block "
                               "starts on a 16-byte chunk";

    // Warpgroup of this thread: its block of 64 rows, and its block of
    // columns (N-major: n columns of the panels on; K-major: n stored rows
    // of W bytes on).
    // (uniform-warpgroup: a shuffled index, so that what is computed from
    // it stays at the product, in uniform registers.)
    Value group = uniformWarpgroup
                      ? uniformGroupIndex(rewriter, loc, 128)
                      : arith::DivUIOp::create(rewriter, loc,
                                               threadIdInRole(rewriter, loc),
                                               cIdx(rewriter, loc, 128))
                            .getResult();
    Value wg = arith::DivUIOp::create(rewriter, loc, group,
                                      cIdx(rewriter, loc, blocks));
    Value rhsBase = cIdx(rewriter, loc, 0);
    if (blocks > 1) {
      Value col0 = arith::MulIOp::create(
          rewriter, loc,
          arith::RemUIOp::create(rewriter, loc, group,
                                 cIdx(rewriter, loc, blocks)),
          cIdx(rewriter, loc, n));
      if (transB)
        rhsBase = panelColumnOffset(rewriter, loc, col0, rhsPanelCols,
                                    rhsEnc.getPanelBytes(rhsTy.getTileShape()),
                                    eltBytes);
      else
        rhsBase = arith::MulIOp::create(
            rewriter, loc, col0, cIdx(rewriter, loc, rhsEnc.getSwizzle()));
    }

    auto lhsBuffer = dyn_cast<BufferType>(op.getLhs().getType());
    auto lhsEnc = lhsBuffer ? cast<SharedEncodingAttr>(lhsBuffer.getEncoding())
                            : SharedEncodingAttr();
    // The descriptors of swizzled panels, which the op's verifier requires
    // of wgmma's shared operands (LBO 16 where the ISA ignores it).
    auto bits = [&](SharedEncodingAttr panels, int64_t leadingBytes) {
      return swizzledDescriptorBits(
          op, "wgmma", encoding::encodeWgmmaDescriptor, panels, leadingBytes);
    };
    FailureOr<uint64_t> rhsBits =
        bits(rhsEnc, transB ? rhsEnc.getPanelBytes(rhsTy.getTileShape()) : 16);
    // A transposed lhs (dS, stored as dSᵀ's rows) is M-major.
    bool transA = lhsEnc && lhsEnc.getTransposed();
    int64_t lhsPanelBytes =
        lhsEnc ? lhsEnc.getPanelBytes(lhsBuffer.getShape()) : 0;
    if (transA && 64 % lhsEnc.getPanelColumns(elt) &&
        lhsEnc.getPanelColumns(elt) % 64)
      return op.emitError() << "GPU lowering: an M-major lhs spans whole "
                               "panels or whole warpgroups of rows";
    FailureOr<uint64_t> lhsBits =
        lhsEnc ? bits(lhsEnc, transA ? lhsPanelBytes : 16)
               : FailureOr<uint64_t>(0);
    if (failed(rhsBits) || failed(lhsBits))
      return failure();

    // A product into zeros (a score block's) starts with scale-d = 0 and no
    // accumulator: otherwise ptxas may zero its registers one move each
    // (the backward's dPᵀ and dQ products: 48 moves a step).
    bool fromZero = matchPattern(op.getAcc(), m_AnyZeroFloat());
    Value acc =
        fromZero
            ? LLVM::UndefOp::create(
                  rewriter, loc,
                  LLVM::LLVMStructType::getLiteral(
                      rewriter.getContext(),
                      SmallVector<Type>(n / 2, rewriter.getF32Type())))
                  .getResult()
            : toStruct(rewriter, loc, adaptor.getAcc());
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    auto shape = NVVM::MMAShapeAttr::get(rewriter.getContext(), 64, n, 16);
    NVVM::WGMMATypes wt =
        elt.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    for (int64_t kk = 0; kk < k / 16; ++kk) {
      int64_t rhsOffset =
          transB ? kk * 16 * rhsEnc.getSwizzle()
                 : kMajorStepOffset(kk, rhsPanelCols,
                                    rhsEnc.getPanelBytes(rhsTy.getTileShape()),
                                    eltBytes);
      Value descB = sharedDescriptor(
          rewriter, loc, adaptor.getRhs(),
          arith::AddIOp::create(rewriter, loc, rhsBase,
                                cIdx(rewriter, loc, rhsOffset)),
          *rhsBits);
      if (lhsBuffer) {
        // This warpgroup's rows: K-major, 64 rows of the swizzle's bytes
        // into each panel; M-major, stored columns 64 wg on (whole panels,
        // or a part of one). k-step k: 32k bytes on in the K-major panels,
        // stored row 16k of the M-major ones.
        Value lhsBase =
            transA ? panelColumnOffset(
                         rewriter, loc,
                         arith::MulIOp::create(rewriter, loc, wg,
                                               cIdx(rewriter, loc, 64)),
                         lhsEnc.getPanelColumns(elt), lhsPanelBytes, eltBytes)
                   : arith::MulIOp::create(
                         rewriter, loc, wg,
                         cIdx(rewriter, loc, 64 * lhsEnc.getSwizzle()))
                         .getResult();
        int64_t stepOffset =
            transA ? kk * 16 * lhsEnc.getSwizzle()
                   : kMajorStepOffset(kk, lhsEnc.getPanelColumns(elt),
                                      lhsPanelBytes, eltBytes);
        Value lhsOffset = arith::AddIOp::create(
            rewriter, loc, lhsBase, cIdx(rewriter, loc, stepOffset));
        Value descA = sharedDescriptor(rewriter, loc, adaptor.getLhs(),
                                       lhsOffset, *lhsBits);
        acc = NVVM::WgmmaMmaAsyncOp::create(
            rewriter, loc, acc.getType(), acc, descA, descB, shape, wt, wt,
            NVVM::WGMMATypes::f32,
            fromZero && kk == 0 ? NVVM::WGMMAScaleOut::zero
                                : NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
            transA ? NVVM::MMALayout::col : NVVM::MMALayout::row,
            transB ? NVVM::MMALayout::row : NVVM::MMALayout::col,
            /*satfinite=*/nullptr);
      } else {
        // The opa fragment: eight registers per k-step.
        Value a8 = extractRegisters(rewriter, loc, adaptor.getLhs(), kk * 8, 8);
        acc = wgmmaRegisterA(rewriter, loc, acc, a8, descB, elt, n, transB,
                             /*accumulate=*/!(fromZero && kk == 0));
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    rewriter.replaceOp(op, fromStruct(rewriter, loc, acc, n / 2));
    return success();
  }

private:
  bool uniformWarpgroup;
};

struct MmaWaitToNVVM final : OpConversionPattern<MmaWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<uint64_t> pending = op.getPending();
    if (!pending)
      return op.emitError() << "GPU lowering: the wait has no pending count "
                               "(run tilegpu-resolve-async-waits)";
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, op.getLoc(), *pending);
    rewriter.replaceOp(op, adaptor.getAcc());
    return success();
  }
};

} // namespace

void tiled_attn::populateWgmmaToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns,
    bool uniformWarpgroup) {
  patterns.add<MmaToWgmma>(converter, patterns.getContext(), uniformWarpgroup);
  patterns.add<MmaWaitToNVVM>(converter, patterns.getContext());
  // Layout moves, reductions, broadcasts, masks and stores of the
  // accumulator: wgmma's registers are mma.sync's quad fragments.
  populateQuadFragmentPatterns(converter, patterns);
}

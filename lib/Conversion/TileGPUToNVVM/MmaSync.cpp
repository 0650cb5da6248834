//===- MmaSync.cpp - tilegpu.mma to ldmatrix and mma.sync -----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `acc += lhs * rhs` with lhs in A-operand registers (or in shared memory,
// read piece by piece with ldmatrix) and rhs in shared memory: for each k-step
// of 16 and each pair of n-tiles of 8, one ldmatrix.x4 reads the two B
// fragments (transposing on the way when the buffer holds rhs itself, as V
// does; not when it holds rhsᵀ, as K does for Kᵀ), and one mma.sync m16n8k16
// per m-tile and n-tile accumulates in f32.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// One m16n8k16 bf16 mma.sync. nvgpu.mma.sync has no bf16 lowering, so this
/// goes to nvvm.mma.sync with the operands packed two per 32-bit register.
Value mmaSyncBF16(OpBuilder &b, Location loc, Value a8, Value bFrag, Value c4) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  SmallVector<Value> aRegs, bRegs, cRegs;
  Value aWords =
      vector::BitCastOp::create(b, loc, VectorType::get({4}, i32), a8);
  for (int64_t i = 0; i < 4; ++i)
    aRegs.push_back(vector::ExtractOp::create(b, loc, aWords, i));
  for (int64_t i = 0; i < 2; ++i) {
    Value pair = vector::ExtractOp::create(b, loc, bFrag, i);
    Value word =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair);
    bRegs.push_back(vector::ExtractOp::create(b, loc, word, 0));
  }
  for (int64_t i = 0; i < 4; ++i)
    cRegs.push_back(vector::ExtractOp::create(b, loc, c4, i));
  auto resultTy =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, resultTy, aRegs, bRegs, cRegs, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return vector::FromElementsOp::create(b, loc, VectorType::get({4}, f32), out);
}

struct MmaToGPU final : OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto accTy = cast<RankedTensorType>(op.getAcc().getType());
    auto accLayout = dyn_cast<MmaSyncLayoutAttr>(accTy.getEncoding());
    if (!accLayout)
      return rewriter.notifyMatchFailure(op, "not an mma.sync accumulator");
    // A lhs left in shared memory (tilegpu-assign-layouts{smem-lhs}) is read
    // piece by piece with ldmatrix, as its `opa` fragment would hold it.
    auto lhsBuffer = dyn_cast<BufferType>(op.getLhs().getType());
    bool lhsShared = static_cast<bool>(lhsBuffer);
    for (BufferType buffer : {op.getRhs().getType(), lhsBuffer})
      if (buffer && !readsWithLdmatrix(buffer))
        return op.emitError() << "GPU lowering: mma.sync reads 16-bit "
                                 "elements with ldmatrix, got "
                              << buffer;
    Type elt = op.getRhs().getType().getElementType();
    // (With column blocks, each warp computes its block's columns from the
    // rows of the lhs its place in the block gives it, which it reads from
    // shared memory.)
    const int64_t blocks = accLayout.getColumnBlocks();
    if (blocks > 1 && !lhsShared)
      return op.emitError() << "GPU lowering: an mma.sync whose warps split "
                               "the accumulator's columns reads its lhs from "
                               "shared memory";
    Fragment a =
        lhsShared
            ? Fragment::get(MmaSyncLayoutAttr::get(op.getContext(),
                                                   MmaSyncKind::OperandA,
                                                   accLayout.getWarps() /
                                                       blocks),
                            lhsBuffer.getShape())
            : Fragment::get(cast<RankedTensorType>(op.getLhs().getType()));
    Fragment c = Fragment::get(accTy);
    a.columnBlocks = c.columnBlocks;
    a.blockColumns = c.blockColumns;
    Type f32 = rewriter.getF32Type();
    bool rhsStoredTransposed =
        cast<SharedEncodingAttr>(op.getRhs().getType().getEncoding())
            .getTransposed();
    LaneCoords lc(rewriter, loc);
    Value l8 =
        arith::RemUIOp::create(rewriter, loc, lc.lane, cIdx(rewriter, loc, 8));
    // Lanes 8..15 address the second 8x8 matrix: k + 8.
    Value kHalf = arith::MulIOp::create(
        rewriter, loc,
        arith::RemUIOp::create(rewriter, loc,
                               arith::DivUIOp::create(rewriter, loc, lc.lane,
                                                      cIdx(rewriter, loc, 8)),
                               cIdx(rewriter, loc, 2)),
        cIdx(rewriter, loc, 8));

    Value acc = adaptor.getAcc();
    auto aTy = VectorType::get({4, 2}, elt), bTy = VectorType::get({2, 2}, elt),
         cTy = VectorType::get({2, 2}, f32);
    // Lanes 16..31 address the second pair of 8x8 matrices of an x4 load:
    // the next n-tile.
    Value nHalf = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(rewriter, loc, lc.lane, cIdx(rewriter, loc, 16)),
        cIdx(rewriter, loc, 8));
    // The warp's block's first column of the rhs (with column blocks).
    Value blockColumn = lc.blockColumn(rewriter, loc, c);
    if (blockColumn)
      nHalf = arith::AddIOp::create(rewriter, loc, nHalf, blockColumn);
    // One ldmatrix.x4 reads the B fragments of n-tiles (nt, nt + 1); an odd
    // last n-tile takes an x2.
    auto loadB = [&](int64_t kt, int64_t nt, int64_t tiles) {
      Value row, col;
      Value nOff = tiles == 2    ? nHalf
                   : blockColumn ? blockColumn
                                 : cIdx(rewriter, loc, 0);
      if (rhsStoredTransposed) {
        // Buffer is [n][k]: lane l reads row n0 + l % 8 (+8 for the next
        // n-tile) at column k0 (+8 for lanes 8..15 mod 16).
        row = arith::AddIOp::create(
            rewriter, loc, arith::AddIOp::create(rewriter, loc, l8, nOff),
            cIdx(rewriter, loc, nt * 8));
        col = arith::AddIOp::create(rewriter, loc, kHalf,
                                    cIdx(rewriter, loc, kt * 16));
      } else {
        // Buffer is [k][n]: lane l reads row k0 + l % 8 (+8) at column n0
        // (+8 for the next n-tile).
        row = arith::AddIOp::create(
            rewriter, loc, arith::AddIOp::create(rewriter, loc, l8, kHalf),
            cIdx(rewriter, loc, kt * 16));
        col = arith::AddIOp::create(rewriter, loc, nOff,
                                    cIdx(rewriter, loc, nt * 8));
      }
      Value frags =
          ldmatrix(rewriter, loc, adaptor.getRhs(), op.getRhs().getType(), row,
                   col, 2 * tiles, /*transpose=*/!rhsStoredTransposed);
      if (tiles == 1)
        return SmallVector<Value>{frags};
      Value flat = vector::ShapeCastOp::create(
          rewriter, loc, VectorType::get({8}, elt), frags);
      SmallVector<Value> out;
      for (int64_t i = 0; i < 2; ++i)
        out.push_back(vector::ShapeCastOp::create(
            rewriter, loc, bTy,
            extractRegisters(rewriter, loc, flat, 4 * i, 4)));
      return out;
    };
    // The accumulator's pieces of four registers, one per (m-tile, n-tile),
    // updated in place and put back together once at the end (inserting each
    // piece into the whole vector would take a full-width shuffle per
    // mma.sync).
    SmallVector<Value> cPieces;
    for (int64_t i = 0; i < c.mTiles * c.nTiles; ++i)
      cPieces.push_back(extractRegisters(rewriter, loc, acc, 4 * i, 4));
    for (int64_t kt = 0; kt < a.nTiles; ++kt) {
      SmallVector<Value> aPieces;
      for (int64_t mt = 0; mt < a.mTiles; ++mt)
        aPieces.push_back(
            lhsShared ? loadOperandA(rewriter, loc, adaptor.getLhs(), lhsBuffer,
                                     a, mt, kt)
                      : extractRegisters(rewriter, loc, adaptor.getLhs(),
                                         (mt * a.nTiles + kt) * 8, 8));
      for (int64_t nt0 = 0; nt0 < c.nTiles; nt0 += 2) {
        int64_t tiles = std::min<int64_t>(2, c.nTiles - nt0);
        SmallVector<Value> bFrags = loadB(kt, nt0, tiles);
        for (int64_t i = 0; i < tiles; ++i) {
          int64_t nt = nt0 + i;
          Value bFrag = bFrags[i];
          for (int64_t mt = 0; mt < a.mTiles; ++mt) {
            Value &c4 = cPieces[mt * c.nTiles + nt];
            Value a8 = aPieces[mt];
            Value d;
            if (elt.isBF16()) {
              d = mmaSyncBF16(rewriter, loc, a8, bFrag, c4);
            } else {
              Value aFrag = vector::ShapeCastOp::create(rewriter, loc, aTy, a8);
              Value cFrag = vector::ShapeCastOp::create(rewriter, loc, cTy, c4);
              d = nvgpu::MmaSyncOp::create(rewriter, loc, aFrag, bFrag, cFrag,
                                           ArrayRef<int64_t>{16, 8, 16});
              d = vector::ShapeCastOp::create(rewriter, loc,
                                              VectorType::get({4}, f32), d);
            }
            c4 = d;
          }
        }
      }
    }
    rewriter.replaceOp(op, concatRegisters(rewriter, loc, cPieces));
    return success();
  }
};

/// A block in the accumulator's layout (mma.sync's or wgmma's quad
/// fragments) read from an untransposed shared buffer (a bias or mask
/// block a function reads at every score): each lane's column pairs, one
/// vector load of two elements each. With rows padded by 16 bytes, the
/// eight rows of a warp's read of 32-bit pairs fall in distinct banks
/// within each half-warp; in TMA's swizzled panels (W bytes a panel row)
/// a pair lies in one 16-byte chunk, whose index in its row is xor-ed with
/// the row as TMA stores it (ldmatrix() undoes the same swizzle).
static FailureOr<Value> loadAccumulator(OpBuilder &b, Location loc,
                                        LocalLoadOp op, Value buffer) {
  BufferType bufferType = op.getBuffer().getType();
  auto encoding = cast<SharedEncodingAttr>(bufferType.getEncoding());
  if (encoding.getTransposed())
    return op.emitError() << "GPU lowering: reads an accumulator-layout "
                             "block from untransposed buffers only, not "
                          << bufferType;
  Fragment frag = Fragment::get(op.getType());
  Type element = op.getType().getElementType();
  auto c = [&](int64_t v) { return cIdx(b, loc, v); };
  LaneCoords lc(b, loc);
  Value row0 = lc.firstRow(b, loc, frag, c(0));
  Value col0 = lc.firstCol(b, loc, frag, c(0));
  bool swizzled = encoding.getSwizzle() != 0;
  Value flat;
  if (swizzled)
    flat = memref::CollapseShapeOp::create(
        b, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  SmallVector<Value> pieces;
  auto pair = VectorType::get({2}, element);
  // A pair starts at an even column of a row, whose offset in the buffer
  // (padded or swizzled by 16-byte chunks) is a multiple of 16 bytes: the
  // pair is aligned to its size, one load rather than one per element.
  // (Not said of byte pairs: with the 128-key mask kernel's 64 bytes a
  // thread, ptxas then spilled 56 bytes.)
  unsigned bits = element.getIntOrFloatBitWidth();
  llvm::MaybeAlign align;
  if (bits >= 16)
    align = llvm::Align(bits / 8 * 2);
  for (int64_t r = 0; r < frag.size(); r += 2) {
    assert(frag.rowOffset[r] == frag.rowOffset[r + 1] &&
           frag.colOffset[r] + 1 == frag.colOffset[r + 1] &&
           "an accumulator's registers come in column pairs");
    Value row = arith::AddIOp::create(b, loc, row0, c(frag.rowOffset[r]));
    Value col = arith::AddIOp::create(b, loc, col0, c(frag.colOffset[r]));
    pieces.push_back(
        swizzled
            ? vector::LoadOp::create(
                  b, loc, pair, flat,
                  ValueRange{swizzledIndex(b, loc, bufferType, row, col)},
                  /*nontemporal=*/false, align)
            : vector::LoadOp::create(b, loc, pair, buffer, ValueRange{row, col},
                                     /*nontemporal=*/false, align));
  }
  return concatRegisters(b, loc, pieces);
}

/// A block in the accumulator's layout, mma.sync's or wgmma's (quad
/// fragments), read from shared memory: loadAccumulator.
struct LocalLoadToAccumulator final : OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MmaSyncLayoutAttr quad = getQuadFragmentLayout(op.getType().getEncoding());
    if (!quad || quad.getKind() != MmaSyncKind::Acc)
      return rewriter.notifyMatchFailure(op, "not an accumulator's layout");
    FailureOr<Value> acc =
        loadAccumulator(rewriter, op.getLoc(), op, adaptor.getBuffer());
    if (failed(acc))
      return failure();
    rewriter.replaceOp(op, *acc);
    return success();
  }
};

/// An A operand read from shared memory: ldmatrix.x4 per (m-tile, k-step).
struct LocalLoadToNVVM final : OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    auto layout = dyn_cast<MmaSyncLayoutAttr>(type.getEncoding());
    if (!layout || layout.getKind() == MmaSyncKind::Acc)
      return rewriter.notifyMatchFailure(op, "not an mma.sync operand");
    if (layout.getKind() != MmaSyncKind::OperandA)
      return op.emitError() << "GPU lowering: reads A operands from shared "
                               "memory only";
    if (!readsWithLdmatrix(op.getBuffer().getType()))
      return op.emitError() << "GPU lowering: mma.sync reads 16-bit "
                               "elements with ldmatrix, got "
                            << op.getBuffer().getType();
    Location loc = op.getLoc();
    Fragment frag = Fragment::get(type);
    SmallVector<Value> pieces;
    for (int64_t mt = 0; mt < frag.mTiles; ++mt)
      for (int64_t kt = 0; kt < frag.nTiles; ++kt)
        pieces.push_back(loadOperandA(rewriter, loc, adaptor.getBuffer(),
                                      op.getBuffer().getType(), frag, mt, kt));
    rewriter.replaceOp(op, concatRegisters(rewriter, loc, pieces));
    return success();
  }
};

/// acc -> opa keeps the registers as they are: over a pair of n-tiles the
/// accumulator order is the A operand's order.
/// acc -> opa keeps the registers as they are, on mma.sync's fragments and
/// on wgmma's (the same quad fragments).
struct ConvertLayoutInPlace final : OpConversionPattern<tile::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Attribute fromAttr = op.getInput().getType().getEncoding();
    Attribute toAttr = op.getType().getEncoding();
    MmaSyncLayoutAttr from = getQuadFragmentLayout(fromAttr);
    MmaSyncLayoutAttr to = getQuadFragmentLayout(toAttr);
    if (!from || !to || fromAttr.getTypeID() != toAttr.getTypeID())
      return rewriter.notifyMatchFailure(op, "not quad-fragment tiles");
    bool inPlace = from == to || (from.getKind() == MmaSyncKind::Acc &&
                                  to.getKind() == MmaSyncKind::OperandA &&
                                  from.getWarps() == to.getWarps());
    if (!inPlace)
      return op.emitError() << "GPU lowering: no register move from "
                            << fromAttr << " to " << toAttr;
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

} // namespace

void tiled_attn::populateMmaSyncToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MmaToGPU, LocalLoadToNVVM>(converter, patterns.getContext());
  populateQuadFragmentPatterns(converter, patterns);
}

void tiled_attn::populateQuadFragmentPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutInPlace, LocalLoadToAccumulator>(
      converter, patterns.getContext());
  populateMmaSyncReducePatterns(converter, patterns);
  populateMmaSyncStorePatterns(converter, patterns);
}

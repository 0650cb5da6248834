//===- Memory.cpp - Buffers, async copies, waits, ids and sizes -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The memory patterns every family shares. A buffer is a view of dynamic
// shared memory at the offset tilegpu-allocate-memory gave it; a slot of a
// ring is the view at offset + slot * tile size. A tilegpu.async_copy is a
// cooperative copy of a block into a buffer: every thread issues 16-byte
// cp.async copies, with zero fill for the rows past the view's end, and
// commits them as one group; a tilegpu.async_wait waits until at most
// `pending` of the thread's groups are in flight.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// Issues the copy of the `rows x cols` block of `view` at tile indices
/// `indices` into `buffer`, all threads together, as one cp.async group of
/// 16-byte copies (`vec` elements each). Nobody waits here. Unless the
/// block is known to be `inBounds`, each copy checks its row and columns
/// against the view's sizes and reads nothing (zero fill) outside; with
/// `partialColumns`, a copy that crosses the end of its row reads the
/// elements before it and zero-fills the rest (a block whose columns are
/// keys: S_k need not be a multiple of vec). With `gather` (G indices), the
/// rows come in G groups, group g from leading index gather[g] and row
/// block indices[2] of rows / G rows.
void copyBlockToShared(OpBuilder &b, Location loc, Value view,
                       ValueRange indices, ValueRange gather, Value buffer,
                       int64_t rows, int64_t cols, int64_t vec,
                       int64_t threads, bool inBounds, bool partialColumns) {
  LaneCoords lc(b, loc);
  UnitAttr bypassL1 = b.getUnitAttr(); // cp.async.cg: 16 bytes, past L1
  int64_t chunksPerRow = cols / vec, chunks = rows * chunksPerRow;
  int64_t groups = std::max<int64_t>(gather.size(), 1),
          groupRows = rows / groups;
  Value seqLen = memref::DimOp::create(b, loc, view, 2);
  Value colLen = memref::DimOp::create(b, loc, view, 3);
  Value row0 =
      arith::MulIOp::create(b, loc, indices[2], cIdx(b, loc, groupRows));
  Value col0 = arith::MulIOp::create(b, loc, indices[3], cIdx(b, loc, cols));
  Value zero = cIdx(b, loc, 0), full = cIdx(b, loc, vec);
  // Rows [i * rowsPerStep, (i + 1) * rowsPerStep) are copy i's: within one
  // group when the steps divide the groups, else each thread picks its
  // row's.
  int64_t rowsPerStep = threads / chunksPerRow;
  bool stepInGroup = rowsPerStep > 0 && threads % chunksPerRow == 0 &&
                     groupRows % rowsPerStep == 0;

  SmallVector<Value> tokens;
  for (int64_t i = 0; i < chunks / threads; ++i) {
    Value chunk =
        arith::AddIOp::create(b, loc, lc.tid, cIdx(b, loc, i * threads));
    Value r = arith::DivUIOp::create(b, loc, chunk, cIdx(b, loc, chunksPerRow));
    Value c = arith::MulIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, chunk, cIdx(b, loc, chunksPerRow)),
        full);
    Value entry = indices[0], groupRow = r;
    if (!gather.empty()) {
      groupRow = arith::RemUIOp::create(b, loc, r, cIdx(b, loc, groupRows));
      if (stepInGroup) {
        entry = gather[i * rowsPerStep / groupRows];
      } else {
        Value group =
            arith::DivUIOp::create(b, loc, r, cIdx(b, loc, groupRows));
        entry = gather[0];
        for (int64_t g = 1; g < groups; ++g)
          entry = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                    cIdx(b, loc, g)),
              gather[g], entry);
      }
    }
    Value seq = arith::AddIOp::create(b, loc, row0, groupRow);
    Value col = arith::AddIOp::create(b, loc, col0, c);
    if (inBounds) {
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
          ValueRange{r, c}, view, ValueRange{entry, indices[1], seq, col},
          b.getIndexAttr(vec), /*srcElements=*/Value(), bypassL1));
      continue;
    }
    Value inBounds, srcElements;
    if (partialColumns) {
      // The elements left in the row, at most vec (none past its end).
      Value left = arith::MaxSIOp::create(
          b, loc,
          arith::MinSIOp::create(b, loc,
                                 arith::SubIOp::create(b, loc, colLen, col),
                                 full),
          zero);
      inBounds = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, seq, seqLen),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, left, zero));
      srcElements = arith::SelectOp::create(b, loc, inBounds, left, zero);
    } else {
      inBounds = pieceInBounds(b, loc, seq, seqLen, col, vec, colLen);
      // Out of bounds: read nothing (zero fill) from a valid address.
      srcElements = arith::SelectOp::create(b, loc, inBounds, full, zero);
    }
    Value srcSeq = arith::SelectOp::create(b, loc, inBounds, seq, zero);
    Value srcCol = arith::SelectOp::create(b, loc, inBounds, col, zero);
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
        ValueRange{r, c}, view, ValueRange{entry, indices[1], srcSeq, srcCol},
        b.getIndexAttr(vec), srcElements, bypassL1));
  }
  nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

/// The view of dynamic shared memory at `byteOffset`, of `type`.
Value sharedView(OpBuilder &b, Location loc, Value byteOffset,
                 MemRefType type) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto bytesTy = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), space);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytesTy);
  return memref::ViewOp::create(b, loc, type, base, byteOffset, ValueRange{});
}

/// The offset tilegpu-allocate-memory gave `alloc`, or a failure naming the
/// missing pass.
FailureOr<int64_t> allocOffset(AllocOp alloc,
                               ConversionPatternRewriter &rewriter) {
  if (!alloc || !alloc.getOffset())
    return rewriter.notifyMatchFailure(
        alloc, "no offset: run tilegpu-allocate-memory first");
  return *alloc.getOffset();
}

struct AllocToNVVM final : OpConversionPattern<AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast_or_null<MemRefType>(
        getTypeConverter()->convertType(op.getType()));
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a shared buffer");
    FailureOr<int64_t> offset = allocOffset(op, rewriter);
    if (failed(offset))
      return failure();
    rewriter.replaceOp(op,
                       sharedView(rewriter, op.getLoc(),
                                  cIdx(rewriter, op.getLoc(), *offset), type));
    return success();
  }
};

/// Slot i of a ring: the view at the ring's offset + i * tile size.
struct SlotToNVVM final : OpConversionPattern<SlotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SlotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast_or_null<MemRefType>(
        getTypeConverter()->convertType(op.getType()));
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a shared buffer");
    FailureOr<int64_t> offset =
        allocOffset(op.getRing().getDefiningOp<AllocOp>(), rewriter);
    if (failed(offset))
      return failure();
    Location loc = op.getLoc();
    Value byteOffset = arith::AddIOp::create(
        rewriter, loc, cIdx(rewriter, loc, *offset),
        arith::MulIOp::create(
            rewriter, loc, adaptor.getIndex(),
            cIdx(rewriter, loc, op.getRing().getType().getTileSize())));
    rewriter.replaceOp(op, sharedView(rewriter, loc, byteOffset, type));
    return success();
  }
};

/// A transposed view: the same shared memory (buffers lower to their
/// stored shape, which the view keeps).
struct TransposeViewToNVVM final : OpConversionPattern<TransposeViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (adaptor.getSource().getType() !=
        getTypeConverter()->convertType(op.getType()))
      return rewriter.notifyMatchFailure(op, "stored shapes differ");
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

struct AsyncCopyToNVVM final : OpConversionPattern<AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BufferType type = op.getDst().getType();
    auto encoding = cast<SharedEncodingAttr>(type.getEncoding());
    if (encoding.getSwizzle())
      return rewriter.notifyMatchFailure(op, "swizzled buffers are TMA's");
    if (op.getIndices().size() != 4)
      return op.emitError() << "GPU lowering: copies blocks of rank-4 views";
    SmallVector<int64_t, 2> stored =
        encoding.getStoredShape(type.getTileShape());
    int64_t rows = stored[0], cols = stored[1] - encoding.getPad();
    int64_t threads = 32 * kernelWarps(op);
    if (threads == 0)
      return op.emitError() << "GPU lowering: the kernel has no "
                               "tilegpu.warps";
    // 16-byte copies: 8 elements of Q, K and V (rows of whole copies), 4 or
    // 16 of a 32-bit or one-byte block whose columns are keys (a bias or
    // mask block: rows of S_k elements, 16-byte aligned, the last copy of a
    // row partial).
    int64_t bits = type.getElementType().getIntOrFloatBitWidth();
    if (bits != 16 && bits != 32 && bits != 8)
      return op.emitError() << "GPU lowering: copies blocks of 8-, 16- or "
                               "32-bit elements, not "
                            << type.getElementType();
    int64_t vec = 128 / bits;
    if ((rows * cols / vec) % threads || cols % vec)
      return op.emitError() << "GPU lowering: a " << rows << "x" << cols
                            << " block does not split into " << threads
                            << " threads' " << vec * bits / 8
                            << "-byte copies";
    copyBlockToShared(rewriter, op.getLoc(), adaptor.getView(),
                      adaptor.getIndices(), adaptor.getGather(),
                      adaptor.getDst(), rows, cols, vec, threads,
                      op.getInBounds(), /*partialColumns=*/bits != 16);
    rewriter.replaceOp(op, adaptor.getDst());
    return success();
  }
};

struct AsyncWaitToNVVM final : OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> pending = op.getPending();
    if (!pending)
      return op.emitError() << "GPU lowering: the wait has no count of "
                               "groups in flight; run "
                               "tilegpu-resolve-async-waits first";
    NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(),
                                     static_cast<int32_t>(*pending));
    rewriter.replaceOp(op, adaptor.getCopy());
    return success();
  }
};

struct AsyncWaitAllToNVVM final : OpConversionPattern<AsyncWaitAllOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitAllOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, 0);
    return success();
  }
};

struct BlockIdToGPU final : OpConversionPattern<tile::BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::BlockIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    gpu::Dimension dim = op.getDim() == tile::Dim::X   ? gpu::Dimension::x
                         : op.getDim() == tile::Dim::Y ? gpu::Dimension::y
                                                       : gpu::Dimension::z;
    rewriter.replaceOpWithNewOp<gpu::BlockIdOp>(op, dim);
    return success();
  }
};

struct DimToGPU final : OpConversionPattern<tile::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::DimOp>(op, adaptor.getView(),
                                               op.getIndex());
    return success();
  }
};

/// A slice is a subview: the memref's offset moves by `offset` rows of its
/// dimension, whose size becomes `size`.
struct SliceToMemRef final : OpConversionPattern<tile::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    int64_t rank = type.getRank();
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
        strides(rank, rewriter.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          type.isDynamicDim(d)
              ? OpFoldResult(
                    memref::DimOp::create(rewriter, loc, adaptor.getView(), d)
                        .getResult())
              : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(d))));
    offsets[op.getDim()] = adaptor.getOffset();
    sizes[op.getDim()] = adaptor.getSize();
    rewriter.replaceOpWithNewOp<memref::SubViewOp>(op, type, adaptor.getView(),
                                                   offsets, sizes, strides);
    return success();
  }
};

struct ReadToMemRef final : OpConversionPattern<tile::ReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::ReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::LoadOp>(op, adaptor.getView(),
                                                adaptor.getIndices());
    return success();
  }
};

/// One element, written by the first thread of the program (or of its warp
/// role): the value is the program's, the same in every thread. An element
/// outside the view's sizes is not written.
struct WriteToMemRef final : OpConversionPattern<tile::WriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::WriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value view = adaptor.getView();
    Value inside;
    for (auto [d, index] : llvm::enumerate(adaptor.getIndices())) {
      Value size = memref::DimOp::create(rewriter, loc, view, d);
      Value below = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, index, size);
      inside =
          inside ? arith::AndIOp::create(rewriter, loc, inside, below) : below;
    }
    OpBuilder::InsertionGuard guard(rewriter);
    enterFirstThread(rewriter, loc);
    if (inside) {
      auto branch = scf::IfOp::create(rewriter, loc, inside,
                                      /*withElseRegion=*/false);
      rewriter.setInsertionPointToStart(branch.thenBlock());
    }
    memref::StoreOp::create(rewriter, loc, adaptor.getValue(), view,
                            adaptor.getIndices());
    rewriter.eraseOp(op);
    return success();
  }
};

/// A gather on registers: each register's element at its own indices (the
/// index tiles share the result's layout, register for register), read
/// under its bounds check; outside the view, the pad. An `in_bounds` gather
/// checks nothing: each element is a plain load.
///
/// The element's offset is computed before its branch, so that what the
/// registers share is computed once: the scalar indices' part of the
/// offset once per gather, a row's product with its stride once per row
/// (the last stride is 1). Inside the branch is only the load, from the
/// view's base as a flat memref. (With the offset inside each branch, as
/// memref.load would compute it, every register paid three 64-bit
/// multiplications: the float bias read at 0.37-0.41x the plain kernel.)
struct GatherToGPU final : OpConversionPattern<tile::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!type || type.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "not a register vector");
    Value view = adaptor.getView();
    Type element = type.getElementType();
    Value pad =
        isa<FloatType>(element)
            ? arith::ConstantOp::create(
                  rewriter, loc,
                  rewriter.getFloatAttr(element, op.getPad().convertToDouble()))
                  .getResult()
            : arith::ConstantOp::create(
                  rewriter, loc,
                  rewriter.getIntegerAttr(
                      element,
                      static_cast<int64_t>(op.getPad().convertToDouble())))
                  .getResult();
    const int64_t rank = op.getView().getType().getRank();
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, view);
    // The view's elements from its base buffer on, as a flat memref (the
    // offsets below are the view's own, its offset included).
    auto flatType =
        MemRefType::get({ShapedType::kDynamic}, element,
                        StridedLayoutAttr::get(rewriter.getContext(), 0, {1}),
                        cast<MemRefType>(view.getType()).getMemorySpace());
    Value flat = memref::ReinterpretCastOp::create(
        rewriter, loc, flatType, meta.getBaseBuffer(),
        /*offset=*/rewriter.getIndexAttr(0),
        /*sizes=*/
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(int64_t(1) << 40)},
        /*strides=*/ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    ValueRange sizes = meta.getSizes(), strides = meta.getStrides();
    auto times = [&](Value index, int64_t d) -> Value {
      // The last stride is 1 (the view's memref type says so).
      if (d == rank - 1)
        return index;
      return arith::MulIOp::create(rewriter, loc, index, strides[d]);
    };
    // Unsigned: a negative index is past every size.
    auto below = [&](Value index, int64_t d) -> Value {
      return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                   index, sizes[d]);
    };
    auto both = [&](Value a, Value b) -> Value {
      return a ? arith::AndIOp::create(rewriter, loc, a, b).getResult() : b;
    };
    // The scalar indices' part, once.
    Value common = meta.getOffset(), commonInside;
    for (auto [d, index] : llvm::enumerate(adaptor.getIndices()))
      if (!isa<VectorType>(index.getType())) {
        common = arith::AddIOp::create(rewriter, loc, common,
                                       times(index, int64_t(d)));
        if (!op.getInBounds())
          commonInside = both(commonInside, below(index, int64_t(d)));
      }
    SmallVector<Value> elements;
    for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
      Value offset = common, inside = commonInside;
      for (auto [d, index] : llvm::enumerate(adaptor.getIndices())) {
        if (!isa<VectorType>(index.getType()))
          continue;
        Value at = arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(),
            vector::ExtractOp::create(rewriter, loc, index, i));
        offset =
            arith::AddIOp::create(rewriter, loc, offset, times(at, int64_t(d)));
        if (!op.getInBounds())
          inside = both(inside, below(at, int64_t(d)));
      }
      if (op.getInBounds()) {
        elements.push_back(
            memref::LoadOp::create(rewriter, loc, flat, ValueRange{offset}));
        continue;
      }
      if (!inside) // (a view of rank 0: nothing to check)
        inside = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
      auto branch = scf::IfOp::create(
          rewriter, loc, inside,
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(
                b, l,
                memref::LoadOp::create(b, l, flat, ValueRange{offset})
                    .getResult());
          },
          [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, pad); });
      elements.push_back(branch.getResult(0));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, elements);
    return success();
  }
};

/// tile.wait_prior_grids and tile.launch_dependent_grids: griddepcontrol
/// where the chip has it, else nothing (a kernel for such a chip is never
/// launched as a dependent).
template <typename Op, NVVM::GridDepActionKind Kind>
struct GridDependencyToNVVM final : OpConversionPattern<Op> {
  GridDependencyToNVVM(TileGPUToNVVMTypeConverter &converter, MLIRContext *ctx,
                       bool supported)
      : OpConversionPattern<Op>(converter, ctx), supported(supported) {}
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (supported)
      NVVM::GriddepcontrolOp::create(rewriter, op.getLoc(), Kind);
    rewriter.eraseOp(op);
    return success();
  }
  bool supported;
};

struct ReturnToGPU final : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateTileGPUMemoryToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns,
    bool gridDependencyControl) {
  patterns
      .add<GridDependencyToNVVM<tile::WaitPriorGridsOp,
                                NVVM::GridDepActionKind::wait>,
           GridDependencyToNVVM<tile::LaunchDependentGridsOp,
                                NVVM::GridDepActionKind::launch_dependents>>(
          converter, patterns.getContext(), gridDependencyControl);
  patterns.add<AllocToNVVM, SlotToNVVM, TransposeViewToNVVM, AsyncCopyToNVVM, AsyncWaitToNVVM,
               AsyncWaitAllToNVVM, BlockIdToGPU, DimToGPU, SliceToMemRef,
               ReadToMemRef, WriteToMemRef, GatherToGPU, ReturnToGPU>(
      converter, patterns.getContext());
  populateTmaToNVVMPatterns(converter, patterns);
  populateTurnToNVVMPatterns(converter, patterns);
}

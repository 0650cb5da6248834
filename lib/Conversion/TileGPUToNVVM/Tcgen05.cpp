//===- Tcgen05.cpp - Tensor memory and tcgen05 ----------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Datacenter Blackwell's matrix units (sm_100a): products accumulate in
// tensor memory (TMEM), 128 lanes x 512 columns of 32 bits per SM.
//
// - The kernel's tensor memory: tilegpu-allocate-memory gave each
//   tensor-memory buffer its first column; the kernel allocates the columns
//   they span (rounded up to a power of two of at least 32) once, at entry:
//   warp 0 runs tcgen05.alloc, which writes the base address into a 4-byte
//   shared variable, and gives up its permit to allocate more
//   (tcgen05.relinquish_alloc_permit); a CTA barrier between the two tcgen05
//   fences publishes the address. The threads that use tensor memory (the
//   kernel's, or its first warp role's) deallocate it at their end: fence,
//   barrier (the role's named barrier after lowerWarpSpecialize), warp 0
//   runs tcgen05.dealloc. A buffer is the 32-bit TMEM address of its first
//   column, lane 0.
// - tilegpu.tmem_mma: the first thread of the threads that run it issues
//   one tcgen05.mma .cta_group::1 .kind::f16 per k-step of 16 (with R row
//   blocks, the first thread of each group of threads issues its block's:
//   lhs rows 128 r on, 128 r rows of the swizzle's bytes into each panel
//   of a shared lhs or r x its block's columns into a tensor-memory one,
//   into the acc's r-th block of columns). Shared operands are swizzled
//   panels of W = 128, 64 or 32 bytes a row, read through tcgen05
//   descriptors (encoding::encodeTcgen05Descriptor), with the offsets of
//   the wgmma lowering: K-major (Q; K, stored transposed) SBO = 8W, k-step
//   k at 32k bytes on, in the panel of its columns; N-major (V) SBO = 8W,
//   LBO = the panel's bytes, k-step k at row 16k; an M-major lhs (the
//   backward's dS, stored as dSᵀ's rows) as an N-major rhs, with the
//   transpose-A bit. A packed tensor-memory lhs
//   (P) advances 8 columns per k-step. The instruction descriptor comes from
//   encoding::encodeTcgen05F16Mma.
// - tilegpu.mma_commit: the same thread's tcgen05.commit to the mbarrier
//   (with groups, each group's first thread to the group's mbarrier, or
//   with joint all of them to the one mbarrier).
// - tilegpu.tmem_scale_rows: the correction, tcgen05.ld/st a piece at a
//   time with the multiply in between (skipped by a warp whose scales are
//   all 1, with skip-unit-row-scales).
// - tilegpu.tmem_load / tmem_store: tcgen05.ld/st .32x32b, each warp on
//   its quadrant of lanes (lane bits 16-31 of the address: 32 x (warp mod
//   4)), 16 columns per instruction at most, then tcgen05.wait::ld/st. The
//   PTX ISA orders a use of a loaded register after the load by the
//   register scoreboard; the wait orders the load's reads of tensor memory
//   before what the thread does after it (a later tcgen05.mma may overwrite
//   the buffer once the threads synchronize), which is why it ends the op.
//   The fences: after_thread_sync before a load or an mma (ordering them
//   after the wait or barrier that synchronized with the writer),
//   before_thread_sync after a load's or store's wait (so that the next
//   barrier or arrival publishes them).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Target/Encodings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

/// The shared variable tcgen05.alloc writes the kernel's TMEM base into.
static constexpr StringLiteral kTmemBaseSymbol = "tiled_attn_tmem_base";
/// The named barrier at which the warp that frees tensor memory waits for
/// the other roles that read or write it: the last of the 16, above the
/// roles' (1 to R), the groups' and the turns' (from R + 1, at most one per
/// warpgroup).
static constexpr int64_t kTmemReleaseBarrier = 15;

static Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

static Value tmemPointer(OpBuilder &b, Location loc, Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*tensor=*/6),
      address);
}

static Value tmemBaseSlot(OpBuilder &b, Location loc) {
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3),
      kTmemBaseSymbol);
}

static void fence(OpBuilder &b, Location loc, NVVM::Tcgen05FenceKind kind) {
  NVVM::Tcgen05FenceOp::create(b, loc, kind);
}

/// The columns from a row block of a tensor-memory buffer to the next.
/// Whether this thread is warp `w` of the CTA (not of its role: the kernel's
/// TMEM is allocated before the roles split).
static Value isCtaWarp(OpBuilder &b, Location loc, int64_t w) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, tid, cIdx(b, loc, 32));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp,
                               cIdx(b, loc, w));
}

LogicalResult tiled_attn::setUpTensorMemory(gpu::GPUFuncOp kernel,
                                            gpu::GPUModuleOp gpuModule) {
  // The columns the buffers span.
  int64_t columns = 0;
  SmallVector<AllocOp> allocs;
  kernel.walk([&](AllocOp alloc) {
    BufferType type = alloc.getType();
    if (type.getMemorySpace() != MemorySpace::Tensor)
      return;
    allocs.push_back(alloc);
    columns =
        std::max(columns, static_cast<int64_t>(alloc.getOffset().value_or(0) +
                                               type.getAllocationSize()));
  });
  if (allocs.empty())
    return success();
  for (AllocOp alloc : allocs)
    if (!alloc.getOffset())
      return alloc.emitError() << "GPU lowering: the tensor-memory buffer has "
                                  "no offset; run tilegpu-allocate-memory";
  int64_t allocated = std::max<int64_t>(32, llvm::PowerOf2Ceil(columns));
  if (llvm::Error err = encoding::checkTmemAllocColumns(allocated))
    return kernel.emitError()
           << "GPU lowering: the kernel's tensor-memory buffers span "
           << columns << " columns: " << llvm::toString(std::move(err));

  // Tensor memory is the first role's: its end is where nobody uses it
  // any more. Other roles may use it too (an MMA warp's products, a
  // correction warpgroup's scaling) if the first role waits for each of
  // their accesses before its end: it waits for the last product through
  // its mbarrier, and a correction arrives for the next product of O after
  // its scaling. tilegpu-simulate-roles checks that no role touches tensor
  // memory once the first has ended.
  Region *users = &kernel.getBody();
  WarpSpecializeOp specialized;
  kernel.walk([&](WarpSpecializeOp op) { specialized = op; });
  if (specialized)
    users = &specialized.getBodies().front();
  // Other roles that read or write tensor memory with their threads (a
  // correction warpgroup's scaling and store) end with an arrival on the
  // release barrier, on which the deallocating warp waits.
  SmallVector<Region *> readers;
  int64_t readerWarps = 0;
  if (specialized)
    for (auto [region, attr] :
         llvm::zip(specialized.getBodies(), specialized.getRoles())) {
      if (&region == users)
        continue;
      if (region
              .walk([](Operation *op) {
                return isa<TmemLoadOp, TmemStoreOp, TmemScaleRowsOp,
                           TmemScaleStoreOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted()) {
        readers.push_back(&region);
        readerWarps += cast<RoleAttr>(attr).getWarps();
      }
    }

  Location loc = kernel.getLoc();
  OpBuilder b(gpuModule.getContext());
  if (!gpuModule.lookupSymbol(kTmemBaseSymbol)) {
    b.setInsertionPointToStart(gpuModule.getBody());
    LLVM::GlobalOp::create(b, loc, b.getI32Type(), /*isConstant=*/false,
                           LLVM::Linkage::Internal, kTmemBaseSymbol,
                           Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  }

  // At entry: warp 0 allocates; everyone learns the address after the
  // barrier (the buffers read it where they are defined).
  b.setInsertionPointToStart(&kernel.getBody().front());
  auto first = scf::IfOp::create(b, loc, isCtaWarp(b, loc, 0),
                                 /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(first.thenBlock());
    NVVM::Tcgen05AllocOp::create(b, loc, tmemBaseSlot(b, loc),
                                 i32Const(b, loc, allocated));
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc);
  }
  fence(b, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b, loc);
  fence(b, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);

  // At the users' end: every access has completed (loads and stores wait
  // for themselves; products are waited for through their mbarriers).
  Block &last = users->back();
  if (!last.empty() && last.back().hasTrait<OpTrait::IsTerminator>())
    b.setInsertionPoint(&last.back());
  else
    b.setInsertionPointToEnd(&last);
  fence(b, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b, loc);
  auto dealloc = scf::IfOp::create(b, loc, isCtaWarp(b, loc, 0),
                                   /*withElse=*/false);
  b.setInsertionPointToStart(dealloc.thenBlock());
  if (!readers.empty()) {
    int64_t warps = 0;
    for (Attribute attr : specialized.getRoles())
      warps += cast<RoleAttr>(attr).getWarps();
    if (1 + static_cast<int64_t>(specialized.getRoles().size()) +
            llvm::divideCeil(warps, 4) >
        kTmemReleaseBarrier)
      return specialized.emitError()
             << "GPU lowering: the roles' and groups' named barriers would "
                "reach barrier "
             << kTmemReleaseBarrier
             << ", which releases tensor memory; fewer roles or warps";
    // Warp 0 and every reader's threads meet at the release barrier.
    Value id = i32Const(b, loc, kTmemReleaseBarrier);
    Value threads = i32Const(b, loc, 32 + 32 * readerWarps);
    NVVM::BarrierOp::create(b, loc, TypeRange{}, id, threads,
                            /*reductionOp=*/nullptr,
                            /*reductionPredicate=*/Value());
    for (Region *region : readers) {
      OpBuilder rb(region->getContext());
      Block &end = region->back();
      if (!end.empty() && end.back().hasTrait<OpTrait::IsTerminator>())
        rb.setInsertionPoint(&end.back());
      else
        rb.setInsertionPointToEnd(&end);
      fence(rb, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
      NVVM::BarrierArriveOp::create(rb, loc,
                                    i32Const(rb, loc, kTmemReleaseBarrier),
                                    i32Const(rb, loc, 32 + 32 * readerWarps));
    }
  }
  fence(b, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  Value base =
      LLVM::LoadOp::create(b, loc, b.getI32Type(), tmemBaseSlot(b, loc));
  NVVM::Tcgen05DeallocOp::create(b, loc, tmemPointer(b, loc, base),
                                 i32Const(b, loc, allocated));
  kernel->setAttr(TileGPUDialect::getTmemColumnsAttrName(),
                  b.getI64IntegerAttr(allocated));
  // A CTA that takes more than half of the columns runs alone on its SM
  // (a second one's tcgen05.alloc would wait for it): ptxas is told so,
  // or it may aim its registers at two CTAs per SM and spill.
  if (allocated > encoding::kTmemColumns / 2)
    kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  return success();
}

namespace {

/// A tensor-memory buffer: the kernel's base (written by tcgen05.alloc)
/// plus its first column.
/// A buffer over another's columns: the other's address.
struct TmemAliasToNVVM final : OpConversionPattern<TmemAliasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemAliasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

struct TmemAllocToNVVM final : OpConversionPattern<AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getType().getMemorySpace() != MemorySpace::Tensor)
      return rewriter.notifyMatchFailure(op, "not in tensor memory");
    if (!op.getOffset())
      return op.emitError() << "GPU lowering: the tensor-memory buffer has no "
                               "offset; run tilegpu-allocate-memory";
    Location loc = op.getLoc();
    Value base = LLVM::LoadOp::create(rewriter, loc, rewriter.getI32Type(),
                                      tmemBaseSlot(rewriter, loc));
    rewriter.replaceOp(
        op, arith::AddIOp::create(rewriter, loc, base,
                                  i32Const(rewriter, loc, *op.getOffset())));
    return success();
  }
};

/// Slot `index` of a tensor-memory ring: `index` x the tile's columns
/// further on.
struct TmemSlotToNVVM final : OpConversionPattern<SlotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SlotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getRing().getType().getMemorySpace() != MemorySpace::Tensor)
      return rewriter.notifyMatchFailure(op, "not in tensor memory");
    Location loc = op.getLoc();
    Value index = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI32Type(), adaptor.getIndex());
    Value columns = arith::MulIOp::create(
        rewriter, loc, index,
        i32Const(rewriter, loc, op.getRing().getType().getTileSize()));
    rewriter.replaceOp(
        op, arith::AddIOp::create(rewriter, loc, adaptor.getRing(), columns));
    return success();
  }
};

struct TmemMmaToNVVM final : OpConversionPattern<TmemMmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemMmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto lhsTy = cast<BufferType>(op.getLhs().getType());
    BufferType rhsTy = op.getRhs().getType(), accTy = op.getAcc().getType();
    auto rhsEnc = cast<SharedEncodingAttr>(rhsTy.getEncoding());
    Type elt = rhsTy.getElementType();
    int64_t m = accTy.getShape()[0], n = accTy.getShape()[1];
    int64_t k = rhsTy.getShape()[0];
    int64_t rhsPanelCols = rhsEnc.getPanelColumns(elt);
    int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
    bool nMajorB = !rhsEnc.getTransposed();
    if (nMajorB && n > rhsPanelCols && n % rhsPanelCols)
      return op.emitError() << "GPU lowering: an N-major rhs spans whole "
                               "panels of "
                            << rhsPanelCols << " columns";
    bool tmemLhs = lhsTy.getMemorySpace() == MemorySpace::Tensor;
    auto lhsEnc = tmemLhs ? SharedEncodingAttr()
                          : cast<SharedEncodingAttr>(lhsTy.getEncoding());
    int64_t rowBlocks = m / 128;
    m = std::min<int64_t>(m, 128); // one row block's product
    // A transposed shared lhs (dS, stored as dSᵀ's rows) is M-major: its
    // descriptor laid out as an N-major rhs's, the transpose-A bit set.
    bool mMajorA = lhsEnc && lhsEnc.getTransposed();
    int64_t lhsPanelCols = lhsEnc ? lhsEnc.getPanelColumns(elt) : 0;
    int64_t lhsPanelBytes = lhsEnc ? lhsEnc.getPanelBytes(lhsTy.getShape()) : 0;
    if (mMajorA && (rowBlocks > 1 || (m > lhsPanelCols && m % lhsPanelCols)))
      return op.emitError() << "GPU lowering: an M-major lhs is one block of "
                               "rows spanning whole panels of "
                            << lhsPanelCols << " columns";

    encoding::Tcgen05F16Mma shape;
    shape.m = m;
    shape.n = n;
    shape.a = shape.b = elt.isBF16() ? encoding::Tcgen05Input::BF16
                                     : encoding::Tcgen05Input::F16;
    shape.transposeA = mMajorA;
    shape.transposeB = nMajorB;
    llvm::Expected<uint32_t> idescBits = encoding::encodeTcgen05F16Mma(shape);
    if (!idescBits)
      return op.emitError() << "GPU lowering: tcgen05 instruction descriptor: "
                            << llvm::toString(idescBits.takeError());
    auto bits = [&](SharedEncodingAttr panels, int64_t leadingBytes) {
      return swizzledDescriptorBits(op, "tcgen05",
                                    encoding::encodeTcgen05Descriptor, panels,
                                    leadingBytes);
    };
    FailureOr<uint64_t> rhsBits =
        bits(rhsEnc, nMajorB ? rhsEnc.getPanelBytes(rhsTy.getShape()) : 16);
    FailureOr<uint64_t> lhsBits =
        lhsEnc ? bits(lhsEnc, mMajorA ? lhsPanelBytes : 16)
               : FailureOr<uint64_t>(0);
    if (failed(rhsBits) || failed(lhsBits))
      return failure();

    // One block from the first thread (row_block), or from the first thread
    // of each group of warps (a softmax warpgroup, or an MMA warp per Q
    // tile) its own group's block: one issue, its offsets from the block.
    std::optional<uint64_t> onlyBlock = op.getRowBlock();
    Value block;
    if (onlyBlock || rowBlocks == 1) {
      enterGroupLeader(rewriter, loc, 0, 0);
      block = cIdx(rewriter, loc, onlyBlock.value_or(0));
    } else {
      FailureOr<int64_t> threads = groupThreads(op, rowBlocks);
      if (failed(threads))
        return failure();
      Value tid = threadIdInRole(rewriter, loc);
      Value perGroup = cIdx(rewriter, loc, *threads);
      block = arith::DivUIOp::create(rewriter, loc, tid, perGroup);
      Value leader = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(rewriter, loc, tid, perGroup),
          cIdx(rewriter, loc, 0));
      auto guard = scf::IfOp::create(rewriter, loc, leader, /*withElse=*/false);
      rewriter.setInsertionPointToStart(guard.thenBlock());
    }
    // Row block r: 128 r rows into each panel of a shared lhs (rows of the
    // swizzle's bytes), r blocks of columns on in tensor memory.
    int64_t lhsBlockStep =
        tmemLhs ? lhsTy.getRowBlockStep() : 128 * lhsEnc.getSwizzle();
    auto blockOffset = [&](int64_t step) -> Value {
      return arith::MulIOp::create(rewriter, loc, block,
                                   cIdx(rewriter, loc, step));
    };
    auto asI32 = [&](Value index) -> Value {
      return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI32Type(),
                                          index);
    };
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Value idesc = i32Const(rewriter, loc, static_cast<int32_t>(*idescBits));
    Value acc =
        arith::AddIOp::create(rewriter, loc, adaptor.getAcc(),
                              asI32(blockOffset(accTy.getRowBlockStep())));
    Value d = tmemPointer(rewriter, loc, acc);
    Value lhsBlock = blockOffset(lhsBlockStep);
    Value yes = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (int64_t kk = 0; kk < k / 16; ++kk) {
      int64_t rhsOffset =
          nMajorB ? kk * 16 * rhsEnc.getSwizzle()
                  : kMajorStepOffset(kk, rhsPanelCols,
                                     rhsEnc.getPanelBytes(rhsTy.getShape()),
                                     eltBytes);
      Value descB = sharedDescriptor(rewriter, loc, adaptor.getRhs(),
                                     cIdx(rewriter, loc, rhsOffset), *rhsBits);
      Value a;
      if (tmemLhs) {
        // Packed 16-bit elements: 16 of a k-step are 8 columns.
        Value column = arith::AddIOp::create(rewriter, loc, lhsBlock,
                                             cIdx(rewriter, loc, 8 * kk));
        a = tmemPointer(rewriter, loc,
                        arith::AddIOp::create(rewriter, loc, adaptor.getLhs(),
                                              asI32(column)));
      } else {
        // k-step k: 32k bytes on in K-major panels, stored row 16k of
        // M-major ones.
        Value lhsOffset = arith::AddIOp::create(
            rewriter, loc, lhsBlock,
            cIdx(rewriter, loc,
                 mMajorA ? kk * 16 * lhsEnc.getSwizzle()
                         : kMajorStepOffset(kk, lhsPanelCols, lhsPanelBytes,
                                            eltBytes)));
        a = sharedDescriptor(rewriter, loc, adaptor.getLhs(), lhsOffset,
                             *lhsBits);
      }
      Value enable = kk == 0 ? adaptor.getAccumulate() : yes;
      NVVM::Tcgen05MMAOp::create(rewriter, loc, NVVM::Tcgen05MMAKind::F16,
                                 NVVM::CTAGroupKind::CTA_1,
                                 NVVM::Tcgen05MMACollectorOp::DISCARD,
                                 /*aShift=*/false, d, a, descB, idesc, enable,
                                 /*scaleInputD=*/Value(),
                                 /*disableOutputLane=*/Value());
    }
    rewriter.setInsertionPoint(op);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MmaCommitToNVVM final : OpConversionPattern<MmaCommitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t groups = op.getGroups();
    FailureOr<int64_t> threads = groupThreads(op, groups);
    if (failed(threads))
      return failure();
    for (int64_t g = 0; g < groups; ++g) {
      OpBuilder::InsertionGuard guard(rewriter);
      enterGroupLeader(rewriter, loc, g, *threads);
      Value index = adaptor.getIndex();
      if (g && !op.getJoint())
        index =
            arith::AddIOp::create(rewriter, loc, index, cIdx(rewriter, loc, g));
      NVVM::Tcgen05CommitOp::create(
          rewriter, loc,
          barrierPointer(rewriter, loc, adaptor.getBarriers(), index),
          /*multicastMask=*/Value());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// This thread's row of a tile in `layout` (the lane bits of its warp's
/// quadrant) plus its first column, of `columns` 32-bit columns a row block
/// (the blocks `step` columns apart), as a TMEM address offset.
Value rowAndColumnOffset(OpBuilder &b, Location loc, TmemLanesLayoutAttr layout,
                         int64_t columns, int64_t step) {
  TmemLanePosition at = tmemLanePosition(b, loc, layout);
  Value blockBits;
  if (at.rowBlock)
    blockBits = arith::MulIOp::create(b, loc, at.rowBlock, cIdx(b, loc, step));
  int64_t perThread = columns / layout.getColumnGroups();
  // (32 x quadrant) << 16 + the row block's columns (block x columns) +
  // the thread's column group within it (group x perThread).
  Value laneBits = arith::ShLIOp::create(
      b, loc, arith::MulIOp::create(b, loc, at.quadrant, cIdx(b, loc, 32)),
      cIdx(b, loc, 16));
  Value colBits =
      arith::MulIOp::create(b, loc, at.columnGroup, cIdx(b, loc, perThread));
  Value offset = arith::AddIOp::create(b, loc, laneBits, colBits);
  if (blockBits)
    offset = arith::AddIOp::create(b, loc, offset, blockBits);
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), offset);
}

/// The pieces of `total` 32-bit columns a thread moves: 16 at a time, then
/// powers of two. (Each .x32 instruction takes 32 registers in one aligned
/// group: on a whole attention block ptxas then spilled at 168 registers
/// used, D = 64, BLOCK_N = 64; with .x16 it needs 143 and spills nothing.)
SmallVector<int64_t> columnChunks(int64_t total) {
  SmallVector<int64_t> chunks;
  while (total >= 16) {
    chunks.push_back(16);
    total -= 16;
  }
  for (int64_t c = 8; c >= 1; c /= 2)
    if (total >= c) {
      chunks.push_back(c);
      total -= c;
    }
  return chunks;
}

/// Checks that the threads of `op` start on a warpgroup of the CTA, so that
/// their warp ids mod 4 are the CTA's.
LogicalResult checkQuadrants(Operation *op) {
  for (Region *region = op->getParentRegion(); region;
       region = region->getParentRegion()) {
    auto specialized = dyn_cast<WarpSpecializeOp>(region->getParentOp());
    if (!specialized)
      continue;
    int64_t first = 0;
    for (auto [i, attr] : llvm::enumerate(specialized.getRoles())) {
      if (i == region->getRegionNumber())
        break;
      first += cast<RoleAttr>(attr).getWarps();
    }
    if (first % 4)
      return op->emitError() << "GPU lowering: tensor memory is read and "
                                "written by warp quadrants, but the role "
                                "starts at warp "
                             << first << ", not on a warpgroup";
    return success();
  }
  return success();
}

/// A thread's piece of a tile in tensor memory: its address (a tcgen05
/// pointer) and its width in 32-bit columns, from column `column` of the
/// thread's first.
struct TmemPiece {
  Value address;
  int64_t column, width;
};

/// The pieces of the thread's `words` columns of a tile `columns` 32-bit
/// columns wide (a row block) in `buffer` of type `type`, as tcgen05.ld/st
/// move them.
SmallVector<TmemPiece> threadPieces(OpBuilder &b, Location loc, Value buffer,
                                    BufferType type, TmemLanesLayoutAttr layout,
                                    int64_t columns, int64_t words) {
  Value first = arith::AddIOp::create(
      b, loc, buffer,
      rowAndColumnOffset(b, loc, layout, columns, type.getRowBlockStep()));
  SmallVector<TmemPiece> pieces;
  int64_t column = 0;
  for (int64_t width : columnChunks(words)) {
    Value at = arith::AddIOp::create(b, loc, first, i32Const(b, loc, column));
    pieces.push_back({tmemPointer(b, loc, at), column, width});
    column += width;
  }
  return pieces;
}

/// tcgen05.ld of a thread's piece: vector<width x i32>.
Value loadPiece(OpBuilder &b, Location loc, const TmemPiece &piece) {
  Type i32 = b.getI32Type();
  auto words = VectorType::get({piece.width}, i32);
  Value loaded = NVVM::Tcgen05LdOp::create(
      b, loc, piece.width == 1 ? i32 : Type(words), /*pack=*/false,
      NVVM::Tcgen05LdStShape::SHAPE_32X32B, piece.address, /*offset=*/Value());
  if (piece.width == 1)
    loaded = vector::FromElementsOp::create(b, loc, words, loaded);
  return loaded;
}

/// tcgen05.st of `words` (vector<width x i32>) into a thread's piece.
void storePiece(OpBuilder &b, Location loc, const TmemPiece &piece,
                Value words) {
  if (piece.width == 1)
    words = vector::ExtractOp::create(b, loc, words, 0);
  NVVM::Tcgen05StOp::create(b, loc, /*unpack=*/false,
                            NVVM::Tcgen05LdStShape::SHAPE_32X32B, piece.address,
                            words, /*offset=*/Value());
}

/// After a thread's tcgen05.st: wait for them, and order them before the
/// barrier or mbarrier arrival that publishes them to the mma's thread.
void finishStores(OpBuilder &b, Location loc) {
  NVVM::Tcgen05WaitOp::create(b, loc, NVVM::Tcgen05WaitKind::STORE);
  fence(b, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
}

struct TmemLoadToNVVM final : OpConversionPattern<TmemLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkQuadrants(op)))
      return failure();
    Location loc = op.getLoc();
    auto tile = cast<RankedTensorType>(op.getType());
    auto layout = cast<TmemLanesLayoutAttr>(tile.getEncoding());
    int64_t regs = layout.getRegisterCount(tile.getShape());
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    SmallVector<Value> pieces;
    for (TmemPiece piece : threadPieces(rewriter, loc, adaptor.getBuffer(),
                                        op.getBuffer().getType(), layout,
                                        tile.getDimSize(1), regs))
      pieces.push_back(loadPiece(rewriter, loc, piece));
    // The registers are used only after the wait, in the IR's order.
    NVVM::Tcgen05WaitOp::create(rewriter, loc, NVVM::Tcgen05WaitKind::LOAD);
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    for (Value &piece : pieces) {
      int64_t n = cast<VectorType>(piece.getType()).getNumElements();
      piece = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({n}, tile.getElementType()), piece);
    }
    rewriter.replaceOp(op, concatRegisters(rewriter, loc, pieces));
    return success();
  }
};

struct TmemStoreToNVVM final : OpConversionPattern<TmemStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkQuadrants(op)))
      return failure();
    Location loc = op.getLoc();
    auto tile = cast<RankedTensorType>(op.getValue().getType());
    auto layout = cast<TmemLanesLayoutAttr>(tile.getEncoding());
    int64_t regs = layout.getRegisterCount(tile.getShape());
    int64_t perColumn = 32 / tile.getElementType().getIntOrFloatBitWidth();
    int64_t words = regs / perColumn;
    Type i32 = rewriter.getI32Type();
    Value all = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({words}, i32), adaptor.getValue());
    // perColumn 16-bit elements to a column when packed.
    for (TmemPiece piece : threadPieces(rewriter, loc, adaptor.getBuffer(),
                                        op.getBuffer().getType(), layout,
                                        tile.getDimSize(1) / perColumn, words))
      storePiece(
          rewriter, loc, piece,
          extractRegisters(rewriter, loc, all, piece.column, piece.width));
    finishStores(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The correction, a piece at a time: load 16 columns of the thread's row,
/// wait, scale, store; then wait for the stores. With skip-unit-row-scales
/// a warp whose scales are all exactly 1 skips it (tcgen05.ld/st are
/// warp-collective, so the branch is the warp's: vote.any).
struct TmemScaleRowsToNVVM final : OpConversionPattern<TmemScaleRowsOp> {
  TmemScaleRowsToNVVM(const TypeConverter &converter, MLIRContext *ctx,
                      bool skipUnitRowScales)
      : OpConversionPattern(converter, ctx),
        skipUnitRowScales(skipUnitRowScales) {}
  LogicalResult
  matchAndRewrite(TmemScaleRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkQuadrants(op)))
      return failure();
    Location loc = op.getLoc();
    BufferType buffer = op.getBuffer().getType();
    int64_t columns = buffer.getShape()[1];
    auto scales = cast<TmemLanesLayoutAttr>(
        cast<RankedTensorType>(op.getScale().getType()).getEncoding());
    auto layout =
        TmemLanesLayoutAttr::get(rewriter.getContext(), TmemLanesKind::Acc,
                                 scales.getWarps(), scales.getRowBlocks());
    // The thread's row holds one scale.
    Value scale =
        vector::ExtractOp::create(rewriter, loc, adaptor.getScale(), 0);
    OpBuilder::InsertionGuard g(rewriter);
    if (skipUnitRowScales) {
      Value one = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(1.0f));
      Value moved = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::UNE, scale, one);
      auto ifOp =
          scf::IfOp::create(rewriter, loc, warpVoteAny(rewriter, loc, moved),
                            /*withElseRegion=*/false);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
    }
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
    for (TmemPiece piece : threadPieces(rewriter, loc, adaptor.getBuffer(),
                                        buffer, layout, columns, columns)) {
      Value loaded = loadPiece(rewriter, loc, piece);
      NVVM::Tcgen05WaitOp::create(rewriter, loc, NVVM::Tcgen05WaitKind::LOAD);
      auto floats = VectorType::get({piece.width}, f32);
      auto ints = VectorType::get({piece.width}, i32);
      Value scaled = arith::MulFOp::create(
          rewriter, loc,
          vector::BitCastOp::create(rewriter, loc, floats, loaded),
          vector::BroadcastOp::create(rewriter, loc, floats, scale));
      Value back = vector::BitCastOp::create(rewriter, loc, ints, scaled);
      storePiece(rewriter, loc, piece, back);
    }
    finishStores(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }

private:
  bool skipUnitRowScales;
};

/// The epilogue, a piece at a time: load 16 columns of the thread's row,
/// wait, scale, convert to the view's element type and store them in
/// 16-byte pieces where they lie inside the view (as tile.store does from
/// #tilegpu.tmem_lanes registers).
struct TmemScaleStoreToNVVM final : OpConversionPattern<TmemScaleStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemScaleStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkQuadrants(op)))
      return failure();
    Location loc = op.getLoc();
    BufferType buffer = op.getBuffer().getType();
    int64_t rows = buffer.getShape()[0], columns = buffer.getShape()[1];
    auto scales = cast<TmemLanesLayoutAttr>(
        cast<RankedTensorType>(op.getScale().getType()).getEncoding());
    auto layout =
        TmemLanesLayoutAttr::get(rewriter.getContext(), TmemLanesKind::Acc,
                                 scales.getWarps(), scales.getRowBlocks());
    Type element =
        cast<tile::ViewType>(op.getView().getType()).getElementType();
    Value scale =
        vector::ExtractOp::create(rewriter, loc, adaptor.getScale(), 0);
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    unsigned rank = idx.size();
    // The thread's row and first column in the view.
    TmemLanePosition at = tmemLanePosition(rewriter, loc, layout);
    Value row = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, idx[rank - 2],
                              cIdx(rewriter, loc, rows)),
        arith::AddIOp::create(rewriter, loc,
                              arith::MulIOp::create(rewriter, loc, at.quadrant,
                                                    cIdx(rewriter, loc, 32)),
                              at.lane));
    if (at.rowBlock)
      row = arith::AddIOp::create(
          rewriter, loc, row,
          arith::MulIOp::create(rewriter, loc, at.rowBlock,
                                cIdx(rewriter, loc, 128)));
    Value firstColumn = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, idx[rank - 1],
                              cIdx(rewriter, loc, columns)),
        arith::MulIOp::create(
            rewriter, loc, at.columnGroup,
            cIdx(rewriter, loc, columns / layout.getColumnGroups())));
    Value rowLen = memref::DimOp::create(rewriter, loc, view, rank - 2);
    Value colLen = memref::DimOp::create(rewriter, loc, view, rank - 1);
    int64_t width = 128 / element.getIntOrFloatBitWidth();
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Type f32 = rewriter.getF32Type();
    for (TmemPiece piece :
         threadPieces(rewriter, loc, adaptor.getBuffer(), buffer, layout,
                      columns, columns / layout.getColumnGroups())) {
      Value loaded = loadPiece(rewriter, loc, piece);
      NVVM::Tcgen05WaitOp::create(rewriter, loc, NVVM::Tcgen05WaitKind::LOAD);
      auto floats = VectorType::get({piece.width}, f32);
      Value scaled = arith::MulFOp::create(
          rewriter, loc,
          vector::BitCastOp::create(rewriter, loc, floats, loaded),
          vector::BroadcastOp::create(rewriter, loc, floats, scale));
      if (element != f32)
        scaled = arith::TruncFOp::create(
            rewriter, loc, VectorType::get({piece.width}, element), scaled);
      for (int64_t c = 0; c < piece.width; c += width) {
        int64_t n = std::min(width, piece.width - c);
        Value col = arith::AddIOp::create(
            rewriter, loc, firstColumn, cIdx(rewriter, loc, piece.column + c));
        Value inBounds =
            pieceInBounds(rewriter, loc, row, rowLen, col, n, colLen);
        Value part = extractRegisters(rewriter, loc, scaled, c, n);
        auto ifOp = scf::IfOp::create(rewriter, loc, inBounds,
                                      /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(ifOp.thenBlock());
        SmallVector<Value> at(idx.drop_back(2));
        at.push_back(row);
        at.push_back(col);
        // Rows start 16 bytes apart at least (the runtime's contract, as
        // for the staged stores): a 16-byte piece is one vector store.
        vector::StoreOp::create(
            rewriter, loc, part, view, at, /*nontemporal=*/false,
            n * element.getIntOrFloatBitWidth() == 128 ? llvm::MaybeAlign(16)
                                                       : llvm::MaybeAlign());
      }
    }
    fence(rewriter, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateTcgen05ToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns,
    bool skipUnitRowScales) {
  patterns.add<TmemScaleRowsToNVVM>(converter, patterns.getContext(),
                                    skipUnitRowScales);
  // Before the shared-memory patterns of alloc and slot.
  patterns.add<TmemAllocToNVVM, TmemSlotToNVVM>(converter,
                                                patterns.getContext(),
                                                /*benefit=*/2);
  patterns.add<TmemMmaToNVVM, MmaCommitToNVVM, TmemLoadToNVVM, TmemStoreToNVVM,
               TmemAliasToNVVM, TmemScaleStoreToNVVM>(converter,
                                                      patterns.getContext());
  // Reductions, broadcasts and masks of its register tiles.
  populateTmemLanesPatterns(converter, patterns);
}

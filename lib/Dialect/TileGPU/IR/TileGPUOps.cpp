//===- TileGPUOps.cpp - Operations of the tilegpu dialect -----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Verifiers check local invariants only: shapes, element types, memory
// spaces and the family of the layouts an op mixes.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

#define GET_OP_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"

/// "64x64" for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// Checks that a register tile's layout takes its shape.
static LogicalResult verifyRegisterTile(Operation *op, Value value,
                                        StringRef name) {
  auto type = cast<RankedTensorType>(value.getType());
  return getDistributedLayout(type).verifyTileShape(
      type.getShape(), [&] { return op->emitOpError() << name << ": "; });
}

LogicalResult AllocOp::verify() {
  BufferType type = getBuffer().getType();
  std::optional<int64_t> offset = getOffset();
  int64_t align = type.getMemoryEncoding().getAlignment();
  if (offset && *offset % align)
    return emitOpError() << "offset " << *offset << " is not a multiple of "
                         << align << ", the alignment of " << type;
  if (offset && type.getMemorySpace() == MemorySpace::Tensor &&
      *offset + type.getAllocationSize() > 512)
    return emitOpError() << "columns " << *offset << " to "
                         << *offset + type.getAllocationSize()
                         << " run past tensor memory's 512";
  return success();
}

void SlotOp::build(OpBuilder &b, OperationState &state, Value ring,
                   Value index) {
  auto type = cast<BufferType>(ring.getType());
  build(b, state,
        BufferType::get(b.getContext(), type.getTileShape(),
                        type.getElementType(), type.getEncoding()),
        ring, index);
}

LogicalResult SlotOp::verify() {
  BufferType ring = getRing().getType(), slot = getResult().getType();
  if (!ring.isRing())
    return emitOpError() << "expects a ring (slots x rows x columns), got "
                         << ring;
  if (slot.getShape() != ring.getTileShape() ||
      slot.getElementType() != ring.getElementType() ||
      slot.getEncoding() != ring.getEncoding())
    return emitOpError() << "result " << slot << " must be one tile of "
                         << ring;
  if (!getRing().getDefiningOp<AllocOp>())
    return emitOpError() << "expects the ring to come from a tilegpu.alloc";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto view = cast<tile::ViewType>(getView().getType());
  BufferType dst = getDst().getType();
  if (static_cast<int64_t>(getIndices().size()) != view.getRank())
    return emitOpError() << "expects " << view.getRank() << " tile indices for "
                         << view << ", got " << getIndices().size();
  if (view.getRank() < 2)
    return emitOpError() << "copies a 2-d block of the last two dimensions "
                            "of a view of rank 2 or more";
  if (dst.isRing())
    return emitOpError() << "copies into one tile, not the ring " << dst
                         << " (take a tilegpu.slot of it)";
  if (dst.getShape().size() != 2)
    return emitOpError() << "copies into a rank-2 tile, not " << dst;
  if (dst.getElementType() != view.getElementType())
    return emitOpError() << "element types differ: " << view << " and " << dst;
  auto encoding = cast<SharedEncodingAttr>(dst.getEncoding());
  int64_t storedCols =
      encoding.getTransposed() ? dst.getShape()[0] : dst.getShape()[1];
  int64_t viewCols = view.getShape().back();
  if (!ShapedType::isDynamic(viewCols) && viewCols != storedCols)
    return emitOpError() << "a " << shapeString(dst.getShape())
                         << (encoding.getTransposed() ? " transposed" : "")
                         << " tile stores rows of " << storedCols
                         << " elements, but the view's rows have " << viewCols;
  int64_t storedRows =
      encoding.getTransposed() ? dst.getShape()[1] : dst.getShape()[0];
  if (!getGather().empty() &&
      (view.getRank() < 3 ||
       storedRows % static_cast<int64_t>(getGather().size())))
    return emitOpError() << "gathers " << storedRows << " stored rows in "
                         << getGather().size()
                         << " equal groups, each at a leading index of a "
                            "view of rank 3 or more";
  return success();
}

LogicalResult LocalLoadOp::verify() {
  BufferType buffer = getBuffer().getType();
  RankedTensorType result = getResult().getType();
  if (buffer.getShape() != result.getShape() ||
      buffer.getElementType() != result.getElementType())
    return emitOpError() << "reads " << buffer << " into a different tile, "
                         << result;
  return verifyRegisterTile(*this, getResult(), "result");
}

LogicalResult LocalStoreOp::verify() {
  BufferType buffer = getBuffer().getType();
  RankedTensorType value = getValue().getType();
  // A quad-fragment accumulator (mma.sync, wgmma) goes into a padded
  // buffer or swizzled panels as its stored matrix: the buffer holds the
  // tile, or, with a transposed encoding, the tile's transpose (so its
  // shape is reversed).
  MmaSyncLayoutAttr quad = getQuadFragmentLayout(value.getEncoding());
  // (A wgmma accumulator whose warpgroups split its columns: each writes
  // its block's.)
  if (auto blocks = dyn_cast<WgmmaLayoutAttr>(value.getEncoding());
      !quad && blocks && blocks.getColumnBlocks() > 1)
    quad = blocks.getColumnBlockLayout();
  if (auto blocks = dyn_cast<MmaSyncLayoutAttr>(value.getEncoding());
      !quad && blocks)
    quad = blocks.getColumnBlockLayout();
  // A tcgen05 register tile (a row of tensor-memory lanes per thread) goes
  // into swizzled panels the same way, 16 bytes of a row at a time.
  auto lanes = dyn_cast<TmemLanesLayoutAttr>(value.getEncoding());
  bool lanesAcc = lanes && lanes.getKind() == TmemLanesKind::Acc;
  if (quad || lanesAcc) {
    auto encoding = dyn_cast<SharedEncodingAttr>(buffer.getEncoding());
    if ((quad && quad.getKind() != MmaSyncKind::Acc) || !encoding ||
        buffer.isRing() || value.getRank() != 2)
      return emitOpError() << "writes an accumulator into a "
                              "two-dimensional shared buffer only, got "
                           << value << " and " << buffer;
    if (lanesAcc && !encoding.getSwizzle())
      return emitOpError() << "writes a #tilegpu.tmem_lanes accumulator into "
                              "swizzled panels only, not "
                           << buffer;
    SmallVector<int64_t, 2> stored(value.getShape());
    if (encoding.getTransposed())
      std::swap(stored[0], stored[1]);
    if (buffer.getShape() != ArrayRef<int64_t>(stored) ||
        buffer.getElementType() != value.getElementType())
      return emitOpError() << "writes " << value << " as the stored matrix of "
                           << buffer << ", which holds another";
    return verifyRegisterTile(*this, getValue(), "value");
  }
  if (buffer.getShape() != value.getShape() ||
      buffer.getElementType() != value.getElementType())
    return emitOpError() << "writes " << value << " into a different tile, "
                         << buffer;
  if (!lanes || lanes.getKind() != TmemLanesKind::Rows)
    return emitOpError() << "writes #tilegpu.tmem_lanes<rows> vectors or "
                            "accumulators only, not "
                         << value;
  return verifyRegisterTile(*this, getValue(), "value");
}

LogicalResult MmaWaitOp::verify() {
  auto mma = getAcc().getDefiningOp<MmaOp>();
  if (!mma || !isAsyncMmaResult(mma.getType()))
    return emitOpError() << "waits for the result of a wgmma tilegpu.mma "
                            "(the only asynchronous one)";
  return success();
}

LogicalResult MmaOp::verify() {
  Type lhsType = getLhs().getType();
  BufferType rhs = getRhs().getType();
  auto acc = cast<RankedTensorType>(getAcc().getType());
  ArrayRef<int64_t> lhsShape = isa<BufferType>(lhsType)
                                   ? cast<BufferType>(lhsType).getShape()
                                   : cast<RankedTensorType>(lhsType).getShape();
  Type lhsElement = isa<BufferType>(lhsType)
                        ? cast<BufferType>(lhsType).getElementType()
                        : cast<RankedTensorType>(lhsType).getElementType();
  if (lhsShape.size() != 2 || rhs.getShape().size() != 2 || acc.getRank() != 2)
    return emitOpError() << "expects rank-2 operands";
  if (lhsShape[1] != rhs.getShape()[0])
    return emitOpError() << "expects lhs columns (" << lhsShape[1]
                         << ") to equal rhs rows (" << rhs.getShape()[0] << ")";
  if (acc.getShape()[0] != lhsShape[0] ||
      acc.getShape()[1] != rhs.getShape()[1])
    return emitOpError() << "expects a " << lhsShape[0] << "x"
                         << rhs.getShape()[1] << " accumulator, got "
                         << shapeString(acc.getShape());
  if (lhsElement != rhs.getElementType() ||
      !(lhsElement.isF16() || lhsElement.isBF16()))
    return emitOpError() << "expects f16 or bf16 operands of one type, got "
                         << lhsElement << " and " << rhs.getElementType();
  if (!acc.getElementType().isF32())
    return emitOpError() << "accumulates in f32, not " << acc.getElementType();
  // A transposed lhs (a tile.transpose's buffer) is read by ldmatrix.trans
  // from padded rows (mma.sync), or as M-major swizzled panels by wgmma's
  // descriptor; mma.sync does not undo a swizzle transposed.
  if (auto lhsBuffer = dyn_cast<BufferType>(lhsType);
      lhsBuffer &&
      cast<SharedEncodingAttr>(lhsBuffer.getEncoding()).getTransposed() &&
      cast<SharedEncodingAttr>(lhsBuffer.getEncoding()).getSwizzle() &&
      !isa<WgmmaLayoutAttr>(acc.getEncoding()))
    return emitOpError() << "a transposed shared lhs in swizzled panels is "
                            "wgmma's (M-major); mma.sync reads a transposed "
                            "lhs from padded rows";
  if (auto lhsTile = dyn_cast<RankedTensorType>(lhsType);
      lhsTile &&
      lhsTile.getEncoding().getTypeID() != acc.getEncoding().getTypeID())
    return emitOpError() << "mixes layout families: " << lhsTile.getEncoding()
                         << " and " << acc.getEncoding();
  if (isa<RankedTensorType>(lhsType) &&
      failed(verifyRegisterTile(*this, getLhs(), "lhs")))
    return failure();
  // The family's roles: mma.sync takes an `opa` lhs and an `acc` of the same
  // warps; wgmma an `acc`; tcgen05 accumulates in tensor memory, not here.
  Attribute accLayout = acc.getEncoding();
  if (auto mma = dyn_cast<MmaSyncLayoutAttr>(accLayout)) {
    if (mma.getKind() != MmaSyncKind::Acc)
      return emitOpError() << "expects the accumulator in the 'acc' layout, "
                              "not "
                           << accLayout;
    auto lhsLayout = isa<RankedTensorType>(lhsType)
                         ? cast<MmaSyncLayoutAttr>(
                               cast<RankedTensorType>(lhsType).getEncoding())
                         : nullptr;
    // (Warps side by side on the columns would each need the whole lhs: it
    // comes from shared memory.)
    if (lhsLayout && mma.getColumnBlocks() > 1)
      return emitOpError() << "takes a shared lhs where the warps split the "
                              "accumulator's columns, not "
                           << lhsLayout;
    if (lhsLayout && (lhsLayout.getKind() != MmaSyncKind::OperandA ||
                      lhsLayout.getWarps() != mma.getWarps()))
      return emitOpError() << "expects a register lhs in "
                           << MmaSyncLayoutAttr::get(getContext(),
                                                     MmaSyncKind::OperandA,
                                                     mma.getWarps())
                           << ", not " << lhsLayout;
  } else if (auto wgmma = dyn_cast<WgmmaLayoutAttr>(accLayout)) {
    if (wgmma.getKind() != WgmmaKind::Acc)
      return emitOpError() << "expects the accumulator in the 'acc' layout, "
                              "not "
                           << accLayout;
    auto lhsLayout = isa<RankedTensorType>(lhsType)
                         ? cast<WgmmaLayoutAttr>(
                               cast<RankedTensorType>(lhsType).getEncoding())
                         : nullptr;
    // (Warpgroups side by side on the columns would each need the whole
    // lhs: it comes from shared memory.)
    if (lhsLayout && wgmma.getColumnBlocks() > 1)
      return emitOpError() << "takes a shared lhs where the warpgroups split "
                              "the accumulator's columns, not "
                           << lhsLayout;
    if (lhsLayout && (lhsLayout.getKind() != WgmmaKind::OperandA ||
                      lhsLayout.getWarpgroups() != wgmma.getWarpgroups()))
      return emitOpError() << "expects a register lhs in "
                           << WgmmaLayoutAttr::get(getContext(),
                                                   WgmmaKind::OperandA,
                                                   wgmma.getWarpgroups())
                           << ", not " << lhsLayout;
    // wgmma reads shared operands through descriptors of swizzled panels.
    for (Type operand : {lhsType, Type(rhs)})
      if (auto buffer = dyn_cast<BufferType>(operand);
          buffer &&
          !cast<SharedEncodingAttr>(buffer.getEncoding()).getSwizzle())
        return emitOpError() << "wgmma reads shared operands in swizzled "
                                "panels, not "
                             << buffer;
  } else {
    return emitOpError() << "has no register accumulator in " << accLayout
                         << " (tcgen05 accumulates in tensor memory)";
  }
  return verifyRegisterTile(*this, getAcc(), "acc");
}

FailureOr<ReductionSpread> tiled_attn::tilegpu::getReductionSpread(
    DistributedLayoutAttrInterface layout, ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) {
  constexpr int64_t kLanes = 32;
  int64_t warps = layout.getWarpCount();
  int64_t regs = layout.getRegisterCount(shape);
  // The elements each (warp, lane) holds, as sorted linear indices.
  std::vector<SmallVector<int64_t>> held(warps * kLanes);
  for (int64_t w = 0; w < warps; ++w)
    for (int64_t l = 0; l < kLanes; ++l) {
      SmallVector<int64_t> &elements = held[w * kLanes + l];
      for (int64_t r = 0; r < regs; ++r) {
        int64_t linear = 0;
        for (auto [d, c] :
             llvm::enumerate(layout.getElementCoordinates(shape, w, l, r)))
          linear = linear * shape[d] + c;
        elements.push_back(linear);
      }
      llvm::sort(elements);
      if (std::adjacent_find(elements.begin(), elements.end()) !=
          elements.end())
        return emitError() << "a thread holds an element of the tile twice";
    }
  auto disjoint = [](ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
      if (a[i] == b[j])
        return false;
      a[i] < b[j] ? ++i : ++j;
    }
    return true;
  };
  ReductionSpread spread;
  for (int64_t mask = 1; mask < kLanes; mask <<= 1) {
    bool same = true, apart = true;
    for (int64_t t = 0; t < warps * kLanes; ++t) {
      ArrayRef<int64_t> a = held[t], b = held[t ^ mask];
      same &= a == b;
      apart &= disjoint(a, b);
    }
    if (!same && !apart)
      return emitError() << "lanes " << mask
                         << " apart hold partly the same elements";
    if (apart)
      spread.laneMasks.push_back(mask);
  }
  // Lanes that the butterfly combines must all hold different elements.
  for (int64_t t = 0; t < warps * kLanes; ++t)
    for (int64_t m = 1; m < (int64_t{1} << spread.laneMasks.size()); ++m) {
      int64_t other = t;
      for (auto [bit, mask] : llvm::enumerate(spread.laneMasks))
        if (m >> bit & 1)
          other ^= mask;
      if (!disjoint(held[t], held[other]))
        return emitError() << "lanes " << (t ^ other)
                           << " apart hold partly the same elements";
    }
  // What each warp holds, and one warp of each set holding the same.
  std::vector<SmallVector<int64_t>> ofWarp(warps);
  for (int64_t w = 0; w < warps; ++w) {
    for (int64_t l = 0; l < kLanes; ++l)
      llvm::append_range(ofWarp[w], held[w * kLanes + l]);
    llvm::sort(ofWarp[w]);
    ofWarp[w].erase(std::unique(ofWarp[w].begin(), ofWarp[w].end()),
                    ofWarp[w].end());
  }
  for (int64_t w = 0; w < warps; ++w) {
    bool copy = false;
    for (int64_t kept : spread.warps) {
      if (ofWarp[w] == ofWarp[kept]) {
        copy = true;
        break;
      }
      if (!disjoint(ofWarp[w], ofWarp[kept]))
        return emitError() << "warps " << kept << " and " << w
                           << " hold partly the same elements";
    }
    if (!copy)
      spread.warps.push_back(w);
  }
  return spread;
}

LogicalResult CtaReduceOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (!input.getElementType().isF32())
    return emitOpError() << "reduces f32 tiles, not " << input;
  if (failed(verifyRegisterTile(*this, getInput(), "input")))
    return failure();
  FailureOr<ReductionSpread> spread =
      getReductionSpread(getDistributedLayout(input), input.getShape(), [&] {
        return emitOpError() << "input " << input << ": ";
      });
  if (failed(spread))
    return failure();
  bool acrossWarps = spread->warps.size() > 1;
  if (acrossWarps && !getScratch())
    return emitOpError() << "needs a scratch buffer: the warps of " << input
                         << " hold different elements";
  if (!acrossWarps && getScratch())
    return emitOpError() << "takes no scratch buffer: every warp of " << input
                         << " holds the same elements";
  if (getScratch()) {
    BufferType scratch = getScratch().getType();
    int64_t warps = getDistributedLayout(input).getWarpCount();
    if (scratch.getShape() != ArrayRef<int64_t>{1, warps} ||
        !scratch.getElementType().isF32())
      return emitOpError() << "takes a 1x" << warps << "xf32 scratch buffer "
                           << "(one element per warp), not " << scratch;
  }
  return success();
}

LogicalResult StagedStoreOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  auto view = cast<tile::ViewType>(getView().getType());
  BufferType staging = getStaging().getType();
  if (staging.getShape() != value.getShape() ||
      staging.getElementType() != value.getElementType())
    return emitOpError() << "stages " << value << " through a different tile, "
                         << staging;
  if (view.getElementType() != value.getElementType())
    return emitOpError() << "stores " << value.getElementType()
                         << " into a view of " << view.getElementType();
  if (static_cast<int64_t>(getIndices().size()) != view.getRank())
    return emitOpError() << "expects " << view.getRank() << " tile indices for "
                         << view << ", got " << getIndices().size();
  if (view.getRank() < 2)
    return emitOpError() << "stores a 2-d block of the last two dimensions "
                            "of a view of rank 2 or more";
  auto encoding = cast<SharedEncodingAttr>(staging.getEncoding());
  if (encoding.getTransposed() || encoding.getSwizzle())
    return emitOpError() << "stages through an untransposed, unswizzled "
                            "buffer, not "
                         << staging;
  auto mma = dyn_cast<MmaSyncLayoutAttr>(value.getEncoding());
  if (mma && mma.getColumnBlocks() > 1)
    return emitOpError() << "stages no tile whose warps split its columns, "
                            "got "
                         << value;
  if (auto wgmma = dyn_cast<WgmmaLayoutAttr>(value.getEncoding())) {
    if (wgmma.getColumnBlocks() > 1)
      return emitOpError() << "stages no tile whose warpgroups split its "
                              "columns, got "
                           << value;
    mma = wgmma.getQuadFragmentLayout();
  }
  if (mma && !mma.canStageStore(value.getShape(), value.getElementType()))
    return emitOpError() << "cannot stage " << value
                         << ": it takes a 16-bit 'acc' tile whose warps' "
                            "rows split into 16-byte pieces, a whole number "
                            "per lane";
  return verifyRegisterTile(*this, getValue(), "value");
}

/// The barriers of an mbarrier op: a rank-1 shared buffer of i64.
static LogicalResult verifyBarriers(Operation *op, BufferType barriers) {
  if (barriers.getShape().size() != 1 ||
      !barriers.getElementType().isInteger(64))
    return op->emitOpError() << "expects mbarriers, a rank-1 shared buffer "
                                "of i64, got "
                             << barriers;
  return success();
}

/// Whether one TMA box of `map` is one panel of a swizzled buffer of
/// `encoding` (`rows` of its stored rows, the swizzle's bytes of its
/// `columns` stored columns), of the same element type and swizzle: what
/// the copies into such a buffer and the reductions out of it move.
static bool boxIsOnePanel(TensorMapType map, SharedEncodingAttr encoding,
                          Type elt, int64_t rows, int64_t columns) {
  return encoding.getSwizzle() && encoding.getSwizzle() == map.getSwizzle() &&
         map.getElementType() == elt && map.getRows() == rows &&
         map.getCols() == encoding.getPanelColumns(elt) &&
         columns % map.getCols() == 0;
}

LogicalResult TmaLoadOp::verify() {
  TensorMapType map = getMap().getType();
  BufferType dst = getDst().getType();
  if (failed(verifyBarriers(*this, getBarriers().getType())))
    return failure();
  if (dst.isRing() || dst.getShape().size() != 2)
    return emitOpError() << "copies into one tile, not " << dst;
  if (getIndices().size() != 4)
    return emitOpError() << "expects 4 tile indices (a rank-4 view), got "
                         << getIndices().size();
  auto encoding = cast<SharedEncodingAttr>(dst.getEncoding());
  Type elt = dst.getElementType();
  SmallVector<int64_t, 2> stored = encoding.getStoredShape(dst.getShape());
  int64_t groups = std::max<int64_t>(getGather().size(), 1);
  if (stored[0] % groups || (groups > 1 && (stored[0] / groups) % 8))
    return emitOpError() << "gathers " << stored[0] << " stored rows in "
                         << groups
                         << " groups: each must be a multiple of 8 rows (whole "
                            "swizzle atoms)";
  if (!boxIsOnePanel(map, encoding, elt, stored[0] / groups, stored[1]))
    return emitOpError() << "copies panels of " << dst << " with " << map
                         << ": the box must be one panel (all stored rows, or "
                            "one gather group's, the swizzle's bytes of "
                            "columns) of the same "
                            "element type and swizzle";
  return success();
}

LogicalResult TmaReduceOp::verify() {
  TensorMapType map = getMap().getType();
  BufferType src = getSrc().getType();
  if (src.isRing() || src.getShape().size() != 2)
    return emitOpError() << "adds one tile, not " << src;
  if (getIndices().size() != 4)
    return emitOpError() << "expects 4 tile indices (a rank-4 view), got "
                         << getIndices().size();
  auto encoding = dyn_cast<SharedEncodingAttr>(src.getEncoding());
  Type elt = src.getElementType();
  if (!encoding || encoding.getTransposed() || !elt.isF32())
    return emitOpError() << "adds an f32 tile stored as it is (not "
                            "transposed), got "
                         << src;
  SmallVector<int64_t, 2> stored = encoding.getStoredShape(src.getShape());
  if (!boxIsOnePanel(map, encoding, elt, stored[0], stored[1]))
    return emitOpError() << "adds panels of " << src << " with " << map
                         << ": the box must be one panel (all rows, the "
                            "swizzle's bytes of columns) of the same element "
                            "type and swizzle";
  return success();
}

LogicalResult MBarrierInitOp::verify() {
  return verifyBarriers(*this, getBarriers().getType());
}

LogicalResult MBarrierArriveExpectTxOp::verify() {
  if (failed(verifyBarriers(*this, getBarriers().getType())))
    return failure();
  // mbarrier's transaction count is 20 bits wide.
  if (getBytes() >= (int64_t{1} << 20))
    return emitOpError() << "expects fewer than 2^20 transaction bytes, got "
                         << getBytes();
  return success();
}

LogicalResult MBarrierArriveOp::verify() {
  return verifyBarriers(*this, getBarriers().getType());
}

LogicalResult MBarrierWaitOp::verify() {
  return verifyBarriers(*this, getBarriers().getType());
}

//===----------------------------------------------------------------------===//
// Tensor memory and tcgen05
//===----------------------------------------------------------------------===//

/// Whether `type` is a buffer (not a ring) whose tiles are in `packed`
/// tensor memory.
static bool isPackedTensorMemory(BufferType type) {
  auto tmem = dyn_cast<TensorMemoryEncodingAttr>(type.getEncoding());
  return tmem && tmem.getPacked();
}

LogicalResult TmemMmaOp::verify() {
  auto lhs = cast<BufferType>(getLhs().getType());
  BufferType rhs = getRhs().getType(), acc = getAcc().getType();
  for (auto [name, type] : {std::pair<StringRef, BufferType>{"lhs", lhs},
                            {"rhs", rhs},
                            {"acc", acc}})
    if (type.isRing() || type.getShape().size() != 2)
      return emitOpError() << name << " must be one 2-D tile, not " << type;
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape(), d = acc.getShape();
  if (a[1] != b[0] || a[0] != d[0] || b[1] != d[1])
    return emitOpError() << "expects (M x K) · (K x N) into M x N, got "
                         << shapeString(a) << " · " << shapeString(b)
                         << " into " << shapeString(d);
  if (d[0] < 128 || d[0] % 128)
    return emitOpError() << "takes M = 128 (one row per tensor-memory lane) "
                            "or blocks of 128 rows, got "
                         << d[0];
  if (d[1] < 16 || d[1] > 256 || d[1] % 16)
    return emitOpError() << "takes N a multiple of 16 in [16, 256], got "
                         << d[1];
  if (std::optional<uint64_t> block = getRowBlock();
      block && *block >= static_cast<uint64_t>(d[0] / 128))
    return emitOpError() << "issues row block " << *block << " of "
                         << d[0] / 128 << " (blocks of 128 rows)";
  if (a[1] % 16)
    return emitOpError() << "takes K a multiple of 16, got " << a[1];
  Type element = rhs.getElementType();
  if (!element.isF16() && !element.isBF16())
    return emitOpError() << "multiplies f16 or bf16 (.kind::f16), not "
                         << element;
  if (lhs.getElementType() != element)
    return emitOpError() << "multiplies operands of one type, got "
                         << lhs.getElementType() << " and " << element;
  if (!acc.getElementType().isF32() || isPackedTensorMemory(acc))
    return emitOpError() << "accumulates in unpacked f32, not " << acc;
  if (lhs.getMemorySpace() == MemorySpace::Tensor && !isPackedTensorMemory(lhs))
    return emitOpError() << "reads a tensor-memory lhs packed, two 16-bit "
                            "elements per column, not "
                         << lhs;
  if (auto shared = dyn_cast<SharedEncodingAttr>(lhs.getEncoding());
      shared && shared.getTransposed() && d[0] != 128)
    return emitOpError() << "takes a transposed (M-major) shared lhs of one "
                            "block of 128 rows, got M = "
                         << d[0];
  // Descriptors describe swizzled panels.
  for (BufferType operand : {lhs, rhs})
    if (auto shared = dyn_cast<SharedEncodingAttr>(operand.getEncoding());
        shared && !shared.getSwizzle())
      return emitOpError() << "reads shared operands in swizzled panels, not "
                           << operand;
  return success();
}

LogicalResult TransposeViewOp::verify() {
  BufferType source = getSource().getType(), result = getResult().getType();
  BufferType expected = source.getTransposedView();
  if (source.isRing() || result.isRing() || !expected ||
      !isa<SharedEncodingAttr>(result.getEncoding()))
    return emitOpError() << "transposes one 2-D shared tile, not " << source;
  if (result != expected)
    return emitOpError() << "gives the source's transpose over the same "
                            "bytes (shape swapped, pad and swizzle kept, "
                            "transposed "
                            "flipped), expected "
                         << expected.getShape()[0] << "x"
                         << expected.getShape()[1] << " with transposed = "
                         << cast<SharedEncodingAttr>(expected.getEncoding())
                                .getTransposed()
                         << ", got " << result;
  return success();
}

LogicalResult TmemAliasOp::verify() {
  BufferType source = getSource().getType(), result = getResult().getType();
  if (source.isRing() || result.isRing() || source.getShape().size() != 2 ||
      result.getShape().size() != 2)
    return emitOpError() << "aliases one 2-D tile with another, not " << source
                         << " and " << result;
  if (source.getShape()[0] != result.getShape()[0])
    return emitOpError() << "aliases tiles of the same rows, got "
                         << source.getShape()[0] << " and "
                         << result.getShape()[0];
  auto columns = [](BufferType type) { return type.getRowBlockColumns(); };
  auto step = [](BufferType type) { return type.getRowBlockStep(); };
  if (columns(result) > columns(source))
    return emitOpError() << "takes " << columns(result)
                         << " columns a row block, more than the source's "
                         << columns(source);
  if (source.getShape()[0] > 128 && step(source) != step(result))
    return emitOpError() << "puts its row blocks " << step(result)
                         << " columns apart, the source " << step(source)
                         << " (set block_columns)";
  return success();
}

LogicalResult MmaCommitOp::verify() {
  if (failed(verifyBarriers(*this, getBarriers().getType())))
    return failure();
  // Statically known indices must leave room for every group's mbarrier.
  int64_t count = getBarriers().getType().getShape()[0];
  if (getJoint() && getGroups() == 1)
    return emitOpError() << "commits jointly with one group: there is no "
                            "other group's issuer to join";
  if (!getJoint() && static_cast<int64_t>(getGroups()) > count)
    return emitOpError() << "commits " << getGroups()
                         << " groups' products to mbarriers of a buffer of "
                         << count;
  return success();
}

/// A register tile in `#tilegpu.tmem_lanes` of a tensor-memory buffer's
/// shape: the checks tmem_load and tmem_store share.
static LogicalResult verifyTmemTransfer(Operation *op, Value value,
                                        BufferType buffer) {
  auto tile = cast<RankedTensorType>(value.getType());
  auto lanes = dyn_cast<TmemLanesLayoutAttr>(tile.getEncoding());
  if (!lanes || lanes.getKind() != TmemLanesKind::Acc)
    return op->emitOpError() << "moves tiles in #tilegpu.tmem_lanes<acc>, not "
                             << tile.getEncoding();
  if (buffer.isRing() || tile.getShape() != buffer.getShape())
    return op->emitOpError()
           << "moves a " << shapeString(tile.getShape())
           << " tile to or from a buffer of " << shapeString(buffer.getShape());
  if (tile.getElementType() != buffer.getElementType())
    return op->emitOpError()
           << "moves " << tile.getElementType() << " to or from a buffer of "
           << buffer.getElementType();
  if (failed(verifyRegisterTile(op, value, "tile")))
    return failure();
  // Each 32x32b access moves whole 32-bit columns of a thread's row.
  auto layout = cast<TmemLanesLayoutAttr>(tile.getEncoding());
  int64_t perColumn = isPackedTensorMemory(buffer) ? 2 : 1;
  if (layout.getRegisterCount(tile.getShape()) % perColumn)
    return op->emitOpError() << "splits a packed column between threads";
  return success();
}

LogicalResult TmemLoadOp::verify() {
  BufferType buffer = getBuffer().getType();
  if (isPackedTensorMemory(buffer))
    return emitOpError() << "reads unpacked 32-bit tiles, not " << buffer;
  return verifyTmemTransfer(*this, getResult(), buffer);
}

LogicalResult TmemStoreOp::verify() {
  return verifyTmemTransfer(*this, getValue(), getBuffer().getType());
}

/// The scales of the rows of an accumulator in tensor memory: one f32 per
/// row, in #tilegpu.tmem_lanes<rows> on 4 warps per block of 128 rows.
static LogicalResult verifyRowScales(Operation *op, BufferType buffer,
                                     Value scaleValue) {
  int64_t rows = buffer.getShape().size() == 2 ? buffer.getShape()[0] : 0;
  if (isPackedTensorMemory(buffer) || buffer.isRing() || rows < 128 ||
      rows % 128 || !buffer.getElementType().isF32())
    return op->emitOpError() << "scales an unpacked f32 accumulator of 128 "
                                "rows or blocks of 128 rows, not "
                             << buffer;
  auto scale = cast<RankedTensorType>(scaleValue.getType());
  auto lanes = dyn_cast<TmemLanesLayoutAttr>(scale.getEncoding());
  if (!lanes || lanes.getKind() != TmemLanesKind::Rows ||
      scale.getShape() != ArrayRef<int64_t>{rows} ||
      !scale.getElementType().isF32())
    return op->emitOpError()
           << "takes the scales as tensor<" << rows
           << "xf32, #tilegpu.tmem_lanes<rows, ...>>, not " << scale;
  if (lanes.getWarpsPerRowBlock() != 4)
    return op->emitOpError() << "runs on 4 warps per block of 128 rows (a "
                                "warp per quadrant of rows), not "
                             << lanes.getWarpsPerRowBlock();
  return success();
}

LogicalResult TmemScaleStoreOp::verify() {
  if (failed(verifyRowScales(*this, getBuffer().getType(), getScale())))
    return failure();
  // (A view's elements are f16, bf16 or f32: its type says so.)
  auto view = cast<tile::ViewType>(getView().getType());
  if (static_cast<int64_t>(getIndices().size()) != view.getRank() ||
      view.getRank() < 2)
    return emitOpError() << "takes one index per dimension of " << view
                         << " (at least 2), not " << getIndices().size();
  int64_t columns = getBuffer().getType().getShape()[1];
  int64_t viewColumns = view.getShape().back();
  if (!ShapedType::isDynamic(viewColumns) && viewColumns != columns)
    return emitOpError() << "stores rows of " << columns
                         << " columns into a view whose rows have "
                         << viewColumns;
  return success();
}

LogicalResult TmemScaleRowsOp::verify() {
  return verifyRowScales(*this, getBuffer().getType(), getScale());
}

LogicalResult WarpSpecializeOp::verify() {
  if (getRoles().empty())
    return emitOpError() << "expects at least one role";
  if (getRoles().size() != getBodies().size())
    return emitOpError() << "expects one region per role: " << getRoles().size()
                         << " roles, " << getBodies().size() << " regions";
  llvm::StringSet<> names;
  for (Attribute a : getRoles())
    if (!names.insert(cast<RoleAttr>(a).getName()).second)
      return emitOpError() << "role '" << cast<RoleAttr>(a).getName()
                           << "' appears twice";
  // A CTA has at most 1024 threads: 32 warps in all.
  int64_t totalWarps = 0;
  for (Attribute a : getRoles())
    totalWarps += std::min<int64_t>(cast<RoleAttr>(a).getWarps(), 1 << 20);
  if (totalWarps > 32)
    return emitOpError() << "has " << totalWarps
                         << " warps in its roles; a CTA has at most 32 (1024 "
                            "threads)";
  // setmaxnreg sets a whole warpgroup's budget: roles that share a
  // warpgroup share their budget, and a budget covers whole warpgroups.
  SmallVector<std::pair<int64_t, RoleAttr>> perWarp;
  for (Attribute a : getRoles()) {
    auto role = cast<RoleAttr>(a);
    for (int64_t w = 0; w < role.getWarps(); ++w)
      perWarp.push_back({role.getRegisters(), role});
  }
  for (size_t w = 0; w < perWarp.size(); w += 4) {
    size_t end = std::min(perWarp.size(), w + 4);
    auto budgeted = llvm::find_if(
        llvm::make_range(perWarp.begin() + w, perWarp.begin() + end),
        [](auto &warp) { return warp.first != 0; });
    if (budgeted == perWarp.begin() + end)
      continue;
    bool whole =
        end - w == 4 &&
        llvm::all_of(
            llvm::make_range(perWarp.begin() + w, perWarp.begin() + end),
            [&](auto &warp) { return warp.first == budgeted->first; });
    if (!whole)
      return emitOpError() << "role '" << budgeted->second.getName()
                           << "': a register budget applies to whole "
                              "warpgroups, but warps "
                           << w << "-" << end - 1
                           << " are not one warpgroup of one budget";
  }
  return success();
}

LogicalResult WarpSpecializeOp::verifyRegions() {
  // Warps of one role cannot take another role's values: each region only
  // reads values defined above the op.
  for (Region &body : getBodies())
    for (Block &block : body)
      if (block.getNumArguments() != 0)
        return emitOpError() << "role regions take no arguments";
  return success();
}

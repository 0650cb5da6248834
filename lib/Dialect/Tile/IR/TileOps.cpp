//===- TileOps.cpp - Operations of the tile dialect -----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace tiled_attn::tile;

#define GET_OP_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileOps.cpp.inc"

/// Prints a shape as `128x64`.
static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

//===----------------------------------------------------------------------===//
// DimOp
//===----------------------------------------------------------------------===//

LogicalResult DimOp::verify() {
  int64_t rank = getView().getType().getRank();
  int64_t index = static_cast<int64_t>(getIndex());
  if (index < 0 || index >= rank)
    return emitOpError() << "expects a dimension in [0, " << rank << "), got "
                         << index;
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  int64_t size = getView().getType().getShape()[getIndex()];
  if (!ShapedType::isDynamic(size))
    return IntegerAttr::get(IndexType::get(getContext()), size);
  // The sliced dimension of a slice is its size; the others, the view's.
  if (auto slice = getView().getDefiningOp<SliceOp>()) {
    if (slice.getDim() == getIndex())
      return slice.getSize();
    getViewMutable().assign(slice.getView());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp, ReadOp and WriteOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  ViewType view = getView().getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim >= view.getRank())
    return emitOpError() << "expects a dimension in [0, " << view.getRank()
                         << "), got " << dim;
  if (!ShapedType::isDynamic(view.getShape()[dim]))
    return emitOpError() << "expects dimension " << dim
                         << " of the view to be dynamic ('?'), got size "
                         << view.getShape()[dim];
  return success();
}

/// Checks what a read and a write share: one element index per view
/// dimension and the view's element type.
static LogicalResult verifyElementAccess(Operation *op, ViewType view,
                                         size_t numIndices, Type element,
                                         StringRef what) {
  if (static_cast<int64_t>(numIndices) != view.getRank())
    return op->emitOpError()
           << "expects " << view.getRank() << " indices for a rank-"
           << view.getRank() << " view, got " << numIndices;
  if (element != view.getElementType())
    return op->emitOpError() << "expects the " << what << " type (" << element
                             << ") to equal the view's element type ("
                             << view.getElementType() << ")";
  return success();
}

LogicalResult ReadOp::verify() {
  return verifyElementAccess(*this, getView().getType(), getIndices().size(),
                             getType(), "result");
}

LogicalResult WriteOp::verify() {
  return verifyElementAccess(*this, getView().getType(), getIndices().size(),
                             getValue().getType(), "value");
}

//===----------------------------------------------------------------------===//
// LoadOp and StoreOp
//===----------------------------------------------------------------------===//

/// Checks what a load and a store share: one index per view dimension, a
/// tile no deeper than the view, and matching element types.
static LogicalResult verifyTileAccess(Operation *op, ViewType view,
                                      size_t numIndices, ShapedType tile) {
  if (numIndices != static_cast<size_t>(view.getRank()))
    return op->emitOpError()
           << "expects " << view.getRank() << " indices for a rank-"
           << view.getRank() << " view, got " << numIndices;
  if (tile.getRank() > view.getRank())
    return op->emitOpError()
           << "expects a tile of rank at most " << view.getRank()
           << " (the view's), got rank " << tile.getRank();
  if (tile.getElementType() != view.getElementType())
    return op->emitOpError()
           << "expects the tile's element type (" << tile.getElementType()
           << ") to equal the view's (" << view.getElementType() << ")";
  return success();
}

/// In a kernel with a `tile.sdpa` attribute, the blocks a load or store
/// moves through the kernel's q, k, v, o and lse views (or a slice of one)
/// must be the blocks the attribute declares: q and o in blocks of block_m
/// rows, k and v in blocks of block_n keys, the head dims of the views, lse
/// in blocks of block_m. The runtime launches ceil(S_q / block_m) programs
/// and sizes its buffers from the attribute, so a body that disagrees would
/// leave rows unwritten or write past them.
static LogicalResult verifyBlockAgainstSdpa(Operation *op, Value view,
                                            ArrayRef<int64_t> block) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return success();
  auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
  if (!sdpa)
    return success();
  ArgAttr arg = getArgAttrOf(view);
  if (!arg)
    return success();
  StringRef name = arg.getArgumentName();
  int64_t d = sdpa.getHeadDim(), dv = sdpa.getValueHeadDim();
  int64_t bm = sdpa.getBlockM(), bn = sdpa.getBlockN();
  SmallVector<int64_t, 2> expected;
  StringRef rows, cols;
  if (arg.getRole() == ArgRole::Q) {
    expected = {bm, d};
    rows = "block_m", cols = "head_dim";
  } else if (arg.getRole() == ArgRole::K) {
    expected = {bn, d};
    rows = "block_n", cols = "head_dim";
  } else if (arg.getRole() == ArgRole::V) {
    expected = {bn, dv};
    rows = "block_n", cols = sdpa.getHeadDimV() ? "head_dim_v" : "head_dim";
  } else if (arg.getRole() == ArgRole::O) {
    expected = {bm, dv};
    rows = "block_m", cols = sdpa.getHeadDimV() ? "head_dim_v" : "head_dim";
  } else if (arg.getRole() == ArgRole::Lse) {
    expected = {bm};
    rows = "block_m";
  } else {
    return success();
  }
  if (ArrayRef<int64_t>(expected) == block)
    return success();
  InFlightDiagnostic diag =
      op->emitOpError() << "moves blocks of " << shapeStr(block) << " of '"
                        << name << "', but the kernel's #tile.sdpa declares "
                        << rows << " = " << expected[0];
  if (!cols.empty())
    diag << " and " << cols << " = " << expected[1];
  return diag << " (blocks of " << shapeStr(expected) << ")";
}

SmallVector<int64_t> LoadOp::getBlockShape() {
  SmallVector<int64_t> shape(getType().getShape());
  if (getTranspose())
    std::reverse(shape.begin(), shape.end());
  return shape;
}

LogicalResult LoadOp::verify() {
  if (failed(verifyTileAccess(*this, getView().getType(), getIndices().size(),
                              getType())))
    return failure();
  if (getTranspose() && getType().getRank() != 2)
    return emitOpError() << "expects a rank-2 tile with 'transpose', got rank "
                         << getType().getRank();
  if (!getGather().empty()) {
    int64_t groups = getGather().size(), rank = getType().getRank();
    if (getIndices().size() == static_cast<size_t>(rank))
      return emitOpError() << "expects 'gather' to replace a leading index, "
                              "but the view has none past the tile's";
    int64_t rows = getBlockShape()[0];
    if (rows % groups)
      return emitOpError() << "expects the block's " << rows
                           << " rows to split into the " << groups
                           << " groups of 'gather'";
  }
  return verifyBlockAgainstSdpa(*this, getView(), getBlockShape());
}

LogicalResult StoreOp::verify() {
  auto valueType = cast<ShapedType>(getValue().getType());
  if (failed(verifyTileAccess(*this, getView().getType(), getIndices().size(),
                              valueType)))
    return failure();
  if (getMask() &&
      cast<ShapedType>(getMask().getType()).getShape() != valueType.getShape())
    return emitOpError()
           << "expects the mask's shape ("
           << shapeStr(cast<ShapedType>(getMask().getType()).getShape())
           << ") to equal the value's (" << shapeStr(valueType.getShape())
           << ")";
  if (getAdd() && !valueType.getElementType().isF32())
    return emitOpError() << "adds f32 elements only, got "
                         << valueType.getElementType();
  return verifyBlockAgainstSdpa(*this, getView(), valueType.getShape());
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto input = cast<ShapedType>(getInput().getType());
  auto result = cast<ShapedType>(getType());
  if (input.getRank() != 2)
    return emitOpError() << "transposes rank-2 tiles, got rank "
                         << input.getRank();
  SmallVector<int64_t, 2> swapped = {input.getDimSize(1), input.getDimSize(0)};
  if (result.getShape() != ArrayRef<int64_t>(swapped))
    return emitOpError() << "expects a result of shape " << shapeStr(swapped)
                         << ", got " << shapeStr(result.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

LogicalResult MmaOp::verify() {
  auto lhs = cast<ShapedType>(getLhs().getType());
  auto rhs = cast<ShapedType>(getRhs().getType());
  auto acc = cast<ShapedType>(getAcc().getType());
  if (lhs.getDimSize(1) != rhs.getDimSize(0))
    return emitOpError() << "expects lhs columns (" << lhs.getDimSize(1)
                         << ") to equal rhs rows (" << rhs.getDimSize(0) << ")";
  if (acc.getDimSize(0) != lhs.getDimSize(0) ||
      acc.getDimSize(1) != rhs.getDimSize(1))
    return emitOpError() << "expects an accumulator of shape "
                         << lhs.getDimSize(0) << "x" << rhs.getDimSize(1)
                         << ", got " << shapeStr(acc.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp and BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto input = cast<ShapedType>(getInput().getType());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOpError() << "expects an axis in [0, " << input.getRank()
                         << "), got " << axis;
  if (input.getRank() == 1) {
    if (isa<ShapedType>(getType()))
      return emitOpError() << "expects a rank-1 input to reduce to a scalar, "
                              "got "
                           << getType();
    return success();
  }
  auto result = dyn_cast<ShapedType>(getType());
  SmallVector<int64_t> expected(input.getShape());
  expected.erase(expected.begin() + axis);
  if (!result)
    return emitOpError() << "expects a result of shape " << shapeStr(expected)
                         << " (the input without axis " << axis
                         << "), got a scalar";
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "expects a result of shape " << shapeStr(expected)
                         << " (the input without axis " << axis << "), got "
                         << shapeStr(result.getShape());
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto input = cast<ShapedType>(getInput().getType());
  auto result = cast<ShapedType>(getType());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (result.getRank() != input.getRank() + 1)
    return emitOpError() << "expects a result of rank " << input.getRank() + 1
                         << ", got rank " << result.getRank();
  if (axis < 0 || axis >= result.getRank())
    return emitOpError() << "expects an axis in [0, " << result.getRank()
                         << "), got " << axis;
  SmallVector<int64_t> kept(result.getShape());
  kept.erase(kept.begin() + axis);
  if (input.getShape() != ArrayRef<int64_t>(kept))
    return emitOpError() << "expects the result without axis " << axis << " ("
                         << shapeStr(kept) << ") to equal the input's shape ("
                         << shapeStr(input.getShape()) << ")";
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  // A broadcast of a splat is a splat of the larger shape.
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

//===----------------------------------------------------------------------===//
// IotaOp and masks
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  if (rank != 1 && rank != 2)
    return emitOpError() << "expects a rank-1 or rank-2 tile (a vector or a "
                            "score block), got "
                         << getType();
  int64_t dim = getDimAttr().getValue().getSExtValue();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "expects dim in [0, " << rank << ") for a rank-"
                         << rank << " tile, got " << dim;
  if (getStep() && !getType().getElementType().isF32())
    return emitOpError() << "expects f32 positions with a step, got "
                         << getType();
  return success();
}

LogicalResult GatherOp::verify() {
  ViewType view = getView().getType();
  if (static_cast<int64_t>(getIndices().size()) != view.getRank())
    return emitOpError() << "expects " << view.getRank()
                         << " indices for a rank-" << view.getRank()
                         << " view, got " << getIndices().size();
  if (getType().getElementType() != view.getElementType())
    return emitOpError() << "expects a result of the view's element type "
                         << view.getElementType() << ", got " << getType();
  bool anyTile = false;
  for (auto [d, index] : llvm::enumerate(getIndices())) {
    auto tile = dyn_cast<RankedTensorType>(index.getType());
    if (!tile)
      continue;
    anyTile = true;
    if (tile.getShape() != getType().getShape())
      return emitOpError() << "expects index " << d
                           << " to be an index or a tile of the result's "
                              "shape, got "
                           << tile;
  }
  if (!anyTile)
    return emitOpError() << "expects at least one tile of indices (one "
                            "element at scalar indices is tile.read)";
  return success();
}

LogicalResult ApplyOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() != 2)
    return emitOpError() << "expects a rank-2 result (a score block), got "
                         << type;
  if (getScore()) {
    if (getScore().getType() != type)
      return emitOpError() << "expects a score function's result to be the "
                              "score's type "
                           << getScore().getType() << ", got " << type;
  } else if (!type.getElementType().isInteger(1)) {
    return emitOpError() << "expects a mask function (no score) to give an "
                            "i1 tile, got "
                         << type;
  }
  return success();
}

LogicalResult ApplyOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!fn)
    return emitOpError() << "expects '" << getCallee()
                         << "' to be a func.func of the module";
  if (fn.isExternal())
    return emitOpError() << "expects '" << getCallee()
                         << "' to have a body (it is inlined)";
  Builder b(getContext());
  SmallVector<Type> inputs;
  if (getScore())
    inputs.push_back(b.getF32Type());
  inputs.append(4, b.getIndexType());
  llvm::append_range(inputs, getCaptures().getTypes());
  Type result = getScore() ? Type(b.getF32Type()) : Type(b.getI1Type());
  auto expected = b.getFunctionType(inputs, result);
  if (fn.getFunctionType() != expected)
    return emitOpError() << "expects '" << getCallee() << "' of type "
                         << expected << " (" << (getScore() ? "score, " : "")
                         << "batch, head, q_idx, kv_idx, captures), got "
                         << fn.getFunctionType();
  return success();
}

LogicalResult BoundsMaskOp::verify() {
  int64_t rank = getType().getRank();
  if (static_cast<int64_t>(getOffsets().size()) != rank ||
      static_cast<int64_t>(getLimits().size()) != rank)
    return emitOpError() << "expects " << rank
                         << " offsets and limits for a rank-" << rank
                         << " mask, got " << getOffsets().size()
                         << " offsets and " << getLimits().size() << " limits";
  return success();
}

/// Builds the i1 tile of `type` whose element at each multi-index is
/// `pred(index)`, as a splat when all elements agree.
template <typename Pred>
static DenseElementsAttr buildMask(ShapedType type, Pred pred) {
  SmallVector<bool> bits;
  bits.reserve(type.getNumElements());
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    bits.push_back(pred(ArrayRef<int64_t>(index)));
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (++index[d] < type.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, bits);
}

static std::optional<int64_t> constantIndex(Attribute attr) {
  if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  return std::nullopt;
}

OpFoldResult BoundsMaskOp::fold(FoldAdaptor adaptor) {
  SmallVector<int64_t> offsets, limits;
  for (Attribute a : adaptor.getOffsets()) {
    auto v = constantIndex(a);
    if (!v)
      return {};
    offsets.push_back(*v);
  }
  for (Attribute a : adaptor.getLimits()) {
    auto v = constantIndex(a);
    if (!v)
      return {};
    limits.push_back(*v);
  }
  return buildMask(getType(), [&](ArrayRef<int64_t> idx) {
    for (size_t d = 0; d < idx.size(); ++d)
      if (offsets[d] + idx[d] >= limits[d])
        return false;
    return true;
  });
}

OpFoldResult CausalMaskOp::fold(FoldAdaptor adaptor) {
  auto row = constantIndex(adaptor.getRowOffset());
  auto col = constantIndex(adaptor.getColOffset());
  if (!row || !col)
    return {};
  return buildMask(getType(), [&](ArrayRef<int64_t> idx) {
    return *col + idx[1] <= *row + idx[0];
  });
}

LogicalResult CausalMaskOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError() << "expects a rank-2 mask, got rank "
                         << getType().getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// WindowMaskOp
//===----------------------------------------------------------------------===//

OpFoldResult WindowMaskOp::fold(FoldAdaptor adaptor) {
  auto row = constantIndex(adaptor.getRowOffset());
  auto col = constantIndex(adaptor.getColOffset());
  auto lo = constantIndex(adaptor.getLo());
  auto hi = constantIndex(adaptor.getHi());
  if (!row || !col || !lo || !hi)
    return {};
  return buildMask(getType(), [&](ArrayRef<int64_t> idx) {
    int64_t diagonal = (*col + idx[1]) - (*row + idx[0]);
    return *lo <= diagonal && diagonal <= *hi;
  });
}

LogicalResult WindowMaskOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError() << "expects a rank-2 mask, got rank "
                         << getType().getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// OnlineSoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult OnlineSoftmaxOp::verify() {
  auto scores = cast<ShapedType>(getScores().getType());
  auto rows = cast<ShapedType>(getRunningMax().getType());
  if (scores.getRank() != 2)
    return emitOpError() << "expects rank-2 scores, got rank "
                         << scores.getRank();
  if (rows.getRank() != 1 || rows.getDimSize(0) != scores.getDimSize(0))
    return emitOpError() << "expects running statistics of shape "
                         << scores.getDimSize(0) << " (one per score row), got "
                         << shapeStr(rows.getShape());
  if (auto threshold = getRescaleThresholdAttr()) {
    double t = threshold.getValueAsDouble();
    if (!(t > 0.0 && t <= 16.0))
      return emitOpError()
             << "expects a lazy_rescale threshold in (0, 16], got " << t;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LogSumExpOp
//===----------------------------------------------------------------------===//

LogicalResult LogSumExpOp::verify() {
  auto rows = cast<ShapedType>(getMax().getType());
  if (rows.getRank() != 1)
    return emitOpError() << "expects row statistics of rank 1, got rank "
                         << rows.getRank();
  return success();
}

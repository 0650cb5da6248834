//===- Common.cpp - GPU-level types and family-independent helpers -------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What every family's patterns share: the type converter (register tiles
// through the distributed-layout interface, buffers through their memory
// encoding, views as strided memrefs) and small builders.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Target/Encodings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include <algorithm>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

Value tiled_attn::cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value tiled_attn::inBand(OpBuilder &b, Location loc, Value rowBase,
                         Value colBase, ArrayRef<int64_t> rowOffset,
                         ArrayRef<int64_t> colOffset, Value lo, Value hi) {
  SmallVector<int32_t> offsets;
  for (auto [r, c] : llvm::zip_equal(rowOffset, colOffset))
    offsets.push_back(static_cast<int32_t>(c - r));
  auto [minIt, maxIt] = std::minmax_element(offsets.begin(), offsets.end());
  Value base = arith::SubIOp::create(b, loc, colBase, rowBase);
  // a and b past the offsets' range test the same: clamp them there, where
  // they fit 32 bits.
  auto bound = [&](Value side) -> Value {
    Value v = arith::SubIOp::create(b, loc, side, base);
    v = arith::MaxSIOp::create(b, loc, v, cIdx(b, loc, *minIt - 1));
    v = arith::MinSIOp::create(b, loc, v, cIdx(b, loc, *maxIt + 1));
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  };
  Value from = bound(lo), to = bound(hi);
  auto type =
      VectorType::get({static_cast<int64_t>(offsets.size())}, b.getI32Type());
  Value diagonals = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef(offsets)));
  Value above =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, diagonals,
                            vector::BroadcastOp::create(b, loc, type, from));
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, diagonals,
                            vector::BroadcastOp::create(b, loc, type, to));
  return arith::AndIOp::create(b, loc, above, below);
}

Value tiled_attn::pieceInBounds(OpBuilder &b, Location loc, Value row,
                                Value rows, Value col, int64_t width,
                                Value cols) {
  Value inRows =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows);
  Value inCols = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sle,
      arith::AddIOp::create(b, loc, col, cIdx(b, loc, width)), cols);
  return arith::AndIOp::create(b, loc, inRows, inCols);
}

namespace {
/// The role region of a tilegpu.warp_specialize that holds `region` (or is
/// it), or null.
Region *enclosingRoleRegion(Region *region) {
  for (; region; region = region->getParentRegion())
    if (isa<WarpSpecializeOp>(region->getParentOp()))
      return region;
  return nullptr;
}

/// The role whose region holds `region` (or a region nested in it), and the
/// role's first warp.
std::optional<std::pair<RoleAttr, int64_t>> enclosingRole(Region *region) {
  Region *roleRegion = enclosingRoleRegion(region);
  if (!roleRegion)
    return std::nullopt;
  auto specialized = cast<WarpSpecializeOp>(roleRegion->getParentOp());
  int64_t first = 0;
  for (auto [i, attr] : llvm::enumerate(specialized.getRoles())) {
    auto role = cast<RoleAttr>(attr);
    if (i == roleRegion->getRegionNumber())
      return std::make_pair(role, first);
    first += role.getWarps();
  }
  return std::nullopt;
}
} // namespace

int64_t tiled_attn::kernelWarps(Operation *op) {
  if (auto role = enclosingRole(op->getParentRegion()))
    return role->first.getActive() ? role->first.getActive()
                                   : role->first.getWarps();
  for (; op; op = op->getParentOp())
    if (auto warps =
            op->getAttrOfType<IntegerAttr>(TileGPUDialect::getWarpsAttrName()))
      return warps.getInt();
  return 0;
}

int64_t tiled_attn::firstFreeNamedBarrier(Operation *op) {
  Region *roleRegion = enclosingRoleRegion(op->getParentRegion());
  if (!roleRegion)
    return 1;
  return 1 +
         static_cast<int64_t>(cast<WarpSpecializeOp>(roleRegion->getParentOp())
                                  .getRoles()
                                  .size());
}

FailureOr<int64_t> tiled_attn::groupThreads(Operation *op, int64_t groups) {
  int64_t warps = kernelWarps(op);
  if (groups == 1)
    return 32 * warps;
  if (warps % groups)
    return op->emitError() << "GPU lowering: " << warps
                           << " warps do not split into " << groups
                           << " groups";
  return 32 * warps / groups;
}

void tiled_attn::enterGroupLeader(OpBuilder &b, Location loc, int64_t group,
                                  int64_t threadsPerGroup) {
  Value here = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     threadIdInRole(b, loc),
                                     cIdx(b, loc, group * threadsPerGroup));
  auto guard = scf::IfOp::create(b, loc, here, /*withElse=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
}

TmemLanePosition tiled_attn::tmemLanePosition(OpBuilder &b, Location loc,
                                              TmemLanesLayoutAttr layout) {
  TmemLanePosition at;
  Value tid = threadIdInRole(b, loc);
  Value warp = arith::DivUIOp::create(b, loc, tid, cIdx(b, loc, 32));
  at.lane = arith::RemUIOp::create(b, loc, tid, cIdx(b, loc, 32));
  at.quadrant = arith::RemUIOp::create(b, loc, warp, cIdx(b, loc, 4));
  if (layout.getRowBlocks() > 1) {
    // Block r of 128 rows is the r-th group of warps'.
    Value perBlock = cIdx(b, loc, layout.getWarpsPerRowBlock());
    at.rowBlock = arith::DivUIOp::create(b, loc, warp, perBlock);
    warp = arith::RemUIOp::create(b, loc, warp, perBlock);
  }
  at.columnGroup = arith::DivUIOp::create(b, loc, warp, cIdx(b, loc, 4));
  return at;
}

Value tiled_attn::threadIdInRole(OpBuilder &b, Location loc) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto role = enclosingRole(b.getInsertionBlock()->getParent());
  if (role && role->second != 0)
    tid = arith::SubIOp::create(b, loc, tid, cIdx(b, loc, 32 * role->second));
  return tid;
}

Value tiled_attn::uniformGroupIndex(OpBuilder &b, Location loc,
                                    int64_t groupThreads) {
  // Built where it is used, in the loop that issues the products: the
  // shuffle is not hoisted out of it, so neither are the offsets and
  // descriptors computed from it, which ptxas then keeps in uniform
  // registers at each product instead of holding them in the threads'
  // registers across the loop (a per-product shuffle costs less than
  // those registers; at D = 128 the backward's main kernel spilled
  // 388-996 bytes and ptxas serialized its wgmmas without it).
  Value group = arith::DivUIOp::create(b, loc, threadIdInRole(b, loc),
                                       cIdx(b, loc, groupThreads));
  Type i32 = b.getI32Type();
  Value value = arith::IndexCastUIOp::create(b, loc, i32, group);
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  // A group is whole warps, so every lane holds lane 0's value already;
  // the shuffle only says so to ptxas.
  Value uniform = NVVM::ShflOp::create(b, loc, i32, c32(-1), value, c32(0),
                                       c32(0x1f), NVVM::ShflKind::idx,
                                       /*return_value_and_is_valid=*/nullptr);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), uniform);
}

TileGPUToNVVMTypeConverter::TileGPUToNVVMTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](tile::ViewType view) -> Type {
    SmallVector<int64_t> strides(view.getRank(), ShapedType::kDynamic);
    strides.back() = 1;
    // A kernel argument's view starts at its base pointer (the kernel ABI
    // passes no offset); a slice of it (tile.slice) further on.
    auto layout = StridedLayoutAttr::get(view.getContext(),
                                         ShapedType::kDynamic, strides);
    return MemRefType::get(view.getShape(), view.getElementType(), layout);
  });
  // A tensor map is passed by value as a grid constant; the kernel sees its
  // address (see the kernel ABI, KernelABI.cpp).
  addConversion([](TensorMapType type) -> Type {
    return LLVM::LLVMPointerType::get(type.getContext());
  });
  addConversion([](RankedTensorType type) -> std::optional<Type> {
    DistributedLayoutAttrInterface layout = getDistributedLayout(type);
    if (!layout)
      return std::nullopt;
    return VectorType::get({layout.getRegisterCount(type.getShape())},
                           type.getElementType());
  });
  addConversion([](BufferType type) -> std::optional<Type> {
    // A tensor-memory buffer is the 32-bit TMEM address of its first
    // column (Tcgen05.cpp).
    if (type.getMemorySpace() == MemorySpace::Tensor)
      return IntegerType::get(type.getContext(), 32);
    auto shared = dyn_cast<SharedEncodingAttr>(type.getEncoding());
    if (!shared)
      return std::nullopt;
    SmallVector<int64_t> shape;
    if (type.isRing())
      shape.push_back(type.getShape()[0]);
    if (type.getShape().size() == 1)
      shape.push_back(type.getShape()[0]);
    else
      llvm::append_range(shape, shared.getStoredShape(type.getTileShape()));
    auto space = gpu::AddressSpaceAttr::get(type.getContext(),
                                            gpu::AddressSpace::Workgroup);
    return MemRefType::get(shape, type.getElementType(),
                           MemRefLayoutAttrInterface(), space);
  });
}

FailureOr<uint64_t> tiled_attn::swizzledDescriptorBits(
    Operation *op, StringRef unit,
    llvm::Expected<uint64_t> (*encode)(const encoding::SharedMatrix &),
    SharedEncodingAttr panels, int64_t leadingBytes) {
  encoding::SharedMatrix matrix;
  matrix.leadingByteOffset = leadingBytes;
  matrix.strideByteOffset = 8 * panels.getSwizzle();
  std::optional<encoding::Swizzle> swizzle =
      encoding::swizzleOfBytes(panels.getSwizzle());
  if (!swizzle || *swizzle == encoding::Swizzle::None) {
    op->emitError() << "GPU lowering: " << unit
                    << " reads shared operands in swizzled panels, not "
                    << panels;
    return failure();
  }
  matrix.swizzle = *swizzle;
  llvm::Expected<uint64_t> bits = encode(matrix);
  if (!bits) {
    op->emitError() << "GPU lowering: " << unit
                    << " descriptor: " << llvm::toString(bits.takeError());
    return failure();
  }
  return *bits;
}

Value tiled_attn::sharedDescriptor(OpBuilder &b, Location loc, Value buffer,
                                   Value byteOffset, uint64_t bits) {
  // The start address field is the operand's shared address >> 4 in bits
  // 0-13 of the low word (shared addresses stay below 2^18). A constant
  // offset that is a multiple of 16 bytes (a k-step's, a panel's) adds its
  // >> 4 to the field without carrying out of it, so the descriptor is the
  // buffer's base descriptor, built once, plus one 32-bit add: the k-steps
  // of an mma share the base, as CUTLASS's descriptor iterators do, instead
  // of a 64-bit add, shift, mask and or each. The high word is constant.
  int64_t constant = 0;
  Value dynamic = byteOffset;
  if (std::optional<int64_t> c = getConstantIntValue(byteOffset)) {
    constant = *c;
    dynamic = Value();
  } else if (auto add = byteOffset.getDefiningOp<arith::AddIOp>()) {
    if (std::optional<int64_t> c = getConstantIntValue(add.getRhs())) {
      constant = *c;
      dynamic = add.getLhs();
    }
  }
  if (constant % 16 != 0) {
    constant = 0;
    dynamic = byteOffset;
  }
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  if (dynamic)
    address = arith::AddIOp::create(b, loc, address, dynamic);
  Value low = arith::IndexCastUIOp::create(b, loc, i32, address);
  low = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, low, c32(4)), c32(0x3fff));
  low = arith::OrIOp::create(b, loc, low,
                             c32(static_cast<int32_t>(bits & 0xffffffffu)));
  if (constant != 0)
    low = arith::AddIOp::create(b, loc, low, c32(constant >> 4));
  Value wide = arith::ExtUIOp::create(b, loc, i64, low);
  return arith::OrIOp::create(
      b, loc, wide,
      arith::ConstantIntOp::create(
          b, loc, i64, static_cast<int64_t>(bits & ~uint64_t(0xffffffffu))));
}

Value tiled_attn::registerIndices(OpBuilder &b, Location loc, Value base,
                                  ArrayRef<int64_t> offsets) {
  auto type =
      VectorType::get({static_cast<int64_t>(offsets.size())}, b.getIndexType());
  Value constants = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, offsets));
  Value splat = vector::BroadcastOp::create(b, loc, type, base);
  return arith::AddIOp::create(b, loc, splat, constants);
}

Value tiled_attn::positionVector(OpBuilder &b, Location loc, Value base,
                                 ArrayRef<int64_t> offsets, VectorType type,
                                 Value step) {
  if (auto floatTy = dyn_cast<FloatType>(type.getElementType())) {
    Value first = arith::SIToFPOp::create(
        b, loc, floatTy,
        arith::IndexCastOp::create(b, loc, b.getI32Type(), base));
    if (step)
      first = arith::MulFOp::create(b, loc, first, step);
    Value splat = vector::BroadcastOp::create(b, loc, type, first);
    if (llvm::all_of(offsets, [](int64_t o) { return o == 0; }))
      return splat;
    SmallVector<Attribute> values;
    for (int64_t o : offsets)
      values.push_back(b.getFloatAttr(floatTy, static_cast<double>(o)));
    Value constants = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, values));
    if (step)
      return vector::FMAOp::create(
          b, loc, constants, vector::BroadcastOp::create(b, loc, type, step),
          splat);
    return arith::AddFOp::create(b, loc, splat, constants);
  }
  return arith::IndexCastOp::create(b, loc, type,
                                    registerIndices(b, loc, base, offsets));
}

int64_t tiled_attn::kMajorStepOffset(int64_t kStep, int64_t panelColumns,
                                     int64_t panelBytes, int64_t elementBytes) {
  int64_t col = kStep * 16;
  return (col / panelColumns) * panelBytes +
         (col % panelColumns) * elementBytes;
}

Value tiled_attn::combineReduction(OpBuilder &b, Location loc,
                                   tile::ReduceKind kind, Value x, Value y) {
  switch (kind) {
  case tile::ReduceKind::Max:
    return arith::MaximumFOp::create(b, loc, x, y);
  case tile::ReduceKind::Min:
    return arith::MinimumFOp::create(b, loc, x, y);
  case tile::ReduceKind::Sum:
    return arith::AddFOp::create(b, loc, x, y);
  }
  llvm_unreachable("a reduction kind the lowering does not know");
}

Value tiled_attn::warpVoteAny(OpBuilder &b, Location loc, Value predicate) {
  return NVVM::VoteSyncOp::create(
      b, loc, b.getI1Type(), arith::ConstantIntOp::create(b, loc, -1, 32),
      predicate,
      NVVM::VoteSyncKindAttr::get(b.getContext(), NVVM::VoteSyncKind::any));
}

void tiled_attn::fenceAsyncShared(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

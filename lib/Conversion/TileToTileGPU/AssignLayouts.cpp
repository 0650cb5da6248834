//===- AssignLayouts.cpp - Register layouts and shared encodings ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Tiles that must share an encoding (the operands and results of an
// elementwise op, the values a loop carries) form classes; the ops whose
// encoding the matrix unit fixes (mma, row and column reductions and
// broadcasts, masks, stores) seed them. Every class must end with exactly one
// encoding: a register layout of the target's family, a shared-memory
// encoding for tiles that stay in shared memory, or (tcgen05) tensor memory.
//
// The tcgen05 family accumulates in tensor memory, where an accumulator
// stays: the tiles that live there are the mma's accumulator and result,
// what loops and branches carry of them, and, where an accumulator is
// scaled by a row broadcast on its way to the next mma (the correction of
// O), the tile scaled and the product. Where such a tile meets a register
// op (S read by the softmax, O by the correction and the epilogue) a
// tile.convert_layout marks the move (tcgen05.ld); so it does where a tile
// computed in registers goes there (the corrected O; P, which the mma reads
// from tensor memory packed two to a column: tcgen05.st).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Conversion/TileToTileGPU/TileToTileGPU.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/RegionTies.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Target/TargetInfo.h"

#include "llvm/ADT/EquivalenceClasses.h"

namespace tiled_attn {
#define GEN_PASS_DEF_TILEGPUASSIGNLAYOUTSPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn::tile;
using tiled_attn::tilegpu::DistributedLayoutAttrInterface;
using tiled_attn::tilegpu::Family;
using tiled_attn::tilegpu::MmaSyncKind;
using tiled_attn::tilegpu::MmaSyncLayoutAttr;
using tiled_attn::tilegpu::SharedEncodingAttr;
using tiled_attn::tilegpu::TensorMemoryEncodingAttr;
using tiled_attn::tilegpu::TmemLanesKind;
using tiled_attn::tilegpu::TmemLanesLayoutAttr;
using tiled_attn::tilegpu::WgmmaKind;
using tiled_attn::tilegpu::WgmmaLayoutAttr;

Operation *tiled_attn::firstReader(Value value, ArrayRef<OpOperand *> uses) {
  Block *block = isa<BlockArgument>(value)
                     ? cast<BlockArgument>(value).getOwner()
                     : value.getDefiningOp()->getBlock();
  Operation *first = nullptr;
  for (OpOperand *use : uses) {
    Operation *reader = block->findAncestorOpInBlock(*use->getOwner());
    if (!first || reader->isBeforeInBlock(first))
      first = reader;
  }
  return first;
}

SharedEncodingAttr tiled_attn::mmaSyncSharedEncoding(MLIRContext *ctx,
                                                     bool transposed) {
  return SharedEncodingAttr::get(ctx, /*swizzle=*/0, /*pad=*/8, transposed);
}

int64_t tiled_attn::tmaSwizzleBytes(int64_t rowBytes, int64_t maxSwizzle) {
  for (int64_t swizzle : {128, 64, 32})
    if (swizzle <= maxSwizzle && rowBytes % swizzle == 0)
      return swizzle;
  return 0;
}

SharedEncodingAttr tiled_attn::tmaSharedEncoding(MLIRContext *ctx,
                                                 ArrayRef<int64_t> shape,
                                                 Type elementType,
                                                 bool transposed,
                                                 int64_t maxSwizzle) {
  int64_t columns = transposed ? shape[0] : shape[1];
  int64_t swizzle = tmaSwizzleBytes(
      columns * elementType.getIntOrFloatBitWidth() / 8, maxSwizzle);
  if (!swizzle)
    return nullptr;
  return SharedEncodingAttr::get(ctx, swizzle, /*pad=*/0, transposed);
}

LoadOp tiled_attn::stagingLoad(Value value) {
  if (auto load = value.getDefiningOp<LoadOp>())
    return load;
  if (auto loop = value.getDefiningOp<scf::ForOp>())
    return stagingLoad(
        loop.getInitArgs()[cast<OpResult>(value).getResultNumber()]);
  // Both sides of a branch hand on blocks of the same stream (layout
  // assignment ties them).
  if (auto branch = value.getDefiningOp<scf::IfOp>())
    return stagingLoad(
        branch.thenYield().getOperand(cast<OpResult>(value).getResultNumber()));
  auto arg = dyn_cast<BlockArgument>(value);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!loop || arg.getArgNumber() == 0)
    return nullptr;
  return stagingLoad(loop.getInitArgs()[arg.getArgNumber() - 1]);
}

/// The load that stages `value` in shared memory and whether `value` is
/// that block transposed: `value` itself (stagingLoad), or a tile.transpose
/// of such a value, which convert-tile-to-tilegpu makes a view of the same
/// buffer (tilegpu.transpose_view).
std::pair<LoadOp, bool> tiled_attn::stagingOf(Value value) {
  if (LoadOp load = stagingLoad(value))
    return {load, load.getTranspose()};
  if (auto transpose = value.getDefiningOp<TransposeOp>())
    if (LoadOp load = stagingLoad(transpose.getInput()))
      return {load, !load.getTranspose()};
  return {LoadOp(), false};
}

namespace {

/// The encodings a matrix-unit family gives: register layouts by role (the
/// roles of mma.sync's kinds: acc, rows, cols, opa) and the shared encoding
/// of tiles its mma reads from shared memory.
struct FamilyLayouts {
  MLIRContext *ctx;
  Family family;
  int64_t warps;
  /// mma.sync: tiles it reads from shared memory arrive by TMA.
  bool tma;
  /// tcgen05: blocks of 128 rows of the kernel's accumulators, a group of
  /// warps / rowBlocks warps each (FlashAttention-4's two Q tiles: 2); with
  /// fewer blocks than warpgroups, the warps of a lane quadrant split the
  /// columns (the backward's 128 keys on 8 warps).
  int64_t rowBlocks = 1;
  /// Whether a tile of fewer rows than the warps take may have its warps
  /// side by side on its columns (acc): not in a program that reduces such
  /// a tile along its rows (the forward's softmax on too few query rows),
  /// which would need the other warps' registers.
  bool splitColumns = true;

  Attribute reg(MmaSyncKind kind) const {
    if (family == Family::MmaSync)
      return MmaSyncLayoutAttr::get(ctx, kind, warps);
    if (family == Family::Tcgen05) {
      // An mma operand never sits in tcgen05's registers; P moves to tensor
      // memory.
      assert(kind != MmaSyncKind::OperandA && "tcgen05 reads A from memory");
      TmemLanesKind lanes = kind == MmaSyncKind::Rows   ? TmemLanesKind::Rows
                            : kind == MmaSyncKind::Cols ? TmemLanesKind::Cols
                                                        : TmemLanesKind::Acc;
      // A group of warps per block of 128 rows (one Q tile each).
      return TmemLanesLayoutAttr::get(ctx, lanes, warps, rowBlocks);
    }
    WgmmaKind wgmma = kind == MmaSyncKind::Acc    ? WgmmaKind::Acc
                      : kind == MmaSyncKind::Rows ? WgmmaKind::Rows
                      : kind == MmaSyncKind::Cols ? WgmmaKind::Cols
                                                  : WgmmaKind::OperandA;
    return WgmmaLayoutAttr::get(ctx, wgmma, warps / 4);
  }
  /// The accumulator layout of a 2-D tile of `shape`: reg(Acc), but on
  /// wgmma a tile of fewer rows than 64 per warpgroup (dQ's 64 rows on two
  /// warpgroups) has its warpgroups side by side on the columns, as many
  /// blocks of columns as the rows leave over.
  Attribute acc(ArrayRef<int64_t> shape) const {
    // (mma.sync alike: a tile of fewer rows than 16 a warp has its warps
    // side by side on the columns, the backward's 64-key blocks at D = 192
    // and 256 on 8 warps.)
    if (!splitColumns)
      return reg(MmaSyncKind::Acc);
    if (family == Family::MmaSync) {
      int64_t rows = 16 * warps;
      if (shape.size() != 2 || shape[0] >= rows || shape[0] % 16 ||
          rows % shape[0] || shape[1] % (8 * (rows / shape[0])))
        return reg(MmaSyncKind::Acc);
      return MmaSyncLayoutAttr::get(ctx, MmaSyncKind::Acc, warps,
                                    rows / shape[0]);
    }
    int64_t rows = 64 * (warps / 4);
    if (family != Family::Wgmma || shape.size() != 2 || shape[0] >= rows ||
        shape[0] % 64 || rows % shape[0] ||
        shape[1] % (8 * (rows / shape[0])))
      return reg(MmaSyncKind::Acc);
    return WgmmaLayoutAttr::get(ctx, WgmmaKind::Acc, warps / 4,
                                rows / shape[0]);
  }
  /// The layout of a vector of `kind` (rows or cols) broadcast over, or
  /// reduced from, an accumulator of `accLayout`: split into the same
  /// column blocks.
  Attribute vectorOf(MmaSyncKind kind, Attribute accLayout) const {
    if (auto blocks = dyn_cast<WgmmaLayoutAttr>(accLayout);
        blocks && blocks.getColumnBlocks() > 1)
      return WgmmaLayoutAttr::get(
          ctx, kind == MmaSyncKind::Rows ? WgmmaKind::Rows : WgmmaKind::Cols,
          blocks.getWarpgroups(), blocks.getColumnBlocks());
    if (auto blocks = dyn_cast<MmaSyncLayoutAttr>(accLayout);
        blocks && blocks.getColumnBlocks() > 1)
      return MmaSyncLayoutAttr::get(ctx, kind, blocks.getWarps(),
                                    blocks.getColumnBlocks());
    return reg(kind);
  }
  /// The shared encoding of `tile` (stored transposed or not). mma.sync:
  /// rows padded for ldmatrix, or with `tma` the swizzled panels TMA writes
  /// (ldmatrix reads them with the swizzle undone in its addresses).
  /// wgmma and tcgen05: always the panels, which their descriptors read.
  /// Null where the tile's rows fit no swizzle (no wider than
  /// `maxSwizzle` bytes).
  Attribute shared(RankedTensorType tile, bool transposed,
                   int64_t maxSwizzle = 128) const {
    if (family == Family::MmaSync && !tma)
      return tiled_attn::mmaSyncSharedEncoding(ctx, transposed);
    return tiled_attn::tmaSharedEncoding(ctx, tile.getShape(),
                                         tile.getElementType(), transposed,
                                         maxSwizzle);
  }
  /// tcgen05: a tile in tensor memory (`packed`: 16-bit, two to a column).
  Attribute tensorMemory(bool packed = false) const {
    return TensorMemoryEncodingAttr::get(ctx, packed, /*blockColumns=*/0);
  }
};

bool isRowBroadcast(Value v) {
  auto bcast = v.getDefiningOp<BroadcastOp>();
  return bcast && bcast.getAxis() == 1;
}

/// The tiles of a tcgen05 kernel that live in tensor memory, with the moves
/// to and from registers made explicit (see the file header).
class TensorMemoryPlacement {
public:
  explicit TensorMemoryPlacement(func::FuncOp func) : func(func) {}
  LogicalResult run();
  bool contains(Value v) const { return resident.contains(v); }

private:
  bool isResidentUse(OpOperand &use) const;
  func::FuncOp func;
  llvm::SetVector<Value> resident;
};

/// Whether `use` of a resident tile keeps it in tensor memory: as an mma's
/// accumulator, or handed on by a loop or a branch.
bool TensorMemoryPlacement::isResidentUse(OpOperand &use) const {
  Operation *user = use.getOwner();
  if (auto mma = dyn_cast<MmaOp>(user))
    return &use == &mma.getAccMutable();
  if (isa<scf::YieldOp>(user))
    return isa<scf::ForOp, scf::IfOp>(user->getParentOp());
  if (auto loop = dyn_cast<scf::ForOp>(user))
    return use.getOperandNumber() >= loop.getNumControlOperands();
  return false;
}

LogicalResult TensorMemoryPlacement::run() {
  // A constant accumulator gets a copy of its own: its encoding is tensor
  // memory, whatever else reads the same constant.
  func.walk([&](MmaOp mma) {
    auto cst = mma.getAcc().getDefiningOp<arith::ConstantOp>();
    if (cst && !cst->hasOneUse()) {
      OpBuilder b(mma);
      mma.getAccMutable().assign(b.clone(*cst)->getResult(0));
    }
  });
  func.walk([&](MmaOp mma) {
    resident.insert(mma.getAcc());
    resident.insert(mma.getResult());
  });
  // What loops and branches tie to a resident tile, and the tile a
  // correction that gives one scales, reside too.
  for (bool changed = true; changed;) {
    changed = false;
    func.walk([&](Operation *op) {
      forEachRegionTie(op, [&](Value a, Value b) {
        if (contains(a) != contains(b)) {
          resident.insert(a);
          resident.insert(b);
          changed = true;
        }
      });
      auto mul = dyn_cast<arith::MulFOp>(op);
      if (!mul || !contains(mul.getResult()))
        return;
      Value lhs = mul.getLhs(), rhs = mul.getRhs();
      Value scaled = isRowBroadcast(rhs)   ? lhs
                     : isRowBroadcast(lhs) ? rhs
                                           : Value();
      if (scaled)
        changed |= resident.insert(scaled);
    });
  }
  // A resident tile defined by a register op moves there after it.
  for (Value v : llvm::to_vector(resident)) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<MmaOp, arith::ConstantOp, scf::ForOp, scf::IfOp>(def))
      continue;
    OpBuilder b(def->getContext());
    b.setInsertionPointAfter(def);
    auto move = ConvertLayoutOp::create(b, def->getLoc(), v.getType(), v);
    v.replaceAllUsesExcept(move, move);
    resident.remove(v);
    resident.insert(move);
  }
  // Register ops read one through a move (tcgen05.ld), one per tile, just
  // before the first of them in the tile's block.
  for (Value v : llvm::to_vector(resident)) {
    SmallVector<OpOperand *> reads;
    for (OpOperand &use : v.getUses())
      if (!isResidentUse(use) && !isa<ConvertLayoutOp>(use.getOwner()))
        reads.push_back(&use);
    if (reads.empty())
      continue;
    OpBuilder b(tiled_attn::firstReader(v, reads));
    Value move = ConvertLayoutOp::create(b, v.getLoc(), v.getType(), v);
    for (OpOperand *use : reads)
      use->set(move);
  }
  return success();
}

class LayoutAssignment {
public:
  LayoutAssignment(func::FuncOp func, FamilyLayouts family, bool smemLhs,
                   int64_t registerLimit, std::string limitReason)
      : func(func), family(family), smemLhs(smemLhs),
        registerLimit(registerLimit), limitReason(std::move(limitReason)) {}
  LogicalResult run();

private:
  Attribute layout(MmaSyncKind kind) { return family.reg(kind); }
  /// The accumulator layout of the 2-D tile `v` (family.acc).
  Attribute acc(Value v) {
    return family.acc(cast<RankedTensorType>(v.getType()).getShape());
  }
  /// Whether the wgmma accumulator `v` has its warpgroups side by side on
  /// its columns (family.acc).
  bool columnSplit(Value v) {
    Attribute layout = acc(v);
    if (auto blocks = dyn_cast<MmaSyncLayoutAttr>(layout))
      return blocks.getColumnBlocks() > 1;
    auto blocks = dyn_cast<WgmmaLayoutAttr>(layout);
    return blocks && blocks.getColumnBlocks() > 1;
  }
  /// `operand`'s shared encoding, or an error on `mma` where its rows fit
  /// no swizzle.
  FailureOr<Attribute> shared(MmaOp mma, Value operand,
                              bool transposed = false) {
    auto tile = cast<RankedTensorType>(operand.getType());
    if (Attribute encoding =
            family.shared(tile, transposed, swizzleCap(operand)))
      return encoding;
    return mma.emitError()
           << "tilegpu-assign-layouts: TMA and the asynchronous tensor cores "
              "read swizzled panels, and rows of "
           << tile << (transposed ? " (stored transposed)" : "")
           << " are not a multiple of 32 bytes";
  }
  /// The widest swizzle the block staging `operand` may take (128 but
  /// where capSwizzles narrowed it).
  int64_t swizzleCap(Value operand) const {
    LoadOp load = tiled_attn::stagingOf(operand).first;
    return load ? swizzleCaps.lookup_or(load, 128) : 128;
  }
  /// On wgmma, a rhs read N-major in column blocks (dQ = dS K with two
  /// warpgroups side by side on dQ's columns): a block wider than a panel
  /// must span whole panels, so the block staging it (and its other
  /// readers, which share the buffer) takes the widest swizzle whose
  /// panels the block divides or is made of (D = 64 and 128: 64 and 128
  /// bytes, the 128-byte swizzle; D = 96: 96 bytes, 32-byte panels).
  void capSwizzles();
  void unify(Value a, Value b) {
    if (isa<RankedTensorType>(a.getType()) &&
        isa<RankedTensorType>(b.getType()))
      classes.unionSets(a, b);
  }
  void seed(Value v, Attribute l) {
    classes.insert(v);
    seeds.emplace_back(v, l);
  }
  LogicalResult visit(Operation *op);
  LogicalResult visitTcgen05Mma(MmaOp mma);
  /// Blocks loaded for elementwise use (a bias block, tile-vectorize-apply's
  /// block-loads): staged in shared memory and read into the scores'
  /// layout by a tile.convert_layout where they are used.
  LogicalResult stageBlockLoads();
  /// A block read both as an mma's lhs in registers (mma.sync without
  /// smem-lhs) and from shared memory (an mma's rhs, or a transpose's
  /// view): its copy for the registers is a load of its own.
  void splitRegisterLhsLoads();
  LogicalResult checkShape(Value v, Attribute l);
  /// Refuses register tiles that no thread of the kernel can hold (an mma's
  /// accumulator, or what a loop keeps live), before the lowering unrolls
  /// them.
  LogicalResult checkRegisterFootprint();
  bool isTcgen05() const { return family.family == Family::Tcgen05; }

  func::FuncOp func;
  FamilyLayouts family;
  bool smemLhs;
  /// The most 32-bit registers one thread of the kernel may have, and how
  /// that follows from the chip, for diagnostics.
  int64_t registerLimit;
  std::string limitReason;
  std::optional<TensorMemoryPlacement> tensorMemory;
  llvm::EquivalenceClasses<Value> classes;
  SmallVector<std::pair<Value, Attribute>> seeds;
  llvm::DenseMap<Operation *, int64_t> swizzleCaps;
};

LogicalResult LayoutAssignment::visit(Operation *op) {
  for (Value v : op->getResults())
    if (isa<RankedTensorType>(v.getType()))
      classes.insert(v);
  if (isa<OnlineSoftmaxOp>(op))
    return op->emitError() << "tilegpu-assign-layouts: decompose the online "
                              "softmax first (tile-decompose-online-softmax)";
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return success(); // A boundary: each side keeps its own class.
  if (auto mma = dyn_cast<MmaOp>(op)) {
    auto [rhs, rhsTransposed] = tiled_attn::stagingOf(mma.getRhs());
    if (!rhs)
      return op->emitError() << "tilegpu-assign-layouts: expects the rhs of "
                                "tile.mma to come from a tile.load, directly, "
                                "carried by a loop or transposed (it is "
                                "staged in shared memory)";
    // A loop-carried operand: the loads that refill it must stage it the same
    // way as the one that starts it.
    if (auto arg = dyn_cast<BlockArgument>(mma.getRhs())) {
      auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
      Value yielded = loop.getYieldedValues()[arg.getArgNumber() - 1];
      while (auto chained = dyn_cast<BlockArgument>(yielded)) {
        if (chained.getOwner() != loop.getBody() || chained.getArgNumber() == 0)
          break;
        yielded = loop.getYieldedValues()[chained.getArgNumber() - 1];
      }
      auto refill = yielded.getDefiningOp<LoadOp>();
      if (!refill || refill.getTranspose() != rhs.getTranspose() ||
          refill.getBlockShape() != rhs.getBlockShape())
        return op->emitError() << "tilegpu-assign-layouts: the loads that "
                                  "start and refill this "
                                  "loop-carried operand stage it differently";
    }
    // A lhs straight from memory may stay where its copy put it; ldmatrix
    // reads it at every k-step (untransposed only: ldmatrix.trans would be
    // needed otherwise). wgmma always reads such a lhs (Q) from shared
    // memory.
    if (isTcgen05())
      return visitTcgen05Mma(mma);
    auto lhsLoad = mma.getLhs().getDefiningOp<LoadOp>();
    // (So does an mma whose warps split the accumulator's columns: each
    // needs the rows of the lhs its place in its block gives it.)
    bool lhsShared = smemLhs || family.family == Family::Wgmma ||
                     columnSplit(mma.getAcc());
    if (mma.getLhs().getDefiningOp<TransposeOp>()) {
      // Stored as the transpose's input, row by row (an accumulator's, or
      // a staged block's, which may itself be stored transposed).
      auto [lhsStaging, lhsTransposed] = tiled_attn::stagingOf(mma.getLhs());
      seed(mma.getLhs(),
           family.shared(cast<RankedTensorType>(mma.getLhs().getType()),
                         /*transposed=*/!lhsStaging || lhsTransposed,
                         swizzleCap(mma.getLhs())));
    } else if (lhsShared && lhsLoad && !lhsLoad.getTranspose()) {
      FailureOr<Attribute> lhsEncoding = shared(mma, mma.getLhs());
      if (failed(lhsEncoding))
        return failure();
      seed(mma.getLhs(), *lhsEncoding);
    } else if (columnSplit(mma.getAcc())) {
      // Warpgroups side by side on the accumulator's columns each need the
      // whole lhs (Pᵀ and dSᵀ of a 64-key block at D = 192 and 256): it
      // goes through shared memory, written there by the warpgroups that
      // computed it (the convert_layout before the mma, lowered as a
      // tilegpu.local_store between barriers).
      FailureOr<Attribute> lhsEncoding = shared(mma, mma.getLhs());
      if (failed(lhsEncoding))
        return failure();
      seed(mma.getLhs(), *lhsEncoding);
    } else {
      seed(mma.getLhs(), layout(MmaSyncKind::OperandA));
    }
    FailureOr<Attribute> rhsEncoding = shared(mma, mma.getRhs(), rhsTransposed);
    if (failed(rhsEncoding))
      return failure();
    seed(mma.getRhs(), *rhsEncoding);
    seed(mma.getAcc(), acc(mma.getAcc()));
    seed(mma.getResult(), acc(mma.getResult()));
    return success();
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    // A reduction to a scalar takes its input where it lies
    // (convert-tile-to-tilegpu makes it a tilegpu.cta_reduce).
    if (!isa<RankedTensorType>(reduce.getType()))
      return success();
    seed(reduce.getInput(), acc(reduce.getInput()));
    seed(reduce.getResult(),
         layout(reduce.getAxis() == 1 ? MmaSyncKind::Rows : MmaSyncKind::Cols));
    return success();
  }
  if (auto bcast = dyn_cast<BroadcastOp>(op)) {
    // (Over an accumulator whose warpgroups split its columns, the vector
    // is split the same way: each warpgroup's block's rows or columns.)
    Attribute result = acc(bcast.getResult());
    seed(bcast.getInput(),
         family.vectorOf(bcast.getAxis() == 1 ? MmaSyncKind::Rows
                                              : MmaSyncKind::Cols,
                         result));
    seed(bcast.getResult(), result);
    return success();
  }
  // A bounds mask over a vector is over columns (the keys of a block), as
  // every family lowers it.
  if (auto bounds = dyn_cast<BoundsMaskOp>(op);
      bounds && bounds.getType().getRank() == 1) {
    seed(bounds.getResult(), layout(MmaSyncKind::Cols));
    return success();
  }
  // Masks and positions over a score block take the scores' layout; a
  // rank-1 iota takes the rows' or columns' from what uses it.
  auto iota = dyn_cast<IotaOp>(op);
  if (isa<CausalMaskOp, WindowMaskOp>(op) ||
      (iota && iota.getType().getRank() == 2)) {
    seed(op->getResult(0), acc(op->getResult(0)));
    return success();
  }
  // A gather's elements lie where its indices do.
  if (auto gather = dyn_cast<GatherOp>(op)) {
    for (Value index : gather.getIndices())
      if (isa<RankedTensorType>(index.getType()))
        unify(index, gather.getResult());
    return success();
  }
  // A transpose of a staged block is a view of its buffer
  // (tilegpu.transpose_view): the block stays stored as loaded, and the mma
  // ops that take the transpose read those rows the other way.
  LoadOp transposedLoad;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    transposedLoad = tiled_attn::stagingLoad(transpose.getInput());
  if (transposedLoad) {
    auto transpose = cast<TransposeOp>(op);
    // mma.sync reads a padded buffer either way (ldmatrix with or without
    // .trans), wgmma and tcgen05 a swizzled one (a K-major or an N-major
    // descriptor); ldmatrix cannot transpose TMA's panels.
    if (family.family == Family::MmaSync && family.tma)
      return op->emitError() << "tilegpu-assign-layouts: a transpose of a "
                                "loaded block is a view of its shared "
                                "buffer: not on the mma.sync family with TMA "
                                "(ldmatrix cannot transpose its panels)";
    if (transpose->use_empty() ||
        !llvm::all_of(transpose->getUses(), [](OpOperand &use) {
          return isa<MmaOp>(use.getOwner()) && use.getOperandNumber() < 2;
        }))
      return op->emitError() << "tilegpu-assign-layouts: a transpose of a "
                                "loaded block feeds mma operands only (it is "
                                "a view of the block's shared buffer)";
    seed(transpose.getInput(),
         family.shared(cast<RankedTensorType>(transpose.getInput().getType()),
                       transposedLoad.getTranspose(),
                       swizzleCap(transpose.getInput())));
    return success();
  }
  // A transpose of an accumulator goes through shared memory: the
  // accumulator is written as the stored rows of a transposed buffer, which
  // the mma that takes the transpose as its lhs reads (mma.sync:
  // ldmatrix.trans from a padded buffer; wgmma and tcgen05: an M-major
  // descriptor of swizzled panels). Not on mma.sync with TMA.
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    if (family.family == Family::MmaSync && family.tma)
      return op->emitError() << "tilegpu-assign-layouts: tile.transpose is "
                                "not lowered on the mma.sync family with TMA";
    bool feedsLhs = !transpose->use_empty() &&
                    llvm::all_of(transpose->getUses(), [](OpOperand &use) {
                      auto mma = dyn_cast<MmaOp>(use.getOwner());
                      return mma && use.getOperandNumber() == 0;
                    });
    if (!feedsLhs)
      return op->emitError() << "tilegpu-assign-layouts: a tile.transpose "
                                "feeds the lhs of tile.mma ops only (it "
                                "goes through shared memory)";
    seed(transpose.getInput(), acc(transpose.getInput()));
    return success();
  }
  if (auto store = dyn_cast<StoreOp>(op)) {
    // A tile of rows (the log-sum-exps) leaves in the rows' layout.
    seed(store.getValue(),
         cast<RankedTensorType>(store.getValue().getType()).getRank() == 1
             ? layout(MmaSyncKind::Rows)
             : acc(store.getValue()));
    if (store.getMask())
      seed(store.getMask(), acc(store.getMask()));
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    for (BlockArgument arg : loop.getRegionIterArgs())
      classes.insert(arg);
  if (forEachRegionTie(op, [&](Value a, Value b) { unify(a, b); }))
    return success();
  if (op->hasTrait<OpTrait::Elementwise>()) {
    Value first;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      if (first)
        unify(first, v);
      else
        first = v;
    }
  }
  return success();
}

/// tcgen05 reads A from shared memory (Q, as TMA loads it; dS, transposed)
/// or from tensor memory (P, packed), B from shared memory, and
/// accumulates in tensor memory.
LogicalResult LayoutAssignment::visitTcgen05Mma(MmaOp mma) {
  if (auto transpose = mma.getLhs().getDefiningOp<TransposeOp>()) {
    // A transposed lhs (the backward's dS, written as dSᵀ's rows) is read
    // M-major from the shared buffer it goes through, or from the block's
    // own buffer where it is a loaded one's.
    auto [lhsStaging, lhsTransposed] = tiled_attn::stagingOf(mma.getLhs());
    FailureOr<Attribute> lhsEncoding =
        shared(mma, mma.getLhs(), /*transposed=*/!lhsStaging || lhsTransposed);
    if (failed(lhsEncoding))
      return failure();
    seed(mma.getLhs(), *lhsEncoding);
  } else if (auto lhsLoad = mma.getLhs().getDefiningOp<LoadOp>()) {
    if (lhsLoad.getTranspose())
      return mma.emitError() << "tilegpu-assign-layouts: tcgen05 reads its "
                                "lhs from an untransposed shared tile or "
                                "from tensor memory, not from a transposed "
                                "load";
    FailureOr<Attribute> lhsEncoding = shared(mma, mma.getLhs());
    if (failed(lhsEncoding))
      return failure();
    seed(mma.getLhs(), *lhsEncoding);
  } else {
    seed(mma.getLhs(), family.tensorMemory(/*packed=*/true));
  }
  FailureOr<Attribute> rhsEncoding =
      shared(mma, mma.getRhs(), tiled_attn::stagingOf(mma.getRhs()).second);
  if (failed(rhsEncoding))
    return failure();
  seed(mma.getRhs(), *rhsEncoding);
  seed(mma.getAcc(), family.tensorMemory());
  seed(mma.getResult(), family.tensorMemory());
  return success();
}

LogicalResult LayoutAssignment::checkShape(Value v, Attribute l) {
  auto type = cast<RankedTensorType>(v.getType());
  auto emit = [&] {
    return emitError(v.getLoc()) << "tilegpu-assign-layouts: ";
  };
  if (isa<SharedEncodingAttr>(l)) {
    if (type.getRank() != 2 || type.getDimSize(0) % 16 ||
        type.getDimSize(1) % 16)
      return emit() << "a tile of shape " << type
                    << " in shared memory needs both dimensions multiples of "
                       "16";
    return success();
  }
  if (auto tmem = dyn_cast<TensorMemoryEncodingAttr>(l)) {
    // A block of 128 rows per group of warps, side by side.
    int64_t rowBlocks = family.rowBlocks;
    int64_t columns = type.getRank() == 2 ? rowBlocks * type.getDimSize(1) /
                                                (tmem.getPacked() ? 2 : 1)
                                          : 0;
    if (type.getRank() != 2 || type.getDimSize(0) != 128 * rowBlocks ||
        columns < 16 || columns > 512)
      return emit() << "a tile of shape " << type << " in tensor memory on "
                    << family.warps << " warps needs " << 128 * rowBlocks
                    << " rows (a block of 128 lanes per group of warps) and "
                       "16 to 512 columns in all";
    return success();
  }
  return cast<tiled_attn::tilegpu::DistributedLayoutAttrInterface>(l)
      .verifyTileShape(type.getShape(), emit);
}

/// The 32-bit registers each thread spends on `v`: its elements per thread
/// in a register layout, packed (two 16-bit elements to a register); 0 for a
/// tile in memory.
static int64_t registersPerThread(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  auto layout =
      type
          ? dyn_cast_or_null<DistributedLayoutAttrInterface>(type.getEncoding())
          : nullptr;
  if (!layout)
    return 0;
  int64_t elements = layout.getRegisterCount(type.getShape());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return llvm::divideCeil(elements * bits, 32);
}

LogicalResult LayoutAssignment::checkRegisterFootprint() {
  // A lower bound of what must be live at once, so that nothing a thread
  // could hold is refused: an mma's accumulator in registers is written
  // whole at every k-step, and a loop keeps what it carries and the tiles
  // it reads from outside (Q) live through every iteration. Splat constants
  // and splats of scalars are not counted (they lower to one value); an
  // elementwise chain, such
  // as an epilogue on O read from tensor memory, may stream and is not
  // counted either.
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto mma = dyn_cast<MmaOp>(op))
      if (int64_t regs = registersPerThread(mma.getResult());
          regs > registerLimit) {
        mma.emitError() << "tilegpu-assign-layouts: the accumulator "
                        << mma.getResult().getType() << " needs " << regs
                        << " registers per thread; " << limitReason;
        return WalkResult::interrupt();
      }
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return WalkResult::advance();
    int64_t carried = 0, invariant = 0;
    for (BlockArgument arg : loop.getRegionIterArgs())
      carried += registersPerThread(arg);
    llvm::SmallPtrSet<Value, 8> seen;
    loop.getBody()->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (loop.isDefinedOutsideOfLoop(operand) &&
            !operand.getDefiningOp<arith::ConstantOp>() &&
            !operand.getDefiningOp<tensor::SplatOp>() &&
            seen.insert(operand).second)
          invariant += registersPerThread(operand);
    });
    if (carried + invariant > registerLimit) {
      loop.emitError() << "tilegpu-assign-layouts: this loop keeps tiles of "
                       << carried + invariant
                       << " registers per thread live through every "
                          "iteration ("
                       << carried << " carried, " << invariant
                       << " read from outside it); " << limitReason;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult LayoutAssignment::stageBlockLoads() {
  SmallVector<LoadOp> loads;
  func.walk([&](LoadOp load) { loads.push_back(load); });
  // The values loops and branches hand a block on to (and the refills
  // that replace it): the load's class of region ties.
  llvm::EquivalenceClasses<Value> ties;
  func.walk([&](Operation *op) {
    forEachRegionTie(op, [&](Value a, Value b) { ties.unionSets(a, b); });
  });
  for (LoadOp load : loads) {
    // (Q, K and V are mma operands, which the loop below passes over.)
    unsigned bits = load.getType().getElementTypeBitWidth();
    SmallVector<Value> chain{load.getResult()};
    if (ties.contains(load.getResult()))
      chain.assign(ties.findLeader(load.getResult()), ties.member_end());
    // (A refill shares its loop's values with the load that starts them,
    // which may have put the reads in place already.)
    SmallVector<OpOperand *> reads;
    bool mmaOperand = false, staged = false;
    for (Value v : chain)
      for (OpOperand &use : v.getUses()) {
        if (isa<scf::ForOp, scf::YieldOp>(use.getOwner()))
          continue;
        if (isa<ConvertLayoutOp>(use.getOwner())) {
          staged = true;
          continue;
        }
        // (A transpose of the block is a view of its buffer, which mma
        // ops read.)
        mmaOperand |= isa<MmaOp, TransposeOp>(use.getOwner());
        reads.push_back(&use);
      }
    if (mmaOperand || (reads.empty() && !staged))
      continue;
    // (A transposed 16-bit block is K's, whatever reads it: the mma checks
    // below say what is wrong with it.)
    if (load.getTranspose() && bits == 16)
      continue;
    if (load.getTranspose())
      return load.emitError() << "tilegpu-assign-layouts: a block read in the "
                                 "scores' layout is loaded untransposed";
    for (OpOperand *use : reads) {
      OpBuilder b(use->getOwner());
      auto read = ConvertLayoutOp::create(b, use->getOwner()->getLoc(),
                                          use->get().getType(), use->get());
      use->set(read);
    }
    // By TMA (the kernel's K and V are): the block in swizzled panels, as
    // TMA writes them. By cp.async: rows padded to a multiple of 16 bytes
    // (its 16-byte pieces), 8 floats of a bias, 16 bytes of a mask.
    auto type = cast<RankedTensorType>(load.getType());
    Attribute encoding;
    if (family.tma || family.family != Family::MmaSync) {
      encoding = tiled_attn::tmaSharedEncoding(
          load.getContext(), type.getShape(), type.getElementType(), false);
      if (!encoding)
        return load.emitError()
               << "tilegpu-assign-layouts: a block read in the scores' layout "
                  "is staged by TMA in swizzled panels, which need rows of a "
                  "multiple of 32 bytes";
    } else {
      encoding = bits == 8 ? SharedEncodingAttr::get(load.getContext(),
                                                     /*swizzle=*/0, /*pad=*/16,
                                                     /*transposed=*/false)
                           : family.shared(type, false);
    }
    seed(load.getResult(), encoding);
  }
  return success();
}

void LayoutAssignment::splitRegisterLhsLoads() {
  if (smemLhs || family.family != Family::MmaSync)
    return;
  func.walk([&](LoadOp load) {
    if (load.getTranspose())
      return;
    SmallVector<OpOperand *> lhsUses;
    bool sharedUse = false;
    for (OpOperand &use : load.getResult().getUses()) {
      // (The lhs of an mma whose warps split its accumulator's columns is
      // read from shared memory.)
      auto mma = dyn_cast<MmaOp>(use.getOwner());
      bool lhs =
          mma && use.getOperandNumber() == 0 && !columnSplit(mma.getAcc());
      if (lhs)
        lhsUses.push_back(&use);
      sharedUse |= !lhs && isa<MmaOp, TransposeOp>(use.getOwner());
    }
    if (lhsUses.empty() || !sharedUse)
      return;
    // (Before the load: the copies keep the order in which a program that
    // loads the block twice would issue them.)
    OpBuilder b(load);
    Operation *copy = b.clone(*load);
    for (OpOperand *use : lhsUses)
      use->set(copy->getResult(0));
  });
}

void LayoutAssignment::capSwizzles() {
  if (family.family != Family::Wgmma)
    return;
  func.walk([&](MmaOp mma) {
    auto accType = cast<RankedTensorType>(mma.getAcc().getType());
    auto layout = dyn_cast<WgmmaLayoutAttr>(acc(mma.getAcc()));
    auto [load, transposed] = tiled_attn::stagingOf(mma.getRhs());
    if (!layout || layout.getColumnBlocks() <= 1 || !load || transposed)
      return;
    // The block's columns of the rhs, in the rhs's element type.
    int64_t blockBytes =
        accType.getDimSize(1) / layout.getColumnBlocks() *
        cast<RankedTensorType>(mma.getRhs().getType()).getElementTypeBitWidth() /
        8;
    // Blocks that divide a panel never straddle two; wider ones span
    // whole panels.
    int64_t cap = 0;
    for (int64_t swizzle : {128, 64, 32})
      if (swizzle % blockBytes == 0 || blockBytes % swizzle == 0) {
        cap = swizzle;
        break;
      }
    if (!cap)
      return; // (the GPU lowering says why it cannot read such a block)
    int64_t &slot = swizzleCaps.try_emplace(load, 128).first->second;
    slot = std::min(slot, cap);
  });
}

LogicalResult LayoutAssignment::run() {
  func.walk([&](ReduceOp reduce) {
    auto input = cast<RankedTensorType>(reduce.getInput().getType());
    if (reduce.getAxis() == 1 && input.getRank() == 2 &&
        family.acc(input.getShape()) != family.reg(MmaSyncKind::Acc))
      family.splitColumns = false;
  });
  capSwizzles();
  splitRegisterLhsLoads();
  if (failed(stageBlockLoads()))
    return failure();
  // An mma operand computed in registers (P) arrives in the accumulator
  // layout of the mma that produced it: make the move explicit.
  // (A transpose's result is read from the shared buffer it goes through.)
  func.walk([&](MmaOp mma) {
    if (mma.getLhs().getDefiningOp<LoadOp>() ||
        mma.getLhs().getDefiningOp<TransposeOp>())
      return;
    OpBuilder b(mma);
    auto convert = ConvertLayoutOp::create(
        b, mma.getLoc(), mma.getLhs().getType(), mma.getLhs());
    mma.getLhsMutable().assign(convert);
  });

  if (isTcgen05()) {
    tensorMemory.emplace(func);
    if (failed(tensorMemory->run()))
      return failure();
  }
  WalkResult walk = func.walk([&](Operation *op) {
    return failed(visit(op)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (tensorMemory)
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (tensorMemory->contains(arg))
              seed(arg, family.tensorMemory());
      for (Value result : op->getResults())
        if (tensorMemory->contains(result))
          seed(result, family.tensorMemory());
    });

  llvm::DenseMap<Value, Attribute> chosen;
  for (auto [value, l] : seeds) {
    Value leader = classes.getLeaderValue(value);
    Attribute &slot = chosen[leader];
    if (slot && slot != l)
      return emitError(value.getLoc())
             << "tilegpu-assign-layouts: this tile needs both " << slot
             << " and " << l;
    slot = l;
  }

  SmallVector<Value> values;
  func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          values.push_back(arg);
    for (Value result : op->getResults())
      values.push_back(result);
  });
  for (Value v : values) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      continue;
    Attribute l = chosen.lookup(classes.getLeaderValue(v));
    if (!l)
      return emitError(v.getLoc())
             << "tilegpu-assign-layouts: cannot tell how to spread " << type
             << " over the threads";
    if (failed(checkShape(v, l)))
      return failure();
    v.setType(RankedTensorType::get(type.getShape(), type.getElementType(), l));
  }
  if (failed(checkRegisterFootprint()))
    return failure();

  // Constants must carry their result's encoding; conversions must map
  // layouts the registers allow.
  WalkResult fix = func.walk([&](Operation *op) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
        cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
      return WalkResult::advance();
    }
    if (isa<ConvertLayoutOp>(op)) {
      Attribute fromLayout =
          cast<RankedTensorType>(op->getOperand(0).getType()).getEncoding();
      Attribute toLayout =
          cast<RankedTensorType>(op->getResult(0).getType()).getEncoding();
      MmaSyncLayoutAttr from =
          tiled_attn::tilegpu::getQuadFragmentLayout(fromLayout);
      MmaSyncLayoutAttr to =
          tiled_attn::tilegpu::getQuadFragmentLayout(toLayout);
      // tcgen05: an accumulator to or from tensor memory (tcgen05.ld/st).
      auto lanes = [](Attribute l) {
        auto attr = dyn_cast<TmemLanesLayoutAttr>(l);
        return attr && attr.getKind() == TmemLanesKind::Acc;
      };
      if ((isa<TensorMemoryEncodingAttr>(fromLayout) && lanes(toLayout)) ||
          (lanes(fromLayout) && isa<TensorMemoryEncodingAttr>(toLayout)))
        return WalkResult::advance();
      // A staged block read from shared memory into the accumulator's
      // layout (tilegpu.local_load).
      if (isa<SharedEncodingAttr>(fromLayout) &&
          ((to && to.getKind() == MmaSyncKind::Acc) || lanes(toLayout)))
        return WalkResult::advance();
      // A wgmma accumulator written into shared memory for an mma's lhs
      // (tilegpu.local_store; warpgroups side by side on the columns).
      auto fromWgmma = dyn_cast<WgmmaLayoutAttr>(fromLayout);
      auto fromMma = dyn_cast<MmaSyncLayoutAttr>(fromLayout);
      if (((fromWgmma && fromWgmma.getKind() == WgmmaKind::Acc) ||
           (fromMma && fromMma.getKind() == MmaSyncKind::Acc)) &&
          isa<SharedEncodingAttr>(toLayout))
        return WalkResult::advance();
      bool sameRegs = from && to &&
                      fromLayout.getTypeID() == toLayout.getTypeID() &&
                      (from == to || (from.getKind() == MmaSyncKind::Acc &&
                                      to.getKind() == MmaSyncKind::OperandA));
      if (!sameRegs) {
        op->emitError() << "tilegpu-assign-layouts: no register move from "
                        << op->getOperand(0).getType() << " to "
                        << op->getResult(0).getType() << " yet";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(fix.wasInterrupted());
}

struct TileGPUAssignLayoutsPass final
    : tiled_attn::impl::TileGPUAssignLayoutsPassBase<TileGPUAssignLayoutsPass> {
  using Base::Base;
  void runOnOperation() override {
    // The family's layouts: mma.sync's and wgmma's.
    tiled_attn::tilegpu::TargetAttr target =
        tiled_attn::tilegpu::getTarget(getOperation());
    if (!target) {
      getOperation().emitError() << "tilegpu-assign-layouts: the module has "
                                    "no #tilegpu.target; run "
                                    "tilegpu-attach-target first";
      return signalPassFailure();
    }
    Family familyKind = target.getFamily();
    if (familyKind == Family::Tcgen05 && warps != 4 && warps != 8) {
      getOperation().emitError()
          << "tilegpu-assign-layouts: tcgen05 kernels run on a warpgroup per "
             "block of 128 rows (a thread per tensor-memory lane): warps 4, "
             "or 8 (two Q tiles, or two warps a lane quadrant splitting the "
             "columns), got "
          << int64_t{warps};
      return signalPassFailure();
    }
    if (familyKind == Family::MmaSync && warps != 1 && warps != 2 &&
        warps != 4 && warps != 8) {
      getOperation().emitError()
          << "tilegpu-assign-layouts: warps must be 1, 2, 4 or 8, got "
          << int64_t{warps};
      return signalPassFailure();
    }
    if (familyKind == Family::Wgmma && warps != 4 && warps != 8 &&
        warps != 12 && warps != 16) {
      getOperation().emitError()
          << "tilegpu-assign-layouts: wgmma runs on 1 to 4 warpgroups of 4 "
             "warps (warps 4, 8, 12 or 16), got "
          << int64_t{warps};
      return signalPassFailure();
    }
    std::optional<tiled_attn::TargetInfo> info =
        tiled_attn::TargetInfo::lookup(target.getChip());
    if (tma && (!info || !info->hasTMA)) {
      getOperation().emitError()
          << "tilegpu-assign-layouts: tma=1 needs a chip with TMA (sm_90 "
             "and later), got "
          << target.getChip();
      return signalPassFailure();
    }
    func::FuncOp func = getOperation();
    auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
    if (llvm::any_of(func.getArgumentTypes(), isTile) ||
        llvm::any_of(func.getResultTypes(), isTile)) {
      func.emitError() << "tilegpu-assign-layouts: expects a kernel whose "
                          "arguments and results are views and scalars, not "
                          "tiles";
      return signalPassFailure();
    }
    // A thread has at most 255 registers, and the threads of the kernel's
    // warps share one SM's register file.
    tiled_attn::TargetInfo limits = info.value_or(tiled_attn::TargetInfo{});
    int64_t perThread = limits.registersPerThread;
    int64_t shared = limits.registersPerSM / (32 * int64_t{warps});
    std::string reason;
    llvm::raw_string_ostream os(reason);
    if (shared < perThread)
      os << "the " << int64_t{warps} << " warps' threads share "
         << limits.registersPerSM << " registers of one SM, at most " << shared
         << " each";
    else
      os << "a thread has at most " << perThread << " registers on "
         << target.getChip();
    // A splat of a scalar is one register in any layout: give each use its
    // own, so that uses of different layouts (a score function's slope
    // over the rows and over the keys) do not tie them together.
    func.walk([&](tensor::SplatOp splat) {
      SmallVector<OpOperand *> uses(llvm::make_pointer_range(splat->getUses()));
      if (uses.empty()) // (drop_begin below needs one)
        return;
      OpBuilder b(splat);
      b.setInsertionPointAfter(splat);
      for (OpOperand *use : llvm::drop_begin(uses))
        use->set(b.clone(*splat)->getResult(0));
    });
    FamilyLayouts layouts{func.getContext(), familyKind, warps, tma};
    if (familyKind == Family::Tcgen05) {
      int64_t rows = 128;
      func.walk([&](MmaOp mma) {
        rows = std::max(rows, mma.getType().getDimSize(0));
      });
      layouts.rowBlocks = rows / 128;
      if (rows % 128 || warps % (4 * layouts.rowBlocks)) {
        func.emitError() << "tilegpu-assign-layouts: tcgen05 products of "
                         << rows << " rows take a multiple of "
                         << 4 * (rows / 128)
                         << " warps (four a block of 128 rows), not "
                         << int64_t{warps};
        return signalPassFailure();
      }
    }
    if (failed(LayoutAssignment(func, layouts, smemLhs,
                                std::min(perThread, shared), reason)
                   .run()))
      return signalPassFailure();
    func->setAttr(tiled_attn::tilegpu::TileGPUDialect::getWarpsAttrName(),
                  Builder(func).getI64IntegerAttr(warps));
  }
};

} // namespace

//===- TileGPUDialect.cpp - The tilegpu dialect ---------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The dialect, its types, and the attributes with their verifiers and the
// layout and memory interfaces they implement.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Target/TargetInfo.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrInterfaces.cpp.inc"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"

void TileGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
}

/// column_blocks of a register layout whose `units` (warps, warpgroups)
/// are `count`: it divides them, and splits an accumulator and its
/// vectors, never an A operand (`operand`), which each unit needs whole.
static LogicalResult
verifyColumnBlocks(function_ref<InFlightDiagnostic()> emitError,
                   StringRef units, int64_t count, int64_t columnBlocks,
                   bool isOperandA, StringRef operand) {
  if (columnBlocks < 1 || count % columnBlocks)
    return emitError() << "column_blocks must divide " << units << " ("
                       << count << "), got " << columnBlocks;
  if (columnBlocks > 1 && isOperandA)
    return emitError() << "column_blocks splits an accumulator and its row "
                          "and column vectors, not "
                       << operand << " (each " << units.drop_back()
                       << " would need the whole lhs)";
  return success();
}

static bool isValidWarpCount(int64_t warps) {
  return warps >= 1 && warps <= 32 && llvm::isPowerOf2_64(warps);
}

TargetAttr tiled_attn::tilegpu::getTarget(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto target =
            op->getAttrOfType<TargetAttr>(TileGPUDialect::getTargetAttrName()))
      return target;
  return nullptr;
}

LogicalResult TileGPUDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getTargetAttrName()) {
    if (!isa<TargetAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' must be a #tilegpu.target on a module";
    return success();
  }
  if (name == getSharedBytesAttrName() || name == getWarpsAttrName()) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    int64_t least = name == getWarpsAttrName() ? 1 : 0;
    bool isI64 = value && value.getType().isSignlessInteger(64);
    if (!isI64 || value.getInt() < least)
      return op->emitError() << "'" << name << "' must be an i64 of at "
                             << "least " << least;
    // A CTA has at most 32 warps (a warp-specialized one need not have a
    // power of two: FlashAttention-3 runs 12).
    if (name == getWarpsAttrName() && value.getInt() > 32)
      return op->emitError()
             << "'" << name << "' must be at most 32, got " << value.getInt();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name << "' belongs on a kernel "
                             << "function";
    return success();
  }
  if (name == getTmemColumnsAttrName()) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isSignlessInteger(64) ||
        value.getInt() < 32 || value.getInt() > 512 ||
        !llvm::isPowerOf2_64(value.getInt()) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' must be an i64 power of two in [32, 512] "
                                "on a kernel function";
    return success();
  }
  if (name == getParamsAttrName()) {
    auto params = dyn_cast<ArrayAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!params || !func ||
        !llvm::all_of(params, llvm::IsaPred<KernelParamAttr>) ||
        params.size() != func.getNumArguments())
      return op->emitError() << "'" << name
                             << "' must be an array of one #tilegpu.param "
                                "per argument of a kernel function";
    return success();
  }
  return op->emitError() << "unknown tilegpu attribute '" << name << "'";
}

LogicalResult TileGPUDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != getParamAttrName())
    return op->emitError() << "unknown tilegpu argument attribute '" << name
                           << "'";
  auto param = dyn_cast<KernelParamAttr>(attr.getValue());
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!param || !func || regionIndex != 0)
    return op->emitError() << "'" << name
                           << "' must be a #tilegpu.param on a kernel "
                              "argument";
  // From the signature: a declaration has no entry block.
  Type type = func.getArgumentTypes()[argIndex];
  auto fail = [&](StringRef expected) {
    return op->emitError() << "argument #" << argIndex << " is a "
                           << stringifyParamKind(param.getKind())
                           << " parameter, so it must be " << expected
                           << ", got " << type;
  };
  switch (param.getKind()) {
  case ParamKind::Base:
    if (auto memref = dyn_cast<MemRefType>(type); !memref || memref.getRank())
      return fail("a rank-0 memref");
    return success();
  case ParamKind::Size:
  case ParamKind::Stride:
    if (!type.isIntOrIndex())
      return fail("an integer or index");
    return success();
  case ParamKind::Scalar:
    if (!type.isIntOrIndexOrFloat())
      return fail("an integer or a float");
    return success();
  case ParamKind::TensorMap:
    // A tensor map before the lowering, its byval pointer after it.
    if (!isa<TensorMapType, LLVM::LLVMPointerType>(type))
      return fail("a !tilegpu.tensor_map or a pointer to one");
    return success();
  }
  llvm_unreachable("unknown ParamKind");
}

LogicalResult
KernelParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ParamKind kind, StringRef name, int64_t dim, Type map) {
  if ((kind == ParamKind::TensorMap) != static_cast<bool>(map) ||
      (map && !isa<TensorMapType>(map)))
    return emitError() << "a tensor_map parameter, and only it, gives its "
                          "!tilegpu.tensor_map type (after a colon)";
  if (name.empty())
    return emitError() << "a kernel parameter needs a name";
  bool takesDim = kind == ParamKind::Size || kind == ParamKind::Stride;
  if (takesDim && dim < 0)
    return emitError() << "a " << stringifyParamKind(kind)
                       << " parameter needs a dim >= 0";
  if (!takesDim && dim != -1)
    return emitError() << "a " << stringifyParamKind(kind)
                       << " parameter has no dim, got " << dim;
  return success();
}

//===----------------------------------------------------------------------===//
// Distributed layouts
//===----------------------------------------------------------------------===//

LogicalResult
MmaSyncLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          MmaSyncKind kind, int64_t warps,
                          int64_t columnBlocks) {
  // A power of two for the mma.sync kernels; wgmma's quad fragments on 3
  // warpgroups (FlashAttention-3's 192 rows) take 12.
  if (!isValidWarpCount(warps) && warps != 12)
    return emitError() << "warps must be a power of two in [1, 32], or 12, "
                          "got "
                       << warps;
  return verifyColumnBlocks(emitError, "warps", warps, columnBlocks,
                            kind == MmaSyncKind::OperandA, "an A operand");
}

MmaSyncLayoutAttr MmaSyncLayoutAttr::getColumnBlockLayout() const {
  return MmaSyncLayoutAttr::get(getContext(), getKind(),
                                getWarps() / getColumnBlocks());
}

/// One column block's shape of a tile of `shape` split into `blocks`: an
/// accumulator's columns or a column vector divided, rows unchanged.
static SmallVector<int64_t> columnBlockShape(ArrayRef<int64_t> shape,
                                             int64_t blocks, bool acc,
                                             bool cols) {
  SmallVector<int64_t> block(shape);
  if (acc)
    block[1] /= blocks;
  else if (cols)
    block[0] /= blocks;
  return block;
}

SmallVector<int64_t>
MmaSyncLayoutAttr::getColumnBlockShape(ArrayRef<int64_t> shape) const {
  return columnBlockShape(shape, getColumnBlocks(),
                          getKind() == MmaSyncKind::Acc,
                          getKind() == MmaSyncKind::Cols);
}

int64_t MmaSyncLayoutAttr::getWarpCount() const { return getWarps(); }

LogicalResult MmaSyncLayoutAttr::verifyTileShape(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  int64_t blocks = getColumnBlocks();
  int64_t rowQuantum = 16 * getWarps() / blocks;
  auto fail = [&](StringRef what) {
    InFlightDiagnostic diag = emitError();
    diag << "a tile of shape " << shape.size() << "-d [";
    llvm::interleaveComma(shape, diag);
    diag << "] in " << *this << " needs " << what;
    return diag;
  };
  switch (getKind()) {
  case MmaSyncKind::Acc:
  case MmaSyncKind::OperandA:
    if (shape.size() != 2 || shape[0] % rowQuantum ||
        shape[1] % (getKind() == MmaSyncKind::Acc ? 8 * blocks : 16))
      return fail(blocks > 1 ? "rank 2, rows a multiple of 16 x warps / "
                               "column_blocks and columns of 8 in each "
                               "column block"
                             : "rank 2, rows a multiple of 16 x warps and "
                               "columns of 8 (16 for an A operand)");
    return success();
  case MmaSyncKind::Rows:
    if (shape.size() != 1 || shape[0] % rowQuantum)
      return fail(blocks > 1 ? "rank 1 and a length that is a multiple of "
                               "16 x warps / column_blocks"
                             : "rank 1 and a length that is a multiple of "
                               "16 x warps");
    return success();
  case MmaSyncKind::Cols:
    if (shape.size() != 1 || shape[0] % (8 * blocks))
      return fail(blocks > 1 ? "rank 1 and a length that is a multiple of "
                               "8 in each column block"
                             : "rank 1 and a length that is a multiple of 8");
    return success();
  }
  return success();
}

int64_t MmaSyncLayoutAttr::getRegisterCount(ArrayRef<int64_t> shape) const {
  if (getColumnBlocks() > 1)
    return getColumnBlockLayout().getRegisterCount(getColumnBlockShape(shape));
  int64_t rowsPerWarp = shape[0] / getWarps();
  switch (getKind()) {
  case MmaSyncKind::Acc:
    return rowsPerWarp / 16 * shape[1] / 8 * 4;
  case MmaSyncKind::Rows:
    return rowsPerWarp / 16 * 2;
  case MmaSyncKind::Cols:
    return shape[0] / 8 * 2;
  case MmaSyncKind::OperandA:
    return rowsPerWarp / 16 * shape[1] / 16 * 8;
  }
  return 0;
}

SmallVector<int64_t>
MmaSyncLayoutAttr::getElementCoordinates(ArrayRef<int64_t> shape, int64_t warp,
                                         int64_t lane, int64_t reg) const {
  if (int64_t blocks = getColumnBlocks(); blocks > 1) {
    // Warp w: block w % c, its warp w / c there.
    SmallVector<int64_t> block = getColumnBlockShape(shape);
    SmallVector<int64_t> at = getColumnBlockLayout().getElementCoordinates(
        block, warp / blocks, lane, reg);
    if (getKind() != MmaSyncKind::Rows)
      at.back() += (warp % blocks) * block.back();
    return at;
  }
  int64_t g = lane / 4, t = lane % 4;
  int64_t rowBase = warp * (shape[0] / getWarps()) + g;
  switch (getKind()) {
  case MmaSyncKind::Acc: {
    // Per (m-tile, n-tile of 8): (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
    int64_t nTiles = shape[1] / 8, piece = reg / 4, r = reg % 4;
    int64_t mt = piece / nTiles, nt = piece % nTiles;
    return {rowBase + mt * 16 + 8 * (r / 2), nt * 8 + 2 * t + r % 2};
  }
  case MmaSyncKind::Rows:
    return {rowBase + (reg / 2) * 16 + 8 * (reg % 2)};
  case MmaSyncKind::Cols:
    return {(reg / 2) * 8 + 2 * t + reg % 2};
  case MmaSyncKind::OperandA: {
    // Per (m-tile, k-step of 16): a0..a7 = (g, 2t..), (g+8, 2t..),
    // (g, 2t+8..), (g+8, 2t+8..).
    int64_t kSteps = shape[1] / 16, piece = reg / 8, a = reg % 8;
    int64_t mt = piece / kSteps, kt = piece % kSteps;
    return {rowBase + mt * 16 + 8 * ((a / 2) % 2),
            kt * 16 + 8 * (a / 4) + 2 * t + a % 2};
  }
  }
  return {};
}

bool MmaSyncLayoutAttr::canStageStore(ArrayRef<int64_t> shape,
                                      Type elementType) const {
  return getKind() == MmaSyncKind::Acc && getColumnBlocks() == 1 &&
         shape.size() == 2 && elementType.getIntOrFloatBitWidth() == 16 &&
         shape[1] % 8 == 0 &&
         (getRowsPerWarp(shape) * shape[1] / 8) % 32 == 0;
}

LogicalResult
WgmmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        WgmmaKind kind, int64_t warpgroups,
                        int64_t columnBlocks) {
  if (warpgroups < 1 || warpgroups > 4)
    return emitError() << "warpgroups must be in [1, 4], got " << warpgroups;
  return verifyColumnBlocks(emitError, "warpgroups", warpgroups, columnBlocks,
                            kind == WgmmaKind::OperandA, "a register A operand");
}

int64_t WgmmaLayoutAttr::getWarpCount() const { return 4 * getWarpgroups(); }

LogicalResult WgmmaLayoutAttr::verifyTileShape(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  int64_t rows = 64 * getRowBlocks(), blocks = getColumnBlocks();
  bool ok = false;
  StringRef needs;
  switch (getKind()) {
  case WgmmaKind::Acc:
    ok = shape.size() == 2 && shape[0] == rows &&
         shape[1] % (8 * blocks) == 0 && shape[1] >= 8 * blocks &&
         shape[1] <= 256 * blocks;
    needs = blocks > 1 ? " and N a multiple of 8 up to 256 in each column "
                         "block"
                       : " and N a multiple of 8 up to 256";
    break;
  case WgmmaKind::OperandA:
    ok = shape.size() == 2 && shape[0] == rows && shape[1] % 16 == 0;
    needs = " and K a multiple of 16";
    break;
  case WgmmaKind::Rows:
    ok = shape.size() == 1 && shape[0] == rows;
    break;
  case WgmmaKind::Cols:
    ok = shape.size() == 1 && shape[0] % (8 * blocks) == 0;
    if (!ok)
      return emitError() << *this
                         << (blocks > 1 ? " needs a vector of a multiple of "
                                          "8 columns in each column block"
                                        : " needs a vector of a multiple of 8 "
                                          "columns");
    return success();
  }
  if (!ok)
    return emitError() << *this << " needs " << rows
                       << (blocks > 1 ? " rows (64 per row block)"
                                      : " rows (64 per warpgroup)")
                       << needs;
  return success();
}

MmaSyncLayoutAttr WgmmaLayoutAttr::getQuadFragmentLayout() const {
  MmaSyncKind kind = MmaSyncKind::Acc;
  switch (getKind()) {
  case WgmmaKind::Acc:
    kind = MmaSyncKind::Acc;
    break;
  case WgmmaKind::Rows:
    kind = MmaSyncKind::Rows;
    break;
  case WgmmaKind::Cols:
    kind = MmaSyncKind::Cols;
    break;
  case WgmmaKind::OperandA:
    kind = MmaSyncKind::OperandA;
    break;
  }
  assert(getColumnBlocks() == 1 && "column blocks are no quad fragments");
  return MmaSyncLayoutAttr::get(getContext(), kind, 4 * getWarpgroups());
}

MmaSyncLayoutAttr WgmmaLayoutAttr::getColumnBlockLayout() const {
  MmaSyncKind kind = getKind() == WgmmaKind::Rows   ? MmaSyncKind::Rows
                     : getKind() == WgmmaKind::Cols ? MmaSyncKind::Cols
                                                    : MmaSyncKind::Acc;
  return MmaSyncLayoutAttr::get(getContext(), kind, 4 * getRowBlocks());
}

SmallVector<int64_t>
WgmmaLayoutAttr::getColumnBlockShape(ArrayRef<int64_t> shape) const {
  return columnBlockShape(shape, getColumnBlocks(),
                          getKind() == WgmmaKind::Acc,
                          getKind() == WgmmaKind::Cols);
}

MmaSyncLayoutAttr tiled_attn::tilegpu::getQuadFragmentLayout(Attribute layout) {
  if (auto mma = dyn_cast_or_null<MmaSyncLayoutAttr>(layout);
      mma && mma.getColumnBlocks() == 1)
    return mma;
  // (A tile whose warpgroups split its columns is not one: the patterns that
  // take one know it by its own layout.)
  if (auto wgmma = dyn_cast_or_null<WgmmaLayoutAttr>(layout);
      wgmma && wgmma.getColumnBlocks() == 1)
    return wgmma.getQuadFragmentLayout();
  return nullptr;
}

bool tiled_attn::tilegpu::isAsyncMmaResult(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  return tile && isa<WgmmaLayoutAttr>(tile.getEncoding());
}

// On 64 rows per warpgroup, 16 per warp, the registers are mma.sync's.
// With column blocks, a warpgroup's registers are those of its block's
// tile.
int64_t WgmmaLayoutAttr::getRegisterCount(ArrayRef<int64_t> shape) const {
  if (getColumnBlocks() == 1)
    return getQuadFragmentLayout().getRegisterCount(shape);
  return getColumnBlockLayout().getRegisterCount(getColumnBlockShape(shape));
}

SmallVector<int64_t>
WgmmaLayoutAttr::getElementCoordinates(ArrayRef<int64_t> shape, int64_t warp,
                                       int64_t lane, int64_t reg) const {
  int64_t blocks = getColumnBlocks();
  if (blocks == 1)
    return getQuadFragmentLayout().getElementCoordinates(shape, warp, lane,
                                                         reg);
  int64_t group = warp / 4;
  int64_t blockWarp = 4 * (group / blocks) + warp % 4;
  SmallVector<int64_t> block = getColumnBlockShape(shape);
  SmallVector<int64_t> at = getColumnBlockLayout().getElementCoordinates(
      block, blockWarp, lane, reg);
  // (A row vector's rows are its row block's in every column block.)
  if (getKind() != WgmmaKind::Rows)
    at.back() += (group % blocks) * block.back();
  return at;
}

LogicalResult
TmemLanesLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            TmemLanesKind kind, int64_t warps,
                            int64_t rowBlocks) {
  if (rowBlocks < 1)
    return emitError() << "row_blocks must be positive, got " << rowBlocks;
  int64_t perBlock = warps % rowBlocks ? 0 : warps / rowBlocks;
  if (perBlock != 4 && perBlock != 8 && perBlock != 16) {
    if (rowBlocks == 1)
      return emitError() << "warps must be 4, 8 or 16 (whole quadrants), got "
                         << warps;
    return emitError() << "each of the " << rowBlocks
                       << " row blocks takes 4, 8 or 16 warps (whole "
                          "quadrants), but warps is "
                       << warps;
  }
  return success();
}

int64_t TmemLanesLayoutAttr::getWarpCount() const { return getWarps(); }

LogicalResult TmemLanesLayoutAttr::verifyTileShape(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  int64_t groups = getColumnGroups();
  TmemLanesKind kind = getKind();
  size_t rank = kind == TmemLanesKind::Acc ? 2 : 1;
  if (shape.size() != rank)
    return emitError() << *this << " takes rank-" << rank << " tiles";
  if (kind != TmemLanesKind::Cols && shape[0] != 128 * getRowBlocks()) {
    InFlightDiagnostic diag = emitError()
                              << *this << " needs " << 128 * getRowBlocks()
                              << " rows (one row per tensor-memory lane";
    if (getRowBlocks() > 1)
      diag << ", in each of its " << getRowBlocks() << " blocks of 128";
    return diag << ")";
  }
  int64_t columns = shape.back();
  if (kind != TmemLanesKind::Rows && columns % groups)
    return emitError() << *this << " splits the columns between " << groups
                       << " warps per quadrant; " << columns
                       << " columns do not split evenly";
  return success();
}

int64_t TmemLanesLayoutAttr::getRegisterCount(ArrayRef<int64_t> shape) const {
  if (getKind() == TmemLanesKind::Rows)
    return 1;
  return shape.back() / getColumnGroups();
}

SmallVector<int64_t> TmemLanesLayoutAttr::getElementCoordinates(
    ArrayRef<int64_t> shape, int64_t warp, int64_t lane, int64_t reg) const {
  int64_t block = warp / getWarpsPerRowBlock();
  warp %= getWarpsPerRowBlock();
  int64_t row = 128 * block + 32 * (warp % 4) + lane;
  if (getKind() == TmemLanesKind::Rows)
    return {row};
  int64_t column = (warp / 4) * (shape.back() / getColumnGroups()) + reg;
  if (getKind() == TmemLanesKind::Cols)
    return {column};
  return {row, column};
}

/// A tensor in a register layout must have a shape the layout takes.
template <typename Layout>
static LogicalResult
verifyLayoutEncoding(Layout layout, ArrayRef<int64_t> shape,
                     function_ref<InFlightDiagnostic()> emitError) {
  return layout.verifyTileShape(shape, emitError);
}

LogicalResult MmaSyncLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyLayoutEncoding(*this, shape, emitError);
}

LogicalResult WgmmaLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyLayoutEncoding(*this, shape, emitError);
}

LogicalResult TmemLanesLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyLayoutEncoding(*this, shape, emitError);
}

//===----------------------------------------------------------------------===//
// Memory encodings
//===----------------------------------------------------------------------===//

/// A tensor with a shared encoding is a tile (rank 2) that lives in shared
/// memory, before convert-tile-to-tilegpu makes it a buffer.
LogicalResult SharedEncodingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "a tile in shared memory has rank 2, not "
                       << shape.size();
  return verifyTileShape(shape, elementType, emitError);
}

LogicalResult
SharedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t swizzle, int64_t pad, bool transposed) {
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 0 (none), 32, 64 or 128 bytes, got "
                       << swizzle;
  if (pad < 0)
    return emitError() << "pad must be non-negative, got " << pad;
  if (swizzle && pad)
    return emitError() << "a swizzled buffer has no padding (swizzle = "
                       << swizzle << ", pad = " << pad << ")";
  return success();
}

SmallVector<int64_t, 2>
SharedEncodingAttr::getStoredShape(ArrayRef<int64_t> shape) const {
  if (shape.size() != 2)
    return {shape.begin(), shape.end()};
  int64_t rows = getTransposed() ? shape[1] : shape[0];
  int64_t cols = getTransposed() ? shape[0] : shape[1];
  return {rows, cols + getPad()};
}

MemorySpace SharedEncodingAttr::getMemorySpace() const {
  return MemorySpace::Shared;
}

int64_t SharedEncodingAttr::getAlignment() const {
  return getSwizzle() ? 8 * getSwizzle() : 128;
}

int64_t SharedEncodingAttr::getTileSize(ArrayRef<int64_t> shape,
                                        Type elementType) const {
  int64_t elements = 1;
  for (int64_t d : getStoredShape(shape))
    elements *= d;
  int64_t bytes =
      elements * llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8);
  return llvm::alignTo(bytes, getAlignment());
}

LogicalResult SharedEncodingAttr::verifyTileShape(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (!elementType.isIntOrFloat())
    return emitError() << "a shared buffer holds integers or floats, not "
                       << elementType;
  if (shape.size() == 1) {
    if (getSwizzle() || getPad() || getTransposed())
      return emitError() << "a rank-1 shared buffer (mbarriers) takes the "
                            "plain #tilegpu.shared<> encoding";
    return success();
  }
  if (!getSwizzle())
    return success();
  int64_t rowBytes =
      getStoredShape(shape)[1] * elementType.getIntOrFloatBitWidth() / 8;
  if (rowBytes % getSwizzle())
    return emitError() << "a " << getSwizzle()
                       << "-byte swizzle needs stored rows of a multiple of "
                       << getSwizzle() << " bytes, got " << rowBytes;
  return success();
}

MemorySpace TensorMemoryEncodingAttr::getMemorySpace() const {
  return MemorySpace::Tensor;
}

int64_t TensorMemoryEncodingAttr::getAlignment() const { return 32; }

int64_t TensorMemoryEncodingAttr::getColumnsPerBlock(ArrayRef<int64_t> shape,
                                                     Type elementType) const {
  int64_t perColumn =
      getPacked() && elementType.isIntOrFloat()
          ? std::max<int64_t>(1, 32 / elementType.getIntOrFloatBitWidth())
          : 1;
  return llvm::divideCeil(shape.back(), perColumn);
}

int64_t TensorMemoryEncodingAttr::getBlockStep(ArrayRef<int64_t> shape,
                                               Type elementType) const {
  return getBlockColumns() ? getBlockColumns()
                           : getColumnsPerBlock(shape, elementType);
}

int64_t TensorMemoryEncodingAttr::getTileSize(ArrayRef<int64_t> shape,
                                              Type elementType) const {
  // Blocks of 128 rows side by side (or block_columns apart).
  int64_t rowBlocks = shape.size() == 2 && shape[0] > 128 ? shape[0] / 128 : 1;
  return (rowBlocks - 1) * getBlockStep(shape, elementType) +
         getColumnsPerBlock(shape, elementType);
}

LogicalResult TensorMemoryEncodingAttr::verifyTileShape(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2 || (shape[0] > 128 && shape[0] % 128))
    return emitError() << "a tensor-memory tile has rank 2 and at most 128 "
                          "rows (lanes), or blocks of 128 rows";
  if (!elementType.isIntOrFloat())
    return emitError() << "tensor memory holds integers or floats, not "
                       << elementType;
  unsigned width = elementType.getIntOrFloatBitWidth();
  if (width != 32 && !(getPacked() && width == 16))
    return emitError() << "tensor memory holds 32-bit elements, or packed "
                          "16-bit ones, not "
                       << elementType;
  if (getBlockColumns() < 0 ||
      (getBlockColumns() &&
       getBlockColumns() < getColumnsPerBlock(shape, elementType)))
    return emitError() << "block_columns (" << getBlockColumns()
                       << ") is 0 or at least a row block's "
                       << getColumnsPerBlock(shape, elementType) << " columns";
  return success();
}

//===----------------------------------------------------------------------===//
// Target and roles
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef chip, Family family) {
  std::optional<TargetInfo> info = TargetInfo::lookup(chip);
  if (!info)
    return emitError() << "unknown chip '" << chip
                       << "' (known: " << TargetInfo::knownChips() << ")";
  if (!info->hasFamily(family))
    return emitError() << "chip '" << chip << "' has no "
                       << stringifyFamily(family) << " matrix units";
  return success();
}

LogicalResult RoleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               StringRef name, int64_t warps, int64_t registers,
                               int64_t active) {
  if (warps < 1)
    return emitError() << "role '" << name << "' needs at least one warp";
  if (active < 0 || active > warps)
    return emitError() << "role '" << name << "': " << active
                       << " active warps, but it has " << warps;
  if (registers != 0 && !isSetMaxNRegBudget(registers))
    return emitError() << "role '" << name
                       << "': a register budget is a multiple of 8 in [24, "
                          "256], got "
                       << registers;
  return success();
}

//===----------------------------------------------------------------------===//
// BufferType
//===----------------------------------------------------------------------===//

Type BufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(encoding) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape, elementType, encoding);
}

void BufferType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << "x" << getElementType() << ", " << getEncoding() << ">";
}

LogicalResult BufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 Attribute encoding) {
  auto memory = dyn_cast<MemoryEncodingAttrInterface>(encoding);
  if (!memory)
    return emitError() << "a buffer's encoding must say where it lives "
                          "(#tilegpu.shared or #tilegpu.tensor_memory), got "
                       << encoding;
  if (shape.empty() || shape.size() > 3 ||
      llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "a buffer has 1 to 3 positive static dimensions "
                          "(slots x rows x columns)";
  if (failed(
          memory.verifyTileShape(shape.size() == 3 ? shape.drop_front() : shape,
                                 elementType, emitError)))
    return failure();
  // Tensor memory has 512 columns per CTA.
  if (memory.getMemorySpace() == MemorySpace::Tensor) {
    int64_t columns = (shape.size() == 3 ? shape[0] : 1) *
                      memory.getTileSize(shape.take_back(2), elementType);
    if (columns > 512)
      return emitError() << "a tensor-memory buffer of " << columns
                         << " columns is more than the 512 there are";
  }
  return success();
}

int64_t BufferType::getTileSize() const {
  return getMemoryEncoding().getTileSize(
      getShape().size() == 3 ? getShape().drop_front() : getShape(),
      getElementType());
}

int64_t BufferType::getAllocationSize() const {
  return (isRing() ? getShape()[0] : 1) * getTileSize();
}

int64_t BufferType::getRowBlockColumns() const {
  return cast<TensorMemoryEncodingAttr>(getEncoding())
      .getColumnsPerBlock(getTileShape(), getElementType());
}

int64_t BufferType::getRowBlockStep() const {
  return cast<TensorMemoryEncodingAttr>(getEncoding())
      .getBlockStep(getTileShape(), getElementType());
}

BufferType BufferType::getTransposedView() const {
  auto shared = dyn_cast<SharedEncodingAttr>(getEncoding());
  if (!shared || getShape().size() != 2)
    return {};
  return BufferType::get(
      getContext(), {getShape()[1], getShape()[0]}, getElementType(),
      SharedEncodingAttr::get(getContext(), shared.getSwizzle(),
                              shared.getPad(), !shared.getTransposed()));
}

//===----------------------------------------------------------------------===//
// TensorMapType
//===----------------------------------------------------------------------===//

Type TensorMapType::parse(AsmParser &parser) {
  SmallVector<int64_t> box;
  Type elementType;
  int64_t swizzle = 0;
  if (parser.parseLess() ||
      parser.parseDimensionList(box, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("swizzle") || parser.parseEqual() ||
      parser.parseInteger(swizzle) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), box, elementType, swizzle);
}

void TensorMapType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getBox());
  printer << "x" << getElementType() << ", swizzle = " << getSwizzle() << ">";
}

LogicalResult
TensorMapType::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> box, Type elementType,
                      int64_t swizzle) {
  // (The element types the runtime encodes: the call's f16 or bf16, f32
  // of a bias or of dq_accum, i8 of a mask, i32 of positions.)
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32() &&
      !elementType.isInteger(8) && !elementType.isInteger(32))
    return emitError() << "a tensor map of f16, bf16, f32, i8 or i32, not "
                       << elementType;
  // cuTensorMapEncodeTiled: each box dimension in [1, 256]; a swizzled
  // box's inner dimension spans at most the swizzle's bytes.
  if (box.size() != 2 ||
      llvm::any_of(box, [](int64_t d) { return d < 1 || d > 256; }))
    return emitError() << "a tensor map's box is rows x cols, each in "
                          "[1, 256]";
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 0, 32, 64 or 128 bytes, got "
                       << swizzle;
  int64_t rowBytes = box[1] * elementType.getIntOrFloatBitWidth() / 8;
  if (rowBytes % 16 || (swizzle && rowBytes != swizzle))
    return emitError() << "a box row of " << rowBytes
                       << " bytes: TMA copies rows of a multiple of 16 "
                          "bytes, and a swizzled box row spans exactly the "
                          "swizzle ("
                       << swizzle << " bytes)";
  return success();
}

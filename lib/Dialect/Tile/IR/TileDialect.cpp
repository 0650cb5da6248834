//===- TileDialect.cpp - The tile dialect ---------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tiled_attn::tile;

#include "tiled_attn/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tiled_attn/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileTypes.cpp.inc"

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tiled_attn/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tiled_attn/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tiled_attn/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

int64_t tiled_attn::tile::saturatingElementCount(ArrayRef<int64_t> shape) {
  uint64_t count = 1;
  bool overflow = false;
  for (int64_t size : shape) {
    count =
        llvm::SaturatingMultiply(count, static_cast<uint64_t>(size), &overflow);
    if (overflow || count > static_cast<uint64_t>(INT64_MAX))
      return INT64_MAX;
  }
  return static_cast<int64_t>(count);
}

bool tiled_attn::tile::isTileShape(ShapedType type) {
  if (!type.hasStaticShape() || type.getRank() == 0)
    return false;
  if (llvm::any_of(type.getShape(), [](int64_t size) { return size <= 0; }) ||
      saturatingElementCount(type.getShape()) > kMaxTileElements)
    return false;
  // Powers of two cover the small vectors (row statistics of one warp, a
  // rank-1 iota); multiples of 16 cover the blocks that are not powers of
  // two (FlashAttention-3's 176 keys or 192 rows): 16 is the k-step and the
  // row quantum of every matrix instruction the targets have.
  return llvm::all_of(type.getShape(), [](int64_t size) {
    return size > 0 && (llvm::isPowerOf2_64(size) || size % 16 == 0);
  });
}

static bool isMultipleOf16In(int64_t value, int64_t lo, int64_t hi) {
  return value >= lo && value <= hi && value % 16 == 0;
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  // Folds produce index sizes and splat tiles; both are arith constants.
  if (auto typed = dyn_cast<TypedAttr>(value);
      typed && arith::ConstantOp::isBuildableWith(typed, type))
    return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// ViewType
//===----------------------------------------------------------------------===//

Type ViewType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<ViewType>(parser.getContext(), shape, elementType);
}

void ViewType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t size : getShape()) {
    if (ShapedType::isDynamic(size))
      printer << "?";
    else
      printer << size;
    printer << "x";
  }
  printer << getElementType() << ">";
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty())
    return emitError() << "a view needs at least one dimension";
  for (int64_t size : shape)
    if (!ShapedType::isDynamic(size) && size < 0)
      return emitError() << "view sizes must be non-negative, got " << size;
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32() &&
      !elementType.isInteger(32))
    return emitError() << "view elements must be f16, bf16, f32 or i32, got "
                       << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// SdpaAttr
//===----------------------------------------------------------------------===//

LogicalResult SdpaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t headDim, int64_t headDimV,
                               Type elementType, CausalMode causal,
                               int64_t blockM, int64_t blockN, int64_t stages,
                               bool refillAfterUse, bool maskSplit, bool exp2,
                               int64_t rescaleThreshold, bool deferPv,
                               bool softcap, bool lse, bool varlen) {
  if (!isMultipleOf16In(headDim, 16, 256))
    return emitError() << "head_dim must be a multiple of 16 in [16, 256], got "
                       << headDim;
  // 0 is head_dim; the same value spelled out would give one kernel two
  // spellings.
  if (headDimV != 0 &&
      (!isMultipleOf16In(headDimV, 16, 256) || headDimV == headDim))
    return emitError() << "head_dim_v must be a multiple of 16 in [16, 256] "
                          "other than head_dim ("
                       << headDim << "), or omitted, got " << headDimV;
  if (!elementType.isF16() && !elementType.isBF16())
    return emitError() << "element_type must be f16 or bf16, got "
                       << elementType;
  if (!isBlockSize(blockM))
    return emitError() << "block_m must be a multiple of 16 in [16, 256], got "
                       << blockM;
  if (!isBlockSize(blockN))
    return emitError() << "block_n must be a multiple of 16 in [16, 256], got "
                       << blockN;
  if (stages < 1 || stages > 4)
    return emitError() << "stages must be in [1, 4], got " << stages;
  if (refillAfterUse && stages < 2)
    return emitError() << "refill_after_use needs stages >= 2";
  if (rescaleThreshold < 0 || rescaleThreshold > 16)
    return emitError() << "rescale_threshold must be in [0, 16] (0 is off), "
                          "got "
                       << rescaleThreshold;
  return success();
}

SdpaAttr SdpaAttr::withBlocks(int64_t blockM, int64_t blockN) const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), blockM, blockN, getStages(), getRefillAfterUse(),
             getMaskSplit(), getExp2(), getRescaleThreshold(), getDeferPv(),
             getSoftcap(), getLse(), getVarlen());
}

SdpaAttr SdpaAttr::withStages(int64_t stages, bool refillAfterUse) const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), stages, refillAfterUse,
             getMaskSplit(), getExp2(), getRescaleThreshold(), getDeferPv(),
             getSoftcap(), getLse(), getVarlen());
}

SdpaAttr SdpaAttr::withMaskSplit() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(),
             /*mask_split=*/true, getExp2(), getRescaleThreshold(),
             getDeferPv(), getSoftcap(), getLse(), getVarlen());
}

SdpaAttr SdpaAttr::withExp2() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(),
             /*exp2=*/true, getRescaleThreshold(), getDeferPv(), getSoftcap(),
             getLse(), getVarlen());
}

SdpaAttr SdpaAttr::withRescaleThreshold(int64_t threshold) const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(), getExp2(), threshold,
             getDeferPv(), getSoftcap(), getLse(), getVarlen());
}

SdpaAttr SdpaAttr::withDeferPv() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(), getExp2(),
             getRescaleThreshold(),
             /*defer_pv=*/true, getSoftcap(), getLse(), getVarlen());
}

SmallVector<StringRef> SdpaAttr::getArgumentNames() const {
  SmallVector<StringRef> names = {"q", "k", "v", "o", "scale"};
  if (getCausal() == CausalMode::Window)
    names.append({"window_lo", "window_hi"});
  if (getCausal() == CausalMode::Window && getVarlen())
    names.push_back("window_align");
  if (getSoftcap())
    names.push_back("softcap");
  if (getLse())
    names.push_back("lse");
  if (getVarlen())
    names.append({"cu_seqlens_q", "cu_seqlens_k"});
  return names;
}

/// The kernel ABI that an SDPA attribute promises: (q, k, v, o, scale) with
/// rank-4 views of the attribute's element type and head dim, and for a
/// `window` kernel the band's diagonals (window_lo, window_hi: index, with
/// `varlen` window_align: index), with `softcap` the cap (f32), with `lse` a
/// rank-3 f32 view for the row log-sum-exps, with `varlen` the sequences'
/// offsets (cu_seqlens_q, cu_seqlens_k: rank-1 i32 views).
static LogicalResult verifySdpaSignature(func::FuncOp func, SdpaAttr sdpa) {
  FunctionType type = func.getFunctionType();
  MLIRContext *ctx = func.getContext();
  int64_t dyn = ShapedType::kDynamic;
  auto expected = ViewType::get(ctx, {dyn, dyn, dyn, sdpa.getHeadDim()},
                                sdpa.getElementType());
  auto expectedV = ViewType::get(ctx, {dyn, dyn, dyn, sdpa.getValueHeadDim()},
                                 sdpa.getElementType());
  auto lseView = ViewType::get(ctx, {dyn, dyn, dyn}, Float32Type::get(ctx));
  auto offsetsView = ViewType::get(ctx, {dyn}, IntegerType::get(ctx, 32));
  // Printed through a string: a type streamed into a diagnostic is quoted.
  auto str = [](Type t) {
    std::string text;
    llvm::raw_string_ostream(text) << t;
    return text;
  };
  bool window = sdpa.getCausal() == CausalMode::Window;
  bool varlen = sdpa.getVarlen();
  SmallVector<StringRef> names = sdpa.getArgumentNames();
  auto fail = [&]() {
    InFlightDiagnostic diag = func.emitOpError()
                              << "with 'tile.sdpa' expects arguments (";
    if (expectedV == expected)
      diag << "q, k, v, o: " << str(expected);
    else
      diag << "q, k: " << str(expected) << ", v, o: " << str(expectedV);
    diag << ", scale: f32";
    if (window)
      diag << (varlen ? ", window_lo, window_hi, window_align: index"
                      : ", window_lo, window_hi: index");
    if (sdpa.getSoftcap())
      diag << ", softcap: f32";
    if (sdpa.getLse())
      diag << ", lse: " << str(lseView);
    if (varlen)
      diag << ", cu_seqlens_q, cu_seqlens_k: " << str(offsetsView);
    diag << ") and no results, got " << type;
    return diag;
  };
  // Arguments after these are parameters a lowering added, each tagged with
  // its kernel parameter (the GPU level's tensor maps).
  unsigned numArgs = names.size();
  if (type.getNumInputs() < numArgs || type.getNumResults() != 0)
    return fail();
  for (unsigned i = numArgs; i < type.getNumInputs(); ++i)
    if (!func.getArgAttr(i, "tilegpu.param"))
      return fail();
  // A view of the rank and element type (and head dim) expected; its
  // other sizes may be static.
  auto viewLike = [](Type input, ViewType like) {
    auto view = dyn_cast<ViewType>(input);
    return view && view.getRank() == like.getRank() &&
           view.getElementType() == like.getElementType() &&
           (like.getRank() != 4 || view.getShape()[3] == like.getShape()[3]);
  };
  for (auto [name, input] : llvm::zip(names, type.getInputs())) {
    bool ok =
        llvm::StringSwitch<bool>(name)
            .Cases({"q", "k"}, viewLike(input, expected))
            .Cases({"v", "o"}, viewLike(input, expectedV))
            .Cases({"scale", "softcap"}, input.isF32())
            .Cases({"window_lo", "window_hi", "window_align"}, input.isIndex())
            .Case("lse", viewLike(input, lseView))
            .Cases({"cu_seqlens_q", "cu_seqlens_k"},
                   viewLike(input, offsetsView))
            .Default(false);
    if (!ok)
      return fail();
  }
  return success();
}

/// Every tensor in an SDPA kernel is a tile that one CTA holds: refuse,
/// before anything tries to build or run it, a value too large for any
/// target (arith ops take tensors of any size; the tile ops' own types check
/// the same bound).
static LogicalResult verifyKernelFootprint(func::FuncOp func) {
  Value tooLarge;
  int64_t elements = 0;
  auto check = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return true;
    int64_t n = saturatingElementCount(type.getShape());
    if (n <= kMaxTileElements)
      return true;
    tooLarge = v, elements = n;
    return false;
  };
  WalkResult walk = func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (!check(arg))
            return WalkResult::interrupt();
    for (Value result : op->getResults())
      if (!check(result))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (!walk.wasInterrupted())
    return success();
  auto type = cast<RankedTensorType>(tooLarge.getType());
  InFlightDiagnostic diag = func.emitOpError()
                            << "with 'tile.sdpa' holds a " << type << " of ";
  if (elements == INT64_MAX)
    diag << "more than 2^63";
  else
    diag << elements;
  diag << " elements; a tile may have at most " << kMaxTileElements
       << " (the 65536 registers of one SM)";
  diag.attachNote(tooLarge.getLoc()) << "the value is here";
  return diag;
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != getSdpaAttrName())
    return op->emitError() << "unknown tile dialect attribute '"
                           << attr.getName().getValue() << "'";
  auto sdpa = dyn_cast<SdpaAttr>(attr.getValue());
  if (!sdpa)
    return op->emitError() << "'" << getSdpaAttrName()
                           << "' must be a #tile.sdpa attribute";
  // A lowered kernel (a gpu.func) keeps the attribute; its arguments are no
  // longer views.
  if (auto func = dyn_cast<func::FuncOp>(op)) {
    if (failed(verifySdpaSignature(func, sdpa)))
      return failure();
    return verifyKernelFootprint(func);
  }
  if (isa<FunctionOpInterface>(op))
    return success();
  return op->emitError() << "'" << getSdpaAttrName()
                         << "' may only be attached to a function";
}

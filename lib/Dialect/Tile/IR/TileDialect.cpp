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
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tiled_attn;
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
      !elementType.isInteger(32) && !elementType.isInteger(8))
    return emitError()
           << "view elements must be f16, bf16, f32, i32 or i8, got "
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
                               KernelFeatures features) {
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
  if (features.split &&
      (!features.lse || causal != CausalMode::None || features.varlen))
    return emitError() << "split (split-KV) needs lse and takes no causal "
                          "mask, window or varlen";
  if (features.paged && (!features.seqused || features.sparse))
    return emitError() << "paged (a paged KV cache) needs seqused and takes "
                          "no block mask";
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
             getFeatures());
}

SdpaAttr SdpaAttr::withStages(int64_t stages, bool refillAfterUse) const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), stages, refillAfterUse,
             getMaskSplit(), getExp2(), getRescaleThreshold(), getDeferPv(),
             getFeatures());
}

SdpaAttr SdpaAttr::withMaskSplit() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(),
             /*mask_split=*/true, getExp2(), getRescaleThreshold(),
             getDeferPv(), getFeatures());
}

SdpaAttr SdpaAttr::withExp2() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(),
             /*exp2=*/true, getRescaleThreshold(), getDeferPv(), getFeatures());
}

SdpaAttr SdpaAttr::withRescaleThreshold(int64_t threshold) const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(), getExp2(), threshold,
             getDeferPv(), getFeatures());
}

SdpaAttr SdpaAttr::withDeferPv() const {
  return get(getContext(), getHeadDim(), getHeadDimV(), getElementType(),
             getCausal(), getBlockM(), getBlockN(), getStages(),
             getRefillAfterUse(), getMaskSplit(), getExp2(),
             getRescaleThreshold(),
             /*defer_pv=*/true, getFeatures());
}

SmallVector<ArgRole> SdpaAttr::getArgumentRoles() const {
  SmallVector<ArgRole> roles = {ArgRole::Q, ArgRole::K, ArgRole::V, ArgRole::O,
                                ArgRole::Scale};
  KernelFeatures features = getFeatures();
  if (getCausal() == CausalMode::Window)
    roles.append({ArgRole::WindowLo, ArgRole::WindowHi});
  if (getCausal() == CausalMode::Window && features.varlen)
    roles.push_back(ArgRole::WindowAlign);
  // Each feature's arguments (KernelVariant.def) that are roles; the
  // others (a block mask's) are captured inputs.
  for (const KernelFeature &feature : kKernelFeatures) {
    if (!(features.*feature.member))
      continue;
    SmallVector<StringRef> names;
    StringRef(feature.arguments).split(names, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      if (std::optional<ArgRole> role = symbolizeArgRole(name))
        roles.push_back(*role);
  }
  return roles;
}

/// "softcap, lse, varlen, ...": KernelVariant.def's features in order.
static std::string featureNames() {
  std::string text;
  for (const KernelFeature &feature : kKernelFeatures)
    text += (text.empty() ? "" : ", ") + std::string(feature.name);
  return text;
}

FailureOr<KernelFeatures>
tiled_attn::tile::parseKernelFeatures(AsmParser &parser) {
  KernelFeatures features;
  int last = -1;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    for (int i = 0; i < kNumKernelFeatures; ++i) {
      if (name != kKernelFeatures[i].name)
        continue;
      if (i <= last)
        return parser.emitError(loc)
               << "kernel feature '" << name
               << "' out of order or repeated (KernelVariant.def's order: "
               << featureNames() << ")";
      features.*kKernelFeatures[i].member = true;
      last = i;
      return success();
    }
    return parser.emitError(loc)
           << "unknown kernel feature '" << name
           << "' (KernelVariant.def: " << featureNames() << ")";
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  return features;
}

void tiled_attn::tile::printKernelFeatures(AsmPrinter &printer,
                                           const KernelFeatures &features) {
  printer << '[';
  bool first = true;
  for (const KernelFeature &feature : kKernelFeatures)
    if (features.*feature.member) {
      printer << (first ? "" : ", ") << feature.name;
      first = false;
    }
  printer << ']';
}

//===----------------------------------------------------------------------===//
// ArgAttr and the arguments' roles
//===----------------------------------------------------------------------===//

/// A C identifier: what a captured input's name must be, as the manifest,
/// the C API and Python name it.
static bool isIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult ArgAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArgRole role, StringAttr name) {
  if (role != ArgRole::Captured) {
    if (name)
      return emitError() << "only a captured input has a name; '"
                         << stringifyArgRole(role) << "' is named by its role";
    return success();
  }
  if (!name || !isIdentifier(name.getValue()))
    return emitError() << "a captured input needs a name that is a C "
                          "identifier, got "
                       << (name ? "'" + name.getValue().str() + "'"
                                : std::string("none"));
  if (symbolizeArgRole(name.getValue()))
    return emitError() << "a captured input may not take the name of a role, "
                          "got '"
                       << name.getValue() << "'";
  return success();
}

StringRef ArgAttr::getArgumentName() const {
  return getRole() == ArgRole::Captured ? getName().getValue()
                                        : stringifyArgRole(getRole());
}

ArgAttr tiled_attn::tile::getArgAttr(FunctionOpInterface func, unsigned index) {
  if (index >= func.getNumArguments())
    return {};
  return func.getArgAttrOfType<ArgAttr>(index, TileDialect::getArgAttrName());
}

BlockArgument tiled_attn::tile::findArgument(FunctionOpInterface func,
                                             ArgRole role) {
  if (func.isExternal())
    return {};
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (ArgAttr arg = getArgAttr(func, i); arg && arg.getRole() == role)
      return func.getArgument(i);
  return {};
}

ArgAttr tiled_attn::tile::getArgAttrOf(Value value) {
  while (auto slice = value.getDefiningOp<SliceOp>())
    value = slice.getView();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return {};
  auto func =
      dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || func.isExternal() ||
      arg.getOwner() != &func.getFunctionBody().front())
    return {};
  return getArgAttr(func, arg.getArgNumber());
}

std::optional<ArgRole> tiled_attn::tile::getArgRole(Value value) {
  if (ArgAttr arg = getArgAttrOf(value))
    return arg.getRole();
  return std::nullopt;
}

std::string tiled_attn::tile::getArgumentName(FunctionOpInterface func,
                                              unsigned index) {
  if (ArgAttr arg = getArgAttr(func, index))
    return arg.getArgumentName().str();
  return "arg" + std::to_string(index);
}

/// The kernel ABI that an SDPA attribute promises: one argument of each of
/// its roles (SdpaAttr::getArgumentRoles), in any order, each marked with
/// its `tile.arg`: q, k, v, o rank-4 views of the attribute's element type
/// and head dims, scale f32, for a `window` kernel the band's diagonals
/// (window_lo, window_hi: index, with `varlen` window_align: index), with
/// `softcap` the cap (f32), with `lse` a rank-3 f32 view for the row
/// log-sum-exps, with `varlen` the sequences' offsets (cu_seqlens_q,
/// cu_seqlens_k: rank-1 i32 views); besides them, captured inputs (views,
/// or f32, i32 or index scalars) of distinct names, and the parameters a
/// lowering added (`tilegpu.param`).
static LogicalResult verifySdpaSignature(func::FuncOp func, SdpaAttr sdpa) {
  FunctionType type = func.getFunctionType();
  MLIRContext *ctx = func.getContext();
  int64_t dyn = ShapedType::kDynamic;
  auto expected = ViewType::get(ctx, {dyn, dyn, dyn, sdpa.getHeadDim()},
                                sdpa.getElementType());
  auto expectedV = ViewType::get(ctx, {dyn, dyn, dyn, sdpa.getValueHeadDim()},
                                 sdpa.getElementType());
  auto lseView = ViewType::get(ctx, {dyn, dyn, dyn}, Float32Type::get(ctx));
  // With split, o is the partial outputs, in f32.
  auto partialView = ViewType::get(ctx, {dyn, dyn, dyn, sdpa.getValueHeadDim()},
                                   Float32Type::get(ctx));
  auto offsetsView = ViewType::get(ctx, {dyn}, IntegerType::get(ctx, 32));
  // Printed through a string: a type streamed into a diagnostic is quoted.
  auto str = [](Type t) {
    std::string text;
    llvm::raw_string_ostream(text) << t;
    return text;
  };
  bool window = sdpa.getCausal() == CausalMode::Window;
  bool varlen = sdpa.getFeatures().varlen;
  SmallVector<ArgRole> roles = sdpa.getArgumentRoles();
  auto fail = [&]() {
    InFlightDiagnostic diag = func.emitOpError()
                              << "with 'tile.sdpa' expects arguments (";
    if (sdpa.getFeatures().split)
      diag << "q, k: " << str(expected) << ", v: " << str(expectedV)
           << ", o: " << str(partialView);
    else if (expectedV == expected)
      diag << "q, k, v, o: " << str(expected);
    else
      diag << "q, k: " << str(expected) << ", v, o: " << str(expectedV);
    diag << ", scale: f32";
    if (window)
      diag << (varlen ? ", window_lo, window_hi, window_align: index"
                      : ", window_lo, window_hi: index");
    if (sdpa.getFeatures().softcap)
      diag << ", softcap: f32";
    if (sdpa.getFeatures().lse)
      diag << ", lse: " << str(lseView);
    if (varlen)
      diag << ", cu_seqlens_q, cu_seqlens_k: " << str(offsetsView);
    if (sdpa.getFeatures().split)
      diag << ", num_splits: index";
    if (sdpa.getFeatures().seqused)
      diag << ", seqused_k: " << str(offsetsView);
    diag << ") and no results, got " << type;
    return diag;
  };
  if (type.getNumResults() != 0)
    return fail();
  // A view of the rank and element type (and head dim) expected; its
  // other sizes may be static.
  auto viewLike = [](Type input, ViewType like) {
    auto view = dyn_cast<ViewType>(input);
    return view && view.getRank() == like.getRank() &&
           view.getElementType() == like.getElementType() &&
           (like.getRank() != 4 || view.getShape()[3] == like.getShape()[3]);
  };
  SmallVector<bool> seen(roles.size(), false);
  llvm::StringSet<> captured;
  for (auto [index, input] : llvm::enumerate(type.getInputs())) {
    // Parameters a lowering added, each tagged with its kernel parameter
    // (the GPU level's tensor maps).
    if (func.getArgAttr(index, "tilegpu.param"))
      continue;
    ArgAttr arg = getArgAttr(func, index);
    if (!arg) {
      // Without roles the arguments are the generator's, in its order (a
      // shorter list is a missing argument).
      if (index >= roles.size() || type.getNumInputs() != roles.size())
        return fail();
      return func.emitOpError()
             << "argument #" << index << " has no '"
             << TileDialect::getArgAttrName() << "' role (expected #tile.arg<"
             << stringifyArgRole(roles[index]) << ">)";
    }
    if (arg.getRole() == ArgRole::Captured) {
      if (!isa<ViewType>(input) && !input.isF32() &&
          !input.isSignlessInteger(32) && !input.isIndex())
        return func.emitOpError()
               << "captured input '" << arg.getName().getValue()
               << "' must be a view or an f32, i32 or index scalar, got "
               << input;
      if (!captured.insert(arg.getName().getValue()).second)
        return func.emitOpError() << "two captured inputs named '"
                                  << arg.getName().getValue() << "'";
      continue;
    }
    auto *at = llvm::find(roles, arg.getRole());
    if (at == roles.end())
      return func.emitOpError()
             << "argument #" << index << " is '"
             << stringifyArgRole(arg.getRole())
             << "', which this kernel's 'tile.sdpa' does not take";
    if (seen[at - roles.begin()])
      return func.emitOpError()
             << "two arguments are '" << stringifyArgRole(arg.getRole()) << "'";
    seen[at - roles.begin()] = true;
    bool ok = false;
    switch (arg.getRole()) {
    case ArgRole::Q:
    case ArgRole::K:
      ok = viewLike(input, expected);
      break;
    case ArgRole::V:
      ok = viewLike(input, expectedV);
      break;
    case ArgRole::O:
      ok = viewLike(input, sdpa.getFeatures().split ? partialView : expectedV);
      break;
    case ArgRole::Scale:
    case ArgRole::Softcap:
      ok = input.isF32();
      break;
    case ArgRole::NumSplits:
      ok = input.isIndex();
      break;
    case ArgRole::WindowLo:
    case ArgRole::WindowHi:
    case ArgRole::WindowAlign:
      ok = input.isIndex();
      break;
    case ArgRole::Lse:
      ok = viewLike(input, lseView);
      break;
    case ArgRole::CuSeqlensQ:
    case ArgRole::CuSeqlensK:
    case ArgRole::SeqUsedK:
      ok = viewLike(input, offsetsView);
      break;
    case ArgRole::Captured:
    case ArgRole::SeqQ:
    case ArgRole::SeqK:
    case ArgRole::BlockKinds:
    case ArgRole::OPartial:
    case ArgRole::LsePartial:
    case ArgRole::DOut:
    case ArgRole::DQ:
    case ArgRole::DK:
    case ArgRole::DV:
    case ArgRole::Delta:
    case ArgRole::DQAccum:
      break; // Not an SDPA kernel's: `roles` has none of them.
    }
    if (!ok)
      return fail();
  }
  if (llvm::is_contained(seen, false))
    return fail();
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

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() != getArgAttrName())
    return op->emitError() << "unknown tile dialect argument attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<ArgAttr>(attr.getValue()))
    return op->emitError() << "'" << getArgAttrName()
                           << "' must be a #tile.arg attribute";
  return success();
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

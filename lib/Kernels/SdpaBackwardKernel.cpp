//===- SdpaBackwardKernel.cpp - The SDPA backward pass in tile IR ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2's backward pass (Dao, 2023, Algorithm 2) with
// FlashAttention-3's transposed scores, as three tile programs, and a
// fourth for the deterministic mode:
//
// - preprocess, per block of query rows: delta = rowsum(dO * O), and dQ's
//   f32 accumulator zeroed;
// - main, per block of keys: K_n and V_n read once, dK_n and dV_n kept
//   across the loop over the query blocks that see the block (and, with
//   grouped KV heads, over the query heads of the group), dQ's part of each
//   step added into the accumulator;
// - postprocess, per block of query rows: dQ = scale * accumulator, in the
//   element type;
// - dq (deterministic mode, instead of the postprocess), per block of
//   query rows: dQ recomputed over the key blocks the rows see, in
//   registers, and written once (no atomics).
//
// The scores are computed transposed, Sᵀ = K_n Q_mᵀ (keys as rows), so that
// Pᵀ and dSᵀ are the left operands of dV's and dK's products (on a GPU, the
// registers of one product's accumulator feed the next as they do for P V
// in the forward); dQ = dS K_n takes dSᵀ transposed.
//
// The probabilities are recomputed from the forward's log-sum-exps: P =
// exp(scale S - lse), 0 where the mask hides the key, for keys past S_k and
// for rows past S_q, and on rows that saw no key (lse = -inf).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SdpaBackwardKernel.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Kernels/KernelFunctions.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

namespace {

/// Shorthands for building one kernel.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;

  RankedTensorType tile(ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value splat(ArrayRef<int64_t> shape, double v) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(tile(shape, b.getF32Type()),
                               b.getF32FloatAttr(v)));
  }
  Value broadcast(Value v, ArrayRef<int64_t> shape, int64_t axis) {
    auto type = cast<RankedTensorType>(v.getType());
    return BroadcastOp::create(b, loc, tile(shape, type.getElementType()), v,
                               axis);
  }
  Value load(Value view, ArrayRef<int64_t> shape, ValueRange indices,
             double pad = 0.0, bool transpose = false) {
    Type element = cast<ViewType>(view.getType()).getElementType();
    return LoadOp::create(b, loc, tile(shape, element), view, indices,
                          ValueRange{}, APFloat(pad), transpose);
  }

  /// Sequence `batch`'s rows of packed tensors: [cu[batch], cu[batch + 1])
  /// as (start, length).
  std::pair<Value, Value> sequence(Value offsets, Value batch) {
    auto offset = [&](Value at) -> Value {
      Value read = ReadOp::create(b, loc, b.getI32Type(), offsets, at);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), read);
    };
    Value start = offset(batch);
    Value next = offset(arith::AddIOp::create(b, loc, batch, index(1)));
    return {start, arith::SubIOp::create(b, loc, next, start)};
  }
  /// `view` narrowed along its sequence dimension (2) to `rows`.
  Value slice(Value view, std::pair<Value, Value> rows) {
    return SliceOp::create(b, loc, view, 2, rows.first, rows.second);
  }

  /// A kernel `name` of arguments with these types and roles, its builder
  /// at the start of its body.
  func::FuncOp kernel(StringRef name, ArrayRef<Type> types,
                      ArrayRef<ArgRole> roles) {
    MLIRContext *ctx = b.getContext();
    auto func =
        func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
    for (auto [i, role] : llvm::enumerate(roles))
      func.setArgAttr(i, TileDialect::getArgAttrName(),
                      ArgAttr::get(ctx, role, {}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    return func;
  }
};

/// The argument of `f` whose role (`roles`, in order) is `role`; null
/// where it has none.
Value argumentOf(func::FuncOp f, ArrayRef<ArgRole> roles, ArgRole role) {
  for (auto [i, r] : llvm::enumerate(roles))
    if (r == role)
      return f.getArgument(i);
  return Value();
}

/// The tiles of one shape that turn a product's scores into what the
/// softmax saw: `scale` without a softcap; with one, `capScale` (scale /
/// softcap), `cap` and `one` (for the chain rule's 1 - tanh^2).
struct ScoreTiles {
  Value scale, cap, capScale, one;

  /// What the softmax saw of the product `s` (scale s, or cap tanh(capScale
  /// s), `t` set to that tanh).
  Value scores(OpBuilder &b, Location loc, Value s, Value &t) const {
    if (!cap)
      return arith::MulFOp::create(b, loc, s, scale);
    t = math::TanhOp::create(b, loc,
                             arith::MulFOp::create(b, loc, s, capScale));
    return arith::MulFOp::create(b, loc, t, cap);
  }
  /// dS = P (dP - delta), times a score function's slope `slope` (df/ds
  /// at the scores, where there is one), times 1 - t^2 through a cap.
  Value dScores(OpBuilder &b, Location loc, Value p, Value dp, Value delta,
                Value t, Value slope = Value()) const {
    Value ds = arith::MulFOp::create(b, loc, p,
                                     arith::SubFOp::create(b, loc, dp, delta));
    if (slope)
      ds = arith::MulFOp::create(b, loc, ds, slope);
    if (!cap)
      return ds;
    return arith::MulFOp::create(
        b, loc, ds,
        arith::SubFOp::create(b, loc, one,
                              arith::MulFOp::create(b, loc, t, t)));
  }
};

} // namespace

namespace {

/// The backward program's kernels, one method a phase, each appended to
/// the module at the builder's insertion block (the configuration checked
/// by buildPhases).
class BackwardBuilder {
public:
  BackwardBuilder(OpBuilder &b, Location loc,
                  const SdpaBackwardKernelConfig &cfg)
      : b(b), loc(loc), cfg(cfg), kb{b, loc}, ctx(b.getContext()),
        d(cfg.headDim), dv(cfg.headDimV ? cfg.headDimV : cfg.headDim),
        bm(cfg.blockM), bn(cfg.blockN), elt(cfg.elementType), name(cfg.name),
        f32(b.getF32Type()), i32(b.getI32Type()),
        rowsView(ViewType::get(ctx, {dyn, dyn, dyn}, f32)),
        offsetsView(ViewType::get(ctx, {dyn}, i32)) {}

  /// The configuration's score and mask functions, and the score
  /// function's gradient, looked up in `module`; an error names what is
  /// missing, doubled or of the wrong kind.
  LogicalResult findFunctions(ModuleOp module);

  func::FuncOp buildPreprocess();
  func::FuncOp buildMain();
  func::FuncOp buildPostprocess();
  func::FuncOp buildDq();

private:
  static constexpr int64_t dyn = ShapedType::kDynamic;
  static constexpr double inf = std::numeric_limits<double>::infinity();

  Type view4(int64_t cols, Type t) {
    return ViewType::get(ctx, {dyn, dyn, dyn, cols}, t);
  }

  // The keys a query sees: key j from query i iff lo <= j - i <= hi (a
  // bound absent, a null Value, is none): top-left causal hi = 0,
  // bottom-right hi = S_k - S_q, a window its two arguments (with varlen
  // shifted by window_align times the sequence's S_k - S_q).
  // (`c0`: the kernel's index 0, which top-left's hi is.)
  std::pair<Value, Value> band(OpBuilder &b, Location loc, Value c0, Value seqQ,
                               Value seqK,
                               llvm::function_ref<Value(ArgRole)> argOf) {
    Value lo, hi;
    if (cfg.causal == CausalMode::TopLeft)
      hi = c0;
    else if (cfg.causal == CausalMode::BottomRight)
      hi = arith::SubIOp::create(b, loc, seqK, seqQ);
    else if (cfg.causal == CausalMode::Window) {
      // Clamped to [-S_q, S_k], past every diagonal j - i there is, so that
      // any bound (FlashAttention's "no bound" as a huge number) compares
      // as it should in the masks' 32-bit positions.
      Value negQ = arith::SubIOp::create(b, loc, c0, seqQ);
      auto clamp = [&](Value x) -> Value {
        return arith::MinSIOp::create(
            b, loc, arith::MaxSIOp::create(b, loc, x, negQ), seqK);
      };
      Value windowLo = argOf(ArgRole::WindowLo);
      Value windowHi = argOf(ArgRole::WindowHi);
      if (Value align = argOf(ArgRole::WindowAlign)) {
        Value shift = arith::MulIOp::create(
            b, loc, align, arith::SubIOp::create(b, loc, seqK, seqQ));
        windowLo = arith::AddIOp::create(b, loc, windowLo, shift);
        windowHi = arith::AddIOp::create(b, loc, windowHi, shift);
      }
      lo = clamp(windowLo);
      hi = clamp(windowHi);
    }
    return {lo, hi};
  }
  // `visible` and the band: the diagonals j - i of the elements against
  // its bounds.
  Value withinBand(OpBuilder &b, Location loc, Value visible, Value diagonal,
                   Value lo, Value hi, ArrayRef<int64_t> shape) {
    for (auto [bound, predicate] : {std::pair{hi, arith::CmpIPredicate::sle},
                                    std::pair{lo, arith::CmpIPredicate::sge}})
      if (bound)
        visible = arith::AndIOp::create(
            b, loc, visible,
            arith::CmpIOp::create(
                b, loc, predicate, diagonal,
                tensor::SplatOp::create(
                    b, loc, RankedTensorType::get(shape, i32),
                    arith::IndexCastOp::create(b, loc, i32, bound)
                        .getResult())));
    return visible;
  }
  // floor(max(x, 0) / block) and its ceiling, of a signed x (`c0`: the
  // kernel's index 0).
  Value blockIndex(Value x, Value block, Value c0, bool ceil) {
    Value nonNegative = arith::MaxSIOp::create(b, loc, x, c0);
    return ceil
               ? arith::CeilDivUIOp::create(b, loc, nonNegative, block)
                     .getResult()
               : arith::DivUIOp::create(b, loc, nonNegative, block).getResult();
  }
  /// The unmasked middle [from, to) of the blocks [first, end) that a
  /// program visits, blocks of `block` rows of a sequence of `length` (the
  /// generator's mask split): from the block holding `fromAt()` (rounded
  /// up; `first` without a bound) to the one holding `endAt()` (rounded
  /// down; the last whole block without a bound), and empty unless the
  /// program's own block, `ownSize` rows from `ownStart`, lies inside its
  /// sequence of `ownLength`.
  std::pair<Value, Value> unmaskedBlocks(Value first, Value end, Value length,
                                         Value block, Value c0, Value ownStart,
                                         int64_t ownSize, Value ownLength,
                                         const std::function<Value()> &fromAt,
                                         const std::function<Value()> &endAt) {
    Value from = first;
    if (fromAt)
      from = arith::MaxUIOp::create(
          b, loc, first,
          arith::MinUIOp::create(b, loc, blockIndex(fromAt(), block, c0, true),
                                 end));
    Value to = arith::DivUIOp::create(b, loc, length, block);
    if (endAt)
      to = arith::MinUIOp::create(b, loc, to,
                                  blockIndex(endAt(), block, c0, false));
    to = arith::MinUIOp::create(b, loc, to, end);
    Value ownInside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule,
        arith::AddIOp::create(b, loc, ownStart, kb.index(ownSize)), ownLength);
    to = arith::SelectOp::create(
        b, loc, ownInside, arith::MaxUIOp::create(b, loc, from, to), from);
    return {from, to};
  }
  // The tiles of `shape` that scale or cap the scores (ScoreTiles).
  ScoreTiles scoreTiles(ArrayRef<int64_t> shape, Value scale, Value softcap) {
    auto splat = [&](Value v) -> Value {
      return tensor::SplatOp::create(b, loc, RankedTensorType::get(shape, f32),
                                     v);
    };
    ScoreTiles tiles;
    if (!softcap) {
      tiles.scale = splat(scale);
      return tiles;
    }
    tiles.one = kb.splat(shape, 1.0);
    tiles.cap = splat(softcap);
    tiles.capScale = splat(arith::DivFOp::create(b, loc, scale, softcap));
    return tiles;
  }
  // The main and dq kernels' arguments: the views and scale, then the
  // window's band, the softcap and the varlen offsets (and band alignment)
  // where the variant has them.
  void maskArguments(SmallVector<Type> &types, SmallVector<ArgRole> &roles) {
    const bool window = cfg.causal == CausalMode::Window;
    if (window) {
      types.append({b.getIndexType(), b.getIndexType()});
      roles.append({ArgRole::WindowLo, ArgRole::WindowHi});
    }
    if (cfg.softcap) {
      types.push_back(f32);
      roles.push_back(ArgRole::Softcap);
    }
    if (cfg.varlen) {
      types.append({offsetsView, offsetsView});
      roles.append({ArgRole::CuSeqlensQ, ArgRole::CuSeqlensK});
      // A window of a varlen batch, as the forward's: window_align 1 shifts
      // the band by each sequence's S_k - S_q (bottom-right), 0 keeps it.
      if (window) {
        types.push_back(b.getIndexType());
        roles.push_back(ArgRole::WindowAlign);
      }
    }
  }

  // The functions' captured inputs, once per name, appended to `types`
  // after the arguments of `roles`; their attributes (#tile.arg<captured,
  // "name">) go into `captured`, and scoreFn's and maskFn's captures are
  // numbered as this kernel's arguments.
  void captureArguments(SmallVector<Type> &types, ArrayRef<ArgRole> roles,
                        SmallVector<DictionaryAttr> &captured) {
    KernelArguments args;
    args.types.assign(types.begin(), types.end());
    args.attrs.assign(types.size(), b.getDictionaryAttr({}));
    for (auto [fn, isScore] : {std::pair{&scoreFn, true}, {&maskFn, false}}) {
      fn->captures.clear();
      // (Checked by findFunctions: cannot fail here.)
      if (fn->fn)
        (void)addFunctionCaptures(b, *fn, isScore, args);
    }
    types.assign(args.types.begin(), args.types.end());
    captured.assign(args.attrs.begin() + roles.size(), args.attrs.end());
  }
  // A kernel of these arguments (kb.kernel) with the captured ones'
  // attributes set.
  func::FuncOp kernelWithCaptures(StringRef symbol, ArrayRef<Type> types,
                                  ArrayRef<ArgRole> roles,
                                  ArrayRef<DictionaryAttr> captured) {
    func::FuncOp f = kb.kernel(symbol, types, roles);
    for (auto [i, attrs] : llvm::enumerate(captured))
      f.setArgAttrs(roles.size() + i, attrs);
    return f;
  }
  // The score function, its slope (@<f>_grad with a gradient of 1) or the
  // mask function over a block of scores at queries from q0 and keys from
  // k0 of batch entry `entry` and query head `head`; transposed: keys as
  // rows.
  Value applyFunction(OpBuilder &b, Location loc, func::FuncOp kernel,
                      const KernelFunction &fn, func::FuncOp callee,
                      Value scores, ArrayRef<int64_t> shape, Value entry,
                      Value head, Value q0, Value k0, bool transposed,
                      Value extra = Value()) {
    SmallVector<Value> captures;
    for (unsigned a : fn.captures)
      captures.push_back(kernel.getArgument(a));
    if (extra)
      captures.push_back(extra);
    Type element = scores ? f32 : b.getI1Type();
    return ApplyOp::create(b, loc, RankedTensorType::get(shape, element),
                           callee.getSymName(), scores, entry, head, q0, k0,
                           captures, transposed);
  }
  // The scores as the score function leaves them (`raw` where there is
  // none).
  Value scoreFunction(OpBuilder &b, Location loc, func::FuncOp kernel,
                      Value raw, ArrayRef<int64_t> shape, Value entry,
                      Value head, Value q0, Value k0, bool transposed) {
    if (!scoreFn.fn)
      return raw;
    return applyFunction(b, loc, kernel, scoreFn, scoreFn.fn, raw, shape, entry,
                         head, q0, k0, transposed);
  }
  // df/ds at the scores `raw` (null without a score function).
  Value scoreSlope(OpBuilder &b, Location loc, func::FuncOp kernel, Value raw,
                   ArrayRef<int64_t> shape, Value entry, Value head, Value q0,
                   Value k0, bool transposed) {
    if (!scoreFn.fn)
      return Value();
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
    return applyFunction(b, loc, kernel, scoreFn, scoreGrad, raw, shape, entry,
                         head, q0, k0, transposed, one);
  }
  // `visible` and what the mask function shows.
  Value maskFunction(OpBuilder &b, Location loc, func::FuncOp kernel,
                     Value visible, ArrayRef<int64_t> shape, Value entry,
                     Value head, Value q0, Value k0, bool transposed) {
    if (!maskFn.fn)
      return visible;
    return arith::AndIOp::create(b, loc, visible,
                                 applyFunction(b, loc, kernel, maskFn,
                                               maskFn.fn, Value(), shape, entry,
                                               head, q0, k0, transposed));
  }

  // With varlen, `views` (each a view argument, and whether its rows are
  // keys) narrowed to sequence `batch`'s rows of the packed tensors
  // (queries' by cu_seqlens_q, keys' by cu_seqlens_k), in that order, and
  // `batch` set to `zero`; nothing without.
  void sliceToSequence(llvm::function_ref<Value(ArgRole)> argOf, Value &batch,
                       Value zero, ArrayRef<std::pair<Value *, bool>> views) {
    if (!cfg.varlen)
      return;
    auto queries = kb.sequence(argOf(ArgRole::CuSeqlensQ), batch);
    std::pair<Value, Value> keys;
    if (llvm::any_of(views, [](auto view) { return view.second; }))
      keys = kb.sequence(argOf(ArgRole::CuSeqlensK), batch);
    for (auto [view, ofKeys] : views)
      *view = kb.slice(*view, ofKeys ? keys : queries);
    batch = zero;
  }

  /// What the main and dq kernels begin with: the program's block ids,
  /// the index constants 0 and 1, `views` narrowed to its sequence
  /// (varlen, see sliceToSequence), S_q and S_k (of the narrowed q and k)
  /// and the group size H_q / H_kv.
  struct Program {
    // (`entry`: the batch entry, the sequence with varlen, which score and
    // mask functions see; `batch` the views' index, 0 with varlen.)
    Value x, y, batch, entry, c0, c1, seqQ, seqK, group;
  };
  Program beginProgram(llvm::function_ref<Value(ArgRole)> argOf, Value &q,
                       Value &k, ArrayRef<std::pair<Value *, bool>> views) {
    Program p;
    p.x = BlockIdOp::create(b, loc, Dim::X);
    p.y = BlockIdOp::create(b, loc, Dim::Y);
    p.batch = BlockIdOp::create(b, loc, Dim::Z);
    p.c0 = kb.index(0), p.c1 = kb.index(1);
    p.entry = p.batch;
    sliceToSequence(argOf, p.batch, p.c0, views);
    p.seqQ = DimOp::create(b, loc, q, 2);
    p.seqK = DimOp::create(b, loc, k, 2);
    // (H_kv divides H_q: the caller's contract, as the forward's; the
    // runtime checks it.)
    p.group = arith::DivUIOp::create(b, loc, DimOp::create(b, loc, q, 1),
                                     DimOp::create(b, loc, k, 1));
    return p;
  }

  OpBuilder &b;
  Location loc;
  const SdpaBackwardKernelConfig &cfg;
  KernelBuilder kb;
  MLIRContext *ctx;
  const int64_t d, dv, bm, bn;
  Type elt;
  const std::string name;
  Type f32, i32, rowsView, offsetsView;
  KernelFunction scoreFn, maskFn;
  func::FuncOp scoreGrad;
};

} // namespace

LogicalResult BackwardBuilder::findFunctions(ModuleOp module) {
  StringRef missing;
  if (failed(findKernelFunctions(loc, module, cfg.functions, scoreFn, maskFn,
                                 missing)))
    return failure();
  if (!missing.empty())
    return emitError(loc) << "no function '" << missing
                          << "' in the module (a score or mask function)";
  // (The signatures and captures' roles, checked on a scratch list.)
  KernelArguments scratch;
  for (auto [fn, isScore] : {std::pair{&scoreFn, true}, {&maskFn, false}})
    if (fn->fn && failed(addFunctionCaptures(b, *fn, isScore, scratch)))
      return failure();
  if (!scoreFn.fn)
    return success();
  StringRef fnName = scoreFn.fn.getSymName();
  std::string gradName = (fnName + "_grad").str();
  scoreGrad = module.lookupSymbol<func::FuncOp>(gradName);
  SmallVector<Type> inputs(scoreFn.fn.getFunctionType().getInputs());
  inputs.push_back(f32);
  if (!scoreGrad)
    return emitError(loc)
           << "the score function '" << fnName << "' has no gradient '"
           << gradName
           << "' beside it (tile-differentiate-score derives it from the "
              "body, or declare it: the function's arguments and %grad: "
              "f32, returning %grad * df/dscore)";
  if (scoreGrad.getFunctionType() != b.getFunctionType(inputs, {f32}))
    return emitError(loc) << "the gradient '" << gradName << "' of '" << fnName
                          << "' must be of type "
                          << b.getFunctionType(inputs, {f32}) << " (" << fnName
                          << "'s arguments and %grad), got "
                          << scoreGrad.getFunctionType();
  return success();
}

// Preprocess: delta = rowsum(dO * O) and dQ's accumulator zeroed.
func::FuncOp BackwardBuilder::buildPreprocess() {
  SmallVector<Type> types = {view4(dv, elt), view4(dv, elt), rowsView,
                             view4(d, f32)};
  SmallVector<ArgRole> roles = {ArgRole::O, ArgRole::DOut, ArgRole::Delta,
                                ArgRole::DQAccum};
  if (cfg.varlen)
    types.push_back(offsetsView), roles.push_back(ArgRole::CuSeqlensQ);
  func::FuncOp f = kb.kernel(
      sdpaBackwardSymbol(name, SdpaBackwardPhase::Preprocess), types, roles);
  Value o = f.getArgument(0), dO = f.getArgument(1), delta = f.getArgument(2),
        dqAccum = f.getArgument(3);
  Value m = BlockIdOp::create(b, loc, Dim::X);
  Value h = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  Value c0 = kb.index(0);
  // (Sequence b's rows of the packed [1, H, total_q, ...] tensors.)
  sliceToSequence(
      [&](ArgRole role) { return argumentOf(f, roles, role); }, batch, c0,
      {{&o, false}, {&dO, false}, {&delta, false}, {&dqAccum, false}});
  auto widened = [&](Value view) {
    Value t = kb.load(view, {bm, dv}, {batch, h, m, c0});
    return arith::ExtFOp::create(b, loc, kb.tile({bm, dv}, f32), t);
  };
  Value product =
      arith::MulFOp::create(b, loc, widened(o), widened(dO)).getResult();
  Value rows =
      ReduceOp::create(b, loc, kb.tile({bm}, f32), product, ReduceKind::Sum, 1);
  StoreOp::create(b, loc, rows, delta, ValueRange{batch, h, m}, Value());
  StoreOp::create(b, loc, kb.splat({bm, d}, 0.0), dqAccum,
                  ValueRange{batch, h, m, c0}, Value());
  func::ReturnOp::create(b, loc);
  return f;
}

// Main: one key block of one K/V head.
func::FuncOp BackwardBuilder::buildMain() {
  SmallVector<Type> types = {
      view4(d, elt), view4(d, elt), view4(dv, elt), view4(dv, elt), rowsView,
      rowsView,      view4(d, f32), view4(d, elt),  view4(dv, elt), f32};
  SmallVector<ArgRole> roles = {ArgRole::Q,       ArgRole::K,   ArgRole::V,
                                ArgRole::DOut,    ArgRole::Lse, ArgRole::Delta,
                                ArgRole::DQAccum, ArgRole::DK,  ArgRole::DV,
                                ArgRole::Scale};
  maskArguments(types, roles);
  SmallVector<DictionaryAttr> captured;
  captureArguments(types, roles, captured);
  func::FuncOp f = kernelWithCaptures(name, types, roles, captured);
  Value q = f.getArgument(0), k = f.getArgument(1), v = f.getArgument(2),
        dO = f.getArgument(3), lse = f.getArgument(4), delta = f.getArgument(5),
        dqAccum = f.getArgument(6), dk = f.getArgument(7),
        dvOut = f.getArgument(8), scale = f.getArgument(9);
  auto argOf = [&](ArgRole role) { return argumentOf(f, roles, role); };
  Value softcap = argOf(ArgRole::Softcap);
  // (With varlen, sequence b's queries and keys of the packed tensors; the
  // grid covers the longest sequence's keys: a program past its own
  // sequence's visits no query block.)
  Program prog = beginProgram(argOf, q, k,
                              {{&q, false},
                               {&dO, false},
                               {&lse, false},
                               {&delta, false},
                               {&dqAccum, false},
                               {&k, true},
                               {&v, true},
                               {&dk, true},
                               {&dvOut, true}});
  Value n = prog.x, kvHead = prog.y, batch = prog.batch, c0 = prog.c0,
        c1 = prog.c1, entry = prog.entry;
  Value seqQ = prog.seqQ, seqK = prog.seqK, group = prog.group;
  // K_n is the lhs of Sᵀ = K_n Q_mᵀ and the rhs of dS K_n: loaded once
  // (tilegpu-assign-layouts gives a lhs held in registers a copy of its
  // own; wgmma reads both from one buffer).
  Value kBlock = kb.load(k, {bn, d}, {batch, kvHead, n, c0});
  Value vBlock = kb.load(v, {bn, dv}, {batch, kvHead, n, c0});
  Value key0 = arith::MulIOp::create(b, loc, n, kb.index(bn));
  auto [lo, hi] = band(b, loc, c0, seqQ, seqK, argOf);
  Value cBm = kb.index(bm);
  Value queryBlocks = arith::CeilDivUIOp::create(b, loc, seqQ, cBm);
  Value lastKey = arith::AddIOp::create(b, loc, key0, kb.index(bn - 1));
  // x - y, or x where y is top-left's 0.
  auto minus = [&](Value x, Value y) -> Value {
    if (y == c0)
      return x;
    return arith::SubIOp::create(b, loc, x, y);
  };
  auto blockOf = [&](Value x, bool ceil) {
    return blockIndex(x, cBm, c0, ceil);
  };
  // The query blocks that see a key of this block: [first, end), from
  // the one holding query key0 - hi to the one holding lastKey - lo.
  Value first = hi ? blockOf(minus(key0, hi), false) : c0;
  first = arith::MinUIOp::create(b, loc, first, queryBlocks);
  // (A program whose keys all lie past S_k, a shorter sequence's in a
  // varlen batch, visits no query block.)
  Value end = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, key0, seqK),
      queryBlocks, first);
  if (lo) {
    Value lastQuery = arith::SubIOp::create(b, loc, lastKey, lo);
    Value seen =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lastQuery, c0);
    Value upTo = arith::AddIOp::create(b, loc, blockOf(lastQuery, false), c1);
    end = arith::SelectOp::create(
        b, loc, seen, arith::MinUIOp::create(b, loc, upTo, end), first);
    end = arith::MaxUIOp::create(b, loc, end, first);
  }
  // Keys past S_k hide their row of the transposed scores, queries past
  // S_q their column. (Positions over the whole block: the scores' layout
  // on a GPU, whichever axis holds the keys.)
  auto splatIndex = [&](OpBuilder &b, Location loc, Value v) -> Value {
    return tensor::SplatOp::create(
        b, loc, RankedTensorType::get({bn, bm}, i32),
        arith::IndexCastOp::create(b, loc, i32, v).getResult());
  };
  // (Built in each masked step, not once before the loops: a tile of
  // positions held through every loop would take 32 registers a thread.)
  auto keyPositions = [&](OpBuilder &b, Location loc) {
    KernelBuilder kb{b, loc};
    Value keyRows =
        IotaOp::create(b, loc, kb.tile({bn, bm}, i32), key0, int64_t{0});
    Value keysIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         keyRows, splatIndex(b, loc, seqK));
    return std::make_pair(keyRows, keysIn);
  };
  // The query blocks that need no mask (tile-mask-split's split, made by
  // the generator): [fullFrom, fullTo), those whose every query sees
  // every key of this block and lies inside S_q, when the block's keys
  // lie inside S_k; the ones before and after take the masks.
  // hi: every query q0 .. sees lastKey: q0 >= lastKey - hi. lo: the last
  // query q0 + bm - 1 sees key0: (m + 1) bm <= key0 - lo + 1.
  Value fullFrom, fullTo;
  std::tie(fullFrom, fullTo) = unmaskedBlocks(
      first, end, seqQ, cBm, c0, key0, bn, seqK,
      hi ? [&] { return minus(lastKey, hi); } : std::function<Value()>(),
      lo ? [&] {
        return arith::AddIOp::create(
                   b, loc, arith::SubIOp::create(b, loc, key0, lo), c1)
            .getResult();
      }
         : std::function<Value()>());
  // A mask function may hide any key: every step takes the masks.
  if (maskFn.fn)
    fullFrom = fullTo = end;
  Value zeroScores = kb.splat({bn, bm}, 0.0);
  ScoreTiles tiles = scoreTiles({bn, bm}, scale, softcap);
  Value zeroDq = kb.splat({bm, d}, 0.0);
  Value negInf = kb.splat({bm}, -inf), posInf = kb.splat({bm}, inf);

  auto heads = scf::ForOp::create(
      b, loc, c0, group, c1,
      ValueRange{kb.splat({bn, d}, 0.0), kb.splat({bn, dv}, 0.0)},
      [&](OpBuilder &b, Location loc, Value g, ValueRange grads) {
        Value h = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, kvHead, group), g);
        // One step: query block m, with the masks or (a block whose
        // every query sees every key of this block, all in bounds)
        // without.
        auto step = [&](OpBuilder &b, Location loc, Value m, ValueRange acc,
                        bool masked) -> SmallVector<Value, 2> {
          KernelBuilder kb{b, loc};
          Value q0 = arith::MulIOp::create(b, loc, m, kb.index(bm));
          Value at4[] = {batch, h, m, c0};
          // Q_m and dO_m are loaded once each; their transposes (for Sᵀ
          // and dPᵀ) are views of the same blocks (on a GPU, of the same
          // shared buffers).
          Value qBlock = kb.load(q, {bm, d}, at4);
          Value doBlock = kb.load(dO, {bm, dv}, at4);
          // The rows' log-sum-exps and deltas, read at their query
          // positions (gathers: on a GPU straight into the layout of
          // the scores' columns). A row that saw no key has lse =
          // -inf, and one past S_q reads it: +inf gives them P = 0. An
          // unmasked step's rows all lie inside S_q: its gathers check
          // no bounds.
          Value queries =
              IotaOp::create(b, loc, kb.tile({bm}, i32), q0, IntegerAttr());
          auto gather = [&](Value view, double pad) -> Value {
            return GatherOp::create(b, loc, kb.tile({bm}, f32), view,
                                    ValueRange{batch, h, queries},
                                    b.getF64FloatAttr(pad),
                                    masked ? UnitAttr() : b.getUnitAttr());
          };
          Value lseRows = gather(lse, -inf);
          if (masked) {
            Value noKey = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, lseRows, negInf);
            lseRows = arith::SelectOp::create(b, loc, noKey, posInf, lseRows);
          }
          Value deltaRows = gather(delta, 0.0);

          // Sᵀ and Pᵀ = exp(scale Sᵀ - lse), 0 where hidden.
          Value qt = TransposeOp::create(b, loc, kb.tile({d, bm}, elt), qBlock);
          Value st = MmaOp::create(b, loc, kBlock, qt, zeroScores);
          // With a softcap the softmax saw softcap * t, t =
          // tanh(scale / softcap * s).
          Value t;
          Value raw = tiles.scores(b, loc, st, t);
          // (A score function sees them as the forward's did, keys as
          // rows here.)
          Value scores = scoreFunction(b, loc, f, raw, {bn, bm}, entry, h, q0,
                                       key0, /*transposed=*/true);
          Value z = arith::SubFOp::create(b, loc, scores,
                                          kb.broadcast(lseRows, {bn, bm}, 0));
          Value pt = math::ExpOp::create(b, loc, z);
          if (masked) {
            auto [keyRows, keysIn] = keyPositions(b, loc);
            Value queryCols =
                IotaOp::create(b, loc, kb.tile({bn, bm}, i32), q0, int64_t{1});
            Value visible = arith::AndIOp::create(
                b, loc, keysIn,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      queryCols, splatIndex(b, loc, seqQ)));
            if (lo || hi)
              visible =
                  withinBand(b, loc, visible,
                             arith::SubIOp::create(b, loc, keyRows, queryCols),
                             lo, hi, {bn, bm});
            visible = maskFunction(b, loc, f, visible, {bn, bm}, entry, h, q0,
                                   key0, /*transposed=*/true);
            pt = arith::SelectOp::create(b, loc, visible, pt, zeroScores);
          }
          Value ptLow =
              arith::TruncFOp::create(b, loc, kb.tile({bn, bm}, elt), pt);
          Value dvAcc = MmaOp::create(b, loc, ptLow, doBlock, acc[1]);

          // dSᵀ = Pᵀ (dPᵀ - delta), dPᵀ = V_n dOᵀ.
          Value doT =
              TransposeOp::create(b, loc, kb.tile({dv, bm}, elt), doBlock);
          Value dpt = MmaOp::create(b, loc, vBlock, doT, zeroScores);
          // (The chain rule through the score function, df/ds at what it
          // saw, and the cap: d(softcap t)/d(scale s) = 1 - t^2.)
          Value slope = scoreSlope(b, loc, f, raw, {bn, bm}, entry, h, q0, key0,
                                   /*transposed=*/true);
          Value dst = tiles.dScores(
              b, loc, pt, dpt, kb.broadcast(deltaRows, {bn, bm}, 0), t, slope);
          Value dsLow =
              arith::TruncFOp::create(b, loc, kb.tile({bn, bm}, elt), dst);
          Value dkAcc = MmaOp::create(b, loc, dsLow, qBlock, acc[0]);

          // This step's part of dQ (unscaled), added to the
          // accumulator.
          Value ds = TransposeOp::create(b, loc, kb.tile({bm, bn}, elt), dsLow);
          Value dq = MmaOp::create(b, loc, ds, kBlock, zeroDq);
          StoreOp::create(b, loc, dq, dqAccum, at4, /*mask=*/Value(),
                          /*add=*/true);
          return {dkAcc, dvAcc};
        };
        auto loop = [&](Value from, Value to, ValueRange init, bool masked) {
          return scf::ForOp::create(
                     b, loc, from, to, c1, init,
                     [&](OpBuilder &b, Location loc, Value m, ValueRange acc) {
                       scf::YieldOp::create(b, loc,
                                            step(b, loc, m, acc, masked));
                     })
              .getResults();
        };
        ValueRange edge = loop(first, fullFrom, grads, true);
        ValueRange inner = loop(fullFrom, fullTo, edge, false);
        scf::YieldOp::create(b, loc, loop(fullTo, end, inner, true));
      });
  Value dkScaled = arith::MulFOp::create(
      b, loc, heads.getResult(0),
      tensor::SplatOp::create(b, loc, kb.tile({bn, d}, f32), scale));
  StoreOp::create(
      b, loc, arith::TruncFOp::create(b, loc, kb.tile({bn, d}, elt), dkScaled),
      dk, ValueRange{batch, kvHead, n, c0}, Value());
  StoreOp::create(b, loc,
                  arith::TruncFOp::create(b, loc, kb.tile({bn, dv}, elt),
                                          heads.getResult(1)),
                  dvOut, ValueRange{batch, kvHead, n, c0}, Value());
  func::ReturnOp::create(b, loc);
  return f;
}

// Postprocess: dQ = scale * accumulator.
func::FuncOp BackwardBuilder::buildPostprocess() {
  SmallVector<Type> types = {view4(d, f32), view4(d, elt), f32};
  SmallVector<ArgRole> roles = {ArgRole::DQAccum, ArgRole::DQ, ArgRole::Scale};
  if (cfg.varlen)
    types.push_back(offsetsView), roles.push_back(ArgRole::CuSeqlensQ);
  func::FuncOp f = kb.kernel(
      sdpaBackwardSymbol(name, SdpaBackwardPhase::Postprocess), types, roles);
  Value dqAccum = f.getArgument(0), dq = f.getArgument(1),
        scale = f.getArgument(2);
  Value m = BlockIdOp::create(b, loc, Dim::X);
  Value h = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  sliceToSequence([&](ArgRole role) { return argumentOf(f, roles, role); },
                  batch, cfg.varlen ? kb.index(0) : Value(),
                  {{&dqAccum, false}, {&dq, false}});
  Value at[] = {batch, h, m, kb.index(0)};
  Value scaled = arith::MulFOp::create(
      b, loc, kb.load(dqAccum, {bm, d}, at),
      tensor::SplatOp::create(b, loc, kb.tile({bm, d}, f32), scale));
  StoreOp::create(
      b, loc, arith::TruncFOp::create(b, loc, kb.tile({bm, d}, elt), scaled),
      dq, ValueRange(at), Value());
  func::ReturnOp::create(b, loc);
  return f;
}

// Dq (the deterministic mode's dQ): one query block of one query head,
// over the key blocks it sees, dQ in registers and written once (no
// atomics, so the same every run): S = Q_m K_nᵀ, P = exp(scale S -
// lse_m), dP = dO_m V_nᵀ, dS = P (dP - delta_m), dQ_m += dS K_n; then
// dq = scale dQ_m. It recomputes what the main kernel computed for its
// part of dQ, which the deterministic mode does not read.
func::FuncOp BackwardBuilder::buildDq() {
  SmallVector<Type> types = {
      view4(d, elt), view4(d, elt), view4(dv, elt), view4(dv, elt),
      rowsView,      rowsView,      view4(d, elt),  f32};
  SmallVector<ArgRole> roles = {ArgRole::Q,    ArgRole::K,    ArgRole::V,
                                ArgRole::DOut, ArgRole::Lse,  ArgRole::Delta,
                                ArgRole::DQ,   ArgRole::Scale};
  maskArguments(types, roles);
  SmallVector<DictionaryAttr> captured;
  captureArguments(types, roles, captured);
  func::FuncOp f = kernelWithCaptures(
      sdpaBackwardSymbol(name, SdpaBackwardPhase::Dq), types, roles, captured);
  auto argOf = [&](ArgRole role) { return argumentOf(f, roles, role); };
  Value q = argOf(ArgRole::Q), k = argOf(ArgRole::K), v = argOf(ArgRole::V),
        dO = argOf(ArgRole::DOut), lse = argOf(ArgRole::Lse),
        delta = argOf(ArgRole::Delta), dq = argOf(ArgRole::DQ),
        scale = argOf(ArgRole::Scale), softcap = argOf(ArgRole::Softcap);
  Program prog = beginProgram(argOf, q, k,
                              {{&q, false},
                               {&dO, false},
                               {&lse, false},
                               {&delta, false},
                               {&dq, false},
                               {&k, true},
                               {&v, true}});
  Value m = prog.x, h = prog.y, batch = prog.batch, c0 = prog.c0, c1 = prog.c1,
        entry = prog.entry;
  Value seqQ = prog.seqQ, seqK = prog.seqK, group = prog.group;
  Value kvHead = arith::DivUIOp::create(b, loc, h, group);
  auto [lo, hi] = band(b, loc, c0, seqQ, seqK, argOf);
  Value at4[] = {batch, h, m, c0};
  Value qBlock = kb.load(q, {bm, d}, at4);
  Value doBlock = kb.load(dO, {bm, dv}, at4);
  Value q0 = arith::MulIOp::create(b, loc, m, kb.index(bm));
  // The block's last query inside S_q (a partial block's rows past it see
  // nothing, and need no key blocks of their own).
  Value lastQuery = arith::SubIOp::create(
      b, loc,
      arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, q0, kb.index(bm)), seqQ),
      c1);
  Value queries = IotaOp::create(b, loc, kb.tile({bm}, i32), q0, IntegerAttr());
  auto gather = [&](Value view, double pad) -> Value {
    return GatherOp::create(b, loc, kb.tile({bm}, f32), view,
                            ValueRange{batch, h, queries},
                            b.getF64FloatAttr(pad));
  };
  // A row that saw no key has lse = -inf, and one past S_q reads it: +inf
  // gives them P = 0 (the masked steps' rows; an unmasked step's rows all
  // see every key of it).
  Value lseRows = gather(lse, -inf);
  Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                      lseRows, kb.splat({bm}, -inf));
  Value lseMasked =
      arith::SelectOp::create(b, loc, noKey, kb.splat({bm}, inf), lseRows);
  Value deltaRows = gather(delta, 0.0);

  Value cBn = kb.index(bn);
  Value keyBlocks = arith::CeilDivUIOp::create(b, loc, seqK, cBn);
  auto blockOf = [&](Value x, bool ceil) {
    return blockIndex(x, cBn, c0, ceil);
  };
  // The key blocks this query block sees: [first, end), from the one
  // holding key q0 + lo to the one holding lastQuery + hi; none for a
  // block past S_q (a shorter sequence's in a varlen batch).
  Value first = lo ? blockOf(arith::AddIOp::create(b, loc, q0, lo), false) : c0;
  first = arith::MinUIOp::create(b, loc, first, keyBlocks);
  Value end = keyBlocks;
  if (hi) {
    Value lastSeen = arith::AddIOp::create(b, loc, lastQuery, hi);
    Value seen =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lastSeen, c0);
    Value upTo = arith::AddIOp::create(b, loc, blockOf(lastSeen, false), c1);
    end = arith::SelectOp::create(
        b, loc, seen, arith::MinUIOp::create(b, loc, upTo, end), first);
  }
  end = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, q0, seqQ),
      arith::MaxUIOp::create(b, loc, end, first), first);
  // The key blocks that need no mask: every query of the block (all
  // inside S_q) sees every key (all inside S_k). lo: n bn >= lastQuery +
  // lo; hi: (n + 1) bn - 1 <= q0 + hi.
  Value fullFrom, fullTo;
  std::tie(fullFrom, fullTo) = unmaskedBlocks(
      first, end, seqK, cBn, c0, q0, bm, seqQ,
      lo ? [&] {
        return arith::AddIOp::create(b, loc, lastQuery, lo).getResult();
      }
         : std::function<Value()>(),
      hi ? [&] {
        return arith::AddIOp::create(b, loc, q0,
                                     arith::AddIOp::create(b, loc, hi, c1))
            .getResult();
      }
         : std::function<Value()>());
  // A mask function may hide any key: every step takes the masks.
  if (maskFn.fn)
    fullFrom = fullTo = end;

  Value zeroScores = kb.splat({bm, bn}, 0.0);
  ScoreTiles tiles = scoreTiles({bm, bn}, scale, softcap);
  auto step = [&](OpBuilder &b, Location loc, Value n, Value acc,
                  bool masked) -> Value {
    KernelBuilder kb{b, loc};
    Value at[] = {batch, kvHead, n, c0};
    // K_n is loaded once; Kᵀ (for S) is a view of the same block.
    Value kBlock = kb.load(k, {bn, d}, at);
    Value vt = kb.load(v, {dv, bn}, at, 0.0, /*transpose=*/true);
    Value kt = TransposeOp::create(b, loc, kb.tile({d, bn}, elt), kBlock);
    Value s = MmaOp::create(b, loc, qBlock, kt, zeroScores);
    Value t;
    Value k0 = arith::MulIOp::create(b, loc, n, kb.index(bn));
    Value raw = tiles.scores(b, loc, s, t);
    Value scores = scoreFunction(b, loc, f, raw, {bm, bn}, entry, h, q0, k0,
                                 /*transposed=*/false);
    Value p = math::ExpOp::create(
        b, loc,
        arith::SubFOp::create(
            b, loc, scores,
            kb.broadcast(masked ? lseMasked : lseRows, {bm, bn}, 1)));
    if (masked) {
      // (The positions are built here, in the masked steps only: held
      // through the loops they would take registers.)
      Value queryRows =
          IotaOp::create(b, loc, kb.tile({bm, bn}, i32), q0, int64_t{0});
      Value queriesIn = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, queryRows,
          tensor::SplatOp::create(
              b, loc, kb.tile({bm, bn}, i32),
              arith::IndexCastOp::create(b, loc, i32, seqQ).getResult()));
      Value keyCols =
          IotaOp::create(b, loc, kb.tile({bm, bn}, i32), k0, int64_t{1});
      Value visible = arith::AndIOp::create(
          b, loc, queriesIn,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, keyCols,
              tensor::SplatOp::create(
                  b, loc, kb.tile({bm, bn}, i32),
                  arith::IndexCastOp::create(b, loc, i32, seqK).getResult())));
      if (lo || hi)
        visible = withinBand(b, loc, visible,
                             arith::SubIOp::create(b, loc, keyCols, queryRows),
                             lo, hi, {bm, bn});
      visible = maskFunction(b, loc, f, visible, {bm, bn}, entry, h, q0, k0,
                             /*transposed=*/false);
      p = arith::SelectOp::create(b, loc, visible, p, zeroScores);
    }
    Value dp = MmaOp::create(b, loc, doBlock, vt, zeroScores);
    Value slope = scoreSlope(b, loc, f, raw, {bm, bn}, entry, h, q0, k0,
                             /*transposed=*/false);
    Value ds = tiles.dScores(b, loc, p, dp,
                             kb.broadcast(deltaRows, {bm, bn}, 1), t, slope);
    Value dsLow = arith::TruncFOp::create(b, loc, kb.tile({bm, bn}, elt), ds);
    return MmaOp::create(b, loc, dsLow, kBlock, acc);
  };
  auto loop = [&](Value from, Value to, Value init, bool masked) -> Value {
    return scf::ForOp::create(
               b, loc, from, to, c1, ValueRange{init},
               [&](OpBuilder &b, Location loc, Value n, ValueRange acc) {
                 scf::YieldOp::create(b, loc, step(b, loc, n, acc[0], masked));
               })
        .getResult(0);
  };
  Value acc = loop(first, fullFrom, kb.splat({bm, d}, 0.0), true);
  acc = loop(fullFrom, fullTo, acc, false);
  acc = loop(fullTo, end, acc, true);
  Value scaled = arith::MulFOp::create(
      b, loc, acc,
      tensor::SplatOp::create(b, loc, kb.tile({bm, d}, f32), scale));
  StoreOp::create(
      b, loc, arith::TruncFOp::create(b, loc, kb.tile({bm, d}, elt), scaled),
      dq, ValueRange(at4), Value());
  func::ReturnOp::create(b, loc);
  return f;
}

/// Builds the kernels of `phases` (the others are skipped).
static FailureOr<SdpaBackwardKernels>
buildPhases(OpBuilder &b, Location loc, const SdpaBackwardKernelConfig &cfg,
            ArrayRef<SdpaBackwardPhase> phases) {
  const int64_t d = cfg.headDim, dv = cfg.headDimV ? cfg.headDimV : d;
  const int64_t bm = cfg.blockM, bn = cfg.blockN;
  Type elt = cfg.elementType;
  if (!elt || (!elt.isF16() && !elt.isBF16()))
    return emitError(loc) << "the backward pass's element type is f16 or bf16";
  if (d < 16 || d > 256 || d % 16 || dv < 16 || dv > 256 || dv % 16)
    return emitError(loc) << "head dims must be multiples of 16 in [16, 256], "
                             "got head_dim "
                          << d << ", head_dim_v " << dv;
  if (bm < 16 || bm > 256 || bm % 16 || bn < 16 || bn > 256 || bn % 16)
    return emitError(loc) << "block_m and block_n must be multiples of 16 in "
                             "[16, 256], got "
                          << bm << " and " << bn;
  if (cfg.name.empty())
    return emitError(loc) << "the backward kernels need a name";

  OpBuilder::InsertionGuard guard(b);
  Block *module = b.getInsertionBlock();
  BackwardBuilder builder(b, loc, cfg);
  if (!cfg.functions.empty()) {
    auto moduleOp = dyn_cast_or_null<ModuleOp>(module->getParentOp());
    if (!moduleOp)
      return emitError(loc) << "score and mask functions are looked up in the "
                               "module the kernels are built in: build them "
                               "at the end of a module";
    if (failed(builder.findFunctions(moduleOp)))
      return failure();
  }
  SdpaBackwardKernels kernels;
  auto build = [&](SdpaBackwardPhase phase, func::FuncOp &kernel,
                   func::FuncOp (BackwardBuilder::*method)()) {
    if (!llvm::is_contained(phases, phase))
      return;
    kernel = (builder.*method)();
    b.setInsertionPointToEnd(module);
  };
  build(SdpaBackwardPhase::Preprocess, kernels.preprocess,
        &BackwardBuilder::buildPreprocess);
  build(SdpaBackwardPhase::Main, kernels.main, &BackwardBuilder::buildMain);
  build(SdpaBackwardPhase::Postprocess, kernels.postprocess,
        &BackwardBuilder::buildPostprocess);
  build(SdpaBackwardPhase::Dq, kernels.dq, &BackwardBuilder::buildDq);
  return kernels;
}

FailureOr<SdpaBackwardKernels>
tiled_attn::buildSdpaBackwardKernels(OpBuilder &b, Location loc,
                                     const SdpaBackwardKernelConfig &config) {
  return buildPhases(b, loc, config,
                     {SdpaBackwardPhase::Preprocess, SdpaBackwardPhase::Main,
                      SdpaBackwardPhase::Postprocess, SdpaBackwardPhase::Dq});
}

FailureOr<func::FuncOp>
tiled_attn::buildSdpaBackwardKernel(OpBuilder &b, Location loc,
                                    const SdpaBackwardKernelConfig &config,
                                    SdpaBackwardPhase phase) {
  FailureOr<SdpaBackwardKernels> built = buildPhases(b, loc, config, {phase});
  if (failed(built))
    return failure();
  switch (phase) {
  case SdpaBackwardPhase::Preprocess:
    return built->preprocess;
  case SdpaBackwardPhase::Main:
    return built->main;
  case SdpaBackwardPhase::Postprocess:
    return built->postprocess;
  case SdpaBackwardPhase::Dq:
    return built->dq;
  }
  return failure();
}

StringRef tiled_attn::sdpaBackwardPhaseName(SdpaBackwardPhase phase) {
  switch (phase) {
  case SdpaBackwardPhase::Preprocess:
    return "preprocess";
  case SdpaBackwardPhase::Main:
    return "main";
  case SdpaBackwardPhase::Postprocess:
    return "postprocess";
  case SdpaBackwardPhase::Dq:
    return "dq";
  }
  return "";
}

std::string tiled_attn::sdpaBackwardSymbol(StringRef name,
                                           SdpaBackwardPhase phase) {
  if (phase == SdpaBackwardPhase::Main)
    return name.str();
  return (name + "_" + sdpaBackwardPhaseName(phase)).str();
}

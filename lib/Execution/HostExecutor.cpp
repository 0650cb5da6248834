//===- HostExecutor.cpp - Run tile-level IR on the host -------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Float values are held as arrays of doubles. Every op rounds its results to
// its result element type, so f16, bf16 and f32 arithmetic is reproduced
// exactly (an f32 sum or product computed in double and rounded once is the
// IEEE f32 result). tile.mma and tile.reduce sum in double and round once, as
// a matrix unit's wide accumulation does.
//
// Integer and index values are held exactly, as int64_t sign-extended from
// their width (an i1 true is -1, an i32 wraps at 32 bits), so that loop
// bounds, offsets and masks near the limits of their types compute what the
// GPU computes; `index` is 64 bits wide.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Execution/HostExecutor.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;
using namespace tiled_attn::tile;

//===----------------------------------------------------------------------===//
// Rounding
//===----------------------------------------------------------------------===//

/// Rounds to a binary format with `mantissaBits` stored fraction bits, least
/// normal exponent `minExponent` and largest finite value `maxFinite`.
static double roundToFormat(double value, int mantissaBits, int minExponent,
                            double maxFinite) {
  if (std::isnan(value) || std::isinf(value) || value == 0.0)
    return value;
  int exponent;
  std::frexp(value, &exponent);
  int leading = std::max(exponent - 1, minExponent);
  double quantum = std::ldexp(1.0, leading - mantissaBits);
  double rounded = std::nearbyint(value / quantum) * quantum;
  if (std::fabs(rounded) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

double tiled_attn::exec::roundToType(double value, Type type) {
  if (type.isF32())
    return static_cast<double>(static_cast<float>(value));
  if (type.isF16())
    return roundToFormat(value, 10, -14, 65504.0);
  if (type.isBF16())
    return roundToFormat(value, 7, -126, 3.3895313892515355e38);
  if (type.isInteger(1))
    return value != 0.0 ? 1.0 : 0.0;
  if (type.isInteger(32))
    return static_cast<double>(
        static_cast<int32_t>(static_cast<int64_t>(value)));
  if (type.isInteger(8))
    return static_cast<double>(
        static_cast<int8_t>(static_cast<int64_t>(value)));
  return value;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor HostTensor::create(Type elementType, std::vector<int64_t> sizes,
                              std::vector<int64_t> order) {
  HostTensor t;
  t.elementType = elementType;
  t.sizes = sizes;
  if (order.empty()) {
    order.resize(sizes.size());
    std::iota(order.begin(), order.end(), 0);
  }
  t.strides.assign(sizes.size(), 0);
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    t.strides[*it] = stride;
    stride *= sizes[*it];
  }
  t.data.assign(stride, 0.0);
  return t;
}

double &HostTensor::at(ArrayRef<int64_t> index) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d)
    offset += index[d] * strides[d];
  return data[offset];
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

namespace {

/// A view at run time: a tensor, the element its view starts at, and its
/// sizes (a slice's differ from its tensor's).
struct ViewRef {
  HostTensor *tensor = nullptr;
  int64_t base = 0;
  SmallVector<int64_t, 4> sizes;
};

/// A run-time value: a scalar (empty shape, one element), a tile, or a view.
/// A float's elements are in `data`, an integer's or index's in `ints`.
struct RtValue {
  SmallVector<int64_t, 2> shape;
  std::vector<double> data;
  std::vector<int64_t> ints;
  bool isInt = false;
  std::optional<ViewRef> view;

  static RtValue scalar(double v) {
    RtValue r;
    r.data = {v};
    return r;
  }
  static RtValue integer(int64_t v) {
    RtValue r;
    r.ints = {v};
    r.isInt = true;
    return r;
  }
  double scalarValue() const { return data.front(); }
  int64_t intValue() const { return ints.front(); }
  size_t size() const { return isInt ? ints.size() : data.size(); }
};

/// True for the types whose values live in RtValue::ints.
bool isIntegerLike(Type type) {
  return isa<IntegerType, IndexType>(getElementTypeOrSelf(type));
}

/// The width of an integer-like type (index is 64 bits).
unsigned intWidth(Type type) {
  Type element = getElementTypeOrSelf(type);
  return isa<IndexType>(element) ? 64 : element.getIntOrFloatBitWidth();
}

/// `v` wrapped to `width` bits and sign-extended: the canonical form of an
/// integer of that width.
int64_t wrapToWidth(uint64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(v);
  return llvm::SignExtend64(v, width);
}

/// The unsigned reading of a canonical integer of `width` bits.
uint64_t asUnsigned(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
}

/// One element of an operand or a result: its float or its integer.
struct Scalar {
  double f = 0.0;
  int64_t i = 0;
};
Scalar F(double v) { return {v, 0}; }
Scalar I(int64_t v) { return {0.0, v}; }

int64_t numElements(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

SmallVector<int64_t, 2> shapeOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return SmallVector<int64_t, 2>(shaped.getShape());
  return {};
}

bool isNegInf(double v) { return std::isinf(v) && v < 0; }

double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return std::max(a, b);
}

double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return std::min(a, b);
}

class Interpreter {
public:
  /// With `padReads`, a tile.read outside its view reads 0 instead of
  /// failing: how a score or mask function of tile.apply reads (it becomes a
  /// tile.gather, which pads).
  explicit Interpreter(std::array<int64_t, 3> blockId, bool padReads = false)
      : blockId(blockId), padReads(padReads) {}

  /// Runs `block` with `args` bound to its arguments and returns the operands
  /// of its terminator in `results`.
  LogicalResult runBlock(Block &block, ArrayRef<RtValue> args,
                         SmallVectorImpl<RtValue> &results);

private:
  LogicalResult execute(Operation *op);
  LogicalResult executeFloatMath(Operation *op);
  LogicalResult executeIntegerMath(Operation *op);
  const RtValue &get(Value v) { return env.find(v)->second; }
  int64_t getInt(Value v) { return get(v).intValue(); }
  void set(Value v, RtValue r) { env[v] = std::move(r); }

  /// Applies `fn` elementwise over the operands, broadcasting scalars, and
  /// rounds (a float) or wraps (an integer) to the result's element type.
  /// `fn` takes the operands' elements as Scalars and returns the result's.
  template <typename Fn> LogicalResult elementwise(Operation *op, Fn fn);

  LogicalResult execConstant(arith::ConstantOp op);
  LogicalResult execFor(scf::ForOp op);
  LogicalResult execIf(scf::IfOp op);
  LogicalResult execLoad(LoadOp op);
  LogicalResult execStore(StoreOp op);
  LogicalResult execTranspose(TransposeOp op);
  LogicalResult execMma(MmaOp op);
  LogicalResult execReduce(ReduceOp op);
  LogicalResult execBroadcast(BroadcastOp op);
  LogicalResult execOnlineSoftmax(OnlineSoftmaxOp op);
  LogicalResult execLogSumExp(LogSumExpOp op);

  std::array<int64_t, 3> blockId;
  bool padReads;
  llvm::DenseMap<Value, RtValue> env;
  /// The loop iterations this program instance has run or is about to.
  uint64_t iterations = 0;
};

} // namespace

LogicalResult Interpreter::runBlock(Block &block, ArrayRef<RtValue> args,
                                    SmallVectorImpl<RtValue> &results) {
  for (auto [arg, value] : llvm::zip_equal(block.getArguments(), args))
    set(arg, value);
  for (Operation &op : block.without_terminator())
    if (failed(execute(&op)))
      return failure();
  results.clear();
  for (Value operand : block.getTerminator()->getOperands())
    results.push_back(get(operand));
  return success();
}

template <typename Fn>
LogicalResult Interpreter::elementwise(Operation *op, Fn fn) {
  Type resultType = op->getResult(0).getType();
  Type elementType = getElementTypeOrSelf(resultType);
  RtValue out;
  out.shape = shapeOf(resultType);
  out.isInt = isIntegerLike(resultType);
  int64_t n = numElements(out.shape);
  SmallVector<const RtValue *, 3> operands;
  for (Value operand : op->getOperands())
    operands.push_back(&get(operand));
  if (out.isInt)
    out.ints.resize(n);
  else
    out.data.resize(n);
  unsigned width = out.isInt ? intWidth(resultType) : 0;
  std::array<Scalar, 3> x{};
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      const RtValue &v = *operands[k];
      size_t at = v.size() == 1 ? 0 : i;
      x[k] = v.isInt ? I(v.ints[at]) : F(v.data[at]);
    }
    Scalar r = fn(x);
    if (out.isInt)
      out.ints[i] = wrapToWidth(static_cast<uint64_t>(r.i), width);
    else
      out.data[i] = roundToType(r.f, elementType);
  }
  set(op->getResult(0), std::move(out));
  return success();
}

static double toDouble(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

LogicalResult Interpreter::execConstant(arith::ConstantOp op) {
  Attribute attr = op.getValue();
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    set(op, RtValue::scalar(toDouble(f.getValue())));
    return success();
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    set(op, RtValue::integer(i.getValue().getSExtValue()));
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return op.emitError() << "host execution does not support this constant";
  RtValue out;
  out.shape = shapeOf(op.getType());
  if (isa<FloatType>(dense.getElementType())) {
    out.data.reserve(numElements(out.shape));
    for (APFloat v : dense.getValues<APFloat>())
      out.data.push_back(toDouble(v));
  } else {
    out.isInt = true;
    out.ints.reserve(numElements(out.shape));
    for (APInt v : dense.getValues<APInt>())
      out.ints.push_back(v.getSExtValue());
  }
  set(op, std::move(out));
  return success();
}

LogicalResult Interpreter::execFor(scf::ForOp op) {
  int64_t lb = getInt(op.getLowerBound()), ub = getInt(op.getUpperBound()),
          step = getInt(op.getStep());
  if (step <= 0)
    return op.emitError() << "host execution needs a positive step, got "
                          << step;
  SmallVector<RtValue> iter;
  for (Value init : op.getInitArgs())
    iter.push_back(get(init));
  SmallVector<RtValue> args, yielded;
  // The trip count, computed without overflow: lb + i * step < ub for every
  // iteration i, so the induction variable itself never overflows.
  uint64_t trips =
      ub <= lb ? 0
               : (static_cast<uint64_t>(ub) - static_cast<uint64_t>(lb) - 1) /
                         static_cast<uint64_t>(step) +
                     1;
  if (trips > kMaxHostIterations - iterations)
    return op.emitError() << "host execution: this loop would run " << trips
                          << " iterations (from " << lb << " to " << ub
                          << " step " << step << "), past the "
                          << kMaxHostIterations
                          << " (2^27) a program instance may run on the host";
  iterations += trips;
  for (uint64_t i = 0; i < trips; ++i) {
    int64_t iv = static_cast<int64_t>(static_cast<uint64_t>(lb) +
                                      i * static_cast<uint64_t>(step));
    args.clear();
    args.push_back(RtValue::integer(iv));
    args.append(iter.begin(), iter.end());
    if (failed(runBlock(*op.getBody(), args, yielded)))
      return failure();
    iter = std::move(yielded);
    yielded = {};
  }
  for (auto [result, value] : llvm::zip_equal(op.getResults(), iter))
    set(result, std::move(value));
  return success();
}

LogicalResult Interpreter::execIf(scf::IfOp op) {
  bool cond = get(op.getCondition()).intValue() != 0;
  Region &region = cond ? op.getThenRegion() : op.getElseRegion();
  if (region.empty())
    return success();
  SmallVector<RtValue> results;
  if (failed(runBlock(region.front(), {}, results)))
    return failure();
  for (auto [result, value] : llvm::zip_equal(op.getResults(), results))
    set(result, std::move(value));
  return success();
}

/// Maps tile element `tileIndex` of an access at `indices` to the element of
/// the view it touches; returns false when that element is out of bounds.
static bool viewOffset(const ViewRef &t, ArrayRef<int64_t> indices,
                       ArrayRef<int64_t> blockShape,
                       ArrayRef<int64_t> blockIndex, int64_t &offset) {
  size_t rank = t.sizes.size(), lead = rank - blockShape.size();
  offset = t.base;
  for (size_t d = 0; d < rank; ++d) {
    int64_t e = d < lead
                    ? indices[d]
                    : indices[d] * blockShape[d - lead] + blockIndex[d - lead];
    if (e < 0 || e >= t.sizes[d])
      return false;
    offset += e * t.tensor->strides[d];
  }
  return true;
}

/// Iterates over the row-major multi-indices of `shape`.
template <typename Fn>
static void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  SmallVector<int64_t, 4> index(shape.size(), 0);
  int64_t n = numElements(shape);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(linear, ArrayRef<int64_t>(index));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

LogicalResult Interpreter::execLoad(LoadOp op) {
  const ViewRef &t = *get(op.getView()).view;
  SmallVector<int64_t, 4> indices;
  for (Value idx : op.getIndices())
    indices.push_back(getInt(idx));
  SmallVector<int64_t> blockShape = op.getBlockShape();
  // With gather, the rows come in groups, each a block of its own at its
  // own first index.
  SmallVector<int64_t> gather;
  for (Value idx : op.getGather())
    gather.push_back(getInt(idx));
  int64_t groupRows = gather.empty() ? 0 : blockShape[0] / gather.size();
  SmallVector<int64_t> groupShape(blockShape);
  if (groupRows)
    groupShape[0] = groupRows;
  double pad =
      roundToType(op.getPad().convertToDouble(), t.tensor->elementType);
  RtValue out;
  out.shape = shapeOf(op.getType());
  out.isInt = isIntegerLike(op.getType());
  std::vector<double> elements(numElements(out.shape));
  bool transpose = op.getTranspose();
  bool outside = false;
  forEachIndex(out.shape, [&](int64_t linear, ArrayRef<int64_t> tileIndex) {
    SmallVector<int64_t, 2> blockIndex(tileIndex);
    if (transpose)
      std::reverse(blockIndex.begin(), blockIndex.end());
    int64_t offset;
    bool inside;
    if (groupRows) {
      SmallVector<int64_t, 4> at(indices);
      at[0] = gather[blockIndex[0] / groupRows];
      blockIndex[0] %= groupRows;
      inside = viewOffset(t, at, groupShape, blockIndex, offset);
    } else {
      inside = viewOffset(t, indices, blockShape, blockIndex, offset);
    }
    outside |= !inside;
    elements[linear] = inside ? t.tensor->data[offset] : pad;
  });
  if (out.isInt)
    out.ints.assign(elements.begin(), elements.end());
  else
    out.data = std::move(elements);
  if (outside && op.getInBounds()) {
    std::string where;
    llvm::raw_string_ostream os(where);
    llvm::interleaveComma(indices, os);
    return op.emitError() << "load marked in_bounds reads outside the view, "
                             "at indices ["
                          << where << "]";
  }
  set(op, std::move(out));
  return success();
}

LogicalResult Interpreter::execStore(StoreOp op) {
  const ViewRef &t = *get(op.getView()).view;
  SmallVector<int64_t, 4> indices;
  for (Value idx : op.getIndices())
    indices.push_back(getInt(idx));
  const RtValue &value = get(op.getValue());
  const RtValue *mask = op.getMask() ? &get(op.getMask()) : nullptr;
  const bool add = op.getAdd();
  Type elementType = getElementTypeOrSelf(op.getValue().getType());
  forEachIndex(value.shape, [&](int64_t linear, ArrayRef<int64_t> tileIndex) {
    int64_t offset;
    if (mask && mask->ints[linear] == 0)
      return;
    if (!viewOffset(t, indices, value.shape, tileIndex, offset))
      return;
    double element =
        value.isInt ? double(value.ints[linear]) : value.data[linear];
    // An adding store is an f32 atomic add: each addition rounded to f32.
    t.tensor->data[offset] =
        add ? roundToType(t.tensor->data[offset] + element, elementType)
            : element;
  });
  return success();
}

LogicalResult Interpreter::execTranspose(TransposeOp op) {
  const RtValue &in = get(op.getInput());
  RtValue out = in;
  int64_t rows = in.shape[0], cols = in.shape[1];
  out.shape = {cols, rows};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      if (in.isInt)
        out.ints[j * rows + i] = in.ints[i * cols + j];
      else
        out.data[j * rows + i] = in.data[i * cols + j];
    }
  set(op, std::move(out));
  return success();
}

LogicalResult Interpreter::execMma(MmaOp op) {
  const RtValue &a = get(op.getLhs()), &b = get(op.getRhs());
  RtValue out = get(op.getAcc());
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<double> row(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t kk = 0; kk < k; ++kk) {
      double aik = a.data[i * k + kk];
      const double *bRow = &b.data[kk * n];
      for (int64_t j = 0; j < n; ++j)
        row[j] += aik * bRow[j];
    }
    for (int64_t j = 0; j < n; ++j)
      out.data[i * n + j] = static_cast<float>(out.data[i * n + j] + row[j]);
  }
  set(op, std::move(out));
  return success();
}

/// Splits `shape` around `axis` into (outer, length, inner) extents.
static std::array<int64_t, 3> splitAround(ArrayRef<int64_t> shape,
                                          int64_t axis) {
  return {numElements(shape.take_front(axis)), shape[axis],
          numElements(shape.drop_front(axis + 1))};
}

LogicalResult Interpreter::execReduce(ReduceOp op) {
  const RtValue &in = get(op.getInput());
  auto [outer, len, inner] = splitAround(in.shape, op.getAxis());
  Type elementType = getElementTypeOrSelf(op.getType());
  RtValue out;
  out.shape = shapeOf(op.getType());
  out.data.resize(outer * inner);
  ReduceKind kind = op.getKind();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = kind == ReduceKind::Max   ? -inf
                   : kind == ReduceKind::Min ? inf
                                             : 0.0;
      for (int64_t l = 0; l < len; ++l) {
        double x = in.data[(o * len + l) * inner + i];
        acc = kind == ReduceKind::Max   ? maximumF(acc, x)
              : kind == ReduceKind::Min ? minimumF(acc, x)
                                        : acc + x;
      }
      out.data[o * inner + i] = roundToType(acc, elementType);
    }
  set(op, std::move(out));
  return success();
}

LogicalResult Interpreter::execBroadcast(BroadcastOp op) {
  const RtValue &in = get(op.getInput());
  RtValue out;
  out.shape = shapeOf(op.getType());
  out.isInt = in.isInt;
  auto [outer, len, inner] = splitAround(out.shape, op.getAxis());
  auto spread = [&](auto &to, const auto &from) {
    to.resize(outer * len * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t l = 0; l < len; ++l)
        for (int64_t i = 0; i < inner; ++i)
          to[(o * len + l) * inner + i] = from[o * inner + i];
  };
  if (in.isInt)
    spread(out.ints, in.ints);
  else
    spread(out.data, in.data);
  set(op, std::move(out));
  return success();
}

LogicalResult Interpreter::execOnlineSoftmax(OnlineSoftmaxOp op) {
  // The same sequence of f32 roundings as tile-decompose-online-softmax
  // produces, so that the decomposition is exactly equivalent.
  auto r = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const RtValue &s = get(op.getScores());
  const RtValue &m0 = get(op.getRunningMax()), &l0 = get(op.getRunningSum());
  double scale = get(op.getScale()).scalarValue();
  bool exp2 = op.getExp2();
  // With exp2, exponents are taken in log2 units: c = scale * log2(e).
  double c = exp2 ? r(scale * r(M_LOG2E)) : scale;
  std::optional<double> threshold;
  if (auto t = op.getRescaleThresholdAttr())
    threshold = t.getValueAsDouble();
  int64_t rows = s.shape[0], cols = s.shape[1];
  RtValue m1 = m0, l1 = l0, alpha = m0, p = s;
  for (int64_t i = 0; i < rows; ++i) {
    double *x = &p.data[i * cols];
    double blockMax = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < cols; ++j) {
      if (!exp2)
        x[j] = r(x[j] * scale);
      blockMax = maximumF(blockMax, x[j]);
    }
    double newMax = maximumF(m0.data[i], blockMax);
    if (threshold) {
      // Move the max only when P would otherwise exceed 2^threshold.
      double grow = r(newMax - m0.data[i]);
      bool move =
          exp2 ? r(grow * c) > r(*threshold) : grow > r(*threshold * M_LN2);
      if (!move)
        newMax = m0.data[i];
    }
    double ref = isNegInf(newMax) ? 0.0 : newMax;
    double sum = 0.0;
    if (exp2) {
      double refc = r(ref * c);
      for (int64_t j = 0; j < cols; ++j) {
        x[j] = r(std::exp2(r(std::fma(x[j], c, -refc))));
        sum += x[j];
      }
      // (m0 - ref) * c is exactly 0 when the max did not move: alpha = 1.
      alpha.data[i] = r(std::exp2(r(r(m0.data[i] - ref) * c)));
    } else {
      for (int64_t j = 0; j < cols; ++j) {
        x[j] = r(std::exp(r(x[j] - ref)));
        sum += x[j];
      }
      alpha.data[i] = r(std::exp(r(m0.data[i] - ref)));
    }
    m1.data[i] = newMax;
    l1.data[i] = r(r(l0.data[i] * alpha.data[i]) + r(sum));
  }
  set(op.getNewMax(), std::move(m1));
  set(op.getNewSum(), std::move(l1));
  set(op.getProbs(), std::move(p));
  set(op.getAlpha(), std::move(alpha));
  return success();
}

LogicalResult Interpreter::execLogSumExp(LogSumExpOp op) {
  // The roundings of tile-decompose-online-softmax's max (* scale) + log(sum).
  auto r = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const RtValue &m = get(op.getMax()), &l = get(op.getSum());
  double scale = get(op.getScale()).scalarValue();
  RtValue out = m;
  for (size_t i = 0; i < out.data.size(); ++i) {
    double max = op.getExp2() ? r(m.data[i] * scale) : m.data[i];
    out.data[i] = r(max + r(std::log(l.data[i])));
  }
  set(op.getResult(), std::move(out));
  return success();
}

static bool compareF(arith::CmpFPredicate pred, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (pred) {
  case P::AlwaysFalse:
    return false;
  case P::AlwaysTrue:
    return true;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  }
  return false;
}

static bool compareI(arith::CmpIPredicate pred, int64_t a, int64_t b,
                     unsigned width) {
  uint64_t ua = asUnsigned(a, width), ub = asUnsigned(b, width);
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

/// The diagonal (col0 + j) - (row0 + i) of a mask element, exactly.
static __int128 diagonal(int64_t row0, int64_t i, int64_t col0, int64_t j) {
  return (static_cast<__int128>(col0) + j) - (static_cast<__int128>(row0) + i);
}

LogicalResult Interpreter::execute(Operation *op) {
  using A = std::array<Scalar, 3>;
  // Integer divisions check their divisor first, and the signed ones the one
  // quotient that overflows (the least value over -1), which arith leaves
  // undefined.
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp,
          arith::CeilDivUIOp, arith::FloorDivSIOp, arith::RemSIOp,
          arith::RemUIOp>(op)) {
    const RtValue &n = get(op->getOperand(0)), &d = get(op->getOperand(1));
    if (llvm::is_contained(d.ints, 0))
      return op->emitError() << "host execution: integer division by zero";
    unsigned width = intWidth(op->getResult(0).getType());
    int64_t least = wrapToWidth(uint64_t{1} << (width - 1), width);
    bool overflow = false;
    if (isa<arith::DivSIOp, arith::CeilDivSIOp, arith::FloorDivSIOp,
            arith::RemSIOp>(op))
      for (size_t i = 0, e = std::max(n.size(), d.size()); i < e; ++i)
        overflow |= n.ints[n.size() == 1 ? 0 : i] == least &&
                    d.ints[d.size() == 1 ? 0 : i] == -1;
    if (overflow)
      return op->emitError() << "host execution: signed division of " << least
                             << " by -1 overflows i" << width;
  }

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) { return execConstant(c); })
      .Case([&](scf::ForOp f) { return execFor(f); })
      .Case([&](scf::IfOp f) { return execIf(f); })
      .Case([&](LoadOp l) { return execLoad(l); })
      .Case([&](StoreOp s) { return execStore(s); })
      .Case([&](TransposeOp t) { return execTranspose(t); })
      .Case([&](MmaOp m) { return execMma(m); })
      .Case([&](ReduceOp r) { return execReduce(r); })
      .Case([&](BroadcastOp b) { return execBroadcast(b); })
      .Case([&](OnlineSoftmaxOp s) { return execOnlineSoftmax(s); })
      .Case([&](LogSumExpOp s) { return execLogSumExp(s); })
      // One program at a time: every earlier grid has finished.
      .Case<WaitPriorGridsOp, LaunchDependentGridsOp>(
          [&](Operation *) { return success(); })
      .Case([&](BlockIdOp b) {
        set(b, RtValue::integer(blockId[static_cast<int>(b.getDim())]));
        return success();
      })
      .Case([&](DimOp d) {
        set(d, RtValue::integer(get(d.getView()).view->sizes[d.getIndex()]));
        return success();
      })
      .Case([&](SliceOp slice) -> LogicalResult {
        ViewRef ref = *get(slice.getView()).view;
        int64_t dim = slice.getDim(), offset = getInt(slice.getOffset()),
                size = getInt(slice.getSize());
        if (offset < 0 || size < 0 || offset > ref.sizes[dim] - size)
          return slice.emitError()
                 << "host execution: slice [" << offset << ", " << offset + size
                 << ") of dimension " << dim << " lies outside the view's "
                 << ref.sizes[dim] << " elements";
        ref.base += offset * ref.tensor->strides[dim];
        ref.sizes[dim] = size;
        RtValue v;
        v.view = std::move(ref);
        set(slice, std::move(v));
        return success();
      })
      .Case([&](ReadOp read) -> LogicalResult {
        const ViewRef &ref = *get(read.getView()).view;
        int64_t offset = ref.base;
        for (auto [d, idx] : llvm::enumerate(read.getIndices())) {
          int64_t i = getInt(idx);
          if ((i < 0 || i >= ref.sizes[d]) && padReads) {
            set(read, isIntegerLike(read.getType()) ? RtValue::integer(0)
                                                    : RtValue::scalar(0.0));
            return success();
          }
          if (i < 0 || i >= ref.sizes[d])
            return read.emitError()
                   << "host execution: read at index " << i << " of dimension "
                   << d << ", outside the view's " << ref.sizes[d]
                   << " elements";
          offset += i * ref.tensor->strides[d];
        }
        double element = ref.tensor->data[offset];
        set(read, isIntegerLike(read.getType())
                      ? RtValue::integer(static_cast<int64_t>(element))
                      : RtValue::scalar(element));
        return success();
      })
      .Case([&](WriteOp write) -> LogicalResult {
        const ViewRef &ref = *get(write.getView()).view;
        int64_t offset = ref.base;
        for (auto [d, idx] : llvm::enumerate(write.getIndices())) {
          int64_t i = getInt(idx);
          if (i < 0 || i >= ref.sizes[d])
            return success(); // Outside the view: not written.
          offset += i * ref.tensor->strides[d];
        }
        const RtValue &value = get(write.getValue());
        ref.tensor->data[offset] = value.isInt
                                       ? static_cast<double>(value.intValue())
                                       : value.scalarValue();
        return success();
      })
      .Case([&](GatherOp gather) -> LogicalResult {
        const ViewRef &ref = *get(gather.getView()).view;
        RtValue out;
        out.shape = shapeOf(gather.getType());
        out.isInt = isIntegerLike(gather.getType());
        int64_t n = numElements(out.shape);
        SmallVector<const RtValue *> indices;
        for (Value idx : gather.getIndices())
          indices.push_back(&get(idx));
        double pad = gather.getPad().convertToDouble();
        for (int64_t e = 0; e < n; ++e) {
          int64_t offset = ref.base;
          bool inside = true;
          for (auto [d, idx] : llvm::enumerate(indices)) {
            int64_t i = idx->ints[idx->ints.size() == 1 ? 0 : e];
            inside &= i >= 0 && i < ref.sizes[d];
            offset += i * ref.tensor->strides[d];
          }
          if (!inside && gather.getInBounds())
            return gather.emitError()
                   << "gather marked in_bounds reads outside the view, at "
                      "element "
                   << e << " of its result";
          double element = inside ? ref.tensor->data[offset] : pad;
          if (out.isInt)
            out.ints.push_back(static_cast<int64_t>(element));
          else
            out.data.push_back(element);
        }
        set(gather, std::move(out));
        return success();
      })
      .Case([&](ApplyOp apply) -> LogicalResult {
        // The function as written, one element at a time: the semantics
        // tile-vectorize-apply must keep.
        auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            apply, apply.getCalleeAttr());
        RtValue out;
        out.shape = shapeOf(apply.getType());
        out.isInt = !apply.getScore();
        int64_t rows = out.shape[0], cols = out.shape[1];
        const RtValue *score =
            apply.getScore() ? &get(apply.getScore()) : nullptr;
        int64_t q0 = getInt(apply.getQStart()), k0 = getInt(apply.getKvStart());
        SmallVector<RtValue> args;
        if (score)
          args.push_back(RtValue::scalar(0.0));
        args.append({get(apply.getBatch()), get(apply.getHead()),
                     RtValue::integer(0), RtValue::integer(0)});
        for (Value capture : apply.getCaptures())
          args.push_back(get(capture));
        unsigned first = score ? 1 : 0;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            if (score)
              args[0] = RtValue::scalar(score->data[i * cols + j]);
            // (Transposed: keys as rows.)
            bool t = apply.getTransposed();
            args[first + 2] = RtValue::integer(q0 + (t ? j : i));
            args[first + 3] = RtValue::integer(k0 + (t ? i : j));
            Interpreter inner(blockId, /*padReads=*/true);
            SmallVector<RtValue> results;
            if (failed(inner.runBlock(fn.getBody().front(), args, results)))
              return failure();
            if (out.isInt)
              out.ints.push_back(results[0].intValue() ? -1 : 0);
            else
              out.data.push_back(results[0].scalarValue());
          }
        set(apply, std::move(out));
        return success();
      })
      .Case([&](IotaOp iota) {
        RtValue out;
        out.shape = shapeOf(iota.getType());
        bool isFloat = isa<FloatType>(iota.getType().getElementType());
        out.isInt = !isFloat;
        if (isFloat)
          out.data.resize(numElements(out.shape));
        else
          out.ints.resize(numElements(out.shape));
        int64_t offset = iota.getOffset() ? getInt(iota.getOffset()) : 0;
        // Wraps at the element type's width, as the GPU's registers do;
        // f32 positions are the i32 ones, rounded to f32.
        unsigned width = isFloat ? 32 : iota.getType().getElementTypeBitWidth();
        // With a step: fma(i_dim, step, offset * step), as the GPU does.
        std::optional<double> step, first;
        if (iota.getStep()) {
          step = get(iota.getStep()).scalarValue();
          first = static_cast<float>(
              static_cast<float>(static_cast<int32_t>(offset)) * *step);
        }
        forEachIndex(out.shape, [&](int64_t linear, ArrayRef<int64_t> idx) {
          if (step) {
            out.data[linear] = static_cast<float>(
                std::fma(static_cast<double>(idx[iota.getDim()]), *step,
                         *first));
            return;
          }
          int64_t position = llvm::APInt(64, static_cast<uint64_t>(offset) +
                                                 idx[iota.getDim()])
                                 .trunc(width)
                                 .getSExtValue();
          if (isFloat)
            out.data[linear] = static_cast<float>(position);
          else
            out.ints[linear] = position;
        });
        set(iota, std::move(out));
        return success();
      })
      .Case([&](BoundsMaskOp mask) {
        RtValue out;
        out.shape = shapeOf(mask.getType());
        out.isInt = true;
        out.ints.resize(numElements(out.shape));
        SmallVector<int64_t> offsets, limits;
        for (Value v : mask.getOffsets())
          offsets.push_back(getInt(v));
        for (Value v : mask.getLimits())
          limits.push_back(getInt(v));
        forEachIndex(out.shape, [&](int64_t linear, ArrayRef<int64_t> idx) {
          bool inside = true;
          for (size_t d = 0; d < idx.size(); ++d)
            inside &= static_cast<__int128>(offsets[d]) + idx[d] < limits[d];
          out.ints[linear] = inside ? -1 : 0;
        });
        set(mask, std::move(out));
        return success();
      })
      .Case([&](CausalMaskOp mask) {
        RtValue out;
        out.shape = shapeOf(mask.getType());
        out.isInt = true;
        int64_t rows = out.shape[0], cols = out.shape[1];
        int64_t row0 = getInt(mask.getRowOffset()),
                col0 = getInt(mask.getColOffset());
        out.ints.resize(rows * cols);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            out.ints[i * cols + j] = diagonal(row0, i, col0, j) <= 0 ? -1 : 0;
        set(mask, std::move(out));
        return success();
      })
      .Case([&](WindowMaskOp mask) {
        RtValue out;
        out.shape = shapeOf(mask.getType());
        out.isInt = true;
        int64_t rows = out.shape[0], cols = out.shape[1];
        int64_t row0 = getInt(mask.getRowOffset()),
                col0 = getInt(mask.getColOffset()), lo = getInt(mask.getLo()),
                hi = getInt(mask.getHi());
        out.ints.resize(rows * cols);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            __int128 d = diagonal(row0, i, col0, j);
            out.ints[i * cols + j] = lo <= d && d <= hi ? -1 : 0;
          }
        set(mask, std::move(out));
        return success();
      })
      .Case([&](tensor::SplatOp splat) {
        return elementwise(splat, [](A x) { return x[0]; });
      })
      .Default([&](Operation *o) { return executeFloatMath(o); });
}

/// Floating-point arithmetic and math, rounded to the result's type, and the
/// conversions between floats and integers.
LogicalResult Interpreter::executeFloatMath(Operation *op) {
  using A = std::array<Scalar, 3>;
  auto fn1 = [&](double (*f)(double)) {
    return elementwise(op, [f](A x) { return F(f(x[0].f)); });
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::AddFOp o) {
        return elementwise(o, [](A x) { return F(x[0].f + x[1].f); });
      })
      .Case([&](arith::SubFOp o) {
        return elementwise(o, [](A x) { return F(x[0].f - x[1].f); });
      })
      .Case([&](arith::MulFOp o) {
        return elementwise(o, [](A x) { return F(x[0].f * x[1].f); });
      })
      .Case([&](arith::DivFOp o) {
        return elementwise(o, [](A x) { return F(x[0].f / x[1].f); });
      })
      .Case([&](arith::MaximumFOp o) {
        return elementwise(o, [](A x) { return F(maximumF(x[0].f, x[1].f)); });
      })
      .Case([&](arith::MinimumFOp o) {
        return elementwise(o, [](A x) { return F(minimumF(x[0].f, x[1].f)); });
      })
      .Case([&](arith::MaxNumFOp o) {
        return elementwise(o, [](A x) { return F(std::fmax(x[0].f, x[1].f)); });
      })
      .Case([&](arith::MinNumFOp o) {
        return elementwise(o, [](A x) { return F(std::fmin(x[0].f, x[1].f)); });
      })
      .Case([&](arith::NegFOp o) {
        return elementwise(o, [](A x) { return F(-x[0].f); });
      })
      .Case([&](math::FmaOp o) {
        return elementwise(
            o, [](A x) { return F(std::fma(x[0].f, x[1].f, x[2].f)); });
      })
      .Case([&](math::ExpOp) {
        return fn1([](double v) { return std::exp(v); });
      })
      .Case([&](math::Exp2Op) {
        return fn1([](double v) { return std::exp2(v); });
      })
      .Case([&](math::TanhOp) {
        return fn1([](double v) { return std::tanh(v); });
      })
      .Case([&](math::LogOp) {
        return fn1([](double v) { return std::log(v); });
      })
      .Case([&](math::Log2Op) {
        return fn1([](double v) { return std::log2(v); });
      })
      .Case([&](math::SqrtOp) {
        return fn1([](double v) { return std::sqrt(v); });
      })
      .Case([&](math::RsqrtOp) {
        return fn1([](double v) { return 1.0 / std::sqrt(v); });
      })
      .Case([&](math::AbsFOp) {
        return fn1([](double v) { return std::fabs(v); });
      })
      // Conversions: the result's rounding or wrapping does the work.
      .Case<arith::TruncFOp, arith::ExtFOp, arith::IndexCastOp, arith::ExtSIOp,
            arith::TruncIOp>([&](Operation *o) {
        return elementwise(o, [](A x) { return x[0]; });
      })
      .Case([&](arith::ExtUIOp o) {
        unsigned from = intWidth(o.getIn().getType());
        return elementwise(o, [from](A x) {
          return I(static_cast<int64_t>(asUnsigned(x[0].i, from)));
        });
      })
      .Case([&](arith::SIToFPOp o) {
        return elementwise(o, [](A x) { return F(double(x[0].i)); });
      })
      .Case([&](arith::FPToSIOp o) -> LogicalResult {
        // Out of range (or NaN) is poison in arith: report it.
        unsigned width = intWidth(o.getType());
        double limit = std::ldexp(1.0, width - 1);
        for (double v : get(o.getIn()).data)
          if (!(std::trunc(v) >= -limit && std::trunc(v) < limit))
            return o.emitError() << "host execution: " << v
                                 << " does not fit the result's i" << width;
        return elementwise(
            o, [](A x) { return I(static_cast<int64_t>(std::trunc(x[0].f))); });
      })
      .Default([&](Operation *o) { return executeIntegerMath(o); });
}

/// Integer and index arithmetic, comparisons and selects: two's complement
/// at the operands' width, computed without overflow in uint64_t and wrapped
/// by the result.
LogicalResult Interpreter::executeIntegerMath(Operation *op) {
  using A = std::array<Scalar, 3>;
  // The width the operands are read at (the first operand's; a select's
  // condition does not need one).
  unsigned width = 64;
  if (op->getNumOperands() && isIntegerLike(op->getOperand(0).getType()))
    width = intWidth(op->getOperand(0).getType());
  auto u = [width](int64_t v) { return asUnsigned(v, width); };
  auto iu = [](uint64_t v) { return I(static_cast<int64_t>(v)); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::AddIOp o) {
        return elementwise(o, [&](A x) { return iu(u(x[0].i) + u(x[1].i)); });
      })
      .Case([&](arith::SubIOp o) {
        return elementwise(o, [&](A x) { return iu(u(x[0].i) - u(x[1].i)); });
      })
      .Case([&](arith::MulIOp o) {
        return elementwise(o, [&](A x) { return iu(u(x[0].i) * u(x[1].i)); });
      })
      .Case([&](arith::DivSIOp o) {
        return elementwise(o, [](A x) { return I(x[0].i / x[1].i); });
      })
      .Case([&](arith::DivUIOp o) {
        return elementwise(o, [&](A x) { return iu(u(x[0].i) / u(x[1].i)); });
      })
      .Case([&](arith::RemSIOp o) {
        return elementwise(o, [](A x) { return I(x[0].i % x[1].i); });
      })
      .Case([&](arith::RemUIOp o) {
        return elementwise(o, [&](A x) { return iu(u(x[0].i) % u(x[1].i)); });
      })
      .Case([&](arith::CeilDivUIOp o) {
        return elementwise(o, [&](A x) {
          uint64_t a = u(x[0].i), b = u(x[1].i);
          return iu(a == 0 ? 0 : (a - 1) / b + 1);
        });
      })
      .Case([&](arith::CeilDivSIOp o) {
        return elementwise(o, [](A x) {
          int64_t a = x[0].i, b = x[1].i, q = a / b;
          return I(q + (a % b != 0 && (a < 0) == (b < 0)));
        });
      })
      .Case([&](arith::FloorDivSIOp o) {
        return elementwise(o, [](A x) {
          int64_t a = x[0].i, b = x[1].i, q = a / b;
          return I(q - (a % b != 0 && (a < 0) != (b < 0)));
        });
      })
      .Case([&](arith::MinSIOp o) {
        return elementwise(o, [](A x) { return I(std::min(x[0].i, x[1].i)); });
      })
      .Case([&](arith::MaxSIOp o) {
        return elementwise(o, [](A x) { return I(std::max(x[0].i, x[1].i)); });
      })
      .Case([&](arith::MinUIOp o) {
        return elementwise(
            o, [&](A x) { return iu(std::min(u(x[0].i), u(x[1].i))); });
      })
      .Case([&](arith::MaxUIOp o) {
        return elementwise(
            o, [&](A x) { return iu(std::max(u(x[0].i), u(x[1].i))); });
      })
      .Case([&](arith::AndIOp o) {
        return elementwise(o, [](A x) { return I(x[0].i & x[1].i); });
      })
      .Case([&](arith::OrIOp o) {
        return elementwise(o, [](A x) { return I(x[0].i | x[1].i); });
      })
      .Case([&](arith::XOrIOp o) {
        return elementwise(o, [](A x) { return I(x[0].i ^ x[1].i); });
      })
      .Case([&](arith::CmpFOp o) {
        auto pred = o.getPredicate();
        return elementwise(
            o, [&](A x) { return I(compareF(pred, x[0].f, x[1].f) ? -1 : 0); });
      })
      .Case([&](arith::CmpIOp o) {
        auto pred = o.getPredicate();
        return elementwise(o, [&](A x) {
          return I(compareI(pred, x[0].i, x[1].i, width) ? -1 : 0);
        });
      })
      .Case([&](arith::SelectOp o) {
        return elementwise(o, [](A x) { return x[0].i != 0 ? x[1] : x[2]; });
      })
      .Default([&](Operation *o) {
        return o->emitError()
               << "host execution does not support '" << o->getName() << "'";
      });
}

//===----------------------------------------------------------------------===//
// Kernel launch
//===----------------------------------------------------------------------===//

/// The run-time values of `args`, checked against `fn`'s signature.
static FailureOr<SmallVector<RtValue>> bindArguments(func::FuncOp kernel,
                                                     ArrayRef<KernelArg> args) {
  FunctionType type = kernel.getFunctionType();
  if (type.getNumInputs() != args.size())
    return kernel.emitError()
           << "host execution: the kernel takes " << type.getNumInputs()
           << " arguments, " << args.size() << " were given";
  SmallVector<RtValue> bound;
  for (auto [i, input, arg] : llvm::enumerate(type.getInputs(), args)) {
    if (auto view = dyn_cast<ViewType>(input)) {
      HostTensor *t = arg.tensor;
      if (!t)
        return kernel.emitError()
               << "host execution: argument " << i << " must be a tensor";
      if (t->elementType != view.getElementType() ||
          static_cast<int64_t>(t->sizes.size()) != view.getRank() ||
          t->strides.size() != t->sizes.size())
        return kernel.emitError() << "host execution: argument " << i
                                  << " does not match " << input;
      for (auto [size, expected] : llvm::zip_equal(t->sizes, view.getShape()))
        if (!ShapedType::isDynamic(expected) && size != expected)
          return kernel.emitError()
                 << "host execution: argument " << i << " has size " << size
                 << " where " << input << " needs " << expected;
      RtValue v;
      v.view = ViewRef{
          t, 0, SmallVector<int64_t, 4>(t->sizes.begin(), t->sizes.end())};
      bound.push_back(std::move(v));
      continue;
    }
    if (arg.tensor || !(input.isF32() || input.isIndex() ||
                        input.isInteger(32) || input.isInteger(64)))
      return kernel.emitError()
             << "host execution: argument " << i << " of type " << input
             << " cannot be bound to this value";
    if (input.isF32())
      bound.push_back(RtValue::scalar(roundToType(arg.scalar, input)));
    else
      bound.push_back(RtValue::integer(
          wrapToWidth(static_cast<uint64_t>(arg.integer), intWidth(input))));
  }

  return bound;
}

LogicalResult tiled_attn::exec::runKernel(func::FuncOp kernel,
                                          ArrayRef<KernelArg> args,
                                          std::array<int64_t, 3> grid) {
  if (kernel.isExternal())
    return kernel.emitError() << "host execution needs a kernel with a body";
  FunctionType type = kernel.getFunctionType();
  if (type.getNumResults() != 0)
    return kernel.emitError() << "host execution expects a kernel with no "
                                 "results";
  FailureOr<SmallVector<RtValue>> bound = bindArguments(kernel, args);
  if (failed(bound))
    return failure();
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        Interpreter interp({x, y, z});
        SmallVector<RtValue> results;
        if (failed(interp.runBlock(kernel.getBody().front(), *bound, results)))
          return failure();
      }
  return success();
}

FailureOr<double>
tiled_attn::exec::callScalarFunction(func::FuncOp fn,
                                     ArrayRef<KernelArg> args) {
  if (fn.isExternal() || fn.getBody().getBlocks().size() != 1 ||
      fn.getFunctionType().getNumResults() != 1)
    return fn.emitError() << "host execution: a scalar function needs one "
                             "block and one result";
  FailureOr<SmallVector<RtValue>> bound = bindArguments(fn, args);
  if (failed(bound))
    return failure();
  Interpreter interp({0, 0, 0}, /*padReads=*/true);
  SmallVector<RtValue> results;
  if (failed(interp.runBlock(fn.getBody().front(), *bound, results)))
    return failure();
  const RtValue &r = results.front();
  if (!r.isInt)
    return r.scalarValue();
  if (fn.getFunctionType().getResult(0).isInteger(1))
    return r.intValue() != 0 ? 1.0 : 0.0;
  return static_cast<double>(r.intValue());
}

//===- tiled-attn-run.cpp - Run an SDPA tile kernel on the host -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Runs a tile-level SDPA kernel (a func.func carrying `tile.sdpa`) with the
// host interpreter on random inputs, for each requested shape, and compares
// its output with a float64 reference. Prints one line per case and exits
// non-zero if any case exceeds the tolerance.
//
//   tiled-attn-run kernel.mlir --shapes=17x17,100x37 --batch=2 --heads=3
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Execution/HostExecutor.h"
#include "tiled_attn/Execution/SdpaReference.h"
#include "tiled_attn/Kernels/SdpaKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;
namespace cl = llvm::cl;

/// The tool's own options: --help shows these, not LLVM's.
static cl::OptionCategory runCategory("tiled-attn-run options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<kernel .mlir file>"),
                                      cl::init("-"), cl::cat(runCategory));
static cl::opt<std::string>
    kernelName("kernel",
               cl::desc("Kernel to run (default: the only function "
                        "with a 'tile.sdpa' attribute)"),
               cl::cat(runCategory));
static cl::opt<std::string>
    shapesOpt("shapes",
              cl::desc("Comma-separated S_q x S_k pairs, e.g. 17x17,100x37"),
              cl::init("1x1,17x17,64x64,100x100,257x257,100x37,37x100"),
              cl::cat(runCategory));
static cl::opt<int64_t> batchOpt("batch", cl::desc("Batch size B"), cl::init(2),
                                 cl::cat(runCategory));
static cl::opt<int64_t> headsOpt("heads", cl::desc("Number of heads H"),
                                 cl::init(3), cl::cat(runCategory));
static cl::opt<int64_t>
    kvHeadsOpt("kv-heads",
               cl::desc("Number of K/V heads H_kv, which divides H (grouped "
                        "KV heads; 0: H)"),
               cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    layoutOpt("layout",
              cl::desc("Memory layout of Q, K, V and O: bhsd (contiguous) "
                       "or bshd (heads interleaved, as a transposed "
                       "PyTorch tensor)"),
              cl::init("bhsd"), cl::cat(runCategory));
static cl::opt<unsigned> seedOpt("seed", cl::desc("Random seed"), cl::init(0),
                                 cl::cat(runCategory));
static cl::opt<double> scaleOpt("scale",
                                cl::desc("Softmax scale (default 1/sqrt(D))"),
                                cl::init(0.0), cl::cat(runCategory));
static cl::opt<std::string> compareWith(
    "compare-with",
    cl::desc("A second kernel file (say, the input after a transform) to run "
             "on the same inputs; the two outputs must agree within "
             "--equivalence-tolerance"),
    cl::cat(runCategory));
static cl::opt<double> equivalenceTolerance(
    "equivalence-tolerance",
    cl::desc("Largest relative L2 difference accepted between the two "
             "kernels' outputs (default 0: bitwise identical)"),
    cl::init(0.0), cl::cat(runCategory));
static cl::opt<double>
    toleranceOpt("tolerance",
                 cl::desc("Largest relative L2 error accepted (default 2e-3 "
                          "for f16, 1e-2 for bf16)"),
                 cl::init(0.0), cl::cat(runCategory));

static cl::list<std::string> captureOpts(
    "capture",
    cl::desc("A captured input of the kernel's score and mask functions, "
             "by its name: name=DIMS:LO:HI for a view, DIMS its sizes "
             "joined by 'x', each a number or B, H, Hkv, Sq, Sk, filled with "
             "uniform random values in [LO, HI] (integers for an integer "
             "view); name=VALUE for a scalar. The reference applies the "
             "functions of the kernel's tile.apply ops to them"),
    cl::cat(runCategory));

static cl::opt<double> lseToleranceOpt(
    "lse-tolerance",
    cl::desc("For an `lse` kernel: the largest absolute error allowed in a "
             "row's log-sum-exp (default 1e-3)"),
    cl::init(1e-3), cl::cat(runCategory));

static cl::opt<int64_t> splitsOpt(
    "splits",
    cl::desc("For a `split` (split-KV) kernel: the chunks of the keys, one "
             "program each; the run merges their partial outputs and "
             "log-sum-exps in float64 before the comparison (default 3)"),
    cl::init(3), cl::cat(runCategory));

static cl::opt<int64_t> pageSizeOpt(
    "page-size",
    cl::desc("For a `paged` kernel: the cache's page size, a multiple of the "
             "kernel's block_n (default 2 * block_n). K and V go into pages "
             "of a [num_pages, H_kv, page_size, D] cache in a random order, "
             "with pages no entry uses; what no key fills holds large "
             "values, which a kernel that reads them shows"),
    cl::init(0), cl::cat(runCategory));

static cl::opt<double> softcapOpt(
    "softcap",
    cl::desc("For a softcap kernel: the cap (default 30); scores become "
             "softcap * tanh(scale * s / softcap)"),
    cl::init(30.0), cl::cat(runCategory));
static cl::opt<std::string> windowOpt(
    "window",
    cl::desc("For a `window` kernel: FlashAttention's window_size LEFT,RIGHT "
             "(-1: no bound on that side), default -1,-1"),
    cl::init("-1,-1"), cl::cat(runCategory));
static cl::opt<bool> windowCausalOpt(
    "window-causal",
    cl::desc("For a `window` kernel: intersect the window with a causal mask"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<std::string> windowAlignOpt(
    "window-align",
    cl::desc("For a `window` kernel: top-left or bottom-right (the window and "
             "the causal mask move by S_k - S_q)"),
    cl::init("top-left"), cl::cat(runCategory));

namespace {
struct Shape {
  int64_t seqQ, seqK;
};
/// What a `window` kernel is asked for (see --window).
struct WindowRequest {
  int64_t left = -1, right = -1;
  bool causal = false, bottomRight = false;
};
} // namespace

static FailureOr<SmallVector<Shape>> parseShapes(StringRef text,
                                                 int64_t minLength) {
  SmallVector<Shape> shapes;
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [q, k] = item.trim().split('x');
    Shape s;
    if (q.getAsInteger(10, s.seqQ) || k.getAsInteger(10, s.seqK)) {
      llvm::errs() << "error: --shapes: expected SQxSK (e.g. 17x33), got '"
                   << item << "'\n";
      return failure();
    }
    // A varlen kernel's sequences may be empty; others' may not.
    if (s.seqQ < minLength || s.seqK < minLength) {
      llvm::errs() << "error: --shapes: sequence lengths must be at least "
                   << minLength << ", got '" << item << "'\n";
      return failure();
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) {
    llvm::errs() << "error: --shapes is empty\n";
    return failure();
  }
  return shapes;
}

static FailureOr<func::FuncOp> findKernel(ModuleOp module, StringRef fileName) {
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool isSdpa = func->hasAttr(tile::TileDialect::getSdpaAttrName());
    if (!kernelName.empty()) {
      if (func.getSymName() != kernelName)
        continue;
      if (!isSdpa) {
        func.emitError() << "'" << kernelName
                         << "' has no 'tile.sdpa' attribute, so "
                            "tiled-attn-run cannot tell what it computes";
        return failure();
      }
      return func;
    }
    if (!isSdpa)
      continue;
    if (found) {
      func.emitError() << "more than one SDPA kernel in the input; choose one "
                          "with --kernel";
      return failure();
    }
    found = func;
  }
  if (!found) {
    if (kernelName.empty())
      llvm::errs() << "error: no function with a 'tile.sdpa' attribute in '"
                   << fileName << "'\n";
    else
      llvm::errs() << "error: no function named '" << kernelName << "' in '"
                   << fileName << "'\n";
    return failure();
  }
  return found;
}

/// The kernels read from files, with what keeps their diagnostics
/// pointing into the right file (the parser reads a source manager's main
/// buffer, so one manager per file).
class KernelFiles {
public:
  explicit KernelFiles(MLIRContext &context) : context(context) {}

  /// The kernel of `fileName`, parsed and checked to be runnable.
  FailureOr<func::FuncOp> load(StringRef fileName) {
    std::string errorMessage;
    auto file = openInputFile(fileName, &errorMessage);
    if (!file) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return failure();
    }
    auto &sourceMgr = sourceMgrs.emplace_back(new llvm::SourceMgr());
    sourceMgr->AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    diagHandlers.emplace_back(
        new SourceMgrDiagnosticHandler(*sourceMgr, &context));
    modules.push_back(parseSourceFile<ModuleOp>(*sourceMgr, &context));
    if (!modules.back())
      return failure();
    auto kernel = findKernel(*modules.back(), fileName);
    if (failed(kernel))
      return failure();
    if (kernel->getBody().getBlocks().size() != 1) {
      kernel->emitError() << "host execution needs a single-block kernel body";
      return failure();
    }
    return kernel;
  }

private:
  MLIRContext &context;
  SmallVector<std::unique_ptr<llvm::SourceMgr>> sourceMgrs;
  SmallVector<std::unique_ptr<SourceMgrDiagnosticHandler>> diagHandlers;
  SmallVector<OwningOpRef<ModuleOp>> modules;
};

/// The largest absolute difference between two tensors of log-sum-exps; an
/// infinity where only one of them has it (or of another sign) counts as
/// infinite, and NaN (an unwritten row) too.
static double maxLseError(const HostTensor &a, const HostTensor &b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double x = a.data[i], y = b.data[i];
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y)
        return std::numeric_limits<double>::infinity();
      continue;
    }
    double diff = std::fabs(x - y);
    if (std::isnan(diff))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, diff);
  }
  return worst;
}

/// What a launch binds to the kernel's arguments, by role.
struct RoleValues {
  HostTensor *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr,
             *lse = nullptr, *cuSeqlensQ = nullptr, *cuSeqlensK = nullptr,
             *seqUsedK = nullptr;
  double scale = 0.0, softcap = 0.0;
  int64_t windowLo = 0, windowHi = 0, windowAlign = 0, numSplits = 0;
  /// The captured inputs, by name.
  llvm::StringMap<KernelArg> *captured = nullptr;
};

/// Split-KV's merge, in float64: for each row, the chunks' log-sum-exps
/// l_s give weights exp(l_s - L), L = log(sum_s exp(l_s)), and the output is
/// sum_s w_s o_s (rounded to `out`'s element type), L its log-sum-exp (-inf
/// and a zero row where no chunk saw a key).
static void mergeSplits(HostTensor &partial, HostTensor &partialLse,
                        int64_t splits, HostTensor &out, HostTensor &lse) {
  const int64_t batch = out.sizes[0], heads = out.sizes[1], rows = out.sizes[2],
                dv = out.sizes[3];
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t r = 0; r < rows; ++r) {
        double top = -inf;
        for (int64_t s = 0; s < splits; ++s)
          top = std::max(top, partialLse.at({b, h * splits + s, r}));
        double sum = 0.0;
        for (int64_t s = 0; s < splits; ++s)
          if (top != -inf)
            sum += std::exp(partialLse.at({b, h * splits + s, r}) - top);
        for (int64_t d = 0; d < dv; ++d) {
          double acc = 0.0;
          for (int64_t s = 0; s < splits && top != -inf; ++s)
            acc += std::exp(partialLse.at({b, h * splits + s, r}) - top) / sum *
                   partial.at({b, h * splits + s, r, d});
          out.at({b, h, r, d}) = roundToType(acc, out.elementType);
        }
        if (!lse.sizes.empty() && lse.sizes[2] > r)
          lse.at({b, h, r}) = top == -inf ? -inf : top + std::log(sum);
      }
}

/// The arguments of `f` in its order, each the value of its role.
static FailureOr<SmallVector<KernelArg>> bindByRole(func::FuncOp f,
                                                    const RoleValues &values) {
  SmallVector<KernelArg> args;
  for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i) {
    tile::ArgAttr arg = tile::getArgAttr(f, i);
    if (!arg)
      return f.emitError() << "argument #" << i << " has no role";
    auto view = [&](HostTensor *t) -> LogicalResult {
      if (!t)
        return failure();
      args.push_back(KernelArg::view(*t));
      return success();
    };
    LogicalResult ok = success();
    switch (arg.getRole()) {
    case tile::ArgRole::Q:
      ok = view(values.q);
      break;
    case tile::ArgRole::K:
      ok = view(values.k);
      break;
    case tile::ArgRole::V:
      ok = view(values.v);
      break;
    case tile::ArgRole::O:
      ok = view(values.o);
      break;
    case tile::ArgRole::Lse:
      ok = view(values.lse);
      break;
    case tile::ArgRole::CuSeqlensQ:
      ok = view(values.cuSeqlensQ);
      break;
    case tile::ArgRole::CuSeqlensK:
      ok = view(values.cuSeqlensK);
      break;
    case tile::ArgRole::SeqUsedK:
      ok = view(values.seqUsedK);
      break;
    case tile::ArgRole::Scale:
      args.push_back(KernelArg::value(values.scale));
      break;
    case tile::ArgRole::Softcap:
      args.push_back(KernelArg::value(values.softcap));
      break;
    case tile::ArgRole::WindowLo:
      args.push_back(KernelArg::index(values.windowLo));
      break;
    case tile::ArgRole::WindowHi:
      args.push_back(KernelArg::index(values.windowHi));
      break;
    case tile::ArgRole::WindowAlign:
      args.push_back(KernelArg::index(values.windowAlign));
      break;
    case tile::ArgRole::Captured: {
      auto it = values.captured ? values.captured->find(arg.getArgumentName())
                                : llvm::StringMap<KernelArg>::iterator();
      if (!values.captured || it == values.captured->end())
        return f.emitError() << "captured input '" << arg.getArgumentName()
                             << "' has no value: give it with --capture";
      args.push_back(it->second);
      break;
    }
    case tile::ArgRole::NumSplits:
      args.push_back(KernelArg::index(values.numSplits));
      break;
    case tile::ArgRole::SeqQ:
    case tile::ArgRole::SeqK:
    case tile::ArgRole::BlockKinds:
    case tile::ArgRole::OPartial:
    case tile::ArgRole::LsePartial:
    case tile::ArgRole::DOut:
    case tile::ArgRole::DQ:
    case tile::ArgRole::DK:
    case tile::ArgRole::DV:
    case tile::ArgRole::Delta:
    case tile::ArgRole::DQAccum:
      ok = failure(); // Another program's, not an SDPA kernel's.
      break;
    }
    if (failed(ok))
      return f.emitError() << "argument #" << i << " ('"
                           << arg.getArgumentName()
                           << "') has no value in this run";
  }
  return args;
}

/// The captured inputs of --capture for one problem: tensors filled with
/// uniform random values (kept in `storage`) and scalars, by name, added to
/// `captured` (those made otherwise: the block mask).
static FailureOr<llvm::StringMap<KernelArg>>
makeCaptures(func::FuncOp kernel, std::deque<HostTensor> &storage,
             std::mt19937_64 &rng, int64_t batch, int64_t heads,
             int64_t kvHeads, int64_t seqQ, int64_t seqK,
             llvm::StringMap<KernelArg> captured) {
  for (const std::string &spec : captureOpts) {
    auto [name, value] = StringRef(spec).split('=');
    BlockArgument arg;
    for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
      if (tile::ArgAttr a = tile::getArgAttr(kernel, i);
          a && a.getRole() == tile::ArgRole::Captured &&
          a.getArgumentName() == name)
        arg = kernel.getArgument(i);
    if (!arg)
      return kernel.emitError() << "--capture: the kernel has no captured "
                                   "input named '"
                                << name << "'";
    Type type = arg.getType();
    auto view = dyn_cast<tile::ViewType>(type);
    if (!view) {
      double scalar;
      if (value.getAsDouble(scalar))
        return kernel.emitError()
               << "--capture: expected " << name << "=VALUE for a scalar, got '"
               << spec << "'";
      captured[name] = type.isF32() ? KernelArg::value(scalar)
                                    : KernelArg::index(int64_t(scalar));
      continue;
    }
    SmallVector<StringRef> parts;
    value.split(parts, ':');
    double lo, hi;
    if (parts.size() != 3 || parts[1].getAsDouble(lo) ||
        parts[2].getAsDouble(hi) || lo > hi)
      return kernel.emitError()
             << "--capture: expected " << name
             << "=DIMS:LO:HI for a view, got '" << spec << "'";
    std::vector<int64_t> sizes;
    SmallVector<StringRef> dims;
    parts[0].split(dims, 'x');
    for (StringRef d : dims) {
      int64_t size;
      if (d == "B")
        size = batch;
      else if (d == "H")
        size = heads;
      else if (d == "Hkv")
        size = kvHeads;
      else if (d == "Sq")
        size = seqQ;
      else if (d == "Sk")
        size = seqK;
      else if (d.getAsInteger(10, size) || size < 0)
        return kernel.emitError() << "--capture: '" << d
                                  << "' is no size (a number, B, H, Hkv, "
                                     "Sq or Sk)";
      sizes.push_back(size);
    }
    if (static_cast<int64_t>(sizes.size()) != view.getRank())
      return kernel.emitError()
             << "--capture: '" << name << "' is a rank-" << view.getRank()
             << " view, given " << sizes.size() << " sizes";
    HostTensor &t =
        storage.emplace_back(HostTensor::create(view.getElementType(), sizes));
    bool integer = view.getElementType().isInteger();
    for (double &x : t.data) {
      if (integer)
        x = std::uniform_int_distribution<int64_t>(int64_t(lo),
                                                   int64_t(hi))(rng);
      else
        x = roundToType(std::uniform_real_distribution<double>(lo, hi)(rng),
                        view.getElementType());
    }
    captured[name] = KernelArg::view(t);
  }
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (tile::ArgAttr a = tile::getArgAttr(kernel, i);
        a && a.getRole() == tile::ArgRole::Captured &&
        !captured.count(a.getArgumentName()) &&
        a.getArgumentName() != kBlockTableArgument) // made with the pages
      return kernel.emitError() << "captured input '" << a.getArgumentName()
                                << "' has no value: give it with --capture";
  return captured;
}

/// A block-sparse kernel's block mask (kBlockMaskArguments), random: each
/// block of kBlockMaskSize queries and keys is left out, partial or full
/// with equal odds (full only when it lies inside S_k: a full block's keys
/// are not checked against S_k), and listed in increasing order. The
/// tensors go into `storage` and `captured`; `classes` gets each block's
/// (0 left out, 1 partial, 2 full), [B, H, n_q, n_k] row-major. Nothing
/// when the kernel takes no block mask.
static LogicalResult makeBlockMask(func::FuncOp kernel,
                                   std::deque<HostTensor> &storage,
                                   std::mt19937_64 &rng, int64_t batch,
                                   int64_t heads, int64_t seqQ, int64_t seqK,
                                   llvm::StringMap<KernelArg> &captured,
                                   std::vector<int> &classes) {
  bool sparse = false;
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (tile::ArgAttr a = tile::getArgAttr(kernel, i))
      sparse |= a.getRole() == tile::ArgRole::Captured &&
                a.getArgumentName() == kBlockMaskArguments[0];
  if (!sparse)
    return success();
  for (const char *name : kBlockMaskArguments)
    if (captured.count(name))
      return kernel.emitError() << "--capture: '" << name
                                << "' is the block mask's, which "
                                   "tiled-attn-run makes itself";
  const int64_t n = kBlockMaskSize;
  int64_t blocksQ = std::max<int64_t>((seqQ + n - 1) / n, 1);
  int64_t blocksK = std::max<int64_t>((seqK + n - 1) / n, 1);
  MLIRContext *ctx = kernel.getContext();
  Type i32 = IntegerType::get(ctx, 32);
  HostTensor *tensors[4];
  for (int t = 0; t < 4; ++t) {
    std::vector<int64_t> sizes = {batch, heads, blocksQ};
    if (t % 2)
      sizes.push_back(blocksK);
    tensors[t] = &storage.emplace_back(HostTensor::create(i32, sizes));
    std::fill(tensors[t]->data.begin(), tensors[t]->data.end(), 0.0);
    captured[kBlockMaskArguments[t]] = KernelArg::view(*tensors[t]);
  }
  classes.assign(batch * heads * blocksQ * blocksK, 0);
  std::uniform_int_distribution<int> pick(0, 2);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < blocksQ; ++i) {
        int64_t counts[2] = {0, 0};
        for (int64_t j = 0; j < blocksK; ++j) {
          int c = pick(rng);
          if (c == 2 && (j + 1) * n > seqK)
            c = 1;
          classes[((b * heads + h) * blocksQ + i) * blocksK + j] = c;
          if (c == 0)
            continue;
          int list = c == 1 ? 0 : 2;
          tensors[list + 1]->at({b, h, i, counts[list / 2]++}) = double(j);
        }
        tensors[0]->at({b, h, i}) = double(counts[0]);
        tensors[2]->at({b, h, i}) = double(counts[1]);
      }
  return success();
}

/// The score and mask functions of the kernel's tile.apply ops, for the
/// reference: each applies its function through the host executor to the
/// captured inputs the op passes (kernel arguments).
static FailureOr<ScoreFunctions>
referenceFunctions(func::FuncOp kernel,
                   const llvm::StringMap<KernelArg> &captured) {
  ScoreFunctions functions;
  SmallVector<tile::ApplyOp> applies;
  kernel.walk([&](tile::ApplyOp apply) { applies.push_back(apply); });
  std::vector<std::function<bool(int64_t, int64_t, int64_t, int64_t)>> masks;
  for (tile::ApplyOp apply : applies) {
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        apply, apply.getCalleeAttr());
    SmallVector<KernelArg> extra;
    for (Value capture : apply.getCaptures()) {
      tile::ArgAttr arg = tile::getArgAttrOf(capture);
      if (!arg || arg.getRole() != tile::ArgRole::Captured ||
          !captured.count(arg.getArgumentName()))
        return apply.emitError() << "the reference takes captured inputs "
                                    "that are the kernel's own, given with "
                                    "--capture";
      extra.push_back(captured.lookup(arg.getArgumentName()));
    }
    auto call = [fn, extra](std::optional<double> score, int64_t b, int64_t h,
                            int64_t q, int64_t kv) {
      SmallVector<KernelArg> args;
      if (score)
        args.push_back(KernelArg::value(*score));
      for (int64_t i : {b, h, q, kv})
        args.push_back(KernelArg::index(i));
      args.append(extra.begin(), extra.end());
      FailureOr<double> r = callScalarFunction(fn, args);
      if (failed(r))
        llvm::report_fatal_error("the reference could not run a score or "
                                 "mask function");
      return *r;
    };
    if (apply.getScore()) {
      if (functions.score)
        return apply.emitError() << "the reference takes one score function";
      functions.score = [call](double s, int64_t b, int64_t h, int64_t q,
                               int64_t kv) { return call(s, b, h, q, kv); };
    } else {
      masks.push_back([call](int64_t b, int64_t h, int64_t q, int64_t kv) {
        return call(std::nullopt, b, h, q, kv) != 0.0;
      });
    }
  }
  if (!masks.empty())
    functions.mask = [masks](int64_t b, int64_t h, int64_t q, int64_t kv) {
      return llvm::all_of(masks, [&](auto &m) { return m(b, h, q, kv); });
    };
  return functions;
}

/// A paged cache of `k` and `v` ([B, H_kv, S_k, D]) for the paged `kernel`:
/// pages of --page-size keys (default 2 * block_n), [num_pages, H_kv,
/// page_size, D] laid out as vLLM's [num_pages, page_size, H_kv, D], batch
/// entry b's page i at `table`[b, i], the pages in a random order with two
/// more that no entry uses. Every element no key of an entry's first
/// `lengths[b]` fills (the last page's tail, the spare pages, the pages
/// past the used ones) holds 256, which a kernel that read it unmasked
/// would show; the table's entries past the used pages point past the
/// cache. Fails, after an error on `kernel`, on a page size that is no
/// multiple of block_n (for a kernel that gathers its key blocks from
/// several pages, tile.load's gather: not its groups' rows) or a cache past
/// the host's limit.
static LogicalResult pageCaches(func::FuncOp kernel, HostTensor &k,
                                HostTensor &v, ArrayRef<int64_t> lengths,
                                std::mt19937_64 &rng, HostTensor &kPages,
                                HostTensor &vPages, HostTensor &table) {
  const int64_t blockN =
      cast<tile::SdpaAttr>(
          kernel->getAttr(tile::TileDialect::getSdpaAttrName()))
          .getBlockN();
  int64_t groupRows = 0;
  kernel.walk([&](tile::LoadOp load) {
    if (!load.getGather().empty())
      groupRows = load.getBlockShape()[0] / load.getGather().size();
  });
  const int64_t pageSize = pageSizeOpt ? pageSizeOpt.getValue()
                           : groupRows ? groupRows
                                       : 2 * blockN;
  if (groupRows && pageSize != groupRows)
    return kernel.emitError()
           << "--page-size must be the " << groupRows
           << " rows the kernel gathers its key blocks in, got " << pageSize;
  if (!groupRows && (pageSize < 1 || pageSize % blockN))
    return kernel.emitError()
           << "--page-size must be a positive multiple of the kernel's "
              "block_n ("
           << blockN << "), got " << pageSize;
  const int64_t batch = k.sizes[0], heads = k.sizes[1], seqK = k.sizes[2];
  const int64_t perEntry =
      std::max<int64_t>((seqK + pageSize - 1) / pageSize, 1);
  const int64_t numPages = batch * perEntry + 2;
  if (numPages * heads * pageSize * k.sizes[3] > (int64_t(1) << 27))
    return kernel.emitError() << "the cache's pages exceed the host's limit";
  std::vector<int64_t> order(numPages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  table = HostTensor::create(IntegerType::get(k.elementType.getContext(), 32),
                             {batch, perEntry});
  for (int64_t b = 0; b < batch; ++b) {
    int64_t used = (lengths[b] + pageSize - 1) / pageSize;
    for (int64_t i = 0; i < perEntry; ++i)
      table.at({b, i}) = static_cast<double>(i < used ? order[b * perEntry + i]
                                                      : numPages + 3);
  }
  auto fill = [&](HostTensor &from, HostTensor &pages) {
    pages = HostTensor::create(from.elementType,
                               {numPages, heads, pageSize, from.sizes[3]},
                               {0, 2, 1, 3});
    std::fill(pages.data.begin(), pages.data.end(), 256.0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < lengths[b]; ++s) {
        int64_t page = order[b * perEntry + s / pageSize];
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < from.sizes[3]; ++c)
            pages.at({page, h, s % pageSize, c}) = from.at({b, h, s, c});
      }
  };
  fill(k, kPages);
  fill(v, vPages);
  return success();
}

/// Runs `kernel` (and `other`, when given) on random inputs of each shape
/// and compares with the float64 reference; prints a line per shape.
/// Returns the exit code: 0 when every shape passes.
static int runShapes(func::FuncOp kernel, FailureOr<func::FuncOp> other,
                     ArrayRef<Shape> shapes, const WindowRequest &request,
                     MLIRContext &context) {
  auto sdpa = cast<tile::SdpaAttr>(
      kernel->getAttr(tile::TileDialect::getSdpaAttrName()));
  Type elt = sdpa.getElementType();
  int64_t dim = sdpa.getHeadDim(), dimV = sdpa.getValueHeadDim();
  double scale = scaleOpt != 0.0 ? scaleOpt.getValue() : 1.0 / std::sqrt(dim);
  double tolerance = toleranceOpt != 0.0 ? toleranceOpt.getValue()
                     : elt.isBF16()      ? 1e-2
                                         : 2e-3;
  std::vector<int64_t> order = layoutOpt == "bshd"
                                   ? std::vector<int64_t>{0, 2, 1, 3}
                                   : std::vector<int64_t>{};
  std::mt19937_64 rng(seedOpt);
  std::normal_distribution<double> normal(0.0, 1.0);
  int64_t kvHeads = kvHeadsOpt ? kvHeadsOpt.getValue() : headsOpt.getValue();
  auto randomTensor = [&](int64_t heads, int64_t seq, int64_t cols) {
    HostTensor t = HostTensor::create(elt, {batchOpt, heads, seq, cols}, order);
    for (double &x : t.data)
      x = roundToType(normal(rng), elt);
    return t;
  };

  int passed = 0, failedCount = 0;
  for (Shape shape : shapes) {
    HostTensor q = randomTensor(headsOpt, shape.seqQ, dim),
               k = randomTensor(kvHeads, shape.seqK, dim),
               v = randomTensor(kvHeads, shape.seqK, dimV);
    HostTensor out =
        HostTensor::create(elt, {batchOpt, headsOpt, shape.seqQ, dimV}, order);
    // Poison the output, so that an element the kernel never writes shows.
    std::fill(out.data.begin(), out.data.end(),
              std::numeric_limits<double>::quiet_NaN());
    HostTensor ref = HostTensor::create(Float64Type::get(&context),
                                        {batchOpt, headsOpt, shape.seqQ, dimV});
    bool window = sdpa.getCausal() == tile::CausalMode::Window;
    Band band = window ? windowBand(request.left, request.right, request.causal,
                                    request.bottomRight, shape.seqQ, shape.seqK)
                       : bandOf(sdpa.getCausal(), shape.seqQ, shape.seqK);
    double softcap = sdpa.getFeatures().softcap ? softcapOpt.getValue() : 0.0;
    // With `lse`: the rows' log-sum-exps, poisoned like the output.
    Type f32 = Float32Type::get(&context);
    HostTensor lse = HostTensor::create(
        f32, {batchOpt, headsOpt, sdpa.getFeatures().lse ? shape.seqQ : 0});
    std::fill(lse.data.begin(), lse.data.end(),
              std::numeric_limits<double>::quiet_NaN());
    HostTensor lseRef = lse;
    std::deque<HostTensor> captureStorage;
    llvm::StringMap<KernelArg> blockMask;
    std::vector<int> blockClasses;
    if (failed(makeBlockMask(kernel, captureStorage, rng, batchOpt, headsOpt,
                             shape.seqQ, shape.seqK, blockMask, blockClasses)))
      return 1;
    FailureOr<llvm::StringMap<KernelArg>> captured =
        makeCaptures(kernel, captureStorage, rng, batchOpt, headsOpt, kvHeads,
                     shape.seqQ, shape.seqK, blockMask);
    if (failed(captured))
      return 1;
    FailureOr<ScoreFunctions> functions = referenceFunctions(kernel, *captured);
    if (failed(functions))
      return 1;
    // A block-sparse kernel sees the keys of its partial blocks that the
    // mask function keeps, and every key of its full blocks.
    if (!blockClasses.empty()) {
      const int64_t n = kBlockMaskSize, heads = headsOpt;
      int64_t blocksQ = std::max<int64_t>((shape.seqQ + n - 1) / n, 1);
      int64_t blocksK = std::max<int64_t>((shape.seqK + n - 1) / n, 1);
      functions->mask = [classes = blockClasses, inner = functions->mask, heads,
                         blocksQ, blocksK,
                         n](int64_t b, int64_t h, int64_t q, int64_t kv) {
        int c = classes[((b * heads + h) * blocksQ + q / n) * blocksK + kv / n];
        return c == 2 || (c == 1 && (!inner || inner(b, h, q, kv)));
      };
    }
    // With seqused: each batch entry's filled length (S_k for the first,
    // then 0 and 1 where the batch has room, the rest uniform in [0, S_k]);
    // the reference sees only those keys, its causal diagonal aligned by
    // that length.
    HostTensor seqUsed = HostTensor::create(
        IntegerType::get(&context, 32),
        {sdpa.getFeatures().seqused ? batchOpt.getValue() : int64_t(0)});
    std::vector<int64_t> lengths;
    if (sdpa.getFeatures().seqused) {
      std::uniform_int_distribution<int64_t> length(0, shape.seqK);
      for (int64_t b = 0; b < batchOpt; ++b) {
        int64_t len = b == 0 ? shape.seqK : b <= 2 ? b - 1 : length(rng);
        lengths.push_back(std::min(len, shape.seqK));
        seqUsed.data[b] = static_cast<double>(lengths.back());
      }
      const bool bottomRight =
          sdpa.getCausal() == tile::CausalMode::BottomRight;
      if (bottomRight)
        band = bandOf(tile::CausalMode::None, shape.seqQ, shape.seqK);
      functions->mask = [lengths, inner = functions->mask, bottomRight,
                         seqQ = shape.seqQ](int64_t b, int64_t h, int64_t q,
                                            int64_t kv) {
        int64_t used = lengths[b];
        if (kv >= used || (bottomRight && kv > q + used - seqQ))
          return false;
        return !inner || inner(b, h, q, kv);
      };
    }
    sdpaReference(q, k, v, ref, scale, band, softcap,
                  sdpa.getFeatures().lse ? &lseRef : nullptr, &*functions);
    // Paged: the kernel reads k and v from the pages of a cache.
    HostTensor kPages, vPages, blockTable;
    if (sdpa.getFeatures().paged) {
      if (failed(pageCaches(kernel, k, v, lengths, rng, kPages, vPages,
                            blockTable)))
        return 1;
      (*captured)[kBlockTableArgument] = KernelArg::view(blockTable);
    }

    // Runs a kernel on (q, k, v) into `dest` on its grid (ceil(S_q /
    // block_m), H, B), and counts the elements it left unwritten.
    auto launch = [&](func::FuncOp f, HostTensor &dest,
                      HostTensor &lseDest) -> FailureOr<int64_t> {
      auto attr = cast<tile::SdpaAttr>(
          f->getAttr(tile::TileDialect::getSdpaAttrName()));
      int64_t blockM = attr.getBlockM();
      // Split-KV: the program of (head, chunk) writes partial outputs and
      // log-sum-exps at head index head * splits + chunk.
      const int64_t splits =
          attr.getFeatures().split ? splitsOpt.getValue() : 1;
      std::array<int64_t, 3> grid = {(shape.seqQ + blockM - 1) / blockM,
                                     headsOpt * splits, batchOpt};
      HostTensor partial = HostTensor::create(
          f32, {batchOpt, headsOpt * splits, shape.seqQ, dimV});
      HostTensor partialLse =
          HostTensor::create(f32, {batchOpt, headsOpt * splits, shape.seqQ});
      auto nan = std::numeric_limits<double>::quiet_NaN();
      std::fill(partial.data.begin(), partial.data.end(), nan);
      std::fill(partialLse.data.begin(), partialLse.data.end(), nan);
      RoleValues values;
      values.q = &q, values.k = &k, values.v = &v;
      if (attr.getFeatures().paged)
        values.k = &kPages, values.v = &vPages;
      values.o = attr.getFeatures().split ? &partial : &dest;
      values.lse = attr.getFeatures().split ? &partialLse : &lseDest;
      values.scale = scale, values.softcap = softcap;
      values.windowLo = band.lo, values.windowHi = band.hi;
      values.numSplits = splits;
      values.seqUsedK = &seqUsed;
      values.captured = &*captured;
      FailureOr<SmallVector<KernelArg>> args = bindByRole(f, values);
      if (failed(args) || failed(runKernel(f, *args, grid)))
        return failure();
      auto isNan = [](double x) { return std::isnan(x); };
      if (attr.getFeatures().split) {
        int64_t unwritten = llvm::count_if(partial.data, isNan) +
                            llvm::count_if(partialLse.data, isNan);
        mergeSplits(partial, partialLse, splits, dest, lseDest);
        return unwritten;
      }
      return llvm::count_if(dest.data, isNan) +
             llvm::count_if(lseDest.data, isNan);
    };
    FailureOr<int64_t> unwritten = launch(kernel, out, lse);
    if (failed(unwritten))
      return 1;
    double error = relativeL2(out, ref);
    bool ok = *unwritten == 0 && error <= tolerance;
    // The log-sum-exps: an absolute error (they are logs), and -inf exactly
    // where the reference has it (a row that saw no key).
    std::optional<double> lseError;
    if (sdpa.getFeatures().lse) {
      lseError = maxLseError(lse, lseRef);
      ok = ok && *lseError <= lseToleranceOpt;
    }

    // The transformed kernel: same inputs, the same or nearly the same output.
    std::optional<double> difference;
    if (succeeded(other)) {
      HostTensor out2 = out, lse2 = lse;
      std::fill(out2.data.begin(), out2.data.end(),
                std::numeric_limits<double>::quiet_NaN());
      std::fill(lse2.data.begin(), lse2.data.end(),
                std::numeric_limits<double>::quiet_NaN());
      FailureOr<int64_t> unwritten2 = launch(*other, out2, lse2);
      if (failed(unwritten2))
        return 1;
      *unwritten += *unwritten2;
      difference = relativeL2(out2, out);
      ok = ok && *unwritten2 == 0 && *difference <= equivalenceTolerance &&
           relativeL2(out2, ref) <= tolerance;
      if (sdpa.getFeatures().lse)
        ok = ok && maxLseError(lse2, lseRef) <= lseToleranceOpt;
    }
    (ok ? passed : failedCount)++;
    llvm::outs() << kernel.getSymName() << " B=" << batchOpt
                 << " H=" << headsOpt;
    if (kvHeads != headsOpt)
      llvm::outs() << " Hkv=" << kvHeads;
    llvm::outs() << " Sq=" << shape.seqQ << " Sk=" << shape.seqK
                 << " D=" << dim;
    if (dimV != dim)
      llvm::outs() << " Dv=" << dimV;
    llvm::outs() << " " << elt
                 << " causal=" << tile::stringifyCausalMode(sdpa.getCausal());
    if (window)
      llvm::outs() << " band=[" << band.lo << "," << band.hi << "]";
    llvm::outs() << " layout=" << layoutOpt
                 << ": rel_l2=" << llvm::format("%.3e", error)
                 << " tol=" << llvm::format("%.1e", tolerance);
    if (lseError)
      llvm::outs() << " lse_err=" << llvm::format("%.1e", *lseError);
    if (difference)
      llvm::outs() << " vs " << (*other).getSymName()
                   << ": diff=" << llvm::format("%.3e", *difference) << " (tol "
                   << llvm::format("%.1e", equivalenceTolerance.getValue())
                   << ")";
    if (*unwritten)
      llvm::outs() << " unwritten=" << *unwritten;
    llvm::outs() << (ok ? " PASS" : " FAIL") << "\n";
  }
  llvm::outs() << passed << " passed, " << failedCount << " failed\n";
  return failedCount == 0 ? 0 : 1;
}

/// Runs a varlen kernel (and `other`) once on the sequences of `shapes`
/// packed into [total, H, D] tensors, with a few rows past the last
/// sequence that must stay unwritten, and compares each sequence with the
/// float64 reference of it alone. Returns the exit code.
static int runVarlen(func::FuncOp kernel, FailureOr<func::FuncOp> other,
                     ArrayRef<Shape> shapes, const WindowRequest &request,
                     MLIRContext &context) {
  auto sdpa = cast<tile::SdpaAttr>(
      kernel->getAttr(tile::TileDialect::getSdpaAttrName()));
  Type elt = sdpa.getElementType(), f32 = Float32Type::get(&context),
       f64 = Float64Type::get(&context), i32 = IntegerType::get(&context, 32);
  int64_t dim = sdpa.getHeadDim(), dimV = sdpa.getValueHeadDim(),
          heads = headsOpt;
  int64_t kvHeads = kvHeadsOpt ? kvHeadsOpt.getValue() : heads;
  double scale = scaleOpt != 0.0 ? scaleOpt.getValue() : 1.0 / std::sqrt(dim);
  double tolerance = toleranceOpt != 0.0 ? toleranceOpt.getValue()
                     : elt.isBF16()      ? 1e-2
                                         : 2e-3;
  double softcap = sdpa.getFeatures().softcap ? softcapOpt.getValue() : 0.0;
  bool window = sdpa.getCausal() == tile::CausalMode::Window;
  const int64_t extra = 3; // rows past the last sequence
  int64_t numSeqs = shapes.size(), totalQ = 0, totalK = 0, maxQ = 0, maxK = 0;
  HostTensor cuQ = HostTensor::create(i32, {numSeqs + 1});
  HostTensor cuK = HostTensor::create(i32, {numSeqs + 1});
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    totalQ += shape.seqQ;
    totalK += shape.seqK;
    maxQ = std::max(maxQ, shape.seqQ);
    maxK = std::max(maxK, shape.seqK);
    cuQ.data[i + 1] = static_cast<double>(totalQ);
    cuK.data[i + 1] = static_cast<double>(totalK);
  }
  // Packed [total, H, D] tensors, seen as [1, H, total, D].
  std::mt19937_64 rng(seedOpt);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<int64_t> packed = {0, 2, 1, 3};
  auto randomTensor = [&](int64_t h, int64_t rows, int64_t cols) {
    HostTensor t = HostTensor::create(elt, {1, h, rows, cols}, packed);
    for (double &x : t.data)
      x = roundToType(normal(rng), elt);
    return t;
  };
  HostTensor q = randomTensor(heads, totalQ + extra, dim),
             k = randomTensor(kvHeads, totalK + extra, dim),
             v = randomTensor(kvHeads, totalK + extra, dimV);
  double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor out =
      HostTensor::create(elt, {1, heads, totalQ + extra, dimV}, packed);
  std::fill(out.data.begin(), out.data.end(), nan);
  HostTensor lse = HostTensor::create(
      f32, {1, heads, sdpa.getFeatures().lse ? totalQ + extra : 0});
  std::fill(lse.data.begin(), lse.data.end(), nan);

  // The reference, one sequence at a time, over the packed rows.
  HostTensor ref = HostTensor::create(f64, {1, heads, totalQ, dimV});
  HostTensor lseRef = HostTensor::create(f32, {1, heads, totalQ});
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    int64_t q0 = static_cast<int64_t>(cuQ.data[i]),
            k0 = static_cast<int64_t>(cuK.data[i]);
    auto rows = [&](HostTensor &from, int64_t h, int64_t first, int64_t n) {
      int64_t cols = from.sizes[3];
      HostTensor t = HostTensor::create(elt, {1, h, n, cols});
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t r = 0; r < n; ++r)
          for (int64_t d = 0; d < cols; ++d)
            t.at({0, hh, r, d}) = from.at({0, hh, first + r, d});
      return t;
    };
    HostTensor sq = rows(q, heads, q0, shape.seqQ),
               sk = rows(k, kvHeads, k0, shape.seqK),
               sv = rows(v, kvHeads, k0, shape.seqK);
    HostTensor so = HostTensor::create(f64, {1, heads, shape.seqQ, dimV});
    HostTensor sl = HostTensor::create(f32, {1, heads, shape.seqQ});
    Band band = window ? windowBand(request.left, request.right, request.causal,
                                    request.bottomRight, shape.seqQ, shape.seqK)
                       : bandOf(sdpa.getCausal(), shape.seqQ, shape.seqK);
    if (shape.seqQ > 0 && shape.seqK > 0)
      sdpaReference(sq, sk, sv, so, scale, band, softcap, &sl);
    else // no queries, or no keys: zeros and -inf
      std::fill(sl.data.begin(), sl.data.end(),
                -std::numeric_limits<double>::infinity());
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t r = 0; r < shape.seqQ; ++r) {
        lseRef.at({0, h, q0 + r}) = sl.at({0, h, r});
        for (int64_t d = 0; d < dimV; ++d)
          ref.at({0, h, q0 + r, d}) = so.at({0, h, r, d});
      }
  }
  // With seqused, each sequence's length is its own S_k; paged, its keys
  // are copied into pages of a cache (pageCaches) and k and v are those.
  HostTensor seqUsed = HostTensor::create(
      i32, {sdpa.getFeatures().seqused ? numSeqs : int64_t(0)});
  HostTensor kPages, vPages, blockTable;
  llvm::StringMap<KernelArg> captured;
  if (sdpa.getFeatures().seqused)
    for (auto [i, shape] : llvm::enumerate(shapes))
      seqUsed.data[i] = static_cast<double>(shape.seqK);
  if (sdpa.getFeatures().paged) {
    // The sequences' keys as [num_seqs, H_kv, max S_k, D] entries.
    auto entries = [&](HostTensor &from) {
      HostTensor t = HostTensor::create(
          elt, {numSeqs, kvHeads, std::max<int64_t>(maxK, 1), from.sizes[3]});
      for (auto [i, shape] : llvm::enumerate(shapes))
        for (int64_t h = 0; h < kvHeads; ++h)
          for (int64_t r = 0; r < shape.seqK; ++r)
            for (int64_t d = 0; d < from.sizes[3]; ++d)
              t.at({int64_t(i), h, r, d}) =
                  from.at({0, h, static_cast<int64_t>(cuK.data[i]) + r, d});
      return t;
    };
    HostTensor ks = entries(k), vs = entries(v);
    std::vector<int64_t> lengths;
    for (const Shape &shape : shapes)
      lengths.push_back(shape.seqK);
    if (failed(pageCaches(kernel, ks, vs, lengths, rng, kPages, vPages,
                          blockTable)))
      return 1;
    captured[kBlockTableArgument] = KernelArg::view(blockTable);
  }
  // A window kernel's diagonals relative to the top-left alignment, with
  // sides past every sequence's diagonals unbounded; window_align shifts
  // them by each sequence's S_k - S_q.
  int64_t unbounded = maxQ + maxK;
  int64_t lo =
      request.left >= 0 ? -std::min(request.left, unbounded) : -unbounded;
  int64_t hi =
      request.right >= 0 ? std::min(request.right, unbounded) : unbounded;
  if (request.causal)
    hi = std::min<int64_t>(hi, 0);

  auto launch = [&](func::FuncOp f, HostTensor &dest,
                    HostTensor &lseDest) -> LogicalResult {
    int64_t blockM =
        cast<tile::SdpaAttr>(f->getAttr(tile::TileDialect::getSdpaAttrName()))
            .getBlockM();
    std::array<int64_t, 3> grid = {
        std::max<int64_t>(1, (maxQ + blockM - 1) / blockM), heads, numSeqs};
    RoleValues values;
    values.q = &q, values.k = &k, values.v = &v, values.o = &dest;
    if (sdpa.getFeatures().paged)
      values.k = &kPages, values.v = &vPages;
    values.seqUsedK = &seqUsed, values.captured = &captured;
    values.lse = &lseDest, values.cuSeqlensQ = &cuQ, values.cuSeqlensK = &cuK;
    values.scale = scale, values.softcap = softcap;
    values.windowLo = lo, values.windowHi = hi;
    values.windowAlign = request.bottomRight ? 1 : 0;
    FailureOr<SmallVector<KernelArg>> args = bindByRole(f, values);
    if (failed(args))
      return failure();
    return runKernel(f, *args, grid);
  };
  // Checks one run: the sequences' rows against the reference, the rows
  // past the last sequence unwritten.
  struct Result {
    double error = 0, lseError = 0;
    int64_t unwritten = 0, written = 0;
    HostTensor covered; // the sequences' rows
  };
  auto check = [&](HostTensor &dest, HostTensor &lseDest) {
    Result r;
    HostTensor covered = HostTensor::create(f64, {1, heads, totalQ, dimV});
    HostTensor lseCovered = HostTensor::create(f32, {1, heads, totalQ});
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t row = 0; row < totalQ + extra; ++row) {
        for (int64_t d = 0; d < dimV; ++d) {
          double x = dest.at({0, h, row, d});
          if (row < totalQ) {
            covered.at({0, h, row, d}) = x;
            r.unwritten += std::isnan(x);
          } else {
            r.written += !std::isnan(x);
          }
        }
        if (lseDest.sizes[2] > 0) {
          double x = lseDest.at({0, h, row});
          if (row < totalQ)
            lseCovered.at({0, h, row}) = x;
          else
            r.written += !std::isnan(x);
        }
      }
    r.error = relativeL2(covered, ref);
    r.covered = std::move(covered);
    if (lseDest.sizes[2] > 0)
      r.lseError = maxLseError(lseCovered, lseRef);
    return r;
  };
  if (failed(launch(kernel, out, lse)))
    return 1;
  Result result = check(out, lse);
  bool ok = result.unwritten == 0 && result.written == 0 &&
            result.error <= tolerance &&
            (!sdpa.getFeatures().lse || result.lseError <= lseToleranceOpt);
  // An lse kernel asked for no log-sum-exps (a view of no rows, as the
  // runtime passes): the same output, and nothing written past it.
  if (sdpa.getFeatures().lse) {
    HostTensor out2 = out;
    HostTensor none = HostTensor::create(f32, {1, heads, 0});
    std::fill(out2.data.begin(), out2.data.end(), nan);
    if (failed(launch(kernel, out2, none)))
      return 1;
    Result r2 = check(out2, none);
    ok = ok && r2.unwritten == 0 && r2.written == 0 &&
         relativeL2(r2.covered, result.covered) == 0.0;
  }
  std::optional<double> difference;
  if (succeeded(other)) {
    HostTensor out2 = out, lse2 = lse;
    std::fill(out2.data.begin(), out2.data.end(), nan);
    std::fill(lse2.data.begin(), lse2.data.end(), nan);
    if (failed(launch(*other, out2, lse2)))
      return 1;
    Result r2 = check(out2, lse2);
    difference = relativeL2(r2.covered, result.covered);
    ok = ok && r2.unwritten == 0 && r2.written == 0 && r2.error <= tolerance &&
         *difference <= equivalenceTolerance &&
         (!sdpa.getFeatures().lse || r2.lseError <= lseToleranceOpt);
  }
  llvm::outs() << kernel.getSymName() << " varlen H=" << heads;
  if (kvHeads != heads)
    llvm::outs() << " Hkv=" << kvHeads;
  llvm::outs() << " seqs=";
  llvm::interleave(
      shapes, llvm::outs(),
      [](const Shape &s) { llvm::outs() << s.seqQ << "x" << s.seqK; }, ",");
  llvm::outs() << " D=" << dim;
  if (dimV != dim)
    llvm::outs() << " Dv=" << dimV;
  llvm::outs() << " " << elt
               << " causal=" << tile::stringifyCausalMode(sdpa.getCausal());
  if (window)
    llvm::outs() << " band=[" << lo << "," << hi << "]"
                 << (request.bottomRight ? " bottom-right" : "");
  llvm::outs() << ": rel_l2=" << llvm::format("%.3e", result.error)
               << " tol=" << llvm::format("%.1e", tolerance);
  if (sdpa.getFeatures().lse)
    llvm::outs() << " lse_err=" << llvm::format("%.1e", result.lseError);
  if (difference)
    llvm::outs() << " vs " << (*other).getSymName()
                 << ": diff=" << llvm::format("%.3e", *difference);
  if (result.unwritten)
    llvm::outs() << " unwritten=" << result.unwritten;
  if (result.written)
    llvm::outs() << " written_past_end=" << result.written;
  llvm::outs() << (ok ? " PASS" : " FAIL") << "\n";
  return ok ? 0 : 1;
}

/// The most elements of q, k, v, o and the log-sum-exps one host run
/// holds (in float64 with the reference: some 2 GiB); the host executor is
/// for small problems.
constexpr int64_t kMaxHostElements = int64_t(1) << 27;

/// Refuses a problem too large to hold on the host (or whose element count
/// overflows), before anything is allocated.
static LogicalResult checkProblemSize(func::FuncOp kernel, tile::SdpaAttr sdpa,
                                      ArrayRef<Shape> shapes) {
  int64_t d = sdpa.getHeadDim(), dv = sdpa.getValueHeadDim();
  int64_t heads = headsOpt, kvHeads = kvHeadsOpt ? int64_t(kvHeadsOpt) : heads;
  bool overflow = false;
  auto mul = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  };
  auto add = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  };
  // Elements of one (S_q, S_k) problem of `batch` sequences.
  auto elements = [&](int64_t batch, int64_t seqQ, int64_t seqK) {
    int64_t perQuery = add(mul(heads, add(d, dv)), heads); // q, o, lse
    int64_t perKey = mul(kvHeads, add(d, dv));             // k, v
    return mul(batch, add(mul(seqQ, perQuery), mul(seqK, perKey)));
  };
  int64_t largest = 0;
  if (sdpa.getFeatures().varlen) {
    int64_t totalQ = 0, totalK = 0;
    for (const Shape &s : shapes) {
      totalQ = add(totalQ, s.seqQ);
      totalK = add(totalK, s.seqK);
    }
    largest = elements(1, totalQ, totalK);
  } else {
    for (const Shape &s : shapes)
      largest = std::max(largest, elements(batchOpt, s.seqQ, s.seqK));
  }
  if (overflow || largest > kMaxHostElements) {
    auto diag = kernel.emitError()
                << "the problem (--batch " << int64_t(batchOpt) << ", --heads "
                << heads << ", --kv-heads " << kvHeads << ", --shapes "
                << shapesOpt << ") needs ";
    if (overflow)
      diag << "more than 2^63 elements";
    else
      diag << largest << " elements";
    diag << " of q, k, v and o; the host executor takes at most "
         << kMaxHostElements << " (2^27) at once";
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tiled-attn-run: run an SDPA tile kernel on the host and compare it "
      "with a float64 reference\n");

  if (layoutOpt != "bhsd" && layoutOpt != "bshd") {
    llvm::errs() << "error: --layout must be bhsd or bshd, got '" << layoutOpt
                 << "'\n";
    return 2;
  }
  if (batchOpt < 1 || headsOpt < 1) {
    llvm::errs() << "error: --batch and --heads must be at least 1\n";
    return 2;
  }
  if (kvHeadsOpt < 0 || (kvHeadsOpt > 0 && headsOpt % kvHeadsOpt != 0)) {
    llvm::errs() << "error: --kv-heads (" << kvHeadsOpt
                 << ") must divide --heads (" << headsOpt << ")\n";
    return 2;
  }
  WindowRequest request;
  {
    auto [left, right] = StringRef(windowOpt).split(',');
    if (left.trim().getAsInteger(10, request.left) ||
        right.trim().getAsInteger(10, request.right) || request.left < -1 ||
        request.right < -1) {
      llvm::errs() << "error: --window: expected LEFT,RIGHT with each -1 or "
                      "more, got '"
                   << windowOpt << "'\n";
      return 2;
    }
    if (windowAlignOpt != "top-left" && windowAlignOpt != "bottom-right") {
      llvm::errs() << "error: --window-align must be top-left or "
                      "bottom-right, got '"
                   << windowAlignOpt << "'\n";
      return 2;
    }
    request.causal = windowCausalOpt;
    request.bottomRight = windowAlignOpt == "bottom-right";
  }
  bool windowAsked = windowOpt.getNumOccurrences() ||
                     windowCausalOpt.getNumOccurrences() ||
                     windowAlignOpt.getNumOccurrences();

  DialectRegistry registry;
  registry.insert<tile::TileDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  KernelFiles files(context);
  auto kernel = files.load(inputFile);
  if (failed(kernel))
    return 2;
  auto sdpa = cast<tile::SdpaAttr>(
      (*kernel)->getAttr(tile::TileDialect::getSdpaAttrName()));
  if (windowAsked && sdpa.getCausal() != tile::CausalMode::Window) {
    kernel->emitError() << "--window, --window-causal and --window-align are "
                           "for `window` kernels; this one is "
                        << sdpa;
    return 2;
  }
  auto shapes = parseShapes(shapesOpt, sdpa.getFeatures().varlen ? 0 : 1);
  if (failed(shapes))
    return 2;
  if (sdpa.getFeatures().varlen &&
      (batchOpt.getNumOccurrences() || layoutOpt.getNumOccurrences())) {
    kernel->emitError() << "a varlen kernel runs the sequences of --shapes "
                           "packed ([total, H, D]); --batch and --layout do "
                           "not apply";
    return 2;
  }
  if (failed(checkProblemSize(*kernel, sdpa, *shapes)))
    return 2;
  FailureOr<func::FuncOp> other = failure();
  if (!compareWith.empty()) {
    other = files.load(compareWith);
    if (failed(other))
      return 2;
    auto otherSdpa = cast<tile::SdpaAttr>(
        (*other)->getAttr(tile::TileDialect::getSdpaAttrName()));
    if (otherSdpa.getHeadDim() != sdpa.getHeadDim() ||
        otherSdpa.getValueHeadDim() != sdpa.getValueHeadDim() ||
        otherSdpa.getElementType() != sdpa.getElementType() ||
        otherSdpa.getCausal() != sdpa.getCausal() ||
        otherSdpa.getFeatures().softcap != sdpa.getFeatures().softcap ||
        otherSdpa.getFeatures().varlen != sdpa.getFeatures().varlen) {
      other->emitError() << "computes something else than the kernel it is "
                            "compared with: "
                         << otherSdpa << " vs " << sdpa;
      return 2;
    }
  }

  if (sdpa.getFeatures().varlen)
    return runVarlen(*kernel, other, *shapes, request, context);
  return runShapes(*kernel, other, *shapes, request, context);
}

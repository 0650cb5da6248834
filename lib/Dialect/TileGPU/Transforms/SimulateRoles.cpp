//===- SimulateRoles.cpp - Run a kernel's synchronization on the host -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What cannot run here (no Blackwell GPU is lent) is checked another way:
// this pass runs a kernel's synchronization, not its arithmetic, on the
// host, for one query block, under many random schedules. It models TMA,
// mbarriers, tcgen05 and tensor memory (Blackwell), and wgmma, mma.sync
// reads of shared memory and ping-pong turns (Hopper), so the Hopper
// kernels that ran clean under compute-sanitizer check the model.
//
// - Agents: each warp role's groups of warps (a softmax warpgroup, the TMA
//   producer warp, an MMA warp), or the kernel's groups without roles. An
//   agent runs its region op by op: scalar arith, loops and branches, slot
//   and group indices are computed; register tiles are not.
// - mbarriers count arrivals and phases (an arrival on tilegpu.mbarrier_
//   arrive is one per warp of the agent); a wait passes when the phase of
//   its parity has completed (the current phase's parity differs), as
//   mbarrier.try_wait.parity does.
// - Asynchronous work: a TMA copy lands later, in any order, and then
//   completes its transaction on its mbarrier; a tcgen05 product joins its
//   issuer's queue, which runs in issue order (the order FlashAttention-4
//   relies on), and a commit in that queue arrives on its mbarrier once the
//   products before it have completed; a wgmma group runs until the
//   tilegpu.mma_wait that leaves at most `pending` groups in flight (groups
//   complete in order).
// - Ping-pong turns: each warpgroup is an agent; a pass gives the next one
//   a turn, a take waits for one.
// - TMA reductions (tilegpu.tma_reduce, from the first thread of a role)
//   read their shared buffer until that thread's tilegpu.tma_reduce_wait
//   (the longest they may: the model never finishes them earlier); a
//   write of that memory before it, or a kernel that ends with one in
//   flight, is an error.
// - Hazards: a product (or ldmatrix, or a local load) that reads shared
//   memory whose copy has not landed, a copy (or a staged store) into
//   shared memory that a product still reads, a tcgen05.ld/st (or the
//   correction) of tensor-memory columns that a product in flight writes
//   (or reads, for a write), and products of two issuers on the same
//   columns, and a use of an mbarrier after a write of a buffer placed
//   over its bytes: each is an error naming both ops. So is a deadlock (every
//   agent waits and nothing is in flight), with each agent's wait.
//
// Each schedule picks, at every step, a random runnable agent or a random
// piece of asynchronous work to finish. A kernel passes when every schedule
// runs to its end.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"
#include "tiled_attn/Kernels/SdpaKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <deque>
#include <random>

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUSIMULATEROLESPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// A buffer, or a slot of a ring: its type and first byte (shared memory)
/// or column (tensor memory).
struct BufferRef {
  BufferType type;
  int64_t offset = 0;
};

/// A value the simulation knows: an integer (index, i1 to i64), a buffer,
/// or something it does not compute (a register tile, a float).
struct SimValue {
  /// Product: a wgmma accumulator in flight, `i` its issue number.
  enum Kind { Opaque, Int, Buffer, Product } kind = Opaque;
  int64_t i = 0;
  BufferRef buffer;
  static SimValue ofInt(int64_t v) { return {Int, v, {}}; }
  static SimValue ofBuffer(BufferRef b) { return {Buffer, 0, b}; }
};

/// A range of shared-memory bytes or tensor-memory columns.
struct Span {
  MemorySpace space;
  int64_t begin, end;
  bool overlaps(const Span &o) const {
    return space == o.space && begin < o.end && o.begin < end;
  }
};

/// A tcgen05 product in an issuer's queue, or a commit after it; or a
/// wgmma group.
struct Pending {
  Operation *op;
  SmallVector<Span> reads, writes;
  int64_t commitTo = -1; // a commit: the mbarrier's byte address
  int64_t issue = -1;    // a wgmma group: its issue number
};

struct Copy {
  Operation *op;
  Span dst;
  int64_t barrier;
};

struct Barrier {
  int64_t expected = 0, pending = 0, inFlight = 0, completed = 0;
};

struct Frame {
  Block *block;
  Block::iterator it;
  Operation *owner = nullptr; // the scf.for or scf.if whose body this is
  int64_t iv = 0, ub = 0, step = 0;
};

/// What the simulation runs: one query block of one head (and, for a
/// `window` kernel, the band of diagonals its queries see).
struct Config {
  int64_t seqQ, seqK, block, maxSteps;
  int64_t windowLo = 0, windowHi = 0;
  /// A block-sparse kernel's block mask: the partial and the full blocks
  /// of the query block (their indices: 0, 1, ...).
  int64_t partialBlocks = 0, fullBlocks = 0;
  /// Query heads per key/value head.
  int64_t group = 1;
};

/// Whether `func` takes a band of diagonals (window_lo, window_hi).
bool takesWindow(func::FuncOp func) {
  return static_cast<bool>(tile::findArgument(func, tile::ArgRole::WindowLo));
}

/// Whether `func` is a block-sparse kernel: it takes a block mask.
bool takesBlockMask(func::FuncOp func) {
  return llvm::any_of(func.getArguments(), [](BlockArgument arg) {
    tile::ArgAttr role = tile::getArgAttrOf(arg);
    return role && role.getArgumentName() == kBlockMaskArguments[0];
  });
}

struct Agent {
  int64_t role = 0, group = 0, groups = 1, warps = 1;
  std::string name;
  llvm::DenseMap<Value, SimValue> env;
  SmallVector<Frame> stack;
  std::deque<Pending> queue; // its products and commits in flight
  std::deque<Pending> wgmma; // its wgmma groups in flight
  bool done = false;
  int64_t barrierGeneration = 0; // the CTA barrier it waits at, if any
};

class Simulator {
public:
  Simulator(func::FuncOp func, Config config, uint64_t seed, bool lazy)
      : func(func), options(config), rng(seed), lazy(lazy) {}
  /// Runs one schedule; the number of steps, or failure with an error.
  FailureOr<int64_t> run();

private:
  LogicalResult spawn();
  LogicalResult step(Agent &agent, bool &blocked);
  /// Whether `agent` may run `op` now: not while its mbarrier phase, CTA
  /// barrier generation, wgmma groups or ping-pong turn is not there yet.
  /// The schedule's probe and the op's execution both ask it.
  FailureOr<bool> mayGo(Agent &agent, Operation *op);
  LogicalResult execute(Agent &agent, Operation *op, bool &blocked);
  LogicalResult finishCopy(size_t index);
  LogicalResult finishHead(Agent &agent);
  LogicalResult arrive(Operation *op, int64_t address, int64_t count);
  FailureOr<SimValue> valueOf(Agent &agent, Value v);
  FailureOr<int64_t> intOf(Agent &agent, Value v);
  FailureOr<int64_t> barrierAddress(Agent &agent, Value barriers, Value index);
  /// The span of row block `block` of a buffer.
  Span spanOf(const BufferRef &ref, int64_t block) const;
  /// The row block an agent's tensor-memory access or product covers.
  FailureOr<int64_t> blockOf(Agent &agent, Operation *op, BufferType type,
                             int64_t blocks);
  /// An error on `op` saying `what`, with a note on `other` (`note`).
  LogicalResult hazard(Operation *op, Operation *other, const Twine &what,
                       StringRef note = "still in flight: this op");
  void bind(Agent &agent, Value v, SimValue s) { agent.env[v] = s; }

  func::FuncOp func;
  Config options;
  std::mt19937_64 rng;
  bool lazy;
  std::vector<Agent> agents;
  llvm::DenseMap<int64_t, Barrier> barriers; // by byte address
  /// mbarriers whose bytes a write of a buffer placed over them (the
  /// allocator's reuse of their memory) has overwritten, and that write.
  llvm::DenseMap<int64_t, Operation *> overwritten;
  /// An error where `op` uses the mbarrier at `address` after its memory
  /// was overwritten.
  LogicalResult checkBarrierAlive(Operation *op, int64_t address);
  std::vector<Copy> copies;
  /// TMA reductions in flight, by the role whose first thread issued them.
  llvm::DenseMap<int64_t, SmallVector<Pending>> reductions;
  /// Per role: agents at its CTA barrier, and the barrier's generation.
  llvm::DenseMap<int64_t, int64_t> atBarrier, generation;
  llvm::DenseMap<int64_t, int64_t> roleAgents;
  int64_t issued = 0; // wgmma groups issued
  /// Ping-pong: the turns passed to each consumer group and not yet taken.
  llvm::DenseMap<int64_t, int64_t> turns;
  /// Row vectors handed over through shared memory (the correction's
  /// factors), by byte address and row block: the store not yet read.
  llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> handedOver;
  /// The roles whose end frees tensor memory: the first, and those whose
  /// threads read or write it.
  llvm::DenseSet<int64_t> holdTensorMemory = {0};
  /// The row block of a rows vector that `agent` writes or reads.
  int64_t rowBlockOf(const Agent &agent, RankedTensorType type) const {
    auto lanes = dyn_cast<TmemLanesLayoutAttr>(type.getEncoding());
    return lanes && lanes.getRowBlocks() > 1
               ? agent.group % lanes.getRowBlocks()
               : 0;
  }
  /// Shared memory an op reads or writes at once: no copy may be writing
  /// it (and for a write, no product reading it).
  LogicalResult touchShared(Operation *op, const Span &span, bool writes);
};

Span Simulator::spanOf(const BufferRef &ref, int64_t block) const {
  BufferType type = ref.type;
  if (type.getMemorySpace() != MemorySpace::Tensor)
    return {type.getMemorySpace(), ref.offset,
            ref.offset + (type.isRing() ? type.getTileSize()
                                        : type.getAllocationSize())};
  int64_t width = type.getRowBlockColumns();
  int64_t step = type.getShape()[0] > 128 ? type.getRowBlockStep() : 0;
  int64_t begin = ref.offset + block * step;
  return {MemorySpace::Tensor, begin, begin + width};
}

LogicalResult Simulator::checkBarrierAlive(Operation *op, int64_t address) {
  if (Operation *writer = overwritten.lookup(address))
    return hazard(op, writer,
                  "uses an mbarrier whose shared memory a buffer placed over "
                  "it has overwritten",
                  "overwritten by this op");
  return success();
}

LogicalResult Simulator::touchShared(Operation *op, const Span &span,
                                     bool writes) {
  if (writes && span.space == MemorySpace::Shared)
    for (auto &[address, barrier] : barriers)
      if (address < span.end && span.begin < address + 8)
        overwritten.try_emplace(address, op);
  for (Copy &c : copies)
    if (c.dst.overlaps(span))
      return hazard(op, c.op,
                    writes ? "writes shared memory that a TMA copy still "
                             "writes"
                           : "reads shared memory whose TMA copy has not "
                             "landed");
  if (writes)
    for (auto &[role, inFlight] : reductions)
      for (const Pending &r : inFlight)
        for (const Span &read : r.reads)
          if (read.overlaps(span))
            return hazard(op, r.op,
                          "writes shared memory that a TMA reduction still "
                          "reads");
  if (writes)
    for (Agent &other : agents)
      for (const std::deque<Pending> *inFlight : {&other.queue, &other.wgmma})
        for (const Pending &p : *inFlight)
          for (const Span &read : p.reads)
            if (read.overlaps(span))
              return hazard(op, p.op,
                            "writes shared memory that a product still "
                            "reads");
  return success();
}

LogicalResult Simulator::hazard(Operation *op, Operation *other,
                                const Twine &what, StringRef note) {
  InFlightDiagnostic diag = op->emitError()
                            << "tilegpu-simulate-roles: " << what;
  if (other)
    diag.attachNote(other->getLoc()) << note;
  return failure();
}

FailureOr<SimValue> Simulator::valueOf(Agent &agent, Value v) {
  auto it = agent.env.find(v);
  if (it != agent.env.end())
    return it->second;
  return SimValue();
}

FailureOr<int64_t> Simulator::intOf(Agent &agent, Value v) {
  SimValue s = *valueOf(agent, v);
  if (s.kind != SimValue::Int) {
    Operation *at = v.getDefiningOp() ? v.getDefiningOp()
                                      : v.getParentRegion()->getParentOp();
    return at->emitError()
           << "tilegpu-simulate-roles: the synchronization depends on a "
              "value the simulation does not compute";
  }
  return s.i;
}

FailureOr<int64_t> Simulator::barrierAddress(Agent &agent, Value buffer,
                                             Value index) {
  SimValue b = *valueOf(agent, buffer);
  FailureOr<int64_t> i = intOf(agent, index);
  if (b.kind != SimValue::Buffer || failed(i))
    return failure();
  return b.buffer.offset + 8 * *i;
}

FailureOr<int64_t> Simulator::blockOf(Agent &agent, Operation *op,
                                      BufferType type, int64_t blocks) {
  (void)type;
  if (blocks == 1)
    return 0;
  if (blocks == agent.groups)
    return agent.group;
  return op->emitError() << "tilegpu-simulate-roles: " << blocks
                         << " row blocks among " << agent.groups
                         << " groups of the agent's role is not modelled";
}

LogicalResult Simulator::arrive(Operation *op, int64_t address, int64_t count) {
  if (failed(checkBarrierAlive(op, address)))
    return failure();
  auto it = barriers.find(address);
  if (it == barriers.end())
    return op->emitError() << "tilegpu-simulate-roles: arrives on an "
                              "mbarrier that was never initialized";
  Barrier &b = it->second;
  b.pending -= count;
  if (b.pending < 0)
    return op->emitError()
           << "tilegpu-simulate-roles: " << -b.pending
           << " arrival(s) more than the mbarrier expects in a phase ("
           << b.expected << ")";
  if (b.pending == 0 && b.inFlight == 0) {
    ++b.completed;
    b.pending = b.expected;
  }
  return success();
}

LogicalResult Simulator::finishCopy(size_t index) {
  Copy copy = copies[index];
  copies.erase(copies.begin() + index);
  if (failed(checkBarrierAlive(copy.op, copy.barrier)))
    return failure();
  Barrier &b = barriers[copy.barrier];
  --b.inFlight;
  if (b.pending == 0 && b.inFlight == 0) {
    ++b.completed;
    b.pending = b.expected;
  }
  return success();
}

LogicalResult Simulator::finishHead(Agent &agent) {
  Pending head = agent.queue.front();
  agent.queue.pop_front();
  if (head.commitTo >= 0)
    return arrive(head.op, head.commitTo, 1);
  return success();
}

LogicalResult Simulator::spawn() {
  auto warpsAttr =
      func->getAttrOfType<IntegerAttr>(TileGPUDialect::getWarpsAttrName());
  int64_t kernelWarps = warpsAttr ? warpsAttr.getInt() : 4;
  WarpSpecializeOp roles;
  func.walk([&](WarpSpecializeOp op) { roles = op; });
  // The groups a region's ops split its threads into.
  auto groupsIn = [](Region &region) {
    int64_t groups = 1;
    region.walk([&](Operation *op) {
      if (auto g = dyn_cast<GroupIdOp>(op))
        groups = std::max<int64_t>(groups, g.getGroups());
      if (auto g = dyn_cast<GroupBarrierOp>(op))
        groups = std::max<int64_t>(groups, g.getGroups());
      if (auto c = dyn_cast<MmaCommitOp>(op))
        groups = std::max<int64_t>(groups, c.getGroups());
    });
    return groups;
  };
  // Ping-pong turns pass between warpgroups: each is an agent.
  auto hasTurns = [](Region &region) {
    return region
        .walk([](Operation *op) {
          return isa<TurnStartOp, TurnTakeOp, TurnPassOp>(op)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  };
  auto addRole = [&](int64_t role, StringRef name, Block *body, int64_t warps,
                     int64_t groups, const Agent &prologue) {
    if (warps % groups)
      return failure();
    for (int64_t g = 0; g < groups; ++g) {
      Agent agent;
      agent.role = role;
      agent.group = g;
      agent.groups = groups;
      agent.warps = warps / groups;
      agent.name = (name + " " + Twine(g)).str();
      agent.env = prologue.env;
      agent.stack.push_back({body, body->begin()});
      agents.push_back(std::move(agent));
    }
    roleAgents[role] = groups;
    return success();
  };
  Block &entry = func.front();
  // A window kernel's band (arguments window_lo, window_hi).
  // (A backward kernel has no #tile.sdpa: its arguments say.)
  Agent seeded;
  if (takesWindow(func)) {
    bind(seeded, tile::findArgument(func, tile::ArgRole::WindowLo),
         SimValue::ofInt(options.windowLo));
    bind(seeded, tile::findArgument(func, tile::ArgRole::WindowHi),
         SimValue::ofInt(options.windowHi));
    // A varlen kernel's band as given (the configurations cover the bands).
    if (Value align = tile::findArgument(func, tile::ArgRole::WindowAlign))
      bind(seeded, align, SimValue::ofInt(0));
  }
  if (!roles) {
    Agent &none = seeded;
    int64_t groups = groupsIn(func.getBody());
    if (hasTurns(func.getBody()))
      groups = std::max<int64_t>(groups, kernelWarps / 4);
    if (failed(addRole(0, "kernel group", &entry, kernelWarps, groups, none)))
      return func.emitError() << "tilegpu-simulate-roles: the kernel's warps "
                                 "do not split into its groups";
    return success();
  }
  // The prologue (allocations, mbarrier initialization) runs once.
  Agent &prologue = seeded;
  prologue.name = "prologue";
  prologue.role = -1;
  prologue.stack.push_back({&entry, entry.begin()});
  while (prologue.stack.back().it != entry.end() &&
         &*prologue.stack.back().it != roles.getOperation()) {
    bool blocked = false;
    if (failed(step(prologue, blocked)))
      return failure();
  }
  for (auto [r, region] : llvm::enumerate(roles.getBodies())) {
    auto role = cast<RoleAttr>(roles.getRoles()[r]);
    int64_t active = role.getActive() ? role.getActive() : role.getWarps();
    int64_t groups = groupsIn(region);
    if (hasTurns(region))
      groups = std::max<int64_t>(groups, active / 4);
    // An MMA role's active warps are its groups' issuers.
    if (groups == 1 && active > 1 &&
        region.walk([](TmemMmaOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      groups = active;
    // Roles whose threads read or write tensor memory hold its release
    // until they end (the lowering's release barrier).
    if (region
            .walk([](Operation *op) {
              return isa<TmemLoadOp, TmemStoreOp, TmemScaleRowsOp,
                         TmemScaleStoreOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      holdTensorMemory.insert(r);
    if (failed(addRole(r, role.getName(), &region.front(), active, groups,
                       prologue)))
      return roles.emitError()
             << "tilegpu-simulate-roles: role " << role.getName()
             << " does not split into " << groups << " groups";
  }
  return success();
}

LogicalResult Simulator::step(Agent &agent, bool &blocked) {
  blocked = false;
  Frame &frame = agent.stack.back();
  if (frame.it == frame.block->end()) {
    // The end of a block without a terminator: the role's (or the
    // kernel's) end.
    agent.stack.pop_back();
    if (agent.stack.empty())
      agent.done = true;
    return success();
  }
  Operation *op = &*frame.it;
  if (failed(execute(agent, op, blocked)))
    return failure();
  return success();
}

LogicalResult Simulator::execute(Agent &agent, Operation *op, bool &blocked) {
  Frame &frame = agent.stack.back();
  auto next = [&] { ++agent.stack.back().it; };
  auto ints = [&](ValueRange values) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> out;
    for (Value v : values) {
      SimValue s = *valueOf(agent, v);
      if (s.kind != SimValue::Int)
        return failure();
      out.push_back(s.i);
    }
    return out;
  };
  Location loc = op->getLoc();
  (void)loc;

  // Structured control flow.
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    FailureOr<int64_t> lb = intOf(agent, loop.getLowerBound());
    FailureOr<int64_t> ub = intOf(agent, loop.getUpperBound());
    FailureOr<int64_t> st = intOf(agent, loop.getStep());
    if (failed(lb) || failed(ub) || failed(st))
      return failure();
    if (*lb >= *ub) {
      for (auto [result, init] :
           llvm::zip(loop.getResults(), loop.getInitArgs()))
        bind(agent, result, *valueOf(agent, init));
      next();
      return success();
    }
    Block *body = loop.getBody();
    bind(agent, body->getArgument(0), SimValue::ofInt(*lb));
    for (auto [arg, init] :
         llvm::zip(body->getArguments().drop_front(), loop.getInitArgs()))
      bind(agent, arg, *valueOf(agent, init));
    agent.stack.push_back({body, body->begin(), op, *lb, *ub, *st});
    return success();
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    FailureOr<int64_t> cond = intOf(agent, branch.getCondition());
    if (failed(cond))
      return failure();
    Block *body = *cond ? branch.thenBlock() : branch.elseBlock();
    if (!body) {
      next();
      return success();
    }
    agent.stack.push_back({body, body->begin(), op});
    return success();
  }
  if (auto yield = dyn_cast<scf::YieldOp>(op)) {
    SmallVector<SimValue> values;
    for (Value v : yield.getOperands())
      values.push_back(*valueOf(agent, v));
    Operation *owner = frame.owner;
    if (auto loop = dyn_cast_or_null<scf::ForOp>(owner)) {
      Block *body = loop.getBody();
      frame.iv += frame.step;
      if (frame.iv < frame.ub) {
        bind(agent, body->getArgument(0), SimValue::ofInt(frame.iv));
        for (auto [arg, v] :
             llvm::zip(body->getArguments().drop_front(), values))
          bind(agent, arg, v);
        frame.it = body->begin();
        return success();
      }
    }
    agent.stack.pop_back();
    for (auto [result, v] : llvm::zip(owner->getResults(), values))
      bind(agent, result, v);
    next();
    return success();
  }

  // Scalars.
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto attr = dyn_cast<IntegerAttr>(cst.getValue()))
      bind(agent, cst,
           SimValue::ofInt(attr.getValue().getBitWidth() == 1
                               ? attr.getValue().getZExtValue()
                               : attr.getValue().getSExtValue()));
    next();
    return success();
  }
  if (op->getDialect() &&
      op->getDialect()->getNamespace() ==
          arith::ArithDialect::getDialectNamespace() &&
      op->getNumResults() == 1 && op->getResult(0).getType().isIntOrIndex()) {
    FailureOr<SmallVector<int64_t>> in = ints(op->getOperands());
    if (failed(in)) {
      next(); // an integer computed from what the simulation does not know
      return success();
    }
    const SmallVector<int64_t> &x = *in;
    auto floorDiv = [](int64_t a, int64_t b) {
      return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
    };
    std::optional<int64_t> r =
        llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
            .Case([&](arith::AddIOp) { return x[0] + x[1]; })
            .Case([&](arith::SubIOp) { return x[0] - x[1]; })
            .Case([&](arith::MulIOp) { return x[0] * x[1]; })
            .Case([&](arith::DivUIOp) { return x[1] ? x[0] / x[1] : 0; })
            .Case([&](arith::DivSIOp) { return x[1] ? x[0] / x[1] : 0; })
            .Case([&](arith::RemUIOp) { return x[1] ? x[0] % x[1] : 0; })
            .Case([&](arith::RemSIOp) { return x[1] ? x[0] % x[1] : 0; })
            .Case([&](arith::FloorDivSIOp) {
              return x[1] ? floorDiv(x[0], x[1]) : 0;
            })
            .Case([&](arith::CeilDivUIOp) {
              return x[1] ? (x[0] + x[1] - 1) / x[1] : 0;
            })
            .Case([&](arith::CeilDivSIOp) {
              return x[1] ? -floorDiv(-x[0], x[1]) : 0;
            })
            .Case([&](arith::MinSIOp) { return std::min(x[0], x[1]); })
            .Case([&](arith::MaxSIOp) { return std::max(x[0], x[1]); })
            .Case([&](arith::MinUIOp) { return std::min(x[0], x[1]); })
            .Case([&](arith::MaxUIOp) { return std::max(x[0], x[1]); })
            .Case([&](arith::AndIOp) { return x[0] & x[1]; })
            .Case([&](arith::OrIOp) { return x[0] | x[1]; })
            .Case([&](arith::XOrIOp) { return x[0] ^ x[1]; })
            .Case([&](arith::SelectOp) { return x[0] ? x[1] : x[2]; })
            .Case([&](arith::IndexCastOp) { return x[0]; })
            .Case([&](arith::IndexCastUIOp) { return x[0]; })
            .Case([&](arith::ExtUIOp) { return x[0]; })
            .Case([&](arith::ExtSIOp) { return x[0]; })
            .Case([&](arith::TruncIOp t) -> int64_t {
              unsigned w = t.getType().getIntOrFloatBitWidth();
              return w >= 64 ? x[0] : (x[0] & ((int64_t(1) << w) - 1));
            })
            .Case([&](arith::CmpIOp c) -> int64_t {
              uint64_t a = x[0], b = x[1];
              switch (c.getPredicate()) {
              case arith::CmpIPredicate::eq:
                return x[0] == x[1];
              case arith::CmpIPredicate::ne:
                return x[0] != x[1];
              case arith::CmpIPredicate::slt:
                return x[0] < x[1];
              case arith::CmpIPredicate::sle:
                return x[0] <= x[1];
              case arith::CmpIPredicate::sgt:
                return x[0] > x[1];
              case arith::CmpIPredicate::sge:
                return x[0] >= x[1];
              case arith::CmpIPredicate::ult:
                return a < b;
              case arith::CmpIPredicate::ule:
                return a <= b;
              case arith::CmpIPredicate::ugt:
                return a > b;
              case arith::CmpIPredicate::uge:
                return a >= b;
              }
              return 0;
            })
            .Default([](Operation *) { return std::nullopt; });
    if (r)
      bind(agent, op->getResult(0), SimValue::ofInt(*r));
    next();
    return success();
  }
  // A varlen kernel's one sequence (batch entry 0): offsets [0, seq-q] and
  // [0, seq-k]; its slices have their `size`s.
  if (auto read = dyn_cast<tile::ReadOp>(op)) {
    std::optional<tile::ArgRole> role = isa<BlockArgument>(read.getView())
                                            ? tile::getArgRole(read.getView())
                                            : std::nullopt;
    // A block mask's counts and indices bound the loops: the
    // configuration's counts, and block i at entry i.
    if (role == tile::ArgRole::Captured) {
      StringRef name = tile::getArgAttrOf(read.getView()).getArgumentName();
      if (name == kBlockMaskArguments[0] || name == kBlockMaskArguments[2]) {
        bind(agent, read,
             SimValue::ofInt(name == kBlockMaskArguments[0]
                                 ? options.partialBlocks
                                 : options.fullBlocks));
      } else if (name == kBlockMaskArguments[1] ||
                 name == kBlockMaskArguments[3]) {
        FailureOr<int64_t> entry = intOf(agent, read.getIndices().back());
        if (failed(entry))
          return failure();
        bind(agent, read, SimValue::ofInt(*entry));
      }
      // Any other captured input of a score or mask function is data,
      // never a bound of anything the roles wait on.
      next();
      return success();
    }
    if (read.getIndices().size() != 1 || (role != tile::ArgRole::CuSeqlensQ &&
                                          role != tile::ArgRole::CuSeqlensK))
      return op->emitError() << "tilegpu-simulate-roles: reads only the "
                                "offsets of a varlen kernel";
    FailureOr<int64_t> index = intOf(agent, read.getIndices()[0]);
    if (failed(index))
      return failure();
    int64_t length =
        role == tile::ArgRole::CuSeqlensK ? options.seqK : options.seqQ;
    bind(agent, read, SimValue::ofInt(*index == 0 ? 0 : length));
    next();
    return success();
  }
  if (isa<tile::SliceOp>(op)) {
    next();
    return success();
  }
  if (auto dim = dyn_cast<tile::DimOp>(op)) {
    auto slice = dim.getView().getDefiningOp<tile::SliceOp>();
    if (slice && slice.getDim() == dim.getIndex()) {
      FailureOr<int64_t> size = intOf(agent, slice.getSize());
      if (failed(size))
        return failure();
      bind(agent, dim, SimValue::ofInt(*size));
      next();
      return success();
    }
    Value view = slice ? slice.getView() : dim.getView();
    std::optional<tile::ArgRole> role = tile::getArgRole(view);
    int64_t d = static_cast<int64_t>(dim.getIndex());
    int64_t value = 1;
    bool keySide = role == tile::ArgRole::K || role == tile::ArgRole::V ||
                   role == tile::ArgRole::DK || role == tile::ArgRole::DV;
    if (d == 1)
      value = keySide ? 1 : options.group;
    else if (d == 2)
      value = (role == tile::ArgRole::K || role == tile::ArgRole::V)
                  ? options.seqK
                  : options.seqQ;
    else if (d == 3)
      value = dim.getView().getType().getShape()[3];
    bind(agent, dim, SimValue::ofInt(value));
    next();
    return success();
  }
  if (auto id = dyn_cast<tile::BlockIdOp>(op)) {
    bind(agent, id,
         SimValue::ofInt(id.getDim() == tile::Dim::X ? options.block : 0));
    next();
    return success();
  }
  if (auto id = dyn_cast<GroupIdOp>(op)) {
    if (static_cast<int64_t>(id.getGroups()) != agent.groups)
      return op->emitError() << "tilegpu-simulate-roles: " << id.getGroups()
                             << " groups in a role of " << agent.groups
                             << " agents is not modelled";
    bind(agent, id, SimValue::ofInt(agent.group));
    next();
    return success();
  }

  // Buffers.
  if (auto alloc = dyn_cast<AllocOp>(op)) {
    if (!alloc.getOffset())
      return op->emitError() << "tilegpu-simulate-roles: a buffer without "
                                "an offset; run tilegpu-allocate-memory";
    bind(agent, alloc,
         SimValue::ofBuffer(
             {alloc.getType(), static_cast<int64_t>(*alloc.getOffset())}));
    next();
    return success();
  }
  if (auto slot = dyn_cast<SlotOp>(op)) {
    SimValue ring = *valueOf(agent, slot.getRing());
    FailureOr<int64_t> i = intOf(agent, slot.getIndex());
    if (ring.kind != SimValue::Buffer || failed(i))
      return failure();
    bind(agent, slot,
         SimValue::ofBuffer(
             {slot.getType(),
              ring.buffer.offset + *i * ring.buffer.type.getTileSize()}));
    next();
    return success();
  }
  if (auto view = dyn_cast<TransposeViewOp>(op)) {
    SimValue base = *valueOf(agent, view.getSource());
    bind(agent, view,
         base.kind == SimValue::Buffer
             ? SimValue::ofBuffer({view.getType(), base.buffer.offset})
             : SimValue());
    next();
    return success();
  }
  if (auto reduce = dyn_cast<TmaReduceOp>(op)) {
    SimValue src = *valueOf(agent, reduce.getSrc());
    if (src.kind != SimValue::Buffer)
      return op->emitError() << "tilegpu-simulate-roles: a TMA reduction "
                                "of an unknown buffer";
    Span span = spanOf(src.buffer, 0);
    if (failed(touchShared(op, span, /*writes=*/false)))
      return failure();
    if (agent.group == 0) // the role's first thread issues
      reductions[agent.role].push_back({op, {span}, {}, -1});
    next();
    return success();
  }
  if (isa<TmaReduceWaitOp>(op)) {
    if (agent.group == 0)
      reductions.erase(agent.role);
    next();
    return success();
  }
  if (auto alias = dyn_cast<TmemAliasOp>(op)) {
    SimValue base = *valueOf(agent, alias.getSource());
    bind(agent, alias,
         SimValue::ofBuffer({alias.getType(), base.buffer.offset}));
    next();
    return success();
  }

  // mbarriers.
  if (auto init = dyn_cast<MBarrierInitOp>(op)) {
    FailureOr<int64_t> address =
        barrierAddress(agent, init.getBarriers(), init.getIndex());
    if (failed(address))
      return failure();
    if (agent.group == 0) {
      Barrier b;
      b.expected = b.pending = static_cast<int64_t>(init.getCount());
      barriers[*address] = b;
      overwritten.erase(*address);
    }
    next();
    return success();
  }
  if (auto arriveOp = dyn_cast<MBarrierArriveOp>(op)) {
    FailureOr<int64_t> address =
        barrierAddress(agent, arriveOp.getBarriers(), arriveOp.getIndex());
    if (failed(address) || failed(arrive(op, *address, agent.warps)))
      return failure();
    next();
    return success();
  }
  if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
    FailureOr<int64_t> address =
        barrierAddress(agent, wait.getBarriers(), wait.getIndex());
    FailureOr<int64_t> phase = intOf(agent, wait.getPhase());
    if (failed(address) || failed(phase))
      return failure();
    if (!barriers.count(*address))
      return op->emitError() << "tilegpu-simulate-roles: waits on an "
                                "mbarrier that was never initialized";
    if (failed(checkBarrierAlive(op, *address)))
      return failure();
    FailureOr<bool> go = mayGo(agent, op);
    if (failed(go))
      return failure();
    if (!*go) {
      blocked = true;
      return success();
    }
    next();
    return success();
  }
  if (isa<gpu::BarrierOp>(op)) {
    // The role's threads meet (a named barrier once roles split the kernel);
    // the prologue runs once, alone.
    int64_t role = agent.role;
    if (role < 0) {
      next();
      return success();
    }
    if (agent.barrierGeneration == 0) {
      agent.barrierGeneration = generation[role] + 1;
      if (++atBarrier[role] == roleAgents[role]) {
        atBarrier[role] = 0;
        ++generation[role];
      }
    }
    if (!*mayGo(agent, op)) {
      blocked = true;
      return success();
    }
    agent.barrierGeneration = 0;
    next();
    return success();
  }
  if (isa<GroupBarrierOp>(op)) {
    next(); // a group is one agent
    return success();
  }

  // Asynchronous copies and products.
  if (auto load = dyn_cast<TmaLoadOp>(op)) {
    SimValue dst = *valueOf(agent, load.getDst());
    bind(agent, load.getResult(), dst);
    if (agent.group != 0) {
      next(); // the first thread of the threads that run it copies
      return success();
    }
    FailureOr<int64_t> address =
        barrierAddress(agent, load.getBarriers(), load.getIndex());
    if (dst.kind != SimValue::Buffer || failed(address))
      return failure();
    Span span = spanOf(dst.buffer, 0);
    for (Agent &other : agents)
      for (const std::deque<Pending> *inFlight : {&other.queue, &other.wgmma})
        for (const Pending &p : *inFlight)
          for (const Span &read : p.reads)
            if (read.overlaps(span))
              return hazard(op, p.op,
                            "a TMA copy into shared memory that a product "
                            "still reads");
    for (Copy &c : copies)
      if (c.dst.overlaps(span))
        return hazard(op, c.op,
                      "a TMA copy into shared memory that another copy "
                      "still writes");
    auto it = barriers.find(*address);
    if (it == barriers.end())
      return op->emitError() << "tilegpu-simulate-roles: a copy completes "
                                "on an mbarrier that was never initialized";
    if (failed(checkBarrierAlive(op, *address)))
      return failure();
    // The arrival with its expected transaction, which the copy completes.
    ++it->second.inFlight;
    if (failed(arrive(op, *address, 1)))
      return failure();
    copies.push_back({op, span, *address});
    bind(agent, load.getResult(), dst);
    next();
    return success();
  }
  if (isa<TmemMmaOp>(op) && !holdTensorMemory.contains(agent.role) &&
      llvm::all_of(agents, [&](const Agent &a) {
        return !holdTensorMemory.contains(a.role) || a.done;
      }))
    return hazard(op, nullptr,
                  "issues a product into tensor memory after the roles that "
                  "hold it (the first, and those that read or write it) "
                  "have ended and freed it");
  if (auto mma = dyn_cast<TmemMmaOp>(op)) {
    SimValue lhs = *valueOf(agent, mma.getLhs());
    SimValue rhs = *valueOf(agent, mma.getRhs());
    SimValue acc = *valueOf(agent, mma.getAcc());
    if (lhs.kind != SimValue::Buffer || rhs.kind != SimValue::Buffer ||
        acc.kind != SimValue::Buffer)
      return op->emitError() << "tilegpu-simulate-roles: a product of "
                                "unknown buffers";
    auto accType = cast<BufferType>(mma.getAcc().getType());
    int64_t blocks = std::max<int64_t>(1, accType.getShape()[0] / 128);
    int64_t block;
    if (std::optional<uint64_t> only = mma.getRowBlock()) {
      if (agent.group != 0) {
        next();
        return success();
      }
      block = static_cast<int64_t>(*only);
    } else {
      FailureOr<int64_t> b = blockOf(agent, op, accType, blocks);
      if (failed(b))
        return failure();
      if (blocks == 1 && agent.group != 0) {
        next(); // the first thread issues
        return success();
      }
      block = *b;
    }
    Pending p{op, {}, {}, -1};
    auto lhsType = cast<BufferType>(mma.getLhs().getType());
    p.reads.push_back(lhsType.getMemorySpace() == MemorySpace::Tensor
                          ? spanOf(lhs.buffer, block)
                          : spanOf(lhs.buffer, 0));
    p.reads.push_back(spanOf(rhs.buffer, 0));
    p.writes.push_back(spanOf(acc.buffer, block));
    for (Span &read : p.reads)
      for (Copy &c : copies)
        if (read.overlaps(c.dst))
          return hazard(op, c.op,
                        "a product reads shared memory whose TMA copy has "
                        "not landed");
    for (Agent &other : agents) {
      if (&other == &agent)
        continue; // one issuer's products run in order
      for (Pending &q : other.queue)
        for (Span &w : q.writes)
          for (Span s : llvm::concat<Span>(p.reads, p.writes))
            if (w.overlaps(s))
              return hazard(op, q.op,
                            "products of two issuers on the same "
                            "tensor-memory columns");
    }
    agent.queue.push_back(std::move(p));
    next();
    return success();
  }
  if (auto commit = dyn_cast<MmaCommitOp>(op)) {
    int64_t groups = static_cast<int64_t>(commit.getGroups());
    if (groups == 1 && agent.group != 0) {
      next(); // the first thread commits
      return success();
    }
    if (groups != 1 && groups != agent.groups)
      return op->emitError()
             << "tilegpu-simulate-roles: " << groups << " groups in a role of "
             << agent.groups << " agents is not modelled";
    FailureOr<int64_t> address =
        barrierAddress(agent, commit.getBarriers(), commit.getIndex());
    if (failed(address))
      return failure();
    if (groups != 1 && !commit.getJoint())
      *address += 8 * agent.group;
    agent.queue.push_back({op, {}, {}, *address});
    next();
    return success();
  }
  if (isa<TmemLoadOp, TmemStoreOp, TmemScaleRowsOp, TmemScaleStoreOp>(op)) {
    Value bufferValue =
        isa<TmemStoreOp>(op) ? op->getOperand(1) : op->getOperand(0);
    SimValue buffer = *valueOf(agent, bufferValue);
    if (buffer.kind != SimValue::Buffer)
      return op->emitError() << "tilegpu-simulate-roles: tensor memory of "
                                "an unknown buffer";
    auto type = cast<BufferType>(bufferValue.getType());
    FailureOr<int64_t> block = blockOf(
        agent, op, type, std::max<int64_t>(1, type.getShape()[0] / 128));
    if (failed(block))
      return failure();
    Span span = spanOf(buffer.buffer, *block);
    bool writes = !isa<TmemLoadOp, TmemScaleStoreOp>(op);
    for (Agent &other : agents)
      for (Pending &p : other.queue) {
        for (Span &w : p.writes)
          if (w.overlaps(span))
            return hazard(op, p.op,
                          "tensor memory that a product in flight writes");
        if (writes)
          for (Span &r : p.reads)
            if (r.overlaps(span))
              return hazard(op, p.op,
                            "writes tensor memory that a product in flight "
                            "reads");
      }
    if (auto load = dyn_cast<TmemLoadOp>(op))
      bind(agent, load.getResult(), SimValue());
    next();
    return success();
  }
  if (isa<WarpSpecializeOp>(op))
    return op->emitError() << "tilegpu-simulate-roles: nested warp roles";
  if (auto mma = dyn_cast<MmaOp>(op)) {
    // Shared operands: read at once (mma.sync's ldmatrix), or by a wgmma
    // group in flight until its mma_wait.
    Pending p{op, {}, {}, -1};
    for (Value operand : SmallVector<Value, 2>{mma.getLhs(), mma.getRhs()}) {
      if (!isa<BufferType>(operand.getType()))
        continue;
      SimValue buffer = *valueOf(agent, operand);
      if (buffer.kind != SimValue::Buffer)
        return op->emitError() << "tilegpu-simulate-roles: a product of "
                                  "unknown buffers";
      Span span = spanOf(buffer.buffer, 0);
      if (failed(touchShared(op, span, /*writes=*/false)))
        return failure();
      p.reads.push_back(span);
    }
    if (isAsyncMmaResult(mma.getType())) {
      p.issue = ++issued;
      agent.wgmma.push_back(std::move(p));
      bind(agent, mma.getResult(), {SimValue::Product, issued, {}});
    } else {
      bind(agent, mma.getResult(), SimValue());
    }
    next();
    return success();
  }
  if (auto wait = dyn_cast<MmaWaitOp>(op)) {
    if (!*mayGo(agent, op)) {
      blocked = true;
      return success();
    }
    // The product it waits for must be done: a `pending` past the groups
    // issued after it leaves it in flight.
    SimValue awaited = *valueOf(agent, wait.getAcc());
    if (awaited.kind == SimValue::Product)
      for (const Pending &p : agent.wgmma)
        if (p.issue == awaited.i)
          return hazard(op, p.op,
                        "waits for a wgmma product but leaves it in flight "
                        "(pending counts more groups than were issued after "
                        "it)");
    bind(agent, wait.getResult(), SimValue());
    next();
    return success();
  }
  if (auto load = dyn_cast<LocalLoadOp>(op)) {
    SimValue buffer = *valueOf(agent, load.getBuffer());
    if (buffer.kind == SimValue::Buffer &&
        failed(touchShared(op, spanOf(buffer.buffer, 0), /*writes=*/false)))
      return failure();
    // A rows vector is read once, after its store: each hand-off of the
    // factors to the correction warps. (A block in the accumulator's lanes,
    // a bias or mask block staged by TMA, is a ring's, which its barriers
    // pace.)
    auto lanes = dyn_cast<TmemLanesLayoutAttr>(load.getType().getEncoding());
    if (buffer.kind == SimValue::Buffer && lanes &&
        lanes.getKind() == TmemLanesKind::Rows) {
      auto key =
          std::pair(buffer.buffer.offset, rowBlockOf(agent, load.getType()));
      if (!handedOver.erase(key))
        return hazard(op, nullptr,
                      "reads row factors from shared memory that were not "
                      "written since they were last read");
    }
    bind(agent, load.getResult(), SimValue());
    next();
    return success();
  }
  if (auto store = dyn_cast<LocalStoreOp>(op)) {
    SimValue buffer = *valueOf(agent, store.getBuffer());
    if (buffer.kind == SimValue::Buffer) {
      if (failed(touchShared(op, spanOf(buffer.buffer, 0), /*writes=*/true)))
        return failure();
      // (Only a rows vector is a hand-off; an accumulator's transpose or
      // dQ's part is read by products, which the barriers pace.)
      auto lanes = dyn_cast<TmemLanesLayoutAttr>(
          store.getValue().getType().getEncoding());
      if (!lanes || lanes.getKind() != TmemLanesKind::Rows) {
        next();
        return success();
      }
      auto key = std::pair(buffer.buffer.offset,
                           rowBlockOf(agent, store.getValue().getType()));
      if (Operation *unread = handedOver.lookup(key))
        return hazard(op, unread,
                      "overwrites row factors in shared memory that nobody "
                      "has read yet");
      handedOver[key] = op;
    }
    next();
    return success();
  }
  if (auto store = dyn_cast<StagedStoreOp>(op)) {
    SimValue buffer = *valueOf(agent, store.getStaging());
    if (buffer.kind == SimValue::Buffer &&
        failed(touchShared(op, spanOf(buffer.buffer, 0), /*writes=*/true)))
      return failure();
    next();
    return success();
  }
  if (isa<TurnStartOp>(op)) {
    // The last warpgroup passes the first turn to the first.
    if (agent.group == agent.groups - 1)
      ++turns[0];
    next();
    return success();
  }
  if (isa<TurnTakeOp>(op)) {
    if (!*mayGo(agent, op)) {
      blocked = true;
      return success();
    }
    --turns[agent.group];
    next();
    return success();
  }
  if (isa<TurnPassOp>(op)) {
    ++turns[(agent.group + 1) % agent.groups];
    next();
    return success();
  }
  if (isa<AsyncWaitOp, AsyncWaitAllOp>(op)) {
    next(); // cp.async waits: with no cp.async copy (an error below), none
    return success();
  }
  if (isa<AsyncCopyOp>(op))
    return op->emitError() << "tilegpu-simulate-roles: " << op->getName()
                           << " is not modelled (the simulation covers "
                              "TMA, mbarriers, wgmma, mma.sync and tcgen05)";
  if (isa<func::ReturnOp>(op)) {
    agent.stack.clear();
    agent.done = true;
    return success();
  }
  // Register tiles, stores to global memory: nothing to synchronize.
  for (Value result : op->getResults())
    bind(agent, result, SimValue());
  next();
  return success();
}

FailureOr<bool> Simulator::mayGo(Agent &agent, Operation *op) {
  if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
    FailureOr<int64_t> address =
        barrierAddress(agent, wait.getBarriers(), wait.getIndex());
    FailureOr<int64_t> phase = intOf(agent, wait.getPhase());
    if (failed(address) || failed(phase))
      return failure();
    // (A wait on an mbarrier never initialized goes, and is an error.)
    auto it = barriers.find(*address);
    return it == barriers.end() || (it->second.completed & 1) != (*phase & 1);
  }
  if (isa<gpu::BarrierOp>(op))
    return agent.role < 0 || agent.barrierGeneration == 0 ||
           generation[agent.role] >= agent.barrierGeneration;
  if (auto wait = dyn_cast<MmaWaitOp>(op))
    return static_cast<int64_t>(agent.wgmma.size()) <=
           static_cast<int64_t>(wait.getPending().value_or(0));
  if (isa<TurnTakeOp>(op))
    return turns.lookup(agent.group) > 0;
  return true;
}

FailureOr<int64_t> Simulator::run() {
  if (failed(spawn()))
    return failure();
  int64_t steps = 0;
  while (true) {
    // What may happen next: an agent's op, a copy landing, the head of an
    // issuer's queue completing.
    struct Choice {
      int kind;
      size_t index;
    };
    SmallVector<Choice> choices;
    for (auto [i, agent] : llvm::enumerate(agents)) {
      if (agent.done)
        continue;
      // Probe whether the agent may go on (a wait or barrier may block).
      Frame &frame = agent.stack.back();
      FailureOr<bool> runnable = true;
      if (frame.it != frame.block->end())
        runnable = mayGo(agent, &*frame.it);
      if (failed(runnable))
        return failure();
      if (*runnable)
        choices.push_back({0, i});
    }
    for (size_t i = 0; i < copies.size(); ++i)
      choices.push_back({1, i});
    for (auto [i, agent] : llvm::enumerate(agents)) {
      if (!agent.queue.empty())
        choices.push_back({2, i});
      if (!agent.wgmma.empty())
        choices.push_back({3, i});
    }
    if (choices.empty()) {
      if (llvm::all_of(agents, [](const Agent &a) { return a.done; })) {
        for (auto &[role, inFlight] : reductions)
          if (!inFlight.empty())
            return hazard(inFlight.back().op, nullptr,
                          "the kernel ends with this TMA reduction in "
                          "flight (no tilegpu.tma_reduce_wait after it)");
        return steps;
      }
      InFlightDiagnostic diag = func.emitError()
                                << "tilegpu-simulate-roles: deadlock after "
                                << steps << " steps: every agent waits and "
                                << "nothing is in flight";
      for (Agent &agent : agents)
        if (!agent.done &&
            agent.stack.back().it != agent.stack.back().block->end())
          diag.attachNote(agent.stack.back().it->getLoc())
              << agent.name << " waits here";
      return failure();
    }
    if (++steps > options.maxSteps)
      return func.emitError() << "tilegpu-simulate-roles: no end after "
                              << options.maxSteps << " steps";
    // A lazy schedule lets asynchronous work finish only when no agent
    // can go on: the threads run as far ahead of it as they are allowed.
    size_t agentChoices = llvm::count_if(
        choices, [](const Choice &choice) { return choice.kind == 0; });
    size_t range = lazy && agentChoices ? agentChoices : choices.size();
    Choice c =
        choices[std::uniform_int_distribution<size_t>(0, range - 1)(rng)];
    if (c.kind == 0) {
      bool blocked = false;
      if (failed(step(agents[c.index], blocked)))
        return failure();
    } else if (c.kind == 1) {
      if (failed(finishCopy(c.index)))
        return failure();
    } else if (c.kind == 3) {
      agents[c.index].wgmma.pop_front(); // wgmma groups complete in order
    } else if (failed(finishHead(agents[c.index]))) {
      return failure();
    }
  }
}

/// ", group G" for G query heads per key head, ", band [lo, hi]" for a
/// window kernel, ", blocks P+F" for a block-sparse one.
std::string bandText(tile::SdpaAttr sdpa, const Config &config) {
  std::string text;
  if (config.group > 1)
    text = (", group " + Twine(config.group)).str();
  if (config.windowLo || config.windowHi)
    text += (", band [" + Twine(config.windowLo) + ", " +
            Twine(config.windowHi) + "]")
               .str();
  if (config.partialBlocks || config.fullBlocks)
    text += (", blocks " + Twine(config.partialBlocks) + "+" +
             Twine(config.fullBlocks))
                .str();
  return text;
}

struct TileGPUSimulateRolesPass final
    : tiled_attn::tilegpu::impl::TileGPUSimulateRolesPassBase<
          TileGPUSimulateRolesPass> {
  using Base::Base;
  void runOnOperation() override;
};

void TileGPUSimulateRolesPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  if (schedules < 1 || seqQ < 0 || seqK < 0 || block < 0 || maxSteps < 1 ||
      group < 1 || (seqQ == 0) != (seqK == 0)) {
    func.emitError() << "tilegpu-simulate-roles: schedules, max-steps and "
                        "group must be positive, seq-q and seq-k both "
                        "positive (or both 0: the kernel's corner cases) and "
                        "block not negative";
    return signalPassFailure();
  }
  // The lengths and block to run: the options', or (both lengths 0) the
  // corner cases of the kernel's blocks: one key, a last partial block of
  // 4 query blocks (the middle one and the last), and a long key sequence
  // with a partial last block for a first query block.
  SmallVector<Config> configs;
  auto sdpa =
      func->getAttrOfType<tile::SdpaAttr>(tile::TileDialect::getSdpaAttrName());
  if (seqQ > 0) {
    configs.push_back({seqQ, seqK, block, maxSteps});
    configs.back().group = group;
  } else {
    // (A kernel without #tile.sdpa, a backward one: one key, more keys
    // than queries (two query heads per key head: its loop over a group's
    // heads runs twice) and fewer, each with a partial last block; its
    // first program, and its second.)
    int64_t m = sdpa ? sdpa.getBlockM() : 64, n = sdpa ? sdpa.getBlockN() : 64;
    if (sdpa)
      configs = {{1, 1, 0, maxSteps},
                 {4 * m - 5, 4 * m - 5, 1, maxSteps},
                 {4 * m - 5, 4 * m - 5, 3, maxSteps},
                 {m, 5 * n + 7, 0, maxSteps}};
    else {
      configs = {{1, 1, 0, maxSteps},
                 {3 * m + 7, 5 * n + 3, 1, maxSteps},
                 {5 * m + 3, 3 * n + 7, 0, maxSteps}};
      configs[1].group = 2;
    }
  }
  // A window kernel runs each under three bands: a causal sliding window
  // (masked blocks, then unmasked ones, then the diagonal's), a two-sided
  // window, and an empty band (lo > hi: no block at all).
  if (takesWindow(func)) {
    int64_t n = sdpa ? sdpa.getBlockN() : 64, m = sdpa ? sdpa.getBlockM() : 64;
    SmallVector<Config> banded;
    for (const Config &config : configs)
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>(-(2 * n + 3), 0),
                            {-(m / 2), n + 1},
                            {2, 1}}) {
        Config c = config;
        c.windowLo = lo;
        c.windowHi = hi;
        banded.push_back(c);
      }
    configs = std::move(banded);
  }
  // A block-sparse kernel runs each with block masks of no block, partial
  // blocks only, full blocks only, and both.
  if (takesBlockMask(func)) {
    SmallVector<Config> sparse;
    for (const Config &config : configs)
      for (auto [partial, full] :
           {std::pair<int64_t, int64_t>(0, 0), {2, 0}, {0, 3}, {1, 2}}) {
        Config c = config;
        c.partialBlocks = partial;
        c.fullBlocks = full;
        sparse.push_back(c);
      }
    configs = std::move(sparse);
  }
  int64_t total = 0;
  for (const Config &config : configs) {
    for (int64_t s = 0; s < schedules; ++s) {
      // Every other schedule is lazy (see run).
      Simulator simulator(func, config, seed + s, /*lazy=*/s % 2 == 1);
      FailureOr<int64_t> steps = simulator.run();
      if (failed(steps)) {
        func.emitRemark() << "tilegpu-simulate-roles: schedule " << s
                          << " (seed " << seed + s << ") of seq-q "
                          << config.seqQ << ", seq-k " << config.seqK
                          << ", block " << config.block
                          << bandText(sdpa, config) << " failed";
        return signalPassFailure();
      }
      total += *steps;
    }
  }
  if (!quiet) {
    InFlightDiagnostic remark =
        func.emitRemark() << "tilegpu-simulate-roles: " << int64_t(schedules)
                          << " schedules ran to the end (" << total
                          << " steps;";
    for (const Config &config : configs)
      remark << " seq-q " << config.seqQ << ", seq-k " << config.seqK
             << ", block " << config.block << bandText(sdpa, config) << ";";
    remark << " no deadlock, no hazard)";
  }
}

} // namespace

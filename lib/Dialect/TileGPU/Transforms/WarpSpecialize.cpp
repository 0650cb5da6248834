//===- WarpSpecialize.cpp - A producer warp for the TMA refills -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-3's warp roles, from a kernel whose TMA rings are already
// paced by "full" and "empty" mbarriers: everything after the mbarriers'
// initialization is copied into two regions of a tilegpu.warp_specialize.
//
// - The consumers keep all of it but the TMA loads (a load's result is its
//   destination slot) and the waits for empty slots.
// - The producer keeps only what the TMA loads and those waits need: the
//   backward slice of their operands and of the loops and branches around
//   them. A loop or branch keeps the iteration arguments and results that
//   the slice reads (the stream counts, the block indices); the softmax,
//   the products and the accumulators are gone.
//
// - With mma-warp, an MMA role keeps only what the tcgen05 products need:
//   the waits for each group's readiness (its ready mbarrier) and for the
//   full slots, the products and their commits (to the accumulators'
//   mbarriers, and the tcgen05.commit that releases a slot the products
//   read), and their slice. The consumers lose the products, commits and
//   readiness waits, and the waits for slots they do not release; they
//   arrive on their ready mbarriers and wait for their products' commits.
//
// - With correction, a role of as many warps as the consumers follows
//   them (a warpgroup per Q tile, on the same tensor-memory lanes) and
//   keeps only the corrections of O that convert-tile-to-tilegpu handed
//   off through shared memory: the wait on each group's "factors"
//   mbarrier (the one arrived on right after a tilegpu.local_store), the
//   read of the factors, the waits for the products into O, the scaling
//   and the arrival on the ready mbarrier of O's next product, which then
//   expects the consumers' warps and the correction's; and at the end the
//   final scaling of O by 1 / l and its store (tilegpu.tmem_scale_store,
//   handed off the same way). The consumers keep the write of the factors
//   and their arrivals, and lose the wait, the read, the scaling and the
//   store (FlashAttention-4's correction warpgroup and its epilogue).
//
// All roles run the same loop bounds and branch conditions, so the
// producer's n-th load of a stream is the consumers' n-th, in the same slot
// and phase, the MMA role's n-th product the consumers' n-th, and the
// mbarriers are all they share.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUWARPSPECIALIZEPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

/// The ops of `region` (nested ones included) that `roots` need, and of its
/// loops and branches the results (iteration arguments) they need.
class Slice {
public:
  explicit Slice(Region &region) : region(region) {}

  void keepOp(Operation *op) {
    if (!region.isAncestor(op->getParentRegion()) || !ops.insert(op).second)
      return;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      keepValue(loop.getLowerBound());
      keepValue(loop.getUpperBound());
      keepValue(loop.getStep());
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      keepValue(branch.getCondition());
    } else {
      for (Value operand : op->getOperands())
        keepValue(operand);
    }
    if (Operation *parent = op->getParentOp())
      keepOp(parent);
  }

  /// Whether `op` stays, and which of its results (a loop's or branch's).
  bool keeps(Operation *op) const { return ops.contains(op); }
  SmallVector<unsigned> keptResults(Operation *op) const {
    SmallVector<unsigned> kept;
    auto it = results.find(op);
    if (it != results.end())
      kept.assign(it->second.begin(), it->second.end());
    llvm::sort(kept);
    return kept;
  }

private:
  void keepValue(Value value) {
    if (auto result = dyn_cast<OpResult>(value)) {
      Operation *def = result.getOwner();
      if (isa<scf::ForOp, scf::IfOp>(def))
        keepResult(def, result.getResultNumber());
      else
        keepOp(def);
      return;
    }
    auto arg = cast<BlockArgument>(value);
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || !region.isAncestor(loop->getParentRegion()))
      return; // defined above the region
    if (arg.getArgNumber() == 0)
      keepOp(loop);
    else
      keepResult(loop, arg.getArgNumber() - 1);
  }

  void keepResult(Operation *op, unsigned i) {
    keepOp(op);
    if (!results[op].insert(i).second)
      return;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      keepValue(loop.getInitArgs()[i]);
      keepValue(loop.getYieldedValues()[i]);
      return;
    }
    auto branch = cast<scf::IfOp>(op);
    keepValue(branch.thenYield().getOperand(i));
    keepValue(branch.elseYield().getOperand(i));
  }

  Region &region;
  llvm::DenseSet<Operation *> ops;
  llvm::DenseMap<Operation *, llvm::SmallDenseSet<unsigned, 4>> results;
};

/// Keeps in `region` only what `slice` keeps: other ops go, and loops and
/// branches lose the results the slice does not read.
void prune(Region &region, const Slice &slice) {
  SmallVector<Operation *> gone;
  region.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::YieldOp>(op) || slice.keeps(op))
      return WalkResult::advance();
    gone.push_back(op);
    return WalkResult::skip();
  });
  // Users go before what they use; a kept loop's yield may still name a
  // value that goes, at a position that goes with it below.
  for (Operation *op : llvm::reverse(gone)) {
    op->dropAllUses();
    op->erase();
  }
  SmallVector<Operation *> structured;
  region.walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::IfOp>(op))
      structured.push_back(op);
  });
  for (Operation *op : structured) {
    SmallVector<unsigned> kept = slice.keptResults(op);
    if (kept.size() == op->getNumResults())
      continue;
    auto trimYield = [&](Block *block) {
      Operation *yield = block->getTerminator();
      SmallVector<Value> operands;
      for (unsigned i : kept)
        operands.push_back(yield->getOperand(i));
      yield->setOperands(operands);
    };
    OpBuilder b(op);
    Operation *replacement;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      Block *body = loop.getBody();
      trimYield(body);
      llvm::BitVector erase(body->getNumArguments(), true);
      erase.reset(0);
      SmallVector<Value> inits;
      for (unsigned i : kept) {
        erase.reset(i + 1);
        inits.push_back(loop.getInitArgs()[i]);
      }
      body->eraseArguments(erase);
      auto newLoop =
          scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                             loop.getUpperBound(), loop.getStep(), inits);
      newLoop.getRegion().takeBody(loop.getRegion());
      replacement = newLoop;
    } else {
      auto branch = cast<scf::IfOp>(op);
      trimYield(branch.thenBlock());
      if (branch.elseBlock())
        trimYield(branch.elseBlock());
      SmallVector<Type> types;
      for (unsigned i : kept)
        types.push_back(branch.getResult(i).getType());
      auto newBranch =
          scf::IfOp::create(b, branch.getLoc(), types, branch.getCondition(),
                            /*addThenBlock=*/false, /*addElseBlock=*/false);
      newBranch.getThenRegion().takeBody(branch.getThenRegion());
      newBranch.getElseRegion().takeBody(branch.getElseRegion());
      replacement = newBranch;
    }
    for (auto [k, i] : llvm::enumerate(kept))
      op->getResult(i).replaceAllUsesWith(replacement->getResult(k));
    op->dropAllUses();
    op->erase();
  }
}

struct TileGPUWarpSpecializePass final
    : tiled_attn::tilegpu::impl::TileGPUWarpSpecializePassBase<
          TileGPUWarpSpecializePass> {
  using Base::Base;
  void runOnOperation() override;
};

/// A role's register budget: 0 (the launch's) or one setmaxnreg takes.
static bool isRegisterBudget(int64_t registers) {
  return registers == 0 || tiled_attn::tilegpu::isSetMaxNRegBudget(registers);
}

void TileGPUWarpSpecializePass::runOnOperation() {
  func::FuncOp func = getOperation();
  // The options first, whether or not the kernel has anything to split.
  if (producerWarps < 1 || producerWarps > 4) {
    func.emitError() << "tilegpu-warp-specialize: producer-warps must be in "
                        "[1, 4] (one warpgroup), got "
                     << int64_t(producerWarps);
    return signalPassFailure();
  }
  for (auto [name, registers] :
       {std::pair<StringRef, int64_t>{"producer-registers", producerRegisters},
        {"consumer-registers", consumerRegisters},
        {"correction-registers", correctionRegisters}})
    if (!isRegisterBudget(registers)) {
      func.emitError() << "tilegpu-warp-specialize: " << name
                       << " must be 0 (the launch's) or a multiple of 8 in "
                          "[24, 256], got "
                       << registers;
      return signalPassFailure();
    }
  if (func.isExternal())
    return;
  bool hasTma = false, specializedAlready = false;
  llvm::SetVector<Value> emptyBarriers, readyBarriers, fullBarriers;
  // The empty mbarriers that products release (tcgen05.commit), and the
  // full mbarriers of the rings whose slots the consumers release.
  llvm::SetVector<Value> committedEmpty, releasedFull, refillWaits;
  func.walk([&](Operation *op) {
    hasTma |= isa<TmaLoadOp>(op);
    specializedAlready |= isa<WarpSpecializeOp>(op);
    if (auto load = dyn_cast<TmaLoadOp>(op))
      fullBarriers.insert(load.getBarriers());
    if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
      // A product's readiness: the wait right before it.
      if (isa_and_nonnull<TmemMmaOp>(wait->getNextNode()))
        readyBarriers.insert(wait.getBarriers());
      // A slot's emptiness: the wait right before its refill.
      if (isa_and_nonnull<TmaLoadOp>(wait->getNextNode()))
        refillWaits.insert(wait.getBarriers());
    }
  });
  // The corrections of O handed off through shared memory: the mbarriers
  // the factors' writers arrive on, the accumulators scaled, and the
  // mbarriers of their products (done, ready).
  llvm::SetVector<Value> factorBarriers, correctedAccs, correctedDone,
      correctedReady;
  func.walk([&](Operation *op) {
    if (auto arrive = dyn_cast<MBarrierArriveOp>(op);
        arrive && isa_and_nonnull<LocalStoreOp>(arrive->getPrevNode()))
      factorBarriers.insert(arrive.getBarriers());
    if (isa<TmemScaleRowsOp, TmemScaleStoreOp>(op))
      correctedAccs.insert(op->getOperand(0));
  });
  func.walk([&](TmemMmaOp mma) {
    if (!correctedAccs.contains(mma.getAcc()))
      return;
    // Its commit to the accumulator's mbarrier is the first after it (not
    // a joint release of a slot), its readiness the wait before it.
    for (Operation *op = mma->getNextNode(); op; op = op->getNextNode())
      if (auto commit = dyn_cast<MmaCommitOp>(op);
          commit && !commit.getJoint()) {
        correctedDone.insert(commit.getBarriers());
        break;
      }
    for (Operation *op = mma->getPrevNode(); op; op = op->getPrevNode())
      if (auto wait = dyn_cast<MBarrierWaitOp>(op);
          wait && readyBarriers.contains(wait.getBarriers())) {
        correctedReady.insert(wait.getBarriers());
        break;
      }
  });
  func.walk([&](MBarrierArriveOp arrive) {
    if (!readyBarriers.contains(arrive.getBarriers()) &&
        !factorBarriers.contains(arrive.getBarriers()))
      emptyBarriers.insert(arrive.getBarriers());
  });
  // The products' issuers: one per group of rows their commits name.
  int64_t issuers = 1;
  llvm::DenseMap<Value, int64_t> releasers;
  func.walk([&](MmaCommitOp commit) {
    issuers = std::max<int64_t>(issuers, commit.getGroups());
    if (refillWaits.contains(commit.getBarriers())) {
      committedEmpty.insert(commit.getBarriers());
      releasers[commit.getBarriers()] =
          commit.getJoint() ? commit.getGroups() : 1;
    }
  });
  func.walk([&](TmaLoadOp load) {
    auto wait = dyn_cast_or_null<MBarrierWaitOp>(load->getPrevNode());
    if (wait && emptyBarriers.contains(wait.getBarriers()))
      releasedFull.insert(load.getBarriers());
  });
  emptyBarriers.insert_range(committedEmpty);
  if (!hasTma || specializedAlready)
    return;
  auto fail = [&](const Twine &message) {
    func.emitError() << "tilegpu-warp-specialize: " << message;
    signalPassFailure();
  };
  auto warpsAttr =
      func->getAttrOfType<IntegerAttr>(TileGPUDialect::getWarpsAttrName());
  if (!warpsAttr)
    return fail("the kernel has no tilegpu.warps; run tilegpu-assign-layouts "
                "first");
  if (emptyBarriers.empty())
    return fail("the TMA rings have no empty mbarriers; run "
                "convert-tile-to-tilegpu with empty-barriers=1");
  if (mmaWarp && readyBarriers.empty())
    return fail("mma-warp needs tcgen05 products handed over by ready "
                "mbarriers; run convert-tile-to-tilegpu with mma-warp=1");
  if (mmaWarp && producerWarps < 1 + issuers)
    return fail(
        "mma-warp puts an MMA warp per group of rows (" + Twine(issuers) +
        ") beside the producer's in its warpgroup, which needs at "
        "least " +
        Twine(1 + issuers) + " warps, not " + Twine(int64_t(producerWarps)));
  if (correction && !mmaWarp)
    return fail("correction needs mma-warp: the correction warps hand O to "
                "the MMA warps through its ready mbarriers");
  if (correction && factorBarriers.empty())
    return fail("correction needs the corrections of O handed off through "
                "shared memory; run convert-tile-to-tilegpu with "
                "correction=1");
  if (!correction && !factorBarriers.empty())
    return fail("the kernel hands its corrections of O off through shared "
                "memory (convert-tile-to-tilegpu with correction=1); run "
                "with correction=1, or convert without it");
  int64_t consumerWarps = warpsAttr.getInt();
  Block &entry = func.front();
  // The split starts after the CTA barrier that publishes the mbarriers'
  // initialization: both roles wait on them.
  Operation *lastInit = nullptr;
  for (Operation &op : entry)
    if (isa<MBarrierInitOp>(op))
      lastInit = &op;
  if (!lastInit)
    return fail("no mbarrier initialization at the top of the kernel");
  Operation *start = lastInit->getNextNode();
  while (start && !isa<gpu::BarrierOp>(start))
    start = start->getNextNode();
  if (!start || start == entry.getTerminator())
    return fail("no CTA barrier after the mbarriers' initialization");
  for (Operation &op : entry) {
    if (&op == start)
      break;
    if (llvm::any_of(op.getRegions(), [](Region &r) { return !r.empty(); }) ||
        isa<TmaLoadOp>(op))
      return fail("the kernel loads or branches before its mbarriers are "
                  "initialized");
  }
  for (auto init : entry.getOps<MBarrierInitOp>()) {
    // O's next product waits for the consumers' warps of its group and,
    // with correction, the correction's: twice as many.
    if (correction && correctedReady.contains(init.getBarriers()))
      init.setCount(2 * init.getCount());
    if (!emptyBarriers.contains(init.getBarriers()))
      continue;
    bool committed = committedEmpty.contains(init.getBarriers());
    int64_t expected =
        committed ? releasers.lookup(init.getBarriers()) : consumerWarps;
    if (static_cast<int64_t>(init.getCount()) != expected)
      return fail(
          "an empty mbarrier expects " + Twine(init.getCount()) +
          " arrivals, not " +
          (committed
               ? "one per issuer that releases it (" + Twine(expected) + ")"
               : "one per consumer warp (" + Twine(consumerWarps) + ")"));
  }

  // Every access to a TMA destination or mbarrier goes through one of
  // these ops; what else the producer's slice needs has no effects.
  auto isProducerOp = [&](Operation *op) {
    if (isa<TmaLoadOp>(op))
      return true;
    auto wait = dyn_cast<MBarrierWaitOp>(op);
    return wait && emptyBarriers.contains(wait.getBarriers());
  };
  // The MMA role's: the products, their commits (to their accumulators'
  // mbarriers, and the releases of the slots they read) and readiness
  // waits, which the consumers lose, and the waits for the full slots the
  // products read or the MMA warps release: a full wait with a product or
  // a commit after it in its block (not the drain before the store). A
  // slot that no product reads (the last prefetch) is released only once
  // its copy has landed: with two issuers, one of them releasing it early
  // would complete the phase of the slot's previous load for the other
  // (tilegpu-simulate-roles found this). The consumers keep the full waits
  // of rings they release themselves (they wait for the slot they
  // release); slots that the MMA warps release, and Q's, are none of their
  // business.
  auto isIssueOp = [&](Operation *op) {
    if (isa<TmemMmaOp, MmaCommitOp>(op))
      return true;
    auto wait = dyn_cast<MBarrierWaitOp>(op);
    return wait && readyBarriers.contains(wait.getBarriers());
  };
  auto isMmaRoleOp = [&](Operation *op) {
    auto wait = dyn_cast<MBarrierWaitOp>(op);
    if (isIssueOp(op))
      return true;
    if (!wait || !fullBarriers.contains(wait.getBarriers()))
      return false;
    // A drain between two loops (a prefetched slot that no product reads,
    // released right after its wait by the consumers) is not the MMA
    // warps' either: nothing orders their wait before that release, so the
    // producer could refill the slot first and the MMA warps, then a
    // phase behind, would wait for a phase that never completes
    // (tilegpu-simulate-roles found this, one query against one key: the
    // mask split's middle loop empty).
    if (auto release = dyn_cast_or_null<MBarrierArriveOp>(op->getNextNode());
        release && emptyBarriers.contains(release.getBarriers()))
      return false;
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (next->walk([](Operation *inner) {
                return isa<TmemMmaOp, MmaCommitOp>(inner)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted())
        return true;
    return false;
  };

  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(start);
  // With an MMA warp, the producer's warpgroup holds both: the producer
  // its first warp, the MMA role the others (one active per group of rows,
  // its issuer).
  // With correction, its warps follow the consumers', so that they start
  // on a warpgroup (tensor memory's lane quadrants are warp ids mod 4).
  SmallVector<Attribute> roleList = {
      RoleAttr::get(ctx, "consumer", consumerWarps, consumerRegisters, 0)};
  if (correction)
    roleList.push_back(RoleAttr::get(ctx, "correction", consumerWarps,
                                     correctionRegisters, 0));
  unsigned producerRole = roleList.size();
  roleList.push_back(RoleAttr::get(ctx, "producer", mmaWarp ? 1 : producerWarps,
                                   producerRegisters, 1));
  if (mmaWarp)
    roleList.push_back(RoleAttr::get(ctx, "mma", producerWarps - 1,
                                     producerRegisters, issuers));
  auto roles = b.getArrayAttr(roleList);
  auto specialized =
      WarpSpecializeOp::create(b, func.getLoc(), roles, roleList.size());
  SmallVector<Operation *> body;
  for (Operation *op = specialized->getNextNode(); op != entry.getTerminator();
       op = op->getNextNode())
    body.push_back(op);
  for (Region &region : specialized.getBodies()) {
    Block *block = b.createBlock(&region);
    b.setInsertionPointToEnd(block);
    IRMapping mapping;
    for (Operation *op : body)
      b.clone(*op, mapping);
  }
  for (Operation *op : llvm::reverse(body)) {
    op->dropAllUses();
    op->erase();
  }

  // Consumers: no loads (a load's result is the slot it fills) and no waits
  // for empty slots; with an MMA role, no products either.
  auto dropLoads = [](Region &region, auto &&alsoDrop) {
    SmallVector<Operation *> dropped;
    region.walk([&](Operation *op) {
      if (isa<TmaLoadOp>(op) || alsoDrop(op))
        dropped.push_back(op);
    });
    for (Operation *op : dropped) {
      if (auto load = dyn_cast<TmaLoadOp>(op))
        load.getResult().replaceAllUsesWith(load.getDst());
      op->erase();
    }
  };
  Region &consumer = specialized.getBodies()[0];
  dropLoads(consumer, [&](Operation *op) {
    if (isProducerOp(op) || (mmaWarp && isIssueOp(op)))
      return true;
    auto wait = dyn_cast<MBarrierWaitOp>(op);
    return mmaWarp && wait && !releasedFull.contains(wait.getBarriers()) &&
           isMmaRoleOp(op);
  });

  // A role keeps only the slice of the ops `roots` picks.
  auto keepSlice = [](Region &region, auto &&roots) {
    Slice slice(region);
    region.walk([&](Operation *op) {
      if (roots(op))
        slice.keepOp(op);
    });
    prune(region, slice);
  };
  // Producer: the slice of its loads and waits.
  keepSlice(specialized.getBodies()[producerRole], isProducerOp);
  // MMA role: the slice of the products, their commits and waits (a load's
  // result is the slot it fills, as for the consumers).
  if (mmaWarp) {
    Region &issuer = specialized.getBodies()[producerRole + 1];
    dropLoads(issuer, [](Operation *) { return false; });
    keepSlice(issuer, isMmaRoleOp);
  }
  if (correction) {
    // The consumers write the factors and arrive; the correction waits
    // for them and for O's products, reads the factors, scales O and
    // arrives for O's next product.
    auto isCorrectionOp = [&](Operation *op) {
      if (isa<TmemScaleRowsOp, TmemScaleStoreOp>(op))
        return true;
      if (auto wait = dyn_cast<MBarrierWaitOp>(op))
        return factorBarriers.contains(wait.getBarriers()) ||
               correctedDone.contains(wait.getBarriers());
      auto arrive = dyn_cast<MBarrierArriveOp>(op);
      return arrive && correctedReady.contains(arrive.getBarriers());
    };
    SmallVector<Operation *> handedOff;
    consumer.walk([&](Operation *op) {
      auto wait = dyn_cast<MBarrierWaitOp>(op);
      if (isa<TmemScaleRowsOp, TmemScaleStoreOp>(op) ||
          (wait && factorBarriers.contains(wait.getBarriers())))
        handedOff.push_back(op);
    });
    for (Operation *op : handedOff) {
      Operation *read = nullptr;
      if (isa<TmemScaleRowsOp, TmemScaleStoreOp>(op))
        read = op->getOperand(1).getDefiningOp<LocalLoadOp>();
      op->erase();
      if (read && read->use_empty())
        read->erase();
    }
    Region &corrector = specialized.getBodies()[1];
    dropLoads(corrector, [](Operation *) { return false; });
    keepSlice(corrector, isCorrectionOp);
  }

  // The MMA role shares the producer's warpgroup; the correction has as
  // many warps as the consumers.
  func->setAttr(TileGPUDialect::getWarpsAttrName(),
                b.getI64IntegerAttr((correction ? 2 : 1) * consumerWarps +
                                    producerWarps));
  if (failed(mlir::verify(specialized)))
    signalPassFailure();
}

} // namespace

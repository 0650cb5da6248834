//===- AllocateMemory.cpp - Offsets for shared and tensor memory ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A buffer lives until the last op of the kernel's body that uses it or a
// value derived from it (its slots, the copies into it, the waits for them,
// the loops that carry them, the tensor-memory buffers over its columns,
// its transposed views); a
// shared buffer from its tilegpu.alloc, a tensor-memory buffer from its first
// use (what it holds before is nobody's). A tensor-memory buffer whose uses
// all lie in one op nested in the body (one of the loops of the mask split,
// inside the backward's loop over a group's query heads) lives only while
// that op runs, when its first use overwrites it (a product that does not
// accumulate, a store of a whole tile): no iteration of an enclosing loop
// reads what an earlier one left. Two such buffers of one loop whose uses
// lie in disjoint stretches of its body share columns where each starts
// with a product, which its barrier (or ready arrival) and its issuer's
// order place after every earlier use of the other (the backward's Sᵀ,
// dPᵀ and dQ, one after the other in a step: FlashAttention-4's dQ over
// dP). (The products run asynchronously to the threads: a buffer first
// written by the threads does not follow one that a product last used.)
// Live ranges are intervals of the ops' pre-order.
// Buffers are placed in program order,
// each at the lowest aligned offset that no buffer live at the same time
// occupies (first fit), in its own memory space.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"
#include "tiled_attn/Target/TargetInfo.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUALLOCATEMEMORYPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

struct Placed {
  int64_t begin, end; // live range: pre-order indices of ops
  int64_t offset, size;
  /// A tensor-memory buffer that lives only while the loop `holder` runs:
  /// the ops of its body (pre-order indices) from the first that uses it
  /// to the last, and whether its first use is a product.
  Operation *holder = nullptr;
  int64_t bodyBegin = 0, bodyEnd = 0;
  bool startsWithProduct = false;
};

/// Whether `p` and `q` may take the same memory at once: never where they
/// live at the same time, except two tensor-memory buffers of one loop
/// whose uses lie in disjoint stretches of its body, each starting with a
/// product. Across each boundary between them (the later one's first
/// product, and the earlier one's in the next iteration) every earlier
/// use is ordered before that product: a read or write by the threads, by
/// the barrier or ready arrival that lets the product go; a product, by
/// its issuer's order (tcgen05.mma from one thread runs in issue order).
bool clashes(const Placed &p, const Placed &q) {
  if (q.begin > p.end || p.begin > q.end)
    return false;
  if (p.holder && p.holder == q.holder && p.startsWithProduct &&
      q.startsWithProduct &&
      (p.bodyEnd < q.bodyBegin || q.bodyEnd < p.bodyBegin))
    return false;
  return true;
}

/// The first and the last op of `body` that use `alloc`'s buffer or a
/// value derived from it (the alloc itself if none does).
std::pair<Operation *, Operation *>
userRange(AllocOp alloc, Block &body,
          SmallVectorImpl<Operation *> *users = nullptr) {
  SmallVector<Value> worklist = {alloc.getBuffer()};
  llvm::SmallPtrSet<Value, 8> seen;
  Operation *first = nullptr, *last = alloc;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      // An alias is where its uses are, not where it is named.
      if (isa<TmemAliasOp, TransposeViewOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (users)
        users->push_back(user);
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && last->isBeforeInBlock(top))
        last = top;
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
      if (isa<SlotOp, AsyncCopyOp, AsyncWaitOp>(user))
        worklist.push_back(user->getResult(0));
      if (auto loop = dyn_cast<scf::ForOp>(user)) {
        unsigned i = use.getOperandNumber() - loop.getNumControlOperands();
        worklist.push_back(loop.getRegionIterArgs()[i]);
        worklist.push_back(loop.getResult(i));
      }
      // A yielded buffer lives on in its parent's results (scf.if, scf.for)
      // and, for a loop, in the next iteration.
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = yield->getParentOp();
        worklist.push_back(parent->getResult(use.getOperandNumber()));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          worklist.push_back(loop.getRegionIterArgs()[use.getOperandNumber()]);
      }
    }
  }
  return {first ? first : alloc.getOperation(), last};
}

/// Whether `op` overwrites the whole of the tensor-memory buffer `buffer`
/// without reading it: a product into it that does not accumulate, or a
/// store of a whole tile.
bool overwrites(Operation *op, Value buffer) {
  if (auto mma = dyn_cast<TmemMmaOp>(op))
    return mma.getAcc() == buffer &&
           matchPattern(mma.getAccumulate(), m_Zero());
  if (auto store = dyn_cast<TmemStoreOp>(op))
    return store.getBuffer() == buffer;
  return false;
}

/// The innermost op nested in the kernel's body (not an op of the body
/// itself) that holds all of `users` in its single-block region, none of
/// them that op, where the first of them in program order (`firstUse`)
/// overwrites `buffer`; null if none.
Operation *enclosingOp(Value buffer, ArrayRef<Operation *> users, Block &body,
                       Operation *&firstUse) {
  firstUse = nullptr;
  if (users.empty())
    return nullptr;
  Block *block = &body;
  Operation *holder = nullptr;
  while (true) {
    Operation *only = block->findAncestorOpInBlock(*users.front());
    bool one =
        only && llvm::all_of(users, [&](Operation *user) {
          return user != only && block->findAncestorOpInBlock(*user) == only;
        });
    if (!one || only->getNumRegions() != 1 || !only->getRegion(0).hasOneBlock())
      break;
    if (block != &body)
      holder = only;
    block = &only->getRegion(0).front();
  }
  if (!holder)
    return nullptr;
  holder->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!firstUse && llvm::is_contained(users, op))
      firstUse = op;
  });
  return firstUse && overwrites(firstUse, buffer) ? holder : nullptr;
}

struct TileGPUAllocateMemoryPass final
    : tiled_attn::tilegpu::impl::TileGPUAllocateMemoryPassBase<
          TileGPUAllocateMemoryPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    // Each op's pre-order index, and the last index of the ops it holds.
    DenseMap<Operation *, int64_t> index, end;
    int64_t next = 0;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != func)
        index[op] = next++;
    });
    func.walk<WalkOrder::PostOrder>([&](Operation *op) {
      int64_t last = index.lookup(op);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Operation &inner : block)
            last = std::max(last, end.lookup(&inner));
      end[op] = last;
    });

    std::map<MemorySpace, SmallVector<Placed>> placed;
    int64_t sharedBytes = 0;
    WalkResult walk = func.walk([&](AllocOp alloc) {
      if (alloc->getBlock() != &body) {
        alloc.emitOpError() << "tilegpu-allocate-memory: allocations belong "
                               "at the top level of the kernel";
        return WalkResult::interrupt();
      }
      BufferType type = alloc.getBuffer().getType();
      SmallVector<Operation *> users;
      auto [first, last] = userRange(alloc, body, &users);
      // Shared buffers are taken from their alloc on (the placements the
      // Hopper and Ampere kernels were measured with); a buffer in tensor
      // memory from its first use, so that the accumulators of loops that
      // run one after the other (the mask split's S and P) share columns,
      // and only while the op that holds its uses runs where it can
      // (enclosingOp).
      Operation *holder = nullptr, *firstUse = nullptr;
      if (type.getMemorySpace() != MemorySpace::Tensor)
        first = alloc;
      else if ((holder = enclosingOp(alloc.getBuffer(), users, body, firstUse)))
        first = last = holder;
      Placed p{index[first], end[last], 0, type.getAllocationSize()};
      // Within a loop's body, the stretch of its ops that use the buffer
      // (clashes).
      if (isa_and_nonnull<scf::ForOp>(holder)) {
        Block &loopBody = holder->getRegion(0).front();
        p.holder = holder;
        p.bodyBegin = std::numeric_limits<int64_t>::max();
        p.bodyEnd = std::numeric_limits<int64_t>::min();
        for (Operation *user : users) {
          Operation *top = loopBody.findAncestorOpInBlock(*user);
          p.bodyBegin = std::min(p.bodyBegin, index[top]);
          p.bodyEnd = std::max(p.bodyEnd, end[top]);
        }
        p.startsWithProduct = isa<TmemMmaOp>(firstUse);
      }
      int64_t align = type.getMemoryEncoding().getAlignment();
      SmallVector<Placed> &space = placed[type.getMemorySpace()];
      // First fit: try 0 and the end of every live buffer, lowest first.
      SmallVector<int64_t> candidates = {0};
      for (const Placed &q : space)
        if (clashes(p, q))
          candidates.push_back(llvm::alignTo(q.offset + q.size, align));
      llvm::sort(candidates);
      for (int64_t c : candidates) {
        bool clash = llvm::any_of(space, [&](const Placed &q) {
          return clashes(p, q) && c < q.offset + q.size &&
                 q.offset < c + p.size;
        });
        if (!clash) {
          p.offset = c;
          break;
        }
      }
      space.push_back(p);
      alloc.setOffset(p.offset);
      if (type.getMemorySpace() == MemorySpace::Shared)
        sharedBytes = std::max(sharedBytes, p.offset + p.size);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    func->setAttr(TileGPUDialect::getSharedBytesAttrName(),
                  Builder(func).getI64IntegerAttr(sharedBytes));
    int64_t columns = 0;
    for (const Placed &p : placed[MemorySpace::Tensor])
      columns = std::max(columns, p.offset + p.size);
    if (columns > 512) {
      func.emitError() << "tilegpu-allocate-memory: the kernel needs "
                       << columns << " columns of tensor memory, more than "
                       << "the 512 there are";
      return signalPassFailure();
    }
    if (TargetAttr target = getTarget(func)) {
      std::optional<TargetInfo> info = TargetInfo::lookup(target.getChip());
      if (info && sharedBytes > info->sharedBytesPerBlock) {
        func.emitError() << "tilegpu-allocate-memory: the kernel needs "
                         << sharedBytes << " bytes of shared memory, more "
                         << "than the " << info->sharedBytesPerBlock
                         << " a block of " << target.getChip() << " has";
        return signalPassFailure();
      }
    }
  }
};

} // namespace

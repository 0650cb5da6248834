//===- WarpRoles.cpp - Warp-specialized regions ---------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A tilegpu.warp_specialize stays in place while its regions are converted
// (their thread ids counted from the role's first thread, see
// threadIdInRole), then becomes one branch per role on the thread's warp:
//
//   if (first <= warp < first + warps) {
//     setmaxnreg.{inc,dec} registers      // whole warpgroups, aligned
//     if (warp < first + active) { region }  // the others exit
//   }
//
// Roles that share a warpgroup (FlashAttention-4's load and MMA warps) sit
// in one branch of the warpgroup: its setmaxnreg, then a branch per role.
//
// A CTA barrier inside a role would wait for warps that never reach it: it
// becomes named barrier (role + 1) of the role's active threads.
//
// Warpgroups take turns (tilegpu.turn_*) through one named barrier per
// warpgroup after the roles': warpgroup i waits on barrier i for the
// arrival of warpgroup i - 1 (mod N), so each barrier counts 256 threads.
// Groups of warps (tilegpu.group_id, tilegpu.group_barrier: the row blocks
// of a tcgen05 kernel with two Q tiles) take the same barriers, one per
// group, each of its threads; a kernel uses turns or groups, not both.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

/// The registers per thread that a launch of `threads` threads leaves each
/// of them when one CTA fills the register file (what ptxas assumes under
/// nvvm.minctasm = 1).
static int64_t launchRegisters(int64_t threads) {
  return std::min<int64_t>(255, 65536 / threads) / 8 * 8;
}

LogicalResult tiled_attn::lowerWarpSpecialize(gpu::GPUFuncOp kernel,
                                              int64_t warps) {
  SmallVector<WarpSpecializeOp> specialized;
  kernel.walk([&](WarpSpecializeOp op) { specialized.push_back(op); });
  bool budgets = false;
  for (WarpSpecializeOp op : specialized) {
    int64_t total = 0, registerFile = 0;
    for (Attribute attr : op.getRoles()) {
      auto role = cast<RoleAttr>(attr);
      total += role.getWarps();
      registerFile += 32 * role.getWarps() *
                      (role.getRegisters() ? role.getRegisters()
                                           : launchRegisters(32 * warps));
    }
    if (total != warps)
      return op.emitError() << "GPU lowering: the roles hold " << total
                            << " warps, the kernel " << warps;
    // setmaxnreg.inc waits until the registers it asks for are free in the
    // CTA's pool, which holds what the launch gave its warps (each warp
    // launchRegisters per thread) and what setmaxnreg.dec gave back: budgets
    // past it wait forever. (24 and 240 for 4 and 8 warps fill the 64512 of
    // 384 threads at 168 exactly; 32 and 240 hang.)
    const int64_t pool = 32 * warps * launchRegisters(32 * warps);
    if (registerFile > pool)
      return op.emitError()
             << "GPU lowering: the roles' register budgets take "
             << registerFile << " registers, more than the " << pool
             << " a CTA of " << 32 * warps << " threads starts with ("
             << launchRegisters(32 * warps)
             << " each; setmaxnreg would wait forever); lower the budgets";
    Location loc = op.getLoc();
    OpBuilder b(op);
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value warp = arith::DivUIOp::create(b, loc, tid, cIdx(b, loc, 32));
    auto inWarps = [&](OpBuilder &ob, int64_t from, int64_t to) {
      Value below = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult,
                                          warp, cIdx(ob, loc, to));
      if (from == 0)
        return below;
      Value above = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::uge,
                                          warp, cIdx(ob, loc, from));
      return arith::AndIOp::create(ob, loc, above, below).getResult();
    };
    // The role's region on its active warps; CTA barriers inside it become
    // the role's named barrier.
    auto placeRole = [&](OpBuilder &inner, int64_t i, RoleAttr role,
                         int64_t first) {
      int64_t active = role.getActive() ? role.getActive() : role.getWarps();
      Block *target = inner.getInsertionBlock();
      if (active < role.getWarps()) {
        auto activeBranch =
            scf::IfOp::create(inner, loc, inWarps(inner, first, first + active),
                              /*withElse=*/false);
        target = activeBranch.thenBlock();
      }
      Block &body = op.getBodies()[i].front();
      target->getOperations().splice(target->getTerminator()->getIterator(),
                                     body.getOperations());
      if (active == warps)
        return;
      SmallVector<gpu::BarrierOp> barriers;
      target->walk(
          [&](gpu::BarrierOp barrier) { barriers.push_back(barrier); });
      for (gpu::BarrierOp barrier : barriers) {
        OpBuilder bb(barrier);
        auto i32 = [&](int64_t v) {
          return arith::ConstantIntOp::create(bb, loc, bb.getI32Type(), v);
        };
        NVVM::BarrierOp::create(bb, barrier.getLoc(), TypeRange{}, i32(i + 1),
                                i32(32 * active),
                                /*reductionOp=*/nullptr,
                                /*reductionPredicate=*/Value());
        barrier.erase();
      }
    };
    // Roles that share a warpgroup (the verifier gave them one budget) sit
    // in one branch of the warpgroup, whose warps all run its setmaxnreg.
    auto roles = llvm::to_vector(op.getRoles().getAsRange<RoleAttr>());
    int64_t first = 0;
    for (size_t i = 0; i < roles.size();) {
      size_t last = i;
      int64_t end = first + roles[i].getWarps();
      while (end % 4 && last + 1 < roles.size())
        end += roles[++last].getWarps();
      if (last == i)
        end = first + roles[i].getWarps();
      auto branch = scf::IfOp::create(b, loc, inWarps(b, first, end),
                                      /*withElse=*/false);
      OpBuilder inner = OpBuilder::atBlockBegin(branch.thenBlock());
      if (int64_t registers = roles[i].getRegisters()) {
        budgets = true;
        NVVM::SetMaxRegisterOp::create(
            inner, loc, registers,
            registers > launchRegisters(32 * warps)
                ? NVVM::SetMaxRegisterAction::increase
                : NVVM::SetMaxRegisterAction::decrease);
      }
      for (size_t r = i; r <= last; ++r) {
        int64_t roleEnd = first + roles[r].getWarps();
        if (last == i) {
          placeRole(inner, r, roles[r], first);
        } else {
          auto roleBranch = scf::IfOp::create(
              inner, loc, inWarps(inner, first, roleEnd), /*withElse=*/false);
          OpBuilder roleBuilder =
              OpBuilder::atBlockBegin(roleBranch.thenBlock());
          placeRole(roleBuilder, r, roles[r], first);
        }
        first = roleEnd;
      }
      i = last + 1;
    }
    op.erase();
  }
  if (budgets)
    kernel->setAttr("nvvm.minctasm", OpBuilder(kernel).getI32IntegerAttr(1));
  return success();
}

namespace {

/// The named barrier warpgroup `wg` waits on for its turn, and the count of
/// threads each such barrier expects (its waiter's and its predecessor's).
Value turnBarrier(OpBuilder &b, Location loc, Operation *op, Value wg) {
  Value id = arith::AddIOp::create(b, loc, wg,
                                   cIdx(b, loc, firstFreeNamedBarrier(op)));
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), id);
}

Value turnThreads(OpBuilder &b, Location loc) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), 256);
}

/// Lowers one turn op, given this thread's warpgroup (among the threads
/// that run it) and their number N > 1.
template <typename Op> struct TurnToNVVM final : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t warps = kernelWarps(op);
    if (warps % 4)
      return op.emitError() << "GPU lowering: warpgroups take turns, but "
                               "the op runs on "
                            << warps << " warps";
    int64_t n = warps / 4;
    if (n > 1) {
      Value wg =
          arith::DivUIOp::create(rewriter, loc, threadIdInRole(rewriter, loc),
                                 cIdx(rewriter, loc, 128));
      if (isa<TurnTakeOp>(op)) {
        NVVM::BarrierOp::create(rewriter, loc, TypeRange{},
                                turnBarrier(rewriter, loc, op, wg),
                                turnThreads(rewriter, loc),
                                /*reductionOp=*/nullptr,
                                /*reductionPredicate=*/Value());
      } else if (isa<TurnPassOp>(op)) {
        Value next = arith::RemUIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, wg, cIdx(rewriter, loc, 1)),
            cIdx(rewriter, loc, n));
        NVVM::BarrierArriveOp::create(rewriter, loc,
                                      turnBarrier(rewriter, loc, op, next),
                                      turnThreads(rewriter, loc));
      } else {
        Value last =
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, wg,
                                  cIdx(rewriter, loc, n - 1));
        auto guard = scf::IfOp::create(rewriter, loc, last, /*withElse=*/false);
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(guard.thenBlock());
        NVVM::BarrierArriveOp::create(
            rewriter, loc,
            turnBarrier(rewriter, loc, op, cIdx(rewriter, loc, 0)),
            turnThreads(rewriter, loc));
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// This thread's group: its thread id (in its role) over a group's threads.
struct GroupIdToNVVM final : OpConversionPattern<GroupIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GroupIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<int64_t> threads = groupThreads(op, op.getGroups());
    if (failed(threads))
      return failure();
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<arith::DivUIOp>(
        op, threadIdInRole(rewriter, loc), cIdx(rewriter, loc, *threads));
    return success();
  }
};

/// Group g synchronizes on named barrier (first free + g); one group is the
/// threads' own barrier (the role's, once lowerWarpSpecialize has run).
struct GroupBarrierToNVVM final : OpConversionPattern<GroupBarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GroupBarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getGroups() == 1) {
      rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
      return success();
    }
    FailureOr<int64_t> threads = groupThreads(op, op.getGroups());
    if (failed(threads))
      return failure();
    Value group =
        arith::DivUIOp::create(rewriter, loc, threadIdInRole(rewriter, loc),
                               cIdx(rewriter, loc, *threads));
    Value id = arith::AddIOp::create(
        rewriter, loc, group, cIdx(rewriter, loc, firstFreeNamedBarrier(op)));
    NVVM::BarrierOp::create(
        rewriter, loc, TypeRange{},
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI32Type(), id),
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                     *threads),
        /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateTurnToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TurnToNVVM<TurnStartOp>, TurnToNVVM<TurnTakeOp>,
               TurnToNVVM<TurnPassOp>, GroupIdToNVVM, GroupBarrierToNVVM>(
      converter, patterns.getContext());
}

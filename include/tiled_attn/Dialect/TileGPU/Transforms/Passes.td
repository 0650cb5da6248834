//===- Passes.td - Transforms at the GPU level -------------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD
#define TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileGPUAllocateMemoryPass
    : Pass<"tilegpu-allocate-memory", "::mlir::func::FuncOp"> {
  let summary = "Give every buffer its offset, overlapping buffers whose lives do not";
  let description = [{
    Each `tilegpu.alloc` without an offset gets one: buffers are placed in
    program order at the lowest aligned offset that no buffer live at the
    same time occupies. A buffer lives from its `tilegpu.alloc` to the last
    op of the kernel's body that uses it, or any value derived from it
    (slots, copies, waits, the loops that carry them). The kernel records
    its dynamic shared memory as `tilegpu.shared_bytes`; more than the
    target's shared memory per block is an error.

    ```mlir
    // Before
    %q = tilegpu.alloc : !tilegpu.buffer<128x128xf16, #tilegpu.shared<pad = 8>>
    %k = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    // After (func attribute tilegpu.shared_bytes = 52224)
    %q = tilegpu.alloc offset(0) : ...
    %k = tilegpu.alloc offset(34816) : ...
    ```
  }];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def TileGPUAttachTargetPass
    : Pass<"tilegpu-attach-target", "::mlir::ModuleOp"> {
  let summary = "Record the target chip and matrix-unit family on the module";
  let description = [{
    Looks the chip up in the target description (`TargetInfo`) and sets
    `tilegpu.target = #tilegpu.target<chip = ..., family = ...>` on the
    module. The family defaults to the chip's fastest that the compiler
    lowers (today mma_sync for every chip); naming one the chip lacks, or one
    not lowered yet, is an error. Every later pass reads the family from
    the module.

    ```mlir
    // After --tilegpu-attach-target="chip=sm_80"
    module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target chip (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, "
           "sm_120a, sm_121a)">,
    Option<"family", "family", "std::string", /*default=*/"\"\"",
           "Matrix-unit family: mma_sync, wgmma or tcgen05 (default: the "
           "chip's fastest that is implemented)">,
  ];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def TileGPUMergeBarriersPass
    : Pass<"tilegpu-merge-barriers", "::mlir::func::FuncOp"> {
  let summary = "Drop CTA barriers that no shared-memory access separates from the previous one";
  let description = [{
    The GPU-level conversion places a `gpu.barrier` before every copy into
    a buffer (nobody may still read it) and after every wait (everyone's
    part has landed). A barrier B1 whose previous barrier B0 in the same
    block is separated from it only by copy issues
    (`tilegpu.async_copy`, `tilegpu.slot`) and ops without memory effects
    is redundant: nothing touched shared memory between them, so B0 already
    orders what B1 would. It goes.

    With `hoist-waits`, waits between B0 and B1 no longer block the merge:
    each moves above B0 (it waits for a copy issued before B0), then B1
    goes. This gives FlashAttention-2's loop two barriers per K/V block:
    the barrier that frees a buffer for its refill is the one that
    publishes the other stream's landed copy. The number of copy groups
    each wait lets stay in flight is computed afterwards from the final
    order (`tilegpu-resolve-async-waits`), so this pass counts nothing.

    ```mlir
    // Before (hoist-waits)
    gpu.barrier
    %k1 = tilegpu.async_copy %kv[...] into %ks : ...
    ... softmax: register math ...
    %vr = tilegpu.async_wait %v : ...
    gpu.barrier
    // After
    %vr = tilegpu.async_wait %v : ...
    gpu.barrier
    %k1 = tilegpu.async_copy %kv[...] into %ks : ...
    ... softmax ...
    ```
  }];
  let options = [
    Option<"hoistWaits", "hoist-waits", "bool", /*default=*/"false",
           "Also merge across waits, moving them above the earlier barrier">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TileGPUResolveAsyncWaitsPass
    : Pass<"tilegpu-resolve-async-waits", "::mlir::func::FuncOp"> {
  let summary = "Count the copy groups each wait may leave in flight";
  let description = [{
    Each copy is one cp.async group, and a thread's groups complete in
    order, so waiting for a copy means waiting until at most N groups are
    pending, N being the groups issued after it. This pass traces each
    `tilegpu.async_wait`'s buffer to every copy it may come from (through
    loop-carried values: the first iteration's copies come from before the
    loop, the others from the previous iteration) and sets `pending` to the
    fewest groups issued after any of them on the way to the wait: a lower
    bound, so never a wait that is too short. Copies inside nested regions
    are not counted (they may not run). A copy it cannot trace gives 0.

    A loop that ends with copies in flight nobody waits for (a pipelined
    loop's last refills) is followed, when another copy comes after it, by
    a `tilegpu.async_wait_all`: the later copy may reuse their buffers.

    ```mlir
    // A K/V loop with both refills issued first: Q·Kᵀ waits for K_j while
    // V_j, K_j+1 and V_j+1 may stay in flight.
    %k = tilegpu.async_wait %kj pending(3) : ...
    ```
  }];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def TileGPUWarpSpecializePass
    : Pass<"tilegpu-warp-specialize", "::mlir::func::FuncOp"> {
  let summary = "Hand a kernel's TMA refills to a producer warp: FlashAttention-3's warp roles";
  let description = [{
    Takes a kernel whose TMA rings are paced by "empty" mbarriers
    (`convert-tile-to-tilegpu` with `empty-barriers`) and splits what
    follows the mbarriers' initialization into a `tilegpu.warp_specialize`
    of two roles:

    - `consumer`: the kernel's warps, first (their thread ids and layouts
      stay as they were), running everything but the TMA loads and the
      waits for empty slots; they wait for full slots, compute, release
      slots and store;
    - `producer`: `producer-warps` more warps (a warpgroup, so that it can
      give registers away), of which one runs the slice of the kernel that
      the TMA loads need: the same loops and branches, their bounds and the
      stream counts, with each refill after the wait for its empty slot.

    With `mma-warp`, a third role `mma` shares the producer's warpgroup
    (the producer takes its first warp, `mma` the others, one active per
    group of rows the products' commits name: an issuer per Q tile; one
    `setmaxnreg` for the warpgroup, as FlashAttention-4's load and MMA
    warps share one) and runs the slice that the tcgen05 products need:
    each issuer's wait on its group's ready mbarrier, the product of its
    row block (`tilegpu.tmem_mma`), the commit to its group's mbarrier, the
    commits that release the slots the products read, and the waits for
    the full slots. The consumers keep the rest: they arrive on their ready
    mbarrier when their tensor memory is ready and wait on their done
    mbarrier for the product (FlashAttention-4's MMA warp; a ready mbarrier
    is one whose wait comes right before a product, as
    convert-tile-to-tilegpu with `mma-warp` places it), and no longer wait
    for slots that the issuers release.

    With `correction` (and `mma-warp`), a role `correction` follows the
    consumers, with as many warps (a warpgroup per Q tile: its warps reach
    the same tensor-memory lanes as the consumers'), and runs the slice
    of the corrections of O that convert-tile-to-tilegpu with `correction`
    handed off: the wait on the group's factors mbarrier, the read of the
    factors, the waits for the products into O (the previous P.V), the
    scaling (`tilegpu.tmem_scale_rows`) and the arrival on the ready
    mbarrier of the next P.V, which then expects the consumers' warps and
    the correction's. The consumers keep the write of the factors and
    their arrival, and lose the rest (FlashAttention-4's correction
    warpgroup, here one per Q tile).

    All roles run the same loop structure, so they agree on every load's
    slot and phase, and every product's, without talking. With register budgets the roles move to
    them with `setmaxnreg` (FlashAttention-3: 24 and 240). The kernel's
    `tilegpu.warps` becomes the sum of the roles'. A kernel without TMA
    loads is left as it is.

    It runs after `tilegpu-allocate-memory`: the buffers keep the offsets
    that the single-role kernel's lifetimes gave them, which stay right
    because the consumers wait for every TMA copy (the drain before the
    staged store) before they write a buffer that overlaps a ring, and the
    producer touches no shared memory after its last copy.

    ```mlir
    tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>,
                             #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>] {
      ... // waits on full slots, wgmma, softmax, releases, the store
    }, {
      ... // waits on empty slots, tilegpu.tma_load
    }
    ```
  }];
  let options = [
    Option<"producerWarps", "producer-warps", "int64_t", /*default=*/"4",
           "Warps of the producer role (one of them issues the loads)">,
    Option<"producerRegisters", "producer-registers", "int64_t",
           /*default=*/"0",
           "Register budget of the producer's threads (0: the launch's)">,
    Option<"consumerRegisters", "consumer-registers", "int64_t",
           /*default=*/"0",
           "Register budget of the consumers' threads (0: the launch's)">,
    Option<"mmaWarp", "mma-warp", "bool", /*default=*/"false",
           "A third role, `mma`, in the producer's warpgroup (the producer "
           "keeps its first warp, the MMA role the others, one active per "
           "group of rows, at the producer's budget), whose warps' first "
           "threads issue the tcgen05 products, each its group's "
           "(FlashAttention-4's MMA warp); the kernel must hand them over by "
           "ready mbarriers (convert-tile-to-tilegpu with mma-warp)">,
    Option<"correction", "correction", "bool", /*default=*/"false",
           "With mma-warp: a role `correction`, as many warps as the "
           "consumers and right after them (a warpgroup per Q tile), that "
           "scales O in tensor memory with the row factors the consumers "
           "hand over through shared memory (convert-tile-to-tilegpu with "
           "correction); both roles arrive on the ready mbarrier of P.V">,
    Option<"correctionRegisters", "correction-registers", "int64_t",
           /*default=*/"0",
           "With correction: the correction warps' register budget per "
           "thread (0: the launch's)">,
  ];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def TileGPUPingPongPass
    : Pass<"tilegpu-pingpong", "::mlir::func::FuncOp"> {
  let summary = "Warpgroups take turns issuing their wgmma products (FlashAttention-3's ping-pong)";
  let description = [{
    In each block, a run of asynchronous (wgmma) `tilegpu.mma`s up to the
    first `tilegpu.mma_wait` after them is one turn: `tilegpu.turn_take`
    before its first mma (after the waits for its operands that precede
    it), `tilegpu.turn_pass` after its last. `tilegpu.turn_start` goes at
    the top of the kernel, after the CTA barrier that publishes the
    mbarriers, if there is one. The warpgroups then issue their products
    one after the other, and while one's run on the tensor cores the other
    computes its softmax. Every warpgroup runs the same loops and branches
    (they share the K/V blocks), so they take equally many turns.

    ```mlir
    tilegpu.turn_take
    %s = tilegpu.mma %q, %k, %zero : ...
    tilegpu.mbarrier_wait %vbar[%i], phase(%p) : ...
    %o = tilegpu.mma %p, %v, %acc : ...
    tilegpu.turn_pass
    %sr = tilegpu.mma_wait %s pending(1) : ...
    ```
  }];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def TileGPUSimulateRolesPass
    : Pass<"tilegpu-simulate-roles", "::mlir::func::FuncOp"> {
  let summary = "Run a kernel's synchronization on the host under random schedules";
  let description = [{
    A check for what no GPU here can run: the kernel's warp roles (or its
    groups of warps without roles) run one query block, op by op, their
    scalar arithmetic, loops and branches computed and their register tiles
    not, under `schedules` random interleavings with the asynchronous work:
    TMA copies land in any order and complete their transaction on their
    mbarrier; tcgen05 products run in their issuer's order and a commit
    arrives once the products before it are done; wgmma groups complete in
    order and `tilegpu.mma_wait` waits until at most `pending` are in
    flight; ping-pong turns pass between warpgroups. mbarriers count
    arrivals and phases, and a wait passes when the phase of its parity has
    completed, as `mbarrier.try_wait.parity` does. The Hopper kernels, which
    ran clean under compute-sanitizer, check the model.

    It is an error, naming the ops, when:
    - every agent waits and nothing is in flight (a deadlock);
    - an mbarrier gets more arrivals in a phase than it expects;
    - a product, ldmatrix or local load reads shared memory whose copy has
      not landed, a copy or staged store writes shared memory a product
      still reads, or two issuers' products touch the same tensor-memory
      columns;
    - a tcgen05.ld, tcgen05.st or correction touches tensor-memory columns
      that a product in flight writes (or reads, for a write).
    - an mbarrier is used (an arrival, a wait, a copy's completion) after a
      write of a buffer placed over its bytes, unless initialized again.
    A kernel that runs every schedule to its end gets a remark with the
    number of steps. Without lengths, it runs the corner cases of the
    kernel's blocks (from its `#tile.sdpa`): one key; a last partial block
    of four query blocks, for the middle and the last; a long key sequence
    with a partial last block. `tile-to-ptx{simulate-roles=N}` runs those
    with N schedules on every kernel it builds. Buffers need their offsets
    (after `tilegpu-allocate-memory`); cp.async copies (the mma.sync
    kernels without TMA) are not modelled.

    ```
    tiled-attn-opt kernel.mlir --tilegpu-simulate-roles="seq-q=300 seq-k=700 schedules=50"
    remark: tilegpu-simulate-roles: 50 schedules ran to the end (...): no deadlock, no hazard
    ```
  }];
  let options = [
    Option<"schedules", "schedules", "int64_t", /*default=*/"16",
           "Random schedules to run">,
    Option<"seqQ", "seq-q", "int64_t", /*default=*/"0",
           "Query length (the size of dimension 2 of the kernel's first and "
           "last views); 0 with seq-k 0: the kernel's corner cases, from "
           "its #tile.sdpa blocks">,
    Option<"seqK", "seq-k", "int64_t", /*default=*/"0",
           "Key length (dimension 2 of the second and third views)">,
    Option<"block", "block", "int64_t", /*default=*/"0",
           "The query block simulated (tile.block_id x)">,
    Option<"group", "group", "int64_t", /*default=*/"1",
           "Query heads per key/value head (dimension 1 of the query-side "
           "views; the key side has one): the backward's loop over a "
           "group's heads runs that many times">,
    Option<"seed", "seed", "int64_t", /*default=*/"1",
           "Seed of the first schedule (the others follow)">,
    Option<"maxSteps", "max-steps", "int64_t", /*default=*/"10000000",
           "Steps after which a schedule that has not ended is an error">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "No remark when every schedule ends (errors still)">,
  ];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

#endif // TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_TD

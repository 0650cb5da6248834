//===- TileGPUToNVVM.h - The GPU level to gpu/nvgpu/nvvm -------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The type converter of the GPU level, the per-thread helpers of the
// mma.sync family's patterns, and the functions that populate the patterns:
// one set for memory (every family), one per matrix-unit family, one for
// elementwise math on register tiles.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_TILEGPUTONVVM_TILEGPUTONVVM_H
#define TILED_ATTN_CONVERSION_TILEGPUTONVVM_TILEGPUTONVVM_H

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallVector.h"

namespace tiled_attn {
namespace encoding {
struct SharedMatrix;
} // namespace encoding

/// Where the registers of a tile in an mma.sync layout (acc, rows, cols, opa)
/// sit. With g = lane / 4 and t = lane % 4, register `e` of a lane in warp
/// `w` holds element
///   row = w * rowsPerWarp + g + rowOffset[e],  col = 2t + colOffset[e]
/// (a rank-1 layout uses only the coordinate it has: rows for `rows`,
/// columns for `cols`).
struct Fragment {
  tilegpu::MmaSyncKind kind;
  int64_t warps;
  /// Tiles of the layout: m-tiles, n-tiles (8 wide) or k-steps (16 wide).
  int64_t mTiles = 1, nTiles = 1;
  /// Rows a warp owns (0 when rows are not split over warps).
  int64_t rowsPerWarp = 0;
  llvm::SmallVector<int64_t> rowOffset, colOffset;
  /// A tile whose warps split its columns (`column_blocks` > 1): the
  /// offsets are those of one block's tile (`blockColumns` columns). Warps
  /// go in units of `warpUnit` (4 for a wgmma warpgroup, 1 for mma.sync):
  /// unit u holds block u % columnBlocks, as unit u / columnBlocks of the
  /// block's warps (LaneCoords::firstRow and firstCol place the lane).
  int64_t columnBlocks = 1, blockColumns = 0, warpUnit = 1;

  /// The fragment of a tile type in an mma.sync layout, or a wgmma layout
  /// (with column blocks: one block's, see columnBlocks).
  static Fragment get(mlir::RankedTensorType type);
  /// The fragment of a tile of `shape` in `layout`.
  static Fragment get(tilegpu::MmaSyncLayoutAttr layout,
                      llvm::ArrayRef<int64_t> shape);
  int64_t size() const { return std::max(rowOffset.size(), colOffset.size()); }
};

/// Whether a register tile of `encoding` has a Fragment: an mma.sync or
/// wgmma layout (with or without column blocks).
bool hasFragment(mlir::Attribute encoding);

/// Converts GPU-level types to their per-thread form: a register tile (in
/// any distributed layout) becomes a vector of the thread's registers, a
/// shared buffer a workgroup memref of its stored shape (padding included;
/// a ring has the slots first), a view a strided memref.
class TileGPUToNVVMTypeConverter : public mlir::TypeConverter {
public:
  TileGPUToNVVMTypeConverter();
};

/// rcp.approx.ftz.f32: 1/x on the MUFU unit (tanh's last step).
inline constexpr llvm::StringLiteral kRcpIntrinsic =
    "llvm.nvvm.rcp.approx.ftz.f";

/// The NVVM intrinsic that exp2 of an f32 register tile lowers to (the MUFU
/// instruction alone).
inline constexpr llvm::StringLiteral kExp2Intrinsic =
    "llvm.nvvm.ex2.approx.ftz.f";

/// lg2.approx.ftz.f32: log2(x) on the MUFU unit (the log-sum-exps' log).
inline constexpr llvm::StringLiteral kLog2Intrinsic =
    "llvm.nvvm.lg2.approx.ftz.f";

/// Creates, at `b`'s insertion point, the gpu.func of GPU-level kernel
/// `func` with the kernel ABI's explicit parameters (each tagged with its
/// `#tilegpu.param`), and moves `func`'s body into it. Views become a base
/// pointer (a rank-0 memref), sizes and strides, rebuilt into the strided
/// memref `converter` gives them at the kernel's start.
mlir::FailureOr<mlir::gpu::GPUFuncOp>
createKernelWithExplicitParams(mlir::OpBuilder &b, mlir::func::FuncOp func,
                               const mlir::TypeConverter &converter);

/// The warps that run `op`: those of its role when it sits in a
/// `tilegpu.warp_specialize` region (the role's active warps), else the
/// kernel's (its `tilegpu.warps`).
int64_t kernelWarps(mlir::Operation *op);

/// The thread's index among the threads that run the code at `b`'s
/// insertion point: gpu.thread_id x, less the first thread of the enclosing
/// warp role, if any. Register layouts and thread elections use it.
mlir::Value threadIdInRole(mlir::OpBuilder &b, mlir::Location loc);
/// The thread's group of `groupThreads` threads within its role (a
/// warpgroup: 128), as an index that ptxas knows is the same in every lane
/// of the warp: lane 0's value broadcast by shfl.sync.idx (CUTLASS's
/// canonical warpgroup index), built at `b`'s insertion point. Offsets and
/// wgmma descriptors computed from it stay where they are used (LLVM does
/// not hoist the shuffle out of a loop) and ptxas keeps them in uniform
/// registers, not in the threads' registers.
mlir::Value uniformGroupIndex(mlir::OpBuilder &b, mlir::Location loc,
                              int64_t groupThreads);

/// The first named barrier (1 to 15) that neither `bar.sync 0` nor the warp
/// roles around `op` use: 1 plus the number of roles, if any.
int64_t firstFreeNamedBarrier(mlir::Operation *op);

/// The threads of each of `groups` groups of consecutive warps of the
/// threads that run `op` (kernelWarps). Emits an error on `op` when the
/// warps do not split so.
mlir::FailureOr<int64_t> groupThreads(mlir::Operation *op, int64_t groups);
/// Creates `scf.if` on "this thread (in its role) is the first of group
/// `group`, of `threadsPerGroup` threads each" and moves `b` into its body
/// (hold an InsertionGuard to come back after it). Group 0's leader is the
/// first thread, as enterFirstThread.
void enterGroupLeader(mlir::OpBuilder &b, mlir::Location loc, int64_t group,
                      int64_t threadsPerGroup);

/// Where this thread sits in a tile of a `#tilegpu.tmem_lanes` layout:
/// its row block (128 rows each, null with one block), its warp's lane
/// quadrant, its lane, and its column group within the block (all index
/// values). checkQuadrants makes the role's warp ids mod 4 the CTA's, which
/// the hardware's quadrants follow.
struct TmemLanePosition {
  mlir::Value rowBlock, quadrant, lane, columnGroup;
};
TmemLanePosition tmemLanePosition(mlir::OpBuilder &b, mlir::Location loc,
                                  tilegpu::TmemLanesLayoutAttr layout);

/// Replaces each `tilegpu.warp_specialize` of `kernel` (its regions already
/// converted) by one branch per role on the thread's warp: `setmaxnreg` to
/// the role's budget, its region on the role's active warps, CTA barriers
/// inside it as named barriers of those warps. Marks the kernel for
/// `setmaxnreg` (nvvm.minctasm) when a role has a budget.
mlir::LogicalResult lowerWarpSpecialize(mlir::gpu::GPUFuncOp kernel,
                                        int64_t warps);

/// Whether the `width` elements of row `row` from column `col` lie inside a
/// view of `rows` x `cols`: row < rows and col + width <= cols. Every
/// bounds-checked copy and store asks this.
mlir::Value pieceInBounds(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value row, mlir::Value rows, mlir::Value col,
                          int64_t width, mlir::Value cols);

/// The band of a `tile.window_mask` over a thread's registers: register e
/// holds the element at row `rowBase + rowOffset[e]`, column `colBase +
/// colOffset[e]` (the offsets are constants of the layout), and is true
/// when lo <= column - row <= hi. Both register layouts lower the op
/// through this. The diagonal of register e is (colBase - rowBase) +
/// (colOffset[e] - rowOffset[e]), so the test moves the scalars to the
/// other side: with a = lo - (colBase - rowBase), b = hi - (colBase -
/// rowBase), clamped to just outside the offsets' range and narrowed to
/// i32, each register is two 32-bit compares of a constant with a or b.
mlir::Value inBand(mlir::OpBuilder &b, mlir::Location loc, mlir::Value rowBase,
                   mlir::Value colBase, llvm::ArrayRef<int64_t> rowOffset,
                   llvm::ArrayRef<int64_t> colOffset, mlir::Value lo,
                   mlir::Value hi);

/// An `index` constant (the lowering's shorthand for arith.constant).
mlir::Value cIdx(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// Per-lane coordinates, computed where they are needed (CSE merges them).
struct LaneCoords {
  mlir::Value tid, lane, warp, g, t;
  LaneCoords(mlir::OpBuilder &b, mlir::Location loc);

  /// `origin` plus the row of the lane's register 0 in `frag`:
  /// origin + warp * rowsPerWarp + g (with column blocks, warp is the
  /// warp's place among the warps of its block).
  mlir::Value firstRow(mlir::OpBuilder &b, mlir::Location loc,
                       const Fragment &frag, mlir::Value origin) const;
  /// `origin` plus the column of the lane's register 0 in `frag`: origin
  /// + 2t (with column blocks, plus the first column of the warpgroup's
  /// block).
  mlir::Value firstCol(mlir::OpBuilder &b, mlir::Location loc,
                       const Fragment &frag, mlir::Value origin) const;
  /// The warp's place among the warps of its column block (`warp` without
  /// column blocks).
  mlir::Value blockWarp(mlir::OpBuilder &b, mlir::Location loc,
                        const Fragment &frag) const;
  /// The first column of the warp's column block (null without column
  /// blocks).
  mlir::Value blockColumn(mlir::OpBuilder &b, mlir::Location loc,
                          const Fragment &frag) const;
};

/// The lane's eight registers of A-operand piece (mTile, kStep) of `frag`
/// (an `opa` fragment), read from the untransposed shared `buffer` that holds
/// the whole tile with one ldmatrix.x4.
/// The flat element index of (row, col) of a tile in TMA's swizzled panels
/// (`bufferType`'s encoding has a swizzle): its panel, its row in the
/// panel, and its 16-byte chunk xor-ed with the row as TMA stores it.
mlir::Value swizzledIndex(mlir::OpBuilder &b, mlir::Location loc,
                          tilegpu::BufferType bufferType, mlir::Value row,
                          mlir::Value col);

/// Whether ldmatrix() reads `buffer`: padded rows, or 128-byte swizzled
/// panels.
bool readsWithLdmatrix(tilegpu::BufferType buffer);

mlir::Value loadOperandA(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value buffer, tilegpu::BufferType bufferType,
                         const Fragment &frag, int64_t mTile, int64_t kStep);

/// One ldmatrix (`matrices` 8x8 matrices, `transpose`d or not) over the
/// converted shared `buffer` of type `bufferType`, each lane addressing the
/// 16-byte row piece at (row, col) of the stored tile. Rows padded for
/// ldmatrix are indexed as they are. 128-byte swizzled panels, as TMA
/// writes them, are indexed through the buffer's flat form with the
/// swizzle undone: column col lies in panel col / P (P columns of 128
/// bytes), row r of a panel 128 bytes after row r - 1, and the panel row's
/// 16-byte chunks are permuted, chunk c stored at c ^ (r % 8). The buffer
/// must be one readsWithLdmatrix accepts.
mlir::Value ldmatrix(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                     tilegpu::BufferType bufferType, mlir::Value row,
                     mlir::Value col, int64_t matrices, bool transpose);

/// `base` (an index) plus each register's constant offset: the index
/// vector of a lane's rows, columns or positions.
mlir::Value registerIndices(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value base, llvm::ArrayRef<int64_t> offsets);
/// Positions (tile.iota's registers): `base` (an index) plus each
/// register's constant offset, as a vector of `type` (i32, i64 or f32). An
/// f32 vector converts `base` once and adds the offsets as f32 constants,
/// one add per register instead of a conversion: exact while the positions
/// stay below 2^24. With a `step` (an f32), the positions times it: `base`
/// times the step once, then one multiply-add per register.
mlir::Value positionVector(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value base, llvm::ArrayRef<int64_t> offsets,
                           mlir::VectorType type,
                           mlir::Value step = mlir::Value());

/// fence.proxy.async.shared::cta: this thread's generic-proxy writes to
/// shared memory ordered before the async proxy's reads (wgmma, tcgen05.mma,
/// TMA) that a later barrier or arrival lets go.
void fenceAsyncShared(mlir::OpBuilder &b, mlir::Location loc);

/// Registers [offset, offset + size) of a lane's vector (a vector.shuffle,
/// which every backend lowers).
mlir::Value extractRegisters(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value vector, int64_t offset, int64_t size);
/// The registers of `pieces`, one after the other, in one vector.
mlir::Value concatRegisters(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::ArrayRef<mlir::Value> pieces);

/// The constant bits of the descriptor (`encode`: wgmma's or tcgen05's;
/// `unit` names it in the error) of an operand in the swizzled panels of
/// `panels` at address 0: its swizzle mode, the stride byte offset of 8
/// rows of the swizzle's bytes, and `leadingBytes`. The start address is
/// or'ed in at run time (sharedDescriptor).
mlir::FailureOr<uint64_t> swizzledDescriptorBits(
    mlir::Operation *op, llvm::StringRef unit,
    llvm::Expected<uint64_t> (*encode)(const encoding::SharedMatrix &),
    tilegpu::SharedEncodingAttr panels, int64_t leadingBytes);
/// The descriptor of the operand `byteOffset` bytes into shared `buffer`:
/// the start address >> 4 in bits 0-13 over `bits`. A constant part of
/// `byteOffset` that is a multiple of 16 is added to the low word of the
/// buffer's base descriptor (one 32-bit add per k-step, the base shared).
mlir::Value sharedDescriptor(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value buffer, mlir::Value byteOffset,
                             uint64_t bits);
/// The byte offset of k-step `kStep` (16 elements) of a K-major operand in
/// swizzled panels of `panelColumns` elements and `panelBytes` bytes.
int64_t kMajorStepOffset(int64_t kStep, int64_t panelColumns,
                         int64_t panelBytes, int64_t elementBytes);

/// Whether `predicate` holds in any lane of the warp (vote.sync.any over
/// the full mask): a warp-uniform condition.
mlir::Value warpVoteAny(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value predicate);
/// One step of a reduction of `kind`: max, min or sum of `x` and `y`.
mlir::Value combineReduction(mlir::OpBuilder &b, mlir::Location loc,
                             tile::ReduceKind kind, mlir::Value x,
                             mlir::Value y);

/// The shared-memory address (an `!llvm.ptr<3>`) of shared `memref`, plus
/// `byteOffset` (an index) when given.
mlir::Value sharedPointer(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value memref,
                          mlir::Value byteOffset = mlir::Value());
/// Whether this thread is the first of the CTA, or of its warp role (the
/// one that initializes mbarriers and issues TMA copies).
mlir::Value isThreadZero(mlir::OpBuilder &b, mlir::Location loc);
/// Creates `scf.if` on isThreadZero and moves `b` into its body: what is
/// built next, the first thread alone runs (hold an InsertionGuard to come
/// back after it).
void enterFirstThread(mlir::OpBuilder &b, mlir::Location loc);
/// The address of mbarrier `index` of the shared buffer `barriers`.
mlir::Value barrierPointer(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value barriers, mlir::Value index);

/// Allocates the kernel's tensor memory at its entry and deallocates it at
/// the end of its users (Tcgen05.cpp); records the columns on the kernel.
/// Nothing to do for a kernel without tensor-memory buffers.
mlir::LogicalResult setUpTensorMemory(mlir::gpu::GPUFuncOp kernel,
                                      mlir::gpu::GPUModuleOp gpuModule);

/// Buffers, asynchronous copies and their waits, block ids and sizes: the
/// same for every family. tile.wait_prior_grids and
/// tile.launch_dependent_grids become griddepcontrol with
/// `gridDependencyControl` (the chip has it), and nothing without.
void populateTileGPUMemoryToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns,
                                         bool gridDependencyControl);
/// tilegpu.cta_reduce in any register layout (CtaReduce.cpp).
void populateCtaReducePatterns(TileGPUToNVVMTypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
/// TMA copies and mbarriers (the Hopper and Blackwell families).
void populateTmaToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                               mlir::RewritePatternSet &patterns);

/// Warpgroups taking turns (tilegpu.turn_start/take/pass): named barriers,
/// one per warpgroup after the warp roles' (see WarpRoles.cpp).
void populateTurnToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                mlir::RewritePatternSet &patterns);
/// The tcgen05 family: tensor-memory allocation, tcgen05.mma and its
/// commit, tcgen05.ld/st, the correction (`skipUnitRowScales`: a warp skips
/// tilegpu.tmem_scale_rows when all its scales are 1), and the tmem_lanes
/// reductions, broadcasts, masks and stores.
void populateTcgen05ToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                   mlir::RewritePatternSet &patterns,
                                   bool skipUnitRowScales);
void populateTmemLanesPatterns(TileGPUToNVVMTypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
void populateWgmmaToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns,
                                 bool uniformWarpgroup);
/// The mma.sync family: mma, ldmatrix reads, layout moves, reductions,
/// broadcasts, masks and stores of its fragments.
void populateMmaSyncToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
/// What mma.sync's and wgmma's quad fragments share: in-place layout moves
/// (acc -> opa), accumulator-layout reads of shared blocks, reductions,
/// broadcasts, masks and stores.
void populateQuadFragmentPatterns(TileGPUToNVVMTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
/// The parts of the quad-fragment patterns, one file each.
void populateMmaSyncReducePatterns(TileGPUToNVVMTypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
void populateMmaSyncStorePatterns(TileGPUToNVVMTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
/// Elementwise math on register tiles of any layout. With
/// `skipUnitRowScales`, a warp skips `acc * broadcast(rows)` when all its
/// rows scale by exactly 1; with `exp2PolyEvery` = N > 0, exp2 of every
/// N-th register is a polynomial on the FMA units.
void populateElementwiseToNVVMPatterns(TileGPUToNVVMTypeConverter &converter,
                                       mlir::RewritePatternSet &patterns,
                                       bool skipUnitRowScales,
                                       int64_t exp2PolyEvery);

} // namespace tiled_attn

#endif // TILED_ATTN_CONVERSION_TILEGPUTONVVM_TILEGPUTONVVM_H

//===- tiled-attn-compile.cpp - Build kernels of the library --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Builds SDPA kernels of the kernel library: generates each from its
// configuration, applies its schedule, lowers it to PTX, assembles cubins
// with ptxas where it is installed, and records it in the library's
// manifest.json. The kernels come from the library's spec:
//
//   tiled-attn-compile --spec=kernels/library.json --out-dir=build/kernels
//   tiled-attn-compile --spec=kernels/library.json --list
//   tiled-attn-compile --spec=kernels/library.json \
//       --entry=sdpa_fwd_sm_80_f16_d128_top_left --out-dir=/tmp/k
//   tiled-attn-compile --spec=kernels/library.json --prune \
//       --targets=sm_90a,sm_80,sm_100a:top_left --out-dir=build/kernels
//
// A build is incremental: a kernel whose manifest entry has the hash of its
// inputs (its description, this compiler, ptxas's version) and whose files
// are there is not built again.
//
// or, for one kernel, from the generator's configuration and the option
// strings of the tile-schedule and tile-to-ptx pipelines:
//
//   tiled-attn-compile --head-dim=128 --dtype=bf16 --variant=top_left \
//       --block-m=128 \
//       --schedule="exp2=1 mask-split=1" \
//       --lowering="chip=sm_80 warps=4 smem-lhs=1" \
//       --cubin=sm_80,sm_90 --out-dir=build/kernels
//
//===----------------------------------------------------------------------===//

#include "BuildKernel.h"
#include "LibrarySpec.h"

#include "tiled_attn/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <memory>

using namespace mlir;
using namespace tiled_attn;
namespace cl = llvm::cl;

static cl::OptionCategory specCategory("Building a library spec");
static cl::OptionCategory kernelCategory(
    "Building one kernel (instead of --spec): what it computes, its "
    "schedule, its lowering");
static cl::OptionCategory outputCategory("Output");

static cl::opt<std::string>
    specPath("spec",
             cl::desc("Library spec to build every kernel of (the library's "
                      "is kernels/library.json)"),
             cl::value_desc("file"), cl::cat(specCategory));
static cl::list<std::string>
    entryNames("entry", cl::CommaSeparated,
               cl::desc("With --spec: build only these kernels (names as "
                        "--list prints them)"),
               cl::value_desc("name"), cl::cat(specCategory));
static cl::opt<bool> listOnly("list",
                              cl::desc("With --spec: print its kernels' names"),
                              cl::init(false), cl::cat(specCategory));
static cl::list<std::string> targets(
    "targets", cl::CommaSeparated,
    cl::desc("With --spec: build only the kernels of these targets, each "
             "'all', a chip (the chip of the PTX: sm_90a) or a chip and a "
             "variant (sm_100a:top_left)"),
    cl::value_desc("target"), cl::cat(specCategory));
static cl::opt<bool> prune(
    "prune",
    cl::desc("With --spec: drop from the library the kernels this run does "
             "not build (their manifest entries and files)"),
    cl::init(false), cl::cat(specCategory));

static cl::opt<int64_t> headDim("head-dim", cl::desc("Head dimension"),
                                cl::init(64), cl::cat(kernelCategory));
static cl::opt<int64_t>
    headDimV("head-dim-v",
             cl::desc("Head dimension of V and O where it differs from "
                      "--head-dim (0: the same)"),
             cl::init(0), cl::cat(kernelCategory));
static cl::opt<std::string> dtype("dtype", cl::desc("f16 or bf16"),
                                  cl::init("f16"), cl::cat(kernelCategory));
static cl::opt<std::string>
    variant("variant",
            cl::desc("What the kernel computes, as the library spec names it "
                     "(KernelVariant.def): <mask>[_feature...], e.g. none, "
                     "top_left, window_softcap_lse, none_varlen"),
            cl::init("none"), cl::cat(kernelCategory));
static cl::opt<int64_t> blockM("block-m", cl::desc("BLOCK_M"), cl::init(64),
                               cl::cat(kernelCategory));
static cl::opt<int64_t> blockN("block-n", cl::desc("BLOCK_N"), cl::init(64),
                               cl::cat(kernelCategory));
static cl::opt<int64_t>
    pageSize("page-size",
             cl::desc("A paged kernel's one page size, smaller than BLOCK_N "
                      "(its key blocks gathered from several pages); 0: any "
                      "multiple of BLOCK_N"),
             cl::init(0), cl::cat(kernelCategory));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("Options of the tile-schedule pipeline, e.g. "
                      "\"exp2=1 mask-split=1\""),
             cl::init(""), cl::cat(kernelCategory));
static cl::opt<std::string>
    lowering("lowering",
             cl::desc("Options of the tile-to-ptx pipeline, e.g. "
                      "\"chip=sm_80 warps=4 smem-lhs=1\" (chip, warps, "
                      "smem-lhs, staged-stores, skip-unit-row-scales, "
                      "merge-barriers, index-bitwidth, features, opt-level)"),
             cl::init(""), cl::cat(kernelCategory));
static cl::list<std::string>
    cubins("cubin", cl::CommaSeparated,
           cl::desc("Chips to assemble cubins for with ptxas"),
           cl::value_desc("chip"), cl::cat(kernelCategory));

static cl::opt<std::string> outDir("out-dir", cl::desc("Library folder"),
                                   cl::init("build/kernels"),
                                   cl::cat(outputCategory));
static cl::opt<std::string>
    ptxasPath("ptxas",
              cl::desc("ptxas to use (default: on PATH, else "
                       "/usr/local/cuda/bin/ptxas; without one, or with "
                       "'none', no cubins)"),
              cl::init(""), cl::cat(outputCategory));
static cl::opt<bool>
    describe("describe",
             cl::desc("Print, for each kernel, everything its files are made "
                      "from (name, configuration, blocks, every schedule and "
                      "lowering option, cubins), and build nothing"),
             cl::init(false), cl::cat(outputCategory));
static cl::opt<bool>
    rebuild("rebuild",
            cl::desc("Build every kernel again, even those whose manifest "
                     "entry says they are up to date"),
            cl::init(false), cl::cat(outputCategory));
static cl::opt<bool>
    keepIR("keep-ir",
           cl::desc("Also write each kernel's scheduled tile IR and GPU IR"),
           cl::init(false), cl::cat(outputCategory));

static int fail(const Twine &message) {
  llvm::errs() << "tiled-attn-compile: error: " << message << "\n";
  return 1;
}

/// The kernel that the single-kernel options describe.
static llvm::Expected<std::vector<KernelSpec>> kernelFromOptions() {
  if (listOnly || !entryNames.empty() || targets.getNumOccurrences() || prune)
    return llvm::createStringError(
        "--list, --entry, --targets and --prune need --spec");
  KernelSpec kernel;
  kernel.origin = "the command line";
  kernel.dtype = dtype;
  kernel.headDim = headDim;
  kernel.headDimV = headDimV;
  std::optional<KernelVariant> parsed = parseKernelVariant(variant);
  if (!parsed)
    return llvm::createStringError("--variant must be " +
                                   kernelVariantGrammar() + ", got '" +
                                   variant + "'");
  if (!parsed->functions.empty())
    return llvm::createStringError(
        "--variant: functions (+" + parsed->functions.front() +
        ") come from the functions folder next to a spec; use --spec");
  kernel.variant = std::move(*parsed);
  kernel.blockM = blockM;
  kernel.blockN = blockN;
  kernel.pageSize = pageSize;
  kernel.schedule = schedule;
  kernel.lowering = lowering;
  kernel.cubins.assign(cubins.begin(), cubins.end());
  if (llvm::Error error = finalizeKernelSpec(kernel))
    return std::move(error);
  std::vector<KernelSpec> kernels;
  kernels.push_back(std::move(kernel));
  return kernels;
}

/// The kernels of --spec, or those of them that --entry names.
static llvm::Expected<std::vector<KernelSpec>> kernelsFromSpec() {
  // (cl::list's operator& gives its storage, hence addressof.)
  cl::Option *cubinsOption = std::addressof(cubins);
  cl::Option *oneKernelOptions[] = {
      &headDim, &headDimV, &dtype,    &variant,  &blockM,
      &blockN,  &pageSize, &schedule, &lowering, cubinsOption};
  for (cl::Option *option : oneKernelOptions)
    if (option->getNumOccurrences())
      return llvm::createStringError(
          "--" + option->ArgStr.str() +
          " describes one kernel; with --spec, the spec describes them all");
  auto kernels = readLibrarySpec(specPath);
  if (kernels)
    kernels = selectTargets(std::move(*kernels), targets);
  if (!kernels || entryNames.empty())
    return kernels;
  for (const std::string &name : entryNames)
    if (llvm::none_of(*kernels, [&](const KernelSpec &kernel) {
          return kernel.name == name;
        }))
      return llvm::createStringError(
          "no kernel '" + name + "' in " + specPath + " (--list prints its " +
          std::to_string(kernels->size()) + " kernels)");
  std::vector<KernelSpec> chosen;
  for (KernelSpec &kernel : *kernels)
    if (llvm::is_contained(entryNames, kernel.name))
      chosen.push_back(std::move(kernel));
  return chosen;
}

static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("Kernels built at once, each on its own thread (0: one per "
                  "hardware thread)"),
         cl::init(0), cl::cat(outputCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&specCategory, &kernelCategory, &outputCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "tiled-attn-compile: build SDPA kernels of the kernel library (PTX, "
      "cubins, manifest.json), those of a library spec or one described by "
      "its options\n");

  auto kernels = specPath.empty() ? kernelFromOptions() : kernelsFromSpec();
  if (!kernels)
    return fail(llvm::toString(kernels.takeError()));
  if (listOnly) {
    for (const KernelSpec &kernel : *kernels)
      llvm::outs() << kernel.name << "\n";
    return 0;
  }

  if (describe) {
    for (const KernelSpec &kernel : *kernels)
      llvm::outs() << describeKernel(kernel) << "\n";
    return 0;
  }

  BuildSettings settings{outDir, findPtxas(ptxasPath), keepIR};
  if (settings.ptxas.empty() && ptxasPath != "none" &&
      llvm::any_of(*kernels, [](const KernelSpec &kernel) {
        return !kernel.cubins.empty();
      }))
    llvm::errs() << "tiled-attn-compile: ptxas not found; no cubins, the "
                    "library ships PTX only\n";
  settings.toolchain = toolchainId(
      llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail), settings.ptxas);
  settings.rebuild = rebuild;
  settings.previous = loadManifestEntries(settings.outDir);
  DialectRegistry registry;
  registerTiledAttnDialects(registry);
  initializeNVPTXToolchain();
  unsigned threads = jobs ? unsigned(jobs)
                          : llvm::hardware_concurrency().compute_thread_count();
  threads = std::min<size_t>(threads, kernels->size());
  // Several kernels at once, each in its own MLIR context on one thread;
  // after a failure no new kernel starts. The manifest is then put in the
  // spec's order, as a sequential build leaves it.
  settings.concurrent = threads > 1;
  std::atomic<bool> failedAny{false};
  std::atomic<size_t> upToDate{0};
  auto build = [&registry, &settings, &failedAny,
                &upToDate](const KernelSpec &kernel) {
    if (failedAny)
      return;
    BuildOutcome outcome = buildKernel(registry, kernel, settings);
    failedAny = failedAny || outcome == BuildOutcome::Failed;
    upToDate += outcome == BuildOutcome::UpToDate;
  };
  if (threads <= 1) {
    for (const KernelSpec &kernel : *kernels)
      build(kernel);
  } else {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (const KernelSpec &kernel : *kernels)
      pool.async([&build, &kernel] { build(kernel); });
    pool.wait();
  }
  if (failedAny)
    return 1;
  std::vector<std::string> names;
  for (const KernelSpec &kernel : *kernels)
    names.push_back(kernel.name);
  size_t pruned = 0;
  if (failed(orderManifest(settings.outDir, names, prune, pruned)))
    return 1;
  llvm::outs() << "tiled-attn-compile: " << kernels->size() << " kernels in "
               << settings.outDir << ": " << kernels->size() - upToDate
               << " built, " << upToDate << " up to date";
  if (prune)
    llvm::outs() << ", " << pruned << " others removed";
  llvm::outs() << "\n";
  return 0;
}

# Sets TILED_ATTN_CUDA_INCLUDE_DIR to the folder of the CUDA toolkit's
# cuda.h (CUDAToolkit_ROOT, CUDA_HOME, CUDA_PATH, /usr/local/cuda, then the
# system's), or leaves it NOTFOUND. The runtime library needs the header
# for types and enums only; nothing links libcuda.
find_path(TILED_ATTN_CUDA_INCLUDE_DIR cuda.h
  HINTS "${CUDAToolkit_ROOT}/include" "$ENV{CUDAToolkit_ROOT}/include"
        "$ENV{CUDA_HOME}/include" "$ENV{CUDA_PATH}/include"
  PATHS /usr/local/cuda/include
  NO_DEFAULT_PATH)
find_path(TILED_ATTN_CUDA_INCLUDE_DIR cuda.h)

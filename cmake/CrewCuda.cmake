# The optional CUDA backend (crew/tensor/backends/cuda, library crew_cuda; docs/devices.md).
#
#   -DCREW_CUDA=AUTO  built when nvcc is found (default)
#   -DCREW_CUDA=ON    required: configuring fails without a CUDA toolkit, cuDNN or NCCL
#   -DCREW_CUDA=OFF   never
#
# sm_90 SASS (H100/H200) plus compute_90 PTX for newer cards unless CMAKE_CUDA_ARCHITECTURES is
# given. Programs must start where no driver exists, so nothing links libcuda (not even the
# stub): cudart is static and finds the driver itself at the first CUDA call, cuDNN is linked
# (it starts in 0.01 s and dlopens its sub-libraries), and cuBLASLt is dlopen'ed at the first
# GPU matmul (linking it costs every process 0.5-0.8 s and 217 MB at start).
# Sets CREW_HAVE_CUDA.
set(CREW_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE CREW_CUDA PROPERTY STRINGS AUTO ON OFF)
set(CREW_HAVE_CUDA OFF)

if(NOT CREW_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)  # before enable_language, or nvcc's default (75) is used silently
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    string(APPEND CMAKE_CUDA_FLAGS " --expt-relaxed-constexpr")
    if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
    endif()
    enable_language(CUDA)
    # CMake 3.25 knows no flag for nvcc's C++20 (a target linking C++20 code asks for the
    # "CUDA20" dialect and configuring fails): name it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    find_package(CUDAToolkit)
    find_path(CREW_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CREW_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(CREW_CUBLASLT_INCLUDE_DIR cublasLt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(CUDAToolkit_FOUND AND CREW_CUDNN_INCLUDE_DIR AND CREW_CUDNN_LIBRARY AND CREW_CUBLASLT_INCLUDE_DIR)
      set(CREW_HAVE_CUDA ON)
    endif()
  endif()
  if(NOT CREW_HAVE_CUDA)
    if(CREW_CUDA STREQUAL "ON")
      message(FATAL_ERROR "CREW_CUDA=ON: no CUDA toolkit with cuDNN and cuBLASLt headers found "
                          "(nvcc: '${CMAKE_CUDA_COMPILER}', cudnn.h: '${CREW_CUDNN_INCLUDE_DIR}', "
                          "libcudnn: '${CREW_CUDNN_LIBRARY}')")
    endif()
    message(STATUS "crew: CUDA backend off (no CUDA toolkit with cuDNN found)")
  else()
    message(STATUS "crew: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES}, cuDNN ${CREW_CUDNN_LIBRARY})")
  endif()
endif()

# crew_add_cuda_module(): the library crew_cuda from crew/tensor/backends/cuda (.cpp and .cu).
# Recorded for the layering check either way (its files belong to it, not to crew_tensor).
function(crew_add_cuda_module)
  set(dir tensor/backends/cuda)
  crew_record_module(cuda "${dir}" "" "crew_tensor")  # CrewLayers.cmake
  if(NOT CREW_HAVE_CUDA)
    return()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/crew/${dir}/*.cpp ${PROJECT_SOURCE_DIR}/crew/${dir}/*.cu)
  add_library(crew_cuda STATIC ${sources})
  target_include_directories(crew_cuda PUBLIC ${PROJECT_SOURCE_DIR})
  # The CUDA headers are the module's own: nothing else in crew includes them.
  target_include_directories(crew_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CREW_CUDNN_INCLUDE_DIR}
                                               ${CREW_CUBLASLT_INCLUDE_DIR})
  target_link_libraries(crew_cuda PUBLIC crew_tensor PRIVATE CUDA::cudart_static ${CREW_CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
  target_compile_options(crew_cuda PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  set_target_properties(crew_cuda PROPERTIES CUDA_RUNTIME_LIBRARY Static)
  # The backend registers itself from a static initialiser that nothing references: keep it.
  target_link_options(crew_cuda INTERFACE "LINKER:-u,crew_cuda_backend_anchor")
endfunction()

# crew_add_nccl_module(): the library crew_nccl from crew/distributed/backends/nccl/cuda, the
# nccl process group's real driver (the group itself is crew_distributed's and compiles
# everywhere). libnccl.so.2 is loaded with dlopen when a group first needs it, so nothing
# links NCCL; only nccl.h is needed here. Sets nothing when CUDA or nccl.h is missing.
function(crew_add_nccl_module)
  set(dir distributed/backends/nccl/cuda)
  crew_record_module(nccl "${dir}" "" "crew_distributed;crew_cuda")  # CrewLayers.cmake
  if(NOT CREW_HAVE_CUDA)
    return()
  endif()
  find_path(CREW_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NOT CREW_NCCL_INCLUDE_DIR)
    message(STATUS "crew: no nccl.h: the nccl process group has no driver in this build")
    return()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/crew/${dir}/*.cpp)
  add_library(crew_nccl STATIC ${sources})
  target_include_directories(crew_nccl PUBLIC ${PROJECT_SOURCE_DIR})
  target_include_directories(crew_nccl PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CREW_NCCL_INCLUDE_DIR})
  target_link_libraries(crew_nccl PUBLIC crew_distributed crew_cuda PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
  target_compile_options(crew_nccl PRIVATE -Wall -Wextra -Wno-unused-parameter)
  target_link_options(crew_nccl INTERFACE "LINKER:-u,crew_nccl_driver_anchor")
endfunction()

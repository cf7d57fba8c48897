# All dependencies come from Debian packages (scripts/install_deps.sh installs them).
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)

# oneDNN's config names OpenCL::OpenCL as an interface dependency even for the CPU build.
find_package(OpenCL QUIET)
if(NOT TARGET OpenCL::OpenCL)
  add_library(OpenCL::OpenCL INTERFACE IMPORTED)
endif()
find_package(dnnl REQUIRED)

find_package(BLAS REQUIRED)  # OpenBLAS via the Debian alternatives
set(CREW_BLAS_LIBRARIES ${BLAS_LIBRARIES})
find_path(CREW_CBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas /usr/include)

find_package(Gloo REQUIRED PATHS /usr/share/cmake/Gloo)
find_package(CLI11 REQUIRED PATHS /usr/share/cmake/CLI11)

if(CREW_BUILD_TESTS OR CREW_BUILD_BENCH)
  find_package(GTest REQUIRED)
endif()
if(CREW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

if(CREW_BUILD_PYTHON)
  # Debian's interpreter (python3-dev, python3-numpy, pybind11-dev), not one earlier on PATH
  # such as a pyenv shim, unless the user names one with -DPython3_EXECUTABLE=...
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 REQUIRED CONFIG)
endif()

# The GPU parts (src/device/, docs/gpu.md): built where CMake finds CUDA (nvcc and the
# toolkit), never required. TUNA_CUDA: AUTO (default: when found), ON (an error without),
# OFF. libtuna itself is the same with or without them: its memory-kind checks ask CUDA's
# driver at run time (src/core/memkind.c) and nothing links CUDA into it.
set(TUNA_CUDA AUTO CACHE STRING "Build the GPU kernels and their tests: AUTO, ON or OFF")
set_property(CACHE TUNA_CUDA PROPERTY STRINGS AUTO ON OFF)
set(TUNA_HAVE_CUDA OFF)
if(NOT TUNA_CUDA STREQUAL "OFF" AND NOT TUNA_SMPI)
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90) # A100, H100/H200
    endif()
    enable_language(CUDA)
    set(TUNA_HAVE_CUDA ON)
    message(STATUS "tuna: CUDA ${CUDAToolkit_VERSION} found: the GPU kernels are built for "
                   "sm_${CMAKE_CUDA_ARCHITECTURES} (docs/gpu.md)")
  elseif(TUNA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "tuna: TUNA_CUDA=ON but no CUDA compiler or toolkit was found "
                        "(set CMAKE_CUDA_COMPILER, or TUNA_CUDA=AUTO / OFF)")
  else()
    message(STATUS "tuna: CUDA not found: the GPU kernels and the gpu tests are not built "
                   "(TUNA_CUDA=AUTO; docs/gpu.md)")
  endif()
endif()

if(TUNA_HAVE_CUDA)
  get_filename_component(tuna_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  # Compiled once: the static library of the gpu tests and libtuna-cuda, the kernels that
  # libtuna's CUDA transports load at run time (src/transport/cuda_kernels.c), next to it.
  add_library(tuna_device_objects OBJECT ${tuna_root}/src/device/permute.cu
              ${tuna_root}/src/device/reduce.cu ${tuna_root}/src/device/pack.cu)
  set_target_properties(tuna_device_objects PROPERTIES CUDA_STANDARD 17
                        CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
  target_include_directories(tuna_device_objects PUBLIC ${tuna_root}/src/device)
  if(TUNA_WERROR) # developer and CI builds only, as for the C code
    target_compile_options(tuna_device_objects PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Werror=all-warnings>)
  endif()
  add_library(tuna_device STATIC $<TARGET_OBJECTS:tuna_device_objects>)
  target_include_directories(tuna_device PUBLIC ${tuna_root}/src/device)
  target_link_libraries(tuna_device PUBLIC CUDA::cudart)
  if(NOT CMAKE_SOURCE_DIR STREQUAL "${tuna_root}/tests/gpu")
    add_library(tuna_cuda SHARED $<TARGET_OBJECTS:tuna_device_objects>)
    set_target_properties(tuna_cuda PROPERTIES OUTPUT_NAME tuna-cuda CUDA_RUNTIME_LIBRARY Shared)
    target_link_libraries(tuna_cuda PRIVATE CUDA::cudart)
    install(TARGETS tuna_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endif()

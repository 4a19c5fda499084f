# The NCCL path (docs/nccl.md): include/tuna_nccl.h and libtuna-nccl.so, built where the GPU
# kernels are (TUNA_HAVE_CUDA: cmake/tuna_cuda.cmake) and NCCL's header and library are found
# (NCCL_HOME, CUDA's own directories, the system's). TUNA_NCCL: AUTO (default: when found,
# else skipped with a message), ON (an error without), OFF. libtuna is the same either way:
# the NCCL path is a library of its own, libtuna's objects plus src/nccl/ and
# src/transport/nccl.c (which the main source glob leaves out).
set(TUNA_NCCL AUTO CACHE STRING "Build the NCCL path (libtuna-nccl): AUTO, ON or OFF")
set_property(CACHE TUNA_NCCL PROPERTY STRINGS AUTO ON OFF)
set(TUNA_HAVE_NCCL OFF)
set(TUNA_NCCL_SOURCES ${PROJECT_SOURCE_DIR}/src/transport/nccl.c)
file(GLOB tuna_nccl_rows CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/nccl/*.c)
list(APPEND TUNA_NCCL_SOURCES ${tuna_nccl_rows})

if(NOT TUNA_NCCL STREQUAL "OFF" AND NOT TUNA_SMPI)
  set(tuna_nccl_why "")
  if(NOT TUNA_HAVE_CUDA)
    set(tuna_nccl_why "the CUDA parts are not built (TUNA_CUDA, cmake/tuna_cuda.cmake)")
  else()
    find_path(NCCL_INCLUDE_DIR nccl.h
              HINTS $ENV{NCCL_HOME}/include ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY nccl
                 HINTS $ENV{NCCL_HOME}/lib $ENV{NCCL_HOME}/lib64 ${CUDAToolkit_LIBRARY_DIR})
    if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
      set(tuna_nccl_why "nccl.h or libnccl not found (set NCCL_HOME, or NCCL_INCLUDE_DIR and "
                        "NCCL_LIBRARY)")
    endif()
  endif()
  if(tuna_nccl_why STREQUAL "")
    set(TUNA_HAVE_NCCL ON)
    file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h tuna_nccl_v REGEX "define NCCL_(MAJOR|MINOR) ")
    string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*NCCL_MINOR +([0-9]+).*" "\\1.\\2"
           tuna_nccl_v "${tuna_nccl_v}")
    message(STATUS "tuna: NCCL ${tuna_nccl_v} found (${NCCL_LIBRARY}): libtuna-nccl is built "
                   "(docs/nccl.md)")
  elseif(TUNA_NCCL STREQUAL "ON")
    message(FATAL_ERROR "tuna: TUNA_NCCL=ON but ${tuna_nccl_why}")
  else()
    message(STATUS "tuna: the NCCL path is not built: ${tuna_nccl_why} (TUNA_NCCL=AUTO)")
  endif()
endif()

# tuna_add_nccl_library(target OUTPUT_NAME name [HOST_REDUCE]): libtuna's objects and the NCCL
# path's sources in one shared library. HOST_REDUCE: the stand-in build for tests
# (tests/support/nccl_standin.c), reductions by host code; the caller links the stand-in.
function(tuna_add_nccl_library target)
  cmake_parse_arguments(N "HOST_REDUCE" "OUTPUT_NAME" "" ${ARGN})
  add_library(${target} SHARED $<TARGET_OBJECTS:tuna_objects> ${TUNA_NCCL_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${N_OUTPUT_NAME} C_VISIBILITY_PRESET hidden
                        VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  target_compile_definitions(${target} PRIVATE TUNA_BUILDING)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    ${NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS}
    PRIVATE ${PROJECT_SOURCE_DIR}/src/core ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${target} PUBLIC MPI::MPI_C
                        PRIVATE m PkgConfig::JANSSON Threads::Threads ${CMAKE_DL_LIBS})
  if(N_HOST_REDUCE)
    target_compile_definitions(${target} PRIVATE TUNA_NCCL_HOST_REDUCE)
  else()
    target_link_libraries(${target} PRIVATE tuna_device CUDA::cudart ${NCCL_LIBRARY})
    # The kernels' library is not built hidden: its symbols stay inside (exported: tuna.h's
    # and tuna_nccl.h's functions only, ctest nccl_exported_symbols).
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()

if(TUNA_HAVE_NCCL)
  tuna_add_nccl_library(tuna_nccl OUTPUT_NAME tuna-nccl)
  add_library(tuna::tuna_nccl ALIAS tuna_nccl)
  install(FILES ${PROJECT_SOURCE_DIR}/include/tuna_nccl.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS tuna_nccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

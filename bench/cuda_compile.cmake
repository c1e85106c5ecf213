# `ninja bench-cuda-compile`: NVRTC cold compile and kernel-cache warm load of
# every kernel of LeNet-5 and of the transformer MLP block (dim 1024, hidden
# 4096), and the emulator's forwards/s on the reference models. Prints a
# table; not a ctest test (wall-clock figures are too noisy to gate on).
add_executable(cuda_compile_bench EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/cuda_compile.cpp)
target_link_libraries(cuda_compile_bench PRIVATE modelc_exec modelc_sema modelc_diagnostics)
target_compile_definitions(cuda_compile_bench PRIVATE
  MODELC_SOURCE_DIR="${MODELC_SOURCE_DIR}" MODELC_STDLIB_DIR="${MODELC_STDLIB_DIR}")
add_custom_target(bench-cuda-compile
  COMMAND cuda_compile_bench --runs 5
  DEPENDS cuda_compile_bench
  USES_TERMINAL)

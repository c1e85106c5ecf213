# `ninja bench-aot-load`: builds .mdlc artifacts of the reference MLP and
# LeNet-5 with `modelc build` and times loading them (bench/aot_load_bench.cpp,
# docs/artifacts.md). Not a ctest test: timings are too noisy to gate on.
add_executable(aot-load-bench ${CMAKE_CURRENT_LIST_DIR}/aot_load_bench.cpp)
target_link_libraries(aot-load-bench PRIVATE modelc_aot_loader modelc_runtime)
set_target_properties(aot-load-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

set(aot_ref ${MODELC_SOURCE_DIR}/../shared/ref)
set(aot_out ${CMAKE_BINARY_DIR}/bench-aot)
add_custom_target(bench-aot-load
  COMMAND ${CMAKE_COMMAND} -E make_directory ${aot_out}
  COMMAND $<TARGET_FILE:modelc> build ${MODELC_SOURCE_DIR}/examples/mlp.mdl --model Mlp
          --args in=784,hidden=256,out=10 -o ${aot_out}/mlp.mdlc
  COMMAND $<TARGET_FILE:modelc> build ${MODELC_SOURCE_DIR}/examples/lenet5.mdl --model LeNet5
          -o ${aot_out}/lenet5.mdlc
  COMMAND $<TARGET_FILE:aot-load-bench> --runs 20
          mlp=${aot_out}/mlp.mdlc,${aot_ref}/mlp/weights.safetensors,${aot_ref}/mlp/input.npy
          lenet5=${aot_out}/lenet5.mdlc,${aot_ref}/lenet5/weights.safetensors,${aot_ref}/lenet5/input.npy
  DEPENDS modelc aot-load-bench
  USES_TERMINAL)

# `ninja bench-aot-load-cuda`: LeNet-5 placed on cuda:0 (NVRTC needed to
# build it), loaded and run on the CPU emulator (no GPU on the build machines).
add_custom_target(bench-aot-load-cuda
  COMMAND ${CMAKE_COMMAND} -E make_directory ${aot_out}
  COMMAND $<TARGET_FILE:modelc> build ${MODELC_SOURCE_DIR}/examples/lenet5.mdl --model LeNet5
          --device cuda:0 --gpu-arch=sm_90 -o ${aot_out}/lenet5-cuda.mdlc
  COMMAND ${CMAKE_COMMAND} -E env MODELC_CUDA=emulate $<TARGET_FILE:aot-load-bench> --runs 20
          lenet5-cuda=${aot_out}/lenet5-cuda.mdlc,${aot_ref}/lenet5/weights.safetensors,${aot_ref}/lenet5/input.npy
  DEPENDS modelc aot-load-bench
  USES_TERMINAL)

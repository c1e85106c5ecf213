# `cmake --install BUILD --prefix P` lays out:
#   P/lib/libmodelc.so*            the embedding API (modelc_shared)
#   P/include/modelc/*.h           its public headers
#   P/bin/modelc                   the driver
#   P/share/modelc/stdlib/         the stdlib, which the library finds
#                                  relative to its own location
#   P/share/modelc/importers/torch/  the PyTorch importer `modelc import-torch`
#                                  runs, with its generated builtin_names.py
#   P/lib/cmake/modelc/            modelcConfig.cmake, version file, targets
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MODELC_INSTALL_STDLIBDIR ${CMAKE_INSTALL_DATADIR}/modelc/stdlib)
set(MODELC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/modelc)

install(DIRECTORY ${MODELC_STDLIB_DIR}/ DESTINATION ${MODELC_INSTALL_STDLIBDIR}
  FILES_MATCHING PATTERN "*.mdl")
install(DIRECTORY ${MODELC_SOURCE_DIR}/importers/torch/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/modelc/importers/torch FILES_MATCHING PATTERN "*.py"
  PATTERN tests EXCLUDE)
install(FILES ${CMAKE_BINARY_DIR}/importers/torch/builtin_names.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/modelc/importers/torch)

# The driver runs from the prefix too: LLVM's and MLIR's shared libraries
# stay where they were found at build time.
set_target_properties(modelc PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS modelc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(NOT TARGET modelc_shared)
  return() # MODELC_BUILD_EMBED_API is off: no library, no package
endif()
# Everything linked into the shared library must be position-independent
# code: Debian's default PIE code reaches LLVM's and MLIR's data with
# relocations a shared object cannot hold.
foreach(lib modelc_ast modelc_parse modelc_sema modelc_diagnostics modelc_grammar modelc_mlir
            modelc_lower modelc_jit modelc_blas_runtime modelc_mlirgen modelc_exec modelc_runtime
            modelc_cuda_runtime modelc_cudaexec modelc_cudaexec_jit modelc_device_plan modelc_cudagen
            modelc_aot_format modelc_aot_loader)
  if(TARGET ${lib})
    set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endforeach()
install(TARGETS modelc_shared EXPORT modelcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${MODELC_SOURCE_DIR}/include/modelc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT modelcTargets NAMESPACE modelc:: DESTINATION ${MODELC_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/modelcConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/modelcConfig.cmake
  INSTALL_DESTINATION ${MODELC_INSTALL_CMAKEDIR}
  PATH_VARS MODELC_INSTALL_STDLIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/modelcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/modelcConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/modelcConfigVersion.cmake
  DESTINATION ${MODELC_INSTALL_CMAKEDIR})

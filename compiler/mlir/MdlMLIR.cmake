# MdlMLIR.cmake: imports Debian's MLIR 22 (targets, TableGen helpers) into the including directory.
# MLIR's imported targets are directory-scoped, so every MLIR-side CMakeLists.txt includes this.
find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
include(TableGen)
include(AddLLVM)
include(AddMLIR)
set(MLIR_TABLEGEN_EXE /usr/lib/llvm-22/bin/mlir-tblgen)

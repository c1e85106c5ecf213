//===- MpiModule.cpp - The C interface modelc opens to reach Open MPI -----===//
//
// Built as libmodelc_mpi.so against Debian's Open MPI and opened with dlopen
// by Collective.cpp only when a process runs under mpirun, so the modelc
// binary itself never links or loads libmpi. Every function returns 0 on
// success or an MPI error code, whose text modelc_mpi_error_string gives.
// Counts above INT_MAX are sent in pieces.
//
//===----------------------------------------------------------------------===//
// The C API only: mpi.h would otherwise bring the deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>

extern "C" {

__attribute__((visibility("default"))) int modelc_mpi_init(int *rank, int *size, int *localRank,
                                                           int *localSize) {
  int provided = 0;
  int status = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (status != MPI_SUCCESS)
    return status;
  // Errors come back as codes, so modelc reports them instead of MPI
  // aborting the job from inside a call.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm local;
  status = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &local);
  if (status != MPI_SUCCESS)
    return status;
  MPI_Comm_rank(local, localRank);
  MPI_Comm_size(local, localSize);
  MPI_Comm_free(&local);
  return MPI_SUCCESS;
}

__attribute__((visibility("default"))) int modelc_mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support();
#else
  return 0;
#endif
}

__attribute__((visibility("default"))) void modelc_mpi_version(char *out, size_t size) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4".
  const char *comma = std::strchr(text, ',');
  size_t keep = comma ? size_t(comma - text) : std::strlen(text);
  std::snprintf(out, size, "%.*s", int(keep), text);
}

__attribute__((visibility("default"))) int modelc_mpi_allreduce(void *data, size_t count,
                                                                int isDouble) {
  MPI_Datatype type = isDouble ? MPI_DOUBLE : MPI_FLOAT;
  size_t element = isDouble ? sizeof(double) : sizeof(float);
  char *at = static_cast<char *>(data);
  while (count > 0) {
    int piece = count > size_t(INT_MAX) ? INT_MAX : int(count);
    int status = MPI_Allreduce(MPI_IN_PLACE, at, piece, type, MPI_SUM, MPI_COMM_WORLD);
    if (status != MPI_SUCCESS)
      return status;
    at += size_t(piece) * element;
    count -= size_t(piece);
  }
  return MPI_SUCCESS;
}

__attribute__((visibility("default"))) int modelc_mpi_bcast(void *data, size_t bytes, int root) {
  char *at = static_cast<char *>(data);
  while (bytes > 0) {
    int piece = bytes > size_t(INT_MAX) ? INT_MAX : int(bytes);
    int status = MPI_Bcast(at, piece, MPI_BYTE, root, MPI_COMM_WORLD);
    if (status != MPI_SUCCESS)
      return status;
    at += piece;
    bytes -= size_t(piece);
  }
  return MPI_SUCCESS;
}

__attribute__((visibility("default"))) void modelc_mpi_error_string(int code, char *out,
                                                                    size_t size) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    std::snprintf(text, sizeof text, "MPI error %d", code);
  std::snprintf(out, size, "%s", text);
}

__attribute__((visibility("default"))) void modelc_mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

__attribute__((visibility("default"))) int modelc_mpi_finalize() { return MPI_Finalize(); }

} // extern "C"

//===- CudaError.cpp - Errors of the CUDA runtime layer -------------------===//

#include "runtime/cuda/CudaError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc::cuda {

char CudaError::ID = 0;

void CudaError::log(llvm::raw_ostream &os) const {
  os << message;
  if (!compilerLog.empty())
    os << "\n" << compilerLog;
}

std::error_code CudaError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

llvm::Error makeCudaError(CudaErrorKind kind, const llvm::Twine &message, llvm::StringRef log) {
  return llvm::make_error<CudaError>(kind, message.str(), log.str());
}

std::optional<CudaErrorKind> consumeCudaErrorKind(llvm::Error error, std::string *text) {
  std::optional<CudaErrorKind> kind;
  llvm::handleAllErrors(
      std::move(error),
      [&](const CudaError &cudaError) {
        kind = cudaError.getKind();
        if (text) {
          *text = cudaError.getMessage().str();
          if (!cudaError.getLog().empty())
            *text += "\n" + cudaError.getLog().str();
        }
      },
      [&](const llvm::ErrorInfoBase &other) {
        if (text)
          *text = other.message();
      });
  return kind;
}

std::string noSuchDeviceMessage(int device, int deviceCount, llvm::StringRef machine) {
  return llvm::formatv("cuda:{0} does not exist: {1} has {2} GPU{3}", device, machine, deviceCount,
                       deviceCount == 1 ? "" : "s")
      .str();
}

} // namespace modelc::cuda

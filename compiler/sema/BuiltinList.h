//===- BuiltinList.h - The names and parameters of the built-ins -*- C++ -*-===//
//
// For tools (editor completion, documentation): every built-in function the
// checker knows, with its parameter list as written in calls.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_BUILTINLIST_H
#define MODELC_SEMA_BUILTINLIST_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace modelc::sema {

struct BuiltinSignature {
  llvm::StringRef name; // "log_softmax"
  std::string params;   // "x, dim" ; optional ones end in `?`
};

/// Every built-in, in the checker's table order.
std::vector<BuiltinSignature> builtinSignatures();

} // namespace modelc::sema

#endif // MODELC_SEMA_BUILTINLIST_H

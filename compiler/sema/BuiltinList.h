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

/// The checker's parameter list of built-in `name` ("x dim? keepdim?",
/// space-separated, `?` marks optional ones), or null for a non-built-in:
/// code generation binds call arguments by it.
const char *builtinParamList(llvm::StringRef name);

} // namespace modelc::sema

#endif // MODELC_SEMA_BUILTINLIST_H

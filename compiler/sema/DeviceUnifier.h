//===- DeviceUnifier.h - Inferring devices of created tensors ---*- C++ -*-===//
//
// Each creation op without an explicit placement (`randn([B, 10])`) gets a
// fresh device variable. Uses unify variables with each other and with
// devices (concrete or rigid parameters). Union-find with path compression;
// every class remembers the device that bound it and why, so diagnostics
// can say where a value got its device.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_DEVICEUNIFIER_H
#define MODELC_SEMA_DEVICEUNIFIER_H

#include "sema/CheckedProgram.h"
#include "sema/Type.h"

#include <optional>
#include <vector>

namespace modelc::sema {

class DeviceUnifier {
public:
  /// A fresh variable for the creation expression at `creation`.
  Device fresh(Range creation, std::string creationText);

  /// The bound device of `d`'s class, or the class representative variable.
  Device resolve(Device d);
  /// Why `d` is on its device: the binding's origin for bound variables.
  const DeviceOrigin *bindingOrigin(Device d);

  /// Unifies `a` and `b`. On success returns true (binding a variable to
  /// the other side with `origin` when one side is unbound). Returns false
  /// when both resolve to different devices.
  bool unify(Device a, Device b, const DeviceOrigin &origin);

  /// The source text of the creation that started `d`'s class ("" if none).
  llvm::StringRef creationText(Device d);

  /// Marks `d`'s class as poisoned (part of a failed expression): it is not
  /// reported as uninferable.
  void poison(Device d);

  struct Unbound {
    Range creation;
    std::string text;
  };
  /// One entry per unbound, unpoisoned class: its first creation.
  std::vector<Unbound> unboundClasses();

  void clear() { vars_.clear(); }

private:
  struct Var {
    unsigned parent;
    std::optional<Device> binding;
    DeviceOrigin origin;
    Range creation;
    std::string text;
    bool poisoned = false;
  };
  unsigned find(unsigned v);
  std::vector<Var> vars_;
};

} // namespace modelc::sema

#endif // MODELC_SEMA_DEVICEUNIFIER_H

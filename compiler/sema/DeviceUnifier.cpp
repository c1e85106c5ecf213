//===- DeviceUnifier.cpp - Union-find over device variables ---------------===//

#include "sema/DeviceUnifier.h"

using namespace modelc;
using namespace modelc::sema;

Device DeviceUnifier::fresh(Range creation, std::string creationText) {
  unsigned id = vars_.size();
  vars_.push_back(Var{id, std::nullopt, {}, creation, std::move(creationText)});
  return Device::var(id);
}

unsigned DeviceUnifier::find(unsigned v) {
  unsigned root = v;
  while (vars_[root].parent != root)
    root = vars_[root].parent;
  while (vars_[v].parent != root) { // path compression
    unsigned next = vars_[v].parent;
    vars_[v].parent = root;
    v = next;
  }
  return root;
}

Device DeviceUnifier::resolve(Device d) {
  if (!d.isVar() || size_t(d.index) >= vars_.size())
    return d;
  unsigned root = find(unsigned(d.index));
  if (vars_[root].binding)
    return *vars_[root].binding;
  return Device::var(root);
}

const DeviceOrigin *DeviceUnifier::bindingOrigin(Device d) {
  if (!d.isVar() || size_t(d.index) >= vars_.size())
    return nullptr;
  Var &root = vars_[find(unsigned(d.index))];
  return root.binding ? &root.origin : nullptr;
}

bool DeviceUnifier::unify(Device a, Device b, const DeviceOrigin &origin) {
  a = resolve(a);
  b = resolve(b);
  if (a == b)
    return true;
  if (a.isVar() && b.isVar()) {
    unsigned ra = unsigned(a.index), rb = unsigned(b.index);
    // Keep the older variable as the root so reports name the first creation.
    if (rb < ra)
      std::swap(ra, rb);
    vars_[rb].parent = ra;
    vars_[ra].poisoned |= vars_[rb].poisoned;
    return true;
  }
  if (a.isVar() || b.isVar()) {
    Var &v = vars_[unsigned(a.isVar() ? a.index : b.index)];
    v.binding = a.isVar() ? b : a;
    v.origin = origin;
    return true;
  }
  return false;
}

llvm::StringRef DeviceUnifier::creationText(Device d) {
  if (!d.isVar() || size_t(d.index) >= vars_.size())
    return "";
  return vars_[find(unsigned(d.index))].text;
}

void DeviceUnifier::poison(Device d) {
  d = resolve(d);
  if (d.isVar())
    vars_[unsigned(d.index)].poisoned = true;
}

std::vector<DeviceUnifier::Unbound> DeviceUnifier::unboundClasses() {
  std::vector<Unbound> out;
  for (unsigned v = 0; v < vars_.size(); ++v) {
    if (find(v) != v)
      continue;
    const Var &var = vars_[v];
    if (!var.binding && !var.poisoned)
      out.push_back({var.creation, var.text});
  }
  return out;
}

//===- gen_builtin_names.cpp - The importer's table of built-in names -----===//
//
// Writes builtin_names.py, the names of modelc's built-in functions, from
// compiler/sema/Builtins.def through the same X-macro the checker's table is
// made of: the importer never names a local after a built-in, and a name
// added there reaches it with the next build.
//
//   modelc_gen_builtin_names OUT.py
//
//===----------------------------------------------------------------------===//

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.py\n", argv[0]);
    return 2;
  }
  std::FILE *out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  std::fputs("\"\"\"The names of modelc's built-in functions: generated at build time from\n"
             "compiler/sema/Builtins.def by importers/torch/gen_builtin_names.cpp.\"\"\"\n\n"
             "BUILTINS = frozenset({\n",
             out);
#define BUILTIN(name, id, params) std::fputs("    \"" #name "\",\n", out);
#include "sema/Builtins.def"
#undef BUILTIN
  std::fputs("})\n", out);
  return std::fclose(out) == 0 ? 0 : 1;
}

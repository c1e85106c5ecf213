//===- CommandLineErrors.cpp - Usage errors in modelc's own words ---------===//

#include "CommandLineErrors.h"

#include "DriverOutput.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

namespace modelc::driver {

namespace {

/// `see `modelc build --help``.
std::string seeHelp(llvm::StringRef command) {
  return "see `modelc " + (command.empty() ? std::string() : command.str() + " ") + "--help`";
}

/// The text between the first pair of single quotes after `after`.
llvm::StringRef quoted(llvm::StringRef text, llvm::StringRef after = "") {
  size_t from = text.find(after);
  if (from == llvm::StringRef::npos)
    return {};
  llvm::StringRef rest = text.drop_front(from + after.size());
  size_t open = rest.find('\'');
  if (open == llvm::StringRef::npos)
    return {};
  rest = rest.drop_front(open + 1);
  return rest.take_until([](char c) { return c == '\''; });
}

/// `for the --stage option: Cannot find option named 'x'!` as modelc says it.
std::string optionProblem(llvm::StringRef option, llvm::StringRef problem,
                          llvm::StringRef command) {
  problem = problem.trim();
  if (problem.starts_with("requires a value"))
    return "error: " + option.str() + " needs a value; " + seeHelp(command);
  if (problem.starts_with("must be specified at least once"))
    return "error: " + option.str() + " is missing; " + seeHelp(command);
  if (problem.starts_with("Cannot find option named"))
    return "error: '" + quoted(problem).str() + "' is not a value of " + option.str() + "; " +
           seeHelp(command) + " for its values";
  if (problem.contains("value invalid for")) {
    llvm::StringRef kind = problem.split("value invalid for ").second.split(" argument").first;
    std::string want = kind == "uint" || kind == "ulong"               ? "a non-negative integer"
                       : kind.contains("int") || kind.contains("long") ? "an integer"
                       : kind.contains("float") || kind.contains("double") ? "a number"
                                                                           : kind.str();
    return "error: " + option.str() + " takes " + want + ", not '" + quoted(problem).str() + "'";
  }
  if (problem.starts_with("may only occur zero or one times"))
    return "error: " + option.str() + " is given more than once";
  if (problem.starts_with("does not allow a value"))
    return "error: " + option.str() + " takes no value; " + seeHelp(command);
  return "error: " + option.str() + ": " + problem.rtrim("!").str() + "; " + seeHelp(command);
}

} // namespace

std::vector<std::string> translateParserMessages(llvm::StringRef text, llvm::StringRef command) {
  std::vector<std::string> out;
  llvm::SmallVector<llvm::StringRef, 8> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  std::string modelc = command.empty() ? "`modelc`" : "`modelc " + command.str() + "`";
  for (llvm::StringRef line : lines) {
    // Drop the program name: `modelc: Unknown command line argument ...`.
    llvm::StringRef head = line.take_until([](char c) { return c == ':' || c == ' '; });
    if (line.drop_front(head.size()).starts_with(": "))
      line = line.drop_front(head.size() + 2);
    line = line.trim();
    if (line.empty() || line.starts_with("Must specify at least") ||
        line.starts_with("Can specify at most"))
      continue; // the second line of a positional-count message
    if (line.starts_with("Unknown command line argument")) {
      llvm::StringRef arg = quoted(line);
      out.push_back(arg.starts_with("-") ? "error: " + modelc + " has no option '" + arg.str() +
                                               "'; " + seeHelp(command)
                                         : "error: unexpected argument '" + arg.str() + "' to " +
                                               modelc + "; " + seeHelp(command));
    } else if (line.starts_with("Did you mean")) {
      out.push_back("help: did you mean '" + quoted(line).str() + "'?");
    } else if (line.starts_with("Unknown subcommand")) {
      out.push_back("error: unknown command '" + quoted(line).str() +
                    "'; the commands are check, explain, lsp, emit, run and build (" + seeHelp("") +
                    ")");
    } else if (line.starts_with("Not enough positional")) {
      out.push_back("error: " + modelc + " needs more arguments; " + seeHelp(command));
    } else if (line.starts_with("Too many positional")) {
      out.push_back("error: too many arguments to " + modelc + "; " + seeHelp(command));
    } else if (line.starts_with("for the ") && line.contains(" option: ")) {
      auto [option, problem] = line.drop_front(8).split(" option: ");
      out.push_back(optionProblem(option, problem, command));
    } else {
      out.push_back("error: " + line.rtrim("!").str());
    }
  }
  return out;
}

bool parseCommandLine(int argc, const char *const *argv, llvm::StringRef overview,
                      llvm::ArrayRef<llvm::cl::SubCommand *> commands) {
  // llvm::cl writes most of its messages to llvm::errs(), a stream on file
  // descriptor 2 that does not buffer; catch them in a temporary file.
  std::FILE *caught = std::tmpfile();
  int savedStderr = caught ? dup(STDERR_FILENO) : -1;
  bool redirected = savedStderr >= 0 && dup2(fileno(caught), STDERR_FILENO) >= 0;
  std::string direct;
  llvm::raw_string_ostream directStream(direct);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, argv, overview, &directStream);
  llvm::errs().flush();
  std::string text;
  if (redirected) {
    dup2(savedStderr, STDERR_FILENO);
    std::rewind(caught);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, caught)) > 0;)
      text.append(buffer, n);
  }
  if (savedStderr >= 0)
    close(savedStderr);
  if (caught)
    std::fclose(caught);
  text += direct;
  if (ok && text.empty())
    return true;
  llvm::StringRef command;
  for (llvm::cl::SubCommand *sub : commands)
    if (*sub)
      command = sub->getName();
  bool color = shouldColorStderr(ColorChoice::Auto);
  llvm::ColorMode mode = color ? llvm::ColorMode::Enable : llvm::ColorMode::Disable;
  for (const std::string &line : translateParserMessages(text, command)) {
    auto [kind, message] = llvm::StringRef(line).split(": ");
    llvm::WithColor(llvm::errs(), kind == "help" ? llvm::raw_ostream::CYAN : llvm::raw_ostream::RED,
                    /*Bold=*/true, /*BG=*/false, mode)
        << kind;
    llvm::WithColor(llvm::errs(), llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true, /*BG=*/false, mode)
        << ": " << message;
    llvm::errs() << "\n";
  }
  return ok;
}

} // namespace modelc::driver

//===- TextRenderer.cpp - rustc-style terminal output of diagnostics ------===//
//
// Rendering runs in two steps:
//   1. plan: resolve every label and edit to lines and display columns,
//      grouped into snippets (one per buffer), so the widest line number
//      of the whole diagnostic is known before anything prints;
//   2. print: headline, the main snippets, the `= note:`/`= help:` footer,
//      notes with locations, then suggestions showing the patched source.
// Under a source line, labels are laid out rustc's way: one row of
// underlines (`^` primary, `-` secondary), the rightmost message inline,
// every other message on its own row below, hanging from a `|`.
//
//===----------------------------------------------------------------------===//

#include "diagnostics/TextRenderer.h"

#include "diagnostics/SourcePosition.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Unicode.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace modelc;

namespace {

constexpr unsigned tabWidth = 4;

//===----------------------------------------------------------------------===//
// Styled output
//===----------------------------------------------------------------------===//

enum class Style {
  Plain,
  Error,
  Warning,
  Note,
  Help,
  LineNumber, // line numbers, `|`, `-->`, `=`
  Emphasis,   // bold: headlines
  Secondary,  // secondary labels
  Addition,
  Removal,
  Replacement,
};

Style levelStyle(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return Style::Error;
  case Severity::Warning:
    return Style::Warning;
  case Severity::Note:
    return Style::Note;
  case Severity::Help:
    return Style::Help;
  }
  return Style::Plain;
}

/// Writes text, wrapped in ANSI colour codes when colour is on.
class Printer {
public:
  Printer(llvm::raw_ostream &os, bool color)
      : os_(os), color_(color), savedColorsEnabled_(os.colors_enabled()) {
    os_.enable_colors(color);
  }
  ~Printer() { os_.enable_colors(savedColorsEnabled_); }

  Printer &write(llvm::StringRef text, Style style = Style::Plain) {
    if (!color_ || style == Style::Plain || text.empty()) {
      os_ << text;
      return *this;
    }
    auto [color, bold] = colorOf(style);
    os_.changeColor(color, bold);
    os_ << text;
    os_.resetColor();
    return *this;
  }
  Printer &spaces(unsigned count) {
    os_.indent(count);
    return *this;
  }
  Printer &newline() {
    os_ << '\n';
    return *this;
  }

private:
  static std::pair<llvm::raw_ostream::Colors, bool> colorOf(Style style) {
    using C = llvm::raw_ostream::Colors;
    switch (style) {
    case Style::Error:
    case Style::Removal:
      return {C::RED, true};
    case Style::Warning:
    case Style::Replacement:
      return {C::YELLOW, true};
    case Style::Note:
    case Style::Addition:
      return {C::GREEN, true};
    case Style::Help:
      return {C::CYAN, true};
    case Style::LineNumber:
    case Style::Secondary:
      return {C::BRIGHT_BLUE, true};
    case Style::Emphasis:
    case Style::Plain:
      break;
    }
    return {C::SAVEDCOLOR, true};
  }

  llvm::raw_ostream &os_;
  bool color_;
  bool savedColorsEnabled_;
};

/// One output row built cell by cell in display columns. A cell holds one
/// glyph, or a whole message that ends the row.
class StyledRow {
public:
  void put(unsigned column, std::string text, Style style) {
    if (cells_.size() <= column)
      cells_.resize(column + 1, Cell{" ", Style::Plain});
    cells_[column] = Cell{std::move(text), style};
  }
  void fill(unsigned from, unsigned to, char glyph, Style style) {
    for (unsigned column = from; column < to; ++column)
      put(column, std::string(1, glyph), style);
  }
  bool empty() const { return cells_.empty(); }
  /// Prints the cells, each run of one style in one escape sequence.
  void print(Printer &out) const {
    size_t end = cells_.size();
    while (end > 0 && cells_[end - 1].text == " ")
      --end;
    for (size_t i = 0; i < end;) {
      std::string run;
      size_t j = i;
      for (; j < end && cells_[j].style == cells_[i].style; ++j)
        run += cells_[j].text;
      out.write(run, cells_[i].style);
      i = j;
    }
  }

private:
  struct Cell {
    std::string text;
    Style style;
  };
  std::vector<Cell> cells_;
};

//===----------------------------------------------------------------------===//
// Source lines in display columns
//===----------------------------------------------------------------------===//

/// A source line as the terminal shows it: tabs expanded, unprintable or
/// malformed characters shown as U+FFFD. A line longer than `longLineBytes`
/// shows only a window around the part of interest, with `...` on the cut
/// sides, so a huge one-line file costs no more to render than a short one.
struct DisplayLine {
  std::string text;
  size_t firstByte = 0;               // line offset of the first byte shown
  std::vector<unsigned> columnOfByte; // per byte shown, plus one past the end

  unsigned width() const { return columnOfByte.back(); }
  /// The display column of byte `offset` of the line (clamped to the window).
  unsigned column(size_t offset) const {
    if (offset < firstByte)
      return columnOfByte.front();
    return columnOfByte[std::min(offset - firstByte, columnOfByte.size() - 1)];
  }
};

constexpr size_t longLineBytes = 400;
constexpr size_t windowContext = 60; // bytes shown either side of the focus

bool isUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Lays out `line`, or for a long line the window around bytes
/// [focusBegin, focusEnd). `cutBefore`/`cutAfter` say that `line` is itself
/// a window of a longer line, so that side gets `...` too.
DisplayLine layoutLine(llvm::StringRef line, size_t focusBegin = 0, size_t focusEnd = 0,
                       bool cutBefore = false, bool cutAfter = false) {
  size_t from = 0, to = line.size();
  if (line.size() > longLineBytes) {
    focusBegin = std::min(focusBegin, line.size());
    from = focusBegin > windowContext ? focusBegin - windowContext : 0;
    to = std::min(
        {line.size(), std::max(focusBegin, focusEnd) + windowContext, from + longLineBytes});
    while (from > 0 && isUtf8Continuation(line[from])) // keep characters whole
      --from;
    while (to < line.size() && isUtf8Continuation(line[to]))
      ++to;
  }

  DisplayLine display;
  display.firstByte = from;
  display.columnOfByte.reserve(to - from + 1);
  unsigned column = 0;
  if (from > 0 || cutBefore) {
    display.text = "...";
    column = 3;
  }
  for (size_t pos = from; pos < to;) {
    size_t length = utf8CharLength(line, pos);
    llvm::StringRef character = line.substr(pos, length);
    unsigned width;
    if (character == "\t") {
      display.text.append(tabWidth, ' ');
      width = tabWidth;
    } else if (int w = llvm::sys::unicode::columnWidthUTF8(character); w >= 0) {
      display.text += character;
      width = unsigned(w);
    } else {
      display.text += "\xEF\xBF\xBD"; // U+FFFD REPLACEMENT CHARACTER
      width = 1;
    }
    display.columnOfByte.insert(display.columnOfByte.end(), length, column);
    column += width;
    pos += length;
  }
  display.columnOfByte.push_back(column);
  if (to < line.size() || cutAfter)
    display.text += "...";
  return display;
}

/// Labels and messages print on one line each.
std::string singleLine(llvm::StringRef message) {
  std::string result = message.str();
  llvm::replace(result, '\n', ' ');
  return result;
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

struct PlacedLabel {
  unsigned startColumn, endColumn; // display columns, half-open, non-empty
  bool primary;
  std::string message;
  unsigned order; // position among the line's labels, to break ties
};

struct SnippetLine {
  DisplayLine display;
  std::vector<PlacedLabel> labels;
};

/// The labels of one buffer, by line.
struct Snippet {
  unsigned buffer;
  SourcePosition anchor; // where `-->` points: the first primary label
  std::map<unsigned, SnippetLine> lines;
};

/// Groups labels into one snippet per buffer, the primary label's first.
std::vector<Snippet> planSnippets(llvm::ArrayRef<Label> labels, const llvm::SourceMgr &sm) {
  // A label on a line, in byte offsets within the line.
  struct LineLabel {
    size_t begin, end;
    const Label *label;
  };
  struct PendingLine {
    llvm::StringRef text;
    std::vector<LineLabel> labels;
  };
  std::vector<std::pair<Snippet, std::map<unsigned, PendingLine>>> groups;

  std::vector<const Label *> ordered;
  for (const Label &label : labels)
    if (label.primary)
      ordered.push_back(&label);
  for (const Label &label : labels)
    if (!label.primary)
      ordered.push_back(&label);
  for (const Label *label : ordered) {
    auto ends = resolveRange(sm, label->range);
    if (!ends)
      continue;
    auto &[begin, end] = *ends;
    auto group = llvm::find_if(groups, [&](auto &g) { return g.first.buffer == begin.buffer; });
    if (group == groups.end()) {
      groups.emplace_back(Snippet{begin.buffer, begin, {}}, std::map<unsigned, PendingLine>{});
      group = std::prev(groups.end());
    }
    PendingLine &line = group->second[begin.line];
    line.text = begin.lineText;
    // A range over several lines is underlined to the end of its first line.
    size_t endByte = end.line == begin.line ? end.lineOffset : begin.lineText.size();
    line.labels.push_back(LineLabel{begin.lineOffset, endByte, label});
  }

  std::vector<Snippet> snippets;
  for (auto &[snippet, pending] : groups) {
    for (auto &[number, line] : pending) {
      size_t focusBegin = line.labels.front().begin, focusEnd = 0;
      for (const LineLabel &l : line.labels) {
        focusBegin = std::min(focusBegin, l.begin);
        focusEnd = std::max(focusEnd, l.end);
      }
      SnippetLine &shown = snippet.lines[number];
      shown.display = layoutLine(line.text, focusBegin, focusEnd);
      for (const LineLabel &l : line.labels) {
        unsigned startColumn = shown.display.column(l.begin);
        unsigned endColumn = std::max(shown.display.column(l.end), startColumn + 1);
        shown.labels.push_back(PlacedLabel{startColumn, endColumn, l.label->primary,
                                           singleLine(l.label->message),
                                           unsigned(shown.labels.size())});
      }
    }
    snippets.push_back(std::move(snippet));
  }
  return snippets;
}

unsigned maxLine(const Snippet &snippet) {
  return snippet.lines.empty() ? 0 : snippet.lines.rbegin()->first;
}

/// A suggestion's edits within one buffer, applied to the lines they touch.
struct Patch {
  enum Kind { Insertion, Deletion, Mixed } kind = Insertion;
  unsigned buffer = 0;
  SourcePosition anchor;
  unsigned firstLine = 0;
  std::string before, after;                // the touched lines, before and after the edits
  bool cutBefore = false, cutAfter = false; // a long line was cut to a window
  struct Marker {
    size_t begin, end; // byte offsets into `after` (Insertion) or `before` (Deletion)
    bool replaces;     // `~` rather than `+`
  };
  std::vector<Marker> markers;
};

std::vector<std::string> splitLines(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, '\n');
  std::vector<std::string> lines;
  for (llvm::StringRef part : parts)
    lines.push_back(part.ends_with("\r") ? part.drop_back().str() : part.str());
  return lines;
}

std::vector<Patch> planPatches(const Suggestion &suggestion, const llvm::SourceMgr &sm) {
  struct Resolved {
    SourcePosition begin, end;
    const Edit *edit;
  };
  std::vector<std::vector<Resolved>> byBuffer;
  for (const Edit &edit : suggestion.edits) {
    auto ends = resolveRange(sm, edit.range);
    if (!ends)
      continue;
    auto group = llvm::find_if(byBuffer, [&](const std::vector<Resolved> &g) {
      return g.front().begin.buffer == ends->first.buffer;
    });
    Resolved resolved{ends->first, ends->second, &edit};
    if (group == byBuffer.end())
      byBuffer.push_back({resolved});
    else
      group->push_back(resolved);
  }

  std::vector<Patch> patches;
  for (std::vector<Resolved> &edits : byBuffer) {
    // By start, then by report order (edits are contiguous in the vector).
    // A stable sort would do, but libstdc++'s warns under clang in C++20.
    llvm::sort(edits, [](const Resolved &a, const Resolved &b) {
      return std::tie(a.begin.offset, a.edit) < std::tie(b.begin.offset, b.edit);
    });
    // Keep the edits that change something and do not overlap an earlier
    // one (those cannot be applied together).
    std::vector<const Resolved *> kept;
    size_t covered = 0;
    for (const Resolved &r : edits) {
      bool noOp = r.edit->replacement.empty() && r.end.offset == r.begin.offset;
      if (noOp || (!kept.empty() && r.begin.offset < covered))
        continue;
      kept.push_back(&r);
      covered = r.end.offset;
    }
    if (kept.empty())
      continue;

    const SourcePosition &first = kept.front()->begin;
    llvm::StringRef text = sm.getMemoryBuffer(first.buffer)->getBuffer();
    Patch patch;
    patch.buffer = first.buffer;
    patch.anchor = first;
    patch.firstLine = first.line;
    // The touched lines; of a long line, only a window around the edits.
    size_t regionStart = first.offset - first.lineOffset;
    size_t regionEnd = std::min(text.find('\n', covered), text.size());
    if (first.offset - regionStart > longLineBytes) {
      regionStart = first.offset - windowContext;
      while (isUtf8Continuation(text[regionStart]))
        --regionStart;
      patch.cutBefore = true;
    }
    if (regionEnd - covered > longLineBytes) {
      regionEnd = covered + windowContext;
      while (regionEnd < text.size() && isUtf8Continuation(text[regionEnd]))
        ++regionEnd;
      patch.cutAfter = true;
    }

    bool deletes = false, inserts = false;
    std::vector<Patch::Marker> deletions;
    size_t copied = regionStart;
    for (const Resolved *r : kept) {
      const std::string &replacement = r->edit->replacement;
      patch.after += text.slice(copied, r->begin.offset);
      if (replacement.empty()) {
        deletes = true;
        deletions.push_back({r->begin.offset - regionStart, r->end.offset - regionStart, false});
      } else {
        inserts = true;
        patch.markers.push_back({patch.after.size(), patch.after.size() + replacement.size(),
                                 r->end.offset != r->begin.offset});
      }
      patch.after += replacement;
      copied = r->end.offset;
    }
    patch.after += text.slice(copied, regionEnd);
    patch.before = text.slice(regionStart, regionEnd).str();
    if (deletes && inserts) {
      patch.kind = Patch::Mixed;
      patch.markers.clear();
    } else if (deletes) {
      patch.kind = Patch::Deletion;
      patch.markers = std::move(deletions);
    }
    patches.push_back(std::move(patch));
  }
  return patches;
}

unsigned maxLine(const Patch &patch) {
  size_t lines = llvm::StringRef(patch.after).count('\n');
  if (patch.kind != Patch::Insertion)
    lines = std::max(lines, llvm::StringRef(patch.before).count('\n'));
  return patch.firstLine + unsigned(lines);
}

//===----------------------------------------------------------------------===//
// The renderer
//===----------------------------------------------------------------------===//

class TextRenderer {
public:
  TextRenderer(const llvm::SourceMgr &sm, Printer &out) : sm_(sm), out_(out) {}

  void render(const Diagnostic &diag) {
    std::vector<Snippet> mainSnippets = planSnippets(diag.labels, sm_);
    std::vector<std::pair<const Note *, std::vector<Snippet>>> locatedNotes;
    std::vector<const Note *> footerNotes;
    for (const Note &note : diag.notes) {
      std::vector<Snippet> snippets = planSnippets(note.labels, sm_);
      if (snippets.empty())
        footerNotes.push_back(&note);
      else
        locatedNotes.push_back({&note, std::move(snippets)});
    }
    std::vector<std::pair<const Suggestion *, std::vector<Patch>>> patchedHelps;
    std::vector<const Suggestion *> footerHelps;
    for (const Suggestion &suggestion : diag.suggestions) {
      std::vector<Patch> patches = planPatches(suggestion, sm_);
      if (patches.empty())
        footerHelps.push_back(&suggestion);
      else
        patchedHelps.push_back({&suggestion, std::move(patches)});
    }

    // The gutter fits the largest line number shown anywhere in `diag`.
    unsigned largest = 1;
    for (const Snippet &s : mainSnippets)
      largest = std::max(largest, maxLine(s));
    for (auto &[note, snippets] : locatedNotes)
      for (const Snippet &s : snippets)
        largest = std::max(largest, maxLine(s));
    for (auto &[help, patches] : patchedHelps)
      for (const Patch &p : patches)
        largest = std::max(largest, maxLine(p));
    gutter_ = unsigned(std::to_string(largest).size());

    Style level = levelStyle(diag.severity);
    out_.write((severityName(diag.severity) + "[" + diag.code() + "]").str(), level)
        .write(": " + diag.message, Style::Emphasis)
        .newline();
    mainBuffer_ = mainSnippets.empty() ? 0 : mainSnippets.front().buffer;
    if (mainSnippets.empty() && sm_.getNumBuffers() != 0) {
      // A file-level diagnostic: no snippet, only the file.
      out_.spaces(gutter_).write("-->", Style::LineNumber).write(" ");
      out_.write(bufferName(sm_, sm_.getMainFileID())).newline();
    }
    renderSnippets(mainSnippets, level);

    bool hasChildren = !diag.notes.empty() || !diag.suggestions.empty();
    if (hasChildren && !mainSnippets.empty())
      emptyGutter();
    for (const Note *note : footerNotes)
      footer("note", note->message);
    for (const Suggestion *help : footerHelps)
      footer("help", help->message);
    for (auto &[note, snippets] : locatedNotes) {
      out_.write("note", Style::Note).write(": " + note->message).newline();
      renderSnippets(snippets, Style::Note);
    }
    for (auto &[help, patches] : patchedHelps) {
      out_.write("help", Style::Help).write(": " + help->message).newline();
      for (const Patch &patch : patches)
        renderPatch(patch);
    }
    out_.newline();
  }

private:
  void emptyGutter() { out_.spaces(gutter_ + 1).write("|", Style::LineNumber).newline(); }

  void location(llvm::StringRef arrow, const SourcePosition &pos) {
    out_.spaces(gutter_).write(arrow, Style::LineNumber).write(" ");
    out_.write((bufferName(sm_, pos.buffer) + ":" + llvm::Twine(pos.line) + ":" +
                llvm::Twine(pos.column))
                   .str())
        .newline();
  }

  /// `  = note: message`, continuation lines aligned under the message.
  void footer(llvm::StringRef kind, llvm::StringRef message) {
    out_.spaces(gutter_ + 1).write("=", Style::LineNumber).write(" ");
    out_.write(kind, Style::Emphasis).write(": ");
    llvm::SmallVector<llvm::StringRef> lines;
    message.split(lines, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i != 0)
        out_.spaces(gutter_ + 1 + 2 + unsigned(kind.size()) + 2);
      out_.write(lines[i]).newline();
    }
  }

  /// `N | text` with `mark` in place of `|` (`-`/`+` in diffs).
  void sourceRow(unsigned line, const DisplayLine &display, llvm::StringRef mark = "|",
                 Style markStyle = Style::LineNumber) {
    std::string number = std::to_string(line);
    // Left-aligned, as rustc does: "9  |" under "10 |".
    out_.write(number, Style::LineNumber).spaces(gutter_ - unsigned(number.size()) + 1);
    out_.write(mark, markStyle);
    if (!display.text.empty())
      out_.write(" ").write(display.text);
    out_.newline();
  }

  void annotationRow(const StyledRow &row) {
    out_.spaces(gutter_ + 1).write("|", Style::LineNumber);
    if (!row.empty()) {
      out_.write(" ");
      row.print(out_);
    }
    out_.newline();
  }

  /// The first snippet opens with `-->`; snippets in other files follow a
  /// separator and open with `:::`, as in rustc.
  void renderSnippets(llvm::ArrayRef<Snippet> snippets, Style primaryStyle) {
    for (size_t i = 0; i < snippets.size(); ++i) {
      if (i != 0)
        emptyGutter();
      renderSnippet(snippets[i], i == 0 ? "-->" : ":::", primaryStyle);
    }
  }

  void renderSnippet(const Snippet &snippet, llvm::StringRef arrow, Style primaryStyle) {
    location(arrow, snippet.anchor);
    emptyGutter();
    unsigned previous = 0;
    for (auto &[line, content] : snippet.lines) {
      if (previous != 0) {
        if (line - previous - 1 > 2) {
          out_.write("...", Style::LineNumber).newline();
        } else {
          for (unsigned gap = previous + 1; gap < line; ++gap)
            sourceRow(gap, layoutLine(lineOfBuffer(sm_, snippet.buffer, gap)));
        }
      }
      sourceRow(line, content.display);
      renderLabels(content.labels, primaryStyle);
      previous = line;
    }
  }

  /// Underlines, then messages: the rightmost inline, the rest hanging.
  void renderLabels(std::vector<PlacedLabel> labels, Style primaryStyle) {
    llvm::sort(labels, [](const PlacedLabel &a, const PlacedLabel &b) {
      return std::tie(a.startColumn, a.endColumn, a.order) <
             std::tie(b.startColumn, b.endColumn, b.order);
    });
    auto styleOf = [&](const PlacedLabel &l) {
      return l.primary ? primaryStyle : Style::Secondary;
    };

    StyledRow underline;
    for (const PlacedLabel &l : labels)
      if (!l.primary)
        underline.fill(l.startColumn, l.endColumn, '-', Style::Secondary);
    for (const PlacedLabel &l : labels)
      if (l.primary)
        underline.fill(l.startColumn, l.endColumn, '^', primaryStyle);

    unsigned rightEdge = 0;
    for (const PlacedLabel &l : labels)
      rightEdge = std::max(rightEdge, l.endColumn);
    const PlacedLabel &last = labels.back();
    bool lastInline = !last.message.empty() && last.endColumn == rightEdge;
    if (lastInline)
      underline.put(rightEdge + 1, last.message, styleOf(last));
    annotationRow(underline);

    std::vector<const PlacedLabel *> hanging;
    for (size_t i = 0; i < labels.size(); ++i)
      if (!labels[i].message.empty() && !(lastInline && i + 1 == labels.size()))
        hanging.push_back(&labels[i]);
    if (hanging.empty())
      return;
    StyledRow connectors;
    for (const PlacedLabel *l : hanging)
      connectors.put(l->startColumn, "|", styleOf(*l));
    annotationRow(connectors);
    for (size_t i = hanging.size(); i-- > 0;) {
      StyledRow row;
      for (size_t j = 0; j < i; ++j)
        row.put(hanging[j]->startColumn, "|", styleOf(*hanging[j]));
      row.put(hanging[i]->startColumn, hanging[i]->message, styleOf(*hanging[i]));
      annotationRow(row);
    }
  }

  /// Lays out line `i` of a patch's `lines`, marking where a long line was cut.
  static DisplayLine layoutPatchLine(const Patch &patch, const std::vector<std::string> &lines,
                                     size_t i, size_t focusBegin = 0, size_t focusEnd = 0) {
    return layoutLine(lines[i], focusBegin, focusEnd, patch.cutBefore && i == 0,
                      patch.cutAfter && i + 1 == lines.size());
  }

  void renderPatch(const Patch &patch) {
    if (patch.buffer != mainBuffer_)
      location("-->", patch.anchor);
    emptyGutter();
    std::vector<std::string> before = splitLines(patch.before);
    std::vector<std::string> after = splitLines(patch.after);
    if (patch.kind == Patch::Mixed) {
      for (size_t i = 0; i < before.size(); ++i)
        sourceRow(patch.firstLine + unsigned(i), layoutPatchLine(patch, before, i), "-",
                  Style::Removal);
      for (size_t i = 0; i < after.size(); ++i)
        sourceRow(patch.firstLine + unsigned(i), layoutPatchLine(patch, after, i), "+",
                  Style::Addition);
      return;
    }
    bool deletion = patch.kind == Patch::Deletion;
    const std::vector<std::string> &shown = deletion ? before : after;
    llvm::StringRef shownText = deletion ? patch.before : patch.after;
    std::vector<DisplayLine> displays;
    std::vector<StyledRow> rows(shown.size());
    std::optional<size_t> lastMarkedRow;
    unsigned lastMarkedEnd = 0;
    size_t lineStart = 0; // byte offset of shown[i] in shownText
    for (size_t i = 0; i < shown.size(); ++i) {
      // The parts of markers on this line, in line offsets.
      struct Span {
        size_t from, to;
        bool replaces;
      };
      std::vector<Span> spans;
      size_t lineEnd = lineStart + shown[i].size();
      for (const Patch::Marker &m : patch.markers) {
        size_t from = std::max(m.begin, lineStart), to = std::min(m.end, lineEnd);
        if (from < to)
          spans.push_back(Span{from - lineStart, to - lineStart, m.replaces});
      }
      displays.push_back(
          spans.empty() ? layoutPatchLine(patch, shown, i)
                        : layoutPatchLine(patch, shown, i, spans.front().from, spans.back().to));
      const DisplayLine &display = displays.back();
      for (const Span &span : spans) {
        char glyph = deletion ? '-' : span.replaces ? '~' : '+';
        Style style = deletion        ? Style::Removal
                      : span.replaces ? Style::Replacement
                                      : Style::Addition;
        unsigned toColumn = display.column(span.to);
        rows[i].fill(display.column(span.from), toColumn, glyph, style);
        lastMarkedRow = i;
        lastMarkedEnd = toColumn; // spans are in order: the last one ends rightmost
      }
      // splitLines dropped the "\r" of a "\r\n"; skip it and the "\n".
      lineStart = lineEnd + (shownText.substr(lineEnd).starts_with("\r\n") ? 2 : 1);
    }
    if (deletion && lastMarkedRow)
      rows[*lastMarkedRow].put(lastMarkedEnd + 1, "remove this", Style::Removal);
    for (size_t i = 0; i < shown.size(); ++i) {
      sourceRow(patch.firstLine + unsigned(i), displays[i]);
      if (!rows[i].empty())
        annotationRow(rows[i]);
    }
  }

  const llvm::SourceMgr &sm_;
  Printer &out_;
  unsigned gutter_ = 1;
  unsigned mainBuffer_ = 0;
};

} // namespace

void modelc::renderText(const Diagnostic &diag, const llvm::SourceMgr &sm, llvm::raw_ostream &os,
                        const TextRenderOptions &options) {
  Printer out(os, options.color);
  TextRenderer(sm, out).render(diag);
}

static std::string countOf(unsigned n, llvm::StringRef noun) {
  return (llvm::Twine(n) + " " + noun + (n == 1 ? "" : "s")).str();
}

void modelc::renderSummary(unsigned errors, unsigned warnings, llvm::raw_ostream &os, bool color) {
  Printer out(os, color);
  std::string warned = countOf(warnings, "warning") + " emitted";
  if (errors != 0) {
    std::string text = ": aborting due to " + countOf(errors, "error");
    if (warnings != 0)
      text += "; " + warned;
    out.write("error", Style::Error).write(text, Style::Emphasis).newline();
  } else if (warnings != 0) {
    out.write("warning", Style::Warning).write(": " + warned, Style::Emphasis).newline();
  }
}

void modelc::renderTextAll(llvm::ArrayRef<Diagnostic> diags, const llvm::SourceMgr &sm,
                           llvm::raw_ostream &os, const TextRenderOptions &options) {
  unsigned errors = 0, warnings = 0;
  for (const Diagnostic &diag : diags) {
    renderText(diag, sm, os, options);
    errors += diag.severity == Severity::Error;
    warnings += diag.severity == Severity::Warning;
  }
  renderSummary(errors, warnings, os, options.color);
}

//===- IrMutator.cpp - Edits of MLIR text, for the compiler's fuzzer ------===//

#include "IrMutator.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <vector>

using namespace mlir::loom::fuzz;

namespace {

/// A token of the text: [begin, end).
struct Span {
  size_t begin, end;
};

size_t below(std::mt19937_64 &random, size_t n) {
  return n ? std::uniform_int_distribution<size_t>(0, n - 1)(random) : 0;
}

template <typename T>
const T &pick(const std::vector<T> &items, std::mt19937_64 &random) {
  return items[below(random, items.size())];
}

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$';
}

/// Integers standing alone: not part of a name (f32, %12, @fc1, bf16), an
/// exponent or a hex literal.
std::vector<Span> integers(const std::string &text) {
  std::vector<Span> spans;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() &&
           std::isalnum(static_cast<unsigned char>(text[end])))
      ++end;
    char before = i ? text[i - 1] : ' ';
    bool alone = !isWordChar(before) && before != '%' && before != '@' &&
                 before != '#' && before != '^' && before != '-' &&
                 before != '+';
    auto allDigits = [&](size_t from, size_t to) {
      return to > from && std::all_of(text.begin() + from, text.begin() + to,
                                      [](char c) { return std::isdigit(c); });
    };
    bool hex = text.compare(i, 2, "0x") == 0;
    if (alone && !hex) {
      // Dimensions: 2x8x16xf32 is one run; its numbers are the parts
      // between the x's.
      size_t start = i;
      for (size_t j = i; j <= end; ++j)
        if (j == end || text[j] == 'x') {
          if (allDigits(start, j))
            spans.push_back({start, j});
          start = j + 1;
        }
    }
    i = end;
  }
  return spans;
}

/// Float literals as the printer writes them (1.000000e-01, 0.5, 0x7FC00000).
std::vector<Span> floats(const std::string &text) {
  std::vector<Span> spans;
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) ||
        (i && (isWordChar(text[i - 1]) || text[i - 1] == '%')))
      continue;
    size_t end = i;
    while (end < text.size() &&
           (std::isxdigit(static_cast<unsigned char>(text[end])) ||
            text[end] == '.' || text[end] == 'e' || text[end] == 'x' ||
            text[end] == '+' || text[end] == '-'))
      ++end;
    std::string token = text.substr(i, end - i);
    if (token.find('.') != std::string::npos || token.rfind("0x", 0) == 0)
      spans.push_back({i, end});
    i = end;
  }
  return spans;
}

/// Every occurrence of a word that starts with `prefix` (%a, loom.matmul).
std::vector<Span> words(const std::string &text, const std::string &prefix) {
  std::vector<Span> spans;
  for (size_t i = text.find(prefix); i != std::string::npos;
       i = text.find(prefix, i + 1)) {
    if (i && isWordChar(text[i - 1]))
      continue;
    size_t end = i + prefix.size();
    while (end < text.size() && isWordChar(text[end]))
      ++end;
    if (end > i + prefix.size())
      spans.push_back({i, end});
  }
  return spans;
}

std::string replace(const std::string &text, Span span,
                    const std::string &with) {
  return text.substr(0, span.begin) + with + text.substr(span.end);
}

std::string edgeInteger(const std::string &old, std::mt19937_64 &random) {
  static const std::vector<std::string> edges = {"0",
                                                 "1",
                                                 "2",
                                                 "3",
                                                 "7",
                                                 "-1",
                                                 "65536",
                                                 "2147483647",
                                                 "2147483648",
                                                 "4294967296",
                                                 "1099511627777",
                                                 "4611686018427387904",
                                                 "9223372036854775807",
                                                 "18446744073709551616"};
  if (below(random, 3) == 0) {
    // Near the old value: off by one, doubled, halved.
    long long value = 0;
    for (char c : old.substr(0, 12))
      value = value * 10 + (c - '0');
    const long long near[] = {value + 1, value - 1, value * 2, value / 2};
    return std::to_string(near[below(random, 4)]);
  }
  return pick(edges, random);
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\n') {
      lines.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
  std::string text;
  for (size_t i = 0; i < lines.size(); ++i)
    text += (i ? "\n" : "") + lines[i];
  return text;
}

bool isFlagsLine(const std::string &line) {
  return line.rfind(kFlagsPrefix, 0) == 0;
}

/// Lines an edit may delete or move: inside a body, not the flags line,
/// module or function headers, or closing braces.
std::vector<size_t> bodyLines(const std::vector<std::string> &lines) {
  std::vector<size_t> body;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &line = lines[i];
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || first < 4 || isFlagsLine(line) ||
        line[first] == '}')
      continue;
    body.push_back(i);
  }
  return body;
}

// The edits. Each returns the mutant, or "" when the text offers nothing
// for it to edit.

std::string changeInteger(const std::string &text, std::mt19937_64 &random) {
  std::vector<Span> spans = integers(text);
  if (spans.empty())
    return "";
  Span span = pick(spans, random);
  return replace(
      text, span,
      edgeInteger(text.substr(span.begin, span.end - span.begin), random));
}

/// A dimension changed everywhere, so the model changes size consistently
/// (and reaches the passes with shapes no seed has).
std::string changeDimensionEverywhere(const std::string &text,
                                      std::mt19937_64 &random) {
  std::vector<Span> spans = integers(text);
  std::vector<Span> dims;
  for (Span s : spans)
    if (s.end < text.size() && text[s.end] == 'x')
      dims.push_back(s);
  if (dims.empty())
    return "";
  Span chosen = pick(dims, random);
  std::string old = text.substr(chosen.begin, chosen.end - chosen.begin);
  std::string with = below(random, 2) ? std::to_string(below(random, 9) + 1)
                                      : edgeInteger(old, random);
  std::string out = text;
  // Back to front, so the spans stay valid.
  for (auto it = spans.rbegin(); it != spans.rend(); ++it)
    if (text.compare(it->begin, it->end - it->begin, old) == 0 &&
        it->end - it->begin == old.size())
      out = replace(out, *it, with);
  return out;
}

std::string changeFloat(const std::string &text, std::mt19937_64 &random) {
  static const std::vector<std::string> edges = {
      "0.000000e+00", "-1.000000e+00", "1.000000e+38",
      "1.000000e-45", "0x7FC00000",    "0x7F800000",
      "0xFF800000",   "3.000000e+00",  "-0.000000e+00"};
  std::vector<Span> spans = floats(text);
  if (spans.empty())
    return "";
  return replace(text, pick(spans, random), pick(edges, random));
}

std::string changeElementType(const std::string &text,
                              std::mt19937_64 &random) {
  static const std::vector<std::string> types = {"f32", "f64", "bf16", "f16",
                                                 "i32", "i64", "i1",   "index"};
  std::vector<Span> spans;
  for (const std::string &type : types)
    for (size_t i = text.find(type); i != std::string::npos;
         i = text.find(type, i + 1))
      if (i &&
          (text[i - 1] == 'x' || text[i - 1] == '<' || text[i - 1] == ' ' ||
           text[i - 1] == ',') &&
          i + type.size() < text.size() && !isWordChar(text[i + type.size()]))
        spans.push_back({i, i + type.size()});
  if (spans.empty())
    return "";
  return replace(text, pick(spans, random), pick(types, random));
}

/// A use of a value (or a symbol) replaced by another of the same kind.
std::string replaceName(const std::string &text, const std::string &prefix,
                        std::mt19937_64 &random) {
  std::vector<Span> spans = words(text, prefix);
  if (spans.size() < 2)
    return "";
  std::set<std::string> names;
  for (Span s : spans)
    names.insert(text.substr(s.begin, s.end - s.begin));
  std::vector<std::string> choices(names.begin(), names.end());
  return replace(text, pick(spans, random), pick(choices, random));
}

std::string renameOp(const std::string &text, std::mt19937_64 &random) {
  std::vector<Span> spans = words(text, "loom.");
  for (Span s : words(text, "comm."))
    spans.push_back(s);
  std::vector<Span> ops;
  std::set<std::string> names;
  for (Span s : spans) {
    std::string name = text.substr(s.begin, s.end - s.begin);
    // Op names follow "= " or start a line; attribute names (loom.task)
    // do not.
    size_t before = text.find_last_not_of(' ', s.begin ? s.begin - 1 : 0);
    if (before == std::string::npos || text[before] == '=' ||
        text[before] == '\n') {
      ops.push_back(s);
      names.insert(name);
    }
  }
  if (ops.empty() || names.size() < 2)
    return "";
  std::vector<std::string> choices(names.begin(), names.end());
  return replace(text, pick(ops, random), pick(choices, random));
}

std::string editLines(const std::string &text, std::mt19937_64 &random) {
  std::vector<std::string> lines = splitLines(text);
  std::vector<size_t> body = bodyLines(lines);
  if (body.empty())
    return "";
  // No duplicates: a copied line redefines its value or symbol, which the
  // parser rejects.
  size_t at = pick(body, random);
  if (below(random, 2))
    lines.erase(lines.begin() + at);
  else
    std::swap(lines[at], lines[pick(body, random)]);
  return joinLines(lines);
}

/// Drops one attribute dictionary `{...}` that ends a line's op (not a
/// region).
std::string dropAttributes(const std::string &text, std::mt19937_64 &random) {
  std::vector<Span> spans;
  for (size_t i = text.find('{'); i != std::string::npos;
       i = text.find('{', i + 1)) {
    size_t close = text.find('}', i);
    size_t newline = text.find('\n', i);
    if (close != std::string::npos && close < newline &&
        text.find('{', i + 1) > close)
      spans.push_back({i, close + 1});
  }
  if (spans.empty())
    return "";
  return replace(text, pick(spans, random), "");
}

} // namespace

std::string mlir::loom::fuzz::mutateIr(const std::string &text,
                                       std::mt19937_64 &random) {
  using Edit = std::function<std::string()>;
  const std::vector<Edit> edits = {
      [&] { return changeInteger(text, random); },
      [&] { return changeDimensionEverywhere(text, random); },
      [&] { return changeDimensionEverywhere(text, random); },
      [&] { return changeFloat(text, random); },
      [&] { return changeElementType(text, random); },
      [&] { return replaceName(text, "%", random); },
      [&] { return replaceName(text, "@", random); },
      [&] { return renameOp(text, random); },
      [&] { return editLines(text, random); },
      [&] { return editLines(text, random); },
      [&] { return dropAttributes(text, random); },
  };
  // A few tries: not every text offers every edit.
  for (int tries = 0; tries < 8; ++tries) {
    std::string mutant = pick(edits, random)();
    if (!mutant.empty() && mutant != text)
      return mutant;
  }
  return text;
}

std::string mlir::loom::fuzz::crossOverIr(const std::string &text,
                                          const std::string &other,
                                          std::mt19937_64 &random) {
  std::vector<std::string> lines = splitLines(text);
  std::vector<std::string> others = splitLines(other);
  bool hasFlags = !lines.empty() && isFlagsLine(lines[0]);
  bool otherHasFlags = !others.empty() && isFlagsLine(others[0]);
  if (below(random, 2) == 0 && (hasFlags || otherHasFlags)) {
    // The other input's flags (or none) with this body.
    if (hasFlags)
      lines.erase(lines.begin());
    if (otherHasFlags)
      lines.insert(lines.begin(), others[0]);
    return joinLines(lines);
  }
  // A run of the other's body lines spliced into this body.
  std::vector<size_t> body = bodyLines(lines), otherBody = bodyLines(others);
  if (body.empty() || otherBody.empty())
    return text;
  size_t from = pick(otherBody, random);
  size_t count = 1 + below(random, 4);
  size_t at = pick(body, random);
  for (size_t i = 0; i < count && from + i < others.size(); ++i)
    lines.insert(lines.begin() + at + i, others[from + i]);
  return joinLines(lines);
}

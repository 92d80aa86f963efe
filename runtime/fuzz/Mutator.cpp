//===- Mutator.cpp - Seeded mutations of a fuzz corpus ----------*- C++ -*-===//
//
// SplitMix64 drives every choice. Mutations are stacked (a few per mutant,
// sometimes many) because single byte changes rarely reach past a JSON
// parser, while rarer deep stacks find combinations.
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace loom::fuzz {

namespace {

Bytes bytesOf(const std::string &text) {
  return Bytes(text.begin(), text.end());
}

/// Tokens that JSON readers and the safetensors/manifest schemas treat
/// specially, separated by spaces: structure, literals, the safetensors
/// keys, broken UTF-8 and surrogates, nesting. Whitespace tokens are added
/// by the constructor.
constexpr const char *kTokens =
    "null true false [] {} \"\" , : [0] [0,0] [1,2,3] {\"a\":1} "
    "\"__metadata__\" \"dtype\" \"shape\" \"data_offsets\" \"F32\" "
    "\"BF16\" \"I32\" \"F64\" \"BOOL\" \"U8\" \"\\u0000\" \"\\ud800\" "
    "\"\\udc00\\ud800\" \"\\\" \"\xff\xfe\" \"\xc3\x28\" \"\xe2\x82\" "
    "\xef\xbb\xbf \\ \" [[[[[[[[[[[[[[[[ ]]]]]]]] }}}} - 0 .";

/// Numbers at the edges of the types the readers convert JSON numbers to,
/// separated by spaces.
constexpr const char *kNumbers =
    "-1 0 -0 1 2 7 8 255 256 65535 65536 1048576 1048577 104857600 "
    "104857601 2147483647 2147483648 4294967295 4294967296 9007199254740993 "
    "4611686018427387904 9223372036854775807 9223372036854775808 "
    "-9223372036854775808 -9223372036854775809 18446744073709551615 "
    "18446744073709551616 99999999999999999999999999999 1e309 -1e309 "
    "1e-400 0.5 1.0 1e2 -0.0";

std::vector<Bytes> split(const char *text) {
  std::vector<Bytes> words;
  for (const char *p = text; *p;) {
    const char *end = std::strchr(p, ' ');
    if (!end)
      end = p + std::strlen(p);
    words.emplace_back(p, end);
    p = *end ? end + 1 : end;
  }
  return words;
}

bool isNumberChar(uint8_t c) {
  return std::isdigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' ||
         c == '-';
}

/// Where the JSON numbers of `data` are, as [begin, end) spans.
std::vector<std::pair<size_t, size_t>> findNumbers(const Bytes &data) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < data.size(); ++i) {
    bool starts =
        std::isdigit(data[i]) ||
        (data[i] == '-' && i + 1 < data.size() && std::isdigit(data[i + 1]));
    if (!starts || (i > 0 && (std::isalnum(data[i - 1]) || data[i - 1] == '.')))
      continue;
    size_t end = i + 1;
    while (end < data.size() && isNumberChar(data[end]))
      ++end;
    spans.push_back({i, end});
    i = end;
  }
  return spans;
}

/// Where the JSON strings of `data` are (quotes included), at most `limit`
/// bytes long.
std::vector<std::pair<size_t, size_t>> findStrings(const Bytes &data,
                                                   size_t limit) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] != '"')
      continue;
    size_t end = i + 1;
    while (end < data.size() && data[end] != '"' && end - i <= limit)
      end += data[end] == '\\' ? 2 : 1;
    if (end >= data.size() || data[end] != '"')
      continue;
    spans.push_back({i, end + 1});
    i = end;
  }
  return spans;
}

uint64_t readLittleEndian64(const Bytes &data) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(data[i]) << (8 * i);
  return value;
}

void writeLittleEndian(uint8_t *out, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i)
    out[i] = static_cast<uint8_t>(value >> (8 * i));
}

} // namespace

Mutator::Mutator(uint64_t seed, const std::vector<Bytes> &corpus, size_t maxLen)
    : state(seed), corpus(corpus), maxLen(maxLen) {
  numbers = split(kNumbers);
  std::set<Bytes> unique;
  for (const Bytes &token : split(kTokens))
    unique.insert(token);
  for (const char *space : {" ", "\n", "\t"})
    unique.insert(bytesOf(space));
  for (const Bytes &input : corpus) {
    for (auto [begin, end] : findStrings(input, 64)) {
      if (unique.size() >= 4096)
        break;
      unique.insert(Bytes(input.begin() + begin, input.begin() + end));
    }
  }
  dictionary.assign(unique.begin(), unique.end());
}

uint64_t Mutator::random() {
  // SplitMix64.
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

size_t Mutator::below(size_t n) { return n ? random() % n : 0; }

const Bytes &Mutator::pick() {
  static const Bytes empty;
  return corpus.empty() ? empty : corpus[below(corpus.size())];
}

Bytes Mutator::next() {
  Bytes data = pick();
  size_t rounds = 1 + below(4);
  if (below(8) == 0)
    rounds += below(32);
  // A file that starts with the length of what follows (safetensors): mostly
  // mutate that part and keep the length right, so the mutant is read past
  // the length check; sometimes mutate the whole, length field included.
  uint64_t length = data.size() >= 8 ? readLittleEndian64(data) : 0;
  if (length > 0 && length <= data.size() - 8 && below(4) != 0) {
    Bytes body(data.begin() + 8, data.begin() + 8 + length);
    Bytes rest(data.begin() + 8 + length, data.end());
    for (size_t i = 0; i < rounds; ++i)
      mutateOnce(body);
    // Now and then the tail too: data sections that cover the tensors
    // badly.
    if (below(8) == 0)
      mutateOnce(rest);
    data.assign(8, 0);
    writeLittleEndian(data.data(), body.size(), 8);
    data.insert(data.end(), body.begin(), body.end());
    data.insert(data.end(), rest.begin(), rest.end());
  } else {
    for (size_t i = 0; i < rounds; ++i)
      mutateOnce(data);
  }
  if (data.size() > maxLen)
    data.resize(maxLen);
  return data;
}

void Mutator::insert(Bytes &data, size_t at, const Bytes &chunk) {
  data.insert(data.begin() + std::min(at, data.size()), chunk.begin(),
              chunk.end());
}

void Mutator::mutate(Bytes &data) {
  for (size_t i = 0, rounds = 1 + below(4); i < rounds; ++i)
    mutateOnce(data);
  if (data.size() > maxLen)
    data.resize(maxLen);
}

void Mutator::mutateOnce(Bytes &data) {
  switch (below(17)) {
  case 0: // flip a bit
    if (!data.empty())
      data[below(data.size())] ^= uint8_t(1u << below(8));
    return;
  case 1: // a random byte
    if (!data.empty())
      data[below(data.size())] = static_cast<uint8_t>(random());
    return;
  case 2: { // an interesting byte
    static const uint8_t bytes[] = {0,   1,   0x7f, 0x80, 0xff, '"', '\\',
                                    '[', ']', '{',  '}',  ',',  ':', '-',
                                    '0', '9', 'e',  '.',  ' ',  '\n'};
    if (!data.empty())
      data[below(data.size())] = bytes[below(sizeof(bytes))];
    return;
  }
  case 3:
    writeInteger(data);
    return;
  case 4: { // insert random bytes
    Bytes chunk(1 + below(8));
    for (uint8_t &byte : chunk)
      byte = static_cast<uint8_t>(random());
    insert(data, below(data.size() + 1), chunk);
    return;
  }
  case 5: // insert a token
    insert(data, below(data.size() + 1), dictionary[below(dictionary.size())]);
    return;
  case 6: { // delete a chunk, usually small
    if (data.empty())
      return;
    size_t at = below(data.size());
    size_t most = data.size() - at;
    size_t count = 1 + below(below(4) == 0 ? most : std::min<size_t>(most, 16));
    data.erase(data.begin() + at, data.begin() + at + count);
    return;
  }
  case 7:
  case 8: { // duplicate a chunk elsewhere, or copy it over another place
    if (data.empty())
      return;
    size_t from = below(data.size());
    size_t count = 1 + below(std::min<size_t>(data.size() - from, 64));
    Bytes chunk(data.begin() + from, data.begin() + from + count);
    size_t to = below(data.size());
    if (below(2) == 0) {
      insert(data, to, chunk);
    } else {
      count = std::min(count, data.size() - to);
      std::memcpy(data.data() + to, chunk.data(), count);
    }
    return;
  }
  case 9:
    splice(data);
    return;
  case 10:
  case 11:
  case 12:
    replaceNumber(data);
    return;
  case 13:
  case 14:
    replaceString(data);
    return;
  case 15: // truncate
    data.resize(below(data.size() + 1));
    return;
  case 16: { // deep nesting
    static const char *const openers[] = {"[", "{\"a\":", "[{\"x\":"};
    std::string opener = openers[below(3)];
    size_t depth = size_t(1) << below(13);
    Bytes chunk;
    for (size_t i = 0; i < depth; ++i)
      chunk.insert(chunk.end(), opener.begin(), opener.end());
    insert(data, below(data.size() + 1), chunk);
    return;
  }
  }
}

void Mutator::writeInteger(Bytes &data) {
  // Powers of two and their neighbours (0x7f, 0x80, 0xffffffff,
  // INT64_MAX, ...), the safetensors header cap, or the input's own size
  // give or take a few (length fields).
  uint64_t value;
  switch (below(4)) {
  case 0:
  case 1:
    value = (uint64_t(1) << below(64)) + below(3) - 1;
    break;
  case 2:
    value = (100ull << 20) + below(2);
    break;
  default:
    value = data.size() + below(19) - 9;
    break;
  }
  if (below(4) == 0)
    value = ~value + 1;
  static const size_t widths[] = {1, 2, 4, 8};
  size_t width = widths[below(4)];
  uint8_t encoded[8];
  writeLittleEndian(encoded, value, width);
  if (below(8) == 0)
    std::reverse(encoded, encoded + width);
  // The start is where length fields are.
  size_t at = below(4) == 0 ? 0 : below(data.size() + 1);
  if (below(2) == 0 || at + width > data.size())
    insert(data, at, Bytes(encoded, encoded + width));
  else
    std::memcpy(data.data() + at, encoded, width);
}

void Mutator::replaceNumber(Bytes &data) {
  std::vector<std::pair<size_t, size_t>> spans = findNumbers(data);
  std::string replacement;
  if (below(3) == 0 && !spans.empty()) {
    // Near the old value: off-by-one offsets, doubled sizes.
    auto [begin, end] = spans[below(spans.size())];
    std::string old(data.begin() + begin, data.begin() + end);
    unsigned long long value = std::strtoull(old.c_str(), nullptr, 10);
    switch (below(4)) {
    case 0:
      value += 1 + below(8);
      break;
    case 1:
      value -= 1 + below(8);
      break;
    case 2:
      value *= 2;
      break;
    default:
      value /= 2;
      break;
    }
    replacement = std::to_string(value);
  } else {
    const Bytes &number = numbers[below(numbers.size())];
    replacement.assign(number.begin(), number.end());
  }
  if (spans.empty()) {
    insert(data, below(data.size() + 1), bytesOf(replacement));
    return;
  }
  auto [begin, end] = spans[below(spans.size())];
  data.erase(data.begin() + begin, data.begin() + end);
  insert(data, begin, bytesOf(replacement));
}

void Mutator::replaceString(Bytes &data) {
  std::vector<std::pair<size_t, size_t>> spans = findStrings(data, 256);
  // Another string of the same input makes duplicate names and cross
  // references to the wrong thing; a dictionary one brings in other keys.
  Bytes replacement = dictionary[below(dictionary.size())];
  if (!spans.empty() && below(2) == 0) {
    auto [begin, end] = spans[below(spans.size())];
    replacement.assign(data.begin() + begin, data.begin() + end);
  }
  if (spans.empty()) {
    insert(data, below(data.size() + 1), replacement);
    return;
  }
  auto [begin, end] = spans[below(spans.size())];
  data.erase(data.begin() + begin, data.begin() + end);
  insert(data, begin, replacement);
}

void Mutator::splice(Bytes &data) {
  const Bytes &other = pick();
  size_t from = below(other.size() + 1);
  if (below(2) == 0) {
    // This input's head, the other's tail.
    data.resize(below(data.size() + 1));
    data.insert(data.end(), other.begin() + from, other.end());
    return;
  }
  size_t count = below(std::min<size_t>(other.size() - from, 256) + 1);
  insert(data, below(data.size() + 1),
         Bytes(other.begin() + from, other.begin() + from + count));
}

} // namespace loom::fuzz

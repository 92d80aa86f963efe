//===- SafeTensorsTest.cpp - Safetensors read/write tests -------*- C++ -*-===//
//
// Round trips, and rejection of truncated, corrupted and malformed files
// with a message that says why.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/SafeTensors.h"
#include "TestUtil.h"

#include <cstring>

using namespace loom::rt;
using namespace loom::rt::test;

namespace {

/// A file image with the given header text and data bytes.
std::vector<char> image(const std::string &header, size_t dataBytes) {
  std::vector<char> bytes(8 + header.size() + dataBytes, 0);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(length >> (8 * i));
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  return bytes;
}

struct Fixture {
  std::vector<float> a{1.5f, -2.f, 3.f, 4.f, 5.f, 6.f};
  std::vector<double> b{0.1, 0.2, 0.3, 0.4};
  int32_t c = 42;
  std::vector<SafeTensorView> views() const {
    return {makeSafeTensorView("layer.a", DType::F32, {2, 3}, a.data()),
            makeSafeTensorView("b", DType::F64, {4}, b.data()),
            makeSafeTensorView("scalar", DType::I32, {}, &c),
            makeSafeTensorView("empty", DType::I64, {0}, nullptr)};
  }
};

} // namespace

TEST(SafeTensors, WriteReadRoundTrip) {
  TempDir tmp;
  Fixture fixture;
  writeSafeTensors(tmp.file("t.safetensors"), fixture.views(),
                   {{"format", "pt"}});
  SafeTensorsFile file = SafeTensorsFile::read(tmp.file("t.safetensors"));
  ASSERT_EQ(file.tensors().size(), 4u);
  EXPECT_EQ(file.metadata().at("format"), "pt");

  const SafeTensorView *a = file.find("layer.a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dtypeName, "F32");
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (Shape{2, 3}));
  ASSERT_EQ(a->byteSize, 24u);
  EXPECT_EQ(std::memcmp(a->data, fixture.a.data(), 24), 0);

  const SafeTensorView *b = file.find("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype, DType::F64);
  EXPECT_EQ(std::memcmp(b->data, fixture.b.data(), 32), 0);

  const SafeTensorView *scalar = file.find("scalar");
  ASSERT_TRUE(scalar);
  EXPECT_TRUE(scalar->shape.empty());
  int32_t value;
  std::memcpy(&value, scalar->data, 4);
  EXPECT_EQ(value, 42);

  const SafeTensorView *empty = file.find("empty");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->byteSize, 0u);
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(SafeTensors, DataSectionIsEightByteAligned) {
  TempDir tmp;
  Fixture fixture;
  writeSafeTensors(tmp.file("t.safetensors"), fixture.views());
  std::vector<char> bytes = readBytes(tmp.file("t.safetensors"));
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ(length % 8, 0u);
}

TEST(SafeTensors, RejectsTruncatedFile) {
  TempDir tmp;
  Fixture fixture;
  std::string path = tmp.file("t.safetensors");
  writeSafeTensors(path, fixture.views());
  std::vector<char> bytes = readBytes(path);
  bytes.resize(bytes.size() - 5);
  writeBytes(path, bytes);
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::read(path); }, {path, "truncated"}));

  bytes.resize(20); // cut inside the header
  writeBytes(path, bytes);
  EXPECT_TRUE(throwsError([&] { SafeTensorsFile::read(path); },
                          {"exceeds", "truncated"}));

  bytes.resize(5); // not even a length field
  writeBytes(path, bytes);
  EXPECT_TRUE(throwsError([&] { SafeTensorsFile::read(path); },
                          {"too short", "truncated"}));
}

TEST(SafeTensors, RejectsCorruptedHeader) {
  TempDir tmp;
  Fixture fixture;
  std::string path = tmp.file("t.safetensors");
  writeSafeTensors(path, fixture.views());
  std::vector<char> bytes = readBytes(path);
  bytes[8] = 'X'; // the opening brace of the JSON header
  writeBytes(path, bytes);
  EXPECT_TRUE(throwsError([&] { SafeTensorsFile::read(path); },
                          {"not valid JSON", "corrupted"}));
}

TEST(SafeTensors, RejectsImplausibleHeaderLength) {
  std::vector<char> bytes = image("{}", 0);
  bytes[7] = 0x7f;
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(bytes, "x.safetensors"); },
                  {"x.safetensors", "implausibly large"}));
}

TEST(SafeTensors, RejectsOffsetsThatDoNotMatchTheShape) {
  std::string header =
      R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 12), "x"); },
                  {"tensor 'w'", "do not hold the 16 bytes"}));
}

TEST(SafeTensors, RejectsOverlappingTensors) {
  std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 12), "x"); },
                  {"overlapping or non-contiguous"}));
}

TEST(SafeTensors, RejectsTrailingBytes) {
  std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_TRUE(throwsError(
      [&] { SafeTensorsFile::parse(image(header, 10), "x"); }, {"trailing"}));
}

TEST(SafeTensors, RejectsMalformedEntries) {
  EXPECT_TRUE(throwsError(
      [&] {
        SafeTensorsFile::parse(
            image(R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})",
                  1),
            "x");
      },
      {"unknown dtype \"Q7\""}));
  EXPECT_TRUE(throwsError(
      [&] {
        SafeTensorsFile::parse(image(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
                               "x");
      },
      {"tensor 'a'", "data_offsets"}));
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image("[1,2]", 0), "x"); },
                  {"not a JSON object"}));
}

TEST(SafeTensors, AcceptsDTypesLoomDoesNotComputeIn) {
  // PyTorch files often hold BF16/F16 tensors; they must still parse so that
  // the ones Loom needs can be found.
  std::string header =
      R"({"h":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]}})";
  SafeTensorsFile file = SafeTensorsFile::parse(image(header, 6), "x");
  ASSERT_EQ(file.tensors().size(), 1u);
  EXPECT_EQ(file.tensors()[0].dtypeName, "BF16");
  EXPECT_FALSE(file.tensors()[0].dtype.has_value());
}

TEST(SafeTensors, RejectsDuplicateNamesOnWrite) {
  TempDir tmp;
  float x = 1;
  EXPECT_TRUE(throwsError(
      [&] {
        writeSafeTensors(tmp.file("d.safetensors"),
                         {makeSafeTensorView("a", DType::F32, {}, &x),
                          makeSafeTensorView("a", DType::F32, {}, &x)});
      },
      {"duplicate"}));
}

// The cases below were found by loom-fuzz-safetensors (runtime/fuzz) or while
// writing it.

TEST(SafeTensors, RejectsNumbersBeyondADouble) {
  // nlohmann::json throws out_of_range, not parse_error, for these; it used
  // to escape the reader and end the program.
  std::string header =
      R"({"a":{"dtype":"F32","shape":[1e309],"data_offsets":[0,4]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 4), "x"); },
                  {"x: header is not valid JSON", "number overflow", "1e309"}));
}

TEST(SafeTensors, RejectsShapesWhoseSizeOverflows) {
  // 2^62 + 1 F32 elements are 2^64 + 4 bytes, which used to wrap to 4: the
  // file was accepted with a 4-byte tensor of 2^62 + 1 elements.
  std::string header = R"({"a":{"dtype":"F32","shape":[4611686018427387905],)"
                       R"("data_offsets":[0,4]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 4), "x"); },
                  {"x: tensor 'a'", "too large", "overflows 64 bits"}));
  // A partial product that overflows (numElements() computes them too)...
  header = R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,0],)"
           R"("data_offsets":[0,0]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 0), "x"); },
                  {"tensor 'a'", "too large"}));
  // ... and a dimension beyond int64_t.
  header = R"({"a":{"dtype":"U8","shape":[9223372036854775808,0],)"
           R"("data_offsets":[0,0]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 0), "x"); },
                  {"tensor 'a'", "too large"}));
}

TEST(SafeTensors, RejectsDuplicateNames) {
  // JSON readers keep one of the two; the file used to load with it.
  std::string header =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 4), "x"); },
                  {"x: header is not valid JSON", "duplicate key \"a\""}));
}

TEST(SafeTensors, RejectsDeepNesting) {
  std::string header = R"({"__metadata__":)" + std::string(200, '[') +
                       std::string(200, ']') + "}";
  EXPECT_TRUE(
      throwsError([&] { SafeTensorsFile::parse(image(header, 0), "x"); },
                  {"x: header is not valid JSON", "nested deeper than 128"}));
}

//===- FlagsTest.cpp - Tests of the command-line parsing helpers -*- C++
//-*-===//
//
// What each helper accepts is part of the tools' interface: these cases were
// recorded from the strtoll/strtoull/strtod versions, so that a new
// implementation (absl::SimpleAtoi for integers) accepts and refuses exactly
// the same spellings.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Flags.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

using namespace loom::rt;

namespace {

/// parseIntFlag's value, or nullopt when it refuses `text`.
std::optional<int64_t> intOf(const std::string &text, int64_t min = -100) {
  try {
    return parseIntFlag("--n", text, min);
  } catch (const UsageError &) {
    return std::nullopt;
  }
}

std::optional<uint64_t> seedOf(const std::string &text) {
  try {
    return parseSeedFlag("--seed", text);
  } catch (const UsageError &) {
    return std::nullopt;
  }
}

std::optional<double> numberOf(const std::string &text, bool allowZero) {
  try {
    return parsePositiveFlag("--t", text, allowZero);
  } catch (const UsageError &) {
    return std::nullopt;
  }
}

/// The message `fn` throws as a UsageError, or "" if it throws none.
template <typename Fn>
std::string usageMessage(Fn fn) {
  try {
    fn();
  } catch (const UsageError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Flags, IntegersTakeStrtollSpellings) {
  EXPECT_EQ(intOf("0"), 0);
  EXPECT_EQ(intOf("5"), 5);
  EXPECT_EQ(intOf("010"), 10);
  EXPECT_EQ(intOf("-1"), -1);
  EXPECT_EQ(intOf("-0"), 0);
  // A sign and leading whitespace, as strtoll takes them.
  EXPECT_EQ(intOf("+5"), 5);
  EXPECT_EQ(intOf(" 5"), 5);
  EXPECT_EQ(intOf("\t5"), 5);
  EXPECT_EQ(intOf(" +5"), 5);
  EXPECT_EQ(intOf(" -5"), -5);
  EXPECT_EQ(intOf("9223372036854775807", 0),
            std::numeric_limits<int64_t>::max());
}

TEST(Flags, IntegersRefuseEverythingElse) {
  for (const char *text :
       {"", " ", "+", "-", "10x", "1e3", "1.5", "0x10", "inf", "nan", "+-5",
        "- 5", "1 2", "9223372036854775808", "-9223372036854775809",
        // Trailing whitespace, which strtoll left unread (absl::SimpleAtoi
        // would take it).
        "5 ", "5\n", "5\t"})
    EXPECT_EQ(intOf(text), std::nullopt) << "'" << text << "'";
  EXPECT_EQ(intOf("-1", 0), std::nullopt);
  EXPECT_EQ(intOf("0", 1), std::nullopt);
  EXPECT_EQ(usageMessage([] { parseIntFlag("--steps", "-1", 0); }),
            "--steps: expected an integer >= 0, got '-1'");
  EXPECT_EQ(usageMessage([] { parseIntFlag("--steps", "x", 0); }),
            "--steps: expected an integer >= 0, got 'x'");
}

TEST(Flags, ParseIntegerIsTheFlagsGrammar) {
  // What parseIntFlag and the integer environment settings read.
  int64_t value = 0;
  EXPECT_TRUE(parseInteger(" -5", value));
  EXPECT_EQ(value, -5);
  EXPECT_TRUE(parseInteger("-9223372036854775808", value));
  EXPECT_EQ(value, std::numeric_limits<int64_t>::min());
  for (const char *text : {"", "5 ", "0x10", "9223372036854775808", "x"})
    EXPECT_FALSE(parseInteger(text, value)) << "'" << text << "'";
}

TEST(Flags, Seeds) {
  EXPECT_EQ(seedOf("0"), 0u);
  EXPECT_EQ(seedOf("5"), 5u);
  EXPECT_EQ(seedOf("+5"), 5u);
  EXPECT_EQ(seedOf(" 5"), 5u);
  EXPECT_EQ(seedOf("18446744073709551615"),
            std::numeric_limits<uint64_t>::max());
  // strtoull negates a '-', also after whitespace (" -1" would be 2^64-1):
  // refused wherever it stands.
  for (const char *text : {"", "-1", "-0", " -1", "\t-5", "5 ", "1e3", "0x10",
                           "x", "18446744073709551616"})
    EXPECT_EQ(seedOf(text), std::nullopt) << "'" << text << "'";
  EXPECT_EQ(usageMessage([] { parseSeedFlag("--seed", "-1"); }),
            "--seed: expected a non-negative integer seed, got '-1'");
  EXPECT_EQ(usageMessage([] { parseSeedFlag("--seed", " -1"); }),
            "--seed: expected a non-negative integer seed, got ' -1'");
}

TEST(Flags, NumbersTakeStrtodSpellings) {
  EXPECT_EQ(numberOf("5", false), 5);
  EXPECT_EQ(numberOf("1e3", false), 1000);
  EXPECT_EQ(numberOf("1.5", false), 1.5);
  EXPECT_EQ(numberOf(".5", false), 0.5);
  EXPECT_EQ(numberOf("5.", false), 5);
  EXPECT_EQ(numberOf("+5", false), 5);
  EXPECT_EQ(numberOf(" 5", false), 5);
  // Hexadecimal, as strtod reads it.
  EXPECT_EQ(numberOf("0x10", false), 16);
  EXPECT_EQ(numberOf("0x1p3", false), 8);
  EXPECT_EQ(numberOf("2.2250738585072014e-308", false),
            2.2250738585072014e-308);
  EXPECT_EQ(numberOf("0", true), 0);
  // -0 is not below 0.
  std::optional<double> negativeZero = numberOf("-0", true);
  ASSERT_TRUE(negativeZero);
  EXPECT_TRUE(*negativeZero == 0 && std::signbit(*negativeZero));
}

TEST(Flags, NumbersRefuseEverythingElse) {
  for (const char *text : {"", " ", "x", "10x", "5 ", "5\n", "1 2", "1e", "1e+",
                           "-1", "-inf", "inf", "infinity", "nan", "+-5", "- 5",
                           // Out of range: strtod's ERANGE, for overflow and
                           // for results below the normal range alike.
                           "1e400", "1e-400", "1e-310"})
    for (bool allowZero : {false, true})
      EXPECT_EQ(numberOf(text, allowZero), std::nullopt)
          << "'" << text << "' allowZero=" << allowZero;
  EXPECT_EQ(numberOf("0", false), std::nullopt);
  EXPECT_EQ(usageMessage([] { parsePositiveFlag("--eps", "0"); }),
            "--eps: expected a number > 0, got '0'");
  EXPECT_EQ(usageMessage(
                [] { parsePositiveFlag("--collective-timeout", "-1", true); }),
            "--collective-timeout: expected a number >= 0, got '-1'");
}

TEST(Flags, ArgCursorTakesBothValueForms) {
  const char *argv[] = {"tool",     "--steps",  "5",
                        "--seed=7", "--eval",   "--save-every=2",
                        "dir",      "--eval=1", "--metrics"};
  ArgCursor args(9, const_cast<char **>(argv));
  std::string value;
  EXPECT_FALSE(args.flag("--step"));
  EXPECT_FALSE(args.value("--step", value));
  EXPECT_TRUE(args.value("--steps", value));
  EXPECT_EQ(value, "5");
  EXPECT_EQ(args.consumed(), 2u);
  EXPECT_TRUE(args.value("--seed", value));
  EXPECT_EQ(value, "7");
  EXPECT_TRUE(args.flag("--eval"));
  // A prefix of another flag's name is not that flag.
  EXPECT_FALSE(args.value("--save", value));
  EXPECT_TRUE(args.value("--save-every", value));
  EXPECT_EQ(value, "2");
  EXPECT_FALSE(args.flag("--eval"));
  EXPECT_EQ(args.take(), "dir");
  // A boolean flag takes no "=value".
  EXPECT_FALSE(args.flag("--eval"));
  EXPECT_EQ(args.take(), "--eval=1");
  EXPECT_EQ(usageMessage([&] { args.value("--metrics", value); }),
            "--metrics needs a value");
  EXPECT_FALSE(args.done());
}

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "../common/error_of.hpp"
#include "railsim/core/json.hpp"

using railsim::Json;
using railsim::JsonObject;
using railsim::Range;
using railsim::test::error_of;

TEST(Json, MalformedTextNamesTheInput) {
  auto msg = error_of([] { railsim::parse_json("{\"a\": 1,", "--gpu"); });
  EXPECT_EQ(msg.rfind("--gpu: malformed JSON", 0), 0u) << msg;
}

TEST(Json, MissingFieldIsNamedWithItsPath) {
  Json j = Json::parse(R"({"x": 1})");
  auto msg = error_of([&] { JsonObject(j, "gpu").number("hbm_gib", Range::positive()); });
  EXPECT_EQ(msg, "gpu.hbm_gib: missing required field");
}

TEST(Json, WrongTypeAndRangeAreRejected) {
  Json j = Json::parse(R"({"a": "big", "b": -3, "c": 2.5, "d": 1e300})");
  JsonObject o(j, "m");
  EXPECT_NE(error_of([&] {
              o.number("a", Range::positive());
            }).find("m.a: expected a number > 0, got a string"),
            std::string::npos);
  EXPECT_NE(error_of([&] { o.number("b", Range::positive()); }).find("got -3"), std::string::npos);
  EXPECT_NE(error_of([&] { o.integer("c", 1, 10); }).find("m.c"), std::string::npos);
  EXPECT_NE(error_of([&] { o.integer("d", 1, 10); }).find("m.d"), std::string::npos);
}

TEST(Json, UnknownFieldIsRejectedButDocumentationIsAllowed) {
  Json j = Json::parse(R"({"radix": 64, "source": "x", "_comment": "y", "raddix": 3})");
  JsonObject o(j, "switch");
  EXPECT_EQ(o.integer("radix", 2, 100), 64);
  EXPECT_NE(error_of([&] { o.finish(); }).find("switch.raddix: unknown field"), std::string::npos);
}

TEST(Json, CheckNumberRejectsNanAndInfinity) {
  EXPECT_FALSE(
      error_of([] { railsim::check_number("--x", std::nan(""), Range::positive()); }).empty());
  EXPECT_FALSE(error_of([] { railsim::check_number("--x", INFINITY, Range::positive()); }).empty());
  EXPECT_EQ(railsim::check_number("--x", 2.0, Range::positive()), 2.0);
}

TEST(Json, NumberBeyondDoubleIsMalformedInput) {
  auto msg = error_of([] { railsim::parse_json(R"({"a": 1e400})", "--model"); });
  EXPECT_EQ(msg.rfind("--model: malformed JSON", 0), 0u) << msg;
}

TEST(Json, NestingIsBoundedWithoutExhaustingTheStack) {
  // 100,000 levels would overflow the stack of a recursive walk; the parser stops at the limit.
  const std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto msg = error_of([&] { railsim::parse_json(deep, "--gpu"); });
  EXPECT_EQ(msg.rfind("--gpu: malformed JSON: nested deeper than 64 levels at a", 0), 0u) << msg;
  EXPECT_LT(msg.size(), 400u);
  // The limit itself is allowed.
  const int d = railsim::kMaxJsonDepth;
  EXPECT_NO_THROW(railsim::parse_json(std::string(d, '[') + std::string(d, ']'), "--gpu"));
  EXPECT_FALSE(error_of([&] {
                 railsim::parse_json(std::string(d + 1, '[') + std::string(d + 1, ']'), "x");
               }).empty());
}

TEST(Json, DuplicateKeysAreRefusedNamingTheKeyAndWhere) {
  auto msg = error_of([] {
    railsim::parse_json(R"({"eff": {"nic": 0.9, "hb": 1, "nic": 0.5}})", "--gpu (g.json)");
  });
  EXPECT_EQ(msg,
            "--gpu (g.json): malformed JSON: duplicate key 'nic' at eff (each key may appear once "
            "in an object)");
  msg = error_of([] { railsim::parse_json(R"({"a": 1, "a": 1})", "--gpu"); });
  EXPECT_NE(msg.find("duplicate key 'a' at the top level"), std::string::npos) << msg;
  msg = error_of([] { railsim::parse_json(R"({"m": [{"r": 1}, {"r": 2, "r": 3}]})", "--switch"); });
  EXPECT_NE(msg.find("duplicate key 'r' at m[1]"), std::string::npos) << msg;
  // The same key in sibling objects is fine.
  EXPECT_NO_THROW(
      railsim::parse_json(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "--gpu"));
}

TEST(Json, BytesAfterTheValueAreRefused) {
  using namespace std::string_literals;
  auto msg = error_of([] { railsim::parse_json("{\"a\": 1}\0{\"b\": 2}"s, "--model"); });
  EXPECT_EQ(msg.rfind("--model: malformed JSON: a NUL byte at offset 8", 0), 0u) << msg;
  msg = error_of([] { railsim::parse_json("{\"a\": 1} trailing", "--model"); });
  EXPECT_EQ(msg.rfind("--model: malformed JSON", 0), 0u) << msg;
  EXPECT_NO_THROW(railsim::parse_json("{\"a\": 1}\n\n", "--model"));
}

TEST(Json, ErrorsShowAValueByItsFirstCharactersOnly) {
  Json big = Json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  Json j = {{"a", big}, {"s", std::string(100000, 'x') + "\n\x1b[31m"}};
  JsonObject o(j, "m");
  auto msg = error_of([&] { o.number("a", Range::positive()); });
  EXPECT_NE(msg.find("got an array ([0,1,2,"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 200u);
  msg = error_of([&] { o.number("s", Range::positive()); });
  EXPECT_LT(msg.size(), 200u);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(Json, OnlyRegularFilesOfBoundedSizeAreRead) {
  auto msg = error_of([] { railsim::read_json_file("/tmp", "--gpu"); });
  EXPECT_EQ(msg, "--gpu: cannot read file '/tmp': it is a directory; give a JSON file");
  msg = error_of([] { railsim::read_json_file("/dev/zero", "--gpu"); });
  EXPECT_EQ(msg,
            "--gpu: cannot read file '/dev/zero': not a regular file (a device, FIFO or socket); "
            "give a JSON file");
  msg = error_of([] { railsim::read_json_file("/nonexistent/x.json", "--gpu"); });
  EXPECT_EQ(msg, "--gpu: cannot read file '/nonexistent/x.json': No such file or directory");
  // A FIFO is refused without being opened (opening it would block until a writer came).
  const std::string fifo = "/tmp/railsim_test_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  msg = error_of([&] { railsim::read_json_file(fifo, "--gpu"); });
  std::remove(fifo.c_str());
  EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
  // A file above the limit.
  const std::string big = "/tmp/railsim_test_big_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(big);
    f << std::string(100, ' ') << "{}";
  }
  EXPECT_NO_THROW(railsim::read_text_file(big, "--gpu"));
  msg = error_of([&] { railsim::read_text_file(big, "--gpu", 64); });
  std::remove(big.c_str());
  EXPECT_NE(msg.find("102 bytes, above the"), std::string::npos) << msg;
}

TEST(Json, PrintableEscapesControlsAndCutsLongValues) {
  EXPECT_EQ(railsim::printable("a\nb\x1b[2J\tc\x7f"), "a\\nb\\x1b[2J\\tc\\x7f");
  EXPECT_EQ(railsim::printable("x\xc2\x9b"
                               "1m"),
            "x\\u009b1m");                                      // C1 CSI in UTF-8
  EXPECT_EQ(railsim::printable("caf\xc3\xa9"), "caf\xc3\xa9");  // other UTF-8 kept
  EXPECT_EQ(railsim::printable(std::string(200, 'x')), std::string(80, 'x') + "...");
  EXPECT_EQ(railsim::printable("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9...");  // never splits a character

  // Bidirectional-text controls and bytes that are not UTF-8 are escaped too.
  EXPECT_EQ(railsim::printable("GPT\xe2\x80\xae"
                               "1T"),
            "GPT\\u202e1T");
  EXPECT_EQ(railsim::printable("a\xe2\x81\xa6"
                               "b"),
            "a\\u2066b");
  EXPECT_EQ(railsim::printable("a\xff"
                               "b\x80"),
            "a\\xffb\\x80");
  EXPECT_EQ(railsim::printable("\xc0\xaf"), "\\xc0\\xaf");                // an overlong '/'
  EXPECT_EQ(railsim::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");       // a surrogate
  EXPECT_EQ(railsim::printable("\xf0\x9f\x9a\x80"), "\xf0\x9f\x9a\x80");  // an emoji, kept
  EXPECT_EQ(railsim::printable("\xf0\x9f\x9a"), "\\xf0\\x9f\\x9a");       // cut short
  // The cut falls after a whole character, within `max` bytes (the "..." aside).
  const std::string long_utf8 = std::string(1999, 'x') + "\xc3\xa9\xc3\xa9";
  EXPECT_EQ(railsim::printable(long_utf8, 2000), std::string(1999, 'x') + "...");
  EXPECT_EQ(railsim::printable(long_utf8, 2001), std::string(1999, 'x') + "\xc3\xa9...");
}

TEST(Printable, FindUnprintableNamesTheFirstCharacterAndItsByte) {
  EXPECT_FALSE(railsim::find_unprintable("GPT-1T Mod\xc3\xa8le \xf0\x9f\x9a\x80"));
  const struct {
    const char* text;
    std::size_t byte;
    const char* what;
  } cases[] = {{"ab\x1b[2J", 2, "U+001B (a control character)"},
               {"x\xc2\x9b", 1, "U+009B (a control character)"},
               {"GPT\xe2\x80\xae", 3, "U+202E (a bidirectional-text control)"},
               {"ok\xff", 2, "byte 0xff (not UTF-8)"}};
  for (const auto& c : cases) {
    const auto u = railsim::find_unprintable(c.text);
    ASSERT_TRUE(u) << c.what;
    EXPECT_EQ(u->byte, c.byte) << c.what;
    EXPECT_EQ(u->what, c.what);
  }
  EXPECT_THROW(railsim::check_printable("model.name", "a\nb"), railsim::InputError);
  EXPECT_NO_THROW(railsim::check_printable("model.name", "a b"));
}

TEST(JsonObject, StringsAndSourcesArePrintableText) {
  const railsim::Json j = railsim::parse_json(
      R"({"name": "M\u001b]0;x\u0007", "ok": "caf\u00e9", "source": 3, "bidi": "\u202e"})", "t");
  railsim::JsonObject o(j, "model");
  EXPECT_EQ(o.string("ok"), "caf\xc3\xa9");
  const auto name = railsim::test::caught([&] { (void)o.string("name"); });
  ASSERT_TRUE(name);
  EXPECT_EQ(name->field(), "model.name");
  EXPECT_NE(name->message().find("holds U+001B (a control character) at byte 1"), std::string::npos)
      << name->what();
  EXPECT_EQ(std::string(name->what()).find('\x1b'), std::string::npos);
  EXPECT_THROW((void)o.string("bidi"), railsim::InputError);
  EXPECT_EQ(railsim::test::field_of([&] { (void)o.source(); }), "model.source");
  const railsim::Json none = railsim::parse_json(R"({"a": 1})", "t");
  railsim::JsonObject n(none, "x");
  EXPECT_EQ(n.source(), "");
}

TEST(Json, CheckedMultiplicationRefusesOverflow) {
  EXPECT_EQ(railsim::checked_mul("--dp", 1 << 20, 1 << 20, "tp x pp"), std::int64_t{1} << 40);
  auto msg = error_of([] {
    railsim::checked_mul("--dp", std::int64_t{1} << 40, std::int64_t{1} << 30, "tp x pp x dp");
  });
  EXPECT_EQ(msg.rfind("--dp: tp x pp x dp = 1099511627776 x 1073741824 is beyond 2^63", 0), 0u)
      << msg;
}

// A value echoed in an error is cut to its first bytes; a cut through a multi-byte UTF-8
// character (here U+0184, two bytes, 40 bytes into a long key) still makes a one-line error
// naming the field, not an exception out of the serialiser (found by fuzz_spec).
TEST(Json, AnEchoedValueCutInsideAUtf8CharacterStillMakesAnError) {
  const std::string key = std::string(39, 'p') + "\xc6\x84" + "x";
  Json j;
  j["name"] = Json::object({{key, 0}});
  const std::string msg = error_of([&] { JsonObject(j, "catalog").string("name"); });
  EXPECT_EQ(msg.rfind("catalog.name: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("pppp"), std::string::npos) << msg;
}

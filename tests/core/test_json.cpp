#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "railsim/core/json.hpp"

using railsim::InputError;
using railsim::Json;
using railsim::JsonObject;
using railsim::Range;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

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

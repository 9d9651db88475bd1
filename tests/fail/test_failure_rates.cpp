// Failure rates as a spec: the Llama 3 preset reproduces Meta's counts, user JSON is strict.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/spec/failure_rates.hpp"
#include "railsim/spec/preset.hpp"

using namespace railsim;

namespace {

// The field named by the InputError of loading `j`, or "" when it loads.
std::string error_field(const Json& j) {
  try {
    spec::failure_rates_from_json(j, "rates");
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

Json minimal() {
  return Json::parse(R"({"name": "mine", "classes": [
      {"name": "gpu", "scope": "gpu", "rate_per_unit_hour": 1e-5, "source": "me"},
      {"name": "cable", "scope": "link", "tier": 2, "events": 3, "unit_hours": 1e6,
       "repair_h": 2}]})");
}

}  // namespace

TEST(FailureRates, LlamaPresetGivesMetasCountsOver54DaysOn16kGpus) {
  // Dubey et al. 2024, Table 5: 419 unexpected interruptions in 54 days on 16,384 H100.
  const spec::FailureRates r = spec::load_failure_rates("llama3-meta-2024");
  ASSERT_EQ(r.classes.size(), 18u);
  const double unit_hours = 16384.0 * 54 * 24;  // GPUs = NICs = NIC-leaf links in Meta's job
  double total = 0, gpu = 0;
  for (const auto& c : r.classes) {
    EXPECT_FALSE(c.source.empty()) << c.name;
    const double n = c.rate_per_unit_hour * unit_hours;
    EXPECT_NEAR(n, std::round(n), 1e-9) << c.name;
    total += n;
    if (c.scope == spec::FailureScope::gpu) gpu += n;
  }
  EXPECT_NEAR(total, 419.0, 1e-9);
  EXPECT_NEAR(gpu, 148 + 72 + 19 + 17 + 6 + 6, 1e-9);
  EXPECT_EQ(r.classes[0].name, "faulty_gpu");
  EXPECT_NEAR(r.classes[0].rate_per_unit_hour * unit_hours, 148.0, 1e-9);
  EXPECT_EQ(r.classes[3].scope, spec::FailureScope::link);
  EXPECT_EQ(r.classes[3].tier, 1);
  EXPECT_NEAR(r.classes[3].rate_per_unit_hour * unit_hours, 35.0, 1e-9);
  // The preset is listed and found case-insensitively.
  const auto names = spec::preset_names("failures");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "llama3-meta-2024");
  EXPECT_NO_THROW(spec::load_failure_rates("LLAMA3-META-2024"));
}

TEST(FailureRates, UserJsonOfTheSameSchemaLoads) {
  const spec::FailureRates r = spec::failure_rates_from_json(minimal(), "rates");
  ASSERT_EQ(r.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(r.classes[0].rate_per_unit_hour, 1e-5);
  EXPECT_EQ(r.classes[0].tier, 0);
  EXPECT_DOUBLE_EQ(r.classes[1].rate_per_unit_hour, 3e-6);
  EXPECT_EQ(r.classes[1].tier, 2);
  ASSERT_TRUE(r.classes[1].repair_h.has_value());
  EXPECT_DOUBLE_EQ(*r.classes[1].repair_h, 2.0);
}

TEST(FailureRates, BadJsonNamesTheField) {
  {
    Json j = minimal();
    j["classes"][0]["rate_per_unit_hour"] = -1;
    EXPECT_EQ(error_field(j), "rates.classes[0].rate_per_unit_hour");
  }
  {
    Json j = minimal();
    j["classes"][0]["rate_per_unit_hour"] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(error_field(j), "rates.classes[0].rate_per_unit_hour");
  }
  {
    Json j = minimal();
    j["classes"][1]["events"] = -3;
    EXPECT_EQ(error_field(j), "rates.classes[1].events");
  }
  {
    Json j = minimal();
    j["classes"][1]["unit_hours"] = 0;
    EXPECT_EQ(error_field(j), "rates.classes[1].unit_hours");
  }
  {
    Json j = minimal();
    j["classes"][0]["mtbf"] = 5;  // unknown field
    EXPECT_EQ(error_field(j), "rates.classes[0].mtbf");
  }
  {
    Json j = minimal();
    j["colour"] = "red";
    EXPECT_EQ(error_field(j), "rates.colour");
  }
  {
    Json j = minimal();
    j["classes"][0]["scope"] = "rack";
    EXPECT_EQ(error_field(j), "rates.classes[0].scope");
  }
  {
    Json j = minimal();
    j["classes"][0]["tier"] = 1;  // gpu has no tiers
    EXPECT_EQ(error_field(j), "rates.classes[0].tier");
  }
  {
    Json j = minimal();
    j["classes"][0]["events"] = 3;  // both forms
    EXPECT_EQ(error_field(j), "rates.classes[0].rate_per_unit_hour");
  }
  {
    Json j = minimal();
    j["classes"][0].erase("rate_per_unit_hour");  // neither
    EXPECT_EQ(error_field(j), "rates.classes[0].rate_per_unit_hour");
  }
  {
    Json j = minimal();
    j["classes"][1]["name"] = "gpu";
    EXPECT_EQ(error_field(j), "rates.classes[1].name");
  }
  {
    Json j = minimal();
    j["classes"] = Json::array();
    EXPECT_EQ(error_field(j), "rates.classes");
  }
  {
    Json j = minimal();
    j["classes"][1]["repair_h"] = -2;
    EXPECT_EQ(error_field(j), "rates.classes[1].repair_h");
  }
}

TEST(FailureRates, UnknownPresetNamesTheOption) {
  try {
    spec::load_failure_rates("no-such-rates");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--rates");
    EXPECT_NE(std::string(e.what()).find("llama3-meta-2024"), std::string::npos) << e.what();
  }
}

// report::Table: one set of columns, three renderings that agree.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/read_csv.hpp"
#include "railsim/core/json.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/table.hpp"

using namespace railsim;
using report::Column;
using report::Missing;
using report::Style;
using report::Type;
using test::read_csv;

namespace {

report::Table sample() {
  report::Table t;
  t.columns = {
      report::text_column("name", "name"),
      report::integer_column("gpus", "GPUs"),
      report::real_column("time_s", "time", "s", 3),
      report::si_column("power_w", "power", "W", 4),
      report::fraction_column("saving", "saving"),
      report::boolean_column("fits", "fits"),
      report::integers_column("per_tier", "per tier"),
  };
  t.add_row({"GPT-1T, 4096 x 2048", std::int64_t{32768}, 4.3339123456789, 1949696.0, 0.36105, true,
             std::vector<std::int64_t>{512, 512, 256}});
  t.add_row({"say \"hi\"\nagain", std::int64_t{8}, Missing{}, 599654.4, 0.0, false,
             std::vector<std::int64_t>{}});
  return t;
}

}  // namespace

TEST(Table, CsvQuotesFieldsWithCommaQuoteAndNewline) {
  const std::string csv = report::to_csv(sample());
  EXPECT_EQ(csv,
            "name,gpus,time_s,power_w,saving,fits,per_tier\n"
            "\"GPT-1T, 4096 x 2048\",32768,4.3339123456789,1949696,0.36105,true,512;512;256\n"
            "\"say \"\"hi\"\"\nagain\",8,,599654.4,0,false,\n");
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());
  EXPECT_EQ(rows[1][0], "GPT-1T, 4096 x 2048");
  EXPECT_EQ(rows[2][0], "say \"hi\"\nagain");
  EXPECT_EQ(report::csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(report::csv_header({{.name = "a,b"}, {.name = "c"}}), "\"a,b\",c\n");
}

TEST(Table, JsonHasNumbersNullsAndTheColumnNames) {
  const Json j = report::to_json(sample());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "GPT-1T, 4096 x 2048");
  EXPECT_TRUE(j[0]["gpus"].is_number_integer());
  EXPECT_EQ(j[0]["gpus"], 32768);
  EXPECT_DOUBLE_EQ(j[0]["time_s"].get<double>(), 4.3339123456789);
  EXPECT_TRUE(j[1]["time_s"].is_null());
  EXPECT_EQ(j[0]["fits"], true);
  EXPECT_EQ(j[0]["per_tier"], Json::parse("[512, 512, 256]"));
  EXPECT_EQ(j[1]["per_tier"], Json::array());
  EXPECT_EQ(j[0].size(), 7u);
}

TEST(Table, CsvAndJsonCarryTheSameValues) {
  const report::Table t = sample();
  const auto rows = read_csv(report::to_csv(t));
  const Json j = report::to_json(t);
  ASSERT_EQ(rows.size(), j.size() + 1);
  for (std::size_t r = 0; r < j.size(); ++r)
    for (std::size_t c = 0; c < rows[0].size(); ++c) {
      const std::string& field = rows[r + 1][c];
      const Json& v = j[r].at(rows[0][c]);
      if (v.is_null()) {
        EXPECT_EQ(field, "") << rows[0][c];
      } else if (v.is_boolean()) {
        EXPECT_EQ(field, v.get<bool>() ? "true" : "false");
      } else if (v.is_number()) {
        const double want = v.get<double>();
        EXPECT_NEAR(std::stod(field), want, 1e-12 * std::fabs(want)) << rows[0][c];
      } else if (v.is_string()) {
        EXPECT_EQ(field, v.get<std::string>());
      } else {
        std::string joined;
        for (const auto& x : v) {
          if (!joined.empty()) joined += ';';
          joined += x.dump();
        }
        EXPECT_EQ(field, joined);
      }
    }
}

TEST(Table, RealsRoundTripInCsv) {
  report::Table t;
  t.columns = {{.name = "x", .type = Type::real}};
  for (double v : {0.1, 1.0 / 3.0, 8601.599999999999, 1e-12, 6.02e23, -2.5}) t.add_row({v});
  t.add_row({std::nan("")});
  const auto rows = read_csv(report::to_csv(t));
  for (std::size_t i = 0; i + 1 < t.rows.size(); ++i)
    EXPECT_EQ(std::stod(rows[i + 1][0]), std::get<double>(t.rows[i][0])) << rows[i + 1][0];
  EXPECT_EQ(rows.back()[0], "");  // not a number: missing
  EXPECT_TRUE(report::to_json(t).back()["x"].is_null());
}

TEST(Table, HumanCellsHaveSeparatorsUnitsAndNoExponent) {
  const report::Table t = sample();
  auto cell = [&](std::size_t row, std::size_t col) {
    return report::human_cell(t.columns[col], t.rows[row][col]);
  };
  EXPECT_EQ(cell(0, 1), "32,768");
  EXPECT_EQ(cell(0, 2), "4.334 s");
  EXPECT_EQ(cell(1, 2), "-");
  EXPECT_EQ(cell(0, 3), "1.950 MW");
  EXPECT_EQ(cell(1, 3), "599.7 kW");
  EXPECT_EQ(cell(0, 4), "36.1%");
  EXPECT_EQ(cell(0, 5), "yes");
  EXPECT_EQ(cell(0, 6), "512 / 512 / 256");
  EXPECT_EQ(cell(1, 6), "-");
  const Column usd = report::usd_column("cost_usd", "");
  EXPECT_EQ(report::human_cell(usd, 201932800.0), "$201.93M");
  EXPECT_EQ(report::human_cell(usd, 56120.4), "$56,120");
  const Column pct{
      .name = "vs_pct", .type = Type::real, .unit = "%", .precision = 2, .style = Style::signed_};
  EXPECT_EQ(report::human_cell(pct, 0.0), "+0.00%");
  EXPECT_EQ(report::human_cell(pct, -22.6789), "-22.68%");
  const Column big{.name = "x", .type = Type::real, .precision = 1};
  EXPECT_EQ(report::human_cell(big, 1234567.25), "1,234,567.2");
  EXPECT_EQ(report::human_cell(big, -1234.0), "-1,234.0");
  EXPECT_EQ(report::human_cell(big, 1e-9), "0.0");
  EXPECT_EQ(report::human_cell(big, 6.02e23).find('e'), std::string::npos);
  const Column zero = report::si_column("w", "", "W", 4);
  EXPECT_EQ(report::human_cell(zero, 0.0), "0 W");
}

TEST(Table, TextAlignsColumnsUnderHumanLabels) {
  report::Table t;
  t.columns = {report::text_column("design_name", "design"),
               report::integer_column("switch_count", "switches"),
               report::integer_column("hidden", "hidden", false),
               report::integer_column("nothing", "nothing")};
  t.add_row({"rail_optimized", std::int64_t{1280}, std::int64_t{1}, Missing{}});
  t.add_row({"ideal", std::int64_t{0}, std::int64_t{2}, Missing{}});
  EXPECT_EQ(report::to_text(t),
            "design          switches\n"
            "rail_optimized     1,280\n"
            "ideal                  0\n");
  // Transposed: one line per column, one text column per row.
  EXPECT_EQ(report::to_text_by_column(t, "design_name"),
            "             rail_optimized   ideal\n"
            "  switches            1,280       0\n");
}

TEST(Table, RowsAndColumnsOfTheWrongShapeAreRefused) {
  report::Table t = sample();
  EXPECT_THROW(t.add_row({std::string("x")}), std::logic_error);
  EXPECT_THROW(t.add_row({std::int64_t{1}, std::int64_t{1}, 1.0, 1.0, 1.0, true,
                          std::vector<std::int64_t>{}}),
               std::logic_error);  // an integer where the name goes
  EXPECT_THROW(t.add_column({.name = "extra", .type = Type::integer}, {std::int64_t{1}}),
               std::logic_error);  // one cell for two rows
  EXPECT_THROW(t.add_column({.name = "extra", .type = Type::integer}, {std::int64_t{1}, 2.0}),
               std::logic_error);
  t.add_column({.name = "extra", .type = Type::integer}, {std::int64_t{1}, Missing{}});
  EXPECT_EQ(t.columns.size(), 8u);
  report::Table other = sample();
  EXPECT_THROW(report::append(other, t), std::logic_error);
  t.rows.front().pop_back();  // a row broken behind the builder's back
  EXPECT_THROW(report::to_csv(t), std::logic_error);
  EXPECT_THROW(report::to_json(t), std::logic_error);
}

TEST(Table, AppendKeepsTheColumns) {
  report::Table a = sample();
  report::append(a, sample());
  EXPECT_EQ(a.rows.size(), 4u);
  EXPECT_EQ(report::to_json(a)[2]["gpus"], 32768);
}

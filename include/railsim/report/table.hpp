#pragma once
// One type for every tabular result: named, typed columns and rows of cells. Three renderers read
// the same columns: aligned text for people, CSV (RFC 4180) and JSON (an array of objects) for
// scripts. A cell may be missing: an empty CSV field, JSON null and "-" for people, never a
// shifted column.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "railsim/core/json_fwd.hpp"

namespace railsim::report {

// The order matches Cell's alternatives after Missing.
enum class Type { text, integer, real, boolean, integers };

// How a number reads for people; CSV and JSON always carry the plain value.
enum class Style {
  plain,     // 1,234.5 with `precision` decimals; integers 1,234
  signed_,   // +0.00, -22.68
  si,        // 1.950 MW, 599.7 kW, 142.99 µs: an SI prefix and `precision` significant digits
  usd,       // $201.93M from a million up, $56,120 below
  fraction,  // a fraction shown as a percentage with `precision` decimals: 0.722 -> 72.2%
};

// Built with designated initializers ({.name = "power_w", .label = "power", .type = Type::real})
// or the column makers below.
struct Column {
  std::string name = {};   // CSV header field and JSON key: snake_case with its unit (power_w)
  std::string label = {};  // for people ("power")
  Type type = Type::text;
  std::string unit = {};  // for people, after the number ("s", "%", "GiB"; Style::si: "W", "B")
  int precision = 0;      // reals: decimals (Style::si: significant digits)
  Style style = Style::plain;
  bool human = true;  // false: CSV and JSON only
};

// Columns of each type and style: `name` for CSV and JSON, `label` for people; `human` false: CSV
// and JSON only.
Column text_column(std::string name, std::string label, bool human = true);
Column integer_column(std::string name, std::string label, bool human = true);
Column integers_column(std::string name, std::string label, bool human = true);
Column boolean_column(std::string name, std::string label, bool human = true);
// Reals with `precision` decimals and `unit` after them ("GiB", 1).
Column real_column(std::string name, std::string label, std::string unit, int precision,
                   bool human = true);
// Reals with an SI prefix on `unit` and `digits` significant digits ("W", 4: 1.950 MW).
Column si_column(std::string name, std::string label, std::string unit, int digits,
                 bool human = true);
Column usd_column(std::string name, std::string label, bool human = true);
// Fractions shown as percentages with one decimal (0.722: 72.2%).
Column fraction_column(std::string name, std::string label, bool human = true);

struct Missing {
  bool operator==(const Missing&) const = default;
};
// A value of its column's type (index = Type + 1), or Missing.
using Cell =
    std::variant<Missing, std::string, std::int64_t, double, bool, std::vector<std::int64_t>>;

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  // Throws std::logic_error unless there is one cell per column, each of its column's type.
  void add_row(std::vector<Cell> cells);
  // A column with one cell per row already added (same check).
  void add_column(Column c, std::vector<Cell> cells);
};

// Rows of `from` after those of `to`; the columns must be the same (names and types).
void append(Table& to, const Table& from);

// CSV: a header of the column names, one line per row, '\n' after each line. Fields holding , "
// CR or LF are quoted (report/csv.hpp's csv_field); reals in shortest round-trip form; booleans
// true/false; integer lists joined with ';'; missing values empty.
std::string to_csv(const Table& t);
std::string csv_header(const std::vector<Column>& columns);
std::string csv_cell(const Cell& v);

// JSON: an array with one object per row, the column names as keys; numbers are JSON numbers,
// integer lists arrays, missing values (and non-finite reals) null.
Json to_json(const Table& t);
Json json_cell(const Cell& v);

// One cell for people: thousands separators, the column's unit and style, no exponent; "-" when
// missing.
std::string human_cell(const Column& c, const Cell& v);

// People's views. Only columns with `human` set and a value in some row are shown.
// One line per row under a header of labels; text left-aligned, numbers right-aligned.
std::string to_text(const Table& t, std::string_view indent = "");
// Transposed, for a few rows with many columns: one line per column, labels on the left, one
// text column per row headed by that row's `heading` cell.
std::string to_text_by_column(const Table& t, std::string_view heading,
                              std::string_view indent = "  ");

}  // namespace railsim::report

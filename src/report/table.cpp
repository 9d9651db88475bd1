#include "railsim/report/table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "railsim/core/json.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/format.hpp"

namespace railsim::report {

namespace {

bool fits(const Column& c, const Cell& v) {
  return v.index() == 0 || v.index() == static_cast<std::size_t>(c.type) + 1;
}

void check(const Table& t) {
  for (const auto& row : t.rows) {
    if (row.size() != t.columns.size())
      throw std::logic_error(
          fmt::format("table row of {} cells for {} columns", row.size(), t.columns.size()));
    for (std::size_t i = 0; i < row.size(); ++i)
      if (!fits(t.columns[i], row[i]))
        throw std::logic_error("table cell of the wrong type in column " + t.columns[i].name);
  }
}

std::string with_unit(std::string number, const std::string& unit) {
  if (unit.empty()) return number;
  return unit == "%" ? number + unit : number + " " + unit;
}

std::string human_real(const Column& c, double v) {
  if (!std::isfinite(v)) return "-";
  switch (c.style) {
    case Style::plain:
      return with_unit(group_thousands(fmt::format("{:.{}f}", v, c.precision)), c.unit);
    case Style::signed_:
      return with_unit(group_thousands(fmt::format("{:+.{}f}", v, c.precision)), c.unit);
    case Style::fraction:
      return group_thousands(fmt::format("{:.{}f}", 100 * v, c.precision)) + "%";
    case Style::usd:
      return money(v);
    case Style::si: {
      if (v == 0) return with_unit("0", c.unit);
      // n, µ, m below 1 (times in seconds), k ... E above.
      static const char* kPrefix[] = {"n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
      int p = 3;
      double x = v;
      while (std::fabs(x) >= 1000 && p < 9) {
        x /= 1000;
        ++p;
      }
      while (std::fabs(x) < 1 && p > 0) {
        x *= 1000;
        --p;
      }
      const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(x))));
      const int decimals = std::max(0, std::max(1, c.precision) - 1 - magnitude);
      return fmt::format("{:.{}f} {}{}", x, decimals, kPrefix[p], c.unit);
    }
  }
  return "-";
}

}  // namespace

void Table::add_row(std::vector<Cell> cells) {
  if (cells.size() != columns.size())
    throw std::logic_error(
        fmt::format("table row of {} cells for {} columns", cells.size(), columns.size()));
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (!fits(columns[i], cells[i]))
      throw std::logic_error("table cell of the wrong type in column " + columns[i].name);
  rows.push_back(std::move(cells));
}

Column text_column(std::string name, std::string label, bool human) {
  return {.name = std::move(name), .label = std::move(label), .human = human};
}
Column integer_column(std::string name, std::string label, bool human) {
  return {
      .name = std::move(name), .label = std::move(label), .type = Type::integer, .human = human};
}
Column integers_column(std::string name, std::string label, bool human) {
  return {
      .name = std::move(name), .label = std::move(label), .type = Type::integers, .human = human};
}
Column boolean_column(std::string name, std::string label, bool human) {
  return {
      .name = std::move(name), .label = std::move(label), .type = Type::boolean, .human = human};
}
Column real_column(std::string name, std::string label, std::string unit, int precision,
                   bool human) {
  return {.name = std::move(name),
          .label = std::move(label),
          .type = Type::real,
          .unit = std::move(unit),
          .precision = precision,
          .human = human};
}
Column si_column(std::string name, std::string label, std::string unit, int digits, bool human) {
  Column c = real_column(std::move(name), std::move(label), std::move(unit), digits, human);
  c.style = Style::si;
  return c;
}
Column usd_column(std::string name, std::string label, bool human) {
  Column c = real_column(std::move(name), std::move(label), "", 0, human);
  c.style = Style::usd;
  return c;
}
Column fraction_column(std::string name, std::string label, bool human) {
  Column c = real_column(std::move(name), std::move(label), "", 1, human);
  c.style = Style::fraction;
  return c;
}

void Table::add_column(Column c, std::vector<Cell> cells) {
  if (cells.size() != rows.size())
    throw std::logic_error(
        fmt::format("column {} has {} cells for {} rows", c.name, cells.size(), rows.size()));
  for (const Cell& v : cells)
    if (!fits(c, v)) throw std::logic_error("table cell of the wrong type in column " + c.name);
  for (std::size_t i = 0; i < cells.size(); ++i) rows[i].push_back(std::move(cells[i]));
  columns.push_back(std::move(c));
}

void append(Table& to, const Table& from) {
  bool same = to.columns.size() == from.columns.size();
  for (std::size_t i = 0; same && i < to.columns.size(); ++i)
    same = to.columns[i].name == from.columns[i].name && to.columns[i].type == from.columns[i].type;
  if (!same) throw std::logic_error("appending a table with other columns");
  check(from);
  to.rows.insert(to.rows.end(), from.rows.begin(), from.rows.end());
}

std::string csv_cell(const Cell& v) {
  struct Visit {
    std::string operator()(const Missing&) const { return ""; }
    std::string operator()(const std::string& s) const { return csv_field(s); }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      return std::isfinite(d) ? fmt::format("{}", d) : std::string();
    }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::vector<std::int64_t>& l) const {
      return fmt::format("{}", fmt::join(l, ";"));
    }
  };
  return std::visit(Visit{}, v);
}

std::string csv_header(const std::vector<Column>& columns) {
  std::string s;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) s += ',';
    s += csv_field(columns[i].name);
  }
  return s + "\n";
}

std::string to_csv(const Table& t) {
  check(t);
  std::string s = csv_header(t.columns);
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) s += ',';
      s += csv_cell(row[i]);
    }
    s += '\n';
  }
  return s;
}

Json json_cell(const Cell& v) {
  struct Visit {
    Json operator()(const Missing&) const { return nullptr; }
    Json operator()(const std::string& s) const { return s; }
    Json operator()(std::int64_t i) const { return i; }
    Json operator()(double d) const { return std::isfinite(d) ? Json(d) : Json(nullptr); }
    Json operator()(bool b) const { return b; }
    Json operator()(const std::vector<std::int64_t>& l) const { return l; }
  };
  return std::visit(Visit{}, v);
}

Json to_json(const Table& t) {
  check(t);
  Json a = Json::array();
  for (const auto& row : t.rows) {
    Json o = Json::object();
    for (std::size_t i = 0; i < row.size(); ++i) o[t.columns[i].name] = json_cell(row[i]);
    a.push_back(std::move(o));
  }
  return a;
}

std::string human_cell(const Column& c, const Cell& v) {
  struct Visit {
    const Column& c;
    std::string operator()(const Missing&) const { return "-"; }
    std::string operator()(const std::string& s) const { return s.empty() ? "-" : s; }
    std::string operator()(std::int64_t i) const {
      return with_unit(group_thousands(std::to_string(i)), c.unit);
    }
    std::string operator()(double d) const { return human_real(c, d); }
    std::string operator()(bool b) const { return b ? "yes" : "no"; }
    std::string operator()(const std::vector<std::int64_t>& l) const {
      if (l.empty()) return "-";
      std::string s;
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i) s += " / ";
        s += group_thousands(std::to_string(l[i]));
      }
      return with_unit(s, c.unit);
    }
  };
  return std::visit(Visit{c}, v);
}

namespace {

// Columns shown to people: `human` set and a value in some row.
std::vector<std::size_t> shown(const Table& t) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (!t.columns[i].human) continue;
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& r) { return r[i].index() != 0; }))
      out.push_back(i);
  }
  return out;
}

void rstrip(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

}  // namespace

std::string to_text(const Table& t, std::string_view indent) {
  check(t);
  const std::vector<std::size_t> cols = shown(t);
  std::vector<std::vector<std::string>> cells(t.rows.size());
  std::vector<std::size_t> width;
  for (std::size_t c : cols) width.push_back(t.columns[c].label.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    for (std::size_t k = 0; k < cols.size(); ++k) {
      cells[r].push_back(human_cell(t.columns[cols[k]], t.rows[r][cols[k]]));
      width[k] = std::max(width[k], cells[r].back().size());
    }
  auto line = [&](auto text_of) {
    std::string s(indent);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      if (k) s += "  ";
      const bool left = t.columns[cols[k]].type == Type::text;
      s += left ? fmt::format("{:<{}}", text_of(k), width[k])
                : fmt::format("{:>{}}", text_of(k), width[k]);
    }
    rstrip(s);
    return s + "\n";
  };
  std::string s = line([&](std::size_t k) { return t.columns[cols[k]].label; });
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    s += line([&](std::size_t k) { return cells[r][k]; });
  return s;
}

std::string to_text_by_column(const Table& t, std::string_view heading, std::string_view indent) {
  check(t);
  std::size_t h = t.columns.size();
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].name == heading) h = i;
  if (h == t.columns.size()) throw std::logic_error("no column " + std::string(heading));
  std::vector<std::size_t> cols;
  for (std::size_t c : shown(t))
    if (c != h) cols.push_back(c);
  std::size_t label_width = 0;
  for (std::size_t c : cols) label_width = std::max(label_width, t.columns[c].label.size());
  // text[k][r]: column cols[k] of row r; width[r]: widest cell of row r.
  std::vector<std::vector<std::string>> text(cols.size());
  std::vector<std::size_t> width(t.rows.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    width[r] = human_cell(t.columns[h], t.rows[r][h]).size();
  for (std::size_t k = 0; k < cols.size(); ++k)
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      text[k].push_back(human_cell(t.columns[cols[k]], t.rows[r][cols[k]]));
      width[r] = std::max(width[r], text[k].back().size());
    }
  auto line = [&](const std::string& label, auto cell) {
    std::string s = fmt::format("{}{:<{}}", indent, label, label_width);
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      s += fmt::format("   {:>{}}", cell(r), width[r]);
    rstrip(s);
    return s + "\n";
  };
  std::string s = line("", [&](std::size_t r) { return human_cell(t.columns[h], t.rows[r][h]); });
  for (std::size_t k = 0; k < cols.size(); ++k)
    s += line(t.columns[cols[k]].label, [&](std::size_t r) { return text[k][r]; });
  return s;
}

}  // namespace railsim::report

// The command tables: how Args reads a field (defaults, ranges, decimal integers, on/off, the
// refusal of inputs a command ignores), the spelling rule every table keeps (the Python keyword is
// the flag without its dashes), and docs/cli.md's option reference against the tables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "railsim/command/inputs.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"

namespace railsim::command {
namespace {

std::vector<Field> sample_fields() {
  return {integer_field("top", "--top", "Plans to print", 1, 100, "5"),
          number_field("ratio", "--ratio", "A ratio", Range::positive(10)),
          text_field("mode", "--mode", "A mode", "fast", {"fast", "slow"}),
          text_field("name", "--name", "A name"), flag_field("json", "--json", "Print JSON")};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Args, DefaultsAndGivenValues) {
  const auto fields = sample_fields();
  Args a(fields);
  EXPECT_EQ(a.integer("top"), 5);
  EXPECT_FALSE(a.number_if("ratio").has_value());
  EXPECT_EQ(a.text("mode"), "fast");
  EXPECT_FALSE(a.text_if("name").has_value());
  EXPECT_FALSE(a.flag("json"));
  a.set("top", "17");
  a.set("ratio", "2.5");
  a.set("json", "true");
  EXPECT_TRUE(a.given("top"));
  EXPECT_EQ(a.integer("top"), 17);
  EXPECT_DOUBLE_EQ(a.number("ratio"), 2.5);
  EXPECT_TRUE(a.flag("json"));
}

TEST(Args, RangesAndTextsAreCheckedNamingTheFlag) {
  const auto fields = sample_fields();
  Args a(fields);
  a.set("top", "0");
  EXPECT_EQ(error_of([&] { (void)a.integer("top"); }),
            "--top: got 0, expected an integer from 1 to 100");
  Args b(fields);
  b.set("top", "010");
  EXPECT_EQ(error_of([&] { (void)b.integer("top"); }),
            "--top: '010' has a leading zero; write it in decimal");
  Args c(fields);
  c.set("top", "99999999999999999999");
  EXPECT_NE(error_of([&] { (void)c.integer("top"); }).find("beyond the range of a 64-bit"),
            std::string::npos);
  Args d(fields);
  d.set("ratio", "abc");
  EXPECT_NE(error_of([&] { (void)d.number("ratio"); }).find("--ratio: cannot read 'abc'"),
            std::string::npos);
  Args e(fields);
  e.set("ratio", "0");
  EXPECT_NE(error_of([&] { (void)e.number("ratio"); }).find("--ratio: got 0"), std::string::npos);
  Args f(fields);
  f.set("mode", "medium");
  EXPECT_EQ(error_of([&] { (void)f.text("mode"); }),
            "--mode: got 'medium', expected one of: fast, slow");
}

// The form check the CLI runs as it parses and Args runs when it reads: the same messages.
TEST(Args, FormErrorsOfIntegersAndNumbers) {
  const auto fields = sample_fields();
  Args a(fields);
  const Field& top = a.field("top");
  const Field& ratio = a.field("ratio");
  EXPECT_EQ(form_error(top, "17"), "");
  EXPECT_EQ(form_error(top, "1e2"),
            "cannot read '1e2' as an integer (write it in full, in decimal)");
  EXPECT_EQ(form_error(top, "-07"), "'-07' has a leading zero; write it in decimal");
  EXPECT_EQ(form_error(ratio, "2.5e-3"), "");
  EXPECT_NE(form_error(ratio, "2.5x").find("cannot read '2.5x'"), std::string::npos);
  EXPECT_EQ(form_error(a.field("mode"), "anything"), "");  // a text has no form to check
  a.set("top", "1e2");
  EXPECT_EQ(error_of([&] { (void)a.integer("top"); }), "--top: " + form_error(top, "1e2"));
}

TEST(Args, OnOffAndRefusal) {
  std::vector<Field> fields = strategy_fields();
  Args a(fields);
  a.set("sp", "off");
  EXPECT_EQ(a.on_off_if("sp"), std::optional<bool>(false));
  EXPECT_FALSE(a.on_off_if("dist_opt").has_value());
  a.set("dp_overlap", "maybe");
  EXPECT_EQ(error_of([&] { (void)a.on_off_if("dp_overlap"); }),
            "--dp-overlap: got 'maybe', expected on or off");
  EXPECT_EQ(error_of([&] { a.refuse({"tp", "sp"}, "here"); }), "--sp: has no effect here");
  EXPECT_EQ(error_of([&] { a.refuse({"tp"}, "here"); }), "no error");
}

TEST(Args, AFieldOutsideTheTableIsABugNotInput) {
  const auto fields = sample_fields();
  Args a(fields);
  EXPECT_THROW(a.set("nope", "1"), std::logic_error);
  EXPECT_THROW((void)a.text("nope"), std::logic_error);
}

// Every table: unique keys and flags; the Python keyword is the flag without "--" and with "_"
// for "-" (the rule python_spelling applies to messages); a default within the field's range.
TEST(CommandTables, KeysFollowTheSpellingRuleAndDefaultsAreValid) {
  ASSERT_GE(commands().size(), 3U);
  for (const Command& c : commands()) {
    SCOPED_TRACE(c.path);
    EXPECT_FALSE(c.python_name.empty());
    std::set<std::string> keys, flags;
    for (const Field& f : c.fields) {
      EXPECT_TRUE(keys.insert(f.key).second) << f.key;
      if (f.flag.empty()) continue;  // positional
      EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
      EXPECT_EQ(python_spelling(f.flag), f.key);
      if (f.default_text.empty()) continue;
      Args a(c.fields);
      if (f.kind == Kind::integer || f.kind == Kind::count) {
        EXPECT_NO_THROW((void)a.integer(f.key));
      } else if (f.kind == Kind::number) {
        EXPECT_NO_THROW((void)a.number(f.key));
      } else if (f.kind == Kind::text) {
        EXPECT_NO_THROW((void)a.text(f.key));
      }
    }
    if (!c.python_sets.empty()) {
      EXPECT_EQ(keys.count(c.python_sets), 1U);
    }
  }
}

// docs/cli.md's option reference is the tables'. RAILSIM_UPDATE_DOCS=1 rewrites it.
TEST(CommandDocs, OptionReferenceMatchesTheTables) {
  const std::string path = std::string(RAILSIM_TEST_DATA_DIR) + "/../../docs/cli.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string page = ss.str();
  const std::string begin = "<!-- generated: option reference -->\n";
  const std::string end = "<!-- end generated -->\n";
  const auto b = page.find(begin);
  const auto e = page.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string now = page.substr(b + begin.size(), e - b - begin.size());
  const std::string want = markdown_reference();
  if (now != want && std::getenv("RAILSIM_UPDATE_DOCS") != nullptr) {
    std::ofstream(path) << page.substr(0, b + begin.size()) << want << page.substr(e);
    GTEST_SKIP() << "docs/cli.md rewritten";
  }
  EXPECT_EQ(now, want) << "docs/cli.md's option reference is stale: run RAILSIM_UPDATE_DOCS=1 "
                          "build/test_command --gtest_filter=CommandDocs.*";
}

}  // namespace
}  // namespace railsim::command

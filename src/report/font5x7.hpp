#pragma once
// A small 5x7 bitmap font (ours, drawn for railsim) so that PNG pictures carry their own titles,
// axis labels and legends without a font library. Lower-case letters are drawn as capitals.
#include <array>
#include <cstdint>

namespace railsim::report::detail {

inline constexpr int kGlyphW = 5, kGlyphH = 7;
// Rows of the glyph for c, top first; bit 4 is the leftmost column. Unknown characters give '?'.
const std::array<std::uint8_t, kGlyphH>& glyph(char c);

}  // namespace railsim::report::detail

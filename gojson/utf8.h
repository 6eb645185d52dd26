#pragma once
// UTF-8 as Go's unicode/utf8 reads and writes it.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace flexkit::gojson {

// utf8.DecodeRune: the code point at s[0..] and its length; an invalid,
// overlong, surrogate or truncated sequence is (U+FFFD, 1).
std::pair<char32_t, std::size_t> GoDecodeRune(std::string_view s);

// utf8.AppendRune for a valid code point.
void AppendUtf8(std::string& out, char32_t rune);

}  // namespace flexkit::gojson

#pragma once
// Base64 as kubelet writes secrets: Go's base64.StdEncoding (standard
// alphabet, '=' padding required).
#include <string>
#include <string_view>

namespace flexvolume {

// Decodes `in` into *out as Go's StdEncoding.DecodeString does: CR and LF
// are skipped. Returns false (and leaves *out unspecified) on a character
// outside the alphabet, a bad length or misplaced padding.
bool Base64Decode(std::string_view in, std::string* out);

std::string Base64Encode(std::string_view in);

}  // namespace flexvolume

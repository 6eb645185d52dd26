#include "simulator/output_clip.h"

namespace flexkit::sim {
namespace {

bool Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string ClipMiddle(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t head = limit / 2;
  while (head > 0 && Continuation(text[head])) --head;
  std::size_t tail = text.size() - limit / 2;
  while (tail < text.size() && Continuation(text[tail])) ++tail;
  return text.substr(0, head) + "\n[... " + std::to_string(tail - head) + " of " +
         std::to_string(text.size()) + " bytes cut ...]\n" + text.substr(tail);
}

void ClipLongStrings(nlohmann::ordered_json& doc, std::size_t limit) {
  if (doc.is_string()) {
    auto& text = doc.get_ref<std::string&>();
    if (text.size() > limit) text = ClipMiddle(text, limit);
  } else if (doc.is_structured()) {
    for (auto& child : doc) ClipLongStrings(child, limit);
  }
}

}  // namespace flexkit::sim
